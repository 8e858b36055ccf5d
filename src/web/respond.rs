//! How every page is answered: one pinned database value, the page cache,
//! the conditional GET, and the response's caching and timing headers.
//!
//! A page's ETag is a fingerprint of what it read (its `ReadSet`: the
//! entities and referrer lists it read, or the basis for pages built on a
//! range over an index) and the site's edition (the build's sources and
//! assets, and the base URL): the same reads and edition always give the
//! same bytes for the same address, and a write the page does not show
//! leaves its ETag alone. A kept page is checked against the latest value
//! and answered (200 or 304) without reading the page again; otherwise the
//! page is read first, and a 304 costs the read but not the render.
//! `Last-Modified` is the instant of the transaction after which what the
//! page read last changed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use actix_web::http::header::{
    self, EntityTag, HeaderName, HeaderValue, IfModifiedSince, IfNoneMatch,
};
use actix_web::http::StatusCode;
use actix_web::web::{self, Data};
use actix_web::{HttpMessage, HttpRequest, HttpResponse, HttpResponseBuilder};
use maud::Markup;
use serde::Serialize;

use super::error::WebError;
use super::metrics::PageKind;
use super::page_cache::{self, Encoding, Kept, PageKey};
use super::personal::Personal;
use super::Site;
use crate::domain::{ReadSet, Snapshot};

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

/// The ETag of a page that read `read`, served by a site of `edition`.
fn etag(read: &ReadSet, edition: u64) -> EntityTag {
    // Weak: compressed and identity encodings of a page are the same page.
    EntityTag::new_weak(format!("{:x}-{edition:x}", read.fingerprint()))
}

/// What answering a page needs of its request, owned, so that a long page
/// can be made on another thread (an `HttpRequest` stays on its worker).
pub struct PageRequest {
    key: PageKey,
    /// The coding the page is kept in, and the one it is sent in when made
    /// (`Encoding::negotiate_both`).
    codings: (Encoding, Encoding),
    if_none_match: Option<IfNoneMatch>,
    if_modified_since: Option<SystemTime>,
    /// The logged-in cook it is answered for, if any (`personal`).
    personal: Option<Personal>,
    /// Mixed into the ETag: another representation of the same reads (an
    /// ActivityStreams document at a page's address) is another entity,
    /// whose validator a browser's copy of the page must not match.
    variant: u64,
}

impl PageRequest {
    /// The request for a page that reads `query` of its query string.
    pub fn new(req: &HttpRequest, query: &impl Serialize) -> PageRequest {
        let codings = Encoding::negotiate_both(req);
        PageRequest {
            key: PageKey::new(req.path(), query, codings.0),
            codings,
            if_none_match: req.get_header::<IfNoneMatch>(),
            if_modified_since: req
                .get_header::<IfModifiedSince>()
                .map(|IfModifiedSince(since)| since.into()),
            personal: None,
            variant: 0,
        }
    }

    /// `new`, answered for the logged-in cook `req` comes from, if any.
    pub fn for_reader(req: &HttpRequest, query: &impl Serialize) -> Result<PageRequest, WebError> {
        Ok(PageRequest {
            personal: Personal::of(req)?,
            ..PageRequest::new(req, query)
        })
    }

    /// The ETag this request's reader gets for the page tagged `shared`.
    fn tag_for(&self, shared: &EntityTag) -> EntityTag {
        match &self.personal {
            Some(personal) => personal.etag(shared),
            None => shared.clone(),
        }
    }

    /// Whether the request's validators say the client has this page,
    /// tagged `etag` for everyone (see `tag_for`).
    fn has(&self, etag: &EntityTag, modified: Option<SystemTime>) -> bool {
        // If-None-Match wins over If-Modified-Since when both are sent (RFC 9110).
        if let Some(if_none_match) = &self.if_none_match {
            let etag = self.tag_for(etag);
            return match if_none_match {
                // Only pages that exist get here: a missing one is an error first.
                IfNoneMatch::Any => true,
                IfNoneMatch::Items(tags) => tags.iter().any(|t| t.weak_eq(&etag)),
            };
        }
        // A date says nothing of whose header a copy has: a browser that
        // kept a visitor's page must not be told a cook's is the same.
        if self.personal.is_some() {
            return false;
        }
        if let Some((since, modified)) = self.if_modified_since.zip(modified) {
            // Compared exactly: an HTTP date has whole seconds and a change
            // has milliseconds, so a page that changed twice in one second
            // was sent with the first change's second as its date, and the
            // second change is after that date, not in it. (A page changed
            // off a whole second is thus never 304 by date alone; by its
            // ETag, which browsers send too, it is.)
            return modified <= since;
        }
        false
    }
}

/// A page's answer, made on any thread and turned into a response on the
/// worker.
pub enum Answer {
    /// The page, kept; with its Server-Timing.
    Page(Arc<Kept>, String),
    /// The client has it already.
    NotModified(EntityTag, Option<SystemTime>),
}

impl Answer {
    /// The response to `request`: the page as kept, or for a logged-in
    /// cook the kept page with their own header, privately.
    fn into_response(self, request: &PageRequest) -> HttpResponse {
        let personal = request.personal.as_ref();
        match self {
            Answer::NotModified(etag, modified) => {
                let mut response = HttpResponse::build(StatusCode::NOT_MODIFIED);
                validators(&mut response, &etag, modified, personal);
                response.finish()
            }
            Answer::Page(kept, timing) => {
                // A cook's answer is theirs (its ETag, private) even where
                // its bytes are everyone's (JSON, feeds): one rule for
                // every answer to a cook, 200 or 304.
                let started = Instant::now();
                let fast = request.codings.1;
                let (body, coding, timing) = match personal.map(|p| p.body(&kept, fast)) {
                    Some(Ok(Some(body))) => {
                        let spent = millis(started.elapsed());
                        (body, fast, format!("{timing}, personal;dur={spent}"))
                    }
                    Some(Ok(None)) | None => (kept.body.clone(), kept.encoding, timing),
                    Some(Err(error)) => {
                        tracing::error!(%error, "a kept page did not decode");
                        return HttpResponse::InternalServerError().finish();
                    }
                };
                let mut response = HttpResponse::Ok();
                match personal {
                    Some(_) => validators(&mut response, &kept.etag, kept.modified, personal),
                    None => kept_validators(&mut response, &kept),
                }
                // Static values, and a name known to actix: inserted
                // without parsing or copying (see `kept_validators`).
                response
                    .insert_header((
                        header::CONTENT_TYPE,
                        HeaderValue::from_static(kept.content_type),
                    ))
                    .insert_header((SERVER_TIMING, timing));
                if let Some(coding) = coding.header_value() {
                    response.insert_header((
                        header::CONTENT_ENCODING,
                        HeaderValue::from_static(coding),
                    ));
                }
                response.body(body)
            }
        }
    }
}

/// Answers a page: pins one database value; serves the kept page if that
/// value still shows what it was made from (compressing it again at its
/// best the first time: see `Effort`); else reads the model with `read`
/// through a witnessed snapshot of the same value (store time), answers
/// 304 if the client's copy is current, else renders it with `render`
/// (render time), compresses it fast for the client (compress time) and
/// keeps it.
///
/// `query` is what the page reads of the query string, as parsed values
/// (a `QueryKey`, or `NO_QUERY`): the page is kept under its path and
/// that, in a fixed order and one spelling per meaning, so parameters it
/// ignores (`?x=1`, `?utm_source=`) and other spellings of the same values
/// (`?from=01`, `?servings=`, `?q=dal%20`) find the one page kept rather
/// than each make and keep a copy of it.
pub fn page<M>(
    site: &Site,
    req: &HttpRequest,
    query: &impl Serialize,
    read: impl FnOnce(&Snapshot) -> Result<M, WebError>,
    render: impl FnOnce(&Site, &M) -> Body,
) -> Result<HttpResponse, WebError> {
    page_as(
        site,
        site.snapshot(),
        PageRequest::for_reader(req, query)?,
        Keep::Yes,
        read,
        render,
    )
}

/// `page`, for the ActivityStreams document at a page's address (by
/// content negotiation): kept under `query` (which names the
/// representation), and tagged apart from the page.
pub fn document<M>(
    site: &Site,
    req: &HttpRequest,
    query: &impl Serialize,
    read: impl FnOnce(&Snapshot) -> Result<M, WebError>,
    render: impl FnOnce(&Site, &M) -> Body,
) -> Result<HttpResponse, WebError> {
    let request = PageRequest {
        variant: DOCUMENT_VARIANT,
        ..PageRequest::for_reader(req, query)?
    };
    page_as(site, site.snapshot(), request, Keep::Yes, read, render)
}

/// What a document's ETag is mixed with: any fixed value but 0.
const DOCUMENT_VARIANT: u64 = 0x6163_7469_7669_7479;

/// What a page reads of its query string, as parsed values in their one
/// spelling (a number without leading zeros, a default left out, a
/// search's words trimmed): the page's key in the cache.
#[derive(Debug, Default, Serialize)]
pub struct QueryKey(Vec<(&'static str, String)>);

impl QueryKey {
    /// The key with `name` set to `value`, if there is one.
    pub fn with(mut self, name: &'static str, value: Option<impl ToString>) -> QueryKey {
        if let Some(value) = value {
            self.0.push((name, value.to_string()));
        }
        self
    }
}

/// What a page that reads nothing of the query string reads of it.
#[derive(Debug, Serialize)]
pub struct NoQuery {}

/// See `NoQuery`.
pub const NO_QUERY: &NoQuery = &NoQuery {};

/// Whether a page made is kept in the page cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keep {
    Yes,
    No,
}

/// `page`, for a page that is not kept: a recipe at a scale asked, many
/// and mostly asked once, which would push the pages people come back to
/// out of the cache. Its ETag and 304 work as every page's.
pub fn unkept_page<M>(
    site: &Site,
    req: &HttpRequest,
    read: impl FnOnce(&Snapshot) -> Result<M, WebError>,
    render: impl FnOnce(&Site, &M) -> Body,
) -> Result<HttpResponse, WebError> {
    page_as(
        site,
        site.snapshot(),
        PageRequest::for_reader(req, NO_QUERY)?,
        Keep::No,
        read,
        render,
    )
}

/// `page`, made from `snapshot` rather than the site's newest value: a
/// page whose data beside the store is at an older basis (search results,
/// from the index at its basis). Kept as every page is, and served again
/// while `snapshot`'s successors still show what it read (for search, the
/// index's basis: any write renews it).
pub fn page_on<M>(
    site: &Site,
    req: &HttpRequest,
    snapshot: Snapshot,
    query: &impl Serialize,
    read: impl FnOnce(&Snapshot) -> Result<M, WebError>,
    render: impl FnOnce(&Site, &M) -> Body,
) -> Result<HttpResponse, WebError> {
    page_as(
        site,
        snapshot,
        PageRequest::for_reader(req, query)?,
        Keep::Yes,
        read,
        render,
    )
}

/// The page for `request` at `snapshot`: kept (or made and kept) if
/// `keep` says, else made.
fn page_as<M>(
    site: &Site,
    snapshot: Snapshot,
    request: PageRequest,
    keep: Keep,
    read: impl FnOnce(&Snapshot) -> Result<M, WebError>,
    render: impl FnOnce(&Site, &M) -> Body,
) -> Result<HttpResponse, WebError> {
    if keep == Keep::Yes {
        if let Some(kept) = kept(site, &snapshot, &request, PageKind::Other)? {
            return Ok(kept.into_response(&request));
        }
    }
    Ok(make(site, &snapshot, &request, keep, read, render)?.into_response(&request))
}

/// Long pages (their work grows with the catalog: the sitemap, tags) being
/// made at once, at most, across the server; past it, 503 and Retry-After.
pub const LONG_PAGES_AT_ONCE: usize = 2;

static LONG_PAGES: AtomicUsize = AtomicUsize::new(0);

/// One of the `LONG_PAGES_AT_ONCE` places, given back when dropped.
struct LongPagePlace;

impl LongPagePlace {
    fn take() -> Option<LongPagePlace> {
        LONG_PAGES
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < LONG_PAGES_AT_ONCE).then_some(n + 1)
            })
            .ok()
            .map(|_| LongPagePlace)
    }
}

impl Drop for LongPagePlace {
    fn drop(&mut self) {
        LONG_PAGES.fetch_sub(1, Ordering::AcqRel);
    }
}

/// `page`, for a page whose work can be long: a kept page is answered on
/// the worker; making one runs on actix's blocking pool, at most
/// `LONG_PAGES_AT_ONCE` at a time, so the workers keep answering the rest.
pub async fn long_page<M>(
    site: Data<Site>,
    req: &HttpRequest,
    query: &impl Serialize,
    read: impl FnOnce(&Snapshot) -> Result<M, WebError> + Send + 'static,
    render: impl FnOnce(&Site, &M) -> Body + Send + 'static,
) -> Result<HttpResponse, WebError> {
    let request = PageRequest::for_reader(req, query)?;
    let snapshot = site.snapshot();
    if let Some(kept) = kept(&site, &snapshot, &request, PageKind::Long)? {
        return Ok(kept.into_response(&request));
    }
    let place = LongPagePlace::take().ok_or_else(|| {
        WebError::Busy("The server is making other long pages; try again in a moment.".into())
    })?;
    let (answer, request) = web::block(move || {
        let _place = place;
        let answer = make(&site, &snapshot, &request, Keep::Yes, read, render);
        answer.map(|answer| (answer, request))
    })
    .await
    .map_err(|error| WebError::Internal(Box::new(error)))??;
    Ok(answer.into_response(&request))
}

/// The kept page for `request`, if `snapshot` still shows it; counted in
/// /metrics as a hit or a miss of a `kind` page.
fn kept(
    site: &Site,
    snapshot: &Snapshot,
    request: &PageRequest,
    kind: PageKind,
) -> Result<Option<Answer>, WebError> {
    let kept = kept_answer(site, snapshot, request)?;
    super::metrics::page_cache(kept.is_some(), kind);
    Ok(kept)
}

/// `kept`, uncounted.
fn kept_answer(
    site: &Site,
    snapshot: &Snapshot,
    request: &PageRequest,
) -> Result<Option<Answer>, WebError> {
    let started = Instant::now();
    let Some(kept) = site.pages().get(&request.key) else {
        return Ok(None);
    };
    if !snapshot.still_shows(&kept.read)? {
        return Ok(None);
    }
    if request.has(&kept.etag, kept.modified) {
        return Ok(Some(Answer::NotModified(kept.etag.clone(), kept.modified)));
    }
    let hit = started.elapsed();
    if kept.take_refining() {
        // Asked for again: worth its best compression (see `Effort`).
        match kept.refined() {
            Ok(refined) => {
                let refined = Arc::new(refined);
                site.pages().replace(&request.key, &kept, refined.clone());
                let timing = format!(
                    "cache;desc=hit;dur={}, compress;desc=refined;dur={}",
                    millis(hit),
                    millis(started.elapsed() - hit)
                );
                return Ok(Some(Answer::Page(refined, timing)));
            }
            // The kept bytes are what was sent before: send them again.
            Err(error) => tracing::warn!(%error, "a kept page did not decode to be refined"),
        }
    }
    let timing = format!("cache;desc=hit;dur={}", millis(hit));
    Ok(Some(Answer::Page(kept, timing)))
}

/// Makes the page at `snapshot` (see `page`), keeping it if `keep` says.
fn make<M>(
    site: &Site,
    snapshot: &Snapshot,
    request: &PageRequest,
    keep: Keep,
    read: impl FnOnce(&Snapshot) -> Result<M, WebError>,
    render: impl FnOnce(&Site, &M) -> Body,
) -> Result<Answer, WebError> {
    let started = Instant::now();
    let witnessed = snapshot.witnessed();
    let model = read(&witnessed)?;
    let read_set = witnessed.read_set();
    let modified = match read_set.changed_at() {
        Some(at) => snapshot
            .instant_of(at)?
            .map(|at| UNIX_EPOCH + Duration::from_millis(at.millis().max(0) as u64)),
        None => None,
    };
    let tag = etag(&read_set, site.edition() ^ request.variant);
    if request.has(&tag, modified) {
        return Ok(Answer::NotModified(tag, modified));
    }
    let read_at = Instant::now();
    let reads = witnessed.reads_so_far();
    let body = render(site, &model);
    let rendered_at = Instant::now();
    let kept = Arc::new(Kept::made(
        read_set,
        tag,
        modified,
        body.content_type,
        request.codings,
        body.text.as_bytes(),
    ));
    let compressed_at = Instant::now();
    if keep == Keep::Yes {
        site.pages().keep(request.key.clone(), kept.clone());
    }
    let timing = server_timing(
        read_at - started,
        rendered_at - read_at,
        compressed_at - rendered_at,
        reads,
    );
    Ok(Answer::Page(kept, timing))
}

/// The validators and caching rule every page answer carries: the page's
/// own ETag (`etag`, everyone's) for everyone, or for one cook theirs,
/// and private. Every page varies by cookie, so that no cache gives a
/// cook's page to anyone else, nor a visitor's to a cook.
fn validators(
    response: &mut HttpResponseBuilder,
    etag: &EntityTag,
    modified: Option<SystemTime>,
    personal: Option<&Personal>,
) {
    let (etag, cache_control) = match personal {
        Some(personal) => (personal.etag(etag), "private, no-cache"),
        None => (etag.clone(), "no-cache"),
    };
    insert_validators(
        response,
        page_cache::etag_header(&etag),
        modified.map(page_cache::modified_header),
        cache_control,
    );
}

/// `validators` for everyone's copy of a kept page: from the header
/// values it keeps, so that none is formatted per answer.
fn kept_validators(response: &mut HttpResponseBuilder, kept: &Kept) {
    insert_validators(
        response,
        kept.etag_header.clone(),
        kept.modified_header.clone(),
        "no-cache",
    );
}

/// Inserts the validators' header values, the caching rule and `Vary`:
/// the values as they are, the rest static, so that nothing is parsed or
/// copied.
fn insert_validators(
    response: &mut HttpResponseBuilder,
    etag: HeaderValue,
    modified: Option<HeaderValue>,
    cache_control: &'static str,
) {
    response
        .insert_header((header::ETAG, etag))
        .insert_header((
            header::CACHE_CONTROL,
            HeaderValue::from_static(cache_control),
        ))
        .insert_header((header::VARY, HeaderValue::from_static(VARY)));
    if let Some(modified) = modified {
        response.insert_header((header::LAST_MODIFIED, modified));
    }
}

/// What every page varies by (see `validators`).
const VARY: &str = "Accept-Encoding, Cookie";

/// The `Server-Timing` header's name.
const SERVER_TIMING: HeaderName = HeaderName::from_static("server-timing");

/// A Server-Timing duration: milliseconds to three places, written from
/// whole microseconds as integers (formatting a float was half the cost
/// of a kept page's Server-Timing).
#[derive(Clone, Copy)]
struct Millis(Duration);

fn millis(d: Duration) -> Millis {
    Millis(d)
}

impl std::fmt::Display for Millis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let micros = self.0.as_micros();
        write!(f, "{}.{:03}", micros / 1000, micros % 1000)
    }
}

/// `store;dur=0.052, render;dur=0.021, compress;dur=0.110` in
/// milliseconds; debug builds also say how many index reads the store did.
fn server_timing(store: Duration, render: Duration, compress: Duration, reads: u64) -> String {
    let (store, render, compress) = (millis(store), millis(render), millis(compress));
    if cfg!(debug_assertions) {
        format!(
            "store;dur={store};desc=\"{reads} index reads\", render;dur={render}, \
             compress;dur={compress}"
        )
    } else {
        format!("store;dur={store}, render;dur={render}, compress;dur={compress}")
    }
}

#[cfg(test)]
mod tests {
    use actix_web::http::header::HttpDate;

    use super::*;

    #[test]
    fn a_date_validator_is_compared_to_the_change_exactly() {
        let second = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let asked = actix_web::test::TestRequest::get()
            .insert_header(IfModifiedSince(HttpDate::from(second)))
            .to_http_request();
        let request = PageRequest::new(&asked, NO_QUERY);
        let etag = EntityTag::new_weak("x".into());
        let at = |millis| Some(second + Duration::from_millis(millis));
        assert!(
            request.has(&etag, Some(second)),
            "changed in that second, at its start"
        );
        assert!(request.has(&etag, Some(second - Duration::from_secs(1))));
        // Two writes in one second: the client's date is the first's
        // second; the second write is after it.
        assert!(!request.has(&etag, at(800)));
        assert!(!request.has(&etag, at(1)));
        assert!(!request.has(&etag, None), "a page with no date is sent");
    }

    #[test]
    fn a_timing_is_in_milliseconds_to_three_places() {
        let text = |micros| millis(Duration::from_micros(micros)).to_string();
        assert_eq!(text(0), "0.000");
        assert_eq!(text(2), "0.002");
        assert_eq!(text(1_500), "1.500");
        assert_eq!(text(12_345_678), "12345.678");
        assert_eq!(millis(Duration::from_nanos(2_999)).to_string(), "0.002");
    }

    #[test]
    fn long_pages_take_a_place_each_and_give_it_back() {
        // The only user of the places in this test binary.
        let places: Vec<_> = (0..LONG_PAGES_AT_ONCE)
            .map(|_| LongPagePlace::take().expect("a free place"))
            .collect();
        assert!(LongPagePlace::take().is_none(), "all taken");
        drop(places);
        assert!(LongPagePlace::take().is_some(), "given back");
    }
}
