//! The attributes of recipes, their parts, users and transactions (the
//! table in `attributes`), installed.
//!
//! Installed by `install` when a store is opened for the site: any attribute
//! missing from the store is transacted, so a store made by an older build
//! gains new attributes and one made by this build is left alone.

use super::attributes::ATTRIBUTES;
use crate::store::attribute_map;
use crate::store::{kw, Db, EntityId, Store, StoreError, TransactError, Transaction};

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
    for attr in ATTRIBUTES {
        if let Ok(installed) = db.attribute(&kw(attr.ident)) {
            // An attribute indexed since a store was made is indexed there
            // now (the store puts its datoms so far in AVET).
            if attr.index && !installed.index {
                tx.add(installed.id, ":db/index", true);
            }
            continue;
        }
        let mut map = attribute_map(attr.ident, attr.value_type, attr.cardinality, attr.unique)
            .with(":db/doc", attr.doc);
        if attr.index {
            map = map.with(":db/index", true);
        }
        if attr.component {
            map = map.with(":db/isComponent", true);
        }
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
    use crate::domain::content::FIELDS;

    /// The attributes a store made before the table (`attributes`) holds,
    /// in the order that store installed them: ids laid out so are what
    /// the range reads check (`attrs`), so the table keeps this order.
    const INSTALLED_BEFORE: [&str; 75] = [
        ":recipe/slug",
        ":recipe/title",
        ":recipe/summary",
        ":recipe/servings",
        ":recipe/yield-text",
        ":recipe/prep-minutes",
        ":recipe/cook-minutes",
        ":recipe/total-minutes",
        ":recipe/ingredients",
        ":recipe/steps",
        ":recipe/notes",
        ":recipe/tags",
        ":recipe/cuisine",
        ":recipe/category",
        ":recipe/image",
        ":recipe/author",
        ":recipe/created-at",
        ":recipe/updated-at",
        ":recipe/version-count",
        ":recipe/retired",
        ":recipe/forked-from",
        ":recipe/forked-at-version",
        ":recipe/forked-at",
        ":ingredient/position",
        ":ingredient/line",
        ":ingredient/quantity",
        ":ingredient/quantity-max",
        ":ingredient/unit",
        ":ingredient/item",
        ":ingredient/note",
        ":step/position",
        ":step/text",
        ":step/section",
        ":user/handle",
        ":user/name",
        ":tx/author",
        ":tx/note",
        ":tx/change",
        ":recipe/picture",
        ":recipe/picture-alt",
        ":recipe/picture-width",
        ":recipe/picture-height",
        ":recipe/source-url",
        ":recipe/source-name",
        ":recipe/terms",
        ":recipe/merged-at",
        ":recipe/merged-at-version",
        ":suggestion/from",
        ":suggestion/from-version",
        ":suggestion/to",
        ":suggestion/base-version",
        ":suggestion/number",
        ":suggestion/by",
        ":suggestion/message",
        ":suggestion/state",
        ":suggestion/reply",
        ":suggestion/accepted-in",
        ":suggestion/to-author",
        ":suggestion/open-to",
        ":recipe/took-suggestion",
        ":recipe/took",
        ":tx/attempt",
        ":recipe/kept-own",
        ":recipe/own-changes",
        ":recipe/contributor",
        ":suggestion/base-fork-version",
        ":suggestion/whole",
        ":suggestion/kept-own",
        ":agreement/fork",
        ":agreement/parent-version",
        ":agreement/fork-version",
        ":agreement/kept-own",
        ":agreement/own-changes",
        ":agreement/settled",
        ":recipe/language",
    ];

    #[test]
    fn every_field_of_the_table_is_installed_once_after_the_listed_order() {
        let idents: Vec<&str> = ATTRIBUTES.iter().map(|a| a.ident).collect();
        let mut unique = idents.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), idents.len(), "an attribute defined twice");
        for field in FIELDS {
            assert!(
                idents.contains(&field.attr.ident),
                "{} is not installed",
                field.attr.ident
            );
            assert_eq!(field.name, field.attr.name);
        }
        // The listed order comes first and keeps its place.
        assert_eq!(idents[..INSTALLED_BEFORE.len()], INSTALLED_BEFORE);
    }
}
