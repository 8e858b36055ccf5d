//! Bringing a parent's changes into a fork: the merge decided in the
//! writer, on the latest value, as every write is.

use super::{check_author, check_based_on, stamp, Change, Recipes};
use crate::domain::ids::VersionNumber;
use crate::domain::merge::{self, Choice};
use crate::domain::read::{ParentChanges, Recipe, Snapshot};
use crate::domain::slug::Slug;
use crate::domain::{diff, DomainError};
use crate::store::{EntityMap, EntityRef, Transaction, TxReport};

/// What history says a version that brought in a parent's changes did:
/// what it changed, and how each conflict was settled (`settled`).
pub(super) fn brought_in_line(
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
    /// (`UpToDate`). A merge that changes nothing of the fork (it had the
    /// parent's changes already, or the cook kept their own side of each)
    /// is no version: an agreement records that the fork is in step, and
    /// the cook's choices.
    pub fn bring_in(
        &self,
        slug: &Slug,
        based_on: VersionNumber,
        upto: VersionNumber,
        choices: &[Choice],
        change: &Change,
    ) -> Result<TxReport, DomainError> {
        self.bring_in_as(slug, based_on, None, upto, choices, change)
    }

    /// `bring_in`, from a form that also showed where the fork agreed with
    /// its parent then (`since`): if it has come to agree with a later
    /// version meanwhile (another window's bring-in, which made no
    /// version), the form's merge is no longer the one to save
    /// (`AgreedMeanwhile`).
    pub fn bring_in_shown(
        &self,
        slug: &Slug,
        based_on: VersionNumber,
        since: VersionNumber,
        upto: VersionNumber,
        choices: &[Choice],
        change: &Change,
    ) -> Result<TxReport, DomainError> {
        self.bring_in_as(slug, based_on, Some(since), upto, choices, change)
    }

    fn bring_in_as(
        &self,
        slug: &Slug,
        based_on: VersionNumber,
        since: Option<VersionNumber>,
        upto: VersionNumber,
        choices: &[Choice],
        change: &Change,
    ) -> Result<TxReport, DomainError> {
        let attrs = &self.attrs;
        let mut stamped = Transaction::new();
        stamp(&mut stamped, change, &self.attrs)?;
        let (report, ()) = self.transact_once(change, |db| -> Result<_, DomainError> {
            let view = self.view_of(db);
            let fork = view.current(slug)?;
            check_author(slug, &fork, change)?;
            check_based_on(slug, &fork, based_on)?;
            if let Some(since) = since {
                let agreed = view
                    .agreed(&fork)?
                    .ok_or_else(|| DomainError::NoParent(slug.to_string()))?;
                if agreed.version != since {
                    return Err(DomainError::AgreedMeanwhile {
                        title: fork.content.title().to_owned(),
                        version: agreed.version,
                    });
                }
            }
            let changes = view.parent_changes(&fork, None)?;
            let parent = &changes.parent;
            if changes.upto != upto {
                return Err(DomainError::MergeMoved {
                    slug: parent.slug.to_string(),
                    title: parent.content.title().to_owned(),
                    newest: changes.upto,
                });
            }
            let merged = changes.merge.resolved(choices)?;
            let settled = changes.merge.settled(choices, parent.content.title());
            if merged == fork.content {
                let mut tx = agreement(&view, &fork, upto, &changes, choices, settled)?;
                tx.extend(stamped.clone());
                return Ok((tx, ()));
            }
            self.check_picture(&merged)?;
            // `summary` says "no change to the recipe" when there is none.
            let what = diff::summary(&fork.content, &merged);
            let line = brought_in_line(upto, parent.content.title(), &what, settled.as_deref());
            let mut tx = self.version_transaction(
                &view,
                &fork,
                &merged,
                change,
                line,
                Some((upto, &changes.parent_content)),
            )?;
            let e = fork.id.entity();
            tx.add(e, attrs.merged_at, EntityRef::Id(changes.upto_at.tx()))
                .add(e, attrs.merged_at_version, i64::from(upto.get()));
            let kept = changes.merge.kept_own(choices);
            if kept > 0 {
                tx.add(e, attrs.kept_own, kept as i64);
            } else if fork.kept_own > 0 {
                tx.retract(e, attrs.kept_own, i64::from(fork.kept_own));
            }
            tx.extend(stamped.clone());
            Ok((tx, ()))
        })?;
        Ok(report)
    }
}

/// The datoms of an agreement: the fork, which a merge of its parent's
/// changes up to version `upto` leaves as it is, agrees with that version
/// from now on. No datom of the fork's own, so it gains no version; its
/// open suggestion's base moves to `upto`, as a version that brought the
/// parent's in moves it.
fn agreement(
    view: &Snapshot,
    fork: &Recipe,
    upto: VersionNumber,
    changes: &ParentChanges,
    choices: &[Choice],
    settled: Option<String>,
) -> Result<Transaction, DomainError> {
    let attrs = &view.attrs;
    let mut agreement = EntityMap::new(EntityRef::temp("agreement"))
        .with(attrs.agreement_fork, EntityRef::Id(fork.id.entity()))
        .with(attrs.agreement_parent_version, i64::from(upto.get()))
        .with(attrs.agreement_fork_version, i64::from(fork.newest().get()))
        .with(
            attrs.agreement_kept_own,
            changes.merge.kept_own(choices) as i64,
        )
        .with(
            attrs.agreement_own_changes,
            has_own_changes(&changes.parent_content, &fork.content),
        );
    if let Some(settled) = settled {
        agreement = agreement.with(attrs.agreement_settled, settled.as_str());
    }
    let mut tx = Transaction::new();
    tx.map(agreement);
    super::suggestions::follow_base(view, fork, upto, &mut tx)?;
    Ok(tx)
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
