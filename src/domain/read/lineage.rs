//! Where a recipe came from and what it became: the hand-written lineage
//! walk, its forks, and the fork tree of its family.

use std::collections::HashSet;

use super::Snapshot;
use crate::domain::ids::{RecipeId, VersionNumber};
use crate::domain::{DomainError, Source, MAX_LINEAGE};

/// One step up a lineage: an ancestor, and which of its versions the recipe
/// below it forked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ancestor {
    pub id: RecipeId,
    pub forked_version: VersionNumber,
}

/// A recipe in a fork tree, flattened: the tree is a list of these in
/// depth-first order (each recipe before its forks, oldest fork first),
/// each at its depth below the root, so that neither building nor drawing
/// it recurses, however deep the family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForkNode {
    pub id: RecipeId,
    /// 0 for the root.
    pub depth: usize,
}

/// A fork of a recipe here made on another site, as that site told it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteFork {
    /// Its address there.
    pub url: String,
    /// Its title.
    pub name: String,
    /// Who made it: `@ben@b.example`.
    pub by: String,
}

/// A fork tree, flattened (see `ForkNode`), and whether it was cut short.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForkTree {
    pub nodes: Vec<ForkNode>,
    pub truncated: bool,
}

impl Snapshot {
    /// The lineage of recipe `id`: its parent, the parent's parent, and so
    /// on to the original, each with the version of it that was forked.
    ///
    /// The hand-written walk: one EAVT range read per step, over
    /// `:recipe/forked-from` and `:recipe/forked-at-version` (installed side
    /// by side for this). Bounded by `MAX_LINEAGE`; a cycle is an error.
    pub fn lineage(&self, id: RecipeId) -> Result<Vec<Ancestor>, DomainError> {
        let (from, version) = (self.attrs.forked_from, self.attrs.forked_at_version);
        // Adjacent, as `Attrs::resolve` checked: the range holds nothing else.
        let mut out: Vec<Ancestor> = Vec::new();
        let mut seen: HashSet<RecipeId> = HashSet::new();
        let mut at = id;
        loop {
            let mut parent = None;
            let mut forked_version = VersionNumber::FIRST;
            for datom in self.db.entity_attributes(at.entity(), from, version) {
                let datom = datom?;
                if datom.a == from {
                    parent = datom.v.as_ref().map(RecipeId::new);
                } else if let Some(n) = datom.v.as_long().and_then(VersionNumber::stored) {
                    forked_version = n;
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

    /// The original a recipe's lineage starts from (the recipe itself if it
    /// is one).
    pub fn original(&self, id: RecipeId) -> Result<RecipeId, DomainError> {
        Ok(self.lineage(id)?.last().map_or(id, |a| a.id))
    }

    /// The recipes forked directly from `id`, oldest first (ids grow with
    /// time, and the store lists referrers in id order).
    pub fn forks(&self, id: RecipeId) -> Result<Vec<RecipeId>, DomainError> {
        Ok(self
            .db
            .referrers(self.attrs.forked_from, id.entity())?
            .iter()
            .map(|&e| RecipeId::new(e))
            .collect())
    }

    /// For a fork of a recipe on another site: the inbox its author is
    /// told at.
    /// For a fork of a recipe kept from another site: that recipe's
    /// address there.
    pub fn kept_parent_of(&self, fork: &super::Recipe) -> Result<Option<String>, DomainError> {
        let Some((parent, _)) = fork.forked_from else {
            return Ok(None);
        };
        let slug = self.slug_of(parent)?;
        Ok(crate::domain::slug::is_elsewhere(&slug).then_some(slug))
    }

    pub fn source_inbox(&self, id: RecipeId) -> Result<Option<String>, DomainError> {
        self.string(id.entity(), self.attrs.source_inbox)
    }

    /// How many forks of `id` other sites told of.
    pub fn remote_fork_count(&self, id: RecipeId) -> Result<usize, DomainError> {
        Ok(self
            .db
            .referrers(self.attrs.remote_fork_of, id.entity())?
            .len())
    }

    /// The newest `most` forks of `id` made on other sites, as their sites
    /// told of them, in the order they were told.
    pub fn remote_forks(&self, id: RecipeId, most: usize) -> Result<Vec<RemoteFork>, DomainError> {
        let a = &self.attrs;
        let mut out = Vec::new();
        let forks = self.db.referrers(a.remote_fork_of, id.entity())?;
        for &fork in forks.iter().skip(forks.len().saturating_sub(most)) {
            let text = |attr| -> Result<String, DomainError> {
                Ok(self.string(fork, attr)?.unwrap_or_default())
            };
            out.push(RemoteFork {
                url: text(a.remote_fork_url)?,
                name: text(a.remote_fork_name)?,
                by: text(a.remote_fork_by)?,
            });
        }
        Ok(out)
    }

    /// How many recipes were forked directly from `id`.
    pub fn fork_count(&self, id: RecipeId) -> Result<usize, DomainError> {
        Ok(self
            .db
            .referrers(self.attrs.forked_from, id.entity())?
            .len())
    }

    /// Where recipe `id` was brought in from, if it was.
    pub fn source(&self, id: RecipeId) -> Result<Option<Source>, DomainError> {
        let (url, name) = (self.attrs.source_url, self.attrs.source_name);
        let mut source = Source {
            url: String::new(),
            name: String::new(),
        };
        for datom in self.db.entity_attributes(id.entity(), url, name) {
            let datom = datom?;
            let text = datom.v.as_str().unwrap_or("").to_owned();
            if datom.a == url {
                source.url = text;
            } else if datom.a == name {
                source.name = text;
            }
        }
        Ok((!source.url.is_empty()).then_some(source))
    }

    /// The version of its parent that recipe `id` forked; `None` for an
    /// original. One EAVT range read, as a step of `lineage` is.
    pub fn forked_at(&self, id: RecipeId) -> Result<Option<VersionNumber>, DomainError> {
        let (from, version) = (self.attrs.forked_from, self.attrs.forked_at_version);
        let mut forked = None;
        for datom in self.db.entity_attributes(id.entity(), from, version) {
            let datom = datom?;
            if datom.a == version {
                forked = datom.v.as_long().and_then(VersionNumber::stored);
            }
        }
        Ok(forked)
    }

    /// The family below `id`: forks, their forks, and so on, at most `limit`
    /// recipes below `id` (depth first, oldest fork first), so a huge family
    /// stays a bounded read. An explicit stack, not recursion.
    pub fn fork_tree(&self, id: RecipeId, limit: usize) -> Result<ForkTree, DomainError> {
        let mut tree = ForkTree {
            nodes: Vec::new(),
            truncated: false,
        };
        let mut seen = HashSet::from([id]);
        let mut stack = vec![ForkNode { id, depth: 0 }];
        while let Some(node) = stack.pop() {
            tree.nodes.push(node);
            if node.depth >= MAX_LINEAGE {
                continue;
            }
            let forks = self.forks(node.id)?;
            // Pushed newest first, so the oldest is taken first.
            for &child in forks.iter().rev() {
                if seen.insert(child) {
                    stack.push(ForkNode {
                        id: child,
                        depth: node.depth + 1,
                    });
                }
            }
            if tree.nodes.len() + stack.len() > limit + 1 {
                // More are known than the page may show: keep the order
                // they would come in, and stop at the limit.
                tree.truncated = true;
                let room = (limit + 1).saturating_sub(tree.nodes.len());
                let keep_from = stack.len().saturating_sub(room);
                stack.drain(..keep_from);
            }
        }
        Ok(tree)
    }
}
