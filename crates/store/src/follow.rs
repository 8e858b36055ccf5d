//! Following a log: attaching one to a store (refusing a log that is not
//! the one the store followed, or that disagrees with what the store
//! applied), and catching up with the entries it has that the store has
//! not applied yet.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::durability::ThroughLog;
use super::encoding::{datom_key, Datom, Index};
use super::error::TransactError;
use super::follow_health::FollowReport;
use super::handle::Store;
use super::history_check::{history_checked_value, CHECK_AFTER_BATCH};
use super::log::{Log, LogEntry, LogError, LogNews, LogPosition, News, GENESIS_SUM};
use super::meta::{META_HISTORY_CHECKED, META_LOG_ID, META_LOG_SUM};
use super::schema::{DB_TX_INSTANT, GENESIS_TX};
use super::value::EntityId;
use super::writer::{Writer, Written};

/// Entries read from the log at a time while catching up.
const CATCH_UP_BATCH: usize = 500;

/// Keyspace entries copied into the log at a time, and their bytes: a
/// statement each, bounded whatever the pictures weigh.
const KEYSPACE_BATCH: usize = 500;
const KEYSPACE_BATCH_BYTES: usize = 16 << 20;

impl Store {
    /// Makes `log` the store's source of truth: from now on each transaction
    /// is appended to it before it is applied here, and the store catches up
    /// with what it holds. Returns how many entries were applied. The last
    /// step of an opening on a log (`StoreConfig::following`), never a
    /// change of mode in a store's life (but `push_to_log`'s).
    ///
    /// Refused, with nothing changed, when the store followed another log,
    /// when it has transactions of its own that no log has (it must be
    /// copied into the log instead), or when its newest transaction is not
    /// the log's at the same `t` (another site's log, or a log that lost or
    /// changed entries).
    pub(super) fn attach_log(&self, log: Arc<dyn Log>) -> Result<usize, TransactError> {
        let mut writer = self.lock_writer();
        self.refuse_if_poisoned()?;
        let mismatch = |why: String| TransactError::Log(LogError::Mismatch(why));
        if log.copying()? {
            return Err(mismatch(
                "a store is being copied into this log (forkful log push), or a copy was cut short: start nodes once it is done, or copy again into an empty database".into(),
            ));
        }
        match self.inner.sled.get(META_LOG_ID)? {
            Some(id) if id.as_ref() != log.identity().as_bytes() => {
                return Err(mismatch(format!(
                    "this store follows the log {}, not {}",
                    String::from_utf8_lossy(&id),
                    log.identity()
                )))
            }
            // What this node applied and crashed before the log held.
            Some(_) => {
                let taken = self.take_out_what_the_log_lacks(&mut writer, log.as_ref())?;
                if taken > 0 {
                    tracing::warn!(taken, "took out transactions this node applied that its log never held (it stopped before the log answered)");
                }
            }
            None if self.inner.applied.load(Ordering::Acquire) != GENESIS_TX => {
                return Err(mismatch(format!(
                    "this store has transactions of its own (up to {}) that the log does not: copy them into an empty log with `forkful log push`",
                    self.inner.applied.load(Ordering::Acquire)
                )))
            }
            None => {}
        }
        let basis = self.inner.applied.load(Ordering::Acquire);
        if basis != GENESIS_TX {
            match log.sum_at(basis)? {
                Some(sum) if sum == writer.log_sum => {
                    self.check_newest_against(&writer, log.as_ref(), basis)?;
                    self.check_history_against_sum(&writer)?;
                }
                Some(_) => {
                    return Err(mismatch(format!(
                        "this store's transaction {basis} is not the log's transaction {basis}: the store or the log was changed"
                    )))
                }
                None => {
                    return Err(mismatch(format!(
                        "the log has no transaction {basis}, which this store applied: it lost entries, or is another site's"
                    )))
                }
            }
        }
        self.inner
            .sled
            .insert(META_LOG_ID, log.identity().as_bytes())?;
        if self.inner.attached.set(ThroughLog { log }).is_err() {
            return Err(mismatch("the store follows a log already".into()));
        }
        drop(writer);
        self.sync()?;
        let applied = self.catch_up()?;
        // What was caught up is summed now, not at the next start.
        self.check_new_history(&self.lock_writer())?;
        // Caught up to the log's end, as of now.
        let basis = self.inner.applied.load(Ordering::Acquire);
        self.inner.follow_health.checked(basis, 0);
        Ok(applied)
    }

    /// Refuses a store whose transaction `basis`, the newest it applied,
    /// holds other datoms than the log's entry at `basis`: a store changed
    /// behind its log's back, whose sum (a meta key) was left as it was.
    /// Its older transactions are checked by their sums
    /// (`check_history_against_sum`).
    fn check_newest_against(
        &self,
        writer: &Writer,
        log: &dyn Log,
        basis: EntityId,
    ) -> Result<(), TransactError> {
        let keys = |datoms: &mut dyn Iterator<Item = Datom>| {
            let mut keys: Vec<Vec<u8>> = datoms.map(|d| datom_key(Index::Log, &d)).collect();
            keys.sort_unstable();
            keys
        };
        let theirs = log
            .entries_after(basis - 1, 1)?
            .into_iter()
            .find(|entry| entry.t == basis)
            .map(|entry| keys(&mut entry.datoms.into_iter()));
        let ours: Vec<Datom> = self
            .writer_db(writer)
            .log(basis, basis)
            .collect::<Result<_, _>>()?;
        if theirs != Some(keys(&mut ours.into_iter())) {
            return Err(LogError::Mismatch(format!(
                "this store's transaction {basis} holds other datoms than the log's transaction {basis}: the store was changed"
            ))
            .into());
        }
        Ok(())
    }

    /// Applies, in order, every entry the log has after the newest this
    /// store applied, and returns once they are durable here: how many.
    pub fn catch_up(&self) -> Result<usize, TransactError> {
        self.catch_up_to(EntityId::MAX)
    }

    /// Catches up until the store has applied `until` (or the log has no
    /// more): a node told of its own write, or of one it has applied,
    /// reads nothing, and one told of another's stops once it has it,
    /// without a read that finds nothing more. Both were a query of the
    /// log for every write, on every node (perf of a following node).
    fn catch_up_to(&self, until: EntityId) -> Result<usize, TransactError> {
        let Some(log) = self.durability().log() else {
            return Ok(0);
        };
        let mut applied = 0;
        loop {
            self.refuse_if_poisoned()?;
            // Read from the log without the writer: a write on this node
            // would otherwise wait out the round trip of every catch-up,
            // one per write on any node, most of them finding nothing.
            // From what the log is known to hold of this store's: what
            // this node applied beyond it may not be in the log.
            let fetched_after = self.lock_flush().durable;
            if fetched_after >= until {
                return Ok(applied);
            }
            let entries = log.entries_after(fetched_after, CATCH_UP_BATCH)?;
            if entries.is_empty() {
                return Ok(applied);
            }
            let mut writer = self.lock_writer();
            let mut state = self.lock_flush();
            if let Some(why) = &state.failed {
                return Err(TransactError::Poisoned(why.clone()));
            }
            if state.appending {
                // This node's own append may be what was read: wait for
                // its outcome, then read again.
                drop(writer);
                while state.appending {
                    state = self.wait_flushed(state);
                }
                continue;
            }
            // Meanwhile this node may have appended or caught up: what the
            // log holds of its is skipped, and entries read before, which
            // then cannot follow it, are read again. Entries that do not
            // follow an unmoved basis are the log's fault: apply_logged
            // refuses them.
            let logged = state.durable;
            let next: Vec<&LogEntry> = entries.iter().filter(|e| e.t > logged).collect();
            let moved = logged != fetched_after;
            if moved && next.first().is_none_or(|first| first.prev != logged) {
                continue;
            }
            if self.inner.applied.load(Ordering::Acquire) > logged {
                // Another node's entries follow what the log holds of this
                // one's: what this node applied on top cannot follow them.
                let lost = LogError::Moved { prev: logged };
                let taken_back = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    self.take_back_unlogged(&mut writer, &mut state, &lost, &[]);
                }));
                if taken_back.is_err() {
                    state.failed = Some("taking back what the log lacks panicked".into());
                }
                // A take-back that failed poisoned the store: nothing is
                // applied on top of what it left.
                if let Some(why) = &state.failed {
                    return Err(TransactError::Poisoned(why.clone()));
                }
            }
            drop(state);
            let (count, mut outcome) = self.apply_from_log(&mut writer, &next);
            applied += count;
            if outcome.is_ok() && count >= CHECK_AFTER_BATCH {
                outcome = self.check_new_history(&writer);
            }
            drop(writer);
            self.inner.flushed.notify_all();
            outcome?;
        }
    }

    /// Applies `next`, in order, until one fails, and shows readers what
    /// was applied (it is in the log): how many, and how it ended.
    fn apply_from_log(
        &self,
        writer: &mut Writer,
        next: &[&LogEntry],
    ) -> (usize, Result<(), TransactError>) {
        let (mut last, mut count) = (None, 0);
        let mut outcome = Ok(());
        for entry in next {
            outcome = self.apply_logged(writer, entry);
            if outcome.is_err() {
                break;
            }
            (last, count) = (Some(entry.t), count + 1);
        }
        if let Some(last) = last {
            let mut state = self.lock_flush();
            state.durable = state.durable.max(last);
            self.publish(&mut state);
        }
        (count, outcome)
    }

    /// Follows the log it is attached to until `stop` is set: catches up
    /// whenever the log has news, and at least every `poll`, so a notice
    /// lost on the way only delays. Returns when `stop` is set, or with
    /// the error that stopped it (a lost listener: make another).
    ///
    /// Each read to the log's end is recorded, with the log's head, and
    /// each failure, for health (`follow_report`).
    pub fn follow(
        &self,
        news: &mut dyn LogNews,
        poll: std::time::Duration,
        stop: &std::sync::atomic::AtomicBool,
    ) -> Result<(), TransactError> {
        self.following(news, poll, stop)
            .inspect_err(|error| self.note_follow_failure(error))
    }

    fn following(
        &self,
        news: &mut dyn LogNews,
        poll: std::time::Duration,
        stop: &std::sync::atomic::AtomicBool,
    ) -> Result<(), TransactError> {
        // What was appended before the listener started is caught up first.
        self.read_log_to_end()?;
        let mut read_to_end = std::time::Instant::now();
        while !stop.load(Ordering::Acquire) {
            match news.wait(poll)? {
                News::UpTo(t) if read_to_end.elapsed() < poll => {
                    self.catch_up_to(t)?;
                }
                // At least every `poll`, the log is read to its end: a
                // notice may have been lost.
                _ => {
                    read_to_end = std::time::Instant::now();
                    self.read_log_to_end()?;
                }
            };
        }
        Ok(())
    }

    /// Catches up to the log's end, then asks where its head is: recorded
    /// for health, so that `/healthz` asks the log nothing itself.
    fn read_log_to_end(&self) -> Result<(), TransactError> {
        self.catch_up()?;
        // What this node applied since, from the log or its own writes, is
        // summed now, while the writers wait (some 20 µs a transaction), so
        // that its next start has little to sum.
        self.check_new_history(&self.lock_writer())?;
        let position = self
            .log_position()
            .expect("read only while following a log")?;
        // Every transaction shown came from the log: a log that ends
        // before it lost what was acknowledged (a failover to a standby
        // that lacked it, a restore from an older backup). Writes decided
        // on it are refused; health must say so too.
        if position.head < position.shown {
            return Err(TransactError::Log(LogError::Mismatch(format!(
                "the log ends at transaction {}, before transaction {} that this node applied from it: \
                 the log lost transactions (a failover to a standby that lacked them, or a restore \
                 from an older backup); see DEPLOYING",
                position.head, position.shown
            ))));
        }
        self.inner
            .follow_health
            .checked(position.head, position.behind);
        Ok(())
    }

    /// Records that following the log failed with `error`, and writes it
    /// to the server's log when it starts and then once a minute.
    pub fn note_follow_failure(&self, error: &TransactError) {
        if self.inner.follow_health.failed(error.to_string()) {
            tracing::warn!(%error, "following the log: trying again every second");
        }
    }

    /// How following the log stands (`None` for a store that follows no
    /// log): read from memory, never from the log.
    pub fn follow_report(&self) -> Option<FollowReport> {
        self.durability().log()?;
        Some(self.inner.follow_health.report())
    }

    /// Since when, and why, the log is known out of reach (`None`: it
    /// answered its last call, or the store follows no log).
    pub fn log_out_of_reach(&self) -> Option<(std::time::Duration, String)> {
        let (since, why) = self.durability().log()?.out_of_reach()?;
        Some((since.elapsed(), why))
    }

    /// How far this store is behind its log. `None` for a store that
    /// follows no log.
    pub fn log_position(&self) -> Option<Result<LogPosition, TransactError>> {
        let log = self.durability().log()?;
        // What readers are shown: the published basis.
        let shown = self.db().basis();
        Some(
            log.position(shown)
                .map(|(head, behind)| LogPosition {
                    head,
                    shown,
                    behind,
                })
                .map_err(TransactError::from),
        )
    }

    /// Copies this store's whole history into `log`, which must be empty,
    /// one entry per transaction in order, and its keyspaces beside it,
    /// and makes the store follow it:
    /// how a site kept in one directory moves into a log. `progress` hears
    /// each transaction copied. Refused when the store follows a log
    /// already or the log has entries; a copy that fails part way leaves
    /// the store as it was (and the log holding a prefix of it, which a
    /// store with none of it can follow).
    pub fn push_to_log(
        &self,
        log: Arc<dyn Log>,
        progress: &mut dyn FnMut(EntityId),
    ) -> Result<usize, TransactError> {
        let mut writer = self.lock_writer();
        self.refuse_if_poisoned()?;
        let mismatch = |why: String| TransactError::Log(LogError::Mismatch(why));
        if self.inner.sled.contains_key(META_LOG_ID)? {
            return Err(mismatch("this store follows a log already".into()));
        }
        log.begin_copy()?;
        let mut copied = 0;
        let sum = self.each_history_entry(&writer, &mut |entry| {
            log.append_copied(entry)?;
            copied += 1;
            progress(entry.t);
            Ok(())
        })?;
        // The keyspaces too (sessions, password hashes, pictures), a
        // bounded batch at a time: they are the log's from now on.
        for name in self.local_keyspaces() {
            let keyspace = self.keyspace(&name)?;
            let mut batch: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
            let mut bytes = 0;
            for entry in keyspace.scan_prefix(b"") {
                let (key, value) = entry?;
                bytes += key.len() + value.len();
                batch.push((key.to_vec(), value.to_vec()));
                if batch.len() >= KEYSPACE_BATCH || bytes >= KEYSPACE_BATCH_BYTES {
                    log.keyspaces().put(&name, &std::mem::take(&mut batch))?;
                    bytes = 0;
                }
            }
            if !batch.is_empty() {
                log.keyspaces().put(&name, &batch)?;
            }
        }
        log.end_copy()?;
        let mut batch = sled::Batch::default();
        batch.insert(META_LOG_ID, log.identity().as_bytes());
        batch.insert(META_LOG_SUM, &sum[..]);
        // Its whole history was just read back and summed.
        let basis = self.inner.applied.load(Ordering::Acquire);
        batch.insert(META_HISTORY_CHECKED, history_checked_value(basis, &sum));
        self.inner.sled.apply_batch(batch)?;
        writer.log_sum = sum;
        if self.inner.attached.set(ThroughLog { log }).is_err() {
            unreachable!("a store that follows a log has its identity, refused above");
        }
        drop(writer);
        self.sync()?;
        Ok(copied)
    }

    /// Hands `each` every transaction of the store's history after its
    /// genesis, in order, as the log entry it is (or was copied as), and
    /// returns the last one's sum (the genesis sum for none): the entries
    /// are chained by sum from the first, as a log's are. A writer's next
    /// id after a transaction is the id of the one after it, and the
    /// store's own next id after the last, so each entry is made once the
    /// next one's id is known.
    fn each_history_entry(
        &self,
        writer: &Writer,
        each: &mut dyn FnMut(&LogEntry) -> Result<(), TransactError>,
    ) -> Result<[u8; 32], TransactError> {
        self.each_history_entry_after(writer, (GENESIS_TX, GENESIS_SUM), each)
    }

    /// `each_history_entry` for the transactions after `from`'s `t`, whose
    /// sum is `from`'s.
    pub(super) fn each_history_entry_after(
        &self,
        writer: &Writer,
        from: (EntityId, [u8; 32]),
        each: &mut dyn FnMut(&LogEntry) -> Result<(), TransactError>,
    ) -> Result<[u8; 32], TransactError> {
        let db = self.writer_db(writer).history();
        let (mut prev, mut sum) = from;
        let mut pending: Vec<Datom> = Vec::new();
        let mut hand_over = |datoms: Vec<Datom>, next_id: EntityId| -> Result<(), TransactError> {
            let t = datoms[0].tx;
            let instant = datoms
                .iter()
                .find(|d| d.e == t && d.a == DB_TX_INSTANT && d.added)
                .and_then(|d| d.v.as_instant())
                .unwrap_or(0);
            let entry = LogEntry::new(prev, &sum, t, next_id, instant, datoms);
            each(&entry)?;
            (prev, sum) = (t, entry.sum);
            Ok(())
        };
        for datom in db.log_after(from.0) {
            let datom = datom?;
            if datom.tx <= from.0 {
                continue;
            }
            if pending.first().is_some_and(|first| first.tx != datom.tx) {
                hand_over(std::mem::take(&mut pending), datom.tx)?;
            }
            pending.push(datom);
        }
        if !pending.is_empty() {
            hand_over(pending, writer.next_id)?;
        }
        Ok(sum)
    }

    /// Applies one log entry as it was first applied: its ids, its
    /// transaction and its instant. It was checked when it was decided; here
    /// it is checked to follow what the store holds, by `t` and by sum.
    fn apply_logged(&self, writer: &mut Writer, entry: &LogEntry) -> Result<(), TransactError> {
        let basis: EntityId = self.inner.applied.load(Ordering::Acquire);
        if entry.prev != basis || entry.sum != entry.sum_after(&writer.log_sum) {
            return Err(LogError::Mismatch(format!(
                "the log's transaction {} does not follow this store's {basis}",
                entry.t
            ))
            .into());
        }
        let schema = writer.schema.after(&entry.datoms)?.map(Arc::new);
        let written = Written {
            datoms: &entry.datoms,
            tx: entry.t,
            next_id: entry.next_id,
            instant: entry.instant,
            log_sum: Some(entry.sum),
            unlogged: false,
        };
        self.write_batch(writer, &written, schema.as_ref().unwrap_or(&writer.schema))?;
        self.after_apply(writer, &written, schema);
        self.inner.follow_health.applied();
        Ok(())
    }
}
