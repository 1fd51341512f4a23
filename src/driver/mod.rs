//! The driver loop: runs executions, several at once where the strategy allows it, keeps the
//! failure of the lowest failing execution, and turns runtime outcomes into [`Failure`]s.
//!
//! Architecture invariant: the result does not depend on how many executions run at once,
//! nor on when the driver threads start. Execution `i` of a random run uses its own seed,
//! derived from the run's seed and `i`, and when several executions fail the one with the
//! lowest index is reported; every execution below it has run by then, because indices are
//! handed out in order (`independent.rs`). The driver threads are in `crew.rs`, PCT's epochs
//! in `epochs.rs`.

mod crew;
mod distinct;
mod epochs;
mod independent;
mod progress;

#[cfg(test)]
pub(crate) use progress::TRACE;
mod rescue;
mod revisit;

pub(crate) use crate::run::outcome::{Meta, schedule_mismatch};
use crate::run::outcome::{decision, failure, schedule};
pub(crate) use independent::{Independent, Widening, run_independent};
pub(crate) use progress::ShowProgress;
pub(crate) use revisit::{Revisit, revisit};

use std::time::{Duration, Instant};

use crate::primitive::Loc;
use crate::report::Failure;
use crate::run::{DecisionRecord, ExecConfig, ExecOutcome, Reuse};
use crate::schedule::{Schedule, Settings};
use crate::settings::StrategyName;
use crate::strategy::Drive;
use crate::strategy::{Expected, ReplayStrategy, Setup, Strategy, execution_seed};
use crate::summary::Report;

/// What an exploration needs besides the model.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub(crate) exec: ExecConfig,
    pub(crate) test: Option<String>,
    pub(crate) seed: u64,
    pub(crate) iterations: u64,
    /// The wall-clock budget.
    pub(crate) max_time: Option<Duration>,
    /// Executions run at once (at least 1).
    pub(crate) parallelism: usize,
    /// Where a long DFS search prints its progress.
    pub(crate) progress: ShowProgress,
    /// The reduction a DFS search uses (`None` for other strategies).
    pub(crate) reduction: Option<crate::settings::Reduction>,
    /// The strategy, as the report names it.
    pub(crate) strategy: crate::settings::StrategyKind,
    /// The regression corpus of the `#[interleave]` test that runs, if one does: where a
    /// schedule is stored when the process must abort before a failure can be returned
    /// (see `runtime/abort.rs`).
    pub(crate) corpus: Option<crate::corpus::Corpus>,
    /// When a random or PCT run brings in its other drivers.
    pub(crate) widening: Widening,
}

impl Plan {
    /// When the budget of a run started at `start` runs out.
    fn deadline(&self, start: Instant) -> Option<Instant> {
        self.max_time.and_then(|d| start.checked_add(d))
    }
}

/// How a run ended, for its report.
struct Ending {
    strategy: crate::settings::StrategyKind,
    seed: Option<u64>,
    bound: Option<u32>,
    exhausted: bool,
    stopped_by: Option<crate::summary::Limit>,
    reduction: Option<crate::settings::Reduction>,
    redundant: u64,
    start: Instant,
    substrate: crate::settings::Substrate,
}

/// The settings of `exec` a schedule records.
pub(crate) fn settings(exec: &ExecConfig) -> Settings {
    Settings {
        max_steps: Some(exec.max_steps),
        thread_panics_fail: Some(exec.thread_panics_fail),
        spurious_wakeups: Some(exec.spurious),
        fair_spins: Some(exec.spins != crate::settings::SpinRule::Off),
        clock: exec.clock,
    }
}

/// Counts of an exploration, and its lowest failure so far. Its memory does not depend on
/// the number of executions.
#[derive(Default)]
struct Tally {
    executions: u64,
    max_steps: u64,
    total_steps: u64,
    preemptions: u64,
    switches: u64,
    spin_holds: u64,
    early_withheld: u64,
    /// Executions that reached `max_steps` and ended there as passes.
    cut: u64,
    /// Places of explicit yields taken as a loop's (`Report::loop_yields`).
    loop_yields: u64,
    /// The distinct schedules of a run of independent executions (random, PCT), which may
    /// repeat one; `None` under DFS, whose executions are distinct by construction (each
    /// follows a path of the tree of decisions that no earlier one followed).
    distinct: Option<distinct::Distinct>,
    failure: Option<Failure>,
}

impl Tally {
    /// A tally of a run of independent executions, which counts distinct schedules.
    fn counting_distinct() -> Self {
        Tally {
            distinct: Some(distinct::Distinct::default()),
            ..Tally::default()
        }
    }

    fn add(&mut self, out: &ExecOutcome) {
        self.executions += 1;
        self.max_steps = self.max_steps.max(out.steps);
        self.total_steps += out.steps;
        self.preemptions += out.preemptions;
        self.switches += out.switches;
        self.spin_holds += out.spin_holds;
        self.early_withheld += out.early_withheld;
        self.cut += u64::from(out.cut);
        if let Some(distinct) = &mut self.distinct {
            distinct.insert(schedule_hash(&out.decisions));
        }
    }

    /// Adds the counts of `other` (a driver's own), keeping this tally's failure.
    fn merge(&mut self, other: Tally) {
        self.executions += other.executions;
        self.max_steps = self.max_steps.max(other.max_steps);
        self.total_steps += other.total_steps;
        self.preemptions += other.preemptions;
        self.switches += other.switches;
        self.spin_holds += other.spin_holds;
        self.early_withheld += other.early_withheld;
        self.cut += other.cut;
        if let (Some(mine), Some(theirs)) = (&mut self.distinct, other.distinct) {
            mine.merge(theirs);
        }
    }

    fn report(self, end: Ending) -> Report {
        let (distinct_schedules, distinct_schedules_exact) = match &self.distinct {
            Some(distinct) => distinct.count(),
            None => (self.executions, true),
        };
        Report {
            substrate: end.substrate,
            executions: self.executions,
            distinct_schedules,
            distinct_schedules_exact,
            exhausted: end.exhausted,
            stopped_by: end.stopped_by,
            bound: end.bound,
            reduction: end.reduction,
            redundant: end.redundant,
            strategy: Some(end.strategy),
            seed: end.seed,
            max_steps: self.max_steps,
            total_steps: self.total_steps,
            preemptions: self.preemptions,
            context_switches: self.switches,
            spin_holds: self.spin_holds,
            early_withheld: self.early_withheld,
            cut_at_max_steps: self.cut,
            loop_yields: self.loop_yields,
            elapsed: end.start.elapsed(),
        }
    }
}

/// A hash of `decisions`: the chosen threads and the options picked (FNV-1a, cheaper than
/// std's hasher on the per-execution path); two schedules with the same hash count as one.
fn schedule_hash(decisions: &[DecisionRecord]) -> u64 {
    let fnv = |h: u64, x: u64| (h ^ x).wrapping_mul(0x0000_0100_0000_01b3);
    decisions.iter().fold(0xcbf2_9ce4_8422_2325, |h, d| {
        let picked = d.pick.map_or(0, |(_, value)| value as u64 + 1);
        fnv(fnv(h, d.chosen as u64), picked)
    })
}

/// Runs `model` under the strategy `plan` names, made by the maker of its row
/// (`strategy/listing.rs`) and driven as the row says: independent executions (each
/// strategy made from the execution's seed, and from what the epochs before it learned if
/// the row has epochs), or one search.
pub(crate) fn run<F: Fn() + Sync>(plan: &Plan, model: &F, loc: Loc) -> Result<Report, Failure> {
    let name = plan.strategy.name();
    let make = name.maker().expect("a strategy a user chooses has a maker");
    let setup = |seed, learned| Setup {
        kind: plan.strategy,
        reduction: plan.reduction.unwrap_or_default(),
        seed,
        learned,
    };
    match name.drive() {
        Drive::Independent { epochs } => {
            let make = |i, learned| make(&setup(execution_seed(plan.seed, i), learned));
            let how = Independent {
                name,
                epochs,
                make: &make,
            };
            run_independent(plan, &how, model, loc)
        }
        Drive::Search => {
            let make = || make(&setup(plan.seed, None));
            run_sequential(plan, &make, plan.strategy.max_preemptions(), model, loc)
        }
        Drive::Follow => unreachable!("no StrategyKind follows a schedule ({name:?})"),
    }
}

/// Runs executions one after another under one strategy that learns from each (DFS; it has
/// no seed), made by `make`, until one fails, `plan.iterations` have run, or the strategy
/// has explored everything.
///
/// Executions start untracked (see `ExecConfig::untracked_start`). The first one that needs
/// the memory model (it runs on to its end, and is discarded whatever it did) ends the
/// search so far: a new strategy searches again from the start,
/// every execution tracked, and only that search is counted. An execution cannot simply run
/// again tracked, as under random search, because the strategy has already learned from
/// the ones before it; a failure found before any execution needed tracking is the one the
/// tracked search would have found first (the same decisions reach the same points).
pub(crate) fn run_sequential<F: Fn() + Sync>(
    plan: &Plan,
    make: &(dyn Fn() -> Box<dyn Strategy> + Sync),
    bound: Option<u32>,
    model: &F,
    loc: Loc,
) -> Result<Report, Failure> {
    let mut result = None;
    crew::one_driver(plan.exec.substrate, |core| {
        let exec = ExecConfig { core, ..plan.exec };
        result = Some(sequential(plan, exec, make, bound, model, loc));
    });
    result.expect("the driver ran")
}

fn sequential<F: Fn() + Sync>(
    plan: &Plan,
    mut exec: ExecConfig,
    make: &(dyn Fn() -> Box<dyn Strategy> + Sync),
    bound: Option<u32>,
    model: &F,
    loc: Loc,
) -> Result<Report, Failure> {
    let start = Instant::now();
    let deadline = plan.deadline(start);
    let mut tally = Tally::default();
    let mut strategy = make();
    let name = plan.strategy.name();
    let mut reuse = Reuse::default();
    let mut progress = progress::Progress::new(plan.progress, plan.test.as_deref());
    let saver = rescue::saver(meta(plan, name, None, 0, &exec), plan.corpus.as_ref());
    let mut out_of_time = false;
    let mut i = 0;
    while i < plan.iterations {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            out_of_time = true;
            break;
        }
        if !strategy.begin_execution() {
            break;
        }
        let origin = rescue::origin(&saver, i);
        let mut out = crate::run::run_execution(strategy, origin, exec, model, loc, &mut reuse);
        if out.start_over || out.relearned {
            reuse.recycle(out.decisions);
            if out.start_over {
                track_from_now(&mut exec);
            }
            (strategy, tally, i) = (make(), Tally::default(), 0);
            progress = progress::Progress::new(plan.progress, plan.test.as_deref());
            continue;
        }
        tally.add(&out);
        if let Some(draft) = out.failure.take() {
            let meta = meta(plan, name, None, i, &exec);
            return Err(failure(draft, &out, meta));
        }
        reuse.recycle(out.decisions);
        strategy = out.strategy;
        let (depth, estimate) = strategy
            .exhaustive()
            .map_or((0, None), |search| (search.depth(), search.estimate()));
        progress.tick(tally.executions, depth, estimate);
        i += 1;
    }
    progress.finish();
    tally.loop_yields = reuse.loop_yields();
    let ended = (start, out_of_time, exec.substrate);
    Ok(search_report(plan, tally, &mut *strategy, bound, ended))
}

/// The report of a search that found no failure, whose strategy is now `strategy`; `ended`:
/// when it started, whether its time budget ran out, and what ran the model threads.
fn search_report(
    plan: &Plan,
    tally: Tally,
    strategy: &mut dyn Strategy,
    bound: Option<u32>,
    (start, out_of_time, substrate): (Instant, bool, crate::settings::Substrate),
) -> Report {
    // At the cap, the space may have been explored by the very last execution; a strategy
    // that already said it was exhausted says so again.
    let exhausted = !strategy.begin_execution();
    let stopped_by = match (exhausted, out_of_time) {
        (true, _) => None,
        (false, true) => plan.max_time.map(crate::summary::Limit::MaxTime),
        (false, false) => Some(crate::summary::Limit::Iterations(plan.iterations)),
    };
    tally.report(Ending {
        strategy: plan.strategy,
        seed: None,
        bound,
        exhausted,
        stopped_by,
        reduction: plan.reduction,
        redundant: strategy.exhaustive().map_or(0, |search| search.redundant()),
        start,
        substrate,
    })
}

/// After an untracked execution asked to start over: every later execution is tracked.
fn track_from_now(exec: &mut ExecConfig) {
    assert!(
        exec.untracked_start,
        "interleave-test: a tracked execution asked to start over; please report this bug"
    );
    exec.untracked_start = false;
}

/// What a failure of execution `iteration` of a run of `plan` records about the run.
fn meta(
    plan: &Plan,
    strategy: StrategyName,
    seed: Option<u64>,
    iteration: u64,
    exec: &ExecConfig,
) -> Meta {
    Meta {
        test: plan.test.clone(),
        strategy: strategy.name().to_owned(),
        seed,
        iteration,
        substrate: exec.substrate,
        settings: settings(exec),
    }
}

/// Runs one execution that follows `schedule`; `corpus`: the regression corpus of the test
/// that replays, if one does (see [`Plan::corpus`]).
pub(crate) fn replay<F: Fn() + Sync>(
    (exec, corpus): (ExecConfig, Option<&crate::corpus::Corpus>),
    model: &F,
    schedule: &Schedule,
    meta: Meta,
    loc: Loc,
) -> Result<(), Failure> {
    let strategy = Box::new(ReplayStrategy::new(Expected::of(schedule)));
    let mut reuse = Reuse::default();
    let origin = rescue::origin(&rescue::saver(meta.clone(), corpus), meta.iteration);
    let mut out = crate::run::run_execution(strategy, origin, exec, model, loc, &mut reuse);
    match out.failure.take() {
        None => Ok(()),
        Some(draft) => Err(failure(draft, &out, meta)),
    }
}
