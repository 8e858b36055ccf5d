//! Pages kept per address and coding, and validators that follow what a
//! page shows: a write to one recipe leaves every unrelated page cached and
//! its ETag current; a write a page shows (its own edit, a new fork, an
//! ancestor's new title) makes it new.

use std::io::Read as _;

use actix_web::test::TestRequest;
use actix_web::web::Data;
use forkful::domain::{Change, ContentDraft, Recipes, Step};
use forkful::store::Store;
use forkful::web::Site;

use crate::helpers::{demo, get, send, site, v, whole_catalog, Page};

fn slug(s: &str) -> forkful::domain::Slug {
    forkful::domain::Slug::parse(s).unwrap()
}

fn content(title: &str) -> ContentDraft {
    ContentDraft {
        title: title.into(),
        ingredients: vec!["1 slice bread".into()],
        steps: vec![Step {
            section: None,
            text: "Toast it.".into(),
        }],
        ..ContentDraft::default()
    }
}

/// Toast, porridge, and jam toast forked from toast.
fn kitchen() -> Recipes {
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    let by = Change::by("ann", "new");
    recipes
        .create(&slug("toast"), content("Toast"), &by)
        .unwrap();
    recipes
        .create(&slug("porridge"), content("Porridge"), &by)
        .unwrap();
    recipes
        .fork(
            &slug("toast"),
            None,
            Some(&slug("jam-toast")),
            |c| ContentDraft {
                title: "Jam toast".into(),
                ..c
            },
            &Change::by("bo", "jam"),
        )
        .unwrap();
    recipes
}

async fn if_none_match(site: &Data<Site>, uri: &str, etag: &str) -> Page {
    send(
        site,
        TestRequest::get()
            .uri(uri)
            .insert_header(("If-None-Match", etag)),
    )
    .await
}

fn etag(page: &Page) -> String {
    page.header("etag").expect("an ETag").to_owned()
}

fn was_cached(page: &Page) -> bool {
    page.header("server-timing")
        .is_some_and(|t| t.contains("cache;desc=hit"))
}

fn edit_title(recipes: &Recipes, name: &str, version: u64, title: &str) {
    recipes
        .edit(
            &slug(name),
            v(version),
            content(title),
            &Change::by("ann", "retitled"),
        )
        .unwrap();
}

#[actix_web::test]
async fn a_write_to_one_recipe_leaves_unrelated_pages_cached_with_their_etags() {
    let recipes = kitchen();
    let site = site(&recipes);
    let toast = get(&site, "/recipes/toast").await;
    let jam = get(&site, "/recipes/jam-toast").await;
    let porridge = get(&site, "/recipes/porridge").await;
    let catalog = get(&site, "/").await;
    assert!(!was_cached(&toast), "the first answer is made, not kept");

    edit_title(&recipes, "porridge", 1, "Oat porridge");

    for (uri, before) in [("/recipes/toast", &toast), ("/recipes/jam-toast", &jam)] {
        let again = if_none_match(&site, uri, &etag(before)).await;
        assert_eq!(again.status, 304, "{uri} does not show porridge");
        let whole = get(&site, uri).await;
        assert_eq!(whole.status, 200);
        assert!(was_cached(&whole), "{uri} is served from the cache");
        assert_eq!(etag(&whole), etag(before), "{uri}");
        assert_eq!(whole.body, before.body, "{uri}");
    }
    let porridge_now = if_none_match(&site, "/recipes/porridge", &etag(&porridge)).await;
    assert_eq!(porridge_now.status, 200);
    assert_ne!(etag(&porridge_now), etag(&porridge));
    assert_eq!(porridge_now.texts("h1"), ["Oat porridge"]);
    // The catalog is read as a range over an index: any write renews it.
    let catalog_now = if_none_match(&site, "/", &etag(&catalog)).await;
    assert_eq!(catalog_now.status, 200);
    assert!(catalog_now.body.contains("Oat porridge"));
}

#[actix_web::test]
async fn a_new_fork_and_an_ancestors_new_title_renew_the_pages_that_show_them() {
    let recipes = kitchen();
    let site = site(&recipes);
    let toast = get(&site, "/recipes/toast").await;
    let jam = get(&site, "/recipes/jam-toast").await;
    assert!(jam.body.contains("Toast"));

    recipes
        .fork(
            &slug("toast"),
            None,
            Some(&slug("cheese-toast")),
            |c| c,
            &Change::by("cy", "cheese"),
        )
        .unwrap();
    let toast_now = if_none_match(&site, "/recipes/toast", &etag(&toast)).await;
    assert_eq!(toast_now.status, 200, "toast lists its forks");
    assert!(toast_now.body.contains("/recipes/cheese-toast"));
    let jam_now = if_none_match(&site, "/recipes/jam-toast", &etag(&jam)).await;
    assert_eq!(jam_now.status, 304, "jam toast does not list its siblings");

    edit_title(&recipes, "toast", 1, "Golden toast");
    let jam_after = if_none_match(&site, "/recipes/jam-toast", &etag(&jam)).await;
    assert_eq!(
        jam_after.status, 200,
        "jam toast's lineage names its parent"
    );
    assert!(jam_after.body.contains("Golden toast"));
}

#[actix_web::test]
async fn if_none_match_any_is_304_only_for_a_page_that_exists() {
    let site = site(&kitchen());
    let any = |uri: &'static str| {
        let site = site.clone();
        async move { if_none_match(&site, uri, "*").await }
    };
    assert_eq!(any("/recipes/toast").await.status, 304);
    assert_eq!(any("/recipes/no-such-recipe").await.status, 404);
    assert_eq!(any("/recipes/toast/versions/9").await.status, 404);
    // Kept or not, the answer is the same.
    get(&site, "/recipes/toast").await;
    assert_eq!(any("/recipes/toast").await.status, 304);
}

/// The body of `uri` asked for with `accept`, its coding, and whether it
/// came from the cache.
async fn fetch_coded(
    site: &Data<Site>,
    uri: &str,
    accept: &str,
) -> (Vec<u8>, Option<String>, bool) {
    let app = actix_web::test::init_service(forkful::app::app(site.clone())).await;
    let request = TestRequest::get()
        .uri(uri)
        .insert_header(("Accept-Encoding", accept))
        .to_request();
    let response = actix_web::test::call_service(&app, request).await;
    assert_eq!(response.status(), 200, "{uri}");
    let headers = response.headers().clone();
    assert_eq!(
        headers.get("vary").and_then(|v| v.to_str().ok()),
        // Pages differ by cookie (a cook's header); assets never do.
        Some(match uri.starts_with("/static/") {
            true => "Accept-Encoding",
            false => "Accept-Encoding, Cookie",
        }),
        "{uri}"
    );
    let coding = headers
        .get("content-encoding")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let cached = headers
        .get("server-timing")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.contains("cache;desc=hit"));
    let body = actix_web::body::to_bytes(response.into_body())
        .await
        .unwrap_or_else(|_| panic!("{uri}: body"));
    (body.to_vec(), coding, cached)
}

fn decoded(body: &[u8], coding: Option<&str>) -> String {
    let mut text = String::new();
    match coding {
        None => text = String::from_utf8(body.to_vec()).unwrap(),
        Some("br") => {
            brotli::Decompressor::new(body, 4096)
                .read_to_string(&mut text)
                .unwrap();
        }
        Some("gzip") => {
            flate2::read::GzDecoder::new(body)
                .read_to_string(&mut text)
                .unwrap();
        }
        Some(other) => panic!("unexpected coding {other}"),
    }
    text
}

#[actix_web::test]
async fn each_coding_is_made_fast_then_refined_once_and_decodes_to_the_same_page() {
    let site = site(demo());
    for uri in ["/recipes/shakshuka", "/", "/tags", "/sitemaps/1.xml"] {
        let (plain, none, _) = fetch_coded(&site, uri, "identity").await;
        assert_eq!(none, None, "{uri}");
        let browser = "gzip, deflate, br, zstd";
        // Made for one request, a page is gzipped fast, for a client that
        // takes gzip as well as brotli...
        let (first, coding, first_cached) = fetch_coded(&site, uri, browser).await;
        assert_eq!(coding.as_deref(), Some("gzip"), "{uri}: made fast");
        assert!(!first_cached, "{uri}: a coding is made on first asking");
        assert!(first.len() < plain.len() / 2, "{uri}: compressed");
        assert_eq!(decoded(&first, Some("gzip")).as_bytes(), plain, "{uri}");
        // ...and asked for again, it is kept in brotli (which wins the
        // tie), compressed at its best once.
        let (again, coding, again_cached) = fetch_coded(&site, uri, browser).await;
        assert!(again_cached, "{uri}: and kept");
        assert_eq!(coding.as_deref(), Some("br"), "{uri}: brotli wins the tie");
        assert!(again.len() < first.len(), "{uri}: refined");
        assert_eq!(decoded(&again, Some("br")).as_bytes(), plain, "{uri}");
        // A client that takes brotli alone gets it from the first.
        let (only, coding, _) = fetch_coded(&site, &format!("{uri}?only=br"), "br").await;
        assert_eq!(coding.as_deref(), Some("br"), "{uri}: brotli alone");
        assert_eq!(decoded(&only, Some("br")).as_bytes(), plain, "{uri}");
        let (third, _, third_cached) = fetch_coded(&site, uri, browser).await;
        assert!(third_cached, "{uri}");
        assert_eq!(third, again, "{uri}: the refined bytes are kept");
        let (gzip, coding, _) = fetch_coded(&site, uri, "gzip").await;
        assert_eq!(coding.as_deref(), Some("gzip"), "{uri}");
        assert_eq!(decoded(&gzip, Some("gzip")).as_bytes(), plain, "{uri}");
        let (gzip_again, _, gzip_cached) = fetch_coded(&site, uri, "gzip").await;
        assert!(gzip_cached, "{uri}: gzip kept");
        assert!(gzip_again.len() <= gzip.len(), "{uri}: gzip refined");
        assert_eq!(
            decoded(&gzip_again, Some("gzip")).as_bytes(),
            plain,
            "{uri}"
        );
    }
}

#[actix_web::test]
async fn a_page_is_compressed_at_its_best_once_when_asked_for_again() {
    let site = site(demo());
    let uri = "/recipes/shakshuka";
    let timing = |page: &Page| page.header("server-timing").unwrap_or("").to_owned();
    let browser = || {
        TestRequest::get()
            .uri(uri)
            .insert_header(("Accept-Encoding", "br"))
    };
    let made = send(&site, browser()).await;
    assert!(!timing(&made).contains("cache"), "{}", timing(&made));
    let refined = send(&site, browser()).await;
    assert!(
        timing(&refined).contains("cache;desc=hit") && timing(&refined).contains("refined"),
        "{}",
        timing(&refined)
    );
    let kept = send(&site, browser()).await;
    assert!(
        timing(&kept).contains("cache;desc=hit") && !timing(&kept).contains("refined"),
        "refined once: {}",
        timing(&kept)
    );
    assert_eq!(etag(&made), etag(&refined), "the same page");
    assert_eq!(etag(&made), etag(&kept));
    // A client's copy is current whichever bytes it got, and a 304 makes
    // nothing.
    let current = if_none_match(&site, uri, &etag(&made)).await;
    assert_eq!(current.status, 304);
}

#[actix_web::test]
async fn the_cache_holds_no_more_than_its_budget_and_none_keeps_nothing() {
    let recipes = demo();
    let budget = 96 * 1024;
    let small =
        Data::new(Site::new(recipes.clone(), "http://forkful.test").with_page_cache(budget));
    let entries = whole_catalog(&recipes.snapshot()).entries;
    assert!(entries.len() > 20);
    for entry in &entries {
        let page = get(&small, &format!("/recipes/{}", entry.slug)).await;
        assert_eq!(page.status, 200);
        assert!(small.pages().weight() <= budget);
    }
    assert!(!small.pages().is_empty());
    assert!(small.pages().len() < entries.len(), "it had to evict");

    let none = Data::new(Site::new(recipes.clone(), "http://forkful.test").with_page_cache(0));
    let first = get(&none, "/recipes/shakshuka").await;
    let second = get(&none, "/recipes/shakshuka").await;
    assert!(!was_cached(&first) && !was_cached(&second));
    assert_eq!(first.body, second.body);
    assert_eq!(etag(&first), etag(&second));
    assert!(none.pages().is_empty());
}

#[actix_web::test]
async fn parameters_a_page_does_not_read_find_the_one_page_kept() {
    let recipes = kitchen();
    let site = Data::new(Site::new(recipes, "http://forkful.test"));
    // A flood of addresses that differ only in what no page reads.
    for n in 0..300 {
        for path in ["/recipes/toast", "/", "/tags", "/recipes/toast/history"] {
            let page = get(&site, &format!("{path}?x={n}&utm_source=feed{n}")).await;
            assert_eq!(page.status, 200, "{path}");
            assert_eq!(was_cached(&page), n > 0, "{path}?x={n}");
        }
    }
    assert_eq!(site.pages().len(), 4, "one entry a page");
    // What a page does read still keys it: the order of the parameters
    // does not, and a path's own tag is not read again from the query.
    let recent = get(&site, "/?sort=recent&x=1").await;
    assert!(!was_cached(&recent));
    let again = get(&site, "/?x=2&sort=recent").await;
    assert!(was_cached(&again));
    assert_eq!(site.pages().len(), 5);
}

#[actix_web::test]
async fn a_page_that_reads_nothing_changing_keeps_its_etag_across_writes() {
    // The about page reads nothing from the store.
    let recipes = kitchen();
    let site = site(&recipes);
    let about = get(&site, "/about").await;
    edit_title(&recipes, "toast", 1, "Golden toast");
    assert_eq!(
        if_none_match(&site, "/about", &etag(&about)).await.status,
        304
    );
}

#[actix_web::test]
async fn static_assets_come_compressed_from_the_build() {
    let site = site(demo());
    let page = get(&site, "/recipes/shakshuka").await;
    let mut assets = page.attrs("link[rel=stylesheet]", "href");
    assets.extend(page.attrs("script[src]", "src"));
    assert_eq!(assets.len(), 2);
    for asset in assets {
        let (plain, none, _) = fetch_coded(&site, &asset, "identity").await;
        assert_eq!(none, None);
        for (accept, coding) in [("gzip, deflate, br, zstd", "br"), ("gzip", "gzip")] {
            let (body, got, _) = fetch_coded(&site, &asset, accept).await;
            assert_eq!(got.as_deref(), Some(coding), "{asset}");
            assert!(body.len() < plain.len(), "{asset}: {coding} is smaller");
            assert_eq!(decoded(&body, Some(coding)).as_bytes(), plain, "{asset}");
        }
    }
}

#[actix_web::test]
async fn a_forged_catalog_cursor_is_refused_without_filling_the_entity_cache() {
    let recipes = kitchen();
    let site = site(&recipes);
    assert_eq!(get(&site, "/").await.status, 200);
    let listed: Vec<u64> = whole_catalog(&recipes.snapshot())
        .entries
        .iter()
        .map(|e| e.id.to_string().parse().unwrap())
        .collect();
    let before = recipes.store().cached_entity_count();
    // Every id below the newest that is not a listed recipe: attributes,
    // transactions, ingredient and step components.
    let newest = *listed.iter().max().unwrap();
    let mut refused = 0;
    for id in (1..newest + 50).filter(|id| !listed.contains(id)) {
        let page = get(&site, &format!("/?after={id}")).await;
        assert_eq!(page.status, 400, "after={id}");
        refused += 1;
    }
    assert!(refused > 20, "{refused} forged cursors");
    assert_eq!(recipes.store().cached_entity_count(), before);
}

#[actix_web::test]
async fn search_results_are_kept_until_a_write_and_answer_304() {
    // A query asked again (a popular word) is a cache hit; a write renews
    // it, as it renews every page read from an index range.
    let recipes = kitchen();
    let site = site(&recipes);
    let first = get(&site, "/search?q=jam").await;
    assert_eq!(first.status, 200);
    assert!(first.body.contains("/recipes/jam-toast"));
    assert!(!first.body.contains("/recipes/porridge"));
    let again = get(&site, "/search?q=jam").await;
    assert!(was_cached(&again));
    assert_eq!(again.body, first.body);
    assert_eq!(
        if_none_match(&site, "/search?q=jam", &etag(&first))
            .await
            .status,
        304
    );
    // Another query is another page.
    let other = get(&site, "/search?q=porridge").await;
    assert!(!was_cached(&other));

    edit_title(&recipes, "porridge", 1, "Porridge with jam");
    // The page follows the search index's basis: until the index has the
    // write, the kept page is still that basis's answer.
    let mut renewed = None;
    for _ in 0..200 {
        let page = get(&site, "/search?q=jam").await;
        if page.body.contains("/recipes/porridge") {
            renewed = Some(page);
            break;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let renewed = renewed.expect("the write is found within 10 s");
    assert!(!was_cached(&renewed), "made again after the write");
    assert_ne!(etag(&renewed), etag(&first));
    assert!(was_cached(&get(&site, "/search?q=jam").await));
}

/// Polls `done` every 50 ms for up to `seconds`.
async fn eventually(seconds: u64, done: impl Fn() -> bool) -> bool {
    for _ in 0..seconds * 20 {
        if done() {
            return true;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    done()
}

#[cfg(target_os = "linux")]
#[actix_web::test]
async fn a_process_over_its_memory_limit_shrinks_its_caches_and_still_serves() {
    use forkful::web::memory_limit;
    let budget = 8 << 20;
    // A store of its own: the shared demo's entity cache is other tests'
    // too. (The Markdown memos are the process's: they are cut as well,
    // which changes what other tests' pages cost, not what they show.)
    let over = kitchen();
    let entity_budget = over.store().entity_cache_capacity();
    let site = Data::new(Site::new(over.clone(), "http://forkful.test").with_page_cache(budget));
    let page = get(&site, "/recipes/jam-toast").await;
    assert_eq!(page.status, 200);
    // This process holds more than a MiB whatever its caches do.
    memory_limit::keep(
        std::sync::Arc::downgrade(&site.clone().into_inner()),
        1 << 20,
    )
    .unwrap();
    assert!(
        eventually(5, || site.pages().capacity() < budget
            && over.store().entity_cache_capacity() < entity_budget)
        .await,
        "the page cache and the entity cache were cut"
    );
    assert!(site.pages().weight() <= site.pages().capacity());
    let again = get(&site, "/recipes/jam-toast").await;
    assert_eq!(again.status, 200);
    assert_eq!(again.body, page.body);
}

/// Every spelling of one page's query (leading zeros, defaults written
/// out or blank, spaces around a search) is one page in the cache: once
/// one of them is kept, the others are served from it, and asking each
/// spelling again keeps nothing more. (20,000 spellings once took a
/// server's memory from 83 to 144 MB.)
#[actix_web::test]
async fn every_spelling_of_a_query_is_one_kept_page() {
    let recipes = kitchen();
    edit_title(&recipes, "toast", 1, "Toast, buttered");
    let site = site(&recipes);
    let spellings: [&[&str]; 6] = [
        &[
            "/recipes/toast/diff?from=1&to=2",
            "/recipes/toast/diff?from=01&to=002",
            "/recipes/toast/diff?to=2&from=1&view=inline",
        ],
        &[
            "/recipes/toast",
            "/recipes/toast?servings=",
            "/recipes/toast?servings=%20&units=",
        ],
        &[
            "/recipes/toast/history?before=2",
            "/recipes/toast/history?before=002",
        ],
        &[
            "/search?q=toast",
            "/search?q=%20toast%20%20",
            "/search?q=toast&page=1",
        ],
        &["/", "/?sort=title", "/?sort=title&utm_source=x"],
        &[
            "/recipes/toast/suggestions?before=1",
            "/recipes/toast/suggestions?before=0001",
        ],
    ];
    for same in spellings {
        let first = get(&site, same[0]).await;
        assert_eq!(first.status, 200, "{}: {}", same[0], first.body);
        let kept = site.pages().len();
        for spelling in &same[1..] {
            let page = get(&site, spelling).await;
            assert_eq!(page.status, 200, "{spelling}: {}", page.body);
            assert!(
                was_cached(&page),
                "{spelling} was not {}'s kept page",
                same[0]
            );
            assert_eq!(etag(&page), etag(&first), "{spelling}");
        }
        assert_eq!(site.pages().len(), kept, "{same:?} kept more than one page");
    }
}
