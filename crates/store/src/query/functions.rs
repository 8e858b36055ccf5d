//! The predicates and functions a clause may call.
//!
//! `[(< ?m 30)]` is a predicate: the row stays if the call is true.
//! `[(str ?a " " ?b) ?c]` is a function: its result binds `?c`. Both call
//! `call`. Names follow Clojure's, which is what Datomic queries use
//! (`str/includes?` and `clojure.string/includes?` are the same function).

use std::cmp::Ordering;

use super::QueryError;
use crate::db::Db;
use crate::value::{Keyword, Value};

/// An argument: a value, or a database for `missing?` and `get-else`.
pub(super) enum Arg<'a> {
    Value(Value),
    Db(&'a Db),
}

/// Every name `call` answers to, for the error that lists them.
pub(super) const NAMES: &[&str] = &[
    "=",
    "==",
    "not=",
    "!=",
    "<",
    ">",
    "<=",
    ">=",
    "+",
    "-",
    "*",
    "/",
    "quot",
    "rem",
    "mod",
    "inc",
    "dec",
    "min",
    "max",
    "str",
    "subs",
    "count",
    "str/includes?",
    "str/starts-with?",
    "str/ends-with?",
    "str/lower-case",
    "str/upper-case",
    "str/blank?",
    "identity",
    "ground",
    "missing?",
    "get-else",
    "even?",
    "odd?",
    "zero?",
    "pos?",
    "neg?",
];

fn fail(name: &str, why: impl std::fmt::Display) -> QueryError {
    QueryError::Function(format!("({name} ...): {why}"))
}

/// Whether a function name is known (checked when a query is planned).
pub(super) fn is_known(name: &str) -> bool {
    NAMES.contains(&canonical(name))
}

fn canonical(name: &str) -> &str {
    match name.strip_prefix("clojure.string/") {
        Some(rest) => match rest {
            "includes?" => "str/includes?",
            "starts-with?" => "str/starts-with?",
            "ends-with?" => "str/ends-with?",
            "lower-case" => "str/lower-case",
            "upper-case" => "str/upper-case",
            "blank?" => "str/blank?",
            _ => name,
        },
        None => name,
    }
}

/// Whether a function's result keeps a row, as a predicate.
pub(super) fn truthy(value: &Value) -> bool {
    !matches!(value, Value::Boolean(false))
}

/// Calls `name` on `args`. `None` means "no value" (`get-else` aside, a
/// function that finds nothing drops the row).
pub(super) fn call(name: &str, args: &[Arg]) -> Result<Option<Value>, QueryError> {
    let name = canonical(name);
    if name == "missing?" || name == "get-else" {
        return call_with_db(name, args);
    }
    let values = values_of(name, args)?;
    match name {
        "=" | "==" | "not=" | "!=" => equality(name, &values),
        "<" | ">" | "<=" | ">=" => comparison(name, &values),
        "+" | "-" | "*" | "/" | "quot" | "rem" | "mod" | "min" | "max" => {
            arithmetic(name, &values).map(Some)
        }
        "inc" | "dec" => increment(name, &values),
        "str" | "subs" | "count" => core_string_function(name, &values),
        "str/includes?" | "str/starts-with?" | "str/ends-with?" | "str/lower-case"
        | "str/upper-case" | "str/blank?" => clojure_string_function(name, &values),
        "identity" | "ground" => {
            arity(name, &values, 1)?;
            Ok(Some(values[0].clone()))
        }
        "even?" | "odd?" | "zero?" | "pos?" | "neg?" => number_predicate(name, &values),
        _ => Err(QueryError::Function(format!(
            "unknown function {name}; known: {}",
            NAMES.join(" ")
        ))),
    }
}

/// The arguments of a function of values only.
fn values_of<'a>(name: &str, args: &'a [Arg]) -> Result<Vec<&'a Value>, QueryError> {
    args.iter()
        .map(|a| match a {
            Arg::Value(v) => Ok(v),
            Arg::Db(_) => Err(fail(name, "takes values, not a database")),
        })
        .collect()
}

/// An error unless there are `n` arguments.
fn arity(name: &str, values: &[&Value], n: usize) -> Result<(), QueryError> {
    if values.len() == n {
        Ok(())
    } else {
        Err(fail(
            name,
            format!("takes {n} arguments, got {}", values.len()),
        ))
    }
}

/// A string argument's text.
fn string_of(name: &str, v: &Value) -> Result<String, QueryError> {
    match v {
        Value::String(s) => Ok(s.to_string()),
        other => Err(fail(name, format!("{other} is not a string"))),
    }
}

/// A predicate's answer.
fn boolean(b: bool) -> Result<Option<Value>, QueryError> {
    Ok(Some(Value::Boolean(b)))
}

/// `=`, `==`, `not=` and `!=`: equal as `compare` has it, across number types.
fn equality(name: &str, values: &[&Value]) -> Result<Option<Value>, QueryError> {
    let equal = |w: &[&Value]| compare(w[0], w[1]) == Some(Ordering::Equal);
    match name {
        "=" | "==" => boolean(values.windows(2).all(equal)),
        _ => boolean(values.windows(2).any(|w| !equal(w))),
    }
}

/// `<`, `>`, `<=` and `>=`, over every neighbouring pair.
fn comparison(name: &str, values: &[&Value]) -> Result<Option<Value>, QueryError> {
    let mut ok = true;
    for w in values.windows(2) {
        let order = compare(w[0], w[1])
            .ok_or_else(|| fail(name, format!("cannot compare {} with {}", w[0], w[1])))?;
        ok &= match name {
            "<" => order == Ordering::Less,
            ">" => order == Ordering::Greater,
            "<=" => order != Ordering::Greater,
            _ => order != Ordering::Less,
        };
    }
    boolean(ok)
}

/// `inc` and `dec`: one added or taken away.
fn increment(name: &str, values: &[&Value]) -> Result<Option<Value>, QueryError> {
    arity(name, values, 1)?;
    let one = Value::Long(1);
    arithmetic(if name == "inc" { "+" } else { "-" }, &[values[0], &one]).map(Some)
}

/// `str`, `subs` and `count`, Clojure's core functions on strings.
fn core_string_function(name: &str, values: &[&Value]) -> Result<Option<Value>, QueryError> {
    match name {
        "str" => Ok(Some(Value::from(
            values
                .iter()
                .map(|v| match v {
                    Value::String(s) => s.to_string(),
                    Value::Keyword(k) => k.to_string(),
                    other => other.to_string(),
                })
                .collect::<String>(),
        ))),
        "subs" => subs(name, values),
        _ => {
            arity(name, values, 1)?;
            Ok(Some(Value::Long(
                string_of(name, values[0])?.chars().count() as i64,
            )))
        }
    }
}

/// `(subs s start)` and `(subs s start end)`, in characters.
fn subs(name: &str, values: &[&Value]) -> Result<Option<Value>, QueryError> {
    if !(2..=3).contains(&values.len()) {
        return Err(fail(name, "takes (subs s start) or (subs s start end)"));
    }
    let s: Vec<char> = string_of(name, values[0])?.chars().collect();
    let index = |v: &Value| {
        v.as_long()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| fail(name, format!("{v} is not an index")))
    };
    let start = index(values[1])?;
    let end = values.get(2).map_or(Ok(s.len()), |v| index(v))?;
    if start > end || end > s.len() {
        return Err(fail(
            name,
            format!(
                "{start}..{end} is outside a string of {} characters",
                s.len()
            ),
        ));
    }
    Ok(Some(Value::from(s[start..end].iter().collect::<String>())))
}

/// `clojure.string`'s functions (`str/...`).
fn clojure_string_function(name: &str, values: &[&Value]) -> Result<Option<Value>, QueryError> {
    match name {
        "str/includes?" | "str/starts-with?" | "str/ends-with?" => {
            arity(name, values, 2)?;
            let (s, part) = (string_of(name, values[0])?, string_of(name, values[1])?);
            boolean(match name {
                "str/includes?" => s.contains(&part),
                "str/starts-with?" => s.starts_with(&part),
                _ => s.ends_with(&part),
            })
        }
        "str/lower-case" => {
            arity(name, values, 1)?;
            Ok(Some(Value::from(
                string_of(name, values[0])?.to_lowercase(),
            )))
        }
        "str/upper-case" => {
            arity(name, values, 1)?;
            Ok(Some(Value::from(
                string_of(name, values[0])?.to_uppercase(),
            )))
        }
        _ => {
            arity(name, values, 1)?;
            boolean(string_of(name, values[0])?.trim().is_empty())
        }
    }
}

/// `even?`, `odd?`, `zero?`, `pos?` and `neg?`, on longs and doubles.
fn number_predicate(name: &str, values: &[&Value]) -> Result<Option<Value>, QueryError> {
    arity(name, values, 1)?;
    let n = match values[0] {
        Value::Long(n) => *n as f64,
        Value::Double(x) => *x,
        other => return Err(fail(name, format!("{other} is not a number"))),
    };
    boolean(match name {
        "even?" => n % 2.0 == 0.0,
        "odd?" => n % 2.0 != 0.0,
        "zero?" => n == 0.0,
        "pos?" => n > 0.0,
        _ => n < 0.0,
    })
}

/// `(missing? $ ?e :attr)` and `(get-else $ ?e :attr default)`.
fn call_with_db(name: &str, args: &[Arg]) -> Result<Option<Value>, QueryError> {
    let (db, e, attr, default) = match args {
        [Arg::Db(db), Arg::Value(e), Arg::Value(Value::Keyword(a)), rest @ ..] => (db, e, a, rest),
        _ => return Err(fail(name, "takes ($ ?entity :attribute ...)")),
    };
    let e = match e {
        Value::Ref(e) => *e,
        Value::Long(n) if *n >= 0 => *n as u64,
        other => return Err(fail(name, format!("{other} is not an entity"))),
    };
    let attribute = db
        .attribute(&Keyword::clone(attr))
        .map_err(|e| fail(name, e))?
        .clone();
    let value = db.value(e, attribute.id)?;
    match (name, default) {
        ("missing?", []) => Ok(Some(Value::Boolean(value.is_none()))),
        ("get-else", [Arg::Value(default)]) => Ok(Some(value.unwrap_or_else(|| default.clone()))),
        _ => Err(fail(name, "wrong number of arguments")),
    }
}

/// Numbers compare across long and double; other values only within a type.
pub(super) fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Long(x), Value::Double(y)) => (*x as f64).partial_cmp(y),
        (Value::Double(x), Value::Long(y)) => x.partial_cmp(&(*y as f64)),
        _ if a.value_type() == b.value_type() => Some(a.cmp(b)),
        _ => None,
    }
}

fn arithmetic(name: &str, values: &[&Value]) -> Result<Value, QueryError> {
    let Some((first, rest)) = values.split_first() else {
        return Err(fail(name, "needs at least one argument"));
    };
    let mut acc = (*first).clone();
    for v in rest {
        acc = match (&acc, v) {
            (Value::Long(a), Value::Long(b)) => {
                let (a, b) = (*a, *b);
                let result = match name {
                    "+" => a.checked_add(b),
                    "-" => a.checked_sub(b),
                    "*" => a.checked_mul(b),
                    "/" | "quot" => a.checked_div(b),
                    "rem" => a.checked_rem(b),
                    "mod" => a.checked_rem_euclid(b),
                    "min" => Some(a.min(b)),
                    _ => Some(a.max(b)),
                };
                Value::Long(result.ok_or_else(|| {
                    fail(name, format!("overflow or division by zero on {a} and {b}"))
                })?)
            }
            (Value::Long(_) | Value::Double(_), Value::Long(_) | Value::Double(_)) => {
                let float = |v: &Value| {
                    v.as_double()
                        .unwrap_or_else(|| v.as_long().unwrap_or(0) as f64)
                };
                let (a, b) = (float(&acc), float(v));
                Value::Double(match name {
                    "+" => a + b,
                    "-" => a - b,
                    "*" => a * b,
                    "/" | "quot" => a / b,
                    "rem" => a % b,
                    "mod" => a.rem_euclid(b),
                    "min" => a.min(b),
                    _ => a.max(b),
                })
            }
            (a, b) => return Err(fail(name, format!("{a} and {b} are not both numbers"))),
        };
    }
    if values.len() == 1 && name == "-" {
        return arithmetic("*", &[first, &Value::Long(-1)]);
    }
    Ok(acc)
}
