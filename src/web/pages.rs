//! Tags, search, about, and the static assets.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};

use super::page_cache::Encoding;
use super::respond::{self, Body};
use super::{Site, WebError};
use crate::assets;
use crate::domain::{pages, search};
use crate::views;

/// Every tag: a walk over the tags' index, so made off the workers.
pub(super) async fn tags(
    site: web::Data<Site>,
    req: HttpRequest,
) -> Result<HttpResponse, WebError> {
    respond::long_page(
        site,
        &req,
        respond::NO_QUERY,
        |snapshot| Ok(snapshot.tags()?),
        |_, tags| Body::from(views::pages::tags(tags)),
    )
    .await
}

/// The search's query string: `?q=&tag=&page=`.
#[derive(Debug, Deserialize, Serialize)]
pub(super) struct SearchParams {
    #[serde(default)]
    q: String,
    tag: Option<String>,
    page: Option<String>,
}

/// A longer query is not a search for a recipe.
const MAX_QUERY: usize = 200;

/// How long a search waits for the index to show the site's newest write
/// (a cook's own, just made) before it answers at the index's basis: as
/// long as a page waits for a cook's write on another node. A node just
/// restarted indexes every write since the index's last commit in one
/// round, which took more than 500 ms on a loaded machine.
const INDEX_WAIT: std::time::Duration = crate::web::read_your_writes::WAIT;

pub(super) async fn search(
    site: web::Data<Site>,
    req: HttpRequest,
    params: web::Query<SearchParams>,
) -> Result<HttpResponse, WebError> {
    let query = search_query(params.into_inner())?;
    let index = site.search()?;
    // Waited for here, off the worker's thread, not in the index, which
    // is asked for its next round now rather than after its usual rest.
    let latest = site.snapshot();
    index_caught_up(index, &latest).await;
    let view = index.view(&latest)?;
    let key = respond::QueryKey::default()
        .with("q", Some(&query.text).filter(|q| !q.is_empty()))
        .with("tag", query.tag.as_deref())
        .with("page", (query.page > 0).then_some(query.page + 1));
    // Kept, as pages are: a query asked again (a popular word, one typed
    // by many) is served from the cache until the next write, and CLOCK-Pro
    // lets one asked once go first.
    respond::page_on(
        &site,
        &req,
        view.snapshot().clone(),
        &key,
        |snapshot| Ok(view.search(snapshot, &query)?),
        |site, results| Body::from(views::search::page(&query.text, results, site.memos())),
    )
}

/// The search the query string asks for, or why it is none: its words,
/// its page (from 0) and its tag.
fn search_query(params: SearchParams) -> Result<search::SearchQuery, WebError> {
    let q = params.q.trim();
    if q.chars().count() > MAX_QUERY {
        return Err(WebError::BadRequest(format!(
            "A search may be at most {MAX_QUERY} characters long."
        )));
    }
    let page = match params.page.as_deref() {
        None => 0,
        Some(page) => match page.parse::<usize>() {
            Ok(n) if (1..=search::MAX_PAGE).contains(&n) => n - 1,
            _ => {
                return Err(WebError::BadRequest(format!(
                    "A search's page is a number from 1 to {}, not {page:?}.",
                    search::MAX_PAGE
                )))
            }
        },
    };
    let tag = params
        .tag
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned);
    if tag
        .as_ref()
        .is_some_and(|t| t.len() > crate::domain::content::MAX_TAG)
    {
        return Err(WebError::BadRequest(
            "That is not a tag: it is too long.".into(),
        ));
    }
    // The query as read: its words, trimmed and one space apart, are what
    // the search reads, and what the page is kept under.
    let text = q.split_whitespace().collect::<Vec<_>>().join(" ");
    Ok(search::SearchQuery { text, tag, page })
}

/// Waits, at most `INDEX_WAIT`, for the index to show `latest`, hurrying
/// it if it does not yet.
async fn index_caught_up(index: &search::SearchIndex, latest: &crate::domain::Snapshot) {
    let started = std::time::Instant::now();
    let behind = || index.basis().is_none_or(|b| b < latest.basis());
    if behind() {
        index.hurry();
    }
    while behind() && started.elapsed() < INDEX_WAIT {
        actix_web::rt::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

pub(super) async fn about(
    site: web::Data<Site>,
    req: HttpRequest,
) -> Result<HttpResponse, WebError> {
    respond::page(
        &site,
        &req,
        respond::NO_QUERY,
        |_| Ok(()),
        |_, ()| Body::from(views::pages::about()),
    )
}

/// A static asset, by its hashed name: cached for a year, since a changed
/// file gets a new name; in the coding the client prefers, compressed when
/// the site was built.
pub(super) async fn asset(req: HttpRequest) -> Result<HttpResponse, WebError> {
    let asset = assets::find(req.path())
        .ok_or_else(|| WebError::NotFound(format!("There is no file at {}.", req.path())))?;
    let encoding = Encoding::negotiate(&req);
    let body = match encoding {
        Encoding::Identity => asset.body,
        Encoding::Brotli => asset.brotli,
        Encoding::Gzip => asset.gzip,
    };
    let mut response = HttpResponse::Ok();
    response
        .insert_header((header::CONTENT_TYPE, asset.content_type))
        .insert_header((header::CACHE_CONTROL, "public, max-age=31536000, immutable"))
        .insert_header((header::VARY, "Accept-Encoding"));
    if let Some(coding) = encoding.header_value() {
        response.insert_header((header::CONTENT_ENCODING, coding));
    }
    Ok(response.body(body))
}

/// A cook's page: their recipes and forks, the same for every visitor.
pub(super) async fn cook(
    site: web::Data<Site>,
    req: HttpRequest,
    handle: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let handle = crate::domain::Slug::parse(&handle)
        .map_err(|_| WebError::NotFound(format!("There is no cook called {handle:?}.")))?;
    if super::federation::wants_activity(&req) {
        return super::federation::actor(site, &req, handle).await;
    }
    respond::page(
        &site,
        &req,
        respond::NO_QUERY,
        |snapshot| Ok(pages::cook_page(snapshot, &handle)?),
        |site, cook| Body::from(views::cook::page(cook, site.memos())),
    )
    .map(super::federation::varies_by_accept)
}
