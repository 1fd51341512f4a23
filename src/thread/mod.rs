//! Model threads, with the names and signatures of [`std::thread`].
//!
//! # Differences from std
//! - Outside a model (an OS thread that runs no model thread, as a plain `#[test]`) the OS
//!   thread is thread #0 of a one-thread execution of its own: [`current`], [`park`]
//!   after an [`unpark`](Thread::unpark), [`sleep`] and [`yield_now`] work as on one thread,
//!   a [`park`] that only another thread could end panics as a deadlock, and [`spawn`] (a
//!   scoped one too) panics, saying to gate the code with `#[cfg(not(interleave))]`.
//! - [`ThreadId`]s are the thread's index in its execution (0 runs the model closure, spawned
//!   threads count up from 1), so they are the same in every execution and in reports.
//! - [`sleep`] and [`park_timeout`] use the virtual clock of [`crate::time`]: they return
//!   when no other thread can make progress, or earlier while others could still act (a
//!   decision), at once in real time; [`yield_now`] moves the clock on a little.
//! - [`park`] and [`park_timeout`] may return spuriously, as std allows (a decision; see
//!   [`Builder::spurious_wakeups`](crate::Builder::spurious_wakeups)).
//! - [`scope`](fn@scope) passes its [`Scope`] by value (it is `Copy`), not by reference.
//! - [`panicking`] is per model thread; under coroutines std's own
//!   [`std::thread::panicking`] is shared by the model threads of an execution.
//! - Under the coroutine substrate (the default; see [`crate::Substrate`]) every model
//!   thread of an execution runs on one OS thread, so std's own `thread_local!` values are
//!   shared by them (and kept from one execution to the next). Use this crate's
//!   [`thread_local!`](crate::thread_local), which gives each model thread its own value in
//!   every execution on both substrates. Under the OS-thread substrate each model thread has
//!   an OS thread of its own, whose std thread-locals are destroyed when it exits.
//! - Scoped threads run on OS threads of their own under both substrates.

mod local;
mod scope;

use std::panic::Location;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use crate::primitive::{Blocked, Effect, OpKind, Operation, Role, Tid, Waits};
use crate::{primitive, threads};

/// `spawn` (also of a scoped thread): creates the next thread id.
pub(crate) const SPAWN: OpKind = OpKind::new(
    &Operation::new("thread spawn")
        .access(Role::Write)
        .effect(Effect::Spawn),
);
/// A join of a thread (`JoinHandle::join`, and a scope's end for each of its threads): it
/// waits for the thread's end and reads it.
static JOIN: Operation = Operation::new("thread join")
    .access(Role::Acquire)
    .effect(Effect::Join)
    .waits("join")
    .observes_only();
/// `is_finished` (of a thread's or a task's handle): a layer over this crate reads whether
/// its tasks ended as this operation (a runtime's count of live tasks).
pub const IS_FINISHED: OpKind = OpKind::new(&Operation::new("thread is_finished").observes_only());
/// `yield_now` (and a `block_on` that gives way between polls).
pub(crate) const YIELD: OpKind = OpKind::new(
    &Operation::new("thread yield")
        .effect(Effect::Yield)
        .observes_only(),
);
/// `park`: consumes the thread's token.
const PARK: OpKind = OpKind::new(
    &Operation::new("thread park")
        .access(Role::Write)
        .effect(Effect::Park),
);
/// `unpark`: its wake-up is declared where it gives the token (`events::waking`).
const UNPARK: OpKind = OpKind::new(&Operation::new("thread unpark"));
/// `sleep`: its end is ordered by the clock.
const SLEEP: OpKind = OpKind::new(&Operation::new("thread sleep"));
/// `scope`'s start.
const SCOPE: OpKind = OpKind::new(&Operation::new("thread scope"));

pub use local::{AccessError, LocalKey};
pub use scope::{Scope, ScopedJoinHandle, scope};

/// A model thread's identifier: its index in the execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ThreadId(u64);

impl ThreadId {
    /// The index (0 for the thread that runs the model closure).
    pub fn as_u64(&self) -> u64 {
        self.0
    }
}

/// A handle to a model thread.
#[derive(Clone, Debug)]
pub struct Thread {
    /// Its execution.
    exec: u64,
    tid: Tid,
    name: Option<Arc<str>>,
}

impl Thread {
    /// Thread `tid` of the calling code's execution.
    #[track_caller]
    fn new(tid: Tid, name: Option<&str>) -> Self {
        Thread {
            exec: threads::ids("interleave_test::thread").0,
            tid,
            name: name.map(Arc::from),
        }
    }

    /// Fails the execution (a misuse) unless the calling code runs in the thread's
    /// execution.
    #[track_caller]
    fn check(&self, api: &str) {
        threads::same_execution(api, self.exec, "thread");
    }

    /// The thread's id.
    pub fn id(&self) -> ThreadId {
        ThreadId(self.tid as u64)
    }

    /// The thread's name: `Some("main")` for the thread running the model closure, the
    /// name given to [`Builder::name`] for a spawned one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Gives the thread its park token, waking it if it is parked.
    #[track_caller]
    pub fn unpark(&self) {
        let loc = Location::caller();
        primitive::switch_point(UNPARK, None, loc);
        self.check("interleave_test::thread::Thread::unpark");
        primitive::with_state("interleave_test::thread::Thread::unpark", |a| {
            *a.park_token(self.tid) = true;
            if a.blocked_on(self.tid) == Some(Waits::Park) {
                a.wake(self.tid);
            }
        });
    }
}

/// Thread factory, as [`std::thread::Builder`].
#[derive(Debug, Default)]
#[must_use = "a Builder does nothing until `spawn` is called"]
pub struct Builder {
    name: Option<String>,
    stack_size: Option<usize>,
}

impl Builder {
    /// A builder with no name and the default stack size.
    pub fn new() -> Self {
        Builder::default()
    }

    /// Names the thread (shown in reports and by [`Thread::name`]).
    pub fn name(mut self, name: String) -> Self {
        self.name = Some(name);
        self
    }

    /// Asks for at least `size` bytes of stack (the default is the exploration's
    /// [`stack_size`](crate::Builder::stack_size), 2 MiB unless set). A thread that runs
    /// past its stack fails the execution with
    /// [`FailureKind::StackOverflow`](crate::FailureKind::StackOverflow) under coroutines; on
    /// the OS-thread substrate std aborts the process, naming the model thread.
    pub fn stack_size(mut self, size: usize) -> Self {
        self.stack_size = Some(size);
        self
    }

    /// Spawns a model thread running `f`. Never fails (the `Result` is std's shape);
    /// outside a model it panics, as [`spawn`] does.
    #[track_caller]
    pub fn spawn<F, T>(self, f: F) -> std::io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let loc = Location::caller();
        primitive::switch_point(SPAWN, None, loc);
        let result: Arc<Mutex<Option<std::thread::Result<T>>>> = Arc::new(Mutex::new(None));
        let slot = Arc::clone(&result);
        let body = Box::new(move || {
            if let Some(r) = threads::run_thread_body(f) {
                *slot.lock() = Some(r);
            }
        });
        let name = self.name.clone();
        let spec = threads::ThreadSpec {
            name: self.name,
            stack: self.stack_size,
            loc,
            scoped: false,
        };
        let tid = threads::spawn(&spec, body);
        Ok(JoinHandle {
            thread: Thread::new(tid, name.as_deref()),
            result,
        })
    }

    /// Spawns a scoped model thread; see [`Scope::spawn`].
    #[track_caller]
    pub fn spawn_scoped<'scope, 'env, F, T>(
        self,
        scope: Scope<'scope, 'env>,
        f: F,
    ) -> std::io::Result<ScopedJoinHandle<'scope, T>>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        Ok(scope.spawn_named(self.name, self.stack_size, f, Location::caller()))
    }
}

/// Owned permission to join a model thread, as [`std::thread::JoinHandle`].
#[derive(Debug)]
pub struct JoinHandle<T> {
    thread: Thread,
    result: Arc<Mutex<Option<std::thread::Result<T>>>>,
}

impl<T> JoinHandle<T> {
    /// Waits for the thread to finish and returns its result, or the payload it panicked
    /// with (only when `Builder::thread_panics_fail` is off; by default that panic fails
    /// the execution). While a failed execution tears down, a thread that was stopped
    /// returns a `String` payload naming it.
    #[track_caller]
    pub fn join(self) -> std::thread::Result<T> {
        self.thread
            .check("interleave_test::thread::JoinHandle::join");
        join_thread(self.thread.tid, Location::caller());
        let r = self.result.lock().take();
        r.unwrap_or_else(|| Err(torn_down(&self.thread)))
    }

    /// Whether the thread has finished. Not a switch point of its own beyond the read.
    #[track_caller]
    pub fn is_finished(&self) -> bool {
        primitive::switch_point(IS_FINISHED, None, Location::caller());
        self.thread
            .check("interleave_test::thread::JoinHandle::is_finished");
        primitive::with_state("interleave_test::thread::JoinHandle::is_finished", |a| {
            a.is_finished(self.thread.tid)
        })
    }

    /// The thread's handle.
    pub fn thread(&self) -> &Thread {
        &self.thread
    }
}

/// The payload `join` returns for a thread that teardown stopped after the execution
/// failed (it has no result): a `String` naming the thread.
fn torn_down(thread: &Thread) -> Box<dyn std::any::Any + Send> {
    let name = thread.name().map(|n| format!(" {n:?}")).unwrap_or_default();
    Box::new(format!(
        "thread{name} (#{}) was stopped because the execution failed",
        thread.tid
    ))
}

/// Blocks until thread `tid` has finished.
fn join_thread(tid: Tid, loc: primitive::Loc) {
    primitive::switch_point(OpKind::join(&JOIN, tid), None, loc);
    while !primitive::with_state("interleave_test::thread::JoinHandle::join", |a| {
        a.is_finished(tid)
    }) {
        primitive::block(Blocked {
            what: Waits::Join,
            obj: None,
            thread: Some(tid),
            deadline: None,
            loc,
        });
    }
}

/// Spawns a model thread running `f`, as [`std::thread::spawn`].
///
/// # Panics
/// Outside a model, where no second thread can run: the message says to gate the code
/// with `#[cfg(not(interleave))]`.
#[track_caller]
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    Builder::new()
        .spawn(f)
        .expect("spawning a model thread does not fail")
}

/// The calling model thread.
#[track_caller]
pub fn current() -> Thread {
    let (tid, name) = primitive::with_state("interleave_test::thread::current", |a| {
        (a.me(), a.thread_name(a.me()).map(Arc::<str>::from))
    });
    Thread {
        exec: threads::ids("interleave_test::thread::current").0,
        tid,
        name,
    }
}

/// A switch point that lets another thread run, as [`std::thread::yield_now`].
#[track_caller]
pub fn yield_now() {
    let loc = Location::caller();
    primitive::yield_explicitly("interleave_test::thread::yield_now", loc);
    primitive::switch_point(YIELD, None, loc);
}

/// Whether the calling model thread is unwinding, as [`std::thread::panicking`]; outside a
/// model, std's answer. Under coroutines this is the function to use: std's is shared by
/// the model threads of an execution.
pub fn panicking() -> bool {
    if primitive::in_model() {
        threads::thread_panicking()
    } else {
        std::thread::panicking()
    }
}

/// Blocks until the thread's park token is available, as [`std::thread::park`].
#[track_caller]
pub fn park() {
    park_until(None, Location::caller());
}

/// Like [`park`], but gives up after `dur` of virtual time.
#[track_caller]
pub fn park_timeout(dur: Duration) {
    park_until(Some(dur), Location::caller());
}

fn park_until(dur: Option<Duration>, loc: primitive::Loc) {
    primitive::switch_point(PARK, None, loc);
    let api = "interleave_test::thread::park";
    let (has_token, deadline) = primitive::with_state(api, |a| {
        let me = a.me();
        let had = std::mem::replace(a.park_token(me), false);
        (had, dur.map(|d| a.now().saturating_add(d)))
    });
    if has_token || primitive::early(api, deadline, true) != primitive::Early::No {
        return;
    }
    primitive::block(Blocked {
        what: Waits::Park,
        obj: None,
        thread: None,
        deadline,
        loc,
    });
    primitive::with_state(api, |a| {
        let me = a.me();
        *a.park_token(me) = false;
    });
}

/// Blocks for `dur` of virtual time, as [`std::thread::sleep`]. The clock advances to the
/// end of the sleep once no other thread can make progress, so tests never wait in real
/// time.
#[track_caller]
pub fn sleep(dur: Duration) {
    let loc = Location::caller();
    // A sleep lets other threads run, as a yield does: the events around it may share
    // state the model does not see (`hb/unseen.rs`).
    primitive::with_state("interleave_test::thread::sleep", |a| a.exposes_unseen(loc));
    primitive::switch_point(SLEEP, None, loc);
    if dur.is_zero() {
        return;
    }
    let api = "interleave_test::thread::sleep";
    let deadline = primitive::with_state(api, |a| a.now().saturating_add(dur));
    if primitive::early(api, Some(deadline), false) == primitive::Early::TimedOut {
        return;
    }
    primitive::block(Blocked {
        what: Waits::Sleep,
        obj: None,
        thread: None,
        deadline: Some(deadline),
        loc,
    });
}
