//! The site in a real browser: Debian's Chromium, headless, driven over
//! WebDriver through Debian's chromedriver. Two cooks sign up, write, edit
//! and fork a recipe and watch the preview follow their typing, as a person
//! would, with the site's own script and Content Security Policy in force;
//! the console then shows that no page broke the policy.
//!
//! The test installs `chromium` and `chromium-driver` when they are missing
//! (CI runs as root on a fresh machine), and fails, saying why, when it
//! cannot: it never passes by skipping. Each step leaves a screenshot in
//! `target/browser-artifacts/`, and a failure leaves the page it failed on.

use std::fs;
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use actix_web::rt::time::{sleep, timeout};
use anyhow::{ensure, Context, Result};
use fantoccini::wd::{TimeoutConfiguration, WebDriverCompatibleCommand};
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{json, Value};

use crate::cli::serve;
use crate::helpers::apt_install;

/// The links of the site's header.
const HEADER_LINKS: &str = "header.site-header nav a";

/// Where Debian's packages put the browser and its driver.
const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// The whole walk through the site, once the browser is up; well past what
/// it takes (a few seconds), so that only a hang reaches it.
const FLOW_LIMIT: Duration = Duration::from_secs(90);

/// How long the preview may take to show what was typed: the script waits
/// 300 ms after the last key, then asks the server.
const PREVIEW_LIMIT: Duration = Duration::from_secs(5);

const RECIPE_FORM: &str = "form.recipe-form";
const PREVIEW_TITLE: &str = "section.preview article.recipe h1";

/// Chromium, its driver and a server on a fresh store, for one cook's
/// walk; screenshots in `target/{artifacts}`.
struct Walk {
    // Dropped in this order: the browser, its driver, the server, and
    // then the store and the browser's profile.
    tab: Tab,
    _driver: Chromedriver,
    _server: crate::cli::Server,
    _root: tempfile::TempDir,
}

impl Walk {
    async fn start(artifacts: &str) -> Walk {
        Walk::start_with(artifacts, &[]).await
    }

    /// `start`, the site served with `flags` besides its store.
    async fn start_with(artifacts: &str, flags: &[&str]) -> Walk {
        install_chromium_and_chromedriver();
        let artifacts = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target")
            .join(artifacts);
        let _ = fs::remove_dir_all(&artifacts);
        fs::create_dir_all(&artifacts).unwrap();
        let root = tempfile::tempdir().unwrap();
        let data = root.path().join("store");
        let mut args = vec!["--data", data.to_str().unwrap()];
        args.extend_from_slice(flags);
        let server = serve(&args);
        let driver = Chromedriver::start(&artifacts.join("chromedriver.log"));
        let client = open_chromium(&driver, &root.path().join("profile"))
            .await
            .unwrap();
        let tab = Tab {
            client,
            site: format!("http://{}", server.addr),
            artifacts,
            shots: 0,
        };
        Walk {
            tab,
            _driver: driver,
            _server: server,
            _root: root,
        }
    }

    /// Ends the walk: on a failure, or a walk past `FLOW_LIMIT`, keeps the
    /// page it failed on and fails, saying where the screenshots are.
    async fn end<Late>(mut self, outcome: Result<Result<()>, Late>) {
        let outcome = outcome
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the walk took longer than {FLOW_LIMIT:?}")));
        if outcome.is_err() {
            self.tab.keep_the_failed_page().await;
        }
        let _ = self.tab.client.close().await;
        if let Err(e) = outcome {
            panic!(
                "{e:?}\n(screenshots and the page it failed on are in {})",
                self.tab.artifacts.display()
            );
        }
    }
}

#[actix_web::test]
async fn cooks_sign_up_write_edit_and_fork_in_chromium_and_no_page_breaks_the_csp() {
    let mut walk = Walk::start("browser-artifacts").await;
    let started = Instant::now();
    let outcome = timeout(FLOW_LIMIT, walk_through_the_site(&mut walk.tab)).await;
    eprintln!("browser: walked the site in {:.1?}", started.elapsed());
    walk.end(outcome).await;
}

/// Issue 31: the family drawing cuts no name. At a phone's width and a
/// desktop's, every title in it lies inside the picture, which scrolls
/// sideways inside its own figure when it is wider than the column, so the
/// page itself never does.
#[actix_web::test]
async fn the_family_drawing_cuts_no_name_at_a_phones_width_or_a_desktops() {
    install_chromium_and_chromedriver();
    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/browser-artifacts-drawing");
    fs::create_dir_all(&artifacts).unwrap();
    let root = tempfile::tempdir().unwrap();
    let server = serve(&["--demo"]);
    let driver = Chromedriver::start(&artifacts.join("chromedriver.log"));
    let client = open_chromium(&driver, &root.path().join("profile"))
        .await
        .unwrap();
    let site = format!("http://{}", server.addr);
    let mut found = Vec::new();
    for width in [360, 1280] {
        client.set_window_size(width, 900).await.unwrap();
        for slug in [
            "country-sourdough",
            "milk-bread-sourdough-tangzhong",
            "shakshuka",
        ] {
            client
                .goto(&format!("{site}/recipes/{slug}/forks"))
                .await
                .unwrap();
            let seen = client
                .execute(
                    "const out = [];
                     const texts = document.querySelectorAll('figure.family-drawing svg text');
                     for (const svg of document.querySelectorAll('figure.family-drawing svg')) {
                       const box = svg.getBoundingClientRect();
                       for (const t of svg.querySelectorAll('text')) {
                         const r = t.getBoundingClientRect();
                         if (r.right > box.right + 0.5 || r.left < box.left - 0.5) {
                           out.push(t.textContent + ' (' + Math.round(r.right - box.right) + ' px past)');
                         }
                       }
                     }
                     const page = document.documentElement;
                     if (page.scrollWidth > page.clientWidth) {
                       // The outermost element past the edge, named.
                       const past = [...document.querySelectorAll('main *')].find(
                         e => !e.closest('.drawing-scroll')
                           && e.getBoundingClientRect().right > page.clientWidth + 0.5);
                       const name = past
                         ? past.tagName.toLowerCase() + ' ' + (past.getAttribute('class') || '')
                           + ': ' + past.textContent.slice(0, 60)
                         : 'nothing outside the drawing';
                       out.push('the page scrolls sideways (' + page.scrollWidth + ' > '
                         + page.clientWidth + '), past the edge first: ' + name);
                     }
                     return [texts.length, out];",
                    vec![],
                )
                .await
                .unwrap();
            let texts = seen[0].as_u64().unwrap_or(0);
            assert!(texts > 1, "{slug} at {width} px: no family drawn");
            for cut in seen[1].as_array().into_iter().flatten() {
                found.push(format!(
                    "{slug} at {width} px: {}",
                    cut.as_str().unwrap_or("")
                ));
            }
            if width == 360 && slug == "country-sourdough" {
                let png = client.screenshot().await.unwrap();
                fs::write(artifacts.join("country-sourdough-forks-360.png"), png).unwrap();
            }
        }
    }
    // Issue 50, on a phone of 390 x 844: the deepest recipe's breadcrumb
    // takes at most 120 px, so its title is in the first screen; the
    // drawing shows which way each change went, with arrowheads, and says
    // that it scrolls in its box.
    client.set_window_size(390, 844).await.unwrap();
    let deepest = deepest_demo_recipe();
    client
        .goto(&format!("{site}/recipes/{deepest}"))
        .await
        .unwrap();
    let seen = client
        .execute(
            "const crumbs = document.querySelector('nav.lineage').getBoundingClientRect();
             const title = document.querySelector('article.recipe h1').getBoundingClientRect();
             return [crumbs.height, title.bottom, window.innerHeight];",
            vec![],
        )
        .await
        .unwrap();
    let number = |i: usize| seen[i].as_f64().unwrap_or(f64::MAX);
    let png = client.screenshot().await.unwrap();
    fs::write(artifacts.join("deepest-recipe-390.png"), png).unwrap();
    assert!(
        number(0) <= 120.0,
        "the breadcrumb of {deepest} takes {} px at 390 px",
        number(0)
    );
    assert!(
        number(1) <= number(2),
        "the title of {deepest} ends at {} px, past the first screen of {} px",
        number(1),
        number(2)
    );
    client
        .goto(&format!("{site}/recipes/country-sourdough/forks"))
        .await
        .unwrap();
    let drawing = client
        .execute(
            "const fig = document.querySelector('figure.family-drawing');
             return [fig.querySelectorAll('path[marker-end]').length,
                     fig.querySelectorAll('marker path').length,
                     fig.querySelector('figcaption').textContent];",
            vec![],
        )
        .await
        .unwrap();
    assert!(drawing[0].as_u64().unwrap_or(0) > 1, "no arrows drawn");
    assert_eq!(drawing[1].as_u64(), Some(2), "the arrowheads' markers");
    assert!(
        drawing[2]
            .as_str()
            .unwrap_or("")
            .contains("scrolls sideways in its box"),
        "{}",
        drawing[2]
    );
    let _ = client.close().await;
    assert!(found.is_empty(), "names cut off:\n{}", found.join("\n"));
}

/// The demo's recipe with the longest lineage, by slug.
fn deepest_demo_recipe() -> String {
    let view = crate::helpers::demo().snapshot();
    crate::helpers::whole_catalog(&view)
        .entries
        .iter()
        .max_by_key(|e| view.lineage(e.id).unwrap().len())
        .unwrap()
        .slug
        .to_string()
}

/// Issue 32, as two cooks do it in the browser: Ben forks Ann's dal, Ann
/// edits hers, and Ben brings the change in (clean); Ann edits the line
/// Ben changed, and Ben brings that in too, keeping his side of the
/// conflict in the form (no version: his recipe is in step, an
/// agreement). Ben suggests his change back; Ann opens the
/// review, changes the same line again in another window, and accepting
/// from the stale review answers 409 with the merge form, where she takes
/// Ben's side. Both histories and the family drawing show the merges.
#[actix_web::test]
async fn forks_talk_back_in_chromium_bring_in_suggest_and_a_stale_acceptance_is_409() {
    let mut walk = Walk::start("browser-artifacts-merges").await;
    let outcome = timeout(FLOW_LIMIT, forks_talk_back(&mut walk.tab)).await;
    walk.end(outcome).await;
}

/// A cook pastes another site's page into /import: the recipe comes back
/// in the recipe form with its live preview, the source named, nothing
/// saved; the cook changes the title, watches the preview follow, and
/// brings it in, its lineage starting at the page.
#[actix_web::test]
async fn an_import_is_shown_in_chromium_to_be_changed_with_its_preview_before_it_is_saved() {
    let mut walk = Walk::start("browser-artifacts-import").await;
    let outcome = timeout(FLOW_LIMIT, import_and_change(&mut walk.tab)).await;
    walk.end(outcome).await;
}

async fn import_and_change(tab: &mut Tab) -> Result<()> {
    sign_up(tab, "ann", "Ann").await?;
    tab.open("/import").await?;
    let page = fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/import/wprm.html"
    ))?;
    tab.fill("form.import-form", &[("html", &page)]).await?;
    tab.submit("form.import-form").await?;
    tab.expect_path("/import").await?;
    tab.screenshot("import-shown").await?;
    tab.wait_for_text(PREVIEW_TITLE, "Easy Chana Masala")
        .await?;
    let source = tab.texts("p.source-notice").await?.join(" ");
    ensure!(
        source.contains("From Spice Trail Kitchen, read from its schema.org JSON-LD"),
        "the source is named: {source}"
    );
    tab.replace(RECIPE_FORM, "title", "Ann's chana masala")
        .await?;
    tab.wait_for_text(PREVIEW_TITLE, "Ann's chana masala")
        .await?;
    // The page's picture is on a host that cannot be found: left out.
    tab.field(RECIPE_FORM, "image").await?.clear().await?;
    tab.screenshot("import-changed").await?;
    tab.submit(RECIPE_FORM).await?;
    tab.expect_path("/recipes/anns-chana-masala").await?;
    tab.expect_text("main h1", "Ann's chana masala").await?;
    let crumbs = tab.texts("nav.lineage li.source a").await?;
    ensure!(
        crumbs == ["Spice Trail Kitchen"],
        "the lineage starts at the page: {crumbs:?}"
    );
    tab.screenshot("import-saved").await
}

/// Issue 54: a cook forks a recipe from another forkful in Chromium. The
/// other site (the demo, on a port of its own) then lists the fork in the
/// recipe's family, and no page breaks the CSP.
#[actix_web::test]
async fn a_recipe_on_another_site_is_forked_in_chromium_listed_there_and_suggested_back() {
    let other = serve(&["--demo", "--allow-private-fetch"]);
    let mut walk =
        Walk::start_with("browser-artifacts-federation", &["--allow-private-fetch"]).await;
    let outcome = timeout(FLOW_LIMIT, fork_from_elsewhere(&mut walk.tab, &other.addr)).await;
    walk.end(outcome).await;
}

async fn fork_from_elsewhere(tab: &mut Tab, other: &str) -> Result<()> {
    sign_up(tab, "ben", "Ben").await?;
    tab.open("/following").await?;
    let recipe = format!("http://{other}/recipes/buttermilk-pancakes");
    let fork_form = "form[action='/following/fork']";
    tab.fill(fork_form, &[("recipe", &recipe)]).await?;
    tab.screenshot("fork-asked").await?;
    tab.submit(fork_form).await?;
    tab.expect_path("/recipes/buttermilk-pancakes").await?;
    tab.expect_text("main h1", "Buttermilk pancakes").await?;
    let crumbs = tab.texts("nav.lineage li.source a").await?;
    ensure!(
        crumbs == [format!("Buttermilk pancakes, by @maya@{other}")],
        "the lineage starts at the other site's recipe: {crumbs:?}"
    );
    tab.screenshot("forked").await?;
    // The other site is told, and lists the fork in the family.
    let family = format!("http://{other}/recipes/buttermilk-pancakes/forks");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        tab.client.goto(&family).await?;
        let listed = tab.texts("ul.remote-forks li").await?;
        if let Some(fork) = listed.first() {
            ensure!(
                fork.contains("by @ben@"),
                "the fork is listed as ben's: {listed:?}"
            );
            break;
        }
        ensure!(
            Instant::now() < deadline,
            "the other site never listed the fork"
        );
        sleep(Duration::from_millis(250)).await;
    }
    tab.screenshot_of("ul.remote-forks", "listed-elsewhere")
        .await?;
    suggest_back_elsewhere(tab, other).await?;
    let log = console(&tab.client).await?;
    let violations: Vec<&String> = log.iter().filter(|m| is_csp_violation(m)).collect();
    ensure!(
        violations.is_empty(),
        "pages broke the Content Security Policy:\n{violations:#?}"
    );
    Ok(())
}

/// Ben changes his fork of the other site's pancakes and suggests the
/// change back from its page: the other site has it as a suggestion to
/// its recipe, by him, and his page says it was offered there.
async fn suggest_back_elsewhere(tab: &mut Tab, other: &str) -> Result<()> {
    let fork = "/recipes/buttermilk-pancakes";
    tab.open(&format!("{fork}/edit")).await?;
    tab.replace(RECIPE_FORM, "summary", "Fluffier, with a rest.")
        .await?;
    tab.fill(RECIPE_FORM, &[("note", "a rest")]).await?;
    tab.submit(RECIPE_FORM).await?;
    tab.expect_path(fork).await?;
    tab.click("p.apart a[href$='/suggest']").await?;
    tab.fill("form.suggest", &[("message", "Let the batter rest.")])
        .await?;
    tab.submit("form.suggest").await?;
    tab.expect_path(fork).await?;
    let said = tab.texts("p.suggestion-outcome").await?.join(" ");
    ensure!(
        said.contains(&format!("was offered to Buttermilk pancakes on {other}")),
        "the fork's page says {said:?}"
    );
    tab.screenshot("suggested-elsewhere").await?;
    let suggestion = format!("http://{other}/recipes/buttermilk-pancakes/suggestions/1");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        tab.client.goto(&suggestion).await?;
        let heading = tab.texts("main").await?.join(" ");
        if heading.contains("by @ben@") {
            ensure!(
                heading.contains("Let the batter rest."),
                "the suggestion there says {heading:?}"
            );
            break;
        }
        ensure!(
            Instant::now() < deadline,
            "the other site never had the suggestion: {heading:?}"
        );
        sleep(Duration::from_millis(250)).await;
    }
    tab.screenshot("suggestion-elsewhere").await
}

const DAL: &str = "/recipes/weeknight-dal";
const BENS_DAL: &str = "/recipes/bens-dal";

/// Ann's dal's ingredients, one line changed.
fn dal_ingredients(spice: &str, water: &str) -> String {
    format!("1 cup red lentils\n{water}\n{spice}\n1 tsp salt")
}

async fn forks_talk_back(tab: &mut Tab) -> Result<()> {
    sign_up(tab, "ann", "Ann Auger").await?;
    write_dal(tab).await?;
    log_out(tab).await?;

    sign_up(tab, "ben", "Ben Brook").await?;
    fork_dal(tab).await?;
    log_out(tab).await?;

    // Ann changes another line: it comes into Ben's fork cleanly.
    log_in(tab, "ann").await?;
    edit_dal(
        tab,
        &dal_ingredients("1 tsp turmeric", "4 cups water"),
        "More water",
    )
    .await?;
    log_out(tab).await?;
    log_in(tab, "ben").await?;
    tab.open(BENS_DAL).await?;
    let apart = tab.texts("p.apart").await?;
    ensure!(
        apart
            .iter()
            .any(|t| t.starts_with("Weeknight dal has 1 new version since version 1.")),
        "the fork's page says {apart:?}"
    );
    tab.screenshot("fork-behind").await?;
    tab.click("p.apart a[href$='/bring-in']").await?;
    tab.expect_path(&format!("{BENS_DAL}/bring-in")).await?;
    ensure!(
        tab.texts("fieldset.conflict").await?.is_empty(),
        "a clean merge shows a conflict"
    );
    tab.submit("form.bring-in").await?;
    tab.expect_path(BENS_DAL).await?;
    tab.screenshot("fork-brought-in").await?;

    // Ann changes the spice Ben changed: a conflict, which Ben settles in
    // the form, keeping his cumin.
    log_out(tab).await?;
    log_in(tab, "ann").await?;
    edit_dal(
        tab,
        &dal_ingredients("1 tsp smoked paprika", "4 cups water"),
        "Paprika",
    )
    .await?;
    log_out(tab).await?;
    log_in(tab, "ben").await?;
    tab.open(&format!("{BENS_DAL}/bring-in")).await?;
    let conflict = tab.texts("fieldset.conflict").await?;
    ensure!(conflict.len() == 1, "one conflict, not {conflict:?}");
    ensure!(
        conflict[0].contains("1 tsp cumin") && conflict[0].contains("1 tsp smoked paprika"),
        "the conflict shows both sides: {conflict:?}"
    );
    tab.screenshot("bring-in-conflict").await?;
    tab.choose("fieldset.conflict input[value='mine']").await?;
    tab.submit("form.bring-in").await?;
    tab.expect_path(BENS_DAL).await?;
    let ingredients = tab.texts("article.recipe .ingredients li").await?;
    ensure!(
        ingredients.iter().any(|l| l.contains("cumin"))
            && ingredients.iter().any(|l| l.contains("4 cups water")),
        "after the merge the fork's ingredients are {ingredients:?}"
    );
    // Keeping his own side changed nothing of his recipe: no version,
    // and his page says it is in step, with the change he kept.
    let apart = tab.texts("p.apart").await?;
    ensure!(
        apart.iter().any(|t| t
            == "In step with Weeknight dal's version 3; you kept your own version of 1 change it made."),
        "the fork's page says {apart:?}"
    );

    // Ben suggests his cumin back.
    suggest_back(tab, "Cumin, not paprika: it suits the lentils").await?;
    tab.screenshot("suggested").await?;
    log_out(tab).await?;

    // Ann sees it on her account page, opens the review, and in another
    // window changes the same line again before accepting.
    log_in(tab, "ann").await?;
    tab.open("/account").await?;
    let listed = tab.texts("ul.suggestions li").await?;
    ensure!(
        listed.len() == 1
            && listed[0].contains("from Ben's dal by ben")
            && listed[0].ends_with("open"),
        "Ann's account lists {listed:?}"
    );
    tab.click("ul.suggestions li a[href$='/suggestions/1']")
        .await?;
    let review = tab.client.window().await?;
    let other = tab.client.new_window(true).await?;
    tab.client.switch_to_window(other.handle.clone()).await?;
    edit_dal(
        tab,
        &dal_ingredients("1 tsp chilli flakes", "4 cups water"),
        "Chilli",
    )
    .await?;
    tab.client.close_window().await?;
    tab.client.switch_to_window(review).await?;
    tab.submit("form.accept").await?;
    ensure!(
        tab.status().await? == 409,
        "accepting from a stale review answered {}",
        tab.status().await?
    );
    ensure!(
        tab.texts("form.accept fieldset.conflict").await?.len() == 1,
        "the 409 page has no merge form to choose in"
    );
    tab.screenshot("stale-acceptance-409").await?;
    tab.choose("form.accept fieldset.conflict input[value='theirs']")
        .await?;
    tab.submit("form.accept").await?;
    tab.expect_path(&format!("{DAL}/suggestions/1")).await?;
    tab.expect_text("p.lede .state", "accepted in version 5")
        .await?;
    tab.open(DAL).await?;
    let ingredients = tab.texts("article.recipe .ingredients li").await?;
    ensure!(
        ingredients.iter().any(|l| l.contains("cumin")),
        "after accepting, Ann's ingredients are {ingredients:?}"
    );

    // Both histories, and the family drawing.
    tab.open(&format!("{DAL}/history")).await?;
    let what = tab.texts("ol.versions p.what").await?;
    ensure!(
        what.first()
            .is_some_and(|w| w.starts_with("Changed: took suggestion 1 by ben from Ben's dal")),
        "Ann's history says {what:?}"
    );
    tab.screenshot("history-took").await?;
    tab.open(&format!("{BENS_DAL}/history")).await?;
    let what = tab.texts("ol.versions p.what").await?;
    ensure!(
        what.iter()
            .filter(|w| w.starts_with("Changed: brought in version "))
            .count()
            == 1,
        "Ben's history says {what:?}"
    );
    let origins = tab.texts("ol.versions p.origin").await?;
    ensure!(
        origins.iter().any(|o| o
            .starts_with("Then in step with version 3 of Weeknight dal, with no change to it (ingredients kept its own)")),
        "Ben's history says {origins:?}"
    );
    tab.open(&format!("{DAL}/forks")).await?;
    let titles = tab
        .client
        .execute(
            "return [...document.querySelectorAll('figure.family-drawing svg title')].map(t => t.textContent);",
            vec![],
        )
        .await?;
    let titles = strings(&titles);
    for want in [
        "Ben's dal brought in version 2 of Weeknight dal in its version 2",
        "Weeknight dal took suggestion 1 from version 2 of Ben's dal in its version 5",
    ] {
        ensure!(
            titles.iter().any(|t| t == want),
            "the drawing has no {want:?}: {titles:?}"
        );
    }
    tab.screenshot("family-merges").await?;
    Ok(())
}

/// Issue 50 in the browser, with two cooks at once (a browser each): Ben
/// settles a conflict in the bring-in form, watching the live preview as
/// he keeps both sides and then writes the line by hand; he suggests his
/// change back, and, once Ann has opened the review, adds a line to his
/// fork: her accept answers 409 with the review as it is now, showing the
/// line, and she declines it from there; Ben's fork page tells him, with
/// her note. The review's Accept and Decline stand well apart.
#[actix_web::test]
async fn merges_in_chromium_keep_both_write_by_hand_preview_and_a_stale_accept_is_409() {
    install_chromium_and_chromedriver();
    let artifacts =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/browser-artifacts-trusted-merges");
    let _ = fs::remove_dir_all(&artifacts);
    fs::create_dir_all(&artifacts).unwrap();
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("store");
    let server = serve(&["--data", data.to_str().unwrap()]);
    let driver = Chromedriver::start(&artifacts.join("chromedriver.log"));
    let site = format!("http://{}", server.addr);
    let mut tabs = Vec::new();
    for who in ["ann", "ben"] {
        let client = open_chromium(&driver, &root.path().join(format!("profile-{who}")))
            .await
            .unwrap();
        tabs.push(Tab {
            client,
            site: site.clone(),
            artifacts: artifacts.join(who),
            shots: 0,
        });
        fs::create_dir_all(artifacts.join(who)).unwrap();
    }
    let (mut ben, mut ann) = (tabs.pop().unwrap(), tabs.pop().unwrap());
    let outcome = match timeout(FLOW_LIMIT, merges_a_cook_can_trust(&mut ann, &mut ben)).await {
        Ok(outcome) => outcome,
        Err(_) => Err(anyhow::anyhow!("the walk took longer than {FLOW_LIMIT:?}")),
    };
    if outcome.is_err() {
        ann.keep_the_failed_page().await;
        ben.keep_the_failed_page().await;
    }
    let _ = ann.client.close().await;
    let _ = ben.client.close().await;
    if let Err(e) = outcome {
        panic!(
            "{e:?}\n(screenshots and the pages it failed on are in {})",
            artifacts.display()
        );
    }
}

async fn merges_a_cook_can_trust(ann: &mut Tab, ben: &mut Tab) -> Result<()> {
    sign_up(ann, "ann", "Ann Auger").await?;
    write_dal(ann).await?;
    sign_up(ben, "ben", "Ben Brook").await?;
    fork_dal(ben).await?;
    edit_dal(
        ann,
        &dal_ingredients("1 tsp smoked paprika", "3 cups water"),
        "Paprika",
    )
    .await?;

    // The bring-in form: keep both, watched in the live preview, then the
    // line written by hand, which the preview follows as he types.
    ben.open(&format!("{BENS_DAL}/bring-in")).await?;
    let preview = "section.preview .ingredients li";
    ben.wait_for_text(
        "section.preview p.meta",
        "Choose how to settle every change made on both sides to see the whole recipe (1 left).",
    )
    .await?;
    ben.choose("fieldset.conflict input[value='both']").await?;
    ben.wait_for_texts(
        preview,
        &[
            "1 cup red lentils",
            "3 cups water",
            "1 tsp cumin",
            "1 tsp smoked paprika",
            "1 tsp salt",
        ],
    )
    .await?;
    ben.screenshot("bring-in-keep-both").await?;
    ben.replace(
        "fieldset.conflict",
        "edit-0",
        "1 tsp cumin\n1 tsp smoked paprika, a pinch",
    )
    .await?;
    ben.wait_for_texts(
        preview,
        &[
            "1 cup red lentils",
            "3 cups water",
            "1 tsp cumin",
            "1 tsp smoked paprika, a pinch",
            "1 tsp salt",
        ],
    )
    .await?;
    ensure!(
        ben.client
            .find(Locator::Css("fieldset.conflict input[value='edit']"))
            .await?
            .is_selected()
            .await?,
        "writing in the box chose to write it by hand"
    );
    ben.screenshot("bring-in-by-hand").await?;
    ben.submit("form.bring-in").await?;
    ben.expect_path(BENS_DAL).await?;
    let ingredients = ben.texts("article.recipe .ingredients li").await?;
    ensure!(
        ingredients.contains(&"1 tsp smoked paprika, a pinch".to_owned()),
        "after the merge Ben's ingredients are {ingredients:?}"
    );

    // Ben suggests; Ann opens the review; Ben then adds a line.
    suggest_back(ben, "Cumin and a pinch of paprika").await?;
    ann.open(&format!("{DAL}/suggestions/1")).await?;
    let apart = ann
        .client
        .execute(
            "const accept = document.querySelector('form.accept button[value=accept]').getBoundingClientRect();
             const decline = document.querySelector('form.decline button').getBoundingClientRect();
             return decline.top - accept.bottom;",
            vec![],
        )
        .await?;
    let apart = apart.as_f64().unwrap_or(0.0);
    ensure!(
        apart >= 24.0,
        "Accept and Decline are {apart} px apart (WCAG 2.5.8 asks 24)"
    );
    ann.screenshot("review").await?;
    ben.open(&format!("{BENS_DAL}/edit")).await?;
    ben.replace(
        RECIPE_FORM,
        "ingredients",
        "1 cup red lentils\n3 cups water\n1 tsp cumin\n1 tsp smoked paprika, a pinch\n1 tsp salt\n1 cup bleach",
    )
    .await?;
    ben.fill(RECIPE_FORM, &[("note", "Bleach")]).await?;
    ben.submit(RECIPE_FORM).await?;
    ben.expect_path(BENS_DAL).await?;
    ann.submit("form.accept").await?;
    ensure!(
        ann.status().await? == 409,
        "accepting what the fork changed since answered {}",
        ann.status().await?
    );
    let shown = ann.texts("main").await?.join(" ");
    ensure!(
        shown.contains("Ben's dal changed since this page was made")
            && shown.contains("1 cup bleach"),
        "the 409 page shows the suggestion as it is now: {shown}"
    );
    ann.screenshot("stale-accept-409").await?;
    ann.fill("form.decline", &[("reply", "No bleach in my dal")])
        .await?;
    ann.submit("form.decline").await?;
    ann.expect_path(&format!("{DAL}/suggestions/1")).await?;
    ann.expect_text("p.lede .state", "declined").await?;
    let ingredients = {
        ann.open(DAL).await?;
        ann.texts("article.recipe .ingredients li").await?
    };
    ensure!(
        !ingredients.iter().any(|l| l.contains("bleach")),
        "Ann's dal has {ingredients:?}"
    );
    ben.open(BENS_DAL).await?;
    let outcome = ben.texts("p.suggestion-outcome").await?.join(" ");
    ensure!(
        outcome.contains("was declined") && outcome.contains("No bleach in my dal"),
        "Ben's fork page says {outcome:?}"
    );
    ben.screenshot("declined").await?;
    Ok(())
}

/// Ann writes her weeknight dal.
async fn write_dal(tab: &mut Tab) -> Result<()> {
    tab.open("/recipes/new").await?;
    tab.fill(
        RECIPE_FORM,
        &[
            ("title", "Weeknight dal"),
            (
                "ingredients",
                &dal_ingredients("1 tsp turmeric", "3 cups water"),
            ),
            ("steps", "Simmer the lentils 20 minutes.\n\nSeason."),
            ("note", "First version"),
        ],
    )
    .await?;
    tab.submit(RECIPE_FORM).await?;
    tab.expect_path(DAL).await
}

/// Ben forks it as his dal, with cumin for turmeric.
async fn fork_dal(tab: &mut Tab) -> Result<()> {
    tab.open(&format!("{DAL}/fork")).await?;
    tab.replace(RECIPE_FORM, "slug", "bens-dal").await?;
    tab.replace(RECIPE_FORM, "title", "Ben's dal").await?;
    tab.replace(
        RECIPE_FORM,
        "ingredients",
        &dal_ingredients("1 tsp cumin", "3 cups water"),
    )
    .await?;
    tab.replace(RECIPE_FORM, "note", "Cumin").await?;
    tab.submit(RECIPE_FORM).await?;
    tab.expect_path(BENS_DAL).await
}

/// Ben suggests his dal's changes back to Ann's, from his fork's page,
/// with `message`: her dal's first suggestion.
async fn suggest_back(tab: &mut Tab, message: &str) -> Result<()> {
    tab.click("p.apart a[href$='/suggest']").await?;
    tab.fill("form.suggest", &[("message", message)]).await?;
    tab.submit("form.suggest").await?;
    tab.expect_path(&format!("{DAL}/suggestions/1")).await
}

/// Ann's edit of her dal's ingredients.
async fn edit_dal(tab: &mut Tab, ingredients: &str, note: &str) -> Result<()> {
    tab.open(&format!("{DAL}/edit")).await?;
    tab.replace(RECIPE_FORM, "ingredients", ingredients).await?;
    tab.fill(RECIPE_FORM, &[("note", note)]).await?;
    tab.submit(RECIPE_FORM).await?;
    tab.expect_path(DAL).await
}

async fn log_out(tab: &mut Tab) -> Result<()> {
    tab.open("/account").await?;
    tab.submit("form[action=\"/logout\"]").await
}

async fn log_in(tab: &mut Tab, handle: &str) -> Result<()> {
    let form = "form[action=\"/login\"]";
    tab.open("/login").await?;
    tab.fill(
        form,
        &[("handle", handle), ("password", "correct horse battery")],
    )
    .await?;
    tab.submit(form).await
}

/// Ann writes and edits a recipe, watches the preview, and logs out; Ben
/// forks her recipe and sees it in his fork's lineage. Then the console:
/// no violation of the policy, while an inline script added on purpose is
/// both refused and seen in it, so that the first check could have failed.
async fn walk_through_the_site(tab: &mut Tab) -> Result<()> {
    // Issue 31: the header knows who is asking.
    tab.open("/about").await?;
    let site = ["Recipes", "Tags", "About"];
    let links = tab.texts(HEADER_LINKS).await?;
    ensure!(
        links == [&site[..], &["Log in", "Sign up"]].concat(),
        "a visitor's header shows {links:?}"
    );
    tab.screenshot("visitor-header").await?;
    // "Log in" comes back to the page it left, once logged in.
    tab.click_link("Log in").await?;
    tab.expect_path("/login").await?;
    tab.click_link("Sign up").await?;
    sign_up(tab, "ann", "Ann Auger").await?;
    tab.screenshot("ann-signed-up").await?;
    tab.open("/about").await?;
    let links = tab.texts(HEADER_LINKS).await?;
    ensure!(
        links == [&site[..], &["Write a recipe", "Ann Auger", "Account"]].concat(),
        "a cook's header shows {links:?}"
    );
    tab.screenshot("cook-header").await?;
    tab.click_link("Ann Auger").await?;
    tab.expect_path("/cooks/ann").await?;
    tab.open("/").await?;
    tab.click_link("Write a recipe").await?;
    tab.expect_path("/recipes/new").await?;
    tab.fill(
        RECIPE_FORM,
        &[
            ("title", "Skillet cornbread"),
            ("summary", "Crisp at the edges, soft inside."),
            ("servings", "8"),
            ("prep", "10"),
            ("cook", "20"),
            (
                "ingredients",
                "1 cup cornmeal\n1 cup flour\n1 cup buttermilk\n2 eggs",
            ),
            ("steps", "Heat the skillet in the oven.\n\nMix, pour, bake."),
            ("tags", "bread, quick"),
            ("note", "First version"),
        ],
    )
    .await?;
    tab.submit(RECIPE_FORM).await?;
    tab.expect_path("/recipes/skillet-cornbread").await?;
    tab.expect_text("article.recipe h1", "Skillet cornbread")
        .await?;
    tab.screenshot("ann-created").await?;

    tab.open("/recipes/skillet-cornbread/edit").await?;
    // The preview fills once on load, before any typing.
    tab.wait_for_text(PREVIEW_TITLE, "Skillet cornbread")
        .await?;
    tab.replace(RECIPE_FORM, "title", "Brown-butter skillet cornbread")
        .await?;
    tab.fill(RECIPE_FORM, &[("note", "Brown the butter first")])
        .await?;
    tab.submit(RECIPE_FORM).await?;
    tab.expect_path("/recipes/skillet-cornbread").await?;
    tab.expect_text("article.recipe h1", "Brown-butter skillet cornbread")
        .await?;
    tab.screenshot("ann-edited").await?;

    tab.open("/recipes/new").await?;
    tab.fill(RECIPE_FORM, &[("title", "Green chile stew")])
        .await?;
    tab.wait_for_text(PREVIEW_TITLE, "Green chile stew").await?;
    tab.screenshot_of("section.preview", "ann-preview").await?;
    editor_layout(tab).await?;

    tab.open("/recipes/skillet-cornbread").await?;
    ensure!(
        !tab.texts(HEADER_LINKS)
            .await?
            .contains(&"Log in".to_owned()),
        "a logged-in cook is offered to log in"
    );
    tab.open("/account").await?;
    tab.submit("form[action=\"/logout\"]").await?;
    tab.open("/account").await?;
    tab.expect_path("/login").await?;
    // Logged in from the header on a recipe's page: back to that page.
    tab.open("/recipes/skillet-cornbread").await?;
    tab.click_link("Log in").await?;
    let form = "form[action=\"/login\"]";
    tab.fill(
        form,
        &[("handle", "ann"), ("password", "correct horse battery")],
    )
    .await?;
    tab.submit(form).await?;
    tab.expect_path("/recipes/skillet-cornbread").await?;
    ensure!(
        tab.texts(HEADER_LINKS)
            .await?
            .contains(&"Ann Auger".to_owned()),
        "logged in again, the header does not say so"
    );
    tab.open("/account").await?;
    tab.submit("form[action=\"/logout\"]").await?;

    sign_up(tab, "ben", "Ben Brook").await?;
    tab.open("/recipes/skillet-cornbread/fork?version=2")
        .await?;
    tab.replace(RECIPE_FORM, "title", "Honey cornbread").await?;
    tab.replace(RECIPE_FORM, "note", "Honey instead of sugar")
        .await?;
    tab.submit(RECIPE_FORM).await?;
    let fork = tab.path().await?;
    ensure!(
        fork.starts_with("/recipes/") && fork != "/recipes/skillet-cornbread",
        "forking did not lead to the fork's page but to {fork}"
    );
    tab.expect_text("article.recipe h1", "Honey cornbread")
        .await?;
    let lineage = tab.texts("nav.lineage ol li a").await?;
    ensure!(
        lineage == ["Brown-butter skillet cornbread"],
        "the fork's lineage shows {lineage:?}, not Ann's recipe as it was at version 2"
    );
    // Version 2 is Ann's edit: the edit made a new version.
    tab.expect_text("nav.lineage ol li .at", "v2").await?;
    tab.screenshot("ben-forked").await?;

    let log = console(&tab.client).await?;
    for entry in &log {
        eprintln!("browser: console: {entry}");
    }
    let violations: Vec<&String> = log.iter().filter(|m| is_csp_violation(m)).collect();
    ensure!(
        violations.is_empty(),
        "pages broke the Content Security Policy:\n{violations:#?}"
    );

    let ran = tab
        .client
        .execute(
            "var s = document.createElement('script');
             s.textContent = 'window.inlineScriptRan = true';
             document.body.appendChild(s);
             return window.inlineScriptRan === true;",
            vec![],
        )
        .await
        .context("adding an inline script to the page")?;
    ensure!(
        ran == Value::Bool(false),
        "an inline script ran: the policy is not in force"
    );
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut seen = Vec::new();
    while !seen.iter().any(|m: &String| is_csp_violation(m)) {
        ensure!(
            Instant::now() < deadline,
            "the policy refused an inline script but the console log shows no violation, \
             so the check for violations could not have failed; the log: {seen:#?}"
        );
        sleep(Duration::from_millis(100)).await;
        seen.extend(console(&tab.client).await?);
    }
    Ok(())
}

/// Issue 31: on a wide screen the preview stands beside the form and stays
/// in view with the form scrolled to its end; on a narrow one it is below.
async fn editor_layout(tab: &mut Tab) -> Result<()> {
    let boxes = "const f = document.querySelector('form.recipe-form').getBoundingClientRect();
                 const p = document.querySelector('section.preview').getBoundingClientRect();
                 return [f.left, f.right, f.top, f.bottom, p.left, p.right, p.top, p.bottom,
                         window.innerHeight];";
    let read = |v: Value| -> Vec<f64> {
        v.as_array()
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default()
    };
    // 1280 px wide (the window's size): side by side.
    let at = read(tab.client.execute(boxes, vec![]).await?);
    let [_, form_right, _, _, preview_left, _, _, _, _] = at[..] else {
        anyhow::bail!("the editor's boxes: {at:?}");
    };
    ensure!(
        preview_left >= form_right,
        "at 1280 px the preview is not beside the form: {at:?}"
    );
    // The form scrolled to its end: the preview is still in the window.
    tab.client
        .execute(
            "document.querySelector('form.recipe-form button[type=submit]').scrollIntoView();",
            vec![],
        )
        .await?;
    let at = read(tab.client.execute(boxes, vec![]).await?);
    let [_, _, _, _, _, _, preview_top, preview_bottom, height] = at[..] else {
        anyhow::bail!("the editor's boxes: {at:?}");
    };
    ensure!(
        preview_top >= 0.0 && preview_top < height && preview_bottom > 0.0,
        "with the form scrolled, the preview left the window: {at:?}"
    );
    let sideways = tab
        .client
        .execute(
            "const p = document.querySelector('section.preview');
             if (p.scrollWidth <= p.clientWidth) return false;
             const edge = p.getBoundingClientRect().right;
             const past = [...p.querySelectorAll('*')].find(e => e.getBoundingClientRect().right > edge + 0.5);
             return past ? past.tagName + '.' + past.className + ' ' + past.getBoundingClientRect().right + ' > ' + edge : true;",
            vec![],
        )
        .await?;
    ensure!(
        sideways == Value::Bool(false),
        "the preview scrolls sideways beside the form: {sideways}"
    );
    tab.screenshot("editor-wide-scrolled").await?;
    // A phone's width: below the form.
    tab.client.set_window_size(390, 900).await?;
    let at = read(tab.client.execute(boxes, vec![]).await?);
    tab.client.set_window_size(1280, 1200).await?;
    let [_, _, _, form_bottom, _, _, preview_top, _, _] = at[..] else {
        anyhow::bail!("the editor's boxes: {at:?}");
    };
    ensure!(
        preview_top >= form_bottom,
        "at 390 px the preview is not below the form: {at:?}"
    );
    Ok(())
}

async fn sign_up(tab: &mut Tab, handle: &str, name: &str) -> Result<()> {
    let form = "form[action=\"/signup\"]";
    tab.open("/signup").await?;
    tab.fill(
        form,
        &[
            ("handle", handle),
            ("name", name),
            ("password", "correct horse battery"),
        ],
    )
    .await?;
    tab.submit(form).await?;
    tab.expect_path("/account").await
}

/// What Chromium's console says when the policy blocks something, e.g.
/// "Refused to execute inline script because it violates the following
/// Content Security Policy directive: ...".
fn is_csp_violation(message: &str) -> bool {
    message.contains("Content Security Policy") || message.contains("Refused to")
}

/// Debian's Chromium and chromedriver, installed with apt-get when either is
/// missing (after `apt-get update` when the first try fails). Panics, saying
/// why, when they cannot be had.
fn install_chromium_and_chromedriver() {
    /// Two tests of this binary must not run apt-get at once.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let present = || Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists();
    if present() {
        return;
    }
    eprintln!("browser: {CHROMIUM} or {CHROMEDRIVER} is missing: installing Debian's chromium and chromium-driver");
    let started = Instant::now();
    if let Err(why) = apt_install(&["chromium", "chromium-driver"]) {
        panic!(
            "the browser test needs {CHROMIUM} and {CHROMEDRIVER} and could not install them \
             (`apt-get install -y chromium chromium-driver`, as root): {why}"
        );
    }
    assert!(
        present(),
        "apt-get installed chromium and chromium-driver, yet {CHROMIUM} or {CHROMEDRIVER} is missing"
    );
    eprintln!("browser: installed in {:.1?}", started.elapsed());
}

/// A chromedriver of this test's own on a free port. Dropping it ends it and
/// the browser it started, which stays in its process group.
struct Chromedriver {
    child: Child,
    url: String,
}

impl Chromedriver {
    fn start(log: &Path) -> Chromedriver {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        let log = fs::File::create(log).unwrap();
        let child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("{CHROMEDRIVER} did not start: {e}"));
        let mut driver = Chromedriver {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = driver.child.try_wait().unwrap() {
                panic!("chromedriver exited before it answered ({status}); see chromedriver.log");
            }
            assert!(
                Instant::now() < deadline,
                "chromedriver did not answer on port {port} within 10 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        driver
    }
}

impl Drop for Chromedriver {
    /// A test that fails leaves no driver or browser running.
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A headless Chromium whose console log chromedriver keeps, with a profile
/// in `profile` (under the test's temporary directory).
async fn open_chromium(driver: &Chromedriver, profile: &Path) -> Result<Client> {
    let capabilities = json!({
        "browserName": "chrome",
        "goog:chromeOptions": {
            "binary": CHROMIUM,
            "args": [
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--window-size=1280,1200",
                format!("--user-data-dir={}", profile.display()),
            ],
        },
        "goog:loggingPrefs": { "browser": "ALL" },
    });
    let Value::Object(capabilities) = capabilities else {
        unreachable!("json! of an object is an object")
    };
    let client = ClientBuilder::new(HttpConnector::new())
        .capabilities(capabilities)
        .connect(&driver.url)
        .await
        .context("starting Chromium through chromedriver")?;
    client
        .update_timeouts(TimeoutConfiguration::new(
            Some(Duration::from_secs(10)),
            Some(Duration::from_secs(20)),
            None,
        ))
        .await?;
    Ok(client)
}

/// chromedriver's command for the browser's console log, the entries since
/// the last read; fantoccini has none of its own.
#[derive(Debug)]
struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(
        &self,
        base: &url::Url,
        session: Option<&str>,
    ) -> std::result::Result<url::Url, url::ParseError> {
        base.join(&format!("session/{}/se/log", session.unwrap_or_default()))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (
            http::Method::POST,
            Some(json!({ "type": "browser" }).to_string()),
        )
    }
}

/// The console's entries since the last read, each as "LEVEL message".
async fn console(client: &Client) -> Result<Vec<String>> {
    let entries = client
        .issue_cmd(BrowserLog)
        .await
        .context("reading the browser's console log")?;
    let entries = entries
        .as_array()
        .with_context(|| format!("the console log is not a list: {entries}"))?;
    Ok(entries
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["level"].as_str().unwrap_or("?"),
                e["message"].as_str().unwrap_or_default()
            )
        })
        .collect())
}

/// The browser's one tab on the site, and where its screenshots go.
struct Tab {
    client: Client,
    /// `http://127.0.0.1:PORT`.
    site: String,
    artifacts: PathBuf,
    /// Screenshots taken so far, for their names' order.
    shots: usize,
}

impl Tab {
    async fn open(&self, path: &str) -> Result<()> {
        self.client
            .goto(&format!("{}{path}", self.site))
            .await
            .with_context(|| format!("opening {path}"))
    }

    /// The path of the page shown now.
    async fn path(&self) -> Result<String> {
        Ok(self.client.current_url().await?.path().to_owned())
    }

    async fn expect_path(&self, want: &str) -> Result<()> {
        let path = self.path().await?;
        ensure!(path == want, "expected to be on {want}, but am on {path}");
        Ok(())
    }

    /// Types each value into the field of that name in `form`.
    async fn fill(&self, form: &str, fields: &[(&str, &str)]) -> Result<()> {
        for (name, value) in fields {
            self.field(form, name)
                .await?
                .send_keys(value)
                .await
                .with_context(|| format!("typing into {name}"))?;
        }
        Ok(())
    }

    /// Empties the field `name` of `form`, then types `value` into it.
    async fn replace(&self, form: &str, name: &str, value: &str) -> Result<()> {
        let field = self.field(form, name).await?;
        field.clear().await?;
        field
            .send_keys(value)
            .await
            .with_context(|| format!("typing into {name}"))
    }

    async fn field(&self, form: &str, name: &str) -> Result<fantoccini::elements::Element> {
        let css = format!("{form} [name=\"{name}\"]");
        self.client
            .find(Locator::Css(&css))
            .await
            .with_context(|| format!("finding {css}"))
    }

    /// Clicks the submit button of `form`, and waits for the page it leads to.
    async fn submit(&self, form: &str) -> Result<()> {
        let css = format!("{form} button[type=\"submit\"]");
        let button = self
            .client
            .find(Locator::Css(&css))
            .await
            .with_context(|| format!("finding {css}"))?;
        button.click().await?;
        // The old page's button goes stale once the next page is in.
        let deadline = Instant::now() + Duration::from_secs(10);
        while button.tag_name().await.is_ok() {
            ensure!(
                Instant::now() < deadline,
                "submitting {form} led to no new page within 10 s"
            );
            sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }

    /// Clicks the header's link that says `text`, and waits for its page.
    async fn click_link(&self, text: &str) -> Result<()> {
        let mut found = None;
        for link in self.client.find_all(Locator::Css(HEADER_LINKS)).await? {
            if link.text().await? == text {
                found = Some(link);
            }
        }
        let link = found.with_context(|| format!("no header link says {text:?}"))?;
        link.click().await?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while link.tag_name().await.is_ok() {
            ensure!(
                Instant::now() < deadline,
                "the link {text:?} led to no new page within 10 s"
            );
            sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }

    /// Clicks the element `css` (a link), and waits for its page.
    async fn click(&self, css: &str) -> Result<()> {
        let element = self
            .client
            .find(Locator::Css(css))
            .await
            .with_context(|| format!("finding {css}"))?;
        element.click().await?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while element.tag_name().await.is_ok() {
            ensure!(
                Instant::now() < deadline,
                "clicking {css} led to no new page within 10 s"
            );
            sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }

    /// Clicks the radio button or box `css`, staying on the page.
    async fn choose(&self, css: &str) -> Result<()> {
        self.client
            .find(Locator::Css(css))
            .await
            .with_context(|| format!("finding {css}"))?
            .click()
            .await
            .with_context(|| format!("choosing {css}"))
    }

    /// The HTTP status the page shown now was answered with.
    async fn status(&self) -> Result<u64> {
        let status = self
            .client
            .execute(
                "return performance.getEntriesByType('navigation')[0].responseStatus;",
                vec![],
            )
            .await?;
        status
            .as_u64()
            .with_context(|| format!("the page's status is {status}"))
    }

    async fn texts(&self, css: &str) -> Result<Vec<String>> {
        let mut texts = Vec::new();
        for element in self.client.find_all(Locator::Css(css)).await? {
            texts.push(element.text().await?);
        }
        Ok(texts)
    }

    async fn expect_text(&self, css: &str, want: &str) -> Result<()> {
        let texts = self.texts(css).await?;
        ensure!(texts == [want], "{css} shows {texts:?}, not {want:?}");
        Ok(())
    }

    /// Waits until `css` shows `want`, as the preview does a moment after
    /// the typing: read as `wait_for_texts` reads, in one script, as the
    /// preview may be replaced between finding an element and reading it.
    async fn wait_for_text(&self, css: &str, want: &str) -> Result<()> {
        self.wait_for_texts(css, &[want]).await
    }

    /// Waits until `css` shows `want` (each element's text), as the
    /// merge's live preview does a moment after a choice.
    async fn wait_for_texts(&self, css: &str, want: &[&str]) -> Result<()> {
        let deadline = Instant::now() + PREVIEW_LIMIT;
        loop {
            // Read in one script: the preview may be replaced between the
            // finding of an element and the reading of its text.
            let texts = self
                .client
                .execute(
                    "return [...document.querySelectorAll(arguments[0])].map(e => e.innerText.trim());",
                    vec![json!(css)],
                )
                .await?;
            let texts = strings(&texts);
            if texts == want {
                return Ok(());
            }
            ensure!(
                Instant::now() < deadline,
                "{css} still shows {texts:?}, not {want:?}, after {PREVIEW_LIMIT:?}"
            );
            sleep(Duration::from_millis(100)).await;
        }
    }

    /// Saves a PNG of the page as `NN-name.png`.
    async fn screenshot(&mut self, name: &str) -> Result<()> {
        let png = self.client.screenshot().await.context("a screenshot")?;
        self.keep(name, &png)
    }

    /// Saves a PNG of the element `css` alone as `NN-name.png`, for a part
    /// of the page that lies below the fold.
    async fn screenshot_of(&mut self, css: &str, name: &str) -> Result<()> {
        let element = self.client.find(Locator::Css(css)).await?;
        let png = element.screenshot().await.context("a screenshot")?;
        self.keep(name, &png)
    }

    fn keep(&mut self, name: &str, png: &[u8]) -> Result<()> {
        self.shots += 1;
        let file = self.artifacts.join(format!("{:02}-{name}.png", self.shots));
        fs::write(&file, png).with_context(|| format!("writing {}", file.display()))
    }

    /// The page a failure happened on: a screenshot and its HTML.
    async fn keep_the_failed_page(&mut self) {
        let _ = self.screenshot("failed").await;
        if let Ok(html) = self.client.source().await {
            let _ = fs::write(self.artifacts.join("failed.html"), html);
        }
    }
}

/// The strings of a script's answer that is a list of them.
fn strings(answer: &Value) -> Vec<String> {
    answer
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t.as_str().map(str::to_owned))
        .collect()
}
