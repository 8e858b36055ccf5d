//! A fork against its parent: where the two last agreed, and what bringing
//! the parent's newer versions in would merge, read on one value (for the
//! form, and in the writer for the version it saves).
//!
//! A fork agrees with its parent at the version it forked, at each version
//! it brought in, at each agreement (a bring-in that changed nothing of the
//! fork: it had the parent's changes, or kept its own side of each, so it
//! gains no version, and an entity of its own says it is in step), and at
//! a version that took the fork's suggestion whole (the parent had no
//! change of its own since the suggestion's base, so the new version is
//! the fork's changes and nothing else). A suggestion
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

/// A bring-in that changed nothing of the fork, recorded as an entity of
/// its own (`:agreement/*`): from it on, the fork agrees with its parent's
/// version `parent_version`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agreement {
    pub parent_version: VersionNumber,
    /// The fork's newest version when it was made.
    pub fork_version: VersionNumber,
    /// Of the changes both made differently, how many the fork kept its
    /// own version of.
    pub kept_own: u32,
    /// Whether the fork had changes its parent lacks, then.
    pub own_changes: bool,
    /// How each conflict was settled, for history.
    pub settled: Option<String>,
}

/// Where a fork stands against its parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agreed {
    pub parent: RecipeId,
    /// The parent's version the fork is in step with.
    pub version: VersionNumber,
    /// Of the changes both made differently, how many the fork kept its
    /// own version of when it last brought the parent's in.
    pub kept_own: u32,
    /// Whether the fork's newest version has changes its parent lacks, as
    /// the writer last said (`None` where none did).
    pub own_changes: Option<bool>,
    /// The parent's newest version.
    pub newest: VersionNumber,
    /// Whether the parent was retired (read only when it moved on since
    /// the fork agreed with it: a retirement is a version).
    pub parent_retired: bool,
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
    /// Of the parent's versions since, how many took the fork's own
    /// suggestions.
    pub taken: usize,
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

    /// The agreements fork `id` made, oldest first: one VAET read (from
    /// memory for a fork that made none), then one read each.
    pub fn agreements(&self, id: RecipeId) -> Result<Vec<Agreement>, DomainError> {
        let ids = self.db.referrers(self.attrs.agreement_fork, id.entity())?;
        ids.iter().map(|&a| self.agreement(a)).collect()
    }

    fn agreement(&self, id: crate::store::EntityId) -> Result<Agreement, DomainError> {
        let a = &self.attrs;
        let mut out = Agreement {
            parent_version: VersionNumber::FIRST,
            fork_version: VersionNumber::FIRST,
            kept_own: 0,
            own_changes: true,
            settled: None,
        };
        let version = |v: &crate::store::Value| {
            v.as_long()
                .and_then(VersionNumber::stored)
                .unwrap_or(VersionNumber::FIRST)
        };
        for datom in self
            .db
            .entity_attributes(id, a.agreement_fork, a.agreement_settled)
        {
            let datom = datom?;
            match datom.a {
                x if x == a.agreement_parent_version => out.parent_version = version(&datom.v),
                x if x == a.agreement_fork_version => out.fork_version = version(&datom.v),
                x if x == a.agreement_kept_own => {
                    out.kept_own = datom
                        .v
                        .as_long()
                        .and_then(|n| u32::try_from(n).ok())
                        .unwrap_or(0)
                }
                x if x == a.agreement_own_changes => {
                    out.own_changes = datom.v.as_bool().unwrap_or(true)
                }
                x if x == a.agreement_settled => out.settled = datom.v.as_str().map(str::to_owned),
                _ => {}
            }
        }
        Ok(out)
    }

    /// Where `fork` stands against its parent (`None` for an original):
    /// one read of the parent's version count and one of the fork's
    /// agreements (from memory for a fork that made none), and, only when
    /// the parent has moved on since, one of the fork's suggestions the
    /// parent took.
    pub fn agreed(&self, fork: &Recipe) -> Result<Option<Agreed>, DomainError> {
        let Some((parent, recorded)) = fork.in_step_with() else {
            return Ok(None);
        };
        // The newest merge: a version that brought the parent's in, or an
        // agreement, whichever agrees with the later parent version.
        let (recorded, kept_own, own_changes) = match self.agreements(fork.id)?.pop() {
            Some(a) if a.parent_version > recorded => {
                let own = match a.fork_version == fork.newest() {
                    true => Some(a.own_changes),
                    false => fork.own_changes,
                };
                (a.parent_version, a.kept_own, own)
            }
            _ => (recorded, fork.kept_own, fork.own_changes),
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
            kept_own,
            own_changes,
            newest,
            parent_retired: false,
            base: MergeBase {
                parent_version: recorded,
                fork_version: None,
            },
            taken: Vec::new(),
        };
        if recorded == newest {
            return Ok(Some(agreed));
        }
        agreed.parent_retired = self.is_retired(parent)?;
        agreed.taken = self.taken_from(fork.id)?;
        agreed.taken.sort_by_key(|t| t.parent_version);
        // A parent kept from another site: its site says which version
        // took a suggestion, and that version may not be kept here yet, or
        // be one this site never fetched (it holds the version before's
        // content). So a take counts once its version is kept, and a
        // whole one starts the next merge from what was suggested (the
        // same content as that version's, but read from versions here).
        let elsewhere = !agreed.taken.is_empty() && self.is_kept_from_elsewhere(parent)?;
        for t in agreed.taken.clone() {
            if t.parent_version <= agreed.version || t.parent_version > newest {
                continue;
            }
            if t.is_whole() {
                agreed.version = t.parent_version;
                agreed.base = match elsewhere {
                    true => MergeBase {
                        parent_version: t.base_version,
                        fork_version: Some(t.fork_version),
                    },
                    false => MergeBase {
                        parent_version: t.parent_version,
                        fork_version: None,
                    },
                };
            } else if t.took_all() && t.base_version >= agreed.version {
                // (A suggestion here follows the fork's merges, so its
                // base is never behind; one offered elsewhere is fixed at
                // what was offered, and a merge since moved past it: what
                // it says of the base is stale, and the fork's own record
                // holds.)
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
        // A retired recipe's last version is its retirement: nothing to
        // bring in from it, ever.
        if parent.retired {
            return Err(DomainError::Retired {
                slug: parent.slug.to_string(),
                title: parent.content.title().to_owned(),
            });
        }
        let upto = upto.unwrap_or(agreed.newest);
        if upto <= agreed.version {
            return Err(DomainError::UpToDate {
                slug: fork.slug.to_string(),
                parent: parent.content.title().to_owned(),
                version: agreed.version,
            });
        }
        let versions = self.versions(parent.id)?;
        let upto_at = Snapshot::nth_version(&parent.slug, &versions, upto)?.basis;
        let base_content = self.base_content(&parent, fork, agreed.base)?;
        let parent_content = self.content_at(parent.id, upto_at)?;
        let merge = merge::merge(&base_content, &fork.content, &parent_content);
        let taken = agreed
            .taken
            .iter()
            .filter(|t| t.parent_version > agreed.version && t.parent_version <= upto)
            .count();
        Ok(ParentChanges {
            parent,
            base: agreed.version,
            taken,
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
