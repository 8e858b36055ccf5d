//! A real PostgreSQL for the tests of the log, never a mock: the one
//! `FORKFUL_TEST_DATABASE_URL` names when it is set, otherwise a private
//! cluster this test process starts (Debian's `initdb` and `postgres`, on a
//! free port in a temporary directory, as the `postgres` user when run as
//! root), installing the `postgresql` package when it is missing. It never
//! skips. Each test gets a database of its own (`fresh_database`).
//!
//! The private cluster lives as long as the test process: it is started
//! under a shell that stops it (fast shutdown) and removes its directory
//! when its standard input, a pipe this process holds, closes, which it
//! does when the process exits, however it exits.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::helpers::apt_install;

/// Where the tests' databases are made: a server and a user that may
/// create databases.
struct Server {
    /// `postgres://user@host:port`, without a database.
    base: String,
    /// For a private cluster: the pipe whose closing stops it (and removes
    /// its directory), held for the life of the process.
    _cluster: Option<(ChildStdin, Child)>,
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| match std::env::var("FORKFUL_TEST_DATABASE_URL") {
        Ok(url) => {
            let mut parsed = url::Url::parse(&url).expect("FORKFUL_TEST_DATABASE_URL is a URL");
            parsed.set_path("");
            Server {
                base: parsed.as_str().trim_end_matches('/').to_owned(),
                _cluster: None,
            }
        }
        Err(_) => start_private_cluster(),
    })
}

/// A new, empty database for one test: its URL.
pub(crate) fn fresh_database() -> String {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let server = server();
    let name = format!(
        "forkful_test_{}_{}",
        std::process::id(),
        COUNT.fetch_add(1, Ordering::Relaxed)
    );
    psql(
        &format!("{}/postgres", server.base),
        &[
            &format!("DROP DATABASE IF EXISTS {name}"),
            &format!("CREATE DATABASE {name}"),
        ],
    );
    format!("{}/{name}", server.base)
}

/// Runs each of `statements` on the database at `url`, panicking with
/// what psql said if one fails.
pub(crate) fn psql(url: &str, statements: &[&str]) -> String {
    let mut command = Command::new(binary("psql"));
    command
        .arg(url)
        .args(["-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1"]);
    for statement in statements {
        command.args(["-c", statement]);
    }
    let out = command.output().expect("psql runs");
    assert!(
        out.status.success(),
        "psql {statements:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The directory of Debian's PostgreSQL binaries, installing the package
/// when there is none.
fn bin_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let find = || {
            let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
                .into_iter()
                .flatten()
                .flatten()
                .map(|entry| entry.path().join("bin"))
                .filter(|bin| bin.join("initdb").exists())
                .collect();
            found.sort();
            found.pop()
        };
        if let Some(dir) = find() {
            return dir;
        }
        eprintln!("postgres: no PostgreSQL under /usr/lib/postgresql: installing Debian's postgresql");
        apt_install(&["postgresql"]).unwrap_or_else(|why| {
            panic!("the log's tests need PostgreSQL and could not install it (`apt-get install -y postgresql`, as root): {why}")
        });
        find().expect("apt-get installed postgresql, yet no initdb is under /usr/lib/postgresql")
    })
}

fn binary(name: &str) -> PathBuf {
    bin_dir().join(name)
}

/// Whether this process runs as root, which PostgreSQL refuses to.
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|out| out.stdout.trim_ascii() == b"0")
        .unwrap_or(false)
}

/// `command` as the `postgres` user when this process is root.
fn as_postgres(program: &Path) -> Command {
    if is_root() {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(program);
        command
    } else {
        Command::new(program)
    }
}

/// A new cluster's data in `dir`/data, `dir` given to the `postgres` user
/// first when this process is root: trust on loopback, no fsync at init.
fn init_cluster(dir: &Path) {
    if is_root() {
        let owned = Command::new("chown")
            .args(["postgres:postgres"])
            .arg(dir)
            .status()
            .expect("chown runs");
        assert!(owned.success(), "the cluster's directory given to postgres");
    }
    let initdb = as_postgres(&binary("initdb"))
        .args([
            "--auth=trust",
            "--username=postgres",
            "--no-sync",
            "--encoding=UTF8",
            "-D",
        ])
        .arg(dir.join("data"))
        .output()
        .expect("initdb runs");
    assert!(
        initdb.status.success(),
        "initdb: {}",
        String::from_utf8_lossy(&initdb.stderr)
    );
}

/// A port nothing listens on now, for a cluster to take.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

fn start_private_cluster() -> Server {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let data = dir.path().join("data");
    init_cluster(dir.path());
    let port = free_port();
    // The shell stops the server when its standard input closes: when this
    // process exits, however it does.
    let script = format!(
        "{} -D '{}' -p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='{}' -c fsync=off >'{}/log' 2>&1 & pid=$!; cat >/dev/null; kill -INT $pid; wait $pid; rm -rf '{}'",
        binary("postgres").display(),
        data.display(),
        dir.path().display(),
        dir.path().display(),
        dir.path().display(),
    );
    // The shell removes the directory once the server has stopped.
    let dir = dir.keep();
    let mut child = as_postgres(Path::new("/bin/sh"))
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("the cluster starts");
    let stdin = child.stdin.take().expect("the cluster's stdin");
    let base = format!("postgres://postgres@127.0.0.1:{port}");
    let started = Instant::now();
    loop {
        let ready = Command::new(binary("pg_isready"))
            .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "postgres"])
            .output()
            .is_ok_and(|out| out.status.success());
        if ready {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the private PostgreSQL did not start in 60 s: {}",
            std::fs::read_to_string(dir.join("log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!(
        "postgres: a private cluster on port {port}, started in {:.1?}",
        started.elapsed()
    );
    Server {
        base,
        _cluster: Some((stdin, child)),
    }
}

/// A PostgreSQL cluster of one test's own, which the test may stop and
/// start again (the shared one above must stay up for the others). Stopped
/// and removed when dropped.
pub(crate) struct OwnCluster {
    dir: PathBuf,
    port: u16,
}

impl OwnCluster {
    pub(crate) fn start() -> OwnCluster {
        let dir = tempfile::tempdir().expect("a temporary directory").keep();
        init_cluster(&dir);
        let port = free_port();
        let cluster = OwnCluster { dir, port };
        cluster.up();
        cluster
    }

    /// The port the server listens on, on 127.0.0.1.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// `postgres://…/name` on this cluster, the database made.
    pub(crate) fn database(&self, name: &str) -> String {
        let base = format!("postgres://postgres@127.0.0.1:{}", self.port);
        psql(
            &format!("{base}/postgres"),
            &[&format!("CREATE DATABASE {name}")],
        );
        format!("{base}/{name}")
    }

    /// Starts the server, and waits until it takes connections.
    pub(crate) fn up(&self) {
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories='{}'",
            self.port,
            self.dir.display()
        );
        self.pg_ctl(&["start", "-w", "-t", "60", "-o", &options, "-l"], true);
    }

    /// Stops the server at once, as a crash would (`immediate`): sessions
    /// are cut, and nothing is flushed that was not committed.
    pub(crate) fn down(&self) {
        self.pg_ctl(&["stop", "-m", "immediate", "-w"], false);
    }

    /// Pauses every process of the server (SIGSTOP), as a machine that
    /// froze or a network gone quiet: connections stay open, and nothing
    /// answers on them or takes new ones.
    pub(crate) fn pause(&self) {
        self.signal("-STOP");
    }

    /// Lets a paused server go on (SIGCONT).
    pub(crate) fn resume(&self) {
        self.signal("-CONT");
    }

    /// Sends `signal` to the postmaster and to every process it started.
    fn signal(&self, signal: &str) {
        let pid_file = std::fs::read_to_string(self.dir.join("data/postmaster.pid"))
            .expect("a running server's postmaster.pid");
        let postmaster: u32 = pid_file.lines().next().unwrap().trim().parse().unwrap();
        let mut pids = vec![postmaster];
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // `pid (comm) state ppid ...`: comm may hold spaces, so after
            // its closing parenthesis.
            let parent = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|ppid| ppid.parse::<u32>().ok());
            if parent == Some(postmaster) {
                pids.push(pid);
            }
        }
        let status = Command::new("kill")
            .arg(signal)
            .args(pids.iter().map(u32::to_string))
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill {signal} {pids:?}");
    }

    fn pg_ctl(&self, args: &[&str], with_log: bool) {
        let mut command = as_postgres(&binary("pg_ctl"));
        command.args(args);
        if with_log {
            command.arg(self.dir.join("log"));
        }
        let out = command
            .arg("-D")
            .arg(self.dir.join("data"))
            .output()
            .expect("pg_ctl runs");
        assert!(
            out.status.success(),
            "pg_ctl {args:?}: {}{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(self.dir.join("log")).unwrap_or_default()
        );
    }
}

impl Drop for OwnCluster {
    fn drop(&mut self) {
        let _ = as_postgres(&binary("pg_ctl"))
            .args(["stop", "-m", "immediate", "-D"])
            .arg(self.dir.join("data"))
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The name the standby gives the primary (`application_name` in its
/// `primary_conninfo`), and the one the primary's
/// `synchronous_standby_names` names.
const STANDBY_NAME: &str = "forkful_standby";

/// A primary and a streaming standby of its own, each a cluster of one
/// test's own on a port of its own, the standby synchronous: the primary's
/// `synchronous_standby_names` names it, so that a commit under
/// `synchronous_commit = on` returns once the standby has flushed it too.
/// The standby is made from the running primary with `pg_basebackup -R`.
/// Both are stopped and removed when dropped.
///
/// `synchronous_standby_names` is given on the primary's command line, not
/// in its configuration files: the standby copies those, and once promoted
/// it would wait on a standby of its own that does not exist.
pub(crate) struct ReplicatedPair {
    dir: PathBuf,
    primary_port: u16,
    standby_port: u16,
}

impl ReplicatedPair {
    /// Starts the primary, makes the standby from it, starts it, and waits
    /// until the primary counts it as its synchronous standby.
    pub(crate) fn start() -> ReplicatedPair {
        let dir = tempfile::tempdir().expect("a temporary directory").keep();
        init_cluster(&dir);
        let primary_port = free_port();
        let standby_port = loop {
            let port = free_port();
            if port != primary_port {
                break port;
            }
        };
        let pair = ReplicatedPair {
            dir,
            primary_port,
            standby_port,
        };
        // initdb --auth=trust lets replication in from loopback already;
        // said here rather than assumed.
        {
            use std::io::Write;
            let mut hba = std::fs::OpenOptions::new()
                .append(true)
                .open(pair.primary_data().join("pg_hba.conf"))
                .expect("the primary's pg_hba.conf");
            writeln!(hba, "host replication all 127.0.0.1/32 trust").expect("pg_hba.conf written");
        }
        let primary = format!(
            "-p {primary_port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='{}' \
             -c wal_level=replica -c max_wal_senders=4 \
             -c synchronous_standby_names={STANDBY_NAME}",
            pair.dir.display()
        );
        pg_ctl_on(
            &pair.primary_data(),
            &["start", "-w", "-t", "60", "-o", &primary],
            Some(&pair.dir.join("primary.log")),
        );
        let backup = as_postgres(&binary("pg_basebackup"))
            .arg("-d")
            .arg(format!(
                "host=127.0.0.1 port={primary_port} user=postgres application_name={STANDBY_NAME}"
            ))
            .arg("-D")
            .arg(pair.standby_data())
            .args(["-R", "-X", "stream", "--checkpoint=fast", "--no-sync"])
            .output()
            .expect("pg_basebackup runs");
        assert!(
            backup.status.success(),
            "pg_basebackup: {}",
            String::from_utf8_lossy(&backup.stderr)
        );
        let standby = format!(
            "-p {standby_port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='{}' \
             -c hot_standby=on",
            pair.dir.display()
        );
        pg_ctl_on(
            &pair.standby_data(),
            &["start", "-w", "-t", "60", "-o", &standby],
            Some(&pair.dir.join("standby.log")),
        );
        let started = Instant::now();
        let primary_db = format!("{}/postgres", pair.primary_base());
        loop {
            let state = psql(
                &primary_db,
                &[&format!(
                    "SELECT state || ' ' || sync_state FROM pg_stat_replication \
                     WHERE application_name = '{STANDBY_NAME}'"
                )],
            );
            if state.trim() == "streaming sync" {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the standby is not the primary's synchronous standby after 60 s ({state:?}): {}",
                pair.logs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        pair
    }

    /// Makes the database `name` on the primary (the standby has it once
    /// the commit returns), and gives the URL a node is given: both hosts,
    /// the one that takes writes asked for.
    pub(crate) fn database(&self, name: &str) -> String {
        psql(
            &format!("{}/postgres", self.primary_base()),
            &[&format!("CREATE DATABASE {name}")],
        );
        format!(
            "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/{name}?target_session_attrs=read-write",
            self.primary_port, self.standby_port
        )
    }

    /// `postgres://…/name` on the standby alone.
    pub(crate) fn standby_url(&self, name: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.standby_port)
    }

    /// Kills the primary as a crash would (`pg_ctl stop -m immediate`):
    /// its sessions cut, nothing more flushed, and it is never started
    /// again.
    pub(crate) fn kill_primary(&self) {
        pg_ctl_on(
            &self.primary_data(),
            &["stop", "-m", "immediate", "-w"],
            None,
        );
    }

    /// Promotes the standby, and waits until it takes writes.
    pub(crate) fn promote_standby(&self) {
        pg_ctl_on(&self.standby_data(), &["promote", "-w", "-t", "60"], None);
    }

    /// What both servers logged, to say why something failed.
    pub(crate) fn logs(&self) -> String {
        let log = |name: &str| std::fs::read_to_string(self.dir.join(name)).unwrap_or_default();
        format!(
            "primary's log:\n{}\nstandby's log:\n{}",
            log("primary.log"),
            log("standby.log")
        )
    }

    fn primary_base(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}", self.primary_port)
    }

    fn primary_data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn standby_data(&self) -> PathBuf {
        self.dir.join("standby")
    }
}

impl Drop for ReplicatedPair {
    fn drop(&mut self) {
        for data in [self.standby_data(), self.primary_data()] {
            let _ = as_postgres(&binary("pg_ctl"))
                .args(["stop", "-m", "immediate", "-D"])
                .arg(data)
                .output();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `pg_ctl ARGS -D data`, with `-l log` when given, as the `postgres`
/// user; panics with what it said, and the log, if it fails.
fn pg_ctl_on(data: &Path, args: &[&str], log: Option<&Path>) {
    let mut command = as_postgres(&binary("pg_ctl"));
    command.args(args);
    if let Some(log) = log {
        command.arg("-l").arg(log);
    }
    let out = command.arg("-D").arg(data).output().expect("pg_ctl runs");
    assert!(
        out.status.success(),
        "pg_ctl {args:?} -D {}: {}{}",
        data.display(),
        String::from_utf8_lossy(&out.stderr),
        log.and_then(|log| std::fs::read_to_string(log).ok())
            .unwrap_or_default()
    );
}
