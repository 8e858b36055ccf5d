//! Pull: a tree of an entity's facts, shaped by a pattern.
//!
//! A pattern is written as in Datomic and parsed from EDN:
//!
//! ```text
//! [:recipe/title                                   an attribute
//!  {:recipe/ingredients [:ingredient/item]}        a ref, with a nested pattern
//!  (:recipe/tags :limit 3)                         at most 3 values
//!  {:recipe/_forked-from [:recipe/slug]}           a reverse ref: who points here
//!  {:recipe/forked-from ...}                       recursion, cycle-checked
//!  {:recipe/forked-from 6}                         recursion to depth 6
//!  *]                                              every attribute
//! ```
//!
//! Refs without a nested pattern come back as `{:db/id e}`, except components,
//! which are pulled whole (they belong to their owner). Cardinality-many
//! attributes and reverse refs come back as lists, in index order, at most
//! `DEFAULT_LIMIT` long unless a `:limit` says otherwise. An attribute with no
//! value is left out. A recursion that meets an entity already on its path, or
//! its depth limit, stops with `{:db/id e}`.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

use super::db::Db;
use super::encoding::{Components, Index};
use super::error::{ReadError, StorageError};
use super::schema::{Attribute, Cardinality};
use super::value::{kw, EntityId, Keyword, Value};
use crate::edn::{self, Edn};

/// The most values of one many-valued attribute pulled when no limit is set.
pub(crate) const DEFAULT_LIMIT: usize = 1000;

/// The deepest an unbounded recursion (`...`) goes, to bound the work and the
/// stack a cyclic-free but very deep chain can cost.
pub(crate) const RECURSION_CAP: usize = 256;

/// A parsed pull pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct PullPattern {
    wildcard: bool,
    db_id: bool,
    specs: Vec<AttrSpec>,
}

#[derive(Debug, Clone, PartialEq)]
struct AttrSpec {
    /// The attribute as written (`:recipe/_forked-from` for a reverse ref).
    key: Keyword,
    /// The forward attribute.
    attr: Keyword,
    reverse: bool,
    limit: Option<usize>,
    nested: Nested,
}

#[derive(Debug, Clone, PartialEq)]
enum Nested {
    None,
    Pattern(PullPattern),
    /// Apply the enclosing pattern again, at most this deep.
    Recurse(usize),
}

/// A pulled value: a scalar, an entity's map, or a list of either.
#[derive(Debug, Clone, PartialEq)]
pub enum Pulled {
    Value(Value),
    Map(BTreeMap<Keyword, Pulled>),
    List(Vec<Pulled>),
}

impl Pulled {
    /// The entry `key` of a map (`None` for other shapes or a missing key).
    pub fn get(&self, key: &str) -> Option<&Pulled> {
        match self {
            Pulled::Map(map) => map.get(&Keyword::parse(key).ok()?),
            _ => None,
        }
    }

    pub fn as_value(&self) -> Option<&Value> {
        match self {
            Pulled::Value(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_list(&self) -> Option<&[Pulled]> {
        match self {
            Pulled::List(items) => Some(items),
            _ => None,
        }
    }
}

/// Pulled trees print as EDN.
impl fmt::Display for Pulled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pulled::Value(v) => write!(f, "{v}"),
            Pulled::List(items) => {
                write!(f, "[")?;
                for (i, item) in items.iter().enumerate() {
                    write!(f, "{}{item}", if i == 0 { "" } else { " " })?;
                }
                write!(f, "]")
            }
            Pulled::Map(map) => {
                write!(f, "{{")?;
                for (i, (k, v)) in map.iter().enumerate() {
                    write!(f, "{}{k} {v}", if i == 0 { "" } else { " " })?;
                }
                write!(f, "}}")
            }
        }
    }
}

impl PullPattern {
    /// Parses a pattern from its EDN text, e.g. `[:recipe/title {:recipe/ingredients [*]}]`.
    pub fn parse(text: &str) -> Result<PullPattern, ReadError> {
        let form = edn::parse(text).map_err(|e| ReadError::Pattern(e.to_string()))?;
        PullPattern::from_edn(&form)
    }

    /// Reads a pattern from an already-parsed EDN form (queries embed them).
    pub fn from_edn(form: &Edn) -> Result<PullPattern, ReadError> {
        let Edn::Vector(items) = form else {
            return Err(bad(format!("a pattern is a vector, not {form}")));
        };
        let mut pattern = PullPattern {
            wildcard: false,
            db_id: false,
            specs: Vec::new(),
        };
        for item in items {
            match item {
                Edn::Symbol(s) if s == "*" => pattern.wildcard = true,
                Edn::String(s) if s == "*" => pattern.wildcard = true,
                Edn::Keyword(k) if k == "db/id" => pattern.db_id = true,
                Edn::Map(entries) => {
                    for (key, value) in entries {
                        let mut spec = attr_spec(key)?;
                        spec.nested = match value {
                            Edn::Vector(_) => Nested::Pattern(PullPattern::from_edn(value)?),
                            Edn::Symbol(s) if s == "..." => Nested::Recurse(RECURSION_CAP),
                            Edn::Int(n) if *n > 0 => Nested::Recurse((*n as usize).min(RECURSION_CAP)),
                            other => {
                                return Err(bad(format!(
                                    "after {key} comes a pattern, `...` or a positive depth, not {other}"
                                )))
                            }
                        };
                        pattern.specs.push(spec);
                    }
                }
                other => pattern.specs.push(attr_spec(other)?),
            }
        }
        Ok(pattern)
    }

    /// The pattern `[*]`.
    pub fn wildcard() -> PullPattern {
        PullPattern {
            wildcard: true,
            db_id: false,
            specs: Vec::new(),
        }
    }
}

fn bad(why: String) -> ReadError {
    ReadError::Pattern(why)
}

/// `:attr` or `(:attr :limit n)`.
fn attr_spec(form: &Edn) -> Result<AttrSpec, ReadError> {
    let (name, options) = match form {
        Edn::Keyword(name) => (name, &[][..]),
        Edn::List(items) => match items.split_first() {
            Some((Edn::Keyword(name), options)) => (name, options),
            _ => return Err(bad(format!("{form} should start with an attribute"))),
        },
        other => return Err(bad(format!("{other} is not an attribute, a map or `*`"))),
    };
    let key = Keyword::parse(name)?;
    let (attr, reverse) = match key.reversed() {
        Some(forward) => (forward, true),
        None => (key.clone(), false),
    };
    let mut limit = Some(DEFAULT_LIMIT);
    for pair in options.chunks(2) {
        match pair {
            [Edn::Keyword(opt), Edn::Int(n)] if opt == "limit" && *n >= 0 => {
                limit = Some(*n as usize)
            }
            [Edn::Keyword(opt), Edn::Nil] if opt == "limit" => limit = None,
            _ => {
                return Err(bad(format!(
                    "in {form}, the only option is `:limit n` (or `:limit nil`)"
                )))
            }
        }
    }
    Ok(AttrSpec {
        key,
        attr,
        reverse,
        limit,
        nested: Nested::None,
    })
}

impl Db {
    /// Pulls entity `e` by `pattern`. An entity with no facts pulls as a map
    /// with at most its `:db/id`.
    pub fn pull(&self, e: EntityId, pattern: &PullPattern) -> Result<Pulled, ReadError> {
        let mut puller = Puller {
            db: self,
            path: Vec::new(),
            depth: HashMap::new(),
        };
        puller.entity(e, pattern).map(Pulled::Map)
    }
}

struct Puller<'a> {
    db: &'a Db,
    /// Entities being pulled, outermost first: a ref back to one is a cycle.
    path: Vec<EntityId>,
    /// How deep each recursive attribute is at this point of the walk.
    depth: HashMap<Keyword, usize>,
}

impl Puller<'_> {
    fn entity(
        &mut self,
        e: EntityId,
        pattern: &PullPattern,
    ) -> Result<BTreeMap<Keyword, Pulled>, ReadError> {
        self.path.push(e);
        let result = self.entity_inner(e, pattern);
        self.path.pop();
        result
    }

    fn entity_inner(
        &mut self,
        e: EntityId,
        pattern: &PullPattern,
    ) -> Result<BTreeMap<Keyword, Pulled>, ReadError> {
        let mut out = BTreeMap::new();
        if pattern.db_id || pattern.wildcard {
            out.insert(db_id(), Pulled::Value(Value::Ref(e)));
        }
        // A wildcard reads the entity once; its named attributes take their
        // values from that read instead of reading again.
        let mut by_attr = Vec::new();
        if pattern.wildcard {
            by_attr = self.read_entity(e)?;
            self.pull_unnamed(pattern, &by_attr, &mut out)?;
        }
        for spec in &pattern.specs {
            let attribute = self.db.attribute(&spec.attr)?.clone();
            let read = pattern.wildcard.then_some(by_attr.as_mut_slice());
            let targets = self.targets(e, spec, &attribute, read)?;
            if targets.is_empty() {
                continue;
            }
            let pulled = self.pull_targets(spec, &attribute, pattern, targets)?;
            out.insert(spec.key.clone(), pulled);
        }
        Ok(out)
    }

    /// Every value of `e`, by attribute.
    fn read_entity(&self, e: EntityId) -> Result<Vec<(EntityId, Vec<Value>)>, ReadError> {
        // Datoms come in EAVT order, so each attribute's values are a run.
        let mut by_attr: Vec<(EntityId, Vec<Value>)> = Vec::new();
        for datom in self.db.datoms(Index::Eavt, &Components::any().e(e)) {
            let datom = datom?;
            match by_attr.last_mut() {
                Some((a, values)) if *a == datom.a => values.push(datom.v),
                _ => by_attr.push((datom.a, vec![datom.v])),
            }
        }
        Ok(by_attr)
    }

    /// A wildcard's attributes that the pattern does not name, pulled
    /// plainly into `out`.
    fn pull_unnamed(
        &mut self,
        pattern: &PullPattern,
        by_attr: &[(EntityId, Vec<Value>)],
        out: &mut BTreeMap<Keyword, Pulled>,
    ) -> Result<(), ReadError> {
        let named: Vec<EntityId> = pattern
            .specs
            .iter()
            .filter(|s| !s.reverse)
            .filter_map(|s| self.db.attribute(&s.attr).ok().map(|a| a.id))
            .collect();
        for (a, values) in by_attr {
            let a = *a;
            if named.contains(&a) {
                continue;
            }
            let attribute = self.attribute_by_id(a)?;
            let values: Vec<Pulled> = values
                .iter()
                .map(|v| self.plain(&attribute, v.clone()))
                .collect::<Result<_, _>>()?;
            out.insert(attribute.ident.clone(), shape(&attribute, values));
        }
        Ok(())
    }

    /// The values `spec` pulls of `e`, at most its limit: the entities
    /// pointing at it for a reverse ref, else its own values, taken from
    /// the wildcard's `read` when there is one.
    fn targets(
        &self,
        e: EntityId,
        spec: &AttrSpec,
        attribute: &Attribute,
        read: Option<&mut [(EntityId, Vec<Value>)]>,
    ) -> Result<Vec<Value>, ReadError> {
        if spec.reverse {
            if !attribute.is_ref() {
                return Err(bad(format!(
                    "{} is a reverse ref of a non-ref attribute",
                    spec.key
                )));
            }
            return Ok(self
                .db
                .datoms(
                    Index::Vaet,
                    &Components::any().v(Value::Ref(e)).a(attribute.id),
                )
                .take(spec.limit.unwrap_or(usize::MAX))
                .map(|d| d.map(|d| Value::Ref(d.e)))
                .collect::<Result<_, _>>()?);
        }
        if let Some(by_attr) = read {
            let at = by_attr.iter().position(|(a, _)| *a == attribute.id);
            let mut values = at
                .map(|at| std::mem::take(&mut by_attr[at].1))
                .unwrap_or_default();
            values.truncate(spec.limit.unwrap_or(usize::MAX));
            return Ok(values);
        }
        Ok(self
            .db
            .datoms(Index::Eavt, &Components::any().e(e).a(attribute.id))
            .take(spec.limit.unwrap_or(usize::MAX))
            .map(|d| d.map(|d| d.v))
            .collect::<Result<_, _>>()?)
    }

    /// What `spec` pulls of its `targets`, each followed as it says, shaped
    /// as one value or a list.
    fn pull_targets(
        &mut self,
        spec: &AttrSpec,
        attribute: &Attribute,
        pattern: &PullPattern,
        targets: Vec<Value>,
    ) -> Result<Pulled, ReadError> {
        let mut values = Vec::with_capacity(targets.len());
        for v in targets {
            values.push(self.nested(spec, attribute, pattern, v)?);
        }
        Ok(if spec.reverse {
            // A component has one owner; other reverse refs are many.
            if attribute.is_component {
                values.swap_remove(0)
            } else {
                Pulled::List(values)
            }
        } else {
            shape(attribute, values)
        })
    }

    /// The value of `spec` for one target, following its nested pattern or
    /// recursion.
    fn nested(
        &mut self,
        spec: &AttrSpec,
        attribute: &Attribute,
        enclosing: &PullPattern,
        v: Value,
    ) -> Result<Pulled, ReadError> {
        let target = match (&v, spec.reverse || attribute.is_ref()) {
            (Value::Ref(target), true) => *target,
            _ => return Ok(Pulled::Value(v)),
        };
        match &spec.nested {
            Nested::None if spec.reverse => Ok(id_map(target)),
            Nested::None => self.plain(attribute, v),
            Nested::Pattern(sub) => self.guarded(target, sub),
            Nested::Recurse(max) => {
                let depth = self.depth.get(&spec.key).copied().unwrap_or(0);
                if depth >= *max || self.path.contains(&target) {
                    return Ok(id_map(target));
                }
                self.depth.insert(spec.key.clone(), depth + 1);
                let result = self.entity(target, enclosing).map(Pulled::Map);
                self.depth.insert(spec.key.clone(), depth);
                result
            }
        }
    }

    /// A value pulled without a pattern of its own: components whole, other
    /// refs as `{:db/id e}`, scalars as they are.
    fn plain(&mut self, attribute: &Attribute, v: Value) -> Result<Pulled, ReadError> {
        match v {
            Value::Ref(target) if attribute.is_component => {
                self.guarded(target, &PullPattern::wildcard())
            }
            Value::Ref(target) if attribute.is_ref() => Ok(id_map(target)),
            v => Ok(Pulled::Value(v)),
        }
    }

    /// Pulls `target` unless it is already on the path (a cycle).
    fn guarded(&mut self, target: EntityId, pattern: &PullPattern) -> Result<Pulled, ReadError> {
        if self.path.contains(&target) || self.path.len() > RECURSION_CAP {
            return Ok(id_map(target));
        }
        self.entity(target, pattern).map(Pulled::Map)
    }

    fn attribute_by_id(&self, a: EntityId) -> Result<Arc<Attribute>, ReadError> {
        self.db
            .schema()
            .attribute(a)
            .cloned()
            .ok_or_else(|| StorageError::Corrupt(format!("datom of unknown attribute {a}")).into())
    }
}

/// `:db/id`, made once: every pulled entity has one.
fn db_id() -> Keyword {
    static DB_ID: std::sync::OnceLock<Keyword> = std::sync::OnceLock::new();
    DB_ID.get_or_init(|| kw("db/id")).clone()
}

fn id_map(e: EntityId) -> Pulled {
    Pulled::Map(BTreeMap::from([(db_id(), Pulled::Value(Value::Ref(e)))]))
}

/// One value for cardinality one, a list for many.
fn shape(attribute: &Attribute, mut values: Vec<Pulled>) -> Pulled {
    match attribute.cardinality {
        Cardinality::One if values.len() == 1 => values.swap_remove(0),
        _ => Pulled::List(values),
    }
}
