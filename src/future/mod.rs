//! Futures as model tasks: [`spawn`], [`block_on`], [`yield_now`], [`JoinHandle`] with
//! [`abort`](JoinHandle::abort), [`AbortHandle`], [`JoinError`] and an [`AtomicWaker`], with
//! the names and signatures of Tokio and the `futures` crate, so that async code moves over
//! with a `use` line.
//!
//! A spawned task is a model task in the one scheduler: every strategy chooses among threads
//! and tasks alike, the modelled primitives (`sync`, atomics, `cell`, channels, virtual
//! time) work inside a poll, and partial-order reduction, weak memory, data races and
//! replay apply unchanged. [`spawn`] models a multi-threaded runtime: a task is preempted at
//! any switch point, and a blocking call inside a poll blocks only that task, as on a worker
//! thread of its own. [`block_on`] polls its future on the calling model thread (the model's
//! main thread or any other).
//!
//! Between two polls a task waits for a wake. That wait is a switch point, and it may end
//! without a wake: a *spurious poll*, a decision like a spurious wake-up (turned off with
//! [`Builder::spurious_wakeups`](crate::Builder::spurious_wakeups)), so a future that
//! assumes one poll per wake is caught. A wake is a release by the waker and an acquire by
//! the next poll: data written before a wake is seen by the poll after it. A wake that
//! arrives during a poll is not lost; waking a finished task, or a waker kept past its
//! execution, does nothing.
//!
//! Each poll of a task starts with Tokio's cooperative budget of 128 units
//! (`tokio::task::coop`), and a [`JoinHandle`]'s poll spends one, as Tokio's: with none left
//! it yields (returns `Pending` after waking its task), and a poll that finds the task
//! still running gives its unit back.
//!
//! When nothing can run any more, a task that returned `Pending` is part of the deadlock
//! report: "task 'name' (#n) returned Pending and nothing woke it" (a task is named with
//! [`Builder::name`]), with "no Waker of it is alive" when that is so (said of spawned
//! tasks: a `block_on` keeps its futures' wakers, so it is not said of its thread).
//!
//! A model that is an `async` block runs with
//! [`Builder::check_async`](crate::Builder::check_async) (or `explore_async`,
//! `replay_async`), with [`model_async`](crate::model_async), or as an `async fn` under
//! `#[interleave]`.
//!
//! # Differences from Tokio
//! - A task's panic reaches its [`JoinHandle`] as a [`JoinError`], as in Tokio. With
//!   [`Builder::thread_panics_fail`](crate::Builder::thread_panics_fail) on (the default)
//!   it still fails the execution unless the program looks at that error
//!   ([`JoinError::is_panic`], [`into_panic`](JoinError::into_panic), ...: it expected the
//!   panic): an error dropped unread (`let _ = handle.await;`, an `unwrap` of the result),
//!   a handle dropped before it returned the panic, a task whose handle was dropped before
//!   it panicked, or an execution that ends with the panic unreturned fail it, reported
//!   where the task panicked. Tokio would let the program go on.
//! - An execution ends when the main thread's work and every task whose [`JoinHandle`] is
//!   alive are done. Detached tasks (their handle dropped) that then wait between polls are
//!   dropped, as a runtime's shutdown drops them: each drops its future inside the model,
//!   so its destructors run and are explored. A detached task blocked in the middle of a
//!   poll (on a lock, say) when nothing else can run is reported as a deadlock, not left
//!   behind: its worker thread never returns to the runtime, and a Tokio runtime's drop
//!   waits for its worker threads, so the real program hangs at shutdown.
//! - Off-the-shelf futures (`futures::channel`, `FuturesUnordered`, the `futures` crate's
//!   `join!`/`select!`) run deterministically inside a model, but add no switch points of
//!   their own: the search interleaves other threads and tasks only at the modelled
//!   operations and at the waits between polls. Await them rather than poll them in a
//!   `yield_now` loop: under DFS's rule for spin loops (`Builder::fair_spins`) a task that
//!   spins on state the model does not see waits until something it saw through the model
//!   changes, so the schedules in which it sees that state change earlier are not explored
//!   (the report then says "under fair scheduling of spin loops"). Their `select!` starts
//!   at a branch drawn from a random number generator outside the model, which replay
//!   cannot repeat: use `select_biased!` (or this crate's decisions) in models.
//!
//! # For a runtime layered over this crate
//! The Tokio crate (`interleave-test-tokio`) is written against these, as another runtime
//! would be: local tasks spawned at the caller's place ([`spawn_local_at`],
//! [`Builder::spawn_kept`]) and tasks given to the first `block_on` that runs
//! ([`spawn_unbound`], [`Unbound`]); an executor kept between `block_on`s outside any model
//! ([`KeptExecutor`]); whether the calling code runs in a `block_on` ([`in_block_on`]) and
//! in which task ([`current_id`]); a task's end, as a runtime's count of live tasks reads it
//! ([`AbortHandle::ended_now`]) or a set of tasks collects it
//! ([`JoinHandle::poll_unawaited`]); the cooperative [`budget`]; and the runtime an `async
//! fn` test body asks for ([`test_runtime`], [`RuntimeArgs`]). Alongside: `sync::section`
//! with `Mutex::named` and `Mutex::lock_section_at` (a primitive's state in a model mutex,
//! one step per operation), `RwLock::read_at`, the atomics' `rmw_at` with
//! `sync::atomic::ops`, `thread::IS_FINISHED` and `time::Instant::since_start`.

pub mod budget;
mod builder;
mod kept;
mod local;
mod notes;
mod task;
mod test_body;
mod unbound;
mod waker;

use std::future::Future;
use std::panic::Location;
use std::task::{Context, Poll};

use crate::primitive;

pub use builder::Builder;
pub use kept::KeptExecutor;
pub use local::spawn_local;
pub use local::{in_block_on, spawn_local_at};
pub use task::current_id;
pub use task::{AbortHandle, Id, JoinError, JoinHandle};
pub(crate) use test_body::block_on_test;
pub use test_body::{RuntimeArgs, test_runtime};
pub use unbound::{Unbound, spawn_unbound};
pub use waker::AtomicWaker;

/// Spawns `future` as a task, as `tokio::spawn`: it runs as a model task of its own,
/// preempted at any switch point (a multi-threaded runtime). Spawning is a switch point.
/// Dropping the [`JoinHandle`] detaches the task; it still runs to its end.
///
/// # Panics
/// Outside a model, where no second thread can run the task: the message says to gate the
/// code with `#[cfg(not(interleave))]`.
///
/// ```
/// use interleave_test::future;
///
/// interleave_test::check(|| {
///     let handle = future::spawn(async { 1 + 1 });
///     assert_eq!(future::block_on(handle).unwrap(), 2);
/// });
/// ```
#[track_caller]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    task::spawn(future, None, Location::caller())
}

/// Runs `future` to completion on the calling model thread, as a current-thread runtime's
/// `block_on`: polls it and the tasks [`spawn_local`] gives it, and between polls waits
/// for a wake (a switch point). Which woken future it polls next is a decision. A blocking
/// call inside a poll blocks this thread, and so every future it polls. Outside a model it
/// runs on the calling OS thread, which is then the only thread: a wait only another
/// thread could end panics as a deadlock.
#[track_caller]
pub fn block_on<F: Future>(future: F) -> F::Output {
    local::block_on(future, Location::caller())
}

/// [`block_on`] for the crate's own entry points, which know their caller's location.
pub(crate) fn block_on_at<F: Future>(future: F, loc: primitive::Loc) -> F::Output {
    local::block_on(future, loc)
}

/// Gives other threads and tasks a chance to run, as `tokio::task::yield_now`: the first
/// poll wakes the task and returns `Pending`, the next returns `Ready`. A loop of yields is
/// a spin, which strategies treat as waiting for another task.
#[track_caller]
pub fn yield_now() -> YieldNow {
    YieldNow {
        yielded: false,
        loc: Location::caller(),
    }
}

/// The future [`yield_now`] returns.
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct YieldNow {
    yielded: bool,
    /// Where it was made: the place of the yield (`primitive::yield_explicitly`).
    loc: primitive::Loc,
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        primitive::yield_explicitly("interleave_test::future::yield_now", self.loc);
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
