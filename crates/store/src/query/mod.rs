//! Datalog over the fact store, in Datomic's notation.
//!
//! ```text
//! [:find ?title (count ?f)
//!  :in $ ?slug
//!  :where [?r :recipe/slug ?slug]
//!         [?r :recipe/title ?title]
//!         [?f :recipe/forked-from ?r]]
//! ```
//!
//! A query is parsed from text once (`Query::parse`) and run against inputs
//! (`Query::run`): database values for `$` sources, scalars, collections,
//! relations, and rules for `%`. Answers are a set of rows, returned sorted.
//!
//! # How a query runs
//! The `:where` clauses are not run in the order written. At each step the
//! planner (`plan`) picks the cheapest clause that can run given the variables
//! bound so far: predicates and functions as soon as their inputs are bound,
//! data patterns by the index their bound positions allow (an entity seek
//! before a value lookup before an attribute scan), ties broken by the
//! clause's text. So a query's plan, and its cost, depend on the set of its
//! clauses and not on the order they were written in.
//!
//! Rules are evaluated bottom-up and semi-naively, seeded from the bound
//! arguments of the call (`rules`): asking for the ancestors of one recipe
//! starts from that recipe and touches its lineage only, however large the
//! fork graph around it. Every datom scanned and row made counts against a
//! work budget, so a runaway query ends with an error, not an exhausted
//! machine.
//!
//! # Layout
//! - `ast`: the parsed query, and the parser from EDN nodes
//! - `eval`: relations, clause evaluation, the planner, `:find`
//! - `rules`: seeded, semi-naive evaluation of rules
//! - `functions`: predicates and functions callable in clauses
//! - `table`: answers printed as a text table, for the command line

mod ast;
mod eval;
mod functions;
mod rules;
pub(crate) mod table;
pub use table::render as render_table;

use std::fmt;

pub use ast::Query;
pub use eval::QueryResult;

use super::db::Db;
use super::pull::Pulled;
use super::value::{Keyword, Value};
use crate::edn::{self, Edn};

/// The work a query may do (datoms scanned plus rows made) unless told
/// otherwise: enough for any page of the site by orders of magnitude, and a
/// few seconds at most.
pub const DEFAULT_WORK_LIMIT: u64 = 20_000_000;

/// What a query was wrong about, or ran into.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// The text is not EDN, or not the shape of a query; at a position.
    #[error("{position}: {message}")]
    Syntax { position: String, message: String },
    /// A variable that a predicate, function or `not` needs is never bound.
    #[error("{position}: {message}")]
    Unbound { position: String, message: String },
    /// A rule whose head variables the body does not bind, or an unknown or
    /// misused rule.
    #[error("{position}: {message}")]
    Rule { position: String, message: String },
    /// An attribute the schema does not have.
    #[error("{position}: unknown attribute {attribute}")]
    UnknownAttribute { position: String, attribute: String },
    /// The inputs do not match `:in`.
    #[error("inputs: {0}")]
    Input(String),
    /// A function was given values it cannot take.
    #[error("{0}")]
    Function(String),
    /// The query did more work than its limit allows.
    #[error("the query was stopped after {limit} steps of work; narrow it, or raise the limit")]
    TooMuchWork { limit: u64 },
    /// The store failed underneath.
    #[error("store: {0}")]
    Store(String),
}

impl From<super::error::StorageError> for QueryError {
    fn from(e: super::error::StorageError) -> QueryError {
        QueryError::Store(e.to_string())
    }
}

impl From<super::value::BadKeyword> for QueryError {
    fn from(e: super::value::BadKeyword) -> QueryError {
        QueryError::Input(e.to_string())
    }
}

impl From<super::error::ReadError> for QueryError {
    fn from(e: super::error::ReadError) -> QueryError {
        QueryError::Store(e.to_string())
    }
}

/// One input to a query, matched in order to its `:in` list.
#[derive(Clone)]
pub enum Input {
    /// A database value, for `$` or `$name`.
    Db(Db),
    /// A value for `?x`.
    Scalar(Value),
    /// Values for `[?x ...]`.
    Collection(Vec<Value>),
    /// Rows for `[[?a ?b]]`, or one row for `[?a ?b]`.
    Relation(Vec<Vec<Value>>),
    /// Rules for `%`, parsed once by `Input::rules`.
    Rules(Rules),
}

/// Parsed rules: parse once, run many queries with them.
#[derive(Clone)]
pub struct Rules {
    text: std::sync::Arc<str>,
    defs: std::sync::Arc<Vec<std::sync::Arc<ast::RuleDef>>>,
}

impl Rules {
    pub(crate) fn defs(&self) -> &[std::sync::Arc<ast::RuleDef>] {
        &self.defs
    }
}

impl Input {
    /// Rules from their EDN text, `[[(name ?a ?b) clauses...] ...]`,
    /// checked (syntax, and that each rule binds its head) as they are read.
    pub fn rules(text: &str) -> Result<Input, QueryError> {
        let defs = ast::parse_rules(text)?
            .into_iter()
            .map(std::sync::Arc::new)
            .collect();
        Ok(Input::Rules(Rules {
            text: std::sync::Arc::from(text),
            defs: std::sync::Arc::new(defs),
        }))
    }

    /// An input written as EDN, as on the command line: a scalar (`"dal"`,
    /// `42`, `:kind/main`), a collection (`["a" "b"]`), a relation
    /// (`[["a" 1] ["b" 2]]`), or rules (a vector of vectors that start with
    /// a list: `[[(name ?a) ...]]`).
    pub fn from_edn(text: &str) -> Result<Input, QueryError> {
        let form = edn::parse(text).map_err(|e| QueryError::Input(e.to_string()))?;
        let value = |e: &Edn| -> Result<Value, QueryError> {
            Ok(match e {
                Edn::Int(n) => Value::Long(*n),
                Edn::Float(x) => Value::Double(*x),
                Edn::String(s) => Value::from(s.as_str()),
                Edn::Bool(b) => Value::Boolean(*b),
                Edn::Keyword(k) => Value::Keyword(Keyword::parse(k)?),
                other => {
                    return Err(QueryError::Input(format!(
                        "{other} is not a value a query can take"
                    )))
                }
            })
        };
        Ok(match &form {
            Edn::Vector(items) => match items.first() {
                Some(Edn::Vector(first)) if matches!(first.first(), Some(Edn::List(_))) => {
                    Input::rules(text)?
                }
                Some(Edn::Vector(_)) => Input::Relation(
                    items
                        .iter()
                        .map(|row| match row {
                            Edn::Vector(cells) => cells.iter().map(value).collect(),
                            other => Err(QueryError::Input(format!("{other} is not a row"))),
                        })
                        .collect::<Result<_, _>>()?,
                ),
                _ => Input::Collection(items.iter().map(value).collect::<Result<_, _>>()?),
            },
            scalar => Input::Scalar(value(scalar)?),
        })
    }
}

impl fmt::Debug for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Input::Db(db) => write!(f, "Db(basis {})", db.basis()),
            Input::Scalar(v) => write!(f, "Scalar({v})"),
            Input::Collection(vs) => write!(f, "Collection({vs:?})"),
            Input::Relation(rows) => write!(f, "Relation({rows:?})"),
            Input::Rules(rules) => write!(f, "Rules({})", rules.text),
        }
    }
}

impl Db {
    /// Parses and runs `query` with this database as `$` and `args` for the
    /// rest of its `:in` (after `$`), under the default work limit.
    pub fn q(&self, query: &str, args: &[Input]) -> Result<QueryResult, QueryError> {
        let query = Query::parse(query)?;
        let mut inputs = vec![Input::Db(self.clone())];
        inputs.extend(args.iter().cloned());
        query.run(&inputs, DEFAULT_WORK_LIMIT)
    }
}

impl QueryResult {
    /// The rows' cells as plain values (pulled cells are skipped).
    pub fn values(&self) -> Vec<Vec<Value>> {
        self.rows
            .iter()
            .map(|row| row.iter().filter_map(|c| c.as_value().cloned()).collect())
            .collect()
    }

    /// The first cell of the first row, for `:find ?x .` and aggregates.
    pub fn scalar(&self) -> Option<&Pulled> {
        self.rows.first().and_then(|r| r.first())
    }
}
