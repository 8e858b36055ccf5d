//! Tidying what other sites write: HTML in text fields, entities, ISO 8601
//! durations, relative addresses, and lengths this site keeps.

use crate::domain::content::{
    tag_has_address, MAX_INGREDIENTS, MAX_INGREDIENT_TERMS, MAX_LINE, MAX_SERVINGS, MAX_STEPS,
    MAX_SUMMARY_TERMS, MAX_TAG, MAX_TAGS, MAX_TEXT, MAX_TITLE,
};
use crate::domain::ingredient::IngredientLine;
use crate::domain::{search_terms, ContentDraft, Minutes, Slot, FIELDS};

/// `text` without tags and with entities decoded, its whitespace collapsed:
/// sites put `<p>` and `&amp;` in JSON-LD strings.
pub(super) fn plain(text: &str) -> String {
    let decoded = if text.contains(['<', '&']) {
        let fragment = scraper::Html::parse_fragment(text);
        fragment.root_element().text().collect::<Vec<_>>().join(" ")
    } else {
        text.to_owned()
    };
    decoded.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One text of steps, as its steps: its paragraphs where blank lines part
/// them, else its lines (`<br>`, `<p>` and `<li>` breaking lines too), and
/// a line that numbers several steps (`1. Soak. 2. Boil.`) cut at its
/// numbers; each step without its number.
pub(super) fn numbered_steps(text: &str) -> Vec<String> {
    let text = text.replace("\r\n", "\n");
    // Markup's breaks part the steps wherever they are; a text's blank
    // lines part them when it has any, else its lines do.
    let broken = html_breaks(&text);
    let parts: Vec<&str> = match &broken {
        Some(broken) => broken.lines().collect(),
        None if text.contains("\n\n") => text.split("\n\n").collect(),
        None => text.lines().collect(),
    };
    // Tags out first, so that a line that starts `<p>2. Boil` starts with
    // its number.
    parts
        .into_iter()
        // Steps a site joined with commas ("Bake.,  Meanwhile, ...") are
        // parted again: a sentence that ended has no comma after it.
        .flat_map(comma_joined)
        .map(|part| plain(part.strip_suffix(',').unwrap_or(part)))
        .flat_map(|line| {
            split_at_numbers(&line)
                .into_iter()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .filter(|step| !step.is_empty() && !is_step_label(step))
        .collect()
}

/// `text` parted where a site joined its steps with commas: ".," then
/// spaces and a capital ("Bake.,  Meanwhile, ..."); "e.g., carrots" and
/// "etc., into" are one step.
fn comma_joined(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    for (at, _) in text.match_indices(".,") {
        let after = &text[at + 2..];
        let next = after.trim_start();
        if next.len() < after.len() && next.starts_with(char::is_uppercase) && at + 2 > start {
            parts.push(&text[start..at + 2]);
            start = at + 2;
        }
    }
    parts.push(&text[start..]);
    parts
}

/// Whether a line is a step's label alone ("Step 2", "Paso 2:", "2."):
/// it names the step that follows and is none itself.
pub(super) fn is_step_label(line: &str) -> bool {
    let line = line.trim().trim_end_matches([':', '.', ')']).trim();
    let (word, number) = line
        .rsplit_once(char::is_whitespace)
        .map_or(("", line), |(word, number)| (word.trim(), number));
    (1..=3).contains(&number.len())
        && number.chars().all(|c| c.is_ascii_digit())
        && word.chars().count() <= 12
        && word.chars().all(char::is_alphabetic)
}

/// `text` as lines, a line break before each `<br>`, `<p>` and `<li>`
/// and every other line break a space; `None` if it has none of them.
fn html_breaks(text: &str) -> Option<String> {
    if !text.contains('<') {
        return None;
    }
    let text = text.replace('\n', " ");
    let mut broke = false;
    let mut out = String::with_capacity(text.len() + 16);
    let lower = text.to_ascii_lowercase();
    let mut at = 0;
    while let Some(found) = lower[at..].find('<') {
        let start = at + found;
        out.push_str(&text[at..start]);
        let tag = &lower[start + 1..];
        let name_end = tag
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(tag.len());
        if matches!(&tag[..name_end], "br" | "p" | "li") {
            out.push('\n');
            broke = true;
        }
        out.push('<');
        at = start + 1;
    }
    out.push_str(&text[at..]);
    broke.then_some(out)
}

/// The length of the step number `text` starts with (`3.`, `3)`, `Step
/// 3:`), and the number; a number must be followed by a space or the
/// end, so that `1.5 cups` is no step number.
fn step_number(text: &str) -> Option<(usize, u32)> {
    let lowered = text.get(..5).map(str::to_ascii_lowercase);
    let (skip, rest) = match lowered.as_deref() {
        Some("step ") => (5, &text[5..]),
        _ => (0, text),
    };
    let digits = rest.find(|c: char| !c.is_ascii_digit())?;
    if digits == 0 || digits > 3 {
        return None;
    }
    let number = rest[..digits].parse().ok()?;
    let after = &rest[digits..];
    let mark = after.chars().next()?;
    let marked = matches!(mark, '.' | ')' | ':') || (skip > 0 && mark == ' ');
    let after_mark = &after[mark.len_utf8()..];
    if !marked || !(after_mark.is_empty() || after_mark.starts_with(char::is_whitespace)) {
        return None;
    }
    Some((skip + digits + mark.len_utf8(), number))
}

/// `line` cut where it numbers its steps in order (1, 2, 3 ...), each
/// part without its number; a line that starts with no number is one part.
fn split_at_numbers(line: &str) -> Vec<&str> {
    let line = line.trim();
    let Some((skip, first)) = step_number(line) else {
        return vec![line];
    };
    let mut parts = Vec::new();
    let mut start = skip;
    let mut next = first + 1;
    let mut search = skip;
    while let Some(found) = line[search..].find(char::is_whitespace) {
        let space = search + found;
        let word = line[space..].trim_start();
        let word_at = line.len() - word.len();
        // The next number cuts only where a sentence ended before it:
        // "gas mark 2. Grease" is one step, "Soak. 2. Boil" two.
        let ended = line[start..space]
            .trim_end()
            .ends_with(['.', '!', '?', ':', ';', ')']);
        match step_number(word) {
            Some((len, n)) if n == next && ended => {
                parts.push(line[start..space].trim());
                start = word_at + len;
                next += 1;
                search = start;
            }
            _ => search = word_at.max(space + 1),
        }
        if search >= line.len() {
            break;
        }
    }
    parts.push(line[start..].trim());
    parts
}

/// `text` cut to `max` characters.
pub(super) fn clipped(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// An ISO 8601 duration (`PT1H30M`, `P0DT0H20M`, `PT90M`, `PT0.5H`) in
/// minutes, if it is one this site can keep.
pub(super) fn duration(text: &str) -> Option<Minutes> {
    let text = text.trim().to_ascii_uppercase();
    let rest = text.strip_prefix('P')?;
    let (days, time) = match rest.split_once('T') {
        Some((days, time)) => (days, time),
        None => (rest, ""),
    };
    let mut minutes = 0.0f64;
    let mut take = |part: &str, units: &[(char, f64)]| -> Option<()> {
        let mut number = String::new();
        for c in part.chars() {
            if c.is_ascii_digit() || c == '.' || c == ',' {
                number.push(if c == ',' { '.' } else { c });
            } else {
                let &(_, per) = units.iter().find(|(u, _)| *u == c)?;
                minutes += number.parse::<f64>().ok()? * per;
                number.clear();
            }
        }
        number.is_empty().then_some(())
    };
    take(
        days,
        &[
            ('Y', 525_600.0),
            ('M', 43_200.0),
            ('W', 10_080.0),
            ('D', 1_440.0),
        ],
    )?;
    take(time, &[('H', 60.0), ('M', 1.0), ('S', 1.0 / 60.0)])?;
    Minutes::new(minutes.round() as i64).ok()
}

/// The words for hours in the languages cards are written in.
const HOUR_WORDS: [&str; 35] = [
    "h",
    "hr",
    "hrs",
    "hour",
    "hours",
    "std",
    "stunde",
    "stunden",
    "heure",
    "heures",
    "uur",
    "ora",
    "ore",
    "hora",
    "horas",
    "t",
    "time",
    "timer",
    "timme",
    "timmar",
    "tunti",
    "tuntia",
    "óra",
    "saat",
    "час",
    "часа",
    "часов",
    "ώρα",
    "ώρες",
    "godz",
    "godzina",
    "godziny",
    "hod",
    "hodina",
    "hodiny",
];

/// The words for minutes, besides those that start with `min`.
const MINUTE_WORDS: [&str; 9] = [
    "m",
    "perc",
    "dakika",
    "dk",
    "мин",
    "минут",
    "минуты",
    "λεπτά",
    "λ",
];

/// The words for days.
const DAY_WORDS: [&str; 7] = ["d", "day", "days", "tag", "tage", "jour", "jours"];

/// How many minutes the unit `word` (lower case) is, if it is one.
fn unit_minutes(word: &str) -> Option<f64> {
    if HOUR_WORDS.contains(&word) {
        Some(60.0)
    } else if word.starts_with("min") || MINUTE_WORDS.contains(&word) {
        Some(1.0)
    } else if DAY_WORDS.contains(&word) {
        Some(1_440.0)
    } else {
        None
    }
}

/// A time as recipe cards write it in words (`1 hour 30 mins`, `Prep
/// Time 25 minutes`, `1 Std. 10 Min.`), or an ISO 8601 duration; `None`
/// when it names no time.
pub(super) fn duration_words(text: &str) -> Option<Minutes> {
    if let Some(minutes) = duration(text) {
        return Some(minutes);
    }
    let lower = text.to_lowercase();
    let mut minutes = 0.0f64;
    let mut counted = false;
    let mut after_hours = false;
    let mut number: Option<f64> = None;
    let mut rest = lower.as_str();
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
            .unwrap_or(rest.len());
        if digits > 0 {
            number = rest[..digits].replace(',', ".").parse().ok();
            rest = &rest[digits..];
            continue;
        }
        let letters = rest
            .find(|c: char| !c.is_alphabetic())
            .unwrap_or(rest.len());
        if letters > 0 {
            let word = &rest[..letters];
            let per = unit_minutes(word);
            if let (Some(per), Some(n)) = (per, number.take()) {
                minutes += n * per;
                counted = true;
                after_hours = per == 60.0;
            } else if per.is_none() {
                after_hours = false;
            }
            rest = &rest[letters..];
            continue;
        }
        let skip = rest.chars().next().map_or(1, char::len_utf8);
        rest = &rest[skip..];
    }
    // "2h30", "1 h 10": minutes after the hours, without their unit.
    if let Some(n) = number.filter(|n| after_hours && *n < 60.0) {
        minutes += n;
    }
    counted
        .then(|| Minutes::new(minutes.round() as i64).ok())
        .flatten()
}

/// `href` made absolute against the page at `base`.
pub(super) fn absolute(base: &str, href: &str) -> Option<String> {
    let href = href.trim();
    if href.starts_with("https://") || href.starts_with("http://") {
        return Some(href.to_owned());
    }
    // Any other scheme (`data:`, `javascript:`) is not a picture's address.
    let scheme_end = href.find(':');
    if scheme_end.is_some_and(|at| !href[..at].contains(['/', '?', '#'])) {
        return None;
    }
    let (scheme, rest) = base.split_once("://")?;
    let host_end = rest.find('/').unwrap_or(rest.len());
    let origin = format!("{scheme}://{}", &rest[..host_end]);
    if let Some(path) = href.strip_prefix("//") {
        return Some(format!("{scheme}://{path}"));
    }
    if href.starts_with('/') {
        return Some(format!("{origin}{href}"));
    }
    let path = &rest[host_end..];
    let dir = path.rfind('/').map_or("/", |at| &path[..=at]);
    Some(format!("{origin}{dir}{href}"))
}

/// The host of `url`, `www.` dropped: the site's name when it gives none.
pub(super) fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let host = rest.split(['/', '?', '#']).next()?;
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    let host = host.split(':').next()?;
    (!host.is_empty()).then(|| host.trim_start_matches("www.").to_owned())
}

/// `text` cut to at most `max` bytes, at a character's boundary.
pub(super) fn clipped_bytes(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Content cut to what this site keeps: other sites' recipes can be longer
/// than a recipe here may be, and an import should keep what fits rather
/// than refuse the whole.
///
/// Each limit is the one `Content::parse` applies, measured as it
/// measures it: bytes for lines, steps and texts, characters for the title
/// and tags (which the readers have lower-cased already). Cutting a step to
/// the limit of a text, or counting characters where it counts bytes,
/// refused whole recipes with one long step or a long line in a non-Latin
/// script (found by the fuzz checks; tests/fixtures/fuzz/recipe_page/
/// crash-long-step.html and crash-long-line-in-bytes.html).
pub(super) fn within_limits(mut content: ContentDraft) -> ContentDraft {
    content.title = clipped(&content.title, MAX_TITLE);
    // Every scalar field by its kind in the field table, so a field added
    // there is kept within its limit here too.
    for field in FIELDS {
        match field.slot {
            Slot::Line(_, place) => {
                let held = place(&mut content);
                *held = held.take().map(|t| clipped(&t, MAX_LINE));
            }
            Slot::Markdown(_, place) => {
                let held = place(&mut content);
                *held = held.take().map(|t| clipped_bytes(&t, MAX_TEXT).to_owned());
            }
            // An address cut short would lead somewhere else: dropped.
            Slot::Address(_, place) => {
                let held = place(&mut content);
                *held = held.take().filter(|a| a.len() <= MAX_LINE);
            }
            Slot::Servings(_, place) => {
                let held = place(&mut content);
                *held = held.take().filter(|n| (1..=MAX_SERVINGS).contains(n));
            }
            // Minutes are bounded when they are parsed.
            Slot::Minutes(..) => {}
        }
    }
    // The summary's words are search terms, and bounded as such.
    content.summary = content
        .summary
        .map(|t| search_terms::within_terms(&t, MAX_SUMMARY_TERMS).to_owned());
    let line = |t: Option<String>| t.map(|t| clipped(&t, MAX_LINE));
    content.ingredients.truncate(MAX_INGREDIENTS);
    for i in &mut content.ingredients {
        *i = clipped_bytes(i, MAX_LINE).to_owned();
    }
    // The lines whose items stay within `MAX_INGREDIENT_TERMS`, counted as
    // `Content::parse` counts them.
    let mut terms = std::collections::BTreeSet::new();
    let fit = content.ingredients.iter().position(|line| {
        terms.extend(search_terms::words(IngredientLine::parse(line).item()));
        terms.len() > MAX_INGREDIENT_TERMS
    });
    if let Some(first_past) = fit {
        content.ingredients.truncate(first_past);
    }
    content.steps.truncate(MAX_STEPS);
    for step in &mut content.steps {
        step.text = clipped_bytes(&step.text, MAX_LINE).to_owned();
        step.section = line(step.section.take());
    }
    content.tags.retain(|t| {
        // Counted as `Content::parse` counts: lower-cased (`İ` is
        // two characters then).
        let t = t.trim().to_lowercase();
        t.chars().count() <= MAX_TAG && !t.is_empty() && tag_has_address(&t)
    });
    content.tags.truncate(MAX_TAGS);
    content
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_text_of_steps_is_cut_into_its_steps_however_it_is_written() {
        let three = ["Soak the beans.", "Boil for 1.5 hours.", "Salt to taste."];
        for text in [
            "Soak the beans.\n\nBoil for 1.5 hours.\n\nSalt to taste.",
            "Soak the beans.\r\nBoil for 1.5 hours.\r\nSalt to taste.",
            "1. Soak the beans. 2. Boil for 1.5 hours. 3. Salt to taste.",
            "1) Soak the beans.\n2) Boil for 1.5 hours.\n3) Salt to taste.",
            "Step 1: Soak the beans. Step 2: Boil for 1.5 hours. Step 3: Salt to taste.",
            "<ol><li>Soak the beans.</li><li>Boil for 1.5 hours.</li><li>Salt to taste.</li></ol>",
            "<p>Soak the beans.</p><p>Boil for 1.5 hours.<br>Salt to taste.</p>",
        ] {
            assert_eq!(numbered_steps(text), three, "{text:?}");
        }
        // Numbers out of order, or a number that is an amount, cut nothing.
        for text in [
            "Add 2. Then 4. stir",
            "Use 2 cups. 3. is not a step here",
            "Bake at 180. 2 eggs go in.",
        ] {
            assert_eq!(numbered_steps(text), [text], "{text:?}");
        }
        assert_eq!(numbered_steps("1. Only one step"), ["Only one step"]);
        // A number in a step's text is the text's.
        assert_eq!(
            numbered_steps("1. Heat the oven to gas mark 2. Grease a tin.\n2. Mix."),
            ["Heat the oven to gas mark 2. Grease a tin.", "Mix."]
        );
        // Numbers after markup's breaks, or inside one paragraph of it.
        for text in [
            "1. Soak the beans.<br>2. Boil for 1.5 hours.<br>3. Salt to taste.",
            "<p>1. Soak the beans. 2. Boil for 1.5 hours. 3. Salt to taste.</p>",
        ] {
            assert_eq!(numbered_steps(text), three, "{text:?}");
        }
        assert_eq!(numbered_steps(" \n\n "), Vec::<String>::new());
    }

    #[test]
    fn times_in_words_as_recipe_cards_write_them() {
        for (text, minutes) in [
            ("10 mins", 10),
            ("Prep Time 10 minutes", 10),
            ("1 hour 30 mins", 90),
            ("1 hr 5 min", 65),
            ("1 Std. 10 Min.", 70),
            ("1,5 hours", 90),
            ("PT45M", 45),
        ] {
            assert_eq!(
                duration_words(text).map(Minutes::get),
                Some(minutes),
                "{text}"
            );
        }
        for none in ["", "a while", "10", "serves 4"] {
            assert_eq!(duration_words(none), None, "{none}");
        }
    }

    #[test]
    fn iso_durations_in_the_shapes_sites_write() {
        for (text, minutes) in [
            ("PT1H30M", 90),
            ("PT90M", 90),
            ("P0DT0H20M", 20),
            ("PT0.5H", 30),
            ("pt45m", 45),
            ("P1D", 1440),
            ("PT30S", 1),
        ] {
            assert_eq!(duration(text).map(Minutes::get), Some(minutes), "{text}");
        }
        for bad in ["", "30 minutes", "PT", "PTXM", "P-1D", "PT1H30"] {
            assert_eq!(duration(bad).filter(|m| m.get() > 0), None, "{bad}");
        }
    }

    #[test]
    fn addresses_are_made_absolute() {
        let base = "https://cook.example/recipes/dal.html";
        assert_eq!(
            absolute(base, "/img/a.jpg").unwrap(),
            "https://cook.example/img/a.jpg"
        );
        assert_eq!(
            absolute(base, "a.jpg").unwrap(),
            "https://cook.example/recipes/a.jpg"
        );
        assert_eq!(
            absolute(base, "//cdn.example/a.jpg").unwrap(),
            "https://cdn.example/a.jpg"
        );
        assert_eq!(
            host_of("https://www.cook.example:8443/x").unwrap(),
            "cook.example"
        );
        assert_eq!(absolute(base, "data:image/png;base64,AAAA"), None);
        assert_eq!(absolute(base, "javascript:alert(1)"), None);
    }

    #[test]
    fn what_is_cut_to_fit_is_kept_by_the_domain() {
        let long = ContentDraft {
            title: "Stew".into(),
            summary: Some("ü".repeat(MAX_TEXT)),
            ingredients: vec!["é".repeat(MAX_LINE)],
            steps: vec![crate::domain::Step {
                section: None,
                text: "stir ".repeat(MAX_LINE),
            }],
            tags: vec!["stew".into(), " .. ".into(), ".".into(), "-".into()],
            ..ContentDraft::default()
        };
        // Every scalar field of the table, each over its limit, the
        // language (a row added after this function was written) too.
        let mut long = long;
        for field in FIELDS {
            match field.slot {
                Slot::Line(_, place) | Slot::Address(_, place) | Slot::Markdown(_, place) => {
                    *place(&mut long) = Some("ñ".repeat(MAX_TEXT))
                }
                Slot::Servings(_, place) => *place(&mut long) = Some(MAX_SERVINGS + 1),
                Slot::Minutes(..) => {}
            }
        }
        assert!(long.language.is_some());
        let kept = within_limits(long).normalized().unwrap();
        assert_eq!(kept.language().unwrap().chars().count(), MAX_LINE);
        assert_eq!(kept.tags(), ["-", "stew"]);
        assert_eq!(kept.summary().unwrap().len(), MAX_TEXT);
        assert_eq!(kept.ingredients()[0].len(), MAX_LINE);
        let word = |i: usize| format!("w{i}");
        let wordy = ContentDraft {
            title: "Stew".into(),
            summary: Some(
                (0..MAX_SUMMARY_TERMS + 5)
                    .map(word)
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            ingredients: (0..MAX_INGREDIENTS)
                .map(|line| {
                    (0..20)
                        .map(|i| word(line * 20 + i))
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect(),
            ..ContentDraft::default()
        };
        let kept = within_limits(wordy).normalized().unwrap();
        assert_eq!(search_terms::summary_terms(&kept).len(), MAX_SUMMARY_TERMS);
        assert_eq!(kept.ingredients().len(), MAX_INGREDIENT_TERMS / 20);
    }

    #[test]
    fn markup_in_text_becomes_text() {
        assert_eq!(
            plain("<p>Fry the <b>onions</b> &amp; garlic.</p>"),
            "Fry the onions & garlic."
        );
        assert_eq!(plain("  two   words "), "two words");
    }
}
