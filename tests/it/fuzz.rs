//! The fuzz targets' checks (`tests/support/fuzz_checks.rs`), run in the normal
//! suite: over every saved input in `tests/fixtures/fuzz/<target>/` (the
//! seed corpora, and each crash fuzzing found, saved as `crash-<what>`),
//! and over proptest's random inputs, a few hundred at most per target.
//! This is the fuzzing CI can afford; `scripts/fuzz.sh` runs the real
//! fuzzers (nightly, libFuzzer) for as long as it is given.

use std::path::{Path, PathBuf};

use crate::fuzz_checks;
use proptest::prelude::*;
use proptest::sample::{select, Index};

/// One fuzz target's check, by the name of its target and fixture folder.
type Check = fn(&[u8]);

const TARGETS: &[(&str, Check)] = &[
    ("datalog_query", fuzz_checks::datalog_query),
    ("edn", fuzz_checks::edn),
    ("ingredient_line", fuzz_checks::ingredient_line),
    ("seed_files", fuzz_checks::seed_files),
    ("export_file", fuzz_checks::export_file),
    ("recipe_page", fuzz_checks::recipe_page),
    ("markdown", fuzz_checks::markdown),
];

fn fixture_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fuzz")
        .join(target)
}

/// Every saved input of `target`, with its file name.
fn fixtures(target: &str) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(fixture_dir(target))
        .unwrap_or_else(|e| panic!("tests/fixtures/fuzz/{target}: {e}"))
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    files.sort();
    files
}

#[test]
fn every_saved_input_passes_its_targets_check() {
    for (target, check) in TARGETS {
        let inputs = fixtures(target);
        assert!(!inputs.is_empty(), "{target} has no seed inputs");
        for (name, bytes) in inputs {
            let outcome = std::panic::catch_unwind(|| check(&bytes));
            assert!(outcome.is_ok(), "{target}/{name} fails its check");
        }
    }
}

#[test]
fn every_target_has_a_fuzz_target_that_calls_its_check() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    for (target, _) in TARGETS {
        let source = std::fs::read_to_string(root.join(format!("fuzz_targets/{target}.rs")))
            .unwrap_or_else(|e| panic!("fuzz/fuzz_targets/{target}.rs: {e}"));
        assert!(
            source.contains("#[path = \"../../tests/support/fuzz_checks.rs\"]"),
            "{target}.rs includes the shared checks"
        );
        assert!(
            source.contains(&format!("fuzz_checks::{target}(data)")),
            "{target}.rs calls another check"
        );
        assert!(manifest.contains(&format!("name = \"{target}\"")));
    }
}

#[test]
fn the_markup_check_finds_what_it_looks_for() {
    for hostile in [
        "<script>alert(1)</script>",
        "<p><img src=x onerror=alert(1)></p>",
        "<a href=\"java\tscript:alert(1)\">x</a>",
        "<a href=\" &#x6A;avascript:alert(1)\">x</a>",
        "<img src=\"DATA:image/png;base64,AAAA\">",
        "<a href=\"vbscript:msgbox(1)\">x</a>",
        "<iframe></iframe>",
        "<object></object>",
        "<embed>",
        "<style>p{}</style>",
        "<svg><a xlink:href=\"javascript:alert(1)\">x</a></svg>",
    ] {
        assert!(
            fuzz_checks::executable_markup(hostile).is_err(),
            "{hostile} passed"
        );
    }
    for fine in [
        "<p><a href=\"https://example.com/a:b\" rel=\"nofollow\">x</a></p>",
        "<a href=\"/recipes/dal\">dal</a> <a href=\"mailto:a@example.com\">a</a>",
        "<p>&lt;script&gt;alert(1)&lt;/script&gt; onclick=x javascript:alert(1)</p>",
        "<img src=\"img/a.png\" alt=\"on the table\">",
    ] {
        assert_eq!(fuzz_checks::executable_markup(fine), Ok(()), "{fine}");
    }
}

/// An input made from one of `target`'s saved inputs by a few edits, each
/// inserting one of `tokens`, or deleting or repeating a few bytes, where
/// the random indices say: random bytes alone seldom get past a reader's
/// first check, and edits of real inputs reach its later ones.
fn mutated(target: &str, tokens: &'static [&'static str]) -> impl Strategy<Value = Vec<u8>> {
    let seeds: Vec<Vec<u8>> = fixtures(target)
        .into_iter()
        .map(|(_, bytes)| bytes)
        .collect();
    let edits = prop::collection::vec((any::<Index>(), 0u8..3, select(tokens), 1usize..16), 1..6);
    (any::<Index>(), edits).prop_map(move |(which, edits)| {
        let mut bytes = which.get(&seeds).clone();
        for (at, kind, token, len) in edits {
            let at = at.index(bytes.len() + 1);
            let end = (at + len).min(bytes.len());
            match kind {
                0 => {
                    bytes.splice(at..at, token.bytes());
                }
                1 => {
                    bytes.drain(at..end);
                }
                _ => {
                    let copy = bytes[at..end].to_vec();
                    bytes.splice(at..at, copy);
                }
            }
        }
        bytes
    })
}

/// Bytes from `alphabet`'s characters, up to `max` of them.
fn text_of(alphabet: &'static [&'static str], max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(select(alphabet), 0..max).prop_map(|parts| parts.concat().into_bytes())
}

const EDN_TOKENS: &[&str] = &[
    "[", "]", "(", ")", "{", "}", "#{", "#_", "##NaN", "##-Inf", "#inst ", "#uuid ", "\"", "\\u",
    "\\\"", ":", "::", "/", "a", "?e", "_", "-", "+", "0", "17", "1.5", "e", "E", ".", "N", ";",
    "\n", " ", ",", "nil", "true", "\\", "é", "\u{0}", "'",
];

const QUERY_TOKENS: &[&str] = &[
    "[",
    "]",
    "(",
    ")",
    " ",
    ":find",
    ":where",
    ":in",
    ":with",
    "$",
    "%",
    "?r",
    "?t",
    "?n",
    "_",
    "...",
    ".",
    ":recipe/slug",
    ":recipe/title",
    ":recipe/forked-from",
    ":recipe/servings",
    ":recipe/tags",
    ":db/ident",
    "(count ?r)",
    "(pull ?r [*])",
    "[(> ?n 2)]",
    "[(str ?t \"x\") ?s]",
    "(not [?r :recipe/tags \"eggs\"])",
    "(or [?r :recipe/servings 2] [?r :recipe/servings 4])",
    "(ancestor ?r ?a)",
    "\"shakshuka\"",
    "4",
    "\n;;; inputs\n",
    "[[(ancestor ?r ?a) [?r :recipe/forked-from ?a]]]",
];

const INGREDIENT_TOKENS: &[&str] = &[
    "1", "2", "0", "12", "1/2", "/", "-", "–", ".", "½", "⅓", "e", "9", " ", "  ", "cup", "cups",
    "tbsp", "T", "t", "g", "kg", "ml", "oz", "lb", "can", "to", "of", ",", "flour", "(", ")",
    "inf", "NaN", "E", "x", "İ", "\t",
];

const MARKDOWN_TOKENS: &[&str] = &[
    "<",
    ">",
    "/",
    "script",
    "iframe",
    "img",
    " src=",
    " onerror=",
    "\"",
    "'",
    "[",
    "]",
    "(",
    ")",
    "!",
    "javascript:",
    "JaVaScRiPt:",
    "data:",
    "vbscript:",
    "&#x6A;",
    "&#9;",
    "&colon;",
    "\t",
    "\n",
    "\n\n",
    " ",
    "    ",
    "*",
    "_",
    "`",
    "```",
    "|",
    "-",
    "#",
    ">",
    "x",
    "http://",
    "mailto:",
    "\\",
    "&",
    ";",
    "<!--",
    "-->",
    "<?",
    "]: ",
];

const SEED_TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"",
    " ",
    "\n",
    ":slug ",
    ":forks ",
    ":version ",
    ":versions ",
    ":at ",
    "#inst \"2024-01-01T00:00:00Z\"",
    ":author ",
    "\"ann\"",
    ":note ",
    ":title ",
    ":tags ",
    ":ingredients ",
    ":steps ",
    ":yield ",
    ":servings ",
    "0",
    "1",
    "-1",
    "99999",
    ":section ",
    ":text ",
    "\n;;; next file\n",
    "\"shakshuka\"",
    "\"green-shakshuka\"",
    "nil",
    "#_",
];

const EXPORT_TOKENS: &[&str] = &[
    "[",
    "]",
    " ",
    "\n",
    "79",
    "80",
    "0",
    "-1",
    "200",
    "true",
    "false",
    ":db/ident",
    ":recipe/slug",
    ":recipe/title",
    ":recipe/forked-from",
    ":recipe/version-count",
    ":db/txInstant",
    "#inst \"2019-01-01T00:00:00.000Z\"",
    "\"x\"",
    "#keyspace pictures ",
    "a2V5",
    "=",
    "9223372036854775807",
    ";",
    "\u{0}",
    "\r",
];

const PAGE_TOKENS: &[&str] = &[
    "<script type=\"application/ld+json\">",
    "</script>",
    "{",
    "}",
    "[",
    "]",
    "\"",
    ":",
    ",",
    "\"@type\"",
    "\"Recipe\"",
    "\"HowToSection\"",
    "\"HowToStep\"",
    "\"itemListElement\"",
    "\"name\"",
    "\"text\"",
    "\"recipeIngredient\"",
    "\"recipeInstructions\"",
    "\"recipeYield\"",
    "\"keywords\"",
    "\"image\"",
    "\"@graph\"",
    "\"PT1H30M\"",
    "\"P99999D\"",
    "itemscope",
    "itemtype=\"https://schema.org/Recipe\"",
    "itemprop=\"name\"",
    "<div ",
    ">",
    "</div>",
    "&amp;",
    "<p>",
    "null",
    "-1",
    "1e309",
    "\"İİİİ\"",
    "x",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn edn_holds_for_random_text(bytes in text_of(EDN_TOKENS, 40)) {
        fuzz_checks::edn(&bytes);
    }

    #[test]
    fn edn_holds_for_edited_inputs(bytes in mutated("edn", EDN_TOKENS)) {
        fuzz_checks::edn(&bytes);
    }

    #[test]
    fn ingredient_lines_hold_for_random_text(bytes in text_of(INGREDIENT_TOKENS, 12)) {
        fuzz_checks::ingredient_line(&bytes);
    }

    #[test]
    fn markdown_holds_for_random_text(bytes in text_of(MARKDOWN_TOKENS, 40)) {
        fuzz_checks::markdown(&bytes);
    }

    #[test]
    fn markdown_holds_for_edited_inputs(bytes in mutated("markdown", MARKDOWN_TOKENS)) {
        fuzz_checks::markdown(&bytes);
    }

    #[test]
    fn datalog_holds_for_random_queries(bytes in text_of(QUERY_TOKENS, 24)) {
        fuzz_checks::datalog_query(&bytes);
    }

    #[test]
    fn datalog_holds_for_edited_queries(bytes in mutated("datalog_query", QUERY_TOKENS)) {
        fuzz_checks::datalog_query(&bytes);
    }

    #[test]
    fn recipe_pages_hold_for_edited_pages(bytes in mutated("recipe_page", PAGE_TOKENS)) {
        fuzz_checks::recipe_page(&bytes);
    }

    #[test]
    fn any_bytes_pass_every_text_check(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        fuzz_checks::edn(&bytes);
        fuzz_checks::ingredient_line(&bytes);
        fuzz_checks::markdown(&bytes);
        fuzz_checks::datalog_query(&bytes);
        fuzz_checks::recipe_page(&bytes);
    }
}

proptest! {
    // Each case opens temporary stores and imports or seeds into them.
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn seed_files_hold_for_edited_files(bytes in mutated("seed_files", SEED_TOKENS)) {
        fuzz_checks::seed_files(&bytes);
    }

    #[test]
    fn export_files_hold_for_edited_files(bytes in mutated("export_file", EXPORT_TOKENS)) {
        fuzz_checks::export_file(&bytes);
    }
}
