//! The journal: for each transaction applied here that its log does not
//! hold yet, how to take it back out (its undo), kept in sled beside it,
//! in the same batch, until the log holds it (`log_commit`).

use sled::IVec;

use super::error::StorageError;
use super::value::EntityId;

/// The journal's keys: this prefix, then the transaction's `t`.
pub(super) const JOURNAL_PREFIX: &[u8] = b"\x00unlogged/";

/// The journal key of transaction `t`.
pub(super) fn journal_key(t: EntityId) -> Vec<u8> {
    let mut key = JOURNAL_PREFIX.to_vec();
    key.extend_from_slice(&t.to_be_bytes());
    key
}

/// An undo as the journal keeps it: each key with a flag and what it held
/// before, then the AVET chunks; every length as four bytes.
pub(super) fn encode_journal(keys: &[(Vec<u8>, Option<IVec>)], chunks: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    let put = |bytes: &[u8], out: &mut Vec<u8>| {
        out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
        out.extend_from_slice(bytes);
    };
    out.extend_from_slice(&(keys.len() as u32).to_be_bytes());
    for (key, old) in keys {
        put(key, &mut out);
        match old {
            Some(old) => {
                out.push(1);
                put(old, &mut out);
            }
            None => out.push(0),
        }
    }
    out.extend_from_slice(&(chunks.len() as u32).to_be_bytes());
    for chunk in chunks {
        put(chunk, &mut out);
    }
    out
}

type Journal = (Vec<(Vec<u8>, Option<IVec>)>, Vec<Vec<u8>>);

/// Reads back what `encode_journal` wrote.
pub(super) fn decode_journal(bytes: &[u8]) -> Result<Journal, StorageError> {
    let mut reader = Reader(bytes);
    let mut keys = Vec::new();
    for _ in 0..reader.length()? {
        let key = reader.bytes()?.to_vec();
        let old = match reader.take(1)?[0] {
            0 => None,
            _ => Some(IVec::from(reader.bytes()?)),
        };
        keys.push((key, old));
    }
    let mut chunks = Vec::new();
    for _ in 0..reader.length()? {
        chunks.push(reader.bytes()?.to_vec());
    }
    Ok((keys, chunks))
}

/// The journal's bytes, read from the front.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], StorageError> {
        if self.0.len() < n {
            return Err(StorageError::Corrupt("a journal entry is cut short".into()));
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Ok(head)
    }

    fn length(&mut self) -> Result<usize, StorageError> {
        let bytes: [u8; 4] = self.take(4)?.try_into().expect("four bytes");
        Ok(u32::from_be_bytes(bytes) as usize)
    }

    fn bytes(&mut self) -> Result<&'a [u8], StorageError> {
        let n = self.length()?;
        self.take(n)
    }
}
