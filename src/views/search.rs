//! The search page: ranked results with snippets, tags to narrow by, and
//! pages of results.

use maud::{html, Markup};
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};

use super::catalog::card;
use super::layout::{self, Head, Section};
use super::markdown::Memos;
use crate::domain::search::{Hit, Passage, SearchPage, MAX_PAGE, MAX_WORDS, PER_PAGE};

/// How long a snippet is, in bytes: two lines of a card.
const SNIPPET: usize = 180;

/// A page of search results for `query` (none yet if the query is empty).
pub fn page(query: &str, results: &SearchPage, memos: &Memos) -> Markup {
    let title = match (query.is_empty(), &results.tag) {
        (true, None) => "Search".to_owned(),
        (true, Some(tag)) => format!("Search: tagged {tag}"),
        (false, None) => format!("Search: {query}"),
        (false, Some(tag)) => format!("Search: {query}, tagged {tag}"),
    };
    let mut head = Head::new(&title, Section::Other);
    head.query = Some(query);
    // Results pages are endless and change with every write: not for
    // search engines, which find every recipe through the sitemap.
    head.noindex = true;
    let asked = !results.words.is_empty() || results.tag.is_some();
    layout::page(
        &head,
        html! {
            h1 { (title) }
            @if !asked {
                p class="lede" { "Type words from a recipe's title, ingredients, tags or method into the search box." }
            } @else {
                (summary(query, results))
                (facets(query, results))
                @if !results.hits.is_empty() {
                    ol class="recipe-list" role="list" start=(results.page * PER_PAGE + 1) {
                        @for hit in &results.hits {
                            (card(&hit.entry, memos, snippet(hit, results)))
                        }
                    }
                }
                (pager(query, results))
            }
        },
    )
}

/// How many recipes match, the way back to every tag, and what the search
/// left out or found nothing for.
fn summary(query: &str, results: &SearchPage) -> Markup {
    html! {
        p class="lede" {
            @match (results.total, results.total_estimated) {
                (0, _) => "No recipe matches.",
                (1, false) => "One recipe matches, ",
                (n, false) => { (n) " recipes match, " }
                (1, true) => "About one recipe matches, ",
                (n, true) => { "About " (about(n)) " recipes match, " }
            }
            @if results.total > 0 { "best first." }
            @if results.tag.is_some() {
                " "
                a href=(link(query, None, 0)) { "Search every tag" }
            }
        }
        @if results.words.dropped > 0 {
            p class="notice" {
                "Only the first " (MAX_WORDS) " words were searched for ("
                (results.words.dropped) " more left out)."
            }
        }
        @if results.total == 0 && !query.is_empty() {
            p class="notice" {
                "No recipe matches every word of " q { (query) } ". Fewer words, or other ones, may find one."
            }
        }
    }
}

/// An estimate to two figures (`1,700`, `530,000`): the figures past them
/// would claim a precision it does not have.
fn about(n: usize) -> String {
    let mut unit = 1;
    while n / unit >= 100 {
        unit *= 10;
    }
    let rounded = (n + unit / 2) / unit * unit;
    let digits = rounded.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

/// The tags of the matches, each a link that narrows the search to it;
/// none once it is narrowed.
fn facets(query: &str, results: &SearchPage) -> Markup {
    html! {
        @if !results.tags.is_empty() && results.tag.is_none() {
            nav class="facets" aria-label="Narrow by tag" {
                h2 class="visually-hidden" { "Narrow by tag" }
                ul class="tags" role="list" {
                    @for (tag, n) in &results.tags {
                        li {
                            a class="tag" href=(link(query, Some(tag), 0)) {
                                (tag) " " span class="count" {
                                    // Counted among the first matches, scaled.
                                    @if results.tags_estimated {
                                        span title="about" { "≈" }
                                    }
                                    (n) span class="visually-hidden" { " recipes" }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The links to the previous and the next page of results, where there
/// are such pages.
fn pager(query: &str, results: &SearchPage) -> Markup {
    html! {
        @if results.page > 0 || results.has_next {
            nav class="pager" aria-label="More results" {
                @if results.page > 0 {
                    a rel="prev" href=(link(query, results.tag.as_deref(), results.page - 1)) { "Previous page" }
                    " "
                }
                @if results.has_next && results.page + 1 < MAX_PAGE {
                    a rel="next" href=(link(query, results.tag.as_deref(), results.page + 1)) { "Next page" }
                }
            }
        }
    }
}

/// The address of page `page` (from 0) of `query`, narrowed to `tag`.
fn link(query: &str, tag: Option<&str>, page: usize) -> String {
    let mut link = format!("/search?q={}", utf8_percent_encode(query, NON_ALPHANUMERIC));
    if let Some(tag) = tag {
        link.push_str(&format!(
            "&tag={}",
            utf8_percent_encode(tag, NON_ALPHANUMERIC)
        ));
    }
    if page > 0 {
        link.push_str(&format!("&page={}", page + 1));
    }
    link
}

/// The piece of the hit's texts that marks the most of the query's words,
/// the summary first among equals; `None` (the card shows its summary) when
/// only the title or the tags matched.
fn snippet(hit: &Hit, results: &SearchPage) -> Option<Markup> {
    let mut best: Option<crate::domain::search::words::Snippet> = None;
    for passage in &hit.passages {
        let text = match passage {
            // Not memoised: a step is shown in a snippet once, not on every page.
            Passage::Markdown(text) => super::markdown::plain_uncached(text),
            Passage::Plain(text) => text.clone(),
        };
        if let Some(found) = results.matcher.snippet(&text, hit.language, SNIPPET) {
            if best.as_ref().is_none_or(|b| found.marked > b.marked) {
                best = Some(found);
            }
        }
    }
    let best = best?;
    Some(html! {
        @if best.before { "… " }
        @for (text, marked) in &best.runs {
            @if *marked { mark { (text) } } @else { (text) }
        }
        @if best.after { " …" }
    })
}

#[cfg(test)]
mod tests {
    use super::about;

    #[test]
    fn an_estimate_is_written_to_two_figures_in_groups_of_three() {
        for (n, written) in [
            (7, "7"),
            (99, "99"),
            (1_667, "1,700"),
            (1_649, "1,600"),
            (52_572, "53,000"),
            (525_123, "530,000"),
            (995, "1,000"),
            (1_234_567, "1,200,000"),
        ] {
            assert_eq!(about(n), written, "{n}");
        }
    }
}
