//! The substrates: what runs model threads, and how control passes from one to the next.
//!
//! Two implementations behind one interface, each in its own file:
//! - `coro.rs`: stackful coroutines, all on the execution's driver thread; a hand-off is a
//!   user-space stack switch through the driver.
//! - `os.rs`: one OS thread per model thread, serialized by the [`Baton`] (`baton.rs`) and
//!   pinned to the driver's core (`affinity.rs`).
//!
//! The rest of the runtime sees only [`hand_off`] (the running thread stops and names who
//! runs next), [`spawn`] and [`drive`] (the driver's loop). Whatever the substrate, the
//! driver is where control goes when the next thread is a coroutine or nobody: it resumes
//! coroutines itself and passes the baton to OS threads. Scoped threads borrow from their
//! parent's stack, which a coroutine cannot hold across the scheduler without `unsafe`, so
//! they run on OS threads under both substrates.
//!
//! The other way, the substrates call the engine only through [`Guest`] (a thread's run and
//! end, an escaped coroutine, threads left behind), which the runtime implements once; they
//! read the execution's data (its state's driver mailbox, each thread's hosting and status)
//! and call nothing else above them.
//!
//! Architecture invariant: nothing outside this folder knows whether a thread is a
//! coroutine or an OS thread, beyond the [`Hosting`] tag the scheduler passes back here.

mod affinity;
mod baton;
mod coro;
mod os;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::{Mutex, MutexGuard};

use affinity::pin;
pub(crate) use affinity::{Core, pin_driver};
pub(crate) use coro::{Stacks, is_fault_outside_coroutine};
pub(crate) use os::spawn_scoped;

use self::baton::{Baton, DRIVER};
use super::execution::{DriverNext, ExecState, Execution};
use super::{Context, Tid};
use crate::settings::Substrate;

scoped_tls::scoped_thread_local!(
    /// The model thread whose body the calling code runs, set by the substrate while it runs.
    static CURRENT: Context
);

/// Runs `f` with the model thread the calling code runs for: the one whose body runs
/// here, or, on an OS-hosted thread whose thread-locals std destroys after its body, that
/// thread (see `os.rs`). `None` outside a model. This is the one way the runtime learns
/// which model thread calls it. Always inlined: it is on the path of every operation, and
/// `f` is most of it.
#[inline(always)]
pub(crate) fn with_current<R>(f: impl FnOnce(&Context) -> R) -> Option<R> {
    if CURRENT.is_set() {
        return Some(CURRENT.with(f));
    }
    os::exiting_context().map(|ctx| f(&ctx))
}

/// What runs a model thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hosting {
    /// A coroutine on the driver thread.
    Coroutine,
    /// An OS thread of its own.
    OsThread,
}

impl Hosting {
    /// How threads that are not scoped run on `substrate`.
    pub(crate) fn default_for(substrate: Substrate) -> Self {
        match substrate {
            Substrate::Coroutines => Hosting::Coroutine,
            Substrate::Threads => Hosting::OsThread,
        }
    }
}

/// A model thread's body, as the substrate runs it.
pub(crate) type Body = Box<dyn FnOnce() + Send + 'static>;

/// The engine above, as the substrates call it: how a model thread's body runs and how the
/// thread ends, and what the engine does when a coroutine's body escapes or threads are
/// left behind. The substrates call nothing else above them; the runtime implements this
/// once (`runtime/thread.rs`), and a new kind of model task (or a third substrate) plugs in
/// here.
pub(crate) trait Guest: Sync {
    /// Runs thread `ctx.tid` once it first has control: `body` (dropped unrun if teardown
    /// reached the thread first), then the destruction of its thread-locals.
    fn run(&self, ctx: &Context, body: Box<dyn FnOnce() + '_>);
    /// Runs thread 0 as [`run`](Self::run) does, its body the model closure.
    fn run_main(&self, ctx: &Context, model: &(dyn Fn() + Sync));
    /// Ends thread `ctx.tid`, its body and thread-locals done: its joiners may go on, and
    /// another thread runs (the caller never runs model code again).
    fn finish(&self, ctx: &Context);
    /// The coroutine of thread `tid` let `payload` escape (`overflow`: its stack
    /// overflowed; otherwise a fault of the runtime): records the failure, leaves the
    /// thread behind, and says who runs next.
    fn escaped(
        &self,
        exec: &Execution,
        tid: Tid,
        overflow: bool,
        payload: &(dyn std::any::Any + Send),
    ) -> Target;
    /// `count` threads of an execution that ended were left behind (never resumed).
    fn left_behind(&self, count: usize);
    /// Thread `tid` of execution `exec` is left behind: its thread-locals are never
    /// dropped, so the engine must forget them.
    fn forget(&self, exec: u64, tid: Tid);
    /// Drops a panic payload that escaped a coroutine, whatever its destructor does.
    fn drop_payload(&self, payload: Box<dyn std::any::Any + Send>);
}

/// What the substrates of one execution share.
pub(crate) struct HostShared {
    /// The engine the substrates call back.
    guest: &'static dyn Guest,
    /// Serializes OS-hosted threads and the driver.
    baton: Baton,
    /// The driver's OS thread, to give it the baton.
    driver: std::thread::Thread,
    /// Coroutine threads spawned and not yet taken over by the driver.
    spawned: Mutex<Vec<(Tid, Body)>>,
    /// OS-hosted threads: their handle to unpark, by thread id.
    os: Mutex<Vec<Option<std::thread::Thread>>>,
    /// Join handles of the OS threads spawned for (non-scoped) model threads.
    joins: Mutex<Vec<(Tid, std::thread::JoinHandle<()>)>>,
    /// The driver is done with the execution.
    over: AtomicBool,
}

impl HostShared {
    /// The substrates' shared state for an execution of the engine `guest`, driven from the
    /// calling thread.
    pub(crate) fn new(guest: &'static dyn Guest) -> Self {
        HostShared {
            guest,
            baton: Baton::default(),
            driver: std::thread::current(),
            spawned: Mutex::new(Vec::new()),
            os: Mutex::new(Vec::new()),
            joins: Mutex::new(Vec::new()),
            over: AtomicBool::new(false),
        }
    }

    /// Whether the driver is done with the execution.
    pub(crate) fn over(&self) -> bool {
        self.over.load(Ordering::Acquire)
    }
}

impl std::fmt::Debug for HostShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostShared")
            .field("baton", &self.baton)
            .finish_non_exhaustive()
    }
}

/// Where control goes when the running thread stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// This thread runs next.
    Thread(Tid),
    /// The execution is over (or stuck): back to the driver for good.
    End,
}

/// What the driver does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Turn {
    /// Runs `thread`, hosted on `hosting`; `abort`: teardown asks it to unwind.
    Run {
        thread: Tid,
        hosting: Hosting,
        abort: bool,
    },
    /// The execution is over.
    End,
}

impl Turn {
    /// The turn that runs `to`, as `st` says.
    pub(super) fn of(st: &ExecState, to: Target) -> Turn {
        match to {
            Target::End => Turn::End,
            Target::Thread(t) => {
                let thread = &st.threads[t];
                Turn::Run {
                    thread: t,
                    hosting: thread.hosting,
                    abort: thread.life.must_unwind(),
                }
            }
        }
    }
}

/// The running thread `ctx.tid` stops running and `to` runs. `st` is the execution's state,
/// with every decision made; it is released before control moves. Unless `leaving` (the
/// thread finished), this returns when the thread is chosen to run again, with whether
/// teardown asks it to unwind.
pub(crate) fn hand_off(
    ctx: &Context,
    mut st: MutexGuard<'_, ExecState>,
    to: Target,
    leaving: bool,
) -> bool {
    let exec = &ctx.exec;
    let me = ctx.tid;
    let mine = st.threads[me].hosting;
    let direct = match to {
        Target::Thread(t) if mine == Hosting::OsThread => {
            (st.threads[t].hosting == Hosting::OsThread).then_some(t)
        }
        _ => None,
    };
    if let Target::Thread(t) = to {
        st.running = t;
    }
    if mine == Hosting::Coroutine {
        // The driver runs on this very OS thread: it learns its turn without the lock.
        coro::tell_driver(Turn::of(&st, to));
    } else if direct.is_none() {
        st.next = match to {
            Target::Thread(t) => DriverNext::Run(t),
            Target::End => DriverNext::End,
        };
    }
    // A preempted thread may be chosen at the very next decision: it spins for the baton.
    // A blocked one cannot run before another thread wakes it: it parks.
    let preempted = matches!(st.threads[me].status, super::execution::Status::Runnable);
    drop(st);
    if leaving {
        if mine == Hosting::OsThread {
            pass(exec, direct);
        }
        return false;
    }
    match mine {
        Hosting::Coroutine => coro::suspend(),
        Hosting::OsThread => {
            pass(exec, direct);
            exec.host.baton.wait(me, preempted);
            let st = exec.state.lock();
            st.threads[me].life.must_unwind()
        }
    }
}

/// Passes the baton to OS-hosted thread `direct`, or to the driver.
fn pass(exec: &Execution, direct: Option<Tid>) {
    match direct {
        Some(t) => exec.host.baton.pass(t, &os_handle(exec, t)),
        None => exec.host.baton.pass(DRIVER, &exec.host.driver),
    }
}

fn os_handle(exec: &Execution, t: Tid) -> std::thread::Thread {
    exec.host.os.lock()[t]
        .clone()
        .expect("an OS-hosted thread records its handle before it can be chosen")
}

/// Starts the host of a new, registered model thread `tid` running `body`.
pub(crate) fn spawn(exec: &Arc<Execution>, tid: Tid, hosting: Hosting, stack: usize, body: Body) {
    match hosting {
        Hosting::Coroutine => exec.host.spawned.lock().push((tid, body)),
        Hosting::OsThread => os::spawn(exec, tid, stack, body),
    }
}

/// Records the OS thread that runs model thread `tid` (scoped threads, spawned by the
/// facade).
pub(crate) fn record_os_thread(exec: &Execution, tid: Tid, os: std::thread::Thread) {
    let mut table = exec.host.os.lock();
    if table.len() <= tid {
        table.resize(tid + 1, None);
    }
    table[tid] = Some(os);
}

/// Runs the execution from its start (thread 0 runs `model`, through
/// [`Guest::run_model`]) until the driver is told it is over. Threads teardown left behind
/// stay as they are (see `teardown.rs`).
pub(crate) fn drive<'m>(
    exec: &Arc<Execution>,
    model: &'m (dyn Fn() + Sync),
    stacks: &mut Stacks<'m>,
) {
    let substrate = exec.state.lock().config.substrate;
    match substrate {
        Substrate::Coroutines => coro::drive(exec, model, stacks),
        Substrate::Threads => os::drive(exec, model, stacks),
    }
    exec.host.over.store(true, Ordering::Release);
}

/// Gives control to the OS-hosted thread `t` from the driver and waits until it comes back.
fn run_os_thread(exec: &Execution, t: Tid) {
    exec.host.baton.pass(t, &os_handle(exec, t));
    exec.host.baton.wait(DRIVER, false);
}

/// Takes the driver's next instruction, left by an OS-hosted thread that gave it the
/// baton (or the first: thread 0).
fn take_next(exec: &Execution) -> Turn {
    let mut st = exec.state.lock();
    let to = match std::mem::replace(&mut st.next, DriverNext::Pending) {
        DriverNext::Run(t) => Target::Thread(t),
        DriverNext::End => Target::End,
        DriverNext::Pending => unreachable!("a thread that gives control back says who runs"),
    };
    if let Target::Thread(t) = to {
        st.running = t;
    }
    Turn::of(&st, to)
}
