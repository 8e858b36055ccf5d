//! One past version of a recipe.

use super::{crumbs, Breadcrumb};
use crate::domain::ids::VersionNumber;
use crate::domain::read::{Recipe, Snapshot, Version};
use crate::domain::slug::Slug;
use crate::domain::{Content, DomainError};

/// One past version of a recipe.
pub struct VersionShow {
    /// The recipe as it is now (its slug, author, version count).
    pub recipe: Recipe,
    pub version: Version,
    /// The recipe as this version left it.
    pub content: Content,
    pub lineage: Breadcrumb,
}

/// What a past version's page shows.
pub fn version_show(
    snapshot: &Snapshot,
    slug: &Slug,
    number: VersionNumber,
) -> Result<VersionShow, DomainError> {
    let recipe = snapshot.recipe(slug)?;
    let (version, content) = snapshot.version(slug, number)?;
    let lineage = crumbs(snapshot, recipe.id)?;
    Ok(VersionShow {
        recipe,
        version,
        content,
        lineage,
    })
}
