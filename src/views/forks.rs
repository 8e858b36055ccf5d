//! The fork tree of a recipe's family, as nested lists, written from the
//! flat list of the family (each recipe at its depth) without recursion.

use maud::{html, Markup, PreEscaped};

use super::family_drawing;
use super::layout::{self, Head, Section};
use super::{count, recipe_path};
use crate::domain::{Family, RemoteFork, TreeNode};

/// The deepest generation given a list of its own. A browser's parser
/// stops nesting elements 512 deep (Chrome's limit; the rest become
/// siblings, and the tree reads wrong), and each generation is two (`ul`,
/// `li`): deeper forks are listed in the last nested list, each saying
/// its generation.
pub const MAX_NESTED_GENERATIONS: usize = 100;

/// The family of one recipe: the tree from its original.
pub struct ForkTreeView<'a> {
    /// The recipe the page was asked for, marked in the tree.
    pub slug: &'a str,
    pub title: &'a str,
    /// The original first, then each recipe before its forks.
    pub nodes: &'a [TreeNode],
    /// Whether the tree was cut short at the size limit.
    pub truncated: bool,
    /// The recipe's forks on other sites.
    pub remote_forks: &'a [RemoteFork],
}

fn label(view: &ForkTreeView, node: &TreeNode) -> Markup {
    html! {
        @if node.slug == view.slug {
            strong aria-current="page" { (node.title) }
        } @else {
            a href=(recipe_path(&node.slug)) { (node.title) }
            @if let Some(site) = super::site_elsewhere(&node.slug) { " on " (site) }
        }
        " " span class="meta" {
            (count(node.version_count, "version", "versions"))
            @if node.depth > MAX_NESTED_GENERATIONS { ", generation " (node.depth) }
        }
    }
}

/// The nodes as nested lists: a node's forks are a `ul` inside its `li`.
/// Depth goes down one step at a time and up any number, so the tags are
/// opened and closed as the depth changes, with a stack's worth of state.
/// Past `MAX_NESTED_GENERATIONS`, forks are siblings in the deepest list.
fn tree(view: &ForkTreeView) -> Markup {
    let mut out = String::new();
    let mut open = 0; // `li`s open below the outer `ul`
    for node in view.nodes {
        let depth = node.depth.min(MAX_NESTED_GENERATIONS) + 1;
        if depth > open {
            if open > 0 {
                out.push_str("<ul>");
            }
        } else {
            out.push_str("</li>");
            for _ in depth..open {
                out.push_str("</ul></li>");
            }
        }
        open = depth;
        out.push_str("<li>");
        out.push_str(&label(view, node).into_string());
    }
    if open > 0 {
        out.push_str("</li>");
        for _ in 1..open {
            out.push_str("</ul></li>");
        }
    }
    PreEscaped(out)
}

pub fn page(view: &ForkTreeView) -> Markup {
    let title = format!("The family of {}", view.title);
    let description = format!(
        "The family of {}: the recipe it was forked from, the recipes forked from it, and who changed what.",
        view.title
    );
    let mut head = Head::new(&title, Section::Recipes);
    head.description = Some(&description);
    let root = view.nodes.first();
    layout::page(
        &head,
        html! {
            h1 { "The family of " a href=(recipe_path(view.slug)) { (view.title) } }
            @if let Some(root) = root {
                p class="lede" {
                    (count(view.nodes.len() as i64, "recipe", "recipes")) ", from the original "
                    a href=(recipe_path(&root.slug)) { (root.title) } " down."
                }
            }
            (family_drawing::drawing(view.nodes, view.slug))
            @if view.nodes.len() > 1 { h2 class="fork-list" { "As a list" } }
            ul class="fork-tree" role="list" { (tree(view)) }
            @if view.truncated {
                p class="notice" { "The family is larger than this page shows." }
            }
            @if !view.remote_forks.is_empty() {
                h2 { "Forks of " (view.title) " on other sites" }
                ul class="remote-forks" {
                    @for fork in view.remote_forks {
                        li { a href=(fork.url) rel="nofollow ugc" { (fork.name) } " by " (fork.by) }
                    }
                }
            }
        },
    )
}

/// The family page of the recipe with `slug`.
pub fn family(slug: &str, family: &Family) -> Markup {
    page(&ForkTreeView {
        slug,
        title: &family.title,
        nodes: &family.nodes,
        truncated: family.truncated,
        remote_forks: &family.remote_forks,
    })
}
