//! The server binary run as a process of its own, a small browser that
//! talks to it over loopback, and a ledger of what cooks were told was
//! saved: shared by the tests that need a process to kill (`app_crash`) or
//! to watch for a while (`soak`).
//!
//! - `Server`: `forkful serve` on a store directory and port 0, ready once
//!   it prints its `forkful: serving` line; killed with SIGKILL or stopped
//!   with SIGTERM. `FORKFUL_BIN` names another binary (the scripts' release
//!   build) than the one cargo built for the tests.
//! - `Browser`: one cook's browser. ureq keeps no cookies, so it keeps them
//!   by hand; it reads each form's hidden fields (the token among them)
//!   from the form, sends the site's Origin as a browser does, and follows
//!   no redirect, because a write's 303 is its acknowledgement.
//! - `Ledger`: every write a cook was acknowledged, and the check of a
//!   store against it through the domain's read API (versions, history,
//!   lineage, search) and of the server's pages against it.

use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::Duration;

use actix_web::http::header::{HeaderMap, HeaderName, HeaderValue};
use forkful::domain::{
    CatalogQuery, ContentDraft, RecipeId, Slug, Snapshot, Step, SuggestionState, Yield,
};

use crate::helpers::Page;
use crate::writing::{filled_in, hidden_fields, multipart_form};

/// The environment variable naming the server binary to run.
pub(crate) const BIN_VAR: &str = "FORKFUL_BIN";
/// How long a server may take to open its store and listen.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// Lines of the server's standard error kept to say why it failed.
const STDERR_LINES: usize = 200;
/// How long one request may take before the test calls it lost.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// The password every test cook has.
pub(crate) const PASSWORD: &str = "correct horse battery";
/// Versions a history page lists (`domain::HISTORY_PAGE`).
const HISTORY_PAGE: usize = forkful::domain::HISTORY_PAGE;

/// The binary the tests serve with: `FORKFUL_BIN`, or cargo's build.
pub(crate) fn server_binary() -> PathBuf {
    std::env::var_os(BIN_VAR)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_forkful")))
}

/// `forkful serve` running as a child process.
pub(crate) struct Server {
    child: Child,
    /// Lines of its standard output, as they come.
    lines: mpsc::Receiver<String>,
    /// The last lines of its standard error.
    errors: Arc<Mutex<VecDeque<String>>>,
    origin: Option<String>,
    exited: bool,
}

impl Server {
    /// Starts `forkful serve` on the store at `data`, listening on a port
    /// of its own, with `flags` besides; does not wait for it to listen.
    pub(crate) fn spawn(data: &Path, flags: &[&str]) -> Server {
        let mut child = Command::new(server_binary())
            .arg("serve")
            .arg("--data")
            .arg(data)
            .args(["--addr", "127.0.0.1:0"])
            .args(flags)
            // Request logs are a line a request: only warnings and errors
            // are worth the pipe.
            .env("FORKFUL_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", server_binary().display()));
        let stdout = child.stdout.take().expect("the server's stdout");
        let stderr = child.stderr.take().expect("the server's stderr");
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = sender.send(line);
            }
        });
        // Read all along, so that the server never blocks on a full pipe.
        let errors = Arc::new(Mutex::new(VecDeque::new()));
        let kept = Arc::clone(&errors);
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
                if kept.len() == STDERR_LINES {
                    kept.pop_front();
                }
                kept.push_back(line);
            }
        });
        Server {
            child,
            lines,
            errors,
            origin: None,
            exited: false,
        }
    }

    /// Whether the server has said it listens, without waiting.
    pub(crate) fn listened(&mut self) -> bool {
        while let Ok(line) = self.lines.try_recv() {
            if let Some(origin) = line.strip_prefix("forkful: serving ") {
                self.origin = Some(origin.trim().to_owned());
            }
        }
        self.origin.is_some()
    }

    /// Starts the server and waits until it listens.
    pub(crate) fn start(data: &Path, flags: &[&str]) -> Result<Server, String> {
        let mut server = Server::spawn(data, flags);
        server.wait_serving()?;
        Ok(server)
    }

    /// Waits for the `forkful: serving http://ADDR` line; the origin.
    fn wait_serving(&mut self) -> Result<(), String> {
        loop {
            match self.lines.recv_timeout(START_TIMEOUT) {
                Ok(line) => {
                    if let Some(origin) = line.strip_prefix("forkful: serving ") {
                        self.origin = Some(origin.trim().to_owned());
                        return Ok(());
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    self.kill();
                    return Err(format!(
                        "the server did not listen within {START_TIMEOUT:?}: {}",
                        self.errors()
                    ));
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let status = self.child.wait().map(|s| s.to_string());
                    self.exited = true;
                    // The standard error's reader may still hold the last lines.
                    thread::sleep(Duration::from_millis(50));
                    return Err(format!(
                        "the server stopped before it listened ({status:?}): {}",
                        self.errors()
                    ));
                }
            }
        }
    }

    /// `http://127.0.0.1:PORT`, as browsers send it in `Origin`.
    pub(crate) fn origin(&self) -> &str {
        self.origin.as_deref().expect("a server that is serving")
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The server's resident memory in KiB (`VmRSS`), while it runs.
    pub(crate) fn rss_kib(&self) -> Option<u64> {
        self.status_kib("VmRSS:")
    }

    /// The most resident memory the server has held since it started, in
    /// KiB (`VmHWM`, the kernel's high-water mark), while it runs.
    pub(crate) fn peak_rss_kib(&self) -> Option<u64> {
        self.status_kib("VmHWM:")
    }

    /// A figure of `/proc/PID/status` given in kB, such as `VmRSS:`.
    fn status_kib(&self, field: &str) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).ok()?;
        let line = status.lines().find(|l| l.starts_with(field))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    /// The last lines the server wrote to standard error.
    pub(crate) fn errors(&self) -> String {
        let kept = self.errors.lock().unwrap_or_else(|e| e.into_inner());
        kept.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// SIGKILL (std's `Child::kill` on Unix): no destructor, no flush runs.
    pub(crate) fn kill(&mut self) {
        if !self.exited {
            self.child.kill().expect("killing the server");
            self.child.wait().expect("waiting for the killed server");
            self.exited = true;
        }
    }

    /// SIGTERM, as a service manager stops it, and waits for it to end:
    /// Ok with the lines it printed meanwhile if it ended well.
    pub(crate) fn terminate(&mut self) -> Result<Vec<String>, String> {
        let sent = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status()
            .map_err(|e| format!("running kill: {e}"))?;
        if !sent.success() {
            return Err(format!("kill -TERM {} failed: {sent}", self.pid()));
        }
        let status = self.child.wait().map_err(|e| e.to_string())?;
        self.exited = true;
        // Blocks until the reader sees the pipe close, so the last lines
        // ("the store is flushed") are in, however late its thread runs.
        let said: Vec<String> = self.lines.iter().collect();
        if status.success() {
            Ok(said)
        } else {
            Err(format!(
                "the server ended with {status} after SIGTERM: {}",
                self.errors()
            ))
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if !self.exited {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A request that got no answer.
#[derive(Debug, Clone)]
pub(crate) struct Unanswered {
    /// Whether the request may have reached the server: false only when
    /// the connection was refused, so that nothing was sent.
    pub sent: bool,
    pub why: String,
}

/// One cook's browser; a clone is another tab, sharing the session.
#[derive(Clone)]
pub(crate) struct Browser {
    agent: ureq::Agent,
    origin: String,
    cookies: BTreeMap<String, String>,
    /// The client address a trusted proxy would say this browser has
    /// (`X-Forwarded-For`), for a server told to trust 127.0.0.1.
    forwarded_for: Option<String>,
}

impl Browser {
    pub(crate) fn new(origin: &str) -> Browser {
        Browser {
            agent: agent(),
            origin: origin.to_owned(),
            cookies: BTreeMap::new(),
            forwarded_for: None,
        }
    }

    /// The same browser, as if behind a proxy that says its address is
    /// `address`: many cooks, each limited as a client of its own.
    pub(crate) fn behind_proxy_as(mut self, address: &str) -> Browser {
        self.forwarded_for = Some(address.to_owned());
        self
    }

    /// The same browser, cookies kept, talking to a restarted server: a
    /// new port, and no pooled connection to the process that died.
    pub(crate) fn reconnect(&mut self, origin: &str) {
        self.agent = agent();
        self.origin = origin.to_owned();
    }

    pub(crate) fn has_cookie(&self, name: &str) -> bool {
        self.cookies.contains_key(name)
    }

    pub(crate) fn cookie(&self, name: &str) -> Option<String> {
        self.cookies.get(name).cloned()
    }

    /// Sets a cookie by hand: a copy of another browser's.
    pub(crate) fn set_cookie(&mut self, name: &str, value: &str) {
        self.cookies.insert(name.to_owned(), value.to_owned());
    }

    pub(crate) fn get(&mut self, path: &str) -> Result<Page, Unanswered> {
        self.get_with(path, &[])
    }

    /// GETs `path` with `headers` besides the cookies.
    pub(crate) fn get_with(
        &mut self,
        path: &str,
        headers: &[(&str, &str)],
    ) -> Result<Page, Unanswered> {
        let mut request = self.agent.get(&format!("{}{path}", self.origin));
        for (name, value) in headers {
            request = request.set(name, value);
        }
        self.send(request, Sent::Nothing)
    }

    /// Posts `form` from this site, as a browser does.
    pub(crate) fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Result<Page, Unanswered> {
        let request = self
            .agent
            .post(&format!("{}{path}", self.origin))
            .set("Origin", &self.origin.clone());
        self.send(request, Sent::Form(form))
    }

    /// `submit`, as `multipart/form-data` with a file in `picture_file`
    /// (`writing::multipart_form`).
    pub(crate) fn submit_with_file(
        &mut self,
        page: &Page,
        action: &str,
        fields: &[(&str, &str)],
        file: (&str, &str, &[u8]),
    ) -> Result<Page, Unanswered> {
        let hidden = hidden_fields(page, action);
        let form = filled_in(&hidden, fields);
        let (content_type, body) = multipart_form(&form, Some(file));
        let request = self
            .agent
            .post(&format!("{}{action}", self.origin))
            .set("Origin", &self.origin.clone())
            .set("Content-Type", &content_type);
        self.send(request, Sent::Bytes(&body))
    }

    /// Posts the form on `page` that posts to `action`: its hidden fields
    /// (the token among them), with `fields` filled in over them.
    pub(crate) fn submit(
        &mut self,
        page: &Page,
        action: &str,
        fields: &[(&str, &str)],
    ) -> Result<Page, Unanswered> {
        let hidden = hidden_fields(page, action);
        let form = filled_in(&hidden, fields);
        self.post(action, &form)
    }

    fn send(&mut self, mut request: ureq::Request, body: Sent) -> Result<Page, Unanswered> {
        if let Some(address) = &self.forwarded_for {
            request = request.set("X-Forwarded-For", address);
        }
        if !self.cookies.is_empty() {
            let cookies: Vec<String> = self
                .cookies
                .iter()
                .map(|(name, value)| format!("{name}={value}"))
                .collect();
            request = request.set("Cookie", &cookies.join("; "));
        }
        let sent = match body {
            Sent::Form(form) => request.send_form(form),
            Sent::Bytes(bytes) => request.send_bytes(bytes),
            Sent::Nothing => request.call(),
        };
        let response = match sent {
            Ok(response) | Err(ureq::Error::Status(_, response)) => response,
            Err(ureq::Error::Transport(failed)) => {
                return Err(Unanswered {
                    sent: failed.kind() != ureq::ErrorKind::ConnectionFailed,
                    why: failed.to_string(),
                })
            }
        };
        let page = read_page(response)?;
        self.keep_cookies(&page);
        Ok(page)
    }

    fn keep_cookies(&mut self, page: &Page) {
        for (name, value) in page.cookies_set() {
            match value {
                Some(value) => self.cookies.insert(name, value),
                None => self.cookies.remove(&name),
            };
        }
    }

    /// Signs `handle` up; the browser is then logged in, for good: sessions
    /// are stored, so the cookie outlives the server process.
    pub(crate) fn sign_up(&mut self, handle: &str) -> Result<(), String> {
        let form = self.get("/signup").map_err(|e| e.why)?;
        let fields = [("handle", handle), ("name", handle), ("password", PASSWORD)];
        let done = self.submit(&form, "/signup", &fields).map_err(|e| e.why)?;
        if done.status != 303 || !self.has_cookie("forkful_session") {
            return Err(format!(
                "signing {handle} up: {} {:?}\n{}",
                done.status,
                done.header("set-cookie"),
                done.body
            ));
        }
        Ok(())
    }

    /// Sends `write`: the form's page first (for its token, and the version
    /// an edit is based on or a fork forks), then the form. The attempt
    /// says what was sent and is what a 303 acknowledges.
    pub(crate) fn write(&mut self, write: Write) -> Result<(Attempt, Outcome), Unanswered> {
        let (page, action) = match &write.kind {
            WriteKind::Create => (self.get("/recipes/new")?, "/recipes/new".to_owned()),
            WriteKind::Edit => {
                let path = format!("/recipes/{}/edit", write.slug);
                (self.get(&path)?, path)
            }
            WriteKind::Fork { parent } => {
                let path = format!("/recipes/{parent}/fork");
                (self.get(&path)?, path)
            }
        };
        if page.status != 200 {
            let outcome = Outcome::Answered(page.status, format!("the form: {}", page.body));
            return Ok((write.attempt(0, None), outcome));
        }
        let hidden = |name: &str| -> u32 {
            let css = format!("form[action=\"{action}\"] input[name=\"{name}\"]");
            let value = page.attrs(&css, "value").into_iter().next();
            value
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("the form's {name} field:\n{}", page.body))
        };
        let (version, forked) = match &write.kind {
            WriteKind::Create => (1, None),
            WriteKind::Edit => (hidden("based_on") + 1, None),
            WriteKind::Fork { parent } => (1, Some((parent.clone(), hidden("version")))),
        };
        let attempt = write.attempt(version, forked);
        let draft = attempt.draft().expect("a form's write sends a draft");
        let servings = draft.servings.to_string();
        let ingredients = draft.ingredients.join("\n");
        let mut fields = vec![
            ("title", draft.title.as_str()),
            ("summary", draft.summary.as_str()),
            ("servings", servings.as_str()),
            ("ingredients", ingredients.as_str()),
            ("steps", draft.steps.as_str()),
            ("tags", "soak, crash"),
            ("note", draft.note.as_str()),
        ];
        if !matches!(write.kind, WriteKind::Edit) {
            fields.push(("slug", attempt.slug.as_str()));
        }
        let outcome = match self.submit(&page, &action, &fields) {
            Ok(done) => {
                let to = format!("/recipes/{}", attempt.slug);
                if done.status == 303 && done.header("location") == Some(to.as_str()) {
                    Outcome::Saved
                } else {
                    let location = done.header("location").unwrap_or("").to_owned();
                    Outcome::Answered(done.status, format!("{location} {}", done.body))
                }
            }
            Err(unanswered) => Outcome::Unanswered(unanswered),
        };
        Ok((attempt, outcome))
    }
}

/// `forkful export` of the stopped server's store at `dir`: the file it
/// writes beside it, read back (a line per datom, pictures included).
pub(crate) fn export_of(dir: &Path) -> String {
    let file = dir.with_extension("edn");
    let out = Command::new(server_binary())
        .args(["export", "--data"])
        .arg(dir)
        .arg(&file)
        .output()
        .expect("forkful export runs");
    assert!(
        out.status.success(),
        "exporting {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(&file).expect("the export's file")
}

/// What a request sends after its head.
enum Sent<'a> {
    Nothing,
    Form(&'a [(&'a str, &'a str)]),
    Bytes(&'a [u8]),
}

fn agent() -> ureq::Agent {
    ureq::AgentBuilder::new()
        .redirects(0)
        .timeout(REQUEST_TIMEOUT)
        .build()
}

/// A response read whole, its body decoded if it came compressed (`raw`
/// keeps it as sent).
fn read_page(response: ureq::Response) -> Result<Page, Unanswered> {
    let status = response.status();
    let mut headers = HeaderMap::new();
    for name in response.headers_names() {
        for value in response.all(&name) {
            headers.append(
                HeaderName::from_bytes(name.as_bytes()).expect("a header name"),
                HeaderValue::from_str(value).expect("a header value"),
            );
        }
    }
    let mut raw = Vec::new();
    response
        .into_reader()
        .take(64 << 20)
        .read_to_end(&mut raw)
        .map_err(|e| Unanswered {
            sent: true,
            why: format!("reading the body: {e}"),
        })?;
    let coding = headers
        .get("content-encoding")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("identity");
    let mut decoded = Vec::new();
    let read = match coding {
        "identity" => {
            decoded.clone_from(&raw);
            Ok(0)
        }
        "gzip" => flate2::read::GzDecoder::new(raw.as_slice()).read_to_end(&mut decoded),
        "br" => brotli::Decompressor::new(raw.as_slice(), 4096).read_to_end(&mut decoded),
        other => panic!("a body in a coding that was not asked for: {other}"),
    };
    read.unwrap_or_else(|e| panic!("a {coding} body that does not decode: {e}"));
    let body = String::from_utf8(decoded)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    Ok(Page {
        status,
        headers,
        body,
        raw,
    })
}

/// What a cook writes into one version.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Draft {
    pub title: String,
    /// Holds the recipe's search word, so every version of it is found.
    pub summary: String,
    pub servings: i64,
    pub ingredients: Vec<String>,
    pub steps: String,
    pub note: String,
}

impl Draft {
    /// The draft as the domain takes it: what the form sends, read.
    pub(crate) fn content(&self) -> ContentDraft {
        ContentDraft {
            title: self.title.clone(),
            summary: Some(self.summary.clone()),
            recipe_yield: Yield {
                servings: Some(self.servings),
                text: None,
            },
            ingredients: self.ingredients.clone(),
            steps: self
                .steps
                .split("\n\n")
                .map(|text| Step {
                    section: None,
                    text: text.to_owned(),
                })
                .collect(),
            ..ContentDraft::default()
        }
    }
}

/// A write a cook is about to send.
#[derive(Debug, Clone)]
pub(crate) struct Write {
    pub kind: WriteKind,
    /// The recipe written: the new one's for a create or fork.
    pub slug: String,
    pub author: String,
    /// A word no other recipe of the store holds, kept in every version.
    pub word: String,
    /// Makes the write's text its own: no two writes send the same.
    pub serial: u64,
}

#[derive(Debug, Clone)]
pub(crate) enum WriteKind {
    Create,
    Edit,
    Fork { parent: String },
}

impl Write {
    /// The write as sent when it makes `version`, forking `parent` if given.
    pub(crate) fn attempt(&self, version: u32, parent: Option<(String, u32)>) -> Attempt {
        let serial = self.serial;
        let what = match self.kind {
            WriteKind::Create => "created",
            WriteKind::Edit => "edited",
            WriteKind::Fork { .. } => "forked",
        };
        Attempt {
            slug: self.slug.clone(),
            author: self.author.clone(),
            word: self.word.clone(),
            parent,
            version,
            written: Written::Draft(Draft {
                title: format!("Dish {} take {serial}", self.slug),
                summary: format!("{} {what} as write {serial}.", self.word),
                servings: (serial % 12 + 1) as i64,
                ingredients: vec![
                    "1 cup red lentils".to_owned(),
                    format!("{} cups water", serial % 9 + 2),
                    format!("{} g salt", serial % 17 + 1),
                ],
                steps: format!("Rinse the lentils.\n\nSimmer for {serial} seconds."),
                note: format!("write {serial}"),
            }),
        }
    }
}

/// What one version holds, as the ledger knows it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Written {
    /// What a cook's form sent: the version holds exactly this.
    Draft(Draft),
    /// The recipe's author accepting its suggestion of this number: the
    /// version holds the store's merge, and the suggestion says it was
    /// accepted in this version (the merge itself is `merge_cases`'s to
    /// check; the ledger checks that the accept made this version once).
    Took(u32),
}

/// A write as sent: the recipe, the version it makes, what it holds.
#[derive(Debug, Clone)]
pub(crate) struct Attempt {
    pub slug: String,
    pub author: String,
    pub word: String,
    /// For a fork: the parent and the version of it forked.
    pub parent: Option<(String, u32)>,
    /// The version the write makes: 1 for a create or fork, the edited
    /// version's number and one for an edit or an accept.
    pub version: u32,
    pub written: Written,
}

impl Attempt {
    /// What the write's form sent; `None` for an accept.
    pub(crate) fn draft(&self) -> Option<&Draft> {
        match &self.written {
            Written::Draft(draft) => Some(draft),
            Written::Took(_) => None,
        }
    }
}

/// What came of a write.
#[derive(Debug, Clone)]
pub(crate) enum Outcome {
    /// A 303 to the recipe's page: saved, and acknowledged.
    Saved,
    /// Any other answer: not what these tests send writes to get.
    Answered(u16, String),
    /// No answer: the write may or may not be in the store if it was sent.
    Unanswered(Unanswered),
}

/// One recipe as the ledger knows it.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub author: String,
    pub word: String,
    pub parent: Option<(String, u32)>,
    /// Each version known to be saved (acknowledged, or found in the store
    /// after a write in flight), by number.
    pub versions: BTreeMap<u32, Written>,
}

impl Entry {
    /// The newest version known.
    pub(crate) fn newest(&self) -> u32 {
        self.versions.keys().next_back().copied().unwrap_or(0)
    }

    /// The newest version's title, where a form wrote it (a merge's is
    /// the store's).
    pub(crate) fn title(&self) -> &str {
        match self.versions.values().next_back() {
            Some(Written::Draft(draft)) => &draft.title,
            _ => "",
        }
    }
}

/// A suggestion known to be made: from which fork, by whom, saying what.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Suggested {
    /// The recipe it was made to: the fork's parent.
    pub parent: String,
    pub fork: String,
    pub by: String,
    /// Every suggestion's message is its own, so that one sent and never
    /// answered is told from another.
    pub message: String,
    /// Whether its decline was acknowledged. (Its accept is a version of
    /// the parent: `Written::Took`.)
    pub declined: bool,
}

/// Every write known to be saved, by recipe, and every suggestion known
/// made, by the recipe it was made to and its number.
#[derive(Debug, Default, Clone)]
pub(crate) struct Ledger {
    pub recipes: BTreeMap<String, Entry>,
    pub suggestions: BTreeMap<(String, u32), Suggested>,
}

/// What a check of a store against the ledger found.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Checked {
    /// Versions compared with what was written.
    pub versions: usize,
    /// Writes in flight found in the store (and now in the ledger).
    pub adopted: usize,
}

impl Ledger {
    /// Records a saved write.
    pub(crate) fn saved(&mut self, attempt: &Attempt) {
        let entry = self
            .recipes
            .entry(attempt.slug.clone())
            .or_insert_with(|| Entry {
                author: attempt.author.clone(),
                word: attempt.word.clone(),
                parent: attempt.parent.clone(),
                versions: BTreeMap::new(),
            });
        entry
            .versions
            .insert(attempt.version, attempt.written.clone());
    }

    /// The suggestions known made to recipes of `author`'s and neither
    /// accepted nor declined as far as the ledger knows.
    pub(crate) fn open_suggestions_to(&self, author: &str) -> Vec<(String, u32)> {
        let taken = |parent: &str, number: u32| {
            self.recipes
                .get(parent)
                .is_some_and(|e| e.versions.values().any(|w| *w == Written::Took(number)))
        };
        self.suggestions
            .iter()
            .filter(|((parent, number), s)| {
                !s.declined
                    && !taken(parent, *number)
                    && self.recipes.get(parent).is_some_and(|e| e.author == author)
            })
            .map(|(key, _)| key.clone())
            .collect()
    }

    /// The lineage the ledger expects of `slug`: parent first, each with
    /// the version of it that was forked.
    pub(crate) fn lineage(&self, slug: &str) -> Vec<(String, u32)> {
        let mut out = Vec::new();
        let mut at = slug;
        while let Some((parent, version)) = self.recipes.get(at).and_then(|e| e.parent.as_ref()) {
            out.push((parent.clone(), *version));
            at = parent;
        }
        out
    }

    /// Checks the store `view` reads against the ledger, after adopting the
    /// writes of `in_flight` (sent, never answered) that the store holds:
    ///
    /// - every recipe the ledger knows is there, with exactly as many
    ///   versions as the ledger knows (a version more would be a write
    ///   nobody sent), history and version count agreeing;
    /// - every version known reads back with what was written: title,
    ///   summary, servings, ingredients, note and author;
    /// - each fork's lineage walks back, version by version, to its
    ///   original as the ledger has it;
    /// - each recipe's search word finds it, and only it;
    /// - the catalog lists every recipe the ledger knows, and no other.
    pub(crate) fn check(
        &mut self,
        view: &Snapshot,
        in_flight: &[Attempt],
    ) -> Result<Checked, String> {
        let mut checked = Checked::default();
        // Writes in flight for one version of one recipe (a cook's form
        // sent, unanswered, and another made for the same version after):
        // at most one of them is saved, and it may be any. In order of
        // recipe and version, so that an edit is adopted after the
        // version it was based on.
        let mut by_version: BTreeMap<(&str, u32), Vec<&Attempt>> = BTreeMap::new();
        for attempt in in_flight {
            by_version
                .entry((attempt.slug.as_str(), attempt.version))
                .or_default()
                .push(attempt);
        }
        for candidates in by_version.values() {
            let mut refused = None;
            for attempt in candidates {
                match self.adopt(view, attempt) {
                    Ok(adopted) => {
                        checked.adopted += usize::from(adopted);
                        refused = None;
                        break;
                    }
                    Err(why) => refused = Some(why),
                }
            }
            if let Some(why) = refused {
                return Err(why);
            }
        }
        for (slug, entry) in &self.recipes {
            checked.versions += self.check_recipe(view, slug, entry)?;
        }
        let mut listed = 0;
        let mut after = None;
        loop {
            let page = view
                .catalog(&CatalogQuery {
                    after,
                    limit: 500,
                    ..CatalogQuery::default()
                })
                .map_err(|e| format!("reading the catalog: {e}"))?;
            for entry in &page.entries {
                if !self.recipes.contains_key(&*entry.slug) {
                    return Err(format!(
                        "{} is in the store, but nobody wrote it",
                        entry.slug
                    ));
                }
            }
            listed += page.entries.len();
            match page.next {
                Some(next) => after = Some(next),
                None => break,
            }
        }
        if listed != self.recipes.len() {
            return Err(format!(
                "the catalog lists {listed} recipes, the ledger knows {}",
                self.recipes.len()
            ));
        }
        Ok(checked)
    }

    /// Checks the suggestions `view` holds against the ledger, after
    /// `check` (which adopts the accepts whose answer was lost), adopting
    /// the suggestions and declines in flight that the store holds:
    ///
    /// - every suggestion known is there once, from its fork, by its cook,
    ///   with its message, and no suggestion is there that nobody sent;
    /// - each is accepted in the version the ledger knows took it (and in
    ///   no other), declined if its decline was acknowledged or was in
    ///   flight, and open otherwise.
    ///
    /// Returns how many suggestions it compared.
    pub(crate) fn check_suggestions(
        &mut self,
        view: &Snapshot,
        suggests_in_flight: &[Suggested],
        declines_in_flight: &[(String, u32)],
    ) -> Result<usize, String> {
        let mut compared = 0;
        let slugs: Vec<String> = self.recipes.keys().cloned().collect();
        for slug in slugs {
            let id = find(view, &slug)?.ok_or_else(|| format!("{slug} is missing"))?;
            let stored = view
                .suggestions_to(id)
                .map_err(|e| format!("{slug}'s suggestions: {e}"))?;
            for suggestion in &stored {
                let key = (slug.clone(), suggestion.number);
                let found = Suggested {
                    parent: slug.clone(),
                    fork: view
                        .slug_of(suggestion.from)
                        .map_err(|e| format!("a suggestion's fork: {e}"))?,
                    by: suggestion.by.clone().unwrap_or_default(),
                    message: suggestion.message.clone(),
                    declined: false,
                };
                match self.suggestions.get(&key) {
                    Some(known) if Suggested { declined: false, ..known.clone() } == found => {}
                    Some(known) => {
                        return Err(format!(
                            "suggestion {} to {slug} holds {found:?}, but {known:?} was acknowledged",
                            suggestion.number
                        ))
                    }
                    None if suggests_in_flight.contains(&found) => {
                        self.suggestions.insert(key.clone(), found);
                    }
                    None => {
                        return Err(format!(
                            "suggestion {} to {slug} ({found:?}) is in the store, but nobody's suggest known made it",
                            suggestion.number
                        ))
                    }
                }
                let took = self.recipes[&slug]
                    .versions
                    .iter()
                    .find(|(_, w)| **w == Written::Took(suggestion.number))
                    .map(|(v, _)| *v);
                let declined = self.suggestions[&key].declined;
                let state = suggestion.state;
                let as_known = match (took, state) {
                    (Some(v), SuggestionState::Accepted) => {
                        suggestion.accepted_in.map(|n| n.get()) == Some(v)
                    }
                    (None, SuggestionState::Declined) if declined => true,
                    (None, SuggestionState::Declined) if declines_in_flight.contains(&key) => {
                        if let Some(known) = self.suggestions.get_mut(&key) {
                            known.declined = true;
                        }
                        true
                    }
                    (None, SuggestionState::Open) => !declined,
                    _ => false,
                };
                if !as_known {
                    return Err(format!(
                        "suggestion {} to {slug} is {} (accepted in {:?}), but the ledger knows it \
                         taken in {took:?}, declined {declined}",
                        suggestion.number,
                        state.as_str(),
                        suggestion.accepted_in.map(|n| n.get())
                    ));
                }
                compared += 1;
            }
            let known = self.suggestions.keys().filter(|(p, _)| *p == slug).count();
            if known != stored.len() {
                return Err(format!(
                    "{slug} holds {} suggestions; {known} were made",
                    stored.len()
                ));
            }
        }
        // Suggestions to recipes the ledger does not know.
        if let Some(((parent, number), _)) = self
            .suggestions
            .iter()
            .find(|((parent, _), _)| !self.recipes.contains_key(parent))
        {
            return Err(format!(
                "suggestion {number} to {parent} was made to a recipe nobody wrote"
            ));
        }
        Ok(compared)
    }

    /// Adds `attempt` to the ledger if the store holds it; an unknown
    /// version in its place is an error.
    fn adopt(&mut self, view: &Snapshot, attempt: &Attempt) -> Result<bool, String> {
        let known = self
            .recipes
            .get(&attempt.slug)
            .is_some_and(|e| e.versions.contains_key(&attempt.version));
        if known {
            return Err(format!(
                "{} version {} was acknowledged to one write and sent by another",
                attempt.slug, attempt.version
            ));
        }
        let Some(id) = find(view, &attempt.slug)? else {
            return Ok(false);
        };
        let versions = view
            .versions(id)
            .map_err(|e| format!("{}'s versions: {e}", attempt.slug))?;
        let Some(version) = versions.get(attempt.version as usize - 1) else {
            return Ok(false);
        };
        if version.author.as_deref() != Some(&attempt.author) {
            return Err(format!(
                "{} version {} is by {:?}, neither acknowledged nor the write in flight by {}",
                attempt.slug, attempt.version, version.author, attempt.author
            ));
        }
        match &attempt.written {
            Written::Draft(draft) => {
                let content = view
                    .content_at(id, version.basis)
                    .map_err(|e| format!("{} version {}: {e}", attempt.slug, attempt.version))?;
                let found = found_draft(&content, version.note.as_deref());
                if found != *draft {
                    return Err(format!(
                        "{} version {} is neither acknowledged nor the write in flight: {found:?}, \
                         while {draft:?} was in flight",
                        attempt.slug, attempt.version
                    ));
                }
            }
            Written::Took(number) => {
                took_in(view, id, &attempt.slug, *number, attempt.version)?;
            }
        }
        self.saved(attempt);
        Ok(true)
    }

    /// Checks one recipe; returns how many versions it compared.
    fn check_recipe(&self, view: &Snapshot, slug: &str, entry: &Entry) -> Result<usize, String> {
        let id = find(view, slug)?.ok_or_else(|| format!("{slug} was saved but is missing"))?;
        let recipe = view
            .recipe_by_id(id)
            .map_err(|e| format!("reading {slug}: {e}"))?;
        let versions = view
            .versions(id)
            .map_err(|e| format!("{slug}'s versions: {e}"))?;
        if recipe.version_count as usize != versions.len() {
            return Err(format!(
                "{slug} counts {} versions, its history has {}",
                recipe.version_count,
                versions.len()
            ));
        }
        if recipe.version_count != entry.newest() {
            return Err(format!(
                "{slug} has {} versions; {} were saved",
                recipe.version_count,
                entry.newest()
            ));
        }
        // Every version is a write somebody sent: none the ledger does
        // not know between the ones it does.
        if let Some(unknown) = (1..=entry.newest()).find(|n| !entry.versions.contains_key(n)) {
            return Err(format!(
                "{slug} version {unknown} is in the store, but no write known made it"
            ));
        }
        for (&number, written) in &entry.versions {
            let version = &versions[number as usize - 1];
            match written {
                Written::Draft(draft) => {
                    let content = view
                        .content_at(id, version.basis)
                        .map_err(|e| format!("{slug} version {number}: {e}"))?;
                    let found = found_draft(&content, version.note.as_deref());
                    if &found != draft {
                        return Err(format!(
                            "{slug} version {number} holds {found:?}, but {draft:?} was saved"
                        ));
                    }
                }
                Written::Took(suggestion) => took_in(view, id, slug, *suggestion, number)?,
            }
            if version.author.as_deref() != Some(&entry.author) {
                return Err(format!(
                    "{slug} version {number} is by {:?}, not {}",
                    version.author, entry.author
                ));
            }
        }
        let lineage = view
            .lineage(id)
            .map_err(|e| format!("{slug}'s lineage: {e}"))?;
        let walked = lineage
            .iter()
            .map(|a| {
                let slug = view
                    .slug_of(a.id)
                    .map_err(|e| format!("an ancestor: {e}"))?;
                Ok((slug, a.forked_version.get()))
            })
            .collect::<Result<Vec<_>, String>>()?;
        if walked != self.lineage(slug) {
            return Err(format!(
                "{slug}'s lineage walks {walked:?}, but it was forked along {:?}",
                self.lineage(slug)
            ));
        }
        // Search is the index's, beside the store: checked on the server.
        Ok(entry.versions.len())
    }

    /// Checks what the server shows of `slug` against the ledger: its JSON
    /// (title, version count, parent), its history page (newest first, a
    /// page of them), its lineage page and a search for its word.
    pub(crate) fn check_served(&self, browser: &mut Browser, slug: &str) -> Result<(), String> {
        let entry = self
            .recipes
            .get(slug)
            .ok_or_else(|| format!("the ledger has no {slug}"))?;
        let mut get = |path: &str| -> Result<Page, String> {
            let page = browser
                .get(path)
                .map_err(|e| format!("GET {path}: {}", e.why))?;
            if page.status != 200 {
                return Err(format!("GET {path}: {}\n{}", page.status, page.body));
            }
            Ok(page)
        };
        let json: serde_json::Value =
            serde_json::from_str(&get(&format!("/recipes/{slug}.json"))?.body)
                .map_err(|e| format!("{slug}.json: {e}"))?;
        let parent = json["forked_from"].as_object().map(|p| {
            (
                p["slug"].as_str().unwrap_or("").to_owned(),
                p["version"].as_u64().unwrap_or(0) as u32,
            )
        });
        let shown = (
            json["title"].as_str().unwrap_or(""),
            json["versions"].as_u64().unwrap_or(0) as u32,
            parent,
        );
        if shown != (entry.title(), entry.newest(), entry.parent.clone()) {
            return Err(format!(
                "{slug}.json shows {shown:?}, the ledger {:?}",
                (entry.title(), entry.newest(), &entry.parent)
            ));
        }
        let history = get(&format!("/recipes/{slug}/history"))?;
        let listed = history.texts("ol.versions > li h2");
        let expected: Vec<String> = (1..=entry.newest())
            .rev()
            .take(HISTORY_PAGE)
            .map(|n| format!("Version {n}"))
            .collect();
        if listed != expected {
            return Err(format!("{slug}'s history lists {listed:?}"));
        }
        let lineage = get(&format!("/recipes/{slug}/lineage"))?;
        let mut walked = lineage.attrs("ol.lineage-list li a", "href");
        let mut expected: Vec<String> = self
            .lineage(slug)
            .iter()
            .rev()
            .map(|(parent, version)| format!("/recipes/{parent}/versions/{version}"))
            .collect();
        if !expected.is_empty() {
            expected.push(format!("/recipes/{slug}"));
        }
        walked.retain(|href| href.starts_with("/recipes/"));
        if walked != expected {
            return Err(format!(
                "{slug}'s lineage page walks {walked:?}, not {expected:?}"
            ));
        }
        let search = get(&format!("/search?q={}", entry.word))?;
        let found = search.attrs("main h2 a", "href");
        if found != [format!("/recipes/{slug}")] {
            return Err(format!(
                "searching {} on the site finds {found:?}",
                entry.word
            ));
        }
        Ok(())
    }
}

/// Checks that suggestion `number` to the recipe `id` (at `slug`) was
/// accepted in its version `version`.
fn took_in(
    view: &Snapshot,
    id: RecipeId,
    slug: &str,
    number: u32,
    version: u32,
) -> Result<(), String> {
    let suggestion = view
        .suggestion(id, number)
        .map_err(|e| format!("{slug}'s suggestion {number}: {e}"))?
        .ok_or_else(|| {
            format!("{slug} version {version} took suggestion {number}, which is missing")
        })?;
    let accepted_in = suggestion.accepted_in.map(|v| v.get());
    if suggestion.state != SuggestionState::Accepted || accepted_in != Some(version) {
        return Err(format!(
            "{slug} version {version} was made accepting suggestion {number}, which is {} (in {accepted_in:?})",
            suggestion.state.as_str()
        ));
    }
    Ok(())
}

/// The recipe at `slug`, if the store has one.
fn find(view: &Snapshot, slug: &str) -> Result<Option<RecipeId>, String> {
    let parsed = Slug::parse(slug).map_err(|e| format!("{slug}: {e}"))?;
    view.find(&parsed)
        .map_err(|e| format!("finding {slug}: {e}"))
}

/// What a version holds, in the shape it was written in.
fn found_draft(content: &forkful::domain::Content, note: Option<&str>) -> Draft {
    Draft {
        title: content.title().to_owned(),
        summary: content.summary().map(str::to_owned).unwrap_or_default(),
        servings: content.recipe_yield().servings.unwrap_or(0),
        ingredients: content.ingredients().to_vec(),
        steps: forkful::views::recipe_form::steps_text(content.steps()),
        note: note.unwrap_or_default().to_owned(),
    }
}

/// A small xorshift generator, deterministic for a seed.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 8) % n.max(1)
    }
}

/// A cook, across the rounds of one store.
pub(crate) struct Cook {
    pub handle: String,
    pub browser: Browser,
    /// The number of the cook's next new recipe; it only grows, so that a
    /// slug sent in a write that may have been saved is never sent again.
    next: u64,
    /// The cook's writes so far, to make each write's text its own.
    serial: u64,
    /// The letter in the cook's recipes' search words.
    letter: char,
}

impl Cook {
    pub(crate) fn sign_up(handle: &str, letter: char, origin: &str) -> Result<Cook, String> {
        let mut browser = Browser::new(origin);
        browser.sign_up(handle)?;
        Ok(Cook {
            handle: handle.to_owned(),
            browser,
            next: 0,
            serial: 0,
            letter,
        })
    }

    /// The next write, chosen at random: a new recipe (always the first),
    /// an edit of one of the cook's own, or a fork of anyone's.
    pub(crate) fn next_write(&mut self, ledger: &Mutex<Ledger>, rng: &mut Rng) -> Write {
        self.serial += 1;
        let (own, any) = {
            let ledger = ledger.lock().expect("the ledger");
            let own: Vec<String> = ledger
                .recipes
                .iter()
                .filter(|(_, e)| e.author == self.handle)
                .map(|(slug, _)| slug.clone())
                .collect();
            let all: Vec<&String> = ledger.recipes.keys().collect();
            let any = (!all.is_empty()).then(|| all[rng.below(all.len() as u64) as usize].clone());
            (own, any)
        };
        let roll = rng.below(8);
        let edit = (!own.is_empty() && roll < 4)
            .then(|| own[rng.below(own.len() as u64) as usize].clone());
        if let Some(slug) = edit {
            let word = self.word_of(&slug, ledger);
            return self.write(WriteKind::Edit, slug, word);
        }
        let kind = match any {
            Some(parent) if roll < 6 => WriteKind::Fork { parent },
            _ => WriteKind::Create,
        };
        self.next += 1;
        let slug = format!("{}-{}", self.handle, self.next);
        // Fixed width, so that no word is the prefix of another (search
        // takes the last word of a query as a prefix).
        let word = format!("uq{}{:07}", self.letter, self.next);
        self.write(kind, slug, word)
    }

    fn word_of(&self, slug: &str, ledger: &Mutex<Ledger>) -> String {
        let ledger = ledger.lock().expect("the ledger");
        ledger.recipes[slug].word.clone()
    }

    /// A number of the cook's own, to seed its thread's generator.
    pub(crate) fn number(&self) -> u64 {
        u64::from(self.letter)
    }

    fn write(&self, kind: WriteKind, slug: String, word: String) -> Write {
        Write {
            kind,
            slug,
            author: self.handle.clone(),
            word,
            serial: self.serial,
        }
    }
}
