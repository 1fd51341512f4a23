//! Tokio-shaped async code under the search of [interleave-test], with Tokio's names and
//! paths: [`spawn`], [`task`], [`sync`], [`time`] on the virtual clock, [`runtime`], and
//! the macros `#[test]`, `select!`, `join!`, `try_join!`, [`pin!`](crate::pin) and
//! [`task_local!`](crate::task_local).
//!
//! A test crate written against `tokio` switches to it with one `use` line (or with the
//! switch crate `interleave-tokio`, one line of `Cargo.toml`; see the README):
//!
//! ```
//! use interleave_test_tokio as tokio;
//!
//! interleave_test::check_async(|| async {
//!     let task = tokio::spawn(async { 1 + 1 });
//!     assert_eq!(task.await.unwrap(), 2);
//! })
//! .unwrap();
//! ```
//!
//! Tasks are model tasks of [`interleave_test::future`]: every strategy interleaves them
//! with threads and other tasks, and reduction, weak memory, data races, leaks and replay
//! apply as there. Timers fire on the execution's virtual clock, at their deadline, either
//! when nothing else can act or while others still could (a decision), so timeout races
//! are explored. `select!`'s start branch is a decision, so a bug that needs one branch
//! order is found and replays; the losing branches are dropped, so cancel-safety bugs (a
//! message lost when another branch wins) are found.
//!
//! This crate is a layer over `interleave-test` and uses only its public interface (the
//! items its `future` module lists "for a runtime layered over this crate") and the
//! engine's (`interleave_engine::primitive`, `threads`): another runtime could be modelled
//! the same way.
//!
//! # What is not here
//! I/O (`net`, `fs`, `io`, `process`, `signal`): model those with channels. Each type's
//! docs say where it differs from Tokio's.
//!
//! [interleave-test]: https://docs.rs/interleave-test

#![forbid(unsafe_code)]

mod local_runtime;
mod macros;
pub mod runtime;
pub mod sync;
pub mod task;
mod test_body;
pub mod time;
/// `#[tokio::main]`: a program's `main` is not a model, so the body is type-checked but
/// not run, and `main` panics saying to run the model tests instead (so a binary crate
/// that switches `tokio` still compiles).
pub use interleave_test_macros::main;
/// `#[tokio::test]`: the [`#[interleave]`](interleave_test::interleave) attribute under
/// Tokio's name, so a test written `#[tokio::test]` (with `flavor`, `worker_threads`,
/// `start_paused`) becomes a model test. Its other arguments are `#[interleave]`'s
/// (`iterations`, `strategy`, ...); Tokio's `crate` and `unhandled_panic` are not taken
/// (`crate` names the path of `interleave_test` here). Its expansion finds
/// `interleave_test` through this crate, which needs no dependency of its own.
pub use interleave_test_macros::tokio_test as test;
#[doc(hidden)]
pub use macros::__private;
pub use macros::{join, select, try_join};

/// Where the macros' expansions find `interleave_test`, through this crate (or through the
/// switch crate, which re-exports it). Not public API.
#[doc(hidden)]
pub use interleave_test as __interleave;

/// The macros of the Tokio switch crate (`interleave-tokio`), whose expansions find this
/// crate at `::tokio`, through the switch. Not public API.
#[doc(hidden)]
pub mod __switch {
    pub use interleave_test_macros::{
        switch_join as join, switch_main as main, switch_select as select, switch_test as test,
        switch_try_join as try_join,
    };
}

pub use task::spawn;

/// Pins values on the stack, as `tokio::pin!`: `pin!(a, b);` shadows each variable with a
/// pinned reference to it, and `pin! { let a = expr; }` declares and pins.
///
/// ```
/// use interleave_test_tokio::{self as tokio, time};
/// use std::time::Duration;
///
/// interleave_test::check_async(|| async {
///     let sleep = time::sleep(Duration::from_millis(5));
///     tokio::pin!(sleep);
///     sleep.as_mut().await;
///     assert!(sleep.is_elapsed());
/// })
/// .unwrap();
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! __tokio_pin {
    ($($x:ident),* $(,)?) => {
        $( let mut $x = ::core::pin::pin!($x); )*
    };
    ($(let $x:ident = $init:expr;)*) => {
        $( let $x = $init; let mut $x = ::core::pin::pin!($x); )*
    };
}

#[doc(inline)]
pub use crate::__tokio_pin as pin;
#[doc(inline)]
pub use crate::__tokio_task_local as task_local;
