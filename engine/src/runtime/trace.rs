//! The last operations of an execution, kept for livelock reports: recorded only in the
//! last [`TRACE_LEN`] steps before the step limit, the only ones a report shows.

use super::{Op, Tid};

/// How many recent operations are kept.
pub(crate) const TRACE_LEN: usize = 64;

/// One operation as it was reached at a switch point.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Event {
    pub(crate) step: u64,
    pub(crate) tid: Tid,
    pub(crate) op: Op,
}

/// A fixed-size ring of the most recent [`Event`]s; recording never allocates after warm-up.
#[derive(Debug, Default)]
pub(crate) struct Trace {
    ring: Vec<Event>,
    next: usize,
}

impl Trace {
    pub(crate) fn push(&mut self, event: Event) {
        if self.ring.len() < TRACE_LEN {
            if self.ring.capacity() == 0 {
                self.ring.reserve_exact(TRACE_LEN); // once, rather than growing step by step
            }
            self.ring.push(event);
        } else {
            self.ring[self.next] = event;
        }
        self.next = (self.next + 1) % TRACE_LEN;
    }

    /// The kept events, oldest first.
    pub(crate) fn events(&self) -> impl Iterator<Item = &Event> {
        let (newer, older) = self.ring.split_at(self.next.min(self.ring.len()));
        older.iter().chain(newer.iter())
    }
}
