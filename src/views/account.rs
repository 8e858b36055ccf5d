//! Signing up, logging in, and a cook's account page.

use maud::{html, Markup};

use super::form_fields::{form_errors, token, Field, FieldErrors};
use super::layout::{self, Head, Section};
use super::merges::{suggestion_lines, Whose};
use crate::domain::{Cook, CookSuggestions};

/// What the sign-up form keeps of what was typed (never the password).
#[derive(Debug, Clone, Default)]
pub struct SignUpValues {
    pub handle: String,
    pub name: String,
}

pub fn sign_up(values: &SignUpValues, errors: &FieldErrors, csrf: &str) -> Markup {
    let mut handle = Field::text("handle", "Handle", &values.handle);
    handle.hint = Some("Letters a-z, digits and -, as in your page's address.");
    handle.autocomplete = Some("username");
    let mut name = Field::text("name", "Display name", &values.name);
    name.autocomplete = Some("name");
    let mut password = Field::password("password", "Password", "new-password");
    password.hint = Some("At least 10 characters.");
    let mut head = Head::new("Sign up", Section::Other);
    head.description =
        Some("Make an account on forkful to write recipes, edit them and fork anyone's.");
    layout::page(
        &head,
        html! {
            h1 { "Sign up" }
            (form_errors(errors))
            form class="account-form" method="post" action="/signup" {
                (token(csrf))
                (handle.render(errors))
                (name.render(errors))
                (password.render(errors))
                button type="submit" { "Sign up" }
            }
            p { "Have an account? " a href="/login" { "Log in" } "." }
        },
    )
}

pub fn log_in(handle: &str, next: &str, errors: &FieldErrors, csrf: &str) -> Markup {
    let mut handle = Field::text("handle", "Handle", handle);
    handle.autocomplete = Some("username");
    let password = Field::password("password", "Password", "current-password");
    // Out of the index by design: a form that is only a door (and its
    // `?next=` addresses are endless).
    let mut head = Head::new("Log in", Section::Other);
    head.noindex = true;
    layout::page(
        &head,
        html! {
            h1 { "Log in" }
            (form_errors(errors))
            form class="account-form" method="post" action="/login" {
                (token(csrf))
                input type="hidden" name="next" value=(next);
                (handle.render(errors))
                (password.render(errors))
                button type="submit" { "Log in" }
            }
            p { "New here? " a href="/signup" { "Sign up" } "." }
        },
    )
}

/// The path of the feed of suggestions to the recipes of `handle`.
pub fn suggestions_feed_path(handle: &str) -> String {
    format!("/cooks/{handle}/suggestions.xml")
}

/// The path of the feed of the suggestions `handle` made.
pub fn suggested_feed_path(handle: &str) -> String {
    format!("/cooks/{handle}/suggested.xml")
}

/// The cook's suggestions on their account page: those sent to their
/// recipes (the open ones to review first), and those they made.
fn suggestions(cook: &Cook, suggestions: &CookSuggestions) -> Markup {
    let open = suggestions.open_received().count();
    let more = |listed: usize, total: usize| {
        html! {
            @if total > listed {
                p class="meta" { "The newest " (listed) " of " (total) "." }
            }
        }
    };
    html! {
        h2 id="suggestions" { "Suggestions to your recipes" }
        @if suggestions.received.is_empty() {
            p { "None yet. When a cook who forked one of your recipes suggests their changes, they are listed here for you to review." }
        } @else {
            p {
                (super::count(open as i64, "open suggestion", "open suggestions")) " to review"
                @if suggestions.received_total > suggestions.received.len() { " among the newest" }
                ". "
                a href=(suggestions_feed_path(cook.handle.as_str())) { "Follow them in a feed" } "."
            }
            (suggestion_lines(&suggestions.received, Whose::Received))
            (more(suggestions.received.len(), suggestions.received_total))
        }
        h2 { "Your suggestions" }
        @if suggestions.sent.is_empty() {
            p { "None yet. From a fork of yours, suggest its changes to the recipe it came from." }
        } @else {
            p {
                a href=(suggested_feed_path(cook.handle.as_str())) { "Follow what becomes of them in a feed" } "."
            }
            (suggestion_lines(&suggestions.sent, Whose::Sent))
            (more(suggestions.sent.len(), suggestions.sent_total))
        }
    }
}

/// The account page: who is logged in, the suggestions they were sent
/// and made, change password, log out.
pub fn account(
    cook: &Cook,
    cook_suggestions: &CookSuggestions,
    notice: Option<&str>,
    errors: &FieldErrors,
    csrf: &str,
) -> Markup {
    // Out of the index by design: one cook's own page, never public.
    let mut head = Head::new("Your account", Section::Other);
    head.noindex = true;
    let current = Field::password("current", "Current password", "current-password");
    let mut new = Field::password("new", "New password", "new-password");
    new.hint = Some("At least 10 characters. Every other session ends.");
    layout::page(
        &head,
        html! {
            h1 { "Your account" }
            @if let Some(notice) = notice { p class="notice" role="status" { (notice) } }
            p { "Logged in as " (cook.name) " (" (cook.handle) "). "
                "Your page, " a href={ "/cooks/" (cook.handle) } { "/cooks/" (cook.handle) } ", lists your recipes and forks once you have published one." }
            p { a href="/recipes/new" { "Write a new recipe" } }
            (suggestions(cook, cook_suggestions))
            h2 { "Change your password" }
            (form_errors(errors))
            form class="account-form" method="post" action="/account/password" {
                (token(csrf))
                // Whose password this is, for password managers; the
                // handler reads the cook from the session, not from this.
                input type="text" name="username" autocomplete="username" value=(cook.handle) hidden readonly;
                (current.render(errors))
                (new.render(errors))
                button type="submit" { "Change password" }
            }
            h2 { "Log out" }
            form method="post" action="/logout" {
                (token(csrf))
                button type="submit" { "Log out" }
            }
            form method="post" action="/logout/everywhere" {
                (token(csrf))
                button type="submit" { "Log out everywhere" }
            }
        },
    )
}
