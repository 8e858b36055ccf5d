//! ActivityPub: how this site talks with other sites (Mastodon, other
//! forkfuls). A cook is an actor and a recipe an object at their pages'
//! addresses (`views::activitypub` writes the documents); other sites
//! follow cooks through their inboxes (`inbox`), and are told of new
//! recipes and versions by deliveries queued from the store's
//! transactions and sent, signed, off the workers that serve pages
//! (`delivery`). Every request in is checked by its HTTP signature
//! (`signature`) with the key of its actor (`remote`), fetched through
//! the same guard as imports.

pub mod delivery;
pub mod following;
pub mod forking;
pub mod inbox;
pub mod remote;
pub mod rfc9421;
pub mod signature;

use std::time::{Duration, SystemTime};

use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::domain::federation::{Federation, Followed, KeyPair};
use crate::domain::{DomainError, Recipes, Slug};
use crate::import::{FetchError, Fetcher};
use crate::views::activitypub;

/// Activities a minute one other site may send, and so also its burst.
pub const ACTIVITIES_PER_MINUTE: u32 = 300;
/// How long after a failed delivery it is tried again, doubled each time.
pub const RETRY_AFTER: Duration = Duration::from_secs(30);

/// What the site needs to federate; see the module's documentation.
pub struct Federated {
    base_url: String,
    /// The base URL's host, with its port if it has one: the `@host` of
    /// its cooks' handles.
    host: String,
    federation: Federation,
    recipes: Recipes,
    fetcher: Fetcher,
    actors: remote::Actors,
    blocked: Vec<String>,
    per_site: DefaultKeyedRateLimiter<String>,
    retry_after: Duration,
    /// The site's own key pair, once read: it signs every fetch.
    site_key: std::sync::OnceLock<KeyPair>,
}

/// How a site federates, besides its address.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Sites (hosts, and every host under them) nothing is taken from or
    /// sent to.
    pub blocked: Vec<String>,
    /// The first wait before a failed delivery is tried again.
    pub retry_after: Duration,
    pub activities_per_minute: u32,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            blocked: Vec::new(),
            retry_after: RETRY_AFTER,
            activities_per_minute: ACTIVITIES_PER_MINUTE,
        }
    }
}

/// A name another site gave (an actor's, a recipe's) as this site keeps
/// it: without its control characters, at most `max` characters; `None`
/// where nothing visible is left of it.
fn shown_name(name: &str, max: usize) -> Option<String> {
    let shown: String = (name.chars())
        .filter(|c| !c.is_control())
        .take(max)
        .collect();
    (!shown.trim().is_empty()).then_some(shown)
}

/// A host as blocks compare it: lower case, without a trailing dot.
fn normal_host(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// The host of `address`, as blocks and limits compare it.
fn host_of(address: &str) -> Option<String> {
    url::Url::parse(address)
        .ok()
        .and_then(|u| u.host_str().map(normal_host))
}

impl Federated {
    pub fn new(
        recipes: &Recipes,
        base_url: &str,
        fetcher: &Fetcher,
        settings: Settings,
    ) -> Result<Federated, DomainError> {
        let base_url = base_url.trim_end_matches('/').to_owned();
        let host = remote::site_of(&base_url).unwrap_or_default();
        let per_minute =
            std::num::NonZeroU32::new(settings.activities_per_minute.max(1)).expect("at least one");
        Ok(Federated {
            host,
            federation: Federation::open(recipes)?,
            recipes: recipes.clone(),
            fetcher: fetcher.apart(),
            actors: remote::Actors::default(),
            blocked: settings
                .blocked
                .iter()
                .filter_map(|host| {
                    // As a URL's host reads: punycode, lower case.
                    let host = host.trim().trim_start_matches('.');
                    let url = url::Url::parse(&format!("http://{host}/")).ok()?;
                    url.host_str().map(normal_host)
                })
                .filter(|host| !host.is_empty())
                .collect(),
            per_site: RateLimiter::keyed(Quota::per_minute(per_minute)),
            retry_after: settings.retry_after,
            site_key: std::sync::OnceLock::new(),
            base_url,
        })
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The host of the site's handles (`ann@host`).
    pub fn host(&self) -> &str {
        &self.host
    }

    pub fn federation(&self) -> &Federation {
        &self.federation
    }

    pub fn recipes(&self) -> &Recipes {
        &self.recipes
    }

    /// Whether `address` is on a site the operator blocked (its host, or
    /// one under it, however spelled: a trailing dot, upper case, Unicode
    /// or punycode).
    pub fn is_blocked(&self, address: &str) -> bool {
        let Some(host) = host_of(address) else {
            return true;
        };
        self.blocked
            .iter()
            .any(|b| host == *b || host.ends_with(&format!(".{b}")))
    }

    /// Forgets the rate limit's state of sites that sent nothing lately.
    pub fn forget_quiet_sites(&self) {
        self.per_site.retain_recent();
        self.per_site.shrink_to_fit();
    }

    /// Whether the site of `address` (its host) may send one more activity
    /// now.
    fn admits_from(&self, address: &str) -> bool {
        let host = host_of(address).unwrap_or_default();
        self.per_site.check_key(&host).is_ok()
    }

    /// `attempt`, at `address`, signed in the form its site takes: RFC
    /// 9421 where an actor of the site said it takes that (FEP-844e),
    /// draft-cavage otherwise. A site that said so but refuses the request
    /// (400, 401, 403) is asked again the older way, which every peer
    /// reads; where that is taken, it is asked that way from then on. (A
    /// refusal of both forms says nothing of the form: an address that
    /// refuses everyone, or a key it could not fetch just then.)
    pub(super) fn signed_as_its_site_takes<T>(
        &self,
        address: &str,
        attempt: impl Fn(signature::Form) -> Result<T, FetchError>,
    ) -> Result<T, FetchError> {
        if !self.actors.takes_rfc9421(address) {
            return attempt(signature::Form::Cavage);
        }
        match attempt(signature::Form::Rfc9421) {
            Err(FetchError::Status(400 | 401 | 403)) => {
                let older = attempt(signature::Form::Cavage);
                if older.is_ok() {
                    tracing::info!(%address, "a site that says it takes RFC 9421 signatures refused one");
                    self.actors.refused_rfc9421(address);
                }
                older
            }
            other => other,
        }
    }

    /// `address`, fetched signed by `site_key` as the site's own actor,
    /// in the form its site takes: where the fetch ended up, and the
    /// document.
    pub(super) fn fetch_signed(
        &self,
        site_key: &KeyPair,
        address: &str,
    ) -> Result<(String, String), FetchError> {
        let key_id = activitypub::site_key_id(&self.base_url);
        self.signed_as_its_site_takes(address, |form| {
            let sign = |url: &url::Url, body: Option<&[u8]>| {
                let method = if body.is_some() { "POST" } else { "GET" };
                signature::sign_in(
                    form,
                    site_key,
                    &key_id,
                    method,
                    url,
                    body,
                    SystemTime::now(),
                )
            };
            self.fetcher.fetch_document(address, &sign)
        })
    }

    /// The site's own key pair, which signs its fetches: read (and parsed)
    /// once, since once made it never changes.
    fn site_key(&self) -> Result<KeyPair, DomainError> {
        Ok(match self.site_key.get() {
            Some(key) => key.clone(),
            None => {
                let key = self.federation.site_key_pair()?;
                self.site_key.get_or_init(|| key).clone()
            }
        })
    }

    /// The key pair of the cook with `handle`, made on first use.
    pub fn key_pair(&self, handle: &Slug) -> Result<KeyPair, DomainError> {
        self.federation.key_pair(handle)
    }

    /// The cook whose actor id is `address`, if it is one of this site's.
    pub fn local_cook(&self, address: &str) -> Option<Slug> {
        let prefix = format!("{}/cooks/", self.base_url);
        let handle = address.strip_prefix(&prefix)?;
        Slug::parse(handle).ok()
    }

    /// The cook or recipe here whose id is `address`, if it is one.
    pub fn local_object(&self, address: &str) -> Option<Followed> {
        if let Some(handle) = self.local_cook(address) {
            return Some(Followed::Cook(handle));
        }
        let prefix = format!("{}/recipes/", self.base_url);
        let slug = address.strip_prefix(&prefix)?;
        Slug::parse(slug).ok().map(Followed::Recipe)
    }
}
