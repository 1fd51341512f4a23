//! Timers of futures on the virtual clock: what `tokio::time`'s `sleep`, `timeout` and
//! `interval` wait for.
//!
//! A timer holds a deadline and the waker of the poll that last found it pending, and
//! belongs to the thread that made that poll (its *owner*: a spawned task's thread, or the
//! thread of a `block_on`). The owner's wait between polls (`wakes::wait`) is then a timed
//! wait whose deadline is its earliest timer's, so it ends as every timed wait of the
//! runtime does:
//! - when every thread is blocked, the clock jumps to the earliest deadline of all
//!   (`sched::fire_timeouts`), and the waits it reaches end;
//! - or at once, while other threads could still act: a decision (`PickKind::TimeOut`),
//!   as for `wait_timeout`, so timeout races are explored, not avoided. The clock then moves
//!   to the deadline (`waits::time_passes`), never past it.
//!
//! After the wait the owner wakes the wakers of its timers that are due and forgets them;
//! the futures see the clock at or past their deadline when polled. A timer never fires
//! before its deadline.
//!
//! When time is *paused* (Tokio's `pause` or `start_paused`, or the whole execution under
//! `Clock::Paused`), the second way is not offered, for timers as for the timed waits of
//! threads (`waits::early_in`), and spins do not move the clock (`events::spun`): paused
//! time moves only when every thread is idle (auto-advance) or by [`advance`]. Tokio's
//! state (`pause`, `resume`) is kept apart from the execution's clock, so that `pause`
//! under `Clock::Paused` is not "already frozen" and `resume` leaves that clock paused.
//!
//! Each timer keeps the call that made it ([`Armed`]: `tokio::time::timeout` and where),
//! which the decision that fires it early records for reports.
//!
//! Unpaused, a timer that fires early may move the clock past the deadline of another
//! timer that still waits, as the timed waits of threads do: that timer then fires late,
//! as on a loaded runtime. Instants are exact only under paused time.
//!
//! Soundness for reduction: a timer's firing is a timed wait's, which the search already
//! treats as depending on the clock (`Key::Time`, written by the jump, read by every poll
//! that compares the clock with a deadline); the timer table itself is read and written
//! only by its owner, or by a thread that took the future over through a synchronizing
//! operation (a channel, a lock, a join), so it adds no dependence the search must see.

use std::task::Waker;
use std::time::Duration;

use super::execution::ExecState;
use super::{Key, Loc, Tid, events, spins, with_ctx};
use crate::op::Role;
use crate::settings::Clock;

/// The execution's timers.
#[derive(Debug, Default)]
pub(crate) struct Timers {
    list: Vec<Timer>,
    next: u64,
    /// Tokio's `pause` (or `start_paused`) is in force, until its `resume`.
    frozen: bool,
    /// The execution runs on `Clock::Paused`, for its whole length.
    paused_clock: bool,
}

#[derive(Debug)]
struct Timer {
    id: u64,
    owner: Tid,
    deadline: Duration,
    armed: Armed,
    waker: Waker,
}

/// The call that made a timer, for reports: its API (`tokio::time::timeout`) and where the
/// program called it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Armed {
    /// The API that armed it (`tokio::time::timeout`).
    pub(crate) api: &'static str,
    /// Where the program called it.
    pub(crate) at: Loc,
}

impl Armed {
    /// A timer made by `api`, called at the caller's location.
    #[track_caller]
    pub fn here(api: &'static str) -> Armed {
        Armed {
            api,
            at: std::panic::Location::caller(),
        }
    }
}

/// A future's handle on its timer, kept between polls.
#[derive(Debug)]
pub struct TimerId {
    exec: u64,
    id: u64,
}

/// Polls a timer for `deadline` (virtual time since the start of the execution), made by
/// the call `armed`: `true` if the clock reached it (the timer is then forgotten), or
/// registers `waker` with the calling thread as owner and returns `false`. Reads the clock.
///
/// A waker this replaces or forgets is dropped after the execution's lock is released: its
/// drop may drop another timer's future, which calls back in here (as Tokio, whose timer
/// driver takes wakers out under its lock and drops or wakes them after).
#[track_caller]
pub fn poll(
    api: &str,
    slot: &mut Option<TimerId>,
    (deadline, armed): (Duration, Armed),
    waker: &Waker,
) -> bool {
    let (due, _old) = with_ctx(api, |ctx| {
        let (exec, me) = (ctx.exec.id, ctx.tid);
        let mut st = ctx.exec.state.lock();
        events::declare(&mut st, Key::Time, Role::Read);
        spins::observes(&mut st, me, Key::Time);
        let clock = st.clock;
        let timers = &mut st.timers;
        let mine = slot.as_ref().filter(|t| t.exec == exec).map(|t| t.id);
        let at = mine.and_then(|id| timers.list.iter().position(|t| t.id == id));
        if clock >= deadline {
            *slot = None;
            return (true, at.map(|i| timers.list.swap_remove(i).waker));
        }
        let Some(i) = at else {
            let id = mine.unwrap_or_else(|| {
                timers.next += 1;
                timers.next
            });
            let (owner, waker) = (me, waker.clone());
            timers.list.push(Timer {
                id,
                owner,
                deadline,
                armed,
                waker,
            });
            *slot = Some(TimerId { exec, id });
            return (false, None);
        };
        let timer = &mut timers.list[i];
        timer.owner = me;
        timer.deadline = deadline;
        timer.armed = armed;
        if timer.waker.will_wake(waker) {
            return (false, None);
        }
        (
            false,
            Some(std::mem::replace(&mut timer.waker, waker.clone())),
        )
    });
    due
}

impl Timers {
    /// No timers, on `clock`.
    pub(super) fn new(clock: Clock) -> Timers {
        Timers {
            paused_clock: clock == Clock::Paused,
            ..Timers::default()
        }
    }

    /// Whether time is paused: by Tokio's `pause`, or for the whole execution.
    pub(super) fn paused(&self) -> bool {
        self.frozen || self.paused_clock
    }
}

/// Forgets a timer (its future was dropped). Quiet outside its execution. Its waker is
/// dropped after the lock is released (see [`poll`]).
pub fn cancel(timer: &TimerId) {
    let _gone = super::with_exec(|ctx| {
        if ctx.exec.id != timer.exec {
            return None;
        }
        let mut st = ctx.exec.state.lock();
        let list = &mut st.timers.list;
        let at = list.iter().position(|t| t.id == timer.id)?;
        Some(list.remove(at))
    });
}

/// The earliest deadline of the timers thread `me` owns.
pub(super) fn earliest(st: &ExecState, me: Tid) -> Option<Duration> {
    earliest_timer(st, me).map(|(deadline, _)| deadline)
}

/// The earliest deadline of the timers thread `me` owns, with the call that made its timer
/// (the first made, of timers with that deadline).
pub(super) fn earliest_timer(st: &ExecState, me: Tid) -> Option<(Duration, Armed)> {
    let mine = st.timers.list.iter().filter(|t| t.owner == me);
    let first = mine.min_by_key(|t| (t.deadline, t.id))?;
    Some((first.deadline, first.armed))
}

/// The deadline thread `me`'s wait may time out at while others could still act: its
/// earliest, unless time is paused.
pub(super) fn early_deadline(st: &ExecState, me: Tid) -> Option<Duration> {
    earliest(st, me).filter(|_| !st.timers.paused())
}

/// Takes out the wakers of thread `me`'s due timers, to be woken (and dropped) outside the
/// lock.
pub(super) fn take_due(st: &mut ExecState, me: Tid) -> Vec<Waker> {
    let clock = st.clock;
    let due = |t: &Timer| t.owner == me && t.deadline <= clock;
    if !st.timers.list.iter().any(due) {
        return Vec::new();
    }
    let (fired, kept) = std::mem::take(&mut st.timers.list)
        .into_iter()
        .partition(|t| due(t));
    st.timers.list = kept;
    fired.into_iter().map(|t: Timer| t.waker).collect()
}

/// Pauses or resumes time for the rest of the execution (Tokio's `pause` and `resume`);
/// under `Clock::Paused` time stays paused after a resume.
#[track_caller]
pub fn set_paused(api: &str, paused: bool) {
    super::with_state(api, |a| a.st.timers.frozen = paused);
}

/// Whether Tokio's `pause` (or `start_paused`) is in force: what Tokio's `pause`, `resume`
/// and `advance` check, whatever the execution's clock.
#[track_caller]
pub fn paused(api: &str) -> bool {
    super::with_state(api, |a| a.st.timers.frozen)
}

/// Moves the clock `by` forward now (Tokio's `advance`): every wait whose deadline that
/// reaches ends, the calling thread's timers it reaches fire now (their wakers are woken
/// once the lock is released, as Tokio's driver fires them before `advance` returns), and
/// other threads' fire at their owner's next wait.
#[track_caller]
pub fn advance(api: &str, by: Duration) {
    let due = super::atomics::with_memory(api, |st, me| {
        let to = st.clock.saturating_add(by);
        super::waits::time_passes(st, to);
        Ok(take_due(st, me))
    });
    for waker in due {
        waker.wake();
    }
}
