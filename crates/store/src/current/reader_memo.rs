//! What one reader (a page's database value, `Db::reader`) has read of the
//! current-entity index, kept for the rest of its reads.
//!
//! A page reads the same few blocks again and again: a recipe's block for
//! the recipe, each of its ingredients and steps (its neighbours), the
//! first step of its lineage and the check of its slug; its parent's for
//! the lineage and the breadcrumb. Each read was a sled `get` (a descent
//! of the tree and a search of the leaf) and a copy of the entry, about 38
//! of them for a recipe page of a 100,000-recipe catalog, since most of
//! what a crawler's pass reads is not in the shared entity cache (counted
//! with uprobes during `scripts/crawl.sh`: 48 entity reads a page, 38 of
//! them sled `get`s; docs/journal/33-close-to-the-limit.md). The memo answers the repeats
//! from the reader's own last few blocks and entities.
//!
//! Why it is exact: a block read at any moment after the reader's value
//! was made holds each entity's facts as of its last change then; an
//! entry the reader uses has that change at or before its basis (else the
//! reader reads the datoms, `Db::current_entity`), so nothing changed the
//! entity between the two, and the entry is the entity at the basis
//! however much later it is used. A value made from another (`as_of`,
//! `witnessed`) shares its memo only at the same basis or an older one.
//!
//! Exact for this reader, but not current: a block kept here may be older
//! than a write made since. So each block keeps the entity cache's epoch
//! read just before it was read from sled, and what is offered to the
//! shared cache from it is offered as of that epoch: a write since then
//! keeps it out (`EntityCache::offer`). Offered as of the epoch of the
//! moment it was used, an entity a write changed after its block was read
//! was kept, and every later reader saw the old entity for good.

use std::sync::{Arc, Mutex, MutexGuard};

use sled::IVec;

use super::{blocks, Cached};
use crate::error::StorageError;
use crate::value::EntityId;

/// Blocks a memo keeps: a recipe's, its parent's, and two more (a
/// grandparent's, a fork's).
const BLOCKS: usize = 4;

/// Entities a memo keeps: more than a recipe page reads more than once.
const ENTITIES: usize = 32;

/// See the module's documentation.
#[derive(Default)]
pub(crate) struct ReaderMemo {
    kept: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    /// Each block by its first entity id, with the entity cache's epoch
    /// just before it was read; the oldest replaced first.
    blocks: Vec<(EntityId, IVec, u64)>,
    next_block: usize,
    entities: Vec<(EntityId, Arc<Cached>)>,
    next_entity: usize,
}

impl ReaderMemo {
    fn kept(&self) -> MutexGuard<'_, Kept> {
        // Nothing here can be left half-changed: a poisoned memo is whole.
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Entity `e` as this reader read it before, if the memo still has it.
    pub(crate) fn entity(&self, e: EntityId) -> Option<Arc<Cached>> {
        let kept = self.kept();
        kept.entities
            .iter()
            .find(|(id, _)| *id == e)
            .map(|(_, cached)| cached.clone())
    }

    /// Keeps `cached`, entity `e` as read now.
    pub(crate) fn keep_entity(&self, e: EntityId, cached: Arc<Cached>) {
        let mut kept = self.kept();
        let Kept {
            entities,
            next_entity,
            ..
        } = &mut *kept;
        put(entities, next_entity, ENTITIES, (e, cached));
    }

    /// Entity `e`'s entry, from its block as this reader read it before,
    /// or from `tree` (then kept for the next read of the block), with the
    /// entity cache's epoch just before the block was read from sled:
    /// `epoch` reads it now, for a block read now.
    pub(crate) fn entry(
        &self,
        tree: &sled::Tree,
        e: EntityId,
        epoch: impl FnOnce() -> u64,
    ) -> Result<Option<(IVec, u64)>, StorageError> {
        let first = blocks::first(e);
        let memo = self
            .kept()
            .blocks
            .iter()
            .find(|(id, _, _)| *id == first)
            .map(|(_, block, read_at)| (block.clone(), *read_at));
        let (block, read_at) = match memo {
            Some(kept) => kept,
            None => {
                let read_at = epoch();
                match tree.get(blocks::key(e))? {
                    Some(block) => {
                        let mut kept = self.kept();
                        let Kept {
                            blocks, next_block, ..
                        } = &mut *kept;
                        put(blocks, next_block, BLOCKS, (first, block.clone(), read_at));
                        (block, read_at)
                    }
                    None => return Ok(None),
                }
            }
        };
        Ok(blocks::entry(&block, e)?.map(|entry| (entry, read_at)))
    }
}

/// Puts `item` into `ring` (at most `size` items), over the oldest once full.
fn put<T>(ring: &mut Vec<T>, next: &mut usize, size: usize, item: T) {
    if ring.is_empty() {
        // Once, not grown by doubling: most readers fill it.
        ring.reserve_exact(size);
    }
    if ring.len() < size {
        ring.push(item);
    } else {
        ring[*next] = item;
        *next = (*next + 1) % size;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_keeps_the_newest_items() {
        let (mut ring, mut next) = (Vec::new(), 0);
        for item in 0..10 {
            put(&mut ring, &mut next, 4, item);
        }
        ring.sort();
        assert_eq!(ring, [6, 7, 8, 9]);
    }

    #[test]
    fn a_block_is_read_from_sled_once_until_four_others_were_read() {
        let db = sled::Config::new().temporary(true).open().unwrap();
        let tree = db.open_tree("t").unwrap();
        // Entity 16 is alone in its block (16 to 31), at place 0.
        let entry = [7u8; 12];
        let block = blocks::with_entries(None, &[(16, entry.to_vec())]).unwrap();
        tree.insert(blocks::key(16), block).unwrap();
        let memo = ReaderMemo::default();
        // Entity `e`'s entry, and the epoch its block was read at, with
        // the epoch `now`.
        let read = |e: u64, now: u64| {
            memo.entry(&tree, e, || now)
                .unwrap()
                .map(|(entry, at)| (entry.to_vec(), at))
        };
        assert_eq!(read(16, 5), Some((entry.to_vec(), 5)));
        // Gone from sled, the memo still has it, as of when it was read:
        // it is read once.
        tree.remove(blocks::key(16)).unwrap();
        assert_eq!(read(16, 9), Some((entry.to_vec(), 5)));
        assert_eq!(read(17, 9), None, "not in the block");
        // Four other blocks read: the first is read from sled again.
        for e in [32u64, 48, 64, 80] {
            tree.insert(
                blocks::key(e),
                blocks::with_entries(None, &[(e, vec![1; 12])]).unwrap(),
            )
            .unwrap();
            memo.entry(&tree, e, || 0).unwrap();
        }
        assert_eq!(memo.entry(&tree, 16, || 0).unwrap(), None);
    }
}
