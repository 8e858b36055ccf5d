//! Writing over the web, as a browser does it: cookies kept, the form token
//! read from the form, and the Origin a browser sends.

use std::collections::HashMap;

use actix_web::test::TestRequest;
use actix_web::web::Data;
use forkful::domain::Recipes;
use forkful::web::Site;

use crate::helpers::{send, site, stored, Page};

const ORIGIN: &str = "http://forkful.test";

/// A browser: its cookies, and the site it talks to.
pub struct Browser {
    pub site: Data<Site>,
    cookies: HashMap<String, String>,
}

impl Browser {
    pub fn new(site: &Data<Site>) -> Browser {
        Browser {
            site: site.clone(),
            cookies: HashMap::new(),
        }
    }

    fn with_cookies(&self, mut request: TestRequest) -> TestRequest {
        for (name, value) in &self.cookies {
            request = request.cookie(actix_web::cookie::Cookie::new(name.clone(), value.clone()));
        }
        request
    }

    async fn send(&mut self, request: TestRequest) -> Page {
        let page = send(&self.site, self.with_cookies(request)).await;
        for value in page.headers.get_all("set-cookie") {
            let cookie =
                actix_web::cookie::Cookie::parse(value.to_str().unwrap().to_owned()).unwrap();
            let removed =
                cookie.max_age().is_some_and(|age| age.is_zero()) || cookie.value().is_empty();
            if removed {
                self.cookies.remove(cookie.name());
            } else {
                self.cookies
                    .insert(cookie.name().to_owned(), cookie.value().to_owned());
            }
        }
        page
    }

    pub async fn get(&mut self, uri: &str) -> Page {
        self.send(TestRequest::get().uri(uri)).await
    }

    /// Posts `fields` to `action` with the token of the form on `page`.
    pub async fn submit(&mut self, page: &Page, action: &str, fields: &[(&str, &str)]) -> Page {
        let token = form_token(page, action);
        let mut form: Vec<(&str, &str)> = vec![("csrf", &token)];
        form.extend_from_slice(fields);
        self.post(action, &form, Some(ORIGIN)).await
    }

    /// Posts `form` as it is, from `origin` (`None`: no Origin header).
    pub async fn post(
        &mut self,
        action: &str,
        form: &[(&str, &str)],
        origin: Option<&str>,
    ) -> Page {
        let mut request = TestRequest::post().uri(action).set_form(form);
        if let Some(origin) = origin {
            request = request.insert_header(("Origin", origin));
        }
        self.send(request).await
    }

    pub fn has_cookie(&self, name: &str) -> bool {
        self.cookies.contains_key(name)
    }
}

/// The token of the form on `page` that posts to `action`.
pub fn form_token(page: &Page, action: &str) -> String {
    let css = format!("form[action=\"{action}\"] input[name=\"csrf\"]");
    page.attrs(&css, "value")
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("a form posting to {action} with a token:\n{}", page.body))
}

fn new_site() -> (Recipes, Data<Site>) {
    let recipes = Recipes::temporary().unwrap();
    let site = site(&recipes);
    (recipes, site)
}

const PASSWORD: &str = "correct horse battery";

/// Signs `handle` up in `browser`, which is then logged in.
pub async fn sign_up(browser: &mut Browser, handle: &str) -> Page {
    let form = browser.get("/signup").await;
    let done = browser
        .submit(
            &form,
            "/signup",
            &[
                ("handle", handle),
                ("name", "A Cook"),
                ("password", PASSWORD),
            ],
        )
        .await;
    assert_eq!(done.status, 303, "{}", done.body);
    done
}

#[actix_web::test]
async fn a_cook_signs_up_and_is_logged_in_with_a_safe_cookie() {
    let (_, site) = new_site();
    let mut browser = Browser::new(&site);
    let form = browser.get("/signup").await;
    assert_eq!(form.status, 200);
    assert_eq!(form.header("cache-control"), Some("private, no-store"));
    let done = browser
        .submit(
            &form,
            "/signup",
            &[("handle", "ann"), ("name", "Ann"), ("password", PASSWORD)],
        )
        .await;
    assert_eq!(done.status, 303);
    assert_eq!(done.header("location"), Some("/account"));
    let set = done.header("set-cookie").unwrap();
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(set.contains(attribute), "{set}");
    }
    assert!(
        !set.contains("Secure"),
        "http sites cannot keep Secure cookies"
    );
    let account = browser.get("/account").await;
    assert_eq!(account.status, 200);
    assert!(account.body.contains("Logged in as"), "{}", account.body);
    assert_eq!(account.header("cache-control"), Some("private, no-store"));
}

#[actix_web::test]
async fn cookies_are_secure_when_the_site_is_https() {
    let recipes = Recipes::temporary().unwrap();
    let site = Data::new(Site::new(recipes, "https://forkful.test"));
    let mut browser = Browser::new(&site);
    let form = browser.get("/signup").await;
    let token = form_token(&form, "/signup");
    let done = browser
        .post(
            "/signup",
            &[
                ("csrf", &token),
                ("handle", "ann"),
                ("name", "Ann"),
                ("password", PASSWORD),
            ],
            Some("https://forkful.test"),
        )
        .await;
    assert_eq!(done.status, 303, "{}", done.body);
    assert!(done.header("set-cookie").unwrap().contains("Secure"));
}

#[actix_web::test]
async fn a_form_with_a_mistake_keeps_what_was_typed_and_says_what_is_wrong() {
    let (recipes, site) = new_site();
    let mut browser = Browser::new(&site);
    sign_up(&mut browser, "ann").await;
    let mut other = Browser::new(&site);
    let form = other.get("/signup").await;
    let before = stored(recipes.store());
    let taken = other
        .submit(
            &form,
            "/signup",
            &[
                ("handle", "ann"),
                ("name", "Ann Two"),
                ("password", PASSWORD),
            ],
        )
        .await;
    assert_eq!(taken.status, 409);
    assert_eq!(
        taken.texts("#handle-error"),
        ["The handle ann is taken: choose another."]
    );
    assert_eq!(
        taken.attrs("#name", "value"),
        ["Ann Two"],
        "what was typed is kept"
    );
    assert_eq!(
        taken.attrs("#password", "value"),
        [""],
        "but never a password"
    );
    let short = other
        .submit(
            &form,
            "/signup",
            &[("handle", "ben"), ("name", "Ben"), ("password", "short")],
        )
        .await;
    assert_eq!(short.status, 422);
    assert!(short.texts("#password-error")[0].contains("10"));
    let bad = other
        .submit(
            &form,
            "/signup",
            &[
                ("handle", "Not A Handle!"),
                ("name", "X"),
                ("password", PASSWORD),
            ],
        )
        .await;
    assert_eq!(bad.status, 422);
    assert!(!bad.texts("#handle-error").is_empty());
    assert!(stored(recipes.store()) == before, "refused sign-ups wrote");
}

#[actix_web::test]
async fn a_form_without_its_token_or_from_elsewhere_is_refused_and_changes_nothing() {
    let (recipes, site) = new_site();
    let mut browser = Browser::new(&site);
    let form = browser.get("/signup").await;
    let token = form_token(&form, "/signup");
    let fields = |csrf: &'static str| {
        vec![
            ("csrf", csrf),
            ("handle", "ann"),
            ("name", "Ann"),
            ("password", PASSWORD),
        ]
    };
    let before = stored(recipes.store());
    let no_token = browser
        .post("/signup", &fields("wrong"), Some(ORIGIN))
        .await;
    assert_eq!(no_token.status, 403);
    let token: &'static str = Box::leak(token.into_boxed_str());
    let elsewhere = browser
        .post("/signup", &fields(token), Some("http://evil.example"))
        .await;
    assert_eq!(elsewhere.status, 403);
    let cross_site = browser
        .send(
            TestRequest::post()
                .uri("/signup")
                .insert_header(("Sec-Fetch-Site", "cross-site"))
                .set_form(fields(token)),
        )
        .await;
    assert_eq!(cross_site.status, 403);
    assert!(stored(recipes.store()) == before, "a refused form wrote");
    // Another browser's token is not this one's.
    let mut other = Browser::new(&site);
    other.get("/signup").await;
    let stolen = other.post("/signup", &fields(token), Some(ORIGIN)).await;
    assert_eq!(stolen.status, 403);
    assert_eq!(
        browser
            .post("/signup", &fields(token), Some(ORIGIN))
            .await
            .status,
        303
    );
}

#[actix_web::test]
async fn logging_in_and_out_and_a_wrong_password_says_no_more_than_it_must() {
    let (_, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let account = ann.get("/account").await;
    let out = ann.submit(&account, "/logout", &[]).await;
    assert_eq!(out.status, 303);
    assert!(!ann.has_cookie("forkful_session"));
    let away = ann.get("/account").await;
    assert_eq!(away.status, 303);
    assert_eq!(away.header("location"), Some("/login?next=/account"));

    let form = ann.get("/login?next=/account").await;
    let wrong = ann
        .submit(
            &form,
            "/login",
            &[
                ("handle", "ann"),
                ("password", "not my password"),
                ("next", "/account"),
            ],
        )
        .await;
    let unknown = ann
        .submit(
            &form,
            "/login",
            &[
                ("handle", "nobody"),
                ("password", PASSWORD),
                ("next", "/account"),
            ],
        )
        .await;
    assert_eq!(wrong.status, 401);
    assert_eq!(wrong.texts(".form-error"), unknown.texts(".form-error"));
    assert_eq!(wrong.attrs("#handle", "value"), ["ann"]);
    let right = ann
        .submit(
            &form,
            "/login",
            &[
                ("handle", "ann"),
                ("password", PASSWORD),
                ("next", "/account"),
            ],
        )
        .await;
    assert_eq!(right.status, 303);
    assert_eq!(right.header("location"), Some("/account"));
    assert_eq!(ann.get("/account").await.status, 200);
}

#[actix_web::test]
async fn after_login_a_browser_goes_only_to_a_page_of_this_site() {
    let (_, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let account = ann.get("/account").await;
    ann.submit(&account, "/logout", &[]).await;
    for next in [
        "https://evil.example/",
        "//evil.example",
        "/\\evil.example",
        "javascript:alert(1)",
    ] {
        let form = ann.get("/login").await;
        let done = ann
            .submit(
                &form,
                "/login",
                &[("handle", "ann"), ("password", PASSWORD), ("next", next)],
            )
            .await;
        assert_eq!(done.header("location"), Some("/"), "{next}");
        let account = ann.get("/account").await;
        ann.submit(&account, "/logout", &[]).await;
    }
}

#[actix_web::test]
async fn a_new_password_ends_other_sessions_and_log_out_everywhere_ends_all() {
    let (_, site) = new_site();
    let mut laptop = Browser::new(&site);
    sign_up(&mut laptop, "ann").await;
    let mut phone = Browser::new(&site);
    let form = phone.get("/login").await;
    phone
        .submit(
            &form,
            "/login",
            &[("handle", "ann"), ("password", PASSWORD)],
        )
        .await;
    assert_eq!(phone.get("/account").await.status, 200);
    let account = laptop.get("/account").await;
    let wrong = laptop
        .submit(
            &account,
            "/account/password",
            &[("current", "nope nope nope"), ("new", "a newer password")],
        )
        .await;
    assert_eq!(wrong.status, 401);
    assert!(!wrong.texts("#current-error").is_empty());
    let changed = laptop
        .submit(
            &account,
            "/account/password",
            &[("current", PASSWORD), ("new", "a newer password")],
        )
        .await;
    assert_eq!(changed.status, 303);
    assert_eq!(
        laptop.get("/account").await.status,
        200,
        "this browser stays in"
    );
    assert_eq!(phone.get("/account").await.status, 303, "the other is out");
    let account = laptop.get("/account").await;
    laptop.submit(&account, "/logout/everywhere", &[]).await;
    assert_eq!(laptop.get("/account").await.status, 303);
}

#[actix_web::test]
async fn anonymous_pages_stay_the_same_for_everyone() {
    let (_, site) = new_site();
    let anonymous = crate::helpers::get(&site, "/").await;
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let logged_in = ann.get("/").await;
    assert_eq!(anonymous.body, logged_in.body);
    assert_eq!(logged_in.header("cache-control"), Some("no-cache"));
}

#[actix_web::test]
async fn an_oversized_or_unreadable_form_is_refused_with_a_page_that_says_so() {
    let (recipes, site) = new_site();
    let mut browser = Browser::new(&site);
    let form = browser.get("/signup").await;
    let token = form_token(&form, "/signup");
    let before = stored(recipes.store());
    let huge = "x".repeat(forkful::app::MAX_FORM_BYTES + 1);
    let big = browser
        .post(
            "/signup",
            &[
                ("csrf", &token),
                ("handle", "ann"),
                ("name", &huge),
                ("password", PASSWORD),
            ],
            Some(ORIGIN),
        )
        .await;
    assert_eq!(big.status, 413);
    assert!(big.body.contains("256 KiB"), "{}", big.body);
    let missing = browser
        .post("/signup", &[("csrf", &token)], Some(ORIGIN))
        .await;
    assert_eq!(missing.status, 400);
    assert!(missing.body.contains("nothing was changed"));
    assert!(stored(recipes.store()) == before);
}
