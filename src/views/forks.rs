//! The fork tree of a recipe's family, as nested lists.

use maud::{html, Markup};

use super::layout::{self, Head, Section};
use super::{count, recipe_path};
use crate::domain::{Family, TreeNode};

/// The family of one recipe: the tree from its original.
pub struct ForkTreeView<'a> {
    /// The recipe the page was asked for, marked in the tree.
    pub slug: &'a str,
    pub title: &'a str,
    pub root: &'a TreeNode,
    /// Whether the tree was cut short at the size limit.
    pub truncated: bool,
}

fn node(view: &ForkTreeView, node: &TreeNode) -> Markup {
    html! {
        li {
            @if node.slug == view.slug {
                strong aria-current="page" { (node.title) }
            } @else {
                a href=(recipe_path(&node.slug)) { (node.title) }
            }
            " " span class="meta" { (count(node.version_count, "version", "versions")) }
            @if !node.children.is_empty() {
                ul { @for child in &node.children { (self::node(view, child)) } }
            }
        }
    }
}

pub fn page(view: &ForkTreeView) -> Markup {
    let title = format!("The family of {}", view.title);
    let head = Head::new(&title, Section::Recipes);
    layout::page(
        &head,
        html! {
            h1 { "The family of " a href=(recipe_path(view.slug)) { (view.title) } }
            p class="lede" {
                (count(view.root.size() as i64, "recipe", "recipes")) ", from the original "
                a href=(recipe_path(&view.root.slug)) { (view.root.title) } " down."
            }
            ul class="fork-tree" role="list" { (node(view, view.root)) }
            @if view.truncated {
                p class="notice" { "The family is larger than this page shows." }
            }
        },
    )
}

/// The family page of the recipe with `slug`.
pub fn family(slug: &str, family: &Family) -> Markup {
    page(&ForkTreeView {
        slug,
        title: &family.title,
        root: &family.root,
        truncated: family.truncated,
    })
}
