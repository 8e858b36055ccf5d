//! Datalog against the direct index walk it must stay close to.
//!
//! The question: the ancestors of one recipe deep in a fork forest. The rule
//! (`ancestor`, recursive, seeded from the recipe) and a hand-written EAVT
//! walk answer it on forests of 1,000, 10,000 and 100,000 recipes, in one
//! run. The recipe and its lineage are the same in every forest (the first
//! family is built the same way each time; more recipes only add families),
//! so if either figure grows with the forest, it is reading what it should
//! not. A pair of clause orders shows the planner makes the written order
//! irrelevant.

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use forkful::store::attribute_map;
use forkful::store::{
    kw, Cardinality, EntityId, EntityMap, EntityRef, Store, Transaction, Unique, Value, ValueType,
};
use forkful::store::{Input, Query, DEFAULT_WORK_LIMIT};
use std::hint::black_box;

/// Recipes in one family (a tree grown from one original).
const FAMILY: usize = 100;
/// Recipes per seeding transaction: a multiple of `FAMILY`.
const BATCH: usize = 2_000;
const SIZES: [usize; 3] = [1_000, 10_000, 100_000];

const RULES: &str = r#"[[(ancestor ?r ?a) [?r :recipe/forked-from ?a]]
                        [(ancestor ?r ?a) [?r :recipe/forked-from ?p] (ancestor ?p ?a)]]"#;

/// The parent of member `i` (> 0) of a family: a deterministic pick among
/// the members before it, leaning to recent ones so that lineages run deep.
fn parent_in_family(i: usize) -> usize {
    let mixed = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 33;
    let back = 1 + (mixed % 3) as usize;
    i.saturating_sub(back)
}

/// A temporary store with `n` recipes in families of `FAMILY`, and the
/// deepest member of the first family.
fn forest(n: usize) -> (Store, EntityId, usize) {
    let store = Store::temporary().expect("temporary store");
    let mut schema = Transaction::new();
    schema
        .map(attribute_map(
            ":recipe/slug",
            ValueType::String,
            Cardinality::One,
            Some(Unique::Identity),
        ))
        .map(attribute_map(
            ":recipe/forked-from",
            ValueType::Ref,
            Cardinality::One,
            None,
        ));
    store.transact(&schema).expect("schema");
    let mut ids = Vec::with_capacity(n);
    for start in (0..n).step_by(BATCH) {
        let mut tx = Transaction::new();
        for i in start..n.min(start + BATCH) {
            let mut map = EntityMap::new(EntityRef::temp(format!("r{i}")))
                .with(":recipe/slug", format!("r{i}"));
            if i % FAMILY != 0 {
                let parent = i - i % FAMILY + parent_in_family(i % FAMILY);
                map = map.with(":recipe/forked-from", EntityRef::temp(format!("r{parent}")));
            }
            tx.map(map);
        }
        let report = store.transact(&tx).expect("forest batch");
        ids.extend(
            (start..n.min(start + BATCH)).map(|i| report.tempid(&format!("r{i}")).expect("seeded")),
        );
    }
    let depth = |i: usize| {
        let mut d = 0;
        let mut at = i;
        while at != 0 {
            at = parent_in_family(at);
            d += 1;
        }
        d
    };
    let deepest = (0..FAMILY).max_by_key(|&i| depth(i)).expect("a family");
    (store, ids[deepest], depth(deepest))
}

/// The ancestors by EAVT seeks, as the site's lineage walk does it.
fn walk(db: &forkful::store::Db, forked_from: EntityId, mut at: EntityId) -> Vec<EntityId> {
    let mut out = Vec::new();
    while let Some(Value::Ref(parent)) = db.value(at, forked_from).expect("seek") {
        assert!(!out.contains(&parent) && out.len() < 10_000, "a cycle");
        out.push(parent);
        at = parent;
    }
    out
}

fn ancestors(c: &mut Criterion) {
    let mut group = c.benchmark_group("query/ancestors");
    let query = Query::parse("[:find ?a :in $ % ?r :where (ancestor ?r ?a)]").expect("query");
    for n in SIZES {
        let (store, deep, depth) = forest(n);
        let db = store.db();
        let forked_from = db
            .attribute(&kw(":recipe/forked-from"))
            .expect("attribute")
            .id;
        let inputs = [
            Input::Db(db.clone()),
            Input::rules(RULES).expect("rules"),
            Input::Scalar(Value::Ref(deep)),
        ];
        let by_rule = query
            .run(&inputs, DEFAULT_WORK_LIMIT)
            .expect("rule")
            .rows
            .len();
        assert_eq!(by_rule, walk(&db, forked_from, deep).len());
        assert_eq!(by_rule, depth);
        group.bench_with_input(BenchmarkId::new("rule", n), &n, |b, _| {
            b.iter(|| black_box(query.run(&inputs, DEFAULT_WORK_LIMIT).expect("rule")))
        });
        group.bench_with_input(BenchmarkId::new("walk", n), &n, |b, _| {
            b.iter(|| black_box(walk(&db, forked_from, black_box(deep))))
        });
    }
    group.finish();
}

fn clause_order(c: &mut Criterion) {
    let mut group = c.benchmark_group("query/clause_order");
    let (store, _, _) = forest(10_000);
    let db = store.db();
    // The family of r57 (its parent's forks), written selective-first and
    // selective-last: without a planner the second scans every fork link.
    let orders = [
        (
            "selective_first",
            "[?r :recipe/slug ?s] [?r :recipe/forked-from ?p] [?sib :recipe/forked-from ?p]",
        ),
        (
            "selective_last",
            "[?sib :recipe/forked-from ?p] [?r :recipe/forked-from ?p] [?r :recipe/slug ?s]",
        ),
    ];
    for (name, clauses) in orders {
        let query =
            Query::parse(&format!("[:find ?sib :in $ ?s :where {clauses}]")).expect("query");
        let inputs = [Input::Db(db.clone()), Input::Scalar(Value::from("r57"))];
        group.bench_function(name, |b| {
            b.iter(|| black_box(query.run(&inputs, DEFAULT_WORK_LIMIT).expect("query")))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::criterion();
    targets = ancestors, clause_order
}
criterion_main!(benches);
