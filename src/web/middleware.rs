//! What wraps every response: security headers and the request log.

use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::{DefaultHeaders, Next};
use actix_web::Error;

/// Everything a page loads comes from the site itself; nothing inline runs
/// (the JSON-LD `<script>` is data, which CSP does not execute or block).
/// The one script may fetch from the site (the recipe form's preview).
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'self'; \
     img-src 'self' https: data:; script-src 'self'; connect-src 'self'; \
     base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The security headers on every response, error pages and assets included.
pub fn security_headers() -> DefaultHeaders {
    DefaultHeaders::new()
        .add(("Content-Security-Policy", CONTENT_SECURITY_POLICY))
        .add(("X-Content-Type-Options", "nosniff"))
        .add(("X-Frame-Options", "DENY"))
        .add(("Referrer-Policy", "strict-origin-when-cross-origin"))
        .add(("Cross-Origin-Opener-Policy", "same-origin"))
}

/// One structured log line per request: method, path, status, time.
pub async fn log_request(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let started = Instant::now();
    let method = req.method().clone();
    let path = req.path().to_owned();
    let response = next.call(req).await?;
    tracing::info!(
        target: "forkful::request",
        %method,
        %path,
        status = response.status().as_u16(),
        micros = started.elapsed().as_micros() as u64,
        "request"
    );
    Ok(response)
}
