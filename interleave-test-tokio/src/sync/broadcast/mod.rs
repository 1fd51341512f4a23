//! A channel whose every value goes to every receiver, as `tokio::sync::broadcast`.
//!
//! The channel keeps the values some receiver has yet to see, oldest first, each with the
//! number of receivers that existed when it was sent and have not seen it. A value goes
//! when that number reaches zero or when sending past the capacity overwrites it (the
//! oldest kept value is overwritten first); a receiver that missed overwritten values is
//! told how many (`RecvError::Lagged`) and goes on from the
//! oldest kept value. The state sits in a modelled `Mutex`: every operation is a switch
//! point.

use std::collections::VecDeque;
use std::future::Future;
use std::panic::Location;
use std::sync::Arc;
use std::task::Poll;

use super::wake_list::{self, Deferred, Section, WakeList};

mod weak;
use crate::task::coop::cooperative;
use interleave_engine::primitive::{Loc, Operation, WaitQueue};
use interleave_test::sync::Mutex;
pub use weak::WeakSender;

/// Errors of this module.
pub mod error {
    /// `send` found no receiver; the value comes back, as `broadcast::error::SendError`.
    #[derive(PartialEq, Eq, Clone, Copy)]
    pub struct SendError<T>(pub T);

    impl<T> std::fmt::Debug for SendError<T> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("SendError").finish_non_exhaustive()
        }
    }

    impl<T> std::fmt::Display for SendError<T> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("channel closed")
        }
    }

    impl<T> std::error::Error for SendError<T> {}

    /// Why `recv` returned no value, as `broadcast::error::RecvError`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum RecvError {
        /// Every sender was dropped and this receiver has seen every value.
        Closed,
        /// This many values were overwritten before this receiver saw them; it goes on
        /// from the oldest kept value.
        Lagged(u64),
    }

    impl std::fmt::Display for RecvError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            match self {
                RecvError::Closed => f.write_str("channel closed"),
                RecvError::Lagged(n) => write!(f, "channel lagged by {n}"),
            }
        }
    }

    impl std::error::Error for RecvError {}

    /// Why `try_recv` returned no value, as `broadcast::error::TryRecvError`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum TryRecvError {
        /// No value this receiver has not seen, and a sender still exists.
        Empty,
        /// Every sender was dropped and this receiver has seen every value.
        Closed,
        /// This many values were overwritten before this receiver saw them; it goes on
        /// from the oldest kept value.
        Lagged(u64),
    }

    impl std::fmt::Display for TryRecvError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            match self {
                TryRecvError::Empty => f.write_str("channel empty"),
                TryRecvError::Closed => f.write_str("channel closed"),
                TryRecvError::Lagged(n) => write!(f, "channel lagged by {n}"),
            }
        }
    }

    impl std::error::Error for TryRecvError {}
}

use error::{RecvError, SendError, TryRecvError};

#[derive(Debug)]
struct Slot<T> {
    value: T,
    /// Receivers that existed when it was sent and have not seen it yet; never 0 for the
    /// front slot (a value every receiver has seen is gone).
    unseen: usize,
}

#[derive(Debug)]
struct State<T> {
    /// Kept values, oldest first; at most `capacity`.
    slots: VecDeque<Slot<T>>,
    /// The position of `slots[0]`: positions number every value ever sent.
    head: u64,
    capacity: usize,
    senders: usize,
    /// Weak senders (`Sender::downgrade`), which do not keep the channel open.
    weak: usize,
    receivers: usize,
    /// Tasks in `recv`, woken by a send or the last sender's drop.
    waiting: WaitQueue,
    /// Tasks in `Sender::closed`, woken by the last receiver's drop.
    closing: WaitQueue,
    /// Wakers to wake once the lock is released.
    later: WakeList,
}

impl<T> Deferred for State<T> {
    fn deferred(&mut self) -> WakeList {
        self.later.take()
    }
}

impl<T> State<T> {
    /// The position the next value will have.
    fn tail(&self) -> u64 {
        self.head + self.slots.len() as u64
    }

    /// Drops the front values every receiver has seen.
    fn trim(&mut self) {
        while self.slots.front().is_some_and(|s| s.unseen == 0) {
            self.slots.pop_front();
            self.head += 1;
        }
    }

    /// The next value for a receiver at position `next`: always a clone, as in Tokio, and
    /// the value counts as received before the clone runs, so a panic in `Clone` skips it
    /// (the next receive gets the next value). The values every receiver has seen go.
    fn take(&mut self, next: &mut u64) -> Result<T, TryRecvError>
    where
        T: Clone,
    {
        // Values left when a clone panicked (nothing panics while this runs).
        self.trim();
        if *next < self.head {
            let missed = self.head - *next;
            *next = self.head;
            return Err(TryRecvError::Lagged(missed));
        }
        let i = (*next - self.head) as usize;
        let Some(slot) = self.slots.get_mut(i) else {
            return match self.senders {
                0 => Err(TryRecvError::Closed),
                _ => Err(TryRecvError::Empty),
            };
        };
        *next += 1;
        slot.unseen -= 1;
        let value = slot.value.clone();
        self.trim();
        Ok(value)
    }
}

type Shared<T> = Arc<Mutex<State<T>>>;

#[track_caller]
fn lock<'a, T>(shared: &'a Shared<T>, what: &'static Operation) -> Section<'a, State<T>> {
    lock_at(shared, Location::caller(), what)
}

/// Locks the channel for the program's operation `what` at `loc`.
fn lock_at<'a, T>(
    shared: &'a Shared<T>,
    loc: Loc,
    what: &'static Operation,
) -> Section<'a, State<T>> {
    wake_list::section(shared, loc, what)
}

/// A channel keeping up to `capacity` values, with one sender and one receiver, as
/// `tokio::sync::broadcast::channel`. Like Tokio, it rounds the capacity up to the next
/// power of two (Tokio: "the actual capacity may be greater than the provided capacity").
///
/// # Panics
/// If `capacity` is 0 or more than `usize::MAX / 2` (Tokio's messages).
///
/// ```
/// use interleave_test_tokio::sync::broadcast::{self, error::RecvError};
///
/// interleave_test::check_async(|| async {
///     let (tx, mut rx) = broadcast::channel(2);
///     for v in 1..=3 {
///         tx.send(v).unwrap();
///     }
///     assert_eq!(rx.recv().await, Err(RecvError::Lagged(1)));
///     assert_eq!(rx.recv().await, Ok(2));
///     assert_eq!(rx.recv().await, Ok(3));
///     drop(tx);
///     assert_eq!(rx.recv().await, Err(RecvError::Closed));
/// })
/// .unwrap();
/// ```
#[track_caller]
pub fn channel<T: Clone>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    let shared = new_channel(capacity, 1);
    let loc = Location::caller();
    let rx = Receiver {
        shared: Arc::clone(&shared),
        next: 0,
        loc,
    };
    (Sender { shared, loc }, rx)
}

/// A channel of `capacity` (rounded up) with one sender and `receivers` receivers; a
/// capacity out of range panics at the caller of the public function, as Tokio's.
#[track_caller]
fn new_channel<T>(capacity: usize, receivers: usize) -> Shared<T> {
    assert!(capacity > 0, "broadcast channel capacity cannot be zero");
    assert!(
        capacity <= usize::MAX / 2,
        "broadcast channel capacity exceeded `usize::MAX / 2`"
    );
    let state = State {
        slots: VecDeque::new(),
        head: 0,
        capacity: capacity.next_power_of_two(),
        senders: 1,
        weak: 0,
        receivers,
        waiting: WaitQueue::new("receive from"),
        closing: WaitQueue::new("outlive the receivers of"),
        later: WakeList::new(),
    };
    Arc::new(Mutex::named(state, "tokio broadcast channel", None))
}

/// The sending half, as `broadcast::Sender`; cloning it (a switch point) makes another
/// sender, and receivers see the channel closed once every sender is dropped.
pub struct Sender<T> {
    shared: Shared<T>,
    /// Where the program made it (its drop is reported there).
    loc: Loc,
}

impl<T> Sender<T> {
    /// Sends `value` to every receiver that exists now and returns how many there are, or
    /// gives it back when none exists. Past the capacity it overwrites the oldest kept
    /// value; it never waits.
    #[track_caller]
    pub fn send(&self, value: T) -> Result<usize, SendError<T>> {
        let mut st = lock(
            &self.shared,
            const { &interleave_test::sync::section("tokio broadcast send") },
        );
        if st.receivers == 0 {
            return Err(SendError(value));
        }
        let unseen = st.receivers;
        st.slots.push_back(Slot { value, unseen });
        if st.slots.len() > st.capacity {
            st.slots.pop_front();
            st.head += 1;
        }
        let st = &mut *st;
        st.waiting.wake_all(&mut st.later);
        Ok(unseen)
    }

    /// A new receiver that sees the values sent from now on.
    #[track_caller]
    pub fn subscribe(&self) -> Receiver<T> {
        new_receiver(
            &self.shared,
            const { &interleave_test::sync::section("tokio broadcast subscribe") },
        )
    }

    /// How many receivers exist.
    #[track_caller]
    pub fn receiver_count(&self) -> usize {
        lock(
            &self.shared,
            const { &interleave_test::sync::section("tokio broadcast receiver_count") },
        )
        .receivers
    }

    /// How many values are kept: sent, not yet seen by some receiver that existed then,
    /// and not overwritten.
    #[track_caller]
    pub fn len(&self) -> usize {
        lock(
            &self.shared,
            const { &interleave_test::sync::section("tokio broadcast len") },
        )
        .slots
        .len()
    }

    /// Whether no value is kept.
    #[track_caller]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether both senders belong to one channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

#[track_caller]
fn new_receiver<T>(shared: &Shared<T>, what: &'static Operation) -> Receiver<T> {
    let loc = Location::caller();
    let mut st = lock_at(shared, loc, what);
    st.receivers += 1;
    Receiver {
        shared: Arc::clone(shared),
        next: st.tail(),
        loc,
    }
}

impl<T> Sender<T> {
    /// A sender of a new channel of `capacity` (rounded up) with no receiver yet, as
    /// `Sender::new` (receivers come from [`subscribe`](Self::subscribe)).
    ///
    /// # Panics
    /// As [`channel`].
    #[track_caller]
    pub fn new(capacity: usize) -> Self {
        Sender {
            shared: new_channel(capacity, 0),
            loc: Location::caller(),
        }
    }
}

impl<T> Clone for Sender<T> {
    #[track_caller]
    fn clone(&self) -> Self {
        lock(
            &self.shared,
            const { &interleave_test::sync::section("tokio broadcast Sender clone") },
        )
        .senders += 1;
        Sender {
            shared: Arc::clone(&self.shared),
            loc: Location::caller(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let what = const { &interleave_test::sync::section("tokio broadcast Sender drop") };
        let mut st = lock_at(&self.shared, self.loc, what);
        st.senders -= 1;
        if st.senders == 0 {
            let st = &mut *st;
            st.waiting.wake_all(&mut st.later);
        }
    }
}

/// The receiving half, as `broadcast::Receiver`: it gets every value sent while it exists,
/// in order, unless they are overwritten first. Not `Clone` (as Tokio); see
/// [`resubscribe`](Self::resubscribe).
pub struct Receiver<T> {
    shared: Shared<T>,
    /// The position of the next value this receiver gets.
    next: u64,
    /// Where the program made it (its drop is reported there).
    loc: Loc,
}

impl<T> Receiver<T> {
    /// Waits for the next value. `Err(Lagged(n))` when `n` values were overwritten before
    /// this receiver saw them (the next call returns the oldest kept value);
    /// `Err(Closed)` when every sender is dropped and nothing is left. Cancel-safe. Each
    /// poll spends a unit of the task's cooperative budget, as Tokio's (given back while
    /// it waits). (An `async fn` in Tokio; here a function that returns the future, so
    /// that reports show where the program called it.)
    #[track_caller]
    pub fn recv(&mut self) -> impl Future<Output = Result<T, RecvError>> + '_
    where
        T: Clone,
    {
        let loc = Location::caller();
        let recv = std::future::poll_fn(move |cx| {
            let mut st = lock_at(
                &self.shared,
                loc,
                const { &interleave_test::sync::section("tokio broadcast recv") },
            );
            match st.take(&mut self.next) {
                Ok(value) => Poll::Ready(Ok(value)),
                Err(TryRecvError::Lagged(n)) => Poll::Ready(Err(RecvError::Lagged(n))),
                Err(TryRecvError::Closed) => Poll::Ready(Err(RecvError::Closed)),
                Err(TryRecvError::Empty) => {
                    st.waiting.add(cx.waker());
                    Poll::Pending
                }
            }
        });
        cooperative(recv)
    }

    /// The next value without waiting: `Err(Empty)` when none is there yet, else as
    /// [`recv`](Self::recv).
    #[track_caller]
    pub fn try_recv(&mut self) -> Result<T, TryRecvError>
    where
        T: Clone,
    {
        lock(
            &self.shared,
            const { &interleave_test::sync::section("tokio broadcast try_recv") },
        )
        .take(&mut self.next)
    }

    /// Waits for the next value from synchronous code.
    ///
    /// # Panics
    /// Inside a future polled by a `block_on` (Tokio's rule).
    #[track_caller]
    pub fn blocking_recv(&mut self) -> Result<T, RecvError>
    where
        T: Clone,
    {
        super::no_blocking_in_async("broadcast::Receiver::blocking_recv");
        interleave_test::future::block_on(self.recv())
    }

    /// A new receiver of the same channel that sees the values sent from now on.
    #[track_caller]
    pub fn resubscribe(&self) -> Receiver<T> {
        new_receiver(
            &self.shared,
            const { &interleave_test::sync::section("tokio broadcast resubscribe") },
        )
    }

    /// How many values were sent that this receiver has not seen, overwritten ones
    /// included (more than the capacity means the next `recv` reports a lag).
    #[track_caller]
    pub fn len(&self) -> usize {
        (lock(
            &self.shared,
            const { &interleave_test::sync::section("tokio broadcast len") },
        )
        .tail()
            - self.next) as usize
    }

    /// Whether this receiver has seen every value sent.
    #[track_caller]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether both receivers belong to one channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let what = const { &interleave_test::sync::section("tokio broadcast Receiver drop") };
        let mut st = lock_at(&self.shared, self.loc, what);
        st.receivers -= 1;
        if st.receivers == 0 {
            let st = &mut *st;
            st.closing.wake_all(&mut st.later);
        }
        let from = self.next.saturating_sub(st.head) as usize;
        for slot in st.slots.iter_mut().skip(from) {
            slot.unseen -= 1;
        }
        st.trim();
    }
}

debug_without_bound!(Sender, Receiver);
