//! Which entities read from sled the entity cache takes: those a second
//! reader asks for.
//!
//! A crawler's pass reads most entities once (a recipe, its ingredients
//! and steps), and so does a page of a catalog too large to keep: copying
//! each into the cache, under its lock, and evicting another for it was
//! work for nothing, and the memory it churned had the server's limit cut
//! every cache to its least (`scripts/crawl.sh` over 100,000 full recipes,
//! a build that kept nothing it read against one that kept everything:
//! 8,461 against 7,625 and 7,829 pages/s; docs/journal/33-close-to-the-limit.md). An
//! entity read again by another page (an ancestor, a recipe the catalog
//! lists) is worth keeping, and is kept from its second reader on.
//!
//! A reader (`Db::reader`, one per database value a page reads) may read
//! an entity several times (a lineage step, then the ancestor's name):
//! that is still one reader. So the record is of who read it last, in a
//! table of slots indexed by the entity's hash: lossy (an entity whose
//! slot another took since is forgotten, and is taken at its next reader
//! instead), lock-free, and a fixed size, like TinyLFU's doorkeeper.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::value::EntityId;

/// See the module's documentation.
pub(super) struct SecondReader {
    /// Each slot: the low 32 bits of the entity last read through it, then
    /// the low 32 bits of its reader. A mismatch in the bits kept only
    /// takes an entity one reader early, which costs nothing but a copy.
    slots: Box<[AtomicU64]>,
    /// Bits of the hash that index `slots`.
    bits: u32,
}

impl SecondReader {
    /// A record of about `slots` entities (rounded up to a power of two,
    /// at least 64).
    pub(super) fn new(slots: usize) -> SecondReader {
        let slots = slots.max(64).next_power_of_two();
        SecondReader {
            slots: (0..slots).map(|_| AtomicU64::new(0)).collect(),
            bits: slots.trailing_zeros(),
        }
    }

    /// Records that `reader` read entity `e` from sled; true if another
    /// reader did last (then the cache should keep it).
    pub(super) fn admits(&self, e: EntityId, reader: u64) -> bool {
        // Fibonacci hashing: ids come in runs (a recipe and its
        // components), which the top bits of the product spread.
        let slot = (e.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.bits)) as usize;
        let record = (e << 32) | (reader & 0xFFFF_FFFF);
        // A load and a store, not a swap: two readers of one entity at once
        // may both be told yes or both no, which costs a copy or a read
        // later, where a locked instruction on every read from sled cost
        // a third of the read's own time (perf of a crawl).
        let before = self.slots[slot].load(Ordering::Relaxed);
        if before != record {
            self.slots[slot].store(record, Ordering::Relaxed);
        }
        before >> 32 == record >> 32 && before != record
    }

    /// Forgets every read recorded.
    pub(super) fn forget(&self) {
        for slot in self.slots.iter() {
            slot.store(0, Ordering::Relaxed);
        }
    }

    /// Whether any reader read entity `e` from sled since its slot last
    /// changed hands; records nothing.
    pub(super) fn seen(&self, e: EntityId) -> bool {
        let slot = (e.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.bits)) as usize;
        let before = self.slots[slot].load(Ordering::Relaxed);
        before != 0 && before >> 32 == (e << 32) >> 32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entity_is_taken_at_its_second_reader_not_at_its_first_reading_again() {
        let record = SecondReader::new(1024);
        assert!(!record.admits(7, 1), "first read");
        assert!(!record.admits(7, 1), "the same reader again");
        assert!(!record.admits(7, 1), "and again");
        assert!(record.admits(7, 2), "a second reader");
        assert!(record.admits(7, 3), "and a third");
        assert!(!record.admits(8, 3), "another entity is its own");
        assert!(record.seen(7));
        assert!(!record.seen(9), "never read");
        assert!(!record.seen(9), "asking records nothing");
        record.forget();
        assert!(!record.seen(7), "forgotten");
    }

    #[test]
    fn an_entity_whose_slot_was_taken_since_is_forgotten() {
        // The least table: 64 slots, so 65 entities share at least one.
        let record = SecondReader::new(1);
        for e in 0..10_000 {
            record.admits(e, 1);
        }
        // Newest first: each slot's last entity is asked before the others
        // of its slot take it for reader 2.
        let remembered = (0..10_000).rev().filter(|&e| record.admits(e, 2)).count();
        assert!(remembered <= 64, "{remembered} of 10,000 remembered");
        assert!(remembered > 0);
    }
}
