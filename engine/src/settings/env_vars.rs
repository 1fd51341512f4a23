//! The environment variables the crate reads, and how it reads them: the only code that
//! looks at the environment.

use std::path::PathBuf;

/// Environment variables read by `Builder::new`. A set variable
/// overrides the default; a value set on the builder in code overrides the variable.
///
/// | variable | meaning | default |
/// |---|---|---|
/// | `INTERLEAVE_SEED` | seed of the random and pct strategies (an unsigned integer) | a fresh random seed |
/// | `INTERLEAVE_ITERATIONS` | executions to run (for `dfs`, a cap); a `random` or `pct` run whose first two executions make no decision ends there, its one schedule run | 1000 for `random` and `pct`, no cap for `dfs` |
/// | `INTERLEAVE_MAX_TIME` | wall-clock budget of an exploration, in seconds (decimals allowed) | none |
/// | `INTERLEAVE_PROGRESS` | `0` turns off the progress line of long `dfs` searches; `1` prints it even when stderr is not a terminal (a line per update) | unset: on a terminal only |
/// | `INTERLEAVE_MAX_STEPS` | switch points before an execution counts as a livelock; one at which a thread alone could run (no decision between threads) counts a tenth | 100000 |
/// | `INTERLEAVE_STRATEGY` | `random`, `pct` or `dfs` | `random` (`model` always uses `dfs`) |
/// | `INTERLEAVE_PCT_DEPTH` | bug depth of `pct` (at least 1) | 3 |
/// | `INTERLEAVE_MAX_PREEMPTIONS` | preemption bound of `dfs` (`none`: unbounded) | unbounded |
/// | `INTERLEAVE_REDUCTION` | how `dfs` skips equivalent schedules: `dpor`, or `off` to run every schedule (see `Reduction`) | `dpor` |
/// | `INTERLEAVE_PARALLELISM` | executions run at once (random and pct) | the number of cores |
/// | `INTERLEAVE_SUBSTRATE` | what runs model threads: `coroutines` or `threads` (see `Substrate`) | `coroutines` |
/// | `INTERLEAVE_CLOCK` | how the virtual clock moves: `loaded` (a timer may fire while others could act) or `paused` (only when every thread waits; see `Clock`) | `loaded` |
/// | `INTERLEAVE_STACK_SIZE` | stack size in bytes of a model thread that does not set one | 2097152 (2 MiB) |
/// | `INTERLEAVE_WATCHDOG` | seconds a model thread may run without reaching a switch point before the process exits with a report (`0`: never) | 10 |
/// | `INTERLEAVE_REPLAY` | a schedule file: the `#[interleave]` test (or test calling `model`) it was recorded for replays only it, other tests explore as usual; a relative path is taken from the shell's directory (`PWD`) | unset |
/// | `INTERLEAVE_PARTIAL` | `1`: a DFS search that a limit stopped passes, in an `#[interleave]` test or in `model` (otherwise it fails: nothing was proved); `0` makes it fail even where the attribute says `partial = true` | unset: the attribute's `partial`, else `0` |
/// | `INTERLEAVE_PROTOCOL` | set by `cargo interleave` with `INTERLEAVE_REPLAY`: the version of the lines it reads from the test | unset |
/// | `INTERLEAVE_SUMMARY` | `1`: every `#[interleave]` test (and test calling `model`) shows its report, even when it passes | `0` |
/// | `INTERLEAVE_REGRESSIONS` | the regression corpus directory of `#[interleave]` tests | `<crate root>/interleave-regressions` |
///
/// For an `#[interleave(...)]` test, a set variable also overrides the attribute's value.
pub mod env {
    /// Seed of the random strategy.
    pub const SEED: &str = "INTERLEAVE_SEED";
    /// Number of executions.
    pub const ITERATIONS: &str = "INTERLEAVE_ITERATIONS";
    /// Wall-clock budget in seconds.
    pub const MAX_TIME: &str = "INTERLEAVE_MAX_TIME";
    /// `0` turns the progress line of long DFS searches off; `1` prints it off a terminal too.
    pub const PROGRESS: &str = "INTERLEAVE_PROGRESS";
    /// Switch points per execution before it is reported as a livelock.
    pub const MAX_STEPS: &str = "INTERLEAVE_MAX_STEPS";
    /// Strategy name.
    pub const STRATEGY: &str = "INTERLEAVE_STRATEGY";
    /// Executions run at once.
    pub const PARALLELISM: &str = "INTERLEAVE_PARALLELISM";
    /// Bug depth of the PCT strategy.
    pub(crate) const PCT_DEPTH: &str = "INTERLEAVE_PCT_DEPTH";
    /// Preemption bound of the DFS strategy.
    pub const MAX_PREEMPTIONS: &str = "INTERLEAVE_MAX_PREEMPTIONS";
    /// Partial-order reduction of the DFS strategy: `dpor` or `off`.
    pub(crate) const REDUCTION: &str = "INTERLEAVE_REDUCTION";
    /// A schedule file: `#[interleave]` tests replay only that file.
    pub const REPLAY: &str = "INTERLEAVE_REPLAY";
    /// The version of the protocol `cargo interleave` reads from test binaries (set by the
    /// tool; see ARCHITECTURE.md).
    pub const PROTOCOL: &str = "INTERLEAVE_PROTOCOL";
    /// `1`: an `#[interleave]` DFS search that did not finish passes.
    pub const PARTIAL: &str = "INTERLEAVE_PARTIAL";
    /// `1`: every `#[interleave]` test shows its report, even when it passes.
    pub const SUMMARY: &str = "INTERLEAVE_SUMMARY";
    /// The directory of the regression corpus of `#[interleave]` tests.
    pub const REGRESSIONS: &str = "INTERLEAVE_REGRESSIONS";
    /// What runs model threads: `coroutines` or `threads`.
    pub(crate) const SUBSTRATE: &str = "INTERLEAVE_SUBSTRATE";
    /// How the virtual clock moves: `loaded` or `paused`.
    pub const CLOCK: &str = "INTERLEAVE_CLOCK";
    /// Stack size in bytes of a model thread that does not set its own.
    pub const STACK_SIZE: &str = "INTERLEAVE_STACK_SIZE";
    /// Seconds a model thread may run without reaching a switch point (0: no limit).
    pub(crate) const WATCHDOG: &str = "INTERLEAVE_WATCHDOG";
}

/// How long a model thread may run without reaching a switch point by default.
const DEFAULT_WATCHDOG: std::time::Duration = std::time::Duration::from_secs(10);

/// The watchdog's limit unless a builder sets one: `INTERLEAVE_WATCHDOG` (seconds, 0 for
/// none), else 10 s. Also what watches a runtime built outside a model (`runtime::ambient`).
pub fn watchdog_from_env() -> Option<std::time::Duration> {
    match env_u64(env::WATCHDOG) {
        Some(0) => None,
        Some(secs) => Some(std::time::Duration::from_secs(secs)),
        None => Some(DEFAULT_WATCHDOG),
    }
}

/// An unsigned integer from the environment; panics, saying what to set, if `var` is set
/// to anything else.
pub fn env_u64(var: &str) -> Option<u64> {
    let value = std::env::var(var).ok()?;
    match value.trim().parse() {
        Ok(n) => Some(n),
        Err(_) => panic!(
            "{var}={value:?} is not an unsigned integer; set it to a number such as 42, or unset it"
        ),
    }
}

pub(crate) fn env_u32(var: &str) -> Option<u32> {
    env_u64(var).map(|n| {
        u32::try_from(n)
            .unwrap_or_else(|_| panic!("{var}={n} is too large; use a number below 2^32"))
    })
}

/// The DFS bound from the environment: a number, or `none`/unset for no bound.
pub fn env_bound() -> Option<u32> {
    match std::env::var(env::MAX_PREEMPTIONS).ok()?.trim() {
        "none" | "" => None,
        _ => env_u32(env::MAX_PREEMPTIONS),
    }
}

/// The schedule file named by `INTERLEAVE_REPLAY`, if set. A relative path is taken from
/// the directory of the shell that ran cargo (`PWD`, which cargo passes on), not from the
/// package root where cargo starts test binaries.
pub fn replay_file() -> Option<PathBuf> {
    let path = PathBuf::from(std::env::var_os(env::REPLAY).filter(|v| !v.is_empty())?);
    let shell = std::env::var_os("PWD").map(PathBuf::from);
    Some(match shell {
        Some(dir) if path.is_relative() && dir.is_absolute() => dir.join(path),
        _ => path,
    })
}

/// Whether `cargo interleave` asked the test for protocol lines (`INTERLEAVE_PROTOCOL` set).
pub fn protocol_requested() -> bool {
    std::env::var_os(env::PROTOCOL).is_some()
}

/// Where `#[interleave]` tests of the crate at `manifest_dir` store failing schedules.
pub fn regressions_root(manifest_dir: &str) -> PathBuf {
    match std::env::var_os(env::REGRESSIONS).filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(manifest_dir).join("interleave-regressions"),
    }
}

/// Whether `var` is set, to anything.
pub fn env_is_set(var: &str) -> bool {
    std::env::var_os(var).is_some()
}

/// A duration in seconds (decimals allowed) from the environment.
pub fn env_secs(var: &str) -> Option<std::time::Duration> {
    let value = std::env::var(var).ok()?;
    match value.trim().parse::<f64>() {
        Ok(s) if s > 0.0 && s.is_finite() => Some(std::time::Duration::from_secs_f64(s)),
        _ => panic!(
            "{var}={value:?} is not a positive number of seconds; set it to a number such as \
             60 or 0.5, or unset it"
        ),
    }
}

/// A switch from the environment: `1`/`true`/`on` or `0`/`false`/`off`.
pub fn env_flag(var: &str) -> Option<bool> {
    let value = std::env::var(var).ok()?;
    match value.trim() {
        "1" | "true" | "on" | "yes" => Some(true),
        "0" | "false" | "off" | "no" => Some(false),
        _ => panic!("{var}={value:?} is not a switch; set it to 1 or 0, or unset it"),
    }
}
