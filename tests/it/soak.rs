//! One server process under steady load for a while: every answer is the
//! one expected, every acknowledged write reads back afterwards, and the
//! server's memory levels off.
//!
//! The real server binary (`forkful serve`, port 0, a durable store in a
//! temporary directory) serves, on loopback, `READERS` threads that read
//! recipe pages, their JSON, history, lineage and family pages, the
//! catalog and search, half of them with a browser's `Accept-Encoding:
//! gzip, br` (the bodies are decoded and checked too), and `WRITERS`
//! cooks who create recipes, edit their own and fork anyone's through the
//! forms, a write every `WRITE_PAUSE` or so, for the first two thirds of
//! the run; the last third is reads only. Any answer but the one
//! expected (200 for a page, with what the page must show; a 303 to the
//! recipe for a write) is an error, and the test wants none. Every few
//! seconds it samples the server's resident memory (`VmRSS`) and the
//! store's size on disk, and prints a table at the end: elapsed seconds,
//! requests and writes so far, RSS, store.
//!
//! After the load: the server shows each recipe as the ledger has it (its
//! JSON's title and version count, and the whole page check of
//! `Ledger::check_served` for some), stops on SIGTERM with its store
//! flushed, and the store, opened directly, holds every acknowledged
//! version exactly as written (`Ledger::check`) and passes
//! `Store::verify_current_entries`.
//!
//! Memory: the caches are given small budgets (`SERVE_FLAGS`), so that
//! they are full well before the middle of a run (the server's memory
//! limit, the two budgets together, is below what sled holds for a store
//! being written, so it cuts them, down to an eighth, early on: they are
//! full sooner still, and grow back only if memory falls well under the
//! limit). What grows after that is
//! what the data needs, or a leak. sled 0.34 holds in memory a share of
//! every page it has written or read, whatever its cache capacity: sled
//! alone, with a 32 MiB cache, writing batches of 400 50-byte keys and
//! flushing each as the server does, gained 82 MiB of RSS for its first 39
//! MiB on disk, 59 for the next 38, then about 0.6 MiB per MiB (250 MiB
//! resident at 190 MiB on disk). So while cooks write, the server's memory
//! follows its store. Two checks, each able to see a leak the other would
//! not:
//!
//! - while cooks write, RSS grows by no more than the store grows on disk
//!   (`PER_STORE_MIB` of RSS per MiB of store), plus `LEVEL_OFF_MIB`;
//! - once they stop, with the readers still reading everything, the last
//!   third's highest RSS exceeds what it was when the writing stopped by
//!   at most `LEVEL_OFF_MIB` or `LEVEL_OFF_PART` of it: memory levels off.
//!
//! Both need a run of `LEVEL_OFF_SECONDS` or more (a short run is still
//! warming up); every run stays under `MAX_RSS_MIB`.
//! `FORKFUL_SOAK_SECONDS` sets the length (a few seconds by default);
//! `scripts/soak.sh` runs the release binary for five minutes. With
//! `FORKFUL_SOAK_LOG=1` the server keeps its log in PostgreSQL (a database
//! of its own on the machine's server, `--database-url`): the same load
//! and checks, on a node.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use forkful::domain::Recipes;
use forkful::store::Store;

use crate::helpers::Page;
use crate::helpers::{count_from_env, seed_from_clock};
use crate::http_client::{Browser, Cook, Ledger, Outcome, Rng, Server, WriteKind};

const SECONDS_VAR: &str = "FORKFUL_SOAK_SECONDS";
const DEFAULT_SECONDS: u64 = 5;
const WRITERS: [&str; 2] = ["ann", "ben"];
const READERS: usize = 4;
/// How long a writer waits between writes: reads are most of a site's
/// traffic, and a store written flat out grows faster than any cache fills.
const WRITE_PAUSE: Duration = Duration::from_millis(25);
/// Two workers for two cores; caches small enough to be full early on.
const SERVE_FLAGS: [&str; 6] = ["--workers", "2", "--cache-mb", "32", "--memory-mb", "32"];
/// Resident memory no run may reach: sled's cache (32 MiB) and ours (32
/// MiB), what sled holds past its cache, and the code and the heap's slack.
const MAX_RSS_MIB: f64 = 512.0;
/// The last third's highest RSS over its value when the writing stopped,
/// at most.
const LEVEL_OFF_MIB: f64 = 16.0;
/// RSS the server may gain while cooks write, per MiB its store grows:
/// sled alone gains up to 2.1 on a young store (see above); a leak of the
/// server's own on top of that shows.
const PER_STORE_MIB: f64 = 2.5;
const LEVEL_OFF_PART: f64 = 0.10;
/// Runs shorter than this only check `MAX_RSS_MIB`.
const LEVEL_OFF_SECONDS: u64 = 30;
/// Recipes the page check of `check_served` is run on after the load.
const SERVED_CHECKS: usize = 20;

/// What the threads share.
struct Load {
    ledger: Mutex<Ledger>,
    /// Recipes saved so far, with their search words, for the readers.
    known: Mutex<Vec<(String, String)>>,
    requests: AtomicU64,
    writes: AtomicU64,
    errors: Mutex<Vec<String>>,
    /// Writers stop here; readers go on to `until`.
    writes_until: Instant,
    until: Instant,
}

impl Load {
    fn error(&self, what: String) {
        self.errors.lock().expect("the errors").push(what);
    }

    fn running(&self) -> bool {
        Instant::now() < self.until
    }

    fn writing(&self) -> bool {
        Instant::now() < self.writes_until
    }
}

/// One sample of the server's memory.
struct Sample {
    elapsed: f64,
    requests: u64,
    writes: u64,
    rss_mib: f64,
    store_mib: f64,
}

fn write_until_done(cook: &mut Cook, load: &Load, mut rng: Rng) {
    while load.writing() {
        let write = cook.next_write(&load.ledger, &mut rng);
        let new = !matches!(write.kind, WriteKind::Edit);
        let result = cook.browser.write(write);
        load.requests.fetch_add(2, Ordering::Relaxed);
        match result {
            Ok((attempt, Outcome::Saved)) => {
                load.ledger.lock().expect("the ledger").saved(&attempt);
                if new {
                    let word = attempt.word.clone();
                    load.known
                        .lock()
                        .expect("the recipes")
                        .push((attempt.slug, word));
                }
                load.writes.fetch_add(1, Ordering::Relaxed);
            }
            Ok((attempt, Outcome::Answered(status, body))) => load.error(format!(
                "{} writing {} version {}: {status} {body}",
                cook.handle, attempt.slug, attempt.version
            )),
            Ok((attempt, Outcome::Unanswered(e))) => load.error(format!(
                "{} writing {}: no answer: {}",
                cook.handle, attempt.slug, e.why
            )),
            Err(e) => load.error(format!("{}: a form's page: {}", cook.handle, e.why)),
        }
        thread::sleep(WRITE_PAUSE);
    }
}

fn read_until_done(mut browser: Browser, load: &Load, mut rng: Rng) {
    while load.running() {
        let chosen = {
            let known = load.known.lock().expect("the recipes");
            (!known.is_empty()).then(|| known[rng.below(known.len() as u64) as usize].clone())
        };
        let compressed = rng.below(2) == 0;
        let (path, expect) = match (chosen, rng.below(8)) {
            (None, _) | (_, 0) => ("/".to_owned(), Expect::Shows("main h2 a")),
            (_, 1) => ("/?sort=recent".to_owned(), Expect::Shows("main h2 a")),
            (Some((slug, word)), 2) => (format!("/recipes/{slug}"), Expect::Holds(word)),
            (Some((slug, _)), 3) => (
                format!("/recipes/{slug}.json"),
                Expect::Holds(format!("\"slug\": \"{slug}\"")),
            ),
            (Some((slug, _)), 4) => (
                format!("/recipes/{slug}/history"),
                Expect::Shows("ol.versions > li"),
            ),
            (Some((slug, _)), 5) => (
                format!("/recipes/{slug}/lineage"),
                Expect::Holds("Lineage of".to_owned()),
            ),
            (Some((slug, _)), 6) => (
                format!("/recipes/{slug}/forks"),
                Expect::Holds(format!("href=\"/recipes/{slug}\"")),
            ),
            (Some((slug, word)), _) => (
                format!("/search?q={word}"),
                Expect::Finds(format!("/recipes/{slug}")),
            ),
        };
        let headers: &[(&str, &str)] = match compressed {
            true => &[("Accept-Encoding", "gzip, br")],
            false => &[],
        };
        let answer = browser.get_with(&path, headers);
        load.requests.fetch_add(1, Ordering::Relaxed);
        let page = match answer {
            Ok(page) => page,
            Err(e) => {
                load.error(format!("GET {path}: no answer: {}", e.why));
                continue;
            }
        };
        let coding = page.header("content-encoding").unwrap_or("identity");
        let checked = if page.status != 200 {
            Err(format!("{}\n{}", page.status, page.body))
        } else if compressed != (coding != "identity") {
            Err(format!(
                "Content-Encoding {coding} when compression was {}asked for",
                if compressed { "" } else { "not " }
            ))
        } else {
            expect.check(&page)
        };
        if let Err(why) = checked {
            load.error(format!("GET {path} ({coding}): {why}"));
        }
    }
}

/// What a page read must show besides its 200.
enum Expect {
    /// An element matching this selector.
    Shows(&'static str),
    /// This text in the (decoded) body.
    Holds(String),
    /// Search results of exactly this one recipe.
    Finds(String),
}

impl Expect {
    fn check(&self, page: &Page) -> Result<(), String> {
        match self {
            Expect::Shows(css) => {
                let selector = scraper::Selector::parse(css).expect("a selector");
                match page.html().select(&selector).next() {
                    Some(_) => Ok(()),
                    None => Err(format!("nothing matches {css}")),
                }
            }
            Expect::Holds(text) if page.body.contains(text.as_str()) => Ok(()),
            Expect::Holds(text) => Err(format!("the body does not hold {text:?}")),
            Expect::Finds(href) => {
                let found = page.attrs("main h2 a", "href");
                match found == [href.as_str()] {
                    true => Ok(()),
                    false => Err(format!("found {found:?}, not {href}")),
                }
            }
        }
    }
}

fn seconds() -> u64 {
    count_from_env(SECONDS_VAR, DEFAULT_SECONDS, "seconds")
}

/// The highest RSS sampled from `from` to `to` (fractions of the run).
fn highest(samples: &[Sample], seconds: f64, from: f64, to: f64) -> f64 {
    samples
        .iter()
        .filter(|s| s.elapsed >= from * seconds && s.elapsed <= to * seconds)
        .map(|s| s.rss_mib)
        .fold(0.0, f64::max)
}

/// The last sample at or before `at` (a fraction of the run).
fn sample_at(samples: &[Sample], seconds: f64, at: f64) -> &Sample {
    samples
        .iter()
        .rev()
        .find(|s| s.elapsed <= at * seconds)
        .unwrap_or(&samples[0])
}

/// The size of the files under `dir`, in MiB.
fn store_mib(dir: &std::path::Path) -> f64 {
    let mut bytes = 0;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            match entry.metadata() {
                Ok(m) if m.is_dir() => pending.push(entry.path()),
                Ok(m) => bytes += m.len(),
                Err(_) => {}
            }
        }
    }
    bytes as f64 / (1024.0 * 1024.0)
}

#[test]
fn a_server_under_load_answers_everything_loses_nothing_and_levels_off() {
    let seconds = seconds();
    let seed = seed_from_clock();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = std::env::var("FORKFUL_SOAK_LOG")
        .is_ok_and(|on| on == "1")
        .then(crate::postgres::fresh_database);
    let mut flags: Vec<&str> = SERVE_FLAGS.to_vec();
    if let Some(url) = &log {
        eprintln!("soak: on a log in PostgreSQL");
        flags.extend(["--database-url", url.as_str()]);
    }
    let mut server = Server::start(dir.path(), &flags).unwrap_or_else(|why| panic!("{why}"));
    let mut cooks: Vec<Cook> = WRITERS
        .iter()
        .zip('a'..)
        .map(|(handle, letter)| Cook::sign_up(handle, letter, server.origin()))
        .collect::<Result<_, _>>()
        .unwrap_or_else(|why| panic!("{why}"));
    // A recipe from each cook first, so that no reader finds the catalog
    // empty.
    let load_ledger = Mutex::new(Ledger::default());
    let mut known = Vec::new();
    for cook in &mut cooks {
        let write = cook.next_write(&load_ledger, &mut Rng::new(seed));
        match cook.browser.write(write) {
            Ok((attempt, Outcome::Saved)) => {
                load_ledger.lock().expect("the ledger").saved(&attempt);
                known.push((attempt.slug, attempt.word));
            }
            Ok((attempt, outcome)) => panic!("{}'s first recipe: {outcome:?}", attempt.slug),
            Err(e) => panic!("{}'s first recipe: {}", cook.handle, e.why),
        }
    }
    let sample_every = Duration::from_secs((seconds / 20).clamp(1, 5));
    let started = Instant::now();
    let load = Load {
        ledger: load_ledger,
        known: Mutex::new(known),
        requests: AtomicU64::new(0),
        writes: AtomicU64::new(0),
        errors: Mutex::new(Vec::new()),
        writes_until: started + Duration::from_secs(seconds) * 2 / 3,
        until: started + Duration::from_secs(seconds),
    };
    let mut samples = Vec::new();
    thread::scope(|scope| {
        for cook in &mut cooks {
            let rng = Rng::new(seed ^ cook.number());
            let load = &load;
            scope.spawn(move || write_until_done(cook, load, rng));
        }
        for reader in 0..READERS {
            let browser = Browser::new(server.origin());
            let rng = Rng::new(seed ^ ((reader as u64 + 1) << 32));
            let load = &load;
            scope.spawn(move || read_until_done(browser, load, rng));
        }
        loop {
            let elapsed = started.elapsed();
            samples.push(Sample {
                elapsed: elapsed.as_secs_f64(),
                requests: load.requests.load(Ordering::Relaxed),
                writes: load.writes.load(Ordering::Relaxed),
                rss_mib: server.rss_kib().unwrap_or(0) as f64 / 1024.0,
                store_mib: store_mib(dir.path()),
            });
            if !load.running() {
                break;
            }
            let left = load.until.saturating_duration_since(Instant::now());
            thread::sleep(sample_every.min(left.max(Duration::from_millis(1))));
        }
    });
    let elapsed = started.elapsed().as_secs_f64();
    let requests = load.requests.load(Ordering::Relaxed);
    let writes = load.writes.load(Ordering::Relaxed);
    eprintln!(
        "soak: {:>9} {:>9} {:>7} {:>8} {:>10}",
        "elapsed s", "requests", "writes", "RSS MiB", "store MiB"
    );
    for s in &samples {
        eprintln!(
            "soak: {:>9.1} {:>9} {:>7} {:>8.1} {:>10.1}",
            s.elapsed, s.requests, s.writes, s.rss_mib, s.store_mib
        );
    }

    // Every acknowledged write, as the server shows it.
    let mut ledger = load.ledger.into_inner().expect("the ledger");
    let errors = load.errors.into_inner().expect("the errors");
    let mut reader = Browser::new(server.origin());
    for (slug, entry) in &ledger.recipes {
        let page = reader
            .get(&format!("/recipes/{slug}.json"))
            .unwrap_or_else(|e| panic!("reading {slug} back: {}", e.why));
        let json: serde_json::Value = serde_json::from_str(&page.body)
            .unwrap_or_else(|e| panic!("{slug}.json ({}): {e}", page.status));
        let shown = (json["title"].as_str(), json["versions"].as_u64());
        let written = (Some(entry.title()), Some(u64::from(entry.newest())));
        if shown != written {
            panic!("{}", readback_failure(slug, shown, written, &errors));
        }
    }
    let step = (ledger.recipes.len() / SERVED_CHECKS).max(1);
    for slug in ledger.recipes.keys().step_by(step) {
        ledger
            .check_served(&mut reader, slug)
            .unwrap_or_else(|why| panic!("after the load: {why}"));
    }
    let said = server.terminate().unwrap_or_else(|why| panic!("{why}"));
    assert!(
        said.iter().any(|l| l.contains("the store is flushed")),
        "a server stopped with SIGTERM flushes its store: {said:?}"
    );
    // A node's store is opened on its log (it takes no write without it).
    let mut config = forkful::store::StoreConfig::durable(dir.path());
    if let Some(url) = &log {
        let pg = forkful::postgres::PgLog::connect(url).expect("the log");
        config = config.following(std::sync::Arc::new(pg));
    }
    let store = Store::open_with(config).expect("reopening the store, agreeing with its log");
    store
        .verify_current_entries()
        .expect("current-entity entries");
    let recipes = Recipes::open(store).expect("opening the recipes");
    let checked = ledger
        .check(&recipes.snapshot(), &[])
        .unwrap_or_else(|why| {
            panic!("an acknowledged write is not in the store as written: {why}")
        });

    // The writing's growth is measured from the end of the first third
    // (caches full) to when the cooks stopped.
    let (warm, stopped) = (
        sample_at(&samples, elapsed, 1.0 / 3.0),
        sample_at(&samples, elapsed, 2.0 / 3.0),
    );
    let grew = stopped.rss_mib - warm.rss_mib;
    let store_grew = stopped.store_mib - warm.store_mib;
    let grew_allowed = LEVEL_OFF_MIB + PER_STORE_MIB * store_grew.max(0.0);
    let last = highest(&samples, elapsed, 2.0 / 3.0, 1.0);
    let peak = samples.iter().map(|s| s.rss_mib).fold(0.0, f64::max);
    let allowed = LEVEL_OFF_MIB.max(stopped.rss_mib * LEVEL_OFF_PART);
    eprintln!(
        "soak: {elapsed:.1} s, {requests} requests ({:.0}/s), {writes} writes ({} versions \
         read back), {} errors; RSS peak {peak:.1} MiB; while writing RSS grew {grew:.1} MiB \
         as the store grew {store_grew:.1} MiB (at most {grew_allowed:.1} allowed); reads \
         only: from {:.1} to at most {last:.1} (at most {allowed:.1} more allowed){}; \
         seed {seed}",
        requests as f64 / elapsed,
        checked.versions,
        errors.len(),
        stopped.rss_mib,
        if seconds < LEVEL_OFF_SECONDS {
            ", not checked in a run this short"
        } else {
            ""
        }
    );
    assert!(
        errors.is_empty(),
        "{} answers were not the ones expected; the first: {:#?}",
        errors.len(),
        &errors[..errors.len().min(10)]
    );
    assert!(
        writes > 0 && requests > writes,
        "the load did little (seed {seed})"
    );
    assert_eq!(
        checked.versions as u64,
        writes + WRITERS.len() as u64,
        "every acknowledged write was checked, the cooks' first recipes too"
    );
    assert!(peak < MAX_RSS_MIB, "the server's RSS reached {peak:.1} MiB");
    if seconds >= LEVEL_OFF_SECONDS {
        assert!(
            grew <= grew_allowed,
            "while cooks wrote, the server's memory grew {grew:.1} MiB, its store \
             {store_grew:.1} MiB"
        );
        assert!(
            last - stopped.rss_mib <= allowed,
            "the server's memory did not level off once the writing stopped: {:.1} MiB \
             then, {last:.1} MiB at most after",
            stopped.rss_mib
        );
    }
}

/// Why `slug` did not read back as the ledger wrote it, said precisely: a
/// write whose answer the client gave up on (under load, past its
/// timeout) may have been saved, and then the server is a version ahead
/// of the ledger, which counts only acknowledged writes; that is not a
/// lost write. Anything else is: an acknowledged write read back wrong.
fn readback_failure(
    slug: &str,
    shown: (Option<&str>, Option<u64>),
    written: (Option<&str>, Option<u64>),
    errors: &[String],
) -> String {
    let about: Vec<&String> = errors
        .iter()
        .filter(|e| {
            e.contains(&format!("writing {slug} ")) || e.contains(&format!("writing {slug}:"))
        })
        .collect();
    let unanswered = about.iter().any(|e| e.contains("no answer"));
    let ahead = shown.1 > written.1;
    if ahead && unanswered {
        format!(
            "{slug} is at version {:?}, the ledger at {:?}: a write whose answer was lost \
             (the client gave up waiting) was saved; no acknowledged write was lost. \
             The errors about it: {about:#?}",
            shown.1, written.1
        )
    } else {
        format!(
            "an acknowledged write to {slug} reads back wrong: the server shows {shown:?}, \
             the ledger wrote {written:?}; errors about it: {about:#?}; {} errors in all",
            errors.len()
        )
    }
}

#[test]
fn a_readback_failure_says_whether_a_lost_answer_or_a_lost_write() {
    let errors = vec!["cook-1 writing dal: no answer: timed out".to_owned()];
    let lost_answer = readback_failure(
        "dal",
        (Some("Dal"), Some(4)),
        (Some("Dal"), Some(3)),
        &errors,
    );
    assert!(
        lost_answer.contains("no acknowledged write was lost"),
        "{lost_answer}"
    );
    let lost_write = readback_failure(
        "dal",
        (Some("Dal"), Some(2)),
        (Some("Dal"), Some(3)),
        &errors,
    );
    assert!(
        lost_write.starts_with("an acknowledged write to dal reads back wrong"),
        "{lost_write}"
    );
    let elsewhere = readback_failure("dal-2", (Some("D"), Some(4)), (Some("D"), Some(3)), &errors);
    assert!(
        elsewhere.starts_with("an acknowledged write"),
        "{elsewhere}"
    );
}
