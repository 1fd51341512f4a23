//! How a schedule replays, by what its format version recorded and what recorded it: one
//! value the replaying side applies as a whole, so that the differences between format
//! versions are written down here and nowhere else.

use super::Schedule;
use crate::settings::{SpinRule, StrategyName};

/// The execution settings a schedule's decisions were recorded under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ReplayRules {
    /// Format 1 recorded a decision only where several threads could run, and spawns did
    /// not switch.
    pub(crate) legacy_choices: bool,
    /// How spinning threads were held back.
    pub(crate) spins: SpinRule,
    /// Whether the modelled `Arc`'s drops were switch points (format 4 on).
    pub(crate) arc_drops: bool,
    /// Whether a future's wait between polls was a switch point even when it blocked
    /// (formats 5 and older).
    pub(crate) blocking_wait_switches: bool,
    /// Whether loads could read older stores (format 3 on).
    pub(crate) weak_memory: bool,
    /// Whether timed waits and `notify_one` were decisions (format 3 on).
    pub(crate) explore_waits: bool,
    /// Whether spurious wake-ups were decisions: `Some` when the file says or its format
    /// predates them (then `false`), `None` when the replaying side's setting applies.
    pub(crate) spurious_wakeups: Option<bool>,
    /// How many waits each thread may end early per execution (timeouts, spurious
    /// wake-ups and spurious exchange failures together): 1 for a DFS schedule, as its
    /// search allowed; no limit for the others (see `runtime/waits.rs`).
    pub(crate) early_limit: Option<u32>,
}

impl Schedule {
    /// How this schedule replays.
    pub(crate) fn replay_rules(&self) -> ReplayRules {
        let version = self.format_version();
        let dfs = StrategyName::from_name(&self.strategy) == Some(StrategyName::Dfs);
        ReplayRules {
            legacy_choices: version < 2,
            spins: self.spin_rule(dfs),
            arc_drops: version >= 4,
            blocking_wait_switches: version <= 5,
            weak_memory: version >= 3,
            explore_waits: version >= 3,
            spurious_wakeups: match version {
                ..=2 => Some(false),
                _ => self.spurious_wakeups(),
            },
            early_limit: dfs.then_some(1),
        }
    }

    /// How threads that spin were held back when this was recorded: DFS held back a thread
    /// after every yield, spin-loop hint or failed `try_lock` until another thread had run
    /// in formats 2 and 3, and one that repeated a spin in format 4 unless `fair_spins` was
    /// off; random and PCT never did.
    fn spin_rule(&self, dfs: bool) -> SpinRule {
        match self.format_version() {
            _ if !dfs => SpinRule::Off,
            ..=1 => SpinRule::Off,
            2..=3 => SpinRule::AnotherRan,
            _ if self.fair_spins() == Some(false) => SpinRule::Off,
            _ => SpinRule::Repeats,
        }
    }
}
