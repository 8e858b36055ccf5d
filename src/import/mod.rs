//! Bringing in a recipe from another site's page: its schema.org Recipe
//! read from the page's JSON-LD in the shapes real sites publish (`@graph`,
//! `@type` as a list, `HowToSection`s of `HowToStep`s, plain strings,
//! `ImageObject`, ISO 8601 durations, `recipeYield` as a number, a string
//! or a list), or from its microdata where it has no JSON-LD; and fetching
//! such a page safely (`fetch`).
//!
//! What comes out is a recipe's `Content` and where it came from: the page
//! and the site's name, which become the start of the new recipe's lineage.

mod fetch;
mod jsonld;
mod microdata;
mod text;

pub use fetch::{FetchError, FetchPlace, Fetcher, MAX_FETCHES, MAX_PAGE_BYTES, MAX_REDIRECTS};

use crate::domain::{Content, Source};

/// The longest source address kept: a line of an export must hold it.
pub const MAX_SOURCE_URL: usize = 2_000;

/// A recipe read from a page.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub content: Content,
    pub source: Source,
}

/// Why a page gave no recipe.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    #[error("the page has no recipe: no schema.org Recipe in its JSON-LD or microdata")]
    NoRecipe,
    #[error("the page's recipe has no name")]
    NoName,
    #[error("the page's recipe cannot be kept: {0}")]
    Invalid(String),
}

/// The recipe on the page `html`, which was found at `url`.
pub fn from_html(html: &str, url: &str) -> Result<Imported, ImportError> {
    if url.len() > MAX_SOURCE_URL {
        return Err(ImportError::Invalid(format!(
            "its address is longer than {MAX_SOURCE_URL} characters"
        )));
    }
    let page = scraper::Html::parse_document(html);
    let found = jsonld::recipe(&page).or_else(|| microdata::recipe(&page));
    let Some(mut found) = found else {
        return Err(ImportError::NoRecipe);
    };
    if found.content.title.trim().is_empty() {
        return Err(ImportError::NoName);
    }
    found.content.image = found
        .content
        .image
        .and_then(|image| text::absolute(url, &image))
        .filter(|image| image.starts_with("https://") || image.starts_with("http://"));
    let content = text::within_limits(found.content)
        .normalized()
        .map_err(|e| ImportError::Invalid(e.to_string()))?;
    let name = found
        .site_name
        .or_else(|| site_name_of(&page))
        .or_else(|| text::host_of(url))
        .unwrap_or_else(|| url.to_owned());
    Ok(Imported {
        content,
        source: Source {
            url: url.to_owned(),
            name: text::clipped(&name, 100),
        },
    })
}

/// The address of a pasted page: the one given, else the page's own: its
/// canonical link, else its Recipe's in JSON-LD (`url`, `mainEntityOfPage`,
/// `@id`), else `og:url`; `None` if it says none.
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
            .find(|url| url.starts_with("https://") || url.starts_with("http://"))
            .map(str::to_owned)
    };
    web_address("link[rel='canonical']")
        .or_else(|| jsonld::address(&page))
        .or_else(|| web_address("meta[property='og:url']"))
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
    content: Content,
    site_name: Option<String>,
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
        // An address given wins over all of them.
        let html = page(canonical, "");
        assert_eq!(
            page_address(" https://given.example/ ", &html).as_deref(),
            Some("https://given.example/")
        );
    }
}
