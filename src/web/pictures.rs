//! `/images/{hash}-{variant}.jpg`: a picture's variants, by the hash that
//! names the upload. A name is immutable (a new picture is a new hash), so
//! each is cached for a year. Anything but a stored picture's variant is a
//! 404: the name is checked against the exact shape, never used as a path.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};

use super::{Site, WebError};
use crate::domain::pictures;

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
    let picture = site.recipes().picture(hash)?.ok_or_else(not_found)?;
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
        .insert_header((header::CACHE_CONTROL, "public, max-age=31536000, immutable"))
        .insert_header((header::ETAG, etag))
        // Already compressed: the compress middleware leaves it alone.
        .insert_header((header::CONTENT_ENCODING, "identity"));
    Ok(if cached {
        response.finish()
    } else {
        response.body(bytes.to_vec())
    })
}
