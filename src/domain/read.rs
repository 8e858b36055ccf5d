//! Reading recipes from one pinned database value.
//!
//! Every read here is a handful of index reads whose count depends on the
//! recipe (its components, its lineage, its forks) and never on the size of
//! the catalog: the lineage walk is one EAVT range read per ancestor, forks
//! come from VAET, the catalog pages through AVET from a cursor.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use super::attrs::Attrs;
use super::content::{Content, Minutes, Step};
use super::diff::{self, RecipeDiff};
use super::search;
use super::slug::Slug;
use super::{DomainError, MAX_LINEAGE};
use crate::store::{Components, Datom, Db, EntityId, Index, Value};

/// A pinned database value, read as recipes.
#[derive(Clone)]
pub struct View {
    db: Db,
    attrs: Attrs,
}

/// A recipe as it is at the view's basis.
#[derive(Debug, Clone, PartialEq)]
pub struct Recipe {
    pub id: EntityId,
    pub slug: Slug,
    pub content: Content,
    pub author: Option<String>,
    pub created_at: Option<i64>,
    pub updated_at: Option<i64>,
    pub version_count: i64,
    pub retired: bool,
    /// The parent, and the parent's version number that was forked.
    pub forked_from: Option<(EntityId, i64)>,
}

/// One version: the transaction that made it.
#[derive(Debug, Clone, PartialEq)]
pub struct Version {
    /// 1-based, per recipe.
    pub number: usize,
    pub tx: EntityId,
    pub instant: i64,
    pub author: Option<String>,
    pub note: Option<String>,
}

/// One step up a lineage: an ancestor, and which of its versions the recipe
/// below it forked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ancestor {
    pub id: EntityId,
    pub forked_version: i64,
}

/// A recipe in a fork tree, with its forks.
#[derive(Debug, Clone, PartialEq)]
pub struct ForkNode {
    pub id: EntityId,
    pub children: Vec<ForkNode>,
}

/// The catalog's orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sort {
    #[default]
    Title,
    /// Newest version first.
    Recent,
}

/// Which page of the catalog to read.
#[derive(Debug, Clone, Default)]
pub struct CatalogQuery {
    pub tag: Option<String>,
    pub sort: Sort,
    /// The id of the last recipe on the previous page.
    pub after: Option<EntityId>,
    pub limit: usize,
}

/// What a catalog line shows. The texts are shared with the store's
/// cached entity, not copied: a page of the catalog is many lines.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogEntry {
    pub id: EntityId,
    pub slug: Arc<str>,
    pub title: Arc<str>,
    pub summary: Option<Arc<str>>,
    pub tags: Vec<Arc<str>>,
    pub fork_count: usize,
    pub version_count: i64,
    pub updated_at: Option<i64>,
}

/// A page of the catalog and the cursor of the next one.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogPage {
    pub entries: Vec<CatalogEntry>,
    pub next: Option<EntityId>,
}

impl View {
    pub fn new(db: Db, attrs: Attrs) -> View {
        View { db, attrs }
    }

    pub fn db(&self) -> &Db {
        &self.db
    }

    pub fn attrs(&self) -> &Attrs {
        &self.attrs
    }

    /// The recipe with `slug`, if there is one (retired ones included).
    pub fn find(&self, slug: &Slug) -> Result<Option<EntityId>, DomainError> {
        Ok(self
            .db
            .entity_with(self.attrs.slug, &Value::from(slug.as_str()))?)
    }

    fn id_of(&self, slug: &Slug) -> Result<EntityId, DomainError> {
        self.find(slug)?
            .ok_or_else(|| DomainError::NoSuchRecipe(slug.to_string()))
    }

    /// The recipe with `slug` as it is now.
    pub fn recipe(&self, slug: &Slug) -> Result<Recipe, DomainError> {
        let id = self.id_of(slug)?;
        self.recipe_by_id(id)
    }

    /// The recipe `id` as it is at this view's basis.
    pub fn recipe_by_id(&self, id: EntityId) -> Result<Recipe, DomainError> {
        let a = &self.attrs;
        let mut recipe = Recipe {
            id,
            slug: Slug::from_title(""),
            content: Content::default(),
            author: None,
            created_at: None,
            updated_at: None,
            version_count: 0,
            retired: false,
            forked_from: None,
        };
        let mut ingredients = Vec::new();
        let mut steps = Vec::new();
        let mut forked_from = None;
        let mut forked_version = 0;
        let mut found = false;
        // Every attribute but the search terms, which are installed last and
        // would only be skipped over.
        for datom in self.db.entity_attributes(id, 0, a.terms - 1) {
            let Datom { a: attr, v, .. } = datom?;
            found = true;
            let c = &mut recipe.content;
            let text = || v.as_str().map(str::to_owned);
            let minutes = || v.as_long().and_then(|m| Minutes::new(m).ok());
            match attr {
                x if x == a.slug => {
                    recipe.slug =
                        Slug::parse(v.as_str().unwrap_or("")).map_err(DomainError::from)?
                }
                x if x == a.title => c.title = text().unwrap_or_default(),
                x if x == a.summary => c.summary = text(),
                x if x == a.notes => c.notes = text(),
                x if x == a.cuisine => c.cuisine = text(),
                x if x == a.category => c.category = text(),
                x if x == a.image => c.image = text(),
                x if x == a.yield_text => c.recipe_yield.text = text(),
                x if x == a.servings => c.recipe_yield.servings = v.as_long(),
                x if x == a.prep => c.prep = minutes(),
                x if x == a.cook => c.cook = minutes(),
                x if x == a.total => c.total = minutes(),
                x if x == a.tags => c.tags.extend(text()),
                x if x == a.ingredients => ingredients.extend(v.as_ref()),
                x if x == a.steps => steps.extend(v.as_ref()),
                x if x == a.author => {
                    recipe.author = v.as_ref().and_then(|u| self.handle(u).ok().flatten())
                }
                x if x == a.created_at => recipe.created_at = v.as_instant(),
                x if x == a.updated_at => recipe.updated_at = v.as_instant(),
                x if x == a.version_count => recipe.version_count = v.as_long().unwrap_or(0),
                x if x == a.retired => recipe.retired = v.as_bool().unwrap_or(false),
                x if x == a.forked_from => forked_from = v.as_ref(),
                x if x == a.forked_at_version => forked_version = v.as_long().unwrap_or(0),
                _ => {}
            }
        }
        if !found {
            return Err(DomainError::NoSuchRecipe(format!("#{id}")));
        }
        recipe.forked_from = forked_from.map(|p| (p, forked_version));
        recipe.content.ingredients = self.components(&ingredients, a.ingredient_position, |e| {
            Ok(self
                .db
                .value(e, a.ingredient_line)?
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default())
        })?;
        recipe.content.steps = self.components(&steps, a.step_position, |e| {
            let mut step = Step {
                section: None,
                text: String::new(),
            };
            for datom in self.db.entity_attributes(e, a.step_text, a.step_section) {
                let datom = datom?;
                let text = datom.v.as_str().map(str::to_owned);
                if datom.a == a.step_text {
                    step.text = text.unwrap_or_default();
                } else {
                    step.section = text;
                }
            }
            Ok(step)
        })?;
        Ok(recipe)
    }

    /// Reads each component with `read`, in the order of its position.
    fn components<T>(
        &self,
        ids: &[EntityId],
        position: EntityId,
        read: impl Fn(EntityId) -> Result<T, DomainError>,
    ) -> Result<Vec<T>, DomainError> {
        let mut positioned = Vec::with_capacity(ids.len());
        for &id in ids {
            let at = self
                .db
                .value(id, position)?
                .and_then(|v| v.as_long())
                .unwrap_or(i64::MAX);
            positioned.push((at, id, read(id)?));
        }
        positioned.sort_by_key(|(at, id, _)| (*at, *id));
        Ok(positioned.into_iter().map(|(_, _, t)| t).collect())
    }

    /// The ingredient components of `e` with their lines, in order.
    pub(crate) fn ingredient_components(
        &self,
        e: EntityId,
    ) -> Result<Vec<(EntityId, String)>, DomainError> {
        let ids = self.refs(e, self.attrs.ingredients)?;
        self.components(&ids, self.attrs.ingredient_position, |c| {
            let line = self.db.value(c, self.attrs.ingredient_line)?;
            Ok((
                c,
                line.and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
            ))
        })
    }

    /// The step components of `e`, in order.
    pub(crate) fn step_components(
        &self,
        e: EntityId,
    ) -> Result<Vec<(EntityId, Step)>, DomainError> {
        let ids = self.refs(e, self.attrs.steps)?;
        let a = &self.attrs;
        self.components(&ids, a.step_position, |c| {
            let text = self
                .db
                .value(c, a.step_text)?
                .and_then(|v| v.as_str().map(str::to_owned));
            let section = self
                .db
                .value(c, a.step_section)?
                .and_then(|v| v.as_str().map(str::to_owned));
            Ok((
                c,
                Step {
                    section,
                    text: text.unwrap_or_default(),
                },
            ))
        })
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

    fn handle(&self, user: EntityId) -> Result<Option<String>, DomainError> {
        Ok(self
            .db
            .value(user, self.attrs.user_handle)?
            .and_then(|v| v.as_str().map(str::to_owned)))
    }

    /// The slug and title of recipe `id`, in one read (the two attributes
    /// are installed side by side): what a link to a recipe shows.
    pub fn slug_and_title(&self, id: EntityId) -> Result<(String, String), DomainError> {
        let (slug_attr, title_attr) = (self.attrs.slug, self.attrs.title);
        debug_assert_eq!(title_attr, slug_attr + 1, "slug and title are adjacent");
        let (mut slug, mut title) = (String::new(), String::new());
        self.db
            .visit_attributes(id, slug_attr, title_attr, |datom| {
                let text = datom.v.as_str().unwrap_or_default().to_owned();
                if datom.a == slug_attr {
                    slug = text;
                } else {
                    title = text;
                }
            })?;
        Ok((slug, title))
    }

    /// The slug of recipe `id`.
    pub fn slug_of(&self, id: EntityId) -> Result<String, DomainError> {
        Ok(self
            .db
            .value(id, self.attrs.slug)?
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default())
    }

    /// The title of recipe `id`.
    pub fn title_of(&self, id: EntityId) -> Result<String, DomainError> {
        Ok(self
            .db
            .value(id, self.attrs.title)?
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default())
    }

    /// The content of recipe `id` just after transaction `tx`.
    pub fn content_at(&self, id: EntityId, tx: EntityId) -> Result<Content, DomainError> {
        let then = View::new(self.db.as_of(tx), self.attrs);
        Ok(then.recipe_by_id(id)?.content)
    }

    /// Every version of recipe `id`, oldest first: each transaction that
    /// touched the recipe or any of its components, ever.
    pub fn versions(&self, id: EntityId) -> Result<Vec<Version>, DomainError> {
        let history = self.db.history();
        let mut txs = BTreeSet::new();
        let mut components = BTreeSet::new();
        for datom in history.datoms(Index::Eavt, &Components::any().e(id)) {
            let datom = datom?;
            txs.insert(datom.tx);
            if datom.a == self.attrs.ingredients || datom.a == self.attrs.steps {
                components.extend(datom.v.as_ref());
            }
        }
        for component in components {
            for datom in history.datoms(Index::Eavt, &Components::any().e(component)) {
                txs.insert(datom?.tx);
            }
        }
        let mut versions = Vec::with_capacity(txs.len());
        for (i, tx) in txs.into_iter().enumerate() {
            let author = match self
                .db
                .value(tx, self.attrs.tx_author)?
                .and_then(|v| v.as_ref())
            {
                Some(user) => self.handle(user)?,
                None => None,
            };
            versions.push(Version {
                number: i + 1,
                tx,
                instant: self.db.tx_instant(tx)?.unwrap_or(0),
                author,
                note: self
                    .db
                    .value(tx, self.attrs.tx_note)?
                    .and_then(|v| v.as_str().map(str::to_owned)),
            });
        }
        Ok(versions)
    }

    /// Version `number` (1-based) of the recipe with `slug`.
    pub fn version(&self, slug: &Slug, number: usize) -> Result<(Version, Content), DomainError> {
        let id = self.id_of(slug)?;
        let versions = self.versions(id)?;
        let count = versions.len();
        let version = versions
            .into_iter()
            .nth(number.wrapping_sub(1))
            .ok_or_else(|| DomainError::NoSuchVersion {
                slug: slug.to_string(),
                version: number,
                count,
            })?;
        let content = self.content_at(id, version.tx)?;
        Ok((version, content))
    }

    /// Every version with a one-line account of what it changed from the
    /// one before (`title, yield, 2 ingredients`); the first is "created"
    /// (or "forked" for a fork).
    pub fn changes(&self, id: EntityId) -> Result<Vec<(Version, String)>, DomainError> {
        let versions = self.versions(id)?;
        let forked = self.db.value(id, self.attrs.forked_from)?.is_some();
        let mut out = Vec::with_capacity(versions.len());
        let mut previous: Option<Content> = None;
        for version in versions {
            let content = self.content_at(id, version.tx)?;
            let what = match &previous {
                None if forked => "forked".to_owned(),
                None => "created".to_owned(),
                Some(before) => {
                    let retired_now =
                        View::new(self.db.as_of(version.tx), self.attrs).is_retired(id)?;
                    let diff = diff::recipes(before, &content);
                    if diff.is_empty() && retired_now {
                        "retired".to_owned()
                    } else {
                        diff.summary()
                    }
                }
            };
            previous = Some(content);
            out.push((version, what));
        }
        Ok(out)
    }

    /// A fork against its parent: the diff from the parent's version it
    /// forked, and the diff from the parent as it is now. `None` for an
    /// original.
    pub fn compare_with_parent(
        &self,
        id: EntityId,
    ) -> Result<Option<(RecipeDiff, RecipeDiff)>, DomainError> {
        let recipe = self.recipe_by_id(id)?;
        let Some((parent, version)) = recipe.forked_from else {
            return Ok(None);
        };
        let parent_versions = self.versions(parent)?;
        let forked = parent_versions
            .get((version as usize).wrapping_sub(1))
            .ok_or_else(|| {
                DomainError::Invalid(format!(
                    "recipe {id} forked a version its parent does not have"
                ))
            })?;
        let then = self.content_at(parent, forked.tx)?;
        let now = self.recipe_by_id(parent)?.content;
        Ok(Some((
            diff::recipes(&then, &recipe.content),
            diff::recipes(&now, &recipe.content),
        )))
    }

    /// The lineage of recipe `id`: its parent, the parent's parent, and so
    /// on to the original, each with the version of it that was forked.
    ///
    /// The hand-written walk: one EAVT range read per step, over
    /// `:recipe/forked-from` and `:recipe/forked-at-version` (installed side
    /// by side for this). Bounded by `MAX_LINEAGE`; a cycle is an error.
    pub fn lineage(&self, id: EntityId) -> Result<Vec<Ancestor>, DomainError> {
        let (from, version) = (self.attrs.forked_from, self.attrs.forked_at_version);
        debug_assert_eq!(version, from + 1, "the fork attributes are adjacent");
        let mut out: Vec<Ancestor> = Vec::new();
        let mut seen: HashSet<EntityId> = HashSet::new();
        let mut at = id;
        loop {
            let mut parent = None;
            let mut forked_version = 0;
            for datom in self.db.entity_attributes(at, from, version) {
                let datom = datom?;
                if datom.a == from {
                    parent = datom.v.as_ref();
                } else {
                    forked_version = datom.v.as_long().unwrap_or(0);
                }
            }
            let Some(parent) = parent else {
                return Ok(out);
            };
            // A short lineage is checked by scanning; a long one by a set.
            let repeated = if out.len() < 32 {
                parent == id || out.iter().any(|a| a.id == parent)
            } else {
                if seen.is_empty() {
                    seen.insert(id);
                    seen.extend(out.iter().map(|a| a.id));
                }
                !seen.insert(parent)
            };
            if repeated {
                return Err(DomainError::LineageCycle(id));
            }
            if out.len() >= MAX_LINEAGE {
                return Err(DomainError::LineageTooDeep(id));
            }
            out.push(Ancestor {
                id: parent,
                forked_version,
            });
            at = parent;
        }
    }

    /// The recipes forked directly from `id`, oldest first (ids grow with
    /// time, and the store lists referrers in id order).
    pub fn forks(&self, id: EntityId) -> Result<Vec<EntityId>, DomainError> {
        Ok(self.db.referrers(self.attrs.forked_from, id)?.to_vec())
    }

    /// The family below `id`: forks, their forks, and so on, at most `limit`
    /// recipes in all (breadth first), so a huge family stays a bounded read.
    pub fn fork_tree(&self, id: EntityId, limit: usize) -> Result<ForkNode, DomainError> {
        let mut budget = limit;
        let mut seen = HashSet::from([id]);
        self.fork_subtree(id, &mut budget, &mut seen, 0)
    }

    fn fork_subtree(
        &self,
        id: EntityId,
        budget: &mut usize,
        seen: &mut HashSet<EntityId>,
        depth: usize,
    ) -> Result<ForkNode, DomainError> {
        let mut node = ForkNode {
            id,
            children: Vec::new(),
        };
        if depth >= MAX_LINEAGE {
            return Ok(node);
        }
        for child in self.forks(id)? {
            if *budget == 0 {
                break;
            }
            if seen.insert(child) {
                *budget -= 1;
                node.children
                    .push(self.fork_subtree(child, budget, seen, depth + 1)?);
            }
        }
        Ok(node)
    }

    /// The catalog line of recipe `id`.
    pub fn catalog_entry(&self, id: EntityId) -> Result<CatalogEntry, DomainError> {
        Ok(self.catalog_line(id)?.0)
    }

    /// The catalog line of recipe `id`, and whether it is retired: one read
    /// of the attributes from the slug to `:recipe/retired`, installed in
    /// that order so that a catalog page reads each recipe once.
    fn catalog_line(&self, id: EntityId) -> Result<(CatalogEntry, bool), DomainError> {
        let a = &self.attrs;
        debug_assert!(a.slug < a.updated_at && a.version_count < a.retired);
        let mut retired = false;
        let mut entry = CatalogEntry {
            id,
            slug: Arc::from(""),
            title: Arc::from(""),
            summary: None,
            tags: Vec::new(),
            fork_count: 0,
            version_count: 0,
            updated_at: None,
        };
        self.db.visit_attributes(id, a.slug, a.retired, |datom| {
            let v = &datom.v;
            match datom.a {
                x if x == a.slug => entry.slug = v.as_shared_str().cloned().unwrap_or_default(),
                x if x == a.title => entry.title = v.as_shared_str().cloned().unwrap_or_default(),
                x if x == a.summary => entry.summary = v.as_shared_str().cloned(),
                x if x == a.tags => entry.tags.extend(v.as_shared_str().cloned()),
                x if x == a.version_count => entry.version_count = v.as_long().unwrap_or(0),
                x if x == a.updated_at => entry.updated_at = v.as_instant(),
                x if x == a.retired => retired = v.as_bool().unwrap_or(false),
                _ => {}
            }
        })?;
        entry.fork_count = self.db.referrers(a.forked_from, id)?.len();
        Ok((entry, retired))
    }

    fn is_retired(&self, id: EntityId) -> Result<bool, DomainError> {
        Ok(self
            .db
            .value(id, self.attrs.retired)?
            .and_then(|v| v.as_bool())
            .unwrap_or(false))
    }

    /// A page of the catalog: recipes that are not retired, sorted, from
    /// after the cursor, with the cursor of the next page.
    pub fn catalog(&self, query: &CatalogQuery) -> Result<CatalogPage, DomainError> {
        let limit = query.limit.clamp(1, 500);
        let (key_attr, reverse) = match query.sort {
            Sort::Title => (self.attrs.title, false),
            Sort::Recent => (self.attrs.updated_at, true),
        };
        let mut entries = Vec::with_capacity(limit + 1);
        match &query.tag {
            None => {
                let cursor = match query.after {
                    Some(after) => {
                        let key = self
                            .db
                            .value(after, key_attr)?
                            .ok_or_else(|| DomainError::BadCursor(after.to_string()))?;
                        Some(Components::any().a(key_attr).v(key).e(after))
                    }
                    None => None,
                };
                let within = Components::any().a(key_attr);
                for datom in self
                    .db
                    .datoms_range(Index::Avet, &within, cursor.as_ref(), reverse)
                {
                    let (entry, retired) = self.catalog_line(datom?.e)?;
                    if !retired {
                        entries.push(entry);
                        if entries.len() > limit {
                            break;
                        }
                    }
                }
            }
            Some(tag) => {
                // A tag's recipes are few next to the catalog: read them all
                // through AVET and sort them here.
                let mut keyed = Vec::new();
                for datom in self.db.datoms(
                    Index::Avet,
                    &Components::any().a(self.attrs.tags).v(tag.as_str()),
                ) {
                    let id = datom?.e;
                    if !self.is_retired(id)? {
                        let key = self.db.value(id, key_attr)?;
                        keyed.push((key, id));
                    }
                }
                keyed.sort();
                if reverse {
                    keyed.reverse();
                }
                let start = match query.after {
                    Some(after) => {
                        keyed
                            .iter()
                            .position(|(_, id)| *id == after)
                            .ok_or_else(|| DomainError::BadCursor(after.to_string()))?
                            + 1
                    }
                    None => 0,
                };
                for (_, id) in keyed.into_iter().skip(start).take(limit + 1) {
                    entries.push(self.catalog_entry(id)?);
                }
            }
        }
        let next = (entries.len() > limit).then(|| entries[limit - 1].id);
        entries.truncate(limit);
        Ok(CatalogPage { entries, next })
    }

    /// Every tag in use, with how many recipes carry it.
    pub fn tags(&self) -> Result<Vec<(String, usize)>, DomainError> {
        let mut out: Vec<(String, usize)> = Vec::new();
        for datom in self
            .db
            .datoms(Index::Avet, &Components::any().a(self.attrs.tags))
        {
            let tag = datom?.v.as_str().unwrap_or_default().to_owned();
            match out.last_mut() {
                Some((last, n)) if *last == tag => *n += 1,
                _ => out.push((tag, 1)),
            }
        }
        Ok(out)
    }

    /// Recipes matching every word of `text` (the last one as a prefix, so
    /// results come as a person types), not retired, by title.
    pub fn search(&self, text: &str, limit: usize) -> Result<Vec<CatalogEntry>, DomainError> {
        let words: Vec<String> = search::words(text).collect();
        let Some((last, whole)) = words.split_last() else {
            return Ok(Vec::new());
        };
        let mut matches: Option<BTreeSet<EntityId>> = None;
        for word in whole {
            let ids: BTreeSet<EntityId> = self
                .db
                .datoms(
                    Index::Avet,
                    &Components::any().a(self.attrs.terms).v(word.as_str()),
                )
                .map(|d| d.map(|d| d.e))
                .collect::<Result<_, _>>()?;
            matches = Some(match matches {
                Some(m) => m.intersection(&ids).copied().collect(),
                None => ids,
            });
        }
        let prefixed: BTreeSet<EntityId> = self
            .db
            .text_prefix(self.attrs.terms, last)
            .map(|d| d.map(|d| d.e))
            .collect::<Result<_, _>>()?;
        let found = match matches {
            Some(m) => m.intersection(&prefixed).copied().collect(),
            None => prefixed,
        };
        let mut entries = Vec::new();
        for id in found {
            if !self.is_retired(id)? {
                entries.push(self.catalog_entry(id)?);
            }
        }
        entries.sort_by(|a, b| (&a.title, a.id).cmp(&(&b.title, b.id)));
        entries.truncate(limit);
        Ok(entries)
    }
}
