//! The runtime's side of the modelled `sync::Arc`: each allocation made inside a model is
//! followed by its execution (apart from the arena of primitives, whose numbers reports
//! show), so that an `Arc` still alive when an execution has otherwise passed is reported as
//! a leak, and so that dropping references synchronizes as std's reference counts do (each
//! drop releases, the last one acquires every earlier release before the value's destructor
//! runs).

use super::execution::ExecState;
use super::{Key, Loc, Tid};
use crate::op::Role;

/// Where an allocation is registered: its execution and its index there.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ArcReg {
    exec: u64,
    index: usize,
    /// Nothing follows its clones and drops but the last one: its execution is untracked
    /// and nothing reads happens-before (see `ExecConfig::untracked_start`), so only the
    /// value's end matters. Its strong count in the runtime is then 1 until that end. Never
    /// for one an initializer makes, which its cell may keep (see `kept.rs`).
    quiet: bool,
}

/// What the runtime keeps of one allocation.
#[derive(Debug)]
pub(crate) struct ArcState {
    /// Strong references alive (for a quiet allocation, 1 until its last drop).
    pub(crate) strong: usize,
    /// Where it was created, and by which thread.
    pub(crate) created: Loc,
    pub(crate) creator: Tid,
    /// The execution's step when it was created (see `kept.rs`).
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
    if super::CURRENT.is_set() {
        super::CURRENT.with(run);
    } else if let Some(ctx) = super::host::exiting_context() {
        run(&ctx);
    }
}

/// Registers an allocation the calling thread creates at `loc`; `None` outside a model.
pub(crate) fn created(loc: Loc) -> Option<ArcReg> {
    let run = |ctx: &super::Context| {
        let mut st = ctx.exec.state.lock();
        // One made by an initializer may be kept by its cell, which needs its exact count.
        let quiet =
            st.config.untracked_start && st.hb.is_none() && !st.kept.in_initializer(ctx.tid);
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
        }
    };
    if super::CURRENT.is_set() {
        return Some(super::CURRENT.with(run));
    }
    super::host::exiting_context().map(|ctx| run(&ctx))
}

/// One more strong reference (a clone, or a `Weak` upgraded).
pub(crate) fn cloned(reg: ArcReg) {
    if !reg.quiet {
        with_arc(reg, |st, a| st.arcs[a].strong += 1);
    }
}

/// One strong reference fewer; `last`: it was the last, and the value is dropped next.
///
/// For reduction, drops that leave references behind commute (decrements whose result
/// nobody sees), and the last one conflicts with each of them (another order makes another
/// drop the last): a read, and a write. For the memory model a drop releases, and the last
/// one acquires.
pub(crate) fn dropped(reg: ArcReg, last: bool) {
    if reg.quiet && !last {
        return;
    }
    with_arc(reg, |st, a| {
        let strong = &mut st.arcs[a].strong;
        *strong = if last { 0 } else { strong.saturating_sub(1) };
        let (order, sync) = match last {
            true => (Role::Write, Role::Acquire),
            false => (Role::Read, Role::Release),
        };
        super::events::declare_split(st, Key::Alloc(a), order, sync);
    });
}

/// The allocations of an execution that passed with more strong references than the
/// once-cells still alive hold (see `kept.rs`): leaked (a cycle of `Arc`s, `mem::forget`,
/// or a reference kept somewhere the model outlives).
pub(crate) fn leaked(st: &ExecState) -> Vec<(usize, &ArcState)> {
    st.arcs
        .iter()
        .enumerate()
        .filter(|&(i, a)| a.strong > super::kept::held(st, i))
        .collect()
}
