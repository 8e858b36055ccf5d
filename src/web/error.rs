//! The web layer's one error type: each variant is a status and a page in
//! the site's layout.

use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};

use crate::domain::DomainError;
use crate::views;

/// What went wrong with a request, in words for the person who made it.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// No page here: an unknown slug, version, tag or address.
    #[error("{0}")]
    NotFound(String),
    /// The request asks for something that cannot be: a version number
    /// that is not a number, a cursor that is not a page, a bad parameter.
    #[error("{0}")]
    BadRequest(String),
    /// The page was here and is gone (a retired recipe).
    #[error("{0}")]
    Gone(String),
    /// The store failed; the details go to the log, not the page.
    #[error("{0}")]
    Internal(String),
}

impl From<DomainError> for WebError {
    fn from(error: DomainError) -> WebError {
        match error {
            DomainError::NoSuchRecipe(_)
            | DomainError::NoSuchVersion { .. }
            | DomainError::BadSlug(_) => WebError::NotFound(error.to_string()),
            DomainError::BadCursor(_) => WebError::BadRequest(error.to_string()),
            other => WebError::Internal(other.to_string()),
        }
    }
}

impl ResponseError for WebError {
    fn status_code(&self) -> StatusCode {
        match self {
            WebError::NotFound(_) => StatusCode::NOT_FOUND,
            WebError::BadRequest(_) => StatusCode::BAD_REQUEST,
            WebError::Gone(_) => StatusCode::GONE,
            WebError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let (heading, message) = match self {
            WebError::NotFound(m) => ("Not found", m.as_str()),
            WebError::BadRequest(m) => ("Bad request", m.as_str()),
            WebError::Gone(m) => ("Gone", m.as_str()),
            WebError::Internal(m) => {
                tracing::error!(error = %m, "request failed");
                (
                    "Something went wrong",
                    "The site could not read its store. Try again in a moment.",
                )
            }
        };
        HttpResponse::build(self.status_code())
            .insert_header((header::CONTENT_TYPE, "text/html; charset=utf-8"))
            .insert_header((header::CACHE_CONTROL, "no-store"))
            .body(views::pages::error(heading, message).into_string())
    }
}
