//! Forms: fields that keep what the person typed and show the error next to
//! the field it is about, and the hidden token every state-changing form
//! carries.

use maud::{html, Markup};

/// What a form says went wrong, field by field (`""` for the whole form).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldErrors(Vec<(&'static str, String)>);

impl FieldErrors {
    pub fn new() -> FieldErrors {
        FieldErrors::default()
    }

    pub fn add(&mut self, field: &'static str, message: impl Into<String>) {
        self.0.push((field, message.into()));
    }

    /// One error about `field`.
    pub fn one(field: &'static str, message: impl Into<String>) -> FieldErrors {
        let mut errors = FieldErrors::new();
        errors.add(field, message);
        errors
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn get(&self, field: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(f, _)| *f == field)
            .map(|(_, m)| m.as_str())
    }
}

/// The form's token, as a hidden field.
pub fn token(csrf: &str) -> Markup {
    html! { input type="hidden" name="csrf" value=(csrf); }
}

/// The errors about the whole form, above it.
pub fn form_errors(errors: &FieldErrors) -> Markup {
    html! {
        @if let Some(message) = errors.get("") {
            p class="form-error" role="alert" { (message) }
        }
    }
}

/// A labelled input; `value` is what the person typed (never a password).
pub struct Field<'a> {
    pub name: &'static str,
    pub label: &'a str,
    pub kind: &'static str,
    pub value: &'a str,
    pub hint: Option<&'a str>,
    pub autocomplete: Option<&'static str>,
    pub required: bool,
}

impl<'a> Field<'a> {
    pub fn text(name: &'static str, label: &'a str, value: &'a str) -> Field<'a> {
        Field {
            name,
            label,
            kind: "text",
            value,
            hint: None,
            autocomplete: None,
            required: true,
        }
    }

    pub fn password(name: &'static str, label: &'a str, autocomplete: &'static str) -> Field<'a> {
        Field {
            kind: "password",
            autocomplete: Some(autocomplete),
            ..Field::text(name, label, "")
        }
    }

    pub fn render(&self, errors: &FieldErrors) -> Markup {
        let error = errors.get(self.name);
        let described = error
            .map(|_| format!("{}-error", self.name))
            .or(self.hint.map(|_| format!("{}-hint", self.name)));
        html! {
            div class="field" {
                label for=(self.name) { (self.label) }
                @if let Some(hint) = self.hint {
                    p class="hint" id={ (self.name) "-hint" } { (hint) }
                }
                input id=(self.name) name=(self.name) type=(self.kind) value=(self.value)
                    autocomplete=[self.autocomplete] required[self.required]
                    aria-invalid=[error.map(|_| "true")] aria-describedby=[described];
                @if let Some(message) = error {
                    p class="field-error" id={ (self.name) "-error" } { (message) }
                }
            }
        }
    }
}

/// A labelled text area, for Markdown and lists.
pub fn textarea(
    name: &'static str,
    label: &str,
    value: &str,
    hint: Option<&str>,
    rows: u32,
    errors: &FieldErrors,
) -> Markup {
    let error = errors.get(name);
    html! {
        div class="field" {
            label for=(name) { (label) }
            @if let Some(hint) = hint {
                p class="hint" id={ (name) "-hint" } { (hint) }
            }
            textarea id=(name) name=(name) rows=(rows)
                aria-invalid=[error.map(|_| "true")] { (value) }
            @if let Some(message) = error {
                p class="field-error" id={ (name) "-error" } { (message) }
            }
        }
    }
}

/// Every error of a form, as a list (the preview of a form with mistakes).
pub fn error_list(errors: &FieldErrors) -> Markup {
    html! {
        ul class="form-error" role="alert" {
            @for (field, message) in &errors.0 {
                li { @if !field.is_empty() { (field) ": " } (message) }
            }
        }
    }
}
