//! The indexes stored in groups: the log, one sled key per transaction;
//! EAVT, one per block of 16 entity ids and transaction; AEVT, one per
//! attribute, block of 256 entity ids and transaction; VAET, one per
//! referenced entity and transaction, except refs to entities made in the
//! same transaction (a recipe's ingredients and steps), one per block of
//! 256 of those and transaction. AVET, ordered by value, is kept in posting
//! lists instead (`postings`).
//!
//! sled 0.34's cost is per key: every insert copies the leaf it lands in
//! (leaves hold at most 16 keys), and every leaf is a page with its own
//! entry in sled's page table and cache, in memory and on disk. A full
//! recipe is about 104 datoms; one key per datom in the log, EAVT, AEVT
//! and VAET made 328 of its 400 keys. Grouped, EAVT is one key per block
//! of entities a transaction touches (a recipe, its ingredients and steps
//! have neighbouring ids: one or two blocks each), and the others a share of
//! their transaction's few keys. The groups keep everything the per-datom
//! indexes gave: a unit's keys are adjacent, and its history is in them.
//!
//! Readers never see a group. `Grouped` expands the groups of each unit it
//! passes over back into the keys a per-datom index would hold (the same
//! bytes that `encoding::datom_key` makes), sorted, so folding runs of keys
//! into facts reads the same for every index. A group's key is its unit
//! (under its layout's prefix byte) and the tx (the log's unit is its tx),
//! and its value is the records of its datoms, each the rest of its
//! per-datom key without the unit and the tx. Every per-datom key of one
//! unit starts with the same `unit_len` bytes, but for EAVT, whose unit is
//! the entity's id shifted right by `EAVT_BLOCK_BITS` and whose records
//! begin with the bits shifted out. A read costs the groups of every unit
//! it touches: the history of one block of 16 entities (a recipe's past
//! costs its neighbours' too: its components, which a version page reads
//! anyway, and maybe its transaction and another recipe's parts), one
//! attribute over 256 entities, one referenced entity's referrers over
//! time (a cook is referred to by every recipe they wrote, so those stay
//! per target), or one transaction.

use std::collections::VecDeque;
use std::ops::{Range, RangeInclusive};

use sled::IVec;

use super::encoding::{datom_key, prefix_end, Datom, Index, KeyReader, TX_SUFFIX_LEN};
use super::error::StorageError;
use super::packed;
use super::value::{EntityId, Value};

/// The prefix byte of VAET's groups of refs to entities made in the same
/// transaction (beside META 0x00, the indexes 0x01 to 0x05 and the
/// current-entity entries 0x06).
const VAET_BORN_PREFIX: u8 = 0x07;

/// EAVT's unit is a block of `1 << EAVT_BLOCK_BITS` neighbouring entity
/// ids (keyed by the id shifted right, where the current-entity blocks are
/// keyed by their first id). Grouped by entity, EAVT was 1.41 million of a
/// 100,000-recipe store's 2.43 million sled keys; by blocks of 16 it is
/// 97,506 (by blocks of 256 it would be 15,471, but reading a past entity
/// would then cost 256 entities' history): docs/journal/13-kept-pages.md.
const EAVT_BLOCK_BITS: u32 = 4;
const EAVT_BLOCK_MASK: EntityId = (1 << EAVT_BLOCK_BITS) - 1;

/// The entity of a per-datom EAVT key, or the entity id that the bytes
/// after a bound's prefix byte start (the missing bytes taken as zeros).
fn entity_at(bound: &[u8]) -> EntityId {
    let mut id = [0u8; 8];
    let bytes = bound.get(1..).unwrap_or_default();
    let len = bytes.len().min(8);
    id[..len].copy_from_slice(&bytes[..len]);
    u64::from_be_bytes(id)
}

/// The sled keys of the EAVT groups that a read of the per-datom keys
/// `lo..hi` reads, as bounds of one raw range of the tree: what a read
/// ahead of it reads (`Db::read_ahead_in_passing`). Empty where the
/// bounds touch no group.
pub(crate) fn eavt_group_bounds(lo: &[u8], hi: &[u8]) -> Range<Vec<u8>> {
    Layout::Eavt.group_range(lo, hi).0
}

/// How one grouped index, or part of one, is laid out in sled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// The log: a unit is a transaction.
    Log,
    /// EAVT: a unit is a block of 16 neighbouring entity ids.
    Eavt,
    /// AEVT: a unit is an attribute over a block of 256 entity ids.
    Aevt,
    /// VAET: a unit is a referenced entity.
    Vaet,
    /// VAET's refs to entities made in the same transaction: a unit is a
    /// block of 256 such entities. A seeded recipe's 14 component refs so
    /// share one key with their neighbours', while a cook, referred to by
    /// every recipe they write, keeps a unit of their own.
    VaetBorn,
}

impl Layout {
    const ALL: [Layout; 5] = [
        Layout::Eavt,
        Layout::Aevt,
        Layout::Vaet,
        Layout::VaetBorn,
        Layout::Log,
    ];

    fn index(self) -> Index {
        match self {
            Layout::Log => Index::Log,
            Layout::Eavt => Index::Eavt,
            Layout::Aevt => Index::Aevt,
            Layout::Vaet | Layout::VaetBorn => Index::Vaet,
        }
    }

    /// The first byte of its groups' keys.
    fn prefix(self) -> u8 {
        match self {
            Layout::VaetBorn => VAET_BORN_PREFIX,
            other => other.index().prefix_byte(),
        }
    }

    /// How many leading bytes of a group's key name its unit, and of a
    /// per-datom key but for EAVT: prefix and tx (the log); prefix and
    /// the entity's block (EAVT); prefix, attribute and the entity's seven
    /// high bytes (AEVT); prefix, the ref's tag and the target (VAET), or
    /// the target's seven high bytes (born refs).
    fn unit_len(self) -> usize {
        match self {
            Layout::Aevt => 16,
            Layout::Vaet => 10,
            _ => 9,
        }
    }

    /// Whether two per-datom keys belong to one unit.
    fn same_unit(self, a: &[u8], b: &[u8]) -> bool {
        match self {
            Layout::Eavt => entity_at(a) >> EAVT_BLOCK_BITS == entity_at(b) >> EAVT_BLOCK_BITS,
            _ => a[..self.unit_len()] == b[..self.unit_len()],
        }
    }

    /// The key of the group of per-datom `key`: its unit under this
    /// layout's prefix byte, then the tx (but for the log, whose unit is
    /// its tx).
    fn group_key(self, key: &[u8], tx: EntityId) -> Vec<u8> {
        let mut group = Vec::with_capacity(self.unit_len() + 8);
        group.push(self.prefix());
        match self {
            Layout::Eavt => {
                group.extend_from_slice(&(entity_at(key) >> EAVT_BLOCK_BITS).to_be_bytes())
            }
            _ => group.extend_from_slice(&key[1..self.unit_len()]),
        }
        if self != Layout::Log {
            group.extend_from_slice(&tx.to_be_bytes());
        }
        group
    }

    /// The range of group keys that holds every per-datom key in `lo..hi`
    /// (per-datom keys, or their prefixes): the groups of every unit the
    /// bounds touch, whole; and, for EAVT, the entities those keys can
    /// be of (a bound inside a unit is applied per key).
    /// `group_bounds` as one range of sled's keys, empty where the bounds
    /// touch no group: what a read of `lo..hi` reads of the tree.
    fn group_range(self, lo: &[u8], hi: &[u8]) -> (Range<Vec<u8>>, RangeInclusive<EntityId>) {
        let (group_lo, group_hi, entities) = self.group_bounds(lo, hi);
        let range = if group_lo < group_hi {
            group_lo..group_hi
        } else {
            group_hi.clone()..group_hi
        };
        (range, entities)
    }

    fn group_bounds(self, lo: &[u8], hi: &[u8]) -> (Vec<u8>, Vec<u8>, RangeInclusive<EntityId>) {
        // Group keys carry the layout's prefix byte for the index's.
        let physical = |bound: &[u8]| {
            let mut key = bound.to_vec();
            if let Some(first) = key.first_mut() {
                *first = self.prefix();
            }
            key
        };
        let unit = self.unit_len();
        let (group_lo, group_hi, entities) = match self {
            Layout::Eavt => {
                let block = |e: EntityId| {
                    [&[self.prefix()][..], &(e >> EAVT_BLOCK_BITS).to_be_bytes()].concat()
                };
                let (group_lo, first) = if lo.len() > 1 {
                    let first = entity_at(lo);
                    (block(first), first)
                } else {
                    (physical(lo), 0)
                };
                // The last entity a key below `hi` can be of: `hi`'s own
                // if `hi` goes past its entity's bytes, else the one before.
                let in_index = hi.first() == Some(&self.index().prefix_byte());
                let (group_hi, last) = if in_index && hi.len() > 1 {
                    let last = if hi.len() > 9 {
                        Some(entity_at(hi))
                    } else {
                        entity_at(hi).checked_sub(1)
                    };
                    match last {
                        Some(last) => (prefix_end(&block(last)), last),
                        // Below entity 0: nothing.
                        None => (group_lo.clone(), 0),
                    }
                } else {
                    (physical(hi), EntityId::MAX)
                };
                (group_lo, group_hi, first..=last)
            }
            _ => {
                let group_hi = if hi.len() > unit {
                    prefix_end(&physical(&hi[..unit]))
                } else {
                    physical(hi)
                };
                (
                    physical(&lo[..lo.len().min(unit)]),
                    group_hi,
                    0..=EntityId::MAX,
                )
            }
        };
        // A bound past the whole index (the end of its prefix) stays past
        // all of this layout's groups.
        let group_hi = if hi.first() > Some(&self.index().prefix_byte()) {
            vec![self.prefix() + 1]
        } else {
            group_hi
        };
        (group_lo, group_hi, entities)
    }

    /// The tx a group holds datoms of, if the key is a group key.
    fn group_tx(self, group: &[u8]) -> Option<EntityId> {
        let unit = self.unit_len();
        let (bytes, len) = match self {
            Layout::Log => (group.get(1..unit)?, unit),
            _ => (group.get(unit..unit + 8)?, unit + 8),
        };
        (group.len() == len).then(|| u64::from_be_bytes(bytes.try_into().expect("eight bytes")))
    }

    /// Appends the record of the per-datom `key` to its group's value: the
    /// key past its unit, without the tx (for EAVT, the entity's bits that
    /// its block leaves out first).
    fn push_record(self, key: &[u8], records: &mut Vec<u8>) {
        let unit = self.unit_len();
        if self == Layout::Eavt {
            records.push((entity_at(key) & EAVT_BLOCK_MASK) as u8);
        }
        match self {
            // [prefix tx] + [e a v added]
            Layout::Log => records.extend_from_slice(&key[unit..]),
            // [unit] + [body] + [tx added]
            _ => {
                records.extend_from_slice(&key[unit..key.len() - TX_SUFFIX_LEN]);
                records.push(key[key.len() - 1]);
            }
        }
    }

    /// Steps over one record's body (the part before `added`; for EAVT,
    /// after the entity's low bits).
    fn skip_body(self, reader: &mut KeyReader) -> Result<(), StorageError> {
        match self {
            // e a v
            Layout::Log => {
                reader.u64()?;
                reader.u64()?;
                reader.skip_value()?;
            }
            // a v
            Layout::Eavt => {
                reader.u64()?;
                reader.skip_value()?;
            }
            // the entity's low byte, v
            Layout::Aevt => {
                reader.u8()?;
                reader.skip_value()?;
            }
            // a e
            Layout::Vaet => {
                reader.u64()?;
                reader.u64()?;
            }
            // the target's low byte, a e
            Layout::VaetBorn => {
                reader.u8()?;
                reader.u64()?;
                reader.u64()?;
            }
        }
        Ok(())
    }

    /// Appends the per-datom keys of one group to `out`: those of
    /// `entities` only, for EAVT (every key, for the others).
    fn expand(
        self,
        group: &[u8],
        records: &[u8],
        entities: &RangeInclusive<EntityId>,
        out: &mut Vec<Vec<u8>>,
    ) -> Result<(), StorageError> {
        let tx = self
            .group_tx(group)
            .ok_or_else(|| corrupt_group(self, group))?;
        let unit = &group[1..self.unit_len()];
        let block = match self {
            Layout::Eavt => {
                let block = u64::from_be_bytes(unit.try_into().expect("a block's eight bytes"));
                if block >> (64 - EAVT_BLOCK_BITS) != 0 {
                    return Err(corrupt_group(self, group));
                }
                Some(block << EAVT_BLOCK_BITS)
            }
            _ => None,
        };
        let mut reader = KeyReader::new(records);
        while !reader.is_at_end() {
            let entity = match block {
                Some(first) => {
                    let low = u64::from(reader.u8()?);
                    if low > EAVT_BLOCK_MASK {
                        return Err(corrupt_group(self, group));
                    }
                    Some(first | low)
                }
                None => None,
            };
            let start = reader.position();
            self.skip_body(&mut reader)?;
            let body_end = reader.position();
            let added = reader.u8()?;
            match entity {
                // A group's records are in key order, so by entity: past
                // the last entity wanted, nothing more is.
                Some(e) if e > *entities.end() => break,
                Some(e) if e < *entities.start() => continue,
                _ => {}
            }
            let mut key = Vec::with_capacity(unit.len() + body_end - start + TX_SUFFIX_LEN + 1);
            key.push(self.index().prefix_byte());
            match entity {
                Some(e) => key.extend_from_slice(&e.to_be_bytes()),
                None => key.extend_from_slice(unit),
            }
            key.extend_from_slice(&records[start..body_end]);
            if self != Layout::Log {
                key.extend_from_slice(&tx.to_be_bytes());
            }
            key.push(added);
            out.push(key);
        }
        Ok(())
    }
}

fn corrupt_group(layout: Layout, group: &[u8]) -> StorageError {
    StorageError::Corrupt(format!("a {layout:?} group key: {group:02x?}"))
}

/// The grouped keys and values that hold `datoms`: see the module's doc.
/// `is_ref` tells the datoms of ref attributes (VAET's); refs to entities
/// from `born_from` on (made by these datoms' transaction) go in blocks.
/// The same datom twice (an import may list it twice) is written once, as
/// a per-datom key would be.
pub(crate) fn entries(
    datoms: &[Datom],
    is_ref: impl Fn(&Datom) -> bool,
    born_from: EntityId,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    let layout_of = |d: &Datom, layout: Layout| match layout {
        Layout::Vaet | Layout::VaetBorn => {
            let born = matches!(d.v, Value::Ref(target) if target >= born_from);
            is_ref(d) && (layout == Layout::VaetBorn) == born
        }
        _ => true,
    };
    let mut out = Vec::new();
    let mut keys: Vec<(EntityId, Vec<u8>)> = Vec::with_capacity(datoms.len());
    for layout in Layout::ALL {
        keys.clear();
        keys.extend(
            datoms
                .iter()
                .filter(|d| layout_of(d, layout))
                .map(|d| (d.tx, datom_key(layout.index(), d))),
        );
        // By tx, then key: a group's per-datom keys are a run, in order.
        keys.sort_unstable();
        keys.dedup();
        let mut rest = &keys[..];
        while let Some((tx, first)) = rest.first() {
            let run = rest
                .iter()
                .take_while(|(t, key)| t == tx && layout.same_unit(key, first))
                .count();
            let run_keys = &rest[..run];
            let mut records = Vec::with_capacity(run_keys.iter().map(|(_, k)| k.len()).sum());
            for (_, key) in run_keys {
                layout.push_record(key, &mut records);
            }
            out.push((layout.group_key(first, *tx), packed::pack(&records)));
            rest = &rest[run..];
        }
    }
    out
}

/// The per-datom keys of a grouped index in `lo..hi` (per-datom keys, or
/// their prefixes), in index order or reversed, from the groups of
/// transactions at or before `basis`. VAET's two layouts are read side by
/// side and merged.
pub(crate) struct Grouped {
    sources: Vec<Units>,
    /// Each source's next key, once looked at.
    heads: Vec<Option<IVec>>,
    reverse: bool,
    /// Set after an error: nothing more is read.
    failed: bool,
}

impl Grouped {
    pub(crate) fn new(
        tree: &sled::Tree,
        index: Index,
        lo: Vec<u8>,
        hi: Vec<u8>,
        basis: EntityId,
        reverse: bool,
    ) -> Grouped {
        let layouts: &[Layout] = match index {
            Index::Log => &[Layout::Log],
            Index::Eavt => &[Layout::Eavt],
            Index::Aevt => &[Layout::Aevt],
            _ => &[Layout::Vaet, Layout::VaetBorn],
        };
        let sources: Vec<Units> = layouts
            .iter()
            .map(|&layout| Units::new(tree, layout, lo.clone(), hi.clone(), basis, reverse))
            .collect();
        Grouped {
            heads: vec![None; sources.len()],
            sources,
            reverse,
            failed: false,
        }
    }
}

impl Iterator for Grouped {
    type Item = Result<IVec, StorageError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        // Fill every empty head, then take the smallest (or largest).
        for (source, head) in self.sources.iter_mut().zip(&mut self.heads) {
            if head.is_none() {
                match source.next() {
                    Some(Ok(key)) => *head = Some(key),
                    Some(Err(e)) => {
                        self.failed = true;
                        return Some(Err(e));
                    }
                    None => {}
                }
            }
        }
        let mut best: Option<usize> = None;
        for (i, head) in self.heads.iter().enumerate() {
            let Some(key) = head else { continue };
            let better = best.is_none_or(|b| {
                let current = self.heads[b].as_ref().expect("a head");
                if self.reverse {
                    key > current
                } else {
                    key < current
                }
            });
            if better {
                best = Some(i);
            }
        }
        best.and_then(|i| self.heads[i].take()).map(Ok)
    }
}

/// The per-datom keys of one layout's units in `lo..hi`, unit by unit.
struct Units {
    layout: Layout,
    groups: sled::Iter,
    lo: Vec<u8>,
    hi: Vec<u8>,
    /// The entities keys in `lo..hi` can be of (EAVT's records outside are
    /// not expanded).
    entities: RangeInclusive<EntityId>,
    basis: EntityId,
    reverse: bool,
    /// The first group of the next unit, read while finding the end of
    /// the one before.
    ahead: Option<(IVec, IVec)>,
    /// The current unit's keys, in the order they are handed out.
    ready: VecDeque<IVec>,
}

impl Units {
    fn new(
        tree: &sled::Tree,
        layout: Layout,
        lo: Vec<u8>,
        hi: Vec<u8>,
        basis: EntityId,
        reverse: bool,
    ) -> Units {
        let (groups, entities) = layout.group_range(&lo, &hi);
        let groups = tree.range(groups);
        Units {
            layout,
            groups,
            lo,
            hi,
            entities,
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
        let layout = self.layout;
        let unit_len = layout.unit_len();
        if layout.group_tx(&first.0).is_none() {
            return Err(corrupt_group(layout, &first.0));
        }
        let unit = first.0[..unit_len].to_vec();
        let mut keys = Vec::new();
        let mut group = Some(first);
        while let Some((key, records)) = group.take() {
            let Some(tx) = layout.group_tx(&key) else {
                return Err(corrupt_group(layout, &key));
            };
            if key[..unit_len] != unit[..] {
                self.ahead = Some((key, records));
                break;
            }
            if tx <= self.basis {
                let records = packed::unpack(&records)?;
                layout.expand(&key, &records, &self.entities, &mut keys)?;
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

impl Iterator for Units {
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
    use crate::value::Value;

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
            datom(9, 6, Value::Ref(2), 102, true),
            datom(7, 2, Value::Boolean(true), 102, true),
            datom(9, 2, Value::Double(1.5), 102, true),
            // Another block of 256 entities, for AEVT.
            datom(300, 3, Value::from("z"), 100, true),
        ]
    }

    fn grouped_tree(datoms: &[Datom]) -> sled::Tree {
        let db = sled::Config::new().temporary(true).open().unwrap();
        for (key, value) in entries(datoms, |d| matches!(d.v, Value::Ref(_)), 7) {
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
        // Three log keys, one AEVT key per attribute, block and tx.
        assert_eq!(tree.scan_prefix([Index::Log.prefix_byte()]).count(), 3);
        // One EAVT key per block of 16 entities and tx.
        assert_eq!(tree.scan_prefix([Index::Eavt.prefix_byte()]).count(), 4);
        assert_eq!(tree.scan_prefix([Index::Aevt.prefix_byte()]).count(), 7);
        // A ref to entity 2 (made before) in its own unit; one to 7 (made
        // from 7 on: born with the transaction) in a block.
        assert_eq!(tree.scan_prefix([Index::Vaet.prefix_byte()]).count(), 1);
        assert_eq!(tree.scan_prefix([VAET_BORN_PREFIX]).count(), 1);
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
    fn an_entitys_eavt_groups_as_read_ahead_are_those_its_read_expands() {
        let datoms = sample();
        let tree = grouped_tree(&datoms);
        let bounds = |e: EntityId, first: EntityId, last: EntityId| {
            let p = Index::Eavt.prefix_byte();
            let lo = [&[p][..], &e.to_be_bytes(), &first.to_be_bytes()].concat();
            let hi = [&[p][..], &e.to_be_bytes(), &(last + 1).to_be_bytes()].concat();
            (lo, hi)
        };
        // Entity 7's attributes 2 and 3: its block, 0..16, was written in
        // three transactions, one group each; entity 300's, in one.
        for (e, groups) in [(7, 3), (300, 1)] {
            let (lo, hi) = bounds(e, 2, 3);
            let ahead: Vec<IVec> = tree
                .range(eavt_group_bounds(&lo, &hi))
                .map(|group| group.unwrap().0)
                .collect();
            assert_eq!(ahead.len(), groups, "entity {e}");
            let block = (e >> EAVT_BLOCK_BITS).to_be_bytes();
            for key in &ahead {
                assert_eq!(key[0], Layout::Eavt.prefix());
                assert_eq!(key[1..9], block, "entity {e}: only its own block's groups");
            }
            // And the read of the same bounds expands those very groups.
            let of_e: Vec<Datom> = (datoms.iter())
                .filter(|d| d.e == e && (2..=3).contains(&d.a))
                .cloned()
                .collect();
            assert_eq!(
                read(&tree, Index::Eavt, &lo, &hi, u64::MAX, false),
                per_datom(Index::Eavt, &of_e)
            );
        }
    }

    #[test]
    fn eavt_reads_within_and_across_blocks_give_just_the_keys_in_bounds() {
        // Entities 14 to 18 straddle the blocks 0..16 and 16..32, in two
        // txs; two more are far out, one at the end of the ids.
        const FAR: u64 = 1 << 48 | 5;
        let datoms: Vec<Datom> = (14..=18)
            .chain([FAR, u64::MAX])
            .flat_map(|e| {
                [
                    datom(e, 3, Value::Long(e as i64), 100, true),
                    datom(e, 4, Value::from("x"), 101, true),
                ]
            })
            .collect();
        let tree = grouped_tree(&datoms);
        assert_eq!(tree.scan_prefix([Index::Eavt.prefix_byte()]).count(), 8);
        let all = per_datom(Index::Eavt, &datoms);
        let bound = |e: u64, a: Option<u64>| {
            let mut key = [&[Index::Eavt.prefix_byte()][..], &e.to_be_bytes()].concat();
            key.extend(a.map(u64::to_be_bytes).unwrap_or_default());
            key
        };
        let cases = [
            (bound(14, None), bound(15, None)),
            (bound(15, None), bound(16, None)),
            (bound(16, None), bound(17, None)),
            (bound(15, None), bound(17, None)),
            (bound(14, None), bound(19, None)),
            (bound(0, None), bound(14, None)),
            (bound(19, None), bound(40, None)),
            (bound(0, None), bound(0, None)),
            (bound(15, Some(4)), bound(16, Some(4))),
            (bound(16, Some(4)), prefix_end(&bound(16, Some(4)))),
            (vec![Index::Eavt.prefix_byte()], bound(16, None)),
            (bound(16, None), vec![Index::Eavt.prefix_byte() + 1]),
            // Bounds of part of an entity's bytes.
            (bound(16, None)[..3].to_vec(), bound(17, None)),
            (
                bound(FAR, None)[..3].to_vec(),
                bound(FAR, None)[..4].to_vec(),
            ),
            (
                bound(FAR, None)[..2].to_vec(),
                bound(FAR, None)[..3].to_vec(),
            ),
            (bound(FAR, Some(4)), bound(u64::MAX, None)),
            (bound(u64::MAX, None), vec![Index::Eavt.prefix_byte() + 1]),
            (
                bound(u64::MAX, Some(3)),
                prefix_end(&bound(u64::MAX, Some(3))),
            ),
        ];
        for (lo, hi) in cases {
            for basis in [100, 101] {
                let want: Vec<_> = all
                    .iter()
                    .filter(|k| **k >= lo && **k < hi)
                    .filter(|k| decode_tx(k) <= basis)
                    .cloned()
                    .collect();
                assert_eq!(
                    read(&tree, Index::Eavt, &lo, &hi, basis, false),
                    want,
                    "{lo:?}..{hi:?} at {basis}"
                );
                let mut back = want.clone();
                back.reverse();
                assert_eq!(read(&tree, Index::Eavt, &lo, &hi, basis, true), back);
            }
        }
    }

    /// The tx of a per-datom EAVT key.
    fn decode_tx(key: &[u8]) -> u64 {
        crate::encoding::decode_datom(Index::Eavt, key).unwrap().tx
    }

    #[test]
    fn an_eavt_record_whose_entity_bits_do_not_fit_its_block_is_corrupt() {
        let tree = grouped_tree(&[datom(7, 3, Value::Long(1), 100, true)]);
        let (key, records) = tree.iter().find_map(Result::ok).unwrap();
        assert_eq!(key[0], Index::Eavt.prefix_byte());
        let mut records = records.to_vec();
        // Past the packing's tag: a group this short is kept raw.
        records[1] = 16;
        tree.insert(key, records).unwrap();
        let p = [Index::Eavt.prefix_byte()];
        let read = Grouped::new(&tree, Index::Eavt, p.to_vec(), prefix_end(&p), 100, false)
            .collect::<Result<Vec<_>, _>>();
        assert!(matches!(read, Err(StorageError::Corrupt(_))), "{read:?}");
    }

    #[test]
    fn a_group_of_long_texts_is_stored_packed_and_read_back_whole() {
        let text = "Whisk the eggs with the sugar until pale. ".repeat(40);
        let datoms: Vec<Datom> = (0..4)
            .map(|e| datom(16 + e, 3, Value::from(text.as_str()), 100, true))
            .collect();
        let is_ref = |d: &Datom| matches!(d.v, Value::Ref(_));
        let stored: usize = entries(&datoms, is_ref, 7)
            .iter()
            .map(|(_, v)| v.len())
            .sum();
        // The log, EAVT and AEVT each hold every text.
        let raw = 3 * datoms.len() * text.len();
        assert!(stored * 10 < raw, "{stored} bytes stored for {raw} of text");
        let tree = grouped_tree(&datoms);
        for index in [Index::Log, Index::Eavt, Index::Aevt] {
            let p = [index.prefix_byte()];
            assert_eq!(
                read(&tree, index, &p, &prefix_end(&p), 100, false),
                per_datom(index, &datoms),
                "{index:?}"
            );
        }
    }

    #[test]
    fn the_same_datom_twice_is_written_once() {
        let datoms = sample();
        let mut twice = datoms.clone();
        twice.extend(datoms.iter().cloned());
        let is_ref = |d: &Datom| matches!(d.v, Value::Ref(_));
        assert_eq!(entries(&twice, is_ref, 7), entries(&datoms, is_ref, 7));
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
            5
        );
    }
}
