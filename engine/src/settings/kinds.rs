//! What runs an exploration: the strategy, the reduction, the substrate and the clock, with
//! the defaults and how each is read from the environment.

use super::env_vars::{env, env_bound, env_u32};

/// The stack size of a model thread that does not set one: 2 MiB, std's default for spawned
/// threads. Only the pages a thread touches take memory; the rest is reserved address space.
pub const DEFAULT_STACK_SIZE: usize = 2 << 20;

/// The smallest stack size a model thread may have: `Builder::stack_size` refuses less, and a
/// thread that asks for less with `thread::Builder::stack_size` gets this.
pub const MIN_STACK_SIZE: usize = 16 << 10;

/// What runs the model threads of an execution. Results, schedules and failures are the
/// same on both; only speed and std's own thread-locals differ.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Substrate {
    /// Every model thread is a stackful coroutine, and all of an execution's threads run on
    /// one OS thread (its driver): a hand-off is a user-space stack switch of tens of
    /// nanoseconds that machine load cannot slow down. std's own `thread_local!` values are
    /// then shared by the model threads of an execution (and kept across executions); use
    /// `thread_local!` for values per model thread. Scoped threads
    /// (`thread::scope`) still run on OS threads of their own.
    #[default]
    Coroutines,
    /// Every model thread runs on an OS thread of its own, all pinned to one core and
    /// serialized by a baton: each hand-off is a kernel context switch (several times slower).
    /// For models that need real std thread-locals or OS thread identity. A stack overflow
    /// here is std's abort, which no hook sees: its message names the thread, but no report
    /// or schedule is written; run the model on coroutines, where an overflow is a
    /// `FailureKind::StackOverflow` failure with its
    /// schedule.
    Threads,
}

impl Substrate {
    /// Whether each driver of a run is an OS thread of its own, pinned to a core of its own,
    /// as model threads on OS threads need; coroutines run on the calling thread, unpinned.
    pub fn drives_on_own_threads(self) -> bool {
        match self {
            Substrate::Threads => true,
            Substrate::Coroutines => false,
        }
    }

    /// The substrate `INTERLEAVE_SUBSTRATE` names, if it is set; panics with the names of
    /// the substrates if it names none.
    pub fn from_env() -> Option<Self> {
        let value = std::env::var(env::SUBSTRATE).ok()?;
        Some(match value.trim() {
            "coroutines" => Substrate::Coroutines,
            "threads" => Substrate::Threads,
            _ => panic!(
                "{}={value:?} is not a substrate; the substrates are: coroutines, threads",
                env::SUBSTRATE
            ),
        })
    }
}

impl std::fmt::Display for Substrate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Substrate::Coroutines => "coroutines",
            Substrate::Threads => "OS threads",
        })
    }
}

/// How the virtual clock of an execution moves: when a timer or timed wait may end.
///
/// Chosen per test (`Builder::clock`, `#[interleave(clock =
/// "paused")]`, `INTERLEAVE_CLOCK`), for every runtime flavour and for std-shaped models,
/// and recorded in the schedule, whose replay uses the clock it was recorded with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Clock {
    /// The clock of a loaded machine, the default: a timer or timed wait
    /// (`tokio::time::sleep`, `timeout`, `interval`, `thread::sleep`, `wait_timeout`,
    /// `recv_timeout`, `park_timeout`) may end as soon as its deadline could have passed,
    /// even while other threads could still act, as when the machine is slow to run them.
    /// Each such early ending is a decision the search explores (under DFS at most one per
    /// thread and execution), so the error paths of timeouts are tested. Spins move the
    /// clock.
    #[default]
    Loaded,
    /// Tokio's paused clock (`tokio::time::pause`, `start_paused`), for any flavour: time
    /// moves only when every thread and task waits, jumping to the earliest deadline, so
    /// timers fire in deadline order and a timeout never fires while the work it bounds
    /// could still go on. For tests that assume generous timeouts (`timeout(1 s, ...)`
    /// around work that takes milliseconds). Spins do not move the clock, so a loop that
    /// polls `Instant::now` against a deadline without waiting never ends (a livelock).
    /// Tokio's `pause`, `advance` and `resume` behave as in a test that starts unpaused
    /// (`advance` needs a `pause` first), except that after `resume` the clock is still
    /// this one.
    Paused,
}

impl Clock {
    /// Every clock.
    pub(crate) const ALL: [Clock; 2] = [Clock::Loaded, Clock::Paused];

    /// Its name, as schedules, `INTERLEAVE_CLOCK` and `#[interleave(clock = ...)]` write it.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Clock::Loaded => "loaded",
            Clock::Paused => "paused",
        }
    }

    /// The clock called `name`, if any.
    pub(crate) fn from_name(name: &str) -> Option<Clock> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The clock named by the environment (see [`env`](mod@env)).
    pub fn from_env() -> Option<Self> {
        let value = std::env::var(env::CLOCK).ok()?;
        Some(Clock::from_name(value.trim()).unwrap_or_else(|| {
            panic!(
                "{}={value:?} is not a clock; use loaded (the default) or paused",
                env::CLOCK
            )
        }))
    }
}

impl std::fmt::Display for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The default bug depth of [`StrategyKind::Pct`].
pub const DEFAULT_PCT_DEPTH: u32 = 3;

/// How a DFS search avoids running schedules that are equivalent to one it ran.
///
/// Two schedules are equivalent when one becomes the other by swapping neighbouring
/// operations of different threads that do not conflict (they act on different objects, or
/// both only read): they reach the same state, so one of them stands for both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reduction {
    /// Dynamic partial-order reduction, the default: one execution per class of equivalent
    /// schedules (source sets and sleep sets, Abdulla et al., POPL 2014), or, under a
    /// preemption bound, bounded partial-order reduction (Coons et al., OOPSLA 2013), which
    /// keeps every state reachable within the bound. The bounded search prunes less: the
    /// bound makes otherwise independent operations matter, so each race is tried at two
    /// points and only a thread that would have gone on without a preemption sleeps; on the
    /// crate's benchmark models it runs 1.5 to 20 times fewer executions than no reduction,
    /// not the orders of magnitude of the unbounded search.
    #[default]
    Dpor,
    /// No reduction: every schedule runs. For comparison, and as an escape hatch.
    Off,
}

impl Reduction {
    /// The reduction named by the environment (see [`env`](mod@env)).
    pub fn from_env() -> Option<Self> {
        let value = std::env::var(env::REDUCTION).ok()?;
        Some(match value.trim() {
            "dpor" => Reduction::Dpor,
            "off" | "none" => Reduction::Off,
            _ => panic!(
                "{}={value:?} is not a reduction; use dpor (the default) or off",
                env::REDUCTION
            ),
        })
    }
}

/// The search algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StrategyKind {
    /// Every decision picks a runnable thread uniformly at random, from a seed per execution.
    /// Executions run in parallel.
    Random,
    /// Probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010): random thread
    /// priorities with `depth - 1` priority change points per execution; finds a bug of depth
    /// `d` with a probability bounded below. Executions run in parallel, in epochs of doubling
    /// size that learn the length of an execution from the epochs before.
    Pct {
        /// The bug depth `d` (at least 1; 3 by default).
        depth: u32,
    },
    /// Depth-first search of every schedule, optionally only those with at most
    /// `max_preemptions` preemptions (CHESS-style bounding: every bug reachable within the
    /// bound is found). With the default [`Reduction::Dpor`] it runs one schedule per class
    /// of equivalent schedules instead of each one; with [`Reduction::Off`], every schedule
    /// exactly once. A thread that repeats a spin (`yield_now`, `hint::spin_loop`, a failed
    /// `try_lock`) with nothing changed since it last did waits until another thread changes
    /// what it observed, so a correct spin-wait ends (fair scheduling of spin loops, which
    /// the report names; `Builder::fair_spins` turns it off).
    /// There is no cap on executions unless `Builder::iterations`
    /// or `Builder::max_time` sets one;
    /// `Report::exhausted` says whether the search finished.
    Dfs {
        /// The preemption bound (`None`: every schedule).
        max_preemptions: Option<u32>,
    },
}

/// A search algorithm without its parameters, by the name schedule files and reports give
/// it: the strategies of [`StrategyKind`], and the two that follow a recorded schedule.
/// What a run does with one (how it drives it, how it is made) is its row in the strategy
/// layer's list (`strategy/listing.rs`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct StrategyName(&'static str);

impl StrategyName {
    /// [`StrategyKind::Random`].
    pub const RANDOM: StrategyName = StrategyName("random");
    /// [`StrategyKind::Pct`].
    pub const PCT: StrategyName = StrategyName("pct");
    /// [`StrategyKind::Dfs`].
    pub const DFS: StrategyName = StrategyName("dfs");
    /// Replays a schedule decision for decision.
    pub const REPLAY: StrategyName = StrategyName("replay");
    /// Follows a schedule's prefix, then picks at random.
    pub const PREFIX: StrategyName = StrategyName("prefix");

    /// The name, as written in schedule files and reports.
    pub fn name(self) -> &'static str {
        self.0
    }
}

impl std::fmt::Debug for StrategyName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StrategyName({:?})", self.0)
    }
}

impl StrategyKind {
    /// Its name (see [`StrategyName`]).
    pub const fn name(&self) -> StrategyName {
        match self {
            StrategyKind::Random => StrategyName::RANDOM,
            StrategyKind::Pct { .. } => StrategyName::PCT,
            StrategyKind::Dfs { .. } => StrategyName::DFS,
        }
    }

    /// The preemption bound, for a strategy that has one.
    pub const fn max_preemptions(&self) -> Option<u32> {
        match self {
            StrategyKind::Dfs { max_preemptions } => *max_preemptions,
            _ => None,
        }
    }

    /// Every strategy a user chooses, by name, with its parameters read from their own
    /// variables.
    const FROM_ENV: [(StrategyName, fn() -> StrategyKind); 3] = [
        (StrategyName::RANDOM, || StrategyKind::Random),
        (StrategyName::PCT, || StrategyKind::Pct {
            depth: env_u32(env::PCT_DEPTH).unwrap_or(DEFAULT_PCT_DEPTH),
        }),
        (StrategyName::DFS, || StrategyKind::Dfs {
            max_preemptions: env_bound(),
        }),
    ];

    /// The strategy named by the environment (see [`env`](mod@env)), `None` if it names none.
    pub fn from_env() -> Option<Self> {
        let value = std::env::var(env::STRATEGY).ok()?;
        let named = Self::FROM_ENV
            .iter()
            .find(|(n, _)| n.name() == value.trim());
        let Some((_, from_env)) = named else {
            let choices: Vec<&str> = Self::FROM_ENV.iter().map(|(n, _)| n.name()).collect();
            panic!(
                "{}={value:?} is not a strategy; the strategies are: {}",
                env::STRATEGY,
                choices.join(", ")
            )
        };
        Some(from_env())
    }
}

/// How spinning threads are held back (`runtime/spins.rs` says how each works).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpinRule {
    /// None is (random, PCT, DFS with `fair_spins(false)`).
    Off,
    /// A thread that repeats a spin waits for a change (see the module's notes).
    Repeats,
}

#[cfg(test)]
mod tests {
    use super::{Clock, StrategyKind};

    #[test]
    fn every_clock_name_reads_back() {
        for clock in Clock::ALL {
            assert_eq!(Clock::from_name(clock.name()), Some(clock));
        }
        assert_eq!(Clock::from_name("Paused"), None);
        assert_eq!(Clock::default(), Clock::Loaded);
    }

    #[test]
    fn every_strategy_the_environment_names_has_that_name() {
        for (name, from_env) in StrategyKind::FROM_ENV {
            assert_eq!(from_env().name(), name);
        }
    }
}
