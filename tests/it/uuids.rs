//! Uuids as text: the hyphenated form is read, and nothing that only looks
//! like it (a sign before a hex byte once passed for a digit).

use std::io::{BufReader, Cursor};

use forkful::store::QueryError;
use forkful::store::{export, import};
use forkful::store::{Store, Transaction, Value};

use crate::helpers::{add_recipe, store};

const GOOD: &str = "123e4567-e89b-12d3-a456-426614174000";
const SIGNED: &str = "+23e4567-e89b-12d3-a456-426614174000";

/// A store with one recipe carrying the uuid `GOOD`.
fn with_uuid() -> (Store, u64) {
    let store = store();
    let id = add_recipe(&store, "dal", "Dal");
    let bytes = forkful::store::parse_uuid(GOOD).unwrap();
    let mut tx = Transaction::new();
    tx.add(id, ":recipe/uuid", Value::Uuid(bytes));
    store.transact(&tx).unwrap();
    (store, id)
}

fn by_uuid(text: &str) -> String {
    format!("[:find ?r :where\n [?r :recipe/uuid #uuid \"{text}\"]]")
}

#[test]
fn a_query_finds_a_recipe_by_its_uuid() {
    let (store, id) = with_uuid();
    let found = store.db().q(&by_uuid(GOOD), &[]).unwrap();
    assert_eq!(found.rows.len(), 1);
    assert_eq!(found.rows[0][0].to_string(), id.to_string());
    let upper = store.db().q(&by_uuid(&GOOD.to_uppercase()), &[]).unwrap();
    assert_eq!(upper.rows, found.rows, "hex of either case");
}

#[test]
fn a_query_with_a_signed_uuid_is_refused_where_it_is_written() {
    let (store, _) = with_uuid();
    let error = store.db().q(&by_uuid(SIGNED), &[]).unwrap_err();
    assert!(matches!(error, QueryError::Syntax { .. }), "{error}");
    let shown = error.to_string();
    assert!(shown.contains(&format!("bad uuid \"{SIGNED}\"")), "{shown}");
    assert!(shown.contains("line 2, column"), "{shown}");
}

#[test]
fn an_export_with_a_signed_uuid_is_refused_at_its_line() {
    let (source, _) = with_uuid();
    let mut out = Vec::new();
    export(&source.db(), &mut out).unwrap();
    let good = String::from_utf8(out).unwrap();
    let line = 1 + good.lines().position(|l| l.contains(GOOD)).unwrap();

    let bad = good.replace(GOOD, SIGNED);
    let target = Store::temporary().unwrap();
    let error = import(&target, || Ok(BufReader::new(Cursor::new(bad.clone())))).unwrap_err();
    let shown = error.to_string();
    assert!(shown.contains(&format!("line {line}:")), "{shown}");
    assert!(shown.contains(&format!("bad uuid \"{SIGNED}\"")), "{shown}");
    assert!(target.is_empty(), "the refused file wrote nothing");

    let target = Store::temporary().unwrap();
    import(&target, || Ok(BufReader::new(Cursor::new(good.clone())))).unwrap();
    let found = target.db().q(&by_uuid(GOOD), &[]).unwrap();
    assert_eq!(found.rows.len(), 1);
}
