//! Forks that talk back: a fork brings in its parent's changes (a
//! three-way merge decided in the writer), in the domain and over the web.

use forkful::domain::merge::{Choice, Unresolved};
use forkful::domain::{
    pages, Change, ContentDraft, ContentField, DomainError, Minutes, Origin, Recipes, Review, Slug,
    Step, VersionNumber,
};
use forkful::store::Store;

use crate::helpers::{stored, v, Page};
use crate::writing::{
    filled_in, form_token, hidden_fields, new_site, recipe_fields, sign_up, sign_up_as, Browser,
    ORIGIN,
};

fn slug(s: &str) -> Slug {
    Slug::parse(s).unwrap()
}

fn content(title: &str, ingredients: &[&str], steps: &[&str]) -> ContentDraft {
    ContentDraft {
        title: title.into(),
        cook: Some(Minutes::new(20).unwrap()),
        ingredients: ingredients.iter().map(|s| s.to_string()).collect(),
        steps: steps
            .iter()
            .map(|s| Step {
                section: None,
                text: s.to_string(),
            })
            .collect(),
        ..ContentDraft::default()
    }
}

/// `ann`'s banana bread (two versions) and `ben`'s fork of its first.
fn a_parent_and_its_fork() -> (Recipes, Slug, Slug) {
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    let parent = slug("banana-bread");
    let ann = |note| Change::by("ann", note);
    recipes
        .create(
            &parent,
            content(
                "Banana bread",
                &["3 bananas", "200 g flour", "100 g sugar"],
                &["Mash.", "Bake 50 minutes."],
            ),
            &ann("first"),
        )
        .unwrap();
    let (fork, _) = recipes
        .fork(
            &parent,
            None,
            None,
            |mut c| {
                c.title = "Ben's banana bread".into();
                c.ingredients[2] = "60 g sugar".into();
                c
            },
            &Change::by("ben", "less sugar"),
        )
        .unwrap();
    recipes
        .edit(
            &parent,
            v(1),
            ContentDraft {
                cook: Some(Minutes::new(55).unwrap()),
                ..content(
                    "Banana bread",
                    &["3 ripe bananas", "200 g flour", "100 g sugar"],
                    &["Mash.", "Bake 50 minutes.", "Cool on a rack."],
                )
            },
            &ann("riper bananas, cooling"),
        )
        .unwrap();
    (recipes, parent, fork)
}

#[test]
fn a_fork_brings_in_its_parents_changes_and_the_next_merge_starts_there() {
    let (recipes, parent, fork) = a_parent_and_its_fork();
    let ben = |note| Change::by("ben", note);
    let view = recipes.snapshot();
    let before = view.recipe(&fork).unwrap();
    let agreed = view.agreed(&before).unwrap().unwrap();
    assert_eq!(
        (agreed.version, agreed.newest),
        (v(1), v(2)),
        "one version behind"
    );
    let changes = view.parent_changes(&before, None).unwrap();
    assert!(changes.merge.is_clean(), "{:?}", changes.merge.conflicts());
    recipes
        .bring_in(&fork, v(1), v(2), &[], &ben("brought in"))
        .unwrap();
    let view = recipes.snapshot();
    let after = view.recipe(&fork).unwrap();
    assert_eq!(
        after.content.title(),
        "Ben's banana bread",
        "its own title kept"
    );
    assert_eq!(
        after.content.ingredients(),
        ["3 ripe bananas", "200 g flour", "60 g sugar"],
        "the parent's line in, its own change kept"
    );
    assert_eq!(after.content.steps().len(), 3, "the parent's new step in");
    assert_eq!(after.content.cook(), Some(Minutes::new(55).unwrap()));
    assert_eq!(after.brought_in, Some(v(2)));
    let agreed = view.agreed(&after).unwrap().unwrap();
    assert_eq!((agreed.version, agreed.newest), (v(2), v(2)));
    let history = view.changes(after.id).unwrap();
    assert_eq!(history.len(), 2);
    assert!(
        history[1]
            .1
            .starts_with("brought in version 2 of Banana bread: "),
        "{:?}",
        history[1]
    );
    let merges = view.merges(after.id).unwrap();
    assert_eq!(merges.len(), 1);
    assert_eq!((merges[0].parent_version, merges[0].version), (v(2), v(2)));
    // Nothing new: refused, nothing written.
    let written = stored(recipes.store());
    assert!(matches!(
        recipes.bring_in(&fork, v(2), v(2), &[], &ben("again")),
        Err(DomainError::UpToDate { .. })
    ));
    // The parent moves on; the next merge's base is version 2, not the
    // fork's version 1, so the lines already brought in are no conflict.
    recipes
        .edit(
            &parent,
            v(2),
            ContentDraft {
                cook: Some(Minutes::new(55).unwrap()),
                ..content(
                    "Banana bread",
                    &["3 ripe bananas", "200 g flour", "100 g sugar", "1 egg"],
                    &["Mash.", "Bake 50 minutes.", "Cool on a rack."],
                )
            },
            &Change::by("ann", "an egg"),
        )
        .unwrap();
    assert!(stored(recipes.store()) != written);
    let view = recipes.snapshot();
    let changes = view
        .parent_changes(&view.recipe(&fork).unwrap(), None)
        .unwrap();
    assert_eq!(changes.base, v(2));
    assert!(changes.merge.is_clean());
    recipes
        .bring_in(&fork, v(2), v(3), &[], &ben("the egg"))
        .unwrap();
    let now = recipes.snapshot().recipe(&fork).unwrap();
    assert_eq!(
        now.content.ingredients(),
        ["3 ripe bananas", "200 g flour", "60 g sugar", "1 egg"]
    );
}

#[test]
fn a_conflict_is_saved_only_once_each_side_is_chosen_and_only_by_the_forks_cook() {
    let (recipes, parent, fork) = a_parent_and_its_fork();
    // The parent changes the sugar line too, differently.
    recipes
        .edit(
            &parent,
            v(2),
            ContentDraft {
                cook: Some(Minutes::new(55).unwrap()),
                ..content(
                    "Banana bread",
                    &["3 ripe bananas", "200 g flour", "80 g brown sugar"],
                    &["Mash.", "Bake 50 minutes.", "Cool on a rack."],
                )
            },
            &Change::by("ann", "brown sugar"),
        )
        .unwrap();
    let view = recipes.snapshot();
    let changes = view
        .parent_changes(&view.recipe(&fork).unwrap(), None)
        .unwrap();
    let conflicts = changes.merge.conflicts();
    assert_eq!(conflicts.len(), 1, "{conflicts:?}");
    assert_eq!(conflicts[0].mine, ["60 g sugar"]);
    assert_eq!(conflicts[0].theirs, ["80 g brown sugar"]);
    let before = stored(recipes.store());
    let ben = Change::by("ben", "merge");
    for refused in [
        recipes.bring_in(&fork, v(1), v(3), &[], &ben),
        recipes.bring_in(&fork, v(1), v(3), &[Choice::Mine, Choice::Mine], &ben),
        recipes.bring_in(
            &fork,
            v(1),
            v(3),
            &[Choice::Theirs],
            &Change::by("ann", "x"),
        ),
        recipes.bring_in(&fork, v(2), v(3), &[Choice::Theirs], &ben),
        recipes.bring_in(&fork, v(1), v(9), &[Choice::Theirs], &ben),
        recipes.bring_in(&fork, v(1), v(2), &[Choice::Theirs], &ben),
        recipes.bring_in(&fork, v(1), v(3), &[Choice::Edited("a".repeat(3000))], &ben),
    ] {
        assert!(
            matches!(
                refused,
                Err(DomainError::Unresolved(_)
                    | DomainError::NotAuthor { .. }
                    | DomainError::Stale { .. }
                    | DomainError::MergeMoved { .. }
                    | DomainError::Content(_))
            ),
            "{refused:?}"
        );
    }
    assert!(stored(recipes.store()) == before, "a refused merge wrote");
    recipes
        .bring_in(&fork, v(1), v(3), &[Choice::Theirs], &ben)
        .unwrap();
    let now = recipes.snapshot().recipe(&fork).unwrap();
    assert_eq!(now.content.ingredients()[2], "80 g brown sugar");
    assert_eq!(now.content.title(), "Ben's banana bread");
}

#[test]
fn an_original_has_nothing_to_bring_in() {
    let (recipes, parent, _) = a_parent_and_its_fork();
    let view = recipes.snapshot();
    let original = view.recipe(&parent).unwrap();
    assert_eq!(view.agreed(&original).unwrap(), None);
    assert!(matches!(
        view.parent_changes(&original, None),
        Err(DomainError::NoParent(_))
    ));
    assert!(matches!(
        pages::bring_in_show(&view, &parent),
        Err(DomainError::NoParent(_))
    ));
}

/// Ann (her name first in `names`) writes the weeknight dal; Ben forks it
/// as his dal, with cumin for turmeric. Their browsers, logged in.
async fn ann_writes_and_ben_forks(
    site: &actix_web::web::Data<forkful::web::Site>,
    names: (&str, &str),
) -> (Browser, Browser) {
    let cumin = &[
        (
            "ingredients",
            "1 cup red lentils\n3 cups water\n1 tsp cumin",
        ),
        ("note", "cumin"),
    ];
    ann_writes_and_ben_forks_with(site, names, cumin).await
}

/// Ann's dal, and Ben's fork of it `bens-dal` with `changes` to the
/// form's fields.
async fn ann_writes_and_ben_forks_with(
    site: &actix_web::web::Data<forkful::web::Site>,
    names: (&str, &str),
    changes: &[(&str, &str)],
) -> (Browser, Browser) {
    let mut ann = Browser::new(site);
    sign_up_as(&mut ann, "ann", names.0).await;
    let form = ann.get("/recipes/new").await;
    let made = ann.submit(&form, "/recipes/new", &recipe_fields(&[])).await;
    assert_eq!(made.status, 303, "{}", made.body);
    let mut ben = Browser::new(site);
    sign_up_as(&mut ben, "ben", names.1).await;
    let fork_form = ben.get("/recipes/weeknight-dal/fork").await;
    let mut fields = vec![("slug", "bens-dal"), ("title", "Ben's dal")];
    fields.extend_from_slice(changes);
    let forked = ben
        .submit(
            &fork_form,
            "/recipes/weeknight-dal/fork",
            &recipe_fields(&fields),
        )
        .await;
    assert_eq!(forked.status, 303, "{}", forked.body);
    (ann, ben)
}

/// Ben suggests his fork's changes with `message`; Ann then changes her
/// turmeric line another way (ground) and opens the review of it.
async fn ben_suggests_and_ann_grinds_hers(
    ann: &mut Browser,
    ben: &mut Browser,
    message: &str,
) -> Page {
    let suggest = ben.get("/recipes/bens-dal/suggest").await;
    let made = ben
        .submit(
            &suggest,
            "/recipes/bens-dal/suggest",
            &[("message", message)],
        )
        .await;
    assert_eq!(made.status, 303, "{}", made.body);
    ann_edits_her_dal(
        ann,
        "1 cup red lentils\n3 cups water\n1 tsp turmeric, ground",
        "ground",
    )
    .await;
    ann.get("/recipes/weeknight-dal/suggestions/1").await
}

/// Ann's edit of her dal's ingredients, from its edit form.
async fn ann_edits_her_dal(ann: &mut Browser, ingredients: &str, note: &str) {
    let edit = ann.get("/recipes/weeknight-dal/edit").await;
    let edited = ann
        .submit(
            &edit,
            "/recipes/weeknight-dal/edit",
            &recipe_fields(&[("ingredients", ingredients), ("note", note)]),
        )
        .await;
    assert_eq!(edited.status, 303, "{}", edited.body);
}

fn version(n: u64) -> VersionNumber {
    VersionNumber::new(n).unwrap()
}

/// Over the web: ann writes, ben forks and changes a line, ann edits; the
/// fork's page says it is behind, ben brings the change in through the
/// form, choosing a side of the conflict, and the page, its history and
/// the family drawing show it.
#[actix_web::test]
async fn over_the_web_a_fork_shows_how_far_behind_it_is_and_brings_the_changes_in() {
    let (recipes, site) = new_site();
    let (mut ann, mut ben) = ann_writes_and_ben_forks(&site, ("A Cook", "A Cook")).await;
    let edit = ann.get("/recipes/weeknight-dal/edit").await;
    let edited = ann
        .submit(
            &edit,
            "/recipes/weeknight-dal/edit",
            &recipe_fields(&[
                ("cook", "30"),
                (
                    "ingredients",
                    "1 cup red lentils\n4 cups water\n1 tsp turmeric, ground",
                ),
                ("note", "more water"),
            ]),
        )
        .await;
    assert_eq!(edited.status, 303, "{}", edited.body);

    let page = ben.get("/recipes/bens-dal").await;
    let apart = page.texts(".apart").join(" ");
    assert!(
        apart.contains("has 1 new version since version 1"),
        "{apart}"
    );
    assert_eq!(
        page.attrs(".apart a", "href"),
        [
            "/recipes/weeknight-dal/diff?from=1&to=2",
            "/recipes/bens-dal/bring-in",
            "/recipes/bens-dal/suggest"
        ]
    );

    // Only the fork's cook may bring changes in.
    assert_eq!(ann.get("/recipes/bens-dal/bring-in").await.status, 403);
    assert_eq!(
        ben.get("/recipes/weeknight-dal/bring-in").await.status,
        404,
        "an original has no parent"
    );

    let form = ben.get("/recipes/bens-dal/bring-in").await;
    assert_eq!(form.status, 200, "{}", form.body);
    assert_eq!(form.texts("fieldset.conflict").len(), 1, "{}", form.body);
    let conflict = form.texts("fieldset.conflict").join(" ");
    assert!(conflict.contains("1 tsp cumin") && conflict.contains("1 tsp turmeric, ground"));
    let action = "/recipes/bens-dal/bring-in";
    // Without a choice nothing is saved.
    let before = stored(recipes.store());
    let note = ("note", "Brought in the water");
    let unchosen = ben.submit(&form, action, &[note]).await;
    assert_eq!(unchosen.status, 422, "{}", unchosen.body);
    let unsaid = ben.submit(&form, action, &[("choice-0", "mine")]).await;
    assert_eq!(unsaid.status, 422, "no note: {}", unsaid.body);
    let forged = ben
        .submit(&form, action, &[note, ("choice-0", "neither")])
        .await;
    assert_eq!(forged.status, 400, "{}", forged.body);
    assert!(stored(recipes.store()) == before);
    // The fork moves on (in another tab) before the form is sent: 409,
    // and the form made again on the fork's newest version.
    let edit = ben.get("/recipes/bens-dal/edit").await;
    let moved = ben
        .submit(
            &edit,
            "/recipes/bens-dal/edit",
            &recipe_fields(&[
                ("slug", "bens-dal"),
                ("title", "Ben's dal"),
                (
                    "ingredients",
                    "1 cup red lentils\n3 cups water\n1 tsp cumin",
                ),
                ("summary", "Red lentils, cumin."),
                ("note", "summary"),
            ]),
        )
        .await;
    assert_eq!(moved.status, 303, "{}", moved.body);
    let stale = ben
        .submit(&form, action, &[note, ("choice-0", "mine")])
        .await;
    assert_eq!(stale.status, 409, "{}", stale.body);
    assert!(stale.body.contains("changed since this page was made"));
    let saved = ben
        .submit(&stale, action, &[note, ("choice-0", "mine")])
        .await;
    assert_eq!(saved.status, 303, "{}", saved.body);

    let view = recipes.snapshot();
    let now = view.recipe(&slug("bens-dal")).unwrap();
    assert_eq!(
        now.content.ingredients(),
        ["1 cup red lentils", "3 cups water", "1 tsp cumin"],
        "the parent changed both lines ben's change meets, as one block: keeping his side keeps his whole side"
    );
    assert_eq!(now.content.cook(), Some(Minutes::new(30).unwrap()));
    assert_eq!(now.content.summary(), Some("Red lentils, cumin."));
    assert_eq!(now.brought_in, Some(version(2)));
    let page = ben.get("/recipes/bens-dal").await;
    let apart = page.texts(".apart").join(" ");
    assert!(
        apart.contains("In step with Weeknight Dal's version 2; you kept your own version of 1 change it made."),
        "{apart}"
    );
    let history = ben.get("/recipes/bens-dal/history").await;
    assert!(
        history
            .body
            .contains("brought in version 2 of Weeknight Dal: cook; ingredients kept its own"),
        "{}",
        history.body
    );
    let family = ben.get("/recipes/bens-dal/forks").await;
    assert!(
        family
            .body
            .contains("brought in version 2 of Weeknight Dal in its version 3"),
        "{}",
        family.body
    );

    // In step: nothing to bring in, said on a plain page with the way back.
    let form_again = ben.get("/recipes/bens-dal/bring-in").await;
    assert_eq!(form_again.status, 200, "{}", form_again.body);
    assert_eq!(
        form_again.texts("h1"),
        ["Ben's dal is in step with Weeknight Dal"]
    );
    assert!(form_again.texts("form.bring-in").is_empty());
    assert_eq!(
        form_again.attrs("main a", "href"),
        ["/recipes/weeknight-dal", "/recipes/bens-dal"]
    );
}

/// A fork suggests its change; the parent's author accepts it onto a
/// parent that moved on, and the fork's next suggestion is declined and a
/// third withdrawn: each state decided in the writer, by the right cook.
#[test]
fn a_suggestion_is_accepted_onto_the_parents_newest_version_crediting_its_cook() {
    let (recipes, parent, fork) = a_parent_and_its_fork();
    let ben = |note| Change::by("ben", note);
    let ann = |note| Change::by("ann", note);
    let (number, _) = recipes
        .suggest(
            &fork,
            v(1),
            "Less sugar: the bananas are sweet",
            &ben("suggest"),
        )
        .unwrap();
    assert_eq!(number, 1);
    // A second open one is refused; so is a suggestion by another cook.
    assert!(matches!(
        recipes.suggest(&fork, v(1), "again", &ben("again")),
        Err(DomainError::AlreadySuggested { number: 1, .. })
    ));
    assert!(matches!(
        recipes.suggest(&fork, v(1), "mine", &ann("not hers")),
        Err(DomainError::NotAuthor { .. })
    ));
    let view = recipes.snapshot();
    let parent_recipe = view.recipe(&parent).unwrap();
    assert_eq!(view.open_suggestions(parent_recipe.id).unwrap(), 1);
    // Only the parent's author accepts; the suggester may not.
    let before = stored(recipes.store());
    assert!(matches!(
        recipes.accept_suggestion(&parent, 1, Review::of(v(2), v(1)), &[], "", &ben("self")),
        Err(DomainError::NotAuthor { .. })
    ));
    assert!(matches!(
        recipes.withdraw_suggestion(&parent, 1, &ann("not hers")),
        Err(DomainError::NotSuggester { .. })
    ));
    assert!(matches!(
        recipes.accept_suggestion(&parent, 9, Review::of(v(2), v(1)), &[], "", &ann("none")),
        Err(DomainError::NoSuchSuggestion { .. })
    ));
    // A review shown before the parent's version 2 accepts nothing: it
    // showed another merge.
    assert!(matches!(
        recipes.accept_suggestion(&parent, 1, Review::of(v(1), v(1)), &[], "", &ann("stale")),
        Err(DomainError::MergeMoved { .. })
    ));
    assert!(stored(recipes.store()) == before, "a refused review wrote");
    // The parent is at version 2 (riper bananas), the suggestion based on
    // version 1: its sugar line merges onto version 2 cleanly.
    recipes
        .accept_suggestion(
            &parent,
            1,
            Review::of(v(2), v(1)),
            &[],
            "Thanks!",
            &ann("accept"),
        )
        .unwrap();
    let view = recipes.snapshot();
    let now = view.recipe(&parent).unwrap();
    assert_eq!(
        now.content.ingredients(),
        ["3 ripe bananas", "200 g flour", "60 g sugar"]
    );
    assert_eq!(
        now.content.title(),
        "Banana bread",
        "the fork's title is not taken"
    );
    let history = view.changes(now.id).unwrap();
    assert!(
        history[2]
            .1
            .starts_with("took suggestion 1 by ben from Ben's banana bread (its version 1): "),
        "{:?}",
        history[2]
    );
    let s = view.suggestion(now.id, 1).unwrap().unwrap();
    assert_eq!(s.state.as_str(), "accepted");
    assert_eq!(s.accepted_in, Some(v(3)));
    assert_eq!(s.reply.as_deref(), Some("Thanks!"));
    assert!(matches!(
        recipes.decline_suggestion(&parent, 1, Review::of(v(3), v(1)), "", &ann("late")),
        Err(DomainError::SuggestionClosed { .. })
    ));
    // The fork changes again and suggests again; its open suggestion
    // follows its newest version.
    let mut changed = view.recipe(&fork).unwrap().content.into_draft();
    changed.notes = Some("Muffins: 20 minutes.".into());
    recipes
        .edit(&fork, v(1), changed.clone(), &ben("notes"))
        .unwrap();
    let (second, _) = recipes
        .suggest(&fork, v(2), "A note on muffins", &ben("suggest"))
        .unwrap();
    assert_eq!(second, 2);
    changed.notes = Some("Muffins: 18 to 20 minutes.".into());
    recipes.edit(&fork, v(2), changed, &ben("notes")).unwrap();
    let view = recipes.snapshot();
    let open = view.suggestion(now.id, 2).unwrap().unwrap();
    assert_eq!(open.from_version, v(3), "it follows the fork");
    // A decline made from the review of the fork's version 2 declines
    // nothing: the suggestion follows the fork, now at version 3.
    assert!(matches!(
        recipes.decline_suggestion(&parent, 2, Review::of(v(3), v(2)), "No", &ann("no")),
        Err(DomainError::MergeMoved { .. })
    ));
    recipes
        .decline_suggestion(
            &parent,
            2,
            Review::of(v(3), v(3)),
            "Not for a loaf",
            &ann("no"),
        )
        .unwrap();
    // The same changes again are refused, until the fork changes.
    assert!(matches!(
        recipes.suggest(&fork, v(3), "Please", &ben("suggest")),
        Err(DomainError::DeclinedAlready { number: 2 })
    ));
    let page = pages::recipe_show(&recipes.snapshot(), &fork, Default::default()).unwrap();
    assert!(!page.can_suggest, "its page offers no suggestion either");
    let mut changed = recipes
        .snapshot()
        .recipe(&fork)
        .unwrap()
        .content
        .into_draft();
    changed.notes = Some("Muffins: 18 to 20 minutes, in paper cases.".into());
    recipes.edit(&fork, v(3), changed, &ben("cases")).unwrap();
    let (third, _) = recipes
        .suggest(&fork, v(4), "Try again", &ben("suggest"))
        .unwrap();
    recipes
        .withdraw_suggestion(&parent, third, &ben("withdraw"))
        .unwrap();
    let view = recipes.snapshot();
    let states: Vec<&str> = view
        .suggestions_to(now.id)
        .unwrap()
        .iter()
        .map(|s| s.state.as_str())
        .collect();
    assert_eq!(states, ["accepted", "declined", "withdrawn"]);
    assert_eq!(view.open_suggestions(now.id).unwrap(), 0);
    let by_ben: Vec<u32> = view
        .suggestions_by(&slug("ben"))
        .unwrap()
        .iter()
        .map(|s| s.number)
        .collect();
    assert_eq!(by_ben, [1, 2, 3]);
}

/// A stale acceptance: the parent moved on in a way that conflicts with
/// the suggestion after the review was shown, so accepting answers 409
/// with the merge form, and nothing is written until the author chooses.
#[actix_web::test]
async fn over_the_web_a_suggestion_is_made_reviewed_and_a_stale_acceptance_is_409() {
    let (recipes, site) = new_site();
    let (mut ann, mut ben) = ann_writes_and_ben_forks(&site, ("A Cook", "A Cook")).await;
    let suggest = ben.get("/recipes/bens-dal/suggest").await;
    assert_eq!(suggest.status, 200, "{}", suggest.body);
    let empty = ben.submit(&suggest, "/recipes/bens-dal/suggest", &[]).await;
    assert_eq!(empty.status, 422, "a suggestion needs a message");
    let made = ben
        .submit(
            &suggest,
            "/recipes/bens-dal/suggest",
            &[("message", "Cumin instead of turmeric")],
        )
        .await;
    assert_eq!(made.status, 303, "{}", made.body);
    assert_eq!(
        made.headers.get("location").unwrap(),
        "/recipes/weeknight-dal/suggestions/1"
    );
    let page = ann.get("/recipes/weeknight-dal").await;
    assert!(
        page.body.contains("1 open suggestion"),
        "the parent counts it: {}",
        page.body
    );
    // Ann opens the review, then changes the same line another way.
    let review = ann.get("/recipes/weeknight-dal/suggestions/1").await;
    assert_eq!(review.status, 200, "{}", review.body);
    assert!(review.body.contains("Cumin instead of turmeric"));
    ann_edits_her_dal(
        &mut ann,
        "1 cup red lentils\n3 cups water\n1 tsp smoked paprika",
        "paprika",
    )
    .await;
    let action = "/recipes/weeknight-dal/suggestions/1";
    let before = stored(recipes.store());
    let stale = ann.submit(&review, action, &[("action", "accept")]).await;
    assert_eq!(stale.status, 409, "{}", stale.body);
    assert_eq!(
        stale.texts("form.accept fieldset.conflict").len(),
        1,
        "{}",
        stale.body
    );
    assert!(
        stored(recipes.store()) == before,
        "a stale acceptance wrote"
    );
    // Ben cannot accept; Ann accepts, taking the suggestion's side.
    let not_his = ben.get(action).await;
    assert!(not_his.texts("form.accept").is_empty());
    let accepted = ann
        .submit(
            &stale,
            action,
            &[("action", "accept"), ("choice-0", "theirs")],
        )
        .await;
    assert_eq!(accepted.status, 303, "{}", accepted.body);
    let now = recipes.snapshot().recipe(&slug("weeknight-dal")).unwrap();
    assert_eq!(now.content.ingredients()[2], "1 tsp cumin");
    let history = ann.get("/recipes/weeknight-dal/history").await;
    assert!(
        history.body.contains("took suggestion 1 by ben from Ben"),
        "{}",
        history.body
    );
    // A number that names no suggestion is a 404, past the count or not.
    for missing in ["0", "2", "99999"] {
        let page = ben
            .get(&format!("/recipes/weeknight-dal/suggestions/{missing}"))
            .await;
        assert_eq!(page.status, 404, "suggestion {missing}");
    }
    let list = ben.get("/recipes/weeknight-dal/suggestions").await;
    assert_eq!(
        list.texts("ol.suggestions .state"),
        ["accepted in version 3"],
        "{}",
        list.body
    );
    assert_eq!(
        list.attrs("ol.suggestions .state a", "href"),
        ["/recipes/weeknight-dal/versions/3"],
        "the version that took it is linked"
    );

    // The history links the fork's version taken and the suggestion.
    let history = ann.get("/recipes/weeknight-dal/history").await;
    assert_eq!(
        history.attrs("p.origin a", "href"),
        [
            "/recipes/bens-dal/versions/1",
            "/recipes/weeknight-dal/suggestions/1"
        ],
        "{}",
        history.body
    );
    // The family drawing joins the fork's version to the one that took it.
    let family = ann.get("/recipes/weeknight-dal/forks").await;
    assert!(
        family
            .texts("svg title")
            .iter()
            .any(|t| t
                == "Weeknight Dal took suggestion 1 from version 1 of Ben's dal in its version 3"),
        "{:?}",
        family.texts("svg title")
    );
    // Ann took the cumin over her paprika: the version that took it is
    // Ben's recipe as suggested, so his fork is in step with it, with
    // nothing to bring in.
    let fork_page = ben.get("/recipes/bens-dal").await;
    assert_eq!(
        fork_page.texts("p.apart"),
        [
            "In step with Weeknight Dal's version 3.",
            "Suggestion 1 was taken into Weeknight Dal, in its version 3."
        ]
    );
    assert_eq!(
        ben.get("/recipes/bens-dal/bring-in")
            .await
            .texts("form.bring-in")
            .len(),
        0
    );

    // Each cook's account page lists the suggestion, with its state.
    // (Each line: what, then when, then its state.)
    let listed = |texts: Vec<String>| -> Vec<(String, String)> {
        texts
            .iter()
            .map(|t| {
                let (what, rest) = t.split_once(", ").unwrap();
                let (_, state) = rest.split_once(": ").unwrap();
                (what.to_owned(), state.to_owned())
            })
            .collect()
    };
    let ann_account = ann.get("/account").await;
    assert_eq!(
        listed(ann_account.texts("ul.suggestions li")),
        [(
            "Suggestion 1 to Weeknight Dal from Ben's dal by ben".to_owned(),
            "accepted in version 3".to_owned()
        )],
        "{}",
        ann_account.body
    );
    let ben_account = ben.get("/account").await;
    assert_eq!(
        listed(ben_account.texts("ul.suggestions li")),
        [(
            "Suggestion 1 from Ben's dal to Weeknight Dal".to_owned(),
            "accepted in version 3".to_owned()
        )],
        "{}",
        ben_account.body
    );

    // The feed of suggestions to ann's recipes, for anyone.
    let mut visitor = Browser::new(&site);
    let feed = visitor.get("/cooks/ann/suggestions.xml").await;
    assert_eq!(feed.status, 200, "{}", feed.body);
    assert_eq!(
        feed.headers.get("content-type").unwrap(),
        "application/atom+xml; charset=utf-8"
    );
    assert_eq!(
        feed.texts("entry > title"),
        ["Suggestion 1 to Weeknight Dal from Ben's dal (accepted in version 3)"],
        "{}",
        feed.body
    );
    assert_eq!(feed.texts("entry > author > name"), ["ben"]);
    assert_eq!(
        visitor
            .get("/cooks/ben/suggestions.xml")
            .await
            .texts("entry"),
        Vec::<String>::new(),
        "none to ben's recipes"
    );
    assert_eq!(
        visitor.get("/cooks/nobody/suggestions.xml").await.status,
        404
    );
    let cook_page = visitor.get("/cooks/ann").await;
    assert_eq!(
        cook_page.attrs("link[rel=alternate][href$='suggestions.xml']", "href"),
        ["/cooks/ann/suggestions.xml"]
    );

    // The JSON of both recipes says it.
    let json = |body: &str| serde_json::from_str::<serde_json::Value>(body).unwrap();
    let parent_json = json(&visitor.get("/recipes/weeknight-dal.json").await.body);
    let taken = &parent_json["suggestions"][0];
    assert_eq!(taken["state"], "accepted");
    assert_eq!(taken["accepted_in"], 3);
    assert_eq!(taken["from_version"], 1);
    assert_eq!(taken["by"], "ben");
    let fork_json = json(&visitor.get("/recipes/bens-dal.json").await.body);
    assert_eq!(fork_json["suggested"][0]["number"], 1);
    assert_eq!(fork_json["forked_from"]["parent_versions"], 3);
}

/// A suggestion's facts: the accepting version names the fork's version
/// it took; a fork whose only news is its own accepted change is in step;
/// a snapshot taken before still reads the suggestion open; the cooks'
/// lists and the recipe's history say it; and it all goes through an
/// export and the domain's import unchanged.
#[test]
fn a_suggestion_taken_is_facts_read_at_any_basis_and_carried_by_export_and_import() {
    use forkful::domain::import_check::RecipeImportCheck;
    use forkful::domain::pages::cook_suggestions;
    use forkful::store::{export, import_with};
    use std::io::{BufReader, Cursor};

    let (recipes, parent, fork) = a_parent_and_its_fork();
    // Ben brings in version 2 first, so the fork agrees with the parent's
    // newest: what he suggests is his own change alone.
    recipes
        .bring_in(&fork, v(1), v(2), &[], &Change::by("ben", "in step"))
        .unwrap();
    recipes
        .suggest(&fork, v(2), "Less sugar", &Change::by("ben", "suggest"))
        .unwrap();
    let before = recipes.snapshot();
    recipes
        .accept_suggestion(
            &parent,
            1,
            Review::of(v(2), v(2)),
            &[],
            "",
            &Change::by("ann", "yes"),
        )
        .unwrap();
    let view = recipes.snapshot();
    let parent_id = view.recipe(&parent).unwrap().id;
    let fork_id = view.recipe(&fork).unwrap().id;
    // The value before the acceptance is unchanged: open, nothing taken.
    let then = before.suggestion(parent_id, 1).unwrap().unwrap();
    assert_eq!(then.state.as_str(), "open");
    assert!(before.taken_from(fork_id).unwrap().is_empty());
    // Now: taken, from the fork's version 2, in the parent's version 3.
    let taken = view.taken_from(fork_id).unwrap();
    assert_eq!(taken.len(), 1);
    assert_eq!(
        (
            taken[0].number,
            taken[0].fork_version,
            taken[0].parent_version
        ),
        (1, v(2), v(3))
    );
    // Taken whole (the parent had nothing of its own since): the fork is
    // in step with the version that took it, with nothing to suggest.
    let page = pages::recipe_show(&view, &fork, Default::default()).unwrap();
    let apart = page.apart.unwrap();
    assert_eq!((apart.since, apart.newest, apart.taken), (v(3), v(3), 0));
    assert_eq!(apart.gained(), 0, "its own change is no news to the fork");
    assert!(!page.can_suggest);
    // The parent's history links the fork's version it took; the fork's
    // links the parent's version it brought in.
    let history = pages::history(&view, &parent, None).unwrap();
    assert!(
        matches!(
            &history.origins[..],
            [(n, Origin::Took { number: 1, fork: f, version })]
                if *n == v(3) && f.slug == "banana-bread-ben" && *version == v(2)
        ),
        "{:?}",
        history.origins
    );
    // The fork's history links the parent's version it brought in, and
    // says where its version suggested was taken.
    let history = pages::history(&view, &fork, None).unwrap();
    assert!(
        matches!(
            &history.origins[..],
            [
                (taken, Origin::TakenUpstream { number: 1, parent: up, version: took }),
                (n, Origin::BroughtIn { parent: p, version })
            ]
                if *taken == v(2) && up.slug == "banana-bread" && *took == v(3)
                    && *n == v(2) && p.slug == "banana-bread" && *version == v(2)
        ),
        "{:?}",
        history.origins
    );
    // Each cook's lists.
    let ann = cook_suggestions(&view, &slug("ann")).unwrap();
    assert_eq!(
        (ann.received.len(), ann.received_total, ann.sent_total),
        (1, 1, 0)
    );
    assert_eq!(ann.received[0].from.slug, "banana-bread-ben");
    let ben = cook_suggestions(&view, &slug("ben")).unwrap();
    assert_eq!((ben.received_total, ben.sent.len()), (0, 1));
    assert_eq!(ben.sent[0].suggestion.state.as_str(), "accepted");

    // Through an export and the domain's import: the same reads.
    let mut file = Vec::new();
    export(&recipes.store().db(), &mut file).unwrap();
    let copy = Store::temporary().unwrap();
    import_with(
        &copy,
        || Ok(BufReader::new(Cursor::new(file.clone()))),
        &mut RecipeImportCheck::default(),
        &mut |_| {},
    )
    .unwrap();
    let copied = Recipes::open(copy).unwrap();
    let again = copied.snapshot();
    assert_eq!(
        again.suggestions_to(parent_id).unwrap(),
        view.suggestions_to(parent_id).unwrap()
    );
    assert_eq!(
        again.merges(fork_id).unwrap(),
        view.merges(fork_id).unwrap()
    );
    assert_eq!(again.taken_from(fork_id).unwrap(), taken);
    assert_eq!(
        pages::history(&again, &parent, None).unwrap().origins,
        pages::history(&view, &parent, None).unwrap().origins
    );
}

/// An open suggestion follows its fork: after the fork brings in its
/// parent's changes, it proposes only the fork's own (its base moves);
/// and a fork that is retired withdraws its open suggestion.
#[test]
fn an_open_suggestion_follows_its_forks_merges_and_a_retired_fork_withdraws_it() {
    let (recipes, parent, fork) = a_parent_and_its_fork();
    recipes
        .suggest(&fork, v(1), "Less sugar", &Change::by("ben", "suggest"))
        .unwrap();
    let view = recipes.snapshot();
    let parent_id = view.recipe(&parent).unwrap().id;
    let s = view.suggestion(parent_id, 1).unwrap().unwrap();
    assert_eq!((s.base_version, s.from_version), (v(1), v(1)));
    recipes
        .bring_in(&fork, v(1), v(2), &[], &Change::by("ben", "in step"))
        .unwrap();
    let view = recipes.snapshot();
    let s = view.suggestion(parent_id, 1).unwrap().unwrap();
    assert_eq!(
        (s.base_version, s.from_version),
        (v(2), v(2)),
        "based on the parent's version brought in"
    );
    let shown = pages::suggestion_show(&view, &parent, 1).unwrap();
    let changed: Vec<String> = shown
        .proposed
        .ingredients
        .iter()
        .filter(|line| !matches!(line, forkful::domain::diff::LineChange::Same(_)))
        .map(|line| format!("{line:?}"))
        .collect();
    assert!(
        !changed.is_empty() && changed.iter().all(|line| line.contains("sugar")),
        "only the sugar line, not the parent's own bananas: {changed:?}"
    );
    assert!(
        shown.since_base.is_empty(),
        "the parent has not moved since"
    );
    recipes
        .retire(&fork, v(2), &Change::by("ben", "retire"))
        .unwrap();
    let view = recipes.snapshot();
    let s = view.suggestion(parent_id, 1).unwrap().unwrap();
    assert_eq!(s.state.as_str(), "withdrawn");
    assert_eq!(view.open_suggestions(parent_id).unwrap(), 0);
}

/// `ann`'s soup with `lines`, and `ben`'s fork of it, both at version 1.
fn soup_and_fork(lines: &[&str]) -> (Recipes, Slug, Slug) {
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    let soup = slug("soup");
    recipes
        .create(
            &soup,
            content("Soup", lines, &["Simmer."]),
            &Change::by("ann", "soup"),
        )
        .unwrap();
    let (fork, _) = recipes
        .fork(&soup, None, None, |c| c, &Change::by("ben", "fork"))
        .unwrap();
    (recipes, soup, fork)
}

/// `content` with its ingredients replaced by `lines`.
fn with_lines(c: impl Into<ContentDraft>, lines: &[&str]) -> ContentDraft {
    let mut c = c.into();
    c.ingredients = lines.iter().map(|l| l.to_string()).collect();
    c
}

/// The author's answer stands until the fork changes: a suggestion
/// declined cannot be sent again from a fork that changed and changed
/// back, nor one taken in part (the author kept her own side of a
/// conflict) from the same recipe; neither page offers it. An accept that
/// takes the fork's side of every conflict leaves the fork in step.
#[test]
fn an_answered_suggestion_is_not_sent_again_until_the_fork_changes() {
    let (recipes, soup, fork) = soup_and_fork(&["2 onions", "1 l stock"]);
    let ben = |n| Change::by("ben", n);
    let ann = |n| Change::by("ann", n);
    let lines = |s: &Slug| recipes.snapshot().recipe(s).unwrap().content;
    let can_suggest = || {
        pages::recipe_show(&recipes.snapshot(), &fork, Default::default())
            .unwrap()
            .can_suggest
    };
    let bay = &["2 onions", "1 l stock", "1 bay leaf"];
    recipes
        .edit(&fork, v(1), with_lines(lines(&fork), bay), &ben("bay"))
        .unwrap();
    recipes.suggest(&fork, v(2), "Bay", &ben("s")).unwrap();
    recipes
        .decline_suggestion(&soup, 1, Review::of(v(1), v(2)), "No bay", &ann("no"))
        .unwrap();
    // Thyme in, thyme out: version 4 is version 2 again.
    let thyme = &["2 onions", "1 l stock", "1 bay leaf", "1 sprig thyme"];
    recipes
        .edit(&fork, v(2), with_lines(lines(&fork), thyme), &ben("thyme"))
        .unwrap();
    assert!(can_suggest(), "thyme is new");
    recipes
        .edit(&fork, v(3), with_lines(lines(&fork), bay), &ben("no thyme"))
        .unwrap();
    assert!(matches!(
        recipes.suggest(&fork, v(4), "Bay again", &ben("s")),
        Err(DomainError::DeclinedAlready { number: 1 })
    ));
    assert!(!can_suggest());
    assert_eq!(
        pages::suggest_show(&recipes.snapshot(), &fork)
            .unwrap()
            .blocked,
        Some(pages::Blocked::Declined(1))
    );
    // Red onions against Ann's three, with the bay: Ann takes the bay and
    // keeps her onions.
    let red = &["2 red onions", "1 l stock", "1 bay leaf"];
    recipes
        .edit(&fork, v(4), with_lines(lines(&fork), red), &ben("red"))
        .unwrap();
    let three = &["3 onions", "1 l stock"];
    recipes
        .edit(&soup, v(1), with_lines(lines(&soup), three), &ann("three"))
        .unwrap();
    recipes
        .suggest(&fork, v(5), "Red onions", &ben("s"))
        .unwrap();
    recipes
        .accept_suggestion(
            &soup,
            2,
            Review::of(v(2), v(5)),
            &[Choice::Mine],
            "",
            &ann("part"),
        )
        .unwrap();
    assert_eq!(
        lines(&soup).ingredients(),
        ["3 onions", "1 l stock", "1 bay leaf"]
    );
    assert!(matches!(
        recipes.suggest(&fork, v(5), "Red onions, please", &ben("s")),
        Err(DomainError::TakenInPart { number: 2 })
    ));
    assert!(!can_suggest());
    assert_eq!(
        pages::suggest_show(&recipes.snapshot(), &fork)
            .unwrap()
            .blocked,
        Some(pages::Blocked::TakenInPart(2))
    );
    // Half a change more, and it may ask again; Ann takes the fork's side
    // of the onions this time: the fork is in step.
    let carrot = &["2 red onions", "1 l stock", "1 bay leaf", "1 carrot"];
    recipes
        .edit(
            &fork,
            v(5),
            with_lines(lines(&fork), carrot),
            &ben("carrot"),
        )
        .unwrap();
    assert!(can_suggest());
    recipes.suggest(&fork, v(6), "A carrot", &ben("s")).unwrap();
    recipes
        .accept_suggestion(
            &soup,
            3,
            Review::of(v(3), v(6)),
            &[Choice::Theirs],
            "",
            &ann("all"),
        )
        .unwrap();
    assert_eq!(lines(&soup).ingredients(), lines(&fork).ingredients());
    let view = recipes.snapshot();
    let page = pages::recipe_show(&view, &fork, Default::default()).unwrap();
    let apart = page.apart.unwrap();
    assert_eq!((apart.since, apart.newest, apart.gained()), (v(4), v(4), 0));
    assert!(!page.can_suggest);
}

/// An author who writes by hand exactly the suggestion's line took it:
/// not "in part", and the fork is in step.
#[test]
fn a_conflict_written_by_hand_as_the_suggestion_has_it_is_taken_whole() {
    let (recipes, soup, fork) = soup_and_fork(&["600 g onions", "1 l stock"]);
    let lines = |s: &Slug| recipes.snapshot().recipe(s).unwrap().content;
    let red = &["600 g red onions", "1 l stock"];
    recipes
        .edit(
            &fork,
            v(1),
            with_lines(lines(&fork), red),
            &Change::by("ben", "red"),
        )
        .unwrap();
    recipes
        .suggest(&fork, v(2), "Red", &Change::by("ben", "s"))
        .unwrap();
    let sweet = &["600 g sweet onions", "1 l stock"];
    recipes
        .edit(
            &soup,
            v(1),
            with_lines(lines(&soup), sweet),
            &Change::by("ann", "sweet"),
        )
        .unwrap();
    recipes
        .accept_suggestion(
            &soup,
            1,
            Review::of(v(2), v(2)),
            &[Choice::Edited(" 600 g red onions \n".into())],
            "",
            &Change::by("ann", "by hand"),
        )
        .unwrap();
    let view = recipes.snapshot();
    let taken = view
        .suggestion(view.recipe(&soup).unwrap().id, 1)
        .unwrap()
        .unwrap();
    assert_eq!((taken.kept_own, taken.whole), (Some(0), Some(true)));
    let page = pages::recipe_show(&view, &fork, Default::default()).unwrap();
    let apart = page.apart.unwrap();
    assert_eq!((apart.since, apart.newest, apart.gained()), (v(3), v(3), 0));
}

/// A declined change is the same change after the fork brought in one of
/// its parent's: Ben's fork moved, but his own change did not.
#[test]
fn a_declined_change_is_not_sent_again_after_the_fork_brings_in_another() {
    let (recipes, soup, fork) = soup_and_fork(&["600 g onions", "1 l stock"]);
    let ben = |n| Change::by("ben", n);
    let ann = |n| Change::by("ann", n);
    let lines = |s: &Slug| recipes.snapshot().recipe(s).unwrap().content;
    let can_suggest = || {
        pages::recipe_show(&recipes.snapshot(), &fork, Default::default())
            .unwrap()
            .can_suggest
    };
    let red = &["600 g red onions", "1 l stock"];
    recipes
        .edit(&fork, v(1), with_lines(lines(&fork), red), &ben("red"))
        .unwrap();
    recipes.suggest(&fork, v(2), "Red", &ben("s")).unwrap();
    recipes
        .decline_suggestion(&soup, 1, Review::of(v(1), v(2)), "White", &ann("no"))
        .unwrap();
    let mut noted = lines(&soup).into_draft();
    noted.notes = Some("Good with bread.".into());
    recipes.edit(&soup, v(1), noted, &ann("note")).unwrap();
    recipes
        .bring_in(&fork, v(2), v(2), &[], &ben("note in"))
        .unwrap();
    assert_eq!(lines(&fork).notes(), Some("Good with bread."));
    assert!(matches!(
        recipes.suggest(&fork, v(3), "Red, again", &ben("s")),
        Err(DomainError::DeclinedAlready { number: 1 })
    ));
    assert!(!can_suggest());
    assert_eq!(
        pages::suggest_show(&recipes.snapshot(), &fork)
            .unwrap()
            .blocked,
        Some(pages::Blocked::Declined(1))
    );
    // A change of his own more: it may ask again.
    let salted = &["600 g red onions", "1 l stock", "salt"];
    recipes
        .edit(&fork, v(3), with_lines(lines(&fork), salted), &ben("salt"))
        .unwrap();
    assert!(can_suggest());
    recipes.suggest(&fork, v(4), "Salt", &ben("s")).unwrap();
}

/// The review's case: Ann opens Ben's suggestion (a pinch of salt); Ben
/// then adds bleach to his fork, which the open suggestion follows. Her
/// accept, and her decline, made from the review she saw, save nothing.
#[test]
fn an_accept_or_decline_acts_only_on_the_fork_version_its_review_showed() {
    let (recipes, soup, fork) = soup_and_fork(&["2 carrots", "1 l stock"]);
    let ben = |n| Change::by("ben", n);
    let ann = |n| Change::by("ann", n);
    let now = |s: &Slug| recipes.snapshot().recipe(s).unwrap().content;
    recipes
        .edit(
            &fork,
            v(1),
            with_lines(now(&fork), &["2 carrots", "1 l stock", "a pinch of salt"]),
            &ben("salt"),
        )
        .unwrap();
    recipes
        .suggest(&fork, v(2), "Salt", &ben("suggest"))
        .unwrap();
    // Ann's review shows soup version 1 against Ben's version 2.
    let shown = Review::of(v(1), v(2));
    recipes
        .edit(
            &fork,
            v(2),
            with_lines(
                now(&fork),
                &["2 carrots", "1 l stock", "a pinch of salt", "1 cup bleach"],
            ),
            &ben("bleach"),
        )
        .unwrap();
    let before = stored(recipes.store());
    let accepted = recipes.accept_suggestion(&soup, 1, shown, &[], "", &ann("yes"));
    assert!(
        matches!(&accepted, Err(DomainError::MergeMoved { slug, newest, .. })
            if slug == "soup-ben" && *newest == v(3)),
        "{accepted:?}"
    );
    assert!(matches!(
        recipes.decline_suggestion(&soup, 1, shown, "no", &ann("no")),
        Err(DomainError::MergeMoved { .. })
    ));
    assert!(stored(recipes.store()) == before, "a stale review wrote");
    assert_eq!(now(&soup).ingredients(), ["2 carrots", "1 l stock"]);
    // Reviewed again, as it is now, she declines it.
    recipes
        .decline_suggestion(&soup, 1, Review::of(v(1), v(3)), "No bleach", &ann("no"))
        .unwrap();
    assert_eq!(now(&soup).ingredients(), ["2 carrots", "1 l stock"]);
}

/// A bring-in form shows the parent's newest version: once the parent has
/// a newer one, that form saves nothing.
#[test]
fn a_bring_in_acts_only_on_the_parent_version_its_form_showed() {
    let (recipes, parent, fork) = a_parent_and_its_fork();
    let view = recipes.snapshot();
    let shown = view
        .parent_changes(&view.recipe(&fork).unwrap(), None)
        .unwrap();
    assert_eq!(shown.upto, v(2));
    let mut moved = view.recipe(&parent).unwrap().content.into_draft();
    moved.notes = Some("Freezes well.".into());
    recipes
        .edit(&parent, v(2), moved, &Change::by("ann", "notes"))
        .unwrap();
    let before = stored(recipes.store());
    assert!(matches!(
        recipes.bring_in(&fork, v(1), v(2), &[], &Change::by("ben", "in")),
        Err(DomainError::MergeMoved { newest, .. }) if newest == v(3)
    ));
    assert!(stored(recipes.store()) == before);
}

/// Taken with nothing of the parent's own beside it, a suggestion puts
/// the fork in step with the version that took it: nothing to bring in,
/// nothing to suggest, until the fork changes again.
#[test]
fn a_suggestion_taken_whole_puts_the_fork_in_step() {
    let (recipes, soup, fork) = soup_and_fork(&["2 carrots", "1 l stock"]);
    let ben = |n| Change::by("ben", n);
    let snap = || recipes.snapshot();
    let mut changed = snap().recipe(&fork).unwrap().content.into_draft();
    changed.title = "Ben's soup".into();
    changed.ingredients.push("salt".into());
    recipes.edit(&fork, v(1), changed, &ben("salt")).unwrap();
    assert!(
        pages::recipe_show(&snap(), &fork, Default::default())
            .unwrap()
            .can_suggest
    );
    recipes
        .suggest(&fork, v(2), "Salt", &ben("suggest"))
        .unwrap();
    recipes
        .accept_suggestion(
            &soup,
            1,
            Review::of(v(1), v(2)),
            &[],
            "",
            &Change::by("ann", "yes"),
        )
        .unwrap();
    let view = snap();
    let fork_now = view.recipe(&fork).unwrap();
    let agreed = view.agreed(&fork_now).unwrap().unwrap();
    assert_eq!((agreed.version, agreed.newest), (v(2), v(2)));
    assert_eq!(view.recipe(&soup).unwrap().content.title(), "Soup");
    assert!(matches!(
        pages::bring_in_show(&view, &fork).unwrap(),
        pages::BringIn::InStep(_)
    ));
    assert!(matches!(
        recipes.bring_in(&fork, v(2), v(2), &[], &ben("again")),
        Err(DomainError::UpToDate { .. })
    ));
    let page = pages::recipe_show(&view, &fork, Default::default()).unwrap();
    assert!(!page.can_suggest, "its newest version was taken as it is");
    assert_eq!(page.apart.unwrap().gained(), 0);
    assert_eq!(
        pages::suggest_show(&view, &fork).unwrap().blocked,
        Some(pages::Blocked::NothingToSuggest)
    );
    assert!(matches!(
        recipes.suggest(&fork, v(2), "Again", &ben("again")),
        Err(DomainError::NothingChanged)
    ));
    // A change of its own since: there is something to suggest again,
    // and only that.
    let mut more = snap().recipe(&fork).unwrap().content.into_draft();
    more.notes = Some("Better the next day.".into());
    recipes.edit(&fork, v(2), more, &ben("notes")).unwrap();
    let view = snap();
    assert!(
        pages::recipe_show(&view, &fork, Default::default())
            .unwrap()
            .can_suggest
    );
    let suggest = pages::suggest_show(&view, &fork).unwrap();
    assert_eq!(suggest.blocked, None);
    assert_eq!(suggest.change.summary(), "notes", "{:?}", suggest.change);
}

/// Taken beside a change of the parent's own, a suggestion leaves the
/// fork behind (the parent's change is new to it), and the fork's next
/// merge starts from what it sent: the changes both now have are no
/// conflict, though a merge from the older base would see one.
#[test]
fn a_suggestion_taken_beside_the_parents_own_change_leaves_the_fork_behind_and_merges_from_what_it_sent(
) {
    let (recipes, soup, fork) = soup_and_fork(&["2 carrots", "1 onion", "1 l stock"]);
    let snap = || recipes.snapshot();
    let lines = |s: &Slug| snap().recipe(s).unwrap().content;
    recipes
        .edit(
            &fork,
            v(1),
            with_lines(lines(&fork), &["2 carrots", "1 red onion", "1 l stock"]),
            &Change::by("ben", "red"),
        )
        .unwrap();
    recipes
        .suggest(&fork, v(2), "A red onion", &Change::by("ben", "suggest"))
        .unwrap();
    recipes
        .edit(
            &soup,
            v(1),
            with_lines(lines(&soup), &["3 carrots", "1 onion", "1.5 l stock"]),
            &Change::by("ann", "more"),
        )
        .unwrap();
    recipes
        .accept_suggestion(
            &soup,
            1,
            Review::of(v(2), v(2)),
            &[],
            "",
            &Change::by("ann", "yes"),
        )
        .unwrap();
    assert_eq!(
        lines(&soup).ingredients(),
        ["3 carrots", "1 red onion", "1.5 l stock"]
    );
    let view = snap();
    let fork_now = view.recipe(&fork).unwrap();
    let agreed = view.agreed(&fork_now).unwrap().unwrap();
    assert_eq!((agreed.version, agreed.newest), (v(1), v(3)), "behind");
    assert_eq!(agreed.base.fork_version, Some(v(2)));
    let changes = view.parent_changes(&fork_now, None).unwrap();
    assert!(changes.merge.is_clean(), "{:?}", changes.merge.conflicts());
    // From the soup's version 1, the parent's one change over all three
    // lines meets the fork's: one conflict.
    let from_old_base = forkful::domain::merge::merge(
        &view.version(&soup, v(1)).unwrap().1,
        &fork_now.content,
        &changes.parent_content,
    );
    assert_eq!(from_old_base.conflicts().len(), 1);
    recipes
        .bring_in(&fork, v(2), v(3), &[], &Change::by("ben", "in"))
        .unwrap();
    assert_eq!(
        lines(&fork).ingredients(),
        ["3 carrots", "1 red onion", "1.5 l stock"]
    );
}

/// A suggestion of a title alone is empty (the title is the fork's own,
/// never sent); so is an accept of what the recipe has already.
#[test]
fn empty_suggestions_and_empty_accepts_are_refused() {
    let (recipes, soup, fork) = soup_and_fork(&["2 carrots", "1 l stock"]);
    let mut renamed = recipes
        .snapshot()
        .recipe(&fork)
        .unwrap()
        .content
        .into_draft();
    renamed.title = "Ben's soup".into();
    recipes
        .edit(&fork, v(1), renamed.clone(), &Change::by("ben", "name"))
        .unwrap();
    assert!(matches!(
        recipes.suggest(&fork, v(2), "My name", &Change::by("ben", "s")),
        Err(DomainError::NothingChanged)
    ));
    assert!(
        !pages::recipe_show(&recipes.snapshot(), &fork, Default::default())
            .unwrap()
            .can_suggest
    );
    recipes
        .edit(
            &fork,
            v(2),
            with_lines(renamed, &["2 carrots", "1 l stock", "salt"]),
            &Change::by("ben", "salt"),
        )
        .unwrap();
    recipes
        .suggest(&fork, v(3), "Salt", &Change::by("ben", "s"))
        .unwrap();
    // Ann adds the salt herself before she reads it.
    let soup_now = recipes.snapshot().recipe(&soup).unwrap().content;
    recipes
        .edit(
            &soup,
            v(1),
            with_lines(soup_now, &["2 carrots", "1 l stock", "salt"]),
            &Change::by("ann", "salt"),
        )
        .unwrap();
    let before = stored(recipes.store());
    assert!(matches!(
        recipes.accept_suggestion(
            &soup,
            1,
            Review::of(v(2), v(3)),
            &[],
            "",
            &Change::by("ann", "y")
        ),
        Err(DomainError::NothingChanged)
    ));
    assert!(stored(recipes.store()) == before);
}

/// A retired recipe takes no suggestion, and retiring it closes those
/// open (it answered 410 to both buttons of one still shown open).
#[test]
fn retiring_a_recipe_closes_its_open_suggestions_and_takes_no_more() {
    let (recipes, soup, fork) = soup_and_fork(&["2 carrots", "1 l stock"]);
    let salted = with_lines(
        recipes.snapshot().recipe(&fork).unwrap().content,
        &["2 carrots", "1 l stock", "salt"],
    );
    recipes
        .edit(&fork, v(1), salted, &Change::by("ben", "salt"))
        .unwrap();
    recipes
        .suggest(&fork, v(2), "Salt", &Change::by("ben", "s"))
        .unwrap();
    recipes
        .retire(&soup, v(1), &Change::by("ann", "retire"))
        .unwrap();
    let view = recipes.snapshot();
    let soup_id = view.recipe(&soup).unwrap().id;
    let s = view.suggestion(soup_id, 1).unwrap().unwrap();
    assert_eq!(s.state.as_str(), "closed");
    assert_eq!(view.open_suggestions(soup_id).unwrap(), 0);
    assert_eq!(
        pages::suggest_show(&view, &fork).unwrap().blocked,
        Some(pages::Blocked::ParentRetired)
    );
    assert!(matches!(
        recipes.suggest(&fork, v(2), "Again", &Change::by("ben", "s")),
        Err(DomainError::Retired { .. })
    ));
}

/// History says how each conflict was settled; the fork says how many of
/// the parent's changes it kept its own version of, until its next merge.
#[test]
fn history_says_how_each_conflict_was_settled_and_the_fork_what_it_kept() {
    let (recipes, soup, fork) = soup_and_fork(&["2 carrots", "1 onion", "1 l stock"]);
    let lines = |s: &Slug| recipes.snapshot().recipe(s).unwrap().content;
    recipes
        .edit(
            &fork,
            v(1),
            with_lines(lines(&fork), &["3 carrots", "1 onion", "1 l stock"]),
            &Change::by("ben", "3"),
        )
        .unwrap();
    recipes
        .edit(
            &soup,
            v(1),
            with_lines(lines(&soup), &["4 carrots", "1 onion", "1 l stock"]),
            &Change::by("ann", "4"),
        )
        .unwrap();
    // Keeping his own side of the one conflict changes nothing of the
    // fork: no version, an agreement that it is in step, which history
    // shows on the version that agrees.
    let before = recipes.snapshot().recipe(&fork).unwrap();
    recipes
        .bring_in(
            &fork,
            v(2),
            v(2),
            &[Choice::Mine],
            &Change::by("ben", "kept 3"),
        )
        .unwrap();
    let view = recipes.snapshot();
    let now = view.recipe(&fork).unwrap();
    assert_eq!(now.version_count, before.version_count, "no empty version");
    assert_eq!(now.content, before.content);
    let agreements = view.agreements(now.id).unwrap();
    assert_eq!(agreements.len(), 1);
    assert_eq!(
        (
            agreements[0].parent_version,
            agreements[0].fork_version,
            agreements[0].kept_own
        ),
        (v(2), v(2), 1)
    );
    let history = pages::history(&view, &fork, None).unwrap();
    assert_eq!(history.total, 2);
    assert!(
        history.origins.iter().any(|(n, o)| *n == v(2)
            && matches!(o, Origin::InStep { version, settled: Some(s), .. }
                if *version == v(2) && s == "ingredients kept its own")),
        "{:?}",
        history.origins
    );
    let page = pages::recipe_show(&view, &fork, Default::default()).unwrap();
    let apart = page.apart.unwrap();
    assert_eq!((apart.since, apart.newest, apart.kept_own), (v(2), v(2), 1));
    assert!(matches!(
        pages::bring_in_show(&view, &fork).unwrap(),
        pages::BringIn::InStep(_)
    ));
    // The next merge, with no conflict, kept nothing of its own; it
    // changes the fork, so it is a version.
    recipes
        .edit(
            &soup,
            v(2),
            with_lines(lines(&soup), &["4 carrots", "1 onion", "1 l stock", "salt"]),
            &Change::by("ann", "salt"),
        )
        .unwrap();
    recipes
        .bring_in(&fork, v(2), v(3), &[], &Change::by("ben", "salt"))
        .unwrap();
    let view = recipes.snapshot();
    let now = view.recipe(&fork).unwrap();
    assert_eq!(now.version_count, 3);
    let apart = pages::recipe_show(&view, &fork, Default::default())
        .unwrap()
        .apart
        .unwrap();
    assert_eq!((apart.since, apart.kept_own), (v(3), 0));
    let history = view.changes(now.id).unwrap();
    assert_eq!(
        history.last().unwrap().1,
        "brought in version 3 of Soup: 1 ingredient"
    );
}

/// Both cooks made the same change: the fork has every change of its
/// parent, but its record says it is behind. The bring-in page says so,
/// and recording it makes no version.
#[test]
fn a_fork_that_made_its_parents_change_itself_is_recorded_in_step_without_a_version() {
    let (recipes, soup, fork) = soup_and_fork(&["2 carrots", "1 l stock"]);
    let lines = |s: &Slug| recipes.snapshot().recipe(s).unwrap().content;
    let salted = &["2 carrots", "1 l stock", "salt"];
    recipes
        .edit(
            &fork,
            v(1),
            with_lines(lines(&fork), salted),
            &Change::by("ben", "salt"),
        )
        .unwrap();
    recipes
        .edit(
            &soup,
            v(1),
            with_lines(lines(&soup), salted),
            &Change::by("ann", "salt"),
        )
        .unwrap();
    let view = recipes.snapshot();
    let pages::BringIn::InStep(shown) = pages::bring_in_show(&view, &fork).unwrap() else {
        panic!("nothing to bring in");
    };
    assert!(shown.unrecorded);
    let page = pages::recipe_show(&view, &fork, Default::default()).unwrap();
    assert!(
        !page.can_suggest,
        "behind, but its parent made its change: nothing to suggest"
    );
    assert_eq!(
        pages::suggest_show(&view, &fork).unwrap().blocked,
        Some(pages::Blocked::NothingToSuggest),
        "the parent has it: nothing to suggest"
    );
    recipes
        .bring_in(&fork, v(2), v(2), &[], &Change::by("ben", "in step"))
        .unwrap();
    let view = recipes.snapshot();
    let now = view.recipe(&fork).unwrap();
    assert_eq!(now.version_count, 2, "no version");
    let page = pages::recipe_show(&view, &fork, Default::default()).unwrap();
    let apart = page.apart.unwrap();
    assert_eq!((apart.since, apart.newest, apart.gained()), (v(2), v(2), 0));
    assert!(!page.can_suggest);
    let pages::BringIn::InStep(shown) = pages::bring_in_show(&view, &fork).unwrap() else {
        panic!("nothing to bring in");
    };
    assert!(!shown.unrecorded);
    assert!(matches!(
        recipes.bring_in(&fork, v(2), v(2), &[], &Change::by("ben", "again")),
        Err(DomainError::UpToDate { .. })
    ));
}

/// A merge whose result would pass the content limits says so on the
/// bring-in page, with how much to take out, before any note is written.
#[test]
fn a_merge_past_the_limits_says_what_to_trim() {
    let (recipes, soup, fork) = soup_and_fork(&["2 carrots"]);
    let steps = |who: &str| -> Vec<Step> {
        (0..150)
            .map(|i| Step {
                section: None,
                text: format!("{who}'s step {i}."),
            })
            .collect()
    };
    let mut mine = recipes
        .snapshot()
        .recipe(&fork)
        .unwrap()
        .content
        .into_draft();
    mine.steps.extend(steps("Ben"));
    recipes
        .edit(&fork, v(1), mine, &Change::by("ben", "steps"))
        .unwrap();
    let mut theirs = recipes
        .snapshot()
        .recipe(&soup)
        .unwrap()
        .content
        .into_draft();
    theirs.steps = [steps("Ann"), theirs.steps].concat();
    recipes
        .edit(&soup, v(1), theirs, &Change::by("ann", "steps"))
        .unwrap();
    let view = recipes.snapshot();
    let pages::BringIn::Changes(show) = pages::bring_in_show(&view, &fork).unwrap() else {
        panic!("there are changes to bring in");
    };
    assert_eq!(
        show.over_limits,
        [
            "Merged, the recipe would have 301 steps, and a recipe has at most 200: \
          take out at least 101 of your 151 first."
        ]
    );
    // Saved anyway, the merge itself refuses: with the parse's words.
    let refused = recipes.bring_in(&fork, v(2), v(2), &[], &Change::by("ben", "in"));
    let Err(DomainError::Unresolved(Unresolved::Refused(mistakes))) = refused else {
        panic!("refused by the merge: {refused:?}");
    };
    assert_eq!(
        mistakes.iter().map(|m| m.field()).collect::<Vec<_>>(),
        [ContentField::Steps]
    );
}

/// Ann's dal, and Ben's fork of it with cumin for turmeric; Ann then
/// grinds her turmeric: the two change the same line.
async fn dal_and_bens_fork() -> (
    Recipes,
    actix_web::web::Data<forkful::web::Site>,
    Browser,
    Browser,
) {
    let (recipes, site) = new_site();
    let (mut ann, ben) = ann_writes_and_ben_forks(&site, ("Ann", "Ben")).await;
    ann_edits_her_dal(
        &mut ann,
        "1 cup red lentils\n3 cups water\n1 tsp turmeric, ground",
        "ground",
    )
    .await;
    (recipes, site, ann, ben)
}

/// Ben edits his fork's summary, in another tab: a change that meets
/// nothing of the merge.
async fn ben_edits_his_summary(ben: &mut Browser, summary: &str) {
    let edit = ben.get("/recipes/bens-dal/edit").await;
    let moved = ben
        .submit(
            &edit,
            "/recipes/bens-dal/edit",
            &recipe_fields(&[
                ("slug", "bens-dal"),
                ("title", "Ben's dal"),
                (
                    "ingredients",
                    "1 cup red lentils\n3 cups water\n1 tsp cumin",
                ),
                ("summary", summary),
                ("note", "summary"),
            ]),
        )
        .await;
    assert_eq!(moved.status, 303, "{}", moved.body);
}

/// The bring-in form offers each way to settle a conflict, names the
/// other cook, previews the whole recipe (its button, and the live
/// preview's address), and keeps the cook's choice when the fork moved on
/// in a way the conflict does not see.
#[actix_web::test]
async fn over_the_web_a_bring_in_keeps_both_writes_by_hand_previews_and_keeps_choices_across_a_409()
{
    let (recipes, _site, _ann, mut ben) = dal_and_bens_fork().await;
    let action = "/recipes/bens-dal/bring-in";
    let form = ben.get(action).await;
    assert_eq!(form.status, 200, "{}", form.body);
    let labels: Vec<String> = form
        .texts("fieldset.conflict label")
        .iter()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    assert!(labels[0].starts_with("Keep yours"), "{labels:?}");
    assert!(labels[1].starts_with("Take Ann's"), "{labels:?}");
    assert_eq!(
        labels[2..],
        ["Keep both: yours first, then Ann's", "Write it yourself:"]
    );
    assert_eq!(
        form.texts_raw("fieldset.conflict textarea"),
        ["1 tsp cumin\n1 tsp turmeric, ground"],
        "the box starts with both sides"
    );
    assert_eq!(
        form.attrs("section.preview", "data-preview-url"),
        ["/recipes/bens-dal/bring-in/preview"]
    );
    let note = ("note", "The ground turmeric too");
    // The Preview button: the page again, the merged recipe in it.
    let previewed = ben
        .submit(
            &form,
            action,
            &[note, ("choice-0", "both"), ("action", "preview")],
        )
        .await;
    assert_eq!(previewed.status, 200, "{}", previewed.body);
    assert_eq!(
        previewed.texts("section.preview .ingredients li"),
        [
            "1 cup red lentils",
            "3 cups water",
            "1 tsp cumin",
            "1 tsp turmeric, ground"
        ]
    );
    assert_eq!(
        previewed.attrs("fieldset.conflict input[checked]", "value"),
        ["both"],
        "the choice is kept"
    );
    // The live preview: the recipe alone, or what is left to choose.
    // As the page's script sends it: the form's fields, to the preview's
    // address.
    let hidden = hidden_fields(&form, action);
    let live_url = "/recipes/bens-dal/bring-in/preview";
    let origin = Some("http://forkful.test");
    let live = ben
        .post(
            live_url,
            &filled_in(
                &hidden,
                &[("choice-0", "edit"), ("edit-0", "1 tsp cumin, toasted")],
            ),
            origin,
        )
        .await;
    assert_eq!(live.status, 200, "{}", live.body);
    assert_eq!(
        live.texts(".ingredients li"),
        ["1 cup red lentils", "3 cups water", "1 tsp cumin, toasted"]
    );
    assert!(
        !live.body.contains("<html"),
        "the recipe alone: {}",
        live.body
    );
    let unready = ben.post(live_url, &filled_in(&hidden, &[]), origin).await;
    assert!(unready.body.contains("(1 left)"), "{}", unready.body);
    // Ben chooses theirs; his fork moves on meanwhile, elsewhere: 409, the
    // merge made again, and his choice still there for the same conflict.
    ben_edits_his_summary(&mut ben, "Red lentils and cumin.").await;
    let before = stored(recipes.store());
    let stale = ben
        .submit(&form, action, &[note, ("choice-0", "theirs")])
        .await;
    assert_eq!(stale.status, 409, "{}", stale.body);
    assert!(stored(recipes.store()) == before);
    assert_eq!(
        stale.attrs("fieldset.conflict input[checked]", "value"),
        ["theirs"],
        "{}",
        stale.body
    );
    // Written by hand, from the page as it is now.
    let saved = ben
        .submit(
            &stale,
            action,
            &[
                note,
                ("choice-0", "edit"),
                ("edit-0", "1 tsp cumin\n\n1 tsp turmeric"),
            ],
        )
        .await;
    assert_eq!(saved.status, 303, "{}", saved.body);
    let now = recipes.snapshot().recipe(&slug("bens-dal")).unwrap();
    assert_eq!(
        now.content.ingredients(),
        [
            "1 cup red lentils",
            "3 cups water",
            "1 tsp cumin",
            "1 tsp turmeric"
        ]
    );
    assert_eq!(now.content.summary(), Some("Red lentils and cumin."));
    let history = ben.get("/recipes/bens-dal/history").await;
    assert!(
        history.body.contains("ingredients written by hand"),
        "{}",
        history.body
    );
    // The fork's JSON-LD is based on the version it brought in.
    let page = ben.get("/recipes/bens-dal").await;
    assert_eq!(
        page.json_ld()["isBasedOn"],
        "http://forkful.test/recipes/weeknight-dal/versions/2"
    );
}

/// A review answers for what it showed: Ben adds bleach to his fork after
/// Ann opened the review, and her accept is a 409 with the review as it
/// is now; the suggester then sees the outcome on his fork's page and in
/// his own feed, and the recipe credits him.
#[actix_web::test]
async fn over_the_web_an_accept_after_the_fork_moved_is_409_and_the_suggester_is_told_the_outcome()
{
    let (recipes, site, mut ann, mut ben) = dal_and_bens_fork().await;
    let suggest = ben.get("/recipes/bens-dal/suggest").await;
    assert_eq!(suggest.status, 200, "{}", suggest.body);
    let made = ben
        .submit(
            &suggest,
            "/recipes/bens-dal/suggest",
            &[("message", "Cumin instead of turmeric")],
        )
        .await;
    assert_eq!(made.status, 303, "{}", made.body);
    let action = "/recipes/weeknight-dal/suggestions/1";
    let review = ann.get(action).await;
    let labels = review
        .texts("form.accept fieldset.conflict label")
        .join(" ");
    assert!(labels.contains("Take Ben's"), "{labels}");
    // Ben adds a line after Ann opened the review.
    let edit = ben.get("/recipes/bens-dal/edit").await;
    let bleach = ben
        .submit(
            &edit,
            "/recipes/bens-dal/edit",
            &recipe_fields(&[
                ("slug", "bens-dal"),
                ("title", "Ben's dal"),
                (
                    "ingredients",
                    "1 cup red lentils\n3 cups water\n1 tsp cumin\n1 cup bleach",
                ),
                ("note", "bleach"),
            ]),
        )
        .await;
    assert_eq!(bleach.status, 303, "{}", bleach.body);
    let before = stored(recipes.store());
    let stale = ann
        .submit(
            &review,
            action,
            &[("action", "accept"), ("choice-0", "theirs")],
        )
        .await;
    assert_eq!(stale.status, 409, "{}", stale.body);
    assert!(stored(recipes.store()) == before, "a stale accept wrote");
    assert!(stale
        .body
        .contains("Ben's dal changed since this page was made"));
    assert!(
        stale
            .texts("form.accept fieldset.conflict")
            .join(" ")
            .contains("1 cup bleach"),
        "the review now shows the line: {}",
        stale.body
    );
    let declined = ann.submit(&review, action, &[("action", "decline")]).await;
    assert_eq!(declined.status, 409, "a stale decline declines nothing");
    // Ben takes the bleach out again; Ann accepts the review as it is.
    let edit = ben.get("/recipes/bens-dal/edit").await;
    let fixed = ben
        .submit(
            &edit,
            "/recipes/bens-dal/edit",
            &recipe_fields(&[
                ("slug", "bens-dal"),
                ("title", "Ben's dal"),
                (
                    "ingredients",
                    "1 cup red lentils\n3 cups water\n1 tsp cumin",
                ),
                ("note", "no bleach"),
            ]),
        )
        .await;
    assert_eq!(fixed.status, 303);
    let review = ann.get(action).await;
    assert!(!review.body.contains("bleach"));
    let accepted = ann
        .submit(
            &review,
            action,
            &[
                ("action", "accept"),
                ("choice-0", "theirs"),
                ("reply", "Lovely, thanks"),
            ],
        )
        .await;
    assert_eq!(accepted.status, 303, "{}", accepted.body);
    // Ben's fork page says what became of it, with Ann's note.
    let fork_page = ben.get("/recipes/bens-dal").await;
    let outcome = fork_page.texts("p.suggestion-outcome").join(" ");
    assert!(
        outcome.contains("Suggestion 1 was taken into Weeknight Dal, in its version 3.")
            && outcome.contains("Lovely, thanks"),
        "{outcome}"
    );
    // His own feed of the suggestions he made.
    let mut visitor = Browser::new(&site);
    let feed = visitor.get("/cooks/ben/suggested.xml").await;
    assert_eq!(feed.status, 200, "{}", feed.body);
    assert_eq!(
        feed.texts("entry > title"),
        ["Suggestion 1 to Weeknight Dal from Ben's dal (accepted in version 3)"]
    );
    assert!(feed.texts("entry > summary")[0].contains("Lovely, thanks"));
    let account = ben.get("/account").await;
    assert_eq!(
        account.attrs("a[href$='suggested.xml']", "href"),
        ["/cooks/ben/suggested.xml"]
    );
    // The recipe credits him.
    let parent = visitor.get("/recipes/weeknight-dal").await;
    assert_eq!(
        parent.json_ld()["contributor"],
        serde_json::json!([{"@type": "Person", "name": "ben"}])
    );
}

/// A cook's suggestions are limited, so one account cannot fill others'
/// lists: the eleventh made in an hour is a 429, and nothing is written;
/// those refused before (nothing to send, not the cook's) count for
/// nothing.
#[actix_web::test]
async fn over_the_web_suggestions_are_limited_per_cook() {
    let (recipes, site) = new_site();
    let mut ann = Browser::new(&site);
    sign_up(&mut ann, "ann").await;
    let form = ann.get("/recipes/new").await;
    assert_eq!(
        ann.submit(&form, "/recipes/new", &recipe_fields(&[]))
            .await
            .status,
        303
    );
    let mut ben = Browser::new(&site);
    sign_up(&mut ben, "ben").await;
    let limit = forkful::web::rate_limits::SUGGESTIONS_PER_HOUR as usize;
    // Suggestions refused count for nothing: from a fork with nothing to
    // send (409), and one of another cook's (403), twice the limit.
    recipes
        .fork(
            &slug("weeknight-dal"),
            None,
            Some(&slug("dal-same")),
            |c| c,
            &Change::by("ben", "fork"),
        )
        .unwrap();
    let bens = form_token(&ben.get("/account").await, "/logout");
    let mut cara = Browser::new(&site);
    sign_up(&mut cara, "cara").await;
    for _ in 0..limit {
        let nothing = ben
            .post(
                "/recipes/dal-same/suggest",
                &[("csrf", &bens), ("based_on", "1"), ("message", "Same")],
                Some(ORIGIN),
            )
            .await;
        assert_eq!(nothing.status, 409, "{}", nothing.body);
        let token = form_token(&cara.get("/account").await, "/logout");
        let not_hers = cara
            .post(
                "/recipes/dal-same/suggest",
                &[("csrf", &token), ("based_on", "1"), ("message", "Mine")],
                Some(ORIGIN),
            )
            .await;
        assert_eq!(not_hers.status, 403, "{}", not_hers.body);
    }
    for i in 0..=limit {
        let fork = slug(&format!("dal-{i}"));
        recipes
            .fork(
                &slug("weeknight-dal"),
                None,
                Some(&fork),
                |mut c| {
                    c.notes = Some(format!("Variation {i}."));
                    c
                },
                &Change::by("ben", "fork"),
            )
            .unwrap();
        let path = format!("/recipes/{fork}/suggest");
        let page = ben.get(&path).await;
        let sent = ben
            .submit(&page, &path, &[("message", "A variation")])
            .await;
        if i < limit {
            assert_eq!(sent.status, 303, "{i}: {}", sent.body);
        } else {
            assert_eq!(sent.status, 429, "{}", sent.body);
            assert!(sent.body.contains("too many suggestions"));
            assert!(sent.body.contains("A variation"), "the message is kept");
        }
    }
    let view = recipes.snapshot();
    let dal = view.recipe(&slug("weeknight-dal")).unwrap();
    assert_eq!(view.suggestions_to(dal.id).unwrap().len(), limit);
}

/// A recipe's suggestions are listed a page at a time, newest first, the
/// same for every reader (so kept, and answered 304 when unchanged).
#[actix_web::test]
async fn a_recipes_suggestions_are_listed_a_page_at_a_time() {
    let (recipes, site) = new_site();
    recipes
        .create(
            &slug("soup"),
            content("Soup", &["carrots"], &["Simmer."]),
            &Change::by("ann", "soup"),
        )
        .unwrap();
    for i in 0..55 {
        let (fork, _) = recipes
            .fork(
                &slug("soup"),
                None,
                None,
                |mut c| {
                    c.notes = Some(format!("Variation {i}."));
                    c
                },
                &Change::by(&format!("cook-{i}"), "fork"),
            )
            .unwrap();
        recipes
            .suggest(&fork, v(1), "Mine", &Change::by(&format!("cook-{i}"), "s"))
            .unwrap();
    }
    let mut visitor = Browser::new(&site);
    let first = visitor.get("/recipes/soup/suggestions").await;
    assert_eq!(first.status, 200, "{}", first.body);
    let numbers = |page: &crate::helpers::Page| -> Vec<String> {
        page.texts("ol.suggestions li > a:first-child")
    };
    let listed = numbers(&first);
    assert_eq!(listed.len(), 50);
    assert_eq!(listed[0], "Suggestion 55");
    assert_eq!(listed[49], "Suggestion 6");
    assert_eq!(
        first.attrs("nav.pager a", "href"),
        ["/recipes/soup/suggestions?before=6"]
    );
    let older = visitor.get("/recipes/soup/suggestions?before=6").await;
    assert_eq!(numbers(&older).len(), 5);
    assert!(older.attrs("nav.pager a", "href").is_empty());
    let etag = first.header("etag").unwrap().to_owned();
    let again = visitor
        .send_with("/recipes/soup/suggestions", ("If-None-Match", etag))
        .await;
    assert_eq!(again.status, 304);
    assert_eq!(
        visitor
            .get("/recipes/soup/suggestions?before=x")
            .await
            .status,
        400
    );
}

/// The choices name the other side: the other cook, or, for a cook's
/// fork of their own recipe, the other recipe; never "Soup's" for a Soup
/// merged with a Soup.
#[test]
fn the_choices_name_the_other_side_so_that_two_soups_are_told_apart() {
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    let soup = slug("soup");
    let ann = |n| Change::by("ann", n);
    recipes
        .create(
            &soup,
            content("Soup", &["2 carrots"], &["Simmer."]),
            &ann("soup"),
        )
        .unwrap();
    let (mine, _) = recipes
        .fork(&soup, None, Some(&slug("soup-2")), |c| c, &ann("again"))
        .unwrap();
    let lines = |s: &Slug| recipes.snapshot().recipe(s).unwrap().content;
    recipes
        .edit(
            &mine,
            v(1),
            with_lines(lines(&mine), &["3 carrots"]),
            &ann("3"),
        )
        .unwrap();
    recipes
        .edit(
            &soup,
            v(1),
            with_lines(lines(&soup), &["4 carrots"]),
            &ann("4"),
        )
        .unwrap();
    let pages::BringIn::Changes(show) = pages::bring_in_show(&recipes.snapshot(), &mine).unwrap()
    else {
        panic!("changes to bring in");
    };
    assert_eq!(show.theirs, "the parent");
    let mut renamed = lines(&mine).into_draft();
    renamed.title = "Soup for a crowd".into();
    recipes.edit(&mine, v(2), renamed, &ann("name")).unwrap();
    let pages::BringIn::Changes(show) = pages::bring_in_show(&recipes.snapshot(), &mine).unwrap()
    else {
        panic!("changes to bring in");
    };
    assert_eq!(show.theirs, "Soup");
}

/// The parent's author took the suggestion but kept their own version of
/// a change it made: the fork's next bring-in asks about that change (it
/// is not brought in silently over the fork's line), and the fork's page
/// says it was taken in part.
#[test]
fn a_suggestion_taken_in_part_asks_the_fork_about_what_was_not_taken() {
    let (recipes, soup, fork) = soup_and_fork(&["flour", "1 egg", "1 cup milk"]);
    let lines = |s: &Slug| recipes.snapshot().recipe(s).unwrap().content;
    let mut mine = with_lines(lines(&fork), &["flour", "1 large egg", "1 cup milk"]);
    mine.tags = vec!["quick".into()];
    recipes
        .edit(&fork, v(1), mine, &Change::by("ben", "egg"))
        .unwrap();
    recipes
        .suggest(&fork, v(2), "A large egg", &Change::by("ben", "s"))
        .unwrap();
    recipes
        .edit(
            &soup,
            v(1),
            with_lines(lines(&soup), &["flour", "2 eggs", "1 cup milk"]),
            &Change::by("ann", "eggs"),
        )
        .unwrap();
    // Ann keeps her eggs; the tag comes in.
    recipes
        .accept_suggestion(
            &soup,
            1,
            Review::of(v(2), v(2)),
            &[Choice::Mine],
            "",
            &Change::by("ann", "y"),
        )
        .unwrap();
    assert_eq!(lines(&soup).ingredients()[1], "2 eggs");
    assert_eq!(lines(&soup).tags(), ["quick"]);
    let view = recipes.snapshot();
    let page = pages::recipe_show(&view, &fork, Default::default()).unwrap();
    let sent = page.last_suggestion.unwrap();
    assert_eq!(sent.kept_own, Some(1));
    let changes = view
        .parent_changes(&view.recipe(&fork).unwrap(), None)
        .unwrap();
    assert_eq!(
        changes.merge.conflicts().len(),
        1,
        "{:?}",
        changes.merge.conflicts()
    );
    assert_eq!(changes.merge.conflicts()[0].mine, ["1 large egg"]);
    assert_eq!(changes.merge.conflicts()[0].theirs, ["2 eggs"]);
    assert_eq!(changes.taken, 1);
}

/// Over the web, a suggestion taken in part says so wherever its state is
/// shown, its suggester's form says why the same changes cannot go again,
/// and the review sent again, even without its choices, is told the
/// suggestion is closed (409), not asked for choices.
#[actix_web::test]
async fn over_the_web_a_suggestion_taken_in_part_says_so_everywhere() {
    let (recipes, site) = new_site();
    let spicy = &[
        (
            "ingredients",
            "1 cup red lentils\n3 cups water\n1 tsp cumin",
        ),
        ("tags", "Vegan, quick, spicy"),
        ("note", "cumin"),
    ];
    let (mut ann, mut ben) = ann_writes_and_ben_forks_with(&site, ("Ann", "Ben"), spicy).await;
    let review = ben_suggests_and_ann_grinds_hers(&mut ann, &mut ben, "Spicy").await;
    let action = "/recipes/weeknight-dal/suggestions/1";
    let accepted = ann
        .submit(
            &review,
            action,
            &[("action", "accept"), ("choice-0", "mine")],
        )
        .await;
    assert_eq!(accepted.status, 303, "{}", accepted.body);
    let dal = recipes.snapshot().recipe(&slug("weeknight-dal")).unwrap();
    assert_eq!(dal.content.ingredients()[2], "1 tsp turmeric, ground");
    assert!(dal.content.tags().contains(&"spicy".to_owned()));
    let list = ann.get("/recipes/weeknight-dal/suggestions").await;
    assert_eq!(
        list.texts("ol.suggestions .state"),
        ["accepted in version 3, in part: the author kept their own version of 1 change"]
    );
    let again = ann.submit(&review, action, &[("action", "accept")]).await;
    assert_eq!(again.status, 409, "{}", again.body);
    let form = ben.get("/recipes/bens-dal/suggest").await;
    assert!(
        form.texts("p.notice").iter().any(|t| t.starts_with(
            "Suggestion 1 sent these very changes, and Weeknight Dal's author took them in part"
        )),
        "{:?}",
        form.texts("p.notice")
    );
    assert!(form.texts("form.suggest").is_empty());
}

/// A retired parent: nothing more comes from it, and the fork's page says
/// so rather than offering to bring in its retirement.
#[test]
fn a_fork_of_a_retired_recipe_is_told_so_and_offered_nothing() {
    let (recipes, soup, fork) = soup_and_fork(&["flour"]);
    let mut mine = recipes
        .snapshot()
        .recipe(&fork)
        .unwrap()
        .content
        .into_draft();
    mine.ingredients.push("salt".into());
    recipes
        .edit(&fork, v(1), mine, &Change::by("ben", "salt"))
        .unwrap();
    recipes
        .retire(&soup, v(1), &Change::by("ann", "retire"))
        .unwrap();
    let view = recipes.snapshot();
    let page = pages::recipe_show(&view, &fork, Default::default()).unwrap();
    assert!(page.apart.unwrap().parent_retired);
    assert!(!page.can_suggest);
    assert!(matches!(
        pages::bring_in_show(&view, &fork),
        Err(DomainError::Retired { .. })
    ));
}

/// Two windows of one bring-in form: the first keeps the cook's own side
/// (no version: an agreement); the second, with another choice, is a 409
/// that says so, not a page that quietly drops the choice. A Preview of a
/// stale form is a 409 too; forged choices and actions are 400s.
#[actix_web::test]
async fn over_the_web_a_second_window_of_a_bring_in_is_409_and_forged_fields_are_refused() {
    let (recipes, site) = new_site();
    let (mut ann, mut ben) = ann_writes_and_ben_forks(&site, ("Ann", "Ben")).await;
    ann_edits_her_dal(
        &mut ann,
        "1 cup red lentils\n3 cups water\n1 tsp turmeric, ground",
        "ground",
    )
    .await;
    let action = "/recipes/bens-dal/bring-in";
    let first = ben.get(action).await;
    let second = ben.get(action).await;
    let note = ("note", "Kept my cumin");
    for forged in [
        vec![note, ("choice-0", "mine"), ("choice-1", "mine")],
        vec![note, ("choice-0", "mine"), ("edit-7", "x")],
        vec![note, ("choice-0", "mine"), ("action", "frob")],
        vec![note, ("choice-0", "mine"), ("choice-0", "theirs")],
    ] {
        let refused = ben.submit(&first, action, &forged).await;
        assert_eq!(refused.status, 400, "{forged:?}: {}", refused.body);
    }
    let kept = ben
        .submit(&first, action, &[note, ("choice-0", "mine")])
        .await;
    assert_eq!(kept.status, 303, "{}", kept.body);
    let fork = recipes.snapshot().recipe(&slug("bens-dal")).unwrap();
    assert_eq!(fork.version_count, 1, "keeping its own side is no version");
    // The same form sent twice (a double click, a resent request) is
    // the one write, answered as the first was.
    let twice = ben
        .submit(&first, action, &[note, ("choice-0", "mine")])
        .await;
    assert_eq!(twice.status, 303, "{}", twice.body);
    assert_eq!(twice.headers.get("location"), kept.headers.get("location"));
    let before = stored(recipes.store());
    let stale = ben
        .submit(&second, action, &[note, ("choice-0", "theirs")])
        .await;
    assert_eq!(stale.status, 409, "{}", stale.body);
    assert!(stale.body.contains("came to be in step"), "{}", stale.body);
    assert!(stored(recipes.store()) == before);
    let previewed = ben
        .submit(
            &second,
            action,
            &[("choice-0", "theirs"), ("action", "preview")],
        )
        .await;
    assert_eq!(previewed.status, 409, "{}", previewed.body);
    let page = ben.get("/recipes/bens-dal").await;
    let apart = page.texts(".apart").join(" ");
    assert!(
        apart.contains("In step with Weeknight Dal's version 2; you kept your own version of 1 change it made."),
        "{apart}"
    );
    let history = ben.get("/recipes/bens-dal/history").await;
    assert!(
        history
            .texts("p.origin")
            .iter()
            .any(|t| t.contains("Then in step with version 2 of Weeknight Dal, with no change to it (ingredients kept its own)")),
        "{}",
        history.body
    );
}

/// Ann opens the review of Ben's suggestion while their cumin and her
/// ground turmeric conflict; Ben then brings her change in keeping his
/// own line, an agreement that makes no version of his fork but moves the
/// suggestion's merge base, so the conflict she was choosing on is gone.
/// Her accept from the page she saw, and its Preview, are 409s that save
/// nothing; the page shown again is the merge as it is now.
#[actix_web::test]
async fn over_the_web_a_review_shown_before_the_fork_agreed_with_its_parent_is_409() {
    let (recipes, site) = new_site();
    let (mut ann, mut ben) = ann_writes_and_ben_forks(&site, ("Ann", "Ben")).await;
    let review = ben_suggests_and_ann_grinds_hers(&mut ann, &mut ben, "Cumin").await;
    let action = "/recipes/weeknight-dal/suggestions/1";
    assert_eq!(review.texts("form.accept fieldset.conflict").len(), 1);
    assert!(
        review
            .body
            .contains("Nothing comes in without your choice: each of the suggestion's changes meets one of Weeknight Dal's, below."),
        "the one change is the conflict, unsettled: {}",
        review.body
    );
    let bring_in = ben.get("/recipes/bens-dal/bring-in").await;
    let kept = ben
        .submit(
            &bring_in,
            "/recipes/bens-dal/bring-in",
            &[("note", "Kept my cumin"), ("choice-0", "mine")],
        )
        .await;
    assert_eq!(kept.status, 303, "{}", kept.body);
    let before = stored(recipes.store());
    let previewed = ann
        .submit(
            &review,
            action,
            &[("action", "preview"), ("choice-0", "mine")],
        )
        .await;
    assert_eq!(previewed.status, 409, "{}", previewed.body);
    let stale = ann
        .submit(
            &review,
            action,
            &[("action", "accept"), ("choice-0", "mine")],
        )
        .await;
    assert_eq!(stale.status, 409, "{}", stale.body);
    assert!(stale.body.contains("came to be in step"), "{}", stale.body);
    assert!(stored(recipes.store()) == before, "a stale accept wrote");
    assert!(
        stale.texts("form.accept fieldset.conflict").is_empty(),
        "the merge as it is now has no conflict: {}",
        stale.body
    );
    assert!(stale
        .texts(".diff-section h2")
        .contains(&"What accepting it does".to_owned()));
    let declined = ann.submit(&review, action, &[("action", "decline")]).await;
    assert_eq!(declined.status, 409, "{}", declined.body);
    assert!(stored(recipes.store()) == before, "a stale decline wrote");
    let accepted = ann.submit(&stale, action, &[("action", "accept")]).await;
    assert_eq!(accepted.status, 303, "{}", accepted.body);
    let now = recipes.snapshot().recipe(&slug("weeknight-dal")).unwrap();
    assert_eq!(now.content.ingredients()[2], "1 tsp cumin");
}

/// Ben's fork serves 8, its amounts doubled; Ann adds salt and a can of
/// tomatoes to her dal for 4. Bringing her change in, the page says the
/// lines that come in are scaled to his 8 or marked with the 4 they were
/// written for, and his recipe gets her salt doubled and her can marked.
#[actix_web::test]
async fn over_the_web_a_bring_in_across_servings_scales_or_marks_the_lines_that_come_in() {
    let (recipes, site) = new_site();
    let doubled = &[
        ("servings", "8"),
        (
            "ingredients",
            "2 cups red lentils\n6 cups water\n2 tsp turmeric",
        ),
        ("note", "for a crowd"),
    ];
    let (mut ann, mut ben) = ann_writes_and_ben_forks_with(&site, ("Ann", "Ben"), doubled).await;
    ann_edits_her_dal(
        &mut ann,
        "1 cup red lentils\n3 cups water\n1 tsp turmeric\n1 tsp salt\n1 (400 g) can tomatoes",
        "salt and tomatoes",
    )
    .await;
    let history = ben.get("/recipes/bens-dal/history").await;
    assert_eq!(history.texts("p.lede"), ["1 version."]);
    let action = "/recipes/bens-dal/bring-in";
    let form = ben.get(action).await;
    assert_eq!(form.status, 200, "{}", form.body);
    let notice = form.texts("p.notice.servings").join(" ");
    assert!(
        notice.contains("Your recipe serves 8 and Ann's 4.")
            && notice.contains("The merged recipe serves your 8")
            && notice.contains("\u{201c}for 4 servings\u{201d}"),
        "{notice}"
    );
    let brought = ben.submit(&form, action, &[("note", "salt")]).await;
    assert_eq!(brought.status, 303, "{}", brought.body);
    let now = recipes.snapshot().recipe(&slug("bens-dal")).unwrap();
    assert_eq!(now.content.recipe_yield().servings, Some(8));
    assert_eq!(
        now.content.ingredients(),
        [
            "2 cups red lentils",
            "6 cups water",
            "2 tsp turmeric",
            "2 tsp salt",
            "1 (400 g) can tomatoes (for 4 servings)"
        ]
    );
}

/// A bring-in form stays good while only suggestions move: Ben opens it,
/// suggests, and Ann declines; its live preview, its Preview and its save
/// all take it as the merge it shows.
#[actix_web::test]
async fn over_the_web_a_bring_in_form_outlives_a_suggestion_declined_meanwhile() {
    let (recipes, site) = new_site();
    let (mut ann, mut ben) = ann_writes_and_ben_forks(&site, ("Ann", "Ben")).await;
    ann_edits_her_dal(
        &mut ann,
        "1 cup red lentils\n4 cups water\n1 tsp turmeric",
        "water",
    )
    .await;
    let action = "/recipes/bens-dal/bring-in";
    let form = ben.get(action).await;
    assert_eq!(form.status, 200, "{}", form.body);
    let suggest = ben.get("/recipes/bens-dal/suggest").await;
    let made = ben
        .submit(
            &suggest,
            "/recipes/bens-dal/suggest",
            &[("message", "Cumin")],
        )
        .await;
    assert_eq!(made.status, 303, "{}", made.body);
    let review = ann.get("/recipes/weeknight-dal/suggestions/1").await;
    let declined = ann
        .submit(
            &review,
            "/recipes/weeknight-dal/suggestions/1",
            &[("action", "decline")],
        )
        .await;
    assert_eq!(declined.status, 303, "{}", declined.body);
    let hidden = hidden_fields(&form, action);
    let live = ben
        .post(
            &format!("{action}/preview"),
            &filled_in(&hidden, &[("note", "water")]),
            Some(ORIGIN),
        )
        .await;
    assert_eq!(live.status, 200, "{}", live.body);
    assert!(!live.body.contains("changed since"), "{}", live.body);
    let saved = ben.submit(&form, action, &[("note", "water")]).await;
    assert_eq!(saved.status, 303, "{}", saved.body);
    let fork = recipes.snapshot().recipe(&slug("bens-dal")).unwrap();
    assert_eq!(fork.content.ingredients()[1], "4 cups water");
}

/// Both cooks made the same change: the bring-in page says there is
/// nothing to bring in, and offers to record that the fork is in step,
/// which makes no version.
#[actix_web::test]
async fn over_the_web_a_fork_records_that_it_is_in_step_without_a_version() {
    let (recipes, site) = new_site();
    let (mut ann, mut ben) = ann_writes_and_ben_forks(&site, ("Ann", "Ben")).await;
    ann_edits_her_dal(
        &mut ann,
        "1 cup red lentils\n3 cups water\n1 tsp cumin",
        "cumin too",
    )
    .await;
    let page = ben.get("/recipes/bens-dal").await;
    assert!(page
        .texts(".apart")
        .join(" ")
        .contains("1 new version since version 1. Bring it in."));
    let action = "/recipes/bens-dal/bring-in";
    let form = ben.get(action).await;
    assert_eq!(form.status, 200);
    assert!(form.body.contains(
        "What it changed since the two last agreed is in your recipe already (or was taken back)."
    ));
    let recorded = ben.submit(&form, action, &[]).await;
    assert_eq!(recorded.status, 303, "{}", recorded.body);
    assert_eq!(
        recipes
            .snapshot()
            .recipe(&slug("bens-dal"))
            .unwrap()
            .version_count,
        1
    );
    let page = ben.get("/recipes/bens-dal").await;
    let apart = page.texts(".apart").join(" ");
    assert!(
        apart.contains("In step with Weeknight Dal's version 2."),
        "{apart}"
    );
    assert!(
        page.attrs("a[href$='/suggest']", "href").is_empty(),
        "nothing to suggest"
    );
    let again = ben.get(action).await;
    assert!(again.texts("form.bring-in").is_empty());
}

/// A conflict of long lines: the boxes for writing by hand start empty
/// once both sides would make the form too large to send, so the cook can
/// still send it.
#[actix_web::test]
async fn a_merge_of_long_lines_stays_a_form_that_can_be_sent() {
    let (recipes, site) = new_site();
    let (mut ann, mut ben) = ann_writes_and_ben_forks(&site, ("Ann", "Ben")).await;
    let long = |who: &str| -> String {
        (0..75)
            .map(|i| format!("{i} g {who}'s {}", "spice ".repeat(315)))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let edit = ben.get("/recipes/bens-dal/edit").await;
    let moved = ben
        .submit(
            &edit,
            "/recipes/bens-dal/edit",
            &recipe_fields(&[
                ("slug", "bens-dal"),
                ("title", "Ben's dal"),
                ("ingredients", &long("ben")),
                ("note", "long"),
            ]),
        )
        .await;
    assert_eq!(moved.status, 303, "{}", moved.body);
    ann_edits_her_dal(&mut ann, &long("ann"), "long").await;
    let action = "/recipes/bens-dal/bring-in";
    let form = ben.get(action).await;
    // A browser sends the box as the page has it, chosen or not.
    let boxed = form.texts_raw("fieldset.conflict textarea");
    assert_eq!(boxed, [""], "both sides would pass the form's 256 KiB");
    let sent = ben
        .submit(
            &form,
            action,
            &[
                ("note", "mine"),
                ("choice-0", "mine"),
                ("edit-0", &boxed[0]),
            ],
        )
        .await;
    assert_eq!(sent.status, 303, "{}", sent.body);
    let _ = recipes;
}

/// A suggestion's form sent again (its first answer lost: a cut
/// connection, a 503 that could not tell) is answered as the first send
/// was, with the suggestion it made: no second suggestion, no "already
/// suggested" refusal of the cook's own.
#[actix_web::test]
async fn a_suggestion_sent_again_is_answered_with_the_one_it_made() {
    let (_, site) = new_site();
    let salt = &[(
        "ingredients",
        "1 cup red lentils\n3 cups water\n1 tsp turmeric\n1 pinch salt",
    )];
    let (mut ann, mut ben) = ann_writes_and_ben_forks_with(&site, ("Ann", "Ben"), salt).await;
    let suggest = ben.get("/recipes/bens-dal/suggest").await;
    let fields = [("message", "A pinch of salt.")];
    let made = ben
        .submit(&suggest, "/recipes/bens-dal/suggest", &fields)
        .await;
    assert_eq!(made.status, 303, "{}", made.body);
    let to = made.header("location").unwrap().to_owned();
    assert_eq!(to, "/recipes/weeknight-dal/suggestions/1");
    let again = ben
        .submit(&suggest, "/recipes/bens-dal/suggest", &fields)
        .await;
    assert_eq!(again.status, 303, "{}", again.body);
    assert_eq!(again.header("location"), Some(to.as_str()));
    let list = ben.get("/recipes/weeknight-dal/suggestions").await;
    assert!(
        !list.body.contains("/recipes/weeknight-dal/suggestions/2"),
        "{}",
        list.body
    );
    // The page loaded again says they are suggested, and offers no form.
    let reloaded = ben.get("/recipes/bens-dal/suggest").await;
    assert!(
        reloaded.body.contains("You already suggested them"),
        "{}",
        reloaded.body
    );
    // Ann declines it; Ben changes his dal and suggests again (2). The
    // first form, sent once more from an old tab, still leads to the one
    // it made, not to the fork's newest.
    let review = ann.get(&to).await;
    let declined = ann.submit(&review, &to, &[("action", "decline")]).await;
    assert_eq!(declined.status, 303, "{}", declined.body);
    let edit = ben.get("/recipes/bens-dal/edit").await;
    let more = "1 cup red lentils\n3 cups water\n1 tsp turmeric\n1 pinch salt\n1 bay leaf";
    let edited = ben
        .submit(
            &edit,
            "/recipes/bens-dal/edit",
            &recipe_fields(&[("ingredients", more), ("note", "bay")]),
        )
        .await;
    assert_eq!(edited.status, 303, "{}", edited.body);
    let second_form = ben.get("/recipes/bens-dal/suggest").await;
    let second = ben
        .submit(
            &second_form,
            "/recipes/bens-dal/suggest",
            &[("message", "Salt and a bay leaf.")],
        )
        .await;
    assert_eq!(
        second.header("location"),
        Some("/recipes/weeknight-dal/suggestions/2"),
        "{}",
        second.body
    );
    let old_tab = ben
        .submit(&suggest, "/recipes/bens-dal/suggest", &fields)
        .await;
    assert_eq!(old_tab.status, 303, "{}", old_tab.body);
    assert_eq!(old_tab.header("location"), Some(to.as_str()));
}
