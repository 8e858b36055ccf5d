//! The domain's reads that pages are built from, on the demo seed and on a
//! 100,000-recipe synthetic catalog in one run, and the same lineage walk
//! done by SQLite with a recursive CTE on the same data.
//!
//! - `lineage`: the hand-written walk at depth 12 (the demo's deepest
//!   recipe; a depth-12 spine in the synthetic catalog) and at depth 1,000.
//!   Its cost must not grow with the catalog.
//! - `forks`: the direct forks of the demo's 21-fork recipe, with the slug
//!   and title a page lists for each.
//! - `history`: every version of the demo's 11-version shakshuka.
//! - `sqlite`: the depth-12 lineage by `WITH RECURSIVE` over an indexed
//!   table of the same 100,000 recipes, in memory.
//!
//! The 100,000 recipes are skeletons (a title, one ingredient, one step):
//! the walks read fork links, and a full catalog that size takes sled many
//! minutes to write. It is built on the first run and kept on disk.

mod common;

use std::hint::black_box;

use common::{demo, stored_catalog, synthetic_catalog};
use criterion::{criterion_group, criterion_main, Criterion};
use forkful::domain::{RecipeId, Recipes, Slug, Snapshot};
use forkful::seed::synthetic::Shape;
use forkful::store::{Components, Index};

const SYNTHETIC: usize = 100_000;

fn id(view: &Snapshot, slug: &str) -> RecipeId {
    view.recipe(&Slug::parse(slug).expect("slug"))
        .expect("recipe")
        .id
}

/// The synthetic catalog's fork links as an SQLite table, indexed by id.
fn sqlite_copy(recipes: &Recipes) -> rusqlite::Connection {
    let view = recipes.snapshot();
    let db = rusqlite::Connection::open_in_memory().expect("sqlite");
    db.execute_batch(
        "CREATE TABLE recipes (id INTEGER PRIMARY KEY, slug TEXT NOT NULL, forked_from INTEGER, forked_at_version INTEGER);",
    )
    .expect("schema");
    let attrs = recipes.attrs();
    let tx = db.unchecked_transaction().expect("transaction");
    {
        let mut insert = tx
            .prepare("INSERT INTO recipes (id, slug, forked_from, forked_at_version) VALUES (?1, ?2, ?3, ?4)")
            .expect("insert");
        for datom in recipes
            .store()
            .db()
            .datoms(Index::Aevt, &Components::any().a(attrs.slug))
        {
            let datom = datom.expect("datom");
            let lineage = view.lineage(RecipeId::new(datom.e)).expect("lineage");
            let parent = lineage.first();
            insert
                .execute(rusqlite::params![
                    datom.e as i64,
                    datom.v.as_str().expect("slug"),
                    parent.map(|a| a.id.entity() as i64),
                    parent.map(|a| a.forked_version.get()),
                ])
                .expect("row");
        }
    }
    tx.commit().expect("commit");
    db
}

const ANCESTORS_SQL: &str = "WITH RECURSIVE lineage(id, version, depth) AS (
       SELECT forked_from, forked_at_version, 1 FROM recipes WHERE id = ?1 AND forked_from IS NOT NULL
       UNION ALL
       SELECT r.forked_from, r.forked_at_version, l.depth + 1
         FROM recipes r JOIN lineage l ON r.id = l.id
        WHERE r.forked_from IS NOT NULL AND l.depth < 4096)
     SELECT id, version FROM lineage";

fn benches(c: &mut Criterion) {
    let demo = demo();
    let demo_view = demo.snapshot();
    let (big, big_ids) = stored_catalog(
        "synthetic-100k",
        Shape {
            recipes: SYNTHETIC,
            depth: 12,
            fanout: 3,
            rng: 1,
            skeleton: true,
        },
    );
    let big_view = big.snapshot();
    let (chain, chain_ids) = synthetic_catalog(Shape {
        recipes: 1_001,
        depth: 1_000,
        fanout: 1,
        rng: 1,
        skeleton: false,
    });
    let chain_view = chain.snapshot();

    let deepest_demo = id(&demo_view, "milk-bread-sourdough-tangzhong");
    assert_eq!(demo_view.lineage(deepest_demo).expect("walk").len(), 12);
    let deepest_big = RecipeId::new(big_ids[12]);
    assert_eq!(big_view.lineage(deepest_big).expect("walk").len(), 12);
    let deepest_chain = RecipeId::new(chain_ids[1_000]);
    assert_eq!(
        chain_view.lineage(deepest_chain).expect("walk").len(),
        1_000
    );

    let mut group = c.benchmark_group("domain/lineage");
    group.bench_function("depth_12/demo", |b| {
        b.iter(|| black_box(demo_view.lineage(black_box(deepest_demo))))
    });
    group.bench_function("depth_12/synthetic_100k", |b| {
        b.iter(|| black_box(big_view.lineage(black_box(deepest_big))))
    });
    group.bench_function("depth_1000/chain", |b| {
        b.iter(|| black_box(chain_view.lineage(black_box(deepest_chain))))
    });
    group.finish();

    let sqlite = sqlite_copy(&big);
    let mut statement = sqlite.prepare_cached(ANCESTORS_SQL).expect("statement");
    let by_sqlite = |id: RecipeId, statement: &mut rusqlite::CachedStatement| -> Vec<(i64, i64)> {
        statement
            .query_map([id.entity() as i64], |row| Ok((row.get(0)?, row.get(1)?)))
            .expect("query")
            .map(|r| r.expect("row"))
            .collect()
    };
    let walked: Vec<(i64, i64)> = big_view
        .lineage(deepest_big)
        .expect("walk")
        .iter()
        .map(|a| (a.id.entity() as i64, i64::from(a.forked_version.get())))
        .collect();
    assert_eq!(
        by_sqlite(deepest_big, &mut statement),
        walked,
        "SQLite and the walk agree"
    );
    let mut group = c.benchmark_group("domain/sqlite");
    group.bench_function("lineage_depth_12/synthetic_100k", |b| {
        b.iter(|| black_box(by_sqlite(black_box(deepest_big), &mut statement)))
    });
    group.finish();

    let pancakes = id(&demo_view, "buttermilk-pancakes");
    assert!(demo_view.forks(pancakes).expect("forks").len() >= 20);
    let shakshuka = id(&demo_view, "shakshuka");
    assert!(demo_view.versions(shakshuka).expect("versions").len() >= 10);
    let mut group = c.benchmark_group("domain/demo");
    group.bench_function("forks_of_21_fork_recipe", |b| {
        b.iter(|| {
            let forks = demo_view.forks(black_box(pancakes)).expect("forks");
            let listed: Vec<(String, String)> = forks
                .iter()
                .map(|f| {
                    (
                        demo_view.slug_of(*f).expect("slug"),
                        demo_view.title_of(*f).expect("title"),
                    )
                })
                .collect();
            black_box(listed)
        })
    });
    group.bench_function("history_of_11_version_recipe", |b| {
        b.iter(|| black_box(demo_view.versions(black_box(shakshuka)).expect("versions")))
    });
    group.finish();
}

criterion_group! {
    name = domain;
    config = common::criterion();
    targets = benches
}
criterion_main!(domain);
