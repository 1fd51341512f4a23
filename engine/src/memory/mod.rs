//! The memory model: which values atomics may read, and which plain accesses race.
//!
//! This is the *program's* happens-before (program order and synchronization), not the
//! conflict order of [`crate::hb`] that partial-order reduction reads: two relaxed stores to
//! one atomic conflict there, but synchronize nothing here.
//!
//! Every model thread has a vector clock (`vc`) whose own entry, its *epoch*, moves on after
//! every operation that synchronizes or touches an atomic, so that what a thread does after
//! a release is never mistaken for something the release published.
//!
//! - **Primitives other than atomics** (mutexes, rwlocks, barriers, `Once`, `OnceLock`,
//!   park tokens, thread ends) synchronize by the role of each operation
//!   ([`Memory::access`]): `unlock` releases and `lock` acquires, a read lock acquires only
//!   what writers released (two readers stay unordered), a thread's end releases and `join`
//!   acquires, and operations that change the primitive (`call_once`, `unpark`, `park`, a
//!   barrier's `wait`) both acquire and release. A channel keeps clocks of its own
//!   ([`Memory::release_into`], [`Memory::acquire_from`]): each value carries its send's
//!   clock and its receive acquires that one only, so a receive knows nothing its sender
//!   did after that send (`sync/mpsc/chan.rs` says what else it orders). That is at least
//!   what std promises, slightly more in places (a failed `try_lock` acquires), so no race
//!   or stale read std forbids is reported; one that only those extra orders hide is
//!   missed. A condvar orders nothing by
//!   itself: its mutex does, and a wake-up makes the woken thread acquire the waker's
//!   clock.
//! - **Atomics** follow RC11 (Lahav, Vafeiadis, Kang, Hur and Dreyer, "Repairing Sequential
//!   Consistency in C/C++11", PLDI 2017) in the operational form of view-based machines:
//!   each location keeps its stores in modification order (`atomic.rs`); a load may read
//!   any store that is not older than the newest one the thread already knows of (read,
//!   wrote, or that happens before it), and a store may be placed in modification order
//!   anywhere after the newest one it knows of (but never between a read-modify-write and
//!   the store it read). Which store a load reads and where a store goes are *decisions*,
//!   made by the runtime's strategy; option 0 is always the newest, so a search starts
//!   from the sequentially consistent behaviour.
//! - `SeqCst`: the `SeqCst` stores to one location are in modification order as they ran,
//!   and a `SeqCst` load reads the newest of them or a later store (the per-location order
//!   of C++11's single total order `S`). `SeqCst` fences are ordered through one clock,
//!   `sc`: each acquires what the fences before it published and publishes in turn, and a
//!   `SeqCst` access acquires it too; after a `SeqCst` fence a thread knows every `SeqCst`
//!   store that ran before it. `SeqCst` accesses to different locations do not order each
//!   other beyond that, so they stay independent for partial-order reduction. This gives
//!   RC11's outcomes on the litmus tests of `tests/litmus.rs` (all-`SeqCst`, and
//!   fence-separated relaxed accesses). It is stronger than RC11 where `SeqCst` fences
//!   alone order plain memory (a race that only two `SeqCst` fences order is not
//!   reported), and may lose outcomes RC11 allows for a location accessed both with
//!   `SeqCst` and weaker orderings.
//! - **Plain memory** (`cell::UnsafeCell`): each cell remembers its last write and the
//!   reads since, with their epochs (FastTrack, Flanagan and Freund, PLDI 2009); an access
//!   that another thread's access to the cell does not happen before, one of them a write,
//!   is a data race (`cell.rs`).

mod atomic;
mod cell;

pub(crate) use cell::{CellAccess, Race};

use std::sync::atomic::Ordering;

use crate::hb::{Key, VClock};
use crate::op::{ObjId, Role, Tid};

/// What a thread holds for the memory model.
#[derive(Debug, Default)]
struct ThreadMem {
    /// What happens before the thread's next operation.
    vc: VClock,
    /// The clock at its last release fence: what its relaxed stores publish.
    fence_rel: VClock,
    /// What the stores its relaxed loads read published: an acquire fence takes it.
    fence_acq: VClock,
    /// The place of its last `SeqCst` fence in the order of `SeqCst` stores and fences.
    fence_time: u32,
    /// It finished, or the slot is not used in this execution.
    finished: bool,
}

/// What the operations on one primitive published (see [`Memory::access`]).
#[derive(Debug, Default)]
struct SyncClocks {
    /// Published by writes and releases: every read and acquire takes it.
    released: VClock,
    /// Published by read releases: only acquires and writes take it.
    read_released: VClock,
}

/// The memory model state of one execution.
#[derive(Debug, Default)]
pub(crate) struct Memory {
    /// Whether atomics are weak (RC11): in a tracked execution; otherwise every load reads
    /// the newest store and every store goes last, as under sequential consistency.
    weak: bool,
    /// Whether clocks and store histories are kept. An execution may start without them
    /// (`ExecConfig::untracked_start`): while it uses only `SeqCst` atomics and no plain
    /// cells, they change nothing it does, since every load reads the newest store. Then
    /// atomics keep only their newest value, and atomics are not `weak`.
    tracked: bool,
    threads: Vec<ThreadMem>,
    /// Clocks of the primitives other than atomics, by object id.
    objects: Vec<SyncClocks>,
    /// Clocks of thread ends (by thread id) and park tokens.
    ends: Vec<SyncClocks>,
    parks: Vec<SyncClocks>,
    /// Clocks of `Arc` allocations (their reference counts).
    allocs: Vec<SyncClocks>,
    /// What `SeqCst` fences published: every later `SeqCst` fence and access takes it.
    sc: VClock,
    /// `SeqCst` stores and fences so far (their order).
    sc_time: u32,
    atomics: Vec<Option<atomic::Location>>,
    cells: Vec<Option<cell::CellState>>,
    scratch: VClock,
    /// A buffer for the options of a decision, reused by the runtime.
    pub(crate) picks: Vec<usize>,
    /// Dropped stores, whose memory the next stores reuse.
    spare: Vec<atomic::Store>,
    /// Locations of an earlier execution, whose memory the next atomics reuse.
    spare_locations: Vec<atomic::Location>,
}

impl Memory {
    /// Forgets everything for a new execution whose thread 0 starts now; `tracked`: see the
    /// field (a tracked execution is weak, an untracked one is not).
    pub(crate) fn reset(&mut self, tracked: bool) {
        if !self.tracked && !tracked {
            // After an untracked execution, for another one: nothing to forget but the
            // atomics' values (untracked, no clock is read).
            self.recycle_atomics();
            return;
        }
        // An untracked execution changes no clock but its threads' own: what a tracked one
        // left is cleared in place, keeping its memory for the next execution (a slot that
        // is not used again is an empty clock, or a thread that is not live).
        if self.tracked {
            self.clear_clocks();
        }
        self.weak = tracked;
        self.tracked = tracked;
        for th in &mut self.threads {
            th.vc.clear();
            th.finished = true;
        }
        self.recycle_atomics();
        self.cells.clear();
        self.add_thread(0);
        self.threads[0].vc.tick(0);
    }

    /// Forgets every atomic's history, keeping its memory for the next execution.
    fn recycle_atomics(&mut self) {
        for mut loc in self.atomics.drain(..).flatten() {
            self.spare.append(&mut loc.stores);
            self.spare_locations.push(loc);
        }
    }

    /// Clears every clock a tracked execution may have changed.
    fn clear_clocks(&mut self) {
        for th in &mut self.threads {
            th.fence_rel.clear();
            th.fence_acq.clear();
            th.fence_time = 0;
        }
        for table in [
            &mut self.objects,
            &mut self.ends,
            &mut self.parks,
            &mut self.allocs,
        ] {
            for clocks in table.iter_mut() {
                clocks.released.clear();
                clocks.read_released.clear();
            }
        }
        self.sc.clear();
        self.sc_time = 0;
    }

    /// Makes thread `t` live (it starts, or is spawned).
    fn add_thread(&mut self, t: Tid) {
        if self.threads.len() <= t {
            self.threads.resize_with(t + 1, || ThreadMem {
                finished: true,
                ..ThreadMem::default()
            });
        }
        self.threads[t].finished = false;
    }

    /// Moves thread `t`'s epoch on: what it does next is not published by what it did.
    fn tick(&mut self, t: Tid) {
        self.threads[t].vc.tick(t);
    }

    /// What happens before thread `t` now, as a clock's entries; then a new event of `t`
    /// begins, so that a later clock of `t` is ordered after this one. Empty if the
    /// execution is not tracked.
    pub(crate) fn clock_now(&mut self, t: Tid) -> Vec<u32> {
        if !self.tracked {
            return Vec::new();
        }
        let now = self.threads[t].vc.entries().to_vec();
        self.tick(t);
        now
    }

    /// Thread `parent` spawned `child`: the child starts from everything before the spawn.
    pub(crate) fn spawned(&mut self, parent: Tid, child: Tid) {
        self.add_thread(child);
        if !self.tracked {
            return;
        }
        let mut vc = std::mem::take(&mut self.scratch);
        vc.copy_from(&self.threads[parent].vc);
        vc.tick(child);
        std::mem::swap(&mut self.threads[child].vc, &mut vc);
        self.scratch = vc;
        self.tick(parent);
    }

    /// Thread `t` finished: its end publishes everything it did (`join` acquires it).
    pub(crate) fn finished(&mut self, t: Tid) {
        self.threads[t].finished = true;
        if self.tracked {
            self.access(t, Key::Thread(t), Role::Release);
        }
    }

    /// Thread `t` accesses the primitive (not an atomic) behind `key` as `role`:
    /// - a read (`get` of a set `OnceLock`, a read lock) acquires what writes and
    ///   releases published;
    /// - an acquire (`lock`, `join`) also acquires what read releases published;
    /// - a release (`unlock`, a thread's end) publishes, and a read release (read unlock)
    ///   publishes to acquires only;
    /// - a write (`call_once`, `park`, `unpark`) does both ways.
    ///
    /// A channel's parts (`Key::Part`) are not given here: its values carry their clocks
    /// ([`Memory::release_into`]).
    pub(crate) fn access(&mut self, t: Tid, key: Key, role: Role) {
        if !self.tracked {
            return;
        }
        let (table, i) = match key {
            Key::Obj(o) => (&mut self.objects, o),
            Key::Thread(u) => (&mut self.ends, u),
            Key::Park(u) => (&mut self.parks, u),
            Key::Alloc(a) => (&mut self.allocs, a),
            _ => return,
        };
        if table.len() <= i {
            table.resize_with(i + 1, SyncClocks::default);
        }
        let sync = &mut table[i];
        let vc = &mut self.threads[t].vc;
        match role {
            Role::Read | Role::ReadAcquire => vc.join(&sync.released),
            Role::Acquire => {
                vc.join(&sync.released);
                vc.join(&sync.read_released);
            }
            Role::Release => sync.released.join(vc),
            Role::ReadRelease => sync.read_released.join(vc),
            Role::Write => {
                vc.join(&sync.released);
                vc.join(&sync.read_released);
                sync.released.join(vc);
            }
        }
        self.tick(t);
    }

    /// Thread `t` publishes what happens before it now into `clock`, a clock a primitive
    /// keeps in its own state (a channel's value carries its send's): a release into it.
    pub(crate) fn release_into(&mut self, t: Tid, clock: &mut VClock) {
        if !self.tracked {
            return;
        }
        clock.join(&self.threads[t].vc);
        self.tick(t);
    }

    /// Thread `t` acquires what `clock`, kept by a primitive, published (the receive of a
    /// value acquires its send's clock).
    pub(crate) fn acquire_from(&mut self, t: Tid, clock: &VClock) {
        if self.tracked {
            self.threads[t].vc.join(clock);
        }
    }

    /// Thread `waker` woke thread `woken`: the woken one goes on after all the waker did.
    pub(crate) fn woke(&mut self, waker: Tid, woken: Tid) {
        if waker == woken || !self.tracked {
            return;
        }
        let mut vc = std::mem::take(&mut self.scratch);
        vc.copy_from(&self.threads[waker].vc);
        self.threads[woken].vc.join(&vc);
        self.scratch = vc;
        self.tick(waker);
    }

    /// A fence of thread `t` with `order` (not `Relaxed`).
    pub(crate) fn fence(&mut self, t: Tid, order: Ordering) {
        if !self.tracked {
            return;
        }
        let th = &mut self.threads[t];
        if matches!(
            order,
            Ordering::Acquire | Ordering::AcqRel | Ordering::SeqCst
        ) {
            th.vc.join(&th.fence_acq);
        }
        if order == Ordering::SeqCst {
            th.vc.join(&self.sc);
            self.sc.copy_from(&th.vc);
            self.sc_time += 1;
            th.fence_time = self.sc_time;
        }
        if matches!(
            order,
            Ordering::Release | Ordering::AcqRel | Ordering::SeqCst
        ) {
            th.fence_rel.copy_from(&th.vc);
        }
        self.tick(t);
    }

    /// Whether `t`'s clock knows epoch `epoch` of thread `u`.
    fn knows(&self, t: Tid, u: Tid, epoch: u32) -> bool {
        self.threads[t].vc.knows(u, epoch)
    }

    /// Thread `t`'s epoch now.
    fn epoch(&self, t: Tid) -> u32 {
        self.threads[t].vc.get(t)
    }

    /// The threads that have not finished.
    fn live(&self) -> impl Iterator<Item = Tid> + '_ {
        (0..self.threads.len()).filter(|&t| !self.threads[t].finished)
    }
}

/// Whether a load with `order` acquires.
fn acquires(order: Ordering) -> bool {
    matches!(
        order,
        Ordering::Acquire | Ordering::AcqRel | Ordering::SeqCst
    )
}

/// Whether a store with `order` releases.
fn releases(order: Ordering) -> bool {
    matches!(
        order,
        Ordering::Release | Ordering::AcqRel | Ordering::SeqCst
    )
}

/// The id-indexed slot of `obj` in `table`, grown as needed.
fn slot<T>(table: &mut Vec<Option<T>>, obj: ObjId) -> &mut Option<T> {
    if table.len() <= obj {
        table.resize_with(obj + 1, || None);
    }
    &mut table[obj]
}

#[cfg(test)]
mod tests;
