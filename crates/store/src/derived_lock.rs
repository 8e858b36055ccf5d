//! The lock of a cache derived from sled (`ordered`, `referrers`).
//!
//! The store's other locks recover from a panic by taking the value as it
//! was (`PoisonError::into_inner`). A derived cache's value may have been
//! left half-changed by the panic (a bug in an edit), so its lock is taken
//! back with what it held forgotten (`forget`, as the cache's reset): the
//! cache is derived, and its readers read sled until it fills again.

use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// `lock`, to change; a poisoned one forgotten first.
pub(crate) fn write<T>(lock: &RwLock<T>, forget: impl FnOnce(&mut T)) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|poisoned| {
        let mut state = poisoned.into_inner();
        forget(&mut state);
        lock.clear_poison();
        state
    })
}

/// `lock`, to read; a poisoned one forgotten first, through `write`.
pub(crate) fn read<T>(lock: &RwLock<T>, forget: impl Fn(&mut T)) -> RwLockReadGuard<'_, T> {
    loop {
        match lock.read() {
            Ok(state) => return state,
            Err(poisoned) => {
                drop(poisoned);
                drop(write(lock, &forget));
            }
        }
    }
}
