//! The import measured on a corpus of pages (tests/corpus): each page read
//! as a cook's import reads it, and compared with what a person reading
//! the page expects. Pages with schema.org must come in whole and right
//! (ingredient and step counts) at least 99% of the time, pages without
//! it at least 60%; the table and every miss are printed, so a failing
//! run says which pages and why.

use std::fmt;
use std::path::{Path, PathBuf};

use forkful::import::{self, ImportError};
use serde::Deserialize;

/// The share of pages with schema.org that must come in as expected.
const WITH_SCHEMA: f64 = 0.99;
/// The share of pages without it that must.
const WITHOUT_SCHEMA: f64 = 0.60;
/// The corpus the issue asked for is at least this many pages.
const AT_LEAST_PAGES: usize = 300;

/// What a person reading a page expects of it (tests/corpus/README.md).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expected {
    page: String,
    url: Option<String>,
    #[serde(default)]
    address: Option<String>,
    schema: bool,
    title: String,
    ingredients: usize,
    steps: usize,
    total_minutes: Option<u32>,
}

/// What the import made of a page.
#[derive(Debug, PartialEq)]
struct Read {
    title: String,
    ingredients: usize,
    steps: usize,
    total_minutes: Option<u32>,
    reading: &'static str,
}

/// Why a page did not come in as expected.
enum Miss {
    /// The import refused the page.
    Refused(String),
    /// The page said no address, or another than expected.
    Address(Option<String>),
    /// Read, with counts other than expected.
    Counts(Read),
}

impl fmt::Display for Miss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Miss::Refused(why) => write!(f, "refused: {why}"),
            Miss::Address(said) => write!(f, "its address read as {said:?}"),
            Miss::Counts(read) => write!(
                f,
                "read {} ingredients, {} steps from {}",
                read.ingredients, read.steps, read.reading
            ),
        }
    }
}

/// One page's outcome: as expected, or the miss.
struct Outcome {
    family: String,
    expected: Expected,
    read: Result<Read, Miss>,
}

impl Outcome {
    /// The ingredient and step counts the measure is made of.
    fn counts_right(&self) -> bool {
        matches!(&self.read, Ok(read) if read.ingredients == self.expected.ingredients
            && read.steps == self.expected.steps)
    }

    fn title_right(&self) -> bool {
        matches!(&self.read, Ok(read) if words(&read.title) == words(&self.expected.title))
    }

    fn total_right(&self) -> bool {
        matches!(&self.read, Ok(read) if read.total_minutes == self.expected.total_minutes)
    }
}

/// A title compared as a reader compares it: case and spacing aside.
fn words(title: &str) -> String {
    title
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// Every family's pages, each with its expectation.
fn families() -> Vec<(String, PathBuf, Vec<Expected>)> {
    let mut families: Vec<_> = std::fs::read_dir(corpus())
        .expect("tests/corpus is there")
        .map(|entry| entry.expect("a readable entry").path())
        .filter(|path| path.join("expected.json").is_file())
        .map(|folder| {
            let expected = std::fs::read_to_string(folder.join("expected.json")).unwrap();
            let expected: Vec<Expected> = serde_json::from_str(&expected)
                .unwrap_or_else(|e| panic!("{}: {e}", folder.display()));
            let name = folder.file_name().unwrap().to_string_lossy().into_owned();
            (name, folder, expected)
        })
        .collect();
    families.sort_by(|a, b| a.0.cmp(&b.0));
    families
}

/// The page read as a pasted page is: at the address given, else its own.
fn read_page(html: &str, expected: &Expected) -> Result<Read, Miss> {
    let url = match &expected.url {
        Some(url) => url.clone(),
        None => {
            let said = import::page_address("", html);
            if said != expected.address {
                return Err(Miss::Address(said));
            }
            said.expect("an expected address")
        }
    };
    let imported = match import::from_html(html, &url) {
        Ok(imported) => imported,
        Err(ImportError::Incomplete(partial)) => {
            // Refused as incomplete: right only where the page lacks them.
            let read = read_of(&partial.imported);
            if read.ingredients == expected.ingredients && read.steps == expected.steps {
                return Ok(read);
            }
            return Err(Miss::Refused(format!(
                "incomplete, {} ingredients and {} steps",
                read.ingredients, read.steps
            )));
        }
        Err(error) => return Err(Miss::Refused(error.to_string())),
    };
    let read = read_of(&imported);
    if read.ingredients == expected.ingredients && read.steps == expected.steps {
        Ok(read)
    } else {
        Err(Miss::Counts(read))
    }
}

fn read_of(imported: &import::Imported) -> Read {
    let content = &imported.content;
    Read {
        title: content.title().to_owned(),
        ingredients: content.ingredients().len(),
        steps: content.steps().len(),
        total_minutes: content.total().map(|minutes| minutes.get()),
        reading: imported.reading.as_str(),
    }
}

fn outcomes() -> Vec<Outcome> {
    let mut outcomes = Vec::new();
    for (family, folder, expected) in families() {
        let mut listed: Vec<&str> = expected.iter().map(|e| e.page.as_str()).collect();
        listed.sort_unstable();
        let mut present: Vec<String> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".html"))
            .collect();
        present.sort_unstable();
        assert_eq!(
            listed, present,
            "{family}: every page listed, every listed page there"
        );
        for expected in expected {
            let html = std::fs::read_to_string(folder.join(&expected.page))
                .unwrap_or_else(|e| panic!("{family}/{}: {e}", expected.page));
            let read = read_page(&html, &expected);
            outcomes.push(Outcome {
                family: family.clone(),
                expected,
                read,
            });
        }
    }
    outcomes
}

/// A share and its parts, as a table cell.
fn share(right: usize, of: usize) -> String {
    format!("{right} of {of} ({:.1}%)", percent(right, of))
}

fn percent(right: usize, of: usize) -> f64 {
    if of == 0 {
        100.0
    } else {
        100.0 * right as f64 / of as f64
    }
}

#[test]
fn the_corpus_comes_in_as_its_readers_expect() {
    let outcomes = outcomes();
    println!("| family | pages | counts as expected | title | total time |");
    println!("| --- | --- | --- | --- | --- |");
    let mut rows: Vec<(String, Vec<&Outcome>)> = Vec::new();
    for outcome in &outcomes {
        match rows
            .iter_mut()
            .find(|(family, _)| *family == outcome.family)
        {
            Some((_, pages)) => pages.push(outcome),
            None => rows.push((outcome.family.clone(), vec![outcome])),
        }
    }
    let with: Vec<&Outcome> = outcomes.iter().filter(|o| o.expected.schema).collect();
    let without: Vec<&Outcome> = outcomes.iter().filter(|o| !o.expected.schema).collect();
    rows.push(("with schema.org".to_owned(), with.clone()));
    rows.push(("without schema.org".to_owned(), without.clone()));
    for (family, pages) in &rows {
        let count = |right: fn(&Outcome) -> bool| pages.iter().filter(|o| right(o)).count();
        let read = count(Outcome::counts_right);
        println!(
            "| {family} | {} | {} | {} of {read} | {} of {read} |",
            pages.len(),
            share(read, pages.len()),
            count(Outcome::title_right),
            count(Outcome::total_right),
        );
    }
    println!();
    for outcome in &outcomes {
        let expected = &outcome.expected;
        match &outcome.read {
            Err(miss) => println!(
                "miss {}/{}: expected {} ingredients, {} steps; {miss}",
                outcome.family, expected.page, expected.ingredients, expected.steps
            ),
            Ok(read) if !outcome.title_right() || !outcome.total_right() => println!(
                "near {}/{}: title {:?} (expected {:?}), total {:?} (expected {:?})",
                outcome.family,
                expected.page,
                read.title,
                expected.title,
                read.total_minutes,
                expected.total_minutes
            ),
            Ok(_) => {}
        }
    }
    let right = |pages: &[&Outcome]| pages.iter().filter(|o| o.counts_right()).count();
    let (with_right, without_right) = (right(&with), right(&without));
    assert!(
        outcomes.len() >= AT_LEAST_PAGES,
        "the corpus has {} pages, fewer than {AT_LEAST_PAGES}",
        outcomes.len()
    );
    assert!(
        !with.is_empty() && !without.is_empty(),
        "pages of both kinds"
    );
    assert!(
        percent(with_right, with.len()) >= 100.0 * WITH_SCHEMA,
        "pages with schema.org: {}, fewer than {}%",
        share(with_right, with.len()),
        100.0 * WITH_SCHEMA
    );
    assert!(
        percent(without_right, without.len()) >= 100.0 * WITHOUT_SCHEMA,
        "pages without schema.org: {}, fewer than {}%",
        share(without_right, without.len()),
        100.0 * WITHOUT_SCHEMA
    );
}
