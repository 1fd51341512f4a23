//! Tasks, with the names of `tokio::task`: [`spawn`], [`spawn_local`] and [`LocalSet`],
//! [`spawn_blocking`], [`yield_now`], [`JoinHandle`], [`JoinSet`], [`id`].
//!
//! A task is a model task of `interleave_test::future`; which runtime shape it runs in is
//! told in `runtime`.

mod builder;
pub mod coop;
mod join_set;
mod local;
mod local_set;

use std::future::Future;

use crate::runtime;
use interleave_test::future;

pub use builder::Builder;
pub use coop::{Unconstrained, consume_budget, unconstrained};
pub use interleave_test::future::{AbortHandle, Id, JoinError, JoinHandle, yield_now};
pub use join_set::JoinSet;
pub use local::{AccessError, LocalKey, TaskLocalFuture};
pub use local_set::{LocalEnterGuard, LocalSet};

/// The task module's future types, as `tokio::task::futures`.
pub mod futures {
    pub use super::local::TaskLocalFuture;
}

/// Spawns `future` as a task, as `tokio::spawn`: on a current-thread runtime's thread, a
/// task of its executor (it interleaves with the others only at `.await` points); on a
/// multi-thread runtime, or outside any runtime, a task of its own, preempted at any
/// switch point. Spawning is a switch point. Dropping the handle detaches the task.
/// Outside a model, in a runtime's `block_on`, the task is a local task of that `block_on`
/// (see [`runtime`]).
///
/// # Panics
/// Outside a model and outside any runtime's `block_on`, as [`future::spawn`] does.
///
/// ```
/// use interleave_test_tokio as tokio;
///
/// interleave_test::check_async(|| async {
///     let task = tokio::spawn(async { 40 + 2 });
///     assert_eq!(task.await.unwrap(), 42);
/// })
/// .unwrap();
/// ```
#[track_caller]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    match runtime::try_handle() {
        Some(handle) => handle.spawn(future),
        None => future::spawn(future),
    }
}

/// Spawns a `!Send` future, as `tokio::task::spawn_local`: inside a [`LocalSet`] (its
/// `run_until`'s future or one of its tasks) or a `LocalRuntime`'s `block_on`, on that
/// set. For a local task of a plain `block_on`, see [`future::spawn_local`].
///
/// # Panics
/// Anywhere else (Tokio's message), a current-thread or multi-thread runtime's `block_on`
/// included.
#[track_caller]
pub fn spawn_local<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    local_set::spawn_local_here(future, std::panic::Location::caller())
}

/// Runs `f` as a task of its own, as on Tokio's blocking pool: it may block (on a lock,
/// a channel, `thread::sleep`) without stalling the runtime's other tasks. Aborting it
/// before it starts keeps it from running; once it runs it runs to its end.
#[track_caller]
pub fn spawn_blocking<F, R>(f: F) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    match runtime::try_handle() {
        Some(handle) => handle.spawn_blocking(f),
        None => future::spawn(async move { f() }),
    }
}

/// Runs `f` on the calling thread, as `tokio::task::block_in_place` on a multi-thread
/// runtime (where the calling task is a model thread of its own, so blocking in `f` stalls
/// no other task).
///
/// # Panics
/// On a current-thread runtime or inside a [`LocalSet`] (its `run_until`, its tasks, its
/// drop), whatever the runtime, with Tokio's message.
#[track_caller]
pub fn block_in_place<F: FnOnce() -> R, R>(f: F) -> R {
    let current = runtime::try_handle().map(|h| h.runtime_flavor());
    assert!(
        current != Some(runtime::RuntimeFlavor::CurrentThread) && !local_set::in_set(),
        "can call blocking only when running on the multi-threaded runtime"
    );
    f()
}

/// The id of the task that runs the calling code, as `tokio::task::id`.
///
/// # Panics
/// Outside a task (Tokio's message): in a `block_on`'s own future or a plain thread.
#[track_caller]
pub fn id() -> Id {
    try_id().expect("can't get a task id when not inside a task")
}

/// The id of the task that runs the calling code, `None` outside a task, as
/// `tokio::task::try_id`.
#[track_caller]
pub fn try_id() -> Option<Id> {
    future::current_id()
}
