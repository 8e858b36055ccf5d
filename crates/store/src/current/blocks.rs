//! How the current-entity entries are stored: the entries of sixteen
//! neighbouring entity ids under one sled key.
//!
//! sled 0.34's memory is per page (about 250 bytes each, cached or not;
//! docs/journal/13-kept-pages.md), and a key per entity was 1.41 million keys at
//! 100,000 recipes, a quarter of the store's. Ids are given out in order,
//! and a transaction's own id, the recipe it makes and that recipe's
//! ingredients and steps are neighbours: a block is about one recipe, and
//! a page reading a recipe with its components reads one or two blocks
//! instead of fifteen keys. The entity cache still keeps each entity's
//! entry alone (`Cached` copies it out of its block).
//!
//! A block's key is `PREFIX` and the block's first entity id. Its value
//! is, for each entity of the block with an entry, in id order: the
//! entity's place in the block (1 byte), the entry's length (4) and the
//! entry. A transaction rewrites the blocks of the entities it touches,
//! inside the single writer, on the latest block, in its atomic batch;
//! the batch that undoes it keeps the blocks' old bytes.

use std::collections::BTreeMap;

use sled::IVec;

use super::PREFIX;
use crate::error::StorageError;
use crate::value::EntityId;

/// Entities to a block: a power of two.
pub(crate) const BLOCK: u64 = 16;

/// The first entity id of `e`'s block.
pub(super) fn first(e: EntityId) -> EntityId {
    e & !(BLOCK - 1)
}

/// The key of `e`'s block.
pub(crate) fn key(e: EntityId) -> [u8; 9] {
    let mut key = [0u8; 9];
    key[0] = PREFIX;
    key[1..].copy_from_slice(&first(e).to_be_bytes());
    key
}

/// The first entity id of the block under `key`.
#[cfg(any(test, feature = "testing"))]
pub(crate) fn block_first(key: &[u8]) -> Result<EntityId, StorageError> {
    match key.get(1..).map(<[u8; 8]>::try_from) {
        Some(Ok(id)) if key[0] == PREFIX && u64::from_be_bytes(id) % BLOCK == 0 => {
            Ok(u64::from_be_bytes(id))
        }
        _ => Err(corrupt("key", key)),
    }
}

fn corrupt(what: &str, bytes: &[u8]) -> StorageError {
    let shown = &bytes[..bytes.len().min(16)];
    StorageError::Corrupt(format!("a current-entity block {what}: {shown:02x?}"))
}

/// The entries of a block, each with its entity's place in the block.
pub(crate) fn entries(block: &[u8]) -> Entries<'_> {
    Entries {
        block,
        at: 0,
        last: None,
    }
}

pub(crate) struct Entries<'a> {
    block: &'a [u8],
    at: usize,
    /// The place before, which the next must be past.
    last: Option<u8>,
}

impl Entries<'_> {
    /// The next entry's place, and where its bytes are in the block.
    fn next_span(&mut self) -> Option<Result<(u8, std::ops::Range<usize>), StorageError>> {
        if self.at == self.block.len() {
            return None;
        }
        let header = self.block.get(self.at..self.at + 5).and_then(|h| {
            let len = u32::from_be_bytes(h[1..].try_into().ok()?) as usize;
            let start = self.at + 5;
            let in_order = h[0] < BLOCK as u8 && self.last.is_none_or(|last| h[0] > last);
            let fits = start
                .checked_add(len)
                .is_some_and(|end| end <= self.block.len());
            (in_order && fits).then_some((h[0], start, len))
        });
        let Some((place, start, len)) = header else {
            self.at = self.block.len();
            return Some(Err(corrupt("value", self.block)));
        };
        self.at = start + len;
        self.last = Some(place);
        Some(Ok((place, start..start + len)))
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = Result<(u8, &'a [u8]), StorageError>;

    fn next(&mut self) -> Option<Self::Item> {
        let block = self.block;
        self.next_span()
            .map(|span| span.map(|(place, range)| (place, &block[range])))
    }
}

/// Entity `e`'s entry in `block` (the block of `e`), sharing its bytes.
pub(crate) fn entry(block: &IVec, e: EntityId) -> Result<Option<IVec>, StorageError> {
    let place = (e - first(e)) as u8;
    let mut spans = entries(block);
    while let Some(span) = spans.next_span() {
        let (found, range) = span?;
        if found == place {
            return Ok(Some(block.subslice(range.start, range.len())));
        }
    }
    Ok(None)
}

/// `block` (or a new one, for `None`) with the entries of `changed` (all
/// of the block's entities) put in.
pub(crate) fn with_entries(
    block: Option<&[u8]>,
    changed: &[(EntityId, Vec<u8>)],
) -> Result<Vec<u8>, StorageError> {
    let mut all: BTreeMap<u8, &[u8]> = BTreeMap::new();
    if let Some(block) = block {
        for entry in entries(block) {
            let (place, bytes) = entry?;
            all.insert(place, bytes);
        }
    }
    for (e, entry) in changed {
        all.insert((e - first(*e)) as u8, entry);
    }
    let mut out = Vec::with_capacity(all.values().map(|entry| 5 + entry.len()).sum());
    for (place, entry) in all {
        push_entry(&mut out, place, entry);
    }
    Ok(out)
}

/// Appends one entry to a block being written: its place, length, bytes.
fn push_entry(block: &mut Vec<u8>, place: u8, entry: &[u8]) {
    block.push(place);
    block.extend_from_slice(&(entry.len() as u32).to_be_bytes());
    block.extend_from_slice(entry);
}

/// `block` without entity `e`'s entry: for tests that tamper with a
/// store to show that `verify_current_entries` notices.
#[cfg(any(test, feature = "testing"))]
pub(crate) fn without(block: &[u8], e: EntityId) -> Result<Vec<u8>, StorageError> {
    let place = (e - first(e)) as u8;
    let mut out = Vec::with_capacity(block.len());
    for entry in entries(block) {
        let (found, bytes) = entry?;
        if found != place {
            push_entry(&mut out, found, bytes);
        }
    }
    Ok(out)
}

/// One block a transaction writes: its key, new bytes, and old bytes
/// (`None`: it is new), for the batch that undoes it.
pub(crate) struct BlockWrite {
    pub key: [u8; 9],
    pub value: Vec<u8>,
    pub old: Option<IVec>,
}

/// The blocks one transaction reads and rewrites, each read from sled
/// once. Only for the writer, whose transactions are one at a time.
pub(crate) struct Blocks<'a> {
    tree: &'a sled::Tree,
    /// Entities from here on are made by this transaction: a block that
    /// starts there has nothing to read (a read per new entity was 4% of
    /// a seed, perf at 8,000 recipes).
    fresh_from: EntityId,
    read: BTreeMap<EntityId, Option<IVec>>,
}

impl<'a> Blocks<'a> {
    pub(crate) fn new(tree: &'a sled::Tree, fresh_from: EntityId) -> Blocks<'a> {
        Blocks {
            tree,
            fresh_from,
            read: BTreeMap::new(),
        }
    }

    /// The block starting at `first`, as the transaction found it.
    fn block(&mut self, first: EntityId) -> Result<Option<IVec>, StorageError> {
        if first >= self.fresh_from {
            return Ok(None);
        }
        if let Some(block) = self.read.get(&first) {
            return Ok(block.clone());
        }
        let block = self.tree.get(key(first))?;
        self.read.insert(first, block.clone());
        Ok(block)
    }

    /// Entity `e`'s entry as the transaction found it.
    pub(crate) fn entry(&mut self, e: EntityId) -> Result<Option<IVec>, StorageError> {
        if e >= self.fresh_from {
            return Ok(None);
        }
        match self.block(first(e))? {
            Some(block) => entry(&block, e),
            None => Ok(None),
        }
    }

    /// The blocks that hold the new `entries`, rewritten.
    pub(crate) fn writes(
        mut self,
        entries: Vec<(EntityId, Vec<u8>)>,
    ) -> Result<Vec<BlockWrite>, StorageError> {
        let mut by_block: BTreeMap<EntityId, Vec<(EntityId, Vec<u8>)>> = BTreeMap::new();
        for (e, entry) in entries {
            by_block.entry(first(e)).or_default().push((e, entry));
        }
        let mut out = Vec::with_capacity(by_block.len());
        for (block_first, changed) in by_block {
            let old = self.block(block_first)?;
            let value = with_entries(old.as_deref(), &changed)?;
            out.push(BlockWrite {
                key: key(block_first),
                value,
                old,
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entity `e`'s entry, read from `tree` (as `ReaderMemo::entry` reads it).
    fn read(tree: &sled::Tree, e: EntityId) -> Result<Option<IVec>, StorageError> {
        match tree.get(key(e))? {
            Some(block) => entry(&block, e),
            None => Ok(None),
        }
    }

    #[test]
    fn a_block_holds_its_entities_entries_apart_and_in_place() {
        let tree = sled::Config::new().temporary(true).open().unwrap();
        let write = |entries: Vec<(EntityId, Vec<u8>)>, fresh_from| {
            for block in Blocks::new(&tree, fresh_from).writes(entries).unwrap() {
                tree.insert(block.key, block.value).unwrap();
            }
        };
        // 15..=33: the end of one block, a whole one and the start of a
        // third, as a transaction's new entities may be.
        write(
            (15..=33).map(|e| (e, vec![e as u8; e as usize])).collect(),
            15,
        );
        assert_eq!(tree.len(), 3);
        for e in 15..=33 {
            assert_eq!(read(&tree, e).unwrap().unwrap(), vec![e as u8; e as usize]);
        }
        assert_eq!(read(&tree, 14).unwrap(), None);
        assert_eq!(read(&tree, 34).unwrap(), None);
        // A later transaction rewrites one entity and adds another: the
        // rest of the block is kept.
        write(vec![(20, b"new".to_vec()), (36, b"next".to_vec())], 36);
        assert_eq!(read(&tree, 20).unwrap().unwrap(), b"new"[..]);
        assert_eq!(read(&tree, 21).unwrap().unwrap(), vec![21u8; 21]);
        assert_eq!(read(&tree, 36).unwrap().unwrap(), b"next"[..]);
        assert_eq!(read(&tree, 33).unwrap().unwrap(), vec![33u8; 33]);
        // Taken out again, for the tamper tests.
        let block = tree.get(key(20)).unwrap().unwrap();
        let without = without(&block, 20).unwrap();
        assert_eq!(entry(&IVec::from(without.clone()), 20).unwrap(), None);
        assert_eq!(entries(&without).count(), 15);
        assert_eq!(block_first(&key(20)).unwrap(), 16);
    }

    #[test]
    fn a_block_cut_short_is_corrupt_not_a_panic() {
        let block = with_entries(None, &[(3, b"abcdef".to_vec())]).unwrap();
        for len in 1..block.len() {
            let cut = IVec::from(&block[..len]);
            assert!(entry(&cut, 4).is_err(), "cut at {len}");
        }
        assert!(block_first(&[PREFIX, 0, 0, 0, 0, 0, 0, 0, 3]).is_err());
        // A place twice, or out of order, is corrupt too.
        let twice = [&block[..], &block[..]].concat();
        assert!(entry(&IVec::from(twice), 4).is_err());
    }
}
