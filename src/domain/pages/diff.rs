//! Two versions of one recipe compared, and a fork against its parent.

use super::{link, Crumb, Link};
use crate::domain::diff::{self, RecipeDiff};
use crate::domain::ids::VersionNumber;
use crate::domain::read::Snapshot;
use crate::domain::slug::Slug;
use crate::domain::DomainError;

/// Two versions of one recipe, and what changed between them.
pub struct VersionDiff {
    pub title: String,
    pub from: VersionNumber,
    pub to: VersionNumber,
    pub diff: RecipeDiff,
}

/// A fork against its parent.
pub struct Comparison {
    pub title: String,
    /// The parent, at the version that was forked.
    pub parent: Crumb,
    /// How many versions the parent has now.
    pub parent_versions: u32,
    /// The parent's forked version against this recipe now.
    pub since_fork: RecipeDiff,
    /// The parent now against this recipe now.
    pub against_now: RecipeDiff,
}

/// Version `from` against version `to` of the recipe with `slug`. `to`
/// is the newest version when `None`, `from` the one before `to`.
pub fn version_diff(
    snapshot: &Snapshot,
    slug: &Slug,
    from: Option<VersionNumber>,
    to: Option<VersionNumber>,
) -> Result<VersionDiff, DomainError> {
    let recipe = snapshot.recipe(slug)?;
    let versions = snapshot.versions(recipe.id)?;
    let newest = VersionNumber::new(versions.len() as u64).unwrap_or(VersionNumber::FIRST);
    let to = to.unwrap_or(newest);
    let from = from.unwrap_or(to.back(1));
    let old = Snapshot::nth_version(slug, &versions, from)?;
    let new = Snapshot::nth_version(slug, &versions, to)?;
    let diff = diff::recipes(
        &snapshot.content_at(recipe.id, old.basis)?,
        &snapshot.content_at(recipe.id, new.basis)?,
    );
    Ok(VersionDiff {
        title: recipe.content.title().to_owned(),
        from,
        to,
        diff,
    })
}

/// The recipe with `slug` against its parent; an original has none.
pub fn comparison(snapshot: &Snapshot, slug: &Slug) -> Result<Comparison, DomainError> {
    let recipe = snapshot.recipe(slug)?;
    let (Some((parent, version)), Some((since_fork, against_now))) =
        (recipe.forked_from, snapshot.compare_with_parent(recipe.id)?)
    else {
        return Err(DomainError::NoParent(recipe.content.title().to_owned()));
    };
    let Link { slug, title } = link(snapshot, parent)?;
    Ok(Comparison {
        title: recipe.content.title().to_owned(),
        parent: Crumb {
            slug,
            title,
            version,
        },
        parent_versions: snapshot.recipe_by_id(parent)?.version_count,
        since_fork,
        against_now,
    })
}
