//! What the store promises when a flush fails or panics: nothing that was
//! not acknowledged becomes durable or visible, no writer waits forever,
//! and the schema is seen only with the basis that installed it.

use std::sync::mpsc;
use std::time::Duration;

use forkful::store::attribute_map;
use forkful::store::testing::FlushFault;
use forkful::store::{kw, Cardinality, Store, TransactError, Transaction, ValueType};

use crate::helpers::{add_recipe, everything, schema_tx, stored};

fn durable_store(dir: &std::path::Path) -> Store {
    let store = Store::open(dir).unwrap();
    store.transact(&schema_tx()).unwrap();
    store
}

fn title_tx(slug: &str) -> Transaction {
    let mut tx = Transaction::new();
    tx.map(crate::helpers::recipe("r", slug, "Unacknowledged"));
    tx
}

#[test]
fn after_a_failed_flush_nothing_is_written_and_the_failed_write_never_lands() {
    let dir = tempfile::tempdir().unwrap();
    let acknowledged = {
        let store = durable_store(dir.path());
        add_recipe(&store, "kept", "Kept");
        let acknowledged = stored(&store);
        let basis = store.db().basis();
        store.inject_flush_fault(FlushFault::Error);
        let error = store.transact(&title_tx("lost")).unwrap_err();
        assert!(matches!(error, TransactError::Poisoned(_)), "{error}");
        assert_eq!(store.db().basis(), basis, "readers never see it");
        assert!(
            stored(&store) == acknowledged,
            "the failed batch is taken back out of sled"
        );
        let later = store.transact(&title_tx("later")).unwrap_err();
        assert!(matches!(later, TransactError::Poisoned(_)), "{later}");
        assert!(store.flush().is_err(), "a poisoned store refuses to flush");
        acknowledged
    };
    let reopened = Store::open(dir.path()).unwrap();
    // Byte for byte, as the lost write split no AVET chunk (see the next
    // test for one that does).
    assert!(
        stored(&reopened) == acknowledged,
        "after reopening, the store is exactly what was acknowledged"
    );
    let db = reopened.db();
    let slug = db.attribute(&kw(":recipe/slug")).unwrap().id;
    for absent in ["lost", "later"] {
        assert_eq!(
            db.entity_with(slug, &forkful::store::Value::from(absent))
                .unwrap(),
            None
        );
    }
    add_recipe(&reopened, "after", "A reopened store writes again");
}

/// A lost write that split an AVET chunk (a value held by more entities
/// than a chunk holds) leaves the split pieces in place but none of its
/// records: the transaction that takes its tx and entity ids after a
/// reopen must not inherit them.
#[test]
fn a_lost_write_that_split_a_chunk_leaves_none_of_its_records() {
    let dir = tempfile::tempdir().unwrap();
    let created = kw(":recipe/created");
    let same_day = forkful::store::Value::Instant(86_400_000);
    let dated = |store: &Store, slug: &str| {
        let mut tx = Transaction::new();
        tx.map(
            crate::helpers::recipe("r", slug, "Dated").with(":recipe/created", same_day.clone()),
        );
        store.transact(&tx)
    };
    let on_the_day = |store: &Store| {
        let db = store.db();
        let a = db.attribute(&created).unwrap().id;
        db.datoms(
            forkful::store::Index::Avet,
            &forkful::store::Components::any().a(a).v(same_day.clone()),
        )
        .count()
    };
    let before = {
        let store = durable_store(dir.path());
        // A chunk's worth (64): the lost write's record is the one that
        // splits it.
        for i in 0..64 {
            dated(&store, &format!("dated-{i}")).unwrap();
        }
        assert_eq!(on_the_day(&store), 64);
        let before = everything(&store);
        store.inject_flush_fault(FlushFault::Error);
        let error = dated(&store, "lost").unwrap_err();
        assert!(matches!(error, TransactError::Poisoned(_)), "{error}");
        before
    };
    let reopened = Store::open(dir.path()).unwrap();
    assert_eq!(everything(&reopened), before);
    assert_eq!(reopened.verify_current_entries().map(|_| ()), Ok(()));
    // The next write gets the lost one's tx and entity ids.
    add_recipe(&reopened, "undated", "Not on the day");
    assert_eq!(
        on_the_day(&reopened),
        64,
        "no record of the lost write came back"
    );
    assert_eq!(reopened.verify_current_entries().map(|_| ()), Ok(()));
}

/// An undo that could not clear every AVET chunk leaves a mark, and the
/// store clears the records past its basis when it next opens: a chunk
/// left holding one (put there by hand) does not show it once the basis
/// passes its tx.
#[test]
fn a_store_marked_uncleared_clears_its_chunks_when_it_opens() {
    use forkful::store::testing::datom_key;
    use forkful::store::{Datom, Index};
    let dir = tempfile::tempdir().unwrap();
    let same_day = forkful::store::Value::Instant(86_400_000);
    let (a, basis) = {
        let store = durable_store(dir.path());
        for i in 0..3 {
            let mut tx = Transaction::new();
            tx.map(
                crate::helpers::recipe("r", &format!("dated-{i}"), "Dated")
                    .with(":recipe/created", same_day.clone()),
            );
            store.transact(&tx).unwrap();
        }
        let db = store.db();
        (db.attribute(&kw(":recipe/created")).unwrap().id, db.basis())
    };
    let on_the_day = |store: &Store| {
        let c = forkful::store::Components::any().a(a).v(same_day.clone());
        store.db().datoms(Index::Avet, &c).count()
    };
    // A record of a transaction past the basis, as an undo that failed
    // to clear would leave, and the mark. The value's one chunk starts at
    // entity 0 (see `store::postings`).
    let sled = sled::Config::new()
        .path(dir.path())
        .segment_size(forkful::store::testing::SEGMENT_BYTES)
        .open()
        .unwrap();
    let per_datom = |e, tx| {
        let v = same_day.clone();
        datom_key(
            Index::Avet,
            &Datom {
                e,
                a,
                v,
                tx,
                added: true,
            },
        )
    };
    let leftover = per_datom(1 << 40, basis + 1);
    let value = &leftover[..leftover.len() - 17];
    let chunk = [value, &0u64.to_be_bytes()].concat();
    let records = sled.get(&chunk).unwrap().expect("the value's chunk");
    let record = &leftover[leftover.len() - 17..];
    sled.insert(&chunk, [&records[..], record].concat())
        .unwrap();
    sled.insert(b"\x00avet-uncleared", &[] as &[u8]).unwrap();
    sled.flush().unwrap();
    drop(sled);
    let reopened = Store::open(dir.path()).unwrap();
    assert_eq!(on_the_day(&reopened), 3);
    // The next write's tx passes the leftover record's.
    add_recipe(&reopened, "undated", "Not on the day");
    assert!(reopened.db().basis() > basis + 1);
    assert_eq!(on_the_day(&reopened), 3, "the leftover record was cleared");
}

#[test]
fn a_flush_that_panics_wakes_every_writer_waiting_on_it() {
    let store = durable_store(tempfile::tempdir().unwrap().path());
    store.inject_flush_fault(FlushFault::Panic);
    let panicking = {
        let store = store.clone();
        std::thread::spawn(move || store.transact(&title_tx("first")))
    };
    // A second writer applies its batch and waits on the panicking flush.
    std::thread::sleep(Duration::from_millis(50));
    let (sent, received) = mpsc::channel();
    {
        let store = store.clone();
        std::thread::spawn(move || {
            let _ = sent.send(store.transact(&title_tx("second")));
        });
    }
    let waiting = received
        .recv_timeout(Duration::from_secs(20))
        .expect("the waiting writer is woken, not left waiting forever");
    assert!(
        matches!(waiting, Err(TransactError::Poisoned(_))),
        "{waiting:?}"
    );
    assert!(panicking.join().is_err(), "the flushing writer panicked");
    assert!(store.transact(&title_tx("third")).is_err());
}

#[test]
fn a_new_attribute_is_invisible_until_its_transaction_is_durable() {
    let store = durable_store(tempfile::tempdir().unwrap().path());
    let mut tx = Transaction::new();
    tx.map(attribute_map(
        ":recipe/colour",
        ValueType::String,
        Cardinality::One,
        None,
    ));
    store.inject_flush_fault(FlushFault::Error);
    assert!(store.transact(&tx).is_err());
    assert!(
        store.db().attribute(&kw(":recipe/colour")).is_err(),
        "an attribute whose transaction never became durable is not in the schema"
    );
}

#[test]
fn a_panic_inside_a_transaction_function_leaves_the_store_writable() {
    let store = durable_store(tempfile::tempdir().unwrap().path());
    let before = stored(&store);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        store.transact_with(|_| -> Result<(Transaction, ()), TransactError> {
            panic!("a bug in a transaction function")
        })
    }));
    assert!(outcome.is_err());
    assert!(stored(&store) == before);
    add_recipe(&store, "fine", "Still writable");
}

#[test]
fn a_transaction_over_the_size_limit_is_refused_and_writes_nothing() {
    let store = durable_store(tempfile::tempdir().unwrap().path());
    let before = stored(&store);
    let mut tx = Transaction::new();
    for n in 0..forkful::store::MAX_TX_DATOMS {
        tx.map(crate::helpers::recipe(
            &format!("r{n}"),
            &format!("bulk-{n}"),
            "Bulk",
        ));
    }
    let error = store.transact(&tx).unwrap_err();
    assert!(matches!(error, TransactError::TooLarge { .. }), "{error}");
    assert!(error.to_string().contains("split it"), "{error}");
    assert!(stored(&store) == before);
}

#[test]
fn a_transaction_over_the_byte_limit_is_refused_and_writes_nothing() {
    let store = durable_store(tempfile::tempdir().unwrap().path());
    let before = stored(&store);
    let title = "x".repeat(1 << 20);
    let mut tx = Transaction::new();
    for n in 0..(forkful::store::MAX_TX_BYTES >> 20) + 1 {
        tx.map(crate::helpers::recipe(
            &format!("r{n}"),
            &format!("big-{n}"),
            &title,
        ));
    }
    let error = store.transact(&tx).unwrap_err();
    assert!(matches!(error, TransactError::TooLarge { .. }), "{error}");
    assert!(error.to_string().contains("bytes"), "{error}");
    assert!(stored(&store) == before);
}

/// A transaction applied to sled but not yet durable is invisible: readers
/// get the published basis, which moves only once a flush covers it.
#[test]
fn a_transaction_is_invisible_to_readers_until_its_flush_returns() {
    let store = durable_store(tempfile::tempdir().unwrap().path());
    store.transact(&title_tx("before")).unwrap();
    let published = store.db().basis();
    let slug = |db: &forkful::store::Db, s: &str| {
        let a = db.attribute(&kw(":recipe/slug")).unwrap().id;
        db.entity_with(a, &s.into()).unwrap().is_some()
    };
    store.inject_flush_fault(FlushFault::Slow);
    let writer = store.clone();
    let slow = std::thread::spawn(move || writer.transact(&title_tx("during")));
    // Well inside the slow flush (a second): the batch applied long since.
    std::thread::sleep(Duration::from_millis(300));
    assert!(!slow.is_finished(), "the flush is still running");
    let db = store.db();
    assert_eq!(db.basis(), published, "readers keep the published basis");
    assert!(!slug(&db, "during"), "an undurable recipe is not seen");
    let report = slow.join().unwrap().unwrap();
    let db = store.db();
    assert_eq!(db.basis(), report.basis_after);
    assert!(slug(&db, "during"));
}
