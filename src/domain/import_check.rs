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

use super::slug::Slug;
use crate::store::transfer::ImportCheck;
use crate::store::{Datom, EntityId, Keyword, Value};

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
}

impl ImportCheck for RecipeImportCheck {
    fn datom(&mut self, line: usize, ident: &Keyword, datom: &Datom) -> Result<(), String> {
        self.transactions.insert(datom.tx);
        let e = datom.e;
        // Idents are kept without their leading colon.
        match (ident.as_str(), &datom.v, datom.added) {
            ("recipe/slug", Value::String(text), true) => {
                Slug::parse(text).map_err(|e| format!("{text:?} is not a recipe slug: {e}"))?;
            }
            ("recipe/forked-from", Value::Ref(parent), true) => {
                self.parents.insert(e, (*parent, line));
            }
            ("recipe/forked-from", _, false) => {
                self.parents.remove(&e);
            }
            ("recipe/forked-at-version", Value::Long(n), true) => {
                self.forked_versions.insert(e, (*n, line));
            }
            ("recipe/forked-at", Value::Ref(tx), true) => {
                self.forked_txs.insert(e, (*tx, line));
            }
            ("recipe/version-count", Value::Long(n), true) => {
                self.version_counts.insert(e, *n);
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), (usize, String)> {
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
