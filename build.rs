//! Embeds the demo seed (seed/recipes/*.edn) in the binary, so that
//! `forkful serve --demo` and `forkful seed` work from any directory.

use std::path::Path;

fn main() {
    let dir = Path::new("seed/recipes");
    println!("cargo:rerun-if-changed=seed/recipes");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| name.ends_with(".edn"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut out = String::from("/// The demo seed's files: (file name, text), sorted by name.\npub const FILES: &[(&str, &str)] = &[\n");
    for name in &files {
        println!("cargo:rerun-if-changed=seed/recipes/{name}");
        out.push_str(&format!(
            "    ({name:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/seed/recipes/{name}\"))),\n"
        ));
    }
    out.push_str("];\n");
    let target =
        Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("demo_seed.rs");
    std::fs::write(target, out).expect("write the embedded seed list");
}
