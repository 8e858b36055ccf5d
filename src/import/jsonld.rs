//! A schema.org Recipe in a page's JSON-LD, in the shapes real sites
//! publish: a Recipe at the top, in a list, in an `@graph` (Yoast), or as
//! a page's `mainEntity`; `@type` a string or a list; instructions as one
//! string, strings, `HowToStep`s or `HowToSection`s of them; an image as a
//! URL, a list or an `ImageObject`; `recipeYield` a number, a string or a
//! list.

use serde_json::Value;

use super::lenient_json;
use super::text::{duration, numbered_steps, plain};
use super::Found;
use crate::domain::{schema_org, ContentDraft, Step, Yield, FIELDS};

/// How deep the search for a Recipe goes into a JSON-LD document.
const MAX_DEPTH: usize = 8;

/// The page's JSON-LD documents, those that parse once the defects sites
/// publish are forgiven (`lenient_json`).
fn documents(page: &scraper::Html) -> Vec<Value> {
    let selector =
        scraper::Selector::parse("script[type='application/ld+json']").expect("a valid selector");
    page.select(&selector)
        .filter_map(|script| {
            let text: String = script.text().collect();
            lenient_json::parse(&text)
        })
        .collect()
}

/// The page's Recipe: of several (a recipe and the ones a sidebar links
/// to, or one node per language), the one with the most ingredients and
/// steps, the first of those; depth first.
fn first_recipe(documents: &[Value]) -> Option<&Value> {
    let mut recipes = Vec::new();
    for document in documents {
        find(document, 0, &mut recipes);
    }
    // Counted as read: a section's steps, a text's numbered steps.
    let sizes: Vec<usize> = recipes
        .iter()
        .map(|r| {
            let content = content_of(r);
            content.ingredients.len() + content.steps.len()
        })
        .collect();
    let most = *sizes.iter().max()?;
    recipes
        .into_iter()
        .zip(sizes)
        .find(|(_, size)| *size == most)
        .map(|(recipe, _)| recipe)
}

pub(super) fn recipe(page: &scraper::Html) -> Option<Found> {
    let documents = documents(page);
    let recipe = first_recipe(&documents)?;
    let mut site_name = None;
    for document in &documents {
        site_name = site_name.or_else(|| website_name(document, 0));
    }
    Some(Found {
        content: content_of(recipe),
        site_name: site_name.or_else(|| publisher(recipe)),
    })
}

/// The address the page's Recipe gives itself: its `url`, its
/// `mainEntityOfPage` (an address, or a `WebPage` with an `@id` or `url`),
/// or its `@id`, whichever is first an http(s) address; without the
/// fragment, which names a node of the document, not a page (`@id`s are
/// often `https://site/dal#recipe`).
pub(super) fn address(page: &scraper::Html) -> Option<String> {
    let documents = documents(page);
    let recipe = first_recipe(&documents)?;
    let of_page = recipe.get("mainEntityOfPage");
    let found = [
        recipe.get("url"),
        of_page,
        of_page.and_then(|p| p.get("@id")),
        of_page.and_then(|p| p.get("url")),
        recipe.get("@id"),
    ]
    .into_iter()
    .flatten()
    .filter_map(Value::as_str)
    .map(|url| url.trim().split('#').next().unwrap_or(""))
    .filter(|url| url.len() <= super::MAX_SOURCE_URL)
    .find(|url| url.starts_with("https://") || url.starts_with("http://"))
    .map(str::to_owned);
    found
}

fn is_type(value: &Value, kind: &str) -> bool {
    let named = |t: &Value| {
        t.as_str()
            .is_some_and(|t| t == kind || t.rsplit(['/', ':']).next() == Some(kind))
    };
    match value.get("@type") {
        Some(Value::Array(types)) => types.iter().any(named),
        Some(t) => named(t),
        None => false,
    }
}

/// Every Recipe in `value`, depth first.
fn find<'a>(value: &'a Value, depth: usize, out: &mut Vec<&'a Value>) {
    if depth > MAX_DEPTH {
        return;
    }
    match value {
        Value::Array(items) => {
            for item in items {
                find(item, depth + 1, out);
            }
        }
        Value::Object(map) => {
            if is_type(value, "Recipe") {
                out.push(value);
                return;
            }
            for key in [
                "@graph",
                "mainEntity",
                "mainEntityOfPage",
                "itemListElement",
                "item",
            ] {
                if let Some(inner) = map.get(key) {
                    find(inner, depth + 1, out);
                }
            }
        }
        _ => {}
    }
}

/// The name of the `WebSite` (or the `Organization`) a document describes.
fn website_name(value: &Value, depth: usize) -> Option<String> {
    if depth > MAX_DEPTH {
        return None;
    }
    match value {
        Value::Array(items) => items.iter().find_map(|i| website_name(i, depth + 1)),
        Value::Object(map) => {
            if is_type(value, "WebSite") {
                if let Some(name) = map.get("name").and_then(text) {
                    return Some(name);
                }
            }
            map.get("@graph").and_then(|g| website_name(g, depth + 1))
        }
        _ => None,
    }
}

fn publisher(recipe: &Value) -> Option<String> {
    recipe
        .get("publisher")
        .and_then(|p| p.get("name"))
        .and_then(text)
}

/// A value as one line of text: a string, a number, or the text, name or
/// value of an object; the first of a list.
fn text(value: &Value) -> Option<String> {
    let found = match value {
        Value::String(s) => plain(s),
        Value::Number(n) => n.to_string(),
        Value::Array(items) => return items.iter().find_map(text),
        Value::Object(map) => {
            return ["@value", "text", "name"]
                .iter()
                .find_map(|k| map.get(*k).and_then(text))
        }
        _ => return None,
    };
    (!found.is_empty()).then_some(found)
}

/// A value as a list of lines: a list's items, or a string's lines.
fn lines(value: &Value) -> Vec<String> {
    match value {
        // A list of lists (one per group of ingredients) is read flat.
        Value::Array(items) if items.iter().any(Value::is_array) => items
            .iter()
            .flat_map(|item| match item {
                Value::Array(group) => group.iter().filter_map(text).collect::<Vec<_>>(),
                other => text(other).into_iter().collect(),
            })
            .collect(),
        Value::Array(items) => items.iter().filter_map(text).collect(),
        Value::String(s) => s.lines().map(plain).filter(|l| !l.is_empty()).collect(),
        other => text(other).into_iter().collect(),
    }
}

fn steps(value: &Value, section: Option<&str>, depth: usize, out: &mut Vec<Step>) {
    if depth > MAX_DEPTH {
        return;
    }
    let mut push = |text: String| {
        if !text.is_empty() {
            out.push(Step {
                section: section.map(str::to_owned),
                text,
            });
        }
    };
    match value {
        Value::String(s) => {
            // One string: its paragraphs, its lines, or its numbered
            // steps (`1. Soak. 2. Boil.`), whichever it is written in.
            for part in numbered_steps(s) {
                push(part);
            }
        }
        Value::Array(items) => {
            for item in items {
                steps(item, section, depth + 1, out);
            }
        }
        Value::Object(map) => {
            let items = map.get("itemListElement");
            if is_type(value, "HowToStep") && items.is_some() {
                // A step made of directions and tips: one step, their
                // texts in order.
                let mut parts = Vec::new();
                steps(items.unwrap_or(&Value::Null), None, depth + 1, &mut parts);
                let joined: Vec<String> = parts.into_iter().map(|p| p.text).collect();
                push(joined.join(" "));
            } else if is_type(value, "HowToSection") || items.is_some() {
                // A section: its name a heading over its steps (a section
                // inside a section keeps the outer heading).
                let name = map.get("name").and_then(text);
                let inner = section.map(str::to_owned).or(name);
                for key in ["itemListElement", "steps", "recipeInstructions"] {
                    if let Some(items) = map.get(key) {
                        steps(items, inner.as_deref(), depth + 1, out);
                    }
                }
            } else if let Some(t) = map
                .get("text")
                .and_then(text)
                .or_else(|| map.get("name").and_then(text))
            {
                push(t);
            }
        }
        _ => {}
    }
}

fn image(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.trim().to_owned()),
        Value::Array(items) => items.iter().find_map(image),
        Value::Object(map) => ["url", "contentUrl", "@id"]
            .iter()
            .find_map(|k| map.get(*k).and_then(Value::as_str))
            .map(str::to_owned),
        _ => None,
    }
    .filter(|s| !s.is_empty())
}

/// `recipeYield`: a number of servings and the words, from a number, a
/// string (`4 servings`, `Makes 12`) or a list of them.
fn yield_of(value: &Value) -> Yield {
    let mut out = Yield::default();
    let items: Vec<&Value> = match value {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    for item in items {
        match item {
            Value::Number(n) => {
                out.servings = out.servings.or(n.as_i64().or(n.as_f64().map(|x| x as i64)));
            }
            other => {
                let Some(words) = text(other) else { continue };
                let number: String = words
                    .split_whitespace()
                    .find(|w| w.chars().all(|c| c.is_ascii_digit()))
                    .unwrap_or("")
                    .to_owned();
                if words.chars().all(|c| c.is_ascii_digit()) {
                    out.servings = out.servings.or(words.parse().ok());
                    continue;
                }
                out.servings = out.servings.or(number.parse().ok());
                out.text = out.text.or(Some(words));
            }
        }
    }
    out
}

/// The properties `content_of` reads itself, of the fields that are a
/// line of text: the yield with the servings, and the language (a code or
/// a `Language`), the first of a list.
const SHAPED: [&str; 2] = [schema_org::RECIPE_YIELD, schema_org::IN_LANGUAGE];

/// A string or a list of them, joined: `recipeCuisine`, `recipeCategory`.
fn joined(value: &Value) -> Option<String> {
    let all = lines(value).join(", ");
    (!all.is_empty()).then_some(all)
}

fn tags(value: &Value) -> Vec<String> {
    let words = match value {
        Value::Array(_) => lines(value),
        other => text(other)
            .map(|t| t.split(',').map(str::to_owned).collect())
            .unwrap_or_default(),
    };
    words
        .into_iter()
        .map(|w| w.trim().to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

fn content_of(recipe: &Value) -> ContentDraft {
    let field = |k: &str| recipe.get(k);
    let mut instructions = Vec::new();
    if let Some(value) = field(schema_org::RECIPE_INSTRUCTIONS) {
        steps(value, None, 0, &mut instructions);
    }
    let ingredients = field(schema_org::RECIPE_INGREDIENT)
        .or_else(|| field("ingredients"))
        .map(lines)
        .unwrap_or_default();
    let minutes = |k: &str| field(k).and_then(text).and_then(|t| duration(&t));
    let mut tags = field(schema_org::KEYWORDS).map(tags).unwrap_or_default();
    tags.sort();
    tags.dedup();
    let mut content = ContentDraft {
        title: field(schema_org::NAME).and_then(text).unwrap_or_default(),
        summary: field(schema_org::DESCRIPTION).and_then(text),
        recipe_yield: field(schema_org::RECIPE_YIELD)
            .map(yield_of)
            .unwrap_or_default(),
        prep: minutes(schema_org::PREP_TIME),
        cook: minutes(schema_org::COOK_TIME),
        total: minutes(schema_org::TOTAL_TIME),
        ingredients,
        steps: instructions,
        tags,
        // A language code ("it") or a `Language` with a name.
        language: field(schema_org::IN_LANGUAGE).and_then(text),
        image: field(schema_org::IMAGE).and_then(image),
        ..ContentDraft::default()
    };
    // Every other field that is a line of text (`recipeCuisine`,
    // `recipeCategory`), by its schema.org name: a field added to the
    // table is read with no code here.
    for row in FIELDS {
        let Some(name) = row.schema_org_line().filter(|n| !SHAPED.contains(n)) else {
            continue;
        };
        if let Some(line) = field(name).and_then(joined) {
            row.set_line(&mut content, line);
        }
    }
    content
}

#[cfg(test)]
mod tests {
    use super::super::schema_org_sample as sample;
    use super::*;

    /// The table's schema.org names are the ones read: a field read by
    /// hand here is read under its row's name, and a line of text with no
    /// code of its own.
    #[test]
    fn every_field_with_a_schema_org_name_is_read_by_that_name() {
        let mut recipe = serde_json::Map::new();
        recipe.insert("@type".into(), "Recipe".into());
        recipe.insert("name".into(), "Dal".into());
        for field in FIELDS {
            if let Some(property) = field.attr.schema_org {
                recipe.insert(property.into(), sample(field, property).into());
            }
        }
        let content = content_of(&Value::Object(recipe));
        for field in FIELDS.iter().filter(|f| f.attr.schema_org.is_some()) {
            assert!(
                field.shown_in(&content).is_some(),
                "{} was not read",
                field.name
            );
        }
    }
}
