//! Fetching another site's page to import, safely: `http` and `https`
//! only; never an address on this machine or a private, link-local or
//! otherwise internal network (checked on the addresses the name resolves
//! to, by the resolver every connection goes through, redirects included,
//! so a name that resolves differently the second time gains nothing);
//! at most `MAX_REDIRECTS` redirects, `MAX_PAGE_BYTES` of page and
//! `TIMEOUT` for all of it, name lookups included; at most `MAX_FETCHES`
//! at once per fetcher (the site has one), a place the site can take
//! before it counts the cook's import (`Fetcher::place`). Tests start the
//! server with private addresses allowed, to fetch from 127.0.0.1.

use std::io::Read;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, LazyLock};
use std::time::{Duration, Instant};

/// The most a page may weigh, in bytes.
pub const MAX_PAGE_BYTES: u64 = 5 * 1024 * 1024;
/// The most redirects followed.
pub const MAX_REDIRECTS: usize = 5;
/// How long a fetch may take, connecting and reading included.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Why a page could not be fetched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error("{0:?} is not a web address")]
    BadUrl(String),
    #[error("only http and https addresses can be imported, not {0}")]
    NotWeb(String),
    #[error("{0} is an address on a private or local network, which this site does not fetch")]
    Private(String),
    #[error("{0} could not be found")]
    NoSuchHost(String),
    #[error("the page redirects more than {MAX_REDIRECTS} times")]
    TooManyRedirects,
    #[error("the page is larger than {} MiB", MAX_PAGE_BYTES / (1024 * 1024))]
    TooLarge,
    #[error("the site answered {0}")]
    Status(u16),
    #[error("the address is not a web page (it is {0})")]
    NotHtml(String),
    #[error("the page could not be fetched: {0}")]
    Network(String),
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
    /// `https` address (where it leads is checked as it is fetched).
    pub fn check(&self, address: &str) -> Result<(), FetchError> {
        checked_url(address).map(drop)
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
        let allow = self.allow;
        // One deadline for the whole fetch, redirects and name lookups
        // included.
        let deadline = Instant::now() + TIMEOUT;
        let agent = ureq::AgentBuilder::new()
            .timeout(TIMEOUT)
            .redirects(0)
            .user_agent("forkful-import (+https://github.com/forkful)")
            .resolver(move |netloc: &str| {
                resolve(netloc, allow, deadline, system_lookup).map_err(into_io)
            })
            .build();
        let mut at = checked_url(address)?;
        for _ in 0..=MAX_REDIRECTS {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(took_too_long());
            }
            // The check before the request gives a clear message; the
            // resolver's, on the connection itself, is what holds.
            let host = at.host_str().unwrap_or_default().to_owned();
            let port = at.port_or_known_default().unwrap_or(80);
            resolve(&format!("{host}:{port}"), allow, deadline, system_lookup)?;
            // What the lookup left of the deadline.
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(took_too_long());
            }
            let response = match agent.request_url("GET", &at).timeout(left).call() {
                Ok(response) => response,
                Err(ureq::Error::Status(code, _)) => return Err(FetchError::Status(code)),
                Err(ureq::Error::Transport(t)) => return Err(transport(&t, &host)),
            };
            if (300..400).contains(&response.status()) {
                let location = response
                    .header("location")
                    .ok_or(FetchError::Status(response.status()))?;
                let next = at
                    .join(location)
                    .map_err(|_| FetchError::BadUrl(location.to_owned()))?;
                at = checked_url(next.as_str())?;
                continue;
            }
            let kind = response.content_type().to_owned();
            if !kind.contains("html") {
                return Err(FetchError::NotHtml(kind));
            }
            let mut body = Vec::new();
            response
                .into_reader()
                .take(MAX_PAGE_BYTES + 1)
                .read_to_end(&mut body)
                .map_err(|e| FetchError::Network(e.to_string()))?;
            if body.len() as u64 > MAX_PAGE_BYTES {
                return Err(FetchError::TooLarge);
            }
            return Ok((at.to_string(), String::from_utf8_lossy(&body).into_owned()));
        }
        Err(FetchError::TooManyRedirects)
    }
}

fn checked_url(address: &str) -> Result<url::Url, FetchError> {
    let url =
        url::Url::parse(address.trim()).map_err(|_| FetchError::BadUrl(address.to_owned()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(FetchError::NotWeb(url.scheme().to_owned()));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(FetchError::BadUrl(address.to_owned()));
    }
    Ok(url)
}

fn took_too_long() -> FetchError {
    FetchError::Network(format!("it took longer than {} s", TIMEOUT.as_secs()))
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
    if deadline <= Instant::now() {
        return Err(took_too_long());
    }
    let place = Place::take(&LOOKUPS, MAX_LOOKUPS).ok_or_else(|| {
        FetchError::Network("the site is looking up too many names at once; try again".into())
    })?;
    let (sender, answer) = mpsc::sync_channel(1);
    let asked = netloc.to_owned();
    std::thread::Builder::new()
        .name("fetch-lookup".into())
        .spawn(move || {
            let _place = place;
            let _ = sender.send(lookup(&asked));
        })
        .map_err(|e| FetchError::Network(e.to_string()))?;
    let left = deadline.saturating_duration_since(Instant::now());
    let addrs = match answer.recv_timeout(left) {
        Ok(found) => found.map_err(|_| FetchError::NoSuchHost(host.to_owned()))?,
        Err(_) => return Err(took_too_long()),
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

fn transport(error: &ureq::Transport, host: &str) -> FetchError {
    let text = error.to_string();
    if text.contains("private or local network") {
        FetchError::Private(host.to_owned())
    } else {
        FetchError::Network(text)
    }
}

/// Whether `ip` is on the public internet: not this machine, a private,
/// shared, link-local, multicast, documentation or reserved network, nor
/// an IPv6 form that carries an IPv4 address to a translator or relay.
pub fn is_public(ip: IpAddr) -> bool {
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
        assert_eq!(refused, Err(took_too_long()));
        assert!(started.elapsed() < Duration::from_millis(900));
        let later = Instant::now() + Duration::from_secs(5);
        assert_eq!(
            resolve("quick.example:80", Allow::PublicOnly, later, quick),
            Ok(vec!["93.184.216.34:80".parse().unwrap()])
        );
        assert_eq!(
            resolve("quick.example:80", Allow::Private, started, quick),
            Err(took_too_long()),
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
                "http://127.0.0.1:9/x",
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
}
