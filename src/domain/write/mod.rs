//! Every write the domain makes: one transaction each, with an author and a
//! note, acknowledged once durable.
//!
//! Each write is decided inside the store's single writer, on the latest
//! database value (`Store::transact_with`): that a slug is free, that the
//! recipe is still at the version an edit was based on, the version count,
//! the search terms and which components change are all read from the value
//! the transaction applies to. Nothing is checked against a published value
//! and written later, so two writers cannot race.
//!
//! An edit asserts only what changed. Ingredient lines and steps are matched
//! old to new by a longest common subsequence: a line that stays keeps its
//! component entity (its position is updated if it moved), a line that goes
//! is retracted, a new line is a new component. So a one-line change to a
//! twenty-line recipe writes a handful of datoms, and history stays small.

use std::collections::BTreeSet;

use super::attrs::Attrs;
use super::content::{Content, ContentDraft, Step, FIELDS};
use super::diff::{self, lcs_pairs};
use super::ids::VersionNumber;
use super::ingredient::IngredientLine;
use super::pictures::{self, Picture};
use super::read::RETIRED;
use super::read::{Recipe, Snapshot};
use super::slug::Slug;
use super::{site_schema, DomainError, Source};
use crate::store::{
    Db, EntityId, EntityMap, EntityRef, Keyspace, LogPosition, Store, Transaction, TxReport,
    TxValue, Value,
};

mod attempt;
mod elsewhere;
mod merges;
mod offers;
mod suggestions;
mod unsaved_pictures;

pub use attempt::Attempt;
pub use elsewhere::RemoteParent;
pub use offers::{OfferAnswer, RemoteOffer};
pub use suggestions::{Review, MAX_MESSAGE};

pub use unsaved_pictures::{Seen, GRACE_MS as UNSAVED_PICTURE_GRACE_MS};

/// The domain's handle on a store.
#[derive(Clone)]
pub struct Recipes {
    store: Store,
    attrs: Attrs,
    /// Opened once, with the domain, so that reading a picture never
    /// creates a tree.
    pictures: Keyspace,
    /// Who sent each picture no version names yet (`unsaved_pictures`).
    uploads: Keyspace,
    /// Held while a picture is stored or sent, and while one is collected,
    /// so that a picture sent again is never collected under its sender.
    picture_writes: std::sync::Arc<std::sync::Mutex<()>>,
    /// The store's secret key for naming uploads (`pictures::name_of`).
    picture_key: pictures::NameKey,
}

/// Who makes a change, why, and (for imported history) when.
#[derive(Debug, Clone)]
pub struct Change {
    /// The author's handle; the user is created on first use.
    pub author: String,
    pub note: String,
    /// Milliseconds since the epoch; `None` is now. Never before the
    /// store's newest transaction.
    pub at: Option<i64>,
    /// The form this change was sent from, for a write that a resend must
    /// not make twice: recorded with the transaction, and a change with an
    /// attempt already recorded saves nothing (`AlreadySaved`).
    pub attempt: Option<Attempt>,
}

impl Change {
    pub fn by(author: &str, note: &str) -> Change {
        Change {
            author: author.to_owned(),
            note: note.to_owned(),
            at: None,
            attempt: None,
        }
    }

    /// This change, saved at most once for `attempt`.
    pub fn once(self, attempt: Attempt) -> Change {
        Change {
            attempt: Some(attempt),
            ..self
        }
    }

    /// The author's handle, once the change is known to be writable: a
    /// handle of a-z, 0-9 and `-`, and a note that says something, in at
    /// most `MAX_NOTE` bytes (so that a version fits in one transaction:
    /// `content`'s arithmetic).
    pub fn checked_author(&self) -> Result<Slug, String> {
        let handle = Slug::parse(&self.author)
            .map_err(|_| format!("{:?} is not a user handle (a-z, 0-9, -)", self.author))?;
        if self.note.trim().is_empty() {
            return Err("a change needs a note saying what changed".into());
        }
        if self.note.trim().len() > MAX_NOTE {
            return Err(format!("a change's note is longer than {MAX_NOTE} bytes"));
        }
        Ok(handle)
    }
}

/// The longest note a change may have.
pub const MAX_NOTE: usize = super::content::MAX_TEXT;

/// What a new recipe forks, for `create`.
#[derive(Debug, Clone)]
pub(crate) struct ForkOf {
    pub parent: EntityRef,
    /// The parent's version transaction, or this transaction itself when the
    /// parent is created alongside (a synthetic batch).
    pub at_tx: EntityRef,
    pub at_version: i64,
}

impl Recipes {
    /// Opens the domain on `store`, installing any missing attribute.
    pub fn open(store: Store) -> Result<Recipes, DomainError> {
        site_schema::install(&store)?;
        let attrs = Attrs::resolve(&store.db())?;
        // Pictures kept elsewhere are remembered here: a variant's bytes
        // never change under its name, nor a named picture's size.
        let pictures = store
            .keyspace(PICTURES)
            .map_err(store_error)?
            .remembering(PICTURE_MEMORY_BYTES);
        let picture_key = picture_key(&store)?;
        let uploads = store
            .keyspace(unsaved_pictures::UPLOADS)
            .map_err(store_error)?;
        Ok(Recipes {
            attrs,
            pictures,
            uploads,
            picture_writes: Default::default(),
            picture_key,
            store,
        })
    }

    /// The domain on a store of its own in a temporary file, gone when the
    /// last handle drops: for tests and demos.
    pub fn temporary() -> Result<Recipes, DomainError> {
        let store = Store::temporary().map_err(crate::store::StoreError::from)?;
        Recipes::open(store)
    }

    /// The store under the domain: for the domain's own modules
    /// (accounts), and, with the `testing` feature, for tests. The layers
    /// above read through `Snapshot` and write through `Recipes`, so the
    /// compiler, not only the layering test, keeps the store from them.
    #[cfg(feature = "testing")]
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Waits until every write decided before the call is published, so
    /// that a snapshot taken after it shows what a refusal was decided on:
    /// a `Stale` edit names the version the writer saw, which readers see
    /// only once its group is flushed.
    pub fn wait_published(&self) -> Result<(), DomainError> {
        Ok(self.store.sync()?)
    }

    /// See the `testing` build's `store`.
    #[cfg(not(feature = "testing"))]
    pub(in crate::domain) fn store(&self) -> &Store {
        &self.store
    }

    /// Lets the store's entity cache hold `share` (0 to 1) of its budget:
    /// how the server's memory limit makes room (`web::memory_limit`).
    pub fn set_entity_cache_share(&self, share: f64) {
        self.store.set_entity_cache_share(share);
    }

    /// What the store's entity cache weighs now, and its budget.
    pub fn entity_cache_fill(&self) -> (u64, u64) {
        self.store.entity_cache_fill()
    }

    /// Where the store's derived index `name` keeps its files; `None` for
    /// a temporary store.
    pub fn derived_dir(&self, name: &str) -> Option<std::path::PathBuf> {
        self.store.derived_dir(name)
    }

    pub fn attrs(&self) -> &Attrs {
        &self.attrs
    }

    /// Writes decided again because another node's reached the log first,
    /// since the store was opened.
    pub fn write_retries(&self) -> u64 {
        self.store.stats().log_retries
    }

    /// Why this node refuses every write, if its store failed a flush.
    pub fn refuses_writes(&self) -> Option<String> {
        self.store.poisoned()
    }

    /// Whether other nodes write to this node's history, so that a cook's
    /// own write may not be shown here yet (read-your-writes waits for it).
    pub fn others_write(&self) -> bool {
        self.store.others_write()
    }

    /// Whether the site's keyspaces (sessions, passwords, pictures) are
    /// kept in another process, so that reading them may wait on the
    /// network: such reads are kept off the workers that serve pages.
    pub fn keyspaces_kept_elsewhere(&self) -> bool {
        self.uploads.kept_elsewhere()
    }

    /// How following the log stands, from memory (`None` without a log).
    pub fn follow_report(&self) -> Option<crate::domain::FollowReport> {
        self.store.follow_report()
    }

    /// How long, and why, the log has been known out of reach (`None`:
    /// reachable, or no log).
    pub fn log_out_of_reach(&self) -> Option<(std::time::Duration, String)> {
        self.store.log_out_of_reach()
    }

    /// Where this node stands against the log its store follows (`None`
    /// without a log). An error when the log cannot be reached.
    pub fn log_position(&self) -> Option<Result<LogPosition, DomainError>> {
        self.store
            .log_position()
            .map(|position| position.map_err(DomainError::from))
    }

    /// The latest database value, pinned: what one request reads.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot::new(self.store.db(), self.attrs)
    }

    /// Stores an upload that the cook `sender` sent as a picture, every
    /// variant durable before this returns, so that a transaction naming
    /// it can never name a picture that is not there. The same upload twice
    /// is stored once. Until a version names it, only its senders see it,
    /// and it is collected a day after it was last sent
    /// (`unsaved_pictures`). The picture's `alt` is left empty, for the
    /// caller to say.
    pub fn add_picture(&self, bytes: &[u8], sender: &str) -> Result<Picture, DomainError> {
        let name = self.picture_name(bytes);
        {
            let _writes = self.lock_picture_writes();
            if let Some(picture) = self.picture(&name)? {
                self.note_sending(&name, sender)?;
                return Ok(picture);
            }
        }
        // Decoded outside the lock: it takes a second at the size cap.
        let prepared = pictures::prepare(bytes, name)?;
        let _writes = self.lock_picture_writes();
        let picture = self.store_picture(prepared)?;
        self.note_sending(&picture.hash, sender)?;
        Ok(picture)
    }

    fn lock_picture_writes(&self) -> std::sync::MutexGuard<'_, ()> {
        // The lock guards no data, only an order: a poisoned one is fine.
        self.picture_writes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The name an upload of `bytes` is stored under here: a hash keyed by
    /// this store's secret, so that whoever has the file cannot find it on
    /// the site (an upload whose form was never saved included); only the
    /// cook who sent it, and readers of the recipes that show it, see it.
    pub fn picture_name(&self, bytes: &[u8]) -> String {
        pictures::name_of(&self.picture_key, bytes)
    }

    /// Stores a prepared picture's variants, durably (see `add_picture`).
    pub fn store_picture(&self, prepared: pictures::Prepared) -> Result<Picture, DomainError> {
        let mut entries: Vec<(Vec<u8>, Vec<u8>)> = prepared
            .variants
            .into_iter()
            .map(|(name, bytes)| (variant_key(&prepared.hash, &name), bytes))
            .collect();
        // The size last: a picture is known by it, once its variants are in.
        entries.push((
            prepared.hash.clone().into_bytes(),
            format!("{} {}", prepared.width, prepared.height).into_bytes(),
        ));
        self.pictures
            .insert_all(&entries)
            .map_err(crate::store::StoreError::from)?;
        Ok(Picture {
            hash: prepared.hash,
            width: prepared.width,
            height: prepared.height,
            alt: String::new(),
        })
    }

    /// The stored picture called `hash` (its `alt` empty), if there is one.
    pub fn picture(&self, hash: &str) -> Result<Option<Picture>, DomainError> {
        if !pictures::is_hash(hash) {
            return Ok(None);
        }
        let size = self.pictures.get(hash.as_bytes()).map_err(store_error)?;
        picture_of_size(hash, size)
    }

    /// `picture`, from what this node keeps where it can: a picture a
    /// version names is read from the log's database once (`named_picture`).
    pub fn picture_kept(&self, hash: &str) -> Result<Option<Picture>, DomainError> {
        if pictures::is_hash(hash) && self.snapshot().names_picture(hash)? {
            return self.named_picture(hash);
        }
        self.picture(hash)
    }

    /// `picture`, for a picture a version names: its size record never
    /// changes then, so a node that reads it from its log remembers it,
    /// with the variants (`Keyspace::get_lasting`). Never the mark of a
    /// collection under way (`unsaved_pictures::COLLECTING`): a collection
    /// that finds the picture named puts its size back, which another
    /// node would not see.
    pub(super) fn named_picture(&self, hash: &str) -> Result<Option<Picture>, DomainError> {
        let size = self
            .pictures
            .get_lasting_if(hash.as_bytes(), |size| size != unsaved_pictures::COLLECTING)
            .map_err(store_error)?;
        picture_of_size(hash, size)
    }

    /// The JPEG bytes of a picture's variant (`640`, `4x3`), if stored:
    /// they never change under its name.
    pub fn picture_variant(&self, hash: &str, name: &str) -> Result<Option<Vec<u8>>, DomainError> {
        if !pictures::is_hash(hash) {
            return Ok(None);
        }
        let key = variant_key(hash, name);
        let bytes = self.pictures.get_lasting(&key).map_err(store_error)?;
        Ok(bytes.map(|bytes| bytes.to_vec()))
    }

    /// Picture variants and sizes this node remembers from its log (`None`
    /// without one).
    pub fn cached_pictures(&self) -> Option<usize> {
        self.pictures.remembered()
    }

    /// Refuses content whose picture is not stored: checked in the writer,
    /// after the picture was made durable, so the check cannot be stale.
    fn check_picture(&self, content: &Content) -> Result<(), DomainError> {
        match content.picture() {
            Some(p) if self.picture(&p.hash)?.is_none() => {
                Err(DomainError::NoSuchPicture(p.hash.clone()))
            }
            _ => Ok(()),
        }
    }

    /// A free slug for `author`'s fork of `parent`, to suggest in a form.
    pub fn suggest_fork_slug(&self, parent: &Slug, author: &str) -> Result<Slug, DomainError> {
        free_fork_slug(&self.snapshot(), parent, author)
    }

    /// Creates a recipe; the slug must be free. The draft is parsed here,
    /// and refused with its first mistake.
    pub fn create(
        &self,
        slug: &Slug,
        content: ContentDraft,
        change: &Change,
    ) -> Result<TxReport, DomainError> {
        let content = content.normalized()?;
        let mut tx = Transaction::new();
        tx.map(new_recipe_map(
            "recipe",
            slug,
            &content,
            None,
            change,
            &self.attrs,
        ));
        stamp(&mut tx, change, &self.attrs)?;
        let (report, ()) = self.transact_once(change, |db| -> Result<_, DomainError> {
            refuse_taken(&self.view_of(db), slug)?;
            self.check_picture(&content)?;
            Ok((&tx, ()))
        })?;
        Ok(report)
    }

    /// Creates a recipe brought in from another site: its lineage starts at
    /// `source`. Its slug is `slug`, numbered (`-2`, `-3`...) if taken,
    /// chosen inside the writer; returns the slug it got.
    pub fn import(
        &self,
        slug: &Slug,
        content: ContentDraft,
        source: &Source,
        change: &Change,
    ) -> Result<(Slug, TxReport), DomainError> {
        let attrs = &self.attrs;
        let content = content.normalized()?;
        let (report, slug) = self.transact_once(change, |db| -> Result<_, DomainError> {
            let view = self.view_of(db);
            let slug = free_slug(&view, slug)?;
            self.check_picture(&content)?;
            let mut tx = Transaction::new();
            tx.map(
                new_recipe_map("recipe", &slug, &content, None, change, &self.attrs)
                    .with(attrs.source_url, source.url.as_str())
                    .with(attrs.source_name, source.name.as_str()),
            );
            stamp(&mut tx, change, &self.attrs)?;
            Ok((tx, slug))
        })?;
        Ok((slug, report))
    }

    fn view_of(&self, db: &Db) -> Snapshot {
        Snapshot::new(db.clone(), self.attrs)
    }

    /// Adds many new recipes in one transaction (the synthetic catalog),
    /// without waiting for it to be durable: the caller waits once per
    /// group (`Store::wait_durable`). Each is `(tempid, slug, content,
    /// fork)`; tempids may be forked by later entries of the same batch.
    pub(crate) fn create_batch(
        &self,
        recipes: &[(String, Slug, Content, Option<ForkOf>)],
        change: &Change,
    ) -> Result<TxReport, DomainError> {
        let mut tx = Transaction::new();
        for (tempid, slug, content, fork) in recipes {
            tx.map(new_recipe_map(
                tempid,
                slug,
                content,
                fork.as_ref(),
                change,
                &self.attrs,
            ));
        }
        stamp(&mut tx, change, &self.attrs)?;
        let (report, ()) = self
            .store
            .transact_deferred_with(|db| -> Result<_, DomainError> {
                let view = self.view_of(db);
                for (_, slug, ..) in recipes {
                    refuse_taken(&view, slug)?;
                }
                Ok((&tx, ()))
            })?;
        Ok(report)
    }

    /// Makes `content`, parsed, the recipe's new version. `based_on` is the
    /// version the author edited: if the recipe has moved on since, the
    /// edit is refused (`Stale`) and nothing is written. Refuses an edit
    /// that changes nothing.
    pub fn edit(
        &self,
        slug: &Slug,
        based_on: VersionNumber,
        content: ContentDraft,
        change: &Change,
    ) -> Result<TxReport, DomainError> {
        let content = content.normalized()?;
        let mut stamped = Transaction::new();
        stamp(&mut stamped, change, &self.attrs)?;
        let (report, ()) = self.transact_once(change, |db| -> Result<_, DomainError> {
            let view = self.view_of(db);
            // Decided here, on the latest value: a recipe retired since the
            // form was shown takes no new version.
            let recipe = view.current(slug)?;
            check_author(slug, &recipe, change)?;
            check_based_on(slug, &recipe, based_on)?;
            self.check_picture(&content)?;
            let mut tx = self.edit_transaction(&view, &recipe, &content, change)?;
            tx.extend(stamped.clone());
            Ok((tx, ()))
        })?;
        Ok(report)
    }

    /// The datoms that make `recipe` (as `view` has it) read as `content`,
    /// a new version; refused if it would change nothing.
    fn edit_transaction(
        &self,
        view: &Snapshot,
        recipe: &Recipe,
        content: &Content,
        change: &Change,
    ) -> Result<Transaction, DomainError> {
        if recipe.content == *content {
            return Err(DomainError::NothingChanged);
        }
        // The history page lists this line; decided here, against the value
        // the edit applies to, so listing history never diffs versions.
        let what = diff::summary(&recipe.content, content);
        self.version_transaction(view, recipe, content, change, what, None)
    }

    /// The datoms of a new version of `recipe` (as `view` has it) that
    /// reads as `content`, its history line `what`; `brought_in`, the
    /// parent's version it merges and that version's content, for a fork
    /// bringing in its parent's changes. A fork's version records whether
    /// it has changes of its own (`:recipe/own-changes`), against the
    /// parent's version it agrees with once this version is saved.
    fn version_transaction(
        &self,
        view: &Snapshot,
        recipe: &Recipe,
        content: &Content,
        change: &Change,
        what: String,
        brought_in: Option<(VersionNumber, &Content)>,
    ) -> Result<Transaction, DomainError> {
        let e = recipe.id.entity();
        let old = &recipe.content;
        let mut tx = Transaction::new();
        let attrs = &self.attrs;
        Self::changed_scalars(&mut tx, e, old, content, attrs);
        set_difference(&mut tx, e, attrs.tags, old.tags(), content.tags());
        // Search terms were written beside the content until search moved
        // to its own index (`domain::search`); a recipe written before
        // still holds them, and its first edit since retracts them.
        let old_terms: Vec<String> = view.strings(e, self.attrs.terms)?;
        set_difference(&mut tx, e, attrs.terms, &old_terms, &[]);
        changed_parts(view, &mut tx, e, content)?;
        let count = next_count(recipe)?;
        tx.add(e, attrs.version_count, count);
        if recipe.forked_from.is_some() {
            let own = match brought_in {
                Some((_, base)) => merges::has_own_changes(base, content),
                None => view.has_own_changes(recipe, content)?,
            };
            if recipe.own_changes != Some(own) {
                tx.add(e, attrs.own_changes, own);
            }
        }
        suggestions::follow_fork(view, recipe, count, brought_in.map(|(v, _)| v), &mut tx)?;
        tx.tx_attr(attrs.tx_change, what);
        tx.add(
            e,
            attrs.updated_at,
            Value::Instant(change.at.unwrap_or_else(crate::store::now_millis)),
        );
        Ok(tx)
    }

    /// The title, the picture's parts and each field of the content, where
    /// the new version's `content` says another than the `old`: the new
    /// value asserted, or the old one retracted.
    fn changed_scalars(
        tx: &mut Transaction,
        e: EntityId,
        old: &Content,
        content: &Content,
        attrs: &Attrs,
    ) {
        let picture = |c: &Content, part: fn(&Picture) -> Value| c.picture().map(part);
        let fields = FIELDS
            .iter()
            .zip(attrs.fields)
            .map(|(field, id)| (id, field.value(old), field.value(content)));
        let scalars = [
            (
                attrs.title,
                Some(Value::from(old.title())),
                Some(Value::from(content.title())),
            ),
            (
                attrs.picture,
                picture(old, |p| Value::from(p.hash.as_str())),
                picture(content, |p| Value::from(p.hash.as_str())),
            ),
            (
                attrs.picture_alt,
                picture(old, |p| Value::from(p.alt.as_str())),
                picture(content, |p| Value::from(p.alt.as_str())),
            ),
            (
                attrs.picture_width,
                picture(old, |p| Value::Long(i64::from(p.width))),
                picture(content, |p| Value::Long(i64::from(p.width))),
            ),
            (
                attrs.picture_height,
                picture(old, |p| Value::Long(i64::from(p.height))),
                picture(content, |p| Value::Long(i64::from(p.height))),
            ),
        ];
        for (attr, before, after) in scalars.into_iter().chain(fields) {
            match (before, after) {
                (before, Some(after)) if before.as_ref() != Some(&after) => {
                    tx.add(e, attr, after);
                }
                (Some(before), None) => {
                    tx.retract(e, attr, before);
                }
                _ => {}
            }
        }
    }

    /// Forks `parent` at `version` (its newest when `None`) into a new recipe
    /// under `slug` (the parent's slug and the author's handle when `None`,
    /// numbered if taken), with `changes` applied to a draft of the copied
    /// content, parsed as `create` parses its draft.
    pub fn fork(
        &self,
        parent: &Slug,
        version: Option<VersionNumber>,
        slug: Option<&Slug>,
        changes: impl Fn(ContentDraft) -> ContentDraft,
        change: &Change,
    ) -> Result<(Slug, TxReport), DomainError> {
        let mut stamped = Transaction::new();
        stamp(&mut stamped, change, &self.attrs)?;
        let (report, slug) = self.transact_once(change, |db| -> Result<_, DomainError> {
            let view = self.view_of(db);
            let (map, slug) = self.fork_map(&view, parent, version, slug, &changes, change)?;
            let mut tx = Transaction::new();
            tx.map(map);
            tx.extend(stamped.clone());
            Ok((tx, slug))
        })?;
        Ok((slug, report))
    }

    /// The new fork's entity (for `fork`, on the latest value `view`), and
    /// its slug.
    fn fork_map(
        &self,
        view: &Snapshot,
        parent: &Slug,
        version: Option<VersionNumber>,
        slug: Option<&Slug>,
        changes: impl Fn(ContentDraft) -> ContentDraft,
        change: &Change,
    ) -> Result<(EntityMap, Slug), DomainError> {
        // A retired recipe is not forked, whatever the request: decided
        // here, on the latest value, not only by the form's page.
        let recipe = view.current(parent)?;
        let versions = view.versions(recipe.id)?;
        let number = version.unwrap_or_else(|| recipe.newest());
        let at = Snapshot::nth_version(parent, &versions, number)?;
        let forked = view.content_at(recipe.id, at.basis)?;
        let content = changes(forked.to_draft()).normalized()?;
        self.check_picture(&content)?;
        let slug = match slug {
            Some(slug) => {
                refuse_taken(view, slug)?;
                slug.clone()
            }
            None => free_fork_slug(view, parent, &change.author)?,
        };
        let fork = ForkOf {
            parent: EntityRef::Id(recipe.id.entity()),
            at_tx: EntityRef::Id(at.basis.tx()),
            at_version: i64::from(number.get()),
        };
        let map = new_recipe_map("fork", &slug, &content, Some(&fork), change, &self.attrs).with(
            self.attrs.own_changes,
            merges::has_own_changes(&forked, &content),
        );
        Ok((map, slug))
    }

    /// Records `fork`, made on another site, as a fork of the recipe with
    /// `parent` (its site told this one): decided on the latest value, the
    /// parent must be here and not retired; told again (by its address),
    /// it is the same fork, its title and author as told last.
    pub fn record_remote_fork(
        &self,
        parent: &Slug,
        fork: &super::RemoteFork,
    ) -> Result<TxReport, DomainError> {
        let attrs = &self.attrs;
        let (report, ()) = self.store.transact_with(|db| -> Result<_, DomainError> {
            let view = self.view_of(db);
            let recipe = view.current(parent)?;
            let known = db.entity_with(attrs.remote_fork_url, &Value::from(fork.url.as_str()))?;
            if let Some(known) = known {
                // Told again only by whoever told it first: another actor
                // of its site cannot re-point or rename it.
                if view.string(known, attrs.remote_fork_by)?.as_deref() != Some(fork.by.as_str()) {
                    return Err(DomainError::Invalid(format!(
                        "{} was told of by another",
                        fork.url
                    )));
                }
            }
            if known.is_none() && view.remote_fork_count(recipe.id)? >= MAX_REMOTE_FORKS {
                return Err(DomainError::Invalid(format!(
                    "{parent} has {MAX_REMOTE_FORKS} forks on other sites, all it keeps"
                )));
            }
            let mut tx = Transaction::new();
            tx.map(
                EntityMap::anonymous()
                    .with(attrs.remote_fork_url, fork.url.as_str())
                    .with(attrs.remote_fork_of, EntityRef::Id(recipe.id.entity()))
                    .with(attrs.remote_fork_name, fork.name.as_str())
                    .with(attrs.remote_fork_by, fork.by.as_str()),
            );
            Ok((tx, ()))
        })?;
        Ok(report)
    }

    /// Forgets the remote fork at `url` (its site deleted it); whether
    /// there was one.
    pub fn forget_remote_fork(&self, url: &str) -> Result<bool, DomainError> {
        let attrs = &self.attrs;
        let wanted = Value::from(url);
        if self
            .store
            .db()
            .entity_with(attrs.remote_fork_url, &wanted)?
            .is_none()
        {
            return Ok(false);
        }
        let (_, forgot) = self.store.transact_with(|db| -> Result<_, DomainError> {
            let mut tx = Transaction::new();
            let Some(fork) = db.entity_with(attrs.remote_fork_url, &Value::from(url))? else {
                return Ok((tx, false));
            };
            tx.retract_entity(EntityRef::Id(fork));
            Ok((tx, true))
        })?;
        Ok(forgot)
    }

    /// Hides a recipe from the catalog; it stays in its forks' lineage and
    /// every version stays readable. `based_on` is the version the author
    /// saw, as for `edit`.
    pub fn retire(
        &self,
        slug: &Slug,
        based_on: VersionNumber,
        change: &Change,
    ) -> Result<TxReport, DomainError> {
        let attrs = &self.attrs;
        let mut stamped = Transaction::new();
        stamp(&mut stamped, change, &self.attrs)?;
        let (report, ()) = self.transact_once(change, |db| -> Result<_, DomainError> {
            let recipe = self.view_of(db).recipe(slug)?;
            check_author(slug, &recipe, change)?;
            check_based_on(slug, &recipe, based_on)?;
            if recipe.retired {
                return Err(DomainError::NothingChanged);
            }
            let mut tx = Transaction::new();
            tx.add(recipe.id.entity(), attrs.retired, true).add(
                recipe.id.entity(),
                attrs.version_count,
                next_count(&recipe)?,
            );
            tx.tx_attr(attrs.tx_change, RETIRED);
            suggestions::close_all_of(&self.view_of(db), recipe.id, &mut tx)?;
            tx.extend(stamped.clone());
            Ok((tx, ()))
        })?;
        Ok(report)
    }
}

use super::pictures::KEYSPACE as PICTURES;

/// A picture's record from its stored size (`"{width} {height}"`): none
/// for a picture not stored, or one being collected.
fn picture_of_size(
    hash: &str,
    size: Option<impl AsRef<[u8]>>,
) -> Result<Option<Picture>, DomainError> {
    let Some(size) = size else {
        return Ok(None);
    };
    if size.as_ref() == unsaved_pictures::COLLECTING {
        return Ok(None);
    }
    let size = String::from_utf8_lossy(size.as_ref());
    let (width, height) = size
        .split_once(' ')
        .and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?)))
        .ok_or_else(|| DomainError::Invalid(format!("picture {hash} has a bad size {size:?}")))?;
    Ok(Some(Picture {
        hash: hash.to_owned(),
        width,
        height,
        alt: String::new(),
    }))
}

/// What a node remembers of the pictures its log keeps
/// (`Keyspace::remembering`): a few hundred pictures' variants.
const PICTURE_MEMORY_BYTES: u64 = 32 << 20;
/// The most forks on other sites a recipe keeps: each is a site's word,
/// and a site could make any number of them.
pub(crate) const MAX_REMOTE_FORKS: usize = 500;

fn variant_key(hash: &str, name: &str) -> Vec<u8> {
    format!("{hash}-{name}").into_bytes()
}

/// The keyspace that holds the key uploads are named with, outside every
/// export: an imported store makes a key of its own, and its pictures keep
/// the names they came with.
const PICTURE_KEY_SPACE: &str = "picture-key";

/// This store's key for naming uploads, made at random the first time (a
/// compare-and-swap, so two openings agree on one).
fn picture_key(store: &Store) -> Result<pictures::NameKey, DomainError> {
    let keys = store.keyspace(PICTURE_KEY_SPACE).map_err(store_error)?;
    if keys.get(b"key").map_err(store_error)?.is_none() {
        let fresh = pictures::NameKey::random();
        keys.compare_and_swap(b"key", None, Some(fresh.as_bytes()))
            .map_err(crate::store::StoreError::from)?;
    }
    let stored = keys.get(b"key").map_err(store_error)?;
    stored
        .and_then(|bytes| pictures::NameKey::from_bytes(&bytes))
        .ok_or_else(|| DomainError::Invalid("the store's picture key is not a key".into()))
}

fn store_error(e: crate::store::StorageError) -> DomainError {
    DomainError::Store(e.into())
}

/// `slug` if no recipe has it, else the first of `slug-2`, `slug-3`... free
/// (a reserved slug counts as taken).
///
/// Decided inside the single writer, so its reads are bounded: the
/// numbered slugs are read in one range read (`Snapshot::numbered_slugs`)
/// and the first number missing is found in memory, however many forks
/// share the base. `with_suffix` shortens a base near the longest slug to
/// make room for the number, so the numbers of each width may have a
/// stem of their own: one range read per stem, one in all but for such a
/// base.
fn free_slug(view: &Snapshot, slug: &Slug) -> Result<Slug, DomainError> {
    if !slug.is_reserved() && view.find(slug)?.is_none() {
        return Ok(slug.clone());
    }
    let mut n = 2;
    loop {
        let first = slug.with_suffix(n);
        let stem = stem_of(&first, n).to_owned();
        let taken: BTreeSet<usize> = view
            .numbered_slugs(&stem)?
            .iter()
            .filter_map(|taken| {
                let number = taken[stem.len()..].parse().ok()?;
                (slug.with_suffix(number).as_str() == taken).then_some(number)
            })
            .collect();
        loop {
            let candidate = slug.with_suffix(n);
            if stem_of(&candidate, n) != stem.as_str() {
                break;
            }
            if !taken.contains(&n) && !candidate.is_reserved() {
                return Ok(candidate);
            }
            n += 1;
        }
    }
}

/// The numbered slug `slug-n` without its number: `slug-`.
fn stem_of(numbered: &Slug, n: usize) -> &str {
    let digits = n.to_string().len();
    let text = numbered.as_str();
    &text[..text.len() - digits]
}

/// Refuses a new recipe a slug another recipe, or one of the site's own
/// pages (`Slug::is_reserved`), has.
fn refuse_taken(view: &Snapshot, slug: &Slug) -> Result<(), DomainError> {
    if slug.is_reserved() {
        return Err(DomainError::SlugReserved(slug.to_string()));
    }
    match view.find(slug)? {
        Some(_) => Err(DomainError::SlugTaken(slug.to_string())),
        None => Ok(()),
    }
}

/// Refuses a change by anyone but the recipe's author: decided in the
/// writer, beside `check_based_on`, so that every caller (the web, the
/// CLI, a seed) is held to it, not only the forms.
fn check_author(slug: &Slug, recipe: &Recipe, change: &Change) -> Result<(), DomainError> {
    if recipe.author.as_deref() == Some(change.author.as_str()) {
        Ok(())
    } else {
        Err(DomainError::NotAuthor {
            slug: slug.to_string(),
            title: recipe.content.title().to_owned(),
        })
    }
}

/// Refuses a write based on a version other than the recipe's newest.
fn check_based_on(
    slug: &Slug,
    recipe: &Recipe,
    based_on: VersionNumber,
) -> Result<(), DomainError> {
    let newest = recipe.newest();
    if based_on == newest {
        Ok(())
    } else {
        Err(DomainError::Stale {
            slug: slug.to_string(),
            based_on,
            newest,
        })
    }
}

/// The parent's slug and the author's handle, numbered if that is taken.
fn free_fork_slug(view: &Snapshot, parent: &Slug, author: &str) -> Result<Slug, DomainError> {
    let base = Slug::parse(&format!("{parent}-{author}")).unwrap_or_else(|_| parent.clone());
    free_slug(view, &base)
}

/// A recipe's ordered components (ingredient lines or steps).
struct OrderedParts {
    attr: EntityId,
    position: EntityId,
}

impl OrderedParts {
    /// Makes `old` components read as `new`: those on a longest common
    /// subsequence stay (moved if their position changed), the others are
    /// retracted, and new lines become new components made by `make`.
    fn reconcile<T: PartialEq>(
        &self,
        tx: &mut Transaction,
        e: EntityId,
        old: &[(EntityId, T)],
        new: &[T],
        make: impl Fn(usize, &T) -> EntityMap,
    ) {
        let old_items: Vec<&T> = old.iter().map(|(_, item)| item).collect();
        let new_items: Vec<&T> = new.iter().collect();
        let kept = lcs_pairs(&old_items, &new_items);
        for (j, item) in new.iter().enumerate() {
            match kept.iter().find(|(_, n)| *n == j) {
                Some((i, _)) if *i != j => {
                    tx.add(old[*i].0, self.position, (j + 1) as i64);
                }
                Some(_) => {}
                None => {
                    tx.add(e, self.attr, make(j, item));
                }
            }
        }
        for (i, (id, _)) in old.iter().enumerate() {
            if !kept.iter().any(|(o, _)| *o == i) {
                tx.retract_entity(*id);
            }
        }
    }
}

/// The version count after one more version.
fn next_count(recipe: &Recipe) -> Result<i64, DomainError> {
    recipe
        .newest()
        .next()
        .map(|n| i64::from(n.get()))
        .ok_or_else(|| DomainError::Invalid(format!("{} has too many versions", recipe.slug)))
}

/// The new version's ingredients and steps, each list reconciled with
/// the components the recipe `e` has now.
fn changed_parts(
    view: &Snapshot,
    tx: &mut Transaction,
    e: EntityId,
    content: &Content,
) -> Result<(), DomainError> {
    let attrs = &view.attrs;
    let ingredients = OrderedParts {
        attr: attrs.ingredients,
        position: attrs.ingredient_position,
    };
    ingredients.reconcile(
        tx,
        e,
        &view.ingredient_components(e)?,
        content.ingredients(),
        |i, line| ingredient_map(attrs, i, line),
    );
    let steps = OrderedParts {
        attr: attrs.steps,
        position: attrs.step_position,
    };
    steps.reconcile(
        tx,
        e,
        &view.step_components(e)?,
        content.steps(),
        |i, step| step_map(attrs, i, step),
    );
    Ok(())
}

/// Asserts what `new` has and `old` lacks, retracts the reverse.
fn set_difference(
    tx: &mut Transaction,
    e: EntityId,
    attr: EntityId,
    old: &[String],
    new: &[String],
) {
    let (old, new): (BTreeSet<&String>, BTreeSet<&String>) =
        (old.iter().collect(), new.iter().collect());
    for added in new.difference(&old) {
        tx.add(e, attr, added.as_str());
    }
    for removed in old.difference(&new) {
        tx.retract(e, attr, removed.as_str());
    }
}

/// The transaction's author (created on first use), note and instant.
fn stamp(tx: &mut Transaction, change: &Change, attrs: &Attrs) -> Result<(), DomainError> {
    let handle = change.checked_author().map_err(DomainError::Invalid)?;
    tx.map(EntityMap::new(EntityRef::temp("author")).with(attrs.user_handle, handle.as_str()));
    tx.tx_attr(attrs.tx_author, EntityRef::temp("author"))
        .tx_attr(attrs.tx_note, change.note.trim());
    if let Some(attempt) = &change.attempt {
        tx.tx_attr(attrs.tx_attempt, attempt.as_str());
    }
    if let Some(at) = change.at {
        tx.tx_attr(":db/txInstant", Value::Instant(at));
    }
    Ok(())
}

fn ingredient_map(attrs: &Attrs, index: usize, line: &str) -> EntityMap {
    let parsed = IngredientLine::parse(line);
    let mut map = EntityMap::anonymous()
        .with(attrs.ingredient_position, (index + 1) as i64)
        .with(attrs.ingredient_line, parsed.raw())
        .with(attrs.ingredient_item, parsed.item());
    if let Some(q) = parsed.quantity() {
        map = map.with(attrs.ingredient_quantity, q.amount);
        if let Some(max) = q.up_to {
            map = map.with(attrs.ingredient_quantity_max, max);
        }
    }
    if let Some(unit) = parsed.unit() {
        map = map.with(attrs.ingredient_unit, unit);
    }
    if let Some(note) = parsed.note() {
        map = map.with(attrs.ingredient_note, note);
    }
    map
}

fn step_map(attrs: &Attrs, index: usize, step: &Step) -> EntityMap {
    let mut map = EntityMap::anonymous()
        .with(attrs.step_position, (index + 1) as i64)
        .with(attrs.step_text, step.text.as_str());
    if let Some(section) = &step.section {
        map = map.with(attrs.step_section, section.as_str());
    }
    map
}

/// The entity map of a new recipe: content, components, terms, bookkeeping.
fn new_recipe_map(
    tempid: &str,
    slug: &Slug,
    content: &Content,
    fork: Option<&ForkOf>,
    change: &Change,
    attrs: &Attrs,
) -> EntityMap {
    let mut map = recipe_content_map(tempid, slug, content, change, attrs)
        .with(attrs.author, EntityRef::temp("author"));
    if let Some(fork) = fork {
        map = map
            .with(attrs.forked_from, TxValue::Entity(fork.parent.clone()))
            .with(attrs.forked_at, TxValue::Entity(fork.at_tx.clone()))
            .with(attrs.forked_at_version, fork.at_version);
    }
    map
}

/// A new recipe's first version, with no author: its slug, content, times
/// and version count.
fn recipe_content_map(
    tempid: &str,
    slug: &Slug,
    content: &Content,
    change: &Change,
    attrs: &Attrs,
) -> EntityMap {
    let now = change.at.unwrap_or_else(crate::store::now_millis);
    let mut map = EntityMap::new(EntityRef::temp(tempid))
        .with(attrs.slug, slug.as_str())
        .with(attrs.title, content.title())
        .with(attrs.created_at, Value::Instant(now))
        .with(attrs.updated_at, Value::Instant(now))
        .with(attrs.version_count, 1i64);
    for (field, id) in FIELDS.iter().zip(attrs.fields) {
        if let Some(value) = field.value(content) {
            map = map.with(id, value);
        }
    }
    if let Some(p) = content.picture() {
        map = map
            .with(attrs.picture, p.hash.as_str())
            .with(attrs.picture_alt, p.alt.as_str())
            .with(attrs.picture_width, i64::from(p.width))
            .with(attrs.picture_height, i64::from(p.height));
    }
    if !content.tags().is_empty() {
        map = map.with_many(attrs.tags, content.tags().iter().map(String::as_str));
    }
    if !content.ingredients().is_empty() {
        map = map.with_many(
            attrs.ingredients,
            content
                .ingredients()
                .iter()
                .enumerate()
                .map(|(i, l)| ingredient_map(attrs, i, l)),
        );
    }
    if !content.steps().is_empty() {
        map = map.with_many(
            attrs.steps,
            content
                .steps()
                .iter()
                .enumerate()
                .map(|(i, s)| step_map(attrs, i, s)),
        );
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store with a recipe at each of `slugs`.
    fn recipes_at(slugs: &[String]) -> Recipes {
        let recipes = Recipes::temporary().unwrap();
        let change = Change::by("ann", "first");
        for slug in slugs {
            let content = ContentDraft {
                title: slug.clone(),
                ..ContentDraft::default()
            };
            let slug = Slug::parse(slug).unwrap();
            recipes.create(&slug, content, &change).unwrap();
        }
        recipes
    }

    /// The free slug for `base`, and the index reads it took.
    fn free_with_reads(recipes: &Recipes, base: &str) -> (String, u64) {
        let view = recipes.snapshot();
        let before = view.reads_so_far();
        let free = free_slug(&view, &Slug::parse(base).unwrap()).unwrap();
        (free.to_string(), view.reads_so_far() - before)
    }

    #[test]
    fn the_first_free_number_is_found_in_reads_that_do_not_grow_with_the_numbers_taken() {
        let mut reads = Vec::new();
        for n in [5, 40] {
            // soup, soup-2 .. soup-n but soup-(n - 2), and slugs the range
            // must pass over or leave out: words after the stem, numbers
            // with more after them, a number with a leading zero.
            let mut slugs: Vec<String> = ["soup", "soup-ann", "soup-ann-2", "soup-3-ben"]
                .map(String::from)
                .into();
            slugs.extend((2..=n).filter(|i| *i != n - 2).map(|i| format!("soup-{i}")));
            slugs.push("soup-03".into());
            let recipes = recipes_at(&slugs);
            let (free, read) = free_with_reads(&recipes, "soup");
            assert_eq!(free, format!("soup-{}", n - 2));
            reads.push(read);
            recipes
                .create(
                    &Slug::parse(&free).unwrap(),
                    ContentDraft {
                        title: "Soup".into(),
                        ..ContentDraft::default()
                    },
                    &Change::by("ann", "gap"),
                )
                .unwrap();
            assert_eq!(
                free_with_reads(&recipes, "soup").0,
                format!("soup-{}", n + 1)
            );
            assert_eq!(free_with_reads(&recipes, "broth").0, "broth");
        }
        assert_eq!(
            reads[0], reads[1],
            "reads for 5 and for 40 taken: {reads:?}"
        );
    }

    #[test]
    fn a_reserved_slug_is_taken_and_a_long_base_is_shortened_for_its_number() {
        let recipes = recipes_at(&[]);
        assert_eq!(free_with_reads(&recipes, "new").0, "new-2");
        let long = "a".repeat(80);
        let numbered: Vec<String> = (2..=9).map(|i| format!("{}-{i}", "a".repeat(78))).collect();
        let mut slugs = vec![long.clone()];
        slugs.extend(numbered);
        let recipes = recipes_at(&slugs);
        assert_eq!(
            free_with_reads(&recipes, &long).0,
            format!("{}-10", "a".repeat(77))
        );
    }
}
