//! The nemesis: three nodes on one log in PostgreSQL, cooks writing
//! (new recipes, edits, forks) and reading through all three at random,
//! while a nemesis kills nodes and starts them again, pauses them
//! (SIGSTOP), restarts PostgreSQL, and has the proxy between the nodes
//! and PostgreSQL drop every connection or stall them, at random. At the
//! end a checker reads every client's history:
//!
//! - every acknowledged write is in the log once, and nothing nobody sent
//!   (`Ledger::check`, on a store built from the log alone, after adopting
//!   the writes whose answer was lost and that were saved);
//! - no version number of a recipe was acknowledged for two writes;
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

use forkful::domain::Recipes;
use forkful::postgres::PgLog;
use forkful::store::Store;

use crate::helpers::{count_from_env, seed_from_clock};
use crate::http_client::{Attempt, Browser, Cook, Ledger, Outcome, Rng, Server};
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
    refused: AtomicU64,
    unanswered: AtomicU64,
    reads: AtomicU64,
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
    let in_flight: Mutex<Vec<Attempt>> = Mutex::default();
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
            let (nodes, ledger, in_flight, anomalies, tally) =
                (&nodes, &ledger, &in_flight, &anomalies, &tally);
            scope.spawn(move || {
                client(cook, rng, until, nodes, ledger, in_flight, anomalies, tally)
            });
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
    let rebuilt = Store::temporary().unwrap();
    rebuilt
        .attach_log(Arc::new(PgLog::connect(&direct).unwrap()))
        .unwrap();
    let recipes = Recipes::open(rebuilt).unwrap();
    let mut ledger = ledger.into_inner().unwrap();
    let in_flight = in_flight.into_inner().unwrap();
    match ledger.check(&recipes.snapshot(), &in_flight) {
        Ok(checked) => eprintln!(
            "nemesis: {} versions checked against the log, {} writes whose answer was lost found saved",
            checked.versions, checked.adopted
        ),
        Err(why) => anomalies.add(format!("the log against the ledger: {why}")),
    }

    let faults = faults.into_inner().unwrap();
    let anomalies = anomalies.0.into_inner().unwrap();
    eprintln!(
        "nemesis: {:.0} s, seed {seed}: {} writes acknowledged, {} refused (503, 409 and the like), {} unanswered, {} reads checked; faults: {faults:?}; anomalies: {}",
        started.elapsed().as_secs_f64(),
        tally.acknowledged.load(Ordering::Relaxed),
        tally.refused.load(Ordering::Relaxed),
        tally.unanswered.load(Ordering::Relaxed),
        tally.reads.load(Ordering::Relaxed),
        anomalies.len()
    );
    assert!(anomalies.is_empty(), "seed {seed}: {anomalies:#?}");
    assert!(
        tally.acknowledged.load(Ordering::Relaxed) > 0,
        "seed {seed}: no write was acknowledged"
    );
}

/// One cook: writes through a node chosen at random, and after each write
/// acknowledged reads it back through another.
#[allow(clippy::too_many_arguments)]
fn client(
    cook: &mut Cook,
    mut rng: Rng,
    until: Instant,
    nodes: &Nodes,
    ledger: &Mutex<Ledger>,
    in_flight: &Mutex<Vec<Attempt>>,
    anomalies: &Anomalies,
    tally: &Tally,
) {
    // The newest version of each recipe this cook has been acknowledged.
    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    while Instant::now() < until {
        let node = rng.below(NODES as u64) as usize;
        cook.browser.reconnect(&nodes.origin(node));
        let write = cook.next_write(ledger, &mut rng);
        match cook.browser.write(write) {
            Ok((attempt, Outcome::Saved)) => {
                tally.acknowledged.fetch_add(1, Ordering::Relaxed);
                let mut ledger = ledger.lock().unwrap();
                let twice = ledger
                    .recipes
                    .get(&attempt.slug)
                    .and_then(|entry| entry.versions.get(&attempt.version))
                    .filter(|draft| **draft != attempt.draft);
                if twice.is_some() {
                    anomalies.add(format!(
                        "version {} of {} was acknowledged for two writes",
                        attempt.version, attempt.slug
                    ));
                }
                ledger.saved(&attempt);
                drop(ledger);
                // A write of this version whose answer was lost was not
                // saved, or this one would have made the next version.
                in_flight
                    .lock()
                    .unwrap()
                    .retain(|lost| (&lost.slug, lost.version) != (&attempt.slug, attempt.version));
                seen.insert(attempt.slug.clone(), attempt.version);
                let other = (node + 1 + rng.below(NODES as u64 - 1) as usize) % NODES;
                read_back(cook, nodes, other, &attempt.slug, &seen, anomalies, tally);
            }
            Ok((attempt, Outcome::Answered(status, body))) => {
                if status >= 500 && status != 503 {
                    anomalies.add(format!(
                        "{} writing {}: {status} {body}",
                        cook.handle, attempt.slug
                    ));
                }
                // Perhaps saved ("could not tell"): the checker looks. (A
                // form's page that was refused sent nothing: version 0.)
                if status == 503 && attempt.version > 0 {
                    in_flight.lock().unwrap().push(attempt);
                }
                tally.refused.fetch_add(1, Ordering::Relaxed);
            }
            Ok((attempt, Outcome::Unanswered(_))) if attempt.version > 0 => {
                in_flight.lock().unwrap().push(attempt);
                tally.unanswered.fetch_add(1, Ordering::Relaxed);
            }
            // The form's page went unanswered: nothing was sent.
            Ok((_, Outcome::Unanswered(_))) | Err(_) => {
                tally.unanswered.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// Reads `slug` through node `n` as `cook`: it must show the newest
/// version of it the cook was acknowledged, or later (a 503 is allowed:
/// the node could not show it in time, and said so).
fn read_back(
    cook: &mut Cook,
    nodes: &Nodes,
    n: usize,
    slug: &str,
    seen: &BTreeMap<String, u32>,
    anomalies: &Anomalies,
    tally: &Tally,
) {
    cook.browser.reconnect(&nodes.origin(n));
    let Ok(page) = cook.browser.get(&format!("/recipes/{slug}.json")) else {
        return;
    };
    tally.reads.fetch_add(1, Ordering::Relaxed);
    match page.status {
        200 => {
            let json: serde_json::Value = serde_json::from_str(&page.body).unwrap_or_default();
            let shown = json["versions"].as_u64().unwrap_or(0);
            let wrote = u64::from(seen.get(slug).copied().unwrap_or(0));
            if shown < wrote {
                anomalies.add(format!(
                    "{} read {slug} on node {n} at version {shown}, after its own write of version {wrote}",
                    cook.handle
                ));
            }
        }
        503 => {}
        status => anomalies.add(format!(
            "{} reading back {slug} on node {n}: {status} {}",
            cook.handle, page.body
        )),
    }
}
