//! Pull patterns: attributes, nesting, reverse refs, wildcard, components,
//! limits and recursion.

use forkful::store::{kw, EntityRef, PullPattern, Pulled, Transaction, TxValue, Value};

use crate::helpers::{add_recipe, store};

fn pull(store: &forkful::store::Store, e: u64, pattern: &str) -> Pulled {
    store
        .db()
        .pull(e, &PullPattern::parse(pattern).unwrap())
        .unwrap()
}

fn fork(store: &forkful::store::Store, slug: &str, parent: u64) -> u64 {
    crate::helpers::add_fork(store, slug, slug, parent)
}

#[test]
fn named_attributes_come_back_and_missing_ones_are_left_out() {
    let store = store();
    let id = add_recipe(&store, "dal", "Dal");
    let pulled = pull(&store, id, "[:recipe/title :recipe/serves :db/id]");
    assert_eq!(
        pulled.get(":recipe/title").and_then(Pulled::as_value),
        Some(&Value::from("Dal"))
    );
    assert_eq!(
        pulled.get(":db/id").and_then(Pulled::as_value),
        Some(&Value::Ref(id))
    );
    assert!(pulled.get(":recipe/serves").is_none());
}

#[test]
fn nested_patterns_follow_refs_into_components() {
    let store = store();
    let id = add_recipe(&store, "dal", "Dal");
    let pulled = pull(&store, id, "[{:recipe/ingredients [:ingredient/item]}]");
    let items: Vec<_> = pulled
        .get(":recipe/ingredients")
        .and_then(Pulled::as_list)
        .unwrap()
        .iter()
        .map(|i| {
            i.get(":ingredient/item")
                .unwrap()
                .as_value()
                .unwrap()
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(items, ["eggs", "tomatoes"]);
}

#[test]
fn wildcard_expands_components_and_leaves_other_refs_as_ids() {
    let store = store();
    let parent = add_recipe(&store, "khichdi", "Khichdi");
    let child = fork(&store, "dal", parent);
    let pulled = pull(&store, child, "[*]");
    assert_eq!(
        pulled.get(":db/id").and_then(Pulled::as_value),
        Some(&Value::Ref(child))
    );
    let ingredients = pulled
        .get(":recipe/ingredients")
        .and_then(Pulled::as_list)
        .unwrap();
    assert!(
        ingredients[0].get(":ingredient/item").is_some(),
        "components are pulled whole"
    );
    let parent_ref = pulled.get(":recipe/forked-from").unwrap();
    assert_eq!(
        parent_ref.get(":db/id").and_then(Pulled::as_value),
        Some(&Value::Ref(parent))
    );
    assert!(
        parent_ref.get(":recipe/title").is_none(),
        "other refs are only ids"
    );
}

#[test]
fn reverse_refs_list_who_points_here() {
    let store = store();
    let root = add_recipe(&store, "root", "Root");
    let forks: Vec<u64> = (0..3)
        .map(|i| fork(&store, &format!("fork-{i}"), root))
        .collect();
    let pulled = pull(&store, root, "[{:recipe/_forked-from [:recipe/slug]}]");
    let slugs: Vec<_> = pulled
        .get(":recipe/_forked-from")
        .and_then(Pulled::as_list)
        .unwrap()
        .iter()
        .map(|f| f.get(":recipe/slug").unwrap().as_value().unwrap().clone())
        .collect();
    assert_eq!(slugs.len(), forks.len());
    assert!(slugs.contains(&Value::from("fork-1")));
    let limited = pull(&store, root, "[(:recipe/_forked-from :limit 2)]");
    assert_eq!(
        limited
            .get(":recipe/_forked-from")
            .and_then(Pulled::as_list)
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn recursion_walks_a_lineage_to_its_root_or_its_depth_limit() {
    let store = store();
    let mut chain = vec![add_recipe(&store, "gen-0", "Gen 0")];
    for i in 1..6 {
        let parent = *chain.last().unwrap();
        chain.push(fork(&store, &format!("gen-{i}"), parent));
    }
    let deepest = *chain.last().unwrap();
    let mut node = pull(&store, deepest, "[:recipe/slug {:recipe/forked-from ...}]");
    let mut slugs = Vec::new();
    loop {
        slugs.push(
            node.get(":recipe/slug")
                .unwrap()
                .as_value()
                .unwrap()
                .as_str()
                .unwrap()
                .to_owned(),
        );
        match node.get(":recipe/forked-from") {
            Some(parent) => node = parent.clone(),
            None => break,
        }
    }
    assert_eq!(
        slugs,
        ["gen-5", "gen-4", "gen-3", "gen-2", "gen-1", "gen-0"]
    );

    let limited = pull(&store, deepest, "[:recipe/slug {:recipe/forked-from 2}]");
    let two_up = limited
        .get(":recipe/forked-from")
        .unwrap()
        .get(":recipe/forked-from")
        .unwrap();
    assert_eq!(
        two_up.get(":recipe/slug").unwrap().as_value(),
        Some(&Value::from("gen-3"))
    );
    let stop = two_up.get(":recipe/forked-from").unwrap();
    assert_eq!(
        stop.get(":db/id").unwrap().as_value(),
        Some(&Value::Ref(chain[2]))
    );
    assert!(
        stop.get(":recipe/slug").is_none(),
        "the depth limit stops with an id"
    );
}

#[test]
fn recursion_stops_at_a_cycle() {
    let store = store();
    let a = add_recipe(&store, "a", "A");
    let b = add_recipe(&store, "b", "B");
    let mut tx = Transaction::new();
    tx.add(a, ":recipe/related", TxValue::Entity(EntityRef::Id(b)))
        .add(b, ":recipe/related", TxValue::Entity(EntityRef::Id(a)));
    store.transact(&tx).unwrap();
    let pulled = pull(&store, a, "[:recipe/slug {:recipe/related ...}]");
    let b_node = &pulled.get(":recipe/related").unwrap().as_list().unwrap()[0];
    assert_eq!(
        b_node.get(":recipe/slug").unwrap().as_value(),
        Some(&Value::from("b"))
    );
    let back = &b_node.get(":recipe/related").unwrap().as_list().unwrap()[0];
    assert_eq!(back.get(":db/id").unwrap().as_value(), Some(&Value::Ref(a)));
    assert!(back.get(":recipe/slug").is_none());
}

#[test]
fn malformed_patterns_are_clear_errors() {
    for (pattern, expect) in [
        ("[:recipe/title", "line 1"),
        (":recipe/title", "a pattern is a vector"),
        (
            "[{:recipe/forked-from \"deep\"}]",
            "a pattern, `...` or a positive depth",
        ),
        ("[(:recipe/tags :limit -1)]", "the only option"),
        ("[42]", "is not an attribute"),
    ] {
        let error = PullPattern::parse(pattern).unwrap_err().to_string();
        assert!(error.contains(expect), "{pattern}: {error}");
    }
    let store = store();
    let id = add_recipe(&store, "dal", "Dal");
    let error = store
        .db()
        .pull(id, &PullPattern::parse("[:recipe/colour]").unwrap())
        .unwrap_err();
    assert!(error.to_string().contains(":recipe/colour"));
    assert_eq!(kw(":recipe/colour").to_string(), ":recipe/colour");
}
