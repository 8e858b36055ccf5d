//! Stores with a small, recipe-shaped schema for the tests, and comparisons.

use std::sync::OnceLock;

use forkful::domain::{CatalogQuery, Recipes, Snapshot, VersionNumber};
use forkful::store::attribute_map;
use forkful::store::{
    Cardinality, Components, Datom, EntityMap, Index, Store, Transaction, Unique, ValueType,
};

/// `(ident, type, cardinality, extra)` where extra is `unique-identity`,
/// `unique-value`, `component`, `index` or empty.
const TEST_SCHEMA: &[(&str, ValueType, Cardinality, &str)] = &[
    (
        ":recipe/slug",
        ValueType::String,
        Cardinality::One,
        "unique-identity",
    ),
    (":recipe/title", ValueType::String, Cardinality::One, ""),
    (":recipe/serves", ValueType::Long, Cardinality::One, ""),
    (":recipe/rating", ValueType::Double, Cardinality::One, ""),
    (
        ":recipe/vegetarian",
        ValueType::Boolean,
        Cardinality::One,
        "",
    ),
    (
        ":recipe/created",
        ValueType::Instant,
        Cardinality::One,
        "index",
    ),
    (":recipe/kind", ValueType::Keyword, Cardinality::One, ""),
    (
        ":recipe/uuid",
        ValueType::Uuid,
        Cardinality::One,
        "unique-value",
    ),
    (":recipe/tags", ValueType::String, Cardinality::Many, ""),
    (
        ":recipe/ingredients",
        ValueType::Ref,
        Cardinality::Many,
        "component",
    ),
    (":recipe/forked-from", ValueType::Ref, Cardinality::One, ""),
    (":recipe/related", ValueType::Ref, Cardinality::Many, ""),
    (":ingredient/item", ValueType::String, Cardinality::One, ""),
    (
        ":ingredient/position",
        ValueType::Long,
        Cardinality::One,
        "",
    ),
    (":tx/note", ValueType::String, Cardinality::One, ""),
];

/// The schema as one transaction.
pub(crate) fn schema_tx() -> Transaction {
    let mut tx = Transaction::new();
    for (ident, value_type, cardinality, extra) in TEST_SCHEMA {
        let unique = match *extra {
            "unique-identity" => Some(Unique::Identity),
            "unique-value" => Some(Unique::Value),
            _ => None,
        };
        let mut map = attribute_map(ident, *value_type, *cardinality, unique);
        map = match *extra {
            "component" => map.with(":db/isComponent", true),
            "index" => map.with(":db/index", true),
            _ => map,
        };
        tx.map(map);
    }
    tx
}

/// A temporary store with the test schema installed.
pub(crate) fn store() -> Store {
    let store = Store::temporary().expect("temporary store");
    store.transact(&schema_tx()).expect("schema installs");
    store
}

/// A recipe map with a slug, a title and two ingredients.
pub(crate) fn recipe(tempid: &str, slug: &str, title: &str) -> EntityMap {
    EntityMap::new(forkful::store::EntityRef::temp(tempid))
        .with(":recipe/slug", slug)
        .with(":recipe/title", title)
        .with_many(
            ":recipe/ingredients",
            [
                EntityMap::anonymous()
                    .with(":ingredient/item", "eggs")
                    .with(":ingredient/position", 1i64),
                EntityMap::anonymous()
                    .with(":ingredient/item", "tomatoes")
                    .with(":ingredient/position", 2i64),
            ],
        )
}

/// Transacts one recipe and returns its entity id.
pub(crate) fn add_recipe(store: &Store, slug: &str, title: &str) -> u64 {
    let mut tx = Transaction::new();
    tx.map(recipe("r", slug, title));
    store
        .transact(&tx)
        .expect("recipe transacts")
        .tempid("r")
        .expect("tempid resolves")
}

/// Transacts a recipe that forks `parent`, and returns its entity id.
pub(crate) fn add_fork(store: &Store, slug: &str, title: &str, parent: u64) -> u64 {
    let id = add_recipe(store, slug, title);
    let mut tx = Transaction::new();
    tx.add(
        id,
        ":recipe/forked-from",
        forkful::store::TxValue::Entity(forkful::store::EntityRef::Id(parent)),
    );
    store.transact(&tx).unwrap();
    id
}

/// Every key and value of every sled tree, raw: meta keys, current-entity
/// entries and any tree beside the datoms included. Equal before and after
/// is what "wrote nothing" means.
pub(crate) fn stored(store: &Store) -> Vec<forkful::store::testing::RawEntry> {
    store.raw_contents().expect("every tree reads")
}

/// Every key of every index, as datoms, with the basis: two stores with the
/// same `everything` hold the same facts at the same times.
pub(crate) fn everything(store: &Store) -> (u64, Vec<(Index, Datom)>) {
    let db = store.db().history();
    let mut all = Vec::new();
    for index in Index::ALL {
        if index == Index::Log {
            for d in db.log(0, db.basis()) {
                all.push((index, d.expect("log reads")));
            }
        } else {
            for d in db.datoms(index, &Components::any()) {
                all.push((index, d.expect("index reads")));
            }
        }
    }
    (db.basis(), all)
}

/// The demo seed, loaded once for every test that only reads it. A static
/// is never dropped, so a temporary store here would be left behind in
/// /dev/shm by every run: it lives in cargo's scratch dir for tests instead,
/// replaced by each run.
/// Version `n` of a recipe.
pub(crate) fn v(n: u64) -> VersionNumber {
    VersionNumber::new(n).expect("a version number")
}

pub(crate) fn demo() -> &'static Recipes {
    static DEMO: OnceLock<Recipes> = OnceLock::new();
    DEMO.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("demo-store");
        let _ = std::fs::remove_dir_all(&dir);
        let store = Store::open(&dir).unwrap();
        forkful::seed::demo(&store).unwrap();
        Recipes::open(store).unwrap()
    })
}

/// A response, read whole.
pub(crate) struct Page {
    pub status: u16,
    pub headers: actix_web::http::header::HeaderMap,
    pub body: String,
    /// The body as sent, for what is not text (pictures).
    pub raw: Vec<u8>,
}

impl Page {
    pub(crate) fn bytes(&self) -> Vec<u8> {
        self.raw.clone()
    }

    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// What the page's `Set-Cookie` headers do to a browser's cookies:
    /// each cookie's name, and its new value, or `None` where it removes it
    /// (an empty value or a max-age of zero).
    pub(crate) fn cookies_set(&self) -> Vec<(String, Option<String>)> {
        self.headers
            .get_all("set-cookie")
            .map(|value| {
                let text = value.to_str().expect("a Set-Cookie header in ASCII");
                let cookie = actix_web::cookie::Cookie::parse(text.to_owned())
                    .unwrap_or_else(|e| panic!("a Set-Cookie header that does not parse: {e}"));
                let removed =
                    cookie.max_age().is_some_and(|age| age.is_zero()) || cookie.value().is_empty();
                let value = (!removed).then(|| cookie.value().to_owned());
                (cookie.name().to_owned(), value)
            })
            .collect()
    }

    pub(crate) fn html(&self) -> scraper::Html {
        scraper::Html::parse_document(&self.body)
    }

    /// The text of every element matching `css`, whitespace collapsed.
    pub(crate) fn texts(&self, css: &str) -> Vec<String> {
        let selector = scraper::Selector::parse(css).unwrap();
        self.html()
            .select(&selector)
            .map(|e| {
                e.text()
                    .collect::<String>()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    /// Attribute `attr` of every element matching `css`.
    pub(crate) fn attrs(&self, css: &str, attr: &str) -> Vec<String> {
        let selector = scraper::Selector::parse(css).unwrap();
        self.html()
            .select(&selector)
            .filter_map(|e| e.value().attr(attr).map(str::to_owned))
            .collect()
    }

    /// The page's schema.org JSON-LD, parsed.
    pub(crate) fn json_ld(&self) -> serde_json::Value {
        let scripts = self.texts_raw("script[type=\"application/ld+json\"]");
        assert_eq!(scripts.len(), 1, "one JSON-LD block");
        serde_json::from_str(&scripts[0]).unwrap()
    }

    /// The raw text of every element matching `css`.
    pub(crate) fn texts_raw(&self, css: &str) -> Vec<String> {
        let selector = scraper::Selector::parse(css).unwrap();
        self.html()
            .select(&selector)
            .map(|e| e.text().collect::<String>())
            .collect()
    }
}

/// A site over `recipes`, at `http://forkful.test`.
pub(crate) fn site(recipes: &Recipes) -> actix_web::web::Data<forkful::web::Site> {
    actix_web::web::Data::new(forkful::web::Site::new(
        recipes.clone(),
        "http://forkful.test",
    ))
}

/// Sends `request` through the whole app (routes and middleware).
pub(crate) async fn send(
    site: &actix_web::web::Data<forkful::web::Site>,
    request: actix_web::test::TestRequest,
) -> Page {
    let app = actix_web::test::init_service(forkful::app::app(site.clone())).await;
    let response = actix_web::test::call_service(&app, request.to_request()).await;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = actix_web::body::to_bytes(response.into_body())
        .await
        .unwrap_or_default();
    Page {
        status,
        headers,
        body: String::from_utf8_lossy(&bytes).into_owned(),
        raw: bytes.to_vec(),
    }
}

/// GETs `uri` from `site`.
pub(crate) async fn get(site: &actix_web::web::Data<forkful::web::Site>, uri: &str) -> Page {
    send(site, actix_web::test::TestRequest::get().uri(uri)).await
}

/// Every recipe in the catalog, in one page (the demo fits in one).
pub(crate) fn whole_catalog(view: &Snapshot) -> forkful::domain::CatalogPage {
    view.catalog(&CatalogQuery {
        limit: 500,
        ..CatalogQuery::default()
    })
    .unwrap()
}

/// A family of `n` recipes: `r0`, then `r{i}` forked from `r{parent(i)}`
/// (which must come before it), each titled `Recipe {i}`.
pub(crate) fn family_of(n: usize, parent: impl Fn(usize) -> usize) -> Recipes {
    let slug = |s: &str| forkful::domain::Slug::parse(s).unwrap();
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    let content = forkful::domain::ContentDraft {
        title: "Recipe 0".into(),
        ingredients: vec!["1 egg".into()],
        ..Default::default()
    };
    let by = forkful::domain::Change::by;
    recipes
        .create(&slug("r0"), content, &by("ann", "new"))
        .unwrap();
    for i in 1..n {
        recipes
            .fork(
                &slug(&format!("r{}", parent(i))),
                None,
                Some(&slug(&format!("r{i}"))),
                |c| forkful::domain::ContentDraft {
                    title: format!("Recipe {i}"),
                    ..c
                },
                &by("bo", "fork"),
            )
            .unwrap();
    }
    recipes
}

/// Recipe `r0`, and `r1` forked from it, `r2` from `r1`, ... to `r{depth}`.
pub(crate) fn chain(depth: usize) -> Recipes {
    family_of(depth + 1, |i| i - 1)
}

/// A count a long run takes from the environment (`FORKFUL_*_ROUNDS`,
/// `FORKFUL_SOAK_SECONDS`), or `default`; anything else there is a
/// mistake the run names.
pub(crate) fn count_from_env(var: &str, default: u64, what: &str) -> u64 {
    match std::env::var(var) {
        Err(_) => default,
        Ok(n) => n
            .parse()
            .unwrap_or_else(|_| panic!("{var} must be a number of {what}, not {n:?}")),
    }
}

/// A seed for a randomised run, new each run and printed with its result,
/// so that a failure can be replayed.
pub(crate) fn seed_from_clock() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("the clock is after 1970")
        .as_nanos() as u64
}

/// One edit of a recipe, by its index among a test's recipes: what the
/// proptests that compare reads across the bases of a run of edits apply.
#[derive(Debug, Clone)]
pub(crate) enum RecipeEdit {
    Title(usize, u8),
    Tag(usize, u8),
    Untag(usize, u8),
    Serves(usize, i64),
    RetractEntity(usize),
}

impl RecipeEdit {
    /// Any edit of one of `recipes` recipes: few titles and tags, so that
    /// edits meet the same facts again.
    pub(crate) fn any(recipes: usize) -> impl proptest::strategy::Strategy<Value = RecipeEdit> {
        use proptest::prelude::*;
        prop_oneof![
            (0..recipes, any::<u8>()).prop_map(|(e, n)| RecipeEdit::Title(e, n % 4)),
            (0..recipes, any::<u8>()).prop_map(|(e, n)| RecipeEdit::Tag(e, n % 3)),
            (0..recipes, any::<u8>()).prop_map(|(e, n)| RecipeEdit::Untag(e, n % 3)),
            (0..recipes, -2..3i64).prop_map(|(e, n)| RecipeEdit::Serves(e, n)),
            (0..recipes).prop_map(RecipeEdit::RetractEntity),
        ]
    }

    /// Adds the edit to `tx`, the recipes being `ids`.
    pub(crate) fn add_to(&self, tx: &mut Transaction, ids: &[u64]) {
        match *self {
            RecipeEdit::Title(e, n) => tx.add(ids[e], ":recipe/title", format!("Title {n}")),
            RecipeEdit::Tag(e, n) => tx.add(ids[e], ":recipe/tags", format!("t{n}")),
            RecipeEdit::Untag(e, n) => tx.retract(ids[e], ":recipe/tags", format!("t{n}")),
            RecipeEdit::Serves(e, n) => tx.add(ids[e], ":recipe/serves", n),
            RecipeEdit::RetractEntity(e) => tx.retract_entity(ids[e]),
        };
    }
}

/// The `n`th of a supply of different words, each two CJK letters: as
/// short as a search term may be, so a field's limit in characters holds
/// the most terms it can.
pub(crate) fn word(n: usize) -> String {
    let letter = |i: usize| char::from_u32(0x4E00 + (i % 2048) as u32).expect("a CJK letter");
    [letter(n / 2048), letter(n)].into_iter().collect()
}

/// Words `from .. from + n`, apart by `separator`.
pub(crate) fn words(from: usize, n: usize, separator: &str) -> String {
    (from..from + n)
        .map(word)
        .collect::<Vec<_>>()
        .join(separator)
}

/// A recipe at every limit that bounds its transactions
/// (`content`'s arithmetic): the most terms in its title, tags, summary
/// and ingredient items, the most lines and steps with every part, every
/// field set. Each `version` has words no other version has, so an edit
/// from one to another replaces everything.
pub(crate) fn largest_content(version: usize) -> forkful::domain::ContentDraft {
    use forkful::domain::content::*;
    use forkful::domain::{Minutes, Step, Yield};
    let base = version * 100_000;
    // 67 words of two letters and a space: 200 characters.
    let title = words(base, 67, " ");
    assert_eq!(title.chars().count(), MAX_TITLE);
    let per_line = MAX_INGREDIENT_TERMS / MAX_INGREDIENTS;
    let ingredients = (0..MAX_INGREDIENTS)
        .map(|i| {
            let item = words(base + 10_000 + i * per_line, per_line, " ");
            format!("1-2 cups {item}, chopped {i}")
        })
        .collect();
    let section = "s".repeat(MAX_LINE);
    let steps = (0..MAX_STEPS)
        .map(|i| Step {
            section: Some(section.clone()),
            text: format!("Stir pot {i} of version {version}."),
        })
        .collect();
    // 13 words of two letters apart by `-`: 38 characters, the most words
    // a tag of 40 holds.
    let tags = (0..MAX_TAGS)
        .map(|t| words(base + 20_000 + t * 13, 13, "-"))
        .collect();
    let minutes = |n| Some(Minutes::new(n).unwrap());
    ContentDraft {
        title,
        summary: Some(words(base + 30_000, MAX_SUMMARY_TERMS, " ")),
        recipe_yield: Yield {
            servings: Some(4 + version as i64),
            text: Some(format!("{} bowls", 4 + version)),
        },
        prep: minutes(10 + version as i64),
        cook: minutes(20 + version as i64),
        total: minutes(30 + version as i64),
        ingredients,
        steps,
        notes: Some(format!("Keeps a day, version {version}.")),
        tags,
        cuisine: Some(format!("cuisine {version}")),
        category: Some(format!("category {version}")),
        image: Some(format!("https://pictures.example/{version}.jpg")),
        ..ContentDraft::default()
    }
}

/// Runs `apt-get` with `args`, non-interactively: how a test installs a
/// Debian package it needs (Chromium, PostgreSQL) rather than skip.
pub(crate) fn apt_get(args: &[&str]) -> std::result::Result<(), String> {
    let out = std::process::Command::new("apt-get")
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("apt-get did not start: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let last: Vec<&str> = said.lines().rev().take(10).collect();
    Err(format!(
        "`apt-get {}` failed ({}):\n{}",
        args.join(" "),
        out.status,
        last.into_iter().rev().collect::<Vec<_>>().join("\n")
    ))
}

/// Installs Debian's `packages` with apt-get, running `apt-get update`
/// and trying again when the first try fails (a machine whose package
/// lists are stale). `Err` says why neither try worked.
pub(crate) fn apt_install(packages: &[&str]) -> std::result::Result<(), String> {
    let install: Vec<&str> = ["install", "-y"].iter().chain(packages).copied().collect();
    apt_get(&install).or_else(|first| {
        eprintln!("apt-get: {first}\napt-get: running apt-get update and trying again");
        apt_get(&["update"]).and_then(|()| apt_get(&install))
    })
}

/// The sled database under a store, for tampering with it. A store dropped
/// a moment ago may hold the file lock while sled's threads wind down.
pub(crate) fn raw_sled(dir: &std::path::Path) -> sled::Db {
    for _ in 0..100 {
        match sled::Config::new()
            .path(dir)
            .segment_size(forkful::store::testing::SEGMENT_BYTES)
            .open()
        {
            Ok(db) => return db,
            Err(e) if e.to_string().contains("could not acquire lock") => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            Err(e) => panic!("opening {}: {e}", dir.display()),
        }
    }
    panic!("the store's lock was never released");
}
