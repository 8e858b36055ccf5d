//! The delivery queue's costs (`domain::federation::deliveries`): a claim
//! when 10,000 deliveries wait and none is due, as while a site is down,
//! on every tick of the delivery thread (four a second on each node).

mod common;

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use forkful::domain::federation::{Delivery, Federation};
use forkful::domain::Recipes;

/// Deliveries waiting.
const WAITING: usize = 10_000;
/// Now, in the queue's milliseconds; every delivery is due an hour later.
const NOW: i64 = 1_000_000;

fn deliveries(c: &mut Criterion) {
    let store = forkful::store::Store::temporary().expect("store");
    let recipes = Recipes::open(store).expect("recipes");
    let federation = Federation::open(&recipes).expect("federation");
    let queue = federation.deliveries();
    let waiting: Vec<Delivery> = (0..WAITING)
        .map(|n| {
            let id = format!("https://forkful.example/recipes/r{n}/versions/1#create");
            let mut delivery = Delivery::new(
                "https://down.example/inbox",
                "ann",
                &id,
                "{}".into(),
                NOW + 3_600_000,
            );
            delivery.attempts = 3;
            delivery
        })
        .collect();
    queue.queue(&waiting).expect("queued");
    assert_eq!(queue.waiting().expect("waiting").len(), WAITING);
    assert!(queue.claim_due(NOW, 30_000, 1).expect("claim").is_empty());
    let mut group = c.benchmark_group("deliveries");
    group.bench_function("claim_none_due_of_10000_waiting", |b| {
        b.iter(|| black_box(queue.claim_due(black_box(NOW), 30_000, 1).expect("claim")))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::criterion();
    targets = deliveries
}
criterion_main!(benches);
