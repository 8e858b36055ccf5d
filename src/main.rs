//! The `forkful` binary: parse the command line, run it, report errors.

use clap::Parser;

/// glibc's allocator slows as sled's heap grows and fragments: a profile of
/// a rule query on a 100,000-recipe store spent 56% of its time in
/// `_int_malloc`, and its cost grew with the store. mimalloc's does not.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    let cli = forkful::cli::Cli::parse();
    forkful::cli::run(cli, &mut std::io::stdout().lock())
}
