//! Bringing recipes in from other sites: pages in the shapes the common
//! recipe plugins publish, forkful's own pages, the lineage that starts at
//! the source, and fetching that never reaches a private address.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use forkful::domain::{Change, ContentDraft, Minutes, Recipes, Slug, Step, Yield};
use forkful::import::{self, FetchError, Fetcher};

use crate::helpers::{get, site};
use crate::writing::{new_site, sign_up, site_fetching, Browser};

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/import/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn steps(texts: &[(Option<&str>, &str)]) -> Vec<Step> {
    texts
        .iter()
        .map(|(section, text)| Step {
            section: section.map(str::to_owned),
            text: (*text).to_owned(),
        })
        .collect()
}

fn lines(texts: &[&str]) -> Vec<String> {
    texts.iter().map(|t| (*t).to_owned()).collect()
}

fn minutes(n: i64) -> Option<Minutes> {
    Some(Minutes::new(n).unwrap())
}

#[test]
fn a_wp_recipe_maker_page_is_read_with_its_sections_times_and_yield() {
    let url = "https://spicetrail.example/chana-masala/";
    let imported = import::from_html(&fixture("wprm.html"), url).unwrap();
    let c = &imported.content;
    assert_eq!(c.title(), "Easy Chana Masala");
    assert_eq!(
        c.summary(),
        Some("A weeknight chickpea curry & a family favourite.")
    );
    assert_eq!(
        c.recipe_yield(),
        &Yield {
            servings: Some(4),
            text: Some("4 servings".into())
        }
    );
    assert_eq!(
        (c.prep(), c.cook(), c.total()),
        (minutes(10), minutes(25), minutes(35))
    );
    assert_eq!(c.ingredients().len(), 5);
    assert_eq!(c.ingredients()[3], "2 x 400 g tins chickpeas, drained");
    assert_eq!(
        c.steps(),
        steps(&[
            (Some("The base"), "Fry the onion in the oil until golden."),
            (Some("The base"), "Add the garlic and cook for a minute."),
            (
                Some("The curry"),
                "Add the chickpeas and garam masala; simmer for 15 minutes."
            ),
        ])
    );
    assert_eq!(c.tags(), lines(&["chickpeas", "curry", "vegan"]));
    assert_eq!(c.cuisine(), Some("Indian"));
    assert_eq!(c.category(), Some("Main Course"));
    assert_eq!(c.language(), Some("English"), "a Language, by name");
    assert_eq!(
        c.image(),
        Some("https://spicetrail.example/wp-content/uploads/chana-1200x1200.jpg")
    );
    assert_eq!(imported.source.name, "Spice Trail Kitchen");
    assert_eq!(imported.source.url, url);
}

#[test]
fn a_yoast_graph_is_searched_for_its_recipe() {
    let url = "https://bakingshed.example/lemon-drizzle/";
    let imported = import::from_html(&fixture("yoast.html"), url).unwrap();
    let c = &imported.content;
    assert_eq!(c.title(), "Lemon Drizzle Cake");
    assert_eq!(c.summary(), Some("Sharp, sticky, and very easy."));
    assert_eq!(c.recipe_yield().servings, Some(8));
    assert_eq!((c.prep(), c.cook()), (minutes(15), minutes(45)));
    assert_eq!(c.ingredients().len(), 6);
    // One string of instructions: a step a line.
    assert_eq!(c.steps().len(), 4);
    assert_eq!(c.steps()[0].text, "Heat the oven to 180C.");
    assert_eq!(c.tags(), lines(&["baking", "lemon"]));
    // A relative ImageObject URL, made absolute.
    assert_eq!(
        c.image(),
        Some("https://bakingshed.example/wp-content/uploads/drizzle.jpg")
    );
    // The WebSite of the graph names the site.
    assert_eq!(imported.source.name, "The Baking Shed");
}

#[test]
fn a_page_with_only_microdata_is_read() {
    let url = "https://oldfamily.example/recipes/pancakes.html";
    let imported = import::from_html(&fixture("microdata.html"), url).unwrap();
    let c = &imported.content;
    assert_eq!(c.title(), "Grandma's Pancakes");
    assert_eq!(
        c.ingredients(),
        lines(&[
            "200 g plain flour",
            "2 eggs",
            "500 ml milk",
            "a pinch of salt"
        ])
    );
    assert_eq!(c.steps().len(), 3);
    assert_eq!(c.steps()[1].text, "Rest it for 10 minutes.");
    assert_eq!(c.recipe_yield().servings, Some(4));
    assert_eq!((c.prep(), c.cook()), (minutes(5), minutes(20)));
    assert_eq!(c.tags(), lines(&["breakfast", "pancakes"]));
    assert_eq!(
        c.image(),
        Some("https://oldfamily.example/recipes/images/pancakes.jpg")
    );
    // The author's name is the author's, not the recipe's.
    assert_eq!(imported.source.name, "Old Family Cookbook");
}

#[test]
fn a_source_address_too_long_to_export_is_refused() {
    let url = format!("https://x.example/{}", "a".repeat(import::MAX_SOURCE_URL));
    assert!(matches!(
        import::from_html(&fixture("wprm.html"), &url),
        Err(import::ImportError::Invalid(_))
    ));
}

#[test]
fn a_page_without_a_recipe_says_so() {
    for html in [fixture("no-recipe.html"), String::new(), "<html>".into()] {
        assert_eq!(
            import::from_html(&html, "https://x.example/").unwrap_err(),
            import::ImportError::NoRecipe
        );
    }
    // Broken JSON-LD is skipped, not fatal: microdata still counts.
    let broken = fixture("microdata.html").replace(
        "<head>",
        "<head><script type=\"application/ld+json\">{not json</script>",
    );
    assert!(import::from_html(&broken, "https://x.example/").is_ok());
}

#[actix_web::test]
async fn importing_a_forkful_page_gives_back_the_same_recipe() {
    let recipes = Recipes::temporary().unwrap();
    let content = ContentDraft {
        title: "Weeknight Dal".into(),
        summary: Some("Red lentils, quick.".into()),
        recipe_yield: Yield {
            servings: Some(4),
            text: Some("4 bowls".into()),
        },
        prep: minutes(10),
        cook: minutes(25),
        total: minutes(35),
        ingredients: lines(&["1 cup red lentils", "3 cups water", "1 tsp turmeric"]),
        steps: steps(&[
            (None, "Rinse the lentils."),
            (Some("To cook"), "Simmer with the water and turmeric."),
            (Some("To serve"), "Salt to taste."),
        ]),
        notes: None,
        tags: lines(&["quick", "vegan"]),
        cuisine: Some("Indian".into()),
        category: Some("Main".into()),
        language: Some("English".into()),
        image: Some("https://pictures.example/dal.jpg".into()),
        ..ContentDraft::default()
    };
    let slug = Slug::parse("weeknight-dal").unwrap();
    recipes
        .create(&slug, content.clone(), &Change::by("ann", "first"))
        .unwrap();
    let page = get(&site(&recipes), "/recipes/weeknight-dal").await;
    let url = "http://forkful.test/recipes/weeknight-dal";
    let imported = import::from_html(&page.body, url).unwrap();
    assert_eq!(imported.content, content.normalized().unwrap());
    assert_eq!(imported.source.url, url);
}

/// A server on 127.0.0.1 that answers each path with its page: `(status,
/// content type or redirect target, body)`, one connection a request.
fn serve<B: Into<Vec<u8>>>(pages: Vec<(&'static str, u16, &str, B)>) -> SocketAddr {
    serve_counted(pages).0
}

/// `serve`, and how many requests it has answered.
pub(crate) fn serve_counted<B: Into<Vec<u8>>>(
    pages: Vec<(&'static str, u16, &str, B)>,
) -> (SocketAddr, Arc<AtomicUsize>) {
    let pages: Vec<(&'static str, u16, String, Vec<u8>)> = pages
        .into_iter()
        .map(|(path, status, kind, body)| (path, status, kind.to_owned(), body.into()))
        .collect();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let answered = Arc::new(AtomicUsize::new(0));
    let counter = answered.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request = String::new();
            let _ = reader.read_line(&mut request);
            // The rest of the head, unread.
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) <= 2 {
                    break;
                }
            }
            let path = request.split(' ').nth(1).unwrap_or("/").to_owned();
            let (status, extra, body) = match pages.iter().find(|(p, ..)| *p == path) {
                Some((_, status @ 300..=399, to, _)) => {
                    (*status, format!("Location: {to}\r\n"), Vec::new())
                }
                Some((_, status, kind, body)) => {
                    (*status, format!("Content-Type: {kind}\r\n"), body.clone())
                }
                None => (404, "Content-Type: text/plain\r\n".into(), b"no".to_vec()),
            };
            // Counted before it is answered: once the answer is read, so
            // is the count.
            counter.fetch_add(1, Ordering::SeqCst);
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(&body);
        }
    });
    (addr, answered)
}

#[test]
fn fetching_refuses_private_addresses_unless_allowed_and_on_every_redirect() {
    let other = serve(vec![("/dal", 200, "text/html", fixture("wprm.html"))]);
    let huge = "x".repeat(import::MAX_PAGE_BYTES as usize + 10);
    let addr = serve(vec![
        (
            "/dal",
            200,
            "text/html; charset=utf-8",
            fixture("wprm.html"),
        ),
        ("/moved", 301, "/dal", String::new()),
        ("/loop", 302, "/loop", String::new()),
        ("/huge", 200, "text/html", huge),
        ("/json", 200, "application/json", "{}".into()),
    ]);
    let base = format!("http://{addr}");
    // By default: not this machine, nor a port other than the web's.
    assert_eq!(
        Fetcher::public_only()
            .fetch("http://127.0.0.1/dal")
            .unwrap_err(),
        FetchError::Private("127.0.0.1".into())
    );
    assert_eq!(
        Fetcher::public_only()
            .fetch(&format!("{base}/dal"))
            .unwrap_err(),
        FetchError::Port(addr.port())
    );
    // Allowed (as tests start the server), it fetches, following redirects.
    let fetcher = Fetcher::allowing_private();
    let (url, html) = fetcher.fetch(&format!("{base}/moved")).unwrap();
    assert_eq!(url, format!("{base}/dal"));
    assert!(import::from_html(&html, &url).is_ok());
    assert_eq!(
        fetcher.fetch(&format!("{base}/loop")).unwrap_err(),
        FetchError::TooManyRedirects
    );
    assert_eq!(
        fetcher.fetch(&format!("{base}/huge")).unwrap_err(),
        FetchError::TooLarge
    );
    assert_eq!(
        fetcher.fetch(&format!("{base}/json")).unwrap_err(),
        FetchError::NotHtml("application/json".into())
    );
    assert_eq!(
        fetcher.fetch(&format!("{base}/missing")).unwrap_err(),
        FetchError::Status(404)
    );
    // A server allowed by itself cannot send the fetch on to another
    // private address, nor to a port other than the web's (or its own):
    // each redirect is checked again.
    let one = Fetcher::public_and(addr);
    assert!(one.fetch(&format!("{base}/dal")).is_ok());
    let elsewhere = format!("http://{other}/dal");
    let hop = serve(vec![
        ("/private", 302, "http://127.0.0.1/dal", String::new()),
        ("/port", 302, elsewhere.as_str(), String::new()),
    ]);
    for (path, refused) in [
        ("/private", FetchError::Private("127.0.0.1".into())),
        ("/port", FetchError::Port(other.port())),
    ] {
        assert_eq!(
            Fetcher::public_and(hop)
                .fetch(&format!("http://{hop}{path}"))
                .unwrap_err(),
            refused
        );
    }
}

/// However a fetch fails to reach a page (the port closed, the connection
/// dropped at once, something that is not HTTP answering), the person is
/// told only that it could not be fetched: the difference would tell them
/// which ports of a host are open. (A site that never answers says the
/// same: `import::fetch::tests::a_site_that_never_answers_could_not_be_fetched`.)
#[test]
fn a_fetch_that_reaches_no_page_says_only_that_it_could_not_fetch() {
    let closed = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let answering = |answer: &'static [u8]| {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let _ = stream.write_all(answer);
            }
        });
        addr
    };
    let dropped = answering(b"");
    let ssh = answering(b"SSH-2.0-OpenSSH_9.6\r\n");
    let fetcher = Fetcher::allowing_private();
    for addr in [closed, dropped, ssh] {
        let error = fetcher.fetch(&format!("http://{addr}/")).unwrap_err();
        assert_eq!(error.to_string(), "could not fetch 127.0.0.1", "{addr}");
    }
}

/// The named fields a form shows that are not hidden (the text a cook
/// sees and could change), with what they hold: `submit` adds the hidden.
fn shown_fields(page: &crate::helpers::Page, action: &str) -> Vec<(String, String)> {
    let html = scraper::Html::parse_document(&page.body);
    let select = |css: &str| scraper::Selector::parse(css).unwrap();
    let form = html
        .select(&select(&format!("form[action=\"{action}\"]")))
        .next()
        .unwrap_or_else(|| panic!("a form posting to {action}:\n{}", page.body));
    let mut fields = Vec::new();
    for input in form.select(&select("input[name]")) {
        let e = input.value();
        if matches!(
            e.attr("type"),
            Some("hidden" | "file" | "checkbox" | "submit")
        ) {
            continue;
        }
        let value = e.attr("value").unwrap_or("").to_owned();
        fields.push((e.attr("name").unwrap().to_owned(), value));
    }
    for area in form.select(&select("textarea[name]")) {
        let name = area.value().attr("name").unwrap().to_owned();
        fields.push((name, area.text().collect()));
    }
    for choice in form.select(&select("select[name]")) {
        let name = choice.value().attr("name").unwrap().to_owned();
        let chosen = choice
            .select(&select("option[selected]"))
            .next()
            .and_then(|o| o.value().attr("value"))
            .unwrap_or("")
            .to_owned();
        fields.push((name, chosen));
    }
    fields
}

/// The recipe an import shows, brought in as the cook sees it, with
/// `changes` typed over it: what "Bring it in" sends.
pub(crate) async fn bring_in(
    ann: &mut Browser,
    preview: &crate::helpers::Page,
    changes: &[(&str, &str)],
) -> crate::helpers::Page {
    let shown = shown_fields(preview, "/import/save");
    let mut fields: Vec<(&str, &str)> = shown
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .filter(|(n, _)| !changes.iter().any(|(c, _)| c == n))
        .collect();
    fields.extend_from_slice(changes);
    ann.submit(preview, "/import/save", &fields).await
}

#[actix_web::test]
async fn a_cook_brings_in_a_recipe_whose_lineage_starts_at_its_source() {
    let (recipes, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let form = ann.get("/import").await;
    assert_eq!(form.status, 200);
    // Pasted, with the page's own canonical address.
    let page_html = fixture("wprm.html");
    let pasted = [("url", ""), ("html", page_html.as_str())];
    let before = crate::helpers::stored(recipes.store());
    let preview = ann.submit(&form, "/import", &pasted).await;
    // Shown in the recipe form, to be checked: nothing is saved yet.
    assert_eq!(preview.status, 200, "{}", preview.body);
    assert_eq!(preview.attrs("#title", "value"), ["Easy Chana Masala"]);
    assert_eq!(
        preview.attrs("#note", "value"),
        ["Brought in from Spice Trail Kitchen, read from its schema.org JSON-LD"],
        "the version's note says where and how, as the CLI's"
    );
    assert!(
        preview
            .texts("p.source-notice")
            .join(" ")
            .contains("From Spice Trail Kitchen, read from its schema.org JSON-LD"),
        "{}",
        preview.body
    );
    assert!(crate::helpers::stored(recipes.store()) == before);
    let done = bring_in(&mut ann, &preview, &[]).await;
    // Its picture's host cannot be found: the recipe comes in without it.
    assert_eq!(done.status, 201, "{}", done.body);
    assert_eq!(done.header("location"), Some("/recipes/easy-chana-masala"));
    let page = ann.get("/recipes/easy-chana-masala").await;
    // The breadcrumb starts at the source, linked.
    assert_eq!(
        page.texts("nav.lineage li.source a"),
        ["Spice Trail Kitchen"]
    );
    assert_eq!(
        page.attrs("nav.lineage li.source a", "href"),
        ["https://spicetrail.example/chana-masala/"]
    );
    assert_eq!(
        page.json_ld()["isBasedOn"],
        "https://spicetrail.example/chana-masala/"
    );
    // The same form sent again (its answer lost) brings in nothing more:
    // it leads to the recipe it brought in.
    let resent = bring_in(&mut ann, &preview, &[]).await;
    assert_eq!(resent.status, 303, "{}", resent.body);
    assert_eq!(
        resent.header("location"),
        Some("/recipes/easy-chana-masala")
    );
    // The same recipe brought in again, from the form anew, gets a slug of
    // its own; changed before it is saved, it is saved as changed.
    let form = ann.get("/import").await;
    let preview = ann.submit(&form, "/import", &pasted).await;
    let again = bring_in(&mut ann, &preview, &[]).await;
    assert_eq!(
        again.header("location"),
        Some("/recipes/easy-chana-masala-2")
    );
    let preview = ann.submit(&form, "/import", &pasted).await;
    let changed = bring_in(
        &mut ann,
        &preview,
        &[("title", "Ann's Chana Masala"), ("image", "")],
    )
    .await;
    assert_eq!(changed.status, 303, "{}", changed.body);
    assert_eq!(
        changed.header("location"),
        Some("/recipes/anns-chana-masala")
    );
    let saved = recipes
        .snapshot()
        .recipe(&Slug::parse("anns-chana-masala").unwrap())
        .unwrap();
    assert_eq!(saved.content.title(), "Ann's Chana Masala");
    assert_eq!(saved.content.ingredients().len(), 5);
    assert_eq!(
        recipes.snapshot().source(saved.id).unwrap().unwrap().url,
        "https://spicetrail.example/chana-masala/"
    );
    // A fork of it keeps the source at the head of its lineage.
    let slug = Slug::parse("easy-chana-masala").unwrap();
    let (fork, _) = recipes
        .fork(&slug, None, None, |c| c, &Change::by("ben", "mine"))
        .unwrap();
    let forked = get(&site, &format!("/recipes/{fork}")).await;
    assert_eq!(
        forked.texts("nav.lineage li.source a"),
        ["Spice Trail Kitchen"]
    );
}

#[actix_web::test]
async fn a_cook_asking_for_too_many_imports_a_minute_is_told_to_wait_and_others_are_not() {
    let (recipes, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let mut ben = Browser::new(&site);
    sign_up(&mut ben, "ben").await;
    let before = crate::helpers::stored(recipes.store());
    let form = ann.get("/import").await;
    let page = fixture("no-recipe.html");
    let fields = [("url", "https://x.example/"), ("html", page.as_str())];
    for n in 0..forkful::web::rate_limits::IMPORTS_PER_MINUTE {
        let read = ann.submit(&form, "/import", &fields).await;
        assert_eq!(read.status, 422, "import {n} is read");
    }
    let waiting = ann.submit(&form, "/import", &fields).await;
    assert_eq!(waiting.status, 429);
    assert!(
        waiting
            .body
            .contains("too many imports for now (10 at once, then one every 6 seconds)"),
        "{}",
        waiting.body
    );
    assert_eq!(
        waiting.attrs("#url", "value"),
        ["https://x.example/"],
        "the form keeps what was typed"
    );
    let other = ben.get("/import").await;
    let read = ben.submit(&other, "/import", &fields).await;
    assert_eq!(read.status, 422, "another cook is not held up");
    assert!(crate::helpers::stored(recipes.store()) == before);
}

#[actix_web::test]
async fn the_import_form_says_what_was_wrong_and_writes_nothing() {
    let (recipes, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let before = crate::helpers::stored(recipes.store());
    let form = ann.get("/import").await;
    for (fields, message) in [
        (
            vec![("url", ""), ("html", "")],
            "Give the recipe's address, or paste its page.",
        ),
        (
            vec![
                ("url", ""),
                ("html", "<html><body>no address</body></html>"),
            ],
            "Give the page's address too",
        ),
        (
            vec![
                ("url", "https://x.example/"),
                ("html", fixture("no-recipe.html").as_str()),
            ],
            "The page has no recipe",
        ),
        // The site was not started to fetch private addresses.
        (
            vec![("url", "http://127.0.0.1/dal"), ("html", "")],
            "is an address on a private or local network",
        ),
        // Nor other ports than the web's.
        (
            vec![("url", "http://recipes.example:22/dal"), ("html", "")],
            "can be fetched, not port 22.",
        ),
        (
            vec![("url", "file:///etc/passwd"), ("html", "")],
            "Only http and https",
        ),
    ] {
        let refused = ann.submit(&form, "/import", &fields).await;
        assert_eq!(refused.status, 422, "{fields:?}");
        assert!(
            refused.body.contains(message),
            "{message}: {}",
            refused.body
        );
    }
    assert!(crate::helpers::stored(recipes.store()) == before);
    // A recipe without its steps is shown saying so, and is not brought in
    // until they are written in.
    let no_steps = r#"<script type="application/ld+json">{"@type": "Recipe", "name": "Dal", "recipeIngredient": ["1 cup lentils"]}</script>"#;
    let preview = ann
        .submit(
            &form,
            "/import",
            &[("url", "https://x.example/dal"), ("html", no_steps)],
        )
        .await;
    assert_eq!(preview.status, 200, "{}", preview.body);
    assert!(
        preview
            .texts("div.notice")
            .join(" ")
            .contains("The page had no steps"),
        "{}",
        preview.body
    );
    let refused = bring_in(&mut ann, &preview, &[]).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(
        refused.body.contains("The recipe has no steps yet"),
        "{}",
        refused.body
    );
    assert!(crate::helpers::stored(recipes.store()) == before);
    // A method of a heading alone has no step either.
    let headings_only = bring_in(&mut ann, &refused, &[("steps", "## Sauce")]).await;
    assert_eq!(headings_only.status, 422, "{}", headings_only.body);
    assert!(crate::helpers::stored(recipes.store()) == before);
    let finished = bring_in(&mut ann, &refused, &[("steps", "Simmer the lentils.")]).await;
    assert_eq!(finished.status, 303, "{}", finished.body);
    assert_eq!(finished.header("location"), Some("/recipes/dal"));
    // A save form whose source was taken out is refused.
    let forged = ann
        .submit(
            &preview,
            "/import/save",
            &[("source_url", ""), ("title", "X")],
        )
        .await;
    assert_eq!(forged.status, 400, "{}", forged.body);
    // Logged out: the form is the login page's business.
    let mut nobody = Browser::new(&site);
    assert_eq!(nobody.get("/import").await.status, 303);
}

#[actix_web::test]
async fn the_server_fetches_a_page_when_allowed() {
    let addr = serve(vec![("/dal", 200, "text/html", fixture("wprm.html"))]);
    let recipes = Recipes::temporary().unwrap();
    let (_, mut ann) = site_fetching(&recipes, Fetcher::public_and(addr)).await;
    let form = ann.get("/import").await;
    let url = format!("http://{addr}/dal");
    let preview = ann
        .submit(&form, "/import", &[("url", url.as_str()), ("html", "")])
        .await;
    let done = bring_in(&mut ann, &preview, &[]).await;
    assert_eq!(
        done.status, 201,
        "its picture's host is not found: {}",
        done.body
    );
    let page = ann.get("/recipes/easy-chana-masala").await;
    assert_eq!(page.attrs("nav.lineage li.source a", "href"), [url]);
}

/// While the site fetches all the pages it may at once, an import by
/// address gets a 503 that says to try again, with the form kept, and
/// costs the cook none of their imports.
#[actix_web::test]
async fn an_import_while_the_site_fetches_all_it_may_is_told_to_retry_and_not_counted() {
    let addr = serve(vec![("/dal", 200, "text/html", fixture("wprm.html"))]);
    let recipes = Recipes::temporary().unwrap();
    let fetcher = Fetcher::public_and(addr);
    let (_, mut ann) = site_fetching(&recipes, fetcher.clone()).await;
    let form = ann.get("/import").await;
    let url = format!("http://{addr}/dal");
    let fields = [("url", url.as_str()), ("html", "")];
    // Every place taken, as by other cooks' fetches.
    let taken: Vec<_> = (0..forkful::import::MAX_FETCHES)
        .map(|_| fetcher.place().unwrap())
        .collect();
    for n in 0..=forkful::web::rate_limits::IMPORTS_PER_MINUTE {
        let busy = ann.submit(&form, "/import", &fields).await;
        assert_eq!(busy.status, 503, "import {n}");
        assert_eq!(
            busy.headers.get("retry-after").map(|v| v.to_str().unwrap()),
            Some("10")
        );
        assert!(
            busy.body
                .contains("fetching as many pages as it may at once"),
            "{}",
            busy.body
        );
        assert_eq!(
            busy.attrs("#url", "value"),
            [url.as_str()],
            "the form is kept"
        );
    }
    // An address no retry can help is refused as such, busy or not.
    let bad = ann
        .submit(
            &form,
            "/import",
            &[("url", "ftp://x.example/"), ("html", "")],
        )
        .await;
    assert_eq!(bad.status, 422);
    assert!(
        bad.body
            .contains("Only http and https addresses can be fetched, not ftp."),
        "{}",
        bad.body
    );
    drop(taken);
    // More tries than a minute's imports, and none of them counted.
    let done = ann.submit(&form, "/import", &fields).await;
    assert_eq!(done.status, 200, "read, and shown: {}", done.body);
    assert_eq!(done.attrs("#title", "value"), ["Easy Chana Masala"]);
}

/// `fixture("wprm.html")` with its pictures replaced by `image`.
fn wprm_with_picture(image: &str) -> String {
    let page = fixture("wprm.html");
    let start = page.find("\"image\":[").unwrap();
    let end = start + page[start..].find(']').unwrap() + 1;
    format!("{}\"image\":[\"{image}\"]{}", &page[..start], &page[end..])
}

/// The picture an imported page names is fetched and stored, and the
/// recipe's page draws only that; one that cannot be fetched leaves the
/// recipe to come in without it, and the answer says so and why.
#[actix_web::test]
async fn an_imported_pages_picture_is_stored_and_one_that_cannot_be_fetched_is_left_out() {
    let picture = {
        let image = image::RgbImage::from_fn(600, 400, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, 90])
        });
        let mut out = std::io::Cursor::new(Vec::new());
        image::DynamicImage::ImageRgb8(image)
            .write_to(&mut out, image::ImageFormat::Png)
            .unwrap();
        out.into_inner()
    };
    let addr = serve(vec![
        (
            "/dal",
            200,
            "text/html",
            wprm_with_picture("/chana.png").into_bytes(),
        ),
        ("/chana.png", 200, "image/png", picture.clone()),
        (
            "/gone",
            200,
            "text/html",
            wprm_with_picture("/gone.png").into_bytes(),
        ),
    ]);
    let recipes = Recipes::temporary().unwrap();
    let (_, mut ann) = site_fetching(&recipes, Fetcher::public_and(addr)).await;
    let form = ann.get("/import").await;
    let url = format!("http://{addr}/dal");
    let preview = ann
        .submit(&form, "/import", &[("url", url.as_str()), ("html", "")])
        .await;
    let done = bring_in(&mut ann, &preview, &[]).await;
    assert_eq!(done.status, 303, "{}", done.body);
    let page = ann.get("/recipes/easy-chana-masala").await;
    let hash = ann.site.recipes().picture_name(&picture);
    let mut drawn = page.attrs("img", "src");
    drawn.extend(page.attrs("img", "srcset"));
    assert!(!drawn.is_empty());
    for src in &drawn {
        for url in src.split(", ") {
            assert!(url.starts_with(&format!("/images/{hash}-")), "{url}");
        }
    }
    assert_eq!(page.attrs("img.recipe-image", "alt"), ["Easy Chana Masala"]);
    assert_eq!(
        page.json_ld()["image"][0],
        format!("http://forkful.test/images/{hash}-1x1.jpg")
    );
    // A picture that is not there: the recipe comes in, without it.
    let gone = format!("http://{addr}/gone");
    let preview = ann
        .submit(&form, "/import", &[("url", gone.as_str()), ("html", "")])
        .await;
    let without = bring_in(&mut ann, &preview, &[]).await;
    assert_eq!(without.status, 201, "{}", without.body);
    assert_eq!(
        without.header("location"),
        Some("/recipes/easy-chana-masala-2")
    );
    let notice = without.texts("p.notice").join(" ");
    assert!(
        notice.contains(&format!("http://{addr}/gone.png"))
            && notice.contains("The site answered 404."),
        "{notice}"
    );
    let page = ann.get("/recipes/easy-chana-masala-2").await;
    assert_eq!(page.status, 200);
    assert!(page.attrs("img", "src").is_empty(), "{}", page.body);
    let slug = Slug::parse("easy-chana-masala-2").unwrap();
    let content = recipes.snapshot().recipe(&slug).unwrap().content;
    assert_eq!((content.picture(), content.image()), (None, None));
}

#[test]
fn two_cooks_bringing_in_one_page_at_once_get_two_recipes() {
    let recipes = Recipes::temporary().unwrap();
    let imported = import::from_html(
        &fixture("wprm.html"),
        "https://spicetrail.example/chana-masala/",
    )
    .unwrap();
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(8));
    let slugs: Vec<Slug> = (0..8)
        .map(|i| {
            let (recipes, imported, barrier) = (recipes.clone(), imported.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let slug = Slug::from_title(imported.content.title());
                let change = Change::by(&format!("cook-{i}"), "brought in");
                recipes
                    .import(
                        &slug,
                        imported.content.into_draft(),
                        &imported.source,
                        &change,
                    )
                    .unwrap()
                    .0
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    // Each got a slug of its own, decided in the writer: none merged into
    // another (the same ingredients once each, one author each).
    let mut distinct = slugs.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 8, "{slugs:?}");
    let view = recipes.snapshot();
    for slug in &slugs {
        let recipe = view.recipe(slug).unwrap();
        assert_eq!(recipe.content.ingredients(), imported.content.ingredients());
        assert_eq!(recipe.version_count, 1);
    }
}
