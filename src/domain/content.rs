//! A recipe's content: what one version of it says.
//!
//! Content is plain data, compared and diffed as a whole; how it is stored
//! (components, positions, search terms) is `write`'s and `read`'s business.

use std::fmt;

use super::attributes::Attr;
use super::search_terms;
use crate::store::{Value, ValueType};

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

impl Step {
    /// The step as one line, its section first: what diffs and merges
    /// compare and show.
    pub fn as_line(&self) -> String {
        match &self.section {
            Some(section) => format!("[{section}] {}", self.text),
            None => self.text.clone(),
        }
    }
}

/// A line of a recipe's method as the form writes it: a step, or a heading
/// where the section changes. `Heading(None)` ends a section: the steps
/// after it are in none (a recipe brought in from another site may have
/// loose steps after a named section).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MethodLine {
    Heading(Option<String>),
    Step(String),
}

impl MethodLine {
    pub fn is_heading(&self) -> bool {
        matches!(self, MethodLine::Heading(_))
    }

    /// The line as the form writes it: `## Name` (`##` alone ends a
    /// section), or the step's text.
    pub fn text(&self) -> String {
        match self {
            MethodLine::Heading(Some(name)) => format!("## {name}"),
            MethodLine::Heading(None) => "##".to_owned(),
            MethodLine::Step(text) => text.trim().to_owned(),
        }
    }
}

/// Steps as lines: a heading before each step whose section differs from
/// the one before it (the method starts in none).
pub fn method_lines(steps: &[Step]) -> Vec<MethodLine> {
    let mut out = Vec::with_capacity(steps.len());
    let mut section: Option<&str> = None;
    for step in steps {
        let named = step.section.as_deref();
        if named != section {
            out.push(MethodLine::Heading(named.map(str::to_owned)));
            section = named;
        }
        out.push(MethodLine::Step(step.text.clone()));
    }
    out
}

/// The steps `lines` say: each in the section of the heading before it.
/// A heading no step follows names nothing.
pub fn steps_of_lines(lines: &[MethodLine]) -> Vec<Step> {
    let mut section: Option<&String> = None;
    let mut out = Vec::new();
    for line in lines {
        match line {
            MethodLine::Heading(name) => section = name.as_ref(),
            MethodLine::Step(text) => out.push(Step {
                section: section.cloned(),
                text: text.clone(),
            }),
        }
    }
    out
}

/// Method lines as the form has them: blocks apart by blank lines, a block
/// starting `## Name` a heading (with the block's other lines, if any, a
/// step in that section), `##` alone the end of a section.
pub fn parse_method(text: &str) -> Vec<MethodLine> {
    let mut out = Vec::new();
    for block in text.replace("\r\n", "\n").split("\n\n") {
        let mut lines: Vec<&str> = block.lines().collect();
        if let Some(first) = lines.first().map(|l| l.trim()) {
            let heading = match first.strip_prefix("##") {
                Some("") => Some(None),
                Some(rest) if rest.starts_with(' ') => Some(Some(rest.trim().to_owned())),
                _ => None,
            };
            if let Some(name) = heading {
                out.push(MethodLine::Heading(name.filter(|n| !n.is_empty())));
                lines.remove(0);
            }
        }
        let body = lines.join("\n");
        if !body.trim().is_empty() {
            out.push(MethodLine::Step(body));
        }
    }
    out
}

/// Method lines as the form writes them, a blank line between each.
pub fn method_text(lines: &[MethodLine]) -> String {
    lines
        .iter()
        .map(MethodLine::text)
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Steps as the form writes them (`method_text` of their lines).
pub fn steps_text(steps: &[Step]) -> String {
    method_text(&method_lines(steps))
}

/// Steps as the form has them (`parse_method`).
pub fn steps_of_text(text: &str) -> Vec<Step> {
    steps_of_lines(&parse_method(text))
}

/// How a scalar field is held in `Content`, and so how it is stored,
/// tidied, checked and typed into a form. Each holds the field's place in
/// `Content`, to read and to write.
#[derive(Debug, Clone, Copy)]
pub enum Slot {
    /// One line of text, at most `MAX_LINE` characters.
    Line(
        fn(&Content) -> &Option<String>,
        fn(&mut Content) -> &mut Option<String>,
    ),
    /// An address, at most `MAX_LINE` bytes.
    Address(
        fn(&Content) -> &Option<String>,
        fn(&mut Content) -> &mut Option<String>,
    ),
    /// Markdown, at most `MAX_TEXT` bytes.
    Markdown(
        fn(&Content) -> &Option<String>,
        fn(&mut Content) -> &mut Option<String>,
    ),
    /// A number of minutes.
    Minutes(
        fn(&Content) -> &Option<Minutes>,
        fn(&mut Content) -> &mut Option<Minutes>,
    ),
    /// How many it serves, from 1 to `MAX_SERVINGS`.
    Servings(
        fn(&Content) -> &Option<i64>,
        fn(&mut Content) -> &mut Option<i64>,
    ),
}

/// Where the recipe form shows a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormPlace {
    /// Placed by hand in the form's markup (a textarea, a row of numbers).
    Own,
    /// In the form's row of details: an optional line, with this label.
    Details(&'static str),
}

/// One scalar field of a recipe: its attribute, what it is called, and how
/// it reads from and writes to `Content`. The fields are rows of the
/// attribute table (`attributes`), which lists them here as `FIELDS`; they
/// drive the schema (`site_schema`), the read (`read::recipe`), the create
/// and edit transactions (`write`), the checks (`Content::checked`), the
/// history's list of what changed (`diff`) and the form
/// (`views::recipe_form`, `web::recipe_writes`).
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The form's name for it, and the name its mistakes carry: its
    /// attribute's name in the table.
    pub name: &'static str,
    /// Its attribute: ident, doc, index, schema.org name.
    pub attr: &'static Attr,
    /// What history and comparisons call it: "prep".
    pub label: &'static str,
    /// What a message calls it: "the cuisine".
    pub what: &'static str,
    pub slot: Slot,
    pub form: FormPlace,
}

/// Every scalar field of a recipe but the title, in the attribute table's
/// order. A store made before a row was added gains its attribute when
/// opened, after all the others (`site_schema`); the read takes every
/// attribute after the search terms too, so such a field is read wherever
/// it was installed.
pub use super::attributes::FIELDS;

impl Field {
    /// The field named `name` in `FIELDS`.
    pub fn named(name: &str) -> Option<&'static Field> {
        FIELDS.iter().find(|f| f.name == name)
    }

    /// The attribute's value type.
    pub fn value_type(&self) -> ValueType {
        self.attr.value_type
    }

    /// The schema.org property that says the field, for a field that is
    /// one line of text (`Slot::Line`): what the JSON-LD and the importers
    /// read and write it as, unless they shape that property themselves.
    pub fn schema_org_line(&self) -> Option<&'static str> {
        match self.slot {
            Slot::Line(..) => self.attr.schema_org,
            _ => None,
        }
    }

    /// The field's text, for a field that is one line of text.
    pub fn line<'a>(&self, content: &'a Content) -> Option<&'a str> {
        match self.slot {
            Slot::Line(get, _) => get(content).as_deref(),
            _ => None,
        }
    }

    /// Sets the field's text, for a field that is one line of text.
    pub fn set_line(&self, content: &mut Content, text: String) {
        if let Slot::Line(_, set) = self.slot {
            *set(content) = Some(text);
        }
    }

    /// The value `content` stores for the field, if it has one.
    pub fn value(&self, content: &Content) -> Option<Value> {
        match self.slot {
            Slot::Line(get, _) | Slot::Address(get, _) | Slot::Markdown(get, _) => {
                get(content).as_deref().map(Value::from)
            }
            Slot::Minutes(get, _) => get(content).map(|m| Value::Long(i64::from(m.get()))),
            Slot::Servings(get, _) => get(content).map(Value::Long),
        }
    }

    /// Sets the field of `content` from a stored value (one of another
    /// type, or out of range, reads as none).
    pub fn read(&self, content: &mut Content, value: &Value) {
        match self.slot {
            Slot::Line(_, set) | Slot::Address(_, set) | Slot::Markdown(_, set) => {
                *set(content) = value.as_str().map(str::to_owned)
            }
            Slot::Minutes(_, set) => {
                *set(content) = value.as_long().and_then(|m| Minutes::new(m).ok())
            }
            Slot::Servings(_, set) => *set(content) = value.as_long(),
        }
    }

    /// Sets the field of `to` to what `from` has.
    pub fn copy(&self, from: &Content, to: &mut Content) {
        match self.slot {
            Slot::Line(get, set) | Slot::Address(get, set) | Slot::Markdown(get, set) => {
                *set(to) = get(from).clone()
            }
            Slot::Minutes(get, set) => *set(to) = *get(from),
            Slot::Servings(get, set) => *set(to) = *get(from),
        }
    }

    /// The field as a page shows it, if the content has it.
    pub fn shown(&self, content: &Content) -> Option<String> {
        match self.slot {
            Slot::Line(get, _) | Slot::Address(get, _) | Slot::Markdown(get, _) => {
                get(content).clone()
            }
            Slot::Minutes(get, _) => get(content).map(|m| m.to_string()),
            Slot::Servings(get, _) => get(content).map(|n| n.to_string()),
        }
    }

    /// The field as a form shows it: empty when there is none.
    pub fn form_text(&self, content: &Content) -> String {
        match self.slot {
            Slot::Line(get, _) | Slot::Address(get, _) | Slot::Markdown(get, _) => {
                get(content).clone().unwrap_or_default()
            }
            Slot::Minutes(get, _) => get(content)
                .map(|m| m.get().to_string())
                .unwrap_or_default(),
            Slot::Servings(get, _) => get(content).map(|n| n.to_string()).unwrap_or_default(),
        }
    }

    /// Sets the field of `content` from what a form sent. A number that is
    /// not one is refused here, with the form's words; whether it is in
    /// range is `Content::checked`'s to say, like every other limit.
    pub fn from_form(&self, content: &mut Content, text: &str) -> Result<(), String> {
        let number = |what: &str| -> Result<Option<i64>, String> {
            match text.trim() {
                "" => Ok(None),
                digits => digits.parse::<i64>().map(Some).map_err(|_| what.to_owned()),
            }
        };
        match self.slot {
            Slot::Line(_, set) | Slot::Address(_, set) | Slot::Markdown(_, set) => {
                *set(content) = Some(text.to_owned())
            }
            Slot::Minutes(_, set) => {
                let minutes = format!("A whole number of minutes, from 0 to {}.", Minutes::MAX);
                *set(content) = match number(&minutes)? {
                    None => None,
                    Some(n) => Some(Minutes::new(n).map_err(|_| minutes)?),
                }
            }
            Slot::Servings(_, set) => {
                *set(content) = number(&format!(
                    "A whole number of servings, from 1 to {MAX_SERVINGS}."
                ))?
            }
        }
        Ok(())
    }

    /// Tidies the field of `content` (a text of only whitespace is none)
    /// and checks it against its limit.
    fn tidy_and_check(&self, content: &mut Content) -> Result<(), ContentError> {
        let refuse = |why: String| Err(ContentError::new(ContentField::Field(self.name), why));
        let tidy = |set: fn(&mut Content) -> &mut Option<String>, content: &mut Content| {
            let text = set(content).take();
            *set(content) = text.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty());
        };
        match self.slot {
            Slot::Line(get, set) => {
                tidy(set, content);
                if get(content)
                    .as_ref()
                    .is_some_and(|t| t.chars().count() > MAX_LINE)
                {
                    return refuse(format!(
                        "{} is longer than {MAX_LINE} characters",
                        self.what
                    ));
                }
            }
            Slot::Address(get, set) => {
                tidy(set, content);
                if get(content).as_ref().is_some_and(|t| t.len() > MAX_LINE) {
                    return refuse(format!("{} is longer than {MAX_LINE} bytes", self.what));
                }
            }
            Slot::Markdown(get, set) => {
                // A browser sends a textarea's lines apart by CRLF: kept,
                // the same text saved again from a form would differ from
                // one saved from anywhere else, a change nobody made.
                if let Some(text) = set(content).as_mut() {
                    if text.contains('\r') {
                        *text = text.replace("\r\n", "\n").replace('\r', "\n");
                    }
                }
                tidy(set, content);
                if get(content).as_ref().is_some_and(|t| t.len() > MAX_TEXT) {
                    return refuse(format!("{} is longer than {MAX_TEXT} bytes", self.what));
                }
            }
            Slot::Minutes(..) => {}
            Slot::Servings(get, _) => {
                if get(content).is_some_and(|n| !(1..=MAX_SERVINGS).contains(&n)) {
                    return refuse(format!("{} must be from 1 to {MAX_SERVINGS}", self.what));
                }
            }
        }
        Ok(())
    }
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
    /// The language it is written in: "Italian".
    pub language: Option<String>,
    /// How it is cooked: "Steaming". Only with the `testing` feature: the
    /// member of the row a test adds to the attribute table (`attributes`).
    #[cfg(feature = "testing")]
    pub cooking_method: Option<String>,
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
/// Most servings a recipe may say it makes.
pub const MAX_SERVINGS: i64 = 10_000;
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
// here, by field, and never by the store after it was accepted. The word
// limits also bound what the search index holds of one recipe.
//
// Datoms. A new recipe (create, import, fork) writes at most:
//   25  its cardinality-one attributes (slug, title, author, created-at,
//       updated-at, version-count, summary, notes, cuisine, category,
//       image, yield-text, servings, 4 of the picture, 3 of the minutes,
//       3 of a fork, 2 of an import's source)
//   30  tags
// 1,600 ingredient lines: a reference and at most 7 attributes each
//       (position, line, item, quantity, quantity-max, unit, note)
//   800 steps: a reference and at most 3 attributes each (position, text,
//       section)
//     4 the author's handle (first use) and the transaction's instant,
//       author and note
// = 2,459. An edit retracts what it replaces and asserts the new: at most
// twice each of the 15 content scalars, the tags, the lines and the steps
// (a line kept but moved is 2 datoms, fewer than the 16 of one replaced),
// plus version-count and updated-at twice, the handle and 4 on the
// transaction (`:tx/change` too); and, the first time a recipe written
// while the store kept search terms (`:recipe/terms`) is edited, those
// terms retracted: 5,457 at most (the title's 200 characters hold at most
// 67 words of two, a word and a separator being three characters; each of
// 30 tags at most 13 of its 40 characters; the summary 3,000, the
// ingredients 2,000). 30 + 4 + 60 + 5,457 + 3,200 + 1,600 + 5 = 10,356,
// under 20,000 whatever the version before said, as long as it too was
// within these limits. A field added to `FIELDS` adds one datom new and
// two to an edit, and at most 100,000 bytes (Markdown): the margin holds
// thousands.
//
// Bytes. A title of 800 (200 characters of at most 4 bytes), summary and
// notes of 100,000 each, six single-line fields of at most 8,000 (2,000
// characters), tags 4,800, 200 lines of at most 8,000 (the line, and
// item, unit and note, each within it) 1.6 MB, 200 steps of at most
// 10,000 (text and section) 2 MB, a note of 100,000 and 8 bytes for each
// other value: under 4.5 MB new, under 10.5 MB for an edit (old search
// terms retracted included, about 1.5 MB), against 32 MiB.

/// Which part of a recipe a mistake is in, so that a form shows it there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentField {
    Title,
    Ingredients,
    Steps,
    Tags,
    Picture,
    PictureAlt,
    /// A field of `FIELDS`, by its name.
    Field(&'static str),
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
    /// not fit in one transaction (the limits above): the first mistake.
    pub fn normalized(self) -> Result<Content, ContentError> {
        self.checked()
            .map_err(|mut mistakes| mistakes.swap_remove(0))
    }

    /// `normalized`, with every mistake at once, at most one per field, so
    /// that a form can show each next to its field.
    pub fn checked(mut self) -> Result<Content, Vec<ContentError>> {
        use ContentField as F;
        let mut mistakes = Vec::new();
        let mut refuse = |field, why: String| mistakes.push(ContentError::new(field, why));
        self.title = self.title.trim().to_owned();
        if self.title.is_empty() {
            refuse(F::Title, "a recipe needs a title".into());
        } else if self.title.chars().count() > MAX_TITLE {
            refuse(
                F::Title,
                format!("the title is longer than {MAX_TITLE} characters"),
            );
        }
        for field in FIELDS {
            if let Err(mistake) = field.tidy_and_check(&mut self) {
                refuse(mistake.field, mistake.why);
            }
        }
        let tidy =
            |text: Option<String>| text.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty());
        if let Some(picture) = &mut self.picture {
            picture.alt = picture.alt.trim().to_owned();
            if picture.alt.is_empty() {
                refuse(
                    F::PictureAlt,
                    "a picture needs a few words saying what it shows".into(),
                );
            } else if picture.alt.chars().count() > MAX_LINE {
                refuse(
                    F::PictureAlt,
                    format!("a picture's description is longer than {MAX_LINE} characters"),
                );
            }
            if !super::pictures::is_hash(&picture.hash) || picture.width == 0 || picture.height == 0
            {
                refuse(F::Picture, "that is not a picture this site stored".into());
            }
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
        self.tags = tags;
        if let Some(dots) = self.tags.iter().find(|t| !tag_has_address(t)) {
            refuse(
                F::Tags,
                format!("the tag {dots:?} is only dots, which a tag's page address cannot be"),
            );
        } else if let Some(long) = self.tags.iter().find(|t| t.chars().count() > MAX_TAG) {
            refuse(
                F::Tags,
                format!("the tag {long:?} is longer than {MAX_TAG} characters"),
            );
        } else if self.tags.len() > MAX_TAGS {
            let n = self.tags.len();
            refuse(
                F::Tags,
                format!("a recipe has at most {MAX_TAGS} tags, not {n}"),
            );
        }
        if self.ingredients.len() > MAX_INGREDIENTS {
            let n = self.ingredients.len();
            refuse(
                F::Ingredients,
                format!("a recipe has at most {MAX_INGREDIENTS} ingredient lines, not {n}"),
            );
        } else if self.ingredients.iter().any(|l| l.len() > MAX_LINE) {
            refuse(
                F::Ingredients,
                format!("an ingredient line is longer than {MAX_LINE} bytes"),
            );
        } else {
            let ingredient_terms = search_terms::ingredient_terms(&self).len();
            if ingredient_terms > MAX_INGREDIENT_TERMS {
                refuse(
                    F::Ingredients,
                    format!(
                        "the ingredients name {ingredient_terms} different words, more than \
                         the {MAX_INGREDIENT_TERMS} a recipe's ingredients may"
                    ),
                );
            }
        }
        let section = |s: &Step| s.section.as_ref().map_or(0, |name| name.chars().count());
        if self.steps.len() > MAX_STEPS {
            let n = self.steps.len();
            refuse(
                F::Steps,
                format!("a recipe has at most {MAX_STEPS} steps, not {n}"),
            );
        } else if self.steps.iter().any(|s| s.text.len() > MAX_LINE) {
            refuse(F::Steps, format!("a step is longer than {MAX_LINE} bytes"));
        } else if self.steps.iter().any(|s| section(s) > MAX_LINE) {
            refuse(
                F::Steps,
                format!("a section's name is longer than {MAX_LINE} characters"),
            );
        }
        let summary_is_within = !mistakes
            .iter()
            .any(|m: &ContentError| m.field == F::Field("summary"));
        // Counted only once the summary is within its length.
        let summary_terms = match summary_is_within {
            true => search_terms::summary_terms(&self).len(),
            false => 0,
        };
        if summary_terms > MAX_SUMMARY_TERMS {
            mistakes.push(ContentError::new(
                F::Field("summary"),
                format!(
                    "the summary has {summary_terms} different words, more than the \
                     {MAX_SUMMARY_TERMS} a summary may have"
                ),
            ));
        }
        if mistakes.is_empty() {
            Ok(self)
        } else {
            Err(mistakes)
        }
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
    fn checking_says_every_mistake_at_once_by_field() {
        let content = Content {
            title: " ".into(),
            recipe_yield: Yield {
                servings: Some(0),
                text: Some("y".repeat(MAX_LINE + 1)),
            },
            notes: Some("n".repeat(MAX_TEXT + 1)),
            image: Some("i".repeat(MAX_LINE + 1)),
            tags: vec!["..".into()],
            ..Content::default()
        };
        let fields: Vec<ContentField> = content
            .clone()
            .checked()
            .unwrap_err()
            .iter()
            .map(ContentError::field)
            .collect();
        assert_eq!(
            fields,
            [
                ContentField::Title,
                ContentField::Field("servings"),
                ContentField::Field("yield_text"),
                ContentField::Field("notes"),
                ContentField::Field("image"),
                ContentField::Tags,
            ]
        );
        assert_eq!(
            content.normalized().unwrap_err().field(),
            ContentField::Title
        );
    }

    #[test]
    fn every_field_reads_back_what_it_stores_and_what_a_form_sends() {
        let full = Content {
            title: "Dal".into(),
            summary: Some("Red lentils.".into()),
            recipe_yield: Yield {
                servings: Some(4),
                text: Some("4 bowls".into()),
            },
            prep: Minutes::new(10).ok(),
            cook: Minutes::new(25).ok(),
            total: Minutes::new(35).ok(),
            notes: Some("Keeps a day.".into()),
            cuisine: Some("Indian".into()),
            category: Some("Main".into()),
            language: Some("English".into()),
            image: Some("https://pictures.example/dal.jpg".into()),
            #[cfg(feature = "testing")]
            cooking_method: Some("Simmering".into()),
            ..Content::default()
        };
        let mut stored = Content {
            title: "Dal".into(),
            ..Content::default()
        };
        let mut typed = stored.clone();
        for field in FIELDS {
            let value = field
                .value(&full)
                .unwrap_or_else(|| panic!("{} is empty", field.name));
            assert_eq!(value.value_type(), field.value_type(), "{}", field.name);
            field.read(&mut stored, &value);
            field
                .from_form(&mut typed, &field.form_text(&full))
                .unwrap();
        }
        assert_eq!(stored, full);
        assert_eq!(typed.normalized().unwrap(), full);
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
