//! Replays a recorded list of decisions, checking at each one that the model still offers it
//! and meets the same situation: as many runnable threads, and the chosen one about to do the
//! same kind of operation.

use super::{Choice, Divergence, Nondeterminism, Pick, Refusal, Strategy, describe};
use crate::op::{PickKind, Tid};
use crate::schedule::Schedule;

/// One recorded decision, as replay checks it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    /// The chosen thread.
    pub(crate) thread: Tid,
    /// How many threads could run.
    pub(crate) options: usize,
    /// The operation the chosen thread performed next, as the schedule names it ("mutex
    /// lock"): an operation matches it by name (`OpKind::is_recorded_as`), so a name no
    /// primitive declares matches none.
    pub(crate) op: String,
    /// For a decision other than a thread's: its kind and the option taken (`thread` is
    /// then the thread that decided, and `options` counts options).
    pub(crate) pick: Option<(PickKind, usize)>,
}

impl Expected {
    /// What replay checks at every decision of `schedule`.
    pub fn of(schedule: &Schedule) -> Vec<Expected> {
        schedule
            .decisions
            .iter()
            .map(|d| Expected {
                thread: d.thread,
                options: d.options,
                op: d.op.clone(),
                pick: d.pick,
            })
            .collect()
    }

    /// The decision, described for a person.
    fn describe(&self) -> String {
        match self.pick {
            Some((kind, value)) => format!(
                "#{} decided \"{}\" = {value} of {} options",
                self.thread,
                kind.name(),
                self.options
            ),
            None => format!(
                "{} threads could run; #{} did `{}` next",
                self.options,
                self.thread,
                crate::schedule::shorten(&self.op)
            ),
        }
    }
}

/// Follows a schedule decision for decision.
#[derive(Debug)]
pub struct ReplayStrategy {
    decisions: Vec<Expected>,
    /// Index of the next decision to follow; `next <= decisions.len()`.
    next: usize,
}

impl ReplayStrategy {
    /// Follows `decisions`, in order.
    pub fn new(decisions: Vec<Expected>) -> Self {
        ReplayStrategy { decisions, next: 0 }
    }
}

impl Strategy for ReplayStrategy {
    fn choose(&mut self, choice: &Choice<'_>) -> Result<Tid, Refusal> {
        let runnable = choice.runnable;
        let expected = self.decisions.get(self.next);
        let Some(index) = expected.and_then(|e| runnable.iter().position(|&t| t == e.thread))
        else {
            return Err(Refusal::Divergence(Box::new(Divergence {
                decision: self.next,
                expected: expected.map(|e| e.thread),
                runnable: runnable.to_vec(),
            })));
        };
        let e = expected.expect("found above");
        let same_op = choice.ops[index].kind.is_recorded_as(&e.op);
        if e.pick.is_some() || e.options != runnable.len() || !same_op {
            return Err(Refusal::Mismatch(Box::new(Nondeterminism {
                decision: self.next,
                before: e.describe(),
                now: describe(runnable, choice.ops),
            })));
        }
        self.next += 1;
        Ok(e.thread)
    }

    fn pick(&mut self, pick: &Pick) -> Result<usize, Refusal> {
        let Some(e) = self.decisions.get(self.next) else {
            return Err(Refusal::Divergence(Box::new(Divergence {
                decision: self.next,
                expected: None,
                runnable: vec![pick.tid],
            })));
        };
        match e.pick {
            Some((kind, value))
                if kind == pick.kind
                    && e.options == pick.options
                    && e.thread == pick.tid
                    && value < pick.options =>
            {
                self.next += 1;
                Ok(value)
            }
            _ => Err(Refusal::Mismatch(Box::new(Nondeterminism {
                decision: self.next,
                before: e.describe(),
                now: format!(
                    "#{} decides \"{}\" among {} options",
                    pick.tid,
                    pick.kind.name(),
                    pick.options
                ),
            }))),
        }
    }

    fn end_execution(&mut self) -> Result<(), Refusal> {
        match self.decisions.get(self.next) {
            None => Ok(()),
            Some(e) => Err(Refusal::Divergence(Box::new(Divergence {
                decision: self.next,
                expected: Some(e.thread),
                runnable: vec![],
            }))),
        }
    }
}
