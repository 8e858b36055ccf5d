//! Order-preserving byte encodings of values, datoms and index keys.
//!
//! Every index lives in one sled tree, told apart by a leading byte, so that
//! one transaction's keys for all indexes go into one atomic sled batch. A
//! per-datom key is the datom's components in the index's order, each
//! encoded so that comparing keys as bytes compares the components in order
//! (AVET is stored so; the log, EAVT, AEVT and VAET are stored in groups
//! that readers expand back into these keys: `grouped`):
//!
//! - integers (entity ids, longs, instants) are big-endian, with the sign bit
//!   flipped for signed ones so negatives sort first;
//! - doubles are the IEEE bits with the sign bit flipped for positives and all
//!   bits flipped for negatives (this is `f64::total_cmp`'s order);
//! - strings and keywords are their UTF-8 bytes with `00` escaped as `00 FF`
//!   and a terminator `00 01`, so a string sorts before its extensions and the
//!   component after it never bleeds into the comparison;
//! - a value starts with its type's tag, so values of different types never
//!   compare equal and order by type first.
//!
//! Every per-datom key but the log's ends with `tx` (8 bytes) and `added`
//! (1 byte); the log's starts with `tx` and ends with `added`. Everything before
//! those nine bytes names the fact `(e, a, v)` itself, so all the assertions
//! and retractions of one fact sit next to each other in tx order, which is
//! what lets a database value at a basis be a filter over a scan.

use super::error::StorageError;
use super::value::{EntityId, Keyword, Value, ValueType};

/// The index a key belongs to, which is also its first byte in the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Index {
    /// Entity, attribute, value, tx: every datom; "what does entity e say".
    Eavt,
    /// Attribute, entity, value, tx: every datom; "who has attribute a".
    Aevt,
    /// Attribute, value, entity, tx: unique and indexed attributes only;
    /// "who has a = v", lookup refs and range queries on values.
    Avet,
    /// Value (an entity), attribute, entity, tx: ref attributes only;
    /// "who points at e", reverse refs.
    Vaet,
    /// Tx, entity, attribute, value: every datom in transaction order.
    Log,
}

/// Keys of the store's own bookkeeping (format version, basis, next id).
pub(crate) const META_PREFIX: u8 = 0x00;

impl Index {
    pub const ALL: [Index; 5] = [
        Index::Eavt,
        Index::Aevt,
        Index::Avet,
        Index::Vaet,
        Index::Log,
    ];

    pub fn prefix_byte(self) -> u8 {
        match self {
            Index::Eavt => 0x01,
            Index::Aevt => 0x02,
            Index::Avet => 0x03,
            Index::Vaet => 0x04,
            Index::Log => 0x05,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Index::Eavt => "eavt",
            Index::Aevt => "aevt",
            Index::Avet => "avet",
            Index::Vaet => "vaet",
            Index::Log => "log",
        }
    }
}

/// One fact, asserted or retracted, at a transaction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Datom {
    pub e: EntityId,
    pub a: EntityId,
    pub v: Value,
    pub tx: EntityId,
    pub added: bool,
}

/// Length of the `tx` and `added` suffix that ends every index key.
pub(crate) const TX_SUFFIX_LEN: usize = 9;

/// Appends the order-preserving encoding of `value`, its type tag first.
pub(crate) fn encode_value(out: &mut Vec<u8>, value: &Value) {
    out.push(value.value_type() as u8);
    match value {
        Value::Ref(e) => out.extend_from_slice(&e.to_be_bytes()),
        Value::String(s) => encode_text(out, s),
        Value::Long(n) | Value::Instant(n) => out.extend_from_slice(&encode_i64(*n)),
        Value::Double(x) => out.extend_from_slice(&encode_f64(*x)),
        Value::Boolean(b) => out.push(u8::from(*b)),
        Value::Keyword(k) => encode_text(out, k.as_str()),
        Value::Uuid(u) => out.extend_from_slice(u),
    }
}

fn encode_i64(n: i64) -> [u8; 8] {
    ((n as u64) ^ (1 << 63)).to_be_bytes()
}

fn decode_i64(bytes: [u8; 8]) -> i64 {
    (u64::from_be_bytes(bytes) ^ (1 << 63)) as i64
}

fn encode_f64(x: f64) -> [u8; 8] {
    let bits = x.to_bits();
    let ordered = if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    };
    ordered.to_be_bytes()
}

fn decode_f64(bytes: [u8; 8]) -> f64 {
    let ordered = u64::from_be_bytes(bytes);
    let bits = if ordered >> 63 == 1 {
        ordered & !(1 << 63)
    } else {
        !ordered
    };
    f64::from_bits(bits)
}

fn encode_text(out: &mut Vec<u8>, text: &str) {
    for &b in text.as_bytes() {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0x00, 0x01]);
}

/// The encoding of every string value that starts with `prefix`, up to
/// where they differ: the tag and the escaped bytes, without a terminator.
pub(crate) fn encode_text_prefix(out: &mut Vec<u8>, prefix: &str) {
    out.push(ValueType::String as u8);
    for &b in prefix.as_bytes() {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
}

/// A cursor over an encoded key, decoding components in order.
pub(crate) struct KeyReader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> KeyReader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> KeyReader<'a> {
        KeyReader { bytes, at: 0 }
    }

    fn corrupt(&self, why: &str) -> StorageError {
        StorageError::Corrupt(format!(
            "{why} at byte {} of key {:02x?}",
            self.at, self.bytes
        ))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], StorageError> {
        let end = self.at + n;
        let slice = self
            .bytes
            .get(self.at..end)
            .ok_or_else(|| self.corrupt("key ends early"))?;
        self.at = end;
        Ok(slice)
    }

    fn take8(&mut self) -> Result<[u8; 8], StorageError> {
        Ok(self.take(8)?.try_into().expect("eight bytes"))
    }

    pub(crate) fn u8(&mut self) -> Result<u8, StorageError> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn u64(&mut self) -> Result<u64, StorageError> {
        Ok(u64::from_be_bytes(self.take8()?))
    }

    /// Decodes an escaped, terminated text. Most texts have no NUL byte, so
    /// their bytes are the text itself: those are borrowed, not copied.
    fn text(&mut self) -> Result<std::borrow::Cow<'a, str>, StorageError> {
        let rest = &self.bytes[self.at..];
        let nul = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| self.corrupt("text has no terminator"))?;
        if rest.get(nul + 1) == Some(&0x01) {
            let text =
                std::str::from_utf8(&rest[..nul]).map_err(|_| self.corrupt("text is not UTF-8"))?;
            self.at += nul + 2;
            return Ok(std::borrow::Cow::Borrowed(text));
        }
        let mut raw = Vec::with_capacity(rest.len());
        loop {
            match self.u8()? {
                0x00 => match self.u8()? {
                    0x01 => break,
                    0xFF => raw.push(0),
                    _ => return Err(self.corrupt("bad escape in text")),
                },
                b => raw.push(b),
            }
        }
        String::from_utf8(raw)
            .map(std::borrow::Cow::Owned)
            .map_err(|_| self.corrupt("text is not UTF-8"))
    }

    pub(crate) fn value(&mut self) -> Result<Value, StorageError> {
        let tag = self.u8()?;
        let value_type = ValueType::ALL
            .get(usize::from(tag))
            .copied()
            .ok_or_else(|| self.corrupt("unknown value tag"))?;
        Ok(match value_type {
            ValueType::Ref => Value::Ref(self.u64()?),
            ValueType::String => Value::String(std::sync::Arc::from(self.text()?.as_ref())),
            ValueType::Long => Value::Long(decode_i64(self.take8()?)),
            ValueType::Instant => Value::Instant(decode_i64(self.take8()?)),
            ValueType::Double => Value::Double(decode_f64(self.take8()?)),
            ValueType::Boolean => Value::Boolean(self.u8()? != 0),
            ValueType::Keyword => {
                let text = self.text()?;
                Value::Keyword(Keyword::parse(&text).map_err(|_| self.corrupt("bad keyword"))?)
            }
            ValueType::Uuid => Value::Uuid(self.take(16)?.try_into().expect("sixteen bytes")),
        })
    }

    /// How many bytes have been read.
    pub(crate) fn position(&self) -> usize {
        self.at
    }

    /// Steps over one encoded value without decoding it.
    pub(crate) fn skip_value(&mut self) -> Result<(), StorageError> {
        let tag = self.u8()?;
        let value_type = ValueType::ALL
            .get(usize::from(tag))
            .copied()
            .ok_or_else(|| self.corrupt("unknown value tag"))?;
        match value_type {
            ValueType::Ref | ValueType::Long | ValueType::Instant | ValueType::Double => {
                self.take(8)?;
            }
            ValueType::Boolean => {
                self.take(1)?;
            }
            ValueType::Uuid => {
                self.take(16)?;
            }
            ValueType::String | ValueType::Keyword => loop {
                // A NUL is either the terminator (NUL 0x01) or an escaped
                // NUL (NUL 0xFF); every other byte is the text's own.
                let rest = &self.bytes[self.at..];
                let nul = rest
                    .iter()
                    .position(|&b| b == 0)
                    .ok_or_else(|| self.corrupt("text has no terminator"))?;
                self.at += nul + 1;
                match self.u8()? {
                    0x01 => break,
                    0xFF => {}
                    _ => return Err(self.corrupt("bad escape in text")),
                }
            },
        }
        Ok(())
    }

    pub(crate) fn is_at_end(&self) -> bool {
        self.at == self.bytes.len()
    }
}

/// The key of `datom` in `index`, leading index byte included.
pub(crate) fn datom_key(index: Index, datom: &Datom) -> Vec<u8> {
    let mut key = Vec::with_capacity(48);
    key.push(index.prefix_byte());
    match index {
        Index::Eavt => {
            key.extend_from_slice(&datom.e.to_be_bytes());
            key.extend_from_slice(&datom.a.to_be_bytes());
            encode_value(&mut key, &datom.v);
        }
        Index::Aevt => {
            key.extend_from_slice(&datom.a.to_be_bytes());
            key.extend_from_slice(&datom.e.to_be_bytes());
            encode_value(&mut key, &datom.v);
        }
        Index::Avet => {
            key.extend_from_slice(&datom.a.to_be_bytes());
            encode_value(&mut key, &datom.v);
            key.extend_from_slice(&datom.e.to_be_bytes());
        }
        Index::Vaet => {
            encode_value(&mut key, &datom.v);
            key.extend_from_slice(&datom.a.to_be_bytes());
            key.extend_from_slice(&datom.e.to_be_bytes());
        }
        Index::Log => {
            key.extend_from_slice(&datom.tx.to_be_bytes());
            key.extend_from_slice(&datom.e.to_be_bytes());
            key.extend_from_slice(&datom.a.to_be_bytes());
            encode_value(&mut key, &datom.v);
            key.push(u8::from(datom.added));
            return key;
        }
    }
    key.extend_from_slice(&datom.tx.to_be_bytes());
    key.push(u8::from(datom.added));
    key
}

/// The smallest key greater than every key that starts with `prefix`.
pub(crate) fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xFF {
            end.push(last + 1);
            return end;
        }
    }
    vec![0xFF; prefix.len() + 1]
}

/// Decodes a key of `index` (leading byte included) back into its datom.
pub(crate) fn decode_datom(index: Index, key: &[u8]) -> Result<Datom, StorageError> {
    let mut r = KeyReader::new(key);
    if r.u8()? != index.prefix_byte() {
        return Err(r.corrupt("key belongs to another index"));
    }
    let (e, a, v, tx);
    match index {
        Index::Eavt => {
            e = r.u64()?;
            a = r.u64()?;
            v = r.value()?;
            tx = r.u64()?;
        }
        Index::Aevt => {
            a = r.u64()?;
            e = r.u64()?;
            v = r.value()?;
            tx = r.u64()?;
        }
        Index::Avet => {
            a = r.u64()?;
            v = r.value()?;
            e = r.u64()?;
            tx = r.u64()?;
        }
        Index::Vaet => {
            v = r.value()?;
            a = r.u64()?;
            e = r.u64()?;
            tx = r.u64()?;
        }
        Index::Log => {
            tx = r.u64()?;
            e = r.u64()?;
            a = r.u64()?;
            v = r.value()?;
        }
    }
    let added = r.u8()? != 0;
    if !r.is_at_end() {
        return Err(r.corrupt("trailing bytes after datom"));
    }
    Ok(Datom { e, a, v, tx, added })
}

/// The `tx` and `added` at the end of a key of any index but the log.
pub(crate) fn key_tx_added(key: &[u8]) -> (EntityId, bool) {
    let suffix = &key[key.len() - TX_SUFFIX_LEN..];
    let tx = u64::from_be_bytes(suffix[..8].try_into().expect("eight bytes"));
    (tx, suffix[8] != 0)
}

/// Which components of a datom a range read is restricted to.
///
/// A read uses the longest run of bound components in the index's own order
/// as a key prefix, and filters on any bound component after a gap; so any
/// combination is answered correctly, and the right index makes it cheap.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Components {
    pub e: Option<EntityId>,
    pub a: Option<EntityId>,
    pub v: Option<Value>,
}

impl Components {
    pub fn any() -> Components {
        Components::default()
    }

    pub fn e(mut self, e: EntityId) -> Components {
        self.e = Some(e);
        self
    }

    pub fn a(mut self, a: EntityId) -> Components {
        self.a = Some(a);
        self
    }

    pub fn v(mut self, v: impl Into<Value>) -> Components {
        self.v = Some(v.into());
        self
    }

    /// The key prefix for `index`, and whether bound components remain that
    /// the prefix does not cover (and so must be checked datom by datom).
    pub fn key_prefix(&self, index: Index) -> (Vec<u8>, bool) {
        enum Part<'a> {
            Id(Option<EntityId>),
            Val(Option<&'a Value>),
        }
        let (e, a, v) = (
            Part::Id(self.e),
            Part::Id(self.a),
            Part::Val(self.v.as_ref()),
        );
        let order = match index {
            Index::Eavt => [e, a, v],
            Index::Aevt => [a, e, v],
            Index::Avet => [a, v, e],
            Index::Vaet => [v, a, e],
            // The log is read by tx, never by these components.
            Index::Log => [Part::Id(None), Part::Id(None), Part::Id(None)],
        };
        let mut key = vec![index.prefix_byte()];
        let mut covered = 0;
        for part in &order {
            match part {
                Part::Id(Some(id)) => key.extend_from_slice(&id.to_be_bytes()),
                Part::Val(Some(value)) if index == Index::Vaet => match value {
                    Value::Ref(_) => encode_value(&mut key, value),
                    // Only refs are in VAET: nothing else can match.
                    _ => return (vec![index.prefix_byte(), 0xFF, 0xFF], false),
                },
                Part::Val(Some(value)) => encode_value(&mut key, value),
                _ => break,
            }
            covered += 1;
        }
        let bound = usize::from(self.e.is_some())
            + usize::from(self.a.is_some())
            + usize::from(self.v.is_some());
        (key, bound > covered)
    }

    pub fn matches(&self, datom: &Datom) -> bool {
        self.e.is_none_or(|e| e == datom.e)
            && self.a.is_none_or(|a| a == datom.a)
            && self.v.as_ref().is_none_or(|v| *v == datom.v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::kw;
    use proptest::prelude::*;

    fn encoded(value: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        encode_value(&mut out, value);
        out
    }

    fn any_value() -> impl Strategy<Value = Value> {
        prop_oneof![
            any::<u64>().prop_map(Value::Ref),
            ".*".prop_map(Value::from),
            // Strings with NULs and prefixes of each other stress the escape.
            prop::collection::vec(
                prop_oneof![Just('\0'), Just('a'), Just('\u{ff}'), Just('é')],
                0..6
            )
            .prop_map(|cs| Value::from(cs.into_iter().collect::<String>())),
            any::<i64>().prop_map(Value::Long),
            any::<f64>()
                .prop_filter("NaN is refused", |x| !x.is_nan())
                .prop_map(Value::Double),
            prop_oneof![
                Just(0.0),
                Just(-0.0),
                Just(f64::INFINITY),
                Just(f64::NEG_INFINITY),
                Just(f64::MIN_POSITIVE)
            ]
            .prop_map(Value::Double),
            any::<bool>().prop_map(Value::Boolean),
            any::<i64>().prop_map(Value::Instant),
            "[a-z]{1,4}(/[a-z_?-]{1,4})?".prop_map(|s| Value::Keyword(kw(&s))),
            any::<[u8; 16]>().prop_map(Value::Uuid),
        ]
    }

    proptest! {
        #[test]
        fn byte_order_of_encoded_values_is_value_order(a in any_value(), b in any_value()) {
            prop_assert_eq!(encoded(&a).cmp(&encoded(&b)), a.cmp(&b));
        }

        #[test]
        fn values_decode_to_what_was_encoded(v in any_value()) {
            let bytes = encoded(&v);
            let mut reader = KeyReader::new(&bytes);
            let back = reader.value().unwrap();
            prop_assert!(reader.is_at_end());
            prop_assert_eq!(back.value_type(), v.value_type());
            prop_assert_eq!(back, v);
        }

        #[test]
        fn key_order_is_component_order_in_every_index(
            a in (0u64..4, 0u64..4, any_value(), 0u64..4, any::<bool>()),
            b in (0u64..4, 0u64..4, any_value(), 0u64..4, any::<bool>()),
        ) {
            let d = |(e, a, v, tx, added): (u64, u64, Value, u64, bool)| Datom { e, a, v, tx, added };
            let (da, db) = (d(a), d(b));
            for index in Index::ALL {
                let id = Value::Ref;
                let tuple = |x: &Datom| match index {
                    Index::Eavt => (id(x.e), id(x.a), x.v.clone(), id(x.tx), x.added),
                    Index::Aevt => (id(x.a), id(x.e), x.v.clone(), id(x.tx), x.added),
                    Index::Avet => (id(x.a), x.v.clone(), id(x.e), id(x.tx), x.added),
                    Index::Vaet => (x.v.clone(), id(x.a), id(x.e), id(x.tx), x.added),
                    Index::Log => (id(x.tx), id(x.e), id(x.a), x.v.clone(), x.added),
                };
                let (ka, kb) = (datom_key(index, &da), datom_key(index, &db));
                prop_assert_eq!(ka.cmp(&kb), tuple(&da).cmp(&tuple(&db)), "index {:?}", index);
                prop_assert_eq!(decode_datom(index, &ka).unwrap(), da.clone());
            }
        }
    }

    #[test]
    fn negative_numbers_sort_before_positive_ones() {
        let order = [i64::MIN, -1, 0, 1, i64::MAX].map(|n| encoded(&Value::Long(n)));
        assert!(order.windows(2).all(|w| w[0] < w[1]));
        let floats = [
            f64::NEG_INFINITY,
            -1.5,
            -0.0,
            0.0,
            1e-300,
            2.0,
            f64::INFINITY,
        ]
        .map(|x| encoded(&Value::Double(x)));
        assert!(floats.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_string_sorts_before_its_extensions_even_with_nul_bytes() {
        let a = encoded(&Value::from("ab"));
        let b = encoded(&Value::from("ab\0"));
        let c = encoded(&Value::from("abc"));
        assert!(a < b && b < c);
    }

    #[test]
    fn a_prefix_covers_the_bound_components_in_index_order() {
        let c = Components::any().e(7).a(3);
        let (eavt, extra) = c.key_prefix(Index::Eavt);
        assert_eq!(eavt.len(), 1 + 8 + 8);
        assert!(!extra);
        let (aevt, extra) = c.key_prefix(Index::Aevt);
        assert_eq!(aevt.len(), 1 + 8 + 8);
        assert!(!extra);
        let (avet, extra) = c.key_prefix(Index::Avet);
        assert_eq!(
            avet.len(),
            1 + 8,
            "AVET covers a, then stops at the unbound v"
        );
        assert!(extra);
    }
}
