//! Teardown: what happens to the other threads once an execution has failed (or reached
//! `max_steps` where it ends as a pass: then every thread is unwound, `sched::end_as_pass`).
//!
//! A real program whose thread fails does not unwind its other threads: they stay where
//! they are until the process exits, and their destructors never run. Running those
//! destructors anyway is how a checker takes a test process down (a `Drop` that panics
//! when its work is unfinished, or that unwraps a lock poisoned by the very unwinding).
//! So teardown leaves threads as they are wherever it can, and unwinds only what it must:
//!
//! 1. A thread that is unwinding (the failing panic) or exiting (destroying its
//!    thread-locals) runs on: its destructors run as in a real program, and may block on
//!    other threads.
//! 2. A thread that must finish is unwound with the private marker payload, which poisons
//!    nothing: thread 0 and scoped threads on the OS-thread substrate (the driver's call,
//!    or the parent's `std::thread::scope`, waits for their OS thread), and every thread
//!    once the process has left [`LEAVE_BEHIND_CAP`] threads behind.
//! 3. While a thread that must finish is blocked, other threads are unwound one at a time,
//!    lowest id first, since its destructor may wait for them.
//! 4. Threads that never started have their closure dropped.
//! 5. The rest are left behind: a coroutine is never resumed again (its stack and what it
//!    owns stay allocated: safe Rust cannot free a suspended stack without unwinding it),
//!    an OS thread stays parked.
//!
//! Teardown runs one thread at a time in this fixed order and records nothing: it is the
//! same in every run and never changes the failure.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::execution::{ExecState, Status, Target, Unwinding};
use super::host::Hosting;
use super::{Tid, sched};

/// The most model threads left behind in a process; past it teardown unwinds every thread.
/// Each costs its stack's touched pages (a few KiB for most models; the rest of the stack is
/// reserved address space) plus what it owns.
pub(crate) const LEAVE_BEHIND_CAP: usize = 64;

/// Teardown unwindings a thread may catch (with `catch_unwind`) before it is left behind.
const CATCH_LIMIT: u32 = 3;

/// Threads left behind so far in the process.
static LEFT_BEHIND: AtomicUsize = AtomicUsize::new(0);

/// Threads left behind so far in the process.
pub(crate) fn left_behind_count() -> usize {
    LEFT_BEHIND.load(Ordering::Relaxed)
}

/// Counts threads left behind by an execution that ended.
pub(crate) fn count_left_behind(n: usize) {
    LEFT_BEHIND.fetch_add(n, Ordering::Relaxed);
}

/// Who runs next while the execution tears down.
pub(super) fn next(st: &mut ExecState) -> Target {
    if st.unwind_all.is_none() {
        let leaving = (0..st.threads.len())
            .filter(|&t| !st.threads[t].finished() && abandonable(st, t))
            .count();
        st.unwind_all = Some(left_behind_count() + leaving > LEAVE_BEHIND_CAP);
    }
    loop {
        if let Some(t) = (0..st.threads.len()).find(|&t| continues(st, t)) {
            return Target::Thread(t);
        }
        let pending = |st: &ExecState, t: Tid| {
            let th = &st.threads[t];
            !th.finished() && !th.life.left_behind() && !aborted(st, t)
        };
        if let Some(t) = (0..st.threads.len()).find(|&t| pending(st, t) && must_finish(st, t)) {
            return abort(st, t);
        }
        let waiting = (0..st.threads.len()).any(|t| {
            let th = &st.threads[t];
            !th.finished() && !th.life.left_behind() && must_finish(st, t)
        });
        if waiting {
            if let Some(t) = (0..st.threads.len()).find(|&t| pending(st, t)) {
                return abort(st, t);
            }
            if sched::fire_timeouts(st) {
                continue;
            }
        }
        let unstarted = |t: Tid| !st.threads[t].life.started() && !st.threads[t].finished();
        if let Some(t) = (0..st.threads.len()).find(|&t| unstarted(t)) {
            return abort(st, t);
        }
        return Target::End;
    }
}

/// Whether thread `t` runs on in teardown without being asked: it can run and it unwinds,
/// exits, or was asked to unwind.
fn continues(st: &ExecState, t: Tid) -> bool {
    let th = &st.threads[t];
    matches!(th.status, Status::Runnable) && !th.life.left_behind() && aborted(st, t)
}

/// Whether teardown already reached thread `t` (or it needs no reaching).
fn aborted(st: &ExecState, t: Tid) -> bool {
    let life = &st.threads[t].life;
    life.abort_asked() || life.unwinding() != Unwinding::No || life.lingers()
}

/// Whether thread `t` may be left behind when teardown ends.
fn abandonable(st: &ExecState, t: Tid) -> bool {
    let th = &st.threads[t];
    match th.hosting {
        Hosting::Coroutine => true,
        Hosting::OsThread => t != 0 && !th.scoped,
    }
}

fn must_finish(st: &ExecState, t: Tid) -> bool {
    st.unwind_all == Some(true) || !abandonable(st, t)
}

/// Why teardown unwinds thread `t` rather than leave it as it is, for a report: the end
/// of a sentence ("teardown unwinds it because ...").
pub(super) fn why_unwound(st: &ExecState, t: Tid) -> String {
    if st.cut {
        return "the execution reached max_steps, where it ends as a pass \
                (`Builder::pass_at_max_steps`), so teardown unwinds every thread"
            .to_owned();
    }
    if st.unwind_all == Some(true) {
        return format!(
            "the process has left {LEAVE_BEHIND_CAP} threads of failed executions behind (the \
             most it keeps), so teardown unwinds every thread"
        );
    }
    if !abandonable(st, t) {
        return "its OS thread must finish before the exploration returns (the model \
                closure's thread on the OS-thread substrate, or a scoped thread; on \
                coroutines, the default substrate, teardown leaves the model closure's \
                thread as it is)"
            .to_owned();
    }
    "it was running when the execution failed, or a thread that must finish may be \
     waiting for it"
        .to_owned()
}

/// Asks thread `t` to unwind when it next runs, and runs it.
fn abort(st: &mut ExecState, t: Tid) -> Target {
    let th = &mut st.threads[t];
    th.life.ask_to_unwind();
    if let Status::Blocked(_) = th.status {
        th.status = Status::Runnable;
    }
    Target::Thread(t)
}

/// Whether teardown stops trying to unwind thread `me`, which reached a switch point in
/// teardown without unwinding: it caught the marker too often, or it cannot be unwound.
pub(super) fn gives_up_on(st: &ExecState, me: Tid) -> bool {
    let th = &st.threads[me];
    th.life.aborts_caught() >= CATCH_LIMIT || th.life.exiting() || std::thread::panicking()
}

/// Leaves thread `me` as it is: teardown never runs it again.
pub(super) fn leave_behind(st: &mut ExecState, me: Tid) {
    st.threads[me].life.leave_behind();
}
