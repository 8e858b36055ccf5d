//! The header knows who is asking (issue 31): a visitor is offered "Log in"
//! and "Sign up", a logged-in cook sees "Write a recipe" and their name on
//! every page, and the one page kept for visitors is never given to a cook
//! nor a cook's to anyone else.

use std::io::Read as _;

use actix_web::web::Data;
use forkful::domain::{Change, Recipes, Slug};
use forkful::web::Site;

use crate::helpers::{get, Page};
use crate::writing::{new_site, Browser};

const PASSWORD: &str = "correct horse battery";

/// `handle`, called `name`, signed up in a browser of their own.
async fn cook(site: &Data<Site>, handle: &str, name: &str) -> Browser {
    let mut browser = Browser::new(site);
    let form = browser.get("/signup").await;
    let done = browser
        .submit(
            &form,
            "/signup",
            &[("handle", handle), ("name", name), ("password", PASSWORD)],
        )
        .await;
    assert_eq!(done.status, 303, "{}", done.body);
    browser
}

/// A site with one recipe, and Ann and Ben signed up.
async fn kitchen() -> (Recipes, Data<Site>, Browser, Browser) {
    let (recipes, site) = new_site();
    let ann = cook(&site, "ann", "Ann Example").await;
    let ben = cook(&site, "ben", "Ben <Cook> & Co").await;
    let slug = Slug::parse("toast").unwrap();
    let content = forkful::domain::ContentDraft {
        title: "Toast".into(),
        ingredients: vec!["1 slice bread".into()],
        steps: vec![forkful::domain::Step {
            section: None,
            text: "Toast it.".into(),
        }],
        ..Default::default()
    };
    recipes
        .create(&slug, content, &Change::by("ann", "first"))
        .unwrap();
    (recipes, site, ann, ben)
}

/// The header's links: their texts and where they go.
fn header_links(page: &Page) -> Vec<(String, String)> {
    let html = page.html();
    let css = scraper::Selector::parse("header.site-header nav a").unwrap();
    html.select(&css)
        .map(|a| {
            let text = a.text().collect::<String>();
            (
                text.trim().to_owned(),
                a.attr("href").unwrap_or("").to_owned(),
            )
        })
        .collect()
}

fn visitors_links() -> Vec<(String, String)> {
    links(&[
        ("Recipes", "/"),
        ("Tags", "/tags"),
        ("About", "/about"),
        ("Log in", "/login"),
        ("Sign up", "/signup"),
    ])
}

fn cooks_links(handle: &str, name: &str) -> Vec<(String, String)> {
    let page = format!("/cooks/{handle}");
    links(&[
        ("Recipes", "/"),
        ("Tags", "/tags"),
        ("About", "/about"),
        ("Write a recipe", "/recipes/new"),
        (name, &page),
        ("Account", "/account"),
    ])
}

fn links(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(text, href)| (text.to_string(), href.to_string()))
        .collect()
}

fn header<'a>(page: &'a Page, name: &str) -> &'a str {
    page.header(name)
        .unwrap_or_else(|| panic!("no {name}: {:?}", page.headers))
}

#[actix_web::test]
async fn a_visitor_is_offered_log_in_and_a_cook_sees_their_name_on_every_page() {
    let (_, site, mut ann, mut ben) = kitchen().await;
    let pages = [
        "/",
        "/recipes/toast",
        "/recipes/toast/history",
        "/tags",
        "/about",
        "/search?q=toast",
        "/cooks/ann",
    ];
    for path in pages {
        let visitor = get(&site, path).await;
        assert_eq!(visitor.status, 200, "{path}");
        assert_eq!(header_links(&visitor), visitors_links(), "{path}");
        assert_eq!(header(&visitor, "cache-control"), "no-cache", "{path}");
        let theirs = ann.get(path).await;
        assert_eq!(theirs.status, 200, "{path}");
        assert_eq!(
            header_links(&theirs),
            cooks_links("ann", "Ann Example"),
            "{path}"
        );
        assert_eq!(
            header(&theirs, "cache-control"),
            "private, no-cache",
            "{path}"
        );
        // Apart from the header, the page is the visitors' own.
        assert_eq!(
            without_header(&theirs.body),
            without_header(&visitor.body),
            "{path}"
        );
    }
    // A name is text, escaped as any is.
    let bens = ben.get("/recipes/toast").await;
    assert_eq!(header_links(&bens), cooks_links("ben", "Ben <Cook> & Co"));
    // Pages made for one visitor (forms, the account) say who too.
    for path in ["/account", "/recipes/new", "/recipes/toast/edit", "/import"] {
        let theirs = ann.get(path).await;
        assert_eq!(theirs.status, 200, "{path}");
        assert_eq!(
            header_links(&theirs),
            cooks_links("ann", "Ann Example"),
            "{path}"
        );
    }
    for path in ["/signup", "/login"] {
        assert_eq!(header_links(&get(&site, path).await), visitors_links());
    }
    // Error pages too: a page that is not there, a version that is not.
    for path in ["/recipes/no-such-recipe", "/recipes/toast/versions/9"] {
        let missing = ann.get(path).await;
        assert_eq!(missing.status, 404, "{path}");
        assert_eq!(
            header_links(&missing),
            cooks_links("ann", "Ann Example"),
            "{path}"
        );
        assert_eq!(header_links(&get(&site, path).await), visitors_links());
    }
    // Logged out, Ann is a visitor again, on the same kept page.
    let account = ann.get("/account").await;
    assert_eq!(ann.submit(&account, "/logout", &[]).await.status, 303);
    assert_eq!(
        header_links(&ann.get("/recipes/toast").await),
        visitors_links()
    );
}

/// The page with the header's links taken out.
fn without_header(page: &str) -> String {
    let start = page.find("<!--who-->").expect("a header's links");
    let end = page.find("<!--/who-->").expect("their end");
    format!("{}{}", &page[..start], &page[end..])
}

fn brotli_text(page: &Page) -> String {
    assert_eq!(page.header("content-encoding"), Some("br"));
    let mut text = String::new();
    brotli::Decompressor::new(&page.raw[..], 4096)
        .read_to_string(&mut text)
        .unwrap();
    text
}

/// The same page for a visitor, Ann, a visitor, Ben and Ann again, each
/// asking in brotli and with the others' ETags: each gets their own header,
/// and the cooks' answers come from the one page kept for visitors.
#[actix_web::test]
async fn the_page_kept_for_visitors_never_goes_to_a_cook_nor_a_cooks_to_anyone() {
    let (_, site, mut ann, mut ben) = kitchen().await;
    let path = "/recipes/toast";
    let br = ("Accept-Encoding", "br".to_owned());
    let visitor = crate::helpers::send(
        &site,
        actix_web::test::TestRequest::get()
            .uri(path)
            .insert_header(("Accept-Encoding", "br")),
    )
    .await;
    let visitor_text = brotli_text(&visitor);
    let visitor_tag = header(&visitor, "etag").to_owned();
    assert!(visitor_text.contains(">Log in</a>"));

    let anns = ann.send_with(path, br.clone()).await;
    let anns_text = brotli_text(&anns);
    assert!(
        header(&anns, "server-timing").contains("cache;desc=hit"),
        "Ann's page is the kept one: {:?}",
        anns.headers
    );
    assert!(anns_text.contains("Ann Example") && !anns_text.contains(">Log in</a>"));
    assert_eq!(header(&anns, "cache-control"), "private, no-cache");
    assert!(header(&anns, "vary").contains("Cookie"));
    let anns_tag = header(&anns, "etag").to_owned();
    assert_ne!(anns_tag, visitor_tag);

    // The visitor's page, kept, is still the visitor's.
    let again = crate::helpers::send(
        &site,
        actix_web::test::TestRequest::get()
            .uri(path)
            .insert_header(("Accept-Encoding", "br")),
    )
    .await;
    let again_text = brotli_text(&again);
    assert!(again_text.contains(">Log in</a>") && !again_text.contains("Ann Example"));
    assert_eq!(header(&again, "etag"), visitor_tag);

    let bens = ben.send_with(path, br.clone()).await;
    let bens_text = brotli_text(&bens);
    assert!(bens_text.contains("Ben &lt;Cook&gt; &amp; Co") && !bens_text.contains("Ann Example"));
    assert_ne!(header(&bens, "etag"), anns_tag);

    // A browser that had the visitor's page before logging in gets Ann's,
    // not a 304; Ann's own ETag is a 304; a visitor with Ann's ETag (a
    // browser she logged out of) gets the visitor's page.
    let had_visitors = ann
        .send_with(path, ("If-None-Match", visitor_tag.clone()))
        .await;
    assert_eq!(had_visitors.status, 200);
    assert!(had_visitors.body.contains("Ann Example"));
    let has_hers = ann
        .send_with(path, ("If-None-Match", anns_tag.clone()))
        .await;
    assert_eq!(has_hers.status, 304);
    assert_eq!(header(&has_hers, "etag"), anns_tag);
    assert_eq!(header(&has_hers, "cache-control"), "private, no-cache");
    let logged_out = crate::helpers::send(
        &site,
        actix_web::test::TestRequest::get()
            .uri(path)
            .insert_header(("If-None-Match", anns_tag.as_str())),
    )
    .await;
    assert_eq!(logged_out.status, 200);
    assert!(logged_out.body.contains(">Log in</a>"));
}

/// "Log in" is the same link on every page; the login form goes back to
/// the page of this site the browser came from, never to another site's.
#[actix_web::test]
async fn logging_in_from_the_header_comes_back_to_the_page_it_left() {
    let (_, site) = new_site();
    let next = |page: &Page| page.attrs("form[action=\"/login\"] input[name=\"next\"]", "value");
    let mut visitor = Browser::new(&site);
    let from = |referer: &str| ("Referer", referer.to_owned());
    let came = visitor
        .send_with(
            "/login",
            from("http://forkful.test/recipes/toast?servings=8"),
        )
        .await;
    assert_eq!(next(&came), ["/recipes/toast?servings=8"]);
    for elsewhere in [
        "http://elsewhere.test/recipes/toast",
        "http://forkful.test.elsewhere.test/x",
        "http://forkful.test/signup",
    ] {
        let page = visitor.send_with("/login", from(elsewhere)).await;
        assert_eq!(next(&page), ["/"], "{elsewhere}");
    }
    // An address given says where to go, whatever the Referer.
    let given = visitor
        .send_with(
            "/login?next=/tags",
            from("http://forkful.test/recipes/toast"),
        )
        .await;
    assert_eq!(next(&given), ["/tags"]);
}
