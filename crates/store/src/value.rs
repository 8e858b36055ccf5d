//! Typed values: what a datom's `v` can be, and keywords.
//!
//! Every value carries its type. A keyword is a value of its own type, never a
//! bare string, so `:db.type/string` and `"db.type/string"` are different
//! facts. Doubles are totally ordered (by IEEE `totalOrder`); NaN is refused
//! at the edge of a transaction because it equals nothing.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

/// The genesis transaction, which installs the bootstrap attributes. Ids below
/// it are reserved for the store's own entities; user ids start after it.
pub(crate) const GENESIS_TX: EntityId = 32;

/// A keyword's text is malformed.
#[derive(Debug, Clone, thiserror::Error)]
#[error("bad keyword {text:?}: {why}")]
pub struct BadKeyword {
    pub text: String,
    pub why: String,
}

/// An entity id. Attributes, transactions and user entities share one space.
pub type EntityId = u64;

/// A keyword such as `:recipe/slug`: an optional namespace and a name.
///
/// Stored without its leading colon. Cheap to clone (the text is shared).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Keyword(Arc<str>);

impl Keyword {
    /// Parses `:ns/name`, `ns/name` or `name`; the text must be non-empty and
    /// have no whitespace, and a namespace and a name must both be non-empty.
    pub fn parse(text: &str) -> Result<Keyword, BadKeyword> {
        let body = text.strip_prefix(':').unwrap_or(text);
        let bad = |why: &str| BadKeyword {
            text: text.to_owned(),
            why: why.to_owned(),
        };
        if body.is_empty() {
            return Err(bad("it is empty"));
        }
        if body.chars().any(|c| {
            c.is_whitespace()
                || matches!(
                    c,
                    '(' | ')' | '[' | ']' | '{' | '}' | '"' | '\'' | ',' | ';'
                )
        }) {
            return Err(bad("it contains whitespace or a delimiter"));
        }
        if let Some((ns, name)) = body.split_once('/') {
            if ns.is_empty() || name.is_empty() {
                return Err(bad("its namespace and name must both be non-empty"));
            }
        }
        Ok(Keyword(Arc::from(body)))
    }

    /// The text without the colon: `recipe/slug`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The namespace, if any: `recipe` for `:recipe/slug`.
    pub fn namespace(&self) -> Option<&str> {
        self.0.split_once('/').map(|(ns, _)| ns)
    }

    /// The name: `slug` for `:recipe/slug`.
    pub fn name(&self) -> &str {
        self.0.split_once('/').map_or(&self.0, |(_, name)| name)
    }

    /// For a reverse reference such as `:recipe/_forked-from`, the forward
    /// attribute `:recipe/forked-from`.
    pub fn reversed(&self) -> Option<Keyword> {
        let (ns, name) = self.0.split_once('/')?;
        let forward = name.strip_prefix('_')?;
        (!forward.is_empty()).then(|| Keyword(Arc::from(format!("{ns}/{forward}"))))
    }
}

/// A keyword literal known to be well formed, for the store's own idents.
///
/// Panics on a malformed literal, which is a bug in the caller's source.
pub fn kw(text: &str) -> Keyword {
    Keyword::parse(text).unwrap_or_else(|e| panic!("bad keyword literal {text:?}: {e}"))
}

impl fmt::Display for Keyword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, ":{}", self.0)
    }
}

impl fmt::Debug for Keyword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, ":{}", self.0)
    }
}

/// The type of an attribute's values (`:db/valueType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ValueType {
    Ref,
    String,
    Long,
    Double,
    Boolean,
    Instant,
    Keyword,
    Uuid,
}

impl ValueType {
    pub const ALL: [ValueType; 8] = [
        ValueType::Ref,
        ValueType::String,
        ValueType::Long,
        ValueType::Double,
        ValueType::Boolean,
        ValueType::Instant,
        ValueType::Keyword,
        ValueType::Uuid,
    ];

    /// The ident that names this type in the schema, e.g. `:db.type/string`.
    pub fn ident(self) -> &'static str {
        match self {
            ValueType::Ref => "db.type/ref",
            ValueType::String => "db.type/string",
            ValueType::Long => "db.type/long",
            ValueType::Double => "db.type/double",
            ValueType::Boolean => "db.type/boolean",
            ValueType::Instant => "db.type/instant",
            ValueType::Keyword => "db.type/keyword",
            ValueType::Uuid => "db.type/uuid",
        }
    }

    /// The type named by an ident such as `:db.type/long`.
    pub fn from_ident(ident: &Keyword) -> Option<ValueType> {
        ValueType::ALL
            .into_iter()
            .find(|t| t.ident() == ident.as_str())
    }
}

/// A value in a datom.
#[derive(Clone)]
pub enum Value {
    /// A reference to an entity.
    Ref(EntityId),
    String(Arc<str>),
    Long(i64),
    Double(f64),
    Boolean(bool),
    /// Milliseconds since the Unix epoch, UTC.
    Instant(i64),
    Keyword(Keyword),
    Uuid([u8; 16]),
}

impl Value {
    pub fn value_type(&self) -> ValueType {
        match self {
            Value::Ref(_) => ValueType::Ref,
            Value::String(_) => ValueType::String,
            Value::Long(_) => ValueType::Long,
            Value::Double(_) => ValueType::Double,
            Value::Boolean(_) => ValueType::Boolean,
            Value::Instant(_) => ValueType::Instant,
            Value::Keyword(_) => ValueType::Keyword,
            Value::Uuid(_) => ValueType::Uuid,
        }
    }

    pub fn string(text: impl AsRef<str>) -> Value {
        Value::String(Arc::from(text.as_ref()))
    }

    pub fn as_ref(&self) -> Option<EntityId> {
        match self {
            Value::Ref(e) => Some(*e),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// About how many bytes the value takes in a key: a string's or a
    /// keyword's length, eight for anything else. What `MAX_TX_BYTES` counts.
    pub fn stored_len(&self) -> usize {
        match self {
            Value::String(s) => s.len(),
            Value::Keyword(k) => k.as_str().len(),
            Value::Uuid(_) => 16,
            _ => 8,
        }
    }

    /// The string, shared: a copy of the handle, not of the text.
    pub fn as_shared_str(&self) -> Option<&Arc<str>> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_long(&self) -> Option<i64> {
        match self {
            Value::Long(n) => Some(*n),
            _ => None,
        }
    }

    pub fn as_double(&self) -> Option<f64> {
        match self {
            Value::Double(x) => Some(*x),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Boolean(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_instant(&self) -> Option<i64> {
        match self {
            Value::Instant(ms) => Some(*ms),
            _ => None,
        }
    }

    pub fn as_keyword(&self) -> Option<&Keyword> {
        match self {
            Value::Keyword(k) => Some(k),
            _ => None,
        }
    }

    /// The order of types among themselves, the same as the encoding's tags.
    fn type_rank(&self) -> u8 {
        self.value_type() as u8
    }
}

impl From<&str> for Value {
    fn from(text: &str) -> Value {
        Value::string(text)
    }
}

impl From<String> for Value {
    fn from(text: String) -> Value {
        Value::String(Arc::from(text))
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Value {
        Value::Long(n)
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Value {
        Value::Double(x)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Boolean(b)
    }
}

impl From<Keyword> for Value {
    fn from(k: Keyword) -> Value {
        Value::Keyword(k)
    }
}

/// Values order first by type, then within a type: numbers numerically
/// (doubles by IEEE total order, so -0.0 < 0.0), strings and keywords by their
/// UTF-8 bytes, booleans false first, uuids by bytes. This is exactly the
/// order of their index encodings (see `encoding`), which property tests check.
impl Ord for Value {
    fn cmp(&self, other: &Value) -> Ordering {
        match (self, other) {
            (Value::Ref(a), Value::Ref(b)) => a.cmp(b),
            (Value::String(a), Value::String(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Value::Long(a), Value::Long(b)) => a.cmp(b),
            (Value::Double(a), Value::Double(b)) => a.total_cmp(b),
            (Value::Boolean(a), Value::Boolean(b)) => a.cmp(b),
            (Value::Instant(a), Value::Instant(b)) => a.cmp(b),
            (Value::Keyword(a), Value::Keyword(b)) => {
                a.as_str().as_bytes().cmp(b.as_str().as_bytes())
            }
            (Value::Uuid(a), Value::Uuid(b)) => a.cmp(b),
            _ => self.type_rank().cmp(&other.type_rank()),
        }
    }
}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Value) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Value {}

impl std::hash::Hash for Value {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.type_rank().hash(state);
        match self {
            Value::Ref(e) => e.hash(state),
            Value::String(s) => s.hash(state),
            Value::Long(n) | Value::Instant(n) => n.hash(state),
            Value::Double(x) => x.to_bits().hash(state),
            Value::Boolean(b) => b.hash(state),
            Value::Keyword(k) => k.hash(state),
            Value::Uuid(u) => u.hash(state),
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Values print as EDN: the export file and the query tool read them back.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Ref(e) => write!(f, "{e}"),
            Value::String(s) => write!(f, "{}", crate::edn::Edn::String(s.to_string())),
            Value::Long(n) => write!(f, "{n}"),
            Value::Double(x) => write!(f, "{}", crate::edn::Edn::Float(*x)),
            Value::Boolean(b) => write!(f, "{b}"),
            Value::Instant(ms) => write!(f, "#inst \"{}\"", super::instant::format_rfc3339(*ms)),
            Value::Keyword(k) => write!(f, "{k}"),
            Value::Uuid(u) => write!(f, "#uuid \"{}\"", format_uuid(u)),
        }
    }
}

/// `8-4-4-4-12` lowercase hex.
pub(crate) fn format_uuid(bytes: &[u8; 16]) -> String {
    uuid::Uuid::from_bytes(*bytes).hyphenated().to_string()
}

/// Reads the `8-4-4-4-12` hex form (either case), and no other: the
/// `uuid` crate's other forms (simple, braced, URN) are refused, so that
/// every uuid in a query or an export is written one way.
pub fn parse_uuid(text: &str) -> Option<[u8; 16]> {
    text.parse::<uuid::fmt::Hyphenated>()
        .ok()
        .map(|u| u.into_uuid().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_split_into_namespace_and_name() {
        let k = kw(":recipe/slug");
        assert_eq!(k.namespace(), Some("recipe"));
        assert_eq!(k.name(), "slug");
        assert_eq!(k.to_string(), ":recipe/slug");
        assert_eq!(kw("plain").namespace(), None);
    }

    #[test]
    fn malformed_keywords_are_refused() {
        for bad in ["", ":", ":a b", ":/x", ":x/", ":a[b"] {
            assert!(Keyword::parse(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn a_reverse_keyword_names_its_forward_attribute() {
        assert_eq!(
            kw(":recipe/_forked-from").reversed(),
            Some(kw(":recipe/forked-from"))
        );
        assert_eq!(kw(":recipe/forked-from").reversed(), None);
    }

    #[test]
    fn keywords_and_strings_are_different_values() {
        assert_ne!(Value::Keyword(kw(":a/b")), Value::string("a/b"));
    }

    #[test]
    fn uuids_round_trip_through_text() {
        let bytes = [
            0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3, 0xa4, 0x56, 0x42, 0x66, 0x14, 0x17,
            0x40, 0x00,
        ];
        let text = format_uuid(&bytes);
        assert_eq!(text, "123e4567-e89b-12d3-a456-426614174000");
        assert_eq!(parse_uuid(&text), Some(bytes));
        assert_eq!(parse_uuid(&text.to_uppercase()), Some(bytes));
    }

    #[test]
    fn only_the_hyphenated_hex_form_is_a_uuid() {
        for bad in [
            // u8::from_str_radix took "+2" as a hex byte.
            "+23e4567-e89b-12d3-a456-426614174000",
            "123e4567-e89b-12d3-a456-42661417400g",
            "123e4567-e89b-12d3-a456-42661417400",
            "123e4567-e89b-12d3-a456-4266141740000",
            "123e4567e89b-12d3-a456-4266-14174000",
            " 123e4567-e89b-12d3-a456-426614174000",
            "123e4567e89b12d3a456426614174000",
            "{123e4567-e89b-12d3-a456-426614174000}",
            "urn:uuid:123e4567-e89b-12d3-a456-426614174000",
            "",
        ] {
            assert_eq!(parse_uuid(bad), None, "{bad:?}");
        }
    }
}
