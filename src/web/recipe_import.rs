//! `/import`: a logged-in cook brings in a recipe from another site, by its
//! address (fetched by the server, which refuses private addresses) or by
//! pasting the page. The new recipe's lineage starts at that page.
//!
//! The picture the page names is fetched and stored as one the recipe form
//! fetches (`recipe_writes::fetch_picture`), so that no page of the site
//! shows a picture from the other site. A cook who brings a recipe in
//! wants the recipe: one whose picture cannot be fetched still comes in,
//! without it (and without its address, so that giving the address again
//! in the recipe form fetches it), and the answer says so and why.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;

use super::form_handling::{attempt_of, private_page, see_other, sentence};
use super::recipe_writes::{fetch_picture, Unfetched};
use super::session::Visitor;
use super::submission::{read_form, OversizedPicture};
use super::{Site, WebError};
use crate::domain::{Attempt, Change, Cook, Slug};
use crate::import::{self, FetchPlace, Imported, MAX_PAGE_BYTES};
use crate::views::form_fields::FieldErrors;
use crate::views::{import_form, recipe_path};

/// Every field defaults to empty, so that a form without its token is
/// refused for that (403) before anything else is read.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ImportForm {
    csrf: String,
    url: String,
    html: String,
}

pub async fn page(site: web::Data<Site>, visitor: Visitor) -> Result<HttpResponse, WebError> {
    visitor.cook_or_login("/import")?;
    let fields = import_form::Fields::default();
    let page = import_form::page(&fields, &FieldErrors::new(), &visitor.form_token());
    Ok(private_page(&site, &visitor, StatusCode::OK, page))
}

pub async fn submit(
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
    let attempt = attempt_of(
        &req,
        &form.csrf,
        &[form.url.as_bytes(), form.html.as_bytes()],
    );
    let fields = import_form::Fields {
        url: form.url.trim().to_owned(),
        html: form.html,
    };
    let answer = |status: StatusCode, errors: FieldErrors| {
        let page = import_form::page(&fields, &errors, &visitor.form_token());
        Ok(private_page(&site, &visitor, status, page))
    };
    let refused = |errors: FieldErrors| answer(StatusCode::UNPROCESSABLE_ENTITY, errors);
    // A place for the fetch first: when the site is fetching all the pages
    // it may at once, the cook is told to try again (503), and nothing of
    // theirs is counted. An address no retry can help is refused first.
    let fetches = fields.html.trim().is_empty() && !fields.url.is_empty();
    if fetches {
        if let Err(why) = site.fetcher().check(&fields.url) {
            return refused(FieldErrors::one("url", sentence(&why.to_string())));
        }
    }
    let place = match fetches {
        true => match site.fetcher().place() {
            Ok(place) => Some(place),
            Err(why) => {
                let mut busy = answer(
                    StatusCode::SERVICE_UNAVAILABLE,
                    FieldErrors::one("url", sentence(&why.to_string())),
                )?;
                busy.headers_mut().insert(
                    actix_web::http::header::RETRY_AFTER,
                    actix_web::http::header::HeaderValue::from_static("10"),
                );
                return Ok(busy);
            }
        },
        false => None,
    };
    // Counted before the page is fetched or read, whatever comes of it.
    if let Err(why) = site.imports().start(cook.handle.as_str()) {
        return answer(
            StatusCode::TOO_MANY_REQUESTS,
            FieldErrors::one("", sentence(&why)),
        );
    }
    let mut imported = match read(&site, &fields, place).await {
        Ok(imported) => imported,
        Err(errors) => return refused(errors),
    };
    let unfetched = bring_picture(&site, cook, &mut imported).await;
    let title = imported.content.title.clone();
    let slug = match bring_in(&site, cook, imported, attempt).await {
        Ok(slug) => slug,
        Err(WebError::BadRequest(why)) => return refused(FieldErrors::one("", sentence(&why))),
        Err(e) => return Err(e),
    };
    let path = recipe_path(slug.as_str());
    let Some((address, why)) = unfetched else {
        return Ok(see_other(&path).finish());
    };
    // Written, so 201 and where; the page says what did not come in.
    let without = import_form::Unfetched {
        title: &title,
        path: &path,
        address: &address,
        why: &sentence(why.why()),
    };
    let mut page = private_page(
        &site,
        &visitor,
        StatusCode::CREATED,
        import_form::without_picture(&without),
    );
    page.headers_mut().insert(
        actix_web::http::header::LOCATION,
        actix_web::http::header::HeaderValue::try_from(path.as_str())
            .map_err(|e| WebError::Internal(Box::new(e)))?,
    );
    Ok(page)
}

/// The picture the page names, fetched and stored, in `imported`'s
/// content (what it shows, in words: the recipe's title); or, when it
/// cannot be, its address taken out of the content and returned with why.
async fn bring_picture(
    site: &Site,
    cook: &Cook,
    imported: &mut Imported,
) -> Option<(String, Unfetched)> {
    let address = imported.content.image.clone()?;
    match fetch_picture(site, cook, address.clone()).await {
        Ok(mut picture) => {
            picture.alt = imported.content.title.clone();
            imported.content.picture = Some(picture);
            None
        }
        Err(why) => {
            imported.content.image = None;
            Some((address, why))
        }
    }
}

/// The recipe the form points at: the pasted page's, or the fetched one's
/// (in `place`, taken for it).
async fn read(
    site: &Site,
    fields: &import_form::Fields,
    place: Option<FetchPlace>,
) -> Result<Imported, FieldErrors> {
    if !fields.html.trim().is_empty() {
        let url = import::page_address(&fields.url, &fields.html).ok_or_else(|| {
            FieldErrors::one(
                "url",
                "Give the page's address too: the new recipe's lineage starts there.",
            )
        })?;
        let html = fields.html.clone();
        // Off the workers, as a fetch is: a large page takes a while to read.
        return web::block(move || import::from_html(&html, &url))
            .await
            .map_err(|e| FieldErrors::one("", sentence(&e.to_string())))?
            .map_err(|e| FieldErrors::one("html", sentence(&e.to_string())));
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
    web::block(move || import::from_html(&html, &url))
        .await
        .map_err(|e| FieldErrors::one("", sentence(&e.to_string())))?
        .map_err(|e| FieldErrors::one("url", sentence(&e.to_string())))
}

/// Writes the imported recipe for `cook`; returns its slug.
async fn bring_in(
    site: &Site,
    cook: &Cook,
    imported: Imported,
    attempt: Attempt,
) -> Result<Slug, WebError> {
    let slug = Slug::from_title(&imported.content.title);
    let change = Change::by(
        cook.handle.as_str(),
        &format!(
            "Brought in from {}, read from {}",
            imported.source.name,
            imported.reading.as_str()
        ),
    )
    .once(attempt);
    let (slug, _) = site
        .write(move |recipes| recipes.import(&slug, imported.content, &imported.source, &change))
        .await??;
    Ok(slug)
}
