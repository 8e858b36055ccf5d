//! A cook here following a cook or a recipe on another site: the address
//! they give (`@ann@a.example`, or a cook's or recipe's address there) is
//! looked up (WebFinger, then the document, fetched signed by the site),
//! and a `Follow` in their name is queued; its `Undo` when they stop.
//! What comes back (`Accept`, `Reject`, and the news of what they follow)
//! is the inbox's (`inbox::Federated::receive`).

use serde_json::Value;

use super::remote;
use super::Federated;
use crate::domain::federation::{Delivery, Following};
use crate::domain::{DomainError, Slug};
use crate::import::FetchError;
use crate::views::activitypub;

/// Why a follow elsewhere could not be made.
#[derive(Debug, thiserror::Error)]
pub enum FollowError {
    #[error("{0:?} is neither a handle (@cook@site) nor an address")]
    BadAddress(String),
    #[error("{0} is on this site: follow it here")]
    Here(String),
    #[error("the site {0} is blocked here")]
    Blocked(String),
    #[error("{0} could not be looked up: {1}")]
    Fetch(String, FetchError),
    #[error("{0} is not a cook or a recipe that can be followed: {1}")]
    NotFollowable(String, String),
    #[error(transparent)]
    Domain(#[from] DomainError),
}

/// The longest name kept for what a cook follows, in characters.
const MAX_NAME: usize = 200;

/// The actor types a follow is sent to as themselves.
const ACTORS: [&str; 5] = ["Person", "Service", "Application", "Group", "Organization"];

impl Federated {
    /// The cook with `handle` follows what `address` names elsewhere;
    /// what they follow. Runs off the workers: it fetches.
    pub fn follow_elsewhere(&self, handle: &Slug, address: &str) -> Result<Following, FollowError> {
        let address = address.trim();
        let url = match address.contains("://") {
            true => address.to_owned(),
            false => self.webfinger(address)?,
        };
        self.check_elsewhere(&url)?;
        let (at, document) = self.fetch_json(&url)?;
        self.check_elsewhere(&at)?;
        let not = |why: &str| FollowError::NotFollowable(url.clone(), why.to_owned());
        let id = document["id"].as_str().ok_or_else(|| not("it has no id"))?;
        if !remote::same_site(id, &at) {
            return Err(not("it says it is on another site"));
        }
        let kind = document["type"].as_str().unwrap_or_default();
        let (actor, name) = if ACTORS.contains(&kind) {
            let name = document["preferredUsername"].as_str().unwrap_or("someone");
            let site = remote::site_of(id).unwrap_or_default();
            (document.clone(), format!("@{name}@{site}"))
        } else {
            let actor = self.author_of(&document, &url)?;
            let name = document["name"].as_str().unwrap_or("a recipe").to_owned();
            (actor, name)
        };
        let actor_id = actor["id"]
            .as_str()
            .ok_or_else(|| not("its actor has no id"))?;
        let inbox = inbox_of(&actor).ok_or_else(|| not("its actor has no inbox on its site"))?;
        let follow_id = format!(
            "{}#follows/{}",
            activitypub::actor_url(&self.base_url, handle.as_str()),
            super::inbox::now_millis()
        );
        let following = Following {
            object: id.to_owned(),
            // "a recipe" where nothing visible is left of its name.
            name: super::shown_name(&name, MAX_NAME).unwrap_or_else(|| "a recipe".to_owned()),
            actor: actor_id.to_owned(),
            inbox: inbox.to_owned(),
            follow_id: follow_id.clone(),
            accepted: false,
        };
        let activity = activitypub::follow(&self.base_url, handle.as_str(), &follow_id, id);
        self.federation.start_following(handle, &following)?;
        self.federation.deliveries().queue(&[Delivery::new(
            inbox,
            handle.as_str(),
            &follow_id,
            activity,
            super::inbox::now_millis(),
        )])?;
        Ok(following)
    }

    /// The cook stops following `object` elsewhere, which is told `Undo`;
    /// whether they followed it.
    pub fn unfollow_elsewhere(&self, handle: &Slug, object: &str) -> Result<bool, DomainError> {
        let Some(following) = self.federation.stop_following(handle, object)? else {
            return Ok(false);
        };
        let (undo_id, undo) = activitypub::follow_undone(
            &self.base_url,
            handle.as_str(),
            &following.follow_id,
            &following.object,
        );
        self.federation.deliveries().queue(&[Delivery::new(
            &following.inbox,
            handle.as_str(),
            &undo_id,
            undo,
            super::inbox::now_millis(),
        )])?;
        Ok(true)
    }

    /// The actor document of `document`'s author (fetched from `address`),
    /// on its site, at its own address.
    pub(super) fn author_of(&self, document: &Value, address: &str) -> Result<Value, FollowError> {
        let not = |why: &str| FollowError::NotFollowable(address.to_owned(), why.to_owned());
        let id = document["id"].as_str().unwrap_or_default();
        let author = id_of(&document["attributedTo"]).ok_or_else(|| not("it has no author"))?;
        if !remote::same_site(author, id) {
            return Err(not("its author is on another site"));
        }
        let (_, actor) = self.fetch_json(author)?;
        if actor["id"].as_str() != Some(author) {
            return Err(not("its author's document is not its author"));
        }
        Ok(actor)
    }

    /// `follow_elsewhere`, unless the cook follows `address` already.
    pub fn follow_unless_following(&self, handle: &Slug, address: &str) -> Result<(), FollowError> {
        if self.federation.follows(handle, address)?.is_some() {
            return Ok(());
        }
        self.follow_elsewhere(handle, address).map(|_| ())
    }

    /// Refuses an address on this site (however its host or port is
    /// spelled) or on a blocked one.
    pub(super) fn check_elsewhere(&self, address: &str) -> Result<(), FollowError> {
        if remote::same_site(address, &self.base_url) {
            return Err(FollowError::Here(address.to_owned()));
        }
        if self.is_blocked(address) {
            let site = remote::site_of(address).unwrap_or_else(|| address.to_owned());
            return Err(FollowError::Blocked(site));
        }
        Ok(())
    }

    /// The actor address `handle` (`@ann@a.example`) names, by WebFinger
    /// over https (and over http too where private addresses are fetched:
    /// tests, and sites on one network).
    fn webfinger(&self, handle: &str) -> Result<String, FollowError> {
        let bad = || FollowError::BadAddress(handle.to_owned());
        let (user, host) = handle
            .trim_start_matches('@')
            .split_once('@')
            .filter(|(user, host)| !user.is_empty() && !host.is_empty() && !host.contains('/'))
            .ok_or_else(bad)?;
        let resource = format!("acct:{user}@{host}");
        let query: String = url::form_urlencoded::byte_serialize(resource.as_bytes()).collect();
        let mut schemes = vec!["https"];
        if self.fetcher.allows_private() {
            schemes.push("http");
        }
        let mut failed = None;
        for scheme in schemes {
            let address = format!("{scheme}://{host}/.well-known/webfinger?resource={query}");
            if self.is_blocked(&address) {
                return Err(FollowError::Blocked(host.to_owned()));
            }
            match self.fetch_json(&address) {
                Ok((_, jrd)) => {
                    return actor_link(&jrd).map(str::to_owned).ok_or_else(|| {
                        FollowError::NotFollowable(handle.to_owned(), "no actor is linked".into())
                    });
                }
                Err(error) => failed = Some(error),
            }
        }
        Err(failed.unwrap_or_else(bad))
    }

    /// The JSON document at `address`, fetched signed by the site: where it
    /// ended up, and the document.
    pub(super) fn fetch_json(&self, address: &str) -> Result<(String, Value), FollowError> {
        let key = self.site_key()?;
        let (at, text) = self
            .fetch_signed(&key, address)
            .map_err(|e| FollowError::Fetch(address.to_owned(), e))?;
        let document: Value = serde_json::from_str(&text)
            .map_err(|_| FollowError::NotFollowable(address.to_owned(), "it is not JSON".into()))?;
        // An actor, at its own address, says which signatures its site
        // takes.
        if let Some(id) = document["id"].as_str() {
            if document.get("inbox").is_some() && id == at {
                self.actors
                    .note_signatures(id, remote::implements_rfc9421(&document));
            }
        }
        Ok((at, document))
    }
}

/// Where activities for `actor` (a document) go: its site's shared inbox,
/// or its own, if it is on the actor's site.
pub(super) fn inbox_of(actor: &Value) -> Option<&str> {
    let id = actor["id"].as_str()?;
    actor["endpoints"]["sharedInbox"]
        .as_str()
        .or_else(|| actor["inbox"].as_str())
        .filter(|inbox| remote::same_site(inbox, id))
}

/// The actor a WebFinger answer (JRD) links to: its `self` link of an
/// ActivityStreams type.
pub fn actor_link(jrd: &Value) -> Option<&str> {
    jrd["links"].as_array()?.iter().find(|link| {
        link["rel"] == "self" && link["type"].as_str().is_some_and(|t| t.contains("json"))
    })?["href"]
        .as_str()
}

/// The id of an object given by its id or in full (or the first of a list).
pub(super) fn id_of(object: &Value) -> Option<&str> {
    match object {
        Value::String(id) => Some(id),
        Value::Array(items) => items.first().and_then(id_of),
        _ => object["id"].as_str(),
    }
}
