//! Strategies: who runs next at each decision.
//!
//! A strategy is pure: it sees the runnable threads and its own seeded state, never the clock,
//! the environment or the model's data, so the same seed always yields the same executions.
//! Each algorithm lives in its own file behind the [`Strategy`] trait; a depth-first search
//! also implements [`Exhaustive`].
//!
//! Every strategy has one row in `listing.rs`: its name, how a run drives it ([`Drive`]:
//! independent executions, one search, or following a schedule) and, for one a user
//! chooses ([`StrategyKind`]), its maker, which makes it from a [`Setup`]; `driver::run`
//! reads the row. Replay and prefix follow a stored schedule: the driver makes them from
//! it, under the rules the schedule was recorded with ([`replay_rules`]).

mod dfs;
mod dpor;
mod estimate;
mod listing;
mod pct;
mod prefix;
mod random;
mod replay;
mod rules;
mod walk;

// Made by their makers (`listing.rs`); unit tests make them directly.
pub use dfs::DfsStrategy;
pub use dpor::DporStrategy;
pub use estimate::{Estimate, Search};
pub use listing::Drive;
pub use pct::PctStrategy;
pub use prefix::{Followed, PrefixStrategy};
pub use random::{RandomStrategy, execution_seed};
pub use replay::{Expected, ReplayStrategy};
pub use rules::{ReplayRules, replay_rules};

use crate::hb::Hb;
use crate::op::{Op, PickKind, Tid};
use crate::settings::{Reduction, StrategyKind};

/// What a strategy a user chose is made from.
#[derive(Clone, Copy, Debug)]
pub struct Setup {
    /// The strategy, with its parameters.
    pub kind: StrategyKind,
    /// The reduction a search uses.
    pub reduction: Reduction,
    /// The execution's own seed ([`execution_seed`]) in a run of independent executions;
    /// the run's for a search.
    pub seed: u64,
    /// What the execution learned from the epochs before its own: the most decisions
    /// between threads of any of their executions (`None` in the first epoch, and in a run
    /// without epochs).
    pub learned: Option<u64>,
}

/// Makes a strategy from a [`Setup`] whose `kind` has the maker's name.
pub(crate) type Make = fn(&Setup) -> Box<dyn Strategy>;

/// What a strategy sees at a decision.
#[derive(Debug)]
pub struct Choice<'a> {
    /// The threads that can run, ascending; at least two.
    pub(crate) runnable: &'a [Tid],
    /// The operation each runnable thread performs next, in the order of `runnable`; empty
    /// for a strategy whose [`Strategy::reads_ops`] is `false`.
    pub(crate) ops: &'a [Op],
    /// The thread that reached the switch point, if it can continue: choosing another one is
    /// a preemption.
    pub(crate) current: Option<Tid>,
    /// Whether `current` repeated a spin (a yield, a spin-loop hint or a failed `try_lock`
    /// again where it spun, no other thread run since) since its last decision.
    pub(crate) current_spins: bool,
}

/// A decision other than the choice of a thread, made by the running thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pick {
    pub(crate) kind: PickKind,
    /// How many options there are (at least two); the strategy returns one below it.
    pub(crate) options: usize,
    /// The thread that decides.
    pub tid: Tid,
}

/// Why a strategy cannot go on with this execution. Boxed, so that a decision's
/// `Result<Tid, Refusal>` is returned in registers (decisions are the hot path).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A replayed schedule does not fit the model.
    Divergence(Box<Divergence>),
    /// The same decisions led to a different situation than before.
    Nondeterminism(Box<Nondeterminism>),
    /// A replayed decision meets a different situation than when it was recorded: the model
    /// changed, or it is not deterministic (replay cannot tell which).
    Mismatch(Box<Nondeterminism>),
}

/// The schedule being replayed cannot be followed by this model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// Index of the decision that could not be followed.
    pub(crate) decision: usize,
    /// The thread the schedule names there (`None`: the schedule has no more decisions).
    pub(crate) expected: Option<Tid>,
    /// The threads that could run (empty: the model finished before the schedule did).
    pub(crate) runnable: Vec<Tid>,
}

/// The model reached decision `decision` through the same earlier decisions as in a previous
/// execution, but the runnable threads or their next operations differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nondeterminism {
    pub(crate) decision: usize,
    /// What the earlier execution saw there, described for a person.
    pub(crate) before: String,
    /// What this execution sees.
    pub(crate) now: String,
}

/// One search algorithm: what the scheduler asks at every decision, and what the driver
/// asks around each execution. Random, PCT, replay and prefix implement only this; a
/// depth-first search also has the hooks of [`Exhaustive`].
pub trait Strategy: Send {
    /// Whether [`choose`](Self::choose) reads `choice.ops` (the runtime skips gathering
    /// them otherwise: it is done at every decision).
    fn reads_ops(&self) -> bool {
        true
    }

    /// Prepares the next execution. `false`: the strategy has explored everything it can,
    /// and says so again at every later call (the driver asks once more at the end of a run
    /// whether the search was exhausted).
    fn begin_execution(&mut self) -> bool {
        true
    }

    /// Picks one of `choice.runnable`.
    fn choose(&mut self, choice: &Choice<'_>) -> Result<Tid, Refusal>;

    /// Picks one of `pick.options` (see [`PickKind`]).
    fn pick(&mut self, pick: &Pick) -> Result<usize, Refusal>;

    /// Called when an execution ended without failure.
    fn end_execution(&mut self) -> Result<(), Refusal> {
        Ok(())
    }

    /// The hooks of a search that explores every schedule (within its bound), if this is
    /// one: it then also explores every value of a decision other than a thread's, and the
    /// runtime refuses what it cannot exhaust (`runtime/data.rs`).
    fn exhaustive(&mut self) -> Option<&mut dyn Exhaustive> {
        None
    }
}

/// What only a depth-first search (`dfs.rs`, `dpor/`) tells the runtime and the driver
/// besides its decisions: the events it learns races from, and how far along it is.
pub trait Exhaustive {
    /// Whether the search reads the execution's events ([`event`](Self::event)); the
    /// runtime tracks happens-before only then.
    fn wants_events(&self) -> bool {
        false
    }

    /// Event `index` of the running execution has finished (see [`Hb`]).
    fn event(&mut self, hb: &Hb, index: usize) {
        let _ = (hb, index);
    }

    /// Executions so far that repeated a class of schedules already explored.
    fn redundant(&self) -> u64 {
        0
    }

    /// Estimates of how many executions the whole search takes, if the search knows.
    fn estimate(&self) -> Option<Estimate> {
        None
    }

    /// How deep the search is (decisions on the current path).
    fn depth(&self) -> usize {
        0
    }
}

/// A short description of what could run at a decision, for nondeterminism reports:
/// `#0 mutex lock at src/lib.rs:3:5, #1 thread start at ...`.
pub(crate) fn describe(runnable: &[Tid], ops: &[Op]) -> String {
    let parts: Vec<String> = runnable
        .iter()
        .zip(ops)
        .map(|(t, op)| {
            format!(
                "#{t} {} at {}:{}",
                op.kind.name(),
                op.loc.file(),
                op.loc.line()
            )
        })
        .collect();
    parts.join(", ")
}
