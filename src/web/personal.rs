//! A page as a logged-in cook sees it: the page every visitor gets, as
//! kept, with that cook's header links in place of a visitor's, answered
//! privately.
//!
//! The page cache keeps one copy of a page for everyone; what differs per
//! cook is only the header's links. So a cook's request is answered from
//! the kept page: its bytes are decoded, the links put in
//! (`layout::with_cook_links`), and compressed again fast. The result is
//! never kept, is `private`, and has an ETag of its own (the page's and
//! the cook's), so neither a shared cache nor a browser that was logged
//! out before can mix it with the visitor's page.

use std::hash::Hasher as _;

use actix_web::body::BoxBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, EntityTag};
use actix_web::middleware::Next;
use actix_web::web::Bytes;
use actix_web::HttpRequest;

use super::page_cache::{Effort, Encoding, Kept};
use super::session::Visitor;
use super::WebError;
use crate::domain::Cook;
use crate::views::layout;

/// One cook's header links, and the mark their pages' ETags carry.
#[derive(Debug, Clone)]
pub struct Personal {
    links: String,
    mark: u64,
}

impl Personal {
    /// The cook `req` comes from, if it carries a live session; a request
    /// with no session cookie is a visitor's without asking the accounts.
    pub fn of(req: &HttpRequest) -> Result<Option<Personal>, WebError> {
        Ok(Visitor::signed_in(req)?.map(|cook| Personal::for_cook(&cook)))
    }

    pub fn for_cook(cook: &Cook) -> Personal {
        let links = layout::cook_links(cook.handle.as_str(), &cook.name).into_string();
        // Changes with whatever the links show (a new name), and only then.
        let mut hasher = rustc_hash::FxHasher::default();
        hasher.write(links.as_bytes());
        Personal {
            links,
            mark: hasher.finish(),
        }
    }

    /// The ETag of the page tagged `shared`, as this cook gets it.
    pub fn etag(&self, shared: &EntityTag) -> EntityTag {
        EntityTag::new_weak(format!("{}-{:x}", shared.tag(), self.mark))
    }

    /// `text` (a whole page) with this cook's links; `None` for one with
    /// no header (a feed, JSON).
    pub fn page(&self, text: &str) -> Option<String> {
        layout::with_cook_links(text, &self.links)
    }

    /// The kept page's body for this cook, compressed fast in `coding` (the
    /// request's, for a page made once per request); `None` when it is no
    /// page with a header, and is sent to everyone as it is.
    pub fn body(&self, kept: &Kept, coding: Encoding) -> std::io::Result<Option<Bytes>> {
        if !kept.content_type.starts_with("text/html") {
            return Ok(None);
        }
        let text = kept.encoding.decode(&kept.body, kept.plain_len)?;
        let Ok(text) = std::str::from_utf8(&text) else {
            return Ok(None);
        };
        Ok(self
            .page(text)
            .map(|page| coding.encode(page.as_bytes(), Effort::Fast)))
    }
}

/// The middleware that gives error pages a cook's header too: they are made
/// from the error alone, which knows no request, and are never kept
/// (`no-store`), so a cook's is put together here, on the way out.
pub async fn on_error_pages(
    req: ServiceRequest,
    next: Next<BoxBody>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let response = next.call(req).await?;
    let is_page = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|t| t.as_bytes().starts_with(b"text/html"));
    if !(response.status().is_client_error() || response.status().is_server_error()) || !is_page {
        return Ok(response);
    }
    let Some(personal) = Personal::of(response.request())? else {
        return Ok(response);
    };
    let (req, response) = response.into_parts();
    let (response, body) = response.into_parts();
    let bytes = actix_web::body::to_bytes(body)
        .await
        .map_err(|_| WebError::Internal("an error page's body could not be read".into()))?;
    let page = std::str::from_utf8(&bytes)
        .ok()
        .and_then(|text| personal.page(text))
        .map_or(bytes, Bytes::from);
    Ok(ServiceResponse::new(
        req,
        response.set_body(BoxBody::new(page)),
    ))
}
