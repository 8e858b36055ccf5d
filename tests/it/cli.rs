//! The binary's commands, run as a person would run them.

use std::path::Path;
use std::process::{Command, Output};

use forkful::domain::{Recipes, Slug};
use forkful::store::Store;

use crate::helpers::{add_recipe, schema_tx};

/// The binary, with none of the `FORKFUL_*` variables of the shell that runs
/// the tests: every flag reads one.
fn binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_forkful"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("FORKFUL_") {
            command.env_remove(name);
        }
    }
    command
}

fn forkful(args: &[&str]) -> Output {
    forkful_with_env(args, &[])
}

fn forkful_with_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    binary()
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A durable store in `dir` with the test schema and one recipe, closed.
fn store_with_dal(dir: &Path) {
    let store = Store::open(dir).unwrap();
    store.transact(&schema_tx()).unwrap();
    add_recipe(&store, "dal", "Dal");
}

#[test]
fn version_names_the_storage_format_the_binary_writes() {
    let output = forkful(&["--version"]);
    assert!(output.status.success());
    assert_eq!(
        text(&output.stdout).trim_end(),
        format!(
            "forkful {} (storage format {})",
            env!("CARGO_PKG_VERSION"),
            forkful::store::FORMAT_VERSION
        )
    );
}

/// Every long-run figure in docs/SECURITY.md names the storage format it
/// was made at, and it must be the one this build writes (the one
/// `forkful --version` prints, held above): a figure of an older format
/// says nothing of this one, so a new format means running them again.
#[test]
fn security_md_names_no_storage_format_but_the_one_this_build_writes() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/SECURITY.md"))
        .expect("docs/SECURITY.md");
    let named: Vec<u32> = doc
        .match_indices("format ")
        .filter_map(|(at, found)| {
            let digits: String = doc[at + found.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .collect();
    assert!(!named.is_empty(), "SECURITY.md names no storage format");
    let other: Vec<u32> = named
        .into_iter()
        .filter(|format| *format != forkful::store::FORMAT_VERSION)
        .collect();
    assert!(
        other.is_empty(),
        "SECURITY.md names storage formats {other:?}; this build writes {}: run the long runs again",
        forkful::store::FORMAT_VERSION
    );
}

#[test]
fn export_and_import_on_the_command_line_copy_a_store() {
    let root = tempfile::tempdir().unwrap();
    let (source, copy, file) = (
        root.path().join("source"),
        root.path().join("copy"),
        root.path().join("dump.edn"),
    );
    store_with_dal(&source);
    let out = forkful(&["export", "--data", path(&source), path(&file)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("exported 2 transactions"),
        "{}",
        text(&out.stdout)
    );
    let out = forkful(&["import", "--data", path(&copy), path(&file)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("imported 2 transactions"),
        "{}",
        text(&out.stdout)
    );
    let a = Store::open(&source).unwrap().db().basis();
    let b = Store::open(&copy).unwrap().db().basis();
    assert_eq!(a, b);
}

#[test]
fn mistakes_on_the_command_line_say_what_was_wrong_and_exit_non_zero() {
    let root = tempfile::tempdir().unwrap();
    let missing = root.path().join("missing");
    let out = forkful(&["export", "--data", path(&missing), "out.edn"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("there is no store at"),
        "{}",
        text(&out.stderr)
    );

    let out = forkful(&[
        "import",
        "--data",
        path(&root.path().join("s")),
        path(&missing),
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("there is no file at"),
        "{}",
        text(&out.stderr)
    );

    let bad = root.path().join("bad.edn");
    std::fs::write(&bad, "[1 :nope/nope 2 40 true]\n").unwrap();
    let target = root.path().join("target");
    let out = forkful(&["import", "--data", path(&target), path(&bad)]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("line 1") && stderr.contains(":nope/nope"),
        "{stderr}"
    );
    assert!(
        Store::open(&target).unwrap().is_empty(),
        "a failed import leaves the store empty"
    );

    let out = forkful(&["serve", "--no-such-flag"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--no-such-flag"));
}

/// A `forkful serve` child and the address it reported.
pub(crate) struct Server {
    child: std::process::Child,
    pub(crate) addr: String,
    stdout: Option<std::io::BufReader<std::process::ChildStdout>>,
}

impl Drop for Server {
    /// A test that fails leaves no server running.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `forkful serve` with `args` on 127.0.0.1, port 0, two workers, once it
/// has said where it listens.
pub(crate) fn serve(args: &[&str]) -> Server {
    use std::io::BufRead;
    let child = binary()
        .arg("serve")
        .args(args)
        .args(["--addr", "127.0.0.1:0", "--workers", "2"])
        .env("FORKFUL_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut server = Server {
        child,
        addr: String::new(),
        stdout: None,
    };
    let stdout = server.child.stdout.take().unwrap();
    let stdout = server.stdout.insert(std::io::BufReader::new(stdout));
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "serve exited early"
        );
        if let Some(addr) = line.trim().strip_prefix("forkful: serving http://") {
            server.addr = addr.to_owned();
            return server;
        }
    }
}

/// A plain HTTP/1.1 GET over a socket: (status line, whole response).
fn http_get(addr: &str, path: &str) -> (String, String) {
    use std::io::{Read, Write};
    let mut socket = std::net::TcpStream::connect(addr).unwrap();
    write!(
        socket,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    socket.read_to_string(&mut response).unwrap();
    (
        response.lines().next().unwrap_or_default().to_owned(),
        response,
    )
}

impl Server {
    /// SIGTERM, then everything it printed after the address.
    fn stop(mut self) -> (std::process::ExitStatus, String) {
        use std::io::Read;
        let pid = self.child.id().to_string();
        assert!(Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success());
        let status = self.child.wait().unwrap();
        let mut rest = String::new();
        if let Some(stdout) = &mut self.stdout {
            stdout.read_to_string(&mut rest).unwrap();
        }
        (status, rest)
    }
}

#[test]
fn serve_demo_serves_the_site_over_http_and_stops_cleanly_on_sigterm() {
    let server = serve(&["--demo"]);
    let (status, page) = http_get(&server.addr, "/recipes/buttermilk-pancakes");
    assert_eq!(status, "HTTP/1.1 200 OK", "{page}");
    assert!(page.contains("<h1>Buttermilk pancakes</h1>"), "{page}");
    let (status, _) = http_get(&server.addr, "/recipes/no-such-recipe");
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    let (exit, rest) = server.stop();
    assert!(exit.success(), "{exit:?}");
    assert!(rest.contains("the store is flushed"), "{rest}");
}

#[test]
fn serve_on_a_directory_keeps_the_store_and_refuses_a_busy_address() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("store");
    let server = serve(&["--data", path(&data)]);
    let (status, page) = http_get(&server.addr, "/");
    assert_eq!(status, "HTTP/1.1 200 OK", "{page}");
    let busy = forkful(&[
        "serve",
        "--data",
        path(&root.path().join("other")),
        "--addr",
        &server.addr,
    ]);
    assert!(!busy.status.success());
    assert!(
        text(&busy.stderr).contains("listening on"),
        "{}",
        text(&busy.stderr)
    );
    let (exit, _) = server.stop();
    assert!(exit.success());
    // Flushed and closed: the store opens again.
    Store::open(&data).unwrap();
}

#[test]
fn query_prints_a_table_and_reports_mistakes_with_positions() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("store");
    store_with_dal(&data);
    let query = "[:find ?t :in $ ?s :where [?r :recipe/slug ?s] [?r :recipe/title ?t]]";
    let out = forkful(&["query", "--data", path(&data), query, "\"dal\""]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("?t\n"), "{stdout}");
    assert!(
        stdout.contains("\"Dal\"") && stdout.contains("(1 row)"),
        "{stdout}"
    );

    let out = forkful(&[
        "query",
        "--data",
        path(&data),
        "--as-of",
        "32",
        query,
        "\"dal\"",
    ]);
    assert!(
        text(&out.stdout).contains("(0 rows)"),
        "before any recipe: {}",
        text(&out.stdout)
    );

    let out = forkful(&[
        "query",
        "--data",
        path(&data),
        "[:find ?t :where [?r :recipe/colour ?t]]",
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("line 1, column 18: unknown attribute :recipe/colour"),
        "{}",
        text(&out.stderr)
    );

    let out = forkful(&["query", "--data", path(&data), query, "[unclosed"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("reading input 1"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn seed_loads_the_demo_refuses_to_overwrite_and_replaces_with_force() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("store");
    let out = forkful(&["seed", "--data", path(&data)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("seeded 67 recipes"),
        "{}",
        text(&out.stdout)
    );
    let out = forkful(&["seed", "--data", path(&data)]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("already has recipes"),
        "{}",
        text(&out.stderr)
    );
    let out = forkful(&[
        "seed",
        "--data",
        path(&data),
        "--force",
        "--synthetic",
        "40",
        "--depth",
        "5",
        "--fanout",
        "2",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("seeded 40 synthetic recipes"),
        "{}",
        text(&out.stdout)
    );
    let out = forkful(&["seed", "--data", path(&data), "--depth", "5"]);
    assert_eq!(out.status.code(), Some(2), "--depth needs --synthetic");
    let out = forkful_with_env(&["seed", "--data", path(&data)], &[("FORKFUL_DEPTH", "5")]);
    assert_eq!(out.status.code(), Some(2), "so does FORKFUL_DEPTH");
    let out = forkful(&[
        "seed",
        "--data",
        path(&data),
        "--force",
        "--synthetic",
        "10",
        "--fanout",
        "0",
    ]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("--fanout must be at least 1"));
    let out = forkful(&[
        "query",
        "--data",
        path(&data),
        "[:find (count ?r) . :where [?r :recipe/slug]]",
    ]);
    assert!(
        text(&out.stdout).contains("\n40\n"),
        "a refused --force deletes nothing: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

#[test]
fn seed_force_deletes_only_a_store_never_a_directory_with_anything_else() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    std::fs::create_dir_all(home.join("documents")).unwrap();
    std::fs::write(home.join("notes.txt"), "keep me").unwrap();
    let file = root.path().join("a-file");
    std::fs::write(&file, "keep me too").unwrap();
    // A store with a stranger beside its files is not deleted either.
    let store = root.path().join("store");
    let out = forkful(&["seed", "--data", path(&store), "--synthetic", "3"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stranger = store.join("README");
    std::fs::write(&stranger, "mine").unwrap();
    for (data, what) in [
        (&home, "is not a forkful store"),
        (&file, "is not a directory"),
        (&store, "is not a forkful store"),
    ] {
        let out = forkful(&["seed", "--data", path(data), "--force"]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains(what) && text(&out.stderr).contains("nothing was deleted"),
            "{}",
            text(&out.stderr)
        );
    }
    assert_eq!(
        std::fs::read_to_string(home.join("notes.txt")).unwrap(),
        "keep me"
    );
    assert!(home.join("documents").is_dir());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me too");
    assert_eq!(std::fs::read_to_string(&stranger).unwrap(), "mine");
    // Without the stranger, the store is replaced.
    std::fs::remove_file(&stranger).unwrap();
    let out = forkful(&[
        "seed",
        "--data",
        path(&store),
        "--force",
        "--synthetic",
        "4",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("seeded 4 synthetic recipes"));
}

/// Every command that opens a store, with `--data` and what else it needs.
fn store_commands(data: &str) -> [Vec<&str>; 5] {
    [
        vec!["serve", "--data", data],
        vec!["seed", "--data", data],
        vec!["query", "--data", data, "[:find ?e :where [?e :db/doc]]"],
        vec!["export", "--data", data, "-"],
        vec!["import", "--data", data, "dump.edn"],
    ]
}

#[test]
fn a_cache_too_big_to_count_in_bytes_is_refused_before_any_store_is_opened() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("store");
    let too_big = u64::MAX.to_string();
    for command in store_commands(path(&data)) {
        let out = forkful(&[&command[..], &["--cache-mb", &too_big]].concat());
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command:?}: {stderr}");
        assert!(
            stderr.contains("--cache-mb") && stderr.contains("at most 17592186044415 MiB"),
            "{command:?}: {stderr}"
        );
        assert!(!data.exists(), "{command:?} opened a store");
    }
    let out = forkful(&["seed", "--data", path(&data), "--cache-mb", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("at least 1 MiB"),
        "{}",
        text(&out.stderr)
    );
    assert!(!data.exists());
}

#[test]
fn forkful_cache_mb_is_read_and_refused_as_the_flag_is() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("store");
    let too_big = u64::MAX.to_string();
    for command in store_commands(path(&data)) {
        let flag = forkful(&[&command[..], &["--cache-mb", &too_big]].concat());
        let env = forkful_with_env(&command, &[("FORKFUL_CACHE_MB", &too_big)]);
        assert_eq!(env.status.code(), Some(2), "{command:?}");
        assert_eq!(text(&env.stderr), text(&flag.stderr), "{command:?}");
        assert!(!data.exists(), "{command:?} opened a store");
    }
    // The flag wins over the variable, and a size that fits is used.
    store_with_dal(&data);
    let out = forkful_with_env(
        &["export", "--data", path(&data), "--cache-mb", "1", "-"],
        &[("FORKFUL_CACHE_MB", &too_big)],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = forkful_with_env(
        &[
            "query",
            "--data",
            path(&data),
            "[:find ?s :where [_ :recipe/slug ?s]]",
        ],
        &[("FORKFUL_CACHE_MB", "1")],
    );
    assert!(
        text(&out.stdout).contains("\"dal\""),
        "{}",
        text(&out.stderr)
    );
}

/// `forkful ARGS` with `stdin` as its standard input.
fn forkful_with_input(args: &[&str], stdin: &str) -> Output {
    use std::io::Write as _;
    let mut child = binary()
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn administrators_add_disable_and_reset_accounts_on_the_command_line() {
    use forkful::domain::{AccountError, Accounts, Recipes, Slug};
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("store");
    drop(Recipes::open(Store::open(&data).unwrap()).unwrap());
    let data = path(&data);
    let ann = Slug::parse("ann").unwrap();
    let log_in = |password: &str| {
        let recipes = Recipes::open(Store::open(data).unwrap()).unwrap();
        Accounts::open(&recipes)
            .unwrap()
            .log_in(&ann, password)
            .map(|_| ())
    };

    let out = forkful_with_input(
        &["user", "--data", data, "add", "ann", "--name", "Ann"],
        "a long password\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("added ann (Ann)"));
    log_in("a long password").unwrap();

    let out = forkful_with_input(
        &["user", "--data", data, "add", "ann", "--name", "A"],
        "another one!\n",
    );
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("taken"), "{}", text(&out.stderr));
    let out = forkful_with_input(
        &["user", "--data", data, "add", "ben", "--name", "Ben"],
        "short\n",
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("password"),
        "{}",
        text(&out.stderr)
    );
    let out = forkful_with_input(
        &["user", "--data", data, "passwd", "nobody"],
        "a long password\n",
    );
    assert!(
        text(&out.stderr).contains("no account nobody"),
        "{}",
        text(&out.stderr)
    );

    let out = forkful_with_input(
        &["user", "--data", data, "passwd", "ann"],
        "a new long password\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(log_in("a long password").is_err());
    log_in("a new long password").unwrap();

    let out = forkful(&["user", "--data", data, "disable", "ann"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(matches!(
        log_in("a new long password"),
        Err(AccountError::Disabled(_))
    ));
    let out = forkful(&["user", "--data", data, "enable", "ann"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    log_in("a new long password").unwrap();
}

#[test]
fn import_recipe_brings_in_a_saved_page_and_says_what_was_wrong() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let fixture = |name: &str| {
        format!(
            "{}/tests/fixtures/import/{name}",
            env!("CARGO_MANIFEST_DIR")
        )
    };
    // A saved page with its canonical address: what was read, then what
    // was saved; with --dry-run, what was read and nothing saved.
    let summary = "\u{201c}Easy Chana Masala\u{201d}: 5 ingredients, 3 steps in 2 sections \
                   (The base, The curry), prep 10 min, cook 25 min, total 35 min; \
                   read from its schema.org JSON-LD";
    let wprm = fixture("wprm.html");
    let import = |extra: &[&str]| {
        let mut args = vec!["import-recipe", "--data", path(&data), &wprm, "--as", "ann"];
        args.extend_from_slice(extra);
        forkful(&args)
    };
    let out = import(&["--dry-run"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).lines().collect::<Vec<_>>(),
        [summary, "nothing was saved (--dry-run)"]
    );
    let out = import(&[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).lines().collect::<Vec<_>>(),
        [
            summary,
            "brought in easy-chana-masala from Spice Trail Kitchen (https://spicetrail.example/chana-masala/) as ann"
        ],
        "the dry run saved nothing: the slug is the first"
    );
    // One without, given its address.
    let out = forkful(&[
        "import-recipe",
        "--data",
        path(&data),
        &fixture("yoast.html"),
        "--as",
        "ann",
        "--url",
        "https://bakingshed.example/lemon-drizzle/",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("brought in lemon-drizzle-cake from The Baking Shed"));
    // One whose only address is its Recipe's `@id` in JSON-LD (issue 31):
    // the page's address, without the fragment naming the node.
    let out = forkful(&[
        "import-recipe",
        "--data",
        path(&data),
        &fixture("yoast.html"),
        "--as",
        "bo",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("(https://bakingshed.example/lemon-drizzle/) as bo"),
        "{}",
        text(&out.stdout)
    );
    let recipes = Recipes::open(Store::open(&data).unwrap()).unwrap();
    let snapshot = recipes.snapshot();
    let brought_in = snapshot
        .find(&Slug::parse("lemon-drizzle-cake").unwrap())
        .unwrap()
        .unwrap();
    let source = snapshot.source(brought_in).unwrap().unwrap();
    assert_eq!(source.url, "https://bakingshed.example/lemon-drizzle/");
    drop(recipes);
    for (args, says) in [
        (
            vec![fixture("microdata.html"), "--as".into(), "ann".into()],
            "does not say its address",
        ),
        (
            vec![
                fixture("no-recipe.html"),
                "--as".into(),
                "ann".into(),
                "--url".into(),
                "https://x.example/".into(),
            ],
            "the page has no recipe",
        ),
        (
            vec!["http://127.0.0.1/x".into(), "--as".into(), "ann".into()],
            "private or local network",
        ),
        (
            vec![
                "http://recipes.example:9/x".into(),
                "--as".into(),
                "ann".into(),
            ],
            "can be fetched, not port 9",
        ),
        (
            vec![fixture("wprm.html"), "--as".into(), "Not A Handle".into()],
            "is not a cook's handle",
        ),
        (vec![fixture("wprm.html")], "--as"),
    ] {
        let mut all = vec![
            "import-recipe".to_owned(),
            "--data".into(),
            path(&data).into(),
        ];
        all.extend(args);
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let out = forkful(&all);
        assert!(!out.status.success(), "{all:?}");
        assert!(
            text(&out.stderr).contains(says),
            "{all:?}: {}",
            text(&out.stderr)
        );
    }
}

/// `log push` copies a store into an empty log and makes it follow it; the
/// store is then served only with its log, and a second push is refused.
#[test]
fn log_push_moves_a_store_into_postgresql_and_serve_then_needs_it() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("store");
    store_with_dal(&data);
    let url = crate::postgres::fresh_database();
    let out = forkful(&["log", "push", "--data", path(&data), "--database-url", &url]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("copied 2 transactions"),
        "{}",
        text(&out.stdout)
    );
    assert!(
        !text(&out.stdout).contains(&url),
        "the address is not printed"
    );
    let again = forkful(&["log", "push", "--data", path(&data), "--database-url", &url]);
    assert!(!again.status.success());
    assert!(
        text(&again.stderr).contains("follows a log already"),
        "{}",
        text(&again.stderr)
    );
    let serve = forkful(&["serve", "--data", path(&data), "--addr", "127.0.0.1:0"]);
    assert!(!serve.status.success());
    assert!(
        text(&serve.stderr).contains("serve it with --database-url"),
        "{}",
        text(&serve.stderr)
    );
    let unreachable = forkful(&[
        "log",
        "push",
        "--data",
        path(&data),
        "--database-url",
        "postgres://nobody@127.0.0.1:1/none",
    ]);
    assert!(!unreachable.status.success());
    assert!(
        text(&unreachable.stderr).contains("connecting to the log in PostgreSQL"),
        "{}",
        text(&unreachable.stderr)
    );
}
