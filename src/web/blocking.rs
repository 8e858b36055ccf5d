//! Heavy work kept off the async workers, and bounded.
//!
//! Password hashing (Argon2, tens of milliseconds of a core and 19 MiB
//! each) run inline would hold a worker, and every page queued behind it:
//! a burst of logins would stall the site. A `Gate` runs such work on
//! actix's blocking pool, at most `permits` at once; a request that cannot
//! start within `wait` is answered 503 with Retry-After instead of piling
//! up. The permit travels into the work itself, so a client that hangs up
//! does not free a place while its work still runs.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use super::WebError;

pub struct Gate {
    permits: Arc<Semaphore>,
    wait: Duration,
    /// What the work is, for the 503: "checking passwords".
    doing: &'static str,
}

impl Gate {
    pub fn new(permits: usize, wait: Duration, doing: &'static str) -> Gate {
        Gate {
            permits: Arc::new(Semaphore::new(permits.max(1))),
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

    /// Runs `work` on the blocking pool once a place is free, or refuses
    /// with 503 if none is within the wait.
    pub async fn run<T, F>(&self, work: F) -> Result<T, WebError>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let permit = tokio::time::timeout(self.wait, self.permits.clone().acquire_owned())
            .await
            .map_err(|_| {
                WebError::Busy(format!(
                    "The server is busy {} for others: try again in a moment.",
                    self.doing
                ))
            })?
            .expect("a gate's semaphore is never closed");
        actix_web::web::block(move || {
            let _held = permit;
            work()
        })
        .await
        .map_err(|error| WebError::Internal(Box::new(error)))
    }

    /// How many more may start now (for tests).
    pub fn available(&self) -> usize {
        self.permits.available_permits()
    }
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
