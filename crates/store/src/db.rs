//! Database values: the store as of one basis, read without locks.
//!
//! A `Db` is a basis `t` plus a view (current, since, history) over the one
//! sled tree. No datom key is ever overwritten, so a `Db` needs no snapshot:
//! it reads the same keys as everybody else and ignores every datom whose
//! `tx` is after its basis (the derived current-entity entries, which are
//! rewritten, it uses only where they are exact for its basis). That is why a request that pins a `Db` never sees a write
//! that lands while it runs, and why readers never wait for the writer.
//!
//! In the current view, the datoms of one fact `(e, a, v)` sit next to each
//! other in tx order; the last one at or before the basis says whether the
//! fact holds. `Datoms` folds each such run into at most one datom as it
//! scans. A read of AVET costs the keys it passes over; a read of a
//! grouped index costs the groups of each unit it touches (`grouped`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::current;
use super::encoding::{
    decode_datom, key_tx_added, prefix_end, Components, Datom, Index, TX_SUFFIX_LEN,
};
use super::error::{StorageError, UnknownAttribute};
use super::grouped::Grouped;
use super::ordered::{Order, OrderCache, OrderKeys};
use super::postings::Postings;
use super::referrers::ReferrerCache;
use super::schema::{Attribute, Schema, DB_TX_INSTANT};
use super::value::{EntityId, Keyword, Value};
use super::witness::{Dependencies, Dependency, Witness};

mod read_ahead;

/// How a `Db` presents the datoms at or before its basis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum View {
    /// The facts that hold at the basis.
    Current,
    /// The facts that hold at the basis and were asserted after `t`.
    Since(EntityId),
    /// Every assertion and retraction up to the basis.
    History,
}

/// An immutable database value.
#[derive(Clone)]
pub struct Db {
    tree: sled::Tree,
    basis: EntityId,
    view: View,
    schema: Arc<Schema>,
    reads: Arc<AtomicU64>,
    /// Whether entity reads may use the current-entity index.
    cached: bool,
    entities: Arc<current::EntityCache>,
    referrers: Arc<ReferrerCache>,
    orders: Arc<OrderCache>,
    /// Collects what this value's reads depended on, when asked to.
    witness: Option<Arc<Witness>>,
    /// Which reader this value serves: one per `Db::new` (a page's
    /// snapshot), kept by the values made from it. The entity cache tells a
    /// second reader of an entity (it is hot) from one reader reading it
    /// twice.
    reader: u64,
    /// What this reader read of the current-entity index, shared by the
    /// values made from it (see `current::ReaderMemo`).
    memo: Arc<current::ReaderMemo>,
}

/// Hands out `Db::reader`, in blocks (see `next_reader`).
static READERS: AtomicU64 = AtomicU64::new(0);

/// How many reader ids a thread takes from `READERS` at once.
const READERS_A_THREAD_TAKES: u64 = 1024;

/// A reader id no other value has: from the calling thread's block, so
/// that the server's workers, each making a value per request, do not
/// pass one counter's cache line between their cores every time.
fn next_reader() -> u64 {
    thread_local! {
        /// The next id of this thread's block, and the block's end.
        static BLOCK: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
    }
    BLOCK.with(|block| {
        let (mut next, mut end) = block.get();
        if next == end {
            next = READERS.fetch_add(READERS_A_THREAD_TAKES, Ordering::Relaxed);
            end = next + READERS_A_THREAD_TAKES;
        }
        block.set((next + 1, end));
        next
    })
}

impl Db {
    pub(crate) fn new(
        tree: sled::Tree,
        basis: EntityId,
        schema: Arc<Schema>,
        reads: Arc<AtomicU64>,
        entities: Arc<current::EntityCache>,
        referrers: Arc<ReferrerCache>,
        orders: Arc<OrderCache>,
    ) -> Db {
        Db {
            tree,
            basis,
            view: View::Current,
            schema,
            reads,
            cached: true,
            entities,
            referrers,
            orders,
            witness: None,
            reader: next_reader(),
            memo: Default::default(),
        }
    }

    /// This value, noting what each of its reads (and those of the values
    /// made from it) depended on; see `witness`.
    pub fn witnessed(&self) -> Db {
        Db {
            witness: Some(Witness::new()),
            ..self.clone()
        }
    }

    /// What the reads of a `witnessed` value depended on so far.
    pub fn dependencies(&self) -> Option<Dependencies> {
        self.witness.as_ref().map(|w| w.dependencies())
    }

    /// Whether every dependency in `deps` is the same at this value as
    /// when it was noted: then a read that depended on exactly those gives
    /// the same answer here. A ranged read cannot be checked: `false`.
    pub fn still_holds(&self, deps: &Dependencies) -> Result<bool, StorageError> {
        if deps.ranged {
            return Ok(false);
        }
        let quiet = self.unwitnessed();
        for dependency in &deps.list {
            let holds = match dependency {
                Dependency::Entity { e, last_tx } => {
                    match quiet.current_entity_as(*e, Use::Check) {
                        Some(cached) => cached?.last_tx == *last_tx,
                        None => false,
                    }
                }
                Dependency::Referrers { a, target, list } => {
                    *quiet.referrers(*a, *target)? == **list
                }
            };
            if !holds {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// This value without a witness: for the reads a method makes on its
    /// own behalf and notes more precisely itself.
    fn unwitnessed(&self) -> Db {
        Db {
            witness: None,
            ..self.clone()
        }
    }

    fn is_unique(&self, a: EntityId) -> bool {
        self.schema
            .attribute(a)
            .is_some_and(|attribute| attribute.unique.is_some())
    }

    /// Whether this value may answer from the in-memory caches (entities,
    /// referrers, orders): a current view reading through them.
    fn reads_caches(&self) -> bool {
        self.view == View::Current && self.cached
    }

    /// Notes a read the witness cannot vouch for (see `witness`): also for
    /// a caller that read something beside the store at this basis.
    pub fn witness_range(&self) {
        if let Some(witness) = &self.witness {
            witness.ranged();
        }
    }

    /// The transaction this value is as of: the newest one it can see.
    pub fn basis(&self) -> EntityId {
        self.basis
    }

    /// The database as it was just after transaction `t` (never later than
    /// this value's own basis).
    pub fn as_of(&self, t: EntityId) -> Db {
        Db {
            basis: t.min(self.basis),
            ..self.clone()
        }
    }

    /// Only the facts asserted after transaction `t` that still hold.
    pub fn since(&self, t: EntityId) -> Db {
        Db {
            view: View::Since(t),
            ..self.clone()
        }
    }

    /// Every assertion and retraction, not just what holds.
    pub fn history(&self) -> Db {
        Db {
            view: View::History,
            ..self.clone()
        }
    }

    /// The same value, reading every entity from its datoms rather than the
    /// current-entity index: for checking that index, and for measuring it.
    pub fn uncached(&self) -> Db {
        Db {
            cached: false,
            ..self.clone()
        }
    }

    /// Entity `e`'s current facts from the current-entity index (and its
    /// in-memory cache), when they answer exactly at this value's basis
    /// (see `current`); `None` when the datoms must be read instead.
    fn current_entity(&self, e: EntityId) -> Option<Result<Arc<current::Cached>, StorageError>> {
        self.current_entity_as(e, Use::Read)
    }

    /// `current_entity`, for a read or a check (`still_holds`, which only
    /// compares `last_tx` and does not make an entity hot).
    fn current_entity_as(
        &self,
        e: EntityId,
        use_: Use,
    ) -> Option<Result<Arc<current::Cached>, StorageError>> {
        if !self.reads_caches() {
            return None;
        }
        // A check reads each entity once (`still_holds`, the dependencies
        // of a kept page): the memo would be work for nothing there.
        let memo = match use_ {
            Use::Read => self.memo.entity(e),
            Use::Check => None,
        };
        let mut cached = match memo.map(Ok).or_else(|| self.shared_entity(e, use_))? {
            Ok(cached) => cached,
            Err(error) => return Some(Err(error)),
        };
        if cached.last_tx > self.basis {
            // Changed since this value's basis: its state then, if the
            // cache kept it (`current::EntityCache::previous_at`), or its
            // datoms.
            cached = self.entities.previous_at(e, self.basis)?;
        }
        if let Some(witness) = &self.witness {
            witness.entity(e, cached.last_tx);
        }
        Some(Ok(cached))
    }

    /// Entity `e`'s current entry, from the entity cache or sled (and then
    /// offered to the cache, and to this reader's memo: what the cache
    /// holds is as quickly found there), whatever its last change; `None`
    /// if it has none.
    fn shared_entity(
        &self,
        e: EntityId,
        use_: Use,
    ) -> Option<Result<Arc<current::Cached>, StorageError>> {
        let cached = match self.entities.get(e) {
            // Read by other pages often enough: hot, so decoded whole (see
            // `current::Cached`), in place of the entry it was decoded from
            // if the cache still holds that one (a write since removed it).
            Some(cached) if use_ == Use::Read && cached.hot(self.reader) => {
                match cached.decoded() {
                    Ok(decoded) => {
                        let decoded = Arc::new(decoded);
                        self.entities.replace(e, &cached, decoded.clone());
                        decoded
                    }
                    // A value that does not decode fails the read that asks
                    // for it, from the encoded entry, and no other.
                    Err(_) => cached,
                }
            }
            Some(cached) => cached,
            None => {
                // Offered as of when its block was read from sled, which
                // may be before a write this reader's memo does not know of.
                let (entry, epoch) = match self.memo.entry(&self.tree, e, || self.entities.epoch())
                {
                    Ok(Some(read)) => read,
                    Ok(None) => return None,
                    Err(error) => return Some(Err(error)),
                };
                match current::Cached::new(e, &entry, self.reader) {
                    Ok(cached) => {
                        let cached = Arc::new(cached);
                        self.entities.offer(e, epoch, cached.clone());
                        if use_ == Use::Read {
                            self.memo.keep_entity(e, cached.clone());
                        }
                        cached
                    }
                    Err(error) => return Some(Err(error)),
                }
            }
        };
        Some(Ok(cached))
    }

    /// The datoms of entity `e` with an attribute in `first..=last` (and the
    /// value `v`, if given), from `current_entity`, or `None`.
    fn current_facts(
        &self,
        e: EntityId,
        first: EntityId,
        last: EntityId,
        v: Option<&Value>,
    ) -> Option<Result<Vec<Datom>, StorageError>> {
        let cached = match self.current_entity(e)? {
            Ok(cached) => cached,
            Err(error) => return Some(Err(error)),
        };
        Some(cached.datoms(first, last, v))
    }

    /// Calls `visit` with each current fact of `e` whose attribute is in
    /// `first..=last`, in EAVT order: what `entity_attributes` reads, but
    /// without collecting them when the current-entity cache holds `e`.
    /// The cheap way to pick a few attributes out of a large entity (a
    /// catalog line out of a recipe).
    pub fn visit_attributes(
        &self,
        e: EntityId,
        first: EntityId,
        last: EntityId,
        mut visit: impl FnMut(&Datom),
    ) -> Result<(), StorageError> {
        if let Some(cached) = self.current_entity(e) {
            self.reads.fetch_add(1, Ordering::Relaxed);
            return cached?.visit(first, last, visit);
        }
        for datom in self.entity_attributes(e, first, last) {
            visit(&datom?);
        }
        Ok(())
    }

    /// `visit_attributes` for an entity read in passing, one of many that
    /// a page lists (a catalog page's hundred lines). At its first reading
    /// from sled, one range read of EAVT, which does not load `e`; from
    /// then on (`SecondReader` remembers it read, or a cache holds it), as
    /// `visit_attributes` reads: whole, kept by the entity cache from its
    /// second reader on and by this reader's memo, and decoded once hot.
    /// Loading `e` reads its current-entity block, and a block missing
    /// from sled's cache costs the whole sled leaf it sits in, up to
    /// sixteen blocks of about a recipe each, for the few hundred bytes a
    /// line shows: a catalog page of a million recipes read cold took
    /// 6.25 ms that way against 4.82 ms (docs/journal/55-million.md).
    /// EAVT's leaves hold sixteen datoms.
    ///
    /// An EAVT read is noted as a range (`witness_range`): the caller's
    /// page is one that its range reads already tie to every write.
    pub fn visit_attributes_in_passing(
        &self,
        e: EntityId,
        first: EntityId,
        last: EntityId,
        mut visit: impl FnMut(&Datom),
    ) -> Result<(), StorageError> {
        if !self.first_reading(e) {
            return self.visit_attributes(e, first, last, visit);
        }
        self.entities.note_reader(e, self.reader);
        self.witness_range();
        for datom in self.entity_attributes_read(e, first, last) {
            visit(&datom?);
        }
        Ok(())
    }

    /// Whether reading `e` now, in passing, is its first reading from
    /// sled: no reader read it from there before, as far as the entity
    /// cache's doorkeeper remembers, and neither this reader's memo nor
    /// the cache holds it. A look, not a read: a held entity is made no
    /// hotter by it, only by the read that follows.
    fn first_reading(&self, e: EntityId) -> bool {
        self.reads_caches()
            && !self.entities.read_before(e)
            && self.memo.entity(e).is_none()
            && !self.entities.holds(e)
    }

    fn failed(&self, index: Index, error: StorageError) -> Datoms {
        Datoms {
            iter: Source::Failed(Some(error)),
            ..self.ready(index, Vec::new())
        }
    }

    fn ready(&self, index: Index, datoms: Vec<Datom>) -> Datoms {
        Datoms {
            iter: Source::Ready(datoms.into_iter()),
            index,
            basis: self.basis,
            view: self.view,
            filter: None,
            held: None,
            reverse: false,
        }
    }

    pub fn is_history(&self) -> bool {
        self.view == View::History
    }

    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The attribute named `ident`, or `UnknownAttribute`.
    pub fn attribute(&self, ident: &Keyword) -> Result<&Arc<Attribute>, UnknownAttribute> {
        self.schema.attribute_named(ident)
    }

    /// The entity with `ident`, if any.
    pub fn entid(&self, ident: &Keyword) -> Option<EntityId> {
        self.schema.entid(ident)
    }

    /// How many index reads (range scans) this store has started, for the
    /// cost accounting in pages and benches.
    pub fn reads_so_far(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }

    /// The entities whose facts refer to `target` through the ref
    /// attribute `a`, in id order (VAET's order). At a current basis the
    /// list comes from the in-memory referrer cache when it is exact there.
    pub fn referrers(
        &self,
        a: EntityId,
        target: EntityId,
    ) -> Result<Arc<[EntityId]>, StorageError> {
        let referrers = self.unwitnessed().read_referrers(a, target)?;
        if let Some(witness) = &self.witness {
            witness.referrers(a, target, referrers.clone());
        }
        Ok(referrers)
    }

    /// How many entities refer to `target` through `a`, for a page that
    /// lists many targets in passing (a catalog page's fork counts): at a
    /// current basis, from the referrer cache's count of each target
    /// (kept with the attribute's targets, whose lists may be too many to
    /// keep), noted as a range read (`witness_range`), as the lines of
    /// such a page are; otherwise `referrers`' length.
    pub fn referrer_count_in_passing(
        &self,
        a: EntityId,
        target: EntityId,
    ) -> Result<usize, StorageError> {
        if self.reads_caches() {
            if self.referrers.wants_targets(a) {
                // Read for the cache, not for this page: unwitnessed, as
                // `read_referrers` reads it.
                self.unwitnessed().read_targets(a)?;
            }
            if let Some(count) = self.referrers.count(target, a, self.basis) {
                self.witness_range();
                return Ok(count);
            }
        }
        Ok(self.referrers(a, target)?.len())
    }

    fn read_referrers(
        &self,
        a: EntityId,
        target: EntityId,
    ) -> Result<Arc<[EntityId]>, StorageError> {
        let cacheable = self.reads_caches();
        if cacheable {
            if let Some(referrers) = self.referrers.get(target, a, self.basis) {
                return Ok(referrers);
            }
            if self.referrers.wants_targets(a) {
                self.read_targets(a)?;
            }
            if self.referrers.surely_none(target, a, self.basis) == Some(true) {
                return Ok(Arc::from([]));
            }
        }
        let referrers: Arc<[EntityId]> = self
            .datoms(Index::Vaet, &Components::any().v(Value::Ref(target)).a(a))
            .map(|d| d.map(|d| d.e))
            .collect::<Result<Vec<_>, _>>()?
            .into();
        if cacheable {
            self.referrers
                .offer(target, a, self.basis, referrers.clone());
        }
        Ok(referrers)
    }

    /// Reads every current fact of `a` from AEVT, once per attribute, for
    /// the referrer cache: the set of its targets, to answer "none"
    /// without a scan (`referrers::Targets`), and each target's referrers,
    /// kept as if each had been read from VAET; an attribute with more than
    /// `MAX_TARGETS_READ` targets is marked as not kept.
    fn read_targets(&self, a: EntityId) -> Result<(), StorageError> {
        let Some(reading) = self.referrers.begin_targets(a, self.basis) else {
            return Ok(());
        };
        let mut lists = super::referrers::Lists::default();
        // In entity order, as VAET lists a target's referrers.
        for datom in self.datoms(Index::Aevt, &Components::any().a(a)) {
            if lists.len() >= super::referrers::MAX_TARGETS_READ {
                self.referrers.end_targets(reading, None, false);
                return Ok(());
            }
            match datom {
                Ok(datom) => {
                    if let Value::Ref(target) = datom.v {
                        lists.entry(target).or_default().push(datom.e);
                    }
                }
                Err(error) => {
                    self.referrers.end_targets(reading, None, true);
                    return Err(error);
                }
            }
        }
        self.referrers.end_targets(reading, Some(lists), false);
        Ok(())
    }

    /// This value with a read count of its own, starting at zero, so that
    /// one request's reads can be told from everyone else's. Takes the
    /// value rather than cloning it: every request makes one, and a clone
    /// is eight shared counts raised, and lowered again as it drops.
    pub fn with_own_read_count(self) -> Db {
        Db {
            reads: Arc::new(AtomicU64::new(0)),
            ..self
        }
    }

    /// The per-datom keys of `index` in `lo..hi`, forward or backward: AVET's
    /// chunks or another index's groups, expanded.
    fn keys(&self, index: Index, lo: Vec<u8>, hi: Vec<u8>, reverse: bool) -> Keys {
        match index {
            Index::Avet => Keys::Postings(Postings::new(&self.tree, lo, hi, self.basis, reverse)),
            _ => Keys::Grouped(Grouped::new(&self.tree, index, lo, hi, self.basis, reverse)),
        }
    }

    /// The datoms of `index` that match `components`, in index order.
    pub fn datoms(&self, index: Index, components: &Components) -> Datoms {
        self.reads.fetch_add(1, Ordering::Relaxed);
        if let (Index::Eavt, Some(e)) = (index, components.e) {
            let (first, last) = components.a.map_or((0, EntityId::MAX), |a| (a, a));
            match self.current_facts(e, first, last, components.v.as_ref()) {
                Some(Ok(datoms)) => return self.ready(index, datoms),
                Some(Err(error)) => return self.failed(index, error),
                None => {}
            }
        }
        self.witness_range();
        let (prefix, needs_filter) = components.key_prefix(index);
        let end = prefix_end(&prefix);
        Datoms {
            iter: Source::Sled(self.keys(index, prefix, end, false)),
            index,
            basis: self.basis,
            view: self.view,
            filter: needs_filter.then(|| components.clone()),
            held: None,
            reverse: false,
        }
    }

    /// The datoms of the log index from transaction `after + 1` on, in
    /// order: the history a store sums again past what it checked before.
    pub(super) fn log_after(&self, after: EntityId) -> Datoms {
        self.witness_range();
        let prefix = [Index::Log.prefix_byte()];
        let mut lower = prefix.to_vec();
        lower.extend_from_slice(&after.saturating_add(1).to_be_bytes());
        Datoms {
            iter: Source::Sled(self.keys(Index::Log, lower, prefix_end(&prefix), false)),
            index: Index::Log,
            basis: self.basis,
            view: self.view,
            filter: None,
            held: None,
            reverse: false,
        }
    }

    /// The datoms of `index` within `within`'s key prefix, starting just
    /// after every datom of the fact `after` names (a keyset cursor: its
    /// components in the index's order), going forward or backward.
    ///
    /// Backward, `after` is the upper end: the datoms before it, newest key
    /// first. This is what a paginated list sorted by an indexed value reads.
    pub fn datoms_range(
        &self,
        index: Index,
        within: &Components,
        after: Option<&Components>,
        reverse: bool,
    ) -> Datoms {
        self.witness_range();
        let (lower, needs_filter) = within.key_prefix(index);
        let upper = prefix_end(&lower);
        let cursor = after.map(|c| c.key_prefix(index).0);
        // An attribute's range (the order is filled for it if need be), or
        // one value's run within an order already filled (a tag's recipes
        // once `ordered_count` or `/tags` filled the tags' order). A value
        // never fills one: a search term's postings would read all of
        // `:recipe/terms`, millions of keys, for a list of a few hundred.
        if let (Index::Avet, Some(a), None, false) = (index, within.a, within.e, needs_filter) {
            let order = match within.v {
                None => self.order(a),
                Some(_) => self.filled_order(a),
            };
            if let Some(order) = order {
                // The same bounds as the sled ranges below, on the keys of
                // the attribute's current facts: lower..upper is all of
                // them when no value is given.
                let (lo, hi) = keys_within(&order, &lower, &upper);
                let (start, end) = match (&cursor, reverse) {
                    (None, _) => (lo, hi),
                    (Some(at), false) => {
                        let from = prefix_end(at);
                        (order.partition_point(|k| **k < *from).clamp(lo, hi), hi)
                    }
                    (Some(at), true) => (lo, order.partition_point(|k| **k < **at).clamp(lo, hi)),
                };
                self.reads.fetch_add(1, Ordering::Relaxed);
                return Datoms {
                    iter: Source::Ordered {
                        keys: order,
                        next: start,
                        end,
                    },
                    ..self.ready(index, Vec::new())
                }
                .reversed(reverse);
            }
        }
        let (start, end) = match (cursor, reverse) {
            (None, _) => (lower, upper),
            (Some(at), false) => (prefix_end(&at).max(lower).min(upper.clone()), upper),
            (Some(at), true) => (lower.clone(), at.clamp(lower, upper)),
        };
        self.reads.fetch_add(1, Ordering::Relaxed);
        Datoms {
            iter: Source::Sled(self.keys(index, start, end, reverse)),
            index,
            basis: self.basis,
            view: self.view,
            filter: needs_filter.then(|| within.clone()),
            held: None,
            reverse,
        }
    }

    /// How many current facts attribute `a` has, from the order cache
    /// (filled first if need be); `None` when this value cannot use it.
    pub fn ordered_len(&self, a: EntityId) -> Option<usize> {
        self.witness_range();
        self.order(a).map(|order| order.len())
    }

    /// How many entities hold value `v` of indexed attribute `a` now, by
    /// two binary searches in the order cache (filled first if need be);
    /// `None` when this value cannot use it.
    pub fn ordered_count(&self, a: EntityId, v: &Value) -> Option<usize> {
        self.witness_range();
        let order = self.order(a)?;
        let (lower, _) = Components::any().a(a).v(v.clone()).key_prefix(Index::Avet);
        let (lo, hi) = keys_within(&order, &lower, &prefix_end(&lower));
        self.reads.fetch_add(1, Ordering::Relaxed);
        Some(hi - lo)
    }

    /// The distinct current values of indexed attribute `a`, in order,
    /// each with how many entities hold it. From the order cache, one
    /// binary search per value (so a tag cloud over 100,000 recipes costs
    /// its few hundred tags, not its 300,000 facts); otherwise one range
    /// read of the attribute.
    pub fn value_counts(&self, a: EntityId) -> Result<Vec<(Value, usize)>, StorageError> {
        self.witness_range();
        let Some(order) = self.order(a) else {
            let mut out: Vec<(Value, usize)> = Vec::new();
            for datom in self
                .unwitnessed()
                .datoms(Index::Avet, &Components::any().a(a))
            {
                let v = datom?.v;
                match out.last_mut() {
                    Some((last, n)) if *last == v => *n += 1,
                    _ => out.push((v, 1)),
                }
            }
            return Ok(out);
        };
        self.reads.fetch_add(1, Ordering::Relaxed);
        let mut out = Vec::new();
        let mut start = 0;
        while let Some(key) = order.get(start) {
            // An AVET key is [prefix a v] + [e] + [tx added]; the keys of
            // one value are a run, all starting with [prefix a v].
            let value_end = key.len() - 8 - TX_SUFFIX_LEN;
            let past = prefix_end(&key[..value_end]);
            // Every key before `start` is of an earlier value, so before
            // `past` too.
            let end = order.partition_point(|k| **k < *past);
            out.push((decode_datom(Index::Avet, key)?.v, end - start));
            start = end;
        }
        Ok(out)
    }

    /// Attribute `a`'s order of current facts if the order cache holds it
    /// for this value, without filling it.
    fn filled_order(&self, a: EntityId) -> Option<Order> {
        if !self.reads_caches() {
            return None;
        }
        self.orders.get(a, self.basis)
    }

    /// Attribute `a`'s order of current facts from the order cache, read
    /// into it first if this is a current value at the newest basis;
    /// `None` when sled must be read instead.
    fn order(&self, a: EntityId) -> Option<Order> {
        if let Some(order) = self.filled_order(a) {
            return Some(order);
        }
        if !self.reads_caches() || !self.orders.accepts(a, self.basis) {
            return None;
        }
        // One range read fills it: the keys a current range read folds to.
        let within = Components::any().a(a);
        let (lower, _) = within.key_prefix(Index::Avet);
        let upper = prefix_end(&lower);
        let mut scan = Datoms {
            iter: Source::Sled(self.keys(Index::Avet, lower, upper, false)),
            ..self.ready(Index::Avet, Vec::new())
        };
        self.reads.fetch_add(1, Ordering::Relaxed);
        let mut keys = Vec::new();
        for datom in &mut scan {
            keys.push(super::encoding::datom_key(Index::Avet, &datom.ok()?).into());
            if keys.len() > self.orders.capacity() {
                // Too large to keep: stop here, and say so, so that the
                // next reader does not read it whole again for nothing.
                self.orders.refuse(a);
                return None;
            }
        }
        self.orders.offer(a, self.basis, keys);
        self.orders.get(a, self.basis)
    }

    /// The datoms of entity `e` for attributes `first..=last` (by id), in
    /// EAVT order: one range read for attributes installed side by side.
    pub fn entity_attributes(&self, e: EntityId, first: EntityId, last: EntityId) -> Datoms {
        match self.current_facts(e, first, last, None) {
            Some(Ok(datoms)) => {
                self.reads.fetch_add(1, Ordering::Relaxed);
                return self.ready(Index::Eavt, datoms);
            }
            Some(Err(error)) => return self.failed(Index::Eavt, error),
            None => {}
        }
        self.witness_range();
        self.entity_attributes_read(e, first, last)
    }

    /// `entity_attributes` read from EAVT, whatever the caches hold.
    fn entity_attributes_read(&self, e: EntityId, first: EntityId, last: EntityId) -> Datoms {
        let (lower, upper) = eavt_bounds(e, first, last);
        self.range_read(Index::Eavt, lower, upper)
    }

    /// One range read of `index`, forward over `lower..upper`, counted.
    fn range_read(&self, index: Index, lower: Vec<u8>, upper: Vec<u8>) -> Datoms {
        self.reads.fetch_add(1, Ordering::Relaxed);
        Datoms {
            iter: Source::Sled(self.keys(index, lower, upper, false)),
            index,
            basis: self.basis,
            view: self.view,
            filter: None,
            held: None,
            reverse: false,
        }
    }

    /// The datoms of entities `first..=last`, in EAVT order: one range read
    /// for entities made side by side (a version's ingredients and steps),
    /// where reading them one by one would read their stored groups, which
    /// neighbouring entities share, once for each.
    pub fn entity_range(&self, first: EntityId, last: EntityId) -> Datoms {
        self.witness_range();
        let lower = [&[Index::Eavt.prefix_byte()][..], &first.to_be_bytes()].concat();
        let upper = match last.checked_add(1) {
            Some(end) => [&[Index::Eavt.prefix_byte()][..], &end.to_be_bytes()].concat(),
            None => prefix_end(&[Index::Eavt.prefix_byte()]),
        };
        self.range_read(Index::Eavt, lower, upper)
    }

    /// The datoms of string attribute `a` whose value starts with `prefix`,
    /// in AVET order (the attribute must be unique or indexed).
    pub fn text_prefix(&self, a: EntityId, prefix: &str) -> Datoms {
        self.witness_range();
        let key = text_prefix_key(a, prefix);
        let end = prefix_end(&key);
        self.range_read(Index::Avet, key, end)
    }

    /// The datoms of string attribute `a` (unique or indexed) whose value
    /// is `from` or after it, up to every value that starts with `through`,
    /// in AVET order: one range read.
    pub fn text_between(&self, a: EntityId, from: &str, through: &str) -> Datoms {
        self.witness_range();
        let lower = text_prefix_key(a, from);
        let upper = prefix_end(&text_prefix_key(a, through));
        self.range_read(Index::Avet, lower, upper)
    }

    /// The distinct current values of string attribute `a` (unique or
    /// indexed) that start with `prefix`, in order, at most `limit`: one
    /// seek per value, however many entities hold each.
    pub fn text_values(
        &self,
        a: EntityId,
        prefix: &str,
        limit: usize,
    ) -> Result<Vec<String>, StorageError> {
        self.witness_range();
        let mut start = text_prefix_key(a, prefix);
        let end = prefix_end(&start);
        let mut out = Vec::new();
        while out.len() < limit && start < end {
            self.reads.fetch_add(1, Ordering::Relaxed);
            let mut values = Datoms {
                iter: Source::Sled(self.keys(Index::Avet, start.clone(), end.clone(), false)),
                ..self.ready(Index::Avet, Vec::new())
            };
            let Some(datom) = values.next().transpose()? else {
                break;
            };
            let Some(text) = datom.v.as_str() else {
                break;
            };
            out.push(text.to_owned());
            // Past every key of this value: the next seek lands on the next.
            start = prefix_end(&Components::any().a(a).v(datom.v).key_prefix(Index::Avet).0);
        }
        Ok(out)
    }

    /// The values entity `e` has for attribute `a`, in value order.
    pub fn values(&self, e: EntityId, a: EntityId) -> Result<Vec<Value>, StorageError> {
        self.datoms(Index::Eavt, &Components::any().e(e).a(a))
            .map(|d| d.map(|d| d.v))
            .collect()
    }

    /// The first value entity `e` has for attribute `a`: one EAVT seek.
    pub fn value(&self, e: EntityId, a: EntityId) -> Result<Option<Value>, StorageError> {
        if let Some(cached) = self.current_entity(e) {
            // Straight from the cached entity: no range read, no vector.
            self.reads.fetch_add(1, Ordering::Relaxed);
            return cached?.first_value(a);
        }
        self.datoms(Index::Eavt, &Components::any().e(e).a(a))
            .next()
            .transpose()
            .map(|d| d.map(|d| d.v))
    }

    /// The entity whose unique attribute `a` has value `v`: the value's
    /// run of `a`'s order if the order cache holds it for this value (a
    /// server reads the slugs' as it starts; `datoms_range`), else one
    /// AVET seek. The AVET leaves of a catalog's slugs did not stay in
    /// sled's cache through a crawler's pass, which pulls two recipe
    /// leaves a page: a seek read one or two of their fragments from the
    /// file a page (uprobes of scripts/crawl.sh).
    ///
    /// Witnessed, a hit depends on the entity found (it holds `v` as long as
    /// its facts are the same, and `a` is unique), a miss is a range.
    pub fn entity_with(&self, a: EntityId, v: &Value) -> Result<Option<EntityId>, StorageError> {
        let found = self
            .unwitnessed()
            .datoms_range(
                Index::Avet,
                &Components::any().a(a).v(v.clone()),
                None,
                false,
            )
            .next()
            .transpose()?
            .map(|d| d.e);
        match found {
            Some(e) if self.witness.is_some() && self.is_unique(a) => {
                // Witnessed, not read: it does not make the entity hot.
                if self.current_entity_as(e, Use::Check).is_none() {
                    self.witness_range();
                }
            }
            _ => self.witness_range(),
        }
        Ok(found)
    }

    /// Everything entity `e` says at this basis.
    pub fn entity(&self, e: EntityId) -> Result<Entity, StorageError> {
        let mut attrs: BTreeMap<Keyword, Vec<Value>> = BTreeMap::new();
        for datom in self.datoms(Index::Eavt, &Components::any().e(e)) {
            let datom = datom?;
            let ident = self
                .schema
                .attribute(datom.a)
                .map(|a| a.ident.clone())
                .ok_or_else(|| {
                    StorageError::Corrupt(format!("datom of unknown attribute {}", datom.a))
                })?;
            attrs.entry(ident).or_default().push(datom.v);
        }
        Ok(Entity { id: e, attrs })
    }

    /// The instant of transaction `tx`.
    pub fn tx_instant(&self, tx: EntityId) -> Result<Option<i64>, StorageError> {
        Ok(self.value(tx, DB_TX_INSTANT)?.and_then(|v| v.as_instant()))
    }

    /// The datoms of the transactions in `from..=to` (and at or before the
    /// basis), in log order: by tx, then entity, attribute, value.
    pub fn log(
        &self,
        from: EntityId,
        to: EntityId,
    ) -> impl Iterator<Item = Result<Datom, StorageError>> {
        let to = to.min(self.basis);
        let start = [&[Index::Log.prefix_byte()][..], &from.to_be_bytes()].concat();
        let end = [
            &[Index::Log.prefix_byte()][..],
            &to.saturating_add(1).to_be_bytes(),
        ]
        .concat();
        self.witness_range();
        self.reads.fetch_add(1, Ordering::Relaxed);
        let groups = (from <= to).then(|| self.keys(Index::Log, start, end, false));
        groups
            .into_iter()
            .flatten()
            .map(|key| decode_datom(Index::Log, &key?))
    }
}

/// What one entity says: its attributes, each with its values in value order.
#[derive(Debug, Clone, PartialEq)]
pub struct Entity {
    id: EntityId,
    attrs: BTreeMap<Keyword, Vec<Value>>,
}

impl Entity {
    pub fn id(&self) -> EntityId {
        self.id
    }

    /// The first value of `attr`, if any (the value, for cardinality one).
    pub fn get(&self, attr: &Keyword) -> Option<&Value> {
        self.attrs.get(attr).and_then(|vs| vs.first())
    }

    /// All values of `attr`, in value order.
    pub fn get_all(&self, attr: &Keyword) -> &[Value] {
        self.attrs.get(attr).map_or(&[], Vec::as_slice)
    }

    pub fn attributes(&self) -> &BTreeMap<Keyword, Vec<Value>> {
        &self.attrs
    }

    /// An entity with no facts at this basis (never made, or fully retracted).
    pub fn is_empty(&self) -> bool {
        self.attrs.is_empty()
    }
}

/// The keys of EAVT that hold entity `e`'s attributes `first..=last`.
fn eavt_bounds(e: EntityId, first: EntityId, last: EntityId) -> (Vec<u8>, Vec<u8>) {
    let prefix = [Index::Eavt.prefix_byte()];
    let lower = [&prefix[..], &e.to_be_bytes(), &first.to_be_bytes()].concat();
    let upper = [
        &prefix[..],
        &e.to_be_bytes(),
        &last.saturating_add(1).to_be_bytes(),
    ]
    .concat();
    (lower, upper)
}

/// Where the keys in `lower..upper` lie in `order` (sorted): two binary
/// searches.
fn keys_within(order: &OrderKeys, lower: &[u8], upper: &[u8]) -> (usize, usize) {
    (
        order.partition_point(|k| **k < *lower),
        order.partition_point(|k| **k < *upper),
    )
}

/// Why an entity is read from the entity cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Use {
    Read,
    /// Only its `last_tx` is compared: it does not make the entity hot,
    /// nor go through the reader's memo of entities.
    Check,
}

/// A range read over one index, folded to the `Db`'s view as it goes.
pub struct Datoms {
    iter: Source,
    index: Index,
    basis: EntityId,
    view: View,
    /// Bound components the key prefix does not cover.
    filter: Option<Components>,
    /// Current views: going forward, the newest visible key of the fact
    /// being folded; going backward, the fact already decided (its first
    /// visible key from the back is its newest).
    held: Option<sled::IVec>,
    reverse: bool,
}

/// The keys of a range read: AVET's chunks or a grouped index's groups,
/// expanded. Their direction is fixed when the read starts.
// Like `Source`: one lives on the stack per read, and boxing would cost an
// allocation on every read.
#[allow(clippy::large_enum_variant)]
enum Keys {
    Postings(Postings),
    Grouped(Grouped),
}

impl Iterator for Keys {
    type Item = Result<sled::IVec, StorageError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Keys::Postings(postings) => postings.next(),
            Keys::Grouped(groups) => groups.next(),
        }
    }
}

/// Where a range read's datoms come from.
// A `Datoms` lives on the stack for one read; boxing the large sled
// iterator would cost an allocation on every read to save bytes there.
#[allow(clippy::large_enum_variant)]
enum Source {
    /// Keys of an index, folded to the view as they come.
    Sled(Keys),
    /// Datoms already read (from the current-entity index), or an error.
    Ready(std::vec::IntoIter<Datom>),
    /// Keys of current facts from the order cache, `next..end`, decoded as
    /// they are taken (from the back when reversed).
    Ordered {
        keys: Order,
        next: usize,
        end: usize,
    },
    Failed(Option<StorageError>),
}

impl Datoms {
    fn reversed(mut self, reverse: bool) -> Datoms {
        self.reverse = reverse;
        self
    }

    fn emit(&self, key: &[u8]) -> Option<Result<Datom, StorageError>> {
        let (tx, added) = key_tx_added_any(self.index, key);
        let keep = match self.view {
            View::History => true,
            View::Current => added,
            View::Since(t) => added && tx > t,
        };
        if !keep {
            return None;
        }
        match decode_datom(self.index, key) {
            Ok(d) if self.filter.as_ref().is_none_or(|f| f.matches(&d)) => Some(Ok(d)),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

fn key_tx_added_any(index: Index, key: &[u8]) -> (EntityId, bool) {
    if index == Index::Log {
        let tx = u64::from_be_bytes(key[1..9].try_into().expect("eight bytes"));
        (tx, key[key.len() - 1] != 0)
    } else {
        key_tx_added(key)
    }
}

/// The AVET key prefix of string attribute `a`'s values starting with
/// `prefix`.
fn text_prefix_key(a: EntityId, prefix: &str) -> Vec<u8> {
    let mut key = vec![Index::Avet.prefix_byte()];
    key.extend_from_slice(&a.to_be_bytes());
    crate::encoding::encode_text_prefix(&mut key, prefix);
    key
}

fn same_fact(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a[..a.len() - TX_SUFFIX_LEN] == b[..b.len() - TX_SUFFIX_LEN]
}

impl Iterator for Datoms {
    type Item = Result<Datom, StorageError>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.iter {
            Source::Sled(_) => {}
            Source::Ready(datoms) => return datoms.next().map(Ok),
            Source::Failed(error) => return error.take().map(Err),
            Source::Ordered { keys, next, end } => {
                if next >= end {
                    return None;
                }
                let key = if self.reverse {
                    *end -= 1;
                    &keys[*end]
                } else {
                    *next += 1;
                    &keys[*next - 1]
                };
                return Some(decode_datom(Index::Avet, key));
            }
        }
        loop {
            let Source::Sled(iter) = &mut self.iter else {
                unreachable!("checked above");
            };
            let key = match iter.next() {
                Some(Ok(key)) => key,
                Some(Err(e)) => return Some(Err(e)),
                None if self.reverse => return None,
                None => {
                    let held = self.held.take()?;
                    match self.emit(&held) {
                        Some(out) => return Some(out),
                        None => continue,
                    }
                }
            };
            let (tx, _) = key_tx_added_any(self.index, &key);
            if tx > self.basis {
                continue;
            }
            if self.view == View::History || self.index == Index::Log {
                match self.emit(&key) {
                    Some(out) => return Some(out),
                    None => continue,
                }
            }
            if self.reverse {
                if self
                    .held
                    .as_ref()
                    .is_some_and(|decided| same_fact(decided, &key))
                {
                    continue;
                }
                self.held = Some(key.clone());
                match self.emit(&key) {
                    Some(out) => return Some(out),
                    None => continue,
                }
            }
            match self.held.take() {
                Some(held) if !same_fact(&held, &key) => {
                    self.held = Some(key);
                    if let Some(out) = self.emit(&held) {
                        return Some(out);
                    }
                }
                _ => self.held = Some(key),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reader_id_is_handed_out_once_across_threads() {
        let blocks = READERS_A_THREAD_TAKES as usize * 2 + 7;
        let ids: Vec<u64> = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..3)
                .map(|_| scope.spawn(|| (0..blocks).map(|_| next_reader()).collect::<Vec<_>>()))
                .collect();
            threads
                .into_iter()
                .flat_map(|thread| thread.join().unwrap())
                .collect()
        });
        let unique: std::collections::HashSet<_> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len(), "no id twice");
    }
}
