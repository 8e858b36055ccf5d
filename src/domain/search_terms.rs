//! A recipe's words, as its limits count them: a summary, and the items of
//! its ingredient lines together, may name only so many different words
//! (`content::MAX_SUMMARY_TERMS`, `MAX_INGREDIENT_TERMS`), which bounds
//! what search indexes of one recipe and, for a recipe written when the
//! store kept these words as `:recipe/terms` (its inverted index before
//! `domain::search`), what its first edit since retracts.

use std::collections::BTreeSet;

use super::content::Content;
use super::ingredient::IngredientLine;

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

/// The terms of a version's summary (`MAX_SUMMARY_TERMS` at most).
pub fn summary_terms(content: &Content) -> BTreeSet<String> {
    text_terms(content.summary())
}

/// The terms of its ingredient lines' items (`MAX_INGREDIENT_TERMS` at most).
pub fn ingredient_terms(content: &Content) -> BTreeSet<String> {
    item_terms(content.ingredients())
}

/// `summary_terms` of a summary: what the parse counts, before there is
/// a `Content`.
pub(crate) fn text_terms(summary: Option<&str>) -> BTreeSet<String> {
    summary.map(words).into_iter().flatten().collect()
}

/// `ingredient_terms` of ingredient lines, as `text_terms`.
pub(crate) fn item_terms(lines: &[String]) -> BTreeSet<String> {
    lines
        .iter()
        .flat_map(|line| words(IngredientLine::parse(line).item()).collect::<Vec<_>>())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::content::ContentDraft;

    #[test]
    fn a_summarys_and_ingredient_items_words_are_counted_once_each() {
        let content = ContentDraft {
            title: "Eggs".into(),
            summary: Some("Eggs *poached* in greens, eggs again.".into()),
            ingredients: vec!["200 g spinach, washed".into(), "4 eggs".into()],
            ..ContentDraft::default()
        }
        .normalized()
        .unwrap();
        let summary: Vec<String> = summary_terms(&content).into_iter().collect();
        assert_eq!(summary, ["again", "eggs", "greens", "poached"]);
        let items: Vec<String> = ingredient_terms(&content).into_iter().collect();
        assert_eq!(items, ["eggs", "spinach"], "items, not notes or amounts");
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
