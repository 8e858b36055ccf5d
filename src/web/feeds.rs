//! `/feed.xml`, `/sitemap.xml` and `/robots.txt`.

use actix_web::{web, HttpRequest, HttpResponse};

use super::respond::{self, Body};
use super::{Site, WebError};
use crate::domain::{CatalogQuery, Instant, Sort};
use crate::views::feeds;

/// Entries in the Atom feed.
const FEED_SIZE: usize = 30;
/// A sitemap file may list at most 50,000 addresses.
const SITEMAP_LIMIT: usize = 50_000;

pub async fn atom(site: web::Data<Site>, req: HttpRequest) -> Result<HttpResponse, WebError> {
    respond::page(
        &site,
        &req,
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
                feeds::atom(site.base_url(), entries, *updated),
            )
        },
    )
}

/// The sitemap walks the catalog, so it is made off the workers.
pub async fn sitemap(site: web::Data<Site>, req: HttpRequest) -> Result<HttpResponse, WebError> {
    respond::long_page(
        site,
        &req,
        |snapshot| {
            let mut recipes = Vec::new();
            let mut query = CatalogQuery {
                limit: 500,
                ..CatalogQuery::default()
            };
            loop {
                let page = snapshot.catalog(&query)?;
                recipes.extend(page.entries.into_iter().map(|e| (e.slug, e.updated_at)));
                match page.next {
                    Some(after) if recipes.len() < SITEMAP_LIMIT => query.after = Some(after),
                    _ => break,
                }
            }
            recipes.truncate(SITEMAP_LIMIT);
            Ok(recipes)
        },
        |site, recipes| {
            Body::xml(
                "application/xml; charset=utf-8",
                feeds::sitemap(site.base_url(), recipes),
            )
        },
    )
    .await
}

pub async fn robots(site: web::Data<Site>, req: HttpRequest) -> Result<HttpResponse, WebError> {
    respond::page(
        &site,
        &req,
        |_| Ok(()),
        |site, ()| Body::xml("text/plain; charset=utf-8", feeds::robots(site.base_url())),
    )
}
