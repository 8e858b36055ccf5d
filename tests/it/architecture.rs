//! The layering of docs/ARCHITECTURE.md where the compiler cannot hold
//! it, checked by reading `src/` (in the spirit of rust-analyzer's tidy
//! tests). The store (with `edn`) and the PostgreSQL log are crates below
//! the app (crates/), so that they name nothing above them is the
//! compiler's to say; the app's own layers are modules of one crate, and a
//! layer may name the modules below it and never one above or beside it,
//! by any path (`crate::`, `forkful::`, `forkful_store::`,
//! `super::super::`, a `use` group, an alias of the crate root), and a
//! layer that may not name the store may not call `.store()` or `.db()`
//! either. A failure names the file, the line and the rule it breaks. The
//! check is itself checked: mutants of a file, each reaching too far one
//! way, must all be caught. What the crates' manifests may depend on is
//! read from them too.
//!
//! An attribute's ident is spelled in the attribute table alone
//! (`domain::attributes`): the app names it through the table's names.

use std::path::{Path, PathBuf};

/// Each top-level module of the crate, and the top-level modules it may
/// name. A module always may name itself. `store`, `edn` and `postgres`
/// are the crates below the app, re-exported at its root under those
/// names: they have no file under `src/`, and their rows only say that
/// they are names a layer may be refused.
const ALLOWED: &[(&str, &[&str])] = &[
    ("edn", &[]),
    ("store", &[]),
    ("postgres", &[]),
    ("domain", &["store", "edn"]),
    ("seed", &["domain", "store", "edn"]),
    ("import", &["domain"]),
    ("assets", &[]),
    ("views", &["domain", "assets"]),
    ("federation", &["domain", "views", "import"]),
    (
        "web",
        &["domain", "views", "assets", "import", "federation"],
    ),
    ("app", &["web", "domain", "assets", "import", "federation"]),
    (
        "cli",
        &[
            "app",
            "web",
            "domain",
            "seed",
            "store",
            "edn",
            "views",
            "assets",
            "import",
            "postgres",
            "federation",
        ],
    ),
    ("main", &["cli"]),
    // The crate root re-exports the crates below under the names above.
    ("lib", &["store", "edn", "postgres"]),
];

/// The crate's top-level modules, which `crate::x` may name.
fn modules() -> Vec<&'static str> {
    ALLOWED.iter().map(|(module, _)| *module).collect()
}

/// The top-level module a file under `src/` belongs to.
fn module_of(relative: &Path) -> String {
    let first = relative
        .components()
        .next()
        .expect("a path under src")
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    first.trim_end_matches(".rs").to_owned()
}

/// A token of Rust source, as far as paths need: identifiers and the
/// punctuation around them. Comments, strings and characters are left out.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    /// `::`
    Path,
    Punct(char),
}

/// The tokens of `source`, each with its line (from 1). Comments (doc
/// comments too: their examples are not the module's code), string, byte
/// string, raw string and character literals are skipped, so a path in one
/// is not read and a `//` in a string hides nothing after it.
fn tokens(source: &str) -> Vec<(usize, Token)> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            // Block comments nest in Rust.
            let mut depth = 0;
            loop {
                if i >= chars.len() {
                    break;
                }
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(chars[i] == '\n');
                    i += 1;
                }
            }
        } else if c == '"' || (matches!(c, 'r' | 'b' | 'c') && starts_string(&chars, i)) {
            // Prefixes (b, r, br, c, cr), then hashes, then the quote.
            while chars[i] != '"' && chars[i] != '#' {
                i += 1;
            }
            let raw = i > 0 && (chars[i - 1] == 'r' || chars[i] == '#');
            let mut hashes = 0;
            while chars[i] == '#' {
                hashes += 1;
                i += 1;
            }
            i += 1; // the opening quote
            while i < chars.len() {
                if !raw && chars[i] == '\\' {
                    line += usize::from(at(i + 1) == '\n');
                    i += 2;
                    continue;
                }
                line += usize::from(chars[i] == '\n');
                if chars[i] == '"' && (0..hashes).all(|h| at(i + 1 + h) == '#') {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
        } else if c == '\'' {
            // A character ('x', '\n', '\u{..}') or a lifetime ('a).
            if at(i + 1) == '\\' {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
            }
        } else if c.is_alphanumeric() || c == '_' {
            let begin = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[begin..i].iter().collect();
            out.push((line, Token::Ident(word.trim_start_matches("r#").to_owned())));
        } else if c == ':' && at(i + 1) == ':' {
            out.push((line, Token::Path));
            i += 2;
        } else {
            if !c.is_whitespace() {
                out.push((line, Token::Punct(c)));
            }
            i += 1;
        }
    }
    out
}

/// Whether a string literal with a prefix (`b"`, `r#"`, `br"`, `c"`...)
/// starts at `i`, rather than an identifier.
fn starts_string(chars: &[char], i: usize) -> bool {
    if i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_') {
        return false;
    }
    let mut j = i;
    while j < chars.len() && matches!(chars[j], 'r' | 'b' | 'c') && j - i < 2 {
        j += 1;
    }
    let raw = chars[i..j].contains(&'r');
    while raw && j < chars.len() && chars[j] == '#' {
        j += 1;
    }
    chars.get(j) == Some(&'"')
}

/// Every place in `source`, a file of `module` whose module path is
/// `depth` deep below the crate root (`src/web/respond.rs` is 2,
/// `src/web/mod.rs` and `src/app.rs` are 1), that names a top-level module
/// `module` may not name, as `(line, what it names)`.
///
/// A path reaches the crate root as `crate::`, `forkful::` or `super::` as
/// many times as the file is deep (or more, in an inline module); a group
/// there (`crate::{store, domain}`) names each of its items. An alias of the
/// crate root (`use crate as root`) is refused outright, since the paths
/// through it cannot be told. A module below the store in neither sense
/// (one that may not name `store`) may not call a method `store()` or
/// `db()` either (`site.recipes().store().db()`): that is how a handle
/// would hand the store up.
fn violations(module: &str, source: &str, depth: usize) -> Vec<(usize, String)> {
    let allowed = ALLOWED
        .iter()
        .find(|(m, _)| *m == module)
        .map(|(_, allowed)| *allowed)
        .unwrap_or_else(|| panic!("src/{module}: a module docs/ARCHITECTURE.md does not place"));
    let modules = modules();
    let forbidden =
        |name: &str| name != module && modules.contains(&name) && !allowed.contains(&name);
    let below_store = module != "store" && !allowed.contains(&"store");
    let tokens = tokens(source);
    let ident = |i: usize| match tokens.get(i) {
        Some((_, Token::Ident(word))) => Some(word.as_str()),
        _ => None,
    };
    let is = |i: usize, token: &Token| tokens.get(i).is_some_and(|(_, t)| t == token);
    let mut found = Vec::new();
    for (i, (line, token)) in tokens.iter().enumerate() {
        let Token::Ident(word) = token else {
            continue;
        };
        // `extern crate self as root`
        if word == "crate" && ident(i + 1) == Some("self") && ident(i + 2) == Some("as") {
            found.push((*line, "crate self as (an alias of the crate root)".into()));
        }
        // `x.store()`, `x.db()`, and `Recipes::store(&x)`.
        if below_store && (word == "store" || word == "db") && i > 0 {
            let method = is(i - 1, &Token::Punct('.'))
                && is(i + 1, &Token::Punct('('))
                && is(i + 2, &Token::Punct(')'));
            let function = is(i - 1, &Token::Path) && is(i + 1, &Token::Punct('('));
            if method || function {
                found.push((*line, format!("{word}() (the store, by a method)")));
            }
        }
        // A crate below the app, by its own name rather than the
        // app's re-export of it.
        let below = match word.as_str() {
            "forkful_store" => Some("store"),
            "forkful_postgres_log" => Some("postgres"),
            _ => None,
        };
        if let Some(name) = below.filter(|name| forbidden(name)) {
            found.push((*line, name.to_owned()));
            continue;
        }
        // The start of a relative path: not a segment after `::`.
        let starts = i == 0 || !is(i - 1, &Token::Path);
        // `i..root` is the path up to the crate root, `root` the `::` after.
        let root = match word.as_str() {
            "crate" | "forkful" => Some(i + 1),
            "super" if starts => {
                let mut j = i;
                let mut supers = 0;
                while ident(j) == Some("super") && is(j + 1, &Token::Path) {
                    supers += 1;
                    j += 2;
                }
                (supers >= depth && supers > 0).then(|| j - 1)
            }
            _ => None,
        };
        if let Some(root) = root {
            if (word == "crate" || word == "forkful") && ident(root) == Some("as") {
                found.push((*line, format!("{word} as (an alias of the crate root)")));
                continue;
            }
            if !is(root, &Token::Path) {
                continue;
            }
            if let Some(name) = ident(root + 1) {
                if forbidden(name) {
                    found.push((*line, name.to_owned()));
                }
            } else if is(root + 1, &Token::Punct('{')) {
                // Each item of the group: its first word, at depth one.
                let (mut j, mut nesting, mut first) = (root + 2, 1, true);
                while j < tokens.len() && nesting > 0 {
                    match &tokens[j].1 {
                        Token::Punct('{') => nesting += 1,
                        Token::Punct('}') => nesting -= 1,
                        Token::Punct(',') if nesting == 1 => first = true,
                        Token::Ident(name) if first && nesting == 1 => {
                            first = false;
                            if forbidden(name) {
                                found.push((tokens[j].0, name.clone()));
                            } else if name == "self" && ident(j + 1) == Some("as") {
                                found.push((
                                    tokens[j].0,
                                    "self as (an alias of the crate root)".into(),
                                ));
                            }
                        }
                        _ => first = false,
                    }
                    j += 1;
                }
            }
        }
    }
    found
}

/// How deep below the crate root the module of a file under `src/` is:
/// `lib.rs` and `main.rs` 0, `app.rs` and `web/mod.rs` 1, `web/respond.rs` 2.
fn depth_of(relative: &Path) -> usize {
    let parts = relative.components().count();
    let is_mod = relative.file_name().is_some_and(|n| n == "mod.rs");
    let is_root =
        parts == 1 && (relative == Path::new("lib.rs") || relative == Path::new("main.rs"));
    match (is_root, is_mod) {
        (true, _) => 0,
        (false, true) => parts - 1,
        (false, false) => parts,
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every source file of the app and of the crates under `crates/`.
fn every_source_file() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    for krate in std::fs::read_dir(root.join("crates")).expect("read crates") {
        rust_files(&krate.expect("a crate").path().join("src"), &mut files);
    }
    assert!(
        files.iter().any(|f| f.ends_with("crates/store/src/lib.rs")),
        "the crates' sources were found"
    );
    files.sort();
    files
}

#[test]
fn no_layer_names_one_above_or_beside_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    assert!(files.len() > 20, "the source tree was found");
    let mut broken = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src");
        let module = module_of(relative);
        let source = std::fs::read_to_string(file).expect("read a source file");
        for (line, named) in violations(&module, &source, depth_of(relative)) {
            broken.push(format!(
                "src/{}:{line}: `{module}` may not name `{named}` (docs/ARCHITECTURE.md, Layers)",
                relative.display()
            ));
        }
    }
    assert!(broken.is_empty(), "\n{}\n", broken.join("\n"));
}

/// Each mutant is a file of a module with one way of reaching a module it
/// may not name; each must be caught, on the line where it does.
#[test]
fn the_check_sees_every_way_a_layer_reaches_up_or_down_too_far() {
    let caught: &[(&str, usize, &str, usize)] = &[
        // (module, depth, source, line of the reach)
        (
            "web",
            2,
            "fn f(site: &Site) {\n    let db = site.recipes().store().db();\n}\n",
            2,
        ),
        ("web", 2, "let s = Recipes::store(&recipes);\n", 1),
        (
            "app",
            1,
            "fn f(r: &Recipes) -> Db { r.snapshot().db() }\n",
            1,
        ),
        ("views", 2, "use forkful::store::Db;\n", 1),
        ("views", 2, "use ::forkful::store::Db;\n", 1),
        ("web", 2, "use super::super::store::Db;\n", 1),
        (
            "web",
            2,
            "mod tests {\n    use super::super::super::store::Db;\n}\n",
            2,
        ),
        ("web", 1, "use super::store::Db;\n", 1),
        ("app", 1, "use crate::store as s;\nfn f(_: s::Db) {}\n", 1),
        (
            "web",
            2,
            "use crate::{\n    domain::Recipes,\n    store::Db,\n};\n",
            3,
        ),
        (
            "web",
            2,
            "use crate::{domain::{Recipes, Snapshot}, store};\n",
            1,
        ),
        ("web", 2, "fn f(_: crate :: store :: Db) {}\n", 1),
        (
            "web",
            2,
            "use crate as root;\nfn f(_: root::store::Db) {}\n",
            1,
        ),
        ("web", 2, "use crate::{self as root};\n", 1),
        ("web", 2, "extern crate self as root;\n", 1),
        (
            "views",
            2,
            "let u = \"https://example.com\"; let d: crate::store::Db;\n",
            1,
        ),
        ("views", 2, "/* a comment */ use crate::store::Db;\n", 1),
        ("views", 2, "let c = '\"'; use crate::store::Db;\n", 1),
        ("views", 2, "use forkful_store::Db;\n", 1),
        ("views", 2, "fn f(_: ::forkful_store::Db) {}\n", 1),
        ("web", 2, "use forkful_postgres_log::PgLog;\n", 1),
        ("domain", 2, "use forkful_postgres_log::PgLog;\n", 1),
        ("main", 0, "use forkful::web::routes;\n", 1),
    ];
    for (module, depth, source, line) in caught {
        let found = violations(module, source, *depth);
        assert!(
            found.iter().any(|(at, _)| at == line),
            "not caught in {module}, line {line}: {source:?} (found {found:?})"
        );
    }
    let fine: &[(&str, usize, &str)] = &[
        (
            "views",
            2,
            "use maud::html;\n// crate::store in a comment\n",
        ),
        (
            "views",
            2,
            "/// use crate::store::Db;\n/* crate::store /* nested */ crate::store */\n",
        ),
        (
            "views",
            2,
            "let s = \"crate::store::Db\"; let r = r#\"forkful::store\"#;\n",
        ),
        ("web", 2, "use super::respond;\nuse super::store_helpers;\n"),
        ("web", 2, "use super::store::Db;\n"),
        ("web", 2, "flag.store(true, Ordering::Relaxed);\n"),
        (
            "web",
            2,
            "use crate::{domain::Recipes, views::{self as v}};\n",
        ),
        ("domain", 2, "use crate::store::Db;\nlet db = store.db();\n"),
        ("cli", 1, "use crate::store::Store;\nrecipes.store();\n"),
        ("domain", 2, "use forkful_store::Db;\n"),
        ("cli", 1, "use forkful_postgres_log::PgLog;\n"),
        ("main", 0, "use forkful::cli;\n"),
    ];
    for (module, depth, source) in fine {
        assert_eq!(
            violations(module, source, *depth),
            [],
            "{module}: {source:?}"
        );
    }
}

/// The backticked words of `text` that name a path in the repository.
fn named_paths(text: &str) -> Vec<String> {
    const ROOTS: [&str; 10] = [
        "src/",
        "crates/",
        "tests/",
        "benches/",
        "scripts/",
        "docs/",
        "templates/",
        "fuzz/",
        "seed/",
        ".ci/",
    ];
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|word| ROOTS.iter().any(|root| word.starts_with(root)))
        .filter(|word| !word.contains(char::is_whitespace))
        .map(str::to_owned)
        .collect()
}

/// The modules the code map lists under each `### `src/...`` (or
/// `crates/...`) heading, as
/// its `- `name`:` bullets: `(directory, module)`.
fn listed_modules(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut directory: Option<String> = None;
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix("### ") {
            directory = heading
                .strip_prefix('`')
                .and_then(|rest| rest.split_once('`'))
                .filter(|(dir, after)| {
                    (dir.starts_with("src/") || dir.starts_with("crates/"))
                        && !dir.ends_with(".rs")
                        && after.is_empty()
                })
                .map(|(dir, _)| dir.to_owned());
        } else if line.starts_with("## ") {
            directory = None;
        } else if let (Some(dir), Some(rest)) = (&directory, line.strip_prefix("- `")) {
            if let Some((module, _)) = rest.split_once("`:") {
                out.push((dir.clone(), module.to_owned()));
            }
        }
    }
    out
}

/// Every path docs/ARCHITECTURE.md names is in the tree, and every module
/// its code map lists is where it says: the map cannot drift from the
/// code unnoticed.
#[test]
fn the_code_map_names_only_what_is_in_the_tree() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    let mut missing = Vec::new();
    let paths = named_paths(&text);
    assert!(paths.len() >= 20, "the map names paths: {paths:?}");
    for path in &paths {
        // `tests/fixtures/fuzz/<target>/`: the part before the placeholder.
        let real = path.split('<').next().unwrap_or(path);
        if !root.join(real).exists() {
            missing.push(path.clone());
        }
    }
    let modules = listed_modules(&text);
    assert!(modules.len() >= 15, "the map lists modules: {modules:?}");
    for (dir, module) in &modules {
        let file = root.join(dir).join(format!("{module}.rs"));
        let folder = root.join(dir).join(module);
        if !file.exists() && !folder.join("mod.rs").exists() {
            missing.push(format!("{dir}/{module}"));
        }
    }
    assert!(
        missing.is_empty(),
        "named in docs/ARCHITECTURE.md but not in the tree: {missing:?}"
    );
}

#[test]
fn the_code_map_check_catches_a_path_or_module_that_is_not_there() {
    let text = "### `crates/store/src`\n\n- `db`: values.\n- `gone`: nothing.\n\n## Next\n\n- `x`: not a module.\nSee `src/nowhere.rs` and `docs/ARCHITECTURE.md`.";
    assert_eq!(
        listed_modules(text),
        vec![
            ("crates/store/src".to_owned(), "db".to_owned()),
            ("crates/store/src".to_owned(), "gone".to_owned())
        ]
    );
    assert_eq!(
        named_paths(text),
        vec!["crates/store/src", "src/nowhere.rs", "docs/ARCHITECTURE.md"]
    );
}

/// The names under `[dependencies]` in the manifest at `path` (from the
/// repository's root).
fn dependencies(path: &str) -> Vec<String> {
    let manifest = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut names = Vec::new();
    let mut inside = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == "[dependencies]";
        } else if inside && !line.starts_with('#') && !line.is_empty() {
            let name = line.split(['=', '.']).next().unwrap_or("").trim();
            names.push(name.to_owned());
        }
    }
    names
}

/// What each crate may be built on, which no compiler check says: the
/// store knows no web, no HTML, no search and no PostgreSQL (so `cargo
/// build -p forkful-store` builds none of them), the log crate only the
/// store and its client, and sled is the store's business alone, so that
/// the store can change what it keeps its keys in.
#[test]
fn each_crate_depends_only_on_what_its_layer_may() {
    let store = dependencies("crates/store/Cargo.toml");
    assert!(store.contains(&"sled".to_owned()), "read: {store:?}");
    for name in &store {
        assert!(
            !["actix", "maud", "tantivy", "scraper", "pulldown", "tokio", "forkful"]
                .iter()
                .any(|above| name.starts_with(above)),
            "the store crate depends on {name}"
        );
    }
    let log = dependencies("crates/postgres-log/Cargo.toml");
    assert!(log.contains(&"tokio-postgres".to_owned()), "read: {log:?}");
    for name in &log {
        assert!(
            !["actix", "maud", "tantivy", "scraper", "sled", "forkful"]
                .iter()
                .any(|other| name.starts_with(other))
                || name == "forkful-store",
            "the log crate depends on {name}"
        );
    }
    let app = dependencies("Cargo.toml");
    assert!(app.contains(&"forkful-store".to_owned()), "read: {app:?}");
    assert!(!app.contains(&"sled".to_owned()), "the app depends on sled");
}

#[test]
fn the_manifest_reader_reads_names_of_either_form() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("Cargo.toml");
    std::fs::write(
        &path,
        "[package]\nname = \"x\"\n[dependencies]\n# sled\nsled.workspace = true\nmaud = { version = \"0.26\" }\n\n[dev-dependencies]\nactix-web = \"4\"\n",
    )
    .unwrap();
    assert_eq!(dependencies(path.to_str().unwrap()), ["sled", "maud"]);
}

/// The store's modules, as `crates/store/src/lib.rs` declares them: `(name, is
/// public)`.
fn store_modules(facade: &str) -> Vec<(String, bool)> {
    facade
        .lines()
        .filter_map(|line| {
            // The front file's own modules, not those inside one.
            if line.starts_with(char::is_whitespace) {
                return None;
            }
            let line = line.trim();
            let (public, rest) = match line.strip_prefix("pub mod ") {
                Some(rest) => (true, rest),
                None => (false, line.strip_prefix("mod ")?),
            };
            Some((
                rest.trim_end_matches(';').trim_end_matches(" {").to_owned(),
                public,
            ))
        })
        .collect()
}

/// The store is learned from one short list: its front file declares its
/// modules private and re-exports what callers use. The public modules
/// are `edn` (the app's seed files are EDN too) and `testing`, which
/// exists only with the `testing` feature. (That nothing else is spelled
/// `pub` where no caller can reach it is `unreachable_pub`'s to say.)
#[test]
fn the_store_is_reached_through_its_facade_only() {
    let facade = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/store/src/lib.rs"),
    )
    .unwrap();
    let modules = store_modules(&facade);
    assert!(modules.len() > 20, "found the store's modules: {modules:?}");
    let public: Vec<_> = modules.iter().filter(|(_, public)| *public).collect();
    assert_eq!(
        public,
        [&("edn".to_owned(), true), &("testing".to_owned(), true)],
        "public store modules"
    );
    assert!(
        facade.contains("#[cfg(feature = \"testing\")]\npub mod testing"),
        "the test hooks are behind the testing feature"
    );
    let code_lines = facade.lines().filter(|l| !l.starts_with("//!")).count();
    assert!(
        code_lines < 100,
        "the facade stays a short list: {code_lines} lines"
    );
}

/// The check above reads a module list the way it is written.
#[test]
fn the_facade_check_reads_public_and_private_modules() {
    let modules = store_modules("mod db;\npub mod value;\n#[cfg(x)]\npub mod testing {\n");
    assert_eq!(
        modules,
        [
            ("db".to_owned(), false),
            ("value".to_owned(), true),
            ("testing".to_owned(), true)
        ]
    );
}

/// The transaction input is a leaf: `schema` installs attributes as entity
/// maps and `prepare` reads a `Db`, so if `transaction` named either (or
/// `db`), the `db`/`transaction`/`schema` circle would be back.
#[test]
fn the_transaction_input_names_no_database_or_schema() {
    let source = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/store/src/transaction.rs"),
    )
    .unwrap();
    for line in source.lines().filter(|l| l.starts_with("use super::")) {
        let module = line["use super::".len()..].split("::").next().unwrap();
        assert!(
            ["value", "encoding", "error"].contains(&module),
            "transaction.rs names `{module}`: {line}"
        );
    }
}

/// A test hook is compiled out of the site, not hidden from its docs.
#[test]
fn no_hook_hides_behind_doc_hidden() {
    let files = every_source_file();
    let hidden: Vec<_> = files
        .iter()
        .filter(|file| {
            std::fs::read_to_string(file)
                .unwrap()
                .lines()
                .any(|l| l.trim() == "#[doc(hidden)]")
        })
        .collect();
    assert!(hidden.is_empty(), "#[doc(hidden)] in {hidden:?}");
}

/// What a `static` in `source` holds that can change: its line, for each
/// static whose type is a lock, an atomic, a cell or a cache, and each
/// `thread_local!`.
fn mutable_statics(source: &str) -> Vec<usize> {
    const MUTABLE: [&str; 7] = [
        "Atomic", "Mutex", "RwLock", "Cell", "Cache", "Memo", "HashMap",
    ];
    source
        .lines()
        .enumerate()
        .filter(|(_, line)| {
            let code = line.split("//").next().unwrap_or("").trim_start();
            let is_static = code.starts_with("static ") || code.starts_with("pub static ");
            code.contains("thread_local!")
                || (is_static && MUTABLE.iter().any(|kind| code.contains(kind)))
        })
        .map(|(n, _)| n + 1)
        .collect()
}

/// Views are pure functions of their model: no view keeps state of its
/// own. The Markdown memos are the site's (`web::caches`), passed in.
#[test]
fn no_view_keeps_a_cache_or_any_state_of_its_own() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/views");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(files.len() > 10, "found the views: {}", files.len());
    let mut found = Vec::new();
    for file in files {
        let source = std::fs::read_to_string(&file).unwrap();
        for line in mutable_statics(&source) {
            found.push(format!("{}:{line}", file.display()));
        }
    }
    assert!(found.is_empty(), "state kept by views: {found:?}");
}

/// The check above finds what it looks for, and leaves constants alone.
#[test]
fn the_view_state_check_finds_a_memo_and_not_a_constant() {
    let memo =
        "fn html_memo() -> &'static Memo {\n    static MEMO: OnceLock<Memo> = OnceLock::new();\n";
    assert_eq!(mutable_statics(memo), [2]);
    assert_eq!(
        mutable_statics("static BUDGET: AtomicU64 = AtomicU64::new(0);"),
        [1]
    );
    assert_eq!(mutable_statics("thread_local! { static X: u8 = 0; }"), [1]);
    assert!(mutable_statics("static NO_LINEAGE: Breadcrumb = Breadcrumb::EMPTY;").is_empty());
    assert!(mutable_statics("    static PAGE: OnceLock<url::Url> = OnceLock::new();").is_empty());
}

/// A page's builder is a function of a snapshot, in `domain/pages`; the
/// snapshot keeps the primitives (`domain/read`) and gains no page's method.
#[test]
fn pages_are_built_beside_the_snapshot_not_on_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/domain/pages");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(files.len() >= 8, "found the pages: {}", files.len());
    let on_snapshot: Vec<_> = files
        .iter()
        .filter(|file| {
            std::fs::read_to_string(file)
                .unwrap()
                .lines()
                .any(|l| l.starts_with("impl Snapshot"))
        })
        .collect();
    assert!(
        on_snapshot.is_empty(),
        "page builders on Snapshot in {on_snapshot:?}"
    );
}

/// What a file's opening module doc says it is for: its first paragraph
/// of `//!` lines, or `None` where the file opens with anything else.
fn purpose_of(source: &str) -> Option<String> {
    let paragraph: Vec<&str> = source
        .lines()
        .skip_while(|line| line.trim().is_empty())
        .map_while(|line| line.strip_prefix("//!"))
        .map(str::trim)
        .take_while(|line| !line.is_empty())
        .collect();
    let purpose = paragraph.join(" ");
    // A sentence at least: a word or two is no account of a module.
    (purpose.split_whitespace().count() >= 5).then_some(purpose)
}

/// Every module opens with a paragraph saying what it is for (docs/
/// ARCHITECTURE.md leaves how a module works to its module doc).
#[test]
fn every_module_opens_with_what_it_is_for() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = every_source_file();
    let without: Vec<String> = files
        .iter()
        .filter(|path| purpose_of(&std::fs::read_to_string(path).unwrap()).is_none())
        .map(|path| path.strip_prefix(root).unwrap().display().to_string())
        .collect();
    assert!(files.len() > 50, "the modules were found");
    assert!(
        without.is_empty(),
        "modules that do not open with what they are for: {without:?}"
    );
}

/// Where a file asks which mode its store is in, as `(line, what)`: the
/// store's own choice of `Durability` read past the seam, or the CLI's
/// question `follows_log`.
fn mode_checks(source: &str) -> Vec<(usize, &'static str)> {
    const ASKS: [&str; 4] = [
        "follows_log(",
        "follows_a_log(",
        "inner.attached",
        "inner.opened",
    ];
    let mut found = Vec::new();
    for (n, line) in source.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for ask in ASKS {
            if code.contains(ask) {
                found.push((n + 1, ask));
            }
        }
    }
    found
}

/// The mode (a store on its own, or one that follows a log) is known only
/// where a store is opened and attached (the store's `open`, `follow` and
/// `durability`, where the choice is made and kept) and by the CLI's
/// wiring; everything else asks the seam what to do (`Durability`) or a
/// property of what it was given (`Keyspace::kept_elsewhere`,
/// `Store::others_write`).
#[test]
fn only_the_opening_and_the_cli_know_the_mode() {
    const KNOW: [&str; 5] = [
        "src/cli.rs",
        "crates/store/src/open.rs",
        "crates/store/src/follow.rs",
        "crates/store/src/durability.rs",
        // `Store::follows_log`, the CLI's question, is defined here.
        "crates/store/src/handle.rs",
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut asked = Vec::new();
    for file in every_source_file() {
        let relative = file.strip_prefix(root).unwrap().display().to_string();
        if KNOW.contains(&relative.as_str()) {
            continue;
        }
        for (line, what) in mode_checks(&std::fs::read_to_string(&file).unwrap()) {
            asked.push(format!("{relative}:{line}: {what}"));
        }
    }
    assert!(
        asked.is_empty(),
        "the mode asked outside the opening: {asked:?}"
    );
    assert_eq!(
        mode_checks("let x = 1;\nif site.recipes().follows_log() {\n// follows_log()\n"),
        [(2, "follows_log(")]
    );
    assert_eq!(
        mode_checks("match self.inner.attached.get() {"),
        [(1, "inner.attached")]
    );
}

/// The names `source` reaches through `prefix` (`crate::` or `super::`):
/// a path's first segment, or each first segment of a group.
fn reached_through(source: &str, prefix: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (at, _) in source.match_indices(prefix) {
        let rest = &source[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            for item in group.split(',') {
                names.push(item.trim().split("::").next().unwrap_or("").to_owned());
            }
        } else {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            names.push(rest[..end].to_owned());
        }
    }
    names.retain(|name| !name.is_empty());
    names
}

/// The store crate's modules and, for each, the modules it names outside
/// its tests: through `crate::`, or `super::` in a module's front file, or
/// an item the crate's front file re-exports from a module (`Store`).
fn store_module_graph() -> Vec<(String, Vec<String>)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/store/src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let mut exported_from = Vec::new();
    for statement in lib.split(';') {
        let Some(path) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, items)) = path.split_once("::") else {
            continue;
        };
        for item in items.trim_matches(|c| c == '{' || c == '}').split(',') {
            exported_from.push((item.trim().to_owned(), module.to_owned()));
        }
    }
    let mut modules: Vec<(String, Vec<PathBuf>)> = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "lib" {
            continue;
        }
        let mut files = Vec::new();
        if path.is_dir() {
            rust_files(&path, &mut files);
        } else if let Some(existing) = modules.iter_mut().find(|(m, _)| *m == name) {
            existing.1.push(path);
            continue;
        } else {
            files.push(path);
        }
        match modules.iter_mut().find(|(m, _)| *m == name) {
            Some(existing) => existing.1.extend(files),
            None => modules.push((name, files)),
        }
    }
    let names: Vec<String> = modules.iter().map(|(m, _)| m.clone()).collect();
    modules
        .iter()
        .map(|(module, files)| {
            let mut named = Vec::new();
            for file in files {
                let text = std::fs::read_to_string(file).unwrap();
                let code = &text[..text.find("#[cfg(test)]").unwrap_or(text.len())];
                let front = file.parent() == Some(src.as_path()) || file.ends_with("mod.rs");
                let mut reached = reached_through(code, "crate::");
                if front {
                    reached.extend(reached_through(code, "super::"));
                }
                for name in reached {
                    let target = exported_from
                        .iter()
                        .find(|(item, _)| *item == name)
                        .map(|(_, m)| m.clone())
                        .unwrap_or(name);
                    if target != *module && names.contains(&target) && !named.contains(&target) {
                        named.push(target);
                    }
                }
            }
            (module.clone(), named)
        })
        .collect()
}

/// The modules of `graph` that lie on a loop of imports, each loop's
/// members sorted, the loops sorted.
fn import_loops(graph: &[(String, Vec<String>)]) -> Vec<Vec<String>> {
    let reaches = |from: &str, to: &str| {
        let mut seen = vec![from.to_owned()];
        let mut next = vec![from.to_owned()];
        while let Some(at) = next.pop() {
            for named in graph.iter().filter(|(m, _)| *m == at).flat_map(|(_, n)| n) {
                if named == to {
                    return true;
                }
                if !seen.contains(named) {
                    seen.push(named.clone());
                    next.push(named.clone());
                }
            }
        }
        false
    };
    let mut loops: Vec<Vec<String>> = Vec::new();
    for (module, _) in graph {
        let mut members: Vec<String> = graph
            .iter()
            .map(|(m, _)| m.clone())
            .filter(|other| other == module || (reaches(module, other) && reaches(other, module)))
            .collect();
        members.sort();
        if members.len() > 1 && !loops.contains(&members) {
            loops.push(members);
        }
    }
    loops.sort();
    loops
}

/// The store's modules import in one direction, but for the handle: any
/// module may name `Store`, whose `impl` blocks are spread over the parts
/// that act on the state it holds (the writer, group commit, undo,
/// durability, the opening), and the handle names the state types those
/// parts keep beside the code that explains them. Without the imports of
/// the handle no loop is left: the opening builds a writer and the writer
/// names nothing of the opening (the keys and genesis they share are
/// `meta`'s, below both); a value names no error, an error no log, the
/// log no schema.
#[test]
fn the_store_modules_import_in_one_direction_but_for_the_handle() {
    let graph = store_module_graph();
    assert!(graph.len() > 25, "the store's modules: {graph:?}");
    let through_the_handle = import_loops(&graph);
    assert_eq!(through_the_handle.len(), 1, "{through_the_handle:?}");
    assert!(through_the_handle[0].contains(&"handle".to_owned()));
    let without_the_handle: Vec<(String, Vec<String>)> = graph
        .iter()
        .map(|(module, named)| {
            let named = named.iter().filter(|n| *n != "handle").cloned().collect();
            (module.clone(), named)
        })
        .collect();
    assert_eq!(
        import_loops(&without_the_handle),
        Vec::<Vec<String>>::new(),
        "loops of imports in the store crate that do not go through the handle"
    );
    let a_loop = [
        ("value".to_owned(), vec!["error".to_owned()]),
        ("error".to_owned(), vec!["value".to_owned()]),
        ("log".to_owned(), vec![]),
    ];
    assert_eq!(
        import_loops(&a_loop),
        [vec!["error".to_owned(), "value".to_owned()]]
    );
    assert_eq!(
        reached_through("use super::{a::B, c};\nlet x = crate::d::e();", "super::"),
        ["a", "c"]
    );
}

/// A function of a source file: its name, the line of its `fn`, how many
/// lines it spans (from that line to its closing brace), and whether it
/// is `async`.
#[derive(Debug, PartialEq, Eq)]
struct Function {
    name: String,
    line: usize,
    lines: usize,
    is_async: bool,
}

/// The functions of `source` with a body, but those of test modules
/// (`#[cfg(test)] mod ...`), which may be as long as their data.
fn functions(source: &str) -> Vec<Function> {
    let tokens = tokens(source);
    let ident = |i: usize| match tokens.get(i) {
        Some((_, Token::Ident(word))) => Some(word.as_str()),
        _ => None,
    };
    let punct = |i: usize, c: char| matches!(tokens.get(i), Some((_, Token::Punct(p))) if *p == c);
    // The index of the brace closing the one opened at `open`.
    let closing = |open: usize| {
        let mut depth = 0;
        for (j, (_, token)) in tokens.iter().enumerate().skip(open) {
            match token {
                Token::Punct('{') => depth += 1,
                Token::Punct('}') => {
                    depth -= 1;
                    if depth == 0 {
                        return j;
                    }
                }
                _ => {}
            }
        }
        tokens.len() - 1
    };
    let mut found = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        // `#[cfg(test)] mod name {`: skipped whole.
        if punct(i, '#')
            && punct(i + 1, '[')
            && ident(i + 2) == Some("cfg")
            && punct(i + 3, '(')
            && ident(i + 4) == Some("test")
            && punct(i + 5, ')')
            && punct(i + 6, ']')
            && ident(i + 7) == Some("mod")
            && punct(i + 9, '{')
        {
            i = closing(i + 9) + 1;
            continue;
        }
        if ident(i) == Some("fn") {
            if let Some(name) = ident(i + 1) {
                // The body's brace, or a `;` for a declaration without one.
                let mut j = i + 2;
                while j < tokens.len() && !punct(j, '{') && !punct(j, ';') {
                    j += 1;
                }
                if punct(j, '{') {
                    let end = closing(j);
                    found.push(Function {
                        name: name.to_owned(),
                        line: tokens[i].0,
                        lines: tokens[end].0 - tokens[i].0 + 1,
                        is_async: i > 0 && ident(i - 1) == Some("async"),
                    });
                }
            }
        }
        i += 1;
    }
    found
}

/// The handlers the URL table (`src/web/mod.rs`) registers, as the files
/// they are in and their names: each `module::name` it names where
/// `src/web/module.rs` is a file.
fn handlers(url_table: &str, web: &Path) -> Vec<(String, String)> {
    let tokens = tokens(url_table);
    let mut found = Vec::new();
    for window in tokens.windows(3) {
        if let [(_, Token::Ident(module)), (_, Token::Path), (_, Token::Ident(name))] = window {
            let file = format!("src/web/{module}.rs");
            if web.join(format!("{module}.rs")).exists()
                && !found.contains(&(file.clone(), name.clone()))
            {
                found.push((file, name.clone()));
            }
        }
    }
    found
}

/// No function is over 80 lines, and no handler (what the URL table
/// registers) over 40: a long function is split along what it does, each
/// step a function whose name says it, and a handler stays extract,
/// decide, render. Tests are exempt.
#[test]
fn no_function_is_over_80_lines_and_no_handler_over_40() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let web = root.join("src/web");
    let handlers = handlers(&std::fs::read_to_string(web.join("mod.rs")).unwrap(), &web);
    assert!(handlers.len() > 40, "the handlers were found: {handlers:?}");
    let mut long = Vec::new();
    let mut counted = 0;
    for file in every_source_file() {
        let relative = file.strip_prefix(root).unwrap().display().to_string();
        for function in functions(&std::fs::read_to_string(&file).unwrap()) {
            counted += 1;
            let handler = handlers.contains(&(relative.clone(), function.name.clone()));
            let limit = if handler { 40 } else { 80 };
            if function.lines > limit {
                long.push(format!(
                    "{relative}:{}: {} is {} lines (at most {limit})",
                    function.line, function.name, function.lines
                ));
            }
        }
    }
    assert!(counted > 1_000, "the functions were found: {counted}");
    assert!(long.is_empty(), "\n{}\n", long.join("\n"));
}

#[test]
fn the_handlers_are_read_from_the_url_table() {
    let web = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/web");
    let table = "cfg.service(page(\"/tags\", pages::tags))\n    .service(get_post(\"/x\", account::a, account::b))\n    .service(page(\"/y\", nowhere::c));";
    assert_eq!(
        handlers(table, &web),
        [
            ("src/web/pages.rs".to_owned(), "tags".to_owned()),
            ("src/web/account.rs".to_owned(), "a".to_owned()),
            ("src/web/account.rs".to_owned(), "b".to_owned()),
        ]
    );
}

#[test]
fn the_function_measure_counts_bodies_and_skips_tests() {
    let source = "fn short() {\n    let s = \"}\";\n}\n\
                  pub async fn handler(x: u8) -> impl Fn() {\n    move || {\n        x;\n    }\n}\n\
                  trait T {\n    fn declared(&self);\n}\n\
                  #[cfg(test)]\nmod tests {\n    fn in_a_test() {}\n}\n";
    assert_eq!(
        functions(source),
        [
            Function {
                name: "short".into(),
                line: 1,
                lines: 3,
                is_async: false
            },
            Function {
                name: "handler".into(),
                line: 4,
                lines: 5,
                is_async: true
            },
        ]
    );
}

/// The two maps stay maps: docs/ARCHITECTURE.md holds what rarely
/// changes and docs/BENCHMARKING.md the method and one table of figures,
/// each under 400 lines; the history of each measurement is
/// `docs/journal/`'s.
#[test]
fn the_architecture_and_benchmarking_docs_stay_under_400_lines() {
    for doc in ["docs/ARCHITECTURE.md", "docs/BENCHMARKING.md"] {
        let text =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(doc)).unwrap();
        let lines = text.lines().count();
        assert!(lines > 100, "{doc} was read: {lines} lines");
        assert!(lines < 400, "{doc} is {lines} lines: keep it a map");
    }
}

/// Issue 55, item 4: every row of BENCHMARKING's figures names the machine
/// it was measured on (one of its table of machines, whose gauge an
/// absolute figure repeats) and the commit measured, which the history
/// holds, and says in a column of its own whether its target was met there:
/// a figure is a claim about one machine and one commit, and a "met" that
/// a reader could take for another machine's is the overclaim the issue
/// found.
#[test]
fn every_figure_names_its_machine_and_commit_and_says_met_in_one_place() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("docs/BENCHMARKING.md")).unwrap();
    let machines: Vec<(String, String)> = table_rows(&text, "| machine | CPU says |")
        .into_iter()
        .map(|r| (r[0].clone(), r[2].clone()))
        .collect();
    assert!(machines.len() >= 5, "{machines:?}");
    let ratios = table_rows(
        &text,
        "| figure (bench or script) | ratio | target | met | machine | commit | date |",
    );
    let absolute = table_rows(
        &text,
        "| figure (bench or script) | value | target | met | machine | gauge | commit | date |",
    );
    assert!(
        ratios.len() > 15 && absolute.len() > 50,
        "only {} ratios and {} absolute figures read",
        ratios.len(),
        absolute.len()
    );
    let mut wrong = Vec::new();
    // A ratio's row has no gauge: it is measured side by side.
    for row in &ratios {
        match row.len() {
            7 => wrong.extend(figure_faults(row, None, &machines, root)),
            _ => wrong.push(format!("a ratio's row not of seven columns: {row:?}")),
        }
    }
    for row in &absolute {
        match row.len() {
            8 => {
                let rest = [&row[..5], &row[6..]].concat();
                wrong.extend(figure_faults(&rest, Some(row[5].as_str()), &machines, root));
            }
            _ => wrong.push(format!(
                "an absolute figure's row not of eight columns: {row:?}"
            )),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The rows of the Markdown table under `header`, each a list of cells.
fn table_rows(text: &str, header: &str) -> Vec<Vec<String>> {
    let start = text
        .find(header)
        .unwrap_or_else(|| panic!("a table headed {header}"));
    text[start..]
        .lines()
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            line.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_owned())
                .collect()
        })
        .collect()
}

/// What is wrong with one figure's row (figure, value, target, met,
/// machine, commit, date) and the gauge it gives, if any.
fn figure_faults(
    row: &[String],
    gauge: Option<&str>,
    machines: &[(String, String)],
    root: &Path,
) -> Vec<String> {
    let [figure, value, _, met, machine, commit, date] = row else {
        return vec![format!("not a figure's row: {row:?}")];
    };
    let mut wrong = Vec::new();
    // Whether a target was met is said once, in its own column, for that
    // machine: never in the value, where it could read as another's.
    if !["met", "not met", "not shown", "no target"].contains(&met.as_str()) {
        wrong.push(format!("{figure}: met is {met:?}"));
    }
    if value
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| ["met", "unmet", "meets", "meet"].contains(&w.to_lowercase().as_str()))
        || value.contains(['✓', '✗'])
    {
        wrong.push(format!(
            "{figure}: the value {value:?} says met; the met column does"
        ));
    }
    // The gauge is the machines table's, up to its first note ("19.8 s"
    // of "19.8 s (2026-12-05)", "not timed" of "not timed; ...").
    let head = |its: &str| {
        its.split([',', ';', '('])
            .next()
            .unwrap_or("")
            .trim()
            .to_owned()
    };
    match machines.iter().find(|(name, _)| name == machine) {
        None => wrong.push(format!(
            "{figure}: no machine {machine:?} in the table of machines"
        )),
        Some((_, its)) if gauge.is_some_and(|g| head(its) != g) => wrong.push(format!(
            "{figure}: gauge {gauge:?}, where {machine}'s is {its:?}"
        )),
        Some(_) => {}
    }
    let named: Vec<&str> = commit
        .split(|c: char| !c.is_ascii_hexdigit())
        .filter(|word| word.len() >= 7)
        .collect();
    if named.is_empty() {
        wrong.push(format!("{figure}: no commit in {commit:?}"));
    }
    for hash in named {
        let known = std::process::Command::new("git")
            .args(["cat-file", "-e", &format!("{hash}^{{commit}}")])
            .current_dir(root)
            .status()
            .is_ok_and(|s| s.success());
        if !known {
            wrong.push(format!("{figure}: {hash} is no commit of this history"));
        }
    }
    let part = |range: std::ops::Range<usize>| date.get(range).and_then(|p| p.parse::<u32>().ok());
    let is_date = date.len() == 10
        && date.as_bytes()[4] == b'-'
        && date.as_bytes()[7] == b'-'
        && part(0..4).is_some_and(|y| (2026..=2100).contains(&y))
        && part(5..7).is_some_and(|m| (1..=12).contains(&m))
        && part(8..10).is_some_and(|d| (1..=31).contains(&d));
    if !is_date {
        wrong.push(format!("{figure}: no date in {date:?}"));
    }
    wrong
}

#[test]
fn the_purpose_check_finds_a_module_without_one() {
    assert!(purpose_of("//! Reading a page's elements within bounds.\n\nuse x;").is_some());
    assert!(purpose_of("use scraper::Html;\n//! Late.\n").is_none());
    assert!(purpose_of("//! Tests.\n\nfn f() {}").is_none());
    assert!(purpose_of("/// An item's doc.\nfn f() {}").is_none());
}

/// The idents of `idents` that `source` spells as a whole string literal
/// outside a `//` comment: `(line, ident)`.
fn spelled_idents(source: &str, idents: &[&str]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in source.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for ident in idents {
            // With its colon, or without it as a keyword's text is kept.
            let bare = ident.trim_start_matches(':');
            if code.contains(&format!("\"{ident}\"")) || code.contains(&format!("\"{bare}\"")) {
                out.push((i + 1, (*ident).to_owned()));
            }
        }
    }
    out
}

/// Writes name an attribute by its id resolved from the table
/// (`attrs.title`), never by a string of their own (an `Attr` of the
/// table is no attribute a transaction takes): each ident is spelled once, in
/// `domain::attributes` (and as text in `site_schema`'s test, which pins
/// the order older stores installed them in).
#[test]
fn an_attribute_is_spelled_in_its_table_only() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let idents: Vec<&str> = forkful::domain::ATTRIBUTES
        .iter()
        .map(|a| a.ident)
        .collect();
    assert!(idents.len() > 70, "the table was read: {idents:?}");
    // The store's crates name no recipe; their tests' example keywords
    // are theirs.
    let spelling = ["src/domain/attributes.rs", "src/domain/site_schema.rs"];
    let mut spelled = Vec::new();
    for path in every_source_file() {
        let relative = path.strip_prefix(root).unwrap().display().to_string();
        if !relative.starts_with("src/") || spelling.contains(&relative.as_str()) {
            continue;
        }
        let source = std::fs::read_to_string(&path).unwrap();
        for (line, ident) in spelled_idents(&source, &idents) {
            spelled.push(format!("{relative}:{line}: {ident}"));
        }
    }
    assert!(
        spelled.is_empty(),
        "idents spelled outside the attribute table (name them by `Attrs`, or as A::...): {spelled:?}"
    );
}

#[test]
fn the_spelling_check_finds_an_ident_written_as_a_string() {
    let idents = [":recipe/title", ":tx/note"];
    let source = "tx.add(e, \":recipe/title\", t);\n\
                  tx.add(e, A::TITLE, t); // not \":recipe/title\"\n\
                  let q = \"[:find ?t :where [?e :recipe/title ?t]]\";\n\
                  map.with(\":tx/note\", note);\n\
                  (\"recipe/title\", v) => {}\n";
    assert_eq!(
        spelled_idents(source, &idents),
        [
            (1, ":recipe/title".to_owned()),
            (4, ":tx/note".to_owned()),
            (5, ":recipe/title".to_owned())
        ]
    );
}
