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
use std::sync::atomic::{AtomicU64, Ordering};

use super::Snapshot;
use crate::domain::ids::{Basis, Instant};
use crate::domain::DomainError;
use crate::store::Dependencies;

/// See the module's documentation.
#[derive(Debug)]
pub struct ReadSet {
    dependencies: Dependencies,
    /// The snapshot's basis: what a ranged read set is valid at.
    basis: Basis,
    /// The newest basis at which it was read or found to read the same
    /// facts (`Snapshot::still_shows`). A database value is immutable, so
    /// a snapshot at that basis is answered without checking again: a
    /// kept recipe page of the demo's deepest lineage checked some thirty
    /// entities on every request (`scripts/load.sh`,
    /// docs/journal/33-close-to-the-limit.md).
    shown_at: AtomicU64,
}

impl Clone for ReadSet {
    fn clone(&self) -> ReadSet {
        ReadSet {
            dependencies: self.dependencies.clone(),
            basis: self.basis,
            shown_at: AtomicU64::new(self.shown_at.load(Ordering::Relaxed)),
        }
    }
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
            shown_at: AtomicU64::new(self.basis().tx()),
        }
    }

    /// Whether reading again at this snapshot would read the same facts
    /// as `read`: then a page that is a function of them is current.
    pub fn still_shows(&self, read: &ReadSet) -> Result<bool, DomainError> {
        let basis = self.basis().tx();
        if read.shown_at.load(Ordering::Relaxed) == basis {
            return Ok(true);
        }
        // A ranged read holds at its own basis only, which `shown_at`
        // keeps.
        if read.dependencies.ranged {
            return Ok(false);
        }
        let holds = self.db.still_holds(&read.dependencies)?;
        if holds {
            // The newest: a request holding an older snapshot checks again.
            read.shown_at.fetch_max(basis, Ordering::Relaxed);
        }
        Ok(holds)
    }

    /// When transaction `basis` was made.
    pub fn instant_of(&self, basis: Basis) -> Result<Option<Instant>, DomainError> {
        Ok(self.db.tx_instant(basis.tx())?.map(Instant::from_millis))
    }
}

#[cfg(test)]
mod tests {
    use crate::domain::{Change, ContentDraft, Recipes, Slug};

    fn content(title: &str) -> ContentDraft {
        ContentDraft {
            title: title.into(),
            ..ContentDraft::default()
        }
    }

    #[test]
    fn a_read_is_checked_once_per_basis_and_never_shown_past_a_change() {
        let recipes = Recipes::temporary().unwrap();
        let by = Change::by("ann", "new");
        let (toast, tea) = (Slug::parse("toast").unwrap(), Slug::parse("tea").unwrap());
        recipes.create(&toast, content("Toast"), &by).unwrap();
        recipes.create(&tea, content("Tea"), &by).unwrap();
        let first = recipes.snapshot();
        let witnessed = first.witnessed();
        witnessed.current(&toast).unwrap();
        let read = witnessed.read_set();
        assert!(first.still_shows(&read).unwrap(), "its own basis");

        // A write elsewhere: checked, and then known at that basis.
        let edit = |slug: &Slug, title| {
            let version = recipes.snapshot().current(slug).unwrap().newest();
            recipes.edit(slug, version, content(title), &by).unwrap();
        };
        edit(&tea, "Green tea");
        let second = recipes.snapshot();
        assert!(second.still_shows(&read).unwrap());
        assert!(second.still_shows(&read).unwrap());
        assert!(first.still_shows(&read).unwrap(), "an older snapshot");

        // A write to what it read: not shown at the new basis, still at
        // the old ones.
        edit(&toast, "Buttered toast");
        let third = recipes.snapshot();
        assert!(!third.still_shows(&read).unwrap());
        assert!(!third.still_shows(&read).unwrap(), "asked again");
        assert!(second.still_shows(&read).unwrap());

        // A ranged read (an unwitnessed snapshot's) holds at its own basis.
        let ranged = first.read_set();
        assert!(first.still_shows(&ranged).unwrap());
        assert!(!second.still_shows(&ranged).unwrap());
    }
}
