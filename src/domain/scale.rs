//! Scaling a recipe's ingredient lines to the number of people at the
//! table, and converting their units between metric and US customary.
//!
//! Only a line's leading amount is touched, with an equivalent written in
//! brackets right after it (`1 cup (125 g) flour`); the rest of the line is
//! kept as the cook wrote it. A line without a leading quantity (`salt`,
//! `juice of 1 lime`) is left alone, and so are sizes (`20 cm tin`): a
//! bigger batch does not need a bigger tin. Amounts are rounded to what
//! their unit is measured in: whole grams and millilitres, quarter
//! teaspoons, thirds and quarters of a cup, and readable fractions (½, 1⅓)
//! for things counted.
//!
//! Volumes convert to volumes and masses to masses; a cup of flour is not
//! turned into grams, which would need the flour's density.

use super::content::Content;
use super::ingredient::IngredientLine;

/// The most servings a recipe scales to.
pub const MAX_SERVINGS: u32 = 1000;

/// Which units a page shows amounts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Units {
    /// As the cook wrote them.
    #[default]
    AsWritten,
    Metric,
    UsCustomary,
}

impl Units {
    /// From a query's `units=`: `metric`, `us`, or empty for as written.
    pub fn parse(text: &str) -> Option<Units> {
        match text {
            "" => Some(Units::AsWritten),
            "metric" => Some(Units::Metric),
            "us" => Some(Units::UsCustomary),
            _ => None,
        }
    }

    /// The query value that asks for these units (empty for as written).
    pub fn as_query(self) -> &'static str {
        match self {
            Units::AsWritten => "",
            Units::Metric => "metric",
            Units::UsCustomary => "us",
        }
    }

    fn system(self) -> Option<System> {
        match self {
            Units::AsWritten => None,
            Units::Metric => Some(System::Metric),
            Units::UsCustomary => Some(System::Us),
        }
    }
}

/// Why a recipe cannot be shown at the scale asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScaleError {
    #[error(
        "This recipe does not say how many it serves, so it cannot be scaled to {0} servings."
    )]
    NoServings(u32),
    #[error("A recipe scales to 1 to {MAX_SERVINGS} servings, not {0}.")]
    OutOfRange(u32),
}

/// The scale a reader asks a recipe page for: servings (as written when
/// `None`) and units. `Scale::for_recipe` checks it against the recipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ScaleAsked {
    pub servings: Option<u32>,
    pub units: Units,
}

impl ScaleAsked {
    /// The recipe as written.
    pub const AS_WRITTEN: ScaleAsked = ScaleAsked {
        servings: None,
        units: Units::AsWritten,
    };

    pub fn is_as_written(&self) -> bool {
        *self == ScaleAsked::AS_WRITTEN
    }
}

/// How a page shows a recipe's amounts.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Scale {
    /// The servings the recipe is written for and those asked for, when
    /// they differ.
    pub servings: Option<(u32, u32)>,
    pub units: Units,
}

impl Scale {
    /// The recipe as written.
    pub const AS_WRITTEN: Scale = Scale {
        servings: None,
        units: Units::AsWritten,
    };

    /// `content` scaled to `servings` (as written when `None`), in `units`.
    pub fn for_recipe(
        content: &Content,
        servings: Option<u32>,
        units: Units,
    ) -> Result<Scale, ScaleError> {
        let servings = match servings {
            None => None,
            Some(n) if n == 0 || n > MAX_SERVINGS => return Err(ScaleError::OutOfRange(n)),
            Some(n) => {
                let from = content
                    .recipe_yield()
                    .servings
                    .and_then(|s| u32::try_from(s).ok())
                    .filter(|&s| s > 0)
                    .ok_or(ScaleError::NoServings(n))?;
                (from != n).then_some((from, n))
            }
        };
        Ok(Scale { servings, units })
    }

    pub fn is_as_written(&self) -> bool {
        *self == Scale::AS_WRITTEN
    }

    /// What every amount is multiplied by.
    pub fn factor(&self) -> f64 {
        self.servings
            .map_or(1.0, |(from, to)| f64::from(to) / f64::from(from))
    }

    /// One ingredient line as this scale shows it.
    pub fn line(&self, raw: &str) -> String {
        if self.is_as_written() {
            raw.trim().to_owned()
        } else {
            scale_line(raw, self.factor(), self.units)
        }
    }
}

/// `raw` with its amount multiplied by `factor` and its units shown in
/// `units`; the line as written when it has no amount to scale.
pub fn scale_line(raw: &str, factor: f64, units: Units) -> String {
    scale_within(raw, factor, units, Nesting::Line)
}

/// Where a piece being scaled sits: a whole line may be a labelled list
/// or start with a few words; a piece of one is scaled as it is. So the
/// work on a line is bounded whatever it holds (`a: b: c: ...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Nesting {
    Line,
    Piece,
}

fn scale_within(raw: &str, factor: f64, units: Units, nesting: Nesting) -> String {
    let line = IngredientLine::parse(raw);
    let Some(quantity) = line.quantity() else {
        if nesting == Nesting::Piece {
            return line.raw().to_owned();
        }
        return match (labelled_list(line.raw()), amount_after_words(line.raw())) {
            (Some((label, list)), _) => format!("{label}: {}", scale_list(list, factor, units)),
            (None, Some((words, rest))) => {
                format!(
                    "{words}{}",
                    scale_within(rest, factor, units, Nesting::Piece)
                )
            }
            (None, None) => line.raw().to_owned(),
        };
    };
    let unit = line.unit();
    let written = Amount {
        low: quantity.amount,
        high: quantity.up_to,
        unit,
    };
    if let Some(pack) = packs(&line, written, factor) {
        return pack;
    }
    // A size (`20 cm tin`) is not scaled, only converted.
    let factor = match unit.and_then(measure) {
        Some(m) if m.kind == Kind::Length => 1.0,
        _ => factor,
    };
    let (tail, equivalent) = equivalent_after(line.tail());
    let mut main = Shown::new(written, line.unit_word()).times(factor);
    let mut equivalent =
        equivalent.map(|(amount, word)| Shown::new(amount, Some(word)).times(factor));
    if let Some(target) = units.system() {
        // `1 cup (125 g)` in metric is `125 g`: the cook's own figure beats
        // a conversion.
        let equivalent_fits = equivalent.is_some_and(|e| {
            e.amount.system() == Some(target) || e.amount.system() == Some(System::Both)
        });
        if main
            .amount
            .system()
            .is_some_and(|s| s != target && s != System::Both)
            && equivalent_fits
        {
            main = equivalent.take().expect("checked above");
            main.changed = true;
        }
        main = main.converted(target);
        equivalent = equivalent.map(|e| e.converted(target));
    }
    if factor != 1.0 || main.changed {
        main = main.tidied(units);
        equivalent = equivalent.map(|e| e.tidied(units));
    }
    if equivalent.is_some_and(|e| e.amount.unit == main.amount.unit) {
        equivalent = None;
    }
    let mut out = main.text();
    if let Some(e) = equivalent {
        out.push_str(" (");
        out.push_str(&e.text());
        out.push(')');
    }
    let tail = if unit.is_none() {
        counted(tail, written.is_plural(), main.amount.is_plural())
    } else {
        tail.to_owned()
    };
    let tail = about_amounts(&tail, factor, units);
    if !tail.is_empty() {
        out.push(' ');
        out.push_str(&tail);
    }
    out
}

/// `2 bananas (about 225 g peeled)`: an amount said to be "about" one,
/// later in the line, describes the whole ingredient, so it scales too.
fn about_amounts(tail: &str, factor: f64, units: Units) -> String {
    const ABOUT: &str = "about ";
    if !tail.contains(ABOUT) {
        return tail.to_owned();
    }
    let mut out = String::with_capacity(tail.len() + 8);
    let mut rest = tail;
    while let Some(at) = rest.find(ABOUT) {
        let (before, after) = rest.split_at(at + ABOUT.len());
        out.push_str(before);
        let end = after.find([')', ',', ';']).unwrap_or(after.len());
        let (segment, next) = after.split_at(end);
        let measured = IngredientLine::parse(segment);
        if measured.quantity().is_some() && measured.unit().is_some() {
            out.push_str(&scale_within(segment, factor, units, Nesting::Piece));
        } else {
            out.push_str(segment);
        }
        rest = next;
    }
    out.push_str(rest);
    out
}

/// `about 750 ml water`, `juice of 1 lime`: a few words, then an amount.
fn amount_after_words(line: &str) -> Option<(&str, &str)> {
    const LEADS: &[&str] = &["about ", "approx. ", "roughly ", "around "];
    let lead = LEADS
        .iter()
        .find(|lead| line.starts_with(**lead))
        .map(|lead| lead.len())
        .or_else(|| {
            let (words, _) = line.split_once(" of ")?;
            let short = words.split_whitespace().count() <= 3;
            (short && !words.contains(|c: char| c.is_ascii_digit() || c == ','))
                .then_some(words.len() + " of ".len())
        })?;
    let (words, rest) = line.split_at(lead);
    IngredientLine::parse(rest)
        .quantity()
        .is_some()
        .then_some((words, rest))
}

/// `For the sauce: 3 tbsp soy sauce, 1 tsp sugar`: a short label without
/// numbers, and the list after it.
fn labelled_list(line: &str) -> Option<(&str, &str)> {
    let (label, list) = line.split_once(": ")?;
    let short = label.split_whitespace().count() <= 5;
    let named = label.contains(char::is_alphabetic);
    (short && named && !label.contains(|c: char| c.is_ascii_digit())).then_some((label, list))
}

/// Each item of a list (`a, b; c and d`, commas inside brackets not
/// splitting) scaled on its own, the separators kept.
fn scale_list(list: &str, factor: f64, units: Units) -> String {
    const SEPARATORS: [&str; 3] = [", ", "; ", " and "];
    let mut out = String::with_capacity(list.len() + 16);
    let mut depth = 0usize;
    let mut start = 0;
    let mut at = 0;
    while at < list.len() {
        let rest = &list[at..];
        match rest.as_bytes()[0] {
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        let separator = (depth == 0)
            .then(|| SEPARATORS.iter().find(|s| rest.starts_with(**s)))
            .flatten();
        match separator {
            Some(separator) => {
                out.push_str(&scale_within(
                    &list[start..at],
                    factor,
                    units,
                    Nesting::Piece,
                ));
                out.push_str(separator);
                at += separator.len();
                start = at;
            }
            None => at += rest.chars().next().map_or(1, char::len_utf8),
        }
    }
    out.push_str(&scale_within(&list[start..], factor, units, Nesting::Piece));
    out
}

/// `(125 g) plain flour`: the bracketed amount and what follows it.
fn equivalent_after(tail: &str) -> (&str, Option<(Amount, &str)>) {
    let Some(inner) = tail.strip_prefix('(') else {
        return (tail, None);
    };
    let Some((inner, rest)) = inner.split_once(')') else {
        return (tail, None);
    };
    let parsed = IngredientLine::parse(inner);
    match (parsed.quantity(), parsed.unit(), parsed.unit_word()) {
        (Some(q), Some(unit), Some(_)) if parsed.tail().is_empty() => {
            let word = inner
                .split_whitespace()
                .last()
                .filter(|w| !w.starts_with(|c: char| c.is_ascii_digit()))
                .unwrap_or(unit);
            (
                rest.trim_start(),
                Some((
                    Amount {
                        low: q.amount,
                        high: q.up_to,
                        unit: Some(unit),
                    },
                    word,
                )),
            )
        }
        _ => (tail, None),
    }
}

/// `400 g tin black beans`, scaled, is `2 x 400 g tins black beans`: the
/// pack size is what the shop sells. So with pieces of a size: `5 cm piece
/// ginger` is `2 x 5 cm pieces ginger`.
fn packs(line: &IngredientLine, written: Amount, factor: f64) -> Option<String> {
    const PACKS: &[&str] = &[
        "tin", "tins", "can", "cans", "jar", "jars", "pack", "packs", "packet", "packets",
        "carton", "cartons", "bag", "bags", "bottle", "bottles",
    ];
    const PIECES: &[&str] = &["piece", "pieces", "chunk", "chunks", "knob", "knobs"];
    let measure = written.unit.and_then(measure)?;
    if factor == 1.0 || written.high.is_some() {
        return None;
    }
    let (pack, rest) = match line.tail().split_once(' ') {
        Some((pack, rest)) => (pack, rest),
        None => (line.tail(), ""),
    };
    let packs = if measure.kind == Kind::Length {
        PIECES
    } else {
        PACKS
    };
    if !packs.contains(&pack) {
        return None;
    }
    let count = Amount {
        low: factor,
        high: None,
        unit: None,
    };
    let pack = if count.is_plural() {
        plural(pack)
    } else {
        singular(pack)
    };
    // The amount as written: the line's words before the tail's (the tail
    // was rejoined with single spaces, so the raw text may not end in it).
    let words: Vec<&str> = line.raw().split_whitespace().collect();
    let tail_words = line.tail().split_whitespace().count();
    let amount = words[..words.len().saturating_sub(tail_words)].join(" ");
    let mut out = format!("{} x {amount} {pack}", count.number());
    if !rest.is_empty() {
        out.push(' ');
        out.push_str(rest);
    }
    Some(out)
}

/// A count's noun follows its number: `1 large onion` doubled is `2 large
/// onions`. Only short names are changed (`egg beaten with 1 tbsp milk`
/// is left alone), and only when the count crosses one.
fn counted(tail: &str, was_plural: bool, is_plural: bool) -> String {
    if was_plural == is_plural {
        return tail.to_owned();
    }
    let end = tail.find([',', '(']).unwrap_or(tail.len());
    let (head, rest) = tail.split_at(end);
    let words: Vec<&str> = head.split_whitespace().collect();
    let Some(last) = words.last() else {
        return tail.to_owned();
    };
    if words.len() > 3 || !last.chars().all(|c| c.is_ascii_lowercase()) || head.contains(" x ") {
        return tail.to_owned();
    }
    // `chipotle in adobo`: the noun is the word before the preposition.
    const PREPOSITIONS: &[&str] = &["in", "of", "with", "for", "from"];
    let at = match words.iter().position(|w| PREPOSITIONS.contains(w)) {
        Some(0) => return tail.to_owned(),
        Some(p) => p - 1,
        None => words.len() - 1,
    };
    let noun = if is_plural {
        plural(words[at])
    } else {
        singular(words[at])
    };
    let mut words: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
    words[at] = noun;
    let space = if rest.is_empty() || rest.starts_with(',') {
        ""
    } else {
        " "
    };
    format!("{}{space}{rest}", words.join(" "))
}

const IRREGULAR: &[(&str, &str)] = &[
    ("leaf", "leaves"),
    ("half", "halves"),
    ("loaf", "loaves"),
    ("knife", "knives"),
    ("chilli", "chillies"),
    ("tomato", "tomatoes"),
    ("potato", "potatoes"),
];

fn plural(word: &str) -> String {
    if let Some((_, many)) = IRREGULAR.iter().find(|(one, _)| *one == word) {
        return (*many).to_owned();
    }
    if IRREGULAR.iter().any(|(_, many)| *many == word)
        || (word.ends_with('s') && !word.ends_with("ss"))
    {
        return word.to_owned();
    }
    if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|e| word.ends_with(e))
    {
        return format!("{word}es");
    }
    if let Some(stem) = word.strip_suffix('y') {
        if !stem.ends_with(['a', 'e', 'i', 'o', 'u']) {
            return format!("{stem}ies");
        }
    }
    format!("{word}s")
}

fn singular(word: &str) -> String {
    if let Some((one, _)) = IRREGULAR.iter().find(|(_, many)| *many == word) {
        return (*one).to_owned();
    }
    if let Some(stem) = word.strip_suffix("ies") {
        return format!("{stem}y");
    }
    for ending in ["ches", "shes", "xes", "sses", "zes"] {
        if word.ends_with(ending) {
            return word[..word.len() - 2].to_owned();
        }
    }
    match word.strip_suffix('s') {
        Some(stem) if !stem.ends_with('s') && !stem.is_empty() => stem.to_owned(),
        _ => word.to_owned(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum System {
    Metric,
    Us,
    /// Spoons: measured the same way on both sides.
    Both,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Mass,
    Volume,
    Length,
}

#[derive(Debug, Clone, Copy)]
struct Measure {
    system: System,
    kind: Kind,
    /// In grams, millilitres or millimetres.
    size: f64,
}

/// What a unit measures and how big it is; `None` for things counted
/// (`clove`, `pinch`, `can`).
fn measure(unit: &str) -> Option<Measure> {
    let (system, kind, size) = match unit {
        "g" => (System::Metric, Kind::Mass, 1.0),
        "kg" => (System::Metric, Kind::Mass, 1000.0),
        "ml" => (System::Metric, Kind::Volume, 1.0),
        "l" => (System::Metric, Kind::Volume, 1000.0),
        "cm" => (System::Metric, Kind::Length, 10.0),
        "oz" => (System::Us, Kind::Mass, 28.349_523_125),
        "lb" => (System::Us, Kind::Mass, 453.592_37),
        "cup" => (System::Us, Kind::Volume, 236.588_236_5),
        "pint" => (System::Us, Kind::Volume, 473.176_473),
        "quart" => (System::Us, Kind::Volume, 946.352_946),
        "inch" => (System::Us, Kind::Length, 25.4),
        "tsp" => (System::Both, Kind::Volume, 4.928_921_593_75),
        "tbsp" => (System::Both, Kind::Volume, 14.786_764_781_25),
        _ => return None,
    };
    Some(Measure { system, kind, size })
}

/// `amount` of `unit` in the unit's base (grams, millilitres or
/// millimetres), with what the unit measures: so that `600 g` and
/// `0.6 kg` compare equal. `None` for things counted.
pub(crate) fn in_base_unit(amount: f64, unit: &str) -> Option<(impl PartialEq, f64)> {
    let m = measure(unit)?;
    Some((m.kind, amount * m.size))
}

/// An amount: a number or a range, and its canonical unit.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Amount {
    low: f64,
    high: Option<f64>,
    unit: Option<&'static str>,
}

impl Amount {
    fn system(self) -> Option<System> {
        Some(measure(self.unit?)?.system)
    }

    /// Whether the number as shown wants a plural: `2`, `1½`, `1–2`, but
    /// not `1` or `½`.
    fn is_plural(self) -> bool {
        let shown = self.number();
        self.high.is_some()
            || !(shown == "1"
                || shown.starts_with('0')
                || !shown.starts_with(|c: char| c.is_ascii_digit()))
    }

    /// In `unit`, which measures the same kind of thing.
    fn in_unit(self, unit: &'static str) -> Amount {
        let from = self.unit.and_then(measure).map_or(1.0, |m| m.size);
        let to = measure(unit).map_or(1.0, |m| m.size);
        Amount {
            low: self.low * from / to,
            high: self.high.map(|h| h * from / to),
            unit: Some(unit),
        }
    }

    /// The number (or range), rounded to what the unit is measured in.
    fn number(self) -> String {
        let one = |x: f64| rounded(x, self.unit);
        match self.high {
            Some(high) => format!("{}–{}", one(self.low), one(high)),
            None => one(self.low),
        }
    }
}

/// An amount as a page shows it, with the unit word it is shown with.
#[derive(Debug, Clone, Copy)]
struct Shown<'a> {
    amount: Amount,
    /// The cook's word for the unit, kept while the unit is theirs.
    word: Option<&'a str>,
    /// Whether the unit is no longer the one written.
    changed: bool,
}

impl<'a> Shown<'a> {
    fn new(amount: Amount, word: Option<&'a str>) -> Shown<'a> {
        Shown {
            amount,
            word,
            changed: false,
        }
    }

    fn times(mut self, factor: f64) -> Shown<'a> {
        self.amount.low *= factor;
        self.amount.high = self.amount.high.map(|h| h * factor);
        self
    }

    fn with_unit(self, unit: &'static str) -> Shown<'a> {
        if self.amount.unit == Some(unit) {
            return self;
        }
        Shown {
            amount: self.amount.in_unit(unit),
            word: None,
            changed: true,
        }
    }

    /// In `target`'s units, when it has one for what this measures.
    fn converted(self, target: System) -> Shown<'a> {
        let Some(m) = self.amount.unit.and_then(measure) else {
            return self;
        };
        if m.system == target || m.system == System::Both {
            return self;
        }
        let base = self.amount.low * m.size;
        let unit = match (target, m.kind) {
            (System::Metric, Kind::Mass) => "g",
            (System::Metric, Kind::Volume) => "ml",
            (System::Metric, Kind::Length) => "cm",
            (System::Us, Kind::Mass) => "oz",
            (System::Us, Kind::Volume) if base < 15.0 => "tsp",
            (System::Us, Kind::Volume) if base < 59.0 => "tbsp",
            (System::Us, Kind::Volume) => "cup",
            (System::Us, Kind::Length) => "inch",
            (System::Both, _) => return self,
        };
        self.with_unit(unit)
    }

    /// Into the unit a cook would write for this much: `1.2 kg`, not
    /// `1200 g`; `1 tbsp`, not `3 tsp`.
    fn tidied(self, units: Units) -> Shown<'a> {
        let low = self.amount.low;
        let unit = match self.amount.unit {
            Some("g") if low >= 1000.0 => "kg",
            Some("kg") if low < 1.0 => "g",
            Some("ml") if low >= 1000.0 => "l",
            Some("l") if low < 1.0 => "ml",
            Some("oz") if low >= 16.0 => "lb",
            // Only where the bigger unit reads cleaner: 6 tsp is 2 tbsp,
            // but 4 tsp is not 1⅓ tbsp.
            Some("tsp") if low >= 3.0 && lands_on(low / 3.0, 2.0) => "tbsp",
            Some("tbsp")
                if low >= 8.0
                    && units != Units::Metric
                    && (lands_on(low / 16.0, 4.0) || lands_on(low / 16.0, 3.0)) =>
            {
                "cup"
            }
            Some("cup") if low >= 4.0 && units == Units::UsCustomary => "quart",
            _ => return self,
        };
        self.with_unit(unit)
    }

    fn text(self) -> String {
        let number = self.amount.number();
        match (self.amount.unit, self.word) {
            (None, _) => number,
            (Some(unit), Some(word)) if !self.changed => {
                format!(
                    "{number} {}",
                    unit_word(word, unit, self.amount.is_plural())
                )
            }
            (Some(unit), _) => format!(
                "{number} {}",
                unit_word(unit, unit, self.amount.is_plural())
            ),
        }
    }
}

/// The unit's word in the number it needs: an abbreviation stays as
/// written (`g`, `tbsp`), a word follows the count (`1 cup`, `2 cups`).
fn unit_word(word: &str, unit: &str, plural_wanted: bool) -> String {
    const ABBREVIATIONS: &[&str] = &[
        "tsp", "tsps", "tbsp", "tbsps", "tbs", "t", "c", "g", "gr", "kg", "ml", "l", "oz", "lb",
        "lbs", "cm", "in",
    ];
    if ABBREVIATIONS.contains(&word.to_ascii_lowercase().as_str()) {
        return word.to_owned();
    }
    let word = if unit == "inch" && word.starts_with("inch") {
        if plural_wanted {
            "inches"
        } else {
            "inch"
        }
    } else {
        word
    };
    if plural_wanted {
        plural(word)
    } else {
        singular(word)
    }
}

/// One number, rounded to what `unit` is measured in.
fn rounded(x: f64, unit: Option<&str>) -> String {
    const EIGHTHS: &[(f64, &str)] = &[(0.125, "⅛"), (0.25, "¼"), (0.5, "½"), (0.75, "¾")];
    const QUARTERS: &[(f64, &str)] = &[(0.25, "¼"), (0.5, "½"), (0.75, "¾")];
    const THIRDS: &[(f64, &str)] = &[
        (0.25, "¼"),
        (1.0 / 3.0, "⅓"),
        (0.5, "½"),
        (2.0 / 3.0, "⅔"),
        (0.75, "¾"),
    ];
    match unit {
        Some("g" | "ml" | "cm") if x >= 1.0 => whole(x),
        Some("g" | "ml" | "cm") => decimal(x.max(0.1), 1),
        Some("kg" | "l") => decimal(x, 2),
        Some("tsp" | "tbsp") => fraction(x, EIGHTHS),
        Some("oz" | "lb" | "pint" | "quart" | "inch") => fraction(x, QUARTERS),
        _ if x >= 10.0 => whole(x),
        _ => fraction(x, THIRDS),
    }
}

/// Whether `x` is a whole number of `1/parts`.
fn lands_on(x: f64, parts: f64) -> bool {
    ((x * parts) - (x * parts).round()).abs() < 0.02
}

fn whole(x: f64) -> String {
    format!("{}", x.round() as u64)
}

fn decimal(x: f64, places: usize) -> String {
    let text = format!("{x:.places$}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "0" {
        format!("{:.places$}", 10f64.powi(-(places as i32)))
    } else {
        text.to_owned()
    }
}

/// `x` as a whole number and the nearest of `fractions`: `1⅓`, `¾`. Never
/// zero for an amount that is not.
fn fraction(x: f64, fractions: &[(f64, &str)]) -> String {
    let whole = x.floor();
    let part = x - whole;
    let mut best = (0.0, "", part);
    for &(value, glyph) in fractions.iter().chain([(1.0, "")].iter()) {
        let distance = (part - value).abs();
        if distance < best.2 {
            best = (value, glyph, distance);
        }
    }
    let (value, glyph, _) = best;
    let whole = whole as u64 + u64::from(value == 1.0);
    match (whole, glyph) {
        (0, "") => fractions[0].1.to_owned(),
        (0, glyph) => glyph.to_owned(),
        (n, glyph) => format!("{n}{glyph}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::content::ContentDraft;

    fn scaled(line: &str, factor: f64) -> String {
        scale_line(line, factor, Units::AsWritten)
    }

    #[test]
    fn amounts_scale_and_stay_readable() {
        let cases = [
            ("2 tbsp olive oil", 2.0, "4 tbsp olive oil"),
            ("1 1/2 cups flour, sifted", 2.0, "3 cups flour, sifted"),
            ("1 cup milk", 0.5, "½ cup milk"),
            ("4 eggs", 1.0 / 3.0, "1⅓ eggs"),
            ("200 g spinach", 1.5, "300 g spinach"),
            ("750 g chestnut mushrooms", 2.0, "1.5 kg chestnut mushrooms"),
            (
                "1.2 kg beef chuck, cut into 2 cm cubes",
                0.5,
                "600 g beef chuck, cut into 2 cm cubes",
            ),
            ("1 litre chicken stock", 2.0, "2 litres chicken stock"),
            ("1 litre chicken stock", 0.5, "500 ml chicken stock"),
            ("3–4 tbsp lime juice", 0.5, "1½–2 tbsp lime juice"),
            ("2 to 3 sprigs of thyme", 2.0, "4–6 sprigs of thyme"),
            ("1 tsp salt", 3.0, "1 tbsp salt"),
            ("2 tsp dried oregano", 2.0, "4 tsp dried oregano"),
            ("4 tbsp butter", 2.0, "½ cup butter"),
            ("5 tbsp butter", 2.0, "10 tbsp butter"),
            ("½ tsp fine salt", 0.25, "⅛ tsp fine salt"),
            ("1 pinch saffron", 3.0, "3 pinches saffron"),
            ("12 g fine sea salt", 0.5, "6 g fine sea salt"),
            ("7 g yeast", 0.5, "4 g yeast"),
        ];
        for (line, factor, want) in cases {
            assert_eq!(scaled(line, factor), want, "{line} x {factor}");
        }
    }

    #[test]
    fn counted_things_follow_their_number() {
        let cases = [
            ("1 onion, quartered", 2.0, "2 onions, quartered"),
            (
                "1 large carrot, cut into matchsticks",
                3.0,
                "3 large carrots, cut into matchsticks",
            ),
            ("2 eggs", 0.5, "1 egg"),
            ("2 bay leaves", 0.5, "1 bay leaf"),
            (
                "1 green chilli, slit lengthways",
                2.0,
                "2 green chillies, slit lengthways",
            ),
            ("2 garlic cloves", 0.5, "1 garlic clove"),
            (
                "1 Parmigiano rind (optional)",
                2.0,
                "2 Parmigiano rinds (optional)",
            ),
            (
                "1 egg beaten with 1 tbsp milk and a pinch of salt, for glazing",
                2.0,
                "2 egg beaten with 1 tbsp milk and a pinch of salt, for glazing",
            ),
            (
                "2 x 400 g tins whole plum tomatoes",
                1.5,
                "3 x 400 g tins whole plum tomatoes",
            ),
        ];
        for (line, factor, want) in cases {
            assert_eq!(scaled(line, factor), want, "{line} x {factor}");
        }
    }

    #[test]
    fn what_has_no_amount_or_is_a_size_is_left_alone() {
        for line in ["salt", "black pepper", "handful coriander leaves, chopped"] {
            assert_eq!(scaled(line, 3.0), line);
        }
        assert_eq!(
            scaled("20 cm tart tin, buttered", 2.0),
            "20 cm tart tin, buttered"
        );
    }

    #[test]
    fn each_item_of_a_labelled_list_scales() {
        assert_eq!(
            scaled("For the porridge: 75 g rolled oats and 150 g water", 2.0),
            "For the porridge: 150 g rolled oats and 300 g water"
        );
        assert_eq!(
            scaled("To serve: 1 lemon, cut into wedges, and icing sugar", 2.0),
            "To serve: 2 lemons, cut into wedges, and icing sugar"
        );
        assert_eq!(
            scaled(
                "For the honey butter: 4 tbsp (55 g) soft butter, 2 tbsp honey, a pinch of salt",
                0.5
            ),
            "For the honey butter: 2 tbsp (28 g) soft butter, 1 tbsp honey, a pinch of salt"
        );
        assert_eq!(
            scaled("about 750 ml hot water", 2.0),
            "about 1.5 l hot water"
        );
        assert_eq!(scaled("juice of 1 lime", 2.0), "juice of 2 limes");
        assert_eq!(
            scaled("finely grated zest of 2 lemons, plus 2 tbsp juice", 0.5),
            "finely grated zest of 1 lemon, plus 2 tbsp juice"
        );
        assert_eq!(
            scaled("large handful each of Thai basil and mint", 2.0),
            "large handful each of Thai basil and mint"
        );
        // Lists inside lists are scaled as pieces, so a line of colons
        // costs one pass.
        let colons = ": ".repeat(1000);
        assert_eq!(scaled(&colons, 2.0), colons.trim());
        let nested = "a: ".repeat(600) + "1 egg";
        assert_eq!(scaled(&nested, 2.0), nested);
        // A line with a colon whose label has numbers is not a list.
        assert_eq!(
            scaled("Ratio 1:2: rice to water", 2.0),
            "Ratio 1:2: rice to water"
        );
    }

    #[test]
    fn a_pack_size_is_kept_and_packs_are_counted() {
        assert_eq!(
            scaled("400 g tin black beans, drained and rinsed", 2.0),
            "2 x 400 g tins black beans, drained and rinsed"
        );
        assert_eq!(
            scaled("400 g tin black beans", 1.0),
            "400 g tin black beans"
        );
        assert_eq!(
            scaled("400  g tin  black beans", 2.0),
            "2 x 400 g tins black beans"
        );
    }

    #[test]
    fn a_bracketed_equivalent_scales_with_its_amount() {
        assert_eq!(
            scaled("1 cup (125 g) plain flour", 2.0),
            "2 cups (250 g) plain flour"
        );
        assert_eq!(
            scaled("3 tbsp (45 g) unsalted butter", 1.0 / 3.0),
            "1 tbsp (15 g) unsalted butter"
        );
    }

    #[test]
    fn units_convert_to_metric() {
        let metric = |line| scale_line(line, 1.0, Units::Metric);
        assert_eq!(metric("1 cup (125 g) plain flour"), "125 g plain flour");
        assert_eq!(metric("2 cups milk"), "473 ml milk");
        assert_eq!(metric("1 lb minced beef"), "454 g minced beef");
        assert_eq!(metric("3 lb pork shoulder"), "1.36 kg pork shoulder");
        assert_eq!(metric("8 oz cheddar, grated"), "227 g cheddar, grated");
        assert_eq!(metric("9 inch pie tin"), "23 cm pie tin");
        assert_eq!(metric("1 tsp salt"), "1 tsp salt");
        assert_eq!(metric("200 g spinach"), "200 g spinach");
    }

    #[test]
    fn units_convert_to_us_customary() {
        let us = |line| scale_line(line, 1.0, Units::UsCustomary);
        assert_eq!(us("200 g spinach"), "7 oz spinach");
        assert_eq!(us("1 kg potatoes"), "2¼ lb potatoes");
        assert_eq!(us("250 ml water"), "1 cup water");
        assert_eq!(us("30 ml lemon juice"), "2 tbsp lemon juice");
        assert_eq!(us("5 ml vanilla extract"), "1 tsp vanilla extract");
        assert_eq!(us("2 litres stock"), "2 quarts stock");
        assert_eq!(us("1½ cups (360 ml) buttermilk"), "1½ cups buttermilk");
        assert_eq!(us("60 ml (4 tbsp) olive oil"), "4 tbsp olive oil");
        assert_eq!(us("1 tbsp olive oil"), "1 tbsp olive oil");
    }

    #[test]
    fn servings_are_checked() {
        let parsed = |c: &ContentDraft| c.clone().normalized().unwrap();
        let mut content = ContentDraft {
            title: "Soup".into(),
            ..ContentDraft::default()
        };
        assert_eq!(
            Scale::for_recipe(&parsed(&content), Some(8), Units::AsWritten),
            Err(ScaleError::NoServings(8))
        );
        content.recipe_yield.servings = Some(4);
        assert_eq!(
            Scale::for_recipe(&parsed(&content), Some(0), Units::AsWritten),
            Err(ScaleError::OutOfRange(0))
        );
        let scale = Scale::for_recipe(&parsed(&content), Some(8), Units::AsWritten).unwrap();
        assert_eq!(scale.servings, Some((4, 8)));
        assert_eq!(scale.factor(), 2.0);
        let same = Scale::for_recipe(&parsed(&content), Some(4), Units::AsWritten).unwrap();
        assert!(same.is_as_written());
        assert_eq!(same.line(" 2 eggs "), "2 eggs");
    }
}
