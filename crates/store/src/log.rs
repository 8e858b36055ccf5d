//! A log beside the store that holds the truth: when one is attached
//! (`StoreConfig::following`), each transaction is appended to it before it is
//! applied to sled, and the store catches up from it; sled is then an index
//! of the log, which can be rebuilt from it.
//!
//! The store knows a log only through `Log`; the `forkful-postgres-log` crate keeps one in
//! PostgreSQL. An entry carries its transaction's datoms in the log index's
//! key encoding, and a sum that chains it to the entry before it, so a store
//! that applied another transaction at some `t` (another log, or a log that
//! was changed) is told apart from one that is merely behind.

use blake2::digest::consts::U32;
use blake2::{Blake2b, Digest};

use super::encoding::{datom_key, decode_datom, Datom, Index};
pub use super::error::LogError;
use super::error::StorageError;
use super::value::{EntityId, GENESIS_TX};

/// The sum a log's first entry chains to.
pub const GENESIS_SUM: [u8; 32] = [0; 32];

/// One transaction in the log: everything a node needs to apply it as it
/// was first applied, the ids and the instant included.
#[derive(Debug, Clone, PartialEq)]
pub struct LogEntry {
    /// The transaction, which is the basis after it.
    pub t: EntityId,
    /// The entry it follows: the basis it was decided on.
    pub prev: EntityId,
    /// The writer's next free id after it.
    pub next_id: EntityId,
    /// Its `:db/txInstant`, in milliseconds.
    pub instant: i64,
    pub datoms: Vec<Datom>,
    /// The chained sum: of the entry before's sum and this entry's fields.
    pub sum: [u8; 32],
}

impl LogEntry {
    /// An entry after the one whose sum is `prev_sum`, its sum computed.
    pub fn new(
        prev: EntityId,
        prev_sum: &[u8; 32],
        t: EntityId,
        next_id: EntityId,
        instant: i64,
        datoms: Vec<Datom>,
    ) -> LogEntry {
        let mut entry = LogEntry {
            t,
            prev,
            next_id,
            instant,
            datoms,
            sum: GENESIS_SUM,
        };
        entry.sum = entry.sum_after(prev_sum);
        entry
    }

    /// The datoms as stored in a log: each its log-index key, after the
    /// key's length as four bytes.
    pub fn encoded_datoms(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.datoms.len() * 48);
        for datom in &self.datoms {
            let key = datom_key(Index::Log, datom);
            out.extend_from_slice(&(key.len() as u32).to_be_bytes());
            out.extend_from_slice(&key);
        }
        out
    }

    /// An entry read back from a log, its datoms decoded and each checked
    /// to belong to transaction `t`.
    pub fn decode(
        t: EntityId,
        prev: EntityId,
        next_id: EntityId,
        instant: i64,
        datoms: &[u8],
        sum: &[u8],
    ) -> Result<LogEntry, StorageError> {
        let corrupt = |why: &str| StorageError::Corrupt(format!("log entry {t}: {why}"));
        let sum: [u8; 32] = sum
            .try_into()
            .map_err(|_| corrupt("its sum is not 32 bytes"))?;
        let mut decoded = Vec::new();
        let mut rest = datoms;
        while !rest.is_empty() {
            let (length, after) = rest
                .split_first_chunk::<4>()
                .ok_or_else(|| corrupt("a datom's length is cut short"))?;
            let length = u32::from_be_bytes(*length) as usize;
            if after.len() < length {
                return Err(corrupt("a datom is cut short"));
            }
            let datom = decode_datom(Index::Log, &after[..length])?;
            if datom.tx != t {
                return Err(corrupt("a datom of another transaction"));
            }
            decoded.push(datom);
            rest = &after[length..];
        }
        if t <= prev || prev < GENESIS_TX || next_id <= t {
            return Err(corrupt("its t, prev and next id are out of order"));
        }
        Ok(LogEntry {
            t,
            prev,
            next_id,
            instant,
            datoms: decoded,
            sum,
        })
    }

    /// The sum of this entry after the entry whose sum is `prev_sum`.
    pub fn sum_after(&self, prev_sum: &[u8; 32]) -> [u8; 32] {
        let mut hasher = Blake2b::<U32>::new();
        hasher.update(prev_sum);
        for n in [self.t, self.prev, self.next_id, self.instant as u64] {
            hasher.update(n.to_be_bytes());
        }
        hasher.update(self.encoded_datoms());
        hasher.finalize().into()
    }
}

/// Where a store stands against the log it follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogPosition {
    /// The log's newest transaction.
    pub head: EntityId,
    /// The newest transaction the store shows its readers.
    pub shown: EntityId,
    /// Transactions in the log the store does not show yet.
    pub behind: u64,
}

/// Where the truth is kept, when it is not this store's own directory.
pub trait Log: Send + Sync {
    /// The log's identity, fixed when it was made: a store that followed
    /// one log never follows another.
    fn identity(&self) -> &str;

    /// Appends `entries` (the first after its `prev`, each after the one
    /// before it) durably and together, all or none, or refuses with
    /// `Moved` when some entry follows the first's `prev` already. One
    /// commit for many transactions is what lets a node's writes keep up
    /// with a store on its own (Datomic's transactor batches the same way).
    /// Nothing is acknowledged to anyone before this returns.
    fn append(&self, entries: &[LogEntry]) -> Result<(), LogError>;

    /// At most `limit` entries after transaction `t`, oldest first.
    fn entries_after(&self, t: EntityId, limit: usize) -> Result<Vec<LogEntry>, LogError>;

    /// The sum of the entry at `t`, if the log has one.
    fn sum_at(&self, t: EntityId) -> Result<Option<[u8; 32]>, LogError>;

    /// The newest entry's `t` (genesis's for an empty log), and how many
    /// entries come after `t`: ids are shared by transactions and the
    /// entities they make, so the difference of two `t`s counts neither.
    fn position(&self, t: EntityId) -> Result<(EntityId, u64), LogError>;

    /// A listener for news of entries appended from now on, by any node.
    fn listen(&self) -> Result<Box<dyn LogNews>, LogError>;

    /// Marks the log as being filled by a copy of a store (`log push`), if
    /// it is empty and no other copy is under way: until `end_copy`, no
    /// store attaches to it and no node appends to it but the copy.
    fn begin_copy(&self) -> Result<(), LogError>;

    /// Appends one entry of the copy begun with `begin_copy`.
    fn append_copied(&self, entry: &LogEntry) -> Result<(), LogError>;

    /// Ends the copy: the log is open to every node.
    fn end_copy(&self) -> Result<(), LogError>;

    /// Whether a copy into the log is under way (or was cut short).
    fn copying(&self) -> Result<bool, LogError>;

    /// The keyspaces (`Store::keyspace`) of a store that follows the log
    /// are the log's, shared by every node: what is not history (password
    /// hashes, sessions, pictures) is kept beside it. Each write is durable
    /// when it returns.
    fn keyspaces(&self) -> &dyn SharedKeyspaces;

    /// Since when, and why, the log is known out of reach: its calls then
    /// fail at once until it answers again. `None` by default: a log that
    /// does not keep track is asked each time.
    fn out_of_reach(&self) -> Option<(std::time::Instant, String)> {
        None
    }
}

/// A keyspace's key and its value.
pub type KeyValue = (Vec<u8>, Vec<u8>);

/// Keyspaces kept beside a log, for every node: the operations of
/// `Keyspace`, each on keyspace `space`.
pub trait SharedKeyspaces: Send + Sync {
    /// The value of each of `keys`, in their order: one round trip, where
    /// a caller needs several keys at once.
    fn get_many(&self, space: &str, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, LogError>;
    /// Sets every key to its value, all or none.
    fn put(&self, space: &str, entries: &[KeyValue]) -> Result<(), LogError>;
    /// Sets `key` to `new` (`None`: removes it) only if it holds `old`
    /// (`None`: absent) now; whether it did.
    fn swap(
        &self,
        space: &str,
        key: &[u8],
        old: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> Result<bool, LogError>;
    /// Removes `keys`, all or none; how many were there.
    fn remove(&self, space: &str, keys: &[Vec<u8>]) -> Result<usize, LogError>;
    /// Every key and value starting with `prefix`, in key order.
    fn scan(&self, space: &str, prefix: &[u8]) -> Result<Vec<KeyValue>, LogError>;
    /// The first `most` keys from `start` (included) to `end` (not), with
    /// their values, in key order.
    fn scan_range(
        &self,
        space: &str,
        start: &[u8],
        end: &[u8],
        most: usize,
    ) -> Result<Vec<KeyValue>, LogError>;
}

/// Word that a log has new entries.
pub trait LogNews: Send {
    /// Waits until news comes or `within` passes. An error means the
    /// listener is lost: make another.
    fn wait(&mut self, within: std::time::Duration) -> Result<News, LogError>;
}

/// What a wait for a log's news heard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum News {
    /// Nothing within the wait.
    Quiet,
    /// Entries were appended, up to this `t` at least.
    UpTo(EntityId),
    /// Entries were appended, how far is not known.
    Appended,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    fn datoms(t: EntityId) -> Vec<Datom> {
        vec![
            Datom {
                e: t,
                a: 8,
                v: Value::Instant(1_000),
                tx: t,
                added: true,
            },
            Datom {
                e: t + 1,
                a: 7,
                v: Value::from("a doc, with ünïcode"),
                tx: t,
                added: true,
            },
        ]
    }

    #[test]
    fn an_entry_reads_back_as_it_was_written() {
        let entry = LogEntry::new(GENESIS_TX, &GENESIS_SUM, 33, 35, 1_000, datoms(33));
        let back = LogEntry::decode(
            entry.t,
            entry.prev,
            entry.next_id,
            entry.instant,
            &entry.encoded_datoms(),
            &entry.sum,
        )
        .unwrap();
        assert_eq!(back, entry);
        assert_eq!(back.sum_after(&GENESIS_SUM), entry.sum);
    }

    #[test]
    fn the_sum_chains_each_entry_to_the_one_before() {
        let first = LogEntry::new(GENESIS_TX, &GENESIS_SUM, 33, 35, 1_000, datoms(33));
        let second = LogEntry::new(33, &first.sum, 35, 37, 2_000, datoms(35));
        let elsewhere = LogEntry::new(33, &[1; 32], 35, 37, 2_000, datoms(35));
        assert_ne!(second.sum, elsewhere.sum, "the same entry after another");
        let mut changed = datoms(35);
        changed[1].v = Value::from("another doc");
        let other = LogEntry::new(33, &first.sum, 35, 37, 2_000, changed);
        assert_ne!(second.sum, other.sum, "another entry after the same");
    }

    #[test]
    fn a_damaged_entry_is_refused() {
        let entry = LogEntry::new(GENESIS_TX, &GENESIS_SUM, 33, 35, 1_000, datoms(33));
        let bytes = entry.encoded_datoms();
        let decode =
            |t, bytes: &[u8]| LogEntry::decode(t, GENESIS_TX, 35, 1_000, bytes, &entry.sum);
        assert!(decode(33, &bytes[..bytes.len() - 1]).is_err(), "cut short");
        assert!(decode(34, &bytes).is_err(), "datoms of another transaction");
        assert!(LogEntry::decode(33, GENESIS_TX, 35, 1_000, &bytes, &[0; 8]).is_err());
        assert!(LogEntry::decode(33, 33, 35, 1_000, &bytes, &entry.sum).is_err());
    }
}
