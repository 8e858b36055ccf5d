//! A recipe's family drawn as a picture: an SVG written on the server, no
//! script. Each recipe is a row: a line with a mark for each of its
//! versions, then its title. A fork's line starts under the mark of the
//! parent's version it copied, joined to it by an elbow, so the family
//! reads like a branching history. The page's nested list stays as the
//! text alternative.
//!
//! A family of hundreds stays readable: at most `DRAWN` recipes are drawn,
//! chosen from the original down a generation at a time, always with the
//! way to the recipe the page is about and that recipe's own forks; a
//! recipe whose forks are not all drawn says how many are left out. A
//! recipe deeper than `GENERATIONS_ABOVE` generations is drawn from the
//! ancestor that many generations up.

use std::collections::VecDeque;

use maud::{html, Markup, PreEscaped};

use super::{recipe_path, version_path};
use crate::domain::{BroughtIn, Taken, TreeNode, VersionNumber};

/// The most recipes drawn.
pub const DRAWN: usize = 60;
/// How many generations above the page's recipe the drawing starts at most.
pub const GENERATIONS_ABOVE: usize = 12;

const ROW: f64 = 28.0;
const TOP: f64 = 16.0;
const LEFT: f64 = 12.0;
/// From a parent's mark to its fork's first mark, across.
const INDENT: f64 = 18.0;
/// The widest a recipe's line of versions gets.
const LINE_MAX: f64 = 224.0;
const MARK_SPACING: f64 = 14.0;
/// Above this many versions, only the first, the last and those forked
/// are marked.
const MARKS_MAX: u32 = 40;
/// Titles are cut to this many characters.
const TITLE_MAX: usize = 48;
/// An estimate of a character's width, for the picture's width.
const CHAR_WIDTH: f64 = 8.0;
/// How much wider bold letters are: a bold label overran the estimate by
/// a few pixels in Chromium (the browser test of the drawing).
const BOLD_WIDER: f64 = 1.15;

/// How far short of a mark an arrow stops, so that its head shows.
const ARROW_GAP: f64 = 5.0;
/// A phone's width in CSS pixels, less the page's margins: a drawing wider
/// than this scrolls there, and says so.
const NARROW_SCREEN: f64 = 358.0;

/// A straight line from `from` to `to` that stops `ARROW_GAP` short of
/// `to`, as a path.
fn arrow_line(from: (f64, f64), to: (f64, f64)) -> String {
    let (dx, dy) = (to.0 - from.0, to.1 - from.1);
    let length = (dx * dx + dy * dy).sqrt();
    let end = match length > ARROW_GAP {
        true => (
            to.0 - dx / length * ARROW_GAP,
            to.1 - dy / length * ARROW_GAP,
        ),
        false => to,
    };
    format!("M{:.1} {:.1} L{:.1} {:.1}", from.0, from.1, end.0, end.1)
}

/// The recipes drawn, in the order of the nested list.
struct Drawing<'a> {
    nodes: &'a [TreeNode],
    /// The parent of each node, by index.
    parent: Vec<Option<usize>>,
    /// Rows drawn: node indices, each after its parent.
    rows: Vec<usize>,
    /// For each drawn node, how many recipes the branches from it that are
    /// not drawn hold.
    hidden: Vec<usize>,
}

impl<'a> Drawing<'a> {
    fn new(nodes: &'a [TreeNode], current: Option<usize>) -> Drawing<'a> {
        let n = nodes.len();
        // Preorder with depths: a node's parent is the nearest earlier node
        // one level up, found with a stack.
        let mut parent = vec![None; n];
        let mut stack: Vec<usize> = Vec::new();
        for (i, node) in nodes.iter().enumerate() {
            stack.truncate(node.depth);
            parent[i] = stack.last().copied();
            stack.push(i);
        }
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, p) in parent.iter().enumerate() {
            if let Some(p) = p {
                children[*p].push(i);
            }
        }
        // The way from the drawing's top to the page's recipe.
        let mut way = Vec::new();
        let mut at = current;
        while let Some(i) = at {
            way.push(i);
            at = parent[i];
        }
        way.truncate(GENERATIONS_ABOVE + 1);
        let top = way.last().copied().unwrap_or(0);
        let mut drawn = Chosen {
            drawn: vec![false; n],
            count: 0,
        };
        for &i in &way {
            drawn.choose(i);
        }
        if let Some(c) = current {
            for &child in children[c].iter().take(DRAWN / 2) {
                drawn.choose(child);
            }
        }
        // Then a generation at a time from the top, while there is room.
        let mut queue = VecDeque::from([top]);
        while let Some(i) = queue.pop_front() {
            if drawn.count >= DRAWN {
                break;
            }
            drawn.choose(i);
            queue.extend(children[i].iter().copied());
        }
        let drawn = drawn.drawn;
        // Rows in the list's order: each after its parent, which is drawn
        // (the way up and the generations from the top both come down
        // from the top).
        let rows: Vec<usize> = (0..n).filter(|&i| drawn[i]).collect();
        // The branches left out, each counted whole under the drawn recipe
        // it forks from. Sizes are summed from the leaves up: children
        // come after their parents, so a reverse pass sees them first.
        let mut hidden = vec![0usize; n];
        let mut below = vec![0usize; n]; // every descendant
        for i in (0..n).rev() {
            if let Some(p) = parent[i] {
                below[p] += below[i] + 1;
                if !drawn[i] {
                    hidden[p] += below[i] + 1;
                }
            }
        }
        // The drawing's top is drawn as its root, whoever its parent.
        parent[top] = None;
        Drawing {
            nodes,
            parent,
            rows,
            hidden,
        }
    }
}

/// Which recipes are drawn, and how many.
struct Chosen {
    drawn: Vec<bool>,
    count: usize,
}

impl Chosen {
    fn choose(&mut self, i: usize) {
        if !self.drawn[i] {
            self.drawn[i] = true;
            self.count += 1;
        }
    }
}

/// Where a recipe's row is.
#[derive(Clone, Copy)]
struct Row {
    y: f64,
    /// The first mark's x.
    x: f64,
    /// Between marks.
    spacing: f64,
}

impl Row {
    fn mark_x(self, version: u32) -> f64 {
        self.x + f64::from(version.saturating_sub(1)) * self.spacing
    }
}

fn spacing(versions: u32) -> f64 {
    match versions {
        0 | 1 => MARK_SPACING,
        n => MARK_SPACING.min(LINE_MAX / f64::from(n - 1)),
    }
}

fn short_title(title: &str) -> String {
    if title.chars().count() <= TITLE_MAX {
        title.to_owned()
    } else {
        let cut: String = title.chars().take(TITLE_MAX - 1).collect();
        format!("{}…", cut.trim_end())
    }
}

/// How many characters a recipe's label holds: its title as drawn, its
/// count of versions and the note of recipes not drawn, as `row_markup`
/// writes them, so that the picture is wide enough for all of it.
fn label_chars(node: &TreeNode, hidden: usize) -> usize {
    let versions = node.version_count.max(1);
    let count = format!(" · {versions} versions").chars().count();
    let note = if hidden > 0 {
        format!(" · +{hidden} more below").chars().count()
    } else {
        0
    };
    short_title(&node.title).chars().count() + count + note
}

/// The mark on `parent`'s line that `node` forks from: the version it
/// copied (the last drawn, should the parent somehow have fewer).
fn mark_of(node: &TreeNode, parent: &TreeNode) -> u32 {
    node.forked_at
        .map_or(1, VersionNumber::get)
        .min(parent.version_count.max(1))
}

/// The family of the recipe with `current` (a slug), drawn; nothing for a
/// family of one.
pub fn drawing(nodes: &[TreeNode], current: &str) -> Markup {
    if nodes.len() < 2 {
        return html! {};
    }
    let current = nodes.iter().position(|n| n.slug == current);
    let drawing = Drawing::new(nodes, current);
    let (placed, width) = placed_rows(&drawing, current);
    let height = TOP + drawing.rows.len() as f64 * ROW;
    let width = width.ceil() + LEFT;
    let mut edges = String::new();
    let mut rows = String::new();
    for &i in &drawing.rows {
        let here = placed[i].expect("placed above");
        if let Some(p) = drawing.parent[i] {
            let edge = Edge {
                node: &nodes[i],
                parent: &nodes[p],
                here,
                there: placed[p].expect("a drawn node's parent is drawn"),
            };
            edge.push_all(&mut edges);
        }
        rows.push_str(&row_markup(&drawing, i, here, current == Some(i)).into_string());
    }
    figure(&drawing, width, height, PreEscaped(edges), PreEscaped(rows))
}

/// Where each drawn recipe's row is (by node index), and how wide the
/// picture must be for the rows and their labels, before its margin.
fn placed_rows(drawing: &Drawing, current: Option<usize>) -> (Vec<Option<Row>>, f64) {
    let nodes = drawing.nodes;
    let mut placed: Vec<Option<Row>> = vec![None; nodes.len()];
    let mut width: f64 = 0.0;
    for (row, &i) in drawing.rows.iter().enumerate() {
        let node = &nodes[i];
        let x = match drawing.parent[i].and_then(|p| placed[p].map(|r| (p, r))) {
            Some((p, parent_row)) => parent_row.mark_x(mark_of(node, &nodes[p])) + INDENT,
            None => LEFT,
        };
        let here = Row {
            y: TOP + row as f64 * ROW,
            x,
            spacing: spacing(node.version_count),
        };
        placed[i] = Some(here);
        let label = label_chars(node, drawing.hidden[i]) as f64 * CHAR_WIDTH;
        // The page's recipe is drawn in bold, its letters wider.
        let label = if current == Some(i) {
            label * BOLD_WIDER
        } else {
            label
        };
        width = width.max(here.mark_x(node.version_count) + 12.0 + label);
    }
    (placed, width)
}

/// The arrows between a drawn fork (`node`, on row `here`) and its
/// parent (on row `there`).
struct Edge<'a> {
    node: &'a TreeNode,
    parent: &'a TreeNode,
    here: Row,
    there: Row,
}

impl Edge<'_> {
    /// Every arrow: the fork's, then each merge's, then each suggestion
    /// taken's.
    fn push_all(&self, edges: &mut String) {
        edges.push_str(&self.fork().into_string());
        for merge in &self.node.merges {
            edges.push_str(&self.merge(merge).into_string());
        }
        for taken in &self.node.taken {
            edges.push_str(&self.taken(taken).into_string());
        }
    }

    /// The elbow from the parent's version forked to the fork's line.
    fn fork(&self) -> Markup {
        let (node, parent, here, there) = (self.node, self.parent, self.here, self.there);
        let version = node.forked_at.map_or(1, VersionNumber::get);
        let from = there.mark_x(mark_of(node, parent));
        // Its arrowhead stops short of the fork's first mark, which
        // would cover it.
        let to = (here.x - ARROW_GAP).max(from);
        html! {
            a href=(version_path(&parent.slug, version)) tabindex="-1" {
                title { (node.title) " was forked from version " (version) " of " (parent.title) }
                path class="edge" marker-end="url(#family-arrow)" d=(format!("M{from:.1} {:.1} V{:.1} H{to:.1}", there.y, here.y)) {}
            }
        }
    }

    /// A merge: from the parent's version brought in to the fork's
    /// version that brought it.
    fn merge(&self, merge: &BroughtIn) -> Markup {
        let (node, parent, here, there) = (self.node, self.parent, self.here, self.there);
        let parent_version = merge.parent_version.get().min(parent.version_count.max(1));
        let (x1, x2) = (
            there.mark_x(parent_version),
            here.mark_x(merge.version.get()),
        );
        let d = arrow_line((x1, there.y), (x2, here.y));
        html! {
            a href=(version_path(&node.slug, merge.version)) tabindex="-1" {
                title { (node.title) " brought in version " (merge.parent_version) " of " (parent.title) " in its version " (merge.version) }
                path class="edge merge" marker-end="url(#family-arrow-merge)" d=(d) {}
            }
        }
    }

    /// A suggestion the parent took: from the fork's version suggested to
    /// the parent's version that took it.
    fn taken(&self, taken: &Taken) -> Markup {
        let (node, parent, here, there) = (self.node, self.parent, self.here, self.there);
        let parent_version = taken.parent_version.get().min(parent.version_count.max(1));
        let fork_version = taken.fork_version.get().min(node.version_count.max(1));
        let (x1, x2) = (here.mark_x(fork_version), there.mark_x(parent_version));
        let d = arrow_line((x1, here.y), (x2, there.y));
        html! {
            a href=(version_path(&parent.slug, parent_version)) tabindex="-1" {
                title { (parent.title) " took suggestion " (taken.number) " from version " (taken.fork_version) " of " (node.title) " in its version " (taken.parent_version) }
                path class="edge merge taken" marker-end="url(#family-arrow-merge)" d=(d) {}
            }
        }
    }
}

/// The drawing's figure: the picture of its `edges` and `rows`, `width`
/// by `height`, with its caption.
fn figure(drawing: &Drawing, width: f64, height: f64, edges: Markup, rows: Markup) -> Markup {
    html! {
        figure class="family-drawing" {
            // A box of its own that scrolls sideways where the drawing is
            // wider than the page; focusable, so a keyboard scrolls it.
            div class="drawing-scroll" tabindex="0" role="region" aria-label="The family drawing, which scrolls sideways" {
                svg xmlns="http://www.w3.org/2000/svg" role="img"
                    aria-label="The family drawn: each line a recipe, each dot a version, each fork branching from the version it copied, with arrows the way each change went. The list below has the same recipes."
                    width=(width) height=(height) viewBox=(format!("0 0 {width} {height}")) {
                    defs {
                        marker id="family-arrow" class="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto" {
                            path d="M0 0 L10 5 L0 10 z" {}
                        }
                        marker id="family-arrow-merge" class="arrow merge" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto" {
                            path d="M0 0 L10 5 L0 10 z" {}
                        }
                    }
                    g class="edges" { (edges) }
                    (rows)
                }
            }
            (caption(drawing, width))
        }
    }
}

/// What the drawing shows, in words; how many recipes it leaves out, and
/// that it scrolls where it is wider than a phone (`width`).
fn caption(drawing: &Drawing, width: f64) -> Markup {
    let nodes = drawing.nodes;
    html! {
        figcaption {
            "Each line is a recipe and each dot one of its versions; a fork branches from the version it copied, and a dashed arrow goes the way a change went: from a parent's version to the fork's version that brought it in, or from a fork's version to the parent's version that took it as a suggestion."
            @if drawing.rows.len() < nodes.len() {
                " " (drawing.rows.len()) " of " (nodes.len()) " recipes are drawn; the list below has them all."
            }
            @if width > NARROW_SCREEN {
                " Where it is wider than the page, the drawing scrolls sideways in its box."
            }
        }
    }
}

/// One recipe's line of versions and its title.
fn row_markup(drawing: &Drawing, i: usize, here: Row, current: bool) -> Markup {
    let node = &drawing.nodes[i];
    let versions = node.version_count.max(1);
    // Versions its drawn forks copied are always marked.
    let forked: Vec<u32> = drawing
        .rows
        .iter()
        .filter(|&&c| drawing.parent[c] == Some(i))
        .filter_map(|&c| drawing.nodes[c].forked_at)
        .map(VersionNumber::get)
        .collect();
    // And those that brought in a parent's version, or were brought in.
    let merges: Vec<u32> = node
        .merges
        .iter()
        .map(|m| m.version.get())
        .chain(
            drawing
                .rows
                .iter()
                .filter(|&&c| drawing.parent[c] == Some(i))
                .flat_map(|&c| {
                    drawing.nodes[c]
                        .merges
                        .iter()
                        .map(|m| m.parent_version.get())
                }),
        )
        .collect();
    let marked = |v: u32| {
        versions <= MARKS_MAX
            || v == 1
            || v == versions
            || forked.contains(&v)
            || merges.contains(&v)
    };
    let end = here.mark_x(versions);
    let mut marks = String::new();
    for v in (1..=versions).filter(|&v| marked(v)) {
        marks.push_str(
            &html! {
                a href=(version_path(&node.slug, u64::from(v))) tabindex="-1" {
                    title { (node.title) ", version " (v) }
                    circle class="mark" cx=(format!("{:.1}", here.mark_x(v))) cy=(format!("{:.1}", here.y)) r="4" {}
                }
            }
            .into_string(),
        );
    }
    let hidden = drawing.hidden[i];
    html! {
        g class=(if current { "recipe current" } else { "recipe" }) {
            @if versions > 1 {
                line class="versions" x1=(format!("{:.1}", here.x)) y1=(format!("{:.1}", here.y))
                    x2=(format!("{end:.1}")) y2=(format!("{:.1}", here.y)) {}
            }
            (PreEscaped(marks))
            a class="title" href=(recipe_path(&node.slug)) tabindex="-1" {
                // The whole title, where the drawing shortens it.
                @if short_title(&node.title) != node.title {
                    title { (node.title) }
                }
                text x=(format!("{:.1}", end + 12.0)) y=(format!("{:.1}", here.y + 5.0)) {
                    (short_title(&node.title))
                    @if let Some(site) = super::site_elsewhere(&node.slug) {
                        tspan class="site" { " · on " (site) }
                    }
                    tspan class="count" { " · " (versions) @if versions == 1 { " version" } @else { " versions" } }
                    @if hidden > 0 {
                        tspan class="hidden" { " · +" (hidden) " more below" }
                    }
                }
            }
        }
    }
}
