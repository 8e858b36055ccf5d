//! The `forkful` binary: parse the command line, run it, report errors.

use clap::Parser;

fn main() -> anyhow::Result<()> {
    let cli = forkful::cli::Cli::parse();
    forkful::cli::run(cli, &mut std::io::stdout().lock())
}
