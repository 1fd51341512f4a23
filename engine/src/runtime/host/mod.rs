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
//! end, an escaped coroutine, threads left behind), which the runtime implements once. What
//! they need to know of a thread (its hosting, stack and name, where control goes next) is
//! passed to them or kept in [`HostShared`]; of the rest of the runtime they name only
//! [`Context`], the per-thread handle they keep current, and reach through it only the
//! execution's [`HostShared`] and the thread's id.
//!
//! Architecture invariant: nothing outside this folder knows whether a thread is a
//! coroutine or an OS thread, beyond the [`Hosting`] tag the scheduler passes back here.

mod affinity;
mod baton;
mod coro;
mod os;

use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;

use affinity::pin;
pub use affinity::{Core, pin_driver};
pub(crate) use coro::{Stacks, is_fault_outside_coroutine};
pub(crate) use os::spawn_scoped;

use self::baton::{Baton, DRIVER};
use super::Context;
use crate::op::Tid;
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

/// [`with_current`], or, when the calling code runs for no model thread, `otherwise`
/// given `f` (the engine's ambient execution of the OS thread, `runtime/ambient.rs`).
#[inline(always)]
pub(crate) fn with_current_or<R, F: FnOnce(&Context) -> R>(
    f: F,
    otherwise: impl FnOnce(F) -> R,
) -> R {
    if CURRENT.is_set() {
        return CURRENT.with(f);
    }
    match os::exiting_context() {
        Some(ctx) => f(&ctx),
        None => otherwise(f),
    }
}

/// What runs a model thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hosting {
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
    /// Whether thread `ctx.tid`, given control back, must unwind for teardown.
    fn must_unwind(&self, ctx: &Context) -> bool;
    /// Whether thread `ctx.tid` finished.
    fn finished(&self, ctx: &Context) -> bool;
    /// The name of thread `ctx.tid`, if it has one.
    fn name(&self, ctx: &Context) -> Option<String>;
    /// Where thread `ctx.tid` waits, for a message.
    fn waits_at(&self, ctx: &Context) -> String;
    /// The coroutine of thread `ctx.tid` let `payload` escape (`overflow`: its stack
    /// overflowed; otherwise a fault of the runtime): records the failure, leaves the
    /// thread behind, and says what the driver does next.
    fn escaped(&self, ctx: &Context, overflow: bool, payload: &(dyn std::any::Any + Send)) -> Turn;
    /// `count` threads of an execution that ended were left behind (never resumed).
    fn left_behind(&self, count: usize);
    /// Thread `ctx.tid` is left behind: its thread-locals are never dropped, so the engine
    /// must forget them.
    fn forget(&self, ctx: &Context);
    /// Drops a panic payload that escaped a coroutine, whatever its destructor does.
    fn drop_payload(&self, payload: Box<dyn std::any::Any + Send>);
}

/// What the substrates of one execution share.
pub(crate) struct HostShared {
    /// The engine the substrates call back.
    guest: &'static dyn Guest,
    /// How threads that are not scoped run.
    substrate: Substrate,
    /// The core every OS thread of the execution is pinned to, if any.
    core: Option<Core>,
    /// Serializes OS-hosted threads and the driver.
    baton: Baton,
    /// The driver's OS thread, to give it the baton.
    driver: std::thread::Thread,
    /// The driver's mailbox: what it does next, left by an OS-hosted thread that gives it
    /// the baton (the baton's hand-over orders the two).
    next: Mutex<Option<Turn>>,
    /// Coroutine threads spawned and not yet taken over by the driver, with their stack
    /// size in bytes.
    spawned: Mutex<Vec<(Context, usize, Body)>>,
    /// OS-hosted threads: their handle to unpark, by thread id.
    os: Mutex<Vec<Option<std::thread::Thread>>>,
    /// Join handles of the OS threads spawned for (non-scoped) model threads.
    joins: Mutex<Vec<(Context, std::thread::JoinHandle<()>)>>,
    /// The driver is done with the execution.
    over: AtomicBool,
}

impl HostShared {
    /// The substrates' shared state for an execution of the engine `guest` on `substrate`
    /// (its OS threads pinned to `core`), driven from the calling thread.
    pub(crate) fn new(guest: &'static dyn Guest, substrate: Substrate, core: Option<Core>) -> Self {
        let first = Turn::Run {
            thread: 0,
            hosting: Hosting::default_for(substrate),
            abort: false,
        };
        HostShared {
            guest,
            substrate,
            core,
            baton: Baton::default(),
            driver: std::thread::current(),
            next: Mutex::new(Some(first)),
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

/// The running thread `ctx.tid`, hosted on `mine`, stops running and the driver's turn `to`
/// follows. `held` (the execution's state, with every decision made) is released before
/// control moves. Unless `leaving` (the thread finished), this returns when the thread is
/// chosen to run again, with whether teardown asks it to unwind. `preempted`: the thread
/// can run at the very next decision, so on an OS thread it spins for the baton rather than
/// parks.
pub(crate) fn hand_off<G>(
    ctx: &Context,
    held: G,
    mine: Hosting,
    to: Turn,
    preempted: bool,
    leaving: bool,
) -> bool {
    let host = ctx.host();
    let me = ctx.tid;
    let direct = match to {
        Turn::Run {
            thread,
            hosting: Hosting::OsThread,
            ..
        } if mine == Hosting::OsThread => Some(thread),
        _ => None,
    };
    if mine == Hosting::Coroutine {
        // The driver runs on this very OS thread: it learns its turn without a lock.
        coro::tell_driver(to);
    } else if direct.is_none() {
        *host.next.lock() = Some(to);
    }
    drop(held);
    if leaving {
        if mine == Hosting::OsThread {
            pass(host, direct);
        }
        return false;
    }
    match mine {
        Hosting::Coroutine => coro::suspend(),
        Hosting::OsThread => {
            pass(host, direct);
            host.baton.wait(me, preempted);
            host.guest.must_unwind(ctx)
        }
    }
}

/// Passes the baton to OS-hosted thread `direct`, or to the driver.
fn pass(host: &HostShared, direct: Option<Tid>) {
    match direct {
        Some(t) => host.baton.pass(t, &os_handle(host, t)),
        None => host.baton.pass(DRIVER, &host.driver),
    }
}

fn os_handle(host: &HostShared, t: Tid) -> std::thread::Thread {
    host.os.lock()[t]
        .clone()
        .expect("an OS-hosted thread records its handle before it can be chosen")
}

/// Starts the host of the new, registered model thread `ctx.tid` (with `stack` bytes of
/// stack) running `body`.
pub(crate) fn spawn(ctx: Context, hosting: Hosting, stack: usize, body: Body) {
    match hosting {
        Hosting::Coroutine => {
            let mut spawned = ctx.host().spawned.lock();
            spawned.push((ctx.clone(), stack, body));
        }
        Hosting::OsThread => os::spawn(ctx, stack, body),
    }
}

/// Records the OS thread that runs model thread `tid`.
fn record_os_thread(host: &HostShared, tid: Tid, os: std::thread::Thread) {
    let mut table = host.os.lock();
    if table.len() <= tid {
        table.resize(tid + 1, None);
    }
    table[tid] = Some(os);
}

/// Runs the execution from its start (thread `main`, with `stack` bytes of stack, runs
/// `model` through [`Guest::run_main`]) until the driver is told it is over.
/// Threads teardown left behind stay as they are (see `teardown.rs`).
pub(crate) fn drive<'m>(
    main: Context,
    stack: usize,
    model: &'m (dyn Fn() + Sync),
    stacks: &mut Stacks<'m>,
) {
    let keep = main.clone();
    match main.host().substrate {
        Substrate::Coroutines => coro::drive(main, stack, model, stacks),
        Substrate::Threads => os::drive(main, stack, model),
    }
    keep.host().over.store(true, Ordering::Release);
}

/// Gives control to the OS-hosted thread `t` from the driver and waits until it comes back.
fn run_os_thread(host: &HostShared, t: Tid) {
    host.baton.pass(t, &os_handle(host, t));
    host.baton.wait(DRIVER, false);
}

/// Takes the driver's next turn, left by an OS-hosted thread that gave it the baton (or the
/// first: thread 0).
fn take_next(host: &HostShared) -> Turn {
    host.next
        .lock()
        .take()
        .expect("a thread that gives control back says what the driver does")
}
