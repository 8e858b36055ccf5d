//! A schema.org Recipe in a page's attributes, for pages without JSON-LD:
//! microdata (`itemscope`, `itemtype=".../Recipe"`, `itemprop`s) or RDFa
//! (`typeof="Recipe"`, `property`s, with or without the `schema:` prefix),
//! read alike: an item, and the properties whose nearest item it is.

use scraper::{ElementRef, Html, Selector};

use super::text::{clipped_bytes, duration, numbered_steps, plain};
use super::Found;
use crate::domain::{schema_org, ContentDraft, Step, Yield, FIELDS};

fn selector(css: &str) -> Selector {
    Selector::parse(css).expect("a valid selector")
}

/// The most elements of one property read, and the most text read of one:
/// a hostile page of nested properties costs no more than a long recipe.
const MAX_PROPS: usize = 400;
const MAX_VALUE_BYTES: usize = 8 * 1024;
/// The most of one instructions element read as its steps' text.
const MAX_STEPS_BYTES: usize = 64 * 1024;

/// An element's text, at most `MAX_VALUE_BYTES` of it.
fn text_of(element: ElementRef) -> String {
    let mut out = String::new();
    for piece in element.text() {
        if out.len() + piece.len() > MAX_VALUE_BYTES {
            break;
        }
        out.push_str(piece);
        out.push(' ');
    }
    plain(&out)
}

/// The attributes a markup names items and their properties with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Markup {
    Microdata,
    Rdfa,
}

impl Markup {
    /// The attribute an item's element has.
    fn item(self) -> &'static str {
        match self {
            Markup::Microdata => "itemscope",
            Markup::Rdfa => "typeof",
        }
    }

    /// Whether the element is an item of schema.org's `kind`.
    fn is_a(self, element: ElementRef, kind: &str) -> bool {
        let e = element.value();
        let types = match self {
            Markup::Microdata if e.attr("itemscope").is_some() => e.attr("itemtype"),
            Markup::Microdata => None,
            Markup::Rdfa => e.attr("typeof"),
        };
        types.is_some_and(|t| {
            t.split_whitespace().any(|t| {
                let t = t.trim_end_matches('/');
                t == kind
                    || t.strip_prefix("schema:") == Some(kind)
                    || t.ends_with(&format!("schema.org/{kind}"))
            })
        })
    }

    /// A selector of the elements that name property `name`.
    fn property(self, name: &str) -> Selector {
        match self {
            Markup::Microdata => selector(&format!("[itemprop~='{name}']")),
            Markup::Rdfa => selector(&format!(
                "[property~='{name}'], [property~='schema:{name}'], \
                 [property~='http://schema.org/{name}'], [property~='https://schema.org/{name}']"
            )),
        }
    }
}

/// The value of an element with a property, as its markup reads it.
fn value(element: ElementRef, markup: Markup) -> String {
    let e = element.value();
    if let (Markup::Rdfa, Some(content)) = (markup, e.attr("content")) {
        return plain(content);
    }
    let attr = match e.name() {
        "meta" => e.attr("content"),
        "time" | "data" | "meter" => e.attr("datetime").or(e.attr("value")).or(e.attr("content")),
        "img" | "audio" | "video" | "source" => e.attr("src"),
        "a" | "link" | "area" => e.attr("href"),
        _ => e.attr("content"),
    };
    match attr {
        Some(text) => plain(text),
        None => text_of(element),
    }
}

/// The elements in `scope` with property `name` that belong to it, not
/// to an item nested inside it.
fn props<'a>(scope: ElementRef<'a>, markup: Markup, name: &str) -> Vec<ElementRef<'a>> {
    scope
        .select(&markup.property(name))
        .filter(|e| {
            e.ancestors()
                .filter_map(ElementRef::wrap)
                .find(|a| a.value().attr(markup.item()).is_some())
                .is_some_and(|owner| owner.id() == scope.id())
        })
        .take(MAX_PROPS)
        .collect()
}

/// A step's text: its `text` properties, else its `name`, else all of it
/// (the step's number, "Step 1", is its `name` where it has a `text`).
fn step_text(step: ElementRef, markup: Markup) -> Option<String> {
    if !markup.is_a(step, "HowToStep") && step.value().attr(markup.item()).is_none() {
        let text = value(step, markup);
        return (!text.is_empty()).then_some(text);
    }
    let texts: Vec<String> = props(step, markup, "text")
        .into_iter()
        .map(|e| value(e, markup))
        .filter(|v| !v.is_empty())
        .collect();
    if !texts.is_empty() {
        return Some(texts.join(" "));
    }
    let name = props(step, markup, "name")
        .into_iter()
        .map(|e| value(e, markup))
        .find(|v| !v.is_empty());
    name.or_else(|| Some(text_of(step)).filter(|t| !t.is_empty()))
}

pub(super) fn recipe(page: &Html, markup: Markup) -> Option<Found> {
    let scopes = selector(&format!("[{}]", markup.item()));
    let scope = page.select(&scopes).find(|e| markup.is_a(*e, "Recipe"))?;
    let own = |name: &str| props(scope, markup, name);
    let first = |name: &str| {
        own(name)
            .into_iter()
            .map(|e| value(e, markup))
            .find(|v| !v.is_empty())
    };
    let mut ingredients: Vec<String> = own(schema_org::RECIPE_INGREDIENT)
        .into_iter()
        .chain(own("ingredients"))
        .map(|e| value(e, markup))
        .filter(|v| !v.is_empty())
        .collect();
    ingredients.dedup();
    let steps = steps(own(schema_org::RECIPE_INSTRUCTIONS), markup);
    let recipe_yield = first(schema_org::RECIPE_YIELD).map(recipe_yield);
    let minutes = |name: &str| first(name).and_then(|t| duration(&t));
    let tags = tags(first(schema_org::KEYWORDS));
    let mut content = ContentDraft {
        title: first(schema_org::NAME).unwrap_or_default(),
        summary: first(schema_org::DESCRIPTION),
        recipe_yield: recipe_yield.unwrap_or_default(),
        prep: minutes(schema_org::PREP_TIME),
        cook: minutes(schema_org::COOK_TIME),
        total: minutes(schema_org::TOTAL_TIME),
        ingredients,
        steps,
        tags,
        image: first(schema_org::IMAGE),
        ..ContentDraft::default()
    };
    // Every field that is a line of text but the yield's words (read with
    // the servings above), by its schema.org name: `recipeCuisine`,
    // `recipeCategory`, `inLanguage`, and a field added to the table.
    for field in FIELDS {
        let Some(name) = field
            .schema_org_line()
            .filter(|n| *n != schema_org::RECIPE_YIELD)
        else {
            continue;
        };
        if let Some(line) = first(name) {
            field.set_line(&mut content, line);
        }
    }
    Some(Found {
        content,
        site_name: None,
    })
}

/// The steps of the recipe's `instructions`, in order.
fn steps(instructions: Vec<ElementRef>, markup: Markup) -> Vec<Step> {
    let mut steps = Vec::new();
    let ids: Vec<_> = instructions.iter().map(|e| e.id()).collect();
    for instruction in instructions {
        // One inside another is part of its text, not read again.
        if instruction.ancestors().any(|a| ids.contains(&a.id())) {
            continue;
        }
        instruction_steps(instruction, markup, &mut steps);
    }
    steps
}

/// The steps of one of the recipe's instructions, added to `steps`: a
/// section of steps, a step, a list of steps, or text to cut into steps.
fn instruction_steps(instruction: ElementRef, markup: Markup, steps: &mut Vec<Step>) {
    let unsectioned = |text| Step {
        section: None,
        text,
    };
    // A section of steps, or a step, as an item of its own.
    if markup.is_a(instruction, "HowToSection") {
        let section = props(instruction, markup, "name")
            .into_iter()
            .map(|e| value(e, markup))
            .find(|v| !v.is_empty());
        let mut inner = props(instruction, markup, "itemListElement");
        if inner.is_empty() {
            inner = props(instruction, markup, "step");
        }
        steps.extend(inner.into_iter().filter_map(|step| {
            Some(Step {
                section: section.clone(),
                text: step_text(step, markup)?,
            })
        }));
        return;
    }
    if markup.is_a(instruction, "HowToStep") {
        steps.extend(step_text(instruction, markup).map(unsectioned));
        return;
    }
    // A list of steps in one element: each item a step.
    let items: Vec<String> = instruction
        .select(&selector("li"))
        .take(MAX_PROPS)
        .map(text_of)
        .filter(|t| !t.is_empty())
        .collect();
    if items.is_empty() {
        steps.extend(text_steps(instruction, markup).into_iter().map(unsectioned));
    } else {
        steps.extend(items.into_iter().map(unsectioned));
    }
}

/// One element of text: cut into its steps as a JSON-LD string is (its
/// paragraphs, lines or numbers).
fn text_steps(instruction: ElementRef, markup: Markup) -> Vec<String> {
    let e = instruction.value();
    let raw = match (markup, e.attr("content")) {
        (Markup::Rdfa, Some(content)) => content.to_owned(),
        _ if e.name() == "meta" => e.attr("content").unwrap_or("").to_owned(),
        _ => instruction.inner_html(),
    };
    // In HTML a line break in the source is a space: only the
    // markup's breaks (`<p>`, `<br>`, `<li>`) and numbers part steps.
    let raw = clipped_bytes(&raw, MAX_STEPS_BYTES).replace(['\r', '\n'], " ");
    numbered_steps(&raw)
}

/// A `recipeYield`'s words: the servings, its first number, and the
/// words as written unless they are that number alone.
fn recipe_yield(words: String) -> Yield {
    let servings = words.split_whitespace().find_map(|w| w.parse::<i64>().ok());
    Yield {
        servings,
        text: (words.parse::<i64>().is_err()).then_some(words),
    }
}

/// The tags of the recipe's `keywords`: each between commas, lower case,
/// sorted, once.
fn tags(keywords: Option<String>) -> Vec<String> {
    let mut tags: Vec<String> = keywords
        .map(|k| {
            k.split(',')
                .map(|t| t.trim().to_lowercase())
                .filter(|t| !t.is_empty())
                .collect()
        })
        .unwrap_or_default();
    tags.sort();
    tags.dedup();
    tags
}

#[cfg(test)]
mod tests {
    use super::super::schema_org_sample as sample;
    use super::*;

    /// The table's schema.org names are the ones read (as in `jsonld`).
    #[test]
    fn every_field_with_a_schema_org_name_is_read_by_that_name() {
        let mut html = String::from(
            r#"<div itemscope itemtype="https://schema.org/Recipe"><h1 itemprop="name">Dal</h1>"#,
        );
        for field in FIELDS {
            if let Some(property) = field.attr.schema_org {
                let value = sample(field, property);
                html.push_str(&format!(
                    r#"<meta itemprop="{property}" content="{value}">"#
                ));
            }
        }
        html.push_str("</div>");
        let found = recipe(&Html::parse_document(&html), Markup::Microdata).unwrap();
        for field in FIELDS.iter().filter(|f| f.attr.schema_org.is_some()) {
            assert!(
                field.shown_in(&found.content).is_some(),
                "{} was not read",
                field.name
            );
        }
    }
}
