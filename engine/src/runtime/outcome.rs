//! Completing what an execution left: a runtime failure becomes a [`Failure`] with its
//! schedule and last decisions.

use super::{DecisionRecord, ExecOutcome, FailureDraft, Fired};
use crate::report::{Failure, RecentStep, SourceLocation, ThreadInfo, TimerFiring, secs};
use crate::schedule::{Build, Decision, Schedule, ScheduleError, Signature};

/// Where a failure's schedule says it came from: the run it was found in.
#[derive(Clone, Debug)]
pub struct Meta {
    /// The test's path, if the run knows it.
    pub test: Option<String>,
    /// The strategy, as the schedule names it.
    pub strategy: String,
    /// The run's seed, if it has one.
    pub seed: Option<u64>,
    /// The execution's index in its run.
    pub iteration: u64,
    /// What ran the model threads.
    pub substrate: crate::settings::Substrate,
    /// The settings the executions ran with.
    pub settings: crate::schedule::Settings,
}

/// A runtime failure, completed with its schedule and the last decisions.
pub fn failure(draft: FailureDraft, out: &ExecOutcome, meta: Meta) -> Failure {
    let info = |t: usize| {
        ThreadInfo::new(t, out.names.get(t).cloned().flatten())
            .with_label(out.labels.get(t).cloned().flatten())
    };
    let decisions: Vec<Decision> = out
        .decisions
        .iter()
        .map(|d| decision(d, &out.names))
        .collect();
    let first_recent = out
        .decisions
        .len()
        .saturating_sub(crate::report::RECENT_DECISIONS);
    let recent = out.decisions[first_recent..]
        .iter()
        .map(|d: &DecisionRecord| RecentStep {
            step: d.step,
            thread: info(d.chosen),
            op: match (d.pick, d.woke) {
                (None, _) => d.op.name().to_owned(),
                (Some((kind, value)), woke) => format!(
                    "{}, {} {value} of {}{}{}",
                    d.op.name(),
                    d.named.unwrap_or_else(|| kind.name()),
                    d.options,
                    woke.map(|t| format!(" (wakes {})", info(t)))
                        .unwrap_or_default(),
                    d.fired.map(fired_note).unwrap_or_default(),
                ),
            },
            location: SourceLocation::from(d.op.loc),
        })
        .collect();
    let timers = out
        .decisions
        .iter()
        .filter_map(|d| d.fired.map(|fired| (d, fired)))
        .map(|(d, fired)| TimerFiring {
            step: d.step,
            thread: info(d.chosen),
            api: fired.armed.api,
            timer: fired.timer,
            location: SourceLocation::from(fired.armed.at),
            deadline: fired.deadline,
            clock: fired.clock,
        })
        .collect();
    let mut schedule = schedule(decisions, &meta);
    schedule.failure = Some(Signature::new(
        draft.kind,
        draft.thread.as_ref().map(|t| (t.id(), t.name())),
        &draft.message,
    ));
    Failure {
        kind: draft.kind,
        message: draft.message,
        thread: draft.thread,
        location: draft.location,
        threads: draft.threads,
        recent,
        timers,
        schedule,
        iteration: meta.iteration,
        backtrace: draft.backtrace,
        substrate: meta.substrate,
    }
}

/// What a recent decision's line adds for an early timeout: the timer's call and deadline.
fn fired_note(fired: Fired) -> String {
    let what = match fired.timer {
        true => "timer armed by",
        false => "timed wait",
    };
    format!(
        " ({what} `{}` at {}, deadline {})",
        fired.armed.api,
        SourceLocation::from(fired.armed.at),
        secs(fired.deadline)
    )
}

/// A replay refused before it started: the schedule belongs to another test.
pub fn schedule_mismatch(e: &ScheduleError, meta: Meta) -> Failure {
    Failure {
        kind: crate::schedule::FailureKind::Divergence,
        message: e.to_string(),
        thread: None,
        location: None,
        threads: vec![],
        recent: vec![],
        timers: vec![],
        schedule: schedule(vec![], &meta),
        iteration: meta.iteration,
        backtrace: None,
        substrate: meta.substrate,
    }
}

/// The schedule of `decisions`, with what `meta` says of the run.
pub fn schedule(decisions: Vec<Decision>, meta: &Meta) -> Schedule {
    Schedule {
        version: crate::schedule::VERSION,
        crate_version: env!("CARGO_PKG_VERSION").to_owned(),
        test: meta.test.clone(),
        strategy: meta.strategy.clone(),
        seed: meta.seed,
        iteration: meta.iteration,
        settings: meta.settings,
        failure: None,
        build: Build::default(),
        decisions,
    }
}

/// A recorded decision as its schedule writes it, the thread named from `names`.
pub fn decision(d: &DecisionRecord, names: &[Option<String>]) -> Decision {
    Decision {
        thread: d.chosen,
        step: d.step,
        options: d.options,
        name: names.get(d.chosen).cloned().flatten(),
        op: d.op.kind.name().to_owned(),
        location: SourceLocation::from(d.op.loc).to_string(),
        pick: d.pick,
    }
}
