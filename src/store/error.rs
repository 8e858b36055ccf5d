//! The store's errors: one enum, a line of doc per variant.
//!
//! A transaction that fails with any of these has written nothing.

use super::value::{EntityId, Keyword, Value, ValueType};

/// What went wrong in the store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// sled failed underneath us (I/O, or its own corruption check).
    #[error("storage: {0}")]
    Storage(#[from] sled::Error),
    /// A key or value on disk could not be decoded.
    #[error("the store is corrupt: {0}")]
    Corrupt(String),
    /// Another process has the store's directory open.
    #[error("the store at {0} is in use by another process")]
    Locked(String),
    /// The directory holds a store written in another format version.
    #[error(
        "the store at {path} has format version {found}, but this build reads version {expected}"
    )]
    FormatVersion {
        path: String,
        found: String,
        expected: u32,
    },
    /// An import into the store began and did not finish.
    #[error("the store at {0} holds part of an import that did not finish: remove it and import again into an empty store")]
    UnfinishedImport(String),
    /// A keyword's text is malformed.
    #[error("bad keyword {text:?}: {why}")]
    BadKeyword { text: String, why: String },
    /// A transaction or read named an attribute the schema does not have.
    #[error("unknown attribute {0}")]
    UnknownAttribute(Keyword),
    /// A value's type is not the attribute's `:db/valueType`.
    #[error("attribute {attr} takes values of type {expected:?}, but got {got} ({got_type:?})")]
    WrongType {
        attr: Keyword,
        expected: ValueType,
        got: Value,
        got_type: ValueType,
    },
    /// A value that cannot be stored at all (NaN, an empty tempid...).
    #[error("invalid value for {attr}: {why}")]
    InvalidValue { attr: Keyword, why: String },
    /// Asserting the value would give two entities one unique value.
    #[error("unique clash on {attr}: {value} already belongs to entity {existing}, not {entity}")]
    UniqueConflict {
        attr: Keyword,
        value: Value,
        existing: EntityId,
        entity: EntityId,
    },
    /// One tempid upserts to two different existing entities.
    #[error("tempid {tempid:?} resolves to both entity {first} and entity {second}")]
    TempidConflict {
        tempid: String,
        first: EntityId,
        second: EntityId,
    },
    /// A compare-and-swap found another value than the one expected.
    #[error(
        "compare-and-swap failed on entity {entity} {attr}: expected {expected}, found {found}"
    )]
    CasFailed {
        entity: EntityId,
        attr: Keyword,
        expected: String,
        found: String,
    },
    /// A lookup ref `[attr value]` found no entity, or its attribute is not unique.
    #[error("lookup ref [{attr} {value}] does not resolve: {why}")]
    LookupRef {
        attr: Keyword,
        value: Value,
        why: String,
    },
    /// An ident used as an entity reference names no entity.
    #[error("no entity has the ident {0}")]
    UnknownIdent(Keyword),
    /// An entity id names no entity that exists in the store.
    #[error("entity {0} does not exist")]
    UnknownEntity(EntityId),
    /// One transaction says contradictory things about one fact.
    #[error("conflicting datoms in one transaction: {0}")]
    Conflict(String),
    /// A schema change the store does not allow (changing a type, say).
    #[error("schema: {0}")]
    Schema(String),
    /// A pull pattern is malformed.
    #[error("bad pull pattern: {0}")]
    Pattern(String),
    /// The import file is malformed, or the target store is not empty.
    #[error("import, line {line}: {why}")]
    Import { line: usize, why: String },
    /// A transaction writes more datoms, or more bytes of values, than one
    /// transaction may (`MAX_TX_DATOMS`, `MAX_TX_BYTES`); split it.
    #[error("a transaction of {datoms} datoms and {bytes} bytes of values is over the limit of {max_datoms} datoms and {max_bytes} bytes: split it into smaller ones")]
    TooLarge {
        datoms: usize,
        bytes: usize,
        max_datoms: usize,
        max_bytes: usize,
    },
    /// An earlier flush failed, so later writes could not be made durable.
    #[error("the store refuses writes after a failed flush: {0}")]
    Poisoned(String),
    /// Reading or writing an export file failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}
