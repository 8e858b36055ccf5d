//! How a decided transaction becomes durable: the one place the store's two
//! modes differ. A store on its own makes a transaction durable by its own
//! flush (`OwnFlush`, group commit); a store that follows a log appends it
//! there first and publishes it once the log holds it (`ThroughLog`); a
//! store that followed a log and was opened without it takes no write at
//! all (`Detached`), or it would hold transactions the log does not. The
//! choice is made once, where the store is opened (`open`) or attached to
//! its log (`follow`); the writer, group commit, imports and keyspaces ask
//! the `Durability` what to do, never which mode they are in (cozo's
//! `Storage` is the model).

use std::sync::Arc;

use super::error::TransactError;
use super::log::{Log, LogEntry, LogError, SharedKeyspaces};
use super::value::EntityId;
use super::Store;

/// What the store does with a transaction, and with a keyspace's write, to
/// make it durable.
pub(crate) trait Durability: Send + Sync {
    /// The log entry a decided transaction must be appended as before it
    /// is acknowledged (`entry` builds it: only a log wants one), or the
    /// refusal of a store that takes no write.
    fn to_log(&self, entry: &dyn Fn() -> LogEntry) -> Result<Option<LogEntry>, TransactError>;

    /// Blocks until transaction `t`, applied here, is durable.
    fn wait_durable(&self, store: &Store, t: EntityId) -> Result<(), TransactError>;

    // The rest say what a store on its own does; a mode that differs
    // says so.

    /// Refuses a write of the store's own, beside its history (a keyspace's
    /// or an import's), where it would be this store's alone.
    fn writes_here(&self) -> Result<(), TransactError> {
        Ok(())
    }

    /// Refuses an import, which writes into the store itself and could not
    /// be in a log.
    fn takes_imports(&self) -> Result<(), TransactError> {
        Ok(())
    }

    /// Where keyspaces are kept when not in the store's own sled.
    fn shared_keyspaces(&self) -> Option<&dyn SharedKeyspaces> {
        None
    }

    /// The log this store follows, to catch up with it.
    fn log(&self) -> Option<&Arc<dyn Log>> {
        None
    }

    /// Whether other stores write to this store's history, so that a
    /// write a reader saw may not be applied here yet.
    fn others_write(&self) -> bool {
        false
    }

    /// Whether the store's history is a log's, kept elsewhere (attached or
    /// not): the CLI's question, when it wires a store up.
    fn follows_a_log(&self) -> bool {
        false
    }
}

/// A store on its own: its group flush makes each transaction durable.
pub(crate) struct OwnFlush;

impl Durability for OwnFlush {
    fn to_log(&self, _: &dyn Fn() -> LogEntry) -> Result<Option<LogEntry>, TransactError> {
        Ok(None)
    }

    fn wait_durable(&self, store: &Store, t: EntityId) -> Result<(), TransactError> {
        store.flush_until(|state| state.durable >= t)
    }
}

/// A store that followed a log, opened without it: it reads what it has
/// and writes nothing until the log is attached again.
pub(crate) struct Detached;

impl Durability for Detached {
    fn to_log(&self, _: &dyn Fn() -> LogEntry) -> Result<Option<LogEntry>, TransactError> {
        Err(unfollowed().into())
    }

    fn wait_durable(&self, store: &Store, t: EntityId) -> Result<(), TransactError> {
        OwnFlush.wait_durable(store, t)
    }

    fn writes_here(&self) -> Result<(), TransactError> {
        Err(unfollowed().into())
    }

    fn takes_imports(&self) -> Result<(), TransactError> {
        Err(import_around_the_log().into())
    }

    // Nothing is applied here, from others or itself, until the log is
    // attached again: `others_write` is a store on its own's.

    fn follows_a_log(&self) -> bool {
        true
    }
}

/// A store that follows a log: each transaction is applied here, appended
/// to the log after the entry it was decided on with whatever else was
/// applied meanwhile (`log_commit`), and durable once the log holds it; if
/// another node's came first, it is taken back out and decided again.
pub(crate) struct ThroughLog {
    pub(crate) log: Arc<dyn Log>,
}

impl Durability for ThroughLog {
    fn to_log(&self, entry: &dyn Fn() -> LogEntry) -> Result<Option<LogEntry>, TransactError> {
        Ok(Some(entry()))
    }

    fn wait_durable(&self, store: &Store, t: EntityId) -> Result<(), TransactError> {
        store.until_t_logged(self.log.as_ref(), t)
    }

    fn takes_imports(&self) -> Result<(), TransactError> {
        Err(import_around_the_log().into())
    }

    fn shared_keyspaces(&self) -> Option<&dyn SharedKeyspaces> {
        Some(self.log.keyspaces())
    }

    fn log(&self) -> Option<&Arc<dyn Log>> {
        Some(&self.log)
    }

    fn others_write(&self) -> bool {
        true
    }

    fn follows_a_log(&self) -> bool {
        true
    }
}

/// Why a store that followed a log, opened without it, refuses a write.
pub(crate) fn unfollowed() -> LogError {
    LogError::Unavailable(
        "this store follows a log in PostgreSQL, which it was opened without: a write here would be missing from the log (serve it with --database-url)".into(),
    )
}

fn import_around_the_log() -> LogError {
    LogError::Unavailable(
        "an import writes into the store itself, around the log it follows: import into a store with no log, then copy it into the log with `forkful log push`".into(),
    )
}

impl Store {
    /// How this store makes what it writes durable: the log's way once one
    /// is attached, else the way it was opened.
    pub(crate) fn durability(&self) -> &dyn Durability {
        match self.inner.attached.get() {
            Some(through_log) => through_log,
            None => &*self.inner.opened,
        }
    }
}
