//! The randomized strategies both tools have, run the same way in each: ours through a
//! [`Builder`]'s strategy, shuttle's through its `Runner` with the matching scheduler.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use interleave_test::StrategyKind;
use shuttle::scheduler::{PctScheduler, RandomScheduler};

use super::quietly;

/// A randomized strategy of both tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Random,
    Pct,
}

/// The depth of PCT in every comparison (the bug depth both tools are asked to find).
pub(crate) const PCT_DEPTH: u32 = 3;

impl Kind {
    /// Our strategy of this kind.
    pub(crate) fn ours(self) -> StrategyKind {
        match self {
            Kind::Random => StrategyKind::Random,
            Kind::Pct => StrategyKind::Pct { depth: PCT_DEPTH },
        }
    }
}

/// shuttle's runner with `kind`'s scheduler from `seed`, for at most `executions`: the
/// number it ran, or its panic when an execution failed. The failing schedule is not
/// printed: the benches count executions only.
pub(crate) fn shuttle_runs(
    kind: Kind,
    seed: u64,
    model: impl Fn() + Send + Sync + 'static,
    executions: u64,
) -> std::thread::Result<usize> {
    let n = usize::try_from(executions).unwrap_or(usize::MAX);
    let mut config = shuttle::Config::new();
    config.failure_persistence = shuttle::FailurePersistence::None;
    quietly(move || match kind {
        Kind::Random => {
            shuttle::Runner::new(RandomScheduler::new_from_seed(seed, n), config).run(model)
        }
        Kind::Pct => {
            let scheduler = PctScheduler::new_from_seed(seed, PCT_DEPTH as usize, n);
            shuttle::Runner::new(scheduler, config).run(model)
        }
    })
}

/// `model` wrapped to count its executions (shuttle does not report how many it ran before
/// a failure): the counter and the wrapped model.
pub(crate) fn counted(model: fn()) -> (Arc<AtomicUsize>, impl Fn() + Send + Sync + 'static) {
    let count = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&count);
    let wrapped = move || {
        counter.fetch_add(1, Relaxed);
        model();
    };
    (count, wrapped)
}
