//! Database values in time: as-of, since, history, and pinned readers.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

use forkful::store::{kw, Components, Index, Transaction, Value};

use crate::helpers::{add_recipe, store};

#[test]
fn as_of_reads_the_database_as_it_was() {
    let store = store();
    let id = add_recipe(&store, "dal", "Dal");
    let first = store.db().basis();
    let mut tx = Transaction::new();
    tx.add(id, ":recipe/title", "Dal tadka");
    let second = store.transact(&tx).unwrap().basis_after;
    let mut tx = Transaction::new();
    tx.add(id, ":recipe/title", "Dal makhani");
    store.transact(&tx).unwrap();
    let db = store.db();
    let title = |db: &forkful::store::Db| db.entity(id).unwrap().get(&kw(":recipe/title")).cloned();
    assert_eq!(title(&db.as_of(first)), Some(Value::from("Dal")));
    assert_eq!(title(&db.as_of(second)), Some(Value::from("Dal tadka")));
    assert_eq!(
        title(&db.as_of(second - 1)),
        Some(Value::from("Dal")),
        "between transactions"
    );
    assert_eq!(title(&db), Some(Value::from("Dal makhani")));
    assert_eq!(title(&db.as_of(first - 1)), None, "before it was made");
    assert_eq!(
        db.as_of(u64::MAX).basis(),
        db.basis(),
        "as_of never reaches past the basis"
    );
}

#[test]
fn a_reader_a_moment_behind_a_write_reads_the_entity_as_it_was_from_the_cache() {
    let store = store();
    let id = add_recipe(&store, "dal", "Dal");
    let title = |db: &forkful::store::Db| db.entity(id).unwrap().get(&kw(":recipe/title")).cloned();
    // Read by two readers, the entity is kept in the entity cache.
    let cache_it = || {
        for _ in 0..2 {
            title(&store.db());
        }
    };
    let retitle = |to: &str| {
        let mut tx = Transaction::new();
        tx.add(id, ":recipe/title", to);
        store.transact(&tx).unwrap();
    };
    cache_it();
    let behind = store.db();
    retitle("Dal tadka");
    // Behind the write: answered from the state the write replaced, as an
    // entity the witness can vouch for, not from the datoms' history (a
    // range it cannot).
    let witnessed = behind.witnessed();
    assert_eq!(title(&witnessed), Some(Value::from("Dal")));
    let read = witnessed.dependencies().unwrap();
    assert!(!read.ranged, "read from the datoms");
    assert!(witnessed.still_holds(&read).unwrap());
    assert!(!store.db().still_holds(&read).unwrap(), "changed since");
    assert_eq!(title(&behind.uncached()), Some(Value::from("Dal")));
    assert_eq!(title(&store.db()), Some(Value::from("Dal tadka")));

    // Two writes behind: the state kept is the one the second write
    // replaced, which did not hold yet at that basis.
    cache_it();
    let one_behind = store.db();
    retitle("Dal makhani");
    let witnessed = behind.witnessed();
    assert_eq!(title(&witnessed), Some(Value::from("Dal")));
    assert!(witnessed.dependencies().unwrap().ranged, "from the datoms");
    assert_eq!(title(&one_behind), Some(Value::from("Dal tadka")));
    assert_eq!(title(&store.db()), Some(Value::from("Dal makhani")));
}

#[test]
fn readers_behind_a_busy_entity_read_it_as_it_was_at_their_basis() {
    let store = store();
    let id = add_recipe(&store, "dal", "Dal 0");
    let title =
        move |db: &forkful::store::Db| db.entity(id).unwrap().get(&kw(":recipe/title")).cloned();
    let done = Arc::new(AtomicBool::new(false));
    // Each reader holds its last three values, so that most of its reads
    // are a write or two behind the entity's newest change, and compares
    // what the caches answer with what the datoms say.
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (store, done) = (store.clone(), done.clone());
            thread::spawn(move || {
                let mut behind = std::collections::VecDeque::new();
                let mut checked = 0;
                while !done.load(Ordering::Acquire) {
                    behind.push_back(store.db());
                    if behind.len() > 3 {
                        behind.pop_front();
                    }
                    for db in &behind {
                        let at = db.basis();
                        assert_eq!(title(db), title(&db.uncached()), "at basis {at}");
                        checked += 1;
                    }
                }
                checked
            })
        })
        .collect();
    for i in 1..=200 {
        let mut tx = Transaction::new();
        tx.add(id, ":recipe/title", format!("Dal {i}").as_str());
        store.transact(&tx).unwrap();
    }
    done.store(true, Ordering::Release);
    for reader in readers {
        assert!(reader.join().unwrap() > 0);
    }
    assert_eq!(title(&store.db()), Some(Value::from("Dal 200")));
}

#[test]
fn since_shows_only_facts_asserted_after_a_basis() {
    let store = store();
    let id = add_recipe(&store, "dal", "Dal");
    let t = store.db().basis();
    let mut tx = Transaction::new();
    tx.add(id, ":recipe/serves", 4i64);
    store.transact(&tx).unwrap();
    let since = store.db().since(t);
    let facts: Vec<_> = since
        .datoms(Index::Eavt, &Components::any().e(id))
        .map(|d| d.unwrap().v)
        .collect();
    assert_eq!(facts, [Value::Long(4)]);
}

#[test]
fn history_keeps_every_assertion_and_retraction_in_order() {
    let store = store();
    let id = add_recipe(&store, "dal", "Dal");
    for title in ["Dal tadka", "Dal"] {
        let mut tx = Transaction::new();
        tx.add(id, ":recipe/title", title);
        store.transact(&tx).unwrap();
    }
    let db = store.db();
    let title = db.attribute(&kw(":recipe/title")).unwrap().id;
    let mut history: Vec<_> = db
        .history()
        .datoms(Index::Eavt, &Components::any().e(id).a(title))
        .map(|d| d.unwrap())
        .collect();
    history.sort_by_key(|d| (d.tx, d.added));
    let story: Vec<_> = history
        .iter()
        .map(|d| (d.v.as_str().unwrap().to_owned(), d.added))
        .collect();
    assert_eq!(
        story,
        [
            ("Dal".to_owned(), true),
            ("Dal".to_owned(), false),
            ("Dal tadka".to_owned(), true),
            ("Dal tadka".to_owned(), false),
            ("Dal".to_owned(), true),
        ]
    );
}

#[test]
fn the_log_reads_transactions_in_order() {
    let store = store();
    let a = add_recipe(&store, "a", "A");
    let t = store.db().basis();
    add_recipe(&store, "b", "B");
    let db = store.db();
    let txs: Vec<u64> = db.log(t, db.basis()).map(|d| d.unwrap().tx).collect();
    assert!(txs.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(txs.first(), Some(&t));
    assert!(db.log(t, t).all(|d| d.unwrap().tx == t));
    assert!(db.log(t, t).any(|d| d.unwrap().e == a));
}

#[test]
fn a_pinned_database_never_sees_a_later_transaction_while_a_writer_runs() {
    let store = store();
    let id = add_recipe(&store, "counter", "0");
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (store, stop) = (store.clone(), stop.clone());
        thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) && n < 400 {
                n += 1;
                let mut tx = Transaction::new();
                tx.add(id, ":recipe/title", n.to_string())
                    .add(id, ":recipe/serves", n as i64)
                    .add(id, ":recipe/tags", format!("t{n}"));
                store.transact(&tx).unwrap();
                // What is acknowledged is what the next read sees, however
                // the readers fill the entity cache meanwhile.
                let now = store.db().entity(id).unwrap();
                assert_eq!(
                    now.get(&kw(":recipe/title")),
                    Some(&Value::from(n.to_string()))
                );
            }
            n
        })
    };
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let store = store.clone();
            thread::spawn(move || {
                let mut checks = 0;
                for _ in 0..150 {
                    let db = store.db();
                    let first = db.entity(id).unwrap();
                    // Consistent within the value: title, serves and the
                    // count of tags all come from one transaction.
                    let title: u64 = first
                        .get(&kw(":recipe/title"))
                        .unwrap()
                        .as_str()
                        .unwrap()
                        .parse()
                        .unwrap();
                    let serves = first
                        .get(&kw(":recipe/serves"))
                        .map_or(0, |v| v.as_long().unwrap() as u64);
                    assert_eq!(title, serves, "one db value mixes two transactions");
                    assert_eq!(first.get_all(&kw(":recipe/tags")).len() as u64, title);
                    thread::yield_now();
                    // Stable over time: the same value reads the same later.
                    assert_eq!(
                        db.entity(id).unwrap(),
                        first,
                        "a pinned db changed under a reader"
                    );
                    assert!(db.basis() <= store.db().basis());
                    checks += 1;
                }
                checks
            })
        })
        .collect();
    let checks: usize = readers.into_iter().map(|r| r.join().unwrap()).sum();
    stop.store(true, Ordering::Relaxed);
    let written = writer.join().unwrap();
    assert_eq!(checks, 450);
    assert!(written > 0);
    let last = store.db().entity(id).unwrap();
    assert_eq!(
        last.get(&kw(":recipe/title")),
        Some(&Value::from(written.to_string()))
    );
}

#[test]
fn concurrent_writers_share_flushes_and_every_acknowledged_write_is_there() {
    let store = store();
    let before = store.stats();
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let store = store.clone();
            thread::spawn(move || {
                (0..40)
                    .map(|i| add_recipe(&store, &format!("w{w}-{i}"), "Grouped"))
                    .collect::<Vec<u64>>()
            })
        })
        .collect();
    let ids: Vec<u64> = writers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    let after = store.stats();
    let transactions = after.transactions - before.transactions;
    let flushes = after.flushes - before.flushes;
    assert_eq!(transactions, 160);
    assert!(
        flushes < transactions,
        "{flushes} flushes for {transactions} transactions: no grouping"
    );
    let db = store.db();
    for id in ids {
        assert!(
            !db.entity(id).unwrap().is_empty(),
            "acknowledged recipe {id} is missing"
        );
    }
}

#[test]
fn range_reads_page_forward_and_backward_from_a_cursor() {
    let store = store();
    let titles = ["Apple", "Banana", "Cherry", "Date", "Elder"];
    let ids: Vec<u64> = titles
        .iter()
        .map(|t| add_recipe(&store, &t.to_lowercase(), t))
        .collect();
    // A retitled recipe moves: only its current title is in the range.
    let mut tx = Transaction::new();
    tx.add(ids[0], ":recipe/created", Value::Instant(5));
    store.transact(&tx).unwrap();
    let db = store.db();
    let slug = db.attribute(&kw(":recipe/slug")).unwrap().id;
    let within = Components::any().a(slug);
    let page = |after: Option<&Components>, reverse| -> Vec<String> {
        db.datoms_range(Index::Avet, &within, after, reverse)
            .map(|d| d.unwrap().v.as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        page(None, false),
        ["apple", "banana", "cherry", "date", "elder"]
    );
    assert_eq!(
        page(None, true),
        ["elder", "date", "cherry", "banana", "apple"]
    );
    let cherry = Components::any().a(slug).v("cherry").e(ids[2]);
    assert_eq!(page(Some(&cherry), false), ["date", "elder"]);
    assert_eq!(page(Some(&cherry), true), ["banana", "apple"]);
    // History is folded going backward too: a changed value shows once.
    let mut tx = Transaction::new();
    tx.add(ids[1], ":recipe/slug", "blueberry");
    store.transact(&tx).unwrap();
    let db = store.db();
    let backward: Vec<String> = db
        .datoms_range(Index::Avet, &within, None, true)
        .map(|d| d.unwrap().v.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(backward, ["elder", "date", "cherry", "blueberry", "apple"]);
    let starting: Vec<String> = db
        .text_prefix(slug, "b")
        .map(|d| d.unwrap().v.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(starting, ["blueberry"]);
    let title = db.attribute(&kw(":recipe/title")).unwrap().id;
    let both: Vec<u64> = db
        .entity_attributes(ids[2], slug, title)
        .map(|d| d.unwrap().a)
        .collect();
    assert_eq!(
        both,
        [slug, title],
        "slug and title are installed side by side"
    );
}

mod current_entity_index {
    use forkful::store::{kw, Components, Index, Transaction, Value};
    use proptest::prelude::*;

    use crate::helpers::{add_recipe, store, RecipeEdit};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        #[test]
        fn entity_reads_from_the_index_equal_reads_from_the_datoms_at_every_basis(
            ops in prop::collection::vec(RecipeEdit::any(3), 1..25),
        ) {
            let store = store();
            let ids: Vec<u64> = (0..3).map(|i| add_recipe(&store, &format!("r{i}"), "Start")).collect();
            let mut bases = vec![store.db().basis()];
            for op in ops {
                let mut tx = Transaction::new();
                op.add_to(&mut tx, &ids);
                store.transact(&tx).unwrap();
                bases.push(store.db().basis());
            }
            let latest = store.db();
            let serves = latest.attribute(&kw(":recipe/serves")).unwrap().id;
            for basis in bases {
                let db = latest.as_of(basis);
                for &e in &ids {
                    prop_assert_eq!(db.entity(e).unwrap(), db.uncached().entity(e).unwrap());
                    let cached: Vec<Value> = db.values(e, serves).unwrap();
                    prop_assert_eq!(cached, db.uncached().values(e, serves).unwrap());
                    let one = db.datoms(Index::Eavt, &Components::any().e(e).a(serves).v(2i64)).count();
                    prop_assert_eq!(one, db.uncached().datoms(Index::Eavt, &Components::any().e(e).a(serves).v(2i64)).count());
                }
            }
        }
    }

    #[derive(Debug, Clone)]
    enum RefOp {
        Fork(usize, usize),
        Unfork(usize),
        RetractEntity(usize),
        Read,
    }

    fn ref_op() -> impl Strategy<Value = RefOp> {
        prop_oneof![
            (0..4usize, 0..4usize).prop_map(|(c, p)| RefOp::Fork(c, p)),
            (0..4usize).prop_map(RefOp::Unfork),
            (0..4usize).prop_map(RefOp::RetractEntity),
            Just(RefOp::Read),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        #[test]
        fn referrers_from_the_cache_equal_a_vaet_scan_at_every_basis(
            ops in prop::collection::vec(ref_op(), 1..25),
        ) {
            let store = store();
            let ids: Vec<u64> = (0..4).map(|i| add_recipe(&store, &format!("r{i}"), "Start")).collect();
            let forked_from = store.db().attribute(&kw(":recipe/forked-from")).unwrap().id;
            let mut bases = vec![store.db().basis()];
            let check = |db: &forkful::store::Db| -> Result<(), TestCaseError> {
                for &p in &ids {
                    let scanned: Vec<u64> = db
                        .uncached()
                        .datoms(Index::Vaet, &Components::any().v(Value::Ref(p)).a(forked_from))
                        .map(|d| d.unwrap().e)
                        .collect();
                    prop_assert_eq!(db.referrers(forked_from, p).unwrap().to_vec(), scanned);
                }
                Ok(())
            };
            for op in ops {
                let mut tx = Transaction::new();
                match op {
                    RefOp::Fork(c, p) => {
                        tx.add(ids[c], ":recipe/forked-from", forkful::store::TxValue::Entity(forkful::store::EntityRef::Id(ids[p])));
                    }
                    RefOp::Unfork(c) => {
                        tx.retract_all(ids[c], ":recipe/forked-from");
                    }
                    RefOp::RetractEntity(e) => {
                        tx.retract_entity(ids[e]);
                    }
                    RefOp::Read => {
                        // Reads between writes fill the cache at this basis.
                        check(&store.db())?;
                        continue;
                    }
                };
                if store.transact(&tx).is_ok() {
                    bases.push(store.db().basis());
                }
            }
            let latest = store.db();
            for basis in bases.into_iter().rev() {
                check(&latest.as_of(basis))?;
            }
            check(&latest)?;
        }
    }

    #[derive(Debug, Clone)]
    enum OrderOp {
        Created(usize, i64),
        Uncreate(usize),
        RetractEntity(usize),
        Read,
    }

    fn order_op() -> impl Strategy<Value = OrderOp> {
        prop_oneof![
            (0..5usize, 0..4i64).prop_map(|(e, n)| OrderOp::Created(e, n)),
            (0..5usize).prop_map(OrderOp::Uncreate),
            (0..5usize).prop_map(OrderOp::RetractEntity),
            Just(OrderOp::Read),
        ]
    }

    /// Pages of `size` through attribute `a`'s AVET order, or through one
    /// value's run within it, by keyset cursor, forward or backward: the
    /// entity ids, as a catalog (or a tag's page) reads them.
    fn pages(
        db: &forkful::store::Db,
        a: u64,
        value: Option<&Value>,
        reverse: bool,
        size: usize,
    ) -> Vec<u64> {
        let within = match value {
            Some(v) => Components::any().a(a).v(v.clone()),
            None => Components::any().a(a),
        };
        let mut out = Vec::new();
        let mut cursor: Option<Components> = None;
        loop {
            let page: Vec<forkful::store::Datom> = db
                .datoms_range(Index::Avet, &within, cursor.as_ref(), reverse)
                .take(size)
                .map(Result::unwrap)
                .collect();
            let Some(last) = page.last() else { break out };
            cursor = Some(Components::any().a(a).v(last.v.clone()).e(last.e));
            out.extend(page.iter().map(|d| d.e));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        #[test]
        fn ordered_reads_and_value_counts_from_memory_equal_reads_from_sled_at_every_basis(
            ops in prop::collection::vec(order_op(), 1..25),
        ) {
            let store = store();
            let ids: Vec<u64> = (0..5).map(|i| add_recipe(&store, &format!("r{i}"), "Start")).collect();
            let created = store.db().attribute(&kw(":recipe/created")).unwrap().id;
            let check = |db: &forkful::store::Db| -> Result<(), TestCaseError> {
                // The whole attribute, then each value's run (one no
                // entity holds included).
                let values: Vec<Option<Value>> = std::iter::once(None)
                    .chain((0..5).map(|n| Some(Value::Instant(1_000 * n))))
                    .collect();
                for value in &values {
                    for reverse in [false, true] {
                        for size in [1, 2, 100] {
                            prop_assert_eq!(
                                pages(db, created, value.as_ref(), reverse, size),
                                pages(&db.uncached(), created, value.as_ref(), reverse, size),
                                "{:?} reverse {} size {} at {}", value, reverse, size, db.basis()
                            );
                        }
                    }
                    // A value's count by binary search, where the order
                    // cache serves this value, equals a count over sled.
                    if let Some(v) = value {
                        if let Some(counted) = db.ordered_count(created, v) {
                            let within = Components::any().a(created).v(v.clone());
                            let scanned = db
                                .uncached()
                                .datoms_range(Index::Avet, &within, None, false)
                                .count();
                            prop_assert_eq!(counted, scanned, "{:?} at {}", v, db.basis());
                        }
                    }
                }
                // Distinct values and their counts, by binary search in
                // memory, equal a count over sled's keys.
                prop_assert_eq!(
                    db.value_counts(created).unwrap(),
                    db.uncached().value_counts(created).unwrap()
                );
                Ok(())
            };
            let mut bases = vec![store.db().basis()];
            for op in ops {
                let mut tx = Transaction::new();
                match op {
                    OrderOp::Created(e, n) => {
                        tx.add(ids[e], ":recipe/created", Value::Instant(1_000 * n));
                    }
                    OrderOp::Uncreate(e) => {
                        tx.retract_all(ids[e], ":recipe/created");
                    }
                    OrderOp::RetractEntity(e) => {
                        tx.retract_entity(ids[e]);
                    }
                    OrderOp::Read => {
                        check(&store.db())?;
                        continue;
                    }
                };
                if store.transact(&tx).is_ok() {
                    bases.push(store.db().basis());
                }
            }
            let latest = store.db();
            check(&latest)?;
            for basis in bases.into_iter().rev() {
                check(&latest.as_of(basis))?;
            }
        }
    }
}

/// Two reader threads run `check` on the newest database value, again and
/// again, while `write` runs on this one; each must have checked at least
/// once.
fn check_while_writing(
    store: &forkful::store::Store,
    check: impl Fn(&forkful::store::Db) + Clone + Send + 'static,
    write: impl FnOnce(),
) {
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (store, done, check) = (store.clone(), done.clone(), check.clone());
            thread::spawn(move || {
                let mut checked = 0;
                while !done.load(Ordering::Acquire) {
                    check(&store.db());
                    checked += 1;
                }
                checked
            })
        })
        .collect();
    write();
    done.store(true, Ordering::Release);
    for reader in readers {
        assert!(reader.join().unwrap() > 0);
    }
}

/// How many entities `db` says refer to `target` through `a` (the
/// referrer cache, its targets kept), and how many a scan of VAET finds.
fn referrers_cached_and_scanned(db: &forkful::store::Db, a: u64, target: u64) -> (usize, usize) {
    let cached = db.referrers(a, target).unwrap().len();
    let scanned = db
        .uncached()
        .datoms(Index::Vaet, &Components::any().v(Value::Ref(target)).a(a))
        .count();
    (cached, scanned)
}

#[test]
fn readers_counting_referrers_while_a_writer_forks_see_exactly_their_basis() {
    let store = store();
    let parent = add_recipe(&store, "parent", "Parent");
    let forked_from = store.db().attribute(&kw(":recipe/forked-from")).unwrap().id;
    let check = move |db: &forkful::store::Db| {
        let (cached, scanned) = referrers_cached_and_scanned(db, forked_from, parent);
        assert_eq!(cached, scanned, "at basis {}", db.basis());
    };
    check_while_writing(&store, check, || {
        for i in 0..40 {
            crate::helpers::add_fork(&store, &format!("fork-{i}"), "Fork", parent);
        }
    });
    assert_eq!(store.db().referrers(forked_from, parent).unwrap().len(), 40);
}

/// Readers asking of a recipe with no forks yet, while a writer forks it
/// and others: the answer "none" comes from the attribute's targets
/// (kept whole once read), never stale for a basis that has a fork.
#[test]
fn readers_asking_of_a_recipe_not_yet_forked_see_exactly_their_basis() {
    let store = store();
    let others: Vec<u64> = (0..3)
        .map(|i| add_recipe(&store, &format!("other-{i}"), "Other"))
        .collect();
    let late = add_recipe(&store, "late", "Late");
    let never_asked = add_recipe(&store, "never-asked", "Never asked");
    crate::helpers::add_fork(&store, "early-fork", "Fork", others[0]);
    let forked_from = store.db().attribute(&kw(":recipe/forked-from")).unwrap().id;
    let (one, two) = (others[1], others[2]);
    let check = move |db: &forkful::store::Db| {
        for target in [late, one, two] {
            let (cached, scanned) = referrers_cached_and_scanned(db, forked_from, target);
            assert_eq!(cached, scanned, "{target} at basis {}", db.basis());
        }
    };
    check_while_writing(&store, check, || {
        for i in 0..20 {
            let parent = if i % 2 == 0 { late } else { others[1] };
            crate::helpers::add_fork(&store, &format!("fork-{i}"), "Fork", parent);
        }
    });
    assert_eq!(store.db().referrers(forked_from, late).unwrap().len(), 10);
    // Asked of a recipe no one asked of before, that has none: answered
    // with no read, from the targets kept; one with forks no transaction
    // touched since, from the lists read with them.
    let db = store.db();
    let before = db.reads_so_far();
    assert!(db.referrers(forked_from, never_asked).unwrap().is_empty());
    assert_eq!(db.reads_so_far(), before, "answered from the targets kept");
    assert_eq!(db.referrers(forked_from, others[0]).unwrap().len(), 1);
    assert_eq!(db.reads_so_far(), before, "answered from the lists kept");
    // A fork made since: its parent's list is read again.
    crate::helpers::add_fork(&store, "late-fork", "Fork", others[0]);
    let db = store.db();
    let before = db.reads_so_far();
    assert_eq!(db.referrers(forked_from, others[0]).unwrap().len(), 2);
    assert!(db.reads_so_far() > before, "touched since: read again");
}

#[test]
fn a_reopened_store_keeps_referrers_in_memory_after_the_first_read() {
    let dir = tempfile::tempdir().unwrap();
    let parent = {
        let store = forkful::store::Store::open(dir.path()).unwrap();
        store.transact(&crate::helpers::schema_tx()).unwrap();
        let parent = add_recipe(&store, "parent", "Parent");
        crate::helpers::add_fork(&store, "fork", "Fork", parent);
        parent
    };
    let store = forkful::store::Store::open(dir.path()).unwrap();
    let db = store.db();
    let forked_from = db.attribute(&kw(":recipe/forked-from")).unwrap().id;
    assert_eq!(db.referrers(forked_from, parent).unwrap().len(), 1);
    let before = db.reads_so_far();
    assert_eq!(db.referrers(forked_from, parent).unwrap().len(), 1);
    assert_eq!(db.reads_so_far(), before, "the second read is the cache's");
}

#[test]
fn readers_paging_an_order_while_a_writer_adds_see_exactly_their_basis() {
    let store = store();
    let created = store.db().attribute(&kw(":recipe/created")).unwrap().id;
    let check = move |db: &forkful::store::Db| {
        let ids = |db: &forkful::store::Db| -> Vec<u64> {
            db.datoms_range(Index::Avet, &Components::any().a(created), None, true)
                .take(10)
                .map(|d| d.unwrap().e)
                .collect()
        };
        assert_eq!(ids(db), ids(&db.uncached()), "at basis {}", db.basis());
    };
    check_while_writing(&store, check, || {
        for i in 0..40 {
            let id = add_recipe(&store, &format!("r{i}"), "R");
            let mut tx = Transaction::new();
            tx.add(id, ":recipe/created", Value::Instant(i * 1_000));
            store.transact(&tx).unwrap();
        }
    });
}

#[test]
fn readers_finding_a_recipe_by_slug_in_the_order_see_exactly_their_basis() {
    let store = store();
    let slug = store.db().attribute(&kw(":recipe/slug")).unwrap().id;
    let first = add_recipe(&store, "first", "First");
    let check = move |db: &forkful::store::Db| {
        // Filled at the newest basis (as a server's start fills it), then
        // asked of by readers at every basis after.
        db.ordered_len(slug);
        for name in ["first", "renamed", "r3", "r9", "never"] {
            let v = Value::from(name);
            assert_eq!(
                db.entity_with(slug, &v).unwrap(),
                db.uncached().entity_with(slug, &v).unwrap(),
                "{name} at basis {}",
                db.basis()
            );
        }
    };
    check_while_writing(&store, check, || {
        for i in 0..12 {
            add_recipe(&store, &format!("r{i}"), "R");
            if i == 6 {
                let mut tx = Transaction::new();
                tx.add(first, ":recipe/slug", "renamed");
                store.transact(&tx).unwrap();
            }
        }
    });
    let db = store.db();
    assert_eq!(db.ordered_len(slug), Some(13), "the order is kept");
    assert_eq!(
        db.entity_with(slug, &Value::from("renamed")).unwrap(),
        Some(first)
    );
    assert_eq!(db.entity_with(slug, &Value::from("first")).unwrap(), None);
}

/// An attribute with more facts than an order may hold is read whole once,
/// found too large, and not read whole again: each later reader pages from
/// sled at once, and its pages equal those of a store that keeps orders.
#[test]
fn an_attribute_too_large_for_the_order_cache_is_not_read_whole_twice() {
    use forkful::store::{Store, StoreConfig};
    let mut config = StoreConfig::temporary();
    config.cached_entities = 3;
    let small = Store::open_with(config).expect("temporary store");
    small
        .transact(&crate::helpers::schema_tx())
        .expect("schema installs");
    let roomy = store();
    for i in 0..5 {
        for store in [&small, &roomy] {
            add_recipe(store, &format!("r{i}"), &format!("Title {}", 4 - i));
        }
    }
    let slug = |store: &Store| store.db().attribute(&kw(":recipe/slug")).unwrap().id;
    // Index reads made by one call (the counter is the store's).
    let reads_of = |db: &forkful::store::Db, a: u64| {
        let before = db.reads_so_far();
        let len = db.ordered_len(a);
        (len, db.reads_so_far() - before)
    };
    let (len, reads) = reads_of(&small.db(), slug(&small));
    assert_eq!(len, None, "five slugs, room for three");
    assert_eq!(reads, 1, "the first reader reads the slugs once");
    let (len, reads) = reads_of(&small.db(), slug(&small));
    assert_eq!(len, None);
    assert_eq!(reads, 0, "a later reader does not read them again");
    // Slugs in AVET order, read from sled and from the order cache.
    let slugs = |db: &forkful::store::Db, a: u64| -> Vec<Value> {
        db.datoms_range(Index::Avet, &Components::any().a(a), None, false)
            .map(|d| d.unwrap().v)
            .collect()
    };
    assert_eq!(
        slugs(&small.db(), slug(&small)),
        slugs(&roomy.db(), slug(&roomy))
    );
    assert_eq!(roomy.db().ordered_len(slug(&roomy)), Some(5));
}
