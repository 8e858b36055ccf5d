//! The forms of forks that talk back: bringing in a parent's changes,
//! suggesting a fork's own to the parent, and reviewing a suggestion.
//!
//! What comes in cleanly is shown as a diff against the fork; each
//! conflict is shown with the base and both sides, and a choice between
//! the two sides that the form cannot be sent without.

use maud::{html, Markup};

use super::diff::{section, DiffSection, Layout};
use super::form_fields::{form_errors, token, FieldErrors};
use super::layout::{self, Head, Section};
use super::{human_time, recipe_path, RecipePath};
use crate::domain::merge::{Conflict, Place};
use crate::domain::{
    BringInShow, SuggestShow, Suggestion, SuggestionLine, SuggestionShow, SuggestionState,
    SuggestionsShow, MAX_MESSAGE,
};

/// The form's name for the choice of conflict `n`.
pub fn choice_name(n: usize) -> String {
    format!("choice-{n}")
}

/// The values of a choice: the fork's own side, or the parent's.
pub const MINE: &str = "mine";
pub const THEIRS: &str = "theirs";

fn place_name(place: Place) -> String {
    match place {
        Place::Field(label) => {
            let mut name = label.to_owned();
            if let Some(first) = name.get_mut(0..1) {
                first.make_ascii_uppercase();
            }
            name
        }
        Place::Ingredients => "Ingredients".to_owned(),
        Place::Steps => "Method".to_owned(),
    }
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

/// One conflict: the base, both sides, and the choice between them.
fn conflict(n: usize, c: &Conflict, parent: &str) -> Markup {
    let name = choice_name(n);
    html! {
        fieldset class="conflict" id=(name) {
            legend { (place_name(c.place)) ": changed on both sides" }
            div class="conflict-sides" {
                div class="conflict-side" {
                    h4 { "When they last agreed" }
                    (lines(&c.base))
                }
                label class="conflict-side" {
                    input type="radio" name=(name) value=(MINE) required;
                    " Keep yours"
                    (lines(&c.mine))
                }
                label class="conflict-side" {
                    input type="radio" name=(name) value=(THEIRS) required;
                    " Take " (parent) "'s"
                    (lines(&c.theirs))
                }
            }
        }
    }
}

/// The bring-in page: what the parent's versions change, and the form
/// that brings them in (with a choice for each conflict).
pub fn bring_in_page(model: &BringInShow, note: &str, csrf: &str, errors: &FieldErrors) -> Markup {
    let fork = &model.fork;
    let changes = &model.changes;
    let parent = &changes.parent;
    let (slug, title) = (fork.slug.as_str(), &fork.content.title);
    let parent_title = &parent.content.title;
    let heading = format!("Bring {parent_title}'s changes into {title}");
    let mut head = Head::new(&heading, Section::Recipes);
    // A cook's form, never a page to index.
    head.noindex = true;
    let conflicts = changes.merge.conflicts();
    let gained = changes.upto.get() - changes.base.get();
    let incoming = DiffSection {
        heading: match changes.merge.conflicts().is_empty() {
            true => "What comes in".to_owned(),
            false => "What comes in as it is".to_owned(),
        },
        from: format!("{title} now (version {})", fork.version_count),
        to: format!("{title} with {parent_title}'s changes"),
        diff: &model.incoming,
    };
    layout::page(
        &head,
        html! {
            h1 { (heading) }
            p class="lede" {
                a href=(RecipePath(parent.slug.as_str())) { (parent_title) } " has "
                a href={ (RecipePath(parent.slug.as_str())) "/diff?from=" (changes.base) "&to=" (changes.upto) } {
                    (super::count(gained, "new version", "new versions"))
                }
                " since version " (changes.base) ", the one " (title) " last agreed with. "
                @if conflicts.is_empty() {
                    "They change nothing you changed, so they come in as they are."
                } @else {
                    @if conflicts.len() == 1 {
                        "One of their changes differs from yours: choose a side before saving."
                    } @else {
                        (conflicts.len()) " of their changes differ from yours: choose a side for each before saving."
                    }
                }
            }
            (form_errors(errors))
            (section(Layout::Inline, &incoming))
            form method="post" action={ (recipe_path(slug)) "/bring-in" } class="bring-in" {
                (token(csrf))
                input type="hidden" name="based_on" value=(fork.version_count);
                input type="hidden" name="upto" value=(changes.upto);
                @if !conflicts.is_empty() {
                    h2 { "Changes made on both sides" }
                    @for (n, c) in conflicts.iter().enumerate() {
                        (conflict(n, c, parent_title))
                    }
                }
                div class="field" {
                    label for="note" { "What this version does" }
                    input type="text" id="note" name="note" value=(note) maxlength="2000";
                }
                button type="submit" { "Bring them in" }
            }
            p { a href=(recipe_path(slug)) { "Back to " (title) } }
        },
    )
}

/// The note a bring-in's version is given unless the cook writes another.
pub fn default_note(model: &BringInShow) -> String {
    format!(
        "Brought in version {} of {}",
        model.changes.upto, model.changes.parent.content.title
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
    let (slug, title) = (fork.slug.as_str(), &fork.content.title);
    let parent_title = &parent.content.title;
    let heading = format!("Suggest {title}'s changes to {parent_title}");
    let mut head = Head::new(&heading, Section::Recipes);
    // A cook's form, never a page to index.
    head.noindex = true;
    let change = DiffSection {
        heading: "What you suggest".to_owned(),
        from: format!("{parent_title} version {}", model.base),
        to: format!("{title} now (version {})", fork.version_count),
        diff: &model.change,
    };
    layout::page(
        &head,
        html! {
            h1 { (heading) }
            p class="lede" {
                "The author of " a href=(RecipePath(parent.slug.as_str())) { (parent_title) }
                " sees your changes since its version " (model.base)
                " and can take them into their recipe, crediting you."
            }
            @if let Some(open) = model.open {
                p class="notice" {
                    "You already suggested them: "
                    a href=(suggestion_path(parent.slug.as_str(), open)) { "suggestion " (open) }
                    " is open, and follows your newest version."
                }
            } @else {
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
            }
            p { a href=(recipe_path(slug)) { "Back to " (title) } }
        },
    )
}

/// Where suggestion `n` to the recipe at `slug` is.
pub fn suggestion_path(slug: &str, n: u32) -> String {
    format!("{}/suggestions/{n}", recipe_path(slug))
}

/// A suggestion's state in words.
pub fn state_text(s: &Suggestion) -> String {
    match (s.state, s.accepted_in) {
        (SuggestionState::Accepted, Some(v)) => format!("accepted in version {v}"),
        (state, _) => state.as_str().to_owned(),
    }
}

/// A suggestion's state, linking the version that took it once accepted.
fn state(slug: &str, s: &Suggestion) -> Markup {
    html! {
        span class={ "state " (s.state.as_str()) } {
            @match (s.state, s.accepted_in) {
                (SuggestionState::Accepted, Some(v)) => {
                    "accepted in " a href=(super::version_path(slug, v)) { "version " (v) }
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

/// A recipe's suggestions, newest last.
pub fn suggestions_page(model: &SuggestionsShow) -> Markup {
    let r = &model.recipe;
    let heading = format!("Suggestions to {}", r.content.title);
    let mut head = Head::new(&heading, Section::Recipes);
    head.description = Some("Changes cooks suggested from their forks, and what became of them.");
    // Out of the index by design: a conversation between two cooks about
    // changes that, once taken, are the recipe's own page.
    head.noindex = true;
    layout::page(
        &head,
        html! {
            h1 { (heading) }
            @if model.suggestions.is_empty() {
                p { "No suggestions yet. A cook who forks this recipe can suggest their changes back." }
            } @else {
                ol class="suggestions" {
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
            p { a href=(recipe_path(r.slug.as_str())) { "Back to " (r.content.title) } }
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
/// (a three-way comparison), and the forms its reader may use.
pub fn suggestion_page(
    model: &SuggestionShow,
    reviewer: Reviewer,
    csrf: &str,
    errors: &FieldErrors,
) -> Markup {
    let (r, s) = (&model.recipe, &model.suggestion);
    let title = &r.content.title;
    let heading = format!("Suggestion {} to {title}", s.number);
    let mut head = Head::new(&heading, Section::Recipes);
    // Out of the index by design: a review, whose diffs repeat the two
    // recipes' own pages.
    head.noindex = true;
    let here = suggestion_path(r.slug.as_str(), s.number);
    let proposed = DiffSection {
        heading: "What they changed".to_owned(),
        from: format!("{title} version {}", s.base_version),
        to: format!("{} version {}", model.fork.title, s.from_version),
        diff: &model.proposed,
    };
    let since_base = DiffSection {
        heading: format!("What {title} changed since"),
        from: format!("{title} version {}", s.base_version),
        to: format!("{title} now (version {})", r.version_count),
        diff: &model.since_base,
    };
    let outcome = DiffSection {
        heading: "What accepting it does".to_owned(),
        from: format!("{title} now (version {})", r.version_count),
        to: format!("{title} with the suggestion"),
        diff: &model.outcome,
    };
    let conflicts = model.merge.conflicts();
    let open = s.state == SuggestionState::Open;
    layout::page(
        &head,
        html! {
            h1 { (heading) }
            p class="lede" {
                "From " a href=(RecipePath(&model.fork.slug)) { (model.fork.title) }
                @if let Some(by) = &s.by { " by " a href={ "/cooks/" (by) } { (by) } }
                ", " (human_time(s.made)) ". It is " (state(r.slug.as_str(), s)) "."
            }
            p {
                "It suggests "
                a href=(super::version_path(&model.fork.slug, s.from_version)) { "version " (s.from_version) " of " (model.fork.title) }
                ", against version " (s.base_version) " of " (title) "."
            }
            blockquote class="message" { (s.message) }
            @if let Some(reply) = &s.reply {
                p class="reply" { "The author's note: " (reply) }
            }
            (form_errors(errors))
            (section(Layout::Inline, &proposed))
            @if open {
                @if !model.since_base.is_empty() {
                    (section(Layout::Inline, &since_base))
                }
                (section(Layout::Inline, &outcome))
                @if reviewer == Reviewer::Author {
                    form method="post" action=(here) class="accept" {
                        (token(csrf))
                        input type="hidden" name="action" value="accept";
                        input type="hidden" name="based_on" value=(r.version_count);
                        @if !conflicts.is_empty() {
                            h2 { "Changes made on both sides" }
                            @for (n, c) in conflicts.iter().enumerate() {
                                (conflict(n, c, &model.fork.title))
                            }
                        }
                        div class="field" {
                            label for="accept-reply" { "A note to them (optional)" }
                            input type="text" id="accept-reply" name="reply" maxlength=(MAX_MESSAGE);
                        }
                        button type="submit" { "Accept: a new version of " (title) }
                    }
                    form method="post" action=(here) class="decline" {
                        (token(csrf))
                        input type="hidden" name="action" value="decline";
                        div class="field" {
                            label for="decline-reply" { "Why not (optional)" }
                            input type="text" id="decline-reply" name="reply" maxlength=(MAX_MESSAGE);
                        }
                        button type="submit" { "Decline" }
                    }
                }
                @if reviewer == Reviewer::Suggester {
                    form method="post" action=(here) class="withdraw" {
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
