//! Login, sign-up and password-change attempts, limited per address and
//! per account, so that a password cannot be guessed at the speed of the
//! network; imports and pictures, limited per cook; and picture decodes,
//! limited across the server.
//!
//! A token bucket per key (an address, a handle, a cook) from the
//! `governor` crate (the GCRA that actix-governor wraps; that middleware is
//! GPL-3.0, and the handlers that need a limit only need one call). The
//! address is the client's (`client_address`): behind a reverse proxy the
//! site was told to trust, the one the proxy names, so one visitor's
//! guesses do not lock everyone out. A request that came in over no socket
//! (the in-process tests' requests) has no address and is limited by
//! account alone. Only attempts that pass the form check are counted:
//! junk without a form token costs the server no hashing and nobody their
//! bucket.
//!
//! A limit per cook bounds what one account does in an hour, not what
//! runs at once: accounts are free, and 30 cooks sending a picture each
//! would decode 30 pictures together. `PictureDecodes` bounds that, here
//! and not in `domain::pictures`, which decodes one picture and knows
//! nothing of requests: how many run at once, how long a request waits
//! for its turn and what it is told when it cannot have one are the
//! server's concerns, like its worker threads.

use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::Duration;

use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use super::blocking::{Gate, NoPlace, Place};
use super::WebError;

/// Attempts a minute an address may make, and so also its burst.
pub const ATTEMPTS_PER_MINUTE: u32 = 10;

/// Imports a minute a cook may ask for, and so also their burst (10 at
/// once, then one every 6 seconds). Each fetches a page from another site
/// (up to 10 s, off the workers) or reads a pasted one, so a cook could
/// otherwise keep the server busy fetching for them. Keyed by the cook,
/// not the address: only cooks import, and a proxy's address would be
/// everyone's.
pub const IMPORTS_PER_MINUTE: u32 = 10;

/// Pictures an hour a cook may send, and so also their burst (30 at once,
/// then one every 2 minutes). Each is stored as it arrives (so that a form
/// shown again keeps it), even if the form is never saved, and is kept on
/// disk.
pub const PICTURES_PER_HOUR: u32 = 30;

/// A node's share of a limit meant for the whole site, served by `nodes`
/// nodes: each counts on its own, so each takes its share and the site
/// as a whole allows what the limit says (a proxy spreading one client's
/// requests over the nodes; one that sends a client always to one node
/// gives it a share only). At least one.
pub fn share(limit: u32, nodes: u32) -> u32 {
    limit.div_ceil(nodes.max(1)).max(1)
}

/// Keys remembered before those that are idle again are dropped.
const MAX_KEYS: usize = 100_000;

/// A token bucket per key.
struct Buckets<K: Hash + Eq + Clone> {
    limiter: DefaultKeyedRateLimiter<K>,
}

impl<K: Hash + Eq + Clone> Buckets<K> {
    fn new(quota: Quota) -> Buckets<K> {
        Buckets {
            limiter: RateLimiter::keyed(quota),
        }
    }

    /// Takes a token from `key`'s bucket; false if it is empty.
    fn take(&self, key: &K) -> bool {
        if self.limiter.len() > MAX_KEYS {
            self.limiter.retain_recent();
        }
        self.limiter.check_key(key).is_ok()
    }
}

/// Attempts at a password: per client address (an IPv6 client's /64), and
/// per account, so that many addresses guessing one cook's password are
/// slowed as one. An address the account was logged in to from lately is
/// not held to the account's bucket, only to its own: else anyone could
/// spend a chosen cook's bucket, from addresses of their own, and keep
/// them from logging in for as long as they kept at it.
pub struct AttemptLimit {
    by_address: Buckets<IpAddr>,
    by_account: Buckets<String>,
    /// When each account was last logged in to (or signed up) from each
    /// address (its limit key), as far as this node saw.
    known: quick_cache::sync::Cache<(String, IpAddr), std::time::Instant>,
}

/// How long an address an account was logged in to from stays known to
/// it: as long as the session it got.
const KNOWN_FOR: Duration =
    Duration::from_secs(crate::domain::accounts::SESSION_DAYS as u64 * 24 * 3_600);

impl AttemptLimit {
    pub fn per_minute(attempts: u32) -> AttemptLimit {
        AttemptLimit {
            by_address: Buckets::new(Quota::per_minute(per(attempts))),
            by_account: Buckets::new(Quota::per_minute(per(attempts))),
            known: quick_cache::sync::Cache::new(MAX_KEYS),
        }
    }

    /// Records that `handle` was logged in to (or signed up) from
    /// `client`: its later attempts there are not held to the account's
    /// bucket.
    pub fn logged_in(&self, client: Option<IpAddr>, handle: &str) {
        if let Some(client) = client {
            let key = super::client_address::limit_key(client);
            self.known
                .insert((handle.to_owned(), key), std::time::Instant::now());
        }
    }

    /// Whether `handle` was logged in to from `client` lately.
    fn known(&self, client: Option<IpAddr>, handle: &str) -> bool {
        let Some(client) = client else {
            return false;
        };
        let key = (handle.to_owned(), super::client_address::limit_key(client));
        self.known
            .get(&key)
            .is_some_and(|at| at.elapsed() < KNOWN_FOR)
    }

    /// One more attempt from `client` (`None`: a request over no socket) at
    /// the account `handle` (`None`: no handle a cook could have), or 429.
    pub fn attempt(&self, client: Option<IpAddr>, handle: Option<&str>) -> Result<(), WebError> {
        if let Some(client) = client {
            if !self
                .by_address
                .take(&super::client_address::limit_key(client))
            {
                return Err(WebError::TooManyRequests(format!(
                    "More than {ATTEMPTS_PER_MINUTE} attempts a minute came from your address: \
                     wait a minute and try again."
                )));
            }
        }
        if let Some(handle) = handle.filter(|handle| !self.known(client, handle)) {
            if !self.by_account.take(&handle.to_owned()) {
                return Err(WebError::TooManyRequests(format!(
                    "More than {ATTEMPTS_PER_MINUTE} attempts a minute were made at the \
                     account {handle}: wait a minute and try again."
                )));
            }
        }
        Ok(())
    }
}

/// What one cook may do so often (imports, pictures), keyed by the cook.
pub struct CookLimit {
    buckets: Buckets<String>,
    refusal: String,
}

impl CookLimit {
    /// `IMPORTS_PER_MINUTE`.
    pub fn imports() -> CookLimit {
        CookLimit::imports_on(1)
    }

    /// `IMPORTS_PER_MINUTE` for a site served by `nodes` nodes.
    pub fn imports_on(nodes: u32) -> CookLimit {
        CookLimit {
            buckets: Buckets::new(Quota::per_minute(per(share(IMPORTS_PER_MINUTE, nodes)))),
            refusal: format!(
                "You have asked for too many imports for now ({IMPORTS_PER_MINUTE} at once, \
                 then one every {} seconds): wait a little and try again",
                60 / IMPORTS_PER_MINUTE
            ),
        }
    }

    /// `PICTURES_PER_HOUR`.
    pub fn pictures() -> CookLimit {
        CookLimit::pictures_on(1)
    }

    /// `PICTURES_PER_HOUR` for a site served by `nodes` nodes.
    pub fn pictures_on(nodes: u32) -> CookLimit {
        CookLimit {
            buckets: Buckets::new(Quota::per_hour(per(share(PICTURES_PER_HOUR, nodes)))),
            refusal: format!(
                "You have sent too many pictures for now ({PICTURES_PER_HOUR} at once, then \
                 one every {} minutes): the rest of the form is kept; send the picture \
                 again later",
                60 / PICTURES_PER_HOUR
            ),
        }
    }

    /// One more for the cook with `handle`, or why not (a sentence
    /// without its full stop, for `form_handling::sentence`).
    pub fn start(&self, handle: &str) -> Result<(), String> {
        if self.buckets.take(&handle.to_owned()) {
            Ok(())
        } else {
            Err(self.refusal.clone())
        }
    }
}

/// Suggestions an hour a cook may make, and so also their burst (10 at
/// once, then one every 6 minutes): each lands in another cook's list
/// and feed, so one account must not fill them.
pub const SUGGESTIONS_PER_HOUR: u32 = 10;

/// Suggestions an hour one recipe may be sent, from all its forks'
/// cooks together: accounts are free, so a per-cook limit alone would let
/// many of them fill one recipe's list.
pub const SUGGESTIONS_PER_RECIPE_HOUR: u32 = 30;

/// Suggestions, limited per cook and per recipe they are sent to.
pub struct SuggestionLimit {
    by_cook: Buckets<String>,
    by_recipe: Buckets<String>,
}

impl SuggestionLimit {
    pub fn standard() -> SuggestionLimit {
        SuggestionLimit::on(1)
    }

    /// The standard limits for a site served by `nodes` nodes.
    pub fn on(nodes: u32) -> SuggestionLimit {
        SuggestionLimit {
            by_cook: Buckets::new(Quota::per_hour(per(share(SUGGESTIONS_PER_HOUR, nodes)))),
            by_recipe: Buckets::new(Quota::per_hour(per(share(
                SUGGESTIONS_PER_RECIPE_HOUR,
                nodes,
            )))),
        }
    }

    /// One more suggestion by the cook with `handle` to the recipe at
    /// `recipe`, or why not (a sentence without its full stop).
    pub fn start(&self, handle: &str, recipe: &str) -> Result<(), String> {
        if !self.by_cook.take(&handle.to_owned()) {
            return Err(format!(
                "You have made too many suggestions for now ({SUGGESTIONS_PER_HOUR} at once, \
                 then one every {} minutes): your message is kept; send it again later",
                60 / SUGGESTIONS_PER_HOUR
            ));
        }
        if !self.by_recipe.take(&recipe.to_owned()) {
            return Err(format!(
                "This recipe has been sent too many suggestions for now ({SUGGESTIONS_PER_RECIPE_HOUR} \
                 an hour): your message is kept; send it again later"
            ));
        }
        Ok(())
    }
}

/// Pictures decoded at once across the server. One: a decode at the
/// pixel cap holds about 156 MiB (`domain::pictures::MAX_SIDE` says what),
/// more than half what the server's caches may hold together by default
/// (`--memory-mb`, 256); a second would double that for something cooks
/// do seldom, and take the second core of a 2-core machine from the
/// pages.
pub const PICTURE_DECODES_AT_ONCE: usize = 1;

/// How long a picture waits for its turn to be decoded before the form is
/// answered 503: a form sent while another cook's picture is read still
/// goes through, and one of a burst comes back within seconds, its text
/// kept, rather than after every picture in front of it. (A debug build,
/// whose own code is not optimised, takes seconds over one picture at the
/// cap, so there a burst decodes only its first or second.)
pub const PICTURE_DECODE_WAIT: Duration = Duration::from_secs(5);

/// What a picture turned away is told to wait, in seconds (`Retry-After`):
/// time for the decodes in front of it to end.
pub const PICTURE_RETRY_AFTER: u32 = 10;

/// The places to decode a picture in: a `Gate` whose refusal is in the
/// form's words. A request that has read its upload waits for a place, at
/// most `wait`; past that it is told to send the picture again later, and
/// nothing of it was stored or counted.
pub struct PictureDecodes {
    gate: Gate,
}

impl PictureDecodes {
    /// `at_once` places, each waited for at most `wait`.
    pub fn new(at_once: usize, wait: Duration) -> PictureDecodes {
        PictureDecodes {
            gate: Gate::new(at_once, wait, "reading pictures"),
        }
    }

    /// The server's: `PICTURE_DECODES_AT_ONCE` and `PICTURE_DECODE_WAIT`.
    pub fn standard() -> PictureDecodes {
        PictureDecodes::new(PICTURE_DECODES_AT_ONCE, PICTURE_DECODE_WAIT)
    }

    /// A place, once one is free within the wait; or why not (a sentence
    /// without its full stop, for `form_handling::sentence`).
    pub async fn place(&self) -> Result<Place, String> {
        self.gate.place().await.map_err(|NoPlace| {
            format!(
                "the server is busy reading other pictures, so yours was not read: the rest \
                 of the form is kept; choose the picture again and send the form in \
                 {PICTURE_RETRY_AFTER} seconds"
            )
        })
    }
}

fn per(n: u32) -> NonZeroU32 {
    NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN)
}

#[cfg(test)]
mod tests {
    use super::share;

    #[test]
    fn each_node_takes_its_share_of_a_sites_limit_and_at_least_one() {
        assert_eq!(share(10, 1), 10);
        assert_eq!(share(10, 3), 4);
        assert_eq!(share(10, 10), 1);
        assert_eq!(share(10, 50), 1);
        assert_eq!(share(10, 0), 10);
    }
}
