//! forkful: a recipe site in which every recipe keeps its whole history and
//! can be forked, like a repository.
//!
//! # Layout
//! - `edn`: the EDN reader and printer, keeping each form's position; the
//!   text of queries, pull patterns, exports and seed files.
//! - `store`: the fact store: datoms, schema, transactions, indexes on sled,
//!   database values, pull. Knows nothing of recipes.
//! - `postgres`: the log in PostgreSQL, which a store follows when a site
//!   runs on more than one machine.
//! - `domain`: recipes, versions, forks, lineage, diffs, over the store.
//! - `seed`: the demo fixture and synthetic catalogs.
//! - `import`: recipes brought in from other sites' pages (schema.org
//!   JSON-LD and microdata), and fetching those pages safely.
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
pub mod edn;
pub mod import;
pub mod postgres;
pub mod seed;
pub mod store;
pub mod views;
pub mod web;
