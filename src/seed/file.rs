//! One seed file: an EDN map read into a `SeedRecipe`, with the line of
//! everything that can be wrong.

use crate::domain::{Change, ContentDraft, Minutes, Slot, Slug, Step, FIELDS};
use crate::edn::{self, Edn, Node};
use crate::store;

use super::SeedError;

/// A recipe file as read: its versions are partial until `plan` fills them.
#[derive(Debug, Clone)]
pub(super) struct SeedRecipe {
    pub file: String,
    pub slug: String,
    pub forks: Option<SeedFork>,
    pub versions: Vec<SeedVersion>,
}

#[derive(Debug, Clone)]
pub(super) struct SeedFork {
    pub slug: String,
    pub version: usize,
    pub line: usize,
}

/// One version: who, when, why, and the fields it sets.
#[derive(Debug, Clone)]
pub(super) struct SeedVersion {
    pub line: usize,
    pub at: i64,
    pub author: String,
    pub note: String,
    /// For a fork's later version: the parent's version whose changes it
    /// brings in (a merge onto the version before it), instead of fields.
    pub brings_in: Option<usize>,
    /// For a later version: the suggestion of one of the recipe's forks
    /// it takes (a merge of the fork's changes onto the version before
    /// it), instead of fields.
    pub takes: Option<SeedTakes>,
    fields: Vec<Field>,
}

/// A suggestion a recipe's version takes: which of its forks made it, the
/// fork's version suggested, and when and with what words its cook did.
#[derive(Debug, Clone)]
pub(super) struct SeedTakes {
    pub fork: String,
    pub version: usize,
    pub at: i64,
    pub message: String,
    pub line: usize,
}

#[derive(Debug, Clone)]
enum Field {
    Title(String),
    /// A field of the recipe's table (`content::FIELDS`), by its name: a
    /// line of text, an address or Markdown.
    Text(&'static crate::domain::Field, String),
    /// A field of the table that holds minutes.
    Minutes(&'static crate::domain::Field, Minutes),
    Yield(Option<i64>, Option<String>),
    Tags(Vec<String>),
    Ingredients(Vec<String>),
    Steps(Vec<Step>),
}

impl SeedVersion {
    /// Who made this version, when, and why.
    pub(super) fn change(&self) -> Change {
        Change {
            author: self.author.clone(),
            note: self.note.clone(),
            at: Some(self.at),
            attempt: None,
        }
    }

    /// `content` with this version's fields over it.
    pub(super) fn apply(&self, mut content: ContentDraft) -> ContentDraft {
        for field in &self.fields {
            match field.clone() {
                Field::Title(t) => content.title = t,
                Field::Text(row, t) => match row.slot {
                    Slot::Line(_, place) | Slot::Address(_, place) | Slot::Markdown(_, place) => {
                        *place(&mut content) = Some(t)
                    }
                    Slot::Minutes(..) | Slot::Servings(..) => {
                        unreachable!("read as text only for a text slot")
                    }
                },
                Field::Minutes(row, m) => match row.slot {
                    Slot::Minutes(_, place) => *place(&mut content) = Some(m),
                    _ => unreachable!("read as minutes only for a minutes slot"),
                },
                Field::Yield(servings, text) => {
                    content.recipe_yield.servings = servings;
                    content.recipe_yield.text = text;
                }
                Field::Tags(t) => content.tags = t,
                Field::Ingredients(lines) => content.ingredients = lines,
                Field::Steps(steps) => content.steps = steps,
            }
        }
        content
    }
}

/// The table's rows a seed file writes inside `:yield`.
const YIELD_FIELDS: [&str; 2] = ["servings", "yield_text"];

struct Reader<'a> {
    file: &'a str,
}

impl Reader<'_> {
    fn fail(&self, node: &Node, message: impl Into<String>) -> SeedError {
        SeedError {
            file: self.file.to_owned(),
            line: node.line,
            message: message.into(),
        }
    }

    /// The entries of a map node, keys as keyword text.
    fn entries<'n>(&self, node: &'n Node) -> Result<Vec<(&'n str, &'n Node, &'n Node)>, SeedError> {
        if !matches!(node.edn, Edn::Map(_)) {
            return Err(self.fail(
                node,
                format!("expected a map {{...}}, found {}", short(&node.edn)),
            ));
        }
        node.children
            .chunks(2)
            .map(|pair| match (&pair[0].edn, pair.get(1)) {
                (Edn::Keyword(k), Some(value)) => Ok((k.as_str(), &pair[0], value)),
                _ => Err(self.fail(
                    &pair[0],
                    format!("map keys are keywords, not {}", short(&pair[0].edn)),
                )),
            })
            .collect()
    }

    fn string(&self, node: &Node, what: &str) -> Result<String, SeedError> {
        match &node.edn {
            Edn::String(s) => Ok(s.clone()),
            other => Err(self.fail(node, format!("{what} is a string, not {}", short(other)))),
        }
    }

    fn int(&self, node: &Node, what: &str) -> Result<i64, SeedError> {
        match &node.edn {
            Edn::Int(n) => Ok(*n),
            other => Err(self.fail(
                node,
                format!("{what} is a whole number, not {}", short(other)),
            )),
        }
    }

    fn strings(&self, node: &Node, what: &str) -> Result<Vec<String>, SeedError> {
        match &node.edn {
            Edn::Vector(_) => node.children.iter().map(|c| self.string(c, what)).collect(),
            other => Err(self.fail(
                node,
                format!("{what} are a vector of strings, not {}", short(other)),
            )),
        }
    }

    fn minutes(&self, node: &Node, what: &str) -> Result<Minutes, SeedError> {
        Minutes::new(self.int(node, what)?).map_err(|e| self.fail(node, e))
    }

    /// `:key value` for a scalar field of the recipe's table, named as the
    /// form names it (`:cuisine`, `:prep`). Servings and the yield's words
    /// are `:yield`'s, and are not taken here.
    fn table_field(&self, key: &str, key_node: &Node, value: &Node) -> Result<Field, SeedError> {
        let row = FIELDS
            .iter()
            .find(|row| row.name == key && !YIELD_FIELDS.contains(&row.name));
        let what = format!(":{key}");
        match row.map(|row| (row, row.slot)) {
            Some((row, Slot::Line(..) | Slot::Address(..) | Slot::Markdown(..))) => {
                Ok(Field::Text(row, self.string(value, &what)?))
            }
            Some((row, Slot::Minutes(..))) => Ok(Field::Minutes(row, self.minutes(value, &what)?)),
            Some((_, Slot::Servings(..))) | None => {
                Err(self.fail(key_node, format!("a version has no field :{key}")))
            }
        }
    }

    /// An instant, `#inst "..."` (RFC 3339), for the key `what`.
    fn instant(&self, node: &Node, what: &str) -> Result<i64, SeedError> {
        match &node.edn {
            Edn::Tagged(tag, inner) if tag == "inst" => match inner.as_ref() {
                Edn::String(s) => store::parse_rfc3339(s)
                    .ok_or_else(|| self.fail(node, format!("{s:?} is not an RFC 3339 instant")))
                    // A new store's transactions start at the epoch, and
                    // none may be earlier than one before it (found by the
                    // seed_files fuzz target: a planned file the store
                    // refused).
                    .and_then(|at| match at < 0 {
                        true => Err(self.fail(
                            node,
                            format!("{s:?} is before 1970, which no change can be"),
                        )),
                        false => Ok(at),
                    }),
                other => {
                    Err(self.fail(node, format!("#inst takes a string, not {}", short(other))))
                }
            },
            other => Err(self.fail(
                node,
                format!("{what} is #inst \"...\", not {}", short(other)),
            )),
        }
    }

    /// A version number (from 1), for the key `what`.
    fn version_number(&self, node: &Node, what: &str) -> Result<usize, SeedError> {
        let n = self.int(node, what)?;
        usize::try_from(n)
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| self.fail(node, format!("{what} is a version number, not {n}")))
    }

    /// `:takes {:fork "slug" :version N :at #inst "..." :message "..."}`.
    fn takes(&self, node: &Node) -> Result<SeedTakes, SeedError> {
        let (mut fork, mut version, mut at, mut message) = (None, None, None, None);
        for (k, k_node, v) in self.entries(node)? {
            match k {
                "fork" => fork = Some(self.string(v, ":fork")?),
                "version" => version = Some(self.version_number(v, ":version")?),
                "at" => at = Some(self.instant(v, ":at")?),
                "message" => message = Some(self.string(v, ":message")?),
                other => {
                    return Err(self.fail(
                        k_node,
                        format!(":takes has :fork, :version, :at and :message, not :{other}"),
                    ))
                }
            }
        }
        let missing = |what: &str| self.fail(node, format!(":takes needs {what}"));
        Ok(SeedTakes {
            fork: fork.ok_or_else(|| missing(":fork"))?,
            version: version.ok_or_else(|| missing(":version"))?,
            at: at.ok_or_else(|| missing(":at (when the fork's cook suggested it)"))?,
            message: message.ok_or_else(|| missing(":message"))?,
            line: node.line,
        })
    }

    /// A cook's handle, for `:author`.
    fn handle(&self, value: &Node) -> Result<String, SeedError> {
        let handle = self.string(value, ":author")?;
        Slug::parse(&handle)
            .map_err(|_| self.fail(value, format!("{handle:?} is not a handle (a-z, 0-9, -)")))?;
        Ok(handle)
    }

    /// `:yield {:servings N :text "..."}`.
    fn recipe_yield(&self, value: &Node) -> Result<Field, SeedError> {
        let (mut servings, mut text) = (None, None);
        for (k, k_node, v) in self.entries(value)? {
            match k {
                "servings" => servings = Some(self.int(v, ":servings")?),
                "text" => text = Some(self.string(v, ":text")?),
                other => {
                    return Err(self.fail(
                        k_node,
                        format!("a yield has :servings and :text, not :{other}"),
                    ))
                }
            }
        }
        Ok(Field::Yield(servings, text))
    }

    /// `:steps [...]`, each step a string or `{:section "..." :text "..."}`.
    fn steps(&self, value: &Node) -> Result<Vec<Step>, SeedError> {
        let Edn::Vector(_) = &value.edn else {
            return Err(self.fail(value, ":steps are a vector"));
        };
        let mut steps = Vec::new();
        for step in &value.children {
            steps.push(self.step(step)?);
        }
        Ok(steps)
    }

    /// One step: a string, or a map of its section and text.
    fn step(&self, step: &Node) -> Result<Step, SeedError> {
        match &step.edn {
            Edn::String(text) => Ok(Step {
                section: None,
                text: text.clone(),
            }),
            Edn::Map(_) => {
                let (mut section, mut text) = (None, None);
                for (k, k_node, v) in self.entries(step)? {
                    match k {
                        "section" => section = Some(self.string(v, ":section")?),
                        "text" => text = Some(self.string(v, ":text")?),
                        other => {
                            return Err(self.fail(
                                k_node,
                                format!("a step has :section and :text, not :{other}"),
                            ))
                        }
                    }
                }
                Ok(Step {
                    section,
                    text: text.ok_or_else(|| self.fail(step, "a step needs :text"))?,
                })
            }
            other => Err(self.fail(
                step,
                format!("a step is a string or a map, not {}", short(other)),
            )),
        }
    }

    fn version(&self, node: &Node) -> Result<SeedVersion, SeedError> {
        let mut at = None;
        let mut author = None;
        let mut note = None;
        let mut brings_in = None;
        let mut takes = None;
        let mut fields = Vec::new();
        for (key, key_node, value) in self.entries(node)? {
            match key {
                "brings-in" => brings_in = Some(self.version_number(value, ":brings-in")?),
                "takes" => takes = Some(self.takes(value)?),
                "at" => at = Some(self.instant(value, ":at")?),
                "author" => author = Some(self.handle(value)?),
                "note" => note = Some(self.string(value, ":note")?),
                "title" => fields.push(Field::Title(self.string(value, ":title")?)),
                "tags" => fields.push(Field::Tags(self.strings(value, ":tags")?)),
                "ingredients" => {
                    fields.push(Field::Ingredients(self.strings(value, ":ingredients")?))
                }
                "yield" => fields.push(self.recipe_yield(value)?),
                "steps" => fields.push(Field::Steps(self.steps(value)?)),
                other => fields.push(self.table_field(other, key_node, value)?),
            }
        }
        let missing = |what: &str| self.fail(node, format!("every version needs {what}"));
        if brings_in.is_some() && (!fields.is_empty() || takes.is_some()) {
            return Err(self.fail(
                node,
                "a version that brings in its parent's changes has only :at, :author, :note and :brings-in",
            ));
        }
        if takes.is_some() && !fields.is_empty() {
            return Err(self.fail(
                node,
                "a version that takes a fork's suggestion has only :at, :author, :note and :takes",
            ));
        }
        Ok(SeedVersion {
            brings_in,
            takes,
            line: node.line,
            at: at.ok_or_else(|| missing(":at"))?,
            author: author.ok_or_else(|| missing(":author"))?,
            note: note.ok_or_else(|| missing(":note"))?,
            fields,
        })
    }
}

/// A form shortened for an error message.
fn short(edn: &Edn) -> String {
    let text = edn.to_string();
    if text.chars().count() > 40 {
        format!("{}…", text.chars().take(39).collect::<String>())
    } else {
        text
    }
}

/// Reads the file `name` (e.g. `shakshuka.edn`) with text `text`.
pub(super) fn read(name: &str, text: &str) -> Result<SeedRecipe, SeedError> {
    let reader = Reader { file: name };
    let root = edn::parse_node(text).map_err(|e| SeedError {
        file: name.to_owned(),
        line: e.line,
        message: e.message,
    })?;
    let mut slug = None;
    let mut forks = None;
    let mut versions = Vec::new();
    for (key, key_node, value) in reader.entries(&root)? {
        match key {
            "slug" => slug = Some(reader.slug(value)?),
            "forks" => forks = Some(reader.forks(value)?),
            "versions" => {
                let Edn::Vector(_) = &value.edn else {
                    return Err(reader.fail(value, ":versions is a vector of maps"));
                };
                for node in &value.children {
                    versions.push(reader.version(node)?);
                }
            }
            other => {
                return Err(reader.fail(
                    key_node,
                    format!("a recipe file has :slug, :forks and :versions, not :{other}"),
                ))
            }
        }
    }
    let slug = slug.ok_or_else(|| reader.fail(&root, "the recipe needs a :slug"))?;
    reader.check_versions(&root, forks.is_some(), &versions)?;
    Ok(SeedRecipe {
        file: name.to_owned(),
        slug,
        forks,
        versions,
    })
}

impl Reader<'_> {
    /// `:slug "..."`, which must be the file's name.
    fn slug(&self, value: &Node) -> Result<String, SeedError> {
        let text = self.string(value, ":slug")?;
        Slug::parse(&text).map_err(|e| self.fail(value, e.to_string()))?;
        if Some(text.as_str()) != self.file.strip_suffix(".edn") {
            return Err(self.fail(value, format!("the slug {text} is not the file's name")));
        }
        Ok(text)
    }

    /// `:forks {:slug "..." :version N}`.
    fn forks(&self, value: &Node) -> Result<SeedFork, SeedError> {
        let (mut parent, mut version) = (None, None);
        for (k, k_node, v) in self.entries(value)? {
            match k {
                "slug" => parent = Some(self.string(v, ":slug")?),
                "version" => {
                    let n = self.int(v, ":version")?;
                    version =
                        Some(usize::try_from(n).ok().filter(|n| *n >= 1).ok_or_else(|| {
                            self.fail(v, format!("versions count from 1, not {n}"))
                        })?);
                }
                other => {
                    return Err(self.fail(
                        k_node,
                        format!(":forks has :slug and :version, not :{other}"),
                    ))
                }
            }
        }
        Ok(SeedFork {
            slug: parent.ok_or_else(|| self.fail(value, ":forks needs :slug"))?,
            version: version.ok_or_else(|| self.fail(value, ":forks needs :version"))?,
            line: value.line,
        })
    }

    /// A recipe's versions: at least one, in time order, and an
    /// original's first (one that `forks` nothing) with its title.
    fn check_versions(
        &self,
        root: &Node,
        forks: bool,
        versions: &[SeedVersion],
    ) -> Result<(), SeedError> {
        if versions.is_empty() {
            return Err(self.fail(root, "the recipe needs at least one version"));
        }
        for pair in versions.windows(2) {
            if pair[1].at <= pair[0].at {
                return Err(SeedError {
                    file: self.file.to_owned(),
                    line: pair[1].line,
                    message: "versions must be in time order, each later than the one before"
                        .into(),
                });
            }
        }
        if !forks
            && !versions[0]
                .fields
                .iter()
                .any(|f| matches!(f, Field::Title(_)))
        {
            return Err(self.fail(root, "an original's first version needs a :title"));
        }
        Ok(())
    }
}
