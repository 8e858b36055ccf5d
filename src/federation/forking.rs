//! A fork of a recipe on another site: its document is fetched (signed by
//! the site), its schema.org `Recipe` read as any imported recipe is
//! (`import::from_html`, over the `mainEntity` alone), and the fork starts
//! from it, its lineage beginning at the remote version it was made from.
//! The remote recipe's author is then told, with the `Create` of the fork
//! (whose `forkedFrom` names their recipe), so that their site lists it.

use serde_json::Value;

use super::following::{id_of, FollowError};
use super::inbox::now_millis;
use super::remote;
use super::Federated;
use crate::domain::federation::{Announcement, Delivery, Happened};
use crate::domain::{Content, Slug, Source};
use crate::views::activitypub::{self, Article, Told};
use crate::views::markdown::Memos;

/// A recipe on another site, as fetched to fork.
#[derive(Debug, Clone)]
pub struct RemoteRecipe {
    pub content: Content,
    /// Where the fork's lineage starts: the version forked, by its address.
    pub source: Source,
    /// The inbox of its author, who is told of the fork.
    pub author_inbox: String,
}

impl Federated {
    /// The recipe at `address` on another site, to fork. Runs off the
    /// workers: it fetches.
    pub fn fetch_recipe(&self, address: &str) -> Result<RemoteRecipe, FollowError> {
        let address = address.trim();
        if address.starts_with(&format!("{}/", self.base_url)) {
            return Err(FollowError::Here(address.to_owned()));
        }
        if self.is_blocked(address) {
            let site = remote::site_of(address).unwrap_or_else(|| address.to_owned());
            return Err(FollowError::Blocked(site));
        }
        let (at, document) = self.fetch_json(address)?;
        let not = |why: &str| FollowError::NotFollowable(address.to_owned(), why.to_owned());
        let id = document["id"].as_str().ok_or_else(|| not("it has no id"))?;
        if !remote::same_site(id, &at) {
            return Err(not("it says it is on another site"));
        }
        let recipe = &document["mainEntity"];
        if recipe["@type"] != "Recipe" {
            return Err(not("it holds no schema.org Recipe"));
        }
        // The version forked, by its address where the site gives one.
        let url = match document["version"].as_u64() {
            Some(n) if !id.contains("/versions/") => format!("{id}/versions/{n}"),
            _ => id.to_owned(),
        };
        let content = read_recipe(recipe, &url).map_err(|why| not(&why))?;
        let author = id_of(&document["attributedTo"]).ok_or_else(|| not("it has no author"))?;
        if !remote::same_site(author, id) {
            return Err(not("its author is on another site"));
        }
        let (_, actor) = self.fetch_json(author)?;
        let inbox = actor["endpoints"]["sharedInbox"]
            .as_str()
            .or_else(|| actor["inbox"].as_str())
            .filter(|inbox| remote::same_site(inbox, author))
            .ok_or_else(|| not("its author has no inbox on its site"))?;
        let name = actor["preferredUsername"].as_str().unwrap_or("someone");
        let site = remote::site_of(author).unwrap_or_default();
        Ok(RemoteRecipe {
            source: crate::import::source(&url, &format!("{}, by @{name}@{site}", content.title())),
            content,
            author_inbox: inbox.to_owned(),
        })
    }

    /// Tells the author of the recipe `fork` was forked from (at their
    /// `inbox`) of it, with its `Create`, signed by the fork's cook.
    pub fn tell_forked(
        &self,
        news: &Announcement,
        inbox: &str,
        memos: &Memos,
    ) -> Result<(), crate::domain::DomainError> {
        let Some(author) = news.recipe.author.as_deref() else {
            return Ok(());
        };
        let article = activitypub::article(
            &self.base_url,
            &Article::of_news(&self.base_url, memos, news),
        );
        let (id, body) = activitypub::told(
            &self.base_url,
            author,
            news.recipe.slug.as_str(),
            article,
            Told::Created,
        );
        self.federation
            .deliveries()
            .queue(&[Delivery::new(inbox, author, &id, body, now_millis())])
    }

    /// The news of the recipe with `slug` as made: what `tell_forked` tells.
    pub fn made(&self, slug: &Slug) -> Result<Announcement, crate::domain::DomainError> {
        let snapshot = self.recipes.snapshot();
        let recipe = snapshot.recipe(slug)?;
        let source = snapshot.source(recipe.id)?.map(|s| s.url);
        Ok(Announcement {
            recipe,
            happened: Happened::Created,
            based_on: None,
            source,
        })
    }
}

/// The recipe in a schema.org `Recipe` document, read as an import reads
/// a page's JSON-LD. A recipe without steps (or ingredients) is taken as
/// it is: the document is the recipe itself, not a page that might hold
/// the rest elsewhere.
fn read_recipe(recipe: &Value, url: &str) -> Result<Content, String> {
    // Inside a script element: `</` would end it.
    let json = recipe.to_string().replace("</", "<\\/");
    let html = format!("<script type=\"application/ld+json\">{json}</script>");
    match crate::import::from_html(&html, url) {
        Ok(imported) => Ok(imported.content),
        Err(crate::import::ImportError::Incomplete(partial)) => Ok(partial.imported.content),
        Err(error) => Err(error.to_string()),
    }
}
