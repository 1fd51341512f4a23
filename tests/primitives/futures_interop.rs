//! Off-the-shelf futures inside models: the `futures` crate's channels, `FuturesUnordered`,
//! `join!` and `select!` run on the model's tasks and wakers. They are deterministic under
//! the scheduler but add no switch points of their own (their atomics are not modelled):
//! the search interleaves at the modelled operations and at the waits between polls only.
//! And 2,000 tasks alive at once.

use futures::channel::{mpsc, oneshot};
use futures::stream::{FuturesUnordered, StreamExt};
use futures::{FutureExt, SinkExt, join, select_biased};
use interleave_test::future;
use interleave_test::{Builder, StrategyKind};

use crate::common::{SUBSTRATES, each_dfs};

#[test]
fn a_futures_channel_carries_values_between_tasks() {
    each_dfs(|builder, name, _| {
        builder
            .check(|| {
                let (mut tx, mut rx) = mpsc::channel::<u32>(1);
                let producer = future::spawn(async move {
                    for v in 1..=3 {
                        tx.send(v).await.unwrap();
                    }
                });
                let got: Vec<u32> = future::block_on(async {
                    let mut got = Vec::new();
                    while let Some(v) = rx.next().await {
                        got.push(v);
                    }
                    got
                });
                assert_eq!(got, [1, 2, 3]);
                drop(producer);
            })
            .unwrap_or_else(|f| panic!("{name}: {f}"));
    });
}

#[test]
fn futures_unordered_collects_spawned_tasks() {
    each_dfs(|builder, name, _| {
        builder
            .check(|| {
                let set: FuturesUnordered<_> = (1..=3u32)
                    .map(|i| future::spawn(async move { i * 10 }))
                    .collect();
                let mut got: Vec<u32> =
                    future::block_on(set.map(|r| r.unwrap()).collect::<Vec<_>>());
                got.sort_unstable();
                assert_eq!(got, [10, 20, 30]);
            })
            .unwrap_or_else(|f| panic!("{name}: {f}"));
    });
}

#[test]
fn join_and_select_of_the_futures_crate() {
    each_dfs(|builder, name, bound| {
        let winners = std::sync::Mutex::new(std::collections::BTreeSet::new());
        builder
            .check(|| {
                let (a, b) = (future::spawn(async { 1 }), future::spawn(async { 2 }));
                let (x, y) = future::block_on(async { join!(a, b) });
                assert_eq!((x.unwrap(), y.unwrap()), (1, 2));
                let (tx, rx) = oneshot::channel::<u8>();
                // The receiver may be gone (the task won): then the value comes back.
                let sender = future::spawn(async move {
                    let _ = tx.send(7);
                });
                let task = future::spawn(async { 9u8 });
                let winner = future::block_on(async {
                    let (mut rx, mut task) = (rx.fuse(), task.fuse());
                    // `select!` starts at a branch drawn from an RNG outside the model, which
                    // replay cannot repeat: `select_biased!` polls in the written order.
                    select_biased! {
                        v = rx => v.unwrap(),
                        v = task => v.unwrap(),
                    }
                });
                winners.lock().unwrap().insert(winner);
                drop(sender);
            })
            .unwrap_or_else(|f| panic!("{name}: {f}"));
        let winners: Vec<u8> = winners.into_inner().unwrap().into_iter().collect();
        if bound.is_none() {
            assert_eq!(winners, [7, 9], "{name}: either branch can win");
        } else {
            assert!(!winners.is_empty(), "{name}");
        }
    });
}

#[test]
fn two_thousand_tasks_alive_at_once() {
    for substrate in SUBSTRATES {
        let report = Builder::new()
            .strategy(StrategyKind::Random)
            .seed(4)
            .iterations(2)
            .substrate(substrate)
            .check(|| {
                let (senders, tasks): (Vec<_>, Vec<_>) = (0..2000u32)
                    .map(|i| {
                        let (tx, rx) = oneshot::channel::<u32>();
                        (tx, future::spawn(async move { rx.await.unwrap() + i }))
                    })
                    .unzip();
                for tx in senders {
                    tx.send(1).unwrap();
                }
                let total: u64 = future::block_on(async {
                    let mut total = 0u64;
                    for t in tasks {
                        total += u64::from(t.await.unwrap());
                    }
                    total
                });
                assert_eq!(total, 2000 + 1999 * 2000 / 2);
            })
            .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
        assert_eq!(report.executions, 2);
    }
}

/// Two spawned tasks that increment a counter with a load and a store: the lost update.
async fn racy_tasks() {
    use interleave_test::sync::Arc;
    use interleave_test::sync::atomic::{AtomicU32, Ordering::SeqCst};
    let counter = Arc::new(AtomicU32::new(0));
    let tasks: Vec<_> = (0..2)
        .map(|_| {
            let counter = Arc::clone(&counter);
            future::spawn(async move {
                let seen = counter.load(SeqCst);
                counter.store(seen + 1, SeqCst);
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(counter.load(SeqCst), 2, "lost update");
}

/// `check_async`, `explore_async` and `replay_async` take an async model: they find what
/// `check` of the same model under `block_on` finds, in as many executions, and the
/// failure replays.
#[test]
fn async_entry_points_search_as_block_on_does_and_replay() {
    each_dfs(|builder, name, bound| {
        if bound == Some(0) {
            // The lost update needs a preemption between a load and a store.
            let report = builder.check_async(racy_tasks).unwrap();
            let plain = builder.check(|| future::block_on(racy_tasks())).unwrap();
            assert_eq!(report.executions, plain.executions, "{name}");
            return;
        }
        let failure = builder.check_async(racy_tasks).expect_err(&name);
        let same = builder
            .check(|| future::block_on(racy_tasks()))
            .expect_err(&name);
        assert_eq!(failure.iteration(), same.iteration(), "{name}");
        // The same decisions; the waits of the `block_on` are where each entry point is
        // called.
        let decided = |f: &interleave_test::Failure| -> Vec<_> {
            let decisions = f.schedule().decisions().iter();
            decisions
                .map(|d| (d.thread(), d.op().to_owned(), d.pick()))
                .collect()
        };
        assert_eq!(decided(&failure), decided(&same), "{name}");
        let waits = failure
            .schedule()
            .decisions()
            .iter()
            .filter(|d| d.op() == "task wait");
        for wait in waits {
            let here = wait
                .location()
                .starts_with("tests/primitives/futures_interop.rs:");
            assert!(here, "{name}: {}", wait.location());
        }
        assert!(
            failure.message().contains("lost update"),
            "{name}: {failure}"
        );
        let replayed = builder
            .replay_async(racy_tasks, failure.schedule())
            .expect_err(&name);
        assert_eq!(replayed.message(), failure.message(), "{name}");
        let joined = || async {
            let task = future::spawn(async { 1 });
            assert_eq!(task.await.unwrap(), 1);
        };
        let report = builder.explore_async(joined);
        let plain = builder.check(|| future::block_on(joined())).unwrap();
        assert!(report.exhausted, "{name}: {report}");
        assert_eq!(report.executions, plain.executions, "{name}");
    });
    let report = interleave_test::explore_async(|| async { future::yield_now().await });
    assert!(report.executions > 0);
    assert!(interleave_test::check_async(racy_tasks).is_err());
}
