//! Multi-producer, single-consumer channels, as `tokio::sync::mpsc`: [`channel`] (bounded:
//! a send waits for capacity, senders served first come, first served) and
//! [`unbounded_channel`], with weak senders ([`WeakSender`]) that do not keep a channel
//! open.
//!
//! Capacity and closing follow Tokio's documentation: a bounded send takes a slot (a
//! permit of a fair semaphore) and the receiver gives it back when it takes the value;
//! [`Receiver::close`] or dropping the receiver makes every later send fail with the value
//! given back, while values already sent (and permits already reserved) can still be
//! received; [`Receiver::recv`] returns `None` once every sender is gone (or the channel
//! is closed and idle) and the buffer is empty.
//! A receive (not `try_recv`) and a bounded send spend a unit of cooperative budget, as Tokio's.

use std::collections::VecDeque;
use std::future::Future;
use std::panic::Location;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use super::sem::{Acquire, AcquireNames, Sem};
use super::wake_list::{self, Deferred, Section, WakeList};
use interleave_engine::primitive::{Loc, Operation, WaitQueue};
use interleave_test::future::budget;
use interleave_test::sync::Mutex;

/// What reports call a bounded sender's wait for a slot: `send`'s and `reserve`'s.
const SEND: &AcquireNames = &[
    interleave_test::sync::section("tokio mpsc send"),
    interleave_test::sync::section("tokio mpsc send dropped"),
];
const SEND_TIMEOUT: &AcquireNames = &[
    interleave_test::sync::section("tokio mpsc send_timeout"),
    interleave_test::sync::section("tokio mpsc send_timeout dropped"),
];
const RESERVE: &AcquireNames = &[
    interleave_test::sync::section("tokio mpsc reserve"),
    interleave_test::sync::section("tokio mpsc reserve dropped"),
];

pub mod error;
mod permits;
mod unbounded;
mod weak;

pub use permits::{OwnedPermit, PermitIterator};
pub use unbounded::{UnboundedReceiver, UnboundedSender, unbounded_channel};
pub use weak::{WeakSender, WeakUnboundedSender};

use error::{SendError, SendTimeoutError, TryRecvError, TrySendError};

#[derive(Debug)]
struct Chan<T> {
    buf: VecDeque<T>,
    /// Free slots of a bounded channel.
    sem: Sem,
    bound: Option<usize>,
    senders: usize,
    /// Weak senders (`WeakSender`), which do not keep the channel open.
    weak: usize,
    closed: bool,
    /// The receiver, while it waits for a value.
    rx: WaitQueue,
    /// Senders in `closed`, woken when the receiver goes.
    closing: WaitQueue,
    /// Wakers to wake or drop once the lock is released (the semaphore keeps its own).
    later: WakeList,
}

impl<T> Deferred for Chan<T> {
    fn deferred(&mut self) -> WakeList {
        let mut all = self.later.take();
        all.append(self.sem.deferred());
        all
    }
}

#[derive(Debug)]
struct Shared<T> {
    chan: Mutex<Chan<T>>,
    /// The channel's slots (`None`: unbounded), fixed: read without a switch point.
    bound: Option<usize>,
}

impl<T> Shared<T> {
    #[track_caller]
    fn lock(&self, what: &'static Operation) -> Section<'_, Chan<T>> {
        self.lock_at(Location::caller(), what)
    }

    /// Locks the channel for the program's operation `what` at `loc`.
    fn lock_at(&self, loc: Loc, what: &'static Operation) -> Section<'_, Chan<T>> {
        wake_list::section(&self.chan, loc, what)
    }

    /// Gives back `n` reserved slots (`what`, at `loc`).
    fn give_back(&self, n: usize, loc: Loc, what: &'static Operation) {
        let mut chan = self.lock_at(loc, what);
        chan.sem.release(n);
        chan.wake_if_finished();
    }

    /// Waits until the receiver is dropped or closed (a sender's `closed`, called at
    /// `loc`).
    async fn closed(&self, loc: Loc) {
        std::future::poll_fn(|cx| {
            let mut chan = self.lock_at(
                loc,
                const { &interleave_test::sync::section("tokio mpsc closed") },
            );
            if chan.closed {
                return Poll::Ready(());
            }
            chan.closing.add(cx.waker());
            Poll::Pending
        })
        .await
    }
}

impl<T> Chan<T> {
    fn push(&mut self, value: T) {
        self.buf.push_back(value);
        self.wake_receiver();
    }

    /// Wakes the receiver if it waits.
    fn wake_receiver(&mut self) {
        self.rx.wake_all(&mut self.later);
    }

    /// Drops the receiver's waker, unwoken (nothing polls it any more).
    fn forget_receiver(&mut self) {
        self.rx.clear(&mut self.later);
    }

    /// Wakes the receiver if no value can come any more.
    fn wake_if_finished(&mut self) {
        if self.finished() {
            self.wake_receiver();
        }
    }

    /// Closes the receiving side: sends fail from now on.
    fn close(&mut self) {
        self.closed = true;
        self.sem.close();
        self.closing.wake_all(&mut self.later);
    }

    /// Registers the receiver's waker (the one it replaces is dropped once the lock is
    /// released).
    fn park_receiver(&mut self, waker: &Waker) {
        self.rx.set_only(waker, &mut self.later);
    }

    /// Whether no value can come any more.
    fn finished(&self) -> bool {
        let idle = self.bound.is_none_or(|b| self.sem.available() == b);
        self.senders == 0 || (self.closed && idle)
    }

    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        if let Some(value) = self.buf.pop_front() {
            if self.bound.is_some() {
                self.sem.release(1);
            }
            return Poll::Ready(Some(value));
        }
        if self.finished() {
            return Poll::Ready(None);
        }
        self.park_receiver(cx.waker());
        Poll::Pending
    }

    /// Moves up to `limit` values (at least one) into `buffer`: how many, 0 once none can
    /// come (or if `limit` is 0).
    fn poll_recv_many(
        &mut self,
        cx: &mut Context<'_>,
        buffer: &mut Vec<T>,
        limit: usize,
    ) -> Poll<usize> {
        if limit == 0 {
            return Poll::Ready(0);
        }
        let n = limit.min(self.buf.len());
        if n > 0 {
            buffer.extend(self.buf.drain(..n));
            if self.bound.is_some() {
                self.sem.release(n);
            }
            return Poll::Ready(n);
        }
        if self.finished() {
            return Poll::Ready(0);
        }
        self.park_receiver(cx.waker());
        Poll::Pending
    }
}

fn new_shared<T>(bound: Option<usize>) -> Arc<Shared<T>> {
    let chan = Chan {
        buf: VecDeque::new(),
        sem: Sem::new(bound.unwrap_or(0), "send on"),
        bound,
        senders: 1,
        weak: 0,
        closed: false,
        rx: WaitQueue::new("receive from"),
        closing: WaitQueue::new("outlive the receiver of"),
        later: WakeList::new(),
    };
    Arc::new(Shared {
        chan: Mutex::named(chan, "tokio mpsc channel", None),
        bound,
    })
}

/// A bounded channel of `buffer` slots, as `tokio::sync::mpsc::channel`.
///
/// ```
/// use interleave_test_tokio::{self as tokio, sync::mpsc};
///
/// interleave_test::check_async(|| async {
///     let (tx, mut rx) = mpsc::channel(1);
///     tokio::spawn(async move {
///         for n in 0..3 {
///             tx.send(n).await.unwrap();
///         }
///     });
///     let mut got = Vec::new();
///     while let Some(n) = rx.recv().await {
///         got.push(n);
///     }
///     assert_eq!(got, [0, 1, 2]);
/// })
/// .unwrap();
/// ```
///
/// # Panics
/// If `buffer` is 0 (Tokio's message).
#[track_caller]
pub fn channel<T>(buffer: usize) -> (Sender<T>, Receiver<T>) {
    assert!(buffer > 0, "mpsc bounded channel requires buffer > 0");
    let shared = new_shared(Some(buffer));
    let loc = Location::caller();
    let tx = Sender {
        end: SenderEnd::first(&shared, loc),
    };
    (tx, Receiver { shared, loc })
}

/// The sending side of a bounded channel, as `mpsc::Sender`.
pub struct Sender<T> {
    end: SenderEnd<T>,
}

impl<T> Clone for Sender<T> {
    #[track_caller]
    fn clone(&self) -> Self {
        Sender {
            end: self.end.clone(),
        }
    }
}

/// What both kinds of sender are: a counted sending end of the channel, made (and
/// dropped, in reports) where the program made it.
#[derive(Debug)]
struct SenderEnd<T> {
    shared: Arc<Shared<T>>,
    loc: Loc,
}

impl<T> SenderEnd<T> {
    /// The first sender of a new channel, made at `loc`.
    fn first(shared: &Arc<Shared<T>>, loc: Loc) -> Self {
        SenderEnd {
            shared: Arc::clone(shared),
            loc,
        }
    }
}

impl<T> Clone for SenderEnd<T> {
    #[track_caller]
    fn clone(&self) -> Self {
        self.shared
            .lock(const { &interleave_test::sync::section("tokio mpsc Sender clone") })
            .senders += 1;
        SenderEnd::first(&self.shared, Location::caller())
    }
}

impl<T> Drop for SenderEnd<T> {
    fn drop(&mut self) {
        let mut chan = self.shared.lock_at(
            self.loc,
            const { &interleave_test::sync::section("tokio mpsc Sender drop") },
        );
        chan.senders -= 1;
        if chan.senders == 0 {
            chan.wake_receiver();
        }
    }
}

impl<T> Sender<T> {
    /// Waits for a free slot, then sends; the value comes back if the receiver is gone or
    /// closed. As Tokio documents, not cancel-safe: dropping the future drops the value
    /// with it (and its place in the queue of senders); in `select!`, use
    /// [`reserve`](Self::reserve).
    /// (An `async fn` in Tokio, as are the other waits here; functions that return the
    /// future, so that reports show where the program called them.)
    #[track_caller]
    pub fn send(&self, value: T) -> impl Future<Output = Result<(), SendError<T>>> + '_ {
        let loc = Location::caller();
        async move {
            match self.reserve_at(loc, SEND).await {
                Ok(permit) => {
                    permit.send_at(value, loc, &SEND[0]);
                    Ok(())
                }
                Err(_) => Err(SendError(value)),
            }
        }
    }

    /// Waits at most `timeout` (on the virtual clock) for a free slot, then sends; the
    /// value comes back with the reason when it could not be sent: the receiver is gone or
    /// closed, or the time ran out (the deadline may pass while the channel is still full,
    /// or, as a decision, earlier than a receiver's next step). Not cancel-safe, as
    /// [`send`](Self::send).
    #[track_caller]
    pub fn send_timeout(
        &self,
        value: T,
        timeout: std::time::Duration,
    ) -> impl Future<Output = Result<(), SendTimeoutError<T>>> + '_ {
        let loc = Location::caller();
        async move {
            let names = SEND_TIMEOUT;
            match crate::time::timeout(timeout, self.reserve_at(loc, names)).await {
                Ok(Ok(permit)) => {
                    permit.send_at(value, loc, &names[0]);
                    Ok(())
                }
                Ok(Err(_)) => Err(SendTimeoutError::Closed(value)),
                Err(_) => Err(SendTimeoutError::Timeout(value)),
            }
        }
    }

    /// Sends if a slot is free now.
    #[track_caller]
    pub fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
        let mut chan = self
            .end
            .shared
            .lock(const { &interleave_test::sync::section("tokio mpsc try_send") });
        match chan.sem.try_acquire(1) {
            Ok(()) => {
                chan.push(value);
                Ok(())
            }
            Err(true) => Err(TrySendError::Closed(value)),
            Err(false) => Err(TrySendError::Full(value)),
        }
    }

    /// Waits for a free slot and holds it: a [`Permit`] sends without waiting. Cancel-safe.
    #[track_caller]
    pub fn reserve(&self) -> impl Future<Output = Result<Permit<'_, T>, SendError<()>>> + '_ {
        self.reserve_at(Location::caller(), RESERVE)
    }

    async fn reserve_at(
        &self,
        loc: Loc,
        names: &'static AcquireNames,
    ) -> Result<Permit<'_, T>, SendError<()>> {
        Acquire::new(&*self.end.shared, 1, loc, names)
            .await
            .map_err(|_| SendError(()))?;
        Ok(Permit {
            sender: Some(self),
            loc,
        })
    }

    /// Sends from synchronous code.
    ///
    /// # Panics
    /// Inside a future polled by a `block_on` (Tokio's rule).
    #[track_caller]
    pub fn blocking_send(&self, value: T) -> Result<(), SendError<T>> {
        super::no_blocking_in_async("mpsc::Sender::blocking_send");
        interleave_test::future::block_on(self.send(value))
    }

    /// Waits until the receiver is dropped or closed.
    #[track_caller]
    pub fn closed(&self) -> impl Future<Output = ()> + '_ {
        self.end.shared.closed(Location::caller())
    }

    /// Whether the receiver is dropped or closed.
    #[track_caller]
    pub fn is_closed(&self) -> bool {
        self.end
            .shared
            .lock(const { &interleave_test::sync::section("tokio mpsc is_closed") })
            .closed
    }

    /// Free slots now.
    #[track_caller]
    pub fn capacity(&self) -> usize {
        self.end
            .shared
            .lock(const { &interleave_test::sync::section("tokio mpsc capacity") })
            .sem
            .available()
    }

    /// The channel's number of slots (fixed: no switch point).
    pub fn max_capacity(&self) -> usize {
        self.end.shared.bound.unwrap_or(usize::MAX)
    }

    /// Whether `other` sends on the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.end.shared, &other.end.shared)
    }
}

/// A reserved slot of a bounded channel: sends without waiting, or gives the slot back
/// when dropped.
pub struct Permit<'a, T> {
    sender: Option<&'a Sender<T>>,
    /// Where the program reserved it (its drop is reported there).
    loc: Loc,
}

impl<T> Permit<'_, T> {
    /// Sends `value` in the reserved slot (always succeeds: a closed channel still takes
    /// values of permits reserved before it closed).
    #[track_caller]
    pub fn send(self, value: T) {
        self.send_at(
            value,
            Location::caller(),
            const { &interleave_test::sync::section("tokio mpsc Permit send") },
        );
    }

    fn send_at(mut self, value: T, loc: Loc, what: &'static Operation) {
        let sender = self.sender.take().expect("a permit sends once");
        sender.end.shared.lock_at(loc, what).push(value);
    }
}

impl<T> Drop for Permit<'_, T> {
    fn drop(&mut self) {
        if let Some(sender) = self.sender.take() {
            let what = const { &interleave_test::sync::section("tokio mpsc Permit drop") };
            sender.end.shared.give_back(1, self.loc, what);
        }
    }
}

/// The receiving side of a bounded channel, as `mpsc::Receiver`.
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
    /// Where the program made it (its drop is reported there).
    loc: Loc,
}

impl<T> Receiver<T> {
    /// Waits for the next value; `None` once none can come. Cancel-safe: a value is taken
    /// only by the poll that returns it.
    #[track_caller]
    pub fn recv(&mut self) -> impl Future<Output = Option<T>> + '_ {
        let loc = Location::caller();
        std::future::poll_fn(move |cx| {
            budget::charged(cx, |cx| {
                self.shared
                    .lock_at(
                        loc,
                        const { &interleave_test::sync::section("tokio mpsc recv") },
                    )
                    .poll_recv(cx)
            })
        })
    }

    /// Waits for values and moves up to `limit` of them, in order, to the end of
    /// `buffer`, as `recv_many`: returns how many, at least one, or 0 once none can come
    /// (or at once if `limit` is 0). It takes only what is there when it runs, without
    /// waiting for more. Cancel-safe: values are taken only by the poll that returns them.
    #[track_caller]
    pub fn recv_many<'a>(
        &'a mut self,
        buffer: &'a mut Vec<T>,
        limit: usize,
    ) -> impl Future<Output = usize> + 'a {
        let loc = Location::caller();
        std::future::poll_fn(move |cx| {
            budget::charged(cx, |cx| {
                self.shared
                    .lock_at(
                        loc,
                        const { &interleave_test::sync::section("tokio mpsc recv_many") },
                    )
                    .poll_recv_many(cx, buffer, limit)
            })
        })
    }

    /// Polls for values, as [`recv_many`](Self::recv_many) does.
    #[track_caller]
    pub fn poll_recv_many(
        &mut self,
        cx: &mut Context<'_>,
        buffer: &mut Vec<T>,
        limit: usize,
    ) -> Poll<usize> {
        let loc = Location::caller();
        budget::charged(cx, |cx| {
            self.shared
                .lock_at(
                    loc,
                    const { &interleave_test::sync::section("tokio mpsc poll_recv_many") },
                )
                .poll_recv_many(cx, buffer, limit)
        })
    }

    /// Polls for the next value.
    #[track_caller]
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let loc = Location::caller();
        budget::charged(cx, |cx| {
            self.shared
                .lock_at(
                    loc,
                    const { &interleave_test::sync::section("tokio mpsc poll_recv") },
                )
                .poll_recv(cx)
        })
    }

    /// The next value if there is one now.
    #[track_caller]
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        let mut chan = self
            .shared
            .lock(const { &interleave_test::sync::section("tokio mpsc try_recv") });
        match chan.poll_recv(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(Some(value)) => Ok(value),
            Poll::Ready(None) => Err(TryRecvError::Disconnected),
            Poll::Pending => {
                chan.forget_receiver();
                Err(TryRecvError::Empty)
            }
        }
    }

    /// Waits for the next value from synchronous code.
    ///
    /// # Panics
    /// Inside a future polled by a `block_on` (Tokio's rule).
    #[track_caller]
    pub fn blocking_recv(&mut self) -> Option<T> {
        super::no_blocking_in_async("mpsc::Receiver::blocking_recv");
        interleave_test::future::block_on(self.recv())
    }

    /// [`recv_many`](Self::recv_many) from synchronous code.
    ///
    /// # Panics
    /// Inside a future polled by a `block_on` (Tokio's rule).
    #[track_caller]
    pub fn blocking_recv_many(&mut self, buffer: &mut Vec<T>, limit: usize) -> usize {
        super::no_blocking_in_async("mpsc::Receiver::blocking_recv_many");
        interleave_test::future::block_on(self.recv_many(buffer, limit))
    }

    /// Closes the channel: sends fail from now on; what was sent can still be received.
    #[track_caller]
    pub fn close(&mut self) {
        self.shared
            .lock(const { &interleave_test::sync::section("tokio mpsc close") })
            .close();
    }

    /// Whether the channel is closed (by the receiver, or every sender is gone).
    #[track_caller]
    pub fn is_closed(&self) -> bool {
        let chan = self
            .shared
            .lock(const { &interleave_test::sync::section("tokio mpsc is_closed") });
        chan.closed || chan.senders == 0
    }

    /// Whether no value waits in the buffer.
    #[track_caller]
    pub fn is_empty(&self) -> bool {
        self.shared
            .lock(const { &interleave_test::sync::section("tokio mpsc is_empty") })
            .buf
            .is_empty()
    }

    /// How many values wait in the buffer.
    #[track_caller]
    pub fn len(&self) -> usize {
        self.shared
            .lock(const { &interleave_test::sync::section("tokio mpsc len") })
            .buf
            .len()
    }
}

impl<T> Drop for Receiver<T> {
    /// Closes the channel; values still buffered are dropped.
    fn drop(&mut self) {
        let left = {
            let mut chan = self.shared.lock_at(
                self.loc,
                const { &interleave_test::sync::section("tokio mpsc Receiver drop") },
            );
            chan.close();
            // Nothing polls the receiver any more: its waker goes now (Tokio).
            chan.forget_receiver();
            std::mem::take(&mut chan.buf)
        };
        drop(left);
    }
}

debug_without_bound!(Sender, Permit<'a>, Receiver);
