//! What wraps every response: security headers and the request log.

use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::{DefaultHeaders, Next};
use actix_web::Error;

/// Everything a page loads comes from the site itself; nothing inline runs
/// (the JSON-LD `<script>` is data, which CSP does not execute or block).
/// The one script may fetch from the site (the recipe form's preview).
/// Images: the site's own, and a recipe's picture, which may be an https
/// address elsewhere (no page draws a `data:` image).
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'self'; \
     img-src 'self' https:; script-src 'self'; connect-src 'self'; \
     base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The browser features no page uses, turned off for the page and anything
/// it might embed.
pub const PERMISSIONS_POLICY: &str = "accelerometer=(), camera=(), geolocation=(), \
     gyroscope=(), magnetometer=(), microphone=(), payment=(), usb=(), \
     browsing-topics=()";

/// Once a browser has seen the site over https, two years of https only.
pub const STRICT_TRANSPORT_SECURITY: &str = "max-age=63072000";

/// The security headers on every response, error pages and assets included;
/// HSTS only for a site served over https (over http a browser ignores it,
/// and a development server on localhost must not pin itself to https).
pub fn security_headers(https: bool) -> DefaultHeaders {
    let headers = DefaultHeaders::new()
        .add(("Content-Security-Policy", CONTENT_SECURITY_POLICY))
        .add(("Permissions-Policy", PERMISSIONS_POLICY))
        .add(("X-Content-Type-Options", "nosniff"))
        .add(("X-Frame-Options", "DENY"))
        .add(("Referrer-Policy", "strict-origin-when-cross-origin"))
        .add(("Cross-Origin-Opener-Policy", "same-origin"));
    if https {
        headers.add(("Strict-Transport-Security", STRICT_TRANSPORT_SECURITY))
    } else {
        headers
    }
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
