//! Lines of running text: bold words followed by `<br>`-parted lines
//! (old Blogger posts), a paragraph's lines, and steps' numbers.

use scraper::ElementRef;

use super::super::element::{squeezed, text_of, MAX_ITEMS, MAX_TEXT_BYTES, MAX_TEXT_NODES};
use super::super::text::{clipped_bytes, is_step_label};
use super::{heads_a_part, is_group_label, Part};

/// A line of running text, or the gap of an empty line.
enum Line {
    Text(String),
    Gap,
}

/// The lines that follow bold words in their block, up to the block's
/// end, a block inside it, or the next part's bold words: ingredients to
/// their first empty line; steps numbered line by line, or else as
/// paragraphs of lines up to a gap of two empty lines (what follows a
/// wider gap is the post again, not the method).
pub(super) fn lines_after(heading: ElementRef, part: Part) -> Option<Vec<String>> {
    let mut lines: Vec<Line> = Vec::new();
    let mut line = String::new();
    let end_line = |line: &mut String, lines: &mut Vec<Line>| {
        let text = squeezed(line);
        line.clear();
        lines.push(if text.is_empty() {
            Line::Gap
        } else {
            Line::Text(text)
        });
    };
    for node in heading.next_siblings().take(4 * MAX_ITEMS) {
        if let Some(text) = node.value().as_text() {
            if line.len() < MAX_TEXT_BYTES {
                line.push_str(clipped_bytes(text, MAX_TEXT_BYTES - line.len()));
            }
            continue;
        }
        let Some(element) = ElementRef::wrap(node) else {
            continue;
        };
        match element.value().name() {
            "br" => end_line(&mut line, &mut lines),
            "a" | "span" | "em" | "i" | "strong" | "b" | "u" | "sup" | "sub" | "small" => {
                let text = text_of(element);
                if heads_a_part(&text) {
                    break;
                }
                line.push(' ');
                line.push_str(&text);
                line.push(' ');
            }
            "img" | "wbr" => {}
            _ => break,
        }
    }
    end_line(&mut line, &mut lines);
    // The empty line the heading's own `<br>` ends is no gap.
    let texts = lines.iter().skip_while(|l| matches!(l, Line::Gap));
    let mut out: Vec<String> = Vec::new();
    match part {
        Part::Ingredients => {
            // A group's label ("For the dough:") heads its lines; an
            // empty line ends the ingredients unless a label follows it.
            let is_label =
                |line: Option<&&Line>| matches!(line, Some(Line::Text(t)) if is_group_label(t));
            let mut texts = texts.peekable();
            while let Some(line) = texts.next() {
                match line {
                    Line::Text(_) if is_label(Some(&line)) => {}
                    Line::Text(text) => out.push(text.clone()),
                    Line::Gap if is_label(texts.peek()) => {}
                    Line::Gap => break,
                }
            }
        }
        Part::Steps => out = steps_of_lines(texts),
    }
    out.retain(|t| !t.is_empty());
    out.truncate(MAX_ITEMS);
    (!out.is_empty()).then_some(out)
}

/// Steps from running lines: numbered lines while the numbers last;
/// else the paragraphs (lines between empty ones) up to a gap of two
/// empty lines, a step each, or a line each where every line ends a
/// sentence (a method written a step a line).
fn steps_of_lines<'a>(lines: impl Iterator<Item = &'a Line>) -> Vec<String> {
    let mut paragraphs: Vec<Vec<String>> = vec![Vec::new()];
    let mut gaps = 0;
    for line in lines {
        match line {
            Line::Text(text) => {
                gaps = 0;
                paragraphs
                    .last_mut()
                    .expect("a paragraph")
                    .push(text.clone());
            }
            Line::Gap => {
                gaps += 1;
                if gaps >= 2 {
                    break;
                }
                paragraphs.push(Vec::new());
            }
        }
    }
    paragraphs.retain(|p| !p.is_empty());
    let lines: Vec<&String> = paragraphs.iter().flatten().collect();
    if lines.first().is_some_and(|l| starts_numbered(l)) {
        let numbered = lines
            .into_iter()
            .take_while(|l| starts_numbered(l))
            .cloned();
        return unnumbered(numbered.collect());
    }
    let ends_sentence = |l: &&String| l.ends_with(['.', '!', '?', ')']);
    if lines.iter().all(ends_sentence) {
        return lines.into_iter().cloned().collect();
    }
    paragraphs.into_iter().map(|p| p.join(" ")).collect()
}

/// Whether a line starts with its step's number ("1. Heat", "2) Stir",
/// "3- Fold").
pub(super) fn starts_numbered(line: &str) -> bool {
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    let after = &line[digits..];
    // "1- Prepare" is numbered; "1-2 cups" and "1.5 kg" are not.
    let decimal =
        after.starts_with(['.', ',']) && after[1..].starts_with(|c: char| c.is_ascii_digit());
    (1..=3).contains(&digits)
        && !decimal
        && (after.starts_with(['.', ')', ':']) || after.starts_with("- "))
}

/// Steps without the numbers they were written with, and without a
/// step's label alone ("Step 1:") where one stands before its text.
pub(super) fn unnumbered(lines: Vec<String>) -> Vec<String> {
    lines
        .into_iter()
        .filter(|line| !is_step_label(line))
        .map(|line| {
            if starts_numbered(&line) {
                let digits = line.chars().take_while(char::is_ascii_digit).count();
                line[digits + 1..].trim().to_owned()
            } else {
                line
            }
        })
        .filter(|line| !line.is_empty())
        .collect()
}

/// A paragraph's lines, where `<br>`s part them, each as plain text.
pub(super) fn lines_of(paragraph: ElementRef) -> Vec<String> {
    let mut lines = vec![String::new()];
    let mut walked = 0;
    for node in paragraph.descendants() {
        walked += 1;
        if walked > MAX_TEXT_NODES || lines.len() > MAX_ITEMS {
            break;
        }
        if let Some(text) = node.value().as_text() {
            let line = lines.last_mut().expect("a line");
            if line.len() < MAX_TEXT_BYTES {
                line.push_str(clipped_bytes(text, MAX_TEXT_BYTES - line.len()));
                line.push(' ');
            }
        } else if node.value().as_element().is_some_and(|e| e.name() == "br") {
            lines.push(String::new());
        }
    }
    lines
        .iter()
        .map(|line| squeezed(line))
        .filter(|line| !line.is_empty())
        .collect()
}
