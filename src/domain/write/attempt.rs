//! A write sent twice is saved once.
//!
//! A browser sends a form again when its first answer was lost (a
//! connection cut, a node killed after its write, the 503 that could not
//! tell whether the log kept it), or when the cook clicks twice. Most
//! writes would refuse the second send on their own (an edit is based on
//! a version that has moved on, a chosen address is taken), but a fork or
//! an import whose address the writer chooses would be made twice.
//!
//! So a change may carry an `Attempt`: a sum of the form it was sent from
//! and of what it said. The transaction that saves it records the sum
//! (`:tx/attempt`, unique), and a change whose sum is recorded already
//! saves nothing and answers `AlreadySaved` with the recipe it wrote. The
//! check is made inside the writer, on the latest value, as every other
//! check: two sends at once, on one node or two, save one transaction; the
//! node whose append loses the race decides again on the value that holds
//! the other's, and finds it.

use blake2::digest::consts::U16;
use blake2::{Blake2b, Digest};

use super::Recipes;
use crate::domain::read::Snapshot;
use crate::domain::DomainError;
use crate::store::{Db, EntityId, Transaction, TxReport, Value};

/// The sum naming one sending of one form with what it said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt(String);

impl Attempt {
    /// The sum of `parts`: each is taken with its length, so that no two
    /// lists of parts have one sum by being cut in other places.
    pub fn of(parts: &[&[u8]]) -> Attempt {
        let mut hasher = Blake2b::<U16>::new();
        for part in parts {
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part);
        }
        Attempt(crate::domain::hex(&hasher.finalize()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Recipes {
    /// `Store::transact_with` for a change that is saved at most once: when
    /// the change's attempt is recorded already (on the latest value), the
    /// write is refused with `AlreadySaved` and nothing is written.
    pub(super) fn transact_once<T, Tx: std::borrow::Borrow<Transaction>>(
        &self,
        change: &super::Change,
        mut decide: impl FnMut(&Db) -> Result<(Tx, T), DomainError>,
    ) -> Result<(TxReport, T), DomainError> {
        let decided = self.store.transact_with(|db| {
            if let Some(attempt) = &change.attempt {
                let recorded =
                    db.entity_with(self.attrs.tx_attempt, &Value::from(attempt.as_str()))?;
                if let Some(tx) = recorded {
                    return Err(already_saved(&self.view_of(db), tx)?);
                }
            }
            decide(db)
        });
        if let Err(DomainError::AlreadySaved { .. }) = &decided {
            // The save was found on the writer's value, which readers may
            // not be shown yet: the page the answer leads to must show it.
            self.wait_published()?;
        }
        decided
    }
}

/// `AlreadySaved`, naming the recipe transaction `tx` gave a version to.
fn already_saved(view: &Snapshot, tx: EntityId) -> Result<DomainError, DomainError> {
    let slug = view.recipe_versioned_in(tx)?.ok_or_else(|| {
        DomainError::Invalid(format!("transaction {tx} saved this change and no recipe"))
    })?;
    Ok(DomainError::AlreadySaved { slug })
}

#[cfg(test)]
mod tests {
    use super::Attempt;

    #[test]
    fn parts_cut_in_other_places_are_another_attempt() {
        let one = Attempt::of(&[b"ab", b"c"]);
        assert_eq!(one, Attempt::of(&[b"ab", b"c"]));
        assert_ne!(one, Attempt::of(&[b"a", b"bc"]));
        assert_ne!(one, Attempt::of(&[b"abc"]));
        assert_eq!(one.as_str().len(), 32);
    }
}
