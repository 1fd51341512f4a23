//! Atomic locations: their stores in modification order, and what each thread may read.
//!
//! Invariants of a [`Location`]:
//! - `stores` is the modification order of the stores still readable by some thread (older
//!   ones are dropped once every live thread knows a newer one; a thread spawned later
//!   starts from its parent's knowledge).
//! - `stores[i].seen[u]` is the epoch at which thread `u` first knew store `i` (wrote it,
//!   read it, or read a store after it in modification order), 0 if never; thread `t` knows
//!   store `i` iff for some `u`, `t`'s clock knows `seen[u]` of `u`. A thread never reads
//!   or writes before the newest store it knows (coherence).
//! - A store with `rmw` read the store just before it in modification order; nothing is
//!   ever placed between them (atomicity of read-modify-writes).

use std::sync::atomic::Ordering;

use super::{Memory, acquires, releases, slot};
use crate::hb::VClock;
use crate::op::{ObjId, Tid};

/// Stores a location keeps before it looks for ones no thread can read any more.
pub(super) const PRUNE_FROM: usize = 4;

/// One store to an atomic location.
#[derive(Debug)]
pub(super) struct Store {
    pub(super) bits: u64,
    /// What a load that acquires this store learns (empty: nothing).
    clock: VClock,
    /// By thread, the epoch at which it first knew the store (0: not yet).
    seen: Vec<u32>,
    /// It is a read-modify-write of the store before it.
    rmw: bool,
    /// For a `SeqCst` store, its place in the order of `SeqCst` stores and fences (from 1);
    /// 0 for any other.
    sc: u32,
}

/// The stores of one atomic, in modification order.
#[derive(Debug, Default)]
pub(super) struct Location {
    pub(super) stores: Vec<Store>,
    /// Length from which the next store looks for stores to drop: twice what was left
    /// after the last look, so looking costs a constant per store on average (a thread
    /// that never reads the atomic keeps every store readable for it).
    prune_at: usize,
    /// The facade holds the value (`get_mut`): the next touch compares it with the newest
    /// store.
    lent: bool,
}

impl Store {
    /// A store of nothing, to fill.
    fn blank() -> Store {
        Store {
            bits: 0,
            clock: VClock::default(),
            seen: Vec::new(),
            rmw: false,
            sc: 0,
        }
    }

    fn mark_seen(&mut self, t: Tid, epoch: u32) {
        if self.seen.len() <= t {
            self.seen.resize(t + 1, 0);
        }
        if self.seen[t] == 0 {
            self.seen[t] = epoch;
        }
    }
}

impl Memory {
    /// Makes sure the atomic `obj` has a history in this execution, which starts from
    /// `bits()` (its facade's value, or its initial value for a `static` an earlier
    /// execution used). Its history is the one copy of its value from then on; only a lend
    /// ([`atomic_lend`](Self::atomic_lend)) gives the value back to the facade, which may
    /// change it through `&mut` (proof that no other thread can reach it): the history then
    /// restarts from `bits()` if that differs from the newest store.
    #[inline]
    pub(crate) fn atomic_touch(&mut self, obj: ObjId, bits: impl FnOnce() -> u64) {
        match self.atomics.get(obj) {
            Some(Some(loc)) if !loc.lent => {}
            _ => self.atomic_start(obj, bits()),
        }
    }

    /// [`atomic_touch`](Self::atomic_touch), then the newest store's value, to act on
    /// directly in an untracked execution (which keeps only that store).
    #[inline]
    pub(crate) fn atomic_newest(&mut self, obj: ObjId, bits: impl FnOnce() -> u64) -> &mut u64 {
        self.atomic_touch(obj, bits);
        let loc = self.atomics[obj].as_mut().expect("touched");
        &mut loc.stores.last_mut().expect("an atomic has a store").bits
    }

    /// [`atomic_touch`](Self::atomic_touch) of an atomic without a history, or lent.
    #[cold]
    fn atomic_start(&mut self, obj: ObjId, bits: u64) {
        let spare = &mut self.spare_locations;
        let loc = slot(&mut self.atomics, obj).get_or_insert_with(|| {
            let mut loc = spare.pop().unwrap_or_default();
            loc.prune_at = 0;
            loc.lent = false;
            loc
        });
        let lent = std::mem::take(&mut loc.lent);
        if lent && loc.stores.last().is_some_and(|s| s.bits == bits) {
            return;
        }
        self.spare.append(&mut loc.stores);
        let mut store = self.spare.pop().unwrap_or_else(Store::blank);
        store.clock.clear();
        store.seen.clear();
        (store.bits, store.rmw, store.sc) = (bits, false, 0);
        let loc = self.atomics[obj].as_mut().expect("touched");
        loc.stores.push(store);
    }

    /// The newest value of the atomic `obj`, if it has a history in this execution.
    pub(crate) fn atomic_value(&self, obj: ObjId) -> Option<u64> {
        let loc = self.atomics.get(obj)?.as_ref()?;
        loc.stores.last().map(|s| s.bits)
    }

    /// Gives the newest value of the atomic `obj` to its facade, which holds it from now on
    /// and may change it through `&mut` until the next operation touches the atomic again.
    pub(crate) fn atomic_lend(&mut self, obj: ObjId) -> Option<u64> {
        let loc = self.atomics.get_mut(obj)?.as_mut()?;
        loc.lent = true;
        loc.stores.last().map(|s| s.bits)
    }

    /// The ordering an operation acts with: its own under weak memory, `SeqCst` otherwise.
    pub(crate) fn effective(&self, order: Ordering) -> Ordering {
        if self.weak { order } else { Ordering::SeqCst }
    }

    /// Begins an access of thread `t` with `order`: a `SeqCst` one first acquires what the
    /// `SeqCst` fences before it published.
    pub(crate) fn atomic_begin(&mut self, t: Tid, order: Ordering) {
        if order == Ordering::SeqCst && self.tracked {
            self.threads[t].vc.join(&self.sc);
        }
    }

    /// Ends an access of `t`: moves its epoch on.
    fn atomic_end(&mut self, t: Tid) {
        self.tick(t);
    }

    fn location(&self, obj: ObjId) -> &Location {
        self.atomics[obj]
            .as_ref()
            .expect("atomic_touch runs before every atomic operation")
    }

    /// Thread `t` spun (yielded, or a spin-loop hint): from now on it knows the newest store
    /// of every atomic. RC11 alone would let a spin loop read a stale value for ever; std
    /// asks stores to become visible "in a reasonable amount of time", and a thread that
    /// waits for another one gives it that time.
    pub(crate) fn refresh(&mut self, t: Tid) {
        if !self.weak {
            return;
        }
        let epoch = self.epoch(t);
        for loc in self.atomics.iter_mut().flatten() {
            if let Some(newest) = loc.stores.last_mut() {
                newest.mark_seen(t, epoch);
            }
        }
        self.tick(t);
    }

    /// The value of the newest store of `obj`.
    pub(crate) fn newest(&self, obj: ObjId) -> u64 {
        let stores = &self.location(obj).stores;
        stores[stores.len() - 1].bits
    }

    /// The index of the newest store of `obj`.
    pub(crate) fn newest_index(&self, obj: ObjId) -> usize {
        self.location(obj).stores.len() - 1
    }

    /// Index in modification order of the newest store of `obj` that thread `t` knows: it
    /// wrote or read it or a later one, that happens before now, or it is a `SeqCst` store
    /// that came before `t`'s last `SeqCst` fence. For a `SeqCst` access (`sc`), the newest
    /// `SeqCst` store to `obj` too: `SeqCst` stores and accesses to one location are in one
    /// order that modification order and reads follow.
    fn floor(&self, obj: ObjId, t: Tid, sc: bool) -> usize {
        let fenced = self.threads[t].fence_time;
        let stores = &self.location(obj).stores;
        stores
            .iter()
            .rposition(|s| {
                (s.sc != 0 && (sc || s.sc <= fenced))
                    || s.seen
                        .iter()
                        .enumerate()
                        .any(|(u, &e)| e != 0 && self.knows(t, u, e))
            })
            .unwrap_or(0)
    }

    /// The stores of `obj` a load of thread `t` with `order` may read, newest first, into
    /// `out`.
    pub(crate) fn readable(&self, obj: ObjId, t: Tid, order: Ordering, out: &mut Vec<usize>) {
        out.clear();
        let len = self.location(obj).stores.len();
        if !self.weak {
            out.push(len - 1);
            return;
        }
        let sc = order == Ordering::SeqCst;
        out.extend((self.floor(obj, t, sc)..len).rev());
    }

    /// Thread `t` loads store `index` of `obj` with `order`; returns its value.
    pub(crate) fn load(&mut self, obj: ObjId, t: Tid, index: usize, order: Ordering) -> u64 {
        if !self.tracked {
            return self.location(obj).stores[index].bits;
        }
        let epoch = self.epoch(t);
        let loc = self.atomics[obj].as_mut().expect("touched");
        let store = &mut loc.stores[index];
        store.mark_seen(t, epoch);
        let bits = store.bits;
        let th = &mut self.threads[t];
        if acquires(order) {
            th.vc.join(&store.clock);
        } else {
            th.fence_acq.join(&store.clock);
        }
        self.atomic_end(t);
        bits
    }

    /// Where a store of thread `t` with `order` to `obj` may go in modification order, as
    /// indices to insert at, newest (last) first, into `out`.
    pub(crate) fn store_slots(&self, obj: ObjId, t: Tid, order: Ordering, out: &mut Vec<usize>) {
        out.clear();
        let stores = &self.location(obj).stores;
        let len = stores.len();
        if !self.weak {
            out.push(len);
            return;
        }
        let floor = self.floor(obj, t, order == Ordering::SeqCst);
        out.extend(
            (floor + 1..=len)
                .rev()
                .filter(|&i| i == len || !stores[i].rmw),
        );
    }

    /// Thread `t` stores `bits` to `obj` with `order`, at index `at` of modification order.
    pub(crate) fn store(&mut self, obj: ObjId, t: Tid, at: usize, bits: u64, order: Ordering) {
        if !self.tracked {
            self.overwrite(obj, bits);
            return;
        }
        let store = self.new_store(t, bits, order, false);
        if !self.weak {
            self.clear_stores(obj);
        }
        let loc = self.atomics[obj].as_mut().expect("touched");
        loc.stores.insert(at.min(loc.stores.len()), store);
        self.atomic_end(t);
        self.prune(obj);
    }

    /// A store of `bits` by `t` with `order` (`rmw`: a read-modify-write), known by `t`
    /// now; built in the memory of a dropped store if there is one (stores come and go at
    /// every atomic write).
    fn new_store(&mut self, t: Tid, bits: u64, order: Ordering, rmw: bool) -> Store {
        let sc = self.sc_stamp(order);
        let epoch = self.epoch(t);
        let mut store = self.spare.pop().unwrap_or_else(Store::blank);
        let th = &self.threads[t];
        store.clock.copy_from(if releases(order) {
            &th.vc
        } else {
            &th.fence_rel
        });
        store.seen.clear();
        store.mark_seen(t, epoch);
        (store.bits, store.rmw, store.sc) = (bits, rmw, sc);
        store
    }

    /// Untracked: the only store of `obj` now holds `bits`.
    fn overwrite(&mut self, obj: ObjId, bits: u64) {
        let loc = self.atomics[obj].as_mut().expect("touched");
        let newest = loc.stores.last_mut().expect("an atomic has a store");
        newest.bits = bits;
    }

    /// Drops every store of `obj`, keeping their memory.
    fn clear_stores(&mut self, obj: ObjId) {
        let loc = self.atomics[obj].as_mut().expect("touched");
        self.spare.append(&mut loc.stores);
    }

    /// The place of a store with `order` in the order of `SeqCst` stores and fences (0 if
    /// it is not `SeqCst`).
    fn sc_stamp(&mut self, order: Ordering) -> u32 {
        if order != Ordering::SeqCst {
            return 0;
        }
        self.sc_time += 1;
        self.sc_time
    }

    /// Thread `t` reads the newest store of `obj` and, if `f` gives a new value, writes it
    /// right after (a read-modify-write). `order` is the ordering of a success, `failure`
    /// of a read that writes nothing. Returns the value read and whether it wrote.
    pub(crate) fn rmw(
        &mut self,
        obj: ObjId,
        t: Tid,
        order: Ordering,
        failure: Ordering,
        f: impl FnOnce(u64) -> Option<u64>,
    ) -> (u64, bool) {
        let newest = self.location(obj).stores.len() - 1;
        let old = self.location(obj).stores[newest].bits;
        let Some(new) = f(old) else {
            return (self.load(obj, t, newest, failure), false);
        };
        if !self.tracked {
            self.overwrite(obj, new);
            return (old, true);
        }
        let epoch = self.epoch(t);
        let mut store = self.new_store(t, new, order, true);
        let loc = self.atomics[obj].as_mut().expect("touched");
        let source = &mut loc.stores[newest];
        source.mark_seen(t, epoch);
        // A read-modify-write continues the release sequence of the store it read.
        store.clock.join(&source.clock);
        let th = &mut self.threads[t];
        if acquires(order) {
            th.vc.join(&source.clock);
        } else {
            th.fence_acq.join(&source.clock);
        }
        if !self.weak {
            self.clear_stores(obj);
        }
        let loc = self.atomics[obj].as_mut().expect("touched");
        loc.stores.push(store);
        self.atomic_end(t);
        self.prune(obj);
        (old, true)
    }

    /// The stores a failing compare-and-exchange of thread `t` on `obj` may read besides the
    /// newest: older readable ones whose value is not `expected` (reading one whose value
    /// is `expected` would succeed, and only the newest store can be read by a success).
    /// Newest first into `out`, after the newest store itself.
    pub(crate) fn cas_readable(
        &self,
        obj: ObjId,
        t: Tid,
        failure: Ordering,
        expected: u64,
        out: &mut Vec<usize>,
    ) {
        self.readable(obj, t, failure, out);
        let stores = &self.location(obj).stores;
        let newest = stores.len() - 1;
        out.retain(|&i| i == newest || stores[i].bits != expected);
    }

    /// Drops the stores of `obj` that no live thread can read any more.
    fn prune(&mut self, obj: ObjId) {
        let loc = self.location(obj);
        if loc.stores.len() < loc.prune_at.max(PRUNE_FROM) {
            return;
        }
        let oldest = self
            .live()
            .map(|t| self.floor(obj, t, false))
            .min()
            .unwrap_or(0);
        let loc = self.atomics[obj].as_mut().expect("touched");
        if oldest > 0 {
            self.spare.extend(loc.stores.drain(..oldest));
        }
        loc.prune_at = 2 * loc.stores.len();
    }
}
