//! How a node's following of its log is going, kept in memory by the
//! follower as it goes, so that `/healthz` and `/metrics` answer from here
//! without a call to the log's database on a worker that serves pages.
//!
//! The follower records each read of the log that succeeded (with the
//! log's head and how far behind it the node is) and each that failed;
//! a node that stops applying rows (its SELECT refused, a row it cannot
//! apply, PostgreSQL gone) shows it as a failure that lasts, which health
//! turns into a 503 past a few seconds.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::value::EntityId;

/// What the follower last found; see `FollowReport`.
#[derive(Default)]
pub(super) struct FollowHealth {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The log's head and this node's lag behind it, in transactions, as
    /// of `checked`.
    head: EntityId,
    behind: u64,
    checked: Option<Instant>,
    /// When the node last applied a row of the log (its own or another
    /// node's).
    applied: Option<Instant>,
    /// The failure that has lasted since `since`, with the last error.
    failing: Option<Failing>,
    /// When a failure was last written to the server's log.
    logged: Option<Instant>,
}

struct Failing {
    since: Instant,
    error: String,
}

/// How the following stands, for health and metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct FollowReport {
    /// The log's head when last read, and this node's lag behind it.
    pub head: EntityId,
    pub behind: u64,
    /// How long ago the log was last read to its end (`None`: never yet).
    pub checked_ago: Option<Duration>,
    /// How long ago the node last applied a row (`None`: not since start).
    pub applied_ago: Option<Duration>,
    /// How long the follower has failed, and its last error; `None` when
    /// its last read succeeded.
    pub failing: Option<(Duration, String)>,
}

/// A failure is written to the server's log when it starts, and then once
/// a minute while it lasts: not once a second for ever.
const LOG_FAILURE_EVERY: Duration = Duration::from_secs(60);

impl FollowHealth {
    /// A read of the log to its end succeeded: the node is `behind` the
    /// log's `head`.
    pub(super) fn checked(&self, head: EntityId, behind: u64) {
        let mut state = self.lock();
        if let Some(failing) = state.failing.take() {
            tracing::info!(
                after = ?failing.since.elapsed(),
                "following the log again"
            );
        }
        state.head = head;
        state.behind = behind;
        state.checked = Some(Instant::now());
        state.logged = None;
    }

    /// This node appended the log's row `t`: its head is there or past it.
    pub(super) fn appended(&self, t: EntityId) {
        let mut state = self.lock();
        state.head = state.head.max(t);
        state.applied = Some(Instant::now());
    }

    /// A row of the log was applied here.
    pub(super) fn applied(&self) {
        self.lock().applied = Some(Instant::now());
    }

    /// Following failed with `error`; returns whether to write it to the
    /// server's log now (its first time, then once a minute).
    pub(super) fn failed(&self, error: String) -> bool {
        let mut state = self.lock();
        let now = Instant::now();
        match &mut state.failing {
            Some(failing) => failing.error = error,
            None => state.failing = Some(Failing { since: now, error }),
        }
        let due = state
            .logged
            .is_none_or(|at| now.duration_since(at) >= LOG_FAILURE_EVERY);
        if due {
            state.logged = Some(now);
        }
        due
    }

    pub(super) fn report(&self) -> FollowReport {
        let state = self.lock();
        FollowReport {
            head: state.head,
            behind: state.behind,
            checked_ago: state.checked.map(|at| at.elapsed()),
            applied_ago: state.applied.map(|at| at.elapsed()),
            failing: state
                .failing
                .as_ref()
                .map(|failing| (failing.since.elapsed(), failing.error.clone())),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_logged_first_then_once_a_minute_and_a_success_ends_it() {
        let health = FollowHealth::default();
        assert!(health.failed("refused".into()), "the first is logged");
        assert!(!health.failed("refused again".into()), "not each second");
        let report = health.report();
        assert_eq!(report.failing.as_ref().unwrap().1, "refused again");
        health.checked(40, 2);
        let report = health.report();
        assert_eq!(report.failing, None);
        assert_eq!((report.head, report.behind), (40, 2));
        assert!(health.failed("gone".into()), "a new failure is logged");
    }
}
