//! A small reader and printer for EDN (extensible data notation).
//!
//! EDN is the one textual syntax forkful reads and writes: pull patterns,
//! datalog queries, the export file format and the seed files are all
//! written in it, so this module sits beside `store` and `seed`, not inside
//! either. It turns text into an [`Edn`] tree ([`parse`], [`parse_all`])
//! and prints a tree back as canonical EDN (the [`std::fmt::Display`]
//! impl), such that printing and re-reading gives an equal value. It knows
//! nothing about what the forms mean; giving them meaning is up to the
//! query, pull and seed code, which can ask for a [`Node`] tree instead
//! ([`parse_node`], [`parse_nodes`]) when it needs to say where in the text
//! a form it rejects was written.
//!
//! Hand-written, on purpose: query, pull and seed-file errors point at the
//! line and column of the form at fault, so every form keeps its position,
//! and maps and sets keep their source order. Of the EDN crates (looked at
//! 2026-12), edn-format returns values without positions; clojure-reader
//! (0.6) keeps a span per form only behind its `unstable` feature, outside
//! its semver promise; and mentat_edn's `ValueAndSpan` keeps byte spans but
//! holds maps and sets in `BTreeMap`s and `BTreeSet`s (source order lost)
//! and reads `#inst` and `#uuid` itself, through chrono, where the store has
//! rules of its own for both.
//!
//! Deliberate limits: character literals (`\c`) and the `N`/`M` number
//! suffixes are rejected rather than approximated, duplicate map keys and set
//! elements are not detected (maps and sets are kept as source-ordered
//! vectors), and nesting is capped at [`MAX_DEPTH`] so that hostile input
//! gets an error instead of overflowing the stack.

use std::fmt::{self, Write as _};

/// How deeply forms may nest. Real patterns and queries stay in single
/// digits; the cap exists because the reader is recursive and reads text
/// that comes from users, where `[[[[...` must not be able to crash the
/// process. It is kept small enough to be safe on a 2 MiB thread stack in an
/// unoptimised build.
pub const MAX_DEPTH: usize = 128;

/// One EDN value.
///
/// Maps and sets keep their elements in source order, as vectors, because
/// `f64` has no total order or hash and because callers such as the pull
/// pattern parser care about the order in which the user wrote things.
#[derive(Debug, Clone, PartialEq)]
pub enum Edn {
    /// `nil`
    Nil,
    /// `true` or `false`
    Bool(bool),
    /// An integer that fits in 64 bits, e.g. `42` or `-5`.
    Int(i64),
    /// A floating-point number, e.g. `1.5`, `1e10`, or `##NaN`.
    Float(f64),
    /// A string, with its escapes already decoded.
    String(String),
    /// A keyword, stored WITHOUT its leading colon: `:recipe/slug` is
    /// `Keyword("recipe/slug")`.
    Keyword(String),
    /// A symbol such as `?e`, `_`, `count` or `str/includes?`.
    Symbol(String),
    /// `[a b c]`
    Vector(Vec<Edn>),
    /// `(a b c)`
    List(Vec<Edn>),
    /// `{k1 v1 k2 v2}`, as key/value pairs in source order.
    Map(Vec<(Edn, Edn)>),
    /// `#{a b c}`, in source order.
    Set(Vec<Edn>),
    /// A tagged form `#tag form`, e.g. `#inst "2026-01-01T00:00:00Z"`; the
    /// tag is stored without its `#`.
    Tagged(String, Box<Edn>),
}

/// Why some text is not valid EDN, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Byte offset into the text.
    pub offset: usize,
    /// 1-based line number.
    pub line: usize,
    /// 1-based column, counted in characters (not bytes) so that it matches
    /// what an editor shows.
    pub column: usize,
    /// What went wrong, for a human.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl std::error::Error for ParseError {}

/// A form with where it starts in the text, and its sub-forms likewise, for
/// callers that must point at the form they reject ("line 3, column 12:
/// unknown attribute :recipe/colour").
///
/// Each node holds its whole form as an [`Edn`] as well as its children, so
/// a node tree costs a copy of each form per level it is nested in; that is
/// nothing for a query, but [`parse`] is the one to use for bulk data.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The whole form, as [`parse`] would return it.
    pub edn: Edn,
    /// Byte offset of the form's first char (the `#` of `#{`, `##NaN` or a
    /// tag).
    pub offset: usize,
    /// 1-based line, as in [`ParseError`].
    pub line: usize,
    /// 1-based column, counted in chars, as in [`ParseError`].
    pub column: usize,
    /// The direct sub-forms, in source order: the elements of a vector,
    /// list or set; `k1, v1, k2, v2, ...` for a map; the one inner form for
    /// a tagged form; none for anything else. `#_`-discarded forms are not
    /// included.
    pub children: Vec<Node>,
}

impl Node {
    /// Where the form starts, as `"line L, column C"`: the same wording as
    /// a [`ParseError`], so that semantic errors read like syntax errors.
    #[must_use]
    pub fn position(&self) -> String {
        format!("line {}, column {}", self.line, self.column)
    }
}

/// Like [`parse`], but keeps where each form starts.
///
/// # Errors
///
/// Exactly those of [`parse`].
pub fn parse_node(text: &str) -> Result<Node, ParseError> {
    let mut reader = Reader::new(text);
    reader.spans = Some(Vec::new());
    let form = read_one(&mut reader)?;
    let mut spans = reader.spans.take().unwrap_or_default().into_iter();
    Ok(build_node(form, &mut spans))
}

/// Like [`parse_all`], but keeps where each form starts.
///
/// # Errors
///
/// Exactly those of [`parse_all`].
pub fn parse_nodes(text: &str) -> Result<Vec<Node>, ParseError> {
    let mut reader = Reader::new(text);
    reader.spans = Some(Vec::new());
    let forms = read_all(&mut reader)?;
    let mut spans = reader.spans.take().unwrap_or_default().into_iter();
    Ok(forms
        .into_iter()
        .map(|form| build_node(form, &mut spans))
        .collect())
}

/// Where a form starts, as the reader records it for [`parse_node`].
#[derive(Debug, Clone, Copy)]
struct Span {
    offset: usize,
    line: usize,
    column: usize,
}

/// Pairs a form read with spans on with the spans the reader recorded,
/// which are one per form in pre-order (a form, then its children in source
/// order, map keys before their values), so the tree is rebuilt without
/// looking at the text again. Recursion is bounded by [`MAX_DEPTH`], since
/// the form came from the reader.
fn build_node(edn: Edn, spans: &mut std::vec::IntoIter<Span>) -> Node {
    let span = spans.next();
    debug_assert!(span.is_some(), "the reader records a span per form");
    let Span {
        offset,
        line,
        column,
    } = span.unwrap_or(Span {
        offset: 0,
        line: 1,
        column: 1,
    });
    let mut child = |form: &Edn| build_node(form.clone(), spans);
    let children = match &edn {
        Edn::Vector(items) | Edn::List(items) | Edn::Set(items) => {
            items.iter().map(&mut child).collect()
        }
        Edn::Map(pairs) => pairs
            .iter()
            .flat_map(|(key, value)| [key, value])
            .map(&mut child)
            .collect(),
        Edn::Tagged(_, inner) => vec![child(inner)],
        _ => Vec::new(),
    };
    Node {
        edn,
        offset,
        line,
        column,
        children,
    }
}

/// Reads exactly one form from `text`.
///
/// Surrounding whitespace, commas, comments and `#_` discards are allowed;
/// empty input or a second form is an error, so that a typo like
/// `[:a] :b` is not silently truncated.
///
/// # Errors
///
/// A [`ParseError`] locating the first problem: no form, a second form, or
/// anything the reader rejects inside the form.
pub fn parse(text: &str) -> Result<Edn, ParseError> {
    read_one(&mut Reader::new(text))
}

/// Reads every form in `text`, in order; empty input gives an empty vector.
///
/// # Errors
///
/// A [`ParseError`] locating the first malformed form; the forms before it
/// are not returned, since a half-read export file is not worth trusting.
pub fn parse_all(text: &str) -> Result<Vec<Edn>, ParseError> {
    read_all(&mut Reader::new(text))
}

fn read_one(reader: &mut Reader<'_>) -> Result<Edn, ParseError> {
    reader.skip_ignorable()?;
    if reader.at_end() {
        return Err(reader.error_at(reader.pos, "expected a form but found end of input"));
    }
    let form = reader.read_form()?;
    reader.skip_ignorable()?;
    match reader.peek() {
        None => Ok(form),
        Some(c) if is_closing(c) => Err(reader.unexpected_closing(c)),
        Some(_) => Err(reader.error_at(
            reader.pos,
            "expected end of input after the form, found another form",
        )),
    }
}

fn read_all(reader: &mut Reader<'_>) -> Result<Vec<Edn>, ParseError> {
    let mut forms = Vec::new();
    loop {
        reader.skip_ignorable()?;
        match reader.peek() {
            None => return Ok(forms),
            Some(c) if is_closing(c) => return Err(reader.unexpected_closing(c)),
            Some(_) => forms.push(reader.read_form()?),
        }
    }
}

/// Characters that end a token. `#` and `:` are not among them because EDN
/// allows them inside symbols (`a#`, `a:b`).
fn is_delimiter(c: char) -> bool {
    c.is_whitespace() || matches!(c, ',' | '(' | ')' | '[' | ']' | '{' | '}' | '"' | ';')
}

fn is_closing(c: char) -> bool {
    matches!(c, ')' | ']' | '}')
}

/// Characters allowed anywhere in a symbol or keyword name. Non-ASCII
/// letters are accepted so that names like `:recipe/crème` read.
fn is_name_char(c: char) -> bool {
    // A `matches!`, not `str::contains`: this runs on every char of every
    // keyword an import reads, and the scan was a fifth of reading one.
    c.is_alphanumeric()
        || matches!(
            c,
            '.' | '*'
                | '+'
                | '!'
                | '-'
                | '_'
                | '?'
                | '$'
                | '%'
                | '&'
                | '='
                | '<'
                | '>'
                | '/'
                | '#'
                | ':'
                | '\''
        )
}

/// A cursor over the input. Positions are byte offsets that always sit on a
/// char boundary; line and column are only worked out when an error is
/// built, since errors are rare and counting on every char is not free, or
/// when `spans` asks for them.
struct Reader<'a> {
    text: &'a str,
    pos: usize,
    depth: usize,
    /// `Some` for [`parse_node`]: where each form read starts, in pre-order,
    /// leaving out discarded forms.
    spans: Option<Vec<Span>>,
    /// The last span recorded, from which the next one is counted on, so
    /// that recording is linear in the text rather than quadratic.
    last_span: Span,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Self {
        Reader {
            text,
            pos: 0,
            depth: 0,
            spans: None,
            last_span: Span {
                offset: 0,
                line: 1,
                column: 1,
            },
        }
    }

    /// Records that a form starts at `offset`, if spans are wanted. Forms
    /// start in increasing order, so only the text since the last one needs
    /// counting.
    fn record_span(&mut self, offset: usize) {
        if self.spans.is_none() {
            return;
        }
        let last = self.last_span;
        let span = if offset < last.offset {
            // Not reached, since forms are read in order; kept correct anyway.
            let (line, column) = self.line_column(offset);
            Span {
                offset,
                line,
                column,
            }
        } else {
            let between = &self.text[last.offset..offset];
            match between.rfind('\n') {
                Some(i) => Span {
                    offset,
                    line: last.line + between.bytes().filter(|&b| b == b'\n').count(),
                    column: between[i + 1..].chars().count() + 1,
                },
                None => Span {
                    offset,
                    line: last.line,
                    column: last.column + between.chars().count(),
                },
            }
        };
        if let Some(spans) = &mut self.spans {
            spans.push(span);
        }
        self.last_span = span;
    }

    fn at_end(&self) -> bool {
        self.pos >= self.text.len()
    }

    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn peek_second(&self) -> Option<char> {
        self.text[self.pos..].chars().nth(1)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    /// True at end of input or before a closing delimiter: the places where
    /// something that needs a following form (`#_`, a tag) has none.
    fn no_form_next(&self) -> bool {
        match self.peek() {
            None => true,
            Some(c) => is_closing(c),
        }
    }

    fn line_column(&self, offset: usize) -> (usize, usize) {
        let before = &self.text[..offset];
        let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, before[line_start..].chars().count() + 1)
    }

    fn error_at(&self, offset: usize, message: impl Into<String>) -> ParseError {
        let (line, column) = self.line_column(offset);
        ParseError {
            offset,
            line,
            column,
            message: message.into(),
        }
    }

    fn unexpected_closing(&self, c: char) -> ParseError {
        self.error_at(
            self.pos,
            format!("unexpected closing delimiter '{c}' with nothing open"),
        )
    }

    /// Guards every recursive step, including the ones `#_` and tags take
    /// without opening a collection (`#_ #_ #_ ...` recurses too).
    fn descend(&mut self, at: usize) -> Result<(), ParseError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error_at(at, format!("forms nest deeper than {MAX_DEPTH} levels")));
        }
        self.depth += 1;
        Ok(())
    }

    /// Skips whitespace, commas, comments and `#_`-discarded forms, so that
    /// every caller sees either the start of a real form, a closing
    /// delimiter, or the end of input.
    fn skip_ignorable(&mut self) -> Result<(), ParseError> {
        while let Some(c) = self.peek() {
            if c.is_whitespace() || c == ',' {
                self.bump();
            } else if c == ';' {
                self.pos = self.text[self.pos..]
                    .find('\n')
                    .map_or(self.text.len(), |i| self.pos + i + 1);
            } else if c == '#' && self.peek_second() == Some('_') {
                let start = self.pos;
                self.pos += 2;
                self.descend(start)?;
                // Skipping first lets `#_ #_ a b` discard both a and b, as
                // Clojure does: the inner `#_` eats `a`, the outer one `b`.
                self.skip_ignorable()?;
                if self.no_form_next() {
                    return Err(self.error_at(start, "#_ must be followed by a form to discard"));
                }
                let spans_before = self.spans.as_ref().map(Vec::len);
                self.read_form()?;
                if let (Some(spans), Some(len)) = (&mut self.spans, spans_before) {
                    spans.truncate(len);
                }
                self.depth -= 1;
            } else {
                break;
            }
        }
        Ok(())
    }

    /// Reads one form. Callers have already established (via
    /// `skip_ignorable`) that a form, not a closer or end of input, is next;
    /// the checks here only keep the reader honest if that ever changes.
    fn read_form(&mut self) -> Result<Edn, ParseError> {
        self.skip_ignorable()?;
        let start = self.pos;
        self.descend(start)?;
        self.record_span(start);
        let form = self.read_form_at(start);
        self.depth -= 1;
        form
    }

    fn read_form_at(&mut self, start: usize) -> Result<Edn, ParseError> {
        let Some(c) = self.peek() else {
            return Err(self.error_at(start, "expected a form but found end of input"));
        };
        match c {
            '(' => self.read_items(start, ')', "list").map(Edn::List),
            '[' => self.read_items(start, ']', "vector").map(Edn::Vector),
            '{' => self.read_map(start),
            ')' | ']' | '}' => Err(self.unexpected_closing(c)),
            '"' => self.read_string().map(Edn::String),
            ':' => self.read_keyword(),
            '#' => self.read_dispatch(start),
            '\\' => Err(self.error_at(start, "character literals (\\c) are not supported")),
            _ => self.read_atom(),
        }
    }

    /// Reads the elements of a collection whose opening delimiter is the
    /// next char. `start` is where the collection began (the `#` of `#{`),
    /// which is where an unterminated-collection error points: the end of
    /// the file is useless for finding a missing bracket.
    fn read_items(
        &mut self,
        start: usize,
        close: char,
        what: &str,
    ) -> Result<Vec<Edn>, ParseError> {
        self.bump();
        let mut items = Vec::new();
        loop {
            self.skip_ignorable()?;
            match self.peek() {
                None => {
                    return Err(self.error_at(
                        start,
                        format!("unterminated {what}: no closing '{close}' before end of input"),
                    ))
                }
                Some(c) if c == close => {
                    self.bump();
                    return Ok(items);
                }
                Some(c) if is_closing(c) => {
                    let (line, column) = self.line_column(start);
                    return Err(self.error_at(
                        self.pos,
                        format!(
                            "unexpected closing delimiter '{c}': the {what} opened at line {line}, \
                             column {column} must be closed with '{close}'"
                        ),
                    ));
                }
                Some(_) => items.push(self.read_form()?),
            }
        }
    }

    fn read_map(&mut self, start: usize) -> Result<Edn, ParseError> {
        let items = self.read_items(start, '}', "map")?;
        if items.len() % 2 != 0 {
            return Err(self.error_at(
                start,
                format!(
                    "map has an odd number of forms ({}): every key needs a value",
                    items.len()
                ),
            ));
        }
        let mut pairs = Vec::with_capacity(items.len() / 2);
        let mut items = items.into_iter();
        while let (Some(key), Some(value)) = (items.next(), items.next()) {
            pairs.push((key, value));
        }
        Ok(Edn::Map(pairs))
    }

    fn read_string(&mut self) -> Result<String, ParseError> {
        let start = self.pos;
        self.bump();
        let unterminated = |reader: &Self| {
            reader.error_at(
                start,
                "unterminated string: no closing '\"' before end of input",
            )
        };
        let mut out = String::new();
        loop {
            // Copy runs of ordinary chars in one go; only quotes and
            // backslashes need attention.
            let rest = &self.text[self.pos..];
            let run = rest.find(['"', '\\']).unwrap_or(rest.len());
            out.push_str(&rest[..run]);
            self.pos += run;
            match self.bump() {
                None => return Err(unterminated(self)),
                Some('"') => return Ok(out),
                Some(_backslash) => {
                    let escape_at = self.pos - 1;
                    match self.bump() {
                        None => return Err(unterminated(self)),
                        Some('"') => out.push('"'),
                        Some('\\') => out.push('\\'),
                        Some('n') => out.push('\n'),
                        Some('t') => out.push('\t'),
                        Some('r') => out.push('\r'),
                        Some('u') => out.push(self.read_unicode_escape(escape_at)?),
                        Some(other) => {
                            return Err(self.error_at(
                                escape_at,
                                format!(
                                    "bad escape '\\{other}' in string \
                                     (expected \\\", \\\\, \\n, \\t, \\r or \\uXXXX)"
                                ),
                            ))
                        }
                    }
                }
            }
        }
    }

    /// Decodes the `XXXX` of `\uXXXX`. Surrogate pairs (`\uD83D\uDE00`),
    /// as written by JSON encoders, are combined; a lone surrogate is not a
    /// char and is an error.
    fn read_unicode_escape(&mut self, escape_at: usize) -> Result<char, ParseError> {
        let unit = self.read_hex4(escape_at)?;
        let code = match unit {
            0xD800..=0xDBFF => {
                let low_at = self.pos;
                let low = if self.text[self.pos..].starts_with("\\u") {
                    self.pos += 2;
                    self.read_hex4(low_at)?
                } else {
                    0
                };
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return Err(self.error_at(
                        escape_at,
                        format!(
                            "bad escape '\\u{unit:04X}': a high surrogate must be followed \
                             by a low one"
                        ),
                    ));
                }
                0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
            }
            0xDC00..=0xDFFF => {
                return Err(self.error_at(
                    escape_at,
                    format!("bad escape '\\u{unit:04X}': unpaired low surrogate"),
                ))
            }
            _ => unit,
        };
        // Cannot fail: surrogates were handled above and the range is valid.
        char::from_u32(code).ok_or_else(|| self.error_at(escape_at, "bad escape: not a character"))
    }

    fn read_hex4(&mut self, escape_at: usize) -> Result<u32, ParseError> {
        let hex = self
            .text
            .as_bytes()
            .get(self.pos..self.pos + 4)
            .filter(|digits| digits.iter().all(u8::is_ascii_hexdigit));
        let Some(hex) = hex else {
            return Err(self.error_at(
                escape_at,
                "bad escape: \\u must be followed by four hex digits",
            ));
        };
        let value = hex.iter().fold(0, |acc, &d| {
            acc * 16 + (d as char).to_digit(16).unwrap_or(0)
        });
        self.pos += 4;
        Ok(value)
    }

    fn read_token(&mut self) -> &'a str {
        let start = self.pos;
        // Byte by byte while the text is ASCII (an import's numbers and
        // keywords nearly always are): decoding a char per step was a
        // tenth of reading an export (perf). At the first non-ASCII byte
        // `pos` is still on a char boundary, and the loop below goes on.
        let bytes = self.text.as_bytes();
        while let Some(&b) = bytes.get(self.pos) {
            if !b.is_ascii() {
                break;
            }
            if is_delimiter(char::from(b)) {
                return &self.text[start..self.pos];
            }
            self.pos += 1;
        }
        while let Some(c) = self.peek() {
            if is_delimiter(c) {
                break;
            }
            self.bump();
        }
        &self.text[start..self.pos]
    }

    fn read_keyword(&mut self) -> Result<Edn, ParseError> {
        let start = self.pos;
        self.bump();
        let name = self.read_token();
        if name.is_empty() {
            return Err(self.error_at(start, "a keyword needs a name after ':'"));
        }
        if name.starts_with(':') {
            return Err(self.error_at(start, "auto-resolved keywords (::name) are not supported"));
        }
        self.check_name(start + 1, name, "keyword")?;
        Ok(Edn::Keyword(name.to_string()))
    }

    /// Everything that starts with `#` except `#_`, which is whitespace to
    /// the reader and handled by `skip_ignorable`.
    fn read_dispatch(&mut self, start: usize) -> Result<Edn, ParseError> {
        match self.peek_second() {
            Some('{') => {
                self.pos += 1;
                self.read_items(start, '}', "set").map(Edn::Set)
            }
            Some('#') => {
                self.pos += 2;
                match self.read_token() {
                    "NaN" => Ok(Edn::Float(f64::NAN)),
                    "Inf" => Ok(Edn::Float(f64::INFINITY)),
                    "-Inf" => Ok(Edn::Float(f64::NEG_INFINITY)),
                    other => Err(self.error_at(
                        start,
                        format!(
                            "unknown symbolic value '##{other}' (expected ##NaN, ##Inf or ##-Inf)"
                        ),
                    )),
                }
            }
            Some(c) if c.is_alphabetic() => {
                self.pos += 1;
                let tag = self.read_token();
                self.check_name(start + 1, tag, "tag")?;
                self.skip_ignorable()?;
                if self.no_form_next() {
                    return Err(
                        self.error_at(start, format!("tag #{tag} must be followed by a form"))
                    );
                }
                let value = self.read_form()?;
                Ok(Edn::Tagged(tag.to_string(), Box::new(value)))
            }
            Some(c) => Err(self.error_at(
                start,
                format!("unexpected '#{c}' (expected #{{...}}, #_, ##NaN, ##Inf, ##-Inf or #tag)"),
            )),
            None => Err(self.error_at(start, "unexpected '#' at end of input")),
        }
    }

    /// Reads a bare token: `nil`, `true`, `false`, a number or a symbol.
    fn read_atom(&mut self) -> Result<Edn, ParseError> {
        let start = self.pos;
        let token = self.read_token();
        match token {
            "nil" => return Ok(Edn::Nil),
            "true" => return Ok(Edn::Bool(true)),
            "false" => return Ok(Edn::Bool(false)),
            _ => {}
        }
        // A sign only makes a number when a digit follows it, which is what
        // keeps `-` and `-x` symbols while `-5` is an integer.
        let mut chars = token.chars();
        let numeric = match chars.next() {
            Some(c) if c.is_ascii_digit() => true,
            Some('+' | '-') => chars.next().is_some_and(|c| c.is_ascii_digit()),
            _ => false,
        };
        if numeric {
            return self.read_number(start, token);
        }
        self.check_name(start, token, "symbol")?;
        Ok(Edn::Symbol(token.to_string()))
    }

    /// Validates a number token against the EDN grammar before handing it
    /// to Rust's parsers, which would otherwise accept things EDN does not
    /// (`inf`, `1.`) and hide typos such as `1x` behind a generic error.
    fn read_number(&self, start: usize, token: &str) -> Result<Edn, ParseError> {
        let bytes = token.as_bytes();
        let digits_from = |mut i: usize| {
            while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            i
        };
        let bad = |why: &str| self.error_at(start, format!("bad number '{token}': {why}"));

        let int_start = usize::from(matches!(bytes[0], b'+' | b'-'));
        let mut i = digits_from(int_start);
        let int_digits = &token[int_start..i];
        let mut is_float = false;
        if bytes.get(i) == Some(&b'.') {
            let frac_start = i + 1;
            i = digits_from(frac_start);
            if i == frac_start {
                return Err(bad("expected digits after the decimal point"));
            }
            is_float = true;
        }
        if matches!(bytes.get(i), Some(b'e' | b'E')) {
            let mut exp_start = i + 1;
            if matches!(bytes.get(exp_start), Some(b'+' | b'-')) {
                exp_start += 1;
            }
            i = digits_from(exp_start);
            if i == exp_start {
                return Err(bad("expected digits in the exponent"));
            }
            is_float = true;
        }
        if i != bytes.len() {
            let why = if matches!(&token[i..], "N" | "M") {
                "the N and M suffixes are not supported"
            } else {
                "unexpected characters after the digits"
            };
            return Err(bad(why));
        }
        // EDN forbids leading zeros (Clojure would read `017` as octal), so
        // reject rather than guess.
        if int_digits.len() > 1 && int_digits.starts_with('0') {
            return Err(bad("leading zeros are not allowed"));
        }
        if is_float {
            match token.parse::<f64>() {
                Ok(value) if value.is_finite() => Ok(Edn::Float(value)),
                _ => Err(self.error_at(start, format!("float '{token}' is out of range"))),
            }
        } else {
            token.parse::<i64>().map(Edn::Int).map_err(|_| {
                self.error_at(start, format!("integer '{token}' does not fit in 64 bits"))
            })
        }
    }

    /// Checks a symbol, keyword name or tag against EDN's symbol rules, so
    /// that a stray character is reported where it is instead of producing a
    /// name nobody can print back.
    fn check_name(&self, start: usize, name: &str, what: &str) -> Result<(), ParseError> {
        for (i, c) in name.char_indices() {
            let allowed = is_name_char(c) && (i > 0 || !matches!(c, '#' | ':' | '\''));
            if !allowed {
                return Err(
                    self.error_at(start + i, format!("unexpected character '{c}' in {what}"))
                );
            }
        }
        let mut chars = name.chars();
        if let (Some('.'), Some(second)) = (chars.next(), chars.next()) {
            if second.is_ascii_digit() {
                return Err(self.error_at(
                    start,
                    format!("bad number '{name}': write a digit before the decimal point"),
                ));
            }
        }
        // `/` on its own is the division symbol; otherwise a slash separates
        // a non-empty namespace from a non-empty name, once.
        if name != "/" {
            if let Some((namespace, local)) = name.split_once('/') {
                if namespace.is_empty() || local.is_empty() || local.contains('/') {
                    return Err(self.error_at(
                        start,
                        format!(
                            "bad {what} '{name}': expected one '/' between a namespace and a name"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

impl fmt::Display for Edn {
    /// Prints canonical EDN that [`parse`] reads back to an equal value
    /// (NaN aside, which is never equal to itself).
    ///
    /// Keywords, symbols and tags are printed verbatim; one built in code
    /// with characters EDN does not allow (a space, say) will not read back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Edn::Nil => f.write_str("nil"),
            Edn::Bool(b) => write!(f, "{b}"),
            Edn::Int(i) => write!(f, "{i}"),
            Edn::Float(x) => write_float(f, *x),
            Edn::String(s) => write_string(f, s),
            Edn::Keyword(k) => write!(f, ":{k}"),
            Edn::Symbol(s) => f.write_str(s),
            Edn::Vector(items) => write_items(f, "[", items, "]"),
            Edn::List(items) => write_items(f, "(", items, ")"),
            Edn::Set(items) => write_items(f, "#{", items, "}"),
            Edn::Map(pairs) => {
                f.write_char('{')?;
                for (i, (key, value)) in pairs.iter().enumerate() {
                    if i > 0 {
                        f.write_char(' ')?;
                    }
                    write!(f, "{key} {value}")?;
                }
                f.write_char('}')
            }
            Edn::Tagged(tag, value) => write!(f, "#{tag} {value}"),
        }
    }
}

fn write_items(f: &mut fmt::Formatter<'_>, open: &str, items: &[Edn], close: &str) -> fmt::Result {
    f.write_str(open)?;
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_char(' ')?;
        }
        write!(f, "{item}")?;
    }
    f.write_str(close)
}

/// `{:?}` is used because it is the shortest text that reads back to the
/// same bits and always marks the value as a float (`1.0`, `1e100`), where
/// `{}` would print `1` and the value would come back as an integer.
fn write_float(f: &mut fmt::Formatter<'_>, x: f64) -> fmt::Result {
    if x.is_nan() {
        f.write_str("##NaN")
    } else if x.is_infinite() {
        f.write_str(if x > 0.0 { "##Inf" } else { "##-Inf" })
    } else {
        write!(f, "{x:?}")
    }
}

/// Escapes what the reader requires plus every other control char, so that
/// printed values survive line-oriented tools and terminals intact.
fn write_string(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    f.write_char('"')?;
    let mut plain_from = 0;
    for (i, c) in s.char_indices() {
        let escape = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\n' => "\\n",
            '\t' => "\\t",
            '\r' => "\\r",
            c if c.is_control() => "",
            _ => continue,
        };
        f.write_str(&s[plain_from..i])?;
        if escape.is_empty() {
            // Every control char is below U+00A0, so four digits suffice.
            write!(f, "\\u{:04X}", u32::from(c))?;
        } else {
            f.write_str(escape)?;
        }
        plain_from = i + c.len_utf8();
    }
    f.write_str(&s[plain_from..])?;
    f.write_char('"')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kw(name: &str) -> Edn {
        Edn::Keyword(name.to_string())
    }

    fn sym(name: &str) -> Edn {
        Edn::Symbol(name.to_string())
    }

    fn string(text: &str) -> Edn {
        Edn::String(text.to_string())
    }

    fn error(text: &str) -> ParseError {
        parse(text).expect_err(text)
    }

    #[test]
    fn nil_true_and_false_are_literals_but_longer_words_are_symbols() {
        assert_eq!(parse("nil"), Ok(Edn::Nil));
        assert_eq!(parse("true"), Ok(Edn::Bool(true)));
        assert_eq!(parse("false"), Ok(Edn::Bool(false)));
        assert_eq!(parse("nilly"), Ok(sym("nilly")));
        assert_eq!(parse("truest"), Ok(sym("truest")));
    }

    #[test]
    fn integers_read_with_either_sign_up_to_the_i64_limits() {
        assert_eq!(parse("0"), Ok(Edn::Int(0)));
        assert_eq!(parse("42"), Ok(Edn::Int(42)));
        assert_eq!(parse("+7"), Ok(Edn::Int(7)));
        assert_eq!(parse("-0"), Ok(Edn::Int(0)));
        assert_eq!(parse("9223372036854775807"), Ok(Edn::Int(i64::MAX)));
        assert_eq!(parse("-9223372036854775808"), Ok(Edn::Int(i64::MIN)));
    }

    #[test]
    fn integer_overflow_is_an_error_rather_than_a_wrap() {
        let e = error("[1 9223372036854775808]");
        assert_eq!((e.line, e.column), (1, 4));
        assert!(e.message.contains("does not fit in 64 bits"), "{e}");
        assert!(parse("-9223372036854775809").is_err());
    }

    #[test]
    fn negative_numbers_are_ints_but_a_lone_minus_is_a_symbol() {
        assert_eq!(parse("-5"), Ok(Edn::Int(-5)));
        assert_eq!(parse("-"), Ok(sym("-")));
        assert_eq!(parse("-x"), Ok(sym("-x")));
        assert_eq!(parse("+"), Ok(sym("+")));
        assert_eq!(
            parse("(- -5 -)"),
            Ok(Edn::List(vec![sym("-"), Edn::Int(-5), sym("-")]))
        );
    }

    #[test]
    fn floats_accept_fractions_and_exponents() {
        assert_eq!(parse("1.5"), Ok(Edn::Float(1.5)));
        assert_eq!(parse("-0.25"), Ok(Edn::Float(-0.25)));
        assert_eq!(parse("1e10"), Ok(Edn::Float(1e10)));
        assert_eq!(parse("2.5E-3"), Ok(Edn::Float(2.5e-3)));
        assert_eq!(parse("+1.0e+2"), Ok(Edn::Float(100.0)));
        assert_eq!(parse("0.5"), Ok(Edn::Float(0.5)));
    }

    #[test]
    fn malformed_numbers_are_errors_not_symbols() {
        for text in [
            "1.", "1e", "1e+", "1x", "1.5.2", "007", "-01", "1N", "2.5M", ".5", "1e999",
        ] {
            let e = error(text);
            assert_eq!(e.offset, 0, "{text}: {e}");
            assert!(
                e.message.contains("bad number") || e.message.contains("out of range"),
                "{text}: {e}"
            );
        }
    }

    #[test]
    fn strings_decode_every_supported_escape() {
        assert_eq!(parse(r#""""#), Ok(string("")));
        assert_eq!(
            parse(r#""say \"hi\"\\ \n\t\r""#),
            Ok(string("say \"hi\"\\ \n\t\r"))
        );
        assert_eq!(parse(r#""cr\u00e8me""#), Ok(string("crème")));
        assert_eq!(parse(r#""\uD83D\uDE00""#), Ok(string("😀")));
        assert_eq!(parse("\"two\nlines\""), Ok(string("two\nlines")));
    }

    #[test]
    fn bad_escapes_point_at_the_backslash() {
        let e = error(r#""ok \q""#);
        assert_eq!((e.offset, e.column), (4, 5));
        assert!(e.message.contains("bad escape '\\q'"), "{e}");
        assert_eq!(error(r#""\u12""#).offset, 1);
        assert_eq!(error(r#""\u12G4""#).offset, 1);
        assert!(error(r#""\uD83D""#).message.contains("surrogate"));
        assert!(error(r#""\uDE00""#).message.contains("surrogate"));
    }

    #[test]
    fn unterminated_strings_point_at_the_opening_quote() {
        let e = error("[:a\n  \"never closed]");
        assert_eq!((e.line, e.column, e.offset), (2, 3, 6));
        assert!(e.message.starts_with("unterminated string"), "{e}");
        assert!(error(r#""ends in a backslash\"#)
            .message
            .starts_with("unterminated string"));
    }

    #[test]
    fn keywords_drop_the_colon_and_keep_every_symbol_character() {
        assert_eq!(parse(":a"), Ok(kw("a")));
        assert_eq!(parse(":recipe/slug"), Ok(kw("recipe/slug")));
        assert_eq!(parse(":recipe/_forked-from"), Ok(kw("recipe/_forked-from")));
        assert_eq!(parse(":db.type/string"), Ok(kw("db.type/string")));
        assert_eq!(parse(":str/includes?"), Ok(kw("str/includes?")));
        assert_eq!(parse(":db/id"), Ok(kw("db/id")));
    }

    #[test]
    fn malformed_keywords_are_errors() {
        assert!(error(":").message.contains("needs a name"));
        assert!(error("::auto").message.contains("auto-resolved"));
        assert!(error(":a/").message.contains("namespace"));
        assert!(error(":/a").message.contains("namespace"));
        assert_eq!(error(":a@b").offset, 2);
    }

    #[test]
    fn symbols_cover_datalog_variables_operators_and_placeholders() {
        for name in [
            "?x",
            "?recipe-id",
            "_",
            "$",
            "%",
            "count",
            "str/includes?",
            "<",
            "<=",
            "not=",
            "+",
            "-",
            ".",
            "...",
            "/",
            "a#",
            "a:b",
            "a'",
        ] {
            assert_eq!(parse(name), Ok(sym(name)), "{name}");
        }
    }

    #[test]
    fn unsupported_syntax_is_rejected_with_a_reason() {
        assert!(error(r"\a").message.contains("character literals"));
        assert!(error("@x").message.contains("unexpected character '@'"));
        assert!(error("#(inc %)").message.contains("unexpected '#('"));
        assert!(error("##Infinity")
            .message
            .contains("unknown symbolic value"));
        assert!(error("#").message.contains("end of input"));
    }

    #[test]
    fn collections_nest_and_keep_source_order() {
        let parsed = parse("[1 (2 3) {:b 1 :a 2} #{3 1 2} []]").unwrap();
        assert_eq!(
            parsed,
            Edn::Vector(vec![
                Edn::Int(1),
                Edn::List(vec![Edn::Int(2), Edn::Int(3)]),
                Edn::Map(vec![(kw("b"), Edn::Int(1)), (kw("a"), Edn::Int(2))]),
                Edn::Set(vec![Edn::Int(3), Edn::Int(1), Edn::Int(2)]),
                Edn::Vector(vec![]),
            ])
        );
        assert_eq!(parse("()"), Ok(Edn::List(vec![])));
        assert_eq!(parse("{}"), Ok(Edn::Map(vec![])));
        assert_eq!(parse("#{}"), Ok(Edn::Set(vec![])));
    }

    #[test]
    fn a_datalog_query_reads_as_nested_vectors_and_lists() {
        let query = r#"[:find ?title (count ?fork)
                        :in $ ?slug
                        :where [?r :recipe/slug ?slug]
                               [?r :recipe/title ?title]
                               [(str/includes? ?title "soup")]]"#;
        let Edn::Vector(items) = parse(query).unwrap() else {
            panic!("not a vector");
        };
        assert_eq!(items[0], kw("find"));
        assert_eq!(items[2], Edn::List(vec![sym("count"), sym("?fork")]));
        assert_eq!(
            items[9],
            Edn::Vector(vec![Edn::List(vec![
                sym("str/includes?"),
                sym("?title"),
                string("soup"),
            ])])
        );
    }

    #[test]
    fn maps_with_an_odd_number_of_forms_are_rejected_at_the_brace() {
        let e = error("[{:a 1 :b}]");
        assert_eq!(e.offset, 1);
        assert!(e.message.contains("odd number of forms (3)"), "{e}");
    }

    #[test]
    fn tagged_forms_hold_the_tag_without_its_hash() {
        assert_eq!(
            parse(r#"#inst "2026-11-30T03:29:03.123Z""#),
            Ok(Edn::Tagged(
                "inst".into(),
                Box::new(string("2026-11-30T03:29:03.123Z"))
            ))
        );
        assert_eq!(
            parse(r#"#uuid "f81d4fae-7dec-11d0-a765-00a0c91e6bf6""#),
            Ok(Edn::Tagged(
                "uuid".into(),
                Box::new(string("f81d4fae-7dec-11d0-a765-00a0c91e6bf6"))
            ))
        );
        assert_eq!(
            parse("#forkful/fact [1 :a]"),
            Ok(Edn::Tagged(
                "forkful/fact".into(),
                Box::new(Edn::Vector(vec![Edn::Int(1), kw("a")]))
            ))
        );
        assert!(error("[#inst]")
            .message
            .contains("must be followed by a form"));
    }

    #[test]
    fn commas_and_comments_are_whitespace() {
        assert_eq!(
            parse("; leading comment\n{:a 1, :b 2,} ; trailing").unwrap(),
            Edn::Map(vec![(kw("a"), Edn::Int(1)), (kw("b"), Edn::Int(2))])
        );
        assert_eq!(
            parse("[1 ; one\n 2]"),
            Ok(Edn::Vector(vec![Edn::Int(1), Edn::Int(2)]))
        );
    }

    #[test]
    fn discard_skips_the_next_form_whatever_it_is() {
        assert_eq!(
            parse("[1 #_ [2 (3)] 4 #_5]"),
            Ok(Edn::Vector(vec![Edn::Int(1), Edn::Int(4)]))
        );
        assert_eq!(parse_all("#_ #_ a b c"), Ok(vec![sym("c")]));
        assert_eq!(parse("#_ :gone :kept"), Ok(kw("kept")));
    }

    #[test]
    fn discard_without_a_form_to_discard_is_an_error() {
        let e = error("[1 #_]");
        assert_eq!(e.offset, 3);
        assert!(e.message.contains("#_ must be followed"), "{e}");
        assert!(error("#_").message.contains("#_ must be followed"));
    }

    #[test]
    fn symbolic_floats_are_read_and_printed() {
        assert!(matches!(parse("##NaN"), Ok(Edn::Float(x)) if x.is_nan()));
        assert_eq!(parse("##Inf"), Ok(Edn::Float(f64::INFINITY)));
        assert_eq!(parse("##-Inf"), Ok(Edn::Float(f64::NEG_INFINITY)));
        assert_eq!(Edn::Float(f64::NAN).to_string(), "##NaN");
        assert_eq!(Edn::Float(f64::INFINITY).to_string(), "##Inf");
        assert_eq!(Edn::Float(f64::NEG_INFINITY).to_string(), "##-Inf");
    }

    #[test]
    fn parse_wants_exactly_one_form() {
        assert!(error("").message.contains("end of input"));
        assert!(error("  ; only a comment\n")
            .message
            .contains("end of input"));
        let e = error("[:a] :b");
        assert_eq!(e.offset, 5);
        assert!(e.message.contains("another form"), "{e}");
    }

    #[test]
    fn parse_all_reads_zero_or_more_forms() {
        assert_eq!(parse_all(""), Ok(vec![]));
        assert_eq!(parse_all(" ;; nothing\n"), Ok(vec![]));
        assert_eq!(
            parse_all("1 :two \"three\"\n[4]"),
            Ok(vec![
                Edn::Int(1),
                kw("two"),
                string("three"),
                Edn::Vector(vec![Edn::Int(4)]),
            ])
        );
        assert_eq!(parse_all("1 )").unwrap_err().offset, 2);
    }

    #[test]
    fn unexpected_closing_delimiters_are_reported_where_they_appear() {
        let e = error("[1 2)");
        assert_eq!(e.offset, 4);
        assert!(
            e.message.contains("unexpected closing delimiter ')'"),
            "{e}"
        );
        assert!(e.message.contains("opened at line 1, column 1"), "{e}");
        let e = error(")");
        assert_eq!(e.offset, 0);
        assert!(e.message.contains("nothing open"), "{e}");
        assert_eq!(error("[1] ]").offset, 4);
    }

    #[test]
    fn unterminated_collections_point_at_their_opener() {
        let e = error("[:a\n (:b\n  #{1 2");
        assert_eq!((e.line, e.column), (3, 3));
        assert!(e.message.starts_with("unterminated set"), "{e}");
        assert!(error("{:a 1").message.starts_with("unterminated map"));
        assert!(error("(").message.starts_with("unterminated list"));
        assert!(error("[").message.starts_with("unterminated vector"));
    }

    #[test]
    fn columns_count_characters_and_offsets_count_bytes() {
        let e = error("[\"crème\" @]");
        assert_eq!((e.line, e.column, e.offset), (1, 10, 10));
    }

    #[test]
    fn errors_display_their_line_and_column() {
        let e = error("{:a\n 1 :b}");
        assert_eq!(
            e.to_string(),
            "line 1, column 1: map has an odd number of forms (3): every key needs a value"
        );
        let boxed: Box<dyn std::error::Error> = Box::new(e);
        assert!(boxed.to_string().starts_with("line 1"));
    }

    #[test]
    fn nesting_is_capped_instead_of_overflowing_the_stack() {
        // Run on a thread with the default test stack size, so that the cap
        // is known to be safe where the reader will really run.
        std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(|| {
                let deepest = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
                assert!(parse(&deepest).is_ok());
                let too_deep = format!("[{deepest}]");
                assert!(error(&too_deep).message.contains("nest deeper"));
                let discards = format!("{}1 2", "#_ ".repeat(MAX_DEPTH * 4));
                assert!(error(&discards).message.contains("nest deeper"));
                let tags = format!("{}1", "#t ".repeat(MAX_DEPTH * 4));
                assert!(error(&tags).message.contains("nest deeper"));
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn floats_always_print_so_they_read_back_as_floats() {
        assert_eq!(Edn::Float(1.0).to_string(), "1.0");
        assert_eq!(Edn::Float(-0.25).to_string(), "-0.25");
        for x in [
            1.0,
            0.1,
            -0.0,
            1e300,
            1e-300,
            123456789.125,
            f64::MAX,
            f64::MIN_POSITIVE,
        ] {
            assert_eq!(parse(&Edn::Float(x).to_string()), Ok(Edn::Float(x)), "{x}");
        }
    }

    #[test]
    fn printed_strings_escape_quotes_backslashes_and_control_characters() {
        let s = string("a \"b\" \\ \n\t\r \u{0}\u{1b}\u{7f}\u{85} é 😀");
        assert_eq!(
            s.to_string(),
            r#""a \"b\" \\ \n\t\r \u0000\u001B\u007F\u0085 é 😀""#
        );
        assert_eq!(parse(&s.to_string()), Ok(s));
    }

    #[test]
    fn collections_print_space_separated_with_keyword_colons() {
        let value = parse("{:a [1 2], :b #{(x y)}, :c #inst \"2026-01-01\"}").unwrap();
        assert_eq!(
            value.to_string(),
            "{:a [1 2] :b #{(x y)} :c #inst \"2026-01-01\"}"
        );
    }

    #[test]
    fn printing_then_parsing_a_nested_sample_gives_it_back() {
        let sample = Edn::Vector(vec![
            Edn::Nil,
            Edn::Bool(true),
            Edn::Bool(false),
            Edn::Int(i64::MIN),
            Edn::Int(-5),
            Edn::Float(2.5e-3),
            Edn::Float(1.0),
            Edn::Float(f64::INFINITY),
            string("line\nbreak \"quoted\" \\ \u{7}"),
            kw("recipe/_forked-from"),
            kw("db.type/string"),
            sym("?e"),
            sym("-"),
            sym("..."),
            Edn::List(vec![sym("str/includes?"), sym("?t"), string("soup")]),
            Edn::Map(vec![
                (kw("db/id"), Edn::Int(17)),
                (
                    Edn::Vector(vec![kw("recipe/slug"), string("pho")]),
                    Edn::Set(vec![Edn::Int(2), Edn::Int(1)]),
                ),
                (Edn::Nil, Edn::Map(vec![])),
            ]),
            Edn::Set(vec![]),
            Edn::Tagged("inst".into(), Box::new(string("2026-11-30T03:29:03.123Z"))),
            Edn::Tagged(
                "my/tag".into(),
                Box::new(Edn::Tagged("uuid".into(), Box::new(string("x")))),
            ),
        ]);
        let printed = sample.to_string();
        assert_eq!(parse(&printed), Ok(sample.clone()), "{printed}");
        // Printing is canonical: a second trip gives the same text.
        assert_eq!(parse(&printed).unwrap().to_string(), printed);
    }

    /// (offset, line, column) of a node, for compact assertions.
    fn at(node: &Node) -> (usize, usize, usize) {
        (node.offset, node.line, node.column)
    }

    /// Checks every node against positions worked out from scratch, and
    /// that its children are the sub-forms of its `edn`.
    fn check_tree(text: &str, node: &Node) {
        let before = &text[..node.offset];
        let line = before.matches('\n').count() + 1;
        let column = before[before.rfind('\n').map_or(0, |i| i + 1)..]
            .chars()
            .count()
            + 1;
        assert_eq!((node.line, node.column), (line, column), "{node:?}");
        // Compared as printed, since NaN is not equal to itself.
        let children: Vec<String> = node.children.iter().map(|c| c.edn.to_string()).collect();
        let expected: Vec<&Edn> = match &node.edn {
            Edn::Vector(items) | Edn::List(items) | Edn::Set(items) => items.iter().collect(),
            Edn::Map(pairs) => pairs.iter().flat_map(|(k, v)| [k, v]).collect(),
            Edn::Tagged(_, inner) => vec![inner],
            _ => vec![],
        };
        let expected: Vec<String> = expected.iter().map(ToString::to_string).collect();
        assert_eq!(children, expected);
        for child in &node.children {
            assert!(child.offset > node.offset, "{child:?} not after {node:?}");
            check_tree(text, child);
        }
    }

    const QUERY: &str =
        "[:find ?title\n :where [?r :recipe/colour \"red\"]\n        (not [?r :recipe/crème ?c])]";

    #[test]
    fn nodes_locate_nested_children_across_lines() {
        let node = parse_node(QUERY).unwrap();
        assert_eq!(at(&node), (0, 1, 1));
        let items = &node.children;
        assert_eq!(items.len(), 5);
        assert_eq!(items[0].edn, kw("find"));
        assert_eq!(at(&items[0]), (1, 1, 2));
        assert_eq!(at(&items[1]), (7, 1, 8));
        assert_eq!(at(&items[2]), (15, 2, 2));
        let clause = &items[3];
        assert_eq!((clause.line, clause.column), (2, 9));
        assert_eq!(clause.children[1].edn, kw("recipe/colour"));
        assert_eq!(clause.children[1].position(), "line 2, column 13");
        assert_eq!(clause.children[2].position(), "line 2, column 28");
        let not = &items[4];
        assert_eq!(not.position(), "line 3, column 9");
        let inner = &not.children[1];
        assert_eq!(inner.position(), "line 3, column 14");
        // Columns count chars: `crème` is one char shorter than its bytes.
        assert_eq!(inner.children[1].edn, kw("recipe/crème"));
        assert_eq!(inner.children[2].position(), "line 3, column 32");
        assert_eq!(inner.children[2].offset, 80);
        check_tree(QUERY, &node);
    }

    #[test]
    fn map_children_alternate_keys_and_values_in_source_order() {
        let node = parse_node("{:b 1,\n :a [2]}").unwrap();
        let children: Vec<(Edn, (usize, usize, usize))> = node
            .children
            .iter()
            .map(|c| (c.edn.clone(), at(c)))
            .collect();
        assert_eq!(
            children,
            vec![
                (kw("b"), (1, 1, 2)),
                (Edn::Int(1), (4, 1, 5)),
                (kw("a"), (8, 2, 2)),
                (Edn::Vector(vec![Edn::Int(2)]), (11, 2, 5)),
            ]
        );
        assert_eq!(at(&node.children[3].children[0]), (12, 2, 6));
        assert!(parse_node("{}").unwrap().children.is_empty());
    }

    #[test]
    fn a_tagged_node_has_its_form_as_its_one_child() {
        let node = parse_node("[#inst\n  \"2026-01-01\" #{1}]").unwrap();
        let tagged = &node.children[0];
        assert_eq!(
            tagged.edn,
            Edn::Tagged("inst".into(), Box::new(string("2026-01-01")))
        );
        assert_eq!(at(tagged), (1, 1, 2));
        assert_eq!(tagged.children.len(), 1);
        assert_eq!(tagged.children[0].edn, string("2026-01-01"));
        assert_eq!(at(&tagged.children[0]), (9, 2, 3));
        assert!(tagged.children[0].children.is_empty());
        // A set starts at its `#`.
        assert_eq!(at(&node.children[1]), (22, 2, 16));
        assert_eq!(at(&node.children[1].children[0]), (24, 2, 18));
    }

    #[test]
    fn discarded_forms_are_not_children() {
        let node = parse_node("[1 #_ [2 (3)] 4 #_ #_ 5 6 {#_ :x :a #_ 7 8}]").unwrap();
        let kept: Vec<(Edn, usize)> = node
            .children
            .iter()
            .map(|c| (c.edn.clone(), c.offset))
            .collect();
        assert_eq!(
            kept,
            vec![
                (Edn::Int(1), 1),
                (Edn::Int(4), 14),
                (Edn::Map(vec![(kw("a"), Edn::Int(8))]), 26),
            ]
        );
        let map = &node.children[2];
        assert_eq!(map.children.len(), 2);
        assert_eq!((map.children[0].offset, map.children[1].offset), (33, 41));
        assert_eq!(at(&parse_node("#_ :gone\n :kept").unwrap()), (10, 2, 2));
    }

    #[test]
    fn nodes_hold_what_parse_returns_and_fail_where_parse_fails() {
        for text in [
            QUERY,
            "[1 (2 3) {:b 1 :a 2} #{3 1 2} [] ##NaN ##-Inf nil true \"s\\n\" sym/x]",
            "#my/tag #uuid \"x\"",
            "; comment\n{:a\r\n [1, 2],}",
            "42",
        ] {
            let node = parse_node(text).unwrap();
            let edn = parse(text).unwrap();
            // NaN is not equal to itself, so compare printed forms.
            assert_eq!(node.edn.to_string(), edn.to_string(), "{text}");
            check_tree(text, &node);
        }
        let sample = "[1 (2 3) {:b 1 :a 2} #{3 1 2} #inst \"2026\" #_ 9 \"é\"]";
        assert_eq!(parse_node(sample).map(|n| n.edn), parse(sample));
        for bad in ["", "[1 2)", "[:a] :b", "{:a}", "[1 #_]", "\"open"] {
            assert_eq!(parse_node(bad).unwrap_err(), error(bad), "{bad}");
        }
    }

    #[test]
    fn parse_nodes_reads_zero_or_more_located_forms() {
        assert_eq!(parse_nodes(" ;; nothing\n"), Ok(vec![]));
        let text = "1 :two\n#_ 3 [4\n 5]";
        let nodes = parse_nodes(text).unwrap();
        assert_eq!(
            nodes.iter().map(|n| n.edn.clone()).collect::<Vec<_>>(),
            parse_all(text).unwrap()
        );
        let places: Vec<_> = nodes.iter().map(at).collect();
        assert_eq!(places, vec![(0, 1, 1), (2, 1, 3), (12, 2, 6)]);
        assert_eq!(at(&nodes[2].children[1]), (16, 3, 2));
        for node in &nodes {
            check_tree(text, node);
        }
        assert_eq!(
            parse_nodes("1 )").unwrap_err(),
            parse_all("1 )").unwrap_err()
        );
    }

    #[test]
    fn deeply_nested_nodes_stay_within_the_stack() {
        std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(|| {
                let deepest = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
                let mut node = &parse_node(&deepest).unwrap();
                let mut depth = 1;
                while let Some(child) = node.children.first() {
                    assert_eq!(child.column, depth + 1);
                    node = child;
                    depth += 1;
                }
                assert_eq!(depth, MAX_DEPTH);
            })
            .unwrap()
            .join()
            .unwrap();
    }
}
