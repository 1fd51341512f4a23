//! Epochs of a run whose strategies learn from earlier executions (PCT's `k`, the length of
//! an execution in decisions between threads): executions run in epochs of doubling size,
//! `0..1`, `1..3`, `3..7`, ... (epoch `e` is `2^e - 1 .. 2^(e+1) - 1`), and every execution
//! of an epoch is given the most such decisions of all the executions of the epochs before
//! it (called its steps here). What an execution learns thus
//! depends on its index alone, never on which driver ran what: the result does not depend
//! on the parallelism.
//!
//! Invariant: an execution of epoch `e` starts only once every execution of the epochs
//! before it has ended. A driver that takes executions of the next epoch waits here until
//! the open one is complete, or until the run stops (a failure below them, the time budget,
//! a declined strategy), which [`Epochs::wake`] announces.

use std::ops::Range;

use parking_lot::{Condvar, Mutex};

/// The epochs of a run (or none: every execution learns nothing, and nobody waits).
pub(super) struct Epochs {
    on: bool,
    state: Mutex<State>,
    /// Signalled when an epoch completes and when the run stops.
    turn: Condvar,
}

/// The epoch that runs now.
struct State {
    /// Its first execution; every execution below it has ended.
    open: u64,
    /// Its executions that have ended.
    done: u64,
    /// The most steps of every execution that has ended.
    max_steps: u64,
    /// What its executions learn: the most steps of the epochs before it (`None` in the
    /// first epoch).
    learned: Option<u64>,
}

/// The end of the epoch of execution `i`.
pub(super) fn end_of(i: u64) -> u64 {
    // i + 1 is in 2^e..2^(e+1) for epoch e, whose end is 2^(e+1) - 1.
    let e = 63 - (i + 1).leading_zeros();
    u64::MAX >> (63 - e)
}

/// The first execution of the epoch of execution `i`.
fn start_of(i: u64) -> u64 {
    end_of(i) >> 1
}

impl Epochs {
    /// The epochs of a run, if `on` (otherwise executions learn nothing).
    pub(super) fn new(on: bool) -> Self {
        Epochs {
            on,
            state: Mutex::new(State {
                open: 0,
                done: 0,
                max_steps: 0,
                learned: None,
            }),
            turn: Condvar::new(),
        }
    }

    /// Where the chunk of executions starting at `first` must end: the end of its epoch.
    pub(super) fn limit(&self, first: u64) -> u64 {
        if self.on { end_of(first) } else { u64::MAX }
    }

    /// What the executions of the chunk starting at `first` learn, once every execution of
    /// the epochs before theirs has ended; `None` if `stop()` says the run stops first.
    pub(super) fn learned(&self, first: u64, stop: impl Fn() -> bool) -> Option<Option<u64>> {
        if !self.on {
            return Some(None);
        }
        let begins = start_of(first);
        let mut state = self.state.lock();
        while state.open != begins {
            debug_assert!(state.open < begins, "a chunk of an epoch that ended");
            if stop() {
                return None;
            }
            self.turn.wait(&mut state);
        }
        Some(state.learned)
    }

    /// Executions `chunk` of the open epoch ended, the most steps among them `steps`; the
    /// run has `total` executions (its last epoch ends there).
    pub(super) fn ended(&self, chunk: Range<u64>, steps: u64, total: u64) {
        if !self.on {
            return;
        }
        let mut state = self.state.lock();
        let end = end_of(state.open).min(total);
        debug_assert!(state.open <= chunk.start && chunk.end <= end);
        state.done += chunk.end - chunk.start;
        state.max_steps = state.max_steps.max(steps);
        if state.open + state.done == end {
            state.learned = Some(state.max_steps);
            (state.open, state.done) = (end, 0);
            drop(state);
            self.turn.notify_all();
        }
    }

    /// Wakes every driver waiting for an epoch, to look again whether the run stops.
    pub(super) fn wake(&self) {
        if self.on {
            // Taken and released, so that a driver between its look and its wait sees this.
            drop(self.state.lock());
            self.turn.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{end_of, start_of};

    #[test]
    fn epochs_double() {
        let bounds: Vec<_> = [0, 1, 2, 3, 6, 7, 14, 15]
            .map(|i| (start_of(i), end_of(i)))
            .into();
        let expected = [
            (0, 1),
            (1, 3),
            (1, 3),
            (3, 7),
            (3, 7),
            (7, 15),
            (7, 15),
            (15, 31),
        ];
        assert_eq!(bounds, expected);
        assert_eq!(end_of(u64::MAX - 1), u64::MAX);
        assert_eq!(start_of(u64::MAX - 1), u64::MAX >> 1);
    }
}
