//! Keyspaces beside the datoms: plain keys and values with no history.
//!
//! Some things a store holds must not be history: a password hash that was
//! changed, or a session that was ended, must really be gone, which a datom
//! (never overwritten, readable as of any basis) cannot be. A `Keyspace` is
//! a sled tree of its own, outside every index and every export. Each write
//! returns once durable, through the store's group flush (`Store::sync`), so
//! a write to a keyspace is acknowledged on the same terms as a transaction,
//! and a poisoned store refuses it. A write whose flush fails is put back
//! (the old value restored, where the key still holds what the write left:
//! a compare-and-swap that came between is kept) before the error returns,
//! as the store undoes a transaction that was never durable. Unlike a
//! transaction, a keyspace write is visible to readers from the moment it
//! is made, before its flush: a reader may act on a session or password
//! that a failed flush then takes back, and the store is poisoned then.
//!
//! A store that follows a log (`StoreConfig::following`) keeps its keyspaces in
//! the log's database instead (`SharedKeyspaces`), so that every node sees
//! one set of sessions, passwords and pictures; each write is durable there
//! when it returns. Nothing of them is kept on the node, but the values a
//! caller says never change under their key (`Keyspace::get_lasting`), up
//! to the bytes it allows (`Keyspace::remembering`, `lasting`): another
//! node's write is not seen here, so a copy of a value that changes (a
//! session, a picture's size record while it may be collected) would
//! serve what was taken away. A store that followed a log, opened without
//! it, writes no keyspace (as it writes no transaction).

use sled::IVec;

use super::error::{StorageError, TransactError};
use super::lasting::Lasting;
use super::log::{LogError, SharedKeyspaces};
use super::Store;

/// The prefix of every keyspace's sled tree name, which keeps them apart
/// from sled's default tree (the datoms) and from one another.
const TREE_PREFIX: &[u8] = b"keyspace/";

/// One key a write changed: the key, what the write left there, and what
/// it held before (`None`: nothing).
type Written<'a> = (&'a [u8], Option<&'a [u8]>, Option<IVec>);

/// A named keyspace of one store. Cheap to clone.
#[derive(Clone)]
pub struct Keyspace {
    store: Store,
    name: String,
    tree: sled::Tree,
    /// The lasting values this node remembers, for a keyspace kept
    /// elsewhere opened `remembering` them.
    lasting: Option<std::sync::Arc<Lasting>>,
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
            name: name.to_owned(),
            tree,
            lasting: None,
        })
    }

    /// Every keyspace the store's own sled holds, by name.
    pub(super) fn local_keyspaces(&self) -> Vec<String> {
        self.inner
            .sled
            .tree_names()
            .iter()
            .filter_map(|name| name.strip_prefix(TREE_PREFIX))
            .map(|name| String::from_utf8_lossy(name).into_owned())
            .collect()
    }
}

/// Where a keyspace's keys are kept: the store's own sled (`InSled`), or
/// the log's database (`InLog`), as the store's durability says
/// (`Keyspace::keeper`). A `Keyspace` checks that it may write, then hands
/// each operation to its keeper, never asking which one it has.
trait Keeper<'a> {
    fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<IVec>>, StorageError>;
    /// Sets every key to its value, durably.
    fn put(&self, entries: &[(Vec<u8>, Vec<u8>)]) -> Result<(), TransactError>;
    /// Sets one key to its value, durably: `put` of one entry, but for a
    /// keeper that can take it without a copy of the value (a picture's).
    fn put_one(&self, key: &[u8], value: &[u8]) -> Result<(), TransactError> {
        self.put(&[(key.to_vec(), value.to_vec())])
    }
    /// Sets `key` to `new` only if it holds `old`, durably: whether it did.
    fn swap(
        &self,
        key: &[u8],
        old: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> Result<bool, TransactError>;
    /// Removes `keys`, durably: how many were there.
    fn remove(&self, keys: &[Vec<u8>]) -> Result<usize, TransactError>;
    /// Every key and value that starts with `prefix`, in key order.
    fn scan(&self, prefix: &[u8]) -> Scan<'a>;
    /// `Keyspace::scan_range`.
    fn scan_range(&self, start: &[u8], end: &[u8], most: usize) -> Scan<'a>;
}

/// What a keeper's scan yields.
type Scan<'a> = Box<dyn Iterator<Item = Result<(IVec, IVec), StorageError>> + 'a>;

/// The keys in a sled tree of the store's own, each write made durable by
/// the store's group flush and put back if that fails.
struct InSled<'a>(&'a Keyspace);

/// The keys in the log's database, every node's: each write is durable
/// there when it returns.
struct InLog<'a> {
    shared: &'a dyn SharedKeyspaces,
    name: &'a str,
}

/// One keeper or the other, chosen per operation by `Keyspace::keeper`.
enum Kept<'a> {
    InSled(InSled<'a>),
    InLog(InLog<'a>),
}

impl<'a> std::ops::Deref for Kept<'a> {
    type Target = dyn Keeper<'a> + 'a;

    fn deref(&self) -> &Self::Target {
        match self {
            Kept::InSled(keeper) => keeper,
            Kept::InLog(keeper) => keeper,
        }
    }
}

impl Keyspace {
    /// Whether this keyspace's keys are kept in another process (the log's
    /// database), so that a read may wait on the network: a read to keep
    /// off the threads that serve pages, and a value worth remembering.
    pub fn kept_elsewhere(&self) -> bool {
        self.store.durability().shared_keyspaces().is_some()
    }

    /// Where the keys are, as the store's durability says (on the stack:
    /// a keyspace's read is on the path of every signed-in page).
    fn keeper(&self) -> Kept<'_> {
        match self.store.durability().shared_keyspaces() {
            Some(shared) => Kept::InLog(InLog {
                shared,
                name: &self.name,
            }),
            None => Kept::InSled(InSled(self)),
        }
    }

    /// Refuses a write to a store that is poisoned, or that followed a log
    /// and was opened without it (the write would be this node's alone).
    fn writable(&self) -> Result<(), TransactError> {
        self.store.refuse_if_poisoned()?;
        self.store.durability().writes_here()
    }

    pub fn get(&self, key: &[u8]) -> Result<Option<IVec>, StorageError> {
        Ok(self.get_many(&[key])?.pop().flatten())
    }

    /// This keyspace, remembering up to `bytes` of the lasting values read
    /// through it (`get_lasting`) when its keys are kept elsewhere; as it
    /// was when they are in the store's own sled.
    pub fn remembering(mut self, bytes: u64) -> Keyspace {
        if self.kept_elsewhere() {
            self.lasting = Some(Lasting::new(bytes));
        }
        self
    }

    /// `get`, for a key whose value, once written, never changes (it may be
    /// removed): a keyspace `remembering` keeps it on this node, so a read
    /// is a round trip to the log's database once. Another node's removal
    /// is not seen until the value is evicted here.
    pub fn get_lasting(&self, key: &[u8]) -> Result<Option<IVec>, StorageError> {
        self.get_lasting_if(key, |_| true)
    }

    /// `get_lasting` for a key whose value is lasting only once `settled`
    /// says so (a record that holds a passing state first): a value not
    /// settled is read, and never remembered.
    pub fn get_lasting_if(
        &self,
        key: &[u8],
        settled: impl Fn(&[u8]) -> bool,
    ) -> Result<Option<IVec>, StorageError> {
        let Some(lasting) = &self.lasting else {
            return self.get(key);
        };
        if let Some(value) = lasting.get(key) {
            return Ok(Some(value));
        }
        let mark = lasting.mark();
        let value = self.get(key)?;
        if let Some(value) = value.as_ref().filter(|v| settled(v)) {
            lasting.remember(key, value.clone(), mark);
        }
        Ok(value)
    }

    /// How many lasting values this node remembers (`None` for a keyspace
    /// not `remembering` them).
    pub fn remembered(&self) -> Option<usize> {
        self.lasting.as_ref().map(|lasting| lasting.len())
    }

    /// Forgets what a write changed, once it is made (or failed): a read
    /// that came between, and remembered the old value, is forgotten too.
    fn forget<'k>(&self, keys: impl IntoIterator<Item = &'k [u8]>) {
        if let Some(lasting) = &self.lasting {
            lasting.forget(keys);
        }
    }

    /// The value of each of `keys`, in their order: with a log, one round
    /// trip to its keyspaces rather than one per key.
    pub fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<IVec>>, StorageError> {
        self.keeper().get_many(keys)
    }

    /// Sets `key` to `value`, durably.
    pub fn insert(&self, key: &[u8], value: &[u8]) -> Result<(), TransactError> {
        self.writable()?;
        let written = self.keeper().put_one(key, value);
        self.forget([key]);
        written
    }

    /// Sets every key to its value, durably, with one flush for them all;
    /// if it fails, every key is put back.
    pub fn insert_all(&self, entries: &[(Vec<u8>, Vec<u8>)]) -> Result<(), TransactError> {
        self.writable()?;
        let written = self.keeper().put(entries);
        self.forget(entries.iter().map(|(key, _)| key.as_slice()));
        written
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
        self.writable()?;
        let swapped = self.keeper().swap(key, old, new);
        self.forget([key]);
        swapped
    }

    /// Removes `key`, durably; returns whether it was there.
    pub fn remove(&self, key: &[u8]) -> Result<bool, TransactError> {
        Ok(self.remove_all([key.to_vec()])? == 1)
    }

    /// Removes every key that starts with `prefix`, durably; returns how
    /// many there were.
    pub fn remove_prefix(&self, prefix: &[u8]) -> Result<usize, TransactError> {
        let keys = self
            .scan_prefix(prefix)
            .map(|item| item.map(|(key, _)| key.to_vec()))
            .collect::<Result<Vec<_>, _>>()?;
        self.remove_all(keys)
    }

    /// Removes `keys`, durably, with one flush for them all; returns how
    /// many were there.
    pub fn remove_all(
        &self,
        keys: impl IntoIterator<Item = Vec<u8>>,
    ) -> Result<usize, TransactError> {
        self.writable()?;
        let keys: Vec<Vec<u8>> = keys.into_iter().collect();
        let removed = self.keeper().remove(&keys);
        self.forget(keys.iter().map(Vec::as_slice));
        removed
    }

    /// Every key and value that starts with `prefix`, in key order.
    pub fn scan_prefix(&self, prefix: &[u8]) -> Scan<'_> {
        self.keeper().scan(prefix)
    }

    /// The first `most` keys from `start` (included) to `end` (not), with
    /// their values, in key order: a read of what is wanted, not of a whole
    /// prefix (a queue ordered by when each entry is due).
    pub fn scan_range(&self, start: &[u8], end: &[u8], most: usize) -> Scan<'_> {
        self.keeper().scan_range(start, end, most)
    }

    /// After a failed flush, puts each `(key, written, old)` back to `old`,
    /// but only where it still holds what this write left there: a
    /// compare-and-swap that landed meanwhile is not overwritten.
    /// Best effort: the store is poisoned now and flushes nothing more.
    fn put_back(&self, written: &[Written<'_>]) {
        for (key, new, old) in written {
            let _ = self.tree.compare_and_swap(*key, *new, old.as_deref());
        }
    }
}

impl<'a> Keeper<'a> for InSled<'a> {
    fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<IVec>>, StorageError> {
        keys.iter().map(|key| Ok(self.0.tree.get(key)?)).collect()
    }

    fn put(&self, entries: &[(Vec<u8>, Vec<u8>)]) -> Result<(), TransactError> {
        let mut written = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            let old = self.0.tree.insert(key.as_slice(), value.as_slice())?;
            written.push((key.as_slice(), Some(value.as_slice()), old));
        }
        self.0
            .store
            .sync()
            .inspect_err(|_| self.0.put_back(&written))
    }

    fn put_one(&self, key: &[u8], value: &[u8]) -> Result<(), TransactError> {
        let old = self.0.tree.insert(key, value)?;
        self.0
            .store
            .sync()
            .inspect_err(|_| self.0.put_back(&[(key, Some(value), old)]))
    }

    fn swap(
        &self,
        key: &[u8],
        old: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> Result<bool, TransactError> {
        let swapped = self.0.tree.compare_and_swap(key, old, new)?.is_ok();
        if swapped {
            let old = old.map(IVec::from);
            self.0
                .store
                .sync()
                .inspect_err(|_| self.0.put_back(&[(key, new, old)]))?;
        }
        Ok(swapped)
    }

    fn remove(&self, keys: &[Vec<u8>]) -> Result<usize, TransactError> {
        let mut removed = Vec::new();
        for key in keys {
            if let Some(old) = self.0.tree.remove(key.as_slice())? {
                removed.push((key, old));
            }
        }
        if !removed.is_empty() {
            self.0.store.sync().inspect_err(|_| {
                let written: Vec<_> = removed
                    .iter()
                    .map(|(key, old)| (key.as_slice(), None, Some(old.clone())))
                    .collect();
                self.0.put_back(&written);
            })?;
        }
        Ok(removed.len())
    }

    fn scan(&self, prefix: &[u8]) -> Scan<'a> {
        Box::new(
            self.0
                .tree
                .scan_prefix(prefix)
                .map(|item| item.map_err(StorageError::from)),
        )
    }

    fn scan_range(&self, start: &[u8], end: &[u8], most: usize) -> Scan<'a> {
        if start >= end {
            return Box::new(std::iter::empty());
        }
        Box::new(
            self.0
                .tree
                .range(start.to_vec()..end.to_vec())
                .take(most)
                .map(|item| item.map_err(StorageError::from)),
        )
    }
}

impl<'a> Keeper<'a> for InLog<'a> {
    fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<IVec>>, StorageError> {
        Ok(self
            .shared
            .get_many(self.name, keys)
            .map_err(shared_read)?
            .into_iter()
            .map(|value| value.map(IVec::from))
            .collect())
    }

    fn put(&self, entries: &[(Vec<u8>, Vec<u8>)]) -> Result<(), TransactError> {
        Ok(self.shared.put(self.name, entries)?)
    }

    fn swap(
        &self,
        key: &[u8],
        old: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> Result<bool, TransactError> {
        Ok(self.shared.swap(self.name, key, old, new)?)
    }

    fn remove(&self, keys: &[Vec<u8>]) -> Result<usize, TransactError> {
        Ok(self.shared.remove(self.name, keys)?)
    }

    fn scan(&self, prefix: &[u8]) -> Scan<'a> {
        scanned(self.shared.scan(self.name, prefix))
    }

    fn scan_range(&self, start: &[u8], end: &[u8], most: usize) -> Scan<'a> {
        if start >= end || most == 0 {
            return Box::new(std::iter::empty());
        }
        scanned(self.shared.scan_range(self.name, start, end, most))
    }
}

/// What a scan of the log's keyspaces found, as a keyspace's scan yields it.
fn scanned<'a>(found: Result<Vec<crate::log::KeyValue>, LogError>) -> Scan<'a> {
    match found {
        Ok(found) => Box::new(
            found
                .into_iter()
                .map(|(key, value)| Ok((IVec::from(key), IVec::from(value)))),
        ),
        Err(e) => Box::new(std::iter::once(Err(shared_read(e)))),
    }
}

/// A read of the log's keyspaces that failed, as a storage error: reads
/// of a keyspace fail as sled's do.
fn shared_read(error: LogError) -> StorageError {
    StorageError::Unavailable(error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A failed write puts back only what it left there itself: a value a
    /// compare-and-swap set meanwhile stays, and its own value goes.
    #[test]
    fn a_put_back_never_overwrites_what_another_write_set_meanwhile() {
        let store = Store::temporary().unwrap();
        let keys = store.keyspace("test").unwrap();
        keys.insert(b"mine", b"a").unwrap();
        keys.insert(b"theirs", b"a").unwrap();
        // Another writer's compare-and-swap landed on one key after ours.
        assert!(keys
            .tree
            .compare_and_swap(b"theirs", Some(b"a"), Some(b"b"))
            .unwrap()
            .is_ok());
        keys.put_back(&[
            (b"mine".as_slice(), Some(b"a".as_slice()), None),
            (b"theirs".as_slice(), Some(b"a".as_slice()), None),
        ]);
        assert_eq!(keys.get(b"mine").unwrap(), None);
        assert_eq!(keys.get(b"theirs").unwrap().as_deref(), Some(&b"b"[..]));
    }
}
