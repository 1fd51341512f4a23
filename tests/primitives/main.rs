//! The modelled primitives and what the runtime does with them (threads, locks, channels,
//! atomics and the memory model, `Arc`, statics, thread-locals, time, panics, deadlocks,
//! starting over, stacks, the substrates), one module per subject, in one test binary:
//! linking a binary per file cost more of CI's time than running the tests. Models shared
//! with other binaries are in `tests/common/`.
//!
//! Files that need a process to themselves stay binaries of their own (`tests/*.rs`): those
//! that run their own test binary again as a child process, or cargo (`abort_report`,
//! `cli`, `macro_attr`, `replay_e2e`, `replay_loop`, `rust_version`, `std_switch`,
//! `watchdog`), that set the process's panic hook (`panic_hooks`), or that depend on what
//! the whole process did: its threads and memory (`resources`, `soak`) or the threads that
//! failed executions left behind, which past 64 are unwound (`teardown`). A module here
//! that runs a child of this binary (`stacks`) names its test with the module path.

#[path = "../common/mod.rs"]
mod common;

mod arc_drops;
mod arc_leaks;
mod atomic_values;
mod atomics;
mod barrier_once;
mod channel_clocks;
mod correct_models;
mod current;
mod deadlock;
mod futures;
mod futures_interop;
mod futures_local;
mod futures_reports;
mod litmus;
mod livelock;
mod max_steps_pass;
mod misuse;
mod mpsc;
mod outcomes;
mod outside;
mod panics;
mod readme;
mod rwlock;
mod stacks;
mod start_over;
mod start_over_destructors;
mod start_over_dfs;
mod static_arcs;
mod statics;
mod std_allows;
mod substrates;
mod thread_locals;
mod threads;
mod time_and_timeouts;
mod tokio_channel_clocks;
mod tokio_macros;
mod wait_queue;
mod weak_memory;
