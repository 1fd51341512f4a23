//! What a thread's next decision and next event learn of how it waited: that it said it
//! spins (for strategies that prefer other threads) and how many times in a row (for the
//! virtual clock), that it yielded explicitly (for the reduction), and that it was woken, and through which key (for happens-before). Set by `sched.rs`,
//! `spins.rs` and `events.rs`.

use super::Key;

/// A model thread's signals (see the module).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Signals {
    /// It repeated a spin (`events::spun`) since the last decision that could have chosen
    /// it.
    spinning: bool,
    /// It yielded explicitly in its event under way, which writes `Key::Unseen` when it ends
    /// unless the yield is a repeated spin (`hb/unseen.rs`).
    yielded: bool,
    /// Its next event writes `Key::Unseen`: it starts at an explicit yield.
    unseen: bool,
    /// Its next event resumes it after it waited: the event could not have run earlier.
    woken: bool,
    /// The key whose change woke it, which its next event reads.
    woken_on: Option<Key>,
    /// Spins since its last operation that was not a yield or spin-loop hint.
    in_row: u32,
}

impl Signals {
    /// It says it is spinning, and whether it `repeated` a spin; returns how many times it
    /// spun in a row before.
    pub(crate) fn spin(&mut self, repeated: bool) -> u32 {
        self.spinning |= repeated;
        self.in_row += 1;
        self.in_row - 1
    }

    /// Its operation is not a yield or a spin-loop hint: a row of spins ends.
    pub(crate) fn end_row(&mut self) {
        self.in_row = 0;
    }

    /// Whether it repeated a spin since the last call; forgets it.
    pub(crate) fn take_spinning(&mut self) -> bool {
        std::mem::take(&mut self.spinning)
    }

    /// It yields explicitly in its event under way.
    pub(crate) fn yield_explicitly(&mut self) {
        self.yielded = true;
    }

    /// Whether it yielded explicitly in its event under way; forgets it.
    pub(crate) fn take_yielded(&mut self) -> bool {
        std::mem::take(&mut self.yielded)
    }

    /// Its next event may touch state the model does not see.
    pub(crate) fn expose_unseen(&mut self) {
        self.unseen = true;
    }

    /// Whether its next event writes `Key::Unseen`; forgets it.
    pub(crate) fn take_unseen(&mut self) -> bool {
        std::mem::take(&mut self.unseen)
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
