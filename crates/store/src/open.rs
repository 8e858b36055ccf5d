//! Opening a store: its configuration, the directory's lock and format
//! check, the caches, and the durability it starts with (`durability`).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Condvar, Mutex, RwLock};

use super::current;
use super::db::Db;
use super::durability::{Detached, Durability, OwnFlush};
use super::encoding::{Components, Index};
use super::error::{OpenError, StorageError};
use super::fsync;
use super::group_commit::FlushState;
use super::handle::{Inner, Published, Store};
use super::log::{self, Log};
use super::meta::{
    read_meta_u64, write_genesis, DerefTree, FORMAT_VERSION, META_AVET_UNCLEARED, META_BASIS,
    META_FORMAT, META_IMPORTING, META_LAST_INSTANT, META_LOG_ID, META_LOG_SUM, META_NEXT_ID,
};
use super::ordered::OrderCache;
use super::postings;
use super::referrers::ReferrerCache;
use super::schema::{self, Schema};
use super::value::EntityId;
use super::writer::Writer;

/// sled's segment size: the unit of its log on disk, of its cleaning, and
/// of its write buffers in memory. sled's default, 512 KiB, makes every
/// page image over 128 KiB a file of its own and cleans in small steps;
/// with 8 MiB, seeding 10,000 full recipes left 240 MB on disk instead of
/// 294 MB in the same time (docs/journal/10-bulk-loads.md), and the demo server
/// still peaks at 45 MiB. sled refuses more than 16 MiB.
pub(crate) const SEGMENT_BYTES: usize = 8 << 20;

/// How to open a store.
#[derive(Clone)]
pub struct StoreConfig {
    /// The directory, or `None` for a temporary store removed on drop.
    pub path: Option<PathBuf>,
    /// sled's page cache, in bytes.
    pub cache_bytes: u64,
    /// How many referrer lists and attribute orders to keep in memory.
    pub cached_entities: usize,
    /// The most bytes of decoded entities to keep in memory.
    pub entity_cache_bytes: u64,
    /// The log the store follows, if it is a node of one
    /// (`StoreConfig::following`): the one place its mode is chosen.
    pub log: Option<Arc<dyn Log>>,
    /// A store on disk that applied at least this many of its log's
    /// entries while it was opened is closed and opened again
    /// (`REOPEN_AFTER_APPLIED`).
    pub reopen_after_applied: usize,
}

/// sled 0.34 writes the snapshot its next opening starts from only when it
/// opens a store: an opening reads every message written since the store's
/// last opening. A node built from the log of 1,000,000 recipes (270 s)
/// took 9.3 s to start the first time after, reading back the 12 GB it
/// had written, and 1.6 s the next (EPYC 12-07d,
/// docs/journal/55-million.md). A store that has just applied this many
/// entries is opened again, so that the reading is part of the build and
/// the node's next start begins from a snapshot: what it costs then is
/// what it saves the next start, less one opening's fixed cost (the page
/// table read, 1 s at 1,000,000 recipes), small against the reading of
/// this many entries.
pub(crate) const REOPEN_AFTER_APPLIED: usize = 50_000;

impl std::fmt::Debug for StoreConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreConfig")
            .field("path", &self.path)
            .field("cache_bytes", &self.cache_bytes)
            .field("cached_entities", &self.cached_entities)
            .field("entity_cache_bytes", &self.entity_cache_bytes)
            .field("log", &self.log.as_ref().map(|log| log.identity()))
            .field("reopen_after_applied", &self.reopen_after_applied)
            .finish()
    }
}

/// sled's page cache for a store on disk unless told otherwise: 96 MiB.
/// A crawl of 100,000 full recipes (every page read once) went as fast
/// with it as with 256, and its server peaked 194 MiB lower, with
/// `--memory-mb` 128 (docs/journal/33-close-to-the-limit.md, "Budgets"): sled holds more than its
/// cache says, and what it holds is most of what a crawl's server holds.
pub(crate) const DURABLE_CACHE_BYTES: u64 = 96 << 20;

/// The entity cache's budget unless told otherwise.
pub const DEFAULT_ENTITY_CACHE_BYTES: u64 = 128 << 20;

impl StoreConfig {
    /// A store in `path`, with a page cache of `DURABLE_CACHE_BYTES`.
    pub fn durable(path: impl Into<PathBuf>) -> StoreConfig {
        StoreConfig {
            path: Some(path.into()),
            cache_bytes: DURABLE_CACHE_BYTES,
            cached_entities: 200_000,
            reopen_after_applied: REOPEN_AFTER_APPLIED,
            entity_cache_bytes: DEFAULT_ENTITY_CACHE_BYTES,
            log: None,
        }
    }

    pub fn temporary() -> StoreConfig {
        StoreConfig {
            path: None,
            cache_bytes: 64 * 1024 * 1024,
            cached_entities: 200_000,
            reopen_after_applied: REOPEN_AFTER_APPLIED,
            entity_cache_bytes: DEFAULT_ENTITY_CACHE_BYTES,
            log: None,
        }
    }

    /// This configuration, for a node of `log`: the store opens as the
    /// log's follower, caught up with it, and writes only through it. The
    /// opening refuses (`OpenError::FollowingLog`), with the store left as
    /// it was, when the store followed another log, holds transactions no
    /// log has, or differs from the log at its newest transaction. A store
    /// at genesis whose catching up fails (the log out of reach half way)
    /// is left following the log with what it applied, and catches up the
    /// rest at its next opening.
    pub fn following(mut self, log: Arc<dyn Log>) -> StoreConfig {
        self.log = Some(log);
        self
    }
}

/// The directory in a store's where indexes derived from it (not sled's,
/// such as a search index) keep their files: deleted with the store, and
/// built again from it when missing.
pub(crate) const DERIVED: &str = "derived";

impl Store {
    /// Where the derived index `name` of this store keeps its files; `None`
    /// for a temporary store.
    pub fn derived_dir(&self, name: &str) -> Option<PathBuf> {
        self.path().map(|path| path.join(DERIVED).join(name))
    }

    /// Opens (creating if needed) a durable store in `dir`.
    pub fn open(dir: impl AsRef<Path>) -> Result<Store, OpenError> {
        Store::open_with(StoreConfig::durable(dir.as_ref()))
    }

    /// What in `dir` is not a store's file, if anything: the first entry
    /// that sled would not have written there (`conf`, `db`, `blobs/`,
    /// `snap.*`) nor a derived index (`derived/`). `None` for a store's directory, an empty one, or one that
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
                Some(DERIVED) => kind.is_dir(),
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

    /// Opens the store `config` describes, attached to its log if it has
    /// one (caught up with it, and opened again if that was a build:
    /// `REOPEN_AFTER_APPLIED`).
    pub fn open_with(config: StoreConfig) -> Result<Store, OpenError> {
        let store = Store::open_unattached(&config)?;
        let Some(log) = &config.log else {
            return Ok(store);
        };
        let applied = store
            .attach_log(log.clone())
            .map_err(OpenError::FollowingLog)?;
        if applied < config.reopen_after_applied || config.path.is_none() {
            return Ok(store);
        }
        // Closed before it is opened again: nothing else holds it yet, and
        // sled lets go of its files once its last handle is dropped
        // (`open_waiting` waits for them).
        drop(store);
        let store = Store::open_unattached(&config)?;
        store
            .attach_log(log.clone())
            .map_err(OpenError::FollowingLog)?;
        Ok(store)
    }

    /// `open_with`, but for attaching its log.
    fn open_unattached(config: &StoreConfig) -> Result<Store, OpenError> {
        let sled = open_sled(config)?;
        let shown_path = config
            .path
            .as_ref()
            .map_or("(temporary)".to_owned(), |p| p.display().to_string());
        check_format(&sled, shown_path)?;
        let basis = read_meta_u64(&sled, META_BASIS)?;
        clear_uncleared_avet(&sled, basis)?;
        let files = match &config.path {
            Some(path) => Some(
                fsync::DurableFiles::open(path)
                    .map_err(|e| StorageError::Sled(sled::Error::Io(e)))?,
            ),
            None => None,
        };
        let next_id = read_meta_u64(&sled, META_NEXT_ID)?;
        let last_instant = read_meta_u64(&sled, META_LAST_INSTANT)? as i64;
        // The one choice of mode an opening makes: a store that followed a
        // log writes nothing unless it is opened on it again (then the log
        // is attached below, as the opening's last step).
        let opened: Box<dyn Durability> = if sled.contains_key(META_LOG_ID)? {
            Box::new(Detached)
        } else {
            Box::new(OwnFlush)
        };
        let log_sum = read_log_sum(&sled)?;
        let caches = Caches::new(config, basis);
        let schema = Arc::new(load_schema(&caches.db(&sled, basis))?);
        let writer = Writer {
            next_id,
            last_instant,
            schema,
            log_sum,
        };
        Ok(Store::from_parts(Parts {
            sled,
            files,
            path: config.path.clone(),
            basis,
            writer,
            opened,
            caches,
        }))
    }

    /// The handle on what `open_with` found: applied and durable up to its
    /// basis, no flush under way, no log attached.
    fn from_parts(parts: Parts) -> Store {
        let Parts {
            sled,
            files,
            path,
            basis,
            writer,
            opened,
            caches,
        } = parts;
        let schema = writer.schema.clone();
        Store {
            inner: Arc::new(Inner {
                sled,
                files,
                path,
                writer: Mutex::new(writer),
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
                    unlogged: Vec::new(),
                    appending: false,
                    lost: Default::default(),
                    take_backs: 0,
                }),
                #[cfg(feature = "testing")]
                next_flush_fault: std::sync::atomic::AtomicU8::new(0),
                flushed: Condvar::new(),
                reads: caches.reads,
                entities: caches.entities,
                referrers: caches.referrers,
                orders: caches.orders,
                transactions: AtomicU64::new(0),
                flushes: AtomicU64::new(0),
                synced: AtomicU64::new(0),
                opened,
                attached: std::sync::OnceLock::new(),
                log_retries: AtomicU64::new(0),
                follow_health: Default::default(),
            }),
        }
    }
}

/// What opening a store read and made, for its handle.
struct Parts {
    sled: sled::Db,
    files: Option<fsync::DurableFiles>,
    path: Option<PathBuf>,
    basis: EntityId,
    writer: Writer,
    /// How the store makes its writes durable as it was opened.
    opened: Box<dyn Durability>,
    caches: Caches,
}

/// The caches and counters every database value of a store shares.
struct Caches {
    reads: Arc<AtomicU64>,
    entities: Arc<current::EntityCache>,
    referrers: Arc<ReferrerCache>,
    orders: Arc<OrderCache>,
}

impl Caches {
    fn new(config: &StoreConfig, basis: EntityId) -> Caches {
        Caches {
            reads: Arc::new(AtomicU64::new(0)),
            entities: Arc::new(current::EntityCache::new(config.entity_cache_bytes)),
            referrers: Arc::new(ReferrerCache::new(config.cached_entities, basis)),
            orders: Arc::new(OrderCache::new(config.cached_entities, basis)),
        }
    }

    /// The database at `basis` with no schema yet: what the schema is
    /// loaded from.
    fn db(&self, sled: &sled::Db, basis: EntityId) -> Db {
        let empty = Arc::new(Schema::default());
        Db::new(
            sled.deref_tree(),
            basis,
            empty,
            self.reads.clone(),
            self.entities.clone(),
            self.referrers.clone(),
            self.orders.clone(),
        )
    }
}

/// The directory's sled, or a temporary one.
fn open_sled(config: &StoreConfig) -> Result<sled::Db, OpenError> {
    // sled's background flusher stays on: it is also what cleans sled's
    // segments, without which a bulk load's memory more than doubled
    // (docs/journal/10-bulk-loads.md). It may write out a batch not yet
    // acknowledged, so a failed flush undoes those (`undo_unflushed`).
    let sled_config = sled::Config::new()
        .cache_capacity(config.cache_bytes)
        .segment_size(SEGMENT_BYTES)
        .flush_every_ms(Some(500));
    Ok(match &config.path {
        Some(path) => open_locked(&sled_config.path(path), path)?,
        None => sled_config.temporary(true).open()?,
    })
}

/// A new store gets its genesis; an existing one must be of this build's
/// format, and not left half-imported.
fn check_format(sled: &sled::Db, shown_path: String) -> Result<(), OpenError> {
    match sled.get(META_FORMAT)? {
        None if sled.is_empty() => write_genesis(sled)?,
        Some(found) if found.as_ref() == FORMAT_VERSION.to_be_bytes() => {}
        found => return Err(format_mismatch(shown_path, found)),
    }
    if sled.contains_key(META_IMPORTING)? {
        return Err(OpenError::UnfinishedImport(shown_path));
    }
    Ok(())
}

/// Clears the AVET chunks a failed flush's undo left, if it left any.
fn clear_uncleared_avet(sled: &sled::Db, basis: EntityId) -> Result<(), OpenError> {
    if sled.contains_key(META_AVET_UNCLEARED)? {
        // Before anything reads or writes: the next transaction would
        // take the undone one's ids and inherit its records.
        let changed = postings::clear_all(sled, basis)?;
        sled.remove(META_AVET_UNCLEARED)?;
        sled.flush()?;
        tracing::warn!(
            changed,
            "cleared AVET chunks a failed flush's undo had left"
        );
    }
    Ok(())
}

/// The chained sum of the last log entry applied, or the log's start.
pub(super) fn read_log_sum(sled: &sled::Db) -> Result<[u8; 32], StorageError> {
    Ok(match sled.get(META_LOG_SUM).map_err(StorageError::Sled)? {
        None => log::GENESIS_SUM,
        Some(sum) => sum.as_ref().try_into().map_err(|_| {
            StorageError::Corrupt("the last log entry's sum is not 32 bytes".into())
        })?,
    })
}

/// Opens a directory store, waiting a little for its file lock: a store
/// dropped a moment ago (by this process or one that just exited) can hold
/// it while sled's background threads wind down. A store still in use after
/// that is a clear error.
pub(super) fn open_locked(config: &sled::Config, path: &Path) -> Result<sled::Db, OpenError> {
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
pub(super) fn open_waiting(
    config: &sled::Config,
    path: &Path,
) -> Result<sled::Result<sled::Db>, OpenError> {
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
pub(super) fn format_mismatch(path: String, found: Option<sled::IVec>) -> OpenError {
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

/// The schema at `db`'s basis, from the current datoms of schema attributes.
pub(super) fn load_schema(db: &Db) -> Result<Schema, OpenError> {
    let mut datoms = Vec::new();
    for a in schema::DB_IDENT..=schema::DB_DOC {
        for datom in db.datoms(Index::Aevt, &Components::any().a(a)) {
            datoms.push(datom?);
        }
    }
    Ok(Schema::from_datoms(&datoms)?)
}
