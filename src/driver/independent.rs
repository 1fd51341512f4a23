//! Runs of independent executions (random, PCT): each has its own strategy, made from its
//! index, so any driver can run any of them.
//!
//! Indices are handed out in order, in chunks, to the drivers; a driver runs its chunk in
//! order, so when a failure is known every execution below it has run or is running, and
//! the lowest failing one is reported. A run starts on one driver and brings in the others
//! (up to the parallelism) only once its first driver has run for a millisecond and
//! estimates that the executions left would take two or more ([`Widening`]): a hunt of
//! tens of executions ends before another driver could have paid for its start (see
//! `crew.rs`). Which driver
//! runs an execution never changes what it does, so neither the failure nor the report's
//! counts depend on the parallelism or on when drivers join.
//!
//! A model that makes no decision has one schedule: if its first two executions pass
//! without one, the run ends there, as exhausted ([`ONE_SCHEDULE_AFTER`]).

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::crew::{self, Widen};
use super::epochs::Epochs;
use super::{Ending, Plan, Tally, failure, meta, rescue};
use crate::primitive::Loc;
use crate::report::Failure;
use crate::run::{Core, ExecConfig, ExecOutcome, Reuse};
use crate::settings::StrategyName;
use crate::strategy::Strategy;
use crate::summary::Report;

/// How a run of independent executions gets the strategy of each.
pub(crate) struct Independent<'a> {
    /// The strategy's name, for the report.
    pub(crate) name: StrategyName,
    /// Whether strategies learn the length of executions from earlier ones (PCT's `k`): then
    /// executions run in epochs of doubling size (1, 2, 4, ...), each learning from all the
    /// epochs before it, so the result still does not depend on the parallelism.
    pub(crate) epochs: bool,
    /// The strategy of execution `i`, given the most steps of the earlier epochs' executions.
    pub(crate) make: &'a (dyn Fn(u64, Option<u64>) -> Box<dyn Strategy> + Sync),
}

/// The most executions a driver takes at once: fewer trips to the shared counter. Towards
/// the end of a run (or of an epoch) chunks shrink, down to one execution, so that drivers
/// end together.
const CHUNK: u64 = 8;

/// The most executions the first driver runs without looking at the clock, while it runs
/// alone: a bound on how late it notices that executions became slower.
const LOOK_AGAIN: u64 = 32;

/// How many first executions must pass without a decision for a run to end as exhausted.
/// One would do for the schedule: with no decision, every execution follows the same one.
/// The second shows what the first leaves behind outside the model (a `static` primitive
/// the next execution finds used, a misuse; a counter in a `static` that keeps counting),
/// which a test run twice would meet too. A long program on one thread (Tokio's
/// `try_reserve_many_full`: some 378,000 channel operations) then runs twice, not a
/// thousand times. The first driver runs both: it brings in no other driver before.
const ONE_SCHEDULE_AFTER: u64 = 2;

/// When the first driver of a run brings in the others.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Widening {
    /// How long it runs alone at least.
    alone: Duration,
    /// The estimated time left for which it brings them in.
    ahead: Duration,
}

impl Widening {
    /// After a millisecond alone, if the executions left look like two or more. Another
    /// driver costs its start (tens of microseconds) and, at the end of the run, the wait
    /// for its last execution and its exit; on a loaded machine its thread may first get a
    /// core after milliseconds (up to 4 ms measured on a busy 2-core VM), and the run ends
    /// no sooner. A run that has lasted a millisecond loses a few percent at most (idle) by
    /// bringing in more drivers just before it ends, and a second driver saves about half
    /// of the time left, at least as much as the first ran alone.
    pub(crate) const DEFAULT: Widening = Widening {
        alone: Duration::from_millis(1),
        ahead: Duration::from_millis(2),
    };

    /// After the first execution (tests: every driver runs from the start).
    #[cfg(test)]
    pub(crate) const AT_ONCE: Widening = Widening {
        alone: Duration::ZERO,
        ahead: Duration::ZERO,
    };
}

/// Runs `plan.iterations` executions of `model`, each with its own strategy from `how`, on
/// up to `plan.parallelism` drivers at a time.
pub(crate) fn run_independent<F: Fn() + Sync>(
    plan: &Plan,
    how: &Independent<'_>,
    model: &F,
    loc: Loc,
) -> Result<Report, Failure> {
    let start = Instant::now();
    let run = Run {
        plan,
        how,
        model,
        loc,
        start,
        deadline: plan.deadline(start),
        next: AtomicU64::new(0),
        drivers: AtomicUsize::new(1),
        lowest_failure: AtomicU64::new(u64::MAX),
        halted: AtomicBool::new(false),
        epochs: Epochs::new(how.epochs),
        tally: Mutex::new(Tally::counting_distinct()),
        decisionless: AtomicU64::new(0),
    };
    let first = |core, widen: &Widen<'_>| run.drive(core, (plan.parallelism > 1).then_some(widen));
    crew::staged(plan.exec.substrate, first, &|core| run.drive(core, None));
    let one_schedule = run.decisionless.into_inner() >= ONE_SCHEDULE_AFTER;
    let mut tally = run.tally.into_inner();
    let stopped_by = (tally.executions < plan.iterations && !one_schedule)
        .then(|| plan.max_time.map(crate::summary::Limit::MaxTime))
        .flatten();
    match tally.failure.take() {
        Some(failure) => Err(failure),
        None => Ok(tally.report(Ending {
            strategy: plan.strategy,
            seed: Some(plan.seed),
            bound: None,
            exhausted: one_schedule,
            stopped_by,
            reduction: None,
            redundant: 0,
            start,
            substrate: plan.exec.substrate,
        })),
    }
}

/// What the drivers of a run share.
struct Run<'r, F> {
    plan: &'r Plan,
    how: &'r Independent<'r>,
    model: &'r F,
    loc: Loc,
    start: Instant,
    /// When the run's time budget runs out.
    deadline: Option<Instant>,
    /// The next execution to hand out.
    next: AtomicU64,
    /// Drivers running, for the size of chunks.
    drivers: AtomicUsize,
    /// The lowest failing execution so far (`u64::MAX`: none).
    lowest_failure: AtomicU64,
    /// The run stops: the time budget ran out, or a strategy declined to run.
    halted: AtomicBool,
    epochs: Epochs,
    /// The counts of drivers that are done, and the lowest failure.
    tally: Mutex<Tally>,
    /// How many of the first executions, in a row, passed without a decision.
    decisionless: AtomicU64,
}

/// One driver's own state.
struct Driver<'r, 'w> {
    exec: ExecConfig,
    reuse: Reuse<'r>,
    saver: Arc<dyn crate::run::Rescue>,
    /// Counted here and added to the run's tally once at the end.
    counts: Tally,
    /// How the first driver brings in the others, until it has.
    widen: Option<&'w Widen<'w>>,
    /// After how many of its executions the first driver next looks at the clock.
    look_at: u64,
}

impl<'r, F: Fn() + Sync> Run<'r, F> {
    /// Runs chunks of executions on the calling driver (pinned to `core`, if any) until
    /// none is left or the run stops; `widen` is given to the first driver only.
    fn drive<'w>(&self, core: Option<Core>, widen: Option<&'w Widen<'w>>) {
        let exec = ExecConfig {
            core,
            ..self.plan.exec
        };
        let meta_0 = super::meta(self.plan, self.how.name, Some(self.plan.seed), 0, &exec);
        let mut driver = Driver {
            exec,
            reuse: Reuse::default(),
            saver: rescue::saver(meta_0, self.plan.corpus.as_ref()),
            counts: Tally::counting_distinct(),
            widen,
            look_at: 1,
        };
        // A driver that unwinds (a fault of the crate) leaves executions it took unrun:
        // the others must not wait for them to end an epoch.
        let unwinding = HaltUnlessDone(&|| self.halt());
        while let Some(chunk) = self.claim() {
            let stop = || self.stopped(chunk.start);
            let Some(learned) = self.epochs.learned(chunk.start, stop) else {
                break;
            };
            let Some(steps) = self.run_chunk(&mut driver, chunk.clone(), learned) else {
                break;
            };
            self.epochs.ended(chunk, steps, self.plan.iterations);
        }
        std::mem::forget(unwinding);
        self.tally.lock().merge(driver.counts);
    }

    /// The next chunk of executions, within one epoch; `None` when every one is handed out.
    fn claim(&self) -> Option<Range<u64>> {
        let mut first = self.next.load(Ordering::Relaxed);
        loop {
            let end = self.epochs.limit(first).min(self.plan.iterations);
            if first >= end {
                return None;
            }
            let drivers = self.drivers.load(Ordering::Relaxed) as u64;
            let size = ((end - first) / (2 * drivers)).clamp(1, CHUNK);
            let next = first + size;
            match self
                .next
                .compare_exchange_weak(first, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return Some(first..next),
                Err(now) => first = now,
            }
        }
    }

    /// Runs executions `chunk` in order, learning `learned`; the most steps among them, or
    /// `None` if the run stopped before their end.
    fn run_chunk(
        &self,
        d: &mut Driver<'r, '_>,
        chunk: Range<u64>,
        learned: Option<u64>,
    ) -> Option<u64> {
        let mut steps = 0;
        for i in chunk {
            if self.stopped(i) {
                return None;
            }
            let Some(mut out) = self.run_one(d, i, learned) else {
                self.halt();
                return None;
            };
            d.counts.add(&out);
            steps = steps.max(out.thread_choices());
            if self.one_schedule(i, &out) {
                self.halt();
                return None;
            }
            match out.failure.take() {
                None => d.reuse.recycle(out.decisions),
                Some(draft) => {
                    let meta = meta(self.plan, self.how.name, Some(self.plan.seed), i, &d.exec);
                    self.keep_lowest(failure(draft, &out, meta));
                }
            }
            self.maybe_widen(d);
        }
        Some(steps)
    }

    /// Runs execution `i` with its strategy; `None` if the strategy declines. An untracked
    /// execution that needed the memory model is discarded (whatever it did after it met the
    /// operation that needed it) and runs again, tracked, with a new strategy for the same
    /// index (so the same decisions), and so does every later one of this driver (see
    /// `ExecConfig::untracked_start`).
    fn run_one(&self, d: &mut Driver<'r, '_>, i: u64, learned: Option<u64>) -> Option<ExecOutcome> {
        loop {
            let mut strategy = (self.how.make)(i, learned);
            if !strategy.begin_execution() {
                return None;
            }
            let origin = rescue::origin(&d.saver, i);
            let out = crate::run::run_execution(
                strategy,
                origin,
                d.exec,
                self.model,
                self.loc,
                &mut d.reuse,
            );
            if !out.start_over {
                return Some(out);
            }
            d.reuse.recycle(out.decisions);
            super::track_from_now(&mut d.exec);
        }
    }

    /// Counts execution `i`, just run, towards [`ONE_SCHEDULE_AFTER`]; whether the run ends
    /// with it, its model's one schedule run often enough.
    fn one_schedule(&self, i: u64, out: &ExecOutcome) -> bool {
        let counted = self.decisionless.load(Ordering::Relaxed);
        if i != counted || i >= ONE_SCHEDULE_AFTER {
            return false;
        }
        if out.failure.is_some() || !out.decisions.is_empty() {
            return false;
        }
        self.decisionless.store(counted + 1, Ordering::Relaxed);
        counted + 1 == ONE_SCHEDULE_AFTER && self.plan.iterations > ONE_SCHEDULE_AFTER
    }

    /// Whether execution `i` is not to run: a lower one failed, or the run stops.
    fn stopped(&self, i: u64) -> bool {
        if i > self.lowest_failure.load(Ordering::Relaxed) || self.halted.load(Ordering::Relaxed) {
            return true;
        }
        let out_of_time = self.deadline.is_some_and(|d| Instant::now() >= d);
        if out_of_time {
            self.halt();
        }
        out_of_time
    }

    /// Stops the run: no driver starts another execution.
    fn halt(&self) {
        self.halted.store(true, Ordering::Relaxed);
        self.epochs.wake();
    }

    /// Keeps `found` if it is the lowest failing execution so far.
    fn keep_lowest(&self, found: Failure) {
        let mut tally = self.tally.lock();
        let i = found.iteration();
        if tally.failure.as_ref().is_none_or(|f| f.iteration() > i) {
            tally.failure = Some(found);
            self.lowest_failure.fetch_min(i, Ordering::Relaxed);
        }
        drop(tally);
        self.epochs.wake();
    }

    /// On the first driver, until it has: brings in the other drivers if the executions
    /// left are estimated to take long enough (at the rate so far, and within the time
    /// budget; see [`Widening`]). Never once a failure is known: the run is about to end.
    fn maybe_widen(&self, d: &mut Driver<'_, '_>) {
        let Some(widen) = d.widen else { return };
        let done = d.counts.executions;
        if done < d.look_at {
            return;
        }
        // The first executions decided nothing: this driver runs the next one too, which
        // may end the run (`ONE_SCHEDULE_AFTER`).
        if done < ONE_SCHEDULE_AFTER && self.decisionless.load(Ordering::Relaxed) == done {
            return;
        }
        if self.lowest_failure.load(Ordering::Relaxed) != u64::MAX {
            d.widen = None;
            return;
        }
        let elapsed = self.start.elapsed();
        let per_execution = elapsed.as_secs_f64() / done.max(1) as f64;
        let Widening { alone, ahead } = self.plan.widening;
        if elapsed < alone {
            // Looks again after half the executions that would take it to `alone` at this
            // rate (at most LOOK_AGAIN): the clock is read a few times, not after each.
            let to_go = (alone - elapsed).as_secs_f64() / per_execution;
            d.look_at = done + ((to_go / 2.0) as u64).clamp(1, LOOK_AGAIN);
            return;
        }
        d.look_at = done + 1;
        let left = self
            .plan
            .iterations
            .saturating_sub(self.next.load(Ordering::Relaxed));
        let mut time_left = per_execution * left as f64;
        if let Some(deadline) = self.deadline {
            let budget = deadline.saturating_duration_since(Instant::now());
            time_left = time_left.min(budget.as_secs_f64());
        }
        if left == 0 {
            d.widen = None;
        } else if time_left >= ahead.as_secs_f64() {
            let more = (self.plan.parallelism - 1).min(usize::try_from(left).unwrap_or(usize::MAX));
            self.drivers.store(1 + more, Ordering::Relaxed);
            widen(more);
            d.widen = None;
        }
    }
}

/// Calls its function when dropped: forgotten by a driver that is done, dropped by one that
/// unwinds.
struct HaltUnlessDone<'a>(&'a dyn Fn());

impl Drop for HaltUnlessDone<'_> {
    fn drop(&mut self) {
        (self.0)();
    }
}

#[cfg(test)]
mod tests;
