//! The executor of `block_on` and its local tasks (`spawn_local`): they share one model
//! thread, so they interleave only at `.await` points, in an order the search explores,
//! and a blocking call in one stalls the others.

use interleave_test::future;
use interleave_test::sync::Arc;
use interleave_test::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use interleave_test::{Builder, FailureKind, Reduction};

use crate::common::{SUBSTRATES, dfs, each_dfs, each_sampler};
use crate::futures::Held;

/// Two local tasks record the order they ran in.
fn local_order() -> Vec<u8> {
    future::block_on(async {
        let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let (a, b) = (seen.clone(), seen.clone());
        let first = future::spawn_local(async move { a.borrow_mut().push(1) });
        let second = future::spawn_local(async move { b.borrow_mut().push(2) });
        first.await.unwrap();
        second.await.unwrap();
        seen.take()
    })
}

#[test]
fn the_order_an_executor_polls_woken_tasks_in_is_explored() {
    each_dfs(|builder, name, _| {
        let orders = std::sync::Mutex::new(std::collections::BTreeSet::new());
        builder
            .check(|| {
                orders.lock().unwrap().insert(local_order());
            })
            .unwrap_or_else(|f| panic!("{name}: {f}"));
        assert_eq!(
            orders.into_inner().unwrap().into_iter().collect::<Vec<_>>(),
            vec![vec![1, 2], vec![2, 1]],
            "{name}"
        );
    });
}

/// Two tasks add to a counter by a load and a store with no `.await` between; `local`: on
/// one `block_on`'s executor, else on threads of their own.
fn read_then_write(local: bool) {
    let counter = Arc::new(AtomicUsize::new(0));
    let add = |c: Arc<AtomicUsize>| async move {
        let seen = c.load(Ordering::SeqCst);
        c.store(seen + 1, Ordering::SeqCst);
    };
    if local {
        future::block_on(async {
            let a = future::spawn_local(add(Arc::clone(&counter)));
            let b = future::spawn_local(add(Arc::clone(&counter)));
            a.await.unwrap();
            b.await.unwrap();
        });
    } else {
        let a = future::spawn(add(Arc::clone(&counter)));
        let b = future::spawn(add(Arc::clone(&counter)));
        future::block_on(async {
            a.await.unwrap();
            b.await.unwrap();
        });
    }
    assert_eq!(counter.load(Ordering::SeqCst), 2, "an update was lost");
}

#[test]
fn local_tasks_interleave_only_at_awaits_and_spawned_ones_anywhere() {
    each_dfs(|builder, name, _| {
        builder
            .check(|| read_then_write(true))
            .unwrap_or_else(|f| panic!("{name}: local tasks: {f}"));
    });
    for substrate in SUBSTRATES {
        let failure = dfs(substrate, Reduction::Dpor, None)
            .check(|| read_then_write(false))
            .expect_err("spawned tasks are preempted between the load and the store");
        assert!(
            failure.message().contains("an update was lost"),
            "{substrate:?}: {failure}"
        );
    }
}

/// A local task blocks its thread on a channel its sibling sends on.
fn blocking_inside_a_local_task() {
    future::block_on(async {
        let (tx, rx) = interleave_test::sync::mpsc::channel();
        let receiver = future::spawn_local(async move { rx.recv().unwrap() });
        let sender = future::spawn_local(async move { tx.send(5).unwrap() });
        assert_eq!(receiver.await.unwrap(), 5);
        sender.await.unwrap();
    });
}

#[test]
fn a_blocking_call_in_a_local_task_stalls_its_siblings() {
    each_dfs(|builder, name, _| {
        let failure = builder
            .check(blocking_inside_a_local_task)
            .expect_err(&name);
        assert_eq!(failure.kind(), FailureKind::Deadlock, "{name}: {failure}");
        assert!(
            failure.to_string().contains("waits to receive on"),
            "{name}: {failure}"
        );
    });
    each_sampler(9, |builder, name| {
        let failure = builder
            .check(blocking_inside_a_local_task)
            .expect_err(&name);
        assert_eq!(failure.kind(), FailureKind::Deadlock, "{name}: {failure}");
    });
}

#[test]
fn local_tasks_abort_and_are_dropped_when_block_on_returns() {
    for substrate in SUBSTRATES {
        dfs(substrate, Reduction::Dpor, None)
            .check(|| {
                let held = Arc::new(AtomicBool::new(false));
                let mine = Arc::clone(&held);
                let (result, left_held) = future::block_on(async {
                    let task = future::spawn_local(async move {
                        let _guard = Held::take(mine);
                        std::future::pending::<()>().await;
                    });
                    future::yield_now().await;
                    task.abort();
                    let result = task.await.map_err(|e| e.is_cancelled());
                    // Left pending: dropped when block_on returns.
                    let left = Arc::new(AtomicBool::new(false));
                    let flag = Arc::clone(&left);
                    drop(future::spawn_local(async move {
                        let _guard = Held::take(flag);
                        std::future::pending::<()>().await;
                    }));
                    future::yield_now().await;
                    (result, left)
                });
                assert_eq!(result, Err(true), "the aborted task is cancelled");
                assert!(!held.load(Ordering::SeqCst), "its guard was dropped");
                assert!(
                    !left_held.load(Ordering::SeqCst),
                    "the task left was dropped"
                );
            })
            .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
    }
}

#[test]
fn spawn_local_outside_block_on_says_what_to_do() {
    let failure = Builder::new()
        .iterations(1)
        .check(|| drop(future::spawn_local(async {})))
        .expect_err("no executor to run it");
    assert_eq!(failure.kind(), FailureKind::Panic);
    assert!(
        failure
            .message()
            .contains("spawn_local was called outside block_on"),
        "{failure}"
    );
}

#[test]
fn futures_that_keep_waking_each_other_are_a_livelock_not_a_hung_process() {
    // Neither the block_on's future nor its local task ever waits: without the executor's
    // periodic yield no switch point would come, and the watchdog would end the process.
    let model = || {
        future::block_on(async {
            let _other = future::spawn_local(async {
                loop {
                    future::yield_now().await;
                }
            });
            loop {
                future::yield_now().await;
            }
        })
    };
    for substrate in SUBSTRATES {
        let failure = dfs(substrate, Reduction::Dpor, None)
            .max_steps(2_000)
            .check(model)
            .expect_err("an endless loop of polls");
        assert_eq!(
            failure.kind(),
            FailureKind::Livelock,
            "{substrate:?}: {failure}"
        );
        assert_eq!(failure.thread().map(|t| t.id()), Some(0), "{failure}");
    }
}
