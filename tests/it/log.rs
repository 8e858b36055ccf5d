//! The log in PostgreSQL (issue 30's first step): each write appended
//! there before it is applied, a node built from the log alone, a store
//! that is not on the log refused, two nodes deciding on one value fenced,
//! a log out of reach refusing writes with nothing written, and a store
//! copied into an empty log. Against a real PostgreSQL (`postgres`).

use std::sync::Arc;

use forkful::domain::{Change, Content, DomainError, Recipes, Slug, Step};
use forkful::postgres::PgLog;
use forkful::store::{LogError, Store, TransactError};

use crate::helpers::{everything, stored};
use crate::postgres::{fresh_database, psql};

fn follow(store: &Store, url: &str) -> Result<usize, TransactError> {
    store.attach_log(Arc::new(PgLog::connect(url).expect("the log connects")))
}

fn slug(text: &str) -> Slug {
    Slug::parse(text).unwrap()
}

fn content(title: &str) -> Content {
    Content {
        title: title.into(),
        ingredients: vec!["1 cup red lentils".into(), "3 cups water".into()],
        steps: vec![Step {
            section: None,
            text: "Simmer until soft.".into(),
        }],
        ..Content::default()
    }
}

/// Rows in the log, by `t`.
fn rows(url: &str) -> Vec<u64> {
    psql(url, &["SELECT t FROM forkful_log ORDER BY t"])
        .lines()
        .map(|line| line.parse().unwrap())
        .collect()
}

#[test]
fn each_write_is_in_the_log_and_a_node_is_built_from_the_log_alone() {
    let url = fresh_database();
    let first = Store::temporary().unwrap();
    assert_eq!(follow(&first, &url).unwrap(), 0, "an empty log");
    let recipes = Recipes::open(first.clone()).unwrap();
    recipes
        .create(&slug("dal"), content("Dal"), &Change::by("ann", "first"))
        .unwrap();
    recipes
        .edit(
            &slug("dal"),
            forkful::domain::VersionNumber::FIRST,
            content("Red dal"),
            &Change::by("ann", "a better name"),
        )
        .unwrap();
    let basis = first.db().basis();
    // The schema, the recipe and its edit: one row each, the last at the
    // store's basis.
    let logged = rows(&url);
    assert_eq!(logged.len(), 3, "{logged:?}");
    assert_eq!(*logged.last().unwrap(), basis);

    // A node with an empty store becomes the same store from the log.
    let second = Store::temporary().unwrap();
    assert_eq!(follow(&second, &url).unwrap(), 3);
    assert_eq!(
        everything(&second),
        everything(&first),
        "the same datoms at the same t"
    );
    let again = Recipes::open(second.clone()).unwrap();
    assert_eq!(
        again.snapshot().recipe(&slug("dal")).unwrap().content.title,
        "Red dal"
    );
    // And it writes on: its write is the log's next row, which the first
    // node catches up with.
    again
        .create(&slug("toast"), content("Toast"), &Change::by("bo", "first"))
        .unwrap();
    assert_eq!(first.catch_up().unwrap(), 1);
    assert_eq!(everything(&first), everything(&second));
}

#[test]
fn a_store_that_is_not_on_the_log_is_refused_and_left_as_it_was() {
    let url = fresh_database();
    let other_url = fresh_database();
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path()).unwrap();
        follow(&store, &url).unwrap();
        Recipes::open(store.clone()).unwrap();
    }
    let refused = |store: &Store, log: &str, words: &str| {
        let before = stored(store);
        let error = follow(store, log).unwrap_err();
        assert!(
            matches!(error, TransactError::Log(LogError::Mismatch(_))),
            "{error}"
        );
        assert!(error.to_string().contains(words), "{error}");
        assert!(stored(store) == before, "a refused log changed the store");
    };
    // Another site's log.
    let store = Store::open(dir.path()).unwrap();
    refused(&store, &other_url, "this store follows the log");
    drop(store);
    // The log changed under the store: its last transaction is not the
    // store's.
    psql(
        &url,
        &["UPDATE forkful_log SET sum = decode(repeat('ab', 32), 'hex')"],
    );
    let store = Store::open(dir.path()).unwrap();
    refused(&store, &url, "is not the log's transaction");
    drop(store);
    // The log lost the store's transactions.
    psql(&url, &["DELETE FROM forkful_log"]);
    let store = Store::open(dir.path()).unwrap();
    refused(&store, &url, "the log has no transaction");
    // A store with transactions of its own, never on a log.
    let own = Store::temporary().unwrap();
    Recipes::open(own.clone()).unwrap();
    refused(&own, &other_url, "log push");
}

#[test]
fn of_two_nodes_deciding_on_one_value_only_one_appends_and_the_other_catches_up() {
    let url = fresh_database();
    let a = Store::temporary().unwrap();
    follow(&a, &url).unwrap();
    let on_a = Recipes::open(a.clone()).unwrap();
    let b = Store::temporary().unwrap();
    follow(&b, &url).unwrap();
    let on_b = Recipes::open(b.clone()).unwrap();
    // Both at the same basis; a writes first.
    on_a.create(&slug("dal"), content("Dal"), &Change::by("ann", "first"))
        .unwrap();
    let before = b.db().basis();
    let lost = on_b
        .create(&slug("dal"), content("Dal too"), &Change::by("bo", "mine"))
        .unwrap_err();
    assert!(matches!(lost, DomainError::Unavailable(_)), "{lost}");
    assert_eq!(rows(&url).len(), 2, "the loser appended nothing");
    // b caught up with a's write when it lost, and decides on it now: the
    // slug is a's.
    assert!(b.db().basis() > before);
    assert_eq!(everything(&b), everything(&a));
    let taken = on_b
        .create(&slug("dal"), content("Dal too"), &Change::by("bo", "mine"))
        .unwrap_err();
    assert!(matches!(taken, DomainError::SlugTaken(_)), "{taken}");
    on_b.create(
        &slug("bos-dal"),
        content("Dal too"),
        &Change::by("bo", "mine"),
    )
    .unwrap();
    a.catch_up().unwrap();
    assert_eq!(everything(&a), everything(&b));
}

#[test]
fn a_write_the_log_cannot_take_is_refused_and_writes_nothing() {
    let url = fresh_database();
    let store = Store::temporary().unwrap();
    follow(&store, &url).unwrap();
    let recipes = Recipes::open(store.clone()).unwrap();
    let before = stored(&store);
    // The log's database goes away under the node.
    let name = url.rsplit('/').next().unwrap();
    let server = &url[..url.len() - name.len()];
    psql(
        &format!("{server}postgres"),
        &[&format!("DROP DATABASE {name} WITH (FORCE)")],
    );
    let refused = recipes
        .create(&slug("dal"), content("Dal"), &Change::by("ann", "first"))
        .unwrap_err();
    assert!(matches!(refused, DomainError::Unavailable(_)), "{refused}");
    assert!(
        stored(&store) == before,
        "a refused write changed the store"
    );
}

#[test]
fn a_store_is_copied_into_an_empty_log_and_follows_it() {
    let url = fresh_database();
    let source = Store::temporary().unwrap();
    forkful::seed::demo(&source).unwrap();
    let mut heard = 0;
    let copied = source
        .push_to_log(Arc::new(PgLog::connect(&url).unwrap()), &mut |_| heard += 1)
        .unwrap();
    assert!(copied > 100, "the demo's transactions: {copied}");
    assert_eq!(copied, heard);
    assert_eq!(rows(&url).len(), copied);
    // A new node from the log holds every datom the store did.
    let node = Store::temporary().unwrap();
    assert_eq!(follow(&node, &url).unwrap(), copied);
    assert_eq!(everything(&node), everything(&source));
    // The store that was copied follows the log now: it writes through it.
    Recipes::open(source.clone())
        .unwrap()
        .create(&slug("dal"), content("Dal"), &Change::by("ann", "first"))
        .unwrap();
    assert_eq!(rows(&url).len(), copied + 1);
    // A log with entries takes no second copy.
    let other = Store::temporary().unwrap();
    forkful::seed::demo(&other).unwrap();
    let error = other
        .push_to_log(Arc::new(PgLog::connect(&url).unwrap()), &mut |_| {})
        .unwrap_err();
    assert!(error.to_string().contains("empty log"), "{error}");
}

#[test]
fn a_store_that_follows_a_log_takes_no_write_without_it() {
    let url = fresh_database();
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path()).unwrap();
        follow(&store, &url).unwrap();
        Recipes::open(store.clone()).unwrap();
    }
    // Opened without its log (a `seed`, a `user add`, a `serve` that
    // forgot --database-url): it reads, and refuses to write.
    let store = Store::open(dir.path()).unwrap();
    let recipes = Recipes::open(store.clone()).unwrap();
    let before = stored(&store);
    let refused = recipes
        .create(&slug("dal"), content("Dal"), &Change::by("ann", "first"))
        .unwrap_err();
    assert!(refused.to_string().contains("--database-url"), "{refused}");
    assert!(stored(&store) == before);
    // With its log, it writes again.
    follow(&store, &url).unwrap();
    recipes
        .create(&slug("dal"), content("Dal"), &Change::by("ann", "first"))
        .unwrap();
    assert_eq!(rows(&url).len(), 2);
}
