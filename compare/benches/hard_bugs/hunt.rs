//! Table 2 of the `hard_bugs` bench: the wall time of a short hunt, ours at parallelism 1
//! and at the default parallelism, against shuttle.

use std::ops::RangeInclusive;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use super::common::randomized::{Kind, counted, shuttle_runs};
use super::common::{as_u64, count_cell, timed};
use super::models::{ours as passing_ours, theirs as passing_theirs};
use super::{BUGS, Bug, ours_builder};

/// Executions of the hunt on the passing model.
const EXECUTIONS: u64 = 10;

/// The hard-bug model hunted.
const HUNTED: &str = "twostage_3";

/// The executions up to the first failure that a hunt's seed is chosen for: the first seed
/// from 1 whose search fails within this range.
const WINDOW: RangeInclusive<u64> = 10..=30;

/// The executions a hunt may run before it counts as a miss (the builder's default).
const HUNT_CAP: u64 = 1_000;

/// Who runs a hunt: ours at a parallelism (`None`: `Builder::new()`'s), or shuttle.
#[derive(Clone, Copy, Debug)]
enum Tool {
    Ours(Option<usize>),
    Shuttle,
}

impl Tool {
    fn label(self) -> String {
        let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
        match self {
            Tool::Ours(Some(n)) => format!("ours, parallelism {n}"),
            Tool::Ours(None) => format!("ours, default parallelism ({cores})"),
            Tool::Shuttle => "shuttle".to_owned(),
        }
    }
}

/// One `check` of `EXECUTIONS` executions of `mutex_3x2` from `seed`: the executions run.
fn pass_once(tool: Tool, kind: Kind, seed: u64) -> u64 {
    match tool {
        Tool::Ours(parallelism) => {
            let builder = ours_builder(kind, seed, EXECUTIONS, parallelism);
            match builder.check(passing_ours::mutex_3x2) {
                Ok(report) => report.executions,
                Err(failure) => panic!("interleave-test: mutex_3x2 failed:\n{failure}"),
            }
        }
        Tool::Shuttle => match shuttle_runs(kind, seed, passing_theirs::mutex_3x2, EXECUTIONS) {
            Ok(done) => as_u64(done),
            Err(_) => panic!("shuttle: mutex_3x2 failed"),
        },
    }
}

/// One hunt of `bug` from `seed`, capped at [`HUNT_CAP`]: the executions up to and including
/// the first failing one, `None` if none failed.
fn hunt_once(tool: Tool, kind: Kind, seed: u64, bug: &Bug) -> Option<u64> {
    match tool {
        Tool::Ours(parallelism) => {
            let builder = ours_builder(kind, seed, HUNT_CAP, parallelism);
            let failure = builder.check(bug.ours).err()?;
            assert_eq!(failure.kind(), bug.kind, "{failure}");
            Some(failure.iteration() + 1)
        }
        Tool::Shuttle => {
            let (count, model) = counted(bug.shuttle);
            shuttle_runs(kind, seed, model, HUNT_CAP).err()?;
            Some(as_u64(count.load(Relaxed)))
        }
    }
}

/// The first seed from 1 whose hunt fails within [`WINDOW`], and where it fails.
fn seed_in_window(tool: Tool, kind: Kind, bug: &Bug) -> (u64, u64) {
    (1..=10_000)
        .find_map(|seed| {
            let n = hunt_once(tool, kind, seed, bug)?;
            WINDOW.contains(&n).then_some((seed, n))
        })
        .expect("some seed finds the bug within the window")
}

/// What [`median_time`] measured: the executions of one repetition, and the median,
/// shortest and longest wall time.
type Sample = (u64, Duration, Duration, Duration);

/// Runs `once` `reps` times: the executions it reports (the same every time) and the
/// median, shortest and longest wall time.
fn median_time(reps: usize, mut once: impl FnMut() -> u64) -> Sample {
    let mut executions = None;
    let mut times: Vec<Duration> = (0..reps)
        .map(|_| {
            let (n, t) = timed(&mut once);
            assert!(
                executions.is_none_or(|e| e == n),
                "a repetition ran {n} executions instead of {executions:?}"
            );
            executions = Some(n);
            t
        })
        .collect();
    times.sort_unstable();
    let n = executions.expect("at least one repetition");
    (n, times[reps / 2], times[0], times[reps - 1])
}

/// A table row; `base` is ours at parallelism 1's executions per second, for the ratio.
fn row(label: &str, kind: Kind, tool: Tool, seed: u64, sample: Sample, base: f64) -> String {
    let (n, t, shortest, longest) = sample;
    let rate = n as f64 / t.as_secs_f64();
    format!(
        "| {label} | {kind:?} | {} | {seed} | {n} | {t:.1?} | {shortest:.1?} to {longest:.1?} \
         | {} | {:.2} |",
        tool.label(),
        count_cell(rate as u64),
        rate / base
    )
}

const TOOLS: [Tool; 3] = [Tool::Ours(Some(1)), Tool::Ours(None), Tool::Shuttle];

/// The rows of the passing model, random and PCT, seed 1.
fn measure_passing(reps: usize) -> Vec<String> {
    let mut rows = Vec::new();
    for kind in [Kind::Random, Kind::Pct] {
        let mut base = None;
        for tool in TOOLS {
            let sample = median_time(reps, || pass_once(tool, kind, 1));
            let rate = sample.0 as f64 / sample.1.as_secs_f64();
            let base = *base.get_or_insert(rate);
            let label = "mutex_3x2 (passes)";
            rows.push(row(label, kind, tool, 1, sample, base));
        }
    }
    rows
}

/// The rows of the hunted model, random and PCT: each tool from the first seed that finds
/// the bug within [`WINDOW`] (ours: chosen at parallelism 1; the failing execution is the
/// same at any parallelism).
fn measure_hunt(reps: usize) -> Vec<String> {
    let bug = BUGS
        .iter()
        .find(|b| b.name == HUNTED)
        .expect("the hunted model is a bug of the table");
    let mut rows = Vec::new();
    for kind in [Kind::Random, Kind::Pct] {
        let mut base = None;
        let ours_seed = seed_in_window(Tool::Ours(Some(1)), kind, bug);
        let shuttle_seed = seed_in_window(Tool::Shuttle, kind, bug);
        for tool in TOOLS {
            let (seed, at) = match tool {
                Tool::Shuttle => shuttle_seed,
                Tool::Ours(_) => ours_seed,
            };
            let sample = median_time(reps, || {
                let n = hunt_once(tool, kind, seed, bug).expect("the seed finds the bug");
                assert_eq!(n, at, "the failing execution moved");
                n
            });
            let rate = sample.0 as f64 / sample.1.as_secs_f64();
            let base = *base.get_or_insert(rate);
            let label = format!("{HUNTED} (hunt to the first failure)");
            rows.push(row(&label, kind, tool, seed, sample, base));
        }
    }
    rows
}

/// Table 2's rows.
pub(crate) fn measure(reps: usize) -> Vec<String> {
    let mut rows = measure_passing(reps);
    rows.extend(measure_hunt(reps));
    rows
}
