//! The demo fixture and the synthetic catalog.
//!
//! The demo seed is one EDN file per recipe (see `seed/README.md`), embedded
//! in the binary. Loading it is two stages: `plan` reads every file, checks
//! everything a write could refuse (`check`, which works out each
//! version's whole content on the way) and orders all versions in time
//! (`in_time`); only if every file is right does `apply` write them, one
//! transaction per version, with the versions' own instants, authors and
//! notes. A mistake is reported with its file and line and writes nothing.
//!
//! # Layout
//! - `file`: reading one recipe file into a `SeedRecipe`
//! - `synthetic`: N recipes in fork forests of a chosen shape

mod file;
pub mod illustration;
pub mod synthetic;

use std::collections::HashMap;

use crate::domain::merge::{Merge, Unresolved};
use crate::domain::pictures::Picture;
use crate::domain::{
    Change, Content, ContentDraft, DomainError, Recipes, Review, Slug, VersionNumber,
};
use crate::store::Store;
use file::{SeedRecipe, SeedTakes};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/demo_seed.rs"));
}

/// A seed file's mistake, at its line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct SeedError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

/// Why seeding failed.
#[derive(Debug, thiserror::Error)]
pub enum SeedFailure {
    #[error(transparent)]
    File(#[from] SeedError),
    #[error("the store already has recipes; seeding needs an empty store (or --force)")]
    NotEmpty,
    #[error(transparent)]
    Domain(#[from] DomainError),
}

/// What a seeding wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedReport {
    pub recipes: usize,
    pub versions: usize,
    pub forks: usize,
    /// Suggestions made (each taken by a later version).
    pub suggestions: usize,
    pub basis: u64,
}

/// The demo seed's files, as embedded at build time.
pub fn demo_files() -> Vec<(String, String)> {
    embedded::FILES
        .iter()
        .map(|(name, text)| (name.to_string(), text.to_string()))
        .collect()
}

/// One version to write: whose, what it says, and how it is made; or,
/// where `suggests` says so, the suggestion a later version takes (no
/// version of its own).
#[derive(Debug, Clone)]
pub struct PlannedVersion {
    pub slug: Slug,
    /// Parsed when it was planned; a draft, as the writer takes it, so
    /// that its drawing can be added.
    pub content: ContentDraft,
    pub change: Change,
    /// For a fork's first version: the parent and its version number.
    pub fork_of: Option<(Slug, usize)>,
    /// For a version that brings in its parent's changes: the parent's
    /// version number.
    pub brings_in: Option<usize>,
    /// For a version that takes a fork's suggestion: the fork.
    pub takes: Option<Slug>,
    /// Not a version but a suggestion, made by the fork `slug` with this
    /// message (`change` is its cook's), that a later version takes.
    pub suggests: Option<String>,
    pub first: bool,
}

/// Reads and checks every file, and orders all versions in time.
pub fn plan(files: &[(String, String)]) -> Result<Vec<PlannedVersion>, SeedError> {
    let recipes: Vec<SeedRecipe> = files
        .iter()
        .map(|(name, text)| file::read(name, text))
        .collect::<Result<_, _>>()?;
    let contents = check(&recipes)?;
    Ok(in_time(&recipes, contents))
}

/// Each recipe's versions' whole contents, by slug.
type Contents<'a> = HashMap<&'a str, Vec<Content>>;

/// A mistake in `recipe`'s file at `line`.
fn mistake(recipe: &SeedRecipe, line: usize, message: impl Into<String>) -> SeedError {
    SeedError {
        file: recipe.file.clone(),
        line,
        message: message.into(),
    }
}

/// Everything in the files that writing them would refuse, so that it is
/// refused before anything is written: slugs used twice, then each
/// recipe's fork, then each version's change and content. A version's
/// content is the previous version's (or the forked parent's) with the
/// version's fields over it, or a merge of another recipe's version onto
/// it, so the contents are worked out here, every version of the seed in
/// time order (what a version builds on is always older: `check_fork`,
/// `SoFar::brought_in` and `SoFar::taken` see to it), and returned for
/// `in_time`.
fn check(recipes: &[SeedRecipe]) -> Result<Contents<'_>, SeedError> {
    let by_slug = unique_slugs(recipes)?;
    for recipe in recipes {
        check_fork(recipe, &by_slug)?;
    }
    let mut order: Vec<(&SeedRecipe, usize)> = recipes
        .iter()
        .flat_map(|recipe| (0..recipe.versions.len()).map(move |i| (recipe, i)))
        .collect();
    // Stable: a recipe's own versions are in time order already.
    order.sort_by_key(|(recipe, i)| recipe.versions[*i].at);
    let mut so_far = SoFar {
        by_slug,
        recipes: HashMap::with_capacity(recipes.len()),
        last_taken: HashMap::new(),
    };
    for (recipe, i) in order {
        so_far.step(recipe, i)?;
    }
    Ok(so_far
        .recipes
        .into_iter()
        .map(|(slug, made)| (slug, made.contents))
        .collect())
}

/// The versions of the seed worked out so far, oldest first.
struct SoFar<'a> {
    by_slug: HashMap<&'a str, &'a SeedRecipe>,
    recipes: HashMap<&'a str, Made>,
    /// When each fork's last suggestion was taken.
    last_taken: HashMap<&'a str, i64>,
}

/// One recipe's versions worked out so far.
struct Made {
    contents: Vec<Content>,
    /// The parent's version it last agreed with (forked, brought in, or
    /// that took its suggestion whole); 0 for an original.
    synced: usize,
    /// Where its next merge with its parent starts, when that is not the
    /// parent's version `synced`: after the parent took its suggestion
    /// beside changes of its own, the fork's version suggested as it was
    /// suggested (`domain::MergeBase`).
    base: Option<Content>,
    /// Its cook: the author of its first version.
    owner: Slug,
}

/// The recipes by slug, once no two files use the same one.
fn unique_slugs(recipes: &[SeedRecipe]) -> Result<HashMap<&str, &SeedRecipe>, SeedError> {
    let mut by_slug = HashMap::with_capacity(recipes.len());
    for recipe in recipes {
        if let Some(first) = by_slug.insert(recipe.slug.as_str(), recipe) {
            return Err(mistake(
                recipe,
                1,
                format!("the slug {} is also used by {}", recipe.slug, first.file),
            ));
        }
    }
    Ok(by_slug)
}

/// A fork names a recipe in the seed, is not its own ancestor, and forks a
/// version its parent has, later than that version.
fn check_fork(recipe: &SeedRecipe, by_slug: &HashMap<&str, &SeedRecipe>) -> Result<(), SeedError> {
    let Some(fork) = &recipe.forks else {
        return Ok(());
    };
    let fail = |message: String| mistake(recipe, fork.line, message);
    let parent = by_slug
        .get(fork.slug.as_str())
        .ok_or_else(|| fail(format!("it forks {}, which is not in the seed", fork.slug)))?;
    // Checked before the times, which a cycle also contradicts, so that a
    // cycle is named as one. A walk longer than the seed is a cycle above
    // this recipe; a parent not in the seed ends the walk, and is refused
    // when its own fork is checked.
    let mut at = recipe;
    let mut steps = 0;
    while let Some(up) = &at.forks {
        steps += 1;
        if up.slug == recipe.slug || steps > by_slug.len() {
            return Err(fail(format!(
                "{} forks itself through its ancestors (a cycle)",
                recipe.slug
            )));
        }
        match by_slug.get(up.slug.as_str()) {
            Some(next) => at = next,
            None => break,
        }
    }
    let forked = parent
        .versions
        .get(fork.version.wrapping_sub(1))
        .ok_or_else(|| {
            fail(format!(
                "{} has {} versions, not {}",
                fork.slug,
                parent.versions.len(),
                fork.version
            ))
        })?;
    if recipe.versions[0].at <= forked.at {
        return Err(mistake(
            recipe,
            recipe.versions[0].line,
            format!(
                "its first version is not later than version {} of {}",
                fork.version, fork.slug
            ),
        ));
    }
    Ok(())
}

impl<'a> SoFar<'a> {
    /// Works out version `i` of `recipe`, checked as the domain would: the
    /// change's author (the recipe's own cook) and note, the content
    /// normalised, an original's first version with ingredients and steps,
    /// and no version that changes nothing.
    fn step(&mut self, recipe: &'a SeedRecipe, i: usize) -> Result<(), SeedError> {
        let version = &recipe.versions[i];
        let fail = |message: String| mistake(recipe, version.line, message);
        let author = version.change().checked_author().map_err(fail)?;
        let slug = recipe.slug.as_str();
        // None for an original's first version, which starts from nothing.
        let before = match (i, self.recipes.get(slug), &recipe.forks) {
            (0, _, Some(fork)) => {
                Some(self.recipes[fork.slug.as_str()].contents[fork.version - 1].clone())
            }
            (0, _, None) => None,
            (_, Some(made), _) => {
                // As the domain decides an edit: only the recipe's own cook.
                if author != made.owner {
                    return Err(fail(format!(
                        "only {}, whose recipe it is, adds versions to it, not {author}: another cook forks it",
                        made.owner
                    )));
                }
                Some(made.contents.last().expect("a first version").clone())
            }
            (_, None, _) => unreachable!("a recipe's versions are worked out in order"),
        };
        // A merge's content is parsed by the merge.
        let normalized = match (version.brings_in, &version.takes) {
            (None, None) => version
                .apply(before.map(Content::into_draft).unwrap_or_default())
                .normalized()
                .map_err(|e| fail(e.to_string()))?,
            (Some(upto), _) => self.brought_in(recipe, i, upto, before)?,
            (None, Some(takes)) => {
                let taken = self.taken(recipe, i, takes, before)?;
                self.last_taken.insert(takes.fork.as_str(), version.at);
                taken
            }
        };
        if recipe.forks.is_none()
            && i == 0
            && (normalized.ingredients().is_empty() || normalized.steps().is_empty())
        {
            return Err(fail(
                "an original's first version needs ingredients and steps".into(),
            ));
        }
        let made = self.recipes.entry(slug).or_insert_with(|| Made {
            contents: Vec::with_capacity(recipe.versions.len()),
            synced: recipe.forks.as_ref().map_or(0, |f| f.version),
            base: None,
            owner: author,
        });
        // A merge that changes nothing is no version either, as the site
        // refuses it.
        if i > 0 && made.contents.last() == Some(&normalized) {
            return Err(fail("this version changes nothing".into()));
        }
        if let Some(upto) = version.brings_in {
            made.synced = upto;
            made.base = None;
        }
        made.contents.push(normalized);
        if let Some(takes) = &version.takes {
            self.took(recipe, i, takes);
        }
        Ok(())
    }

    /// Where the fork of `takes` agrees with `recipe` once version `i` of
    /// it took the fork's suggestion, as the domain reads it: in step with
    /// that version when `recipe` had no change of its own since the
    /// fork's base; otherwise still behind, its next merge starting from
    /// its version suggested.
    fn took(&mut self, recipe: &SeedRecipe, i: usize, takes: &SeedTakes) {
        let parent = &self.recipes[recipe.slug.as_str()];
        let before = parent.contents[i - 1].clone();
        let fork = &self.recipes[takes.fork.as_str()];
        let base = self.base_of(fork, recipe.slug.as_str());
        let suggested =
            crate::domain::merge::as_suggested(&base, &fork.contents[takes.version - 1]);
        let fork = self.recipes.get_mut(takes.fork.as_str()).expect("checked");
        if before == base {
            fork.synced = i + 1;
            fork.base = None;
        } else {
            fork.base = Some(suggested);
        }
    }

    /// The content `fork`'s next merge with its parent `parent` starts from.
    fn base_of(&self, fork: &Made, parent: &str) -> Content {
        match &fork.base {
            Some(base) => base.clone(),
            None => self.recipes[parent].contents[fork.synced - 1].clone(),
        }
    }

    /// Version `i` of the fork `recipe`, bringing in its parent's version
    /// `upto` onto `before`: the merge of the parent's changes since the
    /// version the fork last agreed with. It must name a later version,
    /// made before it, and merge without a conflict (a seed has no cook to
    /// choose).
    fn brought_in(
        &self,
        recipe: &SeedRecipe,
        i: usize,
        upto: usize,
        before: Option<Content>,
    ) -> Result<Content, SeedError> {
        let version = &recipe.versions[i];
        let fail = |message: String| mistake(recipe, version.line, message);
        let (Some(fork), Some(before)) = (recipe.forks.as_ref().filter(|_| i > 0), before) else {
            return Err(fail(
                "only a fork's later version brings in its parent's changes".into(),
            ));
        };
        let parent = self.by_slug[fork.slug.as_str()];
        let made = parent.versions.get(upto - 1).ok_or_else(|| {
            fail(format!(
                "{} has {} versions, not {upto}",
                parent.slug,
                parent.versions.len()
            ))
        })?;
        let synced = self.recipes[recipe.slug.as_str()].synced;
        if upto <= synced {
            return Err(fail(format!(
                "it already has the changes of {} up to version {synced}",
                parent.slug
            )));
        }
        if made.at >= version.at {
            return Err(fail(format!(
                "it is not later than version {upto} of {}",
                parent.slug
            )));
        }
        // As a form brings in: the parent's newest then.
        if parent
            .versions
            .get(upto)
            .is_some_and(|next| next.at < version.at)
        {
            return Err(fail(format!(
                "{} has a version {} before it: a fork brings in its parent's newest version",
                parent.slug,
                upto + 1
            )));
        }
        let base = self.base_of(&self.recipes[recipe.slug.as_str()], parent.slug.as_str());
        let parent_contents = &self.recipes[parent.slug.as_str()].contents;
        let merge = crate::domain::merge::merge(&base, &before, &parent_contents[upto - 1]);
        clean(&merge).map_err(|refused| {
            fail(refused.unwrap_or_else(|| {
                format!(
                    "version {upto} of {} conflicts with it: a seed's merge must be clean",
                    parent.slug
                )
            }))
        })
    }

    /// Version `i` of `recipe`, taking the suggestion `takes` of one of its
    /// forks onto `before`: the fork's changes since it last agreed with
    /// `recipe`, but its title and picture, as the domain merges them. The fork's
    /// version must be its newest from when it is suggested until it is
    /// taken (an open suggestion follows the fork), change something, and
    /// merge without a conflict.
    fn taken(
        &self,
        recipe: &SeedRecipe,
        i: usize,
        takes: &SeedTakes,
        before: Option<Content>,
    ) -> Result<Content, SeedError> {
        let fail = |message: String| mistake(recipe, takes.line, message);
        let version = &recipe.versions[i];
        let Some(before) = before.filter(|_| i > 0) else {
            return Err(fail(
                "a recipe's first version takes no suggestion: it has no forks yet".into(),
            ));
        };
        let fork = self
            .by_slug
            .get(takes.fork.as_str())
            .filter(|fork| fork.forks.as_ref().is_some_and(|f| f.slug == recipe.slug))
            .ok_or_else(|| fail(format!("{} is not a fork of {}", takes.fork, recipe.slug)))?;
        let suggested = fork.versions.get(takes.version - 1).ok_or_else(|| {
            fail(format!(
                "{} has {} versions, not {}",
                fork.slug,
                fork.versions.len(),
                takes.version
            ))
        })?;
        if !(suggested.at < takes.at && takes.at < version.at) {
            return Err(fail(format!(
                "it must be suggested after version {} of {} is made, and taken after that",
                takes.version, fork.slug
            )));
        }
        if fork
            .versions
            .get(takes.version)
            .is_some_and(|next| next.at <= version.at)
        {
            return Err(fail(format!(
                "{} makes a newer version before it is taken: an open suggestion follows it",
                fork.slug
            )));
        }
        // A fork has one suggestion open at a time: made after the one
        // before was taken.
        if let Some(&taken) = self.last_taken.get(fork.slug.as_str()) {
            if takes.at <= taken {
                return Err(fail(format!(
                    "{} already has a suggestion open then, taken at {}: one is open at a time",
                    fork.slug,
                    crate::store::format_rfc3339(taken)
                )));
            }
        }
        let made = &self.recipes[fork.slug.as_str()];
        let base = self.base_of(made, recipe.slug.as_str());
        let fork_content = &made.contents[takes.version - 1];
        let theirs = crate::domain::merge::as_suggested(&base, fork_content);
        if theirs == base {
            return Err(fail(format!(
                "version {} of {} has no change to suggest",
                takes.version, fork.slug
            )));
        }
        clean(&crate::domain::merge::merge(&base, &before, &theirs)).map_err(|refused| {
            fail(refused.unwrap_or_else(|| {
                format!(
                    "version {} of {} conflicts with it: a seed's merge must be clean",
                    takes.version, fork.slug
                )
            }))
        })
    }
}

/// A seed's merge, settled without a choice (a seed has no cook to
/// choose): refused with `None` when it conflicts, and with the parse's
/// words when what it makes could not be saved.
fn clean(merge: &Merge) -> Result<Content, Option<String>> {
    match merge.resolved(&[]) {
        Ok(content) => Ok(content),
        Err(refused @ Unresolved::Refused(_)) => Err(Some(refused.to_string())),
        Err(Unresolved::Count { .. } | Unresolved::Choice { .. }) => Err(None),
    }
}

/// Every version as `apply` writes it, oldest first (ties by slug). A
/// fork's first version is later than the version it forks (`check_fork`),
/// so parents come before their forks here too.
fn in_time(recipes: &[SeedRecipe], mut contents: Contents) -> Vec<PlannedVersion> {
    let by_slug: HashMap<&str, &SeedRecipe> =
        recipes.iter().map(|r| (r.slug.as_str(), r)).collect();
    let mut planned: Vec<PlannedVersion> = Vec::new();
    for recipe in recipes {
        let slug = Slug::parse(&recipe.slug).expect("checked when read");
        let fork_of = recipe
            .forks
            .as_ref()
            .map(|fork| (Slug::parse(&fork.slug).expect("checked"), fork.version));
        let versions = contents.remove(recipe.slug.as_str()).expect("checked");
        for (i, (version, content)) in recipe.versions.iter().zip(versions).enumerate() {
            let takes = version.takes.as_ref().map(|takes| {
                let fork = Slug::parse(&takes.fork).expect("checked");
                let fork_cook = by_slug[takes.fork.as_str()].versions[0].author.clone();
                planned.push(PlannedVersion {
                    slug: fork.clone(),
                    content: ContentDraft::default(),
                    change: Change {
                        author: fork_cook,
                        note: format!("Suggested its changes to {}", recipe.slug),
                        at: Some(takes.at),
                        attempt: None,
                    },
                    fork_of: None,
                    brings_in: None,
                    takes: None,
                    suggests: Some(takes.message.clone()),
                    first: false,
                });
                fork
            });
            planned.push(PlannedVersion {
                slug: slug.clone(),
                content: content.into_draft(),
                change: version.change(),
                fork_of: if i == 0 { fork_of.clone() } else { None },
                brings_in: version.brings_in,
                takes,
                suggests: None,
                first: i == 0,
            });
        }
    }
    planned.sort_by(|a, b| (a.change.at, a.slug.as_str()).cmp(&(b.change.at, b.slug.as_str())));
    planned
}

/// Writes a plan into `store`, which must hold nothing but (at most) the
/// recipe schema. The schema is installed just before the first version.
pub fn apply(store: &Store, plan: &[PlannedVersion]) -> Result<SeedReport, SeedFailure> {
    apply_with(store, plan, Pictures::None)
}

/// Whether a seed's recipes get pictures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pictures {
    None,
    /// Each recipe a drawing of its own, from its first version's content
    /// (`illustration`), kept by its later versions.
    Drawn,
}

/// `apply`, with pictures or without.
pub fn apply_with(
    store: &Store,
    plan: &[PlannedVersion],
    pictures: Pictures,
) -> Result<SeedReport, SeedFailure> {
    let recipes = schema_installed(store, plan)?;
    let mut seeding = Seeding {
        recipes: &recipes,
        report: SeedReport {
            recipes: 0,
            versions: 0,
            forks: 0,
            suggestions: 0,
            basis: 0,
        },
        newest: HashMap::new(),
        suggested: HashMap::new(),
    };
    // Each recipe's picture, drawn from its first version and kept after.
    let drawn: HashMap<&str, Picture> = match pictures {
        Pictures::None => HashMap::new(),
        Pictures::Drawn => draw_all(&recipes, plan)?,
    };
    for planned in plan {
        seeding.apply(planned, &drawn)?;
    }
    let mut report = seeding.report;
    report.basis = store.db().basis();
    Ok(report)
}

/// The recipes of `store`, its schema installed just before the plan's
/// first version; refused if it holds a recipe already.
fn schema_installed(store: &Store, plan: &[PlannedVersion]) -> Result<Recipes, SeedFailure> {
    let first_at = plan.first().and_then(|p| p.change.at);
    crate::domain::site_schema::install_at(store, first_at.map(|at| at - 1000))
        .map_err(DomainError::from)?;
    let recipes = Recipes::open(store.clone())?;
    let slugs = crate::store::Components::any().a(recipes.attrs().slug);
    if store
        .db()
        .datoms(crate::store::Index::Aevt, &slugs)
        .next()
        .is_some()
    {
        return Err(SeedFailure::NotEmpty);
    }
    Ok(recipes)
}

/// A plan being written, and what the versions written so far leave for
/// the next.
struct Seeding<'a> {
    recipes: &'a Recipes,
    report: SeedReport,
    /// Each recipe's newest version so far: an edit is based on it.
    newest: HashMap<&'a str, usize>,
    /// Each fork's suggestion, by number, once made.
    suggested: HashMap<&'a str, u32>,
}

impl<'a> Seeding<'a> {
    /// Writes one planned version (with its recipe's drawing, if it has
    /// one), or makes the suggestion it plans.
    fn apply(
        &mut self,
        planned: &'a PlannedVersion,
        drawn: &HashMap<&str, Picture>,
    ) -> Result<(), SeedFailure> {
        // A fork's newest version, for the suggestion of it taken here.
        let fork_newest = planned
            .takes
            .as_ref()
            .and_then(|fork| self.newest.get(fork.as_str()).copied())
            .unwrap_or(0);
        let count = *self.newest.entry(planned.slug.as_str()).or_insert(0);
        if let Some(message) = &planned.suggests {
            let (number, _) = self.recipes.suggest(
                &planned.slug,
                version_number(&planned.slug, count)?,
                message,
                &planned.change,
            )?;
            self.suggested.insert(planned.slug.as_str(), number);
            self.report.suggestions += 1;
            return Ok(());
        }
        let mut version = std::borrow::Cow::Borrowed(planned);
        if let Some(picture) = drawn.get(planned.slug.as_str()) {
            version.to_mut().content.picture = Some(picture.clone());
        }
        self.write(version.as_ref(), count, fork_newest)?;
        self.newest.insert(planned.slug.as_str(), count + 1);
        self.report.versions += 1;
        Ok(())
    }

    /// Writes `version`, its recipe's version `count + 1`: a fork, a new
    /// recipe, a suggestion taken (of the fork at its version
    /// `fork_newest`), a bring-in or an edit.
    fn write(
        &mut self,
        version: &PlannedVersion,
        count: usize,
        fork_newest: usize,
    ) -> Result<(), SeedFailure> {
        let recipes = self.recipes;
        match (&version.fork_of, version.first) {
            (Some((parent, number)), _) => {
                let content = version.content.clone();
                recipes.fork(
                    parent,
                    Some(version_number(parent, *number)?),
                    Some(&version.slug),
                    |_| content.clone(),
                    &version.change,
                )?;
                self.report.forks += 1;
                self.report.recipes += 1;
            }
            (None, true) => {
                recipes.create(&version.slug, version.content.clone(), &version.change)?;
                self.report.recipes += 1;
            }
            (None, false) if version.takes.is_some() => {
                self.take_suggestion(version, count, fork_newest)?;
            }
            (None, false) if version.brings_in.is_some() => {
                let upto = version.brings_in.unwrap_or(1);
                recipes.bring_in(
                    &version.slug,
                    version_number(&version.slug, count)?,
                    version_number(&version.slug, upto)?,
                    &[],
                    &version.change,
                )?;
            }
            (None, false) => {
                recipes.edit(
                    &version.slug,
                    version_number(&version.slug, count)?,
                    version.content.clone(),
                    &version.change,
                )?;
            }
        }
        Ok(())
    }

    /// Accepts the suggestion `version` takes, made by the fork whose
    /// newest version is `fork_newest`, onto its recipe's version `count`.
    fn take_suggestion(
        &self,
        version: &PlannedVersion,
        count: usize,
        fork_newest: usize,
    ) -> Result<(), SeedFailure> {
        let fork = version.takes.as_ref().map_or("", |f| f.as_str());
        let number =
            self.suggested.get(fork).copied().ok_or_else(|| {
                DomainError::Invalid(format!("{fork} made no suggestion to take"))
            })?;
        // The fork's version suggested is its newest: an open
        // suggestion follows it, and the seed takes it so.
        let fork_version = VersionNumber::new(fork_newest as u64)
            .ok_or_else(|| DomainError::Invalid(format!("{fork} has no version")))?;
        let review = Review::of(version_number(&version.slug, count)?, fork_version);
        self.recipes
            .accept_suggestion(&version.slug, number, review, &[], "", &version.change)?;
        Ok(())
    }
}

/// A drawing of each recipe of `plan`, from its first version, stored: the
/// drawing and encoding (most of a demo seed's time) on every core.
fn draw_all<'a>(
    recipes: &Recipes,
    plan: &'a [PlannedVersion],
) -> Result<HashMap<&'a str, Picture>, SeedFailure> {
    let firsts: Vec<&PlannedVersion> = plan.iter().filter(|v| v.first).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = firsts.len().div_ceil(threads).max(1);
    let prepared: Vec<Result<_, DomainError>> = std::thread::scope(|scope| {
        let workers: Vec<_> = firsts
            .chunks(chunk)
            .map(|versions| {
                scope.spawn(move || {
                    versions
                        .iter()
                        .map(|v| {
                            let drawing = illustration::draw(v.slug.as_str(), &v.content);
                            Ok((v, crate::domain::pictures::prepare_drawn(drawing)?))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a drawing thread panicked"))
            .collect()
    });
    let mut drawn = HashMap::new();
    for result in prepared {
        let (version, prepared) = result?;
        let mut picture = recipes.store_picture(prepared)?;
        picture.alt = illustration::description(&version.content);
        drawn.insert(version.slug.as_str(), picture);
    }
    Ok(drawn)
}

/// Version `n` of the recipe `slug`, as the plan counts them (from 1).
fn version_number(slug: &Slug, n: usize) -> Result<VersionNumber, DomainError> {
    VersionNumber::new(n as u64)
        .ok_or_else(|| DomainError::Invalid(format!("{slug} has no version {n}")))
}

/// Plans and applies the embedded demo seed.
pub fn demo(store: &Store) -> Result<SeedReport, SeedFailure> {
    let plan = plan(&demo_files())?;
    apply_with(store, &plan, Pictures::Drawn)
}
