//! How deep a page nests its elements, read from its text before it is
//! parsed. html5ever's tree builder looks through the open elements for
//! each tag, so a page nested 100,000 deep (1 MB of `<div>`s) takes it
//! half a minute: such a page is refused first. The count is the
//! parser's in the ways that matter: void elements, self-closed tags,
//! elements whose end tag is optional (`p`, `li`, `td`, ...) and the text
//! of `script`, `style` and comments add no depth.

/// The deepest nesting read: real pages nest a few dozen deep.
pub(super) const MAX_DEPTH: usize = 2_000;

/// Elements with no end tag, or an end tag the parser implies.
const FLAT: [&str; 30] = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr", "param", "keygen", "p", "li", "dt", "dd", "tr", "td", "th", "option", "optgroup",
    "tbody", "thead", "tfoot", "colgroup", "rt", "rp",
];

/// Elements whose content is text to their end tag.
const RAW: [&str; 4] = ["script", "style", "textarea", "title"];

/// The deepest the page's elements nest, by its tags.
pub(super) fn depth(html: &str) -> usize {
    let bytes = html.as_bytes();
    let (mut at, mut depth, mut deepest) = (0, 0usize, 0usize);
    while let Some(found) = html[at..].find('<') {
        let start = at + found;
        let rest = &html[start + 1..];
        if let Some(comment) = rest.strip_prefix("!--") {
            at = match comment.find("-->") {
                Some(end) => start + 4 + end + 3,
                None => return deepest,
            };
            continue;
        }
        let closing = rest.starts_with('/');
        let name_start = start + 1 + usize::from(closing);
        let name_len = html[name_start..]
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(html.len() - name_start);
        let Some(tag_end) = html[name_start..].find('>').map(|end| name_start + end) else {
            return deepest;
        };
        at = tag_end + 1;
        if name_len == 0 {
            continue;
        }
        let name = &html[name_start..name_start + name_len];
        let is_one_of = |names: &[&str]| names.iter().any(|n| n.eq_ignore_ascii_case(name));
        if is_one_of(&FLAT) {
            continue;
        }
        if closing {
            depth = depth.saturating_sub(1);
            continue;
        }
        if bytes[tag_end - 1] == b'/' {
            continue;
        }
        if is_one_of(&RAW) {
            // Its text runs to its end tag.
            // Past its end tag, which closes what added no depth.
            let end = end_tag_at(html, at, name);
            at = html[end..]
                .find('>')
                .map_or(html.len(), |close| end + close + 1);
            continue;
        }
        depth += 1;
        deepest = deepest.max(depth);
    }
    deepest
}

/// Where `</name` starts at or after `at`, in any case; the text's end
/// if nowhere.
fn end_tag_at(html: &str, mut at: usize, name: &str) -> usize {
    while let Some(found) = html[at..].find("</") {
        let start = at + found;
        let after = &html.as_bytes()[start + 2..];
        if after.len() >= name.len() && after[..name.len()].eq_ignore_ascii_case(name.as_bytes()) {
            return start;
        }
        at = start + 2;
    }
    html.len()
}

#[cfg(test)]
mod tests {
    use super::depth;

    #[test]
    fn depth_counts_what_nests_and_not_what_does_not() {
        assert_eq!(
            depth("<html><body><div><p>a<p>b<br><img src=x></div></body></html>"),
            3
        );
        assert_eq!(
            depth("<div><!-- <div><div> --><script>if (a <b) {}</script><span/></div>"),
            1
        );
        assert_eq!(depth(&"<div>".repeat(5_000)), 5_000);
        assert_eq!(depth(&"<div></div>".repeat(5_000)), 1);
        assert_eq!(depth("<ul><li>a<li>b</ul><b>é</b>"), 1);
        assert_eq!(
            depth("<div><SCRIPT>x</div></div></Script><div></div></div>"),
            2
        );
    }
}
