//! Tokio primitives used by several executions: a `static` made by `const_new`
//! (`OnceCell`, `Semaphore`, `Notify`), or one made outside the model closure. Each
//! execution has a state of its own, as the primitive was made (an empty cell, all the
//! permits, no stored notification), explored exactly as one made inside the model, on
//! both substrates and with executions running at once.

use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;

use interleave_test::tokio::sync::{Notify, OnceCell, Semaphore, SetError};
use interleave_test::tokio::{self, task};
use interleave_test::{Builder, Reduction, StrategyKind};

use crate::common::{SUBSTRATES, dfs};
use crate::support::{every_execution, poll_once};

/// Two tasks race `get_or_init` on `cell` (1 against 2, each initializer yielding once)
/// after checking that it starts empty; returns the value both got.
async fn race(cell: &'static OnceCell<u32>) -> u32 {
    assert!(
        !cell.initialized(),
        "the cell starts empty in every execution"
    );
    let other = tokio::spawn(async move {
        *cell
            .get_or_init(|| async {
                task::yield_now().await;
                1
            })
            .await
    });
    let mine = *cell
        .get_or_init(|| async {
            task::yield_now().await;
            2
        })
        .await;
    assert_eq!(other.await.unwrap(), mine, "one initializer won for both");
    mine
}

/// The same race on a cell of the execution's own.
async fn race_local() -> u32 {
    let cell: &'static OnceCell<u32> = Box::leak(Box::new(OnceCell::new()));
    race(cell).await
}

/// Runs `model` with `builder` (an exhaustive DFS), collecting the values it returns;
/// returns them and the number of executions.
fn winners<Fut: std::future::Future<Output = u32>>(
    builder: Builder,
    model: impl Fn() -> Fut + Sync,
) -> (BTreeSet<u32>, u64) {
    let seen = StdMutex::new(BTreeSet::new());
    let report = builder
        .check_async(|| async {
            let won = model().await;
            seen.lock().unwrap().insert(won);
        })
        .unwrap_or_else(|f| panic!("{f}"));
    assert!(report.exhausted, "{report}");
    (seen.into_inner().unwrap(), report.executions)
}

#[test]
fn a_static_cell_starts_empty_in_every_execution_and_is_explored_as_a_local_one() {
    static CELL: OnceCell<u32> = OnceCell::const_new();
    for substrate in SUBSTRATES {
        for reduction in [Reduction::Dpor, Reduction::Off] {
            let (won, runs) = winners(dfs(substrate, reduction, None), || race(&CELL));
            assert_eq!(won, BTreeSet::from([1, 2]), "{substrate:?}, {reduction:?}");
            let (local_won, local_runs) = winners(dfs(substrate, reduction, None), race_local);
            assert_eq!(local_won, won, "{substrate:?}, {reduction:?}");
            assert_eq!(runs, local_runs, "{substrate:?}, {reduction:?}: executions");
        }
    }
}

#[test]
fn a_static_cell_serves_executions_that_run_at_once() {
    static CELL: OnceCell<u32> = OnceCell::const_new();
    let seen = StdMutex::new(BTreeSet::new());
    for strategy in [StrategyKind::Random, StrategyKind::Pct { depth: 3 }] {
        let report = Builder::new()
            .strategy(strategy)
            .seed(5)
            .iterations(300)
            .parallelism(2)
            .check_async(|| async {
                let won = race(&CELL).await;
                seen.lock().unwrap().insert(won);
            })
            .unwrap_or_else(|f| panic!("{strategy:?}, seed 5: {f}"));
        assert_eq!(report.executions, 300, "{strategy:?}");
    }
    assert_eq!(seen.into_inner().unwrap(), BTreeSet::from([1, 2]));
}

#[test]
fn a_cell_made_outside_the_model_is_empty_or_preset_in_every_execution() {
    let empty = OnceCell::<u32>::new();
    let preset = OnceCell::new_with(Some(5));
    for substrate in SUBSTRATES {
        let report = dfs(substrate, Reduction::Dpor, None)
            .check_async(|| async {
                assert_eq!(empty.get(), None, "empty at the start of the execution");
                assert_eq!(empty.set(1), Ok(()));
                assert_eq!(empty.set(2), Err(SetError::AlreadyInitializedError(2)));
                assert_eq!(preset.get(), Some(&5));
                assert_eq!(*preset.get_or_init(|| async { 6 }).await, 5);
                assert_eq!(preset.set(7), Err(SetError::AlreadyInitializedError(7)));
            })
            .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
        assert!(report.exhausted, "{substrate:?}");
        let twice = Builder::new()
            .iterations(3)
            .substrate(substrate)
            .check_async(|| async {
                assert!(empty.set(3).is_ok(), "a later execution's cell is empty");
                assert_eq!(preset.get(), Some(&5));
            });
        assert!(twice.is_ok(), "{substrate:?}: {twice:?}");
    }
    assert_eq!(empty.into_inner(), Some(1), "the first execution's value");
}

#[test]
fn a_static_semaphore_has_all_its_permits_in_every_execution() {
    static SEM: Semaphore = Semaphore::const_new(2);
    let model = || async {
        assert_eq!(
            SEM.available_permits(),
            2,
            "a fresh semaphore in every execution"
        );
        let other = tokio::spawn(async {
            let permit = SEM.acquire().await.unwrap();
            task::yield_now().await;
            permit.forget(); // the semaphore has one permit fewer for good
        });
        let mine = SEM.acquire().await;
        assert!(mine.is_ok());
        drop(mine);
        other.await.unwrap();
        assert_eq!(SEM.available_permits(), 1);
    };
    every_execution(model);
    let report = Builder::new()
        .seed(9)
        .iterations(200)
        .parallelism(2)
        .check_async(model)
        .unwrap_or_else(|f| panic!("seed 9: {f}"));
    assert_eq!(report.executions, 200);
}

#[test]
fn a_static_notify_stores_no_permit_across_executions() {
    static NOTIFY: Notify = Notify::const_new();
    every_execution(|| async {
        let first = std::pin::pin!(NOTIFY.notified());
        assert!(
            !poll_once(first).await,
            "a permit of an earlier execution was left in this one"
        );
        NOTIFY.notify_one(); // stores a permit, left unconsumed
    });
}

/// A Tokio `Mutex` (whose data the explorer cannot put back) used by a second execution is
/// `Misuse`, and the message says what to write: the `LazyLock` with Tokio's path. For a
/// channel, made by a function, it says to make it inside the model.
#[test]
fn a_shared_tokio_mutex_or_channel_is_misuse_saying_what_to_write() {
    let shared = tokio::sync::Mutex::new(0u32);
    let failure = Builder::new()
        .iterations(3)
        .check_async(|| async {
            *shared.lock().await += 1;
        })
        .unwrap_err();
    assert_eq!(
        failure.kind(),
        interleave_test::FailureKind::Misuse,
        "{failure}"
    );
    let message = failure.message();
    assert!(
        message.contains("this tokio Mutex was first used in another execution")
            && message.contains(
                "`static NAME: LazyLock<tokio::sync::Mutex<T>> = LazyLock::new(|| \
                 tokio::sync::Mutex::new(..))`"
            ),
        "{message}"
    );
    let (tx, _rx) = tokio::sync::mpsc::channel::<u32>(4);
    let failure = Builder::new()
        .iterations(3)
        .check_async(|| async {
            let _ = tx.try_send(1);
        })
        .unwrap_err();
    let message = failure.message();
    assert!(
        message.contains("this tokio mpsc channel was first used in another execution")
            && message.contains("share it with an Arc.")
            && !message.contains("LazyLock<"),
        "{message}"
    );
}
