//! Forks that talk back, in the browser: a fork's cook brings in the
//! parent's changes (`/recipes/{slug}/bring-in`) or suggests the fork's
//! own to the parent (`/recipes/{slug}/suggest`), whose author reviews
//! them (`/recipes/{slug}/suggestions/{n}`).
//!
//! The page shows the merge as the fork's newest version and the parent's
//! newest make it; the form carries both versions, so what is saved is
//! that merge, decided again in the writer on the latest value: if the
//! fork moved on, the answer is 409 with the merge made again, and the
//! cook chooses again.

use std::collections::{BTreeMap, HashMap};

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};

use super::form_handling::{attempt_of, private_page, see_other, sentence};
use super::recipes::parse_slug;
use super::session::Visitor;
use super::{Site, WebError};
use crate::domain::merge::Choice;
use crate::domain::{pages, Change, Cook, DomainError, Slug, VersionNumber, MAX_MESSAGE, MAX_NOTE};
use crate::views::form_fields::FieldErrors;
use crate::views::merges::{self, Reviewer, MINE, THEIRS};
use crate::views::recipe_path;

fn bring_in_path(slug: &Slug) -> String {
    format!("{}/bring-in", recipe_path(slug.as_str()))
}

/// The bring-in page for the fork at `slug` as it is now, with `status`.
fn bring_in_form(
    site: &Site,
    visitor: &Visitor,
    cook: &Cook,
    slug: &Slug,
    status: StatusCode,
    note: Option<&str>,
    errors: &FieldErrors,
) -> Result<HttpResponse, WebError> {
    let snapshot = site.snapshot();
    let model = pages::bring_in_show(&snapshot, slug, None)?;
    if model.fork.author.as_deref() != Some(cook.handle.as_str()) {
        return Err(DomainError::NotAuthor {
            slug: slug.to_string(),
            title: model.fork.content.title,
        }
        .into());
    }
    let note = note.map_or_else(|| merges::default_note(&model), str::to_owned);
    let page = merges::bring_in_page(&model, &note, &visitor.form_token(), errors);
    Ok(private_page(site, visitor, status, page))
}

/// `GET /recipes/{slug}/bring-in`: the fork's author's form.
pub async fn bring_in_page(
    site: web::Data<Site>,
    visitor: Visitor,
    slug: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let slug = parse_slug(&slug)?;
    let cook = visitor.cook_or_login(&bring_in_path(&slug))?;
    bring_in_form(
        &site,
        &visitor,
        cook,
        &slug,
        StatusCode::OK,
        None,
        &FieldErrors::new(),
    )
}

/// The choices a form sent, `choice-0` to `choice-{n-1}` in order; a
/// missing number, or a value that is neither side, is refused.
fn choices(form: &HashMap<String, String>) -> Result<Vec<Choice>, WebError> {
    let sent = form.keys().filter(|k| k.starts_with("choice-")).count();
    (0..sent)
        .map(
            |n| match form.get(&merges::choice_name(n)).map(String::as_str) {
                Some(MINE) => Ok(Choice::Mine),
                Some(THEIRS) => Ok(Choice::Theirs),
                Some(other) => Err(WebError::BadRequest(format!(
                    "{other:?} is not a side to take: {MINE} or {THEIRS}"
                ))),
                None => Err(WebError::BadRequest(format!(
                    "the form's choices skip number {n}"
                ))),
            },
        )
        .collect()
}

fn version_field(form: &HashMap<String, String>, name: &str) -> Result<VersionNumber, WebError> {
    form.get(name)
        .and_then(|v| v.trim().parse::<u64>().ok())
        .and_then(VersionNumber::new)
        .ok_or_else(|| WebError::BadRequest(format!("the form's {name} is not a version number")))
}

/// `POST /recipes/{slug}/bring-in`: saves the merge the form showed, with
/// its conflicts settled as chosen.
pub async fn bring_in(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    slug: web::Path<String>,
    form: web::Form<HashMap<String, String>>,
) -> Result<HttpResponse, WebError> {
    let csrf = form.get("csrf").map(String::as_str).unwrap_or("");
    visitor.check_form(&req, csrf)?;
    let slug = parse_slug(&slug)?;
    let cook = visitor.cook_or_login(&bring_in_path(&slug))?;
    let based_on = version_field(&form, "based_on")?;
    let upto = version_field(&form, "upto")?;
    let choices = choices(&form)?;
    let note = form.get("note").map(String::as_str).unwrap_or("").trim();
    if note.len() > MAX_NOTE {
        return Err(WebError::BadRequest(format!(
            "the note is longer than {MAX_NOTE} bytes"
        )));
    }
    let again = |status, why: String| {
        bring_in_form(
            &site,
            &visitor,
            cook,
            &slug,
            status,
            Some(note),
            &FieldErrors::one("", why),
        )
    };
    if note.is_empty() {
        return again(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Say what this version does: history lists it.".to_owned(),
        );
    }
    // The form's fields in their name's order: what it said.
    let said = serde_json::to_vec(&form.iter().collect::<BTreeMap<_, _>>()).unwrap_or_default();
    let change = Change::by(cook.handle.as_str(), note).once(attempt_of(&req, csrf, &[&said]));
    let written = site
        .recipes()
        .bring_in(&slug, based_on, upto, &choices, &change);
    match written {
        Ok(_) => Ok(see_other(&recipe_path(slug.as_str())).finish()),
        Err(DomainError::Stale { newest, .. }) => {
            // Refused on the latest value, which may not be published yet.
            site.recipes().wait_published()?;
            again(
                StatusCode::CONFLICT,
                format!(
                    "Your recipe changed since this page was made (it is at version {newest} now): here are the changes again, merged onto it."
                ),
            )
        }
        Err(unresolved @ DomainError::Unresolved { .. }) => again(
            StatusCode::UNPROCESSABLE_ENTITY,
            sentence(&unresolved.to_string()),
        ),
        Err(e) => Err(e.into()),
    }
}

fn suggest_path(slug: &Slug) -> String {
    format!("{}/suggest", recipe_path(slug.as_str()))
}

/// The suggest form of the fork at `slug`, for its cook.
fn suggest_form(
    site: &Site,
    visitor: &Visitor,
    cook: &Cook,
    slug: &Slug,
    status: StatusCode,
    message: &str,
    errors: &FieldErrors,
) -> Result<HttpResponse, WebError> {
    let model = pages::suggest_show(&site.snapshot(), slug)?;
    if model.fork.author.as_deref() != Some(cook.handle.as_str()) {
        return Err(DomainError::NotAuthor {
            slug: slug.to_string(),
            title: model.fork.content.title,
        }
        .into());
    }
    let page = merges::suggest_page(&model, message, &visitor.form_token(), errors);
    Ok(private_page(site, visitor, status, page))
}

/// `GET /recipes/{slug}/suggest`: the fork's cook's form.
pub async fn suggest_page(
    site: web::Data<Site>,
    visitor: Visitor,
    slug: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let slug = parse_slug(&slug)?;
    let cook = visitor.cook_or_login(&suggest_path(&slug))?;
    suggest_form(
        &site,
        &visitor,
        cook,
        &slug,
        StatusCode::OK,
        "",
        &FieldErrors::new(),
    )
}

/// `POST /recipes/{slug}/suggest`: makes the suggestion, and goes to it.
pub async fn suggest(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    slug: web::Path<String>,
    form: web::Form<HashMap<String, String>>,
) -> Result<HttpResponse, WebError> {
    let csrf = form.get("csrf").map(String::as_str).unwrap_or("");
    visitor.check_form(&req, csrf)?;
    let slug = parse_slug(&slug)?;
    let cook = visitor.cook_or_login(&suggest_path(&slug))?;
    let based_on = version_field(&form, "based_on")?;
    let message = form.get("message").map(String::as_str).unwrap_or("").trim();
    let again = |status, why: String| {
        suggest_form(
            &site,
            &visitor,
            cook,
            &slug,
            status,
            message,
            &FieldErrors::one("", why),
        )
    };
    if message.is_empty() {
        return again(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Say what your changes do and why: the author reads it first.".to_owned(),
        );
    }
    if message.len() > MAX_MESSAGE {
        return again(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("The message is longer than {MAX_MESSAGE} bytes."),
        );
    }
    // A fork's parent never changes: read before the write, for the
    // address to go to after it.
    let parent = pages::suggest_show(&site.snapshot(), &slug)?.parent.slug;
    let change = Change::by(cook.handle.as_str(), "suggested its changes");
    match site.recipes().suggest(&slug, based_on, message, &change) {
        Ok((number, _)) => {
            Ok(see_other(&merges::suggestion_path(parent.as_str(), number)).finish())
        }
        Err(DomainError::Stale { newest, .. }) => {
            site.recipes().wait_published()?;
            again(
                StatusCode::CONFLICT,
                format!("Your recipe changed since this page was made (it is at version {newest} now): here are its changes again."),
            )
        }
        Err(DomainError::NothingChanged) => again(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Your recipe has no changes of its own since it last agreed with its parent: there is nothing to suggest.".to_owned(),
        ),
        Err(e) => Err(e.into()),
    }
}

/// `GET /recipes/{slug}/suggestions`: the suggestions made to a recipe.
pub async fn suggestions(
    site: web::Data<Site>,
    visitor: Visitor,
    slug: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let slug = parse_slug(&slug)?;
    let model = pages::suggestions_show(&site.snapshot(), &slug)?;
    let page = merges::suggestions_page(&model);
    Ok(private_page(&site, &visitor, StatusCode::OK, page))
}

fn suggestion_number(text: &str) -> Result<u32, WebError> {
    text.parse::<u32>()
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| WebError::NotFound(format!("{text:?} is not a suggestion's number")))
}

/// Suggestion `number` to `slug`, for `visitor`, with `status`.
fn suggestion_review(
    site: &Site,
    visitor: &Visitor,
    slug: &Slug,
    number: u32,
    status: StatusCode,
    errors: &FieldErrors,
) -> Result<HttpResponse, WebError> {
    let model = pages::suggestion_show(&site.snapshot(), slug, number)?;
    let handle = visitor.cook.as_ref().map(|c| c.handle.as_str());
    let reviewer = match handle {
        Some(h) if model.recipe.author.as_deref() == Some(h) => Reviewer::Author,
        Some(h) if model.suggestion.by.as_deref() == Some(h) => Reviewer::Suggester,
        _ => Reviewer::Other,
    };
    let page = merges::suggestion_page(&model, reviewer, &visitor.form_token(), errors);
    Ok(private_page(site, visitor, status, page))
}

/// `GET /recipes/{slug}/suggestions/{n}`: one suggestion, for review.
pub async fn suggestion(
    site: web::Data<Site>,
    visitor: Visitor,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, WebError> {
    let (slug, number) = path.into_inner();
    let slug = parse_slug(&slug)?;
    let number = suggestion_number(&number)?;
    suggestion_review(
        &site,
        &visitor,
        &slug,
        number,
        StatusCode::OK,
        &FieldErrors::new(),
    )
}

/// `POST /recipes/{slug}/suggestions/{n}`: accept, decline or withdraw
/// (`action`), each decided in the writer.
pub async fn review(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    path: web::Path<(String, String)>,
    form: web::Form<HashMap<String, String>>,
) -> Result<HttpResponse, WebError> {
    let csrf = form.get("csrf").map(String::as_str).unwrap_or("");
    visitor.check_form(&req, csrf)?;
    let (slug, number) = path.into_inner();
    let slug = parse_slug(&slug)?;
    let number = suggestion_number(&number)?;
    let here = merges::suggestion_path(slug.as_str(), number);
    let cook = visitor.cook_or_login(&here)?;
    let reply = form.get("reply").map(String::as_str).unwrap_or("").trim();
    if reply.len() > MAX_MESSAGE {
        return Err(WebError::BadRequest(format!(
            "the note is longer than {MAX_MESSAGE} bytes"
        )));
    }
    let recipes = site.recipes();
    let written = match form.get("action").map(String::as_str) {
        Some("accept") => {
            let based_on = version_field(&form, "based_on")?;
            let choices = choices(&form)?;
            let change = Change::by(
                cook.handle.as_str(),
                &format!("accepted suggestion {number}"),
            );
            recipes.accept_suggestion(&slug, number, based_on, &choices, reply, &change)
        }
        Some("decline") => {
            let change = Change::by(
                cook.handle.as_str(),
                &format!("declined suggestion {number}"),
            );
            recipes.decline_suggestion(&slug, number, reply, &change)
        }
        Some("withdraw") => {
            let change = Change::by(
                cook.handle.as_str(),
                &format!("withdrew suggestion {number}"),
            );
            recipes.withdraw_suggestion(&slug, number, &change)
        }
        other => {
            return Err(WebError::BadRequest(format!(
                "{:?} is not something to do with a suggestion: accept, decline or withdraw",
                other.unwrap_or("")
            )))
        }
    };
    let again = |status, why: String| {
        suggestion_review(
            &site,
            &visitor,
            &slug,
            number,
            status,
            &FieldErrors::one("", why),
        )
    };
    match written {
        Ok(_) => Ok(see_other(&here).finish()),
        Err(moved @ DomainError::MergeMoved { .. }) => {
            site.recipes().wait_published()?;
            again(StatusCode::CONFLICT, sentence(&moved.to_string()))
        }
        Err(unresolved @ DomainError::Unresolved { .. }) => again(
            StatusCode::UNPROCESSABLE_ENTITY,
            sentence(&unresolved.to_string()),
        ),
        Err(e) => Err(e.into()),
    }
}
