//! Recipes in the HTML of the recipe-card plugins most recipe sites use,
//! for pages that publish no schema.org: each plugin marks the parts of
//! its card with classes of its own (WP Recipe Maker, Tasty Recipes,
//! Mediavine Create, WP Ultimate Recipe, Zip Recipes, Meal Planner Pro,
//! EasyRecipe, Cooked,
//! WPZOOM, Delicious Recipes, Yumprint), and the hRecipe microformat that
//! blogs wrote before schema.org.

use scraper::{ElementRef, Html, Selector};

use super::element::{page_title, selector, text_of, text_within, MAX_ITEMS, MAX_TEXT_BYTES};
use super::stated_times::stated_times;
use super::text::duration_words;
use super::Found;
use crate::domain::{ContentDraft, Step, Yield};

/// One plugin's card: the classes of its parts.
struct Card {
    /// The plugin's card, as the cook is told it was read.
    plugin: &'static str,
    /// The card's element, whose parts are read.
    card: &'static str,
    /// What says the card is on the page: its element, or for a plugin
    /// that writes its parts into the post (`card` the page's body), one
    /// of its parts.
    marker: &'static str,
    title: &'static str,
    summary: &'static str,
    servings: &'static str,
    ingredients: &'static str,
    /// Each step's element: groups of steps are read from their headings.
    steps: &'static str,
    /// A group of steps, and its heading.
    step_group: Option<(&'static str, &'static str)>,
    /// Where the plugin writes the times (prep, cook, total) in words.
    times: [&'static str; 3],
    /// Parts of an item that are not its text (a checkbox's glyph).
    not_text: &'static str,
}

const CARDS: [Card; 12] = [
    Card {
        plugin: "its WP Recipe Maker recipe card",
        card: ".wprm-recipe-container, .wprm-recipe",
        marker: ".wprm-recipe-container, .wprm-recipe",
        title: ".wprm-recipe-name",
        summary: ".wprm-recipe-summary",
        servings: ".wprm-recipe-servings",
        ingredients: ".wprm-recipe-ingredient",
        steps: ".wprm-recipe-instruction-text",
        step_group: Some((".wprm-recipe-instruction-group", ".wprm-recipe-group-name")),
        times: [
            ".wprm-recipe-prep_time-container, .wprm-recipe-prep-time-container",
            ".wprm-recipe-cook_time-container, .wprm-recipe-cook-time-container",
            ".wprm-recipe-total_time-container, .wprm-recipe-total-time-container",
        ],
        not_text: ".wprm-checkbox-container, .wprm-recipe-ingredient-notes-faded",
    },
    Card {
        plugin: "its Tasty Recipes recipe card",
        card: ".tasty-recipes",
        marker: ".tasty-recipes",
        title: ".tasty-recipes-title",
        summary: ".tasty-recipes-description",
        servings: ".tasty-recipes-yield",
        ingredients: ".tasty-recipes-ingredients li",
        steps: ".tasty-recipes-instructions li, .tasty-recipes-instructions p",
        step_group: None,
        times: [
            ".tasty-recipes-prep-time",
            ".tasty-recipes-cook-time",
            ".tasty-recipes-total-time",
        ],
        not_text: ".tasty-recipes-checkbox",
    },
    Card {
        plugin: "its Mediavine Create recipe card",
        card: ".mv-create-card",
        marker: ".mv-create-card",
        title: ".mv-create-title",
        summary: ".mv-create-description",
        servings: ".mv-create-yield",
        ingredients: ".mv-create-ingredients li",
        steps: ".mv-create-instructions li",
        step_group: None,
        times: [
            ".mv-create-time-prep .mv-create-time-format",
            ".mv-create-time-active .mv-create-time-format",
            ".mv-create-time-total .mv-create-time-format",
        ],
        not_text: ".mv-create-checkbox",
    },
    Card {
        plugin: "its WP Ultimate Recipe recipe card",
        card: ".wpurp-container",
        marker: ".wpurp-container",
        title: ".wpurp-recipe-title",
        summary: ".wpurp-recipe-description",
        servings: ".wpurp-recipe-servings",
        ingredients: ".wpurp-recipe-ingredient",
        steps: ".wpurp-recipe-instruction",
        step_group: None,
        times: [
            ".wpurp-recipe-prep-time",
            ".wpurp-recipe-cook-time",
            ".wpurp-recipe-passive-time",
        ],
        not_text: "input",
    },
    Card {
        plugin: "its Zip Recipes (ZipList) recipe card",
        card: "#zlrecipe-container, .zlrecipe-container-border",
        marker: "#zlrecipe-container, .zlrecipe-container-border",
        title: "#zlrecipe-title",
        summary: "#zlrecipe-summary",
        servings: "#zlrecipe-yield",
        ingredients: "#zlrecipe-ingredients-list .ingredient",
        steps: "#zlrecipe-instructions-list .instruction",
        step_group: None,
        times: [
            "#zlrecipe-prep-time",
            "#zlrecipe-cook-time",
            "#zlrecipe-total-time",
        ],
        not_text: ".zlrecipe-print-link",
    },
    Card {
        // Meal Planner Pro, a fork of Zip Recipes with its own names.
        plugin: "its Meal Planner Pro recipe card",
        card: "#mpprecipe-container, .mpprecipe-container-border",
        marker: "#mpprecipe-container, .mpprecipe-container-border",
        title: "#mpprecipe-title",
        summary: "#mpprecipe-summary",
        servings: "#mpprecipe-yield",
        ingredients: "#mpprecipe-ingredients-list li, #mpprecipe-ingredients-list .ingredient",
        steps: "#mpprecipe-instructions-list li, #mpprecipe-instructions-list .instruction",
        step_group: None,
        times: [
            "#mpprecipe-prep-time",
            "#mpprecipe-cook-time",
            "#mpprecipe-total-time",
        ],
        not_text: ".mpprecipe-buttons",
    },
    Card {
        plugin: "its EasyRecipe recipe card",
        card: ".easyrecipe",
        marker: ".easyrecipe",
        title: ".ERSName",
        summary: ".ERSSummary",
        servings: ".ERSServes",
        ingredients: ".ERSIngredients .ingredient",
        steps: ".ERSInstructions .instruction",
        step_group: None,
        times: [
            ".ERSTimes .ERSTime:nth-child(1) .ERSTimeItem",
            ".ERSTimes .ERSTime:nth-child(2) .ERSTimeItem",
            ".ERSTimes .ERSTime:nth-child(3) .ERSTimeItem",
        ],
        not_text: ".ERSSavePrint",
    },
    Card {
        // Cooked writes its parts into the post, without a card around
        // them, and the post's heading is the title.
        plugin: "its Cooked recipe",
        card: "body",
        marker: ".cooked-recipe-ingredients, .cooked-recipe-directions",
        title: ".cooked-recipe-title",
        summary: ".cooked-recipe-excerpt",
        servings: ".cooked-servings",
        ingredients: ".cooked-recipe-ingredients .cooked-ingredient",
        steps: ".cooked-recipe-directions .cooked-dir-content",
        step_group: None,
        times: [
            ".cooked-prep-time",
            ".cooked-cook-time",
            ".cooked-total-time",
        ],
        not_text: ".cooked-ingredient-checkbox, .cooked-meta-title",
    },
    Card {
        // WPZOOM's card, or its blocks (details, ingredients, directions)
        // apart in the post.
        plugin: "its WPZOOM recipe card",
        card: "body",
        marker: ".wp-block-wpzoom-recipe-card-block-recipe-card, .wp-block-wpzoom-recipe-card-block-ingredients, .wp-block-wpzoom-recipe-card-block-directions",
        title: ".recipe-card-title",
        summary: ".recipe-card-summary",
        servings: ".detail-item-0 .detail-item-value",
        ingredients: ".ingredients-list .ingredient-item:not(.ingredient-item-group)",
        steps: ".directions-list .direction-step:not(.direction-step-group)",
        step_group: None,
        times: [".detail-item-1", ".detail-item-2", ".detail-item-total"],
        not_text: ".tick-circle, .detail-item-icon",
    },
    Card {
        // Delicious Recipes' summary, ingredients and instructions are
        // blocks of the post, side by side.
        plugin: "its Delicious Recipes recipe",
        card: "body",
        marker: ".dr-ingredients-list, .dr-instructions",
        title: ".dr-summary-holder .dr-title-wrap .dr-title",
        summary: ".dr-summary-holder .dr-pinit-desc",
        servings: ".dr-servings",
        ingredients: ".dr-ingredients-list li",
        steps: ".dr-instructions li",
        step_group: None,
        times: [".dr-prepare-time", ".dr-cooking-time", ".dr-total-time"],
        not_text: "input, .dr-meta-title, svg",
    },
    Card {
        plugin: "its Yumprint recipe card",
        card: ".blog-yumprint-recipe",
        marker: ".blog-yumprint-recipe",
        title: ".blog-yumprint-recipe-title",
        summary: ".blog-yumprint-recipe-summary",
        servings: ".blog-yumprint-serves",
        ingredients: ".blog-yumprint-ingredient-item",
        steps: ".blog-yumprint-method-item",
        step_group: None,
        times: [
            ".blog-yumprint-infobar-section:nth-child(1) .blog-yumprint-infobar-section-data",
            ".blog-yumprint-infobar-section:nth-child(2) .blog-yumprint-infobar-section-data",
            ".blog-yumprint-infobar-section:nth-child(3) .blog-yumprint-infobar-section-data",
        ],
        not_text: ".blog-yumprint-checkbox",
    },
    Card {
        // The hrecipe microformat, which blogs wrote before schema.org.
        plugin: "its hRecipe microformat",
        card: ".hrecipe, .h-recipe",
        marker: ".hrecipe, .h-recipe",
        title: ".fn, .p-name",
        summary: ".summary, .p-summary",
        servings: ".yield, .p-yield",
        ingredients: ".ingredient, .p-ingredient",
        steps:
            ".instructions li, .instructions p, .instruction, .e-instructions li, .e-instructions p",
        step_group: None,
        times: [".preptime", ".cooktime", ".duration, .dt-duration"],
        not_text: ".value-title",
    },
];

/// Of elements a selector matched, those no other one holds: a step
/// matched as an item and as the paragraph in it is one step.
fn outermost(elements: Vec<ElementRef>) -> Vec<ElementRef> {
    let matched: std::collections::HashSet<_> = elements.iter().map(|e| e.id()).collect();
    elements
        .into_iter()
        .filter(|e| !e.ancestors().any(|a| matched.contains(&a.id())))
        .collect()
}

/// The class and id names a selector of classes and ids names
/// (".wprm-recipe, #zlrecipe-container" names "wprm-recipe" and
/// "zlrecipe-container").
fn class_names(selector: &str) -> impl Iterator<Item = &str> {
    selector
        .split(['.', '#'])
        .skip(1)
        .map(|rest| {
            rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
                .next()
                .unwrap_or("")
        })
        .filter(|name| !name.is_empty())
}

/// The recipe in a plugin's card, and the plugin's name.
pub(super) fn plugin_card(page: &Html, html: &str) -> Option<(Found, &'static str)> {
    // A plugin's card is looked for only where the page's text names one
    // of its classes: most pages name none, and a search of the text
    // costs far less than a walk of the page per plugin.
    let named = |marker: &str| class_names(marker).any(|name| html.contains(name));
    CARDS
        .iter()
        .filter(|card| named(card.marker))
        .find_map(|card| Some((card_recipe(page, card)?, card.plugin)))
}

/// The recipe in `card` on the page, if the page has the card and it has
/// ingredients or steps.
fn card_recipe(page: &Html, card: &Card) -> Option<Found> {
    page.select(&selector(card.marker)).next()?;
    let root = page.select(&selector(card.card)).next()?;
    let within = CardText {
        root,
        not_text: selector(card.not_text),
    };
    let steps = within.steps(card);
    let ingredients = within.texts(card.ingredients);
    if ingredients.is_empty() && steps.is_empty() {
        return None;
    }
    let mut times = card
        .times
        .map(|css| within.first(css).and_then(|words| duration_words(&words)));
    // A card whose times are not where the plugin puts them may state
    // them in words.
    if times.iter().all(Option::is_none) {
        times = stated_times(root);
    }
    let [prep, cook, total] = times;
    let servings_words = within.first(card.servings);
    let servings = servings_words
        .as_deref()
        .and_then(|w| w.split_whitespace().find_map(|w| w.parse::<i64>().ok()));
    let title = within.first(card.title).or_else(|| page_title(page))?;
    Some(Found {
        content: ContentDraft {
            title,
            summary: within.first(card.summary),
            recipe_yield: Yield {
                servings,
                text: servings_words.filter(|w| w.parse::<i64>().is_err()),
            },
            prep,
            cook,
            total,
            ingredients,
            steps,
            ..ContentDraft::default()
        },
        site_name: None,
    })
}

/// A card's element, and what in its items is not their text.
struct CardText<'a> {
    root: ElementRef<'a>,
    not_text: Selector,
}

impl CardText<'_> {
    /// The text of each element `css` matches that no other holds.
    fn texts(&self, css: &str) -> Vec<String> {
        outermost(self.root.select(&selector(css)).take(MAX_ITEMS).collect())
            .into_iter()
            .map(|e| text_within(e, Some(&self.not_text), MAX_TEXT_BYTES))
            .filter(|t| !t.is_empty())
            .collect()
    }

    /// The first element's text alone: a title is one element.
    fn first(&self, css: &str) -> Option<String> {
        self.root
            .select(&selector(css))
            .take(MAX_ITEMS)
            .map(|e| text_within(e, Some(&self.not_text), MAX_TEXT_BYTES))
            .find(|t| !t.is_empty())
    }

    /// The card's steps, each in its group's section where the plugin
    /// groups them.
    fn steps(&self, card: &Card) -> Vec<Step> {
        // Each step once, in the group nearest it: groups nested in
        // groups cost the steps read, not their product.
        let groups = card
            .step_group
            .map(|(group, heading)| (selector(group), selector(heading)));
        let mut sections = std::collections::HashMap::new();
        outermost(
            self.root
                .select(&selector(card.steps))
                .take(MAX_ITEMS)
                .collect(),
        )
        .into_iter()
        .filter_map(|step| {
            let text = text_within(step, Some(&self.not_text), MAX_TEXT_BYTES);
            let section = groups.as_ref().and_then(|(group, heading)| {
                let group = step
                    .ancestors()
                    .filter_map(ElementRef::wrap)
                    .find(|a| group.matches(a))?;
                // Each group's heading looked for once.
                sections
                    .entry(group.id())
                    .or_insert_with(|| {
                        group
                            .select(heading)
                            .next()
                            .map(text_of)
                            .filter(|h| !h.is_empty())
                    })
                    .clone()
            });
            (!text.is_empty()).then_some(Step { section, text })
        })
        .collect()
    }
}
