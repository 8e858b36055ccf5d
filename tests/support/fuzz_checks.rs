//! The bodies of the fuzz targets: input bytes in, the code under test run,
//! its properties asserted by panicking.
//!
//! One file, included by path in both the fuzz targets
//! (`fuzz/fuzz_targets/*.rs`, each one call into here, built with nightly
//! and libFuzzer) and the normal test suite (`tests/it/fuzz.rs`, which runs
//! these functions over the saved inputs in `tests/fixtures/fuzz/` and over
//! proptest's random ones), so both run exactly the same checks: a crash
//! found by fuzzing, saved as a fixture, fails `cargo test` on stable until
//! it is fixed. Not part of the library: the site never carries it. It uses
//! the store's test hooks, which need forkful's `testing` feature.
//!
//! Each function takes whatever bytes it is given. Text readers see them
//! through `String::from_utf8_lossy`, so that the fuzzer's non-UTF-8
//! mutations still reach the reader as text; the export reader, which reads
//! bytes, sees them as they are.

use std::sync::OnceLock;

use forkful::domain::import_check::RecipeImportCheck;
use forkful::domain::ingredient::IngredientLine;
use forkful::domain::pictures;
use forkful::domain::scale::{scale_line, Units};
use forkful::edn::{self, Edn};
use forkful::store::{self, Input, Query, Store};

/// What divides an input of [`datalog_query`] into the query and its
/// inputs after `$`, EDN forms as on the command line.
pub(crate) const QUERY_INPUTS_BREAK: &str = "\n;;; inputs\n";

/// The datalog parser, and the evaluator behind it: a query that parses is
/// run, with the inputs written after [`QUERY_INPUTS_BREAK`], against a
/// small store, and must give the same answer with its `:where` clauses
/// written in reverse (the planner orders clauses by what they are, not
/// where they were written). Each input goes through the readers of rules
/// and of command-line inputs.
pub(crate) fn datalog_query(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (query_text, inputs_text) = text
        .split_once(QUERY_INPUTS_BREAK)
        .unwrap_or((text.as_ref(), ""));
    let db = query_store().db();
    let mut inputs = vec![Input::Db(db)];
    for form in edn::parse_all(inputs_text).unwrap_or_default() {
        let form = form.to_string();
        let _ = Input::rules(&form);
        // An input that does not read is left out: the query is still
        // parsed and run (and then refused for its missing input).
        if let Ok(input) = Input::from_edn(&form) {
            inputs.push(input);
        }
    }
    let Ok(query) = Query::parse(query_text) else {
        return;
    };
    let answer = query.run(&inputs, QUERY_WORK);
    let Some(reversed) = where_reversed(query_text) else {
        return;
    };
    let again = Query::parse(&reversed).and_then(|q| q.run(&inputs, QUERY_WORK));
    match (&answer, &again) {
        // Compared as printed: a double may be NaN, which equals nothing.
        (Ok(a), Ok(b)) => assert_eq!(
            format!("{a:?}"),
            format!("{b:?}"),
            "the answer changed with the clauses' order:\n{query_text}\n{reversed}"
        ),
        (Err(_), Err(_)) => {}
        _ => panic!(
            "the clauses' order decided whether the query ran:\n{query_text}: {answer:?}\n\
             {reversed}: {again:?}"
        ),
    }
}

/// Small enough that a fuzzer's query ends in a moment, large enough for
/// joins, rules and aggregates over the store to run to the end.
const QUERY_WORK: u64 = 20_000;

/// A store with a few demo recipes, one fork family with its history, made
/// once per process: queries only read it.
fn query_store() -> &'static Store {
    static STORE: OnceLock<Store> = OnceLock::new();
    STORE.get_or_init(|| {
        let wanted = [
            "shakshuka.edn",
            "green-shakshuka.edn",
            "shakshuka-with-feta.edn",
        ];
        let files: Vec<(String, String)> = forkful::seed::demo_files()
            .into_iter()
            .filter(|(name, _)| wanted.contains(&name.as_str()))
            .collect();
        assert_eq!(files.len(), wanted.len(), "the demo seed has these files");
        let store = Store::temporary().expect("a temporary store");
        let plan = forkful::seed::plan(&files).expect("the demo files plan");
        forkful::seed::apply(&store, &plan).expect("the demo files apply");
        store
    })
}

/// `text`, a query in vector form, printed again with the top-level
/// `:where` clauses in reverse order; `None` when it is not that shape.
fn where_reversed(text: &str) -> Option<String> {
    let Ok(Edn::Vector(items)) = edn::parse(text) else {
        return None;
    };
    let at = items
        .iter()
        .position(|e| *e == Edn::Keyword("where".into()))?;
    let end = items[at + 1..]
        .iter()
        .position(|e| matches!(e, Edn::Keyword(_)))
        .map_or(items.len(), |n| at + 1 + n);
    let mut items = items;
    items[at + 1..end].reverse();
    Some(Edn::Vector(items).to_string())
}

/// The EDN reader and printer: whatever reads prints as text that reads
/// back to the same value and prints the same again; the located reader
/// (`parse_nodes`) agrees with the plain one, value for value and error
/// for error; an error points inside the text.
pub(crate) fn edn(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let forms = edn::parse_all(&text);
    let nodes = edn::parse_nodes(&text);
    match (&forms, &nodes) {
        (Ok(forms), Ok(nodes)) => {
            assert_eq!(forms.len(), nodes.len(), "{text:?}");
            for (form, node) in forms.iter().zip(nodes) {
                assert_eq!(form.to_string(), node.edn.to_string(), "{text:?}");
                assert!(text.is_char_boundary(node.offset) && node.offset < text.len());
                let printed = form.to_string();
                let read = edn::parse(&printed)
                    .unwrap_or_else(|e| panic!("{printed:?}, printed from {text:?}: {e}"));
                assert_eq!(read.to_string(), printed, "read from {text:?}");
                // NaN equals nothing; the printed comparison covers it.
                if !printed.contains("##NaN") {
                    assert_eq!(read, *form, "{printed:?}, read from {text:?}");
                }
            }
        }
        (Err(a), Err(b)) => {
            assert_eq!(a, b, "{text:?}");
            assert!(a.offset <= text.len() && text.is_char_boundary(a.offset));
            let before = &text[..a.offset];
            assert_eq!(a.line, before.matches('\n').count() + 1, "{text:?}: {a}");
        }
        _ => panic!("parse_all and parse_nodes disagree on {text:?}: {forms:?} / {nodes:?}"),
    }
}

/// The ingredient line reader, on each line of the input: the line as
/// written is kept (trimmed), the tail, item and note are taken from its
/// words and never made up, an amount is a finite number, and scaling a
/// line writes no number it could not read (`NaN`, `inf`).
pub(crate) fn ingredient_line(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for line in text.lines() {
        let parsed = IngredientLine::parse(line);
        assert_eq!(parsed.raw(), line.trim());
        let words = line.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words.ends_with(parsed.tail()), "{line:?}: tail {parsed:?}");
        assert!(words.contains(parsed.item()), "{line:?}: item {parsed:?}");
        if let Some(note) = parsed.note() {
            assert!(words.contains(note), "{line:?}: note {parsed:?}");
        }
        if let Some(q) = parsed.quantity() {
            assert!(q.amount.is_finite(), "{line:?}: {q:?}");
            assert!(q.up_to.is_none_or(f64::is_finite), "{line:?}: {q:?}");
        }
        // Each unit system, each way: fewer, more, and a factor with no
        // short decimal.
        for (factor, units) in [
            (0.5, Units::Metric),
            (3.0, Units::UsCustomary),
            (7.0 / 3.0, Units::AsWritten),
        ] {
            let scaled = scale_line(line, factor, units);
            // Counted, not just looked for: a line may say `NaN` or
            // `infused` itself, and scaling must not add one more.
            for bad in ["NaN", "inf"] {
                assert!(
                    scaled.matches(bad).count() <= line.matches(bad).count(),
                    "{line:?} scaled by {factor} in {units:?}: {scaled:?}"
                );
            }
        }
    }
}

/// What divides an input of [`seed_files`] into files.
pub(crate) const SEED_FILE_BREAK: &str = "\n;;; next file\n";

/// The seed file reader and planner, on one or more files (divided by
/// [`SEED_FILE_BREAK`], each named after its `:slug`): a mistake names a
/// file of the seed and a line in it, and a plan that checks out is
/// written into an empty store without a refusal, as `plan` promises.
pub(crate) fn seed_files(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let files: Vec<(String, String)> = text
        .split(SEED_FILE_BREAK)
        .enumerate()
        .map(|(i, file)| {
            (
                seed_file_name(file).unwrap_or(format!("file-{i}.edn")),
                file.to_owned(),
            )
        })
        .collect();
    match forkful::seed::plan(&files) {
        Ok(plan) => {
            let store = Store::temporary().expect("a temporary store");
            let report = forkful::seed::apply(&store, &plan)
                .unwrap_or_else(|e| panic!("a checked plan was refused: {e}\n{text}"));
            assert_eq!(report.versions + report.suggestions, plan.len());
        }
        Err(e) => {
            let (_, file) = files
                .iter()
                .find(|(name, _)| *name == e.file)
                .unwrap_or_else(|| panic!("{e} names no file of the seed"));
            let lines = file.matches('\n').count() + 1;
            assert!(
                (1..=lines).contains(&e.line),
                "{e}: the file has {lines} lines"
            );
        }
    }
}

/// The name a seed file would have: its `:slug`, if it says one.
fn seed_file_name(text: &str) -> Option<String> {
    let Ok(Edn::Map(pairs)) = edn::parse(text) else {
        return None;
    };
    pairs.into_iter().find_map(|pair| match pair {
        (Edn::Keyword(k), Edn::String(slug)) if k == "slug" => Some(format!("{slug}.edn")),
        _ => None,
    })
}

/// The export file reader, as `forkful import` runs it (the domain's
/// checks, picture records): an import into an empty store succeeds or
/// fails, and when it fails the store holds exactly what a new one does,
/// picture records included. When it succeeds, exporting the store and
/// importing that into another empty store gives the same export again.
pub(crate) fn export_file(data: &[u8]) {
    let store = Store::temporary().expect("a temporary store");
    match import(&store, data) {
        Ok(summary) => {
            let exported = export(&store);
            let again = Store::temporary().expect("a temporary store");
            let summary_again = import(&again, &exported).unwrap_or_else(|e| {
                panic!(
                    "an export of an imported file does not import: {e}\n{}",
                    String::from_utf8_lossy(&exported)
                )
            });
            assert_eq!(summary_again.datoms, summary.datoms);
            assert_eq!(summary_again.records, summary.records);
            assert!(export(&again) == exported, "exporting is not a fixed point");
        }
        Err(_) => {
            let contents = store.raw_contents().expect("the store reads");
            assert!(
                contents == *empty_store_contents(),
                "a failed import left something behind"
            );
        }
    }
}

fn import(
    store: &Store,
    file: &[u8],
) -> Result<store::TransferSummary, forkful::store::TransferError> {
    store::import_with_keyspaces(
        store,
        || Ok(std::io::Cursor::new(file)),
        &mut RecipeImportCheck::default(),
        &mut |_| {},
        &[pictures::KEYSPACE],
    )
}

fn export(store: &Store) -> Vec<u8> {
    let mut out = Vec::new();
    let keyspace = store
        .keyspace(pictures::KEYSPACE)
        .expect("the pictures keyspace");
    store::export_with(&store.db(), &[(pictures::KEYSPACE, &keyspace)], &mut out)
        .expect("an export into memory");
    out
}

/// What a new store holds: its genesis, and nothing else.
fn empty_store_contents() -> &'static Vec<forkful::store::testing::RawEntry> {
    static CONTENTS: OnceLock<Vec<forkful::store::testing::RawEntry>> = OnceLock::new();
    CONTENTS.get_or_init(|| {
        let store = Store::temporary().expect("a temporary store");
        store.raw_contents().expect("the store reads")
    })
}

/// The address the fuzzed pages are said to come from.
const PAGE_URL: &str = "https://cook.example/recipes/dal.html";

/// The schema.org recipe importer (JSON-LD, then microdata) on a page: an
/// import keeps what fits rather than refusing the recipe, so the only
/// refusals are "no recipe" and "no name"; what it keeps is already as the
/// domain would keep it (normalising it changes nothing), its picture's
/// address is absolute http(s), and its source is the page. A page's own
/// address, when it names one, is http(s).
pub(crate) fn recipe_page(data: &[u8]) {
    let html = String::from_utf8_lossy(data);
    if let Some(address) = forkful::import::page_address("", &html) {
        assert!(address.starts_with("https://") || address.starts_with("http://"));
    }
    match forkful::import::from_html(&html, PAGE_URL) {
        Ok(imported) => {
            let content = imported.content;
            assert_eq!(
                content.to_draft().normalized().as_ref(),
                Ok(&content),
                "an import kept what the domain would change"
            );
            if let Some(image) = content.image() {
                assert!(image.starts_with("https://") || image.starts_with("http://"));
            }
            assert_eq!(imported.source.url, PAGE_URL);
            assert!(!imported.source.name.is_empty());
            assert!(
                !content.ingredients().is_empty() && !content.steps().is_empty(),
                "a recipe without its ingredients or its steps was taken as whole"
            );
        }
        Err(forkful::import::ImportError::Incomplete(partial)) => {
            let content = &partial.imported.content;
            assert!(content.ingredients().is_empty() || content.steps().is_empty());
        }
        Err(forkful::import::ImportError::Invalid(why)) => {
            panic!("a recipe was refused instead of cut to fit: {why}")
        }
        Err(_) => {}
    }
}

/// The Markdown renderer: whatever the text, the HTML it makes, read as a
/// browser would, holds no element that runs or embeds anything, no event
/// handler attribute, and no address whose scheme is not http, https or
/// mailto (the module's promise; it covers `javascript:`, `vbscript:` and
/// `data:`). The plain-text rendering is made too.
pub(crate) fn markdown(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let html = forkful::views::markdown::render_uncached(&text);
    if let Err(why) = executable_markup(&html) {
        panic!("{why}\nfrom {text:?}\nmade {html}");
    }
    let _ = forkful::views::markdown::plain_uncached(&text);
}

/// Elements that run, embed or redirect something, or change how the page
/// around them is read.
const FORBIDDEN_ELEMENTS: &[&str] = &[
    "script", "iframe", "object", "embed", "style", "link", "meta", "base", "form", "frame",
    "frameset", "applet", "svg", "math", "template", "noscript",
];

/// Attributes that hold an address.
const URL_ATTRIBUTES: &[&str] = &[
    "href",
    "src",
    "srcset",
    "action",
    "formaction",
    "xlink:href",
    "poster",
    "background",
    "cite",
    "data",
];

/// Why `html` could run something in a browser, if it could: parsed with an
/// HTML5 parser, so that what is checked is what a browser would build.
pub(crate) fn executable_markup(html: &str) -> Result<(), String> {
    let page = scraper::Html::parse_fragment(html);
    for node in page.root_element().descendants() {
        let Some(element) = node.value().as_element() else {
            continue;
        };
        let name = element.name().to_ascii_lowercase();
        if FORBIDDEN_ELEMENTS.contains(&name.as_str()) {
            return Err(format!("a <{name}> element"));
        }
        for (attribute, value) in element.attrs() {
            let attribute = attribute.to_ascii_lowercase();
            if attribute.starts_with("on") {
                return Err(format!("an event handler: <{name} {attribute}={value:?}>"));
            }
            if URL_ATTRIBUTES.contains(&attribute.as_str()) {
                if let Some(scheme) = url_scheme(value) {
                    if !matches!(scheme.as_str(), "http" | "https" | "mailto") {
                        return Err(format!(
                            "a {scheme}: address: <{name} {attribute}={value:?}>"
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

/// The scheme of `url`, lowercased, as a browser's URL parser finds it:
/// after stripping leading and trailing C0 controls and spaces and every
/// tab and newline.
fn url_scheme(url: &str) -> Option<String> {
    let url: String = url
        .trim_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let (scheme, _) = url.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let is_scheme = first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    is_scheme.then(|| scheme.to_ascii_lowercase())
}
