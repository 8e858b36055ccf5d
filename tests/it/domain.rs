//! Recipes on the store: history, forks, lineage, catalog, diffs.

use forkful::domain::content::{MAX_INGREDIENT_TERMS, MAX_LINE, MAX_SUMMARY_TERMS};
use forkful::domain::diff::{self, LineChange};
use forkful::domain::{
    CatalogQuery, Change, ContentDraft, ContentField, DomainError, Minutes, Recipes, Slug,
    Snapshot, Sort, Step, VersionNumber, Yield, RETIRED,
};
use forkful::store::Input;
use forkful::store::{kw, EntityRef, Store, Transaction, TxValue, Value};
use proptest::prelude::*;

use crate::helpers::{demo, largest_content, stored, v, whole_catalog, words};

fn slug(s: &str) -> Slug {
    Slug::parse(s).unwrap()
}

fn fresh() -> Recipes {
    Recipes::open(Store::temporary().unwrap()).unwrap()
}

fn content(title: &str, ingredients: &[&str], steps: &[&str]) -> ContentDraft {
    ContentDraft {
        title: title.into(),
        summary: Some("A *good* one.".into()),
        recipe_yield: Yield {
            servings: Some(4),
            text: None,
        },
        cook: Some(Minutes::new(20).unwrap()),
        ingredients: ingredients.iter().map(|s| s.to_string()).collect(),
        steps: steps
            .iter()
            .map(|s| Step {
                section: None,
                text: s.to_string(),
            })
            .collect(),
        tags: vec!["quick".into()],
        ..ContentDraft::default()
    }
}

fn by(note: &str) -> Change {
    Change::by("tester", note)
}

#[test]
fn every_version_of_an_edited_recipe_reads_back_exactly() {
    let recipes = fresh();
    let s = slug("dal");
    let first = content("Dal", &["1 cup lentils", "1 onion"], &["Boil.", "Fry."]);
    recipes.create(&s, first.clone(), &by("first")).unwrap();
    let mut written = vec![first.normalized().unwrap()];
    let edits = [
        content("Dal", &["1 cup red lentils", "1 onion"], &["Boil.", "Fry."]),
        content(
            "Dal tadka",
            &["1 cup red lentils", "1 onion", "2 tsp cumin"],
            &["Boil.", "Fry.", "Pour over."],
        ),
        ContentDraft {
            cook: Some(Minutes::new(35).unwrap()),
            ..content("Dal tadka", &["1 onion", "2 tsp cumin"], &["Fry.", "Boil."])
        },
        ContentDraft {
            tags: vec!["lentils".into(), "vegan".into()],
            notes: Some("Keeps 3 days.".into()),
            ..content("Dal tadka", &["1 onion"], &["Boil."])
        },
    ];
    for (i, edit) in edits.iter().enumerate() {
        recipes
            .edit(&s, v(i as u64 + 1), edit.clone(), &by(&format!("edit {i}")))
            .unwrap();
        written.push(edit.clone().normalized().unwrap());
    }
    let view = recipes.snapshot();
    let recipe = view.recipe(&s).unwrap();
    let versions = view.versions(recipe.id).unwrap();
    assert_eq!(versions.len(), written.len());
    assert_eq!(
        recipe.version_count as usize,
        written.len(),
        "the kept count agrees with history"
    );
    for (n, expected) in written.iter().enumerate() {
        let (version, read) = view.version(&s, v(n as u64 + 1)).unwrap();
        assert_eq!(&read, expected, "version {}", n + 1);
        assert_eq!(version.number, v(n as u64 + 1));
        assert_eq!(version.author.as_deref(), Some("tester"));
    }
    assert_eq!(versions[2].note.as_deref(), Some("edit 1"));
    assert!(matches!(
        view.version(&s, v(99)),
        Err(DomainError::NoSuchVersion { count: 5, .. })
    ));
}

#[test]
fn an_edit_writes_only_what_changed() {
    let recipes = fresh();
    let s = slug("pasta");
    let lines = [
        "200 g pasta",
        "2 tbsp oil",
        "1 onion",
        "2 cloves garlic",
        "1 can tomatoes",
        "salt",
        "pepper",
        "basil",
    ];
    recipes
        .create(
            &s,
            content("Pasta", &lines, &["Boil.", "Sauce.", "Toss."]),
            &by("first"),
        )
        .unwrap();
    let before = ingredient_ids(&recipes, &s);
    let mut changed = lines;
    changed[3] = "3 cloves garlic";
    let report = recipes
        .edit(
            &s,
            v(1),
            content("Pasta", &changed, &["Boil.", "Sauce.", "Toss."]),
            &by("more garlic"),
        )
        .unwrap();
    let after = ingredient_ids(&recipes, &s);
    let kept = before.iter().filter(|id| after.contains(id)).count();
    assert_eq!(kept, 7, "seven unchanged lines keep their components");
    // A new component (about six datoms), the old one's retraction, the
    // terms, the version count, the updated-at and the transaction's own.
    assert!(
        report.datoms.len() < 30,
        "{} datoms for one changed line",
        report.datoms.len()
    );
    let before = stored(recipes.store());
    assert!(matches!(
        recipes.edit(
            &s,
            v(2),
            content("Pasta", &changed, &["Boil.", "Sauce.", "Toss."]),
            &by("again")
        ),
        Err(DomainError::NothingChanged)
    ));
    assert!(stored(recipes.store()) == before, "a refused edit wrote");
}

/// The ingredient component entities of the recipe `s`, as stored now.
fn ingredient_ids(recipes: &Recipes, s: &Slug) -> Vec<u64> {
    let id = recipes.snapshot().recipe(s).unwrap().id.entity();
    recipes
        .store()
        .db()
        .values(id, recipes.attrs().ingredients)
        .unwrap()
        .iter()
        .filter_map(Value::as_ref)
        .collect()
}

#[test]
fn a_fork_copies_its_parent_at_a_version_and_records_where_it_came_from() {
    let recipes = fresh();
    let s = slug("soup");
    recipes
        .create(&s, content("Soup", &["1 leek"], &["Simmer."]), &by("v1"))
        .unwrap();
    recipes
        .edit(
            &s,
            v(1),
            content("Soup", &["2 leeks"], &["Simmer."]),
            &by("v2"),
        )
        .unwrap();
    let (fork, _) = recipes
        .fork(
            &s,
            Some(v(1)),
            None,
            |mut c| {
                c.title = "Leek soup".into();
                c
            },
            &Change::by("sam", "my version"),
        )
        .unwrap();
    assert_eq!(fork.as_str(), "soup-sam");
    let view = recipes.snapshot();
    let forked = view.recipe(&fork).unwrap();
    assert_eq!(
        forked.content.ingredients(),
        ["1 leek"],
        "copied from version 1, not 2"
    );
    assert_eq!(forked.content.title(), "Leek soup");
    let parent = view.recipe(&s).unwrap();
    assert_eq!(forked.forked_from, Some((parent.id, v(1))));
    assert_eq!(view.versions(forked.id).unwrap().len(), 1);
    assert_eq!(view.forks(parent.id).unwrap(), [forked.id]);
    // A second fork by the same cook gets a numbered slug; a taken one is refused.
    let (again, _) = recipes
        .fork(&s, None, None, |c| c, &Change::by("sam", "again"))
        .unwrap();
    assert_eq!(again.as_str(), "soup-sam-2");
    let before = stored(recipes.store());
    assert!(matches!(
        recipes.fork(&s, None, Some(&fork), |c| c, &by("clash")),
        Err(DomainError::SlugTaken(_))
    ));
    assert!(stored(recipes.store()) == before, "a refused fork wrote");
    // `/recipes/new` is the new-recipe form: no recipe may be there.
    let new = Slug::parse("new").unwrap();
    assert!(matches!(
        recipes.fork(&s, None, Some(&new), |c| c, &by("reserved")),
        Err(DomainError::SlugReserved(_))
    ));
    let content = recipes.snapshot().recipe(&s).unwrap().content;
    let refused = recipes.create(&new, content.into_draft(), &by("reserved"));
    assert_eq!(
        refused.unwrap_err().to_string(),
        "the slug new is the address of one of the site's own pages"
    );
    assert!(
        stored(recipes.store()) == before,
        "a reserved slug was written"
    );
    assert!(matches!(
        recipes.fork(&s, Some(v(7)), None, |c| c, &by("x")),
        Err(DomainError::NoSuchVersion { .. })
    ));
}

#[test]
fn a_retired_recipe_leaves_the_catalog_but_stays_in_its_forks_lineage() {
    let recipes = fresh();
    let root = slug("root");
    recipes
        .create(&root, content("Root", &["1 egg"], &["Cook."]), &by("v1"))
        .unwrap();
    let (child, _) = recipes
        .fork(&root, None, Some(&slug("child")), |c| c, &by("fork"))
        .unwrap();
    recipes.retire(&root, v(1), &by("retired")).unwrap();
    let view = recipes.snapshot();
    let page = view
        .catalog(&CatalogQuery {
            limit: 10,
            ..CatalogQuery::default()
        })
        .unwrap();
    let slugs: Vec<&str> = page.entries.iter().map(|e| &*e.slug).collect();
    assert_eq!(slugs, ["child"]);
    let child_id = view.recipe(&child).unwrap().id;
    let lineage = view.lineage(child_id).unwrap();
    assert_eq!(lineage.len(), 1);
    assert_eq!(view.slug_of(lineage[0].id).unwrap(), "root");
    assert!(view.recipe(&root).unwrap().retired);
}

#[test]
fn a_retired_recipe_is_neither_forked_nor_edited_whoever_asks() {
    let recipes = fresh();
    let root = slug("root");
    recipes
        .create(&root, content("Root", &["1 egg"], &["Cook."]), &by("v1"))
        .unwrap();
    recipes.retire(&root, v(1), &by("retired")).unwrap();
    let before = recipes.snapshot().basis();
    assert!(matches!(
        recipes.fork(&root, None, Some(&slug("late")), |c| c, &by("fork")),
        Err(DomainError::Retired { .. })
    ));
    assert!(matches!(
        recipes.fork(&root, Some(v(1)), None, |c| c, &by("fork v1")),
        Err(DomainError::Retired { .. })
    ));
    assert!(matches!(
        recipes.edit(
            &root,
            v(2),
            content("Root again", &["2 eggs"], &["Cook."]),
            &by("edit")
        ),
        Err(DomainError::Retired { .. })
    ));
    let view = recipes.snapshot();
    assert_eq!(view.basis(), before, "nothing was written");
    assert!(view.find(&slug("late")).unwrap().is_none());
}

/// Only its author may edit or retire a recipe, whoever calls the domain
/// (the web's forms, the CLI, a seed): decided in the writer.
#[test]
fn the_domain_refuses_another_cooks_edit_and_retirement() {
    let recipes = fresh();
    let root = slug("root");
    recipes
        .create(&root, content("Root", &["1 egg"], &["Cook."]), &by("v1"))
        .unwrap();
    let author = recipes.snapshot().recipe(&root).unwrap().author.unwrap();
    assert_ne!(author, "mallory");
    let before = stored(recipes.store());
    let mallory = |note: &str| Change::by("mallory", note);
    let edited = recipes.edit(
        &root,
        v(1),
        content("Root, mine now", &["2 eggs"], &["Cook."]),
        &mallory("take it"),
    );
    assert!(
        matches!(edited, Err(DomainError::NotAuthor { ref title, .. }) if title == "Root"),
        "{edited:?}"
    );
    // A stale version number does not tell another cook anything more.
    let retired = recipes.retire(&root, v(7), &mallory("gone"));
    assert!(
        matches!(retired, Err(DomainError::NotAuthor { .. })),
        "{retired:?}"
    );
    assert_eq!(stored(recipes.store()), before, "nothing was written");
    // Its author may.
    recipes
        .edit(
            &root,
            v(1),
            content("Root, better", &["2 eggs"], &["Cook."]),
            &Change::by(&author, "better"),
        )
        .unwrap();
    recipes
        .retire(&root, v(2), &Change::by(&author, "retired"))
        .unwrap();
}

#[test]
fn the_demo_seed_has_what_the_fixture_promises() {
    let view = demo().snapshot();
    let all = whole_catalog(&view);
    assert!(all.entries.len() >= 60, "{} recipes", all.entries.len());
    let deepest = all
        .entries
        .iter()
        .map(|e| view.lineage(e.id).unwrap().len())
        .max()
        .unwrap();
    assert!(deepest >= 12, "deepest lineage {deepest}");
    assert!(all.entries.iter().any(|e| e.version_count >= 10));
    assert!(all.entries.iter().any(|e| e.fork_count >= 20));
    let originals = all
        .entries
        .iter()
        .filter(|e| view.lineage(e.id).unwrap().is_empty())
        .count();
    let families = all
        .entries
        .iter()
        .filter(|e| view.lineage(e.id).unwrap().is_empty() && e.fork_count > 0)
        .count();
    assert!(
        families >= 4 && originals > families,
        "{families} families, {originals} originals"
    );
    assert!(view.tags().unwrap().len() >= 10);
    for entry in &all.entries {
        let versions = view.versions(entry.id).unwrap();
        assert_eq!(versions.len() as u32, entry.version_count, "{}", entry.slug);
    }
}

const ANCESTOR: &str = r#"[[(ancestor ?r ?a) [?r :recipe/forked-from ?a]]
                          [(ancestor ?r ?a) [?r :recipe/forked-from ?p] (ancestor ?p ?a)]]"#;

/// The ancestors of `id` by the datalog rule, as a sorted list.
fn by_rule(recipes: &Recipes, id: u64) -> Vec<u64> {
    let rows = recipes
        .store()
        .db()
        .q(
            "[:find ?a :in $ % ?r :where (ancestor ?r ?a)]",
            &[
                Input::rules(ANCESTOR).unwrap(),
                Input::Scalar(Value::Ref(id)),
            ],
        )
        .unwrap()
        .values();
    let mut out: Vec<u64> = rows.iter().map(|r| r[0].as_ref().unwrap()).collect();
    out.sort();
    out
}

fn by_walk(view: &Snapshot, id: u64) -> Vec<u64> {
    let mut out: Vec<u64> = view
        .lineage(forkful::domain::RecipeId::new(id))
        .unwrap()
        .iter()
        .map(|a| a.id.entity())
        .collect();
    out.sort();
    out
}

#[test]
fn the_lineage_walk_agrees_with_the_ancestor_rule_on_the_demo_seed() {
    let view = demo().snapshot();
    let all = whole_catalog(&view);
    for entry in all.entries {
        assert_eq!(
            by_walk(&view, entry.id.entity()),
            by_rule(demo(), entry.id.entity()),
            "{}",
            entry.slug
        );
    }
    let deepest = view
        .recipe(&slug("milk-bread-sourdough-tangzhong"))
        .unwrap();
    let lineage = view.lineage(deepest.id).unwrap();
    assert_eq!(
        view.slug_of(lineage.last().unwrap().id).unwrap(),
        "country-sourdough"
    );
    assert!(lineage.iter().all(|a| a.forked_version >= v(1)));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn the_lineage_walk_agrees_with_the_ancestor_rule_on_random_forests(
        parents in prop::collection::vec(any::<prop::sample::Index>(), 1..25),
        depth in 1usize..6,
        fanout in 1usize..4,
        rng in any::<u64>(),
    ) {
        let store = Store::temporary().unwrap();
        let n = parents.len() * 4;
        let shape = forkful::seed::synthetic::Shape { recipes: n, depth, fanout, rng, skeleton: false };
        let ids = forkful::seed::synthetic::generate(&store, shape, false).unwrap();
        let recipes = Recipes::open(store).unwrap();
        let view = recipes.snapshot();
        for id in &ids {
            prop_assert_eq!(by_walk(&view, *id), by_rule(&recipes, *id));
        }
        let deepest = view.lineage(forkful::domain::RecipeId::new(ids[depth.min(n - 1)])).unwrap().len();
        prop_assert_eq!(deepest, depth.min(n - 1));
    }
}

#[test]
fn a_lineage_that_runs_in_a_cycle_is_refused() {
    let recipes = fresh();
    for s in ["a", "b"] {
        recipes
            .create(&slug(s), content(s, &["x"], &["y"]), &by("make"))
            .unwrap();
    }
    let view = recipes.snapshot();
    let (a, b) = (
        view.recipe(&slug("a")).unwrap().id,
        view.recipe(&slug("b")).unwrap().id,
    );
    // Only a raw transaction can make a cycle: the domain's forks cannot.
    let mut tx = Transaction::new();
    tx.add(
        a.entity(),
        ":recipe/forked-from",
        TxValue::Entity(EntityRef::Id(b.entity())),
    )
    .add(
        b.entity(),
        ":recipe/forked-from",
        TxValue::Entity(EntityRef::Id(a.entity())),
    );
    recipes.store().transact(&tx).unwrap();
    assert!(matches!(
        recipes.snapshot().lineage(a),
        Err(DomainError::LineageCycle(_))
    ));
}

#[test]
fn the_fork_tree_holds_the_whole_family_within_its_bound() {
    let view = demo().snapshot();
    let root = view.recipe(&slug("country-sourdough")).unwrap();
    let tree = view.fork_tree(root.id, 1000).unwrap();
    assert_eq!(tree.nodes.len(), 15);
    assert!(!tree.truncated);
    assert_eq!(tree.nodes[0].depth, 0);
    // Each node is the root's or one step below the node before it, or
    // back up any number of steps: a depth-first order.
    for pair in tree.nodes.windows(2) {
        assert!(pair[1].depth >= 1 && pair[1].depth <= pair[0].depth + 1);
    }
    let cut = view.fork_tree(root.id, 3).unwrap();
    assert_eq!(cut.nodes.len(), 4, "three forks plus the root");
    assert!(cut.truncated);
    assert_eq!(cut.nodes[..], tree.nodes[..4], "the first four, in order");
}

#[test]
fn the_catalog_pages_through_every_recipe_once_in_order() {
    let view = demo().snapshot();
    for sort in [Sort::Title, Sort::Recent] {
        let mut seen = Vec::new();
        let mut after = None;
        loop {
            let page = view
                .catalog(&CatalogQuery {
                    sort,
                    after,
                    limit: 7,
                    tag: None,
                })
                .unwrap();
            seen.extend(
                page.entries
                    .iter()
                    .map(|e| (e.title.clone(), e.updated_at, e.id)),
            );
            match page.next {
                Some(next) => after = Some(next),
                None => break,
            }
        }
        let all = view
            .catalog(&CatalogQuery {
                sort,
                limit: 500,
                ..CatalogQuery::default()
            })
            .unwrap();
        assert_eq!(seen.len(), all.entries.len());
        let ids: std::collections::BTreeSet<u64> = seen.iter().map(|s| s.2.entity()).collect();
        assert_eq!(ids.len(), seen.len(), "no recipe twice");
        match sort {
            Sort::Title => assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0)),
            Sort::Recent => assert!(seen.windows(2).all(|w| w[0].1 >= w[1].1)),
        }
    }
    let vegan = view
        .catalog(&CatalogQuery {
            tag: Some("vegan".into()),
            limit: 100,
            ..CatalogQuery::default()
        })
        .unwrap();
    assert!(!vegan.entries.is_empty());
    assert!(vegan
        .entries
        .iter()
        .all(|e| e.tags.iter().any(|t| &**t == "vegan")));
    assert!(matches!(
        view.catalog(&CatalogQuery {
            after: Some(forkful::domain::RecipeId::new(3)),
            limit: 5,
            ..CatalogQuery::default()
        }),
        Err(DomainError::BadCursor(_))
    ));
}

#[test]
fn diffs_of_known_pairs_show_fields_lines_and_words() {
    let old = content(
        "Dal",
        &["1 cup lentils", "1 tsp cumin", "salt"],
        &["Boil.", "Fry the spices."],
    );
    let new = ContentDraft {
        recipe_yield: Yield {
            servings: Some(6),
            text: None,
        },
        cook: Some(Minutes::new(35).unwrap()),
        ..content(
            "Dal",
            &["1 cup lentils", "2 tsp cumin seeds", "salt", "ghee"],
            &["Boil.", "Fry the spices."],
        )
    };
    let d = diff::recipes(&old.normalized().unwrap(), &new.normalized().unwrap());
    let fields: Vec<String> = d.fields.iter().map(ToString::to_string).collect();
    assert_eq!(fields, ["servings 4 -> 6", "cook 20 min -> 35 min"]);
    assert!(matches!(&d.ingredients[1], LineChange::Changed(_)));
    assert_eq!(d.ingredients[3], LineChange::Added("ghee".into()));
    assert!(d.steps.iter().all(|s| matches!(s, LineChange::Same(_))));
    assert_eq!(d.summary(), "servings, cook, 2 ingredients");

    // A seeded fork against the parent version it forked.
    let view = demo().snapshot();
    let fork = view.recipe(&slug("green-shakshuka")).unwrap();
    let (parent, version) = fork.forked_from.unwrap();
    let parent_slug = slug(&view.slug_of(parent).unwrap());
    let (_, parent_content) = view.version(&parent_slug, version).unwrap();
    let (_, first) = view.version(&slug("green-shakshuka"), v(1)).unwrap();
    assert!(!diff::recipes(&parent_content, &first).is_empty());
}

#[test]
fn history_says_what_each_version_changed() {
    let recipes = fresh();
    let s = slug("stew");
    recipes
        .create(
            &s,
            content("Stew", &["1 kg beef", "2 onions"], &["Brown.", "Simmer."]),
            &by("first"),
        )
        .unwrap();
    recipes
        .edit(
            &s,
            v(1),
            content(
                "Beef stew",
                &["1 kg beef", "3 onions"],
                &["Brown.", "Simmer."],
            ),
            &by("more onion"),
        )
        .unwrap();
    recipes.retire(&s, v(2), &by("old")).unwrap();
    let view = recipes.snapshot();
    let id = view.recipe(&s).unwrap().id;
    let changes: Vec<String> = view
        .changes(id)
        .unwrap()
        .into_iter()
        .map(|(_, what)| what)
        .collect();
    assert_eq!(changes, ["created", "title, 1 ingredient", "retired"]);
}

#[test]
fn each_edit_stores_its_change_line_with_the_version() {
    let recipes = fresh();
    let s = slug("stew");
    recipes
        .create(
            &s,
            content("Stew", &["1 kg beef"], &["Simmer."]),
            &by("first"),
        )
        .unwrap();
    let edited = recipes
        .edit(
            &s,
            v(1),
            content("Beef stew", &["1 kg beef", "2 onions"], &["Simmer."]),
            &by("onions"),
        )
        .unwrap();
    let retired = recipes.retire(&s, v(2), &by("old")).unwrap();
    let db = recipes.store().db();
    let line = |tx| {
        db.value(tx, db.attribute(&kw(":tx/change")).unwrap().id)
            .unwrap()
            .and_then(|v| v.as_str().map(str::to_owned))
    };
    assert_eq!(
        line(edited.basis_after).as_deref(),
        Some("title, 1 ingredient")
    );
    assert_eq!(line(retired.basis_after).as_deref(), Some("retired"));
}

#[test]
fn history_lists_the_stored_line_and_diffs_only_versions_without_one() {
    let recipes = fresh();
    let s = slug("stew");
    recipes
        .create(
            &s,
            content("Stew", &["1 kg beef"], &["Simmer."]),
            &by("first"),
        )
        .unwrap();
    let id = recipes.snapshot().recipe(&s).unwrap().id;
    // A version whose stored line says something no diff would: history
    // shows it, so the line is read, not recomputed.
    let mut tx = Transaction::new();
    tx.add(id.entity(), ":recipe/title", "Stew for four")
        .tx_attr(":tx/change", "a line only the store holds");
    recipes.store().transact(&tx).unwrap();
    // A version written without the line (a store from before it existed):
    // history diffs it against the version before.
    let mut tx = Transaction::new();
    tx.add(id.entity(), ":recipe/title", "Stew for six");
    recipes.store().transact(&tx).unwrap();
    let changes: Vec<String> = recipes
        .snapshot()
        .changes(id)
        .unwrap()
        .into_iter()
        .map(|(_, what)| what)
        .collect();
    assert_eq!(changes, ["created", "a line only the store holds", "title"]);
}

#[test]
fn every_stored_change_line_of_the_demo_matches_the_diff_of_its_versions() {
    let recipes = demo();
    let view = recipes.snapshot();
    let mut checked = 0;
    for entry in whole_catalog(&view).entries {
        let s = slug(&entry.slug);
        let id = view.recipe(&s).unwrap().id;
        let changes = view.changes(id).unwrap();
        for pair in changes.windows(2) {
            let (before, _) = &pair[0];
            let (now, stored) = &pair[1];
            if stored == RETIRED {
                continue; // a retirement changes no content to diff
            }
            let (_, old) = view.version(&s, before.number).unwrap();
            let (_, new) = view.version(&s, now.number).unwrap();
            // A version that brought in its parent's changes, or took a
            // fork's suggestion, says so first.
            let stored = match stored.split_once(": ") {
                Some((said, what))
                    if said.starts_with("brought in version ")
                        || said.starts_with("took suggestion ") =>
                {
                    what
                }
                _ => stored.as_str(),
            };
            assert_eq!(
                stored,
                diff::recipes(&old, &new).summary(),
                "{}",
                entry.slug
            );
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} edits in the demo");
}

#[test]
fn a_fork_compares_with_its_parent_then_and_now() {
    let recipes = fresh();
    let s = slug("bread");
    recipes
        .create(
            &s,
            content("Bread", &["500 g flour", "350 g water"], &["Mix.", "Bake."]),
            &by("v1"),
        )
        .unwrap();
    let (fork, _) = recipes
        .fork(
            &s,
            None,
            Some(&slug("rye-bread")),
            |mut c| {
                c.ingredients[0] = "500 g rye flour".into();
                c
            },
            &by("rye"),
        )
        .unwrap();
    recipes
        .edit(
            &s,
            v(1),
            content("Bread", &["500 g flour", "360 g water"], &["Mix.", "Bake."]),
            &by("wetter"),
        )
        .unwrap();
    let view = recipes.snapshot();
    let id = view.recipe(&fork).unwrap().id;
    let (then, now) = view.compare_with_parent(id).unwrap().unwrap();
    assert_eq!(then.summary(), "1 ingredient");
    assert_eq!(
        now.summary(),
        "2 ingredients",
        "the parent's water changed since"
    );
    assert!(view
        .compare_with_parent(view.recipe(&s).unwrap().id)
        .unwrap()
        .is_none());
}

#[test]
fn a_recipes_slug_and_title_come_in_one_read_and_agree_with_each_alone() {
    let view = demo().snapshot();
    for entry in whole_catalog(&view).entries.iter().take(10) {
        let pinned = demo().snapshot();
        let pair = pinned.slug_and_title(entry.id).unwrap();
        assert_eq!(pinned.reads_so_far(), 1);
        assert_eq!(
            pair,
            (
                view.slug_of(entry.id).unwrap(),
                view.title_of(entry.id).unwrap()
            )
        );
        assert_eq!(pair.0, &*entry.slug);
    }
}

#[test]
fn sitemap_files_split_the_catalog_by_id_without_gaps_or_repeats() {
    let view = demo().snapshot();
    let mut all: Vec<(u64, String)> = crate::helpers::whole_catalog(&view)
        .entries
        .iter()
        .map(|e| (e.id.entity(), e.slug.to_string()))
        .collect();
    all.sort();
    assert_eq!(view.sitemap_files(1 << 40).unwrap(), 1);
    let last = all.last().unwrap().0;
    let per = (last / 5).max(1);
    let files = view.sitemap_files(per).unwrap();
    assert!(files >= 5, "{files} files");
    assert_eq!(files as u64, last / per + 1);
    let mut listed = Vec::new();
    for file in 0..files {
        for (slug, changed) in view.sitemap_file(file, per).unwrap() {
            let (id, _) = all.iter().find(|(_, s)| **s == *slug).unwrap();
            assert_eq!(id / per, file as u64, "{slug} in file {file}");
            assert!(changed.is_some(), "{slug} says when it last changed");
            listed.push(slug.to_string());
        }
    }
    let slugs: Vec<String> = all.into_iter().map(|(_, slug)| slug).collect();
    assert_eq!(listed, slugs, "every recipe once, by id, none retired");
    assert!(view.sitemap_file(files, per).unwrap().is_empty());
}

#[test]
fn a_store_whose_attributes_are_out_of_the_order_reads_assume_is_refused() {
    // Reads take several attributes as one range of ids: the lineage walk
    // its two fork attributes, a recipe every attribute before its search
    // terms, a catalog line those from the slug to `:recipe/retired`. A
    // store that installed one of them first breaks that, and is refused
    // when opened, in every build, rather than misread.
    use forkful::store::attribute_map;
    use forkful::store::{Cardinality, ValueType};
    let cases = [
        (
            ":recipe/forked-at-version",
            ValueType::Long,
            Cardinality::One,
            "the lineage walk",
        ),
        (
            ":recipe/terms",
            ValueType::String,
            Cardinality::Many,
            "a recipe's read",
        ),
        (
            ":recipe/retired",
            ValueType::Boolean,
            Cardinality::One,
            "a catalog line",
        ),
    ];
    for (ident, value_type, cardinality, read) in cases {
        let store = Store::temporary().unwrap();
        let mut first = Transaction::new();
        first.map(attribute_map(ident, value_type, cardinality, None));
        store.transact(&first).unwrap();
        let error = Recipes::open(store).map(|_| ()).unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains("corrupt") && message.contains(read),
            "{ident}: {message}"
        );
    }
    // In the order the schema installs them, every read holds.
    let recipes = Recipes::temporary().unwrap();
    assert!(recipes.snapshot().catalog(&CatalogQuery::default()).is_ok());
}

#[test]
fn a_recipe_at_every_limit_is_created_edited_and_forked_each_in_one_transaction() {
    let recipes = fresh();
    let big = slug("big");
    let created = recipes
        .create(&big, largest_content(0), &by("first"))
        .unwrap();
    // A recipe written while the store kept search terms holds them, as
    // many as its content has words: its first edit since retracts them.
    let first = largest_content(0).normalized().unwrap();
    let mut old_terms: std::collections::BTreeSet<String> =
        forkful::domain::search_terms::summary_terms(&first);
    old_terms.extend(forkful::domain::search_terms::ingredient_terms(&first));
    old_terms.extend(
        first
            .title()
            .split(' ')
            .chain(first.tags().iter().map(String::as_str))
            .map(str::to_lowercase),
    );
    let mut terms = Transaction::new();
    let id = recipes.snapshot().recipe(&big).unwrap().id.entity();
    for term in &old_terms {
        terms.add(id, ":recipe/terms", term.as_str());
    }
    recipes.store().transact(&terms).unwrap();
    // Every line, step, tag and field replaced, and the old terms
    // retracted: the largest edit.
    let edited = recipes
        .edit(
            &big,
            VersionNumber::FIRST,
            largest_content(1),
            &by("all new"),
        )
        .unwrap();
    let fork = slug("big-fork");
    let (_, forked) = recipes
        .fork(&big, None, Some(&fork), |_| largest_content(2), &by("fork"))
        .unwrap();
    let sizes = [&created, &edited, &forked].map(|report| report.datoms.len());
    // Near the arithmetic's worst case (2,459 new, 10,356 an edit; see
    // `content`), so this is the case that bounds them, not a small one.
    assert!(old_terms.len() > 5_000, "{} old terms", old_terms.len());
    assert!(sizes[0] > 2_300 && sizes[2] > 2_300, "{sizes:?}");
    assert!(sizes[1] > 9_500, "{sizes:?}");
    let db = recipes.store().db();
    assert!(
        db.values(id, recipes.attrs().terms).unwrap().is_empty(),
        "the edit retracted the old terms"
    );
    let snapshot = recipes.snapshot();
    let now = snapshot.current(&big).unwrap().content;
    assert_eq!(now, largest_content(1).normalized().unwrap());
    assert_eq!(
        snapshot.current(&fork).unwrap().content,
        largest_content(2).normalized().unwrap()
    );
}

#[test]
fn content_past_a_transactions_bound_is_refused_by_field_and_writes_nothing() {
    let recipes = fresh();
    let big = slug("big");
    recipes
        .create(&big, largest_content(0), &by("first"))
        .unwrap();
    let mut wordy = largest_content(1);
    wordy.summary = Some(words(500_000, MAX_SUMMARY_TERMS + 1, " "));
    let mut many_items = largest_content(1);
    let one_more = format!("cups {} ", words(500_000, 1, ""));
    many_items.ingredients[0] = many_items.ingredients[0].replacen("cups ", &one_more, 1);
    let mut long_section = largest_content(1);
    long_section.steps[0].section = Some("s".repeat(MAX_LINE + 1));
    let before = stored(recipes.store());
    for (content, field) in [
        (wordy, ContentField::Field("summary")),
        (many_items, ContentField::Ingredients),
        (long_section, ContentField::Steps),
    ] {
        let refused = |result: Result<(), DomainError>| match result {
            Err(DomainError::Content(why)) => assert_eq!(why.field(), field, "{why}"),
            other => panic!("{field:?}: {other:?}"),
        };
        refused(
            recipes
                .create(&slug("fresh"), content.clone(), &by("first"))
                .map(drop),
        );
        refused(
            recipes
                .edit(&big, VersionNumber::FIRST, content.clone(), &by("again"))
                .map(drop),
        );
        refused(
            recipes
                .fork(
                    &big,
                    None,
                    Some(&slug("fork")),
                    |_| content.clone(),
                    &by("fork"),
                )
                .map(drop),
        );
    }
    assert!(stored(recipes.store()) == before, "nothing was written");
    let ingredients = largest_content(1).normalized().unwrap();
    assert_eq!(
        forkful::domain::search_terms::ingredient_terms(&ingredients).len(),
        MAX_INGREDIENT_TERMS,
        "one more item word is one past the limit"
    );
}
