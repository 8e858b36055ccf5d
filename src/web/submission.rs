//! Reading the recipe form, sent either way a browser sends it: as a plain
//! form (`application/x-www-form-urlencoded`, the live preview's fetch) or
//! as `multipart/form-data` with a picture file. Each part is read with a
//! byte limit, and the text fields become the same struct a plain form
//! would, so the handlers read one shape.

use actix_multipart::{Field, Multipart, MultipartError};
use actix_web::error::PayloadError;
use actix_web::http::header;
use actix_web::{web, HttpRequest};
use futures_util::StreamExt;
use serde::de::DeserializeOwned;

use super::form_handling::MAX_FORM_BYTES;
use super::middleware::body_timed_out;
use super::WebError;
use crate::domain::pictures::MAX_UPLOAD_BYTES;

/// What each part of a multipart form counts for besides its name and
/// bytes: its framing (boundary and headers) in a browser's body.
const PART_OVERHEAD: usize = 64;

/// What a multipart body may declare beyond its text and picture limits.
const MULTIPART_SLACK: usize = 64 * 1024;

/// The file field of the recipe form.
pub(crate) const PICTURE_FIELD: &str = "picture_file";

/// How large a picture file may be and still be read past (and dropped), so
/// that the form comes back with everything else that was typed and says
/// the picture is too large: room for a phone camera's largest photos.
/// A larger one is refused with the rest of the body unread.
const MAX_READ_PAST_BYTES: usize = 32 * 1024 * 1024;

/// What a form does with a picture file over `MAX_UPLOAD_BYTES`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OversizedPicture {
    /// Refuses the form (413) as soon as the file passes the limit.
    Refuse,
    /// Reads past it, up to `MAX_READ_PAST_BYTES`, so that the form comes
    /// back with what was typed. Only for a logged-in cook's recipe form
    /// (a visitor is sent to log in before the body is read): anyone else
    /// could make the server read that much for nothing.
    ReadPast,
}

impl OversizedPicture {
    /// The most of a picture file read before the form is refused.
    fn most(self) -> usize {
        match self {
            OversizedPicture::Refuse => MAX_UPLOAD_BYTES,
            OversizedPicture::ReadPast => MAX_READ_PAST_BYTES,
        }
    }
}

/// The picture file a form sent.
#[derive(Debug)]
pub(crate) enum Upload {
    File(Vec<u8>),
    /// Over `MAX_UPLOAD_BYTES`: its bytes were read and dropped; how many.
    TooLarge(usize),
}

fn too_large_upload() -> WebError {
    WebError::TooLarge(format!(
        "The picture is larger than the {} MiB a picture may be: nothing was changed.",
        MAX_UPLOAD_BYTES / (1024 * 1024)
    ))
}

pub(crate) fn too_large_form(limit: usize) -> WebError {
    WebError::TooLarge(format!(
        "The form is larger than the {} KiB a form may be: nothing was changed.",
        limit / 1024
    ))
}

/// A body that could not be read: too slow (408), or broken off.
pub(crate) fn payload_refused(error: PayloadError) -> WebError {
    if body_timed_out(&error) {
        WebError::TimedOut(
            "The form took too long to arrive: nothing was changed. Try again.".to_owned(),
        )
    } else {
        unreadable(error)
    }
}

fn unreadable(why: impl std::fmt::Display) -> WebError {
    WebError::BadRequest(format!(
        "This page cannot read that form ({why}): nothing was changed."
    ))
}

/// The form's fields, and the picture file if one was chosen.
pub(crate) async fn read_recipe_form<T: DeserializeOwned>(
    req: &HttpRequest,
    payload: web::Payload,
    oversized: OversizedPicture,
) -> Result<(T, Option<Upload>), WebError> {
    read_form(req, payload, MAX_FORM_BYTES, oversized).await
}

/// A form whose text may be up to `text_limit` bytes (a pasted page), and
/// its picture file if it has one.
pub(crate) async fn read_form<T: DeserializeOwned>(
    req: &HttpRequest,
    payload: web::Payload,
    text_limit: usize,
    oversized: OversizedPicture,
) -> Result<(T, Option<Upload>), WebError> {
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    // A body that says up front it is over the limit is refused before a
    // byte of it is read, so its sender learns at once and holds nothing.
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if content_type.starts_with("multipart/form-data") {
        // Room for the framing a browser writes around each part (its
        // count below charges only `PART_OVERHEAD`), the file's name and
        // type: a form the part-by-part limits take, or whose picture is
        // read past, is never refused here.
        let most = text_limit + oversized.most() + MULTIPART_SLACK;
        if declared.is_some_and(|length| length > most as u64) {
            return Err(WebError::TooLarge(format!(
                "The form is larger than this page reads (a picture may be {} MiB): nothing \
                 was changed.",
                MAX_UPLOAD_BYTES / (1024 * 1024)
            )));
        }
        return read_multipart(req, payload, text_limit, oversized).await;
    }
    if declared.is_some_and(|length| length > text_limit as u64) {
        return Err(too_large_form(text_limit));
    }
    if !content_type.starts_with("application/x-www-form-urlencoded") {
        return Err(unreadable("it is not a form"));
    }
    let body = read_limited(payload, text_limit).await?;
    let form = serde_urlencoded::from_bytes(&body).map_err(unreadable)?;
    Ok((form, None))
}

async fn read_limited(mut payload: web::Payload, limit: usize) -> Result<Vec<u8>, WebError> {
    let mut body = Vec::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(payload_refused)?;
        if body.len() + chunk.len() > limit {
            return Err(too_large_form(limit));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

async fn read_multipart<T: DeserializeOwned>(
    req: &HttpRequest,
    payload: web::Payload,
    text_limit: usize,
    oversized: OversizedPicture,
) -> Result<(T, Option<Upload>), WebError> {
    let mut parts = Multipart::new(req.headers(), payload);
    let mut read = PartsRead::default();
    while let Some(part) = parts.next().await {
        let part = part.map_err(multipart_refused)?;
        read.part(part, text_limit, oversized).await?;
    }
    // Through the plain form's own decoder, so both read alike.
    let encoded = serde_urlencoded::to_string(&read.fields).map_err(unreadable)?;
    let form = serde_urlencoded::from_str(&encoded).map_err(unreadable)?;
    Ok((form, read.upload))
}

/// A multipart form's parts read so far: its text fields, its picture,
/// and what they count for against the form's limits.
#[derive(Default)]
struct PartsRead {
    fields: Vec<(String, String)>,
    text_bytes: usize,
    upload: Option<Upload>,
    files: usize,
}

impl PartsRead {
    /// Reads one part: a text field, or the picture file.
    async fn part(
        &mut self,
        mut part: Field,
        text_limit: usize,
        oversized: OversizedPicture,
    ) -> Result<(), WebError> {
        let name = part.name().unwrap_or("").to_owned();
        // A part's name and its framing count against the form's size too,
        // so a body of many empty parts is refused like a long one.
        self.text_bytes += name.len() + PART_OVERHEAD;
        if self.text_bytes > text_limit {
            return Err(too_large_form(text_limit));
        }
        let is_file = name == PICTURE_FIELD;
        // One file part: more would be read, byte limit after byte limit,
        // for nothing.
        self.files += usize::from(is_file);
        if self.files > 1 {
            return Err(unreadable("it sends more than one picture"));
        }
        if is_file {
            self.upload = read_file(&mut part, oversized).await?;
            return Ok(());
        }
        let data = read_text(&mut part, text_limit - self.text_bytes, text_limit).await?;
        self.text_bytes += data.len();
        let text = String::from_utf8(data).map_err(|_| unreadable("a field is not UTF-8"))?;
        self.fields.push((name, text));
        Ok(())
    }
}

/// A text part's bytes, up to `limit`: past it, the form is larger than
/// its `text_limit`.
async fn read_text(part: &mut Field, limit: usize, text_limit: usize) -> Result<Vec<u8>, WebError> {
    let mut data = Vec::new();
    while let Some(chunk) = part.next().await {
        let chunk = chunk.map_err(multipart_refused)?;
        if data.len() + chunk.len() > limit {
            return Err(too_large_form(text_limit));
        }
        data.extend_from_slice(&chunk);
    }
    Ok(data)
}

/// The picture file's part: its bytes, or, over `MAX_UPLOAD_BYTES`, read
/// past and dropped as far as `oversized` lets it be; none when the part
/// is empty.
async fn read_file(
    part: &mut Field,
    oversized: OversizedPicture,
) -> Result<Option<Upload>, WebError> {
    let mut data = Vec::new();
    // Bytes of a picture over its limit, read and dropped.
    let mut past = 0;
    while let Some(chunk) = part.next().await {
        let chunk = chunk.map_err(multipart_refused)?;
        if past > 0 || data.len() + chunk.len() > MAX_UPLOAD_BYTES {
            past += std::mem::take(&mut data).len() + chunk.len();
            if past > oversized.most() {
                return Err(too_large_upload());
            }
            continue;
        }
        data.extend_from_slice(&chunk);
    }
    Ok(if past > 0 {
        Some(Upload::TooLarge(past))
    } else if !data.is_empty() {
        Some(Upload::File(data))
    } else {
        // No file chosen: browsers send the part, empty.
        None
    })
}

fn multipart_refused(error: MultipartError) -> WebError {
    match error {
        MultipartError::Payload(error) => payload_refused(error),
        other => unreadable(other),
    }
}
