//! Who is on the other end of a request: the address a limit is keyed by.
//!
//! The socket's peer is the client, unless the peer is a reverse proxy this
//! site was told to trust (`--trusted-proxy`): then the client is the
//! address that proxy says it took the request from, in the header it was
//! told the proxy writes (`X-Forwarded-For` by default, or `Forwarded`).
//! Nothing else is believed: a header from an untrusted peer is anyone's
//! text, and so is every entry of it left of the last one a trusted proxy
//! added. So the chain is read from the right, past the trusted proxies,
//! and the first address that is not one of them is the client.
//!
//! A limit keys an IPv6 client by its /64: one subscriber usually has a
//! whole /64, and keying by the full address would give them 2^64 buckets.

use std::net::{IpAddr, Ipv6Addr};
use std::str::FromStr;

use actix_web::http::header::HeaderMap;

/// One trusted proxy's address, or a network of them (`10.0.0.0/8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    base: IpAddr,
    prefix: u8,
}

impl Network {
    fn contains(&self, address: IpAddr) -> bool {
        match (self.base, canonical(address)) {
            (IpAddr::V4(base), IpAddr::V4(address)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(base) & mask == u32::from(address) & mask
            }
            (IpAddr::V6(base), IpAddr::V6(address)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(base) & mask == u128::from(address) & mask
            }
            _ => false,
        }
    }
}

impl FromStr for Network {
    type Err = String;

    /// `ADDRESS` or `ADDRESS/PREFIX`, IPv4 or IPv6.
    fn from_str(text: &str) -> Result<Network, String> {
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let base = canonical(
            address
                .parse::<IpAddr>()
                .map_err(|_| format!("{text:?} is not an IP address or network"))?,
        );
        let most = if base.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => most,
            Some(prefix) => prefix
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= most)
                .ok_or_else(|| format!("{text:?}: a prefix is a length from 0 to {most}"))?,
        };
        Ok(Network { base, prefix })
    }
}

/// The header a trusted proxy writes the client's address in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ForwardedHeader {
    /// `X-Forwarded-For: client, proxy1, ...` (nginx, Caddy, HAProxy).
    #[default]
    XForwardedFor,
    /// RFC 7239's `Forwarded: for=client, for=proxy1`.
    Forwarded,
}

/// The proxies whose word on the client's address is believed, and the
/// header they write it in. None by default.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies {
    networks: Vec<Network>,
    header: ForwardedHeader,
}

impl TrustedProxies {
    pub fn new(networks: Vec<Network>, header: ForwardedHeader) -> TrustedProxies {
        TrustedProxies { networks, header }
    }

    fn trusts(&self, address: IpAddr) -> bool {
        self.networks.iter().any(|n| n.contains(address))
    }

    /// The client's address: the socket's peer (`None` for a request that
    /// came over no socket), or what a trusted peer says it is.
    pub fn client(&self, peer: Option<IpAddr>, headers: &HeaderMap) -> Option<IpAddr> {
        let peer = canonical(peer?);
        if !self.trusts(peer) {
            return Some(peer);
        }
        let chain = match self.header {
            ForwardedHeader::XForwardedFor => {
                list(headers, "x-forwarded-for", |entry| Some(entry.trim()))
            }
            ForwardedHeader::Forwarded => list(headers, "forwarded", forwarded_for),
        };
        let mut client = peer;
        for entry in chain.iter().rev() {
            // A proxy that wrote what is not an address: stop at the last
            // hop known, which is at worst the proxy itself.
            let Some(address) = entry.and_then(parse_node) else {
                break;
            };
            client = canonical(address);
            if !self.trusts(client) {
                break;
            }
        }
        Some(client)
    }
}

/// Every comma-separated entry of every `name` header, in order, through
/// `read` (`None`: an entry that names no node).
fn list<'h>(
    headers: &'h HeaderMap,
    name: &str,
    read: impl Fn(&'h str) -> Option<&'h str>,
) -> Vec<Option<&'h str>> {
    headers
        .get_all(name)
        .flat_map(|value| match value.to_str() {
            Ok(text) => text.split(',').map(&read).collect::<Vec<_>>(),
            Err(_) => vec![None],
        })
        .collect()
}

/// The `for=` parameter of one `Forwarded` element, without its quotes.
fn forwarded_for(element: &str) -> Option<&str> {
    element.split(';').find_map(|pair| {
        let (name, value) = pair.trim().split_once('=')?;
        name.eq_ignore_ascii_case("for")
            .then(|| value.trim().trim_matches('"'))
    })
}

/// A node as proxies write it: `192.0.2.1`, `192.0.2.1:4711`, `2001:db8::1`
/// or `[2001:db8::1]:4711`.
fn parse_node(node: &str) -> Option<IpAddr> {
    if let Ok(address) = node.parse() {
        return Some(address);
    }
    if let Some(rest) = node.strip_prefix('[') {
        return rest.split_once(']')?.0.parse().ok();
    }
    let (host, port) = node.rsplit_once(':')?;
    port.parse::<u16>().ok()?;
    host.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4)
}

/// An IPv4 client reached over an IPv6 socket is its IPv4 address.
fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

/// The key a limit counts `address` under: an IPv4 address, or an IPv6
/// address's /64.
pub fn limit_key(address: IpAddr) -> IpAddr {
    match canonical(address) {
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !(u128::MAX >> 64))),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::{HeaderName, HeaderValue};

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn trusting(networks: &[&str], header: ForwardedHeader) -> TrustedProxies {
        TrustedProxies::new(
            networks.iter().map(|n| n.parse().unwrap()).collect(),
            header,
        )
    }

    #[test]
    fn nothing_is_believed_by_default() {
        let none = TrustedProxies::default();
        let sent = headers(&[
            ("x-forwarded-for", "203.0.113.9"),
            ("forwarded", "for=203.0.113.9"),
        ]);
        assert_eq!(
            none.client(Some(ip("10.0.0.1")), &sent),
            Some(ip("10.0.0.1"))
        );
        assert_eq!(none.client(None, &sent), None);
    }

    #[test]
    fn behind_a_trusted_proxy_the_client_is_the_last_address_it_did_not_add() {
        let proxies = trusting(&["10.0.0.1", "10.1.0.0/16"], ForwardedHeader::XForwardedFor);
        let peer = Some(ip("10.0.0.1"));
        // What the client wrote itself stands left of what the proxies added.
        let sent = headers(&[("x-forwarded-for", "1.2.3.4, 198.51.100.7, 10.1.2.3")]);
        assert_eq!(proxies.client(peer, &sent), Some(ip("198.51.100.7")));
        // Two header lines are one list.
        let sent = headers(&[
            ("x-forwarded-for", "1.2.3.4"),
            ("x-forwarded-for", "198.51.100.8"),
        ]);
        assert_eq!(proxies.client(peer, &sent), Some(ip("198.51.100.8")));
        // A proxy that said nothing, or wrote junk: the proxy's own address.
        assert_eq!(proxies.client(peer, &headers(&[])), Some(ip("10.0.0.1")));
        let junk = headers(&[("x-forwarded-for", "1.2.3.4, unknown")]);
        assert_eq!(proxies.client(peer, &junk), Some(ip("10.0.0.1")));
        // An untrusted peer's header is not read.
        let sent = headers(&[("x-forwarded-for", "1.2.3.4")]);
        assert_eq!(
            proxies.client(Some(ip("192.0.2.1")), &sent),
            Some(ip("192.0.2.1"))
        );
        // The other header is not read either: only the one the proxy writes.
        let other = headers(&[("forwarded", "for=1.2.3.4")]);
        assert_eq!(proxies.client(peer, &other), Some(ip("10.0.0.1")));
    }

    #[test]
    fn forwarded_elements_are_read_with_ports_quotes_and_brackets() {
        let proxies = trusting(&["::1"], ForwardedHeader::Forwarded);
        let sent = headers(&[(
            "forwarded",
            "for=1.2.3.4, for=\"[2001:db8:cafe::17]:4711\";proto=https;by=10.0.0.1",
        )]);
        assert_eq!(
            proxies.client(Some(ip("::1")), &sent),
            Some(ip("2001:db8:cafe::17"))
        );
        let sent = headers(&[("forwarded", "For=198.51.100.7:8080")]);
        assert_eq!(
            proxies.client(Some(ip("::1")), &sent),
            Some(ip("198.51.100.7"))
        );
    }

    #[test]
    fn ipv4_over_ipv6_is_ipv4_and_ipv6_is_keyed_by_its_64() {
        let proxies = trusting(&["10.0.0.1"], ForwardedHeader::XForwardedFor);
        let sent = headers(&[("x-forwarded-for", "198.51.100.7")]);
        assert_eq!(
            proxies.client(Some(ip("::ffff:10.0.0.1")), &sent),
            Some(ip("198.51.100.7"))
        );
        assert_eq!(limit_key(ip("2001:db8:1:2:aaaa::1")), ip("2001:db8:1:2::"));
        assert_eq!(
            limit_key(ip("2001:db8:1:2:ffff::1")),
            limit_key(ip("2001:db8:1:2::9"))
        );
        assert_ne!(
            limit_key(ip("2001:db8:1:3::1")),
            limit_key(ip("2001:db8:1:2::1"))
        );
        assert_eq!(limit_key(ip("::ffff:192.0.2.1")), ip("192.0.2.1"));
    }

    #[test]
    fn networks_parse_and_refuse_what_is_not_one() {
        assert!("10.0.0.0/8"
            .parse::<Network>()
            .unwrap()
            .contains(ip("10.200.0.1")));
        assert!(!"10.0.0.0/8"
            .parse::<Network>()
            .unwrap()
            .contains(ip("11.0.0.1")));
        assert!("0.0.0.0/0"
            .parse::<Network>()
            .unwrap()
            .contains(ip("8.8.8.8")));
        assert!("fd00::/8"
            .parse::<Network>()
            .unwrap()
            .contains(ip("fd12::1")));
        for bad in ["10.0.0.0/33", "example.com", "10.0.0.1/x", "::/129", ""] {
            assert!(bad.parse::<Network>().is_err(), "{bad}");
        }
    }
}
