//! A cook's page: who they are, and what they wrote.

use crate::domain::read::{CatalogEntry, Snapshot};
use crate::domain::slug::Slug;
use crate::domain::DomainError;

/// Recipes a cook's page lists at most.
pub const COOK_PAGE_LIMIT: usize = 500;

/// A cook's page: who they are, and what they wrote.
pub struct CookPage {
    pub handle: String,
    pub name: String,
    /// Recipes they started, by title.
    pub originals: Vec<CatalogEntry>,
    /// Their forks of other recipes, by title.
    pub forks: Vec<CatalogEntry>,
    /// Whether they wrote more than the page lists.
    pub truncated: bool,
}

/// Whether the cook with `handle` has a page: a recipe of theirs not
/// retired. Reads their recipes until it finds one.
pub(super) fn has_a_page(snapshot: &Snapshot, handle: &Slug) -> Result<bool, DomainError> {
    for id in snapshot.written_by(handle)? {
        if !snapshot.is_retired(id)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The page of the cook with `handle`: their recipes and forks, not
/// retired ones, at most `COOK_PAGE_LIMIT` of them. A cook with nothing
/// published is `NoSuchCook`, as a handle no one has is.
pub fn cook_page(snapshot: &Snapshot, handle: &Slug) -> Result<CookPage, DomainError> {
    let name = snapshot
        .cook_name(handle)?
        .ok_or_else(|| DomainError::NoSuchCook(handle.to_string()))?;
    let written = snapshot.written_by(handle)?;
    let truncated = written.len() > COOK_PAGE_LIMIT;
    let (mut originals, mut forks) = (Vec::new(), Vec::new());
    for id in written.into_iter().take(COOK_PAGE_LIMIT) {
        if snapshot.is_retired(id)? {
            continue;
        }
        let entry = snapshot.catalog_entry(id)?;
        match snapshot.lineage(id)?.is_empty() {
            true => originals.push(entry),
            false => forks.push(entry),
        }
    }
    if originals.is_empty() && forks.is_empty() && !truncated {
        // A cook with nothing published has no page, in the same words
        // as a handle no one has: a page would tell anyone which handles
        // exist, which login's answers and timing take care not to.
        return Err(DomainError::NoSuchCook(handle.to_string()));
    }
    let by_title = |a: &CatalogEntry, b: &CatalogEntry| (&a.title, a.id).cmp(&(&b.title, b.id));
    originals.sort_by(by_title);
    forks.sort_by(by_title);
    Ok(CookPage {
        handle: handle.to_string(),
        name,
        originals,
        forks,
        truncated,
    })
}

/// The name of the cook with `handle` if they have a page (a recipe of
/// theirs not retired): who other sites may see and follow. A cook with
/// nothing published is no one, as on their page.
pub fn public_cook(snapshot: &Snapshot, handle: &Slug) -> Result<Option<String>, DomainError> {
    let Some(name) = snapshot.cook_name(handle)? else {
        return Ok(None);
    };
    Ok(has_a_page(snapshot, handle)?.then_some(name))
}
