//! Writers that race: every domain write is decided inside the store's
//! single writer, so concurrent writers cannot merge, double or lose.

use std::sync::{Arc, Barrier};

use forkful::domain::{Change, ContentDraft, DomainError, Recipes, Slug, Step};
use forkful::store::{Store, Value};

use crate::helpers::v;

fn slug(s: &str) -> Slug {
    Slug::parse(s).unwrap()
}

fn content(title: &str, ingredients: &[String]) -> ContentDraft {
    ContentDraft {
        title: title.into(),
        summary: Some(format!("The {title} way.")),
        ingredients: ingredients.to_vec(),
        steps: vec![Step {
            section: None,
            text: format!("Cook the {title}."),
        }],
        tags: vec![title.to_lowercase().replace(' ', "-")],
        ..ContentDraft::default()
    }
}

const WRITERS: usize = 8;

/// Runs `write(i)` on `WRITERS` threads released together.
fn race<T: Send + 'static>(
    recipes: &Recipes,
    write: impl Fn(&Recipes, usize) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let barrier = Arc::new(Barrier::new(WRITERS));
    let write = Arc::new(write);
    let threads: Vec<_> = (0..WRITERS)
        .map(|i| {
            let (recipes, barrier, write) = (recipes.clone(), barrier.clone(), write.clone());
            std::thread::spawn(move || {
                barrier.wait();
                write(&recipes, i)
            })
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).collect()
}

/// The content of the one writer that succeeded, every other having failed
/// as `expected` says.
fn the_one_winner<T>(
    results: &[(ContentDraft, Result<T, DomainError>)],
    expected: impl Fn(&DomainError) -> bool,
) -> &ContentDraft {
    let winners: Vec<&ContentDraft> = results
        .iter()
        .filter(|(_, outcome)| outcome.is_ok())
        .map(|(written, _)| written)
        .collect();
    assert_eq!(winners.len(), 1, "exactly one writer succeeds");
    for (_, outcome) in results {
        if let Err(error) = outcome {
            assert!(expected(error), "{error}");
        }
    }
    winners[0]
}

/// What the recipe's facts say, checked against what they should derive:
/// one component per line, at distinct positions.
fn assert_consistent(recipes: &Recipes, s: &Slug) {
    let recipe = recipes.snapshot().recipe(s).unwrap();
    let a = recipes.attrs();
    let db = recipes.store().db();
    let ingredients = db.values(recipe.id.entity(), a.ingredients).unwrap();
    assert_eq!(
        ingredients.len(),
        recipe.content.ingredients().len(),
        "{s}: one component per ingredient line"
    );
    let mut positions: Vec<i64> = ingredients
        .iter()
        .filter_map(Value::as_ref)
        .map(|c| {
            db.values(c, a.ingredient_position).unwrap()[0]
                .as_long()
                .unwrap()
        })
        .collect();
    positions.sort();
    let expected: Vec<i64> = (1..=ingredients.len() as i64).collect();
    assert_eq!(positions, expected, "{s}: positions 1..n, none doubled");
}

#[test]
fn of_many_writers_creating_one_slug_exactly_one_wins_and_nothing_merges() {
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    let results = race(&recipes, |recipes, i| {
        let lines: Vec<String> = (0..3).map(|n| format!("{n} cups rice {i}")).collect();
        let written = content(&format!("Pilaf {i}"), &lines);
        let outcome = recipes.create(&slug("pilaf"), written.clone(), &Change::by("cook", "new"));
        (written, outcome)
    });
    let winner = the_one_winner(&results, |error| {
        matches!(error, DomainError::SlugTaken(s) if s == "pilaf")
            && error.to_string().contains("pilaf")
    });
    let view = recipes.snapshot();
    let recipe = view.recipe(&slug("pilaf")).unwrap();
    assert_eq!(
        recipe.content,
        winner.clone().normalized().unwrap(),
        "the winner's recipe is exactly what it wrote"
    );
    assert_eq!(recipe.version_count, 1);
    assert_consistent(&recipes, &slug("pilaf"));
}

#[test]
fn of_many_writers_editing_from_one_version_exactly_one_makes_a_version() {
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    let s = slug("congee");
    let lines: Vec<String> = vec!["1 cup rice".into(), "8 cups water".into()];
    recipes
        .create(&s, content("Congee", &lines), &Change::by("cook", "new"))
        .unwrap();
    let results = race(&recipes, |recipes, i| {
        let mut lines: Vec<String> = vec!["1 cup rice".into(), format!("{} cups water", 9 + i)];
        lines.push(format!("{i} slices ginger"));
        let edited = content("Congee", &lines);
        let outcome = recipes.edit(
            &slug("congee"),
            v(1),
            edited.clone(),
            &Change::by("cook", "edit"),
        );
        (edited, outcome)
    });
    let winner = the_one_winner(&results, |error| {
        matches!(
            error,
            DomainError::Stale { based_on, newest, .. } if *based_on == v(1) && *newest == v(2)
        )
    });
    let view = recipes.snapshot();
    let recipe = view.recipe(&s).unwrap();
    assert_eq!(recipe.version_count, 2);
    assert_eq!(view.versions(recipe.id).unwrap().len(), 2);
    assert_eq!(recipe.content, winner.clone().normalized().unwrap());
    assert_consistent(&recipes, &s);
}

#[test]
fn writers_that_each_edit_the_newest_version_all_land_in_turn() {
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    let s = slug("stock");
    let lines: Vec<String> = vec!["1 onion".into()];
    recipes
        .create(&s, content("Stock", &lines), &Change::by("cook", "new"))
        .unwrap();
    // Each writer retries on `Stale` with the version it then reads, as a
    // person would after seeing what changed.
    race(&recipes, |recipes, i| loop {
        let view = recipes.snapshot();
        let current = view.recipe(&slug("stock")).unwrap();
        let mut edited = current.content.to_draft();
        edited.ingredients.push(format!("{} bay leaves", i + 1));
        edited.tags.push(format!("batch-{i}"));
        let based_on = current.newest();
        match recipes.edit(&slug("stock"), based_on, edited, &Change::by("cook", "add")) {
            Ok(_) => return,
            Err(DomainError::Stale { .. }) => continue,
            Err(other) => panic!("{other}"),
        }
    });
    let view = recipes.snapshot();
    let recipe = view.recipe(&s).unwrap();
    assert_eq!(recipe.version_count as usize, 1 + WRITERS);
    assert_eq!(recipe.content.ingredients().len(), 1 + WRITERS);
    assert_eq!(view.versions(recipe.id).unwrap().len(), 1 + WRITERS);
    assert_consistent(&recipes, &s);
}

#[test]
fn many_forks_of_one_recipe_at_once_get_distinct_free_slugs() {
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    let s = slug("ramen");
    recipes
        .create(
            &s,
            content("Ramen", &["1 nest noodles".to_owned()]),
            &Change::by("cook", "new"),
        )
        .unwrap();
    let results = race(&recipes, |recipes, _| {
        recipes
            .fork(
                &slug("ramen"),
                None,
                None,
                |c| c,
                &Change::by("sam", "mine"),
            )
            .unwrap()
            .0
    });
    let mut slugs: Vec<String> = results.iter().map(ToString::to_string).collect();
    slugs.sort();
    slugs.dedup();
    assert_eq!(
        slugs.len(),
        WRITERS,
        "every fork has its own slug: {slugs:?}"
    );
    let view = recipes.snapshot();
    let id = view.recipe(&s).unwrap().id;
    assert_eq!(view.forks(id).unwrap().len(), WRITERS);
    for fork in &slugs {
        assert_consistent(&recipes, &slug(fork));
    }
}

#[test]
fn a_retire_based_on_an_old_version_is_refused() {
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    let s = slug("gruel");
    let lines: Vec<String> = vec!["1 cup oats".into()];
    recipes
        .create(&s, content("Gruel", &lines), &Change::by("cook", "new"))
        .unwrap();
    recipes
        .edit(
            &s,
            v(1),
            content("Gruel", &["2 cups oats".to_owned()]),
            &Change::by("cook", "more"),
        )
        .unwrap();
    let before = recipes.store().raw_contents().unwrap();
    let error = recipes
        .retire(&s, v(1), &Change::by("cook", "gone"))
        .unwrap_err();
    assert!(error.to_string().contains("version 1"), "{error}");
    assert_eq!(recipes.store().raw_contents().unwrap(), before);
    recipes
        .retire(&s, v(2), &Change::by("cook", "gone"))
        .unwrap();
    assert!(recipes.snapshot().recipe(&s).unwrap().retired);
}

#[test]
fn many_opens_of_a_new_store_at_once_install_the_schema_once() {
    // The schema is decided inside the writer: an open that finds it
    // installed meanwhile writes nothing, rather than a second install
    // decided on a value from before the first.
    for _ in 0..4 {
        let store = Store::temporary().unwrap();
        let barrier = Arc::new(Barrier::new(WRITERS));
        let opens: Vec<_> = (0..WRITERS)
            .map(|_| {
                let (store, barrier) = (store.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    Recipes::open(store).map(|_| ())
                })
            })
            .collect();
        for open in opens {
            open.join().unwrap().unwrap();
        }
        assert_eq!(
            store.stats().transactions,
            1,
            "one transaction installs the schema"
        );
    }
}
