//! A recipe's pages: the recipe, its JSON, history, versions, diffs, the
//! comparison with its parent, and its family's fork tree.

use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};

use super::respond::{self, Body};
use super::{Site, WebError};
use crate::domain::diff::{self, RecipeDiff};
use crate::domain::{Content, ForkNode, Recipe, Slug, Version, View};
use crate::store::EntityId;
use crate::views::diff::{DiffSection, DiffView, Layout};
use crate::views::forks::{ForkTreeView, TreeNode};
use crate::views::history::HistoryView;
use crate::views::jsonld::{self, RecipeFacts};
use crate::views::recipe::{RecipePage, Showing};
use crate::views::{self, recipe_path, version_path, Crumb, RecipeLink};

/// A slug from the address; one that cannot be a slug names no recipe.
fn parse_slug(text: &str) -> Result<Slug, WebError> {
    Slug::parse(text)
        .map_err(|_| WebError::NotFound(format!("There is no recipe called {text:?}.")))
}

/// A version number from the address or query: a whole number from 1.
fn parse_version(text: &str) -> Result<usize, WebError> {
    text.parse::<usize>()
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| {
            WebError::BadRequest(format!(
                "{text:?} is not a version number: versions are numbered from 1."
            ))
        })
}

/// The recipe with `slug`, refusing a retired one.
fn current(view: &View, slug: &Slug) -> Result<Recipe, WebError> {
    let recipe = view.recipe(slug)?;
    if recipe.retired {
        return Err(WebError::Gone(format!(
            "{} was retired by its author. Its history is still at {}/history.",
            recipe.content.title,
            recipe_path(slug.as_str())
        )));
    }
    Ok(recipe)
}

fn link(view: &View, id: EntityId) -> Result<RecipeLink, WebError> {
    let (slug, title) = view.slug_and_title(id)?;
    Ok(RecipeLink { slug, title })
}

/// The lineage of `id` as a breadcrumb, the original first.
fn crumbs(view: &View, id: EntityId) -> Result<Vec<Crumb>, WebError> {
    let mut lineage = view.lineage(id)?;
    lineage.reverse();
    lineage
        .into_iter()
        .map(|a| {
            let RecipeLink { slug, title } = link(view, a.id)?;
            Ok(Crumb {
                slug,
                title,
                version: a.forked_version,
            })
        })
        .collect()
}

/// What the recipe page reads.
pub struct ShowModel {
    recipe: Recipe,
    lineage: Vec<Crumb>,
    forks: Vec<RecipeLink>,
}

/// Reads the recipe page's model: the recipe, its lineage and its forks.
pub fn read_show(view: &View, slug: &Slug) -> Result<ShowModel, WebError> {
    let recipe = current(view, slug)?;
    let lineage = crumbs(view, recipe.id)?;
    let forks = view
        .forks(recipe.id)?
        .into_iter()
        .map(|id| link(view, id))
        .collect::<Result<_, _>>()?;
    Ok(ShowModel {
        recipe,
        lineage,
        forks,
    })
}

/// Renders the recipe page from its model.
pub fn render_show(site: &Site, model: &ShowModel) -> Body {
    let r = &model.recipe;
    let url = format!("{}{}", site.base_url(), recipe_path(r.slug.as_str()));
    let based_on = model
        .lineage
        .last()
        .map(|p| format!("{}{}", site.base_url(), version_path(&p.slug, p.version)));
    let json_ld = jsonld::recipe(
        &r.content,
        &RecipeFacts {
            url: &url,
            author: r.author.as_deref(),
            published: r.created_at,
            modified: r.updated_at,
            based_on: based_on.as_deref(),
            version: r.version_count,
        },
    );
    let page = RecipePage {
        base_url: site.base_url(),
        slug: r.slug.as_str(),
        content: &r.content,
        author: r.author.as_deref(),
        published: r.created_at,
        modified: r.updated_at,
        version_count: r.version_count,
        lineage: &model.lineage,
        forks: &model.forks,
        showing: Showing::Current,
    };
    Body::from(views::recipe::page(&page, Some(json_ld)))
}

pub async fn show(
    site: web::Data<Site>,
    req: HttpRequest,
    slug: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let slug = parse_slug(&slug)?;
    respond::page(&site, &req, |view| read_show(view, &slug), render_show)
}

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
    image: Option<&'a str>,
    author: Option<&'a str>,
    created_at: Option<String>,
    updated_at: Option<String>,
    versions: i64,
    forked_from: Option<ForkedFromJson<'a>>,
    forks: Vec<&'a str>,
}

#[derive(Serialize)]
struct StepJson<'a> {
    section: Option<&'a str>,
    text: &'a str,
}

#[derive(Serialize)]
struct ForkedFromJson<'a> {
    slug: &'a str,
    version: i64,
    url: String,
}

fn render_json(site: &Site, model: &ShowModel) -> Body {
    let r = &model.recipe;
    let c: &Content = &r.content;
    let base = site.base_url();
    let json = RecipeJson {
        slug: r.slug.as_str(),
        url: format!("{base}{}", recipe_path(r.slug.as_str())),
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
        image: c.image.as_deref(),
        author: r.author.as_deref(),
        created_at: r.created_at.map(views::machine_time),
        updated_at: r.updated_at.map(views::machine_time),
        versions: r.version_count,
        forked_from: model.lineage.last().map(|p| ForkedFromJson {
            slug: &p.slug,
            version: p.version,
            url: format!("{base}{}", version_path(&p.slug, p.version)),
        }),
        forks: model.forks.iter().map(|f| f.slug.as_str()).collect(),
    };
    Body {
        content_type: "application/json",
        text: serde_json::to_string_pretty(&json).expect("recipe JSON serialises"),
    }
}

pub async fn json(
    site: web::Data<Site>,
    req: HttpRequest,
    slug: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let slug = parse_slug(&slug)?;
    respond::page(&site, &req, |view| read_show(view, &slug), render_json)
}

pub async fn history(
    site: web::Data<Site>,
    req: HttpRequest,
    slug: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let slug = parse_slug(&slug)?;
    respond::page(
        &site,
        &req,
        |view| {
            let recipe = view.recipe(&slug)?;
            Ok((recipe.content.title, view.changes(recipe.id)?))
        },
        |_, (title, versions)| {
            Body::from(views::history::page(&HistoryView {
                slug: slug.as_str(),
                title,
                versions,
            }))
        },
    )
}

pub async fn version(
    site: web::Data<Site>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, WebError> {
    let (slug, number) = path.into_inner();
    let slug = parse_slug(&slug)?;
    let number = parse_version(&number)?;
    respond::page(
        &site,
        &req,
        |view| {
            let recipe = view.recipe(&slug)?;
            let (version, content) = view.version(&slug, number)?;
            let lineage = crumbs(view, recipe.id)?;
            Ok((recipe, version, content, lineage))
        },
        |site, (recipe, version, content, lineage)| {
            let page = RecipePage {
                base_url: site.base_url(),
                slug: slug.as_str(),
                content,
                author: recipe.author.as_deref(),
                published: recipe.created_at,
                modified: Some(version.instant),
                version_count: recipe.version_count,
                lineage,
                forks: &[],
                showing: Showing::Version {
                    number: version.number,
                    instant: version.instant,
                    author: version.author.clone(),
                    note: version.note.clone(),
                },
            };
            Body::from(views::recipe::page(&page, None))
        },
    )
}

/// The diff page's query string: `?from=&to=&view=`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffParams {
    from: Option<String>,
    to: Option<String>,
    view: Option<String>,
}

fn parse_layout(layout: Option<&str>) -> Result<Layout, WebError> {
    match layout {
        None | Some("inline") => Ok(Layout::Inline),
        Some("side") => Ok(Layout::Side),
        Some(other) => Err(WebError::BadRequest(format!(
            "{other:?} is not a way to show a diff: use inline or side."
        ))),
    }
}

/// Version `number` of `versions`, or a 404 that says how many there are.
fn nth<'v>(slug: &Slug, versions: &'v [Version], number: usize) -> Result<&'v Version, WebError> {
    versions.get(number - 1).ok_or_else(|| {
        WebError::NotFound(format!(
            "{slug} has no version {number}: it has {}.",
            versions.len()
        ))
    })
}

pub async fn diff(
    site: web::Data<Site>,
    req: HttpRequest,
    slug: web::Path<String>,
    params: web::Query<DiffParams>,
) -> Result<HttpResponse, WebError> {
    let slug = parse_slug(&slug)?;
    let params = params.into_inner();
    let layout = parse_layout(params.view.as_deref())?;
    let from = params.from.as_deref().map(parse_version).transpose()?;
    let to = params.to.as_deref().map(parse_version).transpose()?;
    respond::page(
        &site,
        &req,
        |view| {
            let recipe = view.recipe(&slug)?;
            let versions = view.versions(recipe.id)?;
            let to = to.unwrap_or(versions.len());
            let from = from.unwrap_or(to.saturating_sub(1).max(1));
            let old = view.content_at(recipe.id, nth(&slug, &versions, from)?.tx)?;
            let new = view.content_at(recipe.id, nth(&slug, &versions, to)?.tx)?;
            Ok((recipe.content.title, from, to, diff::recipes(&old, &new)))
        },
        |_, (title, from, to, diff)| {
            Body::from(views::diff::page(&DiffView {
                slug: slug.as_str(),
                title,
                heading: format!("{title}: version {from} against version {to}"),
                sections: vec![DiffSection {
                    heading: "Changes".to_owned(),
                    from: format!("Version {from}"),
                    to: format!("Version {to}"),
                    diff,
                }],
                layout,
                here: format!("{}/diff?from={from}&to={to}", recipe_path(slug.as_str())),
            }))
        },
    )
}

/// What the comparison with the parent reads.
pub struct CompareModel {
    title: String,
    parent: Crumb,
    parent_versions: i64,
    since_fork: RecipeDiff,
    against_now: RecipeDiff,
}

pub async fn compare(
    site: web::Data<Site>,
    req: HttpRequest,
    slug: web::Path<String>,
    params: web::Query<DiffParams>,
) -> Result<HttpResponse, WebError> {
    let slug = parse_slug(&slug)?;
    let params = params.into_inner();
    if params.from.is_some() || params.to.is_some() {
        return Err(WebError::BadRequest(
            "A comparison with the parent takes no version numbers.".to_owned(),
        ));
    }
    let layout = parse_layout(params.view.as_deref())?;
    respond::page(
        &site,
        &req,
        |view| {
            let recipe = view.recipe(&slug)?;
            let (Some((parent, version)), Some((since_fork, against_now))) =
                (recipe.forked_from, view.compare_with_parent(recipe.id)?)
            else {
                return Err(WebError::NotFound(format!(
                    "{} is an original: it has no parent to compare with.",
                    recipe.content.title
                )));
            };
            let RecipeLink { slug, title } = link(view, parent)?;
            let parent_versions = view.recipe_by_id(parent)?.version_count;
            Ok(CompareModel {
                title: recipe.content.title,
                parent: Crumb {
                    slug,
                    title,
                    version,
                },
                parent_versions,
                since_fork,
                against_now,
            })
        },
        |_, m| {
            let p = &m.parent;
            Body::from(views::diff::page(&DiffView {
                slug: slug.as_str(),
                title: &m.title,
                heading: format!("{} against its parent, {}", m.title, p.title),
                sections: vec![
                    DiffSection {
                        heading: "Since the fork".to_owned(),
                        from: format!("{} version {}", p.title, p.version),
                        to: format!("{} now", m.title),
                        diff: &m.since_fork,
                    },
                    DiffSection {
                        heading: "Against the parent now".to_owned(),
                        from: format!("{} now (version {})", p.title, m.parent_versions),
                        to: format!("{} now", m.title),
                        diff: &m.against_now,
                    },
                ],
                layout,
                here: format!("{}/compare", recipe_path(slug.as_str())),
            }))
        },
    )
}

/// Recipes a fork tree page shows at most.
const TREE_LIMIT: usize = 500;

fn tree(view: &View, node: ForkNode) -> Result<TreeNode, WebError> {
    let entry = view.catalog_entry(node.id)?;
    Ok(TreeNode {
        slug: entry.slug.to_string(),
        title: entry.title.to_string(),
        version_count: entry.version_count,
        children: node
            .children
            .into_iter()
            .map(|child| tree(view, child))
            .collect::<Result<_, _>>()?,
    })
}

pub async fn forks(
    site: web::Data<Site>,
    req: HttpRequest,
    slug: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let slug = parse_slug(&slug)?;
    respond::page(
        &site,
        &req,
        |view| {
            let recipe = view.recipe(&slug)?;
            let root = view.lineage(recipe.id)?.last().map_or(recipe.id, |a| a.id);
            let root = tree(view, view.fork_tree(root, TREE_LIMIT)?)?;
            Ok((recipe.content.title, root))
        },
        |_, (title, root)| {
            Body::from(views::forks::page(&ForkTreeView {
                slug: slug.as_str(),
                title,
                root,
                truncated: root.size() > TREE_LIMIT,
            }))
        },
    )
}
