//! Every shape of schema.org Recipe a page publishes, one test each: the
//! instructions (sections, steps of directions, one text, nested lists),
//! the ingredients' two names, durations and the total from its parts,
//! yields, several Recipe nodes, JSON-LD with the defects sites leave in
//! it, microdata and RDFa; and a recipe found without its ingredients or
//! its steps, refused saying what was found.

use forkful::domain::{Minutes, Step, Yield};
use forkful::import::{self, ImportError, Reading};

const URL: &str = "https://recipes.example/dal/";

/// A page whose JSON-LD is `json`, as written.
fn jsonld_page(json: &str) -> String {
    format!(
        "<html><head><title>x</title><script type=\"application/ld+json\">{json}</script></head><body></body></html>"
    )
}

/// A Recipe named Dal with two ingredients and `fields` (JSON members).
fn dal(fields: &str) -> String {
    jsonld_page(&format!(
        r#"{{"@context": "https://schema.org", "@type": "Recipe", "name": "Dal",
            "recipeIngredient": ["1 cup lentils", "3 cups water"]{fields}}}"#
    ))
}

fn read(html: &str) -> import::Imported {
    import::from_html(html, URL).unwrap_or_else(|e| panic!("{e}: {html}"))
}

fn steps_of(html: &str) -> Vec<(Option<String>, String)> {
    read(html)
        .content
        .into_draft()
        .steps
        .into_iter()
        .map(|Step { section, text }| (section, text))
        .collect()
}

fn plain(texts: &[&str]) -> Vec<(Option<String>, String)> {
    texts.iter().map(|t| (None, (*t).to_owned())).collect()
}

fn minutes(n: u32) -> Option<Minutes> {
    Some(Minutes::new(i64::from(n)).unwrap())
}

#[test]
fn sections_head_their_steps_and_a_section_is_never_a_step() {
    let html = dal(r#", "recipeInstructions": [
            {"@type": "HowToSection", "name": "Vegan oliebollen", "itemListElement": [
                {"@type": "HowToStep", "text": "Mix the flour and yeast."},
                {"@type": "HowToStep", "name": "Rest", "text": "Let it rise for an hour."}
            ]},
            {"@type": "HowToSection", "name": "To fry", "itemListElement": [
                {"@type": "HowToStep", "text": "Heat the oil."},
                [{"@type": "HowToStep", "text": "Fry in spoonfuls."}, "Drain on paper."]
            ]}
        ]"#);
    let section = |s: &str, t: &str| (Some(s.to_owned()), t.to_owned());
    assert_eq!(
        steps_of(&html),
        [
            section("Vegan oliebollen", "Mix the flour and yeast."),
            section("Vegan oliebollen", "Let it rise for an hour."),
            section("To fry", "Heat the oil."),
            section("To fry", "Fry in spoonfuls."),
            section("To fry", "Drain on paper."),
        ]
    );
}

#[test]
fn a_step_is_its_text_its_name_or_its_directions_and_tips_together() {
    let html = dal(r#", "recipeInstructions": [
            {"@type": "HowToStep", "text": "Rinse the lentils."},
            {"@type": "HowToStep", "name": "Simmer with the water."},
            {"@type": "HowToStep", "name": "Finish", "itemListElement": [
                {"@type": "HowToDirection", "text": "Salt to taste."},
                {"@type": "HowToTip", "text": "A squeeze of lemon helps."}
            ]}
        ]"#);
    assert_eq!(
        steps_of(&html),
        plain(&[
            "Rinse the lentils.",
            "Simmer with the water.",
            "Salt to taste. A squeeze of lemon helps.",
        ])
    );
}

#[test]
fn instructions_as_one_text_are_cut_on_lines_and_numbers() {
    let three = plain(&["Rinse the lentils.", "Simmer for 20 minutes.", "Salt."]);
    for instructions in [
        r#""Rinse the lentils.\nSimmer for 20 minutes.\nSalt.""#,
        r#""Rinse the lentils.\n\nSimmer for 20 minutes.\n\nSalt.""#,
        r#""1. Rinse the lentils. 2. Simmer for 20 minutes. 3. Salt.""#,
        r#""<ol><li>Rinse the lentils.</li><li>Simmer for 20 minutes.</li><li>Salt.</li></ol>""#,
        r#"["Rinse the lentils.", "Simmer for 20 minutes.", "Salt."]"#,
        r#"[["Rinse the lentils.", ["Simmer for 20 minutes."]], "Salt."]"#,
    ] {
        let html = dal(&format!(r#", "recipeInstructions": {instructions}"#));
        assert_eq!(steps_of(&html), three, "{instructions}");
    }
}

#[test]
fn the_older_ingredients_name_and_a_total_from_its_parts() {
    let html = jsonld_page(
        r#"{"@type": "Recipe", "name": "Dal", "ingredients": ["1 cup lentils"],
            "recipeInstructions": "Simmer.", "prepTime": "PT10M", "cookTime": "P0DT0H20M"}"#,
    );
    let c = read(&html).content;
    assert_eq!(c.ingredients(), ["1 cup lentils"]);
    assert_eq!(
        (c.prep(), c.cook(), c.total()),
        (minutes(10), minutes(20), minutes(30))
    );
    // A total the page gives is kept as it is; one part alone is the total.
    let given = dal(
        r#", "recipeInstructions": "Simmer.", "prepTime": "PT10M", "cookTime": "PT20M", "totalTime": "PT1H30M""#,
    );
    assert_eq!(read(&given).content.total(), minutes(90));
    let cook_only = dal(r#", "recipeInstructions": "Simmer.", "cookTime": "PT90M""#);
    assert_eq!(read(&cook_only).content.total(), minutes(90));
    let none = dal(r#", "recipeInstructions": "Simmer.""#);
    assert_eq!(read(&none).content.total(), None);
}

#[test]
fn a_yield_as_a_number_a_text_or_a_list() {
    for (given, servings, text) in [
        ("4", Some(4), None),
        (r#""4""#, Some(4), None),
        (r#""Serves 6""#, Some(6), Some("Serves 6")),
        (r#"["4", "4 bowls"]"#, Some(4), Some("4 bowls")),
        (r#""one loaf""#, None, Some("one loaf")),
    ] {
        let html = dal(&format!(
            r#", "recipeInstructions": "Simmer.", "recipeYield": {given}"#
        ));
        assert_eq!(
            read(&html).content.recipe_yield(),
            &Yield {
                servings,
                text: text.map(str::to_owned)
            },
            "{given}"
        );
    }
}

#[test]
fn the_recipe_is_found_in_a_graph_a_list_or_among_several() {
    let recipe = r#"{"@type": "Recipe", "name": "Dal", "recipeIngredient": ["1 cup lentils"], "recipeInstructions": ["Simmer."]}"#;
    let teaser = r#"{"@type": "Recipe", "name": "Also try: rice"}"#;
    for json in [
        format!(
            r#"{{"@context": "https://schema.org", "@graph": [{{"@type": "WebPage"}}, {recipe}]}}"#
        ),
        format!("[{{\"@type\": \"WebSite\", \"name\": \"x\"}}, {recipe}]"),
        format!(r#"{{"@type": "WebPage", "mainEntity": {recipe}}}"#),
        // A sidebar's recipe first, with nothing in it: the whole one wins.
        format!("[{teaser}, {recipe}]"),
        r#"{"@type": ["Recipe", "NewsArticle"], "name": "Dal", "recipeIngredient": ["1 cup lentils"], "recipeInstructions": ["Simmer."]}"#.to_owned(),
    ] {
        let c = read(&jsonld_page(&json)).content;
        assert_eq!((c.title(), c.steps().len()), ("Dal", 1), "{json}");
    }
}

#[test]
fn json_ld_with_the_defects_sites_leave_in_it_is_read() {
    let whole = r#"{"@type": "Recipe", "name": "Dal", "recipeIngredient": ["1 cup lentils",], "recipeInstructions": "Simmer.",}"#;
    for json in [
        format!("//<![CDATA[\n{whole}\n//]]>"),
        format!("<!--{whole}-->"),
        whole.to_owned(),
        whole.replace('"', "&quot;"),
        // A raw line break and a tab inside a string.
        r#"{"@type": "Recipe", "name": "Dal", "recipeIngredient": ["1 cup	lentils"], "recipeInstructions": "Simmer.
"}"#
        .to_owned(),
    ] {
        let c = read(&jsonld_page(&json)).content;
        assert_eq!(c.title(), "Dal", "{json}");
        assert_eq!(c.ingredients(), ["1 cup lentils"], "{json}");
        assert_eq!(c.steps().len(), 1, "{json}");
    }
    // HTML entities in the text come out as characters.
    let html =
        dal(r#", "description": "Cr&egrave;me &amp; lentils", "recipeInstructions": "Simmer.""#);
    assert_eq!(read(&html).content.summary(), Some("Crème & lentils"));
}

#[test]
fn microdata_and_rdfa_are_read_alike_and_the_import_says_which() {
    let microdata = r#"<html><body><div itemscope itemtype="https://schema.org/Recipe">
        <h1 itemprop="name">Dal</h1>
        <meta itemprop="cookTime" content="PT20M">
        <ul><li itemprop="recipeIngredient">1 cup lentils</li><li itemprop="recipeIngredient">3 cups water</li></ul>
        <div itemprop="recipeInstructions"><p>Rinse the lentils.</p><p>Simmer.</p></div>
        <div itemprop="author" itemscope itemtype="https://schema.org/Person"><span itemprop="name">Ann</span></div>
    </div></body></html>"#;
    let rdfa = r#"<html><body><div vocab="https://schema.org/" typeof="Recipe">
        <h1 property="name">Dal</h1>
        <meta property="cookTime" content="PT20M">
        <ul><li property="recipeIngredient">1 cup lentils</li><li property="schema:recipeIngredient">3 cups water</li></ul>
        <ol property="recipeInstructions"><li>Rinse the lentils.</li><li>Simmer.</li></ol>
        <div property="author" typeof="Person"><span property="name">Ann</span></div>
    </div></body></html>"#;
    for (html, reading) in [(microdata, Reading::Microdata), (rdfa, Reading::Rdfa)] {
        let imported = read(html);
        let c = &imported.content;
        assert_eq!(imported.reading, reading);
        assert_eq!(c.title(), "Dal", "the author's name is the author's");
        assert_eq!(c.ingredients(), ["1 cup lentils", "3 cups water"]);
        assert_eq!(
            c.steps()
                .iter()
                .map(|s| s.text.as_str())
                .collect::<Vec<_>>(),
            ["Rinse the lentils.", "Simmer."]
        );
        assert_eq!((c.cook(), c.total()), (minutes(20), minutes(20)));
        assert!(
            imported.summary().ends_with(reading.as_str()),
            "{}",
            imported.summary()
        );
    }
    // A line break in the HTML's source is a space, not a new step.
    let wrapped = microdata.replace(
        "<div itemprop=\"recipeInstructions\"><p>Rinse the lentils.</p><p>Simmer.</p></div>",
        "<div itemprop=\"recipeInstructions\">Rinse the\n   lentils, then simmer.</div>",
    );
    assert_eq!(
        steps_of(&wrapped),
        plain(&["Rinse the lentils, then simmer."])
    );
    assert_eq!(
        read(&dal(r#", "recipeInstructions": "x""#)).reading,
        Reading::JsonLd
    );
}

#[test]
fn a_recipe_without_its_ingredients_or_its_steps_is_not_brought_in() {
    for (fields, found, missing) in [
        (
            r#""recipeIngredient": ["1 cup lentils", "3 cups water"]"#,
            "2 ingredients",
            "steps",
        ),
        (
            r#""recipeInstructions": ["Simmer."]"#,
            "1 step",
            "ingredients",
        ),
        (
            r#""description": "Lovely""#,
            "its name",
            "ingredients and no steps",
        ),
        (
            r#""recipeIngredient": [], "recipeInstructions": "  ""#,
            "its name",
            "ingredients and no steps",
        ),
    ] {
        let html = jsonld_page(&format!(
            r#"{{"@type": "Recipe", "name": "Dal", {fields}}}"#
        ));
        let refused = import::from_html(&html, URL).unwrap_err();
        assert!(
            matches!(
                &refused,
                ImportError::Incomplete(partial)
                    if partial.imported.content.title() == "Dal"
                        && partial.found == found
                        && partial.missing == missing
            ),
            "{fields}: {refused:?}"
        );
        let said = refused.to_string();
        assert!(
            said.contains(&format!("found with {found}, but no {missing}")),
            "{said}"
        );
        assert!(said.contains("nothing was brought in"), "{said}");
    }
}

#[test]
fn the_summary_says_what_was_read() {
    let html = dal(
        r#", "prepTime": "PT10M", "cookTime": "PT20M", "recipeInstructions": [
            {"@type": "HowToSection", "name": "To cook", "itemListElement": ["Simmer.", "Stir."]},
            {"@type": "HowToSection", "name": "To serve", "itemListElement": ["Salt."]}
        ]"#,
    );
    assert_eq!(
        read(&html).summary(),
        "\u{201c}Dal\u{201d}: 2 ingredients, 3 steps in 2 sections (To cook, To serve), \
         prep 10 min, cook 20 min, total 30 min; read from its schema.org JSON-LD"
    );
}

#[test]
fn the_recipe_card_plugins_are_read_from_their_html_without_schema_org() {
    let wprm = r#"<html><body><div class="wprm-recipe-container"><div class="wprm-recipe">
        <h2 class="wprm-recipe-name">Chana Masala</h2>
        <div class="wprm-recipe-summary">A weeknight curry.</div>
        <div class="wprm-recipe-prep-time-container">Prep Time <span>10</span> <span>mins</span></div>
        <div class="wprm-recipe-cook-time-container">Cook Time 25 mins</div>
        <span class="wprm-recipe-servings">4</span>
        <ul class="wprm-recipe-ingredients">
          <li class="wprm-recipe-ingredient"><span class="wprm-checkbox-container">&#9634;</span> 1 onion</li>
          <li class="wprm-recipe-ingredient"><span class="wprm-checkbox-container">&#9634;</span> 2 tins chickpeas</li>
        </ul>
        <div class="wprm-recipe-instruction-group"><h4 class="wprm-recipe-group-name">The base</h4>
          <ul><li class="wprm-recipe-instruction"><div class="wprm-recipe-instruction-text">Fry the onion.</div></li></ul></div>
        <div class="wprm-recipe-instruction-group"><h4 class="wprm-recipe-group-name">The curry</h4>
          <ul><li class="wprm-recipe-instruction"><div class="wprm-recipe-instruction-text">Add the chickpeas.</div></li>
          <li class="wprm-recipe-instruction"><div class="wprm-recipe-instruction-text">Simmer.</div></li></ul></div>
    </div></div></body></html>"#;
    let imported = read(wprm);
    let c = &imported.content;
    assert_eq!(
        imported.reading,
        Reading::Card("its WP Recipe Maker recipe card")
    );
    assert_eq!(c.title(), "Chana Masala");
    assert_eq!(c.summary(), Some("A weeknight curry."));
    assert_eq!(
        c.ingredients(),
        ["1 onion", "2 tins chickpeas"],
        "no checkbox glyph"
    );
    assert_eq!(
        steps_of(wprm),
        [
            (Some("The base".to_owned()), "Fry the onion.".to_owned()),
            (
                Some("The curry".to_owned()),
                "Add the chickpeas.".to_owned()
            ),
            (Some("The curry".to_owned()), "Simmer.".to_owned()),
        ]
    );
    assert_eq!(
        (c.prep(), c.cook(), c.total()),
        (minutes(10), minutes(25), minutes(35))
    );
    assert_eq!(c.recipe_yield().servings, Some(4));

    let tasty = r#"<html><body><div class="tasty-recipes">
        <h2 class="tasty-recipes-title">Banana Bread</h2>
        <div class="tasty-recipes-description"><p>Moist.</p></div>
        <span class="tasty-recipes-prep-time">15 minutes</span>
        <span class="tasty-recipes-total-time">1 hour 15 minutes</span>
        <span class="tasty-recipes-yield">1 loaf</span>
        <div class="tasty-recipes-ingredients"><ul><li>3 bananas</li><li>2 cups flour</li></ul></div>
        <div class="tasty-recipes-instructions"><ol><li>Mash.</li><li>Mix.</li><li>Bake.</li></ol></div>
    </div></body></html>"#;
    let imported = read(tasty);
    let c = &imported.content;
    assert_eq!(
        imported.reading,
        Reading::Card("its Tasty Recipes recipe card")
    );
    assert_eq!(
        (c.title(), c.ingredients().len(), c.steps().len()),
        ("Banana Bread", 2, 3)
    );
    assert_eq!((c.prep(), c.total()), (minutes(15), minutes(75)));
    assert_eq!(c.recipe_yield().text.as_deref(), Some("1 loaf"));

    let mediavine = r#"<html><body><div class="mv-create-card">
        <h2 class="mv-create-title">Leek Soup</h2>
        <div class="mv-create-ingredients"><ul><li>1 leek</li><li>2 potatoes</li></ul></div>
        <div class="mv-create-instructions"><ol><li>Chop.</li><li>Simmer.</li></ol></div>
    </div></body></html>"#;
    let imported = read(mediavine);
    assert_eq!(
        imported.reading,
        Reading::Card("its Mediavine Create recipe card")
    );
    assert_eq!(
        (
            imported.content.ingredients().len(),
            imported.content.steps().len()
        ),
        (2, 2)
    );
}

#[test]
fn a_page_with_no_markup_is_read_from_its_headings_in_its_language() {
    let english = r#"<html><head><title>Soup | A Blog</title></head><body><article>
        <h1>Grandma's Soup</h1><p>A long story about grandma.</p>
        <h2>Ingredients:</h2><ul><li>1 leek</li><li>2 potatoes</li></ul>
        <h2>Method</h2><ol><li>Chop.</li><li>Simmer.</li></ol>
        <h2>Comments</h2><ul><li>Lovely!</li></ul>
    </article></body></html>"#;
    let german = r#"<html><body><h1>Omas Suppe</h1>
        <h3>Zutaten für 4 Personen</h3><ul><li>1 Lauch</li><li>2 Kartoffeln</li></ul>
        <h3>Zubereitung</h3><p>Lauch schneiden.</p><p>Kochen.</p><h3>Tipps</h3><p>Nicht salzen.</p>
    </body></html>"#;
    let dutch = r#"<html><body><h1>Oma's soep</h1>
        <div class="kop"><h2>Ingrediënten</h2></div><ul><li>1 prei</li><li>2 aardappels</li></ul>
        <div class="kop"><h2>Bereiding</h2></div><ol><li>Snijden.</li><li>Koken.</li></ol>
    </body></html>"#;
    let others = [
        ("Ingrédients", "Préparation"),
        ("Ingredientes", "Modo de preparo"),
        ("Hozzávalók", "Elkészítés"),
        ("Ингредиенты", "Приготовление"),
        ("Malzemeler", "Yapılışı"),
        ("Ingredienser", "Gör så här"),
    ];
    for (ingredients, method) in others {
        let html = format!(
            "<html><body><h1>Soup</h1><h2>{ingredients}</h2><ul><li>a</li></ul>\
             <h2>{method}:</h2><ol><li>b</li></ol></body></html>"
        );
        let c = read(&html).content;
        assert_eq!(
            (c.ingredients().len(), c.steps().len()),
            (1, 1),
            "{ingredients}, {method}"
        );
    }
    for (html, title, ingredients, steps) in [
        (
            english,
            "Grandma's Soup",
            ["1 leek", "2 potatoes"],
            ["Chop.", "Simmer."],
        ),
        (
            german,
            "Omas Suppe",
            ["1 Lauch", "2 Kartoffeln"],
            ["Lauch schneiden.", "Kochen."],
        ),
        (
            dutch,
            "Oma's soep",
            ["1 prei", "2 aardappels"],
            ["Snijden.", "Koken."],
        ),
    ] {
        let imported = read(html);
        let c = &imported.content;
        assert_eq!(imported.reading, Reading::Headings, "{title}");
        assert_eq!(c.title(), title);
        assert_eq!(c.ingredients(), ingredients, "{title}");
        assert_eq!(
            c.steps()
                .iter()
                .map(|s| s.text.as_str())
                .collect::<Vec<_>>(),
            steps,
            "{title}"
        );
    }
    // Ingredients under their heading and no method: refused, saying so.
    let half =
        r#"<html><body><h1>Soup</h1><h2>Ingredients</h2><ul><li>1 leek</li></ul></body></html>"#;
    assert!(matches!(
        import::from_html(half, URL),
        Err(ImportError::Incomplete(partial)) if partial.missing == "steps"
    ));
}

/// A page built to make the HTML readings slow: thousands of headings
/// with nothing after them, and a card's ingredient nested thousands of
/// elements deep around the parts it leaves out. Read in time linear in
/// its size (a quadratic reading of it would take minutes, not this
/// test's fraction of a second).
#[test]
fn a_page_built_to_slow_the_html_readings_is_read_in_its_size() {
    let headings = "<h2>Ingredients</h2><p>x</p><h2>Method</h2><p>y</p>".repeat(20_000);
    let page = format!("<html><body><h1>Soup</h1>{headings}</body></html>");
    let c = read(&page).content;
    assert_eq!((c.ingredients().len(), c.steps().len()), (1, 1));
    // Running text's readings: a paragraph of a hundred thousand bold
    // words and links, bold headings over endless lines, and a page of
    // time labels with no time after them.
    let bold = "<b>x</b> <a href=\"/\">y</a> ".repeat(100_000);
    let lines = "<b>Method:</b><br>".to_owned() + &"1. Stir.<br>".repeat(50_000);
    let labels = "<p>Prep Cook Total</p>".repeat(50_000);
    let page = format!(
        "<html><body><h1>Soup</h1><h2>Ingredients</h2><ul><li>x</li></ul><div>{lines}</div><p>{bold}</p>{labels}</body></html>"
    );
    let c = read(&page).content;
    assert_eq!(
        (c.ingredients().len(), c.steps().len()),
        (1, forkful::domain::content::MAX_STEPS)
    );
    // What a review built: headings over a hundred thousand bold labels
    // (each look walks a bounded stretch of them), a recipe card's groups
    // of steps nested in each other (each step read once), and elements
    // nested a hundred thousand deep (refused before the parser, whose
    // cost grows with the square of the depth, is asked).
    let labels = format!(
        "<html><body><h1>Soup</h1>{}{}</body></html>",
        "<b>Ingredients</b>\n<b>Method</b>\n".repeat(3),
        "<p><b>x</b></p>".repeat(100_000)
    );
    assert!(matches!(
        import::from_html(&labels, URL),
        Err(ImportError::NoRecipe)
    ));
    let group = r#"<div class="wprm-recipe-instruction-group"><div class="wprm-recipe-instruction-text">Stir.</div>"#;
    let nested = format!(
        r#"<html><body><div class="wprm-recipe-container"><h2 class="wprm-recipe-name">Soup</h2>
        <ul><li class="wprm-recipe-ingredient">1 leek</li></ul>{}{}</div></body></html>"#,
        group.repeat(1_000),
        "</div>".repeat(1_000)
    );
    assert_eq!(
        read(&nested).content.steps().len(),
        forkful::domain::content::MAX_STEPS
    );
    let deep = format!("<html><body>{}</body></html>", "<div>".repeat(100_000));
    assert!(matches!(
        import::from_html(&deep, URL),
        Err(ImportError::TooDeep)
    ));
    let deep = format!(
        "{}1 leek<span class=\"wprm-checkbox-container\">x</span>{}",
        "<span>".repeat(1_000),
        "</span>".repeat(1_000)
    );
    let card = format!(
        r#"<html><body><div class="wprm-recipe-container"><h2 class="wprm-recipe-name">Soup</h2>
        <ul><li class="wprm-recipe-ingredient">{deep}</li></ul>
        <div class="wprm-recipe-instruction-text">Simmer.</div></div></body></html>"#
    );
    let c = read(&card).content;
    assert_eq!(c.ingredients(), ["1 leek"]);
}

/// What a review found the readings got wrong on ordinary pages: a
/// "Preparation time: 10 min" line taken for the method's heading, the
/// comments or the footer read as steps, and a sub-recipe with more
/// top-level steps taken for the recipe.
#[test]
fn the_headings_reading_takes_no_time_line_comment_or_footer_for_a_step() {
    let time_line = r#"<html><body><h1>Dal</h1><p><b>Preparation time:</b> 10 min</p>
        <p><b>Serves:</b> 4</p><p><b>Ingredients</b></p><ul><li>1 cup lentils</li></ul>
        <p><b>Method</b></p><ol><li>Soak.</li><li>Boil.</li></ol></body></html>"#;
    let comments = r#"<html><body><h1>Dal</h1><h2>Ingredients</h2><ul><li>1 cup lentils</li></ul>
        <div class="entry"><h2>Method</h2><p>Soak.</p><p>Boil.</p></div>
        <div id="comments"><h3>2 comments</h3><ol class="comment-list"><li>Loved it! 5 stars</li><li>Too salty</li></ol></div>
        </body></html>"#;
    let footer = r#"<html><body><main><article><h1>Dal</h1><h2>Ingredients</h2><ul><li>1 cup lentils</li></ul>
        <h2>Method</h2><p>Soak.</p><p>Boil.</p></article><p>Leave a comment below!</p></main>
        <p>(c) 2024 Dal Blog</p></body></html>"#;
    for html in [time_line, comments, footer] {
        let c = read(html).content;
        assert_eq!(c.ingredients(), ["1 cup lentils"], "{html}");
        assert_eq!(
            c.steps()
                .iter()
                .map(|s| s.text.as_str())
                .collect::<Vec<_>>(),
            ["Soak.", "Boil."],
            "{html}"
        );
    }
}

#[test]
fn of_several_recipes_the_one_with_the_most_read_is_taken_sections_counted() {
    let steps = |n: usize| -> String {
        (1..=n)
            .map(|i| format!(r#"{{"@type": "HowToStep", "text": "Step {i}."}}"#))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let lasagne = format!(
        r#"{{"@type": "Recipe", "name": "Lasagne", "recipeIngredient": [{}],
            "recipeInstructions": [{{"@type": "HowToSection", "name": "Ragù", "itemListElement": [{}]}},
                                   {{"@type": "HowToSection", "name": "Bake", "itemListElement": [{}]}}]}}"#,
        (1..=10)
            .map(|i| format!("\"{i} thing\""))
            .collect::<Vec<_>>()
            .join(", "),
        steps(6),
        steps(6)
    );
    let bechamel = format!(
        r#"{{"@type": "Recipe", "name": "Béchamel", "recipeIngredient": ["a", "b", "c", "d"],
            "recipeInstructions": [{}]}}"#,
        steps(9)
    );
    let html = jsonld_page(&format!(r#"{{"@graph": [{bechamel}, {lasagne}]}}"#));
    assert_eq!(read(&html).content.title(), "Lasagne");
}

/// Markup built so that each element's text is the whole page: read once,
/// and bounded, not once per element.
#[test]
fn nested_markup_is_read_once_and_bounded() {
    let words = "lentils and water ".repeat(6_000);
    let nested_steps = format!(
        r#"<html><body><div itemscope itemtype="https://schema.org/Recipe"><h1 itemprop="name">Dal</h1>
        <span itemprop="recipeIngredient">1 cup lentils</span>{}<p>{words}</p>{}</div></body></html>"#,
        r#"<div itemprop="recipeInstructions">"#.repeat(200),
        "</div>".repeat(200)
    );
    let c = read(&nested_steps).content;
    let read_bytes: usize = c.steps().iter().map(|s| s.text.len()).sum();
    assert!(read_bytes <= 200 * 1024, "{read_bytes} bytes of steps");
    let nested_items = format!(
        r#"<html><body><div class="tasty-recipes"><h2 class="tasty-recipes-title">Dal</h2>
        <div class="tasty-recipes-ingredients"><ul>{}{words}</ul></div>
        <div class="tasty-recipes-instructions"><ol><li>Soak.</li></ol></div></div></body></html>"#,
        "<li><ul>".repeat(400)
    );
    match import::from_html(&nested_items, URL) {
        Ok(imported) => {
            let bytes: usize = imported.content.ingredients().iter().map(String::len).sum();
            assert!(bytes <= 8 * 1024 * 1024, "{bytes} bytes of ingredients");
        }
        Err(e) => panic!("{e}"),
    }
    let nested_heading = format!(
        "<html><body><h1>t</h1>{}{words}</body></html>",
        "<b>".repeat(2_000)
    );
    assert!(import::from_html(&nested_heading, URL).is_err());
}

/// Groups a blog gives their own headings, each over its list, are one
/// part; ingredients written as lines of one paragraph are a line each;
/// the notes after the method and the next section are not steps.
#[test]
fn the_headings_reading_takes_groups_and_lines_and_stops_at_notes() {
    let groups = r#"<html><body><h1>Plum cake</h1>
        <h2>Ingredients</h2><h3>For the dough</h3><ul><li>250 g flour</li><li>1 egg</li></ul>
        <h3>For the topping:</h3><ul><li>1 kg plums</li></ul>
        <h2>Method</h2><h3>Dough</h3><ol><li>Knead.</li><li>Rest.</li></ol>
        <h3>Topping</h3><ol><li>Halve the plums.</li></ol><h3>Notes</h3><ul><li>Freezes well.</li></ul>
        <h2>You might also like</h2><ul><li>Apple cake</li></ul></body></html>"#;
    let bold = r#"<html><body><h1>Plum cake</h1>
        <p><strong>Ingredients</strong></p><p><strong>For the dough:</strong></p>
        <ul><li>250 g flour</li><li>1 egg</li></ul><p><strong>For the topping:</strong></p><ul><li>1 kg plums</li></ul>
        <p><strong>Method</strong></p><ol><li>Knead.</li><li>Rest.</li><li>Halve the plums.</li></ol>
        <p><strong>Tips</strong></p><ul><li>Freezes well.</li></ul></body></html>"#;
    let lines = r#"<html><body><h1>Plum cake</h1>
        <p><b>Ingredients:</b></p><p>250 g flour<br>1 egg<br/>1 kg plums</p>
        <p><b>Method:</b></p><p>Knead.</p><p>Rest.</p><p>Halve the plums.</p>
        <div class="share"><h3>Share this</h3></div></body></html>"#;
    for html in [groups, bold, lines] {
        let c = read(html).content;
        assert_eq!(
            c.ingredients(),
            ["250 g flour", "1 egg", "1 kg plums"],
            "{html}"
        );
        assert_eq!(
            c.steps()
                .iter()
                .map(|s| s.text.as_str())
                .collect::<Vec<_>>(),
            ["Knead.", "Rest.", "Halve the plums."],
            "{html}"
        );
    }
}

/// Microdata's steps as items of their own: a step's `text` is the step
/// (its number, "Paso 1", is its `name`), and a section's name heads the
/// steps listed in it.
#[test]
fn microdata_steps_and_sections_as_items_are_read_as_json_ld_ones_are() {
    let html = r#"<html><body><div itemscope itemtype="https://schema.org/Recipe">
        <h1 itemprop="name">Tortilla</h1><ul><li itemprop="recipeIngredient">4 eggs</li></ul>
        <ol><li itemprop="recipeInstructions" itemscope itemtype="https://schema.org/HowToStep">
            <strong itemprop="name">Paso 1</strong> <p itemprop="text">Fry the potatoes.</p></li>
        <li itemprop="recipeInstructions" itemscope itemtype="https://schema.org/HowToStep">
            <meta itemprop="position" content="2"><div class="photo"><img itemprop="image" src="a.jpg"></div>
            <p itemprop="text">Beat the eggs.</p></li></ol>
        <div itemprop="recipeInstructions" itemscope itemtype="https://schema.org/HowToSection">
            <h4 itemprop="name">To finish</h4><ol>
            <li itemprop="itemListElement" itemscope itemtype="https://schema.org/HowToStep"><div itemprop="text">Set in the pan.</div></li>
            <li itemprop="itemListElement" itemscope itemtype="https://schema.org/HowToStep"><div itemprop="text">Turn it over.</div></li></ol></div>
        </div></body></html>"#;
    let section = |t: &str| (Some("To finish".to_owned()), t.to_owned());
    assert_eq!(
        steps_of(html),
        [
            (None, "Fry the potatoes.".to_owned()),
            (None, "Beat the eggs.".to_owned()),
            section("Set in the pan."),
            section("Turn it over."),
        ]
    );
}

/// The cards of the other plugins recipe blogs use, and the hRecipe
/// microformat, each read from its own classes and named to the cook.
#[test]
fn the_other_plugins_cards_and_hrecipe_are_read_by_their_classes() {
    let cards = [
        (
            "its Zip Recipes (ZipList) recipe card",
            r#"<div id="zlrecipe-container"><div id="zlrecipe-title">Buns</div>
            <ul id="zlrecipe-ingredients-list"><li class="ingredient-label">Dough</li><li class="ingredient">flour</li><li class="ingredient">milk</li></ul>
            <ol id="zlrecipe-instructions-list"><li class="instruction">Knead.</li><li class="instruction">Bake.</li></ol></div>"#,
        ),
        (
            "its EasyRecipe recipe card",
            r#"<div class="easyrecipe"><div class="ERSName">Buns</div><div class="ERSIngredients">
            <div class="ERSSectionHead">Dough</div><ul><li class="ingredient">flour</li><li class="ingredient">milk</li></ul></div>
            <div class="ERSInstructions"><ol><li class="instruction">Knead.</li><li class="instruction">Bake.</li></ol></div></div>"#,
        ),
        (
            "its Cooked recipe",
            r#"<h1>Buns</h1><div class="cooked-recipe-ingredients"><div class="cooked-single-ingredient cooked-heading">Dough</div>
            <div class="cooked-single-ingredient cooked-ingredient"><span class="cooked-ingredient-checkbox">&nbsp;</span>flour</div>
            <div class="cooked-single-ingredient cooked-ingredient">milk</div></div><div class="cooked-recipe-directions">
            <div class="cooked-direction"><span class="cooked-direction-number">1</span><div class="cooked-dir-content"><p>Knead.</p></div></div>
            <div class="cooked-direction"><div class="cooked-dir-content"><p>Bake.</p></div></div></div>"#,
        ),
        (
            "its WPZOOM recipe card",
            r#"<div class="wp-block-wpzoom-recipe-card-block-recipe-card"><h2 class="recipe-card-title">Buns</h2>
            <ul class="ingredients-list"><li class="ingredient-item ingredient-item-group"><strong>Dough</strong></li>
            <li class="ingredient-item"><span class="tick-circle"></span><p>flour</p></li><li class="ingredient-item"><p>milk</p></li></ul>
            <ul class="directions-list"><li class="direction-step">Knead.</li><li class="direction-step">Bake.</li></ul></div>"#,
        ),
        (
            "its Delicious Recipes recipe",
            r#"<div class="dr-summary-holder"><div class="dr-title-wrap"><h2 class="dr-title">Buns</h2></div></div>
            <div class="dr-ingredients-list"><h3 class="dr-title">Ingredients</h3><ul><li><input type="checkbox"><label>flour</label></li><li><label>milk</label></li></ul></div>
            <div class="dr-instructions"><ol><li><div class="dr-instrc-content"><p>Knead.</p></div></li><li><div class="dr-instrc-content"><p>Bake.</p></div></li></ol></div>"#,
        ),
        (
            "its Yumprint recipe card",
            r#"<div class="blog-yumprint-recipe"><div class="blog-yumprint-recipe-title">Buns</div>
            <ul><li class="blog-yumprint-ingredient-item">flour</li><li class="blog-yumprint-ingredient-item">milk</li></ul>
            <ol><li class="blog-yumprint-method-item">Knead.</li><li class="blog-yumprint-method-item">Bake.</li></ol></div>"#,
        ),
        (
            "its hRecipe microformat",
            r#"<div class="hrecipe"><h2 class="fn">Buns</h2><span class="preptime"><span class="value-title" title="PT10M"></span>10 minutes</span>
            <ul><li class="ingredient">flour</li><li class="ingredient">milk</li></ul>
            <div class="instructions"><p>Knead.</p><p>Bake.</p></div><div class="vcard"><span class="fn">Ann</span></div></div>"#,
        ),
    ];
    for (said, card) in cards {
        let html =
            format!("<html><body><p class=\"site\">A blog</p><p>A story.</p>{card}</body></html>");
        let imported = read(&html);
        let c = &imported.content;
        assert_eq!(imported.reading, Reading::Card(said), "{card}");
        assert_eq!(c.title(), "Buns", "{said}");
        assert_eq!(c.ingredients(), ["flour", "milk"], "{said}");
        assert_eq!(
            c.steps()
                .iter()
                .map(|s| s.text.as_str())
                .collect::<Vec<_>>(),
            ["Knead.", "Bake."],
            "{said}"
        );
    }
}

/// Old blog posts: bold words over `<br>`-parted lines, with groups'
/// labels; a table of amounts; steps numbered by hand, labelled "Step 1",
/// or under a heading each; and the page's own links and buttons, bold
/// labels on a line of times, and sign-offs are no part of the recipe.
#[test]
fn running_text_tables_and_labelled_steps_are_read_as_a_reader_counts_them() {
    let running = r#"<html><body><h1>Buns</h1><div class="post-body">A story.<br><br>
        <span style="font-weight: bold">Ingredients:</span><br> <u>Dough:</u><br> 500 g flour<br> 2 eggs<br><br>
        <u>Glaze:</u><br> 1 egg<br><br><b>Method:</b><br> 1. Knead the dough.<br> 2. Glaze and bake.<br><br><br>
        Enjoy them warm!</div></body></html>"#;
    let c = read(running).content;
    assert_eq!(c.ingredients(), ["500 g flour", "2 eggs", "1 egg"]);
    assert_eq!(
        c.steps()
            .iter()
            .map(|s| s.text.as_str())
            .collect::<Vec<_>>(),
        ["Knead the dough.", "Glaze and bake."]
    );
    let table = r#"<html><body><h1>Buns</h1>
        <p><strong>Préparation :</strong> 25 min · <strong>Cuisson :</strong> 40 min</p>
        <h3>Ingredients</h3><table><tr><td>500 g</td><td>flour</td></tr><tr><td>2</td><td>eggs</td></tr></table>
        <h3>What to do</h3><h4>1. lépés</h4><p>Knead the dough.</p><h4>2. lépés</h4><p>Glaze and bake.</p>
        <p><a href="/">&laquo; Back to all recipes</a> | <button>Print</button></p></body></html>"#;
    let c = read(table).content;
    assert_eq!(c.ingredients(), ["500 g flour", "2 eggs"]);
    assert_eq!(
        c.steps()
            .iter()
            .map(|s| s.text.as_str())
            .collect::<Vec<_>>(),
        ["Knead the dough.", "Glaze and bake."]
    );
    let labelled = r#"<html><body><h1>Buns</h1><h2>Ingredients #</h2><ul><li>flour</li></ul>
        <h2>Method</h2><p><strong>The dough</strong></p><p>1. Knead the dough.</p>
        <p><strong>To finish</strong></p><p>2. Glaze and bake.</p><p>Makes 12.</p></body></html>"#;
    let c = read(labelled).content;
    assert_eq!(
        c.steps()
            .iter()
            .map(|s| s.text.as_str())
            .collect::<Vec<_>>(),
        ["Knead the dough.", "Glaze and bake."]
    );
    let opened = r#"<html><body><h1>Buns</h1><h2>Ingredients</h2><p>500 g flour<br>2 eggs</p>
        <p><b>Method:</b><br>1. Knead the dough.<br>2. Glaze and bake.</p></body></html>"#;
    let c = read(opened).content;
    assert_eq!(c.ingredients(), ["500 g flour", "2 eggs"]);
    assert_eq!(c.steps().len(), 2);
    let json = dal(r#", "recipeInstructions": "Paso 1\nSoak.\nPaso 2:\nBoil.\n3.\nServe.""#);
    assert_eq!(steps_of(&json), plain(&["Soak.", "Boil.", "Serve."]));
}

/// A post read from its headings is named by the post's own heading, not
/// the blog's name in the page's first `h1`, and keeps the times it
/// states in words, the total their sum where it states none.
#[test]
fn a_post_is_named_by_its_own_heading_and_keeps_the_times_it_states() {
    let html = r#"<html><body><header><h1>Nana's Kitchen Notebook</h1></header>
        <div class="post"><h3 class="post-title">Curd Tart</h3>
        <p><strong>Prep</strong> 20 min · <strong>Cook</strong> 35 min · <strong>Serves</strong> 6</p>
        <h4>Ingredients</h4><ul><li>curd cheese</li></ul><h4>Method</h4><ol><li>Bake.</li></ol></div></body></html>"#;
    let c = read(html).content;
    assert_eq!(c.title(), "Curd Tart");
    assert_eq!(
        (c.prep(), c.cook(), c.total()),
        (minutes(20), minutes(35), minutes(55))
    );
}

/// Sites whose schema.org Recipe is a stub, with the recipe in the page:
/// the part it lacks is read from the page's HTML, and the cook is told
/// where each part came from. Also steps in a list under headings of
/// their own, a heading with a dash after it, steps numbered "1-" with
/// empty paragraphs between, and steps a site joined with commas.
#[test]
fn a_stub_recipe_is_completed_from_the_page_and_says_so() {
    let html = r#"<html><head><script type="application/ld+json">
        {"@type": "Recipe", "name": "Shrimp", "recipeIngredient": ["1 lb shrimp", "salt"]}
        </script></head><body><h1>Shrimp</h1><div><h4>Directions</h4><ul>
        <li><img src="a.jpg"><div><h5>Step 1</h5><p>Heat the bath.</p></div></li>
        <li><div><h5>Step 2</h5><p>Seal the shrimp.</p></div></li></ul></div>
        <h3>Latest comments</h3><ul><li>Great!</li></ul></body></html>"#;
    let imported = read(html);
    assert_eq!(imported.content.ingredients(), ["1 lb shrimp", "salt"]);
    assert_eq!(imported.content.steps().len(), 2);
    assert_eq!(imported.reading, Reading::JsonLd);
    assert!(
        imported
            .summary()
            .contains("read from its schema.org JSON-LD, its steps from its headings"),
        "{}",
        imported.summary()
    );
    let dashed = r#"<html><body><h1>Carrots</h1><p><strong>Ingredients</strong>-</p><p>carrots</p>
        <p>rice</p><p><strong>Method</strong>-</p><p>1- Cook the rice.</p><p><br></p><p>2- Grate the carrots.</p>
        <p><br></p><p>3- Toss together.</p></body></html>"#;
    let c = read(dashed).content;
    assert_eq!(c.ingredients(), ["carrots", "rice"]);
    assert_eq!(
        c.steps()
            .iter()
            .map(|s| s.text.as_str())
            .collect::<Vec<_>>(),
        ["Cook the rice.", "Grate the carrots.", "Toss together."]
    );
    let joined = dal(
        r#", "recipeInstructions": "Bake the pastry until golden.,    Meanwhile, roast the rhubarb.,    Fill and serve.""#,
    );
    assert_eq!(
        steps_of(&joined),
        plain(&[
            "Bake the pastry until golden.",
            "Meanwhile, roast the rhubarb.",
            "Fill and serve."
        ])
    );
}

/// What the first held-out pages found: a schema.org method written as
/// one text is parted as the page shows it (only where the page's steps
/// say what the text says); a line of times before the method's list, a
/// group's label in italics, a sign-off in another kind of element than
/// the steps', and a method in a block after its bold heading.
#[test]
fn the_page_parts_a_one_text_method_and_the_headings_reading_skips_preambles() {
    let one_text = r#"<html><head><script type="application/ld+json">{"@type": "Recipe",
        "name": "Chili", "recipeIngredient": ["beef", "beans"],
        "recipeInstructions": "Brown the beef in the pot. Add the beans and simmer for an hour."}
        </script></head><body><h1>Chili</h1><h2>Method</h2><ol><li>Brown the beef in the pot.</li>
        <li>Add the beans and simmer for an hour.</li></ol></body></html>"#;
    let imported = read(one_text);
    assert_eq!(imported.content.steps().len(), 2);
    assert!(imported.summary().contains("its steps from its headings"));
    let other_list = one_text.replace(
        "<li>Brown the beef in the pot.</li>",
        "<li>Share this on social media.</li>",
    );
    assert_eq!(read(&other_list).content.steps().len(), 1);
    let preamble = r#"<html><body><h1>Dal</h1><h2>Ingredients</h2><p><em>Voor het deeg</em></p>
        <ul><li>lentils</li></ul><p><em>Voor de saus</em></p><ul><li>tomato</li></ul>
        <h2>Method</h2><p><em>Prep: 10 min · Cook: 40 min · Serves 4</em></p>
        <ol><li>Rinse.</li><li>Simmer.</li></ol></body></html>"#;
    let c = read(preamble).content;
    assert_eq!(c.ingredients(), ["lentils", "tomato"]);
    assert_eq!(c.steps().len(), 2);
    let sign_off = r#"<html><body><h1>Loaf</h1><div><b>Ingredients:</b></div><div>dates</div>
        <div><b>Method:</b></div><p>Soak the dates.</p><p>Bake the loaf.</p><br>
        <div>Grandma would say it is better with tea.</div></body></html>"#;
    let c = read(sign_off).content;
    assert_eq!(
        c.steps()
            .iter()
            .map(|s| s.text.as_str())
            .collect::<Vec<_>>(),
        ["Soak the dates.", "Bake the loaf."]
    );
    let block = r#"<html><body><h1>Cake</h1><div>eggs<br>sugar<br><br><b>Ingredienti:</b><br>eggs<br>sugar<br><br>
        <b>Procedimento:</b><br><div>Beat the eggs with the sugar and bake.</div></div></body></html>"#;
    let c = read(block).content;
    assert_eq!(c.ingredients(), ["eggs", "sugar"]);
    assert_eq!(c.steps().len(), 1);
}

/// What a hostile review found ordinary pages read wrong, each as it
/// wrote it: the sections after a recipe's parts, "e.g.," in a step,
/// ingredients that start with a number, plain labels of groups, a step a
/// line after bold words, a card with its steps in paragraphs, a
/// sidebar's post title, a table's header row and a step's nested tips, a
/// bold word in a story, and headings with an emoji, "Recipe", "How to
/// make" or words after a dash.
#[test]
fn what_a_review_found_ordinary_pages_read_wrong_is_read_right() {
    let counts = |html: &str| {
        let c = read(html).content;
        (c.ingredients().len(), c.steps().len())
    };
    let sections = r#"<html><body><h1>Banana Muffins</h1><h2>Ingredients</h2><ul><li>3 bananas</li><li>2 cups flour</li></ul>
        <h3>Equipment</h3><ul><li>muffin tin</li></ul>
        <h2>Instructions</h2><ol><li>Mash bananas.</li><li>Mix in flour.</li><li>Bake.</li></ol>
        <h3>Recipe Notes</h3><ul><li>Freezes well.</li></ul>
        <p><strong>Nutrition</strong></p><ul><li>Calories: 180</li></ul>
        <p><strong>You might also like</strong></p><ul><li><a href="/a">Banana bread</a></li></ul></body></html>"#;
    assert_eq!(counts(sections), (2, 3));
    let eg = dal(
        r#", "recipeInstructions": ["Heat the oven.", "Chop the vegetables (e.g., carrots, peppers, etc.) into chunks.", "Roast."]"#,
    );
    assert_eq!(steps_of(&eg).len(), 3);
    let numbers = r#"<html><body><h1>Stew</h1><h3>Ingredienti</h3><p>1.5 kg beef<br>Uova 3<br>Mele 2<br>2 onions</p>
        <h3>Procedimento</h3><p>Brown the beef.</p><p>Simmer.</p></body></html>"#;
    assert_eq!(
        read(numbers).content.ingredients(),
        ["1.5 kg beef", "Uova 3", "Mele 2", "2 onions"]
    );
    let labels = r#"<html><body><h1>Cake</h1><h2>Ingredients</h2><p>For the cake:</p><ul><li>flour</li><li>eggs</li></ul>
        <p>For the frosting:</p><ul><li>butter</li><li>sugar</li></ul><h2>Method</h2><ol><li>Bake.</li></ol></body></html>"#;
    assert_eq!(counts(labels), (4, 1));
    let blogger = r#"<html><body><h1>Curry</h1><div class="post-body"><b>Ingredients:</b><br>500 g chicken<br>2 onions<br><br>
        <b>Method:</b><br>Heat oil in a pan.<br>Fry the onions until golden.<br>Add the chicken.<br>Simmer for 20 minutes.<br></div></body></html>"#;
    assert_eq!(counts(blogger), (2, 4));
    let tasty = r#"<html><body><div class="tasty-recipes"><h2 class="tasty-recipes-title">Overnight Oats</h2>
        <div class="tasty-recipes-ingredients"><ul><li>oats</li><li>milk</li></ul></div>
        <div class="tasty-recipes-instructions"><p>Stir.</p><p>Refrigerate overnight.</p></div></div></body></html>"#;
    assert_eq!(counts(tasty), (2, 2));
    let sidebar = r#"<html><body><div class="content"><h1>Lentil Soup</h1><h2>Ingredients</h2><ul><li>lentils</li></ul>
        <h2>Method</h2><ol><li>Simmer.</li></ol></div><aside><h4 class="post-title"><a href="/c">Chocolate Cake</a></h4></aside></body></html>"#;
    assert_eq!(read(sidebar).content.title(), "Lentil Soup");
    let table = r#"<html><body><h1>Chili</h1><h2>Ingredients</h2><table><tr><th>Ingredient</th><th>Amount</th></tr>
        <tr><td>beef</td><td>500 g</td></tr><tr><td>beans</td><td>1 can</td></tr></table>
        <h2>Method</h2><ol><li>Brown the beef.<ul><li>Tip: drain the fat.</li></ul></li><li>Add the beans.</li></ol></body></html>"#;
    assert_eq!(counts(table), (2, 2));
    let story = r#"<html><body><h1>Cookies</h1><p>Scroll down for the full <strong>ingredients</strong></p>
        <p>My grandmother made these.</p><h2>Ingredients</h2><ul><li>butter</li><li>sugar</li></ul>
        <h2>Method</h2><ol><li>Bake.</li></ol></body></html>"#;
    assert_eq!(read(story).content.ingredients(), ["butter", "sugar"]);
    for (ingredients, method) in [
        ("🥘 Ingredients", "📝 Instructions"),
        ("Recipe Ingredients", "How to Make Guacamole"),
        ("Ingredientes", "Modo de preparación"),
        ("Ingredients – makes 12", "Method"),
    ] {
        let html = format!(
            "<html><body><h1>Guacamole</h1><h2>{ingredients}</h2><ul><li>avocado</li></ul>\
             <h2>{method}</h2><ol><li>Mash.</li></ol></body></html>"
        );
        assert_eq!(counts(&html), (1, 1), "{ingredients} / {method}");
    }
}

/// What the second held-out batch showed, after it was measured: the
/// ingredients as a list of groups' lists, Meal Planner Pro's card, an
/// underlined heading with its words after it on its line, and a plain
/// span over `<br>` lines.
#[test]
fn groups_lists_meal_planner_pro_and_spans_over_lines_are_read() {
    let groups = dal(
        r#", "recipeIngredient": [["1 cup lentils", "3 cups water"], ["1 onion"]], "recipeInstructions": ["Simmer."]"#,
    );
    assert_eq!(
        read(&groups).content.ingredients(),
        ["1 cup lentils", "3 cups water", "1 onion"]
    );
    let mpp = r#"<html><body><div id="mpprecipe-container"><div id="mpprecipe-title">Scones</div>
        <ul id="mpprecipe-ingredients-list"><li>flour</li><li>butter</li></ul>
        <ol id="mpprecipe-instructions-list"><li>Rub in.</li><li>Bake.</li></ol></div></body></html>"#;
    let imported = read(mpp);
    assert_eq!(
        imported.reading,
        Reading::Card("its Meal Planner Pro recipe card")
    );
    assert_eq!(
        (
            imported.content.ingredients().len(),
            imported.content.steps().len()
        ),
        (2, 2)
    );
    let underlined = r#"<html><body><h1>Far breton</h1><div><u>Ingrédients</u> (pour 8 parts) :</div>
        <div>- 250 g de pruneaux</div><div>- 4 œufs</div><div><br></div>
        <div><u>Préparation</u> (15 min de préparation, 55 min de cuisson) :</div>
        <div>1) Faire tremper les pruneaux.</div><div>2) Cuire 55 minutes.</div></body></html>"#;
    let c = read(underlined).content;
    assert_eq!((c.ingredients().len(), c.steps().len()), (2, 2));
    let spans = r#"<html><body><h1>Ogórki</h1><div class="post-body"><span>Składniki:</span><br />- 2 kg ogórków<br />- 1 czosnek<br /><br />
        <span>Wykonanie:</span><br />1. Umyć ogórki.<br />2. Zalać solanką.<br /></div>
        <nav><span>Ingredients</span><ul><li>Menu</li></ul></nav></body></html>"#;
    let c = read(spans).content;
    assert_eq!((c.ingredients().len(), c.steps().len()), (2, 2));
}
