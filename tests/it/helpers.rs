//! Stores with a small, recipe-shaped schema for the tests, and comparisons.

use forkful::store::schema::attribute_map;
use forkful::store::{
    Cardinality, Components, Datom, EntityMap, Index, Store, Transaction, Unique, ValueType,
};

/// `(ident, type, cardinality, extra)` where extra is `unique-identity`,
/// `unique-value`, `component`, `index` or empty.
const TEST_SCHEMA: &[(&str, ValueType, Cardinality, &str)] = &[
    (
        ":recipe/slug",
        ValueType::String,
        Cardinality::One,
        "unique-identity",
    ),
    (":recipe/title", ValueType::String, Cardinality::One, ""),
    (":recipe/serves", ValueType::Long, Cardinality::One, ""),
    (":recipe/rating", ValueType::Double, Cardinality::One, ""),
    (
        ":recipe/vegetarian",
        ValueType::Boolean,
        Cardinality::One,
        "",
    ),
    (
        ":recipe/created",
        ValueType::Instant,
        Cardinality::One,
        "index",
    ),
    (":recipe/kind", ValueType::Keyword, Cardinality::One, ""),
    (
        ":recipe/uuid",
        ValueType::Uuid,
        Cardinality::One,
        "unique-value",
    ),
    (":recipe/tags", ValueType::String, Cardinality::Many, ""),
    (
        ":recipe/ingredients",
        ValueType::Ref,
        Cardinality::Many,
        "component",
    ),
    (":recipe/forked-from", ValueType::Ref, Cardinality::One, ""),
    (":recipe/related", ValueType::Ref, Cardinality::Many, ""),
    (":ingredient/item", ValueType::String, Cardinality::One, ""),
    (
        ":ingredient/position",
        ValueType::Long,
        Cardinality::One,
        "",
    ),
    (":tx/note", ValueType::String, Cardinality::One, ""),
];

/// The schema as one transaction.
pub fn schema_tx() -> Transaction {
    let mut tx = Transaction::new();
    for (ident, value_type, cardinality, extra) in TEST_SCHEMA {
        let unique = match *extra {
            "unique-identity" => Some(Unique::Identity),
            "unique-value" => Some(Unique::Value),
            _ => None,
        };
        let mut map = attribute_map(ident, *value_type, *cardinality, unique);
        map = match *extra {
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
