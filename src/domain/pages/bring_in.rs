//! The bring-in page: a fork's parent's changes since the fork last
//! agreed with it, merged onto the fork, with what comes in and the
//! conflicts the cook chooses between.

use crate::domain::diff::{self, RecipeDiff};
use crate::domain::ids::VersionNumber;
use crate::domain::read::{ParentChanges, Recipe, Snapshot};
use crate::domain::slug::Slug;
use crate::domain::DomainError;

/// What the bring-in page shows.
pub struct BringInShow {
    /// The fork, as it is now.
    pub fork: Recipe,
    pub changes: ParentChanges,
    /// What the fork would gain: its newest version against the merge,
    /// with its own side of every conflict.
    pub incoming: RecipeDiff,
}

/// The bring-in page of the fork at `slug`, for the parent's version
/// `upto` (its newest when `None`).
pub fn bring_in_show(
    snapshot: &Snapshot,
    slug: &Slug,
    upto: Option<VersionNumber>,
) -> Result<BringInShow, DomainError> {
    let fork = snapshot.current(slug)?;
    let changes = snapshot.parent_changes(&fork, upto)?;
    let mine = vec![crate::domain::merge::Choice::Mine; changes.merge.conflicts().len()];
    let merged = changes
        .merge
        .resolved(&mine)
        .expect("a choice for every conflict");
    let incoming = diff::recipes(&fork.content, &merged);
    Ok(BringInShow {
        fork,
        changes,
        incoming,
    })
}
