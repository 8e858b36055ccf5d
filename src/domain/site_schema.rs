//! The attributes of recipes, their parts, users and transactions.
//!
//! Installed by `install` when a store is opened for the site: any attribute
//! missing from the store is transacted, so a store made by an older build
//! gains new attributes and one made by this build is left alone.

use crate::store::attribute_map;
use crate::store::{
    kw, Cardinality, Db, EntityId, Store, StoreError, TransactError, Transaction, Unique, ValueType,
};

/// `(ident, type, cardinality, extra, doc)`; extra is `identity`, `index`,
/// `component` or empty.
const ATTRIBUTES: &[(&str, ValueType, Cardinality, &str, &str)] = &[
    (
        ":recipe/slug",
        ValueType::String,
        Cardinality::One,
        "identity",
        "The recipe's name in URLs; unique.",
    ),
    (
        ":recipe/title",
        ValueType::String,
        Cardinality::One,
        "index",
        "The recipe's title; indexed for the catalog's title order.",
    ),
    (
        ":recipe/summary",
        ValueType::String,
        Cardinality::One,
        "",
        "Markdown: what the dish is.",
    ),
    (
        ":recipe/servings",
        ValueType::Long,
        Cardinality::One,
        "",
        "How many it serves.",
    ),
    (
        ":recipe/yield-text",
        ValueType::String,
        Cardinality::One,
        "",
        "The yield as written: \"12 pancakes\".",
    ),
    (
        ":recipe/prep-minutes",
        ValueType::Long,
        Cardinality::One,
        "",
        "Preparation time in minutes.",
    ),
    (
        ":recipe/cook-minutes",
        ValueType::Long,
        Cardinality::One,
        "",
        "Cooking time in minutes.",
    ),
    (
        ":recipe/total-minutes",
        ValueType::Long,
        Cardinality::One,
        "",
        "Total time in minutes.",
    ),
    (
        ":recipe/ingredients",
        ValueType::Ref,
        Cardinality::Many,
        "component",
        "The ingredient lines, ordered by :ingredient/position.",
    ),
    (
        ":recipe/steps",
        ValueType::Ref,
        Cardinality::Many,
        "component",
        "The steps, ordered by :step/position.",
    ),
    (
        ":recipe/notes",
        ValueType::String,
        Cardinality::One,
        "",
        "Markdown: tips, storage, variations.",
    ),
    (
        ":recipe/tags",
        ValueType::String,
        Cardinality::Many,
        "index",
        "Lower-case tags; indexed for tag pages.",
    ),
    (
        ":recipe/cuisine",
        ValueType::String,
        Cardinality::One,
        "index",
        "Where the dish comes from.",
    ),
    (
        ":recipe/category",
        ValueType::String,
        Cardinality::One,
        "index",
        "Breakfast, Main, Soup...",
    ),
    (
        ":recipe/image",
        ValueType::String,
        Cardinality::One,
        "",
        "An image URL.",
    ),
    (
        ":recipe/author",
        ValueType::Ref,
        Cardinality::One,
        "",
        "The user who first wrote the recipe.",
    ),
    (
        ":recipe/created-at",
        ValueType::Instant,
        Cardinality::One,
        "index",
        "When the recipe was first written.",
    ),
    (
        ":recipe/updated-at",
        ValueType::Instant,
        Cardinality::One,
        "index",
        "When its newest version was made: the catalog's recent order.",
    ),
    (
        ":recipe/version-count",
        ValueType::Long,
        Cardinality::One,
        "",
        "How many versions it has: kept by every write, so lists need not count history.",
    ),
    // Everything a catalog line shows, and whether to show it, lies between
    // :recipe/slug and :recipe/retired: one attribute range per recipe.
    (
        ":recipe/retired",
        ValueType::Boolean,
        Cardinality::One,
        "",
        "Hidden from the catalog, still in its forks' lineage.",
    ),
    // The two fork attributes are installed one after the other, so their ids
    // are adjacent and the lineage walk reads both with one EAVT range read.
    (
        ":recipe/forked-from",
        ValueType::Ref,
        Cardinality::One,
        "",
        "The recipe this one was forked from.",
    ),
    (
        ":recipe/forked-at-version",
        ValueType::Long,
        Cardinality::One,
        "",
        "The parent's version number that was forked (1-based).",
    ),
    (
        ":recipe/forked-at",
        ValueType::Ref,
        Cardinality::One,
        "",
        "The parent's version that was forked, as its transaction.",
    ),
    (
        ":ingredient/position",
        ValueType::Long,
        Cardinality::One,
        "",
        "Order within the recipe, from 1.",
    ),
    (
        ":ingredient/line",
        ValueType::String,
        Cardinality::One,
        "",
        "The line as the cook wrote it.",
    ),
    (
        ":ingredient/quantity",
        ValueType::Double,
        Cardinality::One,
        "",
        "The amount read from the line.",
    ),
    (
        ":ingredient/quantity-max",
        ValueType::Double,
        Cardinality::One,
        "",
        "The top of a range (2-3 cloves).",
    ),
    (
        ":ingredient/unit",
        ValueType::String,
        Cardinality::One,
        "",
        "The canonical unit (tbsp, g, cup...).",
    ),
    (
        ":ingredient/item",
        ValueType::String,
        Cardinality::One,
        "",
        "What it is.",
    ),
    (
        ":ingredient/note",
        ValueType::String,
        Cardinality::One,
        "",
        "After the comma: chopped, to taste...",
    ),
    (
        ":step/position",
        ValueType::Long,
        Cardinality::One,
        "",
        "Order within the recipe, from 1.",
    ),
    (
        ":step/text",
        ValueType::String,
        Cardinality::One,
        "",
        "Markdown: what to do.",
    ),
    (
        ":step/section",
        ValueType::String,
        Cardinality::One,
        "",
        "The named part of the recipe the step belongs to.",
    ),
    (
        ":user/handle",
        ValueType::String,
        Cardinality::One,
        "identity",
        "A user's unique handle.",
    ),
    (
        ":user/name",
        ValueType::String,
        Cardinality::One,
        "",
        "A user's display name.",
    ),
    (
        ":tx/author",
        ValueType::Ref,
        Cardinality::One,
        "",
        "Who made a transaction.",
    ),
    (
        ":tx/note",
        ValueType::String,
        Cardinality::One,
        "",
        "Why: the version's note.",
    ),
    (
        ":tx/change",
        ValueType::String,
        Cardinality::One,
        "",
        "What an edit or retirement changed, in a line (`title, 2 ingredients`), decided in the writer when the version is written so history never diffs to list it.",
    ),
    (
        ":recipe/picture",
        ValueType::String,
        Cardinality::One,
        "index",
        "The recipe's uploaded picture: the hash that names it in the pictures keyspace, stored there before any transaction names it; indexed so that a picture is served only while a version names it, and collected when none does.",
    ),
    (
        ":recipe/picture-alt",
        ValueType::String,
        Cardinality::One,
        "",
        "What the picture shows, in words.",
    ),
    (
        ":recipe/picture-width",
        ValueType::Long,
        Cardinality::One,
        "",
        "The picture's width in pixels, upright.",
    ),
    (
        ":recipe/picture-height",
        ValueType::Long,
        Cardinality::One,
        "",
        "The picture's height in pixels, upright.",
    ),
    (
        ":recipe/source-url",
        ValueType::String,
        Cardinality::One,
        "",
        "For a recipe brought in from another site: the page it was read from, where its lineage starts.",
    ),
    (
        ":recipe/source-name",
        ValueType::String,
        Cardinality::One,
        "",
        "The name of the site the recipe was brought in from.",
    ),
    (
        ":recipe/terms",
        ValueType::String,
        Cardinality::Many,
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
///
/// What is missing is decided inside the writer (`Store::transact_with`), on
/// the value the transaction applies to: two opens of one store at once
/// install each attribute once, the second finding them there, and waiting
/// until the first's install is durable (so published). Attributes are
/// never removed, so a published value that has them all settles it
/// without taking the writer.
pub fn install_at(store: &Store, at: Option<i64>) -> Result<(), StoreError> {
    if missing(&store.db(), at).is_empty() {
        return Ok(());
    }
    let installed = store.transact_with(|db| {
        let tx = missing(db, at);
        if tx.is_empty() {
            return Err(Install::Complete(db.basis()));
        }
        Ok((tx, ()))
    });
    match installed {
        Ok(_) => Ok(()),
        Err(Install::Complete(basis)) => Ok(store.wait_durable(basis)?),
        Err(Install::Refused(e)) => Err(e.into()),
    }
}

/// Why `install_at`'s transaction function wrote nothing.
enum Install {
    /// Every attribute was there already, as of this basis (which may not
    /// be durable yet: another open's install).
    Complete(EntityId),
    Refused(TransactError),
}

impl From<TransactError> for Install {
    fn from(e: TransactError) -> Install {
        Install::Refused(e)
    }
}

/// The transaction installing every attribute `db` lacks, at `at` if given;
/// empty if it lacks none.
fn missing(db: &Db, at: Option<i64>) -> Transaction {
    let mut tx = Transaction::new();
    for (ident, value_type, cardinality, extra, doc) in ATTRIBUTES {
        if let Ok(installed) = db.attribute(&kw(ident)) {
            // An attribute indexed since a store was made is indexed there
            // now (the store puts its datoms so far in AVET).
            if *extra == "index" && !installed.index {
                tx.add(installed.id, ":db/index", true);
            }
            continue;
        }
        let unique = (*extra == "identity").then_some(Unique::Identity);
        let mut map = attribute_map(ident, *value_type, *cardinality, unique).with(":db/doc", *doc);
        map = match *extra {
            "index" => map.with(":db/index", true),
            "component" => map.with(":db/isComponent", true),
            _ => map,
        };
        tx.map(map);
    }
    // No :tx/note here: it may be among the attributes being installed, and
    // an attribute cannot be used in the transaction that installs it.
    if let (false, Some(at)) = (tx.is_empty(), at) {
        tx.tx_attr(":db/txInstant", crate::store::Value::Instant(at));
    }
    tx
}
