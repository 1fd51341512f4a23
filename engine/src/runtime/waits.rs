//! What std allows a wait to do besides waiting: time out while other threads could still
//! act, wake without a wake-up, fail a weak compare-and-exchange; and which waiter a
//! `notify_one` wakes. Each is a decision of the strategy (see `PickKind`).
//!
//! Under a paused clock (`Clock::Paused`, Tokio's `pause`) no timed wait times out while
//! other threads could act: the clock moves only when every thread waits (`timers.rs`).
//!
//! A depth-first search offers each thread at most [`ExecConfig::early_limit`](super::ExecConfig::early_limit) early
//! endings (timeouts, spurious wake-ups and failures together) per execution: a wait in a
//! loop could otherwise end early again and again, and the search would never end.
//! Random and PCT have no such limit (each early ending has probability 1/2, so a loop
//! ends).

use std::time::Duration;

use super::atomics::with_memory;
use super::execution::{ExecState, Fired, Status, Wake};
use super::timers::Armed;
use super::{Key, Tid, events, sched};
use crate::op::PickKind;
use crate::op::Role;
use crate::strategy::Refusal;

/// How a wait that is about to block ends instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Early {
    /// It does not: it blocks.
    No,
    /// Its deadline passes now (the virtual clock moves to it).
    TimedOut,
    /// It returns at once, without a wake-up.
    Spurious,
}

/// Decides whether the calling thread's wait, about to block with `deadline` (if timed),
/// ends early instead; `spurious`: the wait may wake without a wake-up.
pub fn early(api: &str, deadline: Option<Duration>, spurious: bool) -> Early {
    with_memory(api, |st, me| early_in(st, me, deadline, spurious))
}

/// [`early`] for thread `me`, under the state's lock the caller holds.
pub(super) fn early_in(
    st: &mut ExecState,
    me: Tid,
    deadline: Option<Duration>,
    spurious: bool,
) -> Result<Early, Refusal> {
    if let Some(deadline) = deadline.filter(|_| !st.timers.paused())
        && may_end_early_counted(st, me)
        && sched::decide(st, me, PickKind::TimeOut, 2)? == 1
    {
        st.threads[me].early += 1;
        note_fired(st, deadline);
        time_passes(st, deadline);
        return Ok(Early::TimedOut);
    }
    let spurious = spurious && st.config.spurious && may_end_early_counted(st, me);
    if spurious && sched::decide(st, me, PickKind::SpuriousWake, 2)? == 1 {
        st.threads[me].early += 1;
        return Ok(Early::Spurious);
    }
    Ok(Early::No)
}

/// Notes on the decision just recorded (the early timeout) what fired, for reports: the
/// waiting operation itself (a future's wait names its timer's call afterwards,
/// [`name_timer`]).
fn note_fired(st: &mut ExecState, deadline: Duration) {
    let clock = st.clock;
    if let Some(d) = st.decisions.last_mut()
        && d.pick == Some((PickKind::TimeOut, 1))
    {
        d.fired = Some(Fired {
            armed: Armed {
                api: d.op.name(),
                at: d.op.loc,
            },
            timer: false,
            deadline,
            clock,
        });
    }
}

/// The early timeout just decided ended thread `me`'s wait between polls: the decision
/// names the call that made the timer with the earliest deadline, which fired.
pub(super) fn name_timer(st: &mut ExecState, me: Tid) {
    let Some((_, armed)) = super::timers::earliest_timer(st, me) else {
        return;
    };
    if let Some(Fired {
        armed: a, timer, ..
    }) = st.decisions.last_mut().and_then(|d| d.fired.as_mut())
    {
        (*a, *timer) = (armed, true);
    }
}

/// Whether thread `me` may still end a wait early, or fail spuriously.
pub(super) fn may_end_early(st: &ExecState, me: Tid) -> bool {
    st.config
        .early_limit
        .is_none_or(|limit| st.threads[me].early < limit)
}

/// [`may_end_early`], counting a wait that may not (`ExecState::early_withheld`).
fn may_end_early_counted(st: &mut ExecState, me: Tid) -> bool {
    let may = may_end_early(st, me);
    st.early_withheld += u64::from(!may);
    may
}

/// Whether the calling thread's `compare_exchange_weak`, which could succeed, fails.
pub(super) fn fails_spuriously(st: &mut ExecState, me: Tid) -> Result<bool, Refusal> {
    if !st.config.spurious || !may_end_early_counted(st, me) {
        return Ok(false);
    }
    let fails = sched::decide(st, me, PickKind::SpuriousFailure, 2)? == 1;
    st.threads[me].early += u32::from(fails);
    Ok(fails)
}

/// The virtual clock moves to `deadline`: every wait whose deadline it reaches times out.
pub(super) fn time_passes(st: &mut ExecState, deadline: Duration) {
    events::declare(st, Key::Time, Role::Write);
    if deadline <= st.clock {
        return;
    }
    super::spins::moved(st, Key::Time);
    st.clock = deadline;
    for t in 0..st.threads.len() {
        if matches!(st.threads[t].status, Status::Blocked(b) if b.deadline.is_some_and(|d| d <= deadline))
        {
            sched::wake(st, t, Wake::TimedOut);
        }
    }
}

/// Which of `waiters` (two or more, longest waiting first) a `notify_one` wakes; a recorded
/// decision notes the thread, for reports.
pub fn notify_which(api: &str, waiters: &[Tid]) -> usize {
    with_memory(api, |st, me| {
        let recorded = st.decisions.len();
        let which = sched::decide(st, me, PickKind::Notify, waiters.len())?;
        if st.decisions.len() > recorded
            && let Some(d) = st.decisions.last_mut()
        {
            d.woke = Some(waiters[which]);
        }
        Ok(which)
    })
}
