//! Diffs between two versions of a recipe (or a fork and its parent).
//!
//! Ingredient lines and steps are compared by a longest common subsequence;
//! a run of removed lines facing a run of added ones is paired line by line
//! into changed lines, and those are diffed word by word. Scalar fields are
//! compared one by one (`yield 4 -> 6`, `cook 20 min -> 35 min`).
//!
//! Word diffs are bounded, so that no cook's text can make a diff slow
//! (a line of a thousand commas against another is a million-cell table):
//! a changed line whose words would take more than `MAX_LINE_WORD_CELLS`
//! is shown whole, removed then added, and one diff spends at most
//! `MAX_WORD_CELLS` on words in all, its later lines shown whole past
//! that. The writer, which needs only the summary of a change for its
//! history line, diffs no words at all (`summary`).

use std::fmt;

use super::content::{Content, ContentDraft, Step, FIELDS};

/// Cells the LCS table may have (a thousand lines against a thousand):
/// past it, the part between the common prefix and suffix is shown as
/// replaced, so a diff's time and memory are bounded whatever the input.
pub const MAX_LCS_CELLS: usize = 1 << 20;

/// The most LCS cells one changed line's word diff may take (256 words
/// against 256, past the common prefix and suffix): a longer line is
/// shown whole.
pub const MAX_LINE_WORD_CELLS: usize = 1 << 16;

/// The most LCS cells the word diffs of one recipe diff take in all,
/// four of the longest lines; its other changed lines are shown whole.
pub const MAX_WORD_CELLS: usize = 1 << 18;

/// What is left to spend on word diffs (see `MAX_WORD_CELLS`).
struct WordBudget {
    cells: usize,
}

impl WordBudget {
    /// `old` against `new` word by word, if the budget and the line's cap
    /// allow; else the whole line removed, then the whole line added.
    fn changed(&mut self, old: &str, new: &str) -> Vec<Piece<String>> {
        let whole = || vec![Piece::Removed(old.to_owned()), Piece::Added(new.to_owned())];
        if self.cells == 0 {
            return whole();
        }
        let (old_words, new_words) = (words(old), words(new));
        let cells = middle_cells(&old_words, &new_words);
        if cells > MAX_LINE_WORD_CELLS || cells > self.cells {
            return whole();
        }
        self.cells -= cells;
        diff(&old_words, &new_words)
    }
}

/// The cells `lcs_pairs` fills for `old` against `new`: the product of
/// the lengths of their middles, past the common prefix and suffix.
fn middle_cells<T: PartialEq>(old: &[T], new: &[T]) -> usize {
    let (prefix, suffix) = common_ends(old, new);
    (old.len() - prefix - suffix).saturating_mul(new.len() - prefix - suffix)
}

/// How many items `old` and `new` share at their start, and then at their
/// end (never overlapping the start).
fn common_ends<T: PartialEq>(old: &[T], new: &[T]) -> (usize, usize) {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    (prefix, suffix)
}

/// The pairs `(i, j)` of a longest common subsequence of `old` and `new`,
/// in order. The common prefix and suffix are matched first; the rest is
/// quadratic in time and space, up to `MAX_LCS_CELLS`, beyond which it is
/// left unmatched (all of it removed, then all of it added).
pub fn lcs_pairs<T: PartialEq>(old: &[T], new: &[T]) -> Vec<(usize, usize)> {
    let (prefix, suffix) = common_ends(old, new);
    let (old_middle, new_middle) = (
        &old[prefix..old.len() - suffix],
        &new[prefix..new.len() - suffix],
    );
    let mut pairs: Vec<(usize, usize)> = (0..prefix).map(|i| (i, i)).collect();
    if old_middle.len().saturating_mul(new_middle.len()) <= MAX_LCS_CELLS {
        pairs.extend(
            lcs_table(old_middle, new_middle)
                .into_iter()
                .map(|(i, j)| (prefix + i, prefix + j)),
        );
    }
    let (old_tail, new_tail) = (old.len() - suffix, new.len() - suffix);
    pairs.extend((0..suffix).map(|k| (old_tail + k, new_tail + k)));
    pairs
}

/// The LCS by the textbook table.
fn lcs_table<T: PartialEq>(old: &[T], new: &[T]) -> Vec<(usize, usize)> {
    let (n, m) = (old.len(), new.len());
    // lengths[i][j]: the LCS length of old[i..] and new[j..].
    let mut lengths = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lengths[i][j] = if old[i] == new[j] {
                lengths[i + 1][j + 1] + 1
            } else {
                lengths[i + 1][j].max(lengths[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut pairs = Vec::new();
    while i < n && j < m {
        if old[i] == new[j] {
            pairs.push((i, j));
            i += 1;
            j += 1;
        } else if lengths[i + 1][j] >= lengths[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    pairs
}

/// A piece of a diff: kept, added or removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece<T> {
    Same(T),
    Added(T),
    Removed(T),
}

/// The edit script from `old` to `new`: removals before additions where
/// both happen at one place.
pub fn diff<T: PartialEq + Clone>(old: &[T], new: &[T]) -> Vec<Piece<T>> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    for (pi, pj) in lcs_pairs(old, new)
        .into_iter()
        .chain([(old.len(), new.len())])
    {
        out.extend(old[i..pi].iter().cloned().map(Piece::Removed));
        out.extend(new[j..pj].iter().cloned().map(Piece::Added));
        if pi < old.len() {
            out.push(Piece::Same(old[pi].clone()));
        }
        (i, j) = (pi + 1, pj + 1);
    }
    out
}

/// One line of a list diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineChange {
    Same(String),
    Added(String),
    Removed(String),
    /// A line rewritten in place: its words, kept, added and removed.
    Changed(Vec<Piece<String>>),
}

/// A scalar field that changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldChange {
    pub field: &'static str,
    pub from: Option<String>,
    pub to: Option<String>,
}

impl fmt::Display for FieldChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".into());
        write!(
            f,
            "{} {} -> {}",
            self.field,
            show(&self.from),
            show(&self.to)
        )
    }
}

/// Everything that differs between two versions.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecipeDiff {
    pub fields: Vec<FieldChange>,
    pub ingredients: Vec<LineChange>,
    pub steps: Vec<LineChange>,
}

impl RecipeDiff {
    /// Whether the two versions say the same.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
            && self
                .ingredients
                .iter()
                .all(|l| matches!(l, LineChange::Same(_)))
            && self.steps.iter().all(|l| matches!(l, LineChange::Same(_)))
    }

    /// A one-line account of what changed: `title, yield, 2 ingredients, 1 step`.
    pub fn summary(&self) -> String {
        let mut parts: Vec<String> = self.fields.iter().map(|f| f.field.to_owned()).collect();
        let count = |lines: &[LineChange]| {
            lines
                .iter()
                .filter(|l| !matches!(l, LineChange::Same(_)))
                .count()
        };
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        match count(&self.ingredients) {
            0 => {}
            n => parts.push(plural(n, "ingredient", "ingredients")),
        }
        match count(&self.steps) {
            0 => {}
            n => parts.push(plural(n, "step", "steps")),
        }
        if parts.is_empty() {
            "no change to the recipe".into()
        } else {
            parts.join(", ")
        }
    }
}

/// Words, the spaces between them, and each punctuation mark on its own,
/// so that `cumin,` shares `cumin` with `cumin` and the pieces rebuild the
/// line exactly.
fn words(line: &str) -> Vec<String> {
    #[derive(PartialEq)]
    enum Class {
        Word,
        Space,
        Mark,
    }
    let class = |c: char| match c {
        c if c.is_alphanumeric() || c == '/' || c == '.' => Class::Word,
        c if c.is_whitespace() => Class::Space,
        _ => Class::Mark,
    };
    let mut out: Vec<String> = Vec::new();
    let mut last: Option<Class> = None;
    for c in line.chars() {
        let this = class(c);
        match out.last_mut() {
            Some(current) if last.as_ref() == Some(&this) && this != Class::Mark => current.push(c),
            _ => out.push(c.to_string()),
        }
        last = Some(this);
    }
    out
}

/// A list diff, with facing runs of removed and added lines paired into
/// changed lines (each diffed by words, within `MAX_WORD_CELLS`).
pub fn lines(old: &[String], new: &[String]) -> Vec<LineChange> {
    lines_within(
        old,
        new,
        &mut WordBudget {
            cells: MAX_WORD_CELLS,
        },
    )
}

/// `lines`, spending on word diffs from `budget`.
fn lines_within(old: &[String], new: &[String], budget: &mut WordBudget) -> Vec<LineChange> {
    let pieces = diff(old, new);
    let mut out = Vec::new();
    let mut at = 0;
    while at < pieces.len() {
        match &pieces[at] {
            Piece::Same(line) => {
                out.push(LineChange::Same(line.clone()));
                at += 1;
            }
            _ => {
                let removed: Vec<&String> = pieces[at..]
                    .iter()
                    .map_while(|p| match p {
                        Piece::Removed(l) => Some(l),
                        _ => None,
                    })
                    .collect();
                let added: Vec<&String> = pieces[at + removed.len()..]
                    .iter()
                    .map_while(|p| match p {
                        Piece::Added(l) => Some(l),
                        _ => None,
                    })
                    .collect();
                let paired = removed.len().min(added.len());
                for k in 0..paired {
                    out.push(LineChange::Changed(budget.changed(removed[k], added[k])));
                }
                out.extend(
                    removed[paired..]
                        .iter()
                        .map(|l| LineChange::Removed((*l).clone())),
                );
                out.extend(
                    added[paired..]
                        .iter()
                        .map(|l| LineChange::Added((*l).clone())),
                );
                at += removed.len() + added.len();
            }
        }
    }
    out
}

/// The diff from `old` to `new`, its changed lines diffed by words
/// within `MAX_WORD_CELLS`.
pub fn recipes(old: &Content, new: &Content) -> RecipeDiff {
    drafts(old.as_draft(), new.as_draft())
}

/// `recipes`, of drafts: what a merge not parsed yet would change (a
/// bring-in's page shows it even past a limit, with why it cannot be
/// saved as it is).
pub fn drafts(old: &ContentDraft, new: &ContentDraft) -> RecipeDiff {
    recipes_within(
        old,
        new,
        &mut WordBudget {
            cells: MAX_WORD_CELLS,
        },
    )
}

/// What changed from `old` to `new`, in a line (`RecipeDiff::summary`),
/// with no word diffs: what the writer needs for a version's history line,
/// at the cost of the line diffs alone.
pub fn summary(old: &Content, new: &Content) -> String {
    recipes_within(old.as_draft(), new.as_draft(), &mut WordBudget { cells: 0 }).summary()
}

fn recipes_within(old: &ContentDraft, new: &ContentDraft, budget: &mut WordBudget) -> RecipeDiff {
    let mut fields = Vec::new();
    let mut field = |name: &'static str, from: Option<String>, to: Option<String>| {
        if from != to {
            fields.push(FieldChange {
                field: name,
                from,
                to,
            });
        }
    };
    field("title", Some(old.title.clone()), Some(new.title.clone()));
    for scalar in FIELDS {
        field(scalar.label, scalar.shown_in(old), scalar.shown_in(new));
    }
    let tags = |c: &ContentDraft| (!c.tags.is_empty()).then(|| c.tags.join(", "));
    field("tags", tags(old), tags(new));
    let picture = |c: &ContentDraft| {
        c.picture
            .as_ref()
            .map(|p| format!("{} ({}x{}, {})", p.alt, p.width, p.height, &p.hash[..8]))
    };
    field("picture", picture(old), picture(new));
    let steps = |c: &ContentDraft| c.steps.iter().map(Step::as_line).collect::<Vec<_>>();
    RecipeDiff {
        fields,
        ingredients: lines_within(&old.ingredients, &new.ingredients, budget),
        steps: lines_within(&steps(old), &steps(new), budget),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::content::{Minutes, Yield};

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_longest_common_subsequence_is_found() {
        let old = strings(&["a", "b", "c", "d"]);
        let new = strings(&["a", "c", "x", "d"]);
        assert_eq!(lcs_pairs(&old, &new), [(0, 0), (2, 1), (3, 3)]);
        assert_eq!(lcs_pairs::<String>(&[], &new), []);
    }

    #[test]
    fn a_diff_past_the_table_limit_keeps_prefix_and_suffix_and_replaces_the_middle() {
        // 3,000 against 3,000 different words: nine million cells, over the
        // limit; the first and last words are common.
        let old: Vec<String> = (0..3_002).map(|i| format!("old{i}")).collect();
        let mut new: Vec<String> = (0..3_002).map(|i| format!("new{i}")).collect();
        new[0] = old[0].clone();
        new[3_001] = old[3_001].clone();
        let pairs = lcs_pairs(&old, &new);
        assert_eq!(pairs, [(0, 0), (3_001, 3_001)]);
        let pieces = diff(&old, &new);
        assert_eq!(pieces.len(), 2 + 3_000 * 2);
        assert_eq!(pieces[1], Piece::Removed("old1".to_owned()));
        // Under the limit, the middle is still matched.
        let a = strings(&["x", "a", "b", "c", "y"]);
        let b = strings(&["x", "b", "z", "c", "y"]);
        assert_eq!(lcs_pairs(&a, &b), [(0, 0), (2, 1), (3, 3), (4, 4)]);
    }

    #[test]
    fn a_rewritten_line_is_diffed_word_by_word() {
        let old = strings(&["2 eggs", "1 tsp cumin", "salt"]);
        let new = strings(&["2 eggs", "2 tsp cumin, toasted", "salt", "pepper"]);
        let diff = lines(&old, &new);
        assert_eq!(diff[0], LineChange::Same("2 eggs".into()));
        let LineChange::Changed(words) = &diff[1] else {
            panic!("{diff:?}");
        };
        assert!(words.contains(&Piece::Removed("1".into())));
        assert!(words.contains(&Piece::Added("2".into())));
        assert!(words.contains(&Piece::Same("cumin".into())));
        assert!(words.contains(&Piece::Added("toasted".into())));
        assert_eq!(diff[3], LineChange::Added("pepper".into()));
        // The word pieces rebuild both lines.
        let rebuild = |keep: fn(&Piece<String>) -> Option<&String>| {
            words.iter().filter_map(keep).cloned().collect::<String>()
        };
        assert_eq!(
            rebuild(|p| match p {
                Piece::Same(w) | Piece::Removed(w) => Some(w),
                _ => None,
            }),
            "1 tsp cumin"
        );
        assert_eq!(
            rebuild(|p| match p {
                Piece::Same(w) | Piece::Added(w) => Some(w),
                _ => None,
            }),
            "2 tsp cumin, toasted"
        );
    }

    /// A line of a thousand commas against another: a million cells if
    /// diffed by words. Shown whole instead, and a diff of many such lines
    /// spends no more than its budget.
    #[test]
    fn long_changed_lines_are_shown_whole_and_a_diff_spends_a_bounded_budget() {
        let commas = |tail: &str| format!("{}{tail}", ",".repeat(1_024));
        let old = vec![commas("a"); 240];
        let new: Vec<String> = (0..240).map(|i| format!("x{i}{}", commas("b"))).collect();
        let diff = lines(&old, &new);
        assert_eq!(diff.len(), 240);
        for line in &diff {
            let LineChange::Changed(pieces) = line else {
                panic!("{line:?}");
            };
            assert_eq!(pieces.len(), 2, "shown whole: {pieces:?}");
        }
        // Lines under the cap are diffed by words until the budget is spent.
        let words_each = 100;
        let long = |tag: &str| {
            (0..words_each)
                .map(|w| format!("{tag}{w}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let old = vec![long("a"); 20];
        let new = vec![long("b"); 20];
        let mut budget = WordBudget {
            cells: MAX_WORD_CELLS,
        };
        let diff = lines_within(&old, &new, &mut budget);
        let by_words = diff
            .iter()
            .filter(|line| matches!(line, LineChange::Changed(p) if p.len() > 2))
            .count();
        let cells_each = (2 * words_each - 1) * (2 * words_each - 1);
        assert!(cells_each <= MAX_LINE_WORD_CELLS);
        assert_eq!(by_words, MAX_WORD_CELLS / cells_each);
        assert!(budget.cells < cells_each);
        // The summary diffs no words, and says the same.
        let content = |lines: Vec<String>| {
            ContentDraft {
                title: "Dal".into(),
                ingredients: lines,
                ..ContentDraft::default()
            }
            .normalized()
            .unwrap()
        };
        let (a, b) = (content(old), content(new));
        assert_eq!(summary(&a, &b), recipes(&a, &b).summary());
        assert_eq!(summary(&a, &b), "20 ingredients");
    }

    #[test]
    fn field_changes_read_like_a_cook_would_say_them() {
        let old = ContentDraft {
            title: "Dal".into(),
            recipe_yield: Yield {
                servings: Some(4),
                text: None,
            },
            cook: Some(Minutes::new(20).unwrap()),
            ..ContentDraft::default()
        };
        let new = ContentDraft {
            recipe_yield: Yield {
                servings: Some(6),
                text: None,
            },
            cook: Some(Minutes::new(35).unwrap()),
            ..old.clone()
        };
        let diff = drafts(&old, &new);
        let shown: Vec<String> = diff.fields.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["servings 4 -> 6", "cook 20 min -> 35 min"]);
        assert_eq!(diff.summary(), "servings, cook");
        assert!(drafts(&old, &old).is_empty());
        let (old, new) = (old.normalized().unwrap(), new.normalized().unwrap());
        assert_eq!(recipes(&old, &new), diff);
    }
}
