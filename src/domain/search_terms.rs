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
    pieces(text).filter_map(|(_, word)| term(word))
}

/// Each run of letters and digits of `text` (and the empty ones between
/// two separators), with the byte where it starts.
fn pieces(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(move |piece| (piece.as_ptr() as usize - text.as_ptr() as usize, piece))
}

/// The term a word is indexed as, if it is worth indexing.
fn term(word: &str) -> Option<String> {
    Some(word)
        .filter(|w| w.chars().count() >= MIN_TERM)
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
}

/// The longest start of `text` whose words are at most `most` different
/// terms: where an import cuts a summary to fit `MAX_SUMMARY_TERMS`.
pub fn within_terms(text: &str, most: usize) -> &str {
    let mut seen = BTreeSet::new();
    for (start, word) in pieces(text) {
        if let Some(term) = term(word) {
            if seen.len() == most && !seen.contains(&term) {
                return &text[..start];
            }
            seen.insert(term);
        }
    }
    text
}

/// The terms of a version: from its title, summary, ingredient items and tags.
pub fn terms(content: &Content) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = words(&content.title).collect();
    out.extend(summary_terms(content));
    out.extend(ingredient_terms(content));
    for tag in &content.tags {
        out.extend(words(tag));
    }
    out
}

/// The terms of a version's summary (`MAX_SUMMARY_TERMS` at most).
pub fn summary_terms(content: &Content) -> BTreeSet<String> {
    content
        .summary
        .as_deref()
        .map(words)
        .into_iter()
        .flatten()
        .collect()
}

/// The terms of its ingredient lines' items (`MAX_INGREDIENT_TERMS` at most).
pub fn ingredient_terms(content: &Content) -> BTreeSet<String> {
    content
        .ingredients
        .iter()
        .flat_map(|line| words(IngredientLine::parse(line).item()).collect::<Vec<_>>())
        .collect()
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

    #[test]
    fn a_text_is_cut_before_the_first_term_past_the_limit() {
        let text = "Eggs, eggs and greens; then more greens.";
        assert_eq!(within_terms(text, 2), "Eggs, eggs and greens; ");
        assert_eq!(within_terms(text, 3), "Eggs, eggs and greens; then ");
        assert_eq!(within_terms(text, 4), text);
        assert_eq!(within_terms(text, 0), "");
        assert_eq!(within_terms("", 1), "");
    }
}
