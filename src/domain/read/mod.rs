//! Reading recipes from one pinned database value: a `Snapshot`.
//!
//! Every read here is a handful of index reads whose count depends on the
//! recipe (its components, its lineage, its forks) and never on the size of
//! the catalog: the lineage walk is one EAVT range read per ancestor, forks
//! come from VAET, the catalog pages through AVET from a cursor.
//!
//! - `recipe`: a recipe now or at a version, its versions and what each changed
//! - `lineage`: ancestors, forks and the fork tree
//! - `catalog`: catalog pages, catalog lines and tags
//! - `merging`: a fork against its parent's newer versions
//! - `suggestions`: forks' changes proposed to their parents

mod catalog;
mod lineage;
mod merging;
mod read_set;
mod recipe;
mod suggestions;

pub use catalog::{CatalogEntry, CatalogPage, CatalogQuery, Sort, MAX_SORTED_TAG};
pub use lineage::{Ancestor, ForkNode, ForkTree, RemoteFork};
pub use merging::{Agreed, Agreement, BroughtIn, MergeBase, ParentChanges};
pub use read_set::ReadSet;
pub use recipe::{Recipe, Version, RETIRED};
pub use suggestions::{Suggestion, SuggestionMerge, SuggestionState, Taken};

use super::attrs::Attrs;
use super::ids::{Basis, Instant, RecipeId};
use super::slug::Slug;
use super::DomainError;
use crate::store::{Components, Db, EntityId, Index, Value};

/// One database value, pinned at a basis, read as recipes. A write that
/// lands after it was taken is invisible to it; it counts its own index
/// reads (for the Server-Timing header and the benches).
#[derive(Clone)]
pub struct Snapshot {
    db: Db,
    /// The domain's attribute ids, for the reads here and the writes
    /// decided on this value.
    pub(in crate::domain) attrs: Attrs,
}

impl Snapshot {
    pub(crate) fn new(db: Db, attrs: Attrs) -> Snapshot {
        Snapshot {
            db: db.with_own_read_count(),
            attrs,
        }
    }

    /// The recipes a transaction after `since` (through this snapshot's
    /// basis) made a version of or retired: each version sets the count,
    /// so the log names every recipe that changed, and nothing else.
    pub(crate) fn changed_since(
        &self,
        since: Basis,
    ) -> Result<std::collections::BTreeSet<RecipeId>, DomainError> {
        let mut changed = std::collections::BTreeSet::new();
        let wanted = [self.attrs.version_count, self.attrs.retired];
        for datom in self.db.log(since.tx() + 1, self.db.basis()) {
            let datom = datom?;
            if wanted.contains(&datom.a) {
                changed.insert(RecipeId::new(datom.e));
            }
        }
        Ok(changed)
    }

    /// Every recipe, retired ones included, in title order: one AVET read.
    pub(crate) fn every_recipe(&self) -> impl Iterator<Item = Result<RecipeId, DomainError>> + '_ {
        self.db
            .datoms_range(
                Index::Avet,
                &Components::any().a(self.attrs.title),
                None,
                false,
            )
            .map(|datom| Ok(RecipeId::new(datom?.e)))
    }

    /// How many recipes there are, retired ones included.
    pub(crate) fn recipe_count(&self) -> usize {
        self.db
            .ordered_len(self.attrs.title)
            .unwrap_or_else(|| self.every_recipe().count())
    }

    /// Marks what this (witnessed) snapshot read as depending on its whole
    /// basis: a page built on something beside the store, made at this
    /// basis (search results), is stale after any write.
    pub(crate) fn depend_on_basis(&self) {
        self.db.witness_range();
    }

    /// The same recipes as they were just after `basis`.
    pub(crate) fn as_of(&self, basis: Basis) -> Snapshot {
        Snapshot {
            db: self.db.as_of(basis.tx()),
            attrs: self.attrs,
        }
    }

    pub(crate) fn db(&self) -> &Db {
        &self.db
    }

    /// The transaction this snapshot reads just after.
    pub fn basis(&self) -> Basis {
        Basis::new(self.db.basis())
    }

    /// When the basis transaction was made: when anything last changed.
    pub fn modified(&self) -> Result<Option<Instant>, DomainError> {
        Ok(self
            .db
            .tx_instant(self.db.basis())?
            .map(Instant::from_millis))
    }

    /// Index reads made through this snapshot so far.
    pub fn reads_so_far(&self) -> u64 {
        self.db.reads_so_far()
    }

    /// The recipe with `slug`, if there is one (retired ones included).
    pub fn find(&self, slug: &Slug) -> Result<Option<RecipeId>, DomainError> {
        Ok(self
            .db
            .entity_with(self.attrs.slug, &Value::from(slug.as_str()))?
            .map(RecipeId::new))
    }

    /// The slugs that are `stem` followed by a number from 1 up (and
    /// whatever follows the number: `dal-2`, `dal-12`, `dal-2-ann`), in
    /// slug order: one range read, which never reads a slug where a word
    /// follows the stem (`dal-ann`, the forks of `dal`).
    pub(crate) fn numbered_slugs(&self, stem: &str) -> Result<Vec<String>, DomainError> {
        let (from, through) = (format!("{stem}1"), format!("{stem}9"));
        self.db
            .text_between(self.attrs.slug, &from, &through)
            .map(|datom| {
                let datom = datom?;
                Ok(datom.v.as_str().unwrap_or_default().to_owned())
            })
            .collect()
    }

    /// Whether any version of any recipe, at this basis, ever named the
    /// picture `hash` (a version since replaced or retired included: its
    /// history shows it). One AVET seek, in history.
    pub(crate) fn names_picture(&self, hash: &str) -> Result<bool, DomainError> {
        let history = self.db.history();
        let mut named = history.datoms(
            Index::Avet,
            &Components::any().a(self.attrs.picture).v(Value::from(hash)),
        );
        Ok(named.next().transpose()?.is_some())
    }

    fn id_of(&self, slug: &Slug) -> Result<RecipeId, DomainError> {
        self.find(slug)?
            .ok_or_else(|| DomainError::NoSuchRecipe(slug.to_string()))
    }

    fn refs(&self, e: EntityId, attr: EntityId) -> Result<Vec<EntityId>, DomainError> {
        Ok(self
            .db
            .values(e, attr)?
            .iter()
            .filter_map(Value::as_ref)
            .collect())
    }

    /// The string values of `e`'s `attr`.
    pub(crate) fn strings(&self, e: EntityId, attr: EntityId) -> Result<Vec<String>, DomainError> {
        Ok(self
            .db
            .values(e, attr)?
            .into_iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect())
    }

    /// The string value of `e`'s cardinality-one `attr`.
    pub(in crate::domain) fn string(
        &self,
        e: EntityId,
        attr: EntityId,
    ) -> Result<Option<String>, DomainError> {
        Ok(self
            .db
            .value(e, attr)?
            .and_then(|v| v.as_str().map(str::to_owned)))
    }

    /// The display name of the cook with `handle` (their handle if they
    /// gave none), or `None` if no cook has it.
    pub fn cook_name(&self, handle: &Slug) -> Result<Option<String>, DomainError> {
        let Some(user) = self
            .db
            .entity_with(self.attrs.user_handle, &Value::from(handle.as_str()))?
        else {
            return Ok(None);
        };
        let name = self.string(user, self.attrs.user_name)?;
        Ok(Some(name.unwrap_or_else(|| handle.to_string())))
    }

    /// The recipes whose author is the cook with `handle`, oldest first
    /// (from VAET: one read whatever the catalog's size).
    pub(crate) fn written_by(&self, handle: &Slug) -> Result<Vec<RecipeId>, DomainError> {
        let Some(user) = self
            .db
            .entity_with(self.attrs.user_handle, &Value::from(handle.as_str()))?
        else {
            return Ok(Vec::new());
        };
        Ok(self
            .db
            .referrers(self.attrs.author, user)?
            .iter()
            .map(|&e| RecipeId::new(e))
            .collect())
    }

    /// The cook with `handle`, if there is one.
    fn user(&self, handle: &Slug) -> Result<Option<EntityId>, DomainError> {
        Ok(self
            .db
            .entity_with(self.attrs.user_handle, &Value::from(handle.as_str()))?)
    }

    fn handle(&self, user: EntityId) -> Result<Option<String>, DomainError> {
        self.string(user, self.attrs.user_handle)
    }

    /// The slug of the recipe that transaction `tx` gave a version to
    /// (every recipe write counts its versions), or brought in step with
    /// its parent without one (an agreement), if any: one read of the
    /// transaction's datoms.
    pub(crate) fn recipe_versioned_in(&self, tx: EntityId) -> Result<Option<String>, DomainError> {
        for datom in self.db.log(tx, tx) {
            let datom = datom?;
            if datom.added && datom.a == self.attrs.version_count {
                return self.string(datom.e, self.attrs.slug);
            }
            // An agreement gives the fork no version; it is the fork's.
            if let (true, true, Some(fork)) = (
                datom.added,
                datom.a == self.attrs.agreement_fork,
                datom.v.as_ref(),
            ) {
                return self.string(fork, self.attrs.slug);
            }
        }
        Ok(None)
    }

    /// The recipes kept here from other sites (the parents of forks across
    /// sites): one AEVT read of who wrote them there, empty on a site
    /// that forked nothing from elsewhere.
    pub(crate) fn kept_from_elsewhere(&self) -> Result<Vec<RecipeId>, DomainError> {
        self.db
            .datoms(Index::Aevt, &Components::any().a(self.attrs.remote_author))
            .map(|datom| Ok(RecipeId::new(datom?.e)))
            .collect()
    }

    /// How many recipes this site has of its own: `recipe_count` without
    /// those kept from elsewhere.
    pub fn own_recipe_count(&self) -> Result<usize, DomainError> {
        let kept = self.kept_from_elsewhere()?.len();
        Ok(self.recipe_count().saturating_sub(kept))
    }

    /// Whether recipe `id` is kept here from another site (the parent of
    /// a fork across sites): named by its address there, it is listed
    /// nowhere here.
    pub(crate) fn is_kept_from_elsewhere(&self, id: RecipeId) -> Result<bool, DomainError> {
        Ok(self
            .db
            .value(id.entity(), self.attrs.slug)?
            .and_then(|v| v.as_str().map(crate::domain::slug::is_elsewhere))
            .unwrap_or(false))
    }

    pub(crate) fn is_retired(&self, id: RecipeId) -> Result<bool, DomainError> {
        Ok(self
            .db
            .value(id.entity(), self.attrs.retired)?
            .and_then(|v| v.as_bool())
            .unwrap_or(false))
    }
}
