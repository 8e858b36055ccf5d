//! A hasher for maps keyed by entity ids, which the in-memory caches look
//! up on every read a page makes.
//!
//! Ids are integers the store hands out, not input an attacker picks, so
//! SipHash's resistance to chosen keys buys nothing here; one multiply
//! (FxHash's constant) spreads sequential ids over the table.

use std::hash::{BuildHasherDefault, Hasher};

/// Hashes the `u64`s of an entity-id key.
#[derive(Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        // Keys here are ids and tuples of ids, hashed through `write_u64`;
        // anything else still hashes, a byte at a time.
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// `HashMap<EntityId, _, IdHash>`.
pub type IdHash = BuildHasherDefault<IdHasher>;
