//! The form that brings a recipe in from another site.

use maud::{html, Markup};

use super::form_fields::{form_errors, textarea, token, Field, FieldErrors};
use super::layout::{self, Head, Section};

/// What was typed into the form.
#[derive(Debug, Clone, Default)]
pub struct Fields {
    pub url: String,
    pub html: String,
}

pub fn page(fields: &Fields, errors: &FieldErrors, csrf: &str) -> Markup {
    // Out of the index by design, as every form a cook writes in.
    let mut head = Head::new("Add a recipe from another site", Section::Recipes);
    head.noindex = true;
    let mut url = Field {
        kind: "url",
        required: false,
        ..Field::text("url", "The recipe's address", &fields.url)
    };
    url.hint = Some("An https:// page with a recipe on it: most recipe sites mark theirs up so that search engines can read it, and so can this site.");
    layout::page(
        &head,
        html! {
            h1 { "Add a recipe from another site" }
            p class="lede" {
                "The recipe comes in as yours to change, and its lineage starts at the page it came from."
            }
            (form_errors(errors))
            form class="import-form" method="post" action="/import" {
                (token(csrf))
                (url.render(errors))
                (textarea("html", "Or paste the page's HTML", &fields.html,
                    Some("For a page the site cannot fetch: view its source, copy it all, paste it here (with its address above)."),
                    6, errors))
                button type="submit" { "Bring it in" }
            }
        },
    )
}

/// A recipe brought in without the picture its page named.
pub struct Unfetched<'a> {
    pub title: &'a str,
    /// The new recipe's page.
    pub path: &'a str,
    /// The picture's address on the other site.
    pub address: &'a str,
    /// Why it could not be fetched, a sentence.
    pub why: &'a str,
}

/// The answer to an import whose recipe came in but whose picture did not:
/// where the recipe is, and what to do about the picture.
pub fn without_picture(u: &Unfetched) -> Markup {
    // Out of the index by design: one cook's result.
    let mut head = Head::new("Brought in, without its picture", Section::Recipes);
    head.noindex = true;
    layout::page(
        &head,
        html! {
            h1 { "Brought in, without its picture" }
            p class="lede" { a href=(u.path) { (u.title) } " is now yours to change." }
            p class="notice" {
                "Its page names a picture at " code { (u.address) } ", which could not be brought in: " (u.why)
                " The recipe has no picture; to give it one, "
                a href={ (u.path) "/edit" } { "edit it" }
                " and upload a picture or give that address again."
            }
        },
    )
}
