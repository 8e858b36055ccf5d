//! Forks that talk back, in the browser: a fork's cook brings in the
//! parent's changes (`/recipes/{slug}/bring-in`) or suggests the fork's
//! own to the parent (`/recipes/{slug}/suggest`), whose author reviews
//! them (`reviews`).
//!
//! A merge's page shows the merge of two versions, one of each recipe, and
//! its form carries both: the writer decides again on the latest value,
//! and if either recipe moved on, nothing is saved and the answer is 409
//! with the merge made again, each choice kept where its conflict is still
//! there. The page previews the whole merged recipe: its Preview button
//! shows the page again with it, and where scripts run the form is sent
//! to the page's `/preview` as the cook chooses, for the recipe alone.

use std::collections::BTreeMap;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};

use super::form_handling::{attempt_of, private_page, see_other, sentence};
use super::merge_forms::{
    bring_in_sender, version_field, Again, Form, Sent, Shown, CHANGED_MEANWHILE,
};
use super::recipes::parse_slug;
use super::session::Visitor;
use super::{Site, WebError};
use crate::domain::{
    pages, Blocked, BringIn, BringInShow, Change, Cook, DomainError, Slug, SuggestShow,
    VersionNumber, MAX_MESSAGE, MAX_NOTE,
};
use crate::views::form_fields::FieldErrors;
use crate::views::merges::{self, Chosen, Preview};
use crate::views::recipe_path;

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
            title: fork.content.title().to_owned(),
        }
        .into());
    }
    Ok(model)
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
    let preview = again.preview(&model.changes.merge, &mut merged, site);
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
pub(super) async fn bring_in_page(
    site: web::Data<Site>,
    visitor: Visitor,
    slug: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let slug = parse_slug(&slug)?;
    let cook = visitor.cook_or_login(&merges::bring_in_path(slug.as_str()))?;
    super::following::refresh_kept_parent(&site, cook, &slug).await?;
    bring_in_form(&site, &visitor, cook, &slug, Again::first())
}

/// `POST /recipes/{slug}/bring-in`: saves the merge the form showed, with
/// its conflicts settled as chosen; or, for its Preview button, shows the
/// page again with the merged recipe.
pub(super) async fn bring_in(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    slug: web::Path<String>,
    form: web::Form<Form>,
) -> Result<HttpResponse, WebError> {
    let (slug, cook) = bring_in_sender(&req, &visitor, &slug, &form)?;
    let shown = Shown::read(&form)?;
    let sent = Sent::read(&form)?;
    let preview = previews(&form)?;
    let note = bring_in_note(&form)?;
    let bringing = BringingIn {
        site: &site,
        visitor: &visitor,
        cook,
        slug: &slug,
        note,
        sent: &sent,
    };
    if preview {
        return bringing.preview(&shown);
    }
    if note.is_empty() {
        return bringing.again(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Say what this version does: history lists it.".to_owned(),
            false,
        );
    }
    let written = bringing.write(&req, &form, &shown).await?;
    bringing.answer(written)
}

/// Whether the bring-in form asks for its preview (`action`) rather than
/// to be saved; anything else is refused.
fn previews(form: &Form) -> Result<bool, WebError> {
    match form.get("action").map(String::as_str) {
        None | Some("save") => Ok(false),
        Some("preview") => Ok(true),
        Some(other) => Err(WebError::BadRequest(format!(
            "{other:?} is not something to do with a bring-in: save or preview"
        ))),
    }
}

/// The bring-in form's note, trimmed: what the new version does, for its
/// history. Refused when longer than a note may be.
fn bring_in_note(form: &Form) -> Result<&str, WebError> {
    let note = form.get("note").map(String::as_str).unwrap_or("").trim();
    if note.len() > MAX_NOTE {
        return Err(WebError::BadRequest(format!(
            "the note is longer than {MAX_NOTE} bytes"
        )));
    }
    Ok(note)
}

/// A bring-in form being answered, and what its page is shown again with.
struct BringingIn<'a> {
    site: &'a Site,
    visitor: &'a Visitor,
    cook: &'a Cook,
    slug: &'a Slug,
    note: &'a str,
    sent: &'a Sent,
}

impl BringingIn<'_> {
    /// The page again, with `why` (if anything) above it and the note and
    /// the choices sent kept; with the merged recipe if `preview`.
    fn again(
        &self,
        status: StatusCode,
        why: String,
        preview: bool,
    ) -> Result<HttpResponse, WebError> {
        let again = Again::sent(status, why, Some(self.note), self.sent, preview);
        bring_in_form(self.site, self.visitor, self.cook, self.slug, again)
    }

    /// The preview of the merge the form showed: if either recipe moved
    /// on, the page as it is now, and the cook is told.
    fn preview(&self, shown: &Shown) -> Result<HttpResponse, WebError> {
        let showing = match bring_in_model(self.site, self.cook, self.slug)? {
            BringIn::Changes(show) => shows(&show, shown),
            BringIn::InStep(_) => false,
        };
        match showing {
            true => self.again(StatusCode::OK, String::new(), true),
            false => self.again(StatusCode::CONFLICT, CHANGED_MEANWHILE.to_owned(), false),
        }
    }

    /// The merge the form showed, settled as it chose, written by the
    /// writer if neither recipe moved on; sent again, the same form
    /// writes nothing twice.
    async fn write(
        &self,
        req: &HttpRequest,
        form: &Form,
        shown: &Shown,
    ) -> Result<Result<(), DomainError>, WebError> {
        // Choices missing are the writer's to refuse, after what it checks
        // first: a form that moved on.
        let choices = self.sent.complete().unwrap_or_default();
        let csrf = form.get("csrf").map(String::as_str).unwrap_or("");
        // The form's fields in their name's order: what it said.
        let said = serde_json::to_vec(&form.iter().collect::<BTreeMap<_, _>>()).unwrap_or_default();
        let change =
            Change::by(self.cook.handle.as_str(), self.note).once(attempt_of(req, csrf, &[&said]));
        let to = self.slug.clone();
        let (based_on, since, upto) = (shown.based_on, shown.since, shown.upto);
        self.site
            .write(move |recipes| {
                recipes
                    .bring_in_shown(&to, based_on, since, upto, &choices, &change)
                    .map(drop)
            })
            .await
    }

    /// The answer to what the writer decided: the fork's page, or the
    /// page again saying why nothing was saved.
    fn answer(&self, written: Result<(), DomainError>) -> Result<HttpResponse, WebError> {
        let site = self.site;
        match written {
            Ok(()) => Ok(see_other(&recipe_path(self.slug.as_str())).finish()),
            Err(DomainError::Stale { newest, .. }) => {
                // Refused on the latest value, which may not be published yet.
                site.recipes().wait_published()?;
                self.again(
                    StatusCode::CONFLICT,
                    format!(
                        "Your recipe changed since this page was made (it is at version {newest} now): nothing was saved. Here are the changes again, merged onto it; your choices are kept where the same change is still there."
                    ),
                    false,
                )
            }
            Err(moved @ (DomainError::MergeMoved { .. } | DomainError::AgreedMeanwhile { .. })) => {
                site.recipes().wait_published()?;
                self.again(
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
                bring_in_form(site, self.visitor, self.cook, self.slug, Again::first())
            }
            Err(refused @ (DomainError::Unresolved(_) | DomainError::Content(_))) => self.again(
                StatusCode::UNPROCESSABLE_ENTITY,
                sentence(&refused.to_string()),
                false,
            ),
            Err(e) => Err(e.into()),
        }
    }
}

/// `POST /recipes/{slug}/bring-in/preview`: the recipe the bring-in form,
/// as sent, would save; for the form's live preview. Only its cook's.
pub(super) async fn bring_in_preview(
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

/// Whether `show` is the merge the form that sent `shown` showed.
fn shows(show: &BringInShow, shown: &Shown) -> bool {
    show.fork.newest() == shown.based_on
        && show.changes.base == shown.since
        && show.changes.upto == shown.upto
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
            title: model.fork.content.title().to_owned(),
        }
        .into());
    }
    let page = merges::suggest_page(&model, message, &visitor.form_token(), errors);
    Ok(private_page(site, visitor, status, page))
}

/// `GET /recipes/{slug}/suggest`: the fork's cook's form.
pub(super) async fn suggest_page(
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
pub(super) async fn suggest(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    slug: web::Path<String>,
    form: web::Form<Form>,
) -> Result<HttpResponse, WebError> {
    visitor.check_form(&req, form.get("csrf").map(String::as_str).unwrap_or(""))?;
    let slug = parse_slug(&slug)?;
    let cook = visitor.cook_or_login(&suggest_path(&slug))?;
    let based_on = version_field(&form, "based_on")?;
    let message = form.get("message").map(String::as_str).unwrap_or("").trim();
    let suggesting = Suggesting {
        site: &site,
        visitor: &visitor,
        cook,
        slug: &slug,
        message,
    };
    if let Some(why) = message_refused(message) {
        return suggesting.again(StatusCode::UNPROCESSABLE_ENTITY, why);
    }
    // A fork's parent never changes: read before the write, for the
    // address to go to after it. What the page would refuse is refused
    // before the limit counts it: only suggestions made count (the
    // writer decides again, on the latest value).
    let shown = pages::suggest_show(&site.snapshot(), &slug)?;
    let change = suggestion_change(&req, &form, cook, message);
    if let Err(why) = counted(&site, &shown, cook, based_on) {
        return suggesting.again(StatusCode::TOO_MANY_REQUESTS, sentence(&why));
    }
    let (from, message) = (slug.clone(), message.to_owned());
    let written = site
        .write(move |recipes| recipes.suggest(&from, based_on, &message, &change))
        .await?;
    suggesting.answer(written.map(|(number, _)| number), &shown.parent.slug)
}

/// Why a suggestion's message is refused, if it is: it says nothing, or
/// too much.
fn message_refused(message: &str) -> Option<String> {
    if message.is_empty() {
        return Some("Say what your changes do and why: the author reads it first.".to_owned());
    }
    (message.len() > MAX_MESSAGE)
        .then(|| format!("The message is longer than {MAX_MESSAGE} bytes."))
}

/// The suggestion's change, by `cook`. Sent again (its first answer
/// lost), the same form makes no second suggestion: the writer finds its
/// attempt and answers as before.
fn suggestion_change(req: &HttpRequest, form: &Form, cook: &Cook, message: &str) -> Change {
    let csrf = form.get("csrf").map(String::as_str).unwrap_or("");
    let based_on = form.get("based_on").map_or(&b""[..], |v| v.as_bytes());
    let attempt = attempt_of(req, csrf, &[based_on, message.as_bytes()]);
    Change::by(cook.handle.as_str(), "suggested its changes").once(attempt)
}

/// The suggestion counted against the cook's limit and the recipe's, or
/// why the limit refuses it. A form the page would refuse goes to the
/// writer all the same, not counted by the limit: it may be this very
/// form sent again (its first answer lost), which the writer answers with
/// the suggestion it made; else the writer refuses it as the page would,
/// writing nothing.
fn counted(
    site: &Site,
    shown: &SuggestShow,
    cook: &Cook,
    based_on: VersionNumber,
) -> Result<(), String> {
    if refused_before(shown, cook, based_on).is_some() {
        return Ok(());
    }
    site.suggestions_sent()
        .start(cook.handle.as_str(), shown.parent.slug.as_str())
}

/// A suggest form being answered, and what its page is shown again with.
struct Suggesting<'a> {
    site: &'a Site,
    visitor: &'a Visitor,
    cook: &'a Cook,
    slug: &'a Slug,
    message: &'a str,
}

impl Suggesting<'_> {
    /// The form again, with the message sent and `why` above it.
    fn again(&self, status: StatusCode, why: String) -> Result<HttpResponse, WebError> {
        let errors = FieldErrors::one("", why);
        suggest_form(
            self.site,
            self.visitor,
            self.cook,
            self.slug,
            status,
            self.message,
            &errors,
        )
    }

    /// The answer to what the writer decided: the suggestion's page, under
    /// the `parent` it was made to, or the form again saying why nothing
    /// was made.
    fn answer(
        &self,
        written: Result<u32, DomainError>,
        parent: &Slug,
    ) -> Result<HttpResponse, WebError> {
        match written {
            // Offered to a recipe on another site, which numbers it there:
            // back to the fork, whose page says it was sent.
            Ok(_) if parent.is_elsewhere() => {
                Ok(see_other(&recipe_path(self.slug.as_str())).finish())
            }
            Ok(number) => Ok(see_other(&merges::suggestion_path(parent.as_str(), number)).finish()),
            Err(DomainError::Stale { newest, .. }) => {
                self.site.recipes().wait_published()?;
                self.again(
                    StatusCode::CONFLICT,
                    format!("Your recipe changed since this page was made (it is at version {newest} now): here are its changes again."),
                )
            }
            Err(
                refused @ (DomainError::NothingChanged
                | DomainError::DeclinedAlready { .. }
                | DomainError::TakenInPart { .. }
                | DomainError::AlreadySuggested { .. }
                | DomainError::Retired { .. }),
            ) => {
                self.site.recipes().wait_published()?;
                let why = match refused {
                    DomainError::NothingChanged => {
                        "Your recipe has no changes its parent lacks: there is nothing to suggest."
                            .to_owned()
                    }
                    other => sentence(&other.to_string()),
                };
                self.again(StatusCode::CONFLICT, why)
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// Why the suggest form's page already refuses what was sent, as the
/// writer would say it: not the cook's fork, a stale form, or a fork that
/// cannot suggest now.
fn refused_before(
    shown: &SuggestShow,
    cook: &Cook,
    based_on: VersionNumber,
) -> Option<DomainError> {
    let fork = &shown.fork;
    if fork.author.as_deref() != Some(cook.handle.as_str()) {
        return Some(DomainError::NotAuthor {
            slug: fork.slug.to_string(),
            title: fork.content.title().to_owned(),
        });
    }
    if based_on != fork.newest() {
        return Some(DomainError::Stale {
            slug: fork.slug.to_string(),
            based_on,
            newest: fork.newest(),
        });
    }
    Some(match shown.blocked.as_ref()? {
        Blocked::Open(number) => DomainError::AlreadySuggested {
            slug: fork.slug.to_string(),
            number: *number,
        },
        Blocked::NothingToSuggest => DomainError::NothingChanged,
        Blocked::Declined(number) => DomainError::DeclinedAlready { number: *number },
        Blocked::TakenInPart(number) => DomainError::TakenInPart { number: *number },
        Blocked::ParentRetired => DomainError::Retired {
            slug: shown.parent.slug.to_string(),
            title: shown.parent.content.title().to_owned(),
        },
    })
}
