//! Bringing a parent's changes into a fork: the merge decided in the
//! writer, on the latest value, as every write is.

use super::{check_author, check_based_on, stamp, Change, Recipes};
use crate::domain::ids::VersionNumber;
use crate::domain::merge::Choice;
use crate::domain::slug::Slug;
use crate::domain::{diff, DomainError};
use crate::store::{EntityRef, Transaction, TxReport};

/// What history says a version that brought in a parent's changes did.
pub fn brought_in_line(version: VersionNumber, parent_title: &str, what: &str) -> String {
    format!("brought in version {version} of {parent_title}: {what}")
}

impl Recipes {
    /// Brings the changes of the parent of `slug` up to its version `upto`
    /// into the fork, as a new version of the fork. `based_on` is the
    /// fork's version the cook saw and `choices` settle the merge's
    /// conflicts, in order: if the fork moved on, the merge is refused
    /// (`Stale`), and choices that do not fit the merge (`Unresolved`)
    /// save nothing. The version records `upto`, where the next merge
    /// starts; it is saved even if the fork's content stays as it was (the
    /// cook kept their side of every change), so the fork is in step.
    pub fn bring_in(
        &self,
        slug: &Slug,
        based_on: VersionNumber,
        upto: VersionNumber,
        choices: &[Choice],
        change: &Change,
    ) -> Result<TxReport, DomainError> {
        let mut stamped = Transaction::new();
        stamp(&mut stamped, change)?;
        let (report, ()) = self.transact_once(change, |db| -> Result<_, DomainError> {
            let view = self.view_of(db);
            let fork = view.current(slug)?;
            check_author(slug, &fork, change)?;
            check_based_on(slug, &fork, based_on)?;
            let changes = view.parent_changes(&fork, Some(upto))?;
            let merged = changes
                .merge
                .resolved(choices)
                .ok_or(DomainError::Unresolved {
                    conflicts: changes.merge.conflicts().len(),
                })?
                .normalized()?;
            self.check_picture(&merged)?;
            let what = diff::recipes(&fork.content, &merged);
            let what = if what.is_empty() {
                "kept every change of its own".to_owned()
            } else {
                what.summary()
            };
            let line = brought_in_line(upto, &changes.parent.content.title, &what);
            let mut tx =
                self.version_transaction(&view, &fork, &merged, change, line, Some(upto))?;
            let e = fork.id.entity();
            tx.add(e, ":recipe/merged-at", EntityRef::Id(changes.upto_at.tx()))
                .add(e, ":recipe/merged-at-version", i64::from(upto.get()));
            tx.extend(stamped.clone());
            Ok((tx, ()))
        })?;
        Ok(report)
    }
}
