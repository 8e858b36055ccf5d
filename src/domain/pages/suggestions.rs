//! The pages of suggestions: a fork's form to suggest its changes, a
//! recipe's list of the suggestions made to it, and one suggestion's
//! review (a three-way comparison).

use super::{link, Link};
use crate::domain::diff::{self, RecipeDiff};
use crate::domain::merge::{Choice, Merge};
use crate::domain::read::{Recipe, Snapshot, Suggestion, SuggestionState};
use crate::domain::slug::Slug;
use crate::domain::{DomainError, VersionNumber};

/// The suggest form of a fork.
pub struct SuggestShow {
    pub fork: Recipe,
    pub parent: Recipe,
    /// The parent's version the fork last agreed with.
    pub base: VersionNumber,
    /// What the fork changed since.
    pub change: RecipeDiff,
    /// The fork's open suggestion, if it has one (its number).
    pub open: Option<u32>,
}

/// The suggest form of the fork at `slug`.
pub fn suggest_show(snapshot: &Snapshot, slug: &Slug) -> Result<SuggestShow, DomainError> {
    let fork = snapshot.current(slug)?;
    let (parent_id, base) = fork
        .in_step_with()
        .ok_or_else(|| DomainError::NoParent(slug.to_string()))?;
    let parent = snapshot.recipe_by_id(parent_id)?;
    let versions = snapshot.versions(parent_id)?;
    let at = Snapshot::nth_version(&parent.slug, &versions, base)?;
    let change = diff::recipes(&snapshot.content_at(parent_id, at.basis)?, &fork.content);
    let open = snapshot
        .suggestions_from(fork.id)?
        .into_iter()
        .find(|s| s.state == SuggestionState::Open)
        .map(|s| s.number);
    Ok(SuggestShow {
        fork,
        parent,
        base,
        change,
        open,
    })
}

/// A recipe's suggestions, with the fork each came from.
pub struct SuggestionsShow {
    pub recipe: Recipe,
    pub suggestions: Vec<(Suggestion, Link)>,
}

pub fn suggestions_show(snapshot: &Snapshot, slug: &Slug) -> Result<SuggestionsShow, DomainError> {
    let recipe = snapshot.recipe(slug)?;
    let suggestions = snapshot
        .suggestions_to(recipe.id)?
        .into_iter()
        .map(|s| {
            let fork = link(snapshot, s.from)?;
            Ok((s, fork))
        })
        .collect::<Result<_, DomainError>>()?;
    Ok(SuggestionsShow {
        recipe,
        suggestions,
    })
}

/// One suggestion, for review: what the fork changed, and what accepting
/// it would make of the recipe now.
pub struct SuggestionShow {
    pub recipe: Recipe,
    pub suggestion: Suggestion,
    pub fork: Link,
    /// The fork's changes: the parent's version it agreed with against the
    /// fork's version suggested.
    pub proposed: RecipeDiff,
    /// The merge onto the recipe's newest version.
    pub merge: Merge,
    /// The recipe now against the merge, with the suggestion's side of
    /// every conflict.
    pub outcome: RecipeDiff,
}

pub fn suggestion_show(
    snapshot: &Snapshot,
    slug: &Slug,
    number: u32,
) -> Result<SuggestionShow, DomainError> {
    let recipe = snapshot.recipe(slug)?;
    let suggestion =
        snapshot
            .suggestion(recipe.id, number)?
            .ok_or_else(|| DomainError::NoSuchSuggestion {
                slug: slug.to_string(),
                number,
            })?;
    let made = snapshot.suggestion_merge(&recipe, &suggestion)?;
    let theirs = vec![Choice::Theirs; made.merge.conflicts().len()];
    let merged = made
        .merge
        .resolved(&theirs)
        .expect("a choice for every conflict");
    Ok(SuggestionShow {
        proposed: diff::recipes(&made.base, &made.suggested),
        outcome: diff::recipes(&recipe.content, &merged),
        fork: Link {
            slug: made.fork.slug.to_string(),
            title: made.fork.content.title.clone(),
        },
        merge: made.merge,
        recipe,
        suggestion,
    })
}
