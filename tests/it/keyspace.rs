//! Keyspaces beside the datoms: durable, outside history and exports, and
//! refused or put back when the store cannot make a write durable.

use std::sync::{Arc, Barrier};

use forkful::store::export;
use forkful::store::testing::FlushFault;
use forkful::store::{Store, TransactError};

#[test]
fn a_keyspace_write_survives_reopening_and_a_removal_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path()).unwrap();
        let secrets = store.keyspace("secrets").unwrap();
        secrets.insert(b"user/ann", b"hash-1").unwrap();
        secrets.insert(b"user/ann", b"hash-2").unwrap();
        secrets.insert(b"user/ben", b"hash-3").unwrap();
        assert!(secrets.remove(b"user/ben").unwrap());
        assert!(!secrets.remove(b"user/ben").unwrap(), "already gone");
    }
    let store = Store::open(dir.path()).unwrap();
    let secrets = store.keyspace("secrets").unwrap();
    assert_eq!(secrets.get(b"user/ann").unwrap().unwrap(), &b"hash-2"[..]);
    assert_eq!(secrets.get(b"user/ben").unwrap(), None);
}

#[test]
fn keyspaces_are_apart_from_each_other_and_from_the_datoms() {
    let store = Store::temporary().unwrap();
    let sessions = store.keyspace("sessions").unwrap();
    let other = store.keyspace("other").unwrap();
    sessions.insert(b"ann/1", b"x").unwrap();
    sessions.insert(b"ann/2", b"x").unwrap();
    sessions.insert(b"anna/1", b"x").unwrap();
    assert_eq!(other.get(b"ann/1").unwrap(), None);
    let mut exported = Vec::new();
    let before = export(&store.db(), &mut exported).unwrap();
    assert!(!String::from_utf8(exported).unwrap().contains("ann/"));
    assert_eq!(sessions.remove_prefix(b"ann/").unwrap(), 2);
    let left: Vec<_> = sessions
        .scan_prefix(b"")
        .map(|item| item.unwrap().0.to_vec())
        .collect();
    assert_eq!(left, [b"anna/1".to_vec()]);
    assert_eq!(export(&store.db(), &mut Vec::new()).unwrap(), before);
}

#[test]
fn of_concurrent_compare_and_swaps_on_one_key_exactly_one_wins() {
    let store = Store::temporary().unwrap();
    let space = store.keyspace("handles").unwrap();
    let barrier = Arc::new(Barrier::new(8));
    let winners: Vec<bool> = (0..8u8)
        .map(|i| {
            let (space, barrier) = (space.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                space
                    .compare_and_swap(b"handle/ann", None, Some(&[i]))
                    .unwrap()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    assert_eq!(winners.iter().filter(|w| **w).count(), 1, "{winners:?}");
    let winner = winners.iter().position(|w| *w).unwrap() as u8;
    assert_eq!(space.get(b"handle/ann").unwrap().unwrap(), &[winner][..]);
}

#[test]
fn a_keyspace_write_whose_flush_fails_is_put_back_and_later_ones_are_refused() {
    let store = Store::temporary().unwrap();
    let space = store.keyspace("secrets").unwrap();
    space.insert(b"k", b"old").unwrap();
    store.inject_flush_fault(FlushFault::Error);
    let error = space.insert(b"k", b"new").unwrap_err();
    assert!(matches!(error, TransactError::Poisoned(_)), "{error}");
    assert!(error.to_string().contains("injected"), "says why: {error}");
    assert_eq!(space.get(b"k").unwrap().unwrap(), &b"old"[..]);
    let refused = space.insert(b"k", b"newer").unwrap_err();
    assert!(matches!(refused, TransactError::Poisoned(_)), "{refused}");
    assert!(matches!(
        space.remove(b"k").unwrap_err(),
        TransactError::Poisoned(_)
    ));
    assert_eq!(space.get(b"k").unwrap().unwrap(), &b"old"[..]);
}

#[test]
fn sync_always_flushes_after_it_is_called() {
    let store = Store::temporary().unwrap();
    let before = store.stats().flushes;
    store.sync().unwrap();
    store.sync().unwrap();
    assert_eq!(store.stats().flushes, before + 2);
}
