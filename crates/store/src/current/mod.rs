//! The current-entity index: each entity's facts as they hold now, in one
//! sled value, next to the datoms they are derived from.
//!
//! Reading an entity from EAVT reads its groups (one sled key per block of
//! sixteen entities and transaction, `grouped`), expands its records into
//! per-datom keys, sorts and folds them, over all of its history.
//! This index keeps, for every
//! entity, the facts that hold after the last transaction that changed it,
//! in one entry: one `get` instead of a scan. The entries of sixteen
//! neighbouring ids share a sled key (`blocks`).
//!
//! It is derived data, rewritten in the same atomic batch as the datoms of
//! every transaction that touches the entity, and it is only used when it
//! answers exactly: by a database value whose view is current and whose
//! basis is at or after the entry's last change (then the state at the basis
//! *is* the entry). Anything else, a past basis before the last change, a
//! `since` or a history view, reads the datoms. The datoms stay the truth;
//! nothing in them is overwritten.
//!
//! An entry is `last_tx` (8 bytes), a count (4), then per fact, in EAVT
//! order, `a` (8), `tx` (8), the value's length (4) and its encoding.

use std::collections::BTreeMap;

use super::encoding::{encode_value, Datom, KeyReader};
use super::error::StorageError;
use super::value::{EntityId, Value};

pub(crate) mod blocks;
mod previous;
mod reader_memo;
mod second_reader;

use previous::PreviousStates;
pub(crate) use reader_memo::ReaderMemo;
use second_reader::SecondReader;

/// The leading byte of this index's keys.
pub(crate) const PREFIX: u8 = 0x06;

/// The transaction an entry is as of.
pub(crate) fn last_tx(entry: &[u8]) -> Option<EntityId> {
    Some(u64::from_be_bytes(entry.get(..8)?.try_into().ok()?))
}

/// One fact of an entry, its value still encoded.
pub(crate) struct Fact<'a> {
    pub a: EntityId,
    pub tx: EntityId,
    pub value: &'a [u8],
}

/// Walks an entry's facts without decoding their values.
pub(crate) struct Facts<'a> {
    entry: &'a [u8],
    at: usize,
    left: u32,
}

pub(crate) fn facts(entry: &[u8]) -> Result<Facts<'_>, StorageError> {
    let count = entry
        .get(8..12)
        .ok_or_else(|| StorageError::Corrupt("current-entity entry is too short".into()))?;
    Ok(Facts {
        entry,
        at: 12,
        left: u32::from_be_bytes(count.try_into().expect("four bytes")),
    })
}

impl<'a> Iterator for Facts<'a> {
    type Item = Result<Fact<'a>, StorageError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let read = |at: usize, n: usize| self.entry.get(at..at + n);
        let fact = (|| {
            let a = u64::from_be_bytes(read(self.at, 8)?.try_into().ok()?);
            let tx = u64::from_be_bytes(read(self.at + 8, 8)?.try_into().ok()?);
            let len = u32::from_be_bytes(read(self.at + 16, 4)?.try_into().ok()?) as usize;
            let value = read(self.at + 20, len)?;
            Some((Fact { a, tx, value }, 20 + len))
        })();
        match fact {
            Some((fact, size)) => {
                self.at += size;
                Some(Ok(fact))
            }
            None => {
                self.left = 0;
                Some(Err(StorageError::Corrupt(
                    "current-entity entry is cut short".into(),
                )))
            }
        }
    }
}

/// Decodes an encoded value.
pub(crate) fn value(bytes: &[u8]) -> Result<Value, StorageError> {
    KeyReader::new(bytes).value()
}

/// The new entries of every entity a transaction's datoms touch, in id
/// order, given a way to read an entity's entry as it was before.
pub(crate) fn updated_entries(
    datoms: &[Datom],
    tx: EntityId,
    mut before: impl FnMut(EntityId) -> Result<Option<sled::IVec>, StorageError>,
) -> Result<Vec<(EntityId, Vec<u8>)>, StorageError> {
    let mut by_entity: BTreeMap<EntityId, Vec<&Datom>> = BTreeMap::new();
    for datom in datoms {
        by_entity.entry(datom.e).or_default().push(datom);
    }
    let mut out = Vec::with_capacity(by_entity.len());
    for (e, changes) in by_entity {
        // (a, encoded value) -> tx of the assertion that holds.
        let mut current: BTreeMap<(EntityId, Vec<u8>), EntityId> = BTreeMap::new();
        if let Some(entry) = before(e)? {
            for fact in facts(&entry)? {
                let fact = fact?;
                current.insert((fact.a, fact.value.to_vec()), fact.tx);
            }
        }
        for datom in changes {
            let mut encoded = Vec::new();
            encode_value(&mut encoded, &datom.v);
            if datom.added {
                current.insert((datom.a, encoded), datom.tx);
            } else {
                current.remove(&(datom.a, encoded));
            }
        }
        let mut entry = Vec::with_capacity(12 + current.len() * 32);
        entry.extend_from_slice(&tx.to_be_bytes());
        entry.extend_from_slice(&(current.len() as u32).to_be_bytes());
        for ((a, value), fact_tx) in current {
            entry.extend_from_slice(&a.to_be_bytes());
            entry.extend_from_slice(&fact_tx.to_be_bytes());
            entry.extend_from_slice(&(value.len() as u32).to_be_bytes());
            entry.extend_from_slice(&value);
        }
        out.push((e, entry));
    }
    Ok(out)
}

/// One entity's current facts as of `last_tx`, as the entity cache keeps
/// them: first as its entry was stored, each value decoded when it is
/// read; decoded whole once other pages have read it often enough.
///
/// A page reads a few attributes of most entities it touches (a catalog
/// line, an ancestor's slug and title, a lineage step), and a crawler's
/// pass touches most entities once: decoding every fact of a recipe (its
/// search terms included) on every miss, then freeing them all on
/// eviction, was about a tenth of a crawl's server time (perf, 100,000 full
/// recipes: `current::decode` 6.9%, dropping decoded entities 2.5%), and a
/// decoded entity weighs about twice its entry. But decoding on every read
/// allocates each string it returns, where a decoded fact is lent or cloned
/// for a reference count: the index page, read warm, took twice as long
/// (pages bench, 209 against 415 µs). So an entity read again by other
/// pages (`HOT_AFTER` reads), being hot, is decoded whole and kept so.
#[derive(Debug)]
pub(crate) struct Cached {
    pub e: EntityId,
    pub last_tx: EntityId,
    form: Form,
    /// About the bytes it holds in memory: what the entity cache weighs.
    pub bytes: u64,
    /// The reader (`Db::reader`) that read it from sled.
    first_reader: u64,
    /// Reads since by readers other than the first (saturating at
    /// `HOT_AFTER`).
    read_again: std::sync::atomic::AtomicU32,
}

/// Reads by other readers that make an encoded entity hot. A page reads
/// some entities more than once (a lineage step, then the ancestor's name),
/// and in a crawler's pass an ancestor is read by the pages of its forks
/// and their forks. Measured with `scripts/crawl.sh` (100,000 full recipes,
/// a fresh copy of the store each run, run alternately): never decoding
/// 4,322 and 3,757 pages/s, decoding at the eighth read 3,226 and 3,451;
/// but never decoding doubled the index's warm make (pages bench,
/// `recipes_index/handler` 209 against 415 µs). Eight keeps the warm pages
/// as fast as before and most of a crawl's gain.
const HOT_AFTER: u32 = 8;

#[derive(Debug)]
enum Form {
    /// The entry as stored: `last_tx`, the count, then the facts.
    Encoded(Box<[u8]>),
    /// Every fact, in EAVT order.
    Decoded(Box<[Datom]>),
}

impl Cached {
    /// Entity `e`'s entry, read from sled by `reader`, checked whole (every
    /// fact's bounds, not its value) and copied out of sled's buffer so
    /// that it holds only itself.
    pub(crate) fn new(e: EntityId, entry: &[u8], reader: u64) -> Result<Cached, StorageError> {
        let last_tx = last_tx(entry)
            .ok_or_else(|| StorageError::Corrupt("current-entity entry is too short".into()))?;
        for fact in facts(entry)? {
            fact?;
        }
        Ok(Cached {
            e,
            last_tx,
            bytes: (std::mem::size_of::<Cached>() + entry.len()) as u64,
            form: Form::Encoded(entry.into()),
            first_reader: reader,
            read_again: Default::default(),
        })
    }

    /// Records a read from the cache by `reader`; true when an encoded
    /// entity has been read `HOT_AFTER` times by readers other than the
    /// one that read it from sled (then it is worth decoding whole).
    pub(crate) fn hot(&self, reader: u64) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        if !matches!(self.form, Form::Encoded(_)) || reader == self.first_reader {
            return false;
        }
        self.read_again
            .fetch_update(Relaxed, Relaxed, |n| (n < HOT_AFTER).then_some(n + 1))
            .is_ok_and(|before| before + 1 == HOT_AFTER)
    }

    /// This entity decoded whole.
    pub(crate) fn decoded(&self) -> Result<Cached, StorageError> {
        let Form::Encoded(entry) = &self.form else {
            unreachable!("only an encoded entity is decoded");
        };
        let facts = self
            .range(entry, 0, EntityId::MAX)
            .map(|fact| self.datom(fact?))
            .collect::<Result<Box<[Datom]>, _>>()?;
        Ok(Cached {
            e: self.e,
            last_tx: self.last_tx,
            bytes: (std::mem::size_of::<Cached>()
                + entry.len()
                + facts.len() * std::mem::size_of::<Datom>()) as u64,
            form: Form::Decoded(facts),
            first_reader: self.first_reader,
            read_again: Default::default(),
        })
    }

    /// The facts of `entry` whose attribute is in `first..=last`, values
    /// still encoded, in EAVT order.
    fn range<'a>(
        &self,
        entry: &'a [u8],
        first: EntityId,
        last: EntityId,
    ) -> impl Iterator<Item = Result<Fact<'a>, StorageError>> {
        // Checked whole in `new`.
        facts(entry)
            .expect("a checked entry")
            .skip_while(move |f| f.as_ref().is_ok_and(|f| f.a < first))
            .take_while(move |f| f.as_ref().map_or(true, |f| f.a <= last))
    }

    fn datom(&self, fact: Fact<'_>) -> Result<Datom, StorageError> {
        Ok(Datom {
            e: self.e,
            a: fact.a,
            v: value(fact.value)?,
            tx: fact.tx,
            added: true,
        })
    }

    /// Calls `visit` with each fact whose attribute is in `first..=last`,
    /// in EAVT order.
    pub(crate) fn visit(
        &self,
        first: EntityId,
        last: EntityId,
        mut visit: impl FnMut(&Datom),
    ) -> Result<(), StorageError> {
        match &self.form {
            Form::Encoded(entry) => {
                for fact in self.range(entry, first, last) {
                    visit(&self.datom(fact?)?);
                }
            }
            Form::Decoded(facts) => attribute_range(facts, first, last).iter().for_each(visit),
        }
        Ok(())
    }

    /// The facts whose attribute is in `first..=last` (and whose value is
    /// `v`, if given), in EAVT order.
    pub(crate) fn datoms(
        &self,
        first: EntityId,
        last: EntityId,
        v: Option<&Value>,
    ) -> Result<Vec<Datom>, StorageError> {
        let entry = match &self.form {
            Form::Decoded(facts) => {
                let facts = attribute_range(facts, first, last);
                return Ok(match v {
                    None => facts.to_vec(),
                    Some(v) => facts.iter().filter(|d| d.v == *v).cloned().collect(),
                });
            }
            Form::Encoded(entry) => entry,
        };
        // Values are compared encoded: the entry holds `encode_value`'s
        // bytes, one encoding per value.
        let wanted = v.map(|v| {
            let mut encoded = Vec::new();
            encode_value(&mut encoded, v);
            encoded
        });
        let mut out = Vec::new();
        for fact in self.range(entry, first, last) {
            let fact = fact?;
            if wanted.as_deref().is_none_or(|w| w == fact.value) {
                out.push(self.datom(fact)?);
            }
        }
        Ok(out)
    }

    /// The first value of attribute `a`.
    pub(crate) fn first_value(&self, a: EntityId) -> Result<Option<Value>, StorageError> {
        match &self.form {
            Form::Encoded(entry) => self
                .range(entry, a, a)
                .next()
                .transpose()?
                .map(|f| value(f.value))
                .transpose(),
            Form::Decoded(facts) => Ok(attribute_range(facts, a, a).first().map(|d| d.v.clone())),
        }
    }
}

/// The facts with an attribute in `first..=last`, of facts in EAVT order,
/// found by binary search.
fn attribute_range(facts: &[Datom], first: EntityId, last: EntityId) -> &[Datom] {
    let start = facts.partition_point(|d| d.a < first);
    let end = start + facts[start..].partition_point(|d| d.a <= last);
    &facts[start..end]
}

#[derive(Debug, Clone)]
struct Weigh;

impl quick_cache::Weighter<EntityId, std::sync::Arc<Cached>> for Weigh {
    fn weight(&self, _: &EntityId, cached: &std::sync::Arc<Cached>) -> u64 {
        cached.bytes
    }
}

/// Decoded current-entity entries kept in memory, so that a hot entity is
/// read without sled at all (as a Datomic peer caches index segments),
/// bounded in bytes and evicting with quick_cache's CLOCK-Pro (a full
/// cache keeps what is hot instead of starting over).
///
/// Entries are immutable snapshots tagged with `last_tx`, used under the
/// same rule as the index they come from. A write invalidates the entities
/// it touches and bumps `epoch`; a reader offers what it read from sled
/// only if no write happened since it started reading. Offers and
/// invalidations take `writes` (readers' `get` does not), so a stale entry
/// can never be put back after its invalidation. What a write invalidates
/// is kept a while longer as the entity's previous state (`previous`),
/// for readers a moment behind the write.
pub(crate) struct EntityCache {
    /// Fx-hashed: ids are handed out by the store, not chosen by a client,
    /// so SipHash's resistance to chosen keys would buy nothing.
    map: quick_cache::sync::Cache<
        EntityId,
        std::sync::Arc<Cached>,
        Weigh,
        rustc_hash::FxBuildHasher,
    >,
    /// A sixteenth of the budget.
    previous: PreviousStates,
    writes: std::sync::Mutex<()>,
    epoch: std::sync::atomic::AtomicU64,
    second_reader: SecondReader,
    budget: u64,
}

/// The share of the entity cache's budget its previous states may hold,
/// as a divisor.
const PREVIOUS_SHARE: u64 = 16;

/// A decoded entity's typical weight, for sizing the cache's map.
const TYPICAL_ENTITY: u64 = 1024;

impl EntityCache {
    /// A cache of at most `budget` bytes of decoded entities (0: none).
    pub(crate) fn new(budget: u64) -> EntityCache {
        let items = (budget / TYPICAL_ENTITY).clamp(16, 1 << 22) as usize;
        let previous = budget / PREVIOUS_SHARE;
        EntityCache {
            map: quick_cache::sync::Cache::with(
                items,
                (budget - previous).max(1),
                Weigh,
                rustc_hash::FxBuildHasher,
                Default::default(),
            ),
            previous: PreviousStates::new(items / PREVIOUS_SHARE as usize, previous),
            writes: std::sync::Mutex::new(()),
            epoch: Default::default(),
            // Twice the entities it may hold, at most a million slots (8 MiB).
            second_reader: SecondReader::new((2 * items).min(1 << 20)),
            budget,
        }
    }

    pub(crate) fn get(&self, e: EntityId) -> Option<std::sync::Arc<Cached>> {
        self.map.get(&e)
    }

    /// Whether `e` is held in its current state: a look that does not
    /// make it any hotter, as `get` does.
    pub(crate) fn holds(&self, e: EntityId) -> bool {
        self.map.contains_key(&e)
    }

    /// The state of `e` at `basis`, if the cache keeps it as `e`'s
    /// previous state (`previous`): for a reader whose basis is before the
    /// entity's last change.
    pub(crate) fn previous_at(
        &self,
        e: EntityId,
        basis: EntityId,
    ) -> Option<std::sync::Arc<Cached>> {
        self.previous.at(e, basis)
    }

    /// Entities held now in their current state.
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    /// The bytes held now, as weighed.
    pub(crate) fn weight(&self) -> u64 {
        self.map.weight() + self.previous.weight()
    }

    /// Its budget in bytes.
    pub(crate) fn budget(&self) -> u64 {
        self.budget
    }

    fn writes(&self) -> std::sync::MutexGuard<'_, ()> {
        self.writes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Read before reading sled; hand back to `offer`.
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Whether some reader read entity `e` from sled before, as far as
    /// `SecondReader` remembers.
    pub(crate) fn read_before(&self, e: EntityId) -> bool {
        self.second_reader.seen(e)
    }

    /// Records that `reader` read entity `e` from sled without offering
    /// it (`Db::visit_attributes_in_passing`): its next reader's copy is
    /// taken, as if this one had been offered.
    pub(crate) fn note_reader(&self, e: EntityId, reader: u64) {
        self.second_reader.admits(e, reader);
    }

    /// Keeps `cached`, read from sled, if another reader read it from
    /// sled last (`SecondReader`) and no write has happened since `epoch`
    /// was read.
    pub(crate) fn offer(&self, e: EntityId, epoch: u64, cached: std::sync::Arc<Cached>) {
        if self.budget == 0 || !self.second_reader.admits(e, cached.first_reader) {
            return;
        }
        self.keep(e, epoch, cached);
    }

    /// Keeps `cached` unless a write has happened since `epoch` was read.
    fn keep(&self, e: EntityId, epoch: u64, cached: std::sync::Arc<Cached>) {
        let _writes = self.writes();
        if self.epoch() != epoch {
            return;
        }
        self.map.insert(e, cached);
    }

    /// Puts `to` in place of `from`, if the cache still holds `from` for
    /// `e`: what a write invalidates is removed under the same lock, so a
    /// `from` still held is still current, and `to` (the same facts in
    /// another form) is too. A write since, or an eviction, leaves it out.
    pub(crate) fn replace(
        &self,
        e: EntityId,
        from: &std::sync::Arc<Cached>,
        to: std::sync::Arc<Cached>,
    ) {
        let _writes = self.writes();
        if self
            .map
            .peek(&e)
            .is_some_and(|held| std::sync::Arc::ptr_eq(&held, from))
        {
            self.map.insert(e, to);
        }
    }

    /// Lets it hold `share` (0 to 1) of its budget, evicting what is over:
    /// the server's memory limit makes room this way.
    pub(crate) fn set_share(&self, share: f64) {
        if self.budget > 0 {
            let bytes = ((self.budget as f64 * share.clamp(0.0, 1.0)) as u64).max(1);
            let previous = bytes / PREVIOUS_SHARE;
            self.map.set_capacity((bytes - previous).max(1));
            self.previous.set_capacity(previous);
        }
    }

    /// The bytes it may hold now.
    pub(crate) fn capacity(&self) -> u64 {
        self.map.capacity() + self.previous.capacity()
    }

    /// Forgets everything (after writes were undone).
    pub(crate) fn clear(&self) {
        let _writes = self.writes();
        self.map.clear();
        self.previous.clear();
        // Who read what before counts for nothing in a cache started over:
        // as after a restart, each entity is kept from its second reader.
        self.second_reader.forget();
        self.epoch.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }

    /// Forgets the entities transaction `tx` touched, keeping what it held
    /// of each as that entity's previous state, until `tx`.
    pub(crate) fn invalidate(&self, touched: impl IntoIterator<Item = EntityId>, tx: EntityId) {
        let _writes = self.writes();
        for e in touched {
            // Held, it is the state `tx` changed: an entry read before an
            // earlier write was never kept (`keep`), and that write removed
            // what was held then.
            if let Some((e, held)) = self.map.remove(&e) {
                if held.last_tx < tx {
                    self.previous.keep(e, held, tx);
                }
            }
        }
        self.epoch.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }
}

#[cfg(test)]
mod cache_tests {
    use super::*;
    use std::sync::Arc;

    fn entity(bytes: u64) -> Arc<Cached> {
        Arc::new(Cached {
            e: 1,
            last_tx: 1,
            form: Form::Encoded(Box::default()),
            bytes,
            first_reader: 0,
            read_again: Default::default(),
        })
    }

    #[test]
    fn the_entity_cache_stays_within_its_budget_and_keeps_what_is_hot() {
        let cache = EntityCache::new(64 * 1024);
        for e in 0..1_000 {
            cache.keep(e, cache.epoch(), entity(1024));
            // Entity 0 is read between every offer.
            cache.get(0);
            assert!(cache.weight() <= 64 * 1024);
        }
        assert!(cache.len() > 16, "it did not start over: {}", cache.len());
        assert!(cache.get(0).is_some(), "the hot entity stayed");
    }

    #[test]
    fn a_replacement_is_kept_only_in_place_of_what_it_was_made_from() {
        let cache = EntityCache::new(1 << 20);
        let first = entity(100);
        cache.keep(7, cache.epoch(), first.clone());
        let second = entity(200);
        cache.replace(7, &first, second.clone());
        assert!(Arc::ptr_eq(&cache.get(7).unwrap(), &second));
        // Made from an entry a write has since invalidated: left out.
        cache.invalidate([7], 2);
        cache.replace(7, &second, entity(300));
        assert!(cache.get(7).is_none());
        // Or from one that another reader's newer entry has replaced.
        let newer = entity(400);
        cache.keep(7, cache.epoch(), newer.clone());
        cache.replace(7, &second, entity(500));
        assert!(Arc::ptr_eq(&cache.get(7).unwrap(), &newer));
    }

    #[test]
    fn an_entity_is_kept_from_its_second_reader_on() {
        let cache = EntityCache::new(1 << 20);
        let read_by = |reader| {
            Arc::new(Cached {
                first_reader: reader,
                ..Arc::into_inner(entity(100)).unwrap()
            })
        };
        cache.offer(7, cache.epoch(), read_by(1));
        cache.offer(7, cache.epoch(), read_by(1));
        assert!(cache.get(7).is_none(), "one reader, however often");
        cache.offer(7, cache.epoch(), read_by(2));
        assert!(cache.get(7).is_some(), "a second reader");
    }

    #[test]
    fn an_offer_read_before_a_write_is_not_kept() {
        let cache = EntityCache::new(1 << 20);
        let epoch = cache.epoch();
        cache.invalidate([7], 2);
        cache.keep(7, epoch, entity(100));
        assert!(cache.get(7).is_none());
        cache.keep(7, cache.epoch(), entity(100));
        assert!(cache.get(7).is_some());
    }
}

#[cfg(test)]
mod entry_tests {
    use super::*;

    fn datom(a: EntityId, v: Value, tx: EntityId) -> Datom {
        Datom {
            e: 42,
            a,
            v,
            tx,
            added: true,
        }
    }

    /// An entity with attributes 3, 5 (two values), 7 and 9, as one entry.
    fn cached() -> Cached {
        let datoms = [
            datom(9, Value::Long(90), 11),
            datom(3, Value::String("three".into()), 11),
            datom(5, Value::String("five b".into()), 11),
            datom(5, Value::String("five a".into()), 11),
            datom(7, Value::Ref(700), 11),
        ];
        let entries = updated_entries(&datoms, 11, |_| Ok(None)).unwrap();
        let (e, entry) = &entries[0];
        assert_eq!(*e, 42);
        Cached::new(42, entry, 1).unwrap()
    }

    fn attrs(datoms: &[Datom]) -> Vec<EntityId> {
        datoms.iter().map(|d| d.a).collect()
    }

    #[test]
    fn an_entry_is_read_by_attribute_range_and_value_encoded_or_decoded() {
        let encoded = cached();
        assert!(!encoded.hot(1), "its first reader reading it again");
        for reader in 2..2 + HOT_AFTER as u64 - 1 {
            assert!(!encoded.hot(reader), "not yet: {reader}");
            assert!(!encoded.hot(1), "its first reader does not count");
        }
        assert!(encoded.hot(99), "other readers make it hot");
        assert!(!encoded.hot(100), "once");
        let decoded = encoded.decoded().unwrap();
        assert!(!decoded.hot(4), "decoded is as hot as it gets");
        assert!(decoded.bytes > encoded.bytes);
        for c in [encoded, decoded] {
            reads_the_same(c);
        }
    }

    fn reads_the_same(c: Cached) {
        assert_eq!(c.last_tx, 11);
        assert_eq!(attrs(&c.datoms(0, 100, None).unwrap()), [3, 5, 5, 7, 9]);
        assert_eq!(attrs(&c.datoms(4, 7, None).unwrap()), [5, 5, 7]);
        assert_eq!(attrs(&c.datoms(5, 5, None).unwrap()), [5, 5]);
        assert!(c.datoms(10, 20, None).unwrap().is_empty());
        assert!(c.datoms(0, 2, None).unwrap().is_empty());
        let b = Value::String("five b".into());
        let found = c.datoms(5, 5, Some(&b)).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].e, found[0].v.clone(), found[0].tx), (42, b, 11));
        assert!(c
            .datoms(3, 9, Some(&Value::String("nothing".into())))
            .unwrap()
            .is_empty());
        assert_eq!(c.first_value(7).unwrap(), Some(Value::Ref(700)));
        assert_eq!(c.first_value(4).unwrap(), None);
        let mut seen = Vec::new();
        c.visit(6, 9, |d| seen.push((d.a, d.v.clone()))).unwrap();
        assert_eq!(seen, [(7, Value::Ref(700)), (9, Value::Long(90))]);
    }

    #[test]
    fn a_cut_entry_is_refused_whole() {
        let entries = updated_entries(&[datom(3, Value::Long(1), 5)], 5, |_| Ok(None)).unwrap();
        let entry = &entries[0].1;
        assert!(Cached::new(42, &entry[..entry.len() - 1], 1).is_err());
        assert!(Cached::new(42, &entry[..6], 1).is_err());
        assert!(Cached::new(42, entry, 1).is_ok());
    }
}
