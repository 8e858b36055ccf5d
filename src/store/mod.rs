//! The fact store: immutable datoms in covering indexes on sled.
//!
//! This module knows nothing of recipes, HTTP or HTML; it could be its own
//! crate, taking with it `crate::edn`, the one module outside it that it
//! uses. A `Store` is the one writer and the source of database values:
//!
//! - `transact` applies a `Transaction` atomically (one sled batch holding
//!   every index key of every datom, plus the new basis) and returns only once
//!   that batch is durable;
//! - `db` hands out the latest durable `Db`, which never changes.
//!
//! # Writes and durability
//! Writers take turns under one mutex, which covers checking a transaction
//! against the current state and applying its batch, not the flush. The flush
//! is shared: whoever finds no flush running flushes everything applied so
//! far, and every writer whose transaction that covered is acknowledged at
//! once. Under load, many transactions ride on one flush (group commit);
//! alone, a transaction pays for its own. Readers see a transaction only once
//! it is durable, so nothing a reader saw can be lost in a crash.
//!
//! Durable means that a `sled::Db::flush` begun after the batch was applied
//! has returned, and sled's files were then synced (`fsync`). sled's flush
//! alone is not an fsync on Linux: it waits on `sync_file_range` for its
//! log's bytes, which writes no metadata and empties no drive cache, and
//! syncs no blob file; its background flusher's fsync waits for no writer.
//! So the store fsyncs the log, new blob files and their directory after
//! each flush, before acknowledging. A process crash loses nothing
//! acknowledged (tested); a power cut should not either, which is synced
//! for but not tested (docs/SECURITY.md).
//!
//! `transact_with` runs a function on the latest value inside the writer
//! and applies the transaction it returns (Datomic's transaction
//! functions): what it checked is what its transaction applies to. Bulk
//! loads use `transact_deferred_with` and wait once per group. Until a
//! transaction is durable the writer keeps the batch that takes it back out
//! of sled; a failed or panicking flush applies those, poisons the store,
//! and wakes every writer waiting on it.
//!
//! # Layout
//! - `value`: typed values and keywords
//! - `encoding`: order-preserving keys of the five indexes
//! - `grouped`: the log, EAVT, AEVT and VAET, stored a few keys per transaction
//!   and read back as per-datom keys
//! - `postings`: AVET, stored as posting lists in chunks of 64 entities
//! - `schema`: attributes as entities, and their cache
//! - `tx`: transactions and how they become datoms
//! - `current`: each entity's current facts in one entry (sixteen neighbouring
//!   entities' to a sled key), derived
//! - `referrers`: who refers to an entity, kept in memory while exact
//! - `ordered`: an indexed attribute's current facts in order, in memory
//! - `keyspace`: plain keys beside the datoms, for what must not be history
//! - `db`: database values and range reads
//! - `pull`: pull patterns
//! - `transfer`: export to and import from a line-per-datom file
//! - `instant`: instants as RFC 3339 text (the rest of the text forms are
//!   `crate::edn`'s, shared with the seed files)
//! - `verify`: a check that derived entries match the datoms, for tests

mod current;
pub mod db;
mod derived_lock;
pub mod encoding;
pub mod error;
mod fsync;
mod grouped;
pub mod instant;
mod keyspace;
mod ordered;
mod postings;
pub mod pull;
pub mod query;
mod referrers;
pub mod schema;
pub mod transfer;
pub mod tx;
pub mod value;
mod verify;
pub mod witness;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};

/// The current-entity blocks' layout, for tests that tamper with a store.
#[doc(hidden)]
pub use current::blocks as current_blocks;
pub use db::{Db, Entity};
pub use encoding::{Components, Datom, Index};
pub use error::{
    BadKeyword, OpenError, ReadError, SchemaError, StorageError, StoreError, TransactError,
    TransferError, UnknownAttribute,
};
pub use keyspace::Keyspace;
pub use pull::{PullPattern, Pulled};
pub use schema::{Attribute, Cardinality, Schema, Unique};
pub use tx::{EntityMap, EntityRef, Transaction, TxReport, TxValue};
pub use value::{kw, EntityId, Keyword, Value, ValueType};

use encoding::{datom_key, META_PREFIX};
use ordered::OrderCache;
use referrers::ReferrerCache;
use schema::GENESIS_TX;
use sled::IVec;

/// The most datoms one transaction may write. A bigger one is refused:
/// sled 0.34 keeps every node version a batch replaces until the batch ends
/// (its epoch is pinned for the whole batch), so memory grows with the
/// batch; bulk loads write many transactions of this size or less instead.
pub const MAX_TX_DATOMS: usize = 20_000;

/// The most bytes of values one transaction may write (strings and
/// keywords by their length, every other value as eight bytes): with values
/// of up to a line's length, a datom count alone would not bound a batch.
pub const MAX_TX_BYTES: usize = 32 << 20;

/// sled's segment size: the unit of its log on disk, of its cleaning, and
/// of its write buffers in memory. sled's default, 512 KiB, makes every
/// page image over 128 KiB a file of its own and cleans in small steps;
/// with 8 MiB, seeding 10,000 full recipes left 240 MB on disk instead of
/// 294 MB in the same time (docs/BENCHMARKING.md), and the demo server
/// still peaks at 45 MiB. sled refuses more than 16 MiB.
#[doc(hidden)]
pub const SEGMENT_BYTES: usize = 8 << 20;

/// The on-disk format this build reads and writes. Bump it when keys change.
pub const FORMAT_VERSION: u32 = 9;

const META_FORMAT: &[u8] = b"\x00format";
const META_BASIS: &[u8] = b"\x00basis";
const META_NEXT_ID: &[u8] = b"\x00next-id";
const META_LAST_INSTANT: &[u8] = b"\x00last-instant";
const META_IMPORTING: &[u8] = b"\x00importing";
/// Set by a failed flush's undo that could not clear every AVET chunk it
/// had to: the next open clears them all (`postings::clear_all`).
const META_AVET_UNCLEARED: &[u8] = b"\x00avet-uncleared";

/// How to open a store.
#[derive(Debug, Clone)]
pub struct StoreConfig {
    /// The directory, or `None` for a temporary store removed on drop.
    pub path: Option<PathBuf>,
    /// sled's page cache, in bytes.
    pub cache_bytes: u64,
    /// How many referrer lists and attribute orders to keep in memory.
    pub cached_entities: usize,
    /// The most bytes of decoded entities to keep in memory.
    pub entity_cache_bytes: u64,
}

/// The entity cache's budget unless told otherwise.
pub const DEFAULT_ENTITY_CACHE_BYTES: u64 = 128 << 20;

impl StoreConfig {
    pub fn durable(path: impl Into<PathBuf>) -> StoreConfig {
        StoreConfig {
            path: Some(path.into()),
            cache_bytes: 256 * 1024 * 1024,
            cached_entities: 200_000,
            entity_cache_bytes: DEFAULT_ENTITY_CACHE_BYTES,
        }
    }

    pub fn temporary() -> StoreConfig {
        StoreConfig {
            path: None,
            cache_bytes: 64 * 1024 * 1024,
            cached_entities: 200_000,
            entity_cache_bytes: DEFAULT_ENTITY_CACHE_BYTES,
        }
    }
}

/// A handle on an open store; clones share it.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    sled: sled::Db,
    path: Option<PathBuf>,
    /// sled's files, synced after each flush so that what is acknowledged
    /// survives power loss (`fsync`); none for a temporary store.
    files: Option<fsync::DurableFiles>,
    writer: Mutex<Writer>,
    /// The newest transaction applied to sled (durable or not yet).
    applied: AtomicU64,
    /// The newest durable transaction and the schema as of it: what
    /// readers get, read together so a reader never sees an attribute
    /// before the transaction that installed it is durable.
    published: RwLock<Published>,
    flush: Mutex<FlushState>,
    /// Fault injection for tests: what the next flush does instead of
    /// flushing (`FlushFault`), as a `u8`; 0 is nothing.
    #[cfg(feature = "testing")]
    next_flush_fault: std::sync::atomic::AtomicU8,
    flushed: Condvar,
    reads: Arc<AtomicU64>,
    entities: Arc<current::EntityCache>,
    referrers: Arc<ReferrerCache>,
    orders: Arc<OrderCache>,
    /// Transactions acknowledged and flushes done since open: their ratio is
    /// how well group commit is working.
    transactions: AtomicU64,
    flushes: AtomicU64,
    /// See `StoreStats::synced`.
    synced: AtomicU64,
}

/// Counters since the store was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreStats {
    /// Transactions committed (durable and acknowledged).
    pub transactions: u64,
    /// sled flushes that made them durable.
    pub flushes: u64,
    /// Flushes whose files were then synced for power loss (`fsync`):
    /// every flush of a store in a directory, none of a temporary one.
    pub synced: u64,
    /// Index reads (range scans) started by database values.
    pub reads: u64,
}

/// The basis readers get, with its schema.
struct Published {
    basis: EntityId,
    schema: Arc<Schema>,
}

/// What the writer knows that is not in the indexes.
struct Writer {
    next_id: EntityId,
    last_instant: i64,
    /// The schema as of the newest applied transaction.
    schema: Arc<Schema>,
}

struct FlushState {
    durable: EntityId,
    running: bool,
    /// Flushes started and finished so far: `sync` waits for one that
    /// started after the write it must cover.
    started: u64,
    finished: u64,
    /// Set by a failed flush; no write is acknowledged after it, and
    /// nothing is flushed again but the undo of what was not durable.
    failed: Option<String>,
    /// Schemas installed by transactions applied but not yet durable,
    /// oldest first: each is published with its transaction's basis.
    schemas: Vec<(EntityId, Arc<Schema>)>,
    /// For each transaction applied but not yet durable, oldest first, how
    /// to take it back out of sled.
    undo: Vec<Undo>,
}

/// How to take one transaction back out of sled.
struct Undo {
    tx: EntityId,
    /// Every key it wrote but AVET's, with what it held before (`None`:
    /// nothing).
    keys: Vec<(Vec<u8>, Option<IVec>)>,
    /// The AVET chunks it wrote. Putting a chunk's old bytes back would
    /// take a split back too, moving records from a piece to the chunk
    /// before it, behind a reader scanning forward; so each is cleared of
    /// what is not durable instead (`postings::cleared`).
    chunks: Vec<Vec<u8>>,
}

impl Store {
    /// Opens (creating if needed) a durable store in `dir`.
    pub fn open(dir: impl AsRef<Path>) -> Result<Store, OpenError> {
        Store::open_with(StoreConfig::durable(dir.as_ref()))
    }

    /// What in `dir` is not a store's file, if anything: the first entry
    /// that sled would not have written there (`conf`, `db`, `blobs/`,
    /// `snap.*`). `None` for a store's directory, an empty one, or one that
    /// does not exist. What a caller checks before deleting a directory it
    /// was told is a store (`seed --force`), so that a mistyped `--data ~`
    /// deletes nothing.
    pub fn stranger_in(dir: &Path) -> std::io::Result<Option<PathBuf>> {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(error),
        };
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name();
            let kind = entry.file_type()?;
            let known = match name.to_str() {
                Some("conf" | "db") => kind.is_file(),
                Some("blobs") => kind.is_dir(),
                Some(other) => {
                    kind.is_file()
                        && other.strip_prefix("snap.").is_some_and(|id| {
                            !id.is_empty() && id.bytes().all(|b| b.is_ascii_hexdigit())
                        })
                }
                None => false,
            };
            if !known {
                return Ok(Some(entry.path()));
            }
        }
        Ok(None)
    }

    /// A store in a temporary file, gone when the last handle drops.
    pub fn temporary() -> Result<Store, OpenError> {
        Store::open_with(StoreConfig::temporary())
    }

    pub fn open_with(config: StoreConfig) -> Result<Store, OpenError> {
        // sled's background flusher stays on: it is also what cleans sled's
        // segments, without which a bulk load's memory more than doubled
        // (docs/BENCHMARKING.md). It may write out a batch not yet
        // acknowledged, so a failed flush undoes those (`undo_unflushed`).
        let sled_config = sled::Config::new()
            .cache_capacity(config.cache_bytes)
            .segment_size(SEGMENT_BYTES)
            .flush_every_ms(Some(500));
        let sled = match &config.path {
            Some(path) => open_locked(&sled_config.path(path), path)?,
            None => sled_config.temporary(true).open()?,
        };
        let shown_path = config
            .path
            .as_ref()
            .map_or("(temporary)".to_owned(), |p| p.display().to_string());
        match sled.get(META_FORMAT)? {
            None if sled.is_empty() => write_genesis(&sled)?,
            Some(found) if found.as_ref() == FORMAT_VERSION.to_be_bytes() => {}
            found => return Err(format_mismatch(shown_path, found)),
        }
        if sled.contains_key(META_IMPORTING)? {
            return Err(OpenError::UnfinishedImport(shown_path));
        }
        let basis = read_meta_u64(&sled, META_BASIS)?;
        if sled.contains_key(META_AVET_UNCLEARED)? {
            // Before anything reads or writes: the next transaction would
            // take the undone one's ids and inherit its records.
            let changed = postings::clear_all(&sled, basis)?;
            sled.remove(META_AVET_UNCLEARED)?;
            sled.flush()?;
            tracing::warn!(
                changed,
                "cleared AVET chunks a failed flush's undo had left"
            );
        }
        let files = match &config.path {
            Some(path) => Some(
                fsync::DurableFiles::open(path)
                    .map_err(|e| StorageError::Sled(sled::Error::Io(e)))?,
            ),
            None => None,
        };
        let next_id = read_meta_u64(&sled, META_NEXT_ID)?;
        let last_instant = read_meta_u64(&sled, META_LAST_INSTANT)? as i64;
        let reads = Arc::new(AtomicU64::new(0));
        let entities = Arc::new(current::EntityCache::new(config.entity_cache_bytes));
        let referrers = Arc::new(ReferrerCache::new(config.cached_entities, basis));
        let orders = Arc::new(OrderCache::new(config.cached_entities, basis));
        let empty = Arc::new(Schema::default());
        let bootstrap_db = Db::new(
            sled.deref_tree(),
            basis,
            empty,
            reads.clone(),
            entities.clone(),
            referrers.clone(),
            orders.clone(),
        );
        let schema = Arc::new(load_schema(&bootstrap_db)?);
        Ok(Store {
            inner: Arc::new(Inner {
                sled,
                files,
                path: config.path,
                writer: Mutex::new(Writer {
                    next_id,
                    last_instant,
                    schema: schema.clone(),
                }),
                applied: AtomicU64::new(basis),
                published: RwLock::new(Published { basis, schema }),
                flush: Mutex::new(FlushState {
                    durable: basis,
                    running: false,
                    started: 0,
                    finished: 0,
                    failed: None,
                    schemas: Vec::new(),
                    undo: Vec::new(),
                }),
                #[cfg(feature = "testing")]
                next_flush_fault: std::sync::atomic::AtomicU8::new(0),
                flushed: Condvar::new(),
                reads,
                entities,
                referrers,
                orders,
                transactions: AtomicU64::new(0),
                flushes: AtomicU64::new(0),
                synced: AtomicU64::new(0),
            }),
        })
    }

    /// The directory, for a durable store.
    pub fn path(&self) -> Option<&Path> {
        self.inner.path.as_deref()
    }

    /// The latest durable database value. Never blocks on a writer.
    pub fn db(&self) -> Db {
        let (basis, schema) = {
            let published = self
                .inner
                .published
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            (published.basis, published.schema.clone())
        };
        Db::new(
            self.inner.sled.deref_tree(),
            basis,
            schema,
            self.inner.reads.clone(),
            self.inner.entities.clone(),
            self.inner.referrers.clone(),
            self.inner.orders.clone(),
        )
    }

    /// Whether no transaction has been committed since the store was made.
    pub fn is_empty(&self) -> bool {
        self.db().basis() == GENESIS_TX
    }

    /// Applies `tx` atomically and returns once it is durable. On any error,
    /// nothing was written.
    pub fn transact(&self, tx: &Transaction) -> Result<TxReport, TransactError> {
        let report = self
            .apply_in_writer(|_| Ok::<_, TransactError>((tx, ())))?
            .0;
        self.wait_durable(report.basis_after)?;
        self.inner.transactions.fetch_add(1, Ordering::Relaxed);
        Ok(report)
    }

    /// Runs `decide` on the latest database value inside the single writer,
    /// and applies the transaction it returns; returns once that is durable.
    ///
    /// This is the store's transaction function: what `decide` reads is the
    /// state its transaction applies to, since no other write can land in
    /// between. A check made here (a slug is free, a recipe is still at the
    /// version an edit was based on) cannot be raced. `decide` should be
    /// quick: every other writer waits for it. If it fails or panics,
    /// nothing is written and the store stays usable.
    pub fn transact_with<T, E: From<TransactError>>(
        &self,
        decide: impl FnOnce(&Db) -> Result<(Transaction, T), E>,
    ) -> Result<(TxReport, T), E> {
        let (report, value) = self.apply_in_writer(decide)?;
        self.wait_durable(report.basis_after)?;
        self.inner.transactions.fetch_add(1, Ordering::Relaxed);
        Ok((report, value))
    }

    /// `transact_with` without waiting for the transaction to be durable,
    /// for bulk loads, which write many bounded transactions and wait once
    /// per group (`wait_durable` on the last basis): one flush covers them
    /// all. Readers see a transaction only once it is durable; nothing is
    /// acknowledged to anyone before that wait returns.
    pub fn transact_deferred_with<T, E: From<TransactError>>(
        &self,
        decide: impl FnOnce(&Db) -> Result<(Transaction, T), E>,
    ) -> Result<(TxReport, T), E> {
        let (report, value) = self.apply_in_writer(decide)?;
        self.inner.transactions.fetch_add(1, Ordering::Relaxed);
        Ok((report, value))
    }

    /// Takes the writer, lets `decide` choose a transaction on the latest
    /// value, and applies it as one sled batch. Durability is the caller's.
    fn apply_in_writer<T, E: From<TransactError>, Tx: std::borrow::Borrow<Transaction>>(
        &self,
        decide: impl FnOnce(&Db) -> Result<(Tx, T), E>,
    ) -> Result<(TxReport, T), E> {
        let mut writer = self.lock_writer();
        self.refuse_if_poisoned()?;
        let db = self.writer_db(&writer);
        // A panic in `decide` must not poison the writer's mutex: nothing
        // has been written yet, so the writer's state is intact. Let the
        // guard go normally, then carry the panic on.
        let decided = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decide(&db))) {
            Ok(decided) => decided?,
            Err(panic) => {
                drop(writer);
                std::panic::resume_unwind(panic);
            }
        };
        let (tx, value) = decided;
        let report = self.apply_locked(&mut writer, &db, tx.borrow())?;
        Ok((report, value))
    }

    /// The latest applied database value, as the writer sees it.
    fn writer_db(&self, writer: &Writer) -> Db {
        Db::new(
            self.inner.sled.deref_tree(),
            self.inner.applied.load(Ordering::Acquire),
            writer.schema.clone(),
            self.inner.reads.clone(),
            self.inner.entities.clone(),
            self.inner.referrers.clone(),
            self.inner.orders.clone(),
        )
    }

    /// Checks `tx` against `db` (the writer's latest value) and applies it.
    fn apply_locked(
        &self,
        writer: &mut Writer,
        db: &Db,
        tx: &Transaction,
    ) -> Result<TxReport, TransactError> {
        let clock = tx::WriterClock {
            next_id: writer.next_id,
            last_instant: writer.last_instant,
            now: instant::now_millis(),
        };
        let prepared = tx::prepare(db, &clock, tx)?;
        let report = prepared.report;
        let bytes: usize = report.datoms.iter().map(|d| d.v.stored_len()).sum();
        if report.datoms.len() > MAX_TX_DATOMS || bytes > MAX_TX_BYTES {
            return Err(TransactError::TooLarge {
                datoms: report.datoms.len(),
                bytes,
                max_datoms: MAX_TX_DATOMS,
                max_bytes: MAX_TX_BYTES,
            });
        }
        let schema = prepared.schema.map(Arc::new);
        let written = Written {
            datoms: &report.datoms,
            tx: report.basis_after,
            next_id: prepared.next_id,
            instant: report.tx_instant,
        };
        self.write_batch(writer, &written, schema.as_ref().unwrap_or(&writer.schema))?;
        self.after_apply(writer, &written, schema);
        Ok(report)
    }

    /// Writes one transaction's datoms, their current-entity entries and
    /// the new meta keys as one atomic sled batch, and keeps the batch
    /// that would take it out again until it is durable.
    fn write_batch(
        &self,
        writer: &Writer,
        written: &Written,
        schema: &Schema,
    ) -> Result<(), StorageError> {
        let mut batch = sled::Batch::default();
        let mut undo: Vec<(Vec<u8>, Option<IVec>)> = Vec::new();
        let mut avet = Vec::new();
        for datom in written.datoms {
            let attribute = schema.attribute(datom.a).ok_or_else(|| {
                StorageError::Corrupt(format!("datom of unknown attribute {}", datom.a))
            })?;
            avet.extend(avet_key(attribute, datom));
        }
        // An attribute this transaction indexes (`:db/index` altered to
        // true) has every datom it had before put in AVET with it, history
        // and retractions included, so that AVET holds all of an indexed
        // attribute's datoms whenever it was indexed. The records keep their
        // transactions, so a value as of an earlier basis reads them right.
        for attribute in newly_in_avet(&writer.schema, schema) {
            let before = self.writer_db(writer).history();
            for datom in before.datoms(Index::Aevt, &Components::any().a(attribute.id)) {
                avet.extend(avet_key(attribute, &datom?));
            }
        }
        // AVET's chunks are rewritten, not added: see `Undo::chunks`.
        let mut chunks = Vec::new();
        for chunk in postings::updates(&self.inner.sled, avet)? {
            batch.insert(chunk.key.as_slice(), chunk.records);
            chunks.push(chunk.key);
        }
        let is_ref = |d: &Datom| schema.attribute(d.a).is_some_and(|a| a.is_ref());
        // Entities from the writer's next id on are made by this transaction.
        for (key, records) in grouped::entries(written.datoms, is_ref, writer.next_id) {
            batch.insert(key.as_slice(), records);
            undo.push((key, None));
        }
        // Entities from `next_id` on are made by this transaction and have
        // no entry yet: a sled read per new entity was 4% of a seed (perf,
        // 8,000 recipes). Each other block is read once.
        let mut blocks = current::blocks::Blocks::new(&self.inner.sled, writer.next_id);
        let entries = current::updated_entries(written.datoms, written.tx, |e| blocks.entry(e))?;
        // Blocks are rewritten, not added: the undo keeps their bytes.
        for block in blocks.writes(entries)? {
            batch.insert(&block.key[..], block.value);
            undo.push((block.key.to_vec(), block.old));
        }
        let applied = self.inner.applied.load(Ordering::Acquire);
        let meta = [
            (META_BASIS, applied),
            (META_NEXT_ID, writer.next_id),
            (META_LAST_INSTANT, writer.last_instant as u64),
        ];
        undo.extend(meta.map(|(key, was)| (key.to_vec(), Some(IVec::from(&was.to_be_bytes())))));
        batch.insert(META_BASIS, &written.tx.to_be_bytes());
        batch.insert(META_NEXT_ID, &written.next_id.to_be_bytes());
        batch.insert(META_LAST_INSTANT, &written.instant.to_be_bytes());
        self.inner.sled.apply_batch(batch)?;
        self.lock_flush().undo.push(Undo {
            tx: written.tx,
            keys: undo,
            chunks,
        });
        Ok(())
    }

    /// Brings the in-memory caches and the writer's state up to a batch
    /// just applied to sled, and marks its transaction as applied. A new
    /// schema is queued to be published with the basis that installed it.
    fn after_apply(&self, writer: &mut Writer, written: &Written, schema: Option<Arc<Schema>>) {
        let (datoms, tx) = (written.datoms, written.tx);
        self.inner.entities.invalidate(datoms.iter().map(|d| d.e));
        self.inner.referrers.commit(tx, references(datoms));
        self.inner.orders.commit(tx, datoms);
        if let Some(schema) = schema {
            writer.schema = schema.clone();
            self.lock_flush().schemas.push((tx, schema));
        }
        writer.next_id = written.next_id;
        writer.last_instant = written.instant;
        self.inner.applied.store(tx, Ordering::Release);
    }

    /// After a failed flush: takes every transaction applied since the
    /// last durable basis back out of sled, newest first, so that nothing
    /// that flushes later (sled's own flusher, or its flush on drop) can
    /// make a write durable that was never acknowledged. The caches are
    /// derived and may hold what was undone, so they start over.
    fn undo_unflushed(&self) {
        let mut writer = self.lock_writer();
        let (durable, undo) = {
            let mut state = self.lock_flush();
            (state.durable, std::mem::take(&mut state.undo))
        };
        // One batch for it all, so that sled's own flusher never writes
        // out the old basis without the chunks cleared of what came after.
        // Each key gets what it held before the oldest transaction that
        // wrote it: the undos are folded newest first.
        let mut restore: BTreeMap<Vec<u8>, Option<IVec>> = BTreeMap::new();
        let mut chunks = Vec::new();
        for undo in undo.into_iter().rev() {
            restore.extend(undo.keys);
            chunks.extend(undo.chunks);
        }
        // AVET's keys are chunks only, and no other undo touches them.
        let (cleared, all) = postings::cleared(&self.inner.sled, chunks, durable);
        restore.extend(cleared);
        if !all {
            restore.insert(META_AVET_UNCLEARED.to_vec(), Some(IVec::from(&[])));
        }
        let mut batch = sled::Batch::default();
        for (key, old) in restore {
            match old {
                Some(old) => batch.insert(key, old),
                None => batch.remove(key),
            }
        }
        if let Err(e) = self.inner.sled.apply_batch(batch) {
            tracing::error!(error = %e, "could not undo the writes after a failed flush");
        }
        // sled's own flusher may have written out some of what was just
        // undone: write the undoing out too, if the disk lets us.
        if let Err(e) = self.inner.sled.flush() {
            tracing::error!(error = %e, "could not flush the undo after a failed flush");
        }
        let schema = self
            .inner
            .published
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .schema
            .clone();
        self.rewind(&mut writer, durable, schema);
    }

    /// How many entities the in-memory entity cache holds now.
    pub fn cached_entity_count(&self) -> usize {
        self.inner.entities.len()
    }

    /// Lets the in-memory entity cache hold `share` (0 to 1) of its budget,
    /// evicting what is over (sled's own cache stays as it was opened).
    pub fn set_entity_cache_share(&self, share: f64) {
        self.inner.entities.set_share(share);
    }

    /// The bytes the in-memory entity cache may hold now.
    pub fn entity_cache_capacity(&self) -> u64 {
        self.inner.entities.capacity()
    }

    /// What the in-memory entity cache weighs now, and its budget.
    pub fn entity_cache_fill(&self) -> (u64, u64) {
        (self.inner.entities.weight(), self.inner.entities.budget())
    }

    /// Empties the in-memory caches of entities, referrers and orders, as
    /// if the store had just been opened (sled's own cache stays): for
    /// measuring reads that start cold.
    pub fn forget_caches(&self) {
        let _writer = self.lock_writer();
        let applied = self.inner.applied.load(Ordering::Acquire);
        self.inner.entities.clear();
        self.inner.referrers.reset(applied);
        self.inner.orders.reset(applied);
    }

    /// After writes were taken out of sled: the newest applied transaction
    /// is `basis` again, with `schema`, and the derived caches, which may
    /// hold what was taken out, start over.
    fn rewind(&self, writer: &mut Writer, basis: EntityId, schema: Arc<Schema>) {
        self.inner.entities.clear();
        self.inner.referrers.reset(basis);
        self.inner.orders.reset(basis);
        self.inner.applied.store(basis, Ordering::Release);
        writer.schema = schema;
    }

    /// The store's refusal of every write after a failed flush.
    fn refuse_if_poisoned(&self) -> Result<(), TransactError> {
        match &self.lock_flush().failed {
            Some(why) => Err(TransactError::Poisoned(why.clone())),
            None => Ok(()),
        }
    }

    fn lock_writer(&self) -> std::sync::MutexGuard<'_, Writer> {
        // A panic while the writer was held happened before anything was
        // written (see `apply_in_writer`) or inside sled: either way the
        // writer's own fields were not half-updated.
        self.inner
            .writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn lock_flush(&self) -> std::sync::MutexGuard<'_, FlushState> {
        self.inner
            .flush
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn stats(&self) -> StoreStats {
        StoreStats {
            transactions: self.inner.transactions.load(Ordering::Relaxed),
            flushes: self.inner.flushes.load(Ordering::Relaxed),
            synced: self.inner.synced.load(Ordering::Relaxed),
            reads: self.inner.reads.load(Ordering::Relaxed),
        }
    }

    /// Blocks until transaction `t` is durable, flushing if nobody is.
    pub fn wait_durable(&self, t: EntityId) -> Result<(), TransactError> {
        self.flush_until(|state| state.durable >= t)
    }

    /// Blocks until everything written before the call is durable: the
    /// datoms, and the keyspaces beside them (`Store::keyspace`). Always
    /// waits for a flush that starts after the call, through the same
    /// group flush as transactions, so a poisoned store refuses.
    pub fn sync(&self) -> Result<(), TransactError> {
        let needed = self.lock_flush().started + 1;
        self.flush_until(|state| state.finished >= needed)
    }

    /// Flushes (or waits for the running flush) until `done` holds.
    fn flush_until(&self, done: impl Fn(&FlushState) -> bool) -> Result<(), TransactError> {
        let inner = &self.inner;
        let mut state = self.lock_flush();
        loop {
            if done(&state) {
                return Ok(());
            }
            if let Some(why) = &state.failed {
                return Err(TransactError::Poisoned(why.clone()));
            }
            if state.running {
                state = inner
                    .flushed
                    .wait(state)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                continue;
            }
            state.running = true;
            state.started += 1;
            let this_flush = state.started;
            // Everything applied before this read is in the flush below.
            let target = inner.applied.load(Ordering::Acquire);
            drop(state);
            // If the flush panics, the guard records a failure and wakes
            // the writers waiting on it, rather than leaving them waiting
            // for a flush that will never finish.
            let guard = FlushGuard { store: self };
            let outcome = self.flush_sled();
            std::mem::forget(guard);
            inner.flushes.fetch_add(1, Ordering::Relaxed);
            state = self.lock_flush();
            state.running = false;
            match outcome {
                Ok(()) => {
                    // Only a flush that succeeded covers the writes before it.
                    state.finished = state.finished.max(this_flush);
                    state.durable = state.durable.max(target);
                    self.publish(&mut state);
                }
                Err(e) => {
                    state.failed = Some(e.to_string());
                    drop(state);
                    self.undo_unflushed();
                    state = self.lock_flush();
                }
            }
            inner.flushed.notify_all();
        }
    }

    /// Makes the durable basis, and the schema as of it, what readers get.
    fn publish(&self, state: &mut FlushState) {
        let durable = state.durable;
        let installed = state
            .schemas
            .iter()
            .take_while(|(tx, _)| *tx <= durable)
            .count();
        let schema = state.schemas.drain(..installed).next_back().map(|(_, s)| s);
        let undone = state
            .undo
            .iter()
            .take_while(|undo| undo.tx <= durable)
            .count();
        state.undo.drain(..undone);
        let mut published = self
            .inner
            .published
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        published.basis = durable;
        if let Some(schema) = schema {
            published.schema = schema;
        }
        drop(published);
        self.inner.orders.publish(durable);
    }

    /// One sled flush, or the injected fault.
    fn flush_sled(&self) -> Result<(), TransactError> {
        #[cfg(feature = "testing")]
        match self.inner.next_flush_fault.swap(0, Ordering::AcqRel) {
            1 => {
                let injected = std::io::Error::other("injected flush failure");
                return Err(StorageError::Sled(sled::Error::Io(injected)).into());
            }
            2 => {
                // Long enough for other writers to be waiting on this flush.
                std::thread::sleep(std::time::Duration::from_millis(200));
                panic!("injected flush panic");
            }
            3 => std::thread::sleep(std::time::Duration::from_secs(1)),
            _ => {}
        }
        self.inner.sled.flush()?;
        if let Some(files) = &self.inner.files {
            files
                .sync()
                .map_err(|e| StorageError::Sled(sled::Error::Io(e)))?;
            self.inner.synced.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Makes the next flush fail, for tests of what the store does after
    /// one. Only with the `testing` feature.
    #[cfg(feature = "testing")]
    pub fn inject_flush_fault(&self, fault: FlushFault) {
        let code = match fault {
            FlushFault::Error => 1,
            FlushFault::Panic => 2,
            FlushFault::Slow => 3,
        };
        self.inner.next_flush_fault.store(code, Ordering::Release);
    }

    /// Every key and value of every sled tree, in order: what tests compare
    /// to show that a refused write wrote nothing, derived keys included.
    #[doc(hidden)]
    pub fn raw_contents(&self) -> Result<Vec<RawEntry>, StorageError> {
        let mut all = Vec::new();
        for name in self.inner.sled.tree_names() {
            let tree = self.inner.sled.open_tree(&name)?;
            for item in tree.iter() {
                let (key, value) = item?;
                all.push((name.to_vec(), key.to_vec(), value.to_vec()));
            }
        }
        Ok(all)
    }

    /// Flushes everything to disk (for shutdown; every acknowledged write
    /// already is). A poisoned store refuses: what it holds beyond the last
    /// durable basis was never acknowledged and must not be written.
    pub fn flush(&self) -> Result<(), TransactError> {
        self.refuse_if_poisoned()?;
        self.inner.sled.flush()?;
        Ok(())
    }

    /// Marks the store as being imported into, durably, before the first
    /// imported transaction: a store found with the mark when opened holds
    /// part of an import (the process died, or the disk failed) and is
    /// refused rather than served half-filled.
    fn begin_import(&self) -> Result<(), StorageError> {
        self.inner.sled.insert(META_IMPORTING, &[] as &[u8])?;
        self.inner.sled.flush()?;
        Ok(())
    }

    /// Removes the mark once every imported transaction is durable.
    fn end_import(&self) -> Result<(), StorageError> {
        self.inner.sled.remove(META_IMPORTING)?;
        self.inner.sled.flush()?;
        Ok(())
    }

    /// Puts a store an import has started on back to what a new store is:
    /// every key removed, genesis written again. Only for a store that was
    /// empty when the import began, which `import` requires.
    fn reset_to_genesis(&self) -> Result<(), TransactError> {
        let mut writer = self.lock_writer();
        self.refuse_if_poisoned()?;
        self.inner.sled.clear()?;
        write_genesis(&self.inner.sled)?;
        let schema = Arc::new(bootstrap_schema());
        writer.next_id = GENESIS_TX + 1;
        writer.last_instant = 0;
        let mut state = self.lock_flush();
        state.durable = GENESIS_TX;
        state.schemas.clear();
        state.undo.clear();
        drop(state);
        *self
            .inner
            .published
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Published {
            basis: GENESIS_TX,
            schema: schema.clone(),
        };
        self.rewind(&mut writer, GENESIS_TX, schema);
        Ok(())
    }

    /// Applies one transaction from an import as it is, keeping its ids
    /// and tx, once it is checked against the store as it stands: no unique
    /// value held twice, no second value of a cardinality-one attribute.
    /// Not durable until `wait_durable`: an import flushes once per group.
    fn apply_imported(
        &self,
        tx_datoms: &[Datom],
        next_id: EntityId,
        schema: &Arc<Schema>,
    ) -> Result<(), TransactError> {
        let Some(last) = tx_datoms.last() else {
            return Ok(());
        };
        let tx = last.tx;
        let mut writer = self.lock_writer();
        self.refuse_if_poisoned()?;
        let instant = tx_datoms
            .iter()
            .find(|d| d.a == schema::DB_TX_INSTANT && d.e == tx && d.added)
            .and_then(|d| d.v.as_instant())
            .unwrap_or(writer.last_instant);
        let db = self.writer_db(&writer);
        tx::check_unique(&db, tx_datoms)?;
        // Every id the store holds is below the writer's next id.
        tx::check_cardinality(&db, schema, tx_datoms, writer.next_id)?;
        let written = Written {
            datoms: tx_datoms,
            tx,
            next_id: next_id.max(writer.next_id),
            instant,
        };
        self.write_batch(&writer, &written, schema)?;
        let changed = !Arc::ptr_eq(schema, &writer.schema);
        self.after_apply(&mut writer, &written, changed.then(|| schema.clone()));
        Ok(())
    }
}

/// One transaction as it is written: its datoms, and the writer's
/// bookkeeping after it.
struct Written<'a> {
    datoms: &'a [Datom],
    tx: EntityId,
    next_id: EntityId,
    instant: i64,
}

/// One stored key as `raw_contents` lists it: the tree's name, the key, the
/// value.
#[doc(hidden)]
pub type RawEntry = (Vec<u8>, Vec<u8>, Vec<u8>);

/// What an injected flush fault does (`Store::inject_flush_fault`).
#[cfg(feature = "testing")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushFault {
    /// The flush returns an I/O error.
    Error,
    /// The flush panics, after a moment.
    Panic,
    /// The flush takes a second longer, then succeeds: a window in which a
    /// transaction is applied but not yet published.
    Slow,
}

/// Records a flush that panicked: see `wait_durable`.
struct FlushGuard<'a> {
    store: &'a Store,
}

impl Drop for FlushGuard<'_> {
    fn drop(&mut self) {
        let mut state = self.store.lock_flush();
        state.running = false;
        state.failed = Some("a flush panicked".into());
        drop(state);
        self.store.undo_unflushed();
        self.store.inner.flushed.notify_all();
    }
}

/// The `(target, attribute)` pairs whose references `datoms` assert or
/// retract, for the referrer cache.
fn references(datoms: &[Datom]) -> impl Iterator<Item = (EntityId, EntityId)> + '_ {
    datoms.iter().filter_map(|d| match d.v {
        Value::Ref(target) => Some((target, d.a)),
        _ => None,
    })
}

/// The attributes `after` keeps in AVET that `before` did not: those a
/// schema change has just indexed.
fn newly_in_avet<'a>(before: &Schema, after: &'a Schema) -> Vec<&'a Arc<Attribute>> {
    if std::ptr::eq(before, after) {
        return Vec::new();
    }
    after
        .attributes()
        .into_iter()
        .filter(|a| a.in_avet() && !before.attribute(a.id).is_some_and(|old| old.in_avet()))
        .collect()
}

/// A datom's per-datom key in AVET, if it belongs there: what
/// `postings::updates` files in the chunk of its attribute and value.
fn avet_key(attribute: &Attribute, datom: &Datom) -> Option<Vec<u8>> {
    attribute.in_avet().then(|| datom_key(Index::Avet, datom))
}

/// Opens a directory store, waiting a little for its file lock: a store
/// dropped a moment ago (by this process or one that just exited) can hold
/// it while sled's background threads wind down. A store still in use after
/// that is a clear error.
fn open_locked(config: &sled::Config, path: &Path) -> Result<sled::Db, OpenError> {
    match open_waiting(config, path)? {
        // sled keeps its segment size in the directory and refuses
        // another: a sled database of another layout, which is what stores
        // of format versions before 5 are. Opened with sled's default size
        // only to read their format version (a sled database of yet
        // another size is no forkful store).
        Err(sled::Error::Unsupported(why)) if why.contains("io buffer size") => {
            let found = match open_waiting(&sled::Config::new().path(path), path)? {
                Ok(other) => other.get(META_FORMAT)?,
                Err(_) => None,
            };
            Err(format_mismatch(path.display().to_string(), found))
        }
        other => Ok(other?),
    }
}

/// Opens `config`'s directory, waiting up to two seconds for its lock;
/// sled's answer, or `Locked`.
fn open_waiting(config: &sled::Config, path: &Path) -> Result<sled::Result<sled::Db>, OpenError> {
    let mut waited = std::time::Duration::ZERO;
    let step = std::time::Duration::from_millis(20);
    loop {
        match config.open() {
            Err(sled::Error::Io(e)) if e.to_string().contains("could not acquire lock") => {
                if waited >= std::time::Duration::from_secs(2) {
                    return Err(OpenError::Locked(path.display().to_string()));
                }
                std::thread::sleep(step);
                waited += step;
            }
            other => return Ok(other),
        }
    }
}

/// The error for a directory whose format key is `found`, not this build's.
fn format_mismatch(path: String, found: Option<sled::IVec>) -> OpenError {
    let found = match found {
        None => "none (not a forkful store)".into(),
        Some(found) => match <[u8; 4]>::try_from(found.as_ref()) {
            Ok(version) => u32::from_be_bytes(version).to_string(),
            Err(_) => format!("{:02x?}", found.as_ref()),
        },
    };
    OpenError::FormatVersion {
        path,
        found,
        expected: FORMAT_VERSION,
    }
}

/// A new store: the format key, then the genesis transaction, atomically.
fn write_genesis(sled: &sled::Db) -> Result<(), StorageError> {
    let datoms = schema::bootstrap_datoms();
    let schema = bootstrap_schema();
    let mut batch = sled::Batch::default();
    let avet = datoms.iter().filter_map(|datom| {
        let attribute = schema.attribute(datom.a).expect("bootstrap attribute");
        avet_key(attribute, datom)
    });
    for chunk in postings::updates(sled, avet)? {
        batch.insert(chunk.key, chunk.records);
    }
    let is_ref = |d: &Datom| schema.attribute(d.a).is_some_and(|a| a.is_ref());
    for (key, records) in grouped::entries(&datoms, is_ref, EntityId::MAX) {
        batch.insert(key, records);
    }
    let entries = current::updated_entries(&datoms, GENESIS_TX, |_| Ok(None))?;
    for block in current::blocks::Blocks::new(sled, 0).writes(entries)? {
        batch.insert(&block.key[..], block.value);
    }
    batch.insert(META_FORMAT, &FORMAT_VERSION.to_be_bytes());
    batch.insert(META_BASIS, &GENESIS_TX.to_be_bytes());
    batch.insert(META_NEXT_ID, &(GENESIS_TX + 1).to_be_bytes());
    batch.insert(META_LAST_INSTANT, &0u64.to_be_bytes());
    sled.apply_batch(batch)?;
    sled.flush()?;
    Ok(())
}

fn read_meta_u64(sled: &sled::Db, key: &[u8]) -> Result<u64, StorageError> {
    debug_assert_eq!(key[0], META_PREFIX);
    let bytes = sled.get(key)?.ok_or_else(|| {
        StorageError::Corrupt(format!(
            "missing meta key {:?}",
            String::from_utf8_lossy(&key[1..])
        ))
    })?;
    let bytes: [u8; 8] = bytes
        .as_ref()
        .try_into()
        .map_err(|_| StorageError::Corrupt("meta value is not eight bytes".into()))?;
    Ok(u64::from_be_bytes(bytes))
}

/// The schema at `db`'s basis, from the current datoms of schema attributes.
fn load_schema(db: &Db) -> Result<Schema, OpenError> {
    let mut datoms = Vec::new();
    for a in schema::DB_IDENT..=schema::DB_DOC {
        for datom in db.datoms(Index::Aevt, &Components::any().a(a)) {
            datoms.push(datom?);
        }
    }
    Ok(Schema::from_datoms(&datoms)?)
}

/// The schema of a new store: the bootstrap attributes, which this build
/// defines, so they are always a valid schema.
fn bootstrap_schema() -> Schema {
    Schema::from_datoms(&schema::bootstrap_datoms()).expect("the bootstrap schema is valid")
}

trait DerefTree {
    fn deref_tree(&self) -> sled::Tree;
}

impl DerefTree for sled::Db {
    /// The default tree, which holds every index.
    fn deref_tree(&self) -> sled::Tree {
        std::ops::Deref::deref(self).clone()
    }
}
