//! The forms of forks that talk back: bringing in a parent's changes,
//! suggesting a fork's own to the parent, and reviewing a suggestion.
//!
//! What comes in cleanly is shown as a diff against the recipe; each
//! conflict is shown with the base and both sides, and a choice the form
//! cannot be sent without: keep yours, take theirs (named by their cook),
//! keep both (yours first), or write it yourself, in a box that starts
//! with both. A merge form also previews the whole merged recipe: live as
//! the cook chooses, where scripts run, and with its Preview button where
//! they do not.

use std::collections::HashMap;

use maud::{html, Markup};

use super::diff::{section, DiffSection, Layout};
use super::form_fields::{form_errors, token, FieldErrors};
use super::layout::{self, Head, Section};
use super::markdown::Memos;
use super::{human_time, recipe_path, RecipePath};
use crate::domain::merge::{Conflict, Origin, Place, Servings, Why};
use crate::domain::{
    Blocked, BringInShow, Content, InStep, OfferShow, SuggestShow, Suggestion, SuggestionLine,
    SuggestionShow, SuggestionState, SuggestionsShow, MAX_MESSAGE,
};

/// The form's name for the choice of conflict `n`.
pub fn choice_name(n: usize) -> String {
    format!("choice-{n}")
}

/// The form's name for conflict `n`'s text written by hand.
pub fn edit_name(n: usize) -> String {
    format!("edit-{n}")
}

/// The form's name for conflict `n`'s key (`Conflict::key`), so that a
/// form shown again keeps each choice for the conflict it was made for.
pub fn key_name(n: usize) -> String {
    format!("key-{n}")
}

/// The values of a choice.
pub const MINE: &str = "mine";
pub const THEIRS: &str = "theirs";
pub const BOTH: &str = "both";
pub const EDIT: &str = "edit";

/// The choices a merge form was sent with, by conflict key, to show them
/// again where the conflict is still there: the choice, and the text
/// written by hand.
#[derive(Debug, Clone, Default)]
pub struct Chosen(HashMap<String, (String, String)>);

impl Chosen {
    pub fn new() -> Chosen {
        Chosen::default()
    }

    pub fn insert(&mut self, key: String, choice: String, edited: String) {
        self.0.insert(key, (choice, edited));
    }

    fn of(&self, c: &Conflict) -> Option<&(String, String)> {
        self.0.get(&c.key())
    }
}

/// What a merge form previews: nothing yet, the whole merged recipe, or
/// why it cannot be shown.
pub enum Preview<'a> {
    None,
    Recipe(&'a Content, &'a Memos),
    Unready(String),
}

/// The preview's fragment: the merged recipe as its page will show it, or
/// why it is not shown.
pub fn preview_fragment(preview: &Preview) -> Markup {
    match preview {
        Preview::None => html! {},
        Preview::Recipe(content, memos) => super::recipe::preview(content, memos),
        Preview::Unready(why) => html! { p class="meta" { (why) } },
    }
}

fn place_name(place: Place) -> String {
    let mut name = place.label().to_owned();
    if let Some(first) = name.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    name
}

fn lines(lines: &[String]) -> Markup {
    html! {
        @if lines.is_empty() {
            p class="meta" { "(nothing)" }
        } @else {
            ul class="merge-lines" { @for line in lines { li { (line) } } }
        }
    }
}

/// The most text a merge form's boxes for writing by hand start with, all
/// together: a browser sends every box, chosen or not, and a form may be
/// 256 KiB (`web::submission`). Past it a box starts empty, its two sides
/// above to copy from.
pub const PREFILLED: usize = 64 << 10;

/// One conflict: the base, both sides, and the choices between them;
/// `theirs` names the other side ("Ann"), `chosen` what the form was sent
/// with, if it is shown again, and `prefill` whether its box starts with
/// both sides.
fn conflict(n: usize, c: &Conflict, theirs: &str, chosen: &Chosen, prefill: bool) -> Markup {
    let name = choice_name(n);
    let kept = chosen.of(c);
    let is = |value: &str| kept.is_some_and(|(choice, _)| choice == value);
    let (legend, mine_label, theirs_label) = conflict_labels(c, theirs);
    html! {
        fieldset class="conflict" id={ "conflict-" (n) } {
            legend { (legend) }
            (conflict_why(c, theirs))
            input type="hidden" name=(key_name(n)) value=(c.key());
            div class="conflict-sides" {
                div class="conflict-side" {
                    h4 { "When you last agreed" }
                    (lines(&c.base))
                }
                label class="conflict-side" {
                    input type="radio" name=(name) value=(MINE) required checked[is(MINE)];
                    " " (mine_label)
                    (lines(&c.mine))
                }
                label class="conflict-side" {
                    input type="radio" name=(name) value=(THEIRS) checked[is(THEIRS)];
                    " " (theirs_label)
                    (lines(&c.theirs))
                }
            }
            (conflict_more(n, c, theirs, kept, prefill))
        }
    }
}

/// A conflict's legend, and the labels of its two sides' choices.
fn conflict_labels(c: &Conflict, theirs: &str) -> (String, String, String) {
    match &c.why {
        Why::Changed => (
            format!("{}: changed on both sides", place_name(c.place)),
            "Keep yours".to_owned(),
            format!("Take {theirs}'s"),
        ),
        Why::Doubled(line) => (
            format!(
                "{}: \u{201c}{line}\u{201d} would come in twice",
                place_name(c.place)
            ),
            "Yours here".to_owned(),
            format!("{theirs}'s here"),
        ),
        Why::Moved { line, .. } => (
            format!("{}: \u{201c}{line}\u{201d} was moved", place_name(c.place)),
            "Yours here".to_owned(),
            format!("{theirs}'s here"),
        ),
    }
}

/// Why a line's conflict is one, where a change on both sides does not
/// say it: a line put in twice, or moved.
fn conflict_why(c: &Conflict, theirs: &str) -> Markup {
    html! {
        @match &c.why {
            Why::Doubled(_) => p class="meta" {
                "You and " (theirs) " each put this line in, at different places. "
                "Choose at each place whether it goes there, so that it is in once."
            },
            Why::Moved { by: Origin::Mine, .. } => p class="meta" {
                "You moved this line, and " (theirs) "'s changes meet it at its other place. "
                "Choose at both places, so that it is in once."
            },
            Why::Moved { .. } => p class="meta" {
                (theirs) " moved this line, and your changes meet it at its other place. "
                "Choose at both places, so that it is in once."
            },
            Why::Changed => {},
        }
    }
}

/// A conflict's other choices, where it allows them: both sides, and its
/// box for writing it by hand (starting with what was `kept`, else with
/// both sides if `prefill`).
fn conflict_more(
    n: usize,
    c: &Conflict,
    theirs: &str,
    kept: Option<&(String, String)>,
    prefill: bool,
) -> Markup {
    let name = choice_name(n);
    let is = |value: &str| kept.is_some_and(|(choice, _)| choice == value);
    let start = if prefill { c.prefill.as_str() } else { "" };
    let edited = kept
        .filter(|(choice, _)| choice == EDIT)
        .map_or(start, |(_, text)| text.as_str());
    let rows = edited.lines().count().clamp(2, 12);
    html! {
        div class="conflict-more" {
            @if c.allows_both() {
                label {
                    input type="radio" name=(name) value=(BOTH) checked[is(BOTH)];
                    " Keep both: yours first, then " (theirs) "'s"
                }
            }
            @if c.allows_edit() {
                label {
                    input type="radio" name=(name) value=(EDIT) checked[is(EDIT)];
                    " Write it yourself:"
                }
                textarea name=(edit_name(n)) rows=(rows) aria-label={ (place_name(c.place)) ", written by hand" } { (edited) }
            }
        }
    }
}

/// The conflicts of a merge form, each with its choices; the boxes for
/// writing by hand start with both sides while they fit in `PREFILLED`.
fn conflicts(list: &[Conflict], theirs: &str, chosen: &Chosen) -> Markup {
    let mut budget = PREFILLED;
    let prefilled: Vec<bool> = list
        .iter()
        .map(|c| {
            let fits = c.prefill.len() <= budget;
            if fits {
                budget -= c.prefill.len();
            }
            fits
        })
        .collect();
    html! {
        @if !list.is_empty() {
            h2 { "Changes made on both sides" }
            @for (n, (c, fits)) in list.iter().zip(prefilled).enumerate() {
                (conflict(n, c, theirs, chosen, fits))
            }
        }
    }
}

/// What a merge of two recipes written for different servings does with
/// the lines each side brings; `theirs` names the other side.
fn servings_notice(s: Servings, theirs: &str) -> Markup {
    // The mark a line gets, with the number it would carry.
    let scaled = |written_for: &[i64]| {
        let marks = written_for
            .iter()
            .map(|n| match n {
                1 => "\u{201c}for 1 serving\u{201d}".to_owned(),
                n => format!("\u{201c}for {n} servings\u{201d}"),
            })
            .collect::<Vec<_>>()
            .join(" or ");
        format!("scaled to them where their amount plainly can be, and otherwise marked with the servings they were written for ({marks}), to check")
    };
    html! {
        p class="notice servings" {
            "Your recipe serves " (s.mine) " and " (theirs) "'s " (s.theirs) ". "
            @match s.merged {
                Some(to) if to == s.mine => {
                    "The merged recipe serves your " (to) ": the lines that come in from "
                    (theirs) " are " (scaled(&[s.theirs])) "."
                }
                Some(to) if to == s.theirs => {
                    "The merged recipe serves " (theirs) "'s " (to) ", as they changed it: your own new lines are "
                    (scaled(&[s.mine])) "."
                }
                Some(to) => {
                    "The merged recipe serves " (to) ": the lines of either side that come in are " (scaled(&[s.mine, s.theirs])) "."
                }
                None => {
                    "Once you choose whose servings to keep, the lines written for the other are " (scaled(&[s.mine, s.theirs])) "."
                }
            }
        }
    }
}

/// The notice that a merge could not be saved as it comes, with what to
/// trim.
fn over_limits(notes: &[String]) -> Markup {
    html! {
        @if !notes.is_empty() {
            div class="notice over-limits" role="alert" {
                @for note in notes { p { (note) } }
            }
        }
    }
}

/// The preview's box, filled as the form is shown (its Preview button) or
/// live, where scripts run, from `url`.
fn preview_box(form: &str, url: &str, preview: &Preview) -> Markup {
    html! {
        section class="preview" aria-live="polite" aria-label="Preview of the merged recipe"
            data-preview-for=(form) data-preview-url=(url) {
            (preview_fragment(preview))
        }
    }
}

/// Where a fork's bring-in form posts, and its preview.
pub fn bring_in_path(slug: &str) -> String {
    format!("{}/bring-in", recipe_path(slug))
}

/// The bring-in page: what the parent's versions change, and the form
/// that brings them in (with choices for each conflict, and a preview).
pub fn bring_in_page(
    model: &BringInShow,
    note: &str,
    csrf: &str,
    errors: &FieldErrors,
    chosen: &Chosen,
    preview: &Preview,
) -> Markup {
    let fork = &model.fork;
    let changes = &model.changes;
    let (slug, title) = (fork.slug.as_str(), &fork.content.title());
    let parent_title = &changes.parent.content.title();
    let heading = format!("Bring {parent_title}'s changes into {title}");
    let mut head = Head::new(&heading, Section::Recipes);
    // A cook's form, never a page to index.
    head.noindex = true;
    let action = bring_in_path(slug);
    layout::page(
        &head,
        html! {
            h1 { (heading) }
            (bring_in_lede(model))
            @if let Some(servings) = changes.merge.servings() {
                (servings_notice(servings, &model.theirs))
            }
            (over_limits(&model.over_limits))
            (form_errors(errors))
            (incoming(model))
            form method="post" action=(action) class="bring-in merge-form" id="merge-form" {
                (token(csrf))
                input type="hidden" name="based_on" value=(fork.version_count);
                input type="hidden" name="since" value=(changes.base);
                input type="hidden" name="upto" value=(changes.upto);
                (conflicts(changes.merge.conflicts(), &model.theirs, chosen))
                div class="field" {
                    label for="note" { "What this version does" }
                    input type="text" id="note" name="note" value=(note) maxlength="2000";
                }
                div class="form-actions" {
                    button type="submit" name="action" value="save" { "Bring them in" }
                    button type="submit" name="action" value="preview" class="secondary" formnovalidate { "Preview" }
                }
            }
            (preview_box("merge-form", &format!("{action}/preview"), preview))
            p { a href=(recipe_path(slug)) { "Back to " (title) } }
        },
    )
}

/// What the parent's changes are, in a sentence: how many new versions
/// since the two last agreed, and whether any meets the fork's own.
fn bring_in_lede(model: &BringInShow) -> Markup {
    let changes = &model.changes;
    let parent = &changes.parent;
    let (title, parent_title) = (&model.fork.content.title(), &parent.content.title());
    let list = changes.merge.conflicts();
    // As the fork's page counts them: the versions that took its own
    // suggestions are no news to it.
    let gained = (changes.upto.get() - changes.base.get()).saturating_sub(changes.taken as u32);
    html! {
        p class="lede" {
            a href=(RecipePath(parent.slug.as_str())) { (parent_title) } " has "
            a href={ (RecipePath(parent.slug.as_str())) "/diff?from=" (changes.base) "&to=" (changes.upto) } {
                (super::count(gained, "new version", "new versions"))
            }
            " since version " (changes.base) ", the one " (title) " last agreed with"
            @match changes.taken {
                0 => {},
                1 => { ", besides the one that took your suggestion" },
                n => { ", besides the " (n) " that took your suggestions" },
            }
            ". "
            @let its = if gained == 1 { "its" } else { "their" };
            @if list.is_empty() && gained == 1 {
                "It changes nothing you changed, so it comes in as it is."
            } @else if list.is_empty() {
                "They change nothing you changed, so they come in as they are."
            } @else if list.len() == 1 {
                "One of " (its) " changes meets one of yours: choose how to settle it before saving."
            } @else {
                (list.len()) " of " (its) " changes meet yours: choose how to settle each before saving."
            }
        }
    }
}

/// What comes in without a choice, as a diff of the fork; or, where
/// every change meets one of the fork's, a notice saying so.
fn incoming(model: &BringInShow) -> Markup {
    let (fork, changes) = (&model.fork, &model.changes);
    let (title, parent_title) = (&fork.content.title(), &changes.parent.content.title());
    let list = changes.merge.conflicts();
    let incoming = DiffSection {
        heading: match list.is_empty() {
            true => "What comes in".to_owned(),
            false => "What comes in as it is".to_owned(),
        },
        from: format!("{title} now (version {})", fork.version_count),
        to: format!("{title} with {parent_title}'s changes"),
        diff: &model.incoming,
    };
    html! {
        @if model.incoming.is_empty() && !list.is_empty() {
            section class="diff-section" {
                h2 { (incoming.heading) }
                p class="notice" {
                    "Nothing comes in without your choice: each of " (parent_title)
                    "'s changes meets one of yours, below."
                }
            }
        } @else {
            (section(Layout::Inline, &incoming))
        }
    }
}

/// The bring-in page of a fork in step with its parent: nothing to bring
/// in, and the way back; where the fork made the parent's changes itself
/// but its record says otherwise, a form to record that it is in step
/// (no version: an agreement). `errors` says why the cook was sent here,
/// if a form of theirs was refused.
pub fn in_step_page(model: &InStep, csrf: &str, errors: &FieldErrors) -> Markup {
    let (fork, parent, version) = (&model.fork, &model.parent, model.version);
    let title = fork.content.title();
    let heading = format!("{title} is in step with {}", parent.title);
    let mut head = Head::new(&heading, Section::Recipes);
    // A cook's form, never a page to index.
    head.noindex = true;
    let slug = fork.slug.as_str();
    layout::page(
        &head,
        html! {
            h1 { (heading) }
            (form_errors(errors))
            p class="lede" {
                (title) " has every change of "
                a href=(RecipePath(&parent.slug)) { (parent.title) }
                " up to its version " (version) ", its newest: there is nothing to bring in."
                @if model.unrecorded {
                    " What it changed since the two last agreed is in your recipe already (or was taken back)."
                }
            }
            @if model.unrecorded {
                form method="post" action=(bring_in_path(slug)) class="bring-in" {
                    (token(csrf))
                    input type="hidden" name="based_on" value=(fork.version_count);
                    input type="hidden" name="since" value=(model.since);
                    input type="hidden" name="upto" value=(version);
                    input type="hidden" name="note" value={ "In step with version " (version) " of " (parent.title) };
                    p { "Record that it is in step, so that its page no longer says it is behind. It makes no new version." }
                    button type="submit" name="action" value="save" { "Record that it is in step" }
                }
            }
            p { a href=(recipe_path(slug)) { "Back to " (title) } }
        },
    )
}

/// The note a bring-in's version is given unless the cook writes another.
pub fn default_note(model: &BringInShow) -> String {
    format!(
        "Brought in version {} of {}",
        model.changes.upto,
        model.changes.parent.content.title()
    )
}

/// A fork's form to suggest its changes to its parent's author.
pub fn suggest_page(
    model: &SuggestShow,
    message: &str,
    csrf: &str,
    errors: &FieldErrors,
) -> Markup {
    let (fork, parent) = (&model.fork, &model.parent);
    let (slug, title) = (fork.slug.as_str(), fork.content.title());
    let parent_title = parent.content.title();
    let heading = format!("Suggest {title}'s changes to {parent_title}");
    let mut head = Head::new(&heading, Section::Recipes);
    // A cook's form, never a page to index.
    head.noindex = true;
    let change = DiffSection {
        heading: "What you suggest".to_owned(),
        from: match model.base_fork_version {
            None => format!(
                "{parent_title} as you last agreed (its version {})",
                model.base
            ),
            Some(v) => format!(
                "{parent_title} as you last agreed (its version {}), with the changes it took from your version {v}",
                model.base
            ),
        },
        to: format!("{parent_title} with your changes"),
        diff: &model.change,
    };
    let parent_slug = parent.slug.as_str();
    layout::page(
        &head,
        html! {
            h1 { (heading) }
            p class="lede" {
                "The author of " a href=(RecipePath(parent_slug)) { (parent_title) }
                " sees your changes since you last agreed and can take them into their recipe, crediting you. "
                "Your title and picture stay yours: they are not sent."
            }
            @match &model.blocked {
                Some(Blocked::Open(open)) => p class="notice" {
                    "You already suggested them: "
                    a href=(suggestion_path(parent_slug, *open)) { "suggestion " (open) }
                    @if crate::domain::slug::is_elsewhere(parent_slug) {
                        " was offered, and is open there."
                    } @else {
                        " is open, and follows your newest version."
                    }
                },
                Some(Blocked::NothingToSuggest) => p class="notice" {
                    (parent_title) " has every change you made: there is nothing to suggest."
                },
                Some(Blocked::Declined(number)) => p class="notice" {
                    a href=(suggestion_path(parent_slug, *number)) { "Suggestion " (number) }
                    " sent these very changes and was declined. Change your recipe before suggesting again."
                },
                Some(Blocked::TakenInPart(number)) => p class="notice" {
                    a href=(suggestion_path(parent_slug, *number)) { "Suggestion " (number) }
                    " sent these very changes, and " (parent_title) "'s author took them in part, keeping their own version of the rest. Change your recipe before suggesting again."
                },
                Some(Blocked::ParentRetired) => p class="notice" {
                    (parent_title) " was retired by its author, and takes no suggestions."
                },
                None => {
                    (form_errors(errors))
                    (section(Layout::Inline, &change))
                    form method="post" action={ (recipe_path(slug)) "/suggest" } class="suggest" {
                        (token(csrf))
                        input type="hidden" name="based_on" value=(fork.version_count);
                        div class="field" {
                            label for="message" { "Your message to its author" }
                            textarea id="message" name="message" rows="4" maxlength=(MAX_MESSAGE) required { (message) }
                        }
                        button type="submit" { "Suggest these changes" }
                    }
                },
            }
            p { a href=(recipe_path(slug)) { "Back to " (title) } }
        },
    )
}

/// Where suggestion `n` to the recipe at `slug` is. A recipe kept from
/// another site numbers the suggestions offered to it there, not as here:
/// its list of suggestions there.
pub fn suggestion_path(slug: &str, n: u32) -> String {
    if crate::domain::slug::is_elsewhere(slug) {
        return format!("{slug}/suggestions");
    }
    format!("{}/suggestions/{n}", recipe_path(slug))
}

/// A suggestion's state in words.
pub fn state_text(s: &Suggestion) -> String {
    match (s.state, s.accepted_in) {
        (SuggestionState::Accepted, Some(v)) => format!("accepted in version {v}{}", in_part(s)),
        (SuggestionState::Closed, _) => "closed: the recipe was retired".to_owned(),
        (state, _) => state.as_str().to_owned(),
    }
}

/// What an accepted suggestion's state adds when the author kept their
/// own version of some of its changes; nothing otherwise.
fn in_part(s: &Suggestion) -> String {
    match s.kept_own {
        Some(kept) if kept > 0 && s.whole != Some(true) => format!(
            ", in part: the author kept their own version of {kept} {}",
            if kept == 1 { "change" } else { "changes" }
        ),
        _ => String::new(),
    }
}

/// A suggestion's state, linking the version that took it once accepted.
fn state(slug: &str, s: &Suggestion) -> Markup {
    html! {
        span class={ "state " (s.state.as_str()) } {
            @match (s.state, s.accepted_in) {
                (SuggestionState::Accepted, Some(v)) => {
                    "accepted in " a href=(super::version_path(slug, v)) { "version " (v) } (in_part(s))
                }
                _ => (state_text(s)),
            }
        }
    }
}

/// Which of a cook's lists a suggestion line is in: what it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whose {
    /// Sent to the cook: who made it, from which fork.
    Received,
    /// Made by the cook: to which recipe.
    Sent,
}

/// A cook's suggestions, the newest first, each with its state.
pub fn suggestion_lines(lines: &[SuggestionLine], whose: Whose) -> Markup {
    html! {
        ul class="suggestions" {
            @for line in lines {
                @let s = &line.suggestion;
                li {
                    a href=(suggestion_path(&line.to.slug, s.number)) { "Suggestion " (s.number) }
                    @match whose {
                        Whose::Received => {
                            " to " a href=(RecipePath(&line.to.slug)) { (line.to.title) }
                            " from " a href=(RecipePath(&line.from.slug)) { (line.from.title) }
                            @if let Some(by) = &s.by { " by " (by) }
                        }
                        Whose::Sent => {
                            " from " a href=(RecipePath(&line.from.slug)) { (line.from.title) }
                            " to " a href=(RecipePath(&line.to.slug)) { (line.to.title) }
                        }
                    }
                    ", " (human_time(s.made)) ": " (state(&line.to.slug, s))
                }
            }
        }
    }
}

/// A page of a recipe's suggestions, newest first.
pub fn suggestions_page(model: &SuggestionsShow) -> Markup {
    let r = &model.recipe;
    let heading = format!("Suggestions to {}", r.content.title());
    let mut head = Head::new(&heading, Section::Recipes);
    head.description = Some("Changes cooks suggested from their forks, and what became of them.");
    // Out of the index by design: a conversation between two cooks about
    // changes that, once taken, are the recipe's own page.
    head.noindex = true;
    layout::page(
        &head,
        html! {
            h1 { (heading) }
            @if model.suggestions.is_empty() && model.total > 0 {
                p { "No suggestions before that one: the first is number 1." }
            } @else if model.suggestions.is_empty() {
                p { "No suggestions yet. A cook who forks this recipe can suggest their changes back." }
            } @else {
                p class="lede" {
                    @if model.suggestions.len() < model.total {
                        "Suggestions " (model.suggestions.first().map_or(0, |(s, _)| s.number))
                        " to " (model.suggestions.last().map_or(0, |(s, _)| s.number))
                        " of " (model.total) ", newest first."
                    } @else {
                        (super::count(model.total as i64, "suggestion", "suggestions")) ", newest first."
                    }
                }
                ol class="suggestions" reversed {
                    @for (s, fork) in &model.suggestions {
                        li {
                            a href=(suggestion_path(r.slug.as_str(), s.number)) { "Suggestion " (s.number) }
                            " from " a href=(RecipePath(&fork.slug)) { (fork.title) }
                            @if let Some(by) = &s.by { " by " (by) }
                            ", " (human_time(s.made)) ": " (state(r.slug.as_str(), s))
                        }
                    }
                }
            }
            @if let Some(older) = model.older {
                nav class="pager" aria-label="Pages" {
                    a rel="next" href={ (recipe_path(r.slug.as_str())) "/suggestions?before=" (older) } { "Older suggestions" }
                }
            }
            p { a href=(recipe_path(r.slug.as_str())) { "Back to " (r.content.title()) } }
        },
    )
}

/// Who is looking at a suggestion, for the forms it offers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reviewer {
    /// The recipe's author: accept or decline.
    Author,
    /// The cook who made it: withdraw.
    Suggester,
    Other,
}

/// One suggestion: its message, the fork's changes, what accepting does
/// (a three-way comparison), and the forms its reader may use. Both the
/// accept and the decline form carry the two versions the review shows.
pub fn suggestion_page(
    model: &SuggestionShow,
    reviewer: Reviewer,
    csrf: &str,
    errors: &FieldErrors,
    chosen: &Chosen,
    preview: &Preview,
) -> Markup {
    let (r, s) = (&model.recipe, &model.suggestion);
    let title = r.content.title();
    let heading = format!("Suggestion {} to {title}", s.number);
    let mut head = Head::new(&heading, Section::Recipes);
    // Out of the index by design: a review, whose diffs repeat the two
    // recipes' own pages.
    head.noindex = true;
    let proposed = DiffSection {
        heading: "What they changed".to_owned(),
        from: format!("{title} as they last agreed"),
        to: format!("{} version {}", model.fork.title, s.from_version),
        diff: &model.proposed,
    };
    layout::page(
        &head,
        html! {
            h1 { (heading) }
            (suggestion_intro(model))
            (form_errors(errors))
            (section(Layout::Inline, &proposed))
            @if s.state == SuggestionState::Open {
                (what_accepting_does(model))
                @if reviewer == Reviewer::Author {
                    (author_forms(model, csrf, chosen, preview))
                }
                @if reviewer == Reviewer::Suggester {
                    form method="post" action=(suggestion_path(r.slug.as_str(), s.number)) class="withdraw" {
                        (token(csrf))
                        input type="hidden" name="action" value="withdraw";
                        button type="submit" { "Withdraw this suggestion" }
                    }
                }
            }
            p {
                a href={ (recipe_path(r.slug.as_str())) "/suggestions" } { "Every suggestion to " (title) }
                " · " a href=(recipe_path(r.slug.as_str())) { "Back to " (title) }
            }
        },
    )
}

/// Where a fork's suggestion to its parent on another site is seen here,
/// and withdrawn (the other site's pages review it).
pub fn offer_path(fork: &str) -> String {
    format!("{}/offer", recipe_path(fork))
}

/// A fork's newest suggestion to its parent on another site, as its cook
/// sees it here: what was offered, what became of it, and, while it is
/// open, the form that withdraws it (carrying the suggestion it showed).
pub fn offer_page(model: &OfferShow, suggester: bool, csrf: &str) -> Markup {
    let (fork, parent, s) = (&model.fork, &model.parent, &model.suggestion);
    let parent_slug = parent.slug.as_str();
    let site = super::site_elsewhere(parent_slug).unwrap_or_default();
    let heading = format!("Suggestion to {} on {site}", parent.content.title());
    let mut head = Head::new(&heading, Section::Recipes);
    head.noindex = true;
    layout::page(
        &head,
        html! {
            h1 { (heading) }
            p class="lede" {
                a href=(super::version_path(fork.slug.as_str(), s.from_version)) {
                    "Version " (s.from_version) " of " (fork.content.title())
                }
                " was offered to " a href=(recipe_path(parent_slug)) { (parent.content.title()) }
                " on " (site) ", " (human_time(s.made)) ". It is " (state(parent_slug, s)) "."
            }
            blockquote class="message" { (s.message) }
            @if let Some(reply) = &s.reply {
                p class="reply" { "The author's note: " (reply) }
            }
            @if s.state == SuggestionState::Open {
                p { "Its author reviews it on " (site) "; their answer comes back here." }
                @if suggester {
                    form method="post" action=(offer_path(fork.slug.as_str())) class="withdraw" {
                        (token(csrf))
                        input type="hidden" name="number" value=(s.number);
                        button type="submit" { "Withdraw this suggestion" }
                    }
                }
            }
            p { a href=(RecipePath(fork.slug.as_str())) { "Back to " (fork.content.title()) } }
        },
    )
}

/// Where a suggestion comes from, whose it is, what it is now, what it
/// suggests against what, its message and the author's note.
fn suggestion_intro(model: &SuggestionShow) -> Markup {
    let (r, s) = (&model.recipe, &model.suggestion);
    html! {
        p class="lede" {
            "From " a href=(RecipePath(&model.fork.slug)) { (model.fork.title) }
            @if let Some(by) = &s.by {
                // A cook elsewhere (`@ben@b.example`) has no page here.
                @if by.starts_with('@') { " by " (by) } @else { " by " a href={ "/cooks/" (by) } { (by) } }
            }
            ", " (human_time(s.made)) ". It is " (state(r.slug.as_str(), s)) "."
        }
        p {
            "It suggests "
            a href=(super::version_path(&model.fork.slug, s.from_version)) { "version " (s.from_version) " of " (model.fork.title) }
            ", against version " (s.base_version) " of " (r.content.title()) "."
        }
        blockquote class="message" { (s.message) }
        @if let Some(reply) = &s.reply {
            p class="reply" { "The author's note: " (reply) }
        }
    }
}

/// What an open suggestion would do: what the recipe changed since the
/// two last agreed, and what comes in as it is (or, where every change
/// meets one of the recipe's, a notice saying so).
fn what_accepting_does(model: &SuggestionShow) -> Markup {
    let r = &model.recipe;
    let title = &r.content.title();
    let since_base = DiffSection {
        heading: format!("What {title} changed since"),
        from: format!("{title} as they last agreed"),
        to: format!("{title} now (version {})", r.version_count),
        diff: &model.since_base,
    };
    let list = model.merge.conflicts();
    let outcome = DiffSection {
        heading: match list.is_empty() {
            true => "What accepting it does".to_owned(),
            false => "What comes in as it is".to_owned(),
        },
        from: format!("{title} now (version {})", r.version_count),
        to: format!("{title} with the suggestion"),
        diff: &model.outcome,
    };
    html! {
        @if !model.since_base.is_empty() {
            (section(Layout::Inline, &since_base))
        }
        @if model.outcome.is_empty() && !list.is_empty() {
            section class="diff-section" {
                h2 { (outcome.heading) }
                p class="notice" {
                    "Nothing comes in without your choice: each of the suggestion's changes meets one of "
                    (title) "'s, below."
                }
            }
        } @else {
            (section(Layout::Inline, &outcome))
        }
    }
}

/// The recipe's author's forms: accept (with a choice for each conflict,
/// and its preview) and decline, each carrying the versions reviewed.
fn author_forms(model: &SuggestionShow, csrf: &str, chosen: &Chosen, preview: &Preview) -> Markup {
    let (r, s) = (&model.recipe, &model.suggestion);
    let title = &r.content.title();
    let here = suggestion_path(r.slug.as_str(), s.number);
    let shown = html! {
        input type="hidden" name="based_on" value=(r.version_count);
        input type="hidden" name="fork_version" value=(s.from_version);
        input type="hidden" name="fork_base" value=(s.base_version);
    };
    html! {
        (over_limits(&model.over_limits))
        form method="post" action=(here) class="accept merge-form" id="merge-form" {
            (token(csrf))
            (shown)
            (conflicts(model.merge.conflicts(), &model.theirs, chosen))
            div class="field" {
                label for="accept-reply" { "A note to them (optional)" }
                input type="text" id="accept-reply" name="reply" maxlength=(MAX_MESSAGE);
            }
            div class="form-actions" {
                button type="submit" name="action" value="accept" { "Accept: a new version of " (title) }
                button type="submit" name="action" value="preview" class="secondary" formnovalidate { "Preview" }
            }
        }
        (preview_box("merge-form", &format!("{here}/preview"), preview))
        form method="post" action=(here) class="decline" {
            (token(csrf))
            (shown)
            input type="hidden" name="action" value="decline";
            div class="field" {
                label for="decline-reply" { "Why not (optional)" }
                input type="text" id="decline-reply" name="reply" maxlength=(MAX_MESSAGE);
            }
            button type="submit" { "Decline" }
        }
    }
}
