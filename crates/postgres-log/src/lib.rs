//! PostgreSQL as the place a site's truth is kept, for a site past one
//! machine (`serve --database-url`): the log of transactions, which every
//! node's store follows (`store::Log`). The store stays each node's local
//! index, and can be rebuilt from the log.
//!
//! - `migrations`: the tables, created and changed by versioned steps
//!   applied when a node connects
//! - `log`: the log, one row per transaction

mod log;
mod migrations;

pub use log::PgLog;
