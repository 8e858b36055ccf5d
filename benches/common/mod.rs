//! The one harness every bench shares: the criterion config and seeded stores.
//!
//! Each bench file says `mod common;` and builds its groups with
//! `config = common::criterion()`, so every bench is profiled the same way and
//! its figures are taken with the same warm-up and measurement times.
//!
//! The seeded store is shaped like the site's catalog rather than like a
//! micro-benchmark: a ~2 KB Markdown summary per recipe, ordered ingredient and
//! step components, tags, and short fork chains. Index keys carry their values,
//! so the sizes here are what a seek, a scan and a write actually pay for.

// Compiled into each bench binary on its own, and no one bench uses every
// helper; without this, clippy's `-D warnings` fails the benches that don't.
#![allow(dead_code)]

use std::time::Duration;

mod alloc;
mod catalogs;

// Not every bench uses every helper (see the `allow(dead_code)` above).
#[allow(unused_imports)]
pub(crate) use alloc::{allocations, report_allocations, Allocations};
#[allow(unused_imports)]
pub(crate) use catalogs::{deepest, demo, stored_catalog, synthetic_catalog};

use criterion::Criterion;
use forkful::store::attribute_map;
use forkful::store::{
    Cardinality, EntityId, EntityMap, EntityRef, Store, Transaction, Unique, ValueType,
};
use pprof::criterion::{Output, PProfProfiler};

/// Criterion with pprof attached. `cargo bench --bench NAME -- --profile-time 10`
/// then writes `target/criterion/<group>/<bench>/profile/flamegraph.svg`
/// instead of measuring. The times are short so that a whole bench file runs in
/// well under two minutes on a two-core machine; the store's read paths are
/// microseconds, so a few seconds still give criterion thousands of iterations
/// per sample set. Criterion calls a change "within noise" below 5%, not its
/// default 1%: from one run to the next on that machine, medians move by more
/// than that with nothing changed (see `docs/BENCHMARKING.md`).
pub(crate) fn criterion() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50)
        .noise_threshold(0.05)
        .with_profiler(PProfProfiler::new(100, Output::Flamegraph(None)))
}

/// A temporary store with the recipe schema installed and nothing else.
///
/// Temporary stores live in `/dev/shm` (sled's choice on Linux), so a
/// transaction's flush is real but its fsync costs next to nothing: write
/// figures from these stores leave out the disk.
pub(crate) fn schema_store() -> Store {
    let store = Store::temporary().expect("temporary store");
    // An attribute cannot be used in the transaction that installs it.
    store.transact(&recipe_schema()).expect("recipe schema");
    store
}

/// A store of `n` recipes (see `recipe`), and their ids in seeding order.
pub(crate) struct Seeded {
    pub store: Store,
    pub recipes: Vec<EntityId>,
}

/// How many recipes go into one seeding transaction: few enough to keep each
/// transaction's working set small, many enough that seeding 1,000 recipes
/// does not wait on 1,000 flushes. A multiple of `FORK_CHAIN`, so that every
/// fork's parent is in its own transaction.
const SEED_BATCH: usize = 100;

/// Recipes come in chains of this many: the first is an original and each of
/// the others forks the one before it.
const FORK_CHAIN: usize = 4;

/// A temporary store holding `n` recipes.
pub(crate) fn seeded_store(n: usize) -> Seeded {
    let store = schema_store();
    let mut recipes = Vec::with_capacity(n);
    for start in (0..n).step_by(SEED_BATCH) {
        let batch = start..n.min(start + SEED_BATCH);
        let mut tx = Transaction::new();
        for i in batch.clone() {
            let mut map = recipe(i);
            if i % FORK_CHAIN != 0 {
                map = map.with(":recipe/forked-from", EntityRef::temp(tempid(i - 1)));
            }
            tx.map(map);
        }
        tx.tx_attr(":tx/note", "seed");
        let report = store.transact(&tx).expect("seed transaction");
        recipes.extend(batch.map(|i| report.tempid(&tempid(i)).expect("seeded recipe")));
    }
    Seeded { store, recipes }
}

fn tempid(i: usize) -> String {
    format!("r{i}")
}

/// The unique slug of seeded recipe `i`.
pub(crate) fn slug(i: usize) -> String {
    format!("recipe-{i}")
}

const DISHES: [&str; 8] = [
    "Shakshuka",
    "Dal tadka",
    "Pasta e ceci",
    "Bibimbap",
    "Shepherd's pie",
    "Pho ga",
    "Ratatouille",
    "Chilaquiles",
];

const TAGS: [&str; 12] = [
    "vegetarian",
    "vegan",
    "quick",
    "weeknight",
    "breakfast",
    "soup",
    "one-pot",
    "spicy",
    "baking",
    "gluten-free",
    "make-ahead",
    "freezer",
];

/// Seeded recipe `i`, under tempid `r{i}`: 8 ingredients (position, quantity,
/// unit, item, raw line) and 6 steps (position, text) as components, 3 tags,
/// and a ~2 KB summary; about 75 datoms.
pub(crate) fn recipe(i: usize) -> EntityMap {
    let dish = DISHES[i % DISHES.len()];
    let ingredients = (0..8).map(|k| {
        let (quantity, unit, item) = ingredient(i + k);
        EntityMap::anonymous()
            .with(":ingredient/position", k as i64)
            .with(":ingredient/quantity", quantity)
            .with(":ingredient/unit", unit)
            .with(":ingredient/item", item)
            .with(":ingredient/raw", format!("{quantity} {unit} {item}"))
    });
    let steps = (0..6).map(|k| {
        EntityMap::anonymous()
            .with(":step/position", k as i64)
            .with(
                ":step/text",
                format!(
                    "Step {}: cook the {} over medium heat for {} minutes, stirring now \
                     and then, until it smells right.",
                    k + 1,
                    dish.to_lowercase(),
                    5 + (i + k) % 10
                ),
            )
    });
    EntityMap::new(EntityRef::temp(tempid(i)))
        .with(":recipe/slug", slug(i))
        .with(":recipe/title", format!("{dish} no. {i}"))
        .with(":recipe/summary", summary(i, dish))
        .with(":recipe/yield", 2 + (i % 5) as i64)
        .with(":recipe/prep-minutes", 10 + (i % 20) as i64)
        .with(":recipe/cook-minutes", 15 + (i % 45) as i64)
        .with_many(
            ":recipe/tags",
            (0..3).map(|k| TAGS[(i * 3 + k) % TAGS.len()]),
        )
        .with_many(":recipe/ingredients", ingredients)
        .with_many(":recipe/steps", steps)
}

fn ingredient(k: usize) -> (f64, &'static str, &'static str) {
    const ITEMS: [(f64, &str, &str); 10] = [
        (2.0, "tbsp", "olive oil"),
        (1.0, "whole", "onion"),
        (3.0, "cloves", "garlic"),
        (400.0, "g", "chopped tomatoes"),
        (6.0, "whole", "eggs"),
        (1.5, "tsp", "ground cumin"),
        (0.5, "tsp", "chilli flakes"),
        (200.0, "g", "feta"),
        (1.0, "bunch", "coriander"),
        (250.0, "ml", "stock"),
    ];
    ITEMS[k % ITEMS.len()]
}

/// About 2 KB of Markdown, different for every recipe, the size of a real
/// summary: long enough that carrying it in index keys is visible in a profile.
pub(crate) fn summary(i: usize, dish: &str) -> String {
    let mut text = format!("# {dish} no. {i}\n\n");
    let mut paragraph = 0;
    while text.len() < 2048 {
        text.push_str(&format!(
            "Paragraph {paragraph} of recipe {i}. This is a **{dish}** for a weeknight: \
             the base goes in one pan, the _aromatics_ bloom in the oil, and nothing is \
             measured that a spoon cannot judge. See [the notes](#notes) for swaps.\n\n\
             - serve it hot\n- keep leftovers for two days\n\n"
        ));
        paragraph += 1;
    }
    text
}

/// The recipe attributes, as one schema transaction.
pub(crate) fn recipe_schema() -> Transaction {
    let attributes: [(&str, ValueType, Cardinality); 19] = [
        (":recipe/slug", ValueType::String, Cardinality::One),
        (":recipe/title", ValueType::String, Cardinality::One),
        (":recipe/summary", ValueType::String, Cardinality::One),
        (":recipe/yield", ValueType::Long, Cardinality::One),
        (":recipe/prep-minutes", ValueType::Long, Cardinality::One),
        (":recipe/cook-minutes", ValueType::Long, Cardinality::One),
        (":recipe/tags", ValueType::String, Cardinality::Many),
        (":recipe/ingredients", ValueType::Ref, Cardinality::Many),
        (":recipe/steps", ValueType::Ref, Cardinality::Many),
        (":recipe/forked-from", ValueType::Ref, Cardinality::One),
        (":ingredient/position", ValueType::Long, Cardinality::One),
        (":ingredient/quantity", ValueType::Double, Cardinality::One),
        (":ingredient/unit", ValueType::String, Cardinality::One),
        (":ingredient/item", ValueType::String, Cardinality::One),
        (":ingredient/raw", ValueType::String, Cardinality::One),
        (":step/position", ValueType::Long, Cardinality::One),
        (":step/text", ValueType::String, Cardinality::One),
        (":tx/note", ValueType::String, Cardinality::One),
        (":tx/author", ValueType::String, Cardinality::One),
    ];
    let mut tx = Transaction::new();
    for (ident, value_type, cardinality) in attributes {
        let unique = (ident == ":recipe/slug").then_some(Unique::Identity);
        let mut map = attribute_map(ident, value_type, cardinality, unique);
        if matches!(ident, ":recipe/ingredients" | ":recipe/steps") {
            map = map.with(":db/isComponent", true);
        }
        tx.map(map);
    }
    tx
}
