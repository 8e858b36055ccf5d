//! A keyspace's memory of lasting values: keys whose value, once written,
//! never changes (it may be removed), such as a picture's variant named by
//! its hash. A keyspace kept in the log's database pays a round trip for
//! each read, so a node remembers these values, bounded by bytes, with
//! quick_cache's CLOCK-Pro eviction; one in sled reads them from sled,
//! whose own cache does the same. Every write through the keyspace on this
//! node forgets the keys it touches, and a read that raced with one does
//! not keep what it read (`Lasting::forgets`); another node's removal is
//! not seen here, so a remembered value may be served until it is
//! evicted: why only a value that never changes under its key may be read
//! this way.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use sled::IVec;

pub(super) struct Lasting {
    map: quick_cache::sync::Cache<Vec<u8>, IVec, ByteWeight, rustc_hash::FxBuildHasher>,
    /// How many forgets there have been: a read remembers what it read
    /// only if none came between its start and its remembering, so a value
    /// read before a write and remembered after it is not kept.
    forgets: AtomicU64,
}

#[derive(Clone)]
struct ByteWeight;

impl quick_cache::Weighter<Vec<u8>, IVec> for ByteWeight {
    fn weight(&self, key: &Vec<u8>, value: &IVec) -> u64 {
        (key.len() + value.len()) as u64
    }
}

impl Lasting {
    /// A memory of at most `bytes` of keys and values.
    pub(super) fn new(bytes: u64) -> Arc<Lasting> {
        // quick_cache wants an estimate of the number of items: a picture's
        // variant, the biggest thing remembered, weighs some 50 KiB.
        let items = (bytes / (50 << 10)).max(16) as usize;
        Arc::new(Lasting {
            map: quick_cache::sync::Cache::with(
                items,
                bytes,
                ByteWeight,
                Default::default(),
                Default::default(),
            ),
            forgets: AtomicU64::new(0),
        })
    }

    pub(super) fn get(&self, key: &[u8]) -> Option<IVec> {
        self.map.get(key)
    }

    /// Where the forgets stand: taken before a read whose value is then
    /// `remember`ed.
    pub(super) fn mark(&self) -> u64 {
        self.forgets.load(Ordering::SeqCst)
    }

    /// Remembers `value`, read since `mark`, unless a forget came between:
    /// checked again once it is in, and taken out if one did (a forget
    /// counts itself before it removes, so it removes what a read put in
    /// before that count, and a read that put its value in after sees it).
    pub(super) fn remember(&self, key: &[u8], value: IVec, mark: u64) {
        if self.mark() != mark {
            return;
        }
        self.map.insert(key.to_vec(), value);
        if self.mark() != mark {
            self.map.remove(key);
        }
    }

    pub(super) fn forget<'k>(&self, keys: impl IntoIterator<Item = &'k [u8]>) {
        self.forgets.fetch_add(1, Ordering::SeqCst);
        for key in keys {
            self.map.remove(key);
        }
    }

    pub(super) fn len(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value read before a write's forget, and remembered after it, is
    /// not kept: it may be what the write took away.
    #[test]
    fn a_value_read_before_a_forget_is_not_remembered_after_it() {
        let lasting = Lasting::new(1 << 20);
        let mark = lasting.mark();
        lasting.forget([&b"key"[..]]);
        lasting.remember(b"key", IVec::from(&b"old"[..]), mark);
        assert_eq!(lasting.get(b"key"), None);
        let mark = lasting.mark();
        lasting.remember(b"key", IVec::from(&b"new"[..]), mark);
        assert_eq!(lasting.get(b"key").as_deref(), Some(&b"new"[..]));
        assert_eq!(lasting.len(), 1);
    }
}
