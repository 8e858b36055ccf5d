//! How every page is answered: one pinned database value, a conditional GET
//! check before any work, and the response's caching and timing headers.
//!
//! A page's ETag is the basis it was read at and the site's edition (the
//! build's sources and assets, and the base URL): the same basis and
//! edition always give the same bytes for the same address, and any write
//! moves the basis. So a
//! conditional GET is answered with 304 before the page reads anything.
//! `Last-Modified` is the instant of the basis transaction.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use actix_web::http::header::{self, EntityTag, HttpDate, IfModifiedSince, IfNoneMatch};
use actix_web::http::StatusCode;
use actix_web::{HttpMessage, HttpRequest, HttpResponse};
use maud::Markup;

use super::error::WebError;
use super::Site;
use crate::domain::{Basis, Snapshot};

/// A response body and its media type.
pub struct Body {
    pub content_type: &'static str,
    pub text: String,
}

impl From<Markup> for Body {
    fn from(markup: Markup) -> Body {
        Body {
            content_type: "text/html; charset=utf-8",
            text: markup.into_string(),
        }
    }
}

impl Body {
    pub fn xml(content_type: &'static str, text: String) -> Body {
        Body { content_type, text }
    }

    pub fn json(text: String) -> Body {
        Body {
            content_type: "application/json",
            text,
        }
    }
}

/// The ETag of a page read at `basis` by a site of `edition`.
fn etag(basis: Basis, edition: u64) -> EntityTag {
    // Weak: compressed and identity encodings of a page are the same page.
    EntityTag::new_weak(format!("{basis:x}-{edition:x}"))
}

/// Whether the request's validators say the client has this page already.
fn not_modified(req: &HttpRequest, etag: &EntityTag, modified: SystemTime) -> bool {
    // If-None-Match wins over If-Modified-Since when both are sent (RFC 9110).
    if let Some(if_none_match) = req.get_header::<IfNoneMatch>() {
        return match if_none_match {
            IfNoneMatch::Any => true,
            IfNoneMatch::Items(tags) => tags.iter().any(|t| t.weak_eq(etag)),
        };
    }
    if let Some(IfModifiedSince(since)) = req.get_header::<IfModifiedSince>() {
        // HTTP dates have whole seconds.
        let seconds = |t: SystemTime| t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        return seconds(modified) <= seconds(since.into());
    }
    false
}

/// Answers a page: pins one database value, answers 304 if the client's
/// copy is current, else reads the model with `read` (store time) and
/// renders it with `render` (render time).
pub fn page<M>(
    site: &Site,
    req: &HttpRequest,
    read: impl FnOnce(&Snapshot) -> Result<M, WebError>,
    render: impl FnOnce(&Site, &M) -> Body,
) -> Result<HttpResponse, WebError> {
    let started = Instant::now();
    let snapshot = site.snapshot();
    let modified_millis = snapshot.modified()?.map_or(0, |at| at.millis());
    let modified = UNIX_EPOCH + Duration::from_millis(modified_millis.max(0) as u64);
    let tag = etag(snapshot.basis(), site.edition());
    let validators = |response: &mut actix_web::HttpResponseBuilder| {
        response
            .insert_header(header::ETag(tag.clone()))
            .insert_header(header::LastModified(HttpDate::from(modified)))
            .insert_header((header::CACHE_CONTROL, "no-cache"));
    };
    if not_modified(req, &tag, modified) {
        let mut response = HttpResponse::build(StatusCode::NOT_MODIFIED);
        validators(&mut response);
        return Ok(response.finish());
    }
    let model = read(&snapshot)?;
    let read_at = Instant::now();
    let reads = snapshot.reads_so_far();
    let body = render(site, &model);
    let rendered_at = Instant::now();
    let mut response = HttpResponse::Ok();
    validators(&mut response);
    response
        .insert_header((header::CONTENT_TYPE, body.content_type))
        .insert_header((
            "Server-Timing",
            server_timing(read_at - started, rendered_at - read_at, reads),
        ));
    Ok(response.body(body.text))
}

/// `store;dur=0.052, render;dur=0.021` in milliseconds; debug builds also
/// say how many index reads the store did.
fn server_timing(store: Duration, render: Duration, reads: u64) -> String {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    if cfg!(debug_assertions) {
        format!(
            "store;dur={:.3};desc=\"{reads} index reads\", render;dur={:.3}",
            ms(store),
            ms(render)
        )
    } else {
        format!("store;dur={:.3}, render;dur={:.3}", ms(store), ms(render))
    }
}
