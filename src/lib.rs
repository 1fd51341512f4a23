//! Deterministic exploration of thread interleavings.
//!
//! A test writes a **model**: a closure that creates its state, spawns threads with
//! [`thread`], synchronizes with [`sync`], and asserts. The explorer runs the model many
//! times; in each **execution** exactly one model thread runs at a time, and before every
//! visible operation (a **switch point**) a **strategy** decides which thread goes next. It
//! also decides what the memory model and std leave open: which store an atomic load reads
//! (atomics follow their orderings, as RC11 allows), whether a wait wakes spuriously or
//! times out early, which waiter `notify_one` wakes. A panic in any thread, a deadlock, a
//! livelock, a data race on a [`cell::UnsafeCell`] or a leaked [`sync::Arc`] comes back as
//! a [`Failure`] value carrying the exact [`Schedule`], which serializes to JSON and replays
//! decision for decision.
//!
//! ```
//! use interleave_test::sync::atomic::{AtomicUsize, Ordering};
//! use interleave_test::sync::Arc;
//! use interleave_test::{thread, Builder, FailureKind};
//!
//! let lost_update = || {
//!     let hits = Arc::new(AtomicUsize::new(0));
//!     let workers: Vec<_> = (0..2)
//!         .map(|_| {
//!             let hits = Arc::clone(&hits);
//!             thread::spawn(move || {
//!                 let seen = hits.load(Ordering::SeqCst);
//!                 hits.store(seen + 1, Ordering::SeqCst);
//!             })
//!         })
//!         .collect();
//!     for w in workers {
//!         w.join().unwrap();
//!     }
//!     assert_eq!(hits.load(Ordering::SeqCst), 2, "an update was lost");
//! };
//! let failure = Builder::new().seed(1).check(lost_update).unwrap_err();
//! assert_eq!(failure.kind(), FailureKind::Panic);
//! // The schedule replays the same failure, through JSON text.
//! let schedule = interleave_test::Schedule::from_json(&failure.schedule().to_json()).unwrap();
//! assert_eq!(Builder::new().replay(lost_update, &schedule).unwrap_err(), failure);
//! ```
//!
//! # In a test suite
//!
//! [`macro@interleave`] makes a function a test whose body is the model; its arguments
//! choose the strategy and its limits. [`model`] is loom's `model`: an exhaustive DFS search
//! (with partial-order reduction) that panics with the report of a failure, or when it
//! could not finish.
//!
//! ```
//! use interleave_test::interleave;
//! use interleave_test::sync::{Arc, Mutex};
//! use interleave_test::thread;
//!
//! #[interleave(strategy = "dfs")]
//! fn both_pushes_land() {
//!     let log = Arc::new(Mutex::new(Vec::new()));
//!     let other = Arc::clone(&log);
//!     let t = thread::spawn(move || other.lock().unwrap().push(1));
//!     log.lock().unwrap().push(2);
//!     t.join().unwrap();
//!     assert_eq!(log.lock().unwrap().len(), 2);
//! }
//! # fn main() {}
//! ```
//!
//! # Your own code, under a `cfg` switch
//!
//! Code under test keeps std in production and takes the modelled primitives under
//! `--cfg interleave` (run the model tests with `RUSTFLAGS="--cfg interleave" cargo test
//! --release`; declare the cfg with `check-cfg = ['cfg(interleave)']` in `[lints.rust]`).
//! The companion crate `interleave-std` is that switch, ready made: write the code against
//! `interleave_std::{sync, thread, cell::UnsafeCell, ...}` once, and it is std's in
//! production (interleave-test not even compiled) and the models under the cfg, with the
//! same auto traits. Without it, the switch is a module of your own:
//!
//! ```
//! #[cfg(interleave)]
//! pub(crate) use interleave_test::{sync::{atomic, Arc, Condvar, Mutex}, thread};
//! #[cfg(not(interleave))]
//! pub(crate) use std::{sync::{atomic, Arc, Condvar, Mutex}, thread};
//! # fn main() {}
//! ```
//!
//! Under the switch, code that runs outside a model (a plain `#[test]`, any OS thread that
//! runs no model thread) still works: each such OS thread is the one thread of an execution
//! of its own, where every decision takes its first option and time moves only when the
//! thread waits. A wait only another thread could end panics as a deadlock, and what needs
//! a second thread (spawning a model thread, a primitive other than an atomic shared with
//! another OS thread) is refused: gate such tests with `#[cfg(not(interleave))]`.
//!
//! # When a test fails
//!
//! The failure is stored in the crate's regression corpus,
//! `interleave-regressions/<test path>/<id>.json`, with its signature (kind, thread, message
//! without line numbers). Every later run of the test judges its stored schedules first:
//! **still fails**, **fixed**, or **diverged** (the test changed beyond recognition). The
//! failure prints two commands that replay it, typed at the crate root:
//! `cargo interleave replay <file>` (the `cargo-interleave` binary of this crate) and
//! `INTERLEAVE_REPLAY=<file> cargo test ... -- --exact <test>`. A [`Schedule`] also replays
//! in code, with [`Builder::replay`].
//!
//! # Settings
//!
//! [`Builder`] sets everything in code; the environment variables of [`env`](mod@env)
//! (seed, iterations, time budget, strategy, substrate, ...) set them for every test of a
//! run, and override an `#[interleave]` attribute's values.
//!
//! # What is and is not checked
//!
//! What is searched are the interleavings of the *modelled* operations: the crate's
//! [`thread`], [`sync`] (atomics under RC11, which forbids load buffering),
//! [`cell::UnsafeCell`], `thread_local!` and [`time`], and the values a model asks for
//! with [`choose`](fn@choose) and [`choose_from`] or draws from [`rand`](mod@rand). Plain memory behind a raw pointer or
//! a `Box` published through an atomic, std's own primitives, and I/O are not interleaved
//! or checked (the README's "What is and is not checked" says more), and an exhausted DFS
//! run's report says its proof is "of the modelled operations".

#![forbid(unsafe_code)]

mod choose;
mod config;
mod corpus;
mod driver;
mod summary;
mod test_support;

// The engine's modules, named as this crate's own (`crate::primitive`, `crate::run`).
use interleave_engine::{primitive, report, run, schedule, settings, strategy, threads};

pub mod cell;
pub mod current;
pub mod future;
pub mod hint;
pub mod rand;
pub mod sync;
pub mod thread;
pub mod time;

pub use choose::{Choices, DFS_CHOOSE_LIMIT, choose, choose_from};
pub use config::{Builder, check, check_async, explore, explore_async, replay};
pub use report::{
    Failure, Holder, RecentStep, SourceLocation, TaskInfo, ThreadInfo, ThreadReport, TimerFiring,
};
pub use schedule::{Build, Decision, FailureKind, Schedule, ScheduleError, Signature};
pub use settings::{
    Clock, DEFAULT_PCT_DEPTH, DEFAULT_STACK_SIZE, Reduction, StrategyKind, Substrate, env,
};
pub use summary::{Limit, Report};
pub use test_support::{model, model_async};

// rustdoc puts these lines before the macro's own documentation; the empty last line keeps
// them a paragraph of their own.
/// The `#[interleave]` test attribute, from the `interleave-test-macros` crate.
///
pub use interleave_test_macros::interleave;

#[doc(hidden)]
pub mod protocol;

/// What `#[interleave]` expands to. Not public API: it may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use crate::test_support::{TestSpec, run_test};

    /// Runs `f` while the calling model thread holds the lock of its execution's state, as
    /// the runtime runs a destructor or a waker under it; for the crate's own tests of a
    /// callback into the runtime from there, and of a lock held too long.
    #[track_caller]
    pub fn holding_state<R>(f: impl FnOnce() -> R) -> R {
        crate::run::holding_state(f)
    }

    /// The body of an `async fn` test: `future` run to its end by `future::block_on` on
    /// the model's main thread, with the runtime its arguments ask for (`flavor =
    /// "multi_thread"`, `worker_threads`, `start_paused`, `flavor = "local"`) made by the
    /// runtime layered over the crate when the body first needs one, as `#[tokio::test]`
    /// runs it (`future::test_runtime`).
    #[track_caller]
    pub fn block_on_test<F: core::future::Future>(
        multi_thread: bool,
        workers: Option<usize>,
        start_paused: bool,
        local: bool,
        future: F,
    ) -> F::Output {
        let args = crate::future::RuntimeArgs::new(multi_thread, workers, start_paused, local);
        crate::future::block_on_test(args, future, core::panic::Location::caller())
    }

    /// `future`, whose output the compiler now knows: an `async` test body's `?` needs it.
    pub fn returning<T, F: core::future::Future<Output = T>>(future: F) -> F {
        future
    }

    /// What a test function may return: `()`, or `Result<(), E>` whose `Err` fails the
    /// execution as a panic with `Error: {e:?}` (the standard test harness's words).
    #[diagnostic::on_unimplemented(
        message = "an #[interleave] test returns `()` or `Result<(), E>` with `E: Debug`, \
                   not `{Self}`",
        label = "the test's return type"
    )]
    pub trait TestOutcome {
        /// Panics if the outcome is a failure.
        #[track_caller]
        fn check(self);
    }

    impl TestOutcome for () {
        fn check(self) {}
    }

    impl<E: core::fmt::Debug> TestOutcome for Result<(), E> {
        #[track_caller]
        fn check(self) {
            if let Err(error) = self {
                panic!("Error: {error:?}");
            }
        }
    }

    /// The `main` of a `#[tokio::main]` program built with `interleave_test_tokio`: it is
    /// not a model, so it stops with what to run instead.
    #[track_caller]
    pub fn tokio_main() -> ! {
        panic!(
            "this program's `#[tokio::main]` is interleave_test_tokio's (the `cfg` switch is \
             on): a program's main is not a model and does not run under it. Run the model \
             tests (`#[tokio::test]`, `#[interleave]`) with the switch, and the program \
             without it"
        )
    }

    /// Checks the value a test function returned (see [`TestOutcome`]).
    #[track_caller]
    pub fn test_outcome<T: TestOutcome>(outcome: T) {
        outcome.check();
    }
}
