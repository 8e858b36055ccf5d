//! Relations, the planner, clause evaluation and `:find`.
//!
//! A relation is a list of variables and rows of values for them. Evaluation
//! starts from the relation the inputs make and applies one clause at a time,
//! each chosen by `plan::pick` from what is bound so far; a clause maps a
//! relation to a new one (extending rows with new variables, or dropping
//! rows). Data patterns are evaluated row by row as index reads, with reads
//! of the same bound values shared within the clause.

use std::cell::Cell;
use std::collections::{BTreeSet, HashMap, HashSet};

use super::ast::{
    Binding, Clause, ClauseKind, FindElem, FindShape, InputSpec, Query, RuleDef, Term, Var,
};
use super::functions::{self, Arg};
use super::rules::{self, Scope};
use super::{Input, QueryError};
use crate::db::Db;
use crate::encoding::{Components, Datom, Index};
use crate::pull::Pulled;
use crate::schema::Attribute;
use crate::value::{EntityId, Value};

/// Answers: column names (the `:find` elements) and rows, sorted.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryResult {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Pulled>>,
}

/// Variables and rows of values for them.
#[derive(Debug, Clone, Default)]
pub(super) struct Rel {
    pub vars: Vec<Var>,
    pub rows: Vec<Vec<Value>>,
}

impl Rel {
    /// The relation with no variables and one row: the start of evaluation.
    pub(super) fn unit() -> Rel {
        Rel {
            vars: Vec::new(),
            rows: vec![Vec::new()],
        }
    }

    pub(super) fn column(&self, var: &Var) -> Option<usize> {
        self.vars.iter().position(|v| v == var)
    }

    pub(super) fn bound(&self) -> BTreeSet<Var> {
        self.vars.iter().cloned().collect()
    }

    /// The distinct rows of `vars` (each of which must be bound).
    pub(super) fn project(&self, vars: &[Var]) -> Rel {
        let columns: Vec<usize> = vars
            .iter()
            .map(|v| self.column(v).expect("projected var is bound"))
            .collect();
        let mut seen = HashSet::new();
        let rows = self
            .rows
            .iter()
            .map(|row| columns.iter().map(|&c| row[c].clone()).collect::<Vec<_>>())
            .filter(|row| seen.insert(row.clone()))
            .collect();
        Rel {
            vars: vars.to_vec(),
            rows,
        }
    }

    /// The natural join: rows of both that agree on their shared variables.
    pub(super) fn join(self, other: &Rel) -> Rel {
        let shared: Vec<(usize, usize)> = other
            .vars
            .iter()
            .enumerate()
            .filter_map(|(j, v)| self.column(v).map(|i| (i, j)))
            .collect();
        let extra: Vec<usize> = (0..other.vars.len())
            .filter(|j| !shared.iter().any(|(_, s)| s == j))
            .collect();
        let mut by_key: HashMap<Vec<&Value>, Vec<&Vec<Value>>> = HashMap::new();
        for row in &other.rows {
            by_key
                .entry(shared.iter().map(|&(_, j)| &row[j]).collect())
                .or_default()
                .push(row);
        }
        let mut vars = self.vars.clone();
        vars.extend(extra.iter().map(|&j| other.vars[j].clone()));
        let mut rows = Vec::new();
        for row in &self.rows {
            let key: Vec<&Value> = shared.iter().map(|&(i, _)| &row[i]).collect();
            for matching in by_key.get(&key).into_iter().flatten() {
                let mut out = row.clone();
                out.extend(extra.iter().map(|&j| matching[j].clone()));
                rows.push(out);
            }
        }
        Rel { vars, rows }
    }
}

/// What a running query shares: its sources, rules, and work budget.
pub(super) struct Ctx {
    sources: HashMap<String, Db>,
    pub rules: HashMap<String, Vec<std::sync::Arc<RuleDef>>>,
    work: Cell<u64>,
    limit: u64,
    /// Rules whose complete evaluation is under way: meeting one again means
    /// recursion through `not`, which has no stratified meaning.
    pub evaluating: std::cell::RefCell<Vec<String>>,
    /// The datoms each distinct index read found, for this query's run.
    scans: std::cell::RefCell<HashMap<ScanKey, std::rc::Rc<Vec<Datom>>>>,
}

/// One index read: a source, an index, bound components, tx and added.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ScanKey {
    source: usize,
    index: &'static str,
    components: Components,
    tx: Option<EntityId>,
    added: Option<bool>,
}

impl Ctx {
    pub(super) fn spend(&self, steps: u64) -> Result<(), QueryError> {
        let used = self.work.get() + steps;
        self.work.set(used);
        if used > self.limit {
            return Err(QueryError::TooMuchWork { limit: self.limit });
        }
        Ok(())
    }

    pub(super) fn source(&self, name: &str, clause: &Clause) -> Result<&Db, QueryError> {
        self.sources.get(name).ok_or_else(|| {
            QueryError::Input(format!(
                "{}: the source {name} is not in :in",
                clause.position
            ))
        })
    }
}

impl Query {
    /// Runs the query on `inputs`, one for each element of `:in` in order,
    /// stopping with `TooMuchWork` past `work_limit` steps.
    pub fn run(&self, inputs: &[Input], work_limit: u64) -> Result<QueryResult, QueryError> {
        if inputs.len() != self.inputs.len() {
            return Err(QueryError::Input(format!(
                ":in names {} inputs but {} were given",
                self.inputs.len(),
                inputs.len()
            )));
        }
        let mut ctx = Ctx {
            sources: HashMap::new(),
            rules: HashMap::new(),
            work: Cell::new(0),
            limit: work_limit,
            evaluating: Default::default(),
            scans: Default::default(),
        };
        let mut rel = Rel::unit();
        for (spec, input) in self.inputs.iter().zip(inputs) {
            match (spec, input) {
                (InputSpec::Src(name), Input::Db(db)) => {
                    ctx.sources.insert(name.clone(), db.clone());
                }
                (InputSpec::Rules, Input::Rules(rules)) => {
                    for rule in rules.defs() {
                        ctx.rules
                            .entry(rule.name.clone())
                            .or_default()
                            .push(rule.clone());
                    }
                }
                (InputSpec::Binding(binding), input) => {
                    rel = rel.join(&input_relation(binding, input)?)
                }
                (spec, input) => {
                    return Err(QueryError::Input(format!("{spec:?} cannot take {input:?}")));
                }
            }
        }
        check_calls(&ctx, &self.clauses)?;
        for defs in ctx.rules.values() {
            for def in defs {
                check_calls(&ctx, &def.body)?;
            }
        }
        let rel = eval_clauses(&ctx, rel, &self.clauses, &mut Scope::top())?;
        self.find(&ctx, rel)
    }

    fn find(&self, ctx: &Ctx, rel: Rel) -> Result<QueryResult, QueryError> {
        let columns = self.find.iter().map(ToString::to_string).collect();
        let bound = rel.bound();
        let elem_var = |e: &FindElem| match e {
            FindElem::Var(v)
            | FindElem::Aggregate { var: v, .. }
            | FindElem::Pull { var: v, .. } => v.clone(),
        };
        for var in self
            .find
            .iter()
            .map(elem_var)
            .chain(self.with.iter().cloned())
        {
            if !bound.contains(&var) {
                return Err(QueryError::Unbound {
                    position: ":find".into(),
                    message: format!("{var} is not bound by any clause"),
                });
            }
        }
        let aggregated = self
            .find
            .iter()
            .any(|e| matches!(e, FindElem::Aggregate { .. }));
        let mut rows: Vec<Vec<Value>> = if aggregated {
            let mut vars: Vec<Var> = self.find.iter().map(elem_var).collect();
            vars.extend(self.with.iter().cloned());
            let mut seen = BTreeSet::new();
            vars.retain(|v| seen.insert(v.clone()));
            aggregate(&self.find, rel.project(&vars))?
        } else {
            let vars: Vec<Var> = self.find.iter().map(elem_var).collect();
            let columns: Vec<usize> = vars
                .iter()
                .map(|v| rel.column(v).expect("checked above"))
                .collect();
            let set: BTreeSet<Vec<Value>> = rel
                .rows
                .iter()
                .map(|row| columns.iter().map(|&c| row[c].clone()).collect())
                .collect();
            set.into_iter().collect()
        };
        if aggregated {
            // A set of rows comes out of its BTreeSet sorted already.
            rows.sort();
        }
        match self.shape {
            FindShape::Scalar | FindShape::Tuple => rows.truncate(1),
            FindShape::Relation | FindShape::Collection => {}
        }
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let mut cells = Vec::with_capacity(row.len());
            for (elem, value) in self.find.iter().zip(row) {
                cells.push(match elem {
                    FindElem::Pull { src, pattern, .. } => {
                        let db = ctx.sources.get(src).ok_or_else(|| {
                            QueryError::Input(format!(
                                ":find pulls from {src}, which is not in :in"
                            ))
                        })?;
                        let e = value.as_ref().ok_or_else(|| {
                            QueryError::Function(format!("pull needs an entity, got {value}"))
                        })?;
                        ctx.spend(1)?;
                        db.pull(e, pattern)?
                    }
                    _ => Pulled::Value(value),
                });
            }
            out.push(cells);
        }
        Ok(QueryResult { columns, rows: out })
    }
}

/// The rows an input gives its binding.
fn input_relation(binding: &Binding, input: &Input) -> Result<Rel, QueryError> {
    let named = |vars: &[Option<Var>], rows: Vec<Vec<Value>>| -> Result<Rel, QueryError> {
        if rows.iter().any(|r| r.len() != vars.len()) {
            return Err(QueryError::Input(format!(
                "rows for {binding:?} must have {} values",
                vars.len()
            )));
        }
        let keep: Vec<usize> = (0..vars.len()).filter(|&i| vars[i].is_some()).collect();
        Ok(Rel {
            vars: keep
                .iter()
                .map(|&i| vars[i].clone().expect("kept"))
                .collect(),
            rows: rows
                .into_iter()
                .map(|r| keep.iter().map(|&i| r[i].clone()).collect())
                .collect(),
        })
    };
    match (binding, input) {
        (Binding::Scalar(v), Input::Scalar(x)) => Ok(Rel {
            vars: vec![v.clone()],
            rows: vec![vec![x.clone()]],
        }),
        (Binding::Collection(v), Input::Collection(xs)) => Ok(Rel {
            vars: vec![v.clone()],
            rows: xs.iter().map(|x| vec![x.clone()]).collect(),
        }),
        (Binding::Relation(vars), Input::Relation(rows)) => named(vars, rows.clone()),
        (Binding::Tuple(vars), Input::Relation(rows)) if rows.len() == 1 => {
            named(vars, rows.clone())
        }
        (Binding::Tuple(vars), Input::Collection(values)) => named(vars, vec![values.clone()]),
        (binding, input) => Err(QueryError::Input(format!(
            "{binding:?} cannot take {input:?}"
        ))),
    }
}

/// Unknown functions and rules, and rule calls of the wrong arity, are
/// reported before anything runs.
fn check_calls(ctx: &Ctx, clauses: &[Clause]) -> Result<(), QueryError> {
    for clause in clauses {
        match &clause.kind {
            ClauseKind::Pred { name, .. } | ClauseKind::Fn { name, .. }
                if !functions::is_known(name) =>
            {
                return Err(QueryError::Syntax {
                    position: clause.position.clone(),
                    message: format!(
                        "unknown function {name}; known: {}",
                        functions::NAMES.join(" ")
                    ),
                });
            }
            ClauseKind::Rule { name, args } => {
                let Some(defs) = ctx.rules.get(name) else {
                    return Err(QueryError::Rule {
                        position: clause.position.clone(),
                        message: format!("no rule named {name} (rules come in through % in :in)"),
                    });
                };
                if let Some(def) = defs.iter().find(|d| d.head.len() != args.len()) {
                    return Err(QueryError::Rule {
                        position: clause.position.clone(),
                        message: format!(
                            "rule {name} takes {} arguments (at {}), but is called with {}",
                            def.head.len(),
                            def.position,
                            args.len()
                        ),
                    });
                }
            }
            ClauseKind::Not { clauses, .. } => check_calls(ctx, clauses)?,
            ClauseKind::Or { branches, .. } => {
                for branch in branches {
                    check_calls(ctx, branch)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Applies `clauses` to `rel` in the planner's order.
pub(super) fn eval_clauses(
    ctx: &Ctx,
    mut rel: Rel,
    clauses: &[Clause],
    scope: &mut Scope,
) -> Result<Rel, QueryError> {
    let mut pending: Vec<usize> = (0..clauses.len()).collect();
    while !pending.is_empty() {
        let at = pick(ctx, &rel.vars, clauses, &pending)?;
        let index = pending.remove(at);
        scope.current = Some(index);
        rel = eval_clause(ctx, rel, &clauses[index], scope)?;
        if rel.rows.is_empty() {
            // Nothing more can match; later clauses would only filter or
            // extend no rows. Bind their variables so `:find` can still run.
            for &i in &pending {
                for var in clauses[i].vars() {
                    if rel.column(&var).is_none() {
                        rel.vars.push(var);
                    }
                }
            }
            break;
        }
    }
    Ok(rel)
}

/// The planner: the index in `pending` of the clause to run next.
///
/// Each clause that can run with the variables bound so far gets a cost class
/// (lower runs first); ties go to the clause whose text sorts first, so the
/// plan depends on the set of clauses, not the order they were written in.
fn pick(
    ctx: &Ctx,
    bound: &[Var],
    clauses: &[Clause],
    pending: &[usize],
) -> Result<usize, QueryError> {
    let mut best: Option<(u32, &str, usize)> = None;
    for (at, &i) in pending.iter().enumerate() {
        let clause = &clauses[i];
        let Some(cost) = cost(ctx, bound, clause) else {
            continue;
        };
        let candidate = (cost, clause.text.as_str(), at);
        if best.is_none_or(|b| (candidate.0, candidate.1) < (b.0, b.1)) {
            best = Some(candidate);
        }
    }
    if let Some((_, _, at)) = best {
        return Ok(at);
    }
    // Nothing can run: some clause needs a variable no clause binds.
    let clause = &clauses[pending[0]];
    let missing: Vec<String> = clause
        .vars()
        .into_iter()
        .filter(|v| !bound.contains(v))
        .map(|v| v.to_string())
        .collect();
    Err(QueryError::Unbound {
        position: clause.position.clone(),
        message: format!(
            "{} needs {} bound, and no other clause binds {}",
            clause.text,
            missing.join(" "),
            if missing.len() == 1 { "it" } else { "them" }
        ),
    })
}

/// The cost class of running `clause` now, or `None` if it cannot run yet.
fn cost(ctx: &Ctx, bound: &[Var], clause: &Clause) -> Option<u32> {
    let is_bound = |t: &Term| match t {
        Term::Var(v) => bound.contains(v),
        Term::Const(_) | Term::Src(_) => true,
        Term::Blank => false,
    };
    let all_bound = |ts: &[Term]| {
        ts.iter()
            .all(|t| !matches!(t, Term::Var(v) if !bound.contains(v)))
    };
    match &clause.kind {
        ClauseKind::Pred { args, .. } => all_bound(args).then_some(0),
        ClauseKind::Fn { args, .. } => all_bound(args).then_some(3),
        ClauseKind::Not { join, clauses } => {
            let vars: Vec<Var> = match join {
                Some(vars) => vars.clone(),
                None => clauses.iter().flat_map(Clause::vars).collect(),
            };
            vars.iter().all(|v| bound.contains(v)).then_some(6)
        }
        ClauseKind::Or { .. } => {
            let vars = clause.vars();
            Some(if vars.iter().all(|v| bound.contains(v)) {
                7
            } else if vars.iter().any(|v| bound.contains(v)) {
                20
            } else {
                60
            })
        }
        ClauseKind::Rule { args, .. } => Some(if args.iter().any(is_bound) { 15 } else { 70 }),
        ClauseKind::Data { src, terms } => {
            let get = |i: usize| terms.get(i).is_some_and(is_bound);
            let (e, a, v) = (get(0), get(1), get(2));
            let attribute = match &terms[1] {
                Term::Const(Value::Keyword(k)) => {
                    match ctx.sources.get(src).map(|db| db.attribute(k)) {
                        Some(Ok(attribute)) => Some(attribute.clone()),
                        // Unknown attributes and sources run first, to fail first.
                        _ => return Some(0),
                    }
                }
                _ => None,
            };
            let in_avet = attribute.as_ref().is_some_and(|a| a.in_avet());
            let is_ref = attribute.as_ref().is_none_or(|a| a.is_ref());
            Some(match (e, a, v) {
                (true, true, true) => 1,
                (true, true, false) => 2,
                (true, false, _) => 3,
                (false, true, true) if in_avet => 4,
                (false, _, true) if is_ref => 5,
                (false, true, true) => 30,
                (false, true, false) => 40,
                (false, false, true) => 90,
                (false, false, false) => 100,
            })
        }
    }
}

fn eval_clause(ctx: &Ctx, rel: Rel, clause: &Clause, scope: &mut Scope) -> Result<Rel, QueryError> {
    match &clause.kind {
        ClauseKind::Data { src, terms } => {
            eval_data(ctx, rel, ctx.source(src, clause)?, terms, clause)
        }
        ClauseKind::Pred { name, args } => eval_pred(ctx, rel, name, args, clause),
        ClauseKind::Fn {
            name,
            args,
            binding,
        } => eval_fn(ctx, rel, name, args, binding, clause),
        ClauseKind::Rule { name, args } => rules::eval_call(ctx, rel, name, args, clause, scope),
        ClauseKind::Not { join, clauses } => eval_not(ctx, rel, join.as_deref(), clauses),
        ClauseKind::Or { join, branches } => {
            eval_or(ctx, rel, join.as_deref(), branches, clause, scope)
        }
    }
}

/// `[(pred args...)]`: the rows for which the call is truthy.
fn eval_pred(
    ctx: &Ctx,
    rel: Rel,
    name: &str,
    args: &[Term],
    clause: &Clause,
) -> Result<Rel, QueryError> {
    let mut rows = Vec::with_capacity(rel.rows.len());
    for row in rel.rows {
        ctx.spend(1)?;
        let args = call_args(ctx, &rel.vars, &row, args, clause)?;
        if functions::call(name, &args)?.is_some_and(|v| functions::truthy(&v)) {
            rows.push(row);
        }
    }
    Ok(Rel {
        vars: rel.vars,
        rows,
    })
}

/// `[(f args...) ?x]`: each row with the call's value bound to `?x`, or
/// kept if `?x` is bound already and equal to it.
fn eval_fn(
    ctx: &Ctx,
    rel: Rel,
    name: &str,
    args: &[Term],
    binding: &Binding,
    clause: &Clause,
) -> Result<Rel, QueryError> {
    let Binding::Scalar(var) = binding else {
        return Err(QueryError::Function(format!(
            "{}: a function's result binds one variable, like ?x",
            clause.position
        )));
    };
    let existing = rel.column(var);
    let mut vars = rel.vars.clone();
    if existing.is_none() {
        vars.push(var.clone());
    }
    let mut rows = Vec::with_capacity(rel.rows.len());
    for mut row in rel.rows {
        ctx.spend(1)?;
        let args = call_args(ctx, &rel.vars, &row, args, clause)?;
        let Some(value) = functions::call(name, &args)? else {
            continue;
        };
        match existing {
            Some(c) if row[c] != value => {}
            Some(_) => rows.push(row),
            None => {
                row.push(value);
                rows.push(row);
            }
        }
    }
    Ok(Rel { vars, rows })
}

/// `(not ...)` and `(not-join [vars] ...)`: the rows whose `vars` the
/// clauses do not match.
fn eval_not(
    ctx: &Ctx,
    rel: Rel,
    join: Option<&[Var]>,
    clauses: &[Clause],
) -> Result<Rel, QueryError> {
    let vars: Vec<Var> = match join {
        Some(vars) => vars.to_vec(),
        None => clauses
            .iter()
            .flat_map(Clause::vars)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
    };
    let input = rel.project(&vars);
    // Negation reads complete answers: a fresh scope, not the tables
    // of an enclosing rule's fixpoint (that is what stratifies it).
    let matched = eval_clauses(ctx, input, clauses, &mut Scope::top())?;
    let matched: HashSet<Vec<Value>> = matched.project(&vars).rows.into_iter().collect();
    let columns: Vec<usize> = vars.iter().map(|v| rel.column(v).expect("bound")).collect();
    let rows = rel
        .rows
        .into_iter()
        .filter(|row| {
            !matched.contains(&columns.iter().map(|&c| row[c].clone()).collect::<Vec<_>>())
        })
        .collect();
    Ok(Rel {
        vars: rel.vars,
        rows,
    })
}

/// `(or ...)` and `(or-join [vars] ...)`: the rows joined with the union of
/// what each branch binds of `vars`.
fn eval_or(
    ctx: &Ctx,
    rel: Rel,
    join: Option<&[Var]>,
    branches: &[Vec<Clause>],
    clause: &Clause,
    scope: &mut Scope,
) -> Result<Rel, QueryError> {
    let vars: Vec<Var> = match join {
        Some(vars) => vars.to_vec(),
        None => clause.vars().into_iter().collect(),
    };
    let shared: Vec<Var> = vars
        .iter()
        .filter(|v| rel.column(v).is_some())
        .cloned()
        .collect();
    let input = rel.project(&shared);
    let mut union: HashSet<Vec<Value>> = HashSet::new();
    for branch in branches {
        let mut inner = scope.nested();
        let out = eval_clauses(ctx, input.clone(), branch, &mut inner)?;
        if let Some(unbound) = vars.iter().find(|v| out.column(v).is_none()) {
            return Err(QueryError::Unbound {
                position: clause.position.clone(),
                message: format!("a branch of this or does not bind {unbound}"),
            });
        }
        union.extend(out.project(&vars).rows);
    }
    let union = Rel {
        vars,
        rows: union.into_iter().collect(),
    };
    Ok(rel.join(&union))
}

fn call_args<'a>(
    ctx: &'a Ctx,
    vars: &[Var],
    row: &[Value],
    args: &[Term],
    clause: &Clause,
) -> Result<Vec<Arg<'a>>, QueryError> {
    args.iter()
        .map(|t| match t {
            Term::Var(v) => {
                let c = vars.iter().position(|x| x == v).expect("planner bound it");
                Ok(Arg::Value(row[c].clone()))
            }
            Term::Const(c) => Ok(Arg::Value(c.clone())),
            Term::Src(name) => ctx.source(name, clause).map(Arg::Db),
            Term::Blank => Err(QueryError::Function(format!(
                "{}: _ cannot be a function argument",
                clause.position
            ))),
        })
        .collect()
}

/// Values for a pattern's free positions: (output column, value) pairs.
type Assignment = Vec<(usize, Value)>;

/// A data pattern's position, resolved against one row.
enum Pos {
    Fixed(Value),
    /// Unbound: the value goes to this output column (or nowhere for `_`).
    Free(Option<usize>),
}

fn eval_data(
    ctx: &Ctx,
    rel: Rel,
    db: &Db,
    terms: &[Term],
    clause: &Clause,
) -> Result<Rel, QueryError> {
    let mut vars = rel.vars.clone();
    // Output columns of the new variables, in the order they first appear.
    let mut outputs: Vec<Option<usize>> = Vec::with_capacity(terms.len());
    for term in terms {
        outputs.push(match term {
            Term::Var(v) if rel.column(v).is_none() => {
                let column = vars.iter().position(|x| x == v).unwrap_or_else(|| {
                    vars.push(v.clone());
                    vars.len() - 1
                });
                Some(column)
            }
            _ => None,
        });
    }
    let fixed_attribute = match &terms[1] {
        Term::Const(Value::Keyword(k)) => Some(
            db.attribute(k)
                .map_err(|_| QueryError::UnknownAttribute {
                    position: clause.position.clone(),
                    attribute: k.to_string(),
                })?
                .clone(),
        ),
        _ => None,
    };
    let width = vars.len();
    let mut rows = Vec::new();
    for row in &rel.rows {
        let positions: Vec<Pos> = terms
            .iter()
            .zip(&outputs)
            .map(|(term, out)| match term {
                Term::Var(v) => match rel.column(v) {
                    Some(c) => Pos::Fixed(row[c].clone()),
                    None => Pos::Free(*out),
                },
                Term::Const(c) => Pos::Fixed(c.clone()),
                Term::Blank | Term::Src(_) => Pos::Free(None),
            })
            .collect();
        let found = scan(ctx, db, &positions, fixed_attribute.as_ref(), clause)?;
        for assignment in &found {
            ctx.spend(1)?;
            let mut out = row.clone();
            out.resize(width, Value::Boolean(false));
            for (column, value) in assignment {
                out[*column] = value.clone();
            }
            rows.push(out);
        }
    }
    Ok(Rel { vars, rows })
}

/// The entity a value names in an entity position: an id, a non-negative
/// number, or an ident.
pub(super) fn entity_of(db: &Db, v: &Value) -> Option<EntityId> {
    match v {
        Value::Ref(e) => Some(*e),
        Value::Long(n) => u64::try_from(*n).ok(),
        Value::Keyword(k) => db.entid(k),
        _ => None,
    }
}

/// The assignments of free positions to values, for one set of fixed ones.
fn scan(
    ctx: &Ctx,
    db: &Db,
    positions: &[Pos],
    fixed_attribute: Option<&std::sync::Arc<Attribute>>,
    clause: &Clause,
) -> Result<Vec<Assignment>, QueryError> {
    let Some(read) = Read::of(db, positions, fixed_attribute) else {
        return Ok(Vec::new());
    };
    let datoms = read.datoms(ctx, db)?;
    let mut found = Vec::with_capacity(datoms.len());
    for datom in datoms.iter() {
        if let Some(assignment) = assign(db, positions, datom, clause)? {
            found.push(assignment);
        }
    }
    Ok(found)
}

/// The index read a pattern's fixed positions ask for: the components it
/// binds, and the tx and added it filters on.
struct Read {
    attribute: Option<std::sync::Arc<Attribute>>,
    components: Components,
    tx: Option<EntityId>,
    added: Option<bool>,
}

impl Read {
    /// The read for `positions`, or `None` if a fixed value can match no
    /// datom (an unknown attribute, a value that names no entity).
    fn of(
        db: &Db,
        positions: &[Pos],
        fixed_attribute: Option<&std::sync::Arc<Attribute>>,
    ) -> Option<Read> {
        let fixed = |i: usize| match positions.get(i) {
            Some(Pos::Fixed(v)) => Some(v),
            _ => None,
        };
        let entity_of = |v: &Value| entity_of(db, v);
        let attribute = match (fixed_attribute, fixed(1)) {
            (Some(a), _) => Some(a.clone()),
            (None, Some(Value::Keyword(k))) => Some(db.attribute(k).ok()?.clone()),
            (None, Some(v)) => Some(
                entity_of(v)
                    .and_then(|id| db.schema().attribute(id))?
                    .clone(),
            ),
            (None, None) => None,
        };
        let mut components = Components::any();
        if let Some(v) = fixed(0) {
            components = components.e(entity_of(v)?);
        }
        if let Some(a) = &attribute {
            components = components.a(a.id);
        }
        if let Some(v) = fixed(2) {
            components = components.v(fixed_value(db, attribute.as_deref(), v)?);
        }
        let tx = match fixed(3) {
            Some(v) => Some(entity_of(v)?),
            None => None,
        };
        let added = match fixed(4) {
            Some(Value::Boolean(b)) => Some(*b),
            Some(_) => return None,
            None => None,
        };
        Some(Read {
            attribute,
            components,
            tx,
            added,
        })
    }

    /// The index that serves the read best.
    fn index(&self) -> Index {
        let attribute = self.attribute.as_ref();
        let components = &self.components;
        if components.e.is_some() {
            Index::Eavt
        } else if components.v.is_some() && attribute.is_some_and(|a| a.in_avet()) {
            Index::Avet
        } else if matches!(components.v, Some(Value::Ref(_)))
            && attribute.is_none_or(|a| a.is_ref())
        {
            Index::Vaet
        } else if components.a.is_some() {
            Index::Aevt
        } else {
            Index::Eavt
        }
    }

    /// The datoms the read finds, read once per query.
    fn datoms(self, ctx: &Ctx, db: &Db) -> Result<std::rc::Rc<Vec<Datom>>, QueryError> {
        let index = self.index();
        let Read {
            components,
            tx,
            added,
            ..
        } = self;
        // The same read comes up again and again in rules (a step's body and
        // the base case read the same fork link): read each once per query.
        let key = ScanKey {
            // The source's Db lives in `ctx.sources` for the whole run, so its
            // address names it without allocating.
            source: db as *const Db as usize,
            index: index.name(),
            components: components.clone(),
            tx,
            added,
        };
        let cached = ctx.scans.borrow().get(&key).cloned();
        if let Some(datoms) = cached {
            return Ok(datoms);
        }
        let mut read = Vec::new();
        for datom in db.datoms(index, &components) {
            ctx.spend(1)?;
            let datom = datom?;
            if tx.is_some_and(|t| t != datom.tx) || added.is_some_and(|b| b != datom.added) {
                continue;
            }
            read.push(datom);
        }
        let read = std::rc::Rc::new(read);
        ctx.scans.borrow_mut().insert(key, read.clone());
        Ok(read)
    }
}

/// A fixed value position as the index holds it. A ref attribute's value
/// may be written as an id or an ident; `None` if it names no entity.
fn fixed_value(db: &Db, attribute: Option<&Attribute>, v: &Value) -> Option<Value> {
    Some(match (attribute, v) {
        (Some(a), v) if a.is_ref() => Value::Ref(entity_of(db, v)?),
        (Some(a), Value::Long(n)) if a.value_type == crate::value::ValueType::Double => {
            Value::Double(*n as f64)
        }
        (_, v) => v.clone(),
    })
}

/// The free positions' values from one datom, or `None` if a variable that
/// appears twice gets two different values.
fn assign(
    db: &Db,
    positions: &[Pos],
    datom: &Datom,
    clause: &Clause,
) -> Result<Option<Vec<(usize, Value)>>, QueryError> {
    let mut out: Assignment = Vec::new();
    for (i, pos) in positions.iter().enumerate() {
        let Pos::Free(Some(column)) = pos else {
            continue;
        };
        let value = match i {
            0 => Value::Ref(datom.e),
            1 => Value::Keyword(
                db.schema()
                    .attribute(datom.a)
                    .map(|a| a.ident.clone())
                    .ok_or_else(|| {
                        QueryError::Store(format!(
                            "{}: datom of unknown attribute",
                            clause.position
                        ))
                    })?,
            ),
            2 => datom.v.clone(),
            3 => Value::Ref(datom.tx),
            _ => Value::Boolean(datom.added),
        };
        match out.iter().find(|(c, _)| c == column) {
            Some((_, earlier)) if *earlier != value => return Ok(None),
            Some(_) => {}
            None => out.push((*column, value)),
        }
    }
    Ok(Some(out))
}

/// Groups `rel` by the non-aggregate `:find` elements and folds each group.
fn aggregate(find: &[FindElem], rel: Rel) -> Result<Vec<Vec<Value>>, QueryError> {
    let column = |v: &Var| rel.column(v).expect("projected");
    let keys: Vec<usize> = find
        .iter()
        .filter_map(|e| match e {
            FindElem::Var(v) | FindElem::Pull { var: v, .. } => Some(column(v)),
            FindElem::Aggregate { .. } => None,
        })
        .collect();
    let mut groups: HashMap<Vec<Value>, Vec<&Vec<Value>>> = HashMap::new();
    for row in &rel.rows {
        groups
            .entry(keys.iter().map(|&k| row[k].clone()).collect())
            .or_default()
            .push(row);
    }
    if groups.is_empty() && keys.is_empty() {
        // An aggregate over nothing: (count ?x) of no rows is 0.
        groups.insert(Vec::new(), Vec::new());
    }
    let mut out = Vec::with_capacity(groups.len());
    for (_, members) in groups {
        let mut row = Vec::with_capacity(find.len());
        for elem in find {
            row.push(match elem {
                FindElem::Var(v) | FindElem::Pull { var: v, .. } => members[0][column(v)].clone(),
                FindElem::Aggregate { function, var } => {
                    let values: Vec<&Value> = members.iter().map(|m| &m[column(var)]).collect();
                    match fold(function, &values)? {
                        Some(v) => v,
                        None => continue,
                    }
                }
            });
        }
        if row.len() == find.len() {
            out.push(row);
        }
    }
    Ok(out)
}

fn fold(function: &str, values: &[&Value]) -> Result<Option<Value>, QueryError> {
    let number = |v: &Value| match v {
        Value::Long(n) => Ok(*n as f64),
        Value::Double(x) => Ok(*x),
        other => Err(QueryError::Function(format!(
            "({function} ...): {other} is not a number"
        ))),
    };
    let order = |a: &&&Value, b: &&&Value| functions::compare(a, b).unwrap_or_else(|| a.cmp(b));
    Ok(match function {
        "count" => Some(Value::Long(values.len() as i64)),
        "count-distinct" => Some(Value::Long(
            values.iter().collect::<BTreeSet<_>>().len() as i64
        )),
        "min" => values.iter().min_by(order).map(|v| (*v).clone()),
        "max" => values.iter().max_by(order).map(|v| (*v).clone()),
        "sum" => {
            if values.iter().all(|v| matches!(v, Value::Long(_))) {
                let mut total: i64 = 0;
                for v in values {
                    total = total
                        .checked_add(v.as_long().expect("checked"))
                        .ok_or_else(|| QueryError::Function("(sum ...) overflowed".into()))?;
                }
                Some(Value::Long(total))
            } else {
                Some(Value::Double(
                    values.iter().map(|v| number(v)).sum::<Result<f64, _>>()?,
                ))
            }
        }
        "avg" if values.is_empty() => None,
        "avg" => Some(Value::Double(
            values.iter().map(|v| number(v)).sum::<Result<f64, _>>()? / values.len() as f64,
        )),
        other => return Err(QueryError::Function(format!("unknown aggregate {other}"))),
    })
}
