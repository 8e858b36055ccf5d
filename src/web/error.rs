//! The web layer's one error type: each variant is a status and a page in
//! the site's layout.

use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};

use crate::domain::{AccountError, DomainError};
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
    /// The request was based on something that has changed since.
    #[error("{0}")]
    Conflict(String),
    /// Too many attempts from one address; try again later.
    #[error("{0}")]
    TooManyRequests(String),
    /// The server is making as many long pages as it makes at once; the
    /// client may try again in a moment.
    #[error("{0}")]
    Busy(String),
    /// The request's body is over a limit the message names.
    #[error("{0}")]
    TooLarge(String),
    /// The request's body did not arrive within its deadline.
    #[error("{0}")]
    TimedOut(String),
    /// The address exists but does not take this method; `allow` lists
    /// those it takes, for the `Allow` header.
    #[error("{message}")]
    MethodNotAllowed {
        allow: &'static str,
        message: String,
    },
    /// The page needs a logged-in cook: answered with a redirect to the
    /// login page, which comes back to `next`.
    #[error("log in to see this page")]
    LogIn { next: String },
    /// The form was sent before and saved then (`DomainError::AlreadySaved`):
    /// answered as its first send was, with a redirect to `to`.
    #[error("saved already, at {to}")]
    SavedBefore { to: String },
    /// A request from another site whose signature is missing, does not
    /// verify, or is by a key that could not be had.
    #[error("{0}")]
    Unauthorized(String),
    /// The request is not allowed: a form from elsewhere, a missing or
    /// wrong form token, another cook's recipe.
    #[error("{0}")]
    Forbidden(String),
    /// Something failed that the request could not help: the store, or
    /// data that breaks the domain's rules. The error keeps its sources,
    /// which go to the log, not the page.
    #[error("{0}")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync + 'static>),
}

/// A write the log's database could not take: nothing was written.
const NOT_SAVED: &str =
    "The site cannot save changes just now; nothing was saved. Try again in a moment.";

/// A write sent to the log's database, which then could not be asked
/// whether it kept it.
const MAYBE_SAVED: &str = "The site could not tell whether your change was saved. Send it again in a moment: a change sent twice from one form is saved once.";

/// A search the index could not answer (its files, or tantivy's error).
const NO_SEARCH: &str =
    "Search is not available just now; the site's pages are. Try again in a moment.";

/// A read of the log's database (a session, a picture) that it did not
/// answer.
pub(super) const UNREACHED: &str = "The site cannot reach its database just now: pages already on this server are still shown, and changes wait. Try again in a moment.";

impl From<AccountError> for WebError {
    fn from(error: AccountError) -> WebError {
        match error {
            AccountError::Domain(error) => error.into(),
            other => WebError::Internal(Box::new(other)),
        }
    }
}

impl From<DomainError> for WebError {
    fn from(error: DomainError) -> WebError {
        match error {
            DomainError::NoSuchRecipe(_)
            | DomainError::NoSuchVersion { .. }
            | DomainError::NoParent(_)
            | DomainError::NoSuchSuggestion { .. }
            | DomainError::NoOffer(_)
            | DomainError::NoSuchCook(_)
            | DomainError::BadSlug(_) => WebError::NotFound(error.to_string()),
            DomainError::BadCursor(_)
            | DomainError::Content(_)
            | DomainError::BadPicture(_)
            | DomainError::Scale(_)
            | DomainError::NoSuchPicture(_) => WebError::BadRequest(error.to_string()),
            DomainError::Unresolved(_) => WebError::BadRequest(error.to_string()),
            DomainError::SlugTaken(_)
            | DomainError::SlugReserved(_)
            | DomainError::UpToDate { .. }
            | DomainError::SuggestionClosed { .. }
            | DomainError::AlreadySuggested { .. }
            | DomainError::DeclinedAlready { .. }
            | DomainError::TakenInPart { .. }
            | DomainError::AgreedMeanwhile { .. }
            | DomainError::MergeMoved { .. } => WebError::Conflict(error.to_string()),
            DomainError::NotAuthor { .. } | DomainError::NotSuggester { .. } => {
                WebError::Forbidden(error.to_string())
            }
            // A 503, which a browser or a proxy asks again: the request is
            // fine, the site is not yet. What the index or PostgreSQL said
            // (a path, an address, their own words) is for the operator:
            // it goes to the log, and the page says what it means for the
            // reader.
            DomainError::SearchBuilding { .. } => {
                WebError::Busy(super::form_handling::sentence(&error.to_string()))
            }
            DomainError::SearchUnavailable(ref why) => {
                tracing::warn!(error = %why, "a search failed");
                WebError::Busy(NO_SEARCH.to_owned())
            }
            // The log's database out of reach, or silent. Logged once a
            // request while it is away, so at debug: health and the
            // metrics already say so to the operator.
            ref unreached if unreached.is_unavailable() => {
                tracing::debug!(error = %unreached, "the log did not take or answer a request");
                WebError::Busy(
                    match unreached {
                        DomainError::Unavailable(_) => NOT_SAVED,
                        DomainError::OutcomeUnknown(_) => MAYBE_SAVED,
                        // A read of what the log's database keeps
                        // (sessions, pictures) that it did not answer.
                        _ => UNREACHED,
                    }
                    .to_owned(),
                )
            }
            DomainError::AlreadySaved { slug } => WebError::SavedBefore {
                to: views::recipe_path(&slug),
            },
            DomainError::SuggestedBefore { parent, number } => WebError::SavedBefore {
                to: format!("{}/suggestions/{number}", views::recipe_path(&parent)),
            },
            DomainError::Retired { ref slug, .. } => WebError::Gone(format!(
                "{error}. Its history is still at {}/history.",
                views::recipe_path(slug)
            )),
            other => WebError::Internal(Box::new(other)),
        }
    }
}

impl ResponseError for WebError {
    fn status_code(&self) -> StatusCode {
        match self {
            WebError::NotFound(_) => StatusCode::NOT_FOUND,
            WebError::BadRequest(_) => StatusCode::BAD_REQUEST,
            WebError::Gone(_) => StatusCode::GONE,
            WebError::Forbidden(_) => StatusCode::FORBIDDEN,
            WebError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            WebError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            WebError::TimedOut(_) => StatusCode::REQUEST_TIMEOUT,
            WebError::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            WebError::TooManyRequests(_) => StatusCode::TOO_MANY_REQUESTS,
            WebError::Busy(_) => StatusCode::SERVICE_UNAVAILABLE,
            WebError::Conflict(_) => StatusCode::CONFLICT,
            WebError::LogIn { .. } | WebError::SavedBefore { .. } => StatusCode::SEE_OTHER,
            WebError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        if let WebError::LogIn { next } = self {
            let to = format!("/login?next={}", super::form_handling::query_value(next));
            return HttpResponse::SeeOther()
                .insert_header((header::LOCATION, to))
                .insert_header((header::CACHE_CONTROL, "no-store"))
                .finish();
        }
        if let WebError::SavedBefore { to } = self {
            return super::form_handling::see_other(to).finish();
        }
        let (heading, message) = match self {
            WebError::NotFound(m) => ("Not found", m.as_str()),
            WebError::BadRequest(m) => ("Bad request", m.as_str()),
            WebError::Gone(m) => ("Gone", m.as_str()),
            WebError::Forbidden(m) => ("Not allowed", m.as_str()),
            WebError::Unauthorized(m) => ("Not signed", m.as_str()),
            WebError::TooLarge(m) => ("Too large", m.as_str()),
            WebError::TimedOut(m) => ("Too slow", m.as_str()),
            WebError::MethodNotAllowed { message, .. } => ("Not here", message.as_str()),
            WebError::TooManyRequests(m) => ("Too many attempts", m.as_str()),
            WebError::Busy(m) => ("Busy", m.as_str()),
            WebError::Conflict(m) => ("Changed meanwhile", m.as_str()),
            WebError::LogIn { .. } | WebError::SavedBefore { .. } => {
                unreachable!("answered above")
            }
            WebError::Internal(error) => {
                tracing::error!(error = %Chain(error.as_ref()), "request failed");
                (
                    "Something went wrong",
                    "The site could not read its store. Try again in a moment.",
                )
            }
        };
        let mut response = HttpResponse::build(self.status_code());
        match self {
            WebError::TooManyRequests(_) => {
                response.insert_header((header::RETRY_AFTER, "60"));
            }
            WebError::Busy(_) => {
                response.insert_header((header::RETRY_AFTER, "1"));
            }
            WebError::MethodNotAllowed { allow, .. } => {
                response.insert_header((header::ALLOW, *allow));
            }
            _ => {}
        }
        response
            .insert_header((header::CONTENT_TYPE, "text/html; charset=utf-8"))
            .insert_header((header::CACHE_CONTROL, "no-store"))
            .body(views::pages::error(heading, message).into_string())
    }
}

/// An error and each of its sources, `outer: inner: innermost`, for the log.
struct Chain<'a>(&'a (dyn std::error::Error + 'static));

impl std::fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(error) = source {
            write!(f, ": {error}")?;
            source = error.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What PostgreSQL says when it is out of reach: an address, a port.
    const POSTGRES_SAID: &str =
        "error connecting to server: Connection refused (os error 111) at 127.0.0.1:5432";

    async fn page_of(error: DomainError) -> (StatusCode, bool, String) {
        let response = WebError::from(error).error_response();
        let retry = response.headers().contains_key(header::RETRY_AFTER);
        let status = response.status();
        let body = actix_web::body::to_bytes(response.into_body())
            .await
            .unwrap_or_default();
        (status, retry, String::from_utf8_lossy(&body).into_owned())
    }

    #[actix_web::test]
    async fn a_search_index_being_built_says_so_and_how_far_it_is() {
        let (status, retry, body) =
            page_of(DomainError::SearchBuilding { done: 40, of: 100 }).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(retry, "no Retry-After");
        assert!(
            body.contains("The search index is being built (40 of 100 recipes)"),
            "{body}"
        );
        assert!(!body.contains("save"), "{body}");
    }

    #[actix_web::test]
    async fn a_log_out_of_reach_is_a_503_that_says_what_it_means_not_what_postgresql_said() {
        let said = format!("the log is unavailable: {POSTGRES_SAID}");
        for (error, meaning) in [
            (DomainError::Unavailable(said.clone()), "nothing was saved"),
            (
                DomainError::OutcomeUnknown(said.clone()),
                "could not tell whether your change was saved",
            ),
            (DomainError::unreached(&said), "cannot reach its database"),
            (
                DomainError::SearchUnavailable(format!("the search index at /srv/forkful: {said}")),
                "Search is not available just now",
            ),
        ] {
            let shown = format!("{error:?}");
            let (status, retry, body) = page_of(error).await;
            assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{shown}");
            assert!(retry, "{shown}: no Retry-After");
            assert!(body.contains(meaning), "{shown}: {body}");
            for private in [
                "127.0.0.1",
                "5432",
                "Connection refused",
                "os error",
                "/srv",
            ] {
                assert!(!body.contains(private), "{shown} shows {private:?}: {body}");
            }
        }
    }
}
