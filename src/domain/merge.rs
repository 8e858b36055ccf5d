//! Three-way merges of recipe versions: a fork bringing in its parent's
//! changes, and a parent taking a fork's suggestion.
//!
//! The two sides are "mine" (the recipe the new version is of) and
//! "theirs" (the one whose changes come in), each compared with their
//! common base, the version they last agreed on.
//!
//! - A scalar field (the title, each of `content::FIELDS`, the tags as a
//!   whole, the picture) changed on one side only takes that side; changed
//!   on both to the same value, that value; changed on both differently, a
//!   conflict.
//! - Ingredient lines and steps are merged by line, with the changes each
//!   side made to the base found by the diff the site shows
//!   (`diff::lcs_pairs`). Each side's changes are hunks: a range of the
//!   base's lines and what replaced it. A hunk of one side that no hunk of
//!   the other touches is applied; hunks of both sides that touch (they
//!   overlap, insert at one place, or one inserts inside the other's
//!   range) form a cluster, applied once if both sides made the same
//!   change and a conflict otherwise. Hunks that only meet at an edge
//!   (one ends at the line where the other starts) do not touch, so
//!   changes to different lines commute.
//!
//! A merge costs the diffs of the two sides against the base: in
//! proportion to the recipes' sizes (`diff::MAX_LCS_CELLS` bounds it),
//! never to the family's or the catalog's.

use super::content::{Content, Step, FIELDS};
use super::diff::lcs_pairs;

/// Which side a conflict is settled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Mine,
    Theirs,
}

/// Where a conflict is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A scalar field, by what history calls it ("title", "cook", "tags").
    Field(&'static str),
    Ingredients,
    Steps,
}

/// A change both sides made differently, as a page shows it: each side's
/// text (a field's value, or the lines of a list's conflicting range).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    pub place: Place,
    pub base: Vec<String>,
    pub mine: Vec<String>,
    pub theirs: Vec<String>,
}

/// A merge of two sides' changes since their base, with its conflicts
/// left to be chosen (`resolved`).
#[derive(Debug, Clone)]
pub struct Merge {
    mine: Content,
    theirs: Content,
    /// The scalar fields that take theirs, and the conflicting ones.
    fields: Vec<(Scalar, Outcome)>,
    ingredients: Vec<Chunk<String>>,
    steps: Vec<Chunk<Step>>,
    conflicts: Vec<Conflict>,
}

/// A scalar field of `Content` to merge.
#[derive(Debug, Clone, Copy)]
enum Scalar {
    Title,
    Field(usize),
    Tags,
    Picture,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Theirs changed it, mine did not (or both alike).
    TakeTheirs,
    /// Conflict number `n`.
    Conflict(usize),
}

/// A run of the merged list.
#[derive(Debug, Clone)]
enum Chunk<T> {
    Agreed(Vec<T>),
    /// Conflict number `conflict`, and each side's lines for it.
    Conflict {
        conflict: usize,
        mine: Vec<T>,
        theirs: Vec<T>,
    },
}

/// What a fork suggests to its parent, from the fork's `content` and the
/// parent's version they last agreed on (`base`): the fork's content but
/// its title and picture, which are the fork's own (its name, its dish),
/// so that accepting never renames the original or changes its picture.
pub fn as_suggested(base: &Content, content: &Content) -> Content {
    Content {
        title: base.title.clone(),
        picture: base.picture.clone(),
        ..content.clone()
    }
}

/// The merge of the changes from `base` to `mine` and from `base` to
/// `theirs`.
pub fn merge(base: &Content, mine: &Content, theirs: &Content) -> Merge {
    let mut conflicts = Vec::new();
    let mut fields = Vec::new();
    let scalars = [Scalar::Title]
        .into_iter()
        .chain((0..FIELDS.len()).map(Scalar::Field))
        .chain([Scalar::Tags, Scalar::Picture]);
    for scalar in scalars {
        let (b, m, t) = (scalar.shown(base), scalar.shown(mine), scalar.shown(theirs));
        if t == b || t == m {
            continue;
        }
        if m == b {
            fields.push((scalar, Outcome::TakeTheirs));
        } else {
            fields.push((scalar, Outcome::Conflict(conflicts.len())));
            let list = |v: Option<String>| v.into_iter().collect::<Vec<_>>();
            conflicts.push(Conflict {
                place: Place::Field(scalar.label()),
                base: list(b),
                mine: list(m),
                theirs: list(t),
            });
        }
    }
    let ingredients = merge_lines(
        &base.ingredients,
        &mine.ingredients,
        &theirs.ingredients,
        |conflict| {
            conflicts.push(Conflict {
                place: Place::Ingredients,
                ..conflict.shown(String::clone)
            });
            conflicts.len() - 1
        },
    );
    let steps = merge_lines(&base.steps, &mine.steps, &theirs.steps, |conflict| {
        conflicts.push(Conflict {
            place: Place::Steps,
            ..conflict.shown(Step::as_line)
        });
        conflicts.len() - 1
    });
    Merge {
        mine: mine.clone(),
        theirs: theirs.clone(),
        fields,
        ingredients,
        steps,
        conflicts,
    }
}

impl Merge {
    /// The conflicts, in the order `resolved` takes its choices.
    pub fn conflicts(&self) -> &[Conflict] {
        &self.conflicts
    }

    pub fn is_clean(&self) -> bool {
        self.conflicts.is_empty()
    }

    /// The merged content, each conflict settled by the choice at its
    /// number; `None` unless there is exactly one choice per conflict.
    pub fn resolved(&self, choices: &[Choice]) -> Option<Content> {
        if choices.len() != self.conflicts.len() {
            return None;
        }
        let takes_theirs = |outcome: Outcome| match outcome {
            Outcome::TakeTheirs => true,
            Outcome::Conflict(n) => choices[n] == Choice::Theirs,
        };
        let mut content = self.mine.clone();
        for (scalar, outcome) in &self.fields {
            if takes_theirs(*outcome) {
                scalar.copy(&self.theirs, &mut content);
            }
        }
        content.ingredients = flatten(&self.ingredients, choices);
        content.steps = flatten(&self.steps, choices);
        Some(content)
    }

    /// The merged content where it is clean.
    pub fn clean(&self) -> Option<Content> {
        self.resolved(&[])
    }
}

impl Scalar {
    fn label(self) -> &'static str {
        match self {
            Scalar::Title => "title",
            Scalar::Field(i) => FIELDS[i].label,
            Scalar::Tags => "tags",
            Scalar::Picture => "picture",
        }
    }

    /// The field as compared and shown: equal exactly when the contents
    /// agree on it.
    fn shown(self, content: &Content) -> Option<String> {
        match self {
            Scalar::Title => Some(content.title.clone()),
            Scalar::Field(i) => FIELDS[i].shown(content),
            Scalar::Tags => (!content.tags.is_empty()).then(|| content.tags.join(", ")),
            Scalar::Picture => content.picture.as_ref().map(|p| {
                format!(
                    "{} ({}x{}, picture {})",
                    p.alt,
                    p.width,
                    p.height,
                    &p.hash[..p.hash.len().min(8)]
                )
            }),
        }
    }

    fn copy(self, from: &Content, to: &mut Content) {
        match self {
            Scalar::Title => to.title = from.title.clone(),
            Scalar::Field(i) => FIELDS[i].copy(from, to),
            Scalar::Tags => to.tags = from.tags.clone(),
            Scalar::Picture => to.picture = from.picture.clone(),
        }
    }
}

/// A conflict of lines before it is given its place.
struct LineConflict<'a, T> {
    base: &'a [T],
    mine: &'a [T],
    theirs: &'a [T],
}

impl<T> LineConflict<'_, T> {
    fn shown(&self, line: impl Fn(&T) -> String) -> Conflict {
        let lines = |items: &[T]| items.iter().map(&line).collect();
        Conflict {
            place: Place::Ingredients,
            base: lines(self.base),
            mine: lines(self.mine),
            theirs: lines(self.theirs),
        }
    }
}

/// One side's change to the base: its lines `start..end` replaced by
/// `lines` (an insertion when the range is empty).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hunk<'a, T> {
    start: usize,
    end: usize,
    lines: &'a [T],
}

impl<T> Hunk<'_, T> {
    /// Whether two hunks (of different sides) change the same lines: their
    /// ranges overlap, they insert at one place, or one inserts strictly
    /// inside the other's range. Meeting at an edge is not touching.
    fn touches(&self, other: &Hunk<'_, T>) -> bool {
        let overlap = self.start.max(other.start) < self.end.min(other.end);
        let inside = |insert: &Hunk<'_, T>, range: &Hunk<'_, T>| {
            insert.start == insert.end && range.start < insert.start && insert.start < range.end
        };
        overlap
            || (self.start == self.end && other.start == other.end && self.start == other.start)
            || inside(self, other)
            || inside(other, self)
    }
}

/// The hunks that turn `base` into `side`, in order, line by line as the
/// site's diff shows them (`diff::lines`): in a run of removed lines facing
/// added ones, each removed line paired with an added one is a hunk of its
/// own (a line changed in place), and what is left over is one more (the
/// lines removed past the pairs, or those added after them).
fn hunks<'a, T: PartialEq>(base: &[T], side: &'a [T]) -> Vec<Hunk<'a, T>> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    for (pi, pj) in lcs_pairs(base, side)
        .into_iter()
        .chain([(base.len(), side.len())])
    {
        let paired = (pi - i).min(pj - j);
        for k in 0..paired {
            out.push(Hunk {
                start: i + k,
                end: i + k + 1,
                lines: &side[j + k..j + k + 1],
            });
        }
        if pi > i + paired {
            out.push(Hunk {
                start: i + paired,
                end: pi,
                lines: &side[..0],
            });
        } else if pj > j + paired {
            out.push(Hunk {
                start: pi,
                end: pi,
                lines: &side[j + paired..pj],
            });
        }
        (i, j) = (pi + 1, pj + 1);
    }
    out
}

/// `base[start..end]` with `hunks` (all inside that range) applied.
fn apply<T: Clone>(base: &[T], start: usize, end: usize, hunks: &[&Hunk<'_, T>]) -> Vec<T> {
    let mut out = Vec::new();
    let mut at = start;
    for hunk in hunks {
        out.extend_from_slice(&base[at..hunk.start]);
        out.extend_from_slice(hunk.lines);
        at = hunk.end;
    }
    out.extend_from_slice(&base[at..end]);
    out
}

/// The line merge of `mine` and `theirs` from `base`; `conflict` numbers
/// each conflict as it is found.
fn merge_lines<T: PartialEq + Clone>(
    base: &[T],
    mine: &[T],
    theirs: &[T],
    mut conflict: impl FnMut(LineConflict<'_, T>) -> usize,
) -> Vec<Chunk<T>> {
    let (ours, others) = (hunks(base, mine), hunks(base, theirs));
    // Every hunk of both sides, in the base's order; at one start, an
    // insertion before a replacement, whichever side made it, so that the
    // result does not depend on which side is which.
    let mut all: Vec<(&Hunk<'_, T>, Choice)> = ours
        .iter()
        .map(|h| (h, Choice::Mine))
        .chain(others.iter().map(|h| (h, Choice::Theirs)))
        .collect();
    all.sort_by_key(|(h, _)| (h.start, h.end));
    let mut out: Vec<Chunk<T>> = Vec::new();
    let mut agreed: Vec<T> = Vec::new();
    let mut at = 0;
    let mut next = 0;
    while next < all.len() {
        // A cluster: hunks that touch a hunk of the other side in it.
        let mut cluster = vec![all[next]];
        next += 1;
        while next < all.len()
            && cluster
                .iter()
                .any(|(h, side)| *side != all[next].1 && h.touches(all[next].0))
        {
            cluster.push(all[next]);
            next += 1;
        }
        let start = cluster.iter().map(|(h, _)| h.start).min().unwrap_or(at);
        let end = cluster.iter().map(|(h, _)| h.end).max().unwrap_or(at);
        agreed.extend_from_slice(&base[at..start]);
        at = end;
        let of = |side: Choice| -> Vec<&Hunk<'_, T>> {
            cluster
                .iter()
                .filter(|(_, s)| *s == side)
                .map(|(h, _)| *h)
                .collect()
        };
        let (mine_hunks, their_hunks) = (of(Choice::Mine), of(Choice::Theirs));
        let mine_lines = apply(base, start, end, &mine_hunks);
        let their_lines = apply(base, start, end, &their_hunks);
        if mine_hunks.is_empty() || their_hunks.is_empty() || mine_lines == their_lines {
            // One side only, or both alike: the change is applied.
            let changed = if mine_hunks.is_empty() {
                their_lines
            } else {
                mine_lines
            };
            agreed.extend(changed);
        } else {
            out.push(Chunk::Agreed(std::mem::take(&mut agreed)));
            let number = conflict(LineConflict {
                base: &base[start..end],
                mine: &mine_lines,
                theirs: &their_lines,
            });
            out.push(Chunk::Conflict {
                conflict: number,
                mine: mine_lines,
                theirs: their_lines,
            });
        }
    }
    agreed.extend_from_slice(&base[at..]);
    out.push(Chunk::Agreed(agreed));
    out.retain(|c| !matches!(c, Chunk::Agreed(lines) if lines.is_empty()));
    out
}

/// A merged list with its conflicts settled by `choices`.
fn flatten<T: Clone>(chunks: &[Chunk<T>], choices: &[Choice]) -> Vec<T> {
    let mut out = Vec::new();
    for chunk in chunks {
        match chunk {
            Chunk::Agreed(lines) => out.extend_from_slice(lines),
            Chunk::Conflict {
                conflict,
                mine,
                theirs,
            } => out.extend_from_slice(match choices[*conflict] {
                Choice::Mine => mine,
                Choice::Theirs => theirs,
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::content::Minutes;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn lines(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    fn recipe(title: &str, ingredients: &[&str]) -> Content {
        Content {
            title: title.into(),
            ingredients: lines(ingredients),
            ..Content::default()
        }
    }

    #[test]
    fn a_field_changed_on_one_side_takes_that_side() {
        let base = Content {
            cook: Some(Minutes::new(20).unwrap()),
            ..recipe("Banana bread", &["3 bananas"])
        };
        let mine = Content {
            title: "Banana bread, less sugar".into(),
            ..base.clone()
        };
        let theirs = Content {
            cook: Some(Minutes::new(35).unwrap()),
            ..base.clone()
        };
        let merged = merge(&base, &mine, &theirs).clean().expect("clean");
        assert_eq!(merged.title, "Banana bread, less sugar");
        assert_eq!(merged.cook, Some(Minutes::new(35).unwrap()));
    }

    #[test]
    fn a_field_changed_on_both_sides_differently_is_a_conflict_settled_by_the_choice() {
        let base = recipe("Dal", &[]);
        let mine = recipe("Dal tadka", &[]);
        let theirs = recipe("Red lentil dal", &[]);
        let merge = merge(&base, &mine, &theirs);
        assert_eq!(
            merge.conflicts(),
            [Conflict {
                place: Place::Field("title"),
                base: lines(&["Dal"]),
                mine: lines(&["Dal tadka"]),
                theirs: lines(&["Red lentil dal"]),
            }]
        );
        assert!(merge.clean().is_none(), "a conflict needs a choice");
        assert_eq!(merge.resolved(&[Choice::Mine]).unwrap().title, "Dal tadka");
        assert_eq!(
            merge.resolved(&[Choice::Theirs]).unwrap().title,
            "Red lentil dal"
        );
    }

    #[test]
    fn lines_changed_on_both_sides_conflict_and_the_rest_merges() {
        let base = recipe("Pancakes", &["flour", "milk", "egg", "salt"]);
        let mine = recipe("Pancakes", &["flour", "oat milk", "egg", "salt"]);
        let theirs = recipe("Pancakes", &["flour", "buttermilk", "egg", "sugar"]);
        let merge = merge(&base, &mine, &theirs);
        assert_eq!(merge.conflicts().len(), 1);
        let conflict = &merge.conflicts()[0];
        assert_eq!(conflict.place, Place::Ingredients);
        assert_eq!(conflict.base, lines(&["milk"]));
        assert_eq!(conflict.mine, lines(&["oat milk"]));
        assert_eq!(conflict.theirs, lines(&["buttermilk"]));
        let mine_wins = merge.resolved(&[Choice::Mine]).unwrap();
        assert_eq!(
            mine_wins.ingredients,
            lines(&["flour", "oat milk", "egg", "sugar"])
        );
    }

    #[test]
    fn changes_to_neighbouring_lines_merge() {
        let base = recipe("Soup", &["a", "b", "c"]);
        let mine = recipe("Soup", &["a", "B", "c"]);
        let theirs = recipe("Soup", &["a", "b", "C", "d"]);
        let merged = merge(&base, &mine, &theirs).clean().expect("clean");
        assert_eq!(merged.ingredients, lines(&["a", "B", "C", "d"]));
    }

    /// A base of distinct lines, and edits at places of it.
    #[derive(Debug, Clone)]
    struct Edit {
        /// The base range replaced (empty: an insertion).
        start: usize,
        len: usize,
        /// New lines put there.
        new: usize,
    }

    /// `base` with `edits` (in order, not touching) applied; new lines are
    /// named by `tag` and their place, so that each is distinct.
    fn edited(base: &[String], edits: &[Edit], tag: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut at = 0;
        for e in edits {
            out.extend_from_slice(&base[at..e.start]);
            out.extend((0..e.new).map(|k| format!("{tag}{}-{k}", e.start)));
            at = e.start + e.len;
        }
        out.extend_from_slice(&base[at..]);
        out
    }

    /// Edits of one side: in order, each separated from the next by at
    /// least one line it leaves alone, so that each is one hunk.
    fn side_edits(base_len: usize) -> impl Strategy<Value = Vec<Edit>> {
        proptest::collection::vec((0..3usize, 0..3usize, 0..3usize), 0..4).prop_map(move |raw| {
            let mut edits = Vec::new();
            let mut at = 0;
            for (gap, len, new) in raw {
                let start = at + gap;
                let len = len.min(base_len.saturating_sub(start));
                if start > base_len || (len == 0 && new == 0) {
                    break;
                }
                edits.push(Edit { start, len, new });
                at = start + len + 1;
            }
            edits
        })
    }

    fn base_and_two_sides() -> impl Strategy<Value = (Vec<String>, Vec<Edit>, Vec<Edit>)> {
        (0..10usize).prop_flat_map(|n| {
            let base: Vec<String> = (0..n).map(|i| format!("line{i}")).collect();
            (Just(base), side_edits(n), side_edits(n))
        })
    }

    /// A generated edit as the pieces the site's diff shows it in: each
    /// replaced line paired with a new one, then the lines removed past
    /// the pairs or the new lines added after them. Said from the edit,
    /// not found by a diff.
    #[derive(Debug, Clone)]
    struct Piece {
        start: usize,
        end: usize,
        lines: Vec<String>,
    }

    fn pieces(edits: &[Edit], tag: &str) -> Vec<Piece> {
        let mut out = Vec::new();
        for e in edits {
            let new: Vec<String> = (0..e.new)
                .map(|k| format!("{tag}{}-{k}", e.start))
                .collect();
            let paired = e.len.min(e.new);
            for (k, line) in new.iter().take(paired).enumerate() {
                out.push(Piece {
                    start: e.start + k,
                    end: e.start + k + 1,
                    lines: vec![line.clone()],
                });
            }
            let (rest_start, end) = (e.start + paired, e.start + e.len);
            if e.len > paired {
                out.push(Piece {
                    start: rest_start,
                    end,
                    lines: Vec::new(),
                });
            } else if e.new > paired {
                out.push(Piece {
                    start: end,
                    end,
                    lines: new[paired..].to_vec(),
                });
            }
        }
        out
    }

    impl Piece {
        /// The places a piece changes, on a line of the base's lines (odd,
        /// `2i + 1` for line `i`) and the gaps between them (even, `2i`
        /// before line `i`): a replacement covers its lines and the gaps
        /// inside, an insertion its gap. Two sides' pieces change the same
        /// lines exactly when their places meet: the rule stated without
        /// hunks.
        fn points(&self) -> BTreeSet<usize> {
            if self.start == self.end {
                BTreeSet::from([2 * self.start])
            } else {
                (2 * self.start + 1..2 * self.end).collect()
            }
        }
    }

    fn with_lines(base: Vec<String>, ingredients: Vec<String>) -> (Content, Content) {
        (
            Content {
                ingredients: base,
                ..Content::default()
            },
            Content {
                ingredients,
                ..Content::default()
            },
        )
    }

    /// A recipe's scalar fields drawn from few values, so that sides often
    /// agree or collide: the title, cook minutes, the summary and the tags.
    fn scalars() -> impl Strategy<Value = (usize, Option<u32>, Option<usize>, Vec<usize>)> {
        (
            0..3usize,
            proptest::option::of(prop_oneof![Just(20u32), Just(35)]),
            proptest::option::of(0..2usize),
            proptest::collection::vec(0..3usize, 0..3),
        )
    }

    fn with_scalars(
        (title, cook, summary, tags): (usize, Option<u32>, Option<usize>, Vec<usize>),
    ) -> Content {
        Content {
            title: format!("Title {title}"),
            cook: cook.map(|m| Minutes::new(i64::from(m)).unwrap()),
            summary: summary.map(|s| format!("Summary {s}")),
            tags: tags.iter().map(|t| format!("tag{t}")).collect(),
            ..Content::default()
        }
    }

    /// Each field a recipe's scalars were drawn for, as the merge sees it.
    fn fields(c: &Content) -> [String; 4] {
        [
            c.title.clone(),
            format!("{:?}", c.cook),
            format!("{:?}", c.summary),
            format!("{:?}", c.tags),
        ]
    }

    /// Step lines of `lines`, in sections as the form writes them.
    fn with_steps(lines: &[String]) -> Content {
        Content {
            steps: lines
                .iter()
                .map(|text| Step {
                    section: None,
                    text: text.clone(),
                })
                .collect(),
            ..Content::default()
        }
    }

    proptest! {
        #[test]
        fn each_scalar_takes_the_side_that_changed_it_and_conflicts_only_when_both_did_differently(
            base in scalars(), mine in scalars(), theirs in scalars()
        ) {
            let (base, mine, theirs) = (with_scalars(base), with_scalars(mine), with_scalars(theirs));
            let m = merge(&base, &mine, &theirs);
            let (b, mi, th) = (fields(&base), fields(&mine), fields(&theirs));
            let conflicting: Vec<usize> = (0..4)
                .filter(|&i| mi[i] != b[i] && th[i] != b[i] && mi[i] != th[i])
                .collect();
            prop_assert_eq!(m.conflicts().len(), conflicting.len());
            let mine_wins = m.resolved(&vec![Choice::Mine; conflicting.len()]).expect("resolved");
            let theirs_win = m.resolved(&vec![Choice::Theirs; conflicting.len()]).expect("resolved");
            let (mw, tw) = (fields(&mine_wins), fields(&theirs_win));
            for i in 0..4 {
                // A field only one side changed takes that side's value,
                // whatever the choices; a conflicting one, the chosen side's.
                let clean = if th[i] == b[i] { &mi[i] } else { &th[i] };
                match conflicting.contains(&i) {
                    true => {
                        prop_assert_eq!(&mw[i], &mi[i]);
                        prop_assert_eq!(&tw[i], &th[i]);
                    }
                    false => {
                        prop_assert_eq!(&mw[i], clean);
                        prop_assert_eq!(&tw[i], clean);
                    }
                }
            }
        }

        #[test]
        fn steps_merge_by_line_as_ingredients_do((base, a, b) in base_and_two_sides()) {
            let (mine, theirs) = (edited(&base, &a, "m"), edited(&base, &b, "t"));
            let as_steps = merge(&with_steps(&base), &with_steps(&mine), &with_steps(&theirs));
            let (base_c, mine_c) = with_lines(base.clone(), mine);
            let (_, theirs_c) = with_lines(base, theirs);
            let as_lines = merge(&base_c, &mine_c, &theirs_c);
            prop_assert_eq!(as_steps.conflicts().len(), as_lines.conflicts().len());
            let choices = vec![Choice::Theirs; as_lines.conflicts().len()];
            let steps: Vec<String> = as_steps
                .resolved(&choices)
                .expect("resolved")
                .steps
                .into_iter()
                .map(|s| s.text)
                .collect();
            prop_assert_eq!(steps, as_lines.resolved(&choices).expect("resolved").ingredients);
        }

        #[test]
        fn identical_changes_among_others_merge_once((base, a, b) in base_and_two_sides()) {
            // Both sides make a's changes; theirs also makes b's where they
            // touch none of a's. The shared changes come in once, cleanly.
            let shared = pieces(&a, "x");
            let extra: Vec<Edit> = b
                .into_iter()
                .filter(|e| {
                    let p = pieces(std::slice::from_ref(e), "t");
                    p.iter().all(|x| shared.iter().all(|y| x.points().is_disjoint(&y.points())))
                })
                .collect();
            let mine = edited(&base, &a, "x");
            let mut both: Vec<Edit> = a.iter().cloned().chain(extra.iter().cloned()).collect();
            both.sort_by_key(|e| (e.start, e.len));
            // Edits of two lists may overlap or abut once put in one; such
            // a case is no longer one side's edit, and is left out.
            prop_assume!(both.windows(2).all(|w| w[0].start + w[0].len < w[1].start));
            // a's new lines read the same on both sides ("x"), b's are
            // theirs alone ("t").
            let theirs: Vec<String> = {
                let mut out = Vec::new();
                let mut at = 0;
                for e in &both {
                    out.extend_from_slice(&base[at..e.start]);
                    let tag = if a.iter().any(|x| x.start == e.start && x.len == e.len && x.new == e.new) { "x" } else { "t" };
                    out.extend((0..e.new).map(|k| format!("{tag}{}-{k}", e.start)));
                    at = e.start + e.len;
                }
                out.extend_from_slice(&base[at..]);
                out
            };
            let (base_c, mine_c) = with_lines(base, mine);
            let (_, theirs_c) = with_lines(Vec::new(), theirs.clone());
            let merged = merge(&base_c, &mine_c, &theirs_c).clean().expect("clean");
            prop_assert_eq!(merged.ingredients, theirs);
        }

        #[test]
        fn taking_one_sides_changes_returns_that_side((base, a, _) in base_and_two_sides()) {
            let mine = edited(&base, &a, "m");
            let (base, mine) = with_lines(base, mine);
            let merged = merge(&base, &base, &mine).clean().expect("clean");
            prop_assert_eq!(&merged, &mine);
            let merged = merge(&base, &mine, &base).clean().expect("clean");
            prop_assert_eq!(&merged, &mine);
        }

        #[test]
        fn identical_changes_merge_cleanly((base, a, _) in base_and_two_sides()) {
            let both = edited(&base, &a, "x");
            let (base, both) = with_lines(base, both);
            let merged = merge(&base, &both, &both).clean().expect("clean");
            prop_assert_eq!(merged, both);
        }

        #[test]
        fn a_conflict_is_reported_exactly_when_both_sides_changed_the_same_lines_differently(
            (base, a, b) in base_and_two_sides()
        ) {
            let mine = edited(&base, &a, "m");
            let theirs = edited(&base, &b, "t");
            let (pa, pb) = (pieces(&a, "m"), pieces(&b, "t"));
            // New lines are distinct per side, so two pieces that touch
            // are the same change only when both delete the same lines.
            let same = |x: &Piece, y: &Piece| x.start == y.start && x.end == y.end && x.lines.is_empty() && y.lines.is_empty();
            let touching = pa.iter().any(|x| {
                pb.iter().any(|y| !same(x, y) && !x.points().is_disjoint(&y.points()))
            });
            let (base_c, mine_c) = with_lines(base.clone(), mine.clone());
            let (_, theirs_c) = with_lines(base.clone(), theirs.clone());
            let m = merge(&base_c, &mine_c, &theirs_c);
            prop_assert_eq!(!m.is_clean(), touching);
            if !touching {
                // Changes to different lines commute, and the merge is both
                // sides' changes: its diff against each side is exactly
                // what that side lacked, the other's edits.
                let mut both: Vec<Piece> = pa.iter().chain(&pb).cloned().collect();
                both.sort_by_key(|p| (p.start, p.end));
                // A deletion both sides made is made once.
                both.dedup_by(|x, y| same(x, y));
                let expected = {
                    let mut out = Vec::new();
                    let mut at = 0;
                    for p in &both {
                        out.extend_from_slice(&base[at..p.start]);
                        out.extend(p.lines.iter().cloned());
                        at = p.end;
                    }
                    out.extend_from_slice(&base[at..]);
                    out
                };
                let merged = m.clean().expect("clean");
                prop_assert_eq!(&merged.ingredients, &expected);
                let swapped = merge(&base_c, &theirs_c, &mine_c).clean().expect("clean");
                prop_assert_eq!(&swapped.ingredients, &expected);
                // Against each side, the merge differs by exactly the other
                // side's changes: the lines it added, the base lines it removed.
                for (side, other, tag) in [(&mine, &theirs, "t"), (&theirs, &mine, "m")] {
                    let added: BTreeSet<&String> = expected.iter().filter(|l| !side.contains(l)).collect();
                    let gone: BTreeSet<&String> = side.iter().filter(|l| !expected.contains(l)).collect();
                    let other_added: BTreeSet<&String> = other.iter().filter(|l| l.starts_with(tag)).collect();
                    let other_removed: BTreeSet<&String> = base.iter().filter(|l| !other.contains(l) && side.contains(l)).collect();
                    prop_assert_eq!(added, other_added);
                    prop_assert_eq!(gone, other_removed);
                }
            } else {
                // Either choice gives a whole side's version of the conflict.
                let choices = vec![Choice::Theirs; m.conflicts().len()];
                prop_assert!(m.resolved(&choices).is_some());
            }
        }
    }
}
