//! Read-your-writes across nodes: a cook who just saved something sees it
//! on the next page, whichever node answers.
//!
//! On a site whose store follows a log, every write that succeeds answers
//! with a short-lived cookie holding the basis the writing node showed
//! after it (its own write included). A node asked for a page by a browser
//! with that cookie waits, up to `WAIT`, until it shows that basis too;
//! past that it answers 503 with Retry-After rather than an older page.
//! One node alone, with no log, never needs it and sets no cookie.

use std::time::{Duration, Instant};

use actix_web::body::{EitherBody, MessageBody};
use actix_web::cookie::{Cookie, SameSite};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::middleware::Next;
use actix_web::{web, Error, ResponseError};

use super::{Site, WebError};

/// The cookie: the basis a cook's last write was shown at.
pub const SEEN_COOKIE: &str = "forkful_seen";

/// How long a page waits for this node to show a cook's last write.
pub const WAIT: Duration = Duration::from_secs(2);

/// How long the cookie lasts: far longer than nodes take to follow the
/// log, and short enough that it is gone before it means anything else.
const SEEN_FOR: Duration = Duration::from_secs(60);

/// How often a waiting page looks again.
const LOOK_EVERY: Duration = Duration::from_millis(5);

/// The middleware: waits for a reader's last write, and marks a writer's.
pub async fn read_your_writes<B: MessageBody>(
    req: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<EitherBody<B>>, Error> {
    let Some(site) = req
        .app_data::<web::Data<Site>>()
        .cloned()
        .filter(|site| site.recipes().others_write())
    else {
        return next
            .call(req)
            .await
            .map(ServiceResponse::map_into_left_body);
    };
    let is_write = req.method() == Method::POST;
    if !is_write {
        if let Some(seen) = req.cookie(SEEN_COOKIE).and_then(|c| c.value().parse().ok()) {
            if let Err(refused) = wait_to_show(&site, seen).await {
                return Ok(req
                    .into_response(refused.error_response())
                    .map_into_right_body());
            }
        }
    }
    let mut response = next.call(req).await?;
    let status = response.status();
    if is_write && (status.is_success() || status.is_redirection()) {
        let shown = site.recipes().snapshot().basis().get();
        let cookie = Cookie::build(SEEN_COOKIE, shown.to_string())
            .path("/")
            .max_age(actix_web::cookie::time::Duration::seconds(
                SEEN_FOR.as_secs() as i64,
            ))
            .http_only(true)
            .same_site(SameSite::Lax)
            .secure(site.is_https())
            .finish();
        response.response_mut().add_cookie(&cookie)?;
    }
    Ok(response.map_into_left_body())
}

/// Waits until this node shows basis `seen`, or refuses once `WAIT` passes.
async fn wait_to_show(site: &Site, seen: u64) -> Result<(), WebError> {
    let started = Instant::now();
    while site.recipes().snapshot().basis().get() < seen {
        if started.elapsed() >= WAIT {
            return Err(WebError::Busy(
                "This page is not yet up to date with your last change. Try again in a moment."
                    .into(),
            ));
        }
        actix_web::rt::time::sleep(LOOK_EVERY).await;
    }
    Ok(())
}
