//! A recipe's suggestions (`/recipes/{slug}/suggestions`, a page at a
//! time) and one suggestion's review (`/recipes/{slug}/suggestions/{n}`):
//! the author accepts or declines it, the suggester withdraws it, each
//! decided in the writer on the two versions the review showed.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};

use super::form_handling::{private_page, see_other, sentence};
use super::merge_forms::{
    review_sender, suggestion_number, version_field, Again, Form, Sent, CHANGED_MEANWHILE,
};
use super::recipes::parse_slug;
use super::respond::{self, Body};
use super::session::Visitor;
use super::{Site, WebError};
use crate::domain::{pages, Change, DomainError, Review, Slug, SuggestionState, MAX_MESSAGE};
use crate::views::form_fields::FieldErrors;
use crate::views::merges::{self, Chosen, Preview, Reviewer};

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
        &respond::QueryKey::default().with("before", before),
        |snapshot| Ok(pages::suggestions_show(snapshot, &slug, before)?),
        |_, model| Body::from(merges::suggestions_page(model)),
    )
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
        Ok(model.suggestion.state == SuggestionState::Open
            && review_shown(&form).ok() == Some(review_now(&model)))
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
    let action = form.get("action").map(String::as_str);
    let written = match action {
        Some("preview") => {
            return match shown_now()? {
                true => again(StatusCode::OK, String::new(), true),
                false => again(StatusCode::CONFLICT, CHANGED_MEANWHILE.to_owned(), false),
            }
        }
        Some("accept") => {
            let review = review_shown(&form)?;
            // Choices missing are the writer's to refuse, after what it
            // checks first: a review that moved on, a suggestion closed.
            let choices = sent.complete().unwrap_or_default();
            let change = Change::by(
                cook.handle.as_str(),
                &format!("accepted suggestion {number}"),
            );
            let (to, reply) = (slug.clone(), reply.to_owned());
            site.write(move |recipes| {
                recipes.accept_suggestion(&to, number, review, &choices, &reply, &change)
            })
            .await?
        }
        Some("decline") => {
            let shown = review_shown(&form)?;
            let change = Change::by(
                cook.handle.as_str(),
                &format!("declined suggestion {number}"),
            );
            let (to, reply) = (slug.clone(), reply.to_owned());
            site.write(move |recipes| {
                recipes.decline_suggestion(&to, number, shown, &reply, &change)
            })
            .await?
        }
        Some("withdraw") => {
            let change = Change::by(
                cook.handle.as_str(),
                &format!("withdrew suggestion {number}"),
            );
            let to = slug.clone();
            site.write(move |recipes| recipes.withdraw_suggestion(&to, number, &change))
                .await?
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
    let shown = review_shown(&form)?;
    let sent = Sent::read(&form)?;
    let model = pages::suggestion_show(&site.snapshot(), &slug, number)?;
    if model.recipe.author.as_deref() != Some(cook.handle.as_str()) {
        return Err(DomainError::NotAuthor {
            slug: slug.to_string(),
            title: model.recipe.content.title().to_owned(),
        }
        .into());
    }
    let unchanged = model.suggestion.state == SuggestionState::Open && shown == review_now(&model);
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

/// What the review form says it showed: the parent's version, the
/// fork's, and the suggestion's merge base.
fn review_shown(form: &Form) -> Result<Review, WebError> {
    Ok(Review::of(
        version_field(form, "based_on")?,
        version_field(form, "fork_version")?,
    )
    .from_base(version_field(form, "fork_base")?))
}

/// What a review of the suggestion shows now.
fn review_now(model: &pages::SuggestionShow) -> Review {
    Review::of(model.recipe.newest(), model.suggestion.from_version)
        .from_base(model.suggestion.base_version)
}
