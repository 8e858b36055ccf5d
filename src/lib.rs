//! forkful: a recipe site in which every recipe keeps its whole history and
//! can be forked, like a repository.
//!
//! # Layout
//! - `store`: the fact store: datoms, schema, transactions, indexes on sled,
//!   database values, pull. Knows nothing of recipes.
//! - `cli`: the command line's commands, for the thin `main`.

pub mod cli;
pub mod domain;
pub mod seed;
pub mod store;
