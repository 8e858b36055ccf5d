//! The store's errors, one type per kind of operation (as redb does), so a
//! caller matches only what its operation can do:
//!
//! - `StorageError`: sled failed, or what it holds cannot be decoded. Any
//!   operation can meet it, so every other type wraps it.
//! - `OpenError`: opening a store (in use, another format, a half import).
//! - `TransactError`: a transaction refused (it wrote nothing) or a write
//!   that could not be made durable.
//! - `ReadError`: reads that name attributes or take a pull pattern.
//! - `TransferError`: export and import files.
//! - `StoreError`: any of them, for callers that treat every store failure
//!   alike (the command line, the domain's error).

use super::value::{BadKeyword, EntityId, Keyword, Value, ValueType};

/// sled failed underneath us, or a key or value on disk cannot be decoded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StorageError {
    /// sled failed (I/O, or its own corruption check).
    #[error("storage: {0}")]
    Sled(#[from] sled::Error),
    /// A key or value on disk could not be decoded.
    #[error("the store is corrupt: {0}")]
    Corrupt(String),
    /// What is kept in the log's database (a store's keyspaces, when it
    /// follows a log) could not be read from there.
    #[error("{0}")]
    Unavailable(String),
}

/// A transaction or read named an attribute the schema does not have.
#[derive(Debug, Clone, thiserror::Error)]
#[error("unknown attribute {0}")]
pub struct UnknownAttribute(pub Keyword);

/// A schema the store does not allow: an incomplete attribute, or a change
/// to an installed one that would make its stored datoms wrong.
#[derive(Debug, Clone, thiserror::Error)]
#[error("schema: {0}")]
pub struct SchemaError(pub String);

/// Opening a store failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The stored schema cannot be read back.
    #[error(transparent)]
    Schema(#[from] SchemaError),
    /// Another process has the store's directory open.
    #[error("the store at {0} is in use by another process")]
    Locked(String),
    /// The directory holds a store written in another format version.
    #[error(
        "the store at {path} has format version {found}, but this build reads version {expected}: export it with the build that wrote it and import the file with this one"
    )]
    FormatVersion {
        path: String,
        found: String,
        expected: u32,
    },
    /// An import into the store began and did not finish.
    #[error("the store at {0} holds part of an import that did not finish: remove it and import again into an empty store")]
    UnfinishedImport(String),
    /// The store was opened on a log (`StoreConfig::following`) and could
    /// not follow it: another log's store, one with transactions the log
    /// lacks (refused, the store as it was), or the log out of reach (see
    /// `StoreConfig::following`).
    #[error(transparent)]
    FollowingLog(TransactError),
}

/// A transaction was refused, and wrote nothing; or a write could not be
/// made durable.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransactError {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(transparent)]
    BadKeyword(#[from] BadKeyword),
    #[error(transparent)]
    UnknownAttribute(#[from] UnknownAttribute),
    /// A schema change the store does not allow (changing a type, say).
    #[error(transparent)]
    Schema(#[from] SchemaError),
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
    /// An attribute named by id (`AttrRef::Id`) that is no attribute.
    #[error("entity {0} is not an attribute")]
    NotAnAttribute(EntityId),
    /// An entity id names no entity that exists in the store.
    #[error("entity {0} does not exist")]
    UnknownEntity(EntityId),
    /// One transaction says contradictory things about one fact.
    #[error("conflicting datoms in one transaction: {0}")]
    Conflict(String),
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
    /// The log the store follows refused the transaction (another node
    /// wrote first) or could not take it; nothing was written.
    #[error(transparent)]
    Log(#[from] LogError),
}

/// A read that names an attribute, or pulls by a pattern, failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(transparent)]
    BadKeyword(#[from] BadKeyword),
    #[error(transparent)]
    UnknownAttribute(#[from] UnknownAttribute),
    /// A pull pattern is malformed.
    #[error("bad pull pattern: {0}")]
    Pattern(String),
}

/// Exporting to or importing from a line-per-datom file failed; an import
/// that fails leaves the store as it was before it began.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransferError {
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// Reading or writing the file failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The import file is malformed, or the target store is not empty.
    #[error("import, line {line}: {why}")]
    Import { line: usize, why: String },
    /// A transaction of the file was refused.
    #[error(transparent)]
    Transact(#[from] TransactError),
}

/// Any store failure, for callers that treat them alike.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error(transparent)]
    Transact(#[from] TransactError),
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error(transparent)]
    Transfer(#[from] TransferError),
}

/// Why a log refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// Another entry already follows the one this append was decided on:
    /// another node wrote first. Catch up and decide again.
    #[error("the log has moved on past transaction {prev}: another node wrote first")]
    Moved { prev: EntityId },
    /// The log cannot be reached or answered with an error.
    #[error("the log is unavailable: {0}")]
    Unavailable(String),
    /// An append was sent and the log could not be asked, in time, whether
    /// it committed: the transaction may be in the log. The store has not
    /// applied it; catching up applies it if it is there.
    #[error("the log could not say whether the write was saved: {0}")]
    Unknown(String),
    /// The log and the store disagree: another log, or a changed one.
    #[error("the store does not follow this log: {0}")]
    Mismatch(String),
    /// What the log holds cannot be read back as entries.
    #[error(transparent)]
    Corrupt(#[from] StorageError),
}

macro_rules! from_sled {
    ($($error:ty),*) => {$(
        impl From<sled::Error> for $error {
            fn from(error: sled::Error) -> $error {
                StorageError::Sled(error).into()
            }
        }
    )*};
}

from_sled!(
    OpenError,
    TransactError,
    ReadError,
    TransferError,
    StoreError
);
