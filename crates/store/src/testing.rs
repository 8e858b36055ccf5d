//! Hooks for tests that look inside a store or make it fail, only with the
//! `testing` feature, never in a build of the site. Each is a `pub` item
//! here over a crate-private one, so that without the feature nothing of
//! them is public.

use super::{Datom, EntityId, Index, StorageError};

pub use super::group_commit::FlushFault;
pub use super::handle::RawEntry;

/// The size of sled's log segments the store opens with.
pub const SEGMENT_BYTES: usize = super::open::SEGMENT_BYTES;

/// Makes an open store follow `log`, as its opening on the log does last
/// (`StoreConfig::following`): for tests of the agreement checks on a
/// store already open (a temporary one cannot be opened again). Returns
/// how many of the log's entries it applied.
pub fn attach_log(
    store: &super::Store,
    log: std::sync::Arc<dyn super::Log>,
) -> Result<usize, super::TransactError> {
    store.attach_log(log)
}

/// The key `datom` has in `index`.
pub fn datom_key(index: Index, datom: &Datom) -> Vec<u8> {
    super::encoding::datom_key(index, datom)
}

/// The blocks of current facts (sixteen entities to a sled key), for
/// tests that damage one and see the store rebuild it.
pub mod current_blocks {
    use super::{EntityId, StorageError};
    use crate::current::blocks;

    /// The sled key of the block holding `e`.
    pub fn key(e: EntityId) -> [u8; 9] {
        blocks::key(e)
    }

    /// `e`'s entry in `block`, if it has one.
    pub fn entry(block: &sled::IVec, e: EntityId) -> Result<Option<sled::IVec>, StorageError> {
        blocks::entry(block, e)
    }

    /// `block` with the entries of `changed` put in.
    pub fn with_entries(
        block: Option<&[u8]>,
        changed: &[(EntityId, Vec<u8>)],
    ) -> Result<Vec<u8>, StorageError> {
        blocks::with_entries(block, changed)
    }

    /// `block` without `e`'s entry.
    pub fn without(block: &[u8], e: EntityId) -> Result<Vec<u8>, StorageError> {
        blocks::without(block, e)
    }
}
