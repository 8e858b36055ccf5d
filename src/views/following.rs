//! A cook's page of what they follow on other sites: the form to follow a
//! cook or a recipe elsewhere, what they follow (and whether it accepted),
//! and the news that came of it. Their own, never public.

use maud::{html, Markup};

use super::form_fields::{form_errors, token, Field, FieldErrors};
use super::layout::{self, Head, Section};
use crate::domain::federation::{Following, News};
use crate::domain::Cook;

/// What the page shows.
pub struct FollowingPage<'a> {
    pub cook: &'a Cook,
    pub following: &'a [Following],
    pub news: &'a [News],
    /// What was typed in the forms (to follow, to fork), kept when it was
    /// refused.
    pub address: &'a str,
    pub recipe: &'a str,
    pub notice: Option<&'a str>,
}

fn told(news: &News) -> Markup {
    let version = news.version.map(|v| format!(" (version {v})"));
    html! {
        @match news.kind.as_str() {
            "Create" => { (news.by) " wrote " a href=(news.url) rel="nofollow" { (news.name) } "." }
            "Update" => { (news.by) " changed " a href=(news.url) rel="nofollow" { (news.name) } (version.unwrap_or_default()) "." }
            _ => { (news.by) " retired " a href=(news.url) rel="nofollow" { (news.url) } "." }
        }
    }
}

pub fn following(page: &FollowingPage, errors: &FieldErrors, csrf: &str) -> Markup {
    let mut head = Head::new("Following", Section::Other);
    head.noindex = true;
    let mut address = Field::text(
        "address",
        "A cook or a recipe on another site",
        page.address,
    );
    address.hint = Some(
        "A handle such as @ann@recipes.example, or the address of a cook's or recipe's page there.",
    );
    let mut recipe = Field::text("recipe", "A recipe's address on another site", page.recipe);
    recipe.hint = Some(
        "Its page's address: your fork starts from the version it is at, and its cook is told.",
    );
    layout::page(
        &head,
        html! {
            h1 { "Following" }
            @if let Some(notice) = page.notice { p class="notice" role="status" { (notice) } }
            p { "Cooks and recipes on other sites (forkful, Mastodon, and the rest of the fediverse) that "
                (page.cook.name) " follows: their new recipes and versions are listed here." }
            (form_errors(errors))
            form class="account-form" method="post" action="/following" {
                (token(csrf))
                (address.render(errors))
                button type="submit" { "Follow" }
            }
            h2 { "Fork a recipe from another site" }
            form class="account-form" method="post" action="/following/fork" {
                (token(csrf))
                (recipe.render(errors))
                button type="submit" { "Fork it here" }
            }
            h2 { "You follow" }
            @if page.following.is_empty() {
                p { "Nothing yet." }
            } @else {
                ul class="following" {
                    @for f in page.following {
                        li {
                            a href=(f.object) rel="nofollow" { (f.name) }
                            @if !f.accepted { " (waiting for it to accept)" }
                            form class="inline" method="post" action="/following/stop" {
                                (token(csrf))
                                input type="hidden" name="object" value=(f.object);
                                button type="submit" { "Stop following" }
                            }
                        }
                    }
                }
            }
            h2 { "News" }
            @if page.news.is_empty() {
                p { "No news yet." }
            } @else {
                ul class="news" {
                    @for n in page.news { li { (told(n)) } }
                }
            }
        },
    )
}
