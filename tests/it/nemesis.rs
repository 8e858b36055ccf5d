//! The nemesis: three nodes on one log in PostgreSQL, cooks writing (new
//! recipes, edits, forks, suggestions of their forks, accepts and declines
//! of the suggestions made to them) and reading through all three at random,
//! while a nemesis kills nodes and starts them again, pauses them
//! (SIGSTOP), restarts PostgreSQL, and has the proxy between the nodes
//! and PostgreSQL drop every connection or stall them, at random. At the
//! end a checker reads every client's history:
//!
//! - every acknowledged write is in the log once, and nothing nobody sent
//!   (`Ledger::check`, on a store built from the log alone, after adopting
//!   the writes whose answer was lost and that were saved);
//! - every acknowledged suggestion is there once, from its fork, with its
//!   message, accepted in the version its acknowledged accept made (or
//!   declined, or open), and none nobody sent (`Ledger::check_suggestions`);
//! - no version number of a recipe, and no suggestion number, was
//!   acknowledged for two writes;
//! - a client's reads never go back in time after its own writes: once
//!   a write of version `v` is acknowledged, every page of that recipe the
//!   client reads, on any node, shows `v` or later (or is a 503);
//! - no answer is a 500;
//! - the three nodes' exports are the same file.
//!
//! `FORKFUL_NEMESIS_SECONDS` sets how long the faults go on (20 s in the
//! test suite); `scripts/nemesis.sh` runs it long, on the release server.

use std::collections::BTreeMap;
use std::io::{Read, Write as _};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::thread;
use std::time::{Duration, Instant};

use forkful::domain::{Change, Recipes, Review, Slug, VersionNumber};
use forkful::postgres::PgLog;
use forkful::store::{Store, StoreConfig};

use crate::helpers::Page;
use crate::helpers::{count_from_env, seed_from_clock};
use crate::http_client::{
    Attempt, Browser, Cook, Ledger, Outcome, Rng, Server, Suggested, Write, WriteKind, Written,
};
use crate::postgres::{psql, OwnCluster};

const SECONDS_VAR: &str = "FORKFUL_NEMESIS_SECONDS";
const DEFAULT_SECONDS: u64 = 20;
const NODES: usize = 3;
const COOKS: [&str; 4] = ["ann", "ben", "cat", "dan"];
const SERVE_FLAGS: [&str; 6] = ["--workers", "2", "--cache-mb", "16", "--memory-mb", "16"];

/// A TCP proxy between the nodes and PostgreSQL that the nemesis can make
/// drop every connection it carries, or stall them (hold their bytes,
/// answer nothing, close nothing) for a while.
struct Proxy {
    port: u16,
    /// Bumped to drop every connection open now.
    generation: Arc<AtomicU64>,
    stalled: Arc<AtomicBool>,
}

impl Proxy {
    fn start(to: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let generation = Arc::new(AtomicU64::new(0));
        let stalled = Arc::new(AtomicBool::new(false));
        let (gen, stall) = (generation.clone(), stalled.clone());
        thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(("127.0.0.1", to)) else {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                };
                let born = gen.load(Ordering::SeqCst);
                for (from, to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    let (gen, stall) = (gen.clone(), stall.clone());
                    thread::spawn(move || pump(from, to, born, &gen, &stall));
                }
            }
        });
        Proxy {
            port,
            generation,
            stalled,
        }
    }

    fn drop_all(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    fn stall(&self, stalled: bool) {
        self.stalled.store(stalled, Ordering::SeqCst);
    }
}

/// Copies `from` to `to` until either closes, the proxy drops the
/// connections of generation `born`, holding the bytes while stalled.
fn pump(mut from: TcpStream, mut to: TcpStream, born: u64, gen: &AtomicU64, stalled: &AtomicBool) {
    from.set_read_timeout(Some(Duration::from_millis(50))).ok();
    let mut buffer = [0u8; 16 << 10];
    loop {
        if gen.load(Ordering::SeqCst) != born {
            break;
        }
        if stalled.load(Ordering::SeqCst) {
            thread::sleep(Duration::from_millis(20));
            continue;
        }
        match from.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                if to.write_all(&buffer[..n]).is_err() {
                    break;
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => break,
        }
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}

/// The nodes, each with its store and its server (none while killed).
struct Nodes {
    dirs: Vec<PathBuf>,
    servers: Vec<Mutex<Server>>,
    origins: RwLock<Vec<String>>,
    flags: Vec<String>,
}

impl Nodes {
    fn start(root: &Path, url: &str) -> Nodes {
        let dirs: Vec<PathBuf> = (0..NODES).map(|n| root.join(format!("node-{n}"))).collect();
        let mut flags: Vec<String> = SERVE_FLAGS.iter().map(|f| f.to_string()).collect();
        flags.extend(["--database-url".to_owned(), url.to_owned()]);
        let as_str: Vec<&str> = flags.iter().map(String::as_str).collect();
        let servers: Vec<Server> = dirs
            .iter()
            .map(|dir| Server::start(dir, &as_str).unwrap())
            .collect();
        let origins = servers.iter().map(|s| s.origin().to_owned()).collect();
        Nodes {
            dirs,
            servers: servers.into_iter().map(Mutex::new).collect(),
            origins: RwLock::new(origins),
            flags,
        }
    }

    fn origin(&self, n: usize) -> String {
        self.origins.read().unwrap()[n].clone()
    }

    /// Kills node `n` and starts it again on its store (a new port).
    fn kill_and_restart(&self, n: usize) {
        let mut server = self.servers[n].lock().unwrap();
        server.kill();
        let flags: Vec<&str> = self.flags.iter().map(String::as_str).collect();
        let mut tries = 0;
        let restarted = loop {
            match Server::start(&self.dirs[n], &flags) {
                Ok(started) => break started,
                Err(why) if tries < 50 => {
                    tries += 1;
                    eprintln!("nemesis: node {n} did not start again yet: {why}");
                    thread::sleep(Duration::from_millis(200));
                }
                Err(why) => panic!("node {n} did not start again: {why}"),
            }
        };
        self.origins.write().unwrap()[n] = restarted.origin().to_owned();
        *server = restarted;
    }

    fn signal(&self, n: usize, signal: &str) {
        let pid = self.servers[n].lock().unwrap().pid();
        let status = Command::new("kill")
            .args([signal, &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill {signal} {pid}");
    }
}

/// What went wrong that must not: each a line of the checker's report.
#[derive(Default)]
struct Anomalies(Mutex<Vec<String>>);

impl Anomalies {
    fn add(&self, what: String) {
        eprintln!("nemesis: ANOMALY: {what}");
        self.0.lock().unwrap().push(what);
    }
}

/// What the clients did, for the report.
#[derive(Default)]
struct Tally {
    acknowledged: AtomicU64,
    suggested: AtomicU64,
    accepted: AtomicU64,
    declined: AtomicU64,
    refused: AtomicU64,
    /// Acts that sent nothing: their page had no form (nothing to
    /// suggest, a suggestion closed), or was not served.
    unsent: AtomicU64,
    unanswered: AtomicU64,
    reads: AtomicU64,
}

/// What was sent and never answered (or answered 503, "could not tell"):
/// the checker looks for each in the log.
#[derive(Default)]
struct InFlight {
    writes: Mutex<Vec<Attempt>>,
    suggests: Mutex<Vec<Suggested>>,
    /// Declines, by the recipe and the suggestion's number.
    declines: Mutex<Vec<(String, u32)>>,
}

/// What every client shares.
struct Shared<'a> {
    nodes: &'a Nodes,
    ledger: &'a Mutex<Ledger>,
    in_flight: &'a InFlight,
    anomalies: &'a Anomalies,
    tally: &'a Tally,
}

#[test]
fn three_nodes_under_a_nemesis_lose_no_acknowledged_write() {
    let seconds = count_from_env(SECONDS_VAR, DEFAULT_SECONDS, "seconds");
    let seed = seed_from_clock();
    let cluster = OwnCluster::start();
    let direct = cluster.database("forkful_nemesis");
    let proxy = Proxy::start(cluster.port());
    let through_proxy = direct.replace(
        &format!(":{}/", cluster.port()),
        &format!(":{}/", proxy.port),
    );
    let root = tempfile::tempdir().unwrap();
    let nodes = Nodes::start(root.path(), &through_proxy);
    let mut cooks: Vec<Cook> = COOKS
        .iter()
        .zip('a'..)
        .enumerate()
        .map(|(n, (handle, letter))| {
            Cook::sign_up(handle, letter, &nodes.origin(n % NODES)).unwrap()
        })
        .collect();

    let ledger = Mutex::new(Ledger::default());
    let in_flight = InFlight::default();
    let anomalies = Anomalies::default();
    let tally = Tally::default();
    let faults: Mutex<BTreeMap<&str, u64>> = Mutex::default();
    let until = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    thread::scope(|scope| {
        for cook in &mut cooks {
            let rng = Rng::new(
                seed ^ cook.handle.len() as u64 ^ u64::from(cook.handle.as_bytes()[0]) << 8,
            );
            let shared = Shared {
                nodes: &nodes,
                ledger: &ledger,
                in_flight: &in_flight,
                anomalies: &anomalies,
                tally: &tally,
            };
            scope.spawn(move || client(cook, rng, until, &shared));
        }
        let mut rng = Rng::new(seed);
        while Instant::now() < until {
            thread::sleep(Duration::from_millis(300 + rng.below(1_200)));
            let node = rng.below(NODES as u64) as usize;
            let hold = Duration::from_millis(300 + rng.below(1_700));
            let fault = match rng.below(5) {
                0 => {
                    nodes.kill_and_restart(node);
                    "node killed and started again"
                }
                1 => {
                    nodes.signal(node, "-STOP");
                    thread::sleep(hold);
                    nodes.signal(node, "-CONT");
                    "node paused"
                }
                2 => {
                    cluster.down();
                    thread::sleep(hold);
                    cluster.up();
                    "PostgreSQL restarted"
                }
                3 => {
                    proxy.drop_all();
                    "proxy dropped every connection"
                }
                _ => {
                    proxy.stall(true);
                    thread::sleep(hold);
                    proxy.stall(false);
                    "proxy stalled"
                }
            };
            *faults.lock().unwrap().entry(fault).or_default() += 1;
        }
    });

    // Healed: every node catches up with the log.
    let head: u64 = psql(&direct, &["SELECT max(t) FROM forkful_log"])
        .trim()
        .parse()
        .unwrap();
    for n in 0..NODES {
        let mut browser = Browser::new(&nodes.origin(n));
        let waiting = Instant::now();
        loop {
            let health = browser.get("/healthz");
            let basis = health
                .as_ref()
                .ok()
                .and_then(|h| serde_json::from_str::<serde_json::Value>(&h.body).ok())
                .and_then(|said| said["basis"].as_u64());
            if basis >= Some(head) {
                break;
            }
            assert!(
                waiting.elapsed() < Duration::from_secs(60),
                "node {n} did not catch up with the log ({head}): {:?}",
                health.map(|h| h.body)
            );
            thread::sleep(Duration::from_millis(100));
        }
    }
    for server in &nodes.servers {
        server.lock().unwrap().terminate().unwrap();
    }
    let exports: Vec<String> = nodes
        .dirs
        .iter()
        .map(|dir| crate::http_client::export_of(dir))
        .collect();
    for (n, export) in exports.iter().enumerate().skip(1) {
        if *export != exports[0] {
            anomalies.add(format!("node {n}'s export differs from node 0's"));
        }
    }

    // The log, read alone, holds every acknowledged write once.
    let rebuilt = Store::open_with(
        StoreConfig::temporary().following(Arc::new(PgLog::connect(&direct).unwrap())),
    )
    .unwrap();
    let recipes = Recipes::open(rebuilt).unwrap();
    let mut ledger = ledger.into_inner().unwrap();
    let view = recipes.snapshot();
    let writes = in_flight.writes.into_inner().unwrap();
    match ledger.check(&view, &writes) {
        Ok(checked) => eprintln!(
            "nemesis: {} versions checked against the log, {} writes whose answer was lost found saved",
            checked.versions, checked.adopted
        ),
        Err(why) => anomalies.add(format!("the log against the ledger: {why}")),
    }
    let suggests = in_flight.suggests.into_inner().unwrap();
    let declines = in_flight.declines.into_inner().unwrap();
    match ledger.check_suggestions(&view, &suggests, &declines) {
        Ok(compared) => eprintln!("nemesis: {compared} suggestions checked against the log"),
        Err(why) => anomalies.add(format!("the log's suggestions against the ledger: {why}")),
    }

    let faults = faults.into_inner().unwrap();
    let anomalies = anomalies.0.into_inner().unwrap();
    eprintln!(
        "nemesis: {:.0} s, seed {seed}: {} writes acknowledged (of them {} suggestions, {} accepts, {} declines), {} refused (503, 409 and the like), {} unanswered, {} with nothing sent (no form, or its page not served), {} reads checked; faults: {faults:?}; anomalies: {}",
        started.elapsed().as_secs_f64(),
        tally.acknowledged.load(Ordering::Relaxed),
        tally.suggested.load(Ordering::Relaxed),
        tally.accepted.load(Ordering::Relaxed),
        tally.declined.load(Ordering::Relaxed),
        tally.refused.load(Ordering::Relaxed),
        tally.unanswered.load(Ordering::Relaxed),
        tally.unsent.load(Ordering::Relaxed),
        tally.reads.load(Ordering::Relaxed),
        anomalies.len()
    );
    assert!(anomalies.is_empty(), "seed {seed}: {anomalies:#?}");
    assert!(
        tally.acknowledged.load(Ordering::Relaxed) > 0,
        "seed {seed}: no write was acknowledged"
    );
}

/// What a cook does next.
enum Act {
    /// A form of a recipe's: new, edit or fork.
    Write(Write),
    /// Suggests the cook's fork's changes to its parent.
    Suggest { fork: String, parent: String },
    /// Accepts (or declines) a suggestion made to the cook's recipe.
    Answer {
        parent: String,
        number: u32,
        accept: bool,
    },
}

/// The next act, at random: an answer to a suggestion made to the cook
/// (a fifth of the time, when there is one), a suggestion of one of its
/// forks (a fifth, when it has one), and otherwise a write.
fn next_act(cook: &mut Cook, ledger: &Mutex<Ledger>, rng: &mut Rng) -> Act {
    let roll = rng.below(10);
    {
        let ledger = ledger.lock().unwrap();
        let pick = |n: usize, rng: &mut Rng| rng.below(n as u64) as usize;
        if roll < 2 {
            let open = ledger.open_suggestions_to(&cook.handle);
            if !open.is_empty() {
                let (parent, number) = open[pick(open.len(), rng)].clone();
                let accept = rng.below(4) != 0;
                return Act::Answer {
                    parent,
                    number,
                    accept,
                };
            }
        } else if roll < 4 {
            let forks: Vec<(&String, &String)> = ledger
                .recipes
                .iter()
                .filter(|(_, e)| e.author == cook.handle)
                .filter_map(|(slug, e)| Some((slug, &e.parent.as_ref()?.0)))
                .collect();
            if !forks.is_empty() {
                let (fork, parent) = forks[pick(forks.len(), rng)];
                return Act::Suggest {
                    fork: fork.clone(),
                    parent: parent.clone(),
                };
            }
        }
    }
    Act::Write(cook.next_write(ledger, rng))
}

/// What came of a form of a suggestion's: as `Outcome`, and `NotSent`
/// when its page was not served (nothing was sent).
enum Told {
    /// A 303, to this address.
    Done(String),
    Answered(u16, String),
    Unanswered,
    NotSent,
}

/// Gets the form at `path`, and sends it with `fields` over its hidden
/// ones; `ready` reads the page first (`None`: nothing to send).
fn send_form<T>(
    cook: &mut Cook,
    path: &str,
    ready: impl FnOnce(&Page) -> Option<(T, Vec<(String, String)>)>,
) -> (Option<T>, Told) {
    let page = match cook.browser.get(path) {
        // A page with no form to send says why not (nothing to suggest,
        // already suggested, the suggestion closed): nothing is sent.
        Ok(page)
            if page.status == 200
                && !page
                    .attrs(&format!("form[action=\"{path}\"]"), "action")
                    .is_empty() =>
        {
            page
        }
        _ => return (None, Told::NotSent),
    };
    let Some((read, fields)) = ready(&page) else {
        return (None, Told::NotSent);
    };
    let fields: Vec<(&str, &str)> = fields
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    let told = match cook.browser.submit(&page, path, &fields) {
        Ok(done) if done.status == 303 => {
            Told::Done(done.header("location").unwrap_or("").to_owned())
        }
        Ok(done) => Told::Answered(done.status, done.body),
        Err(_) => Told::Unanswered,
    };
    (Some(read), told)
}

/// One cook: acts through a node chosen at random, and after each write
/// of a version acknowledged reads it back through another.
fn client(cook: &mut Cook, mut rng: Rng, until: Instant, shared: &Shared) {
    // The newest version of each recipe this cook has been acknowledged.
    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    let mut said = 0;
    while Instant::now() < until {
        let node = rng.below(NODES as u64) as usize;
        cook.browser.reconnect(&shared.nodes.origin(node));
        let made = match next_act(cook, shared.ledger, &mut rng) {
            Act::Write(write) => write_recipe(cook, write, shared),
            Act::Suggest { fork, parent } => {
                said += 1;
                let message = format!("{} suggests, {said}", cook.handle);
                suggest(cook, fork, parent, message, shared);
                None
            }
            Act::Answer {
                parent,
                number,
                accept: true,
            } => accept(cook, parent, number, shared),
            Act::Answer { parent, number, .. } => {
                decline(cook, parent, number, shared);
                None
            }
        };
        if let Some((slug, version)) = made {
            seen.insert(slug.clone(), version);
            let other = (node + 1 + rng.below(NODES as u64 - 1) as usize) % NODES;
            read_back(cook, other, &slug, &seen, shared);
        }
    }
}

/// A version acknowledged: recorded, with an anomaly if another write was
/// acknowledged the same version; the writes of that version in flight
/// were then not saved (or this one would have made the next version).
fn acknowledged(attempt: &Attempt, shared: &Shared) {
    shared.tally.acknowledged.fetch_add(1, Ordering::Relaxed);
    let mut ledger = shared.ledger.lock().unwrap();
    let twice = ledger
        .recipes
        .get(&attempt.slug)
        .and_then(|entry| entry.versions.get(&attempt.version))
        .filter(|written| **written != attempt.written);
    if twice.is_some() {
        shared.anomalies.add(format!(
            "version {} of {} was acknowledged for two writes",
            attempt.version, attempt.slug
        ));
    }
    ledger.saved(attempt);
    drop(ledger);
    shared
        .in_flight
        .writes
        .lock()
        .unwrap()
        .retain(|lost| (&lost.slug, lost.version) != (&attempt.slug, attempt.version));
}

/// An answer that is not an acknowledgement: a 500 is an anomaly; a 503
/// "could not tell" and no answer leave `sent` perhaps saved.
fn not_acknowledged(cook: &Cook, what: &str, told: Told, sent: impl FnOnce(), shared: &Shared) {
    match told {
        Told::Answered(status, body) => {
            if status >= 500 && status != 503 {
                shared
                    .anomalies
                    .add(format!("{} {what}: {status} {body}", cook.handle));
            }
            if status == 503 {
                sent();
            }
            shared.tally.refused.fetch_add(1, Ordering::Relaxed);
        }
        Told::Unanswered => {
            sent();
            shared.tally.unanswered.fetch_add(1, Ordering::Relaxed);
        }
        Told::NotSent => {
            shared.tally.unsent.fetch_add(1, Ordering::Relaxed);
        }
        Told::Done(to) => shared
            .anomalies
            .add(format!("{} {what}: a 303 to {to}", cook.handle)),
    }
}

/// A form of a recipe's; returns the version it made, if acknowledged.
fn write_recipe(cook: &mut Cook, write: Write, shared: &Shared) -> Option<(String, u32)> {
    match cook.browser.write(write) {
        Ok((attempt, Outcome::Saved)) => {
            acknowledged(&attempt, shared);
            Some((attempt.slug, attempt.version))
        }
        Ok((attempt, Outcome::Answered(status, body))) => {
            // A form's page that was refused sent nothing: version 0.
            let told = match attempt.version {
                0 => Told::NotSent,
                _ => Told::Answered(status, body),
            };
            let what = format!("writing {}", attempt.slug);
            let lost = || shared.in_flight.writes.lock().unwrap().push(attempt);
            not_acknowledged(cook, &what, told, lost, shared);
            None
        }
        Ok((attempt, Outcome::Unanswered(_))) if attempt.version > 0 => {
            let what = format!("writing {}", attempt.slug);
            let lost = || shared.in_flight.writes.lock().unwrap().push(attempt);
            not_acknowledged(cook, &what, Told::Unanswered, lost, shared);
            None
        }
        // The form's page went unanswered: nothing was sent.
        Ok((_, Outcome::Unanswered(_))) | Err(_) => {
            shared.tally.unanswered.fetch_add(1, Ordering::Relaxed);
            None
        }
    }
}

/// Suggests `fork`'s changes to `parent` with `message` (its own).
fn suggest(cook: &mut Cook, fork: String, parent: String, message: String, shared: &Shared) {
    let path = format!("/recipes/{fork}/suggest");
    let fields = vec![("message".to_owned(), message.clone())];
    let (_, told) = send_form(cook, &path, |_| Some(((), fields)));
    let sent = Suggested {
        parent: parent.clone(),
        fork,
        by: cook.handle.clone(),
        message,
        declined: false,
    };
    let prefix = format!("/recipes/{parent}/suggestions/");
    let number = match &told {
        Told::Done(to) => to.strip_prefix(&prefix).and_then(|n| n.parse::<u32>().ok()),
        _ => None,
    };
    let Some(number) = number else {
        let what = format!("suggesting {} to {parent}", sent.fork);
        let lost = || shared.in_flight.suggests.lock().unwrap().push(sent);
        return not_acknowledged(cook, &what, told, lost, shared);
    };
    shared.tally.acknowledged.fetch_add(1, Ordering::Relaxed);
    shared.tally.suggested.fetch_add(1, Ordering::Relaxed);
    let mut ledger = shared.ledger.lock().unwrap();
    let key = (parent.clone(), number);
    if let Some(other) = ledger.suggestions.get(&key).filter(|s| **s != sent) {
        shared.anomalies.add(format!(
            "suggestion {number} to {parent} was acknowledged for two: {other:?} and {sent:?}"
        ));
    }
    ledger.suggestions.insert(key, sent);
}

/// Reads a suggestion's review page: the version of the parent it shows
/// (the one an accept makes follows it), and an accept's fields, each
/// conflict settled the suggestion's way. `None` when it is not open.
fn review_of(page: &Page) -> Option<(u32, Vec<(String, String)>)> {
    let shown = page
        .attrs("form.accept input[name=based_on]", "value")
        .into_iter()
        .next()?
        .parse()
        .ok()?;
    let mut fields = vec![("action".to_owned(), "accept".to_owned())];
    for name in page.attrs("form.accept input[type=radio][value=theirs]", "name") {
        fields.push((name, "theirs".to_owned()));
    }
    Some((shown, fields))
}

/// Accepts suggestion `number` to the cook's `parent`; returns the
/// version it made, if acknowledged.
fn accept(cook: &mut Cook, parent: String, number: u32, shared: &Shared) -> Option<(String, u32)> {
    let path = format!("/recipes/{parent}/suggestions/{number}");
    let (shown, told) = send_form(cook, &path, review_of);
    let Some(shown) = shown else {
        // Not open, or its page not served: nothing was sent.
        not_acknowledged(cook, "", told, || {}, shared);
        return None;
    };
    let attempt = {
        let ledger = shared.ledger.lock().unwrap();
        let entry = &ledger.recipes[&parent];
        Attempt {
            slug: parent.clone(),
            author: cook.handle.clone(),
            word: entry.word.clone(),
            parent: entry.parent.clone(),
            version: shown + 1,
            written: Written::Took(number),
        }
    };
    match told {
        Told::Done(to) if to == path => {
            shared.tally.accepted.fetch_add(1, Ordering::Relaxed);
            acknowledged(&attempt, shared);
            Some((parent, attempt.version))
        }
        told => {
            let what = format!("accepting suggestion {number} to {parent}");
            let lost = || shared.in_flight.writes.lock().unwrap().push(attempt);
            not_acknowledged(cook, &what, told, lost, shared);
            None
        }
    }
}

/// Declines suggestion `number` to the cook's `parent`.
fn decline(cook: &mut Cook, parent: String, number: u32, shared: &Shared) {
    let path = format!("/recipes/{parent}/suggestions/{number}");
    let decline = |page: &Page| {
        review_of(page)?;
        Some(((), vec![("action".to_owned(), "decline".to_owned())]))
    };
    let (_, told) = send_form(cook, &path, decline);
    let key = (parent, number);
    match told {
        Told::Done(to) if to == path => {
            shared.tally.acknowledged.fetch_add(1, Ordering::Relaxed);
            shared.tally.declined.fetch_add(1, Ordering::Relaxed);
            if let Some(known) = shared.ledger.lock().unwrap().suggestions.get_mut(&key) {
                known.declined = true;
            }
        }
        told => {
            let what = format!("declining suggestion {number} to {}", key.0);
            let lost = || shared.in_flight.declines.lock().unwrap().push(key);
            not_acknowledged(cook, &what, told, lost, shared);
        }
    }
}

/// Reads `slug` through node `n` as `cook`: it must show the newest
/// version of it the cook was acknowledged, or later (a 503 is allowed:
/// the node could not show it in time, and said so).
fn read_back(cook: &mut Cook, n: usize, slug: &str, seen: &BTreeMap<String, u32>, shared: &Shared) {
    cook.browser.reconnect(&shared.nodes.origin(n));
    let Ok(page) = cook.browser.get(&format!("/recipes/{slug}.json")) else {
        return;
    };
    shared.tally.reads.fetch_add(1, Ordering::Relaxed);
    match page.status {
        200 => {
            let json: serde_json::Value = serde_json::from_str(&page.body).unwrap_or_default();
            let shown = json["versions"].as_u64().unwrap_or(0);
            let wrote = u64::from(seen.get(slug).copied().unwrap_or(0));
            if shown < wrote {
                shared.anomalies.add(format!(
                    "{} read {slug} on node {n} at version {shown}, after its own write of version {wrote}",
                    cook.handle
                ));
            }
        }
        503 => {}
        status => shared.anomalies.add(format!(
            "{} reading back {slug} on node {n}: {status} {}",
            cook.handle, page.body
        )),
    }
}

/// The suggestions' check finds what it is there to find: a suggestion
/// nobody sent, one acknowledged and missing, one holding another message,
/// a state other than the ledger's, an accept's version taken for another
/// suggestion, a version no write known made; and it adopts the
/// suggestions, accepts and declines in flight that were saved.
#[test]
fn the_ledger_check_finds_lost_unsent_and_misstated_suggestions_and_accepts() {
    let recipes = Recipes::temporary().expect("a store");
    let slug = |s: &str| Slug::parse(s).expect("a slug");
    let v = |n| VersionNumber::new(n).expect("a version");
    let write = |kind, slug: &str, author: &str, serial| Write {
        kind,
        slug: slug.to_owned(),
        author: author.to_owned(),
        word: format!("uq{slug}"),
        serial,
    };
    let fork = WriteKind::Fork {
        parent: "ann-1".to_owned(),
    };
    let made = [
        write(WriteKind::Create, "ann-1", "ann", 1).attempt(1, None),
        write(fork, "ben-1", "ben", 2).attempt(1, Some(("ann-1".to_owned(), 1))),
        write(WriteKind::Edit, "ben-1", "ben", 3).attempt(2, None),
        write(WriteKind::Edit, "ben-1", "ben", 4).attempt(3, None),
        write(WriteKind::Edit, "ann-1", "ann", 5).attempt(3, None),
    ];
    let by = |a: &Attempt| Change::by(&a.author, &a.draft().expect("a form's").note);
    let content = |n: usize| made[n].draft().expect("a form's").content();
    recipes
        .create(&slug("ann-1"), content(0), &by(&made[0]))
        .expect("created");
    recipes
        .fork(
            &slug("ann-1"),
            Some(v(1)),
            Some(&slug("ben-1")),
            |_| content(1),
            &by(&made[1]),
        )
        .expect("forked");
    let suggested = |number: u32, message: &str| Suggested {
        parent: "ann-1".to_owned(),
        fork: "ben-1".to_owned(),
        by: "ben".to_owned(),
        message: message.to_owned(),
        declined: number == 2,
    };
    let ben = Change::by("ben", "suggested");
    let ann = Change::by("ann", "answered");
    recipes
        .suggest(&slug("ben-1"), v(1), "one", &ben)
        .expect("suggested");
    recipes
        .accept_suggestion(&slug("ann-1"), 1, Review::of(v(1), v(1)), &[], "", &ann)
        .expect("accepted");
    recipes
        .edit(&slug("ben-1"), v(1), content(2), &by(&made[2]))
        .expect("edited");
    recipes
        .suggest(&slug("ben-1"), v(2), "two", &ben)
        .expect("suggested");
    recipes
        .decline_suggestion(&slug("ann-1"), 2, Review::of(v(2), v(2)), "", &ann)
        .expect("declined");
    recipes
        .edit(&slug("ben-1"), v(2), content(3), &by(&made[3]))
        .expect("edited");
    recipes
        .suggest(&slug("ben-1"), v(3), "three", &ben)
        .expect("suggested");
    recipes
        .edit(&slug("ann-1"), v(2), content(4), &by(&made[4]))
        .expect("edited");
    let took = Attempt {
        written: Written::Took(1),
        version: 2,
        ..made[0].clone()
    };
    let mut whole = Ledger::default();
    for attempt in made.iter().chain([&took]) {
        whole.saved(attempt);
    }
    for (number, message) in [(1, "one"), (2, "two"), (3, "three")] {
        whole
            .suggestions
            .insert(("ann-1".to_owned(), number), suggested(number, message));
    }
    let view = recipes.snapshot();
    let check = |ledger: &mut Ledger,
                 writes: &[Attempt],
                 suggests: &[Suggested],
                 declines: &[(String, u32)]| {
        ledger.check(&view, writes)?;
        ledger.check_suggestions(&view, suggests, declines)
    };
    assert_eq!(check(&mut whole.clone(), &[], &[], &[]), Ok(3));

    let key = |n: u32| ("ann-1".to_owned(), n);
    let tampered = |change: &dyn Fn(&mut Ledger)| {
        let mut ledger = whole.clone();
        change(&mut ledger);
        ledger
    };
    let no_accept = tampered(&|l| {
        l.recipes.get_mut("ann-1").unwrap().versions.remove(&2);
    });
    let unsent = tampered(&|l| {
        l.suggestions.remove(&key(3));
    });
    let undeclined = tampered(&|l| {
        l.suggestions.get_mut(&key(2)).unwrap().declined = false;
    });
    let cases = [
        (
            "version 2 is in the store, but no write known made it",
            no_accept.clone(),
        ),
        (
            "was made accepting suggestion 2, which is declined",
            tampered(&|l| {
                l.recipes
                    .get_mut("ann-1")
                    .unwrap()
                    .versions
                    .insert(2, Written::Took(2));
            }),
        ),
        ("nobody's suggest known made it", unsent.clone()),
        (
            "but the ledger knows it taken in None, declined false",
            undeclined.clone(),
        ),
        (
            "holds 3 suggestions; 4 were made",
            tampered(&|l| {
                l.suggestions.insert(key(4), suggested(4, "four"));
            }),
        ),
        (
            "was acknowledged",
            tampered(&|l| l.suggestions.get_mut(&key(3)).unwrap().message = "3".to_owned()),
        ),
    ];
    for (expected, mut ledger) in cases {
        let checked = check(&mut ledger, &[], &[], &[]);
        assert!(
            matches!(&checked, Err(why) if why.contains(expected)),
            "a ledger tampered with to show {expected:?} is found: {checked:?}"
        );
    }
    // What was in flight and saved joins the ledger.
    let adopted = [
        (no_accept, vec![took.clone()], vec![], vec![]),
        (unsent, vec![], vec![suggested(3, "three")], vec![]),
        (undeclined, vec![], vec![], vec![key(2)]),
    ];
    for (mut ledger, writes, suggests, declines) in adopted {
        assert_eq!(check(&mut ledger, &writes, &suggests, &declines), Ok(3));
    }
}
