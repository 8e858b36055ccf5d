//! A search: a query's words as a tantivy query, run at one basis, and
//! its hits read back from the store at that basis.
//!
//! Every word must match (as people expect of a search box), and each
//! matches in several ways, scored by the best of them (and a fifth of the
//! rest), so that the better way wins:
//!
//! - its stem, in each language the catalog has, in any field, by BM25
//!   with the field's weight (`document::WEIGHTED`: the title most);
//! - a stem one or two letters off (`words::MIN_TYPO`), in the title,
//!   about and ingredients, at a small flat score times the field's weight;
//! - the last word, while it is being typed, as the start of a word of the
//!   title, tags or ingredients, at a small flat score.
//!
//! An exact word thus always ranks over the typo it could also be, and a
//! title that is the query over a recipe that only mentions it.

use tantivy::collector::{Count, FacetCollector, TopDocs};
use tantivy::query::{
    AllQuery, BooleanQuery, BoostQuery, DisjunctionMaxQuery, FuzzyTermQuery, Occur, Query,
    TermQuery,
};
use tantivy::schema::{Facet, IndexRecordOption, Term};
use tantivy::tokenizer::Language;
use tantivy::DocAddress;

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

/// How much a word's other fields add to its best one's score.
const TIE_BREAKER: f32 = 0.2;

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
        let mut facets = FacetCollector::for_field("tag");
        facets.add_facet(Facet::root());
        let top = TopDocs::with_limit(PER_PAGE + 1)
            .and_offset(query.page * PER_PAGE)
            .order_by_score();
        let searcher = &self.current.searcher;
        let (top, total, facets) = searcher
            .search(&query_all, &(top, Count, facets))
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
        let mut tags: Vec<(String, u64)> = facets
            .get(Facet::root())
            .filter_map(|(facet, count)| {
                facet
                    .to_path()
                    .first()
                    .map(|name| ((*name).to_owned(), count))
            })
            .collect();
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
        })
    }

    /// Every way word `i` of `words` may match, as one query scored by the
    /// best of them plus a little of the others (a "best field" query): a
    /// recipe titled with the word outranks one that only repeats it
    /// through a long method.
    fn word_query(&self, words: &QueryWords, i: usize, languages: &[Language]) -> Box<dyn Query> {
        let fields = &self.fields;
        let mut ways: Vec<Box<dyn Query>> = Vec::new();
        let stems = words.stems(i, languages);
        let typos = QueryWords::typos_allowed(&words.words[i]);
        for (at, (field, weight)) in WEIGHTED.iter().enumerate() {
            let mut field_ways: Vec<(Occur, Box<dyn Query>)> = Vec::new();
            for stem in &stems {
                let term = Term::from_field_text(field(fields), stem);
                field_ways.push((
                    Occur::Should,
                    Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs)),
                ));
            }
            ways.push(Box::new(BoostQuery::new(
                Box::new(BooleanQuery::new(field_ways)),
                *weight,
            )));
            // Typos in the short fields people name a recipe by.
            if typos > 0 && at < 3 {
                for stem in &stems {
                    let term = Term::from_field_text(field(fields), stem);
                    ways.push(Box::new(BoostQuery::new(
                        Box::new(FuzzyTermQuery::new(term, typos, true)),
                        TYPO_SCORE * weight,
                    )));
                }
            }
        }
        if words.prefix && i + 1 == words.words.len() {
            let term = Term::from_field_text(fields.words, &words.words[i]);
            ways.push(Box::new(BoostQuery::new(
                Box::new(FuzzyTermQuery::new_prefix(term, 0, false)),
                PREFIX_SCORE,
            )));
        }
        Box::new(DisjunctionMaxQuery::with_tie_breaker(ways, TIE_BREAKER))
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

/// Recipe `id` as a result: its catalog line and the texts a snippet may
/// come from.
fn hit(snapshot: &Snapshot, id: RecipeId) -> Result<Hit, DomainError> {
    let entry = snapshot.catalog_entry(id)?;
    let recipe = snapshot.recipe_by_id(id)?;
    let content = recipe.content;
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
