//! The site's HTML (and the few other formats it serves), as pure functions.
//!
//! A view takes a view model, plain data the handler built from one pinned
//! database value, and returns `Markup` or bytes. Views never touch the
//! store, read a clock or see a request: the same model always renders the
//! same bytes, which is what lets the pages benchmark render alone.
//!
//! - `layout`: the page around every view, its `<head>` and navigation.
//! - `markdown`: safe Markdown through maud's `Render`, and plain text.
//! - `jsonld`: schema.org `Recipe` and `ItemList`, escaped for `<script>`.
//! - `json`: the shapes of the `.json` API.
//! - `catalog`, `recipe`, `history`, `diff`, `forks`, `pages`: the pages.
//! - `feeds`: Atom, the sitemap and robots.txt.

pub mod account;
pub mod activitypub;
pub mod catalog;
pub mod cook;
pub mod diff;
pub mod family_drawing;
pub mod feeds;
pub mod following;
pub mod forks;
pub mod form_fields;
pub mod history;
pub mod import_form;
pub mod json;
pub mod layout;
pub mod markdown;
pub mod merges;
pub mod pages;
pub mod recipe;
pub mod recipe_form;
pub mod search;
pub mod structured_data;

use maud::Render;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

use crate::domain::{Instant, Step};

/// The path of a recipe's page; for a recipe kept from another site (the
/// parent of a fork across sites), its address there.
pub fn recipe_path(slug: &str) -> String {
    if crate::domain::slug::is_elsewhere(slug) {
        return slug.to_owned();
    }
    format!("/recipes/{slug}")
}

/// For a recipe kept from another site (named by its address there), the
/// site: what a link to it says it is on.
pub fn site_elsewhere(slug: &str) -> Option<&str> {
    if !crate::domain::slug::is_elsewhere(slug) {
        return None;
    }
    let rest = slug.split_once("://")?.1;
    Some(rest.split('/').next().unwrap_or(rest))
}

/// `path` (a `recipe_path` or `version_path`) as an absolute address on
/// the site at `base_url`; an address on another site as it is.
pub fn absolute(base_url: &str, path: String) -> String {
    if crate::domain::slug::is_elsewhere(&path) {
        return path;
    }
    format!("{base_url}{path}")
}

/// `text` percent-encoded to sit in a URL's fragment (an activity's id
/// made from another's).
pub fn url_fragment(text: &str) -> String {
    utf8_percent_encode(text, NON_ALPHANUMERIC).to_string()
}

/// The path of one version of a recipe; for a recipe kept from another
/// site, whose versions are numbered here as there, its address there.
pub fn version_path(slug: &str, version: impl std::fmt::Display) -> String {
    // One string, not `recipe_path`'s and another: a breadcrumb makes one
    // for each ancestor (11 more allocations a page, pages bench).
    if crate::domain::slug::is_elsewhere(slug) {
        return format!("{slug}/versions/{version}");
    }
    format!("/recipes/{slug}/versions/{version}")
}

/// An instant as `datetime` wants it (RFC 3339).
pub fn machine_time(at: Instant) -> String {
    // Written straight into one string: `to_string` through `Display` would
    // format into one string and copy it into another.
    let mut text = String::with_capacity(24);
    at.write_rfc3339(&mut text);
    text
}

/// An instant for people: `2026-03-14 09:30 UTC`.
pub fn human_time(at: Instant) -> String {
    let text = machine_time(at);
    match (text.get(..10), text.get(11..16)) {
        (Some(day), Some(time)) => format!("{day} {time} UTC"),
        _ => text,
    }
}

/// `1 version`, `3 versions`.
pub fn count<'a>(n: impl Into<i64>, one: &'a str, many: &'a str) -> Count<'a> {
    Count {
        n: n.into(),
        one,
        many,
    }
}

/// A number and the word it counts, written straight into the page.
pub struct Count<'a> {
    n: i64,
    one: &'a str,
    many: &'a str,
}

impl Render for Count<'_> {
    fn render_to(&self, buffer: &mut String) {
        self.n.render_to(buffer);
        buffer.push(' ');
        buffer.push_str(if self.n == 1 { self.one } else { self.many });
    }
}

// Pages write an instant or two on every line of a list, so these write
// into the page's buffer rather than allocate a string each: the catalog's
// render spent a fifth of its time formatting instants into strings.

/// An instant as `datetime` wants it (RFC 3339), rendered in place.
pub struct Rfc3339(pub Instant);

impl Render for Rfc3339 {
    fn render_to(&self, buffer: &mut String) {
        self.0.write_rfc3339(buffer);
    }
}

/// An instant's day for people (`2026-03-14`), rendered in place.
pub struct Day(pub Instant);

impl Render for Day {
    fn render_to(&self, buffer: &mut String) {
        let start = buffer.len();
        self.0.write_rfc3339(buffer);
        // Instants outside the years 0..=9999 are written as a number of
        // milliseconds; keep them whole.
        if buffer.as_bytes().get(start + 10) == Some(&b'T') {
            buffer.truncate(start + 10);
        }
    }
}

/// The path of a tag's page, the tag percent-encoded (tags are free text).
pub fn tag_path(tag: &str) -> String {
    TagPath(tag).render().into_string()
}

/// A tag page's path, rendered in place.
pub struct TagPath<'a>(pub &'a str);

/// What a tag keeps as it is in a path segment: RFC 3986's unreserved
/// characters. Everything else is percent-encoded, `/`, `?`, `#` and `%`
/// above all, so the router's one segment decodes back to the tag.
const TAG_SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

impl Render for TagPath<'_> {
    fn render_to(&self, buffer: &mut String) {
        buffer.push_str("/tags/");
        // Runs of characters kept as they are come out whole, not a byte at
        // a time.
        buffer.extend(utf8_percent_encode(self.0, TAG_SEGMENT));
    }
}

/// A recipe page's path, rendered in place (escaped, though a parsed slug
/// never needs it).
pub struct RecipePath<'a>(pub &'a str);

impl Render for RecipePath<'_> {
    fn render_to(&self, buffer: &mut String) {
        // A recipe kept from another site: its address there.
        if !crate::domain::slug::is_elsewhere(self.0) {
            buffer.push_str("/recipes/");
        }
        self.0.render_to(buffer);
    }
}

/// Text escaped for HTML a run at a time: maud escapes byte by byte, which
/// was a fifth of the catalog's render; this copies the runs between the
/// four special bytes whole. Same output as maud's escaping.
pub struct Text<'a>(pub &'a str);

impl Render for Text<'_> {
    fn render_to(&self, buffer: &mut String) {
        let text = self.0;
        // Most texts have nothing to escape. A fold without an early exit
        // compiles to a vectorised scan that says so at a fraction of the
        // cost of the byte loop below.
        let special = |b: u8| matches!(b, b'&' | b'<' | b'>' | b'"');
        if !text.bytes().fold(false, |any, b| any | special(b)) {
            buffer.push_str(text);
            return;
        }
        buffer.reserve(text.len());
        let mut start = 0;
        for (i, b) in text.bytes().enumerate() {
            let escaped = match b {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                _ => continue,
            };
            buffer.push_str(&text[start..i]);
            buffer.push_str(escaped);
            start = i + 1;
        }
        buffer.push_str(&text[start..]);
    }
}

/// At most `chars` characters of `text`, cut at a word, with an ellipsis
/// when cut: a catalog card shows the start of a summary, not all of it.
/// Rendered escaped, in place.
pub struct Excerpt<'a>(pub &'a str, pub usize);

impl Render for Excerpt<'_> {
    fn render_to(&self, buffer: &mut String) {
        let Excerpt(text, chars) = *self;
        // A text no longer in bytes than the limit is within it in chars,
        // and in ASCII a character is a byte.
        let cut = if text.len() <= chars {
            None
        } else if text.as_bytes()[..chars].is_ascii() {
            Some(chars)
        } else {
            text.char_indices().nth(chars).map(|(i, _)| i)
        };
        match cut {
            None => Text(text).render_to(buffer),
            Some(cut) => {
                let head = &text[..cut];
                let head = head.rfind(' ').map_or(head, |space| &head[..space]);
                Text(head.trim_end_matches([',', ';', ':', '.'])).render_to(buffer);
                buffer.push('…');
            }
        }
    }
}

/// A recipe's steps in their sections: each run of steps with its section's
/// name (none before the first named one) and the number of its first step.
/// A section runs until the next named one, so an unnamed step continues it.
pub fn step_runs(steps: &[Step]) -> Vec<(Option<&str>, &[Step], usize)> {
    let mut runs: Vec<(Option<&str>, &[Step], usize)> = Vec::new();
    let mut start = 0;
    let mut section: Option<&str> = None;
    for (i, step) in steps.iter().enumerate() {
        let named = step.section.as_deref();
        if named.is_some() && named != section {
            if i > start {
                runs.push((section, &steps[start..i], start + 1));
            }
            start = i;
            section = named;
        }
    }
    if start < steps.len() {
        runs.push((section, &steps[start..], start + 1));
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rendered_helpers_write_what_their_string_forms_say() {
        let at = Instant::from_millis(1_773_480_600_123); // 2026-03-14T09:30:00.123Z
        assert_eq!(Rfc3339(at).render().into_string(), machine_time(at));
        assert_eq!(Day(at).render().into_string(), "2026-03-14");
        assert_eq!(count(1, "fork", "forks").render().into_string(), "1 fork");
        assert_eq!(count(3, "fork", "forks").render().into_string(), "3 forks");
        assert_eq!(tag_path("milk bread/é"), "/tags/milk%20bread%2F%C3%A9");
        assert_eq!(RecipePath("a-b").render().into_string(), "/recipes/a-b");
    }

    #[test]
    fn text_escapes_as_maud_does() {
        for text in ["", "plain", "<a href=\"x\">&amp;</a>", "é<é>&\"'"] {
            let ours = Text(text).render().into_string();
            assert_eq!(ours, maud::html! { (text) }.into_string(), "{text}");
        }
    }

    #[test]
    fn an_excerpt_cuts_at_a_word() {
        let excerpt = |text, n| Excerpt(text, n).render().into_string();
        assert_eq!(excerpt("short", 10), "short");
        assert_eq!(excerpt("one two three four", 10), "one two…");
        assert_eq!(excerpt("one, two three", 8), "one…");
        assert_eq!(excerpt("é<é> é", 3), "é&lt;é…");
        assert_eq!(excerpt("ééé", 3), "ééé", "six bytes, three characters");
    }

    #[test]
    fn a_section_runs_until_the_next_named_one() {
        let step = |section: Option<&str>| Step {
            section: section.map(str::to_owned),
            text: "x".to_owned(),
        };
        let steps = [
            step(None),
            step(Some("Sauce")),
            step(None),
            step(Some("Sauce")),
            step(Some("Pasta")),
        ];
        let runs: Vec<(Option<&str>, usize, usize)> = step_runs(&steps)
            .into_iter()
            .map(|(s, run, first)| (s, run.len(), first))
            .collect();
        assert_eq!(
            runs,
            [(None, 1, 1), (Some("Sauce"), 3, 2), (Some("Pasta"), 1, 5)]
        );
    }
}
