//! `/following`: a cook follows cooks and recipes on other sites, and
//! reads what came of it. The lookup of what they name fetches from
//! elsewhere, so it runs off the workers, counted as an import is.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;

use super::form_handling::{attempt_of, private_page, see_other, sentence};
use super::session::Visitor;
use super::{Site, WebError};
use crate::domain::Cook;
use crate::federation::following::FollowError;
use crate::views::following::{self, FollowingPage};
use crate::views::form_fields::FieldErrors;

/// The longest address the form takes.
const MAX_ADDRESS: usize = 2_048;

/// The page for `cook`, with `address` typed and `errors` beside it.
async fn page_of(
    site: &web::Data<Site>,
    visitor: &Visitor,
    cook: &Cook,
    (address, recipe): (&str, &str),
    errors: FieldErrors,
    status: StatusCode,
) -> Result<HttpResponse, WebError> {
    let federated = site.federated()?.clone();
    let handle = cook.handle.clone();
    let (follows, news) = super::blocking::off_workers(site, move || {
        let federation = federated.federation();
        Ok::<_, crate::domain::DomainError>((
            federation.following(&handle)?,
            federation.news(&handle)?,
        ))
    })
    .await??;
    let page = following::following(
        &FollowingPage {
            cook,
            following: &follows,
            news: &news,
            address,
            recipe,
            notice: None,
        },
        &errors,
        &visitor.form_token(),
    );
    Ok(private_page(site, visitor, status, page))
}

pub(super) async fn following_page(
    site: web::Data<Site>,
    visitor: Visitor,
) -> Result<HttpResponse, WebError> {
    let cook = visitor.cook_or_login("/following")?.clone();
    page_of(
        &site,
        &visitor,
        &cook,
        ("", ""),
        FieldErrors::new(),
        StatusCode::OK,
    )
    .await
}

/// Every field defaults to empty, so that a form without its token is
/// refused for that (403) before anything else is read.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct FollowForm {
    csrf: String,
    address: String,
    object: String,
    /// A recipe's address elsewhere, to fork.
    recipe: String,
}

pub(super) async fn follow(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    form: web::Form<FollowForm>,
) -> Result<HttpResponse, WebError> {
    visitor.check_form(&req, &form.csrf)?;
    let cook = visitor.cook_or_login("/following")?.clone();
    let address = form.address.trim().to_owned();
    let refuse = |status, why: &str| {
        let errors = FieldErrors::one("address", sentence(why));
        page_of(&site, &visitor, &cook, (&address, ""), errors, status)
    };
    if address.is_empty() || address.len() > MAX_ADDRESS {
        let why = "give a handle (@cook@site) or an address of a page on another site";
        return refuse(StatusCode::UNPROCESSABLE_ENTITY, why).await;
    }
    if let Err(why) = site.imports().start(cook.handle.as_str()) {
        return refuse(StatusCode::TOO_MANY_REQUESTS, &why).await;
    }
    let (federated, handle, asked) = (
        site.federated()?.clone(),
        cook.handle.clone(),
        address.clone(),
    );
    let made = site
        .lookup_work()
        .run(move || federated.follow_elsewhere(&handle, &asked))
        .await?;
    match made {
        Ok(_) => Ok(see_other("/following").finish()),
        Err(FollowError::Domain(error)) => Err(error.into()),
        Err(other) => refuse(StatusCode::UNPROCESSABLE_ENTITY, &other.to_string()).await,
    }
}

/// Forks a recipe on another site: fetched and read off the workers
/// (counted as an import), saved (once, however often the form is sent)
/// as a recipe whose lineage starts there and whose facts name the inbox
/// its author is told at, from the log.
pub(super) async fn fork(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    form: web::Form<FollowForm>,
) -> Result<HttpResponse, WebError> {
    visitor.check_form(&req, &form.csrf)?;
    let cook = visitor.cook_or_login("/following")?.clone();
    let address = form.recipe.trim().to_owned();
    let attempt = attempt_of(&req, &form.csrf, &[address.as_bytes()]);
    let (status, why) = match fork_from(&site, &cook, &address, attempt).await? {
        Ok(slug) => return Ok(see_other(&format!("/recipes/{slug}")).finish()),
        Err(refused) => refused,
    };
    let errors = FieldErrors::one("recipe", sentence(&why));
    page_of(&site, &visitor, &cook, ("", &address), errors, status).await
}

/// `fork`'s work: the fork's slug, or why there is none.
async fn fork_from(
    site: &web::Data<Site>,
    cook: &Cook,
    address: &str,
    attempt: crate::domain::Attempt,
) -> Result<Result<crate::domain::Slug, (StatusCode, String)>, WebError> {
    let unprocessable = |why: String| Ok(Err((StatusCode::UNPROCESSABLE_ENTITY, why)));
    if !address.contains("://") || address.len() > crate::import::MAX_SOURCE_URL {
        return unprocessable("give the address of a recipe's page on another site".into());
    }
    if let Err(why) = site.imports().start(cook.handle.as_str()) {
        return Ok(Err((StatusCode::TOO_MANY_REQUESTS, why)));
    }
    let (federated, asked) = (site.federated()?.clone(), address.to_owned());
    let remote = match site
        .lookup_work()
        .run(move || federated.fetch_recipe(&asked))
        .await?
    {
        Ok(remote) => remote,
        Err(FollowError::Domain(error)) => return Err(error.into()),
        Err(other) => return unprocessable(other.to_string()),
    };
    let slug = crate::domain::Slug::from_title(remote.content.title());
    let note = format!("Forked from {}", remote.source.name);
    let change = crate::domain::Change::by(cook.handle.as_str(), &note).once(attempt);
    let parent = remote.address.clone();
    let written = site
        .write(move |recipes| recipes.fork_elsewhere(&remote, &slug, &change))
        .await?;
    match written {
        Ok((slug, _)) => {
            follow_parent(site, cook, &parent).await;
            Ok(Ok(slug))
        }
        Err(
            refused @ (crate::domain::DomainError::Content(_)
            | crate::domain::DomainError::Invalid(_)
            | crate::domain::DomainError::BadSlug(_)
            | crate::domain::DomainError::Retired { .. }),
        ) => unprocessable(refused.to_string()),
        Err(error) => Err(error.into()),
    }
}

pub(super) async fn stop(
    site: web::Data<Site>,
    req: HttpRequest,
    visitor: Visitor,
    form: web::Form<FollowForm>,
) -> Result<HttpResponse, WebError> {
    visitor.check_form(&req, &form.csrf)?;
    let cook = visitor.cook_or_login("/following")?;
    let (federated, handle, object) = (
        site.federated()?.clone(),
        cook.handle.clone(),
        form.object.clone(),
    );
    super::blocking::off_workers(&site, move || {
        federated.unfollow_elsewhere(&handle, &object)
    })
    .await??;
    Ok(see_other("/following").finish())
}

/// The cook of a new fork of the recipe at `address` on another site (its
/// address as its document gives it) follows that recipe, unless they do
/// already, so that its new versions reach the fork's page as they are
/// made. A follow that fails, or finds the look-ups' gate full, leaves the
/// fork as it is: its bring-in page fetches the recipe again.
async fn follow_parent(site: &Site, cook: &Cook, address: &str) {
    let (handle, address) = (cook.handle.clone(), address.to_owned());
    look_up_or_warn(
        site,
        "following a fork's parent on another site",
        move |f| f.follow_unless_following(&handle, &address),
    )
    .await;
}

/// Runs `job` at the look-ups' gate, for what a page can do without: its
/// failure, or a full gate, is logged (as `what`), never answered.
async fn look_up_or_warn(
    site: &Site,
    what: &'static str,
    job: impl FnOnce(&crate::federation::Federated) -> Result<(), FollowError> + Send + 'static,
) {
    let Ok(federated) = site.federated() else {
        return;
    };
    let federated = federated.clone();
    match site.lookup_work().run(move || job(&federated)).await {
        Ok(Ok(())) => {}
        Ok(Err(why)) => tracing::warn!(%why, "{what} failed"),
        Err(why) => tracing::warn!(%why, "no place for {what}"),
    }
}

/// For a fork of a recipe on another site: that recipe fetched again (off
/// the workers, as a look-up is) so that the bring-in page shows its newest
/// version. Where its site cannot be reached, the page shows the versions
/// fetched before: a fault elsewhere (a site down or slow, the look-ups'
/// gate full) degrades the page, it does not fail it. Only for the fork's
/// cook, within their imports a minute: no one else can make this site
/// fetch from another, and they cannot make it fetch without end.
pub(super) async fn refresh_kept_parent(
    site: &Site,
    cook: &Cook,
    slug: &crate::domain::Slug,
) -> Result<(), WebError> {
    let snapshot = site.snapshot();
    let Ok(fork) = snapshot.current(slug) else {
        return Ok(());
    };
    if fork.author.as_deref() != Some(cook.handle.as_str()) {
        return Ok(());
    }
    let (Some(address), Ok(_)) = (snapshot.kept_parent_of(&fork)?, site.federated()) else {
        return Ok(());
    };
    // Counted as one of the cook's imports a minute, as a fork from
    // elsewhere is: past that, the page shows what was kept.
    if site.imports().start(cook.handle.as_str()).is_err() {
        return Ok(());
    }
    look_up_or_warn(
        site,
        "fetching a fork's parent on another site again",
        move |f| f.refresh_kept(&address),
    )
    .await;
    Ok(())
}
