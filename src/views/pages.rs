//! The smaller pages: tags, search, about, and errors.

use maud::{html, Markup};

use super::layout::{self, Head, Section};
use super::tag_path;

/// Every tag in use with its number of recipes.
pub fn tags(tags: &[(String, usize)]) -> Markup {
    let mut head = Head::new("Tags", Section::Tags);
    head.description = Some("Every tag on forkful's recipes, with how many recipes carry it.");
    layout::page(
        &head,
        html! {
            h1 { "Tags" }
            @if tags.is_empty() {
                p class="notice" { "No recipe has a tag yet." }
            } @else {
                ul class="tag-cloud" role="list" {
                    @for (tag, n) in tags {
                        li {
                            a class="tag" href=(tag_path(tag)) {
                                (tag) " " span class="count" {
                                    (n) span class="visually-hidden" { " recipes" }
                                }
                            }
                        }
                    }
                }
            }
        },
    )
}

/// What forkful is.
pub fn about() -> Markup {
    let mut head = Head::new("About", Section::About);
    head.description = Some(
        "What forkful is: recipes that keep their whole history and can be forked, like repositories.",
    );
    layout::page(
        &head,
        html! {
            h1 { "About forkful" }
            p class="lede" {
                "forkful is a recipe site in which every recipe keeps its whole history and can be
                 forked, like a repository."
            }
            h2 { "Versions" }
            p {
                "Nothing is ever overwritten. Each change to a recipe is a new version; every
                 version can be read as it was, and any two can be compared line by line."
            }
            h2 { "Forks" }
            p {
                "A fork is a new recipe that starts from a version of another: a vegan take on a
                 pancake, a weeknight shortcut of a long braise. A fork's page shows its lineage back
                 to the original, and its family shows every fork around it."
            }
            h2 { "For programs" }
            p {
                "Each recipe page carries schema.org Recipe data, and "
                code { "/recipes/{slug}.json" } " serves the recipe as JSON. "
                a href="/feed.xml" { "The Atom feed" } " lists recent changes and "
                a href="/sitemap.xml" { "the sitemap" } " every recipe."
            }
        },
    )
}

/// An error page in the site's layout.
pub fn error(heading: &str, message: &str) -> Markup {
    let mut head = Head::new(heading, Section::Other);
    // Out of the index by design: an error page describes no content.
    head.noindex = true;
    layout::page(
        &head,
        html! {
            section class="error" {
                h1 { (heading) }
                p { (message) }
                p { a href="/" { "Back to the recipes" } }
            }
        },
    )
}
