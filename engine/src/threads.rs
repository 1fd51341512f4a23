//! The interface of model threads and tasks: what the facade's `thread`, `future` and Tokio
//! modules use of the engine besides [`primitive`](crate::primitive).
//!
//! - **Starting a thread**: [`register_thread`] gives it an id in the running execution,
//!   described by a [`ThreadSpec`] (name, stack, where it was spawned); [`spawn`] starts a
//!   detached one and [`spawn_scoped`] one of a `std::thread::Scope`, each running its body
//!   through [`run_thread_body`], which records its panic as the thread's. While a scope or
//!   an execution ends, [`draining`] says threads are being joined; [`scope_panicked`]
//!   reports a scoped thread's panic as `std::thread::scope` does.
//! - **Where the caller is**: [`ids`] and [`try_ids`] (execution and thread),
//!   [`same_execution`] (a handle of another execution is a `Misuse`), [`in_model_thread`],
//!   [`thread_ends`] (the thread exits: its thread-locals are being dropped),
//!   [`thread_panicking`]; [`locals`] keeps a model thread's thread-locals.
//! - **Futures**: a future is polled by a model thread ([`wakes`]: its wake token and
//!   `Waker`, its wait between polls, a task's abort, detach and end); what the executor
//!   knows of the futures it polls is its own, in the thread's [`Notes`], which reports
//!   read (the futures still pending, where one waits, which one a panic escaped); a task's
//!   panic is kept for its handle ([`held`]); timers and the virtual clock are [`timers`].
//!   [`spinning`] marks a poll loop that spins.
//! - **Outside a model**: [`GATE`] and [`watched`] (an OS thread's ambient execution).
//! - **Panics**: [`is_abort`] (the engine's own unwinding, never caught), [`message_of`] and
//!   [`text_of`] (a payload's text), [`is_reentry`] (a call back into the engine from
//!   inside it).

pub use crate::report::TaskInfo;
pub use crate::runtime::wakes::Notes;
pub use crate::runtime::{
    GATE, ThreadSpec, draining, ids, in_model_thread, is_abort, is_reentry, message_of,
    register_thread, run_thread_body, same_execution, scope_panicked, spawn, spawn_scoped,
    spinning, text_of, thread_ends, thread_panicking, try_ids, watched,
};
pub use crate::runtime::{held, locals, timers, wakes};
