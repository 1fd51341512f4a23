//! [`Report`]: what an exploration in which every execution passed says about itself.

use std::fmt;
use std::time::Duration;

use crate::settings::{Reduction, StrategyKind, StrategyName};

/// A limit that ended an exploration before its strategy was done.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// The cap on executions ([`Builder::iterations`](crate::Builder::iterations)) set for a
    /// DFS search.
    Iterations(u64),
    /// The wall-clock budget ([`Builder::max_time`](crate::Builder::max_time)).
    MaxTime(Duration),
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Limit::Iterations(n) => write!(f, "the iteration cap ({n} executions)"),
            Limit::MaxTime(d) => write!(f, "max_time ({d:.2?})"),
        }
    }
}

/// Summary of an exploration in which every execution passed.
///
/// Its `Display` is one line for a CI log. For an exhausted DFS search it reads as the
/// proof it is ("all N classes of schedules of the modelled operations explored (...), no
/// failure"); a search that a limit stopped says so first, in capitals.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Report {
    /// Executions run.
    pub executions: u64,
    /// Distinct schedules among them (different decision sequences). Under DFS every
    /// execution follows a schedule of its own, so this is `executions` (and `Display`
    /// leaves it out). Random and PCT
    /// runs count them exactly up to 4096 distinct schedules, and past that estimate them
    /// in fixed memory (a HyperLogLog sketch, standard error about 0.8%); see
    /// [`distinct_schedules_exact`](Self::distinct_schedules_exact).
    pub distinct_schedules: u64,
    /// Whether [`distinct_schedules`](Self::distinct_schedules) is exact; `false` when it is
    /// an estimate (a random or PCT run with more than 4096 distinct schedules), which
    /// `Display` writes as "≈N distinct schedules".
    pub distinct_schedules_exact: bool,
    /// Whether the strategy explored its whole space: every class of schedules (DFS without
    /// a bound) or every one reachable within the preemption bound. For random and PCT,
    /// whether the model made no decision in its first two executions: it has one
    /// schedule, and the run ended there.
    pub exhausted: bool,
    /// The limit that stopped the exploration before its strategy was done, if any (random
    /// and PCT runs end at their iteration count; that is not a limit).
    pub stopped_by: Option<Limit>,
    /// The preemption bound of a DFS search, if any.
    pub bound: Option<u32>,
    /// The partial-order reduction of a DFS search (`None` for random and PCT).
    pub reduction: Option<Reduction>,
    /// Executions of a reduced DFS search that repeated a class of schedules already
    /// explored (the reduction could not tell in advance); `executions - redundant` classes
    /// were explored.
    pub redundant: u64,
    /// The strategy used; `None` for a test that replayed one schedule instead of
    /// exploring.
    pub strategy: Option<StrategyKind>,
    /// Its seed, if it uses one.
    pub seed: Option<u64>,
    /// The most switch points any execution passed.
    pub max_steps: u64,
    /// Switch points over all executions.
    pub total_steps: u64,
    /// Preemptions over all executions: switches away from a thread that could continue.
    pub preemptions: u64,
    /// Changes of the running thread over all executions.
    pub context_switches: u64,
    /// Scheduling points, over all executions, at which DFS held back a thread that came
    /// back to a switch point with nothing changed since it was last there (a spin loop),
    /// until the other threads had run (see [`Builder::fair_spins`](crate::Builder::fair_spins)).
    /// When it is not 0, an exhausted search covered every schedule *under fair scheduling
    /// of spin loops*, and says so.
    pub spin_holds: u64,
    /// Waits, over all executions, that could have ended early (timed out while other
    /// threads could still act, woken spuriously, a weak compare-and-exchange or a poll
    /// failing spuriously) but did not, because DFS lets each thread end at most one wait
    /// early per execution (a wait in a loop could otherwise end early for ever). When it is
    /// not 0, an exhausted search covered every schedule *with at most one early ending per
    /// thread*, and says so: a bug that needs a thread to time out twice is beyond it.
    pub early_withheld: u64,
    /// Executions that reached `max_steps` and ended there as passes
    /// ([`Builder::pass_at_max_steps`](crate::Builder::pass_at_max_steps)). When it is not
    /// 0, an exhausted search covered every schedule *up to `max_steps`*, and says so: what
    /// those executions would have done after it was not run.
    pub cut_at_max_steps: u64,
    /// Places of explicit yields (`yield_now`, `hint::spin_loop`, `sleep`) that a thread
    /// reached twice in one execution: a loop's. A reduced DFS orders the events around an
    /// explicit yield against every other thread's, as state the model does not see (a `std`
    /// atomic) may be shared there, except around a loop's yields, which would make a spin
    /// loop's every round such a pair. When it is not 0, an exhausted reduced search says
    /// that state outside the model shared in loops was not interleaved.
    pub loop_yields: u64,
    /// Wall-clock time of the exploration.
    pub elapsed: Duration,
    /// What ran the model threads.
    pub substrate: crate::settings::Substrate,
}

impl Report {
    /// The report of a test that replayed one schedule instead of exploring: one execution,
    /// nothing exhausted.
    pub(crate) fn replayed(substrate: crate::settings::Substrate) -> Report {
        Report {
            executions: 1,
            distinct_schedules: 1,
            distinct_schedules_exact: true,
            exhausted: false,
            stopped_by: None,
            bound: None,
            reduction: None,
            redundant: 0,
            strategy: None,
            seed: None,
            max_steps: 0,
            total_steps: 0,
            preemptions: 0,
            context_switches: 0,
            spin_holds: 0,
            early_withheld: 0,
            cut_at_max_steps: 0,
            loop_yields: 0,
            elapsed: Duration::ZERO,
            substrate,
        }
    }

    /// What the search covered, for DFS: "reduction: ..., bound: ...".
    fn scope(&self) -> String {
        let bound = match self.bound {
            Some(b) => format!("at most {b} preemptions"),
            None => "none".to_owned(),
        };
        let reduction = match (self.reduction, self.bound) {
            (Some(Reduction::Off) | None, _) => "none",
            (Some(_), None) => "DPOR, source sets and sleep sets",
            (Some(_), Some(_)) => "bounded POR and sleep sets",
        };
        let mut scope = format!("reduction: {reduction}; bound: {bound}");
        if self.spin_holds > 0 {
            scope.push_str("; under fair scheduling of spin loops");
        }
        if self.early_withheld > 0 {
            scope.push_str(&format!(
                "; at most one early wait ending per thread ({} more not tried)",
                self.early_withheld
            ));
        }
        if self.cut_at_max_steps > 0 {
            scope.push_str(&self.cut_words());
        }
        if self.loop_yields > 0 && matches!(self.reduction, Some(Reduction::Dpor)) {
            let places = match self.loop_yields {
                1 => "1 place".to_owned(),
                n => format!("{n} places"),
            };
            scope.push_str(&format!(
                "; yields in loops ({places}) order no state outside the model"
            ));
        }
        scope
    }

    /// "; up to max_steps: N executions ended there as passes", for a run some of whose
    /// executions were cut.
    fn cut_words(&self) -> String {
        format!(
            "; up to max_steps: {} executions ended there as passes",
            self.cut_at_max_steps
        )
    }

    fn headline(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dfs = self.reduction.is_some();
        let classes = self.executions - self.redundant;
        let what = match self.reduction {
            Some(Reduction::Off) => "schedules",
            _ => "classes of schedules",
        };
        match (dfs, self.exhausted, self.stopped_by) {
            // A proof covers what the crate models: plain memory behind raw pointers, std's
            // own primitives and I/O are not interleaved (README, "What is and is not
            // checked").
            (true, true, _) => write!(
                f,
                "all {classes} {what} of the modelled operations explored ({}), no failure",
                self.scope()
            ),
            (true, false, limit) => {
                let by = limit.map_or("a limit".to_owned(), |l| l.to_string());
                write!(
                    f,
                    "NOT EXHAUSTED: stopped by {by} after {classes} {what} ({}); they \
                     passed, but this is not a proof",
                    self.scope()
                )
            }
            (false, true, _) => {
                write!(f, "{} executions passed", self.executions)?;
                if self.cut_at_max_steps > 0 {
                    write!(f, " ({})", &self.cut_words()[2..])?;
                }
                f.write_str("; the model made no decision: its one schedule ran")
            }
            (false, false, limit) => {
                write!(f, "{} executions passed", self.executions)?;
                if self.cut_at_max_steps > 0 {
                    write!(f, " ({})", &self.cut_words()[2..])?;
                }
                match limit {
                    Some(l) => write!(f, " (stopped by {l})"),
                    None => Ok(()),
                }
            }
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.strategy.map_or(StrategyName::REPLAY, |s| s.name());
        f.write_str(name.name())?;
        if let Some(seed) = self.seed {
            write!(f, " (seed {seed})")?;
        }
        f.write_str(": ")?;
        self.headline(f)?;
        write!(f, "; {} executions", self.executions)?;
        if self.redundant > 0 {
            write!(f, " ({} redundant)", self.redundant)?;
        }
        // Under DFS every execution is a schedule of its own: the count would only repeat
        // `executions`, beside a number of classes it seems to contradict.
        if self.reduction.is_none() {
            let about = if self.distinct_schedules_exact {
                ""
            } else {
                "≈"
            };
            write!(f, ", {about}{} distinct schedules", self.distinct_schedules)?;
        }
        let mean = self.total_steps.checked_div(self.executions).unwrap_or(0);
        write!(
            f,
            "; steps per execution max {}, mean {mean}; {} preemptions, {} context switches; \
             {:.2?} on {}",
            self.max_steps, self.preemptions, self.context_switches, self.elapsed, self.substrate
        )
    }
}
