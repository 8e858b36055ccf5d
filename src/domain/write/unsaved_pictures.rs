//! Pictures no version names yet: who sent them, who may see them, and
//! collecting the ones no version ever named.
//!
//! A picture is stored before the transaction that names it, so that a
//! write can never name a missing picture; so some pictures are never
//! named: a form refused and left, an import that failed after its picture
//! came. Until a version names one, only the cooks who sent it see it
//! (their form shows it back to them); once `GRACE_MS` has passed since
//! anyone last sent it with no version naming it, it is collected. A
//! picture that any version ever named is kept for good: history shows it.
//!
//! Each sending is a record in the `picture-uploads` keyspace,
//! `{hash}/{handle}` to the instant (milliseconds, big-endian). Pictures
//! stored before the records were kept are given one, from the first
//! collection on, so that they have their grace too.

use super::{store_error, Recipes};
use crate::domain::pictures::{self, Picture};
use crate::domain::DomainError;
use crate::store::{self, StoreError, TransactError, Transaction};

/// The keyspace of sendings.
pub(super) const UPLOADS: &str = "picture-uploads";
/// How long a picture no version names is kept after it was last sent: a
/// day, time to come back to a refused form.
pub const GRACE_MS: i64 = 24 * 3_600_000;
/// Set once every picture stored before sendings were recorded has one.
const BACKFILLED: &[u8] = b"\x00backfilled";
/// What a picture's size record holds while it is being collected: a
/// picture that is not there to any reader or writer.
pub(super) const COLLECTING: &[u8] = b"collecting";

/// Who may see a stored picture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// A version names it: anyone, and any cache.
    ByAnyone,
    /// No version names it yet: only a cook who sent it, and no shared cache.
    BySender,
}

impl Recipes {
    /// Records that `handle` sent the picture `hash` now: it is theirs to
    /// see until a version names it, and kept for `GRACE_MS` from now.
    pub(super) fn note_sending(&self, hash: &str, handle: &str) -> Result<(), DomainError> {
        let now = store::now_millis();
        self.uploads
            .insert(&sending_key(hash, handle), &now.to_be_bytes())
            .map_err(StoreError::from)?;
        Ok(())
    }

    /// The stored picture `hash`, if `reader` (a cook's handle, or `None`
    /// for a visitor) may see it, and how widely.
    pub fn picture_for(
        &self,
        hash: &str,
        reader: Option<&str>,
    ) -> Result<Option<(Picture, Seen)>, DomainError> {
        if !pictures::is_hash(hash) {
            return Ok(None);
        }
        // A picture a version names is never collected: its size record
        // never changes, and is kept on the node (`named_picture`).
        if self.snapshot().names_picture(hash)? {
            return Ok(self
                .named_picture(hash)?
                .map(|picture| (picture, Seen::ByAnyone)));
        }
        let Some(reader) = reader else {
            return Ok(None);
        };
        let Some(picture) = self.picture(hash)? else {
            return Ok(None);
        };
        let sent = self
            .uploads
            .get(&sending_key(hash, reader))
            .map_err(store_error)?;
        Ok(sent.map(|_| (picture, Seen::BySender)))
    }

    /// Collects every picture no version ever named and no one has sent
    /// for `GRACE_MS`; forgets the sendings of pictures a version now
    /// names. Returns how many pictures were collected.
    pub fn collect_unsaved_pictures(&self) -> Result<usize, DomainError> {
        self.collect_unsaved_pictures_at(store::now_millis())
    }

    /// `collect_unsaved_pictures` as if it were `now` (milliseconds since
    /// the epoch): how a test makes a day pass.
    pub fn collect_unsaved_pictures_at(&self, now: i64) -> Result<usize, DomainError> {
        self.backfill_sendings(now)?;
        let mut collected = 0;
        for (hash, last_sent) in self.last_sendings(b"")? {
            if self.snapshot().names_picture(&hash)? {
                self.forget_sendings(&hash)?;
            } else if last_sent + GRACE_MS <= now && self.collect(&hash, now)? {
                collected += 1;
            }
        }
        Ok(collected)
    }

    /// Each picture with a sending whose key starts with `prefix`, and
    /// when it was last sent.
    fn last_sendings(&self, prefix: &[u8]) -> Result<Vec<(String, i64)>, DomainError> {
        let mut out: Vec<(String, i64)> = Vec::new();
        for record in self.uploads.scan_prefix(prefix) {
            let (key, value) = record.map_err(store_error)?;
            let Some((hash, at)) = read_sending(&key, &value) else {
                continue;
            };
            match out.last_mut() {
                Some((last, latest)) if *last == hash => *latest = (*latest).max(at),
                _ => out.push((hash, at)),
            }
        }
        Ok(out)
    }

    /// Gives each picture stored before sendings were recorded a sending
    /// at `now`, once: a full scan of the pictures, the one time.
    fn backfill_sendings(&self, now: i64) -> Result<(), DomainError> {
        if self.uploads.get(BACKFILLED).map_err(store_error)?.is_some() {
            return Ok(());
        }
        let mut entries = Vec::new();
        for record in self.pictures.scan_prefix(b"") {
            let (key, _) = record.map_err(store_error)?;
            // Size records only: a variant's key is no hash.
            let Some(hash) = std::str::from_utf8(&key)
                .ok()
                .filter(|k| pictures::is_hash(k))
            else {
                continue;
            };
            let has_sending = self
                .uploads
                .scan_prefix(&sending_prefix(hash))
                .next()
                .is_some();
            if !has_sending {
                entries.push((sending_key(hash, ""), now.to_be_bytes().to_vec()));
            }
        }
        entries.push((BACKFILLED.to_vec(), Vec::new()));
        self.uploads
            .insert_all(&entries)
            .map_err(StoreError::from)?;
        Ok(())
    }

    fn forget_sendings(&self, hash: &str) -> Result<(), DomainError> {
        self.uploads
            .remove_prefix(&sending_prefix(hash))
            .map_err(StoreError::from)?;
        Ok(())
    }

    /// Collects `hash` unless it was sent again or a version names it.
    ///
    /// Sending and storing wait for `picture_writes`, so no one sends it
    /// meanwhile. A write names a picture only after the writer has seen
    /// it stored (`check_picture`), so the picture is first marked as
    /// being collected (no longer stored to any reader), then the writer
    /// is waited for: any write that saw it stored has then been applied,
    /// and the latest value says whether one named it.
    fn collect(&self, hash: &str, now: i64) -> Result<bool, DomainError> {
        let _writes = self.lock_picture_writes();
        let sent_again = self
            .last_sendings_of(hash)?
            .is_some_and(|at| at + GRACE_MS > now);
        let Some(size) = self.pictures.get(hash.as_bytes()).map_err(store_error)? else {
            self.forget_sendings(hash)?;
            return Ok(false);
        };
        if sent_again || size.as_ref() == COLLECTING {
            return Ok(false);
        }
        let marked = self
            .pictures
            .compare_and_swap(hash.as_bytes(), Some(&size), Some(COLLECTING))
            .map_err(StoreError::from)?;
        if !marked {
            return Ok(false);
        }
        if self.named_on_latest(hash)? {
            self.pictures
                .compare_and_swap(hash.as_bytes(), Some(COLLECTING), Some(&size))
                .map_err(StoreError::from)?;
            self.forget_sendings(hash)?;
            return Ok(false);
        }
        // Its variants (`{hash}-{name}`), then its size record.
        let mut keys = self
            .pictures
            .scan_prefix(format!("{hash}-").as_bytes())
            .map(|record| record.map(|(key, _)| key.to_vec()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(store_error)?;
        keys.push(hash.as_bytes().to_vec());
        self.pictures.remove_all(keys).map_err(StoreError::from)?;
        self.forget_sendings(hash)?;
        Ok(true)
    }

    /// When `hash` was last sent, if it has a sending.
    fn last_sendings_of(&self, hash: &str) -> Result<Option<i64>, DomainError> {
        let sendings = self.last_sendings(&sending_prefix(hash))?;
        Ok(sendings.first().map(|(_, at)| *at))
    }

    /// Whether a version names `hash` on the latest value, read inside the
    /// writer (which writes nothing): every write decided before this call
    /// has been applied.
    fn named_on_latest(&self, hash: &str) -> Result<bool, DomainError> {
        let attrs = self.attrs;
        let decided = self.store.transact_with(|db| {
            let named = super::Snapshot::new(db.clone(), attrs).names_picture(hash);
            Err::<(Transaction, ()), _>(Barrier::Named(named))
        });
        match decided {
            Ok(_) => unreachable!("the barrier writes nothing"),
            Err(Barrier::Named(named)) => named,
            Err(Barrier::Refused(e)) => Err(StoreError::from(e).into()),
        }
    }
}

/// How `named_on_latest`'s look inside the writer ends: never in a write.
enum Barrier {
    Named(Result<bool, DomainError>),
    Refused(TransactError),
}

impl From<TransactError> for Barrier {
    fn from(e: TransactError) -> Barrier {
        Barrier::Refused(e)
    }
}

fn sending_prefix(hash: &str) -> Vec<u8> {
    format!("{hash}/").into_bytes()
}

fn sending_key(hash: &str, handle: &str) -> Vec<u8> {
    format!("{hash}/{handle}").into_bytes()
}

/// A sending record's picture and instant; `None` for another key.
fn read_sending(key: &[u8], value: &[u8]) -> Option<(String, i64)> {
    let key = std::str::from_utf8(key).ok()?;
    let (hash, _) = key.split_once('/')?;
    let at = i64::from_be_bytes(value.try_into().ok()?);
    pictures::is_hash(hash).then(|| (hash.to_owned(), at))
}
