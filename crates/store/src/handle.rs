//! The handle on an open store: what every part of it shares, database
//! values for readers, the in-memory caches' controls, and counters.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};

use super::current;
use super::db::Db;
use super::error::TransactError;
use super::fsync;
use super::group_commit::FlushState;
use super::meta::DerefTree;
use super::ordered::OrderCache;
use super::referrers::ReferrerCache;
use super::schema::{Schema, GENESIS_TX};
use super::value::EntityId;
use super::writer::Writer;

#[derive(Clone)]
pub struct Store {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub(super) sled: sled::Db,
    pub(super) path: Option<PathBuf>,
    /// sled's files, synced after each flush so that what is acknowledged
    /// survives power loss (`fsync`); none for a temporary store.
    pub(super) files: Option<fsync::DurableFiles>,
    pub(super) writer: Mutex<Writer>,
    /// The newest transaction applied to sled (durable or not yet).
    pub(super) applied: AtomicU64,
    /// The newest durable transaction and the schema as of it: what
    /// readers get, read together so a reader never sees an attribute
    /// before the transaction that installed it is durable.
    pub(super) published: RwLock<Published>,
    pub(super) flush: Mutex<FlushState>,
    /// Fault injection for tests: what the next flush does instead of
    /// flushing (`FlushFault`), as a `u8`; 0 is nothing.
    #[cfg(feature = "testing")]
    pub(super) next_flush_fault: std::sync::atomic::AtomicU8,
    pub(super) flushed: Condvar,
    pub(super) reads: Arc<AtomicU64>,
    pub(super) entities: Arc<current::EntityCache>,
    pub(super) referrers: Arc<ReferrerCache>,
    pub(super) orders: Arc<OrderCache>,
    /// Transactions acknowledged and flushes done since open: their ratio is
    /// how well group commit is working.
    pub(super) transactions: AtomicU64,
    pub(super) flushes: AtomicU64,
    /// See `StoreStats::synced`.
    pub(super) synced: AtomicU64,
    /// How the store makes its writes durable as it was opened: its own
    /// flush, or none at all for one that followed a log (`durability`).
    pub(super) opened: Box<dyn super::durability::Durability>,
    /// Through its log, when opened on one (`StoreConfig::following`, whose
    /// last step attaches it) or copied into one (`push_to_log`): then
    /// this, not `opened`, is the store's `durability()`.
    pub(super) attached: std::sync::OnceLock<super::durability::ThroughLog>,
    /// See `StoreStats::log_retries`.
    pub(super) log_retries: AtomicU64,
    /// How following the log goes (`Store::follow_report`).
    pub(super) follow_health: super::follow_health::FollowHealth,
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
    /// Transactions decided again because another node's reached the log
    /// first (`LOG_RETRIES`), and those refused after the last try.
    pub log_retries: u64,
}

/// The basis readers get, with its schema.
pub(super) struct Published {
    pub(super) basis: EntityId,
    pub(super) schema: Arc<Schema>,
}

impl Store {
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

    /// The schema readers are shown, as of the published basis.
    pub(super) fn published_schema(&self) -> Arc<Schema> {
        self.inner
            .published
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .schema
            .clone()
    }

    /// Whether the store follows a log (attached now, or when it was last
    /// open): then it writes only through that log. The question of the
    /// CLI's wiring, which opens a store with its log or refuses to serve
    /// it without; the store's own parts ask its `Durability` instead.
    pub fn follows_log(&self) -> bool {
        self.durability().follows_a_log()
    }

    /// Whether other stores write to this store's history (the nodes of a
    /// log), so that a write a reader saw elsewhere may not be applied here
    /// yet: what read-your-writes waits for.
    pub fn others_write(&self) -> bool {
        self.durability().others_write()
    }

    /// Whether no transaction has been committed since the store was made.
    pub fn is_empty(&self) -> bool {
        self.db().basis() == GENESIS_TX
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

    /// Empties the in-memory caches of entities, referrer lists and
    /// orders, as if the store had just been opened (sled's own cache
    /// stays, and so do the referrer cache's targets, read once per
    /// server: `referrers::Targets`): for measuring reads that start cold.
    pub fn forget_caches(&self) {
        let _writer = self.lock_writer();
        let applied = self.inner.applied.load(Ordering::Acquire);
        self.inner.entities.clear();
        self.inner.referrers.forget_lists();
        self.inner.orders.reset(applied);
    }

    /// The store's refusal of every write after a failed flush.
    /// Why the store refuses every write, if a flush failed.
    pub fn poisoned(&self) -> Option<String> {
        self.lock_flush().failed.clone()
    }

    pub(super) fn refuse_if_poisoned(&self) -> Result<(), TransactError> {
        match &self.lock_flush().failed {
            Some(why) => Err(TransactError::Poisoned(why.clone())),
            None => Ok(()),
        }
    }

    pub(super) fn lock_writer(&self) -> std::sync::MutexGuard<'_, Writer> {
        // A panic while the writer was held happened before anything was
        // written (see `apply_in_writer`) or inside sled: either way the
        // writer's own fields were not half-updated.
        self.inner
            .writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits, the flush state let go meanwhile, until a flush or an append
    /// to the log ends (or the state changes otherwise): the callers check
    /// again what they wait for.
    pub(super) fn wait_flushed<'a>(
        &self,
        state: std::sync::MutexGuard<'a, FlushState>,
    ) -> std::sync::MutexGuard<'a, FlushState> {
        self.inner
            .flushed
            .wait(state)
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(super) fn lock_flush(&self) -> std::sync::MutexGuard<'_, FlushState> {
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
            log_retries: self.inner.log_retries.load(Ordering::Relaxed),
        }
    }

    /// Every key and value of every sled tree, in order: what tests compare
    /// to show that a refused write wrote nothing, derived keys included.
    #[cfg(feature = "testing")]
    pub fn raw_contents(&self) -> Result<Vec<RawEntry>, super::error::StorageError> {
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
}

/// One stored key as `raw_contents` lists it: the tree's name, the key, the
/// value.
#[cfg(feature = "testing")]
pub type RawEntry = (Vec<u8>, Vec<u8>, Vec<u8>);
