//! The interface a primitive is written against: all that the facade's `sync` primitives
//! (`Mutex`, channels, atomics, once-cells, `Arc`, `UnsafeCell`) and a primitive a user writes
//! (`tests/own_primitive.rs`, a counting semaphore written outside the crates) use of the
//! engine. The rest of the engine serves the facade's entry points, threads, futures and the
//! driver.
//!
//! - **Its operations**, declared once each as a constant: `OpKind::new(&Operation::new(name)
//!   .access(role).waits(words))` ([`Operation`]). The name is what schedules record and
//!   replay compares: one name, one declaration. The [`Role`] is what the operation does to
//!   its object, for happens-before, the memory model and the reduction: `Acquire`/`Release`
//!   only for a lock one thread holds at a time (the search takes it that a release is never
//!   overtaken by the next acquire; an `Acquire` that could take effect while another thread
//!   holds the object, as its `holders` say, is a `Misuse`), `Write` for anything else that
//!   changes the object (a counter's update), a read-like role for what only looks.
//!   `waits(words)`: the operation may be unable to take effect; a blocked thread is
//!   reported as "waits to {words} {kind} #{n}". An [`Effect`] is one of the engine's own
//!   notions (a try that may fail, an atomic access, a condvar's wait).
//! - **Its object**: an [`ObjectHandle`] in the primitive (a `const fn`, named by its kind
//!   for reports), and, if one of its operations waits, its state in each execution as an
//!   [`ObjectState`]: `enabled` says when a waiting operation can take effect (the scheduler
//!   never chooses it otherwise), `holders` who holds the object (deadlock reports).
//! - **A switch point** before each operation acts: [`switch_point`] (or
//!   [`switch_point_then`], which acts at the switch point), which registers the object on
//!   first use and returns its id.
//! - **Its state**: [`with_state`] gives an [`Access`] (the object's state, waking,
//!   declaring accesses, parts of the object for the reduction: [`Key`], a clock a value
//!   carries from one thread to another: [`Published`]); it never switches
//!   threads, and the closure must not call back into the engine (that is a `Misuse`).
//! - **Waiting**: try under `with_state`, and if it cannot take effect, [`block`] with
//!   `Waits::To(OP.waits_to())` and the object, in a loop; a thread that changes what a
//!   waiter waits for wakes it (`Access::wake_all`). A wait nobody ends is a deadlock,
//!   reported in the operation's words. A wait with a timeout may end early, as a decision
//!   ([`early`], [`Early`]); which waiter a notification wakes is one ([`notify_which`]).
//!   A future does not block: its primitive registers its waker in a [`WaitQueue`] (in
//!   the step of the operation that found it must wait) and it returns `Pending`; the
//!   operations that let it go on take its waker out into a [`WakeList`], run once the
//!   primitive's lock is released. The queue tells the engine, so a deadlock report says
//!   what the future waits to do to which object, as it says of a blocked thread.
//! - **Spinning**: a failed try ([`failed_try`]), a yield ([`yield_explicitly`]), a look
//!   that found nothing changed ([`unchanged`]): what fair scheduling of spin loops reads.
//! - **A decision of data**: [`data::choose`], [`data::draw`].
//! - **State of its own** per model thread: [`thread_slot`].
//! - **Several executions** (a `static`, or one made outside the model closure): each must
//!   start from the state the primitive was made with. If the object table holds all of
//!   it, its handle says so ([`ObjectHandle::restorable`]) and the engine registers the
//!   object afresh in each execution ([`first_used_here`] tells the first); state it keeps
//!   of its own goes in a [`PerExecution`], one per execution (an append-only [`Slots`] for
//!   values borrowed as long as the primitive lives). Otherwise a second execution's use is
//!   a `Misuse` that says what to write instead ([`Fresh`]).
//! - **The memory model and leaks**: atomics perform their accesses through [`atomics`],
//!   `UnsafeCell` reports its accesses there too; `Arc` registers its allocations with
//!   [`arcs`]; a once-cell claims what its value holds ([`claims`]).
//! - **Misuse and panics**: [`misuse`] fails the execution with a message that says what to
//!   do; [`poisons`] says whether a lock dropped now is poisoned; [`in_model`] whether the
//!   caller runs inside a model at all.

pub use crate::hb::Key;
pub use crate::op::{Effect, Loc, ObjId, OpKind, Operation, Role, Tid};
pub use crate::runtime::object::Fresh;
pub use crate::runtime::wait_queue::{WaitId, WaitQueue, WakeList};
pub use crate::runtime::{
    Access, Blocked, Early, ObjectHandle, ObjectState, PerExecution, Published, Slots, StateRef,
    Waits, Wake, block, early, failed_try, first_used_here, in_model, misuse, notify_which,
    poisons, switch_point, switch_point_in_model, switch_point_then, unchanged, with_state,
    yield_explicitly,
};
pub use crate::runtime::{arcs, atomics, claims, data, thread_slot};
