//! The recipe page (and its JSON): the recipe now, at the scale asked,
//! where it came from and what it became.

use super::{crumbs, link, Breadcrumb, Link};
use crate::domain::read::{Recipe, Snapshot};
use crate::domain::scale::{Scale, ScaleAsked};
use crate::domain::slug::Slug;
use crate::domain::{DomainError, VersionNumber};

/// Forks a recipe page lists; the family tree has the rest.
pub const FORKS_LISTED: usize = 50;

/// The recipe page (and its JSON): the recipe now, where it came from and
/// what it became.
pub struct RecipeShow {
    pub recipe: Recipe,
    pub lineage: Breadcrumb,
    /// Direct forks, oldest first, at most `FORKS_LISTED`.
    pub forks: Vec<Link>,
    /// Direct forks in all.
    pub fork_count: usize,
    /// For a fork: the parent's version it last agreed with (forked or
    /// brought in) and the parent's newest, so the page says how far apart
    /// they are.
    pub apart: Option<Apart>,
    /// Suggestions to it still open.
    pub open_suggestions: usize,
    /// The scale its amounts are shown at: part of the page, since a
    /// scale the recipe cannot be shown at (servings asked of a recipe that
    /// says none) is the page's error.
    pub scale: Scale,
}

/// How far a fork is from its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Apart {
    /// The parent's version the fork last agreed with.
    pub since: VersionNumber,
    /// The parent's newest version.
    pub newest: VersionNumber,
}

impl Apart {
    /// Versions the parent gained since.
    pub fn gained(&self) -> u32 {
        self.newest.get() - self.since.get()
    }
}

/// What the recipe page shows, at the scale asked.
pub fn recipe_show(
    snapshot: &Snapshot,
    slug: &Slug,
    asked: ScaleAsked,
) -> Result<RecipeShow, DomainError> {
    let recipe = snapshot.current(slug)?;
    let scale = Scale::for_recipe(&recipe.content, asked.servings, asked.units)?;
    let lineage = crumbs(snapshot, recipe.id)?;
    let apart = snapshot
        .apart_from_parent(&recipe)?
        .map(|(since, newest)| Apart { since, newest });
    let all_forks = snapshot.forks(recipe.id)?;
    let forks = all_forks
        .iter()
        .take(FORKS_LISTED)
        .map(|&id| link(snapshot, id))
        .collect::<Result<_, _>>()?;
    let open_suggestions = snapshot.open_suggestions(recipe.id)?;
    Ok(RecipeShow {
        recipe,
        lineage,
        forks,
        fork_count: all_forks.len(),
        apart,
        open_suggestions,
        scale,
    })
}
