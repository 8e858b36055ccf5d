//! The log in PostgreSQL (issue 30's first step): each write appended
//! there before it is applied, a node built from the log alone, a store
//! that is not on the log refused, two nodes deciding on one value fenced,
//! a log out of reach refusing writes with nothing written, and a store
//! copied into an empty log. Against a real PostgreSQL (`postgres`).

use std::sync::Arc;
use std::time::Duration;

use forkful::domain::{Attempt, Change, ContentDraft, DomainError, Recipes, Slug, Step};
use forkful::postgres::PgLog;
use forkful::store::{
    Index, Log, LogEntry, LogError, LogNews, News, OpenError, SharedKeyspaces, Store, StoreConfig,
    TransactError,
};

use crate::helpers::{everything, get, raw_sled, site, stored};
use crate::postgres::{fresh_database, psql};

/// Makes an open store follow the log at `url`, as its opening on the
/// log does last (`StoreConfig::following`): these tests check the
/// agreement between a store and a log on stores already open.
fn follow(store: &Store, url: &str) -> Result<usize, TransactError> {
    forkful::store::testing::attach_log(
        store,
        Arc::new(PgLog::connect(url).expect("the log connects")),
    )
}

/// `n` nodes in this process, each a temporary store following the log at
/// `url`, with the domain open on it.
fn nodes_on(url: &str, n: usize) -> Vec<(Store, Recipes)> {
    (0..n)
        .map(|_| {
            let store = Store::temporary().unwrap();
            follow(&store, url).unwrap();
            let recipes = Recipes::open(store.clone()).unwrap();
            (store, recipes)
        })
        .collect()
}

fn slug(text: &str) -> Slug {
    Slug::parse(text).unwrap()
}

fn content(title: &str) -> ContentDraft {
    ContentDraft {
        title: title.into(),
        ingredients: vec!["1 cup red lentils".into(), "3 cups water".into()],
        steps: vec![Step {
            section: None,
            text: "Simmer until soft.".into(),
        }],
        ..ContentDraft::default()
    }
}

/// Rows in the log, by `t`.
fn rows(url: &str) -> Vec<u64> {
    psql(url, &["SELECT t FROM forkful_log ORDER BY t"])
        .lines()
        .map(|line| line.parse().unwrap())
        .collect()
}

/// A node's mode is chosen where it is opened: opened on its log, a store
/// is caught up and writes through it; a store the log cannot take is
/// refused by the opening, and the store is left as it was.
#[test]
fn a_store_opened_on_its_log_follows_it_and_one_the_log_cannot_take_is_refused() {
    let url = fresh_database();
    let log = || -> Arc<dyn Log> { Arc::new(PgLog::connect(&url).expect("the log connects")) };
    let first = Store::open_with(StoreConfig::temporary().following(log())).unwrap();
    assert!(first.follows_log() && first.others_write());
    let recipes = Recipes::open(first.clone()).unwrap();
    recipes
        .create(&slug("dal"), content("Dal"), &Change::by("ann", "first"))
        .unwrap();
    assert_eq!(*rows(&url).last().unwrap(), first.db().basis());
    let second = Store::open_with(StoreConfig::temporary().following(log())).unwrap();
    assert_eq!(
        everything(&second),
        everything(&first),
        "caught up at opening"
    );

    // A store with a history of its own: the opening on the log refuses it.
    let dir = tempfile::tempdir().unwrap();
    {
        let own = Store::open(dir.path()).unwrap();
        Recipes::open(own.clone())
            .unwrap()
            .create(&slug("soup"), content("Soup"), &Change::by("bo", "first"))
            .unwrap();
    }
    let before = everything(&Store::open(dir.path()).unwrap());
    let refused = Store::open_with(StoreConfig::durable(dir.path()).following(log()))
        .err()
        .expect("a store with transactions of its own is refused");
    assert!(matches!(refused, OpenError::FollowingLog(_)), "{refused:?}");
    assert!(
        refused.to_string().contains("transactions of its own"),
        "{refused}"
    );
    let alone = Store::open(dir.path()).unwrap();
    assert_eq!(everything(&alone), before, "the refused store is as it was");
    assert!(!alone.follows_log(), "and still on its own");
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
        again
            .snapshot()
            .recipe(&slug("dal"))
            .unwrap()
            .content
            .title(),
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

/// The files of a closed store, copied as they are.
fn copy_store(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy_store(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

#[test]
fn a_write_waits_for_the_log_alone_and_a_store_that_lost_its_tail_catches_up() {
    let url = fresh_database();
    let dir = tempfile::tempdir().unwrap();
    let (node, older) = (dir.path().join("node"), dir.path().join("older"));
    let open = || {
        let store = Store::open(&node).unwrap();
        let applied = follow(&store, &url).unwrap();
        (store.clone(), Recipes::open(store).unwrap(), applied)
    };
    let (store, recipes, _) = open();
    recipes
        .create(&slug("dal"), content("Dal"), &Change::by("ann", "first"))
        .unwrap();
    // Durable in PostgreSQL, the write is published without a flush of
    // sled: the store is the log's index, not a second copy to sync.
    let flushes = store.stats().flushes;
    recipes
        .create(&slug("toast"), content("Toast"), &Change::by("bo", "first"))
        .unwrap();
    assert_eq!(store.stats().flushes, flushes, "a flush of sled per write");
    assert!(recipes.snapshot().recipe(&slug("toast")).is_ok());
    store.flush().unwrap();
    drop((store, recipes));
    copy_store(&node, &older);

    let (store, recipes, _) = open();
    for name in ["soup", "stew"] {
        let title = name.to_uppercase();
        recipes
            .create(&slug(name), content(&title), &Change::by("cy", "first"))
            .unwrap();
    }
    let whole = everything(&store);
    drop((store, recipes));

    // The store as a crash that lost sled's unflushed tail leaves it: two
    // writes behind the log. It opens, catches up, and has them again.
    std::fs::remove_dir_all(&node).unwrap();
    std::fs::rename(&older, &node).unwrap();
    let (store, recipes, applied) = open();
    assert_eq!(applied, 2, "the two writes the store lost, from the log");
    assert_eq!(everything(&store), whole);
    assert!(recipes.snapshot().recipe(&slug("stew")).is_ok());
}

#[test]
fn a_store_that_is_not_on_the_log_is_refused_and_left_as_it_was() {
    let url = fresh_database();
    let other_url = fresh_database();
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path()).unwrap();
        follow(&store, &url).unwrap();
        let recipes = Recipes::open(store.clone()).unwrap();
        let by = Change::by("ann", "first");
        recipes.create(&slug("dal"), content("Dal"), &by).unwrap();
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
    let basis = store.db().basis();
    drop(store);
    // A store changed behind the log's back further back, on a copy: a
    // transaction before its newest gone from its log index, the newest
    // and its sum left as they were.
    {
        let copy = tempfile::tempdir().unwrap();
        copy_store(dir.path(), copy.path());
        {
            let sled = raw_sled(copy.path());
            let tx_of = |key: &[u8]| u64::from_be_bytes(key[1..9].try_into().unwrap());
            let older = sled
                .scan_prefix([Index::Log.prefix_byte()])
                .keys()
                .map(Result::unwrap)
                .find(|key| tx_of(key) > 32 && tx_of(key) < basis)
                .expect("a transaction before the newest");
            sled.remove(older).unwrap();
            sled.flush().unwrap();
        }
        let store = Store::open(copy.path()).unwrap();
        refused(&store, &url, "summed again, are not the log's");
    }
    // A store changed behind the log's back: a datom of its newest
    // transaction gone from its log index, its sum left as it was.
    {
        let sled = raw_sled(dir.path());
        let newest = [&[Index::Log.prefix_byte()][..], &basis.to_be_bytes()].concat();
        let (key, _) = sled.scan_prefix(&newest).next().unwrap().unwrap();
        sled.remove(key).unwrap();
        sled.flush().unwrap();
    }
    let store = Store::open(dir.path()).unwrap();
    refused(&store, &url, "holds other datoms than the log's");
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

/// A start sums again only the history the store applied since the last
/// check that passed, not all of it (2 s at 100,000 recipes, and growing):
/// a transaction changed after that point is found; one before it was
/// checked then, and is not read again.
#[test]
fn a_start_sums_again_only_the_history_applied_since_the_last_check() {
    let url = fresh_database();
    let dir = tempfile::tempdir().unwrap();
    let by = Change::by("ann", "new");
    {
        let store = Store::open(dir.path()).unwrap();
        follow(&store, &url).unwrap();
        let recipes = Recipes::open(store.clone()).unwrap();
        recipes.create(&slug("dal"), content("Dal"), &by).unwrap();
    }
    // Started again: the whole history checked, up to here.
    let checked = {
        let store = Store::open(dir.path()).unwrap();
        follow(&store, &url).unwrap();
        let checked = store.db().basis();
        let recipes = Recipes::open(store.clone()).unwrap();
        recipes
            .create(&slug("toast"), content("Toast"), &by)
            .unwrap();
        recipes.create(&slug("jam"), content("Jam"), &by).unwrap();
        checked
    };
    let newest = Store::open(dir.path()).unwrap().db().basis();
    // After the check: found.
    let (_copy, after) = attach_tampered(dir.path(), &url, &|t| t > checked && t < newest);
    let error = after.expect_err("a transaction changed since the last check");
    assert!(error.to_string().contains("summed again"), "{error}");
    // Before it: checked then, not read again.
    let (_copy, before) = attach_tampered(dir.path(), &url, &|t| t > 32 && t < checked);
    assert!(before.is_ok(), "{before:?}");
}

/// A copy of the closed store in `dir` with a datom of the first
/// transaction `pick` chooses gone from its log index (a store changed
/// behind its log's back, its sums left as they were), opened and
/// attached to the log at `url`: how the attaching ended.
fn attach_tampered(
    dir: &std::path::Path,
    url: &str,
    pick: &dyn Fn(u64) -> bool,
) -> (tempfile::TempDir, Result<usize, TransactError>) {
    let tx_of = |key: &[u8]| u64::from_be_bytes(key[1..9].try_into().unwrap());
    let copy = tempfile::tempdir().unwrap();
    copy_store(dir, copy.path());
    {
        let sled = raw_sled(copy.path());
        let key = sled
            .scan_prefix([Index::Log.prefix_byte()])
            .keys()
            .map(Result::unwrap)
            .find(|key| pick(tx_of(key)))
            .expect("a transaction to change");
        sled.remove(key).unwrap();
        sled.flush().unwrap();
    }
    let store = Store::open(copy.path()).unwrap();
    let attached = follow(&store, url);
    (copy, attached)
}

/// News that never comes: a follow loop stopped before it starts reads
/// the log to its end once.
struct NoNews;

impl LogNews for NoNews {
    fn wait(&mut self, _: Duration) -> Result<News, LogError> {
        Ok(News::Quiet)
    }
}

/// Each transaction is summed again once, soon after it was applied: a
/// store copied into the log, a node built from the log, and what a
/// following node applied by the time it read the log to its end are not
/// summed again at their next start. A node built from the log of a
/// million recipes summed them all at its first start (25.6 s). A change
/// to a transaction summed before is then not found; one to a transaction
/// applied since is.
#[test]
fn history_is_summed_when_copied_built_or_followed_not_again_at_the_next_start() {
    use std::sync::atomic::AtomicBool;
    let url = fresh_database();
    let by = Change::by("ann", "new");
    let pushed = tempfile::tempdir().unwrap();
    let copied = {
        let store = Store::open(pushed.path()).unwrap();
        let recipes = Recipes::open(store.clone()).unwrap();
        for name in ["dal", "toast", "jam"] {
            recipes.create(&slug(name), content(name), &by).unwrap();
        }
        let log = Arc::new(PgLog::connect(&url).unwrap());
        store.push_to_log(log, &mut |_| {}).unwrap();
        store.db().basis()
    };
    let (_copy, attached) = attach_tampered(pushed.path(), &url, &|t| t > 32 && t < copied);
    assert!(attached.is_ok(), "copied into the log: {attached:?}");
    let built = tempfile::tempdir().unwrap();
    {
        let store = Store::open(built.path()).unwrap();
        follow(&store, &url).unwrap();
        assert_eq!(store.db().basis(), copied, "built from the log");
    }
    let (_copy, attached) = attach_tampered(built.path(), &url, &|t| t > 32 && t < copied);
    assert!(attached.is_ok(), "built from the log: {attached:?}");
    let (followed, own) = {
        let store = Store::open(built.path()).unwrap();
        follow(&store, &url).unwrap();
        // Another node writes; this one reads the log to its end.
        let (_other, on_other) = nodes_on(&url, 1).remove(0);
        for name in ["rice", "beans"] {
            on_other.create(&slug(name), content(name), &by).unwrap();
        }
        store
            .follow(&mut NoNews, Duration::from_secs(60), &AtomicBool::new(true))
            .unwrap();
        let followed = store.db().basis();
        // Then writes its own, which no read to the end followed.
        let recipes = Recipes::open(store.clone()).unwrap();
        for name in ["soup", "stew"] {
            recipes.create(&slug(name), content(name), &by).unwrap();
        }
        (followed, store.db().basis())
    };
    let (_copy, attached) = attach_tampered(built.path(), &url, &|t| t > copied && t < followed);
    assert!(attached.is_ok(), "followed: {attached:?}");
    let (_copy, attached) = attach_tampered(built.path(), &url, &|t| t > followed && t < own);
    let error = attached.expect_err("its own writes, summed at no read to the end");
    assert!(error.to_string().contains("summed again"), "{error}");
}

#[test]
fn of_two_nodes_deciding_on_one_value_only_one_appends_and_the_other_decides_again() {
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
    // b decided on the value before a's write: the log refuses its append,
    // b catches up, and decides again on a's value, where the slug is
    // taken. Nothing of the first decision was written anywhere.
    let taken = on_b
        .create(&slug("dal"), content("Dal too"), &Change::by("bo", "mine"))
        .unwrap_err();
    assert!(matches!(taken, DomainError::SlugTaken(_)), "{taken}");
    assert_eq!(rows(&url).len(), 2, "the loser appended nothing");
    assert!(b.db().basis() > before);
    assert_eq!(everything(&b), everything(&a));
    on_b.create(
        &slug("bos-dal"),
        content("Dal too"),
        &Change::by("bo", "mine"),
    )
    .unwrap();
    a.catch_up().unwrap();
    assert_eq!(everything(&a), everything(&b));
}

/// A fresh log and three nodes on it, each caught up with one recipe,
/// `dal`.
fn three_nodes_with_dal() -> (String, Vec<(Store, Recipes)>) {
    let url = fresh_database();
    let nodes = nodes_on(&url, 3);
    nodes[0]
        .1
        .create(&slug("dal"), content("Dal"), &Change::by("ann", "first"))
        .unwrap();
    for (store, _) in &nodes {
        store.catch_up().unwrap();
    }
    (url, nodes)
}

/// Fifty cooks fork one recipe through three nodes at once: every fork is
/// written once, under a slug of its own, and the three stores end the
/// same. A write that lost to other nodes' every time it was decided
/// (`LOG_RETRIES`) is refused as busy, and the cook sends it again.
#[test]
fn fifty_cooks_forking_through_three_nodes_get_fifty_forks() {
    let (url, nodes) = three_nodes_with_dal();
    let slugs: Vec<String> = std::thread::scope(|scope| {
        let forks: Vec<_> = (0..50)
            .map(|cook| {
                let recipes = &nodes[cook % 3].1;
                scope.spawn(move || {
                    let change = Change::by(&format!("cook-{cook}"), "my fork");
                    for _ in 0..50 {
                        match recipes.fork(&slug("dal"), None, None, |c| c, &change) {
                            Ok((slug, _)) => return slug.to_string(),
                            Err(DomainError::Unavailable(_)) => {
                                std::thread::sleep(std::time::Duration::from_millis(5))
                            }
                            Err(other) => panic!("cook {cook}: {other}"),
                        }
                    }
                    panic!("cook {cook}: refused fifty times")
                })
            })
            .collect();
        forks.into_iter().map(|f| f.join().unwrap()).collect()
    });
    let distinct: std::collections::BTreeSet<_> = slugs.iter().collect();
    assert_eq!(distinct.len(), 50, "{slugs:?}");
    assert_eq!(rows(&url).len(), 52, "the schema, dal, and fifty forks");
    for (store, _) in &nodes {
        store.catch_up().unwrap();
    }
    assert_eq!(everything(&nodes[1].0), everything(&nodes[0].0));
    assert_eq!(everything(&nodes[2].0), everything(&nodes[0].0));
}

/// The same fork sent through three nodes at once (a browser sending its
/// form again, as a first answer was lost) is saved once: each send is
/// answered with the one fork, made by whichever reached the log first.
#[test]
fn the_same_fork_sent_through_three_nodes_at_once_is_saved_once() {
    let (url, nodes) = three_nodes_with_dal();
    let before = rows(&url).len();
    let change = Change::by("ben", "my fork").once(Attempt::of(&[b"one form, sent again"]));
    let answers: Vec<String> = std::thread::scope(|scope| {
        let sends: Vec<_> = (0..12)
            .map(|send| {
                let (recipes, change) = (&nodes[send % 3].1, &change);
                scope.spawn(move || loop {
                    // The address left to the writer: a second save would
                    // get another one.
                    match recipes.fork(&slug("dal"), None, None, |c| c, change) {
                        Ok((slug, _)) => return slug.to_string(),
                        Err(DomainError::AlreadySaved { slug }) => return slug,
                        Err(DomainError::Unavailable(_)) => {
                            std::thread::sleep(std::time::Duration::from_millis(5))
                        }
                        Err(other) => panic!("send {send}: {other}"),
                    }
                })
            })
            .collect();
        sends.into_iter().map(|s| s.join().unwrap()).collect()
    });
    assert!(answers.iter().all(|a| a == "dal-ben"), "{answers:?}");
    assert_eq!(rows(&url).len(), before + 1, "one fork in the log");
    // Another form from the same cook is another fork.
    let other = Change::by("ben", "again").once(Attempt::of(&[b"another form"]));
    let (second, _) = nodes[1]
        .1
        .fork(&slug("dal"), None, None, |c| c, &other)
        .unwrap();
    assert_eq!(second.as_str(), "dal-ben-2");
    for (store, _) in &nodes {
        store.catch_up().unwrap();
    }
    assert_eq!(everything(&nodes[1].0), everything(&nodes[0].0));
    assert_eq!(everything(&nodes[2].0), everything(&nodes[0].0));
}

/// A node that follows the log shows another node's write without being
/// asked: the log's notice wakes it (its slow poll, here 30 s, is not what
/// brings the write).
#[test]
fn a_following_node_shows_another_nodes_write_within_moments() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};
    let url = fresh_database();
    let writer = Store::temporary().unwrap();
    follow(&writer, &url).unwrap();
    let on_writer = Recipes::open(writer.clone()).unwrap();
    let reader = Store::temporary().unwrap();
    follow(&reader, &url).unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let following = scope.spawn(|| {
            let mut news = PgLog::connect(&url).unwrap().listen().unwrap();
            reader.follow(&mut *news, Duration::from_secs(30), &stop)
        });
        // Once the listener listens (it catches up first), write.
        let listening = Instant::now();
        while reader.db().basis() != writer.db().basis() {
            assert!(listening.elapsed() < Duration::from_secs(10));
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(200));
        on_writer
            .create(&slug("dal"), content("Dal"), &Change::by("ann", "first"))
            .unwrap();
        let written = Instant::now();
        while reader.db().basis() != writer.db().basis() {
            assert!(
                written.elapsed() < Duration::from_secs(10),
                "the follower did not show the write in 10 s"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(everything(&reader), everything(&writer));
        // Stopped, it returns at its next notice: one more write.
        stop.store(true, Ordering::Release);
        on_writer
            .create(&slug("toast"), content("Toast"), &Change::by("ann", "more"))
            .unwrap();
        following.join().unwrap().unwrap();
    });
    let position = reader.log_position().unwrap().unwrap();
    assert_eq!(position.head, writer.db().basis());
    assert!(position.shown <= position.head);
}

/// A log that counts its reads of entries, for a node that must not read
/// more than it needs, and refuses its next `losses` appends as one
/// refuses a row another node's got in ahead of (`Moved`), as a node meets
/// when others take writes as fast as it does: the rest is the log in
/// PostgreSQL.
struct CountingLog {
    log: PgLog,
    reads: std::sync::atomic::AtomicUsize,
    losses: std::sync::atomic::AtomicUsize,
    /// While set, an append waits (a slow commit, or a node stopped
    /// between applying and the log's answer).
    stall: std::sync::atomic::AtomicBool,
    /// Once set, the first append of more than one entry is refused as
    /// `Moved`.
    lose_a_batch: std::sync::atomic::AtomicBool,
    /// The most entries one append carried.
    largest: std::sync::atomic::AtomicUsize,
    /// Appends to refuse as a log out of reach does (`Unavailable`).
    outages: std::sync::atomic::AtomicUsize,
}

impl CountingLog {
    /// The log at `url`, no read counted and no append to refuse yet.
    fn on(url: &str) -> CountingLog {
        CountingLog {
            log: PgLog::connect(url).unwrap(),
            reads: Default::default(),
            losses: Default::default(),
            stall: Default::default(),
            lose_a_batch: Default::default(),
            largest: Default::default(),
            outages: Default::default(),
        }
    }

    fn reads(&self) -> usize {
        self.reads.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// `store` made a node on a `CountingLog` of the log at `url`, with the
/// domain open on it.
fn on_counting_log(url: &str, store: Store) -> (Store, Arc<CountingLog>, Recipes) {
    let log = Arc::new(CountingLog::on(url));
    forkful::store::testing::attach_log(&store, log.clone()).unwrap();
    let recipes = Recipes::open(store.clone()).unwrap();
    (store, log, recipes)
}

impl Log for CountingLog {
    fn identity(&self) -> &str {
        self.log.identity()
    }
    fn append(&self, entries: &[LogEntry]) -> Result<(), LogError> {
        use std::sync::atomic::Ordering::SeqCst;
        while self.stall.load(SeqCst) {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.largest.fetch_max(entries.len(), SeqCst);
        if self
            .outages
            .fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            return Err(LogError::Unavailable("out of reach, for the test".into()));
        }
        let lost = self
            .losses
            .fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1))
            .is_ok()
            || (entries.len() > 1 && self.lose_a_batch.swap(false, SeqCst));
        if lost {
            return Err(LogError::Moved {
                prev: entries[0].prev,
            });
        }
        self.log.append(entries)
    }
    fn entries_after(&self, t: u64, limit: usize) -> Result<Vec<LogEntry>, LogError> {
        self.reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.log.entries_after(t, limit)
    }
    fn sum_at(&self, t: u64) -> Result<Option<[u8; 32]>, LogError> {
        self.log.sum_at(t)
    }
    fn position(&self, t: u64) -> Result<(u64, u64), LogError> {
        self.log.position(t)
    }
    fn listen(&self) -> Result<Box<dyn LogNews>, LogError> {
        self.log.listen()
    }
    fn begin_copy(&self) -> Result<(), LogError> {
        self.log.begin_copy()
    }
    fn append_copied(&self, entry: &LogEntry) -> Result<(), LogError> {
        self.log.append_copied(entry)
    }
    fn end_copy(&self) -> Result<(), LogError> {
        self.log.end_copy()
    }
    fn copying(&self) -> Result<bool, LogError> {
        self.log.copying()
    }
    fn keyspaces(&self) -> &dyn SharedKeyspaces {
        self.log.keyspaces()
    }
}

/// Issue 55, item 3: a write that lost the log to other nodes several
/// times in a row is saved all the same. With three tries, three nodes
/// taking writes as fast as eight cooks sent them told cooks "busy" within
/// a second (scripts/cluster.sh, docs/journal/55-million.md). Contention
/// that does not end is still refused as busy, and soon.
#[test]
fn a_write_that_lost_the_log_six_times_in_a_row_is_saved_all_the_same() {
    use std::sync::atomic::Ordering::SeqCst;
    let url = fresh_database();
    let (store, log, recipes) = on_counting_log(&url, Store::temporary().unwrap());
    let before = (rows(&url).len(), store.stats().log_retries);
    log.losses.store(6, SeqCst);
    recipes
        .create(&slug("dal"), content("Dal"), &Change::by("ann", "first"))
        .unwrap();
    assert_eq!(rows(&url).len(), before.0 + 1, "dal, once");
    assert_eq!(store.stats().log_retries, before.1 + 6);
    log.losses.store(usize::MAX, SeqCst);
    let started = std::time::Instant::now();
    let refused = recipes.create(&slug("soup"), content("Soup"), &Change::by("ann", "more"));
    assert!(
        matches!(refused, Err(DomainError::Unavailable(_))),
        "{refused:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(rows(&url).len(), before.0 + 1, "no soup");
}

/// News told by the test, one at a time; each wait says it is waiting,
/// so the test knows the node is done with the news before.
struct ToldNews {
    news: std::sync::mpsc::Receiver<News>,
    waiting: std::sync::mpsc::Sender<()>,
}

impl LogNews for ToldNews {
    fn wait(&mut self, within: Duration) -> Result<News, LogError> {
        let _ = self.waiting.send(());
        Ok(self.news.recv_timeout(within).unwrap_or(News::Quiet))
    }
}

/// A node told of another's write reads the log once, not again to find
/// nothing more; told of a write it has applied (its own, on a node that
/// writes), it does not read the log at all. Each was a query of the log
/// for every write on every node.
#[test]
fn a_node_told_of_a_write_reads_the_log_only_for_what_it_lacks() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let url = fresh_database();
    let (writer, on_writer) = nodes_on(&url, 1).remove(0);
    let reader = Store::temporary().unwrap();
    let log = Arc::new(CountingLog::on(&url));
    forkful::store::testing::attach_log(&reader, log.clone()).unwrap();
    let (tell, news) = std::sync::mpsc::channel();
    let (waiting, waits) = std::sync::mpsc::channel();
    let mut told = ToldNews { news, waiting };
    let stop = AtomicBool::new(false);
    // The reads after each news, checked once the follower has stopped:
    // a failed check inside would leave it waiting for news forever.
    let reads = std::thread::scope(|scope| {
        let following = scope.spawn(|| reader.follow(&mut told, Duration::from_secs(60), &stop));
        let wait = || waits.recv_timeout(Duration::from_secs(10)).is_ok();
        let mut reads = Vec::new();
        if wait() {
            let before = log.reads();
            on_writer
                .create(&slug("dal"), content("Dal"), &Change::by("ann", "first"))
                .unwrap();
            let t = writer.db().basis();
            // Told of the write; told of it again; told of news without
            // its `t`.
            for news in [News::UpTo(t), News::UpTo(t), News::Appended] {
                tell.send(news).unwrap();
                if !wait() {
                    break;
                }
                reads.push(log.reads() - before);
            }
        }
        stop.store(true, Ordering::Release);
        tell.send(News::Quiet).unwrap();
        following.join().unwrap().unwrap();
        reads
    });
    assert_eq!(
        reads,
        [1, 1, 2],
        "reads of the log after a write, the same write again, and news without its t"
    );
    assert_eq!(everything(&reader), everything(&writer));
}

#[test]
fn a_node_behind_the_log_counts_the_transactions_it_lacks() {
    let url = fresh_database();
    let nodes = nodes_on(&url, 2);
    let ((writer, on_writer), (reader, _)) = (&nodes[0], &nodes[1]);
    for name in ["dal", "toast"] {
        on_writer
            .create(&slug(name), content(name), &Change::by("ann", "first"))
            .unwrap();
    }
    let position = reader.log_position().unwrap().unwrap();
    assert_eq!(position.head, writer.db().basis());
    // Two transactions behind, though their ids are further apart: each
    // recipe's entities took ids between them.
    assert_eq!(position.behind, 2, "{position:?}");
    assert!(position.head - position.shown > 2, "{position:?}");
    reader.catch_up().unwrap();
    let position = reader.log_position().unwrap().unwrap();
    assert_eq!((position.behind, position.shown), (0, position.head));
}

/// PostgreSQL out of reach: writes are refused with nothing written, reads
/// go on at the node's basis, and `/healthz` says so.
#[actix_web::test]
async fn a_write_the_log_cannot_take_is_refused_and_writes_nothing() {
    let url = fresh_database();
    let store = Store::temporary().unwrap();
    follow(&store, &url).unwrap();
    let recipes = Recipes::open(store.clone()).unwrap();
    recipes
        .create(&slug("dal"), content("Dal"), &Change::by("ann", "first"))
        .unwrap();
    // Health with no grace: unhealthy the moment the log is out of reach.
    let site = actix_web::web::Data::new(
        forkful::web::Site::new(recipes.clone(), "http://forkful.test").with_health_limits(
            forkful::web::health::HealthLimits {
                failing_for: Duration::ZERO,
                ..Default::default()
            },
        ),
    );
    let health = get(&site, "/healthz").await;
    assert_eq!(health.status, 200, "{}", health.body);
    assert_eq!(health.header("cache-control"), Some("no-store"));
    let said: serde_json::Value = serde_json::from_str(&health.body).unwrap();
    let basis = store.db().basis();
    assert_eq!(said["basis"], basis);
    assert_eq!(said["log"]["head"], basis);
    assert_eq!(said["log"]["lag"], 0);
    let metrics = get(&site, "/metrics").await.body;
    assert!(
        metrics.contains(&format!("forkful_log_head {basis}")),
        "{metrics}"
    );
    assert!(metrics.contains("forkful_log_lag 0"), "{metrics}");

    let before = stored(&store);
    // The log's database goes away under the node.
    let name = url.rsplit('/').next().unwrap();
    let server = &url[..url.len() - name.len()];
    psql(
        &format!("{server}postgres"),
        &[&format!("DROP DATABASE {name} WITH (FORCE)")],
    );
    let refused = recipes
        .create(&slug("toast"), content("Toast"), &Change::by("ann", "more"))
        .unwrap_err();
    assert!(matches!(refused, DomainError::Unavailable(_)), "{refused}");
    assert!(
        stored(&store) == before,
        "a refused write changed the store"
    );
    // Reads go on; health says the log is out of reach.
    assert_eq!(get(&site, "/recipes/dal").await.status, 200);
    let health = get(&site, "/healthz").await;
    assert_eq!(health.status, 503, "{}", health.body);
    let said: serde_json::Value = serde_json::from_str(&health.body).unwrap();
    assert_eq!(said["basis"], basis);
    assert!(said["status"].as_str().unwrap().contains("log unreachable"));
}

/// sled 0.34 writes the snapshot an opening starts from only when it
/// opens a store, so an opening reads back every message written since
/// the last: a node that has just built its store from the log is opened
/// again, and its next start begins from a snapshot (9.3 s against 1.6 s
/// at 1,000,000 recipes).
#[test]
fn a_node_built_from_the_log_is_opened_again_so_its_next_start_reads_a_snapshot() {
    let url = fresh_database();
    let (writer, on_writer) = nodes_on(&url, 1).remove(0);
    let by = Change::by("ann", "new");
    for name in ["dal", "toast", "jam"] {
        on_writer.create(&slug(name), content(name), &by).unwrap();
    }
    let snapshots = |dir: &std::path::Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .filter(|entry| {
                let name = entry.as_ref().unwrap().file_name();
                name.to_string_lossy().starts_with("snap.")
            })
            .count()
    };
    let built = |reopen_after_applied: usize| {
        let dir = tempfile::tempdir().unwrap();
        let log: Arc<dyn Log> = Arc::new(PgLog::connect(&url).unwrap());
        let mut config = StoreConfig::durable(dir.path()).following(log);
        config.reopen_after_applied = reopen_after_applied;
        let store = Store::open_with(config).unwrap();
        assert_eq!(everything(&store), everything(&writer));
        (dir, store)
    };
    let (dir, store) = built(usize::MAX);
    assert_eq!(snapshots(dir.path()), 0, "built and not opened again");
    drop(store);
    let (dir, store) = built(3);
    assert_eq!(snapshots(dir.path()), 1, "built and opened again");
    // Opened again, it is a node as any other.
    Recipes::open(store.clone())
        .unwrap()
        .create(&slug("soup"), content("Soup"), &by)
        .unwrap();
    writer.catch_up().unwrap();
    assert_eq!(everything(&store), everything(&writer));
}

#[test]
fn a_store_is_copied_into_an_empty_log_and_follows_it() {
    let url = fresh_database();
    let source = Store::temporary().unwrap();
    forkful::seed::demo(&source).unwrap();
    let before = export(&source);
    assert!(before.contains("#keyspace pictures"), "the demo's pictures");
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
    // Its pictures are the log's too: exported from the new node, the
    // same file as from the store before it was copied.
    assert!(export(&node) == before, "the same datoms and pictures");
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

/// While `log push` fills a log, no node attaches to it or appends to it:
/// a copy cut short leaves the log closed, saying why.
#[test]
fn a_log_being_filled_by_a_copy_takes_no_node() {
    let url = fresh_database();
    // A node attached to the empty log before the copy began.
    let early = nodes_on(&url, 1);
    psql(&url, &["DELETE FROM forkful_log"]);
    psql(&url, &["UPDATE forkful_log_identity SET copying = true"]);
    let refused = early[0]
        .1
        .create(&slug("dal"), content("Dal"), &Change::by("ann", "first"))
        .unwrap_err();
    assert!(refused.to_string().contains("being copied"), "{refused}");
    let late = Store::temporary().unwrap();
    let refused = follow(&late, &url).unwrap_err();
    assert!(refused.to_string().contains("being copied"), "{refused}");
    assert!(late.is_empty());
    // Another copy into it is refused too.
    let source = Store::temporary().unwrap();
    Recipes::open(source.clone()).unwrap();
    let refused = source
        .push_to_log(Arc::new(PgLog::connect(&url).unwrap()), &mut |_| {})
        .unwrap_err();
    assert!(refused.to_string().contains("another copy"), "{refused}");
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
    // forgot --database-url): its datoms read, and it refuses every write,
    // to the datoms and to a keyspace alike: a session or password changed
    // here alone would be this node's, not the site's (a `user disable`
    // without its log). The domain, whose picture key is the log's, does
    // not open on it.
    let store = Store::open(dir.path()).unwrap();
    let before = stored(&store);
    assert!(store.db().basis() > 32, "it reads");
    let refused = store.transact(&crate::helpers::schema_tx()).unwrap_err();
    assert!(refused.to_string().contains("--database-url"), "{refused}");
    let sessions = store.keyspace("sessions").unwrap();
    let refused = sessions.insert(b"a session", b"ann").unwrap_err();
    assert!(refused.to_string().contains("--database-url"), "{refused}");
    let refused = Recipes::open(store.clone())
        .err()
        .expect("no domain without the log");
    assert!(refused.to_string().contains("--database-url"), "{refused}");
    assert!(stored(&store) == before);
    // With its log, it writes again.
    follow(&store, &url).unwrap();
    Recipes::open(store.clone())
        .unwrap()
        .create(&slug("dal"), content("Dal"), &Change::by("ann", "first"))
        .unwrap();
    assert_eq!(rows(&url).len(), 2);
}

/// A cook's write on one node, the redirect followed on another: the page
/// there shows the write, waiting for its node to catch up if it must; a
/// node that cannot catch up in time answers 503 rather than an older page.
#[actix_web::test]
async fn after_a_write_on_one_node_the_next_page_on_another_shows_it() {
    use crate::writing::{recipe_fields, sign_up, Browser};
    use forkful::web::read_your_writes::{SEEN_COOKIE, WAIT};
    let url = fresh_database();
    let nodes = nodes_on(&url, 2);
    let (on_a, on_b) = (site(&nodes[0].1), site(&nodes[1].1));
    let mut ann = Browser::new(&on_a);
    sign_up(&mut ann, "ann").await;
    let form = ann.get("/recipes/new").await;
    let created = ann.submit(&form, "/recipes/new", &recipe_fields(&[])).await;
    assert_eq!(created.status, 303, "{}", created.body);
    let seen = created
        .cookies_set()
        .into_iter()
        .find(|(name, _)| name == SEEN_COOKIE)
        .and_then(|(_, value)| value)
        .expect("a write marks the basis it was shown at");
    assert_eq!(seen, nodes[0].0.db().basis().to_string());
    // On b, which has not caught up: the page waits, then refuses.
    ann.site = on_b.clone();
    let started = std::time::Instant::now();
    let waited = ann.get("/recipes/weeknight-dal").await;
    assert_eq!(waited.status, 503, "{}", waited.body);
    assert_eq!(waited.header("retry-after"), Some("1"));
    assert!(started.elapsed() >= WAIT);
    // A visitor without the cookie is not held up: b's page as it is.
    assert_eq!(get(&on_b, "/recipes/weeknight-dal").await.status, 404);
    // b catches up while the page waits: the page shows the write.
    let b = nodes[1].0.clone();
    let catching_up = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(200));
        b.catch_up().unwrap()
    });
    let shown = ann.get("/recipes/weeknight-dal").await;
    assert_eq!(shown.status, 200, "{}", shown.body);
    assert!(catching_up.join().unwrap() > 0);
}

/// What is not history is kept beside the log for every node: a cook who
/// signed up on one node is logged in on another, and a picture sent to
/// one is served by another.
#[actix_web::test]
async fn sessions_passwords_and_pictures_are_every_nodes() {
    use crate::writing::{sign_up, Browser};
    let url = fresh_database();
    let nodes = nodes_on(&url, 2);
    let (on_a, on_b) = (site(&nodes[0].1), site(&nodes[1].1));
    let mut ann = Browser::new(&on_a);
    sign_up(&mut ann, "ann").await;
    nodes[1].0.catch_up().unwrap();
    ann.site = on_b.clone();
    let account = ann.get("/account").await;
    assert_eq!(
        account.status, 200,
        "logged in on the other node: {}",
        account.body
    );
    assert!(account.body.contains("ann"));

    // A picture sent to a, in a recipe written on a, served by b.
    let bytes = crate::pictures::picture_file(640, 480, image::ImageFormat::Png);
    let mut picture = nodes[0].1.add_picture(&bytes, "ann").unwrap();
    picture.alt = "A bowl of dal".into();
    let mut with_picture = content("Dal");
    with_picture.picture = Some(picture);
    nodes[0]
        .1
        .create(&slug("dal"), with_picture, &Change::by("ann", "first"))
        .unwrap();
    nodes[1].0.catch_up().unwrap();
    let page = get(&on_b, "/recipes/dal").await;
    let sources = page.attrs("img", "src");
    assert!(!sources.is_empty(), "{}", page.body);
    let mut served_first = Vec::new();
    for source in &sources {
        let served = get(&on_b, source).await;
        assert_eq!(served.status, 200, "{source}");
        assert!(served.bytes().len() > 100, "{source}");
        served_first.push(served.bytes().to_vec());
    }
    // Kept on b once read, its variants and its size (a picture a version
    // names never changes): served the same with PostgreSQL's records of
    // it gone.
    assert_eq!(nodes[1].1.cached_pictures(), Some(sources.len() + 1));
    psql(
        &url,
        &["DELETE FROM forkful_keyspace WHERE space = 'pictures'"],
    );
    for (source, first) in sources.iter().zip(&served_first) {
        let served = get(&on_b, source).await;
        assert_eq!(served.status, 200, "{source}");
        assert_eq!(served.bytes(), first.as_slice(), "{source}");
    }
    let unread = get(&on_a, &sources[0]).await;
    assert_eq!(
        unread.status, 404,
        "a never read it, and PostgreSQL has it no more"
    );
}

/// The store's export, pictures included, as `forkful export` writes it.
fn export(store: &Store) -> String {
    let mut out = Vec::new();
    let pictures = store.keyspace(forkful::domain::pictures::KEYSPACE).unwrap();
    forkful::store::export_with(
        &store.db(),
        &[(forkful::domain::pictures::KEYSPACE, &pictures)],
        &mut out,
    )
    .unwrap();
    String::from_utf8(out).unwrap()
}

/// Three nodes, the real binary, on one log: fifty cooks, each signing up
/// and forking one recipe through one of the three at once, get fifty
/// forks; a write on one node, its redirect followed on another, shows
/// there; and the three stores end with the same datoms at the same t
/// (their exports are the same file).
#[test]
fn three_node_processes_on_one_log_agree() {
    use crate::http_client::{Browser, Server};
    use crate::writing::recipe_fields;
    let url = fresh_database();
    let root = tempfile::tempdir().unwrap();
    let data: Vec<_> = (0..3)
        .map(|n| root.path().join(format!("node-{n}")))
        .collect();
    let flags = ["--database-url", &url, "--trusted-proxy", "127.0.0.1"];
    let mut nodes: Vec<Server> = data
        .iter()
        .map(|dir| Server::start(dir, &flags).unwrap())
        .collect();
    let origins: Vec<String> = nodes.iter().map(|n| n.origin().to_owned()).collect();

    let mut ann = Browser::new(&origins[0]).behind_proxy_as("10.0.0.1");
    ann.sign_up("ann").unwrap();
    let form = ann.get("/recipes/new").unwrap();
    let created = ann
        .submit(&form, "/recipes/new", &recipe_fields(&[]))
        .unwrap();
    assert_eq!(created.status, 303, "{}", created.body);
    let location = created.header("location").unwrap().to_owned();
    // The redirect, followed on another node: the cook's write is there.
    ann.reconnect(&origins[1]);
    let shown = ann.get(&location).unwrap();
    assert_eq!(
        shown.status, 200,
        "{location} on the second node: {}",
        shown.body
    );

    let forks: Vec<String> = std::thread::scope(|scope| {
        let cooks: Vec<_> = (0..50)
            .map(|cook| {
                let origin = origins[cook % 3].clone();
                let parent = location.clone();
                scope.spawn(move || {
                    let address = format!("10.1.0.{}", cook + 1);
                    let mut browser = Browser::new(&origin).behind_proxy_as(&address);
                    let handle = format!("cook-{cook}");
                    // A write refused as busy (it lost the log to other
                    // nodes' every time) is sent again, as a browser would.
                    let mut tries = 0;
                    while let Err(why) = browser.sign_up(&handle) {
                        tries += 1;
                        assert!(tries < 20 && why.contains(" 503"), "{handle}: {why}");
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    let action = format!("{parent}/fork");
                    for _ in 0..20 {
                        let form = browser.get(&action).unwrap();
                        assert_eq!(form.status, 200, "{handle}: {}", form.body);
                        let fields = recipe_fields(&[("note", "my fork")]);
                        let sent = browser.submit(&form, &action, &fields).unwrap();
                        match sent.status {
                            303 => return sent.header("location").unwrap().to_owned(),
                            503 => std::thread::sleep(Duration::from_millis(20)),
                            other => panic!("{handle}: {other} {}", sent.body),
                        }
                    }
                    panic!("{handle}: refused twenty times")
                })
            })
            .collect();
        cooks.into_iter().map(|c| c.join().unwrap()).collect()
    });
    let distinct: std::collections::BTreeSet<_> = forks.iter().collect();
    assert_eq!(distinct.len(), 50, "{forks:?}");

    // Every node catches up with the log, then the stores are compared.
    let head: u64 = psql(&url, &["SELECT max(t) FROM forkful_log"])
        .trim()
        .parse()
        .unwrap();
    for origin in &origins {
        let mut browser = Browser::new(origin);
        let started = std::time::Instant::now();
        loop {
            let health = browser.get("/healthz").unwrap();
            let said: serde_json::Value = serde_json::from_str(&health.body).unwrap();
            if said["basis"] == head {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{origin}: {said}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    for node in &mut nodes {
        node.terminate().unwrap();
    }
    let exports: Vec<String> = data
        .iter()
        .map(|dir| crate::http_client::export_of(dir))
        .collect();
    assert!(exports[0].lines().count() > 1000);
    assert!(
        exports[1] == exports[0],
        "node 1's store differs from node 0's"
    );
    assert!(
        exports[2] == exports[0],
        "node 2's store differs from node 0's"
    );
}

/// PostgreSQL stopped in the middle of writes, and started again: while it
/// is down, writes are refused (busy, or "could not tell" for one whose
/// answer was lost, with nothing written here) and reads go on at the
/// node's basis; once it is back, writes are taken again, and a node built
/// from the log holds every write that was acknowledged.
#[test]
fn postgresql_stopped_during_writes_loses_nothing_acknowledged() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Mutex;
    let cluster = crate::postgres::OwnCluster::start();
    let url = cluster.database("forkful_down");
    let nodes = nodes_on(&url, 1);
    let (store, recipes) = &nodes[0];
    let system = actix_web::rt::System::new();
    // Health with no grace: unhealthy the moment the log is out of reach.
    let site = system.block_on(async {
        actix_web::web::Data::new(
            forkful::web::Site::new(recipes.clone(), "http://forkful.test").with_health_limits(
                forkful::web::health::HealthLimits {
                    failing_for: Duration::ZERO,
                    ..Default::default()
                },
            ),
        )
    });
    // The writes acknowledged, by number.
    let acknowledged = Mutex::new(Vec::new());
    let stop = AtomicBool::new(false);
    let taken_before = std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut n = 0;
            while !stop.load(Ordering::Acquire) {
                let name = format!("w{n}");
                let change = Change::by("ann", "w").once(Attempt::of(&[name.as_bytes()]));
                // A write refused, or whose outcome could not be told (in
                // flight when PostgreSQL went: the log sends it again until
                // `RESOLVE_WITHIN` passes), is sent again as a browser
                // would, until it is answered: saved once, and the second
                // answer says so rather than that its address is taken.
                while !stop.load(Ordering::Acquire) {
                    match recipes.create(&slug(&name), content(&name), &change) {
                        Ok(_) | Err(DomainError::AlreadySaved { .. }) => {
                            acknowledged.lock().unwrap().push(n);
                            break;
                        }
                        Err(DomainError::Unavailable(_) | DomainError::OutcomeUnknown(_)) => {
                            std::thread::sleep(Duration::from_millis(5))
                        }
                        Err(other) => panic!("{name}: {other}"),
                    }
                }
                n += 1;
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        std::thread::sleep(Duration::from_millis(300));
        cluster.down();
        // A write appended just before may still be applying here.
        std::thread::sleep(Duration::from_millis(100));
        let basis = store.db().basis();
        std::thread::sleep(Duration::from_millis(300));
        // Down: nothing moves, reads are served, health says why.
        assert_eq!(
            store.db().basis(),
            basis,
            "a write applied with the log down"
        );
        let health = system.block_on(async {
            let health = get(&site, "/healthz").await;
            let shown = get(&site, "/recipes/w0").await.status;
            (health, shown)
        });
        assert_eq!(health.0.status, 503, "{}", health.0.body);
        assert_eq!(health.1, 200);
        // A write asked for now is refused: at once, or once its answer is
        // given up on (PostgreSQL stays down meanwhile).
        let probe = recipes.create(
            &slug("while-down"),
            content("while-down"),
            &Change::by("ann", "w"),
        );
        assert!(
            matches!(
                probe,
                Err(DomainError::Unavailable(_) | DomainError::OutcomeUnknown(_))
            ),
            "a write while PostgreSQL was down: {probe:?}"
        );
        assert_eq!(store.db().basis(), basis, "it was applied");
        let taken_before = acknowledged.lock().unwrap().len();
        cluster.up();
        // Taken again once the node's probe finds PostgreSQL back (it asks
        // twice a second): waited for, not guessed.
        let back = std::time::Instant::now();
        while acknowledged.lock().unwrap().len() <= taken_before
            && back.elapsed() < Duration::from_secs(15)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        stop.store(true, Ordering::Release);
        taken_before
    });
    let acknowledged = acknowledged.into_inner().unwrap();
    assert!(
        acknowledged.len() > taken_before,
        "no write was taken once PostgreSQL was back: {acknowledged:?}"
    );
    // Everything acknowledged is in the log: a node built from it alone.
    let rebuilt = Store::temporary().unwrap();
    follow(&rebuilt, &url).unwrap();
    let view = Recipes::open(rebuilt).unwrap().snapshot();
    for n in &acknowledged {
        let name = format!("w{n}");
        assert!(
            view.recipe(&slug(&name)).is_ok(),
            "{name} was acknowledged and lost"
        );
    }
    // The node that lived through it agrees with the log.
    store.catch_up().unwrap();
    assert!(recipes.snapshot().basis() == view.basis());
}

/// A PostgreSQL that takes the connection and then says nothing (a network
/// gone quiet, a paused machine) is given up on in bounded time, as an
/// unreachable one is, never waited on for as long as TCP would.
#[test]
fn a_postgresql_that_never_answers_is_given_up_on() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    // Accepts, and holds the connections without a word.
    let held = std::thread::spawn(move || {
        let mut kept = Vec::new();
        for stream in silent.incoming().take(1) {
            kept.push(stream);
        }
        std::thread::sleep(Duration::from_secs(30));
        drop(kept);
    });
    let started = std::time::Instant::now();
    let error = PgLog::connect(&format!("postgres://nobody@127.0.0.1:{port}/none"))
        .err()
        .expect("a silent server is no log");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "waited {:?}",
        started.elapsed()
    );
    assert!(matches!(error, LogError::Unavailable(_)), "{error}");
    drop(held);
}

/// A keyspace kept beside the log answers as a node's own sled tree does:
/// the same writes, swaps, removals and prefix scans give the same answers
/// (prefixes of 0xFF bytes, and the empty one, included).
#[test]
fn a_shared_keyspace_answers_as_a_nodes_own_does() {
    let url = fresh_database();
    let shared = Store::temporary().unwrap();
    follow(&shared, &url).unwrap();
    let own = Store::temporary().unwrap();
    let answers = |store: &Store| {
        let keys = store.keyspace("test").unwrap();
        let mut said = Vec::new();
        for key in [
            &b"a1"[..],
            b"a2",
            b"b",
            b"\xff",
            b"\xff\xff\x01",
            b"\xff\x00",
        ] {
            keys.insert(key, b"v").unwrap();
        }
        keys.insert_all(&[
            (b"a3".to_vec(), b"w".to_vec()),
            (b"c".to_vec(), b"x".to_vec()),
        ])
        .unwrap();
        said.push(format!(
            "{:?}",
            keys.compare_and_swap(b"a1", Some(b"v"), Some(b"v2"))
        ));
        said.push(format!(
            "{:?}",
            keys.compare_and_swap(b"a1", Some(b"v"), Some(b"v3"))
        ));
        said.push(format!(
            "{:?}",
            keys.compare_and_swap(b"new", None, Some(b"n"))
        ));
        said.push(format!(
            "{:?}",
            keys.compare_and_swap(b"new", None, Some(b"n"))
        ));
        said.push(format!("{:?}", keys.compare_and_swap(b"gone", None, None)));
        said.push(format!(
            "{:?}",
            keys.compare_and_swap(b"b", Some(b"v"), None)
        ));
        said.push(format!("{:?}", keys.get(b"b").unwrap()));
        // In the order asked, a key asked twice answered twice.
        let many = keys.get_many(&[b"new", b"b", b"a2", b"\xff\x00", b"a2"]);
        said.push(format!("{:?}", many.unwrap()));
        said.push(format!("{:?}", keys.remove(b"c")));
        said.push(format!("{:?}", keys.remove(b"c")));
        for prefix in [&b""[..], b"a", b"\xff", b"\xff\xff", b"zz"] {
            let found: Vec<_> = keys
                .scan_prefix(prefix)
                .map(|entry| entry.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
                .collect();
            said.push(format!("{prefix:?}: {found:?}"));
        }
        // A range, its end left out, at most so many: as the queue of
        // deliveries reads what is due.
        let ranges: [(&[u8], &[u8], usize); 6] = [
            (b"", b"\xff\xff", 100),
            (b"a", b"b", 1),
            (b"a", b"a2", 5),
            (b"a2", b"zz", 2),
            (b"b", b"a", 5),
            (b"a", b"zz", 0),
        ];
        for (start, end, most) in ranges {
            let found: Vec<_> = keys
                .scan_range(start, end, most)
                .map(|entry| entry.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
                .collect();
            said.push(format!("{start:?}..{end:?} ({most}): {found:?}"));
        }
        said.push(format!("{:?}", keys.remove_prefix(b"a")));
        said.push(format!("{:?}", keys.scan_prefix(b"").count()));
        said
    };
    assert_eq!(answers(&shared), answers(&own));
}

/// A TCP relay to PostgreSQL that, once armed, lets the next large send
/// (past `threshold` bytes from the client) reach the server and loses
/// everything the server answers on that connection, then closes it: an
/// append committed whose answer never came back.
struct AnswerLosingRelay {
    url: String,
    /// Bytes still to be sent before the next connection loses its answers.
    armed: Arc<std::sync::Mutex<Option<usize>>>,
    /// Connections whose answers were lost.
    cut: Arc<std::sync::atomic::AtomicUsize>,
}

impl AnswerLosingRelay {
    fn start(url: &str) -> AnswerLosingRelay {
        use std::io::{Read, Write};
        use std::net::{Shutdown, TcpListener, TcpStream};
        use std::sync::atomic::{AtomicBool, Ordering};
        let mut parsed = url::Url::parse(url).unwrap();
        let target = format!(
            "{}:{}",
            parsed.host_str().unwrap(),
            parsed.port().unwrap_or(5432)
        );
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        parsed.set_host(Some("127.0.0.1")).unwrap();
        parsed
            .set_port(Some(listener.local_addr().unwrap().port()))
            .unwrap();
        let armed: Arc<std::sync::Mutex<Option<usize>>> = Arc::default();
        let cut: Arc<std::sync::atomic::AtomicUsize> = Arc::default();
        let (armed_in, cut_in) = (armed.clone(), cut.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let server = TcpStream::connect(&target).unwrap();
                let losing = Arc::new(AtomicBool::new(false));
                let (mut from_client, mut to_server) =
                    (client.try_clone().unwrap(), server.try_clone().unwrap());
                let (armed, cut, losing_up) = (armed_in.clone(), cut_in.clone(), losing.clone());
                let (client_end, server_end) =
                    (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || {
                    let mut buffer = vec![0; 64 * 1024];
                    while let Ok(n @ 1..) = from_client.read(&mut buffer) {
                        let mut arm = armed.lock().unwrap();
                        if let Some(left) = arm.as_mut() {
                            if n >= *left {
                                *arm = None;
                                losing_up.store(true, Ordering::SeqCst);
                                cut.fetch_add(1, Ordering::SeqCst);
                                let (client_end, server_end) = (
                                    client_end.try_clone().unwrap(),
                                    server_end.try_clone().unwrap(),
                                );
                                // Long enough for the commit; then the line is gone.
                                std::thread::spawn(move || {
                                    std::thread::sleep(Duration::from_millis(500));
                                    let _ = client_end.shutdown(Shutdown::Both);
                                    let _ = server_end.shutdown(Shutdown::Both);
                                });
                            } else {
                                *left -= n;
                            }
                        }
                        drop(arm);
                        if to_server.write_all(&buffer[..n]).is_err() {
                            break;
                        }
                    }
                    let _ = to_server.shutdown(Shutdown::Write);
                });
                let (mut from_server, mut to_client) = (server, client);
                std::thread::spawn(move || {
                    let mut buffer = vec![0; 64 * 1024];
                    while let Ok(n @ 1..) = from_server.read(&mut buffer) {
                        if losing.load(Ordering::SeqCst) {
                            continue;
                        }
                        if to_client.write_all(&buffer[..n]).is_err() {
                            break;
                        }
                    }
                    let _ = to_client.shutdown(Shutdown::Write);
                });
            }
        });
        AnswerLosingRelay {
            url: parsed.to_string(),
            armed,
            cut,
        }
    }

    /// The next connection to send `bytes` more loses its answers.
    fn lose_answers_after(&self, bytes: usize) {
        *self.armed.lock().unwrap() = Some(bytes);
    }

    fn answers_lost(&self) -> usize {
        self.cut.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// The connection breaks after PostgreSQL committed a node's append and
/// before the node heard: the node asks the log again, finds its own row,
/// and acknowledges the write, which is in the log, and in the store,
/// once.
#[test]
fn an_append_whose_answer_was_lost_is_found_in_the_log_and_saved_once() {
    let url = fresh_database();
    let relay = AnswerLosingRelay::start(&url);
    let nodes = nodes_on(&relay.url, 1);
    let (store, recipes) = &nodes[0];
    let by = Change::by("ann", "first");
    recipes
        .create(&slug("before"), content("Before"), &by)
        .unwrap();
    let before = rows(&url).len();
    // The append carries the long summary; nothing else the node sends is
    // near that size.
    let mut long = content("A soup with a long story");
    long.summary = Some("A story of soup. ".repeat(2_000));
    relay.lose_answers_after(16 * 1024);
    recipes
        .create(&slug("long-story"), long, &by)
        .expect("the write is in the log, so it is saved");
    assert_eq!(
        relay.answers_lost(),
        1,
        "no answer was lost: the test tested nothing"
    );
    assert_eq!(rows(&url).len(), before + 1, "the write is in the log once");
    // The node applied it once, and goes on writing.
    let view = recipes.snapshot();
    assert_eq!(
        view.recipe(&slug("long-story")).unwrap().content.title(),
        "A soup with a long story"
    );
    recipes
        .create(&slug("after"), content("After"), &by)
        .unwrap();
    assert_eq!(rows(&url).len(), before + 2);
    // A node built from the log holds exactly what this one does.
    let rebuilt = Store::temporary().unwrap();
    follow(&rebuilt, &url).unwrap();
    store.catch_up().unwrap();
    assert_eq!(export(&rebuilt), export(store));
}

/// A keyspace kept in the log's database remembers the lasting values read
/// through it, and forgets what this node writes over or removes: a value
/// removed here is never served from memory. A store on its own remembers
/// nothing (sled is its cache).
#[test]
fn a_keyspace_in_the_log_remembers_lasting_values_and_forgets_what_it_removes() {
    let url = fresh_database();
    let (node, _) = nodes_on(&url, 1).remove(0);
    let things = node.keyspace("things").unwrap().remembering(1 << 20);
    things.insert(b"a", b"apple").unwrap();
    assert_eq!(things.remembered(), Some(0), "a write remembers nothing");
    assert_eq!(
        things.get_lasting(b"a").unwrap().as_deref(),
        Some(&b"apple"[..])
    );
    assert_eq!(things.remembered(), Some(1));
    psql(
        &url,
        &["DELETE FROM forkful_keyspace WHERE space = 'things'"],
    );
    assert_eq!(
        things.get_lasting(b"a").unwrap().as_deref(),
        Some(&b"apple"[..]),
        "read once from the log's database"
    );
    things.insert(b"a", b"avocado").unwrap();
    assert_eq!(things.remembered(), Some(0), "written over here: forgotten");
    assert_eq!(
        things.get_lasting(b"a").unwrap().as_deref(),
        Some(&b"avocado"[..])
    );
    assert!(things.remove(b"a").unwrap());
    assert_eq!(
        things.get_lasting(b"a").unwrap(),
        None,
        "removed here: gone"
    );
    assert_eq!(things.remembered(), Some(0));

    // A value its reader does not call settled is read, not remembered.
    things.insert(b"p", b"passing").unwrap();
    let read = things.get_lasting_if(b"p", |v| v != b"passing").unwrap();
    assert_eq!(read.as_deref(), Some(&b"passing"[..]));
    assert_eq!(things.remembered(), Some(0), "not settled: not remembered");

    let alone = Store::temporary().unwrap();
    let kept_here = alone.keyspace("things").unwrap().remembering(1 << 20);
    kept_here.insert(b"a", b"apple").unwrap();
    assert_eq!(
        kept_here.get_lasting(b"a").unwrap().as_deref(),
        Some(&b"apple"[..])
    );
    assert_eq!(kept_here.remembered(), None);
}

/// A node that reads a named picture while another node's collection has
/// marked it (before that collection finds it named and puts its size
/// back) does not keep the mark: the picture is served again once its
/// size is back.
#[test]
fn a_named_picture_read_while_marked_for_collection_is_not_remembered_as_gone() {
    let url = fresh_database();
    let nodes = nodes_on(&url, 2);
    let bytes = crate::pictures::picture_file(640, 480, image::ImageFormat::Png);
    let mut picture = nodes[0].1.add_picture(&bytes, "ann").unwrap();
    picture.alt = "A bowl of dal".into();
    let mut with_picture = content("Dal");
    with_picture.picture = Some(picture.clone());
    nodes[0]
        .1
        .create(&slug("dal"), with_picture, &Change::by("ann", "first"))
        .unwrap();
    nodes[1].0.catch_up().unwrap();
    let pictures = nodes[0].0.keyspace("pictures").unwrap();
    let size = pictures.get(picture.hash.as_bytes()).unwrap().unwrap();
    // What a collection on node 0 leaves while it looks for a version
    // naming the picture.
    pictures
        .insert(picture.hash.as_bytes(), b"collecting")
        .unwrap();
    assert_eq!(nodes[1].1.picture_kept(&picture.hash).unwrap(), None);
    pictures.insert(picture.hash.as_bytes(), &size).unwrap();
    let kept = nodes[1].1.picture_kept(&picture.hash).unwrap();
    assert_eq!(
        kept.map(|p| (p.width, p.height)),
        Some((picture.width, picture.height)),
        "the size put back is served"
    );
}

/// Issue 55, item 3: writes from many cooks on one node share commits to
/// the log (as Datomic's transactor batches them): while one append is on
/// its way, the writes decided meanwhile are applied and go in the next,
/// together. Each is acknowledged once the log holds it, and a node that
/// only follows ends up with the same store.
#[test]
fn writes_from_many_cooks_on_one_node_share_one_commit_to_the_log() {
    use std::sync::atomic::Ordering::SeqCst;
    let url = fresh_database();
    let (store, log, recipes) = on_counting_log(&url, Store::temporary().unwrap());
    let before = rows(&url).len();
    // The first append is slow: the other cooks' writes queue behind it.
    log.stall.store(true, SeqCst);
    let by = Change::by("ann", "new");
    std::thread::scope(|scope| {
        let cooks: Vec<_> = (0..8)
            .map(|cook| {
                let (recipes, by) = (&recipes, &by);
                scope.spawn(move || {
                    for n in 0..4 {
                        let name = format!("dish-{cook}-{n}");
                        recipes.create(&slug(&name), content(&name), by).unwrap();
                    }
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(300));
        log.stall.store(false, SeqCst);
        for cook in cooks {
            cook.join().unwrap();
        }
    });
    assert_eq!(rows(&url).len(), before + 32, "every write, once");
    assert!(log.largest.load(SeqCst) > 1, "no append carried two writes");
    let snapshot = recipes.snapshot();
    assert_eq!(
        snapshot.recipe(&slug("dish-7-3")).unwrap().content.title(),
        "dish-7-3"
    );
    let follower = nodes_on(&url, 1).remove(0).0;
    assert_eq!(everything(&follower), everything(&store));
}

/// A batch the log refuses (another node's entry came first) is taken
/// back out whole, with what was decided on it, and every write in it is
/// decided again and saved: none twice, none lost, none left applied.
#[test]
fn a_batch_the_log_refused_is_taken_out_whole_and_each_write_decided_again() {
    use std::sync::atomic::Ordering::SeqCst;
    let url = fresh_database();
    let (store, log, recipes) = on_counting_log(&url, Store::temporary().unwrap());
    let before = (rows(&url).len(), store.stats().log_retries);
    log.stall.store(true, SeqCst);
    log.lose_a_batch.store(true, SeqCst);
    std::thread::scope(|scope| {
        let cooks: Vec<_> = (0..6)
            .map(|cook| {
                let recipes = &recipes;
                scope.spawn(move || {
                    let name = format!("soup-{cook}");
                    let by = Change::by("ann", "new");
                    recipes.create(&slug(&name), content(&name), &by).unwrap();
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(300));
        log.stall.store(false, SeqCst);
        for cook in cooks {
            cook.join().unwrap();
        }
    });
    assert!(!log.lose_a_batch.load(SeqCst), "no batch was refused");
    assert_eq!(rows(&url).len(), before.0 + 6, "every write, once");
    assert!(store.stats().log_retries >= before.1 + 2);
    let follower = nodes_on(&url, 1).remove(0).0;
    assert_eq!(everything(&follower), everything(&store));
}

/// A node stopped after applying a write and before the log answered
/// (its pages on disk, the write never in the log) takes the write back
/// out when it next starts on the log, and catches up: it is not refused
/// as a store changed behind its log's back.
#[test]
fn a_node_stopped_before_the_log_answered_takes_the_unlogged_write_out_when_it_starts() {
    use std::sync::atomic::Ordering::SeqCst;
    let url = fresh_database();
    let dir = tempfile::tempdir().unwrap();
    let copy = tempfile::tempdir().unwrap();
    let (store, log, recipes) = on_counting_log(&url, Store::open(dir.path()).unwrap());
    let by = Change::by("ann", "new");
    recipes.create(&slug("dal"), content("Dal"), &by).unwrap();
    // The write is applied and on disk, its append waiting: the copy is
    // the node as a crash would leave it. The append is then refused, and
    // the write decided again, later: the log's is not the copy's.
    log.stall.store(true, SeqCst);
    log.losses.store(1, SeqCst);
    std::thread::scope(|scope| {
        let soup = scope.spawn(|| recipes.create(&slug("soup"), content("Soup"), &by));
        std::thread::sleep(Duration::from_millis(300));
        store.flush().unwrap();
        copy_store(dir.path(), copy.path());
        log.stall.store(false, SeqCst);
        soup.join().unwrap().unwrap();
    });
    let crashed = Store::open(copy.path()).unwrap();
    follow(&crashed, &url).unwrap();
    assert_eq!(everything(&crashed), everything(&store));
}

/// A refusal decided on a write this node applied and the log then
/// refused is decided again, not given: a cook whose recipe's address
/// looked taken by a write that failed gets it (and the cook who sent
/// that write is told it failed).
#[test]
fn a_refusal_that_rested_on_a_write_the_log_refused_is_decided_again() {
    use std::sync::atomic::Ordering::SeqCst;
    let url = fresh_database();
    let (_store, log, recipes) = on_counting_log(&url, Store::temporary().unwrap());
    let before = rows(&url).len();
    log.stall.store(true, SeqCst);
    log.outages.store(1, SeqCst);
    let (first, second) = std::thread::scope(|scope| {
        let first = scope
            .spawn(|| recipes.create(&slug("dal"), content("Dal"), &Change::by("ann", "first")));
        // The first is applied, its append waiting; the second is
        // decided on it: the address looks taken.
        std::thread::sleep(Duration::from_millis(200));
        let second = scope.spawn(|| {
            recipes.create(
                &slug("dal"),
                content("Ben's dal"),
                &Change::by("ben", "mine"),
            )
        });
        std::thread::sleep(Duration::from_millis(200));
        log.stall.store(false, SeqCst);
        (first.join().unwrap(), second.join().unwrap())
    });
    assert!(
        matches!(first, Err(DomainError::Unavailable(_))),
        "{first:?}"
    );
    second.expect("the address was free: the write that took it failed");
    assert_eq!(rows(&url).len(), before + 1);
    let dal = recipes.snapshot().recipe(&slug("dal")).unwrap();
    assert_eq!(dal.content.title(), "Ben's dal");
}
