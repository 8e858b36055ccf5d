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
use crate::domain::{pictures, Seen};

pub async fn picture(
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
    // Who asks matters only for a picture no version names: the session is
    // read only then, and only with a session cookie.
    let mut seen = site.recipes().picture_for(hash, None)?;
    if seen.is_none()
        && req
            .cookie(super::session::session_cookie_name(&site))
            .is_some()
    {
        let visitor = Visitor::extract(&req).await?;
        if let Some(cook) = &visitor.cook {
            seen = site
                .recipes()
                .picture_for(hash, Some(cook.handle.as_str()))?;
        }
    }
    let (picture, seen) = seen.ok_or_else(not_found)?;
    if !pictures::is_variant(picture.width, variant) {
        return Err(not_found());
    }
    let bytes = site
        .recipes()
        .picture_variant(hash, variant)?
        .ok_or_else(not_found)?;
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
    Ok(if cached {
        response.finish()
    } else {
        response.body(bytes)
    })
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
