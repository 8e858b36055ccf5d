//! The site over the demo seed: every page's status and content, read with
//! an HTML parser; JSON-LD; conditional GETs; errors; hostile input.

use actix_web::test::TestRequest;
use forkful::domain::{Change, ContentDraft, Recipes, Slug, Step, Yield};
use forkful::store::Store;

use crate::helpers::{chain, demo, get, send, site, whole_catalog, Page};

fn slug(s: &str) -> Slug {
    Slug::parse(s).unwrap()
}

/// The deepest lineage in the demo, found, not named.
fn deepest() -> (String, Vec<(String, forkful::domain::VersionNumber)>) {
    let view = demo().snapshot();
    whole_catalog(&view)
        .entries
        .iter()
        .map(|e| {
            let mut lineage: Vec<(String, forkful::domain::VersionNumber)> = view
                .lineage(e.id)
                .unwrap()
                .into_iter()
                .map(|a| (view.title_of(a.id).unwrap(), a.forked_version))
                .collect();
            lineage.reverse();
            (e.slug.to_string(), lineage)
        })
        .max_by_key(|(_, lineage)| lineage.len())
        .unwrap()
}

fn assert_in_layout(page: &Page) {
    assert_eq!(page.texts("header.site-header a.brand"), ["forkful"]);
    assert_eq!(page.texts("main#main").len(), 1);
    assert_eq!(page.texts("h1").len(), 1, "one h1");
}

#[actix_web::test]
async fn the_catalog_lists_every_demo_recipe_on_its_first_page() {
    let site = site(demo());
    let page = get(&site, "/").await;
    assert_eq!(page.status, 200);
    assert_in_layout(&page);
    let catalog = whole_catalog(&demo().snapshot());
    let titles = page.texts("li.recipe-card h2 a");
    let expected: Vec<String> = catalog
        .entries
        .iter()
        .map(|e| e.title.to_string())
        .collect();
    assert_eq!(titles, expected, "every recipe, by title");
    assert_eq!(titles.len(), 67);
    assert!(page.attrs("a[rel=next]", "href").is_empty(), "one page");
    let pancakes = catalog
        .entries
        .iter()
        .position(|e| &*e.slug == "buttermilk-pancakes")
        .unwrap();
    let meta = &page.texts("li.recipe-card p.meta")[pancakes];
    assert!(meta.contains("21 forks"), "{meta}");
    let list = page.json_ld();
    assert_eq!(list["@type"], "ItemList");
    let items = list["itemListElement"].as_array().unwrap();
    assert_eq!(items.len(), 67);
    assert_eq!(items[0]["position"], 1);
    assert_eq!(
        items[0]["url"],
        format!("http://forkful.test/recipes/{}", catalog.entries[0].slug)
    );
}

#[actix_web::test]
async fn the_catalog_sorts_by_recent_and_filters_by_tag() {
    let site = site(demo());
    let recent = get(&site, "/?sort=recent").await;
    assert_eq!(recent.status, 200);
    let times = recent.attrs("li.recipe-card p.meta time", "datetime");
    assert_eq!(times.len(), 67);
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "newest first");
    assert_eq!(
        recent.attrs("nav.sort a[aria-current=page]", "href"),
        ["/?sort=recent"]
    );

    let tagged = get(&site, "/tags/vegan").await;
    assert_eq!(tagged.status, 200);
    let html = tagged.html();
    let cards = scraper::Selector::parse("li.recipe-card").unwrap();
    let tags = scraper::Selector::parse("a.tag").unwrap();
    let mut n = 0;
    for card in html.select(&cards) {
        n += 1;
        assert!(card
            .select(&tags)
            .any(|t| t.text().collect::<String>() == "vegan"));
    }
    assert!(n > 0);
    assert_eq!(
        get(&site, "/?tag=vegan").await.texts("li.recipe-card h2"),
        tagged.texts("li.recipe-card h2")
    );
}

#[actix_web::test]
async fn the_catalog_pages_through_a_long_list_by_cursor() {
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    for i in 0..130 {
        let content = ContentDraft {
            title: format!("Recipe {i:03}"),
            ingredients: vec!["1 egg".into()],
            steps: vec![Step {
                section: None,
                text: "Cook.".into(),
            }],
            ..ContentDraft::default()
        };
        recipes
            .create(
                &slug(&format!("recipe-{i:03}")),
                content,
                &Change::by("ann", "new"),
            )
            .unwrap();
    }
    let site = site(&recipes);
    let mut seen = Vec::new();
    let mut uri = "/".to_owned();
    loop {
        let page = get(&site, &uri).await;
        assert_eq!(page.status, 200, "{uri}");
        seen.extend(page.texts("li.recipe-card h2"));
        match page.attrs("a[rel=next]", "href").pop() {
            Some(next) => uri = next,
            None => break,
        }
    }
    let expected: Vec<String> = (0..130).map(|i| format!("Recipe {i:03}")).collect();
    assert_eq!(seen, expected);
}

#[actix_web::test]
async fn bad_catalog_parameters_are_400_pages_in_the_layout() {
    let site = site(demo());
    for uri in [
        "/?sort=sideways",
        "/?after=abc",
        "/?after=999999999",
        "/?sort=title&sort=recent",
    ] {
        let page = get(&site, uri).await;
        assert_eq!(page.status, 400, "{uri}");
        assert_in_layout(&page);
        assert_eq!(page.texts("h1"), ["Bad request"], "{uri}");
    }
    assert_eq!(get(&site, "/tags/no-such-tag").await.status, 404);
}

#[actix_web::test]
async fn parameters_a_page_does_not_know_are_ignored() {
    // Links shared on the web carry trackers' parameters.
    let site = site(demo());
    for (uri, plain) in [
        ("/?utm_source=feed&fbclid=abc", "/"),
        ("/?sort=recent&utm_medium=x", "/?sort=recent"),
        ("/recipes/shakshuka?utm_source=x", "/recipes/shakshuka"),
        (
            "/recipes/shakshuka/diff?from=1&to=2&gclid=1",
            "/recipes/shakshuka/diff?from=1&to=2",
        ),
        ("/search?q=egg&ref=nav", "/search?q=egg"),
    ] {
        let tracked = get(&site, uri).await;
        assert_eq!(tracked.status, 200, "{uri}");
        assert_eq!(tracked.body, get(&site, plain).await.body, "{uri}");
    }
}

#[actix_web::test]
async fn the_deepest_recipe_shows_its_lineage_from_the_original_down() {
    let site = site(demo());
    let (deepest, lineage) = deepest();
    assert!(lineage.len() >= 12, "the demo's chain is 12 deep");
    let page = get(&site, &format!("/recipes/{deepest}")).await;
    assert_eq!(page.status, 200);
    // The original, the gap, and the last two: the whole lineage is the
    // lineage page's.
    let crumbs = page.texts("nav.lineage li a");
    let titles: Vec<String> = lineage.iter().map(|(t, _)| t.clone()).collect();
    let gap = format!("… {} more ancestors", titles.len() - 3);
    let n = titles.len();
    assert_eq!(
        crumbs,
        [
            titles[0].clone(),
            gap,
            titles[n - 2].clone(),
            titles[n - 1].clone()
        ]
    );
    let hrefs = page.attrs("nav.lineage li:not(.gap) a", "href");
    let shown = [&lineage[0], &lineage[n - 2], &lineage[n - 1]];
    assert_eq!(hrefs.len(), shown.len());
    for (href, (_, version)) in hrefs.iter().zip(shown) {
        assert!(href.ends_with(&format!("/versions/{version}")), "{href}");
    }
    let whole = get(&site, &format!("/recipes/{deepest}/lineage")).await;
    let listed: Vec<String> = whole.texts("ol.lineage-list li a");
    assert_eq!(listed[..n], titles[..]);
    let title = demo()
        .snapshot()
        .recipe(&slug(&deepest))
        .unwrap()
        .content
        .title()
        .to_owned();
    assert_eq!(
        page.texts("nav.lineage li[aria-current=page]"),
        [title.as_str()]
    );
    assert_eq!(page.texts("h1"), [title]);
}

#[actix_web::test]
async fn a_recipe_page_shows_the_recipe_its_versions_and_forks() {
    let site = site(demo());
    let recipe = demo()
        .snapshot()
        .recipe(&slug("buttermilk-pancakes"))
        .unwrap();
    let page = get(&site, "/recipes/buttermilk-pancakes").await;
    assert_eq!(page.status, 200);
    assert_in_layout(&page);
    assert_eq!(page.texts("h1"), [recipe.content.title()]);
    assert_eq!(
        page.texts("section.ingredients li"),
        recipe.content.ingredients()
    );
    assert_eq!(
        page.texts("section.method ol.steps > li").len(),
        recipe.content.steps().len()
    );
    assert_eq!(page.texts("aside.family ul.forks li").len(), 21);
    let history = page.attrs("aside.family p a", "href");
    assert_eq!(history[0], "/recipes/buttermilk-pancakes/history");
    assert!(
        page.texts("aside.family p")[0].starts_with(&format!("{} versions", recipe.version_count))
    );
    let actions = page.texts("p.recipe-actions a");
    assert!(
        !actions.contains(&"Compare with parent".to_owned()),
        "an original"
    );
    assert!(
        page.texts("nav.lineage").is_empty(),
        "an original has no lineage"
    );
    // Headings in order: h1, then h2s, h3s only below an h2.
    let headings = page.html();
    let selector = scraper::Selector::parse("main h1, main h2, main h3").unwrap();
    let levels: Vec<u8> = headings
        .select(&selector)
        .map(|h| h.value().name()[1..].parse().unwrap())
        .collect();
    assert_eq!(levels[0], 1);
    assert!(levels.windows(2).all(|w| w[1] <= w[0] + 1), "{levels:?}");

    let (deepest, _) = deepest();
    let fork = get(&site, &format!("/recipes/{deepest}")).await;
    assert!(fork
        .texts("p.recipe-actions a")
        .contains(&"Compare with parent".to_owned()));
}

#[actix_web::test]
async fn json_ld_describes_the_recipe_field_by_field() {
    let site = site(demo());
    let (deepest, lineage) = deepest();
    let view = demo().snapshot();
    let recipe = view.recipe(&slug(&deepest)).unwrap();
    let c = &recipe.content;
    let page = get(&site, &format!("/recipes/{deepest}")).await;
    let ld = page.json_ld();
    assert_eq!(ld["@context"], "https://schema.org");
    assert_eq!(ld["@type"], "Recipe");
    assert_eq!(ld["name"], c.title());
    assert_eq!(ld["url"], format!("http://forkful.test/recipes/{deepest}"));
    assert_eq!(ld["author"]["@type"], "Person");
    assert_eq!(
        ld["author"]["name"],
        recipe.author.clone().unwrap().as_str()
    );
    let date = |at: Option<forkful::domain::Instant>| at.unwrap().to_string();
    assert_eq!(ld["datePublished"], date(recipe.created_at));
    assert_eq!(ld["dateModified"], date(recipe.updated_at));
    let description = ld["description"].as_str().unwrap();
    assert!(!description.contains('*') && !description.is_empty());
    assert_eq!(ld["prepTime"], c.prep().unwrap().iso8601());
    assert_eq!(ld["cookTime"], c.cook().unwrap().iso8601());
    assert_eq!(ld["totalTime"], c.total().unwrap().iso8601());
    let ingredients: Vec<&str> = ld["recipeIngredient"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(ingredients, c.ingredients());
    // Every step once, in order, inside sections where the recipe has them.
    let mut steps = Vec::new();
    for item in ld["recipeInstructions"].as_array().unwrap() {
        match item["@type"].as_str().unwrap() {
            "HowToStep" => steps.push(item["text"].as_str().unwrap().to_owned()),
            "HowToSection" => {
                assert!(item["name"].is_string());
                for step in item["itemListElement"].as_array().unwrap() {
                    assert_eq!(step["@type"], "HowToStep");
                    steps.push(step["text"].as_str().unwrap().to_owned());
                }
            }
            other => panic!("{other}"),
        }
    }
    assert_eq!(steps.len(), c.steps().len());
    assert!(steps.iter().all(|s| !s.contains("**")), "plain text");
    let yields = ld["recipeYield"].as_array().unwrap();
    if let Some(n) = c.recipe_yield().servings {
        assert_eq!(yields[0], n.to_string());
    }
    assert_eq!(
        ld["recipeCategory"],
        c.category().map(str::to_owned).unwrap().as_str()
    );
    assert_eq!(
        ld["recipeCuisine"],
        c.cuisine().map(str::to_owned).unwrap().as_str()
    );
    assert_eq!(ld["keywords"], c.tags().join(", "));
    let (parent, version) = recipe.forked_from.unwrap();
    assert_eq!(
        ld["isBasedOn"],
        format!(
            "http://forkful.test/recipes/{}/versions/{version}",
            view.slug_of(parent).unwrap()
        )
    );
    assert_eq!(version, lineage.last().unwrap().1);
    assert_eq!(ld["version"], recipe.version_count);
}

#[actix_web::test]
async fn history_lists_every_version_and_a_version_page_shows_it_as_it_was() {
    let site = site(demo());
    let view = demo().snapshot();
    let id = view.find(&slug("shakshuka")).unwrap().unwrap();
    let changes = view.changes(id).unwrap();
    let page = get(&site, "/recipes/shakshuka/history").await;
    assert_eq!(page.status, 200);
    let versions = page.texts("ol.versions > li h2");
    assert_eq!(versions.len(), changes.len());
    assert_eq!(
        versions[0],
        format!("Version {}", changes.len()),
        "newest first"
    );
    assert_eq!(
        page.texts("p.lede"),
        [format!("{} versions, newest first.", changes.len())]
    );
    let whats = page.texts("ol.versions > li p.what");
    assert_eq!(whats.last().unwrap(), "Changed: created");
    assert_eq!(
        page.attrs("ol.versions > li p.meta time", "datetime").len(),
        changes.len()
    );

    let (first, content) = view
        .version(&slug("shakshuka"), crate::helpers::v(1))
        .unwrap();
    let old = get(&site, "/recipes/shakshuka/versions/1").await;
    assert_eq!(old.status, 200);
    assert_eq!(old.texts("h1"), [content.title()]);
    assert_eq!(old.texts("section.ingredients li"), content.ingredients());
    assert_eq!(
        old.attrs("link[rel=canonical]", "href"),
        ["http://forkful.test/recipes/shakshuka"]
    );
    assert!(old.texts("p.notice")[0].contains("version 1 of"));
    assert_eq!(
        old.attrs("p.notice time", "datetime"),
        [first.instant.to_string()]
    );
    assert!(old
        .texts_raw("script[type=\"application/ld+json\"]")
        .is_empty());

    for (uri, status) in [
        ("/recipes/shakshuka/versions/0", 400),
        ("/recipes/shakshuka/versions/two", 400),
        ("/recipes/shakshuka/versions/99", 404),
        ("/recipes/no-such-recipe/versions/1", 404),
        ("/recipes/no-such-recipe/history", 404),
    ] {
        let page = get(&site, uri).await;
        assert_eq!(page.status, status, "{uri}");
        assert_in_layout(&page);
    }
}

#[actix_web::test]
async fn diffs_mark_changes_with_ins_and_del_inline_or_side_by_side() {
    let site = site(demo());
    let inline = get(&site, "/recipes/shakshuka/diff?from=1&to=11").await;
    assert_eq!(inline.status, 200);
    assert!(!inline.texts("ul.diff-inline ins").is_empty());
    assert!(
        !inline.texts("ul.diff-inline del").is_empty()
            || !inline.texts("section.diff-fields del").is_empty()
    );
    assert!(inline
        .texts("ul.diff-inline .visually-hidden")
        .iter()
        .all(|t| t == "added:" || t == "removed:"));
    let side = get(&site, "/recipes/shakshuka/diff?from=1&to=11&view=side").await;
    assert_eq!(side.status, 200);
    assert_eq!(
        side.texts("table.diff-side thead th")[..2],
        ["Version 1", "Version 11"]
    );
    assert!(!side.texts("table.diff-side ins").is_empty());
    // The default: the newest version against the one before.
    let latest = get(&site, "/recipes/shakshuka/diff").await;
    assert_eq!(latest.status, 200);
    assert!(latest.texts("h1")[0].contains("version 10 against version 11"));
    for (uri, status) in [
        ("/recipes/shakshuka/diff?from=0&to=2", 400),
        ("/recipes/shakshuka/diff?from=x", 400),
        ("/recipes/shakshuka/diff?from=1&to=12", 404),
        ("/recipes/shakshuka/diff?view=sideways", 400),
    ] {
        assert_eq!(get(&site, uri).await.status, status, "{uri}");
    }
}

#[actix_web::test]
async fn a_fork_compares_with_its_parent_then_and_now() {
    let site = site(demo());
    let (deepest, _) = deepest();
    let page = get(&site, &format!("/recipes/{deepest}/compare")).await;
    assert_eq!(page.status, 200);
    assert_eq!(
        page.texts("section.diff-section > h2"),
        ["Since the fork", "Against the parent now"]
    );
    let original = get(&site, "/recipes/buttermilk-pancakes/compare").await;
    assert_eq!(original.status, 404);
    assert_in_layout(&original);
}

#[actix_web::test]
async fn the_fork_tree_nests_the_whole_family_and_marks_the_recipe() {
    let site = site(demo());
    let (deepest, lineage) = deepest();
    let page = get(&site, &format!("/recipes/{deepest}/forks")).await;
    assert_eq!(page.status, 200);
    let current = page.texts("ul.fork-tree strong[aria-current=page]");
    assert_eq!(current.len(), 1);
    // The root is the original; the chain's recipes sit one list deeper each.
    assert_eq!(page.texts("ul.fork-tree > li > a")[0], lineage[0].0);
    let depth = "ul.fork-tree".to_owned() + &" > li > ul".repeat(lineage.len()) + " > li > strong";
    assert_eq!(page.texts(&depth).len(), 1, "{depth}");

    let pancakes = get(&site, "/recipes/buttermilk-pancakes/forks").await;
    let family = pancakes.texts("ul.fork-tree li").len();
    assert!(family >= 22, "{family}");
}

#[actix_web::test]
async fn tags_search_about_and_feeds_answer() {
    let site = site(demo());
    let tags = get(&site, "/tags").await;
    assert_eq!(tags.status, 200);
    let all = demo().snapshot().tags().unwrap();
    assert_eq!(tags.texts("ul.tag-cloud li").len(), all.len());

    let search = get(&site, "/search?q=buttermilk").await;
    assert_eq!(search.status, 200);
    let found = search.attrs("li.recipe-card h2 a", "href");
    assert!(
        found.contains(&"/recipes/buttermilk-pancakes".to_owned()),
        "{found:?}"
    );
    assert_eq!(search.attrs("input#q", "value"), ["buttermilk"]);
    let nothing = get(&site, "/search?q=zzzzqqq").await;
    assert_eq!(nothing.status, 200);
    assert!(nothing.texts("li.recipe-card").is_empty());
    assert_eq!(get(&site, "/search").await.status, 200);
    let long = "a".repeat(500);
    assert_eq!(get(&site, &format!("/search?q={long}")).await.status, 400);

    let about = get(&site, "/about").await;
    assert_eq!(about.status, 200);
    assert_in_layout(&about);

    let feed = get(&site, "/feed.xml").await;
    assert_eq!(feed.status, 200);
    assert!(feed
        .header("content-type")
        .unwrap()
        .starts_with("application/atom+xml"));
    assert_eq!(feed.body.matches("<entry>").count(), 30);
    assert!(feed.body.starts_with("<?xml"));

    let index = get(&site, "/sitemap.xml").await;
    assert_eq!(index.status, 200);
    assert!(index.body.contains("<sitemapindex"));
    assert_eq!(
        index
            .body
            .matches("<loc>http://forkful.test/sitemaps/1.xml</loc>")
            .count(),
        1
    );
    let sitemap = get(&site, "/sitemaps/1.xml").await;
    assert_eq!(sitemap.status, 200);
    assert_eq!(
        sitemap
            .body
            .matches("<loc>http://forkful.test/recipes/")
            .count(),
        67
    );
    for missing in [
        "/sitemaps/2.xml",
        "/sitemaps/0.xml",
        "/sitemaps/x.xml",
        "/sitemaps/1",
    ] {
        assert_eq!(get(&site, missing).await.status, 404, "{missing}");
    }

    let robots = get(&site, "/robots.txt").await;
    assert!(robots
        .body
        .contains("Sitemap: http://forkful.test/sitemap.xml"));
}

#[actix_web::test]
async fn the_json_of_a_recipe_is_for_programs() {
    let site = site(demo());
    let (deepest, lineage) = deepest();
    let page = get(&site, &format!("/recipes/{deepest}.json")).await;
    assert_eq!(page.status, 200);
    assert_eq!(page.header("content-type"), Some("application/json"));
    let json: serde_json::Value = serde_json::from_str(&page.body).unwrap();
    let recipe = demo().snapshot().recipe(&slug(&deepest)).unwrap();
    assert_eq!(json["slug"], deepest.as_str());
    assert_eq!(json["title"], recipe.content.title());
    assert_eq!(
        json["ingredients"].as_array().unwrap().len(),
        recipe.content.ingredients().len()
    );
    assert_eq!(
        json["steps"].as_array().unwrap().len(),
        recipe.content.steps().len()
    );
    assert_eq!(json["versions"], recipe.version_count);
    assert_eq!(
        json["forked_from"]["version"],
        lineage.last().unwrap().1.get()
    );
    assert_eq!(get(&site, "/recipes/no-such.json").await.status, 404);
}

#[actix_web::test]
async fn conditional_gets_answer_304_until_a_new_version_changes_the_etag() {
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    let content = ContentDraft {
        title: "Toast".into(),
        ingredients: vec!["1 slice bread".into()],
        steps: vec![Step {
            section: None,
            text: "Toast it.".into(),
        }],
        ..ContentDraft::default()
    };
    recipes
        .create(&slug("toast"), content.clone(), &Change::by("ann", "new"))
        .unwrap();
    let site = site(&recipes);
    let first = get(&site, "/recipes/toast").await;
    assert_eq!(first.status, 200);
    let etag = first.header("etag").unwrap().to_owned();
    let modified = first.header("last-modified").unwrap().to_owned();

    let again = send(
        &site,
        TestRequest::get()
            .uri("/recipes/toast")
            .insert_header(("If-None-Match", etag.as_str())),
    )
    .await;
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
    assert_eq!(again.header("etag"), Some(etag.as_str()));
    assert!(modified.ends_with(" GMT"), "{modified}");
    // A date is compared to the change exactly: one at or after it is 304
    // (the page's own date, a whole second, is 304 only if the change fell
    // on one; `respond`'s unit test has that).
    let since = send(
        &site,
        TestRequest::get()
            .uri("/recipes/toast")
            .insert_header(("If-Modified-Since", "Fri, 01 Jan 2100 00:00:00 GMT")),
    )
    .await;
    assert_eq!(since.status, 304);

    let edited = ContentDraft {
        title: "Buttered toast".into(),
        ..content
    };
    recipes
        .edit(
            &slug("toast"),
            crate::helpers::v(1),
            edited,
            &Change::by("ann", "butter"),
        )
        .unwrap();
    let after = send(
        &site,
        TestRequest::get()
            .uri("/recipes/toast")
            .insert_header(("If-None-Match", etag.as_str())),
    )
    .await;
    assert_eq!(after.status, 200);
    assert_ne!(after.header("etag"), Some(etag.as_str()));
    assert_eq!(after.texts("h1"), ["Buttered toast"]);
    // The edit came within a second or so of the first version: a client
    // that validates by the first version's date alone gets the edit.
    let by_date = send(
        &site,
        TestRequest::get()
            .uri("/recipes/toast")
            .insert_header(("If-Modified-Since", modified.as_str())),
    )
    .await;
    assert_eq!(by_date.status, 200);
    assert_eq!(by_date.texts("h1"), ["Buttered toast"]);
}

#[actix_web::test]
async fn unknown_addresses_are_404_pages_in_the_layout() {
    let site = site(demo());
    for uri in [
        "/recipes/no-such-recipe",
        "/recipes/Not%20A%20Slug",
        // Inside a recipe's scope (`web::RECIPE`): no such address of a
        // recipe, and one with a trailing slash, are the site's 404 too.
        "/recipes/shakshuka/no-such-page",
        "/recipes/shakshuka/",
        "/recipes/no-such-recipe.json",
        "/no/such/page",
        "/static/style.000000000000.css",
    ] {
        let page = get(&site, uri).await;
        assert_eq!(page.status, 404, "{uri}");
        assert_in_layout(&page);
        assert_eq!(page.texts("h1"), ["Not found"], "{uri}");
        assert!(page.header("content-security-policy").is_some(), "{uri}");
    }
    // The page is there; it does not take a POST.
    let post = send(&site, TestRequest::post().uri("/recipes/shakshuka")).await;
    assert_eq!(post.status, 405);
    assert_eq!(post.header("allow"), Some("GET, HEAD"));
    assert_in_layout(&post);
}

#[actix_web::test]
async fn every_page_has_security_headers_timing_and_validators() {
    let site = site(demo());
    let page = get(&site, "/recipes/shakshuka").await;
    let csp = page.header("content-security-policy").unwrap();
    assert!(!csp.contains("unsafe-inline") && csp.contains("default-src 'none'"));
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(page.header("x-frame-options"), Some("DENY"));
    assert!(page.header("referrer-policy").is_some());
    assert!(page
        .header("permissions-policy")
        .is_some_and(|p| p.contains("camera=()") && p.contains("geolocation=()")));
    assert!(!csp.contains("data:"), "no page draws a data: image: {csp}");
    // No page draws a picture from elsewhere, which would tell that site
    // who reads the recipe.
    assert!(csp.contains(" img-src 'self';"), "{csp}");
    assert_eq!(
        page.header("strict-transport-security"),
        None,
        "not over http"
    );
    let https = actix_web::web::Data::new(forkful::web::Site::new(
        demo().clone(),
        "https://forkful.test",
    ));
    let secure = get(&https, "/recipes/shakshuka").await;
    assert!(secure
        .header("strict-transport-security")
        .is_some_and(|h| h.starts_with("max-age=")));
    let timing = page.header("server-timing").unwrap();
    assert!(
        timing.contains("store;dur=") && timing.contains("render;dur="),
        "{timing}"
    );
    assert!(
        timing.contains("index reads"),
        "debug builds count reads: {timing}"
    );
    assert!(page.header("etag").unwrap().starts_with("W/\""));
    assert!(page.header("last-modified").is_some());
    // No inline script or style anywhere: only the app's file and JSON-LD.
    let scripts = page.attrs("script", "src");
    assert_eq!(scripts.len(), 1);
    assert!(page.texts("style").is_empty() && page.attrs("[style]", "style").is_empty());

    let css = page.attrs("link[rel=stylesheet]", "href").pop().unwrap();
    let asset = get(&site, &css).await;
    assert_eq!(asset.status, 200);
    assert!(asset
        .header("content-type")
        .unwrap()
        .starts_with("text/css"));
    assert!(asset.header("cache-control").unwrap().contains("immutable"));
}

#[actix_web::test]
async fn pages_are_compressed_when_asked_and_head_sends_no_body() {
    let site = site(demo());
    for encoding in ["gzip", "br"] {
        let page = send(
            &site,
            TestRequest::get()
                .uri("/")
                .insert_header(("Accept-Encoding", encoding)),
        )
        .await;
        assert_eq!(page.status, 200);
        assert_eq!(page.header("content-encoding"), Some(encoding));
    }
    let head = send(
        &site,
        TestRequest::default()
            .method(actix_web::http::Method::HEAD)
            .uri("/about"),
    )
    .await;
    assert_eq!(head.status, 200);
}

#[actix_web::test]
async fn answers_no_handler_compressed_are_compressed_as_pages_are() {
    // An error page is made fresh for each request, never kept, so the
    // middleware compresses it, in the coding a page would be sent in.
    let site = site(demo());
    let missing = "/recipes/no-such-recipe";
    let plain = get(&site, missing).await;
    assert_eq!(plain.status, 404);
    assert_eq!(plain.header("content-encoding"), None);
    assert!(plain.body.contains("</html>"));
    for (accept, coding) in [
        ("gzip, deflate, br, zstd", Some("br")),
        ("gzip, deflate", Some("gzip")),
        ("deflate", None),
        ("br;q=0, gzip;q=0", None),
    ] {
        let page = send(
            &site,
            TestRequest::get()
                .uri(missing)
                .insert_header(("Accept-Encoding", accept)),
        )
        .await;
        assert_eq!(page.status, 404, "{accept}");
        assert_eq!(page.header("content-encoding"), coding, "{accept}");
        assert_eq!(decoded(&page), plain.body, "{accept}");
    }
}

/// A page's body decoded from its Content-Encoding.
fn decoded(page: &Page) -> String {
    use std::io::Read as _;
    let mut text = String::new();
    match page.header("content-encoding") {
        None => text.push_str(std::str::from_utf8(&page.raw).unwrap()),
        Some("gzip") => {
            flate2::read::GzDecoder::new(&page.raw[..])
                .read_to_string(&mut text)
                .unwrap();
        }
        Some("br") => {
            brotli::Decompressor::new(&page.raw[..], 4096)
                .read_to_string(&mut text)
                .unwrap();
        }
        Some(other) => panic!("an unexpected coding {other}"),
    }
    text
}

#[actix_web::test]
async fn a_hostile_recipe_comes_out_inert() {
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    let title = "</script><script>alert(1)</script> & <b>bold</b>";
    let content = ContentDraft {
        title: title.into(),
        summary: Some("<img src=x onerror=alert(1)> [click](javascript:alert(1))".into()),
        recipe_yield: Yield {
            servings: Some(2),
            text: Some("</script>".into()),
        },
        ingredients: vec!["<script>alert(2)</script>".into()],
        steps: vec![Step {
            section: Some("</script><script>".into()),
            text: "<iframe src=x></iframe> stir".into(),
        }],
        tags: vec!["<script>".into()],
        image: Some("https://example.com/x.jpg\"><script>".into()),
        ..ContentDraft::default()
    };
    recipes
        .create(&slug("hostile"), content, &Change::by("mallory", "hi"))
        .unwrap();
    let site = site(&recipes);
    for uri in [
        "/recipes/hostile",
        "/",
        "/recipes/hostile/history",
        "/search?q=script",
        "/tags",
    ] {
        let page = get(&site, uri).await;
        assert_eq!(page.status, 200, "{uri}");
        let html = page.html();
        let scripts = scraper::Selector::parse("script").unwrap();
        for script in html.select(&scripts) {
            let kind = script.value().attr("type");
            let src = script.value().attr("src");
            assert!(
                kind == Some("application/ld+json")
                    || src.is_some_and(|s| s.starts_with("/static/")),
                "{uri}: a script the site did not write: {}",
                script.html()
            );
        }
        for css in ["iframe", "b", "[onerror]", "a[href^=javascript]"] {
            assert!(page.texts(css).is_empty(), "{uri}: {css}");
        }
        // The address of a picture elsewhere is not drawn at all.
        assert!(page.attrs("img", "src").is_empty(), "{uri}");
    }
    let page = get(&site, "/recipes/hostile").await;
    assert_eq!(page.texts("h1"), [title]);
    let ld = page.json_ld();
    assert_eq!(ld["name"], title);
    assert_eq!(ld["recipeYield"][1], "</script>");
    assert_eq!(ld["recipeInstructions"][0]["name"], "</script><script>");
    assert_eq!(ld["image"][0], "https://example.com/x.jpg\"><script>");
    let summary = page.texts("div.summary").join(" ");
    assert!(
        summary.contains("<img src=x onerror=alert(1)>"),
        "shown as text: {summary}"
    );
}

/// What an HTML validator and an accessibility audit check that a parser
/// can: no parse errors, a language, one h1 and no skipped heading levels,
/// labelled navigation and form fields, alt text, unique ids, links with
/// words.
fn assert_valid_and_accessible(uri: &str, page: &Page) {
    let html = page.html();
    assert!(html.errors.is_empty(), "{uri}: {:?}", html.errors);
    let select = |css: &str| scraper::Selector::parse(css).unwrap();
    assert_eq!(
        page.attrs("html", "lang"),
        ["en"],
        "{uri}: the page's language"
    );
    assert!(!page.texts("head title")[0].is_empty(), "{uri}: a title");
    let levels: Vec<u8> = html
        .select(&select("h1, h2, h3, h4, h5, h6"))
        .map(|h| h.value().name()[1..].parse().unwrap())
        .collect();
    assert_eq!(
        levels.iter().filter(|l| **l == 1).count(),
        1,
        "{uri}: one h1"
    );
    assert_eq!(levels[0], 1, "{uri}: the h1 comes first");
    assert!(
        levels.windows(2).all(|w| w[1] <= w[0] + 1),
        "{uri}: heading levels {levels:?}"
    );
    for nav in html.select(&select("nav")) {
        assert!(
            nav.value().attr("aria-label").is_some(),
            "{uri}: {}",
            nav.html()
        );
    }
    for input in html.select(&select("input:not([type=hidden])")) {
        let id = input.value().attr("id").unwrap_or_default();
        let labelled = input.value().attr("aria-label").is_some()
            || html
                .select(&select("label"))
                .any(|l| l.value().attr("for") == Some(id));
        assert!(labelled, "{uri}: {}", input.html());
    }
    for img in html.select(&select("img")) {
        assert!(img.value().attr("alt").is_some(), "{uri}: {}", img.html());
    }
    let mut ids: Vec<&str> = html
        .select(&select("[id]"))
        .filter_map(|e| e.value().attr("id"))
        .collect();
    let count = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), count, "{uri}: ids are unique");
    for link in html.select(&select("a")) {
        let words = link.text().collect::<String>();
        assert!(
            !words.trim().is_empty() || link.value().attr("aria-label").is_some(),
            "{uri}: a link without words: {}",
            link.html()
        );
    }
}

/// One page of each type the demo serves, each answering 200.
fn demo_pages() -> Vec<String> {
    let (deepest, _) = deepest();
    vec![
        "/".to_owned(),
        "/?sort=recent".to_owned(),
        "/tags".to_owned(),
        "/tags/vegan".to_owned(),
        "/search?q=pancake".to_owned(),
        "/search".to_owned(),
        "/about".to_owned(),
        "/signup".to_owned(),
        "/login".to_owned(),
        format!("/recipes/{deepest}"),
        "/recipes/buttermilk-pancakes".to_owned(),
        "/recipes/shakshuka?servings=8".to_owned(),
        "/recipes/shakshuka/history".to_owned(),
        "/recipes/shakshuka/versions/1".to_owned(),
        "/recipes/shakshuka/diff?from=1&to=11".to_owned(),
        "/recipes/shakshuka/diff?from=1&to=11&view=side".to_owned(),
        format!("/recipes/{deepest}/compare"),
        format!("/recipes/{deepest}/forks"),
        format!("/recipes/{deepest}/lineage"),
        "/recipes/masoor-dal-coconut/history".to_owned(),
        "/recipes/banana-bread-salted-crust".to_owned(),
        "/recipes/banana-bread/history".to_owned(),
        "/recipes/banana-bread/suggestions".to_owned(),
        "/recipes/banana-bread/suggestions/1".to_owned(),
    ]
}

#[actix_web::test]
async fn every_page_is_valid_html_and_passes_structural_accessibility_checks() {
    // The parser does report what a validator would.
    let broken = scraper::Html::parse_document("<!DOCTYPE html><title>x</title><p>a</b></i>");
    assert!(!broken.errors.is_empty());
    let site = site(demo());
    // And the pages that answer with an error.
    let mut uris = demo_pages();
    uris.extend([
        "/recipes/no-such-recipe".to_owned(),
        "/?sort=sideways".to_owned(),
    ]);
    for uri in &uris {
        let page = get(&site, uri).await;
        assert_valid_and_accessible(uri, &page);
    }
}

/// Issue 31: every page a search engine may index says what it is in a
/// meta description; a page kept out of the index says so instead.
#[actix_web::test]
async fn every_indexable_page_is_described() {
    let site = site(demo());
    let uris = demo_pages();
    let cooks = get(&site, "/recipes/shakshuka")
        .await
        .attrs("a[href^='/cooks/']", "href");
    assert!(!cooks.is_empty(), "a recipe page links its cook");
    let uris = uris.iter().chain(&cooks[..1]);
    let mut undescribed = Vec::new();
    for uri in uris {
        let page = get(&site, uri).await;
        assert_eq!(page.status, 200, "{uri}");
        let noindex = page
            .attrs("meta[name=robots]", "content")
            .iter()
            .any(|c| c.contains("noindex"));
        let described = page
            .attrs("meta[name=description]", "content")
            .iter()
            .any(|c| c.trim().len() >= 20);
        if !noindex && !described {
            undescribed.push(uri.as_str());
        }
    }
    assert!(
        undescribed.is_empty(),
        "no meta description: {undescribed:?}"
    );
}

/// A recipe written without a summary is described all the same, from
/// what it has.
#[actix_web::test]
async fn a_recipe_without_a_summary_is_described_from_what_it_has() {
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    let content = ContentDraft {
        title: "Plain rice".into(),
        ingredients: vec!["1 cup rice".into(), "2 cups water".into()],
        steps: vec![Step {
            section: None,
            text: "Simmer, covered, 15 minutes.".into(),
        }],
        ..ContentDraft::default()
    };
    recipes
        .create(&slug("plain-rice"), content, &Change::by("ann", "new"))
        .unwrap();
    let site = site(&recipes);
    for uri in ["/recipes/plain-rice", "/recipes/plain-rice/versions/1"] {
        let page = get(&site, uri).await;
        assert_eq!(
            page.attrs("meta[name=description]", "content"),
            ["Plain rice: a recipe of 2 ingredients and 1 step, by ann, with its whole history and forks."],
            "{uri}"
        );
    }
}

#[actix_web::test]
async fn a_retired_recipe_is_gone_from_the_catalog_and_its_page_but_keeps_its_history() {
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    let content = ContentDraft {
        title: "Old soup".into(),
        ingredients: vec!["1 l water".into()],
        steps: vec![Step {
            section: None,
            text: "Boil.".into(),
        }],
        ..ContentDraft::default()
    };
    recipes
        .create(&slug("old-soup"), content, &Change::by("ann", "new"))
        .unwrap();
    recipes
        .retire(
            &slug("old-soup"),
            crate::helpers::v(1),
            &Change::by("ann", "gone"),
        )
        .unwrap();
    let site = site(&recipes);
    let page = get(&site, "/recipes/old-soup").await;
    assert_eq!(page.status, 410);
    assert_in_layout(&page);
    assert!(get(&site, "/").await.texts("li.recipe-card").is_empty());
    let history = get(&site, "/recipes/old-soup/history").await;
    assert_eq!(history.status, 200);
    assert_eq!(
        history.texts("ol.versions > li p.what")[0],
        "Changed: retired"
    );
}

#[actix_web::test]
async fn the_etag_changes_with_what_the_page_shows_besides_the_data() {
    let here = site(demo());
    let elsewhere = actix_web::web::Data::new(forkful::web::Site::new(
        demo().clone(),
        "https://recipes.example.com",
    ));
    let a = get(&here, "/recipes/shakshuka").await;
    let b = get(&elsewhere, "/recipes/shakshuka").await;
    assert_ne!(
        a.header("etag"),
        b.header("etag"),
        "absolute links differ, so must the ETag"
    );
    assert_eq!(
        a.header("etag"),
        get(&here, "/recipes/shakshuka").await.header("etag")
    );
}

#[actix_web::test]
async fn a_long_lineage_is_shortened_in_the_middle_with_a_link_to_all_of_it() {
    let recipes = chain(25);
    let site = site(&recipes);
    let page = get(&site, "/recipes/r25").await;
    assert_eq!(page.status, 200);
    let crumbs = page.texts("nav.lineage li");
    // The original, the gap, the last two to the parent, and the recipe.
    assert_eq!(crumbs.len(), 5, "{crumbs:?}");
    assert!(crumbs[0].starts_with("Recipe 0 "), "{crumbs:?}");
    assert_eq!(crumbs[1], "… 22 more ancestors");
    assert!(crumbs[2].starts_with("Recipe 23 "), "{crumbs:?}");
    assert!(crumbs[3].starts_with("Recipe 24 "), "{crumbs:?}");
    assert_eq!(crumbs[4], "Recipe 25");
    assert_eq!(
        page.attrs("nav.lineage li.gap a", "href"),
        ["/recipes/r25/lineage"]
    );
    // The parent is still the parent in the text and the JSON-LD.
    assert!(page.body.contains("forked from"));
    assert_eq!(
        page.json_ld()["isBasedOn"],
        "http://forkful.test/recipes/r24/versions/1"
    );

    let whole = get(&site, "/recipes/r25/lineage").await;
    assert_eq!(whole.status, 200);
    let ancestors = whole.texts("ol.lineage-list li");
    assert_eq!(ancestors.len(), 26);
    assert!(ancestors[12].starts_with("Recipe 12 "));
    assert_eq!(get(&site, "/recipes/r0/lineage").await.status, 200);
    assert_eq!(get(&site, "/recipes/nope/lineage").await.status, 404);

    // Three ancestors are shown whole; four are shortened.
    let three = get(&site, "/recipes/r3").await.texts("nav.lineage li");
    assert_eq!(three.len(), 4);
    assert!(!three.iter().any(|c| c.contains("more ancestor")));
    let four = get(&site, "/recipes/r4").await.texts("nav.lineage li");
    assert_eq!(four[1], "… 1 more ancestor", "{four:?}");
}

#[actix_web::test]
async fn a_recipe_page_lists_fifty_forks_and_links_to_the_rest() {
    let recipes = chain(0);
    for i in 0..55 {
        recipes
            .fork(
                &slug("r0"),
                None,
                Some(&slug(&format!("f{i}"))),
                |c| c,
                &Change::by("bo", "fork"),
            )
            .unwrap();
    }
    let site = site(&recipes);
    let page = get(&site, "/recipes/r0").await;
    assert_eq!(page.texts(".family h3"), ["55 forks"]);
    let listed = page.attrs("ul.forks a", "href");
    assert_eq!(listed.len(), forkful::domain::FORKS_LISTED);
    assert_eq!(listed[0], "/recipes/f0");
    assert!(page
        .attrs(".family a", "href")
        .contains(&"/recipes/r0/forks".to_owned()));
    let json: serde_json::Value =
        serde_json::from_str(&get(&site, "/recipes/r0.json").await.body).unwrap();
    assert_eq!(json["fork_count"], 55);
    assert_eq!(json["forks"].as_array().unwrap().len(), 50);
}

#[actix_web::test]
async fn a_family_deeper_than_the_tree_page_is_drawn_to_its_limit_without_recursion() {
    // 520 generations: deeper than the 500 recipes a tree page shows.
    let recipes = chain(520);
    let site = site(&recipes);
    let page = get(&site, "/recipes/r10/forks").await;
    assert_eq!(page.status, 200);
    assert_eq!(page.texts("ul.fork-tree li").len(), 501);
    // Each generation is a list inside its parent's item, down to the
    // deepest a browser nests; deeper ones are listed there, numbered.
    let selector = scraper::Selector::parse("ul.fork-tree li ul li ul li").unwrap();
    assert!(page.html().select(&selector).next().is_some());
    let deepest = page
        .html()
        .select(&scraper::Selector::parse("ul.fork-tree li").unwrap())
        .map(|li| {
            li.ancestors()
                .filter(|a| a.value().as_element().is_some_and(|e| e.name() == "ul"))
                .count()
        })
        .max()
        .unwrap();
    assert_eq!(deepest, forkful::views::forks::MAX_NESTED_GENERATIONS + 1);
    assert!(
        page.body.contains("1 version, generation 101<"),
        "the first past the deepest list says its generation"
    );
    assert!(page.body.contains("1 version, generation 500<"));
    assert!(
        !page.body.contains("generation 100<"),
        "those nested say none"
    );
    assert_eq!(
        page.texts("ul.fork-tree strong[aria-current=page]"),
        ["Recipe 10"]
    );
    assert!(page.body.contains("larger than this page shows"));
}

#[actix_web::test]
async fn a_long_history_comes_fifty_versions_a_page_with_the_same_summaries() {
    let recipes = chain(0);
    for n in 1..60u64 {
        let content = ContentDraft {
            title: format!("Recipe 0, take {n}"),
            ingredients: vec![format!("{n} eggs")],
            ..ContentDraft::default()
        };
        recipes
            .edit(
                &slug("r0"),
                crate::helpers::v(n),
                content,
                &Change::by("ann", "again"),
            )
            .unwrap();
    }
    let site = site(&recipes);
    let view = recipes.snapshot();
    let all: Vec<String> = view
        .changes(view.find(&slug("r0")).unwrap().unwrap())
        .unwrap()
        .into_iter()
        .map(|(_, what)| format!("Changed: {what}"))
        .rev()
        .collect();
    assert_eq!(all.len(), 60);

    let first = get(&site, "/recipes/r0/history").await;
    assert_eq!(first.texts("ol.versions > li h2").len(), 50);
    assert_eq!(first.texts("ol.versions > li h2")[0], "Version 60");
    assert_eq!(first.texts("ol.versions > li p.what"), all[..50]);
    assert!(first.texts("p.lede")[0].starts_with("Versions 60 to 11 of 60"));
    let older = first.attrs("nav.pager a[rel=next]", "href");
    assert_eq!(older, ["/recipes/r0/history?before=11"]);

    let second = get(&site, &older[0]).await;
    assert_eq!(second.texts("ol.versions > li h2").len(), 10);
    assert_eq!(second.texts("ol.versions > li p.what"), all[50..]);
    assert!(second.attrs("nav.pager a[rel=next]", "href").is_empty());
    assert_eq!(get(&site, "/recipes/r0/history?before=x").await.status, 400);
}

#[actix_web::test]
async fn the_new_addresses_refuse_hostile_input_with_a_clear_status() {
    let site = site(demo());
    for (uri, status) in [
        ("/search?q=egg&page=abc", 400),
        ("/search?q=egg&page=-1", 400),
        ("/search?q=egg&page=99999999999", 400),
        ("/search?q=egg&page=50", 200),
        ("/search?q=egg&tag=vegan&page=2", 200),
        (
            "/search?q=egg%20egg%20egg%20egg%20egg%20egg%20egg%20egg%20egg%20egg",
            200,
        ),
        ("/search?q=%C3%A9%C3%A9%C3%A9&page=1", 200),
        ("/sitemaps/99999999999999999999999999.xml", 404),
        ("/sitemaps/-1.xml", 404),
        ("/sitemaps/1.xml.br", 404),
        ("/recipes/shakshuka/lineage", 200),
        ("/recipes/%2e%2e/lineage", 404),
        ("/recipes/shakshuka/history?before=0", 400),
        (
            "/recipes/shakshuka/history?before=99999999999999999999999",
            400,
        ),
        ("/recipes/shakshuka/history?before=9999", 200),
        ("/tags/vegan?after=abc", 400),
    ] {
        let page = get(&site, uri).await;
        assert_eq!(page.status, status, "{uri}");
        if status >= 400 {
            assert_in_layout(&page);
        }
    }
}

#[actix_web::test]
async fn a_method_an_address_does_not_take_is_405_with_the_ones_it_does() {
    let site = site(demo());
    for (method, uri, allow, says) in [
        (
            "POST",
            "/about",
            "GET, HEAD",
            "/about takes GET and HEAD, not POST.",
        ),
        ("DELETE", "/recipes/shakshuka", "GET, HEAD", "not DELETE"),
        (
            "PUT",
            "/import",
            "GET, HEAD, POST",
            "takes GET, HEAD and POST, not PUT.",
        ),
        ("GET", "/logout", "POST", "/logout takes POST, not GET."),
        ("PATCH", "/recipes/shakshuka/retire", "POST", "not PATCH"),
    ] {
        let request = TestRequest::default()
            .method(actix_web::http::Method::from_bytes(method.as_bytes()).unwrap())
            .uri(uri);
        let page = send(&site, request).await;
        assert_eq!(page.status, 405, "{method} {uri}");
        assert_eq!(page.header("allow"), Some(allow), "{method} {uri}");
        assert!(page.body.contains(says), "{method} {uri}: {}", page.body);
    }
    // An address that is not there is still not there.
    let missing = send(&site, TestRequest::post().uri("/nowhere")).await;
    assert_eq!(missing.status, 404);
    // HEAD is a GET without its body.
    let head = send(
        &site,
        TestRequest::default()
            .method(actix_web::http::Method::HEAD)
            .uri("/about"),
    )
    .await;
    assert_eq!(head.status, 200);
}

/// `/healthz` on one node with no log: the basis it shows, never cached.
#[actix_web::test]
async fn healthz_says_the_basis_shown_and_is_never_cached() {
    let site = site(demo());
    let page = get(&site, "/healthz").await;
    assert_eq!(page.status, 200);
    assert_eq!(page.header("cache-control"), Some("no-store"));
    let said: serde_json::Value = serde_json::from_str(&page.body).unwrap();
    assert_eq!(said["status"], "ok");
    assert_eq!(said["basis"], demo().snapshot().basis().get());
    assert!(said.get("log").is_none(), "no log: {said}");
}

/// `/metrics` is Prometheus text: requests by route pattern (never by
/// path), their latency, the page cache's hits, and the basis shown.
#[actix_web::test]
async fn metrics_count_requests_by_route_and_the_page_cache() {
    let site = site(demo());
    let slug = whole_catalog(&demo().snapshot()).entries[0]
        .slug
        .to_string();
    for _ in 0..2 {
        assert_eq!(get(&site, &format!("/recipes/{slug}")).await.status, 200);
        // Matched in the recipe's scope, named by its whole pattern.
        let forks = get(&site, &format!("/recipes/{slug}/forks")).await;
        assert_eq!(forks.status, 200);
        // A long page, made off the workers: counted apart.
        assert_eq!(get(&site, "/sitemap.xml").await.status, 200);
    }
    let page = get(&site, "/metrics").await;
    assert_eq!(page.status, 200);
    assert_eq!(page.header("cache-control"), Some("no-store"));
    assert!(page
        .header("content-type")
        .is_some_and(|t| t.starts_with("text/plain; version=0.0.4")));
    let text = &page.body;
    let shows = |needle: &str| {
        assert!(text.contains(needle), "{needle} not in:\n{text}");
    };
    shows("forkful_requests_total{route=\"/recipes/{slug}\",method=\"GET\",status=\"200\"}");
    shows("forkful_request_seconds_bucket{route=\"/recipes/{slug}\",le=\"");
    shows("forkful_requests_total{route=\"/recipes/{slug}/forks\",method=\"GET\",status=\"200\"}");
    shows("forkful_page_cache_total{outcome=\"hit\",page=\"other\"}");
    shows("forkful_page_cache_total{outcome=\"hit\",page=\"long\"}");
    shows(&format!(
        "forkful_basis {}",
        demo().snapshot().basis().get()
    ));
    assert!(
        !text.contains(&format!("route=\"/recipes/{slug}\"")),
        "a path as a label"
    );
}

/// A node whose store failed a flush takes no write, and falls behind:
/// `/healthz` takes it out of the pool (503, saying why).
#[actix_web::test]
async fn healthz_says_a_node_that_refuses_writes_is_unwell() {
    use forkful::store::testing::FlushFault;
    let recipes = forkful::domain::Recipes::temporary().unwrap();
    let site = site(&recipes);
    assert_eq!(get(&site, "/healthz").await.status, 200);
    recipes.store().inject_flush_fault(FlushFault::Error);
    let failed = recipes.create(
        &forkful::domain::Slug::parse("dal").unwrap(),
        crate::helpers::largest_content(1),
        &forkful::domain::Change::by("ann", "first"),
    );
    assert!(failed.is_err());
    let page = get(&site, "/healthz").await;
    assert_eq!(page.status, 503, "{}", page.body);
    assert!(page.body.contains("refusing writes"), "{}", page.body);
}

/// A method nobody uses makes no series of its own in `/metrics`: every
/// such request is counted under one "other".
#[actix_web::test]
async fn metrics_count_made_up_methods_as_one() {
    let site = site(demo());
    let made_up = actix_web::http::Method::from_bytes(b"BREWCOFFEE").unwrap();
    send(
        &site,
        actix_web::test::TestRequest::default()
            .method(made_up)
            .uri("/"),
    )
    .await;
    let text = get(&site, "/metrics").await.body;
    assert!(!text.contains("BREWCOFFEE"), "{text}");
    assert!(text.contains("method=\"other\""), "{text}");
}
