//! A recipe's pages: the recipe, its JSON, history, versions, diffs, the
//! comparison with its parent, and its family's fork tree.
//!
//! Each handler parses its request into typed values, asks one snapshot for
//! the page's read model, and hands it to a view.

use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};

use super::respond::{self, Body, QueryKey};
use super::{Site, WebError};
use crate::domain::scale::{ScaleAsked, Units, MAX_SERVINGS};
use crate::domain::{pages, RecipeShow, Slug, Snapshot, VersionNumber};
use crate::views::diff::Layout;
use crate::views::{self, history};

/// A slug from the address; one that cannot be a slug names no recipe.
pub(super) fn parse_slug(text: &str) -> Result<Slug, WebError> {
    Slug::parse(text)
        .map_err(|_| WebError::NotFound(format!("There is no recipe called {text:?}.")))
}

/// A version number from the address or query: a whole number from 1.
fn parse_version(text: &str) -> Result<VersionNumber, WebError> {
    VersionNumber::parse(text).ok_or_else(|| {
        WebError::BadRequest(format!(
            "{text:?} is not a version number: versions are numbered from 1."
        ))
    })
}

/// The recipe page's query string: `?servings=8&units=metric`, the scale
/// its amounts are shown at.
#[derive(Debug, Deserialize, Serialize)]
pub struct ScaleParams {
    servings: Option<String>,
    units: Option<String>,
}

impl ScaleParams {
    fn parse(&self) -> Result<ScaleAsked, WebError> {
        let servings = match self.servings.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(text) => Some(text.parse::<u32>().map_err(|_| {
                WebError::BadRequest(format!(
                    "{text:?} is not a number of servings: ask for a whole number from 1 to {MAX_SERVINGS}."
                ))
            })?),
        };
        let units = self.units.as_deref().unwrap_or("");
        let units = Units::parse(units).ok_or_else(|| {
            WebError::BadRequest(format!(
                "{units:?} is not a choice of units: ask for \"metric\" or \"us\"."
            ))
        })?;
        Ok(ScaleAsked { servings, units })
    }
}

pub async fn show(
    site: web::Data<Site>,
    req: HttpRequest,
    slug: web::Path<String>,
    params: web::Query<ScaleParams>,
) -> Result<HttpResponse, WebError> {
    let slug = parse_slug(&slug)?;
    if super::federation::wants_activity(&req) {
        return super::federation::recipe_object(&site, &req, &slug);
    }
    let asked = params.parse()?;
    let read = |snapshot: &Snapshot| Ok(pages::recipe_show(snapshot, &slug, asked)?);
    let render = |site: &Site, model: &RecipeShow| {
        Body::from(views::recipe::show(site.base_url(), site.memos(), model))
    };
    if asked.is_as_written() {
        // However its query spelled it (`?servings=`, `?units=`).
        respond::page(&site, &req, respond::NO_QUERY, read, render)
    } else {
        // Scaled pages are many and mostly asked once: they would push the
        // pages people come back to out of the cache.
        respond::unkept_page(&site, &req, read, render)
    }
    .map(super::federation::varies_by_accept)
}

pub async fn json(
    site: web::Data<Site>,
    req: HttpRequest,
    slug: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let slug = parse_slug(&slug)?;
    respond::page(
        &site,
        &req,
        respond::NO_QUERY,
        |snapshot| Ok(pages::recipe_data(snapshot, &slug)?),
        |site, data| Body::json(views::json::recipe(site.base_url(), data)),
    )
}

/// The history page's query string: `?before=`, the version the page of
/// older versions starts before.
#[derive(Debug, Deserialize, Serialize)]
pub struct HistoryParams {
    before: Option<String>,
}

pub async fn history(
    site: web::Data<Site>,
    req: HttpRequest,
    slug: web::Path<String>,
    params: web::Query<HistoryParams>,
) -> Result<HttpResponse, WebError> {
    let slug = parse_slug(&slug)?;
    let before = params.before.as_deref().map(parse_version).transpose()?;
    respond::page(
        &site,
        &req,
        &QueryKey::default().with("before", before),
        |snapshot| Ok(pages::history(snapshot, &slug, before)?),
        |_, model| Body::from(history::history(slug.as_str(), model)),
    )
}

pub async fn version(
    site: web::Data<Site>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, WebError> {
    let (slug, number) = path.into_inner();
    let (slug, number) = (parse_slug(&slug)?, parse_version(&number)?);
    if super::federation::wants_activity(&req) {
        return super::federation::version_object(&site, &req, &slug, number);
    }
    respond::page(
        &site,
        &req,
        respond::NO_QUERY,
        |snapshot| Ok(pages::version_show(snapshot, &slug, number)?),
        |site, model| Body::from(views::recipe::version(site.base_url(), site.memos(), model)),
    )
    .map(super::federation::varies_by_accept)
}

/// The diff page's query string: `?from=&to=&view=`.
/// Parameters it does not know (`utm_source`, `fbclid`) are ignored: links
/// shared on the web carry them.
#[derive(Debug, Deserialize, Serialize)]
pub struct DiffParams {
    from: Option<String>,
    to: Option<String>,
    view: Option<String>,
}

impl DiffParams {
    fn layout(&self) -> Result<Layout, WebError> {
        match self.view.as_deref() {
            None | Some("inline") => Ok(Layout::Inline),
            Some("side") => Ok(Layout::Side),
            Some(other) => Err(WebError::BadRequest(format!(
                "{other:?} is not a way to show a diff: use inline or side."
            ))),
        }
    }

    /// The two version numbers asked for, each optional.
    fn versions(&self) -> Result<(Option<VersionNumber>, Option<VersionNumber>), WebError> {
        let parse = |text: &Option<String>| text.as_deref().map(parse_version).transpose();
        Ok((parse(&self.from)?, parse(&self.to)?))
    }
}

/// A diff's layout in its page's key: the default (inline) left out.
fn layout_key(layout: Layout) -> Option<&'static str> {
    match layout {
        Layout::Inline => None,
        Layout::Side => Some("side"),
    }
}

pub async fn diff(
    site: web::Data<Site>,
    req: HttpRequest,
    slug: web::Path<String>,
    params: web::Query<DiffParams>,
) -> Result<HttpResponse, WebError> {
    let slug = parse_slug(&slug)?;
    let (layout, (from, to)) = (params.layout()?, params.versions()?);
    let key = QueryKey::default()
        .with("from", from)
        .with("to", to)
        .with("view", layout_key(layout));
    respond::page(
        &site,
        &req,
        &key,
        |snapshot| Ok(pages::version_diff(snapshot, &slug, from, to)?),
        |_, model| Body::from(views::diff::versions(slug.as_str(), model, layout)),
    )
}

pub async fn compare(
    site: web::Data<Site>,
    req: HttpRequest,
    slug: web::Path<String>,
    params: web::Query<DiffParams>,
) -> Result<HttpResponse, WebError> {
    let slug = parse_slug(&slug)?;
    if params.from.is_some() || params.to.is_some() {
        return Err(WebError::BadRequest(
            "A comparison with the parent takes no version numbers.".to_owned(),
        ));
    }
    let layout = params.layout()?;
    respond::page(
        &site,
        &req,
        &QueryKey::default().with("view", layout_key(layout)),
        |snapshot| Ok(pages::comparison(snapshot, &slug)?),
        |_, model| Body::from(views::diff::comparison(slug.as_str(), model, layout)),
    )
}

pub async fn lineage(
    site: web::Data<Site>,
    req: HttpRequest,
    slug: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let slug = parse_slug(&slug)?;
    respond::page(
        &site,
        &req,
        respond::NO_QUERY,
        |snapshot| Ok(pages::lineage_show(snapshot, &slug)?),
        |_, model| Body::from(views::recipe::lineage_page(model)),
    )
}

/// Recipes a fork tree page shows at most.
const TREE_LIMIT: usize = 500;

pub async fn forks(
    site: web::Data<Site>,
    req: HttpRequest,
    slug: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let slug = parse_slug(&slug)?;
    respond::page(
        &site,
        &req,
        respond::NO_QUERY,
        |snapshot| Ok(pages::family(snapshot, &slug, TREE_LIMIT)?),
        |_, model| Body::from(views::forks::family(slug.as_str(), model)),
    )
}
