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
//! What is searched are the interleavings of the *modelled* operations: plain memory behind
//! a raw pointer or a `Box` published through an atomic, std's own primitives, and I/O are
//! not interleaved or checked (the README's "What is and is not checked" says more), and an
//! exhausted DFS run's report says its proof is "of the modelled operations".
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

#![forbid(unsafe_code)]

mod config;
mod corpus;
mod driver;
mod hb;
mod memory;
mod op;
mod report;
mod runtime;
mod schedule;
mod strategy;
mod test_support;

pub mod cell;
pub mod hint;
pub mod sync;
pub mod thread;
pub mod time;

pub use config::{
    Builder, DEFAULT_PCT_DEPTH, DEFAULT_STACK_SIZE, Reduction, StrategyKind, Substrate, check, env,
    explore, model, replay,
};
pub use report::{
    Failure, FailureKind, Holder, Limit, RecentStep, Report, SourceLocation, ThreadInfo,
    ThreadReport,
};
pub use schedule::{Build, Decision, Schedule, ScheduleError, Signature};

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
}
