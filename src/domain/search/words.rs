//! Words as search sees them: split, lower-cased, accents folded, and
//! stemmed in the recipe's language (English where it says none, or names
//! one without a stemmer), the same way for a recipe's text and a query.

use std::collections::BTreeSet;

use tantivy::tokenizer::{
    AsciiFoldingFilter, Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer,
    TextAnalyzer, Token, TokenStream as _,
};

/// Longer words are not indexed (a pasted address, a run of letters).
const LONGEST_WORD: usize = 40;

/// The stemmers there are, by the names and codes a cook may write in a
/// recipe's language field ("Italian", "it", "italiano").
const LANGUAGES: &[(Language, &[&str])] = &[
    (Language::English, &["english", "en"]),
    (Language::French, &["french", "fr", "francais"]),
    (Language::German, &["german", "de", "deutsch"]),
    (Language::Italian, &["italian", "it", "italiano"]),
    (
        Language::Spanish,
        &["spanish", "es", "espanol", "castellano"],
    ),
    (Language::Portuguese, &["portuguese", "pt", "portugues"]),
    (Language::Dutch, &["dutch", "nl", "nederlands"]),
    (Language::Danish, &["danish", "da", "dansk"]),
    (Language::Swedish, &["swedish", "sv", "svenska"]),
    (
        Language::Norwegian,
        &["norwegian", "no", "nb", "nn", "norsk"],
    ),
    (Language::Finnish, &["finnish", "fi", "suomi"]),
    (Language::Hungarian, &["hungarian", "hu", "magyar"]),
    (Language::Romanian, &["romanian", "ro", "romana"]),
    (Language::Russian, &["russian", "ru"]),
    (Language::Greek, &["greek", "el"]),
    (Language::Turkish, &["turkish", "tr", "turkce"]),
    (Language::Arabic, &["arabic", "ar"]),
    (Language::Tamil, &["tamil", "ta"]),
];

/// The stemmer for a recipe's language field: English unless it names
/// another that has one.
pub fn language_of(field: Option<&str>) -> Language {
    let Some(name) = field else {
        return Language::English;
    };
    let name = deunicode::deunicode(name.trim()).to_lowercase();
    // "en-GB", "pt_BR": the language before the region.
    let name = name.split(['-', '_', ' ']).next().unwrap_or("");
    LANGUAGES
        .iter()
        .find(|(_, names)| names.contains(&name))
        .map_or(Language::English, |(language, _)| *language)
}

/// A stable name of `language`, for the index's list of languages.
pub fn language_code(language: Language) -> &'static str {
    LANGUAGES
        .iter()
        .find(|(l, _)| *l == language)
        .map_or("en", |(_, names)| names[1])
}

/// The language a code of `language_code` names.
pub fn language_from_code(code: &str) -> Option<Language> {
    LANGUAGES
        .iter()
        .find(|(_, names)| names[1] == code)
        .map(|(language, _)| *language)
}

/// Words as written, lower-cased: what a query's words are stemmed from.
fn lowering() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(LONGEST_WORD))
        .filter(LowerCaser)
        .build()
}

fn folding() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(LONGEST_WORD))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .build()
}

/// Stemmed before the accents are folded: a stemmer knows its language's
/// accented endings ("épicées" and "épicé" are both "epic" so, where
/// folded first they were "epice" and "epic").
fn stemming(language: Language) -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(LONGEST_WORD))
        .filter(LowerCaser)
        .filter(Stemmer::new(language))
        .filter(AsciiFoldingFilter)
        .build()
}

/// The tokens of `text`, stemmed in `language`, with their places in it.
pub fn stemmed_tokens(text: &str, language: Language) -> Vec<Token> {
    tokens(&mut stemming(language), text)
}

/// The tokens of `text`, folded but not stemmed: what a prefix is
/// matched against, since a stem need not begin as the word does
/// ("baking" is "bake").
pub fn folded_tokens(text: &str) -> Vec<Token> {
    tokens(&mut folding(), text)
}

fn tokens(analyzer: &mut TextAnalyzer, text: &str) -> Vec<Token> {
    let mut stream = analyzer.token_stream(text);
    let mut out = Vec::new();
    while stream.advance() {
        out.push(stream.token().clone());
    }
    out
}

/// `word` (one word as written, accents and all) stemmed in `language`,
/// then folded.
pub fn stem(word: &str, language: Language) -> String {
    stemmed_tokens(word, language)
        .into_iter()
        .next()
        .map_or_else(|| word.to_owned(), |t| t.text)
}

/// Most words of a query searched for; the rest are said to be left out.
pub const MAX_WORDS: usize = 8;

/// A last word this long or longer is also a prefix (results as a person
/// types); a shorter one would stand for too many words.
pub const MIN_PREFIX: usize = 3;

/// Words this long or longer also match words one letter off (a typo);
/// `TWO_TYPOS` letters or longer, two letters off.
pub const MIN_TYPO: usize = 5;
pub const TWO_TYPOS: usize = 9;

/// A query's words, as searched for.
#[derive(Debug, Clone, Default)]
pub struct QueryWords {
    /// Folded words, in the query's order, without repeats.
    pub words: Vec<String>,
    /// Each of `words` as the query spelled it (lower-cased, accents
    /// kept), for the stemmers.
    spelled: Vec<String>,
    /// Words past `MAX_WORDS`, left out.
    pub dropped: usize,
    /// Whether the last word is also a prefix.
    pub prefix: bool,
}

impl QueryWords {
    pub fn parse(text: &str) -> QueryWords {
        let (mut words, mut spelled): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
        // Both from the same splitting, so they line up one to one.
        for (folded, token) in folded_tokens(text)
            .into_iter()
            .zip(tokens(&mut lowering(), text))
        {
            if !words.contains(&folded.text) {
                words.push(folded.text);
                spelled.push(token.text);
            }
        }
        let dropped = words.len().saturating_sub(MAX_WORDS);
        words.truncate(MAX_WORDS);
        spelled.truncate(MAX_WORDS);
        // A query that ends in a space is whole words: the person stopped.
        let typing = !text.ends_with(char::is_whitespace);
        let prefix = typing
            && words
                .last()
                .is_some_and(|w| w.chars().count() >= MIN_PREFIX);
        QueryWords {
            words,
            spelled,
            dropped,
            prefix,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// How many letters off `word` may be and still match it: none for a
    /// word with digits (a year, a code), whose every character counts.
    pub fn typos_allowed(word: &str) -> u8 {
        if word.chars().any(|c| c.is_numeric()) {
            return 0;
        }
        match word.chars().count() {
            n if n >= TWO_TYPOS => 2,
            n if n >= MIN_TYPO => 1,
            _ => 0,
        }
    }

    /// The stems of word `i` in each of `languages`, without repeats.
    pub fn stems(&self, i: usize, languages: &[Language]) -> BTreeSet<String> {
        languages
            .iter()
            .map(|&language| stem(&self.spelled[i], language))
            .collect()
    }

    /// What marks a word of a text as matched, for snippets.
    pub fn matcher(&self, languages: &[Language]) -> Matcher {
        Matcher {
            words: (0..self.words.len())
                .map(|i| WordMatch {
                    stems: self.stems(i, languages),
                    typos: QueryWords::typos_allowed(&self.words[i]),
                    prefix: (self.prefix && i + 1 == self.words.len())
                        .then(|| self.words[i].clone()),
                })
                .collect(),
        }
    }
}

/// One query word as a text's word must be to match it.
#[derive(Debug, Clone)]
struct WordMatch {
    stems: BTreeSet<String>,
    typos: u8,
    prefix: Option<String>,
}

/// Tells which words of a text a query matched, as the index does: the
/// same stem, a stem a typo or two away, or (the last word, as typed) a
/// word it begins. Hand-written because tantivy's snippets mark only exact
/// terms, never those a fuzzy or prefix query matched.
#[derive(Debug, Clone, Default)]
pub struct Matcher {
    words: Vec<WordMatch>,
}

impl Matcher {
    /// The byte ranges of `text` that match, in order, stemmed in
    /// `language`.
    pub fn marks(&self, text: &str, language: Language) -> Vec<std::ops::Range<usize>> {
        self.marks_within(text, language, usize::MAX)
    }

    /// `marks`, up to `length` bytes past the first: all a snippet can
    /// show. The text is split, folded and stemmed only so far (the whole
    /// of each hit's summary and steps, stemmed, was a third of a search
    /// page's time: perf, docs/journal/33-close-to-the-limit.md).
    fn marks_within(
        &self,
        text: &str,
        language: Language,
        length: usize,
    ) -> Vec<std::ops::Range<usize>> {
        let (mut folding, mut stemming) = (folding(), stemming(language));
        let (mut folded, mut stemmed) = (folding.token_stream(text), stemming.token_stream(text));
        let mut marks = Vec::new();
        let mut until = usize::MAX;
        // Both come from the same splitting, so they line up one to one.
        while folded.advance() && stemmed.advance() {
            let (word, stem) = (folded.token(), stemmed.token());
            if word.offset_from > until {
                break;
            }
            if self.matches(&word.text, &stem.text) {
                if marks.is_empty() {
                    until = word.offset_from.saturating_add(length);
                }
                marks.push(word.offset_from..word.offset_to);
            }
        }
        marks
    }

    /// A piece of `text` about `length` bytes long around its first
    /// matched words, cut at word boundaries, as runs of text each marked
    /// or not; `None` when nothing in it matches.
    pub fn snippet(&self, text: &str, language: Language, length: usize) -> Option<Snippet> {
        let marks = self.marks_within(text, language, length);
        let first = marks.first()?;
        // A little of what leads up to the first match, from a word's start.
        let lead = length / 5;
        let mut start = first.start.saturating_sub(lead);
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        if start > 0 {
            start = text[start..first.start]
                .find(char::is_whitespace)
                .map_or(first.start, |at| start + at + 1);
        }
        let mut end = (start + length).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        if end < text.len() {
            // Back to the end of a word, unless that cuts the first match.
            if let Some(at) = text[start..end].rfind(char::is_whitespace) {
                end = (start + at).max(first.end);
            }
        }
        let mut runs = Vec::new();
        let mut at = start;
        for mark in marks.iter().filter(|m| m.start >= start && m.end <= end) {
            if mark.start > at {
                runs.push((text[at..mark.start].to_owned(), false));
            }
            runs.push((text[mark.clone()].to_owned(), true));
            at = mark.end;
        }
        if at < end {
            runs.push((text[at..end].to_owned(), false));
        }
        let marked = marks
            .iter()
            .filter(|m| m.start >= start && m.end <= end)
            .count();
        Some(Snippet {
            runs,
            before: start > 0,
            after: end < text.len(),
            marked,
        })
    }

    fn matches(&self, word: &str, stem: &str) -> bool {
        self.words.iter().any(|wanted| {
            wanted.stems.contains(stem)
                || (wanted.typos > 0
                    && wanted
                        .stems
                        .iter()
                        .any(|s| within_edits(s, stem, wanted.typos)))
                || wanted
                    .prefix
                    .as_deref()
                    .is_some_and(|p| word.starts_with(p))
        })
    }
}

/// A piece of a text with its matched words marked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snippet {
    /// The text, in runs, each marked (a matched word) or not.
    pub runs: Vec<(String, bool)>,
    /// Whether the text goes on before it, and after.
    pub before: bool,
    pub after: bool,
    /// How many words it marks.
    pub marked: usize,
}

/// Whether `a` and `b` are at most `most` edits apart (insertions,
/// deletions, substitutions and swaps of two letters side by side), as
/// tantivy's fuzzy query counts them with transpositions costing one.
fn within_edits(a: &str, b: &str, most: u8) -> bool {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let most = usize::from(most);
    if a.len().abs_diff(b.len()) > most {
        return false;
    }
    // Optimal string alignment distance, rows of the full table.
    let mut before = vec![0usize; b.len() + 1];
    let mut last: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut row = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (last[j] + 1).min(row[j - 1] + 1).min(last[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        before = std::mem::replace(&mut last, row);
    }
    last[b.len()] <= most
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_folded_and_stemmed_alike_in_text_and_query() {
        assert_eq!(stem("eggs", Language::English), "egg");
        assert_eq!(stem("egg", Language::English), "egg");
        let folded: Vec<String> = folded_tokens("Crème BRÛLÉE, Smørrebrød")
            .into_iter()
            .map(|t| t.text)
            .collect();
        assert_eq!(folded, ["creme", "brulee", "smorrebrod"]);
    }

    #[test]
    fn a_word_is_stemmed_in_its_language_before_its_accents_are_folded() {
        let query = QueryWords::parse("épicées");
        assert_eq!(query.words, ["epicees"], "folded, for prefixes and typos");
        let stems = query.stems(0, &[Language::French]);
        let text: Vec<String> =
            stemmed_tokens("Des pommes épicées, un poulet épicé", Language::French)
                .into_iter()
                .map(|t| t.text)
                .collect();
        assert_eq!(text[2], text[5], "{text:?}");
        assert!(stems.contains(&text[2]), "{stems:?} against {text:?}");
        assert_eq!(
            stem("préparées", Language::French),
            stem("préparé", Language::French)
        );
        assert_eq!(stem("Kräutern", Language::German), "kraut");
    }

    #[test]
    fn a_language_is_found_by_name_or_code_and_is_english_otherwise() {
        assert_eq!(language_of(Some("Italian")), Language::Italian);
        assert_eq!(language_of(Some("pt-BR")), Language::Portuguese);
        assert_eq!(language_of(Some("Español")), Language::Spanish);
        assert_eq!(language_of(Some("Klingon")), Language::English);
        assert_eq!(language_of(None), Language::English);
        for (language, _) in LANGUAGES {
            assert_eq!(
                language_from_code(language_code(*language)),
                Some(*language)
            );
        }
    }

    #[test]
    fn a_query_keeps_its_words_once_and_its_last_as_a_prefix_while_typing() {
        let q = QueryWords::parse("Sourdough bread sourdough cru");
        assert_eq!(q.words, ["sourdough", "bread", "cru"]);
        assert!(q.prefix);
        assert!(!QueryWords::parse("bread cru ").prefix, "a finished word");
        assert!(!QueryWords::parse("bread cr").prefix, "too short");
        let long = QueryWords::parse("a b c d e f g h i j");
        assert_eq!(long.words.len(), MAX_WORDS);
        assert_eq!(long.dropped, 2);
    }

    #[test]
    fn edits_are_counted_as_the_index_counts_them() {
        assert!(within_edits("sourdough", "sourdogh", 1));
        assert!(within_edits("flour", "fluor", 1), "a swap is one");
        assert!(!within_edits("flour", "floor", 0));
        assert!(within_edits("flour", "floor", 1));
        assert!(!within_edits("butter", "batters", 1));
        assert!(within_edits("butter", "batters", 2));
    }

    #[test]
    fn marks_cover_stems_typos_and_the_prefix() {
        let q = QueryWords::parse("egg sourdogh crea");
        let m = q.matcher(&[Language::English]);
        let text = "Eggs, sourdough starter and cream; an egglike glaze.";
        let marked: Vec<&str> = m
            .marks(text, Language::English)
            .into_iter()
            .map(|r| &text[r])
            .collect();
        assert_eq!(marked, ["Eggs", "sourdough", "cream"]);
    }

    #[test]
    fn a_snippet_starts_near_the_first_match_at_a_word_and_marks_it() {
        let q = QueryWords::parse("cardamom ");
        let m = q.matcher(&[Language::English]);
        let text = "Warm the milk gently in a wide pan with the sugar, then add a good \
                    pinch of crushed cardamom pods and leave it to steep for ten minutes.";
        let snippet = m.snippet(text, Language::English, 60).unwrap();
        let whole: String = snippet.runs.iter().map(|(t, _)| t.as_str()).collect();
        assert!(snippet.before && snippet.after, "{whole:?}");
        assert!(text.contains(&whole));
        assert!(!whole.starts_with(' ') && whole.len() <= 60, "{whole:?}");
        assert_eq!(
            snippet
                .runs
                .iter()
                .filter(|(_, marked)| *marked)
                .collect::<Vec<_>>(),
            [&("cardamom".to_owned(), true)]
        );
        assert!(m.snippet("No spice here.", Language::English, 60).is_none());
        // Marks past the snippet's reach are not looked for, and the
        // snippet is the one the whole text's marks would make.
        let long = format!("{} cardamom at the end", "Word after word. ".repeat(200));
        let all = m.marks(&long, Language::English);
        let within = m.marks_within(&long, Language::English, 60);
        assert_eq!(within, all, "one mark, far in");
        let early = format!(
            "Cardamom first. {}cardamom again",
            "Word after word. ".repeat(200)
        );
        assert_eq!(m.marks_within(&early, Language::English, 60).len(), 1);
        assert_eq!(m.marks(&early, Language::English).len(), 2);
    }
}
