//! The index's schema, and a recipe as one document of it.
//!
//! Text fields are given pre-tokenized, stemmed in the recipe's own
//! language, so one field holds every language's words and a query asks
//! for its words' stems in each language the catalog has.

use tantivy::schema::{
    Facet, FacetOptions, Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST,
    INDEXED,
};
use tantivy::tokenizer::{Language, PreTokenizedString, Token};
use tantivy::TantivyDocument;

use super::words::{folded_tokens, stemmed_tokens};
use crate::domain::content::Content;
use crate::domain::ids::RecipeId;
use crate::domain::ingredient::IngredientLine;

/// The index's fields.
#[derive(Debug, Clone, Copy)]
pub(super) struct Fields {
    /// The recipe's entity id: what a hit is, and what an update deletes.
    pub id: Field,
    pub title: Field,
    /// Tags, cuisine and category, as words.
    pub about: Field,
    /// The ingredients' items ("flour", not "500 g").
    pub ingredients: Field,
    pub summary: Field,
    /// Steps and notes.
    pub method: Field,
    /// Title, tags and ingredients, folded but not stemmed, for prefixes.
    pub words: Field,
    /// Tags, as facets under `/`.
    pub tag: Field,
}

/// One of the fields, picked from them.
pub(super) type FieldOf = fn(&Fields) -> Field;

/// Each stemmed field and its weight: a word in the title counts most, one
/// in the method least (BM25 already weighs a short field's words more).
/// A word's fields add up (`query`), so the others weigh little against
/// the title: at twice these, "shakshuka" ranked "Green shakshuka", which
/// says it in every field, over "Shakshuka" (tests/it/search.rs).
pub(super) const WEIGHTED: &[(FieldOf, f32)] = &[
    (|f| f.title, 4.0),
    (|f| f.about, 1.0),
    (|f| f.ingredients, 0.75),
    (|f| f.summary, 0.5),
    (|f| f.method, 0.3),
];

impl Fields {
    pub(super) fn schema() -> (Schema, Fields) {
        let mut builder = Schema::builder();
        // Frequencies for BM25; no positions, since no query is a phrase.
        let text = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer("raw")
                .set_index_option(IndexRecordOption::WithFreqs),
        );
        let fields = Fields {
            id: builder.add_u64_field("id", INDEXED | FAST),
            title: builder.add_text_field("title", text.clone()),
            about: builder.add_text_field("about", text.clone()),
            ingredients: builder.add_text_field("ingredients", text.clone()),
            summary: builder.add_text_field("summary", text.clone()),
            method: builder.add_text_field("method", text.clone()),
            words: builder.add_text_field("words", text),
            tag: builder.add_facet_field("tag", FacetOptions::default()),
        };
        (builder.build(), fields)
    }

    /// Recipe `id`'s document, its text stemmed in `language`.
    pub(super) fn document(
        &self,
        id: RecipeId,
        content: &Content,
        language: Language,
    ) -> TantivyDocument {
        let mut doc = TantivyDocument::default();
        doc.add_u64(self.id, id.entity());
        let stemmed = |text: String| {
            let tokens = stemmed_tokens(&text, language);
            PreTokenizedString { text, tokens }
        };
        let about: Vec<&str> = content
            .tags()
            .iter()
            .map(String::as_str)
            .chain(content.cuisine())
            .chain(content.category())
            .collect();
        let items: Vec<String> = content
            .ingredients()
            .iter()
            .map(|line| IngredientLine::parse(line).item().to_owned())
            .collect();
        let mut method: Vec<&str> = content.steps().iter().map(|s| s.text.as_str()).collect();
        method.extend(content.steps().iter().filter_map(|s| s.section.as_deref()));
        method.extend(content.notes());
        doc.add_pre_tokenized_text(self.title, stemmed(content.title().to_owned()));
        doc.add_pre_tokenized_text(self.about, stemmed(about.join("\n")));
        doc.add_pre_tokenized_text(self.ingredients, stemmed(items.join("\n")));
        if let Some(summary) = content.summary() {
            doc.add_pre_tokenized_text(self.summary, stemmed(summary.to_owned()));
        }
        doc.add_pre_tokenized_text(self.method, stemmed(method.join("\n")));
        let words = [content.title(), &about.join(" "), &items.join(" ")].join("\n");
        doc.add_pre_tokenized_text(self.words, folded(words));
        for tag in content.tags() {
            doc.add_facet(self.tag, Facet::from_path([tag.as_str()]));
        }
        doc
    }
}

fn folded(text: String) -> PreTokenizedString {
    let tokens: Vec<Token> = folded_tokens(&text);
    PreTokenizedString { text, tokens }
}
