//! The times a page states in words, for pages whose recipe has no
//! marked times (a post under headings, a card whose times the reading
//! does not find): "Prep time: 15 mins · Cook: 1 hr", "Temps total :
//! 1 heure 40", "Zubereitungszeit 20 Min.", in the languages of the
//! headings' reading.

use std::sync::LazyLock;

use scraper::{ElementRef, Selector};

use super::element::{selector, text_within};
use super::text::duration_words;
use crate::domain::Minutes;

/// Labels of a preparation time, longest first where one starts another.
const PREP: [&str; 30] = [
    "preparation time",
    "prep time",
    "prep",
    "vorbereitungszeit",
    "vorbereitung",
    "arbeitszeit",
    "temps de préparation",
    "préparation",
    "tempo di preparazione",
    "preparazione",
    "tiempo de preparación",
    "preparación",
    "tempo de preparo",
    "tempo de preparação",
    "preparo",
    "voorbereidingstijd",
    "voorbereiding",
    "bereidingstijd",
    "forberedelse",
    "förberedelse",
    "valmistelu",
    "előkészítés",
    "pregătire",
    "подготовка",
    "προετοιμασία",
    "hazırlık süresi",
    "hazırlık",
    "czas przygotowania",
    "příprava",
    "preparation",
];

/// Labels of a cooking (or baking, or resting-in-the-oven) time.
const COOK: [&str; 34] = [
    "cooking time",
    "cook time",
    "baking time",
    "bake time",
    "cook",
    "bake",
    "kochzeit",
    "backzeit",
    "garzeit",
    "temps de cuisson",
    "cuisson",
    "tempo di cottura",
    "cottura",
    "tiempo de cocción",
    "cocción",
    "tempo de cozimento",
    "cozimento",
    "kooktijd",
    "baktijd",
    "oventid",
    "bagetid",
    "tilberedningstid",
    "koketid",
    "kypsennys",
    "paistoaika",
    "sütés",
    "főzés",
    "timp de gătire",
    "gătire",
    "coacere",
    "варка",
    "ψήσιμο",
    "pişirme süresi",
    "pieczenie",
];

/// Labels of the whole time.
const TOTAL: [&str; 24] = [
    "total time",
    "ready in",
    "total",
    "gesamtzeit",
    "gesamt",
    "temps total",
    "durée totale",
    "tempo totale",
    "tiempo total",
    "tempo total",
    "totale tijd",
    "totaal",
    "tid i alt",
    "total tid",
    "totalt",
    "kokonaisaika",
    "yhteensä",
    "összesen",
    "timp total",
    "общее время",
    "συνολικός χρόνος",
    "toplam süre",
    "czas całkowity",
    "celkový čas",
];

/// The most elements looked at, and the longest text of one: a line of
/// times is short, and a page of a million lines costs no more than this.
const MAX_LOOKS: usize = 4_000;
const MAX_LINE: usize = 200;

/// The page's stated preparation, cooking and total times, each the
/// first line that states it.
pub(super) fn stated_times(scope: ElementRef) -> [Option<Minutes>; 3] {
    let steps = selector("ol");
    let mut found = [None; 3];
    for element in scope.select(&LINES).take(MAX_LOOKS) {
        if found.iter().all(Option::is_some) {
            break;
        }
        // Only a short line with a number in it can state a time: most
        // elements are passed over without a string made of them.
        if !is_short_with_a_number(element) {
            continue;
        }
        // A step's "Bake 20 minutes" is no time of the recipe's.
        let in_steps = element
            .ancestors()
            .filter_map(ElementRef::wrap)
            .any(|a| steps.matches(&a));
        if in_steps {
            continue;
        }
        let text = text_within(element, None, MAX_LINE).to_lowercase();
        let read: Vec<_> = [PREP.as_slice(), &COOK, &TOTAL]
            .into_iter()
            .map(|labels| time_after_label(&text, labels))
            .collect();
        // A line of times: a label with its colon ("Cook: 1 hr"), several
        // times on one line ("Prep 10 min · Cook 35 min"), or a label in
        // bold words of its own ("<b>Total</b> 45 min"), not a sentence.
        let several = read.iter().flatten().count() >= 2;
        let labelled = starts_with_a_label(element);
        for (at, time) in read.into_iter().enumerate() {
            if let Some((minutes, colon)) = time {
                if found[at].is_none() && (colon || several || labelled) {
                    found[at] = Some(minutes);
                }
            }
        }
    }
    found
}

/// The elements a time's line may be.
static LINES: LazyLock<Selector> =
    LazyLock::new(|| selector("p, li, dd, dt, td, span, div, strong, b, em, time"));

/// Whether an element's text is a line's length, with a digit in it: the
/// time's line, not the post around it; read without a copy.
fn is_short_with_a_number(element: ElementRef) -> bool {
    if element.descendants().nth(MAX_SMALL).is_some() {
        return false;
    }
    let (mut length, mut digit) = (0, false);
    for text in element.text() {
        length += text.len();
        if length > MAX_LINE {
            return false;
        }
        digit = digit || text.bytes().any(|b| b.is_ascii_digit());
    }
    digit
}

/// The most nodes a line of times has.
const MAX_SMALL: usize = 64;

/// Whether an element opens with bold words of its own (`<b>`,
/// `<strong>`, `<dt>`, `<th>`, `<label>`): a label, as a time's is.
fn starts_with_a_label(element: ElementRef) -> bool {
    element
        .children()
        .find(|node| node.value().as_text().is_none_or(|t| !t.trim().is_empty()))
        .and_then(ElementRef::wrap)
        .is_some_and(|first| matches!(first.value().name(), "b" | "strong" | "dt" | "th" | "label"))
}

/// The time after one of `labels` in `text`, and whether a colon
/// followed the label: the label at a word's
/// start, then at most a colon, then the time in words, up to the next
/// separator ("·", "|", ",", ";") or label.
fn time_after_label(text: &str, labels: &[&str]) -> Option<(Minutes, bool)> {
    // The label's line alone, naming a time ("Gesamtzeit 2 Std. 15 Min."),
    // counts as a colon would; a verb's ("Cook 2 minutes per side") not.
    let alone = |label: &str, at: usize, words: &str| {
        at == 0 && !["cook", "bake", "prep"].contains(&label) && only_time_words(words)
    };
    for label in labels {
        for (at, _) in text.match_indices(label) {
            let starts_word = text[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric());
            if !starts_word {
                continue;
            }
            let rest = text[at + label.len()..].trim_start();
            // "Total: 45 min", "Prep 10 min", "Cuisson : 30 min".
            let colon = rest.starts_with(':');
            let rest = rest.strip_prefix(':').unwrap_or(rest).trim_start();
            if !rest.starts_with(|c: char| c.is_ascii_digit()) {
                continue;
            }
            let end = rest
                .find(['·', '|', ',', ';', '/', '•', '–', '—'])
                .unwrap_or(rest.len());
            // Stop at a label of another time on the same line.
            let words = cut_at_next_label(&rest[..end]);
            if let Some(minutes) = duration_words(words) {
                return Some((
                    minutes,
                    colon || alone(label, at, &rest[end..]) && alone(label, at, words),
                ));
            }
        }
    }
    None
}

/// Whether `words` hold nothing but a time: numbers, units of time and
/// punctuation.
fn only_time_words(words: &str) -> bool {
    words
        .split(|c: char| !c.is_alphabetic())
        .filter(|word| !word.is_empty())
        .all(|word| duration_words(&format!("1 {word}")).is_some())
}

/// `words` up to the first label of any time in it.
fn cut_at_next_label(words: &str) -> &str {
    let end = [PREP.as_slice(), &COOK, &TOTAL]
        .iter()
        .flat_map(|labels| labels.iter())
        .filter_map(|label| words.find(label))
        .filter(|at| *at > 0)
        .min()
        .unwrap_or(words.len());
    &words[..end]
}

#[cfg(test)]
mod tests {
    use super::stated_times;

    fn minutes(page: &str) -> [Option<u32>; 3] {
        let page = scraper::Html::parse_document(page);
        stated_times(page.root_element()).map(|m| m.map(|m| m.get()))
    }

    #[test]
    fn times_are_read_from_their_labels_in_the_sites_languages() {
        assert_eq!(
            minutes("<p><strong>Prep</strong> 10 min · <strong>Cook</strong> 35 min · <strong>Serves</strong> 4</p>"),
            [Some(10), Some(35), None]
        );
        assert_eq!(
            minutes("<ul><li>Préparation : 25 min</li><li>Cuisson : 1 h 10 min</li><li>Temps total : 1 heure 40 minutes</li></ul>"),
            [Some(25), Some(70), Some(100)]
        );
        assert_eq!(
            minutes("<p>Total time: 45 minutes</p><p>Ingredients</p>"),
            [None, None, Some(45)]
        );
        assert_eq!(
            minutes("<p>Gesamtzeit 2 Std. 15 Min.</p>"),
            [None, None, Some(135)]
        );
    }

    #[test]
    fn a_steps_time_is_no_recipes_time_and_hours_take_their_minutes() {
        assert_eq!(
            minutes("<ol><li>Cook 2 minutes per side.</li><li>Total rest: 5 min</li></ol><p>Bake 20 minutes, until golden.</p>"),
            [None, None, None]
        );
        assert_eq!(
            minutes("<ul><li>Préparation : 30 min</li><li>Cuisson : 2h30</li></ul>"),
            [Some(30), Some(150), None]
        );
    }

    #[test]
    fn a_label_without_a_time_or_inside_a_word_is_no_time() {
        assert_eq!(
            minutes(
                "<h2>Preparation</h2><p>Precook the rice for 10 minutes.</p><p>Totally 5 stars</p>"
            ),
            [None, None, None]
        );
    }
}
