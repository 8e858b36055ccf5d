//! Markdown, rendered safely, through maud's `Render`.
//!
//! Recipe text is Markdown written by people, so rendering it must never let
//! them write HTML into the page. Rather than render everything and clean the
//! result afterwards, the renderer never produces anything unsafe: raw HTML
//! in the source (blocks and inline tags) is passed through as *text*, so it
//! is escaped like any other text, and a link or image whose address is not
//! `http`, `https`, `mailto` or relative keeps its words but loses the
//! address. An image from another site becomes a link to it, its words
//! the link's (`own_address`): drawn, it would have every reader's browser
//! ask that site for it, telling it who reads the recipe (and the site's
//! Content-Security-Policy takes images from the site only). What remains is pulldown-cmark's own HTML, which escapes every
//! text and attribute it writes. Safe by construction, it needs no sanitiser
//! pass per request (and none when written).
//!
//! Rendering is a pure function of the text, and the same texts come back
//! on every request for a page, so both renderings are memoised (`Memo`):
//! pulldown-cmark allocates tens of kilobytes per parse, which made it most
//! of a page's render time and almost all of its allocated bytes.

use std::sync::{Arc, OnceLock};

use maud::Render;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use pulldown_cmark_escape::{escape_href, escape_html};

/// Markdown text that renders as HTML, through `memos`.
pub struct Markdown<'a> {
    pub text: &'a str,
    pub memos: &'a Memos,
}

fn options() -> Options {
    Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES | Options::ENABLE_SMART_PUNCTUATION
}

/// Whether a link's address is one a page may carry: no `javascript:`,
/// `data:` or other scheme that can run or embed something.
fn safe_url(url: &str) -> bool {
    let url = url.trim_start();
    match url.find([':', '/', '?', '#']) {
        // A scheme is what comes before the first colon, if that colon comes
        // before any '/', '?' or '#'.
        Some(i) if url.as_bytes()[i] == b':' => {
            let scheme = url[..i].to_ascii_lowercase();
            matches!(scheme.as_str(), "http" | "https" | "mailto")
        }
        _ => true,
    }
}

/// A link's opening tag. Cooks write these links, so search engines are
/// told not to vouch for them (`nofollow ugc`), and a page they open gets
/// no handle on this one (`noopener`).
fn link_start(url: &str, title: &str) -> String {
    let mut a = String::with_capacity(url.len() + title.len() + 48);
    a.push_str("<a href=\"");
    // Writing to a String cannot fail.
    let _ = escape_href(&mut a, url);
    a.push('"');
    if !title.is_empty() {
        a.push_str(" title=\"");
        let _ = escape_html(&mut a, title);
        a.push('"');
    }
    a.push_str(" rel=\"nofollow ugc noopener\">");
    a
}

/// Whether an image's address is this site's, so that a browser asks only
/// this site for it: resolved as a browser resolves it (the WHATWG URL
/// rules, tabs and newlines dropped, `\` as `/`), a relative path stays
/// on the page's host; an absolute address, or one that starts `//`,
/// leaves it.
fn own_address(url: &str) -> bool {
    static PAGE: OnceLock<url::Url> = OnceLock::new();
    let page = PAGE.get_or_init(|| {
        url::Url::parse("https://forkful.invalid/recipes/page").expect("a valid address")
    });
    page.join(url).is_ok_and(|resolved| {
        resolved.scheme() == "https" && resolved.host_str() == Some("forkful.invalid")
    })
}

/// What became of a link or an image, until its end.
enum Rewritten {
    /// Written as it came (an image of this site's), or as the cook's link.
    Kept,
    /// Its address removed, its words kept.
    Dropped,
    /// An image from elsewhere, written as a link to it: its address, and
    /// whether it had words (a link without any shows its address).
    Linked { url: String, worded: bool },
}

/// The events of `text`, with raw HTML turned into text, unsafe addresses
/// removed, links marked as the cook's (`link_start`), and images from
/// elsewhere made links (`own_address`).
fn safe_events(text: &str) -> impl Iterator<Item = Event<'_>> {
    // Links and images are rewritten as a whole (start, contents, end), so
    // the parser's stack of open tags decides which end closes a dropped one.
    let mut open: Vec<Rewritten> = Vec::new();
    Parser::new_ext(text, options()).filter_map(move |event| match event {
        Event::Html(html) | Event::InlineHtml(html) => Some(Event::Text(html)),
        Event::Start(tag @ (Tag::Link { .. } | Tag::Image { .. })) => {
            let (Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) = &tag else {
                unreachable!("matched a link or an image")
            };
            if !safe_url(dest_url) {
                open.push(Rewritten::Dropped);
                return None;
            }
            match tag {
                Tag::Link {
                    dest_url, title, ..
                } => {
                    open.push(Rewritten::Kept);
                    Some(Event::InlineHtml(link_start(&dest_url, &title).into()))
                }
                Tag::Image {
                    dest_url, title, ..
                } if !own_address(&dest_url) => {
                    let start = link_start(&dest_url, &title);
                    open.push(Rewritten::Linked {
                        url: dest_url.into_string(),
                        worded: false,
                    });
                    Some(Event::InlineHtml(start.into()))
                }
                image => {
                    open.push(Rewritten::Kept);
                    Some(Event::Start(image))
                }
            }
        }
        Event::End(end @ (TagEnd::Link | TagEnd::Image)) => match (open.pop(), end) {
            (Some(Rewritten::Dropped), _) => None,
            (Some(Rewritten::Linked { url, worded }), _) => {
                let mut close = String::new();
                if !worded {
                    // Writing to a String cannot fail.
                    let _ = escape_html(&mut close, &url);
                }
                close.push_str("</a>");
                Some(Event::InlineHtml(close.into()))
            }
            (_, TagEnd::Link) => Some(Event::InlineHtml("</a>".into())),
            (_, image) => Some(Event::End(image)),
        },
        Event::Text(text) => {
            if let Some(Rewritten::Linked { worded, .. }) = open.last_mut() {
                *worded |= !text.trim().is_empty();
            }
            Some(Event::Text(text))
        }
        other => Some(other),
    })
}

/// Renderings by text, bounded in bytes (text and output together) and
/// evicting with quick_cache's CLOCK-Pro, so a full memo keeps the hot
/// texts instead of starting over.
///
/// Fx-hashed: hashing a text must cost far less than rendering it, which
/// SipHash does not for the kilobyte summaries of a catalog page. The hash
/// is unkeyed (a per-process seed would not change which texts collide in
/// rustc-hash 2, whose byte hash ignores it); a crafted collision costs only
/// probe length, and the memo is bounded.
struct Memo {
    map: quick_cache::sync::Cache<Box<str>, Arc<str>, TextWeigh, rustc_hash::FxBuildHasher>,
}

/// What a memo entry holds besides its texts: the map's slot and the
/// allocations' headers, about.
const ENTRY_OVERHEAD: u64 = 64;

#[derive(Debug, Clone)]
struct TextWeigh;

impl quick_cache::Weighter<Box<str>, Arc<str>> for TextWeigh {
    fn weight(&self, text: &Box<str>, done: &Arc<str>) -> u64 {
        (text.len() + done.len()) as u64 + ENTRY_OVERHEAD
    }
}

/// The memos' budget in bytes unless the site is given another: the HTML
/// memo gets half, the plain-text memos a quarter each.
pub const DEFAULT_MEMO_BYTES: u64 = 32 << 20;

/// Entries a memo of `bytes` is sized for (a typical text and rendering).
fn memo_items(bytes: u64) -> usize {
    (bytes / 2048).clamp(16, 1 << 20) as usize
}

impl Memo {
    fn new(budget: u64) -> Memo {
        Memo {
            map: quick_cache::sync::Cache::with(
                memo_items(budget),
                budget.max(1),
                TextWeigh,
                rustc_hash::FxBuildHasher,
                Default::default(),
            ),
        }
    }

    fn get_or_render(&self, text: &str, render: impl FnOnce(&str) -> String) -> Arc<str> {
        if let Some(done) = self.map.get(text) {
            return done;
        }
        let done: Arc<str> = render(text).into();
        self.map.insert(text.into(), done.clone());
        done
    }
}

/// The Markdown memos: renderings by text, so that a summary shown on
/// thousands of pages is rendered once. Held by the site (`web::caches`),
/// which gives them their budget and makes room in them under its memory
/// limit, and passed to the views that render Markdown: a view's output
/// is the same with or without them.
pub struct Memos {
    /// HTML by text.
    html: Memo,
    /// Plain text by text.
    plain: Memo,
    /// Plain text by a shared text's address (`plain_text_shared`).
    shared: SharedMemo,
    budget: u64,
}

impl Memos {
    /// Memos holding at most `budget` bytes together.
    pub fn new(budget: u64) -> Memos {
        Memos {
            html: Memo::new(budget / 2),
            plain: Memo::new(budget / 4),
            shared: quick_cache::sync::Cache::with(
                memo_items(budget / 4),
                (budget / 4).max(1),
                SharedWeigh,
                rustc_hash::FxBuildHasher,
                Default::default(),
            ),
            budget,
        }
    }

    /// `text` as Markdown, to render in a page.
    pub fn markdown<'a>(&'a self, text: &'a str) -> Markdown<'a> {
        Markdown { text, memos: self }
    }

    /// Lets the memos hold `share` (0 to 1) of their budgets, evicting what
    /// is over: the server's memory limit makes room this way.
    pub fn set_share(&self, share: f64) {
        let bytes = |budget: u64| ((budget as f64 * share.clamp(0.0, 1.0)) as u64).max(1);
        self.html.map.set_capacity(bytes(self.budget / 2));
        self.plain.map.set_capacity(bytes(self.budget / 4));
        self.shared.set_capacity(bytes(self.budget / 4));
    }

    /// What the memos weigh now, and their budget.
    pub fn fill(&self) -> (u64, u64) {
        let weight = self.html.map.weight() + self.plain.map.weight() + self.shared.weight();
        (weight, self.budget / 2 + self.budget / 4 * 2)
    }

    /// Empties the memos: for measuring pages rendered cold.
    pub fn forget(&self) {
        self.html.map.clear();
        self.plain.map.clear();
        self.shared.clear();
    }

    /// Markdown as plain text, for places that take no markup (JSON-LD,
    /// feeds, `<meta name=description>`): the words, with block breaks as
    /// spaces.
    pub fn plain_text(&self, text: &str) -> Arc<str> {
        self.plain.get_or_render(text, plain_uncached)
    }

    /// Plain text of a shared text, memoised by the text's address.
    ///
    /// A catalog page's summaries are `Arc<str>`s shared with the store's
    /// cached entities, so a summary comes back as the same allocation on
    /// every request, and finding it by address skips hashing its bytes
    /// (which was most of a catalog card's cost). The memo keeps a clone of
    /// each key's `Arc`, so an address cannot be freed and reused by another
    /// text while it is a key; and it is bounded, like the text memo.
    pub fn plain_text_shared(&self, text: &Arc<str>) -> Arc<str> {
        let key = Arc::as_ptr(text) as *const u8 as usize;
        if let Some((source, plain)) = self.shared.get(&key) {
            if Arc::ptr_eq(&source, text) {
                return plain;
            }
        }
        let plain = self.plain_text(text);
        self.shared.insert(key, (text.clone(), plain.clone()));
        plain
    }
}

impl Default for Memos {
    fn default() -> Memos {
        Memos::new(DEFAULT_MEMO_BYTES)
    }
}

/// Markdown as HTML, rendered now (not memoised): what the memo stores,
/// and what the Markdown bench measures.
pub fn render_uncached(text: &str) -> String {
    let mut html = String::with_capacity(text.len() + text.len() / 4);
    pulldown_cmark::html::push_html(&mut html, safe_events(text));
    html
}

impl Render for Markdown<'_> {
    fn render_to(&self, buffer: &mut String) {
        buffer.push_str(&self.memos.html.get_or_render(self.text, render_uncached));
    }
}

#[derive(Debug, Clone)]
struct SharedWeigh;

impl quick_cache::Weighter<usize, (Arc<str>, Arc<str>)> for SharedWeigh {
    fn weight(&self, _: &usize, (source, plain): &(Arc<str>, Arc<str>)) -> u64 {
        (source.len() + plain.len()) as u64 + ENTRY_OVERHEAD
    }
}

/// (source, plain text) by the source's address.
type SharedMemo =
    quick_cache::sync::Cache<usize, (Arc<str>, Arc<str>), SharedWeigh, rustc_hash::FxBuildHasher>;

/// Markdown as plain text, not memoised: what the plain memo stores, and
/// the fuzz check's reader.
pub fn plain_uncached(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for event in Parser::new_ext(text, options()) {
        match event {
            Event::Text(t) | Event::Code(t) | Event::Html(t) | Event::InlineHtml(t) => {
                out.push_str(&t)
            }
            Event::SoftBreak | Event::HardBreak => out.push(' '),
            Event::End(TagEnd::Paragraph | TagEnd::Item | TagEnd::Heading(_))
                if !out.ends_with(' ') =>
            {
                out.push(' ')
            }
            _ => {}
        }
    }
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn html(text: &str) -> String {
        Memos::default().markdown(text).render().into_string()
    }

    #[test]
    fn markdown_renders_emphasis_lists_and_links() {
        assert_eq!(html("*soft* peaks"), "<p><em>soft</em> peaks</p>\n");
        assert!(html("- a\n- b").contains("<ul>\n<li>a</li>\n<li>b</li>\n</ul>"));
        assert!(html("[site](https://example.com)")
            .contains(r#"<a href="https://example.com" rel="nofollow ugc noopener">site</a>"#));
        assert!(html(r#"[t](https://example.com/a"b "say \"hi\" <x>")"#).contains(
            r#"<a href="https://example.com/a%22b" title="say &quot;hi&quot; &lt;x&gt;" rel="nofollow ugc noopener">t</a>"#
        ));
    }

    /// An image from elsewhere would have every reader's browser ask its
    /// site for it: it becomes a link, its words kept (its address where
    /// it has none); one of this site's is drawn.
    #[test]
    fn an_image_from_elsewhere_is_a_link_and_one_of_the_sites_is_drawn() {
        for url in [
            "https://tracker.example/pixel.gif",
            "http://tracker.example/pixel.gif",
            "//tracker.example/pixel.gif",
            // A browser reads `\` as `/`.
            "/\\tracker.example/pixel.gif",
            "<\t//tracker.example/pixel.gif>",
            "HTTPS://tracker.example/pixel.gif",
        ] {
            let out = html(&format!("See ![the *dal*]({url}) here"));
            assert!(!out.contains("<img"), "{url:?}: {out}");
            assert!(
                out.contains("rel=\"nofollow ugc noopener\">the <em>dal</em></a> here"),
                "{url:?}: {out}"
            );
        }
        let out = html("![](https://tracker.example/x.gif)");
        assert!(
            out.contains(">https://tracker.example/x.gif</a>") && !out.contains("<img"),
            "{out}"
        );
        // Nested in a link, the image's words are the link's.
        let out = html("[![pic](https://t.example/x.gif)](https://t.example/)");
        assert!(!out.contains("<img"), "{out}");
        for own in ["/images/abc-640.jpg", "images/abc-640.jpg", "./x.png"] {
            let out = html(&format!("![a bowl]({own})"));
            assert!(out.contains("<img src="), "{own}: {out}");
            assert!(out.contains("alt=\"a bowl\""), "{own}: {out}");
        }
    }

    #[test]
    fn raw_html_comes_out_as_text() {
        let out = html("<script>alert(1)</script>\n\nStir <b onclick=x>well</b>");
        assert!(!out.contains("<script"), "{out}");
        assert!(!out.contains("<b "), "{out}");
        assert!(
            out.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{out}"
        );
    }

    #[test]
    fn unsafe_addresses_lose_the_link_but_keep_the_words() {
        for url in [
            "javascript:alert(1)",
            " JavaScript:alert(1)",
            "data:text/html,x",
            "vbscript:x",
        ] {
            let out = html(&format!("[click me]({url}) ![pic]({url})"));
            assert!(!out.contains("href"), "{url}: {out}");
            assert!(!out.contains("<img"), "{url}: {out}");
            assert!(out.contains("click me"), "{url}: {out}");
        }
        assert!(html("[a](/recipes/x)").contains(r#"href="/recipes/x""#));
        assert!(html("[a](mailto:me@example.com)").contains("href"));
    }

    #[test]
    fn memoised_renderings_equal_fresh_ones() {
        for text in ["*a*", "- b\n- c", "*a*", "<b>x</b>"] {
            assert_eq!(html(text), render_uncached(text));
            assert_eq!(html(text), render_uncached(text), "second, from the memo");
            assert_eq!(*Memos::default().plain_text(text), plain_uncached(text));
        }
    }

    #[test]
    fn shared_texts_are_found_by_address_and_never_confused() {
        let a: Arc<str> = Arc::from("*one*");
        let b: Arc<str> = Arc::from("**two**");
        let memos = Memos::default();
        assert_eq!(&*memos.plain_text_shared(&a), "one");
        assert_eq!(&*memos.plain_text_shared(&a), "one", "from the memo");
        assert_eq!(&*memos.plain_text_shared(&b), "two");
        let same_text: Arc<str> = Arc::from("*one*");
        assert_eq!(&*memos.plain_text_shared(&same_text), "one");
    }

    #[test]
    fn plain_text_keeps_the_words_only() {
        assert_eq!(
            &*Memos::default().plain_text("Whisk the **eggs**.\n\n- one\n- `two`"),
            "Whisk the eggs. one two"
        );
    }
}
