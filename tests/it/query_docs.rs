//! The examples in docs/QUERY.md, run against the fixture it describes.
//!
//! Each ```query block (and its ```inputs, one EDN input per line, a
//! multi-line vector counting as one) is run, and its table must equal the
//! ```answers block after it; a ```history-query block is run on the
//! database's history; a ```query-error block must fail with the message
//! shown. Run with FORKFUL_BLESS_DOCS=1 to write the current answers
//! into the doc instead (then read the diff before committing it).

use std::path::Path;

use forkful::store::{render_table, Input, Query, DEFAULT_WORK_LIMIT};
use forkful::store::{EntityMap, EntityRef, Store, Transaction, Value};

use crate::helpers::store;

/// Slug, title, serves, tags, and the slug it forks.
type FixtureRecipe = (
    &'static str,
    &'static str,
    i64,
    &'static [&'static str],
    Option<&'static str>,
);

/// The fixture docs/QUERY.md describes.
fn fixture() -> Store {
    let store = store();
    let recipes: [FixtureRecipe; 6] = [
        ("shakshuka", "Shakshuka", 4, &["eggs", "vegetarian"], None),
        (
            "green-shakshuka",
            "Green shakshuka",
            4,
            &["eggs", "greens", "vegetarian"],
            Some("shakshuka"),
        ),
        (
            "green-shakshuka-feta",
            "Green shakshuka with feta",
            2,
            &["eggs", "greens"],
            Some("green-shakshuka"),
        ),
        (
            "spicy-shakshuka",
            "Spicy shakshuka",
            6,
            &["eggs", "spicy"],
            Some("shakshuka"),
        ),
        ("dal", "Dal", 6, &["lentils", "vegan"], None),
        (
            "dal-tadka",
            "Dal tadka",
            4,
            &["lentils", "vegan"],
            Some("dal"),
        ),
    ];
    for (slug, title, serves, tags, parent) in recipes {
        let mut map = EntityMap::new(EntityRef::temp("r"))
            .with(":recipe/slug", slug)
            .with(":recipe/title", title)
            .with(":recipe/serves", serves)
            .with_many(":recipe/tags", tags.iter().copied());
        if let Some(parent) = parent {
            map = map.with(
                ":recipe/forked-from",
                EntityRef::Lookup(forkful::store::kw(":recipe/slug"), Value::from(parent)),
            );
        }
        let mut tx = Transaction::new();
        tx.map(map);
        store.transact(&tx).unwrap();
    }
    merges(&store);
    store
}

/// The fixture's merges and suggestions, as the site records them: each
/// version asserts `:recipe/version-count`, a fork's version that brings
/// in its parent's names the parent's version (`:recipe/merged-at`, its
/// transaction), and a version that takes a fork's suggestion names the
/// fork's (`:recipe/took`).
fn merges(store: &Store) {
    use forkful::store::{attribute_map, Cardinality, ValueType};
    let mut schema = Transaction::new();
    for (ident, value_type) in [
        (":recipe/version-count", ValueType::Long),
        (":recipe/merged-at", ValueType::Ref),
        (":recipe/took", ValueType::Ref),
    ] {
        schema.map(attribute_map(ident, value_type, Cardinality::One, None));
    }
    store.transact(&schema).unwrap();
    let slug = |s: &str| EntityRef::Lookup(forkful::store::kw(":recipe/slug"), Value::from(s));
    // A new version of `recipe`, its `version`th, naming `other`'s
    // transaction under `attr`; returns its own transaction.
    let version = |recipe: &str, version: i64, named: Option<(&str, u64)>| -> u64 {
        let mut map = EntityMap::new(slug(recipe)).with(":recipe/version-count", version);
        if let Some((attr, tx)) = named {
            map = map.with(attr, EntityRef::Id(tx));
        }
        let mut tx = Transaction::new();
        tx.map(map);
        store.transact(&tx).unwrap().basis_after
    };
    let shakshuka_2 = version("shakshuka", 2, None);
    let green_2 = version(
        "green-shakshuka",
        2,
        Some((":recipe/merged-at", shakshuka_2)),
    );
    version(
        "green-shakshuka-feta",
        2,
        Some((":recipe/merged-at", green_2)),
    );
    let spicy_2 = version("spicy-shakshuka", 2, None);
    version("shakshuka", 3, Some((":recipe/took", spicy_2)));
    let shakshuka_4 = version("shakshuka", 4, None);
    version(
        "spicy-shakshuka",
        3,
        Some((":recipe/merged-at", shakshuka_4)),
    );
}

/// Splits the inputs block into one EDN text per input.
fn inputs(block: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut depth = 0i32;
    for line in block.lines() {
        if depth > 0 {
            out.last_mut()
                .expect("open input")
                .push_str(&format!("\n{line}"));
        } else if !line.trim().is_empty() {
            out.push(line.to_owned());
        }
        depth += line.matches(['[', '(', '{']).count() as i32
            - line.matches([']', ')', '}']).count() as i32;
    }
    out
}

#[test]
fn every_example_in_the_query_guide_gives_the_answers_shown() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/QUERY.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let store = fixture();
    let bless = std::env::var_os("FORKFUL_BLESS_DOCS").is_some();
    let mut blessed = String::new();
    let mut examples = 0;
    let mut query: Option<(String, &str)> = None;
    let mut given: Vec<String> = Vec::new();
    let mut lines = doc.split_inclusive('\n');
    while let Some(line) = lines.next() {
        blessed.push_str(line);
        let kind = line.trim_end().strip_prefix("```").unwrap_or("");
        if !["query", "history-query", "query-error", "inputs", "answers"].contains(&kind) {
            continue;
        }
        let mut body = String::new();
        let mut closing = String::new();
        for inner in lines.by_ref() {
            if inner.trim_end() == "```" {
                closing = inner.to_owned();
                break;
            }
            body.push_str(inner);
        }
        match kind {
            "query" | "history-query" | "query-error" => {
                query = Some((body.clone(), kind));
                given.clear();
            }
            "inputs" => given = inputs(&body),
            _ => {
                let (text, kind) = query.take().expect("an answers block follows a query");
                let expect_error = kind == "query-error";
                // A history query sees every assertion and retraction, as
                // `forkful query --history` does.
                let db = match kind {
                    "history-query" => store.db().history(),
                    _ => store.db(),
                };
                let mut args = vec![Input::Db(db)];
                args.extend(given.iter().map(|i| Input::from_edn(i).unwrap()));
                let outcome = Query::parse(&text).and_then(|q| q.run(&args, DEFAULT_WORK_LIMIT));
                let actual = match (outcome, expect_error) {
                    (Ok(result), false) => render_table(&result),
                    (Err(e), true) => format!("error: {e}\n"),
                    (Ok(_), true) => panic!("{text}: expected an error"),
                    (Err(e), false) => panic!("{text}: {e}"),
                };
                if bless {
                    body = actual;
                } else {
                    assert_eq!(actual, body, "docs/QUERY.md example:\n{text}");
                }
                examples += 1;
            }
        }
        blessed.push_str(&body);
        blessed.push_str(&closing);
    }
    if bless {
        std::fs::write(&path, blessed).unwrap();
    }
    assert!(examples >= 12, "only {examples} examples found");
}

/// The guide's rule for every version that reached a recipe through
/// merges, as written in its last example that uses it.
fn reached_rule(doc: &str) -> String {
    let start = doc
        .rfind("[[(reached ?r ?from ?v ?at)")
        .expect("the guide has the rule");
    let end = doc[start..]
        .find("\n\"")
        .expect("the rule is followed by a slug");
    doc[start..start + end].to_owned()
}

/// The rule on a store the site wrote: a fork suggests its change, the
/// parent takes it, moves on, and the fork brings that in, so its own
/// version comes back to it. Asked of the fork, the rule as the guide
/// writes it names only the parent; without its last clause, the fork
/// would reach itself.
#[test]
fn the_guides_rule_names_no_recipe_as_reaching_itself_after_a_round_trip() {
    use forkful::domain::{Change, ContentDraft, Recipes, Review, Slug, Step};
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/QUERY.md"))
        .unwrap();
    let recipes = Recipes::temporary().unwrap();
    let slug = |s: &str| Slug::parse(s).unwrap();
    let soup = |lines: &[&str]| ContentDraft {
        title: "Soup".into(),
        ingredients: lines.iter().map(|l| l.to_string()).collect(),
        steps: vec![Step {
            section: None,
            text: "Simmer.".into(),
        }],
        ..ContentDraft::default()
    };
    let v = |n| forkful::domain::VersionNumber::new(n).unwrap();
    let (ann, ben) = (|n| Change::by("ann", n), |n| Change::by("ben", n));
    recipes
        .create(&slug("soup"), soup(&["carrots", "stock"]), &ann("soup"))
        .unwrap();
    let (fork, _) = recipes
        .fork(
            &slug("soup"),
            None,
            Some(&slug("bens-soup")),
            |c| c,
            &ben("fork"),
        )
        .unwrap();
    recipes
        .edit(
            &fork,
            v(1),
            soup(&["carrots", "stock", "salt"]),
            &ben("salt"),
        )
        .unwrap();
    recipes
        .suggest(&fork, v(2), "Salt", &ben("suggest"))
        .unwrap();
    recipes
        .accept_suggestion(
            &slug("soup"),
            1,
            Review::of(v(1), v(2)),
            &[],
            "",
            &ann("take"),
        )
        .unwrap();
    recipes
        .edit(
            &slug("soup"),
            v(2),
            soup(&["2 carrots", "stock", "salt"]),
            &ann("more carrots"),
        )
        .unwrap();
    recipes
        .bring_in(&fork, v(2), v(3), &[], &ben("carrots"))
        .unwrap();
    let history = recipes.store().db().history();
    let ask = |rule: &str| {
        let query = Query::parse(
            "[:find ?from ?v :in $ % ?slug :where [?r :recipe/slug ?slug] \
             (reached ?r ?f ?v ?at) [?f :recipe/slug ?from]]",
        )
        .unwrap();
        let args = vec![
            Input::Db(history.clone()),
            Input::from_edn(rule).unwrap(),
            Input::from_edn("\"bens-soup\"").unwrap(),
        ];
        render_table(&query.run(&args, DEFAULT_WORK_LIMIT).unwrap())
    };
    let rule = reached_rule(&doc);
    let answers = ask(&rule);
    assert!(answers.contains("\"soup\""), "{answers}");
    assert!(!answers.contains("\"bens-soup\""), "{answers}");
    let without = rule.replace("\n  [(!= ?from ?r)]", "");
    assert_ne!(without, rule, "the rule has the clause");
    assert!(
        ask(&without).contains("\"bens-soup\""),
        "the round trip brings the fork's own version back to it"
    );
}
