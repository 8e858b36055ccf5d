//! The ActivityStreams documents the site serves and sends: a cook as a
//! `Person` actor, a recipe as an `Article` whose main entity is its
//! schema.org `Recipe`, WebFinger and NodeInfo for discovery, a cook's
//! outbox and followers, and the activities that go to followers.
//!
//! Addresses are the site's own pages: an actor is its cook's page, an
//! object its recipe's page, a version its version's page, each answered
//! as a document by content negotiation (`web::federation`). Activities'
//! ids are fragments of those pages: a receiver needs them unique, not
//! fetchable.

use maud::html;
use serde_json::{json, Value};

use super::markdown::Memos;
use super::structured_data::{self, RecipeFacts};
use super::{absolute, machine_time, recipe_path, version_path};
use crate::domain::federation::Announcement;
use crate::domain::{Content, Instant, Recipe, RecipeShow, VersionShow};

/// The media type of ActivityPub's documents.
pub const ACTIVITY_JSON: &str = "application/activity+json";
/// WebFinger's media type.
pub const JRD_JSON: &str = "application/jrd+json";
/// The ActivityStreams context.
pub const ACTIVITY_STREAMS: &str = "https://www.w3.org/ns/activitystreams";
/// The audience "everyone".
pub const PUBLIC: &str = "https://www.w3.org/ns/activitystreams#Public";
/// The context of `publicKey`.
const SECURITY: &str = "https://w3id.org/security/v1";
/// What an actor's `generator` implements, per FEP-844e, when its site
/// takes RFC 9421 signatures.
pub const RFC_9421: &str = "https://datatracker.ietf.org/doc/html/rfc9421";
/// NodeInfo 2.1's schema, as its discovery document names it.
pub const NODEINFO_21: &str = "http://nodeinfo.diaspora.software/ns/schema/2.1";

/// A cook's actor id: their page.
pub fn actor_url(base_url: &str, handle: &str) -> String {
    format!("{base_url}/cooks/{handle}")
}

/// The id of a cook's public key.
pub fn key_id(base_url: &str, handle: &str) -> String {
    format!("{}#main-key", actor_url(base_url, handle))
}

/// The site's own actor, which signs its fetches.
pub fn site_actor_url(base_url: &str) -> String {
    format!("{base_url}/actor")
}

/// The id of the site's public key.
pub fn site_key_id(base_url: &str) -> String {
    format!("{}#main-key", site_actor_url(base_url))
}

/// The shared inbox, which takes activities for every cook here.
pub fn shared_inbox(base_url: &str) -> String {
    format!("{base_url}/inbox")
}

fn followers_url(base_url: &str, handle: &str) -> String {
    format!("{}/followers", actor_url(base_url, handle))
}

fn document(context: Value, mut body: Value) -> String {
    if let Value::Object(map) = &mut body {
        map.insert("@context".into(), context);
    }
    body.to_string()
}

/// An actor's context: ActivityStreams, the security vocabulary's
/// `publicKey`, and the two terms Mastodon reads of an actor that
/// ActivityStreams' own context leaves out (as Mastodon defines them).
fn actor_context() -> Value {
    json!([
        ACTIVITY_STREAMS,
        SECURITY,
        {
            "manuallyApprovesFollowers": "as:manuallyApprovesFollowers",
            "toot": "http://joinmastodon.org/ns#",
            "discoverable": "toot:discoverable",
            "implements": {
                "@id": "https://w3id.org/fep/844e/implements",
                "@type": "@id",
                "@container": "@list"
            }
        }
    ])
}

/// What an actor says of the software that serves it (FEP-844e): it takes
/// RFC 9421 signatures, so that a peer that reads this signs that way.
fn generator() -> Value {
    json!({
        "type": "Application",
        "name": "forkful",
        "implements": [{"name": "RFC-9421: HTTP Message Signatures", "href": RFC_9421}],
    })
}

/// The context of an answer to an offer: ActivityStreams, and forkful's
/// own terms for what an accept or reject says beyond it. They are named
/// by URN, not by an address: nothing is to be fetched there.
fn answer_context() -> Value {
    json!([
        ACTIVITY_STREAMS,
        {
            "whole": {"@id": "urn:forkful:whole", "@type": "xsd:boolean"},
            "keptOwn": {"@id": "urn:forkful:keptOwn", "@type": "xsd:nonNegativeInteger"},
            "retired": {"@id": "urn:forkful:retired", "@type": "xsd:boolean"}
        }
    ])
}

/// The context of a recipe's documents: ActivityStreams, schema.org's
/// `mainEntity` (the `Recipe`) and `version`, and ForgeFed's `forkedFrom`.
fn object_context() -> Value {
    json!([
        ACTIVITY_STREAMS,
        {
            "schema": "https://schema.org/",
            "mainEntity": "schema:mainEntity",
            "version": "schema:version",
            "isPartOf": {"@id": "schema:isPartOf", "@type": "@id"},
            "forkedFrom": {"@id": "https://forgefed.org/ns#forkedFrom", "@type": "@id"}
        }
    ])
}

/// What a cook's actor document says.
pub struct Actor<'a> {
    pub handle: &'a str,
    pub name: &'a str,
    pub public_key_pem: &'a str,
}

/// A cook's actor document (`Person`).
pub fn actor(base_url: &str, cook: &Actor) -> String {
    let id = actor_url(base_url, cook.handle);
    document(
        actor_context(),
        json!({
            "id": id,
            "type": "Person",
            "preferredUsername": cook.handle,
            "name": cook.name,
            "summary": html! { p { "Recipes by " (cook.name) " on forkful." } }.into_string(),
            "url": id,
            "inbox": format!("{id}/inbox"),
            "outbox": format!("{id}/outbox"),
            "followers": followers_url(base_url, cook.handle),
            "endpoints": {"sharedInbox": shared_inbox(base_url)},
            "manuallyApprovesFollowers": false,
            "discoverable": true,
            "generator": generator(),
            "publicKey": {
                "id": key_id(base_url, cook.handle),
                "owner": id,
                "publicKeyPem": cook.public_key_pem,
            },
        }),
    )
}

/// The site's own actor (`Application`), whose key signs its fetches.
pub fn site_actor(base_url: &str, public_key_pem: &str) -> String {
    let id = site_actor_url(base_url);
    document(
        actor_context(),
        json!({
            "id": id,
            "type": "Application",
            "preferredUsername": "forkful",
            "name": "forkful",
            "url": base_url,
            "inbox": shared_inbox(base_url),
            "generator": generator(),
            "publicKey": {
                "id": site_key_id(base_url),
                "owner": id,
                "publicKeyPem": public_key_pem,
            },
        }),
    )
}

/// WebFinger's answer for `acct:handle@host`.
pub fn webfinger(base_url: &str, host: &str, handle: &str) -> String {
    let actor = actor_url(base_url, handle);
    json!({
        "subject": format!("acct:{handle}@{host}"),
        "aliases": [actor],
        "links": [
            {"rel": "self", "type": ACTIVITY_JSON, "href": actor},
            {"rel": "http://webfinger.net/rel/profile-page", "type": "text/html", "href": actor},
        ],
    })
    .to_string()
}

/// `/.well-known/nodeinfo`: where the NodeInfo document is.
pub fn nodeinfo_links(base_url: &str) -> String {
    json!({"links": [{"rel": NODEINFO_21, "href": format!("{base_url}/nodeinfo/2.1")}]}).to_string()
}

/// NodeInfo 2.1: what the site is, and how many recipes it holds.
pub fn nodeinfo(recipes: usize, open_registrations: bool) -> String {
    json!({
        "version": "2.1",
        "software": {
            "name": "forkful",
            "version": env!("CARGO_PKG_VERSION"),
        },
        "protocols": ["activitypub"],
        "services": {"inbound": [], "outbound": ["atom1.0"]},
        "openRegistrations": open_registrations,
        "usage": {"users": {}, "localPosts": recipes},
        "metadata": {"nodeName": "forkful"},
    })
    .to_string()
}

/// What a recipe's `Article` says.
pub struct Article<'a> {
    pub slug: &'a str,
    pub content: &'a Content,
    pub author: Option<&'a str>,
    pub published: Option<Instant>,
    pub updated: Option<Instant>,
    pub version: u32,
    /// The absolute address of what it was forked from, at its version.
    pub based_on: Option<String>,
    pub contributors: &'a [String],
    pub memos: &'a Memos,
}

impl<'a> Article<'a> {
    /// The `Article` of `recipe` as it is now, based on `based_on`.
    pub fn of_recipe(
        recipe: &'a Recipe,
        based_on: Option<String>,
        memos: &'a Memos,
    ) -> Article<'a> {
        Article {
            slug: recipe.slug.as_str(),
            content: &recipe.content,
            author: recipe.author.as_deref(),
            published: recipe.created_at,
            updated: recipe.updated_at,
            version: recipe.version_count,
            based_on,
            contributors: &recipe.contributors,
            memos,
        }
    }

    /// The `Article` of a recipe page's model.
    pub fn of_show(base_url: &str, memos: &'a Memos, model: &'a RecipeShow) -> Article<'a> {
        let based_on = super::recipe::based_on(base_url, model);
        Article::of_recipe(&model.recipe, based_on, memos)
    }

    /// The `Article` of a recipe as its followers hear of it.
    pub fn of_news(base_url: &str, memos: &'a Memos, news: &'a Announcement) -> Article<'a> {
        let based_on = news
            .based_on
            .as_ref()
            .map(|(slug, version)| absolute(base_url, version_path(slug, version)))
            .or_else(|| news.source.clone());
        Article::of_recipe(&news.recipe, based_on, memos)
    }
}

/// A recipe as an `Article` (without its `@context`): its title, summary,
/// picture and address, the version it is at, and its schema.org `Recipe`
/// as the main entity.
pub fn article(base_url: &str, a: &Article) -> Value {
    let url = absolute(base_url, recipe_path(a.slug));
    let images = super::recipe::picture_urls(base_url, a.content);
    let recipe_ld = structured_data::recipe_value(
        a.content,
        &RecipeFacts {
            url: &url,
            author: a.author,
            published: a.published,
            modified: a.updated,
            based_on: a.based_on.as_deref(),
            contributors: a.contributors,
            version: a.version,
            images: &images,
            memos: a.memos,
        },
    );
    let summary = a
        .content
        .summary()
        .map(|s| a.memos.plain_text(s).to_string());
    let body = html! {
        @if let Some(summary) = &summary { p { (summary) } }
        p { a href=(url) { (a.content.title()) } }
    };
    let mut object = json!({
        "id": url,
        "type": "Article",
        "name": a.content.title(),
        "content": body.into_string(),
        "url": url,
        "version": a.version,
        "to": [PUBLIC],
        "mainEntity": recipe_ld,
    });
    let map = object.as_object_mut().expect("an object");
    if let Some(summary) = summary {
        map.insert("summary".into(), summary.into());
    }
    if let Some(author) = a.author {
        map.insert("attributedTo".into(), actor_url(base_url, author).into());
        map.insert("cc".into(), json!([followers_url(base_url, author)]));
    }
    if let Some(at) = a.published {
        map.insert("published".into(), machine_time(at).into());
    }
    if let Some(at) = a.updated.filter(|_| a.version > 1) {
        map.insert("updated".into(), machine_time(at).into());
    }
    if let Some(image) = images.first() {
        map.insert(
            "image".into(),
            json!({"type": "Image", "url": image, "mediaType": "image/jpeg"}),
        );
    }
    if let Some(parent) = &a.based_on {
        map.insert("forkedFrom".into(), parent.clone().into());
    }
    object
}

/// One version of a recipe as an `Article` of its own: its id is the
/// version's page, it is part of the recipe (`isPartOf`), and it says the
/// recipe as that version left it.
pub fn version_article(base_url: &str, memos: &Memos, model: &VersionShow) -> Value {
    let r = &model.recipe;
    let number = model.version.number;
    let mut object = article(
        base_url,
        &Article {
            slug: r.slug.as_str(),
            content: &model.content,
            author: r.author.as_deref(),
            published: Some(model.version.instant),
            updated: None,
            version: number.get(),
            based_on: None,
            contributors: &[],
            memos,
        },
    );
    let url = absolute(base_url, version_path(r.slug.as_str(), number));
    object["isPartOf"] = absolute(base_url, recipe_path(r.slug.as_str())).into();
    object["id"] = url.clone().into();
    object["url"] = url.into();
    if let Some(note) = &model.version.note {
        object["schema:description"] = note.clone().into();
    }
    object
}

/// A recipe's document, served at its page's address.
pub fn article_document(article: Value) -> String {
    document(object_context(), article)
}

/// What a new activity is about a recipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Told {
    Created,
    Updated,
}

/// The `Create` (a new recipe) or `Update` (a new version) of `article`,
/// by `handle`: its id, and the document.
pub fn told(
    base_url: &str,
    handle: &str,
    slug: &str,
    article: Value,
    told: Told,
) -> (String, String) {
    let (id, activity) = told_activity(base_url, handle, slug, article, told);
    (id, document(object_context(), activity))
}

/// `told`'s activity, without its `@context` (as an outbox lists it).
fn told_activity(
    base_url: &str,
    handle: &str,
    slug: &str,
    article: Value,
    told: Told,
) -> (String, Value) {
    let version = article["version"].as_u64().unwrap_or(1);
    let version_url = absolute(base_url, version_path(slug, version));
    let (kind, fragment) = match told {
        Told::Created => ("Create", "create"),
        Told::Updated => ("Update", "update"),
    };
    let id = format!("{version_url}#{fragment}");
    let published = article
        .get("updated")
        .or_else(|| article.get("published"))
        .cloned();
    let mut activity = json!({
        "id": id,
        "type": kind,
        "actor": actor_url(base_url, handle),
        "to": [PUBLIC],
        "cc": [followers_url(base_url, handle)],
        "object": article,
    });
    if let Some(published) = published {
        activity["published"] = published;
    }
    (id, activity)
}

/// The address of the offer a suggestion made here to a recipe on another
/// site is (`offer`): its site answers it by this id.
pub fn offer_url(base_url: &str, suggestion: u64) -> String {
    format!("{base_url}/offers/{suggestion}")
}

/// The suggestion entity an offer made here names, from its id.
pub fn offer_of(base_url: &str, offer_id: &str) -> Option<u64> {
    offer_id
        .strip_prefix(base_url)?
        .strip_prefix("/offers/")?
        .parse()
        .ok()
}

/// The `Offer`, by `handle`, of `fork` (an `Article` of the fork at the
/// version offered, `forkedFrom` the version of `target` it last agreed
/// with) to `target`'s author, with `message`: its id, and the document.
/// Where the recipe there took the fork's changes in an earlier version of
/// the fork beside changes of its own, `baseForkVersion` names that
/// version: the next review starts from it (`read::MergeBase`).
/// ForgeFed offers a patch so; forkful offers the fork's recipe, and the
/// other site merges it as it merges any suggestion.
pub fn offer(
    base_url: &str,
    handle: &str,
    suggestion: u64,
    (target, base, base_fork_version): (&str, u32, Option<u32>),
    mut fork: Value,
    message: &str,
) -> (String, String) {
    let id = offer_url(base_url, suggestion);
    fork["forkedFrom"] = format!("{target}/versions/{base}").into();
    let mut activity = json!({
        "id": id,
        "type": "Offer",
        "actor": actor_url(base_url, handle),
        "target": target,
        "content": message,
        "object": fork,
    });
    if let Some(v) = base_fork_version {
        activity["baseForkVersion"] = v.into();
    }
    let mut context = object_context();
    context[1]["baseForkVersion"] = json!({
        "@id": "urn:forkful:baseForkVersion",
        "@type": "xsd:nonNegativeInteger"
    });
    (id.clone(), document(context, activity))
}

/// What a suggestion offered from elsewhere came to, to answer it with.
pub struct OfferAnswer<'a> {
    pub offer: &'a str,
    pub slug: &'a str,
    pub number: u32,
    /// For an accept: the version that took it, whether whole, and how
    /// many changes its author kept their own version of.
    pub accepted: Option<(u32, bool, u32)>,
    /// For a reject: whether it was closed (its recipe retired), not
    /// declined.
    pub closed: bool,
    pub reply: Option<&'a str>,
}

/// The `Undo`, by `handle`, of the offer a suggestion made here was (its
/// cook withdrew it): its id, and the document.
pub fn offer_undone(base_url: &str, handle: &str, suggestion: u64) -> (String, String) {
    let offer = offer_url(base_url, suggestion);
    let id = format!("{offer}#undo");
    let activity = json!({
        "id": id,
        "type": "Undo",
        "actor": actor_url(base_url, handle),
        "object": {"id": offer, "type": "Offer"},
    });
    (id.clone(), document(json!(ACTIVITY_STREAMS), activity))
}

/// The `Accept` or `Reject`, by `handle` (the recipe's author), of the
/// offer `answer.offer`: its id, and the document. An accept's `result` is
/// the version that took it.
pub fn offer_answer(base_url: &str, handle: &str, answer: &OfferAnswer) -> (String, String) {
    let page = format!(
        "{}/suggestions/{}",
        absolute(base_url, recipe_path(answer.slug)),
        answer.number
    );
    let kind = match answer.accepted {
        Some(_) => "Accept",
        None => "Reject",
    };
    let id = format!("{page}#{}", kind.to_lowercase());
    let mut activity = json!({
        "id": id,
        "type": kind,
        "actor": actor_url(base_url, handle),
        "object": answer.offer,
        "url": page,
    });
    if let Some((version, whole, kept_own)) = answer.accepted {
        activity["result"] = absolute(base_url, version_path(answer.slug, version)).into();
        activity["whole"] = whole.into();
        activity["keptOwn"] = kept_own.into();
    }
    if answer.accepted.is_none() && answer.closed {
        activity["retired"] = true.into();
    }
    if let Some(reply) = answer.reply {
        activity["content"] = reply.into();
    }
    (id, document(answer_context(), activity))
}

/// The `Delete` of a retired recipe (its page now says it was retired):
/// its id, and the document.
pub fn deleted(base_url: &str, handle: &str, slug: &str, version: u32) -> (String, String) {
    let url = absolute(base_url, recipe_path(slug));
    let id = format!("{base_url}{}#delete", version_path(slug, version));
    let activity = json!({
        "id": id,
        "type": "Delete",
        "actor": actor_url(base_url, handle),
        "to": [PUBLIC],
        "cc": [followers_url(base_url, handle)],
        "object": {"id": url, "type": "Tombstone"},
    });
    (id.clone(), document(json!(ACTIVITY_STREAMS), activity))
}

/// The `Accept`, by `handle`, of a `Follow` of `followed` (their actor, or
/// a recipe of theirs) whose id is `follow_id`, by `follower`: its id, and
/// the document.
pub fn accept(
    base_url: &str,
    handle: &str,
    follow_id: &str,
    follower: &str,
    followed: &str,
) -> (String, String) {
    let actor = actor_url(base_url, handle);
    let id = format!("{actor}#accepts/{}", super::url_fragment(follow_id));
    let activity = json!({
        "id": id,
        "type": "Accept",
        "actor": actor,
        "object": {
            "id": follow_id,
            "type": "Follow",
            "actor": follower,
            "object": followed,
        },
    });
    (id.clone(), document(json!(ACTIVITY_STREAMS), activity))
}

/// The `Follow`, by `handle`, of `object` (an actor or a recipe on
/// another site), whose id is `follow_id`: the document.
pub fn follow(base_url: &str, handle: &str, follow_id: &str, object: &str) -> String {
    document(
        json!(ACTIVITY_STREAMS),
        follow_activity(base_url, handle, follow_id, object),
    )
}

fn follow_activity(base_url: &str, handle: &str, follow_id: &str, object: &str) -> Value {
    json!({
        "id": follow_id,
        "type": "Follow",
        "actor": actor_url(base_url, handle),
        "object": object,
    })
}

/// The `Undo`, by `handle`, of their `Follow` `follow_id` of `object`: its
/// id, and the document.
pub fn follow_undone(
    base_url: &str,
    handle: &str,
    follow_id: &str,
    object: &str,
) -> (String, String) {
    let id = format!("{follow_id}/undo");
    let activity = json!({
        "id": id,
        "type": "Undo",
        "actor": actor_url(base_url, handle),
        "object": follow_activity(base_url, handle, follow_id, object),
    });
    (id.clone(), document(json!(ACTIVITY_STREAMS), activity))
}

/// A cook's outbox: the `Create` of each recipe of theirs listed (newest
/// first), and how many there are in all.
pub fn outbox(base_url: &str, handle: &str, items: Vec<Value>, total: usize) -> String {
    document(
        object_context(),
        json!({
            "id": format!("{}/outbox", actor_url(base_url, handle)),
            "type": "OrderedCollection",
            "totalItems": total,
            "orderedItems": items,
        }),
    )
}

/// The `Create` in an outbox of one recipe, as its first version made it.
pub fn outbox_item(base_url: &str, handle: &str, slug: &str, article: Value) -> Value {
    told_activity(base_url, handle, slug, article, Told::Created).1
}

/// A cook's followers: how many, not who (as Mastodon shows them by default).
pub fn followers(base_url: &str, handle: &str, count: usize) -> String {
    document(
        json!(ACTIVITY_STREAMS),
        json!({
            "id": followers_url(base_url, handle),
            "type": "OrderedCollection",
            "totalItems": count,
        }),
    )
}
