//! Referrers kept in memory: for a target entity and a ref attribute, the
//! entities whose current facts point at it, as VAET would list them.
//!
//! Reading them from VAET is a sled range scan, and sled 0.34 pays a
//! descent and a leaf copy for every scan and every key it yields: counting
//! the forks of each of a catalog page's recipes would be that many scans.
//! Here a repeat read is a hash lookup.
//!
//! An entry is the list as of the basis it was read at, `basis`. It stays
//! exact for every later basis until a transaction asserts or retracts a
//! reference to its target through its attribute; that transaction removes
//! it. The rule that keeps a stale entry out: the cache tracks the newest
//! transaction applied (`latest`, moved by `commit` under the lock, which
//! also removes what the transaction touched), and takes an entry only if it
//! was read at `latest`. An entry read at an older basis may be missing a
//! newer reference, so it is never offered; one read at `latest` is removed
//! by the next transaction that changes it. Readers use an entry only at or
//! after its basis; older database values read VAET.

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use rustc_hash::FxHashMap;

use super::value::EntityId;

/// `(target, attribute)`
type Key = (EntityId, EntityId);

struct State {
    /// The newest transaction applied to the store.
    latest: EntityId,
    /// Fx-hashed, as ids are the store's, not a client's.
    entries: FxHashMap<Key, (EntityId, Arc<[EntityId]>)>,
}

/// See the module's documentation.
pub struct ReferrerCache {
    state: RwLock<State>,
    capacity: usize,
}

impl ReferrerCache {
    /// The state, to read (`derived_lock`).
    fn read(&self) -> RwLockReadGuard<'_, State> {
        super::derived_lock::read(&self.state, |state| state.entries.clear())
    }

    /// The state, to change: a poisoned lock is taken back with every
    /// entry forgotten, as `reset` forgets them (`derived_lock`). `latest`
    /// stays, being set in one step.
    fn write(&self) -> RwLockWriteGuard<'_, State> {
        super::derived_lock::write(&self.state, |state| state.entries.clear())
    }

    /// An empty cache for a store whose newest transaction is `latest`.
    pub fn new(capacity: usize, latest: EntityId) -> ReferrerCache {
        ReferrerCache {
            state: RwLock::new(State {
                latest,
                entries: FxHashMap::default(),
            }),
            capacity,
        }
    }

    /// The entities referring to `target` through `a`, for a reader at
    /// `basis`, if the cache knows them exactly.
    pub fn get(&self, target: EntityId, a: EntityId, basis: EntityId) -> Option<Arc<[EntityId]>> {
        let state = self.read();
        match state.entries.get(&(target, a)) {
            Some((read_at, referrers)) if *read_at <= basis => Some(referrers.clone()),
            _ => None,
        }
    }

    /// Keeps `referrers`, read at `basis`, if that is the newest state.
    /// Past capacity the cache starts over, as the entity cache does.
    pub fn offer(
        &self,
        target: EntityId,
        a: EntityId,
        basis: EntityId,
        referrers: Arc<[EntityId]>,
    ) {
        if self.capacity == 0 {
            return;
        }
        let mut state = self.write();
        if state.latest != basis {
            return;
        }
        if state.entries.len() >= self.capacity {
            state.entries.clear();
        }
        state.entries.insert((target, a), (basis, referrers));
    }

    /// Forgets everything, and takes `latest` as the newest transaction:
    /// after writes were undone, it is older than the one recorded.
    pub fn reset(&self, latest: EntityId) {
        let mut state = self.write();
        state.entries.clear();
        state.latest = latest;
    }

    /// Records transaction `tx` as applied, forgetting the `(target,
    /// attribute)` pairs whose references it asserted or retracted.
    pub fn commit(&self, tx: EntityId, touched: impl IntoIterator<Item = Key>) {
        let mut state = self.write();
        state.latest = state.latest.max(tx);
        for key in touched {
            state.entries.remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(ids: &[EntityId]) -> Arc<[EntityId]> {
        ids.into()
    }

    #[test]
    fn only_entries_read_at_the_newest_transaction_are_kept() {
        let cache = ReferrerCache::new(10, 100);
        cache.offer(1, 7, 99, list(&[5]));
        assert!(cache.get(1, 7, 100).is_none(), "read before the newest");
        cache.offer(1, 7, 100, list(&[5]));
        assert_eq!(cache.get(1, 7, 100).as_deref(), Some(&[5][..]));
        assert_eq!(cache.get(1, 7, 120).as_deref(), Some(&[5][..]));
        assert!(cache.get(1, 7, 99).is_none(), "older readers scan");
    }

    #[test]
    fn a_transaction_forgets_what_it_touched_and_moves_on() {
        let cache = ReferrerCache::new(10, 100);
        cache.offer(1, 7, 100, list(&[5]));
        cache.offer(2, 7, 100, list(&[6]));
        cache.commit(101, [(1, 7)]);
        assert!(cache.get(1, 7, 101).is_none());
        assert!(cache.get(2, 7, 101).is_some(), "untouched stays exact");
        cache.offer(1, 7, 100, list(&[5]));
        assert!(cache.get(1, 7, 101).is_none(), "a stale read is refused");
        cache.offer(1, 7, 101, list(&[5, 9]));
        assert_eq!(cache.get(1, 7, 101).as_deref(), Some(&[5, 9][..]));
    }

    #[test]
    fn a_lock_poisoned_by_a_panic_forgets_the_entries_and_answers_on() {
        let cache = ReferrerCache::new(10, 100);
        cache.offer(1, 7, 100, list(&[5]));
        // A panic while the lock is held, as one in the middle of a commit.
        let poisoner = std::thread::scope(|s| {
            s.spawn(|| {
                let _state = cache.state.write().unwrap();
                panic!("a panic holding the referrer cache");
            })
            .join()
        });
        assert!(poisoner.is_err() && cache.state.is_poisoned());
        // What the panic may have left stale is not served.
        assert!(cache.get(1, 7, 100).is_none());
        assert!(!cache.state.is_poisoned(), "the lock is usable again");
        cache.commit(101, [(1, 7)]);
        cache.offer(1, 7, 101, list(&[5, 9]));
        assert_eq!(cache.get(1, 7, 101).as_deref(), Some(&[5, 9][..]));
    }
}
