//! The thread that keeps a store following its log, other nodes' writes
//! applied as they come, held by a guard that stops it when dropped
//! (mini-redis's `DbDropGuard`): whoever opened the store on its log keeps
//! the guard as long as it serves, and no caller runs a follower of its
//! own.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::durability::unfollowed;
use super::error::TransactError;
use super::Store;

/// The thread following a store's log; stopped when dropped.
#[must_use = "the follower stops when this guard is dropped"]
pub struct Follower {
    stop: Arc<AtomicBool>,
}

impl Store {
    /// Follows the log this store was opened on (`StoreConfig::following`) on a thread
    /// of its own until the returned guard is dropped: catches up whenever
    /// the log has news and at least every `poll`, so a notice lost (a
    /// dropped connection) delays a write's showing here by at most that.
    /// A failure is recorded for health (`follow_report`) and tried again
    /// after `poll`; it never ends the thread. Refused for a store that
    /// follows no log.
    pub fn follow_in_background(&self, poll: Duration) -> Result<Follower, TransactError> {
        let log = self
            .durability()
            .log()
            .cloned()
            .ok_or_else(|| TransactError::from(unfollowed()))?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let store = self.clone();
        let follow = move || {
            while !stopped.load(Ordering::Acquire) {
                // `follow` records its own failures, for health, and says
                // them in the server's log when they start and once a
                // minute while they last.
                let failed = match log.listen() {
                    Ok(mut news) => store.follow(&mut *news, poll, &stopped).is_err(),
                    Err(error) => {
                        store.note_follow_failure(&TransactError::from(error));
                        true
                    }
                };
                if failed {
                    std::thread::sleep(poll);
                }
            }
        };
        std::thread::Builder::new()
            .name("forkful-follow".into())
            .spawn(follow)
            .map_err(|e| TransactError::from(sled::Error::Io(e)))?;
        Ok(Follower { stop })
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}
