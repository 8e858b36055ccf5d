//! What transactions write, and that bad ones write nothing at all.

use forkful::store::{
    kw, EntityMap, EntityRef, Store, TransactError, Transaction, TxValue, UnknownAttribute, Value,
};

use crate::helpers::{add_recipe, everything, recipe, store, stored};

fn slug_ref(slug: &str) -> EntityRef {
    EntityRef::Lookup(kw(":recipe/slug"), Value::from(slug))
}

#[test]
fn an_entity_map_with_nested_components_reads_back_whole() {
    let store = store();
    let id = add_recipe(&store, "shakshuka", "Shakshuka");
    let db = store.db();
    let entity = db.entity(id).unwrap();
    assert_eq!(
        entity.get(&kw(":recipe/title")),
        Some(&Value::from("Shakshuka"))
    );
    let ingredients = entity.get_all(&kw(":recipe/ingredients"));
    assert_eq!(ingredients.len(), 2);
    let items: Vec<_> = ingredients
        .iter()
        .map(|r| {
            db.entity(r.as_ref().unwrap())
                .unwrap()
                .get(&kw(":ingredient/item"))
                .cloned()
        })
        .collect();
    assert_eq!(
        items,
        [Some(Value::from("eggs")), Some(Value::from("tomatoes"))]
    );
}

#[test]
fn the_report_gives_bases_tempids_and_every_datom() {
    let store = store();
    let before = store.db().basis();
    let mut tx = Transaction::new();
    tx.map(recipe("r", "dal", "Dal"))
        .tx_attr(":tx/note", "first");
    let report = store.transact(&tx).unwrap();
    assert_eq!(report.basis_before, before);
    assert!(report.basis_after > before);
    assert_eq!(store.db().basis(), report.basis_after);
    let id = report.tempid("r").unwrap();
    // slug, title, 2 ingredient refs, 2x2 ingredient facts, note, instant.
    assert_eq!(report.datoms.len(), 10);
    assert!(report
        .datoms
        .iter()
        .all(|d| d.added && d.tx == report.basis_after));
    assert!(report
        .datoms
        .iter()
        .any(|d| d.e == id && d.v == Value::from("Dal")));
    assert!(report
        .datoms
        .iter()
        .any(|d| d.e == report.basis_after && d.v == Value::from("first")));
}

#[test]
fn cardinality_one_replaces_and_retracts_the_old_value() {
    let store = store();
    let id = add_recipe(&store, "dal", "Dal");
    let mut tx = Transaction::new();
    tx.add(id, ":recipe/title", "Dal tadka");
    let report = store.transact(&tx).unwrap();
    let title = store.db().attribute(&kw(":recipe/title")).unwrap().id;
    let facts: Vec<_> = report
        .datoms
        .iter()
        .filter(|d| d.a == title)
        .map(|d| (d.v.clone(), d.added))
        .collect();
    assert_eq!(
        facts,
        [
            (Value::from("Dal"), false),
            (Value::from("Dal tadka"), true)
        ]
    );
    assert_eq!(
        store.db().values(id, title).unwrap(),
        [Value::from("Dal tadka")]
    );
}

#[test]
fn cardinality_many_accumulates_values() {
    let store = store();
    let id = add_recipe(&store, "dal", "Dal");
    for tag in ["lentils", "vegan", "lentils"] {
        let mut tx = Transaction::new();
        tx.add(id, ":recipe/tags", tag);
        store.transact(&tx).unwrap();
    }
    let tags = store.db().attribute(&kw(":recipe/tags")).unwrap().id;
    assert_eq!(
        store.db().values(id, tags).unwrap(),
        [Value::from("lentils"), Value::from("vegan")]
    );
}

#[test]
fn asserting_what_already_holds_writes_only_the_transaction() {
    let store = store();
    let id = add_recipe(&store, "dal", "Dal");
    let mut tx = Transaction::new();
    tx.add(id, ":recipe/title", "Dal");
    let report = store.transact(&tx).unwrap();
    assert!(
        report.datoms.iter().all(|d| d.e == report.basis_after),
        "{:?}",
        report.datoms
    );
}

#[test]
fn a_tempid_with_an_existing_identity_upserts() {
    let store = store();
    let id = add_recipe(&store, "dal", "Dal");
    let mut tx = Transaction::new();
    tx.map(
        EntityMap::new(EntityRef::temp("again"))
            .with(":recipe/slug", "dal")
            .with(":recipe/serves", 4i64),
    );
    let report = store.transact(&tx).unwrap();
    assert_eq!(report.tempid("again"), Some(id));
    let entity = store.db().entity(id).unwrap();
    assert_eq!(entity.get(&kw(":recipe/serves")), Some(&Value::Long(4)));
    assert_eq!(entity.get(&kw(":recipe/title")), Some(&Value::from("Dal")));
}

#[test]
fn lookup_refs_name_entities_by_unique_values() {
    let store = store();
    let id = add_recipe(&store, "dal", "Dal");
    let parent = add_recipe(&store, "khichdi", "Khichdi");
    let mut tx = Transaction::new();
    tx.add(
        slug_ref("dal"),
        ":recipe/forked-from",
        TxValue::Entity(slug_ref("khichdi")),
    );
    store.transact(&tx).unwrap();
    let forked_from = store.db().attribute(&kw(":recipe/forked-from")).unwrap().id;
    assert_eq!(
        store.db().value(id, forked_from).unwrap(),
        Some(Value::Ref(parent))
    );
}

#[test]
fn retract_removes_one_value_and_retract_all_removes_every_value() {
    let store = store();
    let id = add_recipe(&store, "dal", "Dal");
    let mut tx = Transaction::new();
    tx.add(id, ":recipe/tags", "a")
        .add(id, ":recipe/tags", "b")
        .add(id, ":recipe/tags", "c");
    store.transact(&tx).unwrap();
    let tags = store.db().attribute(&kw(":recipe/tags")).unwrap().id;
    let mut tx = Transaction::new();
    tx.retract(id, ":recipe/tags", "b");
    store.transact(&tx).unwrap();
    assert_eq!(
        store.db().values(id, tags).unwrap(),
        [Value::from("a"), Value::from("c")]
    );
    let mut tx = Transaction::new();
    tx.retract_all(id, ":recipe/tags");
    store.transact(&tx).unwrap();
    assert!(store.db().values(id, tags).unwrap().is_empty());
}

#[test]
fn retract_entity_follows_components_and_refs_pointing_in() {
    let store = store();
    let parent = add_recipe(&store, "khichdi", "Khichdi");
    let child = add_recipe(&store, "dal", "Dal");
    let mut tx = Transaction::new();
    tx.add(
        child,
        ":recipe/forked-from",
        TxValue::Entity(EntityRef::Id(parent)),
    );
    store.transact(&tx).unwrap();
    let components: Vec<u64> = store
        .db()
        .entity(parent)
        .unwrap()
        .get_all(&kw(":recipe/ingredients"))
        .iter()
        .map(|v| v.as_ref().unwrap())
        .collect();
    assert_eq!(components.len(), 2);

    let mut tx = Transaction::new();
    tx.retract_entity(parent);
    store.transact(&tx).unwrap();
    let db = store.db();
    assert!(db.entity(parent).unwrap().is_empty());
    for component in components {
        assert!(
            db.entity(component).unwrap().is_empty(),
            "component {component} is gone too"
        );
    }
    let forked_from = db.attribute(&kw(":recipe/forked-from")).unwrap().id;
    assert_eq!(
        db.value(child, forked_from).unwrap(),
        None,
        "the ref to it is retracted"
    );
    assert_eq!(
        db.entity(child).unwrap().get(&kw(":recipe/title")),
        Some(&Value::from("Dal"))
    );
    // Nothing is lost: the past still has it.
    let before = db.as_of(db.basis() - 1);
    assert_eq!(
        before.entity(parent).unwrap().get(&kw(":recipe/title")),
        Some(&Value::from("Khichdi"))
    );
}

#[test]
fn compare_and_swap_sets_only_when_the_value_is_as_expected() {
    let store = store();
    let id = add_recipe(&store, "dal", "Dal");
    let mut tx = Transaction::new();
    tx.cas(id, ":recipe/serves", None, 2i64);
    store.transact(&tx).unwrap();
    let mut tx = Transaction::new();
    tx.cas(id, ":recipe/serves", Some(2i64.into()), 4i64);
    store.transact(&tx).unwrap();
    let serves = store.db().attribute(&kw(":recipe/serves")).unwrap().id;
    assert_eq!(store.db().value(id, serves).unwrap(), Some(Value::Long(4)));
}

#[test]
fn transaction_attributes_and_instant_are_recorded() {
    let store = store();
    let last = store.db().tx_instant(store.db().basis()).unwrap().unwrap();
    let later = last + 86_400_000;
    let mut tx = Transaction::new();
    tx.map(recipe("r", "dal", "Dal"))
        .tx_attr(":tx/note", "from grandma's card")
        .tx_attr(":db/txInstant", Value::Instant(later));
    let report = store.transact(&tx).unwrap();
    let db = store.db();
    assert_eq!(report.tx_instant, later);
    assert_eq!(db.tx_instant(report.basis_after).unwrap(), Some(later));
    assert_eq!(
        db.entity(report.basis_after).unwrap().get(&kw(":tx/note")),
        Some(&Value::from("from grandma's card"))
    );
}

#[test]
fn installed_attributes_can_be_used_by_later_transactions() {
    let store = store();
    let mut tx = Transaction::new();
    tx.map(
        EntityMap::anonymous()
            .with(":db/ident", kw(":recipe/cuisine"))
            .with(":db/valueType", kw(":db.type/string"))
            .with(":db/cardinality", kw(":db.cardinality/one"))
            .with(":db/doc", "Where a dish comes from."),
    );
    store.transact(&tx).unwrap();
    let attribute = store
        .db()
        .attribute(&kw(":recipe/cuisine"))
        .unwrap()
        .clone();
    assert_eq!(attribute.doc.as_deref(), Some("Where a dish comes from."));
    let id = add_recipe(&store, "dal", "Dal");
    let mut tx = Transaction::new();
    tx.add(id, ":recipe/cuisine", "Indian");
    store.transact(&tx).unwrap();
}

/// Runs a transaction that must fail, and checks that the store is exactly
/// as it was, basis included, and still takes good transactions.
fn refused(store: &Store, tx: &Transaction) -> TransactError {
    let before = everything(store);
    let raw = stored(store);
    let error = store
        .transact(tx)
        .expect_err("the transaction should be refused");
    assert_eq!(
        everything(store),
        before,
        "a refused transaction changed the store: {error}"
    );
    assert!(
        stored(store) == raw,
        "a refused transaction changed a key: {error}"
    );
    add_recipe(store, &format!("after-{}", before.0), "Still writable");
    error
}

#[test]
fn an_unknown_attribute_is_refused_and_writes_nothing() {
    let store = store();
    let mut tx = Transaction::new();
    tx.map(recipe("r", "dal", "Dal").with(":recipe/colour", "yellow"));
    let error = refused(&store, &tx);
    assert!(
        matches!(error, TransactError::UnknownAttribute(UnknownAttribute(ref k)) if k == &kw(":recipe/colour")),
        "{error}"
    );
    assert!(error.to_string().contains(":recipe/colour"));
}

#[test]
fn a_value_of_the_wrong_type_is_refused_and_writes_nothing() {
    let store = store();
    let mut tx = Transaction::new();
    tx.map(recipe("r", "dal", "Dal").with(":recipe/serves", "four"));
    let error = refused(&store, &tx);
    assert!(matches!(error, TransactError::WrongType { .. }), "{error}");
    let mut tx = Transaction::new();
    tx.map(recipe("r", "dal", "Dal").with(":recipe/kind", "main"));
    assert!(
        matches!(refused(&store, &tx), TransactError::WrongType { .. }),
        "a string is not a keyword"
    );
}

#[test]
fn a_unique_clash_is_refused_and_writes_nothing() {
    let store = store();
    let a = add_recipe(&store, "dal", "Dal");
    let b = add_recipe(&store, "khichdi", "Khichdi");
    let uuid = Value::Uuid([7; 16]);
    let mut tx = Transaction::new();
    tx.add(a, ":recipe/uuid", uuid.clone());
    store.transact(&tx).unwrap();
    let mut tx = Transaction::new();
    tx.add(b, ":recipe/uuid", uuid);
    let error = refused(&store, &tx);
    assert!(
        matches!(error, TransactError::UniqueConflict { existing, entity, .. } if existing == a && entity == b)
    );
    // An existing entity cannot take another's identity either.
    let mut tx = Transaction::new();
    tx.add(b, ":recipe/slug", "dal");
    assert!(matches!(
        refused(&store, &tx),
        TransactError::UniqueConflict { .. }
    ));
}

#[test]
fn two_new_entities_claiming_one_unique_value_are_refused() {
    let store = store();
    let mut tx = Transaction::new();
    tx.map(recipe("a", "a", "A").with(":recipe/uuid", Value::Uuid([1; 16])))
        .map(recipe("b", "b", "B").with(":recipe/uuid", Value::Uuid([1; 16])));
    assert!(matches!(
        refused(&store, &tx),
        TransactError::UniqueConflict { .. }
    ));
}

#[test]
fn a_failed_compare_and_swap_is_refused_and_writes_nothing() {
    let store = store();
    let id = add_recipe(&store, "dal", "Dal");
    let mut tx = Transaction::new();
    tx.add(id, ":recipe/serves", 4i64);
    store.transact(&tx).unwrap();
    let mut tx = Transaction::new();
    tx.add(id, ":recipe/tags", "quick")
        .cas(id, ":recipe/serves", Some(2i64.into()), 6i64);
    let error = refused(&store, &tx);
    assert!(matches!(error, TransactError::CasFailed { .. }), "{error}");
    assert!(error.to_string().contains("expected 2, found 4"), "{error}");
}

#[test]
fn an_unresolvable_lookup_ref_is_refused_and_writes_nothing() {
    let store = store();
    let mut tx = Transaction::new();
    tx.add(slug_ref("no-such-recipe"), ":recipe/title", "Ghost");
    assert!(matches!(
        refused(&store, &tx),
        TransactError::LookupRef { .. }
    ));
    let mut tx = Transaction::new();
    tx.add(
        EntityRef::Lookup(kw(":recipe/title"), Value::from("Dal")),
        ":recipe/serves",
        2i64,
    );
    let error = refused(&store, &tx);
    assert!(error.to_string().contains("not unique"), "{error}");
}

#[test]
fn contradictions_and_impossible_values_are_refused_and_write_nothing() {
    let store = store();
    let id = add_recipe(&store, "dal", "Dal");
    let mut tx = Transaction::new();
    tx.add(id, ":recipe/title", "One")
        .add(id, ":recipe/title", "Two");
    assert!(matches!(refused(&store, &tx), TransactError::Conflict(_)));
    let mut tx = Transaction::new();
    tx.add(id, ":recipe/tags", "x")
        .retract(id, ":recipe/tags", "x");
    let mut setup = Transaction::new();
    setup.add(id, ":recipe/tags", "x");
    store.transact(&setup).unwrap();
    assert!(matches!(refused(&store, &tx), TransactError::Conflict(_)));
    let mut tx = Transaction::new();
    tx.add(id, ":recipe/rating", f64::NAN);
    assert!(matches!(
        refused(&store, &tx),
        TransactError::InvalidValue { .. }
    ));
    let mut tx = Transaction::new();
    tx.add(9_999_999, ":recipe/title", "Nobody");
    assert!(matches!(
        refused(&store, &tx),
        TransactError::UnknownEntity(9_999_999)
    ));
    let mut tx = Transaction::new();
    tx.add(id, "recipe title", "Bad keyword");
    assert!(matches!(refused(&store, &tx), TransactError::BadKeyword(_)));
    let mut tx = Transaction::new();
    tx.tx_attr(":db/txInstant", Value::Instant(0));
    assert!(
        matches!(refused(&store, &tx), TransactError::InvalidValue { .. }),
        "time cannot go back"
    );
}

#[test]
fn schema_changes_that_would_break_stored_datoms_are_refused() {
    let store = store();
    let serves = store.db().attribute(&kw(":recipe/serves")).unwrap().id;
    // Each property that stored keys depend on, changed alone, is refused
    // (scripts/mutants.sh found cardinality untried here).
    for (property, value) in [
        (":db/valueType", kw(":db.type/string")),
        (":db/cardinality", kw(":db.cardinality/many")),
        (":db/unique", kw(":db.unique/value")),
    ] {
        let mut tx = Transaction::new();
        tx.add(serves, property, value);
        let error = refused(&store, &tx);
        assert!(
            matches!(error, TransactError::Schema(_)),
            "{property}: {error}"
        );
        assert!(error.to_string().contains(property), "{property}: {error}");
    }
    let mut tx = Transaction::new();
    tx.add(serves, ":db/isComponent", true);
    assert!(matches!(refused(&store, &tx), TransactError::Schema(_)));
    let mut tx = Transaction::new();
    tx.add(serves, ":db/ident", kw(":recipe/portions"));
    assert!(
        matches!(refused(&store, &tx), TransactError::Schema(_)),
        "renames would break exports"
    );
    let mut tx = Transaction::new();
    tx.map(
        EntityMap::anonymous()
            .with(":db/ident", kw(":recipe/half-made"))
            .with(":db/valueType", kw(":db.type/string")),
    );
    let error = refused(&store, &tx);
    assert!(error.to_string().contains("no :db/cardinality"), "{error}");
    let mut tx = Transaction::new();
    tx.map(
        EntityMap::anonymous()
            .with(":db/ident", kw(":recipe/codes"))
            .with(":db/valueType", kw(":db.type/string"))
            .with(":db/cardinality", kw(":db.cardinality/many"))
            .with(":db/unique", kw(":db.unique/value")),
    );
    assert!(matches!(refused(&store, &tx), TransactError::Schema(_)));
    // The doc of an installed attribute may change.
    let mut tx = Transaction::new();
    tx.add(serves, ":db/doc", "How many it feeds.");
    store.transact(&tx).unwrap();
}

/// Indexing an attribute that already has datoms puts all of them in AVET,
/// at the transactions that wrote them: a lookup by value finds what holds
/// now, a value as of an earlier basis finds what held then, and history
/// finds the retraction. Dropping an index again is refused.
#[test]
fn indexing_an_attribute_later_puts_its_datoms_so_far_in_avet() {
    use forkful::store::{Components, Index};
    let store = store();
    let title = store.db().attribute(&kw(":recipe/title")).unwrap().clone();
    assert!(!title.in_avet(), "the test needs an unindexed attribute");
    let id = add_recipe(&store, "toast", "Toast");
    let when_toast = store.db().basis();
    let mut rename = Transaction::new();
    rename.add(id, ":recipe/title", "Soup");
    store.transact(&rename).unwrap();

    let mut index = Transaction::new();
    index.add(title.id, ":db/index", true);
    store.transact(&index).unwrap();

    let by_title = |db: &forkful::store::Db, title_text: &str| -> Vec<(u64, bool)> {
        db.datoms(
            Index::Avet,
            &Components::any().a(title.id).v(Value::from(title_text)),
        )
        .map(|d| d.map(|d| (d.e, d.added)))
        .collect::<Result<_, _>>()
        .unwrap()
    };
    let db = store.db();
    assert_eq!(by_title(&db, "Soup"), vec![(id, true)]);
    assert_eq!(by_title(&db, "Toast"), vec![]);
    assert_eq!(by_title(&db.as_of(when_toast), "Toast"), vec![(id, true)]);
    assert_eq!(by_title(&db.as_of(when_toast), "Soup"), vec![]);
    let mut history = by_title(&db.history(), "Toast");
    history.sort();
    assert_eq!(history, vec![(id, false), (id, true)]);
    // What is written later is indexed as usual.
    let other = add_recipe(&store, "soup-2", "Soup");
    let mut found = by_title(&store.db(), "Soup");
    found.sort();
    assert_eq!(found, vec![(id, true), (other, true)]);

    let mut unindex = Transaction::new();
    unindex.add(title.id, ":db/index", false);
    assert!(matches!(
        refused(&store, &unindex),
        TransactError::Schema(_)
    ));
}

/// An attribute named by its id (as the domain names every attribute it
/// writes) writes what its ident writes; an id that is no attribute is
/// refused, and writes nothing.
#[test]
fn an_attribute_named_by_id_writes_as_its_ident_and_a_wrong_id_writes_nothing() {
    let store = store();
    let id = add_recipe(&store, "dal", "Dal");
    let title = store.db().attribute(&kw(":recipe/title")).unwrap().id;
    let mut tx = Transaction::new();
    tx.add(id, title, "Red dal");
    store.transact(&tx).unwrap();
    assert_eq!(
        store.db().entity(id).unwrap().get(&kw(":recipe/title")),
        Some(&Value::from("Red dal"))
    );
    let before = everything(&store);
    let mut tx = Transaction::new();
    // The recipe's own entity is no attribute.
    tx.add(id, id, "x");
    let refused = store.transact(&tx).unwrap_err();
    assert!(
        matches!(refused, TransactError::NotAnAttribute(e) if e == id),
        "{refused:?}"
    );
    assert_eq!(everything(&store), before);
}

/// A reader's memo of a block of the current-entity index, read before a
/// write, must not put what it holds into the shared entity cache after
/// the write: every later reader would see the old entity for good (the
/// soak's acknowledged edit read back a version old). Each pair of
/// neighbours, as one of them shares a block with the other.
#[test]
fn an_entity_read_from_a_block_read_before_a_write_is_not_cached_for_later_readers() {
    let store = store();
    let mut tx = Transaction::new();
    for (tempid, slug) in [("a", "a"), ("b", "b"), ("c", "c")] {
        tx.map(
            EntityMap::new(EntityRef::temp(tempid))
                .with(":recipe/slug", slug)
                .with(":recipe/title", "before"),
        );
    }
    let report = store.transact(&tx).unwrap();
    let id = |t: &str| report.tempid(t).unwrap();
    let attr = store.db().attribute(&kw(":recipe/title")).unwrap().id;
    let title = |db: &forkful::store::Db, e: u64| db.value(e, attr).unwrap();
    for (read_first, changed) in [(id("a"), id("b")), (id("b"), id("c"))] {
        // One reader reads a neighbour, and keeps its block.
        let early = store.db();
        title(&early, read_first);
        // Another reads the entity from sled, so that the next reader to
        // read it from sled is let into the shared cache.
        title(&store.db(), changed);
        let mut write = Transaction::new();
        write.add(changed, ":recipe/title", format!("after {changed}"));
        store.transact(&write).unwrap();
        // The first reader reads it from its block: as of its basis.
        assert_eq!(title(&early, changed), Some(Value::from("before")));
        // Every reader made since sees the write.
        for _ in 0..3 {
            assert_eq!(
                title(&store.db(), changed),
                Some(Value::from(format!("after {changed}"))),
                "the entity cache kept what a reader's old block held"
            );
        }
    }
}
