//! Spawned tasks and their handles.
//!
//! A task runs on a model thread of its own, whose body is the task's poll loop
//! ([`run`]). The thread's result goes to the task's [`Slot`]; its `JoinHandle` is ready
//! once the thread finished (a read of the thread's end, so the joiner sees everything the
//! task did), and the thread wakes the handle's last waker when it finishes.

use std::any::Any;
use std::future::Future;
use std::panic::Location;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use parking_lot::Mutex;

use crate::op::Tid;
use crate::runtime::{self, Loc, OpKind, tasks};

const API: &str = "interleave_test::future::JoinHandle";

/// How a task ended, as its handle sees it.
enum Outcome<T> {
    /// Not ended (or stopped by the teardown of a failed execution).
    Running,
    /// Its future returned this, or panicked with this payload.
    Done(std::thread::Result<T>),
    /// It was aborted before it finished.
    Cancelled,
    /// The handle took the result.
    Taken,
}

/// What a task shares with its handle.
struct Slot<T> {
    outcome: Mutex<Outcome<T>>,
    /// The waker of the last poll of the handle that found the task running.
    joiner: Mutex<Option<Waker>>,
}

/// Spawns `future` as a task; see [`spawn`](super::spawn).
pub(super) fn spawn<F>(future: F, loc: Loc) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    runtime::switch_point(OpKind::TaskSpawn, None, loc);
    let slot = Arc::new(Slot {
        outcome: Mutex::new(Outcome::Running),
        joiner: Mutex::new(None),
    });
    let mine = Arc::clone(&slot);
    let body = Box::new(move || {
        let outcome = match runtime::run_thread_body(move || run(future, loc)) {
            Some(Ok(Some(value))) => Outcome::Done(Ok(value)),
            Some(Ok(None)) => Outcome::Cancelled,
            Some(Err(payload)) => Outcome::Done(Err(payload)),
            None => Outcome::Running,
        };
        *mine.outcome.lock() = outcome;
    });
    let spec = runtime::ThreadSpec {
        name: None,
        stack: None,
        loc,
        scoped: false,
    };
    let tid = runtime::spawn(&spec, body);
    let waker_slot = Arc::clone(&slot);
    let wake_joiner = Box::new(move || {
        let joiner = waker_slot.joiner.lock().take();
        if let Some(waker) = joiner {
            waker.wake();
        }
    });
    tasks::mark_spawned("interleave_test::future::spawn", tid, wake_joiner);
    JoinHandle {
        tid,
        slot,
        detached: false,
    }
}

/// The task's poll loop: polls `future` until it is ready (its value) or the task is
/// aborted (`None`, the future dropped here, inside the model).
fn run<F: Future>(future: F, loc: Loc) -> Option<F::Output> {
    let api = "interleave_test::future::spawn";
    let mut future = pin!(future);
    loop {
        if tasks::aborted(api) {
            return None;
        }
        let waker = tasks::waker(api);
        if let Poll::Ready(value) = future.as_mut().poll(&mut Context::from_waker(&waker)) {
            return Some(value);
        }
        drop(waker);
        tasks::wait(loc);
    }
}

/// An owned permission to wait for a task's end, as `tokio::task::JoinHandle`: a future of
/// the task's value, or of a [`JoinError`] when it was aborted or panicked. Dropping it
/// detaches the task, which still runs to its end.
#[must_use = "dropping a JoinHandle detaches the task"]
pub struct JoinHandle<T> {
    tid: Tid,
    slot: Arc<Slot<T>>,
    detached: bool,
}

impl<T> std::fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JoinHandle")
            .field("task", &self.tid)
            .finish()
    }
}

impl<T> JoinHandle<T> {
    /// Asks the task to stop, as Tokio's `abort`: a switch point, so the task may still
    /// finish first. An aborted task stops at its next wait between polls: its future is
    /// dropped there, inside the model (a guard it holds is released), and this handle
    /// yields a cancelled [`JoinError`]. Aborting a finished task does nothing.
    #[track_caller]
    pub fn abort(&self) {
        self.abort_handle().abort();
    }

    /// Whether the task has finished (its thread ended). A switch point.
    #[track_caller]
    pub fn is_finished(&self) -> bool {
        self.abort_handle().is_finished()
    }

    /// A handle that can abort the task without owning its result.
    pub fn abort_handle(&self) -> AbortHandle {
        AbortHandle { tid: self.tid }
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let tid = self.tid;
        let finished = runtime::with_state(API, |a| a.is_finished(tid));
        if !finished {
            *self.slot.joiner.lock() = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let outcome = std::mem::replace(&mut *self.slot.outcome.lock(), Outcome::Taken);
        Poll::Ready(match outcome {
            Outcome::Done(Ok(value)) => Ok(value),
            Outcome::Done(Err(payload)) => Err(JoinError::panic(tid, payload)),
            Outcome::Cancelled | Outcome::Running => Err(JoinError::cancelled(tid)),
            Outcome::Taken => panic!("a JoinHandle was polled after it returned Ready"),
        })
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        if !self.detached {
            self.detached = true;
            tasks::detach(self.tid);
        }
    }
}

/// Aborts a task without owning its result, as `tokio::task::AbortHandle`.
#[derive(Clone, Debug)]
pub struct AbortHandle {
    tid: Tid,
}

impl AbortHandle {
    /// Asks the task to stop; see [`JoinHandle::abort`].
    #[track_caller]
    pub fn abort(&self) {
        runtime::switch_point(OpKind::TaskAbort, None, Location::caller());
        tasks::abort("interleave_test::future::AbortHandle::abort", self.tid);
    }

    /// Whether the task has finished. A switch point.
    #[track_caller]
    pub fn is_finished(&self) -> bool {
        runtime::switch_point(OpKind::ThreadIsFinished, None, Location::caller());
        runtime::with_state(API, |a| a.is_finished(self.tid))
    }
}

/// Why a task has no value, as `tokio::task::JoinError`: it was aborted, or it panicked.
pub struct JoinError {
    tid: Tid,
    panic: Option<Box<dyn Any + Send>>,
}

impl JoinError {
    fn cancelled(tid: Tid) -> Self {
        JoinError { tid, panic: None }
    }

    fn panic(tid: Tid, payload: Box<dyn Any + Send>) -> Self {
        JoinError {
            tid,
            panic: Some(payload),
        }
    }

    /// Whether the task was aborted before it finished.
    pub fn is_cancelled(&self) -> bool {
        self.panic.is_none()
    }

    /// Whether the task panicked.
    pub fn is_panic(&self) -> bool {
        self.panic.is_some()
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
    pub fn try_into_panic(self) -> Result<Box<dyn Any + Send>, JoinError> {
        match self.panic {
            Some(payload) => Ok(payload),
            None => Err(self),
        }
    }
}

impl std::fmt::Debug for JoinError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.panic {
            None => write!(f, "JoinError::Cancelled(task #{})", self.tid),
            Some(_) => write!(f, "JoinError::Panic(task #{}, ...)", self.tid),
        }
    }
}

impl std::fmt::Display for JoinError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.panic {
            None => write!(f, "task #{} was cancelled", self.tid),
            Some(_) => write!(f, "task #{} panicked", self.tid),
        }
    }
}

impl std::error::Error for JoinError {}
