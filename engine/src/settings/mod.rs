//! The words every layer shares, at the bottom of the crate: what runs model threads
//! ([`Substrate`]), how a search runs ([`StrategyKind`], [`Reduction`], `SpinRule`), how
//! the virtual clock moves ([`Clock`]), the size
//! constants,
//! and the environment variables with their parsing (the only place the crate reads its
//! settings from the environment). It imports nothing of the crate; `config/` (the entry
//! layer) builds on it, and the runtime and reports name its types directly.

mod env_vars;
mod kinds;

pub use env_vars::env;
pub use env_vars::{
    env_bound, env_flag, env_is_set, env_secs, env_u64, protocol_requested, regressions_root,
    replay_file, watchdog_from_env,
};
pub use kinds::MIN_STACK_SIZE;
pub use kinds::{Clock, DEFAULT_PCT_DEPTH, DEFAULT_STACK_SIZE, Reduction, StrategyKind, Substrate};
pub use kinds::{SpinRule, StrategyName};
