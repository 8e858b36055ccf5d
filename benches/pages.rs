//! The site's headline pages, at the handler: a request in, the bytes out,
//! through the whole app (routes, middleware, the pinned read, the view),
//! and each page's store read and view render alone beside it, so the split
//! between deciding what to show and writing the bytes is visible.
//!
//! - `pages/demo`: `recipe_show` on the demo's deepest lineage (found by
//!   walking every recipe's lineage, not named) and `recipes_index`, the
//!   whole demo catalog on one page.
//! - `pages/synthetic_100k`: the same on a 100,000-recipe synthetic catalog
//!   of full recipes (summary, ingredients, steps, two tags of nine each;
//!   lineage depth 12), to show how cost grows with it.
//! - `markdown`: the Markdown pipeline alone on a 2,400-byte and a
//!   43,200-byte body, with throughput in bytes per second (`render`), and
//!   the memoised rendering pages use for a text seen before (`memoised`).
//! - `writing`: `POST /preview` of a 2,400-byte and a 43,200-byte recipe
//!   form, logged in, with throughput in bytes per second; and `edit`, a
//!   whole edit through the app (form in, durable in a temporary store,
//!   303 out).
//!
//! - `pages/*/{recipe_show,recipes_index}/{hit,miss,cold}_br`: what a
//!   browser (`Accept-Encoding: gzip, deflate, br, zstd`) gets: a page from
//!   the page cache, a page made again with the store's caches warm (read,
//!   render, brotli), and one made with every in-memory cache emptied first
//!   (store and Markdown memo; sled's page cache stays warm); and
//!   `recipe_show/compress_{Brotli,Gzip}`, the compression alone, in bytes
//!   per second. `handler` is a page made again, uncompressed.
//!
//! - `pages/*/search_{common,title,typo,prefix}/search`: a search at the
//!   domain, over the index (built from nothing first, its time printed as
//!   `search_build`): `oil`, the deepest recipe's title (asserted first),
//!   that title with a letter dropped, and its first word's first four
//!   letters as typed. A page of 20 hits with their catalog lines, texts
//!   for snippets, the match count and the tags.
//!
//! - `pages/*/search_common/handler`, `tags/handler` and `tag_page/handler`:
//!   `/search?q=oil` (a word about one recipe in eighteen holds), `/tags`,
//!   and the first page of the catalog's most used tag, made every time.
//!
//! - `merging/demo/merge/{parent_into_leaf,leaf_into_parent}`: the
//!   three-way merge of the demo's deepest leaf and its parent, both ways;
//!   `merging/demo/suggestion/{read,handler}`: the review of the leaf's
//!   suggestion to its parent (made by the bench), read alone and as a
//!   page through the app.
//!
//! Before measuring, each headline bench prints its allocations per
//! operation (a counting allocator, `common::alloc`) and the recipe page
//! its index reads per render.

mod common;

use std::hint::black_box;

use actix_web::dev::{Service, ServiceResponse};
use actix_web::rt::{System, SystemRunner};
use actix_web::test::{self, TestRequest};
use actix_web::web::Data;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use forkful::domain::scale::ScaleAsked;
use forkful::domain::{pages, CatalogQuery, Recipes, Slug};
use forkful::seed::synthetic::Shape;
use forkful::views::markdown::{render_uncached, Memos};
use forkful::web::page_cache::{Effort, Encoding};
use forkful::web::{catalog, Site};
use maud::Render;

/// One catalog to measure pages on.
struct Catalog {
    name: &'static str,
    recipes: Recipes,
    /// The ids to search for the deepest lineage (empty: the whole catalog).
    ids: Vec<forkful::store::EntityId>,
}

/// What a browser says it takes (Chrome's and Firefox's header).
const BROWSER_ENCODINGS: &str = "gzip, deflate, br, zstd";

/// A request through the app, its body read to the end.
async fn fetch<S, B>(app: &S, uri: &str) -> actix_web::web::Bytes
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    fetch_as(app, uri, None).await
}

/// `fetch`, saying which content codings the client takes.
async fn fetch_as<S, B>(app: &S, uri: &str, accept: Option<&str>) -> actix_web::web::Bytes
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    let headers: Vec<_> = accept.map(|a| ("Accept-Encoding", a)).into_iter().collect();
    fetch_with(app, uri, &headers).await
}

/// `fetch`, with `headers`.
async fn fetch_with<S, B>(app: &S, uri: &str, headers: &[(&str, &str)]) -> actix_web::web::Bytes
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    let mut request = TestRequest::get().uri(uri);
    for &header in headers {
        request = request.insert_header(header);
    }
    let response = test::call_service(app, request.to_request()).await;
    assert!(
        response.status().is_success(),
        "{uri}: {}",
        response.status()
    );
    actix_web::body::to_bytes(response.into_body())
        .await
        .unwrap_or_else(|_| panic!("{uri}: body"))
}

fn pages(c: &mut Criterion, system: &SystemRunner, catalog: &Catalog) {
    // `site` keeps no page, so its handler benches read and render every
    // time (as before the page cache); `kept` is the site as served.
    let site =
        Data::new(Site::new(catalog.recipes.clone(), "http://forkful.bench").with_page_cache(0));
    let app = system.block_on(test::init_service(forkful::app::app(site.clone())));
    let kept = Data::new(Site::new(catalog.recipes.clone(), "http://forkful.bench"));
    let kept_app = system.block_on(test::init_service(forkful::app::app(kept.clone())));
    let (deepest, depth) = common::deepest(&catalog.recipes.snapshot(), &catalog.ids);
    assert!(
        depth >= 12,
        "{}: the deepest lineage is {depth}",
        catalog.name
    );
    let slug = Slug::parse(&deepest).expect("slug");
    let show = format!("/recipes/{deepest}");
    let index_query = CatalogQuery {
        limit: forkful::web::catalog::PAGE_SIZE,
        ..CatalogQuery::default()
    };

    // What each page costs beyond time, printed before criterion's lines:
    // its size, and the index reads of one render once the store's caches
    // are warm (each page is fetched once first, as criterion's warm-up
    // would).
    let name = catalog.name;
    let show_bytes = system.block_on(fetch(&app, &show)).len();
    let index_bytes = system.block_on(fetch(&app, "/")).len();
    let view = site.snapshot();
    let model = pages::recipe_show(&view, &slug, ScaleAsked::AS_WRITTEN).expect("recipe page");
    println!(
        "pages/{name}/recipe_show: {deepest} (lineage {depth}), {show_bytes} bytes, {} index reads",
        view.reads_so_far()
    );
    let view = site.snapshot();
    let page = catalog::read(&view, &index_query).expect("catalog");
    println!(
        "pages/{name}/recipes_index: {} recipes, {index_bytes} bytes, {} index reads",
        page.entries.len(),
        view.reads_so_far()
    );
    common::report_allocations(&format!("pages/{name}/recipe_show/handler"), || {
        system.block_on(fetch(&app, &show))
    });
    common::report_allocations(&format!("pages/{name}/recipe_show/read"), || {
        pages::recipe_show(&site.snapshot(), &slug, ScaleAsked::AS_WRITTEN)
    });
    common::report_allocations(&format!("pages/{name}/recipe_show/render"), || {
        forkful::views::recipe::show(site.base_url(), site.memos(), &model)
    });
    common::report_allocations(&format!("pages/{name}/recipes_index/handler"), || {
        system.block_on(fetch(&app, "/"))
    });
    common::report_allocations(&format!("pages/{name}/recipes_index/read"), || {
        catalog::read(&site.snapshot(), &index_query)
    });
    common::report_allocations(&format!("pages/{name}/recipes_index/render"), || {
        catalog::render(&site, &index_query, &page)
    });

    let mut group = c.benchmark_group(format!("pages/{name}"));
    group.bench_function("recipe_show/handler", |b| {
        b.iter(|| system.block_on(fetch(&app, black_box(&show))))
    });
    // What a browser gets: a kept page (hit), a page made again with the
    // store's caches warm (miss: read, render, brotli), and one made with
    // every in-memory cache empty (cold: sled's own cache stays warm).
    let browser = Some(BROWSER_ENCODINGS);
    for (kind, uri) in [("recipe_show", show.as_str()), ("recipes_index", "/")] {
        system.block_on(fetch_as(&kept_app, uri, browser));
        group.bench_function(format!("{kind}/hit_br"), |b| {
            b.iter(|| system.block_on(fetch_as(&kept_app, black_box(uri), browser)))
        });
        group.bench_function(format!("{kind}/miss_br"), |b| {
            b.iter(|| system.block_on(fetch_as(&app, black_box(uri), browser)))
        });
        group.bench_function(format!("{kind}/cold_br"), |b| {
            b.iter_batched(
                || {
                    catalog.recipes.store().forget_caches();
                    site.memos().forget();
                },
                |()| system.block_on(fetch_as(&app, black_box(uri), browser)),
                criterion::BatchSize::PerIteration,
            )
        });
    }
    group.bench_function("recipe_show/read", |b| {
        b.iter(|| {
            pages::recipe_show(&site.snapshot(), black_box(&slug), ScaleAsked::AS_WRITTEN)
                .expect("read")
        })
    });
    group.bench_function("recipe_show/render", |b| {
        b.iter(|| forkful::views::recipe::show(site.base_url(), site.memos(), black_box(&model)))
    });
    group.bench_function("recipes_index/handler", |b| {
        b.iter(|| system.block_on(fetch(&app, black_box("/"))))
    });
    group.bench_function("recipes_index/read", |b| {
        b.iter(|| catalog::read(&site.snapshot(), black_box(&index_query)).expect("read"))
    });
    group.bench_function("recipes_index/render", |b| {
        b.iter(|| catalog::render(&site, &index_query, black_box(&page)))
    });
    // Pages whose work could grow with the catalog, made every time (no
    // page cache): a search for a word about one recipe in eighteen holds
    // (`oil`, from "olive oil"), every tag, and the most used tag's first
    // page (found, not named: on 100,000 recipes a fifth carry it).
    let (tag, tagged) = site
        .snapshot()
        .tags()
        .expect("tags")
        .into_iter()
        .max_by_key(|(_, n)| *n)
        .expect("a tagged catalog");
    let tag_page = format!("/tags/{tag}");
    println!("pages/{name}/tag_page: {tag_page}, {tagged} recipes");
    search(&mut group, &site, catalog, model.recipe.content.title());
    for (bench, uri) in [
        ("search_common/handler", "/search?q=oil"),
        ("tags/handler", "/tags"),
        ("tag_page/handler", tag_page.as_str()),
    ] {
        system.block_on(fetch(&app, uri));
        group.bench_function(bench, |b| {
            b.iter(|| system.block_on(fetch(&app, black_box(uri))))
        });
    }
    let html = forkful::views::recipe::show(site.base_url(), site.memos(), &model).into_string();
    group.throughput(Throughput::Bytes(html.len() as u64));
    for encoding in [Encoding::Brotli, Encoding::Gzip] {
        for effort in [Effort::Fast, Effort::Best] {
            group.bench_function(
                format!("recipe_show/compress_{encoding:?}_{effort:?}"),
                |b| b.iter(|| encoding.encode(black_box(html.as_bytes()), effort)),
            );
        }
    }
    group.finish();
}

/// Search at the domain, over the site's index: the index built from
/// nothing first (its time printed; on 100,000 recipes, the budget
/// is the import's), then a common word (`oil`), a recipe's whole title
/// (which must come first), that title with a typo, and a prefix as typed.
fn search(
    group: &mut criterion::BenchmarkGroup<criterion::measurement::WallTime>,
    site: &Site,
    catalog: &Catalog,
    title: &str,
) {
    use forkful::domain::search::SearchQuery;
    let name = catalog.name;
    if let Some(dir) = catalog
        .recipes
        .derived_dir(forkful::domain::search::DIRECTORY)
    {
        let _ = std::fs::remove_dir_all(dir);
    }
    let started = std::time::Instant::now();
    let index = site.search().expect("search index");
    let basis = catalog.recipes.snapshot().basis();
    assert!(
        index.wait_for(basis, std::time::Duration::from_secs(600)),
        "{name}: the index was not built in 10 minutes"
    );
    println!(
        "pages/{name}/search_build: the index built from nothing in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    let view = index.view(&site.snapshot()).expect("search view");
    let snapshot = view.snapshot().clone();
    let words: Vec<&str> = title.split_whitespace().collect();
    // The title's longest word of letters, one dropped from its middle.
    let long = words
        .iter()
        .filter(|w| w.chars().all(char::is_alphabetic))
        .max_by_key(|w| w.len())
        .expect("a title word");
    let at = long.len() / 2;
    let typo = title.replacen(long, &format!("{}{}", &long[..at], &long[at + 1..]), 1);
    let prefix = words[0][..words[0].len().min(4)].to_owned();
    let queries = [
        ("search_common", "oil".to_owned()),
        ("search_title", title.to_owned()),
        ("search_typo", typo),
        ("search_prefix", prefix),
    ];
    for (bench, text) in queries {
        let query = SearchQuery {
            text: text.clone(),
            ..SearchQuery::default()
        };
        let page = view.search(&snapshot, &query).expect("search");
        println!(
            "pages/{name}/{bench}: {text:?}: {} matches, first {:?}",
            page.total,
            page.hits.first().map(|h| &*h.entry.title)
        );
        if bench == "search_title" {
            assert_eq!(
                page.hits.first().map(|h| &*h.entry.title),
                Some(title),
                "{name}: a title's search finds it first"
            );
        }
        common::report_allocations(&format!("pages/{name}/{bench}/search"), || {
            view.search(&snapshot, &query)
        });
        group.bench_function(format!("{bench}/search"), |b| {
            b.iter(|| view.search(&snapshot, black_box(&query)).expect("search"))
        });
    }
}

/// Forks that talk back, on the demo's deepest lineage: the three-way
/// merge of its leaf and its parent both ways (the parent's changes
/// brought into the leaf; the leaf's suggested to the parent, as accepting
/// merges them), and the suggestion's review, made here once: its read
/// (the three versions and the merge) and its page through the app.
fn merging(c: &mut Criterion, system: &SystemRunner, catalog: &Catalog) {
    use forkful::domain::merge::merge;
    use forkful::domain::Change;
    let recipes = &catalog.recipes;
    let view = recipes.snapshot();
    let (deepest, depth) = common::deepest(&view, &catalog.ids);
    let leaf_slug = Slug::parse(&deepest).expect("slug");
    let leaf = view.recipe(&leaf_slug).expect("the leaf");
    let (parent_id, base_version) = leaf.in_step_with().expect("the leaf is a fork");
    let parent = view.recipe_by_id(parent_id).expect("its parent");
    let (_, base) = view.version(&parent.slug, base_version).expect("the base");
    println!(
        "merging/{}: {deepest} (lineage {depth}, {} ingredients, {} steps) with {} (version {base_version} of {})",
        catalog.name,
        leaf.content.ingredients().len(),
        leaf.content.steps().len(),
        parent.slug,
        parent.version_count
    );
    let mut group = c.benchmark_group(format!("merging/{}", catalog.name));
    group.bench_function("merge/parent_into_leaf", |b| {
        b.iter(|| merge(black_box(&base), &leaf.content, &parent.content))
    });
    group.bench_function("merge/leaf_into_parent", |b| {
        b.iter(|| merge(black_box(&base), &parent.content, &leaf.content))
    });
    let author = leaf.author.clone().expect("the leaf's cook");
    let (number, _) = recipes
        .suggest(
            &leaf_slug,
            leaf.newest(),
            "The bench's suggestion: every change of the leaf",
            &Change::by(&author, "suggest"),
        )
        .expect("the leaf suggests its changes");
    let site = Data::new(Site::new(recipes.clone(), "http://forkful.bench").with_page_cache(0));
    let app = system.block_on(test::init_service(forkful::app::app(site.clone())));
    let review = format!("/recipes/{}/suggestions/{number}", parent.slug);
    let review_bytes = system.block_on(fetch(&app, &review)).len();
    println!(
        "merging/{}/suggestion: {review}, {review_bytes} bytes",
        catalog.name
    );
    common::report_allocations(&format!("merging/{}/suggestion/read", catalog.name), || {
        pages::suggestion_show(&site.snapshot(), &parent.slug, number)
    });
    group.bench_function("suggestion/read", |b| {
        b.iter(|| {
            pages::suggestion_show(&site.snapshot(), black_box(&parent.slug), number)
                .expect("the review")
        })
    });
    group.bench_function("suggestion/handler", |b| {
        b.iter(|| system.block_on(fetch(&app, black_box(&review))))
    });
    // A recipe sent 400 suggestions (from 400 forks): its list's page
    // made afresh (the page cache is off), whatever the number.
    for i in 0..SUGGESTIONS_SENT {
        let cook = format!("bench-cook-{i}");
        let (fork, _) = recipes
            .fork(
                &parent.slug,
                None,
                None,
                |mut content| {
                    content.notes = Some(format!("Variation {i}."));
                    content
                },
                &Change::by(&cook, "fork"),
            )
            .expect("a fork");
        recipes
            .suggest(
                &fork,
                forkful::domain::VersionNumber::FIRST,
                "A variation",
                &Change::by(&cook, "suggest"),
            )
            .expect("its suggestion");
    }
    let list = format!("/recipes/{}/suggestions", parent.slug);
    let list_bytes = system.block_on(fetch(&app, &list)).len();
    println!(
        "merging/{}/suggestions_list: {list}, {SUGGESTIONS_SENT} suggestions, {list_bytes} bytes",
        catalog.name
    );
    group.bench_function("suggestions_list/handler", |b| {
        b.iter(|| system.block_on(fetch(&app, black_box(&list))))
    });
    group.finish();
}

/// Suggestions the merging bench's recipe is sent, for its list's page.
const SUGGESTIONS_SENT: usize = 400;

/// Recipe Markdown as steps and notes are written: a paragraph with
/// emphasis, a link, a short list and inline code.
const MARKDOWN_UNIT: &str = "Whisk the **eggs** with the *buttermilk* until smooth, \
then fold in the flour; see [the notes](/about).\n\n\
- rest the batter 10 minutes\n- heat the pan to medium\n\n\
Cook until bubbles `pop`, flip once.\n\n";

/// `bytes` of Markdown: the unit repeated, the last one cut short (the
/// unit is ASCII, so any cut is a character boundary).
fn markdown_body(bytes: usize) -> String {
    let mut body = MARKDOWN_UNIT.repeat(bytes / MARKDOWN_UNIT.len() + 1);
    body.truncate(bytes);
    body
}

fn markdown(c: &mut Criterion) {
    let mut group = c.benchmark_group("markdown");
    for bytes in [2_400, 43_200] {
        let body = markdown_body(bytes);
        assert_eq!(body.len(), bytes);
        common::report_allocations(&format!("markdown/render/{bytes}"), || {
            render_uncached(&body)
        });
        group.throughput(Throughput::Bytes(bytes as u64));
        group.bench_with_input(BenchmarkId::new("render", bytes), &body, |b, body| {
            b.iter(|| render_uncached(black_box(body)))
        });
        let memos = Memos::default();
        group.bench_with_input(BenchmarkId::new("memoised", bytes), &body, |b, body| {
            b.iter(|| memos.markdown(black_box(body)).render())
        });
    }
    group.finish();
}

/// A form posted through the app as a logged-in browser posts it; the
/// response's status.
async fn post<S, B>(app: &S, uri: &str, session: &str, form: &[(&str, &str)]) -> u16
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    let request = TestRequest::post()
        .uri(uri)
        .insert_header(("Origin", "http://forkful.bench"))
        .cookie(actix_web::cookie::Cookie::new(
            "forkful_session",
            session.to_owned(),
        ))
        .set_form(form)
        .to_request();
    let response = test::call_service(app, request).await;
    let status = response.status().as_u16();
    let _ = actix_web::body::to_bytes(response.into_body()).await;
    status
}

/// Writing over the web: the live preview of a recipe form in bytes per
/// second, and a whole edit (form in, durable, redirect out).
fn writing(c: &mut Criterion, system: &SystemRunner) {
    use forkful::domain::accounts::{form_token, mask_token};
    use forkful::domain::{Accounts, Slug};
    let recipes = Recipes::temporary().expect("store");
    let site = Data::new(Site::new(recipes.clone(), "http://forkful.bench"));
    let app = system.block_on(test::init_service(forkful::app::app(site.clone())));
    let accounts = Accounts::open(&recipes).expect("accounts");
    let ann = Slug::parse("ann").expect("handle");
    accounts
        .sign_up(&ann, "Ann", "a long bench password")
        .expect("sign up");
    let (_, session) = accounts
        .log_in(&ann, "a long bench password")
        .expect("log in");
    // Masked, as a page carries it: the bare token is refused.
    let (session, token) = (
        session.token.clone(),
        mask_token(&form_token(&session.token)),
    );
    let mut group = c.benchmark_group("writing");
    for bytes in [2_400, 43_200] {
        // A recipe of `bytes` bytes of fields, mostly Markdown: a quarter
        // in steps (each paragraph one, under the 200-step limit), the rest
        // in the notes.
        let steps = markdown_body(bytes / 4);
        let notes = markdown_body(bytes - steps.len() - 120);
        let form = [
            ("csrf", token.as_str()),
            ("title", "Bench Dal"),
            (
                "ingredients",
                "1 cup red lentils\n3 cups water\n1 tsp turmeric",
            ),
            ("steps", steps.as_str()),
            ("notes", notes.as_str()),
            ("note", "bench"),
        ];
        let sent: usize = form.iter().map(|(n, v)| n.len() + v.len() + 2).sum();
        assert_eq!(
            system.block_on(post(&app, "/preview", &session, &form)),
            200
        );
        group.throughput(Throughput::Bytes(sent as u64));
        group.bench_with_input(BenchmarkId::new("preview", bytes), &form, |b, form| {
            b.iter(|| system.block_on(post(&app, "/preview", &session, black_box(form))))
        });
    }
    let mut based_on = 1u64;
    let create = [
        ("csrf", token.as_str()),
        ("title", "Bench Dal"),
        ("slug", "bench-dal"),
        ("ingredients", "1 cup red lentils"),
        ("note", "first"),
    ];
    assert_eq!(
        system.block_on(post(&app, "/recipes/new", &session, &create)),
        303
    );
    group.throughput(Throughput::Elements(1));
    group.bench_function("edit", |b| {
        b.iter(|| {
            let version = based_on.to_string();
            let water = format!("{based_on} cups water");
            let ingredients = format!("1 cup red lentils\n{water}");
            let form = [
                ("csrf", token.as_str()),
                ("based_on", version.as_str()),
                ("title", "Bench Dal"),
                ("ingredients", ingredients.as_str()),
                ("note", "more water"),
            ];
            let status = system.block_on(post(&app, "/recipes/bench-dal/edit", &session, &form));
            assert_eq!(status, 303, "edit of version {based_on}");
            based_on += 1;
        })
    });
    group.finish();
}

/// A GET through the app with `accept` as its Accept header.
async fn fetch_accepting<S, B>(app: &S, uri: &str, accept: &str) -> actix_web::web::Bytes
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    fetch_with(app, uri, &[("Accept", accept)]).await
}

/// Issue 54: what federation costs. The recipe page as a browser asks for
/// it (its Accept header looked at, a `Vary: Accept` added) beside its
/// ActivityStreams document at the same address and the actor document,
/// made each time (no page kept); and the checks of a signed `Create`
/// received (its digest, its signature's form and RSA verification, its
/// JSON), the key already fetched.
fn federation(c: &mut Criterion, system: &SystemRunner, catalog: &Catalog) {
    use forkful::domain::federation::{KeyPair, PublicKey};
    use forkful::federation::signature::{self, Request, Signature};

    let site =
        Data::new(Site::new(catalog.recipes.clone(), "http://forkful.bench").with_page_cache(0));
    let app = system.block_on(test::init_service(forkful::app::app(site.clone())));
    let show = "/recipes/buttermilk-pancakes";
    let cook = "/cooks/maya";
    let browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    let activity = "application/activity+json";
    // The cook's key is made on the first fetch of her actor, not measured.
    system.block_on(fetch_accepting(&app, cook, activity));

    let key = KeyPair::generate().expect("a key pair");
    let public = PublicKey::from_pem(key.public_pem()).expect("its public key");
    let body = serde_json::json!({
        "@context": "https://www.w3.org/ns/activitystreams",
        "id": "https://b.example/recipes/dal/versions/1#create",
        "type": "Create",
        "actor": "https://b.example/cooks/ben",
        "object": {"id": "https://b.example/recipes/dal", "type": "Article", "name": "Dal"},
    })
    .to_string()
    .into_bytes();
    let url = url::Url::parse("http://forkful.bench/inbox").expect("an address");
    let headers: Vec<(String, String)> = signature::sign(
        &key,
        "https://b.example/cooks/ben#main-key",
        "POST",
        &url,
        Some(&body),
        std::time::SystemTime::now(),
    )
    .into_iter()
    .map(|(name, value)| (name.to_owned(), value))
    .collect();
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };

    let mut group = c.benchmark_group(format!("federation/{}", catalog.name));
    group.bench_function("recipe_show/browser", |b| {
        b.iter(|| system.block_on(fetch_accepting(&app, black_box(show), browser)))
    });
    group.bench_function("recipe_show/document", |b| {
        b.iter(|| system.block_on(fetch_accepting(&app, black_box(show), activity)))
    });
    group.bench_function("actor/document", |b| {
        b.iter(|| system.block_on(fetch_accepting(&app, black_box(cook), activity)))
    });
    group.bench_function("receive_create/check", |b| {
        b.iter(|| {
            let request = Request {
                method: "POST",
                target: "/inbox",
                headers: &headers,
            };
            signature::check_digest(header("digest"), black_box(&body)).expect("digest");
            let signed = Signature::parse(header("signature").expect("signed")).expect("parsed");
            signed
                .verify(&request, true, &public, std::time::SystemTime::now())
                .expect("verified");
            serde_json::from_slice::<serde_json::Value>(&body).expect("JSON")
        })
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    let system = System::new();
    writing(c, &system);
    let demo = Catalog {
        name: "demo",
        recipes: common::demo(),
        ids: Vec::new(),
    };
    pages(c, &system, &demo);
    federation(c, &system, &demo);
    // After the demo's pages: it adds a suggestion to the demo's store.
    merging(c, &system, &demo);
    let (recipes, ids) = common::stored_catalog(
        "synthetic-100k",
        Shape {
            recipes: 100_000,
            depth: 12,
            fanout: 3,
            rng: 1,
            skeleton: false,
        },
    );
    let synthetic = Catalog {
        name: "synthetic_100k",
        recipes,
        ids,
    };
    pages(c, &system, &synthetic);
    markdown(c);
}

criterion_group! {
    name = pages_benches;
    config = common::criterion();
    targets = benches
}
criterion_main!(pages_benches);
