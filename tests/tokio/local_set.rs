//! `task::LocalSet`: its tasks run on the calling thread only while the set is driven
//! (`run_until`, the set awaited), `spawn_local` inside it spawns on it, awaiting it waits
//! for every task, and dropping it drops the unfinished tasks at once; under exhaustive DFS
//! on both substrates.

use std::cell::Cell;
use std::future::Future;
use std::rc::Rc;

use interleave_test::{Builder, StrategyKind};
use interleave_test_tokio::runtime;
use interleave_test_tokio::task::{self, LocalSet};

use crate::support::{every_execution, every_execution_sync};

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

/// Tokio's own pattern: tasks spawned on a set in plain code, before any `block_on`,
/// run once the set is driven (not before), give their values through their handles, and
/// have the ids they see inside.
#[test]
fn tasks_spawned_before_the_set_runs_run_once_it_is_driven() {
    every_execution_sync(|| {
        let rt = runtime::Builder::new_current_thread().build().unwrap();
        let local = LocalSet::new();
        let ran = Rc::new(Cell::new(0));
        let (tx, rx) = interleave_test_tokio::sync::oneshot::channel::<u32>();
        let r = Rc::clone(&ran);
        let sender = local.spawn_local(async move {
            r.set(r.get() + 1);
            tx.send(4).unwrap();
            task::id()
        });
        let r = Rc::clone(&ran);
        let receiver = local.spawn_local(async move {
            r.set(r.get() + 1);
            (rx.await.unwrap(), task::id())
        });
        let (sender_id, receiver_id) = (sender.id(), receiver.id());
        assert_ne!(sender_id, receiver_id);
        rt.block_on(async {
            task::yield_now().await;
        });
        assert_eq!(ran.get(), 0, "a task ran before its set was driven");
        let (value, seen_receiver, seen_sender) = local.block_on(&rt, async {
            let (value, seen_receiver) = receiver.await.unwrap();
            (value, seen_receiver, sender.await.unwrap())
        });
        assert_eq!(ran.get(), 2);
        assert_eq!(value, 4);
        assert_eq!((seen_sender, seen_receiver), (sender_id, receiver_id));
    });
}

/// A set awaited by a runtime's `block_on` runs the tasks spawned on it before.
#[test]
fn a_set_awaited_by_block_on_runs_the_tasks_spawned_before() {
    every_execution_sync(|| {
        let rt = runtime::Builder::new_current_thread().build().unwrap();
        let local = LocalSet::new();
        let ran = Rc::new(Cell::new(0));
        for k in 1..=2 {
            let r = Rc::clone(&ran);
            drop(local.spawn_local(async move {
                task::yield_now().await;
                r.set(r.get() + k);
            }));
        }
        rt.block_on(local);
        assert_eq!(ran.get(), 3);
    });
}

/// A task spawned before its set runs: aborted, it never runs; its set dropped undriven,
/// its future is dropped at once and its handle is cancelled.
#[test]
fn unbound_tasks_aborted_or_dropped_with_their_set_are_cancelled() {
    every_execution_sync(|| {
        let rt = runtime::Builder::new_current_thread().build().unwrap();
        let local = LocalSet::new();
        let ran = Rc::new(Cell::new(false));
        let r = Rc::clone(&ran);
        let aborted = local.spawn_local(async move { r.set(true) });
        aborted.abort();
        let kept = local.spawn_local(async { 1 });
        let value = local.block_on(&rt, async { kept.await.unwrap() });
        assert_eq!(value, 1);
        assert!(!ran.get(), "an aborted task ran");
        assert!(rt.block_on(aborted).unwrap_err().is_cancelled());

        let undriven = LocalSet::new();
        let alive = Rc::new(());
        let held = Rc::clone(&alive);
        let handle = undriven.spawn_local(async move { drop(held) });
        assert_eq!(Rc::strong_count(&alive), 2);
        drop(undriven);
        assert_eq!(Rc::strong_count(&alive), 1, "the task outlived its set");
        assert!(rt.block_on(handle).unwrap_err().is_cancelled());
    });
}

/// A set with tasks spawned before it ran, polled by some other executor than a
/// `block_on`'s, fails with what to do.
#[test]
fn a_set_with_unbound_tasks_driven_outside_a_block_on_says_what_to_do() {
    let failure = Builder::new()
        .iterations(1)
        .check(|| {
            let local = LocalSet::new();
            drop(local.spawn_local(async {}));
            let mut run = std::pin::pin!(local.run_until(async {}));
            let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
            let _ = run.as_mut().poll(&mut cx);
        })
        .expect_err("driving the set outside a block_on panics");
    assert!(
        failure
            .message()
            .contains("drive it (run_until, or the set awaited) from the future of a block_on"),
        "{}",
        failure.message()
    );
    assert_eq!(failure.thread().unwrap().name(), Some("main"));
}

/// Local tasks of two `block_on`s of one thread, one after the other, have different ids.
#[test]
fn local_task_ids_differ_across_block_ons_of_a_thread() {
    every_execution_sync(|| {
        let rt = runtime::Builder::new_current_thread().build().unwrap();
        let ids: Vec<_> = (0..2)
            .map(|_| {
                rt.block_on(async {
                    // Outside a set: the crate's own local task (Tokio's `spawn_local`
                    // panics here).
                    let task = interleave_test::future::spawn_local(async { task::id() });
                    let id = task.id();
                    assert_eq!(task.await.unwrap(), id);
                    id
                })
            })
            .collect();
        assert_ne!(ids[0], ids[1]);
        assert_eq!(ids[1].to_string(), "0.2");
    });
}

/// Two threads drive a set each (on coroutines, on the same OS thread), and switch to
/// each other inside `run_until`: each `spawn_local` inside goes to its own thread's set,
/// and a local task of the crate's own (`future::spawn_local`; Tokio's `spawn_local`
/// panics there) after `run_until` returned goes to the `block_on`'s executor.
#[test]
fn sets_of_two_threads_switching_inside_run_until_keep_their_own_tasks() {
    use interleave_test::sync::atomic::{AtomicUsize, Ordering};
    use interleave_test::thread;

    every_execution_sync(|| {
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
                interleave_test::future::spawn_local(async move { r.set(r.get() + 10) })
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

/// Sets `dropped` when dropped.
struct DropFlag(Rc<Cell<bool>>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.set(true);
    }
}

/// A task of a set that waits for ever, holding a [`DropFlag`]: aborted while the set is
/// driven, its future is dropped (as Tokio drops an aborted task's future) by the time its
/// handle gives the cancelled error, whether it was spawned inside `run_until` or before
/// the set ran. The model used to keep the future in the set until the set was dropped.
#[test]
fn an_aborted_task_of_a_set_has_its_future_dropped_while_the_set_runs() {
    every_execution(|| async {
        let local = LocalSet::new();
        let before = Rc::new(Cell::new(false));
        let held = DropFlag(Rc::clone(&before));
        let early = local.spawn_local(async move {
            let _held = held;
            std::future::pending::<()>().await;
        });
        local
            .run_until(async {
                let inside = Rc::new(Cell::new(false));
                let held = DropFlag(Rc::clone(&inside));
                let late = task::spawn_local(async move {
                    let _held = held;
                    std::future::pending::<()>().await;
                });
                task::yield_now().await;
                for (handle, dropped) in [(early, &before), (late, &inside)] {
                    handle.abort();
                    assert!(handle.await.unwrap_err().is_cancelled());
                    assert!(dropped.get(), "an aborted task's future was kept");
                }
            })
            .await;
    });
}
