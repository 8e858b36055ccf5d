//! Reading a page's elements within bounds: the text of one, the most
//! items of one list, and the page's title, shared by the readings of
//! plugin cards (`cards`) and of headings (`headings`).

use scraper::{ElementRef, Html, Selector};

use super::text::{clipped_bytes, plain};

/// The most items of one list read: a hostile page of a million list
/// items costs no more than a long recipe.
pub(super) const MAX_ITEMS: usize = 400;

pub(super) fn selector(css: &str) -> Selector {
    Selector::parse(css).expect("a valid selector")
}

/// The most text read of one element, and the most nodes walked for it:
/// a page of deep or enormous markup costs no more than a long recipe.
pub(super) const MAX_TEXT_BYTES: usize = 8 * 1024;
pub(super) const MAX_TEXT_NODES: usize = 4 * 1024;

/// The text of `element`, at most `max_bytes` of it, without the parts
/// `not_text` selects: a walk that leaves those parts' subtrees out and
/// stops at its budgets, so that a page nested deep costs its size and no
/// more.
pub(super) fn text_within(
    element: ElementRef,
    not_text: Option<&Selector>,
    max_bytes: usize,
) -> String {
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
    squeezed(&out)
}

/// Text from the page's tree, its spaces squeezed: it is decoded
/// already, so no markup is read into it again ("a &lt; b" stays "a < b",
/// where `text::plain` would read a tag).
pub(super) fn squeezed(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text_within` with the budget of one value.
pub(super) fn text_of(element: ElementRef) -> String {
    text_within(element, None, MAX_TEXT_BYTES)
}

/// The page's title: its post's heading, else its first `h1`, else
/// `og:title`, else `<title>`.
pub(super) fn page_title(page: &Html) -> Option<String> {
    // The post's own heading before the page's first `h1`: on Blogger's
    // and forums' pages the `h1` is the site's name. One walk of the page
    // finds every candidate; the first of the best kind is taken.
    let kinds = [
        "article h1",
        "main h1",
        // A post's title where it is no `h1`, in its post: a sidebar's
        // list of posts has titles too.
        ".post .post-title, .post-outer .post-title, .hentry .entry-title, article .entry-title",
        ".topic-title",
        "h1",
    ]
    .map(selector);
    let any = selector(
        "h1, .post .post-title, .post-outer .post-title, .hentry .entry-title, \
         article .entry-title, .topic-title",
    );
    let mut best: Option<(usize, String)> = None;
    for element in page.select(&any).take(MAX_ITEMS) {
        let Some(kind) = kinds.iter().position(|k| k.matches(&element)) else {
            continue;
        };
        if best.as_ref().is_some_and(|(b, _)| *b <= kind) {
            continue;
        }
        let text = text_of(element);
        if !text.is_empty() {
            best = Some((kind, text));
        }
        if kind == 0 {
            break;
        }
    }
    let heading = best.map(|(_, text)| text);
    heading
        .or_else(|| {
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
