//! Tokio-shaped async code under the search, with Tokio's names and paths: [`spawn`],
//! [`task`], [`sync`], [`time`] on the virtual clock, [`runtime`], and the macros
//! `select!`, `join!`, `try_join!`, [`pin!`](crate::tokio::pin) and
//! [`task_local!`](crate::tokio::task_local).
//!
//! A crate written against `tokio` switches to this module with one `cfg` block (see the
//! README):
//!
//! ```
//! #[cfg(interleave)]
//! use interleave_test::tokio;
//! # use interleave_test::tokio as _tokio_in_docs;
//! ```
//!
//! Tasks are model tasks of [`crate::future`]: every strategy interleaves them with threads
//! and other tasks, and reduction, weak memory, data races, leaks and replay apply as
//! there. Timers fire on the execution's virtual clock, at their deadline, either when
//! nothing else can act or while others still could (a decision), so timeout races are
//! explored. `select!`'s start branch is a decision, so a bug that needs one branch
//! order is found and replays; the losing branches are dropped, so cancel-safety bugs
//! (a message lost when another branch wins) are found.
//!
//! # What is not here
//! I/O (`net`, `fs`, `io`, `process`, `signal`): model those with channels. Each type's
//! docs say where it differs from Tokio's.

mod local_runtime;
mod macros;
pub mod runtime;
pub mod sync;
pub mod task;
mod test_body;
pub mod time;
/// `#[tokio::test]`: the [`#[interleave]`](crate::interleave) attribute under Tokio's name,
/// so a test written `#[tokio::test]` (with `flavor`, `worker_threads`, `start_paused`)
/// becomes a model test under the `cfg` switch. Its other arguments are `#[interleave]`'s
/// (`iterations`, `strategy`, ...); Tokio's `crate` and `unhandled_panic` are not taken
/// (`crate` names the path of `interleave_test` here).
pub use interleave_test_macros::interleave as test;
/// `#[tokio::main]` under the `cfg` switch: a program's `main` is not a model, so the body
/// is type-checked but not run, and `main` panics saying to run the model tests instead
/// (so a binary crate that switches `tokio` still compiles).
pub use interleave_test_macros::main;
#[doc(hidden)]
pub use macros::__private;
pub use macros::{join, select, try_join};

pub use task::spawn;

/// Pins values on the stack, as `tokio::pin!`: `pin!(a, b);` shadows each variable with a
/// pinned reference to it, and `pin! { let a = expr; }` declares and pins.
///
/// ```
/// use interleave_test::tokio::{self, time};
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
