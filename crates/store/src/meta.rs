//! The store's own keys in sled's default tree, beside the indexes: its
//! format, where the writer stands, the log it follows. With them, a new
//! store's first write (the format and the genesis transaction) and the
//! reading of them back. Everything that opens, writes or follows a store
//! reads these, so they sit below all of it.

use super::current;
use super::encoding::{Datom, META_PREFIX};
use super::error::StorageError;
use super::grouped;
use super::postings;
use super::schema::{self, Schema, GENESIS_TX};
use super::value::EntityId;

/// The on-disk format this build reads and writes. Bump it when keys or
/// values change (10: the groups' values packed, `packed`).
pub const FORMAT_VERSION: u32 = 10;

pub(super) const META_FORMAT: &[u8] = b"\x00format";
pub(super) const META_BASIS: &[u8] = b"\x00basis";
pub(super) const META_NEXT_ID: &[u8] = b"\x00next-id";
pub(super) const META_LAST_INSTANT: &[u8] = b"\x00last-instant";
pub(super) const META_IMPORTING: &[u8] = b"\x00importing";
/// The identity of the log the store follows, once one was attached.
pub(super) const META_LOG_ID: &[u8] = b"\x00log-id";
/// The chained sum of the last log entry applied (`log::LogEntry::sum`).
pub(super) const META_LOG_SUM: &[u8] = b"\x00log-sum";
/// How far the store's history was last summed again and found to be the
/// log's (`Store::check_history_against_sum`): the `t` (8 bytes) and the
/// sum there (32). A start sums again only what came after.
pub(super) const META_HISTORY_CHECKED: &[u8] = b"\x00history-checked";
/// Set by a failed flush's undo that could not clear every AVET chunk it
/// had to: the next open clears them all (`postings::clear_all`).
pub(super) const META_AVET_UNCLEARED: &[u8] = b"\x00avet-uncleared";

/// A new store: the format key, then the genesis transaction, atomically.
pub(super) fn write_genesis(sled: &sled::Db) -> Result<(), StorageError> {
    let datoms = schema::bootstrap_datoms();
    let schema = bootstrap_schema();
    let mut batch = sled::Batch::default();
    let avet = datoms.iter().filter_map(|datom| {
        let attribute = schema.attribute(datom.a).expect("bootstrap attribute");
        attribute.avet_key(datom)
    });
    for chunk in postings::updates(sled, avet)? {
        batch.insert(chunk.key, chunk.records);
    }
    let is_ref = |d: &Datom| schema.attribute(d.a).is_some_and(|a| a.is_ref());
    for (key, records) in grouped::entries(&datoms, is_ref, EntityId::MAX) {
        batch.insert(key, records);
    }
    let entries = current::updated_entries(&datoms, GENESIS_TX, |_| Ok(None))?;
    for block in current::blocks::Blocks::new(sled, 0).writes(entries)? {
        batch.insert(&block.key[..], block.value);
    }
    batch.insert(META_FORMAT, &FORMAT_VERSION.to_be_bytes());
    batch.insert(META_BASIS, &GENESIS_TX.to_be_bytes());
    batch.insert(META_NEXT_ID, &(GENESIS_TX + 1).to_be_bytes());
    batch.insert(META_LAST_INSTANT, &0u64.to_be_bytes());
    sled.apply_batch(batch)?;
    sled.flush()?;
    Ok(())
}

pub(super) fn read_meta_u64(sled: &sled::Db, key: &[u8]) -> Result<u64, StorageError> {
    debug_assert_eq!(key[0], META_PREFIX);
    let bytes = sled.get(key)?.ok_or_else(|| {
        StorageError::Corrupt(format!(
            "missing meta key {:?}",
            String::from_utf8_lossy(&key[1..])
        ))
    })?;
    let bytes: [u8; 8] = bytes
        .as_ref()
        .try_into()
        .map_err(|_| StorageError::Corrupt("meta value is not eight bytes".into()))?;
    Ok(u64::from_be_bytes(bytes))
}

/// The schema of a new store: the bootstrap attributes, which this build
/// defines, so they are always a valid schema.
pub(super) fn bootstrap_schema() -> Schema {
    Schema::from_datoms(&schema::bootstrap_datoms()).expect("the bootstrap schema is valid")
}

/// sled's default tree from the database handle.
pub(super) trait DerefTree {
    fn deref_tree(&self) -> sled::Tree;
}

impl DerefTree for sled::Db {
    /// The default tree, which holds every index.
    fn deref_tree(&self) -> sled::Tree {
        std::ops::Deref::deref(self).clone()
    }
}
