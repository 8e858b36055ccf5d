//! The recipe page (and its JSON): the recipe now, at the scale asked,
//! where it came from and what it became.

use super::suggestions::{suggestion_lines, SuggestionLine};
use super::{crumbs, link, Breadcrumb, Link};
use crate::domain::merge;
use crate::domain::read::{Agreed, BroughtIn, Recipe, Snapshot, Suggestion};
use crate::domain::scale::{Scale, ScaleAsked};
use crate::domain::slug::Slug;
use crate::domain::{DomainError, VersionNumber};

/// Forks a recipe page lists; the family tree has the rest.
pub const FORKS_LISTED: usize = 50;
/// Suggestions a recipe's JSON lists, the newest; its suggestions page
/// has the rest.
pub(super) const SUGGESTIONS_LISTED: usize = 50;

/// The recipe page (and its JSON): the recipe now, where it came from and
/// what it became.
pub struct RecipeShow {
    pub recipe: Recipe,
    pub lineage: Breadcrumb,
    /// Direct forks, oldest first, at most `FORKS_LISTED`.
    pub forks: Vec<Link>,
    /// Direct forks in all.
    pub fork_count: usize,
    /// For a fork: the parent's version it last agreed with (forked or
    /// brought in) and the parent's newest, so the page says how far apart
    /// they are.
    pub apart: Option<Apart>,
    /// For a fork: whether it has changes its parent lacks to suggest.
    pub can_suggest: bool,
    /// For a fork: the newest suggestion it made, so its page says what
    /// became of it.
    pub last_suggestion: Option<Suggestion>,
    /// Suggestions to it still open.
    pub open_suggestions: usize,
    /// The scale its amounts are shown at: part of the page, since a
    /// scale the recipe cannot be shown at (servings asked of a recipe that
    /// says none) is the page's error.
    pub scale: Scale,
}

/// How far a fork is from its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Apart {
    /// The parent's version the fork last agreed with.
    pub since: VersionNumber,
    /// The parent's newest version.
    pub newest: VersionNumber,
    /// Of the parent's versions since, those that took this fork's own
    /// suggestions: changes the fork already has.
    pub taken: u32,
    /// Of the changes both made differently, how many the fork kept its
    /// own version of when it last brought the parent's in.
    pub kept_own: u32,
    /// Whether the parent was retired: nothing more comes from it.
    pub parent_retired: bool,
}

impl Apart {
    /// Versions the parent gained since with changes of its own: those
    /// that took the fork's suggestions bring the fork nothing new.
    pub fn gained(&self) -> u32 {
        (self.newest.get() - self.since.get()).saturating_sub(self.taken)
    }
}

/// What the recipe page shows, at the scale asked.
pub fn recipe_show(
    snapshot: &Snapshot,
    slug: &Slug,
    asked: ScaleAsked,
) -> Result<RecipeShow, DomainError> {
    let recipe = snapshot.current(slug)?;
    let scale = Scale::for_recipe(&recipe.content, asked.servings, asked.units)?;
    let lineage = crumbs(snapshot, recipe.id)?;
    let agreed = snapshot.agreed(&recipe)?;
    let apart = agreed.as_ref().map(|agreed| {
        // The fork's suggestions its parent took beside changes of its
        // own, since the two last agreed: changes the fork has already.
        let taken = agreed
            .taken
            .iter()
            .filter(|t| t.parent_version > agreed.version && t.parent_version <= agreed.newest)
            .count();
        Apart {
            since: agreed.version,
            newest: agreed.newest,
            taken: u32::try_from(taken).unwrap_or(u32::MAX),
            kept_own: agreed.kept_own,
            parent_retired: agreed.parent_retired,
        }
    });
    let (last_suggestion, _) = match agreed {
        Some(_) => snapshot.newest_suggestions_from(recipe.id, 1)?,
        None => (Vec::new(), 0),
    };
    let can_suggest = match &agreed {
        Some(agreed) => can_suggest(snapshot, &recipe, agreed, last_suggestion.first())?,
        None => false,
    };
    let all_forks = snapshot.forks(recipe.id)?;
    let forks = all_forks
        .iter()
        .take(FORKS_LISTED)
        .map(|&id| link(snapshot, id))
        .collect::<Result<_, _>>()?;
    let open_suggestions = snapshot.open_suggestions(recipe.id)?;
    Ok(RecipeShow {
        recipe,
        lineage,
        forks,
        fork_count: all_forks.len(),
        apart,
        can_suggest,
        last_suggestion: last_suggestion.into_iter().next(),
        open_suggestions,
        scale,
    })
}

/// Whether the fork `recipe` has something to suggest to its parent, as
/// the suggest form would find it (`suggest_show`): changes its parent
/// lacks, not already taken, declined or taken in part.
fn can_suggest(
    snapshot: &Snapshot,
    recipe: &Recipe,
    agreed: &Agreed,
    last_suggestion: Option<&Suggestion>,
) -> Result<bool, DomainError> {
    let newest = recipe.newest();
    if agreed.parent_retired
        || !agreed.own_changes.unwrap_or(true)
        || agreed.taken.iter().any(|t| t.fork_version == newest)
    {
        return Ok(false);
    }
    let behind = agreed.newest != agreed.version;
    // A fork in step that never suggested was never answered, and its
    // parent has nothing it did not: no read.
    if !behind && last_suggestion.is_none() {
        return Ok(true);
    }
    let parent = snapshot.recipe_by_id(agreed.parent)?;
    let base = snapshot.base_content(&parent, recipe, agreed.base)?;
    if last_suggestion.is_some()
        && snapshot
            .answered_already(recipe, None, (&parent, &base))?
            .is_some()
    {
        return Ok(false);
    }
    // The parent moved on since they agreed, and may have made the fork's
    // changes itself: the recorded flag is against the base, so ask the
    // merge.
    let sent = merge::as_suggested(&base, &recipe.content);
    Ok(!behind || merge::brings_anything(&base, &parent.content, &sent))
}

/// The recipe for programs (`.json`): its page's model, with what the page
/// only counts: the merges it made, and the suggestions made to it and
/// from it.
pub struct RecipeData {
    pub show: RecipeShow,
    /// The parent's versions it brought in, oldest first.
    pub brought_in: Vec<BroughtIn>,
    /// The newest `SUGGESTIONS_LISTED` suggestions made to it, by number,
    /// and how many there are.
    pub suggestions_to: Vec<SuggestionLine>,
    pub suggestion_count: usize,
    /// The newest `SUGGESTIONS_LISTED` suggestions it made to its parent,
    /// oldest first.
    pub suggestions_from: Vec<SuggestionLine>,
}

/// The recipe's JSON model: its page's, and reads of its merges and
/// suggestions (each one read, then one per item: the recipe's own).
pub fn recipe_data(snapshot: &Snapshot, slug: &Slug) -> Result<RecipeData, DomainError> {
    let show = recipe_show(snapshot, slug, ScaleAsked::AS_WRITTEN)?;
    let id = show.recipe.id;
    let (mut newest, suggestion_count) = snapshot.newest_suggestions_to(id, SUGGESTIONS_LISTED)?;
    newest.sort_by_key(|s| s.number);
    Ok(RecipeData {
        brought_in: snapshot.merges(id)?,
        suggestions_to: suggestion_lines(snapshot, newest)?,
        suggestion_count,
        suggestions_from: {
            let (mut made, _) = snapshot.newest_suggestions_from(id, SUGGESTIONS_LISTED)?;
            made.reverse();
            suggestion_lines(snapshot, made)?
        },
        show,
    })
}
