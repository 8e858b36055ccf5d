//! Suggestions across sites (issue 54, item 4), as ForgeFed offers a
//! patch: a fork on another site offers its changes to a recipe here, and
//! a fork here offers its changes to a recipe kept from another site.
//!
//! Here, an offer is a suggestion like any other: its fork is kept as a
//! recipe from elsewhere (`keep_remote`), at the version offered, and the
//! recipe's author reviews it on the same pages, with the same merge. The
//! suggestion keeps the offer's id, so that its answer (`Accept` or
//! `Reject`, with the note) goes back from the log.
//!
//! There, a suggestion to a recipe kept from elsewhere is made as any is,
//! and offered from the log. It is fixed at the fork's version offered and
//! the base it was made on (it does not follow the fork as a suggestion
//! here does: the other site reviews what it was sent), and its answer,
//! from the recipe's author there, is recorded as a review here would.

use super::elsewhere::remote_version;
use super::suggestions::{checked_text, closed};
use super::{Recipes, RemoteParent, Transaction};
use crate::domain::ids::VersionNumber;
use crate::domain::read::SuggestionState;
use crate::domain::slug::Slug;
use crate::domain::DomainError;
use crate::store::{EntityId, EntityMap, EntityRef, Value};

/// A suggestion offered from another site to a recipe here.
#[derive(Debug, Clone)]
pub struct RemoteOffer {
    /// The fork offering, as fetched (its version offered).
    pub fork: RemoteParent,
    /// The recipe here it is offered to, and its version the fork last
    /// agreed with.
    pub to: Slug,
    pub base: VersionNumber,
    pub message: String,
    /// The offer's id, on its site.
    pub id: String,
    /// Who offered it: `@ben@b.example`.
    pub by: String,
}

/// The answer a site gave to an offer made from here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfferAnswer {
    /// `Some` for an accept: the address of the version of the recipe
    /// there that took it, whether it took it whole, and how many of the
    /// changes both made differently its author kept their own version of.
    pub accepted: Option<(String, bool, u32)>,
    pub reply: Option<String>,
}

impl Recipes {
    /// Takes `offer` as a suggestion to the recipe it names here: its fork
    /// kept first, at the version offered. Decided on the latest value: the
    /// recipe must be here and not retired, the base one of its versions,
    /// and the fork without another open suggestion. Offered again (its
    /// id), it is the same suggestion. Its number.
    pub fn receive_offer(&self, offer: &RemoteOffer) -> Result<u32, DomainError> {
        let attrs = &self.attrs;
        let message = checked_text(&offer.message, "the message")?;
        if message.is_empty() {
            return Err(DomainError::Invalid("an offer with no message".into()));
        }
        let (kept, version) = self.keep_remote(&offer.fork)?;
        let (_, number) = self.store.transact_with(|db| -> Result<_, DomainError> {
            let view = self.view_of(db);
            let mut tx = Transaction::new();
            if let Some(known) =
                db.entity_with(attrs.suggestion_offer, &Value::from(offer.id.as_str()))?
            {
                return Ok((tx, view.suggestion_by_id(known)?.number));
            }
            let parent = view.current(&offer.to)?;
            let fork = view.recipe(&kept)?;
            if parent.slug.is_elsewhere() || offer.base > parent.newest() {
                return Err(DomainError::Invalid(format!(
                    "{} offers changes to a version {} of {} does not have",
                    offer.fork.address, offer.base, offer.to
                )));
            }
            if let Some(open) = view
                .suggestions_from(fork.id)?
                .into_iter()
                .find(|s| s.state == SuggestionState::Open)
            {
                return Err(DomainError::AlreadySuggested {
                    slug: offer.fork.address.clone(),
                    number: open.number,
                });
            }
            let made = view
                .db()
                .referrers(attrs.suggestion_to, parent.id.entity())?
                .len();
            let number = u32::try_from(made + 1).unwrap_or(u32::MAX);
            let mut suggestion = EntityMap::new(EntityRef::temp("suggestion"));
            if let Some(author) = view
                .db()
                .value(parent.id.entity(), attrs.author)?
                .and_then(|v| v.as_ref())
            {
                suggestion = suggestion.with(attrs.suggestion_to_author, EntityRef::Id(author));
            }
            tx.map(
                suggestion
                    .with(attrs.suggestion_from, EntityRef::Id(fork.id.entity()))
                    .with(attrs.suggestion_from_version, i64::from(version.get()))
                    .with(attrs.suggestion_to, EntityRef::Id(parent.id.entity()))
                    .with(attrs.suggestion_open_to, EntityRef::Id(parent.id.entity()))
                    .with(attrs.suggestion_base_version, i64::from(offer.base.get()))
                    .with(attrs.suggestion_number, i64::from(number))
                    .with(attrs.suggestion_remote_by, offer.by.as_str())
                    .with(attrs.suggestion_message, message.as_str())
                    .with(attrs.suggestion_state, SuggestionState::Open.as_str())
                    .with(attrs.suggestion_offer, offer.id.as_str()),
            );
            tx.tx_attr(
                attrs.tx_note,
                format!("Offered from {}", offer.fork.address),
            );
            Ok((tx, number))
        })?;
        Ok(number)
    }

    /// Records `answer` to the suggestion `suggestion` made here to a
    /// recipe kept from another site, told by `actor`: only that recipe's
    /// author there answers, and only an open suggestion. Whether it was
    /// recorded.
    pub fn record_offer_answer(
        &self,
        suggestion: EntityId,
        actor: &str,
        answer: &OfferAnswer,
    ) -> Result<bool, DomainError> {
        let attrs = &self.attrs;
        let reply = checked_text(answer.reply.as_deref().unwrap_or(""), "the reply")?;
        let (_, recorded) = self.store.transact_with(|db| -> Result<_, DomainError> {
            let view = self.view_of(db);
            let mut tx = Transaction::new();
            let Ok(s) = view.suggestion_by_id(suggestion) else {
                return Ok((tx, false));
            };
            let kept_by = view.string(s.to.entity(), attrs.remote_author)?;
            if s.state != SuggestionState::Open || kept_by.as_deref() != Some(actor) {
                return Ok((tx, false));
            }
            let state = match &answer.accepted {
                Some((result, whole, kept_own)) => {
                    // A version of the recipe it was offered to.
                    let Some(version) = remote_version(view.slug_of(s.to)?.as_str(), result)
                        .and_then(VersionNumber::new)
                    else {
                        return Ok((tx, false));
                    };
                    tx.add(s.id, attrs.suggestion_accepted_in, i64::from(version.get()))
                        .add(s.id, attrs.suggestion_kept_own, i64::from(*kept_own));
                    if *whole {
                        tx.add(s.id, attrs.suggestion_whole, true);
                    }
                    SuggestionState::Accepted
                }
                None => SuggestionState::Declined,
            };
            tx.add(s.id, attrs.suggestion_state, state.as_str());
            if !reply.is_empty() {
                tx.add(s.id, attrs.suggestion_reply, reply.as_str());
            }
            closed(&mut tx, &s, attrs);
            tx.tx_attr(attrs.tx_note, format!("Answered from {actor}"));
            Ok((tx, true))
        })?;
        Ok(recorded)
    }
}
