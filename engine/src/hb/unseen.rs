//! [`Key::Unseen`]: the state a model keeps outside the crate's primitives (a `std` atomic or
//! lock, memory behind a raw pointer, I/O), which no operation declares.
//!
//! Partial-order reduction assumes that what a thread does between two switch points touches
//! only what its operations declare; state the model does not see breaks that assumption,
//! and a reduced search could then prove a program that the unreduced search refutes. The
//! user marks where such state is shared with an **explicit yield** (`thread::yield_now`,
//! `hint::spin_loop`, `thread::sleep`, `future::yield_now`, which Tokio's `yield_now` is):
//! "other threads may act here". The two events on either side of a yield (the one that
//! calls it and the one that starts at the next switch point) **write** `Unseen`, and every
//! event **reads** it: such an event conflicts with every event of every other thread, while
//! two events away from yields still commute.
//!
//! # Why every event reads it
//! Making yields conflict only with each other would cost less, but the other side of a
//! shared access is usually not a yield: a task stores into a `std` atomic, yields and
//! stores again while another task, which never yields, loads it once; a thread sets a
//! `std` flag just after a yield and unparks a thread that may wake spuriously and read it;
//! a thread doubles a value behind a `std` mutex just after a yield while another adds to it
//! after a failed `try_lock`. Only one side yields in each, and only the order of the other
//! side's event between the two halves of the yield shows the bug. With every event
//! reading `Unseen`, the reduced search explores each event next to a yield in every order
//! against every event of the other threads: the unreduced search's outcomes for a program
//! whose every access to unseen state is in an event next to a yield of its own thread or
//! of the thread it races with (`tests/search/unseen_state.rs`; the generated programs of
//! `tests/search/dpor_soundness.rs` that share unseen state through yields). An access with
//! no yield next to it on either side is not explored, and cannot be: nothing says it is
//! there. Both halves of a yield write, not only the one after it: with only that one, the
//! other thread's event could be explored before the yielding thread's first half or
//! between its halves, not both, and each can show a different value.
//!
//! # Loops
//! A yield in a loop (a spin loop waiting for a flag, a retry loop) would make every round
//! a pair of events ordered against everything, and a search of two spinners would grow
//! from tens of executions to hundreds of thousands. A yield at a place (its line and its
//! call path: a helper called twice is two places) that some thread reaches twice in one
//! execution is therefore taken as a loop's, and its events write
//! nothing, in every execution of the search from then on. Finding one starts the search
//! over (`ExecOutcome::relearned`), so that the conflicts are the same in all of its
//! executions, as the reduction's argument needs: the executions before, which took those
//! yields to expose unseen state, are discarded. What this skips, a loop's yields ordering
//! unseen state, is named in the report (`Report::loop_yields`). The spin rule, for its
//! part, does not count `Unseen` as something observed (`runtime/spins.rs`), so two
//! spinners that yield never release each other.
//!
//! # Without a table
//! Every event reading the key is not stored per event: that would add an access to each.
//! The last event that wrote it is kept instead: an event that does not write it joins
//! that event's clock and races with it if it does not already know it; an event that
//! writes it joins every thread's clock (the join of every read since the last write and
//! of the last write itself) and races with the events of other threads since the last
//! write that it does not know, read as reads, and with the last write if none of those
//! races.

use super::{Access, Current, Hb, Key, Touch, VClock};
use crate::op::{Loc, Role, Tid};

/// Where an explicit yield is: its caller's location and a hash of its call path (the
/// return addresses of the stack), so that a helper that yields, called twice by
/// straight-line code, is two places, and a loop's yield is one.
pub(crate) type Place = (Loc, u64);

/// Whether an event with these accesses writes [`Key::Unseen`] (it is next to a yield).
pub(crate) fn writes(touches: &[Touch]) -> bool {
    touches.iter().any(|t| t.key == Key::Unseen)
}

impl Hb {
    /// Whether this execution found a new loop's yield (see [`Hb::yield_exposes`]): the
    /// search must start over, since its earlier executions took the yields there to
    /// expose unseen state.
    pub(crate) fn learned_loop(&self) -> bool {
        self.learned
    }

    /// Places of explicit yields taken as a loop's, in the search so far.
    pub(crate) fn loop_yields(&self) -> u64 {
        self.looped.len() as u64
    }

    /// Thread `t` yields explicitly at `place`: whether the yield exposes unseen state (its
    /// events write [`Key::Unseen`]), that is, no thread has reached `place` twice in one
    /// execution of the search so far. One that has makes `place` a loop's from now on.
    pub(crate) fn yield_exposes(&mut self, t: Tid, place: Place) -> bool {
        if self.looped.contains(&place) {
            return false;
        }
        if self.yielded_at.contains(&(t, place)) {
            self.looped.push(place);
            self.learned = true;
            return false;
        }
        self.yielded_at.push((t, place));
        true
    }

    /// Joins into `clock` (the clock of the event that ends) what `Key::Unseen` orders
    /// before it: every thread's clock if the event writes the key, else the last write's.
    pub(super) fn join_unseen(&self, writes: bool, clock: &mut VClock) {
        if writes {
            for other in &self.clocks {
                clock.join(other);
            }
        } else if let Some(w) = self.unseen {
            clock.join(&self.events[w as usize].clock);
        }
    }

    /// Adds to `races` the events `current` races with through `Key::Unseen`.
    pub(super) fn unseen_races(&self, current: &Current, races: &mut Vec<u32>) {
        let writes = writes(&current.declared);
        let access = |i: u32, role: Role| {
            let ev = &self.events[i as usize];
            Access {
                event: i,
                tid: ev.tid,
                epoch: ev.clock.get(ev.tid),
                role,
            }
        };
        let mut add = |history: &[Access], role| {
            for a in self.walk(history, current, role) {
                if !races.contains(&a.event) {
                    races.push(a.event);
                }
            }
        };
        match (writes, self.unseen) {
            (false, None) => {}
            (false, Some(w)) => add(&[access(w, Role::Write)], Role::Read),
            (true, last) => {
                // Oldest first, as a key's history is: the last write, then the reads since.
                let since = last.map_or(0, |w| w + 1);
                let history: Vec<Access> = last
                    .map(|w| access(w, Role::Write))
                    .into_iter()
                    .chain((since..self.events.len() as u32).map(|i| access(i, Role::Read)))
                    .collect();
                add(&history, Role::Write);
            }
        }
    }
}
