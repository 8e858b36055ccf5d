//! Embeds the demo seed (seed/recipes/*.edn) and the site's static assets
//! (templates/) in the binary, so that `forkful serve --demo` and
//! `forkful seed` work from any directory.
//!
//! Each asset is compressed here, once, with brotli and gzip at their
//! best, and embedded beside its plain bytes.
//!
//! Each asset is served under a name carrying a hash of its bytes
//! (`style.1f2e3d4c5b6a.css`), so browsers may cache it forever: a changed
//! file is a new name.

use std::path::Path;

fn main() {
    embed_seed();
    embed_assets();
    mimalloc_options();
}

/// The number of mimalloc's `mi_option_arena_eager_commit`, read by name
/// from the header the allocator is built from (libmimalloc-sys names no
/// constant for it), for main.rs: a mimalloc whose options were reordered
/// fails the build here instead of having another option set.
fn mimalloc_options() {
    const NAME: &str = "mi_option_arena_eager_commit";
    let include = std::env::var("DEP_MIMALLOC_INCLUDE_DIR")
        .expect("libmimalloc-sys says where its header is");
    let header_path = Path::new(&include).join("mimalloc.h");
    println!("cargo:rerun-if-changed={}", header_path.display());
    let header = std::fs::read_to_string(&header_path).expect("mimalloc.h is readable");
    let body = header
        .split_once("typedef enum mi_option_e {")
        .and_then(|(_, rest)| rest.split_once('}'))
        .map(|(body, _)| body)
        .expect("mimalloc.h has its option enum");
    let names: Vec<&str> = body
        .lines()
        .map(|line| line.split("//").next().unwrap_or("").trim())
        .flat_map(|line| line.split(','))
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .collect();
    let position = names
        .iter()
        .position(|entry| *entry == NAME)
        .unwrap_or_else(|| panic!("mimalloc.h has no {NAME}"));
    assert!(
        names[..position].iter().all(|entry| !entry.contains('=')),
        "the options before {NAME} are numbered in order"
    );
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("mimalloc_options.rs");
    std::fs::write(
        out,
        format!(
            "/// `{NAME}`, numbered as mimalloc.h numbers it (build.rs).\n\
             const MI_OPTION_ARENA_EAGER_COMMIT: std::ffi::c_int = {position};\n"
        ),
    )
    .expect("OUT_DIR is writable");
}

fn embed_seed() {
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
    let mut out = String::from("/// The demo seed's files: (file name, text), sorted by name.\npub(crate) const FILES: &[(&str, &str)] = &[\n");
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

/// FNV-1a, 64 bits: enough to tell one version of a small file from another.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

fn content_type(extension: &str) -> &'static str {
    match extension {
        "css" => "text/css; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "txt" => "text/plain; charset=utf-8",
        other => panic!("templates/: no content type known for .{other} files"),
    }
}

fn embed_assets() {
    let dir = Path::new("templates");
    println!("cargo:rerun-if-changed=templates");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .expect("templates/ holds the static assets")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name != "README.md" && !name.starts_with('.'))
        .collect();
    files.sort();
    let mut out = String::new();
    let mut all = Vec::new();
    let mut every = source_hash(Path::new("src"));
    for name in &files {
        println!("cargo:rerun-if-changed=templates/{name}");
        let bytes = std::fs::read(dir.join(name)).expect("read an asset");
        let hash = fnv1a(&bytes);
        every = every.rotate_left(5) ^ hash;
        let (stem, extension) = name.rsplit_once('.').expect("assets have extensions");
        let constant: String = stem
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect();
        precompress(name, &bytes);
        out.push_str(&format!(
            "/// templates/{name}\npub const {constant}: Asset = Asset {{\n    path: \"/static/{stem}.{hash:012x}.{extension}\",\n    content_type: {ct:?},\n    body: include_bytes!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/templates/{name}\")),\n    brotli: include_bytes!(concat!(env!(\"OUT_DIR\"), \"/assets/{name}.br\")),\n    gzip: include_bytes!(concat!(env!(\"OUT_DIR\"), \"/assets/{name}.gz\")),\n}};\n",
            hash = hash & 0xffff_ffff_ffff,
            ct = content_type(extension),
        ));
        all.push(constant);
    }
    out.push_str(&format!(
        "/// Every asset.\npub const ALL: &[&Asset] = &[{}];\n/// A hash of every asset and every source file: part of each page's ETag,\n/// so a new build's pages never match a cached copy of an old build's.\npub const VERSION: u64 = {every};\n",
        all.iter().map(|c| format!("&{c}")).collect::<Vec<_>>().join(", ")
    ));
    let target =
        Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("assets.rs");
    std::fs::write(target, out).expect("write the embedded asset list");
}

/// Writes `bytes` brotli- and gzip-compressed, at their best (the build
/// pays once; every browser that asks gets the smallest bytes), to
/// `$OUT_DIR/assets/{name}.br` and `.gz`.
fn precompress(name: &str, bytes: &[u8]) {
    use std::io::Write;
    let dir = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("assets");
    std::fs::create_dir_all(&dir).expect("make the compressed assets' directory");
    let mut brotli = Vec::new();
    {
        let mut encoder = brotli::CompressorWriter::new(&mut brotli, 4096, 11, 22);
        encoder.write_all(bytes).expect("compress an asset");
    }
    std::fs::write(dir.join(format!("{name}.br")), brotli).expect("write a compressed asset");
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gzip.write_all(bytes).expect("compress an asset");
    let gzip = gzip.finish().expect("compress an asset");
    std::fs::write(dir.join(format!("{name}.gz")), gzip).expect("write a compressed asset");
}

/// A hash of every file under `dir`, in name order: what a page's bytes
/// can depend on besides the data and the assets.
fn source_hash(dir: &Path) -> u64 {
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map(|e| e.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    entries.sort();
    let mut hash = 0u64;
    for path in entries {
        let part = if path.is_dir() {
            source_hash(&path)
        } else {
            fnv1a(&std::fs::read(&path).unwrap_or_default())
        };
        hash = hash.rotate_left(7) ^ part;
    }
    hash
}
