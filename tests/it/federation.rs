//! Issue 54: forkful speaks ActivityPub. A site answers WebFinger, NodeInfo
//! and its cooks' and recipes' documents; another site (here a small
//! stand-in for Mastodon on loopback, with a key of its own) follows a
//! cook with a signed `Follow`, is told `Accept`, then hears of the cook's
//! new recipes, versions and retirements, each delivery signed by the
//! cook's key; what is refused (a tampered signature, a wrong digest, an
//! unknown key, a replay, a blocked site, too large a body) changes
//! nothing; and deliveries to a site that is down wait, survive a
//! restart, and go once it is back.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use serde_json::{json, Value};

use forkful::app;
use forkful::domain::federation::{Federation, Followed, KeyPair, PublicKey};
use forkful::domain::{Change, ContentDraft, Recipes, Slug, VersionNumber};
use forkful::federation::signature::{self, Request, Signature, Signed};
use forkful::store::Store;

use crate::http_client::Server;

/// A request's headers, by lower-case name.
type Headers = Vec<(String, String)>;

/// What the stand-in site was sent, and how it answers.
#[derive(Default)]
struct Received {
    /// Each POST to its inbox: headers (lower-case names) and body.
    posts: Mutex<Vec<(Headers, String)>>,
    /// Whether its inbox answers 503, as a site that is down.
    down: AtomicBool,
    /// Whether its inbox answers 401 to a request signed the RFC 9421
    /// way, though rhea's document says the site takes them.
    refuses_rfc9421: AtomicBool,
    /// How many requests it so refused.
    refused: std::sync::atomic::AtomicUsize,
}

/// A stand-in for another site: two actors, `zoe` and `yan`, with one key
/// pair (each their own key id), an
/// inbox that keeps what it is sent, and documents the tests make up.
pub(crate) struct Remote {
    pub(crate) origin: String,
    pub(crate) key: KeyPair,
    received: Arc<Received>,
}

impl Remote {
    pub(crate) fn start() -> Remote {
        let key = KeyPair::generate().unwrap();
        let received = Arc::new(Received::default());
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        let origin = format!("http://{addr}");
        let state = web::Data::new((
            origin.clone(),
            key.public_pem().to_owned(),
            received.clone(),
        ));
        thread::spawn(move || {
            actix_web::rt::System::new().block_on(async move {
                HttpServer::new(move || {
                    App::new()
                        .app_data(state.clone())
                        .route("/users/{name}", web::get().to(remote_actor))
                        .route("/huge", web::get().to(huge_actor))
                        .route("/files/upload.json", web::get().to(impostor_key))
                        .route("/users/evil", web::get().to(elsewhere_inbox))
                        .route(
                            "/locked",
                            web::get().to(|| async { HttpResponse::Unauthorized().finish() }),
                        )
                        .route("/inbox", web::post().to(remote_inbox))
                })
                .workers(1)
                .listen(listener)
                .unwrap()
                .run()
                .await
            })
        });
        Remote {
            origin,
            key,
            received,
        }
    }

    fn actor(&self) -> String {
        format!("{}/users/zoe", self.origin)
    }

    pub(crate) fn key_id(&self) -> String {
        format!("{}#main-key", self.actor())
    }

    /// The posts it was sent of activities of `kind`.
    fn sent(&self, kind: &str) -> Vec<(Headers, Value)> {
        self.received
            .posts
            .lock()
            .unwrap()
            .iter()
            .map(|(headers, body)| {
                (
                    headers.clone(),
                    serde_json::from_str::<Value>(body).unwrap(),
                )
            })
            .filter(|(_, activity)| activity["type"] == kind)
            .collect()
    }

    /// Waits up to ten seconds for a post of an activity of `kind`.
    pub(crate) fn wait_for(&self, kind: &str, count: usize) -> Vec<(Headers, Value)> {
        self.wait_for_within(kind, count, Duration::from_secs(10))
    }

    /// Waits up to `limit` for `count` posts of activities of `kind`.
    fn wait_for_within(&self, kind: &str, count: usize, limit: Duration) -> Vec<(Headers, Value)> {
        let deadline = Instant::now() + limit;
        loop {
            let sent = self.sent(kind);
            if sent.len() >= count || Instant::now() > deadline {
                return sent;
            }
            thread::sleep(Duration::from_millis(50));
        }
    }
}

type RemoteState = web::Data<(String, String, Arc<Received>)>;

/// An actor document: `id`, with its inbox at `inbox` and the key `key_id`.
/// Rhea's says (FEP-844e) that her site takes RFC 9421 signatures.
fn actor_document(id: &str, inbox: &str, key_id: &str, pem: &str) -> HttpResponse {
    let name = id.rsplit('/').next().unwrap_or_default();
    let mut document = json!({
        "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"],
        "id": id,
        "type": "Person",
        "preferredUsername": name,
        "inbox": inbox,
        "publicKey": {"id": key_id, "owner": id, "publicKeyPem": pem},
    });
    if name == "rhea" {
        document["generator"] = json!({
            "type": "Application",
            "implements": [{"href": "https://datatracker.ietf.org/doc/html/rfc9421"}],
        });
    }
    HttpResponse::Ok()
        .content_type("application/activity+json")
        .body(document.to_string())
}

async fn remote_actor(state: RemoteState, name: web::Path<String>) -> HttpResponse {
    let (origin, pem, _) = state.get_ref();
    if !["zoe", "yan", "rhea"].contains(&name.as_str()) {
        return HttpResponse::NotFound().finish();
    }
    let id = format!("{origin}/users/{name}");
    actor_document(
        &id,
        &format!("{origin}/inbox"),
        &format!("{id}#main-key"),
        pem,
    )
}

/// A document served where anyone on the site may put a file, claiming
/// to be zoe, with a key its uploader holds (Mastodon's CVE-2024-23832).
async fn impostor_key(state: RemoteState) -> HttpResponse {
    let (origin, pem, _) = state.get_ref();
    let key = format!("{origin}/files/upload.json#key");
    actor_document(
        &format!("{origin}/users/zoe"),
        &format!("{origin}/inbox"),
        &key,
        pem,
    )
}

/// An actor whose inbox is on another site: deliveries to it would go
/// there.
async fn elsewhere_inbox(state: RemoteState) -> HttpResponse {
    let (origin, pem, _) = state.get_ref();
    let id = format!("{origin}/users/evil");
    actor_document(
        &id,
        "http://192.0.2.1/inbox",
        &format!("{id}#main-key"),
        pem,
    )
}

/// An actor document of two megabytes: more than a document may weigh.
async fn huge_actor() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/activity+json")
        .body(format!("{{\"padding\":\"{}\"}}", "x".repeat(2 << 20)))
}

async fn remote_inbox(state: RemoteState, req: HttpRequest, body: web::Bytes) -> HttpResponse {
    let received = &state.get_ref().2;
    if received.down.load(Ordering::SeqCst) {
        return HttpResponse::ServiceUnavailable().finish();
    }
    if received.refuses_rfc9421.load(Ordering::SeqCst)
        && req.headers().contains_key("signature-input")
    {
        received.refused.fetch_add(1, Ordering::SeqCst);
        return HttpResponse::Unauthorized().finish();
    }
    let headers = req
        .headers()
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_owned(),
                v.to_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    received
        .posts
        .lock()
        .unwrap()
        .push((headers, String::from_utf8_lossy(&body).into_owned()));
    HttpResponse::Accepted().finish()
}

/// Starts the site over `recipes` on a port of its own, fetching from
/// loopback (where the stand-in is), retrying deliveries quickly.
pub(crate) fn serve(recipes: &Recipes, blocked: &[&str]) -> String {
    let config = app::Config {
        addr: "127.0.0.1:0".to_owned(),
        workers: 1,
        base_url: None,
        cache_budget: forkful::web::caches::CacheBudget::of(16 << 20),
        memory_limit: None,
        allow_private_fetch: true,
        trusted_proxies: Default::default(),
        timeouts: Default::default(),
        health: Default::default(),
        session_recheck: forkful::domain::accounts::SESSION_RECHECK,
        nodes: 1,
        federation: forkful::federation::Settings {
            blocked: blocked.iter().map(|b| b.to_string()).collect(),
            retry_after: Duration::from_millis(100),
            ..Default::default()
        },
    };
    let recipes = recipes.clone();
    let (sender, addr) = mpsc::channel();
    thread::spawn(move || {
        actix_web::rt::System::new().block_on(async move {
            let running = app::build(&config, recipes).expect("the server starts");
            sender.send(running.addr).unwrap();
            running.server.await
        })
    });
    format!("http://{}", addr.recv().unwrap())
}

/// Two forkful sites on loopback, each with its own store: A, where ann
/// wrote Shakshuka, and B, where ben signed up (his browser).
struct TwoSites {
    a_recipes: Recipes,
    a: String,
    b_recipes: Recipes,
    b: String,
    ben: crate::http_client::Browser,
}

fn two_sites() -> TwoSites {
    let a_recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    write(&a_recipes, "shakshuka", "Shakshuka");
    let a = serve(&a_recipes, &[]);
    let b_recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    let b = serve(&b_recipes, &[]);
    let mut ben = crate::http_client::Browser::new(&b);
    ben.sign_up("ben").unwrap();
    TwoSites {
        a_recipes,
        a,
        b_recipes,
        b,
        ben,
    }
}

fn slug(s: &str) -> Slug {
    Slug::parse(s).unwrap()
}

fn write(recipes: &Recipes, name: &str, title: &str) {
    let content = ContentDraft {
        title: title.into(),
        summary: Some(format!("{title}, as ann makes it.")),
        ingredients: vec!["2 eggs".into()],
        ..ContentDraft::default()
    };
    recipes
        .create(&slug(name), content, &Change::by("ann", "new"))
        .unwrap();
}

pub(crate) fn get_json(url: &str, accept: &str) -> (u16, String, Value) {
    let response = ureq::get(url).set("accept", accept).call();
    let response = match response {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("{url}: {e}"),
    };
    let status = response.status();
    let kind = response.content_type().to_owned();
    let text = response.into_string().unwrap();
    (
        status,
        kind,
        serde_json::from_str(&text).unwrap_or(Value::Null),
    )
}

/// POSTs `body` to `inbox` with `headers`; the status.
fn post(inbox: &str, headers: &[(&str, String)], body: &[u8]) -> u16 {
    let mut request = ureq::post(inbox).set("content-type", "application/activity+json");
    for (name, value) in headers {
        request = request.set(name, value);
    }
    match request.send_bytes(body) {
        Ok(r) => r.status(),
        Err(ureq::Error::Status(code, _)) => code,
        Err(e) => panic!("{inbox}: {e}"),
    }
}

/// POSTs `body` to `inbox`, signed by `key` as `key_id`; the status.
pub(crate) fn send(key: &KeyPair, key_id: &str, inbox: &str, body: &[u8]) -> u16 {
    post(inbox, &signed(key, key_id, inbox, body), body)
}

/// `activity` from zoe, signed by `key` as `key_id`, to `inbox`.
fn signed(key: &KeyPair, key_id: &str, inbox: &str, body: &[u8]) -> Vec<(&'static str, String)> {
    let url = url::Url::parse(inbox).unwrap();
    signature::sign(key, key_id, "POST", &url, Some(body), SystemTime::now())
}

fn follow(remote: &Remote, site: &str, id: &str) -> Vec<u8> {
    follow_by(
        &remote.actor(),
        &format!("{}/activities/{id}", remote.origin),
        &format!("{site}/cooks/ann"),
    )
}

/// A `Follow` of `object` by `actor`, with the id `id`.
pub(crate) fn follow_by(actor: &str, id: &str, object: &str) -> Vec<u8> {
    json!({
        "@context": "https://www.w3.org/ns/activitystreams",
        "id": id,
        "type": "Follow",
        "actor": actor,
        "object": object,
    })
    .to_string()
    .into_bytes()
}

/// Checks that a delivery's signature is ann's, over its digest.
fn check_signed_by_ann(site: &str, headers: &[(String, String)], body: &Value, pem: &str) {
    let text = body.to_string();
    let header = |n: &str| headers.iter().find(|(h, _)| h == n).map(|(_, v)| v.clone());
    // The body as sent is what the digest covers: compare by value.
    let digest = header("digest").expect("a Digest header");
    assert!(digest.starts_with("SHA-256="), "{digest}");
    let parsed = Signature::parse(&header("signature").expect("a Signature")).unwrap();
    assert_eq!(parsed.key_id, format!("{site}/cooks/ann#main-key"));
    assert!(
        parsed.headers.iter().any(|h| h == "digest"),
        "{:?}",
        parsed.headers
    );
    let request = Request {
        method: "POST",
        target: "/inbox",
        headers,
    };
    parsed
        .verify(
            &request,
            true,
            &PublicKey::from_pem(pem).unwrap(),
            SystemTime::now(),
        )
        .unwrap_or_else(|e| panic!("ann's delivery does not verify: {e}: {text}"));
}

#[test]
fn a_cook_is_found_followed_from_another_site_and_it_hears_of_her_recipes() {
    let remote = Remote::start();
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    write(&recipes, "shakshuka", "Shakshuka");
    let site = serve(&recipes, &[]);
    let host = site.trim_start_matches("http://");

    // Discovery: WebFinger, NodeInfo, the actor by content negotiation.
    let (status, kind, finger) = get_json(
        &format!("{site}/.well-known/webfinger?resource=acct:ann@{host}"),
        "application/jrd+json",
    );
    assert_eq!((status, kind.as_str()), (200, "application/jrd+json"));
    assert_eq!(finger["subject"], format!("acct:ann@{host}"));
    let actor_url = finger["links"][0]["href"].as_str().unwrap().to_owned();
    assert_eq!(actor_url, format!("{site}/cooks/ann"));
    let (status, _, links) = get_json(&format!("{site}/.well-known/nodeinfo"), "application/json");
    assert_eq!(status, 200);
    let (_, _, nodeinfo) = get_json(
        links["links"][0]["href"].as_str().unwrap(),
        "application/json",
    );
    assert_eq!(nodeinfo["protocols"], json!(["activitypub"]));
    assert_eq!(nodeinfo["usage"]["localPosts"], 1);
    let (status, kind, actor) = get_json(&actor_url, "application/activity+json");
    assert_eq!((status, kind.as_str()), (200, "application/activity+json"));
    assert_eq!(actor["type"], "Person");
    assert_eq!(actor["preferredUsername"], "ann");
    let pem = actor["publicKey"]["publicKeyPem"]
        .as_str()
        .unwrap()
        .to_owned();
    PublicKey::from_pem(&pem).expect("the actor's key reads");
    // The same address is still the page for a browser.
    let page = ureq::get(&actor_url)
        .set("accept", "text/html")
        .call()
        .unwrap();
    assert!(page.content_type().starts_with("text/html"));
    // The recipe is an Article whose main entity is its Recipe.
    let (_, _, object) = get_json(
        &format!("{site}/recipes/shakshuka"),
        "application/ld+json; profile=\"https://www.w3.org/ns/activitystreams\"",
    );
    assert_eq!(object["type"], "Article");
    assert_eq!(object["attributedTo"], actor_url);
    assert_eq!(object["mainEntity"]["@type"], "Recipe");
    assert_eq!(object["mainEntity"]["recipeIngredient"], json!(["2 eggs"]));
    // Someone with nothing published is no one, as on the page.
    let (status, _, _) = get_json(
        &format!("{site}/.well-known/webfinger?resource=acct:nobody@{host}"),
        "application/jrd+json",
    );
    assert_eq!(status, 404);

    // Zoe follows ann: 202, and she is told Accept, signed by ann.
    let inbox = actor["inbox"].as_str().unwrap().to_owned();
    let body = follow(&remote, &site, "1");
    assert_eq!(send(&remote.key, &remote.key_id(), &inbox, &body), 202);
    let accepts = remote.wait_for("Accept", 1);
    assert_eq!(accepts.len(), 1, "no Accept came");
    let (headers, accept) = &accepts[0];
    assert_eq!(
        accept["object"]["id"],
        format!("{}/activities/1", remote.origin)
    );
    assert_eq!(accept["actor"], actor_url);
    check_signed_by_ann(&site, headers, accept, &pem);
    let (_, _, followers) = get_json(
        &format!("{actor_url}/followers"),
        "application/activity+json",
    );
    assert_eq!(followers["totalItems"], 1);

    // The same Follow again (a replay) changes nothing: no second Accept.
    assert_eq!(send(&remote.key, &remote.key_id(), &inbox, &body), 202);

    // Her new recipe, a new version, a retirement: Create, Update, Delete.
    write(&recipes, "dal", "Dal");
    let creates = remote.wait_for("Create", 1);
    assert_eq!(creates.len(), 1);
    let (headers, create) = &creates[0];
    assert_eq!(create["object"]["type"], "Article");
    assert_eq!(create["object"]["name"], "Dal");
    assert_eq!(create["object"]["url"], format!("{site}/recipes/dal"));
    assert_eq!(create["actor"], actor_url);
    check_signed_by_ann(&site, headers, create, &pem);
    let edited = ContentDraft {
        title: "Dal".into(),
        ingredients: vec!["200 g lentils".into()],
        ..ContentDraft::default()
    };
    recipes
        .edit(
            &slug("dal"),
            VersionNumber::FIRST,
            edited,
            &Change::by("ann", "lentils"),
        )
        .unwrap();
    let updates = remote.wait_for("Update", 1);
    assert_eq!(updates.len(), 1);
    assert_eq!(updates[0].1["object"]["version"], 2);
    assert_eq!(
        updates[0].1["object"]["mainEntity"]["recipeIngredient"],
        json!(["200 g lentils"])
    );
    recipes
        .retire(
            &slug("dal"),
            VersionNumber::new(2).unwrap(),
            &Change::by("ann", "gone"),
        )
        .unwrap();
    let deletes = remote.wait_for("Delete", 1);
    assert_eq!(deletes.len(), 1);
    assert_eq!(deletes[0].1["object"]["id"], format!("{site}/recipes/dal"));
    assert_eq!(
        remote.sent("Accept").len(),
        1,
        "a replayed Follow was accepted again"
    );
    assert_eq!(remote.sent("Create").len(), 1);

    // A version has an id of its own, and is part of its recipe.
    let (_, _, version) = get_json(
        &format!("{site}/recipes/dal/versions/1"),
        "application/activity+json",
    );
    assert_eq!(version["id"], format!("{site}/recipes/dal/versions/1"));
    assert_eq!(version["isPartOf"], format!("{site}/recipes/dal"));
    assert_eq!(version["version"], 1);
    assert_eq!(version["mainEntity"]["recipeIngredient"], json!(["2 eggs"]));

    // Zoe unfollows: nothing more comes.
    let undo = json!({
        "id": format!("{}/activities/2", remote.origin),
        "type": "Undo",
        "actor": remote.actor(),
        "object": serde_json::from_slice::<Value>(&body).unwrap(),
    })
    .to_string()
    .into_bytes();
    assert_eq!(send(&remote.key, &remote.key_id(), &inbox, &undo), 202);
    let (_, _, followers) = get_json(
        &format!("{actor_url}/followers"),
        "application/activity+json",
    );
    assert_eq!(followers["totalItems"], 0);
    write(&recipes, "soup", "Soup");
    thread::sleep(Duration::from_millis(1_500));
    assert_eq!(
        remote.sent("Create").len(),
        1,
        "an unfollowed site was told"
    );

    // Yan follows one recipe: its new versions come, not ann's other news.
    let yan = format!("{}/users/yan", remote.origin);
    let recipe_follow = follow_by(
        &yan,
        &format!("{}/activities/3", remote.origin),
        &format!("{site}/recipes/shakshuka"),
    );
    let yan_key = format!("{yan}#main-key");
    let headers = signed(&remote.key, &yan_key, &inbox, &recipe_follow);
    assert_eq!(post(&inbox, &headers, &recipe_follow), 202);
    let accepts = remote.wait_for("Accept", 2);
    assert_eq!(accepts.len(), 2);
    assert_eq!(
        accepts[1].1["object"]["object"],
        format!("{site}/recipes/shakshuka")
    );
    write(&recipes, "stew", "Stew");
    let edited = ContentDraft {
        title: "Shakshuka".into(),
        ingredients: vec!["4 eggs".into()],
        ..ContentDraft::default()
    };
    recipes
        .edit(
            &slug("shakshuka"),
            VersionNumber::FIRST,
            edited,
            &Change::by("ann", "more eggs"),
        )
        .unwrap();
    let updates = remote.wait_for("Update", 2);
    assert_eq!(
        updates.len(),
        2,
        "the followed recipe's version did not come"
    );
    assert_eq!(
        updates[1].1["object"]["id"],
        format!("{site}/recipes/shakshuka")
    );
    assert_eq!(
        remote.sent("Create").len(),
        1,
        "a recipe's follower heard of another"
    );
}

#[test]
fn what_is_forged_replayed_blocked_or_too_large_is_refused_and_changes_nothing() {
    let remote = Remote::start();
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    write(&recipes, "shakshuka", "Shakshuka");
    let site = serve(&recipes, &[]);
    let inbox = format!("{site}/cooks/ann/inbox");
    let body = follow(&remote, &site, "1");
    let good = signed(&remote.key, &remote.key_id(), &inbox, &body);
    let with = |name: &str, value: String| -> Vec<(&'static str, String)> {
        good.iter()
            .map(|(n, v)| (*n, if *n == name { value.clone() } else { v.clone() }))
            .collect()
    };
    let other_body = follow(&remote, &site, "2");
    // Unsigned; a body other than the one signed; a digest made for it
    // (the signature then no longer covers it); another key; a stale date.
    assert_eq!(post(&inbox, &[], &body), 401);
    assert_eq!(post(&inbox, &good, &other_body), 401);
    assert_eq!(
        post(
            &inbox,
            &with("digest", signature::digest(&other_body)),
            &other_body
        ),
        401
    );
    let stranger = KeyPair::generate().unwrap();
    assert_eq!(
        post(
            &inbox,
            &signed(&stranger, &remote.key_id(), &inbox, &body),
            &body
        ),
        401
    );
    let old = httpdate::fmt_http_date(SystemTime::now() - Duration::from_secs(13 * 3_600));
    assert_eq!(post(&inbox, &with("date", old), &body), 401);
    // A key no one has, and one whose document is too large.
    let unknown = format!("{}/users/nobody#main-key", remote.origin);
    assert_eq!(send(&remote.key, &unknown, &inbox, &body), 401);
    let huge = format!("{}/huge#main-key", remote.origin);
    assert_eq!(send(&remote.key, &huge, &inbox, &body), 401);
    // Signed by zoe, but in another actor's name.
    let impostor = follow_by(
        &format!("{}/users/someone-else", remote.origin),
        &format!("{}/activities/3", remote.origin),
        &format!("{site}/cooks/ann"),
    );
    assert_eq!(send(&remote.key, &remote.key_id(), &inbox, &impostor), 400);
    // More than an activity may weigh.
    let large = vec![b' '; 300 * 1024];
    assert_eq!(send(&remote.key, &remote.key_id(), &inbox, &large), 413);
    // A follow of no one.
    let nobody = follow_by(
        &remote.actor(),
        &format!("{}/activities/4", remote.origin),
        &format!("{site}/cooks/nobody"),
    );
    assert_eq!(send(&remote.key, &remote.key_id(), &inbox, &nobody), 404);

    let federation = Federation::open(&recipes).unwrap();
    assert_eq!(
        federation
            .follower_count(&Followed::Cook(slug("ann")))
            .unwrap(),
        0
    );
    assert!(federation.deliveries().waiting().unwrap().is_empty());
    thread::sleep(Duration::from_millis(500));
    assert!(remote.received.posts.lock().unwrap().is_empty());

    // A site the operator blocked is refused before its key is fetched.
    let host = remote
        .origin
        .trim_start_matches("http://")
        .split(':')
        .next()
        .unwrap()
        .to_owned();
    let blocking = serve(&recipes, &[&host]);
    let inbox = format!("{blocking}/cooks/ann/inbox");
    let body = follow(&remote, &blocking, "5");
    assert_eq!(send(&remote.key, &remote.key_id(), &inbox, &body), 403);
    assert_eq!(
        federation
            .follower_count(&Followed::Cook(slug("ann")))
            .unwrap(),
        0
    );
}

#[test]
fn deliveries_to_a_site_that_is_down_wait_survive_a_restart_and_go_once_it_is_back() {
    let remote = Remote::start();
    remote.received.down.store(true, Ordering::SeqCst);
    let dir = tempfile::tempdir().unwrap();
    {
        let recipes = Recipes::open(Store::open(dir.path()).unwrap()).unwrap();
        write(&recipes, "shakshuka", "Shakshuka");
    }
    let flags = ["--allow-private-fetch", "--delivery-retry", "0.1"];
    let mut server = Server::start(dir.path(), &flags).unwrap();
    let site = server.origin().to_owned();
    let inbox = format!("{site}/inbox");
    let body = follow(&remote, &site, "1");
    assert_eq!(send(&remote.key, &remote.key_id(), &inbox, &body), 202);
    // The Accept cannot go: the site is down. Stop the sender.
    thread::sleep(Duration::from_millis(800));
    assert!(remote.sent("Accept").is_empty());
    server.terminate().unwrap();
    // Back up, and the sender restarted: the Accept goes, once.
    remote.received.down.store(false, Ordering::SeqCst);
    let restarted = Server::start(dir.path(), &flags).unwrap();
    // Its next attempt is due after the backoff the failures reached
    // (doubled from 0.1 s each time, for as long as the sender ran and
    // took to stop): seconds, on a busy machine.
    let accepts = remote.wait_for_within("Accept", 1, Duration::from_secs(60));
    assert_eq!(
        accepts.len(),
        1,
        "the delivery did not survive the restart: {}",
        restarted.errors()
    );
    thread::sleep(Duration::from_millis(500));
    assert_eq!(remote.sent("Accept").len(), 1);
    let _ = restarted;
}

/// Waits up to ten seconds for `done` to say yes of `browser`'s page at
/// `path`; the page it last saw.
fn wait_for_page(
    browser: &mut crate::http_client::Browser,
    path: &str,
    done: impl Fn(&crate::helpers::Page) -> bool,
) -> crate::helpers::Page {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let page = browser.get(path).unwrap();
        if done(&page) || Instant::now() > deadline {
            return page;
        }
        thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_cook_on_one_forkful_follows_a_cook_and_a_recipe_on_another_and_reads_their_news() {
    let TwoSites {
        a_recipes,
        a,
        b_recipes,
        b,
        mut ben,
    } = two_sites();
    let a_host = a.trim_start_matches("http://");

    // What cannot be followed is said, and nothing is kept.
    let form = ben.get("/following").unwrap();
    assert_eq!(form.status, 200);
    for (address, why) in [
        ("nonsense", "neither a handle"),
        (&format!("{b}/cooks/ben") as &str, "on this site"),
        (&format!("@nobody@{a_host}"), "could not be looked up"),
    ] {
        let refused = ben
            .submit(&form, "/following", &[("address", address)])
            .unwrap();
        assert_eq!(refused.status, 422, "{address}: {}", refused.body);
        assert!(refused.body.contains(why), "{address}: {}", refused.body);
    }
    let b_federation = Federation::open(&b_recipes).unwrap();
    assert!(b_federation.following(&slug("ben")).unwrap().is_empty());

    // Ben follows ann by her handle, and her shakshuka by its address.
    let followed = ben
        .submit(
            &form,
            "/following",
            &[("address", &format!("@ann@{a_host}"))],
        )
        .unwrap();
    assert_eq!(followed.status, 303, "{}", followed.body);
    let form = ben.get("/following").unwrap();
    let recipe = format!("{a}/recipes/shakshuka");
    let followed = ben
        .submit(&form, "/following", &[("address", &recipe)])
        .unwrap();
    assert_eq!(followed.status, 303, "{}", followed.body);
    let page = wait_for_page(&mut ben, "/following", |p| !p.body.contains("waiting"));
    assert!(
        !page.body.contains("waiting"),
        "A never accepted: {}",
        page.body
    );
    let listed = page.texts("ul.following li a");
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert!(listed.contains(&format!("@ann@{a_host}")), "{listed:?}");
    assert!(listed.contains(&"Shakshuka".to_owned()), "{listed:?}");
    let a_federation = Federation::open(&a_recipes).unwrap();
    assert_eq!(
        a_federation
            .follower_count(&Followed::Cook(slug("ann")))
            .unwrap(),
        1
    );
    assert_eq!(
        a_federation
            .follower_count(&Followed::Recipe(slug("shakshuka")))
            .unwrap(),
        1
    );

    // Ann's new recipe and the new version of the one ben follows reach
    // his page.
    write(&a_recipes, "dal", "Dal");
    let edited = ContentDraft {
        title: "Shakshuka".into(),
        ingredients: vec!["4 eggs".into()],
        ..ContentDraft::default()
    };
    a_recipes
        .edit(
            &slug("shakshuka"),
            VersionNumber::FIRST,
            edited,
            &Change::by("ann", "more eggs"),
        )
        .unwrap();
    let page = wait_for_page(&mut ben, "/following", |p| p.texts("ul.news li").len() >= 2);
    let news = page.texts("ul.news li");
    assert_eq!(news.len(), 2, "{news:?}");
    assert!(news.iter().any(|n| n.contains("wrote Dal")), "{news:?}");
    assert!(
        news.iter()
            .any(|n| n.contains("changed Shakshuka (version 2)")),
        "{news:?}"
    );

    // Ben stops following ann: A is told, and forgets him.
    let form = ben.get("/following").unwrap();
    let stop = format!("{a}/cooks/ann");
    let stopped = ben
        .submit(&form, "/following/stop", &[("object", &stop)])
        .unwrap();
    assert_eq!(stopped.status, 303);
    let deadline = Instant::now() + Duration::from_secs(10);
    while a_federation
        .follower_count(&Followed::Cook(slug("ann")))
        .unwrap()
        > 0
        && Instant::now() < deadline
    {
        thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        a_federation
            .follower_count(&Followed::Cook(slug("ann")))
            .unwrap(),
        0
    );
    assert_eq!(b_federation.following(&slug("ben")).unwrap().len(), 1);
}

#[test]
fn no_actor_speaks_for_another_nor_marks_its_ids_nor_sends_what_was_signed_for_another_site() {
    let remote = Remote::start();
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    write(&recipes, "shakshuka", "Shakshuka");
    let site = serve(&recipes, &[]);
    let inbox = format!("{site}/inbox");
    let federation = Federation::open(&recipes).unwrap();
    let ann = Followed::Cook(slug("ann"));

    // A file on zoe's site that says it is zoe, with the uploader's key.
    let body = follow(&remote, &site, "1");
    let upload = format!("{}/files/upload.json#key", remote.origin);
    assert_eq!(send(&remote.key, &upload, &inbox, &body), 401);
    // An actor whose inbox is on another site.
    let evil = format!("{}/users/evil", remote.origin);
    let by_evil = follow_by(
        &evil,
        &format!("{}/activities/evil", remote.origin),
        &format!("{site}/cooks/ann"),
    );
    let evil_key = format!("{evil}#main-key");
    assert_eq!(send(&remote.key, &evil_key, &inbox, &by_evil), 401);
    // A request zoe signed for another site, sent here instead.
    let elsewhere = "http://other.example/inbox";
    assert_eq!(
        post(
            &inbox,
            &signed(&remote.key, &remote.key_id(), elsewhere, &body),
            &body
        ),
        401
    );
    assert_eq!(federation.follower_count(&ann).unwrap(), 0);

    // Yan sends an activity with the id zoe will use next: zoe's is still
    // applied, as hers.
    let yan = format!("{}/users/yan", remote.origin);
    let by_yan = follow_by(
        &yan,
        &format!("{}/activities/1", remote.origin),
        &format!("{site}/cooks/ann"),
    );
    let yan_key = format!("{yan}#main-key");
    assert_eq!(send(&remote.key, &yan_key, &inbox, &by_yan), 202);
    assert_eq!(send(&remote.key, &remote.key_id(), &inbox, &body), 202);
    assert_eq!(federation.follower_count(&ann).unwrap(), 2);

    // The page and its document are two entities: the page's validator
    // does not get the document a 304.
    let page = ureq::get(&format!("{site}/recipes/shakshuka"))
        .call()
        .unwrap();
    let page_tag = page.header("etag").unwrap().to_owned();
    let document = ureq::get(&format!("{site}/recipes/shakshuka"))
        .set("accept", "application/activity+json")
        .set("if-none-match", &page_tag)
        .call()
        .unwrap();
    assert_eq!(document.status(), 200);
    assert_ne!(document.header("etag").unwrap(), page_tag);
    assert!(document.content_type().contains("activity+json"));
}

#[test]
fn a_blocked_site_is_blocked_however_its_host_is_spelled() {
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    let settings = forkful::federation::Settings {
        blocked: vec!["evil.example".into(), "bücher.example".into()],
        ..Default::default()
    };
    let fetcher = forkful::import::Fetcher::public_only();
    let federated =
        forkful::federation::Federated::new(&recipes, "https://here.example", &fetcher, settings)
            .unwrap();
    for blocked in [
        "https://evil.example/users/a",
        "https://EVIL.example/users/a",
        "https://evil.example./users/a",
        "https://sub.evil.example/inbox",
        "https://xn--bcher-kva.example/inbox",
        "https://bücher.example/inbox",
        "not an address",
    ] {
        assert!(federated.is_blocked(blocked), "{blocked}");
    }
    for open in [
        "https://notevil.example/",
        "https://evil.example.org/",
        "https://example/",
    ] {
        assert!(!federated.is_blocked(open), "{open}");
    }
}

#[test]
fn a_cook_forks_a_recipe_from_another_forkful_whose_family_then_lists_the_fork() {
    let TwoSites {
        a_recipes,
        a,
        b_recipes: _,
        b,
        mut ben,
    } = two_sites();

    // A page that is no recipe document is refused, and nothing is saved.
    let form = ben.get("/following").unwrap();
    let refused = ben
        .submit(
            &form,
            "/following/fork",
            &[("recipe", &format!("{a}/cooks/ann"))],
        )
        .unwrap();
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(
        refused.body.contains("no schema.org Recipe"),
        "{}",
        refused.body
    );

    let forked = ben
        .submit(
            &form,
            "/following/fork",
            &[("recipe", &format!("{a}/recipes/shakshuka"))],
        )
        .unwrap();
    assert_eq!(forked.status, 303, "{}", forked.body);
    let at = forked.header("location").unwrap().to_owned();
    assert_eq!(at, "/recipes/shakshuka");
    // The same form sent again (its answer lost) makes no second fork.
    let again = ben
        .submit(
            &form,
            "/following/fork",
            &[("recipe", &format!("{a}/recipes/shakshuka"))],
        )
        .unwrap();
    assert_eq!(again.status, 303, "{}", again.body);
    assert_eq!(again.header("location"), Some("/recipes/shakshuka"));
    assert_eq!(ben.get("/recipes/shakshuka-2").unwrap().status, 404);
    // The fork starts from ann's version, named and linked as on her site.
    let page = ben.get(&at).unwrap();
    assert_eq!(page.status, 200);
    let parent = format!("{a}/recipes/shakshuka/versions/1");
    assert!(page.attrs("a", "href").contains(&parent), "{}", page.body);
    let json_ld = page.json_ld();
    assert_eq!(json_ld["isBasedOn"], parent);
    assert_eq!(json_ld["recipeIngredient"], json!(["2 eggs"]));
    assert_eq!(json_ld["author"]["name"], "ben");

    // Ann's site is told, and lists the fork in the family.
    let deadline = Instant::now() + Duration::from_secs(10);
    let listed = loop {
        let family = ureq::get(&format!("{a}/recipes/shakshuka/forks"))
            .call()
            .unwrap();
        let text = family.into_string().unwrap();
        if text.contains("remote-forks") || Instant::now() > deadline {
            break text;
        }
        thread::sleep(Duration::from_millis(100));
    };
    let b_host = b.trim_start_matches("http://");
    assert!(listed.contains(&format!("by @ben@{b_host}")), "{listed}");
    assert!(
        listed.contains(&format!("{b}/recipes/shakshuka")),
        "{listed}"
    );
    let forks = a_recipes
        .snapshot()
        .remote_forks(
            a_recipes.snapshot().recipe(&slug("shakshuka")).unwrap().id,
            100,
        )
        .unwrap();
    assert_eq!(forks.len(), 1);
    // Told again, it is the same fork.
    a_recipes
        .record_remote_fork(&slug("shakshuka"), &forks[0])
        .unwrap();
    let again = a_recipes
        .snapshot()
        .remote_forks(
            a_recipes.snapshot().recipe(&slug("shakshuka")).unwrap().id,
            100,
        )
        .unwrap();
    assert_eq!(again, forks);
}

/// Issue 54's fixtures: Mastodon's documents, as its documentation gives
/// them, are read as forkful reads every peer's.
#[test]
fn mastodons_own_documents_are_read() {
    let fixture = |name: &str| -> Value {
        let path = format!(
            "{}/tests/fixtures/mastodon/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    // WebFinger: the `self` link, past the profile page listed first.
    let jrd = fixture("webfinger.json");
    assert_eq!(
        forkful::federation::following::actor_link(&jrd),
        Some("https://mastodon.social/users/Gargron")
    );
    // The actor: its shared inbox, its key (2048 bits, SPKI), its name.
    let actor = fixture("actor.json");
    let read = forkful::federation::remote::actor_of(
        &actor,
        "https://my.example.com/actor#main-key",
        "https://my.example.com/actor",
    )
    .unwrap();
    assert_eq!(read.id, "https://my.example.com/actor");
    assert_eq!(read.inbox, "https://my.example.com/inbox");
    assert_eq!(read.name.as_deref(), Some("alice"));
    // The same document fetched from elsewhere, or for another key, is not
    // that actor.
    for (key, at) in [
        (
            "https://my.example.com/actor#other-key",
            "https://my.example.com/actor",
        ),
        (
            "https://my.example.com/actor#main-key",
            "https://my.example.com/files/actor",
        ),
        (
            "https://other.example/actor#main-key",
            "https://my.example.com/actor",
        ),
    ] {
        assert!(
            forkful::federation::remote::actor_of(&actor, key, at).is_err(),
            "{key} {at}"
        );
    }
    // The Digest as the documentation writes it: `sha-256=`, lower case.
    let body = br#"{"type":"Create"}"#;
    let lower = signature::digest(body).replacen("SHA-256=", "sha-256=", 1);
    assert_eq!(signature::check_digest(Some(&lower), body), Ok(()));
}

#[test]
fn what_another_site_says_is_believed_only_of_what_is_its_own() {
    use forkful::domain::federation::Following;
    let remote = Remote::start();
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    write(&recipes, "shakshuka", "Shakshuka");
    let site = serve(&recipes, &[]);
    let inbox = format!("{site}/inbox");
    let federation = Federation::open(&recipes).unwrap();
    let zoe = remote.actor();
    let yan = format!("{}/users/yan", remote.origin);
    let send = |by: &str, activity: Value| {
        let body = activity.to_string().into_bytes();
        let key = format!("{by}#main-key");
        send(&remote.key, &key, &inbox, &body)
    };
    let shakshuka = recipes.snapshot().recipe(&slug("shakshuka")).unwrap().id;
    let remote_forks = || recipes.snapshot().remote_forks(shakshuka, 1_000).unwrap();

    // A fork told by someone who is not its author is not listed; told by
    // its author, it is; deleted by its site, it is gone.
    let fork = |id: &str, author: &str| {
        json!({
            "id": format!("{}/recipes/{id}", remote.origin),
            "type": "Article",
            "name": "Zoe's shakshuka",
            "attributedTo": author,
            "url": format!("{}/recipes/{id}", remote.origin),
            "forkedFrom": format!("{site}/recipes/shakshuka/versions/1"),
        })
    };
    let create = |n: u32, by: &str, object: Value| {
        json!({
            "id": format!("{}/activities/c{n}", remote.origin),
            "type": "Create",
            "actor": by,
            "object": object,
        })
    };
    assert_eq!(send(&yan, create(1, &yan, fork("z1", &zoe))), 202);
    assert!(
        remote_forks().is_empty(),
        "a fork told by another was listed"
    );
    assert_eq!(send(&zoe, create(2, &zoe, fork("z1", &zoe))), 202);
    assert_eq!(remote_forks().len(), 1);
    let host = remote.origin.trim_start_matches("http://");
    assert_eq!(remote_forks()[0].by, format!("@zoe@{host}"));
    let delete = json!({
        "id": format!("{}/activities/d1", remote.origin),
        "type": "Delete",
        "actor": zoe,
        "object": format!("{}/recipes/z1", remote.origin),
    });
    assert_eq!(send(&zoe, delete), 202);
    assert!(remote_forks().is_empty(), "a deleted fork is still listed");

    // Ben here follows zoe: news by yan about zoe's things, or naming zoe
    // herself as its object, is not news of zoe; zoe's own is, with its
    // link only on her site.
    federation
        .start_following(
            &slug("ben"),
            &Following {
                object: zoe.clone(),
                name: "@zoe".into(),
                actor: zoe.clone(),
                inbox: format!("{}/inbox", remote.origin),
                follow_id: format!("{site}/cooks/ben#follows/1"),
                accepted: true,
            },
        )
        .unwrap();
    let note = |id: &str, author: &str, url: &str| json!({"id": id, "type": "Article", "name": "Hello", "attributedTo": author, "url": url});
    let zoe_as_object = note(&zoe, &yan, "javascript:alert(1)");
    assert_eq!(send(&yan, create(3, &yan, zoe_as_object)), 202);
    let by_yan = note(
        &format!("{}/notes/1", remote.origin),
        &zoe,
        "https://evil.example/",
    );
    assert_eq!(send(&yan, create(4, &yan, by_yan)), 202);
    let news = federation.news(&slug("ben")).unwrap();
    assert!(news.is_empty(), "{news:?}");
    let by_zoe = note(
        &format!("{}/notes/2", remote.origin),
        &zoe,
        "javascript:alert(1)",
    );
    assert_eq!(send(&zoe, create(5, &zoe, by_zoe)), 202);
    let news = federation.news(&slug("ben")).unwrap();
    assert_eq!(news.len(), 1, "{news:?}");
    assert_eq!(news[0].url, format!("{}/notes/2", remote.origin));
}

#[test]
fn a_recipe_keeps_at_most_its_share_of_forks_from_other_sites() {
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    write(&recipes, "shakshuka", "Shakshuka");
    let fork = |n: usize| forkful::domain::RemoteFork {
        url: format!("https://b.example/recipes/f{n}"),
        name: format!("Fork {n}"),
        by: "@ben@b.example".into(),
    };
    for n in 0..500 {
        recipes
            .record_remote_fork(&slug("shakshuka"), &fork(n))
            .unwrap();
    }
    let refused = recipes.record_remote_fork(&slug("shakshuka"), &fork(500));
    assert!(refused.is_err(), "a 501st fork was kept");
    // One told again is still taken (its title as told last).
    let mut renamed = fork(7);
    renamed.name = "Fork seven".into();
    recipes
        .record_remote_fork(&slug("shakshuka"), &renamed)
        .unwrap();
    // Told by another of its site, it is neither renamed nor re-pointed.
    let mut taken_over = fork(8);
    taken_over.by = "@mallory@b.example".into();
    taken_over.name = "Not Ben's".into();
    assert!(recipes
        .record_remote_fork(&slug("shakshuka"), &taken_over)
        .is_err());
    let id = recipes.snapshot().recipe(&slug("shakshuka")).unwrap().id;
    assert_eq!(recipes.snapshot().remote_fork_count(id).unwrap(), 500);
    assert!(recipes
        .snapshot()
        .remote_forks(id, 500)
        .unwrap()
        .contains(&fork(8)));
    let listed = recipes.snapshot().remote_forks(id, 100).unwrap();
    assert_eq!(listed.len(), 100);
    assert!(recipes
        .snapshot()
        .remote_forks(id, 500)
        .unwrap()
        .contains(&renamed));
}

/// Ann's shakshuka on site A at a new version: `ingredients` and `steps`.
fn ann_edits(recipes: &Recipes, based_on: u32, ingredients: &[&str], steps: &[&str]) {
    let content = ContentDraft {
        title: "Shakshuka".into(),
        summary: Some("Shakshuka, as ann makes it.".into()),
        ingredients: ingredients.iter().map(|l| l.to_string()).collect(),
        steps: steps
            .iter()
            .map(|s| forkful::domain::Step {
                section: None,
                text: s.to_string(),
            })
            .collect(),
        ..ContentDraft::default()
    };
    recipes
        .edit(
            &slug("shakshuka"),
            VersionNumber::new(u64::from(based_on)).unwrap(),
            content,
            &Change::by("ann", "changed"),
        )
        .unwrap();
}

/// Issue 54, item 4: the parent of a fork across sites is kept as facts,
/// numbered as on its site; its new versions reach the fork's page (told,
/// or fetched again when the cook opens the bring-in page) and come in
/// by the same three-way merge as a local parent's, clean or in
/// conflict; its retirement there is said here.
#[test]
fn a_fork_across_sites_brings_in_its_parents_new_versions_clean_and_in_conflict() {
    let TwoSites {
        a_recipes,
        a,
        b_recipes,
        b,
        mut ben,
    } = two_sites();
    ann_edits(&a_recipes, 1, &["2 eggs", "1 onion"], &[]);
    let a_host = a.trim_start_matches("http://");
    let address = format!("{a}/recipes/shakshuka");
    let form = ben.get("/following").unwrap();
    let forked = ben
        .submit(&form, "/following/fork", &[("recipe", &address)])
        .unwrap();
    assert_eq!(forked.status, 303, "{}", forked.body);

    // The fork starts at ann's version 2, numbered and linked as on A.
    let page = ben.get("/recipes/shakshuka").unwrap();
    let at_two = format!("{address}/versions/2");
    assert!(page.attrs("a", "href").contains(&at_two), "{}", page.body);
    assert!(page.body.contains(&format!("on {a_host}")), "{}", page.body);
    assert_eq!(page.json_ld()["isBasedOn"], at_two);
    // The family starts at ann's recipe, drawn and listed as on A.
    let family = ben.get("/recipes/shakshuka/forks").unwrap();
    assert_eq!(family.status, 200);
    assert!(
        family.attrs("a", "href").contains(&address),
        "{}",
        family.body
    );
    assert!(
        family.body.contains(&format!(" · on {a_host}")),
        "{}",
        family.body
    );
    let kept = Slug::elsewhere(&address);
    let kept_now = || b_recipes.snapshot().recipe(&kept).unwrap();
    assert_eq!(kept_now().version_count, 2, "numbered as on A");
    // The recipe kept from A is no recipe of B's: listed nowhere.
    let catalog = ben.get("/").unwrap();
    assert_eq!(catalog.status, 200);
    assert_eq!(
        catalog.body.matches("Shakshuka</a>").count(),
        1,
        "{}",
        catalog.body
    );
    assert!(!catalog.body.contains(&address), "{}", catalog.body);
    let sitemap = ben.get("/sitemaps/1.xml").unwrap();
    assert_eq!(sitemap.status, 200);
    assert!(
        sitemap.body.contains(&format!("{b}/recipes/shakshuka")),
        "{}",
        sitemap.body
    );
    assert!(!sitemap.body.contains(&address), "{}", sitemap.body);
    let found = ben.get("/search?q=shakshuka").unwrap();
    assert_eq!(found.status, 200);
    assert!(!found.body.contains(&address), "{}", found.body);
    let in_step = ben.get("/recipes/shakshuka/bring-in").unwrap();
    assert!(
        in_step.body.contains("nothing to bring in"),
        "{}",
        in_step.body
    );
    // Forking followed the recipe: A accepts.
    let following = wait_for_page(&mut ben, "/following", |p| {
        p.texts("ul.following li").len() == 1 && !p.body.contains("waiting")
    });
    assert!(!following.body.contains("waiting"), "{}", following.body);

    // A clean change, told: ann adds a step, and the fork's page says so
    // with no fetch of its own.
    ann_edits(
        &a_recipes,
        2,
        &["2 eggs", "1 onion"],
        &["Crack the eggs in."],
    );
    let page = wait_for_page(&mut ben, "/recipes/shakshuka", |p| {
        p.texts(".apart").join(" ").contains("1 new version")
    });
    let apart = page.texts(".apart").join(" ");
    assert!(
        apart.contains("has 1 new version since version 2"),
        "{apart}"
    );
    assert!(
        page.attrs(".apart a", "href")
            .contains(&format!("{address}/diff?from=2&to=3")),
        "{}",
        page.body
    );
    let form = ben.get("/recipes/shakshuka/bring-in").unwrap();
    assert_eq!(form.status, 200, "{}", form.body);
    assert!(form.texts("fieldset.conflict").is_empty(), "{}", form.body);
    let action = "/recipes/shakshuka/bring-in";
    let saved = ben
        .submit(&form, action, &[("note", "ann's step")])
        .unwrap();
    assert_eq!(saved.status, 303, "{}", saved.body);
    let fork = b_recipes.snapshot().recipe(&slug("shakshuka")).unwrap();
    assert_eq!(fork.content.steps().len(), 1);
    assert_eq!(fork.brought_in, VersionNumber::new(3));
    let history = ben.get("/recipes/shakshuka/history").unwrap();
    assert!(
        history.body.contains("brought in version 3 of Shakshuka"),
        "{}",
        history.body
    );

    // A conflict, fetched: ben stops following, both change the eggs, and
    // the bring-in page fetches ann's recipe again.
    let form = ben.get("/following").unwrap();
    let stopped = ben
        .submit(&form, "/following/stop", &[("object", &address)])
        .unwrap();
    assert_eq!(stopped.status, 303);
    let mine = ContentDraft {
        ingredients: vec!["3 eggs".into(), "1 onion".into()],
        ..fork.content.to_draft()
    };
    b_recipes
        .edit(
            &slug("shakshuka"),
            fork.newest(),
            mine,
            &Change::by("ben", "eggs"),
        )
        .unwrap();
    ann_edits(
        &a_recipes,
        3,
        &["4 eggs", "1 onion"],
        &["Crack the eggs in."],
    );
    assert_eq!(kept_now().version_count, 3, "not told: not yet known");
    let form = ben.get("/recipes/shakshuka/bring-in").unwrap();
    assert_eq!(kept_now().version_count, 4, "fetched again");
    assert_eq!(form.texts("fieldset.conflict").len(), 1, "{}", form.body);
    let conflict = form.texts("fieldset.conflict").join(" ");
    assert!(
        conflict.contains("3 eggs") && conflict.contains("4 eggs"),
        "{conflict}"
    );
    let saved = ben
        .submit(
            &form,
            action,
            &[("note", "ann's eggs"), ("choice-0", "theirs")],
        )
        .unwrap();
    assert_eq!(saved.status, 303, "{}", saved.body);
    let fork = b_recipes.snapshot().recipe(&slug("shakshuka")).unwrap();
    assert_eq!(fork.content.ingredients(), ["4 eggs", "1 onion"]);
    assert_eq!(fork.brought_in, VersionNumber::new(4));
    // Opened again with nothing new there, the page fetches and keeps
    // nothing more.
    ben.get("/recipes/shakshuka/bring-in").unwrap();
    assert_eq!(kept_now().version_count, 4);

    // Ann retires it, and ben (following her again) hears: the fork's
    // page says its parent was retired, and nothing comes from it.
    let form = ben.get("/following").unwrap();
    let followed = ben
        .submit(
            &form,
            "/following",
            &[("address", &format!("@ann@{a_host}"))],
        )
        .unwrap();
    assert_eq!(followed.status, 303, "{}", followed.body);
    wait_for_page(&mut ben, "/following", |p| !p.body.contains("waiting"));
    a_recipes
        .retire(
            &slug("shakshuka"),
            VersionNumber::new(4).unwrap(),
            &Change::by("ann", "gone"),
        )
        .unwrap();
    let page = wait_for_page(&mut ben, "/recipes/shakshuka", |p| {
        p.texts(".apart").join(" ").contains("retired")
    });
    assert!(
        page.texts(".apart")
            .join(" ")
            .contains("was retired by its author"),
        "{}",
        page.body
    );
    assert!(kept_now().retired);
    let bring_in = ben.get("/recipes/shakshuka/bring-in").unwrap();
    assert!(bring_in.status >= 400, "{}", bring_in.body);
}

/// Issue 54's three sites: ann's recipe on A, ben's fork of it on B, and
/// cat's fork of ben's on C. Each site lists the fork made of its recipe
/// elsewhere, each fork's lineage names its parent's site, and ben's new
/// version reaches cat's fork, which brings it in.
#[test]
fn three_sites_fork_a_recipe_in_turn_and_each_hears_of_the_next() {
    let sites: Vec<(Recipes, String)> = (0..3)
        .map(|_| {
            let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
            let origin = serve(&recipes, &[]);
            (recipes, origin)
        })
        .collect();
    let [(a_recipes, a), (b_recipes, b), (c_recipes, c)] = &sites[..] else {
        unreachable!()
    };
    write(a_recipes, "shakshuka", "Shakshuka");
    let fork_on = |site: &str, cook: &str, address: &str| {
        let mut browser = crate::http_client::Browser::new(site);
        browser.sign_up(cook).unwrap();
        let form = browser.get("/following").unwrap();
        let forked = browser
            .submit(&form, "/following/fork", &[("recipe", address)])
            .unwrap();
        assert_eq!(forked.status, 303, "{}", forked.body);
        assert_eq!(forked.header("location"), Some("/recipes/shakshuka"));
        browser
    };
    let mut ben = fork_on(b, "ben", &format!("{a}/recipes/shakshuka"));
    // Cat gives the address of a version of ben's recipe: his fork
    // follows the recipe itself, whose new versions reach it below.
    let mut cat = fork_on(c, "cat", &format!("{b}/recipes/shakshuka/versions/1"));

    // Cat's fork starts at ben's, on B; ben's at ann's, on A.
    let page = cat.get("/recipes/shakshuka").unwrap();
    let at_b = format!("{b}/recipes/shakshuka/versions/1");
    assert!(page.attrs("a", "href").contains(&at_b), "{}", page.body);
    assert_eq!(page.json_ld()["isBasedOn"], at_b);
    let page = ben.get("/recipes/shakshuka").unwrap();
    assert_eq!(
        page.json_ld()["isBasedOn"],
        format!("{a}/recipes/shakshuka/versions/1")
    );
    // A lists ben's fork, and B lists cat's.
    for (site, by) in [
        (a, format!("@ben@{}", host_of(b))),
        (b, format!("@cat@{}", host_of(c))),
    ] {
        let deadline = Instant::now() + Duration::from_secs(10);
        let family = loop {
            let text = ureq::get(&format!("{site}/recipes/shakshuka/forks"))
                .call()
                .unwrap()
                .into_string()
                .unwrap();
            if text.contains(&by) || Instant::now() > deadline {
                break text;
            }
            thread::sleep(Duration::from_millis(100));
        };
        assert!(family.contains(&format!("by {by}")), "{site}: {family}");
    }
    assert_eq!(
        c_recipes
            .snapshot()
            .recipe(&Slug::elsewhere(&format!("{b}/recipes/shakshuka")))
            .unwrap()
            .version_count,
        1
    );

    // Ben changes his fork: C is told (cat follows it since forking), and
    // cat brings the change in.
    let following = wait_for_page(&mut cat, "/following", |p| !p.body.contains("waiting"));
    assert!(!following.body.contains("waiting"), "{}", following.body);
    assert!(
        following
            .attrs("ul.following a", "href")
            .contains(&format!("{b}/recipes/shakshuka")),
        "{}",
        following.body
    );
    let fork = b_recipes.snapshot().recipe(&slug("shakshuka")).unwrap();
    let changed = ContentDraft {
        ingredients: vec!["2 eggs".into(), "1 chilli".into()],
        ..fork.content.to_draft()
    };
    b_recipes
        .edit(
            &slug("shakshuka"),
            fork.newest(),
            changed,
            &Change::by("ben", "chilli"),
        )
        .unwrap();
    let page = wait_for_page(&mut cat, "/recipes/shakshuka", |p| {
        p.texts(".apart").join(" ").contains("1 new version")
    });
    assert!(
        page.texts(".apart")
            .join(" ")
            .contains("has 1 new version since version 1"),
        "{}",
        page.body
    );
    let form = cat.get("/recipes/shakshuka/bring-in").unwrap();
    let saved = cat
        .submit(
            &form,
            "/recipes/shakshuka/bring-in",
            &[("note", "ben's chilli")],
        )
        .unwrap();
    assert_eq!(saved.status, 303, "{}", saved.body);
    let cats = c_recipes.snapshot().recipe(&slug("shakshuka")).unwrap();
    assert_eq!(cats.content.ingredients(), ["2 eggs", "1 chilli"]);
    // Ann's recipe is untouched by either.
    let anns = a_recipes.snapshot().recipe(&slug("shakshuka")).unwrap();
    assert_eq!(anns.version_count, 1);
}

fn host_of(origin: &str) -> &str {
    origin.trim_start_matches("http://")
}

/// Issue 54, item 4: a fork across sites suggests its changes back. Its
/// suggestion is offered to the recipe's site, whose author reviews it as
/// any other, by the suggester's handle and site; the decline and then the
/// accept, each with its note, come back, and a suggestion taken whole
/// leaves the fork in step with the version that took it.
#[test]
fn a_fork_across_sites_suggests_back_and_hears_the_answers() {
    let TwoSites {
        a_recipes,
        a,
        b_recipes,
        b,
        mut ben,
    } = two_sites();
    let form = ben.get("/following").unwrap();
    let address = format!("{a}/recipes/shakshuka");
    let forked = ben
        .submit(&form, "/following/fork", &[("recipe", &address)])
        .unwrap();
    assert_eq!(forked.status, 303, "{}", forked.body);
    wait_for_page(&mut ben, "/following", |p| !p.body.contains("waiting"));
    let by = format!("@ben@{}", host_of(&b));
    let anns = a_recipes.snapshot().recipe(&slug("shakshuka")).unwrap().id;
    let suggestion = |n: u32| {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let found = a_recipes.snapshot().suggestion(anns, n).unwrap();
            if found.is_some() || Instant::now() > deadline {
                return found.expect("the offer reached A");
            }
            thread::sleep(Duration::from_millis(100));
        }
    };
    let suggest = |ben: &mut crate::http_client::Browser, lines: &[&str], message: &str| {
        let fork = b_recipes.snapshot().recipe(&slug("shakshuka")).unwrap();
        let changed = ContentDraft {
            ingredients: lines.iter().map(|l| l.to_string()).collect(),
            ..fork.content.to_draft()
        };
        b_recipes
            .edit(
                &slug("shakshuka"),
                fork.newest(),
                changed,
                &Change::by("ben", "mine"),
            )
            .unwrap();
        let page = ben.get("/recipes/shakshuka").unwrap();
        assert!(
            page.attrs("a", "href")
                .contains(&"/recipes/shakshuka/suggest".to_owned()),
            "{}",
            page.body
        );
        let form = ben.get("/recipes/shakshuka/suggest").unwrap();
        assert_eq!(form.status, 200, "{}", form.body);
        let sent = ben
            .submit(&form, "/recipes/shakshuka/suggest", &[("message", message)])
            .unwrap();
        assert_eq!(sent.status, 303, "{}", sent.body);
        assert_eq!(sent.header("location"), Some("/recipes/shakshuka"));
    };

    // Offered, and declined with a note.
    suggest(&mut ben, &["2 eggs", "1 chilli"], "Chilli makes it.");
    let first = suggestion(1);
    assert_eq!(first.by.as_deref(), Some(by.as_str()));
    assert_eq!(first.message, "Chilli makes it.");
    assert_eq!(first.from_version, VersionNumber::new(2).unwrap());
    let page = ureq::get(&format!("{address}/suggestions/1"))
        .call()
        .unwrap();
    let page = page.into_string().unwrap();
    assert!(page.contains(&format!("by {by}")), "{page}");
    assert!(page.contains("1 chilli"), "{page}");
    a_recipes
        .decline_suggestion(
            &slug("shakshuka"),
            1,
            forkful::domain::Review::of(VersionNumber::FIRST, first.from_version),
            "Not in mine.",
            &Change::by("ann", "declined"),
        )
        .unwrap();
    let page = wait_for_page(&mut ben, "/recipes/shakshuka", |p| {
        p.body.contains("declined")
    });
    let said = page.texts(".suggestion-outcome").join(" ");
    assert!(
        said.contains("was declined") && said.contains("Not in mine."),
        "{said}"
    );

    // Offered again, changed, and taken whole: ann's version 2 is ben's
    // changes, and his fork is in step with it once it hears of it.
    suggest(&mut ben, &["2 eggs", "1 pepper"], "A pepper, then?");
    suggestion(2);
    // Withdrawn here, from the page the fork's says what became of it, it
    // is withdrawn there (an `Undo` of the offer). Only by ben.
    let fork_page = ben.get("/recipes/shakshuka").unwrap();
    assert!(
        fork_page
            .attrs("a", "href")
            .contains(&"/recipes/shakshuka/offer".to_owned()),
        "{}",
        fork_page.body
    );
    let mut cal = crate::http_client::Browser::new(&b);
    cal.sign_up("cal").unwrap();
    let seen_by_cal = cal.get("/recipes/shakshuka/offer").unwrap();
    assert_eq!(seen_by_cal.status, 200, "{}", seen_by_cal.body);
    assert!(
        seen_by_cal.body.contains("A pepper, then?"),
        "{}",
        seen_by_cal.body
    );
    assert!(
        !seen_by_cal.body.contains("Withdraw"),
        "{}",
        seen_by_cal.body
    );
    let offer_page = ben.get("/recipes/shakshuka/offer").unwrap();
    assert!(
        offer_page.body.contains("Withdraw this suggestion"),
        "{}",
        offer_page.body
    );
    // Cal's own token, on ben's suggestion's number: refused.
    let csrf = cal
        .get("/recipes/new")
        .unwrap()
        .attrs("input[name=csrf]", "value")[0]
        .clone();
    let forged = cal
        .post(
            "/recipes/shakshuka/offer",
            &[("csrf", &csrf), ("number", "2")],
        )
        .unwrap();
    assert_eq!(forged.status, 403, "{}", forged.body);
    let garbled = ben
        .submit(
            &offer_page,
            "/recipes/shakshuka/offer",
            &[("number", "two")],
        )
        .unwrap();
    assert_eq!(garbled.status, 400, "{}", garbled.body);
    let declined = ben
        .submit(&offer_page, "/recipes/shakshuka/offer", &[("number", "1")])
        .unwrap();
    assert_eq!(declined.status, 409, "{}", declined.body);
    assert_eq!(suggestion(2).state, forkful::domain::SuggestionState::Open);
    let withdrawn = ben
        .submit(&offer_page, "/recipes/shakshuka/offer", &[])
        .unwrap();
    assert_eq!(withdrawn.status, 303, "{}", withdrawn.body);
    assert_eq!(withdrawn.header("location"), Some("/recipes/shakshuka"));
    let deadline = Instant::now() + Duration::from_secs(10);
    while suggestion(2).state == forkful::domain::SuggestionState::Open && Instant::now() < deadline
    {
        thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        suggestion(2).state,
        forkful::domain::SuggestionState::Withdrawn
    );
    suggest(&mut ben, &["2 eggs", "1 red pepper"], "A red pepper, then?");
    let third = suggestion(3);
    assert_eq!(third.from_version, VersionNumber::new(4).unwrap());
    a_recipes
        .accept_suggestion(
            &slug("shakshuka"),
            3,
            forkful::domain::Review::of(VersionNumber::FIRST, third.from_version),
            &[],
            "Lovely.",
            &Change::by("ann", "pepper"),
        )
        .unwrap();
    let now = a_recipes.snapshot().recipe(&slug("shakshuka")).unwrap();
    assert_eq!(now.content.ingredients(), ["2 eggs", "1 red pepper"]);
    let history = ureq::get(&format!("{address}/history")).call().unwrap();
    let history = history.into_string().unwrap();
    assert!(
        history.contains(&format!("took suggestion 3 by {by}")),
        "{history}"
    );
    let page = wait_for_page(&mut ben, "/recipes/shakshuka", |p| {
        p.body.contains("was taken into") && p.texts(".apart").join(" ").contains("In step")
    });
    let said = page.texts(".apart").join(" ");
    assert!(
        said.contains("was taken into Shakshuka, in its version 2"),
        "{said}"
    );
    assert!(said.contains("Lovely."), "{said}");
    let bring_in = ben.get("/recipes/shakshuka/bring-in").unwrap();
    assert!(
        bring_in.body.contains("nothing to bring in"),
        "{}",
        bring_in.body
    );

    // Offered once more, then ann retires her recipe: the offer is closed
    // there, and here once its `Reject` (saying `retired`) comes.
    // It starts from what ann took whole (its `baseForkVersion`): the
    // review shows the feta alone, not the red pepper again.
    suggest(&mut ben, &["2 eggs", "1 red pepper", "feta"], "Feta?");
    let fourth = suggestion(4);
    assert_eq!(fourth.base_fork_version, Some(third.from_version));
    let review =
        forkful::domain::pages::suggestion_show(&a_recipes.snapshot(), &slug("shakshuka"), 4)
            .unwrap();
    assert_eq!(review.proposed.summary(), "1 ingredient");

    // A second fork of ben's (from another window) offers its own: the
    // first fork's page withdraws the first fork's offers only.
    let mut window = crate::http_client::Browser::new(&b);
    let login = window.get("/login").unwrap();
    let fields = [
        ("handle", "ben"),
        ("password", crate::http_client::PASSWORD),
    ];
    assert_eq!(
        window.submit(&login, "/login", &fields).unwrap().status,
        303
    );
    let form = window.get("/following").unwrap();
    let forked = window
        .submit(&form, "/following/fork", &[("recipe", &address)])
        .unwrap();
    let second = forked.header("location").unwrap().to_owned();
    assert_ne!(second, "/recipes/shakshuka");
    let other = Slug::parse(second.trim_start_matches("/recipes/")).unwrap();
    let now = b_recipes.snapshot().recipe(&other).unwrap();
    let mint = ContentDraft {
        ingredients: vec!["2 eggs".into(), "1 red pepper".into(), "mint".into()],
        ..now.content.to_draft()
    };
    b_recipes
        .edit(&other, now.newest(), mint, &Change::by("ben", "mint"))
        .unwrap();
    let newest = b_recipes.snapshot().recipe(&other).unwrap().newest();
    b_recipes
        .suggest(&other, newest, "Mint?", &Change::by("ben", "suggest"))
        .unwrap();
    suggestion(5);
    let first_fork = ben.get("/recipes/shakshuka/offer").unwrap();
    let crossed = ben
        .submit(&first_fork, "/recipes/shakshuka/offer", &[("number", "5")])
        .unwrap();
    assert_eq!(crossed.status, 404, "{}", crossed.body);
    assert_eq!(suggestion(5).state, forkful::domain::SuggestionState::Open);
    let newest = a_recipes
        .snapshot()
        .recipe(&slug("shakshuka"))
        .unwrap()
        .newest();
    a_recipes
        .retire(&slug("shakshuka"), newest, &Change::by("ann", "gone"))
        .unwrap();
    assert_eq!(
        suggestion(4).state,
        forkful::domain::SuggestionState::Closed
    );
    let kept = b_recipes
        .snapshot()
        .recipe(&Slug::elsewhere(&address))
        .unwrap()
        .id;
    let deadline = Instant::now() + Duration::from_secs(10);
    let state = || {
        b_recipes
            .snapshot()
            .suggestion(kept, 4)
            .unwrap()
            .unwrap()
            .state
    };
    while state() == forkful::domain::SuggestionState::Open && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(state(), forkful::domain::SuggestionState::Closed);
}

/// Issue 54, item 5: a peer that signs the RFC 9421 way (`Signature-Input`,
/// `Signature` and `Content-Digest`, the form Mastodon's verifier reads) is
/// taken as one signing the older way is, and its tampered request is
/// refused.
#[test]
fn a_follow_signed_the_rfc_9421_way_is_taken_and_a_tampered_one_refused() {
    let remote = Remote::start();
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    write(&recipes, "shakshuka", "Shakshuka");
    let site = serve(&recipes, &[]);
    let inbox = format!("{site}/cooks/ann/inbox");
    let body = follow(&remote, &site, "rfc9421");
    let url = url::Url::parse(&inbox).unwrap();
    let now = SystemTime::now();
    let headers = forkful::federation::rfc9421::sign(
        &remote.key,
        &remote.key_id(),
        "POST",
        &url,
        Some(&body),
        now,
    );
    let federation = Federation::open(&recipes).unwrap();
    let followers = || {
        federation
            .follower_count(&Followed::Cook(slug("ann")))
            .unwrap()
    };
    // Another body than the one signed; its digest made for it; a signature
    // over less than the body's digest; another key.
    let other = follow(&remote, &site, "other");
    assert_eq!(post(&inbox, &headers, &other), 401);
    let with = |name: &str, value: String| -> Vec<(&'static str, String)> {
        headers
            .iter()
            .map(|(n, v)| (*n, if *n == name { value.clone() } else { v.clone() }))
            .collect()
    };
    let digest = forkful::federation::rfc9421::content_digest(&other);
    assert_eq!(post(&inbox, &with("content-digest", digest), &other), 401);
    let input = headers
        .iter()
        .find(|(n, _)| *n == "signature-input")
        .unwrap();
    let less = input.1.replace(" \"content-digest\"", "");
    assert_eq!(post(&inbox, &with("signature-input", less), &body), 401);
    let stranger = KeyPair::generate().unwrap();
    let forged = forkful::federation::rfc9421::sign(
        &stranger,
        &remote.key_id(),
        "POST",
        &url,
        Some(&body),
        now,
    );
    assert_eq!(post(&inbox, &forged, &body), 401);
    assert_eq!(followers(), 0);
    assert_eq!(post(&inbox, &headers, &body), 202);
    assert_eq!(followers(), 1);
}

/// Issue 54, item 5: a site whose actors say (FEP-844e) that it takes RFC
/// 9421 signatures is sent deliveries signed that way, verified here with
/// the cook's key; once it refuses one, the delivery goes again at once the
/// older way, and later ones go that way too. forkful's own actors say it
/// takes them.
#[test]
fn deliveries_are_signed_the_rfc_9421_way_where_a_site_takes_them_and_the_older_way_once_it_refuses(
) {
    let remote = Remote::start();
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    write(&recipes, "shakshuka", "Shakshuka");
    let site = serve(&recipes, &[]);
    let (_, _, ann) = get_json(&format!("{site}/cooks/ann"), "application/activity+json");
    assert_eq!(
        ann["generator"]["implements"][0]["href"],
        "https://datatracker.ietf.org/doc/html/rfc9421"
    );
    let pem = ann["publicKey"]["publicKeyPem"]
        .as_str()
        .unwrap()
        .to_owned();
    let key = PublicKey::from_pem(&pem).unwrap();
    let raw = |kind: &str| -> Vec<(Headers, String)> {
        let posts = remote.received.posts.lock().unwrap();
        posts
            .iter()
            .filter(|(_, body)| serde_json::from_str::<Value>(body).unwrap()["type"] == kind)
            .cloned()
            .collect()
    };

    // Rhea follows ann: the Accept is signed the RFC 9421 way, by ann.
    let rhea = format!("{}/users/rhea", remote.origin);
    let follow = follow_by(
        &rhea,
        &format!("{}/activities/r1", remote.origin),
        &format!("{site}/cooks/ann"),
    );
    let inbox = ann["inbox"].as_str().unwrap();
    assert_eq!(
        send(&remote.key, &format!("{rhea}#main-key"), inbox, &follow),
        202
    );
    remote.wait_for("Accept", 1);
    let (headers, body) = raw("Accept").pop().expect("an Accept came");
    let request = Request {
        method: "POST",
        target: "/inbox",
        headers: &headers,
    };
    let signed = Signed::read(&request, body.as_bytes()).unwrap();
    assert!(matches!(signed, Signed::Message(_)), "{headers:?}");
    assert_eq!(signed.key_id(), format!("{site}/cooks/ann#main-key"));
    signed
        .check_form(&request, true, SystemTime::now())
        .unwrap();
    signed.check_key(&request, "http", &key).unwrap();
    assert_eq!(remote.received.refused.load(Ordering::SeqCst), 0);

    // A request naming a key at an address there that refuses everyone
    // (fetched both ways, refused both ways) says nothing of the form: the
    // next delivery there is still signed the RFC 9421 way.
    let locked = format!("{}/locked#main-key", remote.origin);
    let odd = follow_by(
        &format!("{}/locked", remote.origin),
        &format!("{}/activities/r2", remote.origin),
        &format!("{site}/cooks/ann"),
    );
    assert_eq!(send(&remote.key, &locked, inbox, &odd), 401);
    write(&recipes, "soup", "Soup");
    remote.wait_for("Create", 1);
    let (headers, _) = raw("Create").pop().expect("a Create came");
    assert!(
        headers.iter().any(|(n, _)| n == "signature-input"),
        "{headers:?}"
    );

    // The site refuses that form: the Create is refused once, then sent
    // the older way; the Update after it goes the older way at once.
    remote
        .received
        .refuses_rfc9421
        .store(true, Ordering::SeqCst);
    write(&recipes, "dal", "Dal");
    let creates = remote.wait_for("Create", 2);
    assert_eq!(creates.len(), 2, "the Create did not come the older way");
    let (headers, create) = &creates[1];
    assert_eq!(create["object"]["name"], "Dal");
    assert!(
        !headers.iter().any(|(n, _)| n == "signature-input"),
        "{headers:?}"
    );
    check_signed_by_ann(&site, headers, create, &pem);
    assert_eq!(remote.received.refused.load(Ordering::SeqCst), 1);
    let edited = ContentDraft {
        title: "Dal".into(),
        ingredients: vec!["200 g lentils".into()],
        ..ContentDraft::default()
    };
    let first = VersionNumber::FIRST;
    recipes
        .edit(&slug("dal"), first, edited, &Change::by("ann", "lentils"))
        .unwrap();
    let updates = remote.wait_for("Update", 1);
    assert_eq!(updates.len(), 1);
    check_signed_by_ann(&site, &updates[0].0, &updates[0].1, &pem);
    assert_eq!(remote.received.refused.load(Ordering::SeqCst), 1);
}
