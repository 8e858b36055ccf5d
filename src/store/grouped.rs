//! The indexes stored in groups: the log, one sled key per transaction;
//! EAVT, one per entity and transaction; AEVT, one per attribute, block of
//! 256 entity ids and transaction; VAET, one per block of 256 referenced
//! entities and transaction. Only AVET, ordered by value, is a key per
//! datom.
//!
//! sled 0.34's cost is per key: every insert copies the leaf it lands in
//! (leaves hold at most 16 keys), and every leaf is a page with its own
//! entry in sled's page table and cache, in memory and on disk. A full
//! recipe is about 104 datoms; one key per datom in the log, EAVT, AEVT
//! and VAET made 328 of its 400 keys. Grouped, EAVT is one key per entity
//! (15 for a recipe with its ingredients and steps), and the others a
//! share of their transaction's few keys. The groups keep everything the per-datom
//! indexes gave: a unit's keys are adjacent, and its history is in them.
//!
//! Readers never see a group. `Grouped` expands the groups it passes over
//! back into the keys a per-datom index would hold (the same bytes that
//! `encoding::datom_key` makes), sorted, so folding runs of keys into facts
//! reads the same for every index. Every per-datom key of one unit starts
//! with the same `unit_len` bytes, which begin its groups' keys; a group
//! key is those bytes and the tx (the log's unit is its tx), and its value
//! is the records of its datoms, each the rest of its per-datom key without
//! the tx.

use std::collections::VecDeque;

use sled::IVec;

use super::encoding::{datom_key, prefix_end, Datom, Index, KeyReader, TX_SUFFIX_LEN};
use super::error::StorageError;
use super::value::EntityId;

/// How many leading bytes of a per-datom key name its unit: the keys of
/// one unit are read, sorted and folded together. The log's unit is a
/// transaction, EAVT's an entity, AEVT's an attribute over a block of 256
/// entity ids (the key's first 16 bytes: prefix, attribute, the entity's
/// seven high bytes), VAET's a block of 256 target ids (prefix, the ref
/// tag, the target's seven high bytes). One transaction writing many new
/// entities so writes one AEVT key per attribute and block, and one VAET
/// key per block of targets, rather than one per datom; reading one
/// entity's attribute, or one target's referrers, reads at most its
/// block's.
fn unit_len(index: Index) -> usize {
    match index {
        Index::Aevt => 16,
        _ => 9,
    }
}

/// Whether `index` is stored in groups.
pub fn is_grouped(index: Index) -> bool {
    index != Index::Avet
}

/// The grouped keys and values that hold `datoms`: one log key per
/// transaction, one EAVT key per entity and transaction, one AEVT key per
/// attribute, entity block and transaction, one VAET key per target block
/// and transaction (for the datoms of ref attributes, `is_ref`).
pub fn entries(datoms: &[Datom], is_ref: impl Fn(&Datom) -> bool) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    let mut keys: Vec<(EntityId, Vec<u8>)> = Vec::with_capacity(datoms.len());
    for index in [Index::Eavt, Index::Aevt, Index::Vaet, Index::Log] {
        keys.clear();
        keys.extend(
            datoms
                .iter()
                .filter(|d| index != Index::Vaet || is_ref(d))
                .map(|d| (d.tx, datom_key(index, d))),
        );
        // By tx, then key: a group's per-datom keys are a run, in order.
        keys.sort_unstable();
        let unit = unit_len(index);
        let mut rest = &keys[..];
        while let Some((tx, first)) = rest.first() {
            let run = rest
                .iter()
                .take_while(|(t, key)| t == tx && key[..unit] == first[..unit])
                .count();
            let (group, run_keys) = (group_key(index, first, *tx), &rest[..run]);
            let mut records = Vec::with_capacity(run_keys.iter().map(|(_, k)| k.len()).sum());
            for (_, key) in run_keys {
                push_record(index, key, &mut records);
            }
            out.push((group, records));
            rest = &rest[run..];
        }
    }
    out
}

/// The key of the group that holds the per-datom `key` of a datom of `tx`.
fn group_key(index: Index, key: &[u8], tx: EntityId) -> Vec<u8> {
    let unit = &key[..unit_len(index)];
    match index {
        // [prefix tx]: the tx is the unit.
        Index::Log => unit.to_vec(),
        _ => [unit, &tx.to_be_bytes()[..]].concat(),
    }
}

/// Appends the record of the per-datom `key` to its group's value: the key
/// past its unit, without the tx ([prefix tx] + [e a v added] for the log,
/// [unit] + [body] + [tx added] for the others).
fn push_record(index: Index, key: &[u8], records: &mut Vec<u8>) {
    let unit = unit_len(index);
    match index {
        Index::Log => records.extend_from_slice(&key[unit..]),
        _ => {
            records.extend_from_slice(&key[unit..key.len() - TX_SUFFIX_LEN]);
            records.push(key[key.len() - 1]);
        }
    }
}

/// The tx a group holds datoms of.
fn group_tx(index: Index, group: &[u8]) -> Option<EntityId> {
    let unit = unit_len(index);
    let bytes = match index {
        Index::Log => group.get(1..unit)?,
        _ => group.get(unit..unit + 8)?,
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
    let corrupt = || StorageError::Corrupt(format!("a {} group key: {group:02x?}", index.name()));
    let tx = group_tx(index, group).ok_or_else(corrupt)?;
    let unit = &group[..unit_len(index)];
    let mut reader = KeyReader::new(records);
    while !reader.is_at_end() {
        let start = reader.position();
        match index {
            // e a v
            Index::Log => {
                reader.u64()?;
                reader.u64()?;
                reader.skip_value()?;
            }
            // a v
            Index::Eavt => {
                reader.u64()?;
                reader.skip_value()?;
            }
            // the entity's low byte, v
            Index::Aevt => {
                reader.u8()?;
                reader.skip_value()?;
            }
            // the target's low byte, a e
            _ => {
                reader.u8()?;
                reader.u64()?;
                reader.u64()?;
            }
        }
        let body_end = reader.position();
        let added = reader.u8()?;
        let mut key = Vec::with_capacity(unit.len() + body_end - start + TX_SUFFIX_LEN);
        key.extend_from_slice(unit);
        key.extend_from_slice(&records[start..body_end]);
        if index != Index::Log {
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
        let unit = unit_len(index);
        let group_lo = lo[..lo.len().min(unit)].to_vec();
        let group_hi = if hi.len() > unit {
            prefix_end(&hi[..unit])
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
        let unit_len = unit_len(self.index);
        let unit = first.0[..unit_len.min(first.0.len())].to_vec();
        let mut group = Some(first);
        while let Some((key, records)) = group.take() {
            if key.len() < unit_len || key[..unit_len] != unit[..] {
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
            // Another block of 256 entities, for AEVT.
            datom(300, 3, Value::from("z"), 100, true),
        ]
    }

    fn grouped_tree(datoms: &[Datom]) -> sled::Tree {
        let db = sled::Config::new().temporary(true).open().unwrap();
        for (key, value) in entries(datoms, |d| matches!(d.v, Value::Ref(_))) {
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
        // Three log keys, one EAVT key per entity and tx, one AEVT key per
        // attribute, block and tx.
        assert_eq!(tree.scan_prefix([Index::Log.prefix_byte()]).count(), 3);
        assert_eq!(tree.scan_prefix([Index::Eavt.prefix_byte()]).count(), 7);
        assert_eq!(tree.scan_prefix([Index::Aevt.prefix_byte()]).count(), 6);
        assert_eq!(tree.scan_prefix([Index::Vaet.prefix_byte()]).count(), 1);
        for index in [Index::Eavt, Index::Aevt, Index::Vaet, Index::Log] {
            let refs: Vec<Datom> = datoms
                .iter()
                .filter(|d| index != Index::Vaet || matches!(d.v, Value::Ref(_)))
                .cloned()
                .collect();
            let all = per_datom(index, &refs);
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
        // One entity's attribute in AEVT, inside its block.
        let lo = [
            &[Index::Aevt.prefix_byte()][..],
            &3u64.to_be_bytes(),
            &7u64.to_be_bytes(),
        ]
        .concat();
        let want: Vec<_> = per_datom(Index::Aevt, &datoms)
            .into_iter()
            .filter(|k| k.starts_with(&lo))
            .collect();
        assert_eq!(want.len(), 3);
        assert_eq!(
            read(&tree, Index::Aevt, &lo, &prefix_end(&lo), u64::MAX, false),
            want
        );
        // The log from tx 101 on.
        let from = [&[Index::Log.prefix_byte()][..], &101u64.to_be_bytes()].concat();
        let end = [&[Index::Log.prefix_byte()][..], &103u64.to_be_bytes()].concat();
        assert_eq!(
            read(&tree, Index::Log, &from, &end, u64::MAX, false).len(),
            4
        );
    }
}
