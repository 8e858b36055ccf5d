//! The demo fixture and the synthetic catalog.
//!
//! The demo seed is one EDN file per recipe (see `seed/README.md`), embedded
//! in the binary. Loading it is two stages: `plan` reads every file, checks
//! it, and works out each version's whole content and the order of all
//! versions in time; only if every file is right does `apply` write them,
//! one transaction per version, with the versions' own instants, authors
//! and notes. A mistake is reported with its file and line and writes
//! nothing.
//!
//! # Layout
//! - `file`: reading one recipe file into a `SeedRecipe`
//! - `synthetic`: N recipes in fork forests of a chosen shape

mod file;
pub mod synthetic;

use std::collections::HashMap;

use crate::domain::{Change, Content, DomainError, Recipes, Slug, VersionNumber};
use crate::store::Store;
use file::{SeedRecipe, SeedVersion};

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
    pub basis: u64,
}

/// The demo seed's files, as embedded at build time.
pub fn demo_files() -> Vec<(String, String)> {
    embedded::FILES
        .iter()
        .map(|(name, text)| (name.to_string(), text.to_string()))
        .collect()
}

/// One version to write: whose, what it says, and how it is made.
#[derive(Debug, Clone)]
pub struct PlannedVersion {
    pub slug: Slug,
    pub content: Content,
    pub change: Change,
    /// For a fork's first version: the parent and its version number.
    pub fork_of: Option<(Slug, usize)>,
    pub first: bool,
}

/// Reads and checks every file, and orders all versions in time.
pub fn plan(files: &[(String, String)]) -> Result<Vec<PlannedVersion>, SeedError> {
    let recipes: Vec<SeedRecipe> = files
        .iter()
        .map(|(name, text)| file::read(name, text))
        .collect::<Result<_, _>>()?;
    let by_slug: HashMap<&str, &SeedRecipe> =
        recipes.iter().map(|r| (r.slug.as_str(), r)).collect();
    if by_slug.len() != recipes.len() {
        let mut seen = HashMap::new();
        for r in &recipes {
            if let Some(first) = seen.insert(r.slug.as_str(), &r.file) {
                return Err(SeedError {
                    file: r.file.clone(),
                    line: 1,
                    message: format!("the slug {} is also used by {first}", r.slug),
                });
            }
        }
    }
    // Forks name existing recipes, at versions they have, later than those.
    for recipe in &recipes {
        let Some(fork) = &recipe.forks else { continue };
        let fail = |message: String| SeedError {
            file: recipe.file.clone(),
            line: fork.line,
            message,
        };
        let parent = by_slug
            .get(fork.slug.as_str())
            .ok_or_else(|| fail(format!("it forks {}, which is not in the seed", fork.slug)))?;
        // No recipe may be its own ancestor. Checked before the times, which
        // a cycle also contradicts, so that a cycle is named as one.
        let mut at = recipe;
        let mut steps = 0;
        while let Some(up) = &at.forks {
            steps += 1;
            if up.slug == recipe.slug || steps > recipes.len() {
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
            return Err(SeedError {
                file: recipe.file.clone(),
                line: recipe.versions[0].line,
                message: format!(
                    "its first version is not later than version {} of {}",
                    fork.version, fork.slug
                ),
            });
        }
    }
    // Each version's whole content: the previous one (or the forked
    // parent's) with the version's fields over it. Parents first.
    let mut contents: HashMap<&str, Vec<Content>> = HashMap::new();
    let mut pending: Vec<&SeedRecipe> = recipes.iter().collect();
    while !pending.is_empty() {
        let before = pending.len();
        let mut waiting = Vec::new();
        for recipe in pending {
            let base = match &recipe.forks {
                None => Some(Content::default()),
                Some(fork) => contents
                    .get(fork.slug.as_str())
                    .map(|versions| versions[fork.version - 1].clone()),
            };
            let Some(mut content) = base else {
                waiting.push(recipe);
                continue;
            };
            let mut versions = Vec::with_capacity(recipe.versions.len());
            for (i, version) in recipe.versions.iter().enumerate() {
                let change = Change {
                    author: version.author.clone(),
                    note: version.note.clone(),
                    at: Some(version.at),
                };
                change.checked_author().map_err(|message| SeedError {
                    file: recipe.file.clone(),
                    line: version.line,
                    message,
                })?;
                content = version.apply(content);
                let normalized = content.clone().normalized().map_err(|message| SeedError {
                    file: recipe.file.clone(),
                    line: version.line,
                    message,
                })?;
                if recipe.forks.is_none()
                    && i == 0
                    && (normalized.ingredients.is_empty() || normalized.steps.is_empty())
                {
                    return Err(SeedError {
                        file: recipe.file.clone(),
                        line: version.line,
                        message: "an original's first version needs ingredients and steps".into(),
                    });
                }
                if i > 0 && versions.last() == Some(&normalized) {
                    return Err(SeedError {
                        file: recipe.file.clone(),
                        line: version.line,
                        message: "this version changes nothing".into(),
                    });
                }
                versions.push(normalized);
            }
            contents.insert(recipe.slug.as_str(), versions);
        }
        if waiting.len() == before {
            let stuck = waiting[0];
            return Err(SeedError {
                file: stuck.file.clone(),
                line: stuck.forks.as_ref().map_or(1, |f| f.line),
                message: "its forks form a cycle".into(),
            });
        }
        pending = waiting;
    }
    let mut planned: Vec<(i64, PlannedVersion)> = Vec::new();
    for recipe in &recipes {
        let slug = Slug::parse(&recipe.slug).expect("checked when read");
        for (i, version) in recipe.versions.iter().enumerate() {
            let SeedVersion {
                at, author, note, ..
            } = version;
            planned.push((
                *at,
                PlannedVersion {
                    slug: slug.clone(),
                    content: contents[recipe.slug.as_str()][i].clone(),
                    change: Change {
                        author: author.clone(),
                        note: note.clone(),
                        at: Some(*at),
                    },
                    fork_of: match (&recipe.forks, i) {
                        (Some(fork), 0) => {
                            Some((Slug::parse(&fork.slug).expect("checked"), fork.version))
                        }
                        _ => None,
                    },
                    first: i == 0,
                },
            ));
        }
    }
    planned.sort_by(|a, b| (a.0, a.1.slug.as_str()).cmp(&(b.0, b.1.slug.as_str())));
    Ok(planned.into_iter().map(|(_, p)| p).collect())
}

/// Writes a plan into `store`, which must hold nothing but (at most) the
/// recipe schema. The schema is installed just before the first version.
pub fn apply(store: &Store, plan: &[PlannedVersion]) -> Result<SeedReport, SeedFailure> {
    let first_at = plan.first().and_then(|p| p.change.at);
    crate::domain::schema::install_at(store, first_at.map(|at| at - 1000))
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
    let mut report = SeedReport {
        recipes: 0,
        versions: 0,
        forks: 0,
        basis: 0,
    };
    // Each recipe's newest version so far: an edit is based on it.
    let mut newest: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for version in plan {
        let count = newest.entry(version.slug.as_str()).or_insert(0);
        match (&version.fork_of, version.first) {
            (Some((parent, number)), _) => {
                let content = version.content.clone();
                recipes.fork(
                    parent,
                    Some(version_number(parent, *number)?),
                    Some(&version.slug),
                    |_| content,
                    &version.change,
                )?;
                report.forks += 1;
                report.recipes += 1;
            }
            (None, true) => {
                recipes.create(&version.slug, version.content.clone(), &version.change)?;
                report.recipes += 1;
            }
            (None, false) => {
                recipes.edit(
                    &version.slug,
                    version_number(&version.slug, *count)?,
                    version.content.clone(),
                    &version.change,
                )?;
            }
        }
        *count += 1;
        report.versions += 1;
    }
    report.basis = store.db().basis();
    Ok(report)
}

/// Version `n` of the recipe `slug`, as the plan counts them (from 1).
fn version_number(slug: &Slug, n: usize) -> Result<VersionNumber, DomainError> {
    VersionNumber::new(n as u64)
        .ok_or_else(|| DomainError::Invalid(format!("{slug} has no version {n}")))
}

/// Plans and applies the embedded demo seed.
pub fn demo(store: &Store) -> Result<SeedReport, SeedFailure> {
    let plan = plan(&demo_files())?;
    apply(store, &plan)
}
