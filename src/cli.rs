//! The command line: `serve`, `seed`, `query`, `export`, `import`, `user`.
//!
//! `main` parses arguments into `Cli` and calls `run`, which hands each
//! command's arguments to its function; each opens the store it needs and
//! reports what it did. The store's flags (`StoreArgs`) are the same for
//! every command. Every flag also reads a `FORKFUL_*` environment variable
//! named after it (`--cache-mb`, `FORKFUL_CACHE_MB`), and clap parses both
//! before anything is opened, so a bad value from either is a usage error
//! (exit 2) naming the flag. Errors carry context for the person at the
//! terminal (which file, which store) and end the process non-zero.

use std::fs::File;
use std::io::{BufReader, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};

use crate::app;
use crate::domain::import_check::RecipeImportCheck;
use crate::domain::pictures;
use crate::domain::{Accounts, Change, Recipes, Slug};
use crate::import;
use crate::postgres::PgLog;
use crate::seed;
use crate::store::{
    self, render_table, Follower, Input, OpenError, Query, Store, StoreConfig, TransferSummary,
    DEFAULT_WORK_LIMIT, FORMAT_VERSION,
};
use crate::web::caches::CacheBudget;
use crate::web::client_address::{ForwardedHeader, Network, TrustedProxies};
use crate::web::health::HealthLimits;

/// `--version`'s line after the name: the crate's version and the storage
/// format this build reads and writes, e.g. `0.1.0 (storage format 10)`.
/// The long-run scripts print it in their headers, so that a figure names
/// the format of the binary that made it, not a number copied from the
/// source.
static VERSION: LazyLock<String> = LazyLock::new(|| {
    format!(
        "{} (storage format {FORMAT_VERSION})",
        env!("CARGO_PKG_VERSION")
    )
});

/// forkful: recipes with their whole history, forkable like repositories.
#[derive(Debug, Parser)]
#[command(name = "forkful", version = VERSION.as_str(), about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Open the store and serve the site.
    Serve(ServeArgs),
    /// Load the demo seed (or a synthetic catalog) into an empty store.
    Seed(SeedArgs),
    /// Write every datom, history included, to a line-per-datom file.
    Export(ExportArgs),
    /// Run a datalog query against the store and print a table.
    ///
    /// Example: forkful query '[:find ?e ?doc :where [?e :db/doc ?doc]]'
    Query(QueryArgs),
    /// Load an export file into an empty store.
    Import(ImportArgs),
    /// Bring in a recipe from another site's page (its address) or a saved
    /// page (a file): a new recipe whose lineage starts at that page.
    ///
    /// Example: forkful import-recipe https://cook.example/dal --as ann
    ImportRecipe(ImportRecipeArgs),
    /// Administer cooks' accounts: add one, set a password, disable one.
    ///
    /// A password is read from the first line of standard input, e.g.
    /// printf '%s\n' 'a long password' | forkful user add ann --name 'Ann'
    User(UserArgs),
    /// The site's log in PostgreSQL (see `serve --database-url`).
    ///
    /// Example: forkful log push --data ./data --database-url postgres://forkful@db/forkful
    Log(LogArgs),
}

/// Runs one command; what it prints goes to `out`.
pub fn run(cli: Cli, out: &mut impl Write) -> Result<()> {
    match cli.command {
        Command::Serve(args) => serve(args, out),
        Command::Seed(args) => seed(args, out),
        Command::Export(args) => export(args, out),
        Command::Query(args) => query(args, out),
        Command::Import(args) => import(args, out),
        Command::ImportRecipe(args) => import_recipe(args, out),
        Command::User(args) => user(args, out),
        Command::Log(args) => log_command(args, out),
    }
}

/// The flags that say which store to open and how.
#[derive(Debug, Args)]
pub struct StoreArgs {
    /// The store's directory.
    #[arg(long, env = "FORKFUL_DATA", default_value = "./data")]
    pub data: PathBuf,
    /// sled's page cache, in MiB (default: 96 for `serve` and `query`; 64
    /// for `serve --demo`, `seed`, `import` and `export`).
    #[arg(long, env = "FORKFUL_CACHE_MB", value_name = "MIB", value_parser = CacheSize::parse_mib)]
    pub cache_mb: Option<CacheSize>,
    /// The site's log in PostgreSQL (postgres://user@host/database), for a
    /// store that follows one (docs/DEPLOYING.md): each write is appended
    /// there before it is acknowledged, and the store in --data is this
    /// node's index of the log, caught up when opened (or built from the
    /// log when --data is empty).
    #[arg(long, env = "DATABASE_URL", value_name = "URL")]
    pub database_url: Option<String>,
}

/// The size of sled's page cache, read as a number of MiB and kept in
/// bytes. Parsed by clap, so a size that would overflow a `u64` of bytes,
/// or one under sled's minimum (it asserts at least 256 bytes), is refused
/// as a usage error before a store is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheSize {
    bytes: u64,
}

const MIB: u64 = 1024 * 1024;

impl CacheSize {
    /// The largest size, in MiB, whose bytes a `u64` holds.
    pub const MAX_MIB: u64 = u64::MAX / MIB;

    /// `--cache-mb`'s parser: a whole number of MiB, from 1 to `MAX_MIB`.
    pub fn parse_mib(text: &str) -> Result<CacheSize, String> {
        let mib: u64 = text
            .parse()
            .map_err(|_| format!("{text:?} is not a whole number of MiB"))?;
        match mib.checked_mul(MIB) {
            Some(0) => Err("the cache needs at least 1 MiB".into()),
            Some(bytes) => Ok(CacheSize { bytes }),
            None => Err(format!("the cache is at most {} MiB", CacheSize::MAX_MIB)),
        }
    }

    /// `--memory-mb`'s parser: as `parse_mib`, but 0 (keep nothing)
    /// is a budget too.
    pub fn parse_budget_mib(text: &str) -> Result<CacheSize, String> {
        if text.trim() == "0" {
            return Ok(CacheSize { bytes: 0 });
        }
        CacheSize::parse_mib(text)
    }

    pub fn bytes(self) -> u64 {
        self.bytes
    }
}

/// sled's page cache for `seed`, `import` and `export` unless `--cache-mb`
/// says otherwise. They pass over the whole store once, so a big cache buys
/// little, and sled's memory grows well past its cache: seeding 100,000
/// full recipes peaked at 3.6 GB with the default 256 MiB and at 1.3 GB
/// with 64 (docs/journal/10-bulk-loads.md).
const BULK_CACHE: CacheSize = CacheSize { bytes: 64 * MIB };

impl StoreArgs {
    /// `config` with `--cache-mb` over its cache, if given.
    fn with_cache(&self, mut config: StoreConfig) -> StoreConfig {
        if let Some(cache) = self.cache_mb {
            config.cache_bytes = cache.bytes();
        }
        config
    }

    /// Opens the store at `--data`, with `StoreConfig`'s cache by default.
    fn open(&self) -> Result<Store> {
        self.open_with(self.with_cache(StoreConfig::durable(&self.data)))
    }

    /// Opens the store at `--data` for a command that passes over all of
    /// it once: `BULK_CACHE` by default.
    fn open_bulk(&self) -> Result<Store> {
        let mut config = StoreConfig::durable(&self.data);
        config.cache_bytes = self.cache_mb.unwrap_or(BULK_CACHE).bytes();
        self.open_with(config)
    }

    /// Opens the store, and with --database-url makes it follow the log
    /// there, caught up. The address is never printed: it may hold a
    /// password.
    fn open_with(&self, config: StoreConfig) -> Result<Store> {
        Ok(self.open_following(config)?.0)
    }

    /// `open_with`, and the log the store follows, if any: `serve` listens
    /// on it too, rather than connect and migrate a second time. The store
    /// is opened on the log (`StoreConfig::following`), caught up.
    fn open_following(&self, config: StoreConfig) -> Result<(Store, Option<Arc<PgLog>>)> {
        let Some(url) = &self.database_url else {
            return Ok((self.open_alone(config)?, None));
        };
        let log = Arc::new(PgLog::connect(url).context("connecting to the log in PostgreSQL")?);
        let store = match Store::open_with(config.following(log.clone())) {
            Err(error @ OpenError::FollowingLog(_)) => {
                return Err(anyhow::Error::new(error).context("following the log in PostgreSQL"))
            }
            opened => {
                opened.with_context(|| format!("opening the store at {}", self.data.display()))?
            }
        };
        Ok((store, Some(log)))
    }

    /// Opens the store without its log, if it has one.
    fn open_alone(&self, config: StoreConfig) -> Result<Store> {
        Store::open_with(config)
            .with_context(|| format!("opening the store at {}", self.data.display()))
    }

    /// Refuses a `--data` that does not exist, which opening would create:
    /// for the commands that only read. With a log, an empty `--data` is a
    /// node's store built from the log, which is what there is to read.
    fn must_exist(&self) -> Result<()> {
        if !self.data.exists() && self.database_url.is_none() {
            bail!("there is no store at {}", self.data.display());
        }
        Ok(())
    }
}

/// `forkful serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// Seed the demo into a fresh temporary store and serve that instead.
    #[arg(long, env = "FORKFUL_DEMO", conflicts_with = "database_url")]
    pub demo: bool,
    /// The address to listen on (port 0 picks a free port).
    #[arg(long, env = "FORKFUL_ADDR", default_value = "127.0.0.1:8080")]
    pub addr: String,
    /// Worker threads (0: one per core).
    #[arg(long, env = "FORKFUL_WORKERS", default_value_t = 0)]
    pub workers: usize,
    /// The site's public address, for absolute links (default: http:// and --addr).
    #[arg(long, env = "FORKFUL_BASE_URL")]
    pub base_url: Option<String>,
    /// The in-memory caches' budget in MiB (default 128): half for pages as
    /// sent, three eighths for entities (as stored), an eighth for rendered
    /// Markdown (0: none of them keeps anything). sled's cache is --cache-mb.
    /// When resident memory nears this plus --cache-mb, these caches are
    /// cut, down to an eighth of their budgets; nothing else is held, so
    /// sled and the rest of the process can take memory past the sum, and
    /// the server then logs a warning once.
    #[arg(
        long,
        env = "FORKFUL_MEMORY_MB",
        value_name = "MIB",
        value_parser = CacheSize::parse_budget_mib
    )]
    pub memory_mb: Option<CacheSize>,
    /// Request logs as JSON lines instead of text (both go to standard error;
    /// FORKFUL_LOG filters them, e.g. FORKFUL_LOG=warn).
    #[arg(long, env = "FORKFUL_LOG_JSON")]
    pub log_json: bool,
    /// Let /import fetch pages from this machine and private networks
    /// (for tests; never on a public site).
    #[arg(long, env = "FORKFUL_ALLOW_PRIVATE_FETCH")]
    pub allow_private_fetch: bool,
    /// A reverse proxy whose word on its clients' addresses is believed
    /// (an address, or a network such as 10.0.0.0/8; repeat the flag, or
    /// separate them with commas). None by default: the socket's peer is
    /// the client, as it must be when no proxy strips what clients send.
    #[arg(
        long = "trusted-proxy",
        env = "FORKFUL_TRUSTED_PROXY",
        value_name = "ADDRESS[/PREFIX]",
        value_delimiter = ','
    )]
    pub trusted_proxies: Vec<Network>,
    /// The header the trusted proxies write the client's address in.
    #[arg(
        long,
        env = "FORKFUL_FORWARDED_HEADER",
        value_enum,
        default_value = "x-forwarded-for"
    )]
    pub forwarded_header: ForwardedHeader,
    /// With a log: /healthz answers 503 once following it has failed (or
    /// gone without reading it to its end) for this many seconds.
    #[arg(long, env = "FORKFUL_UNHEALTHY_AFTER", value_name = "SECONDS", default_value_t = HealthLimits::default().failing_for.as_secs())]
    pub unhealthy_after: u64,
    /// With a log: /healthz answers 503 while the node lags it by more
    /// than this many transactions.
    #[arg(long, env = "FORKFUL_UNHEALTHY_LAG", value_name = "TRANSACTIONS", default_value_t = HealthLimits::default().max_lag)]
    pub unhealthy_lag: u64,
    /// With a log: how many seconds a node believes a session it checked
    /// in PostgreSQL before checking it again, which is how long a logout
    /// or a password change on another node takes to reach this one.
    #[arg(long, env = "FORKFUL_SESSION_RECHECK", value_name = "SECONDS", default_value_t = crate::domain::accounts::SESSION_RECHECK.as_secs())]
    pub session_recheck: u64,
    /// How many nodes serve the site (with a log): each counts password
    /// attempts, imports, pictures and suggestions on its own, so each
    /// takes this share of every limit, and the site as a whole allows
    /// what one node would.
    #[arg(long, env = "FORKFUL_NODES", value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub nodes: u32,
    /// A site nothing is taken from or sent to over ActivityPub (a host;
    /// the hosts under it are blocked too; repeat the flag, or separate
    /// them with commas).
    #[arg(
        long = "block-domain",
        env = "FORKFUL_BLOCK_DOMAINS",
        value_name = "HOST",
        value_delimiter = ','
    )]
    pub blocked_domains: Vec<String>,
    /// How many seconds after a failed delivery to another site it is
    /// tried again (doubled after each failure, up to six hours).
    #[arg(long, env = "FORKFUL_DELIVERY_RETRY", value_name = "SECONDS", default_value_t = crate::federation::RETRY_AFTER.as_secs_f64())]
    pub delivery_retry: f64,
}

/// The in-memory caches' budget unless `--memory-mb` says otherwise: 128
/// MiB, with sled's 96 (`StoreConfig::durable`), keeps a crawl of 100,000
/// full recipes and the mixed run after it under 384 MiB resident, as fast
/// as 256 and 256 did (docs/journal/33-close-to-the-limit.md, "Budgets").
const DEFAULT_MEMORY: CacheSize = CacheSize { bytes: 128 * MIB };

fn serve(args: ServeArgs, out: &mut impl Write) -> Result<()> {
    let memory = args.memory_mb.unwrap_or(DEFAULT_MEMORY);
    // Split where the caches are owned (`web::caches`); the store takes
    // its entities' share when it is opened.
    let budget = CacheBudget::of(memory.bytes());
    let mut config = if args.demo {
        args.store.with_cache(StoreConfig::temporary())
    } else {
        args.store
            .with_cache(StoreConfig::durable(&args.store.data))
    };
    config.entity_cache_bytes = budget.entities;
    // What the operator gave the process: the caches' budget and sled's.
    let memory_limit = memory.bytes().saturating_add(config.cache_bytes);
    let (store, log) = if args.demo {
        (demo_store(config, out)?, None)
    } else {
        args.store.open_following(config)?
    };
    // Kept until the server stops.
    let _follower = match log {
        Some(_) => Some(follow_log(&store, out)?),
        None if store.follows_log() => bail!(
            "the store at {} follows a log in PostgreSQL: serve it with --database-url (or DATABASE_URL)",
            args.store.data.display()
        ),
        None => None,
    };
    let config = app::Config {
        addr: args.addr,
        workers: args.workers,
        base_url: args.base_url,
        cache_budget: budget,
        memory_limit: Some(memory_limit),
        allow_private_fetch: args.allow_private_fetch,
        trusted_proxies: TrustedProxies::new(args.trusted_proxies, args.forwarded_header),
        timeouts: app::Timeouts::default(),
        health: HealthLimits {
            failing_for: Duration::from_secs(args.unhealthy_after),
            max_lag: args.unhealthy_lag,
        },
        session_recheck: Duration::from_secs(args.session_recheck),
        nodes: args.nodes,
        federation: crate::federation::Settings {
            blocked: args.blocked_domains,
            retry_after: Duration::try_from_secs_f64(args.delivery_retry)
                .context("--delivery-retry is a number of seconds")?,
            ..crate::federation::Settings::default()
        },
    };
    serve_until_stopped(store, &config, args.log_json, out)
}

/// Follows the log the store was opened on, on the store's own thread,
/// until the guard is dropped, so that other nodes' writes are shown here
/// too.
fn follow_log(store: &Store, out: &mut impl Write) -> Result<Follower> {
    writeln!(
        out,
        "forkful: following the log in PostgreSQL, at transaction {}",
        store.db().basis()
    )?;
    store
        .follow_in_background(FOLLOW_POLL)
        .context("starting to follow the log")
}

/// How often a node reads the log when no notice came: a notice lost (a
/// dropped connection) delays a write's showing here by at most this.
const FOLLOW_POLL: Duration = Duration::from_secs(1);

/// `forkful log`.
#[derive(Debug, Args)]
pub struct LogArgs {
    #[command(subcommand)]
    pub action: LogAction,
}

#[derive(Debug, Subcommand)]
pub enum LogAction {
    /// Copy a store's whole history into an empty log in PostgreSQL, and
    /// make the store follow it: how a site kept in one directory moves to
    /// `serve --database-url`.
    Push {
        /// The store, and the log's database in --database-url.
        #[command(flatten)]
        store: StoreArgs,
    },
}

fn log_command(args: LogArgs, out: &mut impl Write) -> Result<()> {
    match args.action {
        LogAction::Push { store } => {
            if !store.data.exists() {
                bail!("there is no store at {}", store.data.display());
            }
            let Some(database_url) = &store.database_url else {
                bail!("log push copies the store into a log: say which with --database-url (or DATABASE_URL)");
            };
            let mut config = StoreConfig::durable(&store.data);
            config.cache_bytes = store.cache_mb.unwrap_or(BULK_CACHE).bytes();
            let opened = store.open_alone(config)?;
            let log =
                PgLog::connect(database_url).context("connecting to the log in PostgreSQL")?;
            // By transaction id, which grows with the history copied.
            let bar = progress_bar("{bar:40} transaction {pos} of {len}, {eta} left");
            bar.set_length(opened.db().basis());
            let copied = opened
                .push_to_log(Arc::new(log), &mut |t| bar.set_position(t))
                .context("copying the store into the log")?;
            bar.finish_and_clear();
            writeln!(
                out,
                "copied {copied} transactions (basis {}) from {} into the log; serve it with --database-url",
                opened.db().basis(),
                store.data.display()
            )?;
            Ok(())
        }
    }
}

/// A temporary store with the demo seeded into it, for `serve --demo`.
fn demo_store(config: StoreConfig, out: &mut impl Write) -> Result<Store> {
    let store = Store::open_with(config).context("opening a temporary store")?;
    let report = seed::demo(&store).context("seeding the demo")?;
    writeln!(
        out,
        "forkful: seeded the demo into a temporary store: {} recipes, {} versions",
        report.recipes, report.versions
    )?;
    Ok(store)
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
fn serve_until_stopped(
    store: Store,
    config: &app::Config,
    log_json: bool,
    out: &mut impl Write,
) -> Result<()> {
    init_logs(log_json);
    let recipes = Recipes::open(store.clone()).context("opening the recipes")?;
    actix_web::rt::System::new().block_on(async {
        let running =
            app::build(config, recipes).with_context(|| format!("listening on {}", config.addr))?;
        writeln!(out, "forkful: serving http://{}", running.addr)?;
        out.flush()?;
        let served = running.server.await.context("serving");
        if let Some(deliveries) = running.deliveries {
            deliveries.stop();
        }
        served
    })?;
    store.flush().context("flushing the store")?;
    writeln!(out, "forkful: stopped; the store is flushed")?;
    Ok(())
}

/// `forkful seed`.
#[derive(Debug, Args)]
pub struct SeedArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// Instead of the demo, N synthetic recipes in fork forests.
    #[arg(long, env = "FORKFUL_SYNTHETIC", value_name = "N")]
    pub synthetic: Option<usize>,
    /// Synthetic: the lineage depth of each forest's deepest recipe.
    #[arg(
        long,
        env = "FORKFUL_DEPTH",
        default_value_t = 12,
        requires = "synthetic"
    )]
    pub depth: usize,
    /// Synthetic: forks per recipe along each forest's spine.
    #[arg(
        long,
        env = "FORKFUL_FANOUT",
        default_value_t = 3,
        requires = "synthetic"
    )]
    pub fanout: usize,
    /// Synthetic: the generator's seed; the same numbers give the same catalog.
    #[arg(long, env = "FORKFUL_RNG", default_value_t = 1, requires = "synthetic")]
    pub rng: u64,
    /// Synthetic: bare recipes (title, one ingredient, one step), for scale tests.
    #[arg(long, env = "FORKFUL_SKELETON", requires = "synthetic")]
    pub skeleton: bool,
    /// Delete whatever the store holds first.
    // The one flag with no environment variable: a variable left set in a
    // shell would delete a store without anyone asking on the command line.
    #[arg(long)]
    pub force: bool,
}

impl SeedArgs {
    /// The synthetic catalog asked for, if any, once its shape is checked.
    fn shape(&self) -> Result<Option<seed::synthetic::Shape>> {
        if self.depth > crate::domain::MAX_LINEAGE {
            bail!(
                "--depth {} is deeper than a lineage may go ({})",
                self.depth,
                crate::domain::MAX_LINEAGE
            );
        }
        if self.fanout == 0 {
            bail!("--fanout must be at least 1");
        }
        Ok(self.synthetic.map(|recipes| seed::synthetic::Shape {
            recipes,
            depth: self.depth,
            fanout: self.fanout,
            rng: self.rng,
            skeleton: self.skeleton,
        }))
    }
}

fn seed(args: SeedArgs, out: &mut impl Write) -> Result<()> {
    // Every argument is checked before --force deletes anything.
    let shape = args.shape()?;
    let data = &args.store.data;
    if args.force && data.exists() {
        if !data.is_dir() {
            bail!(
                "--data {} is not a directory, so not a store: nothing was deleted",
                data.display()
            );
        }
        let stranger =
            Store::stranger_in(data).with_context(|| format!("reading {}", data.display()))?;
        if let Some(stranger) = stranger {
            bail!(
                "--data {} is not a forkful store (it holds {}, which a store does not): \
                 --force deletes only a store, so nothing was deleted",
                data.display(),
                stranger.display()
            );
        }
        std::fs::remove_dir_all(data).with_context(|| format!("removing {}", data.display()))?;
    }
    let store = args.store.open_bulk()?;
    match shape {
        None => seed_demo(&store, data, out),
        Some(shape) => seed_synthetic(&store, shape, data, out),
    }
}

fn seed_demo(store: &Store, data: &Path, out: &mut impl Write) -> Result<()> {
    let report = seed::demo(store).with_context(|| format!("seeding {}", data.display()))?;
    writeln!(
        out,
        "seeded {} recipes ({} of them forks) in {} versions into {} (basis {})",
        report.recipes,
        report.forks,
        report.versions,
        data.display(),
        report.basis
    )?;
    Ok(())
}

fn seed_synthetic(
    store: &Store,
    shape: seed::synthetic::Shape,
    data: &Path,
    out: &mut impl Write,
) -> Result<()> {
    if !store.is_empty() {
        bail!(
            "the store at {} is not empty; use --force to replace it",
            data.display()
        );
    }
    let ids = seed::synthetic::generate(store, shape, std::io::stderr().is_terminal())
        .with_context(|| format!("seeding {}", data.display()))?;
    writeln!(
        out,
        "seeded {} synthetic recipes (lineage depth {}, fanout {}, rng {}) into {} (basis {})",
        ids.len(),
        shape.depth,
        shape.fanout,
        shape.rng,
        data.display(),
        store.db().basis()
    )?;
    Ok(())
}

/// `forkful export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// The file to write (`-` for standard output).
    pub file: PathBuf,
}

fn export(args: ExportArgs, out: &mut impl Write) -> Result<()> {
    args.store.must_exist()?;
    let store = args.store.open_bulk()?;
    if args.file == Path::new("-") {
        export_all(&store, &mut std::io::stdout().lock())?;
        return Ok(());
    }
    let summary = export_to_file(&store, &args.file)?;
    writeln!(
        out,
        "exported {} transactions, {} datoms (basis {}) and {} picture records to {}",
        summary.transactions,
        summary.datoms,
        summary.basis,
        summary.records,
        args.file.display()
    )?;
    Ok(())
}

/// The store's datoms and its pictures (never its sessions or passwords).
fn export_all(store: &Store, out: &mut impl Write) -> Result<TransferSummary> {
    let db = store.db();
    let pictures = store.keyspace(pictures::KEYSPACE)?;
    Ok(store::export_with(
        &db,
        &[(pictures::KEYSPACE, &pictures)],
        out,
    )?)
}

/// Exports to a file written beside `file` and renamed, so a failed export
/// never leaves a half-written file under the real name.
fn export_to_file(store: &Store, file: &Path) -> Result<TransferSummary> {
    let partial = file.with_extension("partial");
    let mut writer = BufWriter::new(
        File::create(&partial).with_context(|| format!("creating {}", partial.display()))?,
    );
    let summary =
        export_all(store, &mut writer).with_context(|| format!("writing {}", partial.display()))?;
    writer
        .into_inner()
        .map_err(|e| e.into_error())
        .and_then(|f| f.sync_all())
        .with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, file).with_context(|| format!("renaming to {}", file.display()))?;
    Ok(summary)
}

/// `forkful import-recipe`.
#[derive(Debug, Args)]
pub struct ImportRecipeArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// An http or https address, or the path of a saved page.
    pub source: String,
    /// The cook who brings it in (made on first use).
    #[arg(long = "as", value_name = "HANDLE")]
    pub handle: String,
    /// The page's address, for a saved page that does not say it (no
    /// canonical link).
    #[arg(long)]
    pub url: Option<String>,
    /// Fetch from this machine and private networks too (for tests).
    #[arg(long)]
    pub allow_private: bool,
    /// Print what would be brought in, and save nothing.
    #[arg(long)]
    pub dry_run: bool,
}

fn import_recipe(args: ImportRecipeArgs, out: &mut impl Write) -> Result<()> {
    let handle = Slug::parse(&args.handle)
        .map_err(|_| anyhow::anyhow!("{:?} is not a cook's handle (a-z, 0-9, -)", args.handle))?;
    let fetcher = if args.allow_private {
        import::Fetcher::allowing_private()
    } else {
        import::Fetcher::public_only()
    };
    let (url, html) = if args.source.contains("://") {
        fetcher
            .fetch(&args.source)
            .with_context(|| format!("fetching {}", args.source))?
    } else {
        let html = std::fs::read_to_string(&args.source)
            .with_context(|| format!("reading {}", args.source))?;
        let url =
            import::page_address(args.url.as_deref().unwrap_or(""), &html).ok_or_else(|| {
                anyhow::anyhow!(
                    "{} does not say its address (no canonical link, no url or @id in its JSON-LD, no og:url, no address its browser saved in it): give it with --url",
                    args.source
                )
            })?;
        (url, html)
    };
    let imported =
        import::from_html(&html, &url).with_context(|| format!("reading the recipe at {url}"))?;
    writeln!(out, "{}", imported.summary())?;
    if args.dry_run {
        writeln!(out, "nothing was saved (--dry-run)")?;
        return Ok(());
    }
    // The page's picture is fetched and stored as the site's /import
    // stores it; the recipe comes in without one that cannot be, as there.
    // What the import saves: its draft, with the picture stored below.
    let mut content = imported.content.to_draft();
    let picture = content.image.take().map(|address| {
        let fetched = fetcher.fetch_picture(&address).map_err(|e| e.to_string());
        (address, fetched)
    });
    let store = args.store.open()?;
    let recipes = Recipes::open(store)?;
    if let Some((address, fetched)) = picture {
        match fetched.and_then(|bytes| {
            recipes
                .add_picture(&bytes, handle.as_str())
                .map_err(|e| e.to_string())
        }) {
            Ok(mut picture) => {
                picture.alt = content.title.clone();
                content.picture = Some(picture);
                content.image = Some(address);
            }
            Err(why) => eprintln!("its picture ({address}) was not brought in: {why}"),
        }
    }
    let change = Change::by(
        handle.as_str(),
        &format!(
            "Brought in from {}, read from {}",
            imported.source.name,
            imported.read_from()
        ),
    );
    let (slug, _) = recipes.import(
        &Slug::from_title(&content.title),
        content,
        &imported.source,
        &change,
    )?;
    writeln!(
        out,
        "brought in {slug} from {} ({}) as {handle}",
        imported.source.name, imported.source.url
    )?;
    Ok(())
}

/// `forkful query`.
#[derive(Debug, Args)]
pub struct QueryArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// Query the database as of this basis (a transaction id).
    #[arg(long, env = "FORKFUL_AS_OF")]
    pub as_of: Option<u64>,
    /// Query every assertion and retraction, not just what holds.
    #[arg(long, env = "FORKFUL_HISTORY")]
    pub history: bool,
    /// Stop the query after this many steps of work.
    #[arg(long, env = "FORKFUL_WORK_LIMIT", default_value_t = DEFAULT_WORK_LIMIT)]
    pub work_limit: u64,
    /// The query, e.g. '[:find ?t :in $ ?s :where [?r :recipe/slug ?s] [?r :recipe/title ?t]]'.
    pub query: String,
    /// Values for the inputs after $ in :in, as EDN: a scalar (`"shakshuka"`, `42`),
    /// a collection (`["a" "b"]`), a relation (`[["a" 1] ["b" 2]]`), or rules.
    pub args: Vec<String>,
}

fn query(args: QueryArgs, out: &mut impl Write) -> Result<()> {
    args.store.must_exist()?;
    let store = args.store.open()?;
    let mut db = store.db();
    if let Some(t) = args.as_of {
        db = db.as_of(t);
    }
    if args.history {
        db = db.history();
    }
    let parsed = Query::parse(&args.query).context("reading the query")?;
    let mut inputs = vec![Input::Db(db)];
    for (i, arg) in args.args.iter().enumerate() {
        inputs.push(
            Input::from_edn(arg).with_context(|| format!("reading input {} ({arg})", i + 1))?,
        );
    }
    let result = parsed
        .run(&inputs, args.work_limit)
        .context("running the query")?;
    write!(out, "{}", render_table(&result))?;
    Ok(())
}

/// `forkful import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// The export file to read.
    pub file: PathBuf,
}

fn import(args: ImportArgs, out: &mut impl Write) -> Result<()> {
    let (file, data) = (&args.file, &args.store.data);
    if !file.is_file() {
        bail!("there is no file at {}", file.display());
    }
    let store = args.store.open_bulk()?;
    let bar = progress_bar("{bar:40} {pos}/{len} datoms, {per_sec}, {eta} left");
    let summary = store::import_with_keyspaces(
        &store,
        || File::open(file).map(BufReader::new),
        &mut RecipeImportCheck::default(),
        &mut |progress| {
            bar.set_length(progress.total as u64);
            bar.set_position(progress.written as u64);
        },
        &[pictures::KEYSPACE],
    )
    .with_context(|| format!("importing {} into {}", file.display(), data.display()))?;
    bar.finish_and_clear();
    writeln!(
        out,
        "imported {} transactions, {} datoms (basis {}) and {} picture records into {}",
        summary.transactions,
        summary.datoms,
        summary.basis,
        summary.records,
        data.display()
    )?;
    Ok(())
}

/// A progress bar on standard error for a person at a terminal; hidden
/// otherwise, so logs and pipes get no control characters.
fn progress_bar(template: &str) -> indicatif::ProgressBar {
    let bar = if std::io::stderr().is_terminal() {
        indicatif::ProgressBar::new(0)
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_style(indicatif::ProgressStyle::with_template(template).expect("a valid template"));
    bar
}

#[cfg(test)]
mod tests {
    use super::CacheSize;

    #[test]
    fn a_cache_size_is_from_one_mib_to_the_most_a_u64_of_bytes_holds() {
        assert_eq!(CacheSize::parse_mib("64").unwrap().bytes(), 64 << 20);
        let most = CacheSize::parse_mib(&CacheSize::MAX_MIB.to_string()).unwrap();
        assert_eq!(most.bytes(), CacheSize::MAX_MIB << 20);
        let too_big = (CacheSize::MAX_MIB + 1).to_string();
        assert!(CacheSize::parse_mib(&too_big)
            .unwrap_err()
            .contains("at most 17592186044415 MiB"));
        assert!(CacheSize::parse_mib("0")
            .unwrap_err()
            .contains("at least 1"));
        assert!(CacheSize::parse_mib("-1").is_err());
        assert!(CacheSize::parse_mib("1.5").is_err());
    }

    #[test]
    fn a_memory_budget_may_be_zero_but_not_negative_or_too_big() {
        assert_eq!(CacheSize::parse_budget_mib("0").unwrap().bytes(), 0);
        assert_eq!(CacheSize::parse_budget_mib("8").unwrap().bytes(), 8 << 20);
        assert!(CacheSize::parse_budget_mib("-1").is_err());
        assert!(CacheSize::parse_budget_mib(&(CacheSize::MAX_MIB + 1).to_string()).is_err());
    }
}

/// `forkful user`.
#[derive(Debug, Args)]
pub struct UserArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(subcommand)]
    pub action: UserAction,
}

#[derive(Debug, Subcommand)]
pub enum UserAction {
    /// Add a cook; the password is read from standard input.
    Add {
        /// The cook's handle: a-z, 0-9 and `-`.
        handle: String,
        /// The cook's display name.
        #[arg(long)]
        name: String,
    },
    /// Set a cook's password (read from standard input); ends their sessions.
    Passwd { handle: String },
    /// Disable a cook's account; ends their sessions.
    Disable { handle: String },
    /// Enable a disabled account again.
    Enable { handle: String },
}

fn user(args: UserArgs, out: &mut impl Write) -> Result<()> {
    args.store.must_exist()?;
    let store = args.store.open()?;
    let recipes = Recipes::open(store.clone())?;
    let accounts = Accounts::open(&recipes)?;
    let handle = |text: &str| {
        Slug::parse(text).map_err(|_| anyhow::anyhow!("{text:?} is not a handle (a-z, 0-9, -)"))
    };
    match args.action {
        UserAction::Add { handle: h, name } => {
            let cook = accounts.sign_up(&handle(&h)?, &name, &password_from_stdin()?)?;
            writeln!(out, "added {} ({})", cook.handle, cook.name)?;
        }
        UserAction::Passwd { handle: h } => {
            accounts.set_password(&handle(&h)?, &password_from_stdin()?)?;
            writeln!(out, "set the password of {h}; their sessions ended")?;
        }
        UserAction::Disable { handle: h } => {
            accounts.set_disabled(&handle(&h)?, true)?;
            writeln!(out, "disabled {h}; their sessions ended")?;
        }
        UserAction::Enable { handle: h } => {
            accounts.set_disabled(&handle(&h)?, false)?;
            writeln!(out, "enabled {h}")?;
        }
    }
    store.flush()?;
    Ok(())
}

/// The first line of standard input, without its line ending.
fn password_from_stdin() -> Result<String> {
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .context("reading the password from standard input")?;
    let password = line.trim_end_matches(['\r', '\n']).to_owned();
    if password.is_empty() {
        bail!("no password on standard input: give it as the first line");
    }
    Ok(password)
}
