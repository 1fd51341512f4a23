//! Strategies: who runs next at each decision.
//!
//! A strategy is pure: it sees the runnable threads and its own seeded state, never the clock,
//! the environment or the model's data, so the same seed always yields the same executions.
//! Each algorithm lives in its own file behind the [`Strategy`] trait.

mod random;
mod replay;

pub(crate) use random::{RandomStrategy, execution_seed};
pub(crate) use replay::ReplayStrategy;

use crate::runtime::Tid;

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

/// One search algorithm.
pub(crate) trait Strategy: Send {
    /// Name recorded in schedules and reports ("random", "replay", ...).
    fn name(&self) -> &'static str;

    /// Picks one of `runnable` (ascending, at least two threads). `current` is the thread that
    /// reached the switch point, if it could continue.
    fn choose(&mut self, runnable: &[Tid], current: Option<Tid>) -> Result<Tid, Divergence>;

    /// Called when an execution ended without failure; a strategy that expected more
    /// decisions reports the divergence.
    fn end_execution(&mut self) -> Result<(), Divergence> {
        Ok(())
    }
}
