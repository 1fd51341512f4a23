//! The runtime's side of atomics and plain cells (the model is `crate::memory`): each
//! operation of an atomic's facade is one call here, which runs its switch point, then
//! acts on the atomic's value in the execution's memory, deciding (where more than one is
//! allowed) which store a load reads and where a store goes in modification order, like
//! the choice of a thread.
//!
//! During an execution the memory model keeps the one copy of an atomic's value. The
//! facade's own value is where an execution that first uses the atomic starts from (its
//! [`Seed`]), and what `get_mut` lends out ([`lend`]); a `static` an earlier execution used
//! starts from its initial value instead (see `object.rs`).
//!
//! Whether the memory model tracks the execution is decided in one place,
//! [`ExecState::tracked_for`]: an untracked execution (`ExecConfig::untracked_start`) acts
//! on the newest value directly, and an operation that needs tracking (an ordering weaker
//! than `SeqCst`, a fence, a plain cell) marks it to start over, then goes on untracked.

use std::sync::atomic::Ordering;

use super::execution::StateGuard as MutexGuard;

use super::execution::{ExecState, Phase};
use super::{Context, Key, Loc, ObjId, ObjectHandle, OpKind, Tid, failure, sched, spins, with_ctx};
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

/// An atomic operation: its kind, the atomic's handle, and where the program performs it.
pub(crate) type Site<'a> = (OpKind, &'a ObjectHandle, Loc);

/// The facade's value of an atomic, from which an execution that first uses the atomic
/// starts its history, and its initial value, from which a `static` an earlier execution
/// used starts.
#[derive(Clone, Copy, Debug)]
pub struct Seed {
    /// The value now.
    pub now: u64,
    /// The value it was created with.
    pub init: u64,
}

/// What an atomic operation does to the value, as the bits the memory model keeps.
#[derive(Clone, Copy)]
#[allow(missing_debug_implementations)] // holds a `dyn Fn`
pub enum Act<'f> {
    /// Reads it.
    Load,
    /// Writes these bits.
    Store(u64),
    /// Reads the newest value `v` and writes `f(v)` (`swap`, `fetch_add`, ...).
    Rmw(&'f dyn Fn(u64) -> u64),
    /// Writes `new` if it reads `expected`; `weak`: it may fail spuriously where it could
    /// succeed (a decision, unless spurious failures are off).
    Exchange {
        /// The bits it compares with.
        expected: u64,
        /// The bits it writes if they are equal.
        new: u64,
        /// Whether it may fail spuriously.
        weak: bool,
    },
}

/// What an operation returns, and whether it was a write that changed nothing (for
/// `spins.rs`, an observation); a refusal of the strategy fails the execution.
type Done = Result<(Result<u64, u64>, bool), Refusal>;

/// Performs the atomic operation `act` at `site` with `orders` (success, then failure
/// ordering; twice the one ordering of any other operation than an exchange): its switch
/// point, then its effect on the atomic's value in the execution's memory (seeded by
/// `seed`), the state locked once for both when the thread goes on at once. Returns what
/// std returns: `Ok(value read)` (anything for a store), or an exchange's `Err(actual)`;
/// `None` outside a model.
///
/// One copy for every atomic type and operation (the closure given to `with_current`,
/// whose type does not depend on the caller), so the facade's methods stay small; the one
/// place that chooses between the memory model and the newest value alone (see
/// [`ExecState::tracked_for`]).
#[inline(always)]
pub fn perform(
    &(kind, handle, loc): &Site<'_>,
    seed: Seed,
    orders: [Ordering; 2],
    act: Act<'_>,
) -> Option<Result<u64, u64>> {
    super::host::with_current(|ctx| {
        let (obj, held) = sched::switch_point_held(ctx, kind, Some(handle), loc);
        let mut st = held.unwrap_or_else(|| ctx.exec.state.lock());
        let obj = obj.expect("a switch point on an object returns its id");
        let tracked = st.tracked_for(orders != [Ordering::SeqCst; 2]);
        let state = &mut *st;
        let objects = &state.objects;
        let from = || match objects[obj].from_earlier {
            true => seed.init,
            false => seed.now,
        };
        let done = match act {
            // A weak exchange's spurious failure is a decision, taken in the model's way.
            Act::Exchange { weak: true, .. } => {
                state.mem.atomic_touch(obj, from);
                in_model(state, (ctx.tid, obj), orders, act)
            }
            _ if !tracked => Ok(on_newest(state.mem.atomic_newest(obj, from), act)),
            _ => {
                state.mem.atomic_touch(obj, from);
                in_model(state, (ctx.tid, obj), orders, act)
            }
        };
        match done {
            Ok((result, unchanged)) => {
                if unchanged && ctx.exec.repeats {
                    spins::unchanged(&mut st);
                }
                result
            }
            Err(refusal) => refused(ctx, st, &refusal),
        }
    })
}

/// Fails the execution for the strategy's `refusal` and unwinds the caller.
#[cold]
fn refused<R>(ctx: &Context, mut st: MutexGuard<'_, ExecState>, refusal: &Refusal) -> R {
    st.fail(|st| failure::refusal(st, refusal));
    sched::raise_abort(ctx, st)
}

/// `act` on the newest value `v` of an atomic, all an untracked execution keeps (every
/// access then acts as `SeqCst`, and a weak exchange does not come here).
#[inline]
fn on_newest(v: &mut u64, act: Act<'_>) -> (Result<u64, u64>, bool) {
    let old = *v;
    match act {
        Act::Load => (Ok(old), false),
        Act::Store(bits) => {
            *v = bits;
            (Ok(old), bits == old)
        }
        Act::Rmw(f) => {
            *v = f(old);
            (Ok(old), *v == old)
        }
        Act::Exchange { expected, new, .. } if old == expected => {
            *v = new;
            (Ok(old), new == old)
        }
        Act::Exchange { .. } => (Err(old), true),
    }
}

/// `act` of thread `me` on atomic `obj` in the memory model, with `orders`.
fn in_model(
    st: &mut ExecState,
    (me, obj): (Tid, ObjId),
    orders: [Ordering; 2],
    act: Act<'_>,
) -> Done {
    let [order, failure] = orders;
    match act {
        Act::Load => {
            let order = begin(st, me, order);
            let index = choose(st, me, PickKind::ReadFrom, |m, out| {
                m.readable(obj, me, order, out)
            })?;
            Ok((Ok(st.mem.load(obj, me, index, order)), false))
        }
        Act::Store(bits) => {
            let order = begin(st, me, order);
            let old = st.mem.newest(obj);
            let at = choose(st, me, PickKind::StoreAt, |m, out| {
                m.store_slots(obj, me, order, out)
            })?;
            st.mem.store(obj, me, at, bits, order);
            Ok((Ok(old), old == bits))
        }
        Act::Rmw(f) => {
            let order = begin(st, me, order);
            let mut same = false;
            let (old, _) = st.mem.rmw(obj, me, order, order, |v| {
                let new = f(v);
                same = new == v;
                Some(new)
            });
            Ok((Ok(old), same))
        }
        Act::Exchange {
            expected,
            new,
            weak,
        } => {
            let result = exchange(st, (me, obj), (expected, new), (order, failure), weak)?;
            let unchanged = !matches!(result, Ok(old) if old != new);
            Ok((result, unchanged))
        }
    }
}

/// Starts an access of `me` with `order` to an atomic; returns the ordering it acts with.
/// A `SeqCst` one acquires what the `SeqCst` fences before it published, so for reduction
/// it reads the order of `SeqCst` fences (`SeqCst` accesses to different locations commute).
fn begin(st: &mut ExecState, me: Tid, order: Ordering) -> Ordering {
    let order = st.mem.effective(order);
    if order == Ordering::SeqCst {
        st.mem.atomic_begin(me, order);
        super::events::declare(st, Key::SeqCst, Role::Read);
    }
    order
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

/// A compare-and-exchange of thread `me` on atomic `obj` in the memory model: writes
/// `new` if it reads `expected` (only the newest store can be read by a success; a failure
/// may read an older store whose value is not `expected`). Returns what std's
/// `compare_exchange` returns.
fn exchange(
    st: &mut ExecState,
    (me, obj): (Tid, ObjId),
    (expected, new): (u64, u64),
    (success, failure): (Ordering, Ordering),
    weak: bool,
) -> Result<Result<u64, u64>, Refusal> {
    let success = st.mem.effective(success);
    let failure = st.mem.effective(failure);
    begin(st, me, stronger(success, failure));
    let mut options = std::mem::take(&mut st.mem.picks);
    st.mem
        .cas_readable(obj, me, failure, expected, &mut options);
    let chosen = sched::decide(st, me, PickKind::CasReadFrom, options.len());
    let index = options[chosen.as_ref().map_or(0, |&i| i)];
    st.mem.picks = options;
    chosen?;
    let newest = index == st.mem.newest_index(obj);
    let could_succeed = newest && st.mem.newest(obj) == expected;
    let spurious = weak && could_succeed && super::waits::fails_spuriously(st, me)?;
    Ok(if newest && !spurious {
        match st.mem.rmw(obj, me, success, failure, |v| {
            (v == expected).then_some(new)
        }) {
            (old, true) => Ok(old),
            (old, false) => Err(old),
        }
    } else {
        Err(st.mem.load(obj, me, index, failure))
    })
}

/// The value of the atomic `handle` in the running execution, if that execution holds it
/// (it used the atomic and did not lend it); not a switch point. `None` outside a model:
/// the facade's value is the atomic's then.
pub fn value(handle: &ObjectHandle) -> Option<u64> {
    super::host::with_current(|ctx| {
        let st = ctx.exec.state.lock();
        let obj = handle.find(ctx.exec.id, &st.objects)?;
        st.mem.atomic_value(obj)
    })
    .flatten()
}

/// Lends the value of the atomic `handle` to its facade (for `get_mut`), which holds it
/// until the atomic's next operation: the value the running execution held, if it did.
pub fn lend(handle: &ObjectHandle) -> Option<u64> {
    super::host::with_current(|ctx| {
        let mut st = ctx.exec.state.lock();
        let obj = handle.find(ctx.exec.id, &st.objects)?;
        st.mem.atomic_lend(obj)
    })
    .flatten()
}

/// A fence with `order` (not `Relaxed`).
pub fn fence(order: Ordering) {
    with_ctx("interleave_test::sync::atomic::fence", |ctx| {
        let mut st = ctx.exec.state.lock();
        // Among `SeqCst` accesses alone a fence changes nothing, but reduction would see its
        // order against accesses that an untracked execution does not declare. Untracked,
        // it goes on and does nothing.
        st.tracked_for(true);
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
pub fn cell_access(handle: &ObjectHandle, write: bool, loc: Loc) {
    if !super::in_model() {
        return;
    }
    with_ctx("interleave_test::cell::UnsafeCell", |ctx| {
        let mut st = ctx.exec.state.lock();
        // Untracked, not even registered: a `static` cell registered here would be foreign
        // to the tracked run of this very execution.
        if !st.tracked_for(true) || st.phase == Phase::TearingDown {
            return;
        }
        let me = ctx.tid;
        let exec = ctx.exec.id;
        let obj = match handle.resolve(exec, &mut st.objects, loc) {
            Ok(obj) => obj,
            Err(foreign) => {
                st.fail(|st| failure::foreign_object(st, me, &foreign, loc));
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
