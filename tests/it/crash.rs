//! Writers killed with SIGKILL at random moments, group commits in flight,
//! lose no transaction they acknowledged, leave no transaction half-written,
//! and leave every entity's current-entity entry saying what its datoms say.
//!
//! The test runs this same test binary again as a child, on one test
//! (`child_writer`) in which several threads transact at once on one store:
//! new recipes, and updates of a few recipes they all share (a changed
//! title, a tag added and an old one retracted, a scratch entity made and
//! then retracted whole, which leaves an entry with no facts). Each thread
//! prints `BEGIN` before a transaction and `ACK` after it returns. The
//! parent kills the child at a random moment, mostly a few to tens of
//! milliseconds into the writing, when transactions are being applied and
//! flushed together, sometimes while it is still starting up and opening
//! the store. Then it reopens the store and checks:
//!
//! - every acknowledged transaction is there, whole: all the datoms it
//!   reported are in the log under its tx, with its note, and a recipe it
//!   created reads back with all its ingredients;
//! - every recipe on disk, acknowledged or not, is whole (batches are atomic);
//! - `Store::verify_current_entries`: every current-entity entry equals what
//!   the EAVT datoms say.
//!
//! A new child carries on from there, for `ROUNDS_PER_STORE` rounds; then
//! the test starts a new store, so that a long run's checks stay as quick
//! as its first. `FORKFUL_CRASH_ROUNDS` sets the number of rounds (20 by
//! default); `scripts/crash.sh` runs 1,000. With `--nocapture` it ends with
//! a summary line: rounds, acknowledged transactions, entities verified
//! (summed over rounds), and how many rounds killed transactions in flight.
//!
//! A second test tampers with a store's entries to show that the entry
//! check finds each kind of disagreement it is there to find.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use forkful::store::{
    kw, Components, Db, EntityId, EntityMap, EntityRef, Index, Store, Transaction, Value,
};

use crate::helpers::{count_from_env, seed_from_clock};
use crate::helpers::{raw_sled, schema_tx};

const CHILD_DIR_VAR: &str = "FORKFUL_CRASH_CHILD_DIR";
const ROUNDS_VAR: &str = "FORKFUL_CRASH_ROUNDS";
const DEFAULT_ROUNDS: usize = 20;
/// Kills one store survives before the test starts a new one. Every round
/// rechecks everything its store was ever acknowledged and verifies every
/// entity, so a store that lived for all of a long run would make each
/// round slower than the last.
const ROUNDS_PER_STORE: usize = 10;
/// Threads transacting at once in the child: enough that most flushes
/// carry several transactions.
const WRITERS: u64 = 4;
const INGREDIENTS: i64 = 8;
/// Recipes every writer updates, so that their entries are rewritten by
/// transactions from every thread, each from the entry the last one left.
const SHARED: u64 = 3;
const SHARED_PREFIX: &str = "crash-shared-";
/// Every how many transactions a writer updates a shared recipe.
const SHARED_EVERY: u64 = 4;
/// How long the child may take to open its store and start writing.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// The child's writers. Ignored, so it runs only when the parent asks.
#[test]
#[ignore = "run by crash::killed_writers_lose_nothing_acknowledged_and_leave_entries_true"]
fn child_writer() {
    let Ok(dir) = std::env::var(CHILD_DIR_VAR) else {
        return;
    };
    let store = Store::open(&dir).unwrap_or_else(|e| panic!("child: opening {dir}: {e}"));
    if store.db().attribute(&kw(":recipe/slug")).is_err() {
        store
            .transact(&schema_tx())
            .unwrap_or_else(|e| panic!("child: installing the schema: {e}"));
    }
    say("READY");
    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let store = store.clone();
            thread::spawn(move || write_forever(&store, writer))
        })
        .collect();
    for writer in writers {
        // Writers only stop by panicking; carry the panic on, so the
        // parent sees the child end before it was killed.
        if let Err(panic) = writer.join() {
            std::panic::resume_unwind(panic);
        }
    }
}

/// One line to the parent, whole: the lock keeps other writers' lines out
/// of it, and the flush gets it out before a kill can lose it.
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")
        .and_then(|()| out.flush())
        .unwrap_or_else(|e| panic!("child: writing to the parent: {e}"));
}

/// One writer thread of the child: transacts until killed, announcing each
/// transaction before it starts and acknowledging it once it returns.
fn write_forever(store: &Store, writer: u64) {
    let pid = std::process::id();
    let mut scratch: Option<EntityId> = None;
    for i in 0.. {
        let note = format!("{pid}-{writer}-{i}");
        let mut tx = Transaction::new();
        let slug = if i % SHARED_EVERY == SHARED_EVERY - 1 {
            shared_update(&mut tx, writer, i, &note, pid, scratch)
        } else {
            new_recipe(&mut tx, i, &note)
        };
        tx.tx_attr(":tx/note", note.as_str());
        say(&format!("BEGIN {note}"));
        let report = store
            .transact(&tx)
            .unwrap_or_else(|e| panic!("child: transaction {note}: {e}"));
        say(&format!(
            "ACK {} {} {note} {slug}",
            report.basis_after,
            report.datoms.len()
        ));
        scratch = report.tempid("scratch").or(scratch);
    }
}

/// A new recipe with its ingredients, as components; returns its slug.
fn new_recipe(tx: &mut Transaction, i: u64, note: &str) -> String {
    let slug = format!("crash-{note}");
    let mut recipe = EntityMap::new(EntityRef::temp("r"))
        .with(":recipe/slug", slug.as_str())
        .with(":recipe/title", format!("Recipe {note}"))
        .with(":recipe/serves", i as i64);
    for n in 1..=INGREDIENTS {
        recipe = recipe.with(
            ":recipe/ingredients",
            EntityMap::anonymous()
                .with(":ingredient/item", format!("item {n}"))
                .with(":ingredient/position", n),
        );
    }
    tx.map(recipe);
    slug
}

/// An update of a shared recipe (made by the first update, by upsert on its
/// slug): a new title and serving count, which retract the old ones, a new
/// tag, and the retraction of this writer's tag of two updates ago. It also
/// retracts the scratch entity this writer made last time, whole, and makes
/// a new one. Returns the shared recipe's slug.
fn shared_update(
    tx: &mut Transaction,
    writer: u64,
    i: u64,
    note: &str,
    pid: u32,
    scratch: Option<EntityId>,
) -> String {
    let shared_slug = |i: u64| format!("{SHARED_PREFIX}{}", (writer + i / SHARED_EVERY) % SHARED);
    let slug = shared_slug(i);
    tx.map(
        EntityMap::new(EntityRef::temp("shared"))
            .with(":recipe/slug", slug.as_str())
            .with(":recipe/title", format!("Shared {note}"))
            .with(":recipe/serves", i as i64)
            .with(":recipe/tags", format!("tag {note}")),
    );
    if let Some(old) = i.checked_sub(2 * SHARED_EVERY) {
        // This writer's own update of then was acknowledged (it is the same
        // process), so the lookup finds its recipe; the tag may be gone.
        tx.retract(
            EntityRef::Lookup(kw(":recipe/slug"), Value::from(shared_slug(old))),
            ":recipe/tags",
            format!("tag {pid}-{writer}-{old}"),
        );
    }
    if let Some(scratch) = scratch {
        tx.retract_entity(scratch);
    }
    tx.map(
        EntityMap::new(EntityRef::temp("scratch"))
            .with(":ingredient/item", format!("scratch {note}"))
            .with(":ingredient/position", i as i64),
    );
    slug
}

/// A transaction the child acknowledged: `ACK <basis> <datoms> <note> <slug>`.
#[derive(Debug)]
struct Ack {
    basis: u64,
    datoms: usize,
    note: String,
    slug: String,
}

impl Ack {
    fn parse(rest: &str) -> Option<Ack> {
        let mut words = rest.split(' ');
        let ack = Ack {
            basis: words.next()?.parse().ok()?,
            datoms: words.next()?.parse().ok()?,
            note: words.next()?.to_owned(),
            slug: words.next()?.to_owned(),
        };
        words.next().is_none().then_some(ack)
    }
}

/// When to kill the child.
#[derive(Debug, Clone, Copy)]
enum Kill {
    /// This long after it starts: maybe while it opens the store.
    AfterStart(Duration),
    /// This long after its writers start.
    AfterReady(Duration),
}

/// A small generator of kill moments, deterministic for a seed. Four
/// rounds in five kill 2 to 80 ms into the writing, when group commits
/// are in flight; the fifth, within 40 ms of starting.
fn kills(seed: u64) -> impl Iterator<Item = Kill> {
    let mut state = seed | 1;
    std::iter::repeat_with(move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let ms = |range: u64| Duration::from_millis((state >> 8) % range);
        if state.is_multiple_of(5) {
            Kill::AfterStart(ms(40))
        } else {
            Kill::AfterReady(Duration::from_millis(2) + ms(78))
        }
    })
}

/// What one child acknowledged before it was killed.
struct Killed {
    acks: Vec<Ack>,
    /// Transactions begun and not acknowledged when it died.
    in_flight: usize,
}

fn run_child_until_killed(dir: &Path, kill: Kill) -> Killed {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut child = Command::new(exe)
        .args([
            "--exact",
            "crash::child_writer",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
            "-q",
        ])
        .env(CHILD_DIR_VAR, dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting the child writer");
    let stdout = child.stdout.take().expect("the child's stdout");
    let mut stderr = child.stderr.take().expect("the child's stderr");
    // Its stderr is read all along, so that a child that fails can say why,
    // and never blocks on a full pipe.
    let errors = thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let (ready_tx, ready) = mpsc::channel();
    let reader = thread::spawn(move || {
        let mut acks = Vec::new();
        let mut begun = HashSet::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line == "READY" {
                let _ = ready_tx.send(());
            } else if let Some(note) = line.strip_prefix("BEGIN ") {
                begun.insert(note.to_owned());
            } else if let Some(rest) = line.strip_prefix("ACK ") {
                let ack = Ack::parse(rest)
                    .unwrap_or_else(|| panic!("the child printed a bad line: {line:?}"));
                begun.remove(&ack.note);
                acks.push(ack);
            }
        }
        Killed {
            acks,
            in_flight: begun.len(),
        }
    });
    match kill {
        Kill::AfterStart(delay) => thread::sleep(delay),
        Kill::AfterReady(delay) => {
            if ready.recv_timeout(READY_TIMEOUT).is_err() {
                stop(&mut child);
                panic!(
                    "the child did not start writing within {READY_TIMEOUT:?}: {}",
                    errors.join().unwrap_or_default()
                );
            }
            thread::sleep(delay);
        }
    }
    if let Ok(Some(status)) = child.try_wait() {
        panic!(
            "the child stopped on its own ({status}) before it was killed: {}",
            errors.join().unwrap_or_default()
        );
    }
    stop(&mut child);
    let _ = errors.join();
    reader.join().expect("reading the child's output")
}

/// SIGKILL on Unix: no destructor, no flush runs.
fn stop(child: &mut Child) {
    child.kill().expect("killing the child");
    child.wait().expect("waiting for the killed child");
}

/// Checks that `ack`'s transaction is in `db`, whole.
fn check_acknowledged(db: &Db, ack: &Ack) -> Result<(), String> {
    if db.basis() < ack.basis {
        return Err(format!(
            "the basis went back to {}, before acknowledged tx {}",
            db.basis(),
            ack.basis
        ));
    }
    let note_attr = db
        .attribute(&kw(":tx/note"))
        .map_err(|e| format!("the schema is gone: {e}"))?
        .id;
    let datoms = db
        .log(ack.basis, ack.basis)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("reading tx {}: {e}", ack.basis))?;
    if datoms.len() != ack.datoms {
        return Err(format!(
            "tx {} ({}) has {} datoms in the log, but {} were acknowledged",
            ack.basis,
            ack.note,
            datoms.len(),
            ack.datoms
        ));
    }
    let noted = datoms
        .iter()
        .any(|d| d.e == ack.basis && d.a == note_attr && d.v == Value::from(ack.note.as_str()));
    if !noted {
        return Err(format!(
            "tx {} is not the one acknowledged as {}",
            ack.basis, ack.note
        ));
    }
    if !ack.slug.starts_with(SHARED_PREFIX) {
        check_whole(db, &ack.slug)?;
    }
    Ok(())
}

/// Checks that the recipe of slug `slug` is there and whole.
fn check_whole(db: &Db, slug: &str) -> Result<(), String> {
    let read = |e: &dyn std::fmt::Display| format!("reading {slug}: {e}");
    let slug_attr = db.attribute(&kw(":recipe/slug")).map_err(|e| read(&e))?.id;
    let id = db
        .entity_with(slug_attr, &Value::from(slug))
        .map_err(|e| read(&e))?
        .ok_or_else(|| format!("recipe {slug} is missing"))?;
    let recipe = db.entity(id).map_err(|e| read(&e))?;
    for attr in [":recipe/title", ":recipe/serves"] {
        if recipe.get(&kw(attr)).is_none() {
            return Err(format!("{slug} has no {attr}"));
        }
    }
    if slug.starts_with(SHARED_PREFIX) {
        // Shared recipes have no ingredients.
        return Ok(());
    }
    let ingredients = recipe.get_all(&kw(":recipe/ingredients"));
    if ingredients.len() as i64 != INGREDIENTS {
        return Err(format!(
            "{slug} is half-written: {} ingredients",
            ingredients.len()
        ));
    }
    for ingredient in ingredients {
        let id = ingredient
            .as_ref()
            .ok_or_else(|| format!("{slug} has an ingredient that is not a ref"))?;
        let ingredient = db.entity(id).map_err(|e| read(&e))?;
        if ingredient.get(&kw(":ingredient/item")).is_none() {
            return Err(format!("{slug} has a half-written ingredient"));
        }
    }
    Ok(())
}

/// Every recipe slug on disk.
fn slugs(db: &Db) -> Result<Vec<String>, String> {
    let Ok(slug_attr) = db.attribute(&kw(":recipe/slug")) else {
        return Ok(Vec::new()); // killed before the schema was installed
    };
    db.datoms(Index::Aevt, &Components::any().a(slug_attr.id))
        .map(|d| {
            let d = d.map_err(|e| format!("reading slugs: {e}"))?;
            d.v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("a slug that is not a string: {}", d.v))
        })
        .collect()
}

/// Reopens the store after a kill and checks it; returns how many entities
/// `verify_current_entries` checked.
fn check_after_kill(dir: &Path, acknowledged: &[Ack]) -> Result<usize, String> {
    let store = Store::open(dir).map_err(|e| format!("reopening: {e}"))?;
    let db = store.db();
    for ack in acknowledged {
        check_acknowledged(&db, ack).map_err(|why| format!("acknowledged {}: {why}", ack.note))?;
    }
    // Whatever else made it to disk is whole too (atomic batches).
    for slug in slugs(&db)? {
        check_whole(&db, &slug)?;
    }
    store
        .verify_current_entries()
        .map_err(|why| format!("current-entity entries: {why}"))
}

fn rounds() -> usize {
    count_from_env(ROUNDS_VAR, DEFAULT_ROUNDS as u64, "rounds") as usize
}

#[test]
fn killed_writers_lose_nothing_acknowledged_and_leave_entries_true() {
    let rounds = rounds();
    let seed = seed_from_clock();
    let started = Instant::now();
    let (mut acknowledged_total, mut verified, mut in_flight_rounds) = (0, 0, 0);
    let mut dir = None;
    let mut acknowledged: Vec<Ack> = Vec::new();
    for (round, kill) in kills(seed).take(rounds).enumerate() {
        if round % ROUNDS_PER_STORE == 0 {
            dir = Some(tempfile::tempdir().expect("a temporary directory"));
            acknowledged.clear();
        }
        let dir = dir.as_ref().expect("a store directory").path();
        let killed = run_child_until_killed(dir, kill);
        acknowledged_total += killed.acks.len();
        in_flight_rounds += usize::from(killed.in_flight > 0);
        acknowledged.extend(killed.acks);
        verified += check_after_kill(dir, &acknowledged)
            .unwrap_or_else(|why| panic!("round {round} (seed {seed}, killed {kill:?}): {why}"));
    }
    eprintln!(
        "crash: {rounds} rounds, {acknowledged_total} acknowledged transactions checked, \
         {verified} entities verified ({in_flight_rounds} rounds killed with transactions \
         in flight, {WRITERS} writers, {:.1} s, seed {seed})",
        started.elapsed().as_secs_f64()
    );
    assert!(
        acknowledged_total > rounds,
        "the children acknowledged too little to prove anything (seed {seed})"
    );
    assert!(
        rounds < 5 || in_flight_rounds > 0,
        "no round killed a child with a transaction in flight (seed {seed})"
    );
}

/// The check the crash test relies on finds what it is there to find: an
/// entry that lacks a fact, holds one the datoms do not, is as of the wrong
/// transaction, is missing, or names an entity no datom mentions.
#[test]
fn the_entry_check_finds_entries_that_disagree_with_the_datoms() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let recipe = {
        let store = Store::open(dir.path()).expect("a new store");
        store.transact(&schema_tx()).expect("the schema");
        let mut tx = Transaction::new();
        new_recipe(&mut tx, 1, "check");
        let report = store.transact(&tx).expect("a recipe");
        let mut tx = Transaction::new();
        tx.retract_entity(report.tempid("r").expect("the recipe's id"));
        store.transact(&tx).expect("the recipe retracted");
        let mut tx = Transaction::new();
        new_recipe(&mut tx, 2, "kept");
        let report = store.transact(&tx).expect("another recipe");
        let checked = store.verify_current_entries();
        assert!(
            matches!(checked, Ok(n) if n > INGREDIENTS as usize),
            "a store as written checks out: {checked:?}"
        );
        report.tempid("r").expect("the recipe's id")
    };
    // The entries are stored sixteen entities to a block: see
    // `store::current::blocks`.
    let block_of = |sled: &sled::Db, e: EntityId| {
        sled.get(forkful::store::testing::current_blocks::key(e))
            .expect("reading a block")
            .map(|block| block.to_vec())
    };
    let block = block_of(&raw_sled(dir.path()), recipe).expect("the recipe's block");
    let entry = forkful::store::testing::current_blocks::entry(&block.clone().into(), recipe)
        .expect("a block that reads")
        .expect("the recipe has an entry")
        .to_vec();
    let mut as_of_other_tx = entry.clone();
    as_of_other_tx[7] ^= 1;
    let mut fact_of_other_tx = entry.clone();
    fact_of_other_tx[12 + 15] ^= 1; // the first fact's tx
    let mut facts_short = entry.clone();
    facts_short[11] -= 1; // the count: the last fact is left over
                          // (what the check says, whose entry, the entry written in its place).
    let stranger: EntityId = 1 << 40;
    let tamperings = [
        ("is as of tx", recipe, Some(as_of_other_tx)),
        ("lacks", recipe, Some(fact_of_other_tx)),
        ("facts end at byte", recipe, Some(facts_short)),
        ("no current-entity entry", recipe, None),
        ("no datom mentions", stranger, Some(entry.clone())),
    ];
    for (expected, e, value) in tamperings {
        let sled = raw_sled(dir.path());
        let old = block_of(&sled, e);
        let tampered = match &value {
            Some(value) => forkful::store::testing::current_blocks::with_entries(
                old.as_deref(),
                &[(e, value.clone())],
            ),
            None => forkful::store::testing::current_blocks::without(
                old.as_deref().unwrap_or_default(),
                e,
            ),
        }
        .expect("a block to tamper with");
        sled.insert(forkful::store::testing::current_blocks::key(e), tampered)
            .and_then(|_| sled.flush())
            .expect("tampering with the store");
        drop(sled);
        let checked = Store::open(dir.path())
            .expect("reopening the store")
            .verify_current_entries();
        assert!(
            matches!(&checked, Err(why) if why.contains(expected)),
            "an entry tampered with to show {expected:?} is found: {checked:?}"
        );
        let sled = raw_sled(dir.path());
        sled.remove(forkful::store::testing::current_blocks::key(stranger))
            .and_then(|_| {
                sled.insert(
                    forkful::store::testing::current_blocks::key(recipe),
                    block.as_slice(),
                )
            })
            .and_then(|_| sled.flush())
            .expect("undoing the tampering");
    }
}
