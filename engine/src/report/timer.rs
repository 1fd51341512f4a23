//! [`TimerFiring`]: a timer or timed wait that ended while other threads could still act,
//! as a failure reports it.

use std::fmt;
use std::time::Duration;

use super::{SourceLocation, ThreadInfo};

/// A timer (`tokio::time::sleep`, `timeout`, `interval`, ...) or a thread's timed wait
/// (`thread::sleep`, `wait_timeout`, ...) that the search ended early, on the loaded clock
/// (`Clock::Loaded`): its deadline passed at once while other
/// threads could still act, as on a machine too loaded to run them. The clock jumped to the
/// deadline; `Clock::Paused` rules such firings out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimerFiring {
    pub(crate) step: u64,
    pub(crate) thread: ThreadInfo,
    pub(crate) api: &'static str,
    pub(crate) timer: bool,
    pub(crate) location: SourceLocation,
    pub(crate) deadline: Duration,
    pub(crate) clock: Duration,
}

impl TimerFiring {
    /// The switch point (counted from 1 in the execution) of the decision that fired it.
    pub fn step(&self) -> u64 {
        self.step
    }

    /// The thread whose wait it ended: the one that polled the timer's future last, or the
    /// one in the timed wait.
    pub fn thread(&self) -> &ThreadInfo {
        &self.thread
    }

    /// For a timer, the call that made it, e.g. `tokio::time::timeout`; for a timed wait,
    /// its operation, e.g. `condvar wait`.
    pub fn api(&self) -> &str {
        self.api
    }

    /// Whether it was a future's timer (`tokio::time`), not a thread's timed wait.
    pub fn is_timer(&self) -> bool {
        self.timer
    }

    /// Where the program made the timer, or waited (`#[track_caller]`).
    pub fn location(&self) -> &SourceLocation {
        &self.location
    }

    /// Its deadline, the time the clock jumped to, since the start of the execution.
    pub fn deadline(&self) -> Duration {
        self.deadline
    }

    /// How much earlier than its deadline it fired: the deadline minus the clock when the
    /// search ended it.
    pub fn early_by(&self) -> Duration {
        self.deadline.saturating_sub(self.clock)
    }
}

impl fmt::Display for TimerFiring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what, did) = match self.timer {
            true => ("timer armed by", "fired"),
            false => ("timed wait", "timed out"),
        };
        write!(
            f,
            "{what} `{}` at {} {did} at {} (its deadline), {:?} early: the clock was at {} and \
             other threads could still act",
            self.api,
            self.location,
            secs(self.deadline),
            self.early_by(),
            secs(self.clock),
        )
    }
}

/// A virtual time as reports write it: seconds since the start, to the microsecond when
/// that matters (`1.000s`, `0.000250s`).
pub(crate) fn secs(t: Duration) -> String {
    match t.subsec_nanos() % 1_000_000 {
        0 => format!("{:.3}s", t.as_secs_f64()),
        _ => format!("{:.6}s", t.as_secs_f64()),
    }
}

#[cfg(test)]
mod tests {
    use super::secs;
    use std::time::Duration;

    #[test]
    fn virtual_times_read_in_seconds() {
        assert_eq!(secs(Duration::ZERO), "0.000s");
        assert_eq!(secs(Duration::from_millis(1002)), "1.002s");
        assert_eq!(secs(Duration::from_micros(250)), "0.000250s");
    }
}
