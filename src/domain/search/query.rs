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
//!   title, tags or ingredients, at a small flat score.
//!
//! A word of `SAMPLED` recipes or more in the title, tags or ingredients
//! (`is_common`) has neither its typos nor its completions searched: they
//! rank below its own matches, which alone fill every page a search shows.
//!
//! An exact word thus ranks over the typo it could also be, and a title
//! that is the query over a recipe that only mentions it. The ways are
//! summed, not taken at their best (a `DisjunctionMaxQuery`): the sum of
//! plain term scorers is tantivy's fast union, and it halved a common
//! word's ranking (the search bench's `search_common`, docs/journal/31-search.md).
//!
//! A common word matches half the catalog, and a search that visits every
//! match grows with the catalog:
//!
//! - **The tags** are read from about `SAMPLED` matches only, their
//!   counts scaled to the whole: from each segment as many as its share
//!   of the index (`SampledTags`).
//! - **A common word alone** (no tag, no other word) whose titled recipes
//!   fill the page is a plain sum of term scorers, which tantivy ranks by
//!   block-max WAND: it skips the blocks of postings whose best score
//!   cannot reach the page (`titles_fill`). Its count is then estimated
//!   from a sample of its matches (`Sample`), and the page says "about".
//! - **Any other search** is ranked, counted and sampled in one pass over
//!   its matches: a second walk would build a typo's or a prefix's
//!   automaton again.

use std::collections::{BTreeSet, HashMap};

use tantivy::collector::{Collector, Count, SegmentCollector, TopDocs};
use tantivy::fastfield::FacetReader;
use tantivy::query::{
    AllQuery, BooleanQuery, BoostQuery, EnableScoring, FuzzyTermQuery, Occur, Query, TermQuery,
};
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

/// Matches a search reads its tags from, about: past it the tags are
/// those of a sample of this many matches, their counts scaled to all the
/// matches. (Measured: the exact tags of `oil`'s 52,572
/// matches in 100,000 recipes cost 1.1 ms of its 1.9.) It is also the
/// results a search shows at most (`MAX_PAGE` pages): a word with this
/// many matches fills them all with its own.
pub(super) const SAMPLED: u32 = 1_000;
const _: () = assert!(SAMPLED as usize == MAX_PAGE * PER_PAGE);

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
    /// How many recipes match in all: an estimate, from a sample of the
    /// matches, where `total_estimated`.
    pub total: usize,
    pub total_estimated: bool,
    pub page: usize,
    pub has_next: bool,
    /// The tags of the matching recipes, most common first, with counts.
    pub tags: Vec<(String, u64)>,
    /// Whether those counts are estimates, from about `SAMPLED` matches.
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
        let (top, mut matched) = self.rank(&words, tag, query.page)?;
        let has_next = top.len() > PER_PAGE;
        if matched.estimated {
            // Never fewer than the matches read, or than this page and
            // the next one it links to show.
            let shown = query.page * PER_PAGE + top.len();
            matched.total = matched.total.max(shown).max(matched.read as usize);
        }
        let mut found = Vec::with_capacity(PER_PAGE);
        for (score, address) in top.into_iter().take(PER_PAGE) {
            found.push((tie(score), self.id_of(address)?));
        }
        // Equal scores (copies of one recipe in a family) in the order the
        // recipes were made: the original first.
        found.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut hits = Vec::with_capacity(found.len());
        for (_, id) in found {
            hits.push(hit(snapshot, id)?);
        }
        let (total, total_estimated) = (matched.total, matched.estimated);
        let (tags, tags_estimated) = matched.tags_scaled();
        Ok(SearchPage {
            matcher: words.matcher(languages),
            words,
            tag: tag.map(str::to_owned),
            hits,
            total,
            total_estimated,
            page: query.page,
            has_next,
            tags,
            tags_estimated,
        })
    }

    /// The page `page` of the matches of `words` (and `tag`), ranked, and
    /// what all the matches were found to be.
    #[allow(clippy::type_complexity)]
    fn rank(
        &self,
        words: &QueryWords,
        tag: Option<&str>,
        page: usize,
    ) -> Result<(Vec<(Score, DocAddress)>, Sample), DomainError> {
        let languages = &self.current.languages;
        let stems: Vec<_> = (0..words.words.len())
            .map(|i| words.stems(i, languages))
            .collect();
        let common: Vec<bool> = words.words.iter().map(|w| self.is_common(w)).collect();
        let mut word_queries: Vec<Box<dyn Query>> = (0..words.words.len())
            .map(|i| self.word_query(words, i, &stems[i], common[i]))
            .collect();
        let top = TopDocs::with_limit(PER_PAGE + 1)
            .and_offset(page * PER_PAGE)
            .order_by_score();
        let searcher = &self.current.searcher;
        let ranked = if tag.is_none() && common == [true] && self.titles_fill(&stems[0], page) {
            // A common word alone: its query as it is, not inside a
            // one-clause boolean, whose scorer tantivy cannot prune.
            let word = word_queries.remove(0);
            let top = searcher.search(&*word, &top).map_err(search_error)?;
            (top, self.sample(&*word)?)
        } else {
            let mut clauses: Vec<(Occur, Box<dyn Query>)> =
                word_queries.into_iter().map(|q| (Occur::Must, q)).collect();
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
            // One pass: the ranked page, the count, and the tags of the
            // first matches.
            let (top, total, (tags, read)) = searcher
                .search(
                    &BooleanQuery::new(clauses),
                    &(top, Count, SampledTags::of(searcher)),
                )
                .map_err(search_error)?;
            let sample = Sample {
                tags,
                read,
                total,
                estimated: false,
            };
            (top, sample)
        };
        Ok(ranked)
    }

    /// About `SAMPLED` matches of `query` (`SampledTags`), their tags, and
    /// from them all its matches, estimated (`sample_segment`).
    fn sample(&self, query: &dyn Query) -> Result<Sample, DomainError> {
        let searcher = &self.current.searcher;
        let weight = query
            .weight(EnableScoring::disabled_from_searcher(searcher))
            .map_err(search_error)?;
        let sampled = SampledTags::of(searcher);
        let mut fruits = Vec::new();
        let (mut total, mut estimated) = (0.0, false);
        for (ordinal, reader) in searcher.segment_readers().iter().enumerate() {
            let mut scorer = weight.scorer(reader, 1.0).map_err(search_error)?;
            let mut tags = sampled
                .for_segment(ordinal as SegmentOrdinal, reader)
                .map_err(search_error)?;
            let (matches, guessed) = sample_segment(scorer.as_mut(), reader, &mut tags);
            total += matches;
            estimated |= guessed;
            fruits.push(tags.harvest());
        }
        let (tags, read) = sampled.merge_fruits(fruits).map_err(search_error)?;
        let total = total.round() as usize;
        Ok(Sample {
            tags,
            read,
            total,
            estimated,
        })
    }

    /// Every way word `i` of `words` may match, as one query whose score
    /// is the sum of theirs: a recipe titled with the word outranks one
    /// that only repeats it through a long method. Each stem in each field
    /// is a term query of its own, so that a word without typos or a
    /// prefix is a plain union of term scorers; a `common` word is its
    /// `stems` alone.
    fn word_query(
        &self,
        words: &QueryWords,
        i: usize,
        stems: &BTreeSet<String>,
        common: bool,
    ) -> Box<dyn Query> {
        let fields = &self.fields;
        let mut ways: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        let typos = if common {
            0
        } else {
            QueryWords::typos_allowed(&words.words[i])
        };
        let mut way = |query: Box<dyn Query>, weight: f32| {
            ways.push((Occur::Should, Box::new(BoostQuery::new(query, weight))));
        };
        for (at, (field, weight)) in WEIGHTED.iter().enumerate() {
            for stem in stems {
                let term = Term::from_field_text(field(fields), stem);
                way(
                    Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs)),
                    *weight,
                );
            }
            // Typos in the short fields people name a recipe by.
            if typos > 0 && at < 3 {
                for stem in stems {
                    let term = Term::from_field_text(field(fields), stem);
                    way(
                        Box::new(FuzzyTermQuery::new(term, typos, true)),
                        TYPO_SCORE * weight,
                    );
                }
            }
        }
        if words.prefix && i + 1 == words.words.len() && !common {
            let term = Term::from_field_text(fields.words, &words.words[i]);
            way(
                Box::new(FuzzyTermQuery::new_prefix(term, 0, false)),
                PREFIX_SCORE,
            );
        }
        Box::new(BooleanQuery::new(ways))
    }

    /// Whether `word`, as typed, is a word of `SAMPLED` recipes or more in
    /// the fields people name a recipe by (title, tags, ingredients: the
    /// `words` field): it is then taken as it is, and its completions and
    /// near spellings are not searched for. Those rank below its matches in
    /// these fields, which alone fill every page a search shows. (A word
    /// common only in methods, as "cook" is, keeps them: its completion
    /// "cookies" in a title outranks a method's mention.) Walking them (a
    /// prefix's automaton over every recipe with such a word) was most of
    /// a common word's search (`oil`, 1.15 ms with them at 100,000
    /// recipes); and a word with them is no plain sum of term scorers,
    /// which WAND needs.
    fn is_common(&self, word: &str) -> bool {
        let term = Term::from_field_text(self.fields.words, word);
        self.current
            .searcher
            .doc_freq(&term)
            .is_ok_and(|n| n >= u64::from(SAMPLED))
    }

    /// Whether the recipes titled with a word of `stems` are enough to
    /// fill page `page` and show the next: then WAND pays. Their scores
    /// (the title weighs most) stand above the rest, which it skips block
    /// by block: `golden` at 1,000,000 recipes, 2.75 ms rather than 16.8.
    /// A word in no title scores alike in every match, no block's bound
    /// falls below the page, and WAND visits them all with its own
    /// overhead: `oil`, 9.0 ms rather than 7.2 in one pass
    /// (docs/journal/55-million.md).
    fn titles_fill(&self, stems: &BTreeSet<String>, page: usize) -> bool {
        let searcher = &self.current.searcher;
        let titled: u64 = stems
            .iter()
            .map(|stem| {
                let term = Term::from_field_text(self.fields.title, stem);
                searcher.doc_freq(&term).unwrap_or(0)
            })
            .sum();
        titled > ((page + 1) * PER_PAGE) as u64
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

/// What a search's matches were found to be: how many (`estimated`, or
/// counted), and the tags of the first `read` of them.
struct Sample {
    tags: Vec<(String, u64)>,
    read: u64,
    total: usize,
    estimated: bool,
}

impl Sample {
    /// The tags, most common first, their counts scaled from the matches
    /// read to all of them; and whether they were.
    fn tags_scaled(self) -> (Vec<(String, u64)>, bool) {
        let mut tags = self.tags;
        let scaled = self.read < self.total as u64;
        if scaled && self.read > 0 {
            for (_, n) in &mut tags {
                *n = (*n as f64 * self.total as f64 / self.read as f64).round() as u64;
            }
        }
        tags.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        tags.truncate(FACETS);
        (tags, scaled)
    }
}

/// The tags of about `SAMPLED` matches, each with its count among them;
/// and how many matches were read: from each segment as many as its share
/// of the index's documents (`SEGMENT_LEAST` at least), so that the sample
/// spans the catalog's whole history whatever its segments. Fed every
/// match of the page's own pass, it reads the tags of each segment's first
/// matches and only passes over the rest: a second walk of the matches
/// would build a typo's or a prefix's automaton again. `sample_segment`
/// spreads a segment's reads over its documents instead.
struct SampledTags {
    /// The documents of every segment.
    documents: u64,
}

/// The matches of a segment read at least, however small its share: a
/// segment of a few recent recipes is read whole, not scaled from one.
const SEGMENT_LEAST: u64 = 64;

impl SampledTags {
    fn of(searcher: &tantivy::Searcher) -> SampledTags {
        SampledTags {
            documents: searcher
                .segment_readers()
                .iter()
                .map(|r| u64::from(r.max_doc()))
                .sum(),
        }
    }
}

struct SegmentTags {
    facets: FacetReader,
    ords: Vec<u64>,
    read: u64,
    /// The matches of this segment to read.
    budget: u64,
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
        let share = u64::from(SAMPLED) * u64::from(reader.max_doc());
        let least = SEGMENT_LEAST.min(u64::from(reader.max_doc()));
        Ok(SegmentTags {
            ords: vec![0; facets.num_facets()],
            facets,
            read: 0,
            budget: share.div_ceil(self.documents.max(1)).max(least),
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

impl SegmentTags {
    /// Counts the tags of `doc`.
    fn add(&mut self, doc: DocId) {
        for ord in self.facets.facet_ords(doc) {
            self.ords[ord as usize] += 1;
        }
        self.read += 1;
    }
}

impl SegmentCollector for SegmentTags {
    type Fruit = (Vec<(String, u64)>, u64);

    fn collect(&mut self, doc: DocId, _: Score) {
        if self.read < self.budget {
            self.add(doc);
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

/// A score as the page orders by it: to five figures, so that the copies
/// of one text, whose term scores WAND may sum in another order than a
/// plain union does, tie as they should.
fn tie(score: Score) -> i64 {
    (f64::from(score) * 1e4).round() as i64
}

/// The stretches of a segment's documents a sample is spread over: a
/// segment holds recipes in the order they were indexed, and a run of
/// them alike (an import, a merged commit) would sway a sample of its
/// first matches alone.
const STRIDES: u32 = 8;

/// Reads the tags of up to `tags.budget` matches of `scorer` in one
/// segment, the first of each of `STRIDES` equal stretches of its
/// documents; and how many matches it has: counted where a stretch was
/// read to its end, else as many again as the part of it read holds.
/// Whether any stretch was estimated.
fn sample_segment(
    scorer: &mut dyn tantivy::query::Scorer,
    reader: &SegmentReader,
    tags: &mut SegmentTags,
) -> (f64, bool) {
    let documents = reader.max_doc();
    let alive = reader.alive_bitset();
    let strides = STRIDES.min(documents).max(1);
    let each = tags.budget.div_ceil(u64::from(strides));
    let (mut total, mut estimated) = (0.0, false);
    let mut doc = scorer.doc();
    for stride in 0..strides {
        let edge = |n: u32| (u64::from(documents) * u64::from(n) / u64::from(strides)) as DocId;
        let (start, end) = (edge(stride), edge(stride + 1));
        if doc < start {
            doc = scorer.seek(start);
        }
        let mut read = 0;
        // TERMINATED is past every stretch's end.
        while doc < end && read < each {
            if alive.is_none_or(|alive| alive.is_alive(doc)) {
                tags.add(doc);
                read += 1;
            }
            doc = scorer.advance();
        }
        if doc >= end {
            total += read as f64;
        } else {
            // `read` matches in `start..doc`, and `read` is at least one.
            estimated = true;
            total += read as f64 * f64::from(end - start) / f64::from(doc - start);
        }
    }
    (total, estimated)
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
