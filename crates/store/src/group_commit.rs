//! Group commit: a write is acknowledged once a flush begun after it was
//! applied has returned and sled's files are synced. Whoever finds no flush
//! running flushes everything applied so far, for every writer waiting; a
//! failed or panicking flush poisons the store and undoes what it did not
//! make durable (`undo`).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::error::{StorageError, TransactError};
use super::handle::Store;
use super::log::{LogEntry, LogError};
use super::schema::Schema;
use super::undo::Undo;
use super::value::EntityId;

pub(super) struct FlushState {
    pub(super) durable: EntityId,
    pub(super) running: bool,
    /// Flushes started and finished so far: `sync` waits for one that
    /// started after the write it must cover.
    pub(super) started: u64,
    pub(super) finished: u64,
    /// Set by a failed flush; no write is acknowledged after it, and
    /// nothing is flushed again but the undo of what was not durable.
    pub(super) failed: Option<String>,
    /// Schemas installed by transactions applied but not yet durable,
    /// oldest first: each is published with its transaction's basis.
    pub(super) schemas: Vec<(EntityId, Arc<Schema>)>,
    /// For each transaction applied but not yet durable, oldest first, how
    /// to take it back out of sled.
    pub(super) undo: Vec<Undo>,
    /// With a log: the entries of transactions applied here and not yet
    /// sent to the log, oldest first (`log_commit`).
    pub(super) unlogged: Vec<LogEntry>,
    /// Whether a batch of them is on its way to the log, or being taken
    /// back out after the log refused it.
    pub(super) appending: bool,
    /// Why each transaction taken back out was, by its entry's sum, for
    /// its writer to collect.
    pub(super) lost: std::collections::HashMap<[u8; 32], LogError>,
    /// How many times what the log refused was taken back out: a refusal
    /// decided before the last one is decided again (`Whose::Seen`).
    pub(super) take_backs: u64,
}

impl Store {
    /// Blocks until transaction `t` is durable, flushing if nobody is.
    pub fn wait_durable(&self, t: EntityId) -> Result<(), TransactError> {
        self.durability().wait_durable(self, t)
    }

    /// Blocks until everything written before the call is durable: the
    /// datoms, and the keyspaces beside them (`Store::keyspace`). Always
    /// waits for a flush that starts after the call, through the same
    /// group flush as transactions, so a poisoned store refuses.
    pub fn sync(&self) -> Result<(), TransactError> {
        let (needed, applied) = (
            self.lock_flush().started + 1,
            self.inner.applied.load(Ordering::Acquire),
        );
        self.flush_until(|state| state.finished >= needed)?;
        // Through a log, what was applied is published once the log holds
        // it, not by a flush: wait for that too (or for it to be taken
        // back out, which publishes nothing).
        match self.durability().log() {
            Some(log) => match self.until_t_logged(log.as_ref(), applied) {
                Err(TransactError::Log(LogError::Moved { .. })) => Ok(()),
                other => other,
            },
            None => Ok(()),
        }
    }

    /// Flushes (or waits for the running flush) until `done` holds.
    pub(super) fn flush_until(
        &self,
        done: impl Fn(&FlushState) -> bool,
    ) -> Result<(), TransactError> {
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
                state = self.wait_flushed(state);
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
                    // Through a log, a flush makes nothing durable: the
                    // log's append does (`log_commit`).
                    if self.durability().log().is_none() {
                        state.durable = state.durable.max(target);
                        self.publish(&mut state);
                    }
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
    pub(super) fn publish(&self, state: &mut FlushState) {
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
    pub(super) fn flush_sled(&self) -> Result<(), TransactError> {
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

    /// Flushes everything to disk (for shutdown; every acknowledged write
    /// already is). A poisoned store refuses: what it holds beyond the last
    /// durable basis was never acknowledged and must not be written.
    pub fn flush(&self) -> Result<(), TransactError> {
        self.refuse_if_poisoned()?;
        self.inner.sled.flush()?;
        Ok(())
    }
}

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
pub(super) struct FlushGuard<'a> {
    pub(super) store: &'a Store,
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
