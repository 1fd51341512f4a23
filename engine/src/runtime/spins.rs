//! Spin loops: which switch points repeat a spin, and how long a thread that repeats one
//! waits, so that an exhaustive search of a correct spin-wait ends.
//!
//! A depth-first search that lets one thread run as long as it can would unroll
//! `while !flag.load(Acquire) { yield_now() }` for ever before the thread that sets the flag
//! ever runs. The rule that stops it must not cut a behaviour in which the spinning thread
//! does anything but spin again.
//!
//! # The rule (`SpinRule::Repeats`: DFS, and replaying its schedules)
//! A thread *repeats a spin* when it comes back to a switch point (the same operation on
//! the same object at the same line, called by the same path: the return addresses of its
//! stack), it *spun* since it was last there (yielded, hinted a spin loop, or failed a
//! `try_lock`, `try_read` or `try_write`: the signs of a thread that waits, which loom asks
//! of spin loops too), and nothing it observed since it was last there has changed (nor has
//! it changed anything). A loop without such a sign (`for _ in 0..3 { v.push(x.load(..)) }`)
//! is never a spin, whatever it reads. What a thread
//! observes: the objects its operations only read (a load, a failed `try_lock`, `try_read`,
//! `try_write`, `try_recv`, `try_send` or compare-and-exchange, a lock it takes, a
//! `OnceLock` it reads), the clock (`Instant::now`), whether a thread finished, the counts
//! of an `Arc`. What changes an object: every other operation on it, except an atomic write
//! that leaves its value as it was and a lock released without its data borrowed mutably;
//! and a thread's end, the clock moving, an `Arc`'s count changing. Whether an operation
//! that changes its object only when it succeeds (a compare-and-exchange, a swap, a
//! `try_send`, an unlock) changed it is known once it has run: one that did not is an
//! observation of the object, as a load is. A failed `try_lock`, a yield, a load are
//! ordinary operations; only coming back, having spun, with nothing observed changed is a
//! spin.
//!
//! A thread that repeats a spin **waits** until something it observed changes: it is not a
//! choice until then. The event that changed it releases the thread when it ends, not
//! before, so an operation that turns out to change nothing (a failed compare-and-exchange
//! on the lock another spinner waits for) releases nobody. Spinners therefore cannot starve
//! the thread they wait for, and they never run each other in circles. If every thread that
//! can run waits, none does: they spin on, and a real livelock runs into `max_steps`. A
//! thread is judged again at every switch point it reaches: one that ran because every
//! thread waited waits on only if it repeats a spin again.
//!
//! # What it skips, and why nothing else
//! Only the schedules in which a thread that repeated a spin runs before something it
//! observed changes. From the repeated point the thread would observe what it observed the
//! time before, so it would do what it did from there the time before and come back again,
//! changing nothing (a loop whose body changes something is never a spin): running it later
//! reaches every state running it now reaches. Three things this argument does not cover,
//! which the rule therefore skips and the report names ("under fair scheduling of spin
//! loops") whenever a thread waited:
//! - the thread's *own local state* differs between the visits (a loop counter): a bounded
//!   retry loop (`for _ in 0..3 { if flag.load(..) { break } yield_now() } fallback()`)
//!   whose fallback runs only if the loop spins out before another thread acts is not
//!   explored at its third try or later, or at its second when an earlier loop ran from the
//!   same place (that loop's last try counts as the first visit); under a preemption bound,
//!   holding the thread there also makes some other schedules of the program cost a
//!   preemption more;
//! - a lock another thread takes and releases without writing its data changes nothing, so
//!   a thread that saw it held in between may be taken as repeating;
//! - a load after a repeated spin reads the newest store (a stale value could be read again
//!   without any new store).
//!
//! Futures: a task's wait between two polls (`TaskWait`) repeats as any switch point does,
//! when the task comes back to it having spun (`future::yield_now` marks a spin) with
//! nothing it observed changed. The wait observes the thread's park key, which a wake by
//! another thread writes (a change, which releases it); the task's own wake (the yield's)
//! changes nothing another thread could see, and is the same at every visit. What a poll
//! reads through modelled operations is observed as a thread's reads are. So the argument
//! above holds for a poll loop as for a thread's loop. State the model does not see (an
//! off-the-shelf future's own atomics, such as `futures::channel`'s queue) is observed by
//! nothing: a task that spins on it with `yield_now` is released only when something it
//! observed through the model changes or nothing else can run, and the schedules in which
//! it sees that state change earlier are skipped, under the same statement. Awaiting such a
//! future instead (its wake releases the task), or `fair_spins(false)`, loses nothing.
//!
//! `Builder::fair_spins(false)` turns the rule off (a spin loop then runs into `max_steps`
//! along the first path, a livelock).
//!
//! For partial-order reduction nothing else is needed: whether a thread repeats depends on
//! what it observed and on changes to it, which are conflicting accesses already; the event
//! that releases a waiting thread writes `Key::Yield` of it (at its end, still inside it),
//! which the thread's next event reads.

use std::hash::{Hash, Hasher};

use super::execution::ExecState;
use super::{Key, Op, Tid, events};
use crate::op::Role;
use crate::settings::SpinRule;

/// The most switch points or observations a window keeps; past it the window starts again
/// (which can only miss a repeat, never invent one).
const WINDOW: usize = 256;

/// A switch point a thread reached in its current window.
#[derive(Clone, Copy, Debug)]
struct Visit {
    op: Op,
    /// The thread's count of spins (`Spins::spins`) when it was there.
    spins: u32,
    /// The hash of its call path; computed from the second visit of the same operation on.
    stack: Option<u64>,
}

/// A thread's state under [`SpinRule::Repeats`].
#[derive(Debug, Default)]
pub(crate) struct Spins {
    /// The switch points it reached in its window: since nothing it observed changed.
    window: Vec<Visit>,
    /// What it observed in its window, with the version each had then.
    seen: Vec<(Key, u64)>,
    /// It repeated a spin and waits for a change to what it observed.
    waiting: bool,
    /// Times it spun (yielded, hinted a spin loop, failed a `try_lock`, `try_read` or
    /// `try_write`) in its window: a point is repeated only with a spin since the last visit.
    spins: u32,
    /// It changed something since its last switch point: its window starts again there.
    changed: bool,
}

/// The execution's side: how often each key changed, and what the running operation changed.
#[derive(Debug, Default)]
pub(crate) struct Versions {
    versions: Vec<(Key, u64)>,
    /// The keys the latest operation changed (undone by [`unchanged`]).
    latest: Vec<Key>,
    /// Whether the thread of the latest operation had changed something before it.
    changed_before: bool,
    /// The running event changed a key: at its end ([`settle`]) the threads waiting for a
    /// change to it go on. Not before: until the event ends, [`unchanged`] may say that
    /// the change was none.
    unsettled: bool,
}

impl Versions {
    fn of(&self, key: Key) -> u64 {
        self.versions
            .iter()
            .find(|(k, _)| *k == key)
            .map_or(0, |(_, v)| *v)
    }

    fn bump(&mut self, key: Key, by: i64) {
        match self.versions.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => *v = v.wrapping_add_signed(by),
            None => self.versions.push((key, by as u64)),
        }
    }
}

/// Whether the rule is on.
fn on(st: &ExecState) -> bool {
    st.config.spins == SpinRule::Repeats
}

/// Thread `me` reached a switch point for `op` where it may be held (not while it unwinds or
/// exits): whether it repeats a spin; if so it waits from now on.
#[inline]
pub(super) fn reached(st: &mut ExecState, me: Tid, op: &Op) {
    if on(st) {
        reached_on(st, me, op);
    }
}

/// [`reached`] under the rule.
fn reached_on(st: &mut ExecState, me: Tid, op: &Op) {
    let versions = &st.versions;
    let spins = &mut st.threads[me].spins;
    let changed = spins.seen.iter().any(|&(key, v)| versions.of(key) != v);
    if changed || spins.changed || spins.window.len() >= WINDOW || spins.seen.len() >= WINDOW {
        spins.forget();
    }
    // Judged afresh at every point it reaches: a thread that ran while it waited (every
    // thread that could run waited) waits on only if it repeats again.
    spins.waiting = repeats(spins, op);
    if spins.waiting && st.tracked() {
        st.mem.refresh(me);
    }
}

/// Thread `t` performs `op` now: what it observes or changes.
#[inline]
pub(super) fn performs(st: &mut ExecState, t: Tid, op: &Op) {
    if on(st) {
        performs_on(st, t, op);
    }
}

/// [`performs`] under the rule.
fn performs_on(st: &mut ExecState, t: Tid, op: &Op) {
    st.versions.latest.clear();
    st.versions.changed_before = st.threads[t].spins.changed;
    match (op.obj, op.kind.observes_only()) {
        (Some(obj), true) => observes(st, t, Key::Obj(obj)),
        (Some(obj), false) => changes(st, t, Key::Obj(obj)),
        (None, true) => {}
        // A spawn, a park or unpark, a sleep, a scope, an `Arc`'s count (whose key
        // `runtime/arcs.rs` changes): a loop that does one is not a spin.
        (None, false) => st.threads[t].spins.changed = true,
    }
}

impl Spins {
    /// Starts a new window.
    fn forget(&mut self) {
        self.window.clear();
        self.seen.clear();
        self.spins = 0;
        self.changed = false;
    }
}

/// Thread `t` observed `key` (besides its operation's object).
#[inline]
pub(super) fn observes(st: &mut ExecState, t: Tid, key: Key) {
    if on(st) {
        let v = st.versions.of(key);
        st.threads[t].spins.seen.push((key, v));
    }
}

/// Thread `t` (the running one) changed `key`: whatever `t` did so far is not a spin, and
/// every thread waiting for a change to `key` may go on when the event ends ([`settle`]:
/// its next event comes after this one, `Key::Yield`), unless [`unchanged`] takes the
/// change back first.
#[inline]
pub(super) fn changes(st: &mut ExecState, t: Tid, key: Key) {
    if !on(st) {
        return;
    }
    st.threads[t].spins.changed = true;
    st.versions.bump(key, 1);
    st.versions.latest.push(key);
    st.versions.unsettled = true;
}

/// `key` changed (the clock moved, which a thread's spinning does by itself): every thread
/// waiting for a change to it may go on, now.
pub(super) fn moved(st: &mut ExecState, key: Key) {
    if !on(st) {
        return;
    }
    st.versions.bump(key, 1);
    for t in 0..st.threads.len() {
        let spins = &st.threads[t].spins;
        if spins.waiting && spins.seen.iter().any(|&(k, _)| k == key) {
            release(st, t);
        }
    }
}

/// The running event ends: every thread waiting for a change to something it observed
/// that the event changed (and did not take back) may go on.
#[inline]
pub(super) fn settle(st: &mut ExecState) {
    if on(st) && std::mem::take(&mut st.versions.unsettled) {
        settle_on(st);
    }
}

/// [`settle`] once the event changed something.
fn settle_on(st: &mut ExecState) {
    for t in 0..st.threads.len() {
        let spins = &st.threads[t].spins;
        let versions = &st.versions;
        if spins.waiting && spins.seen.iter().any(|&(k, v)| versions.of(k) != v) {
            release(st, t);
        }
    }
}

/// Waiting thread `t` may go on: its next event reads `Key::Yield(t)`, which the running
/// event writes.
fn release(st: &mut ExecState, t: Tid) {
    st.threads[t].spins.waiting = false;
    st.threads[t].signals.wake(Some(Key::Yield(t)));
    events::declare(st, Key::Yield(t), Role::Write);
}

/// The latest operation of the running thread, which changes its object when it succeeds,
/// changed nothing after all (a failed `try_send`, a compare-and-exchange that failed, ...):
/// it observed what it would have changed, and no thread waiting for a change to it goes on.
pub(super) fn unchanged(st: &mut ExecState) {
    let latest = std::mem::take(&mut st.versions.latest);
    if latest.is_empty() {
        return;
    }
    let me = st.running;
    for &key in &latest {
        st.versions.bump(key, -1);
        let v = st.versions.of(key);
        st.threads[me].spins.seen.push((key, v));
    }
    st.threads[me].spins.changed = st.versions.changed_before;
}

/// Whether `op` repeats a point of the window, having spun since it was there, recording
/// the visit.
fn repeats(spins: &mut Spins, op: &Op) -> bool {
    let same = |v: &Visit| v.op.kind == op.kind && v.op.obj == op.obj && v.op.loc == op.loc;
    let visit = |stack| Visit {
        op: *op,
        spins: spins.spins,
        stack,
    };
    let Some(first) = spins.window.iter().position(same) else {
        spins.window.push(visit(None));
        return false;
    };
    let stack = Some(stack_hash());
    let now = spins.spins;
    if spins.window[first..]
        .iter()
        .any(|v| same(v) && v.stack == stack && v.spins < now)
    {
        return true;
    }
    // The first visit's path was not hashed: this one's stands for it from now on (with the
    // first visit's count of spins), so a repeat needs a third visit by one path. Every
    // hash kept is a real visit's.
    let new = visit(stack);
    match &mut spins.window[first].stack {
        slot @ None => *slot = stack,
        Some(_) => spins.window.push(new),
    }
    false
}

/// A hash of the calling thread's return addresses: two visits of one line from different
/// call paths (a helper called twice) are different points.
pub(super) fn stack_hash() -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    backtrace::trace(|frame| {
        (frame.ip() as usize).hash(&mut hasher);
        true
    });
    hasher.finish()
}

/// Removes from `runnable` the threads held back now (unless that would leave none).
#[inline]
pub(super) fn hold_back(st: &mut ExecState, runnable: &mut Vec<Tid>) {
    if runnable.len() < 2 || !on(st) {
        return;
    }
    let threads = &st.threads;
    let held = |t: &Tid| threads[*t].spins.waiting;
    if !runnable.iter().any(held) || runnable.iter().all(held) {
        return;
    }
    runnable.retain(|t| !held(t));
    st.spin_holds += 1;
}

/// Thread `me` showed a sign of waiting (a yield, a spin-loop hint, a failed `try_lock`,
/// `try_read` or `try_write`): it may now repeat a spin.
pub(super) fn hint(st: &mut ExecState, me: Tid) {
    if on(st) {
        st.threads[me].spins.spins += 1;
    }
}
