//! What machines read of the site: the Atom feeds (`/feed.xml`, and a
//! cook's suggestions made and received), the sitemap index and its
//! files, and `/robots.txt`.

use actix_web::{web, HttpRequest, HttpResponse};

use super::respond::{self, Body};
use super::{Site, WebError};
use crate::domain::{pages, CatalogQuery, Instant, Sort};
use crate::views::feeds;

/// Entries in the Atom feed.
const FEED_SIZE: usize = 30;

pub(super) async fn atom(
    site: web::Data<Site>,
    req: HttpRequest,
) -> Result<HttpResponse, WebError> {
    respond::page(
        &site,
        &req,
        respond::NO_QUERY,
        |snapshot| {
            let updated = snapshot.modified()?.unwrap_or(Instant::from_millis(0));
            let page = snapshot.catalog(&CatalogQuery {
                sort: Sort::Recent,
                limit: FEED_SIZE,
                ..CatalogQuery::default()
            })?;
            Ok((page.entries, updated))
        },
        |site, (entries, updated)| {
            Body::xml(
                "application/atom+xml; charset=utf-8",
                feeds::atom(site.base_url(), site.memos(), entries, *updated),
            )
        },
    )
}

/// `/cooks/{handle}/suggestions.xml`: the suggestions sent to a cook's
/// recipes, as an Atom feed.
pub(super) async fn cook_suggestions(
    site: web::Data<Site>,
    req: HttpRequest,
    handle: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    suggestions_feed(&site, &req, &handle, pages::FeedOf::Received)
}

/// `/cooks/{handle}/suggested.xml`: the suggestions a cook made, and what
/// became of each (accepted, declined, with the author's note), newest
/// changed first.
pub(super) async fn cook_suggested(
    site: web::Data<Site>,
    req: HttpRequest,
    handle: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    suggestions_feed(&site, &req, &handle, pages::FeedOf::Sent)
}

fn suggestions_feed(
    site: &Site,
    req: &HttpRequest,
    handle: &str,
    of: pages::FeedOf,
) -> Result<HttpResponse, WebError> {
    let handle = crate::domain::Slug::parse(handle)
        .map_err(|_| WebError::NotFound(format!("There is no cook called {handle:?}.")))?;
    respond::page(
        site,
        req,
        respond::NO_QUERY,
        |snapshot| Ok(pages::suggestions_feed(snapshot, &handle, of)?),
        |site, feed| {
            Body::xml(
                "application/atom+xml; charset=utf-8",
                feeds::suggestions_atom(site.base_url(), feed),
            )
        },
    )
}

/// Entity ids one sitemap file covers (`Snapshot::sitemap_files`): fewer
/// than the 50,000 addresses the protocol allows even were every id a
/// recipe's. A full synthetic recipe takes some 14 ids, so a file lists
/// about 2,300 of them (431 files at 1,000,000 recipes).
pub(super) const SITEMAP_IDS_PER_FILE: u64 = 1 << 15;

/// `/sitemap.xml`: an index of the sitemap files (their count from the
/// last recipe's id, one seek; made off the workers all the same, as a
/// seek may read from disk).
pub(super) async fn sitemap(
    site: web::Data<Site>,
    req: HttpRequest,
) -> Result<HttpResponse, WebError> {
    respond::long_page(
        site,
        &req,
        respond::NO_QUERY,
        |snapshot| Ok(snapshot.sitemap_files(SITEMAP_IDS_PER_FILE)?),
        |site, files| {
            Body::xml(
                "application/xml; charset=utf-8",
                feeds::sitemap_index(site.base_url(), *files),
            )
        },
    )
    .await
}

/// `/sitemaps/{n}.xml`, from 1: the recipes of `SITEMAP_IDS_PER_FILE`
/// ids, by id; the first file also lists the catalog and the about page.
pub(super) async fn sitemap_file(
    site: web::Data<Site>,
    req: HttpRequest,
    name: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let missing = || WebError::NotFound(format!("There is no sitemap file {name}."));
    let file: usize = name
        .strip_suffix(".xml")
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|n| n.parse().ok())
        .filter(|&n| n >= 1)
        .ok_or_else(missing)?;
    let not_there = missing();
    respond::long_page(
        site,
        &req,
        respond::NO_QUERY,
        move |snapshot| {
            if file > snapshot.sitemap_files(SITEMAP_IDS_PER_FILE)? {
                return Err(not_there);
            }
            Ok(snapshot.sitemap_file(file - 1, SITEMAP_IDS_PER_FILE)?)
        },
        move |site, recipes| {
            Body::xml(
                "application/xml; charset=utf-8",
                feeds::sitemap(site.base_url(), file == 1, recipes),
            )
        },
    )
    .await
}

pub(super) async fn robots(
    site: web::Data<Site>,
    req: HttpRequest,
) -> Result<HttpResponse, WebError> {
    respond::page(
        &site,
        &req,
        respond::NO_QUERY,
        |_| Ok(()),
        |site, ()| Body::xml("text/plain; charset=utf-8", feeds::robots(site.base_url())),
    )
}
