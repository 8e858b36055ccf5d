//! Reading a recipe from a large page (issue 52): 500 KB of HTML, as a
//! recipe blog's page is once its comments, sidebars and scripts are in.
//!
//! - `jsonld_500k`: the recipe in the page's JSON-LD, the rest article.
//! - `card_500k`: no schema.org; the recipe in a WP Recipe Maker card at
//!   the page's end, so that every reading before the card's looks first.
//! - `headings_500k`: no markup at all; the recipe under "Ingredients" and
//!   "Method" headings after 500 KB of article, the last reading tried.
//! - `hostile_500k`: 500 KB of "Ingredients" and "Method" headings with
//!   nothing after them, built to make the headings' reading slow.
//!
//! Each reports its allocations (count and bytes per read) beside the
//! time: the bytes bound what one import holds at once.

mod common;

use std::hint::black_box;

use common::report_allocations;
use criterion::{criterion_group, criterion_main, Criterion};
use forkful::import;

const URL: &str = "https://recipes.example/dal/";
const PAGE_BYTES: usize = 500 * 1024;

/// Article paragraphs, comments and a sidebar of links: `bytes` of them.
fn article(bytes: usize) -> String {
    let block = "<div class=\"comment\"><p class=\"author\">A reader</p><p>We made this on a \
                 Tuesday and the whole family loved it; next time I will add more garlic and a \
                 squeeze of lemon at the end.</p><a href=\"/reply\">Reply</a></div>\n\
                 <aside><ul><li><a href=\"/other\">Another recipe</a></li><li><a href=\"/more\">\
                 More like this</a></li></ul></aside>\n";
    block.repeat(bytes / block.len() + 1)
}

fn page(head: &str, body_end: &str) -> String {
    let html = format!(
        "<!DOCTYPE html><html><head><title>Dal</title>{head}</head><body><h1>Weeknight Dal</h1>{}{body_end}</body></html>",
        article(PAGE_BYTES)
    );
    assert!(html.len() >= PAGE_BYTES);
    html
}

fn benches(c: &mut Criterion) {
    let ingredients: Vec<String> = (1..=20).map(|n| format!("{n} g of thing {n}")).collect();
    let steps: Vec<String> = (1..=12)
        .map(|n| format!("Do step {n} with care."))
        .collect();
    let jsonld = page(
        &format!(
            "<script type=\"application/ld+json\">{}</script>",
            serde_json::json!({
                "@context": "https://schema.org", "@type": "Recipe", "name": "Weeknight Dal",
                "recipeIngredient": ingredients,
                "recipeInstructions": steps.iter().map(|s| serde_json::json!({"@type": "HowToStep", "text": s})).collect::<Vec<_>>(),
                "prepTime": "PT10M", "cookTime": "PT25M"
            })
        ),
        "",
    );
    let list = |items: &[String], item: &str| -> String {
        items
            .iter()
            .map(|i| format!("<li{item}>{i}</li>"))
            .collect()
    };
    let card = page(
        "",
        &format!(
            "<div class=\"wprm-recipe-container\"><h2 class=\"wprm-recipe-name\">Weeknight Dal</h2>\
             <ul>{}</ul><ul>{}</ul></div>",
            list(&ingredients, " class=\"wprm-recipe-ingredient\""),
            steps
                .iter()
                .map(|s| format!("<li><div class=\"wprm-recipe-instruction-text\">{s}</div></li>"))
                .collect::<String>()
        ),
    );
    let headings = page(
        "",
        &format!(
            "<h2>Ingredients</h2><ul>{}</ul><h2>Method</h2><ol>{}</ol>",
            list(&ingredients, ""),
            list(&steps, "")
        ),
    );
    let hostile = {
        let pair = "<h2>Ingredients</h2><p>x</p><h2>Method</h2><h3>y</h3>\n";
        format!(
            "<html><body><h1>Soup</h1>{}</body></html>",
            pair.repeat(PAGE_BYTES / pair.len() + 1)
        )
    };
    let read = |html: &str| import::from_html(html, URL);
    // What each page gives, checked once: the bench measures real reads.
    for (name, html) in [
        ("jsonld", &jsonld),
        ("card", &card),
        ("headings", &headings),
    ] {
        let imported = read(html).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            (
                imported.content.ingredients().len(),
                imported.content.steps().len()
            ),
            (20, 12),
            "{name}"
        );
    }
    assert!(read(&hostile).is_err());

    let mut group = c.benchmark_group("import");
    for (name, html) in [
        ("jsonld_500k", &jsonld),
        ("card_500k", &card),
        ("headings_500k", &headings),
        ("hostile_500k", &hostile),
    ] {
        group.bench_function(name, |b| b.iter(|| black_box(read(black_box(html)))));
        report_allocations(&format!("import/{name}"), || read(html));
    }
    group.finish();
}

criterion_group! {
    name = import;
    config = common::criterion();
    targets = benches
}
criterion_main!(import);
