//! A failover under writes: a primary and its synchronous streaming
//! standby, made by the test (`postgres::ReplicatedPair`); two node
//! processes given both hosts (`target_session_attrs=read-write`); cooks
//! writing through both nodes from threads of their own (new recipes and
//! forks of each other's), each keeping every write acknowledged (a 303);
//! the primary killed in the middle of the writes (`pg_ctl stop -m
//! immediate`) and the standby promoted. Meanwhile the nodes' `/healthz`
//! answer 503 and writes are held or refused (503, and the cook sends the
//! same form again, as its page says to); the nodes carry on once the
//! standby takes writes; and no acknowledged write is lost: each is shown by both nodes,
//! and is in the promoted standby's log (a store built from that log alone
//! holds it), and the nodes' stores end the same.
//!
//! Promoted at two moments: as soon as both nodes know the primary gone,
//! while a write a node had in flight when it died is still being sent
//! again (for up to 10 s, `RESOLVE_WITHIN` in crates/postgres-log/src/log.rs), so
//! that the promoted standby settles it; and only once each node refuses
//! writes at once (past those 10 s, when a node had one in flight), so
//! that such a write was answered "could not tell whether your change was
//! saved" and the cook's second send settles it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread::ScopedJoinHandle;
use std::time::{Duration, Instant};

use forkful::domain::{CatalogQuery, Recipes, Slug};
use forkful::postgres::PgLog;
use forkful::store::{Store, StoreConfig};

use crate::helpers::Page;
use crate::http_client::{Browser, Rng, Server};
use crate::postgres::{psql, ReplicatedPair};
use crate::writing::recipe_fields;

/// Cooks writing at once, each on a thread of its own.
const COOKS: usize = 6;
/// Writes acknowledged before the primary is killed.
const BEFORE_KILL: usize = 24;
/// Writes acknowledged after the promotion before the cooks stop.
const AFTER_PROMOTION: usize = 24;
/// The longest any one wait of the test may take: generous, for a loaded
/// machine; each wait polls and ends as soon as what it waits for is so.
const DEADLINE: Duration = Duration::from_secs(40);
/// How long a cook waits before sending a refused form again.
const RESEND_AFTER: Duration = Duration::from_millis(100);
/// The log's database.
const DATABASE: &str = "forkful_failover";

/// When the standby is promoted, once the primary is killed.
#[derive(Clone, Copy, Debug)]
enum Promote {
    /// As soon as both nodes' `/healthz` answer 503: the log out of reach,
    /// or not followed (a node that has not called PostgreSQL since the
    /// kill, but for its follower, says the latter).
    OnceBothNodesKnow,
    /// Once, besides, each node refuses a write (503) that a prober sends
    /// it: a node holds its writes while it sends one that was in flight
    /// when the primary died again, and refuses them once it gives that
    /// one up.
    OnceEachNodeRefuses,
}

#[test]
fn the_primary_killed_during_writes_and_the_standby_promoted_at_once_lose_no_acknowledged_write() {
    fails_over(Promote::OnceBothNodesKnow);
}

#[test]
fn the_primary_killed_during_writes_and_the_standby_promoted_late_lose_no_acknowledged_write() {
    fails_over(Promote::OnceEachNodeRefuses);
}

/// A write a cook was told was saved.
#[derive(Debug, Clone)]
struct Acknowledged {
    slug: String,
    title: String,
    author: String,
    /// The recipe it forked, for a fork.
    parent: Option<String>,
    /// The node that answered it.
    node: usize,
    /// How many times its form was sent before the 303.
    sends: usize,
    /// From its first send to its 303.
    took: Duration,
    at: Instant,
}

/// What the cooks share: the writes acknowledged, the refusals seen, and
/// the word to stop.
#[derive(Default)]
struct Shared {
    acknowledged: Mutex<Vec<Acknowledged>>,
    /// 503s answered to a write's form, by node.
    refused: [AtomicUsize; 2],
    /// Of those, the ones that said the node could not tell whether the
    /// write was saved (its answer lost with the primary).
    unknown: AtomicUsize,
    /// 503s answered to a page (the form's), while its node waits to show
    /// the cook's last write or cannot check the session.
    pages_refused: AtomicUsize,
    stop: AtomicBool,
}

impl Shared {
    fn acknowledged(&self) -> usize {
        self.acknowledged.lock().unwrap().len()
    }

    fn refused(&self) -> [usize; 2] {
        [0, 1].map(|n| self.refused[n].load(Ordering::Acquire))
    }
}

fn fails_over(promote: Promote) {
    let began = Instant::now();
    let pair = ReplicatedPair::start();
    let url = pair.database(DATABASE);
    let root = tempfile::tempdir().unwrap();
    let data: Vec<_> = (0..2)
        .map(|n| root.path().join(format!("node-{n}")))
        .collect();
    let flags = ["--database-url", &url, "--trusted-proxy", "127.0.0.1"];
    let mut nodes: Vec<Server> = data
        .iter()
        .map(|dir| {
            Server::start(dir, &flags)
                .unwrap_or_else(|why| panic!("a node on {url}: {why}\n{}", pair.logs()))
        })
        .collect();
    let origins: Vec<String> = nodes.iter().map(|n| n.origin().to_owned()).collect();
    eprintln!(
        "failover: the pair and two nodes up in {:.1?}",
        began.elapsed()
    );

    // Sign-ups before the failover, each cook's session then checked by
    // both nodes: a node believes a session it checked while PostgreSQL
    // is away, and shows one it never checked pages as a visitor's, which
    // a session it made itself at a sign-up is to it too (`Accounts::
    // session_at` keeps no note of it): such a cook's form page is a
    // redirect to the login page there until PostgreSQL is back.
    let cooks: Vec<(String, Browser)> = (0..COOKS)
        .map(|c| {
            let handle = format!("cook-{c}");
            let mut browser =
                Browser::new(&origins[c % 2]).behind_proxy_as(&format!("10.3.0.{}", c + 1));
            browser
                .sign_up(&handle)
                .unwrap_or_else(|why| panic!("{handle}: {why}"));
            for origin in &origins {
                browser.reconnect(origin);
                let account = browser.get("/account").unwrap();
                assert_eq!(
                    account.status, 200,
                    "{handle} on {origin}: {}",
                    account.body
                );
            }
            (handle, browser)
        })
        .collect();

    // The prober: a cook with a new recipe's form from each node, kept
    // from before the failover (its session checked on both nodes, which
    // believe it while PostgreSQL is away).
    let mut prober = Browser::new(&origins[0]).behind_proxy_as("10.3.1.1");
    prober.sign_up("prober").unwrap();
    let forms: Vec<Page> = origins
        .iter()
        .map(|origin| {
            prober.reconnect(origin);
            let form = prober.get("/recipes/new").unwrap();
            assert_eq!(form.status, 200, "{origin}: {}", form.body);
            form
        })
        .collect();
    let prober = Prober {
        browser: prober,
        forms,
    };

    let shared = Shared::default();
    let timeline = std::thread::scope(|scope| {
        let writers: Vec<ScopedJoinHandle<'_, ()>> = cooks
            .into_iter()
            .enumerate()
            .map(|(c, (handle, browser))| {
                let (shared, origins) = (&shared, &origins);
                scope.spawn(move || cook_writes(c, &handle, browser, origins, shared))
            })
            .collect();
        let timeline = fail_over(promote, &pair, &origins, prober, &shared, &writers);
        shared.stop.store(true, Ordering::Release);
        if let Err(why) = &timeline {
            eprintln!("failover: {why}");
        }
        // A cook's panic says more than the timeline's wait for it.
        for writer in writers {
            if let Err(panic) = writer.join() {
                std::panic::resume_unwind(panic);
            }
        }
        timeline.unwrap_or_else(|why| {
            panic!(
                "{why}\nnode 0 said:\n{}\nnode 1 said:\n{}\n{}",
                nodes[0].errors(),
                nodes[1].errors(),
                pair.logs()
            )
        })
    });
    let acknowledged = std::mem::take(&mut *shared.acknowledged.lock().unwrap());
    let resent = acknowledged.iter().filter(|a| a.sends > 1).count();
    let slowest = acknowledged
        .iter()
        .map(|a| a.took)
        .max()
        .unwrap_or_default();
    eprintln!(
        "failover: {} writes acknowledged ({} before the kill, the last {:.1?} before it; \
         {} after the promotion, the first {:.1?} after it); {} sent more than once, \
         the slowest acknowledged {:.1?} after its first send; \
         writes refused (503) by each node {:?} ({} could not tell), pages {}",
        acknowledged.len(),
        timeline.before_kill,
        acknowledged
            .iter()
            .filter(|a| a.at <= timeline.killed)
            .map(|a| timeline.killed - a.at)
            .min()
            .unwrap_or_default(),
        acknowledged
            .iter()
            .filter(|a| a.at > timeline.promoted)
            .count(),
        timeline.first_after_promotion,
        resent,
        slowest,
        shared.refused(),
        shared.unknown.load(Ordering::Relaxed),
        shared.pages_refused.load(Ordering::Relaxed),
    );

    // The standby is the primary now; the old primary stays dead.
    let standby = pair.standby_url(DATABASE);
    assert_eq!(
        psql(&standby, &["SELECT pg_is_in_recovery()"]).trim(),
        "f",
        "the standby was not promoted"
    );
    let head: u64 = psql(&standby, &["SELECT max(t) FROM forkful_log"])
        .trim()
        .parse()
        .unwrap();

    // Each node catches up with the promoted standby's log, and is well.
    for (n, origin) in origins.iter().enumerate() {
        let mut browser = Browser::new(origin);
        let started = Instant::now();
        loop {
            let health = browser.get("/healthz").unwrap();
            let said: serde_json::Value = serde_json::from_str(&health.body).unwrap();
            if health.status == 200 && said["basis"] == head {
                break;
            }
            assert!(
                started.elapsed() < DEADLINE,
                "node {n} is not at the log's head {head}: {} {said}\n{}",
                health.status,
                nodes[n].errors()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    // Every acknowledged write is shown by both nodes, as it was written.
    for (n, origin) in origins.iter().enumerate() {
        let mut visitor = Browser::new(origin);
        for write in &acknowledged {
            let path = format!("/recipes/{}.json", write.slug);
            let page = visitor.get(&path).unwrap();
            assert_eq!(
                page.status, 200,
                "node {n}: {path}, acknowledged by node {}, is lost: {}",
                write.node, page.body
            );
            let json: serde_json::Value = serde_json::from_str(&page.body).unwrap();
            let parent = json["forked_from"]["slug"].as_str().map(str::to_owned);
            assert_eq!(
                (
                    json["title"].as_str(),
                    parent.as_ref(),
                    json["versions"].as_u64()
                ),
                (Some(write.title.as_str()), write.parent.as_ref(), Some(1)),
                "node {n}: {path} is not what was acknowledged, once: {write:?}"
            );
        }
    }

    // Every acknowledged write is in the promoted standby's log: a store
    // built from that log alone (the standby's address alone) holds it.
    let rebuilt = Store::open_with(StoreConfig::temporary().following(std::sync::Arc::new(
        PgLog::connect(&standby).expect("the promoted standby's log"),
    )))
    .expect("a store built from the promoted standby's log");
    assert_eq!(rebuilt.db().basis(), head);
    let view = Recipes::open(rebuilt).unwrap().snapshot();
    for write in &acknowledged {
        let recipe = view
            .recipe(&Slug::parse(&write.slug).unwrap())
            .unwrap_or_else(|e| {
                panic!(
                    "{} was acknowledged by node {} and is not in the promoted standby's log: {e}",
                    write.slug, write.node
                )
            });
        let parent = recipe.forked_from.map(|(id, _)| view.slug_of(id).unwrap());
        assert_eq!(
            (
                recipe.content.title(),
                recipe.author.as_deref(),
                parent.as_ref()
            ),
            (
                write.title.as_str(),
                Some(write.author.as_str()),
                write.parent.as_ref()
            ),
            "{}: the log holds another write than the one acknowledged",
            write.slug
        );
    }

    // And nothing else: every form sent was seen through to its 303 (a
    // form sent again saved once), and the prober's were refused with
    // nothing saved.
    let listed = view
        .catalog(&CatalogQuery {
            limit: acknowledged.len() + 10,
            ..CatalogQuery::default()
        })
        .unwrap();
    let mut listed: Vec<&str> = listed.entries.iter().map(|e| &*e.slug).collect();
    let mut expected: Vec<&str> = acknowledged.iter().map(|a| a.slug.as_str()).collect();
    listed.sort_unstable();
    expected.sort_unstable();
    assert!(
        listed == expected,
        "the promoted standby's log has other recipes than the ones acknowledged: {listed:?}"
    );

    // The nodes' stores end the same.
    for node in &mut nodes {
        node.terminate().unwrap();
    }
    let exports: Vec<String> = data
        .iter()
        .map(|dir| crate::http_client::export_of(dir))
        .collect();
    assert!(exports[0].lines().count() > acknowledged.len());
    assert!(
        exports[1] == exports[0],
        "node 1's store differs from node 0's"
    );
    eprintln!("failover: done in {:.1?}", began.elapsed());
}

/// When the failover's steps came, and what had been acknowledged by then.
struct Timeline {
    before_kill: usize,
    killed: Instant,
    promoted: Instant,
    first_after_promotion: Duration,
}

/// Waits for `BEFORE_KILL` writes, kills the primary, waits until both
/// nodes' `/healthz` answer 503 (and, as `promote` says, until each
/// refuses the prober's write at once), promotes the standby, and waits
/// for `AFTER_PROMOTION` writes more. Gives up early if a cook stopped
/// (its panic is the news).
fn fail_over(
    promote: Promote,
    pair: &ReplicatedPair,
    origins: &[String],
    mut prober: Prober,
    shared: &Shared,
    writers: &[ScopedJoinHandle<'_, ()>],
) -> Result<Timeline, String> {
    let wait = |what: &str, done: &dyn Fn() -> bool| -> Result<(), String> {
        let started = Instant::now();
        while !done() {
            if writers.iter().any(ScopedJoinHandle::is_finished) {
                return Err(format!("a cook stopped while waiting for {what}"));
            }
            if started.elapsed() > DEADLINE {
                return Err(format!(
                    "no {what} within {DEADLINE:?}: {} writes acknowledged, refused by each node {:?}",
                    shared.acknowledged(),
                    shared.refused()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    };
    wait("writes before the kill", &|| {
        shared.acknowledged() >= BEFORE_KILL
    })?;
    let refused = shared.refused();
    pair.kill_primary();
    let killed = Instant::now();
    let before_kill = shared.acknowledged();
    for (n, origin) in origins.iter().enumerate() {
        let watcher = Browser::new(origin);
        let said = Mutex::new(String::new());
        wait(&format!("503 from node {n}'s /healthz"), &|| {
            let health = watcher.clone().get("/healthz");
            *said.lock().unwrap() = format!("{:?}", health.as_ref().map(|h| (h.status, &h.body)));
            health.is_ok_and(|h| h.status == 503)
        })
        .map_err(|why| format!("{why}; it said {}", said.lock().unwrap()))?;
    }
    if let Promote::OnceEachNodeRefuses = promote {
        for (n, origin) in origins.iter().enumerate() {
            prober.refused_by(n, origin, || {
                writers.iter().any(ScopedJoinHandle::is_finished)
            })?;
        }
    }
    let refused_before_promotion = shared.refused();
    pair.promote_standby();
    let promoted = Instant::now();
    eprintln!(
        "failover ({promote:?}): primary killed after {before_kill} writes; both nodes \
         unhealthy and writes refused by each {:?} when the standby was promoted, {:.1?} later",
        [0, 1].map(|n| refused_before_promotion[n] - refused[n]),
        promoted - killed
    );
    let at_promotion = shared.acknowledged();
    let after = || {
        let acknowledged = shared.acknowledged.lock().unwrap();
        acknowledged.iter().filter(|a| a.at > promoted).count()
    };
    wait("write acknowledged after the promotion", &|| after() > 0)?;
    let first_after_promotion = shared
        .acknowledged
        .lock()
        .unwrap()
        .iter()
        .filter(|a| a.at > promoted)
        .map(|a| a.at - promoted)
        .min()
        .unwrap_or_default();
    wait("writes after the promotion", &|| {
        shared.acknowledged() >= at_promotion + AFTER_PROMOTION
    })?;
    Ok(Timeline {
        before_kill,
        killed,
        promoted,
        first_after_promotion,
    })
}

/// A cook who sends one write to each node while the log is out of reach,
/// to see it refused: the form of a new recipe each node gave it before.
struct Prober {
    browser: Browser,
    forms: Vec<Page>,
}

impl Prober {
    /// Sends node `n` its form until it is refused at once ("nothing was
    /// saved"): the node holds no write of a cook's while it sends one
    /// that was in flight again. Gives up if `stopped` says a cook did.
    fn refused_by(
        &mut self,
        n: usize,
        origin: &str,
        stopped: impl Fn() -> bool,
    ) -> Result<(), String> {
        self.browser.reconnect(origin);
        let fields = recipe_fields(&[("title", "Probe"), ("slug", "probe")]);
        let started = Instant::now();
        loop {
            let sent = self
                .browser
                .submit(&self.forms[n], "/recipes/new", &fields)
                .map_err(|e| format!("the probe of node {n}: no answer: {}", e.why))?;
            match sent.status {
                503 if sent.body.contains("nothing was saved") => {
                    return Ok(());
                }
                // Answered "could not tell" (the probe sent before the node
                // knew the primary gone): again.
                503 => {}
                other => {
                    return Err(format!(
                        "the probe of node {n}, with the primary gone: {other}: {}",
                        sent.body
                    ))
                }
            }
            if stopped() {
                return Err(format!("a cook stopped while node {n} was probed"));
            }
            if started.elapsed() > DEADLINE {
                return Err(format!(
                    "node {n} did not refuse the probe at once within {DEADLINE:?}: {}",
                    sent.body
                ));
            }
            std::thread::sleep(RESEND_AFTER);
        }
    }
}

/// One cook's writes until told to stop: a new recipe first, then new
/// recipes and forks of anyone's acknowledged ones, each through the next
/// node in turn. A write whose form was sent is seen through to its 303
/// even after the word to stop; one whose form page could not be had yet
/// is dropped then.
fn cook_writes(c: usize, handle: &str, mut browser: Browser, origins: &[String], shared: &Shared) {
    let mut rng = Rng::new(0x5eed + c as u64);
    let mut n = 0;
    while !shared.stop.load(Ordering::Acquire) {
        n += 1;
        let node = (c + n) % origins.len();
        browser.reconnect(&origins[node]);
        let parent = {
            let acknowledged = shared.acknowledged.lock().unwrap();
            (n > 1 && rng.below(2) == 0 && !acknowledged.is_empty()).then(|| {
                acknowledged[rng.below(acknowledged.len() as u64) as usize]
                    .slug
                    .clone()
            })
        };
        let slug = format!("{handle}-{n}");
        let title = format!("Dal number {n} by {handle}");
        match write(&mut browser, node, &slug, &title, parent.as_deref(), shared) {
            Ok(Some((sends, took))) => shared.acknowledged.lock().unwrap().push(Acknowledged {
                slug,
                title,
                author: handle.to_owned(),
                parent,
                node,
                sends,
                took,
                at: Instant::now(),
            }),
            Ok(None) => {}
            Err(why) => panic!("{handle}, through node {node}: {slug}: {why}"),
        }
    }
}

/// Sends one write: its form's page (a fork's, of `parent`), then the
/// form, again while it is refused (503), through `node`. Once it is
/// acknowledged, how many times the form was sent and how long it took
/// from the first send; `None` if the cook was told to stop before its
/// form could be had.
fn write(
    browser: &mut Browser,
    node: usize,
    slug: &str,
    title: &str,
    parent: Option<&str>,
    shared: &Shared,
) -> Result<Option<(usize, Duration)>, String> {
    let action = match parent {
        Some(parent) => format!("/recipes/{parent}/fork"),
        None => "/recipes/new".to_owned(),
    };
    let started = Instant::now();
    let page = loop {
        let page = browser
            .get(&action)
            .map_err(|e| format!("GET {action}: no answer: {}", e.why))?;
        match page.status {
            200 => break page,
            // Refused while the node waits to show the cook's last write
            // (read-your-writes) or cannot reach PostgreSQL; a parent
            // acknowledged by the other node not shown here yet (not
            // this cook's write, so nothing waits for it).
            503 | 404 => {
                if page.status == 503 {
                    shared.pages_refused.fetch_add(1, Ordering::Relaxed);
                }
                if shared.stop.load(Ordering::Acquire) {
                    return Ok(None);
                }
                if started.elapsed() > DEADLINE {
                    return Err(format!(
                        "GET {action}: still {} after {DEADLINE:?}: {}",
                        page.status, page.body
                    ));
                }
                std::thread::sleep(RESEND_AFTER);
            }
            other => {
                return Err(format!(
                    "GET {action}: {other} {}: {}",
                    page.header("location").unwrap_or_default(),
                    page.body
                ))
            }
        }
    };
    let note = format!("write of {slug}");
    let fields = recipe_fields(&[("title", title), ("slug", slug), ("note", &note)]);
    let first_sent = Instant::now();
    let mut sends = 0;
    loop {
        sends += 1;
        let sent = browser
            .submit(&page, &action, &fields)
            .map_err(|e| format!("POST {action}, send {sends}: no answer: {}", e.why))?;
        match sent.status {
            303 => {
                let location = sent.header("location").unwrap_or_default();
                if location != format!("/recipes/{slug}") {
                    return Err(format!("POST {action}: saved, but at {location}"));
                }
                return Ok(Some((sends, first_sent.elapsed())));
            }
            // Refused, or its outcome not known: the same form again, as
            // the page says to. The site saves it once.
            503 => {
                if sent.body.contains("could not tell") {
                    shared.unknown.fetch_add(1, Ordering::Relaxed);
                }
                shared.refused[node].fetch_add(1, Ordering::AcqRel);
                if started.elapsed() > DEADLINE {
                    return Err(format!(
                        "POST {action}: still refused after {sends} sends and {DEADLINE:?}: {}",
                        sent.body
                    ));
                }
                std::thread::sleep(RESEND_AFTER);
            }
            other => {
                return Err(format!(
                    "POST {action}, send {sends}: {other}: {}",
                    sent.body
                ))
            }
        }
    }
}
