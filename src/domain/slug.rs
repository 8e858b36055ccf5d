//! `Slug`: the name of a recipe in URLs and seed files.

use std::fmt;

/// A recipe's slug: 1 to 80 characters of `a-z`, `0-9` and single hyphens,
/// not starting or ending with a hyphen. Parsed once at the edge; a `Slug`
/// is always valid.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Slug(String);

/// Why a text is not a slug.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a slug: {why}")]
pub struct BadSlug {
    pub text: String,
    pub why: &'static str,
}

pub const MAX_SLUG_LEN: usize = 80;

/// Slugs no recipe may have: `/recipes/new` is the new-recipe form, which
/// the router tries before the recipe pattern, so a recipe there could
/// never be read.
const RESERVED_FOR_PAGES: [&str; 1] = ["new"];

impl Slug {
    pub fn parse(text: &str) -> Result<Slug, BadSlug> {
        let bad = |why| BadSlug {
            text: text.to_owned(),
            why,
        };
        if text.is_empty() {
            return Err(bad("it is empty"));
        }
        if text.len() > MAX_SLUG_LEN {
            return Err(bad("it is longer than 80 characters"));
        }
        if !text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            return Err(bad("only a-z, 0-9 and - are allowed"));
        }
        if text.starts_with('-') || text.ends_with('-') || text.contains("--") {
            return Err(bad("hyphens go between words, one at a time"));
        }
        Ok(Slug(text.to_owned()))
    }

    /// A slug made from a title in any language: letters are spelled in
    /// ASCII first (deunicode: `Crème brûlée` -> `creme-brulee`,
    /// `Smørrebrød` -> `smorrebrod`, `親子丼` -> `qin-zi-jing`, Han read as Mandarin), an apostrophe
    /// is dropped (`Nonna's` -> `nonnas`), and anything else that is not a
    /// letter or digit parts words with one hyphen. An empty result becomes
    /// `recipe`. Only new recipes are named so: a recipe keeps the address
    /// it was saved under.
    pub fn from_title(title: &str) -> Slug {
        let spelled = deunicode::deunicode_with_tofu(title, " ");
        let mut out = String::new();
        for c in spelled.chars().flat_map(char::to_lowercase) {
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                out.push(c);
            } else if c != '\'' && !out.is_empty() && !out.ends_with('-') {
                out.push('-');
            }
            if out.len() >= MAX_SLUG_LEN - 8 {
                break;
            }
        }
        let trimmed = out.trim_matches('-');
        let slug = Slug(if trimmed.is_empty() {
            "recipe".to_owned()
        } else {
            trimmed.to_owned()
        });
        if slug.is_reserved() {
            Slug(format!("{slug}-recipe"))
        } else {
            slug
        }
    }

    /// Whether the site's own pages have this address, so that no recipe
    /// may (cooks' handles may: they live under `/cooks/`).
    pub fn is_reserved(&self) -> bool {
        RESERVED_FOR_PAGES.contains(&self.0.as_str())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name of a recipe kept here from another site (the parent of a
    /// fork across sites): its address there. No route here reaches it,
    /// since no slug has a `:`, and every link to it goes there.
    /// Unchecked: `elsewhere_checked` is for an address from elsewhere.
    pub fn elsewhere(address: &str) -> Slug {
        Slug(address.to_owned())
    }

    /// `elsewhere`, for an address written the one way this site keeps
    /// them: an http(s) URL with a host, no user and no fragment, spelled
    /// as the URL standard writes it (scheme and host in lower case, no
    /// space around it). Anything else would be a name `is_elsewhere`
    /// does not know, and no slug either.
    pub fn elsewhere_checked(address: &str) -> Result<Slug, BadSlug> {
        let bad = |why| BadSlug {
            text: address.to_owned(),
            why,
        };
        let url = url::Url::parse(address).map_err(|_| bad("it is not an address"))?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(bad("it is not a web address"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(bad("it names a user"));
        }
        if url.fragment().is_some() {
            return Err(bad("it has a fragment"));
        }
        if url.as_str() != address {
            return Err(bad("it is not written as the URL standard writes it"));
        }
        Ok(Slug::elsewhere(address))
    }

    /// Whether this names a recipe kept from another site (`elsewhere`).
    pub fn is_elsewhere(&self) -> bool {
        is_elsewhere(&self.0)
    }

    /// A slug as it was stored: parsed, or a recipe kept from elsewhere.
    pub fn stored(text: &str) -> Result<Slug, BadSlug> {
        match is_elsewhere(text) {
            true => Ok(Slug::elsewhere(text)),
            false => Slug::parse(text),
        }
    }

    /// This slug with a numeric suffix, for a fork whose slug is taken.
    pub fn with_suffix(&self, n: usize) -> Slug {
        let suffix = format!("-{n}");
        let keep = self.0.len().min(MAX_SLUG_LEN - suffix.len());
        Slug(format!("{}{suffix}", self.0[..keep].trim_end_matches('-')))
    }
}

/// Whether `slug` names a recipe kept from another site: an address, as
/// no slug can be.
pub fn is_elsewhere(slug: &str) -> bool {
    slug.starts_with("https://") || slug.starts_with("http://")
}

impl fmt::Display for Slug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_slugs_parse_and_bad_ones_say_why() {
        assert_eq!(
            Slug::parse("green-shakshuka-2").unwrap().as_str(),
            "green-shakshuka-2"
        );
        for bad in [
            "",
            "Green",
            "a--b",
            "-a",
            "a-",
            "a b",
            "ä",
            &"x".repeat(81),
            "../etc",
        ] {
            assert!(Slug::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn only_an_address_written_the_one_way_names_a_recipe_from_elsewhere() {
        let kept = Slug::elsewhere_checked("https://a.example/recipes/soup").unwrap();
        assert!(kept.is_elsewhere());
        for bad in [
            "HTTPS://a.example/recipes/soup",
            " https://a.example/recipes/soup",
            "https://A.example/recipes/soup",
            "https://a.example@evil.example/r",
            "https://a.example/r#x",
            "ftp://a.example/r",
            "javascript:alert(1)",
            "soup",
        ] {
            assert!(Slug::elsewhere_checked(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn titles_become_slugs() {
        assert_eq!(
            Slug::from_title("Green Shakshuka, with Feta!").as_str(),
            "green-shakshuka-with-feta"
        );
        // Any language, spelled in ASCII (issue 31).
        for (title, slug) in [
            ("  Crème brûlée  ", "creme-brulee"),
            ("Smørrebrød", "smorrebrod"),
            ("Nonna's ragù", "nonnas-ragu"),
            ("Nonna’s ragù", "nonnas-ragu"),
            ("Crêpes Suzette / flambées", "crepes-suzette-flambees"),
            (
                "Pierogi z kapustą i grzybami",
                "pierogi-z-kapusta-i-grzybami",
            ),
            ("Борщ", "borshch"),
            ("Μουσακάς", "mousakas"),
            ("親子丼", "qin-zi-jing"), // Mandarin readings: deunicode has no Japanese
            ("Phở bò", "pho-bo"),
        ] {
            assert_eq!(Slug::from_title(title).as_str(), slug, "{title}");
        }
        assert_eq!(Slug::from_title("!!!").as_str(), "recipe");
        // `/recipes/new` is the new-recipe form.
        assert_eq!(Slug::from_title("New!").as_str(), "new-recipe");
        assert!(!Slug::from_title("New!").is_reserved());
        assert!(Slug::parse("new").unwrap().is_reserved());
        assert!(Slug::parse(Slug::from_title(&"long title ".repeat(30)).as_str()).is_ok());
    }

    #[test]
    fn suffixes_keep_slugs_valid() {
        let long = Slug::parse(&"a".repeat(80)).unwrap();
        assert!(Slug::parse(long.with_suffix(12).as_str()).is_ok());
        assert_eq!(Slug::parse("dal").unwrap().with_suffix(2).as_str(), "dal-2");
    }
}
