//! Who is asking: the session cookie read into a `Visitor`, the form token
//! every state-changing form carries, and the checks a POST passes before
//! it may change anything.
//!
//! The session cookie is HttpOnly, SameSite=Lax, and Secure when the site is
//! served over https. A logged-in visitor's form token is derived from the
//! session (`accounts::form_token`); a visitor without a session gets a
//! random one in a cookie of its own (for the sign-up and login forms).
//! Pages carry it masked afresh each time (`Visitor::form_token`). A
//! POST passes only with the right token and, when the browser says where it
//! comes from (`Origin`, `Sec-Fetch-Site`), from this site.

use std::future::{ready, Ready};

use actix_web::body::MessageBody;
use actix_web::cookie::{time::Duration, Cookie, SameSite};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{header, Method};
use actix_web::middleware::Next;
use actix_web::web::{self, Data};
use actix_web::{Error, FromRequest, HttpMessage, HttpRequest, HttpResponseBuilder};

use super::{Site, WebError};
use crate::domain::accounts::{self, SESSION_DAYS};
use crate::domain::{AccountError, Cook};

pub const SESSION_COOKIE: &str = "forkful_session";
pub const FORM_COOKIE: &str = "forkful_form";

/// The cookies' names over https: a browser takes a `__Host-` cookie only
/// if it is Secure, for `/`, with no Domain, from the host itself, so a
/// neighbouring subdomain or a plain-http page cannot plant one that the
/// site would read.
const HOST_SESSION_COOKIE: &str = "__Host-forkful_session";
const HOST_FORM_COOKIE: &str = "__Host-forkful_form";

/// The session cookie's name on `site`.
pub fn session_cookie_name(site: &Site) -> &'static str {
    if site.is_https() {
        HOST_SESSION_COOKIE
    } else {
        SESSION_COOKIE
    }
}

/// The form cookie's name on `site`.
fn form_cookie_name(site: &Site) -> &'static str {
    if site.is_https() {
        HOST_FORM_COOKIE
    } else {
        FORM_COOKIE
    }
}

/// The person making a request.
#[derive(Clone)]
pub struct Visitor {
    pub cook: Option<Cook>,
    session: Option<String>,
    form_token: String,
    /// A new random form token, to be set as a cookie with the response.
    new_form_cookie: bool,
}

impl Visitor {
    /// The visitor, read once per request and kept in its extensions: a
    /// session is checked against the accounts (three reads of PostgreSQL
    /// on a site past one machine), and a request extracts its visitor in
    /// more than one place; a new form token must also be the same one in
    /// the form and in the cookie.
    fn read(req: &HttpRequest) -> Result<Visitor, WebError> {
        if let Some(known) = req.extensions().get::<Visitor>() {
            return Ok(known.clone());
        }
        let visitor = Visitor::read_anew(req)?;
        req.extensions_mut().insert(visitor.clone());
        Ok(visitor)
    }

    /// The cook a request comes from, if it carries a live session. A
    /// request without a session cookie (most, on a site people read) is
    /// answered without a look at the accounts or a new form token.
    pub fn signed_in(req: &HttpRequest) -> Result<Option<Cook>, WebError> {
        let site = req.app_data::<Data<Site>>().expect("the app has its Site");
        if req.cookie(session_cookie_name(site)).is_none() {
            return Ok(None);
        }
        Ok(Visitor::read(req)?.cook)
    }

    fn read_anew(req: &HttpRequest) -> Result<Visitor, WebError> {
        let site = req.app_data::<Data<Site>>().expect("the app has its Site");
        let session = req
            .cookie(session_cookie_name(site))
            .map(|c| c.value().to_owned());
        // Read, not taken: a request whose visitor fails to be read (an
        // error page's header reads it again) must not look it up twice.
        let looked_up = match &session {
            Some(token) => match req.extensions().get::<LookedUp>() {
                Some(LookedUp(found)) => found.clone(),
                None => site.accounts()?.session(token).map_err(Unchecked::from),
            },
            None => Ok(None),
        };
        let cook = match looked_up {
            Ok(cook) => cook,
            // The sessions' keyspace is out of reach and this node has not
            // seen this session lately: a page is shown as to a visitor,
            // a change is refused (503) rather than made by nobody.
            Err(Unchecked::Unreachable) => {
                if !matches!(*req.method(), Method::GET | Method::HEAD) {
                    return Err(WebError::Busy(super::error::UNREACHED.to_owned()));
                }
                tracing::debug!("a session that could not be checked: shown as a visitor");
                None
            }
            Err(Unchecked::Failed(why)) => return Err(WebError::Internal(why.into())),
        };
        let session = session.filter(|_| cook.is_some());
        let (form_token, new_form_cookie) = match (&session, req.cookie(form_cookie_name(site))) {
            (Some(session), _) => (accounts::form_token(session), false),
            (None, Some(cookie)) if cookie.value().len() == 64 => {
                (cookie.value().to_owned(), false)
            }
            (None, _) => (accounts::new_token(), true),
        };
        Ok(Visitor {
            cook,
            session,
            form_token,
            new_form_cookie,
        })
    }

    /// The token a form on this response carries: this visitor's token,
    /// masked with a pad made for this call (`accounts::mask_token`). A
    /// page's bytes are compressed, and a fixed secret beside text an
    /// attacker chooses (`/login?next=...`) would leak through the
    /// compressed length (BREACH); a secret that differs on every response
    /// does not.
    pub fn form_token(&self) -> String {
        accounts::mask_token(&self.form_token)
    }

    /// The session token, if logged in.
    pub fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// The logged-in cook, or a redirect to the login page that comes back
    /// to `here`.
    pub fn cook_or_login(&self, here: &str) -> Result<&Cook, WebError> {
        self.cook.as_ref().ok_or_else(|| WebError::LogIn {
            next: here.to_owned(),
        })
    }

    /// Checks a state-changing request: from this site, with this visitor's
    /// form token. A refusal changes nothing.
    pub fn check_form(&self, req: &HttpRequest, token: &str) -> Result<(), WebError> {
        check_form_token(req, token, &self.form_token)
    }

    /// `check_form`, or, for a visitor with no live session, from this
    /// site with the form token of the ended session whose cookie the
    /// request still carries. A password change ends every session, its
    /// own browser's among them: sent again after its answer (and the new
    /// session's cookie) was lost, the form carries the ended session's
    /// token. The cookie is HttpOnly, so only its browser knows it.
    pub fn check_form_of_ended_session(
        &self,
        req: &HttpRequest,
        token: &str,
    ) -> Result<(), WebError> {
        let checked = self.check_form(req, token);
        let site = req.app_data::<Data<Site>>().expect("the app has its Site");
        match req.cookie(session_cookie_name(site)) {
            Some(ended) if checked.is_err() && self.cook.is_none() => {
                check_form_token(req, token, &accounts::form_token(ended.value()))
            }
            _ => checked,
        }
    }

    /// Sets the form cookie on `response` if this visitor got a new token.
    pub fn keep_form_token(&self, site: &Site, response: &mut HttpResponseBuilder) {
        if self.new_form_cookie {
            response.cookie(cookie(
                site,
                form_cookie_name(site),
                self.form_token.clone(),
                None,
            ));
        }
    }
}

/// A session looked up before the handler ran (`look_up_session`).
struct LookedUp(Result<Option<Cook>, Unchecked>);

/// Why a session could not be checked, kept to be read again.
#[derive(Clone)]
enum Unchecked {
    /// The sessions' keyspace is out of reach (a 503 for a change).
    Unreachable,
    Failed(String),
}

impl From<AccountError> for Unchecked {
    fn from(error: AccountError) -> Unchecked {
        match &error {
            AccountError::Domain(domain) if domain.is_unavailable() => {
                tracing::debug!(%error, "the log's database did not answer a session's lookup");
                Unchecked::Unreachable
            }
            _ => Unchecked::Failed(error.to_string()),
        }
    }
}

/// Looks up the session of a request that carries one, where sessions
/// are kept in the log's database (PostgreSQL), on actix's blocking pool
/// rather than on the worker: a stalled PostgreSQL must hold a thread of
/// that pool, not a worker that serves every other page. A session this
/// node checked lately is answered from memory, without the hop. A store
/// that follows no log reads its own sled, as quick as the hop: there the
/// handler reads it itself.
pub async fn look_up_session(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let site = req
        .app_data::<Data<Site>>()
        .cloned()
        .expect("the app has its Site");
    let token = req
        .cookie(session_cookie_name(&site))
        .map(|cookie| cookie.value().to_owned())
        .filter(|_| site.recipes().keyspaces_kept_elsewhere());
    if let Some(token) = token {
        let found = look_up(site.accounts()?.clone(), token).await?;
        req.extensions_mut()
            .insert(LookedUp(found.map_err(Unchecked::from)));
    }
    next.call(req).await
}

/// How long a page waits for PostgreSQL to check again a session this
/// node checked before: it answers in a millisecond or two when well, and
/// past this the page is answered as the session was last found, while
/// the check goes on and keeps what it finds.
const RECHECK_WAIT: std::time::Duration = std::time::Duration::from_millis(50);

/// The session `token`'s cook: from memory if checked lately; else read
/// off the workers, waiting at most `RECHECK_WAIT` where memory has an
/// answer to fall back on (and not at all while another request checks
/// the same session).
async fn look_up(
    accounts: accounts::Accounts,
    token: String,
) -> Result<Result<Option<Cook>, AccountError>, WebError> {
    if let Some(known) = accounts.known_session(&token) {
        return Ok(Ok(known));
    }
    let blocked = |error: actix_web::error::BlockingError| WebError::Internal(Box::new(error));
    let Some(kept) = accounts.kept_session(&token) else {
        return web::block(move || accounts.session(&token))
            .await
            .map_err(blocked);
    };
    let Some(check) = accounts.claim_check(&token) else {
        return Ok(Ok(kept));
    };
    let checked = web::block(move || {
        let _check = check;
        accounts.session(&token)
    });
    match tokio::time::timeout(RECHECK_WAIT, checked).await {
        Ok(found) => found.map_err(blocked),
        Err(_) => Ok(Ok(kept)),
    }
}

/// Checks a state-changing request: from this site (as far as the
/// browser says where it comes from), with `expected` as its form token.
fn check_form_token(req: &HttpRequest, token: &str, expected: &str) -> Result<(), WebError> {
    let site = req.app_data::<Data<Site>>().expect("the app has its Site");
    let header = |name| req.headers().get(name).and_then(|v| v.to_str().ok());
    if let Some(from) = header(header::HeaderName::from_static("sec-fetch-site")) {
        if !matches!(from, "same-origin" | "none") {
            return Err(elsewhere());
        }
    }
    if let Some(origin) = header(header::ORIGIN) {
        if origin != site.origin() {
            return Err(elsewhere());
        }
    }
    let unmasked = accounts::unmask_token(token).unwrap_or_default();
    if !accounts::tokens_match(&unmasked, expected) {
        return Err(WebError::Forbidden(
            "This form has expired or did not come from this site: nothing was changed. \
             Go back, reload the page and try again."
                .to_owned(),
        ));
    }
    Ok(())
}

fn elsewhere() -> WebError {
    WebError::Forbidden("This form was sent from another site: nothing was changed.".to_owned())
}

/// A cookie of this site: HttpOnly, SameSite=Lax, Secure over https.
pub fn cookie(
    site: &Site,
    name: &'static str,
    value: String,
    days: Option<i64>,
) -> Cookie<'static> {
    let mut builder = Cookie::build(name, value)
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(site.is_https());
    if let Some(days) = days {
        builder = builder.max_age(Duration::days(days));
    }
    builder.finish()
}

/// The session cookie for a new session.
pub fn session_cookie(site: &Site, token: String) -> Cookie<'static> {
    cookie(site, session_cookie_name(site), token, Some(SESSION_DAYS))
}

/// A cookie that removes the session cookie.
pub fn ended_session_cookie(site: &Site) -> Cookie<'static> {
    let mut ended = cookie(site, session_cookie_name(site), String::new(), None);
    ended.make_removal();
    ended
}

impl FromRequest for Visitor {
    type Error = WebError;
    type Future = Ready<Result<Visitor, WebError>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        ready(Visitor::read(req))
    }
}

/// Where to go after logging in: a path on this site, never another site
/// (`//elsewhere.example` and `/\elsewhere` are other sites to a browser).
pub fn safe_next(next: &str) -> &str {
    let local = next.starts_with('/')
        && !next.starts_with("//")
        && !next.starts_with("/\\")
        && !next.chars().any(|c| c.is_control());
    if local {
        next
    } else {
        "/"
    }
}
