//! The pages of suggestions: a fork's form to suggest its changes, a
//! recipe's list of the suggestions made to it, and one suggestion's
//! review (a three-way comparison).

use super::bring_in::{other_side, over_limits};
use super::{link, Link};
use crate::domain::diff::{self, RecipeDiff};
use crate::domain::merge::{self, Choice, Merge};
use crate::domain::read::{Recipe, Snapshot, Suggestion, SuggestionState};
use crate::domain::slug::Slug;
use crate::domain::{DomainError, Instant, VersionNumber};

/// The suggest form of a fork.
pub struct SuggestShow {
    pub fork: Recipe,
    pub parent: Recipe,
    /// The parent's version the fork last agreed with.
    pub base: VersionNumber,
    /// When the parent took an earlier suggestion of the fork's beside
    /// changes of its own: the fork's version it took, which the diff
    /// starts from.
    pub base_fork_version: Option<VersionNumber>,
    /// Exactly what the suggestion sends: the fork's changes since it last
    /// agreed with its parent, but its title and picture, which stay its
    /// own.
    pub change: RecipeDiff,
    /// Why no suggestion can be made now, if none can.
    pub blocked: Option<Blocked>,
}

/// Why a fork cannot suggest its changes now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blocked {
    /// It already has this suggestion open, which follows its newest
    /// version.
    Open(u32),
    /// Its parent has every change it made.
    NothingToSuggest,
    /// These very changes were suggested and declined.
    Declined(u32),
    /// These very changes were suggested, and the author took them in
    /// part, keeping their own side of the rest.
    TakenInPart(u32),
    /// Its parent was retired, and takes no suggestion.
    ParentRetired,
}

/// The suggest form of the fork at `slug`.
pub fn suggest_show(snapshot: &Snapshot, slug: &Slug) -> Result<SuggestShow, DomainError> {
    let fork = snapshot.current(slug)?;
    let agreed = snapshot
        .agreed(&fork)?
        .ok_or_else(|| DomainError::NoParent(slug.to_string()))?;
    let parent = snapshot.recipe_by_id(agreed.parent)?;
    let base = snapshot.base_content(&parent, &fork, agreed.base)?;
    let sent = merge::as_suggested(&base, &fork.content);
    let change = diff::recipes(&base, &sent);
    let made = snapshot.suggestions_from(fork.id)?;
    let open = made.iter().find(|s| s.state == SuggestionState::Open);
    let answered = snapshot.answered_already(&fork, Some(&made), (&parent, &base))?;
    let blocked = if let Some(open) = open {
        Some(Blocked::Open(open.number))
    } else if parent.retired {
        Some(Blocked::ParentRetired)
    } else if !merge::brings_anything(&base, &parent.content, &sent) {
        Some(Blocked::NothingToSuggest)
    } else {
        answered.map(|s| match s.state {
            SuggestionState::Declined => Blocked::Declined(s.number),
            _ => Blocked::TakenInPart(s.number),
        })
    };
    Ok(SuggestShow {
        fork,
        parent,
        base: agreed.version,
        base_fork_version: agreed.base.fork_version,
        change,
        blocked,
    })
}

/// A recipe's suggestions, with the fork each came from.
pub struct SuggestionsShow {
    pub recipe: Recipe,
    /// This page's suggestions, the newest first.
    pub suggestions: Vec<(Suggestion, Link)>,
    /// Suggestions in all.
    pub total: usize,
    /// Where the page of older ones starts (`?before=`), if there are.
    pub older: Option<u32>,
}

/// Suggestions a page of a recipe's list shows.
pub const SUGGESTIONS_PAGE: usize = 50;

/// A page of the suggestions made to the recipe at `slug`: those before
/// number `before` (the newest when `None`), at most `SUGGESTIONS_PAGE`,
/// each with its fork's name. Its cost is the page's, however many the
/// recipe has had.
pub fn suggestions_show(
    snapshot: &Snapshot,
    slug: &Slug,
    before: Option<u32>,
) -> Result<SuggestionsShow, DomainError> {
    let recipe = snapshot.recipe(slug)?;
    let (page, total) = snapshot.suggestions_to_page(recipe.id, before, SUGGESTIONS_PAGE)?;
    let older = page.last().map(|s| s.number).filter(|&n| n > 1);
    let suggestions = page
        .into_iter()
        .map(|s| {
            let fork = link(snapshot, s.from)?;
            Ok((s, fork))
        })
        .collect::<Result<_, DomainError>>()?;
    Ok(SuggestionsShow {
        recipe,
        suggestions,
        total,
        older,
    })
}

/// One suggestion, for review: what the fork changed, and what accepting
/// it would make of the recipe now.
pub struct SuggestionShow {
    pub recipe: Recipe,
    pub suggestion: Suggestion,
    pub fork: Link,
    /// The fork's changes: the base it agreed with against the fork's
    /// version suggested.
    pub proposed: RecipeDiff,
    /// The recipe's own changes since the fork's base: the third side of
    /// the comparison (empty if it has none).
    pub since_base: RecipeDiff,
    /// The merge onto the recipe's newest version.
    pub merge: Merge,
    /// The recipe now against the merge with its own side of every
    /// conflict: what comes in as it is, before the author chooses (as a
    /// bring-in shows it).
    pub outcome: RecipeDiff,
    /// What the conflicts' choices call the suggestion's side: its cook's
    /// handle (or, for a cook's suggestion to their own recipe, the fork).
    pub theirs: String,
    /// Why accepting it with the suggestion's side of every conflict could
    /// not be saved (the content limits it would pass).
    pub over_limits: Vec<String>,
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
    // The limits are checked on the largest outcome: every conflict
    // settled the suggestion's way.
    let merged = made.merge.with_every(Choice::Theirs);
    let as_it_is = made.merge.with_every(Choice::Mine);
    let theirs = other_side(
        snapshot,
        &recipe,
        suggestion.by.as_deref(),
        made.fork.content.title(),
        "the fork",
    )?;
    let over_limits = match suggestion.state {
        SuggestionState::Open => over_limits(merged.clone(), &recipe.content),
        _ => Vec::new(),
    };
    Ok(SuggestionShow {
        proposed: diff::recipes(&made.base, &made.suggested),
        since_base: diff::recipes(&made.base, &recipe.content),
        outcome: diff::drafts(recipe.content.as_draft(), &as_it_is),
        fork: Link {
            slug: made.fork.slug.to_string(),
            title: made.fork.content.title().to_owned(),
        },
        merge: made.merge,
        theirs,
        over_limits,
        recipe,
        suggestion,
    })
}

/// Suggestions a cook's account page and feed list of each kind at most:
/// the newest made.
pub const COOK_SUGGESTIONS_LISTED: usize = 50;

/// A suggestion with the two recipes it joins.
#[derive(Debug, Clone)]
pub struct SuggestionLine {
    pub suggestion: Suggestion,
    /// The recipe it was made to, and the fork it came from.
    pub to: Link,
    pub from: Link,
}

/// The suggestions a cook was sent (to their recipes) and made (from
/// their forks), the newest first, at most `COOK_SUGGESTIONS_LISTED` of
/// each, and how many there are of each in all.
#[derive(Debug, Clone, Default)]
pub struct CookSuggestions {
    pub received: Vec<SuggestionLine>,
    pub received_total: usize,
    pub sent: Vec<SuggestionLine>,
    pub sent_total: usize,
}

impl CookSuggestions {
    /// The received ones still open, of those listed.
    pub fn open_received(&self) -> impl Iterator<Item = &SuggestionLine> {
        self.received
            .iter()
            .filter(|line| line.suggestion.state == SuggestionState::Open)
    }
}

/// The suggestions of the cook with `handle`: a read of each list's ids,
/// then one read per suggestion listed and its two recipes' names.
pub fn cook_suggestions(
    snapshot: &Snapshot,
    handle: &Slug,
) -> Result<CookSuggestions, DomainError> {
    let (received, received_total) =
        snapshot.suggestions_to_cook(handle, COOK_SUGGESTIONS_LISTED)?;
    let (sent, sent_total) = snapshot.suggestions_by_cook(handle, COOK_SUGGESTIONS_LISTED)?;
    Ok(CookSuggestions {
        received: suggestion_lines(snapshot, received)?,
        received_total,
        sent: suggestion_lines(snapshot, sent)?,
        sent_total,
    })
}

/// Each suggestion of `list` with the names of the two recipes it joins.
pub(super) fn suggestion_lines(
    snapshot: &Snapshot,
    list: Vec<Suggestion>,
) -> Result<Vec<SuggestionLine>, DomainError> {
    list.into_iter()
        .map(|suggestion| {
            Ok(SuggestionLine {
                to: link(snapshot, suggestion.to)?,
                from: link(snapshot, suggestion.from)?,
                suggestion,
            })
        })
        .collect()
}

/// The feed of the suggestions sent to a cook's recipes: the newest made,
/// as the account page lists them, the last changed first.
#[derive(Debug, Clone)]
pub struct SuggestionsFeed {
    pub handle: String,
    pub name: String,
    /// Which of the cook's suggestions it follows.
    pub of: FeedOf,
    pub lines: Vec<SuggestionLine>,
    /// When the newest of them last changed (the store's newest change
    /// when there is none).
    pub updated: Instant,
}

/// Which of a cook's suggestions a feed follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedOf {
    /// Those sent to their recipes: to review.
    Received,
    /// Those they made: what became of each, and the author's note.
    Sent,
}

/// The feed of the suggestions sent to the recipes of the cook with
/// `handle`, or made by them (`of`): the feed of a cook with a page
/// (`cook::has_a_page`); any other handle is `NoSuchCook`, in the same
/// words as their page.
pub fn suggestions_feed(
    snapshot: &Snapshot,
    handle: &Slug,
    of: FeedOf,
) -> Result<SuggestionsFeed, DomainError> {
    let no_such = || DomainError::NoSuchCook(handle.to_string());
    let name = snapshot.cook_name(handle)?.ok_or_else(no_such)?;
    if !super::cook::has_a_page(snapshot, handle)? {
        return Err(no_such());
    }
    let suggestions = cook_suggestions(snapshot, handle)?;
    let mut lines = match of {
        FeedOf::Received => suggestions.received,
        FeedOf::Sent => suggestions.sent,
    };
    lines.sort_by_key(|line| std::cmp::Reverse((line.suggestion.changed, line.suggestion.id)));
    let updated = match lines.first() {
        Some(line) => line.suggestion.changed,
        None => snapshot.modified()?.unwrap_or(Instant::from_millis(0)),
    };
    Ok(SuggestionsFeed {
        handle: handle.to_string(),
        name,
        of,
        lines,
        updated,
    })
}

/// A fork's newest suggestion to its parent on another site, as its cook
/// sees it here: the other site reviews it, on its own pages, and its
/// answer comes back to this one.
pub struct OfferShow {
    pub fork: Recipe,
    /// The parent, as kept here from its site.
    pub parent: Recipe,
    pub suggestion: Suggestion,
}

/// `fork`'s newest suggestion to its parent elsewhere; not found when its
/// parent is on this site (its suggestion has a page of its own) or it
/// never suggested.
pub fn offer_show(snapshot: &Snapshot, fork: &Slug) -> Result<OfferShow, DomainError> {
    let fork = snapshot.current(fork)?;
    let none = || DomainError::NoOffer(fork.slug.to_string());
    let parent = snapshot.kept_parent_of(&fork)?.ok_or_else(none)?;
    let parent = snapshot.recipe(&Slug::elsewhere(&parent))?;
    let (newest, _) = snapshot.newest_suggestions_from(fork.id, 1)?;
    let suggestion = newest
        .into_iter()
        .next()
        .filter(|s| s.to == parent.id)
        .ok_or_else(none)?;
    Ok(OfferShow {
        fork,
        parent,
        suggestion,
    })
}
