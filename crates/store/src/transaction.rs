//! What a caller asks a transaction to do: entity maps, adds, retractions,
//! compare-and-swap, and the report of what it did.
//!
//! A `Transaction` is a list of operations in Datomic's shapes: entity maps
//! (nested maps for components), `add`, `retract` of a value or of all values,
//! `retract_entity`, and compare-and-swap. Entities are named by id, tempid,
//! lookup ref `[attr value]`, ident, or as the transaction itself.
//!
//! A leaf: it names values and datoms, never a database, so the schema (which
//! installs attributes as entity maps) and the database value can both use it.
//! `prepare` turns these into datoms.

use std::collections::HashMap;

use super::encoding::Datom;
use super::value::{EntityId, Keyword, Value};

/// A way to name an entity in a transaction.
#[derive(Debug, Clone, PartialEq)]
pub enum EntityRef {
    /// An existing entity id.
    Id(EntityId),
    /// A name local to this transaction for an entity it creates (or finds,
    /// by a unique-identity value). The report maps it to the id.
    Temp(String),
    /// `[attr value]` on a unique attribute: the entity that has it.
    Lookup(Keyword, Value),
    /// The entity with this `:db/ident`.
    Ident(Keyword),
    /// The transaction entity itself, for its author, note and instant.
    CurrentTx,
}

impl EntityRef {
    pub fn temp(name: impl Into<String>) -> EntityRef {
        EntityRef::Temp(name.into())
    }
}

impl From<EntityId> for EntityRef {
    fn from(id: EntityId) -> EntityRef {
        EntityRef::Id(id)
    }
}

/// How a transaction names an attribute: by its ident (`":recipe/title"`),
/// parsed and looked up in the schema by the writer, or by its id, as a
/// caller that writes an attribute often resolves it once (from the
/// schema of a value it read) and spares the writer both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttrRef {
    Ident(String),
    Id(EntityId),
}

impl From<&str> for AttrRef {
    fn from(ident: &str) -> AttrRef {
        AttrRef::Ident(ident.to_owned())
    }
}

impl From<&String> for AttrRef {
    fn from(ident: &String) -> AttrRef {
        AttrRef::Ident(ident.clone())
    }
}

impl From<String> for AttrRef {
    fn from(ident: String) -> AttrRef {
        AttrRef::Ident(ident)
    }
}

impl From<EntityId> for AttrRef {
    fn from(id: EntityId) -> AttrRef {
        AttrRef::Id(id)
    }
}

/// A value as written in a transaction.
#[derive(Debug, Clone)]
pub enum TxValue {
    Value(Value),
    /// For ref attributes: an entity named any way an entity can be.
    Entity(EntityRef),
    /// For ref attributes: a nested entity map, created with the parent.
    Map(EntityMap),
}

impl From<Value> for TxValue {
    fn from(v: Value) -> TxValue {
        TxValue::Value(v)
    }
}

/// Plain Rust values stand for the store's values of the same type.
macro_rules! tx_value_from {
    ($($t:ty),*) => {$(
        impl From<$t> for TxValue {
            fn from(v: $t) -> TxValue {
                TxValue::Value(Value::from(v))
            }
        }
    )*};
}

tx_value_from!(&str, String, i64, f64, bool, Keyword);

impl From<EntityRef> for TxValue {
    fn from(r: EntityRef) -> TxValue {
        TxValue::Entity(r)
    }
}

impl From<EntityMap> for TxValue {
    fn from(m: EntityMap) -> TxValue {
        TxValue::Map(m)
    }
}

/// An entity map: `{:db/id id, attr value, attr [values...]}`.
#[derive(Debug, Clone, Default)]
pub struct EntityMap {
    pub(super) id: Option<EntityRef>,
    pub(super) attrs: Vec<(AttrRef, Vec<TxValue>)>,
}

impl EntityMap {
    /// A map for an entity named by `id`.
    pub fn new(id: impl Into<EntityRef>) -> EntityMap {
        EntityMap {
            id: Some(id.into()),
            attrs: Vec::new(),
        }
    }

    /// A map with no id: a new entity (or, nested, a new component).
    pub fn anonymous() -> EntityMap {
        EntityMap::default()
    }

    /// Asserts one value of `attr` (a keyword such as `:recipe/title`).
    pub fn with(mut self, attr: impl Into<AttrRef>, value: impl Into<TxValue>) -> EntityMap {
        self.attrs.push((attr.into(), vec![value.into()]));
        self
    }

    /// Asserts several values of a cardinality-many `attr`.
    pub fn with_many<V: Into<TxValue>>(
        mut self,
        attr: impl Into<AttrRef>,
        values: impl IntoIterator<Item = V>,
    ) -> EntityMap {
        self.attrs
            .push((attr.into(), values.into_iter().map(Into::into).collect()));
        self
    }
}

/// One operation of a transaction.
#[derive(Debug, Clone)]
pub(super) enum Op {
    Map(EntityMap),
    Add(EntityRef, AttrRef, TxValue),
    Retract(EntityRef, AttrRef, Option<TxValue>),
    RetractEntity(EntityRef),
    Cas(EntityRef, AttrRef, Option<TxValue>, TxValue),
}

/// A list of operations applied atomically: all or nothing.
#[derive(Debug, Clone, Default)]
pub struct Transaction {
    pub(super) ops: Vec<Op>,
}

impl Transaction {
    pub fn new() -> Transaction {
        Transaction::default()
    }

    /// An entity map (see `EntityMap`).
    pub fn map(&mut self, map: EntityMap) -> &mut Transaction {
        self.ops.push(Op::Map(map));
        self
    }

    /// `[:db/add e attr value]`.
    pub fn add(
        &mut self,
        e: impl Into<EntityRef>,
        attr: impl Into<AttrRef>,
        value: impl Into<TxValue>,
    ) -> &mut Transaction {
        self.ops.push(Op::Add(e.into(), attr.into(), value.into()));
        self
    }

    /// `[:db/retract e attr value]`: retracts one value if it holds.
    pub fn retract(
        &mut self,
        e: impl Into<EntityRef>,
        attr: impl Into<AttrRef>,
        value: impl Into<TxValue>,
    ) -> &mut Transaction {
        self.ops
            .push(Op::Retract(e.into(), attr.into(), Some(value.into())));
        self
    }

    /// Appends every operation of `other`.
    pub fn extend(&mut self, other: Transaction) -> &mut Transaction {
        self.ops.extend(other.ops);
        self
    }

    /// `[:db/retract e attr]`: retracts every value of `attr`.
    pub fn retract_all(
        &mut self,
        e: impl Into<EntityRef>,
        attr: impl Into<AttrRef>,
    ) -> &mut Transaction {
        self.ops.push(Op::Retract(e.into(), attr.into(), None));
        self
    }

    /// `[:db/retractEntity e]`: every fact of `e` and of its components, and
    /// every ref to them.
    pub fn retract_entity(&mut self, e: impl Into<EntityRef>) -> &mut Transaction {
        self.ops.push(Op::RetractEntity(e.into()));
        self
    }

    /// `[:db/cas e attr old new]`: sets `attr` to `new` only if it is `old`
    /// now (`None`: only if it has no value), else fails the transaction.
    pub fn cas(
        &mut self,
        e: impl Into<EntityRef>,
        attr: impl Into<AttrRef>,
        old: Option<TxValue>,
        new: impl Into<TxValue>,
    ) -> &mut Transaction {
        self.ops
            .push(Op::Cas(e.into(), attr.into(), old, new.into()));
        self
    }

    /// An attribute of the transaction entity: its author, its note, or its
    /// `:db/txInstant` (which must not go back in time).
    pub fn tx_attr(
        &mut self,
        attr: impl Into<AttrRef>,
        value: impl Into<TxValue>,
    ) -> &mut Transaction {
        self.add(EntityRef::CurrentTx, attr, value)
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// What a committed transaction did.
#[derive(Debug, Clone)]
pub struct TxReport {
    /// The basis before: the newest transaction this one was checked against.
    pub basis_before: EntityId,
    /// The basis after: this transaction's own id.
    pub basis_after: EntityId,
    /// Each tempid and the entity it became.
    pub tempids: HashMap<String, EntityId>,
    /// Every datom written, the transaction's own included, in EAVT order.
    pub datoms: Vec<Datom>,
    pub tx_instant: i64,
}

impl TxReport {
    /// The entity a tempid became.
    pub fn tempid(&self, name: &str) -> Option<EntityId> {
        self.tempids.get(name).copied()
    }
}
