//! A recipe now or at any version, its versions, and what each changed.

use std::collections::BTreeSet;

use super::Snapshot;
use crate::domain::content::{Content, ContentDraft, Step};
use crate::domain::diff::{self, RecipeDiff};
use crate::domain::ids::{Basis, Instant, RecipeId, VersionNumber};
use crate::domain::pictures::Picture;
use crate::domain::slug::Slug;
use crate::domain::DomainError;
use crate::store::{Components, Datom, EntityId, Index};

/// A recipe as it is at the snapshot's basis.
#[derive(Debug, Clone, PartialEq)]
pub struct Recipe {
    pub id: RecipeId,
    pub slug: Slug,
    pub content: Content,
    pub author: Option<String>,
    pub created_at: Option<Instant>,
    pub updated_at: Option<Instant>,
    /// How many versions it has: the newest one's number.
    pub version_count: u32,
    pub retired: bool,
    /// The parent, and the parent's version that was forked.
    pub forked_from: Option<(RecipeId, VersionNumber)>,
    /// The parent's version last brought in, if any was.
    pub brought_in: Option<VersionNumber>,
    /// For a fork: of the changes it and its parent made differently, how
    /// many it kept its own version of when it last brought the parent's
    /// in.
    pub kept_own: u32,
    /// For a fork: whether its newest version has changes its parent lacks
    /// (`None` where no writer said: a fork saved before it was recorded).
    pub own_changes: Option<bool>,
    /// The cooks whose suggestions it took, by handle.
    pub contributors: Vec<String>,
}

impl Recipe {
    /// The parent, and its version this fork last agreed with: the one it
    /// forked, or the last it brought in. Where a merge of the parent's
    /// changes starts, and what "versions since" counts from.
    pub fn in_step_with(&self) -> Option<(RecipeId, VersionNumber)> {
        let (parent, forked) = self.forked_from?;
        Some((parent, self.brought_in.map_or(forked, |b| b.max(forked))))
    }

    /// The newest version's number.
    pub fn newest(&self) -> VersionNumber {
        VersionNumber::new(u64::from(self.version_count)).unwrap_or(VersionNumber::FIRST)
    }
}

/// One version: the transaction that made it.
#[derive(Debug, Clone, PartialEq)]
pub struct Version {
    pub number: VersionNumber,
    /// The transaction that made it; the recipe as of it is this version.
    pub basis: Basis,
    pub instant: Instant,
    pub author: Option<String>,
    pub note: Option<String>,
}

impl Snapshot {
    /// The recipe with `slug` as it is now.
    pub fn recipe(&self, slug: &Slug) -> Result<Recipe, DomainError> {
        let id = self.id_of(slug)?;
        self.recipe_by_id(id)
    }

    /// The recipe with `slug` as it is now, refusing a retired one.
    pub fn current(&self, slug: &Slug) -> Result<Recipe, DomainError> {
        let recipe = self.recipe(slug)?;
        if recipe.retired {
            return Err(DomainError::Retired {
                slug: slug.to_string(),
                title: recipe.content.title().to_owned(),
            });
        }
        Ok(recipe)
    }

    /// The recipe `id` as it is at this snapshot's basis.
    pub fn recipe_by_id(&self, id: RecipeId) -> Result<Recipe, DomainError> {
        let a = &self.attrs;
        let mut read = RecipeRead::new(id);
        let mut found = false;
        // Every attribute but the search terms, which would only be skipped
        // over: those installed before them, and those after (the picture's
        // in a store made before pictures, and any field added since).
        let before_terms = self.db.entity_attributes(id.entity(), 0, a.terms - 1);
        let after_terms = self
            .db
            .entity_attributes(id.entity(), a.terms + 1, EntityId::MAX);
        for datom in before_terms.chain(after_terms) {
            let Datom { a: attr, v, .. } = datom?;
            found = true;
            read.datom(self, attr, &v)?;
        }
        if !found {
            return Err(DomainError::NoSuchRecipe(format!("#{id}")));
        }
        read.finish(self)
    }

    /// The step `e`: its text, and the section it opens, if any.
    fn step(&self, e: EntityId) -> Result<Step, DomainError> {
        let a = &self.attrs;
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
            Ok((
                c,
                self.string(c, self.attrs.ingredient_line)?
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
            let step = Step {
                section: self.string(c, a.step_section)?,
                text: self.string(c, a.step_text)?.unwrap_or_default(),
            };
            Ok((c, step))
        })
    }

    /// The content of recipe `id` as version `basis` left it.
    pub fn content_at(&self, id: RecipeId, basis: Basis) -> Result<Content, DomainError> {
        Ok(self.as_of(basis).recipe_by_id(id)?.content)
    }

    /// Every version of recipe `id`, oldest first: each transaction that
    /// touched the recipe or any of its components, ever.
    pub fn versions(&self, id: RecipeId) -> Result<Vec<Version>, DomainError> {
        let history = self.db.history();
        let mut txs = BTreeSet::new();
        let mut components = BTreeSet::new();
        for datom in history.datoms(Index::Eavt, &Components::any().e(id.entity())) {
            let datom = datom?;
            txs.insert(datom.tx);
            if datom.a == self.attrs.ingredients || datom.a == self.attrs.steps {
                components.extend(datom.v.as_ref());
            }
        }
        // Components are made side by side, a version's at a time: one
        // range read over each run of close ids, keeping the components'.
        let ids: Vec<EntityId> = components.iter().copied().collect();
        for run in ids.chunk_by(|a, b| b - a < COMPONENT_RUN_GAP) {
            let (first, last) = (run[0], run[run.len() - 1]);
            for datom in history.entity_range(first, last) {
                let datom = datom?;
                if components.contains(&datom.e) {
                    txs.insert(datom.tx);
                }
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
                number: VersionNumber::at_index(i),
                basis: Basis::new(tx),
                instant: Instant::from_millis(self.db.tx_instant(tx)?.unwrap_or(0)),
                author,
                note: self.string(tx, self.attrs.tx_note)?,
            });
        }
        Ok(versions)
    }

    /// Version `number` of recipe `id`, from its `versions`, or the error
    /// that says how many it has.
    pub(crate) fn nth_version(
        slug: &Slug,
        versions: &[Version],
        number: VersionNumber,
    ) -> Result<Version, DomainError> {
        versions
            .get(number.index())
            .cloned()
            .ok_or_else(|| DomainError::NoSuchVersion {
                slug: slug.to_string(),
                version: number,
                count: versions.len(),
            })
    }

    /// Version `number` of the recipe with `slug`.
    pub fn version(
        &self,
        slug: &Slug,
        number: VersionNumber,
    ) -> Result<(Version, Content), DomainError> {
        let id = self.id_of(slug)?;
        let version = Snapshot::nth_version(slug, &self.versions(id)?, number)?;
        let content = self.content_at(id, version.basis)?;
        Ok((version, content))
    }

    /// Every version with a one-line account of what it changed from the
    /// one before (`title, yield, 2 ingredients`); the first is "created"
    /// (or "forked" for a fork).
    pub fn changes(&self, id: RecipeId) -> Result<Vec<(Version, String)>, DomainError> {
        let versions = self.versions(id)?;
        let all = 0..versions.len();
        self.changes_of(id, versions, all)
    }

    /// Up to `limit` versions before version `before` (all the newest when
    /// `None`), each with what it changed, oldest first; and how many
    /// versions there are. Only the versions shown (and the one before the
    /// first) are read and diffed, so a page of a long history costs what
    /// it shows.
    pub fn changes_page(
        &self,
        id: RecipeId,
        before: Option<VersionNumber>,
        limit: usize,
    ) -> Result<(Vec<(Version, String)>, usize), DomainError> {
        let versions = self.versions(id)?;
        let total = versions.len();
        let end = before.map_or(total, |b| (b.get() as usize).saturating_sub(1).min(total));
        let start = end.saturating_sub(limit);
        Ok((self.changes_of(id, versions, start..end)?, total))
    }

    /// What each of `versions[range]` changed from the version before it:
    /// the line its transaction stored (`:tx/change`, written by every edit
    /// and retirement), so a page of history reads one datom a version. A
    /// version written before the store had that attribute is diffed
    /// against the one before it, as it always was.
    fn changes_of(
        &self,
        id: RecipeId,
        mut versions: Vec<Version>,
        range: std::ops::Range<usize>,
    ) -> Result<Vec<(Version, String)>, DomainError> {
        let forked = self
            .db
            .value(id.entity(), self.attrs.forked_from)?
            .is_some();
        let bases: Vec<Basis> = versions.iter().map(|v| v.basis).collect();
        let mut diffed = DiffedContent::default();
        let mut out = Vec::with_capacity(range.len());
        let first = range.start;
        for (offset, version) in versions.drain(range).enumerate() {
            let what = match first + offset {
                0 if forked => FORKED.to_owned(),
                0 => CREATED.to_owned(),
                index => match self.string(version.basis.tx(), self.attrs.tx_change)? {
                    Some(stored) => stored,
                    None => diffed.change(self, id, bases[index - 1], version.basis)?,
                },
            };
            out.push((version, what));
        }
        Ok(out)
    }

    /// A fork against its parent: the diff from the parent's version it
    /// forked, and the diff from the parent as it is now. `None` for an
    /// original.
    pub fn compare_with_parent(
        &self,
        id: RecipeId,
    ) -> Result<Option<(RecipeDiff, RecipeDiff)>, DomainError> {
        let recipe = self.recipe_by_id(id)?;
        let Some((parent, version)) = recipe.forked_from else {
            return Ok(None);
        };
        let parent_versions = self.versions(parent)?;
        let forked = parent_versions.get(version.index()).ok_or_else(|| {
            DomainError::Invalid(format!(
                "recipe {id} forked a version its parent does not have"
            ))
        })?;
        let then = self.content_at(parent, forked.basis)?;
        let now = self.recipe_by_id(parent)?.content;
        Ok(Some((
            diff::recipes(&then, &recipe.content),
            diff::recipes(&now, &recipe.content),
        )))
    }
}

/// Component ids closer than this are read in one range (`versions`):
/// skipping the few entities between them costs less than a read of each
/// (the store keeps the history of sixteen neighbouring ids together).
const COMPONENT_RUN_GAP: EntityId = 16;

/// What the first version of an original says it did.
const CREATED: &str = "created";
/// What the first version of a fork says it did.
const FORKED: &str = "forked";
/// What a retirement says it did.
pub const RETIRED: &str = "retired";

/// The fallback for versions without a stored `:tx/change`: each version's
/// content read once, the newest kept for the next version's diff.
#[derive(Default)]
struct DiffedContent {
    last: Option<(Basis, Content)>,
}

impl DiffedContent {
    fn content(
        &mut self,
        view: &Snapshot,
        id: RecipeId,
        basis: Basis,
    ) -> Result<Content, DomainError> {
        match self.last.take() {
            Some((b, content)) if b == basis => Ok(content),
            _ => view.content_at(id, basis),
        }
    }

    /// What the version at `now` changed from the one at `before`.
    fn change(
        &mut self,
        view: &Snapshot,
        id: RecipeId,
        before: Basis,
        now: Basis,
    ) -> Result<String, DomainError> {
        let old = self.content(view, id, before)?;
        let new = self.content(view, id, now)?;
        let diff = diff::recipes(&old, &new);
        let what = if diff.is_empty() && view.as_of(now).is_retired(id)? {
            RETIRED.to_owned()
        } else {
            diff.summary()
        };
        self.last = Some((now, new));
        Ok(what)
    }
}

/// A recipe being read from its entity's datoms, one at a time: what
/// each says, and the components and the parts of its picture and its
/// fork until they are put together into a `Recipe` (`finish`), which is
/// made only then, with its content whole.
struct RecipeRead {
    id: RecipeId,
    slug: Slug,
    /// What the recipe says, until it is a `Content` (`finish`).
    content: ContentDraft,
    author: Option<String>,
    created_at: Option<Instant>,
    updated_at: Option<Instant>,
    version_count: u32,
    retired: bool,
    brought_in: Option<VersionNumber>,
    kept_own: u32,
    own_changes: Option<bool>,
    contributors: Vec<String>,
    ingredients: Vec<EntityId>,
    steps: Vec<EntityId>,
    forked_from: Option<RecipeId>,
    forked_version: VersionNumber,
    picture: Picture,
}

impl RecipeRead {
    fn new(id: RecipeId) -> RecipeRead {
        RecipeRead {
            id,
            // Replaced by the slug's datom, which every recipe has.
            slug: Slug::from_title(""),
            content: ContentDraft::default(),
            author: None,
            created_at: None,
            updated_at: None,
            version_count: 0,
            retired: false,
            brought_in: None,
            kept_own: 0,
            own_changes: None,
            contributors: Vec::new(),
            ingredients: Vec::new(),
            steps: Vec::new(),
            forked_from: None,
            forked_version: VersionNumber::FIRST,
            picture: Picture {
                hash: String::new(),
                width: 0,
                height: 0,
                alt: String::new(),
            },
        }
    }

    /// What the recipe's attribute `attr` says, `v`, read into it.
    fn datom(
        &mut self,
        snapshot: &Snapshot,
        attr: EntityId,
        v: &crate::store::Value,
    ) -> Result<(), DomainError> {
        let a = &snapshot.attrs;
        let c = &mut self.content;
        if let Some(field) = a.field(attr) {
            field.read(c, v);
            return Ok(());
        }
        let instant = |v: &crate::store::Value| v.as_instant().map(Instant::from_millis);
        let dimension = |v: &crate::store::Value| v.as_long().and_then(|n| u32::try_from(n).ok());
        let text = || v.as_str().map(str::to_owned);
        match attr {
            x if x == a.slug => {
                self.slug = Slug::stored(v.as_str().unwrap_or("")).map_err(DomainError::from)?
            }
            x if x == a.title => c.title = text().unwrap_or_default(),
            x if x == a.tags => c.tags.extend(text()),
            x if x == a.ingredients => self.ingredients.extend(v.as_ref()),
            x if x == a.steps => self.steps.extend(v.as_ref()),
            x if x == a.author => {
                self.author = v.as_ref().and_then(|u| snapshot.handle(u).ok().flatten())
            }
            x if x == a.created_at => self.created_at = instant(v),
            x if x == a.updated_at => self.updated_at = instant(v),
            x if x == a.version_count => self.version_count = stored_count(v),
            x if x == a.retired => self.retired = v.as_bool().unwrap_or(false),
            x if x == a.forked_from => self.forked_from = v.as_ref().map(RecipeId::new),
            x if x == a.forked_at_version => {
                self.forked_version = v
                    .as_long()
                    .and_then(VersionNumber::stored)
                    .unwrap_or(VersionNumber::FIRST)
            }
            x if x == a.merged_at_version => {
                self.brought_in = v.as_long().and_then(VersionNumber::stored)
            }
            x if x == a.kept_own => {
                self.kept_own = v.as_long().and_then(|n| u32::try_from(n).ok()).unwrap_or(0)
            }
            x if x == a.own_changes => self.own_changes = v.as_bool(),
            x if x == a.contributor => {
                if let Some(handle) = v.as_ref().and_then(|u| snapshot.handle(u).ok().flatten()) {
                    self.contributors.push(handle);
                }
            }
            x if x == a.picture => self.picture.hash = v.as_str().unwrap_or("").to_owned(),
            x if x == a.picture_alt => self.picture.alt = v.as_str().unwrap_or("").to_owned(),
            x if x == a.picture_width => self.picture.width = dimension(v).unwrap_or(0),
            x if x == a.picture_height => self.picture.height = dimension(v).unwrap_or(0),
            _ => {}
        }
        Ok(())
    }

    /// The recipe, with its picture, its fork, and its ingredients and
    /// steps read in their order.
    fn finish(self, snapshot: &Snapshot) -> Result<Recipe, DomainError> {
        let a = &snapshot.attrs;
        let mut content = self.content;
        if !self.picture.hash.is_empty() {
            content.picture = Some(self.picture);
        }
        content.ingredients =
            snapshot.components(&self.ingredients, a.ingredient_position, |e| {
                Ok(snapshot.string(e, a.ingredient_line)?.unwrap_or_default())
            })?;
        content.steps = snapshot.components(&self.steps, a.step_position, |e| snapshot.step(e))?;
        Ok(Recipe {
            id: self.id,
            slug: self.slug,
            // Not parsed again: it was when it was written (`Content::stored`).
            content: Content::stored(content),
            author: self.author,
            created_at: self.created_at,
            updated_at: self.updated_at,
            version_count: self.version_count,
            retired: self.retired,
            forked_from: self.forked_from.map(|p| (p, self.forked_version)),
            brought_in: self.brought_in,
            kept_own: self.kept_own,
            own_changes: self.own_changes,
            contributors: self.contributors,
        })
    }
}

/// A stored count (`:recipe/version-count`), which is never negative.
pub(super) fn stored_count(v: &crate::store::Value) -> u32 {
    v.as_long().and_then(|n| u32::try_from(n).ok()).unwrap_or(0)
}
