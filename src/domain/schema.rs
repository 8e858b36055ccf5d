//! The attributes of recipes, their parts, users and transactions.
//!
//! Installed by `install` when a store is opened for the site: any attribute
//! missing from the store is transacted, so a store made by an older build
//! gains new attributes and one made by this build is left alone.

use crate::store::{kw, EntityMap, Store, StoreError, Transaction};

/// `(ident, type, cardinality, extra, doc)`; extra is `identity`, `index`,
/// `component` or empty.
const ATTRIBUTES: &[(&str, &str, &str, &str, &str)] = &[
    (
        ":recipe/slug",
        "string",
        "one",
        "identity",
        "The recipe's name in URLs; unique.",
    ),
    (
        ":recipe/title",
        "string",
        "one",
        "index",
        "The recipe's title; indexed for the catalog's title order.",
    ),
    (
        ":recipe/summary",
        "string",
        "one",
        "",
        "Markdown: what the dish is.",
    ),
    (":recipe/servings", "long", "one", "", "How many it serves."),
    (
        ":recipe/yield-text",
        "string",
        "one",
        "",
        "The yield as written: \"12 pancakes\".",
    ),
    (
        ":recipe/prep-minutes",
        "long",
        "one",
        "",
        "Preparation time in minutes.",
    ),
    (
        ":recipe/cook-minutes",
        "long",
        "one",
        "",
        "Cooking time in minutes.",
    ),
    (
        ":recipe/total-minutes",
        "long",
        "one",
        "",
        "Total time in minutes.",
    ),
    (
        ":recipe/ingredients",
        "ref",
        "many",
        "component",
        "The ingredient lines, ordered by :ingredient/position.",
    ),
    (
        ":recipe/steps",
        "ref",
        "many",
        "component",
        "The steps, ordered by :step/position.",
    ),
    (
        ":recipe/notes",
        "string",
        "one",
        "",
        "Markdown: tips, storage, variations.",
    ),
    (
        ":recipe/tags",
        "string",
        "many",
        "index",
        "Lower-case tags; indexed for tag pages.",
    ),
    (
        ":recipe/cuisine",
        "string",
        "one",
        "index",
        "Where the dish comes from.",
    ),
    (
        ":recipe/category",
        "string",
        "one",
        "index",
        "Breakfast, Main, Soup...",
    ),
    (":recipe/image", "string", "one", "", "An image URL."),
    (
        ":recipe/author",
        "ref",
        "one",
        "",
        "The user who first wrote the recipe.",
    ),
    (
        ":recipe/created-at",
        "instant",
        "one",
        "index",
        "When the recipe was first written.",
    ),
    (
        ":recipe/updated-at",
        "instant",
        "one",
        "index",
        "When its newest version was made: the catalog's recent order.",
    ),
    (
        ":recipe/version-count",
        "long",
        "one",
        "",
        "How many versions it has: kept by every write, so lists need not count history.",
    ),
    (
        ":recipe/retired",
        "boolean",
        "one",
        "",
        "Hidden from the catalog, still in its forks' lineage.",
    ),
    // The two fork attributes are installed one after the other, so their ids
    // are adjacent and the lineage walk reads both with one EAVT range read.
    (
        ":recipe/forked-from",
        "ref",
        "one",
        "",
        "The recipe this one was forked from.",
    ),
    (
        ":recipe/forked-at-version",
        "long",
        "one",
        "",
        "The parent's version number that was forked (1-based).",
    ),
    (
        ":recipe/forked-at",
        "ref",
        "one",
        "",
        "The parent's version that was forked, as its transaction.",
    ),
    (
        ":ingredient/position",
        "long",
        "one",
        "",
        "Order within the recipe, from 1.",
    ),
    (
        ":ingredient/line",
        "string",
        "one",
        "",
        "The line as the cook wrote it.",
    ),
    (
        ":ingredient/quantity",
        "double",
        "one",
        "",
        "The amount read from the line.",
    ),
    (
        ":ingredient/quantity-max",
        "double",
        "one",
        "",
        "The top of a range (2-3 cloves).",
    ),
    (
        ":ingredient/unit",
        "string",
        "one",
        "",
        "The canonical unit (tbsp, g, cup...).",
    ),
    (":ingredient/item", "string", "one", "", "What it is."),
    (
        ":ingredient/note",
        "string",
        "one",
        "",
        "After the comma: chopped, to taste...",
    ),
    (
        ":step/position",
        "long",
        "one",
        "",
        "Order within the recipe, from 1.",
    ),
    (":step/text", "string", "one", "", "Markdown: what to do."),
    (
        ":step/section",
        "string",
        "one",
        "",
        "The named part of the recipe the step belongs to.",
    ),
    (
        ":user/handle",
        "string",
        "one",
        "identity",
        "A user's unique handle.",
    ),
    (":user/name", "string", "one", "", "A user's display name."),
    (":tx/author", "ref", "one", "", "Who made a transaction."),
    (":tx/note", "string", "one", "", "Why: the version's note."),
    (
        ":recipe/terms",
        "string",
        "many",
        "index",
        "Search terms: the inverted index, kept in each recipe's own transactions.",
    ),
];

/// Installs every attribute the store does not have yet, in one transaction.
pub fn install(store: &Store) -> Result<(), StoreError> {
    install_at(store, None)
}

/// `install`, with the transaction's instant given (a seed with a past
/// history installs its schema just before its first version).
pub fn install_at(store: &Store, at: Option<i64>) -> Result<(), StoreError> {
    let db = store.db();
    let mut tx = Transaction::new();
    for (ident, value_type, cardinality, extra, doc) in ATTRIBUTES {
        if db.attribute(&kw(ident)).is_ok() {
            continue;
        }
        let mut map = EntityMap::anonymous()
            .with(":db/ident", kw(ident))
            .with(":db/valueType", kw(&format!(":db.type/{value_type}")))
            .with(
                ":db/cardinality",
                kw(&format!(":db.cardinality/{cardinality}")),
            )
            .with(":db/doc", *doc);
        map = match *extra {
            "identity" => map.with(":db/unique", kw(":db.unique/identity")),
            "index" => map.with(":db/index", true),
            "component" => map.with(":db/isComponent", true),
            _ => map,
        };
        tx.map(map);
    }
    // No :tx/note here: it may be among the attributes being installed, and
    // an attribute cannot be used in the transaction that installs it.
    if !tx.is_empty() {
        if let Some(at) = at {
            tx.tx_attr(":db/txInstant", crate::store::Value::Instant(at));
        }
        store.transact(&tx)?;
    }
    Ok(())
}
