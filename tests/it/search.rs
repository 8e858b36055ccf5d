//! Search (issue 31): the tantivy index beside the store, its ranking over
//! the demo, typos, accents, stems and prefixes, snippets, tags as facets,
//! pages, and an index that follows every write and is built again when
//! it is missing or of another format.

use std::time::Duration;

use forkful::domain::search::{SearchIndex, SearchPage, SearchQuery, MAX_PAGE, PER_PAGE};
use forkful::domain::{Change, ContentDraft, Recipes, Slug, Step};

use crate::helpers::{demo, get, site};

/// The demo's index, built.
fn demo_index() -> SearchIndex {
    let index = SearchIndex::open(demo()).unwrap();
    assert!(
        index.wait_for(demo().snapshot().basis(), Duration::from_secs(60)),
        "the demo's index was not built in a minute"
    );
    index
}

fn search(recipes: &Recipes, index: &SearchIndex, query: SearchQuery) -> SearchPage {
    let view = index.view(&recipes.snapshot()).unwrap();
    let snapshot = view.snapshot().clone();
    view.search(&snapshot, &query).unwrap()
}

/// The slugs `text` finds, best first, on its first page.
fn found(recipes: &Recipes, index: &SearchIndex, text: &str) -> Vec<String> {
    let query = SearchQuery {
        text: text.into(),
        ..SearchQuery::default()
    };
    search(recipes, index, query)
        .hits
        .into_iter()
        .map(|hit| hit.entry.slug.to_string())
        .collect()
}

#[test]
fn a_recipes_name_finds_that_recipe_first() {
    let index = demo_index();
    // A query, and the recipe a person typing it is looking for.
    let named = [
        ("shakshuka", "shakshuka"),
        ("Shakshuka with feta", "shakshuka-with-feta"),
        ("country sourdough", "country-sourdough"),
        ("dal makhani", "dal-makhani"),
        ("banana bread", "banana-bread"),
        ("vegan banana bread", "vegan-banana-bread"),
        ("ragu bolognese", "ragu-bolognese"),
        ("buttermilk pancakes", "buttermilk-pancakes"),
        ("dutch baby", "dutch-baby"),
        ("texas chili", "texas-chili"),
        ("pho", "pho-ga"),
        ("tom kha gai", "tom-kha-gai"),
        ("pasta e ceci", "pasta-e-ceci"),
        ("greek salad", "greek-salad"),
        ("sourdough focaccia", "sourdough-focaccia"),
        ("souffle pancakes", "japanese-souffle-pancakes"),
        ("chocolate chip", "chocolate-chip-pancakes"),
        ("bibimbap", "bibimbap"),
    ];
    for (query, first) in named {
        let slugs = found(demo(), &index, query);
        assert_eq!(
            slugs.first().map(String::as_str),
            Some(first),
            "{query:?} finds {slugs:?}"
        );
    }
}

#[test]
fn typos_accents_stems_and_prefixes_find_what_was_meant() {
    let index = demo_index();
    let find = |q: &str| found(demo(), &index, q);
    // One letter off, in words of five letters or more.
    for (typo, meant) in [
        ("sourdogh", "country-sourdough"),
        ("focacia", "sourdough-focaccia"),
        ("shakshuk bolognese", ""),
        ("panckes", "buttermilk-pancakes"),
        ("bolognaise", "ragu-bolognese"),
    ] {
        let slugs = find(typo);
        match meant {
            "" => assert!(slugs.is_empty(), "{typo:?} finds {slugs:?}"),
            meant => assert!(
                slugs.contains(&meant.to_owned()),
                "{typo:?} finds {slugs:?}"
            ),
        }
    }
    // A short word has no typo: "dak" is not "dal".
    assert!(find("dak ").is_empty());
    assert!(!find("dal ").is_empty());
    // Accents folded, both ways.
    assert_eq!(find("creme"), find("crème"));
    assert!(!find("creme").is_empty());
    assert_eq!(find("ragu "), find("ragù "));
    assert!(find("ragu ").contains(&"mushroom-ragu".to_owned()));
    // Stems: a plural and its singular are one word.
    assert_eq!(find("eggs "), find("egg "));
    assert_eq!(find("pancakes "), find("pancake "));
    // The last word, while typed, is the start of a word.
    assert!(find("sourd").contains(&"country-sourdough".to_owned()));
    assert!(find("shaksh").contains(&"green-shakshuka".to_owned()));
    assert!(find("shaksh ").is_empty(), "a finished word is whole");
    // Every word must match.
    let both = find("lentil vegan");
    let lentil = find("lentil");
    assert!(!both.is_empty() && both.iter().all(|s| lentil.contains(s)));
    assert!(find("zzzzqqq").is_empty());
    assert!(find("").is_empty());
}

#[test]
fn a_page_counts_every_match_and_offers_their_tags() {
    let index = demo_index();
    let all = |text: &str, tag: Option<&str>, page: usize| {
        search(
            demo(),
            &index,
            SearchQuery {
                text: text.into(),
                tag: tag.map(str::to_owned),
                page,
            },
        )
    };
    let pancakes = all("pancakes", None, 0);
    assert!(pancakes.total > PER_PAGE, "{}", pancakes.total);
    assert_eq!(pancakes.hits.len(), PER_PAGE);
    assert!(pancakes.has_next);
    let second = all("pancakes", None, 1);
    assert_eq!(second.hits.len(), pancakes.total - PER_PAGE);
    assert!(!second.has_next);
    let first: Vec<_> = pancakes.hits.iter().map(|h| h.entry.id).collect();
    assert!(second.hits.iter().all(|h| !first.contains(&h.entry.id)));
    assert!(all("pancakes", None, MAX_PAGE).hits.is_empty());
    // Each tag offered is counted as narrowing to it finds.
    let sourdough = all("sourdough", None, 0);
    assert!(!sourdough.tags.is_empty());
    for (tag, count) in &sourdough.tags {
        let narrowed = all("sourdough", Some(tag), 0);
        assert_eq!(narrowed.total as u64, *count, "{tag}");
        assert!(narrowed
            .hits
            .iter()
            .all(|h| h.entry.tags.iter().any(|t| &**t == tag)));
    }
    let counts: Vec<u64> = sourdough.tags.iter().map(|(_, n)| *n).collect();
    assert!(counts.windows(2).all(|w| w[0] >= w[1]), "most common first");
}

fn content(title: &str, step: &str) -> ContentDraft {
    ContentDraft {
        title: title.into(),
        ingredients: vec!["1 cup flour".into()],
        steps: vec![Step {
            section: None,
            text: step.into(),
        }],
        ..ContentDraft::default()
    }
}

/// Ann's new recipe at `slug`, titled `title`, of one step.
fn create(recipes: &Recipes, slug: &str, title: &str, step: &str) {
    let slug = Slug::parse(slug).unwrap();
    recipes
        .create(&slug, content(title, step), &Change::by("ann", "new"))
        .unwrap();
}

/// A new store with one recipe, `first`, and its index caught up with it.
fn one_recipe_indexed() -> (Recipes, SearchIndex) {
    let recipes = Recipes::temporary().unwrap();
    let index = SearchIndex::open(&recipes).unwrap();
    create(&recipes, "first", "First", "Stir.");
    assert!(index.wait_for(recipes.snapshot().basis(), Duration::from_secs(10)));
    (recipes, index)
}

#[test]
fn writes_close_together_share_the_index_commits() {
    let (recipes, index) = one_recipe_indexed();
    let before = index.commits();
    // Ten writes over about 200 ms: a commit each would be ten.
    for i in 0..10 {
        create(
            &recipes,
            &format!("soup-{i}"),
            &format!("Soup {i}"),
            "Simmer.",
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(index.wait_for(recipes.snapshot().basis(), Duration::from_secs(10)));
    let commits = index.commits() - before;
    assert!(
        (1..=4).contains(&commits),
        "{commits} commits for ten writes"
    );
    assert_eq!(found(&recipes, &index, "soup").len(), 10);
}

#[test]
fn a_search_waiting_for_a_write_hurries_the_index_through_its_rest() {
    let (recipes, index) = one_recipe_indexed();
    // That round wrote, so the index rests three seconds before the next one
    // unless a search waits for a write it has not reached.
    create(&recipes, "quince", "Quince", "Simmer.");
    let started = std::time::Instant::now();
    assert!(index.wait_for(recipes.snapshot().basis(), Duration::from_secs(10)));
    let waited = started.elapsed();
    assert!(
        waited < Duration::from_millis(700),
        "waited {waited:?} for the index"
    );
    assert_eq!(found(&recipes, &index, "quince"), ["quince"]);
}

#[actix_web::test]
async fn a_cook_finds_what_they_just_wrote_at_once() {
    let recipes = Recipes::temporary().unwrap();
    let site = site(&recipes);
    create(&recipes, "first", "First", "Stir.");
    // The index's first build, then its round for that write.
    let mut indexed = false;
    for _ in 0..200 {
        if get(&site, "/search?q=first")
            .await
            .body
            .contains("/recipes/first")
        {
            indexed = true;
            break;
        }
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(indexed, "the first recipe was not found within 10 s");
    // Written while the index rests after the first: the search waits for
    // it (a little), and hurries the index, rather than answer without it.
    create(&recipes, "quince", "Quince", "Simmer.");
    let page = get(&site, "/search?q=quince").await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("/recipes/quince"), "{}", page.body);
}

#[test]
fn the_index_follows_every_write_and_forgets_a_retired_recipe() {
    let recipes = Recipes::temporary().unwrap();
    let index = SearchIndex::open(&recipes).unwrap();
    let caught_up = |index: &SearchIndex| {
        assert!(index.wait_for(recipes.snapshot().basis(), Duration::from_secs(10)));
    };
    let by = Change::by("ann", "first");
    let slug = Slug::parse("quince-paste").unwrap();
    recipes
        .create(&slug, content("Quince paste", "Simmer the quinces."), &by)
        .unwrap();
    caught_up(&index);
    assert_eq!(found(&recipes, &index, "quince"), ["quince-paste"]);
    // An edit: found by its new words, no longer by its old.
    let recipe = recipes.snapshot().recipe(&slug).unwrap();
    recipes
        .edit(
            &slug,
            recipe.newest(),
            content("Membrillo", "Simmer the fruit."),
            &Change::by("ann", "renamed"),
        )
        .unwrap();
    caught_up(&index);
    assert_eq!(found(&recipes, &index, "membrillo"), ["quince-paste"]);
    assert!(found(&recipes, &index, "quince").is_empty());
    // A fork is found too; a retired recipe is not.
    let (fork, _) = recipes
        .fork(&slug, None, None, |c| c, &Change::by("ben", "mine"))
        .unwrap();
    caught_up(&index);
    assert_eq!(found(&recipes, &index, "membrillo").len(), 2);
    let newest = recipes.snapshot().recipe(&slug).unwrap().newest();
    recipes
        .retire(&slug, newest, &Change::by("ann", "gone"))
        .unwrap();
    caught_up(&index);
    assert_eq!(
        found(&recipes, &index, "membrillo"),
        [fork.to_string()],
        "the retired original is gone"
    );
    // The page is made at the index's basis, from the store at that basis.
    let view = index.view(&recipes.snapshot()).unwrap();
    assert_eq!(Some(view.snapshot().basis()), index.basis());
}

/// A recipe is stemmed in its own language: a French recipe's "épicées"
/// is found by "épicé" and "epice", a German one's "Kräutern" by "Kraut",
/// and an English word is stemmed as English all the same.
#[test]
fn a_recipe_is_stemmed_in_its_own_language() {
    let recipes = Recipes::temporary().unwrap();
    let index = SearchIndex::open(&recipes).unwrap();
    let write = |slug: &str, title: &str, language: &str| {
        let content = ContentDraft {
            language: Some(language.into()),
            ..content(title, "Cuire.")
        };
        recipes
            .create(
                &Slug::parse(slug).unwrap(),
                content,
                &Change::by("ann", "new"),
            )
            .unwrap();
    };
    write("tarte-epicee", "Tarte aux pommes épicées", "French");
    write("kraeuterquark", "Quark mit Kräutern", "Deutsch");
    write("spiced-apples", "Spiced apples", "English");
    assert!(index.wait_for(recipes.snapshot().basis(), Duration::from_secs(10)));
    // ("épicé" is also a typo away from English "spice": found second.)
    let first = |text: &str| found(&recipes, &index, text).first().cloned();
    assert_eq!(first("épicé").as_deref(), Some("tarte-epicee"));
    assert_eq!(first("pomme epicee").as_deref(), Some("tarte-epicee"));
    assert_eq!(found(&recipes, &index, "Kraut"), ["kraeuterquark"]);
    assert_eq!(found(&recipes, &index, "spicing apple"), ["spiced-apples"]);
}

/// A write that lands between the request's value and its search: the
/// index is ahead of the value the request holds, and the page is made at
/// the index's basis all the same, so a hit never names a recipe the page's
/// value lacks.
#[test]
fn a_search_whose_index_is_ahead_of_the_requests_value_reads_the_index_basis() {
    let recipes = Recipes::temporary().unwrap();
    let index = SearchIndex::open(&recipes).unwrap();
    let first = Slug::parse("quince-paste").unwrap();
    recipes
        .create(
            &first,
            content("Quince paste", "Simmer."),
            &Change::by("ann", "a"),
        )
        .unwrap();
    let before = recipes.snapshot();
    let later = Slug::parse("quince-jelly").unwrap();
    recipes
        .create(
            &later,
            content("Quince jelly", "Strain."),
            &Change::by("ann", "b"),
        )
        .unwrap();
    assert!(index.wait_for(recipes.snapshot().basis(), Duration::from_secs(10)));
    let view = index.view(&before).unwrap();
    assert_eq!(Some(view.snapshot().basis()), index.basis());
    let query = SearchQuery {
        text: "quince".into(),
        ..SearchQuery::default()
    };
    let snapshot = view.snapshot().clone();
    let page = view.search(&snapshot, &query).unwrap();
    let mut slugs: Vec<String> = page.hits.iter().map(|h| h.entry.slug.to_string()).collect();
    slugs.sort();
    assert_eq!(slugs, ["quince-jelly", "quince-paste"]);
}

#[test]
fn the_index_is_built_again_when_missing_or_of_another_format() {
    let dir = tempfile_dir("search-rebuilt");
    let open = || {
        let store = forkful::store::Store::open(&dir).unwrap();
        Recipes::open(store).unwrap()
    };
    let index_dir = dir.join("derived").join("search");
    {
        let recipes = open();
        recipes
            .create(
                &Slug::parse("medlar-jelly").unwrap(),
                content("Medlar jelly", "Bletted medlars."),
                &Change::by("ann", "first"),
            )
            .unwrap();
        let index = SearchIndex::open(&recipes).unwrap();
        assert!(index.wait_for(recipes.snapshot().basis(), Duration::from_secs(10)));
        assert_eq!(found(&recipes, &index, "medlar"), ["medlar-jelly"]);
    }
    assert!(index_dir.join("meta.json").exists(), "the index is on disk");
    // The store's directory is still one a store's (seed --force checks).
    assert_eq!(forkful::store::Store::stranger_in(&dir).unwrap(), None);
    for spoil in [
        |dir: &std::path::Path| std::fs::remove_dir_all(dir).unwrap(),
        |dir: &std::path::Path| std::fs::write(dir.join("meta.json"), "{not tantivy's").unwrap(),
    ] {
        spoil(&index_dir);
        let recipes = open();
        let index = SearchIndex::open(&recipes).unwrap();
        assert!(index.wait_for(recipes.snapshot().basis(), Duration::from_secs(10)));
        assert_eq!(found(&recipes, &index, "medlar"), ["medlar-jelly"]);
    }
}

/// A fresh directory under cargo's scratch dir for tests.
fn tempfile_dir(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[actix_web::test]
async fn the_search_page_ranks_marks_narrows_and_refuses_bad_pages() {
    let site = site(demo());
    let page = get(&site, "/search?q=cr%C3%A8me").await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("<mark>crème</mark>"), "{}", page.body);
    let folded = get(&site, "/search?q=creme").await;
    assert_eq!(
        folded.attrs("main h2 a", "href"),
        page.attrs("main h2 a", "href")
    );
    let typed = get(&site, "/search?q=sourdogh").await;
    let hrefs = typed.attrs("main h2 a", "href");
    assert!(hrefs.contains(&"/recipes/country-sourdough".to_owned()));
    assert!(typed.body.contains("<mark>sourdough</mark>"));
    // Tags to narrow by, each a link to the narrowed search.
    let narrow = typed.attrs("nav.facets a", "href");
    assert!(
        narrow.contains(&"/search?q=sourdogh&tag=bread".to_owned()),
        "{narrow:?}"
    );
    let bread = get(&site, "/search?q=sourdogh&tag=bread").await;
    assert_eq!(bread.status, 200);
    assert!(bread.texts("h1")[0].contains("tagged bread"));
    // Pages: the next one, and numbers that are no page.
    let pancakes = get(&site, "/search?q=pancakes").await;
    assert_eq!(
        pancakes.attrs("a[rel=next]", "href"),
        ["/search?q=pancakes&page=2"]
    );
    let second = get(&site, "/search?q=pancakes&page=2").await;
    assert_eq!(second.status, 200);
    assert_eq!(second.attrs("a[rel=prev]", "href"), ["/search?q=pancakes"]);
    for bad in ["0", "51", "x", "-1", "99999999999999999999"] {
        let refused = get(&site, &format!("/search?q=pancakes&page={bad}")).await;
        assert_eq!(refused.status, 400, "page={bad}");
    }
}

#[actix_web::test]
async fn a_recipe_just_written_is_found_on_the_next_search() {
    let recipes = Recipes::temporary().unwrap();
    let site = site(&recipes);
    assert!(get(&site, "/search?q=damson")
        .await
        .body
        .contains("No recipe matches"));
    for n in 0..5 {
        let slug = Slug::parse(&format!("damson-gin-{n}")).unwrap();
        recipes
            .create(
                &slug,
                content(&format!("Damson gin {n}"), "Prick the damsons."),
                &Change::by("ann", "first"),
            )
            .unwrap();
        let page = get(&site, "/search?q=damson").await;
        assert_eq!(page.attrs("main h2 a", "href").len(), n + 1, "{n}");
    }
}

/// A catalog of 4,000 synthetic recipes (every one says "golden", about
/// half "oil"), five written after them titled with "oil" and with no
/// "golden" (the best matches for "oil"), 1,100 quince pastes, and three
/// recipes indexed after the rest.
/// Made once, for every test that reads it.
fn common_words_catalog() -> &'static (Recipes, SearchIndex) {
    static CATALOG: std::sync::OnceLock<(Recipes, SearchIndex)> = std::sync::OnceLock::new();
    CATALOG.get_or_init(make_common_words_catalog)
}

fn make_common_words_catalog() -> (Recipes, SearchIndex) {
    use forkful::seed::synthetic;
    let store = forkful::store::Store::temporary().unwrap();
    let shape = synthetic::Shape {
        recipes: 4_000,
        depth: 4,
        fanout: 2,
        rng: 11,
        skeleton: false,
    };
    synthetic::generate(&store, shape, false).unwrap();
    let recipes = Recipes::open(store).unwrap();
    for n in 0..5 {
        create(
            &recipes,
            &format!("oil-poached-fish-{n}"),
            &format!("Oil poached fish {n}"),
            "Poach gently.",
        );
    }
    // A word of 1,100 recipes, all at the end of the index's order.
    for n in 0..1_100 {
        create(
            &recipes,
            &format!("quince-paste-{n}"),
            &format!("Quince paste {n}"),
            "Simmer.",
        );
    }
    let index = SearchIndex::open(&recipes).unwrap();
    assert!(index.wait_for(recipes.snapshot().basis(), Duration::from_secs(120)));
    // Three written once the index was built: a small segment of their own.
    for (n, tags) in [["stew", "mexican"], ["stew", "mexican"], ["stew", "braise"]]
        .into_iter()
        .enumerate()
    {
        let draft = ContentDraft {
            tags: tags.iter().map(|t| t.to_string()).collect(),
            ..content(&format!("Birria {n}"), "Braise the goat.")
        };
        let slug = Slug::parse(&format!("birria-{n}")).unwrap();
        recipes
            .create(&slug, draft, &Change::by("ann", "new"))
            .unwrap();
    }
    assert!(index.wait_for(recipes.snapshot().basis(), Duration::from_secs(60)));
    (recipes, index)
}

#[test]
fn a_common_word_alone_is_ranked_without_counting_every_match_and_says_about() {
    let (recipes, index) = common_words_catalog();
    let ask = |text: &str| {
        let query = SearchQuery {
            text: text.into(),
            ..SearchQuery::default()
        };
        search(recipes, index, query)
    };
    // Counted exactly: "golden" is in every synthetic recipe, so with it
    // the search is of two words, which is counted match by match.
    let counted = ask("oil golden ");
    assert!(!counted.total_estimated);
    // In too few titles to fill a page: ranked and counted in one pass.
    let oil = ask("oil ");
    assert_eq!((oil.total, oil.total_estimated), (counted.total + 5, false));
    // The five titled with the word come first, though written last.
    let first: Vec<String> = oil.hits[..5]
        .iter()
        .map(|hit| hit.entry.slug.to_string())
        .collect();
    assert!(
        first
            .iter()
            .all(|slug| slug.starts_with("oil-poached-fish-")),
        "{first:?}"
    );
    assert_eq!(oil.hits.len(), PER_PAGE);
    assert!(oil.has_next);
    let second = search(
        recipes,
        index,
        SearchQuery {
            text: "oil ".into(),
            page: 1,
            ..SearchQuery::default()
        },
    );
    let ids: Vec<_> = oil.hits.iter().map(|h| h.entry.id).collect();
    assert!(second.hits.iter().all(|h| !ids.contains(&h.entry.id)));
    // A rare word is counted, whatever its company.
    let poached = ask("poached ");
    assert_eq!((poached.total, poached.total_estimated), (5, false));
    // A common word in 1,100 titles, all at the end of the index's order:
    // ranked by WAND, and estimated from every stretch of each segment,
    // not from its first matches.
    let quince = ask("quince ");
    assert!(quince.total_estimated, "{}", quince.total);
    let off = quince.total.abs_diff(1_100) as f64 / 1_100.0;
    assert!(off < 0.1, "estimated {} against 1,100", quince.total);
    assert_eq!(quince.hits.len(), PER_PAGE);
    assert!(quince.has_next);
    // Its tags, read from the sample, scaled to the estimate: the pastes
    // have none.
    assert!(quince.tags.is_empty());
}

#[test]
fn a_few_recipes_in_a_small_segment_of_their_own_have_their_tags_counted() {
    let (recipes, index) = common_words_catalog();
    let query = SearchQuery {
        text: "birria ".into(),
        ..SearchQuery::default()
    };
    let birria = search(recipes, index, query);
    assert_eq!((birria.total, birria.total_estimated), (3, false));
    assert!(!birria.tags_estimated);
    let tags: Vec<(&str, u64)> = birria.tags.iter().map(|(t, n)| (t.as_str(), *n)).collect();
    assert_eq!(tags, [("stew", 3), ("mexican", 2), ("braise", 1)]);
}

#[actix_web::test]
async fn an_estimated_count_is_written_as_about_to_two_figures() {
    let (recipes, _) = common_words_catalog();
    let site = site(recipes);
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let page = loop {
        let page = get(&site, "/search?q=quince").await;
        if page.status != 503 || std::time::Instant::now() > deadline {
            break page;
        }
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(page.status, 200);
    let lede = page.texts("p.lede").join(" ");
    // 1,100 quince pastes, estimated to two figures.
    let number = lede
        .strip_prefix("About ")
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_default();
    assert!(
        ["1,000", "1,100", "1,200"].contains(&number) && lede.contains(" recipes match"),
        "{lede}"
    );
    let rare = get(&site, "/search?q=poached").await;
    let lede = rare.texts("p.lede").join(" ");
    assert!(lede.starts_with("5 recipes match"), "{lede}");
}
