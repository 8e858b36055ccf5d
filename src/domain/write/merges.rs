//! Bringing a parent's changes into a fork: the merge decided in the
//! writer, on the latest value, as every write is.

use super::{check_author, check_based_on, stamp, Change, Recipes};
use crate::domain::ids::VersionNumber;
use crate::domain::merge::{self, Choice};
use crate::domain::slug::Slug;
use crate::domain::{diff, DomainError};
use crate::store::{EntityRef, Transaction, TxReport};

/// What history says a version that brought in a parent's changes did:
/// what it changed, and how each conflict was settled (`settled`).
pub fn brought_in_line(
    version: VersionNumber,
    parent_title: &str,
    what: &str,
    settled: Option<&str>,
) -> String {
    match settled {
        Some(settled) => {
            format!("brought in version {version} of {parent_title}: {what}; {settled}")
        }
        None => format!("brought in version {version} of {parent_title}: {what}"),
    }
}

impl Recipes {
    /// Brings the changes of the parent of `slug` up to its version `upto`
    /// into the fork, as a new version of the fork, with `choices`
    /// settling the merge's conflicts in order. The form showed the merge
    /// of the fork's version `based_on` with the parent's `upto`, then its
    /// newest: if either recipe moved on since, nothing is saved (`Stale`
    /// for the fork, `MergeMoved` for the parent), and the cook sees the
    /// merge again. Choices that do not settle it (`Unresolved`) save
    /// nothing, and neither does a merge with nothing to bring in
    /// (`UpToDate`). A version where the cook kept their own side of every
    /// conflict is saved: it records their choices, and the fork is in
    /// step.
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
            let changes = view.parent_changes(&fork, None)?;
            let parent = &changes.parent;
            if changes.upto != upto {
                return Err(DomainError::MergeMoved {
                    slug: parent.slug.to_string(),
                    title: parent.content.title.clone(),
                    newest: changes.upto,
                });
            }
            let merged = changes.merge.resolved(choices)?.normalized()?;
            if changes.merge.is_clean() && merged == fork.content {
                // The parent's changes are all the fork's already: no
                // version says nothing.
                return Err(DomainError::UpToDate {
                    slug: slug.to_string(),
                    parent: parent.content.title.clone(),
                    version: upto,
                });
            }
            self.check_picture(&merged)?;
            let what = diff::recipes(&fork.content, &merged);
            let what = if what.is_empty() {
                "no change to the recipe".to_owned()
            } else {
                what.summary()
            };
            let settled = changes.merge.settled(choices, &parent.content.title);
            let line = brought_in_line(upto, &parent.content.title, &what, settled.as_deref());
            let mut tx = self.version_transaction(
                &view,
                &fork,
                &merged,
                change,
                line,
                Some((upto, &changes.parent_content)),
            )?;
            let e = fork.id.entity();
            tx.add(e, ":recipe/merged-at", EntityRef::Id(changes.upto_at.tx()))
                .add(e, ":recipe/merged-at-version", i64::from(upto.get()));
            let kept = changes.merge.kept_own(choices);
            if kept > 0 {
                tx.add(e, ":recipe/kept-own", kept as i64);
            } else if fork.kept_own > 0 {
                tx.retract(e, ":recipe/kept-own", i64::from(fork.kept_own));
            }
            tx.extend(stamped.clone());
            Ok((tx, ()))
        })?;
        Ok(report)
    }
}

/// Whether `content`, a fork's new version, has changes its parent lacks,
/// against the content the fork agrees with (`base`): all but its title
/// and picture, which are its own and never suggested.
pub(super) fn has_own_changes(
    base: &crate::domain::Content,
    content: &crate::domain::Content,
) -> bool {
    merge::as_suggested(base, content) != *base
}
