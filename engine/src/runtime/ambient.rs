//! The ambient execution: what a modelled primitive runs in when it is used on an OS thread
//! that runs no model thread (a plain `#[test]`, a `main`, the thread that drives an
//! exploration, between its executions).
//!
//! Such an OS thread gets an execution of its own, created on its first use of a primitive
//! and kept for the thread's life, whose only model thread (#0, named as the OS thread is)
//! is the OS thread itself: it never hands off (there is no one to hand off to), so no
//! driver and no coroutine is needed. Every operation takes the same path as in a model,
//! so a primitive behaves there as the original does on one thread:
//! - every decision takes option 0 ([`FirstOption`]): the only thread runs, a load reads the
//!   newest store, no wait ends early or spuriously, no weak exchange fails spuriously
//!   (ARCHITECTURE.md: "a pick's option 0 is the sequentially consistent, spurious-free
//!   one"); a plain test gets no alarm it would not get from std;
//! - a timed wait that nobody can end times out at its deadline: the thread sleeps until
//!   then, as with std and an unpaused Tokio, and the execution's virtual clock moves to
//!   the deadline; with Tokio's time paused (`pause`, `start_paused`) it moves at once;
//! - an operation that can never take effect (locking a `Mutex` the thread holds, `recv`
//!   on an empty channel whose sender lives) is what std's would be on one thread, a
//!   deadlock: it panics naming the operation and what it waits for, rather than hang;
//! - what cannot be honoured on one thread is refused with a panic that says what to gate
//!   with `cfg(not(interleave))`: spawning a model thread, and a primitive that another OS
//!   thread's ambient execution uses (a plain test that shares it with `std::thread`).
//!
//! Why one per OS thread, kept for the thread's life: a primitive remembers the execution
//! it was first used in (`object.rs`), so an execution that ended while a primitive of it
//! lives would leave that primitive foreign to the next one. A thread's life is what a
//! plain test's primitives live in (the test harness runs each test on a thread of its
//! own); the cost is the ambient execution's table of objects, one slot per primitive
//! the thread ever used. A primitive first used by an execution that is not a live ambient
//! one (a model's, over now; or an ambient execution whose thread ended) is taken over
//! here, its scheduling state fresh, as the original would simply go on.
//!
//! Atomics do not come here: outside a model they act on the value their facade holds,
//! with std's own operation (`sync/atomic/`), which is the original on any thread.
//!
//! The panic hook and `Builder::check`'s nesting check do not see this execution: for
//! them the thread runs no model (`host::with_current` stays strict).

use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::execution::{ExecConfig, ExecState, Execution, StateGuard};
use super::watchdog::Beat;
use super::{Context, Loc, failure};
use crate::settings::{SpinRule, Substrate};
use crate::strategy::{Choice, Pick, Refusal, Strategy};

/// Every decision's option 0: the first runnable thread (there is one), the first pick. A
/// fixed sequence of decisions, as a replay's, and no search (`exhaustive` is `None`): a
/// random draw or a choice among more values than DFS explores is answered (option 0), not
/// refused as under DFS. No schedule of this execution is written.
#[derive(Debug)]
struct FirstOption;

impl Strategy for FirstOption {
    fn reads_ops(&self) -> bool {
        false
    }

    fn choose(&mut self, choice: &Choice<'_>) -> Result<usize, Refusal> {
        Ok(choice.runnable[0])
    }

    fn pick(&mut self, _: &Pick) -> Result<usize, Refusal> {
        Ok(0)
    }
}

/// An ambient execution alive (its OS thread has not ended).
struct Live {
    id: u64,
    /// What another OS thread did with one of its primitives (refused there), for its own
    /// thread to fail with at its next check.
    foreign_use: Option<String>,
}

/// The ambient executions alive.
static LIVE: Mutex<Vec<Live>> = Mutex::new(Vec::new());

/// Steps of an ambient execution between two looks at [`Live::foreign_use`]: its
/// `max_steps`, moved on at each look ([`checkpoint`]), so that the look costs nothing on
/// the path of a switch point.
const CHECK_EVERY: u64 = 1024;

/// An OS thread's ambient execution, as its thread-local holds it.
struct Ambient(Context);

impl Drop for Ambient {
    fn drop(&mut self) {
        let id = self.0.exec.id;
        LIVE.lock().retain(|live| live.id != id);
    }
}

std::thread_local! {
    /// The calling OS thread's ambient execution, made on first use.
    static AMBIENT: Ambient = Ambient(new_context());
    /// Its id once made (0: none yet), readable without making it.
    static AMBIENT_ID: Cell<u64> = const { Cell::new(0) };
    /// The watchdog's heartbeat while a runtime's `block_on` runs here, and how many run
    /// (nested).
    static WATCH: RefCell<Option<(Arc<Beat>, usize)>> = const { RefCell::new(None) };
}

/// How the ambient execution runs: no step limit, no watchdog, no held-back spins (a
/// thread that spins alone must go on), no early or spurious endings, no memory model.
fn config() -> ExecConfig {
    ExecConfig {
        max_steps: CHECK_EVERY,
        thread_panics_fail: false,
        substrate: Substrate::Coroutines,
        stack_size: crate::settings::DEFAULT_STACK_SIZE,
        core: None,
        watchdog: None,
        spins: SpinRule::Off,
        untracked_start: true,
        spurious: false,
        early_limit: Some(0),
        clock: crate::settings::Clock::Loaded,
        check_acquires: false,
        keep_names: false,
        ambient: true,
        blocking_wait_switches: false,
        pass_at_max_steps: false,
    }
}

/// A new ambient execution for the calling OS thread, its thread #0 running already.
#[track_caller]
fn new_context() -> Context {
    let loc: Loc = std::panic::Location::caller();
    let exec = Execution::new(
        Box::new(FirstOption),
        config(),
        None,
        loc,
        Default::default(),
        None,
        Box::default(),
    );
    {
        let mut st = exec.state.lock();
        st.threads[0].name = std::thread::current().name().map(Into::into);
        // The thread runs from the start; nothing is recorded of its decisions.
        st.threads[0].life.begin();
    }
    LIVE.lock().push(Live {
        id: exec.id,
        foreign_use: None,
    });
    AMBIENT_ID.set(exec.id);
    Context { exec, tid: 0 }
}

/// Runs `f` with the calling OS thread's ambient execution (made now if it has none).
/// While the thread's thread-locals are destroyed (a destructor of one uses a primitive
/// after the ambient execution went), `f` runs in an execution made for it alone.
pub(super) fn with<R>(f: impl FnOnce(&Context) -> R) -> R {
    let mut f = Some(f);
    let mut run = |ctx: &Context| (f.take().expect("run once"))(ctx);
    if let Ok(r) = AMBIENT.try_with(|a| run(&a.0)) {
        return r;
    }
    let alone = Ambient(new_context());
    run(&alone.0)
}

/// Whether the calling OS thread had an ambient execution and it is gone: the thread is
/// destroying its thread-locals (see `runtime::thread_ends`).
pub(super) fn gone() -> bool {
    AMBIENT_ID.try_with(Cell::get).is_ok_and(|id| id != 0) && AMBIENT.try_with(|_| ()).is_err()
}

/// Whether execution `owner` is the ambient execution of another OS thread that still runs.
pub(super) fn of_another_thread(owner: u64) -> bool {
    AMBIENT_ID.try_with(Cell::get).ok() != Some(owner)
        && LIVE.lock().iter().any(|live| live.id == owner)
}

/// Records in the ambient execution `owner` (of another OS thread) that the calling OS
/// thread used one of its primitives, `what`; the first such use is what it reports.
fn note_foreign_use(owner: u64, what: &str) {
    let mut live = LIVE.lock();
    if let Some(entry) = live.iter_mut().find(|live| live.id == owner) {
        let here = std::thread::current();
        let name = here.name().unwrap_or("<unnamed>");
        entry.foreign_use.get_or_insert_with(|| {
            format!("{what}, by the OS thread '{name}' (a std::thread of the test)")
        });
    }
}

/// What another OS thread did with a primitive of ambient execution `id`, if anything.
fn foreign_use(id: u64) -> Option<String> {
    let live = LIVE.lock();
    live.iter().find(|live| live.id == id)?.foreign_use.clone()
}

/// The look, every [`CHECK_EVERY`] steps of the ambient execution of `ctx` (its thread
/// `me` about to act at `loc`), at what other OS threads did with its primitives: `true`,
/// with a failure recorded, if one used a primitive of it. Such code waits on something
/// only that OS thread would do, so the execution cannot finish as with std and Tokio
/// (say, a task that spins until the other thread sends), and would run for ever.
/// Not while the thread unwinds: a failure raised then would abort the process.
pub(super) fn checkpoint(ctx: &Context, st: &mut ExecState, me: usize, loc: Loc) -> bool {
    st.config.max_steps = st.step.saturating_add(CHECK_EVERY);
    if std::thread::panicking() {
        return false;
    }
    let Some(what) = foreign_use(ctx.exec.id) else {
        return false;
    };
    st.fail(|st| failure::misuse(st, me, foreign_message(&what), loc));
    true
}

/// What a thread whose primitive another OS thread used is told.
fn foreign_message(what: &str) -> String {
    format!(
        "a modelled primitive of this OS thread was used by another OS thread: {what}. The \
         other thread was refused, so this one would wait for it for ever"
    )
}

/// What to tell a user whose code did, outside a model, what one thread cannot honour.
pub const GATE: &str = "Outside a model, interleave-test runs each OS thread's \
    operations as one thread of its own; code that needs more threads than that (or real \
    time) is not modelled there: run it inside interleave_test::Builder::check (or \
    explore, model, #[interleave]), or gate it with #[cfg(not(interleave))] so that it uses \
    std and Tokio themselves.";

/// Ends the operation of the ambient execution's thread, which recorded `st.failure` (a
/// failure a model would report): the execution goes on as if the operation had not been
/// tried, and the thread panics with what happened; for a deadlock, what it waits for.
/// Never raises while the thread unwinds (that would abort the process): it then prints
/// the message and aborts with it said.
pub(super) fn raise<T>(ctx: &Context, mut st: StateGuard<'_, ExecState>) -> T {
    let message = message(&mut st, ctx.exec.id, ctx.tid);
    st.failure = None;
    st.phase = super::execution::Phase::Running;
    st.unwind_all = None;
    drop(st);
    if std::thread::panicking() {
        eprintln!("interleave-test: while the thread unwinds from a panic, {message}");
        std::process::abort();
    }
    panic!("{message}")
}

/// The message of the ambient thread `me`'s failure, taken out of `st`; a blocked thread
/// is made runnable again.
fn message(st: &mut ExecState, id: u64, me: usize) -> String {
    let deadlock = st
        .failure
        .as_ref()
        .is_none_or(|f| f.kind == crate::schedule::FailureKind::Deadlock);
    if deadlock {
        let draft = failure::deadlock(st, Some(me));
        st.threads[me].status = super::execution::Status::Runnable;
        let lines: Vec<String> = draft.threads.iter().map(ToString::to_string).collect();
        if let Some(what) = foreign_use(id) {
            return format!(
                "{}\n  {}\n{GATE}",
                foreign_message(&what),
                lines.join("\n  ")
            );
        }
        return format!(
            "deadlock outside a model: this thread is the only one of its execution and it \
             waits for something only another thread could do (std would hang here for \
             ever):\n  {}\n{GATE}",
            lines.join("\n  ")
        );
    }
    let failure = st.failure.take().expect("a failure is recorded");
    format!("{}\n{GATE}", failure.message)
}

/// The id in the ambient execution of `ctx` of the primitive behind `handle`, which
/// execution `foreign.owner` used first: taken over when that execution is not another OS
/// thread's ambient one (see the module); `None` (with the failure recorded) when it is.
pub(super) fn take_over(
    ctx: &Context,
    st: &mut ExecState,
    handle: &super::ObjectHandle,
    foreign: &super::object::ForeignObject,
    loc: Loc,
) -> Option<super::ObjId> {
    let owner = foreign.owner;
    if !of_another_thread(owner)
        && let Some(id) = handle.take_over(ctx.exec.id, owner, &mut st.objects, loc)
    {
        return Some(id);
    }
    let kind = foreign.kind;
    note_foreign_use(owner, &format!("a {kind} at {loc}"));
    if std::thread::panicking() {
        // A refusal raised while the thread unwinds would abort the process. The operation
        // (a destructor's, most likely) acts on a scratch slot of this execution instead:
        // the primitive's data is behind a lock of its own, so this is no data race, but
        // the owner sees none of it; the owner fails at its next check (`checkpoint`).
        return Some(handle.scratch(&mut st.objects, loc));
    }
    st.fail(|st| {
        let message = format!(
            "this {kind} was used outside a model on two OS threads (a plain test that \
             shares a modelled primitive with a thread of std::thread::spawn): each OS thread \
             runs modelled primitives as a one-thread execution of its own, and a {kind} \
             cannot belong to two of them"
        );
        failure::misuse(st, ctx.tid, message, loc)
    });
    None
}

/// Refuses to start a model thread (`thread::spawn`, a task of its own) in the ambient
/// execution of `ctx`: its OS thread is its only thread (see the module).
#[track_caller]
pub(super) fn refuse_thread(ctx: &Context, mut st: StateGuard<'_, ExecState>, loc: Loc) -> ! {
    st.fail(|st| {
        let message = "a model thread (interleave_test::thread::spawn, or a task that runs \
             as a thread of its own: a multi-thread runtime's spawn, spawn_blocking, \
             future::spawn) was started outside a model, where the OS thread runs \
             modelled primitives as a one-thread execution and nothing could run a second \
             thread"
            .to_owned();
        failure::misuse(st, ctx.tid, message, loc)
    });
    raise(ctx, st)
}

/// Runs `f` (a `block_on` of a runtime built outside a model) with the calling OS thread's
/// ambient execution watched, as a model's executions are (`watchdog.rs`): a thread that
/// blocks for the limit on something only another OS thread could end (a `std::sync::Barrier`
/// of several threads, `spawn_blocking` work that waits on real time, which Tokio runs on
/// other threads) would hang the test for ever; the watchdog says so and ends the process.
pub fn watched<R>(f: impl FnOnce() -> R) -> R {
    let Some(limit) = crate::settings::watchdog_from_env() else {
        return f();
    };
    let _watching = with(|ctx| Watching::begin(ctx, limit));
    f()
}

/// The calling thread's ambient execution is watched until this is dropped.
struct Watching;

impl Watching {
    fn begin(ctx: &Context, limit: Duration) -> Watching {
        WATCH.with(|watch| {
            let mut watch = watch.borrow_mut();
            match &mut *watch {
                Some((_, depth)) => *depth += 1,
                None => {
                    let beat = Beat::new(limit);
                    beat.running(&ctx.exec);
                    *watch = Some((beat, 1));
                }
            }
        });
        Watching
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        let _ = WATCH.try_with(|watch| {
            let mut watch = watch.borrow_mut();
            if let Some((_, depth)) = &mut *watch {
                *depth -= 1;
                if *depth == 0 {
                    *watch = None; // the watchdog forgets a heartbeat nobody holds
                }
            }
        });
    }
}

/// A timed wait nobody can end whose deadline is this far away or more (Tokio's
/// `sleep(Duration::MAX)` is 30 years) is no sleep but a wait for ever.
const FOREVER: Duration = Duration::from_secs(365 * 24 * 3600);

/// The only thread of the ambient execution whose state is `st` sleeps for `time`, for real
/// (a timed wait nobody can end, with time not paused): unwatched meanwhile, and counted
/// as a step, so that the watchdog sees it moved on. `false`, without sleeping, for a
/// wait of [`FOREVER`] or more: the caller reports the deadlock it is, which would
/// otherwise hang the test unwatched and without a word.
pub(super) fn sleep(st: &mut ExecState, time: Duration) -> bool {
    if time >= FOREVER {
        return false;
    }
    let beat = WATCH
        .try_with(|watch| watch.borrow().as_ref().map(|(beat, _)| Arc::clone(beat)))
        .ok()
        .flatten();
    let watched = beat.as_ref().map(|beat| beat.pause());
    std::thread::sleep(time);
    if let (Some(beat), Some(exec)) = (beat, watched) {
        beat.resume(exec);
    }
    st.step += 1;
    true
}

/// The watchdog's report for an ambient execution whose thread has not reached a switch
/// point, `what` at `loc` its last, for `limit`.
pub(super) fn unresponsive(st: &ExecState, limit: Duration, what: &str, loc: Loc) -> String {
    let thread = st.threads[0].name.as_deref().unwrap_or("<unnamed>");
    format!(
        "\ninterleave-test: the OS thread '{thread}' runs a Tokio runtime built outside a \
         model and has not reached a switch point for {limit:?}; its last one was `{what}` \
         at {loc}.\nIt is blocked on something only another OS thread could end (a \
         std::thread, a std lock, channel or Barrier shared with one, spawn_blocking work \
         that waits on real time): Tokio runs a runtime's tasks and blocking work on threads \
         of their own, but outside a model they all run on this one.\n{GATE}\nIf the \
         thread is only slow, raise {} (seconds; 0 turns the watchdog off). The thread \
         cannot be stopped from outside, so the process exits now.\n",
        crate::settings::env::WATCHDOG,
    )
}
