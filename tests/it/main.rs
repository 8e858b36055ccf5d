//! Integration tests, in one binary (see docs/ARCHITECTURE.md, `tests/it`).
//!
//! # Layout
//! - `accounts`: sign up, log in, sessions, passwords, secrets out of history
//! - `architecture`: no layer names one above or beside it (the tidy test)
//! - `header`: the header as a visitor and as a cook, and a page cache
//!   that never mixes the two
//! - `helpers`: stores with a small schema, and ways to compare whole stores
//! - `transactions`: what transactions write, and what bad ones do not
//! - `time`: as-of, since, history, and readers pinned while a writer runs
//! - `pull`: pull patterns over nested, reverse and recursive refs
//! - `query`: datalog clauses, aggregates, rules, planning and errors
//! - `query_docs`: the examples of docs/QUERY.md, run
//! - `seed`: the demo seed, seed-file mistakes, the synthetic catalog
//! - `domain`: recipes, history, forks, lineage, catalog, diffs
//! - `merges`: a fork bringing in its parent's changes, in the domain and
//!   over the web
//! - `search`: the search index: ranking over the demo, typos, accents,
//!   stems, prefixes, snippets, tags, pages, following writes, rebuilds
//! - `durability`: reopening stores, format versions, export and import
//! - `uuids`: the one text form of a uuid, in queries and imports
//! - `faults`: failed and panicking flushes, and the size limit
//! - `fuzz`: the fuzz targets' checks over their saved inputs and random ones
//! - `fuzz_checks`: those checks, `tests/support/fuzz_checks.rs`, shared with
//!   the fuzz targets in `fuzz/`
//! - `races`: concurrent writers of one recipe or one slug, and of the schema
//! - `crash`: writers on several threads killed with SIGKILL lose no acknowledged
//!   transaction and leave every current-entity entry equal to its datoms
//! - `app_crash`: the server binary killed with SIGKILL while cooks write
//!   through its forms loses no acknowledged write and starts again
//! - `soak`: one server under steady reads and writes answers every request,
//!   loses no write, and its memory levels off
//! - `degrade`: a node whose PostgreSQL stops or stalls serves a cook's pages
//!   on, refuses writes with 503, says so in /healthz, and comes back
//! - `failover`: a primary killed under writes and its synchronous standby
//!   promoted: nodes given both hosts carry on, no acknowledged write lost
//! - `nemesis`: three nodes on one log, cooks writing and reading through
//!   all three while nodes are killed and paused, PostgreSQL restarted and
//!   its connections dropped or stalled: nothing acknowledged is lost
//! - `hostile`: a real server against hostile HTTP: oversized heads and bodies,
//!   bytes that are not UTF-8, path traversal, slow clients, forged cookies
//! - `http_client`: the server binary as a process, a browser over loopback,
//!   and the ledger of acknowledged writes the two tests above check
//! - `keyspace`: keys beside the datoms, durable and outside history
//! - `web`: the site's pages, headers and errors, over the demo seed
//! - `page_cache`: pages kept per address and coding, ETags that follow what
//!   a page shows, the cache's budget
//! - `scaling`: servings and units, over every demo line and on the page
//! - `family`: the family drawn, against the domain's account of it, at 500
//! - `pictures`: uploads in each format, refusals, variants without metadata,
//!   edits and forks keeping them, no recipe naming a picture not stored,
//!   decodes one at a time and the server's memory through a burst of them
//! - `import_corpus`: the import measured on tests/corpus's pages
//! - `import`: recipes from other sites' pages (plugin shapes, forkful's own),
//!   lineage from the source, fetching that refuses private addresses
//! - `tags`: a tag a URL must escape, from its links back to its page
//! - `writing`: accounts and forms over HTTP, as a browser uses them
//! - `xss`: hostile text in every free-text field runs nowhere
//! - `cli`: the binary's commands and their errors
//! - `jsonld`: the ActivityStreams documents served and sent, expanded by a
//!   JSON-LD processor (PyLD) with every term defined by their contexts
//! - `browser`: Debian's Chromium, headless, signs up, writes, edits, forks and
//!   previews, and no page breaks the Content Security Policy

mod accounts;
mod app_crash;
mod architecture;
mod browser;
mod cli;
mod crash;
mod degrade;
mod domain;
mod durability;
mod failover;
mod family;
mod faults;
mod federation;
mod fuzz;
// Shared with the fuzz targets (fuzz/fuzz_targets), which include it too.
#[path = "../support/fuzz_checks.rs"]
mod fuzz_checks;
mod header;
mod helpers;
mod hostile;
mod http_client;
mod import;
mod import_corpus;
mod import_shapes;
mod jsonld;
mod keyspace;
mod layout;
mod licences;
mod log;
mod merge_cases;
mod merges;
mod nemesis;
mod page_cache;
mod pictures;
mod postgres;
mod pull;
mod query;
mod query_docs;
mod races;
mod scaling;
mod search;
mod seed;
mod soak;
mod tags;
mod time;
mod transactions;
mod uuids;
mod web;
mod writing;
mod xss;
