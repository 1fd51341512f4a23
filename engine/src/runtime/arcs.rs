//! The runtime's side of the modelled `sync::Arc`: each allocation made inside a model is
//! followed by its execution (apart from the arena of primitives, whose numbers reports
//! show), so that an `Arc` still alive when an execution has otherwise passed is reported as
//! a leak, and so that dropping references synchronizes as std's reference counts do (each
//! drop releases, the last one acquires every earlier release before the value's destructor
//! runs).

use super::execution::ExecState;
use super::{Key, Loc, OpKind, Tid};
use crate::op::Role;

/// Where an allocation is registered: its execution and its index there.
#[derive(Clone, Copy, Debug)]
pub struct ArcReg {
    exec: u64,
    index: usize,
    /// Nothing follows its clones and drops but the last one: its execution is untracked
    /// and nothing reads happens-before (see `ExecConfig::untracked_start`), so only the
    /// value's end matters. Its strong count in the runtime is then 1 until that end. Never
    /// for one an initializer makes, which its cell may keep (see `claims.rs`).
    quiet: bool,
    /// Its execution holds back threads that repeat a spin, which must learn of every
    /// change of the counts, quiet or not (`spins.rs`).
    spins: bool,
    /// Where it was made: the location of its drops' switch points.
    created: Loc,
}

/// What the runtime keeps of one allocation.
#[derive(Debug)]
pub(crate) struct ArcState {
    /// Strong references alive (for a quiet allocation, 1 until its last drop).
    pub(crate) strong: usize,
    /// Where it was created, and by which thread.
    pub(crate) created: Loc,
    pub(crate) creator: Tid,
    /// The execution's step when it was created (see `claims.rs`).
    pub(crate) born: u64,
    /// Whether its clones and drops are not followed (see [`ArcReg`]).
    pub(crate) quiet: bool,
}

/// Runs `f` on the execution's state if the caller runs in the execution of `reg` (an `Arc`
/// that outlives its execution is not followed any more).
fn with_arc(reg: ArcReg, f: impl FnOnce(&mut ExecState, usize)) {
    let run = |ctx: &super::Context| {
        if ctx.exec.id == reg.exec {
            f(&mut ctx.exec.state.lock(), reg.index);
        }
    };
    // Without cloning the context: this runs at every clone and drop of an `Arc`.
    super::host::with_current(run);
}

/// Registers an allocation the calling thread creates at `loc`; `None` outside a model.
pub fn created(loc: Loc) -> Option<ArcReg> {
    let run = |ctx: &super::Context| {
        let mut st = ctx.exec.state.lock();
        // One made by an initializer may be kept by its cell, which needs its exact count.
        let quiet = !st.tracked() && st.hb.is_none() && !st.claims.in_initializer(ctx.tid);
        let born = st.step;
        st.arcs.push(ArcState {
            strong: 1,
            created: loc,
            creator: ctx.tid,
            born,
            quiet,
        });
        ArcReg {
            exec: ctx.exec.id,
            index: st.arcs.len() - 1,
            quiet,
            spins: st.config.spins == crate::settings::SpinRule::Repeats,
            created: loc,
        }
    };
    super::host::with_current(run)
}

/// The switch point before `kind` (a drop, an upgrade, a `try_unwrap`) on the allocation of
/// `reg` while another reference to it exists: which thread's drop is the last one, and
/// so runs the destructor, or whether an upgrade comes before it, is a choice of the
/// search. Its location is where the allocation was made (a drop has no caller location).
/// Nothing for an allocation of another execution.
pub fn switch_point(reg: ArcReg, kind: OpKind) {
    let loc = reg.created;
    let run = |ctx: &super::Context| {
        if ctx.exec.id == reg.exec {
            super::sched::switch_point(ctx, kind, None, loc);
        }
    };
    super::host::with_current(run);
}

/// The calling thread read what other references' drops change (a count, or `get_mut`,
/// `make_mut` or a failed `try_unwrap`, which depend on it): for reduction it conflicts
/// with every drop.
pub fn observed(reg: ArcReg) {
    with_arc(reg, |st, a| {
        super::events::order_only(st, Key::Alloc(a), Role::Write);
        let t = st.running;
        super::spins::observes(st, t, Key::Alloc(a));
    });
}

/// A weak reference was dropped: it commutes with other weak drops and with the strong
/// drops that are not the last (reads of the counts, see [`dropped`]), and conflicts with
/// the last one and with what reads the counts.
pub fn weak_dropped(reg: ArcReg) {
    with_arc(reg, |st, a| {
        super::events::order_only(st, Key::Alloc(a), Role::Read);
        let t = st.running;
        super::spins::changes(st, t, Key::Alloc(a));
    });
}

/// A weak reference was upgraded: one more strong reference, and the last drop conflicts
/// with it (before it, the upgrade fails).
pub fn upgraded(reg: ArcReg) {
    cloned(reg);
    observed(reg);
}

/// One more strong reference (a clone, or a `Weak` upgraded). For reduction it reads the
/// counts, so it conflicts with drops and count reads, which write them (a clone never
/// changes which drop is the last, but it changes what `strong_count` says).
pub fn cloned(reg: ArcReg) {
    if reg.quiet && !reg.spins {
        return;
    }
    with_arc(reg, |st, a| {
        let t = st.running;
        super::spins::changes(st, t, Key::Alloc(a));
        if !reg.quiet {
            st.arcs[a].strong += 1;
            super::events::order_only(st, Key::Alloc(a), Role::Read);
        }
    });
}

/// One strong reference fewer; `last`: it was the last, and the value is dropped next.
///
/// For reduction the last drop writes the counts and every other drop reads them: two
/// decrements of one count commute, and only which one reaches zero (and runs the
/// destructor) can be seen. Two drops in a state with `c` references: if `c >= 3` neither is
/// the last in either order, and both orders reach the same state; if `c == 2` the second
/// one is the last, whichever it is, so in an execution the two are a read and a write,
/// which conflict, and the search tries the other order. A clone (a read) commutes with a
/// drop that is not the last (the cloner holds a reference, so neither is the last either
/// way); a count read, `get_mut`, `make_mut` or failed `try_unwrap` writes (`observed`), so
/// it conflicts with every drop. A thread asleep with a drop as its next event keeps it as
/// a write (`strategy/dpor/mod.rs`, `as_sleeper`): whether it is the last depends on the
/// drops that run meanwhile. For the memory model a drop releases, and the last one
/// acquires.
pub fn dropped(reg: ArcReg, last: bool) {
    if reg.quiet && !last && !reg.spins {
        return;
    }
    with_arc(reg, |st, a| {
        let t = st.running;
        super::spins::changes(st, t, Key::Alloc(a));
        if reg.quiet && !last {
            return;
        }
        let strong = &mut st.arcs[a].strong;
        *strong = if last { 0 } else { strong.saturating_sub(1) };
        let (order, sync) = if last {
            (Role::Write, Role::Acquire)
        } else {
            (Role::Read, Role::Release)
        };
        super::events::declare_split(st, Key::Alloc(a), order, sync);
    });
}

/// The allocations of an execution that passed with more strong references than the
/// once-cells still alive hold (see `claims.rs`): leaked (a cycle of `Arc`s, `mem::forget`,
/// or a reference kept somewhere the model outlives).
pub(crate) fn leaked(st: &ExecState) -> Vec<(usize, &ArcState)> {
    st.arcs
        .iter()
        .enumerate()
        .filter(|&(i, a)| a.strong > super::claims::held(st, i))
        .collect()
}
