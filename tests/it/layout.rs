//! The store's grouped layout (the log, EAVT, AEVT and VAET stored a few
//! keys a transaction) reads exactly as per-datom indexes would: every read of
//! every view at every basis equals a model that sorts and folds the
//! datoms each transaction reported.

use forkful::store::testing::datom_key;
use forkful::store::{Components, Datom, Db, EntityMap, Index, Transaction, Value};
use proptest::prelude::*;

use crate::helpers::{recipe, store, RecipeEdit};

/// Transacts `tx` and keeps the datoms it reports in `all`.
fn transact(store: &forkful::store::Store, tx: &Transaction, all: &mut Vec<Datom>) -> u64 {
    let report = store.transact(tx).unwrap();
    all.extend(report.datoms.iter().cloned());
    report.tempid("r").unwrap_or(report.basis_after)
}

fn add_recipe(store: &forkful::store::Store, slug: &str, all: &mut Vec<Datom>) -> u64 {
    let mut tx = Transaction::new();
    tx.map(recipe("r", slug, "Start"));
    transact(store, &tx, all)
}

#[derive(Debug, Clone)]
enum Op {
    Edit(RecipeEdit),
    /// One transaction giving every entity a title: groups of many entities.
    TitleAll(u8),
    /// A ref to an entity made before: VAET's per-target layout, beside
    /// the block layout of refs to entities made with their transaction.
    Fork(usize, usize),
}

fn op() -> impl Strategy<Value = Op> {
    // Each kind of edit as likely as the two of this test's own.
    prop_oneof![
        5 => RecipeEdit::any(4).prop_map(Op::Edit),
        1 => any::<u8>().prop_map(|n| Op::TitleAll(n % 4)),
        1 => (0..4usize, 0..4usize).prop_map(|(e, parent)| Op::Fork(e, parent)),
    ]
}

/// How a model read presents the datoms at or before its basis.
#[derive(Debug, Clone, Copy)]
enum View {
    Current,
    Since(u64),
    History,
}

/// What a per-datom index would answer: the matching datoms at or before
/// `basis` in the index's key order, each fact's run folded to its newest
/// datom unless the view is history.
fn model(all: &[Datom], index: Index, within: &Components, basis: u64, view: View) -> Vec<Datom> {
    let mut keyed: Vec<(Vec<u8>, &Datom)> = all
        .iter()
        .filter(|d| d.tx <= basis && within.matches(d))
        .map(|d| (datom_key(index, d), d))
        .collect();
    keyed.sort_by(|x, y| x.0.cmp(&y.0));
    if let View::History = view {
        return keyed.into_iter().map(|(_, d)| d.clone()).collect();
    }
    let mut out = Vec::new();
    for (i, (key, datom)) in keyed.iter().enumerate() {
        let fact = &key[..key.len() - 9];
        let newest = keyed
            .get(i + 1)
            .is_none_or(|(next, _)| &next[..next.len() - 9] != fact);
        let keep = match view {
            View::Current => datom.added,
            View::Since(t) => datom.added && datom.tx > t,
            View::History => unreachable!(),
        };
        if newest && keep {
            out.push((*datom).clone());
        }
    }
    out
}

fn read(db: &Db, index: Index, within: &Components) -> Vec<Datom> {
    db.datoms(index, within).map(|d| d.unwrap()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn grouped_indexes_read_as_per_datom_indexes_at_every_basis_and_view(
        ops in prop::collection::vec(op(), 1..16),
    ) {
        let store = store();
        let first = store.db().basis();
        // Two recipes, 300 other entities, two more recipes: the four sit
        // in two of AEVT's blocks of 256 entity ids. `all` is every datom
        // since the schema, as each transaction reported it.
        let mut all = Vec::new();
        let mut ids = vec![add_recipe(&store, "r0", &mut all), add_recipe(&store, "r1", &mut all)];
        let mut filler = Transaction::new();
        for i in 0..300 {
            filler.map(EntityMap::anonymous().with(":recipe/serves", i64::from(i)));
        }
        transact(&store, &filler, &mut all);
        ids.push(add_recipe(&store, "r2", &mut all));
        ids.push(add_recipe(&store, "r3", &mut all));
        prop_assert_ne!(ids[0] >> 8, ids[3] >> 8);
        let mut bases = vec![store.db().basis()];
        for op in ops {
            let mut tx = Transaction::new();
            match op {
                Op::Edit(edit) => edit.add_to(&mut tx, &ids),
                Op::Fork(e, parent) => {
                    tx.add(
                        ids[e],
                        ":recipe/forked-from",
                        forkful::store::TxValue::Entity(forkful::store::EntityRef::Id(ids[parent])),
                    );
                }
                Op::TitleAll(n) => {
                    for &e in &ids {
                        tx.add(e, ":recipe/title", format!("All {n}"));
                    }
                }
            }
            transact(&store, &tx, &mut all);
            bases.push(store.db().basis());
        }
        let latest = store.db();
        all.sort_by_key(|d| datom_key(Index::Log, d));
        let logged: Vec<Datom> = latest.log(first + 1, latest.basis()).map(|d| d.unwrap()).collect();
        prop_assert_eq!(&logged, &all, "the log holds what was reported, in log order");
        let attrs: Vec<u64> = [":recipe/title", ":recipe/tags", ":recipe/serves", ":recipe/slug"]
            .iter()
            .map(|a| latest.attribute(&forkful::store::kw(a)).unwrap().id)
            .collect();
        let mut reads = Vec::new();
        for &e in &ids {
            reads.push((Index::Eavt, Components::any().e(e)));
            reads.push((Index::Aevt, Components::any().a(attrs[0]).e(e)));
            for &a in &attrs {
                reads.push((Index::Eavt, Components::any().e(e).a(a)));
            }
            reads.push((Index::Eavt, Components::any().e(e).a(attrs[1]).v("t1")));
            reads.push((Index::Aevt, Components::any().a(attrs[1]).e(e).v("t2")));
        }
        for &a in &attrs[..3] {
            reads.push((Index::Aevt, Components::any().a(a)));
        }
        // Who refers to each ingredient and recipe (in both blocks), by
        // any ref attribute and by :recipe/ingredients.
        let ingredients = latest.attribute(&forkful::store::kw(":recipe/ingredients")).unwrap().id;
        let mut targets: Vec<u64> = all.iter().filter_map(|d| d.v.as_ref()).collect();
        targets.sort_unstable();
        targets.dedup();
        prop_assert!(targets.len() >= 8);
        for t in targets {
            reads.push((Index::Vaet, Components::any().v(Value::Ref(t))));
            reads.push((Index::Vaet, Components::any().v(Value::Ref(t)).a(ingredients)));
        }
        let since = bases[bases.len() / 2];
        for &basis in &bases {
            let db = latest.as_of(basis).uncached();
            for (index, within) in &reads {
                // The model knows only the datoms since the schema: no
                // read here can meet the schema's own.
                for (db, view) in [
                    (db.clone(), View::Current),
                    (db.history(), View::History),
                    (db.since(since), View::Since(since)),
                ] {
                    prop_assert_eq!(
                        read(&db, *index, within),
                        model(&all, *index, within, basis, view),
                        "{:?} {:?} at {} ({:?})", index, within, basis, view
                    );
                }
            }
            // A range of entities: the first two recipes, their components
            // and what lies between (`Db::entity_range`).
            let (first_e, last_e) = (ids[0], ids[1] + 16);
            let mut in_range: Vec<u64> =
                all.iter().map(|d| d.e).filter(|e| (first_e..=last_e).contains(e)).collect();
            in_range.sort_unstable();
            in_range.dedup();
            for (db, view) in [
                (db.clone(), View::Current),
                (db.history(), View::History),
                (db.since(since), View::Since(since)),
            ] {
                let want: Vec<Datom> = in_range
                    .iter()
                    .flat_map(|&e| model(&all, Index::Eavt, &Components::any().e(e), basis, view))
                    .collect();
                let got: Vec<Datom> = db.entity_range(first_e, last_e).map(|d| d.unwrap()).collect();
                prop_assert_eq!(got, want, "entities {}..={} at {} ({:?})", first_e, last_e, basis, view);
            }
            // The log between two bases.
            let logged: Vec<Datom> = db.log(since, basis).map(|d| d.unwrap()).collect();
            let want: Vec<Datom> = all.iter().filter(|d| d.tx >= since && d.tx <= basis).cloned().collect();
            prop_assert_eq!(logged, want);
        }
    }
}
