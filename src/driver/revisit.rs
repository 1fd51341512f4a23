//! Looking again at a stored failure after the code changed: executions that follow the
//! schedule's decisions, then decide at random (`PrefixStrategy`), until one fails or a
//! stated number have run. The first follows the schedule as far as it fits; each later one
//! follows a part of that, its length drawn at random, so the executions explore around the
//! recorded one, not only on from its end (a fix may pass the recorded schedule and still
//! fail next to it).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::{Meta, failure, rescue};
use crate::primitive::Loc;
use crate::report::Failure;
use crate::run::{ExecConfig, Reuse};
use crate::schedule::Schedule;
use crate::strategy::{Expected, Followed, PrefixStrategy, execution_seed};

/// What the executions found.
#[derive(Debug)]
pub(crate) struct Revisit {
    /// Decisions of the schedule the first execution followed before one did not fit.
    pub(crate) fitted: usize,
    /// The first execution's thread names, by id.
    pub(crate) names: Vec<Option<String>>,
    /// Executions run.
    pub(crate) executions: u64,
    /// The first failure, if one failed: the run stops there.
    pub(crate) failure: Option<Failure>,
}

/// Runs up to `completions` executions of `model` that follow `schedule`, then decide from
/// random streams seeded from `seed`; `exec` as replay sets it up for the schedule.
pub(crate) fn revisit<F: Fn() + Sync>(
    (exec, corpus): (ExecConfig, Option<&crate::corpus::Corpus>),
    model: &F,
    (schedule, seed): (&Schedule, u64),
    meta: &Meta,
    completions: u64,
    loc: Loc,
) -> Revisit {
    let decisions: Arc<[Expected]> = Expected::of(schedule).into();
    let mut reuse = Reuse::default();
    let mut seen = Revisit {
        fitted: 0,
        names: Vec::new(),
        executions: 0,
        failure: None,
    };
    for i in 0..completions.max(1) {
        let followed = Arc::new(Followed::default());
        let seed = execution_seed(seed, i);
        // The first follows what fits; the others a part of that, from none to all of it.
        let limit = match i {
            0 => usize::MAX,
            _ => usize::try_from(seed % (seen.fitted as u64 + 1)).unwrap_or(usize::MAX),
        };
        let strategy = PrefixStrategy::new(decisions.clone(), limit, seed, followed.clone());
        let meta = Meta {
            iteration: i,
            ..meta.clone()
        };
        let origin = rescue::origin(&rescue::saver(meta.clone(), corpus), i);
        let exec = ExecConfig {
            keep_names: i == 0,
            ..exec
        };
        let mut out =
            crate::run::run_execution(Box::new(strategy), origin, exec, model, loc, &mut reuse);
        seen.executions += 1;
        if i == 0 {
            seen.fitted = followed.fitted.load(Ordering::Relaxed);
            seen.names.clone_from(&out.names);
        }
        if let Some(draft) = out.failure.take() {
            seen.failure = Some(failure(draft, &out, meta));
            break;
        }
    }
    seen
}
