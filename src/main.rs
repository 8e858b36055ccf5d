//! The `forkful` binary: parse the command line, run it, report errors.

use clap::Parser;

/// glibc's allocator slows as sled's heap grows and fragments: a profile of
/// a rule query on a 100,000-recipe store spent 56% of its time in
/// `_int_malloc`, and its cost grew with the store. mimalloc's does not.
///
/// The `system-allocator` feature keeps the system's allocator instead, so
/// that a heap profiler which hooks `malloc` (heaptrack) sees every
/// allocation: `docs/BENCHMARKING.md` ("Heap profiles") says how it is used.
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(all(target_os = "linux", not(feature = "system-allocator")))]
unsafe extern "C" {
    /// mimalloc's option setter (mimalloc.h); linked with the allocator.
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}

// `MI_OPTION_ARENA_EAGER_COMMIT`: `mi_option_arena_eager_commit`, by
// name, in the mimalloc.h this build's allocator comes from.
#[cfg(all(target_os = "linux", not(feature = "system-allocator")))]
include!(concat!(env!("OUT_DIR"), "/mimalloc_options.rs"));

/// By default mimalloc commits its arenas eagerly on Linux, and sled's
/// start-up allocations then cost 40 MiB of resident memory before a single
/// recipe is read (47 MiB to open an empty store; 8 MiB without). The option
/// must be set before the first allocation reserves an arena, which Rust's
/// runtime makes before `main`: so this runs from `.init_array`, as a C
/// constructor would.
#[cfg(all(target_os = "linux", not(feature = "system-allocator")))]
extern "C" fn lazy_arena_commit() {
    // SAFETY: mimalloc's options may be set at any time, before its
    // initialisation included; this one only decides how arena memory is
    // committed.
    unsafe { mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0) };
}

#[cfg(all(target_os = "linux", not(feature = "system-allocator")))]
#[used]
#[unsafe(link_section = ".init_array")]
static LAZY_ARENA_COMMIT: extern "C" fn() = lazy_arena_commit;

fn main() -> anyhow::Result<()> {
    let cli = forkful::cli::Cli::parse();
    forkful::cli::run(cli, &mut std::io::stdout().lock())
}
