//! Misuse Tokio refuses with a panic, refused here with Tokio's message: `spawn_local`
//! outside a `LocalSet` (or `LocalRuntime`), and `block_in_place` inside a `LocalSet`,
//! whatever the runtime. Each model is checked under exhaustive DFS; the failure is a
//! panic with Tokio's words, in the thread and at the line that misused the API.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use interleave_test::{Failure, FailureKind, Reduction};
use interleave_test_tokio::runtime::{self, Builder as RtBuilder};
use interleave_test_tokio::task::{self, JoinSet, LocalSet};

use crate::common::{SUBSTRATES, dfs};

const SPAWN_LOCAL: &str =
    "`spawn_local` called from outside of a `task::LocalSet` or `runtime::LocalRuntime`";
const BLOCKING: &str = "can call blocking only when running on the multi-threaded runtime";

/// The failure of `model` on every substrate: a panic whose message is `words`.
fn panics_with(words: &str, model: impl Fn() + Sync) -> Vec<Failure> {
    SUBSTRATES
        .into_iter()
        .map(|substrate| {
            let failure = dfs(substrate, Reduction::Dpor, None)
                .thread_panics_fail(true)
                .check(&model)
                .expect_err("Tokio panics here");
            assert_eq!(failure.kind(), FailureKind::Panic, "{failure}");
            assert_eq!(failure.message(), words, "{substrate:?}: {failure}");
            failure
        })
        .collect()
}

fn multi_thread() -> runtime::Runtime {
    RtBuilder::new_multi_thread().build().unwrap()
}

// The model used to spawn these on the `block_on`'s executor, where Tokio panics.

#[test]
fn spawn_local_in_a_runtime_but_outside_a_local_set_panics_with_tokios_message() {
    let current = || RtBuilder::new_current_thread().build().unwrap();
    for rt in [current as fn() -> runtime::Runtime, multi_thread] {
        panics_with(SPAWN_LOCAL, || {
            rt().block_on(async { drop(task::spawn_local(async {})) })
        });
        panics_with(SPAWN_LOCAL, || {
            rt().block_on(async { drop(JoinSet::<()>::new().spawn_local(async {})) })
        });
        panics_with(SPAWN_LOCAL, || {
            rt().block_on(async { drop(task::Builder::new().spawn_local(async {})) })
        });
    }
}

#[test]
fn spawn_local_in_a_task_of_a_multi_thread_runtime_panics_in_that_task() {
    for failure in panics_with(SPAWN_LOCAL, || {
        multi_thread().block_on(async {
            let spawner = interleave_test_tokio::spawn(async {
                drop(task::spawn_local(async {}));
            });
            let _ = spawner.await;
        })
    }) {
        assert_eq!(failure.thread().map(|t| t.id()), Some(1), "{failure}");
    }
}

#[test]
fn spawn_local_outside_any_model_panics_with_tokios_message() {
    let caught = std::panic::catch_unwind(|| drop(task::spawn_local(async {})));
    let payload = caught.expect_err("Tokio panics here");
    let message = payload.downcast_ref::<String>().map(String::as_str);
    assert_eq!(message, Some(SPAWN_LOCAL));
}

// The model allowed these on a multi-thread runtime; Tokio refuses `block_in_place`
// wherever a `LocalSet` is the context.

#[test]
fn block_in_place_inside_run_until_on_a_multi_thread_runtime_panics() {
    panics_with(BLOCKING, || {
        multi_thread().block_on(async {
            LocalSet::new()
                .run_until(async { task::block_in_place(|| {}) })
                .await;
        })
    });
}

#[test]
fn block_in_place_in_a_task_of_a_local_set_on_a_multi_thread_runtime_panics() {
    panics_with(BLOCKING, || {
        multi_thread().block_on(async {
            let local = LocalSet::new();
            let task = local.spawn_local(async { task::block_in_place(|| {}) });
            local.await;
            let _ = task.await;
        })
    });
}

/// A future that calls `block_in_place` when it is dropped.
struct BlocksWhenDropped;

impl Future for BlocksWhenDropped {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

impl Drop for BlocksWhenDropped {
    fn drop(&mut self) {
        task::block_in_place(|| {});
    }
}

#[test]
fn block_in_place_in_the_drop_of_a_task_dropped_with_its_set_panics() {
    panics_with(BLOCKING, || {
        multi_thread().block_on(async {
            let local = LocalSet::new();
            let task = local.spawn_local(BlocksWhenDropped);
            local.run_until(task::yield_now()).await;
            drop(local);
            let _ = task.await;
        })
    });
}

/// Outside a set, `block_in_place` on a multi-thread runtime runs its closure, as Tokio's.
#[test]
fn block_in_place_outside_a_set_on_a_multi_thread_runtime_runs_the_closure() {
    for substrate in SUBSTRATES {
        dfs(substrate, Reduction::Dpor, None)
            .check(|| {
                let got = multi_thread().block_on(async { task::block_in_place(|| 7) });
                assert_eq!(got, 7);
            })
            .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
    }
}
