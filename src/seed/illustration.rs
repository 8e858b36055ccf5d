//! The demo's pictures: a drawing of each recipe made from its own data,
//! not a download. A plate seen from above on a table the colour of its
//! cuisine, the dish on it in the colours of its ingredients (tomatoes
//! red, greens green, eggs yolk-yellow...), each ingredient a few soft
//! blobs, more for the first lines, with a scatter of herbs when the recipe
//! has any. Where things go follows the slug, so a recipe's drawing is the
//! same every time the demo is seeded.
//!
//! Drawn by hand into an RGB buffer (the image crate has no shapes): discs
//! and a band, each disc painted a row span at a time with a one-pixel
//! soft edge. Small (320 by 240, just over the 50,000 pixels search engines
//! ask of a 16:9 crop) and flat-coloured, so the seed stays light: its JPEG
//! variants are a few kilobytes each.

use image::RgbImage;

use super::synthetic::Rng;
use crate::domain::ContentDraft;

pub const WIDTH: u32 = 320;
pub const HEIGHT: u32 = 240;

/// Ingredient words and the colour they are drawn in; the first that a
/// line contains wins.
const COLOURS: &[(&str, [u8; 3])] = &[
    ("tomato", [214, 58, 43]),
    ("chilli", [196, 30, 30]),
    ("chile", [170, 40, 30]),
    ("pepper", [226, 86, 44]),
    ("paprika", [190, 60, 35]),
    ("harissa", [180, 45, 30]),
    ("gochujang", [190, 40, 35]),
    ("egg", [248, 196, 44]),
    ("lemon", [246, 224, 80]),
    ("turmeric", [232, 170, 30]),
    ("saffron", [236, 150, 20]),
    ("cheese", [244, 214, 120]),
    ("feta", [246, 244, 232]),
    ("parmesan", [240, 220, 150]),
    ("butter", [248, 230, 150]),
    ("spinach", [58, 120, 48]),
    ("chard", [70, 130, 55]),
    ("kale", [50, 100, 50]),
    ("leek", [150, 190, 100]),
    ("courgette", [110, 160, 70]),
    ("pea", [120, 180, 70]),
    ("basil", [60, 140, 60]),
    ("coriander", [80, 150, 70]),
    ("parsley", [70, 140, 60]),
    ("dill", [100, 160, 90]),
    ("mint", [90, 170, 100]),
    ("lime", [150, 200, 70]),
    ("avocado", [150, 180, 80]),
    ("carrot", [238, 128, 38]),
    ("lentil", [222, 130, 60]),
    ("dal", [230, 170, 60]),
    ("pumpkin", [230, 130, 40]),
    ("sweet potato", [220, 120, 50]),
    ("mushroom", [150, 120, 95]),
    ("beef", [130, 60, 45]),
    ("lamb", [140, 70, 55]),
    ("pork", [200, 130, 110]),
    ("chicken", [230, 190, 140]),
    ("sausage", [160, 80, 60]),
    ("merguez", [150, 60, 45]),
    ("bean", [110, 50, 45]),
    ("chickpea", [220, 190, 120]),
    ("chocolate", [90, 50, 30]),
    ("cocoa", [100, 60, 40]),
    ("banana", [246, 220, 110]),
    ("apple", [200, 60, 50]),
    ("blueberr", [70, 70, 150]),
    ("berr", [150, 40, 80]),
    ("rice", [246, 244, 236]),
    ("noodle", [240, 222, 170]),
    ("spaghetti", [240, 214, 140]),
    ("pasta", [240, 214, 140]),
    ("flour", [240, 230, 205]),
    ("oat", [220, 200, 160]),
    ("bread", [210, 160, 100]),
    ("yogurt", [248, 248, 244]),
    ("yoghurt", [248, 248, 244]),
    ("cream", [250, 246, 236]),
    ("milk", [250, 248, 240]),
    ("onion", [200, 160, 190]),
    ("garlic", [240, 236, 220]),
    ("ginger", [220, 190, 120]),
    ("stock", [200, 150, 80]),
    ("oil", [220, 190, 80]),
    ("sugar", [240, 220, 180]),
    ("honey", [230, 170, 50]),
    ("maple", [200, 120, 40]),
    ("cinnamon", [170, 100, 50]),
    ("cumin", [170, 120, 60]),
];

/// What the drawing shows, in words: its alt text.
pub fn description(content: &ContentDraft) -> String {
    let shown: Vec<&str> = colours_of(content)
        .iter()
        .map(|(word, _)| *word)
        .take(4)
        .collect();
    if shown.is_empty() {
        format!("A drawing of {} on a plate", content.title)
    } else {
        format!(
            "A drawing of {} on a plate, in the colours of its {}",
            content.title,
            list(&shown)
        )
    }
}

fn list(words: &[&str]) -> String {
    match words {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Each ingredient's colour, in order, each word once.
fn colours_of(content: &ContentDraft) -> Vec<(&'static str, [u8; 3])> {
    let mut out: Vec<(&'static str, [u8; 3])> = Vec::new();
    for line in &content.ingredients {
        let line = line.to_lowercase();
        if let Some(&(word, colour)) = COLOURS.iter().find(|(word, _)| line.contains(word)) {
            if !out.iter().any(|(w, _)| *w == word) {
                out.push((word, colour));
            }
        }
    }
    out
}

/// RGB pixels, row by row.
struct Canvas {
    pixels: Vec<u8>,
    width: usize,
    height: usize,
}

impl Canvas {
    fn filled(width: u32, height: u32, colour: [u8; 3]) -> Canvas {
        let pixels = colour
            .iter()
            .copied()
            .cycle()
            .take(width as usize * height as usize * 3)
            .collect();
        Canvas {
            pixels,
            width: width as usize,
            height: height as usize,
        }
    }

    /// Lays `colour` over pixel (`x`, `y`) at `cover` (0 to 1).
    fn blend(&mut self, x: usize, y: usize, colour: [u8; 3], cover: f32) {
        let at = (y * self.width + x) * 3;
        for (c, new) in self.pixels[at..at + 3].iter_mut().zip(colour) {
            *c = (f32::from(*c) * (1.0 - cover) + f32::from(new) * cover) as u8;
        }
    }

    /// Paints a disc centred on (`x`, `y`) with `opacity`, its edge
    /// softened over a pixel. Row by row: one square root a row for the
    /// span, and one a pixel only on the edge.
    fn circle(&mut self, x: f32, y: f32, r: f32, colour: [u8; 3], opacity: f32) {
        let top = (y - r - 1.0).max(0.0) as usize;
        let bottom = ((y + r + 1.0) as usize).min(self.height - 1);
        for py in top..=bottom {
            let dy = py as f32 + 0.5 - y;
            let outer = (r + 0.5).powi(2) - dy * dy;
            if outer <= 0.0 {
                continue;
            }
            let half = outer.sqrt();
            let inner = ((r - 0.5).powi(2) - dy * dy).max(0.0).sqrt();
            let left = (x - half).max(0.0) as usize;
            let right = ((x + half) as usize).min(self.width - 1);
            for px in left..=right {
                let dx = px as f32 + 0.5 - x;
                let cover = if dx.abs() < inner {
                    opacity
                } else {
                    (r + 0.5 - (dx * dx + dy * dy).sqrt()).clamp(0.0, 1.0) * opacity
                };
                if cover > 0.0 {
                    self.blend(px, py, colour, cover);
                }
            }
        }
    }
}

/// The drawing of the recipe `slug` with `content`.
pub fn draw(slug: &str, content: &ContentDraft) -> RgbImage {
    let seed = slug.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let mut rng = Rng(seed);
    // The table: a colour of the cuisine's (or the title's), with a darker
    // hem along the bottom.
    let key = content.cuisine.as_deref().unwrap_or(&content.title);
    let table = pastel(key);
    let mut canvas = Canvas::filled(WIDTH, HEIGHT, table);
    let hem = table.map(|c| (f32::from(c) * 0.9) as u8);
    for y in (HEIGHT - HEIGHT / 9) as usize..HEIGHT as usize {
        for x in 0..WIDTH as usize {
            canvas.blend(x, y, hem, 1.0);
        }
    }
    // Sizes are in hundredths of the height.
    let unit_size = HEIGHT as f32 / 100.0;
    let (cx, cy) = (WIDTH as f32 / 2.0, HEIGHT as f32 / 2.0 + unit_size);
    // The plate: a shadow, the rim, the well.
    let plate = 44.0 * unit_size;
    canvas.circle(
        cx + 1.5 * unit_size,
        cy + 2.0 * unit_size,
        plate,
        [0, 0, 0],
        0.18,
    );
    canvas.circle(cx, cy, plate, [236, 236, 232], 1.0);
    canvas.circle(cx, cy, 0.79 * plate, [250, 250, 248], 1.0);
    // The dish: blobs of each ingredient's colour, more for the first.
    let colours = colours_of(content);
    let fallback = [("", [200, 160, 110])];
    let colours: &[(&str, [u8; 3])] = if colours.is_empty() {
        &fallback
    } else {
        &colours
    };
    for (i, (_, colour)) in colours.iter().enumerate().take(10) {
        let blobs = 7usize.saturating_sub(i / 2).max(2);
        for _ in 0..blobs {
            let angle = unit(&mut rng) * std::f32::consts::TAU;
            let reach = unit(&mut rng).sqrt() * 0.56 * plate;
            let r = (4.0 + unit(&mut rng) * 6.0) * unit_size;
            let (x, y) = (cx + angle.cos() * reach, cy + angle.sin() * reach);
            canvas.circle(x, y, r, *colour, 0.92);
        }
    }
    // Herbs on top, when the recipe has some.
    if let Some((_, green)) = colours
        .iter()
        .find(|(word, _)| ["basil", "coriander", "parsley", "dill", "mint"].contains(word))
    {
        for _ in 0..26 {
            let angle = unit(&mut rng) * std::f32::consts::TAU;
            let reach = unit(&mut rng).sqrt() * 0.63 * plate;
            let (x, y) = (cx + angle.cos() * reach, cy + angle.sin() * reach);
            let r = (0.8 + unit(&mut rng) * 0.8) * unit_size;
            canvas.circle(x, y, r, *green, 1.0);
        }
    }
    RgbImage::from_raw(WIDTH, HEIGHT, canvas.pixels).expect("the canvas is WIDTH by HEIGHT")
}

/// A number in [0, 1).
fn unit(rng: &mut Rng) -> f32 {
    (rng.next() >> 40) as f32 / (1u64 << 24) as f32
}

/// A light colour that follows `key`.
fn pastel(key: &str) -> [u8; 3] {
    let h = key
        .bytes()
        .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    [
        (h & 0x3f) as u8 + 190,
        ((h >> 6) & 0x3f) as u8 + 185,
        ((h >> 12) & 0x3f) as u8 + 180,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drawing_follows_the_recipe_and_is_the_same_each_time() {
        let content = ContentDraft {
            title: "Shakshuka".into(),
            ingredients: vec![
                "4 eggs".into(),
                "800 g tomatoes".into(),
                "1 tsp cumin".into(),
            ],
            ..ContentDraft::default()
        };
        let first = draw("shakshuka", &content);
        assert_eq!(first, draw("shakshuka", &content));
        assert_ne!(first, draw("green-shakshuka", &content));
        assert_eq!((first.width(), first.height()), (WIDTH, HEIGHT));
        assert_eq!(
            description(&content),
            "A drawing of Shakshuka on a plate, in the colours of its egg, tomato and cumin"
        );
    }
}
