//! Stores with a small, recipe-shaped schema for the tests, and comparisons.

use forkful::store::{kw, Components, Datom, EntityMap, Index, Store, Transaction};

/// `(ident, type, cardinality, extra)` where extra is `unique-identity`,
/// `unique-value`, `component`, `index` or empty.
const TEST_SCHEMA: &[(&str, &str, &str, &str)] = &[
    (":recipe/slug", "string", "one", "unique-identity"),
    (":recipe/title", "string", "one", ""),
    (":recipe/serves", "long", "one", ""),
    (":recipe/rating", "double", "one", ""),
    (":recipe/vegetarian", "boolean", "one", ""),
    (":recipe/created", "instant", "one", "index"),
    (":recipe/kind", "keyword", "one", ""),
    (":recipe/uuid", "uuid", "one", "unique-value"),
    (":recipe/tags", "string", "many", ""),
    (":recipe/ingredients", "ref", "many", "component"),
    (":recipe/forked-from", "ref", "one", ""),
    (":recipe/related", "ref", "many", ""),
    (":ingredient/item", "string", "one", ""),
    (":ingredient/position", "long", "one", ""),
    (":tx/note", "string", "one", ""),
];

/// The schema as one transaction.
pub fn schema_tx() -> Transaction {
    let mut tx = Transaction::new();
    for (ident, value_type, cardinality, extra) in TEST_SCHEMA {
        let mut map = EntityMap::anonymous()
            .with(":db/ident", kw(ident))
            .with(":db/valueType", kw(&format!(":db.type/{value_type}")))
            .with(
                ":db/cardinality",
                kw(&format!(":db.cardinality/{cardinality}")),
            );
        map = match *extra {
            "unique-identity" => map.with(":db/unique", kw(":db.unique/identity")),
            "unique-value" => map.with(":db/unique", kw(":db.unique/value")),
            "component" => map.with(":db/isComponent", true),
            "index" => map.with(":db/index", true),
            _ => map,
        };
        tx.map(map);
    }
    tx
}

/// A temporary store with the test schema installed.
pub fn store() -> Store {
    let store = Store::temporary().expect("temporary store");
    store.transact(&schema_tx()).expect("schema installs");
    store
}

/// A recipe map with a slug, a title and two ingredients.
pub fn recipe(tempid: &str, slug: &str, title: &str) -> EntityMap {
    EntityMap::new(forkful::store::EntityRef::temp(tempid))
        .with(":recipe/slug", slug)
        .with(":recipe/title", title)
        .with_many(
            ":recipe/ingredients",
            [
                EntityMap::anonymous()
                    .with(":ingredient/item", "eggs")
                    .with(":ingredient/position", 1i64),
                EntityMap::anonymous()
                    .with(":ingredient/item", "tomatoes")
                    .with(":ingredient/position", 2i64),
            ],
        )
}

/// Transacts one recipe and returns its entity id.
pub fn add_recipe(store: &Store, slug: &str, title: &str) -> u64 {
    let mut tx = Transaction::new();
    tx.map(recipe("r", slug, title));
    store
        .transact(&tx)
        .expect("recipe transacts")
        .tempid("r")
        .expect("tempid resolves")
}

/// Transacts a recipe that forks `parent`, and returns its entity id.
pub fn add_fork(store: &Store, slug: &str, title: &str, parent: u64) -> u64 {
    let id = add_recipe(store, slug, title);
    let mut tx = Transaction::new();
    tx.add(
        id,
        ":recipe/forked-from",
        forkful::store::TxValue::Entity(forkful::store::EntityRef::Id(parent)),
    );
    store.transact(&tx).unwrap();
    id
}

/// Every key of every index, as datoms, with the basis: two stores with the
/// same `everything` hold the same facts at the same times.
pub fn everything(store: &Store) -> (u64, Vec<(Index, Datom)>) {
    let db = store.db().history();
    let mut all = Vec::new();
    for index in Index::ALL {
        if index == Index::Log {
            for d in db.log(0, db.basis()) {
                all.push((index, d.expect("log reads")));
            }
        } else {
            for d in db.datoms(index, &Components::any()) {
                all.push((index, d.expect("index reads")));
            }
        }
    }
    (db.basis(), all)
}
