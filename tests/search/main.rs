//! The searches and what they give back (random, PCT, DFS, partial-order reduction and its
//! soundness, spin loops, distinct schedules, reports and their numbering, replay, the
//! schedule file format, the regression corpus), one module per subject, in one test binary:
//! linking a binary per file cost more of CI's time than running the tests. Models shared
//! with other binaries are in `tests/common/`; why some test files stay binaries of their own
//! is in `tests/primitives/main.rs`.
//!
//! What a module here runs or prints names it as this binary does: a child process of this
//! binary runs `dpor::child`, and a replay command says `--test search -- --exact
//! dfs::<test>`.

#[path = "../common/mod.rs"]
mod common;

mod choose;
mod corpus;
mod dfs;
mod distinct_schedules;
mod dpor;
mod dpor_soundness;
mod early_endings;
mod one_schedule;
mod pct;
mod replay;
mod report_numbering;
mod spin_fairness;
mod strategies;
mod unseen_state;

/// The trace oracle's tests choose their substrates themselves (as the library's unit tests
/// they were, they ran once): CI's second pass, on OS threads, skips them (`--skip
/// own_substrates::`), since it would only repeat the first.
#[path = "."]
mod own_substrates {
    mod dpor_oracle;
    mod dpor_oracle_async;
}
