//! Suggestions: a fork proposes its changes to its parent's author, who
//! accepts (a new version of the parent, merged onto its latest) or
//! declines; the suggester may withdraw. Every state change is decided in
//! the writer, on the latest value.

use super::{check_author, check_based_on, stamp, Change, Recipes};
use crate::domain::diff;
use crate::domain::ids::VersionNumber;
use crate::domain::merge::Choice;
use crate::domain::read::{Snapshot, Suggestion, SuggestionState};
use crate::domain::slug::Slug;
use crate::domain::DomainError;
use crate::store::{EntityMap, EntityRef, Transaction, TxReport};

/// Longest message or reply a suggestion takes.
pub const MAX_MESSAGE: usize = 4_000;

/// What history says of a parent's version that took a suggestion.
pub fn accepted_line(suggestion: &Suggestion, fork_title: &str, what: &str) -> String {
    format!(
        "took suggestion {} by {} from {fork_title} (its version {}): {what}",
        suggestion.number,
        suggestion.by.as_deref().unwrap_or("a cook"),
        suggestion.from_version
    )
}

fn checked_text(text: &str, what: &str) -> Result<String, DomainError> {
    let text = text.trim();
    if text.len() > MAX_MESSAGE {
        return Err(DomainError::Invalid(format!(
            "{what} is longer than {MAX_MESSAGE} bytes"
        )));
    }
    Ok(text.to_owned())
}

/// Suggestion `number` to `parent`, open.
fn open_suggestion(
    view: &Snapshot,
    parent: &Slug,
    number: u32,
) -> Result<(crate::domain::Recipe, Suggestion), DomainError> {
    let recipe = view.current(parent)?;
    let suggestion =
        view.suggestion(recipe.id, number)?
            .ok_or_else(|| DomainError::NoSuchSuggestion {
                slug: parent.to_string(),
                number,
            })?;
    if suggestion.state != SuggestionState::Open {
        return Err(DomainError::SuggestionClosed {
            number,
            state: suggestion.state.as_str(),
        });
    }
    Ok((recipe, suggestion))
}

impl Recipes {
    /// Suggests the changes of the fork at `fork` (at its version
    /// `based_on`, as its cook saw it) since it last agreed with its
    /// parent, to the parent's author, with `message`. Returns the
    /// suggestion's number. Refused if the fork has no changes to suggest,
    /// or already has an open suggestion (which follows its newest version).
    pub fn suggest(
        &self,
        fork: &Slug,
        based_on: VersionNumber,
        message: &str,
        change: &Change,
    ) -> Result<(u32, TxReport), DomainError> {
        let message = checked_text(message, "the message")?;
        if message.is_empty() {
            return Err(DomainError::Invalid(
                "a suggestion needs a message saying what it changes and why".into(),
            ));
        }
        let mut stamped = Transaction::new();
        stamp(&mut stamped, change)?;
        let (report, number) = self.store.transact_with(|db| -> Result<_, DomainError> {
            let view = self.view_of(db);
            let recipe = view.current(fork)?;
            check_author(fork, &recipe, change)?;
            check_based_on(fork, &recipe, based_on)?;
            let (parent, base) = recipe
                .in_step_with()
                .ok_or_else(|| DomainError::NoParent(fork.to_string()))?;
            if let Some(open) = view
                .suggestions_from(recipe.id)?
                .into_iter()
                .find(|s| s.state == SuggestionState::Open)
            {
                return Err(DomainError::AlreadySuggested {
                    slug: fork.to_string(),
                    number: open.number,
                });
            }
            let versions = view.versions(parent)?;
            let parent_recipe = view.recipe_by_id(parent)?;
            let at = Snapshot::nth_version(&parent_recipe.slug, &versions, base)?;
            if diff::recipes(&view.content_at(parent, at.basis)?, &recipe.content).is_empty() {
                return Err(DomainError::NothingChanged);
            }
            // Numbered by how many were made before: one read of their
            // ids, none of the suggestions themselves.
            let made = view
                .db()
                .referrers(self.attrs.suggestion_to, parent.entity())?
                .len();
            let number = u32::try_from(made + 1).unwrap_or(u32::MAX);
            let mut suggestion = EntityMap::new(EntityRef::temp("suggestion"));
            if let Some(author) = view
                .db()
                .value(parent.entity(), self.attrs.author)?
                .and_then(|v| v.as_ref())
            {
                suggestion = suggestion.with(":suggestion/to-author", EntityRef::Id(author));
            }
            let mut tx = Transaction::new();
            tx.map(
                suggestion
                    .with(":suggestion/from", EntityRef::Id(recipe.id.entity()))
                    .with(":suggestion/from-version", i64::from(based_on.get()))
                    .with(":suggestion/to", EntityRef::Id(parent.entity()))
                    .with(":suggestion/open-to", EntityRef::Id(parent.entity()))
                    .with(":suggestion/base-version", i64::from(base.get()))
                    .with(":suggestion/number", i64::from(number))
                    .with(":suggestion/by", EntityRef::temp("author"))
                    .with(":suggestion/message", message.as_str())
                    .with(":suggestion/state", SuggestionState::Open.as_str()),
            );
            tx.extend(stamped.clone());
            Ok((tx, number))
        })?;
        Ok((number, report))
    }

    /// Accepts suggestion `number` to `parent`: a new version of the parent,
    /// the suggestion's changes merged onto its newest, crediting the
    /// suggester. `based_on` is the parent's version the review showed: if
    /// the parent has moved on, the merge is made onto the newest all the
    /// same, unless it then has conflicts, which the author must see
    /// (`MergeMoved`). `choices` settle the conflicts, `take` side `Theirs`
    /// being the suggestion's.
    pub fn accept_suggestion(
        &self,
        parent: &Slug,
        number: u32,
        based_on: VersionNumber,
        choices: &[Choice],
        reply: &str,
        change: &Change,
    ) -> Result<TxReport, DomainError> {
        let reply = checked_text(reply, "the reply")?;
        let mut stamped = Transaction::new();
        stamp(&mut stamped, change)?;
        let (report, ()) = self.store.transact_with(|db| -> Result<_, DomainError> {
            let view = self.view_of(db);
            let (recipe, suggestion) = open_suggestion(&view, parent, number)?;
            check_author(parent, &recipe, change)?;
            let made = view.suggestion_merge(&recipe, &suggestion)?;
            let merge = made.merge;
            if recipe.newest() != based_on && !merge.is_clean() {
                return Err(DomainError::MergeMoved {
                    slug: parent.to_string(),
                    newest: recipe.newest(),
                });
            }
            let merged = merge
                .resolved(choices)
                .ok_or(DomainError::Unresolved {
                    conflicts: merge.conflicts().len(),
                })?
                .normalized()?;
            self.check_picture(&merged)?;
            let fork_title = view.recipe_by_id(suggestion.from)?.content.title;
            let what = diff::recipes(&recipe.content, &merged);
            let what = if what.is_empty() {
                "no change it did not have".to_owned()
            } else {
                what.summary()
            };
            let line = accepted_line(&suggestion, &fork_title, &what);
            let mut tx = self.version_transaction(&view, &recipe, &merged, change, line, None)?;
            let accepted_in = recipe.newest().next().map_or(0, |n| i64::from(n.get()));
            tx.add(
                suggestion.id,
                ":suggestion/state",
                SuggestionState::Accepted.as_str(),
            )
            .add(suggestion.id, ":suggestion/accepted-in", accepted_in);
            // The new version names the fork's version it took, as a
            // merge names the parent's: history lists every one.
            let e = recipe.id.entity();
            tx.add(e, ":recipe/took", EntityRef::Id(made.suggested_at.tx()))
                .add(e, ":recipe/took-suggestion", EntityRef::Id(suggestion.id));
            closed(&mut tx, &suggestion);
            if !reply.is_empty() {
                tx.add(suggestion.id, ":suggestion/reply", reply.as_str());
            }
            tx.extend(stamped.clone());
            Ok((tx, ()))
        })?;
        Ok(report)
    }

    /// Declines suggestion `number` to `parent`, with `reply`; only the
    /// parent's author may.
    pub fn decline_suggestion(
        &self,
        parent: &Slug,
        number: u32,
        reply: &str,
        change: &Change,
    ) -> Result<TxReport, DomainError> {
        self.close_suggestion(parent, number, reply, change, SuggestionState::Declined)
    }

    /// Withdraws suggestion `number` to `parent`; only its suggester may.
    pub fn withdraw_suggestion(
        &self,
        parent: &Slug,
        number: u32,
        change: &Change,
    ) -> Result<TxReport, DomainError> {
        self.close_suggestion(parent, number, "", change, SuggestionState::Withdrawn)
    }

    fn close_suggestion(
        &self,
        parent: &Slug,
        number: u32,
        reply: &str,
        change: &Change,
        state: SuggestionState,
    ) -> Result<TxReport, DomainError> {
        let reply = checked_text(reply, "the reply")?;
        let mut stamped = Transaction::new();
        stamp(&mut stamped, change)?;
        let (report, ()) = self.store.transact_with(|db| -> Result<_, DomainError> {
            let view = self.view_of(db);
            let (recipe, suggestion) = open_suggestion(&view, parent, number)?;
            match state {
                SuggestionState::Withdrawn => {
                    if suggestion.by.as_deref() != Some(change.author.as_str()) {
                        return Err(DomainError::NotSuggester { number });
                    }
                }
                _ => check_author(parent, &recipe, change)?,
            }
            let mut tx = Transaction::new();
            tx.add(suggestion.id, ":suggestion/state", state.as_str());
            closed(&mut tx, &suggestion);
            if !reply.is_empty() {
                tx.add(suggestion.id, ":suggestion/reply", reply.as_str());
            }
            tx.extend(stamped.clone());
            Ok((tx, ()))
        })?;
        Ok(report)
    }
}

/// The datom that takes a suggestion that is closing (accepted, declined
/// or withdrawn) out of its recipe's open ones.
pub(super) fn closed(tx: &mut Transaction, suggestion: &Suggestion) {
    tx.retract_all(suggestion.id, ":suggestion/open-to");
}

/// The datoms that keep a fork's open suggestion on its newest version:
/// added to every new version of the fork (`version`, its number), and,
/// for a version that brought in the parent's version `base`, on that
/// base too, so that the suggestion proposes only the fork's own changes.
pub(super) fn follow_fork(
    view: &Snapshot,
    fork: &crate::domain::Recipe,
    version: i64,
    base: Option<VersionNumber>,
    tx: &mut Transaction,
) -> Result<(), DomainError> {
    for open in view
        .suggestions_from(fork.id)?
        .into_iter()
        .filter(|s| s.state == SuggestionState::Open)
    {
        tx.add(open.id, ":suggestion/from-version", version);
        if let Some(base) = base {
            tx.add(open.id, ":suggestion/base-version", i64::from(base.get()));
        }
    }
    Ok(())
}
