//! The catalog and tag pages: a keyset-paginated list of recipes.

use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};

use super::respond::{self, Body};
use super::{Site, WebError};
use crate::domain::{CatalogPage, CatalogQuery, RecipeId, Snapshot, Sort};
use crate::views::catalog::{self, CatalogView};
use crate::views::tag_path;

/// Recipes a catalog page lists: the demo seed's whole catalog fits one.
pub const PAGE_SIZE: usize = 100;

/// The catalog's query string: `?tag=&sort=&after=`.
/// Parameters it does not know (`utm_source`, `fbclid`) are ignored: links
/// shared on the web carry them.
#[derive(Debug, Deserialize, Serialize)]
pub struct CatalogParams {
    tag: Option<String>,
    sort: Option<String>,
    after: Option<String>,
}

fn parse_sort(sort: Option<&str>) -> Result<Sort, WebError> {
    match sort {
        None | Some("title") => Ok(Sort::Title),
        Some("recent") => Ok(Sort::Recent),
        Some(other) => Err(WebError::BadRequest(format!(
            "{other:?} is not a way to sort the catalog: use title or recent."
        ))),
    }
}

pub(super) fn parse_after(after: Option<&str>) -> Result<Option<RecipeId>, WebError> {
    after
        .map(|text| {
            RecipeId::parse(text).ok_or_else(|| {
                WebError::BadRequest(format!("{text:?} is not a page of this list."))
            })
        })
        .transpose()
}

pub async fn index(
    site: web::Data<Site>,
    req: HttpRequest,
    params: web::Query<CatalogParams>,
) -> Result<HttpResponse, WebError> {
    let params = params.into_inner();
    let tag = params.tag.clone();
    list(site, &req, tag, params).await
}

pub async fn tag(
    site: web::Data<Site>,
    req: HttpRequest,
    tag: web::Path<String>,
    params: web::Query<CatalogParams>,
) -> Result<HttpResponse, WebError> {
    // The path names the tag: a `?tag=` beside it is not read.
    let params = CatalogParams {
        tag: None,
        ..params.into_inner()
    };
    list(site, &req, Some(tag.into_inner()), params).await
}

/// A page of the catalog, or of one tag's recipes. A tag's page reads all
/// the tag's recipes to sort them, so it is made off the workers (see
/// `respond::long_page`); the whole catalog's pages read from a cursor.
async fn list(
    site: web::Data<Site>,
    req: &HttpRequest,
    tag: Option<String>,
    params: CatalogParams,
) -> Result<HttpResponse, WebError> {
    let query = CatalogQuery {
        tag,
        sort: parse_sort(params.sort.as_deref())?,
        after: parse_after(params.after.as_deref())?,
        limit: PAGE_SIZE,
    };
    // Its key, as parsed: the tag as the path or the query gave it (a
    // tag's own spelling is what it is), the default sort left out.
    let key = respond::QueryKey::default()
        .with("tag", query.tag.clone())
        .with("sort", (query.sort == Sort::Recent).then_some("recent"))
        .with("after", query.after);
    if query.tag.is_none() {
        return respond::page(
            &site,
            req,
            &key,
            |snapshot| read(snapshot, &query),
            |site, page| render(site, &query, page),
        );
    }
    let for_render = query.clone();
    respond::long_page(
        site,
        req,
        &key,
        move |snapshot| read(snapshot, &query),
        move |site, page| render(site, &for_render, page),
    )
    .await
}

/// Reads a catalog page; a tag no recipe carries is a 404.
pub fn read(snapshot: &Snapshot, query: &CatalogQuery) -> Result<CatalogPage, WebError> {
    let page = snapshot.catalog(query)?;
    if let (Some(tag), None, true) = (&query.tag, query.after, page.entries.is_empty()) {
        return Err(WebError::NotFound(format!("No recipe is tagged {tag:?}.")));
    }
    Ok(page)
}

/// Renders a catalog page read for `query`.
pub fn render(site: &Site, query: &CatalogQuery, page: &CatalogPage) -> Body {
    let next = page.next.map(|after| {
        let base = query.tag.as_deref().map_or("/".to_owned(), tag_path);
        match query.sort {
            Sort::Title => format!("{base}?after={after}"),
            Sort::Recent => format!("{base}?sort=recent&after={after}"),
        }
    });
    Body::from(catalog::page(
        &CatalogView {
            base_url: site.base_url(),
            tag: query.tag.as_deref(),
            sort: query.sort,
            entries: &page.entries,
            next,
            later: query.after.is_some(),
            unsorted: page.unsorted,
        },
        site.memos(),
    ))
}
