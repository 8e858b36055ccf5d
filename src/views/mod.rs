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
//! - `catalog`, `recipe`, `history`, `diff`, `forks`, `pages`: the pages.
//! - `feeds`: Atom, the sitemap and robots.txt.

pub mod catalog;
pub mod diff;
pub mod feeds;
pub mod forks;
pub mod history;
pub mod jsonld;
pub mod layout;
pub mod markdown;
pub mod pages;
pub mod recipe;

use crate::domain::Step;
use crate::store::instant::format_rfc3339;

/// A link to a recipe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecipeLink {
    pub slug: String,
    pub title: String,
}

/// One ancestor in a lineage breadcrumb: the recipe, and the version of it
/// that was forked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crumb {
    pub slug: String,
    pub title: String,
    pub version: i64,
}

/// The path of a recipe's page.
pub fn recipe_path(slug: &str) -> String {
    format!("/recipes/{slug}")
}

/// The path of one version of a recipe.
pub fn version_path(slug: &str, version: impl std::fmt::Display) -> String {
    format!("/recipes/{slug}/versions/{version}")
}

/// An instant as `datetime` wants it (RFC 3339).
pub fn machine_time(millis: i64) -> String {
    format_rfc3339(millis)
}

/// An instant for people: `2026-03-14 09:30 UTC`.
pub fn human_time(millis: i64) -> String {
    let text = format_rfc3339(millis);
    match (text.get(..10), text.get(11..16)) {
        (Some(day), Some(time)) => format!("{day} {time} UTC"),
        _ => text,
    }
}

/// An instant's day for people: `2026-03-14`.
pub fn human_date(millis: i64) -> String {
    let text = format_rfc3339(millis);
    text.get(..10).map_or(text.clone(), str::to_owned)
}

/// `1 version`, `3 versions`.
pub fn count(n: impl Into<i64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The path of a tag's page, the tag percent-encoded (tags are free text).
pub fn tag_path(tag: &str) -> String {
    let mut out = String::from("/tags/");
    for b in tag.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
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
