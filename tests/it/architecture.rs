//! The layering of docs/ARCHITECTURE.md, checked by reading `src/` (in the
//! spirit of rust-analyzer's tidy tests): a layer may name the modules below
//! it and never one above or beside it. A failure names the file, the line
//! and the rule it breaks.

use std::path::{Path, PathBuf};

/// Each top-level module of the crate, and the top-level modules it may
/// name. A module always may name itself; `edn` (the reader of the text
/// forms of values) sits below everything.
const ALLOWED: &[(&str, &[&str])] = &[
    ("edn", &[]),
    ("store", &["edn"]),
    ("domain", &["store", "edn"]),
    ("seed", &["domain", "store", "edn"]),
    ("import", &["domain"]),
    ("assets", &[]),
    ("views", &["domain", "assets"]),
    ("web", &["domain", "views", "assets", "import"]),
    ("app", &["web", "domain", "assets", "import"]),
    (
        "cli",
        &[
            "app", "web", "domain", "seed", "store", "edn", "views", "assets", "import",
        ],
    ),
    (
        "fuzz_checks",
        &["domain", "seed", "store", "edn", "views", "import"],
    ),
    ("main", &["cli"]),
    ("lib", &[]),
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

/// Every line of `source` (a file of `module`) that names a top-level module
/// `module` may not name, as `(line number, the module named)`.
fn violations(module: &str, source: &str, is_layer_root: bool) -> Vec<(usize, String)> {
    let allowed = ALLOWED
        .iter()
        .find(|(m, _)| *m == module)
        .map(|(_, allowed)| *allowed)
        .unwrap_or_else(|| panic!("src/{module}: a module docs/ARCHITECTURE.md does not place"));
    let modules = modules();
    let mut found = Vec::new();
    for (i, line) in source.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        // `crate::x`, and in a layer's root file (`src/x/mod.rs` or
        // `src/x.rs`) `super::x`, which is the crate root there too.
        let mut named = Vec::new();
        for prefix in ["crate::", "forkful::"] {
            named.extend(
                code.match_indices(prefix)
                    .map(|(at, _)| &code[at + prefix.len()..]),
            );
        }
        if is_layer_root {
            named.extend(
                code.match_indices("super::")
                    .map(|(at, _)| &code[at + "super::".len()..]),
            );
        }
        for rest in named {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if name != module && modules.contains(&name.as_str()) && !allowed.contains(&&*name) {
                found.push((i + 1, name));
            }
        }
    }
    found
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
        let is_layer_root = relative.components().count() == 1
            || relative.file_name().is_some_and(|n| n == "mod.rs")
                && relative.components().count() == 2;
        let source = std::fs::read_to_string(file).expect("read a source file");
        for (line, named) in violations(&module, &source, is_layer_root) {
            broken.push(format!(
                "src/{}:{line}: `{module}` may not name `{named}` (docs/ARCHITECTURE.md, Layers)",
                relative.display()
            ));
        }
    }
    assert!(broken.is_empty(), "\n{}\n", broken.join("\n"));
}

#[test]
fn the_check_sees_a_layer_reaching_up_or_down_too_far() {
    let views =
        "use maud::html;\nuse crate::store::Db; // no\n// crate::store in a comment is fine\n";
    assert_eq!(violations("views", views, false), [(2, "store".to_owned())]);
    let web_root = "use super::store::Db;\nuse super::respond;\n";
    assert_eq!(violations("web", web_root, true), [(1, "store".to_owned())]);
    assert_eq!(violations("web", web_root, false), []);
    let store = "fn f() { crate::domain::Recipes::open(); }\nuse crate::edn::Form;\n";
    assert_eq!(
        violations("store", store, false),
        [(1, "domain".to_owned())]
    );
    assert!(violations("domain", "use crate::store::Db;\n", false).is_empty());
}
