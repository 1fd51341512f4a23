//! A channel for one value, as `tokio::sync::oneshot`.

use std::future::Future;
use std::panic::Location;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::wake_list::{self, Deferred, Section, WakeList};
use interleave_engine::primitive::{Loc, Operation, WaitQueue};
use interleave_test::future::budget;
use interleave_test::sync::Mutex;

/// Errors of this module.
pub mod error {
    /// The sender was dropped without sending, as `oneshot::error::RecvError`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct RecvError(pub(super) ());

    impl std::fmt::Display for RecvError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("channel closed")
        }
    }

    impl std::error::Error for RecvError {}

    /// Why `try_recv` has no value, as `oneshot::error::TryRecvError`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum TryRecvError {
        /// Nothing was sent yet.
        Empty,
        /// The sender was dropped without sending, the receiver closed with nothing
        /// sent, or the value was taken.
        Closed,
    }

    impl std::fmt::Display for TryRecvError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            match self {
                TryRecvError::Empty => f.write_str("channel empty"),
                TryRecvError::Closed => f.write_str("channel closed"),
            }
        }
    }

    impl std::error::Error for TryRecvError {}
}

use error::{RecvError, TryRecvError};

#[derive(Debug)]
struct State<T> {
    value: Option<T>,
    /// The sender sent or was dropped.
    sender_done: bool,
    /// The receiver was dropped or closed.
    receiver_closed: bool,
    /// The value was taken.
    taken: bool,
    /// The receiver, while it waits for the value.
    rx: WaitQueue,
    /// The sender, while it waits in `closed`.
    tx: WaitQueue,
    /// Wakers to wake or drop once the lock is released.
    later: WakeList,
}

impl<T> Deferred for State<T> {
    fn deferred(&mut self) -> WakeList {
        self.later.take()
    }
}

type Shared<T> = Arc<Mutex<State<T>>>;

/// Locks the channel for the program's operation `what` at `loc`.
fn lock<'a, T>(shared: &'a Shared<T>, loc: Loc, what: &'static Operation) -> Section<'a, State<T>> {
    wake_list::section(shared, loc, what)
}

/// A channel for one value, as `tokio::sync::oneshot::channel`. The receiver's polls and
/// both ends' drops are reported where the program called this.
#[track_caller]
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let loc = Location::caller();
    let state = State {
        value: None,
        sender_done: false,
        receiver_closed: false,
        taken: false,
        rx: WaitQueue::new("receive from"),
        tx: WaitQueue::new("outlive the receiver of"),
        later: WakeList::new(),
    };
    let shared = Arc::new(Mutex::named(state, "tokio oneshot channel", None));
    let sender = Sender {
        shared: Some(Arc::clone(&shared)),
        loc,
    };
    (
        sender,
        Receiver {
            shared,
            loc,
            terminated: false,
        },
    )
}

/// Sends the value, as `oneshot::Sender`.
#[derive(Debug)]
pub struct Sender<T> {
    shared: Option<Shared<T>>,
    /// Where the program made the channel.
    loc: Loc,
}

impl<T> Sender<T> {
    /// Sends `value`, or gives it back when the receiver is gone or closed. A switch point.
    #[track_caller]
    pub fn send(mut self, value: T) -> Result<(), T> {
        let shared = self.shared.take().expect("a sender sends once");
        let mut st = lock(
            &shared,
            Location::caller(),
            const { &interleave_test::sync::section("tokio oneshot send") },
        );
        st.sender_done = true;
        if st.receiver_closed {
            return Err(value);
        }
        st.value = Some(value);
        let st = &mut *st;
        st.rx.wake_all(&mut st.later);
        Ok(())
    }

    /// Whether the receiver was dropped or closed.
    #[track_caller]
    pub fn is_closed(&self) -> bool {
        self.shared.as_ref().is_some_and(|s| {
            lock(
                s,
                Location::caller(),
                const { &interleave_test::sync::section("tokio oneshot is_closed") },
            )
            .receiver_closed
        })
    }

    /// Waits until the receiver is dropped or closed. (An `async fn` in Tokio; here a
    /// function that returns the future, so that reports show where the program called
    /// it.)
    #[track_caller]
    pub fn closed(&mut self) -> impl Future<Output = ()> + '_ {
        let loc = Location::caller();
        std::future::poll_fn(move |cx| self.poll_closed_at(cx, loc))
    }

    /// Polls for the receiver's end.
    #[track_caller]
    pub fn poll_closed(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.poll_closed_at(cx, Location::caller())
    }

    /// Spends a unit of the task's cooperative budget, as Tokio's (a unit given back while
    /// the receiver is there).
    fn poll_closed_at(&mut self, cx: &mut Context<'_>, loc: Loc) -> Poll<()> {
        let shared = self.shared.as_ref().expect("a sender that did not send");
        budget::charged(cx, |cx| {
            let mut st = lock(
                shared,
                loc,
                const { &interleave_test::sync::section("tokio oneshot closed") },
            );
            if st.receiver_closed {
                return Poll::Ready(());
            }
            let st = &mut *st;
            st.tx.set_only(cx.waker(), &mut st.later);
            Poll::Pending
        })
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let Some(shared) = self.shared.take() else {
            return;
        };
        let mut st = lock(
            &shared,
            self.loc,
            const { &interleave_test::sync::section("tokio oneshot Sender drop") },
        );
        st.sender_done = true;
        let st = &mut *st;
        st.rx.wake_all(&mut st.later);
        st.tx.clear(&mut st.later);
    }
}

/// Receives the value: a future of it, as `oneshot::Receiver`.
#[derive(Debug)]
pub struct Receiver<T> {
    shared: Shared<T>,
    /// Where the program made the channel.
    loc: Loc,
    /// It gave its outcome: awaited to the end, or `try_recv` gave the value or `Closed`.
    terminated: bool,
}

impl<T> Receiver<T> {
    /// Closes the channel: the sender's `send` fails from now on; a value already sent can
    /// still be received, and with none, receiving fails at once (as Tokio's).
    #[track_caller]
    pub fn close(&mut self) {
        let mut st = lock(
            &self.shared,
            Location::caller(),
            const { &interleave_test::sync::section("tokio oneshot close") },
        );
        st.receiver_closed = true;
        let st = &mut *st;
        st.tx.wake_all(&mut st.later);
    }

    /// The value if it was sent, without waiting.
    #[track_caller]
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        let mut st = lock(
            &self.shared,
            Location::caller(),
            const { &interleave_test::sync::section("tokio oneshot try_recv") },
        );
        if let Some(value) = st.value.take() {
            st.taken = true;
            drop(st);
            self.terminated = true;
            return Ok(value);
        }
        let closed = st.sender_done || st.taken || st.receiver_closed;
        drop(st);
        self.terminated |= closed;
        match closed {
            true => Err(TryRecvError::Closed),
            false => Err(TryRecvError::Empty),
        }
    }

    /// Whether it already gave its outcome (awaited to the end, or `try_recv` gave the
    /// value or `Closed`), as `is_terminated`: it must not be polled again. No switch
    /// point: only this receiver knows.
    pub fn is_terminated(&self) -> bool {
        self.terminated
    }

    /// Whether no value waits to be received, as `is_empty`: nothing was sent, the sender
    /// was dropped without sending, or the value was taken.
    #[track_caller]
    pub fn is_empty(&self) -> bool {
        if self.terminated {
            return true;
        }
        let what = const { &interleave_test::sync::section("tokio oneshot is_empty") };
        lock(&self.shared, Location::caller(), what).value.is_none()
    }

    /// Waits for the value from synchronous code.
    ///
    /// # Panics
    /// Inside a future polled by a `block_on` (Tokio's rule).
    #[track_caller]
    pub fn blocking_recv(self) -> Result<T, RecvError> {
        super::no_blocking_in_async("oneshot::Receiver::blocking_recv");
        interleave_test::future::block_on(self)
    }
}

impl<T> Future for Receiver<T> {
    type Output = Result<T, RecvError>;

    /// Spends a unit of the task's cooperative budget, as Tokio's (a unit given back while
    /// it waits).
    ///
    /// # Panics
    /// When polled after it gave its outcome (Tokio's message).
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        assert!(!self.terminated, "called after complete");
        budget::charged(cx, |cx| self.get_mut().poll_value(cx))
    }
}

impl<T> Receiver<T> {
    /// The value or the error if either is there, else `Pending` with `cx`'s waker kept.
    fn poll_value(&mut self, cx: &mut Context<'_>) -> Poll<Result<T, RecvError>> {
        let mut st = lock(
            &self.shared,
            self.loc,
            const { &interleave_test::sync::section("tokio oneshot recv") },
        );
        let outcome = if let Some(value) = st.value.take() {
            st.taken = true;
            Ok(value)
        } else if st.sender_done || st.taken || st.receiver_closed {
            // Closed by `close` with nothing sent: nothing can come any more (Tokio).
            Err(RecvError(()))
        } else {
            let st = &mut *st;
            st.rx.set_only(cx.waker(), &mut st.later);
            return Poll::Pending;
        };
        drop(st);
        self.terminated = true;
        Poll::Ready(outcome)
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let mut st = lock(
            &self.shared,
            self.loc,
            const { &interleave_test::sync::section("tokio oneshot Receiver drop") },
        );
        st.receiver_closed = true;
        let st = &mut *st;
        st.tx.wake_all(&mut st.later);
        st.rx.clear(&mut st.later);
    }
}
