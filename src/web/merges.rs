//! Forks that talk back, in the browser: a fork's cook brings in the
//! parent's changes (`/recipes/{slug}/bring-in`) or suggests the fork's
//! own to the parent (`/recipes/{slug}/suggest`), whose author reviews
//! them (`/recipes/{slug}/suggestions/{n}`).
//!
//! A merge's page shows the merge of two versions, one of each recipe, and
//! its form carries both: the writer decides again on the latest value,
//! and if either recipe moved on, nothing is saved and the answer is 409
//! with the merge made again, each choice kept where its conflict is still
//! there. The page previews the whole merged recipe: its Preview button
//! shows the page again with it, and where scripts run the form is sent
//! to the page's `/preview` as the cook chooses, for the recipe alone.

use std::collections::{BTreeMap, HashMap};

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};

use super::form_handling::{attempt_of, private_page, see_other, sentence};
use super::recipes::parse_slug;
use super::respond::{self, Body};
use super::session::Visitor;
use super::{Site, WebError};
use crate::domain::merge::{Choice, Merge};
use crate::domain::{
    pages, BringIn, BringInShow, Change, Cook, DomainError, Slug, VersionNumber, MAX_MESSAGE,
    MAX_NOTE,
};
use crate::views::form_fields::FieldErrors;
use crate::views::merges::{self, Chosen, Preview, Reviewer, BOTH, EDIT, MINE, THEIRS};
use crate::views::recipe_path;

type Form = HashMap<String, String>;

/// What a merge form was sent with: a choice (or none yet) for each
/// conflict it showed, in order, and the same by conflict key, to show
/// them again.
struct Sent {
    choices: Vec<Option<Choice>>,
    chosen: Chosen,
}

impl Sent {
    /// Reads `choice-{n}` (and `edit-{n}` for text written by hand) for
    /// each `key-{n}` the form showed; a value that is no choice is
    /// refused.
    fn read(form: &Form) -> Result<Sent, WebError> {
        let shown = form.keys().filter(|k| k.starts_with("key-")).count();
        // A choice for a change the form did not show: another form's.
        let stray = form.keys().any(|k| {
            ["choice-", "edit-"].iter().any(|prefix| {
                k.strip_prefix(prefix)
                    .is_some_and(|n| n.parse::<usize>().map_or(true, |n| n >= shown))
            })
        });
        if stray {
            return Err(WebError::BadRequest(
                "the form's choices are for changes it did not show".into(),
            ));
        }
        let mut sent = Sent {
            choices: Vec::with_capacity(shown),
            chosen: Chosen::new(),
        };
        for n in 0..shown {
            let key = form.get(&merges::key_name(n)).ok_or_else(|| {
                WebError::BadRequest(format!("the form's conflicts skip number {n}"))
            })?;
            let edited = form.get(&merges::edit_name(n)).cloned().unwrap_or_default();
            let value = form.get(&merges::choice_name(n)).map(String::as_str);
            let choice = match value {
                None => None,
                Some(MINE) => Some(Choice::Mine),
                Some(THEIRS) => Some(Choice::Theirs),
                Some(BOTH) => Some(Choice::Both),
                Some(EDIT) => Some(Choice::Edited(edited.clone())),
                Some(other) => {
                    return Err(WebError::BadRequest(format!(
                    "{other:?} is not a way to settle a change: {MINE}, {THEIRS}, {BOTH} or {EDIT}"
                )))
                }
            };
            if let Some(value) = value {
                sent.chosen.insert(key.clone(), value.to_owned(), edited);
            }
            sent.choices.push(choice);
        }
        Ok(sent)
    }

    /// The choices, once there is one for every conflict.
    fn complete(&self) -> Option<Vec<Choice>> {
        self.choices.iter().cloned().collect()
    }

    /// The preview of `merge` settled by these choices: the recipe, or why
    /// it is not shown yet.
    fn preview<'a>(
        &self,
        merge: &Merge,
        merged: &'a mut Option<crate::domain::Content>,
        site: &'a Site,
    ) -> Preview<'a> {
        let Some(choices) = self.complete() else {
            let left = self.choices.iter().filter(|c| c.is_none()).count();
            return Preview::Unready(format!(
                "Choose how to settle every change made on both sides to see the whole recipe ({left} left)."
            ));
        };
        match merge.resolved(&choices).map(|c| c.checked()) {
            Ok(Ok(content)) => Preview::Recipe(merged.insert(content), site.memos()),
            Ok(Err(mistakes)) => Preview::Unready(
                mistakes
                    .iter()
                    .map(|m| sentence(&m.to_string()))
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            Err(unresolved) => Preview::Unready(sentence(&unresolved.to_string())),
        }
    }
}

/// A bring-in form, checked: its token, then the fork it posts to and the
/// cook sending it (a visitor is sent to log in).
fn bring_in_sender<'v>(
    req: &HttpRequest,
    visitor: &'v Visitor,
    slug: &str,
    form: &Form,
) -> Result<(Slug, &'v Cook), WebError> {
    visitor.check_form(req, form.get("csrf").map(String::as_str).unwrap_or(""))?;
    let slug = parse_slug(slug)?;
    let cook = visitor.cook_or_login(&merges::bring_in_path(slug.as_str()))?;
    Ok((slug, cook))
}

/// A suggestion's form, checked: its token, then the recipe and the
/// suggestion it posts to, and the cook sending it (a visitor is sent to
/// log in).
fn review_sender<'v>(
    req: &HttpRequest,
    visitor: &'v Visitor,
    (slug, number): (String, String),
    form: &Form,
) -> Result<(Slug, u32, &'v Cook), WebError> {
    visitor.check_form(req, form.get("csrf").map(String::as_str).unwrap_or(""))?;
    let slug = parse_slug(&slug)?;
    let number = suggestion_number(&number)?;
    let cook = visitor.cook_or_login(&merges::suggestion_path(slug.as_str(), number))?;
    Ok((slug, number, cook))
}

/// The form's version `name`, if it has one.
fn form_version(form: &Form, name: &str) -> Option<VersionNumber> {
    version_field(form, name).ok()
}

fn version_field(form: &Form, name: &str) -> Result<VersionNumber, WebError> {
    form.get(name)
        .and_then(|v| v.trim().parse::<u64>().ok())
        .and_then(VersionNumber::new)
        .ok_or_else(|| WebError::BadRequest(format!("the form's {name} is not a version number")))
}

/// The bring-in page of the fork at `slug`, for its cook: `BringIn` read
/// on the latest published value, or the error if `cook` is not its cook.
fn bring_in_model(site: &Site, cook: &Cook, slug: &Slug) -> Result<BringIn, WebError> {
    let model = pages::bring_in_show(&site.snapshot(), slug)?;
    let fork = match &model {
        BringIn::Changes(show) => &show.fork,
        BringIn::InStep(in_step) => &in_step.fork,
    };
    if fork.author.as_deref() != Some(cook.handle.as_str()) {
        return Err(DomainError::NotAuthor {
            slug: slug.to_string(),
            title: fork.content.title.clone(),
        }
        .into());
    }
    Ok(model)
}

/// How a merge's page (a bring-in, a suggestion's review) is shown: its
/// status, the bring-in's note, the message, what the form was sent with
/// when it is shown again, and whether to preview the merged recipe.
struct Again<'a> {
    status: StatusCode,
    note: Option<&'a str>,
    errors: FieldErrors,
    sent: Option<&'a Sent>,
    preview: bool,
}

impl Again<'_> {
    fn first() -> Again<'static> {
        Again {
            status: StatusCode::OK,
            note: None,
            errors: FieldErrors::new(),
            sent: None,
            preview: false,
        }
    }
}

/// The bring-in page for the fork at `slug` as it is now.
fn bring_in_form(
    site: &Site,
    visitor: &Visitor,
    cook: &Cook,
    slug: &Slug,
    again: Again,
) -> Result<HttpResponse, WebError> {
    let model = match bring_in_model(site, cook, slug)? {
        BringIn::Changes(show) => show,
        BringIn::InStep(in_step) => {
            // Shown again after a refused form (a second window's, say),
            // with its status and why: nothing was saved.
            let page = merges::in_step_page(&in_step, &visitor.form_token(), &again.errors);
            return Ok(private_page(site, visitor, again.status, page));
        }
    };
    let note = again
        .note
        .map_or_else(|| merges::default_note(&model), str::to_owned);
    let empty = Chosen::new();
    let chosen = again.sent.map_or(&empty, |s| &s.chosen);
    let mut merged = None;
    let preview = match (again.preview, again.sent) {
        (true, Some(sent)) if sent.choices.len() == model.changes.merge.conflicts().len() => {
            sent.preview(&model.changes.merge, &mut merged, site)
        }
        (true, _) => {
            Preview::Unready("Choose how to settle each change to see the whole recipe.".into())
        }
        (false, _) => Preview::None,
    };
    let page = merges::bring_in_page(
        &model,
        &note,
        &visitor.form_token(),
        &again.errors,
        chosen,
        &preview,
    );
    Ok(private_page(site, visitor, again.status, page))
}

/// `GET /recipes/{slug}/bring-in`: the fork's author's form, or, for a
/// fork in step, a page that says so.
pub async fn bring_in_page(
    site: web::Data<Site>,
    visitor: Visitor,
    slug: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let slug = parse_slug(&slug)?;
    let cook = visitor.cook_or_login(&merges::bring_in_path(slug.as_str()))?;
    bring_in_form(&site, &visitor, cook, &slug, Again::first())
}

/// `POST /recipes/{slug}/bring-in`: saves the merge the form showed, with
/// its conflicts settled as chosen; or, for its Preview button, shows the
/// page again with the merged recipe.
pub async fn bring_in(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    slug: web::Path<String>,
    form: web::Form<Form>,
) -> Result<HttpResponse, WebError> {
    let (slug, cook) = bring_in_sender(&req, &visitor, &slug, &form)?;
    let csrf = form.get("csrf").map(String::as_str).unwrap_or("");
    let shown = Shown::read(&form)?;
    let sent = Sent::read(&form)?;
    let preview = match form.get("action").map(String::as_str) {
        None | Some("save") => false,
        Some("preview") => true,
        Some(other) => {
            return Err(WebError::BadRequest(format!(
                "{other:?} is not something to do with a bring-in: save or preview"
            )))
        }
    };
    let note = form.get("note").map(String::as_str).unwrap_or("").trim();
    if note.len() > MAX_NOTE {
        return Err(WebError::BadRequest(format!(
            "the note is longer than {MAX_NOTE} bytes"
        )));
    }
    let again = |status, why: String, preview: bool| {
        let errors = match why.is_empty() {
            true => FieldErrors::new(),
            false => FieldErrors::one("", why),
        };
        bring_in_form(
            &site,
            &visitor,
            cook,
            &slug,
            Again {
                status,
                note: Some(note),
                errors,
                sent: Some(&sent),
                preview,
            },
        )
    };
    if preview {
        // The preview of the merge the form showed: if either recipe
        // moved on, the page as it is now, and the cook is told.
        let showing = match bring_in_model(&site, cook, &slug)? {
            BringIn::Changes(show) => shows(&show, &shown),
            BringIn::InStep(_) => false,
        };
        return match showing {
            true => again(StatusCode::OK, String::new(), true),
            false => again(StatusCode::CONFLICT, CHANGED_MEANWHILE.to_owned(), false),
        };
    }
    if note.is_empty() {
        return again(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Say what this version does: history lists it.".to_owned(),
            false,
        );
    }
    let Some(choices) = sent.complete() else {
        return again(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Choose how to settle each change made on both sides before saving.".to_owned(),
            false,
        );
    };
    // The form's fields in their name's order: what it said.
    let said = serde_json::to_vec(&form.iter().collect::<BTreeMap<_, _>>()).unwrap_or_default();
    let change = Change::by(cook.handle.as_str(), note).once(attempt_of(&req, csrf, &[&said]));
    let written = site.recipes().bring_in_shown(
        &slug,
        shown.based_on,
        shown.since,
        shown.upto,
        &choices,
        &change,
    );
    match written {
        Ok(_) => Ok(see_other(&recipe_path(slug.as_str())).finish()),
        Err(DomainError::Stale { newest, .. }) => {
            // Refused on the latest value, which may not be published yet.
            site.recipes().wait_published()?;
            again(
                StatusCode::CONFLICT,
                format!(
                    "Your recipe changed since this page was made (it is at version {newest} now): nothing was saved. Here are the changes again, merged onto it; your choices are kept where the same change is still there."
                ),
                false,
            )
        }
        Err(moved @ (DomainError::MergeMoved { .. } | DomainError::AgreedMeanwhile { .. })) => {
            site.recipes().wait_published()?;
            again(
                StatusCode::CONFLICT,
                format!(
                    "{}: nothing was saved. Here are its changes again; your choices are kept where the same change is still there.",
                    moved
                ),
                false,
            )
        }
        Err(DomainError::UpToDate { .. }) => {
            site.recipes().wait_published()?;
            bring_in_form(&site, &visitor, cook, &slug, Again::first())
        }
        Err(refused @ (DomainError::Unresolved(_) | DomainError::Content(_))) => again(
            StatusCode::UNPROCESSABLE_ENTITY,
            sentence(&refused.to_string()),
            false,
        ),
        Err(e) => Err(e.into()),
    }
}

/// `POST /recipes/{slug}/bring-in/preview`: the recipe the bring-in form,
/// as sent, would save; for the form's live preview. Only its cook's.
pub async fn bring_in_preview(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    slug: web::Path<String>,
    form: web::Form<Form>,
) -> Result<HttpResponse, WebError> {
    let (slug, cook) = bring_in_sender(&req, &visitor, &slug, &form)?;
    let shown = Shown::read(&form)?;
    let sent = Sent::read(&form)?;
    let fragment = match bring_in_model(&site, cook, &slug)? {
        BringIn::Changes(show) if shows(&show, &shown) => {
            let mut merged = None;
            merges::preview_fragment(&sent.preview(&show.changes.merge, &mut merged, &site))
        }
        _ => merges::preview_fragment(&Preview::Unready(
            "The two recipes changed since this page was made: load it again to see the merge as it is now.".into(),
        )),
    };
    Ok(private_page(&site, &visitor, StatusCode::OK, fragment))
}

/// What a bring-in form showed: the merge of the fork's version
/// `based_on`, which agreed with its parent's version `since`, with the
/// parent's `upto`.
struct Shown {
    based_on: VersionNumber,
    since: VersionNumber,
    upto: VersionNumber,
}

impl Shown {
    fn read(form: &Form) -> Result<Shown, WebError> {
        Ok(Shown {
            based_on: version_field(form, "based_on")?,
            since: version_field(form, "since")?,
            upto: version_field(form, "upto")?,
        })
    }
}

/// Whether `show` is the merge the form that sent `shown` showed.
fn shows(show: &BringInShow, shown: &Shown) -> bool {
    show.fork.newest() == shown.based_on
        && show.changes.base == shown.since
        && show.changes.upto == shown.upto
}

/// What a merge form sent after either recipe moved on is told.
const CHANGED_MEANWHILE: &str = "The two recipes changed since this page was made: nothing was saved. Here is the merge as it is now; your choices are kept where the same change is still there.";

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
    form: web::Form<Form>,
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
    if let Err(why) = site
        .suggestions_sent()
        .start(cook.handle.as_str(), parent.as_str())
    {
        return again(StatusCode::TOO_MANY_REQUESTS, sentence(&why));
    }
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
        Err(
            refused @ (DomainError::NothingChanged
            | DomainError::DeclinedAlready { .. }
            | DomainError::AlreadySuggested { .. }
            | DomainError::Retired { .. }),
        ) => {
            site.recipes().wait_published()?;
            let why = match refused {
                DomainError::NothingChanged => {
                    "Your recipe has no changes its parent lacks: there is nothing to suggest."
                        .to_owned()
                }
                other => sentence(&other.to_string()),
            };
            again(StatusCode::CONFLICT, why)
        }
        Err(e) => Err(e.into()),
    }
}

/// The suggestions list's query string: `?before=`, the number the page
/// of older ones starts before. Others are ignored, as every page's are.
#[derive(Debug, serde::Deserialize, serde::Serialize)]
pub struct SuggestionsParams {
    before: Option<String>,
}

/// `GET /recipes/{slug}/suggestions`: a page of the suggestions made to a
/// recipe, the same for every reader, so kept as every page is.
pub async fn suggestions(
    site: web::Data<Site>,
    req: HttpRequest,
    slug: web::Path<String>,
    params: web::Query<SuggestionsParams>,
) -> Result<HttpResponse, WebError> {
    let slug = parse_slug(&slug)?;
    let before = params
        .before
        .as_deref()
        .map(|b| {
            b.parse::<u32>()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| WebError::BadRequest(format!("{b:?} is not a suggestion's number")))
        })
        .transpose()?;
    respond::page(
        &site,
        &req,
        &*params,
        |snapshot| Ok(pages::suggestions_show(snapshot, &slug, before)?),
        |_, model| Body::from(merges::suggestions_page(model)),
    )
}

fn suggestion_number(text: &str) -> Result<u32, WebError> {
    text.parse::<u32>()
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| WebError::NotFound(format!("{text:?} is not a suggestion's number")))
}

/// Suggestion `number` to `slug`, for `visitor`, shown as `again` says.
fn suggestion_review(
    site: &Site,
    visitor: &Visitor,
    slug: &Slug,
    number: u32,
    again: Again,
) -> Result<HttpResponse, WebError> {
    let Again {
        status,
        errors,
        sent,
        preview,
        ..
    } = again;
    let model = pages::suggestion_show(&site.snapshot(), slug, number)?;
    let handle = visitor.cook.as_ref().map(|c| c.handle.as_str());
    let reviewer = match handle {
        Some(h) if model.recipe.author.as_deref() == Some(h) => Reviewer::Author,
        Some(h) if model.suggestion.by.as_deref() == Some(h) => Reviewer::Suggester,
        _ => Reviewer::Other,
    };
    let empty = Chosen::new();
    let chosen = sent.map_or(&empty, |s| &s.chosen);
    let mut merged = None;
    let preview = match (preview, sent) {
        (true, Some(sent)) if sent.choices.len() == model.merge.conflicts().len() => {
            sent.preview(&model.merge, &mut merged, site)
        }
        (true, _) => {
            Preview::Unready("Choose how to settle each change to see the whole recipe.".into())
        }
        (false, _) => Preview::None,
    };
    let page = merges::suggestion_page(
        &model,
        reviewer,
        &visitor.form_token(),
        &errors,
        chosen,
        &preview,
    );
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
    suggestion_review(&site, &visitor, &slug, number, Again::first())
}

/// `POST /recipes/{slug}/suggestions/{n}`: accept, decline or withdraw
/// (`action`), each decided in the writer; or, for the accept form's
/// Preview button, the review again with the merged recipe.
pub async fn review(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    path: web::Path<(String, String)>,
    form: web::Form<Form>,
) -> Result<HttpResponse, WebError> {
    let (slug, number, cook) = review_sender(&req, &visitor, path.into_inner(), &form)?;
    let here = merges::suggestion_path(slug.as_str(), number);
    let reply = form.get("reply").map(String::as_str).unwrap_or("").trim();
    if reply.len() > MAX_MESSAGE {
        return Err(WebError::BadRequest(format!(
            "the note is longer than {MAX_MESSAGE} bytes"
        )));
    }
    let sent = Sent::read(&form)?;
    let shown_now = || -> Result<bool, WebError> {
        let model = pages::suggestion_show(&site.snapshot(), &slug, number)?;
        Ok(
            Some(model.recipe.newest()) == form_version(&form, "based_on")
                && Some(model.suggestion.from_version) == form_version(&form, "fork_version"),
        )
    };
    let again = |status, why: String, preview: bool| {
        let errors = match why.is_empty() {
            true => FieldErrors::new(),
            false => FieldErrors::one("", why),
        };
        suggestion_review(
            &site,
            &visitor,
            &slug,
            number,
            Again {
                status,
                note: None,
                errors,
                sent: Some(&sent),
                preview,
            },
        )
    };
    let recipes = site.recipes();
    let action = form.get("action").map(String::as_str);
    let written = match action {
        Some("preview") => {
            return match shown_now()? {
                true => again(StatusCode::OK, String::new(), true),
                false => again(StatusCode::CONFLICT, CHANGED_MEANWHILE.to_owned(), false),
            }
        }
        Some("accept") => {
            let based_on = version_field(&form, "based_on")?;
            let fork_version = version_field(&form, "fork_version")?;
            let Some(choices) = sent.complete() else {
                return again(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "Choose how to settle each change made on both sides before accepting."
                        .to_owned(),
                    false,
                );
            };
            let change = Change::by(
                cook.handle.as_str(),
                &format!("accepted suggestion {number}"),
            );
            recipes.accept_suggestion(
                &slug,
                number,
                based_on,
                fork_version,
                &choices,
                reply,
                &change,
            )
        }
        Some("decline") => {
            let shown = (
                version_field(&form, "based_on")?,
                version_field(&form, "fork_version")?,
            );
            let change = Change::by(
                cook.handle.as_str(),
                &format!("declined suggestion {number}"),
            );
            recipes.decline_suggestion(&slug, number, shown, reply, &change)
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
    match written {
        Ok(_) => Ok(see_other(&here).finish()),
        Err(moved @ (DomainError::MergeMoved { .. } | DomainError::AgreedMeanwhile { .. })) => {
            site.recipes().wait_published()?;
            let what = match action {
                Some("decline") => "Nothing was declined: look at the suggestion as it is now.",
                _ => "Nothing was saved. Here is the suggestion as it is now; your choices are kept where the same change is still there.",
            };
            again(
                StatusCode::CONFLICT,
                format!("{}. {what}", sentence(&moved.to_string()).trim_end_matches('.')),
                false,
            )
        }
        Err(DomainError::NothingChanged) => again(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Accepting it would change nothing: your recipe has all of it already. Decline it, with a note saying so, instead.".to_owned(),
            false,
        ),
        Err(refused @ (DomainError::Unresolved(_) | DomainError::Content(_))) => again(
            StatusCode::UNPROCESSABLE_ENTITY,
            sentence(&refused.to_string()),
            false,
        ),
        Err(e) => Err(e.into()),
    }
}

/// `POST /recipes/{slug}/suggestions/{n}/preview`: the recipe the accept
/// form, as sent, would save; for the form's live preview. Only the
/// recipe's author's.
pub async fn review_preview(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    path: web::Path<(String, String)>,
    form: web::Form<Form>,
) -> Result<HttpResponse, WebError> {
    let (slug, number, cook) = review_sender(&req, &visitor, path.into_inner(), &form)?;
    let (based_on, fork_version) = (
        version_field(&form, "based_on")?,
        version_field(&form, "fork_version")?,
    );
    let sent = Sent::read(&form)?;
    let model = pages::suggestion_show(&site.snapshot(), &slug, number)?;
    if model.recipe.author.as_deref() != Some(cook.handle.as_str()) {
        return Err(DomainError::NotAuthor {
            slug: slug.to_string(),
            title: model.recipe.content.title,
        }
        .into());
    }
    let unchanged =
        model.recipe.newest() == based_on && model.suggestion.from_version == fork_version;
    let mut merged = None;
    let preview = match unchanged {
        true => sent.preview(&model.merge, &mut merged, &site),
        false => Preview::Unready(
            "The two recipes changed since this page was made: load it again to see the merge as it is now.".into(),
        ),
    };
    let fragment = merges::preview_fragment(&preview);
    Ok(private_page(&site, &visitor, StatusCode::OK, fragment))
}
