//! The progress line of a long DFS search, on a terminal's stderr.
//!
//! After about two seconds, at most once a second: the test (or model) it belongs to,
//! executions so far, executions per second, the current search depth, and a range for the
//! number of executions of the whole search and the time left. The range is as wide as the
//! estimator was measured to err (`strategy/estimate.rs`; `config/progress_accuracy.rs`
//! checks it against full searches of the crate's models).
//!
//! The line overwrites itself, so by default it is printed only on a terminal: in a log (CI,
//! a test run whose stderr is a file) a line a second would bury the results. Asked for
//! everywhere (`INTERLEAVE_PROGRESS=1`), each update is a line of its own off a terminal.
//! One search holds the line at a time, until it ends: two tests searching at once do not
//! overwrite each other's figures in turn.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::strategy::{Estimate, Search};

/// When the first line may appear.
const QUIET_FOR: Duration = Duration::from_secs(2);
/// The least time between two lines.
const EVERY: Duration = Duration::from_secs(1);

/// Which search holds the terminal's line (0: none), and the ids searches take.
pub(super) struct Line {
    holder: AtomicU64,
    ids: AtomicU64,
}

impl Line {
    pub(super) const fn new() -> Self {
        Line {
            holder: AtomicU64::new(0),
            ids: AtomicU64::new(1),
        }
    }
}

/// The process's one progress line.
static STDERR_LINE: Line = Line::new();

/// Where the progress line is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ShowProgress {
    /// Nowhere.
    Off,
    /// When stderr is a terminal (the default).
    OnTerminal,
    /// On stderr, whatever it is.
    Anywhere,
}

/// Prints the progress line of one search.
pub(super) struct Progress {
    /// Whether to print at all.
    on: bool,
    /// Whether stderr is a terminal (the line then overwrites itself).
    terminal: bool,
    /// The test or model searched, if named.
    test: Option<String>,
    start: Instant,
    last: Option<Instant>,
    line: &'static Line,
    id: u64,
}

impl Progress {
    /// A progress line for a search of `test` started now, shown as `show` says.
    pub(super) fn new(show: ShowProgress, test: Option<&str>) -> Self {
        let terminal = std::io::stderr().is_terminal();
        let on = match show {
            ShowProgress::Off => false,
            ShowProgress::OnTerminal => terminal,
            ShowProgress::Anywhere => true,
        };
        let mut p = Progress::with(on, test, Instant::now(), &STDERR_LINE);
        p.terminal = terminal;
        p
    }

    /// A progress line started at `start`, sharing `line` with other searches.
    pub(super) fn with(on: bool, test: Option<&str>, start: Instant, line: &'static Line) -> Self {
        Progress {
            on,
            terminal: true,
            test: test.map(str::to_owned),
            start,
            last: None,
            line,
            id: line.ids.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Prints a line if it is time: `executions` so far, the search `depth`, and the
    /// `estimate` of all executions, if known.
    pub(super) fn tick(&mut self, executions: u64, depth: usize, estimate: Option<Estimate>) {
        #[cfg(test)]
        TRACE.with(|t| t.borrow_mut().as_mut().map(|t| t.extend(estimate)));
        if let Some(line) = self.due(Instant::now(), executions, depth, estimate) {
            let mut err = std::io::stderr().lock();
            let _ = match self.terminal {
                true => write!(err, "\r\x1b[2K{line}"),
                false => writeln!(err, "{line}"),
            };
        }
    }

    /// The line to print at `now`, if it is time and this search holds the line (taking it
    /// if it is free).
    pub(super) fn due(
        &mut self,
        now: Instant,
        executions: u64,
        depth: usize,
        estimate: Option<Estimate>,
    ) -> Option<String> {
        if !self.on {
            return None;
        }
        let elapsed = now.saturating_duration_since(self.start);
        if elapsed < QUIET_FOR || self.last.is_some_and(|l| now - l < EVERY) {
            return None;
        }
        let holder = &self.line.holder;
        let held = holder.compare_exchange(0, self.id, Ordering::AcqRel, Ordering::Acquire);
        if held.is_err_and(|h| h != self.id) {
            return None;
        }
        self.last = Some(now);
        let rate = executions as f64 / elapsed.as_secs_f64();
        let test = self
            .test
            .as_deref()
            .map(|t| format!(" {t}"))
            .unwrap_or_default();
        let mut line = format!(
            "interleave-test dfs{test}: {executions} executions, {rate:.0}/s, depth {depth}"
        );
        if let Some(estimate) = estimate.filter(|e| e.weighted().is_finite()) {
            line.push_str(&total(estimate, executions, rate));
        }
        Some(line)
    }

    /// Ends the line, if this search printed one, and lets another search have it.
    pub(super) fn finish(&self) {
        if self.release() && self.terminal {
            let _ = writeln!(std::io::stderr());
        }
    }

    /// Gives the line up; whether this search held it.
    fn release(&self) -> bool {
        let holder = &self.line.holder;
        holder
            .compare_exchange(self.id, 0, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}

impl Drop for Progress {
    /// A search that ends early (a failure, a panic) gives the line up too.
    fn drop(&mut self) {
        self.release();
    }
}

/// The estimated total and time left, as ranges (see `strategy/estimate.rs`): a search
/// with a preemption bound gets only an upper end, its estimates running high.
fn total(estimate: Estimate, executions: u64, rate: f64) -> String {
    let (low, high) = estimate.range();
    let left = |total: f64| duration((total - executions as f64).max(0.0) / rate.max(1e-9));
    if estimate.search == Search::Bounded {
        return format!(
            ", total at most {}, at most {} left",
            approx(high),
            left(high)
        );
    }
    let (soonest, latest) = (left(low), left(high));
    let time = match soonest == latest {
        true => latest,
        false => format!("{soonest} to {latest}"),
    };
    format!(", total {} to {}, {time} left", approx(low), approx(high))
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
thread_local! {
    /// The estimates of each execution, when a test asks for them
    /// (`config/progress_accuracy.rs`, at the top, where models can be run).
    pub(crate) static TRACE: std::cell::RefCell<Option<Vec<Estimate>>> = const { std::cell::RefCell::new(None) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drives a search's line with a fake clock: `(seconds after the start, executions)`.
    fn lines(p: &mut Progress, start: Instant, ticks: &[(f64, u64)]) -> Vec<Option<String>> {
        ticks
            .iter()
            .map(|&(at, n)| p.due(start + Duration::from_secs_f64(at), n, 7, None))
            .collect()
    }

    #[test]
    fn a_line_names_the_test_after_two_seconds_then_once_a_second() {
        static LINE: Line = Line::new();
        let start = Instant::now();
        let mut p = Progress::with(true, Some("my_crate::queue"), start, &LINE);
        let got = lines(&mut p, start, &[(1.0, 10), (2.5, 50), (3.0, 60), (3.6, 72)]);
        assert_eq!(
            got,
            [
                None,
                Some("interleave-test dfs my_crate::queue: 50 executions, 20/s, depth 7".into()),
                None,
                Some("interleave-test dfs my_crate::queue: 72 executions, 20/s, depth 7".into()),
            ]
        );
        let estimate = Estimate {
            executions: 100,
            knuth: 250.0,
            explored: 1.0 / 3.0,
            search: Search::Plain,
        };
        let with_estimate = p.due(start + Duration::from_secs(5), 100, 3, Some(estimate));
        assert_eq!(
            with_estimate.as_deref(),
            Some(
                "interleave-test dfs my_crate::queue: 100 executions, 20/s, depth 3, total 100 \
                 to 450, 0s to 18s left"
            )
        );
        let bounded = Estimate {
            search: Search::Bounded,
            ..estimate
        };
        let with_bound = p.due(start + Duration::from_secs(7), 140, 3, Some(bounded));
        assert_eq!(
            with_bound.as_deref(),
            Some(
                "interleave-test dfs my_crate::queue: 140 executions, 20/s, depth 3, total at \
                 most 450, at most 16s left"
            )
        );
    }

    #[test]
    fn nothing_is_printed_when_off_or_not_on_a_terminal() {
        static LINE: Line = Line::new();
        let start = Instant::now();
        let mut off = Progress::with(false, Some("t"), start, &LINE);
        assert_eq!(lines(&mut off, start, &[(5.0, 1), (9.0, 2)]), [None, None]);
        let later = Instant::now() + Duration::from_secs(9);
        let mut never = Progress::new(ShowProgress::Off, Some("t"));
        assert_eq!(never.due(later, 1, 1, None), None);
        // By default only on a terminal (stderr is one when the suite is run by hand).
        let mut default = Progress::new(ShowProgress::OnTerminal, Some("t"));
        let shown = default.due(later, 1, 1, None).is_some();
        drop(default); // gives the line up, if it took it
        assert_eq!(shown, std::io::stderr().is_terminal());
    }

    #[test]
    fn one_search_holds_the_line_until_it_ends() {
        static LINE: Line = Line::new();
        let start = Instant::now();
        let mut a = Progress::with(true, Some("a"), start, &LINE);
        let mut b = Progress::with(true, Some("b"), start, &LINE);
        assert!(lines(&mut a, start, &[(2.5, 1)])[0].is_some());
        assert_eq!(lines(&mut b, start, &[(2.6, 1), (4.0, 2)]), [None, None]);
        assert!(lines(&mut a, start, &[(3.6, 2)])[0].is_some());
        drop(a);
        let got = lines(&mut b, start, &[(5.0, 3)]);
        assert!(
            got[0]
                .as_deref()
                .is_some_and(|l| l.starts_with("interleave-test dfs b: "))
        );
    }

    #[test]
    fn a_range_of_times_left_that_rounds_to_one_figure_is_said_once() {
        let huge = Estimate {
            executions: 10,
            knuth: 0.0,
            explored: 1e-12,
            search: Search::Reduced,
        };
        assert_eq!(
            total(huge, 10, 1.0),
            ", total 4.0e12 to 1.2e14, > 1000 days left"
        );
    }

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
