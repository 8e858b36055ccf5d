//! A recipe's whole lineage, for when its breadcrumb is shortened.

use super::{crumb, Crumb};
use crate::domain::read::Snapshot;
use crate::domain::slug::Slug;
use crate::domain::DomainError;

/// A recipe's whole lineage, for when its breadcrumb is shortened.
pub struct LineageShow {
    pub slug: String,
    pub title: String,
    /// Every ancestor, the original first and the parent last.
    pub ancestors: Vec<Crumb>,
}

/// The whole lineage of the recipe with `slug`, each ancestor named.
pub fn lineage_show(snapshot: &Snapshot, slug: &Slug) -> Result<LineageShow, DomainError> {
    let recipe = snapshot.current(slug)?;
    let mut lineage = snapshot.lineage(recipe.id)?;
    lineage.reverse();
    let ancestors = lineage
        .iter()
        .map(|a| crumb(snapshot, a))
        .collect::<Result<_, _>>()?;
    Ok(LineageShow {
        slug: recipe.slug.to_string(),
        title: recipe.content.title().to_owned(),
        ancestors,
    })
}
