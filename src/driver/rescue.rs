//! The driver's side of the report the runtime makes right before the process aborts (a
//! destructor panicked while its thread unwound; see `runtime/abort.rs`): the schedule of
//! the execution so far, as JSON, also stored in the test's regression corpus when the run
//! is an `#[interleave]` test's.

use std::fmt::Write as _;
use std::sync::Arc;

use super::{Meta, decision, schedule};
use crate::corpus::Corpus;
use crate::run::{DecisionRecord, Origin, Rescue};

/// Writes the schedules of one driver's executions (see [`Rescue`]).
#[derive(Debug)]
pub(super) struct Saver {
    /// The run, for every schedule (each has its own iteration).
    meta: Meta,
    /// Where an `#[interleave]` test keeps its failing schedules.
    corpus: Option<Corpus>,
}

/// The saver of one driver of a run whose failures record `meta`, storing schedules in
/// `corpus` if there is one. Each driver has its own, so that executions running at once
/// do not share its reference count.
pub(super) fn saver(meta: Meta, corpus: Option<&Corpus>) -> Arc<dyn Rescue> {
    Arc::new(Saver {
        meta,
        corpus: corpus.cloned(),
    })
}

/// What execution `iteration` tells the runtime about itself, with `saver` (from
/// [`saver`]) to write its schedule.
pub(super) fn origin(saver: &Arc<dyn Rescue>, iteration: u64) -> Option<Origin> {
    Some(Origin {
        rescue: Arc::clone(saver),
        iteration,
    })
}

impl Rescue for Saver {
    fn rescue(
        &self,
        iteration: u64,
        decisions: &[DecisionRecord],
        names: &[Option<String>],
    ) -> String {
        let meta = Meta {
            iteration,
            ..self.meta.clone()
        };
        let decisions = decisions.iter().map(|d| decision(d, names)).collect();
        let schedule = schedule(decisions, &meta);
        let mut text = schedule.to_json();
        if let Some(corpus) = &self.corpus {
            let _ = match corpus.store(&schedule) {
                Ok((path, _)) => write!(
                    text,
                    "\nIt is stored in the regression corpus as {}: the next run of the test \
                     replays it first (or: cargo interleave replay {0}).",
                    path.display()
                ),
                Err(e) => write!(
                    text,
                    "\nIt could not be stored in the regression corpus: {e}"
                ),
            };
        }
        text
    }

    fn test(&self) -> Option<&str> {
        self.meta.test.as_deref()
    }
}
