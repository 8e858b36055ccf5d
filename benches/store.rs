//! The fact store's own costs, below the domain and the web: one recipe-sized
//! write, and the reads a recipe page is made of. See `docs/BENCHMARKING.md`
//! for what each figure means and the targets they are held to.

mod common;

use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkGroup, Criterion};
use forkful::store::{kw, EntityMap, EntityRef, PullPattern, Transaction, Value};

/// Recipes in the store the reads run against: a small catalog, enough that
/// its keys span many sled leaves.
const CATALOG: usize = 1_000;

/// The pattern of a recipe page: every attribute, ingredients and steps whole.
const RECIPE_PATTERN: &str = "[* {:recipe/ingredients [*]} {:recipe/steps [*]}]";

/// The datoms `small_recipe` writes, its transaction's `:db/txInstant`
/// included; checked once before measuring, so the bench's name stays true.
const SMALL_RECIPE_DATOMS: usize = 30;

/// A new recipe of 30 datoms: slug, title, ~2 KB summary, yield and prep time,
/// and 8 ingredients as nested component maps (the ref, position, raw line).
fn small_recipe(n: usize) -> Transaction {
    let ingredients = (0..8).map(|k| {
        EntityMap::anonymous()
            .with(":ingredient/position", k as i64)
            .with(":ingredient/raw", format!("{} tbsp ingredient {k}", k + 1))
    });
    let mut tx = Transaction::new();
    tx.map(
        EntityMap::new(EntityRef::temp("r"))
            .with(":recipe/slug", format!("written-{n}"))
            .with(":recipe/title", format!("Written recipe {n}"))
            .with(":recipe/summary", common::summary(n, "Written recipe"))
            .with(":recipe/yield", 4_i64)
            .with(":recipe/prep-minutes", 20_i64)
            .with_many(":recipe/ingredients", ingredients),
    );
    tx
}

/// `NAME/transact_recipe_30_datoms` in `group`: one `small_recipe` after
/// another into `writes`, numbered after the `written` it already holds.
fn bench_small_writes(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    writes: &forkful::store::Store,
    mut written: usize,
) {
    let id = if name.is_empty() {
        "transact_recipe_30_datoms".to_owned()
    } else {
        format!("{name}/transact_recipe_30_datoms")
    };
    group.bench_function(id, |b| {
        b.iter_batched(
            || {
                written += 1;
                small_recipe(written)
            },
            |tx| writes.transact(black_box(&tx)).expect("transact"),
            BatchSize::SmallInput,
        )
    });
}

fn store(c: &mut Criterion) {
    let mut group = c.benchmark_group("store");

    // Writes go to a store of their own, so the reads below see a catalog
    // that does not grow while they are measured.
    let writes = common::schema_store();
    let first = writes.transact(&small_recipe(0)).expect("first write");
    assert_eq!(first.datoms.len(), SMALL_RECIPE_DATOMS);
    bench_small_writes(&mut group, "", &writes, 1);

    // Reads cycle through the catalog rather than hit one hot key.
    let seeded = common::seeded_store(CATALOG);
    let db = seeded.store.db();
    // The current-entity index answers only at the latest basis; a version
    // page, pulled `as_of` a past transaction, reads the datoms. These are
    // the same reads, made that way.
    let from_datoms = db.uncached();
    let attr = |ident| db.attribute(&kw(ident)).expect("attribute").id;
    let (slug, title) = (attr(":recipe/slug"), attr(":recipe/title"));
    let pattern = PullPattern::parse(RECIPE_PATTERN).expect("pattern");
    let sample = seeded.recipes[CATALOG / 2];
    let pulled = db.pull(sample, &pattern).expect("pull");
    let ingredients = pulled.get(":recipe/ingredients").and_then(|p| p.as_list());
    assert_eq!(
        ingredients.map(<[_]>::len),
        Some(8),
        "a whole recipe pulled"
    );
    assert_eq!(from_datoms.pull(sample, &pattern).expect("pull"), pulled);

    let mut ids = seeded.recipes.iter().copied().cycle();
    group.bench_function("eavt_point_seek", |b| {
        b.iter(|| {
            db.value(black_box(ids.next().unwrap()), title)
                .expect("seek")
        })
    });
    group.bench_function("eavt_point_seek_from_datoms", |b| {
        b.iter(|| {
            from_datoms
                .value(black_box(ids.next().unwrap()), title)
                .expect("seek")
        })
    });
    group.bench_function("entity_read", |b| {
        b.iter(|| db.entity(black_box(ids.next().unwrap())).expect("entity"))
    });
    group.bench_function("pull_recipe", |b| {
        b.iter(|| {
            db.pull(black_box(ids.next().unwrap()), &pattern)
                .expect("pull")
        })
    });
    group.bench_function("pull_recipe_from_datoms", |b| {
        b.iter(|| {
            from_datoms
                .pull(black_box(ids.next().unwrap()), &pattern)
                .expect("pull")
        })
    });

    let slugs: Vec<Value> = (0..CATALOG).map(|i| Value::from(common::slug(i))).collect();
    let mut slugs = slugs.iter().cycle();
    group.bench_function("avet_lookup", |b| {
        b.iter(|| {
            db.entity_with(slug, black_box(slugs.next().unwrap()))
                .expect("lookup")
        })
    });

    group.finish();
}

/// Full synthetic recipes in the bulk import's file: about 104 datoms each.
const IMPORTED_RECIPES: usize = 200;

/// `forkful import`'s core: an export of full recipes read, checked (the
/// domain's rules included) and written into an empty temporary store,
/// flushed a group at a time. Measured in datoms per second; each sample
/// imports the whole file into a store of its own.
fn bulk_import(c: &mut Criterion) {
    use forkful::domain::import_check::RecipeImportCheck;
    use forkful::seed::synthetic::{generate, Shape};
    use forkful::store::Store;
    use forkful::store::{export, import_with};

    let source = Store::temporary().expect("temporary store");
    let shape = Shape {
        recipes: IMPORTED_RECIPES,
        depth: 12,
        fanout: 3,
        rng: 1,
        skeleton: false,
    };
    generate(&source, shape, false).expect("synthetic catalog");
    let mut file = Vec::new();
    let summary = export(&source.db(), &mut file).expect("export");

    let mut group = c.benchmark_group("bulk");
    group.sample_size(10);
    group.throughput(criterion::Throughput::Elements(summary.datoms as u64));
    group.bench_function("import_full_recipes", |b| {
        b.iter_batched(
            || Store::temporary().expect("temporary store"),
            |target| {
                import_with(
                    &target,
                    || Ok(std::io::Cursor::new(&file)),
                    &mut RecipeImportCheck::default(),
                    &mut |_| {},
                )
                .expect("import")
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

/// A write on a node of a site past one machine against one on the
/// embedded store, both on the disk PostgreSQL keeps its files on (the
/// `store` group's store is in memory: no fair comparison for a write that
/// is durable in PostgreSQL). `log/embedded_on_disk` is a durable store in
/// a directory of its own; `log/through_log` is the same, following a log in
/// PostgreSQL. The server is FORKFUL_PG_URL's (default
/// postgres://postgres@127.0.0.1:5432/postgres), in a database made for
/// the run and dropped after it; without a server, the bench says so and
/// measures only the embedded store.
fn log_write(c: &mut Criterion) {
    let server = std::env::var("FORKFUL_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
    let database = format!("forkful_bench_{}", std::process::id());
    let psql = |sql: &str| {
        std::process::Command::new("psql")
            .args([server.as_str(), "-qc", sql])
            .output()
            .is_ok_and(|out| out.status.success())
    };
    // Beside the target directory, on the disk the build (and, on this
    // project's machines, PostgreSQL) is on; not /dev/shm.
    let disk = std::env::temp_dir();
    let on_disk = |name: &str, log: Option<forkful::postgres::PgLog>| {
        let dir = tempfile::Builder::new()
            .prefix(name)
            .tempdir_in(&disk)
            .expect("a directory for the store");
        let mut config = forkful::store::StoreConfig::durable(dir.path());
        if let Some(log) = log {
            config = config.following(std::sync::Arc::new(log));
        }
        let store = forkful::store::Store::open_with(config).expect("store on disk");
        (dir, store)
    };
    let mut group = c.benchmark_group("log");
    let (_embedded_dir, embedded) = on_disk("forkful-bench-embedded", None);
    embedded
        .transact(&common::recipe_schema())
        .expect("recipe schema");
    bench_small_writes(&mut group, "embedded_on_disk", &embedded, 0);
    drop(embedded);

    if !psql(&format!("CREATE DATABASE {database}")) {
        eprintln!("log/through_log: not measured: no PostgreSQL at {server}");
        group.finish();
        return;
    }
    let url = format!(
        "{}/{database}",
        server.rsplit_once('/').map_or("", |(base, _)| base)
    );
    let log = forkful::postgres::PgLog::connect(&url).expect("the log");
    let (_node_dir, node) = on_disk("forkful-bench-node", Some(log));
    node.transact(&common::recipe_schema())
        .expect("recipe schema");
    bench_small_writes(&mut group, "through_log", &node, 0);
    group.finish();
    drop(node);
    psql(&format!("DROP DATABASE {database} WITH (FORCE)"));
}

criterion_group! {
    name = benches;
    config = common::criterion();
    targets = store, bulk_import, log_write
}
criterion_main!(benches);
