//! `/import`: a logged-in cook brings in a recipe from another site, by its
//! address (fetched by the server, which refuses private addresses) or by
//! pasting the page. What was read is shown in the recipe form, with its
//! live preview, to be checked and changed; nothing is saved until the cook
//! brings it in from there (`recipe_writes::import_save`), and the new
//! recipe's lineage starts at that page. A page whose recipe lacks its
//! ingredients or its steps is shown saying so, to be finished by hand.
//!
//! The picture the page names is fetched and stored when the recipe is
//! brought in, as one the recipe form fetches, so that no page of the
//! site shows a picture from the other site. A cook who brings a recipe in
//! wants the recipe: one whose picture cannot be fetched still comes in,
//! without it, and the answer says so and why.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;

use super::form_handling::{private_page, sentence};
use super::recipe_writes;
use super::session::Visitor;
use super::submission::{read_form, OversizedPicture};
use super::{Site, WebError};
use crate::domain::Cook;
use crate::import::{self, FetchPlace, ImportError, Imported, Partial, MAX_PAGE_BYTES};
use crate::views::form_fields::FieldErrors;
use crate::views::import_form;
use crate::views::recipe_form::{ImportShown, RecipeFields};

/// Every field defaults to empty, so that a form without its token is
/// refused for that (403) before anything else is read.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct ImportForm {
    csrf: String,
    url: String,
    html: String,
}

pub(super) async fn page(
    site: web::Data<Site>,
    visitor: Visitor,
) -> Result<HttpResponse, WebError> {
    visitor.cook_or_login("/import")?;
    let fields = import_form::Fields::default();
    let page = import_form::page(&fields, &FieldErrors::new(), &visitor.form_token());
    Ok(private_page(&site, &visitor, StatusCode::OK, page))
}

pub(super) async fn submit(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    payload: web::Payload,
) -> Result<HttpResponse, WebError> {
    // Only a cook's form is read: a visitor is sent to log in first.
    let cook = visitor.cook_or_login("/import")?;
    // A pasted page may be as large as a fetched one.
    let (form, _) = read_form::<ImportForm>(
        &req,
        payload,
        MAX_PAGE_BYTES as usize,
        OversizedPicture::Refuse,
    )
    .await?;
    visitor.check_form(&req, &form.csrf)?;
    let fields = import_form::Fields {
        url: form.url.trim().to_owned(),
        html: form.html,
    };
    match read_counted(&site, cook, &fields).await {
        Ok((imported, missing)) => Ok(shown_imported(&site, &visitor, &imported, missing)),
        Err(refused) => Ok(refused.answer(&site, &visitor, &fields)),
    }
}

/// Why the import form is shown again, with what was sent, instead of a
/// recipe read.
enum Refused {
    /// No place to fetch the page in, for now: 503, to try again soon.
    Busy(FieldErrors),
    /// The form's mistakes, or the cook's imports over their limit.
    Form(StatusCode, FieldErrors),
}

impl Refused {
    fn unprocessable(errors: FieldErrors) -> Refused {
        Refused::Form(StatusCode::UNPROCESSABLE_ENTITY, errors)
    }

    /// The import form again, with `fields` as sent and the errors.
    fn answer(self, site: &Site, visitor: &Visitor, fields: &import_form::Fields) -> HttpResponse {
        let page = |status, errors: &FieldErrors| {
            let page = import_form::page(fields, errors, &visitor.form_token());
            private_page(site, visitor, status, page)
        };
        match self {
            Refused::Form(status, errors) => page(status, &errors),
            Refused::Busy(errors) => {
                let mut busy = page(StatusCode::SERVICE_UNAVAILABLE, &errors);
                busy.headers_mut().insert(
                    actix_web::http::header::RETRY_AFTER,
                    actix_web::http::header::HeaderValue::from_static("10"),
                );
                busy
            }
        }
    }
}

/// The recipe the form points at, read for `cook` once there is a place
/// to fetch it in and the import is counted: whole, or without its
/// ingredients or its steps (which `missing` names).
async fn read_counted(
    site: &Site,
    cook: &Cook,
    fields: &import_form::Fields,
) -> Result<(Imported, Option<&'static str>), Refused> {
    let place = fetch_place(site, fields)?;
    // Counted before the page is fetched or read, whatever comes of it.
    if let Err(why) = site.imports().start(cook.handle.as_str()) {
        return Err(Refused::Form(
            StatusCode::TOO_MANY_REQUESTS,
            FieldErrors::one("", sentence(&why)),
        ));
    }
    match read(site, fields, place).await {
        Ok(Ok(imported)) => Ok((imported, None)),
        Ok(Err(partial)) => Ok((partial.imported, Some(partial.missing))),
        Err(errors) => Err(Refused::unprocessable(errors)),
    }
}

/// A place for the fetch, when the form gives an address and no page,
/// taken first: when the site is fetching all the pages it may at once,
/// the cook is told to try again (503), and nothing of theirs is counted.
/// An address no retry can help is refused first.
fn fetch_place(site: &Site, fields: &import_form::Fields) -> Result<Option<FetchPlace>, Refused> {
    let fetches = fields.html.trim().is_empty() && !fields.url.is_empty();
    if !fetches {
        return Ok(None);
    }
    let on_url = |why: &dyn std::fmt::Display| FieldErrors::one("url", sentence(&why.to_string()));
    site.fetcher()
        .check(&fields.url)
        .map_err(|why| Refused::unprocessable(on_url(&why)))?;
    match site.fetcher().place() {
        Ok(place) => Ok(Some(place)),
        Err(why) => Err(Refused::Busy(on_url(&why))),
    }
}

/// The recipe as read, in the recipe form, to be checked and changed, then
/// brought in (`recipe_writes::import_save`): nothing is saved yet. A part
/// the page lacked (`missing`) is the form's error, to be written in.
fn shown_imported(
    site: &Site,
    visitor: &Visitor,
    imported: &Imported,
    missing: Option<&'static str>,
) -> HttpResponse {
    let source = &imported.source;
    let read_from = imported.read_from();
    let shown = ImportShown {
        source_url: &source.url,
        source_name: &source.name,
        reading: &read_from,
        missing,
    };
    let mut form = RecipeFields::of(&imported.content);
    // The page's picture is fetched when the recipe is brought in.
    form.image_was.clear();
    form.picture_alt = imported.content.title().to_owned();
    // The version's note says where, and how it was read, as the CLI's.
    form.note = format!("Brought in from {}, read from {read_from}", source.name);
    let errors = match missing {
        Some(missing) => recipe_writes::missing_errors(
            missing,
            format!("The page had no {missing} this site could read: write them in from the page."),
        ),
        None => FieldErrors::new(),
    };
    recipe_writes::import_page(site, visitor, StatusCode::OK, &shown, &form, &errors)
}

/// The recipe the form points at: the pasted page's, or the fetched one's
/// (in `place`, taken for it).
async fn read(
    site: &Site,
    fields: &import_form::Fields,
    place: Option<FetchPlace>,
) -> Result<Result<Imported, Box<Partial>>, FieldErrors> {
    if !fields.html.trim().is_empty() {
        let url = import::page_address(&fields.url, &fields.html).ok_or_else(|| {
            FieldErrors::one(
                "url",
                "Give the page's address too: the new recipe's lineage starts there.",
            )
        })?;
        let html = fields.html.clone();
        // Off the workers, as a fetch is: a large page takes a while to read.
        let read = web::block(move || import::from_html(&html, &url))
            .await
            .map_err(|e| FieldErrors::one("", sentence(&e.to_string())))?;
        return found(read, "html");
    }
    let Some(place) = place else {
        return Err(FieldErrors::one(
            "url",
            "Give the recipe's address, or paste its page.",
        ));
    };
    let fetcher = site.fetcher().clone();
    let address = fields.url.clone();
    // Off the workers: a slow site must not hold one.
    let fetched = web::block(move || fetcher.fetch_in(place, &address))
        .await
        .map_err(|e| FieldErrors::one("", sentence(&e.to_string())))?;
    let (url, html) = fetched.map_err(|e| FieldErrors::one("url", sentence(&e.to_string())))?;
    let read = web::block(move || import::from_html(&html, &url))
        .await
        .map_err(|e| FieldErrors::one("", sentence(&e.to_string())))?;
    found(read, "url")
}

/// A page's reading: its recipe, or one found without its ingredients or
/// its steps (shown to be finished by hand), or why there is none, next to
/// `field`.
fn found(
    read: Result<Imported, ImportError>,
    field: &'static str,
) -> Result<Result<Imported, Box<Partial>>, FieldErrors> {
    match read {
        Ok(imported) => Ok(Ok(imported)),
        Err(ImportError::Incomplete(partial)) => Ok(Err(partial)),
        Err(e) => Err(FieldErrors::one(field, sentence(&e.to_string()))),
    }
}
