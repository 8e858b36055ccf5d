//! `/images/{hash}-{variant}.jpg`: a picture's variants, by the keyed hash
//! that names the upload. A picture a version names is anyone's, and as a
//! name is immutable (a new picture is a new hash) each is cached for a
//! year. One that no version names yet is shown only to a cook who sent it
//! (their form shows it back), privately (`Recipes::picture_for`). Anything
//! else is a 404, in the same words: the name is checked against the exact
//! shape, never used as a path.

use actix_web::http::header;
use actix_web::{web, FromRequest, HttpRequest, HttpResponse};

use super::session::Visitor;
use super::{Site, WebError};
use crate::domain::{pictures, DomainError, Seen};

pub(super) async fn picture(
    site: web::Data<Site>,
    req: HttpRequest,
    file: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let not_found = || WebError::NotFound(format!("There is no picture at {}.", req.path()));
    let (hash, variant) = file
        .strip_suffix(".jpg")
        .and_then(|name| name.split_once('-'))
        .filter(|(hash, _)| pictures::is_hash(hash))
        .ok_or_else(not_found)?;
    let (seen, bytes) = find(&site, &req, hash, variant)
        .await?
        .ok_or_else(not_found)?;
    Ok(jpeg(&req, hash, variant, seen, bytes))
}

/// The variant `variant` of picture `hash`, if whoever asks may see it.
/// Who asks matters only for a picture no version names: the session is
/// read only then, and only with a session cookie.
async fn find(
    site: &Site,
    req: &HttpRequest,
    hash: &str,
    variant: &str,
) -> Result<Option<(Seen, Vec<u8>)>, WebError> {
    let mut found = read(site, hash, variant, None).await?;
    if found.is_none()
        && req
            .cookie(super::session::session_cookie_name(site))
            .is_some()
    {
        let visitor = Visitor::extract(req).await?;
        if let Some(cook) = &visitor.cook {
            found = read(site, hash, variant, Some(cook.handle.to_string())).await?;
        }
    }
    Ok(found)
}

/// The picture's answer: its bytes, or 304 when the browser has them,
/// kept as widely as `seen` allows.
fn jpeg(req: &HttpRequest, hash: &str, variant: &str, seen: Seen, bytes: Vec<u8>) -> HttpResponse {
    let etag = format!("\"{hash}-{variant}\"");
    let cached = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|tag| tag.trim() == etag));
    let mut response = if cached {
        HttpResponse::NotModified()
    } else {
        HttpResponse::Ok()
    };
    response
        .insert_header((header::CONTENT_TYPE, "image/jpeg"))
        .insert_header((header::CACHE_CONTROL, cache_control(seen)))
        .insert_header((header::ETAG, etag))
        // Already compressed: the compress middleware leaves it alone.
        .insert_header((header::CONTENT_ENCODING, "identity"));
    if cached {
        response.finish()
    } else {
        response.body(bytes)
    }
}

/// The variant `variant` of picture `hash`, if `reader` (a cook's handle,
/// or none for a visitor) may see it, and how widely. Where pictures are
/// kept in the log's database, read off the workers (`blocking::off_workers`);
/// a node that served a picture once keeps its size and its variants, so
/// it serves them again without PostgreSQL.
async fn read(
    site: &Site,
    hash: &str,
    variant: &str,
    reader: Option<String>,
) -> Result<Option<(Seen, Vec<u8>)>, WebError> {
    let recipes = site.recipes().clone();
    let (hash, variant) = (hash.to_owned(), variant.to_owned());
    let found = super::blocking::off_workers(site, move || -> Result<_, DomainError> {
        let Some((picture, seen)) = recipes.picture_for(&hash, reader.as_deref())? else {
            return Ok(None);
        };
        if !pictures::is_variant(picture.width, &variant) {
            return Ok(None);
        }
        let bytes = recipes.picture_variant(&hash, &variant)?;
        Ok(bytes.map(|bytes| (seen, bytes)))
    })
    .await??;
    Ok(found)
}

/// How long and where a picture may be kept: a named one for a year by
/// anyone; an unnamed one only by its sender's browser, which asks again
/// (it may be collected, and must never sit in a shared cache).
fn cache_control(seen: Seen) -> &'static str {
    match seen {
        Seen::ByAnyone => "public, max-age=31536000, immutable",
        Seen::BySender => "private, no-cache",
    }
}
