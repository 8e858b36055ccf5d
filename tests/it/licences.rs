//! Issue 54, item 7: every crate the project builds with is under a
//! licence an MIT project may use, and none has a RustSec advisory that
//! is not answered. `cargo deny` would check both, but it cannot run where
//! the project's machines run: its advisory database cannot be fetched
//! (only the package registries are reached), the one build of it a
//! registry carries (PyPI's 0.14.2) panics on the metadata of the cargo
//! here, and building it from source would add minutes to every CI run.
//! So the licences are checked from `cargo metadata` against the same
//! kind of allow-list, and the advisories against a copy of those of the
//! database that name a crate in Cargo.lock (`tests/fixtures/advisories`,
//! refreshed by `scripts/advisories.sh`; docs/SECURITY.md).

use std::process::Command;

use serde_json::Value;

/// Licences a dependency may be under (SPDX identifiers): permissive, or,
/// for MPL-2.0, copyleft only for the library's own files, which the
/// project uses unchanged (cssparser and selectors, through scraper).
const ALLOWED: [&str; 14] = [
    "MIT",
    "Apache-2.0",
    "BSD-2-Clause",
    "BSD-3-Clause",
    "ISC",
    "Zlib",
    "zlib-acknowledgement",
    "0BSD",
    "Unlicense",
    "Unicode-3.0",
    "BSL-1.0",
    "CDLA-Permissive-2.0",
    "MPL-2.0",
    "LLVM-exception",
];

/// Crates allowed under another licence, and why.
const EXCEPTIONS: [(&str, &str); 1] = [(
    "inferno",
    "CDDL-1.0, file-level copyleft: pprof's flamegraphs (the owner's \
     choice), in the benches only, never in the site's binary",
)];

/// Whether an SPDX expression allows use under `ALLOWED`: some
/// alternative (`OR`, or the old `/`) whose every part (`AND`, `WITH`) is
/// allowed.
fn allowed(expression: &str) -> bool {
    let spelled = expression.replace(['(', ')'], " ").replace('/', " OR ");
    spelled.split(" OR ").any(|alternative| {
        alternative
            .split(" AND ")
            .flat_map(|part| part.split(" WITH "))
            .map(str::trim)
            .all(|id| ALLOWED.contains(&id))
    })
}

#[test]
fn the_licence_check_reads_spdx_expressions() {
    for (expression, verdict) in [
        ("MIT", true),
        ("MIT OR Apache-2.0", true),
        ("MIT/Apache-2.0", true),
        ("(MIT OR Apache-2.0) AND Unicode-3.0", true),
        ("Apache-2.0 WITH LLVM-exception OR MIT", true),
        ("AGPL-3.0", false),
        ("AGPL-3.0-only OR GPL-3.0", false),
        ("MIT AND GPL-2.0", false),
        ("GPL-3.0 OR MIT", true),
    ] {
        assert_eq!(allowed(expression), verdict, "{expression}");
    }
}

/// `cargo metadata` of the crates built for this host.
fn metadata() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let rustc = Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("rustc runs");
    let host = String::from_utf8_lossy(&rustc.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .expect("rustc names its host");
    let metadata = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked"])
        .args(["--filter-platform", &host])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        metadata.status.success(),
        "{}",
        String::from_utf8_lossy(&metadata.stderr)
    );
    serde_json::from_slice(&metadata.stdout).unwrap()
}

/// The packages of `metadata` that are built, but the project's own.
fn built(metadata: &Value) -> Vec<&Value> {
    let ours = metadata["workspace_members"].as_array().unwrap();
    let built: Vec<&Value> = metadata["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|node| &node["id"])
        .collect();
    metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| !ours.contains(&p["id"]) && built.contains(&&p["id"]))
        .collect()
}

#[test]
fn every_crate_built_is_under_a_licence_an_mit_project_may_use() {
    let metadata = metadata();
    let mut refused = Vec::new();
    let mut checked = 0;
    for package in built(&metadata) {
        checked += 1;
        let name = package["name"].as_str().unwrap_or_default();
        let licence = package["license"].as_str().unwrap_or("(none given)");
        if !allowed(licence) && !EXCEPTIONS.iter().any(|(crate_, _)| *crate_ == name) {
            refused.push(format!("{name}: {licence}"));
        }
    }
    assert!(checked > 100, "only {checked} crates read");
    assert!(refused.is_empty(), "not allowed: {refused:?}");
}

/// RustSec advisories on a crate built, each answered: why it stands for
/// now. A new one fails `no_crate_built_has_a_rustsec_advisory_not_answered`
/// until it is answered here or the crate is updated past it; one that no
/// longer applies fails it too, so that this list stays true.
const ANSWERED: [(&str, &str); 7] = [
    (
        "RUSTSEC-2023-0071",
        "rsa (the Marvin attack): timing of many RSA decryptions, observed \
         over a network, can recover a private key. forkful never decrypts \
         with RSA; it signs HTTP requests (PKCS#1 v1.5 signatures, which the \
         attack does not reach) and verifies others'. No patched release \
         exists.",
    ),
    (
        "RUSTSEC-2026-0194",
        "quick-xml 0.26 (quadratic time over a start tag's attributes when \
         parsing): only through inferno, pprof's flamegraphs, in the benches, \
         which writes SVG of the benches' own stacks and parses no one's XML. \
         pprof 0.15 (the owner's pairing with criterion 0.5) pins inferno \
         0.11, which pins it.",
    ),
    (
        "RUSTSEC-2026-0195",
        "quick-xml 0.26 (unbounded namespace declarations when parsing with \
         NsReader): as RUSTSEC-2026-0194, the benches' flamegraphs only.",
    ),
    (
        "RUSTSEC-2024-0370",
        "proc-macro-error, unmaintained (no flaw known): maud_macros 0.26 uses \
         it at compile time only; maud is the owner's choice.",
    ),
    (
        "RUSTSEC-2024-0384",
        "instant, unmaintained (no flaw known): parking_lot 0.11 through sled \
         0.34 (the owner's choice); off WebAssembly it is std's Instant.",
    ),
    (
        "RUSTSEC-2025-0057",
        "fxhash, unmaintained (no flaw known): a hasher inside sled 0.34 and \
         scraper's selectors; it hashes keys the process made, and does not \
         resist collisions by design, which neither relies on.",
    ),
    (
        "RUSTSEC-2025-0119",
        "number_prefix, unmaintained (no flaw known): indicatif 0.17's byte \
         counts in the CLI's progress bars.",
    ),
];

/// What the test reads of an advisory: its front matter (TOML).
struct Advisory {
    id: String,
    package: String,
    withdrawn: bool,
    /// The versions not affected: patched, or never affected.
    safe: Vec<semver::VersionReq>,
}

impl Advisory {
    /// An advisory file of the database: Markdown whose first block, in
    /// a ```toml fence, is its front matter.
    fn read(text: &str) -> Advisory {
        let front = text
            .strip_prefix("```toml")
            .and_then(|rest| rest.split_once("\n```"))
            .map(|(front, _)| front)
            .expect("an advisory starts with its TOML front matter");
        let doc: toml_edit::DocumentMut = front.parse().expect("the front matter is TOML");
        let text_of = |table: &str, key: &str| {
            doc.get(table)
                .and_then(|t| t.get(key))
                .and_then(|v| v.as_str())
                .map(str::to_owned)
        };
        let reqs = |key: &str| -> Vec<semver::VersionReq> {
            let Some(list) = doc.get("versions").and_then(|t| t.get(key)) else {
                return Vec::new();
            };
            let list = list.as_array().expect("a list of version requirements");
            list.iter()
                .map(|r| {
                    let r = r.as_str().expect("a version requirement");
                    semver::VersionReq::parse(r).unwrap_or_else(|e| panic!("{r}: {e}"))
                })
                .collect()
        };
        Advisory {
            id: text_of("advisory", "id").expect("an id"),
            package: text_of("advisory", "package").expect("a package"),
            withdrawn: text_of("advisory", "withdrawn").is_some(),
            safe: reqs("patched")
                .into_iter()
                .chain(reqs("unaffected"))
                .collect(),
        }
    }

    fn affects(&self, version: &semver::Version) -> bool {
        !self.withdrawn && !self.safe.iter().any(|req| req.matches(version))
    }
}

#[test]
fn the_advisory_check_reads_rustsecs_front_matter_and_version_ranges() {
    let advisory = |versions: &str, withdrawn: &str| {
        Advisory::read(&format!(
            "```toml\n[advisory]\nid = \"RUSTSEC-0000-0000\"\npackage = \"x\"\n{withdrawn}\n\
             [versions]\n{versions}\n```\n\n# A flaw\n"
        ))
    };
    let v = |text: &str| semver::Version::parse(text).unwrap();
    let ranged = advisory(
        "patched = [\">= 1.2.0\", \"^1.1.4\"]\nunaffected = [\"< 1.0.0\"]",
        "",
    );
    assert_eq!(
        (ranged.id.as_str(), ranged.package.as_str()),
        ("RUSTSEC-0000-0000", "x")
    );
    for (version, affected) in [
        ("0.9.9", false),
        ("1.0.0", true),
        ("1.1.3", true),
        ("1.1.4", false),
        ("1.2.0", false),
        ("2.0.0", false),
    ] {
        assert_eq!(ranged.affects(&v(version)), affected, "{version}");
    }
    let unpatched = advisory("patched = []", "");
    assert!(unpatched.affects(&v("9.9.9")));
    let withdrawn = advisory("patched = []", "withdrawn = \"2024-01-01\"");
    assert!(!withdrawn.affects(&v("9.9.9")));
}

#[test]
fn no_crate_built_has_a_rustsec_advisory_not_answered() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/advisories");
    let snapshot =
        std::fs::read_to_string(root.join("SNAPSHOT")).expect("the copy says its commit");
    let looked_for = std::fs::read_to_string(root.join("CRATES")).expect("the crates looked for");
    let looked_for: Vec<&str> = looked_for.lines().collect();
    let metadata = metadata();
    let mut affecting = std::collections::BTreeSet::new();
    let (mut read, mut crates) = (0, 0);
    let mut never_looked_for = Vec::new();
    for package in built(&metadata) {
        let name = package["name"].as_str().unwrap();
        if !looked_for.contains(&name) {
            never_looked_for.push(name);
        }
        let version = semver::Version::parse(package["version"].as_str().unwrap()).unwrap();
        let Ok(files) = std::fs::read_dir(root.join("crates").join(name)) else {
            continue;
        };
        crates += 1;
        for file in files {
            let path = file.unwrap().path();
            let advisory = Advisory::read(&std::fs::read_to_string(&path).unwrap());
            assert_eq!(advisory.package, name, "{}", path.display());
            read += 1;
            if advisory.affects(&version) {
                affecting.insert(format!("{} ({name} {version})", advisory.id));
            }
        }
    }
    assert!(
        never_looked_for.is_empty(),
        "crates built since the advisories were copied, whose advisories were never looked \
         for: run scripts/advisories.sh on a clone of the database: {never_looked_for:?}"
    );
    // Not a check of nothing: the copy holds the advisories of many of
    // the crates built (most are old ones, long patched).
    assert!(
        crates > 40 && read > 80,
        "only {read} advisories of {crates} crates read"
    );
    let answered = |line: &String| ANSWERED.iter().any(|(id, _)| line.starts_with(id));
    let unanswered: Vec<&String> = affecting.iter().filter(|l| !answered(l)).collect();
    assert!(
        unanswered.is_empty(),
        "advisories (database at {}) affect crates built: update them, or answer each in \
         ANSWERED: {unanswered:?}",
        snapshot.trim()
    );
    let stale: Vec<&str> = ANSWERED
        .iter()
        .map(|(id, _)| *id)
        .filter(|id| !affecting.iter().any(|l| l.starts_with(id)))
        .collect();
    assert!(
        stale.is_empty(),
        "answered, but no longer affecting a crate built: {stale:?}"
    );
}
