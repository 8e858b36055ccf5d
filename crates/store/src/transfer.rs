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
//! Format 2 may carry keyspace records before the datoms, one a line:
//! `#keyspace pictures <key> <value>`, key and value in base64. Only the
//! keyspaces the caller names are written or read (pictures, never
//! sessions or password hashes), and an import writes them, durably, before
//! the first datom, so that nothing the datoms name is missing at any
//! basis. A format 1 file is a format 2 file without records.
//!
//! Import reads the file twice. The first pass checks every line, writing
//! nothing: syntax, line length, known attributes, value types, ids, tx
//! order, transaction instants that never go back, transaction sizes, the
//! schema each transaction leaves behind, and whatever the caller's
//! `ImportCheck` asks of the datoms (the domain's own rules). The second
//! pass writes a transaction at a time, each atomic and first checked
//! against the store as it stands (no unique value held twice, no second
//! value of a cardinality-one attribute), made durable a group at a time,
//! one flush per group. If anything fails in the second pass, the store is
//! put back to the empty store it was: a bad file changes nothing. While it
//! runs, the store carries a mark, so a store left by a crash half-way is
//! refused when opened rather than served half-filled.

use std::io::{BufRead, Read, Write};
use std::sync::Arc;

use super::encoding::Datom;
use super::error::{StorageError, TransactError, TransferError};
use super::schema::{Schema, DB_TX_INSTANT, GENESIS_TX};
use super::value::{parse_uuid, EntityId, Keyword, Value, ValueType};
use super::{instant, Db, Keyspace, Store, MAX_TX_BYTES, MAX_TX_DATOMS};
use crate::edn::{self, Edn};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;

const HEADER: &str = ";; forkful export, format 2: #keyspace records (name, base64 key and value), then [entity attribute value tx added] in log order";

/// What starts a keyspace record's line.
const RECORD: &str = "#keyspace ";

/// The longest line an import reads, in bytes: a datom with a recipe's
/// longest Markdown is far shorter; a longer line is refused, not buffered.
pub(crate) const MAX_LINE_BYTES: usize = 1 << 20;

/// The longest keyspace record's line: a picture's widest variant, in
/// base64, fits with room to spare.
pub(crate) const MAX_RECORD_BYTES: usize = 32 << 20;

/// Keyspace records' bytes written between two flushes of an import.
const GROUP_RECORD_BYTES: usize = 8 << 20;

/// Datoms written between two flushes of an import. sled cannot page out
/// what is not yet flushed, so groups are kept small (docs/journal/10-bulk-loads.md).
const GROUP_DATOMS: usize = 5_000;

/// What an importer checks of the file beyond the store's own rules: the
/// store knows nothing of what its attributes mean; the domain does.
pub trait ImportCheck {
    /// Sees each datom of the file in order, with its line and attribute.
    fn datom(&mut self, line: usize, ident: &Keyword, datom: &Datom) -> Result<(), String>;
    /// After the last datom: what must hold of the whole file, or the line
    /// of what breaks it and why.
    fn finish(&mut self) -> Result<(), (usize, String)>;
    /// Sees each keyspace record of the file, before any datom.
    fn record(
        &mut self,
        _line: usize,
        _keyspace: &str,
        _key: &[u8],
        _value: &[u8],
    ) -> Result<(), String> {
        Ok(())
    }
}

/// No checks beyond the store's.
pub struct NoCheck;

impl ImportCheck for NoCheck {
    fn datom(&mut self, _: usize, _: &Keyword, _: &Datom) -> Result<(), String> {
        Ok(())
    }

    fn finish(&mut self) -> Result<(), (usize, String)> {
        Ok(())
    }
}

/// What an export or import covered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransferSummary {
    pub transactions: usize,
    pub datoms: usize,
    pub basis: EntityId,
    /// Keyspace records.
    pub records: usize,
}

/// Writes every datom after genesis, up to `db`'s basis, to `out`.
pub fn export(db: &Db, out: &mut impl Write) -> Result<TransferSummary, TransferError> {
    export_with(db, &[], out)
}

/// `export`, with every record of the named `keyspaces` first. A keyspace
/// is read after `db` was pinned, so it holds all that the datoms name
/// (as long as its records are only ever added before being named).
pub fn export_with(
    db: &Db,
    keyspaces: &[(&str, &Keyspace)],
    out: &mut impl Write,
) -> Result<TransferSummary, TransferError> {
    writeln!(out, "{HEADER}")?;
    let mut summary = TransferSummary {
        transactions: 0,
        datoms: 0,
        basis: db.basis(),
        records: 0,
    };
    for (name, keyspace) in keyspaces {
        for record in keyspace.scan_prefix(b"") {
            let (key, value) = record?;
            writeln!(
                out,
                "{RECORD}{name} {} {}",
                BASE64.encode(&key),
                BASE64.encode(&value)
            )?;
            summary.records += 1;
        }
    }
    let mut last_tx = GENESIS_TX;
    for datom in db.log(GENESIS_TX + 1, db.basis()) {
        let d = datom?;
        let attribute = db
            .schema()
            .attribute(d.a)
            .ok_or_else(|| StorageError::Corrupt(format!("datom of unknown attribute {}", d.a)))?;
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
pub fn import<R: BufRead + Send>(
    store: &Store,
    open: impl FnMut() -> std::io::Result<R>,
) -> Result<TransferSummary, TransferError> {
    import_with(store, open, &mut NoCheck, &mut |_| {})
}

/// `import`, with the caller's checks of the file, and `progress` told
/// how many datoms are written after each group (the check pass's count,
/// `checked`, is their total).
pub fn import_with<R: BufRead + Send>(
    store: &Store,
    open: impl FnMut() -> std::io::Result<R>,
    check: &mut dyn ImportCheck,
    progress: &mut dyn FnMut(Progress),
) -> Result<TransferSummary, TransferError> {
    import_with_keyspaces(store, open, check, progress, &[])
}

/// `import_with`, taking the records of the named `keyspaces` (a record of
/// any other is refused), written before the first datom.
pub fn import_with_keyspaces<R: BufRead + Send>(
    store: &Store,
    mut open: impl FnMut() -> std::io::Result<R>,
    check: &mut dyn ImportCheck,
    progress: &mut dyn FnMut(Progress),
    keyspaces: &[&str],
) -> Result<TransferSummary, TransferError> {
    if !store.is_empty() {
        return Err(TransferError::Import {
            line: 0,
            why: "the store already has transactions; import needs an empty store".into(),
        });
    }
    let base = Arc::new(store.db().schema().clone());
    let checked = read_transactions(
        open()?,
        base.clone(),
        check,
        keyspaces,
        &mut |_, _, _| Ok(()),
        |_, _, _, _| Ok(()),
    )?;
    check
        .finish()
        .map_err(|(line, why)| TransferError::Import { line, why })?;
    progress(Progress {
        written: 0,
        total: checked.datoms,
    });
    store.begin_import()?;
    let mut writing = Writing {
        store,
        records: Records::default(),
        since_flush: 0,
        written: 0,
        total: checked.datoms,
        progress,
    };
    let reader = open()?;
    match writing.second_pass(reader, base, keyspaces, &checked) {
        Ok(summary) => {
            store.end_import()?;
            writing.report();
            Ok(summary)
        }
        Err(error) => {
            undo_import(store, keyspaces);
            Err(error)
        }
    }
}

/// After a failed import: the store emptied again, and the keyspaces it
/// took records of.
fn undo_import(store: &Store, keyspaces: &[&str]) {
    // If even this fails, the mark stays and the store is refused
    // when next opened: still nothing half-imported is served.
    if let Err(reset) = store.reset_to_genesis() {
        tracing::error!(error = %reset, "could not empty the store after a failed import");
    }
    for name in keyspaces {
        let emptied = store
            .keyspace(name)
            .map_err(TransactError::from)
            .and_then(|keyspace| keyspace.remove_prefix(b""));
        if let Err(reset) = emptied {
            tracing::error!(error = %reset, keyspace = name, "could not empty a keyspace after a failed import");
        }
    }
}

/// Transactions read ahead of the writer in an import's second pass.
const READ_AHEAD: usize = 8;

/// What the reading thread of an import's second pass hands the writer.
enum Parsed {
    /// A keyspace record: its keyspace, key and value.
    Record(String, Vec<u8>, Vec<u8>),
    /// A transaction's datoms, the next free id, the schema after it and
    /// its first line.
    Transaction(Vec<Datom>, EntityId, Arc<Schema>, usize),
}

/// The reading thread's error when the writer has stopped (on an error
/// of its own, which is the one reported).
fn writer_stopped() -> TransferError {
    TransferError::Import {
        line: 0,
        why: "the writer stopped".into(),
    }
}

/// Where a pass sends each keyspace record: its keyspace, key and value.
type RecordSink<'a> = dyn FnMut(&str, Vec<u8>, Vec<u8>) -> Result<(), TransferError> + 'a;

/// Keyspace records read and not yet written: written a group at a time,
/// one flush each, and all of them before the first datom.
#[derive(Default)]
struct Records {
    pending: Vec<(String, Vec<u8>, Vec<u8>)>,
    bytes: usize,
}

impl Records {
    fn add(
        &mut self,
        store: &Store,
        name: &str,
        key: Vec<u8>,
        value: Vec<u8>,
    ) -> Result<(), TransferError> {
        self.bytes += key.len() + value.len();
        self.pending.push((name.to_owned(), key, value));
        if self.bytes >= GROUP_RECORD_BYTES {
            self.write(store)?;
        }
        Ok(())
    }

    fn write(&mut self, store: &Store) -> Result<(), TransferError> {
        let mut pending = std::mem::take(&mut self.pending);
        self.bytes = 0;
        while let Some((name, ..)) = pending.first() {
            let name = name.clone();
            let split = pending
                .iter()
                .position(|(n, ..)| *n != name)
                .unwrap_or(pending.len());
            let group: Vec<(Vec<u8>, Vec<u8>)> =
                pending.drain(..split).map(|(_, k, v)| (k, v)).collect();
            store.keyspace(&name)?.insert_all(&group)?;
        }
        Ok(())
    }
}

/// The writer of an import's second pass: the records it holds until the
/// first datom, how far it is, and whom it tells.
struct Writing<'a> {
    store: &'a Store,
    records: Records,
    /// Datoms written since the last flush, and in all.
    since_flush: usize,
    written: usize,
    /// The datoms the check pass counted.
    total: usize,
    progress: &'a mut dyn FnMut(Progress),
}

impl Writing<'_> {
    /// Writes the file that `reader` reads again, checked as `checked`.
    fn second_pass<R: BufRead + Send>(
        &mut self,
        reader: R,
        base: Arc<Schema>,
        keyspaces: &[&str],
        checked: &TransferSummary,
    ) -> Result<TransferSummary, TransferError> {
        // The file is read and parsed on a thread of its own while this one
        // writes: the writes are most of the time, the parsing a fifth of it
        // (perf, 3,000 full recipes), and each has a core. At most READ_AHEAD
        // transactions wait between them, so memory stays bounded.
        std::thread::scope(|scope| {
            let (send, receive) = std::sync::mpsc::sync_channel::<Parsed>(READ_AHEAD);
            let reading = scope.spawn(move || read_ahead(reader, base, keyspaces, send));
            // On the first failure the receiver is dropped, which stops the
            // reading thread at its next send; the writer's error is the one
            // to report.
            let wrote = receive.into_iter().try_for_each(|read| self.write(read));
            let read = reading
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            let summary = wrote.and(read)?;
            // What was written is what was checked only if both passes read
            // the same file; one that changed in between is undone
            // (`undo_import`).
            if summary != *checked {
                return Err(TransferError::Import {
                    line: 0,
                    why: format!(
                        "the file changed while it was imported: checked {} transactions \
                         and {} datoms, then read {} and {}",
                        checked.transactions, checked.datoms, summary.transactions, summary.datoms
                    ),
                });
            }
            self.records.write(self.store)?;
            self.store.wait_durable(summary.basis)?;
            Ok(summary)
        })
    }

    /// Takes one record, or writes one transaction (every record first).
    fn write(&mut self, read: Parsed) -> Result<(), TransferError> {
        let Parsed::Transaction(datoms, next_id, schema, line) = read else {
            let Parsed::Record(name, key, value) = read else {
                unreachable!("a read is a record or a transaction")
            };
            return self.records.add(self.store, &name, key, value);
        };
        // Every record is durable before the first datom is written.
        self.records.write(self.store)?;
        self.store
            .apply_imported(&datoms, next_id, &schema)
            .map_err(|e| match e {
                TransactError::Conflict(_) | TransactError::UniqueConflict { .. } => {
                    TransferError::Import {
                        line,
                        why: format!("the transaction starting here: {e}"),
                    }
                }
                other => other.into(),
            })?;
        self.since_flush += datoms.len();
        self.written += datoms.len();
        if self.since_flush >= GROUP_DATOMS {
            self.store.wait_durable(datoms[0].tx)?;
            self.since_flush = 0;
            self.report();
        }
        Ok(())
    }

    /// Tells the caller how many datoms are written.
    fn report(&mut self) {
        (self.progress)(Progress {
            written: self.written,
            total: self.total,
        });
    }
}

/// The reading thread of an import's second pass: every record and
/// transaction of the file, handed to the writer through `send`.
fn read_ahead<R: BufRead>(
    reader: R,
    base: Arc<Schema>,
    keyspaces: &[&str],
    send: std::sync::mpsc::SyncSender<Parsed>,
) -> Result<TransferSummary, TransferError> {
    let records = send.clone();
    read_transactions(
        reader,
        base,
        &mut NoCheck,
        keyspaces,
        &mut |name, key, value| {
            records
                .send(Parsed::Record(name.to_owned(), key, value))
                .map_err(|_| writer_stopped())
        },
        |datoms, next_id, schema, line| {
            let datoms = datoms.to_vec();
            let schema = schema.clone();
            send.send(Parsed::Transaction(datoms, next_id, schema, line))
                .map_err(|_| writer_stopped())
        },
    )
}

/// How far an import's writing is, in datoms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub written: usize,
    pub total: usize,
}

/// Reads the file a transaction at a time, checking each, and hands each to
/// `each` with the next free id, the schema after it and its first line.
fn read_transactions<R: BufRead>(
    mut reader: R,
    schema: Arc<Schema>,
    check: &mut dyn ImportCheck,
    keyspaces: &[&str],
    record: &mut RecordSink,
    each: impl FnMut(&[Datom], EntityId, &Arc<Schema>, usize) -> Result<(), TransferError>,
) -> Result<TransferSummary, TransferError> {
    let mut pass = Pass {
        summary: TransferSummary {
            transactions: 0,
            datoms: 0,
            basis: GENESIS_TX,
            records: 0,
        },
        schema,
        pending: Vec::new(),
        pending_line: 0,
        pending_bytes: 0,
        next_id: GENESIS_TX + 1,
        last_instant: None,
        each,
    };
    let mut buffer = Vec::new();
    let mut number = 0;
    loop {
        buffer.clear();
        let read = (&mut reader)
            .take(MAX_RECORD_BYTES as u64 + 1)
            .read_until(b'\n', &mut buffer)?;
        if read == 0 {
            break;
        }
        number += 1;
        let fail = |why: String| TransferError::Import { line: number, why };
        let is_record = buffer.starts_with(RECORD.as_bytes());
        let text = line_text(&buffer, is_record).map_err(fail)?;
        if text.is_empty() || text.starts_with(';') {
            continue;
        }
        if is_record {
            if pass.summary.datoms > 0 {
                return Err(fail("keyspace records come before the first datom".into()));
            }
            let (name, key, value) = parse_record(text, keyspaces).map_err(fail)?;
            check.record(number, name, &key, &value).map_err(fail)?;
            record(name, key, value)?;
            pass.summary.records += 1;
            continue;
        }
        pass.datom(number, text, check)?;
    }
    pass.finish()?;
    Ok(pass.summary)
}

/// A line's text, trimmed: no longer than a line of its kind may be, and
/// UTF-8.
fn line_text(buffer: &[u8], is_record: bool) -> Result<&str, String> {
    let limit = if is_record {
        MAX_RECORD_BYTES
    } else {
        MAX_LINE_BYTES
    };
    if buffer.len() > limit {
        return Err(format!("the line is longer than {limit} bytes"));
    }
    let text = std::str::from_utf8(buffer).map_err(|_| "the line is not UTF-8".to_owned())?;
    Ok(text.trim())
}

/// What a pass has read: the transaction it is gathering and what the lines
/// before it left (the summary, the schema, the next free id, the last
/// transaction instant and its line), and where finished transactions go.
struct Pass<E> {
    summary: TransferSummary,
    schema: Arc<Schema>,
    pending: Vec<Datom>,
    pending_line: usize,
    pending_bytes: usize,
    next_id: EntityId,
    last_instant: Option<(i64, usize)>,
    each: E,
}

impl<E> Pass<E>
where
    E: FnMut(&[Datom], EntityId, &Arc<Schema>, usize) -> Result<(), TransferError>,
{
    /// The datom on line `number`, checked and added to its transaction.
    fn datom(
        &mut self,
        number: usize,
        text: &str,
        check: &mut dyn ImportCheck,
    ) -> Result<(), TransferError> {
        let fail = |why: String| TransferError::Import { line: number, why };
        let line = parse_line(text).map_err(fail)?;
        if line.tx < self.summary.basis {
            return Err(fail(format!(
                "transaction {} comes after transaction {}: the log must be in tx order",
                line.tx, self.summary.basis
            )));
        }
        // The transaction before this line is finished, and its schema in
        // force, before this line's attribute is looked up.
        if self.pending.last().is_some_and(|d| d.tx != line.tx) {
            self.finish()?;
        }
        let (ident, datom) = typed_datom(line, &self.schema).map_err(fail)?;
        if self.pending.is_empty() {
            self.pending_line = number;
            self.pending_bytes = 0;
            self.summary.transactions += 1;
        }
        self.pending_bytes += datom.v.stored_len();
        if self.pending.len() >= MAX_TX_DATOMS || self.pending_bytes > MAX_TX_BYTES {
            let pending_line = self.pending_line;
            return Err(fail(format!(
                "the transaction starting at line {pending_line} has more than {MAX_TX_DATOMS} datoms or {MAX_TX_BYTES} bytes of values, the most one transaction may write"
            )));
        }
        self.check_instant(number, &datom).map_err(fail)?;
        check.datom(number, &ident, &datom).map_err(fail)?;
        self.next_id = self.next_id.max(datom.e + 1).max(datom.tx + 1);
        if let Value::Ref(target) = datom.v {
            self.next_id = self.next_id.max(target + 1);
        }
        self.summary.basis = datom.tx;
        self.summary.datoms += 1;
        self.pending.push(datom);
        Ok(())
    }

    /// A transaction's instant, on line `number`, is not before the one
    /// before it.
    fn check_instant(&mut self, number: usize, datom: &Datom) -> Result<(), String> {
        if datom.a == DB_TX_INSTANT && datom.e == datom.tx && datom.added {
            let instant = datom.v.as_instant().unwrap_or(i64::MIN);
            if let Some((last, at)) = self.last_instant.filter(|(last, _)| instant < *last) {
                return Err(format!(
                    "this transaction's instant {} is before {} at line {at}: instants never go back",
                    instant::format_rfc3339(instant),
                    instant::format_rfc3339(last)
                ));
            }
            self.last_instant = Some((instant, number));
        }
        Ok(())
    }

    /// Finishes the transaction gathered, if any: the schema it leaves
    /// behind in force, and the transaction handed on.
    fn finish(&mut self) -> Result<(), TransferError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let line = self.pending_line;
        if let Some(next) = self
            .schema
            .after(&self.pending)
            .map_err(|e| TransferError::Import {
                line,
                why: format!("the transaction starting here leaves a bad schema: {e}"),
            })?
        {
            self.schema = Arc::new(next);
        }
        (self.each)(&self.pending, self.next_id, &self.schema, line)?;
        self.pending.clear();
        Ok(())
    }
}

/// `#keyspace name key value`, key and value in base64; only a keyspace
/// the import takes.
fn parse_record<'a>(
    text: &'a str,
    keyspaces: &[&str],
) -> Result<(&'a str, Vec<u8>, Vec<u8>), String> {
    let rest = text
        .strip_prefix(RECORD)
        .ok_or("expected #keyspace name key value")?;
    let parts: Vec<&str> = rest.split(' ').collect();
    let [name, key, value] = parts.as_slice() else {
        return Err("expected #keyspace name key value".into());
    };
    if !keyspaces.contains(name) {
        return Err(format!(
            "this import does not take records of keyspace {name:?}"
        ));
    }
    let decode = |what: &str, text: &str| {
        BASE64
            .decode(text)
            .map_err(|e| format!("the record's {what} is not base64: {e}"))
    };
    Ok((name, decode("key", key)?, decode("value", value)?))
}

/// A datom line's five fields, before its attribute is looked up. Which
/// transaction a line belongs to decides the schema its attribute is read
/// against, so the transaction is known first: the first datom of a
/// transaction may use an attribute the transaction before it installed.
struct Line {
    e: i64,
    ident: Keyword,
    value: Edn,
    tx: EntityId,
    added: bool,
}

/// `[e :attr value tx added]`, its shape and its transaction checked.
fn parse_line(text: &str) -> Result<Line, String> {
    let form = edn::parse(text).map_err(|e| e.to_string())?;
    let fields = match form {
        Edn::Vector(parts) => <[Edn; 5]>::try_from(parts).map_err(Edn::Vector),
        other => Err(other),
    };
    let fields = fields.map_err(|form| shape_error(&form))?;
    // The value is moved out, never cloned: an import reads millions.
    let (e, attr, value, tx, added) = match fields {
        [Edn::Int(e), Edn::Keyword(attr), value, Edn::Int(tx), Edn::Bool(added)] => {
            (e, attr, value, tx, added)
        }
        other => return Err(shape_error(&Edn::Vector(other.into()))),
    };
    let ident = Keyword::parse(&attr).map_err(|e| e.to_string())?;
    let tx = entity_id(tx, "tx")?;
    if tx <= GENESIS_TX {
        return Err(format!("tx {tx} is at or before genesis ({GENESIS_TX})"));
    }
    Ok(Line {
        e,
        ident,
        value,
        tx,
        added,
    })
}

fn shape_error(form: &Edn) -> String {
    format!("expected [entity attribute value tx added], found {form}")
}

fn entity_id(n: i64, what: &str) -> Result<EntityId, String> {
    u64::try_from(n).map_err(|_| format!("{what} {n} is not an entity id"))
}

/// The line as a datom, its value typed by its attribute in `schema`.
fn typed_datom(line: Line, schema: &Schema) -> Result<(Keyword, Datom), String> {
    let Line {
        e,
        ident,
        value,
        tx,
        added,
    } = line;
    let attribute = schema.attribute_named(&ident).map_err(|_| {
        format!("unknown attribute {ident} (attributes must be installed before use)")
    })?;
    let v = match (attribute.value_type, &value) {
        (ValueType::Ref, Edn::Int(n)) => Value::Ref(entity_id(*n, "ref")?),
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
    let datom = Datom {
        e: entity_id(e, "entity")?,
        a: attribute.id,
        v,
        tx,
        added,
    };
    Ok((ident, datom))
}
