//! Suggestions across sites as the log tells them (`write::offers`): a
//! suggestion made here to a recipe kept from elsewhere is offered to its
//! author there, and a suggestion offered from elsewhere is answered when
//! it is accepted, declined or closed here. Read from the transactions
//! after a basis, as every delivery is, so that one acknowledged just
//! before a crash still goes.

use super::super::ids::{Basis, RecipeId, VersionNumber};
use super::super::read::{Recipe, Snapshot, Suggestion, SuggestionState};
use super::super::DomainError;

/// A suggestion made here to a recipe kept from another site, to offer.
#[derive(Debug, Clone)]
pub struct OfferMade {
    pub suggestion: Suggestion,
    /// The fork as it was at the version offered.
    pub fork: Recipe,
    /// The recipe's address there, and its author's inbox.
    pub to: String,
    pub inbox: String,
    /// The fork's parent's version it is in step with, as its based_on.
    pub base: VersionNumber,
}

/// A suggestion offered from another site, answered here.
#[derive(Debug, Clone)]
pub struct OfferAnswered {
    pub suggestion: Suggestion,
    /// The offer's id, on its site, and where to send the answer.
    pub offer: String,
    pub inbox: String,
    /// The recipe here it was offered to, and its author's handle.
    pub to: Recipe,
}

/// A suggestion made here to a recipe kept from another site, withdrawn
/// by its cook: its offer is undone there.
#[derive(Debug, Clone)]
pub struct OfferWithdrawn {
    pub suggestion: Suggestion,
    pub inbox: String,
}

/// What transactions after `since` (through the snapshot's basis) did to
/// suggestions across sites.
#[derive(Debug, Clone, Default)]
pub struct OffersSince {
    pub made: Vec<OfferMade>,
    pub answered: Vec<OfferAnswered>,
    pub withdrawn: Vec<OfferWithdrawn>,
}

/// The suggestions made, the offers answered, and the offers withdrawn, by
/// transactions after `since` (through the snapshot's basis).
pub fn offers_since(snapshot: &Snapshot, since: u64) -> Result<OffersSince, DomainError> {
    let a = &snapshot.attrs;
    let mut out = OffersSince::default();
    let (mut new, mut closed) = (Vec::new(), Vec::new());
    for datom in snapshot.db().log(since + 1, snapshot.basis().get()) {
        let datom = datom?;
        if !datom.added {
            continue;
        }
        if datom.a == a.suggestion_number {
            new.push(datom.e);
        } else if datom.a == a.suggestion_state && datom.v.as_str() != Some("open") {
            closed.push(datom.e);
        }
    }
    for id in new {
        let suggestion = snapshot.suggestion_by_id(id)?;
        if let Some(offer) = offer_made(snapshot, suggestion)? {
            out.made.push(offer);
        }
    }
    closed.sort_unstable();
    closed.dedup();
    for id in closed {
        let suggestion = snapshot.suggestion_by_id(id)?;
        match snapshot.string(id, a.suggestion_offer)? {
            // Offered from elsewhere and withdrawn there: nothing to answer.
            Some(_) if suggestion.state == SuggestionState::Withdrawn => {}
            // Offered from elsewhere, and answered here.
            Some(offer) => {
                let fork = suggestion.from.entity();
                let Some(inbox) = snapshot.string(fork, a.remote_inbox)? else {
                    continue;
                };
                out.answered.push(OfferAnswered {
                    to: snapshot.recipe_by_id(suggestion.to)?,
                    suggestion,
                    offer,
                    inbox,
                });
            }
            // Made here to a recipe elsewhere, and withdrawn here.
            None if suggestion.state == SuggestionState::Withdrawn => {
                let to = suggestion.to.entity();
                if let Some(inbox) = snapshot.string(to, a.remote_inbox)? {
                    out.withdrawn.push(OfferWithdrawn { suggestion, inbox });
                }
            }
            None => {}
        }
    }
    Ok(out)
}

/// `suggestion`, made here, as an offer: if it was made to a recipe kept
/// from elsewhere whose author's inbox is known.
fn offer_made(
    snapshot: &Snapshot,
    suggestion: Suggestion,
) -> Result<Option<OfferMade>, DomainError> {
    let a = &snapshot.attrs;
    if suggestion.state != SuggestionState::Open
        || snapshot
            .string(suggestion.id, a.suggestion_offer)?
            .is_some()
        || !snapshot.is_kept_from_elsewhere(suggestion.to)?
    {
        return Ok(None);
    }
    let Some(inbox) = snapshot.string(suggestion.to.entity(), a.remote_inbox)? else {
        return Ok(None);
    };
    let to = snapshot.slug_of(suggestion.to)?;
    let fork = fork_at(snapshot, suggestion.from, suggestion.from_version)?;
    Ok(Some(OfferMade {
        base: suggestion.base_version,
        suggestion,
        fork,
        to,
        inbox,
    }))
}

/// Recipe `id` as its version `version` left it.
fn fork_at(
    snapshot: &Snapshot,
    id: RecipeId,
    version: VersionNumber,
) -> Result<Recipe, DomainError> {
    let versions = snapshot.versions(id)?;
    let at: Basis = versions
        .get(version.index())
        .map(|v| v.basis)
        .ok_or_else(|| DomainError::NoSuchRecipe(format!("#{id} version {version}")))?;
    snapshot.as_of(at).recipe_by_id(id)
}
