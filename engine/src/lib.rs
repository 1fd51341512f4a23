//! The engine under [interleave-test](https://docs.rs/interleave-test): what runs a model's
//! threads one at a time and searches their interleavings. Use `interleave-test`; this crate
//! is its lower layer, and knows nothing of std's or Tokio's API shapes.
//!
//! Its modules, from the bottom: [`json`] (the crate family's JSON), [`settings`] (what a
//! run is configured with), [`op`] (operations and threads), [`hb`] (happens-before),
//! [`memory`] (the atomics' memory model), [`schedule`] (the recorded decisions and their
//! file), [`strategy`] (the search), [`report`] (failures and reports) and [`runtime`] (the
//! scheduler, the substrates that run model threads, the object table and waits).

//! # What a primitive uses
//!
//! A primitive (the facade's `Mutex`, or one a user writes: `tests/own_primitive.rs` is a
//! counting semaphore written outside the crates) uses these, each documented where it is
//! declared; the rest of the modules serve the facade's entry points and the driver.
//!
//! - **Its operations**, declared once each as a constant: `OpKind::new(&Operation::new(name)
//!   .access(role).waits(words))` ([`op::Operation`]). The name is what schedules record and
//!   replay compares: one name, one declaration. The [`op::Role`] is what the operation does
//!   to its object, for happens-before, the memory model and the reduction:
//!   `Acquire`/`Release` only for a lock one thread holds at a time (the search takes it
//!   that a release is never overtaken by the next acquire; an `Acquire` that could take
//!   effect while another thread holds the object, as its `holders` say, is a `Misuse`),
//!   `Write` for anything else that changes the object (a counter's update), a read-like
//!   role for what only looks.
//!   `waits(words)`: the operation may be unable to take effect; a blocked thread is
//!   reported as "waits to {words} {kind} #{n}".
//! - **Its object**: an [`runtime::ObjectHandle`] in the primitive (a `const fn`, named by
//!   its kind for reports), and, if one of its operations waits, its state in each
//!   execution as an [`runtime::ObjectState`]: `enabled` says when a waiting operation can
//!   take effect (the scheduler never chooses it otherwise), `holders` who holds the object
//!   (deadlock reports).
//! - **A switch point** before each operation acts: [`runtime::switch_point`], which
//!   registers the object on first use and returns its id.
//! - **Its state**: [`runtime::with_state`] gives an [`runtime::Access`] (the object's
//!   state, waking, declaring accesses); it never switches threads, and the closure must
//!   not call back into the engine (that is a `Misuse`).
//! - **Waiting**: try under `with_state`, and if it cannot take effect,
//!   [`runtime::block`] with `Waits::To(OP.waits_to())` and the object, in a loop; a thread
//!   that changes what a waiter waits for wakes it (`Access::wake_all`). A wait nobody ends
//!   is a deadlock, reported in the operation's words.
//! - **A decision of data**: [`runtime::data::choose`], [`runtime::data::draw`].
//! - **State of its own** per model thread: [`runtime::thread_slot`].
//! - **Several executions** (a `static`, or one made outside the model closure): each must
//!   start from the state the primitive was made with. If the object table holds all of
//!   it, its handle says so ([`runtime::ObjectHandle::restorable`]) and the engine
//!   registers the object afresh in each execution; state it keeps of its own goes in a
//!   [`runtime::PerExecution`], one per execution. Otherwise a second execution's use is a
//!   `Misuse` that says what to write instead.

#![forbid(unsafe_code)]
// The engine's documentation is read with its private items (`cargo doc
// --document-private-items`): a public item may point at the private code it works with.
#![allow(rustdoc::private_intra_doc_links)]

pub mod hb;
pub mod json;
pub mod memory;
pub mod op;
pub mod report;
pub mod runtime;
pub mod schedule;
pub mod settings;
pub mod strategy;
