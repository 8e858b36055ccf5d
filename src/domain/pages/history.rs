//! A recipe's history: each version with a line on what it changed.

use crate::domain::ids::VersionNumber;
use crate::domain::read::{Snapshot, Version};
use crate::domain::slug::Slug;
use crate::domain::DomainError;

/// A recipe's history: each version with a line on what it changed.
pub struct History {
    pub title: String,
    /// This page's versions, oldest first.
    pub versions: Vec<(Version, String)>,
    /// Versions in all.
    pub total: usize,
    /// Where the page of older versions starts (`?before=`), if there are.
    pub older: Option<VersionNumber>,
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
    Ok(History {
        versions,
        total,
        older,
        title: recipe.content.title,
    })
}
