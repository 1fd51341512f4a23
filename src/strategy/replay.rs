//! Replays a recorded list of decisions, checking at each one that the model still offers it.

use super::{Choice, Divergence, Refusal, Strategy};
use crate::runtime::Tid;

/// Follows a schedule decision for decision.
#[derive(Debug)]
pub(crate) struct ReplayStrategy {
    /// The chosen thread of each recorded decision.
    decisions: Vec<Tid>,
    /// Index of the next decision to follow; `next <= decisions.len()`.
    next: usize,
}

impl ReplayStrategy {
    pub(crate) fn new(decisions: Vec<Tid>) -> Self {
        ReplayStrategy { decisions, next: 0 }
    }
}

impl Strategy for ReplayStrategy {
    fn name(&self) -> &'static str {
        "replay"
    }

    fn choose(&mut self, choice: &Choice<'_>) -> Result<Tid, Refusal> {
        let runnable = choice.runnable;
        let expected = self.decisions.get(self.next).copied();
        match expected {
            Some(t) if runnable.contains(&t) => {
                self.next += 1;
                Ok(t)
            }
            _ => Err(Refusal::Divergence(Divergence {
                decision: self.next,
                expected,
                runnable: runnable.to_vec(),
            })),
        }
    }

    fn end_execution(&mut self, _steps: u64) -> Result<(), Refusal> {
        match self.decisions.get(self.next) {
            None => Ok(()),
            Some(&t) => Err(Refusal::Divergence(Divergence {
                decision: self.next,
                expected: Some(t),
                runnable: vec![],
            })),
        }
    }
}
