//! Fetching another site's page to import, or a picture to keep, safely:
//! `http` and `https`
//! only, on the web's ports (`WEB_PORTS`); never an address on this
//! machine or a private, link-local or otherwise internal network
//! (checked on the addresses the name resolves to, by the resolver every
//! connection goes through, redirects included, so a name that resolves
//! differently the second time gains nothing); at most `MAX_REDIRECTS`
//! redirects, `MAX_PAGE_BYTES` of page (a picture: `MAX_UPLOAD_BYTES`, as
//! one uploaded) and `TIMEOUT` for all of it, name lookups included; at most `MAX_FETCHES` at once per fetcher (the site
//! has one), a place the site can take before it counts the cook's import
//! (`Fetcher::place`). A page that could not be fetched says only that
//! (`FetchError::Unreachable`), never why: a refused connection, one that
//! timed out and an answer that is not HTTP would together tell a cook
//! which ports of a host are open. Tests start the server with private
//! addresses allowed, to fetch from 127.0.0.1 on ports of their own.

use std::io::Read;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, LazyLock};
use std::time::{Duration, Instant};

use crate::domain::pictures::MAX_UPLOAD_BYTES;

/// The most a page may weigh, in bytes.
pub const MAX_PAGE_BYTES: u64 = 5 * 1024 * 1024;
/// The most redirects followed.
pub const MAX_REDIRECTS: usize = 5;
/// How long a fetch may take, connecting and reading included.
const TIMEOUT: Duration = Duration::from_secs(10);
/// The ports a fetch may go to, unless private addresses are allowed:
/// the web's, `http`'s and `https`'s own. A page is served there; any
/// other port would make the server a way to reach services that are not
/// web pages.
pub(super) const WEB_PORTS: [u16; 2] = [80, 443];

/// Why a page or a picture could not be fetched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error("{0:?} is not a web address")]
    BadUrl(String),
    #[error("only http and https addresses can be fetched, not {0}")]
    NotWeb(String),
    #[error("{0} is an address on a private or local network, which this site does not fetch")]
    Private(String),
    /// A port other than `WEB_PORTS`, refused before any connection.
    #[error("only addresses on the web's ports (80 and 443) can be fetched, not port {0}")]
    Port(u16),
    #[error("{0} could not be found")]
    NoSuchHost(String),
    #[error("the address redirects more than {MAX_REDIRECTS} times")]
    TooManyRedirects,
    #[error("the page is larger than {} MiB", MAX_PAGE_BYTES / (1024 * 1024))]
    TooLarge,
    #[error("the site answered {0}")]
    Status(u16),
    #[error("the address is not a web page (it is {0})")]
    NotHtml(String),
    #[error("the document is larger than {} MiB", MAX_DOCUMENT_BYTES / (1024 * 1024))]
    DocumentTooLarge,
    /// An answer to a fetch of an ActivityStreams document that is not JSON.
    #[error("the address is not an ActivityStreams document (it is {0})")]
    NotDocument(String),
    #[error("the picture is larger than {} MiB", MAX_UPLOAD_BYTES / (1024 * 1024))]
    PictureTooLarge,
    /// An answer whose type is not `image/*`; its bytes are not read.
    #[error("the address is not a picture (it is {0})")]
    NotPicture(String),
    /// No answer from the host: whatever went wrong (a refused or broken
    /// connection, TLS, a deadline, an answer that is not HTTP), the
    /// message names only the host.
    #[error("could not fetch {0}")]
    Unreachable(String),
    #[error("the site is looking up too many names at once: try again in a moment")]
    TooManyLookups,
    #[error("the site is fetching as many pages as it may at once: try again in a moment")]
    Busy,
}

/// Fetches pages; see the module's documentation. Its clones share its
/// places.
#[derive(Debug, Clone)]
pub struct Fetcher {
    allow: Allow,
    /// Fetches running now, at most `MAX_FETCHES`.
    fetching: Arc<AtomicUsize>,
}

/// A place for one fetch, given back when dropped.
pub struct FetchPlace {
    _held: Place,
}

/// Which addresses a fetcher connects to besides public ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Allow {
    PublicOnly,
    Private,
    /// Public ones and this one: a test's server, to show that a redirect
    /// from it to another private address is refused.
    Also(SocketAddr),
}

impl Allow {
    fn admits(self, addr: &SocketAddr) -> bool {
        match self {
            Allow::PublicOnly => is_public(addr.ip()),
            Allow::Private => true,
            Allow::Also(one) => is_public(addr.ip()) || *addr == one,
        }
    }

    /// Whether an address's port may be fetched: any, where private
    /// addresses are (a site's own network, a test's server), else the
    /// web's (and `one`'s, for a test's server allowed alone).
    fn admits_port(self, port: u16) -> bool {
        match self {
            Allow::PublicOnly => WEB_PORTS.contains(&port),
            Allow::Private => true,
            Allow::Also(one) => WEB_PORTS.contains(&port) || port == one.port(),
        }
    }
}

impl Fetcher {
    /// A fetcher that refuses private addresses: the one to serve with.
    pub fn public_only() -> Fetcher {
        Fetcher::new(Allow::PublicOnly)
    }

    fn new(allow: Allow) -> Fetcher {
        Fetcher {
            allow,
            fetching: Arc::default(),
        }
    }

    /// A fetcher that refuses private addresses but `one`: for tests.
    pub fn public_and(one: SocketAddr) -> Fetcher {
        Fetcher::new(Allow::Also(one))
    }

    /// A fetcher that also fetches from this machine and private networks:
    /// for tests, and for a site that imports from its own network.
    pub fn allowing_private() -> Fetcher {
        Fetcher::new(Allow::Private)
    }

    /// Whether `address` is one this fetcher would try: an `http` or
    /// `https` address on a port it fetches from (where it leads is
    /// checked as it is fetched).
    pub fn check(&self, address: &str) -> Result<(), FetchError> {
        checked_url(address, self.allow).map(drop)
    }

    /// A place for one fetch, if fewer than `MAX_FETCHES` are running.
    pub fn place(&self) -> Result<FetchPlace, FetchError> {
        Place::take(&self.fetching, MAX_FETCHES)
            .map(|held| FetchPlace { _held: held })
            .ok_or(FetchError::Busy)
    }

    /// The page at `address`: where it ended up after redirects, and its
    /// text.
    pub fn fetch(&self, address: &str) -> Result<(String, String), FetchError> {
        let place = self.place()?;
        self.fetch_in(place, address)
    }

    /// `fetch`, in a place taken already.
    pub fn fetch_in(
        &self,
        _place: FetchPlace,
        address: &str,
    ) -> Result<(String, String), FetchError> {
        // One deadline for the whole fetch, redirects and name lookups
        // included.
        let (at, body) = self.fetch_by(address, Wanted::Page, Instant::now() + TIMEOUT)?;
        Ok((at, String::from_utf8_lossy(&body).into_owned()))
    }

    /// `fetch_picture_in`, in a place of its own.
    pub fn fetch_picture(&self, address: &str) -> Result<Vec<u8>, FetchError> {
        let place = self.place()?;
        self.fetch_picture_in(place, address)
    }

    /// The picture at `address`, its bytes as they came (an `image/*`
    /// answer of at most `MAX_UPLOAD_BYTES`; whether they are a picture
    /// is for `domain::pictures` to say), fetched in a place taken
    /// already, with every check a page's fetch has.
    pub fn fetch_picture_in(
        &self,
        _place: FetchPlace,
        address: &str,
    ) -> Result<Vec<u8>, FetchError> {
        let (_, body) = self.fetch_by(address, Wanted::Picture, Instant::now() + TIMEOUT)?;
        Ok(body)
    }

    /// Whether this fetcher fetches from this machine and private networks.
    pub fn allows_private(&self) -> bool {
        self.allow == Allow::Private
    }

    /// A fetcher with the same rules and places of its own: federation's
    /// fetches and deliveries do not take the places of cooks' imports.
    pub fn apart(&self) -> Fetcher {
        Fetcher::new(self.allow)
    }

    /// The ActivityStreams document at `address` (JSON, at most
    /// `MAX_DOCUMENT_BYTES`), asked for with its media type and signed by
    /// `sign` (given the address, redirects' included), with every check
    /// a page's fetch has: where it ended up after redirects, and its text.
    pub fn fetch_document(
        &self,
        address: &str,
        sign: &dyn SignRequest,
    ) -> Result<(String, String), FetchError> {
        let _place = self.place()?;
        let call = Call {
            method: "GET",
            accept: ACTIVITY_ACCEPT,
            body: None,
            sign,
        };
        let (at, body) =
            self.send_by(address, Wanted::Document, &call, Instant::now() + TIMEOUT)?;
        Ok((at, String::from_utf8_lossy(&body).into_owned()))
    }

    /// POSTs the activity `body` to the inbox at `address`, signed by
    /// `sign`, with every check a fetch has; redirects are not followed (a
    /// signed delivery is for the address it names). Ok once the inbox
    /// answered 2xx.
    pub fn post_document(
        &self,
        address: &str,
        body: &[u8],
        sign: &dyn SignRequest,
    ) -> Result<(), FetchError> {
        let _place = self.place()?;
        let call = Call {
            method: "POST",
            accept: ACTIVITY_ACCEPT,
            body: Some(body),
            sign,
        };
        self.send_by(address, Wanted::Answer, &call, Instant::now() + TIMEOUT)
            .map(drop)
    }

    /// What `wanted` is at `address`, fetched by `deadline`: where it ended
    /// up after redirects, and its bytes.
    fn fetch_by(
        &self,
        address: &str,
        wanted: Wanted,
        deadline: Instant,
    ) -> Result<(String, Vec<u8>), FetchError> {
        let unsigned = |_: &url::Url, _: Option<&[u8]>| Vec::new();
        let call = Call {
            method: "GET",
            accept: "*/*",
            body: None,
            sign: &unsigned,
        };
        self.send_by(address, wanted, &call, deadline)
    }

    /// `call` to `address`, for `wanted`, by `deadline`: where it ended up
    /// after redirects (a GET's), and the answer's bytes.
    fn send_by(
        &self,
        address: &str,
        wanted: Wanted,
        call: &Call,
        deadline: Instant,
    ) -> Result<(String, Vec<u8>), FetchError> {
        let allow = self.allow;
        let agent = ureq::AgentBuilder::new()
            .timeout(TIMEOUT)
            .redirects(0)
            .user_agent("forkful-import (+https://github.com/forkful)")
            .resolver(move |netloc: &str| {
                resolve(netloc, allow, deadline, system_lookup).map_err(into_io)
            })
            .build();
        let mut at = checked_url(address, allow)?;
        for _ in 0..=MAX_REDIRECTS {
            let host = at.host_str().unwrap_or_default().to_owned();
            let unreachable = || FetchError::Unreachable(host.clone());
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(unreachable());
            }
            // The check before the request gives a clear message; the
            // resolver's, on the connection itself, is what holds.
            let port = at.port_or_known_default().unwrap_or(80);
            resolve(&format!("{host}:{port}"), allow, deadline, system_lookup)?;
            // What the lookup left of the deadline.
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(unreachable());
            }
            let mut request = agent
                .request_url(call.method, &at)
                .timeout(left)
                .set("accept", call.accept);
            for (name, value) in (call.sign)(&at, call.body) {
                request = request.set(name, &value);
            }
            let sent = match call.body {
                Some(body) => request.set("content-type", ACTIVITY_JSON).send_bytes(body),
                None => request.call(),
            };
            let response = match sent {
                Ok(response) => response,
                Err(ureq::Error::Status(code, _)) => return Err(FetchError::Status(code)),
                Err(ureq::Error::Transport(t)) => return Err(transport(&t, &host)),
            };
            if (300..400).contains(&response.status()) && call.body.is_none() {
                let location = response
                    .header("location")
                    .ok_or(FetchError::Status(response.status()))?;
                let next = at
                    .join(location)
                    .map_err(|_| FetchError::BadUrl(location.to_owned()))?;
                at = checked_url(next.as_str(), allow)?;
                continue;
            }
            if !(200..300).contains(&response.status()) {
                // A delivery redirected, or any other answer that is not
                // success (ureq calls only 4xx and 5xx errors).
                return Err(FetchError::Status(response.status()));
            }
            wanted.check_type(response.content_type())?;
            let mut body = Vec::new();
            response
                .into_reader()
                .take(wanted.max_bytes() + 1)
                .read_to_end(&mut body)
                .map_err(|_| unreachable())?;
            if body.len() as u64 > wanted.max_bytes() {
                return Err(wanted.too_large());
            }
            return Ok((at.to_string(), body));
        }
        Err(FetchError::TooManyRedirects)
    }
}

/// What signs a request: given its address and body, the headers to add
/// (none, for an unsigned fetch).
pub trait SignRequest: Fn(&url::Url, Option<&[u8]>) -> Vec<(&'static str, String)> {}

impl<F: Fn(&url::Url, Option<&[u8]>) -> Vec<(&'static str, String)>> SignRequest for F {}

/// The media type an activity is sent as.
const ACTIVITY_JSON: &str = "application/activity+json";
/// What a fetch of an ActivityStreams document asks for.
const ACTIVITY_ACCEPT: &str =
    "application/activity+json, application/ld+json; profile=\"https://www.w3.org/ns/activitystreams\"";
/// The most an ActivityStreams document may weigh, in bytes: an actor or a
/// recipe is a few kilobytes.
pub const MAX_DOCUMENT_BYTES: u64 = 1024 * 1024;
/// The most of an inbox's answer to a delivery that is read.
const MAX_ANSWER_BYTES: u64 = 64 * 1024;

/// A request a fetch makes: its method, what it accepts, its body, and
/// the headers that sign it for an address.
struct Call<'a> {
    method: &'static str,
    accept: &'static str,
    body: Option<&'a [u8]>,
    sign: &'a dyn SignRequest,
}

/// What a fetch is for, which decides what answer it takes and how large.
#[derive(Debug, Clone, Copy)]
enum Wanted {
    /// A page to import: HTML, at most `MAX_PAGE_BYTES`.
    Page,
    /// A picture to store: `image/*`, at most `MAX_UPLOAD_BYTES`, as an
    /// uploaded one may be.
    Picture,
    /// An ActivityStreams document: JSON, at most `MAX_DOCUMENT_BYTES`.
    Document,
    /// An inbox's answer to a delivery: anything, mostly empty.
    Answer,
}

impl Wanted {
    fn max_bytes(self) -> u64 {
        match self {
            Wanted::Page => MAX_PAGE_BYTES,
            Wanted::Picture => MAX_UPLOAD_BYTES as u64,
            Wanted::Document => MAX_DOCUMENT_BYTES,
            Wanted::Answer => MAX_ANSWER_BYTES,
        }
    }

    fn too_large(self) -> FetchError {
        match self {
            Wanted::Page | Wanted::Answer => FetchError::TooLarge,
            Wanted::Picture => FetchError::PictureTooLarge,
            Wanted::Document => FetchError::DocumentTooLarge,
        }
    }

    /// Whether an answer of type `kind` is what was wanted; its body is
    /// read only if it is.
    fn check_type(self, kind: &str) -> Result<(), FetchError> {
        match self {
            Wanted::Page if kind.contains("html") => Ok(()),
            Wanted::Page => Err(FetchError::NotHtml(kind.to_owned())),
            Wanted::Picture if kind.to_ascii_lowercase().starts_with("image/") => Ok(()),
            Wanted::Picture => Err(FetchError::NotPicture(kind.to_owned())),
            Wanted::Document if kind.contains("json") => Ok(()),
            Wanted::Document => Err(FetchError::NotDocument(kind.to_owned())),
            Wanted::Answer => Ok(()),
        }
    }
}

/// `address` as a URL a fetcher that `allow`s may go to: `http` or
/// `https`, with a host, on a port it fetches from. Every address is
/// checked here before anything is looked up or connected to, the first
/// and each redirect's.
fn checked_url(address: &str, allow: Allow) -> Result<url::Url, FetchError> {
    let url =
        url::Url::parse(address.trim()).map_err(|_| FetchError::BadUrl(address.to_owned()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(FetchError::NotWeb(url.scheme().to_owned()));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(FetchError::BadUrl(address.to_owned()));
    }
    // Both schemes have a default port: `port_or_known_default` is some.
    let port = url.port_or_known_default().unwrap_or(0);
    if !allow.admits_port(port) {
        return Err(FetchError::Port(port));
    }
    Ok(url)
}

/// The most name lookups on threads of their own at once: one given up at
/// the deadline runs on until the system's resolver gives up too.
const MAX_LOOKUPS: usize = 64;
static LOOKUPS: LazyLock<Arc<AtomicUsize>> = LazyLock::new(Arc::default);

/// The most fetches a fetcher runs at once, whoever asks: each cook's
/// imports are limited a minute, but cooks are many.
pub const MAX_FETCHES: usize = 8;

/// One of a fixed number of places, given back when dropped.
struct Place(Arc<AtomicUsize>);

impl Place {
    fn take(taken: &Arc<AtomicUsize>, most: usize) -> Option<Place> {
        if taken.fetch_add(1, Ordering::AcqRel) >= most {
            taken.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        Some(Place(taken.clone()))
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// How a name is looked up: the system's resolver (tests give another).
type Lookup = fn(&str) -> std::io::Result<Vec<SocketAddr>>;

fn system_lookup(netloc: &str) -> std::io::Result<Vec<SocketAddr>> {
    Ok(netloc.to_socket_addrs()?.collect())
}

/// The addresses `netloc` (`host:port`) resolves to, all of them public
/// unless private ones are allowed, looked up by `deadline`.
fn resolve(
    netloc: &str,
    allow: Allow,
    deadline: Instant,
    lookup: Lookup,
) -> Result<Vec<SocketAddr>, FetchError> {
    let host = netloc
        .rsplit_once(':')
        .map_or(netloc, |(host, _)| host)
        .trim_matches(['[', ']']);
    // The system's lookup takes no deadline (glibc's waits out its own
    // timeouts and retries, tens of seconds for a name server that does
    // not answer), so it runs on a thread of its own that is waited for
    // only until the deadline; one left behind ends with its lookup.
    let unreachable = || FetchError::Unreachable(host.to_owned());
    if deadline <= Instant::now() {
        return Err(unreachable());
    }
    let place = Place::take(&LOOKUPS, MAX_LOOKUPS).ok_or(FetchError::TooManyLookups)?;
    let (sender, answer) = mpsc::sync_channel(1);
    let asked = netloc.to_owned();
    std::thread::Builder::new()
        .name("fetch-lookup".into())
        .spawn(move || {
            let _place = place;
            let _ = sender.send(lookup(&asked));
        })
        .map_err(|_| unreachable())?;
    let left = deadline.saturating_duration_since(Instant::now());
    let addrs = match answer.recv_timeout(left) {
        Ok(found) => found.map_err(|_| FetchError::NoSuchHost(host.to_owned()))?,
        Err(_) => return Err(unreachable()),
    };
    if addrs.is_empty() {
        return Err(FetchError::NoSuchHost(host.to_owned()));
    }
    if !addrs.iter().all(|a| allow.admits(a)) {
        return Err(FetchError::Private(host.to_owned()));
    }
    Ok(addrs)
}

fn into_io(error: FetchError) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::PermissionDenied, error.to_string())
}

/// A failed connection as the person is told of it: refused by the
/// resolver for its address, or else only that the host could not be
/// fetched (how it failed is not said; see the module's documentation).
/// The log, which only the site's operator reads, says how.
fn transport(error: &ureq::Transport, host: &str) -> FetchError {
    let text = error.to_string();
    if text.contains("private or local network") {
        FetchError::Private(host.to_owned())
    } else {
        tracing::info!(host, error = %text, "an address could not be fetched");
        FetchError::Unreachable(host.to_owned())
    }
}

/// Whether `ip` is on the public internet: not this machine, a private,
/// shared, link-local, multicast, documentation or reserved network, nor
/// an IPv6 form that carries an IPv4 address to a translator or relay.
pub(super) fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b)) // shared (CGNAT)
                || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
                || (a == 198 && (18..20).contains(&b)) // benchmarking
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            // IPv4-mapped (`::ffff:a.b.c.d`): how a socket names an IPv4
            // peer, and a connection to it goes to that IPv4 address.
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let s = v6.segments();
            // Only global unicast (2000::/3) is the internet's: the rest
            // is refused whole, whatever it carries. That is loopback,
            // unspecified, and the IPv4 forms in ::/8: IPv4-compatible
            // (`::a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`, RFC
            // 6145) and NAT64's prefixes (64:ff9b::/96 and, local,
            // 64:ff9b:1::/48), which a translator, perhaps on this
            // network, turns into the IPv4 address inside; then the
            // discard prefix (100::/64), unique local, link-local,
            // site-local and multicast.
            let global_unicast = (s[0] & 0xe000) == 0x2000;
            // Inside it, whole prefixes that are not a host of their own:
            // Teredo (2001::/32) and 6to4 (2002::/16) hand the IPv4
            // address inside (Teredo's with its bits flipped) to a relay;
            // benchmarking (2001:2::/48) and documentation (2001:db8::/32,
            // 3fff::/20) name nothing.
            global_unicast
                && !(s[0] == 0x2001 && s[1] == 0) // Teredo
                && !(s[0] == 0x2001 && s[1] == 2 && s[2] == 0) // benchmarking
                && !(s[0] == 0x2001 && s[1] == 0xdb8) // documentation
                && s[0] != 0x2002 // 6to4
                && !(s[0] == 0x3fff && s[1] < 0x1000) // documentation
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_lookup_that_outlasts_the_deadline_is_given_up() {
        fn slow(_: &str) -> std::io::Result<Vec<SocketAddr>> {
            std::thread::sleep(Duration::from_secs(1));
            Ok(vec!["93.184.216.34:80".parse().unwrap()])
        }
        fn quick(_: &str) -> std::io::Result<Vec<SocketAddr>> {
            Ok(vec!["93.184.216.34:80".parse().unwrap()])
        }
        let started = Instant::now();
        let deadline = started + Duration::from_millis(100);
        let refused = resolve("slow.example:80", Allow::PublicOnly, deadline, slow);
        assert_eq!(refused, Err(FetchError::Unreachable("slow.example".into())));
        assert!(started.elapsed() < Duration::from_millis(900));
        let later = Instant::now() + Duration::from_secs(5);
        assert_eq!(
            resolve("quick.example:80", Allow::PublicOnly, later, quick),
            Ok(vec!["93.184.216.34:80".parse().unwrap()])
        );
        assert_eq!(
            resolve("quick.example:80", Allow::Private, started, quick),
            Err(FetchError::Unreachable("quick.example".into())),
            "a deadline already past"
        );
    }

    /// Lookups and fetches are capped by `Place`s (a test taking every
    /// lookup place would fail the other tests' lookups meanwhile).
    #[test]
    fn places_are_given_back_when_dropped() {
        let taken = Arc::new(AtomicUsize::new(0));
        let first = Place::take(&taken, 2).unwrap();
        let second = Place::take(&taken, 2).unwrap();
        assert!(Place::take(&taken, 2).is_none());
        drop(first);
        let third = Place::take(&taken, 2).unwrap();
        assert!(Place::take(&taken, 2).is_none());
        drop((second, third));
        assert_eq!(taken.load(Ordering::Acquire), 0);
    }

    #[test]
    fn internal_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "2002:7f00:1::1",
            "2001:0:4136:e378::1",
            "fec0::1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "8.8.8.8", "2606:4700::1111"] {
            assert!(is_public(ip.parse().unwrap()), "{ip}");
        }
    }

    /// Every IPv6 form that carries an IPv4 address: a loopback or
    /// private one inside is refused; so is any inside a form that a
    /// translator or relay turns into its IPv4 address.
    #[test]
    fn ipv4_addresses_inside_ipv6_are_refused_whatever_the_form() {
        for (form, refused) in [
            // IPv4-translated (RFC 2765, 6145): ::ffff:0:a.b.c.d.
            (
                "translated",
                &[
                    "::ffff:0:127.0.0.1",
                    "::ffff:0:10.0.0.1",
                    "::ffff:0:8.8.8.8",
                ][..],
            ),
            // IPv4-mapped: ::ffff:a.b.c.d, judged as the IPv4 address.
            (
                "mapped",
                &[
                    "::ffff:127.0.0.1",
                    "::ffff:192.168.1.1",
                    "::ffff:169.254.169.254",
                ],
            ),
            // IPv4-compatible (deprecated): ::a.b.c.d.
            ("compatible", &["::127.0.0.1", "::10.0.0.1", "::8.8.8.8"]),
            // NAT64, well-known prefix: 64:ff9b::a.b.c.d.
            (
                "NAT64",
                &[
                    "64:ff9b::127.0.0.1",
                    "64:ff9b::10.0.0.1",
                    "64:ff9b::8.8.8.8",
                ],
            ),
            // NAT64, local-use prefix (RFC 8215), a /96 inside it.
            (
                "local NAT64",
                &[
                    "64:ff9b:1::7f00:1",
                    "64:ff9b:1::a00:1",
                    "64:ff9b:1:ab::808:808",
                ],
            ),
            // 6to4: 2002:AABB:CCDD::/48 for a.b.c.d.
            (
                "6to4",
                &["2002:7f00:1::1", "2002:a00:1::1", "2002:808:808::1"],
            ),
            // Teredo: the client's IPv4 address flipped in the last 32
            // bits (127.0.0.1 and 10.0.0.1 here).
            (
                "Teredo",
                &[
                    "2001:0:4136:e378:8000:63bf:80ff:fffe",
                    "2001:0:4136:e378:8000:63bf:f5ff:fffe",
                ],
            ),
        ] {
            for ip in refused {
                assert!(!is_public(ip.parse().unwrap()), "{form}: {ip}");
            }
        }
        // A public IPv4 address, mapped, is that address.
        assert!(is_public("::ffff:8.8.8.8".parse().unwrap()));
    }

    #[test]
    fn only_global_unicast_ipv6_is_public() {
        for ip in [
            "100::1",
            "2001:2::1",
            "2001:db8::1",
            "3fff::1",
            "3fff:fff::1",
            "4000::1",
            "ff02::1",
            "fec0::1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "2606:4700::1111",
            "2a00:1450:4001::1",
            "2001:4860::8888",
            "3fff:1000::1",
        ] {
            assert!(is_public(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn only_web_addresses_are_fetched() {
        let fetcher = Fetcher::public_only();
        for (address, want) in [
            ("file:///etc/passwd", FetchError::NotWeb("file".into())),
            ("ftp://example.com/x", FetchError::NotWeb("ftp".into())),
            ("gopher://x", FetchError::NotWeb("gopher".into())),
            ("not a url", FetchError::BadUrl("not a url".into())),
            (
                "http://127.0.0.1/x",
                FetchError::Private("127.0.0.1".into()),
            ),
            (
                "http://localhost/x",
                FetchError::Private("localhost".into()),
            ),
            ("http://[::1]/x", FetchError::Private("::1".into())),
            (
                "http://169.254.169.254/latest/meta-data",
                FetchError::Private("169.254.169.254".into()),
            ),
        ] {
            assert_eq!(fetcher.fetch(address).unwrap_err(), want, "{address}");
        }
    }

    /// A port is checked before any lookup or connection: a name that
    /// does not resolve is refused for its port, not as not found.
    #[test]
    fn only_the_webs_ports_are_fetched_unless_private_addresses_are_allowed() {
        let public = Fetcher::public_only();
        for address in [
            "http://nowhere.invalid/",
            "https://nowhere.invalid/",
            "http://nowhere.invalid:80/",
            "https://nowhere.invalid:443/",
            "http://nowhere.invalid:443/",
            "https://nowhere.invalid:80/",
        ] {
            assert_eq!(public.check(address), Ok(()), "{address}");
        }
        for (address, port) in [
            ("http://nowhere.invalid:22/", 22),
            ("https://nowhere.invalid:8443/", 8443),
            ("http://93.184.216.34:6379/", 6379),
            ("http://[2606:4700::1111]:25/", 25),
            ("http://nowhere.invalid:0/", 0),
        ] {
            assert_eq!(public.check(address), Err(FetchError::Port(port)));
            assert_eq!(public.fetch(address), Err(FetchError::Port(port)));
        }
        // Where private addresses are allowed, so is any port; a test's
        // server allowed alone is allowed its own.
        let private = Fetcher::allowing_private();
        assert_eq!(private.check("http://nowhere.invalid:8080/"), Ok(()));
        let one = Fetcher::public_and("127.0.0.1:8080".parse().unwrap());
        assert_eq!(one.check("http://127.0.0.1:8080/"), Ok(()));
        assert_eq!(
            one.check("http://127.0.0.1:8081/"),
            Err(FetchError::Port(8081))
        );
    }

    /// A remote document that comes a byte at a time (a slow or hostile
    /// site holding a fetch open) is cut off at the deadline, its body
    /// included, and nothing of it is handed on: issue 54's "slow remote
    /// object". Actors, keys and recipes elsewhere are fetched this way.
    #[test]
    fn a_document_that_trickles_in_is_cut_off_at_the_deadline() {
        use std::io::Write;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let Ok((mut stream, _)) = listener.accept() else {
                return;
            };
            let mut request = [0u8; 4096];
            let _ = std::io::Read::read(&mut stream, &mut request);
            let head = "HTTP/1.1 200 OK\r\ncontent-type: application/activity+json\r\n\
                        content-length: 100000\r\n\r\n{";
            let _ = stream.write_all(head.as_bytes());
            for _ in 0..200 {
                if stream.write_all(b" ").is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let unsigned = |_: &url::Url, _: Option<&[u8]>| Vec::new();
        let call = Call {
            method: "GET",
            accept: ACTIVITY_ACCEPT,
            body: None,
            sign: &unsigned,
        };
        let started = Instant::now();
        let refused = Fetcher::allowing_private().send_by(
            &format!("http://{addr}/cooks/ann"),
            Wanted::Document,
            &call,
            started + Duration::from_millis(400),
        );
        assert_eq!(refused, Err(FetchError::Unreachable("127.0.0.1".into())));
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
    }

    /// A site that takes the connection and never answers is given up at
    /// the deadline and, like every other failure to reach a page, said
    /// only to be out of reach.
    #[test]
    fn a_site_that_never_answers_could_not_be_fetched() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        // Connections wait in the listen queue, never read from.
        let started = Instant::now();
        let refused = Fetcher::allowing_private().fetch_by(
            &format!("http://{addr}/"),
            Wanted::Page,
            started + Duration::from_millis(300),
        );
        assert_eq!(refused, Err(FetchError::Unreachable("127.0.0.1".into())));
        assert_eq!(
            refused.unwrap_err().to_string(),
            "could not fetch 127.0.0.1"
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        drop(listener);
    }
}
