//! What this site keeps to speak ActivityPub with other sites: each
//! cook's key pair, who follows whom from elsewhere, the activities
//! already applied, and the deliveries still to make.
//!
//! All of it lives in keyspaces beside the accounts (in PostgreSQL on a
//! cluster, so that every node signs with the same keys and sees the same
//! followers and queue), written with compare-and-swap where two nodes
//! could race: the first key pair made for a cook is the one kept, an
//! activity id is applied once, a delivery is claimed by one node.

mod announcements;
mod deliveries;
mod following;
mod keys;
mod offers;

pub use announcements::{announcements_since, outbox, Announcement, Happened};
pub use deliveries::{Claimed, Deliveries, Delivery, Outcome, MAX_ATTEMPTS};
pub use following::{Following, News, NEWS_KEPT};
pub use keys::{BadKey, KeyPair, PublicKey, KEY_BITS};
pub use offers::{offers_since, OfferAnswered, OfferMade, OfferWithdrawn, OffersSince};

use serde::{Deserialize, Serialize};

use super::slug::Slug;
use super::{DomainError, Recipes};
use crate::store::Keyspace;

/// The key pair the site itself signs with (its fetches of other sites'
/// documents), kept under a name no handle can have.
const SITE_KEY: &[u8] = b"site";

/// What someone elsewhere follows here: a cook (their new recipes and
/// versions) or one recipe (its new versions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Followed {
    Cook(Slug),
    Recipe(Slug),
}

impl Followed {
    /// Where its followers' keys start: a handle, or `recipe/` and a slug
    /// (a slug has no `/`, so the two never meet).
    fn prefix(&self) -> String {
        match self {
            Followed::Cook(handle) => format!("{handle} "),
            Followed::Recipe(slug) => format!("recipe/{slug} "),
        }
    }
}

/// Someone elsewhere who follows a cook or a recipe here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Follower {
    /// Their actor's id (an address).
    pub actor: String,
    /// Where activities for them are sent: their site's shared inbox
    /// where it has one, else their own.
    pub inbox: String,
    /// The id of the `Follow` that made them a follower (an `Undo` names it).
    pub follow: String,
}

/// The domain's handle on what federation keeps.
#[derive(Clone)]
pub struct Federation {
    /// `private/<handle>`: the cook's key pair (PKCS#8 PEM); `public/<handle>`:
    /// its public half (SPKI PEM); `site`: the site's own pair.
    keys: Keyspace,
    /// `<handle> <actor id>` (a cook's) and `recipe/<slug> <actor id>` (a
    /// recipe's): a `Follower`, as JSON.
    followers: Keyspace,
    /// A hash of an actor and its activity's id: when it was applied
    /// (milliseconds since the epoch).
    seen: Keyspace,
    deliveries: Deliveries,
    /// What cooks here follow elsewhere (`following`).
    following: Keyspace,
    /// `<handle> <millis> <id hash>`: news for a cook (`following`).
    news: Keyspace,
}

impl Federation {
    pub fn open(recipes: &Recipes) -> Result<Federation, DomainError> {
        let store = recipes.store();
        Ok(Federation {
            keys: store.keyspace("actor-keys")?,
            followers: store.keyspace("followers")?,
            seen: store.keyspace("activities-seen")?,
            deliveries: Deliveries::new(store.keyspace("deliveries")?),
            following: store.keyspace("following")?,
            news: store.keyspace("news")?,
        })
    }

    pub fn deliveries(&self) -> &Deliveries {
        &self.deliveries
    }

    /// The cook's key pair, made on first use: whichever node makes it
    /// first, every node signs with that one. Making one is a fraction of
    /// a second of a core: call this off the workers that serve pages.
    pub fn key_pair(&self, handle: &Slug) -> Result<KeyPair, DomainError> {
        self.key_pair_at(format!("private/{handle}").as_bytes())
    }

    /// The site's own key pair (`key_pair`'s, for the site's actor).
    pub fn site_key_pair(&self) -> Result<KeyPair, DomainError> {
        self.key_pair_at(SITE_KEY)
    }

    /// Whether the cook's key pair was made: whether they have spoken to
    /// other sites.
    pub fn has_key(&self, handle: &Slug) -> Result<bool, DomainError> {
        Ok(self
            .keys
            .get(format!("private/{handle}").as_bytes())?
            .is_some())
    }

    /// The public half of the cook's key (SPKI PEM), made with the pair
    /// on first use: kept apart, so that serving an actor reads a line
    /// rather than parsing a private key.
    pub fn public_key_pem(&self, handle: &Slug) -> Result<String, DomainError> {
        let public = format!("public/{handle}");
        if let Some(pem) = self.keys.get(public.as_bytes())? {
            return Ok(String::from_utf8_lossy(&pem).into_owned());
        }
        let pem = self.key_pair(handle)?.public_pem().to_owned();
        // Derived from the kept pair, so every node writes the same bytes.
        self.keys.insert(public.as_bytes(), pem.as_bytes())?;
        Ok(pem)
    }

    fn key_pair_at(&self, key: &[u8]) -> Result<KeyPair, DomainError> {
        if let Some(pem) = self.keys.get(key)? {
            return read_pair(&pem);
        }
        let made = KeyPair::generate().map_err(|e| DomainError::Invalid(e.to_string()))?;
        let pem = made
            .to_pem()
            .map_err(|e| DomainError::Invalid(e.to_string()))?;
        if self
            .keys
            .compare_and_swap(key, None, Some(pem.as_bytes()))?
        {
            return Ok(made);
        }
        // Another node (or request) made one first: theirs is the key.
        let kept = self
            .keys
            .get(key)?
            .ok_or_else(|| DomainError::Invalid("a key pair was made and is gone".to_owned()))?;
        read_pair(&kept)
    }

    /// Those who follow `followed` from elsewhere, by actor id.
    pub fn followers(&self, followed: &Followed) -> Result<Vec<Follower>, DomainError> {
        let mut followers = Vec::new();
        for entry in self.followers.scan_prefix(followed.prefix().as_bytes()) {
            let (_, value) = entry?;
            if let Ok(follower) = serde_json::from_slice::<Follower>(&value) {
                followers.push(follower);
            }
        }
        Ok(followers)
    }

    /// How many follow `followed` from elsewhere.
    pub fn follower_count(&self, followed: &Followed) -> Result<usize, DomainError> {
        let mut count = 0;
        for entry in self.followers.scan_prefix(followed.prefix().as_bytes()) {
            entry?;
            count += 1;
        }
        Ok(count)
    }

    /// `follower` follows `followed` from now on (again, if they did:
    /// their inbox and follow are the newest ones).
    pub fn add_follower(
        &self,
        followed: &Followed,
        follower: &Follower,
    ) -> Result<(), DomainError> {
        let value = serde_json::to_vec(follower).expect("a follower serialises");
        self.followers
            .insert(&follower_key(followed, &follower.actor), &value)?;
        Ok(())
    }

    /// `actor` no longer follows `followed`; whether they did.
    pub fn remove_follower(&self, followed: &Followed, actor: &str) -> Result<bool, DomainError> {
        Ok(self.followers.remove(&follower_key(followed, actor))?)
    }

    /// Whether the activity `id`, by `actor`, was applied already (a
    /// retry, or a replay, which then changes nothing). Kept by actor, so
    /// that no one can mark another's ids as seen before they are sent.
    pub fn was_applied(&self, actor: &str, id: &str) -> Result<bool, DomainError> {
        Ok(self.seen.get(&seen_key(actor, id))?.is_some())
    }

    /// Marks the activity `id`, by `actor`, applied at `now_millis`.
    /// Marked after it is applied, so that one whose applying failed is
    /// applied when it comes again; what is applied (a follower kept, an
    /// answer queued) comes out the same if two copies race.
    pub fn mark_applied(&self, actor: &str, id: &str, now_millis: i64) -> Result<(), DomainError> {
        self.seen
            .insert(&seen_key(actor, id), now_millis.to_string().as_bytes())?;
        Ok(())
    }

    /// Forgets the activities applied before `millis`: one older than a
    /// signature's window could not be sent again anyway. How many.
    pub fn forget_applied_before(&self, millis: i64) -> Result<usize, DomainError> {
        let mut old = Vec::new();
        for entry in self.seen.scan_prefix(b"") {
            let (key, value) = entry?;
            let at = std::str::from_utf8(&value)
                .ok()
                .and_then(|v| v.parse::<i64>().ok())
                .unwrap_or(0);
            if at < millis {
                old.push(key.to_vec());
            }
        }
        Ok(self.seen.remove_all(old)?)
    }
}

/// An applied activity's key: a hash of its actor and id, of a fixed size
/// however long they are.
fn seen_key(actor: &str, id: &str) -> Vec<u8> {
    use blake2::Digest;
    let mut hasher = blake2::Blake2b::<blake2::digest::consts::U32>::new();
    hasher.update(actor.as_bytes());
    hasher.update([0]);
    hasher.update(id.as_bytes());
    hasher.finalize().to_vec()
}

fn follower_key(followed: &Followed, actor: &str) -> Vec<u8> {
    format!("{}{actor}", followed.prefix()).into_bytes()
}

fn read_pair(pem: &[u8]) -> Result<KeyPair, DomainError> {
    let pem = std::str::from_utf8(pem).map_err(|e| DomainError::Invalid(e.to_string()))?;
    KeyPair::from_pem(pem).map_err(|e| DomainError::Invalid(e.to_string()))
}
