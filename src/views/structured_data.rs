//! schema.org structured data: a `Recipe` for each recipe page and an
//! `ItemList` for the catalog, built with serde.
//!
//! The JSON goes inside `<script type="application/ld+json">`, where HTML
//! escaping does not apply: `</script>` in a title would end the element.
//! `to_script` writes `<`, `>` and `&` as JSON's `\u003c`-style escapes,
//! which every JSON reader decodes back and no HTML parser sees as markup.

use serde::ser::SerializeMap;
use serde::Serialize;

use super::markdown::Memos;
use super::{machine_time, step_runs};
use crate::domain::{schema_org, Content, Instant, Step, FIELDS};

/// serde_json's compact output, but with `<`, `>`, `&` and the two
/// JavaScript line terminators inside strings written as `\uXXXX`, in the
/// same pass (structural JSON never contains them, so strings are all there
/// is to escape).
struct ScriptSafe;

impl serde_json::ser::Formatter for ScriptSafe {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        // A byte scan: the five characters are `<`, `>`, `&` and the
        // three-byte sequences E2 80 A8 and E2 80 A9.
        let bytes = fragment.as_bytes();
        // Most strings have none; a vectorised scan says so (see `Text`).
        let special = |b: u8| matches!(b, b'<' | b'>' | b'&' | 0xE2);
        if !bytes.iter().fold(false, |any, &b| any | special(b)) {
            return writer.write_all(bytes);
        }
        let mut start = 0;
        let mut i = 0;
        while i < bytes.len() {
            let (escaped, width) = match bytes[i] {
                b'<' => ("\\u003c", 1),
                b'>' => ("\\u003e", 1),
                b'&' => ("\\u0026", 1),
                0xE2 if bytes.get(i + 1) == Some(&0x80) && bytes.get(i + 2) == Some(&0xA8) => {
                    ("\\u2028", 3)
                }
                0xE2 if bytes.get(i + 1) == Some(&0x80) && bytes.get(i + 2) == Some(&0xA9) => {
                    ("\\u2029", 3)
                }
                _ => {
                    i += 1;
                    continue;
                }
            };
            writer.write_all(&bytes[start..i])?;
            writer.write_all(escaped.as_bytes())?;
            i += width;
            start = i;
        }
        writer.write_all(&bytes[start..])
    }
}

/// `value` as JSON that is safe inside a `<script>` element.
pub fn to_script<T: Serialize>(value: &T) -> String {
    let mut out = Vec::with_capacity(8 << 10);
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, ScriptSafe);
    // Serialising these plain structs cannot fail: no maps with non-string
    // keys, no failing `Serialize` impls.
    value
        .serialize(&mut serializer)
        .expect("JSON-LD serialises");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// What a recipe's JSON-LD says, beyond its content.
pub struct RecipeFacts<'a> {
    /// The recipe page's absolute URL.
    pub url: &'a str,
    pub author: Option<&'a str>,
    pub published: Option<Instant>,
    pub modified: Option<Instant>,
    /// The absolute URL of the parent at the version the fork is in step
    /// with (forked, or the newest it brought in).
    pub based_on: Option<&'a str>,
    /// The cooks whose suggestions the recipe took, by handle.
    pub contributors: &'a [String],
    pub version: u32,
    /// Absolute URLs of the recipe's picture: its 1:1, 4:3 and 16:9 crops
    /// for an uploaded one, the address for one elsewhere.
    pub images: &'a [String],
    /// The Markdown memos its plain text is read through.
    pub memos: &'a Memos,
}

#[derive(Serialize)]
struct Thing<'a> {
    #[serde(rename = "@type")]
    kind: &'static str,
    name: &'a str,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Instruction {
    Step(HowToStep),
    Section {
        #[serde(rename = "@type")]
        kind: &'static str,
        name: String,
        #[serde(rename = "itemListElement")]
        steps: Vec<HowToStep>,
    },
}

#[derive(Serialize)]
struct HowToStep {
    #[serde(rename = "@type")]
    kind: &'static str,
    text: String,
}

impl HowToStep {
    fn of(step: &Step, memos: &Memos) -> HowToStep {
        HowToStep {
            kind: "HowToStep",
            text: memos.plain_text(&step.text).to_string(),
        }
    }
}

/// Steps as `HowToStep`s, in `HowToSection`s where they have sections.
fn instructions(steps: &[Step], memos: &Memos) -> Vec<Instruction> {
    let mut out: Vec<Instruction> = Vec::new();
    for (section, run, _) in step_runs(steps) {
        match section {
            None => out.extend(
                run.iter()
                    .map(|s| Instruction::Step(HowToStep::of(s, memos))),
            ),
            Some(name) => out.push(Instruction::Section {
                kind: "HowToSection",
                name: name.to_owned(),
                steps: run.iter().map(|s| HowToStep::of(s, memos)).collect(),
            }),
        }
    }
    out
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RecipeLd<'a> {
    #[serde(rename = "@context")]
    context: &'static str,
    #[serde(rename = "@type")]
    kind: &'static str,
    name: &'a str,
    url: &'a str,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    image: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    author: Option<Thing<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    date_published: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    date_modified: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    recipe_yield: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prep_time: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cook_time: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    total_time: Option<String>,
    recipe_ingredient: &'a [String],
    recipe_instructions: Vec<Instruction>,
    /// `recipeCategory`, `recipeCuisine`: the fields that are a line of
    /// text by their schema.org names.
    #[serde(flatten)]
    lines: Lines<'a>,
    /// The language as its cook names it ("Italian"): a `Language` by name,
    /// since schema.org's text form wants a BCP 47 code.
    #[serde(skip_serializing_if = "Option::is_none")]
    in_language: Option<Thing<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    keywords: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    is_based_on: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    contributor: Vec<Thing<'a>>,
    version: u32,
}

/// The properties `RecipeLd` shapes itself, of the fields that are a line
/// of text: the yield with the servings, the language as a `Language`.
const SHAPED: [&str; 2] = [schema_org::RECIPE_YIELD, schema_org::IN_LANGUAGE];

/// Every other field of `content::FIELDS` that is a line of text and has a
/// schema.org name, as that property, in the order of the names (JSON-LD's
/// order means nothing; a fixed one keeps a page's bytes): a field added
/// to the table is in the JSON-LD with no code here.
struct Lines<'a>(&'a Content);

impl Serialize for Lines<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut lines: Vec<(&str, &str)> = FIELDS
            .iter()
            .filter_map(|field| Some((field.schema_org_line()?, field.line(self.0)?)))
            .filter(|(name, _)| !SHAPED.contains(name))
            .collect();
        lines.sort_unstable();
        let mut map = serializer.serialize_map(Some(lines.len()))?;
        for (name, text) in lines {
            map.serialize_entry(name, text)?;
        }
        map.end()
    }
}

/// A schema.org `Recipe` for `content`, ready for a `<script>` element.
pub fn recipe(content: &Content, facts: &RecipeFacts) -> String {
    to_script(&recipe_ld(content, facts))
}

/// The same `Recipe` as a JSON value, to sit inside another document (an
/// ActivityStreams `Article`'s `mainEntity`).
pub fn recipe_value(content: &Content, facts: &RecipeFacts) -> serde_json::Value {
    // Serialising these plain structs cannot fail (see `to_script`).
    serde_json::to_value(recipe_ld(content, facts)).expect("JSON-LD serialises")
}

fn recipe_ld<'a>(content: &'a Content, facts: &'a RecipeFacts) -> RecipeLd<'a> {
    let y = content.recipe_yield();
    // recipeYield takes several values: a number of servings and the words.
    let recipe_yield = y
        .servings
        .map(|n| n.to_string())
        .into_iter()
        .chain(y.text.clone())
        .collect();
    RecipeLd {
        context: "https://schema.org",
        kind: "Recipe",
        name: content.title(),
        url: facts.url,
        image: facts.images,
        author: facts.author.map(|name| Thing {
            kind: "Person",
            name,
        }),
        date_published: facts.published.map(machine_time),
        date_modified: facts.modified.map(machine_time),
        description: content
            .summary()
            .map(|s| facts.memos.plain_text(s).to_string()),
        recipe_yield,
        prep_time: content.prep().map(|m| m.iso8601()),
        cook_time: content.cook().map(|m| m.iso8601()),
        total_time: content.total().map(|m| m.iso8601()),
        recipe_ingredient: content.ingredients(),
        recipe_instructions: instructions(content.steps(), facts.memos),
        lines: Lines(content),
        in_language: content.language().map(|name| Thing {
            kind: "Language",
            name,
        }),
        keywords: (!content.tags().is_empty()).then(|| content.tags().join(", ")),
        is_based_on: facts.based_on,
        contributor: facts
            .contributors
            .iter()
            .map(|name| Thing {
                kind: "Person",
                name,
            })
            .collect(),
        version: facts.version,
    }
}

/// A list entry as search engines read a list of pages ("summary page"):
/// its position and the page's URL; the page itself carries the rest.
#[derive(Serialize)]
struct ListItem<'a> {
    #[serde(rename = "@type")]
    kind: &'static str,
    position: usize,
    url: &'a str,
}

#[derive(Serialize)]
struct ItemList<'a> {
    #[serde(rename = "@context")]
    context: &'static str,
    #[serde(rename = "@type")]
    kind: &'static str,
    #[serde(rename = "itemListElement")]
    items: Vec<ListItem<'a>>,
}

/// A schema.org `ItemList` of recipe pages, `first_position` being the
/// position of the first (pages after the first continue the count).
/// `slugs` are the listed recipes'.
pub fn item_list<'a>(
    base_url: &'a str,
    slugs: impl Iterator<Item = &'a str>,
    first_position: usize,
) -> String {
    // Every URL written into one buffer, then lent to serde: a string per
    // URL, or serde's `collect_str`, cost a third of the catalog's render.
    let mut urls = String::new();
    let mut ends = Vec::new();
    for slug in slugs {
        urls.push_str(base_url);
        urls.push_str("/recipes/");
        urls.push_str(slug);
        ends.push(urls.len());
    }
    let starts = std::iter::once(0).chain(ends.iter().copied());
    to_script(&ItemList {
        context: "https://schema.org",
        kind: "ItemList",
        items: starts
            .zip(ends.iter().copied())
            .enumerate()
            .map(|(i, (start, end))| ListItem {
                kind: "ListItem",
                position: first_position + i,
                url: &urls[start..end],
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{ContentDraft, Slot};

    #[test]
    fn script_safe_json_cannot_close_the_script_and_still_parses() {
        let hostile = "</script><script>alert(1)</script>&\u{2028}\u{2029}é\"\\";
        let safe = to_script(&[hostile]);
        assert!(!safe.contains('<') && !safe.contains('>') && !safe.contains('&'));
        assert!(!safe.contains('\u{2028}'));
        let back: Vec<String> = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, [hostile]);
    }

    /// The table's schema.org names are the JSON-LD's: a field shaped by
    /// hand here is under its row's name, and a line of text is there
    /// with no code of its own.
    #[test]
    fn every_field_with_a_schema_org_name_is_under_that_name() {
        let mut draft = ContentDraft {
            title: "Dal".into(),
            ..ContentDraft::default()
        };
        for field in FIELDS {
            let typed = match field.slot {
                Slot::Minutes(..) | Slot::Servings(..) => "4",
                _ => "Some words",
            };
            field.from_form(&mut draft, typed).unwrap();
        }
        let content = Content::parse(draft).unwrap();
        let images = ["https://forkful.test/dal.jpg".to_owned()];
        let facts = RecipeFacts {
            url: "https://forkful.test/recipes/dal",
            author: None,
            published: None,
            modified: None,
            based_on: None,
            contributors: &[],
            version: 1,
            images: &images,
            memos: &Memos::default(),
        };
        let ld: serde_json::Value = serde_json::from_str(&recipe(&content, &facts)).unwrap();
        for field in FIELDS {
            if let Some(name) = field.attr.schema_org {
                assert!(ld.get(name).is_some(), "{} is not {name}: {ld}", field.name);
            }
        }
    }

    #[test]
    fn sections_gather_their_steps() {
        let step = |section: Option<&str>, text: &str| Step {
            section: section.map(str::to_owned),
            text: text.to_owned(),
        };
        let steps = [
            step(None, "Heat the pan."),
            step(Some("Sauce"), "Melt *butter*."),
            step(None, "Add flour."),
            step(Some("Pasta"), "Boil."),
        ];
        let json = serde_json::to_value(instructions(&steps, &Memos::default())).unwrap();
        assert_eq!(json[0]["@type"], "HowToStep");
        assert_eq!(json[1]["@type"], "HowToSection");
        assert_eq!(json[1]["name"], "Sauce");
        assert_eq!(json[1]["itemListElement"][0]["text"], "Melt butter.");
        assert_eq!(json[1]["itemListElement"][1]["text"], "Add flour.");
        assert_eq!(json[2]["name"], "Pasta");
    }
}
