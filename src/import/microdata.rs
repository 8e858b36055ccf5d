//! A schema.org Recipe in a page's microdata (`itemscope`,
//! `itemtype=".../Recipe"`, `itemprop`s), for pages without JSON-LD.

use scraper::{ElementRef, Html, Selector};

use super::text::{duration, plain};
use super::Found;
use crate::domain::{Content, Step, Yield};

fn selector(css: &str) -> Selector {
    Selector::parse(css).expect("a valid selector")
}

/// The most elements of one property read, and the most text read of one:
/// a hostile page of nested properties costs no more than a long recipe.
const MAX_PROPS: usize = 400;
const MAX_VALUE_BYTES: usize = 8 * 1024;

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

/// The value of an element with an `itemprop`, as microdata reads it.
fn value(element: ElementRef) -> String {
    let e = element.value();
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

/// The elements in `scope` with `itemprop` `name` that belong to it, not
/// to an item nested inside it.
fn props<'a>(scope: ElementRef<'a>, name: &str) -> Vec<ElementRef<'a>> {
    let all = selector(&format!("[itemprop~='{name}']"));
    scope
        .select(&all)
        .filter(|e| {
            e.ancestors()
                .filter_map(ElementRef::wrap)
                .find(|a| a.value().attr("itemscope").is_some())
                .is_some_and(|owner| owner.id() == scope.id())
        })
        .take(MAX_PROPS)
        .collect()
}

fn first(scope: ElementRef, name: &str) -> Option<String> {
    props(scope, name)
        .into_iter()
        .map(value)
        .find(|v| !v.is_empty())
}

pub(super) fn recipe(page: &Html) -> Option<Found> {
    let scopes = selector("[itemscope][itemtype]");
    let scope = page.select(&scopes).find(|e| {
        e.value().attr("itemtype").is_some_and(|t| {
            t.split_whitespace()
                .any(|t| t.trim_end_matches('/').ends_with("schema.org/Recipe"))
        })
    })?;
    let mut ingredients: Vec<String> = props(scope, "recipeIngredient")
        .into_iter()
        .chain(props(scope, "ingredients"))
        .map(value)
        .filter(|v| !v.is_empty())
        .collect();
    ingredients.dedup();
    let mut steps = Vec::new();
    for instruction in props(scope, "recipeInstructions") {
        // A list of steps in one element: each item a step.
        let items: Vec<String> = instruction
            .select(&selector("li"))
            .take(MAX_PROPS)
            .map(text_of)
            .filter(|t| !t.is_empty())
            .collect();
        if items.is_empty() {
            let text = value(instruction);
            if !text.is_empty() {
                steps.push(Step {
                    section: None,
                    text,
                });
            }
        } else {
            steps.extend(items.into_iter().map(|text| Step {
                section: None,
                text,
            }));
        }
    }
    let recipe_yield = first(scope, "recipeYield").map(|words| {
        let servings = words.split_whitespace().find_map(|w| w.parse::<i64>().ok());
        Yield {
            servings,
            text: (words.parse::<i64>().is_err()).then_some(words),
        }
    });
    let minutes = |name: &str| first(scope, name).and_then(|t| duration(&t));
    let mut tags: Vec<String> = first(scope, "keywords")
        .map(|k| {
            k.split(',')
                .map(|t| t.trim().to_lowercase())
                .filter(|t| !t.is_empty())
                .collect()
        })
        .unwrap_or_default();
    tags.sort();
    tags.dedup();
    Some(Found {
        content: Content {
            title: first(scope, "name").unwrap_or_default(),
            summary: first(scope, "description"),
            recipe_yield: recipe_yield.unwrap_or_default(),
            prep: minutes("prepTime"),
            cook: minutes("cookTime"),
            total: minutes("totalTime"),
            ingredients,
            steps,
            tags,
            cuisine: first(scope, "recipeCuisine"),
            category: first(scope, "recipeCategory"),
            language: first(scope, "inLanguage"),
            image: first(scope, "image"),
            ..Content::default()
        },
        site_name: None,
    })
}
