//! The store's history summed again, read back from sled as the log sums
//! its entries, against the sum the store recorded for its newest
//! transaction (which is the log's, checked first): a transaction changed
//! in the store behind its log's back, its recorded sum left as it was, is
//! found.
//!
//! Each transaction is summed once, soon after it was applied: after each
//! large batch a node applies from the log (building its store, catching
//! up), at each of the follow loop's reads to the log's end, when a store
//! is copied into a log, and at a start, for whatever came after the last
//! check (`META_HISTORY_CHECKED`). A start then sums only what it had not
//! summed before. When only a start summed, a node built from the log of
//! a million recipes summed all of them at its first start (25.6 s,
//! docs/journal/55-million.md), and a node that had followed for a week
//! would have summed the week's.

use std::sync::atomic::Ordering;

use super::error::TransactError;
use super::handle::Store;
use super::log::{LogError, GENESIS_SUM};
use super::meta::META_HISTORY_CHECKED;
use super::schema::GENESIS_TX;
use super::value::EntityId;
use super::writer::Writer;

/// A batch applied from the log of at least this many transactions is
/// summed again at once, while its pages are still in sled's cache.
pub(super) const CHECK_AFTER_BATCH: usize = 100;

impl Store {
    /// Refuses a store whose history, summed again from its datoms, does
    /// not come to the sum it recorded for its newest transaction. One pass
    /// over the store's log index, from where the last check that passed
    /// left off. What is found to agree is recorded as checked up to the
    /// newest transaction the log holds: one applied here and not logged
    /// yet may be taken back out, and its `t` given to another.
    pub(super) fn check_history_against_sum(&self, writer: &Writer) -> Result<(), TransactError> {
        let (basis, logged) = self.applied_and_logged();
        self.sum_history_from(writer, basis, logged, self.history_checked(basis)?)
    }

    /// `check_history_against_sum` for what was applied since the last
    /// check, if anything was; a store whose history was found changed
    /// takes no more writes (it is poisoned), as one refused at its start.
    pub(super) fn check_new_history(&self, writer: &Writer) -> Result<(), TransactError> {
        let (basis, logged) = self.applied_and_logged();
        let from = self.history_checked(basis)?;
        if from.0 >= logged {
            return Ok(());
        }
        self.sum_history_from(writer, basis, logged, from)
            .inspect_err(|error| {
                if let TransactError::Log(LogError::Mismatch(why)) = error {
                    self.lock_flush().failed.get_or_insert_with(|| why.clone());
                }
            })
    }

    /// The newest transaction applied, and the newest the log holds of it.
    fn applied_and_logged(&self) -> (EntityId, EntityId) {
        let basis = self.inner.applied.load(Ordering::Acquire);
        (basis, self.lock_flush().durable.min(basis))
    }

    /// The check itself, from `from` (the last check's `t` and sum) to
    /// `basis`, recording what agrees up to `logged`.
    fn sum_history_from(
        &self,
        writer: &Writer,
        basis: EntityId,
        logged: EntityId,
        from: (EntityId, [u8; 32]),
    ) -> Result<(), TransactError> {
        let mut checked_to = None;
        let summed = self.each_history_entry_after(writer, from, &mut |entry| {
            if entry.t <= logged {
                checked_to = Some((entry.t, entry.sum));
            }
            Ok(())
        })?;
        if summed != writer.log_sum {
            return Err(LogError::Mismatch(format!(
                "this store's transactions up to {basis}, summed again, are not the log's: one of them was changed in the store. Move its directory aside: a node with an empty directory builds its store again from the log"
            ))
            .into());
        }
        if let Some((t, sum)) = checked_to {
            self.inner
                .sled
                .insert(META_HISTORY_CHECKED, history_checked_value(t, &sum))?;
        }
        Ok(())
    }

    /// Where the last check that passed left off, and the sum there: the
    /// genesis if none did, or if it is past `basis` (the store is not the
    /// one it was made on).
    fn history_checked(&self, basis: EntityId) -> Result<(EntityId, [u8; 32]), TransactError> {
        Ok(self
            .inner
            .sled
            .get(META_HISTORY_CHECKED)?
            .and_then(|checked| {
                let t = EntityId::from_be_bytes(checked.get(..8)?.try_into().ok()?);
                let sum: [u8; 32] = checked.get(8..40)?.try_into().ok()?;
                (t <= basis).then_some((t, sum))
            })
            .unwrap_or((GENESIS_TX, GENESIS_SUM)))
    }
}

/// `META_HISTORY_CHECKED`'s value: the `t` checked up to, and its sum.
pub(super) fn history_checked_value(t: EntityId, sum: &[u8; 32]) -> Vec<u8> {
    let mut value = t.to_be_bytes().to_vec();
    value.extend_from_slice(sum);
    value
}
