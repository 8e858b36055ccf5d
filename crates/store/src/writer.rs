//! The single writer: transactions (and transaction functions) decided on
//! the latest value, checked, and applied as one sled batch each; imported
//! transactions applied as they are. Making them durable is group commit's
//! (`group_commit`); taking them back out after a failed flush is `undo`'s.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use sled::IVec;

use super::current;
use super::db::Db;
use super::encoding::{Components, Datom, Index};
use super::error::{StorageError, TransactError};
use super::grouped;
use super::handle::{Published, Store};
use super::instant;
use super::journal;
use super::log::{self, LogEntry, LogError};
use super::meta::{
    bootstrap_schema, write_genesis, DerefTree, META_BASIS, META_IMPORTING, META_LAST_INSTANT,
    META_LOG_SUM, META_NEXT_ID,
};
use super::postings;
use super::prepare::{self, WriterClock};
use super::schema::{self, Attribute, Schema, GENESIS_TX};
use super::transaction::{Transaction, TxReport};
use super::undo::Undo;
use super::value::{EntityId, Value};

/// The most datoms one transaction may write. A bigger one is refused:
/// sled 0.34 keeps every node version a batch replaces until the batch ends
/// (its epoch is pinned for the whole batch), so memory grows with the
/// batch; bulk loads write many transactions of this size or less instead.
pub const MAX_TX_DATOMS: usize = 20_000;

/// How many times a transaction another node's write beat to the log is
/// decided again before it is refused (503 and Retry-After). Each loss
/// means another node wrote in the moment between catching up and
/// appending. Three nodes taking writes as fast as eight cooks sent them
/// lost three in a row within a second when this was 3, so a cook was
/// told "busy" at 30 writes a second (scripts/cluster.sh with `RATE=0
/// COOKS=8`, docs/journal/55-million.md); with a pause between tries
/// (`log_backoff`), twelve losses in a row is contention that lasted some
/// 80 ms, which a client should back off from.
pub(crate) const LOG_RETRIES: usize = 12;

/// The pause before try `retry` (from 1) of a transaction that lost the
/// log: up to 1, 2, 4, then 8 ms, drawn at random, so that nodes that lost
/// to each other do not try again in step. The writer is not held: this
/// node's other writes go on meanwhile.
fn log_backoff(retry: usize) -> std::time::Duration {
    let most_micros = 1_000u32 << retry.saturating_sub(1).min(3);
    // Jitter from the clock's nanoseconds: nothing here needs a better
    // random number than one that differs between nodes and tries.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    std::time::Duration::from_micros(u64::from(nanos % most_micros))
}

/// The most bytes of values one transaction may write (strings and
/// keywords by their length, every other value as eight bytes): with values
/// of up to a line's length, a datom count alone would not bound a batch.
pub const MAX_TX_BYTES: usize = 32 << 20;

/// What the writer knows that is not in the indexes.
pub(super) struct Writer {
    pub(super) next_id: EntityId,
    pub(super) last_instant: i64,
    /// The schema as of the newest applied transaction.
    pub(super) schema: Arc<Schema>,
    /// The sum of the newest log entry applied (`log::GENESIS_SUM` for a
    /// store that never followed a log): the next entry chains to it.
    pub(super) log_sum: [u8; 32],
}

impl Store {
    /// Applies `tx` atomically and returns once it is durable. On any error,
    /// nothing was written.
    pub fn transact(&self, tx: &Transaction) -> Result<TxReport, TransactError> {
        Ok(self.transact_with(|_| Ok::<_, TransactError>((tx, ())))?.0)
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
    ///
    /// With a log attached, a transaction another node's write beat to the
    /// log is decided again on the value caught up to it, up to
    /// `LOG_RETRIES` times: so `decide` may run more than once, each time
    /// on a newer value, and must write only what it returns.
    pub fn transact_with<T, E: From<TransactError>, Tx: std::borrow::Borrow<Transaction>>(
        &self,
        decide: impl FnMut(&Db) -> Result<(Tx, T), E>,
    ) -> Result<(TxReport, T), E> {
        self.decide_until_acknowledged(decide, true)
    }

    /// `transact_with` without waiting for the transaction to be durable,
    /// for bulk loads, which write many bounded transactions and wait once
    /// per group (`wait_durable` on the last basis): one flush covers them
    /// all. Readers see a transaction only once it is durable; nothing is
    /// acknowledged to anyone before that wait returns. Through a log,
    /// each waits for the log all the same (one append then carries it),
    /// and readers may see the group's transactions one by one: a write
    /// another node's beat to the log is decided again, which needs its
    /// writer waiting.
    pub fn transact_deferred_with<
        T,
        E: From<TransactError>,
        Tx: std::borrow::Borrow<Transaction>,
    >(
        &self,
        decide: impl FnMut(&Db) -> Result<(Tx, T), E>,
    ) -> Result<(TxReport, T), E> {
        self.decide_until_acknowledged(decide, false)
    }

    /// Decides and applies a transaction (`apply_in_writer`) and, if
    /// `wait`, waits until it is durable. Through a log it always waits,
    /// deferred or not: a transaction another node's beat to the log is
    /// taken back out, and decided again on the value caught up to it, at
    /// most `LOG_RETRIES` times.
    fn decide_until_acknowledged<
        T,
        E: From<TransactError>,
        Tx: std::borrow::Borrow<Transaction>,
    >(
        &self,
        mut decide: impl FnMut(&Db) -> Result<(Tx, T), E>,
        wait: bool,
    ) -> Result<(TxReport, T), E> {
        let mut retries = 0;
        loop {
            let (report, value, sum) = self.apply_in_writer(&mut decide)?;
            let t = report.basis_after;
            let acknowledged = match (sum, self.durability().log()) {
                (Some(sum), Some(log)) => self.until_mine_logged(log.as_ref(), t, sum),
                _ if wait => self.wait_durable(t),
                _ => Ok(()),
            };
            match acknowledged {
                Err(moved @ TransactError::Log(LogError::Moved { .. })) => {
                    // Another node wrote first: catch up with it, and
                    // decide again on the value it made; lost every time,
                    // refused (503).
                    self.inner.log_retries.fetch_add(1, Ordering::Relaxed);
                    if retries == LOG_RETRIES {
                        self.catch_up()?;
                        return Err(moved.into());
                    }
                    retries += 1;
                    std::thread::sleep(log_backoff(retries));
                    self.catch_up()?;
                }
                Err(other) => return Err(other.into()),
                Ok(()) => {
                    self.inner.transactions.fetch_add(1, Ordering::Relaxed);
                    return Ok((report, value));
                }
            }
        }
    }

    /// Takes the writer, lets `decide` choose a transaction on the latest
    /// value, and applies it as one sled batch; with a log, its entry's sum
    /// (it is queued for the log). Durability is the caller's.
    pub(super) fn apply_in_writer<
        T,
        E: From<TransactError>,
        Tx: std::borrow::Borrow<Transaction>,
    >(
        &self,
        decide: &mut impl FnMut(&Db) -> Result<(Tx, T), E>,
    ) -> Result<(TxReport, T, Option<[u8; 32]>), E> {
        let mut again = 0;
        loop {
            let mut writer = self.lock_writer();
            self.refuse_if_poisoned()?;
            let db = self.writer_db(&writer);
            // A panic in `decide` must not poison the writer's mutex:
            // nothing has been written yet, so the writer's state is
            // intact. Let the guard go normally, then carry the panic on.
            let applied =
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decide(&db))) {
                    Ok(Ok((tx, value))) => self
                        .apply_locked(&mut writer, &db, tx.borrow())
                        .map(|(report, sum)| (report, value, sum))
                        .map_err(E::from),
                    Ok(Err(refused)) => Err(refused),
                    Err(panic) => {
                        drop(writer);
                        std::panic::resume_unwind(panic);
                    }
                };
            match applied {
                Ok(applied) => return Ok(applied),
                // Refused, by `decide` or by the store's own checks (a
                // unique value held, a compare-and-swap that failed), on
                // `db`. The writer is still held: nothing was taken back
                // since.
                Err(refused) => {
                    let seen = self.decided_on(db.basis());
                    drop(writer);
                    if !self.decide_refusal_again(seen, &mut again)? {
                        return Err(refused);
                    }
                }
            }
        }
    }

    /// Whether a refusal decided on `seen` must be decided again
    /// (`refused_on_what_was_taken_back`), counted in `again`; after
    /// `LOG_RETRIES` of those, the write is refused as busy rather than
    /// with a refusal the log may never have backed.
    fn decide_refusal_again(
        &self,
        seen: (EntityId, u64),
        again: &mut usize,
    ) -> Result<bool, TransactError> {
        if !self.refused_on_what_was_taken_back(seen)? {
            return Ok(false);
        }
        if *again == LOG_RETRIES {
            return Err(LogError::Moved { prev: seen.0 }.into());
        }
        *again += 1;
        Ok(true)
    }

    /// The latest applied database value, as the writer sees it.
    pub(super) fn writer_db(&self, writer: &Writer) -> Db {
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

    /// Checks `tx` against `db` (the writer's latest value) and applies it;
    /// with a log, queues its entry for the log and returns the entry's sum.
    pub(super) fn apply_locked(
        &self,
        writer: &mut Writer,
        db: &Db,
        tx: &Transaction,
    ) -> Result<(TxReport, Option<[u8; 32]>), TransactError> {
        let clock = WriterClock {
            next_id: writer.next_id,
            last_instant: writer.last_instant,
            now: instant::now_millis(),
        };
        let prepared = prepare::prepare(db, &clock, tx)?;
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
        // What the log must hold before it is acknowledged, if anything.
        let entry = self.durability().to_log(&|| {
            LogEntry::new(
                self.inner.applied.load(Ordering::Acquire),
                &writer.log_sum,
                report.basis_after,
                prepared.next_id,
                report.tx_instant,
                report.datoms.clone(),
            )
        })?;
        let log_sum = entry.as_ref().map(|entry| entry.sum);
        let schema = prepared.schema.map(Arc::new);
        let written = Written {
            datoms: &report.datoms,
            tx: report.basis_after,
            next_id: prepared.next_id,
            instant: report.tx_instant,
            log_sum,
            unlogged: entry.is_some(),
        };
        self.write_batch(writer, &written, schema.as_ref().unwrap_or(&writer.schema))?;
        self.after_apply(writer, &written, schema);
        if let Some(entry) = entry {
            self.queue_for_log(entry);
        }
        Ok((report, log_sum))
    }

    /// Writes one transaction's datoms, their current-entity entries and
    /// the new meta keys as one atomic sled batch, and keeps the batch
    /// that would take it out again until it is durable.
    pub(super) fn write_batch(
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
            avet.extend(attribute.avet_key(datom));
        }
        // An attribute this transaction indexes (`:db/index` altered to
        // true) has every datom it had before put in AVET with it, history
        // and retractions included, so that AVET holds all of an indexed
        // attribute's datoms whenever it was indexed. The records keep their
        // transactions, so a value as of an earlier basis reads them right.
        for attribute in newly_in_avet(&writer.schema, schema) {
            let before = self.writer_db(writer).history();
            for datom in before.datoms(Index::Aevt, &Components::any().a(attribute.id)) {
                avet.extend(attribute.avet_key(&datom?));
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
        if let Some(sum) = written.log_sum {
            undo.push((META_LOG_SUM.to_vec(), Some(IVec::from(&writer.log_sum[..]))));
            batch.insert(META_LOG_SUM, &sum[..]);
        }
        if written.unlogged {
            // Kept on disk until the log holds it: see `log_commit`.
            let key = journal::journal_key(written.tx);
            undo.push((key.clone(), None));
            batch.insert(key, journal::encode_journal(&undo, &chunks));
        }
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
    pub(super) fn after_apply(
        &self,
        writer: &mut Writer,
        written: &Written,
        schema: Option<Arc<Schema>>,
    ) {
        let (datoms, tx) = (written.datoms, written.tx);
        self.inner
            .entities
            .invalidate(datoms.iter().map(|d| d.e), tx);
        self.inner.referrers.commit(tx, references(datoms));
        self.inner.orders.commit(tx, datoms);
        if let Some(schema) = schema {
            writer.schema = schema.clone();
            self.lock_flush().schemas.push((tx, schema));
        }
        writer.next_id = written.next_id;
        writer.last_instant = written.instant;
        if let Some(sum) = written.log_sum {
            writer.log_sum = sum;
        }
        self.inner.applied.store(tx, Ordering::Release);
    }

    /// After writes were taken out of sled: the newest applied transaction
    /// is `basis` again, with `schema`, and the derived caches, which may
    /// hold what was taken out, start over.
    pub(super) fn rewind(&self, writer: &mut Writer, basis: EntityId, schema: Arc<Schema>) {
        self.inner.entities.clear();
        self.inner.referrers.reset(basis);
        self.inner.orders.reset(basis);
        self.inner.applied.store(basis, Ordering::Release);
        writer.schema = schema;
    }

    /// Marks the store as being imported into, durably, before the first
    /// imported transaction: a store found with the mark when opened holds
    /// part of an import (the process died, or the disk failed) and is
    /// refused rather than served half-filled.
    pub(super) fn begin_import(&self) -> Result<(), TransactError> {
        self.durability().takes_imports()?;
        self.inner.sled.insert(META_IMPORTING, &[] as &[u8])?;
        self.inner.sled.flush()?;
        Ok(())
    }

    /// Removes the mark once every imported transaction is durable.
    pub(super) fn end_import(&self) -> Result<(), StorageError> {
        self.inner.sled.remove(META_IMPORTING)?;
        self.inner.sled.flush()?;
        Ok(())
    }

    /// Puts a store an import has started on back to what a new store is:
    /// every key removed, genesis written again. Only for a store that was
    /// empty when the import began, which `import` requires.
    pub(super) fn reset_to_genesis(&self) -> Result<(), TransactError> {
        let mut writer = self.lock_writer();
        self.refuse_if_poisoned()?;
        self.inner.sled.clear()?;
        write_genesis(&self.inner.sled)?;
        let schema = Arc::new(bootstrap_schema());
        writer.next_id = GENESIS_TX + 1;
        writer.last_instant = 0;
        writer.log_sum = log::GENESIS_SUM;
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
    pub(super) fn apply_imported(
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
        prepare::check_unique(&db, tx_datoms)?;
        // Every id the store holds is below the writer's next id.
        prepare::check_cardinality(&db, schema, tx_datoms, writer.next_id)?;
        let written = Written {
            datoms: tx_datoms,
            tx,
            next_id: next_id.max(writer.next_id),
            instant,
            log_sum: None,
            unlogged: false,
        };
        self.write_batch(&writer, &written, schema)?;
        let changed = !Arc::ptr_eq(schema, &writer.schema);
        self.after_apply(&mut writer, &written, changed.then(|| schema.clone()));
        Ok(())
    }
}

/// One transaction as it is written: its datoms, and the writer's
/// bookkeeping after it.
pub(super) struct Written<'a> {
    pub(super) datoms: &'a [Datom],
    pub(super) tx: EntityId,
    pub(super) next_id: EntityId,
    pub(super) instant: i64,
    /// The sum of its log entry, when the store follows a log.
    pub(super) log_sum: Option<[u8; 32]>,
    /// Whether it is applied before the log holds it (this node decided
    /// it), so that its undo is kept on disk until the log does.
    pub(super) unlogged: bool,
}

/// The `(target, attribute)` pairs whose references `datoms` assert or
/// retract, for the referrer cache.
pub(super) fn references(datoms: &[Datom]) -> impl Iterator<Item = (EntityId, EntityId)> + '_ {
    datoms.iter().filter_map(|d| match d.v {
        Value::Ref(target) => Some((target, d.a)),
        _ => None,
    })
}

/// The attributes `after` keeps in AVET that `before` did not: those a
/// schema change has just indexed.
pub(super) fn newly_in_avet<'a>(before: &Schema, after: &'a Schema) -> Vec<&'a Arc<Attribute>> {
    if std::ptr::eq(before, after) {
        return Vec::new();
    }
    after
        .attributes()
        .into_iter()
        .filter(|a| a.in_avet() && !before.attribute(a.id).is_some_and(|old| old.in_avet()))
        .collect()
}
