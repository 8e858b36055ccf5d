//! Taking applied but not yet durable transactions back out of sled after a
//! failed flush, so that nothing flushed later (sled's own flusher, or its
//! flush on drop) makes durable a write that was never acknowledged.

use std::collections::BTreeMap;

use sled::IVec;

use super::handle::Store;
use super::meta::META_AVET_UNCLEARED;
use super::postings;
use super::value::EntityId;

/// How to take one transaction back out of sled.
pub(super) struct Undo {
    pub(super) tx: EntityId,
    /// Every key it wrote but AVET's, with what it held before (`None`:
    /// nothing).
    pub(super) keys: Vec<(Vec<u8>, Option<IVec>)>,
    /// The AVET chunks it wrote. Putting a chunk's old bytes back would
    /// take a split back too, moving records from a piece to the chunk
    /// before it, behind a reader scanning forward; so each is cleared of
    /// what is not durable instead (`postings::cleared`).
    pub(super) chunks: Vec<Vec<u8>>,
}

impl Store {
    /// After a failed flush: takes every transaction applied since the
    /// last durable basis back out of sled, newest first, so that nothing
    /// that flushes later (sled's own flusher, or its flush on drop) can
    /// make a write durable that was never acknowledged. The caches are
    /// derived and may hold what was undone, so they start over.
    pub(super) fn undo_unflushed(&self) {
        let mut writer = self.lock_writer();
        let (durable, undo) = {
            let mut state = self.lock_flush();
            (state.durable, std::mem::take(&mut state.undo))
        };
        if let Err(e) = self.take_out(undo, durable) {
            tracing::error!(error = %e, "could not undo the writes after a failed flush");
        }
        // sled's own flusher may have written out some of what was just
        // undone: write the undoing out too, if the disk lets us.
        if let Err(e) = self.inner.sled.flush() {
            tracing::error!(error = %e, "could not flush the undo after a failed flush");
        }
        let schema = self.published_schema();
        self.rewind(&mut writer, durable, schema);
    }

    /// Takes the transactions `undo` holds (oldest first, every one after
    /// `durable`) back out of sled, in one batch, so that sled's own
    /// flusher never writes out the old basis without the chunks cleared
    /// of what came after. Each key gets what it held before the oldest
    /// transaction that wrote it: the undos are folded newest first.
    /// Whether every AVET chunk was cleared (if not, the next open clears
    /// them all, and nothing may be written before).
    pub(super) fn take_out(&self, undo: Vec<Undo>, durable: EntityId) -> Result<bool, sled::Error> {
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
        self.inner.sled.apply_batch(batch)?;
        Ok(all)
    }
}
