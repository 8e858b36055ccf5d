//! Pictures of recipes: an upload decoded, checked, and re-encoded as the
//! few sizes a page serves.
//!
//! An upload is read by its bytes, never its name or stated type: only a
//! JPEG, PNG or WebP that decodes is a picture. It is turned the way its
//! camera said (EXIF orientation), then every variant is re-encoded from
//! the pixels alone, so nothing else of the file leaves the server: no EXIF
//! (GPS included), no comments, no colour profiles. The variants are
//! widths for `srcset` and three crops (1:1, 4:3, 16:9) for search
//! engines' recipe cards.
//!
//! A picture is named by a hash of the upload's bytes: the same file
//! uploaded twice is stored once. `Recipes::add_picture` stores the
//! variants durably before any transaction can refer to them.

use std::io::Cursor;

use blake2::digest::consts::U16;
use blake2::{Blake2b, Digest};
use image::codecs::jpeg::JpegEncoder;
use image::imageops::FilterType;
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, Limits, RgbImage};

use super::hex;

/// The largest upload read, in bytes.
pub const MAX_UPLOAD_BYTES: usize = 10 * 1024 * 1024;
/// The longest side a picture may have, in pixels: about 2.5 times the
/// widest variant (`WIDTHS`' 1600), room for a photograph as a phone takes
/// it (4032 x 3024) and no more. Every variant is made from the whole
/// picture, so pixels past what the variants show are only cost.
///
/// What one decode holds at most, at this cap and `MAX_PIXELS` (a 3072 x
/// 4096 portrait is the worst): the upload (10 MiB) while it is read; the
/// decoded picture, at most `MAX_DECODED_BYTES` (48 MiB), and a second
/// copy of it while it is turned upright (or the RGB picture, 36 MiB,
/// beside it); a progressive JPEG's coefficients first, 2 bytes a pixel
/// per colour channel (72 MiB, 96 for CMYK) with the JPEG decoder's copy
/// of the upload. Then the RGB picture (36 MiB) and each variant's resize:
/// the image crate's first pass keeps the picture's width at the variant's
/// height in 16 bytes a pixel (RGBA `f32`), which for the 1600 variant of
/// a 4096-high picture is 1600 x 4096 x 16 = 100 MiB, and its output (10
/// MiB). The most live at once is that last step: 10 + 36 + 100 + 10,
/// about 156 MiB (the resident memory it costs is measured in
/// docs/SECURITY.md). How many decodes run at once is the web layer's to
/// bound (`web::rate_limits::PictureDecodes`).
pub const MAX_SIDE: u32 = 4096;
/// The most pixels a picture may have: a 4:3 picture 4096 on its long
/// side (12.6 megapixels). A square may be 3547 on a side.
pub const MAX_PIXELS: u64 = 4096 * 3072;
/// The most bytes a decoded picture may take: `MAX_PIXELS` at 4 bytes a
/// pixel (8-bit RGBA). The decoder's `max_alloc`, so a picture of 16-bit
/// channels (6 or 8 bytes a pixel) is refused past 8.4 or 6.3 megapixels
/// rather than decoded into twice the memory.
pub const MAX_DECODED_BYTES: u64 = MAX_PIXELS * 4;
/// The longest side a stored picture may have (an import file's record is
/// checked against it): `MAX_SIDE` before it was lowered from 8000, so
/// that pictures stored then are still served, exported and imported.
pub const MAX_STORED_SIDE: u32 = 8000;
/// The widths served for `srcset` (those no wider than the picture).
pub const WIDTHS: [u32; 4] = [320, 640, 1024, 1600];
/// The crops search engines ask for, as width and height ratios.
pub const CROPS: [(u32, u32); 3] = [(1, 1), (4, 3), (16, 9)];
/// How wide the crops are at most.
const CROP_WIDTH: u32 = 1200;
/// JPEG quality: photographs look right and weigh a fifth of the original.
const QUALITY: u8 = 82;
/// The keyspace pictures are stored in: `{hash}` is a picture's size
/// (`1600 1200`), `{hash}-{variant}` a variant's JPEG bytes. It is carried
/// by export and import.
pub const KEYSPACE: &str = "pictures";

/// The length of a picture's name: 32 hex digits (128 bits of BLAKE2b).
pub const HASH_LEN: usize = 32;

/// A recipe's picture: which one, its size, and what it shows in words.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Picture {
    /// The hash that names it (32 lowercase hex digits).
    pub hash: String,
    pub width: u32,
    pub height: u32,
    /// What the picture shows, for those who cannot see it.
    pub alt: String,
}

impl Picture {
    /// The widths it is served at, smallest first: each of `WIDTHS` no
    /// wider than the picture, or its own width if it is narrower than all.
    pub fn widths(&self) -> Vec<u32> {
        widths_for(self.width)
    }

    /// The height at `width`, keeping the picture's proportions.
    pub fn height_at(&self, width: u32) -> u32 {
        scaled_height(self.width, self.height, width)
    }
}

fn widths_for(width: u32) -> Vec<u32> {
    let widths: Vec<u32> = WIDTHS.iter().copied().filter(|&w| w <= width).collect();
    if widths.is_empty() {
        vec![width]
    } else {
        widths
    }
}

fn scaled_height(width: u32, height: u32, at: u32) -> u32 {
    ((u64::from(height) * u64::from(at) + u64::from(width) / 2) / u64::from(width.max(1))).max(1)
        as u32
}

/// The name of a crop's variant: `4x3`.
pub fn crop_name((w, h): (u32, u32)) -> String {
    format!("{w}x{h}")
}

/// Whether `text` can name a picture: exactly 32 lowercase hex digits.
pub fn is_hash(text: &str) -> bool {
    text.len() == HASH_LEN && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Every variant a picture of `width` has: its widths, then its crops.
pub fn variant_names(width: u32) -> Vec<String> {
    widths_for(width)
        .into_iter()
        .map(|w| w.to_string())
        .chain(CROPS.iter().map(|&c| crop_name(c)))
        .collect()
}

/// Whether `name` is a variant a picture of `width` has.
pub fn is_variant(width: u32, name: &str) -> bool {
    CROPS.iter().any(|&c| crop_name(c) == name)
        || name
            .parse::<u32>()
            .is_ok_and(|w| widths_for(width).contains(&w))
}

/// Why an upload is not a picture.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PictureError {
    #[error("the picture is {0} bytes; the most is {MAX_UPLOAD_BYTES} (10 MiB)")]
    TooLarge(usize),
    #[error("the file is not a JPEG, PNG or WebP picture")]
    NotAPicture,
    #[error("the picture could not be read: {0}")]
    Unreadable(String),
    #[error(
        "the picture is {0}x{1} pixels; the most is {MAX_SIDE} on a side and 12.6 megapixels \
         (4096x3072) in all: make it smaller and send it again"
    )]
    TooManyPixels(u32, u32),
    #[error("the picture needs more memory to read than a picture may take")]
    TooBigToRead,
}

/// An upload made ready to store: its name, size and encoded variants.
pub struct Prepared {
    pub hash: String,
    pub width: u32,
    pub height: u32,
    /// Each variant's name (`640`, `4x3`) and JPEG bytes.
    pub variants: Vec<(String, Vec<u8>)>,
}

/// An unkeyed hash, in the form of a picture's name: what names a drawn
/// picture (the demo's, public by design).
pub fn hash_of(bytes: &[u8]) -> String {
    let digest = Blake2b::<U16>::digest(bytes);
    hex(&digest)
}

/// A store's secret key for naming uploads: 32 random bytes.
#[derive(Clone)]
pub struct NameKey([u8; 32]);

impl NameKey {
    pub fn random() -> NameKey {
        use argon2::password_hash::rand_core::{OsRng, RngCore};
        let mut key = [0u8; 32];
        OsRng.fill_bytes(&mut key);
        NameKey(key)
    }

    pub fn from_bytes(bytes: &[u8]) -> Option<NameKey> {
        bytes.try_into().ok().map(NameKey)
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

/// The name an upload is stored under: its BLAKE2b hash keyed by the
/// store's `key` (128 bits, as `hash_of`'s), so a name cannot be worked
/// out from the file, only learnt from the site.
pub fn name_of(key: &NameKey, bytes: &[u8]) -> String {
    use blake2::digest::{FixedOutput, KeyInit, Update};
    let mut mac = blake2::Blake2bMac::<U16>::new_from_slice(&key.0)
        .expect("32 bytes is a BLAKE2b key's length");
    mac.update(bytes);
    hex(&mac.finalize_fixed())
}

/// Decodes `bytes` and encodes every variant, to be stored as `name`.
pub fn prepare(bytes: &[u8], name: String) -> Result<Prepared, PictureError> {
    if bytes.len() > MAX_UPLOAD_BYTES {
        return Err(PictureError::TooLarge(bytes.len()));
    }
    let image = decode(bytes)?;
    encoded(flattened(image), name)
}

/// A picture drawn by code (the demo's): named by a hash of its pixels.
pub fn prepare_drawn(rgb: RgbImage) -> Result<Prepared, PictureError> {
    let mut named = rgb.as_raw().clone();
    named.extend_from_slice(&rgb.width().to_be_bytes());
    let hash = hash_of(&named);
    encoded(rgb, hash)
}

/// Every variant of `rgb`, encoded.
fn encoded(rgb: RgbImage, hash: String) -> Result<Prepared, PictureError> {
    let (width, height) = rgb.dimensions();
    let picture = DynamicImage::ImageRgb8(rgb);
    let mut variants = Vec::new();
    for w in widths_for(width) {
        let jpeg = if w == width {
            jpeg(picture.as_rgb8().expect("made RGB above"))?
        } else {
            jpeg(&resized(&picture, w, scaled_height(width, height, w)))?
        };
        variants.push((w.to_string(), jpeg));
    }
    let rgb = picture.as_rgb8().expect("made RGB above");
    for crop in CROPS {
        variants.push((crop_name(crop), jpeg(&cropped(rgb, crop))?));
    }
    Ok(Prepared {
        hash,
        width,
        height,
        variants,
    })
}

/// The picture in `bytes`, turned upright; only JPEG, PNG and WebP.
fn decode(bytes: &[u8]) -> Result<DynamicImage, PictureError> {
    let mut reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| PictureError::Unreadable(e.to_string()))?;
    match reader.format() {
        Some(ImageFormat::Jpeg | ImageFormat::Png | ImageFormat::WebP) => {}
        _ => return Err(PictureError::NotAPicture),
    }
    // The header is read under the memory limit alone, so that a picture
    // over the size cap is refused below with a message that names its
    // size (a decoder held to the cap would only say it is over a limit).
    let mut limits = Limits::default();
    limits.max_alloc = Some(MAX_DECODED_BYTES);
    reader.limits(limits.clone());
    let unreadable = |e: image::ImageError| match e {
        image::ImageError::Limits(_) => PictureError::TooBigToRead,
        other => PictureError::Unreadable(other.to_string()),
    };
    let mut decoder = reader.into_decoder().map_err(unreadable)?;
    let (w, h) = decoder.dimensions();
    if w > MAX_SIDE || h > MAX_SIDE || u64::from(w) * u64::from(h) > MAX_PIXELS {
        return Err(PictureError::TooManyPixels(w, h));
    }
    if w == 0 || h == 0 {
        return Err(PictureError::NotAPicture);
    }
    // Then the decoder itself is held to the cap (the JPEG decoder passes
    // it on, and refuses a frame larger than its header said), and the
    // picture's own buffer is reserved against the memory limit:
    // `from_decoder`, unlike `ImageReader::decode`, does not reserve it.
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    decoder.set_limits(limits.clone()).map_err(unreadable)?;
    limits.reserve(decoder.total_bytes()).map_err(unreadable)?;
    let orientation = decoder
        .orientation()
        .unwrap_or(image::metadata::Orientation::NoTransforms);
    let mut image = DynamicImage::from_decoder(decoder).map_err(unreadable)?;
    image.apply_orientation(orientation);
    Ok(image)
}

/// RGB pixels, any transparency laid on white (JPEG has none).
fn flattened(image: DynamicImage) -> RgbImage {
    if !image.color().has_alpha() {
        return image.into_rgb8();
    }
    let rgba = image.into_rgba8();
    let mut rgb = RgbImage::new(rgba.width(), rgba.height());
    for (out, px) in rgb.pixels_mut().zip(rgba.pixels()) {
        let [r, g, b, a] = px.0;
        let over = |c: u8| ((u16::from(c) * u16::from(a) + 255 * (255 - u16::from(a))) / 255) as u8;
        out.0 = [over(r), over(g), over(b)];
    }
    rgb
}

/// The largest centred crop of `rgb` with the ratio `w:h`, at most
/// `CROP_WIDTH` wide.
fn cropped(rgb: &RgbImage, (rw, rh): (u32, u32)) -> RgbImage {
    let (width, height) = rgb.dimensions();
    // As wide as the picture, unless that is too tall for the ratio.
    let (mut cw, mut ch) = (
        width,
        (u64::from(width) * u64::from(rh) / u64::from(rw)) as u32,
    );
    if ch > height {
        ch = height;
        cw = (u64::from(height) * u64::from(rw) / u64::from(rh)) as u32;
    }
    let (cw, ch) = (cw.max(1), ch.max(1));
    let x = (width - cw) / 2;
    let y = (height - ch) / 2;
    let crop = image::imageops::crop_imm(rgb, x, y, cw, ch).to_image();
    if cw <= CROP_WIDTH {
        crop
    } else {
        let h = (u64::from(CROP_WIDTH) * u64::from(rh) / u64::from(rw)) as u32;
        resized(&DynamicImage::ImageRgb8(crop), CROP_WIDTH, h.max(1))
    }
}

/// `picture` (RGB) resized to `w` by `h`. Through `DynamicImage`, whose
/// resize is compiled in the image crate, and so optimised in every build,
/// rather than `imageops::resize`, a generic function compiled here: in a
/// debug build, where this crate is not optimised, a picture at the cap
/// took about 16 s to make its variants that way. The same resize either
/// way (`resize_exact` calls `imageops::resize`), so the same pixels.
fn resized(picture: &DynamicImage, w: u32, h: u32) -> RgbImage {
    picture.resize_exact(w, h, FilterType::Triangle).into_rgb8()
}

fn jpeg(rgb: &RgbImage) -> Result<Vec<u8>, PictureError> {
    let mut out = Vec::new();
    JpegEncoder::new_with_quality(&mut out, QUALITY)
        .encode_image(rgb)
        .map_err(|e| PictureError::Unreadable(e.to_string()))?;
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `super::prepare`, named as a drawn picture is.
    fn prepare(bytes: &[u8]) -> Result<Prepared, PictureError> {
        super::prepare(bytes, hash_of(bytes))
    }

    #[test]
    fn an_uploads_name_depends_on_the_stores_key() {
        let (one, other) = (NameKey::random(), NameKey::random());
        let upload = b"the same file";
        assert_eq!(name_of(&one, upload), name_of(&one, upload));
        assert_ne!(name_of(&one, upload), name_of(&other, upload));
        assert_ne!(name_of(&one, upload), hash_of(upload));
        assert!(is_hash(&name_of(&one, upload)));
    }

    /// A picture `w` by `h` in `format`, a gradient so it is not flat.
    pub(crate) fn encoded(w: u32, h: u32, format: ImageFormat) -> Vec<u8> {
        let image = RgbImage::from_fn(w, h, |x, y| {
            image::Rgb([(x * 255 / w) as u8, (y * 255 / h) as u8, 128])
        });
        let mut out = Cursor::new(Vec::new());
        DynamicImage::ImageRgb8(image)
            .write_to(&mut out, format)
            .unwrap();
        out.into_inner()
    }

    #[test]
    fn each_format_is_read_and_every_variant_made() {
        for format in [ImageFormat::Jpeg, ImageFormat::Png, ImageFormat::WebP] {
            let prepared = prepare(&encoded(700, 500, format)).unwrap();
            assert_eq!((prepared.width, prepared.height), (700, 500));
            let names: Vec<&str> = prepared.variants.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(names, ["320", "640", "1x1", "4x3", "16x9"], "{format:?}");
            for (name, bytes) in &prepared.variants {
                let image = image::load_from_memory_with_format(bytes, ImageFormat::Jpeg).unwrap();
                let want = match name.as_str() {
                    "320" => (320, 229),
                    "640" => (640, 457),
                    "1x1" => (500, 500),
                    "4x3" => (666, 500),
                    _ => (700, 393),
                };
                assert_eq!((image.width(), image.height()), want, "{name}");
            }
        }
    }

    #[test]
    fn a_small_picture_is_served_at_its_own_width() {
        let prepared = prepare(&encoded(200, 100, ImageFormat::Png)).unwrap();
        assert_eq!(prepared.variants[0].0, "200");
        assert!(is_variant(200, "200") && !is_variant(200, "320"));
    }

    #[test]
    fn what_is_not_a_picture_is_refused_by_its_bytes() {
        assert_eq!(
            prepare(b"<svg xmlns='http://www.w3.org/2000/svg'/>").err(),
            Some(PictureError::NotAPicture)
        );
        assert_eq!(
            prepare(b"GIF89a....").err(),
            Some(PictureError::NotAPicture)
        );
        // A JPEG's first bytes and then nothing decodable.
        let mut broken = encoded(50, 50, ImageFormat::Jpeg);
        broken.truncate(40);
        assert!(matches!(prepare(&broken), Err(PictureError::Unreadable(_))));
        let huge = vec![0u8; MAX_UPLOAD_BYTES + 1];
        assert_eq!(
            prepare(&huge).err(),
            Some(PictureError::TooLarge(MAX_UPLOAD_BYTES + 1))
        );
    }

    /// `jpeg` with an EXIF segment carrying `secret` where GPS would be.
    pub(crate) fn with_exif(jpeg: &[u8], secret: &str) -> Vec<u8> {
        let mut payload = b"Exif\0\0II*\0\x08\0\0\0\0\0".to_vec();
        payload.extend_from_slice(secret.as_bytes());
        let length = (payload.len() + 2) as u16;
        let mut out = jpeg[..2].to_vec(); // SOI
        out.extend_from_slice(&[0xFF, 0xE1]);
        out.extend_from_slice(&length.to_be_bytes());
        out.extend_from_slice(&payload);
        out.extend_from_slice(&jpeg[2..]);
        out
    }

    #[test]
    fn no_metadata_survives_into_any_variant() {
        let secret = "GPSLatitude 48.85837 N GPSLongitude 2.29448 E";
        let upload = with_exif(&encoded(400, 300, ImageFormat::Jpeg), secret);
        assert!(upload.windows(4).any(|w| w == b"Exif"));
        let prepared = prepare(&upload).unwrap();
        for (name, bytes) in &prepared.variants {
            assert!(!bytes.windows(4).any(|w| w == b"Exif"), "{name}");
            assert!(!bytes.windows(3).any(|w| w == b"GPS"), "{name}");
        }
    }

    /// A PNG's first bytes saying it is `w` by `h` (8-bit RGB), and
    /// nothing after: a decoder reads the size before any pixel.
    fn png_header(w: u32, h: u32) -> Vec<u8> {
        png_header_of(w, h, 8, 2)
    }

    /// `png_header` with `depth` bits a channel, of PNG colour type
    /// `colour` (2 RGB, 6 RGBA).
    fn png_header_of(w: u32, h: u32, depth: u8, colour: u8) -> Vec<u8> {
        let mut ihdr = b"IHDR".to_vec();
        ihdr.extend_from_slice(&w.to_be_bytes());
        ihdr.extend_from_slice(&h.to_be_bytes());
        ihdr.extend_from_slice(&[depth, colour, 0, 0, 0]);
        let mut crc = flate2::Crc::new();
        crc.update(&ihdr);
        let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
        out.extend_from_slice(&13u32.to_be_bytes());
        out.extend_from_slice(&ihdr);
        out.extend_from_slice(&crc.sum().to_be_bytes());
        // An empty IDAT: where the header ends and pixels would start.
        let mut crc = flate2::Crc::new();
        crc.update(b"IDAT");
        out.extend_from_slice(&0u32.to_be_bytes());
        out.extend_from_slice(b"IDAT");
        out.extend_from_slice(&crc.sum().to_be_bytes());
        out
    }

    #[test]
    fn a_picture_too_large_to_decode_is_refused_before_its_pixels() {
        assert_eq!(
            prepare(&png_header(8000, 6000)).err(),
            Some(PictureError::TooManyPixels(8000, 6000))
        );
        assert_eq!(
            prepare(&png_header(9000, 10)).err(),
            Some(PictureError::TooManyPixels(9000, 10))
        );
        // One past the side, and a square past the pixels.
        assert_eq!(
            prepare(&png_header(10, MAX_SIDE + 1)).err(),
            Some(PictureError::TooManyPixels(10, MAX_SIDE + 1))
        );
        assert_eq!(
            prepare(&png_header(3600, 3600)).err(),
            Some(PictureError::TooManyPixels(3600, 3600))
        );
    }

    #[test]
    fn a_picture_at_the_cap_is_decoded_and_one_of_wide_channels_is_refused_unread() {
        // At the cap, in 8-bit RGBA: past every check, to its (missing)
        // pixels, so the error is about those.
        for (w, h) in [(4096, 3072), (3072, 4096)] {
            let at_cap = prepare(&png_header_of(w, h, 8, 6)).err();
            assert!(
                matches!(at_cap, Some(PictureError::Unreadable(_))),
                "{w}x{h}: {at_cap:?}"
            );
        }
        // The same size in 16-bit RGBA would decode into 96 MiB, twice
        // `MAX_DECODED_BYTES`: refused before a pixel is read.
        assert_eq!(
            prepare(&png_header_of(4096, 3072, 16, 6)).err(),
            Some(PictureError::TooBigToRead)
        );
        // A smaller one with wide channels fits.
        let smaller = prepare(&png_header_of(2048, 3072, 16, 6)).err();
        assert!(
            matches!(smaller, Some(PictureError::Unreadable(_))),
            "{smaller:?}"
        );
    }

    #[test]
    fn hashes_name_uploads_and_nothing_else() {
        let hash = hash_of(b"x");
        assert!(is_hash(&hash));
        assert!(!is_hash("../../etc/passwd"));
        assert!(!is_hash(&hash.to_uppercase()));
        assert!(!is_hash(&hash[1..]));
    }
}
