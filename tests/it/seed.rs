//! Loading the demo seed, seed-file mistakes, and the synthetic catalog.

use forkful::domain::Recipes;
use forkful::seed::{self, synthetic, SeedFailure};
use forkful::store::Store;

use crate::helpers::stored;

const ORIGINAL: &str = r#"{:slug "toast"
 :versions [{:at #inst "2024-01-01T08:00:00Z" :author "ben" :note "first"
             :title "Toast" :ingredients ["1 slice bread"] :steps ["Toast it."]}]}"#;

fn files(extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut out = vec![("toast.edn".to_owned(), ORIGINAL.to_owned())];
    out.extend(extra.iter().map(|(n, t)| (n.to_string(), t.to_string())));
    out
}

/// Plans `files`, expecting a mistake in `file` at `line` saying `words`.
fn mistake(files: &[(String, String)], file: &str, line: usize, words: &str) {
    let error = seed::plan(files).expect_err("the seed should be refused");
    assert_eq!((error.file.as_str(), error.line), (file, line), "{error}");
    assert!(error.message.contains(words), "{error}");
    assert!(error.to_string().starts_with(&format!("{file}:{line}: ")));
}

#[test]
fn the_demo_seed_loads_into_a_fresh_store_and_reports_what_it_wrote() {
    let store = Store::temporary().unwrap();
    let report = seed::demo(&store).unwrap();
    assert!(
        report.recipes >= 60 && report.versions > report.recipes && report.forks > 20,
        "{report:?}"
    );
    assert_eq!(report.basis, store.db().basis());
    let recipes = Recipes::open(store.clone()).unwrap();
    let all = crate::helpers::whole_catalog(&recipes.snapshot());
    assert_eq!(all.entries.len(), report.recipes);
    // Seeding again is refused, and changes nothing.
    let before = stored(&store);
    assert!(matches!(seed::demo(&store), Err(SeedFailure::NotEmpty)));
    assert!(stored(&store) == before, "a refused seed changed a key");
}

#[test]
fn seed_mistakes_name_the_file_and_line_and_write_nothing() {
    mistake(
        &files(&[("bad.edn", "{:slug \"bad\"\n :versions [")]),
        "bad.edn",
        2,
        "unterminated",
    );
    mistake(
        &files(&[("fork.edn", "{:slug \"fork\"\n :forks {:slug \"nope\" :version 1}\n :versions [{:at #inst \"2024-02-01T00:00:00Z\" :author \"ben\" :note \"x\" :title \"F\"}]}")]),
        "fork.edn",
        2,
        "nope, which is not in the seed",
    );
    mistake(
        &files(&[("fork.edn", "{:slug \"fork\"\n :forks {:slug \"toast\" :version 3}\n :versions [{:at #inst \"2024-02-01T00:00:00Z\" :author \"ben\" :note \"x\" :title \"F\"}]}")]),
        "fork.edn",
        2,
        "has 1 versions, not 3",
    );
    mistake(
        &files(&[("early.edn", "{:slug \"early\" :forks {:slug \"toast\" :version 1}\n :versions\n [{:at #inst \"2023-02-01T00:00:00Z\" :author \"ben\" :note \"x\" :title \"F\"}]}")]),
        "early.edn",
        3,
        "not later than version 1 of toast",
    );
    let cycle = [
        ("x.edn", "{:slug \"x\" :forks {:slug \"y\" :version 1}\n :versions [{:at #inst \"2024-03-01T00:00:00Z\" :author \"ben\" :note \"x\" :title \"X\"}]}"),
        ("y.edn", "{:slug \"y\" :forks {:slug \"x\" :version 1}\n :versions [{:at #inst \"2024-04-01T00:00:00Z\" :author \"ben\" :note \"y\" :title \"Y\"}]}"),
    ];
    mistake(
        &files(&cycle),
        "x.edn",
        1,
        "x forks itself through its ancestors (a cycle)",
    );
    mistake(
        &files(&[("self.edn", "{:slug \"self\" :forks {:slug \"self\" :version 1}\n :versions [{:at #inst \"2024-03-01T00:00:00Z\" :author \"ben\" :note \"x\" :title \"X\"}]}")]),
        "self.edn",
        1,
        "(a cycle)",
    );
    mistake(
        &files(&[("quiet.edn", "{:slug \"quiet\"\n :versions [{:at #inst \"2024-02-01T00:00:00Z\" :author \"ben\" :note \"a\" :title \"Q\" :ingredients [\"x\"] :steps [\"y\"]}\n  {:at #inst \"2024-03-01T00:00:00Z\" :author \"ben\" :note \"  \" :title \"R\"}]}")]),
        "quiet.edn",
        3,
        "needs a note",
    );
    mistake(
        &files(&[("who.edn", "{:slug \"who\"\n :versions [{:at #inst \"2024-02-01T00:00:00Z\" :author \"Ben Smith\" :note \"a\" :title \"Q\" :ingredients [\"x\"] :steps [\"y\"]}]}")]),
        "who.edn",
        2,
        "is not a handle",
    );
    mistake(
        &files(&[("order.edn", "{:slug \"order\"\n :versions [{:at #inst \"2024-02-01T00:00:00Z\" :author \"ben\" :note \"a\" :title \"O\" :ingredients [\"x\"] :steps [\"y\"]}\n  {:at #inst \"2024-01-01T00:00:00Z\" :author \"ben\" :note \"b\" :title \"P\"}]}")]),
        "order.edn",
        3,
        "time order",
    );
    mistake(
        &files(&[("typo.edn", "{:slug \"typo\"\n :versions [{:at #inst \"2024-02-01T00:00:00Z\" :author \"ben\" :note \"a\"\n   :title \"T\" :ingredeints [\"x\"]}]}")]),
        "typo.edn",
        3,
        "no field :ingredeints",
    );
    mistake(
        &files(&[("named.edn", "{:slug \"other\"\n :versions []}")]),
        "named.edn",
        1,
        "not the file's name",
    );
    // A version by another cook: the domain lets only the recipe's own
    // cook edit it (found by the seed fuzz check: planned, then refused).
    mistake(
        &files(&[("theirs.edn", "{:slug \"theirs\"\n :versions [{:at #inst \"2024-02-01T00:00:00Z\" :author \"ben\" :note \"a\" :title \"T\" :ingredients [\"x\"] :steps [\"y\"]}\n  {:at #inst \"2024-03-01T00:00:00Z\" :author \"cy\" :note \"b\" :title \"U\"}]}")]),
        "theirs.edn",
        3,
        "only ben, whose recipe it is, adds versions to it, not cy",
    );
    mistake(
        &files(&[("same.edn", "{:slug \"same\"\n :versions [{:at #inst \"2024-02-01T00:00:00Z\" :author \"ben\" :note \"a\" :title \"S\" :ingredients [\"x\"] :steps [\"y\"]}\n  {:at #inst \"2024-03-01T00:00:00Z\" :author \"ben\" :note \"b\" :title \"S\"}]}")]),
        "same.edn",
        3,
        "changes nothing",
    );
    // Nothing was written by any of these: plan never touches a store.
    let store = Store::temporary().unwrap();
    let plan = seed::plan(&files(&[])).unwrap();
    assert_eq!(seed::apply(&store, &plan).unwrap().recipes, 1);
}

#[test]
fn a_synthetic_catalog_has_the_shape_asked_for_and_is_the_same_every_time() {
    let shape = synthetic::Shape {
        recipes: 130,
        depth: 12,
        fanout: 3,
        rng: 7,
        skeleton: false,
    };
    let titles = |shape| {
        let store = Store::temporary().unwrap();
        let ids = synthetic::generate(&store, shape, false).unwrap();
        let recipes = Recipes::open(store).unwrap();
        let view = recipes.snapshot();
        assert_eq!(ids.len(), 130);
        assert_eq!(
            view.lineage(forkful::domain::RecipeId::new(ids[12]))
                .unwrap()
                .len(),
            12,
            "the spine's end is 12 deep"
        );
        assert_eq!(
            view.forks(forkful::domain::RecipeId::new(ids[0]))
                .unwrap()
                .len(),
            3,
            "the spine's next link and two more"
        );
        ids.iter()
            .map(|id| view.title_of(forkful::domain::RecipeId::new(*id)).unwrap())
            .collect::<Vec<_>>()
    };
    let first = titles(shape);
    assert_eq!(first, titles(shape));
    assert_ne!(first, titles(synthetic::Shape { rng: 8, ..shape }));
}

/// A seed file's scalar keys are the field table's names, each read by its
/// kind: a row added to `content::FIELDS` (`:language`) is a key here with
/// no change to the reader, and the yield's rows stay inside `:yield`.
#[test]
fn a_seed_file_takes_every_field_of_the_table_by_its_name() {
    let planned = seed::plan(&files(&[(
        "pasta.edn",
        "{:slug \"pasta\"\n :versions [{:at #inst \"2024-02-01T00:00:00Z\" :author \"ben\" :note \"a\"\n   :title \"Pasta\" :language \"Italian\" :cuisine \"Roman\" :prep 5 :total 20\n   :ingredients [\"pasta\"] :steps [\"Boil it.\"]}]}",
    )]))
    .unwrap();
    let pasta = planned.iter().find(|v| v.slug.as_str() == "pasta").unwrap();
    let content = &pasta.content;
    assert_eq!(content.language.as_deref(), Some("Italian"));
    assert_eq!(content.cuisine.as_deref(), Some("Roman"));
    assert_eq!(content.prep.map(|m| m.get()), Some(5));
    assert_eq!(content.total.map(|m| m.get()), Some(20));
    mistake(
        &files(&[("kind.edn", "{:slug \"kind\"\n :versions [{:at #inst \"2024-02-01T00:00:00Z\" :author \"ben\" :note \"a\"\n   :title \"K\" :prep \"five\"}]}")]),
        "kind.edn",
        3,
        ":prep",
    );
    mistake(
        &files(&[("yields.edn", "{:slug \"yields\"\n :versions [{:at #inst \"2024-02-01T00:00:00Z\" :author \"ben\" :note \"a\"\n   :title \"Y\" :servings 4}]}")]),
        "yields.edn",
        3,
        "no field :servings",
    );
}

/// `toast`, with a fork by ann (buttered, at `fork_at`) whose suggestion
/// `toast`'s second version takes (`takes`, the version's `:takes` map
/// text, at `taken_at`).
fn a_taken_suggestion(fork_at: &str, takes: &str, taken_at: &str) -> Vec<(String, String)> {
    let fork = format!(
        "{{:slug \"buttered\" :forks {{:slug \"toast\" :version 1}}\n \
         :versions [{{:at #inst \"{fork_at}\" :author \"ann\" :note \"butter\" :title \"Buttered toast\"\n \
         :ingredients [\"1 slice bread\" \"butter\"]}}]}}"
    );
    let toast = format!(
        "{{:slug \"toast\"\n :versions [{{:at #inst \"2024-01-01T08:00:00Z\" :author \"ben\" :note \"first\"\n \
         :title \"Toast\" :ingredients [\"1 slice bread\"] :steps [\"Toast it.\"]}}\n \
         {{:at #inst \"{taken_at}\" :author \"ben\" :note \"took ann's butter\"\n :takes {takes}}}]}}"
    );
    vec![
        ("toast.edn".to_owned(), toast),
        ("buttered.edn".to_owned(), fork),
    ]
}

#[test]
fn a_seed_version_takes_a_forks_suggestion_as_the_site_would_and_refuses_what_it_would() {
    let good =
        "{:fork \"buttered\" :version 1 :at #inst \"2024-02-02T00:00:00Z\" :message \"Butter it\"}";
    let files = a_taken_suggestion("2024-02-01T00:00:00Z", good, "2024-02-03T00:00:00Z");
    let plan = seed::plan(&files).unwrap();
    let store = Store::temporary().unwrap();
    seed::apply(&store, &plan).unwrap();
    let recipes = Recipes::open(store).unwrap();
    let view = recipes.snapshot();
    let toast = view
        .recipe(&forkful::domain::Slug::parse("toast").unwrap())
        .unwrap();
    assert_eq!(toast.content.ingredients(), ["1 slice bread", "butter"]);
    assert_eq!(
        toast.content.title(),
        "Toast",
        "the fork's title is its own"
    );
    let taken = view.suggestion(toast.id, 1).unwrap().unwrap();
    assert_eq!(
        (
            taken.state.as_str(),
            taken.by.as_deref(),
            taken.message.as_str()
        ),
        ("accepted", Some("ann"), "Butter it")
    );
    assert_eq!(taken.accepted_in, Some(crate::helpers::v(2)));

    // What the site would refuse, the seed refuses at the line of :takes.
    let refused = |takes: &str, fork_at: &str, taken_at: &str, words: &str| {
        mistake(
            &a_taken_suggestion(fork_at, takes, taken_at),
            "toast.edn",
            5,
            words,
        );
    };
    refused(
        "{:fork \"nope\" :version 1 :at #inst \"2024-02-02T00:00:00Z\" :message \"m\"}",
        "2024-02-01T00:00:00Z",
        "2024-02-03T00:00:00Z",
        "nope is not a fork of toast",
    );
    refused(
        "{:fork \"buttered\" :version 2 :at #inst \"2024-02-02T00:00:00Z\" :message \"m\"}",
        "2024-02-01T00:00:00Z",
        "2024-02-03T00:00:00Z",
        "buttered has 1 versions, not 2",
    );
    refused(
        "{:fork \"buttered\" :version 1 :at #inst \"2024-02-04T00:00:00Z\" :message \"m\"}",
        "2024-02-01T00:00:00Z",
        "2024-02-03T00:00:00Z",
        "suggested after version 1 of buttered is made, and taken after that",
    );
    // The fork's next version on the very instant the suggestion is taken:
    // the open suggestion would follow it.
    let tie = "{:slug \"buttered\" :forks {:slug \"toast\" :version 1}\n \
         :versions [{:at #inst \"2024-02-01T00:00:00Z\" :author \"ann\" :note \"butter\" :title \"Buttered toast\"\n \
         :ingredients [\"1 slice bread\" \"butter\"]}\n \
         {:at #inst \"2024-02-03T00:00:00Z\" :author \"ann\" :note \"more\" :title \"Very buttered toast\"}]}"
        .to_owned();
    let mut tied = a_taken_suggestion("2024-02-01T00:00:00Z", good, "2024-02-03T00:00:00Z");
    tied[1].1 = tie;
    mistake(
        &tied,
        "toast.edn",
        5,
        "makes a newer version before it is taken",
    );
    refused(
        "{:fork \"buttered\" :version 1 :at #inst \"2024-02-02T00:00:00Z\"}",
        "2024-02-01T00:00:00Z",
        "2024-02-03T00:00:00Z",
        ":takes needs :message",
    );
}

#[test]
fn the_demo_has_a_fork_in_step_and_a_suggestion_its_parent_took() {
    use forkful::domain::{pages, Slug};
    let recipes = crate::helpers::demo();
    let view = recipes.snapshot();
    let slug = |s: &str| Slug::parse(s).unwrap();
    let synced = view.recipe(&slug("masoor-dal-coconut")).unwrap();
    assert!(!view.merges(synced.id).unwrap().is_empty(), "a merge");
    let fork = view.recipe(&slug("banana-bread-salted-crust")).unwrap();
    let taken = view.taken_from(fork.id).unwrap();
    assert_eq!(taken.len(), 1, "{taken:?}");
    let parent = view.recipe(&slug("banana-bread")).unwrap();
    assert!(parent
        .content
        .ingredients()
        .iter()
        .any(|line| line == "1/2 tsp flaky sea salt"));
    let page = pages::recipe_show(&view, &fork.slug, Default::default()).unwrap();
    assert_eq!(page.apart.unwrap().gained(), 0, "the fork has every change");
}

/// A fork has one suggestion open at a time: a second taken while the
/// first was open (suggested before the first was taken) is refused when
/// planned, not halfway through the writing.
#[test]
fn a_seed_fork_suggests_one_change_at_a_time() {
    let fork = |later: &str| {
        format!(
            "{{:slug \"buttered\" :forks {{:slug \"toast\" :version 1}}\n \
             :versions [{{:at #inst \"2024-02-01T00:00:00Z\" :author \"ann\" :note \"butter\" :title \"Buttered toast\"\n \
             :ingredients [\"1 slice bread\" \"butter\"]}}{later}]}}"
        )
    };
    let toast = |second: &str| {
        format!(
            "{{:slug \"toast\"\n :versions [{{:at #inst \"2024-01-01T08:00:00Z\" :author \"ben\" :note \"first\"\n \
             :title \"Toast\" :ingredients [\"1 slice bread\"] :steps [\"Toast it.\"]}}\n \
             {{:at #inst \"2024-02-05T00:00:00Z\" :author \"ben\" :note \"took it\"\n \
             :takes {{:fork \"buttered\" :version 1 :at #inst \"2024-02-02T00:00:00Z\" :message \"Butter\"}}}}\n \
             {{:at #inst \"2024-02-06T00:00:00Z\" :author \"ben\" :note \"a note\" :notes \"Hot.\"}}\n \
             {{:at #inst \"2024-02-09T00:00:00Z\" :author \"ben\" :note \"took it again\"\n \
             :takes {{:fork \"buttered\" {second} :message \"Butter, again\"}}}}]}}"
        )
    };
    let files = |second: &str, later: &str| {
        vec![
            ("toast.edn".to_owned(), toast(second)),
            ("buttered.edn".to_owned(), fork(later)),
        ]
    };
    mistake(
        &files(":version 1 :at #inst \"2024-02-03T00:00:00Z\"", ""),
        "toast.edn",
        8,
        "already has a suggestion open then",
    );
    // The first was taken whole: the fork is in step, and its version 1
    // has nothing left to suggest.
    mistake(
        &files(":version 1 :at #inst \"2024-02-07T00:00:00Z\"", ""),
        "toast.edn",
        8,
        "has no change to suggest",
    );
    // A newer version's change, suggested after the first was taken:
    // planned and written.
    let jam = "\n {:at #inst \"2024-02-07T00:00:00Z\" :author \"ann\" :note \"jam\" \
               :ingredients [\"1 slice bread\" \"butter\" \"jam\"]}";
    let plan = seed::plan(&files(":version 2 :at #inst \"2024-02-08T00:00:00Z\"", jam)).unwrap();
    let store = Store::temporary().unwrap();
    let report = seed::apply(&store, &plan).unwrap();
    assert_eq!(report.suggestions, 2);
    assert_eq!(report.versions + report.suggestions, plan.len());
}
