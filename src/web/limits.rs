//! Login and sign-up attempts, limited per address, so that a password
//! cannot be guessed at the speed of the network.
//!
//! A token bucket per IP address from the `governor` crate (the GCRA that
//! actix-governor wraps; that middleware is GPL-3.0, and the two handlers
//! that need a limit only need one call). A request that came in over no
//! socket (the in-process tests' requests) has no address and is not
//! limited; behind a reverse proxy every request has the proxy's address,
//! so the limit would be the proxy's, which is why it is per address and
//! generous rather than tight.

use std::net::IpAddr;
use std::num::NonZeroU32;

use actix_web::HttpRequest;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use super::WebError;

/// Attempts a minute an address may make, and so also its burst.
pub const ATTEMPTS_PER_MINUTE: u32 = 10;

/// Addresses remembered before those that are idle again are dropped.
const MAX_ADDRESSES: usize = 100_000;

pub struct AttemptLimit {
    limiter: DefaultKeyedRateLimiter<IpAddr>,
}

impl AttemptLimit {
    pub fn per_minute(attempts: u32) -> AttemptLimit {
        let attempts = NonZeroU32::new(attempts).unwrap_or(NonZeroU32::MIN);
        AttemptLimit {
            limiter: RateLimiter::keyed(Quota::per_minute(attempts)),
        }
    }

    /// One more attempt from `req`'s address, or 429 if it has made too
    /// many.
    pub fn attempt(&self, req: &HttpRequest) -> Result<(), WebError> {
        let Some(address) = req.peer_addr() else {
            return Ok(());
        };
        if self.limiter.len() > MAX_ADDRESSES {
            self.limiter.retain_recent();
        }
        self.limiter.check_key(&address.ip()).map_err(|_| {
            WebError::TooManyRequests(format!(
                "More than {ATTEMPTS_PER_MINUTE} attempts a minute came from your address: \
                 wait a minute and try again."
            ))
        })
    }
}
