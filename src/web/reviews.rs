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
use crate::domain::merge::Choice;
use crate::domain::{pages, Change, Cook, DomainError, Review, Slug, SuggestionState, MAX_MESSAGE};
use crate::views::merges::{self, Chosen, Preview, Reviewer};

/// The suggestions list's query string: `?before=`, the number the page
/// of older ones starts before. Others are ignored, as every page's are.
#[derive(Debug, serde::Deserialize, serde::Serialize)]
pub(super) struct SuggestionsParams {
    before: Option<String>,
}

/// `GET /recipes/{slug}/suggestions`: a page of the suggestions made to a
/// recipe, the same for every reader, so kept as every page is.
pub(super) async fn suggestions(
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
    let model = pages::suggestion_show(&site.snapshot(), slug, number)?;
    let handle = visitor.cook.as_ref().map(|c| c.handle.as_str());
    let reviewer = match handle {
        Some(h) if model.recipe.author.as_deref() == Some(h) => Reviewer::Author,
        Some(h) if model.suggestion.by.as_deref() == Some(h) => Reviewer::Suggester,
        _ => Reviewer::Other,
    };
    let empty = Chosen::new();
    let chosen = again.sent.map_or(&empty, |s| &s.chosen);
    let mut merged = None;
    let preview = again.preview(&model.merge, &mut merged, site);
    let page = merges::suggestion_page(
        &model,
        reviewer,
        &visitor.form_token(),
        &again.errors,
        chosen,
        &preview,
    );
    Ok(private_page(site, visitor, again.status, page))
}

/// `GET /recipes/{slug}/suggestions/{n}`: one suggestion, for review.
pub(super) async fn suggestion(
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
pub(super) async fn review(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    path: web::Path<(String, String)>,
    form: web::Form<Form>,
) -> Result<HttpResponse, WebError> {
    let (slug, number, cook) = review_sender(&req, &visitor, path.into_inner(), &form)?;
    let reply = reply_of(&form)?;
    let sent = Sent::read(&form)?;
    let reviewing = Reviewing {
        site: &site,
        visitor: &visitor,
        slug: &slug,
        number,
        sent: &sent,
    };
    let decision = match Asked::read(&form, &sent)? {
        Asked::Preview => return reviewing.preview(&form),
        Asked::Decide(decision) => decision,
    };
    let declines = matches!(decision, Decision::Decline(_));
    let written = decision.write(&site, cook, &slug, number, reply).await?;
    reviewing.answer(written, declines)
}

/// `GET /recipes/{slug}/offer`: a fork's newest suggestion to its parent
/// on another site, as its cook sees it here.
pub(super) async fn offer(
    site: web::Data<Site>,
    visitor: Visitor,
    slug: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let slug = parse_slug(&slug)?;
    let model = pages::offer_show(&site.snapshot(), &slug)?;
    let handle = visitor.cook.as_ref().map(|c| c.handle.as_str());
    let suggester = handle.is_some() && model.suggestion.by.as_deref() == handle;
    let page = merges::offer_page(&model, suggester, &visitor.form_token());
    Ok(private_page(&site, &visitor, StatusCode::OK, page))
}

/// `POST /recipes/{slug}/offer`: its cook withdraws the suggestion the
/// page showed (`number`), decided in the writer; the other site is told
/// by the `Undo` the log then holds.
pub(super) async fn withdraw_offer(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    slug: web::Path<String>,
    form: web::Form<Form>,
) -> Result<HttpResponse, WebError> {
    visitor.check_form(&req, form.get("csrf").map(String::as_str).unwrap_or(""))?;
    let slug = parse_slug(&slug)?;
    let number = form
        .get("number")
        .and_then(|n| n.trim().parse::<u32>().ok())
        .filter(|&n| n >= 1)
        .ok_or_else(|| WebError::BadRequest("the form's number is not a suggestion's".into()))?;
    let cook = visitor.cook_or_login(&merges::offer_path(slug.as_str()))?;
    // The fork's parent, and which fork a suggestion is from, never change:
    // read here, the withdrawal itself is decided in the writer.
    let snapshot = site.snapshot();
    let shown = pages::offer_show(&snapshot, &slug)?;
    let made = snapshot.suggestion(shown.parent.id, number)?;
    if made.is_none_or(|s| s.from != shown.fork.id) {
        return Err(WebError::NotFound(format!(
            "{slug} made no suggestion {number} to {}",
            shown.parent.content.title()
        )));
    }
    let parent = shown.parent.slug;
    let change = Change::by(
        cook.handle.as_str(),
        &format!("withdrew suggestion {number}"),
    );
    site.write(move |recipes| recipes.withdraw_suggestion(&parent, number, &change))
        .await??;
    Ok(see_other(&crate::views::recipe_path(slug.as_str())).finish())
}

/// The review form's note to the suggester (`reply`), trimmed; refused
/// when longer than a message may be.
fn reply_of(form: &Form) -> Result<&str, WebError> {
    let reply = form.get("reply").map(String::as_str).unwrap_or("").trim();
    if reply.len() > MAX_MESSAGE {
        return Err(WebError::BadRequest(format!(
            "the note is longer than {MAX_MESSAGE} bytes"
        )));
    }
    Ok(reply)
}

/// What a review form asks for (its `action`): the review again with the
/// merged recipe, or a decision for the writer.
enum Asked {
    Preview,
    Decide(Decision),
}

/// A decision on a suggestion, with what it rests on: the review the form
/// showed (and, to accept, the choices sent).
enum Decision {
    Accept { shown: Review, choices: Vec<Choice> },
    Decline(Review),
    Withdraw,
}

impl Asked {
    /// The form's `action`, and what the review showed where the decision
    /// rests on it; anything else is refused.
    fn read(form: &Form, sent: &Sent) -> Result<Asked, WebError> {
        let decision = match form.get("action").map(String::as_str) {
            Some("preview") => return Ok(Asked::Preview),
            Some("accept") => Decision::Accept {
                shown: review_shown(form)?,
                // Choices missing are the writer's to refuse, after what it
                // checks first: a review that moved on, a suggestion closed.
                choices: sent.complete().unwrap_or_default(),
            },
            Some("decline") => Decision::Decline(review_shown(form)?),
            Some("withdraw") => Decision::Withdraw,
            other => {
                return Err(WebError::BadRequest(format!(
                    "{:?} is not something to do with a suggestion: accept, decline or withdraw",
                    other.unwrap_or("")
                )))
            }
        };
        Ok(Asked::Decide(decision))
    }
}

impl Decision {
    /// The decision made in the writer, on the latest value, by `cook`,
    /// with `reply` for the suggester where it says one.
    async fn write(
        self,
        site: &Site,
        cook: &Cook,
        slug: &Slug,
        number: u32,
        reply: &str,
    ) -> Result<Result<(), DomainError>, WebError> {
        let by =
            |did: &str| Change::by(cook.handle.as_str(), &format!("{did} suggestion {number}"));
        let to = slug.clone();
        match self {
            Decision::Accept { shown, choices } => {
                let (change, reply) = (by("accepted"), reply.to_owned());
                site.write(move |recipes| {
                    recipes.accept_suggestion(&to, number, shown, &choices, &reply, &change)
                })
                .await
            }
            Decision::Decline(shown) => {
                let (change, reply) = (by("declined"), reply.to_owned());
                site.write(move |recipes| {
                    recipes.decline_suggestion(&to, number, shown, &reply, &change)
                })
                .await
            }
            Decision::Withdraw => {
                let change = by("withdrew");
                site.write(move |recipes| recipes.withdraw_suggestion(&to, number, &change))
                    .await
            }
        }
        .map(|written| written.map(drop))
    }
}

/// A review form being answered, and what its page is shown again with.
struct Reviewing<'a> {
    site: &'a Site,
    visitor: &'a Visitor,
    slug: &'a Slug,
    number: u32,
    sent: &'a Sent,
}

impl Reviewing<'_> {
    /// The review again, with `why` (if anything) above it and the choices
    /// sent kept; with the merged recipe if `preview`.
    fn again(
        &self,
        status: StatusCode,
        why: String,
        preview: bool,
    ) -> Result<HttpResponse, WebError> {
        let again = Again::sent(status, why, None, self.sent, preview);
        suggestion_review(self.site, self.visitor, self.slug, self.number, again)
    }

    /// The accept form's Preview: the review with the merged recipe, if it
    /// is the review the form showed; else the review as it is now, saying
    /// so.
    fn preview(&self, form: &Form) -> Result<HttpResponse, WebError> {
        let model = pages::suggestion_show(&self.site.snapshot(), self.slug, self.number)?;
        let shown_now = model.suggestion.state == SuggestionState::Open
            && review_shown(form).ok() == Some(review_now(&model));
        match shown_now {
            true => self.again(StatusCode::OK, String::new(), true),
            false => self.again(StatusCode::CONFLICT, CHANGED_MEANWHILE.to_owned(), false),
        }
    }

    /// The answer to what the writer decided: the suggestion's page, or
    /// the review again saying why nothing was saved (`declines`: what was
    /// refused was declining it).
    fn answer(
        &self,
        written: Result<(), DomainError>,
        declines: bool,
    ) -> Result<HttpResponse, WebError> {
        match written {
            Ok(()) => Ok(see_other(&merges::suggestion_path(self.slug.as_str(), self.number)).finish()),
            Err(moved @ (DomainError::MergeMoved { .. } | DomainError::AgreedMeanwhile { .. })) => {
                self.site.recipes().wait_published()?;
                let what = match declines {
                    true => "Nothing was declined: look at the suggestion as it is now.",
                    false => "Nothing was saved. Here is the suggestion as it is now; your choices are kept where the same change is still there.",
                };
                self.again(
                    StatusCode::CONFLICT,
                    format!("{}. {what}", sentence(&moved.to_string()).trim_end_matches('.')),
                    false,
                )
            }
            Err(DomainError::NothingChanged) => self.again(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Accepting it would change nothing: your recipe has all of it already. Decline it, with a note saying so, instead.".to_owned(),
                false,
            ),
            Err(refused @ (DomainError::Unresolved(_) | DomainError::Content(_))) => self.again(
                StatusCode::UNPROCESSABLE_ENTITY,
                sentence(&refused.to_string()),
                false,
            ),
            Err(e) => Err(e.into()),
        }
    }
}

/// `POST /recipes/{slug}/suggestions/{n}/preview`: the recipe the accept
/// form, as sent, would save; for the form's live preview. Only the
/// recipe's author's.
pub(super) async fn review_preview(
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
