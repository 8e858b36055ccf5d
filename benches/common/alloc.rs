//! A counting global allocator: allocations and bytes per operation, next
//! to criterion's times.
//!
//! It wraps mimalloc, the `forkful` binary's allocator, so times are the
//! binary's. Counts are thread-local (a `Cell` add, no atomics) and only
//! the measuring thread's allocations are counted: every headline bench
//! runs its operation on the thread that calls it.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;

struct Counting;

thread_local! {
    static COUNT: Cell<u64> = const { Cell::new(0) };
    static BYTES: Cell<u64> = const { Cell::new(0) };
}

fn count(size: usize) {
    // `try_with`: a thread being torn down has no counters left; skip it.
    let _ = COUNT.try_with(|c| c.set(c.get() + 1));
    let _ = BYTES.try_with(|b| b.set(b.get() + size as u64));
}

// SAFETY: every call is passed to mimalloc unchanged; counting touches only
// thread-locals with const initialisers, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        unsafe { mimalloc::MiMalloc.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // A reallocation is an allocation a smarter capacity would have saved.
        count(new_size);
        unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Allocations (and reallocations) and bytes asked for, per operation.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Allocations {
    pub count: f64,
    pub bytes: f64,
}

fn now() -> (u64, u64) {
    (COUNT.with(Cell::get), BYTES.with(Cell::get))
}

/// What `op` allocates per call, averaged over `runs` calls after one
/// warm-up call (caches filled, buffers grown).
pub(crate) fn allocations<T>(runs: u32, mut op: impl FnMut() -> T) -> Allocations {
    std::hint::black_box(op());
    let (count, bytes) = now();
    for _ in 0..runs {
        std::hint::black_box(op());
    }
    let (count_after, bytes_after) = now();
    Allocations {
        count: (count_after - count) as f64 / f64::from(runs),
        bytes: (bytes_after - bytes) as f64 / f64::from(runs),
    }
}

/// Measures `op`'s allocations and prints them in the bench's output, in
/// a line of their own under the bench's name, and into
/// `target/criterion/allocations.tsv` (one line per bench, newest last).
pub(crate) fn report_allocations<T>(name: &str, op: impl FnMut() -> T) -> Allocations {
    let a = allocations(200, op);
    println!(
        "{name:<50} allocations: {:.1} per op, {:.1} KiB per op",
        a.count,
        a.bytes / 1024.0
    );
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target"),
        std::path::PathBuf::from,
    );
    let dir = target.join("criterion");
    let _ = std::fs::create_dir_all(&dir);
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("allocations.tsv"))
    {
        use std::io::Write;
        let _ = writeln!(file, "{name}\t{:.1}\t{:.0}", a.count, a.bytes);
    }
    a
}
