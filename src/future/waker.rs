//! [`AtomicWaker`]: one registered waker, as `futures::task::AtomicWaker`.

use std::task::Waker;

use crate::sync::Mutex;

/// Holds the waker of the one task that waits for an event, as
/// `futures::task::AtomicWaker`: the task registers its waker, then checks for the event;
/// the side that causes the event wakes it. [`register`](Self::register), [`wake`](Self::wake)
/// and [`take`](Self::take) are switch points (each is one atomic step, as in the real
/// type), so the window between a check and a registration is explored: a task that
/// checks first and registers after can miss the wake, and the search finds it.
#[derive(Debug, Default)]
pub struct AtomicWaker {
    waker: Mutex<Option<Waker>>,
}

impl AtomicWaker {
    /// An empty `AtomicWaker`.
    pub const fn new() -> Self {
        AtomicWaker {
            waker: Mutex::new(None),
        }
    }

    /// Registers `waker`, replacing the one registered before (which is not woken).
    #[track_caller]
    pub fn register(&self, waker: &Waker) {
        let mut slot = self.waker.lock().unwrap_or_else(|e| e.into_inner());
        match &mut *slot {
            Some(old) if old.will_wake(waker) => {}
            other => *other = Some(waker.clone()),
        }
    }

    /// Wakes the registered waker, if any, and removes it.
    #[track_caller]
    pub fn wake(&self) {
        if let Some(waker) = self.take() {
            waker.wake();
        }
    }

    /// Removes the registered waker and returns it.
    #[track_caller]
    pub fn take(&self) -> Option<Waker> {
        self.waker.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}
