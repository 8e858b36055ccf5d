//! The domain's attribute ids, resolved once per store.

use crate::store::{kw, Db, EntityId, ReadError};

macro_rules! attrs {
    ($($field:ident => $ident:literal),* $(,)?) => {
        /// The entity id of each attribute the domain uses. Ids never change
        /// once installed, so they are resolved once, at open, and a read
        /// pays for no keyword lookups.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct Attrs {
            $(pub $field: EntityId,)*
        }

        impl Attrs {
            /// Resolves every attribute; fails if the schema is not installed.
            pub fn resolve(db: &Db) -> Result<Attrs, ReadError> {
                Ok(Attrs {
                    $($field: db.attribute(&kw($ident))?.id,)*
                })
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
    picture => ":recipe/picture",
    picture_alt => ":recipe/picture-alt",
    picture_width => ":recipe/picture-width",
    picture_height => ":recipe/picture-height",
    source_url => ":recipe/source-url",
    source_name => ":recipe/source-name",
    terms => ":recipe/terms",
}
