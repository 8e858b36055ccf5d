//! The whole app killed with SIGKILL at random moments, while cooks write
//! through its forms, loses no write it acknowledged, shows no write nobody
//! sent, and starts again on the same store.
//!
//! `crash` is this test at the store level; here the writes go through the
//! real server binary (`forkful serve` on a durable store, port 0) over
//! HTTP, as a browser sends them: a few cooks, signed up once per store,
//! each in a thread of its own with its own session cookie, create recipes,
//! edit their own and fork anyone's. A write counts as acknowledged only
//! when its answer is a 303 to the recipe; any other answer fails the test.
//! The test kills the server a random moment into the writing (now and
//! then while it is still starting and opening the store), and:
//!
//! - opens the store directly: `Store::verify_current_entries`, then every
//!   acknowledged version, read back through the domain, holds exactly what
//!   was written, with its number, note and author; each fork's lineage
//!   walks back to its original; the history has as many versions as the
//!   recipe counts; each recipe's own word finds it by search; and nothing
//!   is there that nobody wrote. A write in flight at the kill (sent, never
//!   answered) may be there or not, but whole and only in its own place;
//!   if it is there, it joins the ledger (see `http_client::Ledger`);
//! - starts the server again on the store, which must listen, keep the
//!   cooks' sessions, and serve the recipes last written as the ledger has
//!   them (JSON, history, lineage and search pages), before the next round.
//!
//! A store lives for `ROUNDS_PER_STORE` rounds; then the test starts a new
//! one, so that a long run's rounds stay as quick as its first.
//! `FORKFUL_APP_CRASH_ROUNDS` sets the number of rounds (6 by default);
//! `scripts/app-crash.sh` runs 1,000 against the release binary
//! (`FORKFUL_BIN`). With `--nocapture` it ends with a summary line.
//!
//! A second test writes through the domain and tampers with the ledger to
//! show that its check finds each kind of loss it is there to find.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use forkful::domain::{Change, ContentDraft, Recipes, Slug, VersionNumber};
use forkful::postgres::PgLog;
use forkful::store::{Store, StoreConfig};

use crate::helpers::{count_from_env, seed_from_clock};
use crate::http_client::{self, Attempt, Cook, Ledger, Outcome, Rng, Server, Write, WriteKind};

const ROUNDS_VAR: &str = "FORKFUL_APP_CRASH_ROUNDS";
const DEFAULT_ROUNDS: usize = 6;
/// Kills one store survives before the test starts a new one: each round
/// rechecks every version its store was ever acknowledged.
const ROUNDS_PER_STORE: usize = 10;
/// The cooks, one writing thread each. Sign-up is limited to ten a minute
/// per address, and every client is 127.0.0.1: they sign up once a store.
const COOKS: [&str; 4] = ["ann", "ben", "cat", "dan"];
/// Small caches: the server starts many times, and memory is not tested here.
const SERVE_FLAGS: [&str; 6] = ["--workers", "4", "--cache-mb", "16", "--memory-mb", "16"];
/// Recipes written last round that the restarted server is asked about.
const SERVED_CHECKS: usize = 8;

/// What one cook's thread did in a round.
#[derive(Default)]
struct Written {
    acknowledged: usize,
    /// Writes sent and never answered: the server died under them.
    in_flight: Vec<Attempt>,
    /// Answers that were not a 303 (the test fails on any).
    refused: Vec<String>,
}

/// Writes until `stop`, or until the server stops answering.
fn write_until_stopped(
    cook: &mut Cook,
    ledger: &Mutex<Ledger>,
    stop: &AtomicBool,
    mut rng: Rng,
) -> Written {
    let mut written = Written::default();
    while !stop.load(Ordering::SeqCst) {
        let write = cook.next_write(ledger, &mut rng);
        match cook.browser.write(write) {
            // The form's page got no answer: nothing was sent.
            Err(_) => break,
            Ok((attempt, Outcome::Saved)) => {
                ledger.lock().expect("the ledger").saved(&attempt);
                written.acknowledged += 1;
            }
            Ok((attempt, Outcome::Answered(status, body))) => {
                written.refused.push(format!(
                    "{} {} version {}: {status} {body}",
                    cook.handle, attempt.slug, attempt.version
                ));
                break;
            }
            Ok((attempt, Outcome::Unanswered(unanswered))) => {
                if unanswered.sent {
                    written.in_flight.push(attempt);
                }
                break;
            }
        }
    }
    written
}

/// Each recipe of the ledger with its newest version.
fn newest_versions(ledger: &Ledger) -> Vec<(String, u32)> {
    ledger
        .recipes
        .iter()
        .map(|(slug, entry)| (slug.clone(), entry.newest()))
        .collect()
}

/// Where the killed server keeps its truth: its store alone, or a log in
/// PostgreSQL that its store follows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Embedded,
    Log,
}

/// Opens the store the killed server left and checks it against the
/// ledger; returns versions compared and writes in flight found saved.
/// With a log (`log`), the store is first caught up with it, and a node
/// built from the log alone must hold the same: every acknowledged write
/// is in the log.
fn check_store(
    dir: &std::path::Path,
    log: Option<&str>,
    ledger: &mut Ledger,
    in_flight: &[Attempt],
) -> Result<(usize, usize), String> {
    let mut config = StoreConfig::durable(dir);
    if let Some(url) = log {
        let log = PgLog::connect(url).map_err(|e| format!("the log: {e}"))?;
        config = config.following(std::sync::Arc::new(log));
    }
    let store = Store::open_with(config)
        .map_err(|e| format!("reopening the store (catching up with its log): {e}"))?;
    store
        .verify_current_entries()
        .map_err(|why| format!("current-entity entries: {why}"))?;
    if let Some(url) = log {
        let log = PgLog::connect(url).map_err(|e| format!("the log: {e}"))?;
        let from_log =
            Store::open_with(StoreConfig::temporary().following(std::sync::Arc::new(log)))
                .map_err(|e| format!("a node built from the log: {e}"))?;
        if crate::helpers::everything(&from_log) != crate::helpers::everything(&store) {
            return Err("a node built from the log holds other datoms than the store".into());
        }
    }
    let recipes = Recipes::open(store).map_err(|e| format!("opening the recipes: {e}"))?;
    let checked = ledger.check(&recipes.snapshot(), in_flight)?;
    Ok((checked.versions, checked.adopted))
}

/// Starts the server on `dir`. The store the test just checked may hold
/// sled's file lock a moment longer while its threads wind down, so a
/// start refused for the lock is tried again.
fn restart(dir: &std::path::Path, flags: &[&str]) -> Result<Server, String> {
    let mut tries = 0;
    loop {
        match Server::start(dir, flags) {
            Err(why) if why.contains("could not acquire lock") && tries < 100 => {
                tries += 1;
                thread::sleep(Duration::from_millis(20));
            }
            started => return started,
        }
    }
}

fn rounds() -> usize {
    count_from_env(ROUNDS_VAR, DEFAULT_ROUNDS as u64, "rounds") as usize
}

#[test]
fn a_killed_server_loses_no_acknowledged_write_and_starts_again() {
    kill_rounds(Mode::Embedded);
}

/// The same with the log in PostgreSQL: the server is killed during writes
/// and during its catch-up as it starts; the restarted node catches up, and
/// a node built from the log alone holds every acknowledged write.
#[test]
fn a_killed_node_on_a_log_loses_no_acknowledged_write_and_catches_up() {
    kill_rounds(Mode::Log);
}

fn kill_rounds(mode: Mode) {
    let rounds = rounds();
    let seed = seed_from_clock();
    let mut rng = Rng::new(seed);
    let started = Instant::now();
    let (mut acknowledged, mut versions, mut in_flight_total, mut adopted) = (0, 0, 0, 0);
    let (mut restarts, mut startup_kills, mut in_flight_rounds) = (0, 0, 0);
    let mut startup_kills_before_listening = 0;
    let mut dir = None;
    let mut ledger = Ledger::default();
    let mut cooks: Vec<Cook> = Vec::new();
    let mut last_written: Vec<String> = Vec::new();
    let mut log: Option<String> = None;
    for round in 0..rounds {
        let fail = |why: String| -> ! { panic!("round {round} (seed {seed}): {why}") };
        let new_store = round % ROUNDS_PER_STORE == 0;
        if new_store {
            dir = Some(tempfile::tempdir().expect("a temporary directory"));
            ledger = Ledger::default();
            last_written.clear();
            log = (mode == Mode::Log).then(crate::postgres::fresh_database);
        }
        let dir = dir.as_ref().expect("a store directory").path();
        let mut flags: Vec<&str> = SERVE_FLAGS.to_vec();
        if let Some(url) = &log {
            flags.extend(["--database-url", url.as_str()]);
        }
        // Killed while it starts (opening the store, catching up with the
        // log, or just listening): in the second round of every store, so
        // that every run does it, and at random in others.
        if !new_store && (round % ROUNDS_PER_STORE == 1 || rng.below(5) == 0) {
            let mut server = Server::spawn(dir, &flags);
            thread::sleep(Duration::from_millis(rng.below(60)));
            startup_kills_before_listening += usize::from(!server.listened());
            server.kill();
            drop(server);
            startup_kills += 1;
            check_store(dir, log.as_deref(), &mut ledger, &[])
                .unwrap_or_else(|why| fail(format!("after a kill at startup: {why}")));
        }
        let mut server = restart(dir, &flags).unwrap_or_else(|why| fail(why));
        restarts += usize::from(!new_store);
        if new_store {
            cooks = COOKS
                .iter()
                .zip('a'..)
                .map(|(handle, letter)| Cook::sign_up(handle, letter, server.origin()))
                .collect::<Result<_, _>>()
                .unwrap_or_else(|why| fail(why));
        }
        for cook in &mut cooks {
            cook.browser.reconnect(server.origin());
        }
        // The restarted server serves what the store holds, and still knows
        // the cooks' sessions.
        let reader = &mut cooks[0].browser;
        for slug in last_written.iter().take(SERVED_CHECKS) {
            ledger
                .check_served(reader, slug)
                .unwrap_or_else(|why| fail(format!("after a restart: {why}\n{}", server.errors())));
        }
        let account = reader.get("/account").unwrap_or_else(|e| fail(e.why));
        assert_eq!(
            account.status, 200,
            "round {round}: the session outlived the server"
        );

        let kill_after = Duration::from_millis(20 + rng.below(380));
        let stop = AtomicBool::new(false);
        let shared = Mutex::new(std::mem::take(&mut ledger));
        let before = newest_versions(&shared.lock().expect("the ledger"));
        let written: Vec<Written> = thread::scope(|scope| {
            let writers: Vec<_> = cooks
                .iter_mut()
                .map(|cook| {
                    let rng = Rng::new(seed ^ ((round as u64) << 8) ^ cook.number());
                    let (shared, stop) = (&shared, &stop);
                    scope.spawn(move || write_until_stopped(cook, shared, stop, rng))
                })
                .collect();
            thread::sleep(kill_after);
            server.kill();
            stop.store(true, Ordering::SeqCst);
            writers
                .into_iter()
                .map(|w| w.join().expect("a writer thread"))
                .collect()
        });
        ledger = shared.into_inner().expect("the ledger");
        let refused: Vec<&String> = written.iter().flat_map(|w| &w.refused).collect();
        if !refused.is_empty() {
            fail(format!(
                "writes answered with other than a 303: {refused:?}\n{}",
                server.errors()
            ));
        }
        drop(server);
        let in_flight: Vec<Attempt> = written.iter().flat_map(|w| w.in_flight.clone()).collect();
        acknowledged += written.iter().map(|w| w.acknowledged).sum::<usize>();
        in_flight_total += in_flight.len();
        in_flight_rounds += usize::from(!in_flight.is_empty());
        let (compared, found) = check_store(dir, log.as_deref(), &mut ledger, &in_flight)
            .unwrap_or_else(|why| fail(format!("killed {kill_after:?} into the writing: {why}")));
        versions += compared;
        adopted += found;
        // The recipes this round wrote, for the next server to be asked about.
        last_written = newest_versions(&ledger)
            .into_iter()
            .filter(|written| !before.contains(written))
            .map(|(slug, _)| slug)
            .collect();
    }
    eprintln!(
        "app_crash: {rounds} rounds, {acknowledged} acknowledged writes checked \
         ({versions} versions compared, summed over rounds), {in_flight_total} writes in \
         flight at kill time ({adopted} of them found saved; {in_flight_rounds} rounds), \
         {restarts} server restarts, {startup_kills} kills at startup \
         ({startup_kills_before_listening} before it listened), {} cooks, {:.1} s, \
         seed {seed}",
        COOKS.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        acknowledged > rounds,
        "the cooks were acknowledged too little to prove anything (seed {seed})"
    );
    assert!(
        rounds < 2 || startup_kills > 0,
        "no round killed the server while it started (seed {seed})"
    );
    assert!(
        rounds < 5 || in_flight_rounds > 0,
        "no round killed the server with a write in flight (seed {seed})"
    );
}

/// `attempt`'s text as the domain takes it.
fn content_of(attempt: &Attempt) -> ContentDraft {
    attempt
        .draft()
        .expect("app_crash's writes are forms")
        .content()
}

/// The ledger's check finds what it is there to find: an acknowledged
/// version lost or holding other text, a version nobody was acknowledged,
/// a lineage that walks elsewhere, a recipe nobody wrote, and something
/// else in the place of a write in flight; and it adopts a write in flight
/// that was saved.
#[test]
fn the_ledger_check_finds_lost_changed_and_unsent_writes() {
    let recipes = Recipes::temporary().expect("a store");
    let write = |kind, slug: &str, word: u32, serial| Write {
        kind,
        slug: slug.to_owned(),
        author: "ann".to_owned(),
        word: format!("uqa{word:07}"),
        serial,
    };
    let slug = |s: &str| Slug::parse(s).expect("a slug");
    let change = |a: &Attempt| Change::by(&a.author, &a.draft().expect("a form's").note);
    let v = |n| VersionNumber::new(n).expect("a version");
    let created = write(WriteKind::Create, "ann-1", 1, 1).attempt(1, None);
    let edited = write(WriteKind::Edit, "ann-1", 1, 2).attempt(2, None);
    let fork = WriteKind::Fork {
        parent: "ann-1".to_owned(),
    };
    let forked = write(fork, "ann-2", 2, 3).attempt(1, Some(("ann-1".to_owned(), 1)));
    recipes
        .create(&slug("ann-1"), content_of(&created), &change(&created))
        .expect("created");
    recipes
        .edit(&slug("ann-1"), v(1), content_of(&edited), &change(&edited))
        .expect("edited");
    recipes
        .fork(
            &slug("ann-1"),
            Some(v(1)),
            Some(&slug("ann-2")),
            |_| content_of(&forked),
            &change(&forked),
        )
        .expect("forked");
    let mut whole = Ledger::default();
    for attempt in [&created, &edited, &forked] {
        whole.saved(attempt);
    }
    let view = recipes.snapshot();
    let checked = whole.clone().check(&view, &[]);
    assert!(
        matches!(checked, Ok(c) if c.versions == 3),
        "the ledger as written checks out: {checked:?}"
    );

    let mut lost = whole.clone();
    lost.saved(&write(WriteKind::Edit, "ann-1", 1, 4).attempt(3, None));
    let mut changed = whole.clone();
    changed
        .recipes
        .get_mut("ann-1")
        .expect("ann-1")
        .versions
        .insert(
            1,
            http_client::Written::Draft(http_client::Draft {
                title: "Another title".to_owned(),
                ..created.draft().expect("a draft").clone()
            }),
        );
    let mut unacknowledged = whole.clone();
    unacknowledged
        .recipes
        .get_mut("ann-1")
        .expect("ann-1")
        .versions
        .remove(&2);
    let mut elsewhere = whole.clone();
    elsewhere.recipes.get_mut("ann-2").expect("ann-2").parent = Some(("ann-1".to_owned(), 2));
    let mut unwritten = whole.clone();
    unwritten.recipes.remove("ann-2");
    let other = write(WriteKind::Edit, "ann-1", 1, 5).attempt(2, None);
    let cases = [
        ("has 2 versions; 3 were saved", lost, None),
        ("but Draft", changed, None),
        ("has 2 versions; 1 were saved", unacknowledged.clone(), None),
        ("lineage walks", elsewhere, None),
        ("nobody wrote it", unwritten, None),
        (
            "neither acknowledged nor the write in flight",
            unacknowledged.clone(),
            Some(other),
        ),
    ];
    for (expected, mut ledger, in_flight) in cases {
        let checked = ledger.check(&view, in_flight.as_slice());
        assert!(
            matches!(&checked, Err(why) if why.contains(expected)),
            "a ledger tampered with to show {expected:?} is found: {checked:?}"
        );
    }
    let mut adopting = unacknowledged;
    let checked = adopting.check(&view, &[edited]);
    assert!(
        matches!(checked, Ok(c) if c.adopted == 1 && c.versions == 3),
        "a write in flight that was saved joins the ledger: {checked:?}"
    );
}
