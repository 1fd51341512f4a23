//! Replaying a schedule, and judging a stored one after the code changed: does the failure it
//! recorded still happen ([`Verdict`])?
//!
//! A stored schedule is judged by its failure's [`Signature`] (kind, thread
//! name, what failed; never line numbers), not by whether its decisions still replay: a fix
//! almost always changes the operations, so a strict replay of the old decisions would call
//! every fix a divergence. Instead [`COMPLETIONS`] executions at most follow the schedule,
//! the first as far as it fits (the recorded thread can run and still has its name; its
//! operation may differ), the others a part of that drawn at random, then decide at random:
//! - an execution fails with the recorded signature: **still fails**;
//! - one fails otherwise: a new failure of the model, reported as such;
//! - none fails, and the schedule fitted at least up to the failing thread's first decision
//!   (the first decision, if the failing thread made none): **fixed**, saying how much ran;
//! - none fails, and it did not fit that far (the threads the failure needs are gone or
//!   renamed): **diverged**: the schedule no longer tells anything about this test.

use std::panic::Location;

use super::Builder;
use crate::driver::{self, Meta, Revisit};
use crate::report::Failure;
use crate::run::ExecConfig;
use crate::schedule::{Schedule, Signature};

/// The most executions that explore on from a stored schedule (fewer when the schedule
/// determines the whole execution, or one fails).
pub(crate) const COMPLETIONS: u64 = 200;

/// What a stored schedule says about the model as it is now.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// Its failure happens again: the failure as it happens now.
    StillFails(Box<Failure>),
    /// Another failure happened while exploring on from it.
    FailsOtherwise(Box<Failure>),
    /// Its failure did not happen.
    Fixed(Explored),
    /// It no longer fits the test: why.
    Diverged(String),
}

/// How much a "fixed" verdict rests on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Explored {
    /// Decisions of the schedule followed.
    pub(crate) fitted: usize,
    /// Decisions in the schedule.
    pub(crate) of: usize,
    /// Executions run.
    pub(crate) executions: u64,
}

impl std::fmt::Display for Explored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} executions pass: the first follows the {} of its {} decisions that fit, the \
             others a random part of those, then all decide at random",
            self.executions, self.fitted, self.of
        )
    }
}

impl Builder {
    /// The execution settings and schedule metadata with which `schedule` replays: the
    /// settings it recorded, this builder's where it recorded none.
    pub(super) fn replay_setup(&self, schedule: &Schedule) -> (ExecConfig, Meta) {
        let meta = Meta {
            test: self
                .name
                .clone()
                .or_else(|| schedule.test().map(str::to_owned)),
            strategy: schedule.strategy().to_owned(),
            seed: schedule.seed(),
            iteration: schedule.iteration(),
            substrate: self.substrate,
            settings: crate::schedule::settings_of(schedule),
        };
        let rules = crate::strategy::replay_rules(schedule);
        let exec = ExecConfig {
            spins: rules.spins,
            untracked_start: false,
            spurious: rules.spurious_wakeups.unwrap_or(self.spurious_wakeups),
            early_limit: rules.early_limit,
            clock: rules.clock,
            check_acquires: rules.searched,
            max_steps: schedule.max_steps().unwrap_or(self.max_steps),
            thread_panics_fail: schedule
                .thread_panics_fail()
                .unwrap_or(self.thread_panics_fail),
            ..self.exec_config()
        };
        (exec, meta)
    }

    /// Judges the stored `schedule` on `model` as it is now (see the module documentation).
    #[track_caller]
    pub(crate) fn revisit<F: Fn() + Sync>(&self, model: &F, schedule: &Schedule) -> Verdict {
        crate::run::assert_not_in_model();
        crate::run::install_hook();
        if let Some(name) = &self.name
            && let Err(e) = schedule.check_test(name)
        {
            return Verdict::Diverged(e.to_string());
        }
        let (mut exec, meta) = self.replay_setup(schedule);
        // Past the schedule's decisions the executions go on at random, bounded only by
        // `max_steps`: a file's own value (a corpus is shared, untrusted input) may not raise
        // it above this test's, or a file saying 10^18 would make a spinning model run for
        // ever. A strict replay needs no such cap: it ends when the decisions do.
        exec.max_steps = exec.max_steps.min(self.max_steps);
        // The test's clock, not the file's: choosing the paused clock is a way to fix a test
        // whose timeouts fired early, and a stored schedule is judged by the test as it is
        // now. Its early timeouts are then no decisions: it fits up to the first one.
        exec.clock = self.clock;
        let seed = crate::corpus::schedule_hash(schedule);
        let run = (exec, self.regressions.as_ref());
        let seen = driver::revisit(
            run,
            model,
            (schedule, seed),
            &meta,
            COMPLETIONS,
            Location::caller(),
        );
        judge(schedule, seen)
    }
}

/// The verdict on `schedule` from what its executions found.
fn judge(schedule: &Schedule, seen: Revisit) -> Verdict {
    if let Some(failure) = seen.failure {
        let same = match schedule.failure() {
            Some(recorded) => recorded.matches(failure.schedule().failure().expect("recorded")),
            // A file from before signatures were recorded: any failure is taken for its own.
            None => true,
        };
        return match same {
            true => Verdict::StillFails(Box::new(failure)),
            false => Verdict::FailsOtherwise(Box::new(failure)),
        };
    }
    let fitted = fitted_with_names(schedule, seen.fitted, &seen.names);
    let needed = needed(schedule);
    if fitted < needed {
        return Verdict::Diverged(diverged_at(schedule, fitted, needed, &seen.names));
    }
    Verdict::Fixed(Explored {
        fitted,
        of: schedule.decisions().len(),
        executions: seen.executions,
    })
}

/// How many of the first `fitted` decisions chose a thread that has the name it had.
fn fitted_with_names(schedule: &Schedule, fitted: usize, names: &[Option<String>]) -> usize {
    schedule.decisions()[..fitted]
        .iter()
        .position(|d| names.get(d.thread()).map(Option::as_deref) != Some(d.name()))
        .unwrap_or(fitted)
}

/// How many decisions must fit for the schedule to say something about the failure: up to
/// the failing thread's first decision, or the first decision if it made none; none for a
/// schedule without decisions.
fn needed(schedule: &Schedule) -> usize {
    let decisions = schedule.decisions();
    if decisions.is_empty() {
        return 0;
    }
    schedule
        .failure()
        .and_then(|f| f.thread_id())
        .and_then(|t| decisions.iter().position(|d| d.thread() == t))
        .map_or(1, |i| i + 1)
}

/// Why the schedule stopped fitting at decision `at`, before the `needed` it must fit.
fn diverged_at(schedule: &Schedule, at: usize, needed: usize, names: &[Option<String>]) -> String {
    let d = &schedule.decisions()[at];
    let recorded = match d.name() {
        Some(name) => format!("thread '{name}' (#{})", d.thread()),
        None => format!("thread #{}", d.thread()),
    };
    let now = match names.get(d.thread()) {
        None => "there is no such thread now".to_owned(),
        Some(Some(name)) if Some(name.as_str()) != d.name() => {
            format!("thread #{} is named '{name}' now", d.thread())
        }
        Some(_) => "it cannot make that decision now".to_owned(),
    };
    let before = match schedule.failure().and_then(Signature::thread_id) {
        Some(_) if needed > 1 => format!(
            ", before the failing thread's first (decision {})",
            needed - 1
        ),
        _ => String::new(),
    };
    format!(
        "it stops fitting at decision {at} of {}{before}: the schedule chose {recorded} there \
         (`{}`), and {now}",
        schedule.decisions().len(),
        crate::schedule::shorten(d.op())
    )
}

#[cfg(test)]
mod tests;
