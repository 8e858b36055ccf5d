//! Datalog: every clause form, aggregates, rules, negation, planning, errors.

use forkful::store::{kw, EntityRef, Store, Transaction, TxValue, Value};
use forkful::store::{Input, Query, QueryError, DEFAULT_WORK_LIMIT};
use proptest::prelude::*;

use crate::helpers::{add_recipe, store};

const ANCESTOR: &str = r#"[[(ancestor ?r ?a) [?r :recipe/forked-from ?a]]
                          [(ancestor ?r ?a) [?r :recipe/forked-from ?p] (ancestor ?p ?a)]]"#;

fn fork(store: &Store, slug: &str, parent: u64) -> u64 {
    crate::helpers::add_fork(store, slug, &format!("Title of {slug}"), parent)
}

/// root <- a <- b <- c, and root <- x; with tags and servings.
fn family() -> (Store, Vec<u64>) {
    let store = store();
    let root = add_recipe(&store, "root", "Root");
    let a = fork(&store, "a", root);
    let b = fork(&store, "b", a);
    let c = fork(&store, "c", b);
    let x = fork(&store, "x", root);
    let mut tx = Transaction::new();
    for (id, serves, tags) in [
        (root, 4, vec!["quick", "veg"]),
        (a, 2, vec!["quick"]),
        (b, 6, vec![]),
        (c, 6, vec!["veg"]),
        (x, 1, vec![]),
    ] {
        tx.add(id, ":recipe/serves", serves as i64);
        for tag in tags {
            tx.add(id, ":recipe/tags", tag);
        }
    }
    store.transact(&tx).unwrap();
    (store, vec![root, a, b, c, x])
}

fn strings(rows: Vec<Vec<Value>>) -> Vec<Vec<String>> {
    rows.into_iter()
        .map(|r| {
            r.into_iter()
                .map(|v| v.as_str().map_or(v.to_string(), str::to_owned))
                .collect()
        })
        .collect()
}

fn q(store: &Store, query: &str, args: &[Input]) -> Vec<Vec<String>> {
    strings(
        store
            .db()
            .q(query, args)
            .unwrap_or_else(|e| panic!("{query}: {e}"))
            .values(),
    )
}

fn rules() -> Input {
    Input::rules(ANCESTOR).unwrap()
}

#[test]
fn data_patterns_join_and_scalars_come_in_through_in() {
    let (store, _) = family();
    let rows = q(
        &store,
        r#"[:find ?title :in $ ?slug :where [?r :recipe/slug ?slug] [?r :recipe/title ?title]]"#,
        &[Input::Scalar(Value::from("b"))],
    );
    assert_eq!(rows, [["Title of b"]]);
    let parents = q(
        &store,
        r#"[:find ?child ?parent :where [?c :recipe/forked-from ?p] [?c :recipe/slug ?child] [?p :recipe/slug ?parent]]"#,
        &[],
    );
    assert_eq!(
        parents,
        [["a", "root"], ["b", "a"], ["c", "b"], ["x", "root"]]
    );
}

#[test]
fn aggregates_count_min_max_sum_over_groups() {
    let (store, _) = family();
    let forks = q(
        &store,
        r#"[:find ?slug (count ?f) :where [?f :recipe/forked-from ?r] [?r :recipe/slug ?slug]]"#,
        &[],
    );
    assert_eq!(forks, [["a", "1"], ["b", "1"], ["root", "2"]]);
    let result = store
        .db()
        .q(r#"[:find (min ?s) (max ?s) (sum ?s) (count-distinct ?s) :where [_ :recipe/serves ?s]]"#, &[])
        .unwrap();
    assert_eq!(
        result.values(),
        [[
            Value::Long(1),
            Value::Long(6),
            Value::Long(13),
            Value::Long(4)
        ]]
    );
    // :with keeps duplicates that set semantics would merge.
    let with = q(
        &store,
        r#"[:find (sum ?s) :with ?r :where [?r :recipe/serves ?s]]"#,
        &[],
    );
    assert_eq!(with, [["19"]]);
    let none = q(
        &store,
        r#"[:find (count ?r) :where [?r :recipe/serves 99]]"#,
        &[],
    );
    assert_eq!(none, [["0"]]);
}

#[test]
fn pull_in_find_returns_trees() {
    let (store, ids) = family();
    let result = store
        .db()
        .q(
            r#"[:find (pull ?r [:recipe/slug {:recipe/forked-from [:recipe/slug]}]) :where [?r :recipe/slug "a"]]"#,
            &[],
        )
        .unwrap();
    let tree = result.scalar().unwrap();
    assert_eq!(
        tree.get(":recipe/slug").unwrap().as_value(),
        Some(&Value::from("a"))
    );
    let parent = tree.get(":recipe/forked-from").unwrap();
    assert_eq!(
        parent.get(":recipe/slug").unwrap().as_value(),
        Some(&Value::from("root"))
    );
    assert_eq!(ids.len(), 5);
}

#[test]
fn predicates_and_function_bindings_filter_and_compute() {
    let (store, _) = family();
    let small = q(
        &store,
        r#"[:find ?slug :where [?r :recipe/serves ?s] [(< ?s 3)] [?r :recipe/slug ?slug]]"#,
        &[],
    );
    assert_eq!(small, [["a"], ["x"]]);
    let titled = q(
        &store,
        r#"[:find ?t :where [?r :recipe/title ?t] [(str/includes? ?t "of b")]]"#,
        &[],
    );
    assert_eq!(titled, [["Title of b"]]);
    let doubled = q(
        &store,
        r#"[:find ?slug ?d :where [?r :recipe/slug ?slug] [?r :recipe/serves ?s] [(* ?s 2) ?d] [(>= ?d 12)]]"#,
        &[],
    );
    assert_eq!(doubled, [["b", "12"], ["c", "12"]]);
    let roots = q(
        &store,
        r#"[:find ?slug :where [?r :recipe/slug ?slug] [(missing? $ ?r :recipe/forked-from)]]"#,
        &[],
    );
    assert_eq!(roots, [["root"]]);
}

#[test]
fn not_and_not_join_remove_what_matches() {
    let (store, _) = family();
    let untagged = q(
        &store,
        r#"[:find ?slug :where [?r :recipe/slug ?slug] (not [?r :recipe/tags _])]"#,
        &[],
    );
    assert_eq!(untagged, [["b"], ["x"]]);
    let childless = q(
        &store,
        r#"[:find ?slug :where [?r :recipe/slug ?slug] (not-join [?r] [?f :recipe/forked-from ?r])]"#,
        &[],
    );
    assert_eq!(childless, [["c"], ["x"]]);
}

#[test]
fn or_and_or_join_unite_their_branches() {
    let (store, _) = family();
    let either = q(
        &store,
        r#"[:find ?slug :where [?r :recipe/slug ?slug] (or [?r :recipe/serves 1] [?r :recipe/serves 2])]"#,
        &[],
    );
    assert_eq!(either, [["a"], ["x"]]);
    let either = q(
        &store,
        r#"[:find ?slug :where [?r :recipe/slug ?slug]
                                (or-join [?r] (and [?r :recipe/tags "veg"] [?r :recipe/serves 6])
                                              [?f :recipe/forked-from ?r])]"#,
        &[],
    );
    assert_eq!(either, [["a"], ["b"], ["c"], ["root"]]);
}

#[test]
fn collections_relations_and_find_shapes() {
    let (store, _) = family();
    let db = store.db();
    let result = db
        .q(
            r#"[:find [?t ...] :in $ [?slug ...] :where [?r :recipe/slug ?slug] [?r :recipe/title ?t]]"#,
            &[Input::Collection(vec![Value::from("a"), Value::from("x")])],
        )
        .unwrap();
    assert_eq!(strings(result.values()), [["Title of a"], ["Title of x"]]);
    let result = db
        .q(
            r#"[:find ?slug ?n :in $ [[?slug ?n]] :where [?r :recipe/slug ?slug] [?r :recipe/serves ?n]]"#,
            &[Input::Relation(vec![
                vec![Value::from("a"), Value::Long(2)],
                vec![Value::from("b"), Value::Long(2)],
            ])],
        )
        .unwrap();
    assert_eq!(strings(result.values()), [["a", "2"]]);
    let scalar = db
        .q(
            r#"[:find ?t . :where [?r :recipe/slug "c"] [?r :recipe/title ?t]]"#,
            &[],
        )
        .unwrap();
    assert_eq!(
        scalar.scalar().unwrap().as_value(),
        Some(&Value::from("Title of c"))
    );
    let tuple = db
        .q(
            r#"[:find [?s ?n] :where [?r :recipe/slug ?s] [?r :recipe/serves ?n] [(= ?n 4)]]"#,
            &[],
        )
        .unwrap();
    assert_eq!(strings(tuple.values()), [["root", "4"]]);
}

#[test]
fn queries_run_against_as_of_and_history_values() {
    let (store, ids) = family();
    let before = store.db().basis();
    let mut tx = Transaction::new();
    tx.add(ids[0], ":recipe/title", "Root, revised");
    store.transact(&tx).unwrap();
    let query =
        Query::parse(r#"[:find ?t :in $ :where [?r :recipe/slug "root"] [?r :recipe/title ?t]]"#)
            .unwrap();
    let run = |db| {
        strings(
            query
                .run(&[Input::Db(db)], DEFAULT_WORK_LIMIT)
                .unwrap()
                .values(),
        )
    };
    assert_eq!(run(store.db()), [["Root, revised"]]);
    assert_eq!(run(store.db().as_of(before)), [["Root"]]);
    let history = strings(
        Query::parse(
            r#"[:find ?t ?added :where [?r :recipe/slug "root"] [?r :recipe/title ?t _ ?added]]"#,
        )
        .unwrap()
        .run(&[Input::Db(store.db().history())], DEFAULT_WORK_LIMIT)
        .unwrap()
        .values(),
    );
    assert_eq!(
        history,
        [
            ["Root", "false"],
            ["Root", "true"],
            ["Root, revised", "true"]
        ]
    );
}

#[test]
fn a_recursive_rule_finds_every_ancestor() {
    let (store, _) = family();
    let ancestors = q(
        &store,
        r#"[:find ?slug :in $ % ?start :where [?r :recipe/slug ?start] (ancestor ?r ?a) [?a :recipe/slug ?slug]]"#,
        &[rules(), Input::Scalar(Value::from("c"))],
    );
    assert_eq!(ancestors, [["a"], ["b"], ["root"]]);
    let descendants = q(
        &store,
        r#"[:find ?slug :in $ % :where [?root :recipe/slug "root"] (ancestor ?d ?root) [?d :recipe/slug ?slug]]"#,
        &[rules()],
    );
    assert_eq!(descendants, [["a"], ["b"], ["c"], ["x"]]);
    let with_ancestors = q(
        &store,
        r#"[:find (count ?d) :in $ % :where (ancestor ?d ?a)]"#,
        &[rules()],
    );
    assert_eq!(
        with_ancestors,
        [["4"]],
        "a, b, c and x have ancestors; root has none"
    );
    let pairs = q(
        &store,
        r#"[:find (count ?d) :with ?a :in $ % :where (ancestor ?d ?a)]"#,
        &[rules()],
    );
    assert_eq!(pairs, [["7"]], "c has 3 ancestors, b 2, a 1, x 1");
}

#[test]
fn clause_order_does_not_change_the_answer_or_the_work() {
    let (store, _) = family();
    let clauses = [
        r#"[?r :recipe/slug ?start]"#,
        r#"(ancestor ?r ?a)"#,
        r#"[?a :recipe/slug ?slug]"#,
        r#"[?a :recipe/serves ?n]"#,
        r#"[(> ?n 1)]"#,
    ];
    let mut answers = Vec::new();
    let mut reads = Vec::new();
    for permutation in permutations(clauses.len()) {
        let body: Vec<&str> = permutation.iter().map(|&i| clauses[i]).collect();
        let query = format!("[:find ?slug :in $ % ?start :where {}]", body.join(" "));
        let db = store.db();
        let before = db.reads_so_far();
        answers.push(q(
            &store,
            &query,
            &[rules(), Input::Scalar(Value::from("c"))],
        ));
        reads.push(store.db().reads_so_far() - before);
    }
    assert!(answers.windows(2).all(|w| w[0] == w[1]), "{answers:?}");
    assert_eq!(answers[0], [["a"], ["b"], ["root"]]);
    assert!(
        reads.windows(2).all(|w| w[0] == w[1]),
        "index reads differ by order: {reads:?}"
    );
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for rest in permutations(n - 1) {
        for at in 0..=rest.len() {
            let mut p = rest.clone();
            p.insert(at, n - 1);
            out.push(p);
        }
    }
    out
}

#[test]
fn a_seeded_rule_reads_the_lineage_not_the_forest() {
    // The same chain of 6, alone and then beside 60 other families: the
    // ancestors query does the same index reads either way.
    let reads_for = |other_families: usize| {
        let store = store();
        for f in 0..other_families {
            let root = add_recipe(&store, &format!("other-{f}"), "Other");
            let mut parent = root;
            for g in 0..3 {
                parent = fork(&store, &format!("other-{f}-{g}"), parent);
            }
        }
        let mut parent = add_recipe(&store, "gen-0", "Gen 0");
        for g in 1..6 {
            parent = fork(&store, &format!("gen-{g}"), parent);
        }
        let db = store.db();
        let before = db.reads_so_far();
        let rows = db
            .q(
                r#"[:find ?a :in $ % ?s :where [?r :recipe/slug ?s] (ancestor ?r ?a)]"#,
                &[rules(), Input::Scalar(Value::from("gen-5"))],
            )
            .unwrap();
        assert_eq!(rows.rows.len(), 5);
        db.reads_so_far() - before
    };
    assert_eq!(reads_for(0), reads_for(60));
}

fn error(store: &Store, query: &str, args: &[Input]) -> QueryError {
    store
        .db()
        .q(query, args)
        .expect_err("the query should fail")
}

#[test]
fn malformed_queries_are_reported_with_their_position() {
    let (store, _) = family();
    let e = error(&store, "[:find ?x :where [?x :recipe/slug", &[]);
    assert!(
        matches!(e, QueryError::Syntax { .. }) && e.to_string().contains("line 1, column"),
        "{e}"
    );
    let e = error(
        &store,
        "[:find ?x\n :where\n   [?x :recipe/colour \"red\"]]",
        &[],
    );
    assert!(matches!(e, QueryError::UnknownAttribute { .. }), "{e}");
    assert!(
        e.to_string().contains("line 3, column 4") && e.to_string().contains(":recipe/colour"),
        "{e}"
    );
    let e = error(
        &store,
        "[:find ?x :where [?x :recipe/slug ?s] [(< ?n 3)]]",
        &[],
    );
    assert!(
        matches!(e, QueryError::Unbound { .. }) && e.to_string().contains("?n"),
        "{e}"
    );
    let e = error(&store, "[:find ?x :where [?x]]", &[]);
    assert!(e.to_string().contains("a data pattern is"), "{e}");
    let e = error(
        &store,
        "[:find ?x :where [?x :recipe/slug ?s] [(frobnicate ?s)]]",
        &[],
    );
    assert!(e.to_string().contains("unknown function frobnicate"), "{e}");
    let e = error(&store, "[:find ?y :where [?x :recipe/slug ?s]]", &[]);
    assert!(e.to_string().contains("?y is not bound"), "{e}");
    let e = error(&store, "[:where [?x :recipe/slug ?s]]", &[]);
    assert!(e.to_string().contains(":find"), "{e}");
}

#[test]
fn rule_mistakes_are_clear_errors() {
    let (store, _) = family();
    let e = Input::rules(r#"[[(bad ?a ?b) [?a :recipe/slug _]]]"#).unwrap_err();
    assert!(
        matches!(e, QueryError::Rule { .. }) && e.to_string().contains("unsafe rule bad"),
        "{e}"
    );
    let e = error(&store, r#"[:find ?a :in $ % :where (nope ?a)]"#, &[rules()]);
    assert!(e.to_string().contains("no rule named nope"), "{e}");
    let e = error(
        &store,
        r#"[:find ?a :in $ % :where (ancestor ?a)]"#,
        &[rules()],
    );
    assert!(e.to_string().contains("takes 2 arguments"), "{e}");
    let through_not = Input::rules(r#"[[(odd ?r) [?r :recipe/slug _] (not (odd ?r))]]"#).unwrap();
    let e = error(
        &store,
        r#"[:find ?r :in $ % :where (odd ?r)]"#,
        &[through_not],
    );
    assert!(e.to_string().contains("through not"), "{e}");
}

#[test]
fn a_runaway_query_is_stopped_by_the_work_limit() {
    let (store, _) = family();
    let query = Query::parse(
        r#"[:find ?a ?b ?c :where [?a :recipe/slug] [?b :recipe/slug] [?c :recipe/slug]]"#,
    )
    .unwrap();
    let e = query.run(&[Input::Db(store.db())], 50).unwrap_err();
    assert_eq!(e, QueryError::TooMuchWork { limit: 50 });
    assert_eq!(
        query
            .run(&[Input::Db(store.db())], DEFAULT_WORK_LIMIT)
            .unwrap()
            .rows
            .len(),
        125
    );
}

/// The ancestors of `start` by following `parent` links; `Err` on a cycle.
fn walk(parents: &[Option<usize>], start: usize) -> Result<Vec<usize>, ()> {
    let mut out = Vec::new();
    let mut at = start;
    while let Some(p) = parents[at] {
        if p == start || out.contains(&p) {
            return Err(());
        }
        out.push(p);
        at = p;
    }
    out.sort();
    Ok(out)
}

/// A store of `parents.len()` recipes `n0`, `n1`, ... forked as given.
fn forest(parents: &[Option<usize>]) -> (Store, Vec<u64>) {
    let store = store();
    let mut tx = Transaction::new();
    for i in 0..parents.len() {
        tx.add(
            EntityRef::temp(format!("n{i}")),
            ":recipe/slug",
            format!("n{i}"),
        );
    }
    let report = store.transact(&tx).unwrap();
    let ids: Vec<u64> = (0..parents.len())
        .map(|i| report.tempid(&format!("n{i}")).unwrap())
        .collect();
    let mut tx = Transaction::new();
    for (i, parent) in parents.iter().enumerate() {
        if let Some(p) = parent {
            tx.add(
                ids[i],
                ":recipe/forked-from",
                TxValue::Entity(EntityRef::Id(ids[*p])),
            );
        }
    }
    store.transact(&tx).unwrap();
    (store, ids)
}

fn rule_ancestors(store: &Store, ids: &[u64], start: usize) -> Vec<usize> {
    let rows = store
        .db()
        .q(
            r#"[:find ?a :in $ % ?r :where (ancestor ?r ?a)]"#,
            &[rules(), Input::Scalar(Value::Ref(ids[start]))],
        )
        .unwrap()
        .values();
    let mut out: Vec<usize> = rows
        .into_iter()
        .map(|r| ids.iter().position(|id| Value::Ref(*id) == r[0]).unwrap())
        .collect();
    out.sort();
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn the_ancestor_rule_agrees_with_a_direct_walk_on_random_forests(
        choices in prop::collection::vec((any::<bool>(), any::<prop::sample::Index>()), 2..40),
        start in any::<prop::sample::Index>(),
    ) {
        // Node i forks an earlier node (or none): always a forest.
        let parents: Vec<Option<usize>> = choices
            .iter()
            .enumerate()
            .map(|(i, (forked, which))| (i > 0 && *forked).then(|| which.index(i)))
            .collect();
        let (store, ids) = forest(&parents);
        let start = start.index(parents.len());
        prop_assert_eq!(rule_ancestors(&store, &ids, start), walk(&parents, start).unwrap());
    }

    #[test]
    fn on_a_fork_cycle_the_walk_refuses_and_the_rule_still_terminates(
        length in 2usize..8,
        tail in 0usize..4,
    ) {
        // A ring of `length` recipes, and a tail of `tail` forks hanging off it.
        let mut parents: Vec<Option<usize>> = (0..length).map(|i| Some((i + 1) % length)).collect();
        for t in 0..tail {
            parents.push(Some(if t == 0 { 0 } else { length + t - 1 }));
        }
        let (store, ids) = forest(&parents);
        let start = parents.len() - 1;
        prop_assert!(walk(&parents, start).is_err() || tail == 0 && walk(&parents, 0).is_err());
        let found = rule_ancestors(&store, &ids, start);
        // Everything on the ring, and the tail above the start, is an ancestor.
        let mut expected: Vec<usize> = (0..length).collect();
        if tail > 0 {
            expected.extend(length..start);
        }
        prop_assert_eq!(found, expected);
    }
}

#[test]
fn keyword_values_and_idents_work_as_constants() {
    let (store, _) = family();
    let rows = q(
        &store,
        r#"[:find ?ident :where [?a :db/ident ?ident] [?a :db/valueType :db.type/ref] [?a :db/isComponent true]]"#,
        &[],
    );
    assert_eq!(rows, [[":recipe/ingredients"]]);
    assert_eq!(kw(":recipe/slug").name(), "slug");
}
