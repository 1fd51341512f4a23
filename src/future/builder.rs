//! Tasks with options, as `tokio::task::Builder`.

use std::future::Future;
use std::panic::Location;

use super::{JoinHandle, local, task};

/// Builds a task with options, as `tokio::task::Builder`: a name, which reports and
/// schedules show ("task 'name' (#n)").
///
/// ```
/// use interleave_test::future;
///
/// interleave_test::check(|| {
///     let task = future::Builder::new()
///         .name("worker")
///         .spawn(async { 1 })
///         .unwrap();
///     assert_eq!(future::block_on(task).unwrap(), 1);
/// })
/// .unwrap();
/// ```
#[derive(Clone, Copy, Debug, Default)]
#[must_use = "a Builder does nothing until `spawn` is called"]
pub struct Builder<'a> {
    name: Option<&'a str>,
}

impl<'a> Builder<'a> {
    /// A builder with no options set.
    pub fn new() -> Self {
        Builder::default()
    }

    /// Names the task.
    pub fn name(self, name: &'a str) -> Self {
        Builder { name: Some(name) }
    }

    /// Spawns `future` as [`spawn`](super::spawn) does, with the builder's options. It does
    /// not fail (the `Result` is Tokio's signature); outside a model it panics, as `spawn`.
    #[track_caller]
    pub fn spawn<F>(self, future: F) -> std::io::Result<JoinHandle<F::Output>>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let name = self.name.map(str::to_owned);
        Ok(task::spawn(future, name, Location::caller()))
    }

    /// Spawns `future` as [`spawn_local`](super::spawn_local) does. A local task runs on
    /// the model thread of its `block_on`: reports name the task (by its name) and that
    /// thread. It does not fail (the `Result` is Tokio's signature).
    ///
    /// # Panics
    /// Outside the future of a `block_on` of the calling model thread.
    #[track_caller]
    pub fn spawn_local<F>(self, future: F) -> std::io::Result<JoinHandle<F::Output>>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        let name = self.name.map(str::to_owned);
        Ok(local::spawn_local_at(future, name, Location::caller()))
    }

    /// Spawns `future` on `kept`, with the builder's options: a task of a runtime built
    /// outside any model (see [`KeptExecutor`](super::KeptExecutor)).
    #[track_caller]
    pub fn spawn_kept<F>(self, kept: &super::KeptExecutor, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        let name = self.name.map(str::to_owned);
        kept.spawn(future, name, Location::caller())
    }
}
