//! Schema as data: attributes are entities, and this is their in-memory cache.
//!
//! An attribute is an entity with `:db/ident`, `:db/valueType` and
//! `:db/cardinality`, and optionally `:db/unique`, `:db/isComponent`,
//! `:db/index` and `:db/doc`. It is installed by transacting those facts, like
//! any others. The store keeps a `Schema` built from them, so that every
//! transaction can be checked against it without reading the indexes; a
//! transaction that changes the schema replaces the cache with a new one.
//!
//! The bootstrap attributes that describe attributes have fixed ids, written
//! by the genesis transaction of every store.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::encoding::Datom;
use super::error::{SchemaError, UnknownAttribute};
use super::transaction::EntityMap;
use super::value::{kw, EntityId, Keyword, Value, ValueType};

pub(crate) const DB_IDENT: EntityId = 1;
pub(crate) const DB_VALUE_TYPE: EntityId = 2;
pub(crate) const DB_CARDINALITY: EntityId = 3;
pub(crate) const DB_UNIQUE: EntityId = 4;
pub(crate) const DB_IS_COMPONENT: EntityId = 5;
pub(crate) const DB_INDEX: EntityId = 6;
pub(crate) const DB_DOC: EntityId = 7;
pub(crate) const DB_TX_INSTANT: EntityId = 8;

pub(crate) use super::value::GENESIS_TX;

/// `:db/cardinality`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cardinality {
    /// A new value replaces the old one (which is retracted).
    One,
    /// Values accumulate; each is asserted and retracted on its own.
    Many,
}

/// `:db/unique`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unique {
    /// At most one entity has a value; asserting it with a tempid upserts.
    Identity,
    /// At most one entity has a value; asserting it again elsewhere is an error.
    Value,
}

impl Cardinality {
    /// The ident that names it in the schema, e.g. `:db.cardinality/one`.
    pub fn ident(self) -> &'static str {
        match self {
            Cardinality::One => "db.cardinality/one",
            Cardinality::Many => "db.cardinality/many",
        }
    }
}

impl Unique {
    /// The ident that names it in the schema, e.g. `:db.unique/identity`.
    pub fn ident(self) -> &'static str {
        match self {
            Unique::Identity => "db.unique/identity",
            Unique::Value => "db.unique/value",
        }
    }
}

/// An entity map that installs the attribute `ident` when transacted. Add
/// `:db/doc`, `:db/index` or `:db/isComponent` to it with `EntityMap::with`.
pub fn attribute_map(
    ident: &str,
    value_type: ValueType,
    cardinality: Cardinality,
    unique: Option<Unique>,
) -> EntityMap {
    let map = EntityMap::anonymous()
        .with(":db/ident", kw(ident))
        .with(":db/valueType", kw(value_type.ident()))
        .with(":db/cardinality", kw(cardinality.ident()));
    match unique {
        Some(unique) => map.with(":db/unique", kw(unique.ident())),
        None => map,
    }
}

/// One installed attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute {
    pub id: EntityId,
    pub ident: Keyword,
    pub value_type: ValueType,
    pub cardinality: Cardinality,
    pub unique: Option<Unique>,
    /// A component's entity belongs to its owner: `retract-entity` follows it
    /// and a wildcard pull expands it.
    pub is_component: bool,
    /// Kept in AVET for lookups by value, like unique attributes.
    pub index: bool,
    pub doc: Option<String>,
}

impl Attribute {
    /// Whether the attribute's datoms are kept in AVET.
    pub fn in_avet(&self) -> bool {
        self.unique.is_some() || self.index
    }

    /// A datom of this attribute's per-datom key in AVET, if it belongs
    /// there: what `postings::updates` files in the chunk of its attribute
    /// and value.
    pub(crate) fn avet_key(&self, datom: &Datom) -> Option<Vec<u8>> {
        self.in_avet()
            .then(|| super::encoding::datom_key(super::encoding::Index::Avet, datom))
    }

    pub fn is_ref(&self) -> bool {
        self.value_type == ValueType::Ref
    }
}

/// The attributes and idents known at some basis.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    attributes: HashMap<EntityId, Arc<Attribute>>,
    idents: HashMap<Keyword, EntityId>,
    /// The facts of schema attributes, per entity: the source the cache is
    /// rebuilt from when a transaction changes any of them.
    facts: BTreeMap<EntityId, BTreeMap<EntityId, Value>>,
}

/// A bootstrap attribute, as the genesis transaction installs it (each of
/// cardinality one).
struct BootstrapAttribute {
    id: EntityId,
    ident: &'static str,
    value_type: ValueType,
    unique: Option<Unique>,
    /// Kept in AVET (`:db/index`).
    index: bool,
    doc: &'static str,
}

/// The attributes that describe attributes, and `:db/txInstant`.
const BOOTSTRAP_ATTRIBUTES: [BootstrapAttribute; 8] = [
    BootstrapAttribute {
        id: DB_IDENT,
        ident: "db/ident",
        value_type: ValueType::Keyword,
        unique: Some(Unique::Identity),
        index: false,
        doc: "The name of an entity.",
    },
    BootstrapAttribute {
        id: DB_VALUE_TYPE,
        ident: "db/valueType",
        value_type: ValueType::Keyword,
        unique: None,
        index: false,
        doc: "The type of an attribute's values.",
    },
    BootstrapAttribute {
        id: DB_CARDINALITY,
        ident: "db/cardinality",
        value_type: ValueType::Keyword,
        unique: None,
        index: false,
        doc: "One value or many.",
    },
    BootstrapAttribute {
        id: DB_UNIQUE,
        ident: "db/unique",
        value_type: ValueType::Keyword,
        unique: None,
        index: false,
        doc: "Identity (upserts) or value uniqueness.",
    },
    BootstrapAttribute {
        id: DB_IS_COMPONENT,
        ident: "db/isComponent",
        value_type: ValueType::Boolean,
        unique: None,
        index: false,
        doc: "The referenced entity belongs to this one.",
    },
    BootstrapAttribute {
        id: DB_INDEX,
        ident: "db/index",
        value_type: ValueType::Boolean,
        unique: None,
        index: false,
        doc: "Keep the attribute in AVET.",
    },
    BootstrapAttribute {
        id: DB_DOC,
        ident: "db/doc",
        value_type: ValueType::String,
        unique: None,
        index: false,
        doc: "What an entity is for.",
    },
    BootstrapAttribute {
        id: DB_TX_INSTANT,
        ident: "db/txInstant",
        value_type: ValueType::Instant,
        unique: None,
        index: true,
        doc: "When a transaction was committed.",
    },
];

/// What the genesis transaction asserts: the bootstrap attributes themselves.
pub(crate) fn bootstrap_datoms() -> Vec<Datom> {
    let mut datoms = Vec::new();
    for attribute in &BOOTSTRAP_ATTRIBUTES {
        let mut add = |a, v| {
            datoms.push(Datom {
                e: attribute.id,
                a,
                v,
                tx: GENESIS_TX,
                added: true,
            })
        };
        add(DB_IDENT, Value::Keyword(kw(attribute.ident)));
        add(
            DB_VALUE_TYPE,
            Value::Keyword(kw(attribute.value_type.ident())),
        );
        add(DB_CARDINALITY, Value::Keyword(kw(Cardinality::One.ident())));
        if let Some(unique) = attribute.unique {
            add(DB_UNIQUE, Value::Keyword(kw(unique.ident())));
        }
        if attribute.index {
            add(DB_INDEX, Value::Boolean(true));
        }
        add(DB_DOC, Value::string(attribute.doc));
    }
    datoms.push(Datom {
        e: GENESIS_TX,
        a: DB_TX_INSTANT,
        v: Value::Instant(0),
        tx: GENESIS_TX,
        added: true,
    });
    datoms
}

/// Whether a datom's attribute is one that describes the schema.
pub(crate) fn is_schema_attribute(a: EntityId) -> bool {
    (DB_IDENT..=DB_DOC).contains(&a)
}

impl Schema {
    /// Builds the schema from the current datoms of the schema attributes.
    pub fn from_datoms<'a>(
        datoms: impl IntoIterator<Item = &'a Datom>,
    ) -> Result<Schema, SchemaError> {
        let mut schema = Schema::default();
        for d in datoms {
            if d.added && is_schema_attribute(d.a) {
                schema
                    .facts
                    .entry(d.e)
                    .or_default()
                    .insert(d.a, d.v.clone());
            }
        }
        schema.rebuild(None)?;
        Ok(schema)
    }

    /// The schema after a transaction's datoms, or `None` if they leave it as
    /// it is. Refuses incomplete attributes and changes to an installed
    /// attribute that would make its stored datoms wrong.
    pub fn after(&self, datoms: &[Datom]) -> Result<Option<Schema>, SchemaError> {
        if !datoms.iter().any(|d| is_schema_attribute(d.a)) {
            return Ok(None);
        }
        let mut next = Schema {
            facts: self.facts.clone(),
            ..Schema::default()
        };
        for d in datoms.iter().filter(|d| is_schema_attribute(d.a)) {
            let facts = next.facts.entry(d.e).or_default();
            if d.added {
                facts.insert(d.a, d.v.clone());
            } else if facts.get(&d.a) == Some(&d.v) {
                facts.remove(&d.a);
            }
        }
        next.facts.retain(|_, facts| !facts.is_empty());
        next.rebuild(Some(self))?;
        Ok(Some(next))
    }

    fn rebuild(&mut self, before: Option<&Schema>) -> Result<(), SchemaError> {
        for (&e, facts) in &self.facts {
            let keyword = |a| facts.get(&a).and_then(Value::as_keyword);
            let ident = keyword(DB_IDENT);
            if let Some(ident) = ident {
                self.idents.insert(ident.clone(), e);
            }
            let Some(type_ident) = keyword(DB_VALUE_TYPE) else {
                if [DB_CARDINALITY, DB_UNIQUE, DB_IS_COMPONENT, DB_INDEX]
                    .iter()
                    .any(|a| facts.contains_key(a))
                {
                    return Err(SchemaError(format!(
                        "entity {e} has attribute facts but no :db/valueType"
                    )));
                }
                continue;
            };
            let ident =
                ident.ok_or_else(|| SchemaError(format!("attribute {e} has no :db/ident")))?;
            let fail = |why: String| SchemaError(format!("attribute {ident}: {why}"));
            let value_type = ValueType::from_ident(type_ident)
                .ok_or_else(|| fail(format!("unknown value type {type_ident}")))?;
            let cardinality = match keyword(DB_CARDINALITY).map(Keyword::as_str) {
                Some(one) if one == Cardinality::One.ident() => Cardinality::One,
                Some(many) if many == Cardinality::Many.ident() => Cardinality::Many,
                Some(other) => return Err(fail(format!("unknown cardinality :{other}"))),
                None => return Err(fail("it has no :db/cardinality".into())),
            };
            let unique = match keyword(DB_UNIQUE).map(Keyword::as_str) {
                Some(identity) if identity == Unique::Identity.ident() => Some(Unique::Identity),
                Some(value) if value == Unique::Value.ident() => Some(Unique::Value),
                Some(other) => return Err(fail(format!("unknown uniqueness :{other}"))),
                None => None,
            };
            if unique.is_some() && cardinality == Cardinality::Many {
                return Err(fail("a unique attribute must have cardinality one".into()));
            }
            let flag = |a| facts.get(&a).and_then(Value::as_bool).unwrap_or(false);
            let is_component = flag(DB_IS_COMPONENT);
            if is_component && value_type != ValueType::Ref {
                return Err(fail("only a ref attribute can be a component".into()));
            }
            let attribute = Attribute {
                id: e,
                ident: ident.clone(),
                value_type,
                cardinality,
                unique,
                is_component,
                index: flag(DB_INDEX),
                doc: facts
                    .get(&DB_DOC)
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            };
            if let Some(old) = before.and_then(|s| s.attributes.get(&e)) {
                check_alteration(old, &attribute)?;
            }
            self.attributes.insert(e, Arc::new(attribute));
        }
        if let Some(before) = before {
            for (ident, e) in &before.idents {
                if before.attributes.contains_key(e) && self.idents.get(ident) != Some(e) {
                    return Err(SchemaError(format!(
                        "attribute {ident} cannot be renamed or removed: its datoms and exports name it"
                    )));
                }
            }
        }
        Ok(())
    }

    pub fn attribute(&self, id: EntityId) -> Option<&Arc<Attribute>> {
        self.attributes.get(&id)
    }

    /// The attribute named `ident`, or `UnknownAttribute`.
    pub fn attribute_named(&self, ident: &Keyword) -> Result<&Arc<Attribute>, UnknownAttribute> {
        self.idents
            .get(ident)
            .and_then(|e| self.attributes.get(e))
            .ok_or_else(|| UnknownAttribute(ident.clone()))
    }

    /// The entity that has `ident`, attribute or not.
    pub fn entid(&self, ident: &Keyword) -> Option<EntityId> {
        self.idents.get(ident).copied()
    }

    /// Every installed attribute, in id order.
    pub fn attributes(&self) -> Vec<&Arc<Attribute>> {
        let mut all: Vec<_> = self.attributes.values().collect();
        all.sort_by_key(|a| a.id);
        all
    }
}

/// Changes to an installed attribute that would make its datoms or indexes
/// wrong are refused; its doc may change freely.
fn check_alteration(old: &Attribute, new: &Attribute) -> Result<(), SchemaError> {
    let refuse = |what: &str| {
        Err(SchemaError(format!(
            "attribute {} is installed; its {what} cannot change",
            old.ident
        )))
    };
    if old.value_type != new.value_type {
        return refuse(":db/valueType");
    }
    if old.cardinality != new.cardinality {
        return refuse(":db/cardinality");
    }
    if old.unique != new.unique {
        return refuse(":db/unique");
    }
    // Indexing an attribute is allowed (the store puts its datoms so far in
    // AVET in the same batch, as Datomic builds the index); dropping an
    // index is not, since AVET has no way to forget one attribute.
    if old.index && !new.index {
        return refuse(":db/index");
    }
    if old.is_component != new.is_component {
        return refuse(":db/isComponent");
    }
    Ok(())
}
