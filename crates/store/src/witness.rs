//! What a read depended on: the entities it read, each as of the newest
//! transaction that changed it, and the referrer lists it read, so that a
//! page built from a database value can later tell whether a newer value
//! would still give the same bytes.
//!
//! An entity's current facts are a function of the newest transaction that
//! touched it (`last_tx` in the current-entity index): the same `last_tx`,
//! the same facts. A referrer list (the forks of a recipe) is kept whole,
//! since a reference retracted leaves no newer transaction on the list's
//! target. Anything else, a range over an index (a catalog page, search
//! postings, a lookup that found nothing, a past value read from its
//! datoms), cannot be checked this way: the read is marked `ranged`, and
//! whoever keeps its result falls back to the basis. (A past value the
//! entity cache answers from an entity's previous state is an entity read:
//! that state, too, is the one of its `last_tx`.)

use std::sync::{Arc, Mutex};

use super::value::EntityId;

/// One thing a read depended on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dependency {
    /// Entity `e`'s current facts, as of its newest transaction `last_tx`.
    Entity { e: EntityId, last_tx: EntityId },
    /// The entities referring to `target` through attribute `a`.
    Referrers {
        a: EntityId,
        target: EntityId,
        list: Arc<[EntityId]>,
    },
}

/// What a witnessed read depended on, once it is over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependencies {
    /// Sorted, without repeats.
    pub list: Vec<Dependency>,
    /// Whether some read was a range the list cannot vouch for.
    pub ranged: bool,
}

impl Dependencies {
    /// The newest transaction among the entities read, if any: when the
    /// entities behind the read last changed (a referrer list has no such
    /// transaction; see the module's documentation).
    pub fn newest_entity_tx(&self) -> Option<EntityId> {
        self.list
            .iter()
            .filter_map(|d| match d {
                Dependency::Entity { last_tx, .. } => Some(*last_tx),
                Dependency::Referrers { .. } => None,
            })
            .max()
    }

    /// Whether some dependency is a referrer list.
    pub fn reads_referrers(&self) -> bool {
        self.list
            .iter()
            .any(|d| matches!(d, Dependency::Referrers { .. }))
    }
}

/// Collects a read's dependencies as it goes. One request reads through it
/// on one thread, so the lock is never contended.
#[derive(Debug, Default)]
pub(crate) struct Witness {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    list: Vec<Dependency>,
    ranged: bool,
}

impl Witness {
    pub(crate) fn new() -> Arc<Witness> {
        Arc::new(Witness::default())
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while pushing leaves a list that is only too long.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn entity(&self, e: EntityId, last_tx: EntityId) {
        self.state().list.push(Dependency::Entity { e, last_tx });
    }

    pub(crate) fn referrers(&self, a: EntityId, target: EntityId, list: Arc<[EntityId]>) {
        self.state()
            .list
            .push(Dependency::Referrers { a, target, list });
    }

    pub(crate) fn ranged(&self) {
        self.state().ranged = true;
    }

    /// What was read so far, sorted and without repeats.
    pub(crate) fn dependencies(&self) -> Dependencies {
        let state = self.state();
        let mut list = state.list.clone();
        list.sort_unstable();
        list.dedup();
        // A kept page holds its dependencies, weighed by their count.
        list.shrink_to_fit();
        Dependencies {
            list,
            ranged: state.ranged,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependencies_are_sorted_without_repeats_and_ranged_sticks() {
        let witness = Witness::new();
        witness.entity(7, 3);
        witness.entity(2, 9);
        witness.entity(7, 3);
        assert!(!witness.dependencies().ranged);
        witness.ranged();
        witness.entity(1, 1);
        let deps = witness.dependencies();
        assert!(deps.ranged);
        assert_eq!(
            deps.list,
            vec![
                Dependency::Entity { e: 1, last_tx: 1 },
                Dependency::Entity { e: 2, last_tx: 9 },
                Dependency::Entity { e: 7, last_tx: 3 },
            ]
        );
        assert_eq!(deps.newest_entity_tx(), Some(9));
        assert!(!deps.reads_referrers());
    }
}
