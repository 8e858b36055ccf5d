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
use crate::import::{FetchError, Fetcher, SignRequest};

/// The longest name (`preferredUsername`) kept of an actor, in characters.
const MAX_NAME: usize = 64;
/// Actors kept at most.
const KEPT_ACTORS: usize = 10_000;
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

/// Actors by key id; see the module's documentation.
pub struct Actors {
    kept: quick_cache::sync::Cache<String, Arc<RemoteActor>>,
}

impl Default for Actors {
    fn default() -> Actors {
        Actors {
            kept: quick_cache::sync::Cache::new(KEPT_ACTORS),
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
        self.kept.insert(key_id.to_owned(), actor.clone());
        Ok(actor)
    }
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
            .map(|name| name.chars().take(MAX_NAME).collect()),
        fetched: Instant::now(),
    })
}

/// The fetch of documents that `fetcher` makes, signed as `sign` says.
pub fn fetching<'a>(
    fetcher: &'a Fetcher,
    sign: &'a dyn SignRequest,
) -> impl Fn(&str) -> Result<(String, String), FetchError> + 'a {
    move |address| fetcher.fetch_document(address, sign)
}
