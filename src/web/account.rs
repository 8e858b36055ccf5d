//! Signing up, logging in and out, and changing a password.
//!
//! Every POST is checked (`Visitor::check_form`) before it changes anything;
//! a form with a mistake comes back with what was typed (never a password)
//! and the error next to its field; a success is a 303 to the page it led to.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;

use super::form_handling::{attempt_of, private_page, see_other, sentence};
use super::session::{ended_session_cookie, safe_next, session_cookie, Visitor};
use super::{Site, WebError};
use crate::domain::{pages, AccountError, Cook, CookSuggestions, NewSession, Slug};
use crate::views::account::{self, SignUpValues};
use crate::views::form_fields::FieldErrors;

/// Every field defaults to empty, so that a form without its token is
/// refused for that (403) before anything else is read.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct SignUpForm {
    csrf: String,
    handle: String,
    name: String,
    password: String,
}

pub(super) async fn sign_up_page(site: web::Data<Site>, visitor: Visitor) -> HttpResponse {
    let page = account::sign_up(
        &SignUpValues::default(),
        &FieldErrors::new(),
        &visitor.form_token(),
    );
    private_page(&site, &visitor, StatusCode::OK, page)
}

pub(super) async fn sign_up(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    form: web::Form<SignUpForm>,
) -> Result<HttpResponse, WebError> {
    visitor.check_form(&req, &form.csrf)?;
    // A sign-up guesses no one's password: counted by address alone.
    site.attempts().attempt(site.client_address(&req), None)?;
    let form = form.into_inner();
    let values = SignUpValues {
        handle: form.handle.trim().to_owned(),
        name: form.name.clone(),
    };
    let refused = |status, errors| {
        let page = account::sign_up(&values, &errors, &visitor.form_token());
        Ok(private_page(&site, &visitor, status, page))
    };
    let Ok(handle) = Slug::parse(&values.handle) else {
        let why = "A handle is letters a-z, digits and -, starting with a letter or digit.";
        return refused(
            StatusCode::UNPROCESSABLE_ENTITY,
            FieldErrors::one("handle", why),
        );
    };
    let signed_up = new_account(&site, &req, handle, form).await?;
    let session = match signed_up {
        Ok(session) => session,
        Err(error) => return account_refusal(error).map_or_else(Err, |(s, e)| refused(s, e)),
    };
    site.attempts()
        .logged_in(site.client_address(&req), &values.handle);
    Ok(see_other("/account")
        .cookie(session_cookie(&site, session.token))
        .finish())
}

/// The account `form` asks for, made as `handle` off the workers (a
/// password is hashed), and its first session.
async fn new_account(
    site: &Site,
    req: &HttpRequest,
    handle: Slug,
    form: SignUpForm,
) -> Result<Result<NewSession, AccountError>, WebError> {
    let accounts = site.accounts()?.clone();
    // Sent again (its first answer lost), the same form finds the account
    // it made rather than "the handle is taken".
    let attempt = attempt_of(
        req,
        &form.csrf,
        &[handle.as_str().as_bytes(), form.name.as_bytes()],
    );
    let (name, password) = (form.name, form.password);
    site.password_work()
        .run(move || {
            accounts.sign_up_once(&handle, &name, &password, Some(&attempt))?;
            accounts.new_session(&handle)
        })
        .await
}

/// A refused account form: its status and the error next to its field; an
/// error of the store stays an error.
fn account_refusal(error: AccountError) -> Result<(StatusCode, FieldErrors), WebError> {
    let message = error.to_string();
    match error {
        AccountError::HandleTaken(handle) => Ok((
            StatusCode::CONFLICT,
            FieldErrors::one(
                "handle",
                format!("The handle {handle} is taken: choose another."),
            ),
        )),
        AccountError::Invalid { field, why } => Ok((
            StatusCode::UNPROCESSABLE_ENTITY,
            FieldErrors::one(field, sentence(&why)),
        )),
        AccountError::BadCredentials | AccountError::Disabled(_) => Ok((
            StatusCode::UNAUTHORIZED,
            FieldErrors::one("", sentence(&message)),
        )),
        other => Err(other.into()),
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct NextParams {
    #[serde(default)]
    next: String,
}

pub(super) async fn log_in_page(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    params: web::Query<NextParams>,
) -> HttpResponse {
    let came_from = match params.next.is_empty() {
        true => referring_page(&site, &req),
        false => None,
    };
    let next = safe_next(came_from.as_deref().unwrap_or(&params.next));
    let page = account::log_in("", next, &FieldErrors::new(), &visitor.form_token());
    private_page(&site, &visitor, StatusCode::OK, page)
}

/// The page of this site the browser came from (its `Referer`), as a path
/// and query: where the header's "Log in" link goes back to, the same link
/// on every page.
fn referring_page(site: &Site, req: &HttpRequest) -> Option<String> {
    let referer = req.headers().get(actix_web::http::header::REFERER)?;
    let rest = referer.to_str().ok()?.strip_prefix(site.origin())?;
    // `https://site.example.evil` starts with the origin too.
    let page = rest.starts_with('/').then_some(rest)?;
    let page = page.split('#').next().unwrap_or(page);
    // Back to the account pages is no going back.
    let useless = ["/login", "/signup", "/logout"]
        .iter()
        .any(|p| page == *p || page.starts_with(&format!("{p}?")));
    (!useless).then(|| page.to_owned())
}

/// Every field defaults to empty, so that a form without its token is
/// refused for that (403) before anything else is read.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct LogInForm {
    csrf: String,
    handle: String,
    password: String,
    #[serde(default)]
    next: String,
}

pub(super) async fn log_in(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    form: web::Form<LogInForm>,
) -> Result<HttpResponse, WebError> {
    visitor.check_form(&req, &form.csrf)?;
    let form = form.into_inner();
    let next = safe_next(&form.next);
    let handle = Slug::parse(form.handle.trim());
    let client = site.client_address(&req);
    site.attempts()
        .attempt(client, handle.as_ref().ok().map(Slug::as_str))?;
    let tried = handle.as_ref().map(|handle| handle.to_string()).ok();
    let outcome = match handle {
        Ok(handle) => {
            let accounts = site.accounts()?.clone();
            let password = form.password;
            site.password_work()
                .run(move || accounts.log_in(&handle, &password))
                .await?
        }
        // Said as a wrong password is: no hint of which handles exist.
        Err(_) => Err(AccountError::BadCredentials),
    };
    match outcome {
        Ok((_, session)) => {
            site.attempts()
                .logged_in(client, tried.as_deref().unwrap_or_default());
            Ok(see_other(next)
                .cookie(session_cookie(&site, session.token))
                .finish())
        }
        Err(error) => {
            let (status, errors) = account_refusal(error)?;
            let page = account::log_in(form.handle.trim(), next, &errors, &visitor.form_token());
            Ok(private_page(&site, &visitor, status, page))
        }
    }
}

/// Every field defaults to empty, so that a form without its token is
/// refused for that (403) before anything else is read.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct TokenForm {
    csrf: String,
}

pub(super) async fn log_out(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    form: web::Form<TokenForm>,
) -> Result<HttpResponse, WebError> {
    visitor.check_form(&req, &form.csrf)?;
    if let Some(session) = visitor.session() {
        let (accounts, session) = (site.accounts()?.clone(), session.to_owned());
        let ended = super::blocking::off_workers(&site, move || accounts.log_out(&session)).await?;
        if let Err(error) = ended {
            // Not ended everywhere (the database out of reach), but in this
            // browser and on this node: the cookie goes all the same.
            let mut refused = actix_web::ResponseError::error_response(&WebError::from(error));
            let _ = refused.add_cookie(&ended_session_cookie(&site));
            return Ok(refused);
        }
    }
    Ok(see_other("/").cookie(ended_session_cookie(&site)).finish())
}

pub(super) async fn log_out_everywhere(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    form: web::Form<TokenForm>,
) -> Result<HttpResponse, WebError> {
    visitor.check_form(&req, &form.csrf)?;
    let cook = visitor.cook_or_login("/account")?;
    let (accounts, handle) = (site.accounts()?.clone(), cook.handle.clone());
    super::blocking::off_workers(&site, move || accounts.log_out_everywhere(&handle)).await??;
    Ok(see_other("/").cookie(ended_session_cookie(&site)).finish())
}

/// The suggestions the account page lists, read on the newest value.
fn cook_suggestions(site: &Site, cook: &Cook) -> Result<CookSuggestions, WebError> {
    Ok(pages::cook_suggestions(&site.snapshot(), &cook.handle)?)
}

pub(super) async fn account_page(
    site: web::Data<Site>,
    visitor: Visitor,
) -> Result<HttpResponse, WebError> {
    let cook = visitor.cook_or_login("/account")?;
    let suggestions = cook_suggestions(&site, cook)?;
    let page = account::account(
        cook,
        &suggestions,
        None,
        &FieldErrors::new(),
        &visitor.form_token(),
    );
    Ok(private_page(&site, &visitor, StatusCode::OK, page))
}

/// Every field defaults to empty, so that a form without its token is
/// refused for that (403) before anything else is read.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct PasswordForm {
    csrf: String,
    /// Whose password it is (hidden, for password managers). The cook is
    /// read from the session; this only when the session has ended
    /// (`password_change_sent_again`).
    username: String,
    current: String,
    new: String,
}

pub(super) async fn change_password(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    form: web::Form<PasswordForm>,
) -> Result<HttpResponse, WebError> {
    let Some(cook) = &visitor.cook else {
        return password_change_sent_again(site, req, visitor, form.into_inner()).await;
    };
    visitor.check_form(&req, &form.csrf)?;
    // A stolen session cookie guesses the current password as slowly as a
    // login does.
    site.attempts()
        .attempt(site.client_address(&req), Some(cook.handle.as_str()))?;
    let accounts = site.accounts()?.clone();
    let form = form.into_inner();
    let handle = cook.handle.clone();
    // Sent again (its first answer lost), the form finds the password it
    // set rather than "the current password is wrong". Never the password
    // in it: an attempt is a fast hash.
    let attempt = attempt_of(&req, &form.csrf, &[handle.as_str().as_bytes()]);
    let changed = site
        .password_work()
        .run(move || {
            accounts.change_password_once(&handle, &form.current, &form.new, Some(&attempt))
        })
        .await?;
    match changed {
        Ok(session) => Ok(see_other("/account")
            .cookie(session_cookie(&site, session.token))
            .finish()),
        Err(error) => password_refused(&site, &visitor, cook, error),
    }
}

/// The account page again, saying why the password was not changed: the
/// form's own error goes next to the current password.
fn password_refused(
    site: &Site,
    visitor: &Visitor,
    cook: &Cook,
    error: AccountError,
) -> Result<HttpResponse, WebError> {
    let (status, mut errors) = account_refusal(error)?;
    if let Some(message) = errors.get("").map(str::to_owned) {
        errors = FieldErrors::one("current", message);
    }
    let suggestions = cook_suggestions(site, cook)?;
    let page = account::account(cook, &suggestions, None, &errors, &visitor.form_token());
    Ok(private_page(site, visitor, status, page))
}

/// A password form from a browser with no live session: most often its
/// own first send ended it, setting the password and ending every session,
/// and the answer with the new session's cookie was lost. If this very
/// form (its attempt) set the password stored now, to what it says, the
/// browser gets a new session and the answer the first send would have
/// had; else it is a visitor, sent to log in.
async fn password_change_sent_again(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    form: PasswordForm,
) -> Result<HttpResponse, WebError> {
    visitor.check_form_of_ended_session(&req, &form.csrf)?;
    let log_in = || WebError::LogIn {
        next: "/account".to_owned(),
    };
    let Ok(handle) = Slug::parse(&form.username) else {
        return Err(log_in());
    };
    // Each send is a guess at the new password, counted as a login's is.
    site.attempts()
        .attempt(site.client_address(&req), Some(handle.as_str()))?;
    let attempt = attempt_of(&req, &form.csrf, &[handle.as_str().as_bytes()]);
    let accounts = site.accounts()?.clone();
    let new = form.new;
    let finished = site
        .password_work()
        .run(move || accounts.password_change_sent_again(&handle, &new, &attempt))
        .await?;
    match finished {
        Ok(session) => Ok(see_other("/account")
            .cookie(session_cookie(&site, session.token))
            .finish()),
        Err(AccountError::BadCredentials | AccountError::Disabled(_)) => Err(log_in()),
        Err(error) => Err(error.into()),
    }
}
