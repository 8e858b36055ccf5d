//! Issue 54's Show: the documents forkful serves and sends, read as JSON-LD.
//! ActivityPub peers mostly read them as plain JSON, but they are JSON-LD,
//! and a term no context defines means nothing to a peer that expands
//! them. Every document of the demo (each recipe and a version of it, each
//! cook's actor, outbox and followers, the site's actor) and each kind of
//! activity sent (`Accept`, `Create`, `Update`, `Delete`, `Follow`, `Undo`,
//! `Offer` and its answers) is expanded by PyLD, a JSON-LD 1.1 processor
//! (Debian's `python3-pyld`, installed when missing), against local copies
//! of the contexts they name (`tests/fixtures/jsonld`), and
//! `tests/support/jsonld_check.py` reports every term that expands to
//! nothing of its own, every id or type that is not an absolute IRI, and
//! every value that cannot be of the type its term coerces it to.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;

use serde_json::{json, Value};

use forkful::domain::{Change, ContentDraft, Recipes, Slug, VersionNumber};
use forkful::store::Store;
use forkful::views::activitypub::{self, OfferAnswer};

use crate::federation::{follow_by, get_json, send, serve, Remote};
use crate::helpers::apt_install;

const PYTHON: &str = "/usr/bin/python3";
const ACTIVITY_JSON: &str = "application/activity+json";

/// Debian's PyLD, installed with apt-get when Debian's Python cannot
/// import it. Panics, saying why, when it cannot be had.
fn install_pyld() {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let present = || {
        Command::new(PYTHON)
            .args(["-c", "import pyld"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if present() {
        return;
    }
    if let Err(why) = apt_install(&["python3-pyld"]) {
        panic!("the JSON-LD test needs Debian's python3-pyld and could not install it: {why}");
    }
    assert!(
        present(),
        "apt-get installed python3-pyld, yet {PYTHON} cannot import it"
    );
}

/// What the JSON-LD check finds in `documents` (named), one line each.
fn findings(documents: &[(String, Value)]) -> Vec<String> {
    install_pyld();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let input: Vec<Value> = documents
        .iter()
        .map(|(name, document)| json!({"name": name, "document": document}))
        .collect();
    let mut child = Command::new(PYTHON)
        .arg(root.join("tests/support/jsonld_check.py"))
        .arg(root.join("tests/fixtures/jsonld"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 starts");
    let stdin = child.stdin.take().unwrap();
    serde_json::to_writer(stdin, &input).unwrap();
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<String> = said.lines().map(str::to_owned).collect();
    assert_eq!(
        out.status.success(),
        lines.is_empty(),
        "the check's exit status and its findings disagree: {said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    lines
}

/// `url`'s ActivityStreams document, which must be served (200).
fn served(url: &str) -> Value {
    let (status, kind, document) = get_json(url, ACTIVITY_JSON);
    assert_eq!((status, kind.as_str()), (200, ACTIVITY_JSON), "{url}");
    document
}

/// The demo's recipes, by the names of their seed files.
fn demo_slugs() -> Vec<String> {
    forkful::seed::demo_files()
        .into_iter()
        .filter_map(|(name, _)| name.strip_suffix(".edn").map(str::to_owned))
        .collect()
}

/// Each recipe of the demo, its first version, and each of its cooks'
/// actor, outbox and followers, as served; and the site's own actor.
fn served_documents(site: &str) -> Vec<(String, Value)> {
    let mut documents = Vec::new();
    let mut cooks = Vec::new();
    for slug in demo_slugs() {
        let recipe = served(&format!("{site}/recipes/{slug}"));
        if let Some(cook) = recipe["attributedTo"].as_str() {
            if !cooks.contains(&cook.to_owned()) {
                cooks.push(cook.to_owned());
            }
        }
        documents.push((format!("recipe {slug}"), recipe));
        let version = served(&format!("{site}/recipes/{slug}/versions/1"));
        documents.push((format!("version 1 of {slug}"), version));
    }
    assert!(cooks.len() > 1, "the demo has several cooks: {cooks:?}");
    for cook in cooks {
        documents.push((format!("actor {cook}"), served(&cook)));
        documents.push((format!("outbox {cook}"), served(&format!("{cook}/outbox"))));
        let followers = served(&format!("{cook}/followers"));
        documents.push((format!("followers {cook}"), followers));
    }
    documents.push(("the site's actor".into(), served(&format!("{site}/actor"))));
    documents
}

/// A follow of `handle` from the stand-in site, and a recipe of theirs
/// written, edited and retired: each activity sent to the stand-in's
/// inbox (`Accept`, `Create`, `Update`, `Delete`), as it arrived.
fn sent_documents(recipes: &Recipes, site: &str, handle: &str) -> Vec<(String, Value)> {
    let remote = Remote::start();
    let actor = served(&format!("{site}/cooks/{handle}"));
    let inbox = actor["inbox"].as_str().unwrap();
    let follow = follow_by(
        &format!("{}/users/zoe", remote.origin),
        &format!("{}/activities/1", remote.origin),
        actor["id"].as_str().unwrap(),
    );
    assert_eq!(send(&remote.key, &remote.key_id(), inbox, &follow), 202);
    let slug = Slug::parse("kitchari-for-jsonld").unwrap();
    let draft = |ingredients: &[&str]| ContentDraft {
        title: "Kitchari".into(),
        summary: Some("Rice and *mung* dal, one pot.".into()),
        ingredients: ingredients.iter().map(|l| l.to_string()).collect(),
        tags: vec!["vegan".into()],
        ..ContentDraft::default()
    };
    let by = |what: &str| Change::by(handle, what);
    let mut documents = Vec::new();
    let mut arrived = |kind: &str| {
        let sent = remote.wait_for(kind, 1);
        assert_eq!(
            sent.len(),
            1,
            "one {kind} should have come to the stand-in site"
        );
        documents.push((format!("{kind} sent"), sent[0].1.clone()));
    };
    arrived("Accept");
    recipes
        .create(&slug, draft(&["1 cup rice"]), &by("new"))
        .unwrap();
    arrived("Create");
    let more = draft(&["1 cup rice", "1/2 cup mung dal"]);
    recipes
        .edit(&slug, VersionNumber::FIRST, more, &by("dal"))
        .unwrap();
    arrived("Update");
    let second = VersionNumber::new(2).unwrap();
    recipes.retire(&slug, second, &by("gone")).unwrap();
    arrived("Delete");
    documents
}

/// The activities of a suggestion across sites and of following something
/// elsewhere, as the delivery queue is given them: made by the same
/// functions, over a recipe document as served.
fn offer_documents(site: &str, handle: &str, fork: &Value) -> Vec<(String, Value)> {
    let parse = |text: String| serde_json::from_str::<Value>(&text).unwrap();
    let mut fork = fork.clone();
    fork.as_object_mut().unwrap().remove("@context");
    let target = "https://a.example/recipes/shakshuka";
    let (_, offer) = activitypub::offer(site, handle, 7, (target, 2, Some(1)), fork, "Less cumin.");
    let answer = |accepted, closed, reply| {
        let answer = OfferAnswer {
            offer: "https://b.example/offers/7",
            slug: "shakshuka",
            number: 3,
            accepted,
            closed,
            reply,
        };
        parse(activitypub::offer_answer(site, handle, &answer).1)
    };
    let follow_id = format!("{site}/cooks/{handle}#follows/1");
    let (_, unfollow) = activitypub::follow_undone(site, handle, &follow_id, target);
    vec![
        ("Offer".into(), parse(offer)),
        (
            "Undo of an Offer".into(),
            parse(activitypub::offer_undone(site, handle, 7).1),
        ),
        (
            "Accept of an Offer".into(),
            answer(Some((4, true, 1)), false, Some("Thanks!")),
        ),
        (
            "Reject of an Offer".into(),
            answer(None, false, Some("Not for me.")),
        ),
        ("Reject, retired".into(), answer(None, true, None)),
        (
            "Follow".into(),
            parse(activitypub::follow(site, handle, &follow_id, target)),
        ),
        ("Undo of a Follow".into(), parse(unfollow)),
    ]
}

#[test]
fn every_document_served_or_sent_expands_with_each_term_defined_by_its_contexts() {
    let store = Store::temporary().unwrap();
    forkful::seed::demo(&store).unwrap();
    let recipes = Recipes::open(store).unwrap();
    let site = serve(&recipes, &[]);

    let mut documents = served_documents(&site);
    let cook = documents
        .iter()
        .find_map(|(name, _)| name.strip_prefix("actor "))
        .unwrap()
        .to_owned();
    let handle = cook.rsplit('/').next().unwrap().to_owned();
    let fork = documents
        .iter()
        .map(|(_, document)| document)
        .find(|document| document.get("forkedFrom").is_some())
        .expect("the demo has forks")
        .clone();
    documents.extend(offer_documents(&site, &handle, &fork));
    documents.extend(sent_documents(&recipes, &site, &handle));
    let found = findings(&documents);
    assert!(
        found.is_empty(),
        "{} of {} documents say what their contexts do not define:\n{}",
        found.len(),
        documents.len(),
        found.join("\n")
    );

    // The check finds what it is for: an actor with a term of no context
    // and one with a prefix of none, and an offer's answer whose
    // `published` is no date-time and whose `retired` is no boolean.
    let named = |name: &str| {
        let found = documents.iter().find(|(n, _)| n.starts_with(name));
        found.unwrap().1.clone()
    };
    let mut odd_actor = named("actor ");
    odd_actor["favouriteDish"] = "Kitchari".into();
    odd_actor["fedibird:quoteUri"] = "https://b.example/1".into();
    let mut odd_answer = named("Reject, retired");
    odd_answer["published"] = "yesterday".into();
    odd_answer["retired"] = "yes".into();
    let odd = [
        ("odd actor".into(), odd_actor),
        ("odd answer".into(), odd_answer),
    ];
    let said = findings(&odd).join("\n");
    assert_eq!(said.lines().count(), 4, "{said}");
    assert!(
        said.contains("'favouriteDish' is defined by no context"),
        "{said}"
    );
    assert!(
        said.contains("'fedibird:quoteUri' is defined by no context"),
        "{said}"
    );
    assert!(said.contains("'yesterday' is typed xsd:dateTime"), "{said}");
    assert!(said.contains("'yes' is typed xsd:boolean"), "{said}");
}
