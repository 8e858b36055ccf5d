//! The catalog: pages of recipe lines, in title or recent order, all or by
//! tag, from a keyset cursor; and the tags in use.

use std::sync::Arc;

use super::recipe::stored_count;
use super::Snapshot;
use crate::domain::ids::{Instant, RecipeId};
use crate::domain::DomainError;
use crate::store::{Components, Datom, EntityId, Index, StorageError, Value};

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
    /// The last recipe on the previous page.
    pub after: Option<RecipeId>,
    pub limit: usize,
}

/// What a catalog line shows. The texts are shared with the store's
/// cached entity, not copied: a page of the catalog is many lines.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogEntry {
    pub id: RecipeId,
    pub slug: Arc<str>,
    pub title: Arc<str>,
    pub summary: Option<Arc<str>>,
    pub tags: Vec<Arc<str>>,
    pub fork_count: usize,
    pub version_count: u32,
    pub updated_at: Option<Instant>,
}

/// How a catalog line reads its recipe.
#[derive(Debug, Clone, Copy)]
enum Read {
    /// Through the entity cache, loading the recipe into it: a line that
    /// stands for a recipe the reader is about to see more of.
    Whole,
    /// From the entity cache if it holds the recipe, otherwise from its
    /// datoms (`Db::visit_attributes_in_passing`): one of a page of lines
    /// read after a range read of an index, which ties the page to every
    /// write already.
    InPassing,
}

/// A page of the catalog and the cursor of the next one.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogPage {
    pub entries: Vec<CatalogEntry>,
    pub next: Option<RecipeId>,
    /// Whether the entries are in the order recipes were tagged, not the
    /// sort asked for: a tag with more than `MAX_SORTED_TAG` recipes.
    pub unsorted: bool,
}

/// The most recipes of one tag that a tag page sorts; a tag with more is
/// listed in the order its recipes were created, a page at a time from a
/// cursor, so a tag page's work is bounded whatever the tag.
pub const MAX_SORTED_TAG: usize = 2_000;

impl Snapshot {
    /// The slug and title of recipe `id`, in one read (the two attributes
    /// are installed side by side): what a link to a recipe shows.
    pub fn slug_and_title(&self, id: RecipeId) -> Result<(String, String), DomainError> {
        let (slug_attr, title_attr) = (self.attrs.slug, self.attrs.title);
        // Adjacent, as `Attrs::resolve` checked: the range holds nothing else.
        let (mut slug, mut title) = (String::new(), String::new());
        self.db
            .visit_attributes(id.entity(), slug_attr, title_attr, |datom| {
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
    pub fn slug_of(&self, id: RecipeId) -> Result<String, DomainError> {
        Ok(self
            .string(id.entity(), self.attrs.slug)?
            .unwrap_or_default())
    }

    /// The handle of recipe `id`'s author, if it has one: two attribute
    /// reads, not the recipe's.
    pub fn author_of(&self, id: RecipeId) -> Result<Option<String>, DomainError> {
        match self
            .db
            .value(id.entity(), self.attrs.author)?
            .and_then(|v| v.as_ref())
        {
            Some(user) => self.handle(user),
            None => Ok(None),
        }
    }

    /// The title of recipe `id`.
    pub fn title_of(&self, id: RecipeId) -> Result<String, DomainError> {
        Ok(self
            .string(id.entity(), self.attrs.title)?
            .unwrap_or_default())
    }

    /// The catalog line of recipe `id`.
    pub fn catalog_entry(&self, id: RecipeId) -> Result<CatalogEntry, DomainError> {
        Ok(self.catalog_line(id, Read::Whole)?.0)
    }

    /// The catalog line of recipe `id`, and whether it is retired: one read
    /// of the attributes from the slug to `:recipe/retired`, installed in
    /// that order so that a catalog page reads each recipe once; `read`
    /// says whether the recipe is loaded into the entity cache to do it.
    fn catalog_line(&self, id: RecipeId, read: Read) -> Result<(CatalogEntry, bool), DomainError> {
        let a = &self.attrs;
        // Every attribute of the line is in the range (`Attrs::resolve`).
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
        let visit = |datom: &Datom| {
            let v = &datom.v;
            match datom.a {
                x if x == a.slug => entry.slug = v.as_shared_str().cloned().unwrap_or_default(),
                x if x == a.title => entry.title = v.as_shared_str().cloned().unwrap_or_default(),
                x if x == a.summary => entry.summary = v.as_shared_str().cloned(),
                x if x == a.tags => entry.tags.extend(v.as_shared_str().cloned()),
                x if x == a.version_count => entry.version_count = stored_count(v),
                x if x == a.updated_at => {
                    entry.updated_at = v.as_instant().map(Instant::from_millis)
                }
                x if x == a.retired => retired = v.as_bool().unwrap_or(false),
                _ => {}
            }
        };
        match read {
            Read::Whole => self
                .db
                .visit_attributes(id.entity(), a.slug, a.retired, visit)?,
            Read::InPassing => {
                self.db
                    .visit_attributes_in_passing(id.entity(), a.slug, a.retired, visit)?
            }
        }
        // A recipe kept from another site (a remote fork's parent) is no
        // recipe of this site's: left out wherever retired ones are.
        retired |= crate::domain::slug::is_elsewhere(&entry.slug);
        entry.fork_count = match read {
            Read::Whole => self.fork_count(id)?,
            Read::InPassing => (self.db).referrer_count_in_passing(a.forked_from, id.entity())?,
        };
        Ok((entry, retired))
    }

    /// Reads the first line of the catalog in each of its orders, the
    /// order of slugs, by which every recipe page finds its recipe, and
    /// the tags' order, by which a tag page counts its recipes: what a
    /// server does when it starts, so that the store's order cache holds
    /// them before the first visitor asks. Filling one is a read of the
    /// whole attribute (133 ms at 100,000 recipes), which held the worker
    /// that met it, and every request queued on it, in the crawl's mixed
    /// run (its p99.9, docs/journal/33-close-to-the-limit.md).
    pub fn warm_catalog(&self) -> Result<(), DomainError> {
        for sort in [Sort::Title, Sort::Recent] {
            self.catalog(&CatalogQuery {
                sort,
                limit: 1,
                ..CatalogQuery::default()
            })?;
        }
        self.db.ordered_len(self.attrs.slug);
        // A first tag page read the whole attribute to count its tag's
        // recipes: 50 ms at 100,000 recipes (scripts/scale.sh,
        // docs/journal/55-million.md).
        self.db.ordered_len(self.attrs.tags);
        Ok(())
    }

    /// A page of the catalog: recipes that are not retired, sorted, from
    /// after the cursor, with the cursor of the next page.
    pub fn catalog(&self, query: &CatalogQuery) -> Result<CatalogPage, DomainError> {
        self.catalog_sorting(query, MAX_SORTED_TAG)
    }

    /// `catalog`, sorting a tag's recipes only up to `max_sorted` of them.
    fn catalog_sorting(
        &self,
        query: &CatalogQuery,
        max_sorted: usize,
    ) -> Result<CatalogPage, DomainError> {
        let limit = query.limit.clamp(1, 500);
        let mut entries = Vec::with_capacity(limit + 1);
        let unsorted = match &query.tag {
            None => {
                self.all_recipes(query, limit, &mut entries)?;
                false
            }
            Some(tag) => self.tagged(tag, query, limit, max_sorted, &mut entries)?,
        };
        let next = (entries.len() > limit).then(|| entries[limit - 1].id);
        entries.truncate(limit);
        Ok(CatalogPage {
            entries,
            next,
            unsorted,
        })
    }

    /// How many sitemap files the catalog needs (at least one), each
    /// covering `ids_per_file` entity ids: the last recipe's id, found by
    /// one seek, says. Split by id rather than by position in the title
    /// order, a file is found and read in proportion to what it lists,
    /// whatever the catalog's size: by position, counting the titles and
    /// skipping to a file's first read the whole attribute once the order
    /// outgrew its cache (509 ms for the index and 3.9 s for a file at
    /// 1,000,000 recipes, docs/journal/55-million.md).
    pub fn sitemap_files(&self, ids_per_file: u64) -> Result<usize, DomainError> {
        let ids_per_file = ids_per_file.max(1);
        let slugs = Components::any().a(self.attrs.slug);
        let last = self
            .db
            .datoms_range(Index::Aevt, &slugs, None, true)
            .next()
            .transpose()?;
        Ok(last.map_or(1, |datom| {
            usize::try_from(datom.e / ids_per_file)
                .unwrap_or(usize::MAX)
                .saturating_add(1)
        }))
    }

    /// Sitemap file `file` (from 0): the slugs of the recipes, not retired
    /// and not kept from elsewhere, whose ids are in `file * ids_per_file ..
    /// (file + 1) * ids_per_file`, in id order, with when each last
    /// changed. Three runs of AEVT over the same ids (slug, last change,
    /// retired), read side by side: no entity is loaded whole.
    #[allow(clippy::type_complexity)]
    pub fn sitemap_file(
        &self,
        file: usize,
        ids_per_file: u64,
    ) -> Result<Vec<(Arc<str>, Option<Instant>)>, DomainError> {
        let ids_per_file = ids_per_file.max(1);
        let lo = (file as u64).saturating_mul(ids_per_file);
        let hi = lo.saturating_add(ids_per_file);
        let mut updated = self.ids_between(self.attrs.updated_at, lo, hi).peekable();
        let mut retired = self.ids_between(self.attrs.retired, lo, hi).peekable();
        let mut out = Vec::new();
        for datom in self.ids_between(self.attrs.slug, lo, hi) {
            let datom = datom?;
            let slug = datom.v.as_shared_str().cloned().unwrap_or_default();
            let when = next_of(&mut updated, datom.e)?.and_then(|v| v.as_instant());
            let gone = next_of(&mut retired, datom.e)?.is_some_and(|v| v.as_bool() == Some(true));
            if !gone && !crate::domain::slug::is_elsewhere(&slug) {
                out.push((slug, when.map(Instant::from_millis)));
            }
        }
        Ok(out)
    }

    /// Attribute `a`'s current datoms of the entities `lo..hi`, by id.
    fn ids_between(
        &self,
        a: EntityId,
        lo: u64,
        hi: u64,
    ) -> impl Iterator<Item = Result<Datom, StorageError>> {
        let within = Components::any().a(a);
        // The cursor is exclusive: after every datom of entity lo - 1.
        let after = lo.checked_sub(1).map(|e| Components::any().a(a).e(e));
        self.db
            .datoms_range(Index::Aevt, &within, after.as_ref(), false)
            .take_while(move |datom| datom.as_ref().map_or(true, |d| d.e < hi))
    }

    /// The attribute a sort orders by, and whether it runs backwards.
    fn sort_key(&self, sort: Sort) -> (crate::store::EntityId, bool) {
        match sort {
            Sort::Title => (self.attrs.title, false),
            Sort::Recent => (self.attrs.updated_at, true),
        }
    }

    /// Up to `limit + 1` recipes of the whole catalog: one AVET range read
    /// from the cursor.
    fn all_recipes(
        &self,
        query: &CatalogQuery,
        limit: usize,
        entries: &mut Vec<CatalogEntry>,
    ) -> Result<(), DomainError> {
        let (key_attr, reverse) = self.sort_key(query.sort);
        let cursor = match query.after {
            Some(after) => {
                // Read from the datoms, not through the entity cache: a
                // forged cursor (an ingredient's id, a transaction's) must
                // not fill the cache with entities no page shows.
                let key = self
                    .db
                    .uncached()
                    .value(after.entity(), key_attr)?
                    .ok_or_else(|| DomainError::BadCursor(after.to_string()))?;
                Some(Components::any().a(key_attr).v(key).e(after.entity()))
            }
            None => None,
        };
        let within = Components::any().a(key_attr);
        self.live_lines(&within, cursor.as_ref(), reverse, limit, entries)
    }

    /// The catalog lines of the recipes in an AVET range from `cursor`,
    /// retired ones left out, until `limit + 1` are in `entries`: one range
    /// read, in the index's order, taken as many recipes at a time as the
    /// page still lacks, whose lines are read ahead side by side
    /// (`Db::read_ahead_in_passing`) before they are read in turn.
    fn live_lines(
        &self,
        within: &Components,
        cursor: Option<&Components>,
        reverse: bool,
        limit: usize,
        entries: &mut Vec<CatalogEntry>,
    ) -> Result<(), DomainError> {
        let (first, last) = (self.attrs.slug, self.attrs.retired);
        let mut range = self.db.datoms_range(Index::Avet, within, cursor, reverse);
        while entries.len() <= limit {
            let lacking = limit + 1 - entries.len();
            let ids: Vec<EntityId> = range
                .by_ref()
                .take(lacking)
                .map(|datom| datom.map(|d| d.e))
                .collect::<Result<_, _>>()?;
            if ids.is_empty() {
                break;
            }
            self.db.read_ahead_in_passing(&ids, first, last);
            for id in ids {
                let (entry, retired) = self.catalog_line(RecipeId::new(id), Read::InPassing)?;
                if !retired {
                    entries.push(entry);
                }
            }
        }
        Ok(())
    }

    /// Up to `limit + 1` recipes tagged `tag`, and whether they are in
    /// creation order rather than sorted. A tag of at most `MAX_SORTED_TAG`
    /// recipes is read whole through AVET and sorted here; a larger one is
    /// read from the cursor in AVET's order (by recipe id), which is bounded.
    fn tagged(
        &self,
        tag: &str,
        query: &CatalogQuery,
        limit: usize,
        max_sorted: usize,
        entries: &mut Vec<CatalogEntry>,
    ) -> Result<bool, DomainError> {
        let within = Components::any().a(self.attrs.tags).v(tag);
        // Counted in the order cache where it serves: reading the first
        // `max_sorted + 1` only to find a large tag too large was 2 ms of
        // a 21,000-recipe tag's page (pages bench, 100,000 recipes).
        let too_many = self
            .db
            .ordered_count(self.attrs.tags, &Value::from(tag))
            .is_some_and(|n| n > max_sorted);
        let first: Vec<RecipeId> = if too_many {
            Vec::new()
        } else {
            self.db
                .datoms_range(Index::Avet, &within, None, false)
                .take(max_sorted + 1)
                .map(|d| d.map(|d| RecipeId::new(d.e)))
                .collect::<Result<_, _>>()?
        };
        if too_many || first.len() > max_sorted {
            // Too many to sort: by recipe id, from the cursor.
            let cursor = query.after.map(|id| within.clone().e(id.entity()));
            self.live_lines(&within, cursor.as_ref(), false, limit, entries)?;
            return Ok(true);
        }
        let (key_attr, reverse) = self.sort_key(query.sort);
        // Each recipe loaded whole for the three facts the sort needs: a
        // line read in passing decodes the line's every fact, its summary
        // among them, and a cold page of a 444-recipe tag took 4.6-4.8 ms
        // that way against 2.5-3.2 (scripts/catalog-cold.sh, 2,000
        // recipes, docs/journal/55-million.md).
        let mut keyed = Vec::new();
        for id in first {
            if !self.is_retired(id)? && !self.is_kept_from_elsewhere(id)? {
                let key = self.db.value(id.entity(), key_attr)?;
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
        // Loaded above: read again from this reader's memo or the entity
        // cache (or, dropped from it since, its datoms), its forks counted
        // in passing.
        for (_, id) in keyed.into_iter().skip(start).take(limit + 1) {
            entries.push(self.catalog_line(id, Read::InPassing)?.0);
        }
        Ok(false)
    }

    /// Every tag in use, with how many recipes carry it: those kept from
    /// other sites left out, as everywhere recipes are listed.
    pub fn tags(&self) -> Result<Vec<(String, usize)>, DomainError> {
        let mut counts: Vec<(String, usize)> = self
            .db
            .value_counts(self.attrs.tags)?
            .into_iter()
            .map(|(tag, n)| (tag.as_str().unwrap_or_default().to_owned(), n))
            .collect();
        for kept in self.kept_from_elsewhere()? {
            for tag in self.strings(kept.entity(), self.attrs.tags)? {
                if let Some(at) = counts.iter().position(|(t, _)| *t == tag) {
                    counts[at].1 -= 1;
                }
            }
        }
        counts.retain(|(_, n)| *n > 0);
        Ok(counts)
    }
}

/// Entity `e`'s value in a run of datoms by id that a reader moves along
/// in step with another run: the entities before `e` are passed over.
fn next_of(
    run: &mut std::iter::Peekable<impl Iterator<Item = Result<Datom, StorageError>>>,
    e: EntityId,
) -> Result<Option<Value>, DomainError> {
    while let Some(next) = run.peek() {
        match next {
            Ok(datom) if datom.e < e => {
                run.next();
            }
            Ok(datom) if datom.e > e => return Ok(None),
            _ => return Ok(Some(run.next().expect("peeked")?.v)),
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Change, ContentDraft, Recipes, Slug};

    /// Twelve soups, tagged `soup`, titled backwards from their creation.
    fn soups() -> Recipes {
        let recipes = Recipes::temporary().unwrap();
        for i in 0..12 {
            let content = ContentDraft {
                title: format!("Soup {}", char::from(b'z' - i as u8)),
                tags: vec!["soup".into()],
                ..ContentDraft::default()
            };
            let slug = Slug::parse(&format!("soup-{i}")).unwrap();
            recipes
                .create(&slug, content, &Change::by("ann", "new"))
                .unwrap();
        }
        recipes
    }

    fn all_pages(recipes: &Recipes, max_sorted: usize) -> (Vec<String>, bool) {
        let snapshot = recipes.snapshot();
        let mut query = CatalogQuery {
            tag: Some("soup".into()),
            limit: 5,
            ..CatalogQuery::default()
        };
        let (mut slugs, mut unsorted) = (Vec::new(), false);
        loop {
            let page = snapshot.catalog_sorting(&query, max_sorted).unwrap();
            unsorted |= page.unsorted;
            slugs.extend(page.entries.iter().map(|e| e.slug.to_string()));
            match page.next {
                Some(next) => query.after = Some(next),
                None => return (slugs, unsorted),
            }
        }
    }

    /// The reads `read` makes, the caches cold, after `warm_catalog` or not.
    fn reads_of(recipes: &Recipes, warm: bool, read: impl Fn(&Snapshot)) -> u64 {
        recipes.store().forget_caches();
        if warm {
            recipes.snapshot().warm_catalog().unwrap();
        }
        let snapshot = recipes.snapshot();
        let before = snapshot.reads_so_far();
        read(&snapshot);
        snapshot.reads_so_far() - before
    }

    #[test]
    fn a_warmed_catalog_reads_no_attribute_whole() {
        let recipes = soups();
        // The reads of a first page in `sort`.
        let first_page_reads = |sort: Sort, warm: bool| {
            reads_of(&recipes, warm, |snapshot| {
                let page = snapshot
                    .catalog(&CatalogQuery {
                        sort,
                        limit: 5,
                        ..CatalogQuery::default()
                    })
                    .unwrap();
                assert_eq!(page.entries.len(), 5);
            })
        };
        for sort in [Sort::Title, Sort::Recent] {
            let (cold, warmed) = (first_page_reads(sort, false), first_page_reads(sort, true));
            // The order's range read (and the first line's fork count) done ahead.
            assert!(
                warmed < cold,
                "{sort:?}: {warmed} reads warmed, {cold} cold"
            );
        }
    }

    #[test]
    fn a_warmed_catalog_counts_a_tag_without_reading_the_tags_whole() {
        let recipes = soups();
        // The reads of counting a tag's recipes, as a tag page does first:
        // the count's binary search, after the read of every tag that
        // fills the order.
        let count_reads = |warm: bool| {
            reads_of(&recipes, warm, |snapshot| {
                let count = snapshot
                    .db
                    .ordered_count(snapshot.attrs.tags, &Value::from("soup"));
                assert_eq!(count, Some(12));
            })
        };
        assert_eq!((count_reads(false), count_reads(true)), (2, 1));
    }

    /// Every line of every page of the catalog (both orders) and of the
    /// tag `soup`, as `snapshot` lists them.
    fn every_line(snapshot: &Snapshot) -> Vec<CatalogEntry> {
        let mut lines = Vec::new();
        for tag in [None, Some("soup".to_owned())] {
            for sort in [Sort::Title, Sort::Recent] {
                let mut query = CatalogQuery {
                    tag: tag.clone(),
                    sort,
                    limit: 5,
                    ..CatalogQuery::default()
                };
                loop {
                    let page = snapshot.catalog(&query).unwrap();
                    lines.extend(page.entries);
                    match page.next {
                        Some(next) => query.after = Some(next),
                        None => break,
                    }
                }
            }
        }
        lines
    }

    #[test]
    fn a_page_read_ahead_loads_none_of_its_recipes_and_shows_them_as_read_whole() {
        let recipes = Recipes::temporary().unwrap();
        let ann = Change::by("ann", "new");
        let mut live = Vec::new();
        for i in 0..40 {
            let slug = Slug::parse(&format!("stew-{i:02}")).unwrap();
            let content = ContentDraft {
                title: format!("Stew {i:02}"),
                ..ContentDraft::default()
            };
            recipes.create(&slug, content, &ann).unwrap();
            if i % 10 == 3 {
                let version = recipes.snapshot().current(&slug).unwrap().newest();
                recipes.retire(&slug, version, &ann).unwrap();
            } else {
                live.push(slug.to_string());
            }
        }
        recipes.store().forget_caches();
        let snapshot = recipes.snapshot().witnessed();
        let (first, last) = (snapshot.attrs.slug, snapshot.attrs.retired);
        let ids: Vec<EntityId> = (snapshot.db)
            .datoms(Index::Aevt, &Components::any().a(first))
            .map(|datom| datom.unwrap().e)
            .collect();
        assert_eq!(ids.len(), 40);
        // Read ahead by the page's own reader, before its page: were the
        // read ahead a reading (noted by the doorkeeper, or a load), the
        // page would load its recipes whole.
        snapshot.db.read_ahead_in_passing(&ids, first, last);
        let page = snapshot
            .catalog(&CatalogQuery {
                limit: 30,
                ..CatalogQuery::default()
            })
            .unwrap();
        let slugs: Vec<&str> = page.entries.iter().map(|e| e.slug.as_ref()).collect();
        assert_eq!(slugs, live[..30], "in title order, the retired left out");
        assert!(page.next.is_some());
        let dependencies = snapshot.db.dependencies().unwrap();
        assert!(
            !(dependencies.list.iter())
                .any(|d| matches!(d, crate::store::Dependency::Entity { .. })),
            "no recipe loaded whole"
        );
        assert_eq!(recipes.store().cached_entity_count(), 0);
        let whole = recipes.snapshot();
        for line in &page.entries {
            assert_eq!(*line, whole.catalog_entry(line.id).unwrap());
        }
        let rest = snapshot
            .catalog(&CatalogQuery {
                limit: 30,
                after: page.next,
                ..CatalogQuery::default()
            })
            .unwrap();
        let slugs: Vec<&str> = rest.entries.iter().map(|e| e.slug.as_ref()).collect();
        assert_eq!(slugs, live[30..]);
        assert_eq!(rest.next, None);
    }

    #[test]
    fn catalog_pages_read_their_lines_without_loading_their_recipes() {
        let recipes = soups();
        let ann = Change::by("ann", "fork");
        let soup = |i: u8| Slug::parse(&format!("soup-{i}")).unwrap();
        let fork = Slug::parse("soup-3-fork").unwrap();
        recipes
            .fork(&soup(3), None, Some(&fork), |draft| draft, &ann)
            .unwrap();
        let version = recipes.snapshot().current(&soup(5)).unwrap().newest();
        recipes
            .retire(&soup(5), version, &Change::by("ann", "gone"))
            .unwrap();
        recipes.store().forget_caches();

        // The recipes a witnessed snapshot's reads loaded whole.
        let loaded = |snapshot: &Snapshot| {
            let dependencies = snapshot.db.dependencies().unwrap();
            (dependencies.list.iter())
                .filter(|d| matches!(d, crate::store::Dependency::Entity { .. }))
                .count()
        };
        let before = recipes.snapshot().witnessed();
        let in_passing = before
            .catalog(&CatalogQuery {
                limit: 20,
                ..CatalogQuery::default()
            })
            .unwrap()
            .entries;
        assert_eq!(in_passing.len(), 12, "thirteen soups, one retired");
        assert_eq!(
            loaded(&before),
            0,
            "a page of lines loads none of its recipes whole"
        );

        // Read again, by this reader or another (a page made again), a
        // recipe is loaded whole: from the second reader on, the cache
        // keeps it, and this reader's memo does.
        let lines = every_line(&before);
        assert_eq!(lines.len(), 4 * 12, "each list");
        assert_eq!(loaded(&before), 13, "the thirteen soups");
        assert_eq!(
            recipes.store().cached_entity_count(),
            0,
            "one reader so far"
        );
        let again = recipes.snapshot().witnessed();
        assert_eq!(every_line(&again), lines);
        assert_eq!(recipes.store().cached_entity_count(), 13);
        // The same lines as read whole, forks counted, whether read in
        // passing (the first page) or whole (the lists after it).
        for line in in_passing.iter().chain(&lines) {
            assert_eq!(*line, again.catalog_entry(line.id).unwrap());
        }
        assert!(lines
            .iter()
            .any(|line| line.slug.as_ref() == "soup-3" && line.fork_count == 1));
    }

    #[test]
    fn a_newer_version_in_the_entity_cache_does_not_answer_for_an_older_value() {
        let recipes = soups();
        let ann = Change::by("ann", "rename");
        let seven = Slug::parse("soup-7").unwrap();
        let before = recipes.snapshot();
        let lines = every_line(&before);
        let version = recipes.snapshot().current(&seven).unwrap().newest();
        let content = ContentDraft {
            title: "Soup renamed".into(),
            tags: vec!["soup".into()],
            ..ContentDraft::default()
        };
        recipes.edit(&seven, version, content, &ann).unwrap();
        let after = recipes.snapshot();
        let id = after.current(&seven).unwrap().id;
        assert_eq!(
            after.catalog_entry(id).unwrap().title.as_ref(),
            "Soup renamed"
        );
        assert!(recipes.store().cached_entity_count() > 0);
        // At the older value, through `after`'s reader, which holds the
        // newer version: the lines are that value's.
        let older = after.as_of(before.basis());
        assert_eq!(every_line(&older), lines, "the older value's lines");
        // And read in passing at their first reading, the caches empty.
        recipes.store().forget_caches();
        let older = recipes.snapshot().as_of(before.basis());
        assert_eq!(every_line(&older), lines, "read in passing");
        assert!(every_line(&after)
            .iter()
            .any(|line| line.title.as_ref() == "Soup renamed"));
    }

    #[test]
    fn a_tag_too_large_to_sort_pages_in_creation_order() {
        let recipes = soups();
        let created: Vec<String> = (0..12).map(|i| format!("soup-{i}")).collect();
        let (sorted, unsorted) = all_pages(&recipes, 20);
        assert!(!unsorted);
        let by_title: Vec<String> = created.iter().rev().cloned().collect();
        assert_eq!(sorted, by_title, "by title: the newest first here");
        let (listed, unsorted) = all_pages(&recipes, 10);
        assert!(unsorted);
        assert_eq!(listed, created, "every soup once, in creation order");
    }
}
