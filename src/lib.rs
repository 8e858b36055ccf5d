//! forkful: a recipe site in which every recipe keeps its whole history and
//! can be forked, like a repository.
//!
//! # Layout
//! - `store`: the fact store, the `forkful-store` crate (crates/store):
//!   datoms, schema, transactions, indexes on sled, database values, pull,
//!   datalog. Knows nothing of recipes.
//! - `edn`: the EDN reader and printer, the store crate's: the text of
//!   queries, pull patterns, exports and seed files.
//! - `postgres`: the log in PostgreSQL, the `forkful-postgres-log` crate
//!   (crates/postgres-log), which a store follows when a site runs on more
//!   than one machine.
//! - `domain`: recipes, versions, forks, lineage, diffs, over the store.
//! - `seed`: the demo fixture and synthetic catalogs.
//! - `import`: recipes brought in from other sites' pages (schema.org
//!   JSON-LD and microdata), and fetching those pages safely.
//! - `federation`: ActivityPub with other sites: HTTP signatures, the
//!   inbox, and deliveries sent off the page workers.
//! - `views`: maud views, pure functions from view models to markup;
//!   Markdown, JSON-LD, feeds.
//! - `web`: actix-web: the URL table, thin handlers, caching headers,
//!   middleware.
//! - `app`: `build`, the one way to make the server.
//! - `assets`: the static files from `templates/`, compiled in.
//! - `cli`: the command line's commands, for the thin `main`.

pub mod app;
pub mod assets;
pub mod cli;
pub mod domain;
pub mod federation;
pub mod import;
pub mod seed;
pub mod views;
pub mod web;

// The crates below the app, under the names the app has always used.
pub use forkful_postgres_log as postgres;
pub use forkful_store as store;
pub use forkful_store::edn;
