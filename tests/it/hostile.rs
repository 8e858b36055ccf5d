//! Hostile HTTP against a real server on loopback: what a client can send
//! that no browser would (oversized heads, addresses and bodies, bytes that
//! are not UTF-8, broken percent-encoding, paths that climb out of a
//! directory), clients that are slow on purpose (trickling a request,
//! never reading the answer), and the session and form checks seen from an
//! attacker's side (tampered and replayed cookies, timing that could tell
//! a handle exists).
//!
//! The server is `app::build`, the one `forkful serve` runs, with one worker
//! so that "the worker is never held" is something a test can see: while
//! the hostile connections are open, a plain request is still answered.
//! Requests go over raw TCP, since most of what is sent here is not
//! something an HTTP client library would agree to send.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use forkful::app::{self, Timeouts};
use forkful::domain::{Accounts, Recipes, Slug};

use crate::helpers::{demo, get};
use crate::writing::{new_site, sign_up, Browser};

/// Short deadlines, so that a test sees them pass in a second or two.
const SHORT: Timeouts = Timeouts {
    request_head: Duration::from_millis(800),
    request_body: Duration::from_millis(800),
    keep_alive: Duration::from_millis(800),
    disconnect: Duration::from_millis(200),
};

/// How long a test waits for an answer before calling the server stuck:
/// far past every deadline above, so only a missing deadline trips it.
const STUCK: Duration = Duration::from_secs(20);

const PASSWORD: &str = "correct horse battery";

/// A fresh store with one cook, `ann`, signed up with `PASSWORD`.
fn with_ann() -> (Recipes, Accounts, Slug) {
    let recipes = Recipes::temporary().unwrap();
    let accounts = Accounts::open(&recipes).unwrap();
    let ann = Slug::parse("ann").unwrap();
    accounts.sign_up(&ann, "Ann", PASSWORD).unwrap();
    (recipes, accounts, ann)
}

/// Starts the real server over `recipes` on a port of its own, one worker.
fn serve(recipes: &Recipes, timeouts: Timeouts) -> SocketAddr {
    let config = app::Config {
        addr: "127.0.0.1:0".to_owned(),
        workers: 1,
        base_url: None,
        cache_budget: forkful::web::caches::CacheBudget::of(16 << 20),
        memory_limit: None,
        allow_private_fetch: false,
        trusted_proxies: Default::default(),
        timeouts,
        health: Default::default(),
        session_recheck: forkful::domain::accounts::SESSION_RECHECK,
        nodes: 1,
        federation: Default::default(),
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
    addr.recv().unwrap()
}

/// One answer read off a connection: its status and everything after it.
struct Answer {
    status: u16,
    text: String,
}

/// Sends `request` as bytes on a new connection and reads until the server
/// closes it or `STUCK` passes.
fn exchange(addr: SocketAddr, request: &[u8]) -> Answer {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(STUCK)).unwrap();
    // A server may answer and close before taking all of a long request:
    // a broken pipe here is the server refusing, which the answer shows.
    let _ = stream.write_all(request);
    read_answer(&mut stream)
}

fn read_answer(stream: &mut TcpStream) -> Answer {
    let mut bytes = Vec::new();
    let mut buffer = [0u8; 16 * 1024];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => bytes.extend_from_slice(&buffer[..n]),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => break,
            Err(e) => panic!(
                "no end of answer within {STUCK:?} ({e}); had: {:?}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(300)])
            ),
        }
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let status = text
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {text:?}"));
    Answer { status, text }
}

/// A plain GET of `path`, the connection closed after it.
fn plain(path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: forkful.test\r\nConnection: close\r\n\r\n").into_bytes()
}

/// The server still answers a plain request, and quickly enough that no
/// deadline of a stuck worker was waited out.
fn still_serving(addr: SocketAddr) {
    let started = Instant::now();
    let answer = exchange(addr, &plain("/about"));
    assert_eq!(answer.status, 200, "{}", answer.text);
    assert!(
        started.elapsed() < STUCK / 2,
        "a plain request waited {:?}",
        started.elapsed()
    );
}

/// actix refuses a request head over 128 KiB or with more than 96 headers
/// (431) before any handler runs; under that, an address the site cannot
/// have (a slug far past the longest a recipe may have, a query of
/// thousands of words) is the site's own 4xx page or a bounded answer.
#[test]
fn oversized_heads_and_addresses_are_refused_and_the_server_carries_on() {
    // Short deadlines: after a 431 actix keeps the connection until the
    // client goes or the keep-alive deadline passes.
    let addr = serve(demo(), SHORT);
    let over = "a".repeat(256 * 1024);
    let under = "a".repeat(64 * 1024);
    let words = "egg ".repeat(10_000);
    let many_headers: String = (0..200).map(|i| format!("X-Junk-{i}: {i}\r\n")).collect();
    let cases: Vec<(&str, Vec<u8>, &[u16])> = vec![
        (
            "a 256 KiB header",
            format!("GET / HTTP/1.1\r\nHost: forkful.test\r\nX-Long: {over}\r\n\r\n").into_bytes(),
            &[431],
        ),
        (
            "a 256 KiB address",
            plain(&format!("/recipes/{over}")),
            &[431],
        ),
        (
            "200 headers",
            format!("GET / HTTP/1.1\r\nHost: forkful.test\r\n{many_headers}\r\n").into_bytes(),
            &[431],
        ),
        (
            "a 64 KiB slug",
            plain(&format!("/recipes/{under}")),
            &[400, 404],
        ),
        (
            "a 64 KiB tag",
            plain(&format!("/tags/{under}")),
            &[400, 404],
        ),
        (
            "a query of 10,000 words",
            plain(&format!("/search?q={}", words.replace(' ', "+"))),
            &[200, 400],
        ),
    ];
    for (what, request, expected) in cases {
        let answer = exchange(addr, &request);
        assert!(
            expected.contains(&answer.status),
            "{what}: {}",
            answer.status
        );
        still_serving(addr);
    }
}

#[test]
fn a_body_declared_over_the_limit_is_refused_before_it_is_sent() {
    let (recipes, accounts, ann) = with_ann();
    let (_, session) = accounts.log_in(&ann, PASSWORD).unwrap();
    let addr = serve(&recipes, Timeouts::default());
    // A visitor posting a recipe is sent to log in (303) before its body
    // is read; the others are refused for its size (413).
    for (path, kind, cookie, status) in [
        ("/login", "application/x-www-form-urlencoded", "", 413),
        ("/signup", "application/x-www-form-urlencoded", "", 413),
        ("/recipes/new", "application/x-www-form-urlencoded", "", 303),
        ("/recipes/new", "multipart/form-data; boundary=x", "", 303),
        (
            "/recipes/new",
            "application/x-www-form-urlencoded",
            &*session.token,
            413,
        ),
        (
            "/recipes/new",
            "multipart/form-data; boundary=x",
            &*session.token,
            413,
        ),
        (
            "/import",
            "application/x-www-form-urlencoded",
            &*session.token,
            413,
        ),
    ] {
        // The head alone: were the server to wait for the 100 MB it was
        // promised, this would be stuck until the body deadline.
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: forkful.test\r\nContent-Type: {kind}\r\n\
             Cookie: forkful_session={cookie}\r\nContent-Length: 100000000\r\n\r\n"
        );
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(STUCK)).unwrap();
        stream.write_all(head.as_bytes()).unwrap();
        let started = Instant::now();
        let answer = read_answer(&mut stream);
        assert_eq!(answer.status, status, "{path} {kind}: {}", answer.text);
        assert!(started.elapsed() < Duration::from_secs(5), "{path} {kind}");
    }
    still_serving(addr);
}

/// A visitor who is not logged in is sent to log in before a byte of a
/// cook's form (a recipe, an import, a preview) is read: a body promised
/// and never sent is not waited for, however it is framed, and a session
/// cookie the store does not know is a visitor too.
#[test]
fn a_visitor_posting_a_cooks_form_is_sent_to_log_in_before_its_body_is_read() {
    let (recipes, _, _) = with_ann();
    // The body deadline is a minute: a server that waited for the body
    // would answer far too late.
    let addr = serve(&recipes, Timeouts::default());
    let unknown = "0".repeat(64);
    for (path, next) in [
        ("/recipes/new", "/recipes/new"),
        ("/import", "/import"),
        ("/preview", "/recipes/new"),
    ] {
        for kind in [
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
        ] {
            for framing in ["Content-Length: 1000", "Transfer-Encoding: chunked"] {
                for cookie in ["", unknown.as_str()] {
                    let head = format!(
                        "POST {path} HTTP/1.1\r\nHost: forkful.test\r\nContent-Type: {kind}\r\n\
                         Cookie: forkful_session={cookie}\r\n{framing}\r\n\r\n"
                    );
                    let mut stream = TcpStream::connect(addr).unwrap();
                    stream.set_read_timeout(Some(STUCK)).unwrap();
                    stream.write_all(head.as_bytes()).unwrap();
                    let started = Instant::now();
                    let answer = read_answer(&mut stream);
                    let what = format!("{path} {kind} {framing} cookie {cookie:?}");
                    assert_eq!(answer.status, 303, "{what}: {}", answer.text);
                    let location = format!("location: /login?next={next}\r\n");
                    assert!(
                        answer.text.to_lowercase().contains(&location),
                        "{what}: {}",
                        answer.text
                    );
                    assert!(started.elapsed() < Duration::from_secs(5), "{what}");
                }
            }
        }
    }
    still_serving(addr);
}

#[test]
fn a_client_that_trickles_its_request_is_cut_off_and_others_are_served() {
    let addr = serve(demo(), SHORT);
    // Slow heads: a header line a byte at a time, never finished.
    let slow: Vec<_> = (0..8)
        .map(|_| {
            thread::spawn(move || {
                let mut stream = TcpStream::connect(addr).unwrap();
                stream.set_read_timeout(Some(STUCK)).unwrap();
                stream
                    .write_all(b"GET / HTTP/1.1\r\nHost: forkful.test\r\nX-Slow: ")
                    .unwrap();
                let started = Instant::now();
                let mut sent = 0;
                while started.elapsed() < STUCK {
                    if stream.write_all(b"a").is_err() {
                        break;
                    }
                    sent += 1;
                    let mut byte = [0u8; 1];
                    stream
                        .set_read_timeout(Some(Duration::from_millis(100)))
                        .unwrap();
                    match stream.read(&mut byte) {
                        Ok(_) => break,
                        Err(e) if e.kind() == ErrorKind::ConnectionReset => break,
                        Err(_) => {}
                    }
                }
                (started.elapsed(), sent)
            })
        })
        .collect();
    thread::sleep(Duration::from_millis(200));
    still_serving(addr);
    for connection in slow {
        let (held, _) = connection.join().unwrap();
        assert!(held < STUCK, "a trickled head held its connection {held:?}");
    }

    // A slow body, still moving: a byte every 100 ms of a promised 100, so
    // the deadline is the body's whole time, not an idle gap. And the same
    // chunked, whose answer must close the connection (actix would go on
    // draining a chunked body with no timer).
    for chunked in [false, true] {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(STUCK)).unwrap();
        let framing = if chunked {
            "Transfer-Encoding: chunked"
        } else {
            "Content-Length: 100"
        };
        let head = format!(
            "POST /login HTTP/1.1\r\nHost: forkful.test\r\n\
             Content-Type: application/x-www-form-urlencoded\r\n{framing}\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).unwrap();
        let mut trickle = stream.try_clone().unwrap();
        let sender = thread::spawn(move || {
            for _ in 0..(STUCK.as_millis() / 100) {
                let byte: &[u8] = if chunked { b"1\r\na\r\n" } else { b"a" };
                if trickle.write_all(byte).is_err() {
                    return;
                }
                thread::sleep(Duration::from_millis(100));
            }
        });
        // Read to the end: the server closes the connection after the 408.
        let answer = read_answer(&mut stream);
        assert_eq!(answer.status, 408, "chunked {chunked}: {}", answer.text);
        assert!(answer.text.contains("took too long"), "{}", answer.text);
        drop(stream);
        sender.join().unwrap();
    }
    still_serving(addr);
}

/// A picture streamed with no declared length (chunked) is refused when it
/// passes the limit, not after it has all been read.
#[test]
fn a_picture_streamed_far_past_the_limit_is_refused_and_not_read_on() {
    let (recipes, accounts, ann) = with_ann();
    let (_, session) = accounts.log_in(&ann, PASSWORD).unwrap();
    let addr = serve(&recipes, Timeouts::default());
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(STUCK)).unwrap();
    let head = format!(
        "POST /recipes/new HTTP/1.1\r\nHost: forkful.test\r\n\
         Cookie: forkful_session={}\r\n\
         Content-Type: multipart/form-data; boundary=b\r\nTransfer-Encoding: chunked\r\n\r\n",
        session.token
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut sender = stream.try_clone().unwrap();
    let writer = thread::spawn(move || {
        let part = "--b\r\nContent-Disposition: form-data; name=\"picture_file\"; \
                    filename=\"big.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n";
        let chunk = vec![0xAAu8; 64 * 1024];
        let mut send = |bytes: &[u8]| {
            let framed = [format!("{:x}\r\n", bytes.len()).as_bytes(), bytes, b"\r\n"].concat();
            sender.write_all(&framed).is_ok()
        };
        // Sends until the server cuts the connection off, or for as long
        // as a test waits: a server that read on would be reading still.
        let started = Instant::now();
        let mut cut_off = !send(part.as_bytes());
        while !cut_off && started.elapsed() < STUCK {
            cut_off = !send(&chunk);
        }
        cut_off
    });
    let answer = read_answer(&mut stream);
    assert_eq!(answer.status, 413, "{}", answer.text);
    // A cook's form reads past a picture over 10 MiB, up to 32: this one
    // is refused once past that, as a picture too large (not as a form
    // declared too large, which also names 10 MiB).
    assert!(
        answer
            .text
            .contains("The picture is larger than the 10 MiB a picture may be"),
        "{}",
        answer.text
    );
    drop(stream);
    assert!(
        writer.join().unwrap(),
        "the server went on reading the body after its answer"
    );
    still_serving(addr);
}

#[test]
fn clients_that_never_read_their_answers_hold_no_worker() {
    let addr = serve(demo(), SHORT);
    // Each asks for the largest page again and again, pipelined, and reads
    // nothing: the server's writes fill the socket and wait, per connection.
    let request = "GET /sitemap.xml HTTP/1.1\r\nHost: forkful.test\r\n\r\n\
                   GET / HTTP/1.1\r\nHost: forkful.test\r\n\r\n"
        .repeat(100)
        .into_bytes();
    let hoarders: Vec<TcpStream> = (0..16)
        .map(|_| {
            let mut stream = TcpStream::connect(addr).unwrap();
            stream
                .set_write_timeout(Some(Duration::from_secs(2)))
                .unwrap();
            let _ = stream.write_all(&request);
            stream
        })
        .collect();
    for _ in 0..5 {
        still_serving(addr);
    }
    drop(hoarders);
    still_serving(addr);
}

#[test]
fn bytes_that_are_not_utf8_and_broken_percent_encoding_get_a_clear_4xx() {
    let addr = serve(demo(), Timeouts::default());
    let raw: &[&[u8]] = &[
        b"/recipes/\xff\xfe",
        b"/recipes/%ff%fe",
        b"/recipes/%",
        b"/recipes/%zz/history",
        b"/recipes/shakshuka/versions/%ff",
        b"/tags/%c0%af",
        b"/tags/%",
        b"/search?q=%ff%fe",
        b"/search?q=%",
        b"/search?q=\xff",
        b"/?after=%ff",
        b"/cooks/%00",
        b"/cooks/%ff/suggestions.xml",
        b"/cooks/..%2f/suggestions.xml",
        b"/recipes/%ff/suggestions/1",
        b"/recipes/shakshuka/suggestions/%ff",
        b"/recipes/shakshuka/suggestions/99999999999999999999",
        b"/images/%ff-320.jpg",
    ];
    for path in raw {
        let request = [
            b"GET ".as_slice(),
            path,
            b" HTTP/1.1\r\nHost: forkful.test\r\nConnection: close\r\n\r\n",
        ]
        .concat();
        let answer = exchange(addr, &request);
        let shown = String::from_utf8_lossy(path);
        assert!(answer.status < 500, "{shown}: {}", answer.text);
        if answer.status != 200 {
            assert!(
                (400..500).contains(&answer.status),
                "{shown}: {}",
                answer.status
            );
        }
    }
    // A form that is not UTF-8 is a 400 page, not a crash.
    let body = b"handle=\xff\xfe&password=%ff";
    let request = [
        format!(
            "POST /login HTTP/1.1\r\nHost: forkful.test\r\nConnection: close\r\n\
             Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .as_bytes(),
        body,
    ]
    .concat();
    let answer = exchange(addr, &request);
    assert!((400..500).contains(&answer.status), "{}", answer.text);
    still_serving(addr);
}

#[test]
fn paths_that_climb_out_of_static_or_images_find_nothing() {
    let addr = serve(demo(), Timeouts::default());
    for path in [
        "/static/../Cargo.toml",
        "/static/%2e%2e/Cargo.toml",
        "/static/..%2fCargo.toml",
        "/static/%2e%2e%2f%2e%2e%2fCargo.toml",
        "/static/....//Cargo.toml",
        "/static/%252e%252e/Cargo.toml",
        "/static//etc/passwd",
        "/static/%2fetc%2fpasswd",
        "/images/../Cargo.toml",
        "/images/..%2f..%2fCargo.toml",
        "/images/%2e%2e%2f%2e%2e%2fetc%2fpasswd-320.jpg",
        "/images/..%5c..%5cCargo.toml",
        "/recipes/..%2f..%2fCargo.toml",
    ] {
        let answer = exchange(addr, &plain(path));
        assert_eq!(answer.status, 404, "{path}: {}", answer.text);
        assert!(
            !answer.text.contains("[package]") && !answer.text.contains("root:"),
            "{path} leaked a file"
        );
    }
}

#[actix_web::test]
async fn a_tampered_or_replayed_session_cookie_is_a_visitor_with_no_session() {
    let (_, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let session = ann.cookie("forkful_session").expect("a session");
    let account = ann.get("/account").await;
    assert_eq!(account.status, 200);

    let mut flipped = session.clone().into_bytes();
    flipped[10] = if flipped[10] == b'a' { b'b' } else { b'a' };
    for forged in [
        String::from_utf8(flipped).unwrap(),
        "0".repeat(session.len()),
        format!("{session}00"),
        session[..session.len() - 1].to_owned(),
        "x".repeat(8 * 1024),
        "%ff%fe".to_owned(),
        String::new(),
    ] {
        let mut mallory = Browser::new(&site);
        mallory.set_cookie("forkful_session", &forged);
        let page = mallory.get("/account").await;
        assert_eq!(page.status, 303, "forged {forged:.20}: sent to log in");
        let post = mallory
            .post(
                "/recipes/new",
                &[("csrf", &"0".repeat(64)), ("title", "Mallory's")],
                None,
            )
            .await;
        refused(&post, &format!("forged {forged:.20}"));
    }

    // Replay: the cookie and a form token copied before logging out are
    // worth nothing after it.
    let token = crate::writing::form_token(&account, "/logout");
    ann.submit(&account, "/logout", &[]).await;
    let mut replay = Browser::new(&site);
    replay.set_cookie("forkful_session", &session);
    assert_eq!(replay.get("/account").await.status, 303);
    let post = replay
        .post("/logout/everywhere", &[("csrf", &token)], None)
        .await;
    refused(&post, "replayed");
    let post = replay
        .post(
            "/recipes/new",
            &[("csrf", &token), ("title", "Replayed")],
            None,
        )
        .await;
    refused(&post, "replayed");
    assert!(
        get(&site, "/search?q=replayed")
            .await
            .body
            .contains("No recipe"),
        "nothing was written"
    );
}

/// A write refused: 403, or sent to log in (never a 303 to a recipe).
fn refused(page: &crate::helpers::Page, what: &str) {
    let to_login = page.status == 303
        && page
            .header("location")
            .is_some_and(|l| l.starts_with("/login"));
    assert!(
        page.status == 403 || to_login,
        "{what}: {} {:?}",
        page.status,
        page.header("location")
    );
}

/// Logging in as a handle nobody has costs a password check like a wrong
/// password for a real one, so the time of the answer does not tell which
/// handles exist. Without the check the unknown handle answers in
/// microseconds against Argon2's milliseconds; a ratio far from that is
/// what this looks for, not a benchmark.
#[test]
fn an_unknown_handle_costs_a_password_check_like_a_known_one() {
    let (_recipes, accounts, ann) = with_ann();
    let nobody = Slug::parse("nobody-has-this").unwrap();
    let time = |handle: &Slug| {
        let started = Instant::now();
        assert!(accounts.log_in(handle, "wrong wrong wrong").is_err());
        started.elapsed()
    };
    // Taken in turns, so that whatever else the machine runs (the other
    // tests) weighs on both alike.
    let (mut known, mut unknown): (Vec<Duration>, Vec<Duration>) =
        (0..7).map(|_| (time(&ann), time(&nobody))).unzip();
    known.sort();
    unknown.sort();
    let (known, unknown) = (known[3], unknown[3]);
    assert!(
        unknown * 4 > known,
        "unknown handle {unknown:?}, known handle {known:?}"
    );
}

/// Argon2 runs off the async workers (`web::blocking::Gate`), so a burst of
/// logins, each tens of milliseconds of hashing, does not hold the one
/// worker this server has: a page asked for mid-burst is answered while the
/// logins still queue for the hashing pool. Inline, the page waited for
/// every login that came before it. The figures are printed; the assertion
/// is a ratio far from both outcomes, not a benchmark.
#[test]
fn a_burst_of_logins_leaves_pages_served_while_passwords_are_checked() {
    use crate::http_client::Browser as HttpBrowser;
    use forkful::web::rate_limits::ATTEMPTS_PER_MINUTE;
    use std::sync::{Arc, Barrier};
    let (recipes, _accounts, _ann) = with_ann();
    let addr = serve(&recipes, Timeouts::default());
    let origin = format!("http://{addr}");
    // As many as one address may try in a minute.
    let logins = ATTEMPTS_PER_MINUTE as usize;
    let barrier = Arc::new(Barrier::new(logins + 1));
    let burst: Vec<_> = (0..logins)
        .map(|_| {
            let (origin, barrier) = (origin.clone(), barrier.clone());
            thread::spawn(move || {
                let mut browser = HttpBrowser::new(&origin);
                let form = browser.get("/login").unwrap();
                barrier.wait();
                let fields = [("handle", "ann"), ("password", "wrong wrong wrong")];
                let answer = browser.submit(&form, "/login", &fields).unwrap();
                assert_eq!(answer.status, 401, "{}", answer.body);
                Instant::now()
            })
        })
        .collect();
    let mut reader = HttpBrowser::new(&origin);
    reader.get("/about").unwrap();
    barrier.wait();
    // Let the logins reach the server first.
    thread::sleep(Duration::from_millis(30));
    let asked = Instant::now();
    let page = reader.get("/about").unwrap();
    let page_took = asked.elapsed();
    assert_eq!(page.status, 200);
    let last_login = burst.into_iter().map(|t| t.join().unwrap()).max().unwrap();
    let logins_took = last_login.duration_since(asked);
    eprintln!("a page mid-burst: {page_took:?}; the burst of {logins} logins ended {logins_took:?} after it was asked");
    assert!(
        page_took * 4 < logins_took,
        "the page took {page_took:?}, the logins {logins_took:?} after it"
    );
}

/// The comma diff bomb: a cook's edit of 200 lines of a thousand commas
/// each, against as many others, would fill a million-cell table a line
/// if diffed word by word. The writer diffs no words (it needs only the
/// summary of the change), so another cook's write does not wait behind
/// it; and the diff page shows such lines whole, within a budget, so an
/// anonymous reader's diff is small and quick.
#[actix_web::test]
async fn the_comma_diff_bomb_holds_neither_the_writer_nor_a_worker() {
    use forkful::domain::{Change, ContentDraft};
    let recipes = Recipes::temporary().unwrap();
    // Each line differs at both ends, so no common prefix or suffix of
    // words shortens the table: the commas between are all it has.
    let commas = |tail: &str| -> Vec<String> {
        (0..200)
            .map(|i| format!("{tail}{i}{}{tail}", ",".repeat(1_000)))
            .collect()
    };
    let bomb = |tail: &str| ContentDraft {
        title: "Commas".into(),
        ingredients: commas(tail),
        ..ContentDraft::default()
    };
    let slug = |text: &str| Slug::parse(text).unwrap();
    recipes
        .create(&slug("commas"), bomb("a"), &Change::by("mallory", "first"))
        .unwrap();
    let dal = ContentDraft {
        title: "Dal".into(),
        ingredients: vec!["1 cup red lentils".into()],
        ..ContentDraft::default()
    };
    recipes
        .create(&slug("dal"), dal.clone(), &Change::by("ann", "first"))
        .unwrap();

    // The bomb's edit and another cook's, at once.
    let (bomb_took, dal_took) = thread::scope(|scope| {
        let bombing = scope.spawn(|| {
            let started = Instant::now();
            let edited = recipes.edit(
                &slug("commas"),
                forkful::domain::VersionNumber::new(1).unwrap(),
                bomb("b"),
                &Change::by("mallory", "more commas"),
            );
            edited.unwrap();
            started.elapsed()
        });
        thread::sleep(Duration::from_millis(5));
        let started = Instant::now();
        let mut more = dal.clone();
        more.ingredients.push("1 tsp turmeric".into());
        recipes
            .edit(
                &slug("dal"),
                forkful::domain::VersionNumber::new(1).unwrap(),
                more,
                &Change::by("ann", "turmeric"),
            )
            .unwrap();
        (bombing.join().unwrap(), started.elapsed())
    });
    // Generous bounds for a loaded machine: the bomb once held the writer
    // 2.4 s, and the other write waited 2.1 s behind it.
    assert!(
        bomb_took < Duration::from_millis(500) && dal_took < Duration::from_millis(500),
        "the bomb's edit took {bomb_took:?}, the other cook's {dal_took:?}"
    );
    let edited = recipes.snapshot().recipe(&slug("commas")).unwrap();
    assert_eq!(edited.content, bomb("b").normalized().unwrap());

    // The diff page, as an anonymous reader asks for it.
    let site = crate::helpers::site(&recipes);
    let started = Instant::now();
    let page = get(&site, "/recipes/commas/diff?from=1&to=2").await;
    let took = started.elapsed();
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.body.len() < 2 << 20,
        "the diff page is {} bytes",
        page.body.len()
    );
    assert!(
        took < Duration::from_millis(1_000),
        "the diff page took {took:?}"
    );
}
