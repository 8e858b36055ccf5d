//! Three-way merges of sequences, in blocks as diff3 takes them.
//!
//! Each side's changes to the base are found by the diff the site shows
//! (`diff::lcs_pairs`): a maximal run of the base's lines that the side
//! does not keep, with what the side has in its place, is one hunk, never
//! cut into one-line pieces. Hunks of both sides that touch (their ranges
//! overlap, they insert at one place, or one inserts strictly inside the
//! other's range) form a cluster with every hunk that touches them in
//! turn; the cluster's region of the base is then one block: taken from
//! the side that changed it alone, once where both changed it alike, and
//! a conflict otherwise, holding each side's lines for the whole region.
//! So choosing a side for a conflict gives exactly that side's lines.
//!
//! Where this is kinder than `git merge-file`: hunks that only meet at an
//! edge (one ends at the line where the other starts, or one inserts at
//! an edge of a run the other replaced line for line, or with fewer) do
//! not touch, so changes to neighbouring lines merge cleanly; git's merge
//! reports them as one conflict. A run that grew may have inserted at
//! either edge, so an insertion there touches it: two additions at one
//! place are always asked about. Where one side's change of a region
//! holds the other's whole (the same new lines at its start, the rest the
//! base's; or the base's at its start and the same new lines at its end),
//! the region takes the larger change, which loses nothing of either. And
//! for the method: a section heading a side adds, removes or renames at
//! the start of a run of steps it rewrote is a hunk of its own
//! (`is_anchor`), so that a conflict over a step's words never takes the
//! step out of the section either side put it in; a heading deleted with
//! its steps stays in their conflict.

use super::super::diff::lcs_pairs;

/// Where a merged line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Origin {
    /// The base's, which neither side changed.
    Base,
    Mine,
    Theirs,
    /// A change both sides made alike.
    Both,
    /// Written by hand in the merge's form.
    Hand,
}

/// A region of the merge.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Block<T> {
    /// What the region becomes without asking: `lines` from `origin`, in
    /// place of the base's `base`.
    Clean {
        origin: Origin,
        base: Vec<T>,
        lines: Vec<T>,
        /// Where the other side changed the region too, in a change these
        /// lines hold whole (`holds`): its lines.
        other: Option<Vec<T>>,
    },
    /// A region both sides changed differently: each side's lines for the
    /// whole of it.
    Conflict {
        base: Vec<T>,
        mine: Vec<T>,
        theirs: Vec<T>,
    },
}

impl<T> Block<T> {
    /// What the region becomes without asking, where it does.
    pub fn clean(&self) -> Option<(Origin, &[T])> {
        match self {
            Block::Clean { origin, lines, .. } => Some((*origin, lines)),
            Block::Conflict { .. } => None,
        }
    }
}

impl<T> Block<T> {
    /// The region as `side` has it (`Mine` or `Theirs`): the blocks, read
    /// this way in order, are that side whole.
    pub fn side(&self, side: Origin) -> &[T] {
        match self {
            Block::Clean {
                origin,
                base,
                lines,
                other,
            } => match (origin, side) {
                (Origin::Mine, Origin::Theirs) | (Origin::Theirs, Origin::Mine) => {
                    other.as_deref().unwrap_or(base)
                }
                _ => lines,
            },
            Block::Conflict { mine, theirs, .. } => match side {
                Origin::Theirs => theirs,
                _ => mine,
            },
        }
    }
}

/// One side's change to the base: its lines `start..end` replaced by the
/// side's `lines` (an insertion when the range is empty).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hunk {
    start: usize,
    end: usize,
    lines: (usize, usize),
}

impl Hunk {
    /// Whether it puts more lines in than it takes out: a run that grew,
    /// which may have inserted at either of its edges.
    fn grew(&self) -> bool {
        self.lines.1 - self.lines.0 > self.end - self.start
    }

    /// Whether two hunks (of different sides) change the same lines: their
    /// ranges overlap, they insert at one place, one inserts strictly
    /// inside the other's range, or one inserts at an edge of a range the
    /// other grew. Meeting at an edge is not touching otherwise.
    fn touches(&self, other: &Hunk) -> bool {
        let overlap = self.start.max(other.start) < self.end.min(other.end);
        let inside = |insert: &Hunk, range: &Hunk| {
            insert.start == insert.end && range.start < insert.start && insert.start < range.end
        };
        let at_grown_edge = |insert: &Hunk, range: &Hunk| {
            insert.start == insert.end
                && range.start < range.end
                && range.grew()
                && (insert.start == range.start || insert.start == range.end)
        };
        overlap
            || (self.start == self.end && other.start == other.end && self.start == other.start)
            || inside(self, other)
            || inside(other, self)
            || at_grown_edge(self, other)
            || at_grown_edge(other, self)
    }
}

/// Whether `larger`, one side's lines for a region of `base`, holds the
/// whole of the change `smaller` (the other side's) made to it: `smaller`
/// is new lines that `larger` starts with, then the base's last lines
/// unchanged; or the base's first lines unchanged, then new lines that
/// `larger` ends with. Taking `larger` then loses nothing of either side.
/// The new lines must be some: a deletion is never held by another
/// change.
pub(super) fn holds<T: PartialEq>(base: &[T], larger: &[T], smaller: &[T]) -> bool {
    let (b, s, l) = (base.len(), smaller.len(), larger.len());
    let new_then_base = (1..=s.min(l))
        .any(|k| smaller[..k] == larger[..k] && s - k <= b && smaller[k..] == base[b - (s - k)..]);
    let base_then_new = (0..s).any(|k| {
        k <= b && s - k <= l && smaller[..k] == base[..k] && smaller[k..] == larger[l - (s - k)..]
    });
    new_then_base || base_then_new
}

/// The hunks that turn `base` into `side`, in order: each maximal run of
/// unmatched lines is one, but for anchors (`is_anchor`) that lead a run
/// replacing some of the base's lines, which are a hunk of their own.
fn hunks<T: PartialEq>(base: &[T], side: &[T], is_anchor: &impl Fn(&T) -> bool) -> Vec<Hunk> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    for (pi, pj) in lcs_pairs(base, side)
        .into_iter()
        .chain([(base.len(), side.len())])
    {
        if pi > i || pj > j {
            let lead_base = base[i..pi].iter().take_while(|t| is_anchor(t)).count();
            let lead_side = side[j..pj].iter().take_while(|t| is_anchor(t)).count();
            // Split only where the side rewrote steps after the heading:
            // a heading deleted with its steps, or added with new ones,
            // goes with them.
            if (lead_base > 0 || lead_side > 0) && i + lead_base < pi && j + lead_side < pj {
                out.push(Hunk {
                    start: i,
                    end: i + lead_base,
                    lines: (j, j + lead_side),
                });
                out.push(Hunk {
                    start: i + lead_base,
                    end: pi,
                    lines: (j + lead_side, pj),
                });
            } else {
                out.push(Hunk {
                    start: i,
                    end: pi,
                    lines: (j, pj),
                });
            }
        }
        (i, j) = (pi + 1, pj + 1);
    }
    out.retain(|h| h.start < h.end || h.lines.0 < h.lines.1);
    out
}

/// `base[start..end]` with `hunks` of `side` (all inside that range, in
/// order) applied.
fn apply<T: Clone>(base: &[T], side: &[T], start: usize, end: usize, hunks: &[Hunk]) -> Vec<T> {
    let mut out = Vec::new();
    let mut at = start;
    for hunk in hunks {
        out.extend_from_slice(&base[at..hunk.start]);
        out.extend_from_slice(&side[hunk.lines.0..hunk.lines.1]);
        at = hunk.end;
    }
    out.extend_from_slice(&base[at..end]);
    out
}

/// The merge of `mine` and `theirs` from `base`, in blocks that cover the
/// base in order. `is_anchor` names the lines that lead a hunk of their
/// own (section headings); `|_| false` for plain lines.
pub fn merge3<T: PartialEq + Clone>(
    base: &[T],
    mine: &[T],
    theirs: &[T],
    is_anchor: impl Fn(&T) -> bool,
) -> Vec<Block<T>> {
    let all = both_sides_hunks(base, mine, theirs, &is_anchor);
    let mut out: Vec<Block<T>> = Vec::new();
    let mut at = 0;
    let mut next = 0;
    while next < all.len() {
        let cluster = cluster_from(&all, &mut next);
        let start = cluster.iter().map(|(h, _)| h.start).min().unwrap_or(at);
        let end = cluster.iter().map(|(h, _)| h.end).max().unwrap_or(at);
        if at < start {
            out.push(unchanged(&base[at..start]));
        }
        at = end;
        out.push(cluster_block(base, mine, theirs, &cluster, start, end));
    }
    if at < base.len() {
        out.push(unchanged(&base[at..]));
    }
    out
}

/// Every hunk of both sides, in the base's order; at one start, an
/// insertion before a replacement, whichever side made it, so that the
/// blocks do not depend on which side is which.
fn both_sides_hunks<T: PartialEq>(
    base: &[T],
    mine: &[T],
    theirs: &[T],
    is_anchor: &impl Fn(&T) -> bool,
) -> Vec<(Hunk, Origin)> {
    let ours = hunks(base, mine, is_anchor);
    let others = hunks(base, theirs, is_anchor);
    let mut all: Vec<(Hunk, Origin)> = ours
        .iter()
        .map(|h| (*h, Origin::Mine))
        .chain(others.iter().map(|h| (*h, Origin::Theirs)))
        .collect();
    all.sort_by_key(|(h, side)| (h.start, h.end, *side == Origin::Theirs));
    all
}

/// A cluster: the hunk at `next` in `all`, and those after it that touch
/// a hunk of the other side in it; `next` moves past them.
fn cluster_from(all: &[(Hunk, Origin)], next: &mut usize) -> Vec<(Hunk, Origin)> {
    let mut cluster = vec![all[*next]];
    *next += 1;
    while *next < all.len()
        && cluster
            .iter()
            .any(|(h, side)| *side != all[*next].1 && h.touches(&all[*next].0))
    {
        cluster.push(all[*next]);
        *next += 1;
    }
    cluster
}

/// The base's `lines`, which neither side changed.
fn unchanged<T: Clone>(lines: &[T]) -> Block<T> {
    Block::Clean {
        origin: Origin::Base,
        base: lines.to_vec(),
        lines: lines.to_vec(),
        other: None,
    }
}

/// The block of a cluster of hunks over `base[start..end]`: one side's
/// lines where the other changed nothing there, or where both made the
/// same change, or where one's lines hold the other's; else a conflict.
fn cluster_block<T: PartialEq + Clone>(
    base: &[T],
    mine: &[T],
    theirs: &[T],
    cluster: &[(Hunk, Origin)],
    start: usize,
    end: usize,
) -> Block<T> {
    let of = |side: Origin| -> Vec<Hunk> {
        cluster
            .iter()
            .filter(|(_, s)| *s == side)
            .map(|(h, _)| *h)
            .collect()
    };
    let (mine_hunks, their_hunks) = (of(Origin::Mine), of(Origin::Theirs));
    let mine_lines = apply(base, mine, start, end, &mine_hunks);
    let their_lines = apply(base, theirs, start, end, &their_hunks);
    let region = base[start..end].to_vec();
    let (origin, lines, other) = if their_hunks.is_empty() {
        (Origin::Mine, mine_lines, None)
    } else if mine_hunks.is_empty() {
        (Origin::Theirs, their_lines, None)
    } else if mine_lines == their_lines {
        (Origin::Both, mine_lines, None)
    } else if holds(&region, &mine_lines, &their_lines) {
        (Origin::Mine, mine_lines, Some(their_lines))
    } else if holds(&region, &their_lines, &mine_lines) {
        (Origin::Theirs, their_lines, Some(mine_lines))
    } else {
        return Block::Conflict {
            base: region,
            mine: mine_lines,
            theirs: their_lines,
        };
    };
    Block::Clean {
        origin,
        base: region,
        lines,
        other,
    }
}

/// Lines a merge would hold more often than either side does, counting
/// only what it takes without asking (`Clean` blocks): the same line added
/// at two places, or moved to two. `counted` says which lines count
/// (steps, not section headings).
pub(super) fn doubled<T: PartialEq + Clone>(
    blocks: &[Block<T>],
    mine: &[T],
    theirs: &[T],
    counted: impl Fn(&T) -> bool,
) -> Vec<T> {
    let count =
        |lines: &mut dyn Iterator<Item = &T>, line: &T| lines.filter(|l| *l == line).count();
    let clean: Vec<&T> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::Clean { lines, .. } => Some(lines),
            Block::Conflict { .. } => None,
        })
        .flatten()
        .collect();
    let mut out: Vec<T> = Vec::new();
    for line in &clean {
        if !counted(line) || out.contains(line) {
            continue;
        }
        let merged = count(&mut clean.iter().copied(), line);
        let most = count(&mut mine.iter(), line).max(count(&mut theirs.iter(), line));
        if merged > most {
            out.push((*line).clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    fn plain(base: &[&str], mine: &[&str], theirs: &[&str]) -> Vec<Block<String>> {
        merge3(&lines(base), &lines(mine), &lines(theirs), |_| false)
    }

    #[test]
    fn a_replaced_run_is_one_block_not_a_line_at_a_time() {
        let blocks = plain(
            &["salt", "pepper"],
            &["sea salt", "pepper"],
            &["1 bay leaf", "salt flakes", "pepper"],
        );
        assert_eq!(
            blocks,
            vec![
                Block::Conflict {
                    base: lines(&["salt"]),
                    mine: lines(&["sea salt"]),
                    theirs: lines(&["1 bay leaf", "salt flakes"]),
                },
                Block::Clean {
                    origin: Origin::Base,
                    base: lines(&["pepper"]),
                    lines: lines(&["pepper"]),
                    other: None,
                },
            ]
        );
    }

    #[test]
    fn a_change_that_holds_the_others_whole_is_taken_without_asking() {
        // Theirs made mine's change and added a line before it: taking
        // theirs loses nothing of mine.
        let blocks = plain(&["salt"], &["sea salt"], &["1 bay leaf", "sea salt"]);
        assert_eq!(
            blocks,
            vec![Block::Clean {
                origin: Origin::Theirs,
                base: lines(&["salt"]),
                lines: lines(&["1 bay leaf", "sea salt"]),
                other: Some(lines(&["sea salt"])),
            }]
        );
        // Both made the first change, mine the next line's too.
        let blocks = plain(
            &["1 egg", "1 cup milk"],
            &["2 eggs", "1 cup buttermilk"],
            &["2 eggs", "1 cup milk"],
        );
        assert_eq!(
            blocks[0].clean().map(|(o, l)| (o, l.to_vec())),
            Some((Origin::Mine, lines(&["2 eggs", "1 cup buttermilk"])))
        );
        // A deletion is no change another holds.
        let blocks = plain(&["a", "b"], &["b"], &["A", "B"]);
        assert!(matches!(blocks[0], Block::Conflict { .. }), "{blocks:?}");
    }

    #[test]
    fn an_insertion_at_the_edge_of_a_run_the_other_side_grew_is_asked_about() {
        // Mine rewrote the last line and added one after it; theirs added
        // another line at the end: two additions at one place.
        let blocks = plain(&["a", "b"], &["a", "B", "x"], &["a", "b", "y"]);
        assert!(
            blocks.iter().any(|b| matches!(b, Block::Conflict { .. })),
            "{blocks:?}"
        );
        // A run rewritten line for line is not: the addition merges.
        let blocks = plain(&["a", "b"], &["a", "B"], &["a", "b", "y"]);
        assert!(blocks.iter().all(|b| b.clean().is_some()), "{blocks:?}");
    }

    #[test]
    fn the_blocks_read_as_either_side_are_that_side() {
        let (base, mine, theirs) = (
            lines(&["a", "b", "c", "d", "e"]),
            lines(&["a", "B", "c", "x", "e"]),
            lines(&["a", "b2", "c", "d", "e", "f"]),
        );
        let blocks = merge3(&base, &mine, &theirs, |_| false);
        for (side, whole) in [(Origin::Mine, &mine), (Origin::Theirs, &theirs)] {
            let read: Vec<String> = blocks.iter().flat_map(|b| b.side(side).to_vec()).collect();
            assert_eq!(&read, whole);
        }
    }

    #[test]
    fn an_anchor_leading_a_replaced_run_is_a_hunk_of_its_own() {
        // Mine puts the step in a new section and edits it; theirs edits
        // it otherwise: the heading comes in, and only the words conflict.
        let base = lines(&["s1", "s2"]);
        let mine = lines(&["s1", "## Sauce", "s2 mine"]);
        let theirs = lines(&["s1", "s2 theirs"]);
        let blocks = merge3(&base, &mine, &theirs, |l: &String| l.starts_with("##"));
        assert_eq!(
            blocks,
            vec![
                Block::Clean {
                    origin: Origin::Base,
                    base: lines(&["s1"]),
                    lines: lines(&["s1"]),
                    other: None,
                },
                Block::Clean {
                    origin: Origin::Mine,
                    base: vec![],
                    lines: lines(&["## Sauce"]),
                    other: None,
                },
                Block::Conflict {
                    base: lines(&["s2"]),
                    mine: lines(&["s2 mine"]),
                    theirs: lines(&["s2 theirs"]),
                },
            ]
        );
    }

    #[test]
    fn a_line_added_at_two_places_is_doubled() {
        let base = lines(&["a", "b"]);
        let mine = lines(&["x", "a", "b"]);
        let theirs = lines(&["a", "b", "x"]);
        let blocks = merge3(&base, &mine, &theirs, |_| false);
        assert_eq!(doubled(&blocks, &mine, &theirs, |_| true), lines(&["x"]));
        let alike = merge3(&base, &mine, &mine, |_| false);
        assert!(doubled(&alike, &mine, &mine, |_| true).is_empty());
    }
}
