//! What followers elsewhere are told, read from the store's transactions:
//! a recipe made (`Create`), a new version of one (`Update`), a recipe
//! retired (`Delete`). Read from the log rather than told by the writes,
//! so that a write acknowledged just before a crash is still announced:
//! the deliveries are derived from the log, as every index is.

use super::super::ids::{Basis, RecipeId, VersionNumber};
use super::super::read::{Recipe, Snapshot};
use super::super::DomainError;

/// What happened to a recipe, for its author's followers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Happened {
    Created,
    Updated,
    Retired,
}

/// One recipe's news since a basis: its newest state and what happened.
#[derive(Debug, Clone)]
pub struct Announcement {
    pub recipe: Recipe,
    pub happened: Happened,
    /// For a fork: its parent's slug, and the parent's version it is in
    /// step with (forked, or brought in last).
    pub based_on: Option<(String, VersionNumber)>,
    /// For a recipe brought in from elsewhere (a fork of a recipe on
    /// another site): the address its lineage starts at.
    pub source: Option<String>,
    /// For a new fork of a recipe on another site: the inbox of that
    /// recipe's author, to be told of it.
    pub tell: Option<String>,
}

/// The news of every recipe a transaction after `since` (through the
/// snapshot's basis) changed: one per recipe however many versions it
/// gained, made if it did not exist at `since`. Only of the recipes
/// `anyone_to_tell` says someone is to be told of, asked before a recipe
/// is read: a recipe read whole at a basis just behind its newest edit is
/// read from every version it has had, and with cooks editing recipes
/// over and over that reading, for no one, was a third of a server's CPU
/// (docs/journal/55-million.md, "What a write costs in CPU").
pub fn announcements_since(
    snapshot: &Snapshot,
    since: u64,
    anyone_to_tell: &mut dyn FnMut(RecipeId) -> Result<bool, DomainError>,
) -> Result<Vec<Announcement>, DomainError> {
    let since = Basis::new(since);
    let before = snapshot.as_of(since);
    let mut out = Vec::new();
    for id in snapshot.changed_since(since)? {
        if !anyone_to_tell(id)? {
            continue;
        }
        let recipe = snapshot.recipe_by_id(id)?;
        let existed = existed(&before, id)?;
        let happened = match (recipe.retired, existed) {
            (true, true) => Happened::Retired,
            // Made and retired between two looks: no one was told of it.
            (true, false) => continue,
            (false, false) => Happened::Created,
            (false, true) => Happened::Updated,
        };
        let based_on = match recipe.in_step_with() {
            Some((parent, version)) => Some((snapshot.slug_of(parent)?, version)),
            None => None,
        };
        let source = snapshot.source(id)?.map(|s| s.url);
        let tell = match happened {
            Happened::Created => snapshot.source_inbox(id)?,
            Happened::Updated | Happened::Retired => None,
        };
        out.push(Announcement {
            recipe,
            happened,
            based_on,
            source,
            tell,
        });
    }
    Ok(out)
}

/// Whether recipe `id` was there at `before`'s basis: whether it had its
/// slug then. One attribute's history is read, not the whole recipe's: a
/// recipe read as of a past basis is rebuilt from every version it has
/// had (docs/journal/55-million.md, "What a write costs in CPU").
fn existed(before: &Snapshot, id: RecipeId) -> Result<bool, DomainError> {
    Ok(!before.slug_of(id)?.is_empty())
}

/// The newest `most` recipes (not retired) of the cook with `handle`, as
/// their outbox lists them (each as made, at its newest version), and how
/// many they have in all.
pub fn outbox(
    snapshot: &Snapshot,
    handle: &super::super::Slug,
    most: usize,
) -> Result<(Vec<Announcement>, usize), DomainError> {
    // Newest first: a cook's recipes are read oldest first, by id.
    let mut recipes = Vec::new();
    let mut total = 0;
    for id in snapshot.written_by(handle)?.into_iter().rev() {
        if snapshot.is_retired(id)? {
            continue;
        }
        total += 1;
        if recipes.len() < most {
            recipes.push(snapshot.recipe_by_id(id)?);
        }
    }
    let mut out = Vec::with_capacity(recipes.len());
    for recipe in recipes {
        let based_on = match recipe.in_step_with() {
            Some((parent, version)) => Some((snapshot.slug_of(parent)?, version)),
            None => None,
        };
        let source = snapshot.source(recipe.id)?.map(|s| s.url);
        out.push(Announcement {
            recipe,
            happened: Happened::Created,
            based_on,
            source,
            tell: None,
        });
    }
    Ok((out, total))
}
