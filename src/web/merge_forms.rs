//! What a merge's form sent (a bring-in, a suggestion's review), read
//! once, at the edge: the versions it was made from, a choice (or none
//! yet) for each conflict it showed, and the text written by hand; and how
//! such a page is shown again.

use std::collections::HashMap;

use actix_web::http::StatusCode;
use actix_web::HttpRequest;

use super::form_handling::sentence;
use super::recipes::parse_slug;
use super::session::Visitor;
use super::{Site, WebError};
use crate::domain::merge::{Choice, Merge, Unresolved};
use crate::domain::{Cook, Slug, VersionNumber};
use crate::views::form_fields::FieldErrors;
use crate::views::merges::{self, Chosen, Preview, BOTH, EDIT, MINE, THEIRS};

/// A merge form's fields, each sent at most once. A page's form sends
/// one value of a radio group; a field sent twice is a form no page made,
/// refused (400) rather than read as its last value, a choice the cook
/// never saw.
pub(super) struct Form(HashMap<String, String>);

impl std::ops::Deref for Form {
    type Target = HashMap<String, String>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl<'de> serde::Deserialize<'de> for Form {
    fn deserialize<D: serde::Deserializer<'de>>(fields: D) -> Result<Form, D::Error> {
        struct Once;
        impl<'de> serde::de::Visitor<'de> for Once {
            type Value = Form;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a form's fields, each once")
            }

            fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<Form, M::Error> {
                let mut fields = HashMap::new();
                while let Some((name, value)) = map.next_entry::<String, String>()? {
                    if fields.contains_key(&name) {
                        return Err(serde::de::Error::custom(format!(
                            "the form sends {name:?} twice"
                        )));
                    }
                    fields.insert(name, value);
                }
                Ok(Form(fields))
            }
        }
        fields.deserialize_map(Once)
    }
}

/// What a merge form was sent with: a choice (or none yet) for each
/// conflict it showed, in order, and the same by conflict key, to show
/// them again.
pub(super) struct Sent {
    pub(super) choices: Vec<Option<Choice>>,
    pub(super) chosen: Chosen,
}

impl Sent {
    /// Reads `choice-{n}` (and `edit-{n}` for text written by hand) for
    /// each `key-{n}` the form showed; a value that is no choice is
    /// refused.
    pub(super) fn read(form: &Form) -> Result<Sent, WebError> {
        let shown = form.keys().filter(|k| k.starts_with("key-")).count();
        // A choice for a change the form did not show: another form's.
        let stray = form.keys().any(|k| {
            ["choice-", "edit-"].iter().any(|prefix| {
                k.strip_prefix(prefix)
                    .is_some_and(|n| n.parse::<usize>().map_or(true, |n| n >= shown))
            })
        });
        if stray {
            return Err(WebError::BadRequest(
                "the form's choices are for changes it did not show".into(),
            ));
        }
        let mut sent = Sent {
            choices: Vec::with_capacity(shown),
            chosen: Chosen::new(),
        };
        for n in 0..shown {
            let key = form.get(&merges::key_name(n)).ok_or_else(|| {
                WebError::BadRequest(format!("the form's conflicts skip number {n}"))
            })?;
            let edited = form.get(&merges::edit_name(n)).cloned().unwrap_or_default();
            let value = form.get(&merges::choice_name(n)).map(String::as_str);
            let choice = match value {
                None => None,
                Some(MINE) => Some(Choice::Mine),
                Some(THEIRS) => Some(Choice::Theirs),
                Some(BOTH) => Some(Choice::Both),
                Some(EDIT) => Some(Choice::Edited(edited.clone())),
                Some(other) => {
                    return Err(WebError::BadRequest(format!(
                    "{other:?} is not a way to settle a change: {MINE}, {THEIRS}, {BOTH} or {EDIT}"
                )))
                }
            };
            if let Some(value) = value {
                sent.chosen.insert(key.clone(), value.to_owned(), edited);
            }
            sent.choices.push(choice);
        }
        Ok(sent)
    }

    /// The choices, once there is one for every conflict.
    pub(super) fn complete(&self) -> Option<Vec<Choice>> {
        self.choices.iter().cloned().collect()
    }

    /// The preview of `merge` settled by these choices: the recipe, or why
    /// it is not shown yet.
    pub(super) fn preview<'a>(
        &self,
        merge: &Merge,
        merged: &'a mut Option<crate::domain::Content>,
        site: &'a Site,
    ) -> Preview<'a> {
        let Some(choices) = self.complete() else {
            let left = self.choices.iter().filter(|c| c.is_none()).count();
            return Preview::Unready(format!(
                "Choose how to settle every change made on both sides to see the whole recipe ({left} left)."
            ));
        };
        match merge.resolved(&choices) {
            Ok(content) => Preview::Recipe(merged.insert(content), site.memos()),
            Err(Unresolved::Refused(mistakes)) => Preview::Unready(
                mistakes
                    .iter()
                    .map(|m| sentence(&m.to_string()))
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            Err(unresolved) => Preview::Unready(sentence(&unresolved.to_string())),
        }
    }
}

/// A bring-in form, checked: its token, then the fork it posts to and the
/// cook sending it (a visitor is sent to log in).
pub(super) fn bring_in_sender<'v>(
    req: &HttpRequest,
    visitor: &'v Visitor,
    slug: &str,
    form: &Form,
) -> Result<(Slug, &'v Cook), WebError> {
    visitor.check_form(req, form.get("csrf").map(String::as_str).unwrap_or(""))?;
    let slug = parse_slug(slug)?;
    let cook = visitor.cook_or_login(&merges::bring_in_path(slug.as_str()))?;
    Ok((slug, cook))
}

/// A suggestion's form, checked: its token, then the recipe and the
/// suggestion it posts to, and the cook sending it (a visitor is sent to
/// log in).
pub(super) fn review_sender<'v>(
    req: &HttpRequest,
    visitor: &'v Visitor,
    (slug, number): (String, String),
    form: &Form,
) -> Result<(Slug, u32, &'v Cook), WebError> {
    visitor.check_form(req, form.get("csrf").map(String::as_str).unwrap_or(""))?;
    let slug = parse_slug(&slug)?;
    let number = suggestion_number(&number)?;
    let cook = visitor.cook_or_login(&merges::suggestion_path(slug.as_str(), number))?;
    Ok((slug, number, cook))
}

/// The form's version `name`, or a 400 saying it has none.
pub(super) fn version_field(form: &Form, name: &str) -> Result<VersionNumber, WebError> {
    form.get(name)
        .and_then(|v| v.trim().parse::<u64>().ok())
        .and_then(VersionNumber::new)
        .ok_or_else(|| WebError::BadRequest(format!("the form's {name} is not a version number")))
}

/// How a merge's page (a bring-in, a suggestion's review) is shown: its
/// status, the bring-in's note, the message, what the form was sent with
/// when it is shown again, and whether to preview the merged recipe.
pub(super) struct Again<'a> {
    pub(super) status: StatusCode,
    pub(super) note: Option<&'a str>,
    pub(super) errors: FieldErrors,
    pub(super) sent: Option<&'a Sent>,
    pub(super) preview: bool,
}

impl Again<'_> {
    pub(super) fn first() -> Again<'static> {
        Again {
            status: StatusCode::OK,
            note: None,
            errors: FieldErrors::new(),
            sent: None,
            preview: false,
        }
    }

    /// The page shown again after its form was sent with `sent`: `why`
    /// above it (nothing when empty), the bring-in's `note` kept, and the
    /// merged recipe if `preview`.
    pub(super) fn sent<'a>(
        status: StatusCode,
        why: String,
        note: Option<&'a str>,
        sent: &'a Sent,
        preview: bool,
    ) -> Again<'a> {
        Again {
            status,
            note,
            errors: match why.is_empty() {
                true => FieldErrors::new(),
                false => FieldErrors::one("", why),
            },
            sent: Some(sent),
            preview,
        }
    }

    /// What the page previews of `merge`: nothing unless asked; asked,
    /// the merged recipe once the form sent a choice for each conflict
    /// the merge has, else why not.
    pub(super) fn preview<'a>(
        &self,
        merge: &Merge,
        merged: &'a mut Option<crate::domain::Content>,
        site: &'a Site,
    ) -> Preview<'a> {
        match (self.preview, self.sent) {
            (true, Some(sent)) if sent.choices.len() == merge.conflicts().len() => {
                sent.preview(merge, merged, site)
            }
            (true, _) => {
                Preview::Unready("Choose how to settle each change to see the whole recipe.".into())
            }
            (false, _) => Preview::None,
        }
    }
}

/// What a bring-in form showed: the merge of the fork's version
/// `based_on`, which agreed with its parent's version `since`, with the
/// parent's `upto`.
pub(super) struct Shown {
    pub(super) based_on: VersionNumber,
    pub(super) since: VersionNumber,
    pub(super) upto: VersionNumber,
}

impl Shown {
    pub(super) fn read(form: &Form) -> Result<Shown, WebError> {
        Ok(Shown {
            based_on: version_field(form, "based_on")?,
            since: version_field(form, "since")?,
            upto: version_field(form, "upto")?,
        })
    }
}

/// What a merge form sent after either recipe moved on is told.
pub(super) const CHANGED_MEANWHILE: &str = "The two recipes changed since this page was made: nothing was saved. Here is the merge as it is now; your choices are kept where the same change is still there.";

pub(super) fn suggestion_number(text: &str) -> Result<u32, WebError> {
    text.parse::<u32>()
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| WebError::NotFound(format!("{text:?} is not a suggestion's number")))
}
