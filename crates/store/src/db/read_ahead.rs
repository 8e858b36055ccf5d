//! Reading ahead the lines of a page: the sled leaves that a page's lines
//! read in passing will read, read first side by side.
//!
//! A catalog page of a million recipes, none of them in memory, read one
//! random stretch of the store's file per line, one after another
//! (docs/journal/55-million.md): the lines' reads wait on the file in
//! turn, where the disk and the other core could serve several at once.
//! sled reads only on the thread that asks, so the reads ahead are made on
//! threads of their own, a few lines each; what they read is dropped, and
//! sled's cache keeps the leaves for the reads that follow. Hand-written:
//! no crate the project uses reads a sled tree ahead.

use std::panic::{self, AssertUnwindSafe};
use std::thread;

use super::{eavt_bounds, Db};
use crate::current::blocks;
use crate::grouped::eavt_group_bounds;
use crate::value::EntityId;

/// Fewer lines than this to read from sled are read in turn: starting the
/// threads would cost more than it saves.
const READ_AHEAD_FROM: usize = 16;

/// The lines looked at first: a page none of whose first lines is to be
/// read from sled is taken to be in memory.
const READ_AHEAD_GLANCE: usize = 8;

/// The threads a page's read ahead takes at most. More than the cores:
/// each spends most of its time waiting on the file.
const READ_AHEAD_THREADS: usize = 4;

/// What a line of a page will read from sled, if anything.
#[derive(Clone, Copy)]
enum Ahead {
    /// Its first reading: its attributes' EAVT groups, in passing.
    Datoms(EntityId),
    /// Read before, and held by no cache: its current-entity block, as the
    /// line loads it whole.
    Block(EntityId),
}

impl Db {
    /// Reads ahead, side by side, what `visit_attributes_in_passing` of
    /// each of `entities` (attributes `first..=last`) will read from
    /// sled's file: the EAVT groups of an entity this reader has not read
    /// before and no cache holds, as stored (`grouped`), not expanded into
    /// datoms; the current-entity block of one read before that no cache
    /// holds. Nothing this value answers, nor the caches' doorkeeper, nor
    /// the page's witness, is changed by it: what is read is dropped, and
    /// the page's own reads, which follow, find sled's leaves in its
    /// cache. A failed read ahead is left to the page's own read to meet
    /// and report.
    pub fn read_ahead_in_passing(&self, entities: &[EntityId], first: EntityId, last: EntityId) {
        // A page made again reads its lines from memory: told by its first
        // few, so that it does not pay a look in the caches for each.
        let glance = &entities[..entities.len().min(READ_AHEAD_GLANCE)];
        if !glance.iter().any(|&e| self.ahead_of(e).is_some()) {
            return;
        }
        let unread: Vec<Ahead> = entities.iter().filter_map(|&e| self.ahead_of(e)).collect();
        if unread.len() < READ_AHEAD_FROM {
            return;
        }
        let threads = READ_AHEAD_THREADS.min(unread.len() / (READ_AHEAD_FROM / 2));
        let tree = &self.tree;
        let read = move |ahead: Ahead| match ahead {
            Ahead::Datoms(e) => {
                let (lower, upper) = eavt_bounds(e, first, last);
                let groups = eavt_group_bounds(&lower, &upper);
                tree.range(groups).all(|group| group.is_ok())
            }
            Ahead::Block(e) => tree.get(blocks::key(e)).is_ok(),
        };
        // Strided, so that each thread's reads lie across the page, as the
        // page reads them; the page's own thread takes the first share.
        let share = |start: usize| {
            let mine = unread.iter().skip(start).step_by(threads);
            move || {
                // A read that fails, or panics inside sled, is the page's
                // own read's to meet: here it only ends this share.
                let _ = panic::catch_unwind(AssertUnwindSafe(|| {
                    mine.copied().all(read);
                }));
            }
        };
        thread::scope(|scope| {
            for start in 1..threads {
                let spawned = thread::Builder::new()
                    .name("read-ahead".into())
                    .spawn_scoped(scope, share(start));
                if spawned.is_err() {
                    // Out of threads: the page reads the rest itself.
                    break;
                }
            }
            share(0)();
        });
    }

    /// What reading `e` in passing will read from sled, as
    /// `visit_attributes_in_passing` decides it; `None` where memory
    /// answers.
    fn ahead_of(&self, e: EntityId) -> Option<Ahead> {
        // `first_reading`'s looks, each taken once.
        if !self.reads_caches() || self.memo.entity(e).is_some() || self.entities.holds(e) {
            return None;
        }
        Some(match self.entities.read_before(e) {
            false => Ahead::Datoms(e),
            true => Ahead::Block(e),
        })
    }
}
