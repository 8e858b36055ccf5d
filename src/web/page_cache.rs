//! Pages kept as bytes, one entry per address and content coding, each
//! rendered once per change of what it shows, and compressed fast when made
//! and at its best when asked for again (see `Effort`).
//!
//! A page is a function of the facts it read (its `ReadSet`) and the
//! request's address, so an entry is served for as long as the latest
//! database value still shows those facts: a write to one recipe leaves the
//! pages of every unrelated recipe in the cache, and their ETags with them.
//! The cache is bounded in bytes (each entry weighs its body, its address
//! and its read set) and evicts with quick_cache's CLOCK-Pro.

use std::io::Write as _;
use std::sync::Arc;
use std::time::SystemTime;

use actix_web::http::header::{
    self, ContentEncoding, EntityTag, HeaderValue, HttpDate, TryIntoHeaderValue,
};
use actix_web::web::Bytes;
use actix_web::HttpRequest;

use crate::domain::ReadSet;

/// A content coding the site sends pages in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    Identity,
    Gzip,
    Brotli,
}

impl Encoding {
    /// The coding to answer `req` in: brotli if the client takes it, else
    /// gzip, else none. Hand-written over actix's `AcceptEncoding::negotiate`,
    /// which breaks ties by the client's order (browsers list gzip first)
    /// and allocates a set per request; here the server's preference breaks
    /// ties, as RFC 9110 allows.
    pub fn negotiate(req: &HttpRequest) -> Encoding {
        Encoding::negotiate_both(req).0
    }

    /// The coding to answer `req` in (`negotiate`), and the one to send a
    /// page in when it is made: gzip where the client takes it as well as
    /// brotli, since a page made for one request (each of a crawler's) is
    /// gzipped in a third of brotli's time at the same effort; asked for
    /// again, it is kept in brotli at its best (`Kept::take_refining`).
    pub fn negotiate_both(req: &HttpRequest) -> (Encoding, Encoding) {
        let Some(accept) = req
            .headers()
            .get(header::ACCEPT_ENCODING)
            .and_then(|v| v.to_str().ok())
        else {
            return (Encoding::Identity, Encoding::Identity);
        };
        let (mut brotli, mut gzip, mut any) = (None, None, None);
        for item in accept.split(',') {
            let mut parts = item.split(';');
            let name = parts.next().unwrap_or("").trim();
            let accepted = parts
                .find_map(|p| p.trim().strip_prefix("q="))
                .is_none_or(|q| q.trim().parse::<f32>().is_ok_and(|q| q > 0.0));
            // Compared as it is sent, case aside, with no lowercased copy:
            // this runs for every request.
            let is = |coding: &str| name.eq_ignore_ascii_case(coding);
            if is("br") {
                brotli = Some(accepted);
            } else if is("gzip") || is("x-gzip") {
                gzip = Some(accepted);
            } else if name == "*" {
                any = Some(accepted);
            }
        }
        let takes = |named: Option<bool>| named.or(any).unwrap_or(false);
        match (takes(brotli), takes(gzip)) {
            (true, true) => (Encoding::Brotli, Encoding::Gzip),
            (true, false) => (Encoding::Brotli, Encoding::Brotli),
            (false, true) => (Encoding::Gzip, Encoding::Gzip),
            (false, false) => (Encoding::Identity, Encoding::Identity),
        }
    }

    /// The same coding as actix names it (its encoder's).
    pub fn content_encoding(self) -> ContentEncoding {
        match self {
            Encoding::Identity => ContentEncoding::Identity,
            Encoding::Gzip => ContentEncoding::Gzip,
            Encoding::Brotli => ContentEncoding::Brotli,
        }
    }

    /// Its `Content-Encoding`, if any.
    pub fn header_value(self) -> Option<&'static str> {
        match self {
            Encoding::Identity => None,
            coding => Some(coding.content_encoding().as_str()),
        }
    }

    /// `text` in this coding, compressed with `effort`.
    pub fn encode(self, text: &[u8], effort: Effort) -> Bytes {
        match self {
            Encoding::Identity => Bytes::copy_from_slice(text),
            Encoding::Gzip => gzip(text, effort),
            Encoding::Brotli => {
                let quality = match effort {
                    Effort::Fast => BROTLI_FAST,
                    Effort::Best => BROTLI_BEST,
                };
                let mut out = Vec::with_capacity(text.len() / 4);
                {
                    let mut encoder =
                        brotli::CompressorWriter::new(&mut out, 16 * 1024, quality, BROTLI_WINDOW);
                    encoder.write_all(text).expect("writing to a vector");
                }
                // Kept pages are weighed by their length: a vector grown by
                // doubling held up to twice that (heaptrack of a crawl of
                // 100,000 full recipes: 124 MB of brotli output live at the
                // peak against a 128 MiB page budget).
                out.shrink_to_fit();
                Bytes::from(out)
            }
        }
    }

    /// The text of `body`, which `encode` made in this coding from
    /// `plain_len` bytes.
    pub fn decode(self, body: &[u8], plain_len: usize) -> std::io::Result<Vec<u8>> {
        use std::io::Read as _;
        let mut text = Vec::with_capacity(plain_len);
        match self {
            Encoding::Identity => text.extend_from_slice(body),
            Encoding::Gzip => {
                flate2::read::GzDecoder::new(body).read_to_end(&mut text)?;
            }
            Encoding::Brotli => {
                brotli::Decompressor::new(body, 4096).read_to_end(&mut text)?;
            }
        }
        Ok(text)
    }
}

/// `text` gzipped at `effort`, by a deflate state of this thread's kept
/// for each level and reset for each page: a new one's tables were a
/// fifth of a fast page's time (zlib-rs; a throwaway program, a full
/// recipe page of 7,020 bytes: 18.9 µs made anew, 14.1 µs reset).
fn gzip(text: &[u8], effort: Effort) -> Bytes {
    use flate2::{Compress, Compression, FlushCompress, Status};
    use std::cell::RefCell;
    thread_local! {
        static STATES: RefCell<[Option<Compress>; 2]> = const { RefCell::new([None, None]) };
    }
    let (slot, level) = match effort {
        Effort::Fast => (0, GZIP_FAST),
        Effort::Best => (1, GZIP_BEST),
    };
    STATES.with(|states| {
        let mut states = states.borrow_mut();
        let state =
            states[slot].get_or_insert_with(|| Compress::new_gzip(Compression::new(level), 15));
        state.reset();
        let mut out = Vec::with_capacity(text.len() / 2 + 64);
        loop {
            let read = usize::try_from(state.total_in()).expect("a page's length");
            let status = state
                .compress_vec(&text[read..], &mut out, FlushCompress::Finish)
                .expect("deflate into a vector");
            if status == Status::StreamEnd {
                break;
            }
            out.reserve(out.capacity().max(1024));
        }
        // Kept pages are weighed by their length (see `Encoding::Brotli`).
        out.shrink_to_fit();
        Bytes::from(out)
    })
}

/// How hard a page was compressed.
///
/// A page is made compressed `Fast`, and compressed again at `Best` the
/// first time it is served from the cache: a page asked for once (every
/// page of a crawler's pass over the catalog, where compressing at the old
/// single level was a third of the server's time) costs little, and a page
/// people come back to is sent, and kept, as small as is worth making it.
/// Each coding of a page is thus compressed at most twice per change.
/// Measured with a throwaway program on the Intel Xeon VM of
/// docs/journal/README.md (medians of 300; the spread is the machine's, run
/// to run): a full recipe page of 6,835 bytes in brotli quality 1 48-79
/// µs to 2,381 bytes, quality 4 120-220 µs to 2,060, quality 5 190-340 µs
/// to 1,946; the demo's deepest page, 14,224 bytes, in quality 1 104 µs to
/// 4,441, 4 232 µs to 3,916, 5 395 µs to 3,687, gzip 1 54 µs to 4,823 and
/// gzip 6 186 µs to 3,925 (best of 30). Best is quality 4, not 5: in a
/// crawl's mixed run after it (random pages of 100,000, many served from
/// the cache for the first time), refining at 5 halved the requests
/// answered (3,732 against 5,262 a second) for 6% fewer bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effort {
    Fast,
    Best,
}

const BROTLI_FAST: u32 = 1;
const BROTLI_BEST: u32 = 4;
const GZIP_FAST: u32 = 1;
const GZIP_BEST: u32 = 6;
/// A window of 1 MiB: larger than any page.
const BROTLI_WINDOW: u32 = 20;

/// The largest page compressed again at `Effort::Best` when it is served
/// from the cache: that runs on the worker answering the request, so a
/// large page (a sitemap file of 50,000 addresses) stays as it was made
/// rather than hold the worker for tens of milliseconds.
pub const REFINED_AT_MOST: usize = 256 * 1024;

/// A page as kept: its bytes in one coding, and what says whether it is
/// still current.
#[derive(Debug)]
pub struct Kept {
    /// The facts the page was made from.
    pub read: ReadSet,
    pub etag: EntityTag,
    /// When what it shows last changed, if it shows anything.
    pub modified: Option<SystemTime>,
    /// `etag` and `modified` as everyone's `ETag` and `Last-Modified`,
    /// written once here rather than for every answer (formatting them
    /// was 1.8% of the server's CPU on a kept page under wrk).
    pub etag_header: HeaderValue,
    pub modified_header: Option<HeaderValue>,
    pub content_type: &'static str,
    /// The coding `body` is in.
    pub encoding: Encoding,
    /// The coding it is kept in once refined: the client's best.
    wanted: Encoding,
    /// How hard `body` was compressed.
    pub effort: Effort,
    /// The length of the page before compression.
    pub plain_len: usize,
    pub body: Bytes,
    /// Whether a request has taken on compressing it at its best.
    refining: std::sync::atomic::AtomicBool,
}

impl Kept {
    /// A page made now, compressed fast in `fast`, to be kept in `wanted`
    /// (see `Encoding::negotiate_both`).
    pub fn made(
        read: ReadSet,
        etag: EntityTag,
        modified: Option<SystemTime>,
        content_type: &'static str,
        (wanted, fast): (Encoding, Encoding),
        text: &[u8],
    ) -> Kept {
        Kept {
            read,
            etag_header: etag_header(&etag),
            modified_header: modified.map(modified_header),
            etag,
            modified,
            content_type,
            encoding: fast,
            wanted,
            effort: Effort::Fast,
            plain_len: text.len(),
            body: fast.encode(text, Effort::Fast),
            refining: Default::default(),
        }
    }

    /// Whether the caller should compress the page again, at
    /// `Effort::Best` in the coding wanted: true once per kept page (two
    /// requests at once do not both do it).
    pub fn take_refining(&self) -> bool {
        (self.effort == Effort::Fast || self.encoding != self.wanted)
            && self.wanted != Encoding::Identity
            && self.plain_len <= REFINED_AT_MOST
            && !self
                .refining
                .swap(true, std::sync::atomic::Ordering::Relaxed)
    }

    /// This page, compressed at `Effort::Best` in the coding wanted.
    pub fn refined(&self) -> std::io::Result<Kept> {
        let text = self.encoding.decode(&self.body, self.plain_len)?;
        Ok(Kept {
            read: self.read.clone(),
            etag: self.etag.clone(),
            modified: self.modified,
            etag_header: self.etag_header.clone(),
            modified_header: self.modified_header.clone(),
            content_type: self.content_type,
            encoding: self.wanted,
            wanted: self.wanted,
            effort: Effort::Best,
            plain_len: text.len(),
            body: self.wanted.encode(&text, Effort::Best),
            refining: Default::default(),
        })
    }
}

/// `etag` as a header value.
pub fn etag_header(etag: &EntityTag) -> HeaderValue {
    etag.clone()
        .try_into_value()
        .expect("an ETag of hex digits and dashes is a header value")
}

/// `modified` as a `Last-Modified` header value.
pub fn modified_header(modified: SystemTime) -> HeaderValue {
    HttpDate::from(modified)
        .try_into_value()
        .expect("an HTTP date is a header value")
}

/// Which page, in which coding.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PageKey {
    /// The path, and the query parameters the page reads in the order of
    /// its parameters struct: not the query string as sent, whose other
    /// parameters the page ignores and whose order is the client's.
    address: String,
    encoding: Encoding,
}

impl PageKey {
    /// The key of the page at `path` that reads `query` of its query string.
    pub fn new(path: &str, query: &impl serde::Serialize, encoding: Encoding) -> PageKey {
        // A parameters struct of strings and options always serializes;
        // one that did not would key the page by its path alone.
        let query = serde_urlencoded::to_string(query).unwrap_or_default();
        let address = if query.is_empty() {
            path.to_owned()
        } else {
            format!("{path}?{query}")
        };
        PageKey { address, encoding }
    }
}

#[derive(Debug, Clone)]
struct Weigh;

/// What an entry costs beyond its body and address: the map's slot, the
/// `Kept`, its ETag and validators' header values, and about this much
/// per dependency in its read set.
const ENTRY_OVERHEAD: u64 = 320;
const PER_DEPENDENCY: u64 = 48;

impl quick_cache::Weighter<PageKey, Arc<Kept>> for Weigh {
    fn weight(&self, key: &PageKey, kept: &Arc<Kept>) -> u64 {
        ENTRY_OVERHEAD
            + key.address.len() as u64
            + kept.body.len() as u64
            + kept.read.len() as u64 * PER_DEPENDENCY
    }
}

/// See the module's documentation.
pub struct PageCache {
    pages: quick_cache::sync::Cache<PageKey, Arc<Kept>, Weigh>,
    budget: u64,
}

/// A page's bytes in a typical coding, for sizing the cache's map.
const TYPICAL_ENTRY: u64 = 8 * 1024;

impl PageCache {
    /// A cache holding at most `budget` bytes of pages (0 keeps nothing).
    pub fn new(budget: u64) -> PageCache {
        let items = (budget / TYPICAL_ENTRY).clamp(16, 1 << 20) as usize;
        PageCache {
            pages: quick_cache::sync::Cache::with_weighter(items, budget.max(1), Weigh),
            budget,
        }
    }

    pub fn get(&self, key: &PageKey) -> Option<Arc<Kept>> {
        if self.budget == 0 {
            return None;
        }
        self.pages.get(key)
    }

    pub fn keep(&self, key: PageKey, kept: Arc<Kept>) {
        if self.budget == 0 {
            return;
        }
        self.pages.insert(key, kept);
    }

    /// Keeps `to` in place of `from`, if the cache still holds `from` under
    /// `key` (a page made since, after a write, stays).
    pub fn replace(&self, key: &PageKey, from: &Arc<Kept>, to: Arc<Kept>) {
        if self.budget == 0 {
            return;
        }
        if self
            .pages
            .peek(key)
            .is_some_and(|held| Arc::ptr_eq(&held, from))
        {
            self.pages.insert(key.clone(), to);
        }
    }

    /// The bytes held now, as weighed.
    pub fn weight(&self) -> u64 {
        self.pages.weight()
    }

    /// The bytes it may hold now (its budget, or a share of it).
    pub fn capacity(&self) -> u64 {
        self.pages.capacity()
    }

    /// What it weighs now and its budget.
    pub fn fill(&self) -> (u64, u64) {
        (self.weight(), self.budget)
    }

    /// Lets it hold `share` of its budget, evicting what is over.
    pub fn set_share(&self, share: f64) {
        if self.budget > 0 {
            self.pages
                .set_capacity(super::memory_limit::share_of(self.budget, share));
        }
    }

    /// Pages held now.
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pages.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    fn negotiated(accept: Option<&str>) -> Encoding {
        let mut req = TestRequest::get().uri("/");
        if let Some(accept) = accept {
            req = req.insert_header((header::ACCEPT_ENCODING, accept));
        }
        Encoding::negotiate(&req.to_http_request())
    }

    #[test]
    fn brotli_wins_ties_and_a_zero_quality_refuses() {
        assert_eq!(negotiated(None), Encoding::Identity);
        assert_eq!(
            negotiated(Some("gzip, deflate, br, zstd")),
            Encoding::Brotli
        );
        assert_eq!(negotiated(Some("gzip, deflate")), Encoding::Gzip);
        assert_eq!(negotiated(Some("br;q=0, gzip;q=0.5")), Encoding::Gzip);
        assert_eq!(negotiated(Some("BR")), Encoding::Brotli);
        assert_eq!(negotiated(Some("*")), Encoding::Brotli);
        assert_eq!(negotiated(Some("*;q=0")), Encoding::Identity);
        assert_eq!(negotiated(Some("gzip;q=0, *")), Encoding::Brotli);
        assert_eq!(negotiated(Some("identity")), Encoding::Identity);
        assert_eq!(negotiated(Some("deflate")), Encoding::Identity);
        assert_eq!(negotiated(Some("br;q=nonsense")), Encoding::Identity);
    }

    #[test]
    fn each_coding_decodes_to_the_text() {
        use std::io::Read as _;
        let text = "<p>Fold the butter in, then rest the dough.</p>".repeat(50);
        for effort in [Effort::Fast, Effort::Best] {
            let gzip = Encoding::Gzip.encode(text.as_bytes(), effort);
            let mut out = String::new();
            flate2::read::GzDecoder::new(&gzip[..])
                .read_to_string(&mut out)
                .unwrap();
            assert_eq!(out, text, "{effort:?}");
            assert_eq!(
                Encoding::Gzip.decode(&gzip, text.len()).unwrap(),
                text.as_bytes()
            );
            let brotli = Encoding::Brotli.encode(text.as_bytes(), effort);
            let mut out = String::new();
            brotli::Decompressor::new(&brotli[..], 4096)
                .read_to_string(&mut out)
                .unwrap();
            assert_eq!(out, text, "{effort:?}");
            assert_eq!(
                Encoding::Brotli.decode(&brotli, text.len()).unwrap(),
                text.as_bytes()
            );
            assert!(brotli.len() < text.len() / 10);
        }
        let plain = Encoding::Identity.encode(text.as_bytes(), Effort::Fast);
        assert_eq!(
            Encoding::Identity.decode(&plain, text.len()).unwrap(),
            text.as_bytes()
        );
        assert!(Encoding::Brotli.decode(b"not brotli", 10).is_err());
    }

    #[test]
    fn a_reset_gzip_state_makes_a_whole_stream_each_time() {
        // The thread's deflate state is reused: each page is a stream of
        // its own, header and trailer included, whatever came before (a
        // large page that needed the output grown, then a small one).
        let large = "<li>200 g flour, sifted twice</li>".repeat(4_000);
        let small = "<p>Rest the dough.</p>";
        for text in [large.as_str(), small, large.as_str(), small] {
            for effort in [Effort::Fast, Effort::Best] {
                let gzip = Encoding::Gzip.encode(text.as_bytes(), effort);
                assert_eq!(
                    Encoding::Gzip.decode(&gzip, text.len()).unwrap(),
                    text.as_bytes()
                );
            }
        }
    }

    #[test]
    fn a_page_made_fast_in_gzip_is_refined_into_brotli() {
        let text = "<p>Fold the butter in, then rest the dough.</p>".repeat(50);
        let read = crate::domain::Recipes::temporary()
            .unwrap()
            .snapshot()
            .witnessed()
            .read_set();
        let made = Kept::made(
            read,
            EntityTag::new_weak("x".into()),
            None,
            "text/html",
            (Encoding::Brotli, Encoding::Gzip),
            text.as_bytes(),
        );
        assert_eq!((made.encoding, made.effort), (Encoding::Gzip, Effort::Fast));
        assert!(made.take_refining());
        assert!(!made.take_refining(), "once");
        let refined = made.refined().unwrap();
        assert_eq!(
            (refined.encoding, refined.effort),
            (Encoding::Brotli, Effort::Best)
        );
        assert!(!refined.take_refining(), "refined for good");
        assert_eq!(
            Encoding::Brotli.decode(&refined.body, text.len()).unwrap(),
            text.as_bytes()
        );
    }
}
