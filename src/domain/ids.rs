//! The typed numbers at the domain's surface.
//!
//! In the store an entity, a transaction and a basis are all `u64`, so a
//! call like `content_at(id, tx)` would take two swappable numbers. Above
//! the store each has its own type: a `RecipeId`, a `Basis` (a transaction,
//! and the database value just after it), a `VersionNumber` (counted from
//! 1) and an `Instant`. A request is parsed into them once, at the edge.

use std::fmt;
use std::num::NonZeroU32;

use crate::store::{self, EntityId};

/// A recipe's entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RecipeId(EntityId);

impl RecipeId {
    /// The recipe whose entity is `entity`, for code that works below the
    /// domain too (the seeder, tests and benches).
    pub fn new(entity: EntityId) -> RecipeId {
        RecipeId(entity)
    }

    /// The store's entity id of this recipe.
    pub fn entity(self) -> EntityId {
        self.0
    }

    /// A recipe id as a cursor or address writes it (its decimal number).
    /// Whether a recipe has it is for a read to say.
    pub fn parse(text: &str) -> Option<RecipeId> {
        // `u64::from_str` takes a leading `+`; an id is digits only.
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        text.parse().ok().map(RecipeId)
    }
}

impl fmt::Display for RecipeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A transaction, and the database value just after it: the basis a
/// snapshot reads at, or the transaction that made a version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Basis(EntityId);

impl Basis {
    pub(crate) fn new(tx: EntityId) -> Basis {
        Basis(tx)
    }

    pub(crate) fn tx(self) -> EntityId {
        self.0
    }

    /// The number, for what reports it (`/healthz`).
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Basis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::LowerHex for Basis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerHex::fmt(&self.0, f)
    }
}

/// A version of a recipe, counted from 1. The newest version's number is
/// also how many versions the recipe has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VersionNumber(NonZeroU32);

impl VersionNumber {
    pub const FIRST: VersionNumber = VersionNumber(NonZeroU32::MIN);

    /// Version `n`, if `n` can be one (1 to `u32::MAX`).
    pub fn new(n: u64) -> Option<VersionNumber> {
        u32::try_from(n)
            .ok()
            .and_then(NonZeroU32::new)
            .map(VersionNumber)
    }

    /// A version number as an address writes it: digits, from 1.
    pub fn parse(text: &str) -> Option<VersionNumber> {
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        text.parse::<u64>().ok().and_then(VersionNumber::new)
    }

    /// A stored number (`:recipe/version-count`, `:recipe/forked-at-version`).
    pub(crate) fn stored(n: i64) -> Option<VersionNumber> {
        u64::try_from(n).ok().and_then(VersionNumber::new)
    }

    pub fn get(self) -> u32 {
        self.0.get()
    }

    /// Where this version sits in a list of versions, oldest first.
    pub fn index(self) -> usize {
        self.0.get() as usize - 1
    }

    /// The version `n` places before this one, stopping at the first.
    pub fn back(self, n: u32) -> VersionNumber {
        VersionNumber::new(u64::from(self.get().saturating_sub(n))).unwrap_or(Self::FIRST)
    }

    /// The version after this one (`None` past `u32::MAX` versions).
    pub fn next(self) -> Option<VersionNumber> {
        self.0.checked_add(1).map(VersionNumber)
    }

    /// The version at `index` of a list of versions, oldest first.
    pub(crate) fn at_index(index: usize) -> VersionNumber {
        VersionNumber::new(index as u64 + 1).expect("fewer than u32::MAX versions")
    }
}

impl fmt::Display for VersionNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A moment, to the millisecond (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(i64);

impl Instant {
    pub fn from_millis(millis: i64) -> Instant {
        Instant(millis)
    }

    /// Milliseconds since 1970-01-01T00:00:00Z.
    pub fn millis(self) -> i64 {
        self.0
    }

    /// Appends the RFC 3339 form (`2026-03-14T09:30:00.123Z`) to `out`,
    /// without allocating: pages write one on every line of a list.
    pub fn write_rfc3339(self, out: &mut String) {
        store::write_rfc3339(out, self.0);
    }
}

/// The RFC 3339 form, `2026-03-14T09:30:00.123Z`.
impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&store::format_rfc3339(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_from_an_address_are_digits_only() {
        assert_eq!(RecipeId::parse("42"), Some(RecipeId(42)));
        for bad in ["", "+42", "-1", "4 2", "x", "18446744073709551616"] {
            assert_eq!(RecipeId::parse(bad), None, "{bad:?}");
        }
        assert_eq!(VersionNumber::parse("3").map(VersionNumber::get), Some(3));
        for bad in ["", "0", "+1", "-1", "1.0", "4294967296"] {
            assert_eq!(VersionNumber::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_version_counts_from_one() {
        let third = VersionNumber::new(3).unwrap();
        assert_eq!(third.index(), 2);
        assert_eq!(third.back(1).get(), 2);
        assert_eq!(third.back(7), VersionNumber::FIRST);
        assert_eq!(VersionNumber::at_index(0), VersionNumber::FIRST);
        assert_eq!(VersionNumber::stored(0), None);
        assert_eq!(VersionNumber::stored(-4), None);
    }
}
