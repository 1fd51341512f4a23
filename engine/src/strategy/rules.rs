//! How a schedule replays: the execution settings its decisions were taken under, read from
//! what the file records and from the strategy that recorded it, as one value the
//! replaying side applies as a whole. There is one live format (`super::VERSION`), so no
//! rule depends on a format version.

use crate::schedule::Schedule;
use crate::settings::{Clock, SpinRule, StrategyName};

/// The execution settings a schedule's decisions were recorded under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayRules {
    /// How spinning threads were held back: as DFS holds them unless `fair_spins` was off;
    /// random and PCT never hold a thread back.
    pub spins: SpinRule,
    /// Whether spurious wake-ups were decisions: `Some` when the file says, `None` when the
    /// replaying side's setting applies.
    pub spurious_wakeups: Option<bool>,
    /// How many waits each thread may end early per execution (timeouts, spurious
    /// wake-ups and spurious exchange failures together): 1 for a DFS schedule, as its
    /// search allowed; no limit for the others (see `runtime/waits.rs`).
    pub early_limit: Option<u32>,
    /// How the clock moved: the file's (the loaded clock when it does not say), never the
    /// replaying side's, since early timeouts are decisions on one clock and not the other.
    pub clock: Clock,
    /// Whether a search recorded it: its replay checks what the reduction relies on, as the
    /// search did (`ExecConfig::check_acquires`).
    pub searched: bool,
}

/// How `schedule` replays.
pub fn replay_rules(schedule: &Schedule) -> ReplayRules {
    let searched = StrategyName::from_name(schedule.strategy()).is_some_and(|n| n.searches());
    ReplayRules {
        spins: match (searched, schedule.fair_spins()) {
            (true, Some(false)) | (false, _) => SpinRule::Off,
            (true, _) => SpinRule::Repeats,
        },
        spurious_wakeups: schedule.spurious_wakeups(),
        early_limit: searched.then_some(1),
        clock: schedule.clock(),
        searched,
    }
}
