//! A search: a query's words as a tantivy query, run at one basis, and
//! its hits read back from the store at that basis.
//!
//! Every word must match (as people expect of a search box), and each
//! matches in several ways, whose scores add up:
//!
//! - its stem, in each language the catalog has, in any field, by BM25
//!   with the field's weight (`document::WEIGHTED`: the title most);
//! - a stem one or two letters off (`words::MIN_TYPO`), in the title,
//!   about and ingredients, at a small flat score times the field's weight;
//! - the last word, while it is being typed, as the start of a word of the
//!   title, tags or ingredients, at a small flat score (unless it is
//!   already a word of `SAMPLED` recipes or more: `is_common`).
//!
//! An exact word thus ranks over the typo it could also be, and a title
//! that is the query over a recipe that only mentions it. The ways are
//! summed, not taken at their best (a `DisjunctionMaxQuery`): the sum of
//! plain term scorers is tantivy's fast union, and it halved a common
//! word's ranking (the search bench's `search_common`, docs/journal/31-search.md).
//!
//! A common word matches half the catalog: the page and the count visit
//! every match, but the tags are read from the first `SAMPLED` matches of
//! each segment only (and their counts scaled to the whole), so that the
//! work of a search's sidebar does not grow with the catalog.

use std::collections::HashMap;

use tantivy::collector::{Collector, Count, SegmentCollector, TopDocs};
use tantivy::fastfield::FacetReader;
use tantivy::query::{AllQuery, BooleanQuery, BoostQuery, FuzzyTermQuery, Occur, Query, TermQuery};
use tantivy::schema::{Facet, IndexRecordOption, Term};
use tantivy::tokenizer::Language;
use tantivy::{DocAddress, DocId, Score, SegmentOrdinal, SegmentReader};

use super::document::WEIGHTED;
use super::words::{language_of, Matcher, QueryWords};
use super::{search_error, SearchView};
use crate::domain::ids::RecipeId;
use crate::domain::read::{CatalogEntry, Snapshot};
use crate::domain::DomainError;

/// Results on a page.
pub const PER_PAGE: usize = 20;

/// The last page a search shows: ranked results are read from the top, so
/// a page's work grows with its number, and no one reads 1,000 results.
pub const MAX_PAGE: usize = 50;

/// Tags offered to narrow a search by.
const FACETS: usize = 12;

/// The flat score of a typo's match (times its field's weight) and of a
/// prefix's, against a BM25 score of a word in a field of its weight:
/// under it, so that the exact word ranks first.
const TYPO_SCORE: f32 = 0.3;
const PREFIX_SCORE: f32 = 1.0;

/// Matches a search reads its tags from, at most: past it the tags are
/// those of the first `SAMPLED` matches in the index's order, their counts
/// scaled to all the matches. (Measured: the exact tags of `oil`'s 52,572
/// matches in 100,000 recipes cost 1.1 ms of its 1.9.)
pub(super) const SAMPLED: u32 = 1_000;

/// What was asked.
#[derive(Debug, Clone, Default)]
pub struct SearchQuery {
    pub text: String,
    /// Only recipes with this tag.
    pub tag: Option<String>,
    /// From 0.
    pub page: usize,
}

/// A text of a hit that a snippet may come from.
#[derive(Debug, Clone)]
pub enum Passage {
    Markdown(String),
    Plain(String),
}

/// One result.
#[derive(Debug, Clone)]
pub struct Hit {
    pub entry: CatalogEntry,
    /// The recipe's language, as its words were stemmed.
    pub language: Language,
    /// Its summary, steps and ingredient lines, for a snippet.
    pub passages: Vec<Passage>,
}

/// One page of a search's results.
#[derive(Debug, Clone, Default)]
pub struct SearchPage {
    pub words: QueryWords,
    pub tag: Option<String>,
    pub hits: Vec<Hit>,
    /// How many recipes match in all.
    pub total: usize,
    pub page: usize,
    pub has_next: bool,
    /// The tags of the matching recipes, most common first, with counts.
    pub tags: Vec<(String, u64)>,
    /// Whether those counts are estimates, from the first `SAMPLED`
    /// matches.
    pub tags_estimated: bool,
    /// What marks the matched words in a snippet.
    pub matcher: Matcher,
}

impl SearchView {
    /// Page `query.page` of the recipes matching `query`, ranked. `snapshot`
    /// is this view's (witnessed) snapshot.
    pub fn search(
        &self,
        snapshot: &Snapshot,
        query: &SearchQuery,
    ) -> Result<SearchPage, DomainError> {
        debug_assert_eq!(snapshot.basis(), self.snapshot.basis());
        // Results come from the index at this basis: any write may change
        // them, so the page follows the basis (its ETag, its freshness).
        snapshot.depend_on_basis();
        let words = QueryWords::parse(&query.text);
        let tag = query
            .tag
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty());
        if (words.is_empty() && tag.is_none()) || query.page >= MAX_PAGE {
            return Ok(SearchPage {
                words,
                tag: tag.map(str::to_owned),
                page: query.page,
                ..SearchPage::default()
            });
        }
        let languages = &self.current.languages;
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = (0..words.words.len())
            .map(|i| (Occur::Must, self.word_query(&words, i, languages)))
            .collect();
        if let Some(tag) = tag {
            let term = Term::from_facet(self.fields.tag, &Facet::from_path([tag]));
            clauses.push((
                Occur::Must,
                Box::new(TermQuery::new(term, IndexRecordOption::Basic)),
            ));
        }
        if words.is_empty() {
            clauses.push((Occur::Must, Box::new(AllQuery)));
        }
        let query_all = BooleanQuery::new(clauses);
        let top = TopDocs::with_limit(PER_PAGE + 1)
            .and_offset(query.page * PER_PAGE)
            .order_by_score();
        let searcher = &self.current.searcher;
        // One pass: the ranked page, the count, and the tags of the first
        // matches.
        let (top, total, (mut tags, read)) = searcher
            .search(&query_all, &(top, Count, SampledTags))
            .map_err(search_error)?;
        let has_next = top.len() > PER_PAGE;
        let mut found = Vec::with_capacity(PER_PAGE);
        for (score, address) in top.into_iter().take(PER_PAGE) {
            found.push((score, self.id_of(address)?));
        }
        // Equal scores (copies of one recipe in a family) in the order the
        // recipes were made: the original first.
        found.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut hits = Vec::with_capacity(found.len());
        for (_, id) in found {
            hits.push(hit(snapshot, id)?);
        }
        let tags_estimated = read < total as u64;
        if tags_estimated && read > 0 {
            for (_, n) in &mut tags {
                *n = (*n as f64 * total as f64 / read as f64).round() as u64;
            }
        }
        tags.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        tags.truncate(FACETS);
        Ok(SearchPage {
            matcher: words.matcher(languages),
            words,
            tag: tag.map(str::to_owned),
            hits,
            total,
            page: query.page,
            has_next,
            tags,
            tags_estimated,
        })
    }

    /// Every way word `i` of `words` may match, as one query whose score
    /// is the sum of theirs: a recipe titled with the word outranks one
    /// that only repeats it through a long method. Each stem in each field
    /// is a term query of its own, so that a word without typos or a
    /// prefix is a plain union of term scorers.
    fn word_query(&self, words: &QueryWords, i: usize, languages: &[Language]) -> Box<dyn Query> {
        let fields = &self.fields;
        let mut ways: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        let stems = words.stems(i, languages);
        let typos = QueryWords::typos_allowed(&words.words[i]);
        let mut way = |query: Box<dyn Query>, weight: f32| {
            ways.push((Occur::Should, Box::new(BoostQuery::new(query, weight))));
        };
        for (at, (field, weight)) in WEIGHTED.iter().enumerate() {
            for stem in &stems {
                let term = Term::from_field_text(field(fields), stem);
                way(
                    Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs)),
                    *weight,
                );
            }
            // Typos in the short fields people name a recipe by.
            if typos > 0 && at < 3 {
                for stem in &stems {
                    let term = Term::from_field_text(field(fields), stem);
                    way(
                        Box::new(FuzzyTermQuery::new(term, typos, true)),
                        TYPO_SCORE * weight,
                    );
                }
            }
        }
        if words.prefix && i + 1 == words.words.len() && !self.is_common(&words.words[i]) {
            let term = Term::from_field_text(fields.words, &words.words[i]);
            way(
                Box::new(FuzzyTermQuery::new_prefix(term, 0, false)),
                PREFIX_SCORE,
            );
        }
        Box::new(BooleanQuery::new(ways))
    }

    /// Whether `word`, as typed, is already a word of `SAMPLED` recipes or
    /// more: its completions are then not searched for as it is typed.
    /// They would rank below a thousand exact matches (more than the
    /// pages a search shows), and walking them (a prefix's automaton
    /// over every recipe with such a word) was most of a common word's
    /// search: `oil`, 1.15 ms with them at 100,000 recipes.
    fn is_common(&self, word: &str) -> bool {
        let term = Term::from_field_text(self.fields.words, word);
        self.current
            .searcher
            .doc_freq(&term)
            .is_ok_and(|n| n >= u64::from(SAMPLED))
    }

    /// The recipe a hit is.
    fn id_of(&self, address: DocAddress) -> Result<RecipeId, DomainError> {
        let segment = self.current.searcher.segment_reader(address.segment_ord);
        let ids = segment
            .fast_fields()
            .u64("id")
            .map_err(search_error)?
            .first_or_default_col(0);
        Ok(RecipeId::new(ids.get_val(address.doc_id)))
    }
}

/// The tags of the first `SAMPLED` matches of each segment, in the
/// index's order, each with its count among them; and how many matches
/// were read. Fed every match of the page's own pass, it reads the tags
/// of the first few and only counts the rest past them: a second walk of
/// the matches would build a typo's or a prefix's automaton again.
struct SampledTags;

struct SegmentTags {
    facets: FacetReader,
    ords: Vec<u64>,
    read: u64,
}

impl Collector for SampledTags {
    type Fruit = (Vec<(String, u64)>, u64);
    type Child = SegmentTags;

    fn for_segment(
        &self,
        _: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<SegmentTags> {
        let facets = reader.facet_reader("tag")?;
        Ok(SegmentTags {
            ords: vec![0; facets.num_facets()],
            facets,
            read: 0,
        })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(&self, fruits: Vec<(Vec<(String, u64)>, u64)>) -> tantivy::Result<Self::Fruit> {
        let mut counts: HashMap<String, u64> = HashMap::new();
        let mut read = 0;
        for (tags, n) in fruits {
            read += n;
            for (tag, count) in tags {
                *counts.entry(tag).or_default() += count;
            }
        }
        Ok((counts.into_iter().collect(), read))
    }
}

impl SegmentCollector for SegmentTags {
    type Fruit = (Vec<(String, u64)>, u64);

    fn collect(&mut self, doc: DocId, _: Score) {
        if self.read < u64::from(SAMPLED) {
            for ord in self.facets.facet_ords(doc) {
                self.ords[ord as usize] += 1;
            }
            self.read += 1;
        }
    }

    fn harvest(self) -> Self::Fruit {
        let mut facet = Facet::root();
        let mut tags = Vec::new();
        for (ord, n) in self.ords.into_iter().enumerate().filter(|(_, n)| *n > 0) {
            if self.facets.facet_from_ord(ord as u64, &mut facet).is_ok() {
                if let Some(name) = facet.to_path().first() {
                    tags.push(((*name).to_owned(), n));
                }
            }
        }
        (tags, self.read)
    }
}

/// Recipe `id` as a result: its catalog line and the texts a snippet may
/// come from.
fn hit(snapshot: &Snapshot, id: RecipeId) -> Result<Hit, DomainError> {
    let entry = snapshot.catalog_entry(id)?;
    let recipe = snapshot.recipe_by_id(id)?;
    // Its texts are taken whole, not copied.
    let content = recipe.content.into_draft();
    let mut passages = Vec::new();
    passages.extend(content.summary.map(Passage::Markdown));
    passages.extend(content.ingredients.into_iter().map(Passage::Plain));
    passages.extend(content.steps.into_iter().map(|s| Passage::Markdown(s.text)));
    Ok(Hit {
        entry,
        language: language_of(content.language.as_deref()),
        passages,
    })
}
