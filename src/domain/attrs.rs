//! The domain's attribute ids (`Attrs`, made from the table in
//! `attributes`), resolved once per store, and the layout of those ids that
//! the reads rely on, checked then.

pub use super::attributes::Attrs;
use super::attributes::ATTRIBUTES;
use super::content::{Field, FIELDS};
use crate::store::{kw, Db, EntityId, ReadError, StorageError, StoreError};

impl Attrs {
    /// Resolves every attribute of the table; fails if the schema is not
    /// installed, or not laid out as the reads assume (`ranges`).
    pub fn resolve(db: &Db) -> Result<Attrs, StoreError> {
        let attrs = Attrs::of(|attr| -> Result<EntityId, StoreError> {
            Ok(db.attribute(&kw(attr.ident)).map_err(ReadError::from)?.id)
        })?;
        attrs.check_layout()?;
        Ok(attrs)
    }

    /// The ident of attribute `id`, for messages.
    fn ident(&self, id: EntityId) -> &'static str {
        ATTRIBUTES
            .iter()
            .zip(self.in_order())
            .find(|(_, of)| *of == id)
            .map_or("an attribute the domain does not use", |(attr, _)| {
                attr.ident
            })
    }

    /// The field of `content::FIELDS` whose attribute is `id`.
    pub fn field(&self, id: EntityId) -> Option<&'static Field> {
        let at = self.fields.iter().position(|&f| f == id)?;
        Some(&FIELDS[at])
    }
}

/// A read of several of an entity's attributes as one range of ids (one
/// EAVT read instead of one per attribute).
struct Range {
    /// Who reads it.
    read: &'static str,
    first: EntityId,
    last: EntityId,
    /// The attributes it wants from the range.
    wanted: Vec<EntityId>,
    /// Whether the range must hold nothing else: a read that takes "the
    /// first, or else the second" needs the two adjacent.
    only_these: bool,
}

impl Range {
    fn new(
        read: &'static str,
        first: EntityId,
        last: EntityId,
        wanted: &[EntityId],
        only_these: bool,
    ) -> Range {
        Range {
            read,
            first,
            last,
            wanted: wanted.to_vec(),
            only_these,
        }
    }
}

impl Attrs {
    /// What a recipe's read (`Snapshot::recipe_by_id`) takes of the range
    /// before its search terms.
    fn recipe_read(&self) -> Vec<EntityId> {
        vec![
            self.slug,
            self.title,
            self.summary,
            self.servings,
            self.yield_text,
            self.prep,
            self.cook,
            self.total,
            self.ingredients,
            self.steps,
            self.notes,
            self.tags,
            self.cuisine,
            self.category,
            self.image,
            self.author,
            self.created_at,
            self.updated_at,
            self.version_count,
            self.retired,
            self.forked_from,
            self.forked_at_version,
        ]
    }

    /// Every range read of the domain, and what it needs of the ids. The
    /// schema installs the attributes in an order that meets them all
    /// (the table's, `attributes`); a store whose attributes were installed in
    /// another order would be misread, so it is refused.
    fn ranges(&self) -> Vec<Range> {
        vec![
            Range::new(
                "a recipe's read (every attribute before its search terms)",
                0,
                self.terms.saturating_sub(1),
                &self.recipe_read(),
                false,
            ),
            Range::new(
                "a catalog line",
                self.slug,
                self.retired,
                &[
                    self.slug,
                    self.title,
                    self.summary,
                    self.tags,
                    self.version_count,
                    self.updated_at,
                    self.retired,
                ],
                false,
            ),
            Range::new(
                "a link's slug and title",
                self.slug,
                self.title,
                &[self.slug, self.title],
                true,
            ),
            Range::new(
                "the lineage walk",
                self.forked_from,
                self.forked_at_version,
                &[self.forked_from, self.forked_at_version],
                true,
            ),
            Range::new(
                "a recipe's source",
                self.source_url,
                self.source_name,
                &[self.source_url, self.source_name],
                false,
            ),
            Range::new(
                "a step",
                self.step_text,
                self.step_section,
                &[self.step_text, self.step_section],
                true,
            ),
        ]
    }

    /// Checks `ranges`: a store that fails it is refused whole when opened,
    /// in every build, rather than misread page by page.
    fn check_layout(&self) -> Result<(), StorageError> {
        for range in self.ranges() {
            let outside = range
                .wanted
                .iter()
                .find(|&&a| a < range.first || a > range.last);
            if let Some(&a) = outside {
                return Err(StorageError::Corrupt(format!(
                    "{} (id {a}) is outside the ids {} to {} that {} reads: \
                     the domain's attributes were installed out of order",
                    self.ident(a),
                    range.first,
                    range.last,
                    range.read
                )));
            }
            let span = range.last - range.first + 1;
            if range.only_these && span != range.wanted.len() as u64 {
                return Err(StorageError::Corrupt(format!(
                    "{} reads {} and {} as adjacent ids, and they are {} and {}: \
                     the domain's attributes were installed out of order",
                    range.read,
                    self.ident(range.first),
                    self.ident(range.last),
                    range.first,
                    range.last
                )));
            }
        }
        Ok(())
    }
}
