//! The command line: `serve`, `seed`, `query`, `export`, `import`.
//!
//! `main` parses arguments into `Cli` and calls `run`; each command opens the
//! store it needs and reports what it did. Every flag also reads a
//! `FORKFUL_*` environment variable. Errors carry context for the person at
//! the terminal (which file, which store) and end the process non-zero.

use std::fs::File;
use std::io::{BufReader, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};

use crate::app;
use crate::domain::import_check::RecipeImportCheck;
use crate::domain::Recipes;
use crate::seed;
use crate::store::query::{self, Input, Query};
use crate::store::{transfer, Store, StoreConfig};

/// forkful: recipes with their whole history, forkable like repositories.
#[derive(Debug, Parser)]
#[command(name = "forkful", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Open the store and serve the site.
    Serve {
        /// The store's directory.
        #[arg(long, env = "FORKFUL_DATA", default_value = "./data")]
        data: PathBuf,
        /// Seed the demo into a fresh temporary store and serve that instead.
        #[arg(long, env = "FORKFUL_DEMO")]
        demo: bool,
        /// The address to listen on (port 0 picks a free port).
        #[arg(long, env = "FORKFUL_ADDR", default_value = "127.0.0.1:8080")]
        addr: String,
        /// Worker threads (0: one per core).
        #[arg(long, env = "FORKFUL_WORKERS", default_value_t = 0)]
        workers: usize,
        /// The store's page cache, in MiB.
        #[arg(long, env = "FORKFUL_CACHE_MB")]
        cache_mb: Option<u64>,
        /// The site's public address, for absolute links (default: http:// and --addr).
        #[arg(long, env = "FORKFUL_BASE_URL")]
        base_url: Option<String>,
        /// Request logs as JSON lines instead of text (both go to standard error;
        /// FORKFUL_LOG filters them, e.g. FORKFUL_LOG=warn).
        #[arg(long, env = "FORKFUL_LOG_JSON")]
        log_json: bool,
    },
    /// Load the demo seed (or a synthetic catalog) into an empty store.
    Seed {
        #[arg(long, env = "FORKFUL_DATA", default_value = "./data")]
        data: PathBuf,
        /// Instead of the demo, N synthetic recipes in fork forests.
        #[arg(long, value_name = "N")]
        synthetic: Option<usize>,
        /// Synthetic: the lineage depth of each forest's deepest recipe.
        #[arg(long, default_value_t = 12, requires = "synthetic")]
        depth: usize,
        /// Synthetic: forks per recipe along each forest's spine.
        #[arg(long, default_value_t = 3, requires = "synthetic")]
        fanout: usize,
        /// Synthetic: the generator's seed; the same numbers give the same catalog.
        #[arg(long, default_value_t = 1, requires = "synthetic")]
        rng: u64,
        /// Synthetic: bare recipes (title, one ingredient, one step), for scale tests.
        #[arg(long, requires = "synthetic")]
        skeleton: bool,
        /// Delete whatever the store holds first.
        #[arg(long)]
        force: bool,
    },
    /// Write every datom, history included, to a line-per-datom file.
    Export {
        #[arg(long, env = "FORKFUL_DATA", default_value = "./data")]
        data: PathBuf,
        /// The file to write (`-` for standard output).
        file: PathBuf,
    },
    /// Run a datalog query against the store and print a table.
    ///
    /// Example: forkful query '[:find ?e ?doc :where [?e :db/doc ?doc]]'
    Query {
        #[arg(long, env = "FORKFUL_DATA", default_value = "./data")]
        data: PathBuf,
        /// Query the database as of this basis (a transaction id).
        #[arg(long)]
        as_of: Option<u64>,
        /// Query every assertion and retraction, not just what holds.
        #[arg(long)]
        history: bool,
        /// Stop the query after this many steps of work.
        #[arg(long, default_value_t = query::DEFAULT_WORK_LIMIT)]
        work_limit: u64,
        /// The query, e.g. '[:find ?t :in $ ?s :where [?r :recipe/slug ?s] [?r :recipe/title ?t]]'.
        query: String,
        /// Values for the inputs after $ in :in, as EDN: a scalar (`"shakshuka"`, `42`),
        /// a collection (`["a" "b"]`), a relation (`[["a" 1] ["b" 2]]`), or rules.
        args: Vec<String>,
    },
    /// Load an export file into an empty store.
    Import {
        #[arg(long, env = "FORKFUL_DATA", default_value = "./data")]
        data: PathBuf,
        /// The export file to read.
        file: PathBuf,
    },
}

/// Runs one command; what it prints goes to `out`.
pub fn run(cli: Cli, out: &mut impl Write) -> Result<()> {
    match cli.command {
        Command::Serve {
            data,
            demo,
            addr,
            workers,
            cache_mb,
            base_url,
            log_json,
        } => {
            let cache_mb = cache_mb.or_else(cache_mb_from_env);
            let store = if demo {
                let mut config = StoreConfig::temporary();
                if let Some(mb) = cache_mb {
                    config.cache_bytes = mb * 1024 * 1024;
                }
                let store = Store::open_with(config).context("opening a temporary store")?;
                let report = seed::demo(&store).context("seeding the demo")?;
                writeln!(
                    out,
                    "forkful: seeded the demo into a temporary store: {} recipes, {} versions",
                    report.recipes, report.versions
                )?;
                store
            } else {
                open_store_with(&data, cache_mb)?
            };
            serve(store, &addr, workers, base_url, log_json, out)?;
        }
        Command::Seed {
            data,
            synthetic,
            depth,
            fanout,
            rng,
            skeleton,
            force,
        } => {
            // Every argument is checked before --force deletes anything.
            if depth > crate::domain::MAX_LINEAGE {
                bail!(
                    "--depth {depth} is deeper than a lineage may go ({})",
                    crate::domain::MAX_LINEAGE
                );
            }
            if fanout == 0 {
                bail!("--fanout must be at least 1");
            }
            if force && data.exists() {
                std::fs::remove_dir_all(&data)
                    .with_context(|| format!("removing {}", data.display()))?;
            }
            let store = open_bulk_store(&data)?;
            match synthetic {
                None => {
                    let report = seed::demo(&store)
                        .with_context(|| format!("seeding {}", data.display()))?;
                    writeln!(
                        out,
                        "seeded {} recipes ({} of them forks) in {} versions into {} (basis {})",
                        report.recipes,
                        report.forks,
                        report.versions,
                        data.display(),
                        report.basis
                    )?;
                }
                Some(recipes) => {
                    if !store.is_empty() {
                        bail!(
                            "the store at {} is not empty; use --force to replace it",
                            data.display()
                        );
                    }
                    let shape = seed::synthetic::Shape {
                        recipes,
                        depth,
                        fanout,
                        rng,
                        skeleton,
                    };
                    let ids =
                        seed::synthetic::generate(&store, shape, std::io::stderr().is_terminal())
                            .with_context(|| format!("seeding {}", data.display()))?;
                    writeln!(
                        out,
                        "seeded {} synthetic recipes (lineage depth {depth}, fanout {fanout}, rng {rng}) into {} (basis {})",
                        ids.len(),
                        data.display(),
                        store.db().basis()
                    )?;
                }
            }
        }
        Command::Export { data, file } => {
            if !data.exists() {
                bail!("there is no store at {}", data.display());
            }
            let store = open_bulk_store(&data)?;
            let summary = if file == Path::new("-") {
                transfer::export(&store.db(), &mut std::io::stdout().lock())?
            } else {
                // Written beside the target and renamed, so a failed export
                // never leaves a half-written file under the real name.
                let partial = file.with_extension("partial");
                let mut writer = BufWriter::new(
                    File::create(&partial)
                        .with_context(|| format!("creating {}", partial.display()))?,
                );
                let summary = transfer::export(&store.db(), &mut writer)
                    .with_context(|| format!("writing {}", partial.display()))?;
                writer
                    .into_inner()
                    .map_err(|e| e.into_error())
                    .and_then(|f| f.sync_all())
                    .with_context(|| format!("writing {}", partial.display()))?;
                std::fs::rename(&partial, &file)
                    .with_context(|| format!("renaming to {}", file.display()))?;
                summary
            };
            if file != Path::new("-") {
                writeln!(
                    out,
                    "exported {} transactions, {} datoms (basis {}) to {}",
                    summary.transactions,
                    summary.datoms,
                    summary.basis,
                    file.display()
                )?;
            }
        }
        Command::Query {
            data,
            as_of,
            history,
            work_limit,
            query,
            args,
        } => {
            if !data.exists() {
                bail!("there is no store at {}", data.display());
            }
            let store = open_store(&data)?;
            let mut db = store.db();
            if let Some(t) = as_of {
                db = db.as_of(t);
            }
            if history {
                db = db.history();
            }
            let parsed = Query::parse(&query).context("reading the query")?;
            let mut inputs = vec![Input::Db(db)];
            for (i, arg) in args.iter().enumerate() {
                inputs.push(
                    Input::from_edn(arg)
                        .with_context(|| format!("reading input {} ({arg})", i + 1))?,
                );
            }
            let result = parsed
                .run(&inputs, work_limit)
                .context("running the query")?;
            write!(out, "{}", query::table::render(&result))?;
        }
        Command::Import { data, file } => {
            if !file.is_file() {
                bail!("there is no file at {}", file.display());
            }
            let store = open_bulk_store(&data)?;
            let bar = if std::io::stderr().is_terminal() {
                indicatif::ProgressBar::new(0)
            } else {
                indicatif::ProgressBar::hidden()
            };
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:40} {pos}/{len} datoms, {per_sec}, {eta} left",
                )
                .expect("a valid template"),
            );
            let summary = transfer::import_with(
                &store,
                || File::open(&file).map(BufReader::new),
                &mut RecipeImportCheck::default(),
                &mut |progress| {
                    bar.set_length(progress.total as u64);
                    bar.set_position(progress.written as u64);
                },
            )
            .with_context(|| format!("importing {} into {}", file.display(), data.display()))?;
            bar.finish_and_clear();
            writeln!(
                out,
                "imported {} transactions, {} datoms (basis {}) into {}",
                summary.transactions,
                summary.datoms,
                summary.basis,
                data.display()
            )?;
        }
    }
    Ok(())
}

fn cache_mb_from_env() -> Option<u64> {
    std::env::var("FORKFUL_CACHE_MB")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
}

fn open_store(dir: &Path) -> Result<Store> {
    open_store_with(dir, cache_mb_from_env())
}

/// sled's page cache for `seed`, `import` and `export` unless
/// `FORKFUL_CACHE_MB` says otherwise. They pass over the whole store once,
/// so a big cache buys little, and sled's memory grows well past its cache:
/// seeding 100,000 full recipes peaked at 3.6 GB with the default 256 MiB
/// and at 1.3 GB with 64 (docs/BENCHMARKING.md).
const BULK_CACHE_MB: u64 = 64;

fn open_bulk_store(dir: &Path) -> Result<Store> {
    open_store_with(dir, cache_mb_from_env().or(Some(BULK_CACHE_MB)))
}

fn open_store_with(dir: &Path, cache_mb: Option<u64>) -> Result<Store> {
    let mut config = StoreConfig::durable(dir);
    if let Some(mb) = cache_mb {
        config.cache_bytes = mb * 1024 * 1024;
    }
    Store::open_with(config).with_context(|| format!("opening the store at {}", dir.display()))
}

/// Sends logs to standard error (standard output carries the command's
/// own report), filtered by FORKFUL_LOG (default `info`).
fn init_logs(json: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("FORKFUL_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        // Colours only for a person at a terminal, not in a log file.
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    // A second call (tests run several servers in one process) keeps the first.
    let _ = if json {
        logs.json().try_init()
    } else {
        logs.try_init()
    };
}

/// Serves the site on `store` until SIGINT or SIGTERM, then flushes the
/// store: the requests in flight finish first.
fn serve(
    store: Store,
    addr: &str,
    workers: usize,
    base_url: Option<String>,
    log_json: bool,
    out: &mut impl Write,
) -> Result<()> {
    init_logs(log_json);
    let recipes = Recipes::open(store.clone()).context("opening the recipes")?;
    let config = app::Config {
        addr: addr.to_owned(),
        workers,
        base_url,
    };
    actix_web::rt::System::new().block_on(async {
        let running =
            app::build(&config, recipes).with_context(|| format!("listening on {addr}"))?;
        writeln!(out, "forkful: serving http://{}", running.addr)?;
        out.flush()?;
        running.server.await.context("serving")
    })?;
    store.flush().context("flushing the store")?;
    writeln!(out, "forkful: stopped; the store is flushed")?;
    Ok(())
}
