//! A check, for tests, that the current-entity index says exactly what the
//! datoms say.
//!
//! The index is derived: each entry is computed from the entry before it
//! and a transaction's datoms, and written in the same batch. If a crash
//! ever kept one transaction's batch but not an earlier one's, an entry
//! could hold facts the datoms never did, and readers of the current basis,
//! which trust the entry, would see them. Reading entities back does not
//! show this (it reads the entries), so this check derives every entity's
//! current facts from the EAVT keys in sled afresh and compares them with
//! the stored entries, byte for byte. The crash test runs it after every
//! kill and reopen.

use std::collections::{BTreeMap, BTreeSet};

use super::current;
use super::encoding::{decode_datom, prefix_end, Index, TX_SUFFIX_LEN};
use super::grouped::Grouped;
use super::value::EntityId;

/// One current fact as an entry holds it: attribute, encoded value, and
/// the transaction of the assertion that holds.
type Fact = (EntityId, Vec<u8>, EntityId);

/// What the datoms say of one entity.
#[derive(Default)]
struct Truth {
    /// The facts that hold at the latest basis, in EAVT order.
    facts: Vec<Fact>,
    /// The newest transaction with a datom of the entity, assertion or
    /// retraction: the transaction that last rewrote its entry.
    last_tx: EntityId,
}

/// Where an EAVT key's encoded value starts: after the index byte, `e`
/// and `a`.
const EAVT_VALUE_AT: usize = 1 + 8 + 8;

impl super::Store {
    /// Checks every current-entity entry against the EAVT datoms, and
    /// returns how many entities the datoms mention (all of them checked).
    ///
    /// For each entity: its entry's facts are, in order, the (attribute,
    /// encoded value, tx) of every fact whose latest datom is an assertion;
    /// its entry's last change is the newest transaction with a datom of
    /// it; an entity with no current facts has no entry or an empty one;
    /// and no entry exists for an entity no datom mentions. No datom may be
    /// newer than the stored basis, which is written in the same batch.
    ///
    /// It reads sled directly, not through a `Db`, which would answer from
    /// the very entries being checked. Meant for a store no one is writing
    /// to: a write landing during the scan could show as a mismatch.
    pub fn verify_current_entries(&self) -> Result<usize, String> {
        let sled = &self.inner.sled;
        let basis = super::meta::read_meta_u64(sled, super::meta::META_BASIS)
            .map_err(|e| format!("reading the stored basis: {e}"))?;
        let mut truths = datoms_truth(sled, basis)?;
        let checked = truths.len();
        for item in sled.scan_prefix([current::PREFIX]) {
            let (key, block) =
                item.map_err(|e| format!("reading the current-entity index: {e}"))?;
            let first = current::blocks::block_first(&key).map_err(|e| e.to_string())?;
            for entry in current::blocks::entries(&block) {
                let (place, entry) = entry.map_err(|e| e.to_string())?;
                let e = first + EntityId::from(place);
                let truth = truths.remove(&e).ok_or_else(|| {
                    format!("entity {e} has a current-entity entry, but no datom mentions it")
                })?;
                compare(e, entry, &truth, basis)?;
            }
        }
        // Entities left have datoms but no entry: right only if nothing of
        // them holds any more.
        if let Some((e, truth)) = truths.iter().find(|(_, t)| !t.facts.is_empty()) {
            return Err(format!(
                "entity {e} has no current-entity entry, but its datoms hold {}",
                show_facts(&truth.facts)
            ));
        }
        Ok(checked)
    }
}

/// Every entity's current facts and last transaction, from a scan of the
/// EAVT keys. The keys of one fact `(e, a, v)` are adjacent and in tx
/// order, so the last of each run is the datom that decides whether the
/// fact holds.
fn datoms_truth(sled: &sled::Db, basis: EntityId) -> Result<BTreeMap<EntityId, Truth>, String> {
    let mut truths: BTreeMap<EntityId, Truth> = BTreeMap::new();
    // The newest datom so far of the run of keys being read.
    let mut run: Option<Newest> = None;
    let eavt = [Index::Eavt.prefix_byte()];
    let tree: &sled::Tree = sled;
    let keys = Grouped::new(
        tree,
        Index::Eavt,
        eavt.to_vec(),
        prefix_end(&eavt),
        EntityId::MAX,
        false,
    );
    for item in keys {
        let key = item.map_err(|e| format!("reading the EAVT index: {e}"))?;
        let datom = decode_datom(Index::Eavt, &key).map_err(|e| format!("an EAVT key: {e}"))?;
        if datom.tx > basis {
            return Err(format!(
                "entity {}: a datom of tx {} is on disk, past the stored basis {basis}",
                datom.e, datom.tx
            ));
        }
        let truth = truths.entry(datom.e).or_default();
        truth.last_tx = truth.last_tx.max(datom.tx);
        let fact = &key[..key.len() - TX_SUFFIX_LEN];
        if let Some(newest) = run.take_if(|newest| newest.fact != fact) {
            newest.settle(&mut truths);
        }
        run = Some(Newest {
            fact: fact.to_vec(),
            datom,
        });
    }
    if let Some(newest) = run {
        newest.settle(&mut truths);
    }
    Ok(truths)
}

/// The newest datom of one fact `(e, a, v)` seen so far in a scan.
struct Newest {
    /// Its EAVT key without the tx and `added`: the fact itself.
    fact: Vec<u8>,
    datom: super::Datom,
}

impl Newest {
    /// Records the fact as holding if its newest datom asserts it.
    fn settle(self, truths: &mut BTreeMap<EntityId, Truth>) {
        if self.datom.added {
            let value = self.fact[EAVT_VALUE_AT..].to_vec();
            truths.entry(self.datom.e).or_default().facts.push((
                self.datom.a,
                value,
                self.datom.tx,
            ));
        }
    }
}

/// Compares entity `e`'s entry with what its datoms say.
fn compare(e: EntityId, entry: &[u8], truth: &Truth, basis: EntityId) -> Result<(), String> {
    let last_tx = current::last_tx(entry)
        .ok_or_else(|| format!("entity {e}: its current-entity entry is too short"))?;
    let mut facts = Vec::new();
    let mut size = 12;
    for fact in current::facts(entry).map_err(|why| format!("entity {e}: {why}"))? {
        let fact = fact.map_err(|why| format!("entity {e}: {why}"))?;
        size += 20 + fact.value.len();
        facts.push((fact.a, fact.value.to_vec(), fact.tx));
    }
    if size != entry.len() {
        return Err(format!(
            "entity {e}: its entry is {} bytes, but its facts end at byte {size}",
            entry.len()
        ));
    }
    if facts != truth.facts {
        let held: BTreeSet<&Fact> = facts.iter().collect();
        let true_facts: BTreeSet<&Fact> = truth.facts.iter().collect();
        let extra: Vec<Fact> = held.difference(&true_facts).map(|f| (*f).clone()).collect();
        let missing: Vec<Fact> = true_facts.difference(&held).map(|f| (*f).clone()).collect();
        let why = match (extra.is_empty(), missing.is_empty()) {
            (true, true) => format!(
                "its entry holds the right facts out of EAVT order: {}",
                show_facts(&facts)
            ),
            (false, true) => format!(
                "its entry holds {}, which its datoms do not",
                show_facts(&extra)
            ),
            (true, false) => format!("its entry lacks {}", show_facts(&missing)),
            (false, false) => format!(
                "its entry holds {} and lacks {}",
                show_facts(&extra),
                show_facts(&missing)
            ),
        };
        return Err(format!("entity {e}: {why}"));
    }
    if last_tx != truth.last_tx {
        return Err(format!(
            "entity {e}: its entry is as of tx {last_tx}, but its newest datom is of tx {}",
            truth.last_tx
        ));
    }
    if last_tx > basis {
        return Err(format!(
            "entity {e}: its entry is as of tx {last_tx}, past the stored basis {basis}"
        ));
    }
    Ok(())
}

/// Facts as `[a value tx]`, values decoded where they can be.
fn show_facts(facts: &[Fact]) -> String {
    let shown: Vec<String> = facts
        .iter()
        .map(|(a, value, tx)| match current::value(value) {
            Ok(v) => format!("[{a} {v} tx {tx}]"),
            Err(_) => format!("[{a} {value:02x?} tx {tx}]"),
        })
        .collect();
    format!("{} fact(s): {}", facts.len(), shown.join(" "))
}
