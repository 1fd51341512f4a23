//! The progress line of a long DFS search, on stderr.
//!
//! After about two seconds, at most once a second: executions so far, executions per second,
//! the current search depth, and Knuth's estimate of the whole search (the product of the
//! branching seen along each path, averaged over the paths run so far; D. E. Knuth,
//! "Estimating the efficiency of backtrack programs", 1975). The estimate is rough: a DFS
//! does not pick its paths at random, and the branching of points it has not reached yet is
//! unknown, so early figures can be off by orders of magnitude; they settle as the search
//! goes on. On a terminal the line overwrites itself; otherwise each is a line of its own.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// When the first line may appear.
const QUIET_FOR: Duration = Duration::from_secs(2);
/// The least time between two lines.
const EVERY: Duration = Duration::from_secs(1);

/// Prints the progress line of one search.
pub(super) struct Progress {
    on: bool,
    start: Instant,
    last: Option<Instant>,
    terminal: bool,
}

impl Progress {
    /// A progress line for a search started now (`on`: whether to print at all).
    pub(super) fn new(on: bool) -> Self {
        Progress {
            on,
            start: Instant::now(),
            last: None,
            terminal: std::io::stderr().is_terminal(),
        }
    }

    /// Prints a line if it is time: `executions` so far, the search `depth`, and the
    /// `estimate` of all executions, if known.
    pub(super) fn tick(&mut self, executions: u64, depth: usize, estimate: Option<f64>) {
        if !self.on {
            return;
        }
        let now = Instant::now();
        let elapsed = now - self.start;
        if elapsed < QUIET_FOR || self.last.is_some_and(|l| now - l < EVERY) {
            return;
        }
        self.last = Some(now);
        let rate = executions as f64 / elapsed.as_secs_f64();
        let mut line =
            format!("interleave-test dfs: {executions} executions, {rate:.0}/s, depth {depth}");
        if let Some(total) = estimate.filter(|t| t.is_finite() && *t >= 1.0) {
            let left = (total - executions as f64).max(0.0) / rate.max(1e-9);
            line.push_str(&format!(
                ", estimated total {} (rough), {} left",
                approx(total),
                duration(left)
            ));
        }
        let mut err = std::io::stderr().lock();
        let _ = match self.terminal {
            true => write!(err, "\r\x1b[2K{line}"),
            false => writeln!(err, "{line}"),
        };
    }

    /// Ends the line on a terminal, if one was printed.
    pub(super) fn finish(&self) {
        if self.on && self.terminal && self.last.is_some() {
            let _ = writeln!(std::io::stderr());
        }
    }
}

/// `n` with two significant digits: 1234567 -> "1.2e6", 850 -> "850".
fn approx(n: f64) -> String {
    if n < 10_000.0 {
        format!("{n:.0}")
    } else {
        format!("{n:.1e}")
    }
}

/// Seconds as a short duration: "42s", "7m", "3h", "> 1000 days".
fn duration(secs: f64) -> String {
    match secs {
        s if s < 120.0 => format!("{s:.0}s"),
        s if s < 7_200.0 => format!("{:.0}m", s / 60.0),
        s if s < 172_800.0 => format!("{:.0}h", s / 3_600.0),
        s if s < 86_400_000.0 => format!("{:.0} days", s / 86_400.0),
        _ => "> 1000 days".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::{approx, duration};

    #[test]
    fn figures_are_short() {
        assert_eq!(approx(850.0), "850");
        assert_eq!(approx(1_234_567.0), "1.2e6");
        assert_eq!(duration(42.0), "42s");
        assert_eq!(duration(600.0), "10m");
        assert_eq!(duration(10_800.0), "3h");
        assert_eq!(duration(1e12), "> 1000 days");
    }
}
