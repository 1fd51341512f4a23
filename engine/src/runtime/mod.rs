//! The runtime: runs one model thread at a time, on coroutines or OS threads (see `host/`),
//! asking the strategy at each decision.
//!
//! A primitive calls [`switch_point`] before a visible operation, [`with_state`] to read or
//! change the state of its object, and [`block`] to wait until another thread changes it
//! (the crate's documentation lists all it may use). Everything per-run lives in one
//! [`Execution`], reached through [`host::with_current`]: the host knows which model thread
//! runs. The facade's entry points start executions ([`run_execution`]) and threads
//! ([`spawn`]); futures run as model threads that poll (`wakes.rs`, `held.rs`).

mod abort;
mod ambient;
pub mod arcs;
pub mod atomics;
pub mod claims;
pub mod data;
mod events;
mod exclusive;
mod execution;
mod failure;
pub mod held;
mod host;
mod life;
pub mod locals;
pub(crate) mod object;
pub mod outcome;
mod panic;
pub(crate) mod per_exec;
mod sched;
mod signals;
pub(crate) mod spins;
mod state_lock;
mod teardown;
mod thread;
pub mod thread_slot;
pub mod timers;
mod trace;
pub(crate) mod wait_queue;
pub(crate) mod waits;
pub mod wakes;
pub(crate) mod watchdog;

pub use abort::{Origin, Rescue};
pub use ambient::{GATE, watched};
pub use waits::{Early, early, notify_which};

use std::sync::Arc;
use std::time::Duration;

pub use execution::{Blocked, DecisionRecord, ExecConfig, Waits, Wake};
pub(crate) use execution::{Execution, FailureDraft, Fired};
pub use host::{Core, pin_driver};
pub use object::{ObjectHandle, ObjectState};
pub use panic::{install_hook, is_abort, message_of, text_of};
pub use per_exec::{PerExecution, Slots, StateRef};
pub use state_lock::{holding_state, is_reentry};
pub use thread::{
    ExecOutcome, Reuse, ThreadSpec, assert_not_in_model, draining, register_thread, run_execution,
    run_thread_body, scope_panicked, spawn, spawn_scoped,
};

pub(crate) use execution::{ExecState, Unwinding};

pub(crate) use crate::op::{Loc, ObjId, Op, OpKind, Tid};

use crate::hb::Key;
use crate::op::Role;

/// A model thread: its execution and its id there.
#[derive(Clone, Debug)]
pub(crate) struct Context {
    pub(crate) exec: Arc<Execution>,
    pub(crate) tid: Tid,
}

impl Context {
    /// What the substrates share for this thread's execution.
    #[inline(always)]
    pub(crate) fn host(&self) -> &host::HostShared {
        &self.exec.host
    }
}

/// The model thread the calling code runs for, if any.
fn current_context() -> Option<Context> {
    host::with_current(Context::clone)
}

/// Whether the calling code runs for a model thread (not in an OS thread's ambient
/// execution): explorations cannot nest there.
pub fn in_model_thread() -> bool {
    host::with_current(|_| ()).is_some()
}

/// Whether modelled primitives act where the calling code runs: always, now that an OS
/// thread that runs no model thread has its ambient execution (`ambient.rs`). Facade code
/// that skipped work outside a model (an end dropped after its model ended) asks this.
pub fn in_model() -> bool {
    true
}

/// Whether the calling OS thread, which ran no model thread, is destroying its
/// thread-locals and its ambient execution has gone with them: a destructor that runs now
/// (a runtime or a `LocalSet` kept in a user's `thread_local!`) must leave its tasks as they
/// are, forgotten, rather than drop them through a crate whose own thread-locals are gone.
pub fn thread_ends() -> bool {
    ambient::gone()
}

/// Runs `f` with the context operations of the calling code run in: its model thread's,
/// or, on an OS thread that runs no model thread, that thread's ambient execution's
/// (`ambient.rs`). Always inlined, as `host::with_current` is.
#[inline(always)]
pub(crate) fn with_exec<R>(f: impl FnOnce(&Context) -> R) -> R {
    host::with_current_or(f, ambient::with)
}

/// Runs `f` with the calling code's context (see [`with_exec`]); `api` names the facade
/// item, for what its operation may report.
#[track_caller]
fn with_ctx<R>(api: &str, f: impl FnOnce(&Context) -> R) -> R {
    let _ = api;
    with_exec(f)
}

/// A clock a primitive keeps in its own state for the memory model: what some of its
/// operations published ([`Access::publish`]) for others to acquire ([`Access::acquire`]),
/// such as a channel's value, which carries its send's clock to its receive. Empty in an
/// execution the memory model does not track.
#[derive(Debug, Default)]
pub struct Published(crate::hb::VClock);

/// Access to the execution's state for one facade operation, holding its lock.
#[allow(missing_debug_implementations)] // the lock of the whole state
pub struct Access<'a> {
    st: &'a mut ExecState,
    me: Tid,
}

impl Access<'_> {
    /// The calling model thread.
    pub fn me(&self) -> Tid {
        self.me
    }

    /// The scheduling state of object `obj`, created on first access. The running event
    /// counts as changing the object, unless it declared another access to it.
    pub fn obj<S: ObjectState + Default>(&mut self, obj: ObjId) -> &mut S {
        events::imply(self.st, Key::Obj(obj));
        self.st.objects[obj].state::<S>()
    }

    /// The scheduling state of `obj`, without counting it as an access for happens-before
    /// (the caller declares its accesses itself, as a channel does with its parts).
    pub fn obj_untracked<S: ObjectState + Default>(&mut self, obj: ObjId) -> &mut S {
        self.st.objects[obj].state::<S>()
    }

    /// Says that the running event accesses `key` as `role` for partial-order reduction
    /// only: the memory model learns nothing from it (a channel's parts; its values carry
    /// their clocks in [`Published`]s).
    pub fn order_only(&mut self, key: Key, role: Role) {
        events::order_only(self.st, key, role);
    }

    /// The calling thread publishes what happens before it now into `clock` (a release
    /// into a clock the primitive keeps).
    pub fn publish(&mut self, clock: &mut Published) {
        events::publish(self.st, &mut clock.0);
    }

    /// The calling thread acquires what was published into `clock`.
    pub fn acquire(&mut self, clock: &Published) {
        events::acquire(self.st, &clock.0);
    }

    /// Says that the running event gives back lock `obj` (an unlock, or a condvar wait
    /// releasing its mutex), for happens-before; `wrote`: the data it guards was borrowed
    /// mutably, which changes the lock for threads that repeat a spin (`spins.rs`).
    pub fn releases(&mut self, obj: ObjId, wrote: bool) {
        events::declare(self.st, Key::Obj(obj), Role::Release);
        if wrote {
            spins::changes(self.st, self.me, Key::Obj(obj));
        }
    }

    /// What [`unchanged`] says, under this access: the running event changed nothing
    /// another thread could see.
    pub fn unchanged(&mut self) {
        if self.st.config.spins == crate::settings::SpinRule::Repeats {
            spins::unchanged(self.st);
        }
    }

    /// Makes `tid` runnable if it is blocked; it learns `Wake::Notified`.
    pub fn wake(&mut self, tid: Tid) {
        sched::wake(self.st, tid, Wake::Notified);
    }

    /// Wakes every thread blocked on `obj`; returns how many.
    pub fn wake_all(&mut self, obj: ObjId) -> usize {
        self.wake_doing(obj, None)
    }

    /// Wakes every thread blocked on `obj` doing `what` (any, for `None`); returns how many.
    pub fn wake_doing(&mut self, obj: ObjId, what: Option<Waits>) -> usize {
        let mut woken = 0;
        for t in 0..self.st.threads.len() {
            if self.waits_on(t, obj, what) {
                sched::wake(self.st, t, Wake::Notified);
                woken += 1;
            }
        }
        woken
    }

    /// Whether some thread is blocked on `obj` doing `what`.
    pub fn any_waiting(&self, obj: ObjId, what: Waits) -> bool {
        (0..self.st.threads.len()).any(|t| self.waits_on(t, obj, Some(what)))
    }

    /// Whether some thread other than the caller is stopped at a switch point before an
    /// operation of `kind` on `obj` that it has not begun (it cannot take effect yet, so the
    /// scheduler does not choose it: for the model it is already waiting). For
    /// happens-before this needs no access of its own: the caller's result depends on that
    /// thread's arrival, and that thread's operation, once it runs, conflicts with the
    /// caller's on `obj`, so reduction also tries the arrival after the caller.
    pub fn any_stopped_before(&self, obj: ObjId, kind: OpKind) -> bool {
        self.st.threads.iter().enumerate().any(|(t, th)| {
            t != self.me
                && matches!(th.status, execution::Status::Runnable)
                && th.pending.kind == kind
                && th.pending.obj == Some(obj)
        })
    }

    /// The threads waiting on `obj`, longest waiting first.
    pub fn waiters(&self, obj: ObjId) -> Vec<Tid> {
        let mut waiters: Vec<Tid> = (0..self.st.threads.len())
            .filter(|&t| self.waits_on(t, obj, None))
            .collect();
        waiters.sort_by_key(|&t| self.st.threads[t].blocked_seq);
        waiters
    }

    fn waits_on(&self, t: Tid, obj: ObjId, what: Option<Waits>) -> bool {
        matches!(self.st.threads[t].status,
            execution::Status::Blocked(b) if b.obj == Some(obj) && what.is_none_or(|w| w == b.what))
    }

    /// Current virtual time since the execution started.
    pub fn now(&mut self) -> Duration {
        events::declare(self.st, Key::Time, Role::Read);
        spins::observes(self.st, self.me, Key::Time);
        self.st.clock
    }

    /// The calling thread's notes as a `T` (what the layer that polls futures on it keeps,
    /// [`Notes`](wakes::Notes)), made on first use.
    pub fn notes<T: wakes::Notes + Default>(&mut self) -> &mut T {
        wakes::notes_mut(self.st, self.me)
    }

    /// The number of switch points the execution passed: a poll that began at step `s` and
    /// ends at a later one reached an operation.
    pub fn step(&self) -> u64 {
        self.st.step
    }

    /// The calling thread's last operation, at its last switch point: where it is and its
    /// name.
    pub fn last_op(&self) -> (Loc, &'static str) {
        let pending = &self.st.threads[self.me].pending;
        (pending.loc, pending.name())
    }

    /// The calling thread's future registered in a wait queue to wait to do `words` to the
    /// object of its last operation (`wait_queue.rs`).
    /// `before`: the same waiter's registration counted earlier, which counts once. The
    /// waiter leaves with [`unawaits`](Self::unawaits).
    pub(crate) fn awaits(
        &mut self,
        words: &'static str,
        before: Option<wait_queue::Noted>,
    ) -> (wait_queue::Noted, Option<ObjId>) {
        let obj = self.st.threads[self.me].pending.obj;
        (
            wakes::note_awaits(self.st, self.me, obj, words, before),
            obj,
        )
    }

    /// A waiter registered as `noted` to do `words` to `obj` left its queue unwoken.
    pub(crate) fn unawaits(
        &mut self,
        noted: wait_queue::Noted,
        obj: Option<ObjId>,
        words: &'static str,
    ) {
        wakes::unnote_awaits(self.st, noted, obj, words);
    }

    /// Whether thread `tid` has finished.
    pub fn is_finished(&mut self, tid: Tid) -> bool {
        events::declare(self.st, Key::Thread(tid), Role::Read);
        spins::observes(self.st, self.me, Key::Thread(tid));
        matches!(self.st.threads[tid].status, execution::Status::Finished)
    }

    /// The `unpark` token of thread `tid`.
    pub fn park_token(&mut self, tid: Tid) -> &mut bool {
        events::imply(self.st, Key::Park(tid));
        &mut self.st.threads[tid].park_token
    }

    /// Says that the calling thread is spinning (waiting for another thread without
    /// blocking), so that strategies may run other threads first.
    pub(crate) fn spinning(&mut self, loc: Loc) {
        events::spun(self.st, self.me, loc);
    }

    /// Says that the calling thread yields explicitly: state the model does not see may be
    /// shared here (see [`yield_explicitly`]).
    pub fn exposes_unseen(&mut self, loc: Loc) {
        events::exposes_unseen(self.st, self.me, loc);
    }

    /// The name given to thread `tid`, if any.
    pub fn thread_name(&self, tid: Tid) -> Option<&str> {
        self.st.threads[tid].name.as_deref()
    }

    /// What thread `tid` waits to do, if it is blocked.
    pub fn blocked_on(&self, tid: Tid) -> Option<Waits> {
        match self.st.threads[tid].status {
            execution::Status::Blocked(b) => Some(b.what),
            _ => None,
        }
    }

    /// Registers a new object with no handle of its own (a scope) and returns its id.
    pub fn new_object(&mut self, kind: &'static str, loc: Loc) -> ObjId {
        self.st.objects.push(object::ObjectSlot {
            kind,
            first_use: loc,
            state: None,
            from_earlier: false,
        })
    }
}

/// Whether the calling model thread's execution is the first that used the primitive behind
/// `handle` (once a switch point on it registered it there). Never locks the state.
#[track_caller]
pub fn first_used_here(handle: &ObjectHandle) -> bool {
    with_ctx("interleave-test", |ctx| handle.first_used_in(ctx.exec.id))
}

/// Runs `f` on the execution's state. Never switches threads.
#[track_caller]
pub fn with_state<R>(api: &str, f: impl FnOnce(&mut Access<'_>) -> R) -> R {
    with_ctx(api, |ctx| {
        let mut st = ctx.exec.state.lock();
        f(&mut Access {
            st: &mut st,
            me: ctx.tid,
        })
    })
}

/// The switch point before a visible operation `kind` on `obj` at `loc`: registers the object,
/// records the operation, and lets the strategy run another thread first. Returns the
/// object's id. While the calling thread unwinds, no other thread is scheduled here.
#[track_caller]
pub fn switch_point(kind: OpKind, obj: Option<&ObjectHandle>, loc: Loc) -> Option<ObjId> {
    with_ctx(kind.name(), |ctx| sched::switch_point(ctx, kind, obj, loc))
}

/// [`switch_point`] on `obj`, then `f` on the execution's state under the same hold of its
/// lock: nothing runs between the switch point and `f` (when the thread was handed off at
/// the switch point, the state is locked again once it runs). One lookup of the calling
/// thread and, usually, one lock of the state instead of two of each: a lock section's
/// acquisition (`sync::Mutex::lock_section_at`) is on the path of every Tokio operation.
#[track_caller]
pub fn switch_point_then<R>(
    kind: OpKind,
    obj: &ObjectHandle,
    loc: Loc,
    f: impl FnOnce(&mut Access<'_>, ObjId) -> R,
) -> R {
    with_ctx(kind.name(), |ctx| {
        let (id, held) = sched::switch_point_held(ctx, kind, Some(obj), loc);
        let id = id.expect("a switch point on an object returns its id");
        let mut st = held.unwrap_or_else(|| ctx.exec.state.lock());
        f(
            &mut Access {
                st: &mut st,
                me: ctx.tid,
            },
            id,
        )
    })
}

/// [`switch_point`], or `None` when the caller runs for no model thread (outside a model,
/// where the caller does what std does: a fence is std's own there).
#[track_caller]
pub fn switch_point_in_model(
    kind: OpKind,
    obj: Option<&ObjectHandle>,
    loc: Loc,
) -> Option<Option<ObjId>> {
    host::with_current(|ctx| sched::switch_point(ctx, kind, obj, loc))
}

/// Says that the calling thread is spinning at `loc`: waiting for another thread without
/// blocking (`yield_now`, `hint::spin_loop`). When it repeats a spin there (`events::spun`),
/// strategies may prefer other threads (PCT drops its priority).
#[track_caller]
pub fn spinning(api: &str, loc: Loc) {
    with_state(api, |a| a.spinning(loc));
}

/// An explicit yield (`thread::yield_now`, `hint::spin_loop`, `future::yield_now`): the
/// calling thread spins (see [`spinning`]), and says that other threads may act here on
/// state the model does not see, which the reduction then orders against every other
/// thread's events (`hb/unseen.rs`).
#[track_caller]
pub fn yield_explicitly(api: &str, loc: Loc) {
    with_state(api, |a| {
        a.spinning(loc);
        a.exposes_unseen(loc);
    });
}

/// Says that the calling thread's `try_lock`, `try_read` or `try_write` failed: an ordinary
/// operation, and a sign of waiting for `spins.rs`; a spin for strategies that prefer
/// other threads only when it fails again where its last operation failed (a loop of
/// tries with nothing in between).
#[track_caller]
pub fn failed_try(api: &str) {
    with_state(api, |a| {
        let (st, me) = (&mut *a.st, a.me);
        spins::hint(st, me);
        let loc = st.threads[me].pending.loc;
        let again = st.threads[me].last_failed_try.replace(loc) == Some(loc);
        if again {
            events::spun(st, me, loc);
        }
    });
}

/// Says that the operation the calling thread just performed, which changes shared state
/// when it succeeds, changed nothing (a failed `try_lock` or compare-and-exchange, an atomic
/// write of the value it held, a lock released without its data borrowed mutably): for
/// `spins.rs` it was an observation. Call it right after the operation, before any other
/// switch point. Does nothing unless the execution holds back repeated spins
/// (`SpinRule::Repeats`; never outside a model).
pub fn unchanged() {
    let run = |ctx: &Context| {
        if ctx.exec.repeats {
            spins::unchanged(&mut ctx.exec.state.lock());
        }
    };
    with_exec(run);
}

/// The calling model thread's execution and id (the OS thread's ambient execution's, on a
/// thread that runs none: see [`with_exec`]); never `None` any more.
pub fn try_ids() -> Option<(u64, Tid)> {
    Some(with_exec(|ctx| (ctx.exec.id, ctx.tid)))
}

/// The calling model thread's execution and id.
#[track_caller]
pub fn ids(api: &str) -> (u64, Tid) {
    with_ctx(api, |ctx| (ctx.exec.id, ctx.tid))
}

/// Ends the execution with a `Misuse` failure unless the calling code runs in execution
/// `exec`, whose `what` (a thread, a task) a handle names: #n of another execution is not
/// this one's #n, whose state the handle would otherwise act on.
#[track_caller]
pub fn same_execution(api: &str, exec: u64, what: &str) {
    if ids(api).0 != exec {
        misuse(
            format!(
                "{api}: this handle is of a {what} of another execution (kept in a `static` or \
                 captured from outside the model closure); every execution spawns its own \
                 {what}s, so create the {what}, and keep its handle, inside the model closure"
            ),
            std::panic::Location::caller(),
        )
    }
}

/// Ends the execution with a `Misuse` failure of the calling thread at `loc`, saying
/// `message` (what is wrong and what to write instead).
#[track_caller]
pub fn misuse<R>(message: String, loc: Loc) -> R {
    with_ctx("interleave-test", |ctx| {
        let mut st = ctx.exec.state.lock();
        let me = ctx.tid;
        st.fail(|st| failure::misuse(st, me, message, loc));
        sched::raise_abort(ctx, st)
    })
}

/// Blocks the calling thread for `why` until another thread wakes it or its deadline passes.
#[track_caller]
pub fn block(why: Blocked) -> Wake {
    with_ctx(why.what.phrase(), |ctx| sched::block(ctx, why))
}

/// Whether the calling model thread is unwinding (from a panic, or torn down), as
/// [`std::thread::panicking`] tells a real thread. Under coroutines std's own function is
/// shared by the model threads of an execution; this one is per model thread. In an OS
/// thread's ambient execution, std's answer.
pub fn thread_panicking() -> bool {
    match current_context() {
        Some(ctx) => {
            std::thread::panicking()
                && ctx.exec.state.lock().threads[ctx.tid].life.unwinding() != Unwinding::No
        }
        None => std::thread::panicking(),
    }
}

/// Whether a guard dropped now poisons its lock: the calling thread unwinds from a panic of
/// the model (in an OS thread's ambient execution, from any panic, as in std). Teardown's
/// unwinding poisons nothing (it is not a panic of the program).
pub fn poisons() -> bool {
    std::thread::panicking()
        && current_context().is_none_or(|ctx| {
            ctx.exec.state.lock().threads[ctx.tid].life.unwinding() == Unwinding::Panic
        })
}
