//! Values stored compressed: the groups of the log, EAVT, AEVT and VAET.
//!
//! The log, EAVT and AEVT each hold every value ever asserted, recipe
//! texts included: a seeded store of 100,000 full recipes was 4.2 times
//! its export on disk (issue 33 asks at most 3x). A group is a
//! transaction's datoms of one unit, their texts side by side, and LZ4
//! packs them well: packed, that store is 2.7-2.9 times its export
//! (docs/journal/33-close-to-the-limit.md, "Groups stored packed"). LZ4 rather than
//! deflate (flate2, which the pages use): a read unpacks every group it
//! passes over, and LZ4 unpacks several times faster for a little less
//! packing.
//!
//! The current-entity blocks are not packed. Packed too, the store was
//! 1.8 times its export instead of 2.7-2.9, but a page reads a block an
//! entity at a time, and even with each thread keeping the blocks it
//! unpacked last, the crawl lost 3.5% of its pages a second.
//!
//! A stored value is a tag byte, then the value as it is (`RAW`) or
//! LZ4's block format with the unpacked length before it (`LZ4`). A value
//! under `MIN_PACKED` bytes, or one LZ4 would not make smaller, is kept
//! raw and read back without a copy.

use std::borrow::Cow;

use super::error::StorageError;

const RAW: u8 = 0;
const LZ4: u8 = 1;

/// Shorter values are kept raw: a group of a few short datoms (a rename, a
/// fork's reference) gains little and would pay the unpacking.
const MIN_PACKED: usize = 128;

/// The most LZ4 can unpack one byte into (a run costs at least one byte
/// per 255 repeated): a stored length past that is corrupt, and is not
/// allocated.
const MAX_RATIO: usize = 255;

/// `raw` as it is stored: tagged, packed when that is smaller.
pub(crate) fn pack(raw: &[u8]) -> Vec<u8> {
    if raw.len() >= MIN_PACKED {
        let packed = lz4_flex::compress_prepend_size(raw);
        if packed.len() < raw.len() {
            let mut stored = Vec::with_capacity(1 + packed.len());
            stored.push(LZ4);
            stored.extend_from_slice(&packed);
            return stored;
        }
    }
    let mut stored = Vec::with_capacity(1 + raw.len());
    stored.push(RAW);
    stored.extend_from_slice(raw);
    stored
}

/// The value `stored` holds: borrowed when it was kept raw.
pub(crate) fn unpack(stored: &[u8]) -> Result<Cow<'_, [u8]>, StorageError> {
    match stored.split_first() {
        Some((&RAW, raw)) => Ok(Cow::Borrowed(raw)),
        Some((&LZ4, packed)) => {
            let (len, body) = lz4_flex::block::uncompressed_size(packed)
                .map_err(|_| corrupt(stored, "has no length"))?;
            if len > packed.len().saturating_mul(MAX_RATIO) {
                return Err(corrupt(stored, "says it is longer than it can be"));
            }
            // LZ4 stops at the end of its input: a length past what the
            // value holds would otherwise pass as a shorter value.
            match lz4_flex::block::decompress(body, len) {
                Ok(raw) if raw.len() == len => Ok(Cow::Owned(raw)),
                Ok(_) => Err(corrupt(stored, "holds other than its length says")),
                Err(_) => Err(corrupt(stored, "does not unpack")),
            }
        }
        _ => Err(corrupt(stored, "has no known packing")),
    }
}

/// The error for a stored value that cannot be what it says.
fn corrupt(stored: &[u8], why: &str) -> StorageError {
    let shown = &stored[..stored.len().min(16)];
    StorageError::Corrupt(format!("a stored value {why}: {shown:02x?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn short_values_are_kept_raw_and_long_ones_packed() {
        let short = b"a rename".to_vec();
        assert_eq!(pack(&short), [&[RAW][..], &short].concat());
        let long = "Simmer the onions until soft. ".repeat(20).into_bytes();
        let stored = pack(&long);
        assert_eq!(stored[0], LZ4);
        assert!(stored.len() < long.len() / 4, "{} bytes", stored.len());
        assert_eq!(unpack(&stored).unwrap(), &long[..]);
        // As packed as LZ4 goes, and still within `MAX_RATIO`.
        let zeros = vec![0u8; 1 << 20];
        let stored = pack(&zeros);
        assert!(stored.len() * 200 < zeros.len(), "{} bytes", stored.len());
        assert_eq!(unpack(&stored).unwrap(), &zeros[..]);
    }

    #[test]
    fn a_value_lz4_cannot_shrink_is_kept_raw() {
        // Bytes with no repeats: LZ4 would add to them.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let noise: Vec<u8> = (0..400)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        let stored = pack(&noise);
        assert_eq!(stored[0], RAW);
        assert!(matches!(unpack(&stored).unwrap(), Cow::Borrowed(b) if b == &noise[..]));
    }

    #[test]
    fn damaged_values_are_corrupt_not_a_panic_or_a_huge_allocation() {
        let long = "Fold in the flour. ".repeat(30).into_bytes();
        let stored = pack(&long);
        let mut huge_length = stored.clone();
        huge_length[1..5].copy_from_slice(&u32::MAX.to_le_bytes());
        let with_length = |len: usize| {
            let mut damaged = stored.clone();
            damaged[1..5].copy_from_slice(&(len as u32).to_le_bytes());
            damaged
        };
        let mut cut = stored.clone();
        cut.truncate(stored.len() / 2);
        for (damaged, what) in [
            (vec![], "empty"),
            (vec![7, 1, 2], "unknown tag"),
            (vec![LZ4, 1], "no length"),
            (huge_length, "a length past LZ4's"),
            (
                with_length(long.len() - 1),
                "a length short of what it holds",
            ),
            (with_length(long.len() + 1), "a length past what it holds"),
            (cut, "cut short"),
        ] {
            assert!(
                matches!(unpack(&damaged), Err(StorageError::Corrupt(_))),
                "{what}"
            );
        }
    }

    proptest! {
        #[test]
        fn whatever_is_packed_unpacks_to_itself(
            raw in proptest::collection::vec(prop_oneof![Just(b'a'), any::<u8>()], 0..2000)
        ) {
            let stored = pack(&raw);
            prop_assert!(stored.len() <= raw.len() + 1);
            prop_assert_eq!(&*unpack(&stored).unwrap(), &raw[..]);
        }
    }
}
