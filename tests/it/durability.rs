//! Durable stores: reopening, format versions, export and import.

use std::io::{BufReader, Cursor};

use forkful::store::{export, import};
use forkful::store::{kw, OpenError, Store, TransactError, Transaction, TransferError, Value};

use crate::helpers::{add_recipe, everything, raw_sled, schema_tx, stored};

fn durable_store(dir: &std::path::Path) -> Store {
    let store = Store::open(dir).unwrap();
    store.transact(&schema_tx()).unwrap();
    store
}

/// A store with a little history: recipes, edits, a retraction.
fn with_history(store: &Store) {
    let id = add_recipe(store, "dal", "Dal");
    add_recipe(store, "khichdi", "Khichdi");
    let mut tx = Transaction::new();
    tx.add(id, ":recipe/title", "Dal tadka")
        .add(id, ":recipe/rating", 4.25)
        .add(id, ":recipe/created", Value::Instant(-86_400_000))
        .add(id, ":recipe/vegetarian", true)
        .add(id, ":recipe/kind", kw(":kind/main"))
        .add(id, ":recipe/uuid", Value::Uuid([9; 16]))
        .add(
            id,
            ":recipe/tags",
            "line one\n\"quoted\" \\ and ; not a comment",
        )
        .tx_attr(":tx/note", "edit");
    store.transact(&tx).unwrap();
    let mut tx = Transaction::new();
    tx.retract(id, ":recipe/vegetarian", true);
    store.transact(&tx).unwrap();
}

#[test]
fn a_durable_store_reopens_with_every_datom_and_the_same_basis() {
    let dir = tempfile::tempdir().unwrap();
    let before = {
        let store = durable_store(dir.path());
        with_history(&store);
        everything(&store)
    };
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(everything(&store), before);
    // It goes on from where it was: new ids do not collide with old ones.
    let id = add_recipe(&store, "new", "New");
    assert!(before.1.iter().all(|(_, d)| d.e != id && d.tx < id));
}

#[test]
fn a_store_of_another_format_version_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    drop(Store::open(dir.path()).unwrap());
    {
        let sled = raw_sled(dir.path());
        sled.insert(b"\x00format", &99u32.to_be_bytes()).unwrap();
        sled.flush().unwrap();
    }
    let error = Store::open(dir.path())
        .err()
        .expect("another version is refused");
    assert!(
        matches!(error, OpenError::FormatVersion { expected, .. } if expected == forkful::store::FORMAT_VERSION),
        "{error}"
    );
    assert!(
        error.to_string().contains(&format!(
            "has format version 99, but this build reads version {}",
            forkful::store::FORMAT_VERSION
        )),
        "{error}"
    );
}

#[test]
fn a_directory_that_is_not_a_forkful_store_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    {
        let sled = raw_sled(dir.path());
        sled.insert(b"something", b"else").unwrap();
        sled.flush().unwrap();
    }
    let error = Store::open(dir.path()).err().expect("refused");
    assert!(error.to_string().contains("not a forkful store"), "{error}");
}

#[test]
fn a_store_of_an_older_layout_is_refused_with_its_version_and_nothing_changes() {
    // Stores before format 5 were sled databases of sled's default segment
    // size, which sled will not open with another.
    let dir = tempfile::tempdir().unwrap();
    {
        let sled = sled::open(dir.path()).unwrap();
        sled.insert(b"\x00format", &2u32.to_be_bytes()).unwrap();
        sled.insert(b"\x01some datom", b"").unwrap();
        sled.flush().unwrap();
    }
    let error = Store::open(dir.path()).err().expect("refused");
    let shown = error.to_string();
    assert!(
        shown.contains(&format!(
            "has format version 2, but this build reads version {}",
            forkful::store::FORMAT_VERSION
        )) && shown.contains("export it with the build that wrote it"),
        "{shown}"
    );
    let sled = sled::open(dir.path()).unwrap();
    let keys: Vec<_> = sled.iter().keys().map(|k| k.unwrap().to_vec()).collect();
    assert_eq!(
        keys,
        vec![b"\x00format".to_vec(), b"\x01some datom".to_vec()]
    );
}

fn exported(store: &Store) -> String {
    let mut out = Vec::new();
    export(&store.db(), &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn export_then_import_round_trips_a_store_exactly() {
    let source = Store::temporary().unwrap();
    source.transact(&schema_tx()).unwrap();
    with_history(&source);
    let text = exported(&source);
    assert!(text.lines().count() > 20);
    assert!(text.contains(":recipe/rating 4.25"), "{text}");
    assert!(
        text.contains("#inst \"1969-12-31T00:00:00.000Z\""),
        "{text}"
    );

    let target = Store::temporary().unwrap();
    let summary = import(&target, || Ok(BufReader::new(Cursor::new(text.clone())))).unwrap();
    assert_eq!(summary.basis, source.db().basis());
    assert_eq!(
        everything(&target),
        everything(&source),
        "every datom of every index, history too"
    );
    assert_eq!(
        exported(&target),
        text,
        "exporting again gives the same file"
    );
    // The imported store goes on like the original.
    add_recipe(&target, "after-import", "After");
}

/// A transaction's first line may use an attribute the transaction before it
/// installed: the export writes a transaction's datoms in key order, so a
/// datom on a low entity id comes before the transaction's instant. (Found
/// by the export fuzz check: the import read such a line against the schema
/// before the last transaction, and refused its own export.)
#[test]
fn a_transaction_may_open_with_an_attribute_the_one_before_installed() {
    let text = [
        "[40 :db/ident :note/text 40 true]",
        "[40 :db/valueType :db.type/string 40 true]",
        "[40 :db/cardinality :db.cardinality/one 40 true]",
        "[40 :db/txInstant #inst \"2020-01-01T00:00:00.000Z\" 40 true]",
        "[4 :note/text \"on a low entity\" 41 true]",
        "[41 :db/txInstant #inst \"2020-01-02T00:00:00.000Z\" 41 true]",
    ]
    .join("\n");
    let target = Store::temporary().unwrap();
    let summary = import(&target, || Ok(BufReader::new(Cursor::new(text.clone())))).unwrap();
    assert_eq!(summary.transactions, 2);
    let again = Store::temporary().unwrap();
    let copied = exported(&target);
    import(&again, || Ok(BufReader::new(Cursor::new(copied.clone())))).unwrap();
    assert_eq!(everything(&again), everything(&target));
    assert_eq!(exported(&again), copied, "exporting is a fixed point");
}

#[test]
fn a_bad_import_file_is_refused_with_its_line_and_writes_nothing() {
    let source = Store::temporary().unwrap();
    source.transact(&schema_tx()).unwrap();
    with_history(&source);
    let good = exported(&source);
    let lines: Vec<&str> = good.lines().collect();
    let at = lines.len() + 1;
    let (dal, khichdi) = (entity_of(&good, "dal"), entity_of(&good, "khichdi"));
    let uuid_line = lines
        .iter()
        .find(|l| l.contains(":recipe/uuid #uuid"))
        .unwrap();
    let uuid = &uuid_line[uuid_line.find("#uuid").unwrap()..uuid_line.rfind('"').unwrap() + 1];
    let unique_clash = format!("[{khichdi} :recipe/uuid {uuid} 999 true]");
    let second_title = format!("[{dal} :recipe/title \"Another title\" 999 true]");
    let long_line = format!("[{dal} :recipe/title \"{}\" 999 true]", "x".repeat(1 << 20));
    let cases = [
        (
            unique_clash.as_str(),
            "the transaction starting here: unique clash on :recipe/uuid",
        ),
        (
            second_title.as_str(),
            "would hold 2 values of the cardinality-one :recipe/title",
        ),
        (
            "[999 :db/txInstant #inst \"2000-01-01T00:00:00Z\" 999 true]",
            "instants never go back",
        ),
        (
            "[999 :db/txInstant #inst \"+10000-01-01T00:00:00.000Z\" 999 true]",
            "bad instant",
        ),
        (long_line.as_str(), "longer than 1048576 bytes"),
        ("[1 2 3", "unterminated"),
        (
            "[100 :recipe/colour \"red\" 999 true]",
            "unknown attribute :recipe/colour",
        ),
        (
            "[100 :recipe/serves \"four\" 999 true]",
            "takes Long values",
        ),
        ("[100 :recipe/title \"x\" 3 true]", "at or before genesis"),
        (
            "{:not \"a datom\"}",
            "expected [entity attribute value tx added]",
        ),
    ];
    for (bad_line, expect) in cases {
        let mut broken: Vec<&str> = lines.clone();
        broken.push(bad_line);
        let text = broken.join("\n");
        let target = Store::temporary().unwrap();
        let before = everything(&target);
        let raw = stored(&target);
        let error = import(&target, || Ok(BufReader::new(Cursor::new(text.clone())))).unwrap_err();
        let shown: String = bad_line.chars().take(80).collect();
        assert!(error.to_string().contains(expect), "{shown}: {error}");
        assert!(
            error.to_string().contains(&format!("line {at}:")),
            "{error}"
        );
        assert_eq!(
            everything(&target),
            before,
            "{shown}: the failed import wrote something"
        );
        assert!(stored(&target) == raw, "{shown}: a key changed");
    }
    // Out of order transactions are refused too.
    let mut shuffled: Vec<&str> = lines.clone();
    let last = shuffled.pop().unwrap();
    shuffled.insert(3, last);
    let target = Store::temporary().unwrap();
    let error = import(&target, || {
        Ok(BufReader::new(Cursor::new(shuffled.join("\n"))))
    })
    .unwrap_err();
    assert!(error.to_string().contains("tx order"), "{error}");
    assert!(target.is_empty());
}

#[test]
fn an_import_transaction_over_the_size_limit_is_refused_at_its_line() {
    let mut text = String::new();
    for n in 0..=forkful::store::MAX_TX_DATOMS {
        text.push_str(&format!("[{} :db/doc \"x\" 40 true]\n", 1000 + n));
    }
    let target = Store::temporary().unwrap();
    let raw = stored(&target);
    let error = import(&target, || Ok(BufReader::new(Cursor::new(text.clone())))).unwrap_err();
    let limit = forkful::store::MAX_TX_DATOMS;
    assert!(
        error.to_string().contains(&format!("line {}:", limit + 1)),
        "{error}"
    );
    assert!(error
        .to_string()
        .contains("the most one transaction may write"));
    assert!(stored(&target) == raw);
}

#[test]
fn an_import_transaction_over_the_byte_limit_is_refused_at_its_line() {
    let title = "x".repeat(1_000_000);
    let count = forkful::store::MAX_TX_BYTES / 1_000_000 + 1;
    let text: String = (0..count)
        .map(|n| format!("[{} :db/doc \"{title}\" 40 true]\n", 1000 + n))
        .collect();
    let target = Store::temporary().unwrap();
    let raw = stored(&target);
    let error = import(&target, || Ok(BufReader::new(Cursor::new(text.clone())))).unwrap_err();
    assert!(
        error.to_string().contains(&format!("line {count}:")),
        "{error}"
    );
    assert!(error.to_string().contains("bytes of values"), "{error}");
    assert!(stored(&target) == raw);
}

#[test]
fn import_refuses_a_store_that_is_not_empty() {
    let source = Store::temporary().unwrap();
    source.transact(&schema_tx()).unwrap();
    let text = exported(&source);
    let error = import(&source, || Ok(BufReader::new(Cursor::new(text.clone())))).unwrap_err();
    assert!(
        error.to_string().contains("needs an empty store"),
        "{error}"
    );
}

#[test]
fn a_store_another_handle_holds_open_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let _held = Store::open(dir.path()).unwrap();
    let error = Store::open(dir.path())
        .err()
        .expect("a second open is refused");
    assert!(matches!(error, OpenError::Locked(_)), "{error}");
    assert!(
        error.to_string().contains("in use by another process"),
        "{error}"
    );
}

/// The export of a store made through the domain: an original and a fork.
fn recipe_export() -> String {
    use forkful::domain::{Change, ContentDraft, Recipes, Slug, Step};
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    let content = ContentDraft {
        title: "Root".into(),
        ingredients: vec!["1 egg".into()],
        steps: vec![Step {
            section: None,
            text: "Cook.".into(),
        }],
        ..ContentDraft::default()
    };
    let root = Slug::parse("root").unwrap();
    recipes
        .create(&root, content, &Change::by("ann", "new"))
        .unwrap();
    recipes
        .fork(
            &root,
            Some(crate::helpers::v(1)),
            Some(&Slug::parse("child").unwrap()),
            |c| c,
            &Change::by("ben", "fork"),
        )
        .unwrap();
    exported(recipes.store())
}

/// Imports `text` with the domain's checks into a fresh store, expecting
/// `words` at `line` and nothing written.
fn refused_by_the_domain(text: &str, line: usize, words: &str) {
    use forkful::domain::import_check::RecipeImportCheck;
    use forkful::store::import_with;
    let target = Store::temporary().unwrap();
    let raw = stored(&target);
    let error = import_with(
        &target,
        || Ok(BufReader::new(Cursor::new(text.to_owned()))),
        &mut RecipeImportCheck::default(),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(error.to_string().contains(words), "{error}");
    assert!(
        error.to_string().contains(&format!("line {line}:")),
        "{error}"
    );
    assert!(stored(&target) == raw, "a refused import wrote something");
}

/// The entity id of the recipe with `slug`, as an export file writes it.
fn entity_of(export: &str, slug: &str) -> String {
    let line = export
        .lines()
        .find(|l| l.contains(&format!(":recipe/slug \"{slug}\"")))
        .unwrap();
    line[1..].split(' ').next().unwrap().to_owned()
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

#[test]
fn an_import_breaking_the_domain_rules_is_refused_before_anything_is_written() {
    use forkful::domain::import_check::RecipeImportCheck;
    use forkful::store::import_with;
    let good = recipe_export();
    // The untouched file imports with the checks.
    let target = Store::temporary().unwrap();
    import_with(
        &target,
        || Ok(BufReader::new(Cursor::new(good.clone()))),
        &mut RecipeImportCheck::default(),
        &mut |_| {},
    )
    .unwrap();

    let bad_slug = good.replace(":recipe/slug \"root\"", ":recipe/slug \"Not A Slug\"");
    refused_by_the_domain(
        &bad_slug,
        line_of(&bad_slug, "Not A Slug"),
        "is not a recipe slug",
    );

    let too_far = good.replace(
        ":recipe/forked-at-version 1 ",
        ":recipe/forked-at-version 7 ",
    );
    refused_by_the_domain(
        &too_far,
        line_of(&too_far, ":recipe/forked-at-version 7"),
        "forks version 7",
    );

    // The original made a fork of its own fork: a cycle.
    let (root, child) = (entity_of(&good, "root"), entity_of(&good, "child"));
    let cycle = format!("{good}[{root} :recipe/forked-from {child} 9999 true]\n");
    refused_by_the_domain(
        &cycle,
        line_of(&cycle, &format!("[{root} :recipe/forked-from")),
        "runs in a cycle",
    );
}

#[test]
fn a_store_left_by_an_import_that_failed_half_way_is_refused_when_opened() {
    let source = Store::temporary().unwrap();
    source.transact(&schema_tx()).unwrap();
    with_history(&source);
    let text = exported(&source);
    let dir = tempfile::tempdir().unwrap();
    {
        let target = Store::open(dir.path()).unwrap();
        target.inject_flush_fault(forkful::store::testing::FlushFault::Error);
        let error = import(&target, || Ok(BufReader::new(Cursor::new(text.clone())))).unwrap_err();
        assert!(
            matches!(error, TransferError::Transact(TransactError::Poisoned(_))),
            "{error}"
        );
    }
    let error = Store::open(dir.path())
        .err()
        .expect("a half-imported store is refused");
    assert!(matches!(error, OpenError::UnfinishedImport(_)), "{error}");
    assert!(error.to_string().contains("did not finish"), "{error}");
}

#[test]
fn an_import_whose_file_changes_between_its_check_and_its_write_is_undone() {
    // The check pass reads the file once, the write pass again: a file
    // that grew in between would write what was never checked.
    let source = Store::temporary().unwrap();
    source.transact(&schema_tx()).unwrap();
    with_history(&source);
    let text = exported(&source);
    // A line is `[e a v tx added]`, and a value may hold spaces: the tx is
    // the second field from the end.
    let tx_of = |line: &str| line.split(' ').rev().nth(1).map(str::to_owned);
    let last_tx = tx_of(text.lines().last().unwrap());
    let checked: String = text
        .lines()
        .filter(|line| tx_of(line) != last_tx)
        .map(|line| format!("{line}\n"))
        .collect();
    assert!(
        checked.len() < text.len(),
        "the last transaction is left out"
    );
    let target = Store::temporary().unwrap();
    let mut passes = [checked, text].into_iter();
    let error = import(&target, || {
        Ok(BufReader::new(Cursor::new(passes.next().unwrap())))
    })
    .unwrap_err();
    assert!(
        matches!(&error, TransferError::Import { .. }) && error.to_string().contains("changed"),
        "{error}"
    );
    assert!(target.is_empty(), "nothing of it stays");
}

#[test]
fn every_acknowledged_write_to_a_store_in_a_directory_is_synced_for_power_loss() {
    // sled's flush alone leaves the bytes to the kernel and the device's
    // cache (`store::fsync`): the store syncs its files after each flush,
    // before it acknowledges. A temporary store has no files to sync.
    let dir = tempfile::tempdir().unwrap();
    let store = durable_store(dir.path());
    let before = store.stats();
    store.transact(&schema_tx()).unwrap();
    let keys = store.keyspace("test").unwrap();
    keys.insert(b"k", b"v").unwrap();
    let after = store.stats();
    assert!(after.flushes >= before.flushes + 2, "{after:?}");
    assert_eq!(after.synced - before.synced, after.flushes - before.flushes);
    let temporary = Store::temporary().unwrap();
    temporary.transact(&schema_tx()).unwrap();
    assert!(temporary.stats().flushes > 0);
    assert_eq!(temporary.stats().synced, 0);
}
