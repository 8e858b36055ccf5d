//! A node whose PostgreSQL stops or stalls degrades and says so: a
//! logged-in cook's pages and pictures go on being served from the node
//! (its sessions and picture records kept there), every write answers 503
//! with `Retry-After` and a page that says why, `/healthz` answers 503,
//! and all is as before once PostgreSQL is back. The real binary, a
//! cluster of the test's own, stopped (`pg_ctl stop -m immediate`) or
//! paused (SIGSTOP, as a machine that froze).

use std::time::{Duration, Instant};

use image::ImageFormat;

use crate::http_client::{Browser, Server};
use crate::pictures::picture_file;
use crate::postgres::OwnCluster;
use crate::writing::recipe_fields;

#[derive(Clone, Copy, Debug)]
enum Fault {
    /// `pg_ctl stop -m immediate`: connections cut, new ones refused.
    Stopped,
    /// SIGSTOP on every PostgreSQL process: nothing answers, nothing closes.
    Paused,
}

impl Fault {
    fn begin(self, cluster: &OwnCluster) {
        match self {
            Fault::Stopped => cluster.down(),
            Fault::Paused => cluster.pause(),
        }
    }

    fn end(self, cluster: &OwnCluster) {
        match self {
            Fault::Stopped => cluster.up(),
            Fault::Paused => cluster.resume(),
        }
    }
}

#[test]
fn a_cooks_pages_go_on_and_writes_wait_while_postgresql_is_stopped() {
    degrades_and_comes_back(Fault::Stopped);
}

#[test]
fn a_cooks_pages_go_on_and_writes_wait_while_postgresql_is_paused() {
    degrades_and_comes_back(Fault::Paused);
}

/// How long a page may take while PostgreSQL is away. The node answers
/// from memory in a few milliseconds; a page that waited on PostgreSQL
/// would take its 10 s call timeout (or the 50 ms a session's recheck is
/// waited for, at most).
const PAGE_WITHIN: Duration = Duration::from_millis(100);

fn degrades_and_comes_back(fault: Fault) {
    let cluster = OwnCluster::start();
    let url = cluster.database("forkful_degrade");
    let root = tempfile::tempdir().unwrap();
    // Sessions checked again on every request, so that each page below
    // asks PostgreSQL, and health judged after a second of failing.
    let flags = [
        "--database-url",
        &url,
        "--session-recheck",
        "0",
        "--unhealthy-after",
        "1",
    ];
    let mut node = Server::start(&root.path().join("node"), &flags).unwrap();
    let mut ann = Browser::new(node.origin());
    ann.sign_up("ann").unwrap();
    let form = ann.get("/recipes/new").unwrap();
    let file = picture_file(800, 600, ImageFormat::Jpeg);
    let created = ann
        .submit_with_file(
            &form,
            "/recipes/new",
            &recipe_fields(&[("picture_alt", "A bowl of dal")]),
            ("dal.jpg", "image/jpeg", &file),
        )
        .unwrap();
    assert_eq!(created.status, 303, "{}", created.body);
    let recipe = created.header("location").unwrap().to_owned();
    let shown = ann.get(&recipe).unwrap();
    let picture = shown
        .attrs("img.recipe-image", "src")
        .first()
        .cloned()
        .expect("the recipe shows its picture");
    let pages = [
        "/".to_owned(),
        "/about".to_owned(),
        "/account".to_owned(),
        "/recipes/new".to_owned(),
        recipe.clone(),
        format!("{recipe}/history"),
        picture.clone(),
    ];
    // Each page once before (pictures twice: served, then kept).
    for path in pages.iter().chain([&picture]) {
        let page = ann.get(path).unwrap();
        assert_eq!(page.status, 200, "{path} before: {}", page.body);
    }
    let health = ann.get("/healthz").unwrap();
    assert_eq!(health.status, 200, "{}", health.body);
    // Ben signs up just before: the node that made his session knows it.
    let mut ben = Browser::new(node.origin());
    ben.sign_up("ben").unwrap();

    fault.begin(&cluster);

    let bens = ben.get("/account").unwrap();
    assert_eq!(bens.status, 200, "{fault:?}: ben's account: {}", bens.body);
    assert!(bens.body.contains("ben"), "{}", bens.body);
    // Ben logs out: not everywhere (503, said), but in his browser and on
    // this node at once, a copy of his cookie included.
    let copied = ben.cookie("forkful_session").expect("ben's session");
    let logged_out = ben.submit(&bens, "/logout", &[]).unwrap();
    assert!(
        matches!(logged_out.status, 303 | 503),
        "{fault:?}: {}",
        logged_out.body
    );
    assert!(
        !ben.has_cookie("forkful_session"),
        "{fault:?}: the cookie stayed"
    );
    let mut copy = Browser::new(node.origin());
    copy.set_cookie("forkful_session", &copied);
    let after = copy.get("/account").unwrap();
    assert_eq!(
        after.status, 303,
        "{fault:?}: a copied cookie after logout: {}",
        after.body
    );

    // Pages: as before, to the logged-in cook, and quickly.
    let mut took = Vec::new();
    for round in 0..3 {
        for path in &pages {
            let started = Instant::now();
            let page = ann.get(path).unwrap();
            took.push((started.elapsed(), path.clone()));
            assert_eq!(
                page.status, 200,
                "{fault:?}, round {round}: {path}: {}",
                page.body
            );
            if !path.starts_with("/images/") {
                assert!(
                    page.body.contains("ann"),
                    "{fault:?}: {path} is not shown to ann as herself: {}",
                    page.body
                );
            }
        }
    }
    took.sort();
    let slowest = took.last().unwrap();
    assert!(
        slowest.0 < PAGE_WITHIN,
        "{fault:?}: {} took {:?} (every page: {took:?})",
        slowest.1,
        slowest.0
    );

    // A write: 503, Retry-After, and a page that says why. Refused before
    // it was sent ("nothing was saved"); or, sent to a PostgreSQL that
    // froze with it, not known to be saved or not, and said so: a paused
    // server may still commit it once it goes on.
    let away_form = ann.get("/recipes/new").unwrap();
    let away_fields = recipe_fields(&[("title", "Written while away"), ("slug", "away")]);
    let refused = ann
        .submit(&away_form, "/recipes/new", &away_fields)
        .unwrap();
    assert_eq!(refused.status, 503, "{fault:?}: {}", refused.body);
    assert!(
        refused.header("retry-after").is_some(),
        "{fault:?}: no Retry-After"
    );
    assert!(
        refused.body.contains("nothing was saved")
            || refused
                .body
                .contains("could not tell whether your change was saved"),
        "{fault:?}: the page does not say why: {}",
        refused.body
    );

    // Health says so (at once when stopped; once the follower's second of
    // failing is past when paused).
    let said = health_becomes(
        &mut ann,
        503,
        Duration::from_secs(20),
        &format!("{fault:?}"),
    );
    let status = said["status"].as_str().unwrap_or_default();
    assert!(
        status.contains("log"),
        "{fault:?}: health does not say why: {said}"
    );

    fault.end(&cluster);

    // Back: health 200, writes taken, pages as before.
    health_becomes(
        &mut ann,
        200,
        Duration::from_secs(30),
        &format!("{fault:?}, after PostgreSQL came back"),
    );
    let form = ann.get("/recipes/new").unwrap();
    let saved = ann
        .submit(
            &form,
            "/recipes/new",
            &recipe_fields(&[("title", "Written once back"), ("slug", "back")]),
        )
        .unwrap();
    assert_eq!(saved.status, 303, "{fault:?}: {}", saved.body);
    // The refused form, sent again as its page says to: saved once.
    let resent = ann
        .submit(&away_form, "/recipes/new", &away_fields)
        .unwrap();
    assert_eq!(resent.status, 303, "{fault:?}: {}", resent.body);
    assert_eq!(resent.header("location"), Some("/recipes/away"));
    let history = ann.get("/recipes/away/history").unwrap();
    assert!(
        history.body.contains("1 version."),
        "{fault:?}: {}",
        history.body
    );
    for path in &pages {
        let page = ann.get(path).unwrap();
        assert_eq!(page.status, 200, "{fault:?}, after: {path}: {}", page.body);
    }
    node.terminate().unwrap();
}

/// A node that cannot follow its log (here a row it cannot apply, as a
/// log another tool wrote to would hold) says so: `/healthz` answers 503
/// with the follower's error once it has lasted past `--unhealthy-after`,
/// `/metrics` has the error and how long it has lasted, and all is well
/// again once the log is.
#[test]
fn a_node_that_cannot_follow_its_log_says_so_in_health_and_metrics() {
    let url = crate::postgres::fresh_database();
    let root = tempfile::tempdir().unwrap();
    let flags = ["--database-url", &url, "--unhealthy-after", "1"];
    let mut node = Server::start(&root.path().join("node"), &flags).unwrap();
    let mut reader = Browser::new(node.origin());
    let health = reader.get("/healthz").unwrap();
    assert_eq!(health.status, 200, "{}", health.body);

    // A row after the newest that chains to nothing the node holds.
    crate::postgres::psql(
        &url,
        &[
            "INSERT INTO forkful_log (t, prev, next_id, instant, datoms, sum)
           SELECT max(t) + 1, max(t), max(next_id) + 2, 0, '\\x00', '\\x00'
           FROM forkful_log",
        ],
    );
    let said = health_becomes(
        &mut reader,
        503,
        Duration::from_secs(15),
        "a row it cannot apply",
    );
    let status = said["status"].as_str().unwrap();
    assert!(status.starts_with("not following the log for "), "{said}");
    assert!(said["log"]["error"].as_str().is_some(), "{said}");
    let metrics = reader.get("/metrics").unwrap().body;
    assert!(
        metrics.contains("forkful_log_last_error{error=\""),
        "{metrics}"
    );
    let failing: f64 = metrics
        .lines()
        .find_map(|line| line.strip_prefix("forkful_log_failing_seconds "))
        .expect("the time the follower has failed")
        .parse()
        .unwrap();
    assert!(failing >= 1.0, "{metrics}");
    // Pages are still served, at the basis the node holds.
    assert_eq!(reader.get("/").unwrap().status, 200);

    crate::postgres::psql(
        &url,
        &["DELETE FROM forkful_log WHERE t = (SELECT max(t) FROM forkful_log)"],
    );
    health_becomes(&mut reader, 200, Duration::from_secs(15), "the row gone");
    let metrics = reader.get("/metrics").unwrap().body;
    assert!(
        metrics.contains("forkful_log_failing_seconds 0"),
        "{metrics}"
    );
    assert!(!metrics.contains("forkful_log_last_error"), "{metrics}");
    node.terminate().unwrap();
}

/// A node whose log lost transactions it had applied (a failover to an
/// asynchronous standby that lacked them, a restore from an older backup)
/// says so: `/healthz` answers 503 saying the log ends before what the
/// node shows, rather than 200 while every write it takes is refused.
#[test]
fn a_node_whose_log_lost_what_it_applied_says_so_in_health() {
    let url = crate::postgres::fresh_database();
    let root = tempfile::tempdir().unwrap();
    let flags = ["--database-url", &url, "--unhealthy-after", "1"];
    let mut node = Server::start(&root.path().join("node"), &flags).unwrap();
    let mut reader = Browser::new(node.origin());
    crate::http_client::Cook::sign_up("ann", 'a', node.origin()).unwrap();
    health_becomes(&mut reader, 200, Duration::from_secs(15), "signed up");

    // The sign-up's transaction, gone from the log the node applied it from.
    crate::postgres::psql(
        &url,
        &["DELETE FROM forkful_log WHERE t = (SELECT max(t) FROM forkful_log)"],
    );
    let said = health_becomes(
        &mut reader,
        503,
        Duration::from_secs(15),
        "the log lost a transaction the node applied",
    );
    let error = said["log"]["error"].as_str().unwrap_or_default();
    assert!(error.contains("ends at transaction"), "{said}");
    assert!(error.contains("before transaction"), "{said}");
    // Pages are still served, at the basis the node holds.
    assert_eq!(reader.get("/").unwrap().status, 200);
    node.terminate().unwrap();
}

/// Asks `/healthz` until it answers `status`, within `within`; what it
/// said then. `when` names the moment in the failure's message.
fn health_becomes(
    browser: &mut Browser,
    status: u16,
    within: Duration,
    when: &str,
) -> serde_json::Value {
    let started = Instant::now();
    loop {
        let health = browser.get("/healthz").unwrap();
        if health.status == status {
            return serde_json::from_str(&health.body).unwrap();
        }
        assert!(
            started.elapsed() < within,
            "{when}: health did not answer {status} within {within:?}: {} {}",
            health.status,
            health.body
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
