//! The `.json` API's shapes: a recipe for programs.

use serde::ser::SerializeMap;
use serde::Serialize;

use super::recipe::{picture_path, picture_urls};
use super::{absolute, machine_time, recipe_path, version_path};
use crate::domain::{Content, FormPlace, RecipeData, SuggestionLine, FIELDS};

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
    /// `cuisine`, `category`, `language`: the form's details.
    #[serde(flatten)]
    details: Details<'a>,
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
    /// Suggestions its forks made to it, by number: the newest fifty;
    /// `suggestion_count` has them all.
    suggestions: Vec<SuggestionJson<'a>>,
    suggestion_count: usize,
    /// Suggestions it made to its parent, oldest first.
    suggested: Vec<SuggestionJson<'a>>,
}

/// Each field of `content::FIELDS` the form shows among its details (a
/// line of text), by its name, in the table's order: a field added to the
/// table is in the JSON with no code here.
struct Details<'a>(&'a Content);

impl Serialize for Details<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let details = FIELDS
            .iter()
            .filter(|field| matches!(field.form, FormPlace::Details(_)));
        let mut map = serializer.serialize_map(None)?;
        for field in details {
            map.serialize_entry(field.name, &field.line(self.0))?;
        }
        map.end()
    }
}

/// A suggestion: from which fork's version, to which recipe, on which
/// version of it, and what became of it.
#[derive(Serialize)]
struct SuggestionJson<'a> {
    number: u32,
    url: String,
    /// The fork's address and its version suggested.
    from: String,
    from_version: u32,
    /// The recipe suggested to, and its version the fork agreed with.
    to: String,
    base_version: u32,
    by: Option<&'a str>,
    message: &'a str,
    /// open, accepted, declined or withdrawn.
    state: &'static str,
    reply: Option<&'a str>,
    /// The recipe's version that took it, once accepted.
    accepted_in: Option<u32>,
    made_at: String,
    changed_at: String,
}

/// A merge a fork made: the parent's version it brought in, and the
/// fork's version that did.
#[derive(Serialize)]
struct BroughtInJson {
    parent_version: u32,
    version: u32,
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
    /// Every merge of the parent's changes, oldest first.
    brought_in: Vec<BroughtInJson>,
}

fn suggestion<'a>(base_url: &str, line: &'a SuggestionLine) -> SuggestionJson<'a> {
    let (s, to, from) = (
        &line.suggestion,
        line.to.slug.as_str(),
        line.from.slug.as_str(),
    );
    SuggestionJson {
        number: s.number,
        url: absolute(base_url, super::merges::suggestion_path(to, s.number)),
        from: absolute(base_url, recipe_path(from)),
        from_version: s.from_version.get(),
        to: absolute(base_url, recipe_path(to)),
        base_version: s.base_version.get(),
        by: s.by.as_deref(),
        message: &s.message,
        state: s.state.as_str(),
        reply: s.reply.as_deref(),
        accepted_in: s.accepted_in.map(|v| v.get()),
        made_at: machine_time(s.made),
        changed_at: machine_time(s.changed),
    }
}

/// The recipe's model as pretty-printed JSON; links are absolute under
/// `base_url`.
pub fn recipe(base_url: &str, data: &RecipeData) -> String {
    let model = &data.show;
    let r = &model.recipe;
    let c: &Content = &r.content;
    let json = RecipeJson {
        slug: r.slug.as_str(),
        url: absolute(base_url, recipe_path(r.slug.as_str())),
        title: c.title(),
        summary: c.summary(),
        servings: c.recipe_yield().servings,
        yield_text: c.recipe_yield().text.as_deref(),
        prep_minutes: c.prep().map(|m| m.get()),
        cook_minutes: c.cook().map(|m| m.get()),
        total_minutes: c.total().map(|m| m.get()),
        ingredients: c.ingredients(),
        steps: c
            .steps()
            .iter()
            .map(|s| StepJson {
                section: s.section.as_deref(),
                text: &s.text,
            })
            .collect(),
        notes: c.notes(),
        tags: c.tags(),
        details: Details(c),
        image: c.image(),
        picture: picture(base_url, c),
        source: model.lineage.source.as_ref().map(|s| SourceJson {
            url: &s.url,
            name: &s.name,
        }),
        author: r.author.as_deref(),
        created_at: r.created_at.map(machine_time),
        updated_at: r.updated_at.map(machine_time),
        versions: r.version_count,
        forked_from: forked_from(base_url, data),
        forks: model.forks.iter().map(|f| f.slug.as_str()).collect(),
        fork_count: model.fork_count,
        suggestions: data
            .suggestions_to
            .iter()
            .map(|line| suggestion(base_url, line))
            .collect(),
        suggestion_count: data.suggestion_count,
        suggested: data
            .suggestions_from
            .iter()
            .map(|line| suggestion(base_url, line))
            .collect(),
    };
    serde_json::to_string_pretty(&json).expect("recipe JSON serialises")
}

/// The recipe's uploaded picture, with the addresses of its widths and
/// crops.
fn picture<'a>(base_url: &str, c: &'a Content) -> Option<PictureJson<'a>> {
    c.picture().as_ref().map(|p| PictureJson {
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
    })
}

/// For a fork: its parent's version forked, how far it is in step with
/// the parent, and every merge it made.
fn forked_from<'a>(base_url: &str, data: &'a RecipeData) -> Option<ForkedFromJson<'a>> {
    let model = &data.show;
    model.lineage.parent().map(|p| ForkedFromJson {
        slug: &p.slug,
        version: p.version.get(),
        url: absolute(base_url, version_path(&p.slug, p.version)),
        in_step_with: model.apart.map_or(p.version.get(), |a| a.since.get()),
        parent_versions: model.apart.map_or(p.version.get(), |a| a.newest.get()),
        brought_in: data
            .brought_in
            .iter()
            .map(|m| BroughtInJson {
                parent_version: m.parent_version.get(),
                version: m.version.get(),
            })
            .collect(),
    })
}
