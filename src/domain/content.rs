//! A recipe's content: what one version of it says.
//!
//! Content is plain data, compared and diffed as a whole; how it is stored
//! (components, positions, search terms) is `write`'s and `read`'s business.

use std::fmt;

use super::search_terms;

/// A number of minutes (prep, cook, total).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Minutes(u32);

impl Minutes {
    /// Up to a week; a longer time is a typo.
    pub const MAX: u32 = 7 * 24 * 60;

    pub fn new(minutes: i64) -> Result<Minutes, String> {
        u32::try_from(minutes)
            .ok()
            .filter(|m| *m <= Minutes::MAX)
            .map(Minutes)
            .ok_or_else(|| {
                format!(
                    "{minutes} is not a number of minutes from 0 to {}",
                    Minutes::MAX
                )
            })
    }

    pub fn get(self) -> u32 {
        self.0
    }

    /// As an ISO 8601 duration: `PT1H30M`.
    pub fn iso8601(self) -> String {
        match (self.0 / 60, self.0 % 60) {
            (0, m) => format!("PT{m}M"),
            (h, 0) => format!("PT{h}H"),
            (h, m) => format!("PT{h}H{m}M"),
        }
    }
}

impl fmt::Display for Minutes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.0 / 60, self.0 % 60) {
            (0, m) => write!(f, "{m} min"),
            (h, 0) => write!(f, "{h} h"),
            (h, m) => write!(f, "{h} h {m} min"),
        }
    }
}

/// How much a recipe makes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Yield {
    pub servings: Option<i64>,
    /// As written: "12 pancakes", "one 9-inch loaf".
    pub text: Option<String>,
}

impl fmt::Display for Yield {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.text, self.servings) {
            (Some(text), _) => f.write_str(text),
            (None, Some(n)) => write!(f, "{n} servings"),
            (None, None) => Ok(()),
        }
    }
}

/// One step: Markdown text, and the named section it belongs to, if any.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Step {
    pub section: Option<String>,
    pub text: String,
}

/// What a version of a recipe says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Content {
    pub title: String,
    /// Markdown.
    pub summary: Option<String>,
    pub recipe_yield: Yield,
    pub prep: Option<Minutes>,
    pub cook: Option<Minutes>,
    pub total: Option<Minutes>,
    /// Ingredient lines as written, in order.
    pub ingredients: Vec<String>,
    pub steps: Vec<Step>,
    /// Markdown.
    pub notes: Option<String>,
    /// Lower-case, sorted, without repeats.
    pub tags: Vec<String>,
    pub cuisine: Option<String>,
    pub category: Option<String>,
    /// A picture elsewhere on the web, by address (as imported or given).
    pub image: Option<String>,
    /// A picture uploaded to this site; shown in place of `image`.
    pub picture: Option<super::pictures::Picture>,
}

/// Longest title, tag and line a recipe may have: enough for any real one.
pub const MAX_TITLE: usize = 200;
pub const MAX_TAG: usize = 40;
pub const MAX_LINE: usize = 2_000;
pub const MAX_TEXT: usize = 100_000;
/// Most ingredient lines, steps and tags a recipe may have.
pub const MAX_INGREDIENTS: usize = 200;
pub const MAX_STEPS: usize = 200;
pub const MAX_TAGS: usize = 30;
/// Most different words (search terms, `search_terms::words`) a summary may have,
/// and the items of all the ingredient lines together: a long summary has
/// a few hundred, two hundred lines of ingredients fewer.
pub const MAX_SUMMARY_TERMS: usize = 3_000;
pub const MAX_INGREDIENT_TERMS: usize = 2_000;

// Why these limits: every write of one recipe is one transaction, and the
// store refuses one of more than `MAX_TX_DATOMS` (20,000) datoms or
// `MAX_TX_BYTES` (32 MiB) of values. Content within the limits above
// always fits, whatever version it replaces, so that a form is refused
// here, by field, and never by the store after it was accepted.
//
// Datoms. A new recipe (create, import, fork) writes at most:
//   25  its cardinality-one attributes (slug, title, author, created-at,
//       updated-at, version-count, summary, notes, cuisine, category,
//       image, yield-text, servings, 4 of the picture, 3 of the minutes,
//       3 of a fork, 2 of an import's source)
//   30  tags
// 5,457 terms: the title's 200 characters hold at most 67 words of two
//       (a word and a separator are three characters), each of 30 tags at
//       most 13 (40 characters), the summary 3,000, the ingredients 2,000
// 1,600 ingredient lines: a reference and at most 7 attributes each
//       (position, line, item, quantity, quantity-max, unit, note)
//   800 steps: a reference and at most 3 attributes each (position, text,
//       section)
//     4 the author's handle (first use) and the transaction's instant,
//       author and note
// = 7,916. An edit retracts what it replaces and asserts the new: at most
// twice each of the 15 content scalars, the tags, the terms, the lines
// and the steps (a line kept but moved is 2 datoms, fewer than the 16 of
// one replaced), plus version-count and updated-at twice, the handle and
// 4 on the transaction (`:tx/change` too): 30 + 4 + 60 + 10,914 + 3,200 +
// 1,600 + 5 = 15,813, under 20,000 whatever the version before said, as
// long as it too was within these limits.
//
// Bytes. A title of 800 (200 characters of at most 4 bytes), summary and
// notes of 100,000 each, six single-line fields of at most 8,000 (2,000
// characters), tags 4,800, terms at most three times the bytes of the
// words they come from (lower case may grow a character) about 1.5 MB,
// 200 lines of at most 8,000 (the line, and item, unit and note, each
// within it) 1.6 MB, 200 steps of at most 10,000 (text and section)
// 2 MB, a note of 100,000 and 8 bytes for each other value: under 6 MB
// new, under 12 MB for an edit, against 32 MiB.

/// Which part of a recipe a mistake is in, so that a form shows it there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentField {
    Title,
    Summary,
    Servings,
    YieldText,
    Ingredients,
    Steps,
    Notes,
    Tags,
    Cuisine,
    Category,
    Image,
    Picture,
    PictureAlt,
}

/// Why content cannot be a recipe, and where the mistake is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{why}")]
pub struct ContentError {
    field: ContentField,
    why: String,
}

impl ContentError {
    fn new(field: ContentField, why: impl Into<String>) -> ContentError {
        ContentError {
            field,
            why: why.into(),
        }
    }

    pub fn field(&self) -> ContentField {
        self.field
    }
}

/// Whether a tag (trimmed) can have a page: not `.` or `..`, which browsers
/// resolve away as a path segment (`/tags/..` is `/`, and so is `%2E%2E`
/// by the URL standard). Any run of dots alone is refused alike.
pub fn tag_has_address(tag: &str) -> bool {
    !tag.chars().all(|c| c == '.')
}

impl Content {
    /// Tidies what a cook would not mean (stray whitespace, tag case and
    /// order, empty lines) and refuses what cannot be a recipe, or would
    /// not fit in one transaction (the limits above).
    pub fn normalized(mut self) -> Result<Content, ContentError> {
        use ContentField as F;
        let refuse = |field, why: String| Err(ContentError::new(field, why));
        self.title = self.title.trim().to_owned();
        if self.title.is_empty() {
            return refuse(F::Title, "a recipe needs a title".into());
        }
        if self.title.chars().count() > MAX_TITLE {
            return refuse(
                F::Title,
                format!("the title is longer than {MAX_TITLE} characters"),
            );
        }
        let tidy =
            |text: Option<String>| text.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty());
        self.summary = tidy(self.summary);
        self.notes = tidy(self.notes);
        self.cuisine = tidy(self.cuisine);
        self.category = tidy(self.category);
        self.image = tidy(self.image);
        if let Some(picture) = &mut self.picture {
            picture.alt = picture.alt.trim().to_owned();
            if picture.alt.is_empty() {
                return refuse(
                    F::PictureAlt,
                    "a picture needs a few words saying what it shows".into(),
                );
            }
            if picture.alt.chars().count() > MAX_LINE {
                return refuse(
                    F::PictureAlt,
                    format!("a picture's description is longer than {MAX_LINE} characters"),
                );
            }
            if !super::pictures::is_hash(&picture.hash) || picture.width == 0 || picture.height == 0
            {
                return refuse(F::Picture, "that is not a picture this site stored".into());
            }
        }
        self.recipe_yield.text = tidy(self.recipe_yield.text);
        if self
            .recipe_yield
            .servings
            .is_some_and(|n| !(1..=10_000).contains(&n))
        {
            return refuse(F::Servings, "servings must be from 1 to 10000".into());
        }
        let lines = [
            (F::YieldText, "what it makes", &self.recipe_yield.text),
            (F::Cuisine, "the cuisine", &self.cuisine),
            (F::Category, "the category", &self.category),
        ];
        for (field, what, text) in lines {
            if text.as_ref().is_some_and(|t| t.chars().count() > MAX_LINE) {
                return refuse(
                    field,
                    format!("{what} is longer than {MAX_LINE} characters"),
                );
            }
        }
        if self.image.as_ref().is_some_and(|i| i.len() > MAX_LINE) {
            return refuse(
                F::Image,
                format!("the picture's address is longer than {MAX_LINE} bytes"),
            );
        }
        self.ingredients = self
            .ingredients
            .into_iter()
            .map(|l| l.trim().to_owned())
            .filter(|l| !l.is_empty())
            .collect();
        self.steps = self
            .steps
            .into_iter()
            .map(|s| Step {
                section: tidy(s.section),
                text: s.text.trim().to_owned(),
            })
            .filter(|s| !s.text.is_empty())
            .collect();
        let mut tags: Vec<String> = self
            .tags
            .iter()
            .map(|t| t.trim().to_lowercase())
            .filter(|t| !t.is_empty())
            .collect();
        tags.sort();
        tags.dedup();
        if let Some(dots) = tags.iter().find(|t| !tag_has_address(t)) {
            return refuse(
                F::Tags,
                format!("the tag {dots:?} is only dots, which a tag's page address cannot be"),
            );
        }
        if let Some(long) = tags.iter().find(|t| t.chars().count() > MAX_TAG) {
            return refuse(
                F::Tags,
                format!("the tag {long:?} is longer than {MAX_TAG} characters"),
            );
        }
        self.tags = tags;
        let counts = [
            (
                F::Ingredients,
                "ingredient lines",
                self.ingredients.len(),
                MAX_INGREDIENTS,
            ),
            (F::Steps, "steps", self.steps.len(), MAX_STEPS),
            (F::Tags, "tags", self.tags.len(), MAX_TAGS),
        ];
        if let Some((field, what, n, max)) = counts.into_iter().find(|(_, _, n, max)| n > max) {
            return refuse(field, format!("a recipe has at most {max} {what}, not {n}"));
        }
        if self.ingredients.iter().any(|l| l.len() > MAX_LINE) {
            return refuse(
                F::Ingredients,
                format!("an ingredient line is longer than {MAX_LINE} bytes"),
            );
        }
        if self.steps.iter().any(|s| s.text.len() > MAX_LINE) {
            return refuse(F::Steps, format!("a step is longer than {MAX_LINE} bytes"));
        }
        let section = |s: &Step| s.section.as_ref().map_or(0, |name| name.chars().count());
        if self.steps.iter().any(|s| section(s) > MAX_LINE) {
            return refuse(
                F::Steps,
                format!("a section's name is longer than {MAX_LINE} characters"),
            );
        }
        for (field, what, text) in [
            (F::Summary, "the summary", &self.summary),
            (F::Notes, "the notes", &self.notes),
        ] {
            if text.as_ref().is_some_and(|t| t.len() > MAX_TEXT) {
                return refuse(field, format!("{what} is longer than {MAX_TEXT} bytes"));
            }
        }
        let summary_terms = search_terms::summary_terms(&self).len();
        if summary_terms > MAX_SUMMARY_TERMS {
            return refuse(
                F::Summary,
                format!(
                    "the summary has {summary_terms} different words, more than the \
                     {MAX_SUMMARY_TERMS} a summary may have"
                ),
            );
        }
        let ingredient_terms = search_terms::ingredient_terms(&self).len();
        if ingredient_terms > MAX_INGREDIENT_TERMS {
            return refuse(
                F::Ingredients,
                format!(
                    "the ingredients name {ingredient_terms} different words, more than the \
                     {MAX_INGREDIENT_TERMS} a recipe's ingredients may"
                ),
            );
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minutes_read_as_a_cook_and_as_iso_8601() {
        let m = |n| Minutes::new(n).unwrap();
        assert_eq!(
            (m(45).to_string(), m(45).iso8601()),
            ("45 min".into(), "PT45M".into())
        );
        assert_eq!(
            (m(60).to_string(), m(60).iso8601()),
            ("1 h".into(), "PT1H".into())
        );
        assert_eq!(
            (m(95).to_string(), m(95).iso8601()),
            ("1 h 35 min".into(), "PT1H35M".into())
        );
        assert!(Minutes::new(-1).is_err() && Minutes::new(i64::from(Minutes::MAX) + 1).is_err());
    }

    #[test]
    fn normalizing_tidies_what_a_cook_would_not_mean_and_refuses_what_cannot_be_a_recipe() {
        let content = Content {
            title: "  Dal  ".into(),
            tags: vec!["Vegan".into(), "quick".into(), "vegan".into(), " ".into()],
            ingredients: vec!["  1 cup lentils ".into(), "".into()],
            summary: Some("   ".into()),
            ..Content::default()
        }
        .normalized()
        .unwrap();
        assert_eq!(content.title, "Dal");
        assert_eq!(content.tags, ["quick", "vegan"]);
        for bare in [".", "..", " ... "] {
            let refused = Content {
                title: "Dal".into(),
                tags: vec!["quick".into(), bare.into()],
                ..Content::default()
            }
            .normalized()
            .unwrap_err();
            assert_eq!(refused.field(), ContentField::Tags);
            assert!(refused.to_string().contains("is only dots"), "{refused}");
        }
        assert_eq!(content.ingredients, ["1 cup lentils"]);
        assert_eq!(content.summary, None);
        assert!(
            Content::default().normalized().is_err(),
            "a recipe needs a title"
        );
        let huge = Content {
            title: "x".repeat(MAX_TITLE + 1),
            ..Content::default()
        };
        assert!(huge.normalized().is_err());
    }
}
