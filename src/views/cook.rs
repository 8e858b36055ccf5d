//! A cook's page: their recipes and their forks.

use maud::{html, Markup};

use super::catalog::cards;
use super::layout::{self, Head, Section};
use super::markdown::Memos;
use super::{count, Text};
use crate::domain::{CookPage, COOK_PAGE_LIMIT};

pub fn page(cook: &CookPage, memos: &Memos) -> Markup {
    let title = format!("{} ({})", cook.name, cook.handle);
    let written = cook.originals.len() + cook.forks.len();
    let forks = match cook.forks.len() {
        1 => "1 fork".to_owned(),
        n => format!("{n} forks"),
    };
    let description = format!(
        "Recipes by {}: {} of their own and {forks} of others', each with its whole history.",
        cook.name,
        cook.originals.len(),
    );
    let feed_title = format!("Suggestions to {}'s recipes", cook.name);
    let feed_path = super::account::suggestions_feed_path(&cook.handle);
    let mut head = Head::new(&title, Section::Recipes);
    head.description = Some(&description);
    head.feed = Some((&feed_title, &feed_path));
    layout::page(
        &head,
        html! {
            h1 { (Text(&cook.name)) " " span class="handle" { (cook.handle) } }
            p class="lede" {
                (count(written as i64, "recipe", "recipes")) ": "
                (cook.originals.len()) " of their own, "
                (count(cook.forks.len() as i64, "fork", "forks")) " of others'."
            }
            @if !cook.originals.is_empty() {
                h2 { "Recipes" }
                (cards(&cook.originals, memos))
            }
            @if !cook.forks.is_empty() {
                h2 { "Forks" }
                (cards(&cook.forks, memos))
            }
            @if cook.truncated {
                p class="notice" { "This page lists the first " (COOK_PAGE_LIMIT) " of them." }
            }
            p class="meta" { a href=(feed_path) { "Suggestions to their recipes, as a feed" } }
        },
    )
}
