//! A recipe's history: each version with a line on what it changed.

use super::{link, Link};
use crate::domain::ids::VersionNumber;
use crate::domain::read::{Snapshot, Version};
use crate::domain::slug::Slug;
use crate::domain::DomainError;

/// Where a version's changes came from, when another recipe's: the
/// history links it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A fork's version that brought in its parent's `version`.
    BroughtIn {
        parent: Link,
        version: VersionNumber,
    },
    /// A version that took suggestion `number`, the fork's `version`.
    Took {
        number: u32,
        fork: Link,
        version: VersionNumber,
    },
    /// A fork's version its parent took, by suggestion `number`, in the
    /// parent's `version`: where this version's changes went.
    TakenUpstream {
        number: u32,
        parent: Link,
        version: VersionNumber,
    },
    /// A fork's version that came to agree with its parent's `version`
    /// without changing (an agreement): it had the parent's changes, or
    /// kept its own side of each (`settled` says how).
    InStep {
        parent: Link,
        version: VersionNumber,
        settled: Option<String>,
    },
}

/// A recipe's history: each version with a line on what it changed.
pub struct History {
    pub title: String,
    /// This page's versions, oldest first.
    pub versions: Vec<(Version, String)>,
    /// Versions in all.
    pub total: usize,
    /// Where the page of older versions starts (`?before=`), if there are.
    pub older: Option<VersionNumber>,
    /// This page's versions that merged another recipe's changes.
    pub origins: Vec<(VersionNumber, Origin)>,
}

/// Versions a history page shows.
pub const HISTORY_PAGE: usize = 50;

/// What the history page shows.
pub fn history(
    snapshot: &Snapshot,
    slug: &Slug,
    before: Option<VersionNumber>,
) -> Result<History, DomainError> {
    let recipe = snapshot.recipe(slug)?;
    let (versions, total) = snapshot.changes_page(recipe.id, before, HISTORY_PAGE)?;
    let older = versions
        .first()
        .map(|(v, _)| v.number)
        .filter(|&n| n > VersionNumber::FIRST);
    // Each read in proportion to the recipe's own merges and suggestions
    // taken, never to the suggestions it was sent.
    let shown = |n: VersionNumber| versions.iter().any(|(v, _)| v.number == n);
    let mut origins = Vec::new();
    if let Some((parent, _)) = recipe.forked_from {
        let agreements = snapshot.agreements(recipe.id)?;
        if agreements.iter().any(|a| shown(a.fork_version)) {
            let parent = link(snapshot, parent)?;
            for a in agreements.into_iter().filter(|a| shown(a.fork_version)) {
                let origin = Origin::InStep {
                    parent: parent.clone(),
                    version: a.parent_version,
                    settled: a.settled,
                };
                origins.push((a.fork_version, origin));
            }
        }
        let taken = snapshot.taken_from(recipe.id)?;
        if taken.iter().any(|t| shown(t.fork_version)) {
            let parent = link(snapshot, parent)?;
            for t in taken.into_iter().filter(|t| shown(t.fork_version)) {
                let origin = Origin::TakenUpstream {
                    number: t.number,
                    parent: parent.clone(),
                    version: t.parent_version,
                };
                origins.push((t.fork_version, origin));
            }
        }
        let merges = snapshot.merges(recipe.id)?;
        if merges.iter().any(|m| shown(m.version)) {
            let parent = link(snapshot, parent)?;
            for merge in merges.into_iter().filter(|m| shown(m.version)) {
                let origin = Origin::BroughtIn {
                    parent: parent.clone(),
                    version: merge.parent_version,
                };
                origins.push((merge.version, origin));
            }
        }
    }
    for (tx, suggestion) in snapshot.taken_by(recipe.id)? {
        let Some((version, _)) = versions.iter().find(|(v, _)| v.basis.tx() == tx) else {
            continue;
        };
        let s = snapshot.suggestion_by_id(suggestion)?;
        let origin = Origin::Took {
            number: s.number,
            fork: link(snapshot, s.from)?,
            version: s.from_version,
        };
        origins.push((version.number, origin));
    }
    Ok(History {
        versions,
        total,
        older,
        origins,
        title: recipe.content.title().to_owned(),
    })
}
