//! ActivityPub's addresses: WebFinger and NodeInfo for discovery, a cook's
//! page and a recipe's page answered as their actor and object to a client
//! that asks for ActivityStreams, the outbox and followers collections,
//! and the inboxes. The inboxes' work (checking a signature may fetch the
//! sender's key) and making a cook's key pair run off the workers, at a
//! gate of their own.

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;

use super::respond::{self, Body, QueryKey};
use super::{Site, WebError};
use crate::domain::federation::{outbox as outbox_of, Followed};
use crate::domain::{pages, Slug};
use crate::federation::inbox::{Inbound, Refused, Taken};
use crate::views::activitypub::{self, Actor, Article, ACTIVITY_JSON, JRD_JSON};

/// Recipes an outbox lists, the newest.
pub const OUTBOX_ITEMS: usize = 20;

/// Whether the request asks for an ActivityStreams document rather than
/// the page: `application/activity+json`, or JSON-LD with the
/// ActivityStreams profile. A browser's `Accept` asks for neither.
pub fn wants_activity(req: &HttpRequest) -> bool {
    req.headers()
        .get_all(header::ACCEPT)
        .filter_map(|value| value.to_str().ok())
        .any(|accept| {
            accept.contains(ACTIVITY_JSON)
                || (accept.contains("application/ld+json") && accept.contains("activitystreams"))
        })
}

/// Adds `Vary: Accept` to a page that is also a document.
pub fn varies_by_accept(mut response: HttpResponse) -> HttpResponse {
    response
        .headers_mut()
        .append(header::VARY, HeaderValue::from_static("Accept"));
    response
}

fn parse_handle(handle: &str) -> Result<Slug, WebError> {
    Slug::parse(handle)
        .map_err(|_| WebError::NotFound(format!("There is no cook called {handle:?}.")))
}

fn no_cook(handle: &Slug) -> WebError {
    WebError::NotFound(format!("There is no cook called {handle}."))
}

/// A document's response, not kept: the same for everyone, for a while.
fn document(content_type: &'static str, text: String) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, content_type))
        .insert_header((header::CACHE_CONTROL, "public, max-age=60"))
        .body(text)
}

/// A cook's actor document: their key pair is made first if they have
/// none (a fraction of a second, off the workers).
pub async fn actor(
    site: web::Data<Site>,
    req: &HttpRequest,
    handle: Slug,
) -> Result<HttpResponse, WebError> {
    let federated = site.federated()?.clone();
    let asked = handle.clone();
    let key = site
        .key_work()
        .run(move || -> Result<_, WebError> {
            // A cook is an actor once they have a page, or once they have
            // spoken to other sites (their key was made to sign it): a
            // follow, and its undoing after, must stay verifiable.
            let public = pages::public_cook(&federated.recipes().snapshot(), &asked)?.is_some();
            if !public && !federated.federation().has_key(&asked)? {
                return Err(no_cook(&asked));
            }
            Ok(federated.federation().public_key_pem(&asked)?)
        })
        .await??;
    let response = respond::document(
        &site,
        req,
        &QueryKey::default().with("as", Some("actor")),
        |snapshot| snapshot.cook_name(&handle)?.ok_or_else(|| no_cook(&handle)),
        |site, name| Body {
            content_type: ACTIVITY_JSON,
            text: activitypub::actor(
                site.base_url(),
                &Actor {
                    handle: handle.as_str(),
                    name,
                    public_key_pem: &key,
                },
            ),
        },
    )?;
    Ok(varies_by_accept(response))
}

/// A recipe's object document: an `Article` with its `Recipe`.
pub fn recipe_object(
    site: &Site,
    req: &HttpRequest,
    slug: &Slug,
) -> Result<HttpResponse, WebError> {
    let response = respond::document(
        site,
        req,
        &QueryKey::default().with("as", Some("object")),
        |snapshot| {
            Ok(pages::recipe_show(
                snapshot,
                slug,
                crate::domain::scale::ScaleAsked::AS_WRITTEN,
            )?)
        },
        |site, model| Body {
            content_type: ACTIVITY_JSON,
            text: activitypub::article_document(activitypub::article(
                site.base_url(),
                &Article::of_show(site.base_url(), site.memos(), model),
            )),
        },
    )?;
    Ok(varies_by_accept(response))
}

/// One version of a recipe, as a document of its own.
pub fn version_object(
    site: &Site,
    req: &HttpRequest,
    slug: &Slug,
    number: crate::domain::VersionNumber,
) -> Result<HttpResponse, WebError> {
    let response = respond::document(
        site,
        req,
        &QueryKey::default().with("as", Some("object")),
        |snapshot| Ok(pages::version_show(snapshot, slug, number)?),
        |site, model| Body {
            content_type: ACTIVITY_JSON,
            text: activitypub::article_document(activitypub::version_article(
                site.base_url(),
                site.memos(),
                model,
            )),
        },
    )?;
    Ok(varies_by_accept(response))
}

/// The site's own actor, whose key signs its fetches.
pub(super) async fn site_actor(site: web::Data<Site>) -> Result<HttpResponse, WebError> {
    let federated = site.federated()?.clone();
    let pem = site
        .key_work()
        .run(move || {
            federated
                .federation()
                .site_key_pair()
                .map(|k| k.public_pem().to_owned())
        })
        .await??;
    Ok(document(
        ACTIVITY_JSON,
        activitypub::site_actor(site.base_url(), &pem),
    ))
}

#[derive(Debug, Deserialize)]
pub(super) struct WebFingerQuery {
    resource: Option<String>,
}

/// WebFinger: `acct:handle@host` (or the cook's address) to their actor.
pub(super) async fn webfinger(
    site: web::Data<Site>,
    query: web::Query<WebFingerQuery>,
) -> Result<HttpResponse, WebError> {
    let resource = query.resource.as_deref().unwrap_or_default().trim();
    let federated = site.federated()?;
    let handle = if let Some(acct) = resource.strip_prefix("acct:") {
        let (handle, host) = acct.rsplit_once('@').ok_or_else(|| {
            WebError::BadRequest(format!(
                "{resource:?} is not an acct: address (acct:cook@host)."
            ))
        })?;
        if !host.eq_ignore_ascii_case(federated.host()) {
            return Err(WebError::NotFound(format!("{host} is not this site.")));
        }
        handle.trim_start_matches('@').to_owned()
    } else if let Some(handle) = federated.local_cook(resource) {
        handle.to_string()
    } else if resource.is_empty() {
        return Err(WebError::BadRequest(
            "WebFinger needs a resource: ?resource=acct:cook@host.".into(),
        ));
    } else {
        return Err(WebError::NotFound(format!("{resource:?} is no one here.")));
    };
    let handle = parse_handle(&handle)?;
    if pages::public_cook(&site.snapshot(), &handle)?.is_none() {
        return Err(no_cook(&handle));
    }
    Ok(document(
        JRD_JSON,
        activitypub::webfinger(site.base_url(), federated.host(), handle.as_str()),
    ))
}

/// NodeInfo's discovery document.
pub(super) async fn nodeinfo_links(site: web::Data<Site>) -> HttpResponse {
    document(
        "application/json",
        activitypub::nodeinfo_links(site.base_url()),
    )
}

/// NodeInfo 2.1.
pub(super) async fn nodeinfo(site: web::Data<Site>) -> HttpResponse {
    let snapshot = site.snapshot();
    let recipes = snapshot
        .own_recipe_count()
        .unwrap_or_else(|_| snapshot.recipe_count());
    document(
        "application/json; profile=\"http://nodeinfo.diaspora.software/ns/schema/2.1#\"",
        activitypub::nodeinfo(recipes, true),
    )
}

/// A cook's outbox: the `Create` of their newest recipes.
pub(super) async fn outbox(
    site: web::Data<Site>,
    req: HttpRequest,
    handle: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let handle = parse_handle(&handle)?;
    respond::document(
        &site,
        &req,
        respond::NO_QUERY,
        |snapshot| {
            if pages::public_cook(snapshot, &handle)?.is_none() {
                return Err(no_cook(&handle));
            }
            Ok(outbox_of(snapshot, &handle, OUTBOX_ITEMS)?)
        },
        |site, (news, total)| {
            let base = site.base_url();
            let items = news
                .iter()
                .map(|news| {
                    let article =
                        activitypub::article(base, &Article::of_news(base, site.memos(), news));
                    activitypub::outbox_item(
                        base,
                        handle.as_str(),
                        news.recipe.slug.as_str(),
                        article,
                    )
                })
                .collect();
            Body {
                content_type: ACTIVITY_JSON,
                text: activitypub::outbox(base, handle.as_str(), items, *total),
            }
        },
    )
}

/// A cook's followers elsewhere: how many.
pub(super) async fn followers(
    site: web::Data<Site>,
    handle: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let handle = parse_handle(&handle)?;
    if pages::public_cook(&site.snapshot(), &handle)?.is_none() {
        return Err(no_cook(&handle));
    }
    // A keyspace read: the log's database on a cluster, so off the workers.
    let federated = site.federated()?.clone();
    let followed = Followed::Cook(handle.clone());
    let count = super::blocking::off_workers(&site, move || {
        federated.federation().follower_count(&followed)
    })
    .await??;
    Ok(document(
        ACTIVITY_JSON,
        activitypub::followers(site.base_url(), handle.as_str(), count),
    ))
}

/// An inbox (a cook's, or the site's shared one): the activity is checked
/// and applied off the workers; 202 once it is taken.
pub(super) async fn inbox(
    site: web::Data<Site>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    let inbound = Inbound {
        method: req.method().as_str().to_owned(),
        target: req
            .uri()
            .path_and_query()
            .map_or_else(|| req.path().to_owned(), |p| p.as_str().to_owned()),
        headers: req
            .headers()
            .iter()
            .filter_map(|(name, value)| {
                Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
            })
            .collect(),
        body: body.to_vec(),
    };
    let federated = site.federated()?.clone();
    let taken = site
        .federation_work()
        .run(move || federated.receive(&inbound))
        .await?
        .map_err(refusal)?;
    match &taken {
        Taken::Applied(kind) => tracing::info!(kind, "an activity was applied"),
        Taken::Replayed => tracing::info!("an activity applied before came again"),
        Taken::SetAside(kind) => tracing::debug!(kind, "an activity was set aside"),
    }
    Ok(HttpResponse::Accepted().finish())
}

/// How an activity refused is answered.
fn refusal(refused: Refused) -> WebError {
    let text = format!("This activity was refused: {refused}.");
    match refused {
        Refused::Signature(_) | Refused::Actor(_) => WebError::Unauthorized(text),
        Refused::Blocked(_) => WebError::Forbidden(text),
        Refused::TooMany(_) => WebError::TooManyRequests(text),
        Refused::Unreadable(_) => WebError::BadRequest(text),
        Refused::NoSuchCook(_) => WebError::NotFound(text),
        Refused::Domain(error) => error.into(),
    }
}
