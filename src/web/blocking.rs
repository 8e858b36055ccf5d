//! Heavy work kept off the async workers, and bounded.
//!
//! Password hashing (Argon2, tens of milliseconds of a core and 19 MiB
//! each) run inline would hold a worker, and every page queued behind it:
//! a burst of logins would stall the site. A `Gate` runs such work on
//! actix's blocking pool, at most `permits` at once; a request that cannot
//! start within `wait` is answered 503 with Retry-After instead of piling
//! up. The permit travels into the work itself, so a client that hangs up
//! does not free a place while its work still runs. Picture decodes wait
//! at a gate of their own (`rate_limits::PictureDecodes`), which says no in
//! the form's words.

use std::sync::Arc;
use std::time::Duration;

use actix_web::error::BlockingError;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::WebError;

/// Places for one kind of heavy work: at most so many at once, each
/// waited for at most `wait`, first come first served.
pub struct Gate {
    places: Arc<Semaphore>,
    wait: Duration,
    /// What the work is, for `run`'s 503: "checking passwords".
    doing: &'static str,
}

/// A place to do the work in, given back when dropped. `Place::run` moves
/// it into the work itself, so a request dropped meanwhile (its client
/// gone) leaves the place taken until the work really ends.
pub struct Place {
    _held: OwnedSemaphorePermit,
}

/// No place came free within the gate's wait.
#[derive(Debug)]
pub struct NoPlace;

impl Gate {
    pub fn new(at_once: usize, wait: Duration, doing: &'static str) -> Gate {
        Gate {
            places: Arc::new(Semaphore::new(at_once.max(1))),
            wait,
            doing,
        }
    }

    /// Password checks and hashes: as many at once as half the cores (at
    /// least one), so pages always keep a core; 10 s of queue, a few
    /// hundred logins, before a 503.
    pub fn passwords() -> Gate {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Gate::new(cores / 2, Duration::from_secs(10), "checking passwords")
    }

    /// A place, once one is free within the wait. Waiting costs a future,
    /// not a thread.
    pub async fn place(&self) -> Result<Place, NoPlace> {
        match tokio::time::timeout(self.wait, self.places.clone().acquire_owned()).await {
            Ok(Ok(held)) => Ok(Place { _held: held }),
            // Out of time; or closed, which it never is.
            Ok(Err(_)) | Err(_) => Err(NoPlace),
        }
    }

    /// Runs `work` on the blocking pool once a place is free, or refuses
    /// with 503 if none is within the wait.
    pub async fn run<T, F>(&self, work: F) -> Result<T, WebError>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let place = self.place().await.map_err(|NoPlace| {
            WebError::Busy(format!(
                "The server is busy {} for others: try again in a moment.",
                self.doing
            ))
        })?;
        place
            .run(work)
            .await
            .map_err(|error| WebError::Internal(Box::new(error)))
    }

    /// How many more may start now (for tests).
    pub fn available(&self) -> usize {
        self.places.available_permits()
    }
}

impl Place {
    /// Runs `work` on actix's blocking pool, holding this place to its end.
    pub async fn run<T, F>(self, work: F) -> Result<T, BlockingError>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        actix_web::web::block(move || {
            let _held = self;
            work()
        })
        .await
    }
}

/// Runs `read`, which may call the log's database (PostgreSQL), on
/// actix's blocking pool when the site keeps data there, and inline when
/// it does not (a node's own sled answers as fast as the hop would). A
/// stalled PostgreSQL then holds a thread of that pool, never a worker
/// that serves everyone's pages; calls to a PostgreSQL known out of reach
/// fail at once (`postgres::log`), so the pool does not fill either.
pub async fn off_workers<T, F>(site: &super::Site, read: F) -> Result<T, WebError>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    if !site.recipes().keyspaces_kept_elsewhere() {
        return Ok(read());
    }
    actix_web::web::block(read)
        .await
        .map_err(|error: BlockingError| WebError::Internal(Box::new(error)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_web::test]
    async fn work_past_the_permits_waits_and_past_the_wait_is_refused() {
        let gate = Arc::new(Gate::new(1, Duration::from_millis(200), "testing"));
        let (release, held) = std::sync::mpsc::channel::<()>();
        let running = {
            let gate = gate.clone();
            actix_web::rt::spawn(async move { gate.run(move || held.recv().is_ok()).await })
        };
        while gate.available() > 0 {
            actix_web::rt::time::sleep(Duration::from_millis(5)).await;
        }
        let refused = gate.run(|| ()).await;
        assert!(matches!(refused, Err(WebError::Busy(ref m)) if m.contains("testing")));
        release.send(()).unwrap();
        assert!(running.await.unwrap().unwrap());
        assert_eq!(gate.available(), 1);
        assert_eq!(gate.run(|| 7).await.unwrap(), 7);
    }
}
