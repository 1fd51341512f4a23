//! Feeding happens-before (`crate::hb`) with the execution's events, and spin waits.
//!
//! An event of thread `t` begins when the scheduler gives `t` control and ends when `t`
//! reaches its next switch point, blocks or finishes. What it touches besides its
//! operation's own object is declared by the `Access` methods the facade calls.
//!
//! Which spinning threads are held back, and what that means for happens-before, is
//! `spins.rs`'s.

use super::execution::{ExecState, Status};
use std::time::Duration;

use super::{Key, Loc, Op, Tid};
use crate::hb::VClock;
use crate::op::Role;

/// Ends the running thread's event and hands it to the strategy; first, the threads
/// waiting for what it changed go on (`spins::settle`).
#[inline]
pub(super) fn end(st: &mut ExecState) {
    super::spins::settle(st);
    if st.hb.is_some() {
        end_event(st);
    }
}

/// [`end`] with happens-before tracking.
fn end_event(st: &mut ExecState) {
    let t = st.running;
    let yielded = st.threads[t].signals.take_yielded();
    let Some(hb) = st.hb.as_deref_mut() else {
        return;
    };
    // The event yielded explicitly: it and the next one may touch state the model does not
    // see (`hb/unseen.rs`).
    if yielded {
        hb.declare(Key::Unseen, Role::Write);
        st.threads[t].signals.expose_unseen();
    }
    if let Some(index) = hb.end()
        && let Some(search) = st.strategy.as_mut().and_then(|s| s.exhaustive())
    {
        search.event(hb, index);
    }
}

/// Thread `t` was given control (by a decision among `enabled`, if `decided`).
#[inline]
pub(super) fn begin(st: &mut ExecState, t: Tid, decided: bool, enabled: &[Tid]) {
    if st.tracked() {
        let op = st.threads[t].pending;
        synchronize(st, t, &op);
    }
    let decision = decided.then(|| st.decisions.len() as u32 - 1);
    let (woken, woken_on) = st.threads[t].signals.take_wake();
    if let Some(hb) = st.hb.as_deref_mut() {
        hb.begin(t, &st.threads[t].pending, decision, enabled, woken);
        if let Some(key) = woken_on {
            hb.declare(key, Role::Read);
        }
        if st.threads[t].signals.take_unseen() {
            hb.declare(Key::Unseen, Role::Write);
        }
    }
    if st.config.spins == crate::settings::SpinRule::Repeats {
        let op = st.threads[t].pending;
        super::spins::performs(st, t, &op);
    }
}

/// The running thread `me` yields explicitly (`thread::yield_now`, `hint::spin_loop`,
/// `thread::sleep`, `future::yield_now`): for the reduction, the event under way and `me`'s
/// next one may touch state the model does not see (`hb/unseen.rs`).
pub(super) fn exposes_unseen(st: &mut ExecState, me: Tid, loc: Loc) {
    if let Some(hb) = st.hb.as_deref_mut()
        && hb.yield_exposes(me, (loc, super::spins::stack_hash()))
    {
        st.threads[me].signals.yield_explicitly();
    }
}

/// The running thread `me` spins (a sign of waiting for `spins.rs`). It sees the newest
/// stores of every
/// atomic from now on, and the virtual clock moves on, by 1 µs for the first spin in a row
/// and twice as much for each next one (so a loop that polls `Instant::now` against a
/// deadline ends in a few dozen spins, whatever the deadline), unless time is paused
/// (`timers.rs`).
pub(super) fn spun(st: &mut ExecState, me: Tid, loc: Loc) {
    let repeated = spins_again(st, me, loc);
    let in_row = st.threads[me].signals.spin(repeated);
    st.mem.refresh(me);
    if !st.timers.paused() {
        let quantum = Duration::from_micros(1u64 << in_row.min(30));
        super::waits::time_passes(st, st.clock.saturating_add(quantum));
    }
    super::spins::hint(st, me);
}

/// Whether thread `me`, spinning at `loc`, repeats a spin: it spun there before and no other
/// thread has run since. A spin loop waiting for another thread repeats at its second
/// round; a thread that yields once, or yields again after others ran, does not.
fn spins_again(st: &mut ExecState, me: Tid, loc: Loc) -> bool {
    let (places, since) = &mut st.threads[me].spun_at;
    if *since != st.switches {
        places.clear();
        *since = st.switches;
    }
    if places.contains(&loc) {
        return true;
    }
    places.push(loc);
    false
}

/// Thread `t` performs `op` now: for the memory model it synchronizes through the primitive
/// the operation acts on. Atomics do so by their orderings (`runtime/atomics.rs`); a
/// condvar orders nothing by itself (its mutex and the wake-up do).
pub(super) fn synchronize(st: &mut ExecState, t: Tid, op: &Op) {
    if !st.tracked() || op.kind.is_atomic() || op.kind.is_condvar() {
        return;
    }
    if let Some(touch) = crate::hb::primary(op, t) {
        st.mem.access(t, touch.key, touch.role);
    }
}

/// The running event accesses `key` as `role`.
///
/// Here and in the other calls into the memory model the runtime checks
/// `untracked_start` first although the memory model checks it too: skipping the call and
/// the model's box is measured (callgrind, 2 to 4% of the instructions of an untracked
/// execution of the throughput models).
#[inline]
pub(super) fn declare(st: &mut ExecState, key: Key, role: Role) {
    if st.hb.is_some() || st.tracked() {
        declare_tracked(st, key, role);
    }
}

/// [`declare`] when the memory model or the reduction tracks the execution.
fn declare_tracked(st: &mut ExecState, key: Key, role: Role) {
    if st.tracked() {
        st.mem.access(st.running, key, role);
    }
    if let Some(hb) = st.hb.as_deref_mut() {
        hb.declare(key, role);
    }
}

/// The running event accesses `key`: as `order` for partial-order reduction, as `sync` for
/// the memory model (a drop of an `Arc` releases or acquires, but any two drops may come in
/// either order).
pub(super) fn declare_split(st: &mut ExecState, key: Key, order: Role, sync: Role) {
    if st.tracked() {
        st.mem.access(st.running, key, sync);
    }
    if let Some(hb) = st.hb.as_deref_mut() {
        hb.declare(key, order);
    }
}

/// The running event accesses `key` as `role` for partial-order reduction only: the memory
/// model learns nothing from it (reading a reference count orders nothing).
pub(super) fn order_only(st: &mut ExecState, key: Key, role: Role) {
    if let Some(hb) = st.hb.as_deref_mut() {
        hb.declare(key, role);
    }
}

/// The running thread publishes its clock into `clock`, which a primitive keeps (see
/// `super::Published`).
pub(super) fn publish(st: &mut ExecState, clock: &mut VClock) {
    if st.tracked() {
        st.mem.release_into(st.running, clock);
    }
}

/// The running thread acquires what `clock`, kept by a primitive, published.
pub(super) fn acquire(st: &mut ExecState, clock: &VClock) {
    if st.tracked() {
        st.mem.acquire_from(st.running, clock);
    }
}

/// The running event changed `key` through the runtime (a write unless declared otherwise).
/// Inlined: every section of a primitive's state calls it, and most executions track
/// nothing (no reduction, untracked start).
#[inline]
pub(super) fn imply(st: &mut ExecState, key: Key) {
    if st.hb.is_some() || matches!(key, Key::Park(_)) && st.tracked() {
        imply_tracked(st, key);
    }
}

/// [`imply`] when the memory model or the reduction tracks the execution.
fn imply_tracked(st: &mut ExecState, key: Key) {
    if let Key::Park(_) = key
        && st.tracked()
    {
        st.mem.access(st.running, key, Role::Write);
    }
    if let Some(hb) = st.hb.as_deref_mut() {
        hb.imply(key);
    }
}

/// The running event wakes thread `t`: it changed what `t` waits on.
pub(super) fn waking(st: &mut ExecState, t: Tid) {
    if st.hb.is_none() {
        return;
    }
    let key = match st.threads[t].status {
        Status::Blocked(b) => match (b.obj, b.thread) {
            (Some(obj), _) => Key::Obj(obj),
            (None, Some(target)) => Key::Thread(target),
            (None, None) => Key::Park(t),
        },
        _ => return,
    };
    // A write even if the operation declared a read-like role on the key (a notification
    // reads a condvar that has no waiter, and writes the one it wakes).
    declare(st, key, Role::Write);
    st.threads[t].signals.wake(Some(key));
}

/// Thread `t` timed out: that happens only once no thread could run, so after every event
/// so far.
pub(super) fn timed_out(st: &mut ExecState, t: Tid) {
    st.threads[t].signals.wake(None);
    if let Some(hb) = st.hb.as_deref_mut() {
        hb.timed_out(t);
    }
}
