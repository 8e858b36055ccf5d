//! Answers as a plain-text table, for a person at a terminal.

use std::fmt::Write;

use super::QueryResult;

/// Cells longer than this are cut with an ellipsis, so one long Markdown
/// body does not push every other column off the screen.
const MAX_CELL: usize = 60;

/// The result as aligned columns under a header, then a row count.
pub fn render(result: &QueryResult) -> String {
    let cells: Vec<Vec<String>> = result
        .rows
        .iter()
        .map(|row| row.iter().map(|c| shorten(&c.to_string())).collect())
        .collect();
    let mut widths: Vec<usize> = result.columns.iter().map(|c| c.chars().count()).collect();
    for row in &cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, row: &[String]| {
        let padded: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell}{}", " ".repeat(w - cell.chars().count())))
            .collect();
        let _ = writeln!(out, "{}", padded.join(" | ").trim_end());
    };
    line(&mut out, &result.columns);
    let _ = writeln!(
        out,
        "{}",
        widths
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .join("-+-")
    );
    for row in &cells {
        line(&mut out, row);
    }
    let n = result.rows.len();
    let _ = writeln!(out, "({n} row{})", if n == 1 { "" } else { "s" });
    out
}

fn shorten(text: &str) -> String {
    if text.chars().count() <= MAX_CELL {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(MAX_CELL - 1).collect();
    cut.push('…');
    cut
}
