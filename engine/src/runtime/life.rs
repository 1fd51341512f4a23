//! A model thread's life: where it is between its registration and its end, how it unwinds,
//! and what teardown asked of it, with every transition in this file.
//!
//! ```text
//!   Unstarted ──begin──▶ Running ──exit──▶ Exiting ──(sched::finish)──▶ Status::Finished
//!                          │  ▲
//!                  drain(true) drain(false)      (the joins at the end of a thread::scope)
//!                          ▼  │
//!                        Draining
//!
//!   any stage but the end ──leave_behind──▶ LeftBehind (never resumed)
//! ```
//!
//! Beside the stage, two things the thread does or is asked to do: whether it unwinds (from
//! a panic of the program, or from teardown's marker) and whether teardown asked it to
//! unwind when it next runs. Its scheduling status (runnable, blocked, finished) is
//! `Status`, which the scheduler owns; finishing is the last step and sets that status.
//!
//! A stage is exclusive: a destructor that runs a `thread::scope` while its thread exits
//! leaves it `Exiting`, which teardown treats as draining and more (it lets the thread run
//! on, and never unwinds it).

use super::execution::Unwinding;

/// Where a model thread is in its life (see the module's documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Registered; its body has not started.
    Unstarted,
    /// Its body runs.
    Running,
    /// Its body waits for its scoped threads at the end of a `thread::scope`: teardown lets
    /// it wait, and unwinds those threads instead.
    Draining,
    /// Its body is over and its thread-locals are being destroyed: it is not preempted or
    /// unwound any more.
    Exiting,
    /// Teardown left it as it was: it is never resumed (see `teardown.rs`).
    LeftBehind,
}

/// A model thread's life: its stage, how it unwinds, and teardown's requests.
#[derive(Clone, Debug)]
pub(crate) struct Life {
    stage: Stage,
    unwinding: Unwinding,
    /// Teardown asks the thread to unwind the next time it runs.
    abort: bool,
    /// Teardown unwindings it caught (`catch_unwind`) and came back from.
    aborts_caught: u32,
}

impl Default for Life {
    fn default() -> Self {
        Life {
            stage: Stage::Unstarted,
            unwinding: Unwinding::No,
            abort: false,
            aborts_caught: 0,
        }
    }
}

impl Life {
    /// Whether its body has started (it may have ended since).
    pub(crate) fn started(&self) -> bool {
        self.stage != Stage::Unstarted
    }

    /// Whether its body is over and its thread-locals are being destroyed.
    pub(crate) fn exiting(&self) -> bool {
        self.stage == Stage::Exiting
    }

    /// Whether teardown left it behind.
    pub(crate) fn left_behind(&self) -> bool {
        self.stage == Stage::LeftBehind
    }

    /// Whether it waits for its scoped threads or exits: teardown lets it run on.
    pub(crate) fn lingers(&self) -> bool {
        matches!(self.stage, Stage::Draining | Stage::Exiting)
    }

    /// How it unwinds.
    pub(crate) fn unwinding(&self) -> Unwinding {
        self.unwinding
    }

    /// Whether teardown asked it to unwind (it may be unwinding already, or have caught it).
    pub(crate) fn abort_asked(&self) -> bool {
        self.abort
    }

    /// Teardown unwindings it caught and came back from.
    pub(crate) fn aborts_caught(&self) -> u32 {
        self.aborts_caught
    }

    /// Whether it is to start unwinding when it next runs: teardown asked, it does not
    /// unwind yet, and it is not exiting (an exiting thread is never unwound).
    pub(crate) fn must_unwind(&self) -> bool {
        self.abort && self.unwinding == Unwinding::No && self.stage != Stage::Exiting
    }

    /// Its body gets control for the first time. `false`: teardown asked it to unwind
    /// before it started, so its body is dropped without running, as an unwinding.
    pub(crate) fn begin(&mut self) -> bool {
        self.stage = Stage::Running;
        if self.abort {
            self.unwinding = Unwinding::Teardown;
            return false;
        }
        true
    }

    /// It starts (`true`) or ends (`false`) waiting for its scoped threads. An exiting
    /// thread stays exiting (see the module's documentation).
    pub(crate) fn drain(&mut self, waiting: bool) {
        match (self.stage, waiting) {
            (Stage::Running, true) => self.stage = Stage::Draining,
            (Stage::Draining, false) => self.stage = Stage::Running,
            _ => {}
        }
    }

    /// Its body returned or unwound: what it leaves is destroyed now.
    pub(crate) fn exit(&mut self) {
        self.stage = Stage::Exiting;
        self.unwinding = Unwinding::No;
    }

    /// Teardown leaves it as it is.
    pub(crate) fn leave_behind(&mut self) {
        self.stage = Stage::LeftBehind;
    }

    /// Teardown asks it to unwind the next time it runs.
    pub(crate) fn ask_to_unwind(&mut self) {
        self.abort = true;
    }

    /// It unwinds with teardown's marker now.
    pub(crate) fn unwind_for_teardown(&mut self) {
        self.abort = true;
        self.unwinding = Unwinding::Teardown;
    }

    /// A panic of the program starts unwinding it; `false` if it was unwinding already
    /// (a destructor panicked during that unwinding).
    pub(crate) fn panic_starts(&mut self) -> bool {
        if self.unwinding == Unwinding::No {
            self.unwinding = Unwinding::Panic;
            return true;
        }
        false
    }

    /// It reached a switch point, not panicking (per std) though it was unwinding: it
    /// caught that unwinding and goes on. Counts a caught teardown unwinding.
    pub(crate) fn unwinding_caught(&mut self) {
        if self.unwinding == Unwinding::Teardown {
            self.aborts_caught += 1;
        }
        self.unwinding = Unwinding::No;
    }

    /// Its body's unwinding, if any, ended where the body ended (the runtime caught it).
    pub(crate) fn body_ended(&mut self) {
        self.unwinding = Unwinding::No;
    }
}
