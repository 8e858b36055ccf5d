//! What cooks here follow on other sites, and the news that came of it.
//!
//! A follow is kept twice in one write: under the cook (`cook/<handle>
//! <object>`, the `Following`) and under what is followed (`object/<object>
//! <handle>`), so that an activity from elsewhere finds the cooks it is
//! news for in one read. News is kept per cook, newest last, at most
//! `NEWS_KEPT`.

use serde::{Deserialize, Serialize};

use super::super::slug::Slug;
use super::super::DomainError;
use super::Federation;

/// News kept per cook; the oldest go first.
pub const NEWS_KEPT: usize = 100;

/// Something on another site a cook here follows: a cook (an actor) or a
/// recipe (an object).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Following {
    /// Its id (an address).
    pub object: String,
    /// What to call it: `@ann@a.example`, or a recipe's title.
    pub name: String,
    /// The actor who answers for it (itself, or the recipe's author).
    pub actor: String,
    /// Where the follow (and its undoing) is sent.
    pub inbox: String,
    /// The id of the `Follow` sent.
    pub follow_id: String,
    /// Whether it accepted.
    pub accepted: bool,
}

/// News from another site, for a cook who follows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct News {
    /// `Create`, `Update` or `Delete`.
    pub kind: String,
    /// The recipe's address there.
    pub url: String,
    /// Its title (empty for a `Delete`).
    pub name: String,
    /// Who it is by: `@ann@a.example`.
    pub by: String,
    /// Its version, if it said.
    pub version: Option<u64>,
    /// When it came, in milliseconds since the epoch.
    pub at: i64,
}

fn cook_key(handle: &Slug, object: &str) -> Vec<u8> {
    format!("cook/{handle} {object}").into_bytes()
}

fn object_key(object: &str, handle: &Slug) -> Vec<u8> {
    format!("object/{object} {handle}").into_bytes()
}

impl Federation {
    /// What the cook with `handle` follows elsewhere.
    pub fn following(&self, handle: &Slug) -> Result<Vec<Following>, DomainError> {
        let mut out = Vec::new();
        for entry in self
            .following
            .scan_prefix(format!("cook/{handle} ").as_bytes())
        {
            let (_, value) = entry?;
            if let Ok(following) = serde_json::from_slice(&value) {
                out.push(following);
            }
        }
        Ok(out)
    }

    /// What the cook follows at `object`, if they do.
    pub fn follows(&self, handle: &Slug, object: &str) -> Result<Option<Following>, DomainError> {
        Ok(self
            .following
            .get(&cook_key(handle, object))?
            .and_then(|value| serde_json::from_slice(&value).ok()))
    }

    /// The cook follows `following` from now on (its follow not yet
    /// accepted, unless it says so).
    pub fn start_following(&self, handle: &Slug, following: &Following) -> Result<(), DomainError> {
        let value = serde_json::to_vec(following).expect("a following serialises");
        self.following.insert_all(&[
            (cook_key(handle, &following.object), value),
            (object_key(&following.object, handle), Vec::new()),
        ])?;
        Ok(())
    }

    /// The cook no longer follows `object`; what they followed there, if
    /// anything.
    pub fn stop_following(
        &self,
        handle: &Slug,
        object: &str,
    ) -> Result<Option<Following>, DomainError> {
        let Some(following) = self.follows(handle, object)? else {
            return Ok(None);
        };
        self.following
            .remove_all([cook_key(handle, object), object_key(object, handle)])?;
        Ok(Some(following))
    }

    /// The cooks here who follow `object` (a cook's or a recipe's id there).
    pub fn followers_here(&self, object: &str) -> Result<Vec<Slug>, DomainError> {
        let prefix = format!("object/{object} ");
        let mut cooks = Vec::new();
        for entry in self.following.scan_prefix(prefix.as_bytes()) {
            let (key, _) = entry?;
            let handle = String::from_utf8_lossy(&key[prefix.len()..]).into_owned();
            if let Ok(handle) = Slug::parse(&handle) {
                cooks.push(handle);
            }
        }
        Ok(cooks)
    }

    /// The cook's follow whose `Follow` had the id `follow_id` was
    /// accepted (`accepted`) or refused (the follow is then dropped) by
    /// `by`, the actor it was sent to. Whether it was theirs to answer.
    pub fn answered(
        &self,
        handle: &Slug,
        follow_id: &str,
        by: &str,
        accepted: bool,
    ) -> Result<bool, DomainError> {
        let Some(mut following) = self
            .following(handle)?
            .into_iter()
            .find(|f| f.follow_id == follow_id && f.actor == by)
        else {
            return Ok(false);
        };
        if accepted {
            following.accepted = true;
            self.start_following(handle, &following)?;
        } else {
            self.stop_following(handle, &following.object)?;
        }
        Ok(true)
    }

    /// Keeps `news` for the cook, dropping their oldest past `NEWS_KEPT`.
    pub fn add_news(&self, handle: &Slug, news: &News, id: &str) -> Result<(), DomainError> {
        let key = format!(
            "{handle} {:016x} {}",
            news.at.max(0),
            crate::domain::hex(&blake2_16(id.as_bytes()))
        );
        let value = serde_json::to_vec(news).expect("news serialises");
        self.news.insert(key.as_bytes(), &value)?;
        let keys: Vec<Vec<u8>> = self
            .news
            .scan_prefix(format!("{handle} ").as_bytes())
            .map(|entry| entry.map(|(key, _)| key.to_vec()))
            .collect::<Result<_, _>>()?;
        let over = keys.len().saturating_sub(NEWS_KEPT);
        if over > 0 {
            self.news.remove_all(keys.into_iter().take(over))?;
        }
        Ok(())
    }

    /// The cook's news, newest first.
    pub fn news(&self, handle: &Slug) -> Result<Vec<News>, DomainError> {
        let mut out = Vec::new();
        for entry in self.news.scan_prefix(format!("{handle} ").as_bytes()) {
            let (_, value) = entry?;
            if let Ok(news) = serde_json::from_slice(&value) {
                out.push(news);
            }
        }
        out.reverse();
        Ok(out)
    }
}

fn blake2_16(bytes: &[u8]) -> Vec<u8> {
    use blake2::Digest;
    blake2::Blake2b::<blake2::digest::consts::U8>::digest(bytes).to_vec()
}
