//! Plain memory: data races on `cell::UnsafeCell`.
//!
//! Each cell keeps its last write and, per thread, its last read since that write, each
//! with the thread's epoch at the access (FastTrack, Flanagan and Freund, PLDI 2009, with a
//! full read set instead of its adaptive one: model threads are few). An access races with
//! a recorded one of another thread that does not happen before it, when either writes.

use super::{Memory, slot};
use crate::op::{Loc, ObjId, Tid};

/// One access to a cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CellAccess {
    pub(crate) tid: Tid,
    pub(crate) write: bool,
    pub(crate) loc: Loc,
    epoch: u32,
}

/// Two accesses to one cell, at least one a write, that nothing orders.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Race {
    /// The access recorded first.
    pub(crate) earlier: CellAccess,
    /// The access that found the race.
    pub(crate) later: CellAccess,
}

/// What a cell remembers.
#[derive(Debug, Default)]
pub(super) struct CellState {
    write: Option<CellAccess>,
    /// The reads since `write`, at most one per thread (its last).
    reads: Vec<CellAccess>,
}

impl Memory {
    /// Thread `t` accesses cell `obj` (a write if `write`) at `loc`. `Err`: the access
    /// races with an earlier one.
    pub(crate) fn cell_access(
        &mut self,
        obj: ObjId,
        t: Tid,
        write: bool,
        loc: Loc,
    ) -> Result<(), Race> {
        let access = CellAccess {
            tid: t,
            write,
            loc,
            epoch: self.epoch(t),
        };
        let threads = &self.threads;
        let ordered = |a: &CellAccess| a.tid == t || threads[t].vc.knows(a.tid, a.epoch);
        let cell = slot(&mut self.cells, obj).get_or_insert_with(CellState::default);
        let unordered_write = cell.write.filter(|w| !ordered(w));
        let unordered_read = || cell.reads.iter().copied().find(|r| !ordered(r));
        let earlier = match write {
            true => unordered_write.or_else(unordered_read),
            false => unordered_write,
        };
        if let Some(earlier) = earlier {
            return Err(Race {
                earlier,
                later: access,
            });
        }
        if write {
            cell.write = Some(access);
            cell.reads.clear();
        } else {
            match cell.reads.iter_mut().find(|r| r.tid == t) {
                Some(r) => *r = access,
                None => cell.reads.push(access),
            }
        }
        Ok(())
    }
}
