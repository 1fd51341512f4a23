//! The fair semaphore under this module's `Mutex`, `RwLock`, `Semaphore` and bounded
//! `mpsc`, as Tokio builds them on one: waiters queue in arrival order, and released
//! permits go to the waiter at the head of the queue until it has all it asked for (so a
//! waiter that asks for many is not overtaken by later ones that ask for few).
//!
//! An acquisition that got its permits spends a unit of the task's cooperative budget, as
//! Tokio's; one that finds none left keeps the permits and yields (so a waiter keeps its
//! turn, and dropping it gives them back).
//!
//! Its state lives in a modelled mutex of `interleave_test::sync`: every operation is a
//! switch point, and the search orders the operations of different tasks on one
//! semaphore as it orders their locks (a release happens before the acquisition it
//! grants).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use super::wake_list::{self, Deferred, Section, WakeList};
use interleave_engine::primitive::{Fresh, Loc, Operation, WaitId, WaitQueue};
use interleave_test::future::budget;
use interleave_test::sync::Mutex;

/// The semaphore's state.
#[derive(Debug)]
pub(super) struct Sem {
    permits: usize,
    closed: bool,
    queue: WaitQueue<Want>,
    /// Waiters whose request was met, not yet told.
    granted: Vec<WaitId>,
    /// Wakers to wake or drop once the lock is released.
    later: WakeList,
}

/// What a waiter asked for.
#[derive(Debug)]
struct Want {
    want: usize,
    got: usize,
}

/// Why a wait for permits ended without them: the semaphore was closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Closed;

impl Sem {
    /// A semaphore with `permits`, whose waiters wait to do `words` to the primitive over
    /// it, in a deadlock report ("acquire a permit from", "lock").
    pub(super) const fn new(permits: usize, words: &'static str) -> Sem {
        Sem {
            permits,
            closed: false,
            queue: WaitQueue::new(words),
            granted: Vec::new(),
            later: WakeList::new(),
        }
    }

    /// A closed semaphore with `permits` (a `OnceCell` that holds its value).
    pub(super) const fn new_closed(permits: usize, words: &'static str) -> Sem {
        let mut sem = Sem::new(permits, words);
        sem.closed = true;
        sem
    }

    pub(super) fn available(&self) -> usize {
        self.permits
    }

    pub(super) fn is_closed(&self) -> bool {
        self.closed
    }

    /// Takes `n` permits if nobody waits and enough are free: `Err(true)` if closed,
    /// `Err(false)` if not enough.
    pub(super) fn try_acquire(&mut self, n: usize) -> Result<(), bool> {
        if self.closed {
            return Err(true);
        }
        if !self.queue.is_empty() || self.permits < n {
            return Err(false);
        }
        self.permits -= n;
        Ok(())
    }

    /// Polls an acquisition of `n` permits whose place in the queue is `ticket`.
    pub(super) fn poll_acquire(
        &mut self,
        n: usize,
        ticket: &mut Option<WaitId>,
        waker: &Waker,
    ) -> Poll<Result<(), Closed>> {
        let Some(id) = *ticket else {
            if self.closed {
                return Poll::Ready(Err(Closed));
            }
            if self.try_acquire(n).is_ok() {
                return Poll::Ready(Ok(()));
            }
            let id = self.queue.push(Want { want: n, got: 0 }, Some(waker));
            *ticket = Some(id);
            self.assign();
            return self.poll_queued(id, n, ticket, waker);
        };
        self.poll_queued(id, n, ticket, waker)
    }

    /// Polls the request `id` for `n` permits. A closed semaphore fails it even if its
    /// permits were all given to it before the close (it was not told yet): they go back,
    /// as in Tokio, whose acquisition checks for the close first.
    fn poll_queued(
        &mut self,
        id: WaitId,
        n: usize,
        ticket: &mut Option<WaitId>,
        waker: &Waker,
    ) -> Poll<Result<(), Closed>> {
        if self.closed {
            self.cancel(id, n);
            *ticket = None;
            return Poll::Ready(Err(Closed));
        }
        if let Some(i) = self.granted.iter().position(|g| *g == id) {
            self.granted.swap_remove(i);
            *ticket = None;
            return Poll::Ready(Ok(()));
        }
        self.queue.set_waker(id, waker, &mut self.later);
        Poll::Pending
    }

    /// Keeps the permits a request just took for its next poll (its task had no budget
    /// left to return them): granted, as a waiter's whose request was met, under a new
    /// `ticket`; dropping the request gives them back.
    pub(super) fn hold(&mut self, ticket: &mut Option<WaitId>) {
        let id = self.queue.served();
        *ticket = Some(id);
        self.granted.push(id);
    }

    /// Gives up the request `id` for `n` permits (its future was dropped): the permits
    /// it was given go back.
    pub(super) fn cancel(&mut self, id: WaitId, n: usize) {
        if let Some(i) = self.granted.iter().position(|g| *g == id) {
            self.granted.swap_remove(i);
            self.release(n);
            return;
        }
        self.leave_queue(id);
    }

    fn leave_queue(&mut self, id: WaitId) {
        if let Some(want) = self.queue.remove(id, &mut self.later) {
            self.release(want.got);
        }
    }

    /// Gives `n` permits back and hands them to the waiters at the head of the queue.
    pub(super) fn release(&mut self, n: usize) {
        self.permits += n;
        self.assign();
    }

    /// Removes up to `n` free permits for good; returns how many.
    pub(super) fn forget(&mut self, n: usize) -> usize {
        let gone = n.min(self.permits);
        self.permits -= gone;
        gone
    }

    /// Closes: every waiter is woken to fail. As in Tokio, whose close empties its wait
    /// list, no waiter is given permits any more (permits given back stay free); a waiter
    /// keeps what it was given until it sees the close or is dropped.
    pub(super) fn close(&mut self) {
        self.closed = true;
        self.queue.wake_each(&mut self.later);
    }

    fn assign(&mut self) {
        if self.closed {
            return;
        }
        while let Some((_, head)) = self.queue.front_mut() {
            let give = self.permits.min(head.want - head.got);
            head.got += give;
            self.permits -= give;
            if head.got < head.want {
                return;
            }
            let (id, _) = self.queue.wake_front(&mut self.later).expect("a head");
            self.granted.push(id);
        }
    }
}

impl Deferred for Sem {
    fn deferred(&mut self) -> WakeList {
        self.later.take()
    }
}

/// A semaphore in a modelled mutex.
pub(super) type SemLock = Mutex<Sem>;

/// The lock of `sem`, the state of the Tokio primitive `kind` (reports name its operations
/// so: `tokio Semaphore`), whose `static` can start afresh as `fresh` says.
pub(super) const fn new_lock(sem: Sem, kind: &'static str, fresh: Option<Fresh>) -> SemLock {
    Mutex::named(sem, kind, fresh)
}

/// Locks `sem` for the program's operation `what` at `loc` (no poisoning: nothing panics
/// while holding it).
pub(super) fn lock<'a>(sem: &'a SemLock, loc: Loc, what: &'static Operation) -> Section<'a, Sem> {
    wake_list::section(sem, loc, what)
}

/// Gives `n` permits back to `sem` (a guard's drop, a downgrade: `what` at `loc`); a guard
/// dropped after its model gives them back in the OS thread's ambient execution.
pub(super) fn give_back(sem: &SemLock, n: usize, loc: Loc, what: &'static Operation) {
    lock(sem, loc, what).release(n);
}

/// What holds a semaphore: its own lock, or a channel's state.
pub(super) trait HasSem {
    /// Runs `f` on the semaphore, under its lock, for the program's operation `what` at
    /// `loc`.
    fn with_sem<R>(&self, loc: Loc, what: &'static Operation, f: impl FnOnce(&mut Sem) -> R) -> R;
}

impl HasSem for SemLock {
    fn with_sem<R>(&self, loc: Loc, what: &'static Operation, f: impl FnOnce(&mut Sem) -> R) -> R {
        f(&mut lock(self, loc, what))
    }
}

/// What reports call an acquisition's polls and, when its future is dropped while it
/// waits, its cancellation: `[tokio Mutex lock, tokio Mutex lock dropped]`.
pub(super) type AcquireNames = [Operation; 2];

/// The future of an acquisition of `n` permits, which the program asked for at `loc`.
#[derive(Debug)]
pub(super) struct Acquire<'a, S: HasSem> {
    sem: &'a S,
    n: usize,
    ticket: Option<WaitId>,
    loc: Loc,
    names: &'static AcquireNames,
}

impl<'a, S: HasSem> Acquire<'a, S> {
    pub(super) fn new(sem: &'a S, n: usize, loc: Loc, names: &'static AcquireNames) -> Self {
        Acquire {
            sem,
            n,
            ticket: None,
            loc,
            names,
        }
    }
}

impl<S: HasSem> Future for Acquire<'_, S> {
    type Output = Result<(), Closed>;

    /// Spends a unit of the task's cooperative budget once it has the permits, as Tokio's:
    /// with none left it keeps them (`Sem::hold`) and yields, ready at its next poll.
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let me = &mut *self;
        let (n, ticket) = (me.n, &mut me.ticket);
        let polled = me.sem.with_sem(me.loc, &me.names[0], |sem| {
            match sem.poll_acquire(n, ticket, cx.waker()) {
                Poll::Ready(Ok(())) if !budget::spend() => {
                    sem.hold(ticket);
                    None
                }
                polled => Some(polled),
            }
        });
        polled.unwrap_or_else(|| {
            cx.waker().wake_by_ref();
            Poll::Pending
        })
    }
}

impl<S: HasSem> Drop for Acquire<'_, S> {
    fn drop(&mut self) {
        if let Some(id) = self.ticket.take() {
            let n = self.n;
            self.sem
                .with_sem(self.loc, &self.names[1], |sem| sem.cancel(id, n));
        }
    }
}
