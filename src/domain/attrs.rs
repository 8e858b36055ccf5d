//! The domain's attribute ids, resolved once per store, and the layout of
//! those ids that the reads rely on, checked then.

use super::content::{Field, FIELDS};
use crate::store::{kw, Db, EntityId, ReadError, StorageError, StoreError};

macro_rules! attrs {
    ($($field:ident => $ident:literal),* $(,)?) => {
        /// The entity id of each attribute the domain uses. Ids never change
        /// once installed, so they are resolved once, at open, and a read
        /// pays for no keyword lookups.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct Attrs {
            $(pub $field: EntityId,)*
            /// Each field of `content::FIELDS`, in the table's order.
            fields: [EntityId; FIELDS.len()],
        }

        impl Attrs {
            /// Resolves every attribute; fails if the schema is not
            /// installed, or not laid out as the reads assume (`ranges`).
            pub fn resolve(db: &Db) -> Result<Attrs, StoreError> {
                let mut fields = [0; FIELDS.len()];
                for (id, field) in fields.iter_mut().zip(FIELDS) {
                    *id = db.attribute(&kw(field.ident)).map_err(ReadError::from)?.id;
                }
                let attrs = Attrs {
                    $($field: db.attribute(&kw($ident)).map_err(ReadError::from)?.id,)*
                    fields,
                };
                attrs.check_layout()?;
                Ok(attrs)
            }

            /// The ident of attribute `id`, for messages.
            fn ident(&self, id: EntityId) -> &'static str {
                $(if id == self.$field { return $ident; })*
                match self.field(id) {
                    Some(field) => field.ident,
                    None => "an attribute the domain does not use",
                }
            }

            /// The field of `content::FIELDS` whose attribute is `id`.
            pub fn field(&self, id: EntityId) -> Option<&'static Field> {
                let at = self.fields.iter().position(|&f| f == id)?;
                Some(&FIELDS[at])
            }

            /// The attribute id of each field of `content::FIELDS`.
            pub fn fields(&self) -> impl Iterator<Item = (EntityId, &'static Field)> + '_ {
                self.fields.iter().copied().zip(FIELDS)
            }
        }
    };
}

attrs! {
    slug => ":recipe/slug",
    title => ":recipe/title",
    summary => ":recipe/summary",
    servings => ":recipe/servings",
    yield_text => ":recipe/yield-text",
    prep => ":recipe/prep-minutes",
    cook => ":recipe/cook-minutes",
    total => ":recipe/total-minutes",
    ingredients => ":recipe/ingredients",
    steps => ":recipe/steps",
    notes => ":recipe/notes",
    tags => ":recipe/tags",
    cuisine => ":recipe/cuisine",
    category => ":recipe/category",
    image => ":recipe/image",
    author => ":recipe/author",
    created_at => ":recipe/created-at",
    updated_at => ":recipe/updated-at",
    version_count => ":recipe/version-count",
    retired => ":recipe/retired",
    forked_from => ":recipe/forked-from",
    forked_at_version => ":recipe/forked-at-version",
    forked_at => ":recipe/forked-at",
    ingredient_position => ":ingredient/position",
    ingredient_line => ":ingredient/line",
    step_position => ":step/position",
    step_text => ":step/text",
    step_section => ":step/section",
    user_handle => ":user/handle",
    user_name => ":user/name",
    tx_author => ":tx/author",
    tx_note => ":tx/note",
    tx_change => ":tx/change",
    tx_attempt => ":tx/attempt",
    picture => ":recipe/picture",
    picture_alt => ":recipe/picture-alt",
    picture_width => ":recipe/picture-width",
    picture_height => ":recipe/picture-height",
    source_url => ":recipe/source-url",
    source_name => ":recipe/source-name",
    terms => ":recipe/terms",
    merged_at => ":recipe/merged-at",
    merged_at_version => ":recipe/merged-at-version",
    suggestion_from => ":suggestion/from",
    suggestion_from_version => ":suggestion/from-version",
    suggestion_to => ":suggestion/to",
    suggestion_base_version => ":suggestion/base-version",
    suggestion_number => ":suggestion/number",
    suggestion_by => ":suggestion/by",
    suggestion_message => ":suggestion/message",
    suggestion_state => ":suggestion/state",
    suggestion_reply => ":suggestion/reply",
    suggestion_accepted_in => ":suggestion/accepted-in",
    suggestion_to_author => ":suggestion/to-author",
    took => ":recipe/took",
    suggestion_open_to => ":suggestion/open-to",
    took_suggestion => ":recipe/took-suggestion",
    kept_own => ":recipe/kept-own",
    own_changes => ":recipe/own-changes",
    contributor => ":recipe/contributor",
    suggestion_base_fork_version => ":suggestion/base-fork-version",
    suggestion_whole => ":suggestion/whole",
    suggestion_kept_own => ":suggestion/kept-own",
    agreement_fork => ":agreement/fork",
    agreement_parent_version => ":agreement/parent-version",
    agreement_fork_version => ":agreement/fork-version",
    agreement_kept_own => ":agreement/kept-own",
    agreement_own_changes => ":agreement/own-changes",
    agreement_settled => ":agreement/settled",
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
    /// (`site_schema::ORDER`); a store whose attributes were installed in
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
