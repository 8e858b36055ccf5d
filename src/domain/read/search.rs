//! Search: recipes whose terms hold every word of a query, with work
//! bounded whatever the catalog's size or the query.
//!
//! - Words are deduplicated and at most `MAX_WORDS` are used.
//! - The last word is a prefix (results come as a person types) if it has
//!   at least `MIN_PREFIX` characters; it stands for at most
//!   `MAX_EXPANSIONS` terms. A shorter last word must match whole.
//! - One list of candidates drives the search: the posting list of the
//!   whole word with the fewest recipes (each list is counted only up to
//!   `PROBE`), or the prefix's terms' lists merged. Each candidate is checked
//!   against the other words through its own terms.
//! - At most `MAX_CANDIDATES` candidates are looked at per page, and catalog
//!   lines are built only for the recipes shown.
//! - Results come in the order recipes were created, a page at a time, the
//!   next page starting after the last recipe looked at (a keyset cursor).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{CatalogEntry, Snapshot};
use crate::domain::ids::RecipeId;
use crate::domain::search_terms::{self, MAX_CANDIDATES, MAX_EXPANSIONS, MAX_WORDS, MIN_PREFIX};
use crate::domain::DomainError;
use crate::store::Datoms;
use crate::store::{Components, EntityId, Index, Value};

/// How far each whole word's posting list is counted to pick the shortest.
const PROBE: usize = 256;

/// One page of a search's results.
#[derive(Debug, Clone, Default)]
pub struct SearchPage {
    /// The words searched for, in the query's order, without repeats.
    pub words: Vec<String>,
    /// Whether the last word was taken as a prefix.
    pub prefix: bool,
    /// Words beyond `MAX_WORDS`, not searched for.
    pub dropped: usize,
    pub entries: Vec<CatalogEntry>,
    /// Where the next page starts, if there may be one.
    pub next: Option<RecipeId>,
    /// Whether this page stopped at `MAX_CANDIDATES` before it was full.
    pub cut_short: bool,
}

/// A word as a recipe must hold it.
enum Wanted<'a> {
    Whole(&'a str),
    /// A prefix, with the terms it stands for.
    Prefix(&'a str),
}

impl Snapshot {
    /// Up to `limit` recipes matching every word of `text`, not retired,
    /// created after `after` (see the module for the bounds).
    pub fn search(
        &self,
        text: &str,
        after: Option<RecipeId>,
        limit: usize,
    ) -> Result<SearchPage, DomainError> {
        self.search_looking_at(text, after, limit, MAX_CANDIDATES)
    }

    /// `search`, looking at `max_candidates` candidates at most.
    fn search_looking_at(
        &self,
        text: &str,
        after: Option<RecipeId>,
        limit: usize,
        max_candidates: usize,
    ) -> Result<SearchPage, DomainError> {
        let mut words: Vec<String> = Vec::new();
        for word in search_terms::words(text) {
            if !words.contains(&word) {
                words.push(word);
            }
        }
        let dropped = words.len().saturating_sub(MAX_WORDS);
        words.truncate(MAX_WORDS);
        let Some(last) = words.last() else {
            return Ok(SearchPage::default());
        };
        let prefix = last.chars().count() >= MIN_PREFIX;
        let wanted: Vec<Wanted> = words
            .iter()
            .enumerate()
            .map(|(i, w)| match i + 1 == words.len() && prefix {
                true => Wanted::Prefix(w),
                false => Wanted::Whole(w),
            })
            .collect();
        let mut page = SearchPage {
            prefix,
            dropped,
            ..SearchPage::default()
        };
        let (driver, candidates) = self.driver(&wanted, after)?;
        let mut last_seen = None;
        for (looked_at, candidate) in candidates.enumerate() {
            let e = candidate?;
            if looked_at == max_candidates {
                page.cut_short = true;
                page.next = last_seen.map(RecipeId::new);
                break;
            }
            last_seen = Some(e);
            let id = RecipeId::new(e);
            if !self.holds_all(e, &wanted, driver)? || self.is_retired(id)? {
                continue;
            }
            if page.entries.len() == limit {
                page.next = page.entries.last().map(|entry| entry.id);
                break;
            }
            page.entries.push(self.catalog_entry(id)?);
        }
        page.words = words;
        Ok(page)
    }

    /// The candidates' list, and which wanted word it already satisfies:
    /// the whole word with the shortest list, or else the prefix.
    fn driver(
        &self,
        wanted: &[Wanted],
        after: Option<RecipeId>,
    ) -> Result<(usize, Candidates), DomainError> {
        let mut shortest: Option<(usize, usize)> = None;
        for (i, word) in wanted.iter().enumerate() {
            if let Wanted::Whole(w) = word {
                let size = self.postings(w, after).take(PROBE).count();
                if shortest.is_none_or(|(_, s)| size < s) {
                    shortest = Some((i, size));
                }
            }
        }
        match shortest {
            Some((i, _)) => {
                let Wanted::Whole(w) = wanted[i] else {
                    unreachable!("only whole words are probed")
                };
                Ok((i, Candidates::Word(self.postings(w, after))))
            }
            None => {
                let i = wanted.len() - 1;
                let Wanted::Prefix(p) = wanted[i] else {
                    unreachable!("with no whole word, the only word is a prefix")
                };
                let terms = self.db.text_values(self.attrs.terms, p, MAX_EXPANSIONS)?;
                Ok((
                    i,
                    Candidates::merged(terms.iter().map(|t| self.postings(t, after))),
                ))
            }
        }
    }

    /// The recipes holding term `word`, in id order, after `after`.
    fn postings(&self, word: &str, after: Option<RecipeId>) -> Datoms {
        let within = Components::any().a(self.attrs.terms).v(word);
        let cursor = after.map(|id| within.clone().e(id.entity()));
        self.db
            .datoms_range(Index::Avet, &within, cursor.as_ref(), false)
    }

    /// Whether recipe `e` holds every wanted word but the driver's.
    fn holds_all(
        &self,
        e: EntityId,
        wanted: &[Wanted],
        driver: usize,
    ) -> Result<bool, DomainError> {
        for (i, word) in wanted.iter().enumerate() {
            if i == driver {
                continue;
            }
            let holds = match word {
                Wanted::Whole(w) => self
                    .db
                    .datoms(
                        Index::Eavt,
                        &Components::any()
                            .e(e)
                            .a(self.attrs.terms)
                            .v(Value::from(*w)),
                    )
                    .next()
                    .transpose()?
                    .is_some(),
                Wanted::Prefix(p) => {
                    let mut found = false;
                    self.db
                        .visit_attributes(e, self.attrs.terms, self.attrs.terms, |d| {
                            found |= d.v.as_str().is_some_and(|t| t.starts_with(p));
                        })?;
                    found
                }
            };
            if !holds {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// Candidate recipes in id order, without repeats.
// A search has one, on the stack: boxing the sled iterator would cost an
// allocation to save bytes there.
#[allow(clippy::large_enum_variant)]
enum Candidates {
    Word(Datoms),
    /// Several posting lists merged: the smallest head first.
    Merged {
        lists: Vec<Datoms>,
        heads: BinaryHeap<Reverse<(EntityId, usize)>>,
        last: Option<EntityId>,
        started: bool,
    },
}

impl Candidates {
    fn merged(lists: impl Iterator<Item = Datoms>) -> Candidates {
        Candidates::Merged {
            lists: lists.collect(),
            heads: BinaryHeap::new(),
            last: None,
            started: false,
        }
    }
}

impl Iterator for Candidates {
    type Item = Result<EntityId, DomainError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Candidates::Word(datoms) => datoms.next().map(|d| Ok(d?.e)),
            Candidates::Merged {
                lists,
                heads,
                last,
                started,
            } => {
                if !*started {
                    *started = true;
                    for (i, list) in lists.iter_mut().enumerate() {
                        match list.next() {
                            Some(Ok(d)) => heads.push(Reverse((d.e, i))),
                            Some(Err(error)) => return Some(Err(error.into())),
                            None => {}
                        }
                    }
                }
                loop {
                    let Reverse((e, i)) = heads.pop()?;
                    match lists[i].next() {
                        Some(Ok(d)) => heads.push(Reverse((d.e, i))),
                        Some(Err(error)) => return Some(Err(error.into())),
                        None => {}
                    }
                    if *last != Some(e) {
                        *last = Some(e);
                        return Some(Ok(e));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::domain::{Change, Content, RecipeId, Recipes, Slug};

    /// Thirty soups, every third one miso, the last one retired.
    fn soups() -> Recipes {
        let recipes = Recipes::temporary().unwrap();
        for i in 0..30 {
            let title = if i % 3 == 0 {
                format!("Miso soup {i}")
            } else {
                format!("Bean soup {i}")
            };
            let content = Content {
                title,
                ingredients: vec!["1 l water".into()],
                ..Content::default()
            };
            let slug = Slug::parse(&format!("soup-{i}")).unwrap();
            recipes
                .create(&slug, content, &Change::by("ann", "new"))
                .unwrap();
        }
        let last = Slug::parse("soup-27").unwrap();
        recipes
            .retire(
                &last,
                crate::domain::VersionNumber::parse("1").unwrap(),
                &Change::by("ann", "gone"),
            )
            .unwrap();
        recipes
    }

    /// Every slug a search finds, following its pages to the end, and how
    /// many pages it took.
    fn all_pages(recipes: &Recipes, text: &str, limit: usize, max: usize) -> (Vec<String>, usize) {
        let snapshot = recipes.snapshot();
        let (mut found, mut pages, mut after): (Vec<String>, usize, Option<RecipeId>) =
            (Vec::new(), 0, None);
        loop {
            let page = snapshot.search_looking_at(text, after, limit, max).unwrap();
            pages += 1;
            assert!(page.entries.len() <= limit);
            found.extend(page.entries.iter().map(|e| e.slug.to_string()));
            match page.next {
                Some(next) => after = Some(next),
                None => return (found, pages),
            }
            assert!(pages < 100, "pages end");
        }
    }

    fn misos() -> Vec<String> {
        (0..30)
            .filter(|i| i % 3 == 0 && *i != 27)
            .map(|i| format!("soup-{i}"))
            .collect()
    }

    #[test]
    fn pages_follow_each_other_and_find_every_match_once() {
        let recipes = soups();
        let (found, pages) = all_pages(&recipes, "soup miso", 3, 2_000);
        assert_eq!(found, misos());
        assert_eq!(pages, 3, "nine results, three to a page");
        let (prefixed, _) = all_pages(&recipes, "soup mis", 4, 2_000);
        assert_eq!(prefixed, misos(), "the last word is a prefix");
    }

    #[test]
    fn a_page_stops_at_its_candidates_and_the_next_goes_on() {
        let recipes = soups();
        let snapshot = recipes.snapshot();
        // The whole word drives ("miso" is a prefix here): the first four
        // soups hold two misos, and the fifth candidate ends the page.
        let page = snapshot
            .search_looking_at("soup miso", None, 50, 4)
            .unwrap();
        assert!(page.cut_short);
        let slugs: Vec<_> = page.entries.iter().map(|e| e.slug.to_string()).collect();
        assert_eq!(slugs, ["soup-0", "soup-3"]);
        assert!(page.next.is_some());
        // Nothing matches, and each page says it stopped early.
        let page = snapshot
            .search_looking_at("miso soupx", None, 50, 4)
            .unwrap();
        assert!(page.entries.is_empty() && page.cut_short);
        let (found, pages) = all_pages(&recipes, "bean miso", 50, 4);
        assert!(found.is_empty());
        assert!(pages >= 5, "twenty beans, four a page: {pages} pages");
        // A prefix alone drives through its terms' lists, merged.
        let (found, _) = all_pages(&recipes, "mis", 50, 2);
        assert_eq!(found, misos());
    }

    #[test]
    fn repeated_words_count_once_and_words_past_the_cap_are_dropped() {
        let recipes = soups();
        let snapshot = recipes.snapshot();
        let page = snapshot.search("miso MISO miso soup", None, 50).unwrap();
        assert_eq!(page.words, ["miso", "soup"]);
        assert_eq!(page.entries.len(), 9);
        let many = "miso soup water one two three four five six seven";
        let page = snapshot.search(many, None, 50).unwrap();
        assert_eq!(page.words.len(), super::MAX_WORDS);
        assert_eq!(page.dropped, 10 - super::MAX_WORDS);
        // A two-letter last word must match whole: no term is "mi".
        assert!(snapshot.search("mi", None, 50).unwrap().entries.is_empty());
        assert!(!snapshot.search("mi", None, 50).unwrap().prefix);
    }
}
