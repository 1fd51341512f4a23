//! Tokio primitives used by several executions: a `static` made by `const_new`
//! (`OnceCell`, `Semaphore`, `Notify`), or one made outside the model closure. Each
//! execution has a state of its own, as the primitive was made (an empty cell, all the
//! permits, no stored notification), explored exactly as one made inside the model, on
//! both substrates and with executions running at once.

use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;

use interleave_test::{Builder, Reduction, StrategyKind};
use interleave_test_tokio::sync::{Mutex, Notify, OnceCell, RwLock, Semaphore, SetError};
use interleave_test_tokio::{self as tokio, task};

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

/// The values `model` returns over 300 executions of Random and of PCT (seed 5), two
/// executions at a time.
fn at_once<V: Ord + Send, Fut: std::future::Future<Output = V>>(
    model: impl Fn() -> Fut + Sync,
) -> BTreeSet<V> {
    let seen = StdMutex::new(BTreeSet::new());
    for strategy in [StrategyKind::Random, StrategyKind::Pct { depth: 3 }] {
        let report = Builder::new()
            .strategy(strategy)
            .seed(5)
            .iterations(300)
            .parallelism(2)
            .check_async(|| async {
                let value = model().await;
                seen.lock().unwrap().insert(value);
            })
            .unwrap_or_else(|f| panic!("{strategy:?}, seed 5: {f}"));
        assert_eq!(report.executions, 300, "{strategy:?}");
    }
    seen.into_inner().unwrap()
}

#[test]
fn a_static_cell_serves_executions_that_run_at_once() {
    static CELL: OnceCell<u32> = OnceCell::const_new();
    assert_eq!(at_once(|| race(&CELL)), BTreeSet::from([1, 2]));
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
            && message
                .contains("(or `tokio::sync::Mutex::const_new(..)`, for a value that is `Clone`)")
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

/// Two tasks push their number onto `list` (one yields while it holds the lock) after
/// checking that it starts empty; returns the order.
async fn push_race(list: &'static Mutex<Vec<u32>>) -> Vec<u32> {
    assert!(
        list.lock().await.is_empty(),
        "each execution starts with a copy"
    );
    let other = tokio::spawn(async move {
        let mut guard = list.lock().await;
        task::yield_now().await;
        guard.push(1);
    });
    list.lock().await.push(2);
    other.await.unwrap();
    list.lock().await.clone()
}

/// The orders `push_race` gives on the lists `list` returns under an exhaustive DFS, and
/// the number of executions.
fn push_orders(
    builder: Builder,
    list: impl Fn() -> &'static Mutex<Vec<u32>> + Sync,
) -> (BTreeSet<Vec<u32>>, u64) {
    let seen = StdMutex::new(BTreeSet::new());
    let report = builder
        .check_async(|| async {
            let order = push_race(list()).await;
            seen.lock().unwrap().insert(order);
        })
        .unwrap_or_else(|f| panic!("{f}"));
    assert!(report.exhausted, "{report}");
    (seen.into_inner().unwrap(), report.executions)
}

#[test]
fn a_static_mutex_starts_with_a_copy_and_is_explored_as_a_local_one() {
    static LIST: Mutex<Vec<u32>> = Mutex::const_new(Vec::new());
    let both = BTreeSet::from([vec![1, 2], vec![2, 1]]);
    for substrate in SUBSTRATES {
        for reduction in [Reduction::Dpor, Reduction::Off] {
            let (orders, runs) = push_orders(dfs(substrate, reduction, None), || &LIST);
            assert_eq!(orders, both, "{substrate:?}, {reduction:?}");
            let local = || &*Box::leak(Box::new(Mutex::new(Vec::new())));
            let (local_orders, local_runs) = push_orders(dfs(substrate, reduction, None), local);
            assert_eq!(local_orders, both, "{substrate:?}, {reduction:?}");
            assert_eq!(runs, local_runs, "{substrate:?}, {reduction:?}: executions");
        }
    }
}

#[test]
fn a_static_mutex_serves_executions_that_run_at_once() {
    static LIST: Mutex<Vec<u32>> = Mutex::const_new(Vec::new());
    let orders = at_once(|| push_race(&LIST));
    assert_eq!(orders, BTreeSet::from([vec![1, 2], vec![2, 1]]));
}

#[test]
fn a_static_rwlock_starts_with_a_copy_in_every_execution() {
    static LOCK: RwLock<u32> = RwLock::const_new(3);
    static FEW: RwLock<u32> = RwLock::const_with_max_readers(0, 1);
    every_execution(|| async {
        assert_eq!(*LOCK.read().await, 3, "each execution starts with a copy");
        let writer = tokio::spawn(async { *LOCK.write().await += 1 });
        let seen = *LOCK.read().await;
        writer.await.unwrap();
        assert!(seen == 3 || seen == 4, "{seen}");
        assert_eq!(*LOCK.read().await, 4);
        // One reader at a time: a second read waits for the first guard.
        let first = FEW.read().await;
        assert!(FEW.try_read().is_err(), "max_readers 1 admits one reader");
        drop(first);
        *FEW.write().await += 1;
        assert_eq!(*FEW.read().await, 1, "each execution starts with 0");
    });
}

#[test]
fn a_const_lock_outside_any_execution_holds_its_initial_value() {
    let mut lock = Mutex::const_new(vec![1]);
    lock.get_mut().push(2);
    assert_eq!(lock.into_inner(), [1, 2]);
    assert_eq!(Mutex::const_new(5).into_inner(), 5);
    let mut rw = RwLock::const_new(String::from("a"));
    rw.get_mut().push('b');
    assert_eq!(
        format!("{rw:?}"),
        r#"RwLock { data: "ab", max_readers: 536870911 }"#
    );
    assert_eq!(rw.into_inner(), "ab");
    assert_eq!(format!("{:?}", Mutex::const_new(7)), "Mutex { data: 7 }");
}

/// A `static` cell made by `const_new_with` holds its value in every execution: `set`
/// fails, `get_or_init` does not run its initializer.
#[test]
fn a_static_cell_made_with_a_value_holds_it_in_every_execution() {
    static PRESET: OnceCell<u32> = OnceCell::const_new_with(5);
    for parallelism in [1, 2] {
        let report = Builder::new()
            .iterations(50)
            .parallelism(parallelism)
            .check_async(|| async {
                // A decision: a model with none ends after two executions.
                interleave_test::choose(2);
                assert!(PRESET.initialized());
                assert_eq!(PRESET.get(), Some(&5));
                assert_eq!(PRESET.set(6), Err(SetError::AlreadyInitializedError(6)));
                let got = PRESET.get_or_init(|| async { unreachable!("set already") });
                assert_eq!(*got.await, 5);
            })
            .unwrap_or_else(|f| panic!("parallelism {parallelism}: {f}"));
        assert_eq!(report.executions, 50);
    }
    let mut local = OnceCell::const_new_with(String::from("a"));
    local.get_mut().unwrap().push('b');
    assert_eq!(format!("{local:?}"), r#"OnceCell { value: Some("ab") }"#);
    assert_eq!(local.take().as_deref(), Some("ab"));
    assert_eq!(local.into_inner(), None);
}
