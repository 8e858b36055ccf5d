//! Activities other sites send: checked, then applied once.
//!
//! In order, each a refusal that changes nothing: the `Digest` must match
//! the body; the `Signature` must read and cover the target, host, date
//! and digest; the key's site must not be blocked nor have sent more than
//! its share this minute; the key's actor (fetched, or kept) must have
//! signed it; the activity must be JSON with an id on its actor's site and
//! that actor as its `actor`. An id applied before is a replay: answered
//! as taken, and nothing changes. Applied: `Follow` of a cook here (who is
//! told `Accept`), and `Undo` of one; anything else is taken and set aside.

use std::time::SystemTime;

use serde_json::Value;

use super::remote::{self, ActorError, RemoteActor};
use super::signature::{Request, SignatureError, Signed};
use super::Federated;
use crate::domain::federation::{Delivery, Followed, Follower, News};
use crate::domain::{DomainError, Slug, VersionNumber};
use crate::views::activitypub;

/// The largest activity taken, in bytes.
pub const MAX_ACTIVITY_BYTES: usize = 256 * 1024;
/// The longest activity id taken, in bytes: ids are kept, and an address
/// is far shorter.
pub const MAX_ID: usize = 2_048;

/// A request to an inbox, as it came.
pub struct Inbound {
    pub method: String,
    /// The path and query, as the signature's `(request-target)`.
    pub target: String,
    /// Headers by lower-case name.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// How an activity was taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Taken {
    /// Applied: its type.
    Applied(String),
    /// Applied before, by its id: nothing changed.
    Replayed,
    /// Of a type this site does nothing with, or about nothing here.
    SetAside(String),
}

/// Why an activity was refused; nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error(transparent)]
    Signature(#[from] SignatureError),
    #[error("the site {0} is blocked here")]
    Blocked(String),
    #[error("the site {0} sent more activities than it may this minute")]
    TooMany(String),
    #[error(transparent)]
    Actor(#[from] ActorError),
    #[error("the activity does not read: {0}")]
    Unreadable(String),
    #[error("there is no cook or recipe {0} here")]
    NoSuchCook(String),
    #[error(transparent)]
    Domain(#[from] DomainError),
}

impl Federated {
    /// Checks the activity `inbound` brings and applies it; see the
    /// module's documentation. Runs off the workers: it may fetch the
    /// sender's actor.
    pub fn receive(&self, inbound: &Inbound) -> Result<Taken, Refused> {
        let request = Request {
            method: &inbound.method,
            target: &inbound.target,
            headers: &inbound.headers,
        };
        let header = |name: &str| {
            inbound
                .headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        let signed = Signed::read(&request, &inbound.body)?;
        let site = remote::site_of(signed.key_id())
            .ok_or_else(|| Refused::Unreadable("its keyId is not an address".into()))?;
        if self.is_blocked(signed.key_id()) {
            return Err(Refused::Blocked(site));
        }
        // What needs no key first: nothing is fetched for a request that
        // could never be taken.
        signed.check_form(&request, true, SystemTime::now())?;
        let host = header("host").unwrap_or_default();
        if !host.eq_ignore_ascii_case(&self.host) {
            return Err(SignatureError::OtherHost(host.to_owned()).into());
        }
        let actor = self.signer(&signed, &request)?;
        // Counted once the signature is the site's own: forgeries in
        // another site's name do not use up its share.
        if !self.admits_from(&actor.id) {
            return Err(Refused::TooMany(site));
        }
        let activity = read_activity(&inbound.body, &actor)?;
        let id = activity["id"].as_str().unwrap_or_default();
        if self.federation.was_applied(&actor.id, id)? {
            return Ok(Taken::Replayed);
        }
        let taken = self.apply(&activity, &actor)?;
        if let Taken::Applied(_) = taken {
            self.federation.mark_applied(&actor.id, id, now_millis())?;
        }
        Ok(taken)
    }

    /// The actor whose key signed `request`, checked: a kept key that
    /// fails is fetched again (its actor may have made a new one) unless
    /// it was fetched a moment ago.
    fn signer(&self, signed: &Signed, request: &Request) -> Result<RemoteActor, Refused> {
        // An RFC 9421 signature may cover the target's full address.
        let scheme = self.base_url.split("://").next().unwrap_or("https");
        let key = self.site_key()?;
        let fetch = |address: &str| self.fetch_signed(&key, address);
        let actor = self.actors.get(signed.key_id(), false, &fetch)?;
        match signed.check_key(request, scheme, &actor.key) {
            Ok(()) => return Ok((*actor).clone()),
            Err(SignatureError::Invalid(_)) if !actor.is_fresh() => {}
            Err(error) => return Err(error.into()),
        }
        let actor = self.actors.get(signed.key_id(), true, &fetch)?;
        signed.check_key(request, scheme, &actor.key)?;
        Ok((*actor).clone())
    }

    fn apply(&self, activity: &Value, actor: &RemoteActor) -> Result<Taken, Refused> {
        let kind = activity["type"].as_str().unwrap_or_default();
        match kind {
            "Follow" => self.follow(activity, actor),
            "Undo" if activity["object"]["type"] == "Follow" => {
                let followed = id_of(&activity["object"]["object"]).unwrap_or_default();
                let Some(followed) = self.local_object(followed) else {
                    return Ok(Taken::SetAside("Undo".into()));
                };
                self.federation.remove_follower(&followed, &actor.id)?;
                Ok(Taken::Applied("Undo".into()))
            }
            "Undo" if activity["object"]["type"] == "Offer" => {
                let offer = id_of(&activity["object"]).unwrap_or_default();
                Ok(match self.recipes.withdraw_offer(offer, &actor.id)? {
                    true => Taken::Applied("Undo".into()),
                    false => Taken::SetAside("Undo".into()),
                })
            }
            "Offer" => self.receive_offer(activity, actor),
            "Accept" | "Reject" => {
                let follow_id = id_of(&activity["object"]).unwrap_or_default();
                if let Some(offer) = activitypub::offer_of(&self.base_url, follow_id) {
                    return self.offer_answered(kind, activity, offer, actor);
                }
                let Some(handle) = self.follower_of(follow_id) else {
                    return Ok(Taken::SetAside(kind.to_owned()));
                };
                let answered =
                    self.federation
                        .answered(&handle, follow_id, &actor.id, kind == "Accept")?;
                Ok(match answered {
                    true => Taken::Applied(kind.to_owned()),
                    false => Taken::SetAside(kind.to_owned()),
                })
            }
            "Create" | "Update" | "Delete" => self.news(kind, activity, actor),
            other => Ok(Taken::SetAside(other.to_owned())),
        }
    }

    /// A recipe made elsewhere, by the actor who sent it, that says it was
    /// forked from one here (`forkedFrom`, its page or a version's): kept
    /// as a remote fork of it. Whether it was one.
    fn remote_fork(&self, object: &Value, actor: &RemoteActor) -> Result<bool, Refused> {
        let Some(parent) = object["forkedFrom"].as_str() else {
            return Ok(false);
        };
        if id_of(&object["attributedTo"]) != Some(actor.id.as_str()) {
            return Ok(false);
        }
        let prefix = format!("{}/recipes/", self.base_url);
        let Some(path) = parent.strip_prefix(&prefix) else {
            return Ok(false);
        };
        let slug = path.split('/').next().unwrap_or_default();
        let Ok(slug) = Slug::parse(slug) else {
            return Ok(false);
        };
        let url = object["url"].as_str().or_else(|| id_of(object));
        let Some(url) = url.filter(|url| {
            remote::same_site(url, &actor.id) && url.len() <= crate::import::MAX_SOURCE_URL
        }) else {
            return Ok(false);
        };
        let site = remote::site_of(&actor.id).unwrap_or_default();
        let fork = crate::domain::RemoteFork {
            url: url.to_owned(),
            name: object["name"]
                .as_str()
                .unwrap_or("A fork")
                .chars()
                .take(200)
                .collect(),
            by: format!("@{}@{site}", actor.name.as_deref().unwrap_or("someone")),
        };
        match self.recipes.record_remote_fork(&slug, &fork) {
            Ok(_) => Ok(true),
            // Forked from a recipe that is not here (or retired), or one
            // that has all the remote forks it lists: nothing is kept.
            Err(
                DomainError::NoSuchRecipe(_)
                | DomainError::Retired { .. }
                | DomainError::Invalid(_),
            ) => Ok(false),
            Err(error) => Err(error.into()),
        }
    }

    /// An `Offer` of the changes of a fork elsewhere to a recipe here, by
    /// the fork's author: a suggestion to the recipe, which its author
    /// reviews here as any other. Whether it was one.
    fn receive_offer(&self, activity: &Value, actor: &RemoteActor) -> Result<Taken, Refused> {
        let object = &activity["object"];
        let set_aside = || Ok(Taken::SetAside("Offer".into()));
        // Offered to a version of a recipe here: `…/recipes/{slug}/versions/{n}`.
        let prefix = format!("{}/recipes/", self.base_url);
        let to = object["forkedFrom"]
            .as_str()
            .and_then(|at| at.strip_prefix(&prefix))
            .and_then(|at| at.split_once("/versions/"));
        let Some((Ok(to), Some(base))) = to.map(|(slug, n)| {
            let base = n.parse::<u64>().ok().and_then(VersionNumber::new);
            (Slug::parse(slug), base)
        }) else {
            return set_aside();
        };
        // The fork as its site serves it at the version offered, not as the
        // offer says it: no actor can offer, or be first to keep, what is
        // not theirs there.
        let at = id_of(object).unwrap_or_default();
        let version = match object["version"].as_u64() {
            Some(n) => format!("{at}/versions/{n}"),
            None => at.to_owned(),
        };
        let fork = match self.fetch_recipe(&version) {
            Ok(fork) if fork.author == actor.id && fork.address == at => fork,
            _ => return set_aside(),
        };
        let site = remote::site_of(&actor.id).unwrap_or_default();
        let offer = crate::domain::RemoteOffer {
            fork,
            to,
            base,
            base_fork_version: activity["baseForkVersion"]
                .as_u64()
                .and_then(VersionNumber::new),
            message: activity["content"].as_str().unwrap_or_default().to_owned(),
            id: activity["id"].as_str().unwrap_or_default().to_owned(),
            by: format!("@{}@{site}", actor.name.as_deref().unwrap_or("someone")),
        };
        match self.recipes.receive_offer(&offer) {
            Ok(_) => Ok(Taken::Applied("Offer".into())),
            // Offered to no recipe here (or a retired one), at a version it
            // does not have, by a fork with one open already, or unreadable.
            Err(
                DomainError::NoSuchRecipe(_)
                | DomainError::Retired { .. }
                | DomainError::Invalid(_)
                | DomainError::BadSlug(_)
                | DomainError::Content(_)
                | DomainError::AlreadySuggested { .. },
            ) => set_aside(),
            Err(error) => Err(error.into()),
        }
    }

    /// The `Accept` or `Reject` of an offer made from here, by the author
    /// of the recipe it was made to: recorded on the suggestion. Whether
    /// it was one.
    fn offer_answered(
        &self,
        kind: &str,
        activity: &Value,
        suggestion: u64,
        actor: &RemoteActor,
    ) -> Result<Taken, Refused> {
        let Some(answer) = answer_of(kind, activity) else {
            return Ok(Taken::SetAside(kind.to_owned()));
        };
        match self
            .recipes
            .record_offer_answer(suggestion, &actor.id, &answer)
        {
            Ok(true) => Ok(Taken::Applied(kind.to_owned())),
            Ok(false) | Err(DomainError::Invalid(_)) => Ok(Taken::SetAside(kind.to_owned())),
            Err(error) => Err(error.into()),
        }
    }

    /// An `Update` of a recipe kept here (the parent of a fork of it), by
    /// its author: its new version kept, so that the fork's page says so
    /// and brings it in. Whether it was one.
    fn update_kept(&self, object: &Value, actor: &RemoteActor) -> Result<bool, Refused> {
        let address = object["isPartOf"]
            .as_str()
            .or_else(|| id_of(object))
            .unwrap_or_default();
        if self
            .recipes
            .snapshot()
            .find(&Slug::elsewhere(address))?
            .is_none()
        {
            return Ok(false);
        }
        let author = super::forking::RemoteAuthor {
            id: &actor.id,
            name: actor.name.as_deref(),
            inbox: &actor.inbox,
        };
        let at = id_of(object).unwrap_or_default();
        let Ok(parent) = super::forking::remote_parent(object, at, &author) else {
            return Ok(false);
        };
        match self.recipes.keep_remote(&parent) {
            Ok(_) => Ok(true),
            // Told by another than its author, older than the kept one,
            // or at an address not written the one way.
            Err(DomainError::Invalid(_) | DomainError::BadSlug(_)) => Ok(false),
            Err(error) => Err(error.into()),
        }
    }

    /// A `Delete` of a recipe kept here, by its author: kept as retired.
    /// Whether it was one.
    fn retire_kept(&self, object_id: &str, actor: &RemoteActor) -> Result<bool, Refused> {
        match self.recipes.retire_remote(object_id, &actor.id) {
            Ok(retired) => Ok(retired),
            // Told by another than its author, or at an address not
            // written the one way.
            Err(DomainError::Invalid(_) | DomainError::BadSlug(_)) => Ok(false),
            Err(error) => Err(error.into()),
        }
    }

    /// A `Delete` of a remote fork of a recipe here, by the site it is on:
    /// it is no longer listed. Whether it was one.
    fn forget_remote_fork(&self, object_id: &str, actor: &RemoteActor) -> Result<bool, Refused> {
        if !remote::same_site(object_id, &actor.id) {
            return Ok(false);
        }
        Ok(self.recipes.forget_remote_fork(object_id)?)
    }

    /// The cook here whose `Follow` has the id `follow_id`, if it is one
    /// of ours (`{cook}#follows/…`).
    fn follower_of(&self, follow_id: &str) -> Option<Slug> {
        let (cook, _) = follow_id.split_once("#follows/")?;
        self.local_cook(cook)
    }

    /// News of a recipe (or of anything a followed actor made), for the
    /// cooks here who follow its actor, or who follow the object and whose
    /// follow this actor answers for: no one else on a followed site
    /// speaks for it.
    fn news(&self, kind: &str, activity: &Value, actor: &RemoteActor) -> Result<Taken, Refused> {
        let object = &activity["object"];
        let object_id = id_of(object).unwrap_or_default();
        if !remote::same_site(object_id, &actor.id) {
            return Err(Refused::Unreadable(
                "its object is on another site than its actor".into(),
            ));
        }
        let forked_here = match kind {
            "Create" => self.remote_fork(object, actor)?,
            "Update" => self.update_kept(object, actor)?,
            // Either a fork of a recipe here, or a recipe kept here.
            "Delete" => {
                self.forget_remote_fork(object_id, actor)? | self.retire_kept(object_id, actor)?
            }
            _ => false,
        };
        let mut cooks = self.federation.followers_here(&actor.id)?;
        // Those who follow the object itself, if this actor is the one who
        // answers for it (whom their follow was sent to).
        for cook in self.federation.followers_here(object_id)? {
            let follows = self.federation.follows(&cook, object_id)?;
            if follows.is_some_and(|f| f.actor == actor.id) {
                cooks.push(cook);
            }
        }
        cooks.sort();
        cooks.dedup();
        let url = object["url"]
            .as_str()
            .filter(|url| remote::same_site(url, &actor.id) && url.len() <= MAX_ID)
            .unwrap_or(object_id);
        if cooks.is_empty() || url.len() > MAX_ID {
            return Ok(match forked_here {
                true => Taken::Applied(kind.to_owned()),
                false => Taken::SetAside(kind.to_owned()),
            });
        }
        let site = remote::site_of(&actor.id).unwrap_or_default();
        let news = News {
            kind: kind.to_owned(),
            url: url.to_owned(),
            name: object["name"]
                .as_str()
                .unwrap_or_default()
                .chars()
                .take(200)
                .collect(),
            by: format!("@{}@{site}", actor.name.as_deref().unwrap_or("someone")),
            version: object["version"].as_u64(),
            at: now_millis(),
        };
        let id = activity["id"].as_str().unwrap_or_default();
        for cook in cooks {
            self.federation.add_news(&cook, &news, id)?;
        }
        Ok(Taken::Applied(kind.to_owned()))
    }

    /// A `Follow` of a cook or a recipe here: the follower is kept, and
    /// told `Accept` by the cook (the recipe's author).
    fn follow(&self, activity: &Value, actor: &RemoteActor) -> Result<Taken, Refused> {
        let object = id_of(&activity["object"]).unwrap_or_default();
        let no_one = || Refused::NoSuchCook(object.to_owned());
        let followed = self.local_object(object).ok_or_else(no_one)?;
        let snapshot = self.recipes.snapshot();
        let accepting = match &followed {
            Followed::Cook(handle) => {
                crate::domain::pages::public_cook(&snapshot, handle)?.ok_or_else(no_one)?;
                handle.clone()
            }
            Followed::Recipe(slug) => {
                let recipe = snapshot.current(slug).map_err(|_| no_one())?;
                let author = recipe.author.as_deref().and_then(|a| Slug::parse(a).ok());
                author.ok_or_else(no_one)?
            }
        };
        let follow_id = activity["id"].as_str().unwrap_or_default();
        self.federation.add_follower(
            &followed,
            &Follower {
                actor: actor.id.clone(),
                inbox: actor.inbox.clone(),
                follow: follow_id.to_owned(),
            },
        )?;
        let (accept_id, accept) = activitypub::accept(
            &self.base_url,
            accepting.as_str(),
            follow_id,
            &actor.id,
            object,
        );
        self.federation.deliveries().queue(&[Delivery::new(
            &actor.inbox,
            accepting.as_str(),
            &accept_id,
            accept,
            now_millis(),
        )])?;
        Ok(Taken::Applied("Follow".into()))
    }
}

use super::following::id_of;

/// The activity in `body`, sent by `actor`: JSON, with an id on the
/// actor's site, a type, and the actor as its `actor`.
fn read_activity(body: &[u8], actor: &RemoteActor) -> Result<Value, Refused> {
    let unreadable = |why: &str| Refused::Unreadable(why.to_owned());
    let activity: Value = serde_json::from_slice(body).map_err(|_| unreadable("not JSON"))?;
    let id = activity["id"]
        .as_str()
        .ok_or_else(|| unreadable("it has no id"))?;
    if id.len() > MAX_ID {
        return Err(unreadable("its id is too long"));
    }
    if !remote::same_site(id, &actor.id) {
        return Err(unreadable("its id is on another site than its actor"));
    }
    activity["type"]
        .as_str()
        .ok_or_else(|| unreadable("it has no type"))?;
    if id_of(&activity["actor"]) != Some(actor.id.as_str()) {
        return Err(unreadable("its actor is not the one who signed it"));
    }
    Ok(activity)
}

/// Now, in milliseconds since the epoch.
pub(super) fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// What an `Accept` or `Reject` (`kind`) of an offer made from here says:
/// none for an accept that names no version that took it.
fn answer_of(kind: &str, activity: &Value) -> Option<crate::domain::OfferAnswer> {
    let accepted = match kind {
        "Accept" => {
            let result = id_of(&activity["result"])?;
            let kept_own = activity["keptOwn"].as_u64().unwrap_or(0);
            Some((
                result.to_owned(),
                activity["whole"].as_bool().unwrap_or(false),
                u32::try_from(kept_own).unwrap_or(u32::MAX),
            ))
        }
        _ => None,
    };
    let reply = activity["content"]
        .as_str()
        .map(|r| r.chars().take(crate::domain::MAX_MESSAGE).collect());
    Some(crate::domain::OfferAnswer {
        accepted,
        // `closed` is what forkful said before `retired`.
        closed: activity["retired"]
            .as_bool()
            .or_else(|| activity["closed"].as_bool())
            .unwrap_or(false),
        reply,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_reject_says_its_recipe_was_retired_as_forkful_says_it_now_and_said_it_before() {
        let closed = |activity: Value| answer_of("Reject", &activity).unwrap().closed;
        assert!(closed(json!({"type": "Reject", "retired": true})));
        assert!(closed(json!({"type": "Reject", "closed": true})));
        assert!(!closed(json!({"type": "Reject", "content": "No."})));
        let accept = json!({"type": "Accept", "result": "https://a.example/recipes/soup/versions/2",
                            "whole": true, "keptOwn": 1, "content": "Yes."});
        let answer = answer_of("Accept", &accept).unwrap();
        assert_eq!(
            answer.accepted,
            Some(("https://a.example/recipes/soup/versions/2".into(), true, 1))
        );
        assert_eq!(answer.reply.as_deref(), Some("Yes."));
        assert!(answer_of("Accept", &json!({"type": "Accept"})).is_none());
    }
}
