//! Spawned tasks and their handles.
//!
//! A task of [`spawn`] runs on a model thread of its own, whose body is the task's poll
//! loop ([`run`]); its handle is ready once that thread finished (a read of the thread's
//! end, so the joiner sees everything the task did), and the thread wakes the handle's last
//! waker when it finishes. A task of `spawn_local` runs on the executor of a `block_on`
//! (`local.rs`); its handle reads the owner thread's park key, which the executor writes
//! when the task ends.

use std::any::Any;
use std::future::Future;
use std::panic::Location;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Waker};

use parking_lot::Mutex;

use crate::primitive::{Effect, Loc, OpKind, Operation, Role, Tid};
use crate::threads::{held, wakes};
use crate::{primitive, threads};

/// Spawning a future as a task (a model thread): creates the next thread id, as a thread's
/// spawn does.
pub(crate) const SPAWN: OpKind = OpKind::new(
    &Operation::new("task spawn")
        .access(Role::Write)
        .effect(Effect::Spawn),
);
/// Aborting a task: its wake-up of the task is declared by `runtime/wakes.rs`.
const ABORT: OpKind = OpKind::new(&Operation::new("task abort"));

const API: &str = "interleave_test::future::JoinHandle";

/// How a task ended, as its handle sees it.
pub(super) enum Outcome<T> {
    /// Not ended (or stopped by the teardown of a failed execution).
    Running,
    /// Its future returned this, or panicked with this payload.
    Done(std::thread::Result<T>),
    /// It was aborted (or dropped unfinished) before it finished.
    Cancelled,
    /// The handle took the result.
    Taken,
}

/// What a task shares with its handles, whatever its value's type.
#[derive(Default)]
pub(super) struct Shared {
    /// A local task ended (a spawned task's end is its thread's).
    pub(super) ended: AtomicBool,
    /// A local task was asked to stop (a spawned task's request is in the runtime).
    pub(super) aborted: AtomicBool,
    /// A local task's handle was dropped (a spawned task's drop is in the runtime).
    pub(super) detached: AtomicBool,
    /// The waker of the last poll of the handle that found the task running.
    pub(super) joiner: Mutex<Option<Waker>>,
}

impl Shared {
    /// Wakes the handle's last waker, if any.
    pub(super) fn wake_joiner(&self) {
        let joiner = self.joiner.lock().take();
        if let Some(waker) = joiner {
            waker.wake();
        }
    }
}

impl wakes::Finish for Shared {
    fn finished(&self) {
        self.wake_joiner();
    }
}

/// Where a task runs, in execution `exec`.
#[derive(Clone, Debug)]
pub(super) enum Source {
    /// On a model thread of its own.
    Thread { exec: u64, tid: Tid },
    /// On the executor of a `block_on` of thread `owner`, its `local`-th local task (see
    /// [`Id`]); `waker` wakes it there, once an executor has it (a `LocalSet`'s task
    /// spawned before the set first runs has none yet).
    Local {
        exec: u64,
        owner: Tid,
        local: usize,
        waker: Arc<OnceLock<Waker>>,
    },
}

impl Source {
    fn task_id(&self) -> Id {
        match self {
            Source::Thread { tid, .. } => Id {
                thread: *tid,
                local: 0,
            },
            Source::Local { owner, local, .. } => Id {
                thread: *owner,
                local: *local,
            },
        }
    }

    fn exec(&self) -> u64 {
        match self {
            Source::Thread { exec, .. } | Source::Local { exec, .. } => *exec,
        }
    }

    /// Fails the execution (a misuse) unless the calling code runs in the handle's
    /// execution.
    #[track_caller]
    fn check(&self, api: &str) {
        threads::same_execution(api, self.exec(), "task");
    }
}

/// Spawns `future` as a task; see [`spawn`](super::spawn).
pub(super) fn spawn<F>(future: F, name: Option<String>, loc: Loc) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    primitive::switch_point(SPAWN, None, loc);
    let outcome = Arc::new(Mutex::new(Outcome::Running));
    let mine = Arc::clone(&outcome);
    let body = Box::new(move || {
        let end = match threads::run_thread_body(move || run(future, loc)) {
            Some(Ok(Some(value))) => Outcome::Done(Ok(value)),
            Some(Ok(None)) => Outcome::Cancelled,
            Some(Err(payload)) => Outcome::Done(Err(payload)),
            None => Outcome::Running,
        };
        *mine.lock() = end;
    });
    let spec = threads::ThreadSpec {
        name,
        stack: None,
        loc,
        scoped: false,
    };
    let tid = threads::spawn(&spec, body);
    let shared = Arc::new(Shared::default());
    let exec = wakes::mark_spawned("interleave_test::future::spawn", tid, shared.clone());
    JoinHandle::new(Source::Thread { exec, tid }, shared, outcome)
}

/// The task's poll loop: polls `future` until it is ready (its value) or the task is
/// aborted (`None`, the future dropped here, inside the model).
fn run<F: Future>(future: F, loc: Loc) -> Option<F::Output> {
    let api = "interleave_test::future::spawn";
    let mut future = pin!(future);
    loop {
        let waker = wakes::before_poll(api, super::notes::poll_begins)?;
        let budget = super::budget::task_poll();
        let polled = future.as_mut().poll(&mut Context::from_waker(&waker));
        drop(budget);
        if let Poll::Ready(value) = polled {
            return Some(value);
        }
        drop(waker);
        wakes::wait(loc, true, super::notes::task_waits_at);
    }
}

/// An owned permission to wait for a task's end, as `tokio::task::JoinHandle`: a future of
/// the task's value, or of a [`JoinError`] when it was aborted or panicked. Dropping it
/// detaches the task, which still runs to its end. Not `#[must_use]`, as Tokio's is not:
/// `tokio::spawn(..);` as a statement is the common way to detach a task.
pub struct JoinHandle<T> {
    source: Source,
    shared: Arc<Shared>,
    outcome: Arc<Mutex<Outcome<T>>>,
}

impl<T> std::fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JoinHandle")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl<T> JoinHandle<T> {
    pub(super) fn new(
        source: Source,
        shared: Arc<Shared>,
        outcome: Arc<Mutex<Outcome<T>>>,
    ) -> Self {
        JoinHandle {
            source,
            shared,
            outcome,
        }
    }

    /// Asks the task to stop, as Tokio's `abort`: a switch point, so the task may still
    /// finish first. An aborted task stops at its next wait between polls: its future is
    /// dropped there, inside the model (a guard it holds is released), and this handle
    /// yields a cancelled [`JoinError`]. Aborting a finished task does nothing.
    #[track_caller]
    pub fn abort(&self) {
        self.abort_handle().abort();
    }

    /// Whether the task has finished. A switch point.
    #[track_caller]
    pub fn is_finished(&self) -> bool {
        self.abort_handle().is_finished()
    }

    /// The task's id, as `tokio::task::JoinHandle::id`.
    pub fn id(&self) -> Id {
        self.source.task_id()
    }

    /// A handle that can abort the task without owning its result.
    pub fn abort_handle(&self) -> AbortHandle {
        AbortHandle {
            source: self.source.clone(),
            shared: Arc::clone(&self.shared),
        }
    }
}

/// The folder of this crate's sources, as `Location::file` names its files.
fn crate_src() -> &'static str {
    let me = file!();
    &me[..me.len() - "future/task.rs".len()]
}

/// Whether the task of `source` ended; reads what orders the end before the reader.
/// `awaited`: the program awaits the handle there, which reports give as where the
/// awaiting future waits if the task has not ended.
#[track_caller]
fn ended(source: &Source, shared: &Shared, awaited: Option<Loc>) -> bool {
    source.check(API);
    // A poll from this crate (an executor, a `JoinSet`) is not where the program waits.
    let awaited = awaited.filter(|loc| !loc.file().starts_with(crate_src()));
    match source {
        Source::Thread { tid, .. } => primitive::with_state(API, |a| {
            let ended = a.is_finished(*tid);
            if let Some(loc) = awaited.filter(|_| !ended) {
                super::notes::awaits(a, loc);
            }
            ended
        }),
        Source::Local { owner, .. } => {
            wakes::observe(API, *owner);
            let ended = shared.ended.load(Ordering::Acquire);
            if let Some(loc) = awaited.filter(|_| !ended) {
                primitive::with_state(API, |a| super::notes::awaits(a, loc));
            }
            ended
        }
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    /// Polled where the program awaits it (`#[track_caller]` sees the `.await`), which
    /// reports give as where the awaiting future waits. Spends a unit of the task's
    /// cooperative budget, as Tokio's: with none left it yields (`Pending`, its task woken)
    /// without looking at the task; a unit is given back if the task has not ended.
    #[track_caller]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let awaited = Location::caller();
        // Here, so that a misuse is reported where the program awaits the handle.
        self.source.check(API);
        super::budget::charged(cx, |cx| self.get_mut().poll_end(cx, Some(awaited)))
    }
}

impl<T> JoinHandle<T> {
    /// For a runtime layered over this crate that collects its tasks' ends (a `JoinSet`):
    /// the task's result if it ended, else `Pending` with `cx`'s waker kept for its end,
    /// as a poll of the handle, but not where the program waits (reports do not place the
    /// polling future's wait here), and spending no cooperative budget.
    #[track_caller]
    pub fn poll_unawaited(&mut self, cx: &mut Context<'_>) -> Poll<Result<T, JoinError>> {
        self.source.check(API);
        self.poll_end(cx, None)
    }

    /// The task's result if it ended, else `Pending` with `cx`'s waker kept for its end.
    fn poll_end(
        &mut self,
        cx: &mut Context<'_>,
        awaited: Option<Loc>,
    ) -> Poll<Result<T, JoinError>> {
        let shared = &self.shared;
        if !ended(&self.source, shared, awaited) {
            *shared.joiner.lock() = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let id = self.source.task_id();
        let outcome = std::mem::replace(&mut *self.outcome.lock(), Outcome::Taken);
        Poll::Ready(match outcome {
            Outcome::Done(Ok(value)) => Ok(value),
            Outcome::Done(Err(payload)) => Err(JoinError::panic(id, payload, self.source.exec())),
            Outcome::Cancelled | Outcome::Running => Err(JoinError::cancelled(id)),
            Outcome::Taken => panic!("a JoinHandle was polled after it returned Ready"),
        })
    }
}

impl<T> Drop for JoinHandle<T> {
    /// Detaches the task; a panic of the task kept for this handle, which it did not
    /// return, fails the execution (`runtime/held.rs`).
    fn drop(&mut self) {
        match self.source {
            Source::Thread { exec, tid } => wakes::detach(exec, tid),
            Source::Local { .. } => self.shared.detached.store(true, Ordering::Release),
        }
        if !matches!(*self.outcome.lock(), Outcome::Taken) {
            let id = self.source.task_id();
            held::dropped(self.source.exec(), id.thread, id.local);
        }
    }
}

/// Aborts a task without owning its result, as `tokio::task::AbortHandle`.
#[derive(Clone)]
pub struct AbortHandle {
    source: Source,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for AbortHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AbortHandle")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl AbortHandle {
    /// Asks the task to stop; see [`JoinHandle::abort`].
    #[track_caller]
    pub fn abort(&self) {
        primitive::switch_point(ABORT, None, Location::caller());
        let api = "interleave_test::future::AbortHandle::abort";
        self.source.check(api);
        let shared = &self.shared;
        match &self.source {
            Source::Thread { tid, .. } => wakes::abort(api, *tid),
            Source::Local { owner, waker, .. } => {
                // Declared whether the task ended or not (see `runtime/wakes.rs`, `wake`).
                wakes::publish(api, *owner);
                if !shared.ended.load(Ordering::Acquire) {
                    shared.aborted.store(true, Ordering::Release);
                    // Unbound, it sees the request at its first poll.
                    if let Some(waker) = waker.get() {
                        waker.wake_by_ref();
                    }
                }
            }
        }
    }

    /// The task's id.
    pub fn id(&self) -> Id {
        self.source.task_id()
    }

    /// Whether the task has finished. A switch point.
    #[track_caller]
    pub fn is_finished(&self) -> bool {
        primitive::switch_point(crate::thread::IS_FINISHED, None, Location::caller());
        ended(&self.source, &self.shared, None)
    }

    /// Whether the task has finished, read in the caller's step with no switch point of
    /// its own: for reads of many tasks' ends at once, after one switch point of the
    /// caller's (a runtime's count of live tasks passes `thread::IS_FINISHED`'s).
    #[track_caller]
    pub fn ended_now(&self) -> bool {
        ended(&self.source, &self.shared, None)
    }
}

/// A task's identity, as `tokio::task::Id`: unique among the tasks of an execution, and
/// the same in every execution that spawns the same tasks in the same order. It prints as
/// the number of the task's model thread (`#n` in reports), followed by `.k` for the
/// `k`-th local task that thread spawned (counted over all its `block_on`s); its `Debug`
/// wraps that in `Id(..)`, as Tokio's does its number.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id {
    thread: Tid,
    local: usize,
}

/// As Tokio's: `Id(3)` (here also `Id(0.2)` for a local task).
impl std::fmt::Debug for Id {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Id({self})")
    }
}

impl std::fmt::Display for Id {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.local {
            0 => write!(f, "{}", self.thread),
            k => write!(f, "{}.{k}", self.thread),
        }
    }
}

/// The id of the task that runs the calling code: a spawned task, or a local task of a
/// `block_on`; `None` in a `block_on`'s own future or a plain thread.
#[track_caller]
pub fn current_id() -> Option<Id> {
    if let Some((thread, local)) = super::local::current_task() {
        return Some(Id { thread, local });
    }
    let api = "interleave_test_tokio::task::id";
    let (_, me) = threads::ids(api);
    primitive::data::is_task(api).then_some(Id {
        thread: me,
        local: 0,
    })
}

/// Why a task has no value, as `tokio::task::JoinError`: it was aborted, or it panicked.
/// `Send` and `Sync`, as Tokio's, so `?` turns it into `Box<dyn Error + Send + Sync>` or
/// `std::io::Error`.
///
/// Inside a model where task panics fail the execution (the default), the error of a
/// panic carries it until the program looks at it: [`is_panic`](Self::is_panic),
/// [`is_cancelled`](Self::is_cancelled), [`into_panic`](Self::into_panic) or
/// [`try_into_panic`](Self::try_into_panic) take the panic as expected; an error dropped
/// unread (`let _ = handle.await;`, or an `unwrap` of the result) makes the task's panic
/// the execution's failure, reported where the task panicked.
pub struct JoinError {
    id: Id,
    /// The panic's payload, in a lock only to make the error `Sync` (taken, never shared).
    panic: Option<std::sync::Mutex<Box<dyn Any + Send>>>,
    /// The execution whose panic of this task this error carries, unread; [`UNREAD_NONE`]
    /// once read, or for a cancellation.
    unread: AtomicU64,
}

/// [`JoinError::unread`] when the error carries no panic for an execution.
const UNREAD_NONE: u64 = u64::MAX;

impl JoinError {
    fn cancelled(id: Id) -> Self {
        JoinError {
            id,
            panic: None,
            unread: AtomicU64::new(UNREAD_NONE),
        }
    }

    /// The panic of task `id` with `payload`, in execution `exec`.
    fn panic(id: Id, payload: Box<dyn Any + Send>, exec: u64) -> Self {
        JoinError {
            id,
            panic: Some(std::sync::Mutex::new(payload)),
            unread: AtomicU64::new(exec),
        }
    }

    /// The program looked at what the error is: the task's panic, if kept for it, is
    /// received (`runtime/held.rs`).
    fn read(&self) {
        let exec = self.unread.swap(UNREAD_NONE, Ordering::Relaxed);
        if exec != UNREAD_NONE {
            held::received(exec, self.id.thread, self.id.local);
        }
    }

    /// Whether the task was aborted before it finished.
    pub fn is_cancelled(&self) -> bool {
        self.read();
        self.panic.is_none()
    }

    /// Whether the task panicked.
    pub fn is_panic(&self) -> bool {
        self.read();
        self.panic.is_some()
    }

    /// The id of the task.
    pub fn id(&self) -> Id {
        self.id
    }

    /// The payload the task panicked with.
    ///
    /// # Panics
    /// When the task was cancelled, not panicked (see [`try_into_panic`](Self::try_into_panic)).
    pub fn into_panic(self) -> Box<dyn Any + Send> {
        self.try_into_panic()
            .expect("JoinError::into_panic on a task that was cancelled, not panicked")
    }

    /// The payload the task panicked with, or the error itself when it was cancelled.
    pub fn try_into_panic(mut self) -> Result<Box<dyn Any + Send>, JoinError> {
        self.read();
        match self.panic.take() {
            Some(payload) => Ok(payload
                .into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner)),
            None => Err(self),
        }
    }

    /// The panic's message, if its payload is a string.
    fn message(&self) -> Option<String> {
        let payload = self.panic.as_ref()?.lock();
        let payload = payload.unwrap_or_else(std::sync::PoisonError::into_inner);
        threads::text_of(&**payload)
    }
}

/// As Tokio's: `JoinError::Cancelled(Id(3))`, `JoinError::Panic(Id(3), "boom", ...)`, or
/// `JoinError::Panic(Id(3), ...)` when the payload is not a string.
impl std::fmt::Debug for JoinError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.panic, self.message()) {
            (None, _) => write!(f, "JoinError::Cancelled({:?})", self.id),
            (Some(_), None) => write!(f, "JoinError::Panic({:?}, ...)", self.id),
            (Some(_), Some(message)) => {
                write!(f, "JoinError::Panic({:?}, {message:?}, ...)", self.id)
            }
        }
    }
}

/// As Tokio's: `task 3 was cancelled`, `task 3 panicked with message "boom"`.
impl std::fmt::Display for JoinError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.panic, self.message()) {
            (None, _) => write!(f, "task {} was cancelled", self.id),
            (Some(_), None) => write!(f, "task {} panicked", self.id),
            (Some(_), Some(message)) => {
                write!(f, "task {} panicked with message {message:?}", self.id)
            }
        }
    }
}

impl std::error::Error for JoinError {}

/// A panic this error carries unread fails the execution (see [`JoinError`]).
impl Drop for JoinError {
    fn drop(&mut self) {
        let exec = self.unread.swap(UNREAD_NONE, Ordering::Relaxed);
        if exec != UNREAD_NONE {
            held::dropped(exec, self.id.thread, self.id.local);
        }
    }
}

/// As Tokio's: an `io::Error` of kind `Other` that says `task was cancelled` or
/// `task panicked`.
impl From<JoinError> for std::io::Error {
    fn from(error: JoinError) -> Self {
        std::io::Error::other(match error.panic {
            None => "task was cancelled",
            Some(_) => "task panicked",
        })
    }
}
