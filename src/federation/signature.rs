//! HTTP Signatures as the fediverse speaks them: draft-cavage-http-
//! signatures-12 with `rsa-sha256` (and `hs2019`, which Mastodon sends
//! meaning the same for an RSA key), over `(request-target)`, `host`,
//! `date` and, for a body, `digest` (`SHA-256=`, RFC 3230).
//!
//! Hand-written: the Rust crates that do it are AGPL
//! (http-signature-normalization) or build on OpenSSL (sigh), and what is
//! needed is a header's grammar, a string to sign and a date window,
//! below; the cryptography is RustCrypto's (`domain::federation::keys`).

use std::time::{Duration, SystemTime};

use base64::Engine as _;
use sha2::{Digest as _, Sha256};

use crate::domain::federation::{KeyPair, PublicKey};

/// How far a signed request's date may be in the past: Mastodon's window.
pub const MAX_AGE: Duration = Duration::from_secs(12 * 3_600);
/// How far it may be in the future: clocks are not all right.
pub const MAX_SKEW: Duration = Duration::from_secs(3_600);
/// The longest `Signature` header read.
const MAX_HEADER: usize = 8 * 1024;
/// The most headers a signature may cover.
const MAX_SIGNED_HEADERS: usize = 32;

/// Why a request's signature is not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("the request is not signed")]
    Unsigned,
    #[error("the Signature header does not read: {0}")]
    Malformed(String),
    #[error("the signature's algorithm {0} is not one this site checks")]
    Algorithm(String),
    #[error("the signature does not cover {0}")]
    NotCovered(&'static str),
    #[error("the signed header {0} is missing")]
    Missing(String),
    #[error("the request's date is outside the window a signature is taken in")]
    Expired,
    #[error("the Digest header does not match the body")]
    Digest,
    #[error("the signature does not verify with the key {0}")]
    Invalid(String),
    #[error("the request was signed for {0}, not for this site")]
    OtherHost(String),
}

/// A request's signature, of either form: draft-cavage's `Signature`, or
/// RFC 9421's `Signature-Input` and `Signature` (`rfc9421`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signed {
    Cavage(Signature),
    Message(super::rfc9421::MessageSignature),
}

impl Signed {
    /// The signature `request` carries, read, with its body's digest
    /// checked (`Digest` for the older form, `Content-Digest` for RFC 9421).
    pub fn read(request: &Request, body: &[u8]) -> Result<Signed, SignatureError> {
        match (
            request.header("signature-input"),
            request.header("signature"),
        ) {
            (Some(input), Some(signature)) => {
                super::rfc9421::check_content_digest(
                    request.header("content-digest").as_deref(),
                    body,
                )?;
                super::rfc9421::MessageSignature::parse(&input, &signature).map(Signed::Message)
            }
            (None, Some(signature)) => {
                check_digest(request.header("digest").as_deref(), body)?;
                Signature::parse(&signature).map(Signed::Cavage)
            }
            _ => Err(SignatureError::Unsigned),
        }
    }

    pub fn key_id(&self) -> &str {
        match self {
            Signed::Cavage(s) => &s.key_id,
            Signed::Message(s) => &s.key_id,
        }
    }

    /// `Signature::check_form`, of either form.
    pub fn check_form(
        &self,
        request: &Request,
        has_body: bool,
        now: SystemTime,
    ) -> Result<(), SignatureError> {
        match self {
            Signed::Cavage(s) => s.check_form(request, has_body, now),
            Signed::Message(s) => s.check_form(request, has_body, now),
        }
    }

    /// `Signature::check_key`, of either form; an RFC 9421 signature may
    /// cover the target's full address, received over `scheme`.
    pub fn check_key(
        &self,
        request: &Request,
        scheme: &str,
        key: &PublicKey,
    ) -> Result<(), SignatureError> {
        match self {
            Signed::Cavage(s) => s.check_key(request, key),
            Signed::Message(s) => s.check_key(request, scheme, key),
        }
    }
}

/// A `Signature` header, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    pub key_id: String,
    pub algorithm: Option<String>,
    /// The headers signed, lower-case, in order.
    pub headers: Vec<String>,
    pub signature: Vec<u8>,
    created: Option<i64>,
    expires: Option<i64>,
}

/// A request as its signature covers it: method, path with query, and
/// headers by lower-case name (a repeated header's values joined by ", ").
pub struct Request<'a> {
    pub method: &'a str,
    pub target: &'a str,
    pub headers: &'a [(String, String)],
}

impl Request<'_> {
    pub(super) fn header(&self, name: &str) -> Option<String> {
        let values: Vec<&str> = self
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())
            .collect();
        (!values.is_empty()).then(|| values.join(", "))
    }
}

impl Signature {
    /// Reads a `Signature` header (`keyId="…",algorithm="…",…`).
    pub fn parse(header: &str) -> Result<Signature, SignatureError> {
        if header.len() > MAX_HEADER {
            return Err(SignatureError::Malformed("it is too long".into()));
        }
        let mut fields = std::collections::HashMap::new();
        let mut rest = header.trim();
        while !rest.is_empty() {
            let (name, after) = rest
                .split_once('=')
                .ok_or_else(|| SignatureError::Malformed(format!("{rest:?} has no value")))?;
            let name = name.trim().to_ascii_lowercase();
            let after = after.trim_start();
            let (value, after) = if let Some(quoted) = after.strip_prefix('"') {
                let end = quoted
                    .find('"')
                    .ok_or_else(|| SignatureError::Malformed("a quote is not closed".into()))?;
                (&quoted[..end], &quoted[end + 1..])
            } else {
                // `created` and `expires` are numbers, unquoted.
                let end = after.find(',').unwrap_or(after.len());
                (after[..end].trim(), &after[end..])
            };
            if fields.insert(name.clone(), value.to_owned()).is_some() {
                return Err(SignatureError::Malformed(format!("{name} is given twice")));
            }
            rest = after.trim_start();
            rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
        }
        let take = |name: &str| fields.get(name).cloned();
        let number = |name: &str| -> Result<Option<i64>, SignatureError> {
            take(name)
                .map(|v| {
                    v.parse()
                        .map_err(|_| SignatureError::Malformed(format!("{name} is not a number")))
                })
                .transpose()
        };
        let key_id = take("keyid")
            .filter(|k| !k.is_empty())
            .ok_or_else(|| SignatureError::Malformed("it names no keyId".into()))?;
        let signature = take("signature")
            .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
            .ok_or_else(|| SignatureError::Malformed("its signature is not base64".into()))?;
        let headers: Vec<String> = take("headers")
            .unwrap_or_else(|| "date".to_owned())
            .split_ascii_whitespace()
            .map(str::to_ascii_lowercase)
            .collect();
        // Each header once, and few: a header named many times made a
        // string of hundreds of megabytes before any key was looked at.
        let once: std::collections::HashSet<&String> = headers.iter().collect();
        if headers.len() > MAX_SIGNED_HEADERS || once.len() != headers.len() {
            return Err(SignatureError::Malformed(
                "it names a header twice, or too many".into(),
            ));
        }
        Ok(Signature {
            key_id,
            algorithm: take("algorithm"),
            headers,
            signature,
            created: number("created")?,
            expires: number("expires")?,
        })
    }

    /// The string the signature signs, for `request`.
    pub fn signing_string(&self, request: &Request) -> Result<String, SignatureError> {
        let mut lines = Vec::with_capacity(self.headers.len());
        for name in &self.headers {
            let value = match name.as_str() {
                "(request-target)" => {
                    format!("{} {}", request.method.to_ascii_lowercase(), request.target)
                }
                "(created)" => self
                    .created
                    .ok_or_else(|| SignatureError::Missing(name.clone()))?
                    .to_string(),
                "(expires)" => self
                    .expires
                    .ok_or_else(|| SignatureError::Missing(name.clone()))?
                    .to_string(),
                _ => request
                    .header(name)
                    .ok_or_else(|| SignatureError::Missing(name.clone()))?,
            };
            lines.push(format!("{name}: {value}"));
        }
        Ok(lines.join("\n"))
    }

    /// Checks that the signature covers what this site needs (the target,
    /// the host, a date, and a body's digest), that its date is within the
    /// window at `now`, and that `key` made it.
    pub fn verify(
        &self,
        request: &Request,
        has_body: bool,
        key: &PublicKey,
        now: SystemTime,
    ) -> Result<(), SignatureError> {
        self.check_form(request, has_body, now)?;
        self.check_key(request, key)
    }

    /// Whether `key` made this signature of `request` (its form checked
    /// apart, by `check_form`).
    pub fn check_key(&self, request: &Request, key: &PublicKey) -> Result<(), SignatureError> {
        let text = self.signing_string(request)?;
        if key.verifies(text.as_bytes(), &self.signature) {
            Ok(())
        } else {
            Err(SignatureError::Invalid(self.key_id.clone()))
        }
    }

    /// The checks that need no key: the algorithm, what is covered, and
    /// the date's window at `now`. Made before a key is fetched, so that a
    /// request that could never be taken costs no fetch.
    pub fn check_form(
        &self,
        request: &Request,
        has_body: bool,
        now: SystemTime,
    ) -> Result<(), SignatureError> {
        match self.algorithm.as_deref() {
            None | Some("rsa-sha256") | Some("hs2019") => {}
            Some(other) => return Err(SignatureError::Algorithm(other.to_owned())),
        }
        let covers = |name: &str| self.headers.iter().any(|h| h == name);
        for (name, needed) in [
            ("(request-target)", true),
            ("host", true),
            ("digest", has_body),
        ] {
            if needed && !covers(name) {
                return Err(SignatureError::NotCovered(name_of(name)));
            }
        }
        let signed_at = if covers("date") {
            let date = request
                .header("date")
                .ok_or_else(|| SignatureError::Missing("date".into()))?;
            httpdate::parse_http_date(&date).map_err(|_| SignatureError::Expired)?
        } else if covers("(created)") {
            let created = self
                .created
                .ok_or_else(|| SignatureError::Missing("(created)".into()))?;
            unix_time(created)
        } else {
            return Err(SignatureError::NotCovered("date"));
        };
        check_window(signed_at, self.expires.filter(|_| covers("(expires)")), now)?;
        // Every signed header must be there: the string is made now.
        self.signing_string(request).map(drop)
    }
}

/// The instant `seconds` after the Unix epoch (none before it).
pub(super) fn unix_time(seconds: i64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(u64::try_from(seconds).unwrap_or(0))
}

/// Refuses a signature made at `signed_at` outside the window at `now`
/// (more than `MAX_AGE` old, or more than `MAX_SKEW` ahead), or past the
/// `expires` it covers.
pub(super) fn check_window(
    signed_at: SystemTime,
    expires: Option<i64>,
    now: SystemTime,
) -> Result<(), SignatureError> {
    let too_old = now
        .checked_sub(MAX_AGE)
        .is_some_and(|limit| signed_at < limit);
    if too_old || signed_at > now + MAX_SKEW {
        return Err(SignatureError::Expired);
    }
    if let Some(expires) = expires {
        let unix = now
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if i64::try_from(unix).unwrap_or(i64::MAX) > expires {
            return Err(SignatureError::Expired);
        }
    }
    Ok(())
}

/// The `Host` a signed request for `url` carries, and its target (path
/// and query), as both forms of signature sign them.
pub(super) fn host_and_target(url: &url::Url) -> (String, String) {
    let host = match url.port() {
        Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
        None => url.host_str().unwrap_or_default().to_owned(),
    };
    let target = match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    };
    (host, target)
}

/// A key pair made once for the tests of both forms of signature.
#[cfg(test)]
pub(super) fn test_key_pair() -> &'static KeyPair {
    static PAIR: std::sync::OnceLock<KeyPair> = std::sync::OnceLock::new();
    PAIR.get_or_init(|| KeyPair::generate().unwrap())
}

/// The tests' inbox, where their requests are signed for.
#[cfg(test)]
const TEST_INBOX: &str = "https://forkful.example/cooks/ann/inbox";

/// The headers of a POST of `body` to the tests' inbox, signed in `form`
/// by `test_key_pair` at `now`.
#[cfg(test)]
pub(super) fn test_signed(form: Form, body: &[u8], now: SystemTime) -> Vec<(String, String)> {
    let url = url::Url::parse(TEST_INBOX).unwrap();
    let key_id = "https://b.example/cooks/ben#main-key";
    sign_in(form, test_key_pair(), key_id, "POST", &url, Some(body), now)
        .into_iter()
        .map(|(n, v)| (n.to_owned(), v))
        .collect()
}

/// `headers` of a POST of `body` to the tests' inbox, read, checked and
/// verified with `test_key_pair`'s public half at `now`, as an inbox does
/// (`Signed`): either form.
#[cfg(test)]
pub(super) fn test_check(
    headers: &[(String, String)],
    body: &[u8],
    now: SystemTime,
) -> Result<(), SignatureError> {
    let request = Request {
        method: "POST",
        target: "/cooks/ann/inbox",
        headers,
    };
    let signed = Signed::read(&request, body)?;
    signed.check_form(&request, true, now)?;
    let key = PublicKey::from_pem(test_key_pair().public_pem()).unwrap();
    signed.check_key(&request, "https", &key)
}

fn name_of(header: &str) -> &'static str {
    match header {
        "(request-target)" => "(request-target)",
        "host" => "host",
        "digest" => "digest",
        _ => "a header it needs",
    }
}

/// The `Digest` header of `body`.
pub fn digest(body: &[u8]) -> String {
    format!(
        "SHA-256={}",
        base64::engine::general_purpose::STANDARD.encode(Sha256::digest(body))
    )
}

/// Checks a `Digest` header against `body`: its SHA-256 must be there and
/// match (other algorithms listed beside it are passed over).
pub fn check_digest(header: Option<&str>, body: &[u8]) -> Result<(), SignatureError> {
    let header = header.ok_or(SignatureError::NotCovered("digest"))?;
    let ours = digest(body);
    let sha256 = header.split(',').map(str::trim).find(|part| {
        part.get(..8)
            .is_some_and(|name| name.eq_ignore_ascii_case("sha-256="))
    });
    match sha256 {
        Some(part) if part[8..] == ours[8..] => Ok(()),
        _ => Err(SignatureError::Digest),
    }
}

/// The headers that sign a request for `url` by `method`, with `body` if
/// it has one, as `key_id`'s holder, at `now`: `Host`, `Date`, `Digest`
/// (with a body) and `Signature`, to add to the request as they are.
pub fn sign(
    key: &KeyPair,
    key_id: &str,
    method: &str,
    url: &url::Url,
    body: Option<&[u8]>,
    now: SystemTime,
) -> Vec<(&'static str, String)> {
    let (host, target) = host_and_target(url);
    let mut headers = vec![("host", host), ("date", httpdate::fmt_http_date(now))];
    if let Some(body) = body {
        headers.push(("digest", digest(body)));
    }
    let mut text = format!("(request-target): {} {target}", method.to_ascii_lowercase());
    let mut names = String::from("(request-target)");
    for (name, value) in &headers {
        text.push_str(&format!("\n{name}: {value}"));
        names.push(' ');
        names.push_str(name);
    }
    let signature = base64::engine::general_purpose::STANDARD.encode(key.sign(text.as_bytes()));
    headers.push((
        "signature",
        format!(
            "keyId=\"{key_id}\",algorithm=\"rsa-sha256\",headers=\"{names}\",signature=\"{signature}\""
        ),
    ));
    headers
}

/// The two forms a request this site sends is signed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// draft-cavage-http-signatures, which every peer reads.
    Cavage,
    /// RFC 9421, for sites that say they take it.
    Rfc9421,
}

/// `sign`, or `rfc9421::sign`, as `form` says.
pub fn sign_in(
    form: Form,
    key: &KeyPair,
    key_id: &str,
    method: &str,
    url: &url::Url,
    body: Option<&[u8]>,
    now: SystemTime,
) -> Vec<(&'static str, String)> {
    match form {
        Form::Cavage => sign(key, key_id, method, url, body, now),
        Form::Rfc9421 => super::rfc9421::sign(key, key_id, method, url, body, now),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signed_post(body: &[u8], now: SystemTime) -> Vec<(String, String)> {
        test_signed(Form::Cavage, body, now)
    }

    fn check(
        headers: &[(String, String)],
        body: &[u8],
        now: SystemTime,
    ) -> Result<(), SignatureError> {
        test_check(headers, body, now)
    }

    #[test]
    fn a_signed_request_verifies_and_any_change_to_it_does_not() {
        let now = SystemTime::now();
        let body = br#"{"type":"Follow"}"#;
        let headers = signed_post(body, now);
        assert_eq!(check(&headers, body, now), Ok(()));
        // Another body: its digest no longer matches.
        assert_eq!(check(&headers, b"{}", now), Err(SignatureError::Digest));
        // A digest made for the other body: the signature no longer covers it.
        let mut forged = headers.clone();
        for (name, value) in &mut forged {
            if name == "digest" {
                *value = digest(b"{}");
            }
        }
        assert!(matches!(
            check(&forged, b"{}", now),
            Err(SignatureError::Invalid(_))
        ));
        // Another host.
        let mut moved = headers.clone();
        for (name, value) in &mut moved {
            if name == "host" {
                *value = "c.example".into();
            }
        }
        assert!(matches!(
            check(&moved, body, now),
            Err(SignatureError::Invalid(_))
        ));
        // Too old, or from too far ahead.
        let later = now + MAX_AGE + Duration::from_secs(60);
        assert_eq!(check(&headers, body, later), Err(SignatureError::Expired));
        let earlier = now - MAX_SKEW - Duration::from_secs(60);
        assert_eq!(check(&headers, body, earlier), Err(SignatureError::Expired));
    }

    #[test]
    fn a_signature_that_leaves_out_what_must_be_covered_is_refused() {
        let now = SystemTime::now();
        let date = httpdate::fmt_http_date(now);
        let text = format!("date: {date}");
        let signature =
            base64::engine::general_purpose::STANDARD.encode(test_key_pair().sign(text.as_bytes()));
        let headers = vec![
            ("date".to_owned(), date),
            ("host".to_owned(), "a.example".to_owned()),
            (
                "signature".to_owned(),
                format!("keyId=\"k\",headers=\"date\",signature=\"{signature}\""),
            ),
        ];
        let request = Request {
            method: "GET",
            target: "/cooks/ann",
            headers: &headers,
        };
        let key = PublicKey::from_pem(test_key_pair().public_pem()).unwrap();
        let parsed = Signature::parse(&request.header("signature").unwrap()).unwrap();
        assert_eq!(
            parsed.verify(&request, false, &key, now),
            Err(SignatureError::NotCovered("(request-target)"))
        );
    }

    #[test]
    fn the_header_reads_as_mastodon_writes_it() {
        // The form of Mastodon's documentation (docs.joinmastodon.org,
        // "Security"), its signature cut short.
        let header = r#"keyId="https://my.example.com/actor#main-key",headers="(request-target) host date digest",signature="Y2FiYW0=""#;
        let parsed = Signature::parse(header).unwrap();
        assert_eq!(parsed.key_id, "https://my.example.com/actor#main-key");
        assert_eq!(
            parsed.headers,
            ["(request-target)", "host", "date", "digest"]
        );
        assert_eq!(parsed.signature, b"cabam");
        assert_eq!(parsed.algorithm, None);
        for bad in [
            "",
            "keyId=\"k\"",
            "keyId=\"k\",signature=\"not base64!\"",
            "keyId=\"k,signature=\"YQ==\"",
            "keyId=\"k\",keyId=\"j\",signature=\"YQ==\"",
            "keyId=\"k\",headers=\"host date host\",signature=\"YQ==\"",
        ] {
            assert!(Signature::parse(bad).is_err(), "{bad:?} was read");
        }
    }

    #[test]
    fn a_digest_is_checked_by_its_sha_256() {
        let body = b"hello";
        assert_eq!(check_digest(Some(&digest(body)), body), Ok(()));
        let both = format!("MD5=XUFAKrxLKna5cZ2REBfFkg==, {}", digest(body));
        assert_eq!(check_digest(Some(&both), body), Ok(()));
        assert_eq!(
            check_digest(Some("SHA-256=AAAA"), body),
            Err(SignatureError::Digest)
        );
        assert_eq!(
            check_digest(Some("MD5=XUFAKrxLKna5cZ2REBfFkg=="), body),
            Err(SignatureError::Digest)
        );
        assert_eq!(
            check_digest(None, body),
            Err(SignatureError::NotCovered("digest"))
        );
    }
}
