//! The attributes of recipes, their parts, users and transactions.
//!
//! Installed by `install` when a store is opened for the site: any attribute
//! missing from the store is transacted, so a store made by an older build
//! gains new attributes and one made by this build is left alone.

use super::content::{Field, FIELDS};
use crate::store::attribute_map;
use crate::store::{
    kw, Cardinality, Db, EntityId, Store, StoreError, TransactError, Transaction, Unique, ValueType,
};

/// How an attribute is defined: `(ident, type, cardinality, extra, doc)`;
/// extra is `identity`, `unique` (a value held by one entity only), `index`,
/// `component` or empty.
type Definition = (
    &'static str,
    ValueType,
    Cardinality,
    &'static str,
    &'static str,
);

/// One attribute in the order of installing: defined here, or a field of
/// `content::FIELDS` by its name, which defines it there.
enum Row {
    Def(
        &'static str,
        ValueType,
        Cardinality,
        &'static str,
        &'static str,
    ),
    Field(&'static str),
}

/// The attributes, in the order a new store installs them: the domain's
/// range reads need their ids laid out so (`attrs`), so a row is never
/// moved. A field added to `content::FIELDS` is not listed here: it is
/// installed after all of these (`definitions`), in a new store as in an
/// old one, and read wherever it is.
const ORDER: &[Row] = &[
    Row::Def(
        ":recipe/slug",
        ValueType::String,
        Cardinality::One,
        "identity",
        "The recipe's name in URLs; unique.",
    ),
    Row::Def(
        ":recipe/title",
        ValueType::String,
        Cardinality::One,
        "index",
        "The recipe's title; indexed for the catalog's title order.",
    ),
    Row::Field("summary"),
    Row::Field("servings"),
    Row::Field("yield_text"),
    Row::Field("prep"),
    Row::Field("cook"),
    Row::Field("total"),
    Row::Def(
        ":recipe/ingredients",
        ValueType::Ref,
        Cardinality::Many,
        "component",
        "The ingredient lines, ordered by :ingredient/position.",
    ),
    Row::Def(
        ":recipe/steps",
        ValueType::Ref,
        Cardinality::Many,
        "component",
        "The steps, ordered by :step/position.",
    ),
    Row::Field("notes"),
    Row::Def(
        ":recipe/tags",
        ValueType::String,
        Cardinality::Many,
        "index",
        "Lower-case tags; indexed for tag pages.",
    ),
    Row::Field("cuisine"),
    Row::Field("category"),
    Row::Field("image"),
    Row::Def(
        ":recipe/author",
        ValueType::Ref,
        Cardinality::One,
        "",
        "The user who first wrote the recipe.",
    ),
    Row::Def(
        ":recipe/created-at",
        ValueType::Instant,
        Cardinality::One,
        "index",
        "When the recipe was first written.",
    ),
    Row::Def(
        ":recipe/updated-at",
        ValueType::Instant,
        Cardinality::One,
        "index",
        "When its newest version was made: the catalog's recent order.",
    ),
    Row::Def(
        ":recipe/version-count",
        ValueType::Long,
        Cardinality::One,
        "",
        "How many versions it has: kept by every write, so lists need not count history.",
    ),
    Row::Def(
        ":recipe/retired",
        ValueType::Boolean,
        Cardinality::One,
        "",
        "Hidden from the catalog, still in its forks' lineage.",
    ),
    Row::Def(
        ":recipe/forked-from",
        ValueType::Ref,
        Cardinality::One,
        "",
        "The recipe this one was forked from.",
    ),
    Row::Def(
        ":recipe/forked-at-version",
        ValueType::Long,
        Cardinality::One,
        "",
        "The parent's version number that was forked (1-based).",
    ),
    Row::Def(
        ":recipe/forked-at",
        ValueType::Ref,
        Cardinality::One,
        "",
        "The parent's version that was forked, as its transaction.",
    ),
    Row::Def(
        ":ingredient/position",
        ValueType::Long,
        Cardinality::One,
        "",
        "Order within the recipe, from 1.",
    ),
    Row::Def(
        ":ingredient/line",
        ValueType::String,
        Cardinality::One,
        "",
        "The line as the cook wrote it.",
    ),
    Row::Def(
        ":ingredient/quantity",
        ValueType::Double,
        Cardinality::One,
        "",
        "The amount read from the line.",
    ),
    Row::Def(
        ":ingredient/quantity-max",
        ValueType::Double,
        Cardinality::One,
        "",
        "The top of a range (2-3 cloves).",
    ),
    Row::Def(
        ":ingredient/unit",
        ValueType::String,
        Cardinality::One,
        "",
        "The canonical unit (tbsp, g, cup...).",
    ),
    Row::Def(
        ":ingredient/item",
        ValueType::String,
        Cardinality::One,
        "",
        "What it is.",
    ),
    Row::Def(
        ":ingredient/note",
        ValueType::String,
        Cardinality::One,
        "",
        "After the comma: chopped, to taste...",
    ),
    Row::Def(
        ":step/position",
        ValueType::Long,
        Cardinality::One,
        "",
        "Order within the recipe, from 1.",
    ),
    Row::Def(
        ":step/text",
        ValueType::String,
        Cardinality::One,
        "",
        "Markdown: what to do.",
    ),
    Row::Def(
        ":step/section",
        ValueType::String,
        Cardinality::One,
        "",
        "The named part of the recipe the step belongs to.",
    ),
    Row::Def(
        ":user/handle",
        ValueType::String,
        Cardinality::One,
        "identity",
        "A user's unique handle.",
    ),
    Row::Def(
        ":user/name",
        ValueType::String,
        Cardinality::One,
        "",
        "A user's display name.",
    ),
    Row::Def(
        ":tx/author",
        ValueType::Ref,
        Cardinality::One,
        "",
        "Who made a transaction.",
    ),
    Row::Def(
        ":tx/note",
        ValueType::String,
        Cardinality::One,
        "",
        "Why: the version's note.",
    ),
    Row::Def(
        ":tx/change",
        ValueType::String,
        Cardinality::One,
        "",
        "What an edit or retirement changed, in a line (`title, 2 ingredients`), decided in the writer when the version is written so history never diffs to list it.",
    ),
    Row::Def(
        ":recipe/picture",
        ValueType::String,
        Cardinality::One,
        "index",
        "The recipe's uploaded picture: the hash that names it in the pictures keyspace, stored there before any transaction names it; indexed so that a picture is served only while a version names it, and collected when none does.",
    ),
    Row::Def(
        ":recipe/picture-alt",
        ValueType::String,
        Cardinality::One,
        "",
        "What the picture shows, in words.",
    ),
    Row::Def(
        ":recipe/picture-width",
        ValueType::Long,
        Cardinality::One,
        "",
        "The picture's width in pixels, upright.",
    ),
    Row::Def(
        ":recipe/picture-height",
        ValueType::Long,
        Cardinality::One,
        "",
        "The picture's height in pixels, upright.",
    ),
    Row::Def(
        ":recipe/source-url",
        ValueType::String,
        Cardinality::One,
        "",
        "For a recipe brought in from another site: the page it was read from, where its lineage starts.",
    ),
    Row::Def(
        ":recipe/source-name",
        ValueType::String,
        Cardinality::One,
        "",
        "The name of the site the recipe was brought in from.",
    ),
    Row::Def(
        ":recipe/terms",
        ValueType::String,
        Cardinality::Many,
        "index",
        "Search terms: the inverted index, kept in each recipe's own transactions until search had an index of its own; no longer written (a recipe's first edit since retracts them), and kept so that older stores and exports read.",
    ),
    Row::Def(
        ":recipe/merged-at",
        ValueType::Ref,
        Cardinality::One,
        "",
        "The parent's version this fork last brought in (a three-way merge of the parent's changes since the fork last agreed with it), as its transaction; asserted by the version that brought it in, so the attribute's history lists every merge.",
    ),
    Row::Def(
        ":recipe/merged-at-version",
        ValueType::Long,
        Cardinality::One,
        "",
        "The parent's version number this fork last brought in (1-based): where the next merge starts.",
    ),
    Row::Def(
        ":suggestion/from",
        ValueType::Ref,
        Cardinality::One,
        "",
        "The fork whose changes a suggestion proposes to its parent.",
    ),
    Row::Def(
        ":suggestion/from-version",
        ValueType::Long,
        Cardinality::One,
        "",
        "The fork's version suggested; moved to the fork's newest while the suggestion is open.",
    ),
    Row::Def(
        ":suggestion/to",
        ValueType::Ref,
        Cardinality::One,
        "",
        "The recipe a suggestion is made to: the fork's parent.",
    ),
    Row::Def(
        ":suggestion/base-version",
        ValueType::Long,
        Cardinality::One,
        "",
        "The parent's version the fork last agreed with when it suggested: the merge's base.",
    ),
    Row::Def(
        ":suggestion/number",
        ValueType::Long,
        Cardinality::One,
        "",
        "The suggestion's number among those made to its recipe (1-based), decided in the writer: its address.",
    ),
    Row::Def(
        ":suggestion/by",
        ValueType::Ref,
        Cardinality::One,
        "",
        "The cook who made the suggestion.",
    ),
    Row::Def(
        ":suggestion/message",
        ValueType::String,
        Cardinality::One,
        "",
        "What the suggester says of the change.",
    ),
    Row::Def(
        ":suggestion/state",
        ValueType::String,
        Cardinality::One,
        "",
        "open, accepted, declined, withdrawn, or closed (its recipe was retired); decided in the writer.",
    ),
    Row::Def(
        ":suggestion/reply",
        ValueType::String,
        Cardinality::One,
        "",
        "The parent's author's note on declining or accepting.",
    ),
    Row::Def(
        ":suggestion/accepted-in",
        ValueType::Long,
        Cardinality::One,
        "",
        "The parent's version that accepting the suggestion made.",
    ),
    Row::Def(
        ":suggestion/to-author",
        ValueType::Ref,
        Cardinality::One,
        "",
        "The author of the recipe a suggestion is made to: so that the suggestions a cook has been sent are one read, whatever the number of their recipes.",
    ),
    Row::Def(
        ":suggestion/open-to",
        ValueType::Ref,
        Cardinality::One,
        "",
        "The recipe an open suggestion is made to, retracted when it is accepted, declined or withdrawn: a recipe's open suggestions are one VAET read, however many it has had.",
    ),
    Row::Def(
        ":recipe/took-suggestion",
        ValueType::Ref,
        Cardinality::One,
        "",
        "The suggestion a recipe's version took, asserted by that version with :recipe/took: its history lists every suggestion the recipe took, in one read.",
    ),
    Row::Def(
        ":recipe/took",
        ValueType::Ref,
        Cardinality::One,
        "",
        "The suggesting fork's version a recipe's version took (accepting a suggestion), as its transaction; asserted by that version, so the attribute's history lists every suggestion taken, as :recipe/merged-at's lists every merge.",
    ),
    Row::Def(
        ":tx/attempt",
        ValueType::String,
        Cardinality::One,
        "unique",
        "The form a change was sent from and what it said, as a sum (`domain::Attempt`): the same form sent again finds the transaction that saved it and saves nothing, on whichever node it lands.",
    ),
    Row::Def(
        ":recipe/kept-own",
        ValueType::Long,
        Cardinality::One,
        "",
        "For a fork: of the changes it and its parent made differently, how many it kept its own version of when it last brought the parent's in (retracted by a bring-in that kept none).",
    ),
    Row::Def(
        ":recipe/own-changes",
        ValueType::Boolean,
        Cardinality::One,
        "",
        "For a fork: whether its newest version has changes its parent lacks (all but its title and picture, which are its own), against the version it last agreed with; decided by the writer on every version of a fork, so that a page offers to suggest them without a diff.",
    ),
    Row::Def(
        ":recipe/contributor",
        ValueType::Ref,
        Cardinality::Many,
        "",
        "A cook whose suggestion the recipe took: credited as its contributor.",
    ),
    Row::Def(
        ":suggestion/base-fork-version",
        ValueType::Long,
        Cardinality::One,
        "",
        "When a suggestion's base is an earlier suggestion its parent took beside changes of its own: that suggestion's fork version, merged as it was suggested onto :suggestion/base-version.",
    ),
    Row::Def(
        ":suggestion/whole",
        ValueType::Boolean,
        Cardinality::One,
        "",
        "Asserted when a suggestion is accepted onto a recipe that had no change of its own since the suggestion's base: the new version is the fork's changes alone, so the fork is in step with it.",
    ),
    Row::Def(
        ":suggestion/kept-own",
        ValueType::Long,
        Cardinality::One,
        "",
        "Once accepted: of the changes the suggestion and its recipe made differently, how many the recipe's author kept their own version of (0 when it was taken whole).",
    ),
    Row::Def(
        ":agreement/fork",
        ValueType::Ref,
        Cardinality::One,
        "",
        "A fork that brought in its parent's changes without a change to itself (it had them, or kept its own side of each): the agreement records that it is in step, as an entity of its own, so that the fork gains no version that changes nothing.",
    ),
    Row::Def(
        ":agreement/parent-version",
        ValueType::Long,
        Cardinality::One,
        "",
        "The parent's version the fork agrees with from then on.",
    ),
    Row::Def(
        ":agreement/fork-version",
        ValueType::Long,
        Cardinality::One,
        "",
        "The fork's version that agrees: its newest when the agreement was made.",
    ),
    Row::Def(
        ":agreement/kept-own",
        ValueType::Long,
        Cardinality::One,
        "",
        "Of the changes the fork and its parent made differently, how many the fork kept its own version of.",
    ),
    Row::Def(
        ":agreement/own-changes",
        ValueType::Boolean,
        Cardinality::One,
        "",
        "Whether the fork, at its version that agrees, has changes its parent lacks.",
    ),
    Row::Def(
        ":agreement/settled",
        ValueType::String,
        Cardinality::One,
        "",
        "How each conflict was settled, in words for history (each kept as the fork had it).",
    ),
];

/// Every attribute's definition, in the order of installing: `ORDER`, then
/// the fields of `content::FIELDS` it does not name, in the table's order.
fn definitions() -> Vec<Definition> {
    let of_field = |field: &Field| -> Definition {
        let extra = if field.indexed { "index" } else { "" };
        (
            field.ident,
            field.value_type(),
            Cardinality::One,
            extra,
            field.doc,
        )
    };
    let mut definitions: Vec<Definition> = ORDER
        .iter()
        .map(|row| match row {
            Row::Def(ident, value_type, cardinality, extra, doc) => {
                (*ident, *value_type, *cardinality, *extra, *doc)
            }
            Row::Field(name) => {
                of_field(Field::named(name).expect("ORDER names a field of FIELDS"))
            }
        })
        .collect();
    let listed = |field: &Field| {
        ORDER
            .iter()
            .any(|row| matches!(row, Row::Field(name) if *name == field.name))
    };
    definitions.extend(FIELDS.iter().filter(|f| !listed(f)).map(of_field));
    definitions
}

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
    for (ident, value_type, cardinality, extra, doc) in &definitions() {
        if let Ok(installed) = db.attribute(&kw(ident)) {
            // An attribute indexed since a store was made is indexed there
            // now (the store puts its datoms so far in AVET).
            if *extra == "index" && !installed.index {
                tx.add(installed.id, ":db/index", true);
            }
            continue;
        }
        let unique = match *extra {
            "identity" => Some(Unique::Identity),
            "unique" => Some(Unique::Value),
            _ => None,
        };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_of_the_table_is_installed_once_after_the_listed_order() {
        let idents: Vec<&str> = definitions().iter().map(|d| d.0).collect();
        let mut unique = idents.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), idents.len(), "an attribute defined twice");
        for field in FIELDS {
            assert!(
                idents.contains(&field.ident),
                "{} is not installed",
                field.ident
            );
        }
        // The listed order comes first and keeps its place.
        for (row, ident) in ORDER.iter().zip(&idents) {
            match row {
                Row::Def(listed, ..) => assert_eq!(listed, ident),
                Row::Field(name) => assert_eq!(Field::named(name).unwrap().ident, *ident),
            }
        }
    }
}
