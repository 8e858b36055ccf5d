//! A recipe's content: what one version of it says.
//!
//! Content is plain data, compared and diffed as a whole; how it is stored
//! (components, positions, search terms) is `write`'s and `read`'s business.

use std::fmt;

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

/// Whether a tag (trimmed) can have a page: not `.` or `..`, which browsers
/// resolve away as a path segment (`/tags/..` is `/`, and so is `%2E%2E`
/// by the URL standard). Any run of dots alone is refused alike.
pub fn tag_has_address(tag: &str) -> bool {
    !tag.chars().all(|c| c == '.')
}

impl Content {
    /// Tidies what a cook would not mean (stray whitespace, tag case and
    /// order, empty lines) and refuses what cannot be a recipe.
    pub fn normalized(mut self) -> Result<Content, String> {
        self.title = self.title.trim().to_owned();
        if self.title.is_empty() {
            return Err("a recipe needs a title".into());
        }
        if self.title.chars().count() > MAX_TITLE {
            return Err(format!("the title is longer than {MAX_TITLE} characters"));
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
                return Err("a picture needs a few words saying what it shows".into());
            }
            if picture.alt.chars().count() > MAX_LINE {
                return Err(format!(
                    "a picture's description is longer than {MAX_LINE} characters"
                ));
            }
            if !super::pictures::is_hash(&picture.hash) || picture.width == 0 || picture.height == 0
            {
                return Err("that is not a picture this site stored".into());
            }
        }
        self.recipe_yield.text = tidy(self.recipe_yield.text);
        if self
            .recipe_yield
            .servings
            .is_some_and(|n| !(1..=10_000).contains(&n))
        {
            return Err("servings must be from 1 to 10000".into());
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
            return Err(format!(
                "the tag {dots:?} is only dots, which a tag's page address cannot be"
            ));
        }
        if let Some(long) = tags.iter().find(|t| t.chars().count() > MAX_TAG) {
            return Err(format!(
                "the tag {long:?} is longer than {MAX_TAG} characters"
            ));
        }
        self.tags = tags;
        let counts = [
            ("ingredient lines", self.ingredients.len(), MAX_INGREDIENTS),
            ("steps", self.steps.len(), MAX_STEPS),
            ("tags", self.tags.len(), MAX_TAGS),
        ];
        if let Some((what, n, max)) = counts.into_iter().find(|(_, n, max)| n > max) {
            return Err(format!("a recipe has at most {max} {what}, not {n}"));
        }
        let lines = self
            .ingredients
            .iter()
            .chain(self.steps.iter().map(|s| &s.text));
        if lines.into_iter().any(|l| l.len() > MAX_LINE) {
            return Err(format!("a line is longer than {MAX_LINE} bytes"));
        }
        if [&self.summary, &self.notes]
            .into_iter()
            .flatten()
            .any(|t| t.len() > MAX_TEXT)
        {
            return Err(format!("a text is longer than {MAX_TEXT} bytes"));
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
            assert!(refused.contains("is only dots"), "{refused}");
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
