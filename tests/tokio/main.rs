//! The Tokio module (`interleave_test_tokio`): each primitive's documented behaviour, time
//! on the virtual clock, runtimes, and the bugs Tokio code has, found by every strategy and
//! replayed. One test binary, one module per subject.

#[path = "../common/mod.rs"]
mod common;

mod bugs;
mod clocks;
mod compat;
mod coop;
mod coop_sync;
mod example;
mod example_select;
mod local_set;
mod locations;
mod mpsc_more;
mod outside;
mod reports;
mod runtime;
mod set_once;
mod statics;
mod support;
mod sync;
mod sync_api;
mod sync_more;
mod sync_parity;
mod sync_wakers;
mod task_api;
mod task_errors;
mod task_panics;
mod task_rules;
mod test_body;
mod time;
mod time_pinned;
mod time_wakers;
mod wait_reports;

/// The trace oracle's and the wait rule's tests choose their substrates themselves (as the
/// library's unit tests they were, they ran once): CI's second pass, on OS threads, skips
/// them (`--skip own_substrates::`), since it would only repeat the first.
#[path = "."]
mod own_substrates {
    mod dpor_oracle;
    mod wait_rule;
}
