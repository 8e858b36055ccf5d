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
    /// For an attribute, every entity something refers to through it, or
    /// did since the set was read (`Targets`).
    targets: FxHashMap<EntityId, Targets>,
    /// Attributes whose targets are being read, from a basis, and what
    /// transactions since referred to (`begin_targets`), each with the
    /// token of its reading.
    reading: FxHashMap<EntityId, (u64, Targets)>,
    /// The token of the next reading begun. Never reset: a reading that a
    /// reset or a poisoned lock forgot must not end the one begun after it.
    next_token: u64,
}

/// A reading of an attribute's targets that `begin_targets` began, for
/// `end_targets` to end. Its token tells it from a later reading of the
/// same attribute: if the store is rewound (`reset`) or the lock is taken
/// back from a panic while it reads, and another reader begins again,
/// this one's lists, read at a basis since undone or with the transactions
/// noted meanwhile forgotten, are not kept under the other's basis.
/// Dropped without being ended (its reader panicked, or returned early),
/// it ends as a failed read, which may be tried again: a reading left open
/// would keep the attribute from ever being read whole.
#[must_use = "a reading begun is ended with `end_targets`"]
pub(crate) struct TargetsReading<'a> {
    cache: &'a ReferrerCache,
    a: EntityId,
    token: u64,
    open: bool,
}

impl Drop for TargetsReading<'_> {
    fn drop(&mut self) {
        if self.open {
            self.cache.end(self.a, self.token, None, true);
        }
    }
}

/// The entities an attribute's current facts refer to, read whole at
/// `read_at` from AEVT, and grown by every transaction since with the
/// targets it referred to (a retraction leaves its target in: the set may
/// hold an entity no longer referred to, never miss one that is). So a
/// target outside it has no referrers at any basis from `read_at` on, and
/// a reader there needs no VAET scan to learn so: on a crawl, most recipes
/// have no forks and no suggestion open, and each asking was a sled scan
/// (perf: a sixth of a cold recipe page's time,
/// docs/journal/33-close-to-the-limit.md). Each target is kept with its
/// referrers' count as read, which a catalog line shows (`count`), or
/// `TOUCHED` once a transaction since referred to it or stopped: a
/// third of a cold catalog page's time at 1,000,000 recipes went to
/// counting its recipes' forks in VAET (docs/journal/55-million.md).
struct Targets {
    read_at: EntityId,
    counts: FxHashMap<EntityId, u32>,
}

/// A target's count in `Targets` once it may have changed since `read_at`.
const TOUCHED: u32 = u32::MAX;

/// Most targets an attribute's current facts may have for them to be kept
/// whole (`Targets`): past it, each target is asked of VAET, as before.
pub(crate) const MAX_TARGETS_READ: usize = 1 << 20;

/// An attribute's current facts as read for `Targets`: each target's
/// referrers, in entity order.
pub(crate) type Lists = FxHashMap<EntityId, Vec<EntityId>>;

/// See the module's documentation.
pub(crate) struct ReferrerCache {
    state: RwLock<State>,
    capacity: usize,
}

impl ReferrerCache {
    /// The state, to read (`derived_lock`).
    fn read(&self) -> RwLockReadGuard<'_, State> {
        super::derived_lock::read(&self.state, |state| {
            state.entries.clear();
            state.targets.clear();
            state.reading.clear();
        })
    }

    /// The state, to change: a poisoned lock is taken back with every
    /// entry forgotten, as `reset` forgets them (`derived_lock`). `latest`
    /// stays, being set in one step.
    fn write(&self) -> RwLockWriteGuard<'_, State> {
        super::derived_lock::write(&self.state, |state| {
            state.entries.clear();
            state.targets.clear();
            state.reading.clear();
        })
    }

    /// An empty cache for a store whose newest transaction is `latest`.
    pub(crate) fn new(capacity: usize, latest: EntityId) -> ReferrerCache {
        ReferrerCache {
            state: RwLock::new(State {
                latest,
                entries: FxHashMap::default(),
                targets: FxHashMap::default(),
                reading: FxHashMap::default(),
                next_token: 0,
            }),
            capacity,
        }
    }

    /// The entities referring to `target` through `a`, for a reader at
    /// `basis`, if the cache knows them exactly.
    pub(crate) fn get(
        &self,
        target: EntityId,
        a: EntityId,
        basis: EntityId,
    ) -> Option<Arc<[EntityId]>> {
        let state = self.read();
        match state.entries.get(&(target, a)) {
            Some((read_at, referrers)) if *read_at <= basis => Some(referrers.clone()),
            _ => None,
        }
    }

    /// Whether `target` surely has no referrers through `a` for a reader
    /// at `basis` (`Targets`); `None` when the attribute's targets are not
    /// kept, or were read after `basis`.
    pub(crate) fn surely_none(
        &self,
        target: EntityId,
        a: EntityId,
        basis: EntityId,
    ) -> Option<bool> {
        let state = self.read();
        let targets = state.targets.get(&a)?;
        (targets.read_at <= basis).then(|| !targets.counts.contains_key(&target))
    }

    /// How many entities refer to `target` through `a`, for a reader at
    /// `basis`, if the cache knows: from its kept list, or from the
    /// attribute's targets (`Targets`) unless a transaction touched it
    /// since they were read.
    pub(crate) fn count(&self, target: EntityId, a: EntityId, basis: EntityId) -> Option<usize> {
        let state = self.read();
        if let Some((read_at, referrers)) = state.entries.get(&(target, a)) {
            if *read_at <= basis {
                return Some(referrers.len());
            }
        }
        let targets = state.targets.get(&a).filter(|t| t.read_at <= basis)?;
        match targets.counts.get(&target) {
            None => Some(0),
            Some(&TOUCHED) => None,
            Some(&n) => Some(n as usize),
        }
    }

    /// Starts reading the targets of `a` at `basis`, if they are neither
    /// kept nor being read and `basis` is the newest state; from here on,
    /// each transaction's targets of `a` are noted, so that the set read at
    /// `basis` is made whole when given (`end_targets`) however many
    /// transactions come between. `None`: the caller reads nothing.
    pub(crate) fn begin_targets(&self, a: EntityId, basis: EntityId) -> Option<TargetsReading<'_>> {
        if self.capacity == 0 {
            return None;
        }
        let mut state = self.write();
        if state.latest != basis || state.targets.contains_key(&a) || state.reading.contains_key(&a)
        {
            return None;
        }
        let token = state.next_token;
        state.next_token += 1;
        let targets = Targets {
            read_at: basis,
            counts: FxHashMap::default(),
        };
        state.reading.insert(a, (token, targets));
        Some(TargetsReading {
            cache: self,
            a,
            token,
            open: true,
        })
    }

    /// Ends the reading `begin_targets` started: `Some(lists)`, each
    /// target read with its referrers: the targets kept with those noted
    /// since, and each list kept as an entry read at the reading's basis,
    /// unless a transaction since touched its target (it may be stale) or
    /// the lists would fill more than half the cache; `None` when there
    /// were too many (the attribute is then never read whole again) or the
    /// read failed (`retry`: it may be tried again). A reading forgotten
    /// since it began (`TargetsReading`) keeps nothing.
    ///
    /// A crawler's pass asks every recipe for its forks: a third of the
    /// pages of a catalog of families have some, and each was a VAET scan
    /// (perf of `scripts/crawl.sh`: 8.5% of the server's time). The AEVT
    /// read that finds the targets has every list already.
    pub(crate) fn end_targets(
        &self,
        mut reading: TargetsReading<'_>,
        lists: Option<Lists>,
        retry: bool,
    ) {
        reading.open = false;
        self.end(reading.a, reading.token, lists, retry);
    }

    /// `end_targets`, for the reading of `a` with `token`.
    fn end(&self, a: EntityId, token: u64, lists: Option<Lists>, retry: bool) {
        let mut state = self.write();
        if state.reading.get(&a).is_none_or(|(t, _)| *t != token) {
            return;
        }
        let (_, noted) = state.reading.remove(&a).expect("found just above");
        match lists {
            Some(lists) => {
                let mut counts: FxHashMap<EntityId, u32> = (lists.iter())
                    .map(|(target, referrers)| {
                        (*target, referrers.len().min(TOUCHED as usize - 1) as u32)
                    })
                    .collect();
                counts.extend(noted.counts.keys().map(|target| (*target, TOUCHED)));
                if lists.len() <= self.capacity / 2 {
                    if state.entries.len() + lists.len() > self.capacity {
                        state.entries.clear();
                    }
                    for (target, referrers) in lists {
                        if !noted.counts.contains_key(&target) {
                            state
                                .entries
                                .insert((target, a), (noted.read_at, referrers.into()));
                        }
                    }
                }
                state.targets.insert(
                    a,
                    Targets {
                        read_at: noted.read_at,
                        counts,
                    },
                );
            }
            None if retry => {}
            // Too many: a set no reader uses (`read_at` past every basis).
            None => {
                state.targets.insert(
                    a,
                    Targets {
                        read_at: EntityId::MAX,
                        counts: FxHashMap::default(),
                    },
                );
            }
        }
    }

    /// Whether the targets of `a` are worth reading: not kept, not being
    /// read, and the cache keeps anything at all.
    pub(crate) fn wants_targets(&self, a: EntityId) -> bool {
        let state = self.read();
        self.capacity > 0 && !state.targets.contains_key(&a) && !state.reading.contains_key(&a)
    }

    /// Keeps `referrers`, read at `basis`, if that is the newest state.
    /// Past capacity the cache starts over, as the entity cache does.
    pub(crate) fn offer(
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

    /// Forgets the referrer lists, keeping each attribute's targets, which
    /// a server reads once (`Targets`): for measuring reads that start
    /// cold, as a server's do once it has served a while.
    pub(crate) fn forget_lists(&self) {
        self.write().entries.clear();
    }

    /// Forgets everything, and takes `latest` as the newest transaction:
    /// after writes were undone, it is older than the one recorded.
    pub(crate) fn reset(&self, latest: EntityId) {
        let mut state = self.write();
        state.entries.clear();
        state.targets.clear();
        state.reading.clear();
        state.latest = latest;
    }

    /// Records transaction `tx` as applied, forgetting the `(target,
    /// attribute)` pairs whose references it asserted or retracted.
    pub(crate) fn commit(&self, tx: EntityId, touched: impl IntoIterator<Item = Key>) {
        let mut state = self.write();
        state.latest = state.latest.max(tx);
        let State {
            entries,
            targets,
            reading,
            ..
        } = &mut *state;
        for key @ (target, a) in touched {
            entries.remove(&key);
            for kept in [targets.get_mut(&a), reading.get_mut(&a).map(|(_, r)| r)]
                .into_iter()
                .flatten()
            {
                kept.counts.insert(target, TOUCHED);
            }
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
    fn a_target_outside_an_attributes_targets_has_none_from_their_read_on() {
        let cache = ReferrerCache::new(10, 100);
        assert_eq!(cache.surely_none(1, 7, 100), None, "not kept yet");
        assert!(
            cache.begin_targets(7, 99).is_none(),
            "read before the newest"
        );
        let reading = cache.begin_targets(7, 100).unwrap();
        assert!(
            cache.begin_targets(7, 100).is_none(),
            "one reading at a time"
        );
        assert!(!cache.wants_targets(7));
        // A transaction lands while the targets are read: noted.
        cache.commit(101, [(2, 7)]);
        cache.end_targets(reading, Some(Lists::from_iter([(1, vec![4])])), false);
        assert_eq!(
            cache.surely_none(2, 7, 101),
            Some(false),
            "noted while read"
        );
        assert_eq!(cache.surely_none(1, 7, 101), Some(false));
        assert_eq!(cache.surely_none(3, 7, 101), Some(true));
        assert_eq!(cache.surely_none(3, 7, 99), None, "an older reader scans");
        // Touching 3 (asserting or retracting) puts it in for good.
        cache.commit(102, [(3, 7)]);
        assert_eq!(cache.surely_none(3, 7, 102), Some(false));
        // Too many to keep: never used, never read again; a failed read
        // may be tried again.
        let reading = cache.begin_targets(8, 102).unwrap();
        cache.end_targets(reading, None, false);
        assert!(!cache.wants_targets(8));
        assert_eq!(cache.surely_none(3, 8, 102), None);
        let reading = cache.begin_targets(9, 102).unwrap();
        cache.end_targets(reading, None, true);
        assert!(cache.wants_targets(9));
        // A reading dropped unended (its reader panicked) is a failed one.
        let reading = cache.begin_targets(9, 102).unwrap();
        assert!(!cache.wants_targets(9));
        drop(reading);
        assert!(cache.wants_targets(9), "dropped: may be read again");
        cache.reset(90);
        assert!(cache.wants_targets(7), "undone writes forget them");
        assert!(
            !ReferrerCache::new(0, 100).wants_targets(7),
            "keeps nothing"
        );
    }

    #[test]
    fn the_lists_read_with_the_targets_are_kept_unless_touched_since() {
        let cache = ReferrerCache::new(10, 100);
        let reading = cache.begin_targets(7, 100).unwrap();
        // While the targets are read, a transaction gives 2 a referrer.
        cache.commit(101, [(2, 7)]);
        let lists = Lists::from_iter([(1, vec![4, 5]), (2, vec![6]), (3, vec![8])]);
        cache.end_targets(reading, Some(lists), false);
        assert_eq!(cache.get(1, 7, 101).as_deref(), Some(&[4, 5][..]));
        assert_eq!(cache.get(3, 7, 100).as_deref(), Some(&[8][..]));
        assert!(cache.get(1, 7, 99).is_none(), "an older reader scans");
        assert!(cache.get(2, 7, 101).is_none(), "touched since: stale");
        cache.commit(102, [(3, 7)]);
        assert!(cache.get(3, 7, 102).is_none(), "touched after");
        assert_eq!(cache.get(1, 7, 102).as_deref(), Some(&[4, 5][..]));

        // More lists than half the cache holds: only the set is kept.
        let cache = ReferrerCache::new(4, 100);
        let reading = cache.begin_targets(7, 100).unwrap();
        let lists = Lists::from_iter((1..=3).map(|target| (target, vec![9])));
        cache.end_targets(reading, Some(lists), false);
        assert!(cache.get(1, 7, 100).is_none());
        assert_eq!(cache.surely_none(1, 7, 100), Some(false));
        assert_eq!(cache.surely_none(4, 7, 100), Some(true));
    }

    #[test]
    fn each_target_is_counted_with_the_targets_unless_touched_since() {
        // Lists too many to keep (capacity 4): the counts are kept.
        let cache = ReferrerCache::new(4, 100);
        assert_eq!(cache.count(1, 7, 100), None, "nothing read");
        let reading = cache.begin_targets(7, 100).unwrap();
        // While the targets are read, a transaction refers to 3.
        cache.commit(101, [(3, 7)]);
        let lists = Lists::from_iter([(1, vec![4, 5]), (2, vec![6]), (3, vec![8])]);
        cache.end_targets(reading, Some(lists), false);
        assert!(cache.get(1, 7, 101).is_none(), "no list kept");
        assert_eq!(cache.count(1, 7, 101), Some(2));
        assert_eq!(cache.count(2, 7, 100), Some(1));
        assert_eq!(cache.count(9, 7, 101), Some(0), "no referrer");
        assert_eq!(cache.count(3, 7, 101), None, "touched while read");
        assert_eq!(cache.count(1, 7, 99), None, "an older reader scans");
        assert_eq!(cache.count(9, 7, 99), None, "even for no referrer");
        cache.commit(102, [(1, 7), (9, 7)]);
        assert_eq!(cache.count(1, 7, 102), None, "touched after");
        assert_eq!(cache.count(9, 7, 102), None, "referred to after");
        assert_eq!(cache.count(2, 7, 102), Some(1));
        assert_eq!(cache.count(2, 8, 102), None, "another attribute");
        // A kept list answers too, from its basis on.
        cache.offer(1, 7, 102, list(&[4, 5, 6]));
        assert_eq!(cache.count(1, 7, 102), Some(3));
        assert_eq!(cache.count(1, 7, 101), None, "touched at 102");
        // Forgotten with everything else when writes are undone.
        cache.reset(100);
        assert_eq!(cache.count(2, 7, 100), None);
    }

    #[test]
    fn a_reading_forgotten_while_it_read_keeps_nothing_under_the_next_ones_basis() {
        let cache = ReferrerCache::new(10, 100);
        let first = cache.begin_targets(7, 100).unwrap();
        // Transactions 91 to 100 are undone, and a reader begins again at
        // the store's basis now.
        cache.reset(90);
        let second = cache.begin_targets(7, 90).unwrap();
        // The first reading saw a reference one of the undone transactions
        // made: none of it is kept.
        cache.end_targets(first, Some(Lists::from_iter([(1, vec![4])])), false);
        assert_eq!(cache.count(1, 7, 90), None, "the first reading's count");
        assert!(cache.get(1, 7, 90).is_none(), "the first reading's list");
        assert_eq!(cache.surely_none(2, 7, 90), None);
        assert!(!cache.wants_targets(7), "the second reading goes on");
        cache.end_targets(second, Some(Lists::from_iter([(2, vec![5])])), false);
        assert_eq!(cache.count(1, 7, 90), Some(0));
        assert_eq!(cache.count(2, 7, 90), Some(1));

        // The same when a panic took the lock back in between.
        let cache = ReferrerCache::new(10, 100);
        let first = cache.begin_targets(7, 100).unwrap();
        let _ = std::thread::scope(|s| {
            s.spawn(|| {
                let _state = cache.state.write().unwrap();
                panic!("a panic holding the referrer cache");
            })
            .join()
        });
        let second = cache.begin_targets(7, 100).unwrap();
        cache.end_targets(first, Some(Lists::from_iter([(1, vec![4])])), false);
        assert!(!cache.wants_targets(7), "the second reading goes on");
        cache.end_targets(second, Some(Lists::from_iter([(2, vec![5])])), false);
        assert_eq!(cache.count(1, 7, 100), Some(0));
        assert_eq!(cache.count(2, 7, 100), Some(1));
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
