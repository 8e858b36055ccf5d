//! What wraps every request and response: security headers, the request
//! log, a deadline on request bodies, and compression of what no handler
//! compressed.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use actix_web::body::{BodySize, BoxBody, EitherBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::http::header::HeaderValue;
use actix_web::http::{header, ConnectionType};
use actix_web::middleware::{DefaultHeaders, Next};
use actix_web::rt::time::Sleep;
use actix_web::web::Bytes;
use actix_web::{Error, HttpMessage};
use futures_util::{Stream, StreamExt};

use super::metrics;
use super::page_cache::Encoding;

/// Everything a page loads comes from the site itself; nothing inline runs
/// (the JSON-LD `<script>` is data, which CSP does not execute or block).
/// The one script may fetch from the site (the recipe form's preview).
/// Images: the site's own only. A picture from elsewhere is fetched once
/// and stored (`web::recipe_writes`, `web::recipe_import`), and Markdown
/// draws no image from elsewhere, so no reader's browser asks another
/// site for one, which would tell that site who reads what (no page draws
/// a `data:` image either).
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'self'; \
     img-src 'self'; script-src 'self'; connect-src 'self'; \
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
    let response = next.call(req).await?;
    // The request comes back with its answer: its method and path are
    // read there, not copied before for every request.
    let request = response.request();
    // The pattern, not the path: one series a route, whatever the slugs.
    let route = request
        .app_data::<metrics::Route>()
        .copied()
        .unwrap_or(metrics::UNMATCHED);
    metrics::request(
        route,
        request.method(),
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    tracing::info!(
        target: "forkful::request",
        method = %request.method(),
        path = %request.path(),
        status = response.status().as_u16(),
        micros = started.elapsed().as_micros() as u64,
        "request"
    );
    Ok(response)
}

/// Holds every request body to `deadline` from when its head arrived: a
/// client that trickles a form a byte at a time gets a 408 page once the
/// deadline passes, instead of holding a connection and a half-read body
/// for as long as it likes. actix bounds only a connection's first request
/// head (`client_request_timeout`); nothing in it bounds a body.
///
/// An answer sent before its body was read to the end (a 408, a 413, any
/// refusal) closes the connection. actix would otherwise go on reading and
/// dropping the rest of a chunked body, with no timer, for as long as the
/// client sends it; it closes instead when the body is still held while
/// the answer goes out, so the answer holds it.
pub async fn body_deadline(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
    deadline: Duration,
) -> Result<ServiceResponse<EitherBody<impl MessageBody, HoldingBody>>, Error> {
    let has_body = req.headers().contains_key(header::CONTENT_LENGTH)
        || req.headers().contains_key(header::TRANSFER_ENCODING);
    if !has_body {
        // Nothing to wait for (every GET): no timer, no boxing.
        return Ok(next.call(req).await?.map_into_left_body());
    }
    let body = Rc::new(RefCell::new(req.take_payload()));
    let ended = Rc::new(Cell::new(false));
    let timed: Pin<Box<dyn Stream<Item = Result<Bytes, PayloadError>>>> = Box::pin(DeadlineBody {
        body: Rc::clone(&body),
        deadline: Box::pin(actix_web::rt::time::sleep(deadline)),
        ended: Rc::clone(&ended),
        failed: false,
    });
    req.set_payload(Payload::from(timed));
    let mut response = next.call(req).await?;
    if ended.get() {
        return Ok(response.map_into_left_body());
    }
    response
        .response_mut()
        .head_mut()
        .set_connection_type(ConnectionType::Close);
    Ok(response.map_body(|_, answer| {
        EitherBody::right(HoldingBody {
            answer: answer.boxed(),
            _unread: body,
        })
    }))
}

/// A body stream that fails with `TimedOut` once its deadline passes, and
/// ends after that.
struct DeadlineBody {
    body: Rc<RefCell<Payload>>,
    deadline: Pin<Box<Sleep>>,
    /// Set when the body was read to its end.
    ended: Rc<Cell<bool>>,
    failed: bool,
}

impl Stream for DeadlineBody {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.failed {
            return Poll::Ready(None);
        }
        let next = self.body.borrow_mut().poll_next_unpin(cx);
        match next {
            Poll::Ready(None) => {
                self.ended.set(true);
                return Poll::Ready(None);
            }
            Poll::Ready(Some(item)) => return Poll::Ready(Some(item)),
            Poll::Pending => {}
        }
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => {
                self.failed = true;
                Poll::Ready(Some(Err(PayloadError::Io(io::Error::new(
                    io::ErrorKind::TimedOut,
                    BODY_TIMED_OUT,
                )))))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// An answer that keeps the request's unread body until it is sent, so
/// that actix closes the connection after it rather than drain the body.
pub struct HoldingBody {
    answer: BoxBody,
    _unread: Rc<RefCell<Payload>>,
}

impl MessageBody for HoldingBody {
    type Error = Box<dyn std::error::Error>;

    fn size(&self) -> BodySize {
        self.answer.size()
    }

    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        Pin::new(&mut self.answer).poll_next(cx)
    }
}

/// What a body that missed its deadline fails with.
pub const BODY_TIMED_OUT: &str = "the request's body did not arrive in time";

/// Whether a body failed because it missed its deadline.
pub fn body_timed_out(error: &PayloadError) -> bool {
    matches!(error, PayloadError::Io(e) if e.kind() == io::ErrorKind::TimedOut)
}

/// Compresses a response no handler compressed (error pages, forms,
/// `/metrics`, JSON answered fresh) in the coding `Encoding::negotiate`
/// picks, with actix's encoder. Pages and assets come compressed already
/// (`respond`, `pages::asset`) and pass untouched, before anything of the
/// request is read.
///
/// In place of actix's `Compress`, which parsed and ranked the request's
/// Accept-Encoding and parsed the response's media type for every
/// response, those already compressed included: 5.7% of the server's CPU
/// on a kept recipe page under wrk (perf, AMD EPYC VM, a31ff0d; see
/// "Kept pages sent with less work" in docs/journal/33-close-to-the-limit.md). One
/// negotiation for both now, and one preference: brotli, then gzip.
pub async fn compress_unencoded<B: MessageBody + 'static>(
    req: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let response = next.call(req).await?;
    if response.headers().contains_key(header::CONTENT_ENCODING)
        || !worth_compressing(response.headers().get(header::CONTENT_TYPE))
    {
        return Ok(response.map_into_left_body());
    }
    let coding = Encoding::negotiate(response.request());
    if coding == Encoding::Identity {
        return Ok(response.map_into_left_body());
    }
    let coding = coding.content_encoding();
    Ok(response
        .map_body(|head, body| actix_http::encoding::Encoder::response(coding, head, body))
        .map_into_right_body())
}

/// Whether a body of this media type is worth compressing: not pictures
/// (their formats are compressed already), except SVG, which is text; not
/// audio or video.
fn worth_compressing(content_type: Option<&HeaderValue>) -> bool {
    let Some(media) = content_type.map(HeaderValue::as_bytes) else {
        return true;
    };
    let starts = |prefix: &str| {
        media
            .get(..prefix.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(prefix.as_bytes()))
    };
    !(starts("image/") && !starts("image/svg") || starts("audio/") || starts("video/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pictures_audio_and_video_are_sent_as_they_are() {
        let worth = |media: &str| worth_compressing(Some(&HeaderValue::from_str(media).unwrap()));
        assert!(worth_compressing(None), "no media type: compressed");
        for text in [
            "text/html; charset=utf-8",
            "application/json",
            "image/svg+xml",
            "IMAGE/SVG+XML",
        ] {
            assert!(worth(text), "{text}");
        }
        for packed in ["image/jpeg", "Image/WebP", "audio/ogg", "video/mp4"] {
            assert!(!worth(packed), "{packed}");
        }
    }
}
