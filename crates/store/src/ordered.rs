//! Attribute orders kept in memory: for an attribute in AVET, the keys of
//! its current facts in index order, so a paginated list sorted by that
//! attribute (the catalog by title, by newest change) reads a page from
//! memory instead of iterating sled, which pays a descent and a leaf copy
//! for every key it yields.
//!
//! An order is built by one range read, then kept up to date: every
//! transaction that asserts or retracts a fact of a cached attribute edits
//! the order in place (copy on write: readers holding the old one keep it),
//! so a write costs a binary search and a copy of the order, never a
//! rebuild. An order answers readers at or after `valid_from`, the last
//! transaction that changed it; older database values read sled.
//!
//! Staleness is kept out as in the referrer cache: the cache tracks the
//! newest transaction applied (`latest`), `commit` moves it and edits the
//! orders under the lock, and a new order is taken only if it was read at
//! `latest`.
//!
//! Readers see the published basis, which trails `latest` while a write is
//! being flushed. So an edit keeps the order it replaces as an older
//! version until `publish` says no reader can need it any more: a reader
//! at the published basis is answered from memory while writes are in
//! flight, and never falls back to scanning the whole attribute.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::encoding::{datom_key, Datom, Index, TX_SUFFIX_LEN};
use super::value::EntityId;

mod keys;

pub(crate) use keys::{Key, OrderKeys};

/// The AVET keys of one attribute's current facts, each fact's newest
/// assertion, in key order.
pub(crate) type Order = Arc<OrderKeys>;

/// An attribute's order at one or more bases: `(valid_from, keys)`,
/// oldest first, each valid from its `valid_from` until the next one's.
struct Entry {
    versions: Vec<(EntityId, Order)>,
}

impl Entry {
    fn at(&self, basis: EntityId) -> Option<&Order> {
        self.versions
            .iter()
            .rev()
            .find(|(from, _)| *from <= basis)
            .map(|(_, keys)| keys)
    }
}

struct State {
    latest: EntityId,
    orders: HashMap<EntityId, Entry>,
    /// Attributes found to have more facts than `capacity`: never read
    /// whole again (each such read would be thrown away), until `reset`.
    too_large: HashSet<EntityId>,
}

/// See the module's documentation.
pub(crate) struct OrderCache {
    state: RwLock<State>,
    /// The most keys an order may hold; a longer one is not kept.
    capacity: usize,
}

/// The most versions of one order kept for readers behind the newest write.
const MAX_VERSIONS: usize = 8;

/// A key without its `tx` and `added`: the fact it is about.
fn fact(key: &[u8]) -> &[u8] {
    &key[..key.len().saturating_sub(TX_SUFFIX_LEN)]
}

impl OrderCache {
    /// The state, to read (`derived_lock`).
    fn read(&self) -> RwLockReadGuard<'_, State> {
        super::derived_lock::read(&self.state, |state| state.orders.clear())
    }

    /// The state, to change: a poisoned lock is taken back with every
    /// order forgotten, as `reset` forgets them (`derived_lock`). `latest`
    /// stays, being set in one step.
    fn write(&self) -> RwLockWriteGuard<'_, State> {
        super::derived_lock::write(&self.state, |state| state.orders.clear())
    }

    pub(crate) fn new(capacity: usize, latest: EntityId) -> OrderCache {
        OrderCache {
            state: RwLock::new(State {
                latest,
                orders: HashMap::new(),
                too_large: HashSet::new(),
            }),
            capacity,
        }
    }

    /// The order of attribute `a` for a reader at `basis`, if kept and
    /// exact there.
    pub(crate) fn get(&self, a: EntityId, basis: EntityId) -> Option<Order> {
        let state = self.read();
        state.orders.get(&a)?.at(basis).cloned()
    }

    /// Whether an order read at `basis` would be kept: only one read at
    /// the newest applied transaction is. A reader that would be refused
    /// reads sled for its page instead of scanning the whole attribute.
    pub(crate) fn accepts(&self, a: EntityId, basis: EntityId) -> bool {
        let state = self.read();
        state.latest == basis && !state.too_large.contains(&a)
    }

    /// The most keys an order may hold.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Records that attribute `a` has more facts than an order may hold,
    /// so that no reader reads it whole again only to have it refused.
    pub(crate) fn refuse(&self, a: EntityId) {
        self.write().too_large.insert(a);
    }

    /// Keeps `keys`, attribute `a`'s order read at `basis`, if that is the
    /// newest state; `valid_from` is the newest `tx` among the keys (the
    /// order is the same at every basis from there to `basis`).
    pub(crate) fn offer(&self, a: EntityId, basis: EntityId, keys: Vec<Key>) {
        if keys.len() > self.capacity {
            return;
        }
        let mut state = self.write();
        if state.latest != basis {
            return;
        }
        // Retractions leave no key in the order, so the order is known to
        // hold from `basis` only: a reader before it may see a fact since
        // retracted.
        state.orders.insert(
            a,
            Entry {
                versions: vec![(basis, Arc::new(OrderKeys::from_sorted(keys)))],
            },
        );
    }

    /// Forgets everything, and takes `latest` as the newest transaction:
    /// after writes were undone, it is older than the one recorded.
    pub(crate) fn reset(&self, latest: EntityId) {
        let mut state = self.write();
        state.orders.clear();
        state.too_large.clear();
        state.latest = latest;
    }

    /// Drops the versions no reader can ask for once `basis` is published:
    /// all but the one valid at `basis` and those after it.
    pub(crate) fn publish(&self, basis: EntityId) {
        let mut state = self.write();
        for entry in state.orders.values_mut() {
            let valid = entry.versions.iter().rposition(|(from, _)| *from <= basis);
            if let Some(valid) = valid {
                entry.versions.drain(..valid);
            }
        }
    }

    /// Records transaction `tx` as applied, editing the orders of the
    /// attributes its `datoms` (asserted and retracted facts) touch.
    pub(crate) fn commit(&self, tx: EntityId, datoms: &[Datom]) {
        let mut state = self.write();
        state.latest = state.latest.max(tx);
        if state.orders.is_empty() {
            return;
        }
        for datom in datoms {
            let Some(entry) = state.orders.get_mut(&datom.a) else {
                continue;
            };
            // The first edit by this transaction starts a new version; the
            // one before stays for readers that have not reached `tx`.
            if entry.versions.last().is_some_and(|(from, _)| *from != tx) {
                let keys = entry
                    .versions
                    .last()
                    .expect("an entry has a version")
                    .1
                    .clone();
                entry.versions.push((tx, Arc::new(OrderKeys::clone(&keys))));
                // Without a publish (a bulk load flushing once per group),
                // versions would pile up: past a few, the oldest readers
                // read sled instead.
                if entry.versions.len() > MAX_VERSIONS {
                    entry.versions.remove(0);
                }
            }
            let (_, keys) = entry.versions.last_mut().expect("an entry has a version");
            let keys = Arc::make_mut(keys);
            let key: Key = datom_key(Index::Avet, datom).into();
            let before = |k: &Key| fact(k) < fact(&key);
            let same = |k: &Key| fact(k) == fact(&key);
            if datom.added {
                keys.put(key.clone(), before, same);
            } else {
                keys.remove(before, same);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    fn datom(e: EntityId, title: &str, tx: EntityId, added: bool) -> Datom {
        Datom {
            e,
            a: 10,
            v: Value::string(title),
            tx,
            added,
        }
    }

    fn titles(order: &Order) -> Vec<String> {
        order
            .iter()
            .map(|k| {
                crate::encoding::decode_datom(Index::Avet, k)
                    .unwrap()
                    .v
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect()
    }

    #[test]
    fn a_transaction_edits_the_order_in_place_and_moves_its_validity() {
        let cache = OrderCache::new(100, 100);
        let keys = vec![
            datom_key(Index::Avet, &datom(1, "b", 50, true)).into(),
            datom_key(Index::Avet, &datom(2, "d", 60, true)).into(),
        ];
        cache.offer(10, 100, keys);
        let before = cache.get(10, 100).unwrap();
        cache.commit(
            101,
            &[
                datom(3, "c", 101, true),
                datom(1, "b", 101, false),
                datom(1, "e", 101, true),
            ],
        );
        assert_eq!(titles(&before), ["b", "d"], "readers keep their copy");
        assert_eq!(
            titles(&cache.get(10, 100).unwrap()),
            ["b", "d"],
            "a reader before the write in flight keeps the old order"
        );
        assert_eq!(titles(&cache.get(10, 101).unwrap()), ["c", "d", "e"]);
        cache.publish(101);
        assert!(cache.get(10, 100).is_none(), "gone once 101 is published");
        assert_eq!(titles(&cache.get(10, 101).unwrap()), ["c", "d", "e"]);
    }

    #[test]
    fn an_order_read_before_the_newest_transaction_is_refused() {
        let cache = OrderCache::new(100, 100);
        cache.commit(101, &[]);
        cache.offer(10, 100, Vec::new());
        assert!(cache.get(10, 101).is_none());
        cache.offer(10, 101, Vec::new());
        assert!(cache.get(10, 101).is_some());
    }

    #[test]
    fn a_lock_poisoned_by_a_panic_forgets_the_orders_and_answers_on() {
        let cache = OrderCache::new(100, 100);
        let keys = vec![datom_key(Index::Avet, &datom(1, "b", 50, true)).into()];
        cache.offer(10, 100, keys.clone());
        // A panic while the lock is held, as one in the middle of an edit.
        let poisoner = std::thread::scope(|s| {
            s.spawn(|| {
                let _state = cache.state.write().unwrap();
                panic!("a panic holding the order cache");
            })
            .join()
        });
        assert!(poisoner.is_err() && cache.state.is_poisoned());
        // What the panic may have left half-edited is not served.
        assert!(cache.get(10, 100).is_none());
        assert!(!cache.state.is_poisoned(), "the lock is usable again");
        cache.commit(101, &[]);
        cache.offer(10, 101, keys);
        assert_eq!(titles(&cache.get(10, 101).unwrap()), ["b"]);
    }
}
