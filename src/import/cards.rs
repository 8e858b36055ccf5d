//! Recipes in a page's HTML where it publishes no schema.org: first the
//! recipe cards of the plugins most recipe sites use (each marks the
//! parts of its card with classes of its own), then a general reading of
//! the page: the list after an "Ingredients" heading and the steps after a
//! "Method" (or "Instructions", "Directions", "Preparation") heading, in
//! the languages the site stems.

use scraper::{ElementRef, Html, Selector};

use super::text::{clipped_bytes, duration_words, plain};
use super::Found;
use crate::domain::{Content, Step, Yield};

/// The most items of one list read: a hostile page of a million list
/// items costs no more than a long recipe.
const MAX_ITEMS: usize = 400;

fn selector(css: &str) -> Selector {
    Selector::parse(css).expect("a valid selector")
}

/// One plugin's card: the classes of its parts.
struct Card {
    /// The plugin's card, as the cook is told it was read.
    plugin: &'static str,
    card: &'static str,
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

const CARDS: [Card; 4] = [
    Card {
        plugin: "its WP Recipe Maker recipe card",
        card: ".wprm-recipe-container, .wprm-recipe",
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
        title: ".tasty-recipes-title",
        summary: ".tasty-recipes-description",
        servings: ".tasty-recipes-yield",
        ingredients: ".tasty-recipes-ingredients li",
        steps: ".tasty-recipes-instructions li",
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
];

/// The most text read of one element, and the most nodes walked for it:
/// a page of deep or enormous markup costs no more than a long recipe.
const MAX_TEXT_BYTES: usize = 8 * 1024;
const MAX_TEXT_NODES: usize = 4 * 1024;

/// The text of `element`, at most `max_bytes` of it, without the parts
/// `not_text` selects: a walk that leaves those parts' subtrees out and
/// stops at its budgets, so that a page nested deep costs its size and no
/// more.
fn text_within(element: ElementRef, not_text: Option<&Selector>, max_bytes: usize) -> String {
    let skipped: std::collections::HashSet<_> = match not_text {
        Some(not_text) => element.select(not_text).map(|e| e.id()).collect(),
        None => std::collections::HashSet::new(),
    };
    let mut out = String::new();
    let mut stack: Vec<_> = element.children().collect();
    stack.reverse();
    let mut walked = 0;
    while let Some(node) = stack.pop() {
        walked += 1;
        if walked > MAX_TEXT_NODES || out.len() > max_bytes {
            break;
        }
        if skipped.contains(&node.id()) {
            continue;
        }
        if let Some(text) = node.value().as_text() {
            // No more of a long text than there is room for.
            out.push_str(clipped_bytes(text, max_bytes + 1 - out.len()));
            out.push(' ');
        }
        let at = stack.len();
        stack.extend(node.children());
        stack[at..].reverse();
    }
    plain(&out)
}

/// `text_within` with the budget of one value.
fn text_of(element: ElementRef) -> String {
    text_within(element, None, MAX_TEXT_BYTES)
}

/// The recipe in a plugin's card, and the plugin's name.
pub(super) fn plugin_card(page: &Html) -> Option<(Found, &'static str)> {
    CARDS.iter().find_map(|card| {
        let root = page.select(&selector(card.card)).next()?;
        let not_text = selector(card.not_text);
        let texts = |css: &str| -> Vec<String> {
            root.select(&selector(css))
                .take(MAX_ITEMS)
                .map(|e| text_within(e, Some(&not_text), MAX_TEXT_BYTES))
                .filter(|t| !t.is_empty())
                .collect()
        };
        // The first element's text alone: a title is one element.
        let first = |css: &str| {
            root.select(&selector(css))
                .take(MAX_ITEMS)
                .map(|e| text_within(e, Some(&not_text), MAX_TEXT_BYTES))
                .find(|t| !t.is_empty())
        };
        let mut steps = Vec::new();
        match card.step_group {
            Some((group, heading)) if root.select(&selector(group)).next().is_some() => {
                for group in root.select(&selector(group)).take(MAX_ITEMS) {
                    let section = group
                        .select(&selector(heading))
                        .next()
                        .map(text_of)
                        .filter(|h| !h.is_empty());
                    for step in group.select(&selector(card.steps)).take(MAX_ITEMS) {
                        let text = text_within(step, Some(&not_text), MAX_TEXT_BYTES);
                        if !text.is_empty() {
                            steps.push(Step {
                                section: section.clone(),
                                text,
                            });
                        }
                    }
                }
            }
            _ => steps.extend(texts(card.steps).into_iter().map(|text| Step {
                section: None,
                text,
            })),
        }
        let ingredients = texts(card.ingredients);
        if ingredients.is_empty() && steps.is_empty() {
            return None;
        }
        let [prep, cook, total] = card
            .times
            .map(|css| first(css).and_then(|words| duration_words(&words)));
        let servings_words = first(card.servings);
        let servings = servings_words
            .as_deref()
            .and_then(|w| w.split_whitespace().find_map(|w| w.parse::<i64>().ok()));
        let title = first(card.title).or_else(|| page_title(page))?;
        let found = Found {
            content: Content {
                title,
                summary: first(card.summary),
                recipe_yield: Yield {
                    servings,
                    text: servings_words.filter(|w| w.parse::<i64>().is_err()),
                },
                prep,
                cook,
                total,
                ingredients,
                steps,
                ..Content::default()
            },
            site_name: None,
        };
        Some((found, card.plugin))
    })
}

/// How many headings of one kind are looked after for their list.
const MAX_LOOKS: usize = 3;

/// Headings that open a recipe's ingredients, in the languages the site
/// stems (`domain::search`), and Polish.
const INGREDIENTS: [&str; 20] = [
    "ingredients",
    "ingrédients",
    "zutaten",
    "ingredienti",
    "ingredientes",
    "ingrediënten",
    "ingredienten",
    "ingredienser",
    "ainekset",
    "ainesosat",
    "hozzávalók",
    "ingrediente",
    "ингредиенты",
    "υλικά",
    "malzemeler",
    "المكونات",
    "தேவையான பொருட்கள்",
    "பொருட்கள்",
    "składniki",
    "you will need",
];

/// Headings that open its steps.
const METHOD: [&str; 41] = [
    "method",
    "instructions",
    "directions",
    "preparation",
    "steps",
    "how to make it",
    "préparation",
    "étapes",
    "zubereitung",
    "anleitung",
    "preparazione",
    "procedimento",
    "preparación",
    "elaboración",
    "instrucciones",
    "pasos",
    "modo de preparo",
    "preparo",
    "preparação",
    "instruções",
    "bereiding",
    "bereidingswijze",
    "werkwijze",
    "fremgangsmåde",
    "tilberedning",
    "gör så här",
    "tillagning",
    "fremgangsmåte",
    "slik gjør du",
    "valmistus",
    "valmistusohje",
    "elkészítés",
    "mod de preparare",
    "preparare",
    "приготовление",
    "способ приготовления",
    "εκτέλεση",
    "yapılışı",
    "hazırlanışı",
    "طريقة التحضير",
    "செய்முறை",
];

/// Words that may follow a heading's name: "Ingredients for the dough",
/// "Zutaten für 4 Personen".
const FOR: [&str; 10] = [
    "for", "für", "voor", "pour", "per", "para", "til", "för", "dla", "için",
];

/// Whether a heading's text is one of `names`: alone, with a colon after
/// it and nothing more, with something in brackets, or with what it is
/// for ("Ingredients for the sauce"). "Preparation time: 10 min" is not
/// a method's heading.
fn names(heading: &str, names: &[&str]) -> bool {
    let heading = heading.trim().to_lowercase();
    names.iter().any(|name| {
        let Some(rest) = heading.strip_prefix(name) else {
            return false;
        };
        let rest = rest.trim();
        rest.is_empty()
            || rest == ":"
            || rest.starts_with('(')
            || FOR.iter().any(|word| {
                rest.strip_prefix(word)
                    .is_some_and(|after| after.starts_with(' '))
            })
    })
}

/// The page's recipe read from its headings: the items of the first list
/// after an ingredients heading, and of the first list (or the
/// paragraphs) after a method heading; its title the page's `h1`.
pub(super) fn by_headings(page: &Html) -> Option<Found> {
    let headings = selector("h1, h2, h3, h4, h5, h6, strong, b, p");
    let mut ingredients: Option<Vec<String>> = None;
    let mut steps: Option<Vec<String>> = None;
    // Each look after a heading may walk the rest of the page: a few
    // headings of each kind are looked after, not every one a page has.
    let mut looks = [0; 2];
    for heading in page.select(&headings).take(10_000) {
        if looks.iter().all(|n| *n >= MAX_LOOKS) {
            break;
        }
        // Read no further than a heading can be long.
        let text = text_within(heading, None, 64);
        if text.len() > 60 {
            continue;
        }
        if ingredients.is_none() && looks[0] < MAX_LOOKS && names(&text, &INGREDIENTS) {
            looks[0] += 1;
            ingredients = list_after(heading, Part::Ingredients);
        } else if steps.is_none() && looks[1] < MAX_LOOKS && names(&text, &METHOD) {
            looks[1] += 1;
            steps = list_after(heading, Part::Steps);
        }
    }
    let (ingredients, steps) = (ingredients.unwrap_or_default(), steps.unwrap_or_default());
    if ingredients.is_empty() && steps.is_empty() {
        return None;
    }
    Some(Found {
        content: Content {
            title: page_title(page)?,
            ingredients,
            steps: steps
                .into_iter()
                .map(|text| Step {
                    section: None,
                    text,
                })
                .collect(),
            ..Content::default()
        },
        site_name: None,
    })
}

/// Which part of a recipe a heading opens.
#[derive(Clone, Copy, PartialEq)]
enum Part {
    Ingredients,
    Steps,
}

/// Headings that close a recipe's part without naming the other: its
/// notes and tips, in the languages of `INGREDIENTS`.
const NOTES: [&str; 22] = [
    "notes",
    "note",
    "tips",
    "notizen",
    "tipps",
    "hinweise",
    "remarques",
    "astuces",
    "conseils",
    "consigli",
    "notas",
    "consejos",
    "dicas",
    "opmerkingen",
    "vinkit",
    "megjegyzés",
    "sfaturi",
    "советы",
    "примечания",
    "σημειώσεις",
    "notlar",
    "uwagi",
];

/// A heading's rank: 1 for `h1` to 6 for `h6`, and 7 for words made a
/// heading by bold type (`<p><strong>Ingredients</strong></p>`).
fn rank_of(element: ElementRef) -> u8 {
    match element.value().name() {
        "h1" => 1,
        "h2" => 2,
        "h3" => 3,
        "h4" => 4,
        "h5" => 5,
        "h6" => 6,
        _ => 7,
    }
}

fn is_list(element: ElementRef) -> bool {
    matches!(element.value().name(), "ul" | "ol")
}

/// Whether `element` heads a group of the part a heading of rank `rank`
/// opened ("For the dough" over its own list): short, of a lower rank
/// (or bold words under bold words), naming no part of its own, and
/// followed at once by a list.
fn heads_a_group(element: ElementRef, rank: u8, part: Part) -> bool {
    let own_rank = rank_of(element);
    if own_rank <= rank && own_rank != 7 {
        return false;
    }
    if own_rank == 7 && element.value().name() != "p" {
        return false;
    }
    let text = text_within(element, None, 64);
    let other = match part {
        Part::Ingredients => &METHOD[..],
        Part::Steps => &INGREDIENTS[..],
    };
    !text.is_empty()
        && text.len() <= 60
        && !names(&text, other)
        && !names(&text, &NOTES)
        && element
            .next_siblings()
            .filter_map(ElementRef::wrap)
            .next()
            .is_some_and(is_list)
}

/// The part that follows `heading` in the page, before the next heading:
/// the items of its lists (several where groups have headings of their
/// own), else its paragraphs' lines (a line each where `<br>`s part
/// them). Paragraphs are read only beside the heading itself; a list may
/// be after the block that holds it (a heading wrapped in a div).
/// Anything that holds a heading of its own (the comments, the next
/// section) ends the look.
fn list_after(heading: ElementRef, part: Part) -> Option<Vec<String>> {
    let headings = selector("h1, h2, h3, h4, h5, h6");
    let lists = selector("ul, ol");
    let items = selector("li");
    let rank = rank_of(heading);
    let list_items = |list: ElementRef| -> Vec<String> {
        list.select(&items)
            .take(MAX_ITEMS)
            .map(text_of)
            .filter(|t| !t.is_empty())
            .collect()
    };
    let mut listed: Vec<String> = Vec::new();
    let mut paragraph_lines: Vec<String> = Vec::new();
    let found = |texts: Vec<String>| (!texts.is_empty()).then_some(texts);
    let mut at = Some(heading);
    while let Some(here) = at {
        for sibling in here.next_siblings().filter_map(ElementRef::wrap) {
            let name = sibling.value().name();
            // Past the first list, only a group's heading and the next
            // list carry the part on: anything else ends it.
            if !listed.is_empty() {
                if is_list(sibling) && listed.len() < MAX_ITEMS {
                    listed.extend(list_items(sibling));
                    continue;
                }
                if heads_a_group(sibling, rank, part) || text_of(sibling).is_empty() {
                    continue;
                }
                return found(listed);
            }
            let is_heading = matches!(name, "h1" | "h2" | "h3" | "h4" | "h5" | "h6");
            if paragraph_lines.is_empty() && heads_a_group(sibling, rank, part) {
                continue;
            }
            if is_heading || sibling.select(&headings).next().is_some() {
                return found(paragraph_lines);
            }
            let list = match name {
                "ul" | "ol" => Some(sibling),
                _ => sibling.select(&lists).next(),
            };
            if let Some(list) = list.filter(|_| paragraph_lines.is_empty()) {
                listed = list_items(list);
                if !listed.is_empty() && !is_list(sibling) {
                    // A list inside a block: the block is the part.
                    return Some(listed);
                }
                continue;
            }
            if name == "p" && names_a_part(sibling) {
                return found(paragraph_lines);
            }
            if name == "p" && paragraph_lines.len() < MAX_ITEMS {
                paragraph_lines.extend(lines_of(sibling));
            }
        }
        if !listed.is_empty() {
            return Some(listed);
        }
        if !paragraph_lines.is_empty() {
            return Some(paragraph_lines);
        }
        at = here.parent().and_then(ElementRef::wrap);
        if at.is_some_and(|a| matches!(a.value().name(), "body" | "html")) {
            break;
        }
    }
    None
}

/// Whether a paragraph is a part's heading in bold words ("Method:").
fn names_a_part(paragraph: ElementRef) -> bool {
    let text = text_within(paragraph, None, 64);
    text.len() <= 60
        && [&INGREDIENTS[..], &METHOD, &NOTES]
            .iter()
            .any(|n| names(&text, n))
}

/// A paragraph's lines, where `<br>`s part them, each as plain text.
fn lines_of(paragraph: ElementRef) -> Vec<String> {
    let mut lines = vec![String::new()];
    let mut walked = 0;
    for node in paragraph.descendants() {
        walked += 1;
        if walked > MAX_TEXT_NODES || lines.len() > MAX_ITEMS {
            break;
        }
        if let Some(text) = node.value().as_text() {
            let line = lines.last_mut().expect("a line");
            if line.len() < MAX_TEXT_BYTES {
                line.push_str(clipped_bytes(text, MAX_TEXT_BYTES - line.len()));
                line.push(' ');
            }
        } else if node.value().as_element().is_some_and(|e| e.name() == "br") {
            lines.push(String::new());
        }
    }
    lines
        .iter()
        .map(|line| plain(line))
        .filter(|line| !line.is_empty())
        .collect()
}

/// The page's title: its first `h1`, else `og:title`, else `<title>`.
fn page_title(page: &Html) -> Option<String> {
    let h1 = page
        .select(&selector("h1"))
        .take(MAX_ITEMS)
        .map(text_of)
        .find(|t| !t.is_empty());
    h1.or_else(|| {
        page.select(&selector("meta[property='og:title']"))
            .filter_map(|m| m.value().attr("content"))
            .map(plain)
            .find(|t| !t.is_empty())
    })
    .or_else(|| {
        page.select(&selector("title"))
            .map(text_of)
            .find(|t| !t.is_empty())
    })
}
