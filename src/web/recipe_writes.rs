//! Writing recipes in the browser: new, edit, fork and retire.
//!
//! Each form works without JavaScript, keeps what was typed when it shows
//! an error, and answers a success with a 303 to the page it changed. An
//! edit carries the version it was based on; if the recipe moved on, the
//! save is refused with 409, the changes since, and the person's text kept.
//! Only a recipe's author may edit or retire it.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;

use super::blocking::Place as DecodePlace;
use super::form_handling::{attempt_of, private_page, see_other, sentence};
use super::rate_limits;
use super::recipes::parse_slug;
use super::session::Visitor;
use super::submission::OversizedPicture::{self, ReadPast};
use super::submission::{read_recipe_form, Upload};
use super::{Site, WebError};
use crate::domain::pages::{self, Source};
use crate::domain::pictures::{Picture, PictureError};
use crate::domain::{
    Attempt, Change, Content, ContentDraft, ContentError, ContentField, Cook, DomainError, Recipe,
    Slug, VersionNumber, FIELDS, MAX_NOTE,
};
use crate::views::form_fields::FieldErrors;
use crate::views::recipe_form::{self, Purpose, RecipeFields};
use crate::views::{self, recipe_path};

/// Every field defaults to empty, so that a form without its token is
/// refused for that (403) before anything else is read.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct RecipeForm {
    csrf: String,
    #[serde(default)]
    based_on: String,
    #[serde(default)]
    version: String,
    #[serde(flatten)]
    fields: RecipeFields,
}

/// Reads the form's fields into content to save, or says which fields are
/// wrong; saving also needs the note that says what the version changes.
pub(super) fn content_of(
    f: &RecipeFields,
    picture: Option<Picture>,
) -> Result<Content, FieldErrors> {
    read_content(f, picture, true)
}

/// Reads the form's fields into content to preview. The note is not asked
/// for: it goes to the history, not the page, and the cook writes it last,
/// so asking for it would leave the preview an error until the form is done.
fn preview_content_of(f: &RecipeFields, picture: Option<Picture>) -> Result<Content, FieldErrors> {
    read_content(f, picture, false)
}

/// A picture the form brings, stored; or the errors that say why not, on
/// the field it came from. `None` when the form brings none.
type Brought = Option<Result<Picture, FieldErrors>>;

/// The picture the form brings: a file sent with it (`store_upload`), or
/// else the picture at its `image` address when that address is new or
/// changed since the form was filled (`fetch_picture`; why it could not
/// be, next to the `image` field). On a fetch the
/// form's `image_was` becomes the address, so a form shown again, which
/// holds the picture already, does not fetch it twice. `Err`: turned away
/// for want of a place (the form's error, for a 503), nothing stored.
async fn store_picture(
    site: &Site,
    cook: &Cook,
    upload: Option<Upload>,
    fields: &mut RecipeFields,
) -> Result<Brought, FieldErrors> {
    if upload.is_some() {
        let stored = store_upload(site, cook, upload).await?;
        return Ok(stored.map(|stored| stored.map_err(|e| refusal("picture_file", e))));
    }
    let address = fields.scalar("image").trim();
    let is_web_address = address.starts_with("https://") || address.starts_with("http://");
    // Another kind of address is the form's error (`read_content`).
    if !is_web_address || address == fields.image_was.trim() {
        return Ok(None);
    }
    let address = address.to_owned();
    let on = |field, why: &str| FieldErrors::one(field, sentence(why));
    match fetch_picture(site, cook, address.clone()).await {
        Ok(picture) => {
            fields.image_was = address;
            Ok(Some(Ok(picture)))
        }
        Err(busy @ Unfetched::Busy(_)) => Err(on("image", busy.why())),
        Err(refused @ Unfetched::Refused(_)) => Ok(Some(Err(on("image", refused.why())))),
        Err(other) => Ok(Some(Err(on("", other.why())))),
    }
}

/// Why the picture at an address was not stored, in a sentence without
/// its full stop (for `form_handling::sentence`).
pub(super) enum Unfetched {
    /// No place to fetch or decode it in, for now: try again (a 503).
    Busy(String),
    /// The address, or what it answered, in the fetcher's words or the
    /// picture check's: the `image` field's error.
    Refused(String),
    /// Anything else: the cook has sent too many pictures for now, or the
    /// store failed.
    Other(String),
}

impl Unfetched {
    /// The sentence, whatever the kind.
    pub(super) fn why(&self) -> &str {
        let (Unfetched::Busy(why) | Unfetched::Refused(why) | Unfetched::Other(why)) = self;
        why
    }
}

/// The picture at `address`, fetched off the workers by the site's
/// `Fetcher` (public addresses on the web's ports, its deadline, its
/// redirects checked, in one of its `MAX_FETCHES` places) and stored as an
/// uploaded file is (`add_picture` in a decode place), for the recipe form
/// and for an import. Counted against the cook's pictures an hour once it
/// has its place to be fetched, before it is: a fetch costs the site
/// whatever comes of it, as an import does.
pub(super) async fn fetch_picture(
    site: &Site,
    cook: &Cook,
    address: String,
) -> Result<Picture, Unfetched> {
    let refused = |why: &dyn std::fmt::Display| Unfetched::Refused(why.to_string());
    let fetcher = site.fetcher().clone();
    fetcher.check(&address).map_err(|why| refused(&why))?;
    let place = fetcher
        .place()
        .map_err(|why| Unfetched::Busy(why.to_string()))?;
    site.pictures_sent()
        .start(cook.handle.as_str())
        .map_err(Unfetched::Other)?;
    let bytes = web::block(move || fetcher.fetch_picture_in(place, &address))
        .await
        .map_err(|e| Unfetched::Other(format!("the picture could not be fetched: {e}")))?
        .map_err(|why| refused(&why))?;
    let place = site
        .picture_decodes()
        .place()
        .await
        .map_err(Unfetched::Busy)?;
    add_picture_in(site, cook, place, bytes)
        .await
        .map_err(|e| match e {
            DomainError::BadPicture(why) => refused(&why),
            e => Unfetched::Other(e.to_string()),
        })
}

/// A picture refused, as the form says it: why it is no picture next to
/// `field`, anything else at the top.
fn refusal(field: &'static str, error: DomainError) -> FieldErrors {
    match error {
        DomainError::BadPicture(why) => FieldErrors::one(field, sentence(&why.to_string())),
        e => FieldErrors::one("", sentence(&e.to_string())),
    }
}

/// `bytes` stored as a picture, decoded in `place`, on the blocking pool.
async fn add_picture_in(
    site: &Site,
    cook: &Cook,
    place: DecodePlace,
    bytes: Vec<u8>,
) -> Result<Picture, DomainError> {
    let recipes = site.recipes().clone();
    let sender = cook.handle.to_string();
    place
        .run(move || recipes.add_picture(&bytes, &sender))
        .await
        .unwrap_or_else(|e| {
            Err(DomainError::Invalid(format!(
                "the picture could not be stored: {e}"
            )))
        })
}

/// A file sent with the form, stored as a picture off the workers
/// (decoding and encoding take a while) in one of the site's decode
/// places (`rate_limits::PictureDecodes`); `Ok(None)` when none was sent. One
/// too large to store was dropped as it was read. Each counts against the
/// cook's pictures an hour, stored or not, once it has its place: one
/// turned away for want of a place (`Err`: the form's error, for a 503)
/// was neither stored nor counted.
async fn store_upload(
    site: &Site,
    cook: &Cook,
    upload: Option<Upload>,
) -> Result<Option<Result<Picture, DomainError>>, FieldErrors> {
    let Some(upload) = upload else {
        return Ok(None);
    };
    let count = || {
        site.pictures_sent()
            .start(cook.handle.as_str())
            .map_err(DomainError::Invalid)
    };
    let bytes = match upload {
        Upload::File(bytes) => bytes,
        Upload::TooLarge(size) => {
            let too_large = DomainError::BadPicture(PictureError::TooLarge(size));
            return Ok(Some(Err(count().err().unwrap_or(too_large))));
        }
    };
    let place = site
        .picture_decodes()
        .place()
        .await
        .map_err(|why| FieldErrors::one("picture_file", sentence(&why)))?;
    if let Err(refused) = count() {
        return Ok(Some(Err(refused)));
    }
    Ok(Some(add_picture_in(site, cook, place, bytes).await))
}

/// The picture the form asks for: one it brings (stored now, durably, and
/// named in `fields` so that a form shown again keeps it), the one the
/// recipe had, or none. Its words come from the form. The picture it
/// names is read off the workers (it may be in the log's database); `Err`
/// when it could not be read for now (a 503), not for the form's fault.
async fn picture_of(
    site: &Site,
    fields: &mut RecipeFields,
    brought: Brought,
) -> Result<Result<Option<Picture>, FieldErrors>, WebError> {
    let stored = match brought {
        Some(Err(errors)) => return Ok(Err(errors)),
        Some(Ok(picture)) => {
            fields.picture = picture.hash.clone();
            fields.remove_picture.clear();
            Some(picture)
        }
        None if fields.remove_picture == "on" || fields.picture.is_empty() => None,
        None => {
            let (recipes, hash) = (site.recipes().clone(), fields.picture.trim().to_owned());
            let found =
                super::blocking::off_workers(site, move || recipes.picture_kept(&hash)).await?;
            match found {
                Ok(Some(picture)) => Some(picture),
                Ok(None) => {
                    fields.picture.clear();
                    return Ok(Err(FieldErrors::one(
                        "picture_file",
                        "That picture is not on this site any more: choose the file again.",
                    )));
                }
                Err(e) if e.is_unavailable() => return Err(e.into()),
                Err(e) => return Ok(Err(FieldErrors::one("", sentence(&e.to_string())))),
            }
        }
    };
    let Some(mut picture) = stored else {
        return Ok(Ok(None));
    };
    picture.alt = fields.picture_alt.trim().to_owned();
    if picture.alt.is_empty() {
        return Ok(Err(FieldErrors::one(
            "picture_alt",
            "Say in a few words what the picture shows, for those who cannot see it.",
        )));
    }
    Ok(Ok(Some(picture)))
}

/// The content the form says, checked by the domain with every mistake at
/// once, each next to its field. The form checks only what is its own:
/// that a number is one, that a picture's address is one it can fetch,
/// and the note, which is not content.
fn read_content(
    f: &RecipeFields,
    picture: Option<Picture>,
    needs_note: bool,
) -> Result<Content, FieldErrors> {
    let mut errors = FieldErrors::new();
    let mut content = ContentDraft {
        title: f.title.clone(),
        ingredients: f.ingredients.lines().map(str::to_owned).collect(),
        steps: crate::domain::content::steps_of_text(&f.steps),
        tags: f.tags.split(',').map(str::to_owned).collect(),
        picture,
        ..ContentDraft::default()
    };
    for field in FIELDS {
        if let Err(why) = field.from_form(&mut content, f.scalar(field.name)) {
            errors.add(field.name, why);
        }
    }
    let image = f.scalar("image").trim();
    let is_web_address = image.starts_with("https://") || image.starts_with("http://");
    if !image.is_empty() && !is_web_address {
        errors.add("image", "A picture's address starts with https://.");
    }
    if needs_note && f.note.trim().is_empty() {
        errors.add("note", "Say in a line what this version changes.");
    }
    if needs_note && f.note.trim().len() > MAX_NOTE {
        errors.add(
            "note",
            format!("Say in at most {MAX_NOTE} bytes what this version changes."),
        );
    }
    match Content::parse(content) {
        Ok(content) if errors.is_empty() => Ok(content),
        Ok(_) => Err(errors),
        Err(mistakes) => {
            for mistake in mistakes {
                let field = form_field(mistake.field());
                // A field the form found wrong keeps the form's words.
                if errors.get(field).is_none() {
                    errors.add(field, sentence(&mistake.to_string()));
                }
            }
            Err(errors)
        }
    }
}

/// The form's field for a part of the content.
fn form_field(field: ContentField) -> &'static str {
    match field {
        ContentField::Title => "title",
        ContentField::Ingredients => "ingredients",
        ContentField::Steps => "steps",
        ContentField::Tags => "tags",
        ContentField::Picture => "picture_file",
        ContentField::PictureAlt => "picture_alt",
        ContentField::Field(name) => name,
    }
}

/// The form's error for content the domain refuses, next to its field.
fn content_refused(why: &ContentError) -> FieldErrors {
    FieldErrors::one(form_field(why.field()), sentence(&why.to_string()))
}

/// `cook`'s change, saved once for `attempt`.
fn change(cook: &Cook, note: &str, attempt: Attempt) -> Change {
    Change::by(cook.handle.as_str(), note).once(attempt)
}

/// The attempt a recipe form's send is saved under (`attempt_of`): the
/// form as it was sent, the version it names and the picture file with it
/// included, before anything (a picture stored, an address fetched) is
/// made of it.
fn recipe_attempt(req: &HttpRequest, form: &RecipeForm, upload: &Option<Upload>) -> Attempt {
    // Strings and a map of strings: serialising cannot fail.
    let fields = serde_json::to_vec(&form.fields).unwrap_or_default();
    let file: &[u8] = match upload {
        Some(Upload::File(bytes)) => bytes,
        Some(Upload::TooLarge(_)) | None => &[],
    };
    let said = [
        form.based_on.as_bytes(),
        form.version.as_bytes(),
        &fields,
        file,
    ];
    attempt_of(req, &form.csrf, &said)
}

/// The recipe at `slug`, if `cook` wrote it; another cook is refused, in
/// the domain's words. The writer decides who may change a recipe
/// (`Recipes::edit`, `Recipes::retire`); this is the door: the edit form is
/// not shown to another cook, nor their picture decoded for nothing.
fn authored(site: &Site, slug: &Slug, cook: &Cook) -> Result<Recipe, WebError> {
    let recipe = site.snapshot().current(slug)?;
    if recipe.author.as_deref() != Some(cook.handle.as_str()) {
        return Err(DomainError::NotAuthor {
            slug: slug.to_string(),
            title: recipe.content.title().to_owned(),
        }
        .into());
    }
    Ok(recipe)
}

fn form_page(
    site: &Site,
    visitor: &Visitor,
    status: StatusCode,
    purpose: &Purpose,
    fields: &RecipeFields,
    errors: &FieldErrors,
) -> HttpResponse {
    let page = recipe_form::page(purpose, fields, errors, &visitor.form_token(), None);
    private_page(site, visitor, status, page)
}

pub(super) async fn new_page(
    site: web::Data<Site>,
    visitor: Visitor,
) -> Result<HttpResponse, WebError> {
    visitor.cook_or_login("/recipes/new")?;
    let fields = RecipeFields {
        note: "First version".to_owned(),
        ..RecipeFields::default()
    };
    Ok(form_page(
        &site,
        &visitor,
        StatusCode::OK,
        &Purpose::New,
        &fields,
        &FieldErrors::new(),
    ))
}

/// What a recipe form's POST led to, short of an error.
enum Outcome {
    /// Written: go to this page.
    Saved(String),
    /// Not written: the form again, with these errors.
    Refused(StatusCode, FieldErrors),
    /// Not written, because the recipe moved on since the version edited.
    Stale {
        based_on: VersionNumber,
        newest: VersionNumber,
    },
    /// Not written, because the picture found no place to be decoded
    /// within the wait: the form again (503, and when to try again).
    Busy(FieldErrors),
    /// Imported, but without the page's picture, which could not be
    /// fetched: 201, with a page that says so.
    WithoutPicture(WithoutPicture),
}

/// An imported recipe, written, whose page's picture was not: its title
/// and page, and the picture's address and why.
struct WithoutPicture {
    title: String,
    path: String,
    address: String,
    why: String,
}

impl Outcome {
    fn unprocessable(errors: FieldErrors) -> Outcome {
        Outcome::Refused(StatusCode::UNPROCESSABLE_ENTITY, errors)
    }

    /// An import written at `slug`: its page, or, when the page's picture
    /// did not come in (`unfetched`: its address and why), the page that
    /// says so.
    fn imported(slug: &Slug, title: String, unfetched: Option<(String, String)>) -> Outcome {
        let path = recipe_path(slug.as_str());
        match unfetched {
            None => Outcome::Saved(path),
            Some((address, why)) => Outcome::WithoutPicture(WithoutPicture {
                title,
                path,
                address,
                why,
            }),
        }
    }

    /// The answer to a write refused for its slug (`SlugTaken` or
    /// `SlugReserved`), which says which of the two it was.
    fn slug_refused(error: &DomainError, slug: &Slug) -> Outcome {
        let why = match error {
            DomainError::SlugReserved(_) => {
                format!("/recipes/{slug} is one of the site's own pages: choose another address.")
            }
            _ => format!("Another recipe is at /recipes/{slug}: choose another address."),
        };
        Outcome::Refused(StatusCode::CONFLICT, FieldErrors::one("slug", why))
    }

    /// The answer: a 303, or the form again with what was typed.
    fn respond(
        self,
        site: &Site,
        visitor: &Visitor,
        purpose: &Purpose,
        fields: &RecipeFields,
    ) -> Result<HttpResponse, WebError> {
        match self {
            Outcome::Saved(to) => Ok(see_other(&to).finish()),
            Outcome::Refused(status, errors) => {
                Ok(form_page(site, visitor, status, purpose, fields, &errors))
            }
            Outcome::Busy(errors) => {
                let unavailable = StatusCode::SERVICE_UNAVAILABLE;
                let mut page = form_page(site, visitor, unavailable, purpose, fields, &errors);
                page.headers_mut().insert(
                    header::RETRY_AFTER,
                    HeaderValue::from(rate_limits::PICTURE_RETRY_AFTER),
                );
                Ok(page)
            }
            Outcome::WithoutPicture(without) => created_without_picture(site, visitor, &without),
            Outcome::Stale { based_on, newest } => {
                let Purpose::Edit { slug, .. } = purpose else {
                    unreachable!("only an edit is based on a version")
                };
                stale(site, visitor, &parse_slug(slug)?, based_on, newest, fields)
            }
        }
    }
}

/// The version a form says it `does` something to (a hidden field).
fn form_version(text: &str, does: &str) -> Result<VersionNumber, WebError> {
    VersionNumber::parse(text).ok_or_else(|| {
        WebError::BadRequest(format!("The form does not say which version it {does}."))
    })
}

/// The form's address field as a slug, or the error next to it.
fn slug_field(text: &str) -> Result<Slug, FieldErrors> {
    Slug::parse(text.trim()).map_err(|e| FieldErrors::one("slug", sentence(&e.to_string())))
}

/// The new recipe's slug: the form's address field, or, left empty, one
/// made of the recipe's title.
fn slug_or_title(fields: &RecipeFields, content: &Content) -> Result<Slug, FieldErrors> {
    match fields.slug.trim() {
        "" => Ok(Slug::from_title(content.title())),
        text => slug_field(text),
    }
}

pub(super) async fn create(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    payload: web::Payload,
) -> Result<HttpResponse, WebError> {
    // Only a cook's form is read: a visitor is sent to log in first.
    let cook = visitor.cook_or_login("/recipes/new")?;
    let (form, upload) = read_recipe_form::<RecipeForm>(&req, payload, ReadPast).await?;
    visitor.check_form(&req, &form.csrf)?;
    let attempt = recipe_attempt(&req, &form, &upload);
    let mut fields = form.fields;
    let brought = match store_picture(&site, cook, upload, &mut fields).await {
        Ok(brought) => brought,
        Err(busy) => return Outcome::Busy(busy).respond(&site, &visitor, &Purpose::New, &fields),
    };
    let outcome = try_create(&site, cook, &mut fields, brought, attempt).await?;
    outcome.respond(&site, &visitor, &Purpose::New, &fields)
}

async fn try_create(
    site: &Site,
    cook: &Cook,
    fields: &mut RecipeFields,
    brought: Brought,
    attempt: Attempt,
) -> Result<Outcome, WebError> {
    let content = match picture_of(site, fields, brought)
        .await?
        .and_then(|p| content_of(fields, p))
    {
        Ok(content) => content,
        Err(errors) => return Ok(Outcome::unprocessable(errors)),
    };
    let slug = match slug_or_title(fields, &content) {
        Ok(slug) => slug,
        Err(errors) => return Ok(Outcome::unprocessable(errors)),
    };
    let (to, change) = (slug.clone(), change(cook, &fields.note, attempt));
    let written = site
        .write(move |recipes| recipes.create(&to, content.into_draft(), &change))
        .await?;
    match written {
        Ok(_) => Ok(Outcome::Saved(recipe_path(slug.as_str()))),
        Err(e @ (DomainError::SlugTaken(_) | DomainError::SlugReserved(_))) => {
            Ok(Outcome::slug_refused(&e, &slug))
        }
        Err(DomainError::Content(why)) => Ok(Outcome::unprocessable(content_refused(&why))),
        Err(e) => Err(e.into()),
    }
}

pub(super) async fn edit_page(
    site: web::Data<Site>,
    visitor: Visitor,
    slug: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let slug = parse_slug(&slug)?;
    let cook = visitor.cook_or_login(&format!("{}/edit", recipe_path(slug.as_str())))?;
    let recipe = authored(&site, &slug, cook)?;
    let purpose = Purpose::Edit {
        slug: slug.as_str(),
        based_on: recipe.version_count,
    };
    Ok(form_page(
        &site,
        &visitor,
        StatusCode::OK,
        &purpose,
        &RecipeFields::of(&recipe.content),
        &FieldErrors::new(),
    ))
}

pub(super) async fn edit(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    slug: web::Path<String>,
    payload: web::Payload,
) -> Result<HttpResponse, WebError> {
    let slug = parse_slug(&slug)?;
    let cook = visitor.cook_or_login(&format!("{}/edit", recipe_path(slug.as_str())))?;
    let (form, upload) = read_recipe_form::<RecipeForm>(&req, payload, ReadPast).await?;
    visitor.check_form(&req, &form.csrf)?;
    authored(&site, &slug, cook)?;
    let based_on = form_version(&form.based_on, "edits")?;
    let attempt = recipe_attempt(&req, &form, &upload);
    let purpose = Purpose::Edit {
        slug: slug.as_str(),
        based_on: based_on.get(),
    };
    let mut fields = form.fields;
    let brought = match store_picture(&site, cook, upload, &mut fields).await {
        Ok(brought) => brought,
        Err(busy) => return Outcome::Busy(busy).respond(&site, &visitor, &purpose, &fields),
    };
    let outcome = try_edit(&site, cook, &slug, based_on, &mut fields, brought, attempt).await?;
    outcome.respond(&site, &visitor, &purpose, &fields)
}

async fn try_edit(
    site: &Site,
    cook: &Cook,
    slug: &Slug,
    based_on: VersionNumber,
    fields: &mut RecipeFields,
    brought: Brought,
    attempt: Attempt,
) -> Result<Outcome, WebError> {
    let content = match picture_of(site, fields, brought)
        .await?
        .and_then(|p| content_of(fields, p))
    {
        Ok(content) => content,
        Err(errors) => return Ok(Outcome::unprocessable(errors)),
    };
    let (to, change) = (slug.clone(), change(cook, &fields.note, attempt));
    let written = site
        .write(move |recipes| recipes.edit(&to, based_on, content.into_draft(), &change))
        .await?;
    match written {
        Ok(_) => Ok(Outcome::Saved(recipe_path(slug.as_str()))),
        Err(DomainError::NothingChanged) => Ok(Outcome::unprocessable(FieldErrors::one(
            "",
            "Nothing changed, so no new version was saved.",
        ))),
        Err(DomainError::Stale { newest, .. }) => Ok(Outcome::Stale { based_on, newest }),
        Err(DomainError::Content(why)) => Ok(Outcome::unprocessable(content_refused(&why))),
        Err(e) => Err(e.into()),
    }
}

/// 409: the recipe moved on since `based_on`; the person's text is kept,
/// with what changed meanwhile, and the form now edits the newest version.
fn stale(
    site: &Site,
    visitor: &Visitor,
    slug: &Slug,
    based_on: VersionNumber,
    newest: VersionNumber,
    fields: &RecipeFields,
) -> Result<HttpResponse, WebError> {
    // The writer refused on the latest value; the version it saw may not
    // be published yet (its flush under way), and reading the published
    // value for it would answer 404 for a 409.
    site.recipes().wait_published()?;
    let meanwhile = pages::version_diff(&site.snapshot(), slug, Some(based_on), Some(newest))?;
    let purpose = Purpose::Edit {
        slug: slug.as_str(),
        based_on: newest.get(),
    };
    let page = recipe_form::page(
        &purpose,
        fields,
        &FieldErrors::new(),
        &visitor.form_token(),
        Some((&meanwhile.diff, newest.get())),
    );
    Ok(private_page(site, visitor, StatusCode::CONFLICT, page))
}

#[derive(Debug, Deserialize)]
pub(super) struct ForkParams {
    version: Option<String>,
}

pub(super) async fn fork_page(
    site: web::Data<Site>,
    visitor: Visitor,
    slug: web::Path<String>,
    params: web::Query<ForkParams>,
) -> Result<HttpResponse, WebError> {
    let slug = parse_slug(&slug)?;
    let cook = visitor.cook_or_login(&format!("{}/fork", recipe_path(slug.as_str())))?;
    let (version, fields) = fork_fields(&site, &slug, params.version.as_deref(), cook)?;
    let purpose = Purpose::Fork {
        slug: slug.as_str(),
        version: version.get(),
    };
    let ok = StatusCode::OK;
    let page = form_page(&site, &visitor, ok, &purpose, &fields, &FieldErrors::new());
    Ok(page)
}

/// A fork form's fields: the version forked (the newest unless `version`
/// names one), with a free slug and a note suggested.
fn fork_fields(
    site: &Site,
    slug: &Slug,
    version: Option<&str>,
    cook: &Cook,
) -> Result<(VersionNumber, RecipeFields), WebError> {
    let snapshot = site.snapshot();
    let recipe = snapshot.current(slug)?;
    let version = match version {
        Some(text) => VersionNumber::parse(text)
            .ok_or_else(|| WebError::BadRequest(format!("{text:?} is not a version number.")))?,
        None => recipe.newest(),
    };
    let (_, content) = snapshot.version(slug, version)?;
    let mut fields = RecipeFields::of(&content);
    let suggested = site
        .recipes()
        .suggest_fork_slug(slug, cook.handle.as_str())?;
    fields.slug = suggested.to_string();
    fields.note = format!(
        "Forked from {} at version {version}",
        recipe.content.title()
    );
    Ok((version, fields))
}

pub(super) async fn fork(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    slug: web::Path<String>,
    payload: web::Payload,
) -> Result<HttpResponse, WebError> {
    let parent = parse_slug(&slug)?;
    let cook = visitor.cook_or_login(&format!("{}/fork", recipe_path(parent.as_str())))?;
    let (form, upload) = read_recipe_form::<RecipeForm>(&req, payload, ReadPast).await?;
    visitor.check_form(&req, &form.csrf)?;
    let version = form_version(&form.version, "forks")?;
    let attempt = recipe_attempt(&req, &form, &upload);
    let purpose = Purpose::Fork {
        slug: parent.as_str(),
        version: version.get(),
    };
    let mut fields = form.fields;
    let brought = match store_picture(&site, cook, upload, &mut fields).await {
        Ok(brought) => brought,
        Err(busy) => return Outcome::Busy(busy).respond(&site, &visitor, &purpose, &fields),
    };
    let outcome = try_fork(&site, cook, &parent, version, &mut fields, brought, attempt).await?;
    outcome.respond(&site, &visitor, &purpose, &fields)
}

async fn try_fork(
    site: &Site,
    cook: &Cook,
    parent: &Slug,
    version: VersionNumber,
    fields: &mut RecipeFields,
    brought: Brought,
    attempt: Attempt,
) -> Result<Outcome, WebError> {
    let content = picture_of(site, fields, brought)
        .await?
        .and_then(|p| content_of(fields, p));
    // An address left empty is chosen inside the writer, as the form says:
    // the parent's and the cook's names, numbered if taken.
    let slug = match fields.slug.trim() {
        "" => Ok(None),
        text => slug_field(text).map(Some),
    };
    let (content, slug) = match (content, slug) {
        (Ok(content), Ok(slug)) => (content, slug),
        (Err(errors), _) | (_, Err(errors)) => return Ok(Outcome::unprocessable(errors)),
    };
    let change = change(cook, &fields.note, attempt);
    let (from, to) = (parent.clone(), slug.clone());
    let written = site
        .write(move |recipes| {
            recipes.fork(
                &from,
                Some(version),
                to.as_ref(),
                |_| content.to_draft(),
                &change,
            )
        })
        .await?;
    match written {
        Ok((slug, _)) => Ok(Outcome::Saved(recipe_path(slug.as_str()))),
        Err(e @ (DomainError::SlugTaken(_) | DomainError::SlugReserved(_))) => match &slug {
            Some(slug) => Ok(Outcome::slug_refused(&e, slug)),
            // A slug the writer chose is free: this cannot be.
            None => Err(e.into()),
        },
        Err(DomainError::Content(why)) => Ok(Outcome::unprocessable(content_refused(&why))),
        Err(e) => Err(e.into()),
    }
}

/// Every field defaults to empty, so that a form without its token is
/// refused for that (403) before anything else is read.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct RetireForm {
    csrf: String,
    based_on: String,
}

pub(super) async fn retire(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    slug: web::Path<String>,
    form: web::Form<RetireForm>,
) -> Result<HttpResponse, WebError> {
    visitor.check_form(&req, &form.csrf)?;
    let slug = parse_slug(&slug)?;
    let cook = visitor.cook_or_login(&recipe_path(slug.as_str()))?;
    let based_on = form_version(&form.based_on, "retires")?;
    let attempt = attempt_of(&req, &form.csrf, &[form.based_on.as_bytes()]);
    let history = format!("{}/history", recipe_path(slug.as_str()));
    let (to, change) = (slug.clone(), change(cook, "retired", attempt));
    let written = site
        .write(move |recipes| recipes.retire(&to, based_on, &change))
        .await?;
    match written {
        Ok(_) | Err(DomainError::AlreadySaved { .. }) => Ok(see_other(&history).finish()),
        Err(DomainError::Stale { .. }) => Err(WebError::Conflict(format!(
            "{slug} changed since you saw it: look at it again before retiring it."
        ))),
        Err(e) => Err(e.into()),
    }
}

/// `POST /preview`: the recipe form's fields rendered exactly as the page
/// will render them, for the form's live preview; a form with mistakes gets
/// the list of them instead. Only for a logged-in cook, as the form is.
pub(super) async fn preview(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    payload: web::Payload,
) -> Result<HttpResponse, WebError> {
    // Only a cook's form is read: a visitor is sent to log in first (the
    // recipe form, whose preview this is, is a cook's).
    visitor.cook_or_login("/recipes/new")?;
    // The preview never reads the file: no reason to read past one.
    let (form, _) = read_recipe_form::<RecipeForm>(&req, payload, OversizedPicture::Refuse).await?;
    visitor.check_form(&req, &form.csrf)?;
    // A file chosen but not yet sent is not previewed: the picture the
    // recipe has is.
    let mut fields = form.fields;
    let content = picture_of(&site, &mut fields, None)
        .await?
        .and_then(|p| preview_content_of(&fields, p));
    let (status, fragment) = match content {
        Ok(content) => (
            StatusCode::OK,
            views::recipe::preview(&content, site.memos()),
        ),
        Err(errors) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            views::form_fields::error_list(&errors),
        ),
    };
    Ok(private_page(&site, &visitor, status, fragment))
}

/// The form an import shows (`recipe_import::submit`): the recipe read from
/// the page, to be checked and changed before it is brought in, with where
/// it came from and what the page lacked.
pub(super) fn import_page(
    site: &Site,
    visitor: &Visitor,
    status: StatusCode,
    shown: &recipe_form::ImportShown,
    fields: &RecipeFields,
    errors: &FieldErrors,
) -> HttpResponse {
    form_page(
        site,
        visitor,
        status,
        &Purpose::Import(shown),
        fields,
        errors,
    )
}

/// What the import form says of where its recipe came from: the page's
/// address, the site's name and the reading that found it. Refused when
/// the address is not a web address this site keeps (a form altered by
/// hand: the first import read the page there).
fn import_source(fields: &RecipeFields) -> Result<(Source, String), WebError> {
    let url = fields.scalar("source_url").trim();
    let is_web_address = url.starts_with("https://") || url.starts_with("http://");
    if !is_web_address || url.len() > crate::import::MAX_SOURCE_URL {
        return Err(WebError::BadRequest(
            "The form does not say which page the recipe came from: bring it in again from /import."
                .to_owned(),
        ));
    }
    let reading: String = fields.scalar("reading").trim().chars().take(200).collect();
    let source = crate::import::source(url, fields.scalar("source_name"));
    Ok((source, reading))
}

/// What an imported recipe still lacks: its ingredients or its steps
/// (`import::ImportError::Incomplete`'s words).
pub(super) fn import_missing(fields: &RecipeFields) -> Option<&'static str> {
    // As the recipe will read them: a method of headings alone has no step.
    let ingredients = fields.ingredients.lines().filter(|l| !l.trim().is_empty());
    let steps = crate::domain::content::steps_of_text(&fields.steps);
    crate::import::missing(ingredients.count(), steps.len())
}

/// The errors of an imported recipe that still lacks its `missing` part,
/// next to that part's field, saying `why`.
pub(super) fn missing_errors(missing: &str, why: String) -> FieldErrors {
    let field = match missing {
        "steps" => "steps",
        _ => "ingredients",
    };
    FieldErrors::one(field, why)
}

/// `POST /import/save`: the recipe an import showed, as the cook checked
/// and changed it, brought in: its first version, its lineage starting at
/// the page. A recipe still without its ingredients or its steps is
/// refused (it would look whole and not be). The page's picture address
/// is fetched as the new-recipe form's is; one that cannot be is left
/// out, and the answer (201) says so: the recipe is what the cook came for.
pub(super) async fn import_save(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    payload: web::Payload,
) -> Result<HttpResponse, WebError> {
    let cook = visitor.cook_or_login("/import")?;
    let (form, upload) = read_recipe_form::<RecipeForm>(&req, payload, ReadPast).await?;
    visitor.check_form(&req, &form.csrf)?;
    let attempt = recipe_attempt(&req, &form, &upload);
    let mut fields = form.fields;
    let (source, reading) = import_source(&fields)?;
    let missing = import_missing(&fields);
    let shown = recipe_form::ImportShown {
        source_url: &source.url,
        source_name: &source.name,
        reading: &reading,
        missing,
    };
    let outcome = match missing {
        Some(missing) => Outcome::unprocessable(missing_errors(
            missing,
            format!("The recipe has no {missing} yet: write them in from the page."),
        )),
        None => try_import(&site, cook, &source, upload, &mut fields, attempt).await?,
    };
    outcome.respond(&site, &visitor, &Purpose::Import(&shown), &fields)
}

/// The import written, from `source`, with the picture the form brings:
/// the page's, fetched now, unless it cannot be, when the recipe comes in
/// without it.
async fn try_import(
    site: &Site,
    cook: &Cook,
    source: &Source,
    upload: Option<Upload>,
    fields: &mut RecipeFields,
    attempt: Attempt,
) -> Result<Outcome, WebError> {
    let address = fields.scalar("image").trim().to_owned();
    let brought = match store_picture(site, cook, upload, fields).await {
        Ok(brought) => brought,
        Err(busy) => return Ok(Outcome::Busy(busy)),
    };
    let (brought, unfetched) = without_unfetched(fields, brought, address);
    let content = match picture_of(site, fields, brought)
        .await?
        .and_then(|p| content_of(fields, p))
    {
        Ok(content) => content,
        Err(errors) => return Ok(Outcome::unprocessable(errors)),
    };
    let slug = match slug_or_title(fields, &content) {
        Ok(slug) => slug,
        Err(errors) => return Ok(Outcome::unprocessable(errors)),
    };
    let (title, change) = (
        content.title().to_owned(),
        change(cook, &fields.note, attempt),
    );
    let from = source.clone();
    let written = site
        .write(move |recipes| recipes.import(&slug, content.into_draft(), &from, &change))
        .await?;
    match written {
        Ok((slug, _)) => Ok(Outcome::imported(&slug, title, unfetched)),
        Err(DomainError::Content(why)) => Ok(Outcome::unprocessable(content_refused(&why))),
        Err(e) => Err(e.into()),
    }
}

/// The page's picture, not to be had: the recipe comes in without it.
/// The picture the form brings, less one that could not be fetched, and
/// that one's address and why, taken off the form.
fn without_unfetched(
    fields: &mut RecipeFields,
    brought: Brought,
    address: String,
) -> (Brought, Option<(String, String)>) {
    if let Some(Err(errors)) = &brought {
        if let Some(why) = errors.get("image") {
            let unfetched = Some((address, why.to_owned()));
            fields.scalars.remove("image");
            return (None, unfetched);
        }
    }
    (brought, None)
}

/// An import written, but not its page's picture: 201 and where; the page
/// says what did not come in.
fn created_without_picture(
    site: &Site,
    visitor: &Visitor,
    without: &WithoutPicture,
) -> Result<HttpResponse, WebError> {
    let unfetched = views::import_form::Unfetched {
        title: &without.title,
        path: &without.path,
        address: &without.address,
        why: &without.why,
    };
    let mut page = private_page(
        site,
        visitor,
        StatusCode::CREATED,
        views::import_form::without_picture(&unfetched),
    );
    page.headers_mut().insert(
        header::LOCATION,
        HeaderValue::try_from(without.path.as_str())
            .map_err(|e| WebError::Internal(Box::new(e)))?,
    );
    Ok(page)
}
