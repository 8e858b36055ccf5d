//! Diffs between versions, inline or side by side.
//!
//! Changes are marked with `<ins>` and `<del>` (with words for screen
//! readers), so a diff reads without colour: the stylesheet underlines and
//! strikes through, and print keeps both.

use maud::{html, Markup};

use super::layout::{self, Head, Section};
use super::recipe_path;
use crate::domain::diff::{FieldChange, LineChange, Piece, RecipeDiff};
use crate::domain::{Comparison, VersionDiff};

/// How the lines of a diff are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// One list, removed lines just before added ones.
    #[default]
    Inline,
    /// Two columns, old and new.
    Side,
}

/// One diff on a page, with what its two sides are.
pub struct DiffSection<'a> {
    pub heading: String,
    pub from: String,
    pub to: String,
    pub diff: &'a RecipeDiff,
}

/// A page of diffs (one for two versions, two for a fork and its parent).
pub struct DiffView<'a> {
    pub slug: &'a str,
    pub title: &'a str,
    pub heading: String,
    pub sections: Vec<DiffSection<'a>>,
    pub layout: Layout,
    /// This page's address without the layout parameter, to build the
    /// links between the two layouts.
    pub here: String,
}

fn removed(text: &str) -> Markup {
    html! { del { span class="visually-hidden" { "removed: " } (text) } }
}

fn added(text: &str) -> Markup {
    html! { ins { span class="visually-hidden" { "added: " } (text) } }
}

/// The old side of a changed line (kept and removed words) or the new side
/// (kept and added words).
fn words(pieces: &[Piece<String>], old: bool) -> Markup {
    html! {
        @for piece in pieces {
            @match piece {
                Piece::Same(w) => (w),
                Piece::Removed(w) => @if old { (removed(w)) },
                Piece::Added(w) => @if !old { (added(w)) },
            }
        }
    }
}

fn both_sides(pieces: &[Piece<String>]) -> Markup {
    html! {
        @for piece in pieces {
            @match piece {
                Piece::Same(w) => (w),
                Piece::Removed(w) => (removed(w)),
                Piece::Added(w) => (added(w)),
            }
        }
    }
}

fn inline(lines: &[LineChange]) -> Markup {
    html! {
        ul class="diff diff-inline" {
            @for line in lines {
                @match line {
                    LineChange::Same(text) => li class="same" { (text) },
                    LineChange::Removed(text) => li class="removed" { (removed(text)) },
                    LineChange::Added(text) => li class="added" { (added(text)) },
                    LineChange::Changed(pieces) => li class="changed" { (both_sides(pieces)) },
                }
            }
        }
    }
}

fn side(lines: &[LineChange], from: &str, to: &str) -> Markup {
    html! {
        div class="table-scroll" {
            table class="diff diff-side" {
                thead { tr { th scope="col" { (from) } th scope="col" { (to) } } }
                tbody {
                    @for line in lines {
                        @match line {
                            LineChange::Same(text) => tr class="same" { td { (text) } td { (text) } },
                            LineChange::Removed(text) => tr class="removed" { td { (removed(text)) } td {} },
                            LineChange::Added(text) => tr class="added" { td {} td { (added(text)) } },
                            LineChange::Changed(pieces) => tr class="changed" {
                                td { (words(pieces, true)) }
                                td { (words(pieces, false)) }
                            },
                        }
                    }
                }
            }
        }
    }
}

fn fields(fields: &[FieldChange]) -> Markup {
    let none = "(none)";
    html! {
        dl {
            @for f in fields {
                div {
                    dt { (f.field) }
                    dd {
                        (removed(f.from.as_deref().unwrap_or(none))) " "
                        (added(f.to.as_deref().unwrap_or(none)))
                    }
                }
            }
        }
    }
}

fn changed(lines: &[LineChange]) -> bool {
    lines.iter().any(|l| !matches!(l, LineChange::Same(_)))
}

/// One diff, laid out inline or side by side.
pub fn section(layout: Layout, s: &DiffSection) -> Markup {
    let lines = |lines: &[LineChange]| match layout {
        Layout::Inline => inline(lines),
        Layout::Side => side(lines, &s.from, &s.to),
    };
    html! {
        section class="diff-section" {
            h2 { (s.heading) }
            p class="meta" { "From " (s.from) " to " (s.to) "." }
            @if s.diff.is_empty() {
                p class="notice" { "No differences." }
            } @else {
                @if !s.diff.fields.is_empty() {
                    section class="diff-fields" { h3 { "Details" } (fields(&s.diff.fields)) }
                }
                @if changed(&s.diff.ingredients) {
                    h3 { "Ingredients" } (lines(&s.diff.ingredients))
                }
                @if changed(&s.diff.steps) {
                    h3 { "Method" } (lines(&s.diff.steps))
                }
            }
        }
    }
}

fn layout_link(view: &DiffView, layout: Layout, text: &str) -> Markup {
    let joiner = if view.here.contains('?') { '&' } else { '?' };
    let href = match layout {
        Layout::Inline => view.here.clone(),
        Layout::Side => format!("{}{joiner}view=side", view.here),
    };
    html! {
        @if view.layout == layout {
            a href=(href) aria-current="page" { (text) }
        } @else {
            a href=(href) { (text) }
        }
    }
}

pub fn page(view: &DiffView) -> Markup {
    let mut head = Head::new(&view.heading, Section::Recipes);
    // Out of the index by design: a diff only repeats two versions, each
    // of which has its own page (robots.txt keeps crawlers off too).
    head.noindex = true;
    layout::page(
        &head,
        html! {
            h1 { (view.heading) }
            p class="lede" { a href=(recipe_path(view.slug)) { "Back to " (view.title) } }
            nav class="diff-views" aria-label="Diff layout" {
                (layout_link(view, Layout::Inline, "Inline")) " "
                (layout_link(view, Layout::Side, "Side by side"))
            }
            @for s in &view.sections { (section(view.layout, s)) }
        },
    )
}

/// Two versions of a recipe against each other.
pub fn versions(slug: &str, model: &VersionDiff, layout: Layout) -> Markup {
    let VersionDiff {
        title, from, to, ..
    } = model;
    page(&DiffView {
        slug,
        title,
        heading: format!("{title}: version {from} against version {to}"),
        sections: vec![DiffSection {
            heading: "Changes".to_owned(),
            from: format!("Version {from}"),
            to: format!("Version {to}"),
            diff: &model.diff,
        }],
        layout,
        here: format!("{}/diff?from={from}&to={to}", recipe_path(slug)),
    })
}

/// A fork against its parent: since the fork, and against the parent now.
pub fn comparison(slug: &str, model: &Comparison, layout: Layout) -> Markup {
    let (parent, title) = (&model.parent, &model.title);
    page(&DiffView {
        slug,
        title,
        heading: format!("{title} against its parent, {}", parent.title),
        sections: vec![
            DiffSection {
                heading: "Since the fork".to_owned(),
                from: format!("{} version {}", parent.title, parent.version),
                to: format!("{title} now"),
                diff: &model.since_fork,
            },
            DiffSection {
                heading: "Against the parent now".to_owned(),
                from: format!("{} now (version {})", parent.title, model.parent_versions),
                to: format!("{title} now"),
                diff: &model.against_now,
            },
        ],
        layout,
        here: format!("{}/compare", recipe_path(slug)),
    })
}
