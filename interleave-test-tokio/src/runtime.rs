//! Runtimes, with the names of `tokio::runtime`: [`Runtime`], [`LocalRuntime`],
//! [`Builder`], [`Handle`], [`RuntimeMetrics`].
//!
//! A runtime here is a way to run futures on the model's threads, in one of Tokio's two
//! shapes:
//! - **current-thread** ([`Builder::new_current_thread`]): [`Runtime::block_on`] polls its
//!   future and every task spawned on the runtime on the calling model thread, so tasks
//!   interleave only at `.await` points, and a blocking call inside a poll stalls them all
//!   (a deadlock of that kind is found). `#[interleave]` on an `async fn` runs its body so,
//!   as `#[tokio::test]` does.
//! - **multi-thread** ([`Builder::new_multi_thread`], [`Runtime::new`]): each spawned task
//!   is a model task of its own, preempted at any switch point, as on a pool of workers.
//!   The worker count only sets what [`RuntimeMetrics::num_workers`] says: the search
//!   already covers every assignment of tasks to workers (each task may run while any
//!   other is stopped).
//!
//! [`spawn_blocking`](crate::task::spawn_blocking) runs its closure as a task of its
//! own under both shapes, as on Tokio's blocking pool. A runtime's context is entered on
//! the thread of its `block_on` and on the threads of its tasks, so
//! [`Handle::current`] and `tokio::spawn` work there. Dropping a runtime aborts the tasks
//! spawned on it that still run, as a Tokio runtime's shutdown does.
//!
//! A runtime built outside any model (a plain `#[test]`'s `Runtime::new()`) runs in the
//! ambient one-thread execution of the OS thread that first runs it, where time is real
//! (a sleep every task waits for takes its time), or, paused (`start_paused`,
//! `time::pause`), moves to the next deadline at once when every task waits: its `block_on` polls the future on the calling
//! thread (it may borrow locals and be `!Send`), with every task spawned on the runtime, on
//! either shape, and `spawn_blocking`'s closures (run there, as on one thread). As in
//! Tokio, a task spawned in one `block_on`, or on the runtime's handle outside any, goes on
//! in the next `block_on`, and the tasks left are dropped with the runtime, in its context.
//! Running the runtime on a second OS thread is refused with a message: its tasks would
//! need a thread of their own there.
//!
//! Outside any runtime's context (a model that calls `future::block_on`, or
//! `check_async`), `tokio::spawn` spawns a task of its own, as a multi-thread runtime
//! would, rather than panicking as Tokio does.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

pub use super::local_runtime::{LocalOptions, LocalRuntime};
use interleave_engine::primitive::{Tid, thread_slot};
use interleave_engine::{primitive, threads};
use interleave_test::future::{self, AbortHandle, JoinHandle};

/// Which shape of runtime, as `tokio::runtime::RuntimeFlavor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RuntimeFlavor {
    /// Every task on the thread of `block_on`.
    CurrentThread,
    /// Every task preempted at any switch point.
    MultiThread,
}

/// What a runtime's handles share.
#[derive(Debug)]
struct Shared {
    flavor: RuntimeFlavor,
    start_paused: bool,
    /// Its number of workers, as its metrics tell it.
    workers: usize,
    /// The tasks of its own spawned on it, aborted when it shuts down.
    tasks: Mutex<Vec<AbortHandle>>,
    /// The tasks spawned on it (not blocking ones) not yet seen finished, for its metrics.
    alive: Mutex<Vec<AbortHandle>>,
    /// Built outside any model: it runs in the calling OS thread's ambient one-thread
    /// execution, where every task it spawns is a task of this executor, kept from one
    /// `block_on` to the next.
    outside: Option<future::KeptExecutor>,
}

/// The workers of a multi-thread runtime built without `worker_threads`.
const DEFAULT_WORKERS: usize = 2;

/// A handle to a runtime, as `tokio::runtime::Handle`: spawns on it from anywhere.
#[derive(Clone, Debug)]
pub struct Handle {
    shared: Arc<Shared>,
}

/// A runtime context a model thread entered, on its stack in the thread's slot.
struct Entered {
    handle: Handle,
    /// How it was entered.
    how: Entry,
}

/// How a runtime's context was entered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Entry {
    /// By `Handle::enter`, or by blocking work (`spawn_blocking`).
    Plain,
    /// By a task the runtime drives (not a blocking one): blocking there stalls the
    /// runtime, which Tokio refuses (`blocking_lock` and the like panic).
    Drives,
    /// By a `block_on`: starting another runtime there panics, as in Tokio.
    BlockOn,
}

/// The innermost runtime context of the calling model thread, and how it was entered: the
/// top of the contexts it entered (a stack in the engine's per-thread slot:
/// `runtime/thread_slot.rs`), else the runtime of the `async fn` test body it runs, as
/// that runtime's `block_on` (`test_body.rs`).
fn context(key: (u64, Tid)) -> Option<(Handle, Entry)> {
    match thread_slot::top(key, |e: &Entered| (e.handle.clone(), e.how)) {
        Some(entered) => Some(entered),
        None => super::test_body::handle().map(|handle| (handle, Entry::BlockOn)),
    }
}

/// The handle of the innermost runtime context of the calling model thread.
fn current() -> Option<Handle> {
    let key = threads::ids("interleave_test_tokio::runtime::Handle::current");
    context(key).map(|(handle, _)| handle)
}

/// Whether the calling thread is a task a runtime drives (spawned, not blocking): Tokio
/// refuses to block there.
pub(crate) fn drives_tasks() -> bool {
    threads::try_ids()
        .and_then(context)
        .is_some_and(|(_, how)| how == Entry::Drives)
}

/// Whether the calling thread's innermost runtime context is a `block_on`'s or a task's a
/// runtime drives, where Tokio refuses to start a runtime.
fn runs_a_runtime() -> bool {
    threads::try_ids()
        .and_then(context)
        .is_some_and(|(_, how)| how != Entry::Plain)
}

/// Leaves a runtime context when dropped, as `tokio::runtime::EnterGuard`.
#[derive(Debug)]
#[must_use = "the context is left when the guard is dropped"]
pub struct EnterGuard<'a> {
    key: (u64, Tid),
    _handle: std::marker::PhantomData<&'a Handle>,
}

impl Drop for EnterGuard<'_> {
    fn drop(&mut self) {
        drop(thread_slot::pop::<Entered>(self.key));
    }
}

impl Handle {
    /// The handle of the runtime whose context the calling code runs in.
    ///
    /// # Panics
    /// Outside a runtime's context (Tokio's message).
    #[track_caller]
    pub fn current() -> Handle {
        current().unwrap_or_else(|| {
            panic!(
                "there is no reactor running, must be called from the context of a Tokio 1.x \
                 runtime (here: inside Runtime::block_on, a task spawned on a runtime, or \
                 an `async fn` under #[interleave])"
            )
        })
    }

    /// The handle of the current runtime, or an error outside one.
    #[track_caller]
    pub fn try_current() -> Result<Handle, TryCurrentError> {
        current().ok_or(TryCurrentError(()))
    }

    /// The runtime's shape.
    pub fn runtime_flavor(&self) -> RuntimeFlavor {
        self.shared.flavor
    }

    /// Enters the runtime's context on the calling model thread until the guard drops.
    #[track_caller]
    pub fn enter(&self) -> EnterGuard<'_> {
        self.enter_as(Entry::Plain)
    }

    /// [`enter`](Self::enter), saying how.
    #[track_caller]
    fn enter_as(&self, how: Entry) -> EnterGuard<'_> {
        let key = threads::ids("interleave_test_tokio::runtime::Handle::enter");
        let handle = self.clone();
        thread_slot::push(key, Entered { handle, how });
        EnterGuard {
            key,
            _handle: std::marker::PhantomData,
        }
    }

    /// Spawns `future` on the runtime, as `Handle::spawn`; see
    /// [`tokio::spawn`](crate::spawn).
    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.spawn_with(future::Builder::new(), future)
    }

    /// [`spawn`](Self::spawn) with `builder`'s options (`tokio::task::Builder`).
    #[track_caller]
    pub(crate) fn spawn_with<F>(
        &self,
        builder: future::Builder<'_>,
        future: F,
    ) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let spawned = match &self.shared.outside {
            Some(kept) => Ok(builder.spawn_kept(kept, future)),
            None if self.polls_locally() => builder.spawn_local(future),
            None => self.spawn_own(builder, future, false),
        };
        let task = spawned.expect("spawning a model task does not fail");
        self.shared.alive.lock().push(task.abort_handle());
        task
    }

    /// Whether a task spawned on the runtime now is a local task of the `block_on` that
    /// runs the calling code: on a current-thread runtime.
    fn polls_locally(&self) -> bool {
        self.shared.flavor == RuntimeFlavor::CurrentThread && on_local_executor(self)
    }

    /// The runtime's metrics, as `Handle::metrics`.
    pub fn metrics(&self) -> RuntimeMetrics {
        RuntimeMetrics {
            shared: Arc::clone(&self.shared),
        }
    }

    /// Spawns `future` as a task of its own that runs in this runtime's context.
    #[track_caller]
    fn spawn_own<F>(
        &self,
        builder: future::Builder<'_>,
        future: F,
        blocking: bool,
    ) -> std::io::Result<JoinHandle<F::Output>>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let handle = self.clone();
        let task = builder.spawn(async move {
            let how = if blocking {
                Entry::Plain
            } else {
                Entry::Drives
            };
            let _entered = handle.enter_as(how);
            future.await
        })?;
        self.shared.tasks.lock().push(task.abort_handle());
        Ok(task)
    }

    /// Runs `f` as a task of its own, as `Handle::spawn_blocking`.
    #[track_caller]
    pub fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.spawn_blocking_with(future::Builder::new(), f)
    }

    /// [`spawn_blocking`](Self::spawn_blocking) with `builder`'s options.
    #[track_caller]
    pub(crate) fn spawn_blocking_with<F, R>(
        &self,
        builder: future::Builder<'_>,
        f: F,
    ) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        if let Some(kept) = &self.shared.outside {
            // Outside a model the blocking pool is the calling thread, as on one thread;
            // its context is a blocking thread's, where a `block_on` may start.
            let handle = self.clone();
            return builder.spawn_kept(kept, async move {
                let _entered = handle.enter();
                f()
            });
        }
        self.spawn_own(builder, async move { f() }, true)
            .expect("spawning a model task does not fail")
    }

    /// Runs `future` to completion on the calling model thread in this runtime's context;
    /// see [`Runtime::block_on`].
    ///
    /// # Panics
    /// Inside another `block_on` or a task a runtime drives (Tokio's message).
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        assert!(
            !runs_a_runtime(),
            "Cannot start a runtime from within a runtime. This happens because a function \
             (like `block_on`) attempted to block the current thread while the thread is being \
             used to drive asynchronous tasks."
        );
        let _entered = self.enter_as(Entry::BlockOn);
        let api = "interleave_test_tokio::runtime::Runtime::block_on";
        if self.shared.start_paused && !threads::timers::paused(api) {
            threads::timers::set_paused(api, true);
        }
        match &self.shared.outside {
            Some(kept) => kept.block_on(future, std::panic::Location::caller()),
            None => future::block_on(future),
        }
    }
}

/// Whether the calling thread's innermost runtime context is `handle`'s and a `block_on`
/// runs on it (so a local task can be spawned).
fn on_local_executor(handle: &Handle) -> bool {
    future::in_block_on() && current().is_some_and(|h| Arc::ptr_eq(&h.shared, &handle.shared))
}

/// The error of [`Handle::try_current`] outside a runtime.
#[derive(Debug)]
pub struct TryCurrentError(());

/// Tokio's words: "there is no reactor running, must be called from the context of a
/// Tokio 1.x runtime".
impl std::fmt::Display for TryCurrentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(
            "there is no reactor running, must be called from the context of a Tokio 1.x \
             runtime",
        )
    }
}

impl TryCurrentError {
    /// Whether no runtime's context was entered (always, here: the error has no other
    /// cause in the model).
    pub fn is_missing_context(&self) -> bool {
        true
    }

    /// Whether the thread-local context was already destroyed (never, here).
    pub fn is_thread_local_destroyed(&self) -> bool {
        false
    }
}

impl std::error::Error for TryCurrentError {}

/// A runtime, as `tokio::runtime::Runtime`; see the [module docs](self).
#[derive(Debug)]
pub struct Runtime {
    handle: Handle,
}

impl Runtime {
    /// A multi-thread runtime, as `Runtime::new`.
    pub fn new() -> std::io::Result<Runtime> {
        Builder::new_multi_thread().enable_all().build()
    }

    /// Its handle.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Runs `future` to completion on the calling model thread, in the runtime's context,
    /// as `Runtime::block_on`. On a current-thread runtime, the tasks spawned on it are
    /// polled on this thread too, while it runs.
    ///
    /// ```
    /// use interleave_test_tokio::{self as tokio, runtime};
    ///
    /// interleave_test::check(|| {
    ///     let rt = runtime::Builder::new_current_thread().enable_all().build().unwrap();
    ///     let two = rt.block_on(async { tokio::spawn(async { 1 + 1 }).await.unwrap() });
    ///     assert_eq!(two, 2);
    /// })
    /// .unwrap();
    /// ```
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.handle.block_on(future)
    }

    /// Spawns `future` on the runtime; see [`Handle::spawn`].
    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(future)
    }

    /// Runs `f` as a task of its own; see [`Handle::spawn_blocking`].
    #[track_caller]
    pub fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.handle.spawn_blocking(f)
    }

    /// Enters the runtime's context; see [`Handle::enter`].
    #[track_caller]
    pub fn enter(&self) -> EnterGuard<'_> {
        self.handle.enter()
    }

    /// The runtime's metrics; see [`Handle::metrics`].
    pub fn metrics(&self) -> RuntimeMetrics {
        self.handle.metrics()
    }

    /// Shuts the runtime down, as dropping it does; the timeout has no effect (tasks are
    /// aborted at once).
    pub fn shutdown_timeout(self, _timeout: Duration) {}

    /// Shuts the runtime down, as dropping it does.
    pub fn shutdown_background(self) {}
}

impl Drop for Runtime {
    /// Aborts the tasks spawned on it that still run, as Tokio's shutdown drops them.
    fn drop(&mut self) {
        if let Some(kept) = &self.handle.shared.outside {
            if threads::thread_ends() {
                return; // kept in a thread-local: its tasks are forgotten (`future::kept`)
            }
            // Its tasks are dropped in its context, as Tokio's shutdown drops them, also
            // while a panic unwinds (as `block_on`'s own tasks were, before it was kept).
            let _entered = self.handle.enter();
            kept.shut_down();
            if self.handle.shared.start_paused {
                // The thread's clock was paused for this runtime only.
                threads::timers::set_paused("interleave_test_tokio::runtime::Runtime::drop", false);
            }
            return;
        }
        // During a panic the execution fails anyway; a misuse here would abort the process.
        if !primitive::in_model() || std::thread::panicking() {
            return;
        }
        let tasks = std::mem::take(&mut *self.handle.shared.tasks.lock());
        for task in tasks {
            task.abort();
        }
    }
}

/// Builds a [`Runtime`], as `tokio::runtime::Builder`. Options that shape a real
/// runtime's threads and I/O are accepted and have no effect here.
#[derive(Debug)]
pub struct Builder {
    flavor: RuntimeFlavor,
    start_paused: bool,
    workers: Option<usize>,
}

impl Builder {
    /// A builder of a current-thread runtime.
    pub fn new_current_thread() -> Builder {
        Builder {
            flavor: RuntimeFlavor::CurrentThread,
            start_paused: false,
            workers: None,
        }
    }

    /// A builder of a multi-thread runtime.
    pub fn new_multi_thread() -> Builder {
        Builder {
            flavor: RuntimeFlavor::MultiThread,
            start_paused: false,
            workers: None,
        }
    }

    /// Enables time and I/O drivers (time is always enabled here; there is no I/O).
    pub fn enable_all(&mut self) -> &mut Builder {
        self
    }

    /// Enables the time driver (always enabled here).
    pub fn enable_time(&mut self) -> &mut Builder {
        self
    }

    /// Enables the I/O driver (there is no I/O here).
    pub fn enable_io(&mut self) -> &mut Builder {
        self
    }

    /// Starts with time paused, as `Builder::start_paused` (see `tokio::time::pause`):
    /// the first `block_on` pauses the execution's clock.
    pub fn start_paused(&mut self, paused: bool) -> &mut Builder {
        self.start_paused = paused;
        self
    }

    /// The number of worker threads of a multi-thread runtime: what its metrics tell
    /// (`num_workers`), and nothing else (see the [module docs](self)).
    ///
    /// # Panics
    /// If `n` is zero (Tokio's message).
    pub fn worker_threads(&mut self, n: usize) -> &mut Builder {
        assert!(n > 0, "Worker threads cannot be set to 0");
        self.workers = Some(n);
        self
    }

    /// The most blocking threads: accepted, no effect.
    ///
    /// # Panics
    /// If `n` is zero (Tokio's message).
    pub fn max_blocking_threads(&mut self, n: usize) -> &mut Builder {
        assert!(n > 0, "Max blocking threads cannot be set to 0");
        self
    }

    /// The name of the runtime's threads: accepted, no effect (name tasks with
    /// `interleave_test::future::Builder`).
    pub fn thread_name(&mut self, _name: impl Into<String>) -> &mut Builder {
        self
    }

    /// The stack size of the runtime's threads: accepted, no effect.
    pub fn thread_stack_size(&mut self, _bytes: usize) -> &mut Builder {
        self
    }

    /// How long an idle blocking thread lives: accepted, no effect.
    pub fn thread_keep_alive(&mut self, _duration: Duration) -> &mut Builder {
        self
    }

    /// A function that names the runtime's threads: accepted, no effect.
    pub fn thread_name_fn<F>(&mut self, _name: F) -> &mut Builder
    where
        F: Fn() -> String + Send + Sync + 'static,
    {
        self
    }

    /// A hook run when a worker thread starts: accepted, not run (the runtime has no
    /// threads of its own here: its tasks are model threads, or share the `block_on`'s).
    pub fn on_thread_start<F: Fn() + Send + Sync + 'static>(&mut self, _f: F) -> &mut Builder {
        self
    }

    /// A hook run when a worker thread stops: accepted, not run (see `on_thread_start`).
    pub fn on_thread_stop<F: Fn() + Send + Sync + 'static>(&mut self, _f: F) -> &mut Builder {
        self
    }

    /// A hook run before a worker thread parks: accepted, not run.
    pub fn on_thread_park<F: Fn() + Send + Sync + 'static>(&mut self, _f: F) -> &mut Builder {
        self
    }

    /// A hook run after a worker thread unparks: accepted, not run.
    pub fn on_thread_unpark<F: Fn() + Send + Sync + 'static>(&mut self, _f: F) -> &mut Builder {
        self
    }

    /// How often the scheduler looks at its global queue: accepted, no effect (the search
    /// chooses which task runs).
    pub fn global_queue_interval(&mut self, _ticks: u32) -> &mut Builder {
        self
    }

    /// How often the scheduler polls for I/O and timer events: accepted, no effect.
    pub fn event_interval(&mut self, _ticks: u32) -> &mut Builder {
        self
    }

    /// The I/O events handled per tick: accepted, no effect (there is no I/O here).
    pub fn max_io_events_per_tick(&mut self, _capacity: usize) -> &mut Builder {
        self
    }

    /// A [`LocalRuntime`] (`!Send` tasks without a `LocalSet`), as `build_local`.
    ///
    /// # Panics
    /// On a multi-thread builder (Tokio's message).
    pub fn build_local(&mut self, _options: LocalOptions) -> std::io::Result<LocalRuntime> {
        if self.flavor == RuntimeFlavor::MultiThread {
            panic!("multi_thread is not supported for LocalRuntime");
        }
        Ok(LocalRuntime::from_runtime(self.build()?))
    }

    /// The runtime.
    pub fn build(&mut self) -> std::io::Result<Runtime> {
        Ok(Runtime {
            handle: Handle {
                shared: Arc::new(Shared {
                    flavor: self.flavor,
                    start_paused: self.start_paused,
                    workers: match self.flavor {
                        RuntimeFlavor::CurrentThread => 1,
                        RuntimeFlavor::MultiThread => self.workers.unwrap_or(DEFAULT_WORKERS),
                    },
                    tasks: Mutex::new(Vec::new()),
                    alive: Mutex::new(Vec::new()),
                    outside: (!threads::in_model_thread()).then(future::KeptExecutor::new),
                }),
            },
        })
    }
}

/// What a runtime tells of itself, as `tokio::runtime::RuntimeMetrics` (its stable part:
/// `num_workers`, `num_alive_tasks`).
#[derive(Clone, Debug)]
pub struct RuntimeMetrics {
    shared: Arc<Shared>,
}

impl RuntimeMetrics {
    /// Its number of workers: 1 for a current-thread runtime; for a multi-thread one the
    /// value given to [`Builder::worker_threads`], else 2. Tokio's default is the
    /// machine's number of cores, which would make a model behave differently on each
    /// machine. (The model has no workers: a multi-thread runtime's tasks are preempted
    /// anywhere, whatever the number.)
    pub fn num_workers(&self) -> usize {
        self.shared.workers
    }

    /// How many tasks spawned on the runtime (`spawn`, not `spawn_blocking` nor a
    /// `LocalSet`'s, as in Tokio) have not finished: a switch point, which reads the end of
    /// each of them.
    #[track_caller]
    pub fn num_alive_tasks(&self) -> usize {
        let loc = std::panic::Location::caller();
        primitive::switch_point(interleave_test::thread::IS_FINISHED, None, loc);
        let mut alive = self.shared.alive.lock();
        alive.retain(|task| !task.ended_now());
        alive.len()
    }
}

/// The handle of the current runtime context, if any.
pub(super) fn try_handle() -> Option<Handle> {
    current()
}
