//! Bringing in a recipe from another site's page: its schema.org Recipe
//! read from the page's JSON-LD in the shapes real sites publish (`@graph`,
//! `@type` as a list, `HowToSection`s of `HowToStep`s, plain strings,
//! `ImageObject`, ISO 8601 durations, `recipeYield` as a number, a string
//! or a list), or from its microdata where it has no JSON-LD; and fetching
//! such a page safely (`fetch`). A page without schema.org is read from
//! its recipe-card plugin's HTML (`cards`), else from its headings
//! (`headings`).
//!
//! What comes out is a recipe's `Content` and where it came from: the page
//! and the site's name, which become the start of the new recipe's lineage.

mod cards;
mod element;
mod fetch;
mod headings;
mod jsonld;
mod lenient_json;
mod microdata;
mod nesting;
mod stated_times;
mod text;

pub use fetch::{
    FetchError, FetchPlace, Fetcher, SignRequest, MAX_DOCUMENT_BYTES, MAX_FETCHES, MAX_PAGE_BYTES,
    MAX_REDIRECTS,
};

use crate::domain::{Content, ContentDraft, Minutes, Source};
use microdata::Markup;

/// The longest source address kept: a line of an export must hold it.
pub const MAX_SOURCE_URL: usize = 2_000;

/// A recipe read from a page.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub content: Content,
    pub source: Source,
    /// Which of the page's markups it was read from.
    pub reading: Reading,
    /// Where its schema.org Recipe lacked its ingredients or its steps and
    /// the page's HTML had them: which part, and the reading that found it.
    pub completed: Option<(&'static str, Reading)>,
}

impl Imported {
    /// How it was read, said to the cook: "its schema.org JSON-LD", or
    /// "its schema.org JSON-LD, its steps from its headings (...)".
    pub fn read_from(&self) -> String {
        match self.completed {
            None => self.reading.as_str().to_owned(),
            Some((part, from)) => {
                format!(
                    "{}, its {part} from {}",
                    self.reading.as_str(),
                    from.as_str()
                )
            }
        }
    }

    /// What was read, in a line: the title, how many ingredients and
    /// steps, the sections, the times, and which markup it came from.
    pub fn summary(&self) -> String {
        let c = &self.content;
        let counted = |n: usize, one: &str| match n {
            1 => format!("1 {one}"),
            n => format!("{n} {one}s"),
        };
        let mut sections: Vec<&str> = Vec::new();
        for step in c.steps() {
            if let Some(section) = step.section.as_deref() {
                if sections.last() != Some(&section) {
                    sections.push(section);
                }
            }
        }
        let mut line = format!(
            "\u{201c}{}\u{201d}: {}, {}",
            c.title(),
            counted(c.ingredients().len(), "ingredient"),
            counted(c.steps().len(), "step")
        );
        if !sections.is_empty() {
            line.push_str(&format!(
                " in {} ({})",
                counted(sections.len(), "section"),
                sections.join(", ")
            ));
        }
        for (name, minutes) in [("prep", c.prep()), ("cook", c.cook()), ("total", c.total())] {
            if let Some(minutes) = minutes {
                line.push_str(&format!(", {name} {} min", minutes.get()));
            }
        }
        line.push_str(&format!("; read from {}", self.read_from()));
        line
    }
}

/// The markup a page's recipe was read from, said to the cook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// A schema.org Recipe in a `<script type="application/ld+json">`.
    JsonLd,
    /// schema.org microdata (`itemscope`, `itemprop`).
    Microdata,
    /// schema.org in RDFa (`typeof`, `property`).
    Rdfa,
    /// A recipe-card plugin's HTML: the words naming it (`cards`).
    Card(&'static str),
    /// The page's headings: the lists after "Ingredients" and "Method".
    Headings,
}

impl Reading {
    pub fn as_str(self) -> &'static str {
        match self {
            Reading::JsonLd => "its schema.org JSON-LD",
            Reading::Microdata => "its schema.org microdata",
            Reading::Rdfa => "its schema.org RDFa",
            Reading::Card(said) => said,
            Reading::Headings => "its headings (the lists after \u{201c}Ingredients\u{201d} and \u{201c}Method\u{201d})",
        }
    }
}

/// Why a page gave no recipe.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ImportError {
    #[error(
        "the page has no recipe: no schema.org Recipe in its JSON-LD, microdata or RDFa, \
         no recipe card this site knows, and no list after an \u{201c}Ingredients\u{201d} heading"
    )]
    NoRecipe,
    #[error("the page's recipe has no name")]
    NoName,
    /// The page's recipe lacks its ingredients or its steps: brought in,
    /// it would look whole and not be. What was found comes with it, for a
    /// form that shows it to be finished by hand.
    #[error(
        "the page's recipe, \u{201c}{}\u{201d}, was found with {}, but no {}: \
         nothing was brought in, as it would not be the whole recipe (read from {}). \
         Write in what the page says, or try the page's printable version",
        .0.imported.content.title(), .0.found, .0.missing, .0.imported.read_from()
    )]
    Incomplete(Box<Partial>),
    #[error("the page's recipe cannot be kept: {0}")]
    Invalid(String),
    #[error(
        "the page nests its elements more than {} deep, as no recipe page does: it was not read",
        nesting::MAX_DEPTH
    )]
    TooDeep,
}

/// A recipe found without its ingredients or without its steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Partial {
    pub imported: Imported,
    /// What was found: "12 ingredients", "1 step", "its name".
    pub found: String,
    /// What was not: "steps", "ingredients", "ingredients and no steps".
    pub missing: &'static str,
}

/// The recipe on the page `html`, which was found at `url`.
pub fn from_html(html: &str, url: &str) -> Result<Imported, ImportError> {
    if url.len() > MAX_SOURCE_URL {
        return Err(ImportError::Invalid(format!(
            "its address is longer than {MAX_SOURCE_URL} characters"
        )));
    }
    // The HTML parser's cost grows with the square of the nesting: a
    // page nested thousands deep is refused before it is parsed.
    if nesting::depth(html) > nesting::MAX_DEPTH {
        return Err(ImportError::TooDeep);
    }
    let page = scraper::Html::parse_document(html);
    let found = (jsonld::recipe(&page).map(|f| (f, Reading::JsonLd)))
        .or_else(|| microdata::recipe(&page, Markup::Microdata).map(|f| (f, Reading::Microdata)))
        .or_else(|| microdata::recipe(&page, Markup::Rdfa).map(|f| (f, Reading::Rdfa)))
        .or_else(|| cards::plugin_card(&page, html).map(|(f, said)| (f, Reading::Card(said))))
        .or_else(|| headings::by_headings(&page).map(|f| (f, Reading::Headings)));
    let Some((mut found, reading)) = found else {
        return Err(ImportError::NoRecipe);
    };
    let completed = match reading {
        Reading::JsonLd | Reading::Microdata | Reading::Rdfa => {
            complete_from_html(&mut found.content, &page, html, true)
        }
        // A card with half a recipe (its steps written as it does not
        // mark them) is completed from the page's headings.
        Reading::Card(_) => complete_from_html(&mut found.content, &page, html, false),
        Reading::Headings => None,
    };
    if found.content.title.trim().is_empty() {
        return Err(ImportError::NoName);
    }
    // Sites that give a preparation and a cooking time often leave the
    // total out; a reader expects the sum.
    if found.content.total.is_none() {
        let minutes = |m: Option<Minutes>| m.map_or(0, |m| i64::from(m.get()));
        let sum = minutes(found.content.prep) + minutes(found.content.cook);
        found.content.total = (sum > 0).then(|| Minutes::new(sum).ok()).flatten();
    }
    found.content.image = found
        .content
        .image
        .and_then(|image| text::absolute(url, &image))
        .filter(|image| image.starts_with("https://") || image.starts_with("http://"));
    let content = text::within_limits(found.content)
        .normalized()
        .map_err(|e| ImportError::Invalid(e.to_string()))?;
    let name = found.site_name.or_else(|| site_name_of(&page));
    whole(Imported {
        content,
        source: source(url, name.as_deref().unwrap_or("")),
        reading,
        completed,
    })
}

/// A schema.org Recipe (or a plugin's card, `from_schema` false) without
/// its ingredients or its steps, completed from the page's HTML where a
/// plugin's card or its headings have them
/// (sites whose JSON-LD is a stub, with the recipe in the page); and one
/// whose method is one unparted text, parted as the page shows it: the
/// part filled in, and the reading that found it.
fn complete_from_html(
    content: &mut ContentDraft,
    page: &scraper::Html,
    html: &str,
    from_schema: bool,
) -> Option<(&'static str, Reading)> {
    let lacking = missing(content.ingredients.len(), content.steps.len()).is_some();
    let one_text = from_schema && content.steps.len() == 1;
    if !lacking && !one_text {
        return None;
    }
    let card = from_schema
        .then(|| cards::plugin_card(page, html))
        .flatten()
        .map(|(f, said)| (f, Reading::Card(said)));
    let (found, from) =
        card.or_else(|| headings::by_headings(page).map(|f| (f, Reading::Headings)))?;
    let mut filled = Vec::new();
    if content.ingredients.is_empty() && !found.content.ingredients.is_empty() {
        content.ingredients = found.content.ingredients;
        filled.push("ingredients");
    }
    let parts_the_text = one_text
        && found.content.steps.len() > 1
        && says_the_same(&content.steps[0].text, &found.content.steps);
    if (content.steps.is_empty() && !found.content.steps.is_empty()) || parts_the_text {
        content.steps = found.content.steps;
        filled.push("steps");
    }
    match filled.as_slice() {
        [] => None,
        [one] => Some((*one, from)),
        _ => Some(("ingredients and steps", from)),
    }
}

/// Whether `steps` say what `text` says: nine in ten of its words are in
/// them, so that the page's steps part the one text and are not another
/// list the reading found.
fn says_the_same(text: &str, steps: &[crate::domain::Step]) -> bool {
    let words = |t: &str| -> Vec<String> {
        t.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let theirs: std::collections::HashSet<String> =
        steps.iter().flat_map(|step| words(&step.text)).collect();
    let ours = words(text);
    let shared = ours.iter().filter(|w| theirs.contains(*w)).count();
    !ours.is_empty() && shared * 10 >= ours.len() * 9
}

/// The source the page at `url` is, named `name` (cut to 100 characters),
/// or, where it names none, by its host: the start of a brought-in recipe's
/// lineage, for a page read here and for the form that shows it.
pub fn source(url: &str, name: &str) -> Source {
    let name = text::clipped(name.trim(), 100);
    let name = match name.is_empty() {
        true => text::host_of(url).unwrap_or_else(|| url.to_owned()),
        false => name,
    };
    Source {
        url: url.to_owned(),
        name,
    }
}

/// What a recipe of `ingredients` and `steps` lacks to be whole, in the
/// words the cook is told ("steps", "ingredients", "ingredients and no
/// steps"); `None` when it has both.
pub fn missing(ingredients: usize, steps: usize) -> Option<&'static str> {
    match (ingredients, steps) {
        (0, 0) => Some("ingredients and no steps"),
        (0, _) => Some("ingredients"),
        (_, 0) => Some("steps"),
        _ => None,
    }
}

/// `imported`, or, found without its ingredients or without its steps,
/// refused saying what was found.
fn whole(imported: Imported) -> Result<Imported, ImportError> {
    let content = &imported.content;
    let (ingredients, steps) = (content.ingredients().len(), content.steps().len());
    let Some(missing) = missing(ingredients, steps) else {
        return Ok(imported);
    };
    let counted = |n: usize, one: &str, many: &str| match n {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    };
    let found = match (ingredients, steps) {
        (0, 0) => "its name".to_owned(),
        (0, n) => counted(n, "step", "steps"),
        (n, _) => counted(n, "ingredient", "ingredients"),
    };
    Err(ImportError::Incomplete(Box::new(Partial {
        imported,
        found,
        missing,
    })))
}

/// The address of a pasted page: the one given, else the page's own: its
/// canonical link, else its Recipe's in JSON-LD (`url`, `mainEntityOfPage`,
/// `@id`), else `og:url`, else the one the browser that saved it wrote in
/// it; `None` if it says none.
pub fn page_address(given: &str, html: &str) -> Option<String> {
    let given = given.trim();
    if given.starts_with("https://") || given.starts_with("http://") {
        return Some(given.to_owned());
    }
    let page = scraper::Html::parse_document(html);
    let web_address = |selector: &str| {
        let selector = scraper::Selector::parse(selector).expect("a valid selector");
        page.select(&selector)
            .filter_map(|e| e.value().attr("href").or(e.value().attr("content")))
            .map(str::trim)
            // One too long to keep says nothing: the next place may.
            .filter(|url| url.len() <= MAX_SOURCE_URL)
            .find(|url| url.starts_with("https://") || url.starts_with("http://"))
            .map(str::to_owned)
    };
    web_address("link[rel='canonical']")
        .or_else(|| jsonld::address(&page))
        .or_else(|| web_address("meta[property='og:url']"))
        .or_else(|| saved_from(html))
}

/// The address a browser wrote into the page it saved: Chromium's (and
/// Internet Explorer's) `<!-- saved from url=(0042)https://... -->`, or
/// SingleFile's `url: https://...` in its opening comment. Looked for in
/// the page's first 4 KB, where both write it.
fn saved_from(html: &str) -> Option<String> {
    let head = text::clipped_bytes(html, 4096);
    let after = if let Some(at) = head.find("saved from url=(") {
        let rest = &head[at + "saved from url=(".len()..];
        &rest[rest.find(')')? + 1..]
    } else {
        let at = head.find("Page saved with SingleFile")?;
        let rest = &head[at..];
        &rest[rest.find("url:")? + "url:".len()..]
    };
    let url = after
        .trim_start()
        .split(|c: char| c.is_whitespace() || c == '<')
        .next()?
        .trim_end_matches("-->");
    let is_web_address = url.starts_with("https://") || url.starts_with("http://");
    (is_web_address && url.len() <= MAX_SOURCE_URL).then(|| url.to_owned())
}

/// The site's own name: `og:site_name`, or `application-name`.
fn site_name_of(page: &scraper::Html) -> Option<String> {
    let selector =
        scraper::Selector::parse("meta[property='og:site_name'], meta[name='application-name']")
            .expect("a valid selector");
    page.select(&selector)
        .filter_map(|meta| meta.value().attr("content"))
        .map(text::plain)
        .find(|name| !name.is_empty())
}

/// What a reader of one kind found: the content, and the site's name if
/// the structured data says it.
struct Found {
    content: ContentDraft,
    site_name: Option<String>,
}

/// A value a page could give for `field`'s schema.org `property`: what
/// the readers' tests of the attribute table's names put on a page.
#[cfg(test)]
fn schema_org_sample(field: &crate::domain::Field, property: &str) -> &'static str {
    use crate::domain::Slot;
    match (property, field.slot) {
        // Shared by the servings and the yield's words.
        ("recipeYield", _) => "4 bowls",
        (_, Slot::Minutes(..)) => "PT10M",
        (_, Slot::Address(..)) => "https://recipes.example/dal.jpg",
        _ => "Some words",
    }
}

#[cfg(test)]
mod tests {
    use super::page_address;

    fn page(head: &str, recipe: &str) -> String {
        format!(
            r#"<html><head>{head}<script type="application/ld+json">{{"@type": "Recipe", "name": "Dal"{recipe}}}</script></head></html>"#
        )
    }

    #[test]
    fn a_pasted_page_says_its_address_in_any_of_the_places_sites_put_it() {
        let og = r#"<meta property="og:url" content="https://og.example/dal">"#;
        let canonical = r#"<link rel="canonical" href="https://canonical.example/dal">"#;
        for (html, address) in [
            // The canonical link first; then the Recipe's JSON-LD; og:url last.
            (
                page(
                    &format!("{og}{canonical}"),
                    r#", "url": "https://ld.example/dal""#,
                ),
                Some("https://canonical.example/dal"),
            ),
            (
                page(og, r#", "url": "https://ld.example/dal""#),
                Some("https://ld.example/dal"),
            ),
            (
                page("", r#", "mainEntityOfPage": "https://ld.example/page""#),
                Some("https://ld.example/page"),
            ),
            (
                page(
                    "",
                    r#", "mainEntityOfPage": {"@type": "WebPage", "@id": "https://ld.example/page"}"#,
                ),
                Some("https://ld.example/page"),
            ),
            (
                page("", r#", "@id": "https://ld.example/dal/#recipe""#),
                Some("https://ld.example/dal/"),
            ),
            // A relative or fragment-only address says nothing.
            (
                page(og, r##", "url": "/dal", "@id": "#recipe""##),
                Some("https://og.example/dal"),
            ),
            (page("", r#", "url": "/dal""#), None),
            (page("", ""), None),
        ] {
            assert_eq!(page_address("", &html).as_deref(), address, "{html}");
        }
        // An address too long to keep says nothing: the next place may.
        let long = format!(
            r#"<link rel="canonical" href="https://x.example/{}">"#,
            "a".repeat(super::MAX_SOURCE_URL)
        );
        assert_eq!(
            page_address("", &page(&format!("{long}{og}"), "")).as_deref(),
            Some("https://og.example/dal")
        );
        // A page saved by a browser says where it was in a comment.
        for (saved, address) in [
            (
                "<!-- saved from url=(0031)https://saved.example/dal/ -->\n<html></html>",
                Some("https://saved.example/dal/"),
            ),
            (
                "<!DOCTYPE html> <html><!--\n Page saved with SingleFile \n url: https://single.example/dal \n saved date: Sun Dec 06 2026\n--><head></head></html>",
                Some("https://single.example/dal"),
            ),
            ("<!-- saved from url=(0014)about:internet -->", None),
        ] {
            assert_eq!(page_address("", saved).as_deref(), address, "{saved}");
        }
        // An address given wins over all of them.
        let html = page(canonical, "");
        assert_eq!(
            page_address(" https://given.example/ ", &html).as_deref(),
            Some("https://given.example/")
        );
    }
}
