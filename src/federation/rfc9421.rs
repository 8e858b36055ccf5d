//! HTTP Message Signatures (RFC 9421), which newer peers send instead of
//! draft-cavage's `Signature` (Mastodon's verifier reads them): a
//! `Signature-Input` naming the components covered and their parameters,
//! a `Signature` holding the bytes, and the body's `Content-Digest`
//! (RFC 9530). Read, checked and verified as `signature` does the older
//! form, to the same rules: the method, the target and the host covered,
//! the body's digest covered and right, a creation time within the window,
//! and the key's RSA PKCS#1 v1.5 SHA-256 (`rsa-v1_5-sha256`) signature
//! over the signature base. The Structured Fields they are written in are
//! read by `sfv`; only the signature base is made here.
//!
//! Outgoing requests are signed this way (`sign`) to a site whose actors
//! say they take it (`Federated::signed_as_its_site_takes`), the older way
//! otherwise.

use std::time::SystemTime;

use base64::Engine;
use sfv::{BareItem, Dictionary, FieldType, ListEntry, Parser};
use sha2::{Digest, Sha256};

use super::signature::{check_window, host_and_target, unix_time, Request, SignatureError};
use crate::domain::federation::{KeyPair, PublicKey};

/// The longest `Signature-Input` or `Signature` header read.
const MAX_HEADER: usize = 8 * 1024;
/// The most components a signature may cover: a request's few, with room.
/// Each is a line of the base, and a header may be long: without a bound,
/// a request naming one large header many times made a base of hundreds
/// of megabytes before any key was looked at.
const MAX_COMPONENTS: usize = 32;

/// A request's RFC 9421 signature, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageSignature {
    pub key_id: String,
    /// The components covered, in order, lower-case (`@method`,
    /// `content-digest`).
    components: Vec<String>,
    /// The covered components with their parameters, serialized: the
    /// signature base's last line.
    params: String,
    created: Option<i64>,
    expires: Option<i64>,
    signature: Vec<u8>,
}

fn malformed(why: &str) -> SignatureError {
    SignatureError::Malformed(why.to_owned())
}

fn dictionary(header: &str) -> Result<Dictionary, SignatureError> {
    if header.len() > MAX_HEADER {
        return Err(malformed("it is too long"));
    }
    Parser::new(header)
        .parse::<Dictionary>()
        .map_err(|e| SignatureError::Malformed(e.to_string()))
}

impl MessageSignature {
    /// Reads the `Signature-Input` and `Signature` headers: the first
    /// signature of the input that the `Signature` holds.
    pub fn parse(input: &str, signature: &str) -> Result<MessageSignature, SignatureError> {
        let inputs = dictionary(input)?;
        let signatures = dictionary(signature)?;
        let (label, covered) = inputs
            .iter()
            .find(|(label, _)| signatures.contains_key(*label))
            .ok_or_else(|| malformed("no signature of its input is given"))?;
        let ListEntry::InnerList(covered) = covered else {
            return Err(malformed("its input is not a list of components"));
        };
        let bytes = match signatures.get(label) {
            Some(ListEntry::Item(item)) => item.bare_item.as_byte_sequence(),
            _ => None,
        };
        let signature = bytes
            .ok_or_else(|| malformed("its signature is not bytes"))?
            .to_vec();
        if covered.items.len() > MAX_COMPONENTS {
            return Err(malformed("it covers too many components"));
        }
        let mut components: Vec<String> = Vec::with_capacity(covered.items.len());
        for item in &covered.items {
            // A component with parameters (`;sf`, `;key`, `;req`) is read
            // differently; none that this site needs has one. Names are
            // lower case (section 2.1), and each is covered once (2.5).
            let name = item
                .bare_item
                .as_string()
                .filter(|_| item.params.is_empty());
            let name = name.ok_or_else(|| malformed("a component is not a plain name"))?;
            let name = name.as_str();
            if name.bytes().any(|b| b.is_ascii_uppercase()) {
                return Err(malformed("a component's name is not in lower case"));
            }
            if components.iter().any(|c| c == name) {
                return Err(malformed("a component is covered twice"));
            }
            components.push(name.to_owned());
        }
        let param = |name: &str| covered.params.get(name);
        let key_id = param("keyid")
            .and_then(BareItem::as_string)
            .map(|k| k.as_str().to_owned())
            .filter(|k| !k.is_empty())
            .ok_or_else(|| malformed("it names no keyid"))?;
        match param("alg").map(|alg| alg.as_string().map(|s| s.as_str())) {
            None | Some(Some("rsa-v1_5-sha256")) => {}
            Some(other) => {
                return Err(SignatureError::Algorithm(
                    other.unwrap_or("(not a string)").to_owned(),
                ))
            }
        }
        let params = vec![ListEntry::InnerList(covered.clone())]
            .serialize()
            .ok_or_else(|| malformed("its input does not write back"))?;
        Ok(MessageSignature {
            key_id,
            components,
            params,
            created: param("created")
                .and_then(BareItem::as_integer)
                .map(i64::from),
            expires: param("expires")
                .and_then(BareItem::as_integer)
                .map(i64::from),
            signature,
        })
    }

    fn covers(&self, name: &str) -> bool {
        self.components.iter().any(|c| c == name)
    }

    /// The signature base (RFC 9421 section 2.5) of `request`, received
    /// over `scheme`.
    pub fn base(&self, request: &Request, scheme: &str) -> Result<String, SignatureError> {
        let host = || {
            request
                .header("host")
                .map(|h| h.to_ascii_lowercase())
                .ok_or_else(|| SignatureError::Missing("host".into()))
        };
        let (path, query) = match request.target.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (request.target, None),
        };
        let mut base = String::new();
        for name in &self.components {
            let value = match name.as_str() {
                "@method" => request.method.to_ascii_uppercase(),
                "@authority" => host()?,
                "@scheme" => scheme.to_owned(),
                "@target-uri" => format!("{scheme}://{}{}", host()?, request.target),
                "@request-target" => request.target.to_owned(),
                "@path" => path.to_owned(),
                "@query" => format!("?{}", query.unwrap_or_default()),
                derived if derived.starts_with('@') => {
                    return Err(SignatureError::Malformed(format!(
                        "{derived} is not a component this site reads"
                    )))
                }
                field => request
                    .header(field)
                    .ok_or_else(|| SignatureError::Missing(field.to_owned()))?,
            };
            base.push_str(&format!("\"{name}\": {value}\n"));
        }
        base.push_str(&format!("\"@signature-params\": {}", self.params));
        Ok(base)
    }

    /// The checks that need no key, as `Signature::check_form` makes them:
    /// what is covered, and the creation time's window at `now`.
    pub fn check_form(
        &self,
        request: &Request,
        has_body: bool,
        now: SystemTime,
    ) -> Result<(), SignatureError> {
        if !self.covers("@method") {
            return Err(SignatureError::NotCovered("@method"));
        }
        // The whole target: `@path` leaves the query out, so it needs
        // `@query` beside it, as `(request-target)` covers both.
        let path_and_query =
            self.covers("@request-target") || (self.covers("@path") && self.covers("@query"));
        let target = self.covers("@target-uri")
            || path_and_query && (self.covers("@authority") || self.covers("host"));
        if !target {
            return Err(SignatureError::NotCovered("@target-uri"));
        }
        if has_body && !self.covers("content-digest") {
            return Err(SignatureError::NotCovered("content-digest"));
        }
        let created = self
            .created
            .ok_or_else(|| SignatureError::Missing("created".into()))?;
        check_window(unix_time(created), self.expires, now)?;
        // Every covered component must be there: the base is made now.
        self.base(request, "https").map(drop)
    }

    /// Whether `key` made this signature of `request`, received over
    /// `scheme` (its form checked apart, by `check_form`).
    pub fn check_key(
        &self,
        request: &Request,
        scheme: &str,
        key: &PublicKey,
    ) -> Result<(), SignatureError> {
        let base = self.base(request, scheme)?;
        match key.verifies(base.as_bytes(), &self.signature) {
            true => Ok(()),
            false => Err(SignatureError::Invalid(self.key_id.clone())),
        }
    }
}

/// The `Content-Digest` (RFC 9530) of `body`: its SHA-256.
pub fn content_digest(body: &[u8]) -> String {
    let sha = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(body));
    format!("sha-256=:{sha}:")
}

/// Checks a `Content-Digest` header against `body`: its SHA-256 must be
/// there and match (other algorithms beside it are passed over).
pub fn check_content_digest(header: Option<&str>, body: &[u8]) -> Result<(), SignatureError> {
    let header = header.ok_or(SignatureError::NotCovered("content-digest"))?;
    let digests = dictionary(header)?;
    let sha256 = match digests.get("sha-256") {
        Some(ListEntry::Item(item)) => item.bare_item.as_byte_sequence(),
        _ => None,
    };
    match sha256 {
        Some(sha) if sha == Sha256::digest(body).as_slice() => Ok(()),
        _ => Err(SignatureError::Digest),
    }
}

/// The headers that sign a request for `url` by `method`, with `body` if it
/// has one, as `key_id`'s holder, at `now`, the RFC 9421 way: `Host`,
/// `Content-Digest` (with a body), `Signature-Input` and `Signature`. For
/// tests, and for a peer that asks for it.
pub fn sign(
    key: &KeyPair,
    key_id: &str,
    method: &str,
    url: &url::Url,
    body: Option<&[u8]>,
    now: SystemTime,
) -> Vec<(&'static str, String)> {
    let (host, target) = host_and_target(url);
    let mut headers = vec![("host", host)];
    let mut covered = String::from("\"@method\" \"@target-uri\"");
    if let Some(body) = body {
        headers.push(("content-digest", content_digest(body)));
        covered.push_str(" \"content-digest\"");
    }
    let created = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // A Structured Field string: `"` and `\` escaped (a key id is an
    // address, in ASCII).
    let key_id = key_id.replace('\\', "\\\\").replace('"', "\\\"");
    let input = format!("({covered});created={created};keyid=\"{key_id}\";alg=\"rsa-v1_5-sha256\"");
    headers.push(("signature-input", format!("sig1={input}")));
    let request_headers: Vec<(String, String)> = headers
        .iter()
        .map(|(n, v)| (n.to_string(), v.clone()))
        .collect();
    let request = Request {
        method,
        target: &target,
        headers: &request_headers,
    };
    let read = MessageSignature::parse(&format!("sig1={input}"), "sig1=:AA==:")
        .expect("what this site writes reads");
    let base = read
        .base(&request, url.scheme())
        .expect("every component is given");
    let bytes = base64::engine::general_purpose::STANDARD.encode(key.sign(base.as_bytes()));
    headers.push(("signature", format!("sig1=:{bytes}:")));
    headers
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::federation::signature::{test_check, test_signed, Form, MAX_AGE};
    use std::time::Duration;

    fn signed(body: &[u8], now: SystemTime) -> Vec<(String, String)> {
        test_signed(Form::Rfc9421, body, now)
    }

    /// Reads, checks and verifies `headers` for a POST of `body` at `now`.
    fn check(
        headers: &[(String, String)],
        body: &[u8],
        now: SystemTime,
    ) -> Result<(), SignatureError> {
        test_check(headers, body, now)
    }

    #[test]
    fn a_message_signature_verifies_and_any_change_to_it_does_not() {
        let now = SystemTime::now();
        let body = br#"{"type":"Follow"}"#;
        let headers = signed(body, now);
        assert_eq!(check(&headers, body, now), Ok(()));
        assert_eq!(check(&headers, b"{}", now), Err(SignatureError::Digest));
        let mut moved = headers.clone();
        moved[0].1 = "other.example".into();
        assert!(matches!(
            check(&moved, body, now),
            Err(SignatureError::Invalid(_))
        ));
        let later = now + MAX_AGE + Duration::from_secs(60);
        assert_eq!(check(&headers, body, later), Err(SignatureError::Expired));
        // Covering less than the target and the body's digest is refused.
        let mut less = headers.clone();
        let input = less
            .iter_mut()
            .find(|(n, _)| n == "signature-input")
            .unwrap();
        input.1 = input.1.replace(" \"content-digest\"", "");
        assert_eq!(
            check(&less, body, now),
            Err(SignatureError::NotCovered("content-digest"))
        );
        let mut other = headers.clone();
        let input = other
            .iter_mut()
            .find(|(n, _)| n == "signature-input")
            .unwrap();
        input.1 = input.1.replace("rsa-v1_5-sha256", "ed25519");
        assert!(matches!(
            check(&other, body, now),
            Err(SignatureError::Algorithm(_))
        ));
    }

    #[test]
    fn the_base_is_as_the_rfc_writes_it() {
        let headers = vec![("host".to_owned(), "Example.COM".to_owned())];
        let request = Request {
            method: "post",
            target: "/foo?param=Value&Pet=dog",
            headers: &headers,
        };
        let read = MessageSignature::parse(
            r#"sig1=("@method" "@authority" "@path" "@query");created=1618884473;keyid="test-key-rsa-pss""#,
            "sig1=:AA==:",
        )
        .unwrap();
        assert_eq!(
            read.base(&request, "https").unwrap(),
            "\"@method\": POST\n\"@authority\": example.com\n\"@path\": /foo\n\
             \"@query\": ?param=Value&Pet=dog\n\"@signature-params\": \
             (\"@method\" \"@authority\" \"@path\" \"@query\");created=1618884473;keyid=\"test-key-rsa-pss\""
        );
    }

    #[test]
    fn a_path_without_its_query_or_too_many_components_is_refused() {
        let now = SystemTime::now();
        let created = now
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let headers = vec![("host".to_owned(), "forkful.example".to_owned())];
        let request = Request {
            method: "POST",
            target: "/cooks/ann/inbox",
            headers: &headers,
        };
        let input = format!(
            "sig1=(\"@method\" \"@path\" \"@authority\" \"content-digest\");created={created};keyid=\"k\""
        );
        let read = MessageSignature::parse(&input, "sig1=:AA==:").unwrap();
        assert_eq!(
            read.check_form(&request, true, now),
            Err(SignatureError::NotCovered("@target-uri"))
        );
        let many: Vec<String> = (0..=MAX_COMPONENTS).map(|i| format!("\"x{i}\"")).collect();
        let input = format!("sig1=({});created={created};keyid=\"k\"", many.join(" "));
        assert!(MessageSignature::parse(&input, "sig1=:AA==:").is_err());
    }

    #[test]
    fn what_does_not_read_is_refused() {
        for (input, signature) in [
            ("sig1=(\"@method\");keyid=\"k\"", "sig2=:AA==:"),
            ("sig1=\"@method\"", "sig1=:AA==:"),
            ("sig1=(\"@method\";sf);keyid=\"k\"", "sig1=:AA==:"),
            ("sig1=(\"@method\");created=1", "sig1=:AA==:"),
            ("sig1=(\"@method\");keyid=\"k\"", "sig1=\"not bytes\""),
            ("not a dictionary ((", "sig1=:AA==:"),
            ("sig1=(\"@method\" \"@method\");keyid=\"k\"", "sig1=:AA==:"),
            ("sig1=(\"@Method\");keyid=\"k\"", "sig1=:AA==:"),
        ] {
            assert!(
                MessageSignature::parse(input, signature).is_err(),
                "{input} {signature}"
            );
        }
    }
}
