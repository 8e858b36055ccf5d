//! Recipes, versions, forks, lineage and diffs, on the fact store.
//!
//! The domain knows nothing of HTTP or HTML. `Recipes` is its handle on a
//! store: it installs the schema and makes every write (create, edit, fork,
//! retire), each one transaction with an author and a note. A `Snapshot`
//! reads one pinned database value: a recipe's content now or at any
//! version, its versions, its lineage (the hand-written walk), its forks,
//! the catalog, tags and search, and the read model of each page. Nothing
//! here hands out the store's `Db`: the layers above see recipes, typed ids
//! (`RecipeId`, `Basis`, `VersionNumber`, `Instant`) and plain models.
//!
//! # Layout
//! - `attributes`: every attribute, once: the table the schema, `Attrs`,
//!   the fields and the writes' names come from
//! - `site_schema`: the attributes, installed at open
//! - `accounts`: cooks, passwords and sessions (secrets beside the datoms)
//! - `slug`, `ingredient`, `content`: typed values, parsed at the edge
//! - `attrs`: attribute ids resolved once
//! - `write`: create, edit, fork, retire
//! - `ids`: the typed numbers at the domain's surface
//! - `read`: the snapshot: recipe, lineage, catalog, search
//! - `pages`: what each page shows, read in one call, one builder per page
//! - `search`: the terms of the inverted index
//! - `diff`: line and word diffs between two versions
//! - `merge`: three-way merges of versions (bring in, suggest)
//! - `import_check`: the domain's rules for an import file

pub mod accounts;
mod attributes;
mod attrs;
pub mod content;
pub mod diff;
pub mod federation;
mod ids;
pub mod import_check;
pub mod ingredient;
pub mod merge;
pub mod pages;
pub mod pictures;
mod read;
pub mod scale;
pub mod search;
pub mod search_terms;
mod session_memo;
pub mod site_schema;
pub mod slug;
pub(crate) mod write;

/// How a node's following of its log stands (`Recipes::follow_report`).
pub use crate::store::FollowReport;
pub use accounts::{AccountError, Accounts, Cook, NewSession};
pub use attributes::{schema_org, Attr, A, ATTRIBUTES};
pub use attrs::Attrs;
pub use content::{
    Content, ContentDraft, ContentError, ContentField, Field, FormPlace, Minutes, Slot, Step,
    Yield, FIELDS,
};
pub use ids::{Basis, Instant, RecipeId, VersionNumber};
pub use pages::{
    Apart, Blocked, Breadcrumb, BringIn, BringInShow, Comparison, CookPage, CookSuggestions, Crumb,
    Family, History, InStep, LineageShow, Link, OfferShow, Origin, RecipeData, RecipeShow, Source,
    SuggestShow, SuggestionLine, SuggestionShow, SuggestionsFeed, SuggestionsShow, TreeNode,
    VersionDiff, VersionShow, COOK_PAGE_LIMIT, CRUMB_HEAD, CRUMB_TAIL, FORKS_LISTED, HISTORY_PAGE,
};
pub use read::{
    Agreed, Agreement, Ancestor, BroughtIn, CatalogEntry, CatalogPage, CatalogQuery, ForkNode,
    ForkTree, MergeBase, ParentChanges, ReadSet, Recipe, RemoteFork, Snapshot, Sort, Suggestion,
    SuggestionMerge, SuggestionState, Taken, Version, MAX_SORTED_TAG, RETIRED,
};
pub use slug::{BadSlug, Slug};
pub use write::{
    Attempt, Change, OfferAnswer, Recipes, RemoteOffer, RemoteParent, Review, Seen, MAX_MESSAGE,
    MAX_NOTE, UNSAVED_PICTURE_GRACE_MS,
};

use crate::store::{LogError, ReadError, StorageError, StoreError, TransactError};

/// How deep a lineage may go before the walk refuses it.
pub const MAX_LINEAGE: usize = 4_096;

/// What went wrong in the domain, in words for the person who asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DomainError {
    /// No recipe has this slug.
    #[error("there is no recipe called {0}")]
    NoSuchRecipe(String),
    /// The recipe has fewer versions.
    #[error("{slug} has no version {version}: it has {count}")]
    NoSuchVersion {
        slug: String,
        version: VersionNumber,
        count: usize,
    },
    /// Another recipe has the slug.
    #[error("the slug {0} is taken")]
    SlugTaken(String),
    /// The slug is the address of one of the site's own pages
    /// (`Slug::is_reserved`).
    #[error("the slug {0} is the address of one of the site's own pages")]
    SlugReserved(String),
    #[error(transparent)]
    BadSlug(#[from] BadSlug),
    /// The content cannot be a recipe, or would not fit in one
    /// transaction; the error says which field.
    #[error(transparent)]
    Content(#[from] ContentError),
    /// The request cannot be carried out as asked.
    #[error("{0}")]
    Invalid(String),
    /// The recipe moved on since the version a write was based on.
    #[error("{slug} has changed since version {based_on}: it is at version {newest} now")]
    Stale {
        slug: String,
        based_on: VersionNumber,
        newest: VersionNumber,
    },
    /// An edit that changes nothing is not a version.
    #[error("nothing changed, so there is no new version")]
    NothingChanged,
    /// The lineage is longer than `MAX_LINEAGE`.
    #[error("the lineage of recipe {0} is deeper than {MAX_LINEAGE}")]
    LineageTooDeep(RecipeId),
    /// A recipe is its own ancestor.
    #[error("the lineage of recipe {0} runs in a cycle")]
    LineageCycle(RecipeId),
    /// The recipe was retired by its author; its history stays readable.
    #[error("{title} was retired by its author")]
    Retired { slug: String, title: String },
    /// Only a recipe's author may edit or retire it; others fork it.
    #[error("Only its author can change {title}: fork it to make your own version.")]
    NotAuthor { slug: String, title: String },
    /// No cook has the handle.
    #[error("there is no cook called {0}")]
    NoSuchCook(String),
    /// A comparison with the parent of a recipe that has none.
    #[error("{0} is an original: it has no parent to compare with.")]
    NoParent(String),
    /// A fork asked to bring in its parent's changes has them all.
    #[error("{slug} already has every change of {parent} up to its version {version}: there is nothing new to bring in.")]
    UpToDate {
        slug: String,
        parent: String,
        version: VersionNumber,
    },
    /// No suggestion to the recipe has the number.
    #[error("{slug} has no suggestion {number}")]
    NoSuchSuggestion { slug: String, number: u32 },
    /// A recipe that suggested nothing to a parent on another site.
    #[error("{0} has suggested nothing to a recipe on another site.")]
    NoOffer(String),
    /// A suggestion already accepted, declined or withdrawn.
    #[error("Suggestion {number} is {state}: it can change no more.")]
    SuggestionClosed { number: u32, state: &'static str },
    /// A fork with an open suggestion makes no second one: the open one
    /// follows its newest version.
    #[error("{slug} already has suggestion {number} open, which follows its newest version")]
    AlreadySuggested { slug: String, number: u32 },
    /// Only the cook who made a suggestion withdraws it.
    #[error("only the cook who made suggestion {number} can withdraw it")]
    NotSuggester { number: u32 },
    /// One of the two recipes a merge's form was made from (a bring-in, or
    /// a suggestion's review) moved on since: the form acts only on what
    /// it showed, so nothing was saved.
    #[error("{title} changed since this page was made (it is at version {newest} now)")]
    MergeMoved {
        slug: String,
        title: String,
        newest: VersionNumber,
    },
    /// A merge saved with choices that do not settle it: one missing (or
    /// one too many: the form was made for another merge), or one the
    /// conflict cannot take.
    #[error(transparent)]
    Unresolved(#[from] merge::Unresolved),
    /// A bring-in's form showed the merge from where the fork agreed with
    /// its parent then, and the fork has since come to agree with a later
    /// version (another window's bring-in, which changed nothing of it).
    #[error(
        "{title} came to be in step with its parent's version {version} since this page was made"
    )]
    AgreedMeanwhile {
        title: String,
        version: VersionNumber,
    },
    /// A fork suggesting again the version whose suggestion its parent's
    /// author declined.
    #[error("suggestion {number} made these very changes and was declined: change your recipe before suggesting again")]
    DeclinedAlready { number: u32 },
    /// A fork suggesting again the recipe whose suggestion its parent's
    /// author took in part, keeping their own side of what was left.
    #[error("suggestion {number} made these very changes and was taken in part: change your recipe before suggesting again")]
    TakenInPart { number: u32 },
    /// A pagination cursor that names no recipe.
    #[error("{0:?} is not a page of this list")]
    BadCursor(String),
    #[error("{0}")]
    BadPicture(#[from] pictures::PictureError),
    /// A recipe page asked for at a scale it cannot be shown at.
    #[error(transparent)]
    Scale(#[from] scale::ScaleError),
    #[error("no picture {0} is stored here")]
    NoSuchPicture(String),
    /// The log the site's store follows could not take the write now:
    /// another node wrote first (this one has caught up since), or the
    /// log's database is out of reach. Nothing was written; ask again.
    #[error(
        "the site cannot save changes just now ({0}); nothing was saved, try again in a moment"
    )]
    Unavailable(String),
    /// The search index is being built, from the store, after a start
    /// without one: searches wait until it is.
    #[error("the search index is being built ({done} of {of} recipes); try again in a moment")]
    SearchBuilding { done: usize, of: usize },
    /// The search index could not be opened, written or read (tantivy's
    /// error, or its files'): the site's pages are fine, its search is not.
    #[error("search is unavailable: {0}")]
    SearchUnavailable(String),
    /// The log was sent the write and then could not be reached to say
    /// whether it kept it: it may be saved. Sending it again could save it
    /// twice, so the cook is told to look first.
    #[error(
        "the site could not tell whether your change was saved ({0}); send it again in a moment: a change sent twice from one form is saved once"
    )]
    OutcomeUnknown(String),
    /// The same change, from the same form, was saved already (its first
    /// answer was lost, or it was sent twice): nothing more was written.
    /// `slug` is the recipe that save wrote.
    #[error("this change was saved already, at /recipes/{slug}")]
    AlreadySaved { slug: String },
    /// The same suggestion, from the same form, was made already (its
    /// first answer was lost): suggestion `number` to `parent`.
    #[error("this suggestion was made already: suggestion {number} to {parent}")]
    SuggestedBefore { parent: String, number: u32 },
    #[error("store: {0}")]
    Store(#[from] StoreError),
}

impl DomainError {
    /// Whether the site's log (PostgreSQL) could not be reached or did not
    /// answer: nothing is wrong with the request, and it may be asked
    /// again in a moment (a 503 with Retry-After, never a 500).
    pub fn is_unavailable(&self) -> bool {
        use StorageError::Unavailable as Unreached;
        matches!(
            self,
            DomainError::Unavailable(_)
                | DomainError::OutcomeUnknown(_)
                | DomainError::Store(
                    StoreError::Storage(Unreached(_))
                        | StoreError::Read(ReadError::Storage(Unreached(_)))
                        | StoreError::Transact(
                            TransactError::Storage(Unreached(_))
                                | TransactError::Log(LogError::Unavailable(_))
                        )
                )
        )
    }
}

#[cfg(test)]
impl DomainError {
    /// A read of what the log's database keeps that it did not answer, as
    /// the store reports it: for the layers above, which may not name the
    /// store, to test what they make of one.
    pub(crate) fn unreached(why: &str) -> DomainError {
        DomainError::Store(StorageError::Unavailable(why.to_owned()).into())
    }
}

/// `bytes` in lower-case hex: the site's tokens, picture names and sums.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Each operation's store error is a store error.
macro_rules! from_store {
    ($($error:ty),*) => {$(
        impl From<$error> for DomainError {
            fn from(error: $error) -> DomainError {
                DomainError::Store(error.into())
            }
        }
    )*};
}

from_store!(StorageError, ReadError);

impl From<TransactError> for DomainError {
    fn from(error: TransactError) -> DomainError {
        match error {
            // Whatever the log said (another node first, out of reach, a
            // copy filling it, entries it lost), nothing was written: the
            // site cannot save now, which is the 503 a browser retries.
            TransactError::Log(
                why @ (LogError::Moved { .. } | LogError::Unavailable(_) | LogError::Mismatch(_)),
            ) => DomainError::Unavailable(why.to_string()),
            TransactError::Log(LogError::Unknown(why)) => DomainError::OutcomeUnknown(why),
            other => DomainError::Store(other.into()),
        }
    }
}
