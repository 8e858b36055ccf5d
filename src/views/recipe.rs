//! The recipe page, and the same page for one past version.

use maud::{html, Markup};

use super::layout::{self, Head, Section};
use super::markdown::Memos;
use super::step_runs;
use super::structured_data::{self, RecipeFacts};
use super::{
    absolute, count, human_time, machine_time, recipe_path, version_path, Day, RecipePath, Rfc3339,
    TagPath, Text,
};
use crate::domain::pictures::{crop_name, Picture, CROPS};
use crate::domain::scale::{Scale, Units, MAX_SERVINGS};
use crate::domain::{
    Apart, Breadcrumb, Content, Crumb, FormPlace, Instant, LineageShow, Link, Minutes, RecipeShow,
    Step, Suggestion, SuggestionState, VersionNumber, VersionShow, FIELDS,
};

/// Which version of a recipe a page shows.
#[derive(Debug, Clone)]
pub enum Showing {
    /// The recipe as it is now.
    Current,
    /// What a form would save, shown beside it before saving.
    Preview,
    /// A past version, with what its transaction says.
    Version {
        number: VersionNumber,
        instant: Instant,
        author: Option<String>,
        note: Option<String>,
    },
}

/// Everything a recipe page shows.
pub struct RecipePage<'a> {
    /// The site's absolute URL, without a trailing slash.
    pub base_url: &'a str,
    pub slug: &'a str,
    /// The Markdown memos the page's words are rendered through.
    pub memos: &'a Memos,
    pub content: &'a Content,
    pub author: Option<&'a str>,
    pub published: Option<Instant>,
    pub modified: Option<Instant>,
    pub version_count: u32,
    /// Ancestors, the original first and the parent last.
    pub lineage: &'a Breadcrumb,
    /// Direct forks, oldest first (at most `FORKS_LISTED` of them).
    pub forks: &'a [Link],
    /// Direct forks in all.
    pub fork_count: usize,
    /// For a fork shown as it is now: how far it is from its parent.
    pub apart: Option<Apart>,
    /// For a fork shown as it is now: whether it has changes its parent
    /// lacks, to offer to suggest them.
    pub can_suggest: bool,
    /// For a fork shown as it is now: its newest suggestion, so the page
    /// says what became of it.
    pub last_suggestion: Option<&'a Suggestion>,
    /// Suggestions to it still open (the current page only).
    pub open_suggestions: usize,
    pub showing: Showing,
    /// The servings and units amounts are shown in.
    pub scale: Scale,
}

/// A breadcrumb with no ancestors, for pages of recipes that have none.
static NO_LINEAGE: Breadcrumb = Breadcrumb {
    source: None,
    head: Vec::new(),
    hidden: 0,
    tail: Vec::new(),
};

fn minutes(label: &str, value: Option<Minutes>) -> Markup {
    html! {
        @if let Some(m) = value {
            div { dt { (label) } dd { time datetime=(m.iso8601()) { (m) } } }
        }
    }
}

/// The details a page words itself, in its line under the summary.
const WORDED: [&str; 3] = ["category", "cuisine", "language"];

/// Every other field of the form's details that `content` has, with its
/// label: a field added to the table is on the page, as `Label: text.`,
/// until it has words of its own.
fn other_details(content: &Content) -> impl Iterator<Item = (&'static str, &str)> {
    FIELDS.iter().filter_map(|field| match field.form {
        FormPlace::Details(label) if !WORDED.contains(&field.name) => {
            Some((label, field.line(content)?))
        }
        _ => None,
    })
}

fn facts(content: &Content, scale: &Scale) -> Markup {
    let y = content.recipe_yield();
    let makes = y.text.is_some() || y.servings.is_some();
    let serves = scale.servings.map(|(_, to)| i64::from(to)).or(y.servings);
    html! {
        @if makes || content.prep().is_some() || content.cook().is_some() || content.total().is_some() {
            dl class="facts" {
                @if let Some(n) = serves {
                    div { dt { "Serves" } dd { (n) } }
                }
                @if let Some(text) = &y.text {
                    div { dt { "Makes" } dd { (text) } }
                }
                (minutes("Prep", content.prep()))
                (minutes("Cook", content.cook()))
                (minutes("Total", content.total()))
            }
        }
    }
}

/// Steps as ordered lists, one per run of steps in the same section, the
/// numbering carried on across sections.
fn method(steps: &[Step], memos: &Memos) -> Markup {
    let runs = step_runs(steps);
    html! {
        @for (section, run, first) in runs {
            @if let Some(name) = section { h3 { (name) } }
            ol class="steps" start=[(first > 1).then_some(first)] {
                @for step in run { li { (memos.markdown(&step.text)) } }
            }
        }
    }
}

fn lineage(page: &RecipePage) -> Markup {
    html! {
        @if !page.lineage.is_empty() || page.lineage.source.is_some() {
            nav class="lineage" aria-label="Lineage" {
                ol {
                    @if let Some(source) = &page.lineage.source {
                        li class="source" {
                            a href=(source.url) rel="nofollow noopener" { (source.name) }
                        }
                    }
                    @for crumb in &page.lineage.head { (crumb_item(crumb)) }
                    @if page.lineage.hidden > 0 {
                        li class="gap" {
                            a href={ (RecipePath(page.slug)) "/lineage" } {
                                "… " (count(page.lineage.hidden as i64, "more ancestor", "more ancestors"))
                            }
                        }
                    }
                    @for crumb in &page.lineage.tail { (crumb_item(crumb)) }
                    li aria-current="page" { (page.content.title()) }
                }
            }
        }
    }
}

fn crumb_item(crumb: &Crumb) -> Markup {
    html! {
        li {
            a href=(version_path(&crumb.slug, crumb.version)) { (crumb.title) }
            " " span class="at" { "v" (crumb.version) }
            @if let Some(site) = super::site_elsewhere(&crumb.slug) { " " span class="at" { "on " (site) } }
        }
    }
}

/// A recipe's whole lineage, when its breadcrumb is shortened.
pub fn lineage_page(model: &LineageShow) -> Markup {
    let title = format!("Lineage of {}", model.title);
    let description = format!(
        "Where {} came from: every recipe it was forked from, back to the original, each at the version that was forked.",
        model.title
    );
    let mut head = Head::new(&title, Section::Other);
    head.description = Some(&description);
    layout::page(
        &head,
        html! {
            h1 { (title) }
            @if model.ancestors.is_empty() {
                p class="lede" { "This recipe is an original: it was not forked from another." }
            } @else {
                p class="lede" {
                    (count(model.ancestors.len() as i64, "ancestor", "ancestors"))
                    ", the original first; each at the version that was forked."
                }
                ol class="lineage-list" {
                    @for crumb in &model.ancestors { (crumb_item(crumb)) }
                    li aria-current="page" {
                        a href=(RecipePath(&model.slug)) { (model.title) }
                    }
                }
            }
        },
    )
}

fn family(page: &RecipePage) -> Markup {
    let slug = page.slug;
    html! {
        aside class="family" aria-label="Versions and forks" {
            h2 { "Versions and forks" }
            p {
                a href={ (recipe_path(slug)) "/history" } {
                    (count(page.version_count, "version", "versions"))
                }
                @if let Some(parent) = page.lineage.parent() {
                    ", forked from "
                    a href=(version_path(&parent.slug, parent.version)) { (parent.title) }
                    @if let Some(site) = super::site_elsewhere(&parent.slug) { " on " (site) }
                    " at version " (parent.version)
                }
                "."
            }
            @if let (Some(parent), Some(apart)) = (page.lineage.parent(), page.apart) {
                (apart_notice(slug, parent, apart))
                @if let Some(sent) = page.last_suggestion {
                    (suggestion_outcome(slug, parent, sent))
                }
                @if page.can_suggest && page.last_suggestion.is_none_or(|s| s.state != SuggestionState::Open) {
                    p class="apart" {
                        a href={ (RecipePath(slug)) "/suggest" } { "Suggest its changes to " (parent.title) } "."
                    }
                }
            }
            @if page.open_suggestions > 0 {
                p class="suggestions-open" {
                    a href={ (RecipePath(slug)) "/suggestions" } {
                        (count(page.open_suggestions as i64, "open suggestion", "open suggestions"))
                    }
                    " from its forks."
                }
            }
            @if page.forks.is_empty() {
                p { "No forks yet." }
            } @else {
                h3 { (count(page.fork_count as i64, "fork", "forks")) }
                ul class="forks" {
                    @for fork in page.forks {
                        li { a href=(RecipePath(&fork.slug)) { (fork.title) } }
                    }
                }
                @if page.fork_count > page.forks.len() {
                    p {
                        a href={ (RecipePath(slug)) "/forks" } {
                            "All " (page.fork_count) " forks, in the family tree"
                        }
                    }
                }
            }
        }
    }
}

/// How far a fork is from its parent: the parent's versions it has not
/// brought in, with what they changed and the way to bring them in.
fn apart_notice(slug: &str, parent: &Crumb, apart: Apart) -> Markup {
    html! {
        @if apart.parent_retired {
            p class="apart" {
                (parent.title) " was retired by its author: nothing more comes from it, and it takes no suggestions."
            }
        } @else if apart.gained() > 0 {
            p class="apart" {
                (parent.title) " has "
                a href={ (RecipePath(&parent.slug)) "/diff?from=" (apart.since) "&to=" (apart.newest) } {
                    (count(apart.gained(), "new version", "new versions"))
                }
                " since version " (apart.since) ". "
                a href={ (RecipePath(slug)) "/bring-in" } {
                    @if apart.gained() == 1 { "Bring it in" } @else { "Bring them in" }
                } "."
            }
        } @else if apart.taken > 0 {
            p class="apart" {
                (parent.title) " took this recipe's "
                a href={ (RecipePath(&parent.slug)) "/suggestions" } {
                    (if apart.taken == 1 { "suggestion" } else { "suggestions" })
                }
                " in "
                a href=(version_path(&parent.slug, apart.newest)) { "its version " (apart.newest) }
                ", and has no other change since version " (apart.since) "."
            }
        } @else if apart.since != parent.version || apart.kept_own > 0 {
            p class="apart" {
                "In step with " (parent.title) "'s "
                a href=(version_path(&parent.slug, apart.since)) { "version " (apart.since) }
                @if apart.kept_own > 0 {
                    "; you kept your own version of "
                    (count(i64::from(apart.kept_own), "change", "changes"))
                    " it made"
                }
                "."
            }
        }
        @if apart.gained() > 0 && apart.kept_own > 0 {
            p class="apart" {
                "When this recipe last brought in " (parent.title) "'s changes, you kept your own version of "
                (count(i64::from(apart.kept_own), "change", "changes")) "."
            }
        }
    }
}

/// What became of a fork's newest suggestion to its parent.
fn suggestion_outcome(fork: &str, parent: &Crumb, s: &Suggestion) -> Markup {
    html! {
        p class="apart suggestion-outcome" {
            @match super::site_elsewhere(&parent.slug) {
                // Offered to another site, which numbers it there: its page
                // here says what became of it, and withdraws it.
                Some(_) => {
                    a href=(super::merges::offer_path(fork)) { "Your suggestion of version " (s.from_version) }
                }
                None => { a href=(super::merges::suggestion_path(&parent.slug, s.number)) { "Suggestion " (s.number) } }
            }
            @match (s.state, s.accepted_in, super::site_elsewhere(&parent.slug)) {
                (SuggestionState::Open, _, Some(site)) => {
                    " was offered to " (parent.title) " on " (site) ", whose author reviews it there."
                }
                (SuggestionState::Open, _, None) => {
                    " to " (parent.title) " is open: it follows this recipe's newest version."
                }
                (SuggestionState::Accepted, Some(v), _) => {
                    " was taken into " (parent.title) ", in "
                    a href=(version_path(&parent.slug, v)) { "its version " (v) }
                    @match s.kept_own {
                        Some(kept) if kept > 0 => {
                            ", in part: its author kept their own version of "
                            (count(i64::from(kept), "change", "changes")) " it made."
                        }
                        _ => ".",
                    }
                }
                (SuggestionState::Accepted, None, _) => { " was taken into " (parent.title) "." }
                (SuggestionState::Declined, ..) => { " was declined by " (parent.title) "'s author." }
                (SuggestionState::Withdrawn, ..) => { " was withdrawn." }
                (SuggestionState::Closed, ..) => { " was closed: " (parent.title) " was retired." }
            }
            @if let Some(reply) = &s.reply {
                " Their note: “" (reply) "”"
            }
        }
    }
}

/// On a past version's page, which version it is and a way back.
fn version_notice(page: &RecipePage) -> Markup {
    let Showing::Version {
        number,
        instant,
        author,
        note,
    } = &page.showing
    else {
        return html! {};
    };
    html! {
        p class="notice" {
            "This is version " (number) " of " (page.version_count) ", as it was on "
            time datetime=(machine_time(*instant)) { (human_time(*instant)) }
            @if let Some(author) = author { " by " (author) }
            @if let Some(note) = note { " (" (note) ")" }
            ". "
            a href=(recipe_path(page.slug)) { "See the recipe as it is now" } "."
        }
    }
}

/// The article itself, shared by the current page and a version's.
fn article(page: &RecipePage) -> Markup {
    let c = page.content;
    html! {
        article class="recipe" {
            (lineage(page))
            header class="recipe-header" {
                h1 { (c.title()) }
                (version_notice(page))
                // Only a picture in the site's store: an address elsewhere
                // (`image`, of a recipe saved before pictures were fetched)
                // is not drawn, or every reader's browser would ask that
                // site for it.
                @if let Some(picture) = c.picture() {
                    (picture_markup(picture))
                }
                @if let Some(summary) = c.summary() {
                    div class="summary" { (page.memos.markdown(summary)) }
                }
                p class="meta" {
                    @if let Some(author) = page.author { "By " a href={ "/cooks/" (author) } { (author) } ". " }
                    @if let Some(at) = page.modified {
                        "Changed " time datetime=(Rfc3339(at)) { (Day(at)) } ". "
                    }
                    @if let Some(category) = &c.category() { (category) ". " }
                    @if let Some(cuisine) = &c.cuisine() { (cuisine) " cuisine. " }
                    @if let Some(language) = &c.language() { "In " (language) "." }
                    @for (label, text) in other_details(c) { " " (label) ": " (text) "." }
                }
                (facts(c, &page.scale))
                @if !c.tags().is_empty() {
                    ul class="tags" role="list" aria-label="Tags" {
                        @for tag in c.tags() { li { a class="tag" href=(TagPath(tag)) { (tag) } } }
                    }
                }
            }
            div class="recipe-body" {
                section class="ingredients" aria-labelledby="ingredients" {
                    h2 id="ingredients" { "Ingredients" }
                    (scale_notice(page))
                    ul {
                        @for line in c.ingredients() {
                            @if page.scale.is_as_written() {
                                li { (Text(line)) }
                            } @else {
                                li { (Text(&page.scale.line(line))) }
                            }
                        }
                    }
                    @if matches!(page.showing, Showing::Current) && !c.ingredients().is_empty() {
                        (scale_control(page))
                    }
                }
                section class="method" aria-labelledby="method" {
                    h2 id="method" { "Method" }
                    (method(c.steps(), page.memos))
                }
            }
            @if let Some(notes) = c.notes() {
                section class="notes" aria-labelledby="notes" {
                    h2 id="notes" { "Notes" }
                    (page.memos.markdown(notes))
                }
            }
            @if let Showing::Current = page.showing {
                (family(page))
            }
            @if !matches!(page.showing, Showing::Preview) { (actions(page)) }
        }
    }
}

/// The address of a picture's variant (`640`, `4x3`).
pub fn picture_path(hash: &str, variant: &str) -> String {
    format!("/images/{hash}-{variant}.jpg")
}

/// The width a page asks for first: the largest no wider than the column.
const DEFAULT_PICTURE_WIDTH: u32 = 1024;

/// An uploaded picture at every width it has, the browser choosing by the
/// column's width; its width and height are given, so nothing moves when it
/// arrives.
fn picture_markup(picture: &Picture) -> Markup {
    let widths = picture.widths();
    let default = widths
        .iter()
        .copied()
        .rfind(|&w| w <= DEFAULT_PICTURE_WIDTH)
        .unwrap_or(widths[0]);
    let srcset = widths
        .iter()
        .map(|&w| format!("{} {w}w", picture_path(&picture.hash, &w.to_string())))
        .collect::<Vec<_>>()
        .join(", ");
    html! {
        img class="recipe-image" src=(picture_path(&picture.hash, &default.to_string()))
            srcset=(srcset) sizes="(min-width: 50rem) 46rem, 100vw"
            width=(default) height=(picture.height_at(default)) alt=(picture.alt);
    }
}

/// Absolute URLs of a recipe's picture for structured data: the three
/// crops of a stored one, or, for a recipe with no stored picture, the
/// address of one elsewhere. Structured data is read by search engines
/// and other programs, not by readers' browsers, so naming the address
/// there tells no other site who reads the recipe; and it is the
/// recipe's own fact (where its picture was), as the JSON API says.
pub fn picture_urls(base_url: &str, content: &Content) -> Vec<String> {
    match (content.picture(), content.image()) {
        (Some(p), _) => CROPS
            .iter()
            .map(|&c| format!("{base_url}{}", picture_path(&p.hash, &crop_name(c))))
            .collect(),
        (None, Some(image)) => vec![image.to_owned()],
        (None, None) => Vec::new(),
    }
}

/// On a scaled page, what was scaled and a way back to the recipe as
/// written.
fn scale_notice(page: &RecipePage) -> Markup {
    let scale = &page.scale;
    if scale.is_as_written() {
        return html! {};
    }
    html! {
        p class="notice scaled" {
            @if let Some((from, to)) = scale.servings {
                "Scaled from " (from) " to " (count(to, "serving", "servings")) ". "
            }
            @match scale.units {
                Units::Metric => "Amounts in metric units where they convert. ",
                Units::UsCustomary => "Amounts in US customary units where they convert. ",
                Units::AsWritten => "",
            }
            a href=(recipe_path(page.slug)) { "Show the recipe as written" } "."
        }
    }
}

/// The servings and units control: a plain form, so it works without
/// JavaScript, and its address can be shared.
fn scale_control(page: &RecipePage) -> Markup {
    let serves = page
        .scale
        .servings
        .map(|(_, to)| i64::from(to))
        .or(page.content.recipe_yield().servings);
    let units = page.scale.units;
    html! {
        form class="scale" method="get" action=(recipe_path(page.slug)) {
            @if let Some(n) = serves {
                label for="servings" { "Servings" }
                input id="servings" type="number" name="servings" min="1" max=(MAX_SERVINGS)
                    value=(n) required;
            }
            label for="units" { "Units" }
            select id="units" name="units" {
                @for (choice, label) in [(Units::AsWritten, "as written"), (Units::Metric, "metric"), (Units::UsCustomary, "US customary")] {
                    option value=(choice.as_query()) selected[choice == units] { (label) }
                }
            }
            button type="submit" { @if serves.is_some() { "Scale" } @else { "Convert" } }
        }
    }
}

/// Links to what can be done with the recipe.
fn actions(page: &RecipePage) -> Markup {
    let slug = page.slug;
    html! {
        p class="recipe-actions" {
            @match &page.showing {
                Showing::Current => {
                    a href={ (RecipePath(slug)) "/fork?version=" (page.version_count) } { "Fork" }
                    " " a href={ (RecipePath(slug)) "/edit" } { "Edit" } " "
                }
                Showing::Version { number, .. } => {
                    a href={ (RecipePath(slug)) "/fork?version=" (number) } { "Fork this version" } " "
                }
                Showing::Preview => {}
            }
            a href={ (RecipePath(slug)) "/history" } { "History" }
            @if !page.lineage.is_empty() {
                " " a href={ (RecipePath(slug)) "/compare" } { "Compare with parent" }
            }
            " " a href={ (RecipePath(slug)) "/forks" } { "Fork tree" }
            " " a href={ (RecipePath(slug)) ".json" } type="application/json" { "JSON" }
        }
    }
}

/// What the recipe form would save, rendered exactly as its page renders
/// it, without the page around it: the live preview.
pub fn preview(content: &Content, memos: &Memos) -> Markup {
    article(&RecipePage {
        base_url: "",
        slug: "",
        memos,
        content,
        author: None,
        published: None,
        modified: None,
        version_count: 0,
        lineage: &NO_LINEAGE,
        forks: &[],
        fork_count: 0,
        apart: None,
        can_suggest: false,
        last_suggestion: None,
        open_suggestions: 0,
        showing: Showing::Preview,
        scale: Scale::AS_WRITTEN,
    })
}

/// The whole page; `json_ld` is the recipe's structured data, if the page
/// carries it (the current recipe's page does, a past version's does not).
pub fn page(page: &RecipePage, json_ld: Option<String>) -> Markup {
    let description = match page.content.summary() {
        Some(summary) => page.memos.plain_text(summary).to_string(),
        // Without a summary, what it has: search engines show a page's
        // description, and would make one up from the page otherwise.
        None => {
            let c = page.content;
            let counted = |n: usize, one: &str, many: &str| match n {
                1 => format!("1 {one}"),
                n => format!("{n} {many}"),
            };
            format!(
                "{}: a recipe of {} and {}{}, with its whole history and forks.",
                c.title(),
                counted(c.ingredients().len(), "ingredient", "ingredients"),
                counted(c.steps().len(), "step", "steps"),
                page.author.map(|a| format!(", by {a}")).unwrap_or_default(),
            )
        }
    };
    let canonical = absolute(page.base_url, recipe_path(page.slug));
    let title = match &page.showing {
        Showing::Current | Showing::Preview => page.content.title().to_owned(),
        Showing::Version { number, .. } => format!("{} (version {number})", page.content.title()),
    };
    let mut head = Head::new(&title, Section::Recipes);
    head.description = Some(&description);
    head.canonical = Some(&canonical);
    let shared_picture = page.content.picture().map(|p| {
        let url = format!(
            "{}{}",
            page.base_url,
            picture_path(&p.hash, &crop_name(CROPS[2]))
        );
        (url, p.alt.as_str())
    });
    head.image = shared_picture
        .as_ref()
        .map(|(url, alt)| (url.as_str(), *alt));
    // A scaled page is a view of the recipe, not another recipe: search
    // engines are pointed at the original.
    head.noindex = !page.scale.is_as_written();
    head.json_ld = json_ld;
    layout::page(&head, article(page))
}

/// The address a recipe is based on: for a fork, its parent's version it
/// is in step with (the newest it brought in, or forked); for a recipe
/// brought in from another site, that site's page.
pub fn based_on(base_url: &str, model: &RecipeShow) -> Option<String> {
    model
        .lineage
        .parent()
        .map(|p| {
            let since = model.apart.map_or(p.version, |a| a.since);
            absolute(base_url, version_path(&p.slug, since))
        })
        .or_else(|| model.lineage.source.as_ref().map(|s| s.url.clone()))
}

/// The recipe page, with its amounts at the model's scale and its JSON-LD
/// (which stays the recipe as written).
pub fn show(base_url: &str, memos: &Memos, model: &RecipeShow) -> Markup {
    let scale = model.scale;
    let r = &model.recipe;
    let url = absolute(base_url, recipe_path(r.slug.as_str()));
    let based_on = based_on(base_url, model);
    let json_ld = structured_data::recipe(
        &r.content,
        &RecipeFacts {
            url: &url,
            author: r.author.as_deref(),
            published: r.created_at,
            modified: r.updated_at,
            based_on: based_on.as_deref(),
            contributors: &r.contributors,
            version: r.version_count,
            images: &picture_urls(base_url, &r.content),
            memos,
        },
    );
    let recipe = RecipePage {
        base_url,
        slug: r.slug.as_str(),
        memos,
        content: &r.content,
        author: r.author.as_deref(),
        published: r.created_at,
        modified: r.updated_at,
        version_count: r.version_count,
        lineage: &model.lineage,
        forks: &model.forks,
        fork_count: model.fork_count,
        apart: model.apart,
        can_suggest: model.can_suggest,
        last_suggestion: model.last_suggestion.as_ref(),
        open_suggestions: model.open_suggestions,
        showing: Showing::Current,
        scale,
    };
    page(&recipe, Some(json_ld))
}

/// A past version's page: no JSON-LD, which belongs to the recipe now.
pub fn version(base_url: &str, memos: &Memos, model: &VersionShow) -> Markup {
    let (recipe, version) = (&model.recipe, &model.version);
    let shown = RecipePage {
        base_url,
        slug: recipe.slug.as_str(),
        memos,
        content: &model.content,
        author: recipe.author.as_deref(),
        published: recipe.created_at,
        modified: Some(version.instant),
        version_count: recipe.version_count,
        lineage: &model.lineage,
        forks: &[],
        fork_count: 0,
        apart: None,
        can_suggest: false,
        last_suggestion: None,
        open_suggestions: 0,
        showing: Showing::Version {
            number: version.number,
            instant: version.instant,
            author: version.author.clone(),
            note: version.note.clone(),
        },
        scale: Scale::AS_WRITTEN,
    };
    page(&shown, None)
}
