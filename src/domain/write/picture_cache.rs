//! Picture variants kept on a node of a site past one machine. With a log,
//! pictures live in PostgreSQL (`forkful_keyspace`), every node's; a
//! variant's bytes never change under its name (the name is the picture's
//! hash), so a node reads each from PostgreSQL once while it stays here.
//! Bounded by bytes, with quick_cache's CLOCK-Pro eviction, as the Markdown
//! memo is. A picture collected unsaved (`unsaved_pictures`) is dropped
//! from the cache of the node that collects it; another node may serve it
//! until it is evicted there, which shows nothing new: only its uploader
//! ever had its name.

use std::sync::Arc;

/// What the cache holds at most: a few hundred pictures' variants.
pub(crate) const PICTURE_CACHE_BYTES: u64 = 32 << 20;

pub(super) struct PictureCache {
    map: quick_cache::sync::Cache<Vec<u8>, Arc<[u8]>, ByteWeight, rustc_hash::FxBuildHasher>,
}

#[derive(Clone)]
struct ByteWeight;

impl quick_cache::Weighter<Vec<u8>, Arc<[u8]>> for ByteWeight {
    fn weight(&self, key: &Vec<u8>, bytes: &Arc<[u8]>) -> u64 {
        (key.len() + bytes.len()) as u64
    }
}

impl PictureCache {
    pub(super) fn new(bytes: u64) -> PictureCache {
        // quick_cache wants an estimate of the number of items: a variant
        // weighs some 50 KiB.
        let items = (bytes / (50 << 10)).max(16) as usize;
        PictureCache {
            map: quick_cache::sync::Cache::with(
                items,
                bytes,
                ByteWeight,
                Default::default(),
                Default::default(),
            ),
        }
    }

    pub(super) fn get(&self, key: &[u8]) -> Option<Arc<[u8]>> {
        self.map.get(key)
    }

    pub(super) fn insert(&self, key: Vec<u8>, bytes: Arc<[u8]>) {
        self.map.insert(key, bytes);
    }

    pub(super) fn remove(&self, key: &[u8]) {
        self.map.remove(key);
    }

    /// Variants held now, for tests.
    pub(super) fn held(&self) -> usize {
        self.map.len()
    }
}
