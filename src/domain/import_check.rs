//! The domain's rules for an import file, checked before the import
//! writes anything: the store checks datoms against its schema, and this
//! checks what the recipe attributes mean. Every slug is a slug; no recipe
//! is its own ancestor; a fork names a version its parent has, and a
//! transaction the file holds.
//!
//! It keeps a few numbers per recipe (its parent, its version count, the
//! version it forked), never the recipes' content, so a 100,000-recipe file
//! is checked in a few megabytes.

use std::collections::{HashMap, HashSet};

use super::attributes::{Attr, A};
use super::pictures;
use super::slug::Slug;
use crate::store::ImportCheck;
use crate::store::{Datom, EntityId, Keyword, Value};

/// The attributes whose datoms the check reads, named by the table.
#[derive(Debug, Clone, Copy)]
enum Watched {
    Slug,
    ForkedFrom,
    ForkedAtVersion,
    ForkedAt,
    VersionCount,
    Picture,
}

impl Watched {
    const ALL: [(&'static Attr, Watched); 6] = [
        (A::SLUG, Watched::Slug),
        (A::FORKED_FROM, Watched::ForkedFrom),
        (A::FORKED_AT_VERSION, Watched::ForkedAtVersion),
        (A::FORKED_AT, Watched::ForkedAt),
        (A::VERSION_COUNT, Watched::VersionCount),
        (A::PICTURE, Watched::Picture),
    ];

    /// The watched attribute `ident` names, if any (a keyword is kept
    /// without its leading colon, the table's ident with it).
    fn of(ident: &Keyword) -> Option<Watched> {
        let name = ident.as_str();
        Watched::ALL
            .iter()
            .find(|(attr, _)| attr.ident.strip_prefix(':') == Some(name))
            .map(|&(_, watched)| watched)
    }
}

/// See the module's documentation.
#[derive(Debug, Default)]
pub struct RecipeImportCheck {
    /// Each fork's parent, and the line that said so.
    parents: HashMap<EntityId, (EntityId, usize)>,
    /// Each fork's forked-at version, and its line.
    forked_versions: HashMap<EntityId, (i64, usize)>,
    /// Each fork's forked-at transaction, and its line.
    forked_txs: HashMap<EntityId, (EntityId, usize)>,
    /// Each recipe's newest version count.
    version_counts: HashMap<EntityId, i64>,
    /// Every transaction of the file.
    transactions: HashSet<EntityId>,
    /// Each picture the file carries: its width, and the line of its size.
    pictures: HashMap<String, (u32, usize)>,
    /// Each picture variant the file carries, by key (`{hash}-{variant}`).
    variants: HashSet<String>,
}

impl ImportCheck for RecipeImportCheck {
    fn datom(&mut self, line: usize, ident: &Keyword, datom: &Datom) -> Result<(), String> {
        self.transactions.insert(datom.tx);
        let Some(watched) = Watched::of(ident) else {
            return Ok(());
        };
        let e = datom.e;
        match (watched, &datom.v, datom.added) {
            (Watched::Slug, Value::String(text), true) => {
                Slug::parse(text).map_err(|e| format!("{text:?} is not a recipe slug: {e}"))?;
            }
            (Watched::ForkedFrom, Value::Ref(parent), true) => {
                self.parents.insert(e, (*parent, line));
            }
            (Watched::ForkedFrom, _, false) => {
                self.parents.remove(&e);
            }
            (Watched::ForkedAtVersion, Value::Long(n), true) => {
                self.forked_versions.insert(e, (*n, line));
            }
            (Watched::ForkedAt, Value::Ref(tx), true) => {
                self.forked_txs.insert(e, (*tx, line));
            }
            (Watched::VersionCount, Value::Long(n), true) => {
                self.version_counts.insert(e, *n);
            }
            // Records come before datoms: a picture a recipe names is one
            // the file carries, or the recipe would name nothing.
            (Watched::Picture, Value::String(hash), true)
                if !self.pictures.contains_key(hash.as_ref()) =>
            {
                return Err(format!(
                    "the recipe's picture {hash} is not among the file's pictures"
                ));
            }
            _ => {}
        }
        Ok(())
    }

    /// A picture's size (`{hash}` = `width height`) or a variant's JPEG
    /// bytes (`{hash}-{variant}`), each checked as the store would write it.
    fn record(
        &mut self,
        line: usize,
        keyspace: &str,
        key: &[u8],
        value: &[u8],
    ) -> Result<(), String> {
        if keyspace != pictures::KEYSPACE {
            return Ok(());
        }
        let key = std::str::from_utf8(key).map_err(|_| "a picture's key is not text".to_owned())?;
        match key.split_once('-') {
            None if pictures::is_hash(key) => {
                let size = std::str::from_utf8(value).unwrap_or("");
                let width = size
                    .split_once(' ')
                    .and_then(|(w, h)| Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?)))
                    .filter(|&(w, h)| {
                        (1..=pictures::MAX_STORED_SIDE).contains(&w)
                            && (1..=pictures::MAX_STORED_SIDE).contains(&h)
                    })
                    .map(|(w, _)| w)
                    .ok_or_else(|| format!("picture {key} has no size: {size:?}"))?;
                self.pictures.insert(key.to_owned(), (width, line));
            }
            Some((hash, variant)) if pictures::is_hash(hash) && !variant.is_empty() => {
                if !value.starts_with(&[0xFF, 0xD8, 0xFF]) {
                    return Err(format!("picture variant {key} is not a JPEG"));
                }
                self.variants.insert(key.to_owned());
            }
            _ => return Err(format!("{key:?} is not a picture's key")),
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), (usize, String)> {
        for (hash, &(width, line)) in &self.pictures {
            for variant in pictures::variant_names(width) {
                if !self.variants.contains(&format!("{hash}-{variant}")) {
                    return Err((
                        line,
                        format!("picture {hash} is missing its {variant} variant"),
                    ));
                }
            }
        }
        for (&fork, &(version, line)) in &self.forked_versions {
            let Some(&(parent, _)) = self.parents.get(&fork) else {
                continue;
            };
            let count = self.version_counts.get(&parent).copied().unwrap_or(0);
            if version < 1 || version > count {
                return Err((
                    line,
                    format!(
                        "recipe {fork} forks version {version} of recipe {parent}, which has {count} versions"
                    ),
                ));
            }
        }
        for (&fork, &(tx, line)) in &self.forked_txs {
            if !self.transactions.contains(&tx) {
                return Err((
                    line,
                    format!(
                        "recipe {fork} is forked at transaction {tx}, which the file does not hold"
                    ),
                ));
            }
        }
        self.check_no_cycles()
    }
}

impl RecipeImportCheck {
    /// Walks up from every fork, each recipe once: a walk that meets a
    /// recipe of its own path has found a cycle, named by the line that
    /// closed it.
    fn check_no_cycles(&self) -> Result<(), (usize, String)> {
        let mut done: HashSet<EntityId> = HashSet::new();
        let mut starts: Vec<EntityId> = self.parents.keys().copied().collect();
        starts.sort_unstable();
        for start in starts {
            let mut path: Vec<EntityId> = Vec::new();
            let mut on_path: HashSet<EntityId> = HashSet::new();
            let mut at = start;
            while !done.contains(&at) {
                if !on_path.insert(at) {
                    // Name the line that closed the cycle: the last written.
                    let from = path.iter().position(|&e| e == at).unwrap_or(0);
                    let (line, e) = path[from..]
                        .iter()
                        .map(|e| (self.parents[e].1, *e))
                        .max()
                        .unwrap_or((self.parents[&at].1, at));
                    return Err((
                        line,
                        format!("recipe {e} is its own ancestor: its lineage runs in a cycle"),
                    ));
                }
                path.push(at);
                match self.parents.get(&at) {
                    Some(&(parent, _)) => at = parent,
                    None => break,
                }
            }
            done.extend(path);
        }
        Ok(())
    }
}
