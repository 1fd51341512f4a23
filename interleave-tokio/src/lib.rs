//! [Tokio] in a normal build, and [interleave-test]'s model of it when the build has
//! `--cfg interleave`: a crate written against `tokio` switches with one line of its
//! `Cargo.toml` and no change to its code.
//!
//! ```toml
//! [dependencies]
//! tokio = { package = "interleave-tokio", version = "0.1", features = ["full"] }
//!
//! [lints.rust]
//! unexpected_cfgs = { level = "warn", check-cfg = ['cfg(interleave)'] }
//! ```
//!
//! Every `use tokio::...`, `tokio::spawn`, `#[tokio::test]`, `tokio::select!` of the crate
//! then names Tokio itself in a normal build (this crate re-exports all of it, with the
//! features given), and under `RUSTFLAGS="--cfg interleave" cargo test` names
//! `interleave_test_tokio`, the model of Tokio: each `#[tokio::test]` becomes a model test whose interleavings
//! are searched, and the runtime, tasks, `sync` and `time` are the model's (time on the
//! execution's virtual clock). The crate needs no dependency on `interleave-test` or
//! `interleave-test-tokio` of its own.
//!
//! # What stays Tokio's under the switch
//! The model has no I/O: `io`, `net`, `fs`, `process` and `signal` are Tokio's own under
//! `--cfg interleave` too (with the features given), so code that uses them compiles, but
//! the model neither interleaves nor drives them: a test that needs them at run time is
//! gated with `#[cfg(not(interleave))]`, or its I/O replaced by a channel.
//!
//! # State kept outside Tokio's types
//! State a program keeps in `std` types (a `std::sync::Mutex` for a short critical section,
//! a `std::sync::atomic` counter) is invisible to the model: it interleaves only the
//! modelled operations. Route it through `interleave-std` (`interleave_std::sync::Mutex`,
//! its atomics), which switches the same way; otherwise a search may prove a program whose
//! only race is on that state. An explicit `tokio::task::yield_now` next to such an access
//! orders it against the other tasks' operations.
//!
//! # A renamed dependency
//! The macros find the model at `::tokio::__interleave`, as Tokio's own macros assume the
//! name `tokio`; a crate that names this dependency otherwise passes
//! `crate = "<its name>::__interleave"` to `#[tokio::test]`.
//!
//! [Tokio]: https://docs.rs/tokio
//! [interleave-test]: https://docs.rs/interleave-test

#![forbid(unsafe_code)]

#[cfg(not(interleave))]
pub use tokio::*;

#[cfg(interleave)]
pub use interleave_test_tokio::*;

/// The macros, from the switch's entry points: their expansions name the model through
/// this crate (`::tokio`, and `::tokio::__interleave`, the glob's re-export of
/// `interleave_test`), so the user's crate needs no other dependency. They take the place
/// of the glob's `test`, `main`, `select!`, `join!` and `try_join!`.
#[cfg(interleave)]
pub use interleave_test_tokio::__switch::{join, main, select, test, try_join};

#[cfg(all(interleave, feature = "fs"))]
pub use tokio::fs;
#[cfg(interleave)]
pub use tokio::io;
#[cfg(all(interleave, feature = "net"))]
pub use tokio::net;
#[cfg(all(interleave, feature = "process"))]
pub use tokio::process;
#[cfg(all(interleave, feature = "signal"))]
pub use tokio::signal;
