//! The two indexes stored in groups: the log, one sled key per
//! transaction, and EAVT, one sled key per entity and transaction.
//!
//! sled 0.34's cost is per key: every insert copies the leaf it lands in
//! (leaves hold at most 16 keys), and every leaf is a page with its own
//! entry in sled's page table and cache, in memory and on disk. A full
//! recipe is about 104 datoms; one key per datom in the log and in EAVT
//! made 208 of its keys. Grouped, they are one key per entity (15 for a
//! recipe with its ingredients and steps) plus a share of its
//! transaction's log key. EAVT's groups keep everything a per-datom EAVT
//! gave: an entity's keys are adjacent, and its history is in them.
//!
//! Readers never see a group. `Grouped` expands the groups it passes over
//! back into the keys a per-datom index would hold (the same bytes that
//! `encoding::datom_key` makes), sorted, so folding runs of keys into facts
//! reads the same for every index. A group key is the index's prefix byte,
//! an id (the entity for EAVT, the tx for the log) and, for EAVT, the tx;
//! its value is the datoms' records, each the rest of its per-datom key.
//! Every per-datom key of a unit (an entity's groups, or one transaction's)
//! starts with the group key's first `UNIT_LEN` bytes.

use std::collections::VecDeque;

use sled::IVec;

use super::encoding::{datom_key, prefix_end, Datom, Index, KeyReader};
use super::error::StorageError;
use super::value::EntityId;

/// The bytes that name a group's unit: the prefix byte and an id.
const UNIT_LEN: usize = 9;

/// Whether `index` is stored in groups.
pub fn is_grouped(index: Index) -> bool {
    matches!(index, Index::Eavt | Index::Log)
}

/// The grouped keys and values that hold `datoms`: one log key per
/// transaction, one EAVT key per entity and transaction.
pub fn entries(datoms: &[Datom]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    for index in [Index::Eavt, Index::Log] {
        let mut keys: Vec<(Vec<u8>, EntityId)> =
            datoms.iter().map(|d| (datom_key(index, d), d.tx)).collect();
        keys.sort_unstable();
        // A group of EAVT is an entity's datoms of one tx, whose per-datom
        // keys are apart (the tx is near their end), so group by key.
        let mut groups: std::collections::BTreeMap<Vec<u8>, Vec<u8>> = Default::default();
        for (key, tx) in &keys {
            let (group, record) = split(index, key, *tx);
            groups.entry(group).or_default().extend_from_slice(&record);
        }
        out.extend(groups);
    }
    out
}

/// The group key and record of one per-datom key.
fn split(index: Index, key: &[u8], tx: EntityId) -> (Vec<u8>, Vec<u8>) {
    match index {
        // [prefix e] + [a v] + [tx added]: the group is [prefix e tx], the
        // record [a v added].
        Index::Eavt => {
            let group = [&key[..UNIT_LEN], &tx.to_be_bytes()[..]].concat();
            let body = &key[UNIT_LEN..key.len() - 9];
            let record = [body, &key[key.len() - 1..]].concat();
            (group, record)
        }
        // [prefix tx] + [e a v added].
        _ => (key[..UNIT_LEN].to_vec(), key[UNIT_LEN..].to_vec()),
    }
}

/// The tx a group holds datoms of.
fn group_tx(index: Index, group: &[u8]) -> Option<EntityId> {
    let bytes = match index {
        Index::Eavt => group.get(UNIT_LEN..UNIT_LEN + 8)?,
        _ => group.get(1..UNIT_LEN)?,
    };
    Some(u64::from_be_bytes(bytes.try_into().ok()?))
}

/// Appends the per-datom keys of one group to `out`.
fn expand(
    index: Index,
    group: &[u8],
    records: &[u8],
    out: &mut Vec<Vec<u8>>,
) -> Result<(), StorageError> {
    let tx = group_tx(index, group).ok_or_else(|| {
        StorageError::Corrupt(format!("a {} group key: {group:02x?}", index.name()))
    })?;
    let mut reader = KeyReader::new(records);
    while !reader.is_at_end() {
        let start = reader.position();
        if index == Index::Log {
            reader.u64()?;
        }
        reader.u64()?;
        reader.skip_value()?;
        let body_end = reader.position();
        let added = reader.u8()?;
        let mut key = Vec::with_capacity(UNIT_LEN + body_end - start + 10);
        key.extend_from_slice(&group[..UNIT_LEN]);
        key.extend_from_slice(&records[start..body_end]);
        if index == Index::Eavt {
            key.extend_from_slice(&tx.to_be_bytes());
        }
        key.push(added);
        out.push(key);
    }
    Ok(())
}

/// The per-datom keys of a grouped index in `lo..hi`, in index order (or
/// reversed), from the groups of transactions at or before `basis`.
pub struct Grouped {
    index: Index,
    groups: sled::Iter,
    lo: Vec<u8>,
    hi: Vec<u8>,
    basis: EntityId,
    reverse: bool,
    /// The first group of the next unit, read while finding the end of
    /// the one before.
    ahead: Option<(IVec, IVec)>,
    /// The current unit's keys, in the order they are handed out.
    ready: VecDeque<IVec>,
}

impl Grouped {
    pub fn new(
        tree: &sled::Tree,
        index: Index,
        lo: Vec<u8>,
        hi: Vec<u8>,
        basis: EntityId,
        reverse: bool,
    ) -> Grouped {
        // The groups of every unit the bounds touch: a bound longer than a
        // unit's name stands for its whole unit, and is applied per key.
        let group_lo = lo[..lo.len().min(UNIT_LEN)].to_vec();
        let group_hi = if hi.len() > UNIT_LEN {
            prefix_end(&hi[..UNIT_LEN])
        } else {
            hi.clone()
        };
        let groups = if group_lo < group_hi {
            tree.range(group_lo..group_hi)
        } else {
            tree.range(group_hi.clone()..group_hi)
        };
        Grouped {
            index,
            groups,
            lo,
            hi,
            basis,
            reverse,
            ahead: None,
            ready: VecDeque::new(),
        }
    }

    fn next_group(&mut self) -> Option<Result<(IVec, IVec), sled::Error>> {
        if let Some(group) = self.ahead.take() {
            return Some(Ok(group));
        }
        if self.reverse {
            self.groups.next_back()
        } else {
            self.groups.next()
        }
    }

    /// Reads the next unit's groups into `ready`; false at the end.
    fn fill(&mut self) -> Result<bool, StorageError> {
        let Some(first) = self.next_group().transpose()? else {
            return Ok(false);
        };
        let mut keys = Vec::new();
        let unit = first.0[..UNIT_LEN.min(first.0.len())].to_vec();
        let mut group = Some(first);
        while let Some((key, records)) = group.take() {
            if key.len() < UNIT_LEN || key[..UNIT_LEN] != unit[..] {
                self.ahead = Some((key, records));
                break;
            }
            if group_tx(self.index, &key).is_some_and(|tx| tx <= self.basis) {
                expand(self.index, &key, &records, &mut keys)?;
            }
            group = self.next_group().transpose()?;
        }
        keys.retain(|k| *k >= self.lo && *k < self.hi);
        keys.sort_unstable();
        if self.reverse {
            keys.reverse();
        }
        self.ready = keys.into_iter().map(IVec::from).collect();
        Ok(true)
    }
}

impl Iterator for Grouped {
    type Item = Result<IVec, StorageError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(key) = self.ready.pop_front() {
                return Some(Ok(key));
            }
            match self.fill() {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::value::Value;

    fn datom(e: EntityId, a: EntityId, v: Value, tx: EntityId, added: bool) -> Datom {
        Datom { e, a, v, tx, added }
    }

    /// Every per-datom key of `datoms` in `index`, sorted.
    fn per_datom(index: Index, datoms: &[Datom]) -> Vec<Vec<u8>> {
        let mut keys: Vec<_> = datoms.iter().map(|d| datom_key(index, d)).collect();
        keys.sort();
        keys
    }

    fn sample() -> Vec<Datom> {
        vec![
            datom(7, 3, Value::from("b\0x"), 100, true),
            datom(7, 3, Value::from("a"), 100, true),
            datom(5, 4, Value::Long(-3), 100, true),
            datom(7, 3, Value::from("a"), 101, false),
            datom(5, 6, Value::Ref(7), 101, true),
            datom(7, 2, Value::Boolean(true), 102, true),
            datom(9, 2, Value::Double(1.5), 102, true),
        ]
    }

    fn grouped_tree(datoms: &[Datom]) -> sled::Tree {
        let db = sled::Config::new().temporary(true).open().unwrap();
        for (key, value) in entries(datoms) {
            db.insert(key, value).unwrap();
        }
        std::ops::Deref::deref(&db).clone()
    }

    fn read(
        tree: &sled::Tree,
        index: Index,
        lo: &[u8],
        hi: &[u8],
        basis: u64,
        reverse: bool,
    ) -> Vec<Vec<u8>> {
        Grouped::new(tree, index, lo.to_vec(), hi.to_vec(), basis, reverse)
            .map(|k| k.unwrap().to_vec())
            .collect()
    }

    #[test]
    fn groups_expand_to_the_per_datom_keys_in_order_both_ways() {
        let datoms = sample();
        let tree = grouped_tree(&datoms);
        // Three log keys, and one EAVT key per entity and tx.
        assert_eq!(tree.scan_prefix([Index::Log.prefix_byte()]).count(), 3);
        assert_eq!(tree.scan_prefix([Index::Eavt.prefix_byte()]).count(), 6);
        for index in [Index::Eavt, Index::Log] {
            let all = per_datom(index, &datoms);
            let p = [index.prefix_byte()];
            assert_eq!(
                read(&tree, index, &p, &prefix_end(&p), u64::MAX, false),
                all
            );
            let mut back = all.clone();
            back.reverse();
            assert_eq!(
                read(&tree, index, &p, &prefix_end(&p), u64::MAX, true),
                back
            );
        }
    }

    #[test]
    fn bounds_inside_a_unit_and_the_basis_are_applied_per_key() {
        let datoms = sample();
        let tree = grouped_tree(&datoms);
        let lo = [
            &[Index::Eavt.prefix_byte()][..],
            &7u64.to_be_bytes(),
            &3u64.to_be_bytes(),
        ]
        .concat();
        let hi = prefix_end(&lo);
        let want: Vec<_> = per_datom(Index::Eavt, &datoms)
            .into_iter()
            .filter(|k| k.starts_with(&lo))
            .collect();
        assert_eq!(want.len(), 3);
        assert_eq!(read(&tree, Index::Eavt, &lo, &hi, u64::MAX, false), want);
        // At basis 100 the retraction of tx 101 is not there.
        let at_100: Vec<_> = per_datom(Index::Eavt, &datoms[..3])
            .into_iter()
            .filter(|k| k.starts_with(&lo))
            .collect();
        assert_eq!(read(&tree, Index::Eavt, &lo, &hi, 100, false), at_100);
        // The log from tx 101 on.
        let from = [&[Index::Log.prefix_byte()][..], &101u64.to_be_bytes()].concat();
        let end = [&[Index::Log.prefix_byte()][..], &103u64.to_be_bytes()].concat();
        assert_eq!(
            read(&tree, Index::Log, &from, &end, u64::MAX, false).len(),
            4
        );
    }
}
