//! JSON-LD as sites publish it, which is not always JSON: wrapped in
//! `<![CDATA[ ... ]]>` or an HTML comment, with raw line breaks and tabs
//! inside strings, trailing commas, or every quote written as `&quot;`.
//! Each repair is tried only when the text does not parse as it is, so a
//! well-formed document is read exactly as `serde_json` reads it.
//!
//! Hand-written: the JSON5 and "relaxed JSON" crates accept other
//! extensions (comments, unquoted keys) and none of these defects, which
//! are what a browser forgives in a page and a scraper must too.

use serde_json::Value;

/// The document in `text`, repaired if it must be; `None` if no repair
/// makes it JSON.
pub(super) fn parse(text: &str) -> Option<Value> {
    let text = text.trim();
    if let Ok(value) = serde_json::from_str(text) {
        return Some(value);
    }
    let mended = repaired(unwrapped(text));
    if let Ok(value) = serde_json::from_str(&mended) {
        return Some(value);
    }
    // A document whose every quote is an entity: decoded, then repaired.
    if text.contains("&quot;") || text.contains("&#34;") || text.contains("&#x22;") {
        let decoded = decoded_entities(unwrapped(text));
        return serde_json::from_str(&repaired(&decoded)).ok();
    }
    None
}

/// `text` without the wrappers sites put around a script's JSON: CDATA
/// markers (with the `//` that hides them from old browsers) and HTML
/// comment markers.
fn unwrapped(text: &str) -> &str {
    let mut text = text.trim();
    loop {
        let before = text;
        for opening in ["//<![CDATA[", "<![CDATA[", "<!--"] {
            text = text.strip_prefix(opening).unwrap_or(text).trim_start();
        }
        for closing in ["//]]>", "]]>", "-->"] {
            text = text.strip_suffix(closing).unwrap_or(text).trim_end();
        }
        if text == before {
            return text;
        }
    }
}

/// `text` with raw control characters inside strings escaped, and the
/// commas that end an object or a list (`[1, 2,]`) left out.
fn repaired(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for (at, c) in text.char_indices() {
        if in_string {
            match c {
                _ if escaped => {
                    escaped = false;
                    out.push(c);
                }
                '\\' => {
                    escaped = true;
                    out.push(c);
                }
                '"' => {
                    in_string = false;
                    out.push(c);
                }
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if c < ' ' => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            ',' => {
                let rest = text[at + 1..].trim_start();
                if !(rest.starts_with('}') || rest.starts_with(']')) {
                    out.push(c);
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// `text` with the entities a page's encoder writes for JSON's own
/// characters decoded (quotes, ampersands, angle brackets, apostrophes);
/// others are left for the text fields' own decoding (`text::plain`).
fn decoded_entities(text: &str) -> String {
    const ENTITIES: [(&str, &str); 9] = [
        ("&quot;", "\""),
        ("&#34;", "\""),
        ("&#x22;", "\""),
        ("&#39;", "'"),
        ("&#x27;", "'"),
        ("&apos;", "'"),
        ("&lt;", "<"),
        ("&gt;", ">"),
        // Last, so that `&amp;quot;` becomes `&quot;` and not a quote.
        ("&amp;", "&"),
    ];
    let mut out = text.to_owned();
    for (entity, character) in ENTITIES {
        out = out.replace(entity, character);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::parse;
    use serde_json::json;

    #[test]
    fn the_defects_sites_publish_are_forgiven_and_nothing_else_changes() {
        let expected = json!({"@type": "Recipe", "name": "Dal", "recipeIngredient": ["a", "b"]});
        for text in [
            r#"{"@type": "Recipe", "name": "Dal", "recipeIngredient": ["a", "b"]}"#,
            r#"//<![CDATA[
            {"@type": "Recipe", "name": "Dal", "recipeIngredient": ["a", "b"]}
            //]]>"#,
            r#"<!-- {"@type": "Recipe", "name": "Dal", "recipeIngredient": ["a", "b"]} -->"#,
            r#"{"@type": "Recipe", "name": "Dal", "recipeIngredient": ["a", "b",],}"#,
            r#"{&quot;@type&quot;: &quot;Recipe&quot;, &quot;name&quot;: &quot;Dal&quot;, &quot;recipeIngredient&quot;: [&quot;a&quot;, &quot;b&quot;]}"#,
        ] {
            assert_eq!(parse(text), Some(expected.clone()), "{text}");
        }
        // Raw line breaks and tabs inside strings are kept as the text's.
        assert_eq!(
            parse("{\"name\": \"Dal\tsoup\",\n \"description\": \"one\ntwo\"}"),
            Some(json!({"name": "Dal\tsoup", "description": "one\ntwo"}))
        );
        // A comma inside a string is the string's, at its end too.
        assert_eq!(
            parse("{\"name\": \"a, ]\", \"x\": [1,\n]}"),
            Some(json!({"name": "a, ]", "x": [1]}))
        );
        // An escaped quote does not end a string.
        assert_eq!(
            parse("{\"name\": \"the \\\"best\\\",\n dal\",}"),
            Some(json!({"name": "the \"best\",\n dal"}))
        );
        for broken in ["{not json", "", "[1, 2", "{\"a\": }"] {
            assert_eq!(parse(broken), None, "{broken}");
        }
    }
}
