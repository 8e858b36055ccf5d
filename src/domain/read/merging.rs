//! A fork against its parent: where the two last agreed, and what bringing
//! the parent's newer versions in would merge, read on one value (for the
//! form, and in the writer for the version it saves).
//!
//! A fork agrees with its parent at the version it forked, at each version
//! it brought in, and at a version that took the fork's suggestion whole
//! (the parent had no change of its own since the suggestion's base, so
//! the new version is the fork's changes and nothing else). A suggestion
//! taken beside changes of the parent's own leaves the fork behind (those
//! changes are new to it), but moves the base the next merge starts from
//! to the fork's version suggested: the parent has those changes now, and
//! merging from the older base would show them as made on both sides.

use super::{Recipe, Snapshot, Taken};
use crate::domain::ids::{Basis, RecipeId, VersionNumber};
use crate::domain::merge::{self, Merge};
use crate::domain::{Content, DomainError};
use crate::store::{Components, Index};

/// The content a merge of a fork and its parent starts from: the parent's
/// version `parent_version`, with, when the parent took a suggestion of
/// the fork's beside changes of its own, the fork's version suggested
/// (`fork_version`) on it as it was suggested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MergeBase {
    pub parent_version: VersionNumber,
    pub fork_version: Option<VersionNumber>,
}

/// Where a fork stands against its parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agreed {
    pub parent: RecipeId,
    /// The parent's version the fork is in step with.
    pub version: VersionNumber,
    /// The parent's newest version.
    pub newest: VersionNumber,
    pub base: MergeBase,
    /// The fork's suggestions the parent took, oldest first: read only
    /// when the parent moved on since the fork's own record of where they
    /// agree (empty otherwise, when none can matter).
    pub taken: Vec<Taken>,
}

/// The parent's changes a fork has not brought in, merged onto the fork.
#[derive(Debug, Clone)]
pub struct ParentChanges {
    pub parent: Recipe,
    /// The parent's version the fork is in step with.
    pub base: VersionNumber,
    /// Where the merge starts.
    pub merge_base: MergeBase,
    /// The parent's version brought in, and its transaction.
    pub upto: VersionNumber,
    pub upto_at: Basis,
    /// The content the merge starts from, and the parent as of `upto`.
    pub base_content: Content,
    pub parent_content: Content,
    /// The fork's newest version ("mine") with the parent's changes
    /// from the base to `upto` ("theirs").
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

    /// Where `fork` stands against its parent (`None` for an original):
    /// one read of the parent's version count, and, only when the parent
    /// has moved on since the fork's own record, one of the fork's
    /// suggestions the parent took.
    pub fn agreed(&self, fork: &Recipe) -> Result<Option<Agreed>, DomainError> {
        let Some((parent, recorded)) = fork.in_step_with() else {
            return Ok(None);
        };
        let count = self
            .db
            .value(parent.entity(), self.attrs.version_count)?
            .map(|v| super::recipe::stored_count(&v))
            .unwrap_or(0);
        let newest = VersionNumber::new(u64::from(count))
            .unwrap_or(recorded)
            .max(recorded);
        let mut agreed = Agreed {
            parent,
            version: recorded,
            newest,
            base: MergeBase {
                parent_version: recorded,
                fork_version: None,
            },
            taken: Vec::new(),
        };
        if recorded == newest {
            return Ok(Some(agreed));
        }
        agreed.taken = self.taken_from(fork.id)?;
        agreed.taken.sort_by_key(|t| t.parent_version);
        for t in agreed.taken.clone() {
            if t.parent_version <= agreed.version {
                continue;
            }
            if t.is_whole() {
                agreed.version = t.parent_version;
                agreed.base = MergeBase {
                    parent_version: t.parent_version,
                    fork_version: None,
                };
            } else {
                agreed.base = MergeBase {
                    parent_version: t.base_version,
                    fork_version: Some(t.fork_version),
                };
            }
        }
        Ok(Some(agreed))
    }

    /// The content a merge of `fork` and its parent `parent` starts from.
    pub fn base_content(
        &self,
        parent: &Recipe,
        fork: &Recipe,
        base: MergeBase,
    ) -> Result<Content, DomainError> {
        let versions = self.versions(parent.id)?;
        let at = Snapshot::nth_version(&parent.slug, &versions, base.parent_version)?;
        let content = self.content_at(parent.id, at.basis)?;
        match base.fork_version {
            None => Ok(content),
            Some(v) => {
                let fork_versions = self.versions(fork.id)?;
                let at = Snapshot::nth_version(&fork.slug, &fork_versions, v)?;
                Ok(merge::as_suggested(
                    &content,
                    &self.content_at(fork.id, at.basis)?,
                ))
            }
        }
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
        let agreed = self
            .agreed(fork)?
            .ok_or_else(|| DomainError::NoParent(fork.slug.to_string()))?;
        let parent = self.recipe_by_id(agreed.parent)?;
        let upto = upto.unwrap_or(agreed.newest);
        if upto <= agreed.version {
            return Err(DomainError::UpToDate {
                slug: fork.slug.to_string(),
                parent: parent.content.title.clone(),
                version: agreed.version,
            });
        }
        let versions = self.versions(parent.id)?;
        let upto_at = Snapshot::nth_version(&parent.slug, &versions, upto)?.basis;
        let base_content = self.base_content(&parent, fork, agreed.base)?;
        let parent_content = self.content_at(parent.id, upto_at)?;
        let merge = merge::merge(&base_content, &fork.content, &parent_content);
        Ok(ParentChanges {
            parent,
            base: agreed.version,
            merge_base: agreed.base,
            upto,
            upto_at,
            base_content,
            parent_content,
            merge,
        })
    }

    /// Whether `content`, a version of `fork` (as this value has it), has
    /// changes its parent lacks: what the writer records of each version
    /// of a fork (`:recipe/own-changes`). Reads the base: the parent's
    /// version (and the fork's, after a suggestion taken beside changes of
    /// the parent's own).
    pub fn has_own_changes(&self, fork: &Recipe, content: &Content) -> Result<bool, DomainError> {
        let Some(agreed) = self.agreed(fork)? else {
            return Ok(false);
        };
        let parent = self.recipe_by_id(agreed.parent)?;
        let base = self.base_content(&parent, fork, agreed.base)?;
        Ok(merge::as_suggested(&base, content) != base)
    }
}
