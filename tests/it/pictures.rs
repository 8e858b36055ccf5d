//! Pictures over the web: uploaded on the recipe form in each format,
//! refused when they are not pictures, served in every size with nothing
//! of the original file's metadata, kept by edits and forks, in the page's
//! structured data, and never named by a recipe before they are stored;
//! decoded one at a time, a picture that waits too long for its turn
//! turned away (503) with nothing changed, and a burst of pictures at the
//! cap keeping the server binary's memory within a bound; a picture given
//! by its address fetched and stored as an upload is, never drawn from
//! the other site.

use std::io::{Cursor, Write};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use actix_web::web::Data;
use forkful::domain::import_check::RecipeImportCheck;
use forkful::domain::pictures::{self, hash_of, Picture};
use forkful::domain::{Change, ContentDraft, DomainError, Recipes, Slug};
use forkful::import::Fetcher;
use forkful::store::TransferError;
use forkful::store::{self, Store};
use forkful::web::rate_limits::{PictureDecodes, PICTURES_PER_HOUR};
use forkful::web::Site;
use image::{DynamicImage, ImageFormat, RgbImage};

use crate::helpers::{count_from_env, get, site, stored, Page};
use crate::http_client::{self, Server};
use crate::import::serve_counted;
use crate::writing::{new_site, recipe_fields, sign_up, site_fetching, Browser};

/// A picture `w` by `h` in `format`: a gradient, so it compresses like a
/// photograph and not like a flat colour.
pub(crate) fn picture_file(w: u32, h: u32, format: ImageFormat) -> Vec<u8> {
    let image = RgbImage::from_fn(w, h, |x, y| {
        image::Rgb([
            (x * 255 / w) as u8,
            (y * 255 / h) as u8,
            ((x + y) % 256) as u8,
        ])
    });
    let mut out = Cursor::new(Vec::new());
    DynamicImage::ImageRgb8(image)
        .write_to(&mut out, format)
        .unwrap();
    out.into_inner()
}

/// `jpeg` with an EXIF segment that carries `secret` where a phone puts
/// its GPS position.
fn with_exif(jpeg: &[u8], secret: &str) -> Vec<u8> {
    let mut payload = b"Exif\0\0II*\0\x08\0\0\0\0\0".to_vec();
    payload.extend_from_slice(secret.as_bytes());
    let mut out = jpeg[..2].to_vec();
    out.extend_from_slice(&[0xFF, 0xE1]);
    out.extend_from_slice(&((payload.len() + 2) as u16).to_be_bytes());
    out.extend_from_slice(&payload);
    out.extend_from_slice(&jpeg[2..]);
    out
}

/// Every picture address a recipe page names: its `srcset` and `src`.
fn picture_urls(page: &Page) -> Vec<String> {
    let mut urls: Vec<String> = page
        .attrs("img.recipe-image", "srcset")
        .iter()
        .flat_map(|set| {
            set.split(", ")
                .map(|c| c.split(' ').next().unwrap().to_owned())
        })
        .collect();
    urls.extend(page.attrs("img.recipe-image", "src"));
    urls
}

/// Signs a cook up and publishes a recipe with `file` as its picture.
async fn publish_with(file: &[u8], kind: &str, alt: &str) -> (Browser, Page) {
    let (_, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let form = ann.get("/recipes/new").await;
    let fields = recipe_fields(&[("picture_alt", alt)]);
    let done = ann
        .submit_with_file(
            &form,
            "/recipes/new",
            &fields,
            Some(("dal.jpg", kind, file)),
        )
        .await;
    assert_eq!(done.status, 303, "{}", done.body);
    let page = ann.get("/recipes/weeknight-dal").await;
    (ann, page)
}

#[actix_web::test]
async fn a_picture_in_each_format_is_served_in_every_width() {
    for (format, kind) in [
        (ImageFormat::Jpeg, "image/jpeg"),
        (ImageFormat::Png, "image/png"),
        (ImageFormat::WebP, "image/webp"),
    ] {
        let file = picture_file(1200, 900, format);
        let (mut ann, page) = publish_with(&file, kind, "A bowl of dal").await;
        let hash = ann.site.recipes().picture_name(&file);
        assert_eq!(page.attrs("img.recipe-image", "alt"), ["A bowl of dal"]);
        // The size it is asked at first, with its proportions: no shift.
        assert_eq!(page.attrs("img.recipe-image", "width"), ["1024"]);
        assert_eq!(page.attrs("img.recipe-image", "height"), ["768"]);
        let widths: Vec<String> = page.attrs("img.recipe-image", "srcset")[0]
            .split(", ")
            .map(|c| c.rsplit(' ').next().unwrap().to_owned())
            .collect();
        assert_eq!(widths, ["320w", "640w", "1024w"], "{format:?}");
        for url in picture_urls(&page) {
            assert!(url.starts_with(&format!("/images/{hash}-")), "{url}");
            let served = ann.get(&url).await;
            assert_eq!(served.status, 200, "{url}");
            assert_eq!(served.header("content-type"), Some("image/jpeg"));
            assert_eq!(
                served.header("cache-control"),
                Some("public, max-age=31536000, immutable")
            );
        }
        // The crops for search engines, absolute, in the structured data,
        // and one for links shared elsewhere.
        let ld = page.json_ld();
        let images: Vec<&str> = ld["image"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(
            images,
            ["1x1", "4x3", "16x9"].map(|c| format!("http://forkful.test/images/{hash}-{c}.jpg"))
        );
        for (url, ratio) in images.iter().zip([1.0, 4.0 / 3.0, 16.0 / 9.0]) {
            let served = ann
                .get(url.strip_prefix("http://forkful.test").unwrap())
                .await;
            assert_eq!(served.status, 200);
            let crop = image::load_from_memory(&served.bytes()).unwrap();
            let shape = f64::from(crop.width()) / f64::from(crop.height());
            assert!((shape - ratio).abs() < 0.01, "{url}: {shape}");
        }
        assert_eq!(
            page.attrs("meta[property='og:image']", "content"),
            [images[2].to_owned()]
        );
        // The JSON API says the same.
        let json: serde_json::Value =
            serde_json::from_str(&ann.get("/recipes/weeknight-dal.json").await.body).unwrap();
        assert_eq!(json["picture"]["alt"], "A bowl of dal");
        assert_eq!(json["picture"]["widths"].as_array().unwrap().len(), 3);
        assert_eq!(json["picture"]["crops"][2], images[2]);
    }
}

#[actix_web::test]
async fn a_picture_over_the_size_limit_gives_the_form_back_with_what_was_typed() {
    let (recipes, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let before = stored(recipes.store());
    let form = ann.get("/recipes/new").await;
    let huge = vec![0xFFu8; pictures::MAX_UPLOAD_BYTES + 1];
    let refused = ann
        .submit_with_file(
            &form,
            "/recipes/new",
            &recipe_fields(&[("picture_alt", "Dal"), ("title", "Big-photo dal")]),
            Some(("huge.jpg", "image/jpeg", &huge)),
        )
        .await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    let error = refused.texts("#picture_file-error");
    assert_eq!(error.len(), 1, "{}", refused.body);
    assert!(
        error[0].contains("the most is 10485760 (10 MiB)"),
        "{error:?}"
    );
    // The fields sent after the file were read past it and kept.
    assert_eq!(refused.attrs("#title", "value"), ["Big-photo dal"]);
    assert_eq!(refused.attrs("#picture_alt", "value"), ["Dal"]);
    assert!(
        refused.body.contains("1 cup red lentils"),
        "{}",
        refused.body
    );
    assert!(stored(recipes.store()) == before);

    // Nobody logged in: sent to log in before the body is read.
    let mut nobody = Browser::new(&site);
    let refused = nobody
        .submit_with_file(
            &form,
            "/recipes/new",
            &recipe_fields(&[("picture_alt", "Dal")]),
            Some(("huge.jpg", "image/jpeg", &huge)),
        )
        .await;
    assert_eq!(refused.status, 303);
    assert_eq!(refused.header("location"), Some("/login?next=/recipes/new"));

    // Past what is worth reading through, a body that says so is refused
    // unread, with a page that says why (one that streams past it:
    // `hostile::a_picture_streamed_far_past_the_limit_is_refused_and_not_read_on`).
    let enormous = vec![0xFFu8; 33 * 1024 * 1024];
    let refused = ann
        .submit_with_file(
            &form,
            "/recipes/new",
            &recipe_fields(&[("picture_alt", "Dal")]),
            Some(("enormous.jpg", "image/jpeg", &enormous)),
        )
        .await;
    assert_eq!(refused.status, 413);
    assert!(
        refused.body.contains(
            "The form is larger than this page reads (a picture may be 10 MiB): nothing was changed."
        ),
        "{}",
        refused.body
    );
    assert!(stored(recipes.store()) == before);
}

#[actix_web::test]
async fn no_metadata_of_the_upload_is_in_any_variant_served() {
    let secret = "GPSLatitude 48.85837 N GPSLongitude 2.29448 E";
    let file = with_exif(&picture_file(700, 500, ImageFormat::Jpeg), secret);
    let (mut ann, page) = publish_with(&file, "image/jpeg", "Dal").await;
    let mut urls = picture_urls(&page);
    let name = ann.site.recipes().picture_name(&file);
    urls.extend(["1x1", "4x3", "16x9"].map(|c| format!("/images/{}-{c}.jpg", name)));
    assert!(urls.len() >= 5);
    for url in urls {
        let bytes = ann.get(&url).await.bytes();
        assert!(image::load_from_memory(&bytes).is_ok(), "{url}");
        assert!(!bytes.windows(4).any(|w| w == b"Exif"), "{url}");
        assert!(!bytes.windows(3).any(|w| w == b"GPS"), "{url}");
    }
}

#[actix_web::test]
async fn a_file_that_is_not_a_picture_is_refused_whatever_its_name() {
    let (recipes, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let before = stored(recipes.store());
    let form = ann.get("/recipes/new").await;
    let fields = recipe_fields(&[("picture_alt", "Dal")]);
    for (name, kind, bytes) in [
        ("dal.jpg", "image/jpeg", b"<?php echo 'hi'; ?>".to_vec()),
        ("dal.png", "image/png", b"GIF89a\x01\x00\x01\x00".to_vec()),
        (
            "dal.svg",
            "image/svg+xml",
            b"<svg xmlns='http://www.w3.org/2000/svg'/>".to_vec(),
        ),
    ] {
        let refused = ann
            .submit_with_file(&form, "/recipes/new", &fields, Some((name, kind, &bytes)))
            .await;
        assert_eq!(refused.status, 422, "{name}");
        assert_eq!(
            refused.texts("#picture_file-error"),
            ["The file is not a JPEG, PNG or WebP picture."],
            "{name}"
        );
        // What was typed is kept.
        assert_eq!(refused.attrs("#title", "value"), ["Weeknight Dal"]);
    }
    // Nothing was written: no recipe, no picture, no key anywhere.
    assert!(stored(recipes.store()) == before);
}

#[actix_web::test]
async fn a_picture_needs_words_and_the_form_keeps_it_while_they_are_written() {
    let (recipes, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let form = ann.get("/recipes/new").await;
    let file = picture_file(400, 300, ImageFormat::Png);
    let without_alt = ann
        .submit_with_file(
            &form,
            "/recipes/new",
            &recipe_fields(&[]),
            Some(("dal.png", "image/png", &file)),
        )
        .await;
    assert_eq!(without_alt.status, 422);
    assert_eq!(without_alt.texts("#picture_alt-error").len(), 1);
    // The picture was stored; the form names it, so it is not sent again.
    let hash = recipes.picture_name(&file);
    assert_eq!(
        without_alt.attrs("input[name=picture]", "value"),
        std::slice::from_ref(&hash)
    );
    // Until a version names it, the picture is its sender's alone: the
    // form shows it back to her, privately; to anyone else it is not there.
    let shown = format!("/images/{hash}-1x1.jpg");
    let to_ann = ann.get(&shown).await;
    assert_eq!(to_ann.status, 200);
    assert_eq!(
        to_ann.headers.get("cache-control").unwrap(),
        "private, no-cache"
    );
    let mut visitor = Browser::new(&site);
    let mut bob = Browser::new(&site);
    sign_up(&mut bob, "bob").await;
    // Each compared with what they get for no picture (Bob's pages have
    // his name in the header).
    for someone in [&mut visitor, &mut bob] {
        let not_there = someone
            .get("/images/00000000000000000000000000000000-1x1.jpg")
            .await;
        let unsaved = someone.get(&shown).await;
        assert_eq!(unsaved.status, 404);
        assert_eq!(
            unsaved
                .body
                .replace(&hash, "00000000000000000000000000000000"),
            not_there.body,
            "an unsaved picture looks like no picture at all"
        );
    }
    let done = ann
        .submit_with_file(
            &without_alt,
            "/recipes/new",
            &recipe_fields(&[("picture_alt", "Dal with rice")]),
            None,
        )
        .await;
    assert_eq!(done.status, 303, "{}", done.body);
    let recipe = recipes
        .snapshot()
        .recipe(&Slug::parse("weeknight-dal").unwrap())
        .unwrap();
    let picture = recipe.content.picture().unwrap();
    assert_eq!(
        (picture.hash.as_str(), picture.width, picture.height),
        (hash.as_str(), 400, 300)
    );
    assert_eq!(picture.alt, "Dal with rice");
    // Named by a version: anyone's, for a year.
    let public = visitor.get(&shown).await;
    assert_eq!(public.status, 200);
    assert_eq!(
        public.headers.get("cache-control").unwrap(),
        "public, max-age=31536000, immutable"
    );
}

/// The recipe form on `form` sent with a picture of its own for `n`, and
/// no words for it: refused, but the picture is stored. Its hash.
async fn send_picture(browser: &mut Browser, form: &Page, n: u32) -> (Page, String) {
    let file = picture_file(16 + n, 16, ImageFormat::Png);
    let page = browser
        .submit_with_file(
            form,
            "/recipes/new",
            &recipe_fields(&[]),
            Some(("dal.png", "image/png", &file)),
        )
        .await;
    (page, browser.site.recipes().picture_name(&file))
}

#[actix_web::test]
async fn a_cook_sending_too_many_pictures_an_hour_is_told_to_wait_and_others_are_not() {
    let (recipes, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let form = ann.get("/recipes/new").await;
    let limit = forkful::web::rate_limits::PICTURES_PER_HOUR;
    // Forms never saved (no words for the picture): each picture is
    // stored all the same, and counts.
    for n in 0..limit {
        let (page, hash) = send_picture(&mut ann, &form, n).await;
        assert_eq!(page.status, 422, "picture {n}");
        assert!(
            recipes.picture(&hash).unwrap().is_some(),
            "picture {n} is stored"
        );
    }
    let (refused, hash) = send_picture(&mut ann, &form, limit).await;
    assert_eq!(refused.status, 422);
    assert!(
        refused
            .body
            .contains("too many pictures for now (30 at once, then one every 2 minutes)"),
        "{}",
        refused.body
    );
    assert_eq!(
        refused.attrs("#title", "value"),
        ["Weeknight Dal"],
        "the form is kept"
    );
    assert!(recipes.picture(&hash).unwrap().is_none(), "nor stored");

    let mut ben = Browser::new(&site);
    sign_up(&mut ben, "ben").await;
    let form = ben.get("/recipes/new").await;
    let (page, hash) = send_picture(&mut ben, &form, limit + 1).await;
    assert_eq!(page.status, 422);
    assert!(
        recipes.picture(&hash).unwrap().is_some(),
        "another cook's is stored"
    );
}

/// Sends picture `n` with `form` to `action`, with no words for it: the
/// form comes back, the picture stored all the same.
async fn send_picture_to(browser: &mut Browser, form: &Page, action: &str, n: u32) -> Page {
    let file = picture_file(16 + n, 16, ImageFormat::Png);
    browser
        .submit_with_file(
            form,
            action,
            &recipe_fields(&[("note", "a picture")]),
            Some(("dal.png", "image/png", &file)),
        )
        .await
}

/// The edit and fork forms count their pictures against the same limit as
/// the new-recipe form, and refuse past it with what was typed kept.
#[actix_web::test]
async fn pictures_sent_with_edits_and_forks_count_against_the_cooks_limit() {
    let file = picture_file(640, 480, ImageFormat::Jpeg);
    let (mut ann, _) = publish_with(&file, "image/jpeg", "Dal").await;
    let limit = forkful::web::rate_limits::PICTURES_PER_HOUR;
    let (edit_at, fork_at) = ("/recipes/weeknight-dal/edit", "/recipes/weeknight-dal/fork");
    let edit = ann.get(edit_at).await;
    let fork = ann.get(fork_at).await;
    // The published recipe's picture was the first; the edit form sends
    // all but one of the rest, the fork form the last.
    for n in 1..limit - 1 {
        let page = send_picture_to(&mut ann, &edit, edit_at, n).await;
        assert_eq!(page.status, 422, "picture {n}");
        assert!(!page.body.contains("too many pictures"), "picture {n}");
    }
    let page = send_picture_to(&mut ann, &fork, fork_at, limit - 1).await;
    assert_eq!(page.status, 422);
    assert!(!page.body.contains("too many pictures"), "{}", page.body);
    for (action, form) in [(edit_at, &edit), (fork_at, &fork)] {
        let refused = send_picture_to(&mut ann, form, action, limit).await;
        assert_eq!(refused.status, 422, "{action}");
        assert!(
            refused.body.contains("too many pictures for now"),
            "{action}: {}",
            refused.body
        );
        assert_eq!(
            refused.attrs("#title", "value"),
            ["Weeknight Dal"],
            "{action}"
        );
    }
}

#[actix_web::test]
async fn an_edit_keeps_the_picture_replaces_it_or_removes_it_and_a_fork_starts_with_it() {
    let file = picture_file(640, 480, ImageFormat::Jpeg);
    let (mut ann, _) = publish_with(&file, "image/jpeg", "Dal").await;
    let site = ann.site.clone();
    let recipes = site.recipes();
    let slug = Slug::parse("weeknight-dal").unwrap();
    let picture_now = || {
        recipes
            .snapshot()
            .recipe(&slug)
            .unwrap()
            .content
            .picture()
            .cloned()
    };
    // An edit that does not touch the picture keeps it.
    let form = ann.get("/recipes/weeknight-dal/edit").await;
    let kept = ann
        .submit_with_file(
            &form,
            "/recipes/weeknight-dal/edit",
            &recipe_fields(&[
                ("title", "Dal"),
                ("note", "shorter title"),
                ("picture_alt", "Dal"),
            ]),
            None,
        )
        .await;
    assert_eq!(kept.status, 303, "{}", kept.body);
    assert_eq!(picture_now().unwrap().hash, recipes.picture_name(&file));
    // A fork starts with its parent's picture.
    let (fork, _) = recipes
        .fork(&slug, None, None, |c| c, &Change::by("ben", "mine"))
        .unwrap();
    let forked = recipes
        .snapshot()
        .recipe(&fork)
        .unwrap()
        .content
        .picture()
        .cloned();
    assert_eq!(forked, picture_now());
    // A new file replaces it; ticking the box removes it.
    let other = picture_file(500, 500, ImageFormat::Png);
    let form = ann.get("/recipes/weeknight-dal/edit").await;
    let replaced = ann
        .submit_with_file(
            &form,
            "/recipes/weeknight-dal/edit",
            &recipe_fields(&[
                ("title", "Dal"),
                ("note", "a better picture"),
                ("picture_alt", "Dal, closer"),
            ]),
            Some(("new.png", "image/png", &other)),
        )
        .await;
    assert_eq!(replaced.status, 303, "{}", replaced.body);
    assert_eq!(picture_now().unwrap().hash, recipes.picture_name(&other));
    let form = ann.get("/recipes/weeknight-dal/edit").await;
    let removed = ann
        .submit_with_file(
            &form,
            "/recipes/weeknight-dal/edit",
            &recipe_fields(&[
                ("title", "Dal"),
                ("note", "no picture"),
                ("remove_picture", "on"),
            ]),
            None,
        )
        .await;
    assert_eq!(removed.status, 303, "{}", removed.body);
    assert_eq!(picture_now(), None);
    // The history says what each did.
    let history = get(&site, "/recipes/weeknight-dal/history").await;
    let lines = history.texts(".versions li");
    assert!(
        lines.iter().filter(|l| l.contains("picture")).count() >= 2,
        "{lines:?}"
    );
}

#[actix_web::test]
async fn a_recipe_cannot_name_a_picture_that_is_not_stored() {
    let (recipes, _) = new_site();
    let before = stored(recipes.store());
    let content = ContentDraft {
        title: "Dal".into(),
        picture: Some(Picture {
            hash: hash_of(b"never uploaded"),
            width: 100,
            height: 100,
            alt: "Dal".into(),
        }),
        ..ContentDraft::default()
    };
    let refused = recipes.create(
        &Slug::parse("dal").unwrap(),
        content,
        &Change::by("ann", "new"),
    );
    assert!(
        matches!(refused, Err(DomainError::NoSuchPicture(_))),
        "{refused:?}"
    );
    assert!(stored(recipes.store()) == before);
}

#[actix_web::test]
async fn picture_addresses_take_only_stored_names() {
    let file = picture_file(400, 300, ImageFormat::Jpeg);
    let (mut ann, _) = publish_with(&file, "image/jpeg", "Dal").await;
    let hash = ann.site.recipes().picture_name(&file);
    assert_eq!(
        ann.get(&format!("/images/{hash}-320.jpg")).await.status,
        200
    );
    for uri in [
        format!("/images/{hash}-640.jpg"), // wider than the picture
        format!("/images/{hash}-321.jpg"),
        format!("/images/{}-320.jpg", hash.to_uppercase()),
        format!("/images/{}-320.jpg", hash_of(b"other")),
        // Whoever has the file cannot work out its name here: the name is
        // keyed by the store's secret, not a plain hash of the upload.
        format!("/images/{}-320.jpg", hash_of(&file)),
        format!("/images/{hash}-320.png"),
        format!("/images/{hash}"),
        "/images/..%2F..%2Fetc%2Fpasswd".to_owned(),
        "/images/%2e%2e%2fCargo.toml".to_owned(),
    ] {
        assert_eq!(ann.get(&uri).await.status, 404, "{uri}");
    }
    // The name is the ETag: a browser that has it is answered 304.
    let again = ann
        .send_with(
            &format!("/images/{hash}-320.jpg"),
            ("If-None-Match", format!("\"{hash}-320\"")),
        )
        .await;
    assert_eq!(again.status, 304);
}

/// A store with one recipe and its picture, and its export with pictures.
fn exported_with_a_picture() -> (Recipes, Vec<u8>, Vec<u8>) {
    let recipes = Recipes::temporary().unwrap();
    let file = picture_file(700, 500, ImageFormat::Png);
    let mut picture = recipes.add_picture(&file, "ann").unwrap();
    picture.alt = "Dal".into();
    let content = ContentDraft {
        title: "Dal".into(),
        picture: Some(picture),
        ..ContentDraft::default()
    };
    recipes
        .create(
            &Slug::parse("dal").unwrap(),
            content,
            &Change::by("ann", "new"),
        )
        .unwrap();
    let mut out = Vec::new();
    let keyspace = recipes.store().keyspace(pictures::KEYSPACE).unwrap();
    let summary = store::export_with(
        &recipes.store().db(),
        &[(pictures::KEYSPACE, &keyspace)],
        &mut out,
    )
    .unwrap();
    // The size and the five variants of a 700-pixel picture.
    assert_eq!(summary.records, 6);
    (recipes, out, file)
}

fn import_into_new(file: &[u8]) -> (Store, Result<store::TransferSummary, TransferError>) {
    let store = Store::temporary().unwrap();
    let outcome = store::import_with_keyspaces(
        &store,
        || Ok(Cursor::new(file.to_vec())),
        &mut RecipeImportCheck::default(),
        &mut |_| {},
        &[pictures::KEYSPACE],
    );
    (store, outcome)
}

#[actix_web::test]
async fn export_and_import_carry_pictures_whole() {
    let (original, exported, file) = exported_with_a_picture();
    let (store, outcome) = import_into_new(&exported);
    outcome.unwrap();
    let recipes = Recipes::open(store).unwrap();
    let slug = Slug::parse("dal").unwrap();
    let picture = recipes
        .snapshot()
        .recipe(&slug)
        .unwrap()
        .content
        .picture()
        .cloned()
        .unwrap();
    assert_eq!(picture.hash, original.picture_name(&file));
    for variant in pictures::variant_names(picture.width) {
        assert_eq!(
            recipes.picture_variant(&picture.hash, &variant).unwrap(),
            original.picture_variant(&picture.hash, &variant).unwrap(),
            "{variant}"
        );
    }
    // Served from the imported store.
    let page = get(&site(&recipes), "/recipes/dal").await;
    let mut ann = Browser::new(&site(&recipes));
    for url in picture_urls(&page) {
        assert_eq!(ann.get(&url).await.status, 200, "{url}");
    }
    // And exported again, the same file.
    let mut again = Vec::new();
    let keyspace = recipes.store().keyspace(pictures::KEYSPACE).unwrap();
    store::export_with(
        &recipes.store().db(),
        &[(pictures::KEYSPACE, &keyspace)],
        &mut again,
    )
    .unwrap();
    assert!(again == exported);
}

#[test]
fn an_import_whose_pictures_are_missing_or_foreign_writes_nothing() {
    let (_, exported, _) = exported_with_a_picture();
    let text = String::from_utf8(exported).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let without = |keep: &dyn Fn(&str) -> bool| -> Vec<u8> {
        let kept: Vec<&str> = lines.iter().copied().filter(|l| keep(l)).collect();
        (kept.join("\n") + "\n").into_bytes()
    };
    let sessions = text.replacen("#keyspace pictures ", "#keyspace sessions ", 1);
    let cases: Vec<(Vec<u8>, &str)> = vec![
        // No records at all: the recipe names a picture the file lacks.
        (
            without(&|l| !l.starts_with("#keyspace")),
            "is not among the file's pictures",
        ),
        // One variant gone.
        (
            without(&|l| !record_key(l).is_some_and(|k| k.ends_with("-4x3"))),
            "missing its 4x3 variant",
        ),
        // Records of a keyspace the import does not take.
        (
            sessions.into_bytes(),
            "does not take records of keyspace \"sessions\"",
        ),
        // A record line with nothing after its mark.
        (
            text.replacen("#keyspace pictures ", "#keyspace \n#keyspace pictures ", 1)
                .into_bytes(),
            "expected #keyspace name key value",
        ),
    ];
    for (file, why) in cases {
        let (store, outcome) = import_into_new(&file);
        let error = outcome.unwrap_err().to_string();
        assert!(error.contains(why), "{error}");
        assert!(store.is_empty());
        let keyspace = store.keyspace(pictures::KEYSPACE).unwrap();
        assert_eq!(keyspace.scan_prefix(b"").count(), 0);
    }
}

/// The key of a keyspace record's line, decoded.
fn record_key(line: &str) -> Option<String> {
    use base64::Engine;
    let key = line.strip_prefix("#keyspace ")?.split(' ').nth(1)?;
    let bytes = base64::engine::general_purpose::STANDARD.decode(key).ok()?;
    String::from_utf8(bytes).ok()
}

#[actix_web::test]
async fn every_demo_recipe_has_a_drawing_of_its_own_and_the_seed_stays_light() {
    let recipes = crate::helpers::demo();
    let view = recipes.snapshot();
    let site = site(recipes);
    let mut hashes = std::collections::HashSet::new();
    let mut bytes = 0;
    let entries = crate::helpers::whole_catalog(&view).entries;
    for entry in &entries {
        let slug = Slug::parse(&entry.slug).unwrap();
        let picture = view
            .recipe(&slug)
            .unwrap()
            .content
            .picture()
            .cloned()
            .unwrap();
        assert!(picture.alt.starts_with("A drawing of "), "{}", picture.alt);
        assert!(
            hashes.insert(picture.hash.clone()),
            "{slug} shares a drawing"
        );
        for variant in pictures::variant_names(picture.width) {
            bytes += recipes
                .picture_variant(&picture.hash, &variant)
                .unwrap()
                .unwrap()
                .len();
        }
        // What search engines ask of a recipe: an image, in three shapes.
        let page = get(&site, &format!("/recipes/{slug}")).await;
        assert_eq!(
            page.json_ld()["image"].as_array().unwrap().len(),
            3,
            "{slug}"
        );
    }
    assert_eq!(entries.len(), 67);
    assert!(bytes < 4 << 20, "the demo's pictures take {bytes} bytes");
}

const PICTURE_CHILD_DIR: &str = "FORKFUL_PICTURE_CRASH_DIR";

/// How many rounds the picture crash test runs (6 unless set).
const PICTURE_CRASH_ROUNDS: &str = "FORKFUL_PICTURE_CRASH_ROUNDS";

/// The crash test's child: stores a picture, then a recipe naming it,
/// over and over, saying `PIC` after each picture and `ACK` after each
/// recipe, until it is killed. Ignored: only the parent runs it.
#[test]
#[ignore = "run by pictures::a_crash_between_a_picture_and_its_recipe_leaves_no_dangling_reference"]
fn picture_child_writer() {
    let Ok(dir) = std::env::var(PICTURE_CHILD_DIR) else {
        return;
    };
    let recipes = Recipes::open(Store::open(&dir).unwrap()).unwrap();
    let run = std::process::id();
    say("READY");
    for i in 0u32.. {
        // Each picture different: its colours follow i.
        let image = RgbImage::from_fn(64, 48, |x, y| {
            image::Rgb([
                (i % 256) as u8,
                (x * 4) as u8,
                ((y + i / 256 + run) % 256) as u8,
            ])
        });
        let mut file = Cursor::new(Vec::new());
        DynamicImage::ImageRgb8(image)
            .write_to(&mut file, ImageFormat::Png)
            .unwrap();
        let mut picture = recipes.add_picture(&file.into_inner(), "crash").unwrap();
        say(&format!("PIC {}", picture.hash));
        picture.alt = format!("Picture {i}");
        let slug = format!("crash-picture-{run}-{i}");
        let content = ContentDraft {
            title: format!("Recipe {i}"),
            picture: Some(picture),
            ..ContentDraft::default()
        };
        recipes
            .create(
                &Slug::parse(&slug).unwrap(),
                content,
                &Change::by("ann", "new"),
            )
            .unwrap();
        say(&format!("ACK {slug}"));
    }
}

fn say(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").and_then(|()| out.flush()).unwrap();
}

/// Starts the child on `dir`, kills it `after` its start of writing, and
/// returns the slugs it acknowledged.
fn run_picture_child(dir: &std::path::Path, after: std::time::Duration) -> Vec<String> {
    use std::io::BufRead;
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "pictures::picture_child_writer",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
            "-q",
        ])
        .env(PICTURE_CHILD_DIR, dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (ready_tx, ready) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut acks = Vec::new();
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if line == "READY" {
                let _ = ready_tx.send(());
            } else if let Some(slug) = line.strip_prefix("ACK ") {
                acks.push(slug.to_owned());
            }
        }
        acks
    });
    ready
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the child started writing");
    std::thread::sleep(after);
    assert!(
        child.try_wait().unwrap().is_none(),
        "the child stopped on its own"
    );
    child.kill().unwrap(); // SIGKILL: no destructor, no flush
    child.wait().unwrap();
    reader.join().unwrap()
}

#[test]
fn a_crash_between_a_picture_and_its_recipe_leaves_no_dangling_reference() {
    let dir = tempfile::tempdir().unwrap();
    let rounds = count_from_env(PICTURE_CRASH_ROUNDS, 6, "rounds");
    let mut state = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut acknowledged = Vec::new();
    for round in 0..rounds {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let after = std::time::Duration::from_millis(5 + state % 150);
        acknowledged.extend(run_picture_child(dir.path(), after));
        let recipes = Recipes::open(Store::open(dir.path()).unwrap()).unwrap();
        let view = recipes.snapshot();
        // Every recipe acknowledged is there.
        for slug in &acknowledged {
            view.recipe(&Slug::parse(slug).unwrap())
                .unwrap_or_else(|e| panic!("round {round}: acknowledged {slug} is gone: {e}"));
        }
        // Every recipe on disk, acknowledged or not, names a picture that
        // is there whole.
        let mut recipes_seen = 0;
        for entry in crate::helpers::whole_catalog(&view).entries {
            let slug = Slug::parse(&entry.slug).unwrap();
            let picture = view
                .recipe(&slug)
                .unwrap()
                .content
                .picture()
                .cloned()
                .unwrap();
            for variant in pictures::variant_names(picture.width) {
                assert!(
                    recipes
                        .picture_variant(&picture.hash, &variant)
                        .unwrap()
                        .is_some(),
                    "round {round}: {slug} names picture {} without its {variant}",
                    picture.hash
                );
            }
            recipes_seen += 1;
        }
        assert!(recipes_seen >= acknowledged.len());
        // And every picture whose size is stored has all its variants:
        // its size is written last.
        let keyspace = recipes.store().keyspace(pictures::KEYSPACE).unwrap();
        for record in keyspace.scan_prefix(b"") {
            let (key, value) = record.unwrap();
            let key = String::from_utf8(key.to_vec()).unwrap();
            if pictures::is_hash(&key) {
                let width: u32 = String::from_utf8(value.to_vec())
                    .unwrap()
                    .split(' ')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                for variant in pictures::variant_names(width) {
                    assert!(
                        keyspace
                            .get(format!("{key}-{variant}").as_bytes())
                            .unwrap()
                            .is_some(),
                        "round {round}: picture {key} lost its {variant}"
                    );
                }
            }
        }
    }
    assert!(!acknowledged.is_empty(), "no child acknowledged anything");
    eprintln!(
        "{rounds} rounds killed; {} recipes with pictures acknowledged and found whole",
        acknowledged.len()
    );
}

#[actix_web::test]
async fn a_form_with_two_pictures_is_refused() {
    let (recipes, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let before = stored(recipes.store());
    let form = ann.get("/recipes/new").await;
    let file = picture_file(100, 100, ImageFormat::Png);
    // The field named twice: the helper sends `picture_file` once more.
    let twice = ann
        .submit_with_file(
            &form,
            "/recipes/new",
            &recipe_fields(&[("picture_alt", "Dal"), ("picture_file", "x")]),
            Some(("dal.png", "image/png", &file)),
        )
        .await;
    assert_eq!(twice.status, 400, "{}", twice.body);
    assert!(twice.body.contains("more than one picture"));
    assert!(stored(recipes.store()) == before);
}

#[actix_web::test]
async fn a_form_of_many_empty_parts_is_refused_like_a_long_one() {
    let (recipes, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let before = stored(recipes.store());
    let form = ann.get("/recipes/new").await;
    let names: Vec<String> = (0..10_000).map(|i| format!("x{i}")).collect();
    let mut fields = recipe_fields(&[]);
    fields.extend(names.iter().map(|n| (n.as_str(), "")));
    let refused = ann
        .submit_with_file(&form, "/recipes/new", &fields, None)
        .await;
    assert_eq!(refused.status, 413, "{}", refused.body);
    assert!(stored(recipes.store()) == before);
}

/// A site whose one decode place is waited for only briefly.
fn site_with_short_wait(recipes: &Recipes, wait: Duration) -> Data<Site> {
    Data::new(
        Site::new(recipes.clone(), "http://forkful.test")
            .with_picture_decodes(PictureDecodes::new(1, wait)),
    )
}

#[actix_web::test]
async fn a_picture_that_finds_no_place_to_be_decoded_is_a_503_that_changes_and_counts_nothing() {
    let recipes = Recipes::temporary().unwrap();
    let wait = Duration::from_millis(50);
    let site = site_with_short_wait(&recipes, wait);
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let before = stored(recipes.store());
    let form = ann.get("/recipes/new").await;
    let file = picture_file(400, 300, ImageFormat::Png);
    let fields = recipe_fields(&[("picture_alt", "Dal"), ("title", "Busy-day dal")]);
    let upload = Some(("dal.png", "image/png", file.as_slice()));
    // The one place taken, as by a decode that outlasts the wait.
    let held = site.picture_decodes().place().await.unwrap();
    // More than a cook may send in an hour: none of them is counted.
    for n in 0..=PICTURES_PER_HOUR {
        let started = Instant::now();
        let busy = ann
            .submit_with_file(&form, "/recipes/new", &fields, upload)
            .await;
        assert!(started.elapsed() >= wait, "it waited for a place");
        assert_eq!(busy.status, 503, "{n}: {}", busy.body);
        assert_eq!(busy.header("retry-after"), Some("10"));
        assert_eq!(busy.header("cache-control"), Some("private, no-store"));
        let error = busy.texts("#picture_file-error");
        assert_eq!(error.len(), 1, "{}", busy.body);
        assert!(
            error[0].contains("busy reading other pictures"),
            "{error:?}"
        );
        // What was typed is kept.
        assert_eq!(busy.attrs("#title", "value"), ["Busy-day dal"]);
        assert_eq!(busy.attrs("#picture_alt", "value"), ["Dal"]);
    }
    // Nothing was written: no recipe, no picture, no key anywhere.
    assert!(stored(recipes.store()) == before);
    assert!(recipes
        .picture(&recipes.picture_name(&file))
        .unwrap()
        .is_none());

    // With the place free, the same form goes through: the turned-away
    // pictures spent nothing of the cook's hour.
    drop(held);
    let done = ann
        .submit_with_file(&form, "/recipes/new", &fields, upload)
        .await;
    assert_eq!(done.status, 303, "{}", done.body);

    // An edit turned away the same way keeps its form, and the recipe.
    let edit = ann.get("/recipes/busy-day-dal/edit").await;
    let held = site.picture_decodes().place().await.unwrap();
    let before = stored(recipes.store());
    let other = picture_file(300, 400, ImageFormat::Jpeg);
    let busy = ann
        .submit_with_file(
            &edit,
            "/recipes/busy-day-dal/edit",
            &recipe_fields(&[("picture_alt", "Dal"), ("note", "a closer picture")]),
            Some(("dal.jpg", "image/jpeg", &other)),
        )
        .await;
    assert_eq!(busy.status, 503, "{}", busy.body);
    assert_eq!(busy.header("retry-after"), Some("10"));
    assert_eq!(busy.attrs("#note", "value"), ["a closer picture"]);
    assert!(stored(recipes.store()) == before);
    drop(held);
}

/// `count` PNGs `w` by `h` in 8-bit RGBA, every pixel the same: each
/// decodes to all its pixels (48 MiB at the cap) but is a few tens of KiB,
/// and each carries its number in a text chunk, so each is an upload of
/// its own (another hash), never taken for one stored already.
fn flat_pngs(w: u32, h: u32, count: usize) -> Vec<Vec<u8>> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        let mut crc = flate2::Crc::new();
        crc.update(kind);
        crc.update(data);
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        out.extend_from_slice(&crc.sum().to_be_bytes());
    }
    // Each row: no filter, then its pixels.
    let mut row = vec![0u8];
    row.extend([200u8, 120, 60, 255].repeat(w as usize));
    let mut pixels = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    for _ in 0..h {
        pixels.write_all(&row).unwrap();
    }
    let pixels = pixels.finish().unwrap();
    let mut header = w.to_be_bytes().to_vec();
    header.extend_from_slice(&h.to_be_bytes());
    header.extend_from_slice(&[8, 6, 0, 0, 0]);
    (0..count)
        .map(|n| {
            let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
            chunk(&mut out, b"IHDR", &header);
            chunk(&mut out, b"tEXt", format!("Comment\0upload {n}").as_bytes());
            chunk(&mut out, b"IDAT", &pixels);
            chunk(&mut out, b"IEND", &[]);
            out
        })
        .collect()
}

/// What one decode at the cap holds live at most (`pictures::MAX_SIDE`
/// counts it; docs/SECURITY.md), in MiB.
const ONE_DECODE_MIB: u64 = 156;

/// Room for the allocator past one decode, in MiB: what it keeps of a
/// decode that ended when the next one runs on another of the blocking
/// pool's threads, the variants written. The server's peak through
/// `a_burst_of_pictures_at_the_cap_keeps_the_servers_memory_within_its_bound`
/// stays within what it held once started, one decode and this: under two
/// decodes live at once (312 MiB past the start). The bound was 256 MiB
/// whatever the start; the start grew (53-56 MiB on 2026-12-05, 39-40 when
/// it was set), and runs alone on an idle machine, two pictures decoded
/// one after the other, then peaked at 243-291 MiB (docs/SECURITY.md).
const ALLOCATOR_ROOM_MIB: u64 = 120;

/// Pictures at the cap sent at once, as many as one cook may send in an
/// hour (the limit per cook bounds what one account does, not what runs
/// at once: 30 cooks could send one each), to the server binary. Its peak
/// resident memory (`VmHWM`) stays within one decode of where it started
/// (`ONE_DECODE_MIB`, `ALLOCATOR_ROOM_MIB`), because the
/// pictures are decoded one at a time; the rest are turned away after the
/// wait with 503 and Retry-After. Before the decodes were bounded, every
/// picture of the burst was decoded at once, and the server passed the
/// bound within a second or two; it is watched all along and stopped
/// there, so a regression fails quickly and does not take the machine's
/// memory.
#[test]
fn a_burst_of_pictures_at_the_cap_keeps_the_servers_memory_within_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), &[]).unwrap();
    let mut ann = http_client::Browser::new(server.origin());
    ann.sign_up("ann").unwrap();
    let form = Arc::new(ann.get("/recipes/new").unwrap());
    // A portrait at the cap: the largest step of a decode is its 1600
    // variant's resize, which grows with the picture's height.
    let (w, h) = (3072, pictures::MAX_SIDE);
    assert_eq!(u64::from(w) * u64::from(h), pictures::MAX_PIXELS);
    let burst = PICTURES_PER_HOUR as usize;
    let files = flat_pngs(w, h, burst);
    let started = server.peak_rss_kib().unwrap();
    let bound_kib = started + (ONE_DECODE_MIB + ALLOCATOR_ROOM_MIB) * 1024;
    let at_once = Arc::new(Barrier::new(burst));
    let senders: Vec<_> = files
        .into_iter()
        .map(|file| {
            let (mut tab, form, at_once) = (ann.clone(), form.clone(), at_once.clone());
            thread::spawn(move || {
                at_once.wait();
                tab.submit_with_file(
                    &form,
                    "/recipes/new",
                    &recipe_fields(&[]),
                    ("flat.png", "image/png", &file),
                )
            })
        })
        .collect();
    let since = Instant::now();
    let mut peak = started;
    while !senders.iter().all(|sender| sender.is_finished()) {
        peak = server.peak_rss_kib().unwrap_or(peak);
        if peak > bound_kib {
            server.kill();
            panic!(
                "the server's memory passed {} MiB ({} MiB, from {} MiB) {:?} \
                 into a burst of {burst} pictures at the cap",
                bound_kib / 1024,
                peak / 1024,
                started / 1024,
                since.elapsed()
            );
        }
        thread::sleep(Duration::from_millis(20));
    }
    let answers: Vec<Page> = senders
        .into_iter()
        .map(|sender| sender.join().unwrap().expect("every picture answered"))
        .collect();
    let peak = server.peak_rss_kib().unwrap();
    let decoded = answers.iter().filter(|a| a.status == 422).count();
    eprintln!(
        "{burst} pictures of {w}x{h} at once: {decoded} decoded, the rest turned away, in {:?}; \
         peak resident memory {} MiB (from {} MiB once started)",
        since.elapsed(),
        peak / 1024,
        started / 1024
    );
    for answer in &answers {
        match answer.status {
            // Decoded and stored: the form comes back for the words the
            // picture needs, naming it.
            422 => assert_eq!(
                answer.attrs("input[name=picture]", "value").len(),
                1,
                "{}",
                answer.body
            ),
            503 => assert_eq!(answer.header("retry-after"), Some("10")),
            other => panic!("{other}: {}", answer.body),
        }
    }
    assert!(decoded >= 1, "no picture was decoded");
    assert!(
        peak <= bound_kib,
        "peak resident memory {} MiB, over {} MiB",
        peak / 1024,
        bound_kib / 1024
    );
}

/// Every address a page's `<img>`s would have a browser fetch.
fn image_addresses(page: &Page) -> Vec<String> {
    let mut urls = page.attrs("img", "src");
    for set in page.attrs("img", "srcset") {
        urls.extend(
            set.split(", ")
                .map(|c| c.split(' ').next().unwrap().to_owned()),
        );
    }
    urls
}

/// An address given on the form is fetched once and stored as an upload
/// is: the page draws the stored picture, never the other site's; an
/// edit or a fork that keeps the address does not fetch it again.
#[actix_web::test]
async fn a_picture_given_by_its_address_is_fetched_and_stored_and_drawn_only_from_the_site() {
    let file = picture_file(800, 600, ImageFormat::Png);
    let (addr, answered) = serve_counted(vec![("/dal.png", 200, "image/png", file.clone())]);
    let recipes = Recipes::temporary().unwrap();
    let (site, mut ann) = site_fetching(&recipes, Fetcher::public_and(addr)).await;
    let address = format!("http://{addr}/dal.png");
    let form = ann.get("/recipes/new").await;
    let fields = recipe_fields(&[("image", &address), ("picture_alt", "A bowl of dal")]);
    let done = ann.submit(&form, "/recipes/new", &fields).await;
    assert_eq!(done.status, 303, "{}", done.body);
    assert_eq!(answered.load(Ordering::SeqCst), 1);
    let page = get(&site, "/recipes/weeknight-dal").await;
    let hash = site.recipes().picture_name(&file);
    let drawn = image_addresses(&page);
    assert!(!drawn.is_empty());
    for url in &drawn {
        assert!(url.starts_with(&format!("/images/{hash}-")), "{url}");
    }
    assert_eq!(page.attrs("img.recipe-image", "alt"), ["A bowl of dal"]);
    assert!(!page.body.contains(&addr.to_string()), "{}", page.body);
    assert_eq!(
        ann.get(&drawn[0]).await.header("content-type"),
        Some("image/jpeg")
    );
    // An edit that keeps the address keeps the picture, unfetched.
    let slug = Slug::parse("weeknight-dal").unwrap();
    let form = ann.get("/recipes/weeknight-dal/edit").await;
    assert_eq!(form.attrs("#image", "value"), [address.as_str()]);
    let fields = recipe_fields(&[
        ("title", "Dal"),
        ("note", "shorter"),
        ("image", &address),
        ("picture_alt", "A bowl of dal"),
    ]);
    let edited = ann
        .submit(&form, "/recipes/weeknight-dal/edit", &fields)
        .await;
    assert_eq!(edited.status, 303, "{}", edited.body);
    let content = recipes.snapshot().recipe(&slug).unwrap().content;
    assert_eq!(content.title(), "Dal");
    assert_eq!(
        content.picture().map(|p| p.hash.clone()),
        Some(hash.clone())
    );
    // So does a fork.
    let form = ann.get("/recipes/weeknight-dal/fork").await;
    let forked = ann
        .submit(
            &form,
            "/recipes/weeknight-dal/fork",
            &recipe_fields(&[
                ("slug", "my-dal"),
                ("note", "mine"),
                ("image", &address),
                ("picture_alt", "A bowl of dal"),
            ]),
        )
        .await;
    assert_eq!(forked.status, 303, "{}", forked.body);
    let fork = get(&site, forked.header("location").unwrap()).await;
    for url in image_addresses(&fork) {
        assert!(url.starts_with(&format!("/images/{hash}-")), "{url}");
    }
    assert_eq!(answered.load(Ordering::SeqCst), 1, "fetched once");
}

/// An address whose picture cannot be had gives the form back, 422, with
/// what was typed and why next to the address (the fetcher's words), and
/// writes nothing.
#[actix_web::test]
async fn a_picture_address_that_cannot_be_fetched_gives_the_form_back_and_writes_nothing() {
    let addr = serve_counted(vec![
        ("/page", 200, "text/html", b"<html></html>".to_vec()),
        (
            "/fake.png",
            200,
            "image/png",
            b"not a picture at all".to_vec(),
        ),
    ])
    .0;
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let nowhere = closed.local_addr().unwrap();
    drop(closed);
    let recipes = Recipes::temporary().unwrap();
    let (_site, mut ann) = site_fetching(&recipes, Fetcher::allowing_private()).await;
    let before = stored(recipes.store());
    let form = ann.get("/recipes/new").await;
    for (address, why) in [
        (
            format!("http://{addr}/page"),
            "The address is not a picture (it is text/html).",
        ),
        (
            format!("http://{addr}/missing.png"),
            "The site answered 404.",
        ),
        (
            format!("http://{addr}/fake.png"),
            "The file is not a JPEG, PNG or WebP picture.",
        ),
        (
            format!("http://{nowhere}/dal.png"),
            "Could not fetch 127.0.0.1.",
        ),
    ] {
        let fields = recipe_fields(&[
            ("title", "Borrowed-picture dal"),
            ("image", &address),
            ("picture_alt", "Dal"),
        ]);
        let refused = ann.submit(&form, "/recipes/new", &fields).await;
        assert_eq!(refused.status, 422, "{address}: {}", refused.body);
        assert_eq!(refused.texts("#image-error"), [why], "{address}");
        assert_eq!(refused.attrs("#image", "value"), [address.as_str()]);
        assert_eq!(refused.attrs("#title", "value"), ["Borrowed-picture dal"]);
    }
    assert!(stored(recipes.store()) == before, "nothing written");
}

#[test]
fn a_bad_round_count_for_the_picture_crash_test_fails_it_naming_the_value() {
    // The test runs again as a child with the count set to a mistake: it
    // must fail at once and say so, not run its default rounds.
    let run = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "pictures::a_crash_between_a_picture_and_its_recipe_leaves_no_dangling_reference",
            "--test-threads=1",
        ])
        .env(PICTURE_CRASH_ROUNDS, "six")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&run.stdout) + String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "the run passed: {said}");
    assert!(
        said.contains("FORKFUL_PICTURE_CRASH_ROUNDS") && said.contains("\"six\""),
        "{said}"
    );
}

/// A recipe named `slug` whose picture is `picture`, by ann.
fn create_with(recipes: &Recipes, slug: &str, picture: Picture) -> Result<(), DomainError> {
    let content = ContentDraft {
        title: slug.into(),
        picture: Some(Picture {
            alt: "A picture".into(),
            ..picture
        }),
        ..ContentDraft::default()
    };
    let slug = Slug::parse(slug).unwrap();
    recipes.create(&slug, content, &Change::by("ann", "new"))?;
    Ok(())
}

/// Whether any of a picture's variants is still stored.
fn any_variant(recipes: &Recipes, picture: &Picture) -> bool {
    pictures::variant_names(picture.width).iter().any(|name| {
        recipes
            .picture_variant(&picture.hash, name)
            .unwrap()
            .is_some()
    })
}

#[test]
fn a_picture_no_version_ever_named_is_collected_a_day_after_it_was_last_sent() {
    const DAY: i64 = forkful::domain::UNSAVED_PICTURE_GRACE_MS;
    let recipes = Recipes::temporary().unwrap();
    let now = forkful::store::now_millis();
    let unsaved = recipes
        .add_picture(&picture_file(40, 30, ImageFormat::Png), "ann")
        .unwrap();
    let replaced = recipes
        .add_picture(&picture_file(41, 30, ImageFormat::Png), "ann")
        .unwrap();
    let kept = recipes
        .add_picture(&picture_file(42, 30, ImageFormat::Png), "ann")
        .unwrap();
    create_with(&recipes, "dal", replaced.clone()).unwrap();
    // Its next version has another picture: the first stays in history.
    let slug = Slug::parse("dal").unwrap();
    let mut content = recipes
        .snapshot()
        .recipe(&slug)
        .unwrap()
        .content
        .into_draft();
    content.picture = Some(Picture {
        alt: "Another".into(),
        ..kept.clone()
    });
    let version = recipes.snapshot().recipe(&slug).unwrap().newest();
    recipes
        .edit(&slug, version, content, &Change::by("ann", "new picture"))
        .unwrap();

    // Within its day, nothing is collected; sent again, its day starts over.
    assert_eq!(
        recipes.collect_unsaved_pictures_at(now + DAY / 2).unwrap(),
        0
    );
    assert_eq!(
        recipes
            .collect_unsaved_pictures_at(now - 1_000 + DAY)
            .unwrap(),
        0
    );
    assert!(recipes.picture(&unsaved.hash).unwrap().is_some());

    let collected = recipes
        .collect_unsaved_pictures_at(now + DAY + 60_000)
        .unwrap();
    assert_eq!(collected, 1);
    assert!(recipes.picture(&unsaved.hash).unwrap().is_none());
    assert!(
        !any_variant(&recipes, &unsaved),
        "every variant goes with it"
    );
    assert!(recipes
        .picture_for(&unsaved.hash, Some("ann"))
        .unwrap()
        .is_none());
    for named in [&replaced, &kept] {
        assert!(any_variant(&recipes, named));
        assert_eq!(
            recipes
                .picture_for(&named.hash, None)
                .unwrap()
                .map(|(_, seen)| seen),
            Some(forkful::domain::Seen::ByAnyone)
        );
    }
    // A form that still names the collected picture is refused, not saved
    // with a picture that is not there.
    assert!(matches!(
        create_with(&recipes, "soup", unsaved.clone()),
        Err(DomainError::NoSuchPicture(_))
    ));
    // Sent again, it is stored again, whole.
    let again = recipes
        .add_picture(&picture_file(40, 30, ImageFormat::Png), "bob")
        .unwrap();
    assert_eq!(again.hash, unsaved.hash);
    assert!(any_variant(&recipes, &again));
}

#[test]
fn a_picture_stored_before_sendings_were_recorded_has_its_day_too() {
    const DAY: i64 = forkful::domain::UNSAVED_PICTURE_GRACE_MS;
    let recipes = Recipes::temporary().unwrap();
    let file = picture_file(40, 30, ImageFormat::Png);
    // As the seed stores pictures, and as every picture was stored before.
    let old = recipes
        .store_picture(pictures::prepare(&file, recipes.picture_name(&file)).unwrap())
        .unwrap();
    let first = forkful::store::now_millis() + 10 * DAY;
    assert_eq!(recipes.collect_unsaved_pictures_at(first).unwrap(), 0);
    assert!(recipes.picture(&old.hash).unwrap().is_some());
    assert_eq!(recipes.collect_unsaved_pictures_at(first + DAY).unwrap(), 1);
    assert!(recipes.picture(&old.hash).unwrap().is_none());
}

/// Writes that name pictures while the same pictures are collected: each
/// write either names a picture that is stored, whole, or is refused.
#[test]
fn a_write_racing_a_collection_never_names_a_collected_picture() {
    let recipes = Recipes::temporary().unwrap();
    let sent: Vec<Picture> = (0..24)
        .map(|i| {
            recipes
                .add_picture(&picture_file(20 + i, 20, ImageFormat::Png), "ann")
                .unwrap()
        })
        .collect();
    let later = forkful::store::now_millis() + 2 * forkful::domain::UNSAVED_PICTURE_GRACE_MS;
    let start = Arc::new(Barrier::new(2));
    let writer = {
        let (recipes, start, sent) = (recipes.clone(), start.clone(), sent.clone());
        thread::spawn(move || {
            start.wait();
            let mut saved = Vec::new();
            for (i, picture) in sent.into_iter().enumerate() {
                match create_with(&recipes, &format!("r-{i}"), picture.clone()) {
                    Ok(()) => saved.push(picture),
                    Err(DomainError::NoSuchPicture(_)) => {}
                    Err(other) => panic!("{other}"),
                }
            }
            saved
        })
    };
    start.wait();
    let mut collected = 0;
    for _ in 0..sent.len() {
        collected += recipes.collect_unsaved_pictures_at(later).unwrap();
    }
    let saved = writer.join().unwrap();
    collected += recipes.collect_unsaved_pictures_at(later).unwrap();
    assert_eq!(
        saved.len() + collected,
        sent.len(),
        "each picture saved or collected"
    );
    for picture in &saved {
        assert!(recipes.picture(&picture.hash).unwrap().is_some());
        assert!(any_variant(&recipes, picture));
    }
}

/// A store made when `:recipe/picture` had no index gets one when it is
/// opened, and the pictures its versions named so far are found by it.
#[test]
fn a_store_from_before_pictures_were_indexed_finds_the_pictures_it_named() {
    use forkful::store::attribute_map;
    use forkful::store::{kw, Cardinality, EntityMap, Transaction, ValueType};
    let store = Store::temporary().unwrap();
    let file = picture_file(40, 30, ImageFormat::Png);
    let hash = "0123456789abcdef0123456789abcdef";
    assert!(pictures::is_hash(hash));
    let mut schema = Transaction::new();
    schema.map(attribute_map(
        ":recipe/picture",
        ValueType::String,
        Cardinality::One,
        None,
    ));
    store.transact(&schema).unwrap();
    let mut named = Transaction::new();
    named.map(EntityMap::anonymous().with(":recipe/picture", hash));
    store.transact(&named).unwrap();
    assert!(!store.db().attribute(&kw(":recipe/picture")).unwrap().index);

    let recipes = Recipes::open(store).unwrap();
    assert!(
        recipes
            .store()
            .db()
            .attribute(&kw(":recipe/picture"))
            .unwrap()
            .index
    );
    recipes
        .store_picture(pictures::prepare(&file, hash.to_owned()).unwrap())
        .unwrap();
    assert_eq!(
        recipes
            .picture_for(hash, None)
            .unwrap()
            .map(|(_, seen)| seen),
        Some(forkful::domain::Seen::ByAnyone)
    );
}
