//! What a page read, so that the page can be kept and its validator can
//! follow what it shows rather than every write to the store.
//!
//! A `ReadSet` comes from a witnessed `Snapshot` once its reads are over.
//! Pages read entity by entity (a recipe, its lineage, its forks) depend on
//! exactly those entities and referrer lists: a write elsewhere leaves them
//! current. Pages built on a range over an index (the catalog, tags,
//! search, the sitemap, a past version read from its datoms) fall back to
//! the basis: any write makes them stale.

use std::hash::{Hash, Hasher};

use super::Snapshot;
use crate::domain::ids::{Basis, Instant};
use crate::domain::DomainError;
use crate::store::Dependencies;

/// See the module's documentation.
#[derive(Debug, Clone)]
pub struct ReadSet {
    dependencies: Dependencies,
    /// The snapshot's basis: what a ranged read set is valid at.
    basis: Basis,
}

impl ReadSet {
    /// A fingerprint of what was read: equal for two reads of the same
    /// page exactly when they read the same facts (up to a 64-bit hash).
    pub fn fingerprint(&self) -> u64 {
        // Unkeyed and deterministic (FxHasher), since the fingerprint is
        // part of an ETag that must be the same in every process; the ids
        // it hashes are the store's, not a client's.
        let mut hasher = rustc_hash::FxHasher::default();
        if self.dependencies.ranged {
            0u8.hash(&mut hasher);
            self.basis.tx().hash(&mut hasher);
        } else {
            1u8.hash(&mut hasher);
            self.dependencies.list.hash(&mut hasher);
        }
        hasher.finish()
    }

    /// The transaction after which what was read last changed, when it is
    /// known: the basis for a ranged read or one that read a referrer list
    /// (a reference retracted leaves no trace on its target), else the
    /// newest transaction of the entities read; `None` if nothing was read.
    pub fn changed_at(&self) -> Option<Basis> {
        if self.dependencies.ranged || self.dependencies.reads_referrers() {
            return Some(self.basis);
        }
        self.dependencies.newest_entity_tx().map(Basis::new)
    }

    /// How many things the read depended on (for sizing what keeps it).
    pub fn len(&self) -> usize {
        self.dependencies.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.dependencies.list.is_empty()
    }
}

impl Snapshot {
    /// This snapshot, noting what every read through it depends on, for
    /// `read_set`.
    pub fn witnessed(&self) -> Snapshot {
        Snapshot {
            db: self.db.witnessed(),
            attrs: self.attrs,
        }
    }

    /// What the reads through this (witnessed) snapshot depended on so
    /// far. A snapshot that is not witnessed gives a read set that follows
    /// its basis.
    pub fn read_set(&self) -> ReadSet {
        let dependencies = self.db.dependencies().unwrap_or(Dependencies {
            list: Vec::new(),
            ranged: true,
        });
        ReadSet {
            dependencies,
            basis: self.basis(),
        }
    }

    /// Whether reading again at this snapshot would read the same facts
    /// as `read`: then a page that is a function of them is current.
    pub fn still_shows(&self, read: &ReadSet) -> Result<bool, DomainError> {
        if read.dependencies.ranged {
            return Ok(read.basis == self.basis());
        }
        Ok(self.db.still_holds(&read.dependencies)?)
    }

    /// When transaction `basis` was made.
    pub fn instant_of(&self, basis: Basis) -> Result<Option<Instant>, DomainError> {
        Ok(self.db.tx_instant(basis.tx())?.map(Instant::from_millis))
    }
}
