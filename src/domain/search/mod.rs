//! Full-text search: a tantivy index beside the store, derived from it.
//!
//! The index holds one document per recipe that is not retired (its words
//! stemmed in its language, `document`), and says in each commit's payload
//! the basis it was built at, its format and the languages it holds. It is
//! the log's, like every index here:
//!
//! - **Derived.** Missing, of another format, or ahead of the store (a
//!   store restored from an older copy), it is built again from the store;
//!   until that first build is done, search answers 503.
//! - **Kept up.** A thread of its own follows the store's basis: the
//!   recipes the transactions since its basis changed (`changed_since`)
//!   are written again, retired ones deleted, and one commit per round
//!   carries the new basis. Writes made meanwhile wait for the next round,
//!   which comes `COMMIT_GAP` after a round that wrote, so a busy site's
//!   writes share commits; sooner (`HURRIED_GAP`) when a search waits for
//!   a write the index has not reached (`SearchIndex::hurry`).
//! - **At one basis.** A search is answered from the index at its basis and
//!   the store's value at that same basis (`SearchView`), so a page never
//!   mixes two; a search waits, a little, for the index to reach the basis
//!   the site shows (`web::pages::search`), so a cook finds what they
//!   just wrote.
//! - **Bounded.** The writer buffers at most `WRITER_BYTES` before it
//!   writes a segment; segments are read through mmap, so the index's size
//!   is the page cache's, not the heap's. A store in a temporary file gets
//!   an index in a temporary directory.

mod document;
mod query;
pub mod words;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tantivy::directory::MmapDirectory;
use tantivy::indexer::{IndexWriterOptions, LogMergePolicy};
use tantivy::schema::Term;
use tantivy::tokenizer::Language;
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, Searcher};

use self::document::Fields;
pub use self::query::{Hit, Passage, SearchPage, SearchQuery, MAX_PAGE, PER_PAGE};
pub use self::words::{Matcher, MAX_WORDS};
use super::ids::{Basis, RecipeId};
use super::read::Snapshot;
use super::{DomainError, Recipes};

/// The index's format: a change to the schema, the words or the payload
/// makes every index of an older format be built again (2: stemmed
/// before accents are folded).
const FORMAT: u32 = 2;

/// What the index's writer buffers before it writes a segment: tantivy's
/// least, plenty for one round of a site's writes; a full build writes a
/// segment per this much and merges them in the background.
const WRITER_BYTES: usize = 16 << 20;

/// How often the follower looks for a new basis when it found none.
const POLL: Duration = Duration::from_millis(10);

/// How long the follower rests after a round that wrote: writes made
/// meanwhile share the next round's commit. A commit per write made a
/// segment per write for tantivy to merge: at 20 writes a second, the
/// merges and the writer's threads took more of the CPU than the pages
/// (perf, docs/journal/30-log.md), on every node of a cluster. Each commit
/// also pays a fixed cost (a new segment's writer and files): three
/// seconds rather than one took a node following 20 writes a second from
/// 1.30-1.38 to 0.90-0.94 s of CPU in 20 s, and to 0.77-0.91 s with
/// `MERGE_LAYER_DOCS` as well. A write on a quiet site is still found
/// within `POLL`, and one a search waits for within `HURRIED_GAP`: the
/// rest is for writes no one has asked for yet.
const COMMIT_GAP: Duration = Duration::from_secs(3);

/// The least rest after a round that wrote, when a search is waiting: a
/// site searched and written to all the time still commits at most about
/// ten times a second.
const HURRIED_GAP: Duration = Duration::from_millis(100);

/// The segments under this many documents are merged as one level.
/// tantivy's default, 10,000, put the few segments of a catalog of up to
/// about 17,000 recipes in one level with each round's segment of a
/// handful, so every eighth round merged the whole index again: a sixth of
/// a following node's CPU (perf, docs/journal/30-log.md). At 1,000, small
/// segments merge among themselves until they outgrow it.
const MERGE_LAYER_DOCS: u32 = 1_000;

/// How long opening waits for the index's lock.
const LOCK_WAIT: Duration = Duration::from_secs(2);

/// The name of the index's directory among the store's derived ones.
pub const DIRECTORY: &str = "search";

/// A commit's payload: what the index is of.
#[derive(Debug, Serialize, Deserialize)]
struct Payload {
    format: u32,
    basis: u64,
    languages: Vec<String>,
}

/// The index as searches see it: a searcher and the basis it is at.
struct Current {
    searcher: Searcher,
    basis: Basis,
    languages: Vec<Language>,
}

struct Inner {
    recipes: Recipes,
    fields: Fields,
    reader: IndexReader,
    writer: Mutex<IndexWriter>,
    /// `None` until the first build is committed.
    current: RwLock<Option<Arc<Current>>>,
    /// Notified at each commit, for searches waiting for a basis.
    moved: (Mutex<()>, Condvar),
    /// How far the first build is: recipes done, of how many.
    built: AtomicUsize,
    to_build: AtomicUsize,
    /// Why the last round failed, if it did (cleared by the next success).
    failed: Mutex<Option<String>>,
    /// Rounds committed since the index was opened.
    commits: AtomicUsize,
    /// The follower's rest, which a waiting search cuts short.
    rest: Arc<Rest>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The follower wakes, finds the index gone, and ends.
        self.rest.hurry();
    }
}

/// The follower's rest between rounds. It holds no `Inner` while it rests
/// (dropping the index ends it), so the rest is shared apart.
struct Rest {
    hurried: Mutex<bool>,
    woken: Condvar,
}

impl Rest {
    /// Rests for `rest`, or until hurried once `least` has passed.
    fn rest(&self, rest: Duration, least: Duration) {
        let started = Instant::now();
        let mut hurried = self.hurried.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let waited = started.elapsed();
            let until = if *hurried { least.min(rest) } else { rest };
            let Some(left) = until.checked_sub(waited).filter(|l| !l.is_zero()) else {
                break;
            };
            hurried = self
                .woken
                .wait_timeout(hurried, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        *hurried = false;
    }

    fn hurry(&self) {
        *self.hurried.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.woken.notify_all();
    }
}

/// The search index of one store, and the thread that keeps it up.
#[derive(Clone)]
pub struct SearchIndex {
    inner: Arc<Inner>,
}

impl SearchIndex {
    /// Opens the index of `recipes`' store (under its directory, or in a
    /// temporary one), and starts following the store. An index that is
    /// missing, of another format, or ahead of the store is built again, in
    /// the background.
    ///
    /// One index per directory in a process: opening it again (two sites
    /// over one store) gives the one already open.
    pub fn open(recipes: &Recipes) -> Result<SearchIndex, DomainError> {
        static OPEN: Mutex<Vec<(PathBuf, Weak<Inner>)>> = Mutex::new(Vec::new());
        let Some(dir) = recipes.derived_dir(DIRECTORY) else {
            let (schema, _) = Fields::schema();
            let index = Index::create_from_tempdir(schema).map_err(search_error)?;
            return SearchIndex::start(recipes, index);
        };
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        open.retain(|(_, inner)| inner.strong_count() > 0);
        if let Some(inner) = open
            .iter()
            .find(|(path, _)| *path == dir)
            .and_then(|(_, inner)| inner.upgrade())
        {
            return Ok(SearchIndex { inner });
        }
        let (schema, _) = Fields::schema();
        let index = SearchIndex::start(recipes, open_in(&dir, schema)?)?;
        open.push((dir, Arc::downgrade(&index.inner)));
        Ok(index)
    }

    fn start(recipes: &Recipes, index: Index) -> Result<SearchIndex, DomainError> {
        let (_, fields) = Fields::schema();
        let options = IndexWriterOptions::builder()
            .memory_budget_per_thread(WRITER_BYTES)
            .num_worker_threads(1)
            .num_merge_threads(1)
            .build();
        // The same index dropped a moment ago may still hold its lock while
        // its last thread lets go: waited for, briefly.
        let deadline = Instant::now() + LOCK_WAIT;
        let writer = loop {
            match index.writer_with_options(options.clone()) {
                Ok(writer) => break writer,
                Err(tantivy::TantivyError::LockFailure(..)) if Instant::now() < deadline => {
                    std::thread::sleep(POLL);
                }
                Err(e) => {
                    return Err(DomainError::SearchUnavailable(format!(
                        "the search index cannot be written (is another forkful serving this store?): {e}"
                    )))
                }
            }
        };
        let mut merges = LogMergePolicy::default();
        merges.set_min_layer_size(MERGE_LAYER_DOCS);
        writer.set_merge_policy(Box::new(merges));
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(search_error)?;
        let store_basis = recipes.snapshot().basis();
        let payload = index
            .load_metas()
            .ok()
            .and_then(|metas| metas.payload)
            .and_then(|p| serde_json::from_str::<Payload>(&p).ok())
            .filter(|p| p.format == FORMAT && p.basis <= store_basis.get());
        let current = payload.map(|payload| {
            Arc::new(Current {
                searcher: reader.searcher(),
                basis: Basis::new(payload.basis),
                languages: payload
                    .languages
                    .iter()
                    .filter_map(|code| words::language_from_code(code))
                    .collect(),
            })
        });
        if current.is_none() {
            // Whatever it holds is of no use: built again from nothing.
            writer.delete_all_documents().map_err(search_error)?;
        }
        let inner = Arc::new(Inner {
            recipes: recipes.clone(),
            fields,
            reader,
            writer: Mutex::new(writer),
            current: RwLock::new(current),
            moved: (Mutex::new(()), Condvar::new()),
            built: AtomicUsize::new(0),
            to_build: AtomicUsize::new(0),
            failed: Mutex::new(None),
            commits: AtomicUsize::new(0),
            rest: Arc::new(Rest {
                hurried: Mutex::new(false),
                woken: Condvar::new(),
            }),
        });
        let weak = Arc::downgrade(&inner);
        let rest = inner.rest.clone();
        std::thread::Builder::new()
            .name("search-index".into())
            .spawn(move || follow(weak, &rest))
            .map_err(|e| {
                DomainError::SearchUnavailable(format!("no thread for the search index: {e}"))
            })?;
        Ok(SearchIndex { inner })
    }

    /// How many rounds have committed since the index was opened (writes
    /// close together share one: `COMMIT_GAP`).
    pub fn commits(&self) -> usize {
        self.inner.commits.load(Ordering::Relaxed)
    }

    /// The basis the index is at, once built.
    pub fn basis(&self) -> Option<Basis> {
        self.current().map(|c| c.basis)
    }

    /// Asks for the next round now rather than after `COMMIT_GAP` (but
    /// not before `HURRIED_GAP`): for a search that waits for the store's
    /// newest basis.
    pub fn hurry(&self) {
        self.inner.rest.hurry();
    }

    /// Waits up to `wait` for the index to reach `basis`, hurrying it;
    /// whether it did.
    pub fn wait_for(&self, basis: Basis, wait: Duration) -> bool {
        if self.basis().is_some_and(|b| b >= basis) {
            return true;
        }
        self.hurry();
        let deadline = Instant::now() + wait;
        let (lock, moved) = &self.inner.moved;
        let mut guard = lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if self.basis().is_some_and(|b| b >= basis) {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            guard = moved
                .wait_timeout(guard, left.min(POLL))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// The index and the store at one basis, for one search: `latest`'s
    /// (the site's value) if the index is there, else the index's own
    /// (behind `latest`, or ahead of it when a write landed in between). Never waits: a caller that wants the newest waits first, as
    /// the web's handler does off its worker. 503 until the first build.
    pub fn view(&self, latest: &Snapshot) -> Result<SearchView, DomainError> {
        let Some(current) = self.current() else {
            let (done, of) = (
                self.inner.built.load(Ordering::Relaxed),
                self.inner.to_build.load(Ordering::Relaxed),
            );
            return Err(DomainError::SearchBuilding { done, of });
        };
        let snapshot = match current.basis.cmp(&latest.basis()) {
            std::cmp::Ordering::Less => latest.as_of(current.basis),
            std::cmp::Ordering::Equal => latest.clone(),
            // The index has seen a write `latest` has not (it was taken
            // just before): paired with `latest`, a hit could name a recipe
            // that value does not have. The store's newest value has every
            // write the index has seen; pinned at the index's basis.
            std::cmp::Ordering::Greater => self.inner.recipes.snapshot().as_of(current.basis),
        };
        Ok(SearchView {
            current,
            snapshot,
            fields: self.inner.fields,
        })
    }

    /// Why the index could not follow the store last time, if it could not.
    pub fn failure(&self) -> Option<String> {
        self.inner
            .failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn current(&self) -> Option<Arc<Current>> {
        self.inner.current()
    }
}

/// The index at one basis and the store's value at the same basis.
pub struct SearchView {
    current: Arc<Current>,
    snapshot: Snapshot,
    fields: Fields,
}

impl SearchView {
    /// The store's value at the index's basis: what a search's page reads.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }
}

impl Inner {
    fn current(&self) -> Option<Arc<Current>> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// One round: builds the index if it never was, else brings it to the
    /// store's basis. Whether there was anything to do.
    fn round(&self) -> Result<bool, DomainError> {
        let latest = self.recipes.snapshot();
        let current = self.current();
        let (ids, mut languages): (Box<dyn Iterator<Item = _>>, Vec<Language>) = match &current {
            Some(current) if current.basis >= latest.basis() => return Ok(false),
            Some(current) => (
                Box::new(latest.changed_since(current.basis)?.into_iter().map(Ok)),
                current.languages.clone(),
            ),
            None => {
                self.to_build
                    .store(latest.recipe_count(), Ordering::Relaxed);
                (Box::new(latest.every_recipe()), Vec::new())
            }
        };
        let mut writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        for (done, id) in ids.enumerate() {
            let id: RecipeId = id?;
            writer.delete_term(Term::from_field_u64(self.fields.id, id.entity()));
            let recipe = latest.recipe_by_id(id)?;
            if !recipe.retired && !recipe.slug.is_elsewhere() && !recipe.content.title().is_empty()
            {
                let language = words::language_of(recipe.content.language());
                if !languages.contains(&language) {
                    languages.push(language);
                }
                let doc = self.fields.document(id, &recipe.content, language);
                writer.add_document(doc).map_err(search_error)?;
            }
            if current.is_none() {
                self.built.store(done + 1, Ordering::Relaxed);
            }
        }
        if !languages.contains(&Language::English) {
            // A query's words are always stemmed in English too.
            languages.push(Language::English);
        }
        let payload = Payload {
            format: FORMAT,
            basis: latest.basis().get(),
            languages: languages
                .iter()
                .map(|&l| words::language_code(l).to_owned())
                .collect(),
        };
        let mut commit = writer.prepare_commit().map_err(search_error)?;
        commit.set_payload(&serde_json::to_string(&payload).expect("a payload is JSON"));
        commit.commit().map_err(search_error)?;
        self.commits.fetch_add(1, Ordering::Relaxed);
        drop(writer);
        self.reader.reload().map_err(search_error)?;
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(Current {
            searcher: self.reader.searcher(),
            basis: latest.basis(),
            languages,
        }));
        let _guard = self.moved.0.lock().unwrap_or_else(|e| e.into_inner());
        self.moved.1.notify_all();
        Ok(true)
    }
}

/// The follower's loop: a round whenever the store moved, until the index
/// is dropped. A failed round (a full disk) is logged and tried again.
fn follow(inner: Weak<Inner>, rest: &Rest) {
    loop {
        let Some(inner) = inner.upgrade() else { return };
        let (rested, least) = match inner.round() {
            Ok(true) => {
                *inner.failed.lock().unwrap_or_else(|e| e.into_inner()) = None;
                (COMMIT_GAP, HURRIED_GAP)
            }
            Ok(false) => (POLL, POLL),
            Err(error) => {
                tracing::error!(%error, "the search index could not follow the store");
                *inner.failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(error.to_string());
                // Whatever the round wrote is dropped: the next starts clean.
                let _ = inner
                    .writer
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .rollback();
                (Duration::from_secs(1), Duration::from_secs(1))
            }
        };
        drop(inner);
        rest.rest(rested, least);
    }
}

/// Opens the index in `dir`, or makes a new one there when there is none
/// or it cannot be read as this schema (another format).
fn open_in(dir: &Path, schema: tantivy::schema::Schema) -> Result<Index, DomainError> {
    std::fs::create_dir_all(dir).map_err(|e| search_io(dir, e))?;
    let opened = MmapDirectory::open(dir)
        .map_err(search_error)
        .and_then(|d| Index::open_or_create(d, schema.clone()).map_err(search_error));
    match opened {
        Ok(index) => Ok(index),
        Err(error) => {
            tracing::warn!(%error, dir = %dir.display(), "the search index is of another format: building it again");
            std::fs::remove_dir_all(dir).map_err(|e| search_io(dir, e))?;
            std::fs::create_dir_all(dir).map_err(|e| search_io(dir, e))?;
            let directory = MmapDirectory::open(dir).map_err(search_error)?;
            Index::create(directory, schema, Default::default()).map_err(search_error)
        }
    }
}

fn search_error(error: impl std::fmt::Display) -> DomainError {
    DomainError::SearchUnavailable(format!("the search index failed: {error}"))
}

fn search_io(dir: &Path, error: std::io::Error) -> DomainError {
    DomainError::SearchUnavailable(format!("the search index at {}: {error}", dir.display()))
}
