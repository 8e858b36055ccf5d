//! The catalog: every recipe, or a tag's, a page at a time.

use maud::{html, Markup};

use super::layout::{self, Head, Section};
use super::markdown::Memos;
use super::{count, structured_data, tag_path, Day, Excerpt, RecipePath, Rfc3339, TagPath, Text};
use crate::domain::{CatalogEntry, Sort, MAX_SORTED_TAG};

/// A page of the catalog.
pub struct CatalogView<'a> {
    pub base_url: &'a str,
    /// The tag the catalog is filtered by, if any.
    pub tag: Option<&'a str>,
    pub sort: Sort,
    pub entries: &'a [CatalogEntry],
    /// The link to the next page, if there is one.
    pub next: Option<String>,
    /// Whether this is a later page (not the first).
    pub later: bool,
    /// Whether the entries are in the order they were added, not sorted (a
    /// tag too large to sort).
    pub unsorted: bool,
}

/// Characters of a summary a card shows.
const EXCERPT: usize = 160;

/// A list of recipes as catalog cards (the catalog, tags, search).
pub fn cards(entries: &[CatalogEntry], memos: &Memos) -> Markup {
    html! {
        ul class="recipe-list" role="list" {
            @for entry in entries {
                (card(entry, memos, None))
            }
        }
    }
}

/// One recipe's card; `excerpt` in place of the summary's start (a search
/// result's snippet).
pub fn card(entry: &CatalogEntry, memos: &Memos, excerpt: Option<Markup>) -> Markup {
    html! {
                li class="recipe-card" {
                    h2 { a href=(RecipePath(&entry.slug)) { (Text(&entry.title)) } }
                    @if let Some(excerpt) = excerpt {
                        p class="summary snippet" { (excerpt) }
                    } @else if let Some(summary) = &entry.summary {
                        p class="summary" { (Excerpt(&memos.plain_text_shared(summary), EXCERPT)) }
                    }
                    @if !entry.tags.is_empty() {
                        ul class="tags" role="list" aria-label="Tags" {
                            @for tag in &entry.tags {
                                li { a class="tag" href=(TagPath(tag)) { (Text(tag)) } }
                            }
                        }
                    }
                    p class="meta" {
                        (count(entry.version_count, "version", "versions")) " · "
                        (count(entry.fork_count as i64, "fork", "forks"))
                        @if let Some(at) = entry.updated_at {
                            " · changed " time datetime=(Rfc3339(at)) { (Day(at)) }
                        }
                    }
                }
    }
}

fn sort_link(view: &CatalogView, sort: Sort, text: &str) -> Markup {
    let base = view.tag.map_or("/".to_owned(), tag_path);
    let href = match sort {
        Sort::Title => base,
        Sort::Recent => format!("{base}?sort=recent"),
    };
    html! {
        li {
            @if view.sort == sort {
                a href=(href) aria-current="page" { (text) }
            } @else {
                a href=(href) { (text) }
            }
        }
    }
}

/// The catalog page, with an `ItemList` of its recipes.
pub fn page(view: &CatalogView, memos: &Memos) -> Markup {
    let title = match view.tag {
        Some(tag) => format!("Recipes tagged {tag}"),
        None => "Recipes".to_owned(),
    };
    let mut head = Head::new(&title, Section::Recipes);
    if view.tag.is_some() {
        head.section = Section::Tags;
    }
    head.description = Some("Recipes that keep their whole history and can be forked.");
    head.json_ld = Some(structured_data::item_list(
        view.base_url,
        view.entries.iter().map(|e| &*e.slug),
        1,
    ));
    // Only the first page of a list, sorted by title, is the one to index.
    let canonical = format!(
        "{}{}",
        view.base_url,
        view.tag.map_or("/".to_owned(), tag_path)
    );
    head.canonical = Some(&canonical);
    layout::page(
        &head,
        html! {
            h1 { (title) }
            nav class="sort" aria-label="Sort" {
                ul {
                    (sort_link(view, Sort::Title, "By title"))
                    (sort_link(view, Sort::Recent, "Recently changed"))
                }
            }
            @if view.unsorted {
                p class="notice" {
                    "This tag has more than " (MAX_SORTED_TAG) " recipes, "
                    "so they are listed in the order they were added."
                }
            }
            @if view.entries.is_empty() {
                p class="notice" { "No recipes here yet." }
            } @else {
                (cards(view.entries, memos))
            }
            @if view.next.is_some() || view.later {
                nav class="pager" aria-label="Pages" {
                    @if view.later {
                        a href=(view.tag.map_or("/".to_owned(), tag_path)) { "First page" }
                        " "
                    }
                    @if let Some(next) = &view.next {
                        a rel="next" href=(next) { "Next page" }
                    }
                }
            }
        },
    )
}
