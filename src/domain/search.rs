//! Search terms: the words a recipe can be found by.
//!
//! The inverted index is the `:recipe/terms` attribute, indexed in AVET and
//! written in the same transaction as the content it comes from, so search
//! never lags behind an edit.

use std::collections::BTreeSet;

use super::content::Content;
use super::ingredient::IngredientLine;

/// Words of a query that are searched for; the rest are dropped (and the
/// page says so).
pub const MAX_WORDS: usize = 8;
/// The shortest last word of a query that is taken as a prefix.
pub const MIN_PREFIX: usize = 3;
/// Terms a prefix stands for at most.
pub const MAX_EXPANSIONS: usize = 32;
/// Candidates a page of results looks at, at most.
pub const MAX_CANDIDATES: usize = 2_000;

/// Shortest word worth indexing.
const MIN_TERM: usize = 2;
/// Words too common in recipes to tell them apart.
const STOP_WORDS: &[&str] = &[
    "and", "the", "with", "for", "of", "to", "in", "or", "a", "an", "on", "at", "it", "is",
];

/// The lower-case words of `text`, split at anything not a letter or digit.
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= MIN_TERM)
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
}

/// The terms of a version: from its title, summary, ingredient items and tags.
pub fn terms(content: &Content) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = words(&content.title).collect();
    if let Some(summary) = &content.summary {
        out.extend(words(summary));
    }
    for line in &content.ingredients {
        out.extend(words(IngredientLine::parse(line).item()));
    }
    for tag in &content.tags {
        out.extend(words(tag));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_come_from_title_summary_ingredient_items_and_tags() {
        let content = Content {
            title: "Green Shakshuka".into(),
            summary: Some("Eggs *poached* in greens.".into()),
            ingredients: vec!["200 g spinach, washed".into(), "4 eggs".into()],
            tags: vec!["one-pan".into()],
            ..Content::default()
        };
        let terms = terms(&content);
        for expected in [
            "green",
            "shakshuka",
            "eggs",
            "poached",
            "greens",
            "spinach",
            "one",
            "pan",
        ] {
            assert!(
                terms.contains(expected),
                "{expected} missing from {terms:?}"
            );
        }
        assert!(!terms.contains("in") && !terms.contains("washed") && !terms.contains("200"));
    }
}
