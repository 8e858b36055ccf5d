//! What each page shows, read from one snapshot: the page models, and one
//! builder per page, each named as its handler and its view are
//! (`pages::recipe_show`: `web::recipes::show`, `views::recipe::show`).
//!
//! A builder is a function of one snapshot and the request, and nothing
//! else: a handler calls one, with the snapshot it was given, and hands the
//! model to a view. Each model is plain data, so a view renders it without
//! touching the store, and a bench can read one without rendering it. The
//! builders compose `Snapshot`'s primitives (a recipe, its lineage, its
//! forks, the catalog, search), which live in `read`; `Snapshot` itself has
//! no page's method.
//!
//! - `recipe`: the recipe page (scaled as asked) and its JSON
//! - `lineage`: a recipe's whole lineage
//! - `version`: one past version
//! - `history`: the versions and what each changed
//! - `diff`: two versions compared, and a fork against its parent
//! - `family`: the fork tree from the original
//! - `cook`: a cook's recipes and forks
//! - `bring_in`: a fork's parent's changes, merged onto it
//! - `suggestions`: suggesting a fork's changes, and reviewing them
//!
//! What several pages share is here: links, and the lineage as a
//! breadcrumb.

mod bring_in;
mod cook;
mod diff;
mod family;
mod history;
mod lineage;
mod recipe;
mod suggestions;
mod version;

pub use bring_in::{bring_in_show, BringIn, BringInShow, InStep};
pub use cook::{cook_page, public_cook, CookPage, COOK_PAGE_LIMIT};
pub use diff::{comparison, version_diff, Comparison, VersionDiff};
pub use family::{family, Family, TreeNode};
pub use history::{history, History, Origin, HISTORY_PAGE};
pub use lineage::{lineage_show, LineageShow};
pub use recipe::{recipe_data, recipe_show, Apart, RecipeData, RecipeShow, FORKS_LISTED};
pub use suggestions::{
    cook_suggestions, offer_show, suggest_show, suggestion_show, suggestions_feed,
    suggestions_show, Blocked, CookSuggestions, FeedOf, OfferShow, SuggestShow, SuggestionLine,
    SuggestionShow, SuggestionsFeed, SuggestionsShow, COOK_SUGGESTIONS_LISTED, SUGGESTIONS_PAGE,
};
pub use version::{version_show, VersionShow};

use super::ids::{RecipeId, VersionNumber};
use super::read::{Ancestor, Snapshot};
use super::DomainError;

/// Where a recipe brought in from another site came from: the page, and
/// the site's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub url: String,
    pub name: String,
}

/// A link to a recipe: where it is and what it is called.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub slug: String,
    pub title: String,
}

/// One ancestor in a lineage breadcrumb: the recipe, and the version of it
/// that was forked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crumb {
    pub slug: String,
    pub title: String,
    pub version: VersionNumber,
}

/// Ancestors a breadcrumb shows before its gap (the original) and after
/// it (the parent's parent and the parent): a lineage of more is shortened
/// to those, "… N more" between, and the whole list is the lineage page's.
/// So the breadcrumb of the deepest recipe takes a few lines on a phone
/// (it took thirteen when it named twenty), above the title.
pub const CRUMB_HEAD: usize = 1;
pub const CRUMB_TAIL: usize = 2;
/// A lineage as a breadcrumb, the original first and the parent last; one
/// of more than `CRUMB_HEAD + CRUMB_TAIL` ancestors is shortened in the
/// middle, so a page names at most that many whatever the depth.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Breadcrumb {
    /// Where the original was brought in from, if it was: the lineage
    /// starts there.
    pub source: Option<Source>,
    /// The ancestors shown from the original down.
    pub head: Vec<Crumb>,
    /// How many are left out after `head`.
    pub hidden: usize,
    /// The ancestors shown after the gap, the parent last (empty when
    /// nothing is left out).
    pub tail: Vec<Crumb>,
}

impl Breadcrumb {
    /// The recipe this one was forked from.
    pub fn parent(&self) -> Option<&Crumb> {
        self.tail.last().or(self.head.last())
    }

    pub fn is_empty(&self) -> bool {
        self.head.is_empty()
    }

    /// Ancestors in all, shown or not.
    pub fn len(&self) -> usize {
        self.head.len() + self.hidden + self.tail.len()
    }
}

/// A link to recipe `id`.
fn link(snapshot: &Snapshot, id: RecipeId) -> Result<Link, DomainError> {
    let (slug, title) = snapshot.slug_and_title(id)?;
    Ok(Link { slug, title })
}

/// The lineage of `id` as a breadcrumb, the original first: the walk
/// reads every ancestor's parent, but names only those shown.
fn crumbs(snapshot: &Snapshot, id: RecipeId) -> Result<Breadcrumb, DomainError> {
    let mut lineage = snapshot.lineage(id)?;
    lineage.reverse();
    let source = snapshot.source(lineage.first().map_or(id, |a| a.id))?;
    let crumb = |a: &Ancestor| crumb(snapshot, a);
    if lineage.len() <= CRUMB_HEAD + CRUMB_TAIL {
        return Ok(Breadcrumb {
            source,
            head: lineage.iter().map(crumb).collect::<Result<_, _>>()?,
            hidden: 0,
            tail: Vec::new(),
        });
    }
    let tail_from = lineage.len() - CRUMB_TAIL;
    Ok(Breadcrumb {
        source,
        head: lineage[..CRUMB_HEAD]
            .iter()
            .map(crumb)
            .collect::<Result<_, _>>()?,
        hidden: tail_from - CRUMB_HEAD,
        tail: lineage[tail_from..]
            .iter()
            .map(crumb)
            .collect::<Result<_, _>>()?,
    })
}

/// One ancestor, named, at the version that was forked.
fn crumb(snapshot: &Snapshot, ancestor: &Ancestor) -> Result<Crumb, DomainError> {
    let Link { slug, title } = link(snapshot, ancestor.id)?;
    Ok(Crumb {
        slug,
        title,
        version: ancestor.forked_version,
    })
}
