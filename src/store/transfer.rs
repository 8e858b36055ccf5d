//! Export to and import from a portable, line-per-datom text file.
//!
//! The file is the store's log, history included, one datom a line as EDN:
//!
//! ```text
//! ;; forkful export, format 1: [entity attribute value tx added], in log order
//! [34 :db/ident :recipe/slug 33 true]
//! [35 :recipe/slug "shakshuka" 40 true]
//! ```
//!
//! Entity and transaction ids are kept, so importing a file into an empty
//! store gives back the same datoms at the same bases: exporting it again
//! gives the same file. Attributes are written by ident, which is why an
//! installed attribute's ident can never change. The genesis transaction is
//! not written; every store has the same one.
//!
//! Import reads the file twice: first to check every line (syntax, known
//! attributes, value types, ids, tx order, the schema each transaction leaves
//! behind), writing nothing; then to write it, a transaction at a time, each
//! atomic, and flushed once at the end. A bad file changes nothing.

use std::io::{BufRead, Write};
use std::sync::Arc;

use super::edn::{self, Edn};
use super::encoding::Datom;
use super::error::StoreError;
use super::schema::{Schema, GENESIS_TX};
use super::value::{parse_uuid, EntityId, Keyword, Value, ValueType};
use super::{instant, Db, Store};

const HEADER: &str = ";; forkful export, format 1: [entity attribute value tx added], in log order";

/// What an export or import covered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransferSummary {
    pub transactions: usize,
    pub datoms: usize,
    pub basis: EntityId,
}

/// Writes every datom after genesis, up to `db`'s basis, to `out`.
pub fn export(db: &Db, out: &mut impl Write) -> Result<TransferSummary, StoreError> {
    writeln!(out, "{HEADER}")?;
    let mut summary = TransferSummary {
        transactions: 0,
        datoms: 0,
        basis: db.basis(),
    };
    let mut last_tx = GENESIS_TX;
    for datom in db.log(GENESIS_TX + 1, db.basis()) {
        let d = datom?;
        let attribute = db
            .schema()
            .attribute(d.a)
            .ok_or_else(|| StoreError::Corrupt(format!("datom of unknown attribute {}", d.a)))?;
        writeln!(
            out,
            "[{} {} {} {} {}]",
            d.e, attribute.ident, d.v, d.tx, d.added
        )?;
        if d.tx != last_tx {
            summary.transactions += 1;
            last_tx = d.tx;
        }
        summary.datoms += 1;
    }
    out.flush()?;
    Ok(summary)
}

/// Imports an export file into `store`, which must be empty. `open` is called
/// twice, once per pass, and must give the same text each time.
pub fn import<R: BufRead>(
    store: &Store,
    mut open: impl FnMut() -> std::io::Result<R>,
) -> Result<TransferSummary, StoreError> {
    if !store.is_empty() {
        return Err(StoreError::Import {
            line: 0,
            why: "the store already has transactions; import needs an empty store".into(),
        });
    }
    let base = Arc::new(store.db().schema().clone());
    let checked = read_transactions(open()?, base.clone(), |_, _, _| Ok(()))?;
    let summary = read_transactions(open()?, base, |datoms, next_id, schema| {
        store.apply_imported(datoms, next_id, schema)
    })?;
    debug_assert_eq!(checked, summary);
    store.wait_durable(summary.basis)?;
    Ok(summary)
}

/// Reads the file a transaction at a time, checking each, and hands each to
/// `each` with the next free id and the schema after it.
fn read_transactions<R: BufRead>(
    reader: R,
    mut schema: Arc<Schema>,
    mut each: impl FnMut(&[Datom], EntityId, &Arc<Schema>) -> Result<(), StoreError>,
) -> Result<TransferSummary, StoreError> {
    let mut summary = TransferSummary {
        transactions: 0,
        datoms: 0,
        basis: GENESIS_TX,
    };
    let mut pending: Vec<Datom> = Vec::new();
    let mut pending_line = 0;
    let mut next_id = GENESIS_TX + 1;
    let mut finish = |pending: &mut Vec<Datom>,
                      schema: &mut Arc<Schema>,
                      line,
                      next_id|
     -> Result<(), StoreError> {
        if pending.is_empty() {
            return Ok(());
        }
        if let Some(next) = schema.after(pending).map_err(|e| StoreError::Import {
            line,
            why: format!("the transaction starting here leaves a bad schema: {e}"),
        })? {
            *schema = Arc::new(next);
        }
        each(pending, next_id, schema)?;
        pending.clear();
        Ok(())
    };
    for (index, line) in reader.lines().enumerate() {
        let number = index + 1;
        let line = line?;
        let text = line.trim();
        if text.is_empty() || text.starts_with(';') {
            continue;
        }
        let fail = |why: String| StoreError::Import { line: number, why };
        let datom = parse_line(text, &schema).map_err(fail)?;
        if datom.tx < summary.basis {
            return Err(fail(format!(
                "transaction {} comes after transaction {}: the log must be in tx order",
                datom.tx, summary.basis
            )));
        }
        if pending.last().is_some_and(|d| d.tx != datom.tx) {
            finish(&mut pending, &mut schema, pending_line, next_id)?;
        }
        if pending.is_empty() {
            pending_line = number;
            summary.transactions += 1;
        }
        next_id = next_id.max(datom.e + 1).max(datom.tx + 1);
        if let Value::Ref(target) = datom.v {
            next_id = next_id.max(target + 1);
        }
        summary.basis = datom.tx;
        summary.datoms += 1;
        pending.push(datom);
    }
    finish(&mut pending, &mut schema, pending_line, next_id)?;
    Ok(summary)
}

/// `[e :attr value tx added]`, typed by the attribute.
fn parse_line(text: &str, schema: &Schema) -> Result<Datom, String> {
    let form = edn::parse(text).map_err(|e| e.to_string())?;
    let Edn::Vector(parts) = &form else {
        return Err(format!(
            "expected [entity attribute value tx added], found {form}"
        ));
    };
    let [Edn::Int(e), Edn::Keyword(attr), value, Edn::Int(tx), Edn::Bool(added)] = parts.as_slice()
    else {
        return Err(format!(
            "expected [entity attribute value tx added], found {form}"
        ));
    };
    let ident = Keyword::parse(attr).map_err(|e| e.to_string())?;
    let attribute = schema.attribute_named(&ident).map_err(|_| {
        format!("unknown attribute {ident} (attributes must be installed before use)")
    })?;
    let id = |n: i64, what: &str| {
        u64::try_from(n).map_err(|_| format!("{what} {n} is not an entity id"))
    };
    let tx = id(*tx, "tx")?;
    if tx <= GENESIS_TX {
        return Err(format!("tx {tx} is at or before genesis ({GENESIS_TX})"));
    }
    let v = match (attribute.value_type, value) {
        (ValueType::Ref, Edn::Int(n)) => Value::Ref(id(*n, "ref")?),
        (ValueType::String, Edn::String(s)) => Value::from(s.as_str()),
        (ValueType::Long, Edn::Int(n)) => Value::Long(*n),
        (ValueType::Double, Edn::Float(x)) if !x.is_nan() => Value::Double(*x),
        (ValueType::Boolean, Edn::Bool(b)) => Value::Boolean(*b),
        (ValueType::Keyword, Edn::Keyword(k)) => {
            Value::Keyword(Keyword::parse(k).map_err(|e| e.to_string())?)
        }
        (ValueType::Instant, Edn::Tagged(tag, inner)) if tag == "inst" => match inner.as_ref() {
            Edn::String(s) => {
                Value::Instant(instant::parse_rfc3339(s).ok_or(format!("bad instant {s:?}"))?)
            }
            other => return Err(format!("bad instant {other}")),
        },
        (ValueType::Uuid, Edn::Tagged(tag, inner)) if tag == "uuid" => match inner.as_ref() {
            Edn::String(s) => Value::Uuid(parse_uuid(s).ok_or(format!("bad uuid {s:?}"))?),
            other => return Err(format!("bad uuid {other}")),
        },
        (expected, other) => return Err(format!("{ident} takes {expected:?} values, not {other}")),
    };
    Ok(Datom {
        e: id(*e, "entity")?,
        a: attribute.id,
        v,
        tx,
        added: *added,
    })
}
