//! [`LocalRuntime`], as `tokio::runtime::LocalRuntime`: a current-thread runtime whose
//! `!Send` tasks need no `LocalSet`. Here it is exactly that: a current-thread
//! [`Runtime`] and a [`LocalSet`] that its `block_on` drives.

use std::future::Future;
use std::marker::PhantomData;
use std::time::Duration;

use super::runtime::{EnterGuard, Handle, Runtime, RuntimeMetrics};
use super::task::{JoinHandle, LocalSet};

/// Options of [`Builder::build_local`](super::runtime::Builder::build_local), as
/// `tokio::runtime::LocalOptions` (none yet).
#[derive(Default, Debug)]
#[non_exhaustive]
pub struct LocalOptions {
    /// `!Send` and `!Sync`, as Tokio's.
    _not_send: PhantomData<*mut u8>,
}

/// A current-thread runtime that runs `!Send` tasks, as `tokio::runtime::LocalRuntime`:
/// [`spawn_local`](Self::spawn_local), and `tokio::task::spawn_local` inside its
/// `block_on`, need no `LocalSet`. It is `!Send`, as Tokio's.
///
/// ```
/// use std::rc::Rc;
/// use interleave_test_tokio::{self as tokio, runtime::LocalRuntime};
///
/// interleave_test::check(|| {
///     let rt = LocalRuntime::new().unwrap();
///     let shared = Rc::new(20);
///     let early = rt.spawn_local({
///         let shared = Rc::clone(&shared);
///         async move { *shared + 1 }
///     });
///     let sum = rt.block_on(async move {
///         let late = tokio::task::spawn_local(async move { *shared * 2 });
///         early.await.unwrap() + late.await.unwrap()
///     });
///     assert_eq!(sum, 61);
/// })
/// .unwrap();
/// ```
#[derive(Debug)]
pub struct LocalRuntime {
    rt: Runtime,
    set: LocalSet,
}

impl LocalRuntime {
    /// A local runtime, as `LocalRuntime::new`.
    pub fn new() -> std::io::Result<LocalRuntime> {
        super::runtime::Builder::new_current_thread()
            .enable_all()
            .build_local(LocalOptions::default())
    }

    /// The local runtime around a current-thread `rt`.
    pub(super) fn from_runtime(rt: Runtime) -> LocalRuntime {
        LocalRuntime {
            rt,
            set: LocalSet::new(),
        }
    }

    /// Its handle.
    pub fn handle(&self) -> &Handle {
        self.rt.handle()
    }

    /// The set its `block_on` drives.
    pub(super) fn local_set(&self) -> &LocalSet {
        &self.set
    }

    /// Spawns a `!Send` `future` on the runtime: it runs while a `block_on` of the
    /// runtime runs (as a `LocalSet`'s task). A switch point.
    #[track_caller]
    pub fn spawn_local<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        self.set.spawn_local(future)
    }

    /// Runs `f` as a task of its own; see [`Handle::spawn_blocking`].
    #[track_caller]
    pub fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.rt.spawn_blocking(f)
    }

    /// Runs `future` to completion on the calling model thread, with the runtime's local
    /// tasks; see [`Runtime::block_on`].
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.set.block_on(&self.rt, future)
    }

    /// Enters the runtime's context; see [`Handle::enter`].
    #[track_caller]
    pub fn enter(&self) -> EnterGuard<'_> {
        self.rt.enter()
    }

    /// The runtime's metrics; see [`Handle::metrics`].
    pub fn metrics(&self) -> RuntimeMetrics {
        self.rt.metrics()
    }

    /// Shuts the runtime down, as dropping it does; the timeout has no effect.
    pub fn shutdown_timeout(self, _timeout: Duration) {}

    /// Shuts the runtime down, as dropping it does.
    pub fn shutdown_background(self) {}
}
