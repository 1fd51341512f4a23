//! Async models: the entry points of [`Builder`] for a model that is an `async` block.
//!
//! Each runs `model()`'s future under [`future::block_on`](crate::future::block_on) on the
//! model's main thread, as `#[interleave]` on an `async fn` does, with the caller's
//! location as the `block_on`'s (where reports say its waits are): everything else (the
//! search, the report, replay) is the synchronous entry point's.

use std::future::Future;
use std::panic::Location;

use super::Builder;
use crate::future::block_on_at;
use crate::report::Failure;
use crate::schedule::Schedule;
use crate::summary::Report;

impl Builder {
    /// [`check`](Self::check) for an async model: `model` makes the future that each
    /// execution runs to completion under [`block_on`](crate::future::block_on).
    ///
    /// ```
    /// use interleave_test::{Builder, future};
    ///
    /// let report = Builder::new()
    ///     .check_async(|| async {
    ///         let task = future::spawn(async { 1 });
    ///         assert_eq!(task.await.unwrap(), 1);
    ///     })
    ///     .unwrap();
    /// assert!(report.executions > 0);
    /// ```
    #[track_caller]
    #[must_use = "a failure is returned, not raised: a test that ignores this result passes whatever the search found; use `explore_async`, or `.unwrap()` it, to fail on a failure"]
    pub fn check_async<F, Fut>(&self, model: F) -> Result<Report, Failure>
    where
        F: Fn() -> Fut + Sync,
        Fut: Future<Output = ()>,
    {
        let loc = Location::caller();
        self.check(|| block_on_at(model(), loc))
    }

    /// [`explore`](Self::explore) for an async model; see [`check_async`](Self::check_async).
    #[track_caller]
    pub fn explore_async<F, Fut>(&self, model: F) -> Report
    where
        F: Fn() -> Fut + Sync,
        Fut: Future<Output = ()>,
    {
        let loc = Location::caller();
        self.explore(|| block_on_at(model(), loc))
    }

    /// [`replay`](Self::replay) for an async model; see [`check_async`](Self::check_async).
    #[track_caller]
    pub fn replay_async<F, Fut>(&self, model: F, schedule: &Schedule) -> Result<(), Failure>
    where
        F: Fn() -> Fut + Sync,
        Fut: Future<Output = ()>,
    {
        let loc = Location::caller();
        self.replay(|| block_on_at(model(), loc), schedule)
    }
}

/// Runs the async `model` with [`Builder::new`]'s settings; see [`Builder::check_async`].
#[track_caller]
#[must_use = "a failure is returned, not raised: a test that ignores this result passes whatever the search found; use `explore_async`, or `.unwrap()` it, to fail on a failure"]
pub fn check_async<F, Fut>(model: F) -> Result<Report, Failure>
where
    F: Fn() -> Fut + Sync,
    Fut: Future<Output = ()>,
{
    Builder::new().check_async(model)
}

/// Runs the async `model` with [`Builder::new`]'s settings and panics with the report if an
/// execution fails; see [`Builder::explore_async`].
#[track_caller]
pub fn explore_async<F, Fut>(model: F) -> Report
where
    F: Fn() -> Fut + Sync,
    Fut: Future<Output = ()>,
{
    Builder::new().explore_async(model)
}
