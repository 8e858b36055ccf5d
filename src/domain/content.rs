//! A recipe's content: what one version of it says.
//!
//! Content is plain data, compared and diffed as a whole; how it is stored
//! (components, positions, search terms) is `write`'s and `read`'s business.
//! What a form, an import, the seed or a merge makes is a `ContentDraft`,
//! anything at all; `Content::parse` tidies it and refuses what no recipe
//! may say, every field's mistake at once, and only it makes a `Content`:
//! whatever holds one holds content within every limit below.

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

/// How a scalar field is held in a `ContentDraft` (and so in the draft a
/// `Content` holds), and so how it is stored, tidied, checked and typed
/// into a form. Each holds the field's place in the draft, to read and to
/// write.
#[derive(Debug, Clone, Copy)]
pub enum Slot {
    /// One line of text, at most `MAX_LINE` characters.
    Line(
        fn(&ContentDraft) -> &Option<String>,
        fn(&mut ContentDraft) -> &mut Option<String>,
    ),
    /// An address, at most `MAX_LINE` bytes.
    Address(
        fn(&ContentDraft) -> &Option<String>,
        fn(&mut ContentDraft) -> &mut Option<String>,
    ),
    /// Markdown, at most `MAX_TEXT` bytes.
    Markdown(
        fn(&ContentDraft) -> &Option<String>,
        fn(&mut ContentDraft) -> &mut Option<String>,
    ),
    /// A number of minutes.
    Minutes(
        fn(&ContentDraft) -> &Option<Minutes>,
        fn(&mut ContentDraft) -> &mut Option<Minutes>,
    ),
    /// How many it serves, from 1 to `MAX_SERVINGS`.
    Servings(
        fn(&ContentDraft) -> &Option<i64>,
        fn(&mut ContentDraft) -> &mut Option<i64>,
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
/// it reads from `Content` and writes to a `ContentDraft`. The fields are
/// rows of the attribute table (`attributes`), which lists them here as
/// `FIELDS`; they drive the schema (`site_schema`), the read
/// (`read::recipe`), the create and edit transactions (`write`), the parse
/// (`Content::parse`), the history's list of what changed (`diff`) and the
/// form (`views::recipe_form`, `web::recipe_writes`).
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

/// A field as the store holds it, and as a merge copies it.
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
            Slot::Line(get, _) => get(&content.0).as_deref(),
            _ => None,
        }
    }

    /// Sets the field's text, for a field that is one line of text.
    pub fn set_line(&self, content: &mut ContentDraft, text: String) {
        if let Slot::Line(_, set) = self.slot {
            *set(content) = Some(text);
        }
    }

    /// The value `content` stores for the field, if it has one.
    pub fn value(&self, content: &Content) -> Option<Value> {
        let content = &content.0;
        match self.slot {
            Slot::Line(get, _) | Slot::Address(get, _) | Slot::Markdown(get, _) => {
                get(content).as_deref().map(Value::from)
            }
            Slot::Minutes(get, _) => get(content).map(|m| Value::Long(i64::from(m.get()))),
            Slot::Servings(get, _) => get(content).map(Value::Long),
        }
    }

    /// Sets the field of `draft` from a stored value (one of another
    /// type, or out of range, reads as none).
    pub fn read(&self, draft: &mut ContentDraft, value: &Value) {
        match self.slot {
            Slot::Line(_, set) | Slot::Address(_, set) | Slot::Markdown(_, set) => {
                *set(draft) = value.as_str().map(str::to_owned)
            }
            Slot::Minutes(_, set) => {
                *set(draft) = value.as_long().and_then(|m| Minutes::new(m).ok())
            }
            Slot::Servings(_, set) => *set(draft) = value.as_long(),
        }
    }

    /// Sets the field of `to` to what `from` has.
    pub fn copy(&self, from: &Content, to: &mut ContentDraft) {
        let from = &from.0;
        match self.slot {
            Slot::Line(get, set) | Slot::Address(get, set) | Slot::Markdown(get, set) => {
                *set(to) = get(from).clone()
            }
            Slot::Minutes(get, set) => *set(to) = *get(from),
            Slot::Servings(get, set) => *set(to) = *get(from),
        }
    }
}

/// A field as pages and forms show it, and as a form sends it.
impl Field {
    /// The field as a page shows it, if the content has it.
    pub fn shown(&self, content: &Content) -> Option<String> {
        self.shown_in(&content.0)
    }

    /// `shown`, of a draft: what a merge not parsed yet would say.
    pub(crate) fn shown_in(&self, content: &ContentDraft) -> Option<String> {
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
        let content = &content.0;
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

    /// Sets the field of `draft` from what a form sent. A number that is
    /// not one is refused here, with the form's words; whether it is in
    /// range is `Content::parse`'s to say, like every other limit.
    pub fn from_form(&self, draft: &mut ContentDraft, text: &str) -> Result<(), String> {
        let number = |what: &str| -> Result<Option<i64>, String> {
            match text.trim() {
                "" => Ok(None),
                digits => digits.parse::<i64>().map(Some).map_err(|_| what.to_owned()),
            }
        };
        match self.slot {
            Slot::Line(_, set) | Slot::Address(_, set) | Slot::Markdown(_, set) => {
                *set(draft) = Some(text.to_owned())
            }
            Slot::Minutes(_, set) => {
                let minutes = format!("A whole number of minutes, from 0 to {}.", Minutes::MAX);
                *set(draft) = match number(&minutes)? {
                    None => None,
                    Some(n) => Some(Minutes::new(n).map_err(|_| minutes)?),
                }
            }
            Slot::Servings(_, set) => {
                *set(draft) = number(&format!(
                    "A whole number of servings, from 1 to {MAX_SERVINGS}."
                ))?
            }
        }
        Ok(())
    }
}

/// A row's part of the parse.
impl Field {
    /// Tidies the field of `draft` (a text of only whitespace is none)
    /// and checks it against its limit: the parse of one row.
    fn parse(&self, draft: &mut ContentDraft) -> Result<(), ContentError> {
        let refuse = |why: String| Err(ContentError::new(ContentField::Field(self.name), why));
        let longer = |text: &Option<String>, len: fn(&str) -> usize, most: usize| {
            text.as_deref().is_some_and(|t| len(t) > most)
        };
        match self.slot {
            Slot::Line(get, set) => {
                optional_without_controls(set(draft), Breaks::Dropped);
                tidy(set(draft));
                if longer(get(draft), |t| t.chars().count(), MAX_LINE) {
                    return refuse(format!(
                        "{} is longer than {MAX_LINE} characters",
                        self.what
                    ));
                }
            }
            Slot::Address(get, set) => {
                optional_without_controls(set(draft), Breaks::Dropped);
                tidy(set(draft));
                if longer(get(draft), str::len, MAX_LINE) {
                    return refuse(format!("{} is longer than {MAX_LINE} bytes", self.what));
                }
            }
            Slot::Markdown(get, set) => {
                // A browser sends a textarea's lines apart by CRLF: kept,
                // the same text saved again from a form would differ from
                // one saved from anywhere else, a change nobody made.
                if let Some(text) = set(draft).as_mut() {
                    if text.contains('\r') {
                        *text = text.replace("\r\n", "\n").replace('\r', "\n");
                    }
                }
                optional_without_controls(set(draft), Breaks::Kept);
                tidy(set(draft));
                if longer(get(draft), str::len, MAX_TEXT) {
                    return refuse(format!("{} is longer than {MAX_TEXT} bytes", self.what));
                }
            }
            Slot::Minutes(..) => {}
            Slot::Servings(get, _) => {
                if get(draft).is_some_and(|n| !(1..=MAX_SERVINGS).contains(&n)) {
                    return refuse(format!("{} must be from 1 to {MAX_SERVINGS}", self.what));
                }
            }
        }
        Ok(())
    }
}

/// A text trimmed, and none when that leaves nothing.
fn tidy(text: &mut Option<String>) {
    *text = text
        .take()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty());
}

/// Whether a text may hold a line break: Markdown and steps may, a line
/// (a title, a tag, an ingredient line, a detail) may not.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Breaks {
    Kept,
    Dropped,
}

/// `text` without control characters (NUL, escape, delete, the C1
/// range...), which no recipe needs and which pages, feeds and the JSON
/// would otherwise carry raw, but a tab, and a line break where `breaks`
/// keeps them. Tidied away like stray whitespace rather than refused: a
/// page imported from elsewhere may hold one where nobody can see it.
/// Allocates only when there is one.
fn without_controls(text: &mut String, breaks: Breaks) {
    let unwanted = |c: char| c.is_control() && c != '\t' && !(c == '\n' && breaks == Breaks::Kept);
    if text.contains(unwanted) {
        text.retain(|c| !unwanted(c));
    }
}

/// `without_controls`, of a text that may be none.
fn optional_without_controls(text: &mut Option<String>, breaks: Breaks) {
    if let Some(text) = text {
        without_controls(text, breaks);
    }
}

/// What a version of a recipe says, as written: what a form, an import,
/// the seed or a merge makes, before anything is checked. Its fields are
/// public so that anything may build one; only `Content::parse` turns it
/// into content a recipe can have.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContentDraft {
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

impl ContentDraft {
    /// `Content::parse`, with only the first mistake: for a caller that
    /// reports one (a write refused, an import, the seed).
    pub fn normalized(self) -> Result<Content, ContentError> {
        Content::parse(self).map_err(|mut mistakes| mistakes.swap_remove(0))
    }
}

/// What a version of a recipe says: a `ContentDraft` that `Content::parse`
/// tidied and accepted. Its one field is private, so that outside this
/// module a `Content` is made only by `parse` (or, for what the store
/// holds, `stored`): `Content { .. }` does not compile there, and nothing
/// can change one after its parse. Every `Content` is therefore within
/// the limits below (a title, each list and text within its length, the
/// tags lower-case, sorted and without repeats...), and a transaction
/// that writes one always fits. To change one, take its draft
/// (`into_draft`, `to_draft`) and parse that again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Content(ContentDraft);

impl Content {
    /// Content as the store holds it, not parsed again. Trusted, and so
    /// visible only to the domain, whose read (`read::recipe`) alone makes
    /// it: every version passed `parse` when it was written (`write`
    /// parses what it is given; the read path only rebuilds it from its
    /// datoms). Parsing each read again would cost the recipe page, the
    /// hottest path, a copy of every line and a count of the summary's
    /// and ingredients' words, for nothing: over the demo's 67 recipes,
    /// unoptimised, a parse took 1.7 times the read of the recipe from the
    /// store, and 8% of its whole page. And it would refuse a version
    /// saved under looser rules than today's, which must stay readable as
    /// it was saved.
    pub(in crate::domain) fn stored(draft: ContentDraft) -> Content {
        Content(draft)
    }

    /// This content with `other`'s title and picture: what a fork suggests
    /// (`merge::as_suggested`). Not parsed again, and need not be: each of
    /// the parse's checks is of one field alone, so fields taken from two
    /// parsed contents make one it accepts.
    pub(crate) fn with_title_and_picture_of(&self, other: &Content) -> Content {
        Content(ContentDraft {
            title: other.0.title.clone(),
            picture: other.0.picture.clone(),
            ..self.0.clone()
        })
    }

    /// The content as a draft, to change and parse again: a form showing
    /// a version, a merge, an import completing a stub.
    pub fn into_draft(self) -> ContentDraft {
        self.0
    }

    /// `into_draft`, of a copy.
    pub fn to_draft(&self) -> ContentDraft {
        self.0.clone()
    }

    /// The draft it was parsed from, tidied: for what reads parsed and
    /// unparsed content alike (the table's slots, a diff of a merge not
    /// parsed yet). Borrowed, it changes nothing.
    pub(crate) fn as_draft(&self) -> &ContentDraft {
        &self.0
    }
}

/// What it says, borrowed.
impl Content {
    /// Never empty, at most `MAX_TITLE` characters.
    pub fn title(&self) -> &str {
        &self.0.title
    }

    /// Markdown.
    pub fn summary(&self) -> Option<&str> {
        self.0.summary.as_deref()
    }

    pub fn recipe_yield(&self) -> &Yield {
        &self.0.recipe_yield
    }

    pub fn prep(&self) -> Option<Minutes> {
        self.0.prep
    }

    pub fn cook(&self) -> Option<Minutes> {
        self.0.cook
    }

    pub fn total(&self) -> Option<Minutes> {
        self.0.total
    }

    /// Ingredient lines as written, in order, none empty.
    pub fn ingredients(&self) -> &[String] {
        &self.0.ingredients
    }

    pub fn steps(&self) -> &[Step] {
        &self.0.steps
    }

    /// Markdown.
    pub fn notes(&self) -> Option<&str> {
        self.0.notes.as_deref()
    }

    /// Lower-case, sorted, without repeats.
    pub fn tags(&self) -> &[String] {
        &self.0.tags
    }

    pub fn cuisine(&self) -> Option<&str> {
        self.0.cuisine.as_deref()
    }

    pub fn category(&self) -> Option<&str> {
        self.0.category.as_deref()
    }

    /// The language it is written in: "Italian".
    pub fn language(&self) -> Option<&str> {
        self.0.language.as_deref()
    }

    /// How it is cooked: the test row's member (`ContentDraft::cooking_method`).
    #[cfg(feature = "testing")]
    pub fn cooking_method(&self) -> Option<&str> {
        self.0.cooking_method.as_deref()
    }

    /// A picture elsewhere on the web, by address (as imported or given).
    pub fn image(&self) -> Option<&str> {
        self.0.image.as_deref()
    }

    /// A picture uploaded to this site; shown in place of `image`.
    pub fn picture(&self) -> Option<&super::pictures::Picture> {
        self.0.picture.as_ref()
    }
}

impl From<Content> for ContentDraft {
    fn from(content: Content) -> ContentDraft {
        content.into_draft()
    }
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
    /// Parses a draft: tidies what a cook would not mean (stray
    /// whitespace, tag case and order, empty lines) and refuses what
    /// cannot be a recipe, or would not fit in one transaction (the limits
    /// above), with every mistake at once, at most one per field, so that
    /// a form can show each next to its field (`ContentDraft::normalized`
    /// says the first). Each check reads one field alone, as
    /// `with_title_and_picture_of` counts on.
    pub fn parse(mut draft: ContentDraft) -> Result<Content, Vec<ContentError>> {
        let mut mistakes = Vec::new();
        mistakes.extend(parse_title(&mut draft.title));
        for field in FIELDS {
            mistakes.extend(field.parse(&mut draft).err());
        }
        if let Some(picture) = &mut draft.picture {
            mistakes.extend(parse_picture(picture));
        }
        mistakes.extend(parse_tags(&mut draft.tags));
        mistakes.extend(parse_ingredients(&mut draft.ingredients));
        mistakes.extend(parse_steps(&mut draft.steps));
        // Counted only once the summary is within its length.
        let summary = ContentField::Field("summary");
        if !mistakes.iter().any(|m: &ContentError| m.field == summary) {
            mistakes.extend(check_summary_terms(draft.summary.as_deref()));
        }
        match mistakes.is_empty() {
            true => Ok(Content(draft)),
            false => Err(mistakes),
        }
    }
}

/// The title trimmed; refused when that leaves nothing, or too much.
fn parse_title(title: &mut String) -> Option<ContentError> {
    without_controls(title, Breaks::Dropped);
    *title = title.trim().to_owned();
    let why = if title.is_empty() {
        "a recipe needs a title".to_owned()
    } else if title.chars().count() > MAX_TITLE {
        format!("the title is longer than {MAX_TITLE} characters")
    } else {
        return None;
    };
    Some(ContentError::new(ContentField::Title, why))
}

/// The picture's description trimmed and checked, and the picture one
/// this site stored: a mistake for each.
fn parse_picture(picture: &mut super::pictures::Picture) -> Vec<ContentError> {
    let mut mistakes = Vec::new();
    without_controls(&mut picture.alt, Breaks::Dropped);
    picture.alt = picture.alt.trim().to_owned();
    if picture.alt.is_empty() {
        mistakes.push(ContentError::new(
            ContentField::PictureAlt,
            "a picture needs a few words saying what it shows",
        ));
    } else if picture.alt.chars().count() > MAX_LINE {
        mistakes.push(ContentError::new(
            ContentField::PictureAlt,
            format!("a picture's description is longer than {MAX_LINE} characters"),
        ));
    }
    if !super::pictures::is_hash(&picture.hash) || picture.width == 0 || picture.height == 0 {
        mistakes.push(ContentError::new(
            ContentField::Picture,
            "that is not a picture this site stored",
        ));
    }
    mistakes
}

/// The tags trimmed, lower-case, sorted and without repeats or empty ones;
/// refused when one has no page address or is too long, or there are too
/// many.
fn parse_tags(tags: &mut Vec<String>) -> Option<ContentError> {
    let mut tidied: Vec<String> = std::mem::take(tags)
        .into_iter()
        .map(|mut t| {
            without_controls(&mut t, Breaks::Dropped);
            t.trim().to_lowercase()
        })
        .filter(|t| !t.is_empty())
        .collect();
    tidied.sort();
    tidied.dedup();
    *tags = tidied;
    let why = if let Some(dots) = tags.iter().find(|t| !tag_has_address(t)) {
        format!("the tag {dots:?} is only dots, which a tag's page address cannot be")
    } else if let Some(long) = tags.iter().find(|t| t.chars().count() > MAX_TAG) {
        format!("the tag {long:?} is longer than {MAX_TAG} characters")
    } else if tags.len() > MAX_TAGS {
        format!("a recipe has at most {MAX_TAGS} tags, not {}", tags.len())
    } else {
        return None;
    };
    Some(ContentError::new(ContentField::Tags, why))
}

/// The ingredient lines trimmed, without empty ones; refused when there
/// are too many, one is too long, or their items name too many words.
fn parse_ingredients(lines: &mut Vec<String>) -> Option<ContentError> {
    *lines = std::mem::take(lines)
        .into_iter()
        .map(|mut l| {
            without_controls(&mut l, Breaks::Dropped);
            l.trim().to_owned()
        })
        .filter(|l| !l.is_empty())
        .collect();
    let why = if lines.len() > MAX_INGREDIENTS {
        let n = lines.len();
        format!("a recipe has at most {MAX_INGREDIENTS} ingredient lines, not {n}")
    } else if lines.iter().any(|l| l.len() > MAX_LINE) {
        format!("an ingredient line is longer than {MAX_LINE} bytes")
    } else {
        // Counted only once the lines are within their limits, which
        // bound the count's work.
        let terms = search_terms::item_terms(lines).len();
        if terms <= MAX_INGREDIENT_TERMS {
            return None;
        }
        format!(
            "the ingredients name {terms} different words, more than \
             the {MAX_INGREDIENT_TERMS} a recipe's ingredients may"
        )
    };
    Some(ContentError::new(ContentField::Ingredients, why))
}

/// The steps trimmed (a section's name too, none when empty), without
/// empty ones; refused when there are too many, or one or its section's
/// name is too long.
fn parse_steps(steps: &mut Vec<Step>) -> Option<ContentError> {
    *steps = std::mem::take(steps)
        .into_iter()
        .map(|mut s| {
            optional_without_controls(&mut s.section, Breaks::Dropped);
            without_controls(&mut s.text, Breaks::Kept);
            tidy(&mut s.section);
            Step {
                section: s.section,
                text: s.text.trim().to_owned(),
            }
        })
        .filter(|s| !s.text.is_empty())
        .collect();
    let section = |s: &Step| s.section.as_ref().map_or(0, |name| name.chars().count());
    let why = if steps.len() > MAX_STEPS {
        format!(
            "a recipe has at most {MAX_STEPS} steps, not {}",
            steps.len()
        )
    } else if steps.iter().any(|s| s.text.len() > MAX_LINE) {
        format!("a step is longer than {MAX_LINE} bytes")
    } else if steps.iter().any(|s| section(s) > MAX_LINE) {
        format!("a section's name is longer than {MAX_LINE} characters")
    } else {
        return None;
    };
    Some(ContentError::new(ContentField::Steps, why))
}

/// Refuses a summary (within its length) that names too many words.
fn check_summary_terms(summary: Option<&str>) -> Option<ContentError> {
    let terms = search_terms::text_terms(summary).len();
    (terms > MAX_SUMMARY_TERMS).then(|| {
        ContentError::new(
            ContentField::Field("summary"),
            format!(
                "the summary has {terms} different words, more than the \
                 {MAX_SUMMARY_TERMS} a summary may have"
            ),
        )
    })
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
        let draft = ContentDraft {
            title: " ".into(),
            recipe_yield: Yield {
                servings: Some(0),
                text: Some("y".repeat(MAX_LINE + 1)),
            },
            notes: Some("n".repeat(MAX_TEXT + 1)),
            image: Some("i".repeat(MAX_LINE + 1)),
            tags: vec!["..".into()],
            ..ContentDraft::default()
        };
        let fields: Vec<ContentField> = Content::parse(draft.clone())
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
        assert_eq!(draft.normalized().unwrap_err().field(), ContentField::Title);
    }

    /// Control characters are tidied away as stray whitespace is, in every
    /// text a recipe has, but a tab, and a line break in Markdown and
    /// steps: nothing reaches a page, a feed or the JSON raw.
    #[test]
    fn the_parse_tidies_away_control_characters() {
        let draft = ContentDraft {
            title: "Dal\u{0}\u{1b}[31m makhani\u{7f}".into(),
            summary: Some("One pot.\u{0}\nSlow\tcooked.\u{85}".into()),
            cuisine: Some("Pun\njabi\u{0}".into()),
            tags: vec!["lent\u{0}ils".into()],
            ingredients: vec!["1 cup\u{8} dal".into()],
            steps: vec![Step {
                section: Some("Sauce\u{0}".into()),
                text: "Simmer.\u{0}".into(),
            }],
            ..ContentDraft::default()
        };
        let content = Content::parse(draft).unwrap();
        assert_eq!(content.title(), "Dal[31m makhani");
        assert_eq!(content.summary(), Some("One pot.\nSlow\tcooked."));
        assert_eq!(content.cuisine(), Some("Punjabi"));
        assert_eq!(content.tags(), ["lentils"]);
        assert_eq!(content.ingredients(), ["1 cup dal"]);
        assert_eq!(content.steps()[0].text, "Simmer.");
        assert_eq!(content.steps()[0].section.as_deref(), Some("Sauce"));
    }

    /// Every part of a recipe wrong at once: one mistake for each, in the
    /// order a form shows them, however many ways a part is wrong (the
    /// tags here are too many, too long and only dots: one mistake).
    #[test]
    fn the_parse_says_one_mistake_for_each_part_that_has_one() {
        let many = |n: usize, line: &str| (0..n).map(|i| format!("{line} {i}")).collect();
        let draft = ContentDraft {
            title: "t".repeat(MAX_TITLE + 1),
            summary: Some("s".repeat(MAX_TEXT + 1)),
            cuisine: Some("c".repeat(MAX_LINE + 1)),
            picture: Some(crate::domain::pictures::Picture {
                hash: "not a hash".into(),
                width: 0,
                height: 0,
                alt: " ".into(),
            }),
            tags: [
                many(MAX_TAGS + 1, "tag"),
                vec!["..".into(), "t".repeat(MAX_TAG + 1)],
            ]
            .concat(),
            ingredients: many(MAX_INGREDIENTS + 1, "1 egg"),
            steps: many(MAX_STEPS + 1, "Stir.")
                .into_iter()
                .map(|text| Step {
                    section: None,
                    text,
                })
                .collect(),
            ..ContentDraft::default()
        };
        let mistakes = Content::parse(draft).unwrap_err();
        let fields: Vec<ContentField> = mistakes.iter().map(ContentError::field).collect();
        assert_eq!(
            fields,
            [
                ContentField::Title,
                ContentField::Field("summary"),
                ContentField::Field("cuisine"),
                ContentField::PictureAlt,
                ContentField::Picture,
                ContentField::Tags,
                ContentField::Ingredients,
                ContentField::Steps,
            ]
        );
        assert!(mistakes[6]
            .to_string()
            .contains("at most 200 ingredient lines, not 201"));
    }

    /// A summary within its length but with too many words is refused for
    /// its words; one past its length, for its length only.
    #[test]
    fn a_summarys_words_are_counted_once_it_is_within_its_length() {
        let words: Vec<String> = (0..=MAX_SUMMARY_TERMS).map(|i| format!("w{i}")).collect();
        let wordy = ContentDraft {
            title: "Dal".into(),
            summary: Some(words.join(" ")),
            ..ContentDraft::default()
        };
        let refused = Content::parse(wordy).unwrap_err();
        assert_eq!(refused.len(), 1);
        assert!(
            refused[0].to_string().contains("different words"),
            "{}",
            refused[0]
        );
        let long = ContentDraft {
            title: "Dal".into(),
            summary: Some(format!("{} {}", words.join(" "), "x".repeat(MAX_TEXT))),
            ..ContentDraft::default()
        };
        let refused = Content::parse(long).unwrap_err();
        assert_eq!(refused.len(), 1);
        assert!(
            refused[0].to_string().contains("longer than"),
            "{}",
            refused[0]
        );
    }

    /// A parsed content's draft parses to the same content: what a form
    /// shows of a version, or a merge starts from, saves unchanged.
    #[test]
    fn parsed_content_round_trips_through_its_draft() {
        let content = ContentDraft {
            title: "  Dal ".into(),
            summary: Some("Red lentils.\r\n\r\nQuick.".into()),
            recipe_yield: Yield {
                servings: Some(4),
                text: Some(" 4 bowls ".into()),
            },
            cook: Minutes::new(25).ok(),
            ingredients: vec![" 1 cup lentils".into(), "".into(), "3 cups water".into()],
            steps: vec![Step {
                section: Some(" ".into()),
                text: " Simmer. ".into(),
            }],
            tags: vec!["Vegan".into(), "quick".into()],
            ..ContentDraft::default()
        }
        .normalized()
        .unwrap();
        assert_eq!(content.title(), "Dal");
        assert_eq!(content.summary(), Some("Red lentils.\n\nQuick."));
        assert_eq!(content.recipe_yield().text.as_deref(), Some("4 bowls"));
        assert_eq!(content.ingredients(), ["1 cup lentils", "3 cups water"]);
        assert_eq!(content.steps()[0].section, None);
        assert_eq!(content.tags(), ["quick", "vegan"]);
        assert_eq!(content.to_draft().normalized().as_ref(), Ok(&content));
        assert_eq!(
            Content::parse(content.clone().into_draft()),
            Ok(content.clone())
        );
        let draft: ContentDraft = content.clone().into();
        assert_eq!(&draft, content.as_draft());
    }

    #[test]
    fn every_field_reads_back_what_it_stores_and_what_a_form_sends() {
        let full = ContentDraft {
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
            ..ContentDraft::default()
        }
        .normalized()
        .unwrap();
        let mut stored = ContentDraft {
            title: "Dal".into(),
            ..ContentDraft::default()
        };
        let mut typed = stored.clone();
        let mut copied = stored.clone();
        for field in FIELDS {
            let value = field
                .value(&full)
                .unwrap_or_else(|| panic!("{} is empty", field.name));
            assert_eq!(value.value_type(), field.value_type(), "{}", field.name);
            field.read(&mut stored, &value);
            field
                .from_form(&mut typed, &field.form_text(&full))
                .unwrap();
            field.copy(&full, &mut copied);
        }
        assert_eq!(&stored, full.as_draft());
        assert_eq!(&copied, full.as_draft());
        assert_eq!(typed.normalized().unwrap(), full);
    }

    #[test]
    fn normalizing_tidies_what_a_cook_would_not_mean_and_refuses_what_cannot_be_a_recipe() {
        let content = ContentDraft {
            title: "  Dal  ".into(),
            tags: vec!["Vegan".into(), "quick".into(), "vegan".into(), " ".into()],
            ingredients: vec!["  1 cup lentils ".into(), "".into()],
            summary: Some("   ".into()),
            ..ContentDraft::default()
        }
        .normalized()
        .unwrap();
        assert_eq!(content.title(), "Dal");
        assert_eq!(content.tags(), ["quick", "vegan"]);
        for bare in [".", "..", " ... "] {
            let refused = ContentDraft {
                title: "Dal".into(),
                tags: vec!["quick".into(), bare.into()],
                ..ContentDraft::default()
            }
            .normalized()
            .unwrap_err();
            assert_eq!(refused.field(), ContentField::Tags);
            assert!(refused.to_string().contains("is only dots"), "{refused}");
        }
        assert_eq!(content.ingredients(), ["1 cup lentils"]);
        assert_eq!(content.summary(), None);
        assert!(
            ContentDraft::default().normalized().is_err(),
            "a recipe needs a title"
        );
        let huge = ContentDraft {
            title: "x".repeat(MAX_TITLE + 1),
            ..ContentDraft::default()
        };
        assert!(huge.normalized().is_err());
    }
}
