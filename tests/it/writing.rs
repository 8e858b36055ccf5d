//! Writing over the web, as a browser does it: cookies kept, the form token
//! read from the form, and the Origin a browser sends.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use actix_web::test::TestRequest;
use actix_web::web::Data;
use forkful::domain::content::{MAX_INGREDIENT_TERMS, MAX_LINE, MAX_SUMMARY_TERMS};
use forkful::domain::{Minutes, Recipes, Slug, FIELDS};
use forkful::views::recipe_form::RecipeFields;
use forkful::web::Site;

use crate::helpers::{largest_content, send, site, stored, words, Page};

pub(crate) const ORIGIN: &str = "http://forkful.test";

/// A browser: its cookies, and the site it talks to.
pub(crate) struct Browser {
    pub site: Data<Site>,
    cookies: HashMap<String, String>,
}

impl Browser {
    pub(crate) fn new(site: &Data<Site>) -> Browser {
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
        for (name, value) in page.cookies_set() {
            match value {
                Some(value) => self.cookies.insert(name, value),
                None => self.cookies.remove(&name),
            };
        }
        page
    }

    pub(crate) async fn get(&mut self, uri: &str) -> Page {
        self.send(TestRequest::get().uri(uri)).await
    }

    /// GETs `uri` with one more header.
    pub(crate) async fn send_with(&mut self, uri: &str, header: (&str, String)) -> Page {
        self.send(TestRequest::get().uri(uri).insert_header(header))
            .await
    }

    /// Posts the form on `page` that posts to `action`, as a browser does:
    /// its hidden fields (the token among them) and `fields` filled in.
    pub(crate) async fn submit(
        &mut self,
        page: &Page,
        action: &str,
        fields: &[(&str, &str)],
    ) -> Page {
        let hidden = hidden_fields(page, action);
        let form = filled_in(&hidden, fields);
        self.post(action, &form, Some(ORIGIN)).await
    }

    /// `submit`, as `multipart/form-data` with a file in `picture_file`:
    /// its name, type and bytes (an empty part, as a browser sends it, when
    /// `None`).
    pub(crate) async fn submit_with_file(
        &mut self,
        page: &Page,
        action: &str,
        fields: &[(&str, &str)],
        file: Option<(&str, &str, &[u8])>,
    ) -> Page {
        let hidden = hidden_fields(page, action);
        let form = filled_in(&hidden, fields);
        let (content_type, body) = multipart_form(&form, file);
        let request = TestRequest::post()
            .uri(action)
            .insert_header(("Content-Type", content_type))
            .insert_header(("Origin", ORIGIN))
            .set_payload(body);
        self.send(request).await
    }

    /// Posts `form` as it is, from `origin` (`None`: no Origin header).
    pub(crate) async fn post(
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

    pub(crate) fn has_cookie(&self, name: &str) -> bool {
        self.cookies.contains_key(name)
    }

    pub(crate) fn cookie(&self, name: &str) -> Option<String> {
        self.cookies.get(name).cloned()
    }

    /// Sets a cookie by hand, as a forger would.
    pub(crate) fn set_cookie(&mut self, name: &str, value: &str) {
        self.cookies.insert(name.to_owned(), value.to_owned());
    }
}

/// `form` as `multipart/form-data` with a file in `picture_file` (its
/// name, type and bytes; an empty part, as a browser sends it, when
/// `None`): the `Content-Type` and the body.
pub(crate) fn multipart_form(
    form: &[(&str, &str)],
    file: Option<(&str, &str, &[u8])>,
) -> (String, Vec<u8>) {
    const BOUNDARY: &str = "forkful-test-boundary-7MA4YWxkTrZu0gW";
    // The file first, so the fields after it are read only if it is
    // read to its end (a browser sends it among the fields, before the
    // note).
    let mut body = Vec::new();
    let (filename, kind, bytes) = file.unwrap_or(("", "application/octet-stream", &[]));
    body.extend_from_slice(
        format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"picture_file\"; filename=\"{filename}\"\r\nContent-Type: {kind}\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(bytes);
    body.extend_from_slice(b"\r\n");
    for (name, value) in form {
        body.extend_from_slice(
            format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n")
                .as_bytes(),
        );
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={BOUNDARY}"), body)
}

/// The hidden fields (the token among them) of the form on `page` that
/// posts to `action`.
pub(crate) fn hidden_fields(page: &Page, action: &str) -> Vec<(String, String)> {
    form_token(page, action);
    let css = format!("form[action=\"{action}\"] input[type=\"hidden\"]");
    // Where two forms post to one address (a review's accept and
    // decline), a browser sends one of them: each name once, the first
    // form's (the site refuses a field sent twice).
    let mut fields: Vec<(String, String)> = Vec::new();
    for (name, value) in page
        .attrs(&css, "name")
        .into_iter()
        .zip(page.attrs(&css, "value"))
    {
        if !fields.iter().any(|(n, _)| *n == name) {
            fields.push((name, value));
        }
    }
    fields
}

/// A form's `hidden` fields, but those `fields` fill in, and `fields`.
pub(crate) fn filled_in<'a>(
    hidden: &'a [(String, String)],
    fields: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    let mut form: Vec<(&str, &str)> = hidden
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .filter(|(n, _)| !fields.iter().any(|(f, _)| f == n))
        .collect();
    form.extend_from_slice(fields);
    form
}

/// The token of the form on `page` that posts to `action`.
pub(crate) fn form_token(page: &Page, action: &str) -> String {
    let css = format!("form[action=\"{action}\"] input[name=\"csrf\"]");
    page.attrs(&css, "value")
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("a form posting to {action} with a token:\n{}", page.body))
}

pub(crate) fn new_site() -> (Recipes, Data<Site>) {
    let recipes = Recipes::temporary().unwrap();
    let site = site(&recipes);
    (recipes, site)
}

/// A site over `recipes` that fetches (imports, pictures by address) with
/// `fetcher`, and `ann` signed up on it.
pub(crate) async fn site_fetching(
    recipes: &Recipes,
    fetcher: forkful::import::Fetcher,
) -> (Data<Site>, Browser) {
    let site = Data::new(Site::new(recipes.clone(), ORIGIN).with_fetcher(fetcher));
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    (site, ann)
}

const PASSWORD: &str = "correct horse battery";

/// Signs `handle` up in `browser`, which is then logged in.
pub(crate) async fn sign_up(browser: &mut Browser, handle: &str) -> Page {
    sign_up_as(browser, handle, "A Cook").await
}

/// `sign_up`, with the cook's name.
pub(crate) async fn sign_up_as(browser: &mut Browser, handle: &str, name: &str) -> Page {
    let form = browser.get("/signup").await;
    let done = browser
        .submit(
            &form,
            "/signup",
            &[("handle", handle), ("name", name), ("password", PASSWORD)],
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
    let set = done.header("set-cookie").unwrap();
    assert!(set.starts_with("__Host-forkful_session="), "{set}");
    assert!(set.contains("Secure") && set.contains("Path=/") && !set.contains("Domain"));
    assert!(
        form.header("set-cookie")
            .unwrap()
            .starts_with("__Host-forkful_form="),
        "the form cookie too"
    );
    // The cookie under its prefixed name is the session; a plain one is
    // not read over https (a plain-http page could have planted it).
    let account = browser.get("/account").await;
    assert_eq!(account.status, 200, "{}", account.body);
    let mut planted = Browser::new(&site);
    let session = set.split(';').next().unwrap().split_once('=').unwrap().1;
    planted.set_cookie("forkful_session", session);
    assert_eq!(planted.get("/account").await.status, 303);
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
    assert_eq!(
        account.attrs(
            "form[action='/account/password'] input[autocomplete=username]",
            "value"
        ),
        ["ann"],
        "password managers are told whose password changes"
    );
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
async fn guesses_at_the_current_password_are_limited_like_logins() {
    use forkful::web::rate_limits::ATTEMPTS_PER_MINUTE;
    let (_, site) = new_site();
    let mut thief = Browser::new(&site);
    sign_up(&mut thief, "ann").await;
    let account = thief.get("/account").await;
    for _ in 0..ATTEMPTS_PER_MINUTE {
        let guess = thief
            .submit(
                &account,
                "/account/password",
                &[("current", "a guess a guess"), ("new", "mine now mine now")],
            )
            .await;
        assert_eq!(guess.status, 401);
    }
    // Even the right password waits now: the answer says nothing of it.
    let limited = thief
        .submit(
            &account,
            "/account/password",
            &[("current", PASSWORD), ("new", "mine now mine now")],
        )
        .await;
    assert_eq!(limited.status, 429, "{}", limited.body);
    assert_eq!(limited.header("retry-after"), Some("60"));
    let mut owner = Browser::new(&site);
    let form = owner.get("/login").await;
    let back = owner
        .submit(
            &form,
            "/login",
            &[("handle", "ann"), ("password", PASSWORD)],
        )
        .await;
    assert_eq!(
        back.status, 429,
        "the account's attempts are used up for a minute"
    );
}

#[actix_web::test]
async fn the_form_token_is_masked_afresh_on_every_page_so_compression_cannot_leak_it() {
    let (_, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    // A page that reflects text an attacker chooses next to the token.
    let one = ann.get("/login?next=/recipes/new%3Fcsrf%3D0").await;
    let two = ann.get("/login?next=/recipes/new%3Fcsrf%3D0").await;
    let (first, second) = (form_token(&one, "/login"), form_token(&two, "/login"));
    assert_ne!(first, second, "the same secret twice, beside attacker text");
    let session = ann.cookie("forkful_session").unwrap();
    let fixed = forkful::domain::accounts::form_token(&session);
    assert!(
        !one.body.contains(&fixed),
        "the unmasked token is never sent"
    );
    // Either masked copy works, and the token unmasked does not.
    let account = ann.get("/account").await;
    for token in [&first, &second] {
        let attempt = ann
            .post(
                "/account/password",
                &[
                    ("csrf", token),
                    ("current", "wrong wrong wrong"),
                    ("new", "x"),
                ],
                Some(ORIGIN),
            )
            .await;
        assert_ne!(attempt.status, 403, "{}", attempt.body);
    }
    let bare = ann
        .post("/logout", &[("csrf", fixed.as_str())], Some(ORIGIN))
        .await;
    assert_eq!(bare.status, 403);
    let out = ann.submit(&account, "/logout", &[]).await;
    assert_eq!(out.status, 303);
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
    let not_a_form = browser
        .send(
            TestRequest::post()
                .uri("/signup")
                .insert_header(("Origin", ORIGIN))
                .insert_header(("Content-Type", "application/json"))
                .set_payload(format!("{{\"csrf\": \"{token}\"}}")),
        )
        .await;
    assert_eq!(not_a_form.status, 400);
    assert!(not_a_form.body.contains("nothing was changed"));
    let missing = browser
        .post("/signup", &[("csrf", &token)], Some(ORIGIN))
        .await;
    assert_eq!(missing.status, 422, "an empty form is a form with mistakes");
    assert!(stored(recipes.store()) == before);
}

/// The edit form's version (the retire form has one too).
const EDIT_BASED_ON: &str = "form.recipe-form input[name=based_on]";

/// The recipe form's fields for a small recipe, with `changes` over them.
pub(crate) fn recipe_fields<'a>(changes: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut fields = vec![
        ("title", "Weeknight Dal"),
        ("slug", ""),
        ("summary", "Red lentils, *quick*."),
        ("servings", "4"),
        ("prep", "10"),
        ("cook", "25"),
        ("ingredients", "1 cup red lentils\n3 cups water\n1 tsp turmeric"),
        ("steps", "Rinse the lentils.\n\nSimmer with the water and turmeric.\n\n## To serve\n\nSalt to taste."),
        ("tags", "Vegan, quick"),
        ("note", "First version"),
    ];
    for (name, value) in changes {
        match fields.iter_mut().find(|(n, _)| n == name) {
            Some(field) => field.1 = value,
            None => fields.push((name, value)),
        }
    }
    fields
}

/// The domain checks a recipe's content (`Content::checked`) and says every
/// mistake at once; the form shows each next to its field, and checks only
/// what is its own (that a number is one).
#[actix_web::test]
async fn a_recipe_form_with_several_mistakes_shows_each_next_to_its_field() {
    let (recipes, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let form = ann.get("/recipes/new").await;
    let before = stored(recipes.store());
    let long = "x".repeat(MAX_LINE + 1);
    let refused = ann
        .submit(
            &form,
            "/recipes/new",
            &recipe_fields(&[
                ("title", "  "),
                ("servings", "0"),
                ("prep", "soon"),
                ("cuisine", &long),
                ("tags", "quick, .."),
            ]),
        )
        .await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert_eq!(refused.texts("#title-error"), ["A recipe needs a title."]);
    assert_eq!(
        refused.texts("#servings-error"),
        ["Servings must be from 1 to 10000."]
    );
    assert_eq!(
        refused.texts("#prep-error"),
        [format!(
            "A whole number of minutes, from 0 to {}.",
            Minutes::MAX
        )]
    );
    assert_eq!(
        refused.texts("#cuisine-error"),
        [format!("The cuisine is longer than {MAX_LINE} characters.")]
    );
    assert_eq!(refused.texts("#tags-error").len(), 1);
    assert_eq!(
        refused.attrs("#prep", "value"),
        ["soon"],
        "what was typed is kept"
    );
    assert!(stored(recipes.store()) == before, "a refused recipe wrote");
}

/// `:recipe/language` is one row of `content::FIELDS`: the form shows it,
/// the store installs and keeps it, the page shows it, and an edit of it is
/// history like any other field's.
#[actix_web::test]
async fn a_recipe_says_what_language_it_is_written_in() {
    let (recipes, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let form = ann.get("/recipes/new").await;
    assert_eq!(form.texts("label[for=language]"), ["Language"]);
    let created = ann
        .submit(
            &form,
            "/recipes/new",
            &recipe_fields(&[("language", " Italian ")]),
        )
        .await;
    assert_eq!(created.status, 303, "{}", created.body);
    let page = ann.get("/recipes/weeknight-dal").await;
    assert!(
        page.texts(".meta")[0].contains("In Italian."),
        "{}",
        page.body
    );
    let slug = forkful::domain::Slug::parse("weeknight-dal").unwrap();
    let stored = recipes.snapshot().recipe(&slug).unwrap();
    assert_eq!(stored.content.language(), Some("Italian"));
    // Programs read it too: the JSON API, and search engines a Language.
    assert_eq!(page.json_ld()["inLanguage"]["@type"], "Language");
    assert_eq!(page.json_ld()["inLanguage"]["name"], "Italian");
    let json = ann.get("/recipes/weeknight-dal.json").await;
    let json: serde_json::Value = serde_json::from_str(&json.body).unwrap();
    assert_eq!(json["language"], "Italian");

    let form = ann.get("/recipes/weeknight-dal/edit").await;
    assert_eq!(form.attrs("#language", "value"), ["Italian"]);
    let saved = ann
        .submit(
            &form,
            "/recipes/weeknight-dal/edit",
            &recipe_fields(&[("language", "English"), ("note", "in English")]),
        )
        .await;
    assert_eq!(saved.status, 303, "{}", saved.body);
    let history = ann.get("/recipes/weeknight-dal/history").await;
    assert_eq!(history.texts(".versions .what")[0], "Changed: language");
    let first = recipes.snapshot().recipe(&slug).unwrap();
    assert_eq!(first.content.language(), Some("English"));
}

/// A row added to `content::FIELDS` after a store was made: the store gains
/// its attribute when the site next opens it, after every other attribute
/// (the search terms included), and it is read and written like the rest.
#[test]
fn a_store_made_before_a_field_was_added_gains_it_and_reads_it() {
    use forkful::store::{attribute_map, kw, Store, Transaction};
    let fresh = Recipes::temporary().unwrap();
    let older = Store::temporary().unwrap();
    let mut schema = Transaction::new();
    for a in fresh.store().db().schema().attributes() {
        let ident = a.ident.as_str();
        if a.ident.namespace() == Some("db") || a.ident == kw(":recipe/language") {
            continue;
        }
        let mut map = attribute_map(ident, a.value_type, a.cardinality, a.unique);
        if a.index {
            map = map.with(":db/index", true);
        }
        if a.is_component {
            map = map.with(":db/isComponent", true);
        }
        if let Some(doc) = &a.doc {
            map = map.with(":db/doc", doc.as_str());
        }
        schema.map(map);
    }
    older.transact(&schema).unwrap();
    assert!(older.db().attribute(&kw(":recipe/language")).is_err());

    let recipes = Recipes::open(older).unwrap();
    let db = recipes.store().db();
    let id = |ident: &str| db.attribute(&kw(ident)).unwrap().id;
    assert!(id(":recipe/language") > id(":recipe/terms"));
    let slug = forkful::domain::Slug::parse("dal").unwrap();
    let content = forkful::domain::ContentDraft {
        title: "Dal".into(),
        cuisine: Some("Indian".into()),
        language: Some("Hindi".into()),
        ..Default::default()
    };
    recipes
        .create(
            &slug,
            content.clone(),
            &forkful::domain::Change::by("ann", "first"),
        )
        .unwrap();
    assert_eq!(
        recipes.snapshot().recipe(&slug).unwrap().content,
        content.normalized().unwrap()
    );
}

/// A field that is one row of the attribute table (`domain::attributes`)
/// and its member of `Content`, and nothing else: `:recipe/cooking-method`,
/// the row the `testing` feature adds (schema.org's `cookingMethod`), with
/// no view of its own. The store installs it, after every other attribute;
/// the form takes it; the page shows it by its label, the JSON by its name
/// and the JSON-LD by its schema.org name; an edit of it is history; and
/// it is brought in from a page's JSON-LD (through the import form) and
/// microdata, and from the site's own page.
#[actix_web::test]
async fn a_field_added_to_the_table_is_everywhere_a_field_is() {
    use forkful::store::{kw, Cardinality, ValueType};
    let (recipes, site) = new_site();
    let db = recipes.store().db();
    let installed = db.attribute(&kw(":recipe/cooking-method")).unwrap();
    assert_eq!(
        (installed.value_type, installed.cardinality, installed.index),
        (ValueType::String, Cardinality::One, false)
    );
    assert!(installed
        .doc
        .as_deref()
        .unwrap()
        .starts_with("How the dish is cooked"));
    let newest = db.schema().attributes().iter().map(|a| a.id).max();
    assert_eq!(newest, Some(installed.id), "installed after every other");

    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let form = ann.get("/recipes/new").await;
    assert_eq!(form.texts("label[for=cooking_method]"), ["Cooking method"]);
    let created = ann
        .submit(
            &form,
            "/recipes/new",
            &recipe_fields(&[("cooking_method", " Steaming ")]),
        )
        .await;
    assert_eq!(created.status, 303, "{}", created.body);
    let slug = Slug::parse("weeknight-dal").unwrap();
    let stored = recipes.snapshot().recipe(&slug).unwrap();
    assert_eq!(stored.content.cooking_method(), Some("Steaming"));

    let page = ann.get("/recipes/weeknight-dal").await;
    assert!(
        page.texts(".meta")[0].contains("Cooking method: Steaming."),
        "{}",
        page.body
    );
    assert_eq!(page.json_ld()["cookingMethod"], "Steaming");
    let json: serde_json::Value =
        serde_json::from_str(&ann.get("/recipes/weeknight-dal.json").await.body).unwrap();
    assert_eq!(json["cooking_method"], "Steaming");
    let own = forkful::import::from_html(&page.body, "https://forkful.test/recipes/weeknight-dal")
        .unwrap();
    assert_eq!(own.content.cooking_method(), Some("Steaming"));

    let form = ann.get("/recipes/weeknight-dal/edit").await;
    assert_eq!(form.attrs("#cooking_method", "value"), ["Steaming"]);
    let saved = ann
        .submit(
            &form,
            "/recipes/weeknight-dal/edit",
            &recipe_fields(&[("cooking_method", "Frying"), ("note", "fried")]),
        )
        .await;
    assert_eq!(saved.status, 303, "{}", saved.body);
    let history = ann.get("/recipes/weeknight-dal/history").await;
    assert_eq!(
        history.texts(".versions .what")[0],
        "Changed: cooking method"
    );

    let json_ld = r#"<html><head><script type="application/ld+json">
        {"@context": "https://schema.org", "@type": "Recipe", "name": "Steamed Fish",
         "recipeIngredient": ["1 whole sea bass"], "recipeInstructions": ["Steam it."],
         "cookingMethod": "Steaming"}</script></head><body></body></html>"#;
    let form = ann.get("/import").await;
    let preview = ann
        .submit(
            &form,
            "/import",
            &[("url", "https://fish.example/steamed"), ("html", json_ld)],
        )
        .await;
    assert_eq!(preview.status, 200, "{}", preview.body);
    assert_eq!(preview.attrs("#cooking_method", "value"), ["Steaming"]);
    let brought = crate::import::bring_in(&mut ann, &preview, &[]).await;
    assert_eq!(brought.status, 303, "{}", brought.body);
    let fish = recipes
        .snapshot()
        .recipe(&Slug::parse("steamed-fish").unwrap())
        .unwrap();
    assert_eq!(fish.content.cooking_method(), Some("Steaming"));

    let microdata = r#"<html><body><div itemscope itemtype="https://schema.org/Recipe">
        <h1 itemprop="name">Fried Eggs</h1><span itemprop="cookingMethod">Frying</span>
        <ul><li itemprop="recipeIngredient">2 eggs</li></ul>
        <p itemprop="recipeInstructions">Fry the eggs.</p></div></body></html>"#;
    let eggs = forkful::import::from_html(microdata, "https://eggs.example/fried").unwrap();
    assert_eq!(eggs.content.cooking_method(), Some("Frying"));
}

#[actix_web::test]
async fn a_cook_writes_edits_and_forks_and_every_page_shows_it() {
    let (_, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let form = ann.get("/recipes/new").await;
    assert_eq!(form.status, 200);
    let created = ann.submit(&form, "/recipes/new", &recipe_fields(&[])).await;
    assert_eq!(created.status, 303, "{}", created.body);
    assert_eq!(created.header("location"), Some("/recipes/weeknight-dal"));
    let page = ann.get("/recipes/weeknight-dal").await;
    assert_eq!(page.texts("h1"), ["Weeknight Dal"]);
    assert_eq!(page.texts(".method h3"), ["To serve"]);

    for (n, water) in [(2, "4 cups water"), (3, "5 cups water")] {
        let form = ann.get("/recipes/weeknight-dal/edit").await;
        assert_eq!(form.attrs(EDIT_BASED_ON, "value"), [(n - 1).to_string()]);
        let ingredients = format!("1 cup red lentils\n{water}\n1 tsp turmeric");
        let note = format!("more water, take {n}");
        let saved = ann
            .submit(
                &form,
                "/recipes/weeknight-dal/edit",
                &recipe_fields(&[("ingredients", &ingredients), ("note", &note)]),
            )
            .await;
        assert_eq!(saved.status, 303, "{}", saved.body);
    }
    let history = ann.get("/recipes/weeknight-dal/history").await;
    let notes = history.texts(".versions .note");
    assert_eq!(
        notes,
        ["more water, take 3", "more water, take 2", "First version"]
    );
    let diff = ann.get("/recipes/weeknight-dal/diff?from=2&to=3").await;
    assert_eq!(diff.texts("li.changed ins"), ["added: 5"], "{}", diff.body);

    let mut ben = Browser::new(&site);
    sign_up(&mut ben, "ben").await;
    let form = ben.get("/recipes/weeknight-dal/fork?version=2").await;
    assert_eq!(form.attrs("#slug", "value"), ["weeknight-dal-ben"]);
    assert_eq!(form.attrs("input[name=version]", "value"), ["2"]);
    let forked = ben
        .submit(
            &form,
            "/recipes/weeknight-dal/fork",
            &recipe_fields(&[
                ("slug", "weeknight-dal-ben"),
                ("title", "Ben's Dal"),
                ("note", "forked"),
            ]),
        )
        .await;
    assert_eq!(forked.status, 303, "{}", forked.body);
    let fork = ben.get("/recipes/weeknight-dal-ben").await;
    assert_eq!(fork.texts(".lineage li a"), ["Weeknight Dal"]);
    assert_eq!(
        fork.attrs(".lineage li a", "href"),
        ["/recipes/weeknight-dal/versions/2"]
    );
    let form = ben.get("/recipes/weeknight-dal-ben/edit").await;
    let edited = ben
        .submit(
            &form,
            "/recipes/weeknight-dal-ben/edit",
            &recipe_fields(&[
                ("title", "Ben's Dal"),
                ("tags", "vegan, spicy"),
                ("note", "spicier"),
            ]),
        )
        .await;
    assert_eq!(edited.status, 303, "{}", edited.body);

    let tree = ben.get("/recipes/weeknight-dal/forks").await;
    assert!(
        tree.body.contains("Ben&#39;s Dal") || tree.body.contains("Ben's Dal"),
        "{}",
        tree.body
    );
    let feed = ben.get("/feed.xml").await;
    assert!(feed.body.contains("weeknight-dal-ben"));
    let search = ben.get("/search?q=spicy").await;
    let found = search.attrs("main a", "href");
    assert!(
        found.contains(&"/recipes/weeknight-dal-ben".to_owned()),
        "{}",
        search.body
    );
    assert!(
        !found.contains(&"/recipes/weeknight-dal".to_owned()),
        "only the spicy one"
    );
}

#[actix_web::test]
async fn a_stale_edit_decided_while_the_edit_it_lost_to_is_flushing_is_409_not_404() {
    use forkful::domain::{Change, Slug, VersionNumber};
    use forkful::store::testing::FlushFault;
    let (recipes, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let form = ann.get("/recipes/new").await;
    ann.submit(&form, "/recipes/new", &recipe_fields(&[])).await;
    let second = ann.get("/recipes/weeknight-dal/edit").await;
    // Another edit from version 1, whose flush takes a while: while it
    // runs, version 2 is applied, and refuses edits from version 1, but is
    // not yet published for readers.
    recipes.store().inject_flush_fault(FlushFault::Slow);
    let writer = recipes.clone();
    let first = std::thread::spawn(move || {
        let slug = Slug::parse("weeknight-dal").unwrap();
        let mut content = writer
            .snapshot()
            .recipe(&slug)
            .unwrap()
            .content
            .into_draft();
        content.notes = Some("Theirs.".into());
        writer.edit(
            &slug,
            VersionNumber::FIRST,
            content,
            &Change::by("ann", "theirs"),
        )
    });
    // Well inside the slow flush (a second): version 2 applied long since.
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!first.is_finished(), "the first edit is still flushing");
    let stale = ann
        .submit(
            &second,
            "/recipes/weeknight-dal/edit",
            &recipe_fields(&[("notes", "My own notes."), ("note", "notes")]),
        )
        .await;
    assert_eq!(stale.status, 409, "{}", stale.body);
    assert_eq!(stale.texts("#notes"), ["My own notes."]);
    first.join().unwrap().unwrap();
}

#[actix_web::test]
async fn a_stale_edit_is_409_and_keeps_the_text_and_another_cooks_edit_is_403() {
    let (recipes, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let form = ann.get("/recipes/new").await;
    ann.submit(&form, "/recipes/new", &recipe_fields(&[])).await;
    let first = ann.get("/recipes/weeknight-dal/edit").await;
    let second = ann.get("/recipes/weeknight-dal/edit").await;
    let saved = ann
        .submit(
            &first,
            "/recipes/weeknight-dal/edit",
            &recipe_fields(&[("servings", "6"), ("note", "serves 6")]),
        )
        .await;
    assert_eq!(saved.status, 303);
    let before = stored(recipes.store());
    let stale = ann
        .submit(
            &second,
            "/recipes/weeknight-dal/edit",
            &recipe_fields(&[("notes", "My own notes."), ("note", "notes")]),
        )
        .await;
    assert_eq!(stale.status, 409);
    assert_eq!(stale.texts("#notes"), ["My own notes."], "the text is kept");
    assert!(stale.body.contains("version 2"), "{}", stale.body);
    assert_eq!(
        stale.attrs(EDIT_BASED_ON, "value"),
        ["2"],
        "the form now edits the newest"
    );
    assert!(stored(recipes.store()) == before, "a stale edit wrote");
    let again = ann
        .submit(
            &stale,
            "/recipes/weeknight-dal/edit",
            &recipe_fields(&[
                ("servings", "6"),
                ("notes", "My own notes."),
                ("note", "notes"),
            ]),
        )
        .await;
    assert_eq!(again.status, 303, "saved on top of version 2");

    let unchanged = ann.get("/recipes/weeknight-dal/edit").await;
    let nothing = ann
        .submit(
            &unchanged,
            "/recipes/weeknight-dal/edit",
            &recipe_fields(&[
                ("servings", "6"),
                ("notes", "My own notes."),
                ("note", "again"),
            ]),
        )
        .await;
    assert_eq!(nothing.status, 422);
    assert!(nothing.body.contains("Nothing changed"));
    // A browser sends a textarea's lines apart by CRLF: the same notes
    // saved again from its form are no change.
    let two_lines = ann.get("/recipes/weeknight-dal/edit").await;
    let saved = ann
        .submit(
            &two_lines,
            "/recipes/weeknight-dal/edit",
            &recipe_fields(&[
                ("servings", "6"),
                ("notes", "My own notes.\n\nSoak overnight."),
                ("note", "two paragraphs"),
            ]),
        )
        .await;
    assert_eq!(saved.status, 303, "{}", saved.body);
    let from_browser = ann.get("/recipes/weeknight-dal/edit").await;
    let same = ann
        .submit(
            &from_browser,
            "/recipes/weeknight-dal/edit",
            &recipe_fields(&[
                ("servings", "6"),
                ("notes", "My own notes.\r\n\r\nSoak overnight."),
                ("note", "from a browser"),
            ]),
        )
        .await;
    assert_eq!(same.status, 422, "{}", same.body);
    assert!(same.body.contains("Nothing changed"));

    let mut ben = Browser::new(&site);
    sign_up(&mut ben, "ben").await;
    assert_eq!(ben.get("/recipes/weeknight-dal/edit").await.status, 403);
    let token_page = ben.get("/account").await;
    let token = form_token(&token_page, "/logout");
    let mut fields = recipe_fields(&[("title", "Mine now"), ("note", "hijack")]);
    fields.push(("based_on", "3"));
    fields.push(("csrf", &token));
    let before = stored(recipes.store());
    let hijack = ben
        .post("/recipes/weeknight-dal/edit", &fields, Some(ORIGIN))
        .await;
    assert_eq!(hijack.status, 403);
    let retire = ben
        .post(
            "/recipes/weeknight-dal/retire",
            &[("csrf", &token), ("based_on", "3")],
            Some(ORIGIN),
        )
        .await;
    assert_eq!(retire.status, 403);
    assert!(
        stored(recipes.store()) == before,
        "another cook's edit wrote"
    );
}

#[actix_web::test]
async fn a_form_with_bad_fields_says_which_and_writes_nothing() {
    let (recipes, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let form = ann.get("/recipes/new").await;
    let before = stored(recipes.store());
    let bad = ann
        .submit(
            &form,
            "/recipes/new",
            &recipe_fields(&[
                ("title", " "),
                ("servings", "many"),
                ("prep", "-5"),
                ("image", "javascript:alert(1)"),
                ("note", ""),
            ]),
        )
        .await;
    assert_eq!(bad.status, 422);
    for field in ["title", "servings", "prep", "image", "note"] {
        assert_eq!(
            bad.texts(&format!("#{field}-error")).len(),
            1,
            "{field}: {}",
            bad.body
        );
    }
    assert_eq!(
        bad.attrs("#prep", "value"),
        ["-5"],
        "what was typed is kept"
    );
    let many_tags: String = (0..40).map(|i| format!("tag{i},")).collect();
    let too_many = ann
        .submit(
            &form,
            "/recipes/new",
            &recipe_fields(&[("tags", &many_tags)]),
        )
        .await;
    assert_eq!(too_many.status, 422);
    assert!(
        too_many.body.contains("at most 30 tags"),
        "{}",
        too_many.body
    );
    assert!(stored(recipes.store()) == before);
    let anonymous = crate::helpers::get(&site, "/recipes/new").await;
    assert_eq!(anonymous.status, 303);
    assert_eq!(
        anonymous.header("location"),
        Some("/login?next=/recipes/new")
    );
}

#[actix_web::test]
async fn no_recipe_takes_the_new_recipe_forms_address_and_no_tag_is_only_dots() {
    let (recipes, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let form = ann.get("/recipes/new").await;
    let before = stored(recipes.store());
    let asked = ann
        .submit(
            &form,
            "/recipes/new",
            &recipe_fields(&[("title", "New"), ("slug", "new")]),
        )
        .await;
    assert_eq!(asked.status, 409, "{}", asked.body);
    assert_eq!(
        asked.texts("#slug-error"),
        ["/recipes/new is one of the site's own pages: choose another address."]
    );
    for tags in [".", "quick, ..", "..."] {
        let bare = ann
            .submit(&form, "/recipes/new", &recipe_fields(&[("tags", tags)]))
            .await;
        assert_eq!(bare.status, 422, "{tags}");
        assert!(bare.body.contains("is only dots"), "{}", bare.body);
    }
    assert!(stored(recipes.store()) == before, "a refused form wrote");
    let titled = ann
        .submit(&form, "/recipes/new", &recipe_fields(&[("title", "New")]))
        .await;
    assert_eq!(titled.status, 303, "{}", titled.body);
    assert_eq!(titled.header("location"), Some("/recipes/new-recipe"));
    let page = ann.get("/recipes/new-recipe").await;
    assert_eq!(page.status, 200);
    assert_eq!(page.texts("h1"), ["New"]);
}

/// Issue 31: a title in any language gets an address a person can read,
/// and a recipe saved under an address made the old way keeps it.
#[actix_web::test]
async fn a_title_in_any_language_gets_a_readable_address_and_old_ones_keep_working() {
    use forkful::domain::{Change, ContentDraft, Slug};
    let (recipes, site) = new_site();
    // Saved before titles were spelled in ASCII: its letters dropped.
    let old = ContentDraft {
        title: "Crème brûlée".into(),
        ingredients: vec!["4 egg yolks".into()],
        ..ContentDraft::default()
    };
    recipes
        .create(
            &Slug::parse("crme-brle").unwrap(),
            old,
            &Change::by("bo", "first"),
        )
        .unwrap();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let form = ann.get("/recipes/new").await;
    for (title, address) in [
        ("Crème brûlée", "/recipes/creme-brulee"),
        ("Smørrebrød", "/recipes/smorrebrod"),
        ("Nonna's ragù", "/recipes/nonnas-ragu"),
        ("親子丼", "/recipes/qin-zi-jing"),
    ] {
        let saved = ann
            .submit(&form, "/recipes/new", &recipe_fields(&[("title", title)]))
            .await;
        assert_eq!(saved.status, 303, "{title}: {}", saved.body);
        assert_eq!(saved.header("location"), Some(address), "{title}");
        let page = ann.get(address).await;
        assert_eq!(page.texts("h1"), [title]);
    }
    let kept = ann.get("/recipes/crme-brle").await;
    assert_eq!(kept.status, 200);
    assert_eq!(kept.texts("h1"), ["Crème brûlée"]);
}

#[actix_web::test]
async fn fifty_cooks_forking_one_recipe_at_once_get_fifty_forks() {
    let (_, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let form = ann.get("/recipes/new").await;
    ann.submit(&form, "/recipes/new", &recipe_fields(&[])).await;
    let mut cooks = Vec::new();
    for i in 0..50 {
        let mut cook = Browser::new(&site);
        sign_up(&mut cook, &format!("cook-{i}")).await;
        let form = cook.get("/recipes/weeknight-dal/fork").await;
        cooks.push((cook, form));
    }
    // Each cook on a thread of its own, all sending at once.
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(cooks.len()));
    let threads: Vec<_> = cooks
        .into_iter()
        .map(|(mut cook, form)| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                actix_web::rt::System::new().block_on(async move {
                    let slug = form.attrs("#slug", "value").remove(0);
                    let fields = recipe_fields(&[("slug", &slug), ("note", "forked")]);
                    barrier.wait();
                    let done = cook
                        .submit(&form, "/recipes/weeknight-dal/fork", &fields)
                        .await;
                    (done.status, done.header("location").map(str::to_owned))
                })
            })
        })
        .collect();
    let outcomes: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let mut locations: Vec<_> = outcomes
        .iter()
        .map(|(s, l)| (*s, l.clone().unwrap_or_default()))
        .collect();
    assert!(locations.iter().all(|(s, _)| *s == 303), "{locations:?}");
    locations.sort();
    locations.dedup();
    assert_eq!(locations.len(), 50, "distinct slugs");
    let page = ann.get("/recipes/weeknight-dal").await;
    assert_eq!(page.texts(".forks li").len(), 50);
    assert_eq!(page.texts(".family h3"), ["50 forks"]);
}

/// A form sent again (its first answer lost, or a second click) is saved
/// once and answered as the first send was, whatever the form: a fork
/// whose address the writer chooses, an edit (not "changed meanwhile"), a
/// new recipe (not "the address is taken"), a retirement. The same page
/// sent with other fields is another change.
#[actix_web::test]
async fn a_form_sent_twice_is_saved_once_and_answered_alike() {
    let (recipes, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let new = ann.get("/recipes/new").await;
    let fields = recipe_fields(&[]);
    let created = ann.submit(&new, "/recipes/new", &fields).await;
    let again = ann.submit(&new, "/recipes/new", &fields).await;
    assert_eq!(created.status, 303, "{}", created.body);
    assert_eq!(
        (again.status, again.header("location")),
        (303, created.header("location"))
    );
    let mut ben = Browser::new(&site);
    sign_up(&mut ben, "ben").await;
    let form = ben.get("/recipes/weeknight-dal/fork").await;
    let action = "/recipes/weeknight-dal/fork";
    let fields = recipe_fields(&[("slug", ""), ("note", "mine")]);
    let forked = ben.submit(&form, action, &fields).await;
    let again = ben.submit(&form, action, &fields).await;
    assert_eq!(forked.status, 303, "{}", forked.body);
    let fork = forked.header("location").unwrap().to_owned();
    assert_eq!(
        (again.status, again.header("location")),
        (303, Some(fork.as_str()))
    );
    let parent = ann.get("/recipes/weeknight-dal").await;
    assert_eq!(parent.texts(".forks li").len(), 1, "one fork");
    // The same page with other fields: another fork.
    let other = recipe_fields(&[("slug", ""), ("title", "Ben's Other Dal"), ("note", "mine")]);
    let second = ben.submit(&form, action, &other).await;
    assert_eq!(second.status, 303, "{}", second.body);
    assert_ne!(second.header("location"), Some(fork.as_str()));
    let parent = ann.get("/recipes/weeknight-dal").await;
    assert_eq!(parent.texts(".forks li").len(), 2);
    // An edit sent twice: one new version, and the second answered as the
    // first (it would otherwise be based on a version that moved on).
    let edit = ben.get(&format!("{fork}/edit")).await;
    let fields = recipe_fields(&[("title", "Ben's Hotter Dal"), ("note", "hotter")]);
    let edited = ben.submit(&edit, &format!("{fork}/edit"), &fields).await;
    let again = ben.submit(&edit, &format!("{fork}/edit"), &fields).await;
    assert_eq!(edited.status, 303, "{}", edited.body);
    assert_eq!(
        (again.status, again.header("location")),
        (303, Some(fork.as_str()))
    );
    let slug = Slug::parse(fork.trim_start_matches("/recipes/")).unwrap();
    assert_eq!(recipes.snapshot().current(&slug).unwrap().version_count, 2);
    // Retired twice: to its history both times, and retired once.
    let edit = ben.get(&format!("{fork}/edit")).await;
    let retire = format!("{fork}/retire");
    let retired = ben.submit(&edit, &retire, &[]).await;
    let again = ben.submit(&edit, &retire, &[]).await;
    let history = format!("{fork}/history");
    assert_eq!(retired.header("location"), Some(history.as_str()));
    assert_eq!(
        (again.status, again.header("location")),
        (303, Some(history.as_str()))
    );
    assert_eq!(recipes.snapshot().recipe(&slug).unwrap().version_count, 3);
}

#[actix_web::test]
async fn the_preview_renders_the_fields_exactly_as_the_page_will() {
    let (recipes, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let form = ann.get("/recipes/new").await;
    assert_eq!(form.attrs("section.preview", "aria-live"), ["polite"]);
    // As the script sends it: the recipe form's fields, its token included.
    let token = form_token(&form, "/recipes/new");
    let with_token = |fields: Vec<(&'static str, &'static str)>| {
        let mut all = vec![("csrf", token.as_str())];
        all.extend(fields);
        all
    };
    let summary = "Red lentils, *quick*. <script>alert(1)</script>";
    let fields = recipe_fields(&[("summary", summary)]);
    let before = stored(recipes.store());
    let preview = ann
        .post("/preview", &with_token(fields.clone()), Some(ORIGIN))
        .await;
    assert_eq!(preview.status, 200, "{}", preview.body);
    assert_eq!(preview.header("cache-control"), Some("private, no-store"));
    assert!(
        stored(recipes.store()) == before,
        "a preview writes nothing"
    );
    assert!(preview.texts("script").is_empty(), "{}", preview.body);
    assert_eq!(preview.texts(".summary em"), ["quick"]);
    ann.submit(&form, "/recipes/new", &fields).await;
    let page = ann.get("/recipes/weeknight-dal").await;
    // The bytes of the summary, and from the facts to the end of the
    // method, as sent (the author and date between them come with saving).
    // The servings control comes with saving too: only a saved recipe
    // can be scaled.
    let part = |page: &Page, from: &str, to: &str| {
        let start = page.body.find(from).unwrap();
        let end = page.body[start..].find(to).unwrap();
        let part = &page.body[start..start + end];
        match (part.find("<form class=\"scale\""), part.find("</form>")) {
            (Some(a), Some(b)) => format!("{}{}", &part[..a], &part[b + "</form>".len()..]),
            _ => part.to_owned(),
        }
    };
    for (from, to) in [
        ("<div class=\"summary\">", "</div>"),
        ("<dl class=\"facts\">", "</section></div>"),
    ] {
        assert_eq!(part(&preview, from, to), part(&page, from, to));
    }

    // The note goes to the history, not the page, and is written last: a
    // form without one yet still previews.
    let unsaid = recipe_fields(&[("note", "")]);
    let unsaid = ann
        .post("/preview", &with_token(unsaid), Some(ORIGIN))
        .await;
    assert_eq!(unsaid.status, 200, "{}", unsaid.body);
    assert_eq!(unsaid.texts("article.recipe h1"), ["Weeknight Dal"]);

    let bad = recipe_fields(&[("title", ""), ("prep", "x")]);
    let bad = ann.post("/preview", &with_token(bad), Some(ORIGIN)).await;
    assert_eq!(bad.status, 422);
    assert_eq!(bad.texts(".form-error li").len(), 2, "{}", bad.body);
    let forged = ann.post("/preview", &fields, Some(ORIGIN)).await;
    assert_eq!(forged.status, 403, "no token");
}

#[actix_web::test]
async fn a_post_without_a_token_is_403_whatever_the_form() {
    let (recipes, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let form = ann.get("/recipes/new").await;
    ann.submit(&form, "/recipes/new", &recipe_fields(&[])).await;
    let before = stored(recipes.store());
    for action in [
        "/signup",
        "/login",
        "/logout",
        "/logout/everywhere",
        "/account/password",
        "/recipes/new",
        "/recipes/weeknight-dal/edit",
        "/recipes/weeknight-dal/fork",
        "/recipes/weeknight-dal/retire",
        "/preview",
        "/import",
    ] {
        let page = ann.post(action, &[], Some(ORIGIN)).await;
        assert_eq!(page.status, 403, "{action}: {}", page.body);
    }
    assert!(stored(recipes.store()) == before);
    assert_eq!(ann.get("/account").await.status, 200, "still logged in");
}

/// Ann writes Weeknight Dal and Ben forks it as `bens-dal` titled `title`:
/// their two browsers, logged in.
async fn ann_writes_and_ben_forks(site: &Data<Site>, title: &str) -> (Browser, Browser) {
    let mut ann = Browser::new(site);
    sign_up(&mut ann, "ann").await;
    let form = ann.get("/recipes/new").await;
    ann.submit(&form, "/recipes/new", &recipe_fields(&[])).await;
    let mut ben = Browser::new(site);
    sign_up(&mut ben, "ben").await;
    let form = ben.get("/recipes/weeknight-dal/fork").await;
    let fields = recipe_fields(&[("slug", "bens-dal"), ("title", title), ("note", "mine")]);
    let forked = ben
        .submit(&form, "/recipes/weeknight-dal/fork", &fields)
        .await;
    assert_eq!(forked.status, 303, "{}", forked.body);
    (ann, ben)
}

#[actix_web::test]
async fn a_fork_sent_by_hand_after_its_parent_retired_is_gone_and_makes_nothing() {
    let (_, site) = new_site();
    let (mut ann, mut ben) = ann_writes_and_ben_forks(&site, "Ben's Dal").await;
    // Ben holds a fork form shown while the recipe was live.
    let form = ben.get("/recipes/weeknight-dal/fork").await;
    assert_eq!(form.status, 200);
    let edit = ann.get("/recipes/weeknight-dal/edit").await;
    let retired = ann
        .submit(&edit, "/recipes/weeknight-dal/retire", &[])
        .await;
    assert_eq!(retired.status, 303, "{}", retired.body);
    assert_eq!(ben.get("/recipes/weeknight-dal/fork").await.status, 410);
    let fields = recipe_fields(&[("slug", "late-dal"), ("note", "too late")]);
    let late = ben
        .submit(&form, "/recipes/weeknight-dal/fork", &fields)
        .await;
    assert_eq!(late.status, 410, "{}", late.body);
    assert_eq!(ben.get("/recipes/late-dal").await.status, 404);
}

#[actix_web::test]
async fn a_cooks_page_lists_their_recipes_and_forks() {
    let (_, site) = new_site();
    let (mut ann, mut ben) = ann_writes_and_ben_forks(&site, "Ben's Dal").await;
    let page = ann.get("/recipes/weeknight-dal").await;
    assert_eq!(
        page.attrs(".meta a[href^=\"/cooks/\"]", "href"),
        ["/cooks/ann"]
    );
    let ann_page = ann.get("/cooks/ann").await;
    assert_eq!(ann_page.status, 200);
    assert_eq!(ann_page.texts(".recipe-card h2"), ["Weeknight Dal"]);
    assert_eq!(ann_page.texts("main h2"), ["Recipes", "Weeknight Dal"]);
    let ben_page = ben.get("/cooks/ben").await;
    assert_eq!(ben_page.texts("main > h2"), ["Forks"]);
    assert_eq!(ben_page.texts(".recipe-card h2"), ["Ben's Dal"]);
    assert_eq!(ben.get("/cooks/nobody").await.status, 404);
    assert_eq!(ben.get("/cooks/Not%20A%20Handle").await.status, 404);
}

#[actix_web::test]
async fn a_cook_with_nothing_published_has_no_page_as_a_handle_no_one_has() {
    let (_, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let mut reader = Browser::new(&site);
    let ann_page = reader.get("/cooks/ann").await;
    let nobody = reader.get("/cooks/annx").await;
    assert_eq!(ann_page.status, 404);
    assert_eq!(nobody.status, 404);
    assert_eq!(
        ann_page.texts("main"),
        nobody
            .texts("main")
            .iter()
            .map(|t| t.replace("annx", "ann"))
            .collect::<Vec<_>>()
    );
    // Once ann publishes, her page is there; once she retires it, gone again.
    let form = ann.get("/recipes/new").await;
    ann.submit(&form, "/recipes/new", &recipe_fields(&[])).await;
    assert_eq!(reader.get("/cooks/ann").await.status, 200);
    let edit = ann.get("/recipes/weeknight-dal/edit").await;
    let retired = ann
        .submit(&edit, "/recipes/weeknight-dal/retire", &[])
        .await;
    assert_eq!(retired.status, 303, "{}", retired.body);
    assert_eq!(reader.get("/cooks/ann").await.status, 404);
}

#[actix_web::test]
async fn login_and_sign_up_attempts_are_limited_per_address_and_per_account() {
    use forkful::web::rate_limits::ATTEMPTS_PER_MINUTE;
    let (_, site) = new_site();
    let mut browser = Browser::new(&site);
    sign_up(&mut browser, "ann").await;
    sign_up(&mut browser, "ben").await;
    let account = browser.get("/account").await;
    browser.submit(&account, "/logout", &[]).await;
    let form = browser.get("/login").await;
    let token = form_token(&form, "/login");
    let attempt = |from: &'static str, handle: &'static str, token: &str| {
        TestRequest::post()
            .uri("/login")
            .peer_addr(from.parse().unwrap())
            .insert_header(("Origin", ORIGIN))
            .set_form([
                ("csrf", token),
                ("handle", handle),
                ("password", "a wrong guess"),
            ])
    };
    // Junk without the form's token is refused and charged to no one.
    for _ in 0..ATTEMPTS_PER_MINUTE * 2 {
        let junk = browser.send(attempt("10.0.0.1:4000", "ann", "junk")).await;
        assert_eq!(junk.status, 403);
    }
    let started = Instant::now();
    for _ in 0..ATTEMPTS_PER_MINUTE {
        let guess = browser.send(attempt("10.0.0.1:4000", "ben", &token)).await;
        assert_eq!(guess.status, 401);
    }
    let limited = limited_within_refills(&mut browser, started, |_| {
        attempt("10.0.0.1:4001", "nobody-in-particular", &token)
    })
    .await;
    assert_eq!(limited.header("retry-after"), Some("60"));
    assert!(limited.body.contains("wait a minute"));
    // At once, before the bucket can refill: sign-up shares its limit.
    let sign_up = TestRequest::post()
        .uri("/signup")
        .peer_addr("10.0.0.1:4002".parse().unwrap())
        .insert_header(("Origin", ORIGIN))
        .set_form([
            ("csrf", token.as_str()),
            ("handle", "cat"),
            ("name", "Cat"),
            ("password", PASSWORD),
        ]);
    assert_eq!(
        browser.send(sign_up).await.status,
        429,
        "sign-up shares the address's limit"
    );
    let elsewhere = browser.send(attempt("10.0.0.2:4000", "ann", &token)).await;
    assert_eq!(elsewhere.status, 401, "another address, another account");
    // Many addresses guessing one account are slowed as one.
    let started = Instant::now();
    for n in 1..ATTEMPTS_PER_MINUTE {
        let from: &'static str = format!("10.1.0.{n}:4000").leak();
        assert_eq!(browser.send(attempt(from, "ann", &token)).await.status, 401);
    }
    let by_account = limited_within_refills(&mut browser, started, |k| {
        attempt(format!("10.2.0.{}:4000", k + 1).leak(), "ann", &token)
    })
    .await;
    assert!(
        by_account.body.contains("the account ann"),
        "{}",
        by_account.body
    );
    // An IPv6 client is one client across its /64.
    let started = Instant::now();
    for n in 0..ATTEMPTS_PER_MINUTE {
        let from: &'static str = format!("[2001:db8:1:2::{n:x}]:4000").leak();
        let guess = browser.send(attempt(from, "nobody", &token)).await;
        assert_eq!(guess.status, 401);
    }
    limited_within_refills(&mut browser, started, |k| {
        attempt(
            format!("[2001:db8:1:2:ffff::{:x}]:4000", k + 1).leak(),
            "x",
            &token,
        )
    })
    .await;
}

/// The answer 429 that a bucket spent since `started` gives the next
/// attempt (`attempt(0)`, then `attempt(1)`...). A minute's bucket
/// refills a cell every 60 / `ATTEMPTS_PER_MINUTE` seconds, and ten
/// Argon2 checks on a loaded machine can take longer: as many more
/// attempts as it refilled meanwhile may be let through (401) first.
async fn limited_within_refills(
    browser: &mut Browser,
    started: Instant,
    mut attempt: impl FnMut(u32) -> TestRequest,
) -> Page {
    use forkful::web::rate_limits::ATTEMPTS_PER_MINUTE;
    let cell = Duration::from_secs(60) / ATTEMPTS_PER_MINUTE;
    let mut tries = 0;
    loop {
        let answer = browser.send(attempt(tries)).await;
        if answer.status == 429 {
            return answer;
        }
        let refilled = started.elapsed().as_nanos() / cell.as_nanos();
        assert!(
            answer.status == 401 && u128::from(tries) < refilled,
            "attempt {tries} past the limit, {:?} after the first, answered {}: {}",
            started.elapsed(),
            answer.status,
            answer.body
        );
        tries += 1;
    }
}

/// Anyone could once keep a chosen cook from logging in: guesses at her
/// account from addresses of their own spent the account's bucket, and
/// her right password was then refused too. An address she logged in
/// from lately is held to its own bucket only.
#[actix_web::test]
async fn guesses_from_elsewhere_do_not_lock_a_cook_out_of_her_own_address() {
    use forkful::web::rate_limits::ATTEMPTS_PER_MINUTE;
    let (_, site) = new_site();
    let mut browser = Browser::new(&site);
    let form = browser.get("/login").await;
    let token = form_token(&form, "/login");
    let log_in = |from: &'static str, password: &'static str, token: &str| {
        TestRequest::post()
            .uri("/login")
            .peer_addr(from.parse().unwrap())
            .insert_header(("Origin", ORIGIN))
            .set_form([("csrf", token), ("handle", "maya"), ("password", password)])
    };
    // Maya signs up from her address, in a browser of her own.
    let mut hers = Browser::new(&site);
    let form = hers.get("/signup").await;
    let her_token = form_token(&form, "/signup");
    let sign_up = TestRequest::post()
        .uri("/signup")
        .peer_addr("10.5.0.1:4000".parse().unwrap())
        .insert_header(("Origin", ORIGIN))
        .set_form([
            ("csrf", her_token.as_str()),
            ("handle", "maya"),
            ("name", "Maya"),
            ("password", PASSWORD),
        ]);
    assert_eq!(hers.send(sign_up).await.status, 303);
    // Guesses at her account from many addresses spend its bucket.
    for n in 0..ATTEMPTS_PER_MINUTE {
        let from: &'static str = format!("10.6.0.{n}:4000").leak();
        let guess = browser.send(log_in(from, "a wrong guess", &token)).await;
        assert_eq!(guess.status, 401);
    }
    let more = browser
        .send(log_in("10.6.1.1:4000", "a wrong guess", &token))
        .await;
    assert_eq!(more.status, 429, "the account's bucket is spent");
    // From her own address, she logs in.
    let hers = browser
        .send(log_in("10.5.0.1:4000", PASSWORD, &token))
        .await;
    assert_eq!(hers.status, 303, "{}", hers.body);
    // A new address of hers waits out the account's minute, as a guesser.
    let mut elsewhere = Browser::new(&site);
    let form = elsewhere.get("/login").await;
    let fresh = form_token(&form, "/login");
    let new_place = elsewhere
        .send(log_in("10.7.0.1:4000", PASSWORD, &fresh))
        .await;
    assert_eq!(new_place.status, 429);
}

#[actix_web::test]
async fn behind_a_trusted_proxy_each_client_has_its_own_limit_and_nothing_else_is_believed() {
    use forkful::web::client_address::{ForwardedHeader, TrustedProxies};
    use forkful::web::rate_limits::ATTEMPTS_PER_MINUTE;
    let recipes = Recipes::temporary().unwrap();
    let proxies = TrustedProxies::new(
        vec!["10.9.9.9".parse().unwrap()],
        ForwardedHeader::XForwardedFor,
    );
    let site = Data::new(Site::new(recipes, ORIGIN).with_trusted_proxies(proxies));
    let mut browser = Browser::new(&site);
    let form = browser.get("/login").await;
    let token = form_token(&form, "/login");
    let attempt = |peer: &str, forwarded: &str, handle: &str| {
        TestRequest::post()
            .uri("/login")
            .peer_addr(peer.parse().unwrap())
            .insert_header(("Origin", ORIGIN))
            .insert_header(("X-Forwarded-For", forwarded.to_owned()))
            .set_form([
                ("csrf", token.as_str()),
                ("handle", handle),
                ("password", "a wrong guess"),
            ])
    };
    // One visitor behind the proxy uses up their own bucket...
    for n in 0..ATTEMPTS_PER_MINUTE {
        let handle = format!("someone-{n}");
        let sent = attempt("10.9.9.9:1", "198.51.100.7", &handle);
        assert_eq!(browser.send(sent).await.status, 401);
    }
    let sent = attempt("10.9.9.9:1", "198.51.100.7", "someone-else");
    assert_eq!(browser.send(sent).await.status, 429);
    // ...and writing another address left of the proxy's entry changes
    // nothing: only what the proxy added is read.
    let sent = attempt("10.9.9.9:1", "203.0.113.1, 198.51.100.7", "someone-else");
    assert_eq!(browser.send(sent).await.status, 429);
    // Everyone else behind the same proxy still logs in.
    let sent = attempt("10.9.9.9:1", "198.51.100.8", "someone-else");
    assert_eq!(browser.send(sent).await.status, 401);
    // A peer that is not the proxy is the client, whatever it says.
    for n in 0..ATTEMPTS_PER_MINUTE {
        let sent = attempt("192.0.2.5:1", &format!("203.0.113.{n}"), "x");
        assert_eq!(browser.send(sent).await.status, 401);
    }
    let sent = attempt("192.0.2.5:1", "203.0.113.200", "x");
    assert_eq!(browser.send(sent).await.status, 429);
}

#[actix_web::test]
async fn an_author_retires_a_recipe_its_versions_stay_readable_and_its_forks_keep_their_lineage() {
    let (_, site) = new_site();
    let (mut ann, _ben) = ann_writes_and_ben_forks(&site, "Weeknight Dal").await;
    let edit = ann.get("/recipes/weeknight-dal/edit").await;
    let retired = ann
        .submit(&edit, "/recipes/weeknight-dal/retire", &[])
        .await;
    assert_eq!(retired.status, 303, "{}", retired.body);
    assert_eq!(
        retired.header("location"),
        Some("/recipes/weeknight-dal/history")
    );
    assert_eq!(ann.get("/recipes/weeknight-dal").await.status, 410);
    assert_eq!(
        ann.get("/recipes/weeknight-dal/versions/1").await.status,
        200
    );
    let history = ann.get("/recipes/weeknight-dal/history").await;
    assert!(
        history
            .texts(".versions .what")
            .iter()
            .any(|w| w.contains("retired")),
        "{}",
        history.body
    );
    let fork = ann.get("/recipes/bens-dal").await;
    assert_eq!(fork.texts(".lineage li a"), ["Weeknight Dal"]);
    let catalog = ann.get("/").await;
    assert!(!catalog
        .attrs(".recipe-card h2 a", "href")
        .contains(&"/recipes/weeknight-dal".to_owned()));
}

/// The recipe form's fields as `fields` has them, with `changes` over them.
fn form_of<'a>(
    fields: &'a RecipeFields,
    changes: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    let f = fields;
    let mut form = vec![
        ("title", f.title.as_str()),
        ("ingredients", &f.ingredients),
        ("steps", &f.steps),
        ("tags", &f.tags),
    ];
    form.extend(
        FIELDS
            .iter()
            .map(|field| (field.name, f.scalar(field.name))),
    );
    form.retain(|(name, _)| !changes.iter().any(|(n, _)| n == name));
    form.extend_from_slice(changes);
    form
}

#[actix_web::test]
async fn the_largest_recipe_the_form_takes_saves_and_one_word_more_is_422_with_the_text_kept() {
    let (recipes, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let mut ben = Browser::new(&site);
    sign_up(&mut ben, "ben").await;
    // Without the picture's address: one given on a form is fetched
    // (`pictures::a_picture_given_by_its_address_is_fetched_...`), and the
    // test's address is nowhere.
    let [first, second, third] = [0, 1, 2].map(|v| {
        let mut fields = RecipeFields::of(&largest_content(v).normalized().unwrap());
        fields.scalars.insert("image".into(), String::new());
        fields
    });

    let form = ann.get("/recipes/new").await;
    let new = form_of(&first, &[("slug", "big"), ("note", "first")]);
    let created = ann.submit(&form, "/recipes/new", &new).await;
    assert_eq!(created.status, 303, "{}", created.body);
    // Every line, step, tag and word replaced: the largest edit there is.
    let form = ann.get("/recipes/big/edit").await;
    let edit = form_of(&second, &[("note", "all new")]);
    let edited = ann.submit(&form, "/recipes/big/edit", &edit).await;
    assert_eq!(edited.status, 303, "{}", edited.body);
    let form = ben.get("/recipes/big/fork").await;
    let fork = form_of(&third, &[("slug", "big-ben"), ("note", "mine")]);
    let forked = ben.submit(&form, "/recipes/big/fork", &fork).await;
    assert_eq!(forked.status, 303, "{}", forked.body);

    let before = stored(recipes.store());
    let summary = words(500_000, MAX_SUMMARY_TERMS + 1, " ");
    // One more word in an item than the ingredients may have.
    let one_more = format!("cups {} ", words(500_000, 1, ""));
    let ingredients = third.ingredients.replacen("cups ", &one_more, 1);
    let new_form = ann.get("/recipes/new").await;
    let edit_form = ann.get("/recipes/big/edit").await;
    let fork_form = ben.get("/recipes/big/fork").await;
    let past = [
        (
            false,
            &new_form,
            "/recipes/new",
            "summary",
            &summary,
            "big-2",
        ),
        (
            false,
            &edit_form,
            "/recipes/big/edit",
            "ingredients",
            &ingredients,
            "",
        ),
        (
            true,
            &fork_form,
            "/recipes/big/fork",
            "summary",
            &summary,
            "big-ben-2",
        ),
    ];
    for (by_ben, form, action, field, text, slug) in past {
        let browser = if by_ben { &mut ben } else { &mut ann };
        let fields = form_of(&third, &[(field, text), ("slug", slug), ("note", "more")]);
        let refused = browser.submit(form, action, &fields).await;
        assert_eq!(refused.status, 422, "{action}: {}", refused.body);
        let said = refused.texts(&format!("#{field}-error"));
        let limit = match field {
            "summary" => MAX_SUMMARY_TERMS,
            _ => MAX_INGREDIENT_TERMS,
        };
        assert!(
            said.len() == 1 && said[0].contains(&limit.to_string()),
            "{action}: {said:?}"
        );
        assert_eq!(
            refused.texts_raw(&format!("#{field}")),
            [text.as_str()],
            "{action}: what was typed is kept"
        );
    }
    assert!(stored(recipes.store()) == before, "nothing was written");
}

/// A fork whose address is left empty gets one, as the form's hint says:
/// the parent's and the cook's names, numbered if taken (found by the
/// three-node test, whose cooks forked with the field empty: each was
/// told the empty address was not a slug).
#[actix_web::test]
async fn a_fork_with_its_address_left_empty_is_given_one() {
    let (_recipes, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let form = ann.get("/recipes/new").await;
    let created = ann.submit(&form, "/recipes/new", &recipe_fields(&[])).await;
    assert_eq!(created.status, 303, "{}", created.body);
    let mut bo = Browser::new(&site);
    sign_up(&mut bo, "bo").await;
    for expected in ["/recipes/weeknight-dal-bo", "/recipes/weeknight-dal-bo-2"] {
        let form = bo.get("/recipes/weeknight-dal/fork").await;
        assert!(form.body.contains("made from the recipe's and your names"));
        let forked = bo
            .submit(
                &form,
                "/recipes/weeknight-dal/fork",
                &recipe_fields(&[("slug", " "), ("note", "mine")]),
            )
            .await;
        assert_eq!(forked.status, 303, "{}", forked.body);
        assert_eq!(forked.header("location"), Some(expected));
    }
}

/// A sign-up sent again (its first answer lost, so the browser never got
/// the session) is answered as the first send was: logged in, not "the
/// handle is taken". Another browser's form for the handle still is.
#[actix_web::test]
async fn a_sign_up_sent_again_logs_in_rather_than_calling_its_handle_taken() {
    let (_, site) = new_site();
    let mut first = Browser::new(&site);
    let form = first.get("/signup").await;
    use forkful::web::session::{FORM_COOKIE, SESSION_COOKIE};
    let form_cookie = first.cookie(FORM_COOKIE).expect("a form cookie");
    let fields = [("handle", "ann"), ("name", "Ann"), ("password", PASSWORD)];
    let signed_up = first.submit(&form, "/signup", &fields).await;
    assert_eq!(signed_up.status, 303, "{}", signed_up.body);
    // The answer was lost: the browser has its form cookie, not the session.
    let mut again = Browser::new(&site);
    again.set_cookie(FORM_COOKIE, &form_cookie);
    let resent = again.submit(&form, "/signup", &fields).await;
    assert_eq!(resent.status, 303, "{}", resent.body);
    assert!(again.has_cookie(SESSION_COOKIE), "logged in by the resend");
    let account = again.get("/account").await;
    assert_eq!(account.status, 200);
    // The same form with another password (a copy of it kept, its
    // password left out, by someone else): the handle is taken, and the
    // account keeps its password.
    let mut thief = Browser::new(&site);
    thief.set_cookie(FORM_COOKIE, &form_cookie);
    let theirs = [
        ("handle", "ann"),
        ("name", "Ann"),
        ("password", "a password of mine"),
    ];
    let taken = thief.submit(&form, "/signup", &theirs).await;
    assert_eq!(taken.status, 409, "{}", taken.body);
    assert!(
        !thief.has_cookie(SESSION_COOKIE),
        "no session for a copy of the form"
    );
    let accounts = site.accounts().unwrap();
    let ann = Slug::parse("ann").unwrap();
    assert!(
        accounts.log_in(&ann, PASSWORD).is_ok(),
        "her password is hers"
    );
    assert!(accounts.log_in(&ann, "a password of mine").is_err());
    // Someone else's form for the same handle: taken.
    let mut other = Browser::new(&site);
    let form = other.get("/signup").await;
    let taken = other.submit(&form, "/signup", &fields).await;
    assert_eq!(taken.status, 409, "{}", taken.body);
    assert!(taken.body.contains("is taken"), "{}", taken.body);
}

/// A password change sent again, its answer lost (and with it the new
/// session's cookie, after the change ended every session, this browser's
/// among them), is answered as the first send was: logged in, the new
/// password kept; not sent to log in, nor told the current password is
/// wrong. A form from another page load is no resend.
#[actix_web::test]
async fn a_password_change_sent_again_after_its_answer_was_lost_is_answered_as_the_first() {
    use forkful::web::session::SESSION_COOKIE;
    let (_, site) = new_site();
    let mut laptop = Browser::new(&site);
    sign_up(&mut laptop, "ann").await;
    let account = laptop.get("/account").await;
    let other_tab = laptop.get("/account").await;
    let before = laptop.cookie(SESSION_COOKIE).expect("a session");
    // `username` as a browser sends it: a text input, only hidden from
    // sight (`submit` fills in the `type=hidden` ones).
    let fields = [
        ("username", "ann"),
        ("current", PASSWORD),
        ("new", "a newer password"),
    ];
    let changed = laptop.submit(&account, "/account/password", &fields).await;
    assert_eq!(changed.status, 303, "{}", changed.body);
    // The answer was lost: the browser keeps the cookies it had (the
    // answer set only the session's).
    laptop.set_cookie(SESSION_COOKIE, &before);
    let elsewhere = laptop
        .submit(&other_tab, "/account/password", &fields)
        .await;
    assert_eq!(elsewhere.status, 303, "{}", elsewhere.body);
    assert_eq!(
        elsewhere.header("location"),
        Some("/login?next=/account"),
        "another page's form is not this change sent again"
    );
    assert_eq!(laptop.cookie(SESSION_COOKIE), Some(before.clone()));
    let resent = laptop.submit(&account, "/account/password", &fields).await;
    assert_eq!(resent.status, 303, "{}", resent.body);
    assert_eq!(resent.header("location"), Some("/account"));
    assert_ne!(laptop.cookie(SESSION_COOKIE), Some(before), "a new session");
    let page = laptop.get("/account").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(
        page.attrs(
            "form[action='/account/password'] input[autocomplete=username]",
            "value"
        ),
        ["ann"]
    );
    let mut phone = Browser::new(&site);
    for (password, status) in [(PASSWORD, 401), ("a newer password", 303)] {
        let form = phone.get("/login").await;
        let answer = phone
            .submit(
                &form,
                "/login",
                &[("handle", "ann"), ("password", password)],
            )
            .await;
        assert_eq!(answer.status, status, "{password}: {}", answer.body);
    }
    // A form from another page load, the old password as current: wrong,
    // as it always was.
    let refused = laptop.submit(&page, "/account/password", &fields).await;
    assert_eq!(refused.status, 401, "{}", refused.body);
    assert!(!refused.texts("#current-error").is_empty());
}

/// Rate limits count on each node: a site served by three nodes, each
/// told so (`--nodes 3`), takes a third of every limit on each, so that
/// guesses spread over the three get no more than one node would allow.
#[actix_web::test]
async fn each_of_three_nodes_takes_a_third_of_the_password_attempts() {
    use forkful::web::rate_limits::{share, ATTEMPTS_PER_MINUTE};
    let recipes = Recipes::temporary().unwrap();
    let site = Data::new(Site::new(recipes, ORIGIN).with_nodes(3));
    let mut browser = Browser::new(&site);
    let form = browser.get("/login").await;
    let token = form_token(&form, "/login");
    let attempt = || {
        TestRequest::post()
            .uri("/login")
            .peer_addr("10.0.0.1:4000".parse().unwrap())
            .insert_header(("Origin", ORIGIN))
            .set_form([
                ("csrf", token.as_str()),
                ("handle", "nobody"),
                ("password", "a wrong guess"),
            ])
    };
    let per_node = share(ATTEMPTS_PER_MINUTE, 3);
    assert_eq!(per_node, 4);
    for _ in 0..per_node {
        assert_eq!(browser.send(attempt()).await.status, 401);
    }
    assert_eq!(browser.send(attempt()).await.status, 429);
}
