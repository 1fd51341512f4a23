//! The runners of the `substrates` bench: each runs a model for a number of executions (or
//! makes a number of one-execution `check` calls) under one tool and configuration, and
//! returns how many it did.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use interleave_test::{Builder, StrategyKind, Substrate};
use shuttle::scheduler::{PctScheduler, RandomScheduler};

/// The bug depth of PCT, for both tools.
pub(crate) const PCT_DEPTH: u32 = 3;
/// The preemption bound of loom's search and of ours beside it.
pub(crate) const DFS_BOUND: u32 = 2;
/// The seed of every random and PCT run.
const SEED: u64 = 1;

/// The start-up model: no thread, no operation, one schedule.
pub(crate) fn empty() {}

/// A randomized search that interleave-test and shuttle both offer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Search {
    Random,
    Pct,
}

impl Search {
    pub(crate) const ALL: [Search; 2] = [Search::Random, Search::Pct];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Search::Random => "random",
            Search::Pct => "PCT d=3",
        }
    }
}

/// One configuration of interleave-test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ours {
    pub(crate) substrate: Substrate,
    pub(crate) parallelism: usize,
}

impl Ours {
    /// "coroutines ×2", "OS threads ×1", ...
    pub(crate) fn label(self) -> String {
        format!("{} ×{}", self.substrate, self.parallelism)
    }

    fn builder(self, search: Search, iterations: u64) -> Builder {
        let strategy = match search {
            Search::Random => StrategyKind::Random,
            Search::Pct => StrategyKind::Pct { depth: PCT_DEPTH },
        };
        Builder::new()
            .seed(SEED)
            .iterations(iterations)
            .strategy(strategy)
            .substrate(self.substrate)
            .parallelism(self.parallelism)
    }

    /// `executions` executions of `model`.
    pub(crate) fn run(self, search: Search, model: fn(), executions: u64) -> u64 {
        let report = self
            .builder(search, executions)
            .check(model)
            .unwrap_or_else(|failure| panic!("interleave-test: a bench model failed:\n{failure}"));
        assert_eq!(
            report.executions, executions,
            "interleave-test stopped early"
        );
        report.executions
    }

    /// `calls` calls of `check` on the empty model with 1 iteration, each with a fresh
    /// `Builder` as a test would make.
    pub(crate) fn start_up(self, search: Search, calls: u64) -> u64 {
        for _ in 0..calls {
            self.run(search, empty, 1);
        }
        calls
    }
}

/// `calls` calls of `Builder::new()` alone: the part of our start-up that comes before
/// `check`. It reads the environment and asks for the number of cores
/// (`std::thread::available_parallelism`, the default parallelism), which on Linux reads the
/// process's cgroup files.
pub(crate) fn ours_builder_new(calls: u64) -> u64 {
    for _ in 0..calls {
        std::hint::black_box(Builder::new());
    }
    calls
}

fn as_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

fn as_u64(n: usize) -> u64 {
    u64::try_from(n).expect("a count fits in u64")
}

/// `executions` executions of `model` under shuttle's random or PCT scheduler.
pub(crate) fn shuttle_run(search: Search, model: fn(), executions: u64) -> u64 {
    let n = as_usize(executions);
    let config = shuttle::Config::new();
    let done = match search {
        Search::Random => {
            shuttle::Runner::new(RandomScheduler::new_from_seed(SEED, n), config).run(model)
        }
        Search::Pct => {
            let scheduler = PctScheduler::new_from_seed(SEED, PCT_DEPTH as usize, n);
            shuttle::Runner::new(scheduler, config).run(model)
        }
    };
    as_u64(done)
}

/// Lets shuttle install its panic hook, then removes it. shuttle installs the hook once per
/// process, at its first execution, on top of the others, and it prints a "Task failed"
/// report for every panic of the process: also for the panic with which loom (through the
/// `generator` crate) ends each of its model threads, which `generator`'s own hook filters
/// out. Left installed, it would flood stderr during loom's measurements and slow them down.
pub(crate) fn disarm_shuttle_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let done = shuttle_run(Search::Random, empty, 1);
    std::panic::set_hook(previous);
    assert_eq!(done, 1, "shuttle skipped the execution");
}

/// `calls` one-execution shuttle runs of the empty model.
pub(crate) fn shuttle_start_up(search: Search, calls: u64) -> u64 {
    for _ in 0..calls {
        assert_eq!(
            shuttle_run(search, empty, 1),
            1,
            "shuttle skipped the execution"
        );
    }
    calls
}

/// loom's `Builder` with a preemption bound of [`DFS_BOUND`].
fn loom_builder() -> loom::model::Builder {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(DFS_BOUND as usize);
    builder
}

/// Up to `executions` executions of loom's bounded DFS on `model`, fewer if the search
/// ends first. loom does not report its count, so the model is wrapped in a closure that
/// counts.
pub(crate) fn loom_dfs(model: fn(), executions: u64) -> u64 {
    let count = Arc::new(AtomicUsize::new(0));
    let counted = {
        let count = Arc::clone(&count);
        move || {
            count.fetch_add(1, Relaxed);
            model();
        }
    };
    let mut builder = loom_builder();
    // loom looks at `max_permutations` only when its execution number `i` (from 1) is a
    // multiple of `checkpoint_interval`, before running execution `i`, and stops if
    // `i >= max_permutations`: with both at `executions + 1` it runs exactly `executions`.
    let limit = as_usize(executions).saturating_add(1);
    builder.checkpoint_interval = limit;
    builder.max_permutations = Some(limit);
    builder.check(counted);
    as_u64(count.load(Relaxed))
}

/// `calls` calls of loom's bounded `check` on the empty model (one execution each).
pub(crate) fn loom_start_up(calls: u64) -> u64 {
    for _ in 0..calls {
        loom_builder().check(empty);
    }
    calls
}

/// Up to `executions` executions of our DFS bounded to [`DFS_BOUND`] preemptions, on
/// coroutines, fewer if the search ends first: the same search as loom's, for reference.
pub(crate) fn ours_dfs(model: fn(), executions: u64) -> u64 {
    let strategy = StrategyKind::Dfs {
        max_preemptions: Some(DFS_BOUND),
    };
    let builder = Builder::new()
        .iterations(executions)
        .strategy(strategy)
        .substrate(Substrate::Coroutines);
    match builder.check(model) {
        Ok(report) => report.executions,
        Err(failure) => panic!("interleave-test: a bench model failed under DFS:\n{failure}"),
    }
}
