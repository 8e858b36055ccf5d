//! Keyspaces beside the datoms: plain keys and values with no history.
//!
//! Some things a store holds must not be history: a password hash that was
//! changed, or a session that was ended, must really be gone, which a datom
//! (never overwritten, readable as of any basis) cannot be. A `Keyspace` is
//! a sled tree of its own, outside every index and every export. Each write
//! returns once durable, through the store's group flush (`Store::sync`), so
//! a write to a keyspace is acknowledged on the same terms as a transaction,
//! and a poisoned store refuses it. A write whose flush fails is put back
//! (the old value restored) before the error returns, as the store undoes a
//! transaction that was never durable.

use sled::IVec;

use super::error::{StorageError, TransactError};
use super::Store;

/// The prefix of every keyspace's sled tree name, which keeps them apart
/// from sled's default tree (the datoms) and from one another.
const TREE_PREFIX: &[u8] = b"keyspace/";

/// A named keyspace of one store. Cheap to clone.
#[derive(Clone)]
pub struct Keyspace {
    store: Store,
    tree: sled::Tree,
}

impl Store {
    /// The keyspace called `name`, created empty if the store has none.
    pub fn keyspace(&self, name: &str) -> Result<Keyspace, StorageError> {
        let tree = self
            .inner
            .sled
            .open_tree([TREE_PREFIX, name.as_bytes()].concat())?;
        Ok(Keyspace {
            store: self.clone(),
            tree,
        })
    }
}

impl Keyspace {
    pub fn get(&self, key: &[u8]) -> Result<Option<IVec>, StorageError> {
        Ok(self.tree.get(key)?)
    }

    /// Sets `key` to `value`, durably.
    pub fn insert(&self, key: &[u8], value: &[u8]) -> Result<(), TransactError> {
        self.store.refuse_if_poisoned()?;
        let old = self.tree.insert(key, value)?;
        self.durable(key, old)
    }

    /// Sets every key to its value, durably, with one flush for them all;
    /// if it fails, every key is put back.
    pub fn insert_all(&self, entries: &[(Vec<u8>, Vec<u8>)]) -> Result<(), TransactError> {
        self.store.refuse_if_poisoned()?;
        let mut olds = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            olds.push(self.tree.insert(key.as_slice(), value.as_slice())?);
        }
        self.store.sync().inspect_err(|_| {
            for ((key, _), old) in entries.iter().zip(olds) {
                let _ = match old {
                    Some(old) => self.tree.insert(key.as_slice(), old).map(drop),
                    None => self.tree.remove(key.as_slice()).map(drop),
                };
            }
        })
    }

    /// Syncs the store; if that fails, puts `key` back to `old`.
    fn durable(&self, key: &[u8], old: Option<IVec>) -> Result<(), TransactError> {
        self.store.sync().inspect_err(|_| {
            // Best effort: the store is poisoned now and flushes nothing more.
            let _ = match old {
                Some(old) => self.tree.insert(key, old).map(drop),
                None => self.tree.remove(key).map(drop),
            };
        })
    }

    /// Sets `key` to `new` only if it is `old` now (`None`: absent), durably:
    /// a check and its write that no other writer can come between. Returns
    /// whether it was set.
    pub fn compare_and_swap(
        &self,
        key: &[u8],
        old: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> Result<bool, TransactError> {
        self.store.refuse_if_poisoned()?;
        let swapped = self.tree.compare_and_swap(key, old, new)?.is_ok();
        if swapped {
            self.durable(key, old.map(IVec::from))?;
        }
        Ok(swapped)
    }

    /// Removes `key`, durably; returns whether it was there.
    pub fn remove(&self, key: &[u8]) -> Result<bool, TransactError> {
        self.store.refuse_if_poisoned()?;
        let removed = self.tree.remove(key)?;
        let was_there = removed.is_some();
        if was_there {
            self.durable(key, removed)?;
        }
        Ok(was_there)
    }

    /// Removes every key that starts with `prefix`, durably; returns how
    /// many there were.
    pub fn remove_prefix(&self, prefix: &[u8]) -> Result<usize, TransactError> {
        self.store.refuse_if_poisoned()?;
        let mut removed = Vec::new();
        for item in self.tree.scan_prefix(prefix).keys() {
            let key = item?;
            if let Some(old) = self.tree.remove(&key)? {
                removed.push((key, old));
            }
        }
        if !removed.is_empty() {
            self.store.sync().inspect_err(|_| {
                for (key, old) in &removed {
                    let _ = self.tree.insert(key, old);
                }
            })?;
        }
        Ok(removed.len())
    }

    /// Every key and value that starts with `prefix`, in key order.
    pub fn scan_prefix(
        &self,
        prefix: &[u8],
    ) -> impl Iterator<Item = Result<(IVec, IVec), StorageError>> + '_ {
        self.tree
            .scan_prefix(prefix)
            .map(|item| item.map_err(StorageError::from))
    }
}
