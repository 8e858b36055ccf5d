//! What the form handlers share: a page that differs per visitor, a redirect
//! after a successful POST, and query values.

use actix_web::http::{header, StatusCode};
use actix_web::{HttpRequest, HttpResponse};
use maud::Markup;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// The largest form a page takes, in bytes: a long recipe and its notes
/// (a picture sent with it is counted apart, against its own limit).
pub const MAX_FORM_BYTES: usize = 256 * 1024;

use crate::domain::Attempt;

use super::personal::Personal;
use super::session::Visitor;
use super::Site;

/// What a query value may keep as it is: RFC 3986's unreserved characters.
const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// `text` encoded for a query string's value.
pub fn query_value(text: &str) -> String {
    utf8_percent_encode(text, QUERY_VALUE).to_string()
}

/// A page for one visitor (a form with their token), with a logged-in
/// cook's own header links: never stored by a shared cache, nor kept by
/// the browser.
pub fn private_page(
    site: &Site,
    visitor: &Visitor,
    status: StatusCode,
    page: Markup,
) -> HttpResponse {
    let mut response = HttpResponse::build(status);
    response
        .insert_header((header::CONTENT_TYPE, "text/html; charset=utf-8"))
        .insert_header((header::CACHE_CONTROL, "private, no-store"));
    visitor.keep_form_token(site, &mut response);
    let page = page.into_string();
    let personal = visitor.cook.as_ref().map(Personal::for_cook);
    match personal.and_then(|personal| personal.page(&page)) {
        Some(theirs) => response.body(theirs),
        None => response.body(page),
    }
}

/// The attempt a form's POST is saved under (`domain::Attempt`), so that
/// the same form sent again is saved once: its token as sent, which is
/// masked afresh on every page (so it names the page the form was on),
/// where it was sent, and what it `said` (its fields, as the handler read
/// them). The same page sent again with other fields (back, change, send)
/// is another attempt.
pub fn attempt_of(req: &HttpRequest, token: &str, said: &[&[u8]]) -> Attempt {
    let mut parts: Vec<&[u8]> = vec![token.as_bytes(), req.path().as_bytes()];
    parts.extend_from_slice(said);
    Attempt::of(&parts)
}

/// 303 See Other to `to`: what a successful POST answers, so that reloading
/// the page it leads to does not send the form again.
pub fn see_other(to: &str) -> actix_web::HttpResponseBuilder {
    let mut response = HttpResponse::SeeOther();
    response
        .insert_header((header::LOCATION, to.to_owned()))
        .insert_header((header::CACHE_CONTROL, "no-store"));
    response
}

/// A message from below (`a recipe needs a title`) as a sentence for a
/// form: capitalised, with a full stop unless it ends with one (a
/// message that quotes a number with its own stop, `at most 1.5.`).
pub fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    let Some(first) = chars.next() else {
        return String::new();
    };
    let mut sentence = first.to_uppercase().chain(chars).collect::<String>();
    if !sentence.ends_with(['.', '!', '?']) {
        sentence.push('.');
    }
    sentence
}

#[cfg(test)]
mod tests {
    use super::sentence;

    #[test]
    fn a_message_becomes_one_sentence_with_one_stop() {
        assert_eq!(
            sentence("a recipe needs a title"),
            "A recipe needs a title."
        );
        assert_eq!(sentence("it is at most 10000."), "It is at most 10000.");
        assert_eq!(sentence("why?"), "Why?");
        assert_eq!(sentence(""), "");
    }
}
