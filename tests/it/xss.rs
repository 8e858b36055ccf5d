//! Hostile text in every free-text field of a recipe, written through the
//! forms as a cook would: no page, feed or JSON-LD block carries anything a
//! browser would run, checked with an HTML parser.

use crate::helpers::{site, Page};
use crate::writing::{sign_up, Browser};
use forkful::domain::Recipes;

/// Script tags, event handlers, `javascript:` and `data:` addresses, SVG
/// and MathML tricks, broken markup, entity-encoded and Markdown payloads.
const PAYLOADS: &[&str] = &[
    "<script>alert(1)</script>",
    "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
    "<img src=x onerror=alert(1)>",
    "<img src=\"x\" onerror=\"alert(1)\">",
    "<svg onload=alert(1)>",
    "<svg><script>alert(1)</script></svg>",
    "<body onload=alert(1)>",
    "<iframe src=\"javascript:alert(1)\"></iframe>",
    "<a href=\"javascript:alert(1)\">x</a>",
    "<a href=\"JaVaScRiPt:alert(1)\">x</a>",
    "<a href=\" javascript:alert(1)\">x</a>",
    "<a href=\"java&#x09;script:alert(1)\">x</a>",
    "[x](javascript:alert(1))",
    "[x](JAVASCRIPT:alert(1))",
    "[x]( javascript:alert(1) )",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[x](vbscript:msgbox(1))",
    "![x](javascript:alert(1))",
    "![x](data:image/svg+xml,<svg onload=alert(1)>)",
    "<object data=\"data:text/html,<script>alert(1)</script>\"></object>",
    "<embed src=\"javascript:alert(1)\">",
    "<math><mtext><script>alert(1)</script></mtext></math>",
    "<details open ontoggle=alert(1)>",
    "<input autofocus onfocus=alert(1)>",
    "<video><source onerror=alert(1)></video>",
    "<style>@import 'javascript:alert(1)';</style>",
    "<link rel=stylesheet href=javascript:alert(1)>",
    "<meta http-equiv=\"refresh\" content=\"0;url=javascript:alert(1)\">",
    "<base href=\"javascript:alert(1)//\">",
    "<form action=javascript:alert(1)><button>x</button></form>",
    "\"><script>alert(1)</script>",
    "'><img src=x onerror=alert(1)>",
    "</script><script>alert(1)</script>",
    "</title><script>alert(1)</script>",
    "</textarea><script>alert(1)</script>",
    "<!--<script>alert(1)//-->",
    "<![CDATA[<script>alert(1)</script>]]>",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "&#60;script&#62;alert(1)&#60;/script&#62;",
    "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e",
    "<scr<script>ipt>alert(1)</scr</script>ipt>",
    "<<script>script>alert(1)<</script>/script>",
    "<div style=\"background:url(javascript:alert(1))\">x</div>",
    "<a href=\"data:text/html,<script>alert(1)</script>\">x</a>",
    "<x onclick=alert(1)>click</x>",
    "[x](https://example.com\" onmouseover=\"alert(1))",
    "[x](https://example.com 'a\" onmouseover=\"alert(1)')",
    "<https://example.com/\"onmouseover=\"alert(1)>",
    "`<script>alert(1)</script>`",
    "    <script>alert(1)</script>",
    "*<img src=x onerror=alert(1)>*",
    "<svg><a xlink:href=\"javascript:alert(1)\"><text>x</text></a></svg>",
    "<isindex action=javascript:alert(1) type=image>",
    "<marquee onstart=alert(1)>",
];

/// Everything on `page` a browser could run: script elements other than the
/// site's own and its JSON-LD, event-handler attributes, elements that load
/// or embed, and addresses with a scheme that runs or embeds.
/// The one form the site itself writes into a recipe's content: the
/// servings control, a direct child of the ingredients section.
fn site_form(element: scraper::ElementRef) -> bool {
    let e = element.value();
    e.name() == "form"
        && e.attr("class") == Some("scale")
        && element
            .parent()
            .and_then(scraper::ElementRef::wrap)
            .is_some_and(|p| p.value().attr("class") == Some("ingredients"))
}

fn executable(page: &Page) -> Vec<String> {
    let html = page.html();
    let mut found = Vec::new();
    for element in html
        .root_element()
        .descendants()
        .filter_map(scraper::ElementRef::wrap)
    {
        let e = element.value();
        let name = e.name();
        let script_ok = name == "script"
            && (e.attr("type") == Some("application/ld+json")
                || e.attr("src").is_some_and(|s| s.starts_with("/static/app.")));
        if name == "script" && !script_ok {
            found.push(format!("<script>: {}", element.html()));
        }
        if [
            "iframe", "object", "embed", "base", "meta", "link", "style", "svg", "math", "form",
        ]
        .contains(&name)
            && !site_form(element)
            && element.ancestors().any(|a| {
                a.value()
                    .as_element()
                    .is_some_and(|a| a.name() == "main" || a.name() == "article")
            })
        {
            // Inside the page's content, none of these come from the site
            // but the forms it writes (on these pages, only the servings
            // control).
            found.push(format!("<{name}> in content: {}", element.html()));
        }
        for (attr, value) in e.attrs() {
            let lower = value
                .trim()
                .to_ascii_lowercase()
                .replace(['\t', '\n', '\r'], "");
            if attr.starts_with("on") {
                found.push(format!("{attr}= on <{name}>"));
            }
            let address = matches!(
                attr,
                "href" | "src" | "action" | "formaction" | "xlink:href" | "data"
            );
            if address
                && ["javascript:", "data:", "vbscript:"]
                    .iter()
                    .any(|scheme| lower.starts_with(scheme))
            {
                found.push(format!("{attr}={value:?} on <{name}>"));
            }
        }
    }
    for block in page.texts_raw("script[type=\"application/ld+json\"]") {
        serde_json::from_str::<serde_json::Value>(&block).expect("the JSON-LD parses");
        if block.to_ascii_lowercase().contains("</script") {
            found.push("</script in JSON-LD".into());
        }
    }
    found
}

#[actix_web::test]
async fn hostile_text_in_every_field_runs_nowhere() {
    assert!(PAYLOADS.len() >= 50, "{} payloads", PAYLOADS.len());
    let recipes = Recipes::temporary().unwrap();
    let site = site(&recipes);
    let mut cook = Browser::new(&site);
    sign_up(&mut cook, "mallory").await;
    for (i, payload) in PAYLOADS.iter().enumerate() {
        let slug = format!("xss-{i}");
        let title = format!("Recipe {i} {payload}");
        let tag = if payload.chars().count() <= 40 {
            payload.to_string()
        } else {
            format!("tag {i}")
        };
        let lines = format!("1 cup {payload}\n2 {payload}");
        let steps = format!("{payload}\n\n## {payload}\n\nStir {payload}");
        let fields = [
            ("title", title.as_str()),
            ("slug", slug.as_str()),
            ("summary", payload),
            ("yield_text", payload),
            ("ingredients", lines.as_str()),
            ("steps", steps.as_str()),
            ("notes", payload),
            ("tags", tag.as_str()),
            ("cuisine", payload),
            ("category", payload),
            ("note", payload),
        ];
        let form = cook.get("/recipes/new").await;
        let done = cook.submit(&form, "/recipes/new", &fields).await;
        assert_eq!(done.status, 303, "{payload}: {}", done.body);
        for uri in [
            format!("/recipes/{slug}"),
            format!("/recipes/{slug}/history"),
            format!("/recipes/{slug}/versions/1"),
        ] {
            let page = cook.get(&uri).await;
            assert_eq!(page.status, 200, "{uri}");
            let bad = executable(&page);
            assert!(bad.is_empty(), "{payload} on {uri}: {bad:?}");
        }
        let json = cook.get(&format!("/recipes/{slug}.json")).await;
        serde_json::from_str::<serde_json::Value>(&json.body).expect("the JSON parses");
        let form = cook.get(&format!("/recipes/{slug}/edit")).await;
        assert!(
            executable(&form).iter().all(|b| b.starts_with("<form>")),
            "{payload} on its edit form"
        );
    }
    for uri in [
        "/",
        "/?sort=recent",
        "/tags",
        "/search?q=recipe",
        "/tags/script",
    ] {
        let page = cook.get(uri).await;
        let bad = executable(&page);
        assert!(bad.is_empty(), "{uri}: {bad:?}");
    }
    let feed = cook.get("/feed.xml").await;
    // Every tag in the feed is one of Atom's: the cooks' text is escaped.
    const ATOM: &[&str] = &[
        "?xml", "feed", "title", "id", "link", "updated", "author", "name", "entry", "summary",
        "category",
    ];
    for (at, _) in feed.body.match_indices('<') {
        let tag: String = feed.body[at + 1..]
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '?')
            .collect();
        assert!(ATOM.contains(&tag.as_str()), "<{tag} in the feed");
    }
}

#[test]
fn the_check_finds_what_a_browser_would_run() {
    let page = |body: &str| Page {
        status: 200,
        headers: actix_web::http::header::HeaderMap::new(),
        body: body.to_owned(),
        raw: body.as_bytes().to_vec(),
    };
    for hostile in [
        "<main><script>alert(1)</script></main>",
        "<main><img src=x onerror=alert(1)></main>",
        "<main><a href=' JavaScript:alert(1)'>x</a></main>",
        "<main><iframe></iframe></main>",
        "<main><a href='data:text/html,x'>x</a></main>",
    ] {
        assert!(!executable(&page(hostile)).is_empty(), "{hostile}");
    }
    let safe = "<main><a href='/recipes/x' rel='nofollow'>x</a><script type='application/ld+json'>{}</script></main>";
    assert!(executable(&page(safe)).is_empty());
}
