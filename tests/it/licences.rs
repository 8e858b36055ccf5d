//! Issue 54, item 7: every crate the project builds with is under a
//! licence an MIT project may use. `cargo deny` would check this and the
//! RustSec advisories, but its advisory database cannot be fetched where
//! the project's machines run (only the package registries are reached),
//! and building it would add minutes to every CI run; the licences are
//! checked here from `cargo metadata` instead, against the same kind of
//! allow-list. The advisories are not checked (docs/FEDERATION.md).

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

#[test]
fn every_crate_built_is_under_a_licence_an_mit_project_may_use() {
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
    let metadata: Value = serde_json::from_slice(&metadata.stdout).unwrap();
    let ours = metadata["workspace_members"].as_array().unwrap();
    let built: Vec<&Value> = metadata["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|node| &node["id"])
        .collect();
    let mut refused = Vec::new();
    let mut checked = 0;
    for package in metadata["packages"].as_array().unwrap() {
        if ours.contains(&package["id"]) || !built.contains(&&package["id"]) {
            continue;
        }
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
