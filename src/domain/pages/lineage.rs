//! A recipe's whole lineage, for when its breadcrumb is shortened.

use super::Crumb;
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

impl Snapshot {
    /// The whole lineage of the recipe with `slug`, each ancestor named.
    pub fn lineage_show(&self, slug: &Slug) -> Result<LineageShow, DomainError> {
        let recipe = self.current(slug)?;
        let mut lineage = self.lineage(recipe.id)?;
        lineage.reverse();
        let ancestors = lineage
            .iter()
            .map(|a| self.crumb(a))
            .collect::<Result<_, _>>()?;
        Ok(LineageShow {
            slug: recipe.slug.to_string(),
            title: recipe.content.title,
            ancestors,
        })
    }
}
