//! The site's static assets (templates/), compiled into the binary under
//! content-hashed names by `build.rs`.

/// One static file.
#[derive(Debug)]
pub struct Asset {
    /// Where it is served: `/static/style.1f2e3d4c5b6a.css`.
    pub path: &'static str,
    pub content_type: &'static str,
    pub body: &'static [u8],
    /// `body`, brotli-compressed at build time.
    pub brotli: &'static [u8],
    /// `body`, gzip-compressed at build time.
    pub gzip: &'static [u8],
}

include!(concat!(env!("OUT_DIR"), "/assets.rs"));

/// The asset served at `path`, if any.
pub fn find(path: &str) -> Option<&'static Asset> {
    ALL.iter().copied().find(|a| a.path == path)
}
