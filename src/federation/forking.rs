//! A fork of a recipe on another site: its document is fetched (signed by
//! the site), its schema.org `Recipe` read as any imported recipe is
//! (`import::from_html`, over the `mainEntity` alone), and the fork starts
//! from it, its lineage beginning at the remote version it was made from.
//! The remote recipe's author is then told, with the `Create` of the fork
//! (whose `forkedFrom` names their recipe), so that their site lists it:
//! their inbox is a fact of the fork (`:recipe/source-inbox`), and the
//! telling is queued from the log (`delivery`), as every delivery is.

use serde_json::Value;

use super::following::{inbox_of, FollowError};
use super::remote;
use super::Federated;
use crate::domain::{Content, Source};

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
        self.check_elsewhere(address)?;
        let (at, document) = self.fetch_json(address)?;
        self.check_elsewhere(&at)?;
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
        let actor = self.author_of(&document, address)?;
        let inbox = inbox_of(&actor).ok_or_else(|| not("its author has no inbox on its site"))?;
        let author = actor["id"].as_str().unwrap_or_default();
        let name = actor["preferredUsername"].as_str().unwrap_or("someone");
        let site = remote::site_of(author).unwrap_or_default();
        Ok(RemoteRecipe {
            source: crate::import::source(&url, &format!("{}, by @{name}@{site}", content.title())),
            content,
            author_inbox: inbox.to_owned(),
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
