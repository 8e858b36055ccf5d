//! The `.json` API's shapes: a recipe for programs.

use serde::Serialize;

use super::recipe::{picture_path, picture_urls};
use super::{machine_time, recipe_path, version_path};
use crate::domain::{Content, RecipeShow};

/// The recipe as JSON, for programs.
#[derive(Serialize)]
struct RecipeJson<'a> {
    slug: &'a str,
    url: String,
    title: &'a str,
    summary: Option<&'a str>,
    servings: Option<i64>,
    #[serde(rename = "yield")]
    yield_text: Option<&'a str>,
    prep_minutes: Option<u32>,
    cook_minutes: Option<u32>,
    total_minutes: Option<u32>,
    ingredients: &'a [String],
    steps: Vec<StepJson<'a>>,
    notes: Option<&'a str>,
    tags: &'a [String],
    cuisine: Option<&'a str>,
    category: Option<&'a str>,
    language: Option<&'a str>,
    image: Option<&'a str>,
    picture: Option<PictureJson<'a>>,
    /// Where a recipe brought in from another site came from.
    source: Option<SourceJson<'a>>,
    author: Option<&'a str>,
    created_at: Option<String>,
    updated_at: Option<String>,
    versions: u32,
    forked_from: Option<ForkedFromJson<'a>>,
    /// At most the first fifty; `fork_count` has them all.
    forks: Vec<&'a str>,
    fork_count: usize,
}

#[derive(Serialize)]
struct StepJson<'a> {
    section: Option<&'a str>,
    text: &'a str,
}

/// An uploaded picture: its words, size, and absolute addresses.
#[derive(Serialize)]
struct PictureJson<'a> {
    alt: &'a str,
    width: u32,
    height: u32,
    /// Each width it is served at, narrowest first.
    widths: Vec<PictureUrl>,
    /// The 1:1, 4:3 and 16:9 crops.
    crops: Vec<String>,
}

#[derive(Serialize)]
struct PictureUrl {
    width: u32,
    url: String,
}

#[derive(Serialize)]
struct SourceJson<'a> {
    url: &'a str,
    name: &'a str,
}

#[derive(Serialize)]
struct ForkedFromJson<'a> {
    slug: &'a str,
    version: u32,
    url: String,
    /// The parent's version the fork last agreed with: the one it forked,
    /// or the last it brought in.
    in_step_with: u32,
    /// The parent's newest version.
    parent_versions: u32,
}

/// The recipe page's model as pretty-printed JSON; links are absolute
/// under `base_url`.
pub fn recipe(base_url: &str, model: &RecipeShow) -> String {
    let r = &model.recipe;
    let c: &Content = &r.content;
    let json = RecipeJson {
        slug: r.slug.as_str(),
        url: format!("{base_url}{}", recipe_path(r.slug.as_str())),
        title: &c.title,
        summary: c.summary.as_deref(),
        servings: c.recipe_yield.servings,
        yield_text: c.recipe_yield.text.as_deref(),
        prep_minutes: c.prep.map(|m| m.get()),
        cook_minutes: c.cook.map(|m| m.get()),
        total_minutes: c.total.map(|m| m.get()),
        ingredients: &c.ingredients,
        steps: c
            .steps
            .iter()
            .map(|s| StepJson {
                section: s.section.as_deref(),
                text: &s.text,
            })
            .collect(),
        notes: c.notes.as_deref(),
        tags: &c.tags,
        cuisine: c.cuisine.as_deref(),
        category: c.category.as_deref(),
        language: c.language.as_deref(),
        image: c.image.as_deref(),
        picture: c.picture.as_ref().map(|p| PictureJson {
            alt: &p.alt,
            width: p.width,
            height: p.height,
            widths: p
                .widths()
                .into_iter()
                .map(|w| PictureUrl {
                    width: w,
                    url: format!("{base_url}{}", picture_path(&p.hash, &w.to_string())),
                })
                .collect(),
            crops: picture_urls(base_url, c),
        }),
        source: model.lineage.source.as_ref().map(|s| SourceJson {
            url: &s.url,
            name: &s.name,
        }),
        author: r.author.as_deref(),
        created_at: r.created_at.map(machine_time),
        updated_at: r.updated_at.map(machine_time),
        versions: r.version_count,
        forked_from: model.lineage.parent().map(|p| ForkedFromJson {
            slug: &p.slug,
            version: p.version.get(),
            url: format!("{base_url}{}", version_path(&p.slug, p.version)),
            in_step_with: model.apart.map_or(p.version.get(), |a| a.since.get()),
            parent_versions: model.apart.map_or(p.version.get(), |a| a.newest.get()),
        }),
        forks: model.forks.iter().map(|f| f.slug.as_str()).collect(),
        fork_count: model.fork_count,
    };
    serde_json::to_string_pretty(&json).expect("recipe JSON serialises")
}
