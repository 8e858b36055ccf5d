//! A fork of a recipe on another site: its document is fetched (signed by
//! the site), its schema.org `Recipe` read as any imported recipe is
//! (`import::from_html`, over the `mainEntity` alone), and the recipe is
//! kept here (`Recipes::keep_remote`), with the versions fetched as facts,
//! so that the fork's lineage, comparison and bring-in run on it as on
//! any parent.
//! The remote recipe's author is then told, with the `Create` of the fork
//! (whose `forkedFrom` names their recipe), so that their site lists it:
//! their inbox is a fact of the fork (`:recipe/source-inbox`), and the
//! telling is queued from the log (`delivery`), as every delivery is.

use serde_json::Value;

use super::following::{inbox_of, FollowError};
use super::remote;
use super::Federated;
use crate::domain::{Content, RemoteParent};

const NO_RECIPE: &str = "it holds no schema.org Recipe";

/// A recipe's author on another site: who may tell of its versions, and
/// where they are told of its forks.
pub(super) struct RemoteAuthor<'a> {
    pub id: &'a str,
    pub name: Option<&'a str>,
    pub inbox: &'a str,
}

impl Federated {
    /// The recipe at `address` on another site (or one version of it), to
    /// fork or to bring up to date. Runs off the workers: it fetches.
    pub fn fetch_recipe(&self, address: &str) -> Result<RemoteParent, FollowError> {
        let address = address.trim();
        self.check_elsewhere(address)?;
        let (at, document) = self.fetch_json(address)?;
        self.check_elsewhere(&at)?;
        let not = |why: &str| FollowError::NotFollowable(address.to_owned(), why.to_owned());
        // Said before its author is looked up: no fetch for what is no recipe.
        if document["mainEntity"]["@type"] != "Recipe" {
            return Err(not(NO_RECIPE));
        }
        let actor = self.author_of(&document, address)?;
        let inbox = inbox_of(&actor).ok_or_else(|| not("its author has no inbox on its site"))?;
        let author = RemoteAuthor {
            id: actor["id"].as_str().unwrap_or_default(),
            name: actor["preferredUsername"].as_str(),
            inbox,
        };
        remote_parent(&document, &at, &author).map_err(|why: String| not(&why))
    }

    /// The recipe kept from `address` (the parent of a fork here) fetched
    /// again, and its new version kept if it has one. Runs off the workers.
    pub fn refresh_kept(&self, address: &str) -> Result<(), FollowError> {
        let parent = self.fetch_recipe(address)?;
        if parent.address != address {
            return Err(FollowError::NotFollowable(
                address.to_owned(),
                "it says it is elsewhere now".into(),
            ));
        }
        self.recipes.keep_remote(&parent)?;
        Ok(())
    }
}

/// The recipe an `Article` of a recipe (or of one of its versions) holds,
/// by `author`, as found at `at`: its address, the version's, and its
/// schema.org `Recipe`, read as an import reads a page's JSON-LD.
pub(super) fn remote_parent(
    document: &Value,
    at: &str,
    author: &RemoteAuthor,
) -> Result<RemoteParent, String> {
    let id = document["id"].as_str().ok_or("it has no id")?;
    if !remote::same_site(id, at) || !remote::same_site(id, author.id) {
        return Err("it says it is on another site".into());
    }
    if super::following::id_of(&document["attributedTo"]) != Some(author.id) {
        return Err("it names another author".into());
    }
    let recipe = &document["mainEntity"];
    if recipe["@type"] != "Recipe" {
        return Err(NO_RECIPE.into());
    }
    // A version's document is part of its recipe's.
    let address = match document["isPartOf"].as_str() {
        Some(whole) if remote::same_site(whole, id) => whole,
        _ => id,
    };
    if address.len() > crate::import::MAX_SOURCE_URL {
        return Err("its address is too long".into());
    }
    // Kept under its address, which must be written the one way.
    crate::domain::Slug::elsewhere_checked(address)
        .map_err(|bad| format!("its address {}", bad.why))?;
    // The version fetched, by its address where the site gives one.
    let url = match document["version"].as_u64() {
        Some(n) => format!("{address}/versions/{n}"),
        None => id.to_owned(),
    };
    let content = read_recipe(recipe, &url)?;
    let site = remote::site_of(author.id).unwrap_or_default();
    let name = author.name.unwrap_or("someone");
    Ok(RemoteParent {
        address: address.to_owned(),
        source: crate::import::source(&url, &format!("{}, by @{name}@{site}", content.title())),
        content,
        author: author.id.to_owned(),
        author_inbox: author.inbox.to_owned(),
    })
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
