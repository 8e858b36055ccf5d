//! The parsed query, and the parser that builds it from EDN nodes.
//!
//! Parsing checks shape only: which sections there are, what each clause
//! looks like, that rules bind their heads. What needs the schema (does an
//! attribute exist?) is checked when the query runs against a database.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use super::QueryError;
use crate::edn::{self, Edn, Node};
use crate::instant;
use crate::pull::PullPattern;
use crate::value::{parse_uuid, Keyword, Value};

/// A logic variable, `?name` (kept with its `?`).
pub(super) type Var = Arc<str>;

/// A position in a clause: a variable, a constant, or `_`.
#[derive(Debug, Clone, PartialEq)]
pub enum Term {
    Var(Var),
    Const(Value),
    Blank,
    /// A source such as `$` or `$hist`, as a function argument.
    Src(String),
}

impl Term {
    pub fn var(&self) -> Option<&Var> {
        match self {
            Term::Var(v) => Some(v),
            _ => None,
        }
    }
}

/// How a function's result binds: `?x`, `[?a ?b]`, `[?x ...]`, `[[?a ?b]]`.
#[derive(Debug, Clone, PartialEq)]
pub enum Binding {
    Scalar(Var),
    Tuple(Vec<Option<Var>>),
    Collection(Var),
    Relation(Vec<Option<Var>>),
}

impl Binding {
    pub fn vars(&self) -> Vec<Var> {
        match self {
            Binding::Scalar(v) | Binding::Collection(v) => vec![v.clone()],
            Binding::Tuple(vs) | Binding::Relation(vs) => vs.iter().flatten().cloned().collect(),
        }
    }
}

/// One `:where` clause, with its text and position for errors and planning.
#[derive(Debug, Clone)]
pub struct Clause {
    pub kind: ClauseKind,
    /// The clause printed as EDN: the planner's tie-break, and error text.
    pub text: String,
    pub position: String,
}

#[derive(Debug, Clone)]
pub enum ClauseKind {
    /// `[$src? e a v tx? added?]`.
    Data { src: String, terms: Vec<Term> },
    /// `[(pred args...)]`.
    Pred { name: String, args: Vec<Term> },
    /// `[(fn args...) binding]`.
    Fn {
        name: String,
        args: Vec<Term>,
        binding: Binding,
    },
    /// `(rule args...)`, optionally `($src rule args...)`.
    Rule { name: String, args: Vec<Term> },
    /// `(not clauses...)` or `(not-join [vars] clauses...)`.
    Not {
        join: Option<Vec<Var>>,
        clauses: Vec<Clause>,
    },
    /// `(or branches...)` or `(or-join [vars] branches...)`; a branch is one
    /// clause or `(and clauses...)`.
    Or {
        join: Option<Vec<Var>>,
        branches: Vec<Vec<Clause>>,
    },
}

impl Clause {
    /// Every variable the clause mentions, nested clauses included.
    pub fn vars(&self) -> BTreeSet<Var> {
        let mut out = BTreeSet::new();
        self.collect_vars(&mut out);
        out
    }

    fn collect_vars(&self, out: &mut BTreeSet<Var>) {
        let terms = |ts: &[Term], out: &mut BTreeSet<Var>| {
            out.extend(ts.iter().filter_map(Term::var).cloned())
        };
        match &self.kind {
            ClauseKind::Data { terms: ts, .. } => terms(ts, out),
            ClauseKind::Pred { args, .. } | ClauseKind::Rule { args, .. } => terms(args, out),
            ClauseKind::Fn { args, binding, .. } => {
                terms(args, out);
                out.extend(binding.vars());
            }
            ClauseKind::Not {
                join: Some(vars), ..
            }
            | ClauseKind::Or {
                join: Some(vars), ..
            } => out.extend(vars.iter().cloned()),
            ClauseKind::Not {
                join: None,
                clauses,
            } => clauses.iter().for_each(|c| c.collect_vars(out)),
            ClauseKind::Or {
                join: None,
                branches,
            } => branches.iter().flatten().for_each(|c| c.collect_vars(out)),
        }
    }
}

/// An element of `:find`.
#[derive(Debug, Clone, PartialEq)]
pub enum FindElem {
    Var(Var),
    /// `(count ?x)`, `(count-distinct ?x)`, `(min ?x)`, `(max ?x)`, `(sum ?x)`.
    Aggregate {
        function: String,
        var: Var,
    },
    /// `(pull ?e [pattern])`, optionally `(pull $src ?e [pattern])`.
    Pull {
        src: String,
        var: Var,
        pattern: PullPattern,
    },
}

impl fmt::Display for FindElem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FindElem::Var(v) => write!(f, "{v}"),
            FindElem::Aggregate { function, var } => write!(f, "({function} {var})"),
            FindElem::Pull { var, .. } => write!(f, "(pull {var})"),
        }
    }
}

/// What shape the answers take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindShape {
    /// `:find ?a ?b`: a set of rows.
    Relation,
    /// `:find [?a ...]`: one column.
    Collection,
    /// `:find [?a ?b]`: one row.
    Tuple,
    /// `:find ?a .`: one value.
    Scalar,
}

/// An element of `:in`.
#[derive(Debug, Clone, PartialEq)]
pub enum InputSpec {
    Src(String),
    Rules,
    Binding(Binding),
}

/// A rule definition: `[(name ?a ?b) clauses...]`.
#[derive(Debug, Clone)]
pub(crate) struct RuleDef {
    pub name: String,
    pub head: Vec<Var>,
    pub body: Vec<Clause>,
    pub position: String,
}

/// A parsed query.
#[derive(Debug, Clone)]
pub struct Query {
    pub find: Vec<FindElem>,
    pub shape: FindShape,
    pub with: Vec<Var>,
    pub inputs: Vec<InputSpec>,
    pub clauses: Vec<Clause>,
}

fn syntax(node: &Node, message: impl Into<String>) -> QueryError {
    QueryError::Syntax {
        position: node.position(),
        message: message.into(),
    }
}

impl Query {
    /// Parses a query in the vector form `[:find ... :in ... :where ...]`.
    pub fn parse(text: &str) -> Result<Query, QueryError> {
        let root = edn::parse_node(text).map_err(|e| QueryError::Syntax {
            position: format!("line {}, column {}", e.line, e.column),
            message: e.message,
        })?;
        if !matches!(root.edn, Edn::Vector(_)) {
            return Err(syntax(&root, "a query is a vector: [:find ... :where ...]"));
        }
        let mut sections: Vec<(&str, &Node, Vec<&Node>)> = Vec::new();
        for child in &root.children {
            match &child.edn {
                Edn::Keyword(k) if ["find", "with", "in", "where"].contains(&k.as_str()) => {
                    if sections.iter().any(|(name, _, _)| name == k) {
                        return Err(syntax(child, format!(":{k} appears twice")));
                    }
                    sections.push((k.as_str(), child, Vec::new()));
                }
                Edn::Keyword(k) => return Err(syntax(child, format!("unknown section :{k}"))),
                _ => match sections.last_mut() {
                    Some((_, _, items)) => items.push(child),
                    None => return Err(syntax(child, "a query starts with :find")),
                },
            }
        }
        let section = |name: &str| sections.iter().find(|(n, _, _)| *n == name);
        let Some((_, find_node, find_items)) = section("find") else {
            return Err(syntax(&root, "a query needs :find"));
        };
        let (find, shape) = parse_find(find_node, find_items)?;
        let with = match section("with") {
            Some((_, _, items)) => items.iter().map(|n| var_of(n)).collect::<Result<_, _>>()?,
            None => Vec::new(),
        };
        let inputs = match section("in") {
            Some((_, _, items)) => items
                .iter()
                .map(|n| parse_input(n))
                .collect::<Result<_, _>>()?,
            None => vec![InputSpec::Src("$".into())],
        };
        let clauses = match section("where") {
            Some((_, _, items)) => items
                .iter()
                .map(|n| parse_clause(n))
                .collect::<Result<_, _>>()?,
            None => Vec::new(),
        };
        Ok(Query {
            find,
            shape,
            with,
            inputs,
            clauses,
        })
    }
}

fn parse_find(head: &Node, items: &[&Node]) -> Result<(Vec<FindElem>, FindShape), QueryError> {
    let elems = |nodes: &[&Node]| {
        nodes
            .iter()
            .map(|n| parse_find_elem(n))
            .collect::<Result<Vec<_>, _>>()
    };
    match items {
        [] => Err(syntax(head, ":find needs at least one variable")),
        [one, dot] if matches!(&dot.edn, Edn::Symbol(s) if s == ".") => {
            Ok((elems(&[one])?, FindShape::Scalar))
        }
        [vector] if matches!(vector.edn, Edn::Vector(_)) => {
            let inner: Vec<&Node> = vector.children.iter().collect();
            match inner.as_slice() {
                [one, dots] if matches!(&dots.edn, Edn::Symbol(s) if s == "...") => {
                    Ok((elems(&[one])?, FindShape::Collection))
                }
                [] => Err(syntax(vector, "an empty find tuple")),
                _ => Ok((elems(&inner)?, FindShape::Tuple)),
            }
        }
        _ => Ok((elems(items)?, FindShape::Relation)),
    }
}

fn parse_find_elem(node: &Node) -> Result<FindElem, QueryError> {
    match &node.edn {
        Edn::Symbol(_) => Ok(FindElem::Var(var_of(node)?)),
        Edn::List(_) => {
            let parts = &node.children;
            let Some(Edn::Symbol(function)) = parts.first().map(|p| &p.edn) else {
                return Err(syntax(node, "expected (function ?var)"));
            };
            if function == "pull" {
                let (src, rest) = match parts.get(1).map(|p| &p.edn) {
                    Some(Edn::Symbol(s)) if s.starts_with('$') => (s.clone(), &parts[2..]),
                    _ => ("$".to_owned(), &parts[1..]),
                };
                let [var, pattern] = rest else {
                    return Err(syntax(node, "expected (pull ?e [pattern])"));
                };
                let pattern = PullPattern::from_edn(&pattern.edn)
                    .map_err(|e| syntax(pattern, e.to_string()))?;
                return Ok(FindElem::Pull {
                    src,
                    var: var_of(var)?,
                    pattern,
                });
            }
            const AGGREGATES: [&str; 6] = ["count", "count-distinct", "min", "max", "sum", "avg"];
            if !AGGREGATES.contains(&function.as_str()) {
                return Err(syntax(
                    node,
                    format!(
                        "unknown aggregate {function}; known: {}",
                        AGGREGATES.join(", ")
                    ),
                ));
            }
            let [_, var] = parts.as_slice() else {
                return Err(syntax(node, format!("expected ({function} ?var)")));
            };
            Ok(FindElem::Aggregate {
                function: function.clone(),
                var: var_of(var)?,
            })
        }
        other => Err(syntax(
            node,
            format!("{other} cannot be found: use a variable, an aggregate or pull"),
        )),
    }
}

fn var_of(node: &Node) -> Result<Var, QueryError> {
    match &node.edn {
        Edn::Symbol(s) if s.starts_with('?') && s.len() > 1 => Ok(Var::from(s.as_str())),
        other => Err(syntax(
            node,
            format!("expected a variable like ?x, found {other}"),
        )),
    }
}

fn optional_var(node: &Node) -> Result<Option<Var>, QueryError> {
    match &node.edn {
        Edn::Symbol(s) if s == "_" => Ok(None),
        _ => var_of(node).map(Some),
    }
}

fn parse_binding(node: &Node) -> Result<Binding, QueryError> {
    match &node.edn {
        Edn::Symbol(_) => Ok(Binding::Scalar(var_of(node)?)),
        Edn::Vector(_) => match node.children.as_slice() {
            [one, dots] if matches!(&dots.edn, Edn::Symbol(s) if s == "...") => {
                Ok(Binding::Collection(var_of(one)?))
            }
            [inner] if matches!(inner.edn, Edn::Vector(_)) => Ok(Binding::Relation(
                inner
                    .children
                    .iter()
                    .map(optional_var)
                    .collect::<Result<_, _>>()?,
            )),
            [] => Err(syntax(node, "an empty binding")),
            items => Ok(Binding::Tuple(
                items.iter().map(optional_var).collect::<Result<_, _>>()?,
            )),
        },
        other => Err(syntax(node, format!("{other} is not a binding"))),
    }
}

fn parse_input(node: &Node) -> Result<InputSpec, QueryError> {
    match &node.edn {
        Edn::Symbol(s) if s.starts_with('$') => Ok(InputSpec::Src(s.clone())),
        Edn::Symbol(s) if s == "%" => Ok(InputSpec::Rules),
        _ => parse_binding(node).map(InputSpec::Binding),
    }
}

/// A constant in a clause: numbers, strings, keywords, booleans, instants, uuids.
fn parse_term(node: &Node) -> Result<Term, QueryError> {
    Ok(match &node.edn {
        Edn::Symbol(s) if s == "_" => Term::Blank,
        Edn::Symbol(s) if s.starts_with('?') => Term::Var(var_of(node)?),
        Edn::Symbol(s) if s.starts_with('$') => Term::Src(s.clone()),
        other => Term::Const(constant(node, other)?),
    })
}

fn constant(node: &Node, edn: &Edn) -> Result<Value, QueryError> {
    Ok(match edn {
        Edn::Int(n) => Value::Long(*n),
        Edn::Float(x) => Value::Double(*x),
        Edn::String(s) => Value::from(s.as_str()),
        Edn::Bool(b) => Value::Boolean(*b),
        Edn::Keyword(k) => {
            Value::Keyword(Keyword::parse(k).map_err(|e| syntax(node, e.to_string()))?)
        }
        Edn::Tagged(tag, inner) => match (tag.as_str(), inner.as_ref()) {
            ("inst", Edn::String(s)) => Value::Instant(
                instant::parse_rfc3339(s)
                    .ok_or_else(|| syntax(node, format!("bad instant {s:?}")))?,
            ),
            ("uuid", Edn::String(s)) => {
                Value::Uuid(parse_uuid(s).ok_or_else(|| syntax(node, format!("bad uuid {s:?}")))?)
            }
            _ => return Err(syntax(node, format!("unknown tagged value #{tag}"))),
        },
        other => {
            return Err(syntax(
                node,
                format!("{other} is not a variable or a constant"),
            ))
        }
    })
}

fn clause(node: &Node, kind: ClauseKind) -> Clause {
    Clause {
        kind,
        text: node.edn.to_string(),
        position: node.position(),
    }
}

fn parse_clause(node: &Node) -> Result<Clause, QueryError> {
    match &node.edn {
        Edn::Vector(_) => parse_vector_clause(node),
        Edn::List(_) => parse_list_clause(node),
        other => Err(syntax(node, format!("{other} is not a clause"))),
    }
}

fn parse_vector_clause(node: &Node) -> Result<Clause, QueryError> {
    let parts = &node.children;
    match parts.first().map(|p| &p.edn) {
        // [(pred ...)] or [(fn ...) binding]
        Some(Edn::List(_)) => {
            let call = &parts[0];
            let Some(Edn::Symbol(name)) = call.children.first().map(|c| &c.edn) else {
                return Err(syntax(call, "a function call starts with its name"));
            };
            let args = call.children[1..]
                .iter()
                .map(parse_term)
                .collect::<Result<Vec<_>, _>>()?;
            match &parts[1..] {
                [] => Ok(clause(
                    node,
                    ClauseKind::Pred {
                        name: name.clone(),
                        args,
                    },
                )),
                [binding] => Ok(clause(
                    node,
                    ClauseKind::Fn {
                        name: name.clone(),
                        args,
                        binding: parse_binding(binding)?,
                    },
                )),
                _ => Err(syntax(node, "a function clause is [(f args...) binding]")),
            }
        }
        None => Err(syntax(node, "an empty clause")),
        _ => {
            let (src, rest) = match &parts[0].edn {
                Edn::Symbol(s) if s.starts_with('$') => (s.clone(), &parts[1..]),
                _ => ("$".to_owned(), &parts[..]),
            };
            if !(2..=5).contains(&rest.len()) {
                return Err(syntax(
                    node,
                    "a data pattern is [e a], [e a v], [e a v tx] or [e a v tx added]",
                ));
            }
            let terms = rest.iter().map(parse_term).collect::<Result<Vec<_>, _>>()?;
            if let Some(Term::Const(c)) = terms.get(1) {
                if !matches!(c, Value::Keyword(_)) {
                    return Err(syntax(
                        &rest[1],
                        format!("an attribute is a keyword, not {c}"),
                    ));
                }
            }
            Ok(clause(node, ClauseKind::Data { src, terms }))
        }
    }
}

fn parse_list_clause(node: &Node) -> Result<Clause, QueryError> {
    let parts = &node.children;
    let Some(Edn::Symbol(head)) = parts.first().map(|p| &p.edn) else {
        return Err(syntax(
            node,
            "a list clause starts with not, or, or a rule name",
        ));
    };
    let kind = match head.as_str() {
        "not" | "not-join" | "or" | "or-join" if parts.len() < 2 => {
            return Err(syntax(node, format!("({head} ...) needs clauses")))
        }
        "not" => ClauseKind::Not {
            join: None,
            clauses: parse_clauses(&parts[1..])?,
        },
        "not-join" => ClauseKind::Not {
            join: Some(join_vars(&parts[1])?),
            clauses: parse_clauses(&parts[2..])?,
        },
        "or" => parse_or(node)?,
        "or-join" => ClauseKind::Or {
            join: Some(join_vars(&parts[1])?),
            branches: parse_branches(&parts[2..])?,
        },
        "and" => return Err(syntax(node, "(and ...) belongs inside (or ...)")),
        name => parse_rule_call(node, name)?,
    };
    Ok(clause(node, kind))
}

/// The `[?vars...]` of a `not-join` or `or-join`.
fn join_vars(n: &Node) -> Result<Vec<Var>, QueryError> {
    match &n.edn {
        Edn::Vector(_) => n.children.iter().map(var_of).collect(),
        other => Err(syntax(n, format!("expected [?vars...], found {other}"))),
    }
}

fn parse_clauses(nodes: &[Node]) -> Result<Vec<Clause>, QueryError> {
    nodes.iter().map(parse_clause).collect()
}

/// An `or`'s branches: each one clause, or `(and clauses...)`.
fn parse_branches(nodes: &[Node]) -> Result<Vec<Vec<Clause>>, QueryError> {
    nodes
        .iter()
        .map(|n| match (&n.edn, n.children.first().map(|c| &c.edn)) {
            (Edn::List(_), Some(Edn::Symbol(s))) if s == "and" => parse_clauses(&n.children[1..]),
            _ => parse_clause(n).map(|c| vec![c]),
        })
        .collect()
}

/// `(or branches...)`, whose branches all bind the same variables.
fn parse_or(node: &Node) -> Result<ClauseKind, QueryError> {
    let branches = parse_branches(&node.children[1..])?;
    // Every branch of a plain `or` must bind the same variables.
    let first: BTreeSet<Var> = branches[0].iter().flat_map(Clause::vars).collect();
    for branch in &branches[1..] {
        let vars: BTreeSet<Var> = branch.iter().flat_map(Clause::vars).collect();
        if vars != first {
            return Err(QueryError::Unbound {
                position: node.position(),
                message: "the branches of an or must use the same variables; use or-join to name the shared ones"
                    .into(),
            });
        }
    }
    Ok(ClauseKind::Or {
        join: None,
        branches,
    })
}

/// `(rule args...)`, on the default source.
fn parse_rule_call(node: &Node, name: &str) -> Result<ClauseKind, QueryError> {
    let args: Vec<Term> = node.children[1..]
        .iter()
        .map(parse_term)
        .collect::<Result<_, _>>()?;
    if args.iter().any(|a| matches!(a, Term::Src(_))) {
        return Err(syntax(node, "rules run on the default source $"));
    }
    Ok(ClauseKind::Rule {
        name: name.to_owned(),
        args,
    })
}

/// Parses rules: `[[(name ?a ?b) clauses...] ...]`, checking each is safe
/// (every head variable bound by its body).
pub(super) fn parse_rules(text: &str) -> Result<Vec<RuleDef>, QueryError> {
    let root = edn::parse_node(text).map_err(|e| QueryError::Syntax {
        position: format!("rules, line {}, column {}", e.line, e.column),
        message: e.message,
    })?;
    if !matches!(root.edn, Edn::Vector(_)) {
        return Err(syntax(
            &root,
            "rules are a vector of [(head ?vars...) clauses...]",
        ));
    }
    let mut rules = Vec::new();
    for def in &root.children {
        let (Edn::Vector(_), Some(head)) = (&def.edn, def.children.first()) else {
            return Err(syntax(def, "a rule is [(head ?vars...) clauses...]"));
        };
        let (Edn::List(_), Some(Edn::Symbol(name))) =
            (&head.edn, head.children.first().map(|n| &n.edn))
        else {
            return Err(syntax(head, "a rule head is (name ?vars...)"));
        };
        let mut vars = Vec::new();
        for arg in &head.children[1..] {
            match &arg.edn {
                // `[?a]` marks arguments that callers must bind; we accept it.
                Edn::Vector(_) => {
                    for inner in &arg.children {
                        vars.push(var_of(inner)?);
                    }
                }
                _ => vars.push(var_of(arg)?),
            }
        }
        let body = def.children[1..]
            .iter()
            .map(parse_clause)
            .collect::<Result<Vec<_>, _>>()?;
        if body.is_empty() {
            return Err(syntax(def, format!("rule {name} has no body")));
        }
        let bound: BTreeSet<Var> = body
            .iter()
            .filter(|c| binds(c))
            .flat_map(Clause::vars)
            .collect();
        if let Some(unbound) = vars.iter().find(|v| !bound.contains(*v)) {
            return Err(QueryError::Rule {
                position: head.position(),
                message: format!("unsafe rule {name}: its body never binds {unbound}"),
            });
        }
        rules.push(RuleDef {
            name: name.clone(),
            head: vars,
            body,
            position: def.position(),
        });
    }
    Ok(rules)
}

/// Whether a clause can bind the variables it mentions (predicates and `not`
/// only test them).
fn binds(clause: &Clause) -> bool {
    !matches!(
        clause.kind,
        ClauseKind::Pred { .. } | ClauseKind::Not { .. }
    )
}
