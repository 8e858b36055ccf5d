//! How a transaction becomes datoms.
//!
//! `prepare` turns one into datoms against the writer's current database, in
//! stages, each of which may fail; nothing is written until all have passed:
//!
//! 1. **Flatten**: maps become `add` terms, nested maps get their own tempid;
//!    every attribute name is resolved against the schema and every value is
//!    checked against the attribute's type.
//! 2. **Resolve**: lookup refs and idents become entity ids; tempids that
//!    assert a unique-identity value someone already has become that entity
//!    (upsert); the rest get fresh ids, after the transaction's own id.
//! 3. **Derive datoms**: cardinality-one assertions retract the old value;
//!    assertions of what already holds and retractions of what does not are
//!    dropped, so history records only change; `retract_entity` follows
//!    components and the refs pointing in; compare-and-swap checks the value.
//! 4. **Check**: no fact both asserted and retracted, no two values for one
//!    cardinality-one attribute, no unique value held by two entities, and the
//!    schema that results (if the transaction touched it) is well formed.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

// The deriver's sets hold one transaction's facts (filled before the store
// checks MAX_TX_DATOMS; what comes from the web is bounded by the forms'
// byte limits), so crafted colliding keys could cost a bounded quadratic
// at worst; SipHash's flood resistance was 2% of a seed (perf).
use rustc_hash::{FxHashMap, FxHashSet};

use super::db::Db;
use super::encoding::{Components, Datom, Index};
use super::error::TransactError;
use super::schema::{Attribute, Cardinality, Schema, Unique, DB_TX_INSTANT};
use super::transaction::{AttrRef, EntityMap, EntityRef, Op, Transaction, TxReport, TxValue};
use super::value::{EntityId, Keyword, Value, ValueType};

/// The outcome of `prepare`: everything needed to write and report.
pub(crate) struct Prepared {
    pub report: TxReport,
    pub next_id: EntityId,
    pub schema: Option<Schema>,
}

/// An entity position after flattening.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Ent {
    Id(EntityId),
    Temp(String),
    Tx,
}

#[derive(Debug, Clone)]
enum Val {
    Value(Value),
    Ref(Ent),
}

#[derive(Debug)]
enum Term {
    Add(Ent, Arc<Attribute>, Val),
    Retract(Ent, Arc<Attribute>, Option<Val>),
    RetractEntity(Ent),
    Cas(Ent, Arc<Attribute>, Option<Val>, Val),
}

/// The writer's position, which `prepare` reads and advances.
pub(crate) struct WriterClock {
    pub next_id: EntityId,
    pub last_instant: i64,
    pub now: i64,
}

/// Turns `tx` into datoms against `db` (the writer's current database). See
/// the module doc for the stages.
pub(crate) fn prepare(
    db: &Db,
    clock: &WriterClock,
    tx: &Transaction,
) -> Result<Prepared, TransactError> {
    let schema = db.schema();
    let terms = flatten(db, tx)?;

    let tx_id = clock.next_id;
    let mut next_id = tx_id + 1;
    let tempids = resolve_tempids(db, &terms, tx_id, &mut next_id)?;
    let ids = Ids {
        tempids: &tempids,
        tx_id,
    };

    let mut derive = Deriver::new(db, tx_id);
    let given = derive.terms(&ids, &terms)?;
    let instant = derive.tx_instant(clock, given)?;

    let datoms = derive.finish()?;
    check_unique(db, &datoms)?;
    let new_schema = schema.after(&datoms)?;
    let mut tempids = tempids;
    tempids.retain(|name, _| !name.starts_with(ANONYMOUS));
    Ok(Prepared {
        report: TxReport {
            basis_before: db.basis(),
            basis_after: tx_id,
            tempids,
            datoms,
            tx_instant: instant,
        },
        next_id,
        schema: new_schema,
    })
}

/// The first stage: the transaction's operations as terms.
fn flatten(db: &Db, tx: &Transaction) -> Result<Vec<Term>, TransactError> {
    let mut flat = Flattener {
        db,
        schema: db.schema(),
        terms: Vec::new(),
        anonymous: 0,
    };
    for op in &tx.ops {
        flat.op(op)?;
    }
    Ok(flat.terms)
}

/// What a term's entity positions stand for once tempids are resolved.
struct Ids<'a> {
    tempids: &'a HashMap<String, EntityId>,
    tx_id: EntityId,
}

impl Ids<'_> {
    fn id_of(&self, ent: &Ent) -> EntityId {
        match ent {
            Ent::Id(id) => *id,
            Ent::Temp(name) => self.tempids[name],
            Ent::Tx => self.tx_id,
        }
    }

    fn value_of(&self, val: &Val) -> Value {
        match val {
            Val::Value(v) => v.clone(),
            Val::Ref(ent) => Value::Ref(self.id_of(ent)),
        }
    }
}

/// Tempids the store makes up for maps without an id; they cannot clash with
/// a caller's, and are left out of the report.
const ANONYMOUS: &str = "\0anonymous-";

struct Flattener<'a> {
    db: &'a Db,
    schema: &'a Schema,
    terms: Vec<Term>,
    anonymous: usize,
}

impl Flattener<'_> {
    fn op(&mut self, op: &Op) -> Result<(), TransactError> {
        match op {
            Op::Map(map) => {
                self.map(map)?;
            }
            Op::Add(e, attr, v) => {
                let (e, a) = (self.entity(e)?, self.attribute(attr)?);
                let v = self.value(&a, v)?;
                self.terms.push(Term::Add(e, a, v));
            }
            Op::Retract(e, attr, v) => {
                let (e, a) = (self.entity(e)?, self.attribute(attr)?);
                let v = v.as_ref().map(|v| self.value(&a, v)).transpose()?;
                self.terms.push(Term::Retract(e, a, v));
            }
            Op::RetractEntity(e) => {
                let e = self.entity(e)?;
                self.terms.push(Term::RetractEntity(e));
            }
            Op::Cas(e, attr, old, new) => {
                let (e, a) = (self.entity(e)?, self.attribute(attr)?);
                if a.cardinality != Cardinality::One {
                    return Err(TransactError::InvalidValue {
                        attr: a.ident.clone(),
                        why: "compare-and-swap needs a cardinality-one attribute".into(),
                    });
                }
                let old = old.as_ref().map(|v| self.value(&a, v)).transpose()?;
                let new = self.value(&a, new)?;
                self.terms.push(Term::Cas(e, a, old, new));
            }
        }
        Ok(())
    }

    fn map(&mut self, map: &EntityMap) -> Result<Ent, TransactError> {
        let e = match &map.id {
            Some(id) => self.entity(id)?,
            None => {
                self.anonymous += 1;
                Ent::Temp(format!("{ANONYMOUS}{}", self.anonymous))
            }
        };
        for (attr, values) in &map.attrs {
            let a = self.attribute(attr)?;
            if a.cardinality == Cardinality::One && values.len() != 1 {
                return Err(TransactError::InvalidValue {
                    attr: a.ident.clone(),
                    why: format!(
                        "a cardinality-one attribute takes one value, not {}",
                        values.len()
                    ),
                });
            }
            for v in values {
                let v = self.value(&a, v)?;
                self.terms.push(Term::Add(e.clone(), a.clone(), v));
            }
        }
        Ok(e)
    }

    fn attribute(&self, attr: &AttrRef) -> Result<Arc<Attribute>, TransactError> {
        match attr {
            AttrRef::Ident(name) => {
                let ident = Keyword::parse(name)?;
                Ok(self.schema.attribute_named(&ident)?.clone())
            }
            AttrRef::Id(id) => self
                .schema
                .attribute(*id)
                .cloned()
                .ok_or(TransactError::NotAnAttribute(*id)),
        }
    }

    fn entity(&self, r: &EntityRef) -> Result<Ent, TransactError> {
        Ok(match r {
            EntityRef::Id(id) => Ent::Id(*id),
            EntityRef::Temp(name) if name.is_empty() || name.starts_with(ANONYMOUS) => {
                return Err(TransactError::InvalidValue {
                    attr: Keyword::parse(":db/id")?,
                    why: format!("{name:?} is not a usable tempid"),
                })
            }
            EntityRef::Temp(name) => Ent::Temp(name.clone()),
            EntityRef::CurrentTx => Ent::Tx,
            EntityRef::Ident(ident) => Ent::Id(
                self.schema
                    .entid(ident)
                    .ok_or_else(|| TransactError::UnknownIdent(ident.clone()))?,
            ),
            EntityRef::Lookup(attr, value) => {
                let fail = |why: &str| TransactError::LookupRef {
                    attr: attr.clone(),
                    value: value.clone(),
                    why: why.to_owned(),
                };
                let a = self.schema.attribute_named(attr)?;
                if a.unique.is_none() {
                    return Err(fail("the attribute is not unique"));
                }
                let id = self
                    .db
                    .entity_with(a.id, value)?
                    .ok_or_else(|| fail("no entity has that value"))?;
                Ent::Id(id)
            }
        })
    }

    fn value(&mut self, a: &Attribute, v: &TxValue) -> Result<Val, TransactError> {
        match (v, a.value_type) {
            (TxValue::Map(map), ValueType::Ref) => Ok(Val::Ref(self.map(map)?)),
            (TxValue::Entity(r), ValueType::Ref) => Ok(Val::Ref(self.entity(r)?)),
            (TxValue::Value(Value::Ref(id)), ValueType::Ref) => Ok(Val::Ref(Ent::Id(*id))),
            (TxValue::Value(Value::Keyword(ident)), ValueType::Ref) => {
                Ok(Val::Ref(self.entity(&EntityRef::Ident(ident.clone()))?))
            }
            (TxValue::Value(Value::Instant(ms)), ValueType::Instant)
                if !super::instant::in_range(*ms) =>
            {
                Err(TransactError::InvalidValue {
                    attr: a.ident.clone(),
                    why: format!(
                        "{} is outside the years 0000 to 9999",
                        super::instant::format_rfc3339(*ms)
                    ),
                })
            }
            (TxValue::Value(Value::Double(x)), ValueType::Double) if x.is_nan() => {
                Err(TransactError::InvalidValue {
                    attr: a.ident.clone(),
                    why: "NaN equals nothing, so it cannot be stored".into(),
                })
            }
            (TxValue::Value(value), expected) if value.value_type() == expected => {
                Ok(Val::Value(value.clone()))
            }
            (TxValue::Value(value), expected) => Err(TransactError::WrongType {
                attr: a.ident.clone(),
                expected,
                got: value.clone(),
                got_type: value.value_type(),
            }),
            (TxValue::Map(_) | TxValue::Entity(_), _) => Err(TransactError::InvalidValue {
                attr: a.ident.clone(),
                why: format!("it takes {:?} values, not entities", a.value_type),
            }),
        }
    }
}

/// Upserts tempids through unique-identity values, then numbers the rest.
fn resolve_tempids(
    db: &Db,
    terms: &[Term],
    tx_id: EntityId,
    next_id: &mut EntityId,
) -> Result<HashMap<String, EntityId>, TransactError> {
    let mut ids: HashMap<String, EntityId> = HashMap::new();
    for term in terms {
        if let Term::Add(Ent::Temp(name), a, Val::Value(v)) = term {
            if a.unique != Some(Unique::Identity) {
                continue;
            }
            if let Some(existing) = db.entity_with(a.id, v)? {
                match ids.get(name) {
                    Some(&first) if first != existing => {
                        return Err(TransactError::TempidConflict {
                            tempid: name.clone(),
                            first,
                            second: existing,
                        })
                    }
                    _ => {
                        ids.insert(name.clone(), existing);
                    }
                }
            }
        }
    }
    let mut number = |ent: &Ent| -> Result<(), TransactError> {
        match ent {
            Ent::Temp(name) if !ids.contains_key(name) => {
                ids.insert(name.clone(), *next_id);
                *next_id += 1;
            }
            // Ids from the transaction's own on were never handed out.
            Ent::Id(id) if *id >= tx_id => return Err(TransactError::UnknownEntity(*id)),
            _ => {}
        }
        Ok(())
    };
    for term in terms {
        match term {
            Term::Add(e, _, v) | Term::Cas(e, _, _, v) => {
                number(e)?;
                if let Val::Ref(r) = v {
                    number(r)?;
                }
            }
            Term::Retract(e, _, v) => {
                number(e)?;
                if let Some(Val::Ref(r)) = v {
                    number(r)?;
                }
            }
            Term::RetractEntity(e) => number(e)?,
        }
    }
    Ok(ids)
}

/// Derives the datoms of a transaction from its resolved terms.
struct Deriver<'a> {
    db: &'a Db,
    tx_id: EntityId,
    asserted: BTreeSet<(EntityId, EntityId, Value)>,
    retracted: BTreeSet<(EntityId, EntityId, Value)>,
    /// The value each cardinality-one (e, a) is given by this transaction.
    card_one: FxHashMap<(EntityId, EntityId), Value>,
    /// Facts the transaction asks to hold and to not hold, whether or not
    /// they hold already: asking both is a contradiction either way.
    wanted: FxHashSet<(EntityId, EntityId, Value)>,
    unwanted: FxHashSet<(EntityId, EntityId, Value)>,
    /// What each existing (e, a) the transaction touches holds before it,
    /// read once: a recipe's thousands of search terms were read again for
    /// each term asserted, quadratic in the terms (55 s for the largest
    /// recipe's edit in a debug build, most of the test suite's time).
    held: FxHashMap<(EntityId, EntityId), FxHashSet<Value>>,
}

impl<'a> Deriver<'a> {
    fn new(db: &'a Db, tx_id: EntityId) -> Deriver<'a> {
        Deriver {
            db,
            tx_id,
            asserted: BTreeSet::new(),
            retracted: BTreeSet::new(),
            card_one: FxHashMap::default(),
            held: FxHashMap::default(),
            wanted: FxHashSet::default(),
            unwanted: FxHashSet::default(),
        }
    }

    /// Derives the datoms of every term; the transaction's instant, if a
    /// term gives it.
    fn terms(&mut self, ids: &Ids, terms: &[Term]) -> Result<Option<i64>, TransactError> {
        let mut instant = None;
        for term in terms {
            match term {
                Term::Add(e, a, v) => {
                    let (e, v) = (ids.id_of(e), ids.value_of(v));
                    if a.id == DB_TX_INSTANT && e == self.tx_id {
                        instant = v.as_instant();
                    }
                    self.assert(e, a, v)?;
                }
                Term::Retract(e, a, Some(v)) => {
                    self.retract_value(ids.id_of(e), a, ids.value_of(v))?
                }
                Term::Retract(e, a, None) => {
                    let e = ids.id_of(e);
                    for v in self.db.values(e, a.id)? {
                        self.retract_value(e, a, v)?;
                    }
                }
                Term::RetractEntity(e) => self.retract_entity(ids.id_of(e), &mut HashSet::new())?,
                Term::Cas(e, a, old, new) => {
                    let e = ids.id_of(e);
                    let expected = old.as_ref().map(|v| ids.value_of(v));
                    self.cas(e, a, expected, ids.value_of(new))?;
                }
            }
        }
        Ok(instant)
    }

    /// Compare-and-swap: asserts `new` if `e` holds `expected` of `a`.
    fn cas(
        &mut self,
        e: EntityId,
        a: &Attribute,
        expected: Option<Value>,
        new: Value,
    ) -> Result<(), TransactError> {
        let found = self.db.value(e, a.id)?;
        if found != expected {
            let show = |v: Option<Value>| v.map_or("no value".to_owned(), |v| v.to_string());
            return Err(TransactError::CasFailed {
                entity: e,
                attr: a.ident.clone(),
                expected: show(expected),
                found: show(found),
            });
        }
        self.assert(e, a, new)
    }

    /// The transaction's instant: the one `given`, which must not go back,
    /// or else now (or the last one's, if the clock went back), asserted.
    fn tx_instant(
        &mut self,
        clock: &WriterClock,
        given: Option<i64>,
    ) -> Result<i64, TransactError> {
        match given {
            Some(given) if given < clock.last_instant => Err(TransactError::InvalidValue {
                attr: Keyword::parse(":db/txInstant")?,
                why: format!(
                    "a transaction's instant ({}) must not be before the last one's ({})",
                    super::instant::format_rfc3339(given),
                    super::instant::format_rfc3339(clock.last_instant)
                ),
            }),
            Some(given) => Ok(given),
            None => {
                let instant = clock.now.max(clock.last_instant);
                let attr = self
                    .db
                    .schema()
                    .attribute(DB_TX_INSTANT)
                    .expect("bootstrap attribute")
                    .clone();
                self.assert(self.tx_id, &attr, Value::Instant(instant))?;
                Ok(instant)
            }
        }
    }

    /// What `e` holds of `a` before the transaction; `None` for an entity
    /// the transaction makes (its own id and every id after it), which
    /// holds nothing yet and is not read.
    fn held(
        &mut self,
        e: EntityId,
        a: EntityId,
    ) -> Result<Option<&FxHashSet<Value>>, TransactError> {
        if e >= self.tx_id {
            return Ok(None);
        }
        if !self.held.contains_key(&(e, a)) {
            let values = self.db.values(e, a)?.into_iter().collect();
            self.held.insert((e, a), values);
        }
        Ok(self.held.get(&(e, a)))
    }

    fn assert(&mut self, e: EntityId, a: &Attribute, v: Value) -> Result<(), TransactError> {
        self.wanted.insert((e, a.id, v.clone()));
        let one = a.cardinality == Cardinality::One;
        // What it holds that this value replaces (cardinality one), and
        // whether it holds this value already.
        let (holds, holds_v): (Vec<Value>, bool) = match self.held(e, a.id)? {
            None => (Vec::new(), false),
            Some(held) => (
                match one {
                    true => held.iter().filter(|old| **old != v).cloned().collect(),
                    false => Vec::new(),
                },
                held.contains(&v),
            ),
        };
        if one {
            if let Some(other) = self.card_one.insert((e, a.id), v.clone()) {
                if other != v {
                    return Err(TransactError::Conflict(format!(
                        "entity {e} is given two values of {} ({other} and {v})",
                        a.ident
                    )));
                }
            }
            for old in holds {
                self.retracted.insert((e, a.id, old));
            }
        }
        if !holds_v {
            self.asserted.insert((e, a.id, v));
        }
        Ok(())
    }

    fn retract_value(&mut self, e: EntityId, a: &Attribute, v: Value) -> Result<(), TransactError> {
        self.unwanted.insert((e, a.id, v.clone()));
        if self.held(e, a.id)?.is_some_and(|held| held.contains(&v)) {
            self.retracted.insert((e, a.id, v));
        }
        Ok(())
    }

    fn retract_entity(
        &mut self,
        e: EntityId,
        seen: &mut HashSet<EntityId>,
    ) -> Result<(), TransactError> {
        if !seen.insert(e) {
            return Ok(());
        }
        let own: Vec<Datom> = self
            .db
            .datoms(Index::Eavt, &Components::any().e(e))
            .collect::<Result<_, _>>()?;
        for d in own {
            let component = self
                .db
                .schema()
                .attribute(d.a)
                .is_some_and(|a| a.is_component);
            if let (true, Value::Ref(child)) = (component, &d.v) {
                self.retract_entity(*child, seen)?;
            }
            self.unwanted.insert((d.e, d.a, d.v.clone()));
            self.retracted.insert((d.e, d.a, d.v));
        }
        let pointing_in = self
            .db
            .datoms(Index::Vaet, &Components::any().v(Value::Ref(e)));
        for d in pointing_in {
            let d = d?;
            self.unwanted.insert((d.e, d.a, d.v.clone()));
            self.retracted.insert((d.e, d.a, d.v));
        }
        Ok(())
    }

    fn finish(self) -> Result<Vec<Datom>, TransactError> {
        let contradiction = self
            .wanted
            .intersection(&self.unwanted)
            .next()
            .or_else(|| self.asserted.intersection(&self.retracted).next());
        if let Some((e, a, v)) = contradiction {
            let ident = self
                .db
                .schema()
                .attribute(*a)
                .map(|a| a.ident.to_string())
                .unwrap_or_default();
            return Err(TransactError::Conflict(format!(
                "entity {e} {ident} {v} is both asserted and retracted"
            )));
        }
        let tx = self.tx_id;
        let datom = |(e, a, v): (EntityId, EntityId, Value), added| Datom { e, a, v, tx, added };
        let mut datoms: Vec<Datom> = self
            .asserted
            .into_iter()
            .map(|f| datom(f, true))
            .chain(self.retracted.into_iter().map(|f| datom(f, false)))
            .collect();
        datoms.sort_by(|x, y| (x.e, x.a, &x.v, x.added).cmp(&(y.e, y.a, &y.v, y.added)));
        Ok(datoms)
    }
}

/// No entity may end up with two values of a cardinality-one attribute.
/// `prepare` retracts the old value itself; a transaction given as datoms
/// (an import) must carry that retraction. Entities from `fresh_from` on
/// have nothing stored (no id that high was ever used), so their values
/// are not read: an import's new entities cost no read.
pub(crate) fn check_cardinality(
    db: &Db,
    schema: &Schema,
    datoms: &[Datom],
    fresh_from: EntityId,
) -> Result<(), TransactError> {
    // (e, a) -> (values asserted, values retracted)
    type Changes<'d> = (Vec<&'d Value>, Vec<&'d Value>);
    let mut touched: FxHashMap<(EntityId, EntityId), Changes> = FxHashMap::default();
    for d in datoms {
        let one = schema
            .attribute(d.a)
            .is_some_and(|a| a.cardinality == Cardinality::One);
        if one {
            let (added, removed) = touched.entry((d.e, d.a)).or_default();
            if d.added {
                added.push(&d.v);
            } else {
                removed.push(&d.v);
            }
        }
    }
    for ((e, a), (added, removed)) in touched {
        let mut values: Vec<Value> = if e >= fresh_from {
            Vec::new()
        } else {
            db.values(e, a)?
        };
        values.retain(|v| !removed.contains(&v));
        for v in added {
            if !values.contains(v) {
                values.push(v.clone());
            }
        }
        if values.len() > 1 {
            let ident = schema.attribute(a).map(|a| a.ident.to_string());
            let shown: Vec<String> = values.iter().map(ToString::to_string).collect();
            return Err(TransactError::Conflict(format!(
                "entity {e} would hold {} values of the cardinality-one {}: {}",
                values.len(),
                ident.unwrap_or_default(),
                shown.join(", ")
            )));
        }
    }
    Ok(())
}

/// No unique value may end up held by two entities.
pub(crate) fn check_unique(db: &Db, datoms: &[Datom]) -> Result<(), TransactError> {
    let retracted: FxHashSet<(EntityId, EntityId, &Value)> = datoms
        .iter()
        .filter(|d| !d.added)
        .map(|d| (d.e, d.a, &d.v))
        .collect();
    let mut claimed: FxHashMap<(EntityId, &Value), EntityId> = FxHashMap::default();
    for d in datoms.iter().filter(|d| d.added) {
        let Some(a) = db.schema().attribute(d.a).filter(|a| a.unique.is_some()) else {
            continue;
        };
        let clash = |existing| TransactError::UniqueConflict {
            attr: a.ident.clone(),
            value: d.v.clone(),
            existing,
            entity: d.e,
        };
        if let Some(&other) = claimed.get(&(d.a, &d.v)) {
            if other != d.e {
                return Err(clash(other));
            }
        }
        claimed.insert((d.a, &d.v), d.e);
        if let Some(holder) = db.entity_with(d.a, &d.v)? {
            if holder != d.e && !retracted.contains(&(holder, d.a, &d.v)) {
                return Err(clash(holder));
            }
        }
    }
    Ok(())
}
