//! The recipe form: new, edit and fork, and what the person typed into it.

use maud::{html, Markup};

use super::diff::{self as diff_view, DiffSection, Layout};
use super::form_fields::{form_errors, textarea, token, Field, FieldErrors};
use super::layout::{self, Head, Section};
use super::recipe_path;
use crate::domain::diff::RecipeDiff;
use crate::domain::{Content, FormPlace, FIELDS};

/// The form's fields as text: what was typed, or a recipe's content.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(default)]
pub struct RecipeFields {
    pub title: String,
    pub slug: String,
    /// One line each.
    pub ingredients: String,
    /// Steps apart by a blank line; `## Name` starts a section.
    pub steps: String,
    /// Apart by commas.
    pub tags: String,
    /// The fields of the domain's table (`domain::FIELDS`), by name, as
    /// typed: the summary, servings, times, notes, details, and `image`,
    /// the address of a picture elsewhere on the web, which the site
    /// fetches and keeps as the recipe's picture when it is new or
    /// changed (no page shows a picture from another site). What the form
    /// sent that is not a field of its own lands here too, and is not read.
    #[serde(flatten)]
    pub scalars: std::collections::BTreeMap<String, String>,
    /// The address `image` had when the form was filled (the version's,
    /// or the one whose picture a form shown again holds already): an
    /// address still the same is not fetched again. Carried through the
    /// form; one altered by hand decides only whether a fetch is tried.
    pub image_was: String,
    /// The uploaded picture the recipe has (its hash), carried through the
    /// form so that saving keeps it; a new file replaces it.
    pub picture: String,
    /// What the picture shows, in words.
    pub picture_alt: String,
    /// `on` when the cook ticked "remove the picture".
    pub remove_picture: String,
    /// What this version changed, for its history.
    pub note: String,
}

impl RecipeFields {
    /// What was typed into the field of `domain::FIELDS` named `name`.
    pub fn scalar(&self, name: &str) -> &str {
        self.scalars.get(name).map_or("", String::as_str)
    }

    /// The fields that show `content`.
    pub fn of(content: &Content) -> RecipeFields {
        RecipeFields {
            title: content.title().to_owned(),
            slug: String::new(),
            ingredients: content.ingredients().join("\n"),
            steps: steps_text(content.steps()),
            tags: content.tags().join(", "),
            scalars: FIELDS
                .iter()
                .map(|field| (field.name.to_owned(), field.form_text(content)))
                .collect(),
            image_was: content.image().map(str::to_owned).unwrap_or_default(),
            picture: content
                .picture()
                .as_ref()
                .map(|p| p.hash.clone())
                .unwrap_or_default(),
            picture_alt: content
                .picture()
                .as_ref()
                .map(|p| p.alt.clone())
                .unwrap_or_default(),
            remove_picture: String::new(),
            note: String::new(),
        }
    }
}

pub use crate::domain::content::steps_text;

/// What kind of form, and where it posts.
pub enum Purpose<'a> {
    New,
    /// An edit of the recipe at `slug`, based on version `based_on`.
    Edit {
        slug: &'a str,
        based_on: u32,
    },
    /// A fork of `slug` at `version`.
    Fork {
        slug: &'a str,
        version: u32,
    },
    /// A recipe read from another site's page, shown to be checked and
    /// changed before it is brought in (`/import/save`).
    Import(&'a ImportShown<'a>),
}

/// Where an import's recipe came from, and what of it was not found.
pub struct ImportShown<'a> {
    /// The page's address: the start of the recipe's lineage.
    pub source_url: &'a str,
    /// The site's name.
    pub source_name: &'a str,
    /// Which reading of the page found it ("its schema.org JSON-LD").
    pub reading: &'a str,
    /// What the page did not have ("steps"), to be written in by hand.
    pub missing: Option<&'a str>,
}

impl Purpose<'_> {
    fn action(&self) -> String {
        match self {
            Purpose::New => "/recipes/new".to_owned(),
            Purpose::Edit { slug, .. } => format!("{}/edit", recipe_path(slug)),
            Purpose::Fork { slug, .. } => format!("{}/fork", recipe_path(slug)),
            Purpose::Import(_) => "/import/save".to_owned(),
        }
    }
}

/// The whole form page. `changed_since` is, for an edit refused because the
/// recipe moved on, what changed since the version it was based on.
pub fn page(
    purpose: &Purpose,
    fields: &RecipeFields,
    errors: &FieldErrors,
    csrf: &str,
    changed_since: Option<(&RecipeDiff, u32)>,
) -> Markup {
    let title = match purpose {
        Purpose::New => "A new recipe".to_owned(),
        Purpose::Edit { .. } => format!("Edit {}", fields.title),
        Purpose::Fork { version, .. } => format!("Fork {} at version {version}", fields.title),
        Purpose::Import(_) => format!("Bring in {}", fields.title),
    };
    // Out of the index by design, as every form a cook writes in.
    let mut head = Head::new(&title, Section::Recipes);
    head.noindex = true;
    layout::page(
        &head,
        html! {
            h1 { (title) }
            @if matches!(purpose, Purpose::New) {
                p { "Found one elsewhere? " a href="/import" { "Bring in a recipe from another site" } "." }
            }
            @if let Some((diff, newest)) = changed_since {
                div class="notice" role="alert" {
                    p { "Someone saved a new version while you were editing: the recipe is at version "
                        (newest) " now. Your text is kept below; here is what changed meanwhile. "
                        "Save again to make yours the next version." }
                    (diff_view::section(Layout::Inline, &DiffSection {
                        heading: "Changed meanwhile".to_owned(),
                        from: "the version you edited".to_owned(),
                        to: format!("version {newest}"),
                        diff,
                    }))
                }
            }
            @if let Purpose::Import(shown) = purpose {
                (import_notice(shown))
            }
            (form_errors(errors))
            // The form and its preview: side by side on a wide screen,
            // the preview kept in view while the form scrolls.
            div class="editor" {
                form class="recipe-form" method="post" action=(purpose.action()) enctype="multipart/form-data" {
                    (token(csrf))
                    @match purpose {
                        Purpose::Edit { based_on, .. } => {
                            input type="hidden" name="based_on" value=(based_on);
                        }
                        Purpose::Fork { version, .. } => {
                            input type="hidden" name="version" value=(version);
                        }
                        Purpose::Import(shown) => {
                            input type="hidden" name="source_url" value=(shown.source_url);
                            input type="hidden" name="source_name" value=(shown.source_name);
                            input type="hidden" name="reading" value=(shown.reading);
                        }
                        Purpose::New => {}
                    }
                    (fields_markup(purpose, fields, errors))
                    button type="submit" { @match purpose {
                        Purpose::New => "Publish",
                        Purpose::Edit { .. } => "Save a new version",
                        Purpose::Fork { .. } => "Fork",
                        Purpose::Import(_) => "Bring it in",
                    } }
                }
                section class="preview" aria-live="polite" aria-label="Preview" data-preview-for="recipe-form" {}
            }
            (retire_form(purpose, csrf))
        },
    )
}

/// Where an import's recipe came from, and, when the page lacked its
/// ingredients or its steps, that they are to be written in.
fn import_notice(shown: &ImportShown) -> Markup {
    html! {
        p class="source-notice" {
            "From " a href=(shown.source_url) rel="nofollow noopener" { (shown.source_name) }
            ", read from " (shown.reading) ". Check it and change what you like: "
            "saving makes its first version here, and its lineage starts at that page."
        }
        @if let Some(missing) = shown.missing {
            div class="notice" role="alert" {
                p { "The page had no " (missing) " this site could read: write them in from the page before you bring it in." }
            }
        }
    }
}

/// The picture: the one the recipe has (kept unless replaced or removed),
/// a file to upload, and the words that say what it shows.
fn picture_fields(f: &RecipeFields, errors: &FieldErrors) -> Markup {
    let has_picture = !f.picture.is_empty() && f.remove_picture != "on";
    let file_error = errors.get("picture_file");
    let mut alt = Field {
        required: false,
        ..Field::text("picture_alt", "What the picture shows", &f.picture_alt)
    };
    alt.hint = Some("A few words for those who cannot see it, e.g. \"a bowl of dal with rice\". Needed with a picture.");
    html! {
        fieldset class="picture-fields" {
            legend { "Picture" }
            @if has_picture {
                input type="hidden" name="picture" value=(f.picture);
                p class="current-picture" {
                    img src={ "/images/" (f.picture) "-1x1.jpg" } width="96" height="96" alt=(f.picture_alt);
                    label { input type="checkbox" name="remove_picture" value="on"; " Remove the picture" }
                }
            }
            div class="field" {
                label for="picture_file" { @if has_picture { "Replace it with" } @else { "Upload a picture" } }
                p class="hint" id="picture_file-hint" { "JPEG, PNG or WebP, up to 10 MiB and 4096 by 3072 pixels (either way up). Its location and camera details are not kept." }
                input id="picture_file" name="picture_file" type="file" accept="image/jpeg,image/png,image/webp"
                    aria-invalid=[file_error.map(|_| "true")] aria-describedby="picture_file-hint";
                @if let Some(message) = file_error {
                    p class="field-error" id="picture_file-error" { (message) }
                }
            }
            (alt.render(errors))
        }
    }
}

/// The address of a picture elsewhere, which the site fetches and keeps.
fn image_field(f: &RecipeFields, errors: &FieldErrors) -> Markup {
    let mut image = Field {
        required: false,
        ..Field::text(
            "image",
            "Or a picture elsewhere on the web (an https:// address)",
            f.scalar("image"),
        )
    };
    image.hint = Some("The site fetches it when the recipe is saved and keeps a copy, as if it had been uploaded: readers' browsers never fetch it from the other site.");
    image.render(errors)
}

/// On an edit page, the author's way to retire the recipe.
fn retire_form(purpose: &Purpose, csrf: &str) -> Markup {
    let Purpose::Edit { slug, based_on } = purpose else {
        return html! {};
    };
    html! {
        h2 { "Retire this recipe" }
        p { "A retired recipe leaves the catalog; its versions stay readable and its forks keep their lineage." }
        form method="post" action={ (recipe_path(slug)) "/retire" } {
            (token(csrf))
            input type="hidden" name="based_on" value=(based_on);
            button type="submit" { "Retire" }
        }
    }
}

fn fields_markup(purpose: &Purpose, f: &RecipeFields, errors: &FieldErrors) -> Markup {
    let optional = |name, label, value| Field {
        required: false,
        ..Field::text(name, label, value)
    };
    let number = |name, label, value| Field {
        kind: "number",
        required: false,
        ..Field::text(name, label, value)
    };
    let mut slug = optional("slug", "Address", &f.slug);
    slug.hint = Some(match purpose {
        Purpose::Fork { .. } => {
            "The recipe's address: letters a-z, digits and -. Left empty, one is made from the recipe's and your names."
        }
        _ => {
            "The recipe's address: letters a-z, digits and -. Left empty, one is made from the title."
        }
    });
    let mut note = Field::text("note", "What you changed", &f.note);
    note.hint = Some("A line for the history, e.g. \"less salt\".");
    html! {
        (Field::text("title", "Title", &f.title).render(errors))
        @if !matches!(purpose, Purpose::Edit { .. }) { (slug.render(errors)) }
        (textarea("summary", "Summary", f.scalar("summary"), Some("Markdown."), 3, errors))
        div class="field-row" {
            (number("servings", "Serves", f.scalar("servings")).render(errors))
            (optional("yield_text", "Makes", f.scalar("yield_text")).render(errors))
        }
        div class="field-row" {
            (number("prep", "Prep (minutes)", f.scalar("prep")).render(errors))
            (number("cook", "Cook (minutes)", f.scalar("cook")).render(errors))
            (number("total", "Total (minutes)", f.scalar("total")).render(errors))
        }
        (textarea("ingredients", "Ingredients", &f.ingredients, Some("One per line, e.g. \"2 cups flour\"."), 10, errors))
        (textarea("steps", "Method", &f.steps, Some("Markdown. A blank line between steps; a line \"## Name\" starts a section."), 12, errors))
        (textarea("notes", "Notes", f.scalar("notes"), Some("Markdown."), 4, errors))
        (optional("tags", "Tags", &f.tags).render(errors))
        div class="field-row" {
            @for field in FIELDS {
                @if let FormPlace::Details(label) = field.form {
                    (optional(field.name, label, f.scalar(field.name)).render(errors))
                }
            }
        }
        (picture_fields(f, errors))
        input type="hidden" name="image_was" value=(f.image_was);
        (image_field(f, errors))
        (note.render(errors))
    }
}
