//! A writer killed with SIGKILL at random moments loses no transaction it
//! acknowledged, and leaves no transaction half-written.
//!
//! The test runs this same test binary again as a child, on one test
//! (`child_writer`) that transacts in a loop and prints `ACK <basis> <slug>`
//! after each transaction returns. The parent kills it at a random moment,
//! reopens the store, and checks every acknowledged transaction is there,
//! whole; then lets a new child carry on from there, several times over.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use forkful::store::{kw, EntityMap, EntityRef, Store, Transaction, Value};

use crate::helpers::schema_tx;

const CHILD_DIR_VAR: &str = "FORKFUL_CRASH_CHILD_DIR";
const INGREDIENTS: i64 = 8;

/// The child's loop. Ignored, so it runs only when the parent asks for it.
#[test]
#[ignore = "run by crash::a_killed_writer_loses_no_acknowledged_transaction"]
fn child_writer() {
    let Ok(dir) = std::env::var(CHILD_DIR_VAR) else {
        return;
    };
    let store = Store::open(&dir).unwrap();
    if store.db().attribute(&kw(":recipe/slug")).is_err() {
        store.transact(&schema_tx()).unwrap();
    }
    let mut out = std::io::stdout().lock();
    for i in 0.. {
        let slug = format!("crash-{}-{i}", std::process::id());
        let mut recipe = EntityMap::new(EntityRef::temp("r"))
            .with(":recipe/slug", slug.as_str())
            .with(":recipe/title", format!("Recipe {i}"))
            .with(":recipe/serves", i as i64);
        for n in 1..=INGREDIENTS {
            recipe = recipe.with(
                ":recipe/ingredients",
                EntityMap::anonymous()
                    .with(":ingredient/item", format!("item {n}"))
                    .with(":ingredient/position", n),
            );
        }
        let mut tx = Transaction::new();
        tx.map(recipe).tx_attr(":tx/note", slug.as_str());
        let report = store.transact(&tx).unwrap();
        writeln!(out, "ACK {} {slug}", report.basis_after).unwrap();
        out.flush().unwrap();
    }
}

/// A small deterministic-per-run generator for kill delays.
fn delays(seed: u64) -> impl Iterator<Item = u64> {
    let mut state = seed | 1;
    std::iter::repeat_with(move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        40 + state % 400
    })
}

/// Checks that the recipe of slug `slug` is whole, and was written by `tx`.
fn check_whole(store: &Store, slug: &str, tx: Option<u64>) {
    let db = store.db();
    let slug_attr = db.attribute(&kw(":recipe/slug")).unwrap().id;
    let Some(id) = db.entity_with(slug_attr, &Value::from(slug)).unwrap() else {
        panic!("acknowledged recipe {slug} is missing after the crash");
    };
    let recipe = db.entity(id).unwrap();
    assert!(
        recipe.get(&kw(":recipe/title")).is_some(),
        "{slug} has no title"
    );
    let ingredients = recipe.get_all(&kw(":recipe/ingredients"));
    assert_eq!(
        ingredients.len() as i64,
        INGREDIENTS,
        "{slug} is half-written"
    );
    for ingredient in ingredients {
        let ingredient = db.entity(ingredient.as_ref().unwrap()).unwrap();
        assert!(
            ingredient.get(&kw(":ingredient/item")).is_some(),
            "{slug} has a half-written ingredient"
        );
    }
    if let Some(tx) = tx {
        let note = db.entity(tx).unwrap().get(&kw(":tx/note")).cloned();
        assert_eq!(
            note,
            Some(Value::from(slug)),
            "tx {tx} is not the one acknowledged for {slug}"
        );
    }
}

fn run_child_until_killed(dir: &Path, delay: Duration) -> Vec<(u64, String)> {
    let mut child = Command::new(std::env::current_exe().unwrap())
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
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let acks = Arc::new(Mutex::new(Vec::new()));
    let stdout = child.stdout.take().unwrap();
    let reader = {
        let acks = acks.clone();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix("ACK ") {
                    let (basis, slug) = rest.split_once(' ').unwrap();
                    acks.lock()
                        .unwrap()
                        .push((basis.parse().unwrap(), slug.to_owned()));
                }
            }
        })
    };
    thread::sleep(delay);
    child.kill().unwrap(); // SIGKILL on Unix: no destructor, no flush runs.
    child.wait().unwrap();
    reader.join().unwrap();
    Arc::try_unwrap(acks).unwrap().into_inner().unwrap()
}

#[test]
fn a_killed_writer_loses_no_acknowledged_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let mut acknowledged: Vec<(u64, String)> = Vec::new();
    for (round, delay) in delays(seed).take(8).enumerate() {
        let acks = run_child_until_killed(dir.path(), Duration::from_millis(delay));
        acknowledged.extend(acks);
        let store = Store::open(dir.path())
            .unwrap_or_else(|e| panic!("round {round} (seed {seed}): reopen: {e}"));
        for (basis, slug) in &acknowledged {
            assert!(
                store.db().basis() >= *basis,
                "round {round} (seed {seed}): basis went back"
            );
            check_whole(&store, slug, Some(*basis));
        }
        // Whatever else made it to disk is whole too (atomic batches).
        if let Ok(slug_attr) = store.db().attribute(&kw(":recipe/slug")) {
            let slug_attr = slug_attr.id;
            let db = store.db();
            let slugs: Vec<String> = db
                .datoms(
                    forkful::store::Index::Aevt,
                    &forkful::store::Components::any().a(slug_attr),
                )
                .map(|d| d.unwrap().v.as_str().unwrap().to_owned())
                .collect();
            for slug in slugs {
                check_whole(&store, &slug, None);
            }
        }
    }
    eprintln!(
        "crash: {} transactions acknowledged across 8 kills (seed {seed})",
        acknowledged.len()
    );
    assert!(
        acknowledged.len() > 8,
        "the children acknowledged too little to prove anything (seed {seed})"
    );
}
