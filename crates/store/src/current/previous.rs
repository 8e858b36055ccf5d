//! Entities as they were just before the write that changed them last,
//! for the readers a moment behind that write.
//!
//! The entity cache answers a reader only from an entity's last change on
//! (`current`): an older reader reads the entity's datoms, over all of its
//! history. A recipe edited over and over is read that way by every reader
//! a moment behind its newest edit: the search index's follower, which
//! reads at its index's basis, and pages made from a value taken just
//! before the edit. Each such read went through every version the recipe
//! had had, so the cost of a write grew window by window in a run of cooks
//! editing (docs/journal/55-million.md). So when a write touches an entity
//! the cache holds, the cache moves what it held here, with the write's
//! transaction: it is the entity's state at every basis from its own
//! `last_tx` up to, and not including, that transaction.

use std::sync::Arc;

use super::Cached;
use crate::value::EntityId;

/// An entity's state that held from `cached.last_tx` until `until`, the
/// next transaction that changed it. Cloned for a reference count.
#[derive(Debug, Clone)]
pub(crate) struct Previous {
    cached: Arc<Cached>,
    until: EntityId,
}

#[derive(Debug, Clone)]
struct Weigh;

impl quick_cache::Weighter<EntityId, Previous> for Weigh {
    fn weight(&self, _: &EntityId, previous: &Previous) -> u64 {
        previous.cached.bytes + std::mem::size_of::<Previous>() as u64
    }
}

/// Each entity's latest previous state, bounded in bytes, evicting with
/// quick_cache's CLOCK-Pro as the entity cache does.
pub(crate) struct PreviousStates {
    map: quick_cache::sync::Cache<EntityId, Previous, Weigh, rustc_hash::FxBuildHasher>,
}

impl PreviousStates {
    /// At most `budget` bytes of states, about `items` of them.
    pub(crate) fn new(items: usize, budget: u64) -> PreviousStates {
        PreviousStates {
            map: quick_cache::sync::Cache::with(
                items.max(16),
                budget.max(1),
                Weigh,
                rustc_hash::FxBuildHasher,
                Default::default(),
            ),
        }
    }

    /// Keeps `cached`, the state of `e` until transaction `until` changed
    /// it, in place of any older one. The caller holds the entity cache's
    /// write lock and took `cached` out of it as `until` was applied, so
    /// no transaction between the two changed `e`.
    pub(crate) fn keep(&self, e: EntityId, cached: Arc<Cached>, until: EntityId) {
        debug_assert!(cached.last_tx < until);
        self.map.insert(e, Previous { cached, until });
    }

    /// The state of `e` at `basis`, if one kept here held then.
    pub(crate) fn at(&self, e: EntityId, basis: EntityId) -> Option<Arc<Cached>> {
        let previous = self.map.get(&e)?;
        (previous.cached.last_tx <= basis && basis < previous.until).then_some(previous.cached)
    }

    pub(crate) fn weight(&self) -> u64 {
        self.map.weight()
    }

    pub(crate) fn capacity(&self) -> u64 {
        self.map.capacity()
    }

    pub(crate) fn set_capacity(&self, bytes: u64) {
        self.map.set_capacity(bytes.max(1));
    }

    pub(crate) fn clear(&self) {
        self.map.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(last_tx: EntityId) -> Arc<Cached> {
        let datom = crate::encoding::Datom {
            e: 7,
            a: 3,
            v: crate::value::Value::Long(1),
            tx: last_tx,
            added: true,
        };
        let entries = super::super::updated_entries(&[datom], last_tx, |_| Ok(None)).unwrap();
        Arc::new(Cached::new(7, &entries[0].1, 1).unwrap())
    }

    #[test]
    fn a_previous_state_answers_from_its_last_change_until_the_next() {
        let states = PreviousStates::new(16, 1 << 20);
        assert!(states.at(7, 10).is_none(), "none kept");
        states.keep(7, state(10), 15);
        assert!(states.at(7, 9).is_none(), "before it");
        assert_eq!(states.at(7, 10).unwrap().last_tx, 10);
        assert_eq!(states.at(7, 14).unwrap().last_tx, 10);
        assert!(states.at(7, 15).is_none(), "the next change on");
        assert!(states.at(8, 12).is_none(), "another entity");
        // The next change's state replaces it.
        states.keep(7, state(15), 20);
        assert!(states.at(7, 14).is_none());
        assert_eq!(states.at(7, 19).unwrap().last_tx, 15);
        states.clear();
        assert!(states.at(7, 19).is_none());
    }
}
