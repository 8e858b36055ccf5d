//! An order's keys, kept in chunks so that a write copies one chunk and
//! the list of chunks, not every key.
//!
//! An order is copied on write (readers holding the one before keep it).
//! Kept as one vector, every transaction that touched a cached attribute
//! copied all of its keys, and dropped the copy before: on a node
//! following the log at 20 writes a second over 10,000 recipes, copying
//! and dropping the orders was about 15% of the node's CPU (perf,
//! docs/journal/30-log.md), and it grows with the catalog. In chunks of at
//! most `2 * CHUNK` keys, a write copies the chunk it edits and the
//! pointers to the others.

use std::sync::Arc;

/// Keys a chunk is built with; one grown to twice this is split.
const CHUNK: usize = 512;

/// A key of an order.
pub(crate) type Key = Arc<[u8]>;

/// See the module's documentation. Sorted; positions count from the first
/// key of the first chunk, as in one vector.
#[derive(Debug, Clone, Default)]
pub(crate) struct OrderKeys {
    /// Never an empty one.
    chunks: Vec<Arc<Vec<Key>>>,
    /// Where each chunk starts among all the keys.
    starts: Vec<usize>,
    len: usize,
}

impl OrderKeys {
    /// `keys`, sorted, in chunks.
    pub(crate) fn from_sorted(keys: Vec<Key>) -> OrderKeys {
        let mut order = OrderKeys {
            chunks: keys
                .chunks(CHUNK)
                .map(|chunk| Arc::new(chunk.to_vec()))
                .collect(),
            ..OrderKeys::default()
        };
        order.count_from(0);
        order
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The key at position `at`.
    pub(crate) fn get(&self, at: usize) -> Option<&Key> {
        if at >= self.len {
            return None;
        }
        let chunk = self.starts.partition_point(|&start| start <= at) - 1;
        self.chunks[chunk].get(at - self.starts[chunk])
    }

    /// The first position whose key is not `before` (every key `before`
    /// comes first, as for a slice's `partition_point`).
    pub(crate) fn partition_point(&self, before: impl Fn(&Key) -> bool) -> usize {
        let chunk = self.first_chunk_not_before(&before);
        match self.chunks.get(chunk) {
            Some(keys) => self.starts[chunk] + keys.partition_point(before),
            None => self.len,
        }
    }

    #[cfg(test)]
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Key> {
        self.chunks.iter().flat_map(|chunk| chunk.iter())
    }

    /// Puts `key` where `before` says it goes: in place of the key there
    /// when `same` says it is that key's, else before it.
    pub(crate) fn put(
        &mut self,
        key: Key,
        before: impl Fn(&Key) -> bool,
        same: impl Fn(&Key) -> bool,
    ) {
        let Some(chunk) = self.chunk_for(&before) else {
            self.chunks.push(Arc::new(vec![key]));
            self.count_from(0);
            return;
        };
        let keys = Arc::make_mut(&mut self.chunks[chunk]);
        let at = keys.partition_point(&before);
        match keys.get(at) {
            Some(there) if same(there) => keys[at] = key,
            _ => {
                keys.insert(at, key);
                if keys.len() >= 2 * CHUNK {
                    let second = keys.split_off(CHUNK);
                    self.chunks.insert(chunk + 1, Arc::new(second));
                }
                self.count_from(chunk);
            }
        }
    }

    /// Takes out the key where `before` says it would be, if `same` says
    /// it is that key.
    pub(crate) fn remove(&mut self, before: impl Fn(&Key) -> bool, same: impl Fn(&Key) -> bool) {
        let Some(chunk) = self.chunk_for(&before) else {
            return;
        };
        let at = self.chunks[chunk].partition_point(&before);
        if !self.chunks[chunk].get(at).is_some_and(same) {
            return;
        }
        let keys = Arc::make_mut(&mut self.chunks[chunk]);
        keys.remove(at);
        if keys.is_empty() {
            self.chunks.remove(chunk);
        }
        self.count_from(chunk);
    }

    /// The chunk a key goes in: the first whose last key is not before
    /// it, or the last chunk for a key after every key. `None` when there
    /// is no chunk.
    fn chunk_for(&self, before: &impl Fn(&Key) -> bool) -> Option<usize> {
        let last = self.chunks.len().checked_sub(1)?;
        Some(self.first_chunk_not_before(before).min(last))
    }

    /// The first chunk whose last key is not `before` (the number of
    /// chunks when every key is).
    fn first_chunk_not_before(&self, before: &impl Fn(&Key) -> bool) -> usize {
        self.chunks
            .partition_point(|chunk| chunk.last().is_some_and(before))
    }

    /// Counts the chunks' starts again from chunk `from` on.
    fn count_from(&mut self, from: usize) {
        self.starts.truncate(from);
        let mut start = match from {
            0 => 0,
            _ => self.starts[from - 1] + self.chunks[from - 1].len(),
        };
        for chunk in &self.chunks[from..] {
            self.starts.push(start);
            start += chunk.len();
        }
        self.len = start;
    }
}

impl std::ops::Index<usize> for OrderKeys {
    type Output = Key;

    fn index(&self, at: usize) -> &Key {
        self.get(at).expect("a position within the order")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key(n: u16) -> Key {
        n.to_be_bytes().to_vec().into()
    }

    proptest! {
        /// Any run of puts and removes leaves the keys a sorted vector
        /// edited the same way would hold, each position and each
        /// partition point the same, and the order it was copied from as
        /// it was.
        #[test]
        fn edits_agree_with_one_sorted_vector(
            start in proptest::collection::btree_set(any::<u16>(), 0..3_000),
            edits in proptest::collection::vec((any::<u16>(), any::<bool>()), 0..3_000),
        ) {
            let mut expected: Vec<Key> = start.iter().map(|&n| key(n)).collect();
            let mut keys = OrderKeys::from_sorted(expected.clone());
            let copied = keys.clone();
            for (n, put) in edits {
                let k = key(n);
                let before = |other: &Key| **other < *k;
                let same = |other: &Key| **other == *k;
                let at = expected.partition_point(before);
                if put {
                    keys.put(k.clone(), before, same);
                    if expected.get(at).is_some_and(same) {
                        expected[at] = k.clone();
                    } else {
                        expected.insert(at, k.clone());
                    }
                } else {
                    keys.remove(before, same);
                    if expected.get(at).is_some_and(same) {
                        expected.remove(at);
                    }
                }
            }
            prop_assert_eq!(keys.len(), expected.len());
            prop_assert!(keys.iter().eq(expected.iter()));
            for (at, k) in expected.iter().enumerate().step_by(7) {
                prop_assert_eq!(&keys[at], k);
                prop_assert_eq!(keys.partition_point(|other| other < k), at);
            }
            prop_assert_eq!(keys.get(expected.len()), None);
            prop_assert!(copied.iter().eq(start.iter().map(|&n| key(n)).collect::<Vec<_>>().iter()));
            prop_assert!(keys.chunks.iter().all(|c| !c.is_empty() && c.len() < 2 * CHUNK));
        }
    }
}
