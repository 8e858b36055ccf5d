//! Three-way merges of recipe versions: a fork bringing in its parent's
//! changes, and a parent taking a fork's suggestion.
//!
//! The two sides are "mine" (the recipe the new version is of) and
//! "theirs" (the one whose changes come in), each compared with their
//! common base, the version they last agreed on. Each part of a recipe is
//! merged by its nature:
//!
//! - A scalar field (the title, a time, the servings, the cuisine, the
//!   picture...) changed on one side only takes that side; changed on both
//!   to the same value, that value; changed on both differently, a
//!   conflict.
//! - The tags are a set: a tag either side added is in, a tag either side
//!   removed is out. They never conflict.
//! - The summary and the notes are merged by paragraph, as lists of
//!   paragraphs, when both sides changed them; otherwise the changed side's
//!   text is taken whole, as written.
//! - Ingredient lines, and the method as lines (each step a line, and a
//!   heading a line of its own where the section changes, so that a step
//!   keeps its section), are merged in blocks as diff3 takes them
//!   (`blocks`): a conflict holds each side's lines for a whole region, so
//!   choosing a side gives exactly that side's lines.
//! - A line the merge would take twice without asking (added by both at
//!   two places, or moved by both to two places) is not silently doubled:
//!   each place it comes in at is a conflict of its own (`Why::Doubled`).
//! - When the two sides are written for different servings, the lines
//!   that come from the side whose servings the merge does not keep are
//!   scaled to the merge's servings where that is plainly right, and
//!   marked with the servings they were written for where it may not be
//!   (`servings`); a conflict shows each side's lines as they would be
//!   saved, and the next merge does not take a line so brought in for a
//!   change of the cook's.
//!
//! A conflict is settled by a `Choice`: mine, theirs, both (mine first,
//! then theirs; lists and paragraphs only) or text written by hand.
//!
//! A merge costs the diffs of the two sides against the base: in
//! proportion to the recipes' sizes (`diff::MAX_LCS_CELLS` bounds it),
//! never to the family's or the catalog's.

mod blocks;
mod servings;

use std::hash::{Hash, Hasher};

pub use blocks::{merge3, Block, Origin};
pub use servings::for_servings;

use super::content::{
    method_lines, method_text, parse_method, steps_of_lines, Content, ContentDraft, ContentError,
    MethodLine, Slot, FIELDS,
};

/// How a conflict is settled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    Mine,
    Theirs,
    /// Both sides' lines, mine first (`Conflict::allows_both`).
    Both,
    /// Written by hand, as the recipe form takes the part: lines, steps
    /// apart by blank lines, paragraphs, or a field's value.
    Edited(String),
}

/// Where a conflict is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Place {
    /// A scalar field, by what history calls it ("title", "cook").
    Field(&'static str),
    /// A paragraph (or a run of them) of a Markdown field: "summary",
    /// "notes".
    Text(&'static str),
    Ingredients,
    /// The method: steps, and the headings where sections start.
    Steps,
}

impl Place {
    /// What a page or history calls the place: "cook", "ingredients".
    pub fn label(self) -> &'static str {
        match self {
            Place::Field(label) | Place::Text(label) => label,
            Place::Ingredients => "ingredients",
            Place::Steps => "method",
        }
    }
}

/// Why a region needs the cook's choice.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Why {
    /// Both sides changed it, differently.
    Changed,
    /// One side's change here would put this line in the recipe a second
    /// time: the other side added (or moved) it elsewhere.
    Doubled(String),
    /// Side `by` moved this line here, and the other side changed (or
    /// kept) it where it was: taking both would put it in twice.
    Moved { line: String, by: Origin },
}

/// A region to choose for, as a page shows it: each side's text (a
/// field's value, or the lines of the region).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    pub place: Place,
    pub why: Why,
    pub base: Vec<String>,
    pub mine: Vec<String>,
    pub theirs: Vec<String>,
    /// What the form's box for writing it by hand starts with: both sides'
    /// lines, mine first, for a list; my value for a field.
    pub prefill: String,
}

impl Conflict {
    /// Whether keeping both sides makes sense: for lines and paragraphs,
    /// not for a single value.
    pub fn allows_both(&self) -> bool {
        !matches!(self.place, Place::Field(_))
    }

    /// Whether it may be written by hand: everything but the picture,
    /// which is an upload.
    pub fn allows_edit(&self) -> bool {
        self.place != Place::Field(PICTURE)
    }

    /// A name for the conflict made from what it holds: the same conflict
    /// in another merge (a review made again after a write) has the same
    /// key, so a choice made for it can be kept.
    pub fn key(&self) -> String {
        let mut hasher = rustc_hash::FxHasher::default();
        (self.place, &self.why, &self.base, &self.mine, &self.theirs).hash(&mut hasher);
        format!("{:016x}", hasher.finish())
    }
}

/// The servings two sides are written for, when they differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Servings {
    pub mine: i64,
    pub theirs: i64,
    /// The merge's: `None` while they are a conflict still to settle.
    pub merged: Option<i64>,
}

/// Why a merge's choices cannot be saved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unresolved {
    /// A choice missing, or one too many: the form was made for another
    /// merge.
    #[error(
        "choose how to settle each change made on both sides before saving ({expected} of them)"
    )]
    Count { expected: usize },
    /// A choice conflict `conflict` cannot take, or text written by hand
    /// that is not what the field takes.
    #[error("{why}")]
    Choice { conflict: usize, why: String },
    /// Settled, the merge is content the parse refuses (`Content::parse`,
    /// every mistake): past a limit neither side passed alone (both
    /// sides' lines together too many), or text written by hand too long.
    #[error("merged, the recipe would be refused: {}", joined(.0))]
    Refused(Vec<ContentError>),
}

/// Mistakes in one line, apart by semicolons.
fn joined(mistakes: &[ContentError]) -> String {
    let each: Vec<String> = mistakes.iter().map(ContentError::to_string).collect();
    each.join("; ")
}

/// A merge of two sides' changes since their base, with its conflicts
/// left to be chosen (`resolved`).
#[derive(Debug, Clone)]
pub struct Merge {
    mine: Content,
    theirs: Content,
    /// What servings each side's ingredient lines were written for.
    written: Written,
    /// The scalar fields that take theirs, and the conflicting ones.
    scalars: Vec<(Scalar, Outcome)>,
    /// The Markdown fields both sides changed, merged by paragraph.
    texts: Vec<(usize, Vec<Part<String>>)>,
    tags: Vec<String>,
    ingredients: Vec<Part<String>>,
    steps: Vec<Part<MethodLine>>,
    conflicts: Vec<Conflict>,
}

/// What a picture's conflicts and history call it.
const PICTURE: &str = "picture";

/// A scalar field of `Content` to merge.
#[derive(Debug, Clone, Copy)]
enum Scalar {
    Title,
    Field(usize),
    Picture,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Theirs changed it, mine did not.
    TakeTheirs,
    /// Conflict number `n`.
    Conflict(usize),
}

/// A region of a merged list: taken without asking, or conflict number
/// `n` with each side's lines.
#[derive(Debug, Clone)]
enum Part<T> {
    Clean(Origin, Vec<T>),
    Conflict(usize, Vec<T>, Vec<T>),
}

/// What a fork suggests to its parent, from the fork's `content` and the
/// parent's version they last agreed on (`base`): the fork's content but
/// its title and picture, which are the fork's own (its name, its dish),
/// so that accepting never renames the original or changes its picture.
pub fn as_suggested(base: &Content, content: &Content) -> Content {
    content.with_title_and_picture_of(base)
}

/// Whether merging `theirs`' changes since `base` into `mine` would change
/// anything of `mine`: a conflict to settle, or a change that comes in. A
/// suggestion whose parent has all it changes (made the same itself) is
/// empty, as is one that sends nothing.
pub fn brings_anything(base: &Content, mine: &Content, theirs: &Content) -> bool {
    let m = merge(base, mine, theirs);
    // Compared unparsed: what the merge says, whether or not it could be
    // saved, and without the parse's cost (a fork's page asks).
    !m.is_clean() || m.draft(&[]).ok().as_ref() != Some(mine.as_draft())
}

/// The paragraphs of a Markdown text: runs of lines apart by blank lines.
pub fn paragraphs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            if !current.is_empty() {
                out.push(current.join("\n"));
                current.clear();
            }
        } else {
            current.push(line.trim_end());
        }
    }
    if !current.is_empty() {
        out.push(current.join("\n"));
    }
    out
}

/// Collects the conflicts of a merge as they are found, numbering them.
struct Conflicts(Vec<Conflict>);

impl Conflicts {
    fn add(&mut self, conflict: Conflict) -> usize {
        self.0.push(conflict);
        self.0.len() - 1
    }

    /// A list's blocks as parts, each conflicting one numbered; and a line
    /// the merge would double without asking, or one a side moved that
    /// the other changed where it was, asked about at each place it comes
    /// in (`Why::Doubled`, `Why::Moved`). `counted` says which lines count
    /// (not the end of a section), `shown` writes a line as the page shows
    /// it, and `joined` a side's lines as the form's box takes them.
    #[allow(clippy::too_many_arguments)]
    fn list<T: PartialEq + Clone>(
        &mut self,
        place: Place,
        blocks: Vec<Block<T>>,
        (mine, theirs): (&[T], &[T]),
        counted: impl Fn(&T) -> bool,
        shown: impl Fn(&T) -> String,
        joined: impl Fn(&[T]) -> String,
        saved: impl Fn(Origin, &T) -> T,
    ) -> Vec<Part<T>> {
        let doubled = blocks::doubled(&blocks, mine, theirs, &counted);
        let moved = moved_into(&blocks, &counted);
        let shown_all = |lines: &[T]| lines.iter().map(&shown).collect::<Vec<_>>();
        // Each side's lines as choosing it would save them (scaled to the
        // merge's servings), to show, and to start the box written by
        // hand with.
        let as_saved = |origin: Origin, lines: &[T]| {
            lines.iter().map(|l| saved(origin, l)).collect::<Vec<_>>()
        };
        let mut conflict = |why: Why, base: &[T], m: &[T], t: &[T]| {
            let (m, t) = (
                &as_saved(Origin::Mine, m)[..],
                &as_saved(Origin::Theirs, t)[..],
            );
            let both: Vec<T> = m.iter().chain(t).cloned().collect();
            self.add(Conflict {
                place,
                why,
                base: shown_all(base),
                mine: shown_all(m),
                theirs: shown_all(t),
                prefill: joined(&both),
            })
        };
        let mut parts = Vec::with_capacity(blocks.len());
        for (at, block) in blocks.iter().enumerate() {
            let (m, t) = (block.side(Origin::Mine), block.side(Origin::Theirs));
            let asked = match block {
                Block::Conflict { .. } => Some(Why::Changed),
                Block::Clean {
                    origin: origin @ (Origin::Mine | Origin::Theirs),
                    lines,
                    ..
                } => match (
                    lines.iter().find(|l| doubled.contains(l)),
                    moved.iter().find(|(i, _)| *i == at),
                ) {
                    (Some(line), _) => Some(Why::Doubled(shown(line))),
                    (None, Some((_, line))) => Some(Why::Moved {
                        line: shown(line),
                        by: *origin,
                    }),
                    (None, None) => None,
                },
                Block::Clean { .. } => None,
            };
            parts.push(match (asked, block) {
                (Some(why), Block::Clean { base, .. } | Block::Conflict { base, .. }) => {
                    Part::Conflict(conflict(why, base, m, t), m.to_vec(), t.to_vec())
                }
                (None, Block::Clean { origin, lines, .. }) => Part::Clean(*origin, lines.clone()),
                (None, Block::Conflict { .. }) => unreachable!("a conflict is asked about"),
            });
        }
        parts
    }
}

/// The clean blocks where a side moved a line to, or from, whose other
/// place is in a conflict: the side took it out of the conflict's region
/// and put it in elsewhere, or put it in the conflict's region and took it
/// out elsewhere. Taking the clean half of the move without asking, and
/// the other side's lines in the conflict, would put the line in twice,
/// or lose it.
fn moved_into<T: PartialEq>(blocks: &[Block<T>], counted: impl Fn(&T) -> bool) -> Vec<(usize, &T)> {
    let mut out: Vec<(usize, &T)> = Vec::new();
    for block in blocks {
        let Block::Conflict { base, mine, theirs } = block else {
            continue;
        };
        for (side, lines) in [(Origin::Mine, mine), (Origin::Theirs, theirs)] {
            let taken_out = base.iter().filter(|l| !lines.contains(l));
            let put_in = lines.iter().filter(|l| !base.contains(l));
            let wanted = taken_out
                .map(|l| (l, true))
                .chain(put_in.map(|l| (l, false)));
            for (line, put_in_elsewhere) in wanted.filter(|(l, _)| counted(l)) {
                for (at, other) in blocks.iter().enumerate() {
                    let Block::Clean {
                        origin,
                        base: was,
                        lines: now,
                        ..
                    } = other
                    else {
                        continue;
                    };
                    let other_half = match put_in_elsewhere {
                        true => now.contains(line) && !was.contains(line),
                        false => was.contains(line) && !now.contains(line),
                    };
                    if *origin == side && other_half && !out.iter().any(|(i, _)| *i == at) {
                        out.push((at, line));
                    }
                }
            }
        }
    }
    out
}

/// The merge of the changes from `base` to `mine` and from `base` to
/// `theirs`.
pub fn merge(base: &Content, mine: &Content, theirs: &Content) -> Merge {
    // Numbered as they come: the fields in the form's order, then the
    // ingredients, then the steps.
    let mut conflicts = Conflicts(Vec::new());
    let (scalars, texts) = merge_fields(base, mine, theirs, &mut conflicts);
    let servings = merged_servings(&scalars, mine, theirs);
    let (written, ingredients) = merge_ingredients(base, mine, theirs, servings, &mut conflicts);
    let steps = merge_steps(base, mine, theirs, &mut conflicts);
    Merge {
        mine: mine.clone(),
        theirs: theirs.clone(),
        written,
        scalars,
        texts,
        tags: merged_tags(base.tags(), mine.tags(), theirs.tags()),
        ingredients,
        steps,
        conflicts: conflicts.0,
    }
}

/// The merged Markdown fields, each by paragraph: a field's parts.
type Texts = Vec<(usize, Vec<Part<String>>)>;

/// The title, the fields and the picture: the scalars that take theirs
/// or conflict, and the Markdown fields both sides changed, merged by
/// paragraph.
fn merge_fields(
    base: &Content,
    mine: &Content,
    theirs: &Content,
    conflicts: &mut Conflicts,
) -> (Vec<(Scalar, Outcome)>, Texts) {
    let mut scalars = Vec::new();
    let mut texts = Vec::new();
    let mut scalar = |scalar: Scalar, conflicts: &mut Conflicts| {
        let (b, m, t) = (scalar.shown(base), scalar.shown(mine), scalar.shown(theirs));
        if t == b || t == m {
            return;
        }
        if m == b {
            scalars.push((scalar, Outcome::TakeTheirs));
            return;
        }
        let list = |v: Option<String>| v.into_iter().collect::<Vec<_>>();
        let n = conflicts.add(Conflict {
            place: Place::Field(scalar.label()),
            why: Why::Changed,
            base: list(b),
            mine: list(m),
            theirs: list(t),
            prefill: scalar.form_text(mine),
        });
        scalars.push((scalar, Outcome::Conflict(n)));
    };
    scalar(Scalar::Title, conflicts);
    for (i, field) in FIELDS.iter().enumerate() {
        let Slot::Markdown(get, _) = field.slot else {
            scalar(Scalar::Field(i), conflicts);
            continue;
        };
        let (b, m, t) = (
            get(base.as_draft()),
            get(mine.as_draft()),
            get(theirs.as_draft()),
        );
        if t == b || t == m {
            continue;
        }
        if m == b {
            scalar(Scalar::Field(i), conflicts);
            continue;
        }
        texts.push((i, merge_text(field.label, (b, m, t), conflicts)));
    }
    scalar(Scalar::Picture, conflicts);
    (scalars, texts)
}

/// A Markdown field that both sides changed (`label`; its base's, mine's
/// and theirs' text), merged by paragraph.
fn merge_text(
    label: &'static str,
    (b, m, t): (&Option<String>, &Option<String>, &Option<String>),
    conflicts: &mut Conflicts,
) -> Vec<Part<String>> {
    let split = |text: &Option<String>| paragraphs(text.as_deref().unwrap_or(""));
    let (b, m, t) = (split(b), split(m), split(t));
    let blocks = merge3(&b, &m, &t, |_| false);
    conflicts.list(
        Place::Text(label),
        blocks,
        (&m, &t),
        |_| true,
        String::clone,
        |lines| lines.join("\n\n"),
        |_, line| line.clone(),
    )
}

/// The servings the merge will have, where its scalars say already:
/// `None` while the servings are a conflict.
fn merged_servings(
    scalars: &[(Scalar, Outcome)],
    mine: &Content,
    theirs: &Content,
) -> Option<Option<i64>> {
    let servings_field = FIELDS.iter().position(|f| f.name == "servings");
    let servings_outcome = scalars
        .iter()
        .find(|(s, _)| matches!(s, Scalar::Field(i) if Some(*i) == servings_field))
        .map(|(_, outcome)| *outcome);
    match servings_outcome {
        None => Some(mine.recipe_yield().servings),
        Some(Outcome::TakeTheirs) => Some(theirs.recipe_yield().servings),
        Some(Outcome::Conflict(_)) => None,
    }
}

/// The ingredients merged line by line, each side's read for the base's
/// servings; a line that comes in is written for the merge's servings
/// (`merged_servings`), and what servings each side's lines were written
/// for.
fn merge_ingredients(
    base: &Content,
    mine: &Content,
    theirs: &Content,
    merged_servings: Option<Option<i64>>,
    conflicts: &mut Conflicts,
) -> (Written, Vec<Part<String>>) {
    let (blocks, written) = ingredient_blocks(base, mine, theirs);
    let ingredients = conflicts.list(
        Place::Ingredients,
        blocks,
        (mine.ingredients(), theirs.ingredients()),
        |_| true,
        String::clone,
        |lines| lines.join("\n"),
        |origin, line| match merged_servings {
            Some(merged) => written.for_servings(origin, line, merged),
            None => line.clone(),
        },
    );
    (written, ingredients)
}

/// The ingredients' blocks: each side's lines read as the base's where
/// they only say its amounts for their own servings
/// (`servings::canonical`), merged, and given back each side's own text;
/// and what servings each side's lines were written for.
fn ingredient_blocks(
    base: &Content,
    mine: &Content,
    theirs: &Content,
) -> (Vec<Block<String>>, Written) {
    let (mine_read, mine_as) = servings::canonical(
        base.ingredients(),
        mine.ingredients(),
        base.recipe_yield().servings,
        mine.recipe_yield().servings,
    );
    let (theirs_read, mut theirs_as) = servings::canonical(
        base.ingredients(),
        theirs.ingredients(),
        base.recipe_yield().servings,
        theirs.recipe_yield().servings,
    );
    // A line both added, each for its own servings (an accepted
    // suggestion scaled the fork's into the parent), is one change.
    let added = |lines: &[String]| -> Vec<String> {
        lines
            .iter()
            .filter(|l| !base.ingredients().contains(l))
            .cloned()
            .collect()
    };
    let (_, same_as) = servings::canonical(
        &added(mine.ingredients()),
        &added(&theirs_read),
        mine.recipe_yield().servings,
        theirs.recipe_yield().servings,
    );
    let theirs_read: Vec<String> = theirs_read
        .into_iter()
        .map(|line| {
            let at = same_as.iter().find(|(_, own)| *own == line);
            at.map_or(line, |(mine_line, _)| mine_line.clone())
        })
        .collect();
    theirs_as.extend(same_as);
    let mut blocks = merge3(base.ingredients(), &mine_read, &theirs_read, |_| false);
    servings::restore(&mut blocks, &mine_as, Origin::Mine);
    servings::restore(&mut blocks, &theirs_as, Origin::Theirs);
    let written = Written {
        mine: mine.recipe_yield().servings,
        theirs: theirs.recipe_yield().servings,
        mine_as,
        theirs_as,
    };
    (blocks, written)
}

/// The method merged line by line, a section's heading leading a hunk of
/// its own (`MethodLine::is_heading`).
fn merge_steps(
    base: &Content,
    mine: &Content,
    theirs: &Content,
    conflicts: &mut Conflicts,
) -> Vec<Part<MethodLine>> {
    let (b, m, t) = (
        method_lines(base.steps()),
        method_lines(mine.steps()),
        method_lines(theirs.steps()),
    );
    conflicts.list(
        Place::Steps,
        merge3(&b, &m, &t, MethodLine::is_heading),
        (&m, &t),
        |line| *line != MethodLine::Heading(None),
        MethodLine::text,
        method_text,
        |_, line| line.clone(),
    )
}

/// What servings each side's ingredient lines were written for, and each
/// side's own text of the lines `servings::canonical` read as the base's
/// (the base's line, or a line both added, and that side's text of it).
#[derive(Debug, Clone)]
struct Written {
    mine: Option<i64>,
    theirs: Option<i64>,
    mine_as: Vec<(String, String)>,
    theirs_as: Vec<(String, String)>,
}

impl Written {
    /// An ingredient line of the merge (`mine`'s text where it is both
    /// sides'), from `origin`, for the merge's `servings`. A line both
    /// sides have (the base's both kept, a change both made) is as the
    /// side whose servings the merge takes has it, unscaled: each vouches
    /// for it at its own servings (for servings written by hand, it is
    /// `mine`'s, scaled). A side's own change was
    /// written for that side's servings, and is scaled or marked for the
    /// merge's where they differ (`for_servings`); one that comes in to a
    /// merge that says no servings is marked with those it was written
    /// for. Written by hand: as written.
    fn for_servings(&self, origin: Origin, line: &str, servings: Option<i64>) -> String {
        let both_sides = matches!(origin, Origin::Base | Origin::Both);
        if both_sides && servings == self.theirs && servings != self.mine {
            return self.as_theirs(line);
        }
        let from = match origin {
            Origin::Theirs => self.theirs,
            Origin::Hand => None,
            Origin::Base | Origin::Both | Origin::Mine => self.mine,
        };
        match (from, servings, origin) {
            (Some(from), Some(to), _) => for_servings(line, from, to),
            (Some(from), None, Origin::Theirs) => servings::marked(line, from),
            _ => line.to_owned(),
        }
    }

    /// `theirs`' text of a line both sides have, given as `mine`'s.
    fn as_theirs(&self, line: &str) -> String {
        let base = self
            .mine_as
            .iter()
            .find(|(_, own)| own == line)
            .map_or(line, |(base, _)| base.as_str());
        self.theirs_as
            .iter()
            .find(|(read, _)| read == base)
            .map_or(base, |(_, own)| own.as_str())
            .to_owned()
    }
}

/// Tags as a set: those both kept, and those either added.
fn merged_tags(base: &[String], mine: &[String], theirs: &[String]) -> Vec<String> {
    let mut out: Vec<String> = mine
        .iter()
        .filter(|t| theirs.contains(t) || !base.contains(t))
        .chain(theirs.iter().filter(|t| !base.contains(t)))
        .cloned()
        .collect();
    out.sort();
    out.dedup();
    out
}

impl Merge {
    /// The conflicts, in the order `resolved` takes its choices.
    pub fn conflicts(&self) -> &[Conflict] {
        &self.conflicts
    }

    pub fn is_clean(&self) -> bool {
        self.conflicts.is_empty()
    }

    /// The servings mine and theirs are written for, when both say and
    /// they differ, and the merge's where it is decided already: lines
    /// coming from a side written for other servings than the merge's are
    /// then scaled to them, or marked (`for_servings`).
    pub fn servings(&self) -> Option<Servings> {
        let (Some(mine), Some(theirs)) = (
            self.mine.recipe_yield().servings,
            self.theirs.recipe_yield().servings,
        ) else {
            return None;
        };
        if mine == theirs {
            return None;
        }
        let settled = self
            .conflicts
            .iter()
            .all(|c| c.place != Place::Field("servings"));
        let merged = settled.then(|| self.with_every(Choice::Mine).recipe_yield.servings);
        Some(Servings {
            mine,
            theirs,
            merged: merged.flatten(),
        })
    }

    /// The merged content where it is clean, and the parse takes it.
    pub fn clean(&self) -> Option<Content> {
        self.resolved(&[]).ok()
    }

    /// The merge with every conflict settled the same simple way (`Mine`
    /// or `Theirs`): what a page shows before the cook chooses. Not parsed:
    /// a page shows what comes in even where it could not be saved as it
    /// is, and says why (`pages::bring_in::over_limits`).
    pub fn with_every(&self, choice: Choice) -> ContentDraft {
        let choices = vec![choice; self.conflicts.len()];
        self.draft(&choices)
            .expect("a side for every conflict settles any merge")
    }

    /// The merged content, each conflict settled by the choice at its
    /// number, and parsed: computed, it is refused as a form's would be
    /// (`Unresolved::Refused`), before anything would store it.
    pub fn resolved(&self, choices: &[Choice]) -> Result<Content, Unresolved> {
        Content::parse(self.draft(choices)?).map_err(Unresolved::Refused)
    }

    /// `resolved`, not parsed.
    fn draft(&self, choices: &[Choice]) -> Result<ContentDraft, Unresolved> {
        if choices.len() != self.conflicts.len() {
            return Err(Unresolved::Count {
                expected: self.conflicts.len(),
            });
        }
        for (n, (choice, conflict)) in choices.iter().zip(&self.conflicts).enumerate() {
            let refuse = |why: String| Err(Unresolved::Choice { conflict: n, why });
            match choice {
                Choice::Both if !conflict.allows_both() => {
                    return refuse(format!(
                        "the {} has one value: keep yours, take theirs or write it",
                        conflict.place.label()
                    ))
                }
                Choice::Edited(_) if !conflict.allows_edit() => {
                    return refuse(format!(
                        "the {} cannot be written by hand: keep yours or take theirs",
                        conflict.place.label()
                    ))
                }
                _ => {}
            }
        }
        let mut content = self.mine.to_draft();
        for (scalar, outcome) in &self.scalars {
            match outcome {
                Outcome::TakeTheirs => scalar.copy(&self.theirs, &mut content),
                Outcome::Conflict(n) => match &choices[*n] {
                    Choice::Mine | Choice::Both => {}
                    Choice::Theirs => scalar.copy(&self.theirs, &mut content),
                    Choice::Edited(text) => scalar
                        .write(&mut content, text)
                        .map_err(|why| Unresolved::Choice { conflict: *n, why })?,
                },
            }
        }
        for (i, parts) in &self.texts {
            let kept: Vec<String> = settle(parts, choices, paragraphs)
                .into_iter()
                .map(|(line, _)| line)
                .collect();
            if let Slot::Markdown(_, set) = FIELDS[*i].slot {
                *set(&mut content) = Some(kept.join("\n\n")).filter(|t| !t.is_empty());
            }
        }
        content.tags = self.tags.clone();
        let lines = settle(&self.ingredients, choices, |text| {
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect()
        });
        content.ingredients = self.for_servings(lines, content.recipe_yield.servings);
        let method: Vec<MethodLine> = settle(&self.steps, choices, parse_method)
            .into_iter()
            .map(|(line, _)| line)
            .collect();
        content.steps = steps_of_lines(&method);
        Ok(content)
    }

    /// Ingredient lines with where each came from, each for `servings`
    /// (the merge's: `Written::for_servings`).
    fn for_servings(&self, lines: Vec<(String, Origin)>, servings: Option<i64>) -> Vec<String> {
        lines
            .into_iter()
            .map(|(line, origin)| self.written.for_servings(origin, &line, servings))
            .collect()
    }

    /// How each conflict was settled, in words for history: `cook: kept
    /// mine; ingredients: took theirs`, with `theirs` naming the other
    /// side. `None` for a clean merge.
    pub fn settled(&self, choices: &[Choice], theirs: &str) -> Option<String> {
        if self.conflicts.is_empty() {
            return None;
        }
        let each: Vec<String> = self
            .conflicts
            .iter()
            .zip(choices)
            .map(|(conflict, choice)| {
                let how = match choice {
                    Choice::Mine => "kept its own".to_owned(),
                    Choice::Theirs => format!("took {theirs}'s"),
                    Choice::Both => format!("kept both, its own first, then {theirs}'s"),
                    Choice::Edited(_) => "written by hand".to_owned(),
                };
                format!("{} {how}", conflict.place.label())
            })
            .collect();
        Some(each.join("; "))
    }

    /// How many conflicts over a change both sides made (not a doubled
    /// line) `choices` settle for mine: what a fork's page says it kept.
    pub fn kept_own(&self, choices: &[Choice]) -> usize {
        self.conflicts
            .iter()
            .zip(choices)
            .filter(|(c, choice)| c.why == Why::Changed && **choice == Choice::Mine)
            .count()
    }
}

/// A merged list with its conflicts settled by `choices` (checked to fit),
/// each line with where it came from; `parse` reads text written by hand.
fn settle<T: Clone>(
    parts: &[Part<T>],
    choices: &[Choice],
    parse: impl Fn(&str) -> Vec<T>,
) -> Vec<(T, Origin)> {
    let mut out = Vec::new();
    let mut take = |lines: &[T], origin: Origin| {
        out.extend(lines.iter().cloned().map(|line| (line, origin)));
    };
    for part in parts {
        match part {
            Part::Clean(origin, lines) => take(lines, *origin),
            Part::Conflict(n, mine, theirs) => match &choices[*n] {
                Choice::Mine => take(mine, Origin::Mine),
                Choice::Theirs => take(theirs, Origin::Theirs),
                Choice::Both => {
                    take(mine, Origin::Mine);
                    take(theirs, Origin::Theirs);
                }
                Choice::Edited(text) => take(&parse(text), Origin::Hand),
            },
        }
    }
    out
}

impl Scalar {
    fn label(self) -> &'static str {
        match self {
            Scalar::Title => "title",
            Scalar::Field(i) => FIELDS[i].label,
            Scalar::Picture => PICTURE,
        }
    }

    /// The field as compared and shown: equal exactly when the contents
    /// agree on it.
    fn shown(self, content: &Content) -> Option<String> {
        match self {
            Scalar::Title => Some(content.title().to_owned()),
            Scalar::Field(i) => FIELDS[i].shown(content),
            Scalar::Picture => content.picture().map(|p| {
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

    /// The field as the recipe form shows it, to start writing it by hand.
    fn form_text(self, content: &Content) -> String {
        match self {
            Scalar::Title => content.title().to_owned(),
            Scalar::Field(i) => FIELDS[i].form_text(content),
            Scalar::Picture => String::new(),
        }
    }

    fn copy(self, from: &Content, to: &mut ContentDraft) {
        match self {
            Scalar::Title => to.title = from.title().to_owned(),
            Scalar::Field(i) => FIELDS[i].copy(from, to),
            Scalar::Picture => to.picture = from.picture().cloned(),
        }
    }

    /// Sets the field from text written by hand, as the recipe form takes
    /// it; whether it is within its limits is the content's check.
    fn write(self, to: &mut ContentDraft, text: &str) -> Result<(), String> {
        match self {
            Scalar::Title => {
                to.title = text.trim().to_owned();
                Ok(())
            }
            Scalar::Field(i) => FIELDS[i].from_form(to, text),
            Scalar::Picture => Err("a picture cannot be written by hand".to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::content::{ContentField, Minutes, Step};
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    /// `super::merge` of drafts, each parsed as stored content is: the
    /// tests write their sides as drafts.
    fn merge(base: &ContentDraft, mine: &ContentDraft, theirs: &ContentDraft) -> Merge {
        let parsed = |c: &ContentDraft| c.clone().normalized().expect("a side parses");
        super::merge(&parsed(base), &parsed(mine), &parsed(theirs))
    }

    fn lines(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    fn recipe(title: &str, ingredients: &[&str]) -> ContentDraft {
        ContentDraft {
            title: title.into(),
            ingredients: lines(ingredients),
            ..ContentDraft::default()
        }
    }

    fn step(section: Option<&str>, text: &str) -> Step {
        Step {
            section: section.map(str::to_owned),
            text: text.to_owned(),
        }
    }

    #[test]
    fn a_field_changed_on_one_side_takes_that_side() {
        let base = ContentDraft {
            cook: Some(Minutes::new(20).unwrap()),
            ..recipe("Banana bread", &["3 bananas"])
        };
        let mine = ContentDraft {
            title: "Banana bread, less sugar".into(),
            ..base.clone()
        };
        let theirs = ContentDraft {
            cook: Some(Minutes::new(35).unwrap()),
            ..base.clone()
        };
        let merged = merge(&base, &mine, &theirs).clean().expect("clean");
        assert_eq!(merged.title(), "Banana bread, less sugar");
        assert_eq!(merged.cook(), Some(Minutes::new(35).unwrap()));
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
                why: Why::Changed,
                base: lines(&["Dal"]),
                mine: lines(&["Dal tadka"]),
                theirs: lines(&["Red lentil dal"]),
                prefill: "Dal tadka".into(),
            }]
        );
        assert!(merge.clean().is_none(), "a conflict needs a choice");
        assert_eq!(
            merge.resolved(&[Choice::Mine]).unwrap().title(),
            "Dal tadka"
        );
        assert_eq!(
            merge.resolved(&[Choice::Theirs]).unwrap().title(),
            "Red lentil dal"
        );
        assert_eq!(
            merge
                .resolved(&[Choice::Edited(" Tadka dal ".into())])
                .unwrap()
                .title(),
            "Tadka dal"
        );
        assert!(
            matches!(
                merge.resolved(&[Choice::Both]),
                Err(Unresolved::Choice { conflict: 0, .. })
            ),
            "a title is one value: both is no choice for it"
        );
    }

    /// Each side within the limits, their merge past one: both add 150
    /// lines to one. The merge says so, with the parse's words, rather
    /// than give content that a write would refuse later (or a store
    /// would); what it would be is still there to show (`with_every`).
    #[test]
    fn a_merge_past_a_limit_is_refused_by_the_merge() {
        let added = |who: &str| -> Vec<String> {
            (0..150).map(|i| format!("{i} g {who}'s spice")).collect()
        };
        let base = recipe("Curry", &["1 onion"]);
        let mine = ContentDraft {
            ingredients: [base.ingredients.clone(), added("ann")].concat(),
            ..base.clone()
        };
        let theirs = ContentDraft {
            ingredients: [added("ben"), base.ingredients.clone()].concat(),
            ..base.clone()
        };
        let m = merge(&base, &mine, &theirs);
        assert!(m.is_clean(), "{:?}", m.conflicts());
        assert_eq!(m.with_every(Choice::Mine).ingredients.len(), 301);
        assert!(m.clean().is_none(), "nothing a write would refuse");
        let refused = m.resolved(&[]).expect_err("the merge is refused");
        assert_eq!(
            refused.to_string(),
            "merged, the recipe would be refused: a recipe has at most 200 ingredient lines, \
             not 301"
        );
        let Unresolved::Refused(mistakes) = refused else {
            panic!("refused by the parse");
        };
        let fields: Vec<ContentField> = mistakes.iter().map(ContentError::field).collect();
        assert_eq!(fields, [ContentField::Ingredients]);
    }

    #[test]
    fn a_number_written_by_hand_is_read_as_the_form_reads_it() {
        let base = ContentDraft {
            cook: Some(Minutes::new(20).unwrap()),
            ..recipe("Soup", &[])
        };
        let mine = ContentDraft {
            cook: Some(Minutes::new(25).unwrap()),
            ..base.clone()
        };
        let theirs = ContentDraft {
            cook: Some(Minutes::new(30).unwrap()),
            ..base.clone()
        };
        let m = merge(&base, &mine, &theirs);
        assert_eq!(m.conflicts()[0].prefill, "25");
        let written = m.resolved(&[Choice::Edited("28".into())]).unwrap();
        assert_eq!(written.cook(), Some(Minutes::new(28).unwrap()));
        assert!(matches!(
            m.resolved(&[Choice::Edited("half an hour".into())]),
            Err(Unresolved::Choice { conflict: 0, .. })
        ));
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
            mine_wins.ingredients(),
            lines(&["flour", "oat milk", "egg", "sugar"])
        );
    }

    #[test]
    fn the_reviews_salt_case_takes_the_change_that_holds_the_other() {
        // The review's case: salt -> sea salt, against a bay leaf added
        // before the same change. Line by line, "keep yours" gave "sea
        // salt" twice; theirs holds the whole of mine's change, so the
        // merge takes it, once.
        let base = recipe("Soup", &["salt"]);
        let mine = recipe("Soup", &["sea salt"]);
        let theirs = recipe("Soup", &["1 bay leaf", "sea salt"]);
        let m = merge(&base, &mine, &theirs);
        assert!(m.is_clean(), "{:?}", m.conflicts());
        assert_eq!(
            m.clean().unwrap().ingredients(),
            lines(&["1 bay leaf", "sea salt"])
        );
    }

    #[test]
    fn keeping_yours_of_a_replaced_run_gives_your_lines_once() {
        let base = recipe("Soup", &["salt"]);
        let mine = recipe("Soup", &["sea salt"]);
        let theirs = recipe("Soup", &["1 bay leaf", "salt flakes"]);
        let m = merge(&base, &mine, &theirs);
        assert_eq!(m.conflicts().len(), 1);
        assert_eq!(m.with_every(Choice::Mine).ingredients, lines(&["sea salt"]));
        assert_eq!(
            m.with_every(Choice::Theirs).ingredients,
            lines(&["1 bay leaf", "salt flakes"])
        );
        assert_eq!(
            m.resolved(&[Choice::Both]).unwrap().ingredients(),
            lines(&["sea salt", "1 bay leaf", "salt flakes"])
        );
        assert_eq!(
            m.resolved(&[Choice::Edited("1 bay leaf\n\n  sea salt \n".into())])
                .unwrap()
                .ingredients(),
            lines(&["1 bay leaf", "sea salt"])
        );
        assert_eq!(
            m.conflicts()[0].prefill,
            "sea salt\n1 bay leaf\nsalt flakes"
        );
    }

    #[test]
    fn changes_to_neighbouring_lines_merge() {
        let base = recipe("Soup", &["a", "b", "c"]);
        let mine = recipe("Soup", &["a", "B", "c"]);
        let theirs = recipe("Soup", &["a", "b", "C", "d"]);
        let merged = merge(&base, &mine, &theirs).clean().expect("clean");
        assert_eq!(merged.ingredients(), lines(&["a", "B", "C", "d"]));
    }

    #[test]
    fn a_line_both_add_at_two_places_is_asked_about_not_doubled() {
        let base = recipe("Soup", &["onion", "stock"]);
        let mine = recipe("Soup", &["1 bay leaf", "onion", "stock"]);
        let theirs = recipe("Soup", &["onion", "stock", "1 bay leaf"]);
        let m = merge(&base, &mine, &theirs);
        let whys: Vec<&Why> = m.conflicts().iter().map(|c| &c.why).collect();
        assert_eq!(
            whys,
            [
                &Why::Doubled("1 bay leaf".into()),
                &Why::Doubled("1 bay leaf".into())
            ]
        );
        // Mine at each place: the leaf where mine put it, once.
        assert_eq!(
            m.with_every(Choice::Mine).ingredients,
            lines(&["1 bay leaf", "onion", "stock"])
        );
        assert_eq!(
            m.with_every(Choice::Theirs).ingredients,
            lines(&["onion", "stock", "1 bay leaf"])
        );
        // Added alike at one place, it comes in once, cleanly.
        let same = merge(&base, &mine, &mine);
        assert_eq!(same.clean().unwrap().ingredients(), mine.ingredients);
    }

    #[test]
    fn a_line_both_move_to_two_places_is_asked_about() {
        let base = recipe("Soup", &["a", "b", "x", "c", "d"]);
        let mine = recipe("Soup", &["x", "a", "b", "c", "d"]);
        let theirs = recipe("Soup", &["a", "b", "c", "d", "x"]);
        let m = merge(&base, &mine, &theirs);
        assert!(
            m.conflicts()
                .iter()
                .all(|c| c.why == Why::Doubled("x".into())),
            "{:?}",
            m.conflicts()
        );
        assert_eq!(m.with_every(Choice::Mine).ingredients, mine.ingredients);
        assert_eq!(m.with_every(Choice::Theirs).ingredients, theirs.ingredients);
    }

    #[test]
    fn a_line_moved_against_an_edit_where_it_was_is_asked_about_at_both_places() {
        // The parent moves the salt to the top; the fork changes it where
        // it was. Keeping yours at both places gives yours, once.
        let base = recipe("Soup", &["flour", "egg", "milk", "1 tsp salt", "sugar"]);
        let mine = recipe("Soup", &["flour", "egg", "milk", "1/2 tsp salt", "sugar"]);
        let theirs = recipe("Soup", &["1 tsp salt", "flour", "egg", "milk", "sugar"]);
        let m = merge(&base, &mine, &theirs);
        assert_eq!(m.conflicts().len(), 2, "{:?}", m.conflicts());
        assert!(m.conflicts().iter().any(|c| matches!(
            &c.why,
            Why::Moved { line, by: Origin::Theirs } if line == "1 tsp salt"
        )));
        assert_eq!(m.with_every(Choice::Mine).ingredients, mine.ingredients);
        assert_eq!(m.with_every(Choice::Theirs).ingredients, theirs.ingredients);
    }

    #[test]
    fn lines_reordered_against_a_line_added_lose_nothing_whichever_side_is_taken() {
        // The review's case: the fork reversed its lines; the parent added
        // one at the end. Taking theirs everywhere gives theirs exactly.
        let base = recipe("Soup", &["flour", "milk", "eggs", "salt", "sugar"]);
        let mine = recipe("Soup", &["sugar", "salt", "eggs", "milk", "flour"]);
        let theirs = recipe(
            "Soup",
            &["flour", "milk", "eggs", "salt", "sugar", "vanilla"],
        );
        let m = merge(&base, &mine, &theirs);
        assert_eq!(m.with_every(Choice::Theirs).ingredients, theirs.ingredients);
        assert_eq!(m.with_every(Choice::Mine).ingredients, mine.ingredients);
    }

    #[test]
    fn lines_scaled_into_the_parent_by_an_accepted_suggestion_are_no_change_of_its() {
        // The fork halved its lines for 2 servings and added butter; the
        // parent took them, scaled to its 6, keeping its own servings:
        // only the servings differ now.
        let serves = |n: i64, ingredients: &[&str]| ContentDraft {
            recipe_yield: crate::domain::Yield {
                servings: Some(n),
                text: None,
            },
            ..recipe("Cake", ingredients)
        };
        let base = serves(4, &["200 g flour", "2 eggs"]);
        let mine = serves(2, &["100 g flour", "1 egg", "50 g butter"]);
        let theirs = serves(6, &["300 g flour", "3 eggs", "150 g butter"]);
        let m = merge(&base, &mine, &theirs);
        let places: Vec<Place> = m.conflicts().iter().map(|c| c.place).collect();
        assert_eq!(places, [Place::Field("servings")], "{:?}", m.conflicts());
        assert_eq!(m.with_every(Choice::Mine), mine);
        let theirs_servings = m.with_every(Choice::Theirs);
        assert_eq!(theirs_servings.ingredients, theirs.ingredients);
        // The parent doubled its lines with its servings; the fork added
        // a line: the fork's lines, and its new one, come to the parent's
        // servings with it.
        let base = serves(4, &["2 cups flour", "1 egg"]);
        let mine = serves(4, &["2 cups flour", "1 egg", "1 tsp vanilla"]);
        let theirs = serves(8, &["4 cups flour", "2 eggs"]);
        let m = merge(&base, &mine, &theirs);
        assert!(m.is_clean(), "{:?}", m.conflicts());
        let merged = m.clean().unwrap();
        assert_eq!(merged.recipe_yield().servings, Some(8));
        assert_eq!(
            merged.ingredients(),
            ["4 cups flour", "2 eggs", "2 tsp vanilla"]
        );
    }

    #[test]
    fn tags_merge_as_a_set() {
        let tags = |t: &[&str]| ContentDraft {
            tags: lines(t),
            ..recipe("Soup", &[])
        };
        let m = merge(
            &tags(&["soup", "winter"]),
            &tags(&["soup", "vegan", "winter"]),
            &tags(&["quick", "soup"]),
        );
        assert!(m.is_clean());
        assert_eq!(
            m.clean().unwrap().tags(),
            lines(&["quick", "soup", "vegan"])
        );
    }

    #[test]
    fn notes_merge_by_paragraph() {
        let notes = |text: &str| ContentDraft {
            notes: Some(text.into()),
            ..recipe("Soup", &[])
        };
        let base = notes("Keeps for 3 days.\n\nFreezes well.");
        let mine = notes("Keeps for 4 days in the fridge.\n\nFreezes well.");
        let theirs = notes("Keeps for 3 days.\n\nFreezes well, for a month.");
        let m = merge(&base, &mine, &theirs);
        assert!(m.is_clean(), "{:?}", m.conflicts());
        assert_eq!(
            m.clean().unwrap().notes(),
            Some("Keeps for 4 days in the fridge.\n\nFreezes well, for a month.")
        );
        // The same paragraph changed on both sides is a conflict of that
        // paragraph alone.
        let other = notes("Keeps for 2 days.\n\nFreezes well.");
        let m = merge(&base, &mine, &other);
        assert_eq!(m.conflicts().len(), 1);
        assert_eq!(m.conflicts()[0].place, Place::Text("notes"));
        assert_eq!(
            m.resolved(&[Choice::Theirs]).unwrap().notes(),
            Some("Keeps for 2 days.\n\nFreezes well.")
        );
        // One side only: its text as written, not re-flowed.
        let spaced = notes("Keeps for 3 days.\n\n\n\nFreezes well.");
        assert_eq!(
            merge(&base, &base, &spaced).clean().unwrap().notes(),
            spaced.notes.as_deref()
        );
    }

    #[test]
    fn a_step_keeps_the_section_its_side_put_it_in() {
        // The review's case: the fork put step 2 in a new section and
        // edited it; the parent edited it too. Taking the parent's words
        // keeps the fork's section.
        let steps = |s: Vec<Step>| ContentDraft {
            steps: s,
            ..recipe("Soup", &[])
        };
        let base = steps(vec![step(None, "Chop."), step(None, "Add stock.")]);
        let mine = steps(vec![
            step(None, "Chop."),
            step(Some("Broth"), "Add hot stock."),
        ]);
        let theirs = steps(vec![
            step(None, "Chop."),
            step(None, "Add stock, then simmer."),
        ]);
        let m = merge(&base, &mine, &theirs);
        assert_eq!(m.conflicts().len(), 1);
        assert_eq!(m.conflicts()[0].mine, lines(&["Add hot stock."]));
        assert_eq!(
            m.with_every(Choice::Theirs).steps,
            vec![
                step(None, "Chop."),
                step(Some("Broth"), "Add stock, then simmer.")
            ]
        );
        // Written by hand, steps are read as the form reads them, in the
        // section they are written in.
        let written = m
            .resolved(&[Choice::Edited("Add stock.\n\nSimmer.".into())])
            .unwrap();
        assert_eq!(
            written.steps(),
            vec![
                step(None, "Chop."),
                step(Some("Broth"), "Add stock."),
                step(Some("Broth"), "Simmer.")
            ]
        );
    }

    #[test]
    fn a_step_split_against_the_same_step_edited_is_one_conflict_of_whole_sides() {
        let steps = |s: &[&str]| ContentDraft {
            steps: s.iter().map(|t| step(None, t)).collect(),
            ..recipe("Soup", &[])
        };
        let base = steps(&["Add carrots and stock."]);
        let mine = steps(&["Add carrots.", "Add hot stock."]);
        let theirs = steps(&["Add stock."]);
        let m = merge(&base, &mine, &theirs);
        assert_eq!(m.conflicts().len(), 1);
        assert_eq!(m.with_every(Choice::Mine).steps, mine.steps);
        assert_eq!(m.with_every(Choice::Theirs).steps, theirs.steps);
    }

    #[test]
    fn lines_from_a_side_written_for_other_servings_are_scaled_to_the_merges() {
        let serves = |n: i64, ingredients: &[&str]| ContentDraft {
            recipe_yield: crate::domain::Yield {
                servings: Some(n),
                text: None,
            },
            ..recipe("Soup", ingredients)
        };
        let base = serves(4, &["2 carrots", "1 l stock"]);
        // The fork doubled it; the parent added two lines for its 4.
        let mine = serves(8, &["4 carrots", "2 l stock"]);
        let theirs = serves(4, &["2 carrots", "1 l stock", "1 tsp cumin", "salt"]);
        let m = merge(&base, &mine, &theirs);
        assert_eq!(
            m.servings(),
            Some(Servings {
                mine: 8,
                theirs: 4,
                merged: Some(8)
            })
        );
        let merged = m.clean().expect("clean");
        assert_eq!(merged.recipe_yield().servings, Some(8));
        assert_eq!(
            merged.ingredients(),
            lines(&["4 carrots", "2 l stock", "2 tsp cumin", "salt"])
        );
        // The next merge, from the parent's version brought in: the line
        // brought in scaled is no change of the fork's, so the parent's
        // change of it comes in, scaled again.
        let next = serves(
            4,
            &["2 carrots", "1 l stock", "1 tsp cumin, toasted", "salt"],
        );
        let again = merge(&theirs, &merged.to_draft(), &next);
        assert!(again.is_clean(), "{:?}", again.conflicts());
        assert_eq!(
            again.clean().unwrap().ingredients(),
            lines(&["4 carrots", "2 l stock", "2 tsp cumin, toasted", "salt"])
        );
        // A conflict shows each side's lines as choosing it saves them.
        let changed = serves(8, &["5 carrots", "2 l stock", "2 tsp cumin", "salt"]);
        let theirs_changed = serves(4, &["3 carrots", "1 l stock", "1 tsp cumin", "salt"]);
        let m = merge(&theirs, &changed, &theirs_changed);
        assert_eq!(m.conflicts().len(), 1, "{:?}", m.conflicts());
        assert_eq!(m.conflicts()[0].theirs, lines(&["6 carrots"]));
        assert_eq!(m.with_every(Choice::Theirs).ingredients[0], "6 carrots");
    }

    #[test]
    fn lines_both_sides_have_are_as_the_side_whose_servings_are_taken() {
        let serves = |n: i64, ingredients: &[&str]| ContentDraft {
            recipe_yield: crate::domain::Yield {
                servings: Some(n),
                text: None,
            },
            ..recipe("Soup", ingredients)
        };
        let base = serves(4, &["600 g onions", "750 ml stock"]);
        // The fork says the same amounts serve 6: taken, its servings
        // come in and no line is scaled.
        let fork = serves(6, &["600 g onions", "750 ml stock"]);
        let merged = merge(&base, &base, &fork).clean().expect("clean");
        assert_eq!(merged.recipe_yield().servings, Some(6));
        assert_eq!(merged.ingredients(), base.ingredients);
        // A fork that scaled its lines to 8: they come in as it wrote
        // them, and the parent's own new line is scaled to its 8.
        let doubled = serves(8, &["1.2 kg onions", "1.5 l stock"]);
        let parent = serves(4, &["600 g onions", "750 ml stock", "1 tsp salt"]);
        let merged = merge(&base, &parent, &doubled).clean().expect("clean");
        assert_eq!(merged.recipe_yield().servings, Some(8));
        assert_eq!(
            merged.ingredients(),
            lines(&["1.2 kg onions", "1.5 l stock", "2 tsp salt"])
        );
    }

    #[test]
    fn a_conflicts_key_names_what_it_holds() {
        let base = recipe("Soup", &["a", "b"]);
        let one = merge(
            &base,
            &recipe("Soup", &["a", "B"]),
            &recipe("Soup", &["a", "b2"]),
        );
        let again = merge(
            &recipe("Soup", &["z", "a", "b"]),
            &recipe("Soup", &["z", "a", "B"]),
            &recipe("Soup", &["a", "b2"]),
        );
        let other = merge(
            &base,
            &recipe("Soup", &["a", "B"]),
            &recipe("Soup", &["a", "b3"]),
        );
        let key = |m: &Merge| m.conflicts().last().unwrap().key();
        assert_eq!(key(&one), key(&again));
        assert_ne!(key(&one), key(&other));
    }

    /// A base of distinct lines, and edits at places of it.
    #[derive(Debug, Clone, PartialEq)]
    struct Edit {
        /// The base range replaced (empty: an insertion).
        start: usize,
        len: usize,
        /// New lines put there.
        new: usize,
    }

    impl Edit {
        fn lines(&self, tag: &str) -> Vec<String> {
            (0..self.new)
                .map(|k| format!("{tag}{}-{k}", self.start))
                .collect()
        }

        /// The places an edit changes, on a line of the base's lines (odd,
        /// `2i + 1` for line `i`) and the gaps between them (even, `2i`
        /// before line `i`): a replacement covers its lines and the gaps
        /// inside, an insertion its gap. Two sides' edits change the same
        /// lines exactly when their places meet: the rule stated without
        /// hunks.
        fn points(&self) -> BTreeSet<usize> {
            if self.len == 0 {
                BTreeSet::from([2 * self.start])
            } else {
                (2 * self.start + 1..2 * (self.start + self.len)).collect()
            }
        }

        /// Whether two sides' edits change the same places: their places
        /// meet, or one inserts at an edge of a run the other grew (which
        /// may have inserted there too).
        fn meets(&self, other: &Edit) -> bool {
            let at_grown_edge = |x: &Edit, y: &Edit| {
                x.len == 0
                    && y.len > 0
                    && y.new > y.len
                    && (x.start == y.start || x.start == y.start + y.len)
            };
            !self.points().is_disjoint(&other.points())
                || at_grown_edge(self, other)
                || at_grown_edge(other, self)
        }
    }

    /// Whether `larger` holds `smaller`'s whole change of `base`: said as
    /// the two shapes it may take, new lines then the base's last, or the
    /// base's first then new lines, each found in `larger` at the same end.
    fn holds_change(base: &[String], larger: &[String], smaller: &[String]) -> bool {
        (0..=smaller.len()).any(|k| {
            let (head, tail) = smaller.split_at(k);
            let new_then_base =
                !head.is_empty() && larger.starts_with(head) && base.ends_with(tail);
            let base_then_new =
                !tail.is_empty() && base.starts_with(head) && larger.ends_with(tail);
            new_then_base || base_then_new
        })
    }

    /// `base` with `edits` (in order, not touching) applied; new lines are
    /// named by `tag` and their place, so that each is distinct.
    fn edited(base: &[String], edits: &[Edit], tag: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut at = 0;
        for e in edits {
            out.extend_from_slice(&base[at..e.start]);
            out.extend(e.lines(tag));
            at = e.start + e.len;
        }
        out.extend_from_slice(&base[at..]);
        out
    }

    /// Edits of one side: in order, each separated from the next by at
    /// least one line it leaves alone, so that each is one hunk.
    fn side_edits(base_len: usize) -> impl Strategy<Value = Vec<Edit>> {
        proptest::collection::vec((0..3usize, 0..4usize, 0..4usize), 0..4).prop_map(move |raw| {
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
        (0..12usize).prop_flat_map(|n| {
            let base: Vec<String> = (0..n).map(|i| format!("line{i}")).collect();
            (Just(base), side_edits(n), side_edits(n))
        })
    }

    fn with_lines(base: Vec<String>, ingredients: Vec<String>) -> (ContentDraft, ContentDraft) {
        (
            ContentDraft {
                title: "Soup".into(),
                ingredients: base,
                ..ContentDraft::default()
            },
            ContentDraft {
                title: "Soup".into(),
                ingredients,
                ..ContentDraft::default()
            },
        )
    }

    fn ingredients(lines: Vec<String>) -> ContentDraft {
        ContentDraft {
            title: "Soup".into(),
            ingredients: lines,
            ..ContentDraft::default()
        }
    }

    /// How a cook settles every conflict, for the model.
    #[derive(Debug, Clone, Copy)]
    enum Every {
        Mine,
        Theirs,
        Both,
    }

    /// The merge of two sides' edits as diff3 groups them, said from the
    /// edits without the merge's code: two sides' edits whose places meet
    /// are one region, with every edit whose places meet theirs in turn
    /// (a connected component); a region only one side edited takes its
    /// edits, one both edited alike (the same deletion) takes it once,
    /// and any other is a conflict, settled by `every` with each side's
    /// lines for the whole region.
    fn model(
        base: &[String],
        mine: &[Edit],
        theirs: &[Edit],
        every: Every,
    ) -> (Vec<String>, usize) {
        let all: Vec<(&Edit, bool)> = mine
            .iter()
            .map(|e| (e, true))
            .chain(theirs.iter().map(|e| (e, false)))
            .collect();
        // Components by a flood over the meeting relation.
        let mut component = vec![usize::MAX; all.len()];
        for seed in 0..all.len() {
            if component[seed] != usize::MAX {
                continue;
            }
            component[seed] = seed;
            let mut stack = vec![seed];
            while let Some(i) = stack.pop() {
                for j in 0..all.len() {
                    if component[j] == usize::MAX
                        && all[i].1 != all[j].1
                        && all[i].0.meets(all[j].0)
                    {
                        component[j] = seed;
                        stack.push(j);
                    }
                }
            }
        }
        let mut regions: Vec<(usize, usize, Vec<String>)> = Vec::new();
        let mut conflicts = 0;
        let mut seeds: Vec<usize> = component.clone();
        seeds.sort();
        seeds.dedup();
        for seed in seeds {
            let members: Vec<(&Edit, bool)> = (0..all.len())
                .filter(|&i| component[i] == seed)
                .map(|i| all[i])
                .collect();
            let start = members.iter().map(|(e, _)| e.start).min().unwrap();
            let end = members.iter().map(|(e, _)| e.start + e.len).max().unwrap();
            let side = |mine_side: bool, tag: &str| {
                let edits: Vec<Edit> = members
                    .iter()
                    .filter(|(_, m)| *m == mine_side)
                    .map(|(e, _)| Edit {
                        start: e.start - start,
                        ..(*e).clone()
                    })
                    .collect();
                let lines = edited(&base[start..end], &edits, tag);
                // The tags name places in the whole base, not the region.
                let renamed: Vec<String> = lines
                    .into_iter()
                    .map(|l| match l.strip_prefix(tag) {
                        Some(rest) => {
                            let (at, k) = rest.split_once('-').unwrap();
                            format!("{tag}{}-{k}", at.parse::<usize>().unwrap() + start)
                        }
                        None => l,
                    })
                    .collect();
                (edits.is_empty(), renamed)
            };
            let ((no_mine, m), (no_theirs, t)) = (side(true, "m"), side(false, "t"));
            let region = &base[start..end];
            let lines = if no_theirs || m == t || holds_change(region, &m, &t) {
                m
            } else if no_mine || holds_change(region, &t, &m) {
                t
            } else {
                conflicts += 1;
                match every {
                    Every::Mine => m,
                    Every::Theirs => t,
                    Every::Both => m.into_iter().chain(t).collect(),
                }
            };
            regions.push((start, end, lines));
        }
        regions.sort_by_key(|(s, e, _)| (*s, *e));
        let mut out = Vec::new();
        let mut at = 0;
        for (start, end, lines) in regions {
            out.extend_from_slice(&base[at..start]);
            out.extend(lines);
            at = end;
        }
        out.extend_from_slice(&base[at..]);
        (out, conflicts)
    }

    /// Step lines of `lines`, in no section.
    fn with_steps(lines: &[String]) -> ContentDraft {
        ContentDraft {
            title: "Soup".into(),
            steps: lines.iter().map(|text| step(None, text)).collect(),
            ..ContentDraft::default()
        }
    }

    proptest! {
        #[test]
        fn every_resolution_taken_from_one_side_or_both_is_that_sides_whole_blocks(
            (base, a, b) in base_and_two_sides()
        ) {
            // The property that holds the block grouping: each conflict
            // covers the whole region both sides' edits reach, so settling
            // every conflict for one side gives that side's lines there
            // exactly, and keeping both gives each side's block once.
            let (mine, theirs) = (edited(&base, &a, "m"), edited(&base, &b, "t"));
            let m = merge(
                &ingredients(base.clone()),
                &ingredients(mine.clone()),
                &ingredients(theirs.clone()),
            );
            for every in [Every::Mine, Every::Theirs, Every::Both] {
                let choice = match every {
                    Every::Mine => Choice::Mine,
                    Every::Theirs => Choice::Theirs,
                    Every::Both => Choice::Both,
                };
                let merged = m.resolved(&vec![choice; m.conflicts().len()]).expect("resolved");
                prop_assert_eq!(merged.ingredients(), &model(&base, &a, &b, every).0, "{:?}", every);
            }
            // With every edit of each side meeting one of the other's,
            // every region is a conflict (or the same deletion on both),
            // so settling them all for a side gives that side whole.
            let meets = |e: &Edit, others: &[Edit]| others.iter().any(|x| x.meets(e));
            let theirs_within: Vec<Edit> = b.iter().filter(|e| meets(e, &a)).cloned().collect();
            let mine_within: Vec<Edit> = a
                .iter()
                .filter(|e| meets(e, &theirs_within))
                .cloned()
                .collect();
            let (mine, theirs) = (
                edited(&base, &mine_within, "m"),
                edited(&base, &theirs_within, "t"),
            );
            let m = merge(
                &ingredients(base.clone()),
                &ingredients(mine.clone()),
                &ingredients(theirs.clone()),
            );
            let n = m.conflicts().len();
            let every = |choice: Choice| m.resolved(&vec![choice; n]).unwrap().into_draft();
            prop_assert_eq!(&every(Choice::Mine).ingredients, &mine);
            prop_assert_eq!(&every(Choice::Theirs).ingredients, &theirs);
        }

        #[test]
        fn the_blocks_read_as_each_side_are_that_side((base, a, b) in base_and_two_sides()) {
            let (mine, theirs) = (edited(&base, &a, "m"), edited(&base, &b, "t"));
            let blocks = merge3(&base, &mine, &theirs, |_| false);
            for (side, whole) in [(Origin::Mine, &mine), (Origin::Theirs, &theirs)] {
                let read: Vec<String> = blocks.iter().flat_map(|b| b.side(side).to_vec()).collect();
                prop_assert_eq!(&read, whole);
            }
            let base_read: Vec<String> = blocks
                .iter()
                .flat_map(|b| match b {
                    Block::Clean { base, .. } | Block::Conflict { base, .. } => base.clone(),
                })
                .collect();
            prop_assert_eq!(base_read, base);
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
                .into_draft()
                .steps
                .into_iter()
                .map(|s| s.text)
                .collect();
            let lines = as_lines.resolved(&choices).expect("resolved").into_draft();
            prop_assert_eq!(steps, lines.ingredients);
        }

        #[test]
        fn identical_changes_among_others_merge_once((base, a, b) in base_and_two_sides()) {
            // Both sides make a's changes; theirs also makes b's where they
            // touch none of a's. The shared changes come in once, cleanly.
            let extra: Vec<Edit> = b
                .into_iter()
                .filter(|e| a.iter().all(|x| !x.meets(e)))
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
                    let tag = if a.contains(e) { "x" } else { "t" };
                    out.extend(e.lines(tag));
                    at = e.start + e.len;
                }
                out.extend_from_slice(&base[at..]);
                out
            };
            let (base_c, mine_c) = with_lines(base, mine);
            let (_, theirs_c) = with_lines(Vec::new(), theirs.clone());
            let merged = merge(&base_c, &mine_c, &theirs_c).clean().expect("clean");
            prop_assert_eq!(merged.ingredients(), theirs);
        }

        #[test]
        fn taking_one_sides_changes_returns_that_side((base, a, _) in base_and_two_sides()) {
            let mine = edited(&base, &a, "m");
            let (base, mine) = with_lines(base, mine);
            let merged = merge(&base, &base, &mine).clean().expect("clean");
            prop_assert_eq!(merged.as_draft(), &mine);
            let merged = merge(&base, &mine, &base).clean().expect("clean");
            prop_assert_eq!(merged.as_draft(), &mine);
        }

        #[test]
        fn identical_changes_merge_cleanly((base, a, _) in base_and_two_sides()) {
            let both = edited(&base, &a, "x");
            let (base, both) = with_lines(base, both);
            let merged = merge(&base, &both, &both).clean().expect("clean");
            prop_assert_eq!(merged.into_draft(), both);
        }

        #[test]
        fn a_conflict_is_reported_exactly_where_both_sides_changed_the_same_lines_differently(
            (base, a, b) in base_and_two_sides()
        ) {
            let mine = edited(&base, &a, "m");
            let theirs = edited(&base, &b, "t");
            let (base_c, mine_c) = with_lines(base.clone(), mine.clone());
            let (_, theirs_c) = with_lines(base.clone(), theirs.clone());
            let m = merge(&base_c, &mine_c, &theirs_c);
            let (expected, conflicts) = model(&base, &a, &b, Every::Mine);
            prop_assert_eq!(m.conflicts().len(), conflicts);
            // Where no edit of one side meets one of the other's, there
            // is no conflict at all.
            let meeting = a.iter().any(|x| b.iter().any(|y| x.meets(y)));
            prop_assert!(meeting || m.is_clean());
            if m.is_clean() {
                // Changes to different lines commute, and the merge is both
                // sides' changes, whichever side is which.
                prop_assert_eq!(&m.clean().expect("clean").into_draft().ingredients, &expected);
                let swapped = merge(&base_c, &theirs_c, &mine_c).clean().expect("clean");
                prop_assert_eq!(swapped.ingredients(), &expected);
            }
        }

        #[test]
        fn a_scalar_takes_the_side_that_changed_it_and_conflicts_only_when_both_did_differently(
            base in scalars(), mine in scalars(), theirs in scalars()
        ) {
            let (base, mine, theirs) = (with_scalars(base), with_scalars(mine), with_scalars(theirs));
            let m = merge(&base, &mine, &theirs);
            let (b, mi, th) = (fields(&base), fields(&mine), fields(&theirs));
            let conflicting: Vec<usize> = (0..2)
                .filter(|&i| mi[i] != b[i] && th[i] != b[i] && mi[i] != th[i])
                .collect();
            prop_assert_eq!(m.conflicts().len(), conflicting.len());
            let mine_wins = m.with_every(Choice::Mine);
            let theirs_win = m.with_every(Choice::Theirs);
            let (mw, tw) = (fields(&mine_wins), fields(&theirs_win));
            for i in 0..2 {
                // A field only one side changed takes that side's value,
                // whatever the choices; a conflicting one, the chosen side's.
                let clean = if th[i] == b[i] { &mi[i] } else { &th[i] };
                if conflicting.contains(&i) {
                    prop_assert_eq!(&mw[i], &mi[i]);
                    prop_assert_eq!(&tw[i], &th[i]);
                } else {
                    prop_assert_eq!(&mw[i], clean);
                    prop_assert_eq!(&tw[i], clean);
                }
            }
            // Tags never conflict: a tag is in when both kept it or either
            // added it.
            for tag in ["tag0", "tag1", "tag2"] {
                let has = |c: &ContentDraft| c.tags.iter().any(|t| t == tag);
                let kept = has(&base) && has(&mine) && has(&theirs);
                let added = !has(&base) && (has(&mine) || has(&theirs));
                prop_assert_eq!(has(&mine_wins), kept || added);
            }
        }
    }

    /// A recipe's scalar fields drawn from few values, so that sides often
    /// agree or collide: the title, cook minutes and the tags.
    fn scalars() -> impl Strategy<Value = (usize, Option<u32>, Vec<usize>)> {
        (
            0..3usize,
            proptest::option::of(prop_oneof![Just(20u32), Just(35)]),
            proptest::collection::vec(0..3usize, 0..3),
        )
    }

    fn with_scalars((title, cook, tags): (usize, Option<u32>, Vec<usize>)) -> ContentDraft {
        let mut tags: Vec<String> = tags.iter().map(|t| format!("tag{t}")).collect();
        tags.sort();
        tags.dedup();
        ContentDraft {
            title: format!("Title {title}"),
            cook: cook.map(|m| Minutes::new(i64::from(m)).unwrap()),
            tags,
            ..ContentDraft::default()
        }
    }

    /// Each scalar a recipe's scalars were drawn for, as the merge sees it.
    fn fields(c: &ContentDraft) -> [String; 2] {
        [c.title.clone(), format!("{:?}", c.cook)]
    }
}
