//! The bring-in page: a fork's parent's changes since the fork last
//! agreed with it, merged onto the fork, with what comes in and the
//! conflicts the cook chooses between; or, for a fork in step, a page that
//! says so.

use super::{link, Link};
use crate::domain::content::{
    ContentDraft, ContentError, ContentField, MAX_INGREDIENTS, MAX_STEPS, MAX_TAGS,
};
use crate::domain::diff::{self, RecipeDiff};
use crate::domain::ids::VersionNumber;
use crate::domain::merge::Choice;
use crate::domain::read::{ParentChanges, Recipe, Snapshot};
use crate::domain::slug::Slug;
use crate::domain::{Content, DomainError};

/// What the bring-in page shows.
pub enum BringIn {
    /// The parent's changes to bring in.
    Changes(Box<BringInShow>),
    /// Nothing to bring in.
    InStep(Box<InStep>),
}

/// A fork with nothing to bring in: it has every change of its parent up
/// to the parent's version `version`, its newest.
pub struct InStep {
    pub fork: Recipe,
    pub parent: Link,
    pub version: VersionNumber,
    /// The parent's version the fork's record says it agrees with.
    pub since: VersionNumber,
    /// Whether the fork had those changes already, made as the parent
    /// made them, while its record says it agrees with an older version:
    /// the cook may record that it is in step (an agreement, no version).
    pub unrecorded: bool,
}

/// The parent's changes a fork has not brought in.
pub struct BringInShow {
    /// The fork, as it is now.
    pub fork: Recipe,
    pub changes: ParentChanges,
    /// What the fork would gain: its newest version against the merge,
    /// with its own side of every conflict.
    pub incoming: RecipeDiff,
    /// What the conflicts' choices call the parent's side: its cook's
    /// handle, or, for a cook's fork of their own recipe, the recipe.
    pub theirs: String,
    /// Why the merge, with its own side of every conflict, could not be
    /// saved (the content limits it would pass), each with what to trim.
    pub over_limits: Vec<String>,
}

/// The bring-in page of the fork at `slug`: its parent's newest version
/// merged onto it.
pub fn bring_in_show(snapshot: &Snapshot, slug: &Slug) -> Result<BringIn, DomainError> {
    let fork = snapshot.current(slug)?;
    let changes = match snapshot.parent_changes(&fork, None) {
        Ok(changes) => changes,
        Err(DomainError::UpToDate { version, .. }) => {
            let (parent, _) = fork
                .forked_from
                .ok_or_else(|| DomainError::NoParent(slug.to_string()))?;
            return Ok(BringIn::InStep(Box::new(InStep {
                parent: link(snapshot, parent)?,
                fork,
                version,
                since: version,
                unrecorded: false,
            })));
        }
        Err(e) => return Err(e),
    };
    let merged = changes.merge.with_every(Choice::Mine);
    if changes.merge.is_clean() && merged == *fork.content.as_draft() {
        // Every change the parent made, the fork has: in step in all but
        // the record.
        return Ok(BringIn::InStep(Box::new(InStep {
            parent: Link {
                slug: changes.parent.slug.to_string(),
                title: changes.parent.content.title().to_owned(),
            },
            version: changes.upto,
            since: changes.base,
            fork,
            unrecorded: true,
        })));
    }
    let incoming = diff::drafts(fork.content.as_draft(), &merged);
    let theirs = other_side(
        snapshot,
        &fork,
        changes.parent.author.as_deref(),
        changes.parent.content.title(),
        "the parent",
    )?;
    Ok(BringIn::Changes(Box::new(BringInShow {
        over_limits: over_limits(merged, &fork.content),
        theirs,
        fork,
        changes,
        incoming,
    })))
}

/// What a merge form calls the other side, for `mine`'s cook: the other
/// recipe's cook, by name ("Take Ann's"); for a cook merging two recipes
/// of their own, the other recipe by title; and `fallback` when both are
/// called alike ("Take the parent's", never "Take Soup's" for two Soups).
pub(crate) fn other_side(
    snapshot: &Snapshot,
    mine: &Recipe,
    other_cook: Option<&str>,
    other_title: &str,
    fallback: &str,
) -> Result<String, DomainError> {
    Ok(match other_cook {
        Some(cook) if Some(cook) != mine.author.as_deref() => match Slug::parse(cook) {
            Ok(handle) => snapshot
                .cook_name(&handle)?
                .unwrap_or_else(|| cook.to_owned()),
            Err(_) => cook.to_owned(),
        },
        _ if other_title != mine.content.title() => other_title.to_owned(),
        _ => fallback.to_owned(),
    })
}

/// Why `merged` (from a recipe that is `mine` now) cannot be saved, in
/// words that say what to trim: the lists' limits by how many too many,
/// the others as the parse says them.
pub(crate) fn over_limits(merged: ContentDraft, mine: &Content) -> Vec<String> {
    let (ingredients, steps, tags) = (
        merged.ingredients.len(),
        merged.steps.len(),
        merged.tags.len(),
    );
    let Err(mistakes) = Content::parse(merged) else {
        return Vec::new();
    };
    mistakes
        .iter()
        .map(|mistake: &ContentError| {
            let trim = |n: usize, most: usize, what: &str, now: usize| {
                format!(
                    "Merged, the recipe would have {n} {what}, and a recipe has at most {most}: \
                     take out at least {} of your {now} first.",
                    n - most
                )
            };
            match mistake.field() {
                ContentField::Ingredients if ingredients > MAX_INGREDIENTS => trim(
                    ingredients,
                    MAX_INGREDIENTS,
                    "ingredient lines",
                    mine.ingredients().len(),
                ),
                ContentField::Steps if steps > MAX_STEPS => {
                    trim(steps, MAX_STEPS, "steps", mine.steps().len())
                }
                ContentField::Tags if tags > MAX_TAGS => {
                    trim(tags, MAX_TAGS, "tags", mine.tags().len())
                }
                _ => format!(
                    "Merged, the recipe would be refused: {}.",
                    mistake.to_string().trim_end_matches('.')
                ),
            }
        })
        .collect()
}
