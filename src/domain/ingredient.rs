//! Ingredient lines: `1 1/2 cups flour, sifted` read into quantity, unit,
//! item and note, keeping the line as the cook wrote it.
//!
//! Parsing never fails: a line it cannot read a quantity or unit from is
//! all item (and note). The raw line is what pages show; the parts are for
//! search, scaling and diffs.

/// A parsed ingredient line.
#[derive(Debug, Clone, PartialEq)]
pub struct IngredientLine {
    raw: String,
    quantity: Option<Quantity>,
    unit: Option<&'static str>,
    /// The unit as the cook wrote it (`tablespoons`, `g` of `200g`).
    unit_word: Option<String>,
    /// Everything after the quantity and unit, as written (`of thyme`,
    /// `(125 g) plain flour`): what scaling keeps.
    tail: String,
    item: String,
    note: Option<String>,
}

/// An amount: `2`, `1.5`, `1 1/2`, `½`, or a range `2-3`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quantity {
    pub amount: f64,
    /// The top of a range (`2-3 cloves`).
    pub up_to: Option<f64>,
}

/// Units as cooks write them, each with its canonical short form.
const UNITS: &[(&str, &[&str])] = &[
    ("tsp", &["tsp", "tsps", "teaspoon", "teaspoons", "t"]),
    (
        "tbsp",
        &["tbsp", "tbsps", "tablespoon", "tablespoons", "tbs", "T"],
    ),
    ("cup", &["cup", "cups", "c"]),
    ("g", &["g", "gram", "grams", "gr"]),
    ("kg", &["kg", "kilogram", "kilograms"]),
    (
        "ml",
        &[
            "ml",
            "millilitre",
            "millilitres",
            "milliliter",
            "milliliters",
        ],
    ),
    ("l", &["l", "litre", "litres", "liter", "liters"]),
    ("oz", &["oz", "ounce", "ounces"]),
    ("lb", &["lb", "lbs", "pound", "pounds"]),
    ("pinch", &["pinch", "pinches"]),
    ("dash", &["dash", "dashes"]),
    ("clove", &["clove", "cloves"]),
    ("can", &["can", "cans", "tin", "tins"]),
    ("slice", &["slice", "slices"]),
    ("bunch", &["bunch", "bunches"]),
    ("handful", &["handful", "handfuls"]),
    ("sprig", &["sprig", "sprigs"]),
    ("stick", &["stick", "sticks"]),
    ("piece", &["piece", "pieces"]),
    ("pint", &["pint", "pints"]),
    ("quart", &["quart", "quarts"]),
    ("cm", &["cm"]),
    ("inch", &["inch", "inches", "in"]),
];

fn unicode_fraction(c: char) -> Option<f64> {
    Some(match c {
        '½' => 0.5,
        '⅓' => 1.0 / 3.0,
        '⅔' => 2.0 / 3.0,
        '¼' => 0.25,
        '¾' => 0.75,
        '⅕' => 0.2,
        '⅛' => 0.125,
        '⅜' => 0.375,
        '⅝' => 0.625,
        '⅞' => 0.875,
        _ => return None,
    })
}

/// One number: `2`, `1.5`, `1/2`, `½`, `1½`. Always finite: `f64`'s parser
/// also reads `NaN`, `inf` and `1e400`, and a quotient can overflow, and
/// none of those is an amount (the fuzz check found `NaN/1 cup` read as NaN cups,
/// which scaling then wrote out; tests/fixtures/fuzz/ingredient_line/
/// crash-not-a-number).
fn number(word: &str) -> Option<f64> {
    let finite = |text: &str| text.parse::<f64>().ok().filter(|x| x.is_finite());
    let value = if let Some((n, d)) = word.split_once('/') {
        let (n, d) = (finite(n)?, finite(d)?);
        (d != 0.0).then(|| n / d)?
    } else {
        let mut chars = word.chars();
        let last = chars.next_back()?;
        if let Some(fraction) = unicode_fraction(last) {
            let whole = chars.as_str();
            if whole.is_empty() {
                fraction
            } else {
                finite(whole)? + fraction
            }
        } else if word.starts_with(|c: char| c.is_ascii_digit()) {
            finite(word)?
        } else {
            return None;
        }
    };
    value.is_finite().then_some(value)
}

fn unit(word: &str) -> Option<&'static str> {
    let trimmed = word.trim_end_matches('.');
    UNITS.iter().find_map(|(canonical, spellings)| {
        spellings
            .iter()
            .any(|s| *s == trimmed || (s.len() > 1 && s.eq_ignore_ascii_case(trimmed)))
            .then_some(*canonical)
    })
}

/// A line's words; a first word such as `200g` is a number and a unit,
/// two words.
fn words_of(raw: &str) -> Vec<String> {
    let mut words: Vec<String> = raw.split_whitespace().map(str::to_owned).collect();
    // `200g` is a number and a unit.
    if let Some(first) = words.first().cloned() {
        let split = first.find(|c: char| c.is_alphabetic() && unicode_fraction(c).is_none());
        if let Some(at) = split.filter(|&at| at > 0) {
            let (n, u) = first.split_at(at);
            if number(n).is_some() && unit(u).is_some() {
                words.splice(0..1, [n.to_owned(), u.to_owned()]);
            }
        }
    }
    words
}

/// The quantity the line's words start with, if they do, and how many
/// words it takes.
fn leading_quantity(words: &[String]) -> (Option<Quantity>, usize) {
    let Some(first) = words.first() else {
        return (None, 0);
    };
    // A range written `2-3` or `2–3`.
    let range = first
        .split_once(['-', '–'])
        .and_then(|(a, b)| Some((number(a)?, number(b)?)));
    if let Some((low, high)) = range {
        let quantity = Quantity {
            amount: low,
            up_to: Some(high),
        };
        return (Some(quantity), 1);
    }
    let Some(n) = number(first) else {
        return (None, 0);
    };
    let mut quantity = Quantity {
        amount: n,
        up_to: None,
    };
    let mut at = 1;
    // `1 1/2` and `1 ½`: a whole number then a fraction.
    if let Some(fraction) = words
        .get(1)
        .filter(|w| w.contains('/') || w.chars().count() == 1)
        .and_then(|w| number(w))
    {
        if fraction < 1.0 && n.fract() == 0.0 {
            quantity = Quantity {
                amount: n + fraction,
                up_to: None,
            };
            at = 2;
        }
    }
    // `2 to 3`.
    if words.get(at).is_some_and(|w| w == "to") {
        if let Some(high) = words.get(at + 1).and_then(|w| number(w)) {
            quantity = Quantity {
                amount: n,
                up_to: Some(high),
            };
            at += 2;
        }
    }
    (Some(quantity), at)
}

impl IngredientLine {
    /// Reads a line; surrounding whitespace is trimmed, nothing else lost.
    pub fn parse(line: &str) -> IngredientLine {
        let raw = line.trim().to_owned();
        let words = words_of(&raw);
        let (quantity, mut at) = leading_quantity(&words);
        let unit = if quantity.is_some() {
            words.get(at).and_then(|w| unit(w))
        } else {
            None
        };
        let unit_word = unit.map(|_| words[at].clone());
        if unit.is_some() {
            at += 1;
        }
        let tail = words[at.min(words.len())..].join(" ");
        if unit.is_some() && words.get(at).is_some_and(|w| w == "of") {
            at += 1;
        }
        let rest = words[at.min(words.len())..].join(" ");
        let (item, note) = match rest.split_once(',') {
            Some((item, note)) if !note.trim().is_empty() => {
                (item.trim().to_owned(), Some(note.trim().to_owned()))
            }
            _ => (rest.trim_end_matches(',').trim().to_owned(), None),
        };
        IngredientLine {
            raw,
            quantity,
            unit,
            unit_word,
            tail,
            item,
            note,
        }
    }

    /// The line as written.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    pub fn quantity(&self) -> Option<Quantity> {
        self.quantity
    }

    /// The canonical unit: `tbsp` for "tablespoons".
    pub fn unit(&self) -> Option<&'static str> {
        self.unit
    }

    /// The unit as written, when there is one.
    pub fn unit_word(&self) -> Option<&str> {
        self.unit_word.as_deref()
    }

    /// What follows the quantity and unit, as written.
    pub fn tail(&self) -> &str {
        &self.tail
    }

    pub fn item(&self) -> &str {
        &self.item
    }

    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Amount, top of range, unit, item, note.
    type Expected = (
        Option<f64>,
        Option<f64>,
        Option<&'static str>,
        &'static str,
        Option<&'static str>,
    );

    fn parts(
        line: &str,
    ) -> (
        Option<f64>,
        Option<f64>,
        Option<&'static str>,
        String,
        Option<String>,
    ) {
        let l = IngredientLine::parse(line);
        (
            l.quantity().map(|q| q.amount),
            l.quantity().and_then(|q| q.up_to),
            l.unit(),
            l.item().to_owned(),
            l.note().map(str::to_owned),
        )
    }

    #[test]
    fn quantities_units_items_and_notes_are_read() {
        let cases: Vec<(&str, Expected)> = vec![
            (
                "1 1/2 cups flour, sifted",
                (Some(1.5), None, Some("cup"), "flour", Some("sifted")),
            ),
            ("½ tsp salt", (Some(0.5), None, Some("tsp"), "salt", None)),
            (
                "1½ tbsp olive oil",
                (Some(1.5), None, Some("tbsp"), "olive oil", None),
            ),
            (
                "1 ½ Tablespoons butter",
                (Some(1.5), None, Some("tbsp"), "butter", None),
            ),
            (
                "200g spinach",
                (Some(200.0), None, Some("g"), "spinach", None),
            ),
            (
                "2-3 cloves garlic, crushed",
                (
                    Some(2.0),
                    Some(3.0),
                    Some("clove"),
                    "garlic",
                    Some("crushed"),
                ),
            ),
            (
                "2 to 3 sprigs of thyme",
                (Some(2.0), Some(3.0), Some("sprig"), "thyme", None),
            ),
            ("4 eggs", (Some(4.0), None, None, "eggs", None)),
            (
                "salt, to taste",
                (None, None, None, "salt", Some("to taste")),
            ),
            (
                "1 (400 g) can chickpeas, drained",
                (
                    Some(1.0),
                    None,
                    None,
                    "(400 g) can chickpeas",
                    Some("drained"),
                ),
            ),
            ("0.5 l stock", (Some(0.5), None, Some("l"), "stock", None)),
        ];
        for (line, (amount, up_to, unit, item, note)) in cases {
            assert_eq!(
                parts(line),
                (
                    amount,
                    up_to,
                    unit,
                    item.to_owned(),
                    note.map(str::to_owned)
                ),
                "{line}"
            );
        }
    }

    #[test]
    fn the_raw_line_is_kept_as_written() {
        let line = IngredientLine::parse("  1 1/2 cups flour, sifted ");
        assert_eq!(line.raw(), "1 1/2 cups flour, sifted");
    }

    #[test]
    fn odd_lines_become_all_item_and_never_fail() {
        for line in ["", "1/0 cup", "a pinch of love", "/", "½", "1 1/2"] {
            let parsed = IngredientLine::parse(line);
            assert_eq!(parsed.raw(), line.trim());
        }
        assert_eq!(parts("1/0 cup").0, None);
    }

    #[test]
    fn only_finite_numbers_are_amounts() {
        for line in [
            "NaN/1 cup",
            "inf½ tsp",
            "1e300/1e-300 g",
            "1e400 g",
            "infinity cups",
        ] {
            assert_eq!(parts(line).0, None, "{line}");
        }
        assert_eq!(parts("1e3 g flour").0, Some(1000.0));
    }
}
