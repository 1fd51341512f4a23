//! The scheduler loop, split as collect-runnable → ask-strategy → record-decision → hand-off.
//!
//! While the execution runs, the strategy decides at every switch point where two or more
//! threads could run. Once a failure is recorded the execution tears down instead, and
//! `teardown.rs` decides who runs.

use super::execution::StateGuard as MutexGuard;

use super::execution::{
    Blocked, DecisionRecord, ExecState, FailureDraft, Phase, Status, Target, Unwinding, Wake,
};
use super::host::{self, Turn};
use super::trace::{Event, TRACE_LEN};
use super::{
    Context, Key, Loc, ObjId, ObjectHandle, Op, OpKind, Tid, events, failure, held, panic, spins,
    teardown,
};
use crate::op::Effect;
use crate::op::PickKind;
use crate::op::Role;
use crate::settings::SpinRule;
use crate::strategy::{Choice, Pick, Refusal};

/// What runs after a scheduling point while the execution runs.
#[derive(Debug)]
enum Next {
    /// This thread runs (possibly the caller).
    Run(Tid),
    /// Every thread has finished.
    Done,
    /// Live threads remain and none can run, even after firing timeouts.
    Stuck,
}

pub(super) fn switch_point(
    ctx: &Context,
    kind: OpKind,
    obj: Option<&ObjectHandle>,
    loc: Loc,
) -> Option<ObjId> {
    switch_point_held(ctx, kind, obj, loc).0
}

/// [`switch_point`], also returning the execution's state still locked when the caller
/// goes on without handing off (the common case), so that an operation that acts on the
/// state at once (an atomic's) need not lock it again.
#[inline]
pub(super) fn switch_point_held<'a>(
    ctx: &'a Context,
    kind: OpKind,
    obj: Option<&ObjectHandle>,
    loc: Loc,
) -> (Option<ObjId>, Option<MutexGuard<'a, ExecState>>) {
    let exec = &ctx.exec;
    let me = ctx.tid;
    let mut st = exec.state.lock();
    let obj = match obj.map(|h| (h, h.resolve(exec.id, &mut st.objects, loc))) {
        None => None,
        Some((_, Ok(id))) => Some(id),
        Some((h, Err(foreign))) => match foreign_here(ctx, &mut st, h, &foreign, loc) {
            Some(id) => Some(id),
            None => return raise_abort(ctx, st),
        },
    };
    let step = count_step(&mut st, me, (kind, obj, loc));
    if acts_at_once(&mut st, me) {
        let op = st.threads[me].pending;
        spins::performs(&mut st, me, &op);
        events::synchronize(&mut st, me, &op);
        if let Some(hb) = st.hb.as_deref_mut() {
            hb.also(&op);
        }
        return (obj, Some(st));
    }
    if st.phase == Phase::TearingDown {
        return raise_abort(ctx, st);
    }
    if step > st.config.max_steps {
        if st.config.ambient {
            if super::ambient::checkpoint(ctx, &mut st, me, loc) {
                return raise_abort(ctx, st);
            }
        } else if over_limit(&st, step) {
            if st.config.pass_at_max_steps {
                end_as_pass(&mut st);
            } else {
                fail_unless_a_panic_is_kept(&mut st, |st| failure::livelock(st, me));
            }
            return raise_abort(ctx, st);
        }
    }
    if st.config.spins == SpinRule::Repeats {
        let op = st.threads[me].pending;
        spins::reached(&mut st, me, &op);
    }
    events::end(&mut st);
    let next = pick_next(&mut st, me);
    (obj, dispatch(ctx, st, next))
}

/// The id of `handle`, a primitive another execution used first, where the running thread
/// `ctx` uses it: the ambient execution of an OS thread may take it over
/// (`ambient::take_over`); otherwise a `Misuse` failure is recorded (`None`).
#[cold]
fn foreign_here(
    ctx: &Context,
    st: &mut ExecState,
    handle: &ObjectHandle,
    foreign: &super::object::ForeignObject,
    loc: Loc,
) -> Option<ObjId> {
    if st.config.ambient {
        return super::ambient::take_over(ctx, st, handle, foreign, loc);
    }
    st.fail(|st| failure::foreign_object(st, ctx.tid, foreign, loc));
    None
}

/// Counts thread `me`'s next operation, `kind` at `loc` on no object, as a step with no
/// decision before it, and returns `true`; or returns `false`, counting nothing, when it
/// must be a switch point after all: the thread runs straight through (it unwinds or
/// exits), the execution tears down, or the step would pass the limit (the switch point
/// reports the livelock). For an operation that only the thread itself can observe, after
/// which it blocks or ends its wait by a decision: a future's wait between polls that finds
/// no wake (`wakes::wait`, where the argument is).
pub(super) fn step_in_place(st: &mut ExecState, me: Tid, kind: OpKind, loc: Loc) -> bool {
    let limit =
        st.step >= st.config.max_steps && (st.config.ambient || over_limit(st, st.step + 1));
    if st.phase != Phase::Running || acts_at_once(st, me) || limit {
        return false;
    }
    count_step(st, me, (kind, None, loc));
    true
}

/// Fails the execution, which cannot go on (a deadlock, a livelock): with the earliest
/// task panic kept unreceived if there is one (it came first, and nobody can receive it
/// now: `held.rs`), else with `make`'s failure.
fn fail_unless_a_panic_is_kept(st: &mut ExecState, make: impl FnOnce(&ExecState) -> FailureDraft) {
    match held::first(st) {
        Some(unreceived) => st.fail(|_| unreceived),
        None => st.fail(make),
    }
}

/// The execution reached `max_steps` with `pass_at_max_steps`: it ends here as a pass. Its
/// threads are torn down as after a failure, but every one is unwound (none left behind:
/// a model cut in every execution would soon leave the process's cap of them behind), so
/// what they own is dropped. A task's panic kept for a handle nobody looked at yet is no
/// failure: the program might have looked later.
fn end_as_pass(st: &mut ExecState) {
    st.cut = true;
    st.phase = Phase::TearingDown;
    st.unwind_all = Some(true);
}

/// How many steps at which one thread alone could run count as one towards `max_steps`.
/// A livelock is threads that keep running without the program going anywhere; a step
/// at which no other thread could run makes no decision between threads, and a long
/// program on one thread (Tokio's `try_reserve_many_full`: some 378,000 channel operations)
/// is no livelock. Such steps still count, ten times less, so that one thread looping
/// for ever alone (the others blocked for good) is still reported, at ten times the bound.
pub(crate) const LONE_STEPS_PER_STEP: u64 = 10;

/// Whether step `step` of the execution passes `max_steps`: its steps at which threads
/// were choices, plus a tenth of those at which one thread alone could run.
fn over_limit(st: &ExecState, step: u64) -> bool {
    let lone = st.lone_steps.min(step);
    (step - lone) + lone / LONE_STEPS_PER_STEP > st.config.max_steps
}

/// Counts a step of thread `me`, about to do `kind` on `obj` at `loc`: its pending operation, the trace near the step limit, the end of a row of
/// spins or failed tries. Returns the step's number.
#[inline(always)]
fn count_step(st: &mut ExecState, me: Tid, (kind, obj, loc): (OpKind, Option<ObjId>, Loc)) -> u64 {
    st.step += 1;
    let step = st.step;
    // Only a livelock report reads the trace: the last steps before the limit.
    if step + TRACE_LEN as u64 > st.config.max_steps {
        let op = Op { kind, obj, loc };
        st.trace.push(Event { step, tid: me, op });
    }
    let thread = &mut st.threads[me];
    // Field by field: a whole `Op` built first goes through the stack, and copying it
    // stalls on store forwarding (measured: a fifth of a switch point's time).
    thread.pending.kind = kind;
    thread.pending.obj = obj;
    thread.pending.loc = loc;
    thread.steps += 1;
    let effect = kind.effect();
    if effect != Effect::Yield {
        thread.signals.end_row();
    }
    if effect != Effect::Try {
        thread.last_failed_try = None;
    }
    step
}

/// Whether thread `me` runs its next operation without a decision: it unwinds (its
/// destructors run straight through, as they would in a real program that cannot be
/// preempted by a test), it is exiting (destroying its thread-locals), or, in teardown, it
/// waits for its scoped threads.
fn acts_at_once(st: &mut ExecState, me: Tid) -> bool {
    let tearing_down = st.phase == Phase::TearingDown;
    let thread = &mut st.threads[me];
    if thread.life.unwinding() != Unwinding::No && !std::thread::panicking() {
        // It caught its panic (or the teardown's) and goes on.
        thread.life.unwinding_caught();
    }
    let life = &thread.life;
    life.unwinding() != Unwinding::No || life.exiting() || (life.lingers() && tearing_down)
}

pub(super) fn block(ctx: &Context, why: Blocked) -> Wake {
    let me = ctx.tid;
    let mut st = ctx.exec.state.lock();
    let lingering = acts_at_once(&mut st, me);
    if st.phase == Phase::TearingDown && !lingering {
        return raise_abort(ctx, st);
    }
    st.threads[me].status = Status::Blocked(why);
    st.threads[me].blocked_seq = st.next_block_seq;
    st.next_block_seq += 1;
    let next = match st.phase {
        Phase::Running => {
            events::end(&mut st);
            pick_next(&mut st, me)
        }
        Phase::TearingDown => Ok(Next::Run(me)), // decided in `dispatch`
    };
    dispatch(ctx, st, next);
    ctx.exec.state.lock().threads[me].wake
}

/// Called when a thread first gets control. `false`: teardown reached it before it started,
/// so its body must be dropped without running.
pub(super) fn begin(ctx: &Context) -> bool {
    let mut st = ctx.exec.state.lock();
    st.threads[ctx.tid].life.begin()
}

/// Marks the calling thread as exiting: its body returned or unwound, and what it leaves
/// (its thread-locals) is being destroyed. It is not preempted or aborted any more.
pub(super) fn exiting(ctx: &Context) {
    let mut st = ctx.exec.state.lock();
    st.threads[ctx.tid].life.exit();
}

/// Marks the calling thread finished, wakes its joiners and hands control on; the caller
/// then leaves the model for good. What a task runs when it finishes (its `JoinHandle`'s
/// waker) runs first, without the state's lock.
pub(super) fn finish(ctx: &Context) {
    let me = ctx.tid;
    let mut st = ctx.exec.state.lock();
    if let Some(hook) = super::wakes::take_on_finish(&mut st, me) {
        drop(st);
        hook.finished();
        st = ctx.exec.state.lock();
    }
    st.threads[me].status = Status::Finished;
    spins::changes(&mut st, me, Key::Thread(me));
    for t in 0..st.threads.len() {
        if matches!(st.threads[t].status, Status::Blocked(b) if b.thread == Some(me)) {
            wake(&mut st, t, Wake::Notified);
        }
    }
    if st.tracked() {
        st.mem.finished(me);
    }
    if st.phase == Phase::Running {
        events::declare(&mut st, Key::Thread(me), Role::Release);
        events::end(&mut st);
    }
    let target = match st.phase {
        Phase::TearingDown => teardown::next(&mut st),
        Phase::Running => match pick_next(&mut st, me) {
            Ok(Next::Run(_)) if st.phase == Phase::TearingDown => teardown::next(&mut st),
            Ok(Next::Run(t)) => Target::Thread(t),
            Ok(Next::Done) => match held::first(&mut st) {
                Some(unreceived) => {
                    st.fail(|_| unreceived);
                    teardown::next(&mut st)
                }
                None => Target::End,
            },
            Ok(Next::Stuck) => {
                fail_unless_a_panic_is_kept(&mut st, |st| failure::deadlock(st, None));
                teardown::next(&mut st)
            }
            Err(refusal) => {
                st.fail(|st| failure::refusal(st, &refusal));
                teardown::next(&mut st)
            }
        },
    };
    let _ = hand_off(ctx, st, target, true);
}

/// Acts on a decision for the running thread `ctx.tid`: continue, or hand off and wait to be
/// chosen again. A failure switches the execution to teardown, which decides instead.
/// Returns the state, still locked, when the thread continues without a hand-off.
fn dispatch<'a>(
    ctx: &Context,
    mut st: MutexGuard<'a, ExecState>,
    next: Result<Next, Refusal>,
) -> Option<MutexGuard<'a, ExecState>> {
    let me = ctx.tid;
    let target = match next {
        Ok(Next::Run(t)) if t == me && st.phase == Phase::Running => return Some(st),
        Ok(Next::Run(_)) if st.phase == Phase::TearingDown => teardown::next(&mut st),
        Ok(Next::Run(t)) => Target::Thread(t),
        Ok(Next::Done) => unreachable!("the running thread has not finished"),
        Ok(Next::Stuck) => {
            fail_unless_a_panic_is_kept(&mut st, |st| failure::deadlock(st, Some(me)));
            if st.config.ambient {
                return super::ambient::raise(ctx, st);
            }
            teardown::next(&mut st)
        }
        Err(refusal) => {
            st.fail(|st| failure::refusal(st, &refusal));
            teardown::next(&mut st)
        }
    };
    if target == Target::Thread(me) && runnable(&st, me) {
        // Teardown continues with this very thread.
        after_resume(ctx, st);
        return None;
    }
    if hand_off(ctx, st, target, false) {
        raise_abort(ctx, ctx.exec.state.lock())
    }
    None
}

/// The running thread `ctx.tid` stops running and `to` runs, as [`host::hand_off`] does it.
/// Unless `leaving` (the thread finished), this returns when the thread is chosen to run
/// again, with whether teardown asks it to unwind.
fn hand_off(ctx: &Context, mut st: MutexGuard<'_, ExecState>, to: Target, leaving: bool) -> bool {
    let me = ctx.tid;
    let turn = turn(&mut st, to);
    let mine = st.threads[me].hosting;
    let preempted = runnable(&st, me);
    host::hand_off(ctx, st, mine, turn, preempted, leaving)
}

/// What the driver does when control goes to `to`, which then counts as the running thread.
pub(super) fn turn(st: &mut ExecState, to: Target) -> Turn {
    match to {
        Target::End => Turn::End,
        Target::Thread(t) => {
            st.running = t;
            let thread = &st.threads[t];
            Turn::Run {
                thread: t,
                hosting: thread.hosting,
                abort: thread.life.must_unwind(),
            }
        }
    }
}

fn runnable(st: &ExecState, t: Tid) -> bool {
    matches!(st.threads[t].status, Status::Runnable)
}

/// Runs when the calling thread gets control back: if teardown asked it to unwind, it does.
fn after_resume(ctx: &Context, st: MutexGuard<'_, ExecState>) {
    if st.threads[ctx.tid].life.must_unwind() {
        raise_abort(ctx, st)
    }
}

/// Unwinds the calling thread with the teardown marker; the execution is over. A thread
/// that keeps catching it is left alone (see `teardown.rs`).
pub(super) fn raise_abort<T>(ctx: &Context, mut st: MutexGuard<'_, ExecState>) -> T {
    if st.config.ambient {
        // No teardown: the only thread panics with the failure, and the execution goes on.
        return super::ambient::raise(ctx, st);
    }
    let me = ctx.tid;
    if teardown::gives_up_on(&st, me) {
        teardown::leave_behind(&mut st, me);
        let target = teardown::next(&mut st);
        let _ = hand_off(ctx, st, target, false);
        unreachable!("a thread left behind is never resumed");
    }
    st.threads[me].life.unwind_for_teardown();
    drop(st);
    std::panic::resume_unwind(Box::new(panic::Abort))
}

/// Collects the runnable threads, fires timeouts if there are none, and asks the strategy
/// when there is a real choice.
fn pick_next(st: &mut ExecState, me: Tid) -> Result<Next, Refusal> {
    let mut runnable = std::mem::take(&mut st.scratch);
    collect_runnable(st, &mut runnable);
    // Shutting detached tasks down comes first: the program's work is done, and a task
    // that waits for a timer between polls (an `interval` loop) is dropped, not fired.
    if runnable.is_empty() && super::wakes::shut_down(st) {
        collect_runnable(st, &mut runnable);
    }
    if runnable.is_empty() && fire_timeouts(st) {
        collect_runnable(st, &mut runnable);
    }
    st.lone_steps += u64::from(runnable.len() == 1);
    // A thread that repeated a spin waits as a blocked thread does (`spins.rs`).
    spins::hold_back(st, &mut runnable);
    if super::exclusive::violated(st, &runnable) {
        // The execution failed: teardown decides from here, with no decision.
        st.scratch = runnable;
        return Ok(Next::Run(me));
    }
    let next = match runnable.len() {
        0 if st.threads.iter().all(|t| t.finished()) => Ok(Next::Done),
        0 => Ok(Next::Stuck),
        1 => Ok(Next::Run(runnable[0])),
        _ => ask_strategy(st, &runnable, me).map(Next::Run),
    };
    if let Ok(Next::Run(t)) = next {
        if t != me {
            st.switches += 1;
            st.preemptions += u64::from(runnable.contains(&me));
        }
        events::begin(st, t, runnable.len() > 1, &runnable);
    }
    st.scratch = runnable;
    next
}

/// Asks the strategy to pick one of `runnable` (two or more) and records the decision.
fn ask_strategy(st: &mut ExecState, runnable: &[Tid], me: Tid) -> Result<Tid, Refusal> {
    let mut ops = std::mem::take(&mut st.scratch_ops);
    ops.clear();
    if st.strategy_reads_ops {
        ops.extend(runnable.iter().map(|&t| st.threads[t].pending));
    }
    let current = runnable.contains(&me).then_some(me);
    let choice = Choice {
        runnable,
        ops: &ops,
        current,
        current_spins: current.is_some() && st.threads[me].signals.take_spinning(),
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
    bound_record(st);
    st.decisions.push(DecisionRecord {
        step: st.step,
        chosen,
        options,
        op,
        pick: None,
        woke: None,
        fired: None,
        named: None,
    });
    Ok(chosen)
}

/// Asks the strategy for a decision of thread `me` other than the choice of a thread and
/// records it; one option is no decision, and teardown decides nothing (option 0).
pub(super) fn decide(
    st: &mut ExecState,
    me: Tid,
    kind: PickKind,
    options: usize,
) -> Result<usize, Refusal> {
    if options < 2 || st.phase == Phase::TearingDown {
        return Ok(0);
    }
    let pick = Pick {
        kind,
        options,
        tid: me,
    };
    let strategy = st
        .strategy
        .as_mut()
        .expect("the strategy is present while the execution runs");
    let value = strategy.pick(&pick)?;
    bound_record(st);
    st.decisions.push(DecisionRecord {
        step: st.step,
        chosen: me,
        options,
        op: st.threads[me].pending,
        pick: Some((kind, value)),
        woke: None,
        fired: None,
        named: None,
    });
    Ok(value)
}

/// Decisions an ambient execution keeps: it writes no schedule, and a plain test that runs
/// for long would otherwise grow the list without bound. What reads recent decisions
/// (`data.rs`, `waits.rs`) reads the one just recorded.
const AMBIENT_RECORD: usize = 1024;

/// Makes room for a decision record: an ambient execution forgets its older ones.
#[inline]
fn bound_record(st: &mut ExecState) {
    if st.config.ambient && st.decisions.len() >= AMBIENT_RECORD {
        st.decisions.clear();
    }
}

fn collect_runnable(st: &ExecState, out: &mut Vec<Tid>) {
    out.clear();
    for t in 0..st.threads.len() {
        if enabled(st, t) {
            out.push(t);
        }
    }
}

/// Whether thread `t` can run now: it is not blocked, and the operation it is about to
/// perform can take effect (a lock that is held, a `recv` on an empty channel, a join of a
/// running thread cannot; such a thread is not a choice).
#[inline]
pub(super) fn enabled(st: &ExecState, t: Tid) -> bool {
    runnable(st, t) && op_enabled(st, t)
}

/// Whether the next operation of thread `t` can take effect now.
#[inline]
pub(super) fn op_enabled(st: &ExecState, t: Tid) -> bool {
    let op = &st.threads[t].pending;
    match op.kind.joined() {
        Some(target) => st.threads[target].finished(),
        None => op.obj.is_none_or(|o| st.objects[o].enabled(op.kind, t)),
    }
}

/// Advances virtual time to the earliest deadline of a blocked thread and wakes every thread
/// whose deadline it is. Returns whether any thread woke.
pub(super) fn fire_timeouts(st: &mut ExecState) -> bool {
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
    if st.config.ambient
        && !st.timers.paused()
        && deadline > st.clock
        && !super::ambient::sleep(st, deadline - st.clock)
    {
        // Outside a model time is real unless paused, as std's and Tokio's: the only
        // thread slept until the deadline, unless it is so far that it waits for ever.
        return false;
    }
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
    if !matches!(st.threads[tid].status, Status::Blocked(_)) {
        return;
    }
    match how {
        Wake::TimedOut => events::timed_out(st, tid),
        Wake::Notified => {
            if st.tracked() {
                st.mem.woke(st.running, tid);
            }
            events::waking(st, tid);
        }
    }
    let thread = &mut st.threads[tid];
    thread.status = Status::Runnable;
    thread.wake = how;
}
