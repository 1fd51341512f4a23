//! The runtime's side of atomics and plain cells (the model is `crate::memory`): after an
//! atomic operation's switch point, the facade asks here which value the operation reads
//! and where its store goes in modification order. Where more than one is allowed, that is
//! a decision of the strategy, recorded like the choice of a thread.
//!
//! The facade keeps the newest value of each atomic (for `get_mut`, `into_inner` and
//! `Debug`) and gives it, with the atomic's initial value, as [`Held`], read after the
//! switch point (other threads may have changed it while this one waited); every call
//! returns the newest value after it, for the facade to keep, except for a `static` used
//! again (see `object.rs`), whose facade value belongs to the first execution that used it.
//!
//! In an untracked execution (`ExecConfig::untracked_start`) a `SeqCst` operation on an
//! atomic this execution was the first to use skips all of this ([`direct`]): it acts on the
//! facade's value after its switch point. Any other ordering marks the execution to start
//! over (see `sched::start_over`) and acts as `SeqCst` through the untracked memory model,
//! which keeps only the newest store (taken from the facade's value at each operation).

use std::sync::atomic::Ordering;

use parking_lot::MutexGuard;

use super::execution::{ExecState, Phase};
use super::{Context, Key, Loc, ObjId, ObjectHandle, OpKind, Tid, failure, sched, with_ctx};
use crate::op::PickKind;
use crate::op::Role;
use crate::strategy::Refusal;

/// Runs `f` on the execution's state for the calling thread; a refusal of the strategy
/// fails the execution and unwinds the caller.
pub(super) fn with_memory<R>(
    api: &str,
    f: impl FnOnce(&mut ExecState, Tid) -> Result<R, Refusal>,
) -> R {
    with_ctx(api, |ctx| {
        let mut st = ctx.exec.state.lock();
        match f(&mut st, ctx.tid) {
            Ok(r) => r,
            Err(refusal) => {
                st.fail(|st| failure::refusal(st, &refusal));
                sched::raise_abort(ctx, st)
            }
        }
    })
}

/// Runs atomic operation `kind` on `handle` at `loc` (`SeqCst` only) as `act` on the
/// facade's value, after its switch point, if the memory model has nothing to do: the
/// execution is untracked (see `ExecConfig::untracked_start`), so atomics are sequentially
/// consistent, and the atomic's facade holds this execution's value, which is then the
/// newest (no other thread runs until the next switch point). `None` otherwise (the
/// operation goes through the memory model).
#[inline]
pub(crate) fn direct<R>(
    (kind, handle, loc): (OpKind, &ObjectHandle, Loc),
    act: impl FnOnce() -> R,
) -> Option<R> {
    direct_switch_point(kind, handle, loc).then(act)
}

/// The switch point of [`direct`], if the operation can act on the facade's value; one
/// copy for every atomic type and operation (only `act` differs between them), kept out
/// of line so that the facade's methods stay small.
#[inline(never)]
fn direct_switch_point(kind: OpKind, handle: &ObjectHandle, loc: Loc) -> bool {
    super::host::with_current(|ctx| {
        if !ctx.exec.untracked || !(handle.first_used_in(ctx.exec.id) || claim(ctx, handle, loc)) {
            return false;
        }
        sched::switch_point(ctx, kind, Some(handle), loc);
        true
    })
    .unwrap_or(false)
}

/// Registers the atomic behind `handle` in the running execution if no execution has used
/// it yet (as its switch point would, before its decision); returns whether this execution
/// is the first that used it.
#[cold]
fn claim(ctx: &Context, handle: &ObjectHandle, loc: Loc) -> bool {
    let exec = ctx.exec.id;
    if !handle.unclaimed() {
        return false;
    }
    // Another execution may claim it first (a `static` used by executions at once): then
    // this one uses it as a later one, through the memory model.
    let mut st = ctx.exec.state.lock();
    let _ = handle.resolve(exec, &mut st.objects, loc);
    handle.first_used_in(exec)
}

/// Runs the switch point before atomic operation `kind` on `handle` at `loc`, then `f` on
/// the execution's state (locked once for both when the thread goes on at once); a refusal
/// of the strategy fails the execution and unwinds the caller. In an untracked execution
/// an operation with `orders` other than `SeqCst` marks the execution to start over, and
/// goes on as a `SeqCst` one. `None` outside a model.
fn at_switch_point<R>(
    (kind, handle, loc): (OpKind, &ObjectHandle, Loc),
    orders: [Ordering; 2],
    f: impl FnOnce(&mut ExecState, Tid, ObjId) -> Result<R, Refusal>,
) -> Option<R> {
    let run = |ctx: &Context| {
        let (obj, held) = sched::switch_point_held(ctx, kind, Some(handle), loc);
        let mut st = held.unwrap_or_else(|| ctx.exec.state.lock());
        let obj = obj.expect("a switch point on an object returns its id");
        if orders != [Ordering::SeqCst; 2] && sched::needs_tracking(&st) {
            // The operation goes on as `SeqCst`: an untracked memory model is not weak.
            sched::start_over(&mut st);
        }
        match f(&mut st, ctx.tid, obj) {
            Ok(r) => r,
            Err(refusal) => {
                st.fail(|st| failure::refusal(st, &refusal));
                sched::raise_abort(ctx, st)
            }
        }
    };
    super::host::with_current(run)
}

/// Starts an atomic access with `order` to `obj`: a `SeqCst` one acquires what the
/// `SeqCst` fences before it published, so for reduction it reads the order of `SeqCst`
/// fences (`SeqCst` accesses to different locations commute).
fn begin(st: &mut ExecState, me: Tid, obj: ObjId, held: Held, order: Ordering) {
    let fresh = st.objects[obj].from_earlier;
    let bits = if fresh { held.init } else { held.now };
    st.mem.atomic_touch(obj, bits, fresh);
    if order == Ordering::SeqCst {
        st.mem.atomic_begin(me, order);
        super::events::declare(st, Key::SeqCst, Role::Read);
    }
}

/// What the facade holds of an atomic: its newest value as it knows it, and its initial one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Held {
    pub(crate) now: u64,
    pub(crate) init: u64,
}

/// The newest value of `obj`, for its facade to keep (`None`: a `static` used again).
fn newest(st: &ExecState, obj: ObjId) -> Option<u64> {
    (!st.objects[obj].from_earlier).then(|| st.mem.newest(obj))
}

/// The option the strategy picks among those `options` puts in its buffer (a decision of
/// `kind` when there are two or more).
fn choose(
    st: &mut ExecState,
    me: Tid,
    kind: PickKind,
    options: impl FnOnce(&crate::memory::Memory, &mut Vec<usize>),
) -> Result<usize, Refusal> {
    let mut buffer = std::mem::take(&mut st.mem.picks);
    options(&st.mem, &mut buffer);
    let chosen = sched::decide(st, me, kind, buffer.len());
    let option = chosen.as_ref().map_or(0, |&i| buffer[i]);
    st.mem.picks = buffer;
    chosen.map(|_| option)
}

/// The stronger of two orderings, for what a compare-and-exchange does before it knows
/// whether it succeeds.
fn stronger(a: Ordering, b: Ordering) -> Ordering {
    if a == Ordering::SeqCst || b == Ordering::SeqCst {
        Ordering::SeqCst
    } else {
        a
    }
}

/// A load (operation `kind` at `loc`) of the atomic `handle` with `order`: the value read,
/// and the newest value. `None` outside a model.
pub(crate) fn load(
    site: (OpKind, &ObjectHandle, Loc),
    held: impl FnOnce() -> Held,
    order: Ordering,
) -> Option<(u64, Option<u64>)> {
    at_switch_point(site, [order; 2], |st, me, obj| {
        let order = st.mem.effective(order);
        begin(st, me, obj, held(), order);
        let index = choose(st, me, PickKind::ReadFrom, |m, out| {
            m.readable(obj, me, order, out)
        })?;
        let value = st.mem.load(obj, me, index, order);
        Ok((value, newest(st, obj)))
    })
}

/// A store of `bits` with `order` (operation `kind` on `handle` at `loc`); returns the
/// newest value. `None` outside a model.
pub(crate) fn store(
    site: (OpKind, &ObjectHandle, Loc),
    held: impl FnOnce() -> Held,
    bits: u64,
    order: Ordering,
) -> Option<Option<u64>> {
    at_switch_point(site, [order; 2], |st, me, obj| {
        let order = st.mem.effective(order);
        begin(st, me, obj, held(), order);
        let at = choose(st, me, PickKind::StoreAt, |m, out| {
            m.store_slots(obj, me, order, out)
        })?;
        st.mem.store(obj, me, at, bits, order);
        Ok(newest(st, obj))
    })
}

/// A read-modify-write that always writes (`swap`, `fetch_add`, ...; operation `kind` on
/// `handle` at `loc`): reads the newest value `v` and writes `f(v)`. Returns `v` and the
/// newest value. `None` outside a model.
pub(crate) fn rmw(
    site: (OpKind, &ObjectHandle, Loc),
    held: impl FnOnce() -> Held,
    order: Ordering,
    f: impl FnOnce(u64) -> u64,
) -> Option<(u64, Option<u64>)> {
    at_switch_point(site, [order; 2], |st, me, obj| {
        let order = st.mem.effective(order);
        begin(st, me, obj, held(), order);
        let (old, _) = st.mem.rmw(obj, me, order, order, |v| Some(f(v)));
        Ok((old, newest(st, obj)))
    })
}

/// A compare-and-exchange of `obj`: writes `new` if it reads `expected` (only the newest
/// store can be read by a success; a failure may read an older store whose value is not
/// `expected`). Returns what std's `compare_exchange` returns, and the newest value.
/// `weak`: a `compare_exchange_weak`, which may also fail spuriously where it could succeed
/// (a decision, unless spurious failures are off).
/// `None` outside a model.
pub(crate) fn compare_exchange(
    site: (OpKind, &ObjectHandle, Loc),
    held: impl FnOnce() -> Held,
    (expected, new): (u64, u64),
    (success, failure): (Ordering, Ordering),
    weak: bool,
) -> Option<(Result<u64, u64>, Option<u64>)> {
    at_switch_point(site, [success, failure], |st, me, obj| {
        let success = st.mem.effective(success);
        let failure = st.mem.effective(failure);
        begin(st, me, obj, held(), stronger(success, failure));
        let mut options = std::mem::take(&mut st.mem.picks);
        st.mem
            .cas_readable(obj, me, failure, expected, &mut options);
        let chosen = sched::decide(st, me, PickKind::CasReadFrom, options.len());
        let index = options[chosen.as_ref().map_or(0, |&i| i)];
        st.mem.picks = options;
        chosen?;
        let could_succeed = index == st.mem.newest_index(obj) && st.mem.newest(obj) == expected;
        let spurious = weak && could_succeed && super::waits::fails_spuriously(st, me)?;
        let result = if index == st.mem.newest_index(obj) && !spurious {
            match st.mem.rmw(obj, me, success, failure, |v| {
                (v == expected).then_some(new)
            }) {
                (old, true) => Ok(old),
                (old, false) => Err(old),
            }
        } else {
            Err(st.mem.load(obj, me, index, failure))
        };
        Ok((result, newest(st, obj)))
    })
}

/// A fence with `order` (not `Relaxed`).
pub(crate) fn fence(order: Ordering) {
    with_ctx("interleave_test::sync::atomic::fence", |ctx| {
        let mut st = ctx.exec.state.lock();
        // Among `SeqCst` accesses alone a fence changes nothing, but reduction would see its
        // order against accesses that an untracked execution does not declare.
        if sched::needs_tracking(&st) {
            sched::start_over(&mut st); // and goes on: untracked, a fence does nothing
        }
        let order = st.mem.effective(order);
        if order == Ordering::SeqCst {
            super::events::declare(&mut st, Key::SeqCst, Role::Write);
        }
        st.mem.fence(ctx.tid, order);
    })
}

/// An access to the plain cell behind `handle` at `loc`, a write if `write`. A data race
/// fails the execution and unwinds the caller; outside a model, in an untracked execution
/// (which this marks to start over) or while the execution tears down, nothing is checked.
pub(crate) fn cell_access(handle: &ObjectHandle, write: bool, loc: Loc) {
    if !super::in_model() {
        return;
    }
    with_ctx("interleave_test::cell::UnsafeCell", |ctx| {
        let mut st = ctx.exec.state.lock();
        if sched::needs_tracking(&st) {
            // Not even registered: a `static` cell registered here would be foreign to the
            // tracked run of this very execution.
            sched::start_over(&mut st);
        }
        if st.phase == Phase::TearingDown || st.config.untracked_start {
            return;
        }
        let me = ctx.tid;
        let exec = ctx.exec.id;
        let obj = match handle.resolve(exec, &mut st.objects, loc) {
            Ok(obj) => obj,
            Err(foreign) => {
                st.fail(|st| failure::foreign_object(st, me, foreign.kind, loc));
                return raise(ctx, st);
            }
        };
        match write {
            true => super::spins::changes(&mut st, me, super::Key::Obj(obj)),
            false => super::spins::observes(&mut st, me, super::Key::Obj(obj)),
        }
        if let Err(race) = st.mem.cell_access(obj, me, write, loc) {
            st.fail(|st| failure::data_race(st, obj, &race));
            raise(ctx, st)
        }
    });
}

fn raise(ctx: &Context, st: MutexGuard<'_, ExecState>) {
    sched::raise_abort(ctx, st)
}
