//! A synthetic catalog: N recipes in fork forests of a chosen shape, the
//! same every time for the same numbers, for scale tests and benches.
//!
//! Each tree has a spine: an original forked `depth` times in a chain, so the
//! deepest recipe's lineage is exactly `depth` long; and every recipe on the
//! spine has `fanout - 1` more forks beside the next link. Trees repeat until
//! there are N recipes (the last one may be cut short). Recipes are written
//! in batches, each one transaction, parents before their forks; a group of
//! batches is made durable by one flush.

use indicatif::{ProgressBar, ProgressStyle};

use super::SeedFailure;
use crate::domain::write::ForkOf;
use crate::domain::{Change, ContentDraft, DomainError, Minutes, Recipes, Slug, Step, Yield};
use crate::store::{EntityId, EntityRef, Store};

/// The shape of a synthetic catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub recipes: usize,
    /// The length of each tree's spine: its deepest lineage.
    pub depth: usize,
    /// Forks per spine recipe, the next link included (at least 1).
    pub fanout: usize,
    /// The seed of the generator: the same numbers give the same catalog.
    pub rng: u64,
    /// Bare recipes (a title, one ingredient, one step, no summary or tags):
    /// a tenth of the datoms, for scale tests of lineage and forks, where a
    /// full 100,000-recipe catalog takes sled many minutes to write.
    pub skeleton: bool,
}

/// Datoms per transaction, roughly: ten full recipes (about a hundred
/// datoms each) or a hundred skeletons, far inside `MAX_TX_DATOMS`. Small
/// transactions keep sled's memory small: it holds every node version a
/// batch replaces until the batch ends (10,000 full recipes: 2.8 GB peak at
/// 500 recipes a transaction, 0.8 GB at 5, when every datom was four sled
/// keys; docs/journal/10-bulk-loads.md). With the grouped layout a transaction is a
/// few keys per recipe, so ten recipes cost what five did before.
const BATCH_DATOMS: usize = 1000;

/// Transactions per flush: written one after another and made durable
/// together, one fsync for the group. sled cannot page out what is not yet
/// flushed, so a group is kept small too.
const GROUP: usize = 10;

/// SplitMix64: small, fast, and good enough to vary titles (and where the
/// demo's drawings put things).
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

const DISHES: &[&str] = &[
    "shakshuka",
    "dal",
    "ragù",
    "chili",
    "pancakes",
    "banana bread",
    "focaccia",
    "pho",
    "bibimbap",
    "ratatouille",
    "risotto",
    "tagine",
    "curry",
    "frittata",
    "paella",
    "gumbo",
    "laksa",
    "goulash",
    "moussaka",
    "biryani",
];
const TWISTS: &[&str] = &[
    "smoky",
    "green",
    "weeknight",
    "slow-cooked",
    "spicy",
    "lemony",
    "herby",
    "sheet-pan",
    "one-pot",
    "crispy",
    "vegan",
    "brown-butter",
    "charred",
    "golden",
    "summer",
    "winter",
];
const ITEMS: &[&str] = &[
    "olive oil",
    "onion, diced",
    "garlic cloves, crushed",
    "tomatoes",
    "smoked paprika",
    "cumin seeds",
    "eggs",
    "spinach",
    "feta, crumbled",
    "lemon, zested",
    "chickpeas, drained",
    "coconut milk",
    "basmati rice",
    "butter",
    "flour",
    "stock",
    "parsley, chopped",
    "chilli flakes",
];
const UNITS: &[&str] = &[
    "2 tbsp",
    "1",
    "3",
    "400 g",
    "1 tsp",
    "½ tsp",
    "200 g",
    "1 cup",
    "1 1/2 cups",
    "2",
];
const TAGS: &[&str] = &[
    "vegetarian",
    "vegan",
    "quick",
    "weeknight",
    "one-pot",
    "spicy",
    "baking",
    "soup",
    "make-ahead",
];

fn content(rng: &mut Rng, i: usize, skeleton: bool) -> ContentDraft {
    let title = format!("{} {} {i}", capitalise(rng.pick(TWISTS)), rng.pick(DISHES));
    if skeleton {
        return ContentDraft {
            title,
            ingredients: vec![format!("{} {}", rng.pick(UNITS), rng.pick(ITEMS))],
            steps: vec![Step {
                section: None,
                text: "Cook.".into(),
            }],
            ..ContentDraft::default()
        };
    }
    let ingredients = (0..8)
        .map(|_| format!("{} {}", rng.pick(UNITS), rng.pick(ITEMS)))
        .collect();
    let steps = (1..=5)
        .map(|n| Step {
            section: (n == 5).then(|| "To serve".to_owned()),
            text: format!(
                "Step {n}: cook the {} until **golden**, about {} minutes.",
                rng.pick(ITEMS),
                3 + n * 2
            ),
        })
        .collect();
    ContentDraft {
        title,
        summary: Some(format!(
            "A {} take on {}, made often and changed a little each time.",
            rng.pick(TWISTS),
            rng.pick(DISHES)
        )),
        recipe_yield: Yield {
            servings: Some(2 + (rng.next() % 5) as i64),
            text: None,
        },
        prep: Minutes::new(10).ok(),
        cook: Minutes::new(20 + (rng.next() % 40) as i64).ok(),
        total: None,
        ingredients,
        steps,
        tags: vec![rng.pick(TAGS).to_owned(), rng.pick(TAGS).to_owned()],
        category: Some("Main".into()),
        ..ContentDraft::default()
    }
}

fn capitalise(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

/// Where recipe `i` of a tree sits: its parent's index in the tree, if any.
/// Spine recipes are `0..=depth`; then each spine recipe's side forks.
fn parent_in_tree(i: usize, depth: usize, fanout: usize) -> Option<usize> {
    if i == 0 {
        None
    } else if i <= depth {
        Some(i - 1)
    } else {
        Some((i - depth - 1) / (fanout - 1).max(1))
    }
}

/// The size of one tree.
pub fn tree_size(depth: usize, fanout: usize) -> usize {
    (depth + 1) * fanout.max(1)
}

/// Writes a synthetic catalog into `store` and returns the ids of the
/// recipes, in order (recipe 0 of each tree is its original; recipe `depth`
/// of the first tree has the deepest lineage).
pub fn generate(store: &Store, shape: Shape, progress: bool) -> Result<Vec<EntityId>, SeedFailure> {
    let shape = Shape {
        fanout: shape.fanout.max(1),
        ..shape
    };
    // A fixed, old starting instant, so a catalog's history is the same
    // every time and later edits are never "before" it.
    let start = crate::store::parse_rfc3339("2020-01-01T00:00:00Z").expect("a literal instant");
    crate::domain::site_schema::install_at(store, Some(start))
        .map_err(crate::domain::DomainError::from)?;
    let recipes = Recipes::open(store.clone())?;
    let bar = if progress {
        ProgressBar::new(shape.recipes as u64)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} recipes, {per_sec}, {eta} left")
            .expect("a valid template"),
    );
    let per_tree = tree_size(shape.depth, shape.fanout);
    let mut rng = Rng(shape.rng);
    let mut ids: Vec<EntityId> = Vec::with_capacity(shape.recipes);
    let mut created_tx: Vec<EntityId> = Vec::with_capacity(shape.recipes);
    let per_recipe = if shape.skeleton { 10 } else { 100 };
    let batch = BATCH_DATOMS / per_recipe;
    for (batch_number, start_at) in (0..shape.recipes).step_by(batch).enumerate() {
        let end = shape.recipes.min(start_at + batch);
        let mut batch = Vec::with_capacity(end - start_at);
        for i in start_at..end {
            let (tree, at) = (i / per_tree, i % per_tree);
            let fork = parent_in_tree(at, shape.depth, shape.fanout).map(|p| {
                let parent = tree * per_tree + p;
                if parent < start_at {
                    ForkOf {
                        parent: EntityRef::Id(ids[parent]),
                        at_tx: EntityRef::Id(created_tx[parent]),
                        at_version: 1,
                    }
                } else {
                    ForkOf {
                        parent: EntityRef::temp(format!("r{parent}")),
                        at_tx: EntityRef::CurrentTx,
                        at_version: 1,
                    }
                }
            });
            let slug = Slug::parse(&format!("synthetic-{i}")).expect("a valid slug");
            batch.push((
                format!("r{i}"),
                slug,
                // Parsed as any recipe's content is: the batch's writer
                // takes it so (its two tags may be one tag twice).
                content(&mut rng, i, shape.skeleton)
                    .normalized()
                    .map_err(DomainError::from)?,
                fork,
            ));
        }
        let change = Change {
            author: "synthetic".into(),
            note: format!("synthetic batch {batch_number}"),
            at: Some(start + (batch_number as i64 + 1) * 60_000),
            attempt: None,
        };
        let report = recipes.create_batch(&batch, &change)?;
        for (tempid, ..) in &batch {
            ids.push(report.tempid(tempid).expect("each recipe has an id"));
            created_tx.push(report.basis_after);
        }
        if (batch_number + 1) % GROUP == 0 || end == shape.recipes {
            store
                .wait_durable(report.basis_after)
                .map_err(crate::domain::DomainError::from)?;
        }
        bar.inc(batch.len() as u64);
    }
    bar.finish_and_clear();
    Ok(ids)
}
