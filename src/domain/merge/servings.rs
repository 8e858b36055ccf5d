//! Ingredient lines that cross between two recipes written for different
//! servings.
//!
//! A line a merge takes from a side written for other servings than the
//! merge's is scaled to them only where the site's scaler gives back
//! plainly what the cook would write: one amount at the start of the line,
//! nothing else in it that reads as an amount (no second quantity, no
//! range, no sizes in brackets), and the scaled amount within a tenth of
//! the exact one in the same unit (the scaler rounds to what a cook
//! measures: a third of a cup, an eighth of a teaspoon). Any other line
//! that names an amount is marked with the servings it was written for,
//! `(for 4 servings)`, for the cook to see; one with none (`salt to
//! taste`) is taken as written. A merge stores what it takes, so a wrong
//! scaling would stay in the recipe: where it could be wrong, the line
//! says so instead.
//!
//! The next merge must not take a line scaled or marked here for a change
//! of the cook's: `canonical` reads such a line of either side (a merge
//! scaled it into the fork, or an accepted suggestion into the parent) as
//! the base's line it came from, and `restore` puts the side's own text
//! back where the merge keeps that side's line.

use super::blocks::{Block, Origin};
use crate::domain::content::MAX_LINE;
use crate::domain::ingredient::IngredientLine;
use crate::domain::scale::{in_base_unit, scale_line, Units};

/// Characters that write an amount: digits and the vulgar fractions.
fn is_amount_char(c: char) -> bool {
    c.is_ascii_digit() || matches!(c, '½' | '⅓' | '⅔' | '¼' | '¾' | '⅛' | '⅜' | '⅝' | '⅞')
}

/// `line`, written for `from` servings, for a recipe of `to`: scaled where
/// that is plainly right, else marked, or as written (the module's doc).
pub fn for_servings(line: &str, from: i64, to: i64) -> String {
    if from == to || from <= 0 || to <= 0 {
        return line.to_owned();
    }
    let factor = to as f64 / from as f64;
    let parsed = IngredientLine::parse(line);
    if let Some(quantity) = parsed.quantity() {
        let plain = quantity.up_to.is_none()
            && quantity.amount > 0.0
            && !parsed
                .tail()
                .chars()
                .any(|c| is_amount_char(c) || matches!(c, '(' | ')' | '+'));
        // Things counted (eggs, cloves, a pinch) come whole: a fraction of
        // one is for the cook to judge, not the merge.
        let exact = quantity.amount * factor;
        let counted = parsed.unit().is_none_or(|u| in_base_unit(1.0, u).is_none());
        let whole = (exact - exact.round()).abs() < 1e-9;
        if plain && (whole || !counted) {
            let scaled = scale_line(line, factor, Units::AsWritten);
            let again = IngredientLine::parse(&scaled);
            let close = again.quantity().is_some_and(|q| {
                q.up_to.is_none() && near(exact, parsed.unit(), q.amount, again.unit())
            });
            if close {
                return scaled;
            }
        }
    }
    marked(line, from)
}

/// Whether `scaled` of `unit` is within a tenth of `exact` of
/// `exact_unit`: in the same unit, or in another of the same measure (the
/// scaler writes `1.2 kg` for `600 g` doubled).
fn near(exact: f64, exact_unit: Option<&str>, scaled: f64, unit: Option<&str>) -> bool {
    let (exact, scaled) = match (exact_unit, unit) {
        (a, b) if a == b => (exact, scaled),
        (Some(a), Some(b)) => match (in_base_unit(exact, a), in_base_unit(scaled, b)) {
            (Some((kind_a, exact)), Some((kind_b, scaled))) if kind_a == kind_b => (exact, scaled),
            _ => return false,
        },
        _ => return false,
    };
    (scaled - exact).abs() <= exact * 0.1
}

/// The fork's lines (`mine`, written for `to` servings) as a merge from
/// `base` (written for `from`) compares them: a line that is a base line
/// as a merge would have brought it in (`for_servings`) reads as that base
/// line. Returns the lines so read, and each line read so, with the
/// fork's own text, for `restore`.
pub(super) fn canonical(
    base: &[String],
    mine: &[String],
    from: Option<i64>,
    to: Option<i64>,
) -> (Vec<String>, Vec<(String, String)>) {
    let (Some(from), Some(to)) = (from, to) else {
        return (mine.to_vec(), Vec::new());
    };
    if from == to {
        return (mine.to_vec(), Vec::new());
    }
    let mut read_as = Vec::new();
    let lines = mine
        .iter()
        .map(|line| {
            let came_from = base
                .iter()
                .find(|b| *b != line && !mine.contains(b) && for_servings(b, from, to) == *line);
            match came_from {
                Some(b) => {
                    read_as.push((b.clone(), line.clone()));
                    b.clone()
                }
                None => line.clone(),
            }
        })
        .collect();
    (lines, read_as)
}

/// `blocks` with `side`'s own text (`read_as`, from `canonical`) back
/// wherever a block keeps that side's lines: for mine, the clean blocks
/// that are the base's, mine or both sides' (the fork's text is what it
/// has); for theirs, the clean blocks of theirs; and the side's lines in a
/// conflict, or beside the other's block that holds them.
pub(super) fn restore(blocks: &mut [Block<String>], read_as: &[(String, String)], side: Origin) {
    if read_as.is_empty() {
        return;
    }
    let back = |lines: &mut Vec<String>| {
        for line in lines.iter_mut() {
            if let Some((_, own)) = read_as.iter().find(|(b, _)| b == line) {
                *line = own.clone();
            }
        }
    };
    for block in blocks {
        match (block, side) {
            (Block::Conflict { mine, .. }, Origin::Mine) => back(mine),
            (Block::Conflict { theirs, .. }, _) => back(theirs),
            (
                Block::Clean {
                    origin,
                    lines,
                    other,
                    ..
                },
                Origin::Mine,
            ) => match origin {
                Origin::Theirs => {
                    if let Some(mine) = other {
                        back(mine)
                    }
                }
                _ => back(lines),
            },
            (
                Block::Clean {
                    origin,
                    lines,
                    other,
                    ..
                },
                _,
            ) => match origin {
                Origin::Theirs => back(lines),
                Origin::Mine => {
                    if let Some(theirs) = other {
                        back(theirs)
                    }
                }
                _ => {}
            },
        }
    }
}

/// `line`, written for `from` servings, in a merge that says none: marked
/// with them where it names an amount, so a cook sees what it was for.
pub(super) fn marked(line: &str, from: i64) -> String {
    let servings = if from == 1 { "serving" } else { "servings" };
    let marked = format!("{} (for {from} {servings})", line.trim());
    if line.chars().any(is_amount_char) && marked.len() <= MAX_LINE {
        marked
    } else {
        line.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_amount_is_scaled_and_anything_else_with_an_amount_is_marked() {
        let cases = [
            ("2 cups flour", 4, 2, "1 cup flour"),
            ("1 1/2 cups blueberries", 4, 6, "2¼ cups blueberries"),
            ("3/4 cup milk", 4, 2, "3/4 cup milk (for 4 servings)"),
            ("1/3 cup oil", 4, 2, "1/3 cup oil (for 4 servings)"),
            (
                "1 (400 g) can peaches",
                4,
                2,
                "1 (400 g) can peaches (for 4 servings)",
            ),
            ("1 lb 4 oz beef", 4, 8, "1 lb 4 oz beef (for 4 servings)"),
            (
                "1/2 - 1 tsp chili",
                4,
                8,
                "1/2 - 1 tsp chili (for 4 servings)",
            ),
            (
                "1 egg, plus 1 yolk",
                4,
                8,
                "1 egg, plus 1 yolk (for 4 servings)",
            ),
            (
                "1 tbsp + 1 tsp oil",
                4,
                8,
                "1 tbsp + 1 tsp oil (for 4 servings)",
            ),
            ("0 eggs", 4, 8, "0 eggs (for 4 servings)"),
            ("1/8 tsp clove", 12, 1, "1/8 tsp clove (for 12 servings)"),
            ("salt to taste", 4, 8, "salt to taste"),
            ("2 cups flour", 4, 4, "2 cups flour"),
            // Into another unit of the same measure, as the scaler writes
            // it: still the amount, exactly.
            ("600 g potatoes", 4, 8, "1.2 kg potatoes"),
            ("750 ml water", 4, 8, "1.5 l water"),
            ("1.5 l stock", 6, 2, "500 ml stock"),
            ("400 g mushrooms", 4, 8, "800 g mushrooms"),
            // Things counted, whole or marked.
            ("2 eggs", 4, 6, "3 eggs"),
            ("1 egg", 4, 2, "1 egg (for 4 servings)"),
            ("3 cloves garlic", 4, 6, "3 cloves garlic (for 4 servings)"),
            ("1 pinch salt", 4, 3, "1 pinch salt (for 4 servings)"),
            ("2-3 carrots", 1, 2, "2-3 carrots (for 1 serving)"),
        ];
        for (line, from, to, want) in cases {
            assert_eq!(for_servings(line, from, to), want, "{line}: {from} to {to}");
        }
    }

    #[test]
    fn a_line_brought_in_for_other_servings_reads_as_the_base_line_it_came_from() {
        let base = vec!["2 cups flour".to_owned(), "1 (400 g) can".to_owned()];
        let mine = vec![
            "4 cups flour".to_owned(),
            "1 (400 g) can (for 4 servings)".to_owned(),
            "a pinch of salt".to_owned(),
        ];
        let (read, read_as) = canonical(&base, &mine, Some(4), Some(8));
        assert_eq!(read, ["2 cups flour", "1 (400 g) can", "a pinch of salt"]);
        assert_eq!(read_as.len(), 2);
        let mut blocks = vec![Block::Clean {
            origin: Origin::Base,
            base: read[..2].to_vec(),
            lines: read[..2].to_vec(),
            other: None,
        }];
        restore(&mut blocks, &read_as, Origin::Mine);
        assert_eq!(blocks[0].clean().unwrap().1, &mine[..2]);
    }
}
