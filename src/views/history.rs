//! A recipe's history: every version, newest first.

use maud::{html, Markup};

use super::layout::{self, Head, Section};
use super::merges::suggestion_path;
use super::{human_time, machine_time, recipe_path, version_path};
use crate::domain::{History, Origin, Version, VersionNumber};

/// A recipe's versions, each with what it changed.
pub struct HistoryView<'a> {
    pub slug: &'a str,
    pub title: &'a str,
    /// This page's versions, oldest first, as the domain gives them.
    pub versions: &'a [(Version, String)],
    /// Versions in all.
    pub total: usize,
    /// Where the page of older versions starts, if there are.
    pub older: Option<VersionNumber>,
    /// The versions that merged another recipe's changes, and whose.
    pub origins: &'a [(VersionNumber, Origin)],
}

/// Where a version's changes came from: the other recipe's version, and
/// the suggestion it took.
fn origin(slug: &str, origin: &Origin) -> Markup {
    html! {
        p class="links origin" {
            @match origin {
                Origin::BroughtIn { parent, version } => {
                    "From " a href=(version_path(&parent.slug, *version)) { "version " (version) " of " (parent.title) }
                }
                Origin::Took { number, fork, version } => {
                    "From " a href=(version_path(&fork.slug, *version)) { "version " (version) " of " (fork.title) }
                    ", by " a href=(suggestion_path(slug, *number)) { "suggestion " (number) }
                }
                Origin::InStep { parent, version, settled } => {
                    "Then in step with " a href=(version_path(&parent.slug, *version)) { "version " (version) " of " (parent.title) }
                    ", with no change to it"
                    @if let Some(settled) = settled { " (" (settled) ")" }
                }
                Origin::TakenUpstream { number, parent, version } => {
                    "Taken into " a href=(version_path(&parent.slug, *version)) { "version " (version) " of " (parent.title) }
                    ", by " a href=(suggestion_path(&parent.slug, *number)) { "suggestion " (number) }
                }
            }
        }
    }
}

pub fn page(view: &HistoryView) -> Markup {
    let title = format!("History of {}", view.title);
    let description = format!(
        "Every version of {}: who changed what, when and why, each one readable and compared with the one before.",
        view.title
    );
    let mut head = Head::new(&title, Section::Recipes);
    head.description = Some(&description);
    let slug = view.slug;
    layout::page(
        &head,
        html! {
            h1 { "History of " a href=(recipe_path(slug)) { (view.title) } }
            p class="lede" {
                @match (view.versions.first(), view.versions.last()) {
                    (Some((oldest, _)), Some((newest, _))) if view.versions.len() < view.total => {
                        "Versions " (newest.number) " to " (oldest.number) " of " (view.total) ", newest first."
                    }
                    (Some(_), _) if view.total == 1 => { "1 version." }
                    (Some(_), _) => { (view.total) " versions, newest first." }
                    _ => { "No older versions." }
                }
            }
            ol class="versions" role="list" reversed {
                @for (version, what) in view.versions.iter().rev() {
                    li {
                        h2 { a href=(version_path(slug, version.number)) { "Version " (version.number) } }
                        p class="meta" {
                            time datetime=(machine_time(version.instant)) { (human_time(version.instant)) }
                            @if let Some(author) = &version.author { " by " (author) }
                        }
                        @if let Some(note) = &version.note {
                            p class="note" { (note) }
                        }
                        p class="what" { "Changed: " (what) }
                        @for (_, o) in view.origins.iter().filter(|(n, _)| *n == version.number) {
                            (origin(slug, o))
                        }
                        @if version.number > VersionNumber::FIRST {
                            p class="links" {
                                a href={ (recipe_path(slug)) "/diff?from=" (version.number.back(1)) "&to=" (version.number) } {
                                    "Compare with version " (version.number.back(1))
                                }
                            }
                        }
                    }
                }
            }
            @if let Some(older) = view.older {
                nav class="pager" aria-label="Pages" {
                    a rel="next" href={ (recipe_path(slug)) "/history?before=" (older) } { "Older versions" }
                }
            }
        },
    )
}

/// The history page of the recipe with `slug`.
pub fn history(slug: &str, history: &History) -> Markup {
    page(&HistoryView {
        slug,
        title: &history.title,
        versions: &history.versions,
        total: history.total,
        older: history.older,
        origins: &history.origins,
    })
}
