//! The page around every view: `<head>`, the site's header and footer.

use maud::{html, Markup, PreEscaped, DOCTYPE};

use crate::assets;

/// Which part of the site a page belongs to, so the navigation can mark it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Recipes,
    Tags,
    About,
    Other,
}

/// What goes in a page's `<head>`.
pub struct Head<'a> {
    /// The page's own title; the site's name is added.
    pub title: &'a str,
    pub description: Option<&'a str>,
    /// The absolute URL search engines should index instead of this one.
    pub canonical: Option<&'a str>,
    /// Structured data, already escaped for a `<script>` element.
    pub json_ld: Option<String>,
    pub section: Section,
    /// Keep search engines off pages that only repeat others (diffs).
    pub noindex: bool,
    /// What the search box shows (the search page's own query).
    pub query: Option<&'a str>,
    /// The picture a link to the page shows when shared (`og:image`), an
    /// absolute URL, with the words that say what it shows.
    pub image: Option<(&'a str, &'a str)>,
    /// A feed of this page's own, beside the site's: its title and path.
    pub feed: Option<(&'a str, &'a str)>,
}

impl<'a> Head<'a> {
    pub fn new(title: &'a str, section: Section) -> Head<'a> {
        Head {
            title,
            description: None,
            canonical: None,
            json_ld: None,
            section,
            noindex: false,
            query: None,
            image: None,
            feed: None,
        }
    }
}

fn nav_link(href: &str, text: &str, current: bool) -> Markup {
    html! {
        li {
            @if current {
                a href=(href) aria-current="page" { (text) }
            } @else {
                a href=(href) { (text) }
            }
        }
    }
}

/// Where the header's links for whoever is asking start and end: comments
/// no text of a cook's can forge (text is escaped everywhere, and the
/// JSON-LD writes `<` as `\u003c`), looked for only before `<main>`.
const WHO_STARTS: &str = "<!--who-->";
const WHO_ENDS: &str = "<!--/who-->";
const MAIN_STARTS: &str = "<main id=\"main\">";

/// The header's links for a visitor who has not logged in.
fn visitor_links() -> Markup {
    html! {
        li { a href="/login" { "Log in" } }
        li { a href="/signup" { "Sign up" } }
    }
}

/// The header's links for the cook `handle`, called `name`: writing a
/// recipe, their own page, and their account.
pub fn cook_links(handle: &str, name: &str) -> Markup {
    html! {
        li { a href="/recipes/new" { "Write a recipe" } }
        li class="you" {
            // A long name is cut short by the style sheet: whole here.
            a href={ "/cooks/" (handle) } title=(name) { (name) }
        }
        li { a href="/account" { "Account" } }
    }
}

/// `page` (a whole page as `page` wrote it) with `links` in place of the
/// visitor's header links; `None` for text that is no such page.
pub fn with_cook_links(page: &str, links: &str) -> Option<String> {
    let top = &page[..page.find(MAIN_STARTS)?];
    let start = top.find(WHO_STARTS)? + WHO_STARTS.len();
    let end = start + top[start..].find(WHO_ENDS)?;
    let mut personal = String::with_capacity(page.len() - (end - start) + links.len());
    personal.push_str(&page[..start]);
    personal.push_str(links);
    personal.push_str(&page[end..]);
    Some(personal)
}

/// A whole page: `main` inside the site's layout.
///
/// Written as three pieces into one buffer sized for all of them, so a
/// long page's body is copied once instead of through a doubling buffer.
pub fn page(head: &Head, main: Markup) -> Markup {
    let top = top(head);
    let bottom = bottom();
    let main = main.into_string();
    let mut page = String::with_capacity(top.0.len() + main.len() + bottom.0.len());
    page.push_str(&top.0);
    page.push_str(&main);
    page.push_str(&bottom.0);
    PreEscaped(page)
}

/// Everything before the page's own content, up to and including the
/// opening `<main>`; `bottom` closes what this opens.
fn top(head: &Head) -> Markup {
    html! {
        (DOCTYPE)
        (PreEscaped("<html lang=\"en\">"))
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            title { (head.title) " · forkful" }
            @if let Some(description) = head.description {
                meta name="description" content=(description);
            }
            @if let Some(canonical) = head.canonical {
                link rel="canonical" href=(canonical);
            }
            @if head.noindex {
                meta name="robots" content="noindex";
            }
            @if let Some((image, alt)) = head.image {
                meta property="og:title" content=(head.title);
                meta property="og:type" content="article";
                @if let Some(canonical) = head.canonical {
                    meta property="og:url" content=(canonical);
                }
                meta property="og:image" content=(image);
                meta property="og:image:alt" content=(alt);
            }
            link rel="stylesheet" href=(assets::STYLE.path);
            link rel="icon" type="image/svg+xml" href=(assets::ICON.path);
            link rel="alternate" type="application/atom+xml" title="Recent changes" href="/feed.xml";
            @if let Some((title, href)) = head.feed {
                link rel="alternate" type="application/atom+xml" title=(title) href=(href);
            }
            script src=(assets::APP.path) defer {}
            @if let Some(json_ld) = &head.json_ld {
                script type="application/ld+json" { (PreEscaped(json_ld)) }
            }
        }
        (PreEscaped("<body>"))
        a class="skip-link" href="#main" { "Skip to content" }
        header class="site-header" {
            a class="brand" href="/" { "forkful" }
            nav aria-label="Site" {
                ul {
                    (nav_link("/", "Recipes", head.section == Section::Recipes))
                    (nav_link("/tags", "Tags", head.section == Section::Tags))
                    (nav_link("/about", "About", head.section == Section::About))
                    // A visitor's links: every visitor gets the same page,
                    // kept once; a cook's request has these put in place
                    // of them (`with_cook_links`).
                    (PreEscaped(WHO_STARTS))
                    (visitor_links())
                    (PreEscaped(WHO_ENDS))
                }
            }
            form class="search" role="search" action="/search" method="get" {
                label for="q" class="visually-hidden" { "Search recipes" }
                input id="q" name="q" type="search" placeholder="Search recipes" value=[head.query];
                button type="submit" { "Search" }
            }
        }
        (PreEscaped(MAIN_STARTS))
    }
}

/// What closes every page: `</main>`, the footer, `</body></html>`.
fn bottom() -> Markup {
    html! {
        (PreEscaped("</main>"))
        footer class="site-footer" {
            p {
                "forkful: every recipe keeps its whole history and can be forked. "
                a href="/feed.xml" { "Recent changes (Atom)" }
            }
        }
        (PreEscaped("</body></html>"))
    }
}
