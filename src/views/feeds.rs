//! Atom, the sitemap and robots.txt: XML and text, written directly.
//!
//! maud writes HTML (void elements without a closing slash), so these small
//! XML documents are written as strings, every text escaped with `xml`.

use std::fmt::Write;

use super::machine_time;
use super::markdown::Memos;
use crate::domain::pages::FeedOf;
use crate::domain::{CatalogEntry, Instant, SuggestionsFeed};

/// `text` escaped for XML text and attribute values.
pub fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Characters XML 1.0 does not allow at all (surrogates cannot
            // be in a `str`).
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => {}
            '\u{FFFE}' | '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

/// An Atom feed of recently changed recipes, newest first; `updated` is the
/// instant of the newest change (the store's basis).
pub fn atom(base_url: &str, memos: &Memos, entries: &[CatalogEntry], updated: Instant) -> String {
    let mut out = String::with_capacity(512 + entries.len() * 512);
    let base = xml(base_url);
    let _ = write!(
        out,
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n\
         <feed xmlns=\"http://www.w3.org/2005/Atom\">\n\
         <title>forkful: recent changes</title>\n\
         <id>{base}/</id>\n\
         <link rel=\"alternate\" href=\"{base}/\"/>\n\
         <link rel=\"self\" href=\"{base}/feed.xml\"/>\n\
         <updated>{}</updated>\n\
         <author><name>forkful</name></author>\n",
        machine_time(updated)
    );
    for entry in entries {
        let url = format!("{base}/recipes/{}", xml(&entry.slug));
        let at = entry.updated_at.unwrap_or(updated);
        let _ = write!(
            out,
            "<entry>\n<title>{}</title>\n<id>{url}/versions/{}</id>\n\
             <link rel=\"alternate\" href=\"{url}\"/>\n<updated>{}</updated>\n",
            xml(&entry.title),
            entry.version_count,
            machine_time(at),
        );
        if let Some(summary) = &entry.summary {
            let _ = writeln!(
                out,
                "<summary>{}</summary>",
                xml(&memos.plain_text(summary))
            );
        }
        for tag in &entry.tags {
            let _ = writeln!(out, "<category term=\"{}\"/>", xml(tag));
        }
        out.push_str("</entry>\n");
    }
    out.push_str("</feed>\n");
    out
}

/// An Atom feed of the suggestions sent to a cook's recipes, the last
/// changed first: each entry one suggestion (its id stays as its state
/// changes; `updated` says when it last did).
pub fn suggestions_atom(base_url: &str, feed: &SuggestionsFeed) -> String {
    let mut out = String::with_capacity(512 + feed.lines.len() * 512);
    let base = xml(base_url);
    let handle = xml(&feed.handle);
    let (path, title) = match feed.of {
        FeedOf::Received => (
            super::account::suggestions_feed_path(&feed.handle),
            format!("suggestions to {}'s recipes", feed.name),
        ),
        FeedOf::Sent => (
            super::account::suggested_feed_path(&feed.handle),
            format!("suggestions {} made, and what became of them", feed.name),
        ),
    };
    let this = format!("{base}{}", xml(&path));
    let _ = write!(
        out,
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n\
         <feed xmlns=\"http://www.w3.org/2005/Atom\">\n\
         <title>forkful: {}</title>\n\
         <id>{this}</id>\n\
         <link rel=\"alternate\" href=\"{base}/cooks/{handle}\"/>\n\
         <link rel=\"self\" href=\"{this}\"/>\n\
         <updated>{}</updated>\n\
         <author><name>forkful</name></author>\n",
        xml(&title),
        machine_time(feed.updated)
    );
    for line in &feed.lines {
        let s = &line.suggestion;
        let url = xml(&super::absolute(
            base_url,
            super::merges::suggestion_path(&line.to.slug, s.number),
        ));
        let state = super::merges::state_text(s);
        let _ = write!(
            out,
            "<entry>\n<title>Suggestion {} to {} from {} ({state})</title>\n<id>{url}</id>\n\
             <link rel=\"alternate\" href=\"{url}\"/>\n<published>{}</published>\n<updated>{}</updated>\n",
            s.number,
            xml(&line.to.title),
            xml(&line.from.title),
            machine_time(s.made),
            machine_time(s.changed),
        );
        // The same entry in both feeds has the same id: a reader that
        // follows both sees it once.
        match &s.by {
            // A cook elsewhere (`@ben@b.example`) has no page here.
            Some(by) if by.starts_with('@') => {
                let _ = writeln!(out, "<author><name>{}</name></author>", xml(by));
            }
            Some(by) => {
                let _ = writeln!(
                    out,
                    "<author><name>{}</name><uri>{base}/cooks/{}</uri></author>",
                    xml(by),
                    xml(by)
                );
            }
            None => {}
        }
        let mut summary = s.message.clone();
        if let Some(reply) = &s.reply {
            summary.push_str("\n\nThe author's note: ");
            summary.push_str(reply);
        }
        let _ = writeln!(out, "<summary>{}</summary>", xml(&summary));
        out.push_str("</entry>\n");
    }
    out.push_str("</feed>\n");
    out
}

/// The sitemap index: `/sitemaps/1.xml` to `/sitemaps/{files}.xml`.
pub fn sitemap_index(base_url: &str, files: usize) -> String {
    let base = xml(base_url);
    let mut out = String::with_capacity(128 + files * 64);
    out.push_str(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n\
         <sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for n in 1..=files {
        let _ = writeln!(out, "<sitemap><loc>{base}/sitemaps/{n}.xml</loc></sitemap>");
    }
    out.push_str("</sitemapindex>\n");
    out
}

/// A sitemap file: recipes (with the instant each last changed), and, in
/// the first file, the catalog and the about page.
pub fn sitemap(
    base_url: &str,
    first: bool,
    recipes: &[(std::sync::Arc<str>, Option<Instant>)],
) -> String {
    let base = xml(base_url);
    let mut out = String::with_capacity(256 + recipes.len() * 128);
    out.push_str(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n\
         <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    if first {
        let _ = writeln!(out, "<url><loc>{base}/</loc></url>");
        let _ = writeln!(out, "<url><loc>{base}/about</loc></url>");
    }
    for (slug, changed) in recipes {
        let _ = write!(out, "<url><loc>{base}/recipes/{}</loc>", xml(slug));
        if let Some(at) = changed {
            let _ = write!(out, "<lastmod>{}</lastmod>", machine_time(*at));
        }
        out.push_str("</url>\n");
    }
    out.push_str("</urlset>\n");
    out
}

/// robots.txt: everything may be crawled but the diffs, which only repeat
/// the versions, and the search results.
pub fn robots(base_url: &str) -> String {
    format!(
        "User-agent: *\nDisallow: /search\nDisallow: /recipes/*/diff\nDisallow: /recipes/*/compare\n\nSitemap: {base_url}/sitemap.xml\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_escapes_markup_and_drops_control_characters() {
        assert_eq!(xml("a<b>&\"c'\u{1}"), "a&lt;b&gt;&amp;&quot;c&apos;");
        assert_eq!(xml("x\u{FFFE}y\u{FFFF}z\u{FFFD}"), "xyz\u{FFFD}");
    }
}
