//! The scheduler loop, split as collect-runnable → ask-strategy → record-decision → hand-off.

use parking_lot::MutexGuard;

use super::execution::{Blocked, DecisionRecord, ExecState, Status, Wake};
use super::failure;
use super::switch::Turn;
use super::trace::Event;
use super::{Context, Loc, ObjId, ObjectHandle, Op, Tid};
use crate::strategy::{Choice, Refusal};

/// What runs after a scheduling point.
#[derive(Debug)]
pub(super) enum Next {
    /// This thread runs (possibly the caller).
    Run(Tid),
    /// Every thread has finished.
    Done,
    /// Live threads remain and none can run, even after firing timeouts.
    Stuck,
}

pub(super) fn switch_point(
    ctx: &Context,
    kind: &'static str,
    obj: Option<&ObjectHandle>,
    loc: Loc,
) -> Option<ObjId> {
    let exec = &ctx.exec;
    let me = ctx.tid;
    let mut st = exec.state.lock();
    let obj = match obj.map(|h| h.resolve(exec.id, &mut st.objects, loc)) {
        None => None,
        Some(Ok(id)) => Some(id),
        Some(Err(foreign)) => {
            st.fail(|st| failure::foreign_object(st, me, foreign.kind, loc));
            return abort(ctx, st);
        }
    };
    let op = Op { kind, obj, loc };
    st.step += 1;
    let step = st.step;
    st.trace.push(Event { step, tid: me, op });
    let thread = &mut st.threads[me];
    thread.pending = op;
    thread.steps += 1;
    if std::thread::panicking() || matches!(st.threads[me].status, Status::Finished) {
        // Unwinding (a failure in this thread, or teardown), or dropping what a finished
        // thread's body captured: act at once, never preempt.
        return obj;
    }
    if exec.baton.aborted() {
        return abort(ctx, st);
    }
    if step > st.config.max_steps {
        st.fail(|st| failure::livelock(st, me));
        return abort(ctx, st);
    }
    let next = pick_next(&mut st, me);
    dispatch(ctx, st, next);
    obj
}

pub(super) fn block(ctx: &Context, why: Blocked) -> Wake {
    let me = ctx.tid;
    let mut st = ctx.exec.state.lock();
    if ctx.exec.baton.aborted() {
        return abort(ctx, st);
    }
    st.threads[me].status = Status::Blocked(why);
    st.threads[me].blocked_seq = st.next_block_seq;
    st.next_block_seq += 1;
    let next = pick_next(&mut st, me);
    dispatch(ctx, st, next);
    ctx.exec.state.lock().threads[me].wake
}

/// Whether the calling thread runs code of an execution that already ended; see
/// [`super::detached`].
pub(super) fn detached(ctx: &Context) -> bool {
    ctx.exec.baton.aborted()
        && (std::thread::panicking()
            || matches!(
                ctx.exec.state.lock().threads[ctx.tid].status,
                Status::Finished
            ))
}

/// Marks the calling thread finished and hands the baton on; the caller then exits.
pub(super) fn finish(ctx: &Context) {
    let me = ctx.tid;
    let mut st = ctx.exec.state.lock();
    st.threads[me].status = Status::Finished;
    let joiners: Vec<Tid> = (0..st.threads.len())
        .filter(|&t| matches!(st.threads[t].status, Status::Blocked(b) if b.thread == Some(me)))
        .collect();
    for t in joiners {
        wake(&mut st, t, Wake::Notified);
    }
    if ctx.exec.baton.aborted() {
        return;
    }
    let next = pick_next(&mut st, me);
    match next {
        Ok(Next::Run(t)) => {
            let os = st.threads[t]
                .os
                .clone()
                .expect("a runnable thread has started");
            drop(st);
            ctx.exec.baton.pass(t, &os);
        }
        Ok(Next::Done) => {}
        Ok(Next::Stuck) => {
            st.fail(|st| failure::deadlock(st, None));
            abort_all(ctx, &st);
        }
        Err(div) => {
            st.fail(|st| failure::refusal(st, &div));
            abort_all(ctx, &st);
        }
    }
}

/// Acts on the scheduler's answer for the running thread `ctx.tid`: continue, hand off and
/// wait for the baton, or end the execution with a failure.
fn dispatch(ctx: &Context, mut st: MutexGuard<'_, ExecState>, next: Result<Next, Refusal>) {
    let me = ctx.tid;
    match next {
        Ok(Next::Run(t)) if t == me => {}
        Ok(Next::Run(t)) => {
            let os = st.threads[t]
                .os
                .clone()
                .expect("a runnable thread has started");
            // A preempted thread may be chosen at the very next decision: it spins for the
            // baton. A blocked one cannot run before another thread wakes it: it parks.
            let preempted = matches!(st.threads[me].status, Status::Runnable);
            drop(st);
            ctx.exec.baton.pass(t, &os);
            if ctx.exec.baton.wait(me, preempted) == Turn::Abort {
                abort_self(ctx);
            }
        }
        Ok(Next::Done) => unreachable!("the running thread has not finished"),
        Ok(Next::Stuck) => {
            st.fail(|st| failure::deadlock(st, Some(me)));
            abort(ctx, st)
        }
        Err(div) => {
            st.fail(|st| failure::refusal(st, &div));
            abort(ctx, st)
        }
    }
}

/// Collects the runnable threads, fires timeouts if there are none, and asks the strategy
/// when there is a real choice.
fn pick_next(st: &mut ExecState, me: Tid) -> Result<Next, Refusal> {
    let mut runnable = std::mem::take(&mut st.scratch);
    collect_runnable(st, &mut runnable);
    if runnable.is_empty() && fire_timeouts(st) {
        collect_runnable(st, &mut runnable);
    }
    let next = match runnable.len() {
        0 if st
            .threads
            .iter()
            .all(|t| matches!(t.status, Status::Finished)) =>
        {
            Ok(Next::Done)
        }
        0 => Ok(Next::Stuck),
        1 => Ok(Next::Run(runnable[0])),
        _ => ask_strategy(st, &runnable, me).map(Next::Run),
    };
    if let Ok(Next::Run(t)) = next {
        if t != me {
            st.switches += 1;
            st.preemptions += u64::from(runnable.contains(&me));
        }
    }
    st.scratch = runnable;
    next
}

/// Asks the strategy to pick one of `runnable` (two or more) and records the decision.
fn ask_strategy(st: &mut ExecState, runnable: &[Tid], me: Tid) -> Result<Tid, Refusal> {
    let mut ops = std::mem::take(&mut st.scratch_ops);
    ops.clear();
    ops.extend(runnable.iter().map(|&t| st.threads[t].pending));
    let current = runnable.contains(&me).then_some(me);
    let choice = Choice {
        runnable,
        ops: &ops,
        current,
        current_spins: current.is_some() && std::mem::take(&mut st.threads[me].spinning),
        step: st.step,
    };
    let strategy = st
        .strategy
        .as_mut()
        .expect("the strategy is present while the execution runs");
    let chosen = strategy.choose(&choice);
    st.scratch_ops = ops;
    let chosen = chosen?;
    let op = st.threads[chosen].pending;
    let options = runnable.len();
    st.decisions.push(DecisionRecord {
        step: st.step,
        chosen,
        options,
        op,
    });
    Ok(chosen)
}

fn collect_runnable(st: &ExecState, out: &mut Vec<Tid>) {
    out.clear();
    out.extend((0..st.threads.len()).filter(|&t| matches!(st.threads[t].status, Status::Runnable)));
}

/// Advances virtual time to the earliest deadline of a blocked thread and wakes every thread
/// whose deadline it is. Returns whether any thread woke.
fn fire_timeouts(st: &mut ExecState) -> bool {
    let earliest = st
        .threads
        .iter()
        .filter_map(|t| match t.status {
            Status::Blocked(b) => b.deadline,
            _ => None,
        })
        .min();
    let Some(deadline) = earliest else {
        return false;
    };
    st.clock = st.clock.max(deadline);
    for t in 0..st.threads.len() {
        if matches!(st.threads[t].status, Status::Blocked(b) if b.deadline == Some(deadline)) {
            wake(st, t, Wake::TimedOut);
        }
    }
    true
}

/// Makes a blocked thread runnable.
pub(super) fn wake(st: &mut ExecState, tid: Tid, how: Wake) {
    let thread = &mut st.threads[tid];
    if let Status::Blocked(_) = thread.status {
        thread.status = Status::Runnable;
        thread.wake = how;
    }
}

/// Threads blocked on `obj`, in the order they blocked.
pub(super) fn waiters(st: &ExecState, obj: ObjId) -> Vec<Tid> {
    let mut found: Vec<Tid> = (0..st.threads.len())
        .filter(|&t| matches!(st.threads[t].status, Status::Blocked(b) if b.obj == Some(obj)))
        .collect();
    found.sort_by_key(|&t| st.threads[t].blocked_seq);
    found
}

/// Ends the execution (its failure is already recorded) and unwinds the caller.
fn abort<T>(ctx: &Context, st: MutexGuard<'_, ExecState>) -> T {
    abort_all(ctx, &st);
    drop(st);
    abort_self(ctx)
}

/// Wakes every waiting thread of the execution so that each unwinds.
pub(super) fn abort_all(ctx: &Context, st: &ExecState) {
    let waiting = st
        .threads
        .iter()
        .filter(|t| !matches!(t.status, Status::Finished));
    ctx.exec.baton.abort(waiting.filter_map(|t| t.os.as_ref()));
}

/// Leaves model code after the execution ended: unwind with the abort marker, or, when the
/// thread is already unwinding (a destructor that blocks), park this OS thread for good so
/// that no second panic aborts the process.
fn abort_self(ctx: &Context) -> ! {
    if !std::thread::panicking() {
        std::panic::resume_unwind(Box::new(super::panic::Abort));
    }
    super::thread::exited(&ctx.exec);
    loop {
        std::thread::park();
    }
}
