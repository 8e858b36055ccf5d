//! Sessions as this node last found them in the accounts' keyspace.
//!
//! On a site past one machine the sessions are kept in PostgreSQL, and a
//! cook's every request would read them there: with PostgreSQL stopped
//! or stalled, every logged-in page would fail while anonymous ones go
//! on. So each answer is kept here (the cook, or that there is none) and
//! used without asking again for `RECHECK_AFTER`; past that it is asked
//! again, and if PostgreSQL cannot answer, an answer checked within
//! `KEEP_WHILE_UNREACHABLE` is used still. What that costs: a session
//! ended on another node (a logout, a password change, an account
//! disabled) goes on working on this one for at most `RECHECK_AFTER`
//! while PostgreSQL answers, and until it answers again when it does not.
//! A session ended on this node ends here at once.

use std::time::{Duration, Instant};

use super::accounts::Cook;

/// How long a session's answer is used without asking PostgreSQL again:
/// how long a logout on another node may take to reach this one.
pub(super) const RECHECK_AFTER: Duration = Duration::from_secs(30);

/// How long a session checked once is honoured while PostgreSQL cannot be
/// asked again.
pub(super) const KEEP_WHILE_UNREACHABLE: Duration = Duration::from_secs(3_600);

/// How many sessions are kept: each is a few dozen bytes.
const KEPT: usize = 50_000;

/// The answers, by session token hash.
pub(super) struct SessionMemo {
    /// `RECHECK_AFTER`, unless the server was told otherwise.
    pub(super) recheck_after: Duration,
    answers: quick_cache::sync::Cache<Vec<u8>, Answer>,
    /// Sessions being checked again now (`Accounts::claim_check`): one
    /// check at a time each, so that a stalled PostgreSQL is not sent a
    /// check for every request a cook makes.
    checking: std::sync::Mutex<rustc_hash::FxHashSet<Vec<u8>>>,
    /// Bumped by every forget: a check that read PostgreSQL before a
    /// forget keeps nothing of what it read (`keep_unless_forgotten`), or
    /// a logout racing a page's check would be undone by it.
    forgets: std::sync::atomic::AtomicU64,
}

/// The one check of a session under way; ended when dropped.
pub struct Check {
    memo: std::sync::Arc<SessionMemo>,
    hash: Vec<u8>,
}

impl Drop for Check {
    fn drop(&mut self) {
        self.memo.checking_set().remove(&self.hash);
    }
}

#[derive(Clone)]
struct Answer {
    /// The session's cook; `None`: no live session has this token.
    cook: Option<Cook>,
    /// When the session expires, in milliseconds since the epoch.
    expires: i64,
    checked: Instant,
}

impl Default for SessionMemo {
    fn default() -> SessionMemo {
        SessionMemo {
            recheck_after: RECHECK_AFTER,
            answers: quick_cache::sync::Cache::new(KEPT),
            checking: Default::default(),
            forgets: Default::default(),
        }
    }
}

impl SessionMemo {
    /// The kept answer for `hash`, if it was checked within `within` (and
    /// its session has not expired since): `Some(None)` for a token that
    /// is no session.
    pub(super) fn answer(
        &self,
        hash: &[u8],
        within: Duration,
        now_millis: i64,
    ) -> Option<Option<Cook>> {
        let answer = self.answers.get(hash)?;
        if answer.checked.elapsed() > within {
            return None;
        }
        Some(answer.cook.filter(|_| answer.expires > now_millis))
    }

    /// Keeps `cook` (or none) as the answer for `hash`, checked now.
    pub(super) fn keep(&self, hash: Vec<u8>, cook: Option<Cook>, expires: i64) {
        let checked = Instant::now();
        self.answers.insert(
            hash,
            Answer {
                cook,
                expires,
                checked,
            },
        );
    }

    /// Claims the check of the session `hash`: `None` while another is
    /// under way.
    pub(super) fn claim(self: &std::sync::Arc<SessionMemo>, hash: Vec<u8>) -> Option<Check> {
        self.checking_set().insert(hash.clone()).then(|| Check {
            memo: self.clone(),
            hash,
        })
    }

    fn checking_set(&self) -> std::sync::MutexGuard<'_, rustc_hash::FxHashSet<Vec<u8>>> {
        self.checking
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// How many forgets there have been: read before a check reads
    /// PostgreSQL, and given to `keep_unless_forgotten` after.
    pub(super) fn forgets(&self) -> u64 {
        self.forgets.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// `keep`, unless a session was forgotten since `forgets` was read:
    /// what the check read may be what the forget ended.
    pub(super) fn keep_unless_forgotten(
        &self,
        hash: Vec<u8>,
        cook: Option<Cook>,
        expires: i64,
        forgets: u64,
    ) {
        if self.forgets() == forgets {
            self.keep(hash, cook, expires);
        }
    }

    /// Ends one session here: from now on it is no session, whatever a
    /// check under way read.
    pub(super) fn forget(&self, hash: &[u8]) {
        self.forgets
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.keep(hash.to_vec(), None, i64::MAX);
    }

    /// Forgets every session of the cook `handle` (all ended here).
    pub(super) fn forget_cook(&self, handle: &str) {
        self.forgets
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.answers.retain(|_, answer| {
            answer
                .cook
                .as_ref()
                .is_none_or(|cook| cook.handle.as_str() != handle)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Slug;

    fn ann() -> Cook {
        Cook {
            handle: Slug::parse("ann").unwrap(),
            name: "Ann".into(),
        }
    }

    /// A check that read PostgreSQL before a logout on this node keeps
    /// nothing of what it read: the logout is not undone by it.
    #[test]
    fn a_check_under_way_cannot_bring_back_a_session_forgotten_meanwhile() {
        let memo = SessionMemo::default();
        let hash = b"token".to_vec();
        memo.keep(hash.clone(), Some(ann()), i64::MAX);
        let read_before = memo.forgets();
        memo.forget(&hash);
        memo.keep_unless_forgotten(hash.clone(), Some(ann()), i64::MAX, read_before);
        assert_eq!(memo.answer(&hash, Duration::from_secs(60), 0), Some(None));
        // A check that began after the forget keeps what it read.
        let read_after = memo.forgets();
        memo.keep_unless_forgotten(hash.clone(), Some(ann()), i64::MAX, read_after);
        assert_eq!(
            memo.answer(&hash, Duration::from_secs(60), 0),
            Some(Some(ann()))
        );
        // A cook's every session goes with `forget_cook`.
        memo.forget_cook("ann");
        assert_eq!(memo.answer(&hash, Duration::from_secs(60), 0), None);
    }
}
