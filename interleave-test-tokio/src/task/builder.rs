//! [`Builder`], as `tokio::task::Builder`: a task with a name, which reports show.

use std::future::Future;

use super::JoinHandle;
use crate::runtime::{self, Handle};
use interleave_test::future;

/// Spawns a task with options, as `tokio::task::Builder` (an unstable Tokio API, here
/// always available): the name is what failure reports call the task (a task of a
/// current-thread runtime, which runs on the `block_on`'s thread, is reported by its name
/// and that thread). Spawning does not fail; the `Result`s are Tokio's signatures.
///
/// ```
/// use interleave_test_tokio::task;
///
/// let failure = interleave_test::Builder::new()
///     .check_async(|| async {
///         let worker = task::Builder::new()
///             .name("worker")
///             .spawn(async { panic!("worker failed") })
///             .unwrap();
///         let _ = worker.await;
///     })
///     .unwrap_err();
/// assert_eq!(failure.thread().unwrap().name(), Some("worker"));
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Builder<'a> {
    /// The options, which `future::Builder` applies; this type only picks the runtime.
    inner: future::Builder<'a>,
}

impl<'a> Builder<'a> {
    /// A builder with no options set.
    pub fn new() -> Self {
        Builder::default()
    }

    /// Names the task.
    pub fn name(self, name: &'a str) -> Self {
        Builder {
            inner: self.inner.name(name),
        }
    }

    /// Spawns `future`, as [`spawn`](super::spawn).
    #[track_caller]
    pub fn spawn<F>(self, future: F) -> std::io::Result<JoinHandle<F::Output>>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match runtime::try_handle() {
            Some(handle) => self.spawn_on(future, &handle),
            None => self.inner.spawn(future),
        }
    }

    /// Spawns `future` on `handle`'s runtime, as [`Handle::spawn`].
    #[track_caller]
    pub fn spawn_on<F>(self, future: F, handle: &Handle) -> std::io::Result<JoinHandle<F::Output>>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        Ok(handle.spawn_with(self.inner, future))
    }

    /// Spawns a `!Send` future on the calling thread's `block_on`, as
    /// [`spawn_local`](super::spawn_local), inside a `LocalSet` (or a `LocalRuntime`).
    ///
    /// # Panics
    /// Outside a `LocalSet`, with Tokio's message.
    #[track_caller]
    pub fn spawn_local<F>(self, future: F) -> std::io::Result<JoinHandle<F::Output>>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        super::local_set::assert_in_set();
        self.inner.spawn_local(future)
    }

    /// Runs `f` as a task of its own, as [`spawn_blocking`](super::spawn_blocking).
    #[track_caller]
    pub fn spawn_blocking<F, R>(self, f: F) -> std::io::Result<JoinHandle<R>>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        match runtime::try_handle() {
            Some(handle) => self.spawn_blocking_on(f, &handle),
            None => self.inner.spawn(async move { f() }),
        }
    }

    /// Runs `f` as a task of its own in `handle`'s runtime.
    #[track_caller]
    pub fn spawn_blocking_on<F, R>(self, f: F, handle: &Handle) -> std::io::Result<JoinHandle<R>>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        Ok(handle.spawn_blocking_with(self.inner, f))
    }
}
