//! Strategies: who runs next at each decision.
//!
//! A strategy is pure: it sees the runnable threads and its own seeded state, never the clock,
//! the environment or the model's data, so the same seed always yields the same executions.
//! Each algorithm lives in its own file behind the [`Strategy`] trait.

mod dfs;
mod dpor;
mod estimate;
mod pct;
mod prefix;
mod random;
mod replay;
mod walk;

pub(crate) use dfs::DfsStrategy;
pub(crate) use dpor::DporStrategy;
pub(crate) use estimate::{Estimate, Search};
pub(crate) use pct::PctStrategy;
pub(crate) use prefix::{Followed, PrefixStrategy};
pub(crate) use random::{RandomStrategy, execution_seed};
pub(crate) use replay::{Expected, ReplayStrategy};

use crate::hb::Hb;
use crate::op::{Op, Tid};

/// What a strategy sees at a decision.
#[derive(Debug)]
pub(crate) struct Choice<'a> {
    /// The threads that can run, ascending; at least two.
    pub(crate) runnable: &'a [Tid],
    /// The operation each runnable thread performs next, in the order of `runnable`; empty
    /// for a strategy whose [`Strategy::reads_ops`] is `false`.
    pub(crate) ops: &'a [Op],
    /// The thread that reached the switch point, if it can continue: choosing another one is
    /// a preemption.
    pub(crate) current: Option<Tid>,
    /// Whether `current` said it is spinning (`yield_now`, `hint::spin_loop`, a failed
    /// `try_lock`) since its last decision.
    pub(crate) current_spins: bool,
    /// Switch points passed so far in the execution.
    pub(crate) step: u64,
    /// Whether a thread that spun is held back under the legacy rule of schedule formats 2
    /// and 3: whichever of `runnable` runs lets it go on.
    pub(crate) held_back: bool,
}

/// What a decision other than the choice of a thread is about. Option 0 is always the
/// behaviour of a sequentially consistent, spurious-free machine; a depth-first search tries
/// it first, except for the store a load reads ([`PickKind::search_order`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum PickKind {
    /// Which store an atomic load reads: 0 the newest in modification order, `n` the `n`th
    /// before it.
    ReadFrom,
    /// Which store a compare-and-exchange reads: 0 the newest (it succeeds if that holds the
    /// expected value), `n` the `n`th newest of the older stores it may read whose value is
    /// not the expected one (it fails).
    CasReadFrom,
    /// Where a store goes in modification order: 0 last, `n` before the `n` newest stores
    /// it may go before.
    StoreAt,
    /// Whether a timed wait (`wait_timeout`, `recv_timeout`, `park_timeout`, `sleep`) times
    /// out at once, its deadline passing while other threads could still act: 0 no (it
    /// waits for a wake-up, or for its deadline once no thread can run), 1 yes.
    TimeOut,
    /// Whether a wait (`Condvar::wait`, `park`) returns at once without a wake-up: 0 no, 1
    /// yes.
    SpuriousWake,
    /// Whether a `compare_exchange_weak` that could succeed fails: 0 no, 1 yes.
    SpuriousFailure,
    /// Which waiter a `notify_one` wakes: 0 the one that waited longest, `n` the `n`th
    /// after it.
    Notify,
}

impl PickKind {
    /// Every kind, for reading schedules.
    pub(crate) const ALL: [PickKind; 7] = [
        PickKind::ReadFrom,
        PickKind::CasReadFrom,
        PickKind::StoreAt,
        PickKind::TimeOut,
        PickKind::SpuriousWake,
        PickKind::SpuriousFailure,
        PickKind::Notify,
    ];

    /// The name in schedule files and reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            PickKind::ReadFrom => "read from",
            PickKind::CasReadFrom => "exchange reads",
            PickKind::StoreAt => "store at",
            PickKind::TimeOut => "time out now",
            PickKind::SpuriousWake => "wake spuriously",
            PickKind::SpuriousFailure => "fail spuriously",
            PickKind::Notify => "notify waiter",
        }
    }

    /// The order in which a depth-first search tries the `options` of a decision of this
    /// kind: the oldest store a load may read first (a stale read is what finds a missing
    /// `Acquire`/`Release`, so it comes first, as in loom); for a compare-and-exchange, the
    /// newest first (a stale read that fails usually only sends a spin loop round again,
    /// after which the thread sees the newest store), then the others oldest first; every
    /// other kind from option 0.
    pub(crate) fn search_order(self, options: usize) -> Vec<usize> {
        match self {
            PickKind::ReadFrom => (0..options).rev().collect(),
            PickKind::CasReadFrom => std::iter::once(0).chain((1..options).rev()).collect(),
            _ => (0..options).collect(),
        }
    }

    /// The kind named `name` in a schedule file.
    pub(crate) fn from_name(name: &str) -> Option<PickKind> {
        PickKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// A decision other than the choice of a thread, made by the running thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pick {
    pub(crate) kind: PickKind,
    /// How many options there are (at least two); the strategy returns one below it.
    pub(crate) options: usize,
    /// The thread that decides.
    pub(crate) tid: Tid,
}

/// Why a strategy cannot go on with this execution. Boxed, so that a decision's
/// `Result<Tid, Refusal>` is returned in registers (decisions are the hot path).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
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
pub(crate) struct Divergence {
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
pub(crate) struct Nondeterminism {
    pub(crate) decision: usize,
    /// What the earlier execution saw there, described for a person.
    pub(crate) before: String,
    /// What this execution sees.
    pub(crate) now: String,
}

/// One search algorithm.
pub(crate) trait Strategy: Send {
    /// Name recorded in schedules and reports ("random", "pct", "dfs", "replay").
    fn name(&self) -> &'static str;

    /// Prepares the next execution. `false`: the strategy has explored everything it can.
    fn begin_execution(&mut self) -> bool {
        true
    }

    /// Whether [`choose`](Self::choose) reads `choice.ops` (the runtime skips gathering
    /// them otherwise: it is done at every decision).
    fn reads_ops(&self) -> bool {
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

    /// Whether the whole space the strategy searches has been explored.
    fn exhausted(&self) -> bool {
        false
    }

    /// Whether the strategy reads the execution's events ([`event`](Self::event)); the
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

    /// Estimates of how many executions the whole search takes, if the strategy knows.
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
