//! What once-cells claim: the `Arc` references a `Once`, `OnceLock` or `LazyLock` holds for
//! as long as it lives, which are not leaks of the model.
//!
//! A cell never drops the value it was given while it lives (a `static` one: until the
//! process exits; see `per_exec.rs`), so an `Arc` in that value is alive when the execution
//! ends. A cell **claims** the allocations made for its value:
//! - those its initializer's thread created while the initializer ran (`LazyLock`'s
//!   function, `OnceLock::get_or_init`'s closure, `Once::call_once`'s closure), including
//!   `Arc`s made inside the value (a `LazyLock<Arc<Mutex<Vec<Arc<_>>>>>`'s inner ones);
//! - for `OnceLock::set`, those the calling thread created since its last switch point,
//!   which is where the argument of the call is made (`CELL.set(Arc::new(v))`).
//!
//! A claim covers the strong references the allocation had when the value was stored (all
//! made by the initializer, since nobody else could see it yet); they are never dropped
//! while the cell lives. At the end of an execution that passed, an allocation is leaked if
//! it has more strong references than the cells still alive claim. A cell dropped during
//! the execution (a local one) withdraws its claims, and so do `OnceLock::take` and
//! `get_mut`, so that what a local cell held is checked like anything else.
//!
//! Not claimed, so still a leak if alive at the end: an allocation the model made and then
//! stored a clone of in a static by any other means (pushed into a
//! `static LazyLock<Mutex<Vec<Arc<_>>>>`, or `CELL.set(mine.clone())` for an `Arc` made
//! before the call); the leak report says that a static may hold it. Taken for the cell's,
//! though not stored in its value: an `Arc` the initializer made and leaked on its own
//! (`mem::forget` inside the initializer), and the claims of a local cell that is itself
//! leaked (`mem::forget` of the cell).
//!
//! The counts of claimed allocations must be exact, so an `Arc` created while its thread
//! runs an initializer is followed even in an untracked execution (see `arcs.rs`); one made
//! for `set` before the call may be quiet, and then counts as unclaimed, which makes an
//! untracked execution start over tracked. Memory: per execution, one entry per running
//! initializer and one per claimed allocation.

use super::execution::ExecState;
use super::{Access, ObjId, ObjectHandle, Tid};

/// The running initializers and the claims of one execution.
#[derive(Debug, Default)]
pub(crate) struct Claims {
    /// Initializers running, innermost last per thread.
    open: Vec<Window>,
    /// At most one claim per allocation.
    list: Vec<Claim>,
}

/// An initializer that thread `tid` runs for cell `cell`.
#[derive(Debug)]
struct Window {
    tid: Tid,
    cell: ObjId,
    /// The number of allocations of the execution when it started: later ones are newer.
    first_arc: usize,
}

/// Cell `cell` holds `refs` strong references to allocation `arc`.
#[derive(Debug)]
struct Claim {
    cell: ObjId,
    arc: usize,
    refs: usize,
}

/// A point in a thread's run: allocations it creates later have `born` equal to `step`
/// until its next switch point (see [`mark`]).
#[derive(Clone, Copy, Debug)]
pub struct Mark {
    step: u64,
}

impl Claims {
    /// Whether thread `tid` runs an initializer (its new allocations are then followed
    /// exactly).
    pub(crate) fn in_initializer(&self, tid: Tid) -> bool {
        self.open.iter().any(|w| w.tid == tid)
    }
}

/// The strong references to allocation `arc` that live cells hold (0 for a quiet one,
/// whose count is not followed).
pub(crate) fn held(st: &ExecState, arc: usize) -> usize {
    if st.arcs[arc].quiet {
        return 0;
    }
    st.claims
        .list
        .iter()
        .find(|c| c.arc == arc)
        .map_or(0, |c| c.refs)
}

/// The cell that holds references to allocation `arc`, if any.
pub(crate) fn holder(st: &ExecState, arc: usize) -> Option<ObjId> {
    st.claims.list.iter().find(|c| c.arc == arc).map(|c| c.cell)
}

/// Claims for `cell` the allocations `tid` created from `first_arc` on that pass `made`
/// and are still alive, unless another cell claimed them already.
fn claim(st: &mut ExecState, cell: ObjId, tid: Tid, first_arc: usize, made: impl Fn(u64) -> bool) {
    for arc in first_arc..st.arcs.len() {
        let a = &st.arcs[arc];
        if a.creator != tid || a.strong == 0 || !made(a.born) {
            continue;
        }
        if st.claims.list.iter().all(|c| c.arc != arc) {
            let refs = a.strong;
            st.claims.list.push(Claim { cell, arc, refs });
        }
    }
}

impl Access<'_> {
    /// The calling thread starts the initializer of cell `cell`.
    pub fn initializer_started(&mut self, cell: ObjId) {
        let first_arc = self.st.arcs.len();
        self.st.claims.open.push(Window {
            tid: self.me,
            cell,
            first_arc,
        });
    }

    /// The calling thread's initializer of `cell` ended; `stored`: the cell keeps what it
    /// made (it returned, rather than panicked).
    pub fn initializer_ended(&mut self, cell: ObjId, stored: bool) {
        let me = self.me;
        let Some(i) = self
            .st
            .claims
            .open
            .iter()
            .rposition(|w| w.tid == me && w.cell == cell)
        else {
            return;
        };
        let window = self.st.claims.open.remove(i);
        if stored {
            claim(self.st, cell, me, window.first_arc, |_| true);
        }
    }

    /// Cell `cell` keeps the value of a `set` that the calling thread started at `mark`:
    /// it claims the allocations the thread created just before the call.
    pub fn claim_made(&mut self, cell: ObjId, mark: Mark) {
        // Allocations are numbered in the order they were made, and steps only grow.
        let first = self.st.arcs.partition_point(|a| a.born < mark.step);
        claim(self.st, cell, self.me, first, |born| born == mark.step);
    }
}

/// Where the calling thread is: what it creates from now until its next switch point is
/// made after this mark (nothing is, outside a model).
pub fn mark() -> Mark {
    let step = |ctx: &super::Context| ctx.exec.state.lock().step;
    let step = super::host::with_current(step).unwrap_or(u64::MAX);
    Mark { step }
}

/// The cell behind `handle` no longer holds its value: it is dropped (with its value), or
/// the value was taken out or lent mutably (`OnceLock::take`, `into_inner`, `get_mut`). If
/// the running execution registered the cell, its claims go. Nothing outside a model.
pub fn released(handle: &ObjectHandle) {
    let run = |ctx: &super::Context| {
        if let Some(cell) = handle.id_in(ctx.exec.id) {
            ctx.exec.state.lock().claims.list.retain(|c| c.cell != cell);
        }
    };
    super::host::with_current(run);
}
