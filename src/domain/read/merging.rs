//! A fork against its parent's newer versions: what bringing them in
//! would merge, read on one value (for the form, and in the writer for the
//! version it saves).

use super::{Recipe, Snapshot};
use crate::domain::ids::{Basis, RecipeId, VersionNumber};
use crate::domain::merge::{self, Merge};
use crate::domain::{Content, DomainError};
use crate::store::{Components, Index};

/// The parent's changes a fork has not brought in, merged onto the fork.
#[derive(Debug, Clone)]
pub struct ParentChanges {
    pub parent: Recipe,
    /// The parent's version the fork last agreed with (forked or brought
    /// in): the merge's base.
    pub base: VersionNumber,
    /// The parent's version brought in, and its transaction.
    pub upto: VersionNumber,
    pub upto_at: Basis,
    /// The parent as of `base` and as of `upto`.
    pub base_content: Content,
    pub parent_content: Content,
    /// The fork's newest version ("mine") with the parent's changes
    /// from `base` to `upto` ("theirs").
    pub merge: Merge,
}

/// One merge a fork made: the parent's version it brought in, and the
/// fork's version that did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BroughtIn {
    pub parent_version: VersionNumber,
    pub version: VersionNumber,
}

impl Snapshot {
    /// Every merge recipe `id` made, oldest first: the history of its
    /// `:recipe/merged-at-version`, each with the version count its
    /// transaction set (the fork's version that merged). One read of each
    /// attribute's history, and none past the first for a recipe that
    /// never brought anything in.
    pub fn merges(&self, id: RecipeId) -> Result<Vec<BroughtIn>, DomainError> {
        let history = self.db.history();
        let e = id.entity();
        let mut merged = Vec::new();
        for datom in history.datoms(
            Index::Eavt,
            &Components::any().e(e).a(self.attrs.merged_at_version),
        ) {
            let datom = datom?;
            if let (true, Some(n)) = (
                datom.added,
                datom.v.as_long().and_then(VersionNumber::stored),
            ) {
                merged.push((datom.tx, n));
            }
        }
        if merged.is_empty() {
            return Ok(Vec::new());
        }
        let mut out = Vec::with_capacity(merged.len());
        for datom in history.datoms(
            Index::Eavt,
            &Components::any().e(e).a(self.attrs.version_count),
        ) {
            let datom = datom?;
            if !datom.added {
                continue;
            }
            if let Some(&(_, parent_version)) = merged.iter().find(|(tx, _)| *tx == datom.tx) {
                if let Some(version) = datom.v.as_long().and_then(VersionNumber::stored) {
                    out.push(BroughtIn {
                        parent_version,
                        version,
                    });
                }
            }
        }
        out.sort_by_key(|m| m.version);
        Ok(out)
    }

    /// The parent's version `fork` last agreed with (forked or brought
    /// in), and the parent's newest version: how far apart they are. One
    /// read, whatever the parent's history; `None` for an original.
    pub fn apart_from_parent(
        &self,
        fork: &Recipe,
    ) -> Result<Option<(VersionNumber, VersionNumber)>, DomainError> {
        let Some((parent, synced)) = fork.in_step_with() else {
            return Ok(None);
        };
        let count = self
            .db
            .value(parent.entity(), self.attrs.version_count)?
            .map(|v| super::recipe::stored_count(&v))
            .unwrap_or(0);
        let newest = VersionNumber::new(u64::from(count)).unwrap_or(synced);
        Ok(Some((synced, newest.max(synced))))
    }

    /// The merge of `fork`'s parent's changes since the fork last agreed
    /// with it, up to the parent's version `upto` (its newest when `None`).
    /// Reads the three versions merged: the cost of the two recipes, never
    /// of their family.
    pub fn parent_changes(
        &self,
        fork: &Recipe,
        upto: Option<VersionNumber>,
    ) -> Result<ParentChanges, DomainError> {
        let (parent_id, base) = fork
            .in_step_with()
            .ok_or_else(|| DomainError::NoParent(fork.slug.to_string()))?;
        let parent = self.recipe_by_id(parent_id)?;
        let versions = self.versions(parent_id)?;
        let upto = upto.unwrap_or_else(|| parent.newest());
        if upto <= base {
            return Err(DomainError::UpToDate {
                slug: fork.slug.to_string(),
                parent: parent.content.title.clone(),
                version: base,
            });
        }
        let at = |n| Snapshot::nth_version(&parent.slug, &versions, n);
        let base_content = self.content_at(parent_id, at(base)?.basis)?;
        let upto_at = at(upto)?.basis;
        let parent_content = self.content_at(parent_id, upto_at)?;
        let merge = merge::merge(&base_content, &fork.content, &parent_content);
        Ok(ParentChanges {
            parent,
            base,
            upto,
            upto_at,
            base_content,
            parent_content,
            merge,
        })
    }
}
