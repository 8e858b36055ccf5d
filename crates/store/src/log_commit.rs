//! Group append, the log's group commit. With a log attached, a transaction
//! is decided on the latest value and applied to sled at once, as a store
//! on its own applies it, but shown to readers and acknowledged only once
//! the log holds it. Whoever finds no append running appends every
//! transaction applied here and not yet in the log, in one commit; the
//! other writers meanwhile decide and apply theirs on top of it, for the
//! next append. One commit per transaction, made while the writer was
//! held, kept a node's writes at a third of a store on its own's
//! (scripts/cluster.sh, docs/journal/55-million.md).
//!
//! An append the log refuses (another node's entry came first, or the log
//! cannot be reached) takes every transaction not yet in the log back out
//! of sled (`undo`), and each of their writers is told why: to decide again
//! on the value caught up (`Moved`), or to refuse (503).
//!
//! Until the log holds it, each such transaction also has its undo kept in
//! sled, in the same batch (the journal): sled writes its pages out when it
//! likes, so a node that crashed may find transactions on its disk that no
//! log has. It takes them out when it next attaches to its log
//! (`Store::take_out_what_the_log_lacks`).

use std::sync::atomic::Ordering;

use super::error::{StorageError, TransactError};
use super::group_commit::FlushState;
use super::handle::Store;
use super::journal::{decode_journal, journal_key, JOURNAL_PREFIX};
use super::log::{Log, LogEntry, LogError};
use super::meta::{read_meta_u64, META_LAST_INSTANT, META_NEXT_ID};
use super::value::EntityId;
use super::writer::Writer;

/// At most this many writers' refusals are kept for them to collect: more
/// means writers that never came for theirs, which no caller does.
const MOST_LOST: usize = 100_000;

impl Store {
    /// Queues `entry`, whose transaction was just applied here, for the
    /// next append.
    pub(super) fn queue_for_log(&self, entry: LogEntry) {
        self.lock_flush().unlogged.push(entry);
    }

    /// Blocks until the log holds transaction `t`, appending everything
    /// queued if no append is running; `Moved` (or why the append failed)
    /// if it was taken back out instead (`Whose`).
    fn until_logged(&self, log: &dyn Log, t: EntityId, whose: Whose) -> Result<(), TransactError> {
        let mut state = self.lock_flush();
        loop {
            // Asked first: once taken out, `t` may be another's and logged.
            let lost = match whose {
                Whose::Mine(sum) => state.lost.remove(&sum),
                // Whatever was taken back since, `t` may have been in it.
                Whose::Seen(take_backs) if take_backs != state.take_backs => {
                    Some(LogError::Moved {
                        prev: state.durable,
                    })
                }
                Whose::Seen(_) | Whose::Any => None,
            };
            if let Some(lost) = lost {
                return Err(lost.into());
            }
            if state.durable >= t {
                return Ok(());
            }
            if let Some(why) = &state.failed {
                return Err(TransactError::Poisoned(why.clone()));
            }
            if state.appending {
                state = self.wait_flushed(state);
                continue;
            }
            if state.unlogged.is_empty() {
                // Neither logged nor queued: taken out before this caller,
                // which did not apply it, came to look.
                return Err(LogError::Moved {
                    prev: state.durable,
                }
                .into());
            }
            let batch = next_batch(&mut state.unlogged);
            state.appending = true;
            drop(state);
            self.append_batch(log, &batch);
            state = self.lock_flush();
        }
    }

    /// `until_logged` for the writer of transaction `t`, whose entry's sum
    /// is `sum`.
    pub(super) fn until_mine_logged(
        &self,
        log: &dyn Log,
        t: EntityId,
        sum: [u8; 32],
    ) -> Result<(), TransactError> {
        self.until_logged(log, t, Whose::Mine(sum))
    }

    /// `until_logged` for a caller that did not apply `t` and has no sum.
    pub(super) fn until_t_logged(&self, log: &dyn Log, t: EntityId) -> Result<(), TransactError> {
        self.until_logged(log, t, Whose::Any)
    }

    /// What a refusal decided now, under the writer, was decided on: the
    /// basis, and how many take-backs there had been
    /// (`refused_on_what_was_taken_back`).
    pub(super) fn decided_on(&self, basis: EntityId) -> (EntityId, u64) {
        (basis, self.lock_flush().take_backs)
    }

    /// Whether a refusal decided on `seen` (`decided_on`) was decided on
    /// transactions the log never took, taken back out since: then it is
    /// decided again. Through a log, a refusal (a slug taken, a form
    /// already saved, a unique value held) may rest on a transaction
    /// applied here and not logged yet; it is given only once the log
    /// holds what it saw, with no take-back in between (a `t` taken back
    /// is given to the next transaction, so the log holding `t` says
    /// nothing of the one seen).
    pub(super) fn refused_on_what_was_taken_back(
        &self,
        (basis, take_backs): (EntityId, u64),
    ) -> Result<bool, TransactError> {
        let Some(log) = self.durability().log() else {
            return Ok(false);
        };
        match self.until_logged(log.as_ref(), basis, Whose::Seen(take_backs)) {
            Ok(()) => Ok(false),
            Err(TransactError::Log(LogError::Moved { .. })) => Ok(true),
            Err(other) => Err(other),
        }
    }

    /// Appends `batch` (never empty) and shows it to readers, or takes
    /// back out everything applied here that the log does not hold.
    fn append_batch(&self, log: &dyn Log, batch: &[LogEntry]) {
        // An append that panicked is one the log may or may not hold.
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| log.append(batch)))
            .unwrap_or_else(|_| Err(LogError::Unknown("the append panicked".into())));
        let last = batch.last().map_or(0, |entry| entry.t);
        match outcome {
            Ok(()) => {
                let mut state = self.lock_flush();
                state.appending = false;
                // A store poisoned meanwhile took the batch out of sled
                // (`undo_unflushed`): the log has it, this store does not
                // show it, and its writers are told the store refuses.
                if state.failed.is_none() {
                    state.durable = state.durable.max(last);
                    self.publish(&mut state);
                }
                drop(state);
                // The log's head is this entry now, or past it.
                self.inner.follow_health.appended(last);
                self.forget_journal(batch);
            }
            Err(error) => {
                // `appending` stays set until the batch is out: no writer
                // may append what was decided on it meanwhile. A take-back
                // that panicked leaves the store poisoned, never waiting.
                let taken_back = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let mut writer = self.lock_writer();
                    let mut state = self.lock_flush();
                    self.take_back_unlogged(&mut writer, &mut state, &error, batch);
                }));
                let mut state = self.lock_flush();
                if taken_back.is_err() {
                    state.failed = Some("taking back what the log refused panicked".into());
                }
                state.appending = false;
            }
        }
        self.inner.flushed.notify_all();
    }

    /// Takes every transaction applied here and not in the log back out of
    /// sled, and tells their writers why: `error` for those of the append
    /// that failed (`failed`), the same or `Moved` for those queued after
    /// it, which were decided on what was taken out. The writer and the
    /// flush state are held throughout: no writer applies or appends in
    /// the meantime.
    pub(super) fn take_back_unlogged(
        &self,
        writer: &mut Writer,
        state: &mut FlushState,
        error: &LogError,
        failed: &[LogEntry],
    ) {
        let durable = state.durable;
        if state.lost.len() > MOST_LOST {
            state.lost.clear();
        }
        let queued = std::mem::take(&mut state.unlogged);
        for entry in failed {
            state.lost.insert(entry.sum, told(error));
        }
        for entry in &queued {
            state.lost.insert(entry.sum, told_the_rest(error));
        }
        state.take_backs += 1;
        let undo = std::mem::take(&mut state.undo);
        state.schemas.retain(|(tx, _)| *tx <= durable);
        // What could not be taken out would be built on, its `t` given
        // again: the store refuses every write instead, until reopened.
        match self.take_out(undo, durable) {
            Ok(true) => {}
            Ok(false) => {
                state.failed = Some("could not clear AVET of writes the log refused".into());
            }
            Err(e) => {
                tracing::error!(error = %e, "could not take out writes the log refused");
                state.failed = Some(format!("could not take out writes the log refused: {e}"));
            }
        }
        // The writer's place is what the undo put back.
        if let Err(e) = self.read_back_writer_place(writer) {
            // Nothing past this point can be trusted to chain right.
            state.failed = Some(format!("could not read back the writer's place: {e}"));
        }
        let schema = self.published_schema();
        self.rewind(writer, durable, schema);
    }

    /// Sets the writer's next id, last instant and log sum to what sled's
    /// meta keys hold: after an undo put back the ones before what it
    /// took out.
    fn read_back_writer_place(&self, writer: &mut Writer) -> Result<(), StorageError> {
        writer.next_id = read_meta_u64(&self.inner.sled, META_NEXT_ID)?;
        writer.last_instant = read_meta_u64(&self.inner.sled, META_LAST_INSTANT)? as i64;
        writer.log_sum = super::open::read_log_sum(&self.inner.sled)?;
        Ok(())
    }

    /// Removes the journal of transactions the log now holds.
    fn forget_journal(&self, logged: &[LogEntry]) {
        let mut batch = sled::Batch::default();
        for entry in logged {
            batch.remove(journal_key(entry.t));
        }
        if let Err(e) = self.inner.sled.apply_batch(batch) {
            // Left, it is found logged and removed at the next attach.
            tracing::warn!(error = %e, "could not remove the journal of logged transactions");
        }
    }

    /// Takes out, newest first, the transactions this store applied that
    /// its log lacks, each by its journal: what a node that crashed between
    /// applying and the log's answer finds when it attaches again. Stops at
    /// the first the log holds (by sum) or that has no journal (then the
    /// checks that follow say what is wrong). The journal of what the log
    /// holds is removed. Returns how many were taken out.
    pub(super) fn take_out_what_the_log_lacks(
        &self,
        writer: &mut Writer,
        log: &dyn Log,
    ) -> Result<usize, TransactError> {
        let mut taken = 0;
        loop {
            let basis = self.inner.applied.load(Ordering::Acquire);
            let Some(journal) = self.inner.sled.get(journal_key(basis))? else {
                break;
            };
            if log.sum_at(basis)? == Some(writer.log_sum) {
                break;
            }
            let (keys, chunks) = decode_journal(&journal)?;
            let undo = super::undo::Undo {
                tx: basis,
                keys,
                chunks,
            };
            if !self.take_out(vec![undo], basis - 1)? {
                return Err(StorageError::Corrupt(
                    "could not clear AVET of a write its log lacks: open the store again".into(),
                )
                .into());
            }
            let basis = read_meta_u64(&self.inner.sled, super::meta::META_BASIS)?;
            self.read_back_writer_place(writer)?;
            self.inner.applied.store(basis, Ordering::Release);
            let schema = super::open::load_schema(&self.writer_db(writer))
                .map_err(|e| StorageError::Corrupt(e.to_string()))?;
            let schema = std::sync::Arc::new(schema);
            {
                let mut state = self.lock_flush();
                state.durable = basis;
                state.schemas.clear();
                state.undo.clear();
            }
            let mut published = self
                .inner
                .published
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            published.basis = basis;
            published.schema = schema.clone();
            drop(published);
            self.rewind(writer, basis, schema);
            taken += 1;
        }
        let mut batch = sled::Batch::default();
        for key in self.inner.sled.scan_prefix(JOURNAL_PREFIX).keys() {
            batch.remove(key?);
        }
        self.inner.sled.apply_batch(batch)?;
        Ok(taken)
    }
}

/// Whose transaction a caller waits for the log to hold: its writer's, by
/// its entry's sum, which collects why it was taken back out (`Mine`); a
/// refusal's, decided on it (`Seen`); or a caller's with neither (`Any`),
/// which learns only that `t` is not in the log, or that the transaction
/// at `t` now is, whichever it was.
#[derive(Clone, Copy)]
enum Whose {
    Mine([u8; 32]),
    /// Seen by a refusal decided when there had been this many
    /// take-backs: one since, and it is decided again.
    Seen(u64),
    Any,
}

/// The most entries, and datoms, one append carries: a statement under
/// the log's time limit for a call, however large each transaction is.
const MOST_PER_APPEND: usize = 256;
const MOST_DATOMS_PER_APPEND: usize = super::writer::MAX_TX_DATOMS;

/// The oldest of `unlogged`, taken out for one append: at least one, then
/// as many as `MOST_PER_APPEND` and `MOST_DATOMS_PER_APPEND` allow.
fn next_batch(unlogged: &mut Vec<LogEntry>) -> Vec<LogEntry> {
    let mut datoms = 0;
    let taken = unlogged
        .iter()
        .take(MOST_PER_APPEND)
        .take_while(|entry| {
            datoms += entry.datoms.len();
            datoms <= MOST_DATOMS_PER_APPEND
        })
        .count()
        .max(1);
    unlogged.drain(..taken).collect()
}

/// The error a writer whose transaction was in a failed append is told.
fn told(error: &LogError) -> LogError {
    match error {
        LogError::Moved { prev } => LogError::Moved { prev: *prev },
        LogError::Unavailable(why) => LogError::Unavailable(why.clone()),
        LogError::Unknown(why) => LogError::Unknown(why.clone()),
        LogError::Mismatch(why) => LogError::Mismatch(why.clone()),
        LogError::Corrupt(e) => LogError::Unavailable(e.to_string()),
    }
}

/// The error a writer whose transaction was queued after a failed append
/// is told: it was never sent, so its fate is known.
fn told_the_rest(error: &LogError) -> LogError {
    match error {
        LogError::Unknown(why) => LogError::Unavailable(why.clone()),
        other => told(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::Datom;
    use crate::log::GENESIS_SUM;
    use crate::value::Value;

    fn entry(t: EntityId, datoms: usize) -> LogEntry {
        let datom = Datom {
            e: t,
            a: 1,
            v: Value::Long(1),
            tx: t,
            added: true,
        };
        LogEntry::new(t - 1, &GENESIS_SUM, t, t + 1, 0, vec![datom; datoms])
    }

    /// An append carries at most `MOST_PER_APPEND` entries and
    /// `MOST_DATOMS_PER_APPEND` datoms, and always the oldest entry, however
    /// large: the rest wait for the next, in order.
    #[test]
    fn an_append_takes_the_oldest_entries_up_to_its_bounds() {
        let mut unlogged: Vec<LogEntry> = (100..400).map(|t| entry(t, 1)).collect();
        let first = next_batch(&mut unlogged);
        assert_eq!(first.len(), MOST_PER_APPEND);
        assert_eq!(first[0].t, 100);
        assert_eq!(unlogged[0].t, 100 + MOST_PER_APPEND as EntityId);
        let half = MOST_DATOMS_PER_APPEND / 2 + 1;
        let mut unlogged = vec![entry(10, half), entry(11, half), entry(12, 1)];
        assert_eq!(next_batch(&mut unlogged).len(), 1);
        let mut unlogged = vec![entry(10, MOST_DATOMS_PER_APPEND + 5), entry(11, 1)];
        assert_eq!(
            next_batch(&mut unlogged).len(),
            1,
            "the oldest, however large"
        );
        assert_eq!(next_batch(&mut unlogged)[0].t, 11);
    }
}
