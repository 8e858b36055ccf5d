//! The family of a recipe: the fork tree from its original.

use crate::domain::ids::VersionNumber;
use crate::domain::read::{BroughtIn, ForkNode, Snapshot, Taken};
use crate::domain::slug::Slug;
use crate::domain::DomainError;

/// A recipe in a family tree, at its depth below the original (the tree
/// is a list of these, each recipe before its forks: see `ForkNode`).
#[derive(Debug, Clone, PartialEq)]
pub struct TreeNode {
    pub slug: String,
    pub title: String,
    pub version_count: u32,
    pub depth: usize,
    /// The parent's version it forked; `None` for the original.
    pub forked_at: Option<VersionNumber>,
    /// The parent's versions it brought in since, oldest first.
    pub merges: Vec<BroughtIn>,
    /// Its suggestions the parent took, oldest first.
    pub taken: Vec<Taken>,
}

/// The family of a recipe: the fork tree from its original.
pub struct Family {
    pub title: String,
    /// The original first, then each recipe before its forks.
    pub nodes: Vec<TreeNode>,
    /// Whether the tree was cut short at its size limit.
    pub truncated: bool,
    /// The recipe's forks on other sites, as they told of them.
    pub remote_forks: Vec<crate::domain::RemoteFork>,
}

/// The family of the recipe with `slug`: the tree from its original,
/// at most `limit` recipes below the original.
/// Forks on other sites a family page lists, the newest.
pub(crate) const REMOTE_FORKS_LISTED: usize = 100;

pub fn family(snapshot: &Snapshot, slug: &Slug, limit: usize) -> Result<Family, DomainError> {
    let recipe = snapshot.recipe(slug)?;
    let tree = snapshot.fork_tree(snapshot.original(recipe.id)?, limit)?;
    let nodes = tree
        .nodes
        .iter()
        .map(|node| tree_node(snapshot, *node))
        .collect::<Result<_, _>>()?;
    Ok(Family {
        title: recipe.content.title().to_owned(),
        nodes,
        truncated: tree.truncated,
        remote_forks: snapshot.remote_forks(recipe.id, REMOTE_FORKS_LISTED)?,
    })
}

fn tree_node(snapshot: &Snapshot, node: ForkNode) -> Result<TreeNode, DomainError> {
    let entry = snapshot.catalog_entry(node.id)?;
    Ok(TreeNode {
        slug: entry.slug.to_string(),
        title: entry.title.to_string(),
        version_count: entry.version_count,
        depth: node.depth,
        forked_at: snapshot.forked_at(node.id)?,
        merges: snapshot.merges(node.id)?,
        taken: snapshot.taken_from(node.id)?,
    })
}
