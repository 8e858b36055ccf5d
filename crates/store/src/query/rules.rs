//! Rules: seeded, semi-naive, bottom-up evaluation.
//!
//! A call such as `(ancestor ?r ?a)` with `?r` bound is a *demand*: the rule
//! with its first argument bound (its adornment, `bf`) for these values of
//! `?r` (its seeds). Each (rule, adornment) pair has a table of the seeds
//! asked of it and the answers found. A call inside a rule body adds seeds to
//! the table it calls and reads the answers that table has so far; so the
//! evaluation only ever looks at what the query's own seeds lead to (the
//! lineage of one recipe, not the whole fork graph), which is what the
//! "magic sets" rewriting of textbook datalog achieves.
//!
//! The tables grow in rounds until a round adds nothing (a fixpoint). Each
//! round is semi-naive: a rule body is evaluated for the seeds new in the last
//! round against all answers, and for all seeds against the answers new in
//! the last round (one pass per rule call in the body), so no derivation is
//! made from old facts alone twice. A body whose rule calls sit inside an
//! `or` is evaluated naively (all seeds, all answers), which is slower but
//! equally right. `not` is evaluated apart, to completion, before its answers
//! are used; a rule that depends on itself through `not` is refused.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::ast::{Clause, ClauseKind, RuleDef, Term, Var};
use super::eval::{eval_clauses, Ctx, Rel};
use super::QueryError;
use crate::value::{EntityId, Value};

/// A rule and which of its arguments a call binds.
type Key = (String, Vec<bool>);

#[derive(Default)]
struct Table {
    /// Every seed asked of this table (values of the bound arguments).
    seeds: HashSet<Vec<Value>>,
    /// Seeds asked since the round started; next round's delta.
    new_seeds: Vec<Vec<Value>>,
    /// Seeds new in the last round: this round's delta.
    delta_seeds: Vec<Vec<Value>>,
    /// Every answer (all arguments), and grouped by their seed.
    answers: HashSet<Vec<Value>>,
    by_seed: HashMap<Vec<Value>, Vec<Vec<Value>>>,
    /// Answers found since the round started; next round's delta.
    new_answers: Vec<Vec<Value>>,
    /// Answers new in the last round, grouped by seed: this round's delta.
    delta_by_seed: HashMap<Vec<Value>, Vec<Vec<Value>>>,
}

/// The fixpoint a rule body is being evaluated in.
pub(super) struct Scope<'t> {
    tables: Option<&'t mut BTreeMap<Key, Table>>,
    /// The index in the rule body of the call that reads delta answers this
    /// pass; every other call reads all answers.
    delta_call: Option<usize>,
    /// The index in the rule body of the clause being evaluated (`None` inside
    /// an `or`, whose calls read all answers).
    pub current: Option<usize>,
}

impl Scope<'_> {
    /// Outside any rule: a call is evaluated to completion on its own.
    pub(super) fn top() -> Scope<'static> {
        Scope {
            tables: None,
            delta_call: None,
            current: None,
        }
    }

    /// The same fixpoint, for clauses nested in an `or`.
    pub(super) fn nested(&mut self) -> Scope<'_> {
        Scope {
            tables: self.tables.as_deref_mut(),
            delta_call: None,
            current: None,
        }
    }
}

/// Evaluates the rule call `(name args...)` against `rel`.
pub(super) fn eval_call(
    ctx: &Ctx,
    rel: Rel,
    name: &str,
    args: &[Term],
    clause: &Clause,
    scope: &mut Scope,
) -> Result<Rel, QueryError> {
    let key: Key = (name.to_owned(), bound_arguments(&rel, args));
    let seeds: Vec<Vec<Value>> = rel
        .rows
        .iter()
        .map(|r| seed_of(&rel, args, &key.1, r))
        .collect();

    // Answers for each seed: from the enclosing fixpoint's tables, or from a
    // complete evaluation of this call on its own.
    let owned;
    let answers: &HashMap<Vec<Value>, Vec<Vec<Value>>> = match scope.tables.as_deref_mut() {
        Some(tables) => {
            let delta = scope.delta_call.is_some() && scope.delta_call == scope.current;
            table_answers(tables, &key, &seeds, delta)
        }
        None => {
            owned = complete(ctx, &key, seeds.iter().cloned().collect(), clause)?;
            &owned
        }
    };

    // Join: each row with each answer for its seed, binding free arguments.
    let mut vars = rel.vars.clone();
    let outputs = free_outputs(&mut vars, args, &key.1);
    let rows = join_answers(
        ctx,
        rel.rows.iter().zip(&seeds),
        answers,
        &outputs,
        vars.len(),
    )?;
    Ok(Rel { vars, rows })
}

/// Which of a call's arguments are bound: constants, and variables `rel`
/// binds.
fn bound_arguments(rel: &Rel, args: &[Term]) -> Vec<bool> {
    args.iter()
        .map(|t| match t {
            Term::Var(v) => rel.column(v).is_some(),
            Term::Const(_) => true,
            Term::Blank | Term::Src(_) => false,
        })
        .collect()
}

/// The seed a row of `rel` asks: the values of the call's bound arguments.
fn seed_of(rel: &Rel, args: &[Term], bound: &[bool], row: &[Value]) -> Vec<Value> {
    args.iter()
        .zip(bound)
        .filter(|(_, b)| **b)
        .map(|(t, _)| match t {
            Term::Var(v) => row[rel.column(v).expect("bound")].clone(),
            Term::Const(c) => c.clone(),
            _ => unreachable!("only vars and constants are bound"),
        })
        .collect()
}

/// Asks `seeds` of `key`'s table in the enclosing fixpoint, and returns the
/// answers it has so far: those new in the last round if `delta`.
fn table_answers<'t>(
    tables: &'t mut BTreeMap<Key, Table>,
    key: &Key,
    seeds: &[Vec<Value>],
    delta: bool,
) -> &'t HashMap<Vec<Value>, Vec<Vec<Value>>> {
    let table = tables.entry(key.clone()).or_default();
    for seed in seeds {
        if table.seeds.insert(seed.clone()) {
            table.new_seeds.push(seed.clone());
        }
    }
    let table = &tables[key];
    if delta {
        &table.delta_by_seed
    } else {
        &table.by_seed
    }
}

/// The output column of each of a call's free variables, added to `vars`
/// where new; `None` for the other arguments.
fn free_outputs(vars: &mut Vec<Var>, args: &[Term], bound: &[bool]) -> Vec<Option<usize>> {
    let mut outputs: Vec<Option<usize>> = Vec::with_capacity(args.len());
    for (term, is_bound) in args.iter().zip(bound) {
        outputs.push(match term {
            Term::Var(v) if !is_bound => {
                Some(vars.iter().position(|x| x == v).unwrap_or_else(|| {
                    vars.push(v.clone());
                    vars.len() - 1
                }))
            }
            _ => None,
        });
    }
    outputs
}

/// Each row with each answer for its seed, the answer's free arguments in
/// their `outputs` columns of rows `width` wide. An answer that gives one
/// column two values matches nothing.
fn join_answers<'r>(
    ctx: &Ctx,
    rows_and_seeds: impl Iterator<Item = (&'r Vec<Value>, &'r Vec<Value>)>,
    answers: &HashMap<Vec<Value>, Vec<Vec<Value>>>,
    outputs: &[Option<usize>],
    width: usize,
) -> Result<Vec<Vec<Value>>, QueryError> {
    let mut rows = Vec::new();
    let mut set = vec![false; width];
    for (row, seed) in rows_and_seeds {
        'answers: for answer in answers.get(seed).into_iter().flatten() {
            ctx.spend(1)?;
            let mut out = row.clone();
            out.resize(width, Value::Boolean(false));
            set.fill(false);
            for (i, column) in outputs.iter().enumerate() {
                let Some(column) = *column else {
                    continue;
                };
                if set[column] && out[column] != answer[i] {
                    continue 'answers;
                }
                out[column] = answer[i].clone();
                set[column] = true;
            }
            rows.push(out);
        }
    }
    Ok(rows)
}

/// Evaluates `key` for `seeds` to its fixpoint, in tables of its own, and
/// returns its answers grouped by seed.
fn complete(
    ctx: &Ctx,
    key: &Key,
    seeds: HashSet<Vec<Value>>,
    clause: &Clause,
) -> Result<HashMap<Vec<Value>, Vec<Vec<Value>>>, QueryError> {
    if ctx.evaluating.borrow().contains(&key.0) {
        return Err(QueryError::Rule {
            position: clause.position.clone(),
            message: format!(
                "rule {} depends on itself through not, which has no meaning",
                key.0
            ),
        });
    }
    ctx.evaluating.borrow_mut().push(key.0.clone());
    let result = match right_linear(ctx, key) {
        Some(plan) => linear(ctx, key, &plan, seeds),
        None => fixpoint(ctx, key, seeds)
            .map(|mut tables| tables.remove(key).map(|t| t.by_seed).unwrap_or_default()),
    };
    ctx.evaluating.borrow_mut().pop();
    result
}

/// A recursive rule whose recursion only carries its free arguments up
/// unchanged, like `ancestor` asked with `?r` bound:
///
/// ```text
/// (ancestor ?r ?a) :- [?r :recipe/forked-from ?a]
/// (ancestor ?r ?a) :- [?r :recipe/forked-from ?p] (ancestor ?p ?a)
/// ```
///
/// The answers for `?r` are then the base answers of every seed reachable
/// from `?r` through the recursive bodies: the ancestors of `?r` are the
/// parents of everything on its lineage. Computed that way the cost is
/// linear in the lineage; the general fixpoint would compute the ancestors
/// of every recipe on the lineage too, which is quadratic (the classic
/// failure on genealogies, which right-linear evaluation avoids).
struct LinearPlan {
    /// Definitions without rule calls.
    base: Vec<RuleDef>,
    /// Recursive definitions, their bodies without the call, and the call's
    /// arguments.
    steps: Vec<(RuleDef, Vec<Term>)>,
}

fn right_linear(ctx: &Ctx, key: &Key) -> Option<LinearPlan> {
    let defs = ctx.rules.get(&key.0)?;
    let mut plan = LinearPlan {
        base: Vec::new(),
        steps: Vec::new(),
    };
    for def in defs {
        let calls: Vec<usize> = (0..def.body.len())
            .filter(|&i| calls_rule(&def.body[i]))
            .collect();
        match calls.as_slice() {
            [] => plan.base.push(def.as_ref().clone()),
            [at] => {
                let ClauseKind::Rule { name, args } = &def.body[*at].kind else {
                    return None;
                };
                if name != &key.0 {
                    return None;
                }
                let rest: Vec<Clause> = def
                    .body
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| i != at)
                    .map(|(_, c)| c.clone())
                    .collect();
                if !carries_free_arguments(def, key, &rest, args) {
                    return None;
                }
                let step = RuleDef {
                    body: rest,
                    ..def.as_ref().clone()
                };
                plan.steps.push((step, args.clone()));
            }
            _ => return None,
        }
    }
    (!plan.steps.is_empty()).then_some(plan)
}

/// Whether the recursive call `args` passes each free head variable up in
/// its own position, using it nowhere else, and gets its bound arguments
/// from the rest of the body or the bound head.
fn carries_free_arguments(def: &RuleDef, key: &Key, rest: &[Clause], args: &[Term]) -> bool {
    let elsewhere: std::collections::BTreeSet<Var> = rest.iter().flat_map(Clause::vars).collect();
    let bound_head: Vec<&Var> = def
        .head
        .iter()
        .zip(&key.1)
        .filter(|(_, b)| **b)
        .map(|(v, _)| v)
        .collect();
    key.1.iter().enumerate().all(|(i, bound)| {
        let head = &def.head[i];
        if *bound {
            match &args[i] {
                Term::Const(_) => true,
                Term::Var(v) => elsewhere.contains(v) || bound_head.contains(&v),
                _ => false,
            }
        } else {
            let passed = Term::Var(head.clone());
            args[i] == passed
                && !elsewhere.contains(head)
                && !bound_head.contains(&head)
                && args.iter().filter(|a| **a == passed).count() == 1
        }
    })
}

/// Whether a clause calls a rule, at any depth.
fn calls_rule(clause: &Clause) -> bool {
    match &clause.kind {
        ClauseKind::Rule { .. } => true,
        ClauseKind::Or { branches, .. } => branches.iter().flatten().any(calls_rule),
        ClauseKind::Not { clauses, .. } => clauses.iter().any(calls_rule),
        _ => false,
    }
}

/// Evaluates a right-linear rule: the seeds reachable from each seed, then
/// the base answers of those, carried back to the seed they were asked for.
fn linear(
    ctx: &Ctx,
    key: &Key,
    plan: &LinearPlan,
    seeds: HashSet<Vec<Value>>,
) -> Result<HashMap<Vec<Value>, Vec<Vec<Value>>>, QueryError> {
    // Every seed met gets a number once; the link graph and the searches
    // below work on numbers, so a seed's values are hashed once, not at
    // every step.
    let graph = reach(ctx, key, plan, &seeds)?;
    let base = base_answers(ctx, key, plan, &graph)?;
    carry_back(ctx, key, &graph, &base, seeds)
}

/// The seeds reachable from `seeds` through the plan's recursive steps,
/// numbered, with the links between them.
fn reach(
    ctx: &Ctx,
    key: &Key,
    plan: &LinearPlan,
    seeds: &HashSet<Vec<Value>>,
) -> Result<SeedGraph, QueryError> {
    let mut graph = SeedGraph::default();
    let mut frontier: Vec<usize> = seeds.iter().map(|s| graph.number(s).0).collect();
    while !frontier.is_empty() {
        ctx.spend(frontier.len() as u64)?;
        let values: Vec<Vec<Value>> = frontier.iter().map(|&n| graph.seeds[n].clone()).collect();
        let mut next = Vec::new();
        for (step, args) in &plan.steps {
            for (from, to) in step_links(ctx, key, step, args, &values)? {
                let (from, _) = graph.number(&from);
                let (to, new) = graph.number(&to);
                if new {
                    next.push(to);
                }
                graph.edges[from].push(to);
            }
        }
        frontier = next;
    }
    Ok(graph)
}

/// The base answers of every seed reached, by seed number.
fn base_answers(
    ctx: &Ctx,
    key: &Key,
    plan: &LinearPlan,
    graph: &SeedGraph,
) -> Result<Vec<Vec<Vec<Value>>>, QueryError> {
    let mut base: Vec<Vec<Vec<Value>>> = vec![Vec::new(); graph.seeds.len()];
    for def in &plan.base {
        // `[?bound :attr ?free]`, head `(rule ?bound ?free)`: the answers are
        // each seed's values of the attribute, read directly.
        if let Some((db, attr)) = direct_base(ctx, key, def) {
            for (n, seed) in graph.seeds.iter().enumerate() {
                let Some(e) = super::eval::entity_of(db, &seed[0]) else {
                    continue;
                };
                for value in db.values(e, attr)? {
                    ctx.spend(1)?;
                    let answer = if key.1[0] {
                        vec![seed[0].clone(), value]
                    } else {
                        vec![value, seed[0].clone()]
                    };
                    base[n].push(answer);
                }
            }
            continue;
        }
        let out = eval_clauses(
            ctx,
            start_relation(def, key, &graph.seeds),
            &def.body,
            &mut Scope::top(),
        )?;
        let columns = head_columns(def, &out)?;
        for row in &out.rows {
            let answer: Vec<Value> = columns.iter().map(|&c| row[c].clone()).collect();
            if let Some(&n) = graph.numbers.get(&seed_part(&key.1, &answer)) {
                base[n].push(answer);
            }
        }
    }
    Ok(base)
}

/// Each asked seed gets the base answers of all it reaches, under its
/// own bound values.
fn carry_back(
    ctx: &Ctx,
    key: &Key,
    graph: &SeedGraph,
    base: &[Vec<Vec<Value>>],
    seeds: HashSet<Vec<Value>>,
) -> Result<HashMap<Vec<Value>, Vec<Vec<Value>>>, QueryError> {
    let mut by_seed: HashMap<Vec<Value>, Vec<Vec<Value>>> = HashMap::new();
    let mut seen = vec![false; graph.seeds.len()];
    for seed in seeds {
        let start = graph.numbers[&seed];
        seen.fill(false);
        seen[start] = true;
        let mut stack = vec![start];
        let mut answers: HashSet<Vec<Value>> = HashSet::new();
        while let Some(at) = stack.pop() {
            for answer in &base[at] {
                ctx.spend(1)?;
                let mut own = seed.iter();
                let tuple = answer
                    .iter()
                    .zip(&key.1)
                    .map(|(v, b)| {
                        if *b {
                            own.next().unwrap_or(v).clone()
                        } else {
                            v.clone()
                        }
                    })
                    .collect();
                answers.insert(tuple);
            }
            for &next in &graph.edges[at] {
                if !seen[next] {
                    seen[next] = true;
                    stack.push(next);
                }
            }
        }
        by_seed.insert(seed, answers.into_iter().collect());
    }
    Ok(by_seed)
}

/// The seeds a right-linear evaluation meets, numbered, and the links
/// between them.
#[derive(Default)]
struct SeedGraph {
    seeds: Vec<Vec<Value>>,
    numbers: HashMap<Vec<Value>, usize>,
    edges: Vec<Vec<usize>>,
}

impl SeedGraph {
    /// The number of `seed`, and whether it is new.
    fn number(&mut self, seed: &[Value]) -> (usize, bool) {
        if let Some(&n) = self.numbers.get(seed) {
            return (n, false);
        }
        let n = self.seeds.len();
        self.seeds.push(seed.to_vec());
        self.numbers.insert(seed.to_vec(), n);
        self.edges.push(Vec::new());
        (n, true)
    }
}

/// A seed and a next seed one recursive step leads to.
type Link = (Vec<Value>, Vec<Value>);

/// The (seed, next seed) pairs one recursive step makes from `frontier`.
fn step_links(
    ctx: &Ctx,
    key: &Key,
    step: &RuleDef,
    args: &[Term],
    frontier: &[Vec<Value>],
) -> Result<Vec<Link>, QueryError> {
    if let Some((db, attr)) = direct_link(ctx, key, step, args) {
        let mut links = Vec::new();
        for seed in frontier {
            let Some(e) = super::eval::entity_of(db, &seed[0]) else {
                continue;
            };
            for value in db.values(e, attr)? {
                ctx.spend(1)?;
                links.push((seed.clone(), vec![value]));
            }
        }
        return Ok(links);
    }
    let out = eval_clauses(
        ctx,
        start_relation(step, key, frontier),
        &step.body,
        &mut Scope::top(),
    )?;
    let from_columns: Vec<usize> = bound_head(step, key)
        .map(|v| out.column(v).expect("seeded"))
        .collect();
    let mut links = Vec::with_capacity(out.rows.len());
    for row in &out.rows {
        let from: Vec<Value> = from_columns.iter().map(|&c| row[c].clone()).collect();
        let to: Vec<Value> = args
            .iter()
            .zip(&key.1)
            .filter(|(_, b)| **b)
            .filter_map(|(t, _)| match t {
                Term::Var(v) => out.column(v).map(|c| row[c].clone()),
                Term::Const(c) => Some(c.clone()),
                _ => None,
            })
            .collect();
        links.push((from, to));
    }
    Ok(links)
}

/// A step whose body is the one data pattern `[?head :attr ?next]`, from
/// the one bound head variable to the call's one bound argument (a fork
/// link, a parent link): its next seeds are the values of one attribute of
/// each seed, read directly. The general evaluator would plan a one-clause
/// body and build a relation for every step of the walk.
fn direct_link<'c>(
    ctx: &'c Ctx,
    key: &Key,
    step: &RuleDef,
    args: &[Term],
) -> Option<(&'c crate::db::Db, EntityId)> {
    let bound: Vec<usize> = (0..key.1.len()).filter(|&i| key.1[i]).collect();
    let ([at], [clause]) = (bound.as_slice(), step.body.as_slice()) else {
        return None;
    };
    let ClauseKind::Data { src, terms } = &clause.kind else {
        return None;
    };
    let [Term::Var(head), Term::Const(Value::Keyword(attr)), Term::Var(next)] = terms.as_slice()
    else {
        return None;
    };
    if *head != step.head[*at] || args[*at] != Term::Var(next.clone()) || head == next {
        return None;
    }
    let db = ctx.source(src, clause).ok()?;
    let attribute = db.attribute(attr).ok()?;
    Some((db, attribute.id))
}

/// A base case whose body is the one data pattern `[?bound :attr ?free]`
/// over its two head variables, one bound by the call and one free.
fn direct_base<'c>(
    ctx: &'c Ctx,
    key: &Key,
    def: &RuleDef,
) -> Option<(&'c crate::db::Db, EntityId)> {
    let ([first, second], [clause]) = (def.head.as_slice(), def.body.as_slice()) else {
        return None;
    };
    let (bound, free) = match key.1.as_slice() {
        [true, false] => (first, second),
        [false, true] => (second, first),
        _ => return None,
    };
    let ClauseKind::Data { src, terms } = &clause.kind else {
        return None;
    };
    let [Term::Var(h), Term::Const(Value::Keyword(attr)), Term::Var(f)] = terms.as_slice() else {
        return None;
    };
    if h != bound || f != free || h == f {
        return None;
    }
    let db = ctx.source(src, clause).ok()?;
    let attribute = db.attribute(attr).ok()?;
    Some((db, attribute.id))
}

fn bound_head<'d>(def: &'d RuleDef, key: &'d Key) -> impl Iterator<Item = &'d Var> {
    def.head
        .iter()
        .zip(&key.1)
        .filter(|(_, b)| **b)
        .map(|(v, _)| v)
}

fn fixpoint(
    ctx: &Ctx,
    root: &Key,
    seeds: HashSet<Vec<Value>>,
) -> Result<BTreeMap<Key, Table>, QueryError> {
    let mut tables: BTreeMap<Key, Table> = BTreeMap::new();
    let table = tables.entry(root.clone()).or_default();
    table.new_seeds = seeds.iter().cloned().collect();
    table.seeds = seeds;
    loop {
        // Promote what the last round found to this round's deltas.
        let mut changed = false;
        let mut any_delta_answers = false;
        for (key, table) in tables.iter_mut() {
            table.delta_seeds = std::mem::take(&mut table.new_seeds);
            table.delta_by_seed.clear();
            let new_answers = std::mem::take(&mut table.new_answers);
            changed |= !table.delta_seeds.is_empty() || !new_answers.is_empty();
            any_delta_answers |= !new_answers.is_empty();
            for answer in new_answers {
                table
                    .delta_by_seed
                    .entry(seed_part(&key.1, &answer))
                    .or_default()
                    .push(answer);
            }
        }
        if !changed {
            return Ok(tables);
        }
        let keys: Vec<Key> = tables.keys().cloned().collect();
        for key in keys {
            let defs = ctx.rules.get(&key.0).cloned().unwrap_or_default();
            let defs: Vec<&RuleDef> = defs.iter().map(|d| d.as_ref()).collect();
            for def in &defs {
                let naive = has_nested_calls(&def.body);
                let (delta_seeds, all_seeds) = {
                    let t = &tables[&key];
                    (
                        t.delta_seeds.clone(),
                        t.seeds.iter().cloned().collect::<Vec<_>>(),
                    )
                };
                if naive {
                    evaluate(ctx, &mut tables, &key, def, &all_seeds, None)?;
                    continue;
                }
                if !delta_seeds.is_empty() {
                    evaluate(ctx, &mut tables, &key, def, &delta_seeds, None)?;
                }
                if any_delta_answers {
                    for (i, clause) in def.body.iter().enumerate() {
                        if matches!(clause.kind, ClauseKind::Rule { .. }) {
                            evaluate(ctx, &mut tables, &key, def, &all_seeds, Some(i))?;
                        }
                    }
                }
            }
        }
    }
}

/// The values of an answer's bound arguments: the seed it answers.
fn seed_part(bound: &[bool], answer: &[Value]) -> Vec<Value> {
    answer
        .iter()
        .zip(bound)
        .filter(|(_, b)| **b)
        .map(|(v, _)| v.clone())
        .collect()
}

/// Evaluates one definition of `key`'s rule for `seeds`, recording new answers.
fn evaluate(
    ctx: &Ctx,
    tables: &mut BTreeMap<Key, Table>,
    key: &Key,
    def: &RuleDef,
    seeds: &[Vec<Value>],
    delta_call: Option<usize>,
) -> Result<(), QueryError> {
    if seeds.is_empty() {
        return Ok(());
    }
    let start = start_relation(def, key, seeds);
    let mut scope = Scope {
        tables: Some(tables),
        delta_call,
        current: None,
    };
    let out = eval_clauses(ctx, start, &def.body, &mut scope)?;
    let columns = head_columns(def, &out)?;
    let table = tables
        .get_mut(key)
        .expect("the table being evaluated exists");
    for row in &out.rows {
        let answer: Vec<Value> = columns.iter().map(|&c| row[c].clone()).collect();
        if table.answers.insert(answer.clone()) {
            ctx.spend(1)?;
            table
                .by_seed
                .entry(seed_part(&key.1, &answer))
                .or_default()
                .push(answer.clone());
            table.new_answers.push(answer);
        }
    }
    Ok(())
}

/// The relation a body starts from: the bound head variables, one row per
/// seed. A head that names one variable twice binds it once; a seed that
/// disagrees with itself there matches nothing.
fn start_relation(def: &RuleDef, key: &Key, seeds: &[Vec<Value>]) -> Rel {
    let bound: Vec<&Var> = bound_head(def, key).collect();
    let mut start = Rel::default();
    let mut first_at: Vec<usize> = Vec::new();
    for (i, v) in bound.iter().enumerate() {
        if !start.vars.contains(v) {
            start.vars.push((*v).clone());
            first_at.push(i);
        }
    }
    for seed in seeds {
        let consistent = bound
            .iter()
            .enumerate()
            .all(|(i, v)| seed[bound.iter().position(|x| x == v).expect("present")] == seed[i]);
        if consistent {
            start
                .rows
                .push(first_at.iter().map(|&i| seed[i].clone()).collect());
        }
    }
    start
}

/// Where each head variable is in the body's result, or an unsafe-rule error.
fn head_columns(def: &RuleDef, out: &Rel) -> Result<Vec<usize>, QueryError> {
    def.head
        .iter()
        .map(|v| {
            out.column(v).ok_or_else(|| QueryError::Rule {
                position: def.position.clone(),
                message: format!("unsafe rule {}: its body does not bind {v}", def.name),
            })
        })
        .collect()
}

/// Whether a body has rule calls inside `or` (which semi-naive passes do not
/// target one by one).
fn has_nested_calls(body: &[Clause]) -> bool {
    fn calls(clause: &Clause) -> bool {
        match &clause.kind {
            ClauseKind::Rule { .. } => true,
            ClauseKind::Or { branches, .. } => branches.iter().flatten().any(calls),
            _ => false,
        }
    }
    body.iter()
        .any(|c| matches!(c.kind, ClauseKind::Or { .. }) && calls(c))
}
