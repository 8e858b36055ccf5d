//! Servings and units: every demo line scaled reads sensibly, the lines
//! that cannot be scaled are the docs' table, and the recipe page scales
//! without JavaScript and refuses what it cannot do.

use forkful::domain::ingredient::IngredientLine;
use forkful::domain::scale::{scale_line, Scale, Units};
use forkful::domain::{Change, Content, ContentDraft, Recipes, Slug};

use crate::helpers::{demo, get, site, whole_catalog};

/// Every demo recipe's content now, with its slug.
fn demo_recipes() -> Vec<(Slug, Content)> {
    let view = demo().snapshot();
    whole_catalog(&view)
        .entries
        .into_iter()
        .map(|entry| {
            let slug = Slug::parse(&entry.slug).unwrap();
            let content = view.recipe(&slug).unwrap().content;
            (slug, content)
        })
        .collect()
}

/// The amount at the start of a scaled line, read back, with its unit.
fn read_back(line: &str) -> (f64, Option<&'static str>) {
    let parsed = IngredientLine::parse(line);
    let q = parsed
        .quantity()
        .unwrap_or_else(|| panic!("{line:?} lost its amount"));
    (q.amount, parsed.unit())
}

/// How many of `unit`'s base unit (g, ml) one of it is; 1 for counts.
fn base(unit: Option<&str>) -> f64 {
    match unit {
        Some("kg" | "l") => 1000.0,
        Some("tbsp") => 3.0, // in teaspoons, beside `tsp`
        Some("cup") => 48.0,
        _ => 1.0,
    }
}

/// Half the step `unit` is rounded to, in the base units of `base`.
fn half_step(unit: Option<&str>) -> f64 {
    let step = match unit {
        Some("g" | "ml") => 1.0,
        Some("kg" | "l") => 0.01,
        Some("tsp" | "tbsp") => 0.25,
        _ => 0.25,
    };
    step * base(unit) / 2.0
}

#[test]
fn every_demo_line_scaled_by_a_half_two_and_three_reads_sensibly() {
    let mut scaled_lines = 0;
    for (slug, content) in demo_recipes() {
        for line in content.ingredients() {
            let parsed = IngredientLine::parse(line);
            let Some(q) = parsed.quantity() else {
                continue;
            };
            for factor in [0.5, 2.0, 3.0] {
                let out = scale_line(line, factor, Units::AsWritten);
                let context = format!("{slug}: {line:?} x {factor} gave {out:?}");
                assert!(
                    out.starts_with(|c: char| c.is_ascii_digit() || "¼½¾⅛⅓⅔".contains(c)),
                    "{context}"
                );
                assert!(
                    !out.starts_with("0 ") && !out.contains("NaN") && !out.contains("inf"),
                    "{context}"
                );
                // No long decimals: `1.5 kg`, never `1.3333 kg`.
                let number = out.split_whitespace().next().unwrap();
                if let Some((_, decimals)) = number.split_once('.') {
                    assert!(decimals.len() <= 2, "{context}");
                }
                // What the cook said after the amount stays: the note
                // (but for an "about" amount in it, which scales).
                if let Some(note) = parsed.note().filter(|n| !n.contains("about ")) {
                    assert!(out.contains(note), "{context}");
                }
                // The amount is the written one times the factor, within
                // the rounding its unit is measured in (a tin of 400 g
                // is counted as tins; sizes are not scaled).
                let (amount, unit) = read_back(&out);
                if out.contains(" x ") || matches!(parsed.unit(), Some("cm" | "inch")) {
                    continue;
                }
                let want = q.amount * factor * base(parsed.unit());
                let got = amount * base(unit);
                let close = (got - want).abs() <= (want * 0.1).max(half_step(unit)) + 1e-9;
                assert!(close, "{context}: {got} against {want}");
                scaled_lines += 1;
            }
        }
    }
    assert!(scaled_lines > 900, "only {scaled_lines} lines scaled");
}

/// The table of demo lines scaling leaves alone, in docs/SCALING.md.
fn documented_unscaled_lines() -> Vec<String> {
    let doc = include_str!("../../docs/SCALING.md");
    let table = doc
        .split("<!-- unscaled lines -->")
        .nth(1)
        .expect("docs/SCALING.md has the table of unscaled lines");
    table
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once("` |"))
        .map(|(line, _)| line.to_owned())
        .collect()
}

#[test]
fn the_docs_list_every_demo_line_scaling_leaves_alone() {
    let mut unscaled: Vec<String> = demo_recipes()
        .into_iter()
        .flat_map(|(_, content)| content.into_draft().ingredients)
        .filter(|line| scale_line(line, 2.0, Units::AsWritten) == *line)
        .collect();
    unscaled.sort();
    unscaled.dedup();
    let mut documented = documented_unscaled_lines();
    documented.sort();
    assert_eq!(
        documented,
        unscaled,
        "docs/SCALING.md's table should be exactly:\n{}",
        unscaled
            .iter()
            .map(|l| format!("| `{l}` |"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// A demo recipe that says it serves 4.
fn for_four() -> (Slug, Content) {
    demo_recipes()
        .into_iter()
        .find(|(_, c)| c.recipe_yield().servings == Some(4) && c.ingredients().len() > 5)
        .expect("a demo recipe for 4")
}

#[actix_web::test]
async fn a_recipe_page_scales_to_the_servings_asked_for() {
    let site = site(demo());
    let (slug, content) = for_four();
    let original = get(&site, &format!("/recipes/{slug}")).await;
    let scaled = get(&site, &format!("/recipes/{slug}?servings=8")).await;
    assert_eq!(scaled.status, 200);
    let scale = Scale::for_recipe(&content, Some(8), Units::AsWritten).unwrap();
    let want: Vec<String> = content
        .ingredients()
        .iter()
        .map(|l| scale.line(l))
        .collect();
    assert_eq!(scaled.texts(".ingredients li"), want);
    assert_ne!(
        scaled.texts(".ingredients li"),
        original.texts(".ingredients li")
    );
    assert_eq!(
        scaled.texts(".ingredients p.scaled"),
        ["Scaled from 4 to 8 servings. Show the recipe as written."]
    );
    assert_eq!(scaled.texts(".facts dt")[0], "Serves");
    assert_eq!(scaled.texts(".facts dd")[0], "8");
    // A view of the recipe, not another one: not indexed, pointed at the
    // original, with the original's structured data.
    assert_eq!(scaled.attrs("meta[name=robots]", "content"), ["noindex"]);
    assert!(original.attrs("meta[name=robots]", "content").is_empty());
    assert_eq!(
        scaled.attrs("link[rel=canonical]", "href"),
        original.attrs("link[rel=canonical]", "href")
    );
    assert_eq!(scaled.json_ld(), original.json_ld());
    // The control is a plain GET form: it works without JavaScript.
    assert_eq!(original.attrs("form.scale", "method"), ["get"]);
    assert_eq!(
        original.attrs("form.scale", "action"),
        [format!("/recipes/{slug}")]
    );
    assert_eq!(
        original.attrs("form.scale input[name=servings]", "value"),
        ["4"]
    );
    assert_eq!(
        scaled.attrs("form.scale input[name=servings]", "value"),
        ["8"]
    );
    // Asking for the servings it is written for is the recipe as written.
    let same = get(&site, &format!("/recipes/{slug}?servings=4")).await;
    assert_eq!(
        same.texts(".ingredients li"),
        original.texts(".ingredients li")
    );
    assert!(same.texts(".ingredients p.scaled").is_empty());
}

#[actix_web::test]
async fn units_convert_on_the_page() {
    let site = site(demo());
    let (slug, content) = demo_recipes()
        .into_iter()
        .find(|(_, c)| c.ingredients().iter().any(|l| l.starts_with("1 cup ")))
        .expect("a demo recipe in cups");
    let page = get(&site, &format!("/recipes/{slug}?units=metric")).await;
    assert_eq!(page.status, 200);
    let lines = page.texts(".ingredients li");
    let cup_lines: Vec<&String> = lines.iter().filter(|l| l.contains(" cup")).collect();
    assert!(cup_lines.is_empty(), "{cup_lines:?}");
    assert_eq!(lines.len(), content.ingredients().len());
    assert!(page.texts(".ingredients p.scaled")[0].contains("metric"));
    assert_eq!(
        page.attrs("form.scale option[selected]", "value"),
        ["metric"]
    );
}

#[actix_web::test]
async fn a_scale_that_cannot_be_shown_is_a_clear_400() {
    let site = site(demo());
    let (slug, _) = for_four();
    let cases = [
        (
            format!("/recipes/{slug}?servings=lots"),
            "is not a number of servings",
        ),
        (
            format!("/recipes/{slug}?servings=-2"),
            "is not a number of servings",
        ),
        (format!("/recipes/{slug}?servings=0"), "1 to 1000 servings"),
        (
            format!("/recipes/{slug}?servings=5000"),
            "1 to 1000 servings",
        ),
        (
            format!("/recipes/{slug}?units=imperial"),
            "is not a choice of units",
        ),
    ];
    for (uri, message) in cases {
        let page = get(&site, &uri).await;
        assert_eq!(page.status, 400, "{uri}");
        assert!(page.body.contains(message), "{uri}: {}", page.body);
        let said = page.texts("main p").join(" ");
        assert!(!said.contains(".."), "one full stop: {said}");
    }
}

#[actix_web::test]
async fn a_recipe_that_does_not_say_what_it_serves_converts_but_does_not_scale() {
    let recipes = Recipes::temporary().unwrap();
    let content = ContentDraft {
        title: "Flatbread".into(),
        ingredients: vec!["2 cups flour".into(), "1 cup water".into()],
        ..ContentDraft::default()
    };
    let slug = Slug::parse("flatbread").unwrap();
    recipes
        .create(&slug, content, &Change::by("sam", "first"))
        .unwrap();
    let site = site(&recipes);
    let page = get(&site, "/recipes/flatbread?servings=6").await;
    assert_eq!(page.status, 400);
    assert!(page.body.contains("does not say how many it serves"));
    let page = get(&site, "/recipes/flatbread?units=metric").await;
    assert_eq!(page.status, 200);
    assert!(page
        .attrs("form.scale input[name=servings]", "value")
        .is_empty());
    assert_eq!(page.texts("form.scale button"), ["Convert"]);
}
