//! What each recipe page shows, read from one snapshot: the read models.
//!
//! A handler asks the snapshot for one of these with one call and hands it
//! to a view. Each is plain data, so a view renders it without touching the
//! store, and a bench can read one without rendering it.

use super::diff::{self, RecipeDiff};
use super::ids::{RecipeId, VersionNumber};
use super::read::{Ancestor, CatalogEntry, ForkNode, Recipe, Snapshot, Version};
use super::slug::Slug;
use super::{Content, DomainError};

/// Where a recipe brought in from another site came from: the page, and
/// the site's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub url: String,
    pub name: String,
}

/// A link to a recipe: where it is and what it is called.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub slug: String,
    pub title: String,
}

/// One ancestor in a lineage breadcrumb: the recipe, and the version of it
/// that was forked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crumb {
    pub slug: String,
    pub title: String,
    pub version: VersionNumber,
}

/// Ancestors a breadcrumb shows at each end before it is shortened.
pub const CRUMB_ENDS: usize = 10;
/// Forks a recipe page lists; the family tree has the rest.
pub const FORKS_LISTED: usize = 50;

/// A lineage as a breadcrumb, the original first and the parent last; one
/// of more than `2 * CRUMB_ENDS` ancestors is shortened in the middle, so a
/// page names at most that many whatever the depth.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Breadcrumb {
    /// Where the original was brought in from, if it was: the lineage
    /// starts there.
    pub source: Option<Source>,
    /// The ancestors shown from the original down.
    pub head: Vec<Crumb>,
    /// How many are left out after `head`.
    pub hidden: usize,
    /// The ancestors shown after the gap, the parent last (empty when
    /// nothing is left out).
    pub tail: Vec<Crumb>,
}

impl Breadcrumb {
    /// The recipe this one was forked from.
    pub fn parent(&self) -> Option<&Crumb> {
        self.tail.last().or(self.head.last())
    }

    pub fn is_empty(&self) -> bool {
        self.head.is_empty()
    }

    /// Ancestors in all, shown or not.
    pub fn len(&self) -> usize {
        self.head.len() + self.hidden + self.tail.len()
    }
}

/// The recipe page (and its JSON): the recipe now, where it came from and
/// what it became.
pub struct RecipeShow {
    pub recipe: Recipe,
    pub lineage: Breadcrumb,
    /// Direct forks, oldest first, at most `FORKS_LISTED`.
    pub forks: Vec<Link>,
    /// Direct forks in all.
    pub fork_count: usize,
}

/// A recipe's whole lineage, for when its breadcrumb is shortened.
pub struct LineageShow {
    pub slug: String,
    pub title: String,
    /// Every ancestor, the original first and the parent last.
    pub ancestors: Vec<Crumb>,
}

/// One past version of a recipe.
pub struct VersionShow {
    /// The recipe as it is now (its slug, author, version count).
    pub recipe: Recipe,
    pub version: Version,
    /// The recipe as this version left it.
    pub content: Content,
    pub lineage: Breadcrumb,
}

/// A recipe's history: each version with a line on what it changed.
pub struct History {
    pub title: String,
    /// This page's versions, oldest first.
    pub versions: Vec<(Version, String)>,
    /// Versions in all.
    pub total: usize,
    /// Where the page of older versions starts (`?before=`), if there are.
    pub older: Option<VersionNumber>,
}

/// Versions a history page shows.
pub const HISTORY_PAGE: usize = 50;

/// Two versions of one recipe, and what changed between them.
pub struct VersionDiff {
    pub title: String,
    pub from: VersionNumber,
    pub to: VersionNumber,
    pub diff: RecipeDiff,
}

/// A fork against its parent.
pub struct Comparison {
    pub title: String,
    /// The parent, at the version that was forked.
    pub parent: Crumb,
    /// How many versions the parent has now.
    pub parent_versions: u32,
    /// The parent's forked version against this recipe now.
    pub since_fork: RecipeDiff,
    /// The parent now against this recipe now.
    pub against_now: RecipeDiff,
}

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
}

/// The family of a recipe: the fork tree from its original.
pub struct Family {
    pub title: String,
    /// The original first, then each recipe before its forks.
    pub nodes: Vec<TreeNode>,
    /// Whether the tree was cut short at its size limit.
    pub truncated: bool,
}

/// A cook's page: who they are, and what they wrote.
pub struct CookPage {
    pub handle: String,
    pub name: String,
    /// Recipes they started, by title.
    pub originals: Vec<CatalogEntry>,
    /// Their forks of other recipes, by title.
    pub forks: Vec<CatalogEntry>,
    /// Whether they wrote more than the page lists.
    pub truncated: bool,
}

/// Recipes a cook's page lists at most.
pub const COOK_PAGE_LIMIT: usize = 500;

impl Snapshot {
    /// The page of the cook with `handle`: their recipes and forks, not
    /// retired ones, at most `COOK_PAGE_LIMIT` of them. A cook with nothing
    /// published is `NoSuchCook`, as a handle no one has is.
    pub fn cook_page(&self, handle: &Slug) -> Result<CookPage, DomainError> {
        let name = self
            .cook_name(handle)?
            .ok_or_else(|| DomainError::NoSuchCook(handle.to_string()))?;
        let written = self.written_by(handle)?;
        let truncated = written.len() > COOK_PAGE_LIMIT;
        let (mut originals, mut forks) = (Vec::new(), Vec::new());
        for id in written.into_iter().take(COOK_PAGE_LIMIT) {
            if self.is_retired(id)? {
                continue;
            }
            let entry = self.catalog_entry(id)?;
            match self.lineage(id)?.is_empty() {
                true => originals.push(entry),
                false => forks.push(entry),
            }
        }
        if originals.is_empty() && forks.is_empty() && !truncated {
            // A cook with nothing published has no page, in the same words
            // as a handle no one has: a page would tell anyone which handles
            // exist, which login's answers and timing take care not to.
            return Err(DomainError::NoSuchCook(handle.to_string()));
        }
        let by_title = |a: &CatalogEntry, b: &CatalogEntry| (&a.title, a.id).cmp(&(&b.title, b.id));
        originals.sort_by(by_title);
        forks.sort_by(by_title);
        Ok(CookPage {
            handle: handle.to_string(),
            name,
            originals,
            forks,
            truncated,
        })
    }

    /// A link to recipe `id`.
    pub fn link(&self, id: RecipeId) -> Result<Link, DomainError> {
        let (slug, title) = self.slug_and_title(id)?;
        Ok(Link { slug, title })
    }

    /// The lineage of `id` as a breadcrumb, the original first: the walk
    /// reads every ancestor's parent, but names only those shown.
    pub fn crumbs(&self, id: RecipeId) -> Result<Breadcrumb, DomainError> {
        let mut lineage = self.lineage(id)?;
        lineage.reverse();
        let source = self.source(lineage.first().map_or(id, |a| a.id))?;
        let crumb = |a: &Ancestor| self.crumb(a);
        if lineage.len() <= 2 * CRUMB_ENDS {
            return Ok(Breadcrumb {
                source,
                head: lineage.iter().map(crumb).collect::<Result<_, _>>()?,
                hidden: 0,
                tail: Vec::new(),
            });
        }
        let tail_from = lineage.len() - CRUMB_ENDS;
        Ok(Breadcrumb {
            source,
            head: lineage[..CRUMB_ENDS]
                .iter()
                .map(crumb)
                .collect::<Result<_, _>>()?,
            hidden: tail_from - CRUMB_ENDS,
            tail: lineage[tail_from..]
                .iter()
                .map(crumb)
                .collect::<Result<_, _>>()?,
        })
    }

    /// One ancestor, named, at the version that was forked.
    fn crumb(&self, ancestor: &Ancestor) -> Result<Crumb, DomainError> {
        let Link { slug, title } = self.link(ancestor.id)?;
        Ok(Crumb {
            slug,
            title,
            version: ancestor.forked_version,
        })
    }

    /// The whole lineage of the recipe with `slug`, each ancestor named.
    pub fn lineage_show(&self, slug: &Slug) -> Result<LineageShow, DomainError> {
        let recipe = self.current(slug)?;
        let mut lineage = self.lineage(recipe.id)?;
        lineage.reverse();
        let ancestors = lineage
            .iter()
            .map(|a| self.crumb(a))
            .collect::<Result<_, _>>()?;
        Ok(LineageShow {
            slug: recipe.slug.to_string(),
            title: recipe.content.title,
            ancestors,
        })
    }

    /// The recipe with `slug` as it is now, refusing a retired one.
    pub fn current(&self, slug: &Slug) -> Result<Recipe, DomainError> {
        let recipe = self.recipe(slug)?;
        if recipe.retired {
            return Err(DomainError::Retired {
                slug: slug.to_string(),
                title: recipe.content.title,
            });
        }
        Ok(recipe)
    }

    /// What the recipe page shows.
    pub fn recipe_show(&self, slug: &Slug) -> Result<RecipeShow, DomainError> {
        let recipe = self.current(slug)?;
        let lineage = self.crumbs(recipe.id)?;
        let all_forks = self.forks(recipe.id)?;
        let forks = all_forks
            .iter()
            .take(FORKS_LISTED)
            .map(|&id| self.link(id))
            .collect::<Result<_, _>>()?;
        Ok(RecipeShow {
            recipe,
            lineage,
            forks,
            fork_count: all_forks.len(),
        })
    }

    /// What a past version's page shows.
    pub fn version_show(
        &self,
        slug: &Slug,
        number: VersionNumber,
    ) -> Result<VersionShow, DomainError> {
        let recipe = self.recipe(slug)?;
        let (version, content) = self.version(slug, number)?;
        let lineage = self.crumbs(recipe.id)?;
        Ok(VersionShow {
            recipe,
            version,
            content,
            lineage,
        })
    }

    /// What the history page shows.
    pub fn history(
        &self,
        slug: &Slug,
        before: Option<VersionNumber>,
    ) -> Result<History, DomainError> {
        let recipe = self.recipe(slug)?;
        let (versions, total) = self.changes_page(recipe.id, before, HISTORY_PAGE)?;
        let older = versions
            .first()
            .map(|(v, _)| v.number)
            .filter(|&n| n > VersionNumber::FIRST);
        Ok(History {
            versions,
            total,
            older,
            title: recipe.content.title,
        })
    }

    /// Version `from` against version `to` of the recipe with `slug`. `to`
    /// is the newest version when `None`, `from` the one before `to`.
    pub fn version_diff(
        &self,
        slug: &Slug,
        from: Option<VersionNumber>,
        to: Option<VersionNumber>,
    ) -> Result<VersionDiff, DomainError> {
        let recipe = self.recipe(slug)?;
        let versions = self.versions(recipe.id)?;
        let newest = VersionNumber::new(versions.len() as u64).unwrap_or(VersionNumber::FIRST);
        let to = to.unwrap_or(newest);
        let from = from.unwrap_or(to.back(1));
        let old = Snapshot::nth_version(slug, &versions, from)?;
        let new = Snapshot::nth_version(slug, &versions, to)?;
        let diff = diff::recipes(
            &self.content_at(recipe.id, old.basis)?,
            &self.content_at(recipe.id, new.basis)?,
        );
        Ok(VersionDiff {
            title: recipe.content.title,
            from,
            to,
            diff,
        })
    }

    /// The recipe with `slug` against its parent; an original has none.
    pub fn comparison(&self, slug: &Slug) -> Result<Comparison, DomainError> {
        let recipe = self.recipe(slug)?;
        let (Some((parent, version)), Some((since_fork, against_now))) =
            (recipe.forked_from, self.compare_with_parent(recipe.id)?)
        else {
            return Err(DomainError::NoParent(recipe.content.title));
        };
        let Link { slug, title } = self.link(parent)?;
        Ok(Comparison {
            title: recipe.content.title,
            parent: Crumb {
                slug,
                title,
                version,
            },
            parent_versions: self.recipe_by_id(parent)?.version_count,
            since_fork,
            against_now,
        })
    }

    /// The family of the recipe with `slug`: the tree from its original,
    /// at most `limit` recipes below the original.
    pub fn family(&self, slug: &Slug, limit: usize) -> Result<Family, DomainError> {
        let recipe = self.recipe(slug)?;
        let tree = self.fork_tree(self.original(recipe.id)?, limit)?;
        let nodes = tree
            .nodes
            .iter()
            .map(|node| self.tree_node(*node))
            .collect::<Result<_, _>>()?;
        Ok(Family {
            title: recipe.content.title,
            nodes,
            truncated: tree.truncated,
        })
    }

    fn tree_node(&self, node: ForkNode) -> Result<TreeNode, DomainError> {
        let entry = self.catalog_entry(node.id)?;
        Ok(TreeNode {
            slug: entry.slug.to_string(),
            title: entry.title.to_string(),
            version_count: entry.version_count,
            depth: node.depth,
            forked_at: self.forked_at(node.id)?,
        })
    }
}
