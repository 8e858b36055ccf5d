//! Every attribute the domain stores, declared once, in one table: its
//! ident, value type, cardinality, uniqueness, index, component, doc and
//! schema.org name, and, for a scalar field of a recipe, the field's part
//! (its label, where `Content` holds it, where the form shows it).
//!
//! The table is the order of installing: a store made by an older build
//! has its attributes' ids laid out so, and the domain's range reads rely
//! on that layout (`attrs`), so a row is never moved and a new one is
//! appended. From the table come the schema `site_schema` installs, the
//! `Attrs` of ids resolved once per store, by which every read and every
//! write names an attribute of the domain (`attrs.slug`: a transaction
//! carries the id, never a string, and the writer looks nothing up), the typed rows
//! (`A::SLUG`) for what needs the row itself, the schema.org names readers
//! and the JSON-LD shape (`schema_org`), and `content::FIELDS`, the rows
//! with a field's part, in the table's order, which drive reads, writes,
//! checks, history, merges, the form, the JSON and the schema.org mappings
//! out (`views`) and in (`import`).
//!
//! A new scalar field of a recipe is one row here (with its field's part,
//! and its member of `Content`) plus its view: `site_schema` installs it
//! after every other attribute, and the read, writes, checks, history,
//! merges and form carry it. A line of text among the form's details is
//! also in the JSON by its name and, with a schema.org name, in the page's
//! JSON-LD and read from other sites' JSON-LD and microdata by it; a page
//! shows it as `Label: text.` until it has words of its own. The last row
//! is one the `testing` feature adds, and a test sees it everywhere
//! (`writing::a_field_added_to_the_table_is_everywhere_a_field_is`).

use super::content::{Field, FormPlace, Slot};
use crate::store::{Cardinality, EntityId, Unique, ValueType};

/// One attribute as the table declares it. A transaction does not take
/// it: a write names the attribute by its id in this store (`Attrs`).
#[derive(Debug, PartialEq, Eq)]
pub struct Attr {
    /// The table's name for it: its member of `Attrs`, and for a field,
    /// the field's name in forms and messages.
    pub name: &'static str,
    /// `:recipe/slug`.
    pub ident: &'static str,
    pub value_type: ValueType,
    pub cardinality: Cardinality,
    pub unique: Option<Unique>,
    /// Whether its values are indexed (AVET).
    pub index: bool,
    /// Whether its values are components of the entity that has them.
    pub component: bool,
    /// Its `:db/doc`.
    pub doc: &'static str,
    /// The property of schema.org's `Recipe` that says the same, if any.
    pub schema_org: Option<&'static str>,
}

impl Attr {
    /// Its schema.org property. In a `const` (`schema_org`), a row without
    /// one does not compile.
    pub const fn property(&self) -> &'static str {
        match self.schema_org {
            Some(name) => name,
            None => panic!("this attribute has no schema.org name"),
        }
    }
}

/// The schema.org properties that the JSON-LD out and the readers of
/// JSON-LD and microdata shape themselves (a name, a list, a duration),
/// each its row's name in the table, found when the code is compiled. The
/// fields that are a line of text need none of these: they are read and
/// written by their rows (`content::Field::schema_org_line`).
pub mod schema_org {
    use super::A;

    pub const NAME: &str = A::TITLE.property();
    pub const DESCRIPTION: &str = A::SUMMARY.property();
    /// The servings and the yield's words, both.
    pub const RECIPE_YIELD: &str = A::YIELD_TEXT.property();
    pub const PREP_TIME: &str = A::PREP.property();
    pub const COOK_TIME: &str = A::COOK.property();
    pub const TOTAL_TIME: &str = A::TOTAL.property();
    pub const RECIPE_INGREDIENT: &str = A::INGREDIENTS.property();
    pub const RECIPE_INSTRUCTIONS: &str = A::STEPS.property();
    pub const KEYWORDS: &str = A::TAGS.property();
    pub const IMAGE: &str = A::IMAGE.property();
    pub const IN_LANGUAGE: &str = A::LANGUAGE.property();
}

/// The table's rows by name, for what needs the row itself (its ident,
/// its schema.org name, a field's part): `A::TITLE`. Not a value: only a
/// place for the names.
pub enum A {}

/// `(unique, index, component)` of a row's kind.
macro_rules! kind {
    (identity) => {
        (Some(Unique::Identity), false, false)
    };
    (unique) => {
        (Some(Unique::Value), false, false)
    };
    (index) => {
        (None::<Unique>, true, false)
    };
    (component) => {
        (None::<Unique>, false, true)
    };
    (plain) => {
        (None::<Unique>, false, false)
    };
}

/// `Some` of what is given, or `None`.
macro_rules! some {
    () => {
        None
    };
    ($value:expr) => {
        Some($value)
    };
}

/// A row's field of `content::FIELDS`, if it has one.
macro_rules! field_of {
    ($attr:expr, $name:expr) => {
        None
    };
    ($attr:expr, $name:expr, $label:literal, $what:literal,
     $slot:ident($($path:ident).+), $form:ident $(($place:literal))?) => {
        Some(Field {
            name: $name,
            attr: $attr,
            label: $label,
            what: $what,
            slot: Slot::$slot(|c| &c.$($path).+, |c| &mut c.$($path).+),
            form: FormPlace::$form $(($place))?,
        })
    };
}

/// The table: each row `name NAME: ident, type, cardinality, kind,
/// [schema_org "property",] doc [, field label, what, slot(member), place]`.
/// `kind` is `identity` (unique, and names its entity), `unique` (a value
/// held by one entity only), `index`, `component` or `plain`.
macro_rules! attributes {
    ($(
        $(#[$meta:meta])*
        $name:ident $konst:ident: $ident:literal, $vt:ident, $card:ident, $kind:ident,
        $(schema_org $schema:literal,)?
        $doc:literal
        $(, field $label:literal, $what:literal, $slot:ident($($path:ident).+),
            $form:ident $(($place:literal))?)?;
    )*) => {
        impl A {
            $(
                $(#[$meta])*
                #[doc = $doc]
                pub const $konst: &'static Attr = &Attr {
                    name: stringify!($name),
                    ident: $ident,
                    value_type: ValueType::$vt,
                    cardinality: Cardinality::$card,
                    unique: kind!($kind).0,
                    index: kind!($kind).1,
                    component: kind!($kind).2,
                    doc: $doc,
                    schema_org: some!($($schema)?),
                };
            )*
        }

        /// Every attribute, in the order of installing.
        pub const ATTRIBUTES: &[&Attr] = &[$($(#[$meta])* A::$konst,)*];

        /// Each row's field, if it has one.
        const ROW_FIELDS: &[Option<Field>] = &[$(
            $(#[$meta])*
            field_of!(A::$konst, stringify!($name)
                $(, $label, $what, $slot($($path).+), $form $(($place))?)?),
        )*];

        /// The entity id of each attribute of the table. Ids never change
        /// once installed, so they are resolved once, at open (`attrs`),
        /// and a read pays for no keyword lookups.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct Attrs {
            $($(#[$meta])* pub $name: EntityId,)*
            /// Each field of `content::FIELDS`, in the table's order.
            pub(super) fields: [EntityId; FIELDS.len()],
        }

        impl Attrs {
            /// Every attribute's id, as `id` finds it.
            pub(super) fn of<E>(
                mut id: impl FnMut(&'static Attr) -> Result<EntityId, E>,
            ) -> Result<Attrs, E> {
                let mut fields = [0; FIELDS.len()];
                for (slot, field) in fields.iter_mut().zip(FIELDS) {
                    *slot = id(field.attr)?;
                }
                Ok(Attrs {
                    $($(#[$meta])* $name: id(A::$konst)?,)*
                    fields,
                })
            }

            /// Every attribute's id, in the table's order (`ATTRIBUTES`).
            pub(super) fn in_order(&self) -> [EntityId; ATTRIBUTES.len()] {
                [$($(#[$meta])* self.$name,)*]
            }
        }
    };
}

/// How many rows have a field.
const FIELD_COUNT: usize = {
    let mut count = 0;
    let mut i = 0;
    while i < ROW_FIELDS.len() {
        if ROW_FIELDS[i].is_some() {
            count += 1;
        }
        i += 1;
    }
    count
};

/// The fields of `rows`, in order.
const fn fields_of(rows: &[Option<Field>]) -> [Field; FIELD_COUNT] {
    let mut i = 0;
    let first = loop {
        if let Some(field) = rows[i] {
            break field;
        }
        i += 1;
    };
    let mut out = [first; FIELD_COUNT];
    let mut at = 0;
    while i < rows.len() {
        if let Some(field) = rows[i] {
            out[at] = field;
            at += 1;
        }
        i += 1;
    }
    out
}

/// Every scalar field of a recipe but the title: the rows of the table
/// with a field's part, in its order. The title (required), the tags,
/// lines, steps and picture have shapes of their own and are written out
/// where they are used.
pub const FIELDS: &[Field] = &fields_of(ROW_FIELDS);

attributes! {
    slug SLUG: ":recipe/slug", String, One, identity,
        "The recipe's name in URLs; unique.";
    title TITLE: ":recipe/title", String, One, index, schema_org "name",
        "The recipe's title; indexed for the catalog's title order.";
    summary SUMMARY: ":recipe/summary", String, One, plain, schema_org "description",
        "Markdown: what the dish is.",
        field "summary", "the summary", Markdown(summary), Own;
    servings SERVINGS: ":recipe/servings", Long, One, plain, schema_org "recipeYield",
        "How many it serves.",
        field "servings", "servings", Servings(recipe_yield.servings), Own;
    yield_text YIELD_TEXT: ":recipe/yield-text", String, One, plain, schema_org "recipeYield",
        "The yield as written: \"12 pancakes\".",
        field "yield text", "what it makes", Line(recipe_yield.text), Own;
    prep PREP: ":recipe/prep-minutes", Long, One, plain, schema_org "prepTime",
        "Preparation time in minutes.",
        field "prep", "the preparation time", Minutes(prep), Own;
    cook COOK: ":recipe/cook-minutes", Long, One, plain, schema_org "cookTime",
        "Cooking time in minutes.",
        field "cook", "the cooking time", Minutes(cook), Own;
    total TOTAL: ":recipe/total-minutes", Long, One, plain, schema_org "totalTime",
        "Total time in minutes.",
        field "total", "the total time", Minutes(total), Own;
    ingredients INGREDIENTS: ":recipe/ingredients", Ref, Many, component,
        schema_org "recipeIngredient",
        "The ingredient lines, ordered by :ingredient/position.";
    steps STEPS: ":recipe/steps", Ref, Many, component, schema_org "recipeInstructions",
        "The steps, ordered by :step/position.";
    notes NOTES: ":recipe/notes", String, One, plain,
        "Markdown: tips, storage, variations.",
        field "notes", "the notes", Markdown(notes), Own;
    tags TAGS: ":recipe/tags", String, Many, index, schema_org "keywords",
        "Lower-case tags; indexed for tag pages.";
    cuisine CUISINE: ":recipe/cuisine", String, One, index, schema_org "recipeCuisine",
        "Where the dish comes from.",
        field "cuisine", "the cuisine", Line(cuisine), Details("Cuisine");
    category CATEGORY: ":recipe/category", String, One, index, schema_org "recipeCategory",
        "Breakfast, Main, Soup...",
        field "category", "the category", Line(category), Details("Category");
    image IMAGE: ":recipe/image", String, One, plain, schema_org "image",
        "An image URL.",
        field "image", "the picture's address", Address(image), Own;
    author AUTHOR: ":recipe/author", Ref, One, plain, schema_org "author",
        "The user who first wrote the recipe.";
    created_at CREATED_AT: ":recipe/created-at", Instant, One, index,
        schema_org "datePublished",
        "When the recipe was first written.";
    updated_at UPDATED_AT: ":recipe/updated-at", Instant, One, index,
        schema_org "dateModified",
        "When its newest version was made: the catalog's recent order.";
    version_count VERSION_COUNT: ":recipe/version-count", Long, One, plain,
        schema_org "version",
        "How many versions it has: kept by every write, so lists need not count history.";
    retired RETIRED: ":recipe/retired", Boolean, One, plain,
        "Hidden from the catalog, still in its forks' lineage.";
    forked_from FORKED_FROM: ":recipe/forked-from", Ref, One, plain, schema_org "isBasedOn",
        "The recipe this one was forked from.";
    forked_at_version FORKED_AT_VERSION: ":recipe/forked-at-version", Long, One, plain,
        "The parent's version number that was forked (1-based).";
    forked_at FORKED_AT: ":recipe/forked-at", Ref, One, plain,
        "The parent's version that was forked, as its transaction.";
    ingredient_position INGREDIENT_POSITION: ":ingredient/position", Long, One, plain,
        "Order within the recipe, from 1.";
    ingredient_line INGREDIENT_LINE: ":ingredient/line", String, One, plain,
        "The line as the cook wrote it.";
    ingredient_quantity INGREDIENT_QUANTITY: ":ingredient/quantity", Double, One, plain,
        "The amount read from the line.";
    ingredient_quantity_max INGREDIENT_QUANTITY_MAX: ":ingredient/quantity-max", Double, One,
        plain,
        "The top of a range (2-3 cloves).";
    ingredient_unit INGREDIENT_UNIT: ":ingredient/unit", String, One, plain,
        "The canonical unit (tbsp, g, cup...).";
    ingredient_item INGREDIENT_ITEM: ":ingredient/item", String, One, plain,
        "What it is.";
    ingredient_note INGREDIENT_NOTE: ":ingredient/note", String, One, plain,
        "After the comma: chopped, to taste...";
    step_position STEP_POSITION: ":step/position", Long, One, plain,
        "Order within the recipe, from 1.";
    step_text STEP_TEXT: ":step/text", String, One, plain,
        "Markdown: what to do.";
    step_section STEP_SECTION: ":step/section", String, One, plain,
        "The named part of the recipe the step belongs to.";
    user_handle USER_HANDLE: ":user/handle", String, One, identity,
        "A user's unique handle.";
    user_name USER_NAME: ":user/name", String, One, plain,
        "A user's display name.";
    tx_author TX_AUTHOR: ":tx/author", Ref, One, plain,
        "Who made a transaction.";
    tx_note TX_NOTE: ":tx/note", String, One, plain,
        "Why: the version's note.";
    tx_change TX_CHANGE: ":tx/change", String, One, plain,
        "What an edit or retirement changed, in a line (`title, 2 ingredients`), decided in the writer when the version is written so history never diffs to list it.";
    picture PICTURE: ":recipe/picture", String, One, index,
        "The recipe's uploaded picture: the hash that names it in the pictures keyspace, stored there before any transaction names it; indexed so that a picture is served only while a version names it, and collected when none does.";
    picture_alt PICTURE_ALT: ":recipe/picture-alt", String, One, plain,
        "What the picture shows, in words.";
    picture_width PICTURE_WIDTH: ":recipe/picture-width", Long, One, plain,
        "The picture's width in pixels, upright.";
    picture_height PICTURE_HEIGHT: ":recipe/picture-height", Long, One, plain,
        "The picture's height in pixels, upright.";
    source_url SOURCE_URL: ":recipe/source-url", String, One, plain,
        "For a recipe brought in from another site: the page it was read from, where its lineage starts.";
    source_name SOURCE_NAME: ":recipe/source-name", String, One, plain,
        "The name of the site the recipe was brought in from.";
    terms TERMS: ":recipe/terms", String, Many, index,
        "Search terms: the inverted index, kept in each recipe's own transactions until search had an index of its own; no longer written (a recipe's first edit since retracts them), and kept so that older stores and exports read.";
    merged_at MERGED_AT: ":recipe/merged-at", Ref, One, plain,
        "The parent's version this fork last brought in (a three-way merge of the parent's changes since the fork last agreed with it), as its transaction; asserted by the version that brought it in, so the attribute's history lists every merge.";
    merged_at_version MERGED_AT_VERSION: ":recipe/merged-at-version", Long, One, plain,
        "The parent's version number this fork last brought in (1-based): where the next merge starts.";
    suggestion_from SUGGESTION_FROM: ":suggestion/from", Ref, One, plain,
        "The fork whose changes a suggestion proposes to its parent.";
    suggestion_from_version SUGGESTION_FROM_VERSION: ":suggestion/from-version", Long, One,
        plain,
        "The fork's version suggested; moved to the fork's newest while the suggestion is open.";
    suggestion_to SUGGESTION_TO: ":suggestion/to", Ref, One, plain,
        "The recipe a suggestion is made to: the fork's parent.";
    suggestion_base_version SUGGESTION_BASE_VERSION: ":suggestion/base-version", Long, One,
        plain,
        "The parent's version the fork last agreed with when it suggested: the merge's base.";
    suggestion_number SUGGESTION_NUMBER: ":suggestion/number", Long, One, plain,
        "The suggestion's number among those made to its recipe (1-based), decided in the writer: its address.";
    suggestion_by SUGGESTION_BY: ":suggestion/by", Ref, One, plain,
        "The cook who made the suggestion.";
    suggestion_message SUGGESTION_MESSAGE: ":suggestion/message", String, One, plain,
        "What the suggester says of the change.";
    suggestion_state SUGGESTION_STATE: ":suggestion/state", String, One, plain,
        "open, accepted, declined, withdrawn, or closed (its recipe was retired); decided in the writer.";
    suggestion_reply SUGGESTION_REPLY: ":suggestion/reply", String, One, plain,
        "The parent's author's note on declining or accepting.";
    suggestion_accepted_in SUGGESTION_ACCEPTED_IN: ":suggestion/accepted-in", Long, One, plain,
        "The parent's version that accepting the suggestion made.";
    suggestion_to_author SUGGESTION_TO_AUTHOR: ":suggestion/to-author", Ref, One, plain,
        "The author of the recipe a suggestion is made to: so that the suggestions a cook has been sent are one read, whatever the number of their recipes.";
    suggestion_open_to SUGGESTION_OPEN_TO: ":suggestion/open-to", Ref, One, plain,
        "The recipe an open suggestion is made to, retracted when it is accepted, declined or withdrawn: a recipe's open suggestions are one VAET read, however many it has had.";
    took_suggestion TOOK_SUGGESTION: ":recipe/took-suggestion", Ref, One, plain,
        "The suggestion a recipe's version took, asserted by that version with :recipe/took: its history lists every suggestion the recipe took, in one read.";
    took TOOK: ":recipe/took", Ref, One, plain,
        "The suggesting fork's version a recipe's version took (accepting a suggestion), as its transaction; asserted by that version, so the attribute's history lists every suggestion taken, as :recipe/merged-at's lists every merge.";
    tx_attempt TX_ATTEMPT: ":tx/attempt", String, One, unique,
        "The form a change was sent from and what it said, as a sum (`domain::Attempt`): the same form sent again finds the transaction that saved it and saves nothing, on whichever node it lands.";
    kept_own KEPT_OWN: ":recipe/kept-own", Long, One, plain,
        "For a fork: of the changes it and its parent made differently, how many it kept its own version of when it last brought the parent's in (retracted by a bring-in that kept none).";
    own_changes OWN_CHANGES: ":recipe/own-changes", Boolean, One, plain,
        "For a fork: whether its newest version has changes its parent lacks (all but its title and picture, which are its own), against the version it last agreed with; decided by the writer on every version of a fork, so that a page offers to suggest them without a diff.";
    contributor CONTRIBUTOR: ":recipe/contributor", Ref, Many, plain, schema_org "contributor",
        "A cook whose suggestion the recipe took: credited as its contributor.";
    suggestion_base_fork_version SUGGESTION_BASE_FORK_VERSION: ":suggestion/base-fork-version",
        Long, One, plain,
        "When a suggestion's base is an earlier suggestion its parent took beside changes of its own: that suggestion's fork version, merged as it was suggested onto :suggestion/base-version.";
    suggestion_whole SUGGESTION_WHOLE: ":suggestion/whole", Boolean, One, plain,
        "Asserted when a suggestion is accepted onto a recipe that had no change of its own since the suggestion's base: the new version is the fork's changes alone, so the fork is in step with it.";
    suggestion_kept_own SUGGESTION_KEPT_OWN: ":suggestion/kept-own", Long, One, plain,
        "Once accepted: of the changes the suggestion and its recipe made differently, how many the recipe's author kept their own version of (0 when it was taken whole).";
    agreement_fork AGREEMENT_FORK: ":agreement/fork", Ref, One, plain,
        "A fork that brought in its parent's changes without a change to itself (it had them, or kept its own side of each): the agreement records that it is in step, as an entity of its own, so that the fork gains no version that changes nothing.";
    agreement_parent_version AGREEMENT_PARENT_VERSION: ":agreement/parent-version", Long, One,
        plain,
        "The parent's version the fork agrees with from then on.";
    agreement_fork_version AGREEMENT_FORK_VERSION: ":agreement/fork-version", Long, One, plain,
        "The fork's version that agrees: its newest when the agreement was made.";
    agreement_kept_own AGREEMENT_KEPT_OWN: ":agreement/kept-own", Long, One, plain,
        "Of the changes the fork and its parent made differently, how many the fork kept its own version of.";
    agreement_own_changes AGREEMENT_OWN_CHANGES: ":agreement/own-changes", Boolean, One, plain,
        "Whether the fork, at its version that agrees, has changes its parent lacks.";
    agreement_settled AGREEMENT_SETTLED: ":agreement/settled", String, One, plain,
        "How each conflict was settled, in words for history (each kept as the fork had it).";
    language LANGUAGE: ":recipe/language", String, One, plain, schema_org "inLanguage",
        "The language the recipe is written in, as its cook names it.",
        field "language", "the language", Line(language), Details("Language");
    remote_fork_of REMOTE_FORK_OF: ":remote-fork/of", Ref, One, plain,
        "A recipe here that a cook on another site forked (their site told this one, with ActivityPub): the fork is listed in the recipe's family, as on its site.";
    remote_fork_url REMOTE_FORK_URL: ":remote-fork/url", String, One, identity,
        "The remote fork's address on its site: told again, it is the same fork.";
    remote_fork_name REMOTE_FORK_NAME: ":remote-fork/name", String, One, plain,
        "The remote fork's title, as its site told it.";
    remote_fork_by REMOTE_FORK_BY: ":remote-fork/by", String, One, plain,
        "Who made the remote fork: their handle and site (@ben@b.example).";
    source_inbox SOURCE_INBOX: ":recipe/source-inbox", String, One, plain,
        "For a fork of a recipe on another site: the inbox of that recipe's author, told of the fork (with ActivityPub) from the log, as every delivery is.";
    remote_author REMOTE_AUTHOR: ":recipe/remote-author", String, One, plain,
        "For a recipe kept here from another site (the parent of a fork across sites, named by its address there): its author there, by actor id. Only they can tell of its new versions or its retirement.";
    remote_inbox REMOTE_INBOX: ":recipe/remote-inbox", String, One, plain,
        "For a recipe kept here from another site: the inbox of its author there, where a fork's suggestion to it is offered (ActivityPub `Offer`).";
    suggestion_offer SUGGESTION_OFFER: ":suggestion/offer", String, One, identity,
        "For a suggestion offered from another site (an ActivityPub `Offer` of a fork there): the offer's id, answered (`Accept`, `Reject`) when the suggestion is; offered again, it is the same suggestion.";
    suggestion_remote_by SUGGESTION_REMOTE_BY: ":suggestion/remote-by", String, One, plain,
        "For a suggestion offered from another site: who offered it, by handle and site (@ben@b.example).";
    // The row a test adds, only with the `testing` feature (never in a build
    // of the site): a new field, with no code anywhere but this row and
    // its member of `Content`, seen wherever a field is
    // (`writing::a_field_added_to_the_table_is_everywhere_a_field_is`).
    #[cfg(feature = "testing")]
    cooking_method COOKING_METHOD: ":recipe/cooking-method", String, One, plain,
        schema_org "cookingMethod",
        "How the dish is cooked: Frying, Steaming... A row for tests only.",
        field "cooking method", "the cooking method", Line(cooking_method),
            Details("Cooking method");
}
