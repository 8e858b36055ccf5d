//! Suggestions: a fork proposes its changes to its parent's author, who
//! accepts (a new version of the parent, merged onto its latest) or
//! declines; the suggester may withdraw. Every state change is decided in
//! the writer, on the latest value.

use super::{check_author, check_based_on, stamp, Attempt, Change, Recipes};
use crate::domain::diff;
use crate::domain::ids::{Basis, VersionNumber};
use crate::domain::merge::{self, Choice, Merge};
use crate::domain::read::{Agreed, Recipe, Snapshot, Suggestion, SuggestionState};
use crate::domain::slug::Slug;
use crate::domain::Attrs;
use crate::domain::DomainError;
use crate::store::{Components, Db, EntityMap, EntityRef, Index, Transaction, TxReport, Value};

/// What a suggestion's review showed: the parent at `parent_version`,
/// the fork at `fork_version`, and the suggestion's merge base, the
/// parent's version `fork_base` (which an agreement moves without a new
/// version of the fork). An accept or decline acts only on that: if
/// any of it moved on, nothing is saved and the author looks again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Review {
    pub parent_version: VersionNumber,
    pub fork_version: VersionNumber,
    /// `None` for a caller with no page (the seed, tests): the base is
    /// then not checked.
    pub fork_base: Option<VersionNumber>,
}

impl Review {
    /// A review of the parent at `parent_version` and the fork at
    /// `fork_version`, whatever its base.
    pub fn of(parent_version: VersionNumber, fork_version: VersionNumber) -> Self {
        Self {
            parent_version,
            fork_version,
            fork_base: None,
        }
    }

    /// The same review, that showed the merge from the parent's version
    /// `base`.
    pub fn from_base(self, base: VersionNumber) -> Self {
        Self {
            fork_base: Some(base),
            ..self
        }
    }
}

/// Longest message or reply a suggestion takes.
pub const MAX_MESSAGE: usize = 4_000;

/// What history says of a parent's version that took a suggestion: what
/// it changed, and how each conflict was settled (`settled`).
pub(super) fn accepted_line(
    suggestion: &Suggestion,
    fork_title: &str,
    what: &str,
    settled: Option<&str>,
) -> String {
    let line = format!(
        "took suggestion {} by {} from {fork_title} (its version {}): {what}",
        suggestion.number,
        suggestion.by.as_deref().unwrap_or("a cook"),
        suggestion.from_version
    );
    match settled {
        Some(settled) => format!("{line}; {settled}"),
        None => line,
    }
}

pub(super) fn checked_text(text: &str, what: &str) -> Result<String, DomainError> {
    let text = text.trim();
    if text.len() > MAX_MESSAGE {
        return Err(DomainError::Invalid(format!(
            "{what} is longer than {MAX_MESSAGE} bytes"
        )));
    }
    Ok(text.to_owned())
}

/// Why a fork cannot send again the changes of suggestion `answered`,
/// which its parent's author answered.
pub(crate) fn answered_error(answered: &Suggestion) -> DomainError {
    match answered.state {
        SuggestionState::Declined => DomainError::DeclinedAlready {
            number: answered.number,
        },
        _ => DomainError::TakenInPart {
            number: answered.number,
        },
    }
}

/// Conflicts not settled the suggestion's way: what its fork's page and
/// the lists call taken in part. Text written by hand that is the
/// suggestion's lines is its way.
fn kept_own(merge: &Merge, choices: &[Choice]) -> usize {
    merge
        .conflicts()
        .iter()
        .zip(choices)
        .filter(|(conflict, choice)| match choice {
            Choice::Theirs => false,
            Choice::Edited(text) => {
                let lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
                !lines.eq(conflict.theirs.iter().map(String::as_str))
            }
            _ => true,
        })
        .count()
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

/// Whether the fork at `fork` (`recipe`) may suggest its changes to the
/// `parent` it `agreed` with: not to a retired parent, not while a
/// suggestion of its is open, not changes the parent's author answered
/// already, and not without a change the parent lacks.
fn suggestable(
    view: &Snapshot,
    fork: &Slug,
    recipe: &Recipe,
    parent: &Recipe,
    agreed: &Agreed,
) -> Result<(), DomainError> {
    if parent.retired {
        return Err(DomainError::Retired {
            slug: parent.slug.to_string(),
            title: parent.content.title().to_owned(),
        });
    }
    let made = view.suggestions_from(recipe.id)?;
    if let Some(open) = made.iter().find(|s| s.state == SuggestionState::Open) {
        return Err(DomainError::AlreadySuggested {
            slug: fork.to_string(),
            number: open.number,
        });
    }
    let base = view.base_content(parent, recipe, agreed.base)?;
    if let Some(answered) = view.answered_already(recipe, Some(&made), (parent, &base))? {
        return Err(answered_error(&answered));
    }
    let sent = merge::as_suggested(&base, &recipe.content);
    if !merge::brings_anything(&base, &parent.content, &sent) {
        return Err(DomainError::NothingChanged);
    }
    Ok(())
}

impl Recipes {
    /// Suggests the changes of the fork at `fork` (at its version
    /// `based_on`, as its cook saw it) since it last agreed with its
    /// parent, to the parent's author, with `message`. Returns the
    /// suggestion's number. Refused if the fork has no changes its parent
    /// lacks (`NothingChanged`), already has an open suggestion (which
    /// follows its newest version), had these very changes declined or
    /// taken in part (`DeclinedAlready`, `TakenInPart`), or if the parent
    /// was retired.
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
        stamp(&mut stamped, change, &self.attrs)?;
        let (report, number) = self.store.transact_with(|db| -> Result<_, DomainError> {
            let view = self.view_of(db);
            let recipe = view.current(fork)?;
            check_author(fork, &recipe, change)?;
            let agreed = view
                .agreed(&recipe)?
                .ok_or_else(|| DomainError::NoParent(fork.to_string()))?;
            let parent = view.recipe_by_id(agreed.parent)?;
            // This very form, sent again (its first answer lost): answered
            // as its first send was, with the suggestion it made.
            if let Some(attempt) = &change.attempt {
                self.suggested_before(db, &view, &recipe, &parent, attempt)?;
            }
            check_based_on(fork, &recipe, based_on)?;
            suggestable(&view, fork, &recipe, &parent, &agreed)?;
            let (mut tx, number) =
                self.suggestion_tx(&view, &recipe, &agreed, based_on, &message)?;
            tx.extend(stamped.clone());
            Ok((tx, number))
        })?;
        Ok((number, report))
    }

    /// Refuses `attempt` if a transaction recorded it, naming the
    /// suggestion that transaction made: its number was written in it (not
    /// the fork's newest, which may be later).
    fn suggested_before(
        &self,
        db: &Db,
        view: &Snapshot,
        recipe: &Recipe,
        parent: &Recipe,
        attempt: &Attempt,
    ) -> Result<(), DomainError> {
        let recorded = db.entity_with(self.attrs.tx_attempt, &Value::from(attempt.as_str()))?;
        let Some(tx) = recorded else {
            return Ok(());
        };
        for made in view.suggestions_from(recipe.id)? {
            let numbered = Components::any().e(made.id).a(self.attrs.suggestion_number);
            let made_in = db.datoms(Index::Eavt, &numbered).next().transpose()?;
            if made_in.is_some_and(|datom| datom.tx == tx) {
                return Err(DomainError::SuggestedBefore {
                    parent: parent.slug.to_string(),
                    number: made.number,
                });
            }
        }
        Ok(())
    }

    /// The new suggestion of the fork `recipe`'s version `based_on` to
    /// the parent it `agreed` with, with `message`, and its number.
    fn suggestion_tx(
        &self,
        view: &Snapshot,
        recipe: &Recipe,
        agreed: &Agreed,
        based_on: VersionNumber,
        message: &str,
    ) -> Result<(Transaction, u32), DomainError> {
        let attrs = &self.attrs;
        let parent = agreed.parent;
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
            suggestion = suggestion.with(attrs.suggestion_to_author, EntityRef::Id(author));
        }
        if let Some(v) = agreed.base.fork_version {
            suggestion = suggestion.with(attrs.suggestion_base_fork_version, i64::from(v.get()));
        }
        let mut tx = Transaction::new();
        tx.map(
            suggestion
                .with(attrs.suggestion_from, EntityRef::Id(recipe.id.entity()))
                .with(attrs.suggestion_from_version, i64::from(based_on.get()))
                .with(attrs.suggestion_to, EntityRef::Id(parent.entity()))
                .with(attrs.suggestion_open_to, EntityRef::Id(parent.entity()))
                .with(
                    attrs.suggestion_base_version,
                    i64::from(agreed.base.parent_version.get()),
                )
                .with(attrs.suggestion_number, i64::from(number))
                .with(attrs.suggestion_by, EntityRef::temp("author"))
                .with(attrs.suggestion_message, message)
                .with(attrs.suggestion_state, SuggestionState::Open.as_str()),
        );
        Ok((tx, number))
    }

    /// Accepts suggestion `number` to `parent`: a new version of the parent,
    /// the suggestion's changes merged onto its newest, crediting the
    /// suggester. If either recipe moved on since the `review` was shown
    /// (`MergeMoved`), or the suggestion's base did (`AgreedMeanwhile`),
    /// nothing is saved and the author reviews it again. `choices`
    /// settle the conflicts, side `Theirs` being the suggestion's; an
    /// accept that would change nothing is refused as an edit without
    /// changes is.
    pub fn accept_suggestion(
        &self,
        parent: &Slug,
        number: u32,
        review: Review,
        choices: &[Choice],
        reply: &str,
        change: &Change,
    ) -> Result<TxReport, DomainError> {
        let attrs = &self.attrs;
        let reply = checked_text(reply, "the reply")?;
        let mut stamped = Transaction::new();
        stamp(&mut stamped, change, &self.attrs)?;
        let (report, ()) = self.store.transact_with(|db| -> Result<_, DomainError> {
            let view = self.view_of(db);
            let (recipe, suggestion) = open_suggestion(&view, parent, number)?;
            check_author(parent, &recipe, change)?;
            let made = view.suggestion_merge(&recipe, &suggestion)?;
            shown_unchanged(&recipe, &made.fork, &suggestion, review)?;
            let merge = made.merge;
            let merged = merge.resolved(choices)?;
            if merged == recipe.content {
                return Err(DomainError::NothingChanged);
            }
            self.check_picture(&merged)?;
            let fork_title = made.fork.content.title().to_owned();
            let what = diff::summary(&recipe.content, &merged);
            let settled = merge.settled(choices, &fork_title);
            let line = accepted_line(&suggestion, &fork_title, &what, settled.as_deref());
            let mut tx = self.version_transaction(&view, &recipe, &merged, change, line, None)?;
            let accepted_in = recipe.newest().next().map_or(0, |n| i64::from(n.get()));
            tx.add(
                suggestion.id,
                attrs.suggestion_state,
                SuggestionState::Accepted.as_str(),
            )
            .add(suggestion.id, attrs.suggestion_accepted_in, accepted_in);
            // The new version is the fork's recipe as suggested (the
            // recipe had nothing of its own since the suggestion's base,
            // or each of its changes met one of the fork's, settled the
            // fork's way): the fork is in step with it (`read::merging`).
            // Title and picture are never sent, so never compared.
            let whole = recipe.content == made.base
                || merge::as_suggested(&merged, &made.suggested) == merged;
            if whole {
                tx.add(suggestion.id, attrs.suggestion_whole, true);
            }
            let kept = match whole {
                true => 0,
                false => kept_own(&merge, choices),
            };
            tx.add(suggestion.id, attrs.suggestion_kept_own, kept as i64);
            self.took(&view, &mut tx, &recipe, made.suggested_at, &suggestion)?;
            closed(&mut tx, &suggestion, attrs);
            if !reply.is_empty() {
                tx.add(suggestion.id, attrs.suggestion_reply, reply.as_str());
            }
            tx.extend(stamped.clone());
            Ok((tx, ()))
        })?;
        Ok(report)
    }

    /// The new version of `recipe` names the fork's version it took (the
    /// one `suggested_at`), as a merge names the parent's: history lists
    /// every one; and the suggester is among its contributors.
    fn took(
        &self,
        view: &Snapshot,
        tx: &mut Transaction,
        recipe: &Recipe,
        suggested_at: Basis,
        suggestion: &Suggestion,
    ) -> Result<(), DomainError> {
        let attrs = &self.attrs;
        let e = recipe.id.entity();
        tx.add(e, attrs.took, EntityRef::Id(suggested_at.tx())).add(
            e,
            attrs.took_suggestion,
            EntityRef::Id(suggestion.id),
        );
        if let Some(by) = view
            .db()
            .value(suggestion.id, self.attrs.suggestion_by)?
            .and_then(|v| v.as_ref())
        {
            tx.add(e, attrs.contributor, EntityRef::Id(by));
        }
        Ok(())
    }

    /// Declines suggestion `number` to `parent`, with `reply`; only the
    /// parent's author may, and only the suggestion their `review`
    /// showed (as `accept_suggestion` checks it).
    pub fn decline_suggestion(
        &self,
        parent: &Slug,
        number: u32,
        review: Review,
        reply: &str,
        change: &Change,
    ) -> Result<TxReport, DomainError> {
        self.close_suggestion(
            parent,
            number,
            Some(review),
            reply,
            change,
            SuggestionState::Declined,
        )
    }

    /// Withdraws suggestion `number` to `parent`; only its suggester may.
    pub fn withdraw_suggestion(
        &self,
        parent: &Slug,
        number: u32,
        change: &Change,
    ) -> Result<TxReport, DomainError> {
        self.close_suggestion(parent, number, None, "", change, SuggestionState::Withdrawn)
    }

    fn close_suggestion(
        &self,
        parent: &Slug,
        number: u32,
        shown: Option<Review>,
        reply: &str,
        change: &Change,
        state: SuggestionState,
    ) -> Result<TxReport, DomainError> {
        let attrs = &self.attrs;
        let reply = checked_text(reply, "the reply")?;
        let mut stamped = Transaction::new();
        stamp(&mut stamped, change, &self.attrs)?;
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
            if let Some(review) = shown {
                let fork = view.recipe_by_id(suggestion.from)?;
                shown_unchanged(&recipe, &fork, &suggestion, review)?;
            }
            let mut tx = Transaction::new();
            tx.add(suggestion.id, attrs.suggestion_state, state.as_str());
            closed(&mut tx, &suggestion, attrs);
            if !reply.is_empty() {
                tx.add(suggestion.id, attrs.suggestion_reply, reply.as_str());
            }
            tx.extend(stamped.clone());
            Ok((tx, ()))
        })?;
        Ok(report)
    }
}

/// Refuses a review's answer when anything it showed moved on since: the
/// parent, the suggestion (which follows its fork), or the suggestion's
/// base (which follows the fork's agreements with its parent).
fn shown_unchanged(
    recipe: &crate::domain::Recipe,
    fork: &crate::domain::Recipe,
    suggestion: &Suggestion,
    review: Review,
) -> Result<(), DomainError> {
    if recipe.newest() != review.parent_version {
        return Err(DomainError::MergeMoved {
            slug: recipe.slug.to_string(),
            title: recipe.content.title().to_owned(),
            newest: recipe.newest(),
        });
    }
    if suggestion.from_version != review.fork_version {
        return Err(DomainError::MergeMoved {
            slug: fork.slug.to_string(),
            title: fork.content.title().to_owned(),
            newest: suggestion.from_version,
        });
    }
    if review
        .fork_base
        .is_some_and(|base| base != suggestion.base_version)
    {
        return Err(DomainError::AgreedMeanwhile {
            title: fork.content.title().to_owned(),
            version: suggestion.base_version,
        });
    }
    Ok(())
}

/// The datom that takes a suggestion that is closing (accepted, declined,
/// withdrawn or closed) out of its recipe's open ones.
pub(super) fn closed(tx: &mut Transaction, suggestion: &Suggestion, attrs: &Attrs) {
    tx.retract_all(suggestion.id, attrs.suggestion_open_to);
}

/// The datoms that leave no suggestion of a recipe being retired open: a
/// retired fork suggests nothing any more (its own are withdrawn), and a
/// retired recipe takes no suggestion (those to it are closed).
pub(super) fn close_all_of(
    view: &Snapshot,
    recipe: crate::domain::RecipeId,
    tx: &mut Transaction,
) -> Result<(), DomainError> {
    let attrs = &view.attrs;
    let made = view.suggestions_from(recipe)?.into_iter();
    let sent = view.suggestions_to(recipe)?.into_iter();
    for (open, state) in made
        .map(|s| (s, SuggestionState::Withdrawn))
        .chain(sent.map(|s| (s, SuggestionState::Closed)))
        .filter(|(s, _)| s.state == SuggestionState::Open)
    {
        tx.add(open.id, attrs.suggestion_state, state.as_str());
        closed(tx, &open, attrs);
    }
    Ok(())
}

/// The datoms that move a fork's open suggestion's base to its parent's
/// version `base`, with no fork version beside it: for an agreement, which
/// brings the parent's in without a version of the fork.
pub(super) fn follow_base(
    view: &Snapshot,
    fork: &crate::domain::Recipe,
    base: VersionNumber,
    tx: &mut Transaction,
) -> Result<(), DomainError> {
    let attrs = &view.attrs;
    for open in open_from(view, fork)? {
        tx.add(
            open.id,
            attrs.suggestion_base_version,
            i64::from(base.get()),
        );
        if let Some(v) = open.base_fork_version {
            tx.retract(
                open.id,
                attrs.suggestion_base_fork_version,
                i64::from(v.get()),
            );
        }
    }
    Ok(())
}

/// The datoms that keep a fork's open suggestion on its newest version:
/// added to every new version of the fork (`version`, its number), and,
/// for a version that brought in the parent's version `base`, on that
/// base too (with no fork version beside it), so that the suggestion
/// proposes only the fork's own changes.
pub(super) fn follow_fork(
    view: &Snapshot,
    fork: &crate::domain::Recipe,
    version: i64,
    base: Option<VersionNumber>,
    tx: &mut Transaction,
) -> Result<(), DomainError> {
    let attrs = &view.attrs;
    for open in open_from(view, fork)? {
        tx.add(open.id, attrs.suggestion_from_version, version);
    }
    if let Some(base) = base {
        follow_base(view, fork, base, tx)?;
    }
    Ok(())
}

/// The fork's open suggestion (at most one), as the datoms that follow it
/// want it: not one offered to a recipe kept from another site, which
/// stays at what was offered (`offers`).
fn open_from(
    view: &Snapshot,
    fork: &crate::domain::Recipe,
) -> Result<impl Iterator<Item = Suggestion>, DomainError> {
    let mut open = Vec::new();
    for s in view.suggestions_from(fork.id)? {
        if s.state == SuggestionState::Open && !view.is_kept_from_elsewhere(s.to)? {
            open.push(s);
        }
    }
    Ok(open.into_iter())
}
