//! The engine under [interleave-test](https://docs.rs/interleave-test): what runs a model's
//! threads one at a time and searches their interleavings. Use `interleave-test`; this crate
//! is its lower layer, and knows nothing of std's or Tokio's API shapes.
//!
//! Its modules, from the bottom: [`json`] (the crate family's JSON), [`settings`] (what a
//! run is configured with), [`op`] (operations and threads), [`hb`] (happens-before),
//! [`memory`] (the atomics' memory model), [`schedule`] (the recorded decisions and their
//! file), [`strategy`] (the search), [`report`] (failures and reports) and `runtime` (the
//! scheduler, the substrates that run model threads, the object table and waits).
//!
//! # Its interface
//!
//! `runtime` is private: the layers above reach it through three modules, each its
//! documentation a contract.
//! - [`primitive`]: what a primitive is written against (the facade's `Mutex`, or one a
//!   user writes).
//! - [`threads`]: model threads and tasks (the facade's `thread`, `future`, Tokio).
//! - [`run`]: executions (the facade's entry points and driver).

#![forbid(unsafe_code)]
// The engine's documentation is read with its private items (`cargo doc
// --document-private-items`): a public item may point at the private code it works with.
#![allow(rustdoc::private_intra_doc_links)]

pub mod hb;
pub mod json;
pub mod memory;
pub mod op;
pub mod primitive;
pub mod report;
pub mod run;
mod runtime;
pub mod schedule;
pub mod settings;
pub mod strategy;
pub mod threads;
