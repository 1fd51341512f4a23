//! What a thread's next decision and next event learn of how it waited: that it said it
//! spins (for strategies that prefer other threads) and how many times in a row (for the
//! virtual clock), that it is held back until another thread runs (`SpinRule::AnotherRan`),
//! and that it was woken, and through which key (for happens-before). Set by `sched.rs`,
//! `spins.rs` and `events.rs`.

use super::Key;

/// A model thread's signals (see the module).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Signals {
    /// It said it is spinning since the last decision that could have chosen it.
    spinning: bool,
    /// It spun and no other thread has run since: under `SpinRule::AnotherRan` it is not a
    /// choice while another thread can run.
    yielded: bool,
    /// Its next event resumes it after it waited: the event could not have run earlier.
    woken: bool,
    /// The key whose change woke it, which its next event reads.
    woken_on: Option<Key>,
    /// Spins since its last operation that was not a yield or spin-loop hint.
    in_row: u32,
}

impl Signals {
    /// It says it is spinning; returns how many times it did in a row before.
    pub(crate) fn spin(&mut self) -> u32 {
        self.spinning = true;
        self.in_row += 1;
        self.in_row - 1
    }

    /// Its operation is not a yield or a spin-loop hint: a row of spins ends.
    pub(crate) fn end_row(&mut self) {
        self.in_row = 0;
    }

    /// Whether it said it is spinning since the last call; forgets it.
    pub(crate) fn take_spinning(&mut self) -> bool {
        std::mem::take(&mut self.spinning)
    }

    /// It spun: held back until another thread has run.
    pub(crate) fn hold(&mut self) {
        self.yielded = true;
    }

    /// Another thread ran: no longer held back.
    pub(crate) fn release(&mut self) {
        self.yielded = false;
    }

    /// Whether it is held back until another thread runs.
    pub(crate) fn held(&self) -> bool {
        self.yielded
    }

    /// It was woken, through the change of `on` if that is known (a timeout has no key,
    /// and keeps one set before).
    pub(crate) fn wake(&mut self, on: Option<Key>) {
        self.woken = true;
        if on.is_some() {
            self.woken_on = on;
        }
    }

    /// Whether it was woken, and through which key, since the last call; forgets both.
    pub(crate) fn take_wake(&mut self) -> (bool, Option<Key>) {
        (std::mem::take(&mut self.woken), self.woken_on.take())
    }
}
