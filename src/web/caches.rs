//! The site's in-memory caches, owned in one place: the page cache, the
//! Markdown memos, and the share of the store's entity cache the site
//! lets it hold. One budget (`serve --memory-mb`) is split here
//! (`CacheBudget`), the caches are made here, and the memory limit
//! (`memory_limit`) makes room in all of them through `Caches::set_share`.
//! Views get the memos passed in; nothing else holds a cache of pages.

use super::page_cache::PageCache;
use crate::domain::Recipes;
use crate::views::markdown::{Memos, DEFAULT_MEMO_BYTES};

/// The page cache's budget unless told otherwise: a demo's every page in
/// every coding, and the hot part of a large catalog.
pub const DEFAULT_PAGE_CACHE_BYTES: u64 = 64 << 20;

/// How the caches' budget is shared, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheBudget {
    pub pages: u64,
    /// The store's entity cache, given to the store when it is opened.
    pub entities: u64,
    pub markdown: u64,
}

impl CacheBudget {
    /// `total` in eighths: half for pages as sent, three eighths for the
    /// store's entities, one for Markdown.
    pub fn of(total: u64) -> CacheBudget {
        let eighth = total / 8;
        CacheBudget {
            pages: eighth * 4,
            entities: eighth * 3,
            markdown: eighth,
        }
    }
}

/// The page cache and the Markdown memos, held by the site.
pub struct Caches {
    pages: PageCache,
    memos: Memos,
}

impl Default for Caches {
    fn default() -> Caches {
        Caches {
            pages: PageCache::new(DEFAULT_PAGE_CACHE_BYTES),
            memos: Memos::new(DEFAULT_MEMO_BYTES),
        }
    }
}

impl Caches {
    /// Caches of `budget`'s sizes (its entities are the store's).
    pub fn of(budget: CacheBudget) -> Caches {
        Caches {
            pages: PageCache::new(budget.pages),
            memos: Memos::new(budget.markdown),
        }
    }

    /// These caches with a page cache of at most `bytes` (0 keeps no page).
    pub fn with_page_cache(mut self, bytes: u64) -> Caches {
        self.pages = PageCache::new(bytes);
        self
    }

    /// Pages as sent, bounded in bytes.
    pub fn pages(&self) -> &PageCache {
        &self.pages
    }

    /// The memos the views render Markdown through.
    pub fn memos(&self) -> &Memos {
        &self.memos
    }

    /// Lets the page cache, `recipes`' entity cache and the Markdown memos
    /// hold `share` (0 to 1) of their budgets: see `memory_limit`.
    pub fn set_share(&self, recipes: &Recipes, share: f64) {
        self.pages.set_share(share);
        recipes.set_entity_cache_share(share);
        self.memos.set_share(share);
    }

    /// How full those caches are together: what they weigh over what their
    /// budgets allow (0 to 1; 1 when every budget is 0).
    pub fn fill(&self, recipes: &Recipes) -> f64 {
        let (pages, entities, memos) = (
            self.pages.fill(),
            recipes.entity_cache_fill(),
            self.memos.fill(),
        );
        let weight = pages.0 + entities.0 + memos.0;
        let budget = pages.1 + entities.1 + memos.1;
        if budget == 0 {
            1.0
        } else {
            (weight as f64 / budget as f64).min(1.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_shared_in_eighths_and_never_more_than_given() {
        let budget = CacheBudget::of(256 << 20);
        assert_eq!(
            (budget.pages, budget.entities, budget.markdown),
            (128 << 20, 96 << 20, 32 << 20)
        );
        let odd = CacheBudget::of(1001);
        assert!(odd.pages + odd.entities + odd.markdown <= 1001);
    }
}
