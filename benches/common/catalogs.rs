//! The catalogs the page and domain benches read: the demo seed, synthetic
//! catalogs, and the deepest lineage in each, found rather than named.

use forkful::domain::{CatalogQuery, RecipeId, Recipes, Snapshot};
use forkful::seed::synthetic::{self, Shape};
use forkful::store::{EntityId, Store};

/// The demo seed in a fresh temporary store.
pub(crate) fn demo() -> Recipes {
    let store = Store::temporary().expect("temporary store");
    forkful::seed::demo(&store).expect("demo seed");
    Recipes::open(store).expect("domain")
}

/// A synthetic catalog in a fresh temporary store, and its recipes' ids.
pub(crate) fn synthetic_catalog(shape: Shape) -> (Recipes, Vec<EntityId>) {
    let store = Store::temporary().expect("temporary store");
    let ids = synthetic::generate(&store, shape, false).expect("synthetic catalog");
    (Recipes::open(store).expect("domain"), ids)
}

/// A synthetic catalog kept on disk under `target/bench-stores`, built on
/// the first run only: writing 100,000 recipes takes sled minutes, reading
/// them takes none. The directory's name holds the shape and the store's
/// format version, and a marker file is written last, so a half-built or
/// stale store is never used.
pub(crate) fn stored_catalog(name: &str, shape: Shape) -> (Recipes, Vec<EntityId>) {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target"),
        std::path::PathBuf::from,
    );
    let dir = target.join("bench-stores").join(format!(
        "{name}-{}-{}-{}-{}-{}-v{}",
        shape.recipes,
        shape.depth,
        shape.fanout,
        shape.rng,
        shape.skeleton,
        forkful::store::FORMAT_VERSION
    ));
    let marker = dir.join("complete");
    let ids_file = dir.join("ids");
    if marker.exists() {
        let store = Store::open(&dir).expect("stored catalog");
        let ids = std::fs::read_to_string(&ids_file)
            .expect("ids")
            .lines()
            .map(|l| l.parse().expect("an id"))
            .collect();
        return (Recipes::open(store).expect("domain"), ids);
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "building {} once, in {} (minutes; later runs reuse it)",
        name,
        dir.display()
    );
    let store = Store::open(&dir).expect("bench store");
    let ids = synthetic::generate(&store, shape, true).expect("synthetic catalog");
    let listed: Vec<String> = ids.iter().map(ToString::to_string).collect();
    std::fs::write(&ids_file, listed.join("\n")).expect("ids");
    std::fs::write(&marker, "").expect("marker");
    (Recipes::open(store).expect("domain"), ids)
}

/// The slug of the recipe with the longest lineage among `ids` (the whole
/// catalog when `ids` is empty), and that lineage's length.
pub(crate) fn deepest(view: &Snapshot, ids: &[EntityId]) -> (String, usize) {
    let ids: Vec<RecipeId> = if ids.is_empty() {
        let mut all = Vec::new();
        let mut query = CatalogQuery {
            limit: 500,
            ..CatalogQuery::default()
        };
        loop {
            let page = view.catalog(&query).expect("catalog");
            all.extend(page.entries.iter().map(|e| e.id));
            match page.next {
                Some(after) => query.after = Some(after),
                None => break all,
            }
        }
    } else {
        ids.iter().copied().map(RecipeId::new).collect()
    };
    let (id, depth) = ids
        .iter()
        .map(|id| (*id, view.lineage(*id).expect("lineage").len()))
        .max_by_key(|(id, depth)| (*depth, std::cmp::Reverse(*id)))
        .expect("a recipe");
    (view.slug_of(id).expect("slug"), depth)
}
