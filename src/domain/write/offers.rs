//! Suggestions across sites (issue 54, item 4), as ForgeFed offers a
//! patch: a fork on another site offers its changes to a recipe here, and
//! a fork here offers its changes to a recipe kept from another site.
//!
//! Here, an offer is a suggestion like any other: its fork is kept as a
//! recipe from elsewhere (`keep_remote`), at the version offered, and the
//! recipe's author reviews it on the same pages, with the same merge. The
//! suggestion keeps the offer's id, so that its answer (`Accept` or
//! `Reject`, with the note) goes back from the log.
//!
//! There, a suggestion to a recipe kept from elsewhere is made as any is,
//! and offered from the log. It is fixed at the fork's version offered and
//! the base it was made on (it does not follow the fork as a suggestion
//! here does: the other site reviews what it was sent), and its answer,
//! from the recipe's author there, is recorded as a review here would.

use super::elsewhere::remote_version;
use super::suggestions::{checked_text, closed};
use super::{Recipes, RemoteParent, Transaction};
use crate::domain::ids::VersionNumber;
use crate::domain::read::SuggestionState;
use crate::domain::slug::Slug;
use crate::domain::DomainError;
use crate::store::{EntityId, EntityMap, EntityRef, Value};

/// A suggestion offered from another site to a recipe here.
#[derive(Debug, Clone)]
pub struct RemoteOffer {
    /// The fork offering, as fetched (its version offered).
    pub fork: RemoteParent,
    /// The recipe here it is offered to, and its version the fork last
    /// agreed with.
    pub to: Slug,
    pub base: VersionNumber,
    /// The fork's version whose changes the recipe here took, suggested
    /// on `base`, where the fork's site says its next merge starts from
    /// it (`read::MergeBase`): believed only where this site took it.
    pub base_fork_version: Option<VersionNumber>,
    pub message: String,
    /// The offer's id, on its site.
    pub id: String,
    /// Who offered it: `@ben@b.example`.
    pub by: String,
}

/// The answer a site gave to an offer made from here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfferAnswer {
    /// `Some` for an accept: the address of the version of the recipe
    /// there that took it, whether it took it whole, and how many of the
    /// changes both made differently its author kept their own version of.
    pub accepted: Option<(String, bool, u32)>,
    /// For a reject: whether the suggestion was closed there (its recipe
    /// retired), not declined.
    pub closed: bool,
    pub reply: Option<String>,
}

impl Recipes {
    /// Takes `offer` as a suggestion to the recipe it names here: its fork
    /// kept first, at the version offered. Decided on the latest value: the
    /// recipe must be here and not retired, the base one of its versions,
    /// and the fork without another open suggestion. Offered again (its
    /// id), it is the same suggestion. Its number.
    pub fn receive_offer(&self, offer: &RemoteOffer) -> Result<u32, DomainError> {
        let attrs = &self.attrs;
        let message = checked_text(&offer.message, "the message")?;
        if message.is_empty() {
            return Err(DomainError::Invalid("an offer with no message".into()));
        }
        // What is refused is refused before the fork is kept (the writer
        // decides again below).
        let here = self.snapshot().current(&offer.to)?;
        if here.slug.is_elsewhere() || offer.base > here.newest() {
            return Err(not_here(offer));
        }
        let (kept, version) = self.keep_remote(&offer.fork)?;
        let (_, number) = self.store.transact_with(|db| -> Result<_, DomainError> {
            let view = self.view_of(db);
            let mut tx = Transaction::new();
            if let Some(known) =
                db.entity_with(attrs.suggestion_offer, &Value::from(offer.id.as_str()))?
            {
                return Ok((tx, view.suggestion_by_id(known)?.number));
            }
            let parent = view.current(&offer.to)?;
            let fork = view.recipe(&kept)?;
            if parent.slug.is_elsewhere() || offer.base > parent.newest() {
                return Err(not_here(offer));
            }
            // Offered anew by the fork's author: an offer still open from
            // it was withdrawn there (its site sends no `Undo`), and this
            // one takes its place.
            for open in view
                .suggestions_from(fork.id)?
                .into_iter()
                .filter(|s| s.state == SuggestionState::Open)
            {
                tx.add(
                    open.id,
                    attrs.suggestion_state,
                    SuggestionState::Withdrawn.as_str(),
                );
                closed(&mut tx, &open, attrs);
            }
            let (suggestion, number) = offered(&view, offer, fork.id, parent.id, version)?;
            tx.map(suggestion.with(attrs.suggestion_message, message.as_str()));
            tx.tx_attr(
                attrs.tx_note,
                format!("Offered from {}", offer.fork.address),
            );
            Ok((tx, number))
        })?;
        Ok(number)
    }

    /// Withdraws the suggestion offered from elsewhere as `offer`, its
    /// fork's author (`actor`) having withdrawn it there (an `Undo`): only
    /// an open one. Whether it was withdrawn.
    pub fn withdraw_offer(&self, offer: &str, actor: &str) -> Result<bool, DomainError> {
        let attrs = &self.attrs;
        let (_, withdrawn) = self.store.transact_with(|db| -> Result<_, DomainError> {
            let view = self.view_of(db);
            let mut tx = Transaction::new();
            let Some(id) = db.entity_with(attrs.suggestion_offer, &Value::from(offer))? else {
                return Ok((tx, false));
            };
            let s = view.suggestion_by_id(id)?;
            let offered_by = view.string(s.from.entity(), attrs.remote_author)?;
            if s.state != SuggestionState::Open || offered_by.as_deref() != Some(actor) {
                return Ok((tx, false));
            }
            tx.add(
                s.id,
                attrs.suggestion_state,
                SuggestionState::Withdrawn.as_str(),
            );
            closed(&mut tx, &s, attrs);
            tx.tx_attr(attrs.tx_note, format!("Withdrawn from {actor}"));
            Ok((tx, true))
        })?;
        Ok(withdrawn)
    }

    /// Records `answer` to the suggestion `suggestion` made here to a
    /// recipe kept from another site, told by `actor`: only that recipe's
    /// author there answers, and only an open suggestion. Whether it was
    /// recorded.
    pub fn record_offer_answer(
        &self,
        suggestion: EntityId,
        actor: &str,
        answer: &OfferAnswer,
    ) -> Result<bool, DomainError> {
        let attrs = &self.attrs;
        let reply = checked_text(answer.reply.as_deref().unwrap_or(""), "the reply")?;
        let (_, recorded) = self.store.transact_with(|db| -> Result<_, DomainError> {
            let view = self.view_of(db);
            let mut tx = Transaction::new();
            let Ok(s) = view.suggestion_by_id(suggestion) else {
                return Ok((tx, false));
            };
            let kept_by = view.string(s.to.entity(), attrs.remote_author)?;
            if s.state != SuggestionState::Open || kept_by.as_deref() != Some(actor) {
                return Ok((tx, false));
            }
            let state = match &answer.accepted {
                Some((result, whole, kept_own)) => {
                    // A version of the recipe it was offered to.
                    let Some(version) = remote_version(view.slug_of(s.to)?.as_str(), result)
                        .filter(|n| *n <= u64::from(super::elsewhere::MAX_KEPT_VERSIONS))
                        .and_then(VersionNumber::new)
                    else {
                        return Ok((tx, false));
                    };
                    tx.add(s.id, attrs.suggestion_accepted_in, i64::from(version.get()))
                        .add(s.id, attrs.suggestion_kept_own, i64::from(*kept_own));
                    if *whole {
                        tx.add(s.id, attrs.suggestion_whole, true);
                    }
                    SuggestionState::Accepted
                }
                None if answer.closed => SuggestionState::Closed,
                None => SuggestionState::Declined,
            };
            tx.add(s.id, attrs.suggestion_state, state.as_str());
            if !reply.is_empty() {
                tx.add(s.id, attrs.suggestion_reply, reply.as_str());
            }
            closed(&mut tx, &s, attrs);
            tx.tx_attr(attrs.tx_note, format!("Answered from {actor}"));
            Ok((tx, true))
        })?;
        Ok(recorded)
    }
}

/// The suggestion `offer` is, from the kept fork `fork` at its `version`
/// to `parent` (numbered after those made to it), but its message; and
/// its number.
fn offered(
    view: &crate::domain::read::Snapshot,
    offer: &RemoteOffer,
    fork: crate::domain::RecipeId,
    parent: crate::domain::RecipeId,
    version: VersionNumber,
) -> Result<(EntityMap, u32), DomainError> {
    let attrs = &view.attrs;
    let made = view
        .db()
        .referrers(attrs.suggestion_to, parent.entity())?
        .len();
    let number = u32::try_from(made + 1).unwrap_or(u32::MAX);
    let mut suggestion = EntityMap::new(EntityRef::temp("suggestion"));
    if let Some(v) = offer.base_fork_version {
        if took_all_of(view, (fork, parent), offer.base, v)? {
            suggestion = suggestion.with(attrs.suggestion_base_fork_version, i64::from(v.get()));
        }
    }
    if let Some(author) = view
        .db()
        .value(parent.entity(), attrs.author)?
        .and_then(|v| v.as_ref())
    {
        suggestion = suggestion.with(attrs.suggestion_to_author, EntityRef::Id(author));
    }
    let suggestion = suggestion
        .with(attrs.suggestion_from, EntityRef::Id(fork.entity()))
        .with(attrs.suggestion_from_version, i64::from(version.get()))
        .with(attrs.suggestion_to, EntityRef::Id(parent.entity()))
        .with(attrs.suggestion_open_to, EntityRef::Id(parent.entity()))
        .with(attrs.suggestion_base_version, i64::from(offer.base.get()))
        .with(attrs.suggestion_number, i64::from(number))
        .with(attrs.suggestion_remote_by, offer.by.as_str())
        .with(attrs.suggestion_state, SuggestionState::Open.as_str())
        .with(attrs.suggestion_offer, offer.id.as_str());
    Ok((suggestion, number))
}

/// Whether the recipe `to` here took every change of version `v` of the
/// kept fork `fork`, offered on its version `base`: only then does the
/// fork's next merge start from that version, as its site says (it is a
/// version this site fetched, when it was offered).
fn took_all_of(
    view: &crate::domain::read::Snapshot,
    (fork, to): (crate::domain::RecipeId, crate::domain::RecipeId),
    base: VersionNumber,
    v: VersionNumber,
) -> Result<bool, DomainError> {
    Ok(view.suggestions_from(fork)?.iter().any(|s| {
        s.state == SuggestionState::Accepted
            && s.to == to
            && s.from_version == v
            && s.base_version == base
            && (s.whole == Some(true) || s.kept_own == Some(0))
    }))
}

/// Why `offer` is not taken: made to a version its recipe does not have.
fn not_here(offer: &RemoteOffer) -> DomainError {
    DomainError::Invalid(format!(
        "{} offers changes to a version {} of {} does not have",
        offer.fork.address, offer.base, offer.to
    ))
}

#[cfg(test)]
mod tests {
    use super::super::elsewhere::fixtures::{soup_by, ADDRESS, ANN};
    use super::*;
    use crate::domain::scale::ScaleAsked;
    use crate::domain::{pages, Change, ContentDraft, Review, Snapshot};

    /// Ann's soup on site A at `version`, with these ingredients.
    fn soup(version: u64, lines: &[&str]) -> RemoteParent {
        soup_by(version, lines, ANN)
    }

    /// Ben's fork of ann's soup (at `lines`) made here, changed to
    /// `his`, and suggested back: the store, and the fork's slug.
    fn suggested(lines: &[&str], his: &[&str]) -> (Recipes, Slug) {
        let recipes = Recipes::temporary().unwrap();
        let ben = |note: &str| Change::by("ben", note);
        let fork = Slug::parse("soup").unwrap();
        recipes
            .fork_elsewhere(&soup(1, lines), &fork, &ben("fork"))
            .unwrap();
        ben_edits(&recipes, &fork, his);
        let newest = recipes.snapshot().recipe(&fork).unwrap().newest();
        recipes
            .suggest(&fork, newest, "Mine.", &ben("suggest"))
            .unwrap();
        (recipes, fork)
    }

    fn ben_edits(recipes: &Recipes, fork: &Slug, lines: &[&str]) {
        let now = recipes.snapshot().recipe(fork).unwrap();
        let draft = ContentDraft {
            ingredients: lines.iter().map(|l| l.to_string()).collect(),
            ..now.content.to_draft()
        };
        recipes
            .edit(fork, now.newest(), draft, &Change::by("ben", "mine"))
            .unwrap();
    }

    fn accepted(recipes: &Recipes, fork: &Slug, version: u64, whole: bool) {
        let view = recipes.snapshot();
        let id = view.recipe(fork).unwrap().id;
        let offered = view.suggestions_from(id).unwrap().pop().unwrap();
        let answer = OfferAnswer {
            accepted: Some((format!("{ADDRESS}/versions/{version}"), whole, 0)),
            closed: false,
            reply: None,
        };
        assert!(recipes
            .record_offer_answer(offered.id, ANN, &answer)
            .unwrap());
    }

    fn merged(view: &Snapshot, fork: &Slug) -> Vec<String> {
        let fork = view.recipe(fork).unwrap();
        let changes = view.parent_changes(&fork, None).unwrap();
        changes.merge.resolved(&[]).unwrap().ingredients().to_vec()
    }

    /// An offer here of the soup kept from a.example (as a fork of
    /// "stew"), at its `version` with `lines`, on stew's version 1.
    fn offer_of(version: u64, lines: &[&str], base_fork_version: Option<u64>) -> RemoteOffer {
        RemoteOffer {
            fork: soup(version, lines),
            to: Slug::parse("stew").unwrap(),
            base: VersionNumber::FIRST,
            base_fork_version: base_fork_version.and_then(VersionNumber::new),
            message: "Mine.".into(),
            id: format!("https://a.example/offers/{version}"),
            by: "@ann@a.example".into(),
        }
    }

    /// Cal's recipe `slug` here, at version 1: a title and one ingredient.
    fn cals(recipes: &Recipes, slug: &str, title: &str, ingredient: &str) -> Slug {
        let slug = Slug::parse(slug).unwrap();
        let draft = ContentDraft {
            title: title.into(),
            ingredients: vec![ingredient.into()],
            ..ContentDraft::default()
        };
        recipes
            .create(&slug, draft, &Change::by("cal", "new"))
            .unwrap();
        slug
    }

    /// Cal's stew here, at version 1 ("2 eggs"), which offers come to.
    fn stew_here() -> (Recipes, Slug) {
        let recipes = Recipes::temporary().unwrap();
        let stew = cals(&recipes, "stew", "Stew", "2 eggs");
        (recipes, stew)
    }

    #[test]
    fn an_offers_base_fork_version_is_believed_only_where_this_site_took_that_version() {
        let (recipes, stew) = stew_here();
        let v = |n: u64| VersionNumber::new(n).unwrap();
        let base_fork_version = |recipes: &Recipes, number: u32| {
            let view = recipes.snapshot();
            let id = view.recipe(&stew).unwrap().id;
            view.suggestion(id, number)
                .unwrap()
                .unwrap()
                .base_fork_version
        };
        // A version never taken here: not believed.
        let n = recipes
            .receive_offer(&offer_of(2, &["2 eggs", "1 chilli"], Some(1)))
            .unwrap();
        assert_eq!(base_fork_version(&recipes, n), None);
        recipes
            .accept_suggestion(
                &stew,
                n,
                Review::of(v(1), v(2)),
                &[],
                "",
                &Change::by("cal", "yes"),
            )
            .unwrap();
        // The version taken whole, on the base it was offered on: believed.
        let n = recipes
            .receive_offer(&offer_of(3, &["2 eggs", "1 chilli", "feta"], Some(2)))
            .unwrap();
        assert_eq!(base_fork_version(&recipes, n), Some(v(2)));
        // Any other version: not.
        let n = recipes
            .receive_offer(&offer_of(4, &["2 eggs", "1 chilli", "mint"], Some(3)))
            .unwrap();
        assert_eq!(base_fork_version(&recipes, n), None);
        // Nor the version taken, offered to another recipe here.
        let broth = cals(&recipes, "broth", "Broth", "water");
        let to_broth = RemoteOffer {
            to: broth.clone(),
            id: "https://a.example/offers/broth".into(),
            ..offer_of(5, &["water", "1 chilli"], Some(2))
        };
        let n = recipes.receive_offer(&to_broth).unwrap();
        let view = recipes.snapshot();
        let id = view.recipe(&broth).unwrap().id;
        let offered = view.suggestion(id, n).unwrap().unwrap();
        assert_eq!(offered.base_fork_version, None);
    }

    #[test]
    fn a_recipe_deleted_on_its_site_leaves_no_suggestion_to_or_from_it_open() {
        // Ben's suggestion here to ann's soup, which a.example deletes.
        let (recipes, fork) = suggested(&["2 eggs"], &["2 eggs", "1 chilli"]);
        assert!(recipes.retire_remote(ADDRESS, ANN).unwrap());
        let view = recipes.snapshot();
        let id = view.recipe(&fork).unwrap().id;
        let made = view.suggestions_from(id).unwrap().pop().unwrap();
        assert_eq!(made.state, SuggestionState::Closed);
        // Ann's offer here from her soup, which a.example deletes.
        let (recipes, stew) = stew_here();
        let n = recipes
            .receive_offer(&offer_of(2, &["2 eggs", "1 chilli"], None))
            .unwrap();
        assert!(recipes.retire_remote(ADDRESS, ANN).unwrap());
        let view = recipes.snapshot();
        let id = view.recipe(&stew).unwrap().id;
        let offered = view.suggestion(id, n).unwrap().unwrap();
        assert_eq!(offered.state, SuggestionState::Withdrawn);
        assert_eq!(view.open_suggestions(id).unwrap(), 0);
    }

    #[test]
    fn an_accept_counts_once_its_version_is_kept_and_starts_from_what_was_suggested() {
        let (recipes, fork) = suggested(&["2 eggs"], &["2 eggs", "1 chilli"]);
        // Taken whole into ann's version 5, which this site has not yet.
        accepted(&recipes, &fork, 5, true);
        let view = recipes.snapshot();
        let now = view.recipe(&fork).unwrap();
        assert_eq!(view.agreed(&now).unwrap().unwrap().version.get(), 1);
        pages::recipe_show(&view, &fork, ScaleAsked::AS_WRITTEN).expect("the fork's page");
        // Ann's version 6 comes: versions 2 to 5 were never fetched here
        // (they hold version 1's content). The fork is in step with 5, and
        // brings in only what 6 adds.
        recipes
            .keep_remote(&soup(6, &["2 eggs", "1 chilli", "1 tsp salt"]))
            .unwrap();
        let view = recipes.snapshot();
        let now = view.recipe(&fork).unwrap();
        assert_eq!(view.agreed(&now).unwrap().unwrap().version.get(), 5);
        assert!(!view.has_own_changes(&now, &now.content).unwrap());
        assert_eq!(merged(&view, &fork), ["2 eggs", "1 chilli", "1 tsp salt"]);
    }

    #[test]
    fn an_answer_is_taken_only_from_the_recipes_author_and_a_closing_reads_as_closed() {
        let (recipes, fork) = suggested(&["2 eggs"], &["2 eggs", "1 chilli"]);
        let view = recipes.snapshot();
        let id = view.recipe(&fork).unwrap().id;
        let offered = view.suggestions_from(id).unwrap().pop().unwrap();
        let closed = OfferAnswer {
            accepted: None,
            closed: true,
            reply: Some("Retired.".into()),
        };
        let mallory = "https://a.example/cooks/mallory";
        assert!(!recipes
            .record_offer_answer(offered.id, mallory, &closed)
            .unwrap());
        assert!(recipes
            .record_offer_answer(offered.id, ANN, &closed)
            .unwrap());
        let now = recipes.snapshot().suggestion_by_id(offered.id).unwrap();
        assert_eq!(now.state, SuggestionState::Closed);
        assert_eq!(now.reply.as_deref(), Some("Retired."));
        // Answered once: a second answer changes nothing.
        assert!(!recipes
            .record_offer_answer(offered.id, ANN, &closed)
            .unwrap());
    }

    #[test]
    fn an_accept_of_an_offer_made_before_a_bring_in_does_not_move_the_base_back() {
        // Ben adds garlic and offers it; ann adds cumin; ben brings it in
        // and then takes the cumin out again.
        let (recipes, fork) = suggested(&["salt", "pepper"], &["garlic", "salt", "pepper"]);
        recipes
            .keep_remote(&soup(2, &["salt", "pepper", "cumin"]))
            .unwrap();
        let now = recipes.snapshot().recipe(&fork).unwrap();
        let two = crate::domain::VersionNumber::new(2).unwrap();
        recipes
            .bring_in(&fork, now.newest(), two, &[], &Change::by("ben", "cumin"))
            .unwrap();
        ben_edits(&recipes, &fork, &["garlic", "salt", "pepper"]);
        // Ann takes the garlic beside her cumin (not whole), all of it.
        accepted(&recipes, &fork, 3, false);
        recipes
            .keep_remote(&soup(3, &["garlic", "salt", "pepper", "cumin"]))
            .unwrap();
        // The cumin ben took out stays out.
        assert_eq!(
            merged(&recipes.snapshot(), &fork),
            ["garlic", "salt", "pepper"]
        );
    }
}
