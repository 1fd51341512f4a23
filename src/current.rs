//! What the running model thread (or task) can ask about itself: its id and name, a label
//! for reports, how many decisions the execution has made, and its vector clock in the
//! program's happens-before, to assert that one event happens before another.
//!
//! ```
//! use interleave_test::current::{self, happens_before};
//! use interleave_test::sync::{Arc, mpsc};
//! use interleave_test::thread;
//!
//! interleave_test::check(|| {
//!     let (tx, rx) = mpsc::channel();
//!     let t = thread::spawn(move || {
//!         current::set_label("producer");
//!         tx.send(current::clock()).unwrap();
//!     });
//!     let sent = rx.recv().unwrap();
//!     // The send happens before the receive, so before anything after it.
//!     assert!(happens_before(&sent, &current::clock()));
//!     t.join().unwrap();
//! })
//! .unwrap();
//! ```
//!
//! Asking for a clock makes the execution a tracked one: the memory model keeps clocks only
//! where something needs them (an ordering other than `SeqCst`, a fence, an `UnsafeCell`),
//! and an execution that started without them starts over with them, as it does for those
//! operations (under DFS the whole search does).

use std::cmp::Ordering;

use crate::primitive::data;
use crate::thread::ThreadId;

/// The calling model thread's id: its number in the execution, `#n` in reports (a task's
/// too: a spawned task runs on a model thread of its own).
#[track_caller]
pub fn id() -> ThreadId {
    crate::thread::current().id()
}

/// The calling model thread's name (`"main"` for the thread that runs the model, a task's
/// from `future::Builder::name`), if it has one.
#[track_caller]
pub fn name() -> Option<String> {
    data::name("interleave_test::current::name")
}

/// Whether the calling code runs in a task spawned with [`future::spawn`](crate::future::spawn)
/// (rather than on a thread, or in a `block_on` or a `spawn_local` task, which share their
/// thread).
#[track_caller]
pub fn is_task() -> bool {
    data::is_task("interleave_test::current::is_task")
}

/// Gives the calling thread a label, which reports show after its name: `'worker' (#2)
/// [shard 3]`. Replaces the label it had; [`clear_label`] removes it.
#[track_caller]
pub fn set_label(label: impl Into<String>) {
    let label = label.into().into_boxed_str();
    data::set_label("interleave_test::current::set_label", Some(label));
}

/// Removes the calling thread's label.
#[track_caller]
pub fn clear_label() {
    data::set_label("interleave_test::current::clear_label", None);
}

/// The calling thread's label, if it has one.
#[track_caller]
pub fn label() -> Option<String> {
    data::label("interleave_test::current::label")
}

/// How many decisions the execution has made so far: the next one is numbered one more in
/// its schedule and its report, so a log line that prints this places itself among them.
/// It never decreases within an execution.
#[track_caller]
pub fn decisions() -> u64 {
    data::decisions("interleave_test::current::decisions")
}

/// The calling thread's vector clock now: what happens before this point of the program,
/// as the memory model tracks it (spawn, join, locks, channels, release/acquire atomics,
/// fences, wakes). Two clocks of one thread are ordered as the thread's program is.
/// Asking for it makes the execution a tracked one (see the [module](self)).
#[track_caller]
pub fn clock() -> VectorClock {
    VectorClock(data::clock("interleave_test::current::clock"))
}

/// Whether the point of clock `a` happens before the point of clock `b`: `a <= b` entry by
/// entry, and they differ. Two points neither of which happens before the other are
/// concurrent (`a.partial_cmp(&b)` is `None`).
pub fn happens_before(a: &VectorClock, b: &VectorClock) -> bool {
    a < b
}

/// A vector clock: for each model thread, how many of its events happen before a point.
/// Its partial order is happens-before: `a < b` if `a`'s point happens before `b`'s.
#[derive(Clone, Debug, Default)]
pub struct VectorClock(Vec<u32>);

/// Equal when every entry is (a missing entry is 0).
impl PartialEq for VectorClock {
    fn eq(&self, other: &Self) -> bool {
        self.partial_cmp(other) == Some(Ordering::Equal)
    }
}

impl Eq for VectorClock {}

impl VectorClock {
    /// The entry of thread `id`: how many of its events happen before this point.
    pub fn get(&self, id: ThreadId) -> u32 {
        usize::try_from(id.as_u64())
            .ok()
            .and_then(|i| self.0.get(i).copied())
            .unwrap_or(0)
    }

    /// How many threads' entries it holds (later threads' entries are 0).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether every entry is 0 (as in an execution that does not track clocks).
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&e| e == 0)
    }

    fn entry(&self, i: usize) -> u32 {
        self.0.get(i).copied().unwrap_or(0)
    }
}

impl PartialOrd for VectorClock {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        let n = self.0.len().max(other.0.len());
        let (mut less, mut greater) = (false, false);
        for i in 0..n {
            match self.entry(i).cmp(&other.entry(i)) {
                Ordering::Less => less = true,
                Ordering::Greater => greater = true,
                Ordering::Equal => {}
            }
        }
        match (less, greater) {
            (false, false) => Some(Ordering::Equal),
            (true, false) => Some(Ordering::Less),
            (false, true) => Some(Ordering::Greater),
            (true, true) => None,
        }
    }
}
