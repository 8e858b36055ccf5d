//! Tags are free text: every link to a tag's page, percent-encoded, leads
//! back through the router to the same tag.

use forkful::domain::{Change, ContentDraft, Recipes, Slug};
use forkful::store::Store;

use crate::helpers::{get, site};

/// A space, `/`, `?`, `#`, `%` and letters beyond ASCII, each of which a
/// path would misread if it were written as it is.
const AWKWARD: &str = "milk bread/ü?#%é 50% off";

#[actix_web::test]
async fn a_tag_that_a_url_must_escape_links_to_its_own_page() {
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    let content = ContentDraft {
        title: "Tangzhong loaf".into(),
        tags: vec![AWKWARD.into(), "bread".into()],
        ..ContentDraft::default()
    };
    recipes
        .create(
            &Slug::parse("tangzhong-loaf").unwrap(),
            content,
            &Change::by("ana", "first"),
        )
        .unwrap();
    let site = site(&recipes);

    let recipe = get(&site, "/recipes/tangzhong-loaf").await;
    assert_eq!(recipe.status, 200);
    let links = recipe.attrs("a.tag", "href");
    assert_eq!(links.len(), 2, "{links:?}");
    let href = links
        .iter()
        .find(|h| *h != "/tags/bread")
        .expect("a link to the awkward tag");
    assert_eq!(
        href,
        "/tags/milk%20bread%2F%C3%BC%3F%23%25%C3%A9%2050%25%20off"
    );

    let tagged = get(&site, href).await;
    assert_eq!(tagged.status, 200, "{href}");
    assert_eq!(tagged.texts("h1"), [format!("Recipes tagged {AWKWARD}")]);
    assert_eq!(tagged.texts("li.recipe-card h2"), ["Tangzhong loaf"]);
    // The page's own links (sorting, canonical) use the same path.
    let sorted = format!("{href}?sort=recent");
    assert!(tagged.attrs("nav.sort a", "href").contains(&sorted));
    assert_eq!(get(&site, &sorted).await.status, 200);

    // The tag cloud links to it the same way.
    let cloud = get(&site, "/tags").await;
    assert!(cloud.attrs("a.tag", "href").contains(href), "from /tags");
}
