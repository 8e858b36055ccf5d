//! The fact store: immutable datoms in covering indexes on sled.
//!
//! This crate knows nothing of recipes, HTTP or HTML: its dependencies
//! are sled and a few small crates, and the compiler holds that (the app
//! is a crate above it). A `Store` is the one writer and the source of
//! database values:
//!
//! - `transact` applies a `Transaction` atomically (one sled batch holding
//!   every index key of every datom, plus the new basis) and returns only once
//!   that batch is durable;
//! - `db` hands out the latest durable `Db`, which never changes.
//!
//! # Writes and durability
//! Writers take turns under one mutex, which covers checking a transaction
//! against the current state and applying its batch, not the flush. The flush
//! is shared: whoever finds no flush running flushes everything applied so
//! far, and every writer whose transaction that covered is acknowledged at
//! once. Under load, many transactions ride on one flush (group commit);
//! alone, a transaction pays for its own. Readers see a transaction only once
//! it is durable, so nothing a reader saw can be lost in a crash.
//!
//! Durable means that a `sled::Db::flush` begun after the batch was applied
//! has returned, and sled's files were then synced (`fsync`). sled's flush
//! alone is not an fsync on Linux: it waits on `sync_file_range` for its
//! log's bytes, which writes no metadata and empties no drive cache, and
//! syncs no blob file; its background flusher's fsync waits for no writer.
//! So the store fsyncs the log, new blob files and their directory after
//! each flush, before acknowledging. A process crash loses nothing
//! acknowledged (tested); a power cut should not either, which is synced
//! for but not tested (docs/SECURITY.md).
//!
//! `transact_with` runs a function on the latest value inside the writer
//! and applies the transaction it returns (Datomic's transaction
//! functions): what it checked is what its transaction applies to. Bulk
//! loads use `transact_deferred_with` and wait once per group. Until a
//! transaction is durable the writer keeps the batch that takes it back out
//! of sled; a failed or panicking flush applies those, poisons the store,
//! and wakes every writer waiting on it.
//!
//! # The surface
//! Everything a caller needs is re-exported below; the modules are private.
//! A reader learns the store from this list: the handle (`Store`), database
//! values (`Db`) and what they read (`Datom`, `Index`, `Components`,
//! `Entity`), the transaction input (`Transaction`, `EntityMap`, ...),
//! values and keywords, the schema, pull and query, export and import, the
//! keyspaces beside the datoms, and the errors.
//!
//! # Layout
//! - `edn`: the EDN reader and printer, keeping each form's position; the
//!   text of queries, pull patterns, exports and seed files (public: the
//!   app's seed files are EDN too)
//! - `handle`: the `Store` handle, database values for readers, cache controls
//! - `open`: opening a directory, its format and lock
//! - `meta`: the store's own keys (format, basis, the log followed) and the
//!   genesis transaction of a new store, below all that opens or writes
//! - `writer`: the single writer: transactions decided on the latest value,
//!   applied as one sled batch each
//! - `durability`: how a transaction becomes durable, the one choice
//!   between a store on its own and one that follows a log
//! - `group_commit`: flushes shared by the writers waiting on them
//! - `log_commit`: the same through a log: one append for every writer
//!   waiting, and what the log refused taken back out; `journal`: how to
//!   take out each transaction the log does not hold yet, kept on disk
//! - `undo`: taking back what a failed flush did not make durable
//! - `log`: a log beside the store that holds the truth when one is
//!   attached (PostgreSQL's, the `forkful-postgres-log` crate), its entries and their sums
//! - `follow`: attaching a log, and catching up with it
//! - `follower`: the thread that keeps a store following its log, and the
//!   guard that stops it
//! - `transaction`: what a caller asks a transaction to do (a leaf)
//! - `prepare`: how a transaction becomes datoms, checked
//! - `value`: typed values and keywords
//! - `instant`: instants as RFC 3339 text (the rest of the text forms are
//!   `crate::edn`'s, shared with the seed files)
//! - `encoding`: order-preserving keys of the five indexes
//! - `grouped`: the log, EAVT, AEVT and VAET, stored a few keys per transaction
//!   and read back as per-datom keys
//! - `packed`: those groups' values, stored compressed
//! - `postings`: AVET, stored as posting lists in chunks of 64 entities
//! - `schema`: attributes as entities, and their cache
//! - `current`: each entity's current facts in one entry (sixteen neighbouring
//!   entities' to a sled key), derived
//! - `referrers`: who refers to an entity, kept in memory while exact
//! - `ordered`: an indexed attribute's current facts in order, in memory
//! - `keyspace`: plain keys beside the datoms, for what must not be history
//! - `lasting`: a keyspace's memory of values that never change, on a node
//! - `db`: database values and range reads
//! - `witness`: what a read depended on, to tell whether a later write
//!   changed it
//! - `pull`: pull patterns
//! - `query`: datalog
//! - `transfer`: export to and import from a line-per-datom file
//! - `verify`: a check that derived entries match the datoms, for tests
//! - `testing`: hooks for tests, with the `testing` feature only

mod current;
mod db;
mod derived_lock;
mod durability;
pub mod edn;
mod encoding;
mod error;
mod follow;
mod follow_health;
mod follower;
mod fsync;
mod group_commit;
mod grouped;
mod handle;
mod history_check;
mod instant;
mod journal;
mod keyspace;
mod lasting;
mod log;
mod log_commit;
mod meta;
mod open;
mod ordered;
mod packed;
mod postings;
mod prepare;
mod pull;
mod query;
mod referrers;
mod schema;
mod transaction;
mod transfer;
mod undo;
mod value;
#[cfg(feature = "testing")]
mod verify;
mod witness;
mod writer;

pub use db::{Datoms, Db, Entity};
pub use encoding::{Components, Datom, Index};
pub use error::{
    OpenError, ReadError, SchemaError, StorageError, StoreError, TransactError, TransferError,
    UnknownAttribute,
};
pub use follow_health::FollowReport;
pub use follower::Follower;
pub use handle::{Store, StoreStats};
pub use instant::{format_rfc3339, now_millis, parse_rfc3339, write_rfc3339};
pub use keyspace::Keyspace;
pub use log::{
    KeyValue, Log, LogEntry, LogError, LogNews, LogPosition, News, SharedKeyspaces, GENESIS_SUM,
};
pub use meta::FORMAT_VERSION;
pub use open::{StoreConfig, DEFAULT_ENTITY_CACHE_BYTES};
pub use pull::{PullPattern, Pulled};
pub use query::{render_table, Input, Query, QueryError, QueryResult, DEFAULT_WORK_LIMIT};
pub use schema::{attribute_map, Attribute, Cardinality, Schema, Unique};
pub use transaction::{AttrRef, EntityMap, EntityRef, Transaction, TxReport, TxValue};
pub use transfer::{
    export, export_with, import, import_with, import_with_keyspaces, ImportCheck, NoCheck,
    Progress, TransferSummary,
};
pub use value::{kw, parse_uuid, BadKeyword, EntityId, Keyword, Value, ValueType};
pub use witness::{Dependencies, Dependency};
pub use writer::{MAX_TX_BYTES, MAX_TX_DATOMS};

/// Hooks for tests that look inside a store or make it fail: only with the
/// `testing` feature, never in a build of the site.
#[cfg(feature = "testing")]
pub mod testing;
