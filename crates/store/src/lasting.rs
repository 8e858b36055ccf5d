//! A keyspace's memory of lasting values: keys whose value, once written,
//! never changes (it may be removed), such as a picture's variant named by
//! its hash. A keyspace kept in the log's database pays a round trip for
//! each read, so a node remembers these values, bounded by bytes, with
//! quick_cache's CLOCK-Pro eviction; one in sled reads them from sled,
//! whose own cache does the same. Every write through the keyspace on this
//! node forgets the keys it touches; another node's removal is not seen
//! here, so a remembered value may be served until it is evicted: why
//! only a value that never changes under its key may be read this way.

use std::sync::Arc;

use sled::IVec;

pub(super) struct Lasting {
    map: quick_cache::sync::Cache<Vec<u8>, IVec, ByteWeight, rustc_hash::FxBuildHasher>,
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
        })
    }

    pub(super) fn get(&self, key: &[u8]) -> Option<IVec> {
        self.map.get(key)
    }

    pub(super) fn remember(&self, key: &[u8], value: IVec) {
        self.map.insert(key.to_vec(), value);
    }

    pub(super) fn forget<'k>(&self, keys: impl IntoIterator<Item = &'k [u8]>) {
        for key in keys {
            self.map.remove(key);
        }
    }

    pub(super) fn len(&self) -> usize {
        self.map.len()
    }
}
