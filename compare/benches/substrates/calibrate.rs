//! Timing of one measurement of the `substrates` bench: a run length calibrated until a run
//! takes at least a second, then the median of three runs of that length (as the `throughput`
//! bench does), or a single short run in quick mode. A DFS search that ends (is exhausted)
//! before the asked count is timed whole, as many times back to back as fill a second.

use std::time::{Duration, Instant};

/// The count of the first calibration run; each next one is 4 times longer. Lower than the
/// `throughput` bench's 1,000 because an OS-thread execution of `fetch_add_2x200` on a
/// loaded machine can take milliseconds.
const FIRST_COUNT: u64 = 100;
/// A calibrated run takes at least this long.
const MIN_RUN: Duration = Duration::from_secs(1);
/// Runs of the calibrated length whose median is reported.
const REPETITIONS: usize = 3;
/// The count of the only run of a measurement in quick mode.
pub(crate) const QUICK_COUNT: u64 = 20;

/// One timed sample: `repeats` runs of a runner back to back, `count` executions (or
/// `check` calls) in all, in `elapsed`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sample {
    pub(crate) count: u64,
    pub(crate) elapsed: Duration,
    /// Runs in the sample: 1 unless the runner's search is exhausted.
    pub(crate) repeats: u64,
    /// The runner did fewer than it was asked to: its search space was exhausted (DFS).
    pub(crate) exhausted: bool,
    /// The rate of the fastest of the measured runs ÷ that of the slowest (1 for one run).
    pub(crate) spread: f64,
}

impl Sample {
    /// Executions (or calls) per second.
    pub(crate) fn per_second(self) -> f64 {
        self.count as f64 / self.elapsed.as_secs_f64()
    }

    /// Microseconds per execution (or call).
    pub(crate) fn micros_each(self) -> f64 {
        self.elapsed.as_secs_f64() * 1e6 / self.count as f64
    }

    /// "*" when the runs differed by more than [`NOISY`], else "".
    pub(crate) fn mark(self) -> &'static str {
        if self.spread > NOISY { "*" } else { "" }
    }
}

/// A spread above which a measurement is marked. The runs of one measurement usually agree
/// within a third; a wider spread most likely means that other processes took the cores
/// during some of them, and that the median is less trustworthy.
pub(crate) const NOISY: f64 = 1.5;

/// A runner: does up to `n` executions (or calls) and returns how many it did.
pub(crate) type Runner<'a> = &'a dyn Fn(u64) -> u64;

/// `repeats` runs of `count` back to back.
fn timed(run: Runner<'_>, count: u64, repeats: u64) -> Sample {
    let start = Instant::now();
    let done: u64 = (0..repeats).map(|_| run(count)).sum();
    let elapsed = start.elapsed();
    let asked = count * repeats;
    assert!(
        done <= asked,
        "a runner did {done} of the {asked} it was asked"
    );
    assert!(done > 0, "a runner did nothing");
    Sample {
        count: done,
        elapsed,
        repeats,
        exhausted: done < asked,
        spread: 1.0,
    }
}

/// Measures `run`; `label` names it in the progress lines on stderr.
pub(crate) fn measure(label: &str, quick: bool, run: Runner<'_>) -> Sample {
    if quick {
        return timed(run, QUICK_COUNT, 1);
    }
    let (mut count, mut repeats) = (FIRST_COUNT, 1);
    let mut first = timed(run, count, repeats);
    while first.elapsed < MIN_RUN {
        match first.exhausted {
            // The whole search takes less than a second: repeat it.
            true => repeats *= 4,
            false => count *= 4,
        }
        first = timed(run, count, repeats);
    }
    let mut samples = vec![first];
    samples.extend((1..REPETITIONS).map(|_| timed(run, count, repeats)));
    let rates: Vec<String> = samples
        .iter()
        .map(|s| format!("{:.0}", s.per_second()))
        .collect();
    eprintln!(
        "  {label:<44} {:>8}/run × {repeats}, per s: {}",
        samples[0].count / repeats,
        rates.join(", ")
    );
    samples.sort_by(|a, b| a.per_second().total_cmp(&b.per_second()));
    let spread = samples[samples.len() - 1].per_second() / samples[0].per_second();
    Sample {
        spread,
        ..samples[samples.len() / 2]
    }
}
