//! Search: recipes whose terms hold every word of a query.

use std::collections::BTreeSet;

use super::{CatalogEntry, Snapshot};
use crate::domain::ids::RecipeId;
use crate::domain::{search, DomainError};
use crate::store::{Components, EntityId, Index};

impl Snapshot {
    /// Recipes matching every word of `text` (the last one as a prefix, so
    /// results come as a person types), not retired, by title.
    pub fn search(&self, text: &str, limit: usize) -> Result<Vec<CatalogEntry>, DomainError> {
        let words: Vec<String> = search::words(text).collect();
        let Some((last, whole)) = words.split_last() else {
            return Ok(Vec::new());
        };
        let mut matches: Option<BTreeSet<EntityId>> = None;
        for word in whole {
            let ids: BTreeSet<EntityId> = self
                .db
                .datoms(
                    Index::Avet,
                    &Components::any().a(self.attrs.terms).v(word.as_str()),
                )
                .map(|d| d.map(|d| d.e))
                .collect::<Result<_, _>>()?;
            matches = Some(match matches {
                Some(m) => m.intersection(&ids).copied().collect(),
                None => ids,
            });
        }
        let prefixed: BTreeSet<EntityId> = self
            .db
            .text_prefix(self.attrs.terms, last)
            .map(|d| d.map(|d| d.e))
            .collect::<Result<_, _>>()?;
        let found = match matches {
            Some(m) => m.intersection(&prefixed).copied().collect(),
            None => prefixed,
        };
        let mut entries = Vec::new();
        for id in found.into_iter().map(RecipeId::new) {
            if !self.is_retired(id)? {
                entries.push(self.catalog_entry(id)?);
            }
        }
        entries.sort_by(|a, b| (&a.title, a.id).cmp(&(&b.title, b.id)));
        entries.truncate(limit);
        Ok(entries)
    }
}
