//! The fact store: immutable datoms in covering indexes on sled.
//!
//! This module knows nothing of recipes, HTTP or HTML; it could be its own
//! crate. A `Store` is the one writer and the source of database values:
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
//! once. Under load, many transactions ride on one fsync (group commit);
//! alone, a transaction pays for its own. Readers see a transaction only once
//! it is durable, so nothing a reader saw can be lost in a crash.
//!
//! # Layout
//! - `value`: typed values and keywords
//! - `encoding`: order-preserving keys of the five indexes
//! - `schema`: attributes as entities, and their cache
//! - `tx`: transactions and how they become datoms
//! - `current`: each entity's current facts under one key, derived
//! - `referrers`: who refers to an entity, kept in memory while exact
//! - `ordered`: an indexed attribute's current facts in order, in memory
//! - `idhash`: the hasher of the in-memory caches' id-keyed maps
//! - `db`: database values and range reads
//! - `pull`: pull patterns
//! - `transfer`: export to and import from a line-per-datom file
//! - `edn`, `instant`: the text forms of values

mod current;
pub mod db;
pub mod edn;
pub mod encoding;
pub mod error;
mod idhash;
pub mod instant;
mod ordered;
pub mod pull;
pub mod query;
mod referrers;
pub mod schema;
pub mod transfer;
pub mod tx;
pub mod value;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};

pub use db::{Db, Entity};
pub use encoding::{Components, Datom, Index};
pub use error::StoreError;
pub use pull::{PullPattern, Pulled};
pub use schema::{Attribute, Cardinality, Schema, Unique};
pub use tx::{EntityMap, EntityRef, Transaction, TxReport, TxValue};
pub use value::{kw, EntityId, Keyword, Value, ValueType};

use encoding::{datom_key, META_PREFIX};
use ordered::OrderCache;
use referrers::ReferrerCache;
use schema::GENESIS_TX;

/// The on-disk format this build reads and writes. Bump it when keys change.
pub const FORMAT_VERSION: u32 = 2;

const META_FORMAT: &[u8] = b"\x00format";
const META_BASIS: &[u8] = b"\x00basis";
const META_NEXT_ID: &[u8] = b"\x00next-id";
const META_LAST_INSTANT: &[u8] = b"\x00last-instant";

/// How to open a store.
#[derive(Debug, Clone)]
pub struct StoreConfig {
    /// The directory, or `None` for a temporary store removed on drop.
    pub path: Option<PathBuf>,
    /// sled's page cache, in bytes.
    pub cache_bytes: u64,
    /// How many entities' decoded current facts to keep in memory.
    pub cached_entities: usize,
}

impl StoreConfig {
    pub fn durable(path: impl Into<PathBuf>) -> StoreConfig {
        StoreConfig {
            path: Some(path.into()),
            cache_bytes: 256 * 1024 * 1024,
            cached_entities: 200_000,
        }
    }

    pub fn temporary() -> StoreConfig {
        StoreConfig {
            path: None,
            cache_bytes: 64 * 1024 * 1024,
            cached_entities: 200_000,
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
    writer: Mutex<Writer>,
    /// The newest transaction applied to sled (durable or not yet).
    applied: AtomicU64,
    /// The newest durable transaction: the basis readers get.
    published: AtomicU64,
    schema: RwLock<Arc<Schema>>,
    flush: Mutex<FlushState>,
    flushed: Condvar,
    reads: Arc<AtomicU64>,
    entities: Arc<current::EntityCache>,
    referrers: Arc<ReferrerCache>,
    orders: Arc<OrderCache>,
    /// Transactions acknowledged and flushes done since open: their ratio is
    /// how well group commit is working.
    transactions: AtomicU64,
    flushes: AtomicU64,
}

/// Counters since the store was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreStats {
    /// Transactions committed (durable and acknowledged).
    pub transactions: u64,
    /// sled flushes (fsyncs) that made them durable.
    pub flushes: u64,
    /// Index reads (range scans) started by database values.
    pub reads: u64,
}

/// What the writer knows that is not in the indexes.
struct Writer {
    next_id: EntityId,
    last_instant: i64,
}

struct FlushState {
    durable: EntityId,
    running: bool,
    /// Set by a failed flush; no write is acknowledged after it.
    failed: Option<String>,
}

impl Store {
    /// Opens (creating if needed) a durable store in `dir`.
    pub fn open(dir: impl AsRef<Path>) -> Result<Store, StoreError> {
        Store::open_with(StoreConfig::durable(dir.as_ref()))
    }

    /// A store in a temporary file, gone when the last handle drops.
    pub fn temporary() -> Result<Store, StoreError> {
        Store::open_with(StoreConfig::temporary())
    }

    pub fn open_with(config: StoreConfig) -> Result<Store, StoreError> {
        let sled_config = sled::Config::new().cache_capacity(config.cache_bytes);
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
            None => {
                return Err(StoreError::FormatVersion {
                    path: shown_path,
                    found: "none (not a forkful store)".into(),
                    expected: FORMAT_VERSION,
                })
            }
            Some(found) if found.as_ref() != FORMAT_VERSION.to_be_bytes() => {
                return Err(StoreError::FormatVersion {
                    path: shown_path,
                    found: format!("{:02x?}", found.as_ref()),
                    expected: FORMAT_VERSION,
                })
            }
            Some(_) => {}
        }
        let basis = read_meta_u64(&sled, META_BASIS)?;
        let next_id = read_meta_u64(&sled, META_NEXT_ID)?;
        let last_instant = read_meta_u64(&sled, META_LAST_INSTANT)? as i64;
        let reads = Arc::new(AtomicU64::new(0));
        let entities = Arc::new(current::EntityCache::new(config.cached_entities));
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
        let schema = load_schema(&bootstrap_db)?;
        Ok(Store {
            inner: Arc::new(Inner {
                sled,
                path: config.path,
                writer: Mutex::new(Writer {
                    next_id,
                    last_instant,
                }),
                applied: AtomicU64::new(basis),
                published: AtomicU64::new(basis),
                schema: RwLock::new(Arc::new(schema)),
                flush: Mutex::new(FlushState {
                    durable: basis,
                    running: false,
                    failed: None,
                }),
                flushed: Condvar::new(),
                reads,
                entities,
                referrers,
                orders,
                transactions: AtomicU64::new(0),
                flushes: AtomicU64::new(0),
            }),
        })
    }

    /// The directory, for a durable store.
    pub fn path(&self) -> Option<&Path> {
        self.inner.path.as_deref()
    }

    /// The latest durable database value. Never blocks on a writer.
    pub fn db(&self) -> Db {
        let basis = self.inner.published.load(Ordering::Acquire);
        self.db_at(basis)
    }

    fn db_at(&self, basis: EntityId) -> Db {
        let schema = self.inner.schema.read().expect("schema lock").clone();
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
    pub fn transact(&self, tx: &Transaction) -> Result<TxReport, StoreError> {
        let report = {
            let mut writer = self.inner.writer.lock().expect("writer lock");
            if let Some(why) = &self.inner.flush.lock().expect("flush lock").failed {
                return Err(StoreError::Poisoned(why.clone()));
            }
            let db = self.db_at(self.inner.applied.load(Ordering::Acquire));
            let clock = tx::WriterClock {
                next_id: writer.next_id,
                last_instant: writer.last_instant,
                now: instant::now_millis(),
            };
            let prepared = tx::prepare(&db, &clock, tx)?;
            let report = prepared.report;
            let mut batch = sled::Batch::default();
            for datom in &report.datoms {
                let attribute = match &prepared.schema {
                    Some(schema) => schema.attribute(datom.a),
                    None => db.schema().attribute(datom.a),
                }
                .or_else(|| db.schema().attribute(datom.a))
                .ok_or_else(|| {
                    StoreError::Corrupt(format!("datom of unknown attribute {}", datom.a))
                })?
                .clone();
                insert_datom(&mut batch, &attribute, datom);
            }
            self.put_current_entries(&mut batch, &report.datoms, report.basis_after)?;
            batch.insert(META_BASIS, &report.basis_after.to_be_bytes());
            batch.insert(META_NEXT_ID, &prepared.next_id.to_be_bytes());
            batch.insert(META_LAST_INSTANT, &report.tx_instant.to_be_bytes());
            self.inner.sled.apply_batch(batch)?;
            self.inner
                .entities
                .invalidate(report.datoms.iter().map(|d| d.e));
            self.inner
                .referrers
                .commit(report.basis_after, references(&report.datoms));
            self.inner.orders.commit(report.basis_after, &report.datoms);
            writer.next_id = prepared.next_id;
            writer.last_instant = report.tx_instant;
            if let Some(schema) = prepared.schema {
                *self.inner.schema.write().expect("schema lock") = Arc::new(schema);
            }
            self.inner
                .applied
                .store(report.basis_after, Ordering::Release);
            report
        };
        self.wait_durable(report.basis_after)?;
        self.inner.transactions.fetch_add(1, Ordering::Relaxed);
        Ok(report)
    }

    pub fn stats(&self) -> StoreStats {
        StoreStats {
            transactions: self.inner.transactions.load(Ordering::Relaxed),
            flushes: self.inner.flushes.load(Ordering::Relaxed),
            reads: self.inner.reads.load(Ordering::Relaxed),
        }
    }

    /// Blocks until transaction `t` is durable, flushing if nobody is.
    fn wait_durable(&self, t: EntityId) -> Result<(), StoreError> {
        let inner = &self.inner;
        let mut state = inner.flush.lock().expect("flush lock");
        loop {
            if state.durable >= t {
                return Ok(());
            }
            if let Some(why) = &state.failed {
                return Err(StoreError::Poisoned(why.clone()));
            }
            if state.running {
                state = inner.flushed.wait(state).expect("flush lock");
                continue;
            }
            state.running = true;
            // Everything applied before this read is in the flush below.
            let target = inner.applied.load(Ordering::Acquire);
            drop(state);
            let outcome = inner.sled.flush();
            inner.flushes.fetch_add(1, Ordering::Relaxed);
            state = inner.flush.lock().expect("flush lock");
            state.running = false;
            match outcome {
                Ok(_) => {
                    state.durable = state.durable.max(target);
                    inner.published.store(state.durable, Ordering::Release);
                }
                Err(e) => state.failed = Some(e.to_string()),
            }
            inner.flushed.notify_all();
        }
    }

    /// Flushes everything to disk (for shutdown; every acknowledged write
    /// already is).
    pub fn flush(&self) -> Result<(), StoreError> {
        self.inner.sled.flush()?;
        Ok(())
    }

    /// Adds to `batch` the current-entity entries of every entity `datoms`
    /// touch (see `current`), read as the writer sees them.
    fn put_current_entries(
        &self,
        batch: &mut sled::Batch,
        datoms: &[Datom],
        tx: EntityId,
    ) -> Result<(), StoreError> {
        let entries =
            current::updated_entries(datoms, tx, |e| Ok(self.inner.sled.get(current::key(e))?))?;
        for (key, entry) in entries {
            batch.insert(&key[..], entry);
        }
        Ok(())
    }

    /// Applies one checked transaction from an import as it is, keeping its
    /// ids and tx. Not durable until `wait_durable`: an import flushes once.
    fn apply_imported(
        &self,
        tx_datoms: &[Datom],
        next_id: EntityId,
        schema: &Arc<Schema>,
    ) -> Result<(), StoreError> {
        let Some(last) = tx_datoms.last() else {
            return Ok(());
        };
        let tx = last.tx;
        let mut writer = self.inner.writer.lock().expect("writer lock");
        let mut batch = sled::Batch::default();
        let mut instant = writer.last_instant;
        for datom in tx_datoms {
            let attribute = schema.attribute(datom.a).ok_or_else(|| {
                StoreError::Corrupt(format!("datom of unknown attribute {}", datom.a))
            })?;
            if datom.a == schema::DB_TX_INSTANT && datom.e == tx && datom.added {
                instant = datom.v.as_instant().unwrap_or(instant);
            }
            insert_datom(&mut batch, attribute, datom);
        }
        let next_id = next_id.max(writer.next_id);
        self.put_current_entries(&mut batch, tx_datoms, tx)?;
        batch.insert(META_BASIS, &tx.to_be_bytes());
        batch.insert(META_NEXT_ID, &next_id.to_be_bytes());
        batch.insert(META_LAST_INSTANT, &instant.to_be_bytes());
        self.inner.sled.apply_batch(batch)?;
        self.inner
            .entities
            .invalidate(tx_datoms.iter().map(|d| d.e));
        self.inner.referrers.commit(tx, references(tx_datoms));
        self.inner.orders.commit(tx, tx_datoms);
        writer.next_id = next_id;
        writer.last_instant = instant;
        *self.inner.schema.write().expect("schema lock") = schema.clone();
        self.inner.applied.store(tx, Ordering::Release);
        Ok(())
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

/// Puts a datom's key into every index it belongs in.
fn insert_datom(batch: &mut sled::Batch, attribute: &Attribute, datom: &Datom) {
    let mut put = |index| batch.insert(datom_key(index, datom), &[] as &[u8]);
    put(Index::Eavt);
    put(Index::Aevt);
    put(Index::Log);
    if attribute.in_avet() {
        put(Index::Avet);
    }
    if attribute.is_ref() {
        put(Index::Vaet);
    }
}

/// Opens a directory store, waiting a little for its file lock: a store
/// dropped a moment ago (by this process or one that just exited) can hold
/// it while sled's background threads wind down. A store still in use after
/// that is a clear error.
fn open_locked(config: &sled::Config, path: &Path) -> Result<sled::Db, StoreError> {
    let mut waited = std::time::Duration::ZERO;
    let step = std::time::Duration::from_millis(20);
    loop {
        match config.open() {
            Err(sled::Error::Io(e)) if e.to_string().contains("could not acquire lock") => {
                if waited >= std::time::Duration::from_secs(2) {
                    return Err(StoreError::Locked(path.display().to_string()));
                }
                std::thread::sleep(step);
                waited += step;
            }
            other => return Ok(other?),
        }
    }
}

/// A new store: the format key, then the genesis transaction, atomically.
fn write_genesis(sled: &sled::Db) -> Result<(), StoreError> {
    let datoms = schema::bootstrap_datoms();
    let schema = Schema::from_datoms(&datoms)?;
    let mut batch = sled::Batch::default();
    for datom in &datoms {
        let attribute = schema.attribute(datom.a).expect("bootstrap attribute");
        insert_datom(&mut batch, attribute, datom);
    }
    for (key, entry) in current::updated_entries(&datoms, GENESIS_TX, |_| Ok(None))? {
        batch.insert(&key[..], entry);
    }
    batch.insert(META_FORMAT, &FORMAT_VERSION.to_be_bytes());
    batch.insert(META_BASIS, &GENESIS_TX.to_be_bytes());
    batch.insert(META_NEXT_ID, &(GENESIS_TX + 1).to_be_bytes());
    batch.insert(META_LAST_INSTANT, &0u64.to_be_bytes());
    sled.apply_batch(batch)?;
    sled.flush()?;
    Ok(())
}

fn read_meta_u64(sled: &sled::Db, key: &[u8]) -> Result<u64, StoreError> {
    debug_assert_eq!(key[0], META_PREFIX);
    let bytes = sled.get(key)?.ok_or_else(|| {
        StoreError::Corrupt(format!(
            "missing meta key {:?}",
            String::from_utf8_lossy(&key[1..])
        ))
    })?;
    let bytes: [u8; 8] = bytes
        .as_ref()
        .try_into()
        .map_err(|_| StoreError::Corrupt("meta value is not eight bytes".into()))?;
    Ok(u64::from_be_bytes(bytes))
}

/// The schema at `db`'s basis, from the current datoms of schema attributes.
fn load_schema(db: &Db) -> Result<Schema, StoreError> {
    let mut datoms = Vec::new();
    for a in schema::DB_IDENT..=schema::DB_DOC {
        for datom in db.datoms(Index::Aevt, &Components::any().a(a)) {
            datoms.push(datom?);
        }
    }
    Schema::from_datoms(&datoms)
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
