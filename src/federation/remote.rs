//! Other sites' actors, as their documents say: their inboxes and public
//! keys, fetched (through the site's fetcher, signed by the site's own
//! key) and kept for a while, by key id.
//!
//! A document is believed only for its own site: the actor a key belongs
//! to must be on the key id's host, and the document fetched must be the
//! one it says it is. A key that no longer verifies (its actor made a new
//! one) is fetched again, once, before a signature is refused.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::domain::federation::PublicKey;
use crate::import::FetchError;
use crate::views::activitypub::RFC_9421;

/// The longest name (`preferredUsername`) kept of an actor, in characters.
const MAX_NAME: usize = 64;
/// Actors kept at most.
const KEPT_ACTORS: usize = 10_000;
/// Sites whose signature form is kept, at most.
const KEPT_SITES: usize = 10_000;
/// How long a kept actor is believed before it is fetched again.
const KEEP_FOR: Duration = Duration::from_secs(24 * 3_600);
/// How soon after a fetch a key that failed is fetched again: not on every
/// forged request.
pub(super) const REFETCH_AFTER: Duration = Duration::from_secs(60);

/// Another site's actor.
#[derive(Debug, Clone)]
pub struct RemoteActor {
    pub id: String,
    /// Where to send it activities: its site's shared inbox if it has one.
    pub inbox: String,
    pub key_id: String,
    pub key: PublicKey,
    /// Its `preferredUsername`, if it gives one.
    pub name: Option<String>,
    /// Whether its document says its site takes RFC 9421 signatures.
    pub rfc9421: bool,
    fetched: Instant,
}

impl RemoteActor {
    /// Whether it was fetched less than `REFETCH_AFTER` ago.
    pub(super) fn is_fresh(&self) -> bool {
        self.fetched.elapsed() < REFETCH_AFTER
    }
}

/// Why an actor could not be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActorError {
    #[error("the key {0} could not be fetched: {1}")]
    Fetch(String, FetchError),
    #[error("the document at {0} is not an actor with that key: {1}")]
    NotAnActor(String, String),
}

/// Actors by key id, and which sites take RFC 9421 signatures; see the
/// module's documentation.
pub struct Actors {
    kept: quick_cache::sync::Cache<String, Arc<RemoteActor>>,
    signatures: quick_cache::sync::Cache<String, Rfc9421>,
}

/// What is known of a site and RFC 9421 signatures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rfc9421 {
    /// An actor of the site says it takes them.
    Offered,
    /// It said so, but refused a request signed so: it is sent the older
    /// form, whatever its actors say.
    Refused,
}

impl Default for Actors {
    fn default() -> Actors {
        Actors {
            kept: quick_cache::sync::Cache::new(KEPT_ACTORS),
            signatures: quick_cache::sync::Cache::new(KEPT_SITES),
        }
    }
}

/// How a document is fetched: an address and what signs the fetch.
pub type Fetch<'a> = &'a dyn Fn(&str) -> Result<(String, String), FetchError>;

impl Actors {
    /// The actor whose key is `key_id`: kept, or fetched (`fresh` fetches
    /// it even if kept).
    pub fn get(
        &self,
        key_id: &str,
        fresh: bool,
        fetch: Fetch,
    ) -> Result<Arc<RemoteActor>, ActorError> {
        if !fresh {
            if let Some(kept) = self.kept.get(key_id) {
                if kept.fetched.elapsed() < KEEP_FOR {
                    return Ok(kept);
                }
            }
        }
        let actor = Arc::new(fetch_actor(key_id, fetch)?);
        self.note_signatures(&actor.id, actor.rfc9421);
        self.kept.insert(key_id.to_owned(), actor.clone());
        Ok(actor)
    }

    /// Notes whether an actor document read from the site of `actor` says
    /// the site takes RFC 9421 signatures (not undoing a refusal).
    pub fn note_signatures(&self, actor: &str, rfc9421: bool) {
        let Some(site) = site_of(actor) else { return };
        match (rfc9421, self.signatures.get(&site)) {
            (_, Some(Rfc9421::Refused)) => {}
            (true, _) => self.signatures.insert(site, Rfc9421::Offered),
            (false, Some(_)) => {
                self.signatures.remove(&site);
            }
            (false, None) => {}
        }
    }

    /// Whether a request to `address` is signed the RFC 9421 way: its
    /// site said it takes that, and has not refused it.
    pub fn takes_rfc9421(&self, address: &str) -> bool {
        site_of(address).is_some_and(|site| self.signatures.get(&site) == Some(Rfc9421::Offered))
    }

    /// Notes that the site of `address` refused a request signed the RFC
    /// 9421 way: it is signed the older way from now on.
    pub fn refused_rfc9421(&self, address: &str) {
        if let Some(site) = site_of(address) {
            self.signatures.insert(site, Rfc9421::Refused);
        }
    }
}

/// Whether an actor document says (FEP-844e) that its site implements RFC
/// 9421 signatures: in its `generator`'s `implements`, or its own (the
/// site's `Application` actor).
pub fn implements_rfc9421(document: &Value) -> bool {
    [
        &document["generator"]["implements"],
        &document["implements"],
    ]
    .into_iter()
    .filter_map(Value::as_array)
    .flatten()
    .any(|entry| {
        let href = entry["href"].as_str().or_else(|| entry["id"].as_str());
        href.or_else(|| entry.as_str()) == Some(RFC_9421)
    })
}

/// Whether two addresses are on one site (scheme, host and port).
pub fn same_site(a: &str, b: &str) -> bool {
    match (url::Url::parse(a), url::Url::parse(b)) {
        (Ok(a), Ok(b)) => a.origin() == b.origin(),
        _ => false,
    }
}

/// The host (with its port, if it has one) of `address`.
pub fn site_of(address: &str) -> Option<String> {
    let url = url::Url::parse(address).ok()?;
    Some(match url.port() {
        Some(port) => format!("{}:{port}", url.host_str()?),
        None => url.host_str()?.to_owned(),
    })
}

/// Fetches the actor of `key_id`: the document at the key's address (its
/// fragment cut off), which is the actor (Mastodon's keys are fragments
/// of their actors) or a key naming its owner, fetched next.
fn fetch_actor(key_id: &str, fetch: Fetch) -> Result<RemoteActor, ActorError> {
    let not_actor = |why: &str| ActorError::NotAnActor(key_id.to_owned(), why.to_owned());
    let address = key_id.split('#').next().unwrap_or(key_id);
    let (at, text) = fetch(address).map_err(|e| ActorError::Fetch(key_id.to_owned(), e))?;
    let mut document: Value = serde_json::from_str(&text).map_err(|_| not_actor("not JSON"))?;
    let mut document_at = at;
    if document.get("inbox").is_none() {
        // A key document: its owner is the actor.
        let owner = document["owner"]
            .as_str()
            .ok_or_else(|| not_actor("neither an actor nor a key with an owner"))?
            .to_owned();
        if !same_site(&owner, key_id) {
            return Err(not_actor("its owner is on another site"));
        }
        let (at, text) = fetch(&owner).map_err(|e| ActorError::Fetch(key_id.to_owned(), e))?;
        document = serde_json::from_str(&text).map_err(|_| not_actor("its owner is not JSON"))?;
        document_at = at;
    }
    actor_of(&document, key_id, &document_at).map_err(|why| not_actor(&why))
}

/// The actor `document` (fetched from `fetched_at`) describes, if it is
/// one on `key_id`'s site whose key is `key_id`.
pub fn actor_of(document: &Value, key_id: &str, fetched_at: &str) -> Result<RemoteActor, String> {
    let id = document["id"].as_str().ok_or("it has no id")?;
    // The document must be the one its id names, not one served elsewhere
    // on the site (an upload) that claims to be someone there.
    if id != fetched_at || !same_site(id, key_id) {
        return Err("it is not at its own address, or is on another site than its key".into());
    }
    let inbox = document["endpoints"]["sharedInbox"]
        .as_str()
        .or_else(|| document["inbox"].as_str())
        .ok_or("it has no inbox")?;
    // Deliveries go only to the actor's own site.
    if !same_site(inbox, id) {
        return Err("its inbox is on another site".into());
    }
    let keys = match &document["publicKey"] {
        Value::Array(keys) => keys.iter().collect(),
        key @ Value::Object(_) => vec![key],
        _ => Vec::new(),
    };
    let key = keys
        .into_iter()
        .find(|k| k["id"].as_str() == Some(key_id))
        .ok_or("it does not give that key")?;
    if key["owner"].as_str().is_some_and(|owner| owner != id) {
        return Err("its key is owned by another actor".into());
    }
    let pem = key["publicKeyPem"].as_str().ok_or("its key has no PEM")?;
    let key = PublicKey::from_pem(pem).map_err(|e| e.to_string())?;
    Ok(RemoteActor {
        id: id.to_owned(),
        inbox: inbox.to_owned(),
        key_id: key_id.to_owned(),
        key,
        name: document["preferredUsername"]
            .as_str()
            .and_then(|name| super::shown_name(name, MAX_NAME)),
        rfc9421: implements_rfc9421(document),
        fetched: Instant::now(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_actor_says_its_site_takes_rfc_9421_in_its_generator_or_as_the_application() {
        let entry = json!({"name": "RFC-9421: HTTP Message Signatures", "href": RFC_9421});
        let by_generator = json!({"generator": {"type": "Application", "implements": [entry]}});
        assert!(implements_rfc9421(&by_generator));
        assert!(implements_rfc9421(
            &json!({"implements": [{"id": RFC_9421}]})
        ));
        assert!(!implements_rfc9421(
            &json!({"generator": {"implements": [{"href": "https://w3id.org/fep/844e"}]}})
        ));
        assert!(!implements_rfc9421(
            &json!({"generator": {"implements": RFC_9421}})
        ));
        assert!(!implements_rfc9421(
            &json!({"id": "https://a.example/users/zoe"})
        ));
    }

    #[test]
    fn a_site_that_refused_an_rfc_9421_signature_is_not_signed_so_again_whatever_its_actors_say() {
        let actors = Actors::default();
        let zoe = "https://a.example/users/zoe";
        assert!(!actors.takes_rfc9421("https://a.example/inbox"));
        actors.note_signatures(zoe, true);
        assert!(actors.takes_rfc9421("https://a.example/inbox"));
        assert!(!actors.takes_rfc9421("https://b.example/inbox"));
        // An actor there that no longer says so: the site is asked the
        // older way.
        actors.note_signatures(zoe, false);
        assert!(!actors.takes_rfc9421("https://a.example/inbox"));
        actors.note_signatures(zoe, true);
        actors.refused_rfc9421("https://a.example/inbox");
        actors.note_signatures(zoe, true);
        assert!(!actors.takes_rfc9421("https://a.example/inbox"));
    }
}
