//! The family drawn: the fork tree page's SVG, checked against the domain's
//! own account of the family, and kept readable for families of hundreds.

use forkful::domain::{pages, Change, ContentDraft, Recipes, Slug};
use forkful::store::Store;
use forkful::views::family_drawing::{DRAWN, GENERATIONS_ABOVE};

use crate::helpers::{chain, demo, family_of, get, site, Page};

fn slug(s: &str) -> Slug {
    Slug::parse(s).unwrap()
}

/// The text of each recipe row drawn, in order.
fn rows(page: &Page) -> Vec<String> {
    page.texts("figure.family-drawing svg g.recipe text")
}

#[actix_web::test]
async fn the_family_is_drawn_as_the_domain_knows_it() {
    let recipes = demo();
    let site = site(recipes);
    let view = recipes.snapshot();
    let family = pages::family(&view, &slug("green-shakshuka"), 500).unwrap();
    let page = get(&site, "/recipes/green-shakshuka/forks").await;
    assert_eq!(page.status, 200);
    // Every recipe a row, linked to its page, in the list's order.
    let drawn = rows(&page);
    assert_eq!(drawn.len(), family.nodes.len());
    for (row, node) in drawn.iter().zip(&family.nodes) {
        assert!(row.starts_with(&node.title), "{row} against {}", node.title);
    }
    let links = page.attrs("svg g.recipe a.title", "href");
    let want: Vec<String> = family
        .nodes
        .iter()
        .map(|n| format!("/recipes/{}", n.slug))
        .collect();
    assert_eq!(links, want);
    // Each version a mark linked to that version.
    let marks = page.attrs("svg g.recipe a[href*='/versions/']", "href");
    assert_eq!(page.texts("svg g.recipe circle.mark").len(), marks.len());
    let versions: u32 = family.nodes.iter().map(|n| n.version_count).sum();
    assert_eq!(marks.len() as u32, versions);
    // Each fork joined to the version of its parent it copied.
    let mut edges = page.attrs("svg g.edges a", "href");
    let mut want = Vec::new();
    for node in &family.nodes[1..] {
        let recipe = view.recipe(&slug(&node.slug)).unwrap();
        let (parent, version) = recipe.forked_from.unwrap();
        want.push(format!(
            "/recipes/{}/versions/{version}",
            view.slug_of(parent).unwrap()
        ));
    }
    edges.sort();
    want.sort();
    assert_eq!(edges, want);
    // The page's recipe stands out, and only it.
    let current = page.texts("svg g.recipe.current text");
    assert_eq!(current.len(), 1);
    assert!(current[0].starts_with("Green shakshuka ·"), "{current:?}");
    // The nested list stays, as the text alternative.
    assert_eq!(page.texts("ul.fork-tree li").len(), family.nodes.len());
    assert_eq!(page.attrs("svg", "role"), ["img"]);
}

#[actix_web::test]
async fn a_recipe_alone_draws_nothing() {
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    let content = ContentDraft {
        title: "Alone".into(),
        ingredients: vec!["1 egg".into()],
        ..ContentDraft::default()
    };
    recipes
        .create(&slug("alone"), content, &Change::by("ann", "new"))
        .unwrap();
    let page = get(&site(&recipes), "/recipes/alone/forks").await;
    assert_eq!(page.status, 200);
    assert!(page.texts("figure.family-drawing").is_empty());
}

/// Issue 31: a long title is shortened in the drawing, whole in its
/// `<title>`, and the picture is wide enough for every label it draws.
#[actix_web::test]
async fn a_long_title_is_shortened_in_the_drawing_and_whole_in_its_title() {
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    let long = "Slow-fermented country sourdough with toasted sesame and fennel seeds";
    let content = ContentDraft {
        title: "Loaf".into(),
        ingredients: vec!["500 g flour".into()],
        ..ContentDraft::default()
    };
    recipes
        .create(&slug("loaf"), content, &Change::by("ann", "new"))
        .unwrap();
    recipes
        .fork(
            &slug("loaf"),
            None,
            Some(&slug("long-loaf")),
            |c| ContentDraft {
                title: long.into(),
                ..c
            },
            &Change::by("bo", "mine"),
        )
        .unwrap();
    let page = get(&site(&recipes), "/recipes/loaf/forks").await;
    let drawn = rows(&page);
    let shortened = drawn
        .iter()
        .find(|row| row.starts_with("Slow-fermented"))
        .unwrap();
    assert!(
        shortened.contains("…") && !shortened.contains(long),
        "{shortened}"
    );
    assert_eq!(page.texts("svg g.recipe a.title title"), [long]);
    // At 8 px a character, as estimated, every label fits the picture.
    let width: f64 = page.attrs("figure.family-drawing svg", "width")[0]
        .parse()
        .unwrap();
    let xs = page.attrs("svg g.recipe a.title text", "x");
    for (row, x) in drawn.iter().zip(xs) {
        let x: f64 = x.parse().unwrap();
        assert!(
            x + 8.0 * row.chars().count() as f64 <= width,
            "{row} at {x} in {width}"
        );
    }
}

/// An original and `n - 1` forks, each of the recipe `(i - 1) / 3`: a
/// family three wide at every step.
fn wide_family(n: usize) -> Recipes {
    family_of(n, |i| (i - 1) / 3)
}

#[actix_web::test]
async fn a_family_of_five_hundred_is_drawn_with_branches_collapsed_and_counted() {
    let recipes = wide_family(500);
    let site = site(&recipes);
    // A recipe five generations down: r363's parent is r120, then r39,
    // r12, r3, r0.
    let page = get(&site, "/recipes/r363/forks").await;
    assert_eq!(page.status, 200);
    let drawn = rows(&page);
    assert_eq!(drawn.len(), DRAWN);
    // The way down to the page's recipe is drawn, and it is marked.
    for way in [
        "Recipe 0 ",
        "Recipe 3 ",
        "Recipe 12 ",
        "Recipe 39 ",
        "Recipe 120 ",
    ] {
        assert!(drawn.iter().any(|r| r.starts_with(way)), "{way} not drawn");
    }
    assert!(page.texts("svg g.recipe.current text")[0].starts_with("Recipe 363 "));
    // Every recipe left out is counted under a drawn one.
    let hidden: usize = page
        .texts("svg tspan.hidden")
        .iter()
        .map(|t| {
            let count = t.split('+').nth(1).unwrap().split(' ').next().unwrap();
            count.parse::<usize>().unwrap()
        })
        .sum();
    assert_eq!(drawn.len() + hidden, 500);
    assert!(page.texts("figure.family-drawing figcaption")[0]
        .contains(&format!("{} of 500 recipes are drawn", drawn.len())));
    // The list still has them all.
    assert_eq!(page.texts("ul.fork-tree li").len(), 500);
}

#[actix_web::test]
async fn a_deep_recipe_is_drawn_from_a_few_generations_up() {
    let recipes = chain(40);
    let page = get(&site(&recipes), "/recipes/r30/forks").await;
    let drawn = rows(&page);
    let top = 30 - GENERATIONS_ABOVE;
    assert!(drawn[0].starts_with(&format!("Recipe {top} ")), "{drawn:?}");
    assert!(drawn.last().unwrap().starts_with("Recipe 40 "));
    assert_eq!(drawn.len(), 40 - top + 1);
}
