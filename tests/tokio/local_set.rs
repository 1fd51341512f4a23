//! `task::LocalSet`: its tasks run on the calling thread only while the set is driven
//! (`run_until`, the set awaited), `spawn_local` inside it spawns on it, awaiting it waits
//! for every task, and dropping it drops the unfinished tasks at once; under exhaustive DFS
//! on both substrates.

use std::cell::Cell;
use std::rc::Rc;

use interleave_test::tokio::runtime;
use interleave_test::tokio::task::{self, LocalSet};
use interleave_test::{Builder, StrategyKind};

use crate::support::every_execution;

#[test]
fn tasks_spawned_inside_run_until_run_on_the_set_and_give_their_values() {
    every_execution(|| async {
        let local = LocalSet::new();
        let sum = local
            .run_until(async {
                let a = task::spawn_local(async { 1 });
                let b = local.spawn_local(async { 2 });
                a.await.unwrap() + b.await.unwrap()
            })
            .await;
        assert_eq!(sum, 3);
    });
}

#[test]
#[expect(
    clippy::async_yields_async,
    reason = "the task's handle is awaited later"
)]
fn a_task_of_a_set_does_not_run_while_the_set_is_not_driven() {
    every_execution(|| async {
        let local = LocalSet::new();
        let done = Rc::new(Cell::new(false));
        let flag = Rc::clone(&done);
        let handle = local
            .run_until(async move {
                task::spawn_local(async move {
                    task::yield_now().await;
                    flag.set(true);
                })
            })
            .await;
        for _ in 0..3 {
            task::yield_now().await;
        }
        assert!(
            !done.get(),
            "a task of a set ran while the set was not driven"
        );
        local.await;
        assert!(done.get(), "awaiting the set did not run its task");
        handle.await.unwrap();
    });
}

#[test]
fn awaiting_a_set_runs_every_task_including_those_its_tasks_spawn() {
    every_execution(|| async {
        let local = LocalSet::new();
        let count = Rc::new(Cell::new(0));
        let outer = Rc::clone(&count);
        let _outer = local.spawn_local(async move {
            let inner = Rc::clone(&outer);
            let _inner = task::spawn_local(async move { inner.set(inner.get() + 1) });
            task::yield_now().await;
            outer.set(outer.get() + 1);
        });
        assert_eq!(count.get(), 0, "a task ran before its set was driven");
        local.await;
        assert_eq!(count.get(), 2);
    });
}

#[test]
#[expect(
    clippy::async_yields_async,
    reason = "the task's handle is awaited later"
)]
fn dropping_a_set_drops_its_unfinished_tasks_at_once_and_cancels_them() {
    every_execution(|| async {
        let local = LocalSet::new();
        let alive = Rc::new(());
        let held = Rc::clone(&alive);
        let handle = local
            .run_until(async move {
                task::spawn_local(async move {
                    let _held = held;
                    std::future::pending::<()>().await;
                })
            })
            .await;
        assert_eq!(Rc::strong_count(&alive), 2);
        drop(local);
        assert_eq!(Rc::strong_count(&alive), 1, "the task outlived its set");
        assert!(handle.await.unwrap_err().is_cancelled());
    });
}

#[test]
fn block_on_of_a_set_runs_its_future_on_the_runtime() {
    let report = Builder::new()
        .strategy(StrategyKind::Dfs {
            max_preemptions: None,
        })
        .check(|| {
            let rt = runtime::Builder::new_current_thread().build().unwrap();
            let local = LocalSet::new();
            let value = local.block_on(&rt, async {
                let task = task::spawn_local(async { 5 });
                task.await.unwrap() * 2
            });
            assert_eq!(value, 10);
        })
        .unwrap();
    assert!(report.exhausted);
}

#[test]
fn spawning_on_a_set_outside_a_block_on_says_where_to_spawn() {
    let failure = Builder::new()
        .iterations(1)
        .check(|| {
            let local = LocalSet::new();
            drop(local.spawn_local(async {}));
        })
        .expect_err("spawning outside a block_on panics");
    assert!(
        failure
            .message()
            .contains("LocalSet::spawn_local outside code that a block_on runs"),
        "{}",
        failure.message()
    );
    assert_eq!(failure.thread().unwrap().name(), Some("main"));
}

/// Two threads drive a set each (on coroutines, on the same OS thread), and switch to
/// each other inside `run_until`: each `spawn_local` inside goes to its own thread's set,
/// and one after `run_until` returned goes to the `block_on`'s executor (it runs at once).
#[test]
fn sets_of_two_threads_switching_inside_run_until_keep_their_own_tasks() {
    use interleave_test::sync::atomic::{AtomicUsize, Ordering};
    use interleave_test::thread;

    crate::support::every_execution_sync(|| {
        let shared = std::sync::Arc::new(AtomicUsize::new(0));
        let drive = |shared: std::sync::Arc<AtomicUsize>| {
            interleave_test::future::block_on(async move {
                let local = LocalSet::new();
                let ran = Rc::new(Cell::new(0));
                local
                    .run_until(async {
                        shared.fetch_add(1, Ordering::SeqCst);
                        let r = Rc::clone(&ran);
                        drop(task::spawn_local(async move { r.set(r.get() + 1) }));
                    })
                    .await;
                let r = Rc::clone(&ran);
                task::spawn_local(async move { r.set(r.get() + 10) })
                    .await
                    .unwrap();
                local.await;
                assert_eq!(ran.get(), 11);
            });
        };
        let other = thread::spawn({
            let shared = std::sync::Arc::clone(&shared);
            move || drive(shared)
        });
        drive(shared);
        other.join().unwrap();
    });
}
