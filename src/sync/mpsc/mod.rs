//! Multi-producer, single-consumer channels, with the names, paths and signatures of
//! [`std::sync::mpsc`]; the error types are std's own.
//!
//! Every send, receive and drop of an end is a switch point, so the explorer tries the orders
//! in which values arrive and ends disconnect. A thread waiting on a channel shows in
//! deadlock reports as "waits to receive on Channel #N" or "waits to send on Channel #N".
//!
//! For data races and [`current::clock`](crate::current::clock), a receive knows the send
//! of the value it took and what happened before that send, not what the sender did after
//! it. A send on a bounded channel knows the receive that made its room, a rendezvous send
//! returns knowing the receive that took its value, a receive that finds every sender gone
//! knows their drops, and a send that fails knows the receiver's drop. Nothing else is
//! ordered: std's implementation also orders two senders' sends, and a rendezvous
//! `try_send` after the waiting receiver's arrival, but std does not promise it, so a
//! program that relies on it is reported.
//!
//! ```
//! use interleave_test::sync::mpsc;
//! use interleave_test::{thread, Builder};
//!
//! let report = Builder::new().seed(3).iterations(50).check(|| {
//!     let (tx, rx) = mpsc::channel();
//!     let tx2 = tx.clone();
//!     thread::spawn(move || tx.send(1).unwrap());
//!     thread::spawn(move || tx2.send(2).unwrap());
//!     let mut got: Vec<i32> = rx.iter().collect();
//!     got.sort();
//!     assert_eq!(got, [1, 2]);
//! });
//! assert_eq!(report.unwrap().executions, 50);
//! ```

mod chan;

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::panic::Location;
use std::sync::Arc;
use std::time::Duration;

pub use std::sync::mpsc::{RecvError, RecvTimeoutError, SendError, TryRecvError, TrySendError};

use self::chan::Chan;
use crate::primitive::Loc;

/// A new unbounded channel, as [`std::sync::mpsc::channel`]: `send` never blocks.
#[track_caller]
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let chan = Arc::new(Chan::new(None));
    let loc = Location::caller();
    (
        Sender {
            chan: Arc::clone(&chan),
            loc,
        },
        Receiver::new(chan, loc),
    )
}

/// A new channel holding at most `bound` values, as [`std::sync::mpsc::sync_channel`].
///
/// `send` blocks while the buffer is full. With `bound == 0` the channel is a rendezvous:
/// `send` returns only once the receiver has taken the value.
#[track_caller]
pub fn sync_channel<T>(bound: usize) -> (SyncSender<T>, Receiver<T>) {
    let chan = Arc::new(Chan::new(Some(bound)));
    let loc = Location::caller();
    (
        SyncSender {
            chan: Arc::clone(&chan),
            loc,
        },
        Receiver::new(chan, loc),
    )
}

/// The sending end of a [`channel`], as [`std::sync::mpsc::Sender`].
///
/// # Differences from std
/// - `send` and dropping a sender are switch points (dropping the last one disconnects).
///   Dropping while the execution tears down is not.
/// - Cloning is not a switch point: it has no effect another thread can see.
pub struct Sender<T> {
    chan: Arc<Chan<T>>,
    /// Where this sender was created (for the switch point of its drop).
    loc: Loc,
}

impl<T> Sender<T> {
    /// Queues `value` for the receiver; fails with the value back if the receiver is gone.
    #[track_caller]
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        self.chan.send(value, Location::caller())
    }
}

impl<T> Clone for Sender<T> {
    #[track_caller]
    fn clone(&self) -> Self {
        self.chan.add_sender();
        Sender {
            chan: Arc::clone(&self.chan),
            loc: Location::caller(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        self.chan.drop_sender(self.loc);
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender").finish_non_exhaustive()
    }
}

/// The sending end of a [`sync_channel`], as [`std::sync::mpsc::SyncSender`].
///
/// # Differences from std
/// - `send`, `try_send` and dropping a sender are switch points. Dropping while the
///   execution tears down is not.
/// - When room frees up, every sender blocked on the channel is woken and they race for it,
///   so each order in which they may proceed is explored (std wakes them one at a time but
///   does not promise an order either). No sender wakes spuriously.
/// - On a rendezvous channel (`bound == 0`) the value waits in the channel until the
///   receiver takes it, so `try_recv` takes it, as in std.
/// - `try_send` on a rendezvous channel succeeds only while the receiver is blocked in
///   `recv` or `recv_timeout` and no other value is being handed over.
pub struct SyncSender<T> {
    chan: Arc<Chan<T>>,
    /// Where this sender was created (for the switch point of its drop).
    loc: Loc,
}

impl<T> SyncSender<T> {
    /// Queues `value`, blocking while the buffer is full (on a rendezvous channel, until
    /// the receiver takes it). Fails with the value back if the receiver is gone, also while
    /// blocked.
    #[track_caller]
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        self.chan.send(value, Location::caller())
    }

    /// Queues `value` only if that needs no waiting; otherwise gives it back in
    /// [`TrySendError::Full`] (or [`TrySendError::Disconnected`] if the receiver is gone).
    #[track_caller]
    pub fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
        self.chan.try_send(value, Location::caller())
    }
}

impl<T> Clone for SyncSender<T> {
    #[track_caller]
    fn clone(&self) -> Self {
        self.chan.add_sender();
        SyncSender {
            chan: Arc::clone(&self.chan),
            loc: Location::caller(),
        }
    }
}

impl<T> Drop for SyncSender<T> {
    fn drop(&mut self) {
        self.chan.drop_sender(self.loc);
    }
}

impl<T> fmt::Debug for SyncSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SyncSender").finish_non_exhaustive()
    }
}

/// The receiving end of a channel, as [`std::sync::mpsc::Receiver`].
///
/// # Differences from std
/// - Every receive and dropping the receiver are switch points. Dropping while the
///   execution tears down is not.
/// - No spurious wake-ups: a blocked `recv` returns only with a value or on disconnection.
/// - `recv_timeout` uses the virtual clock (see [`crate::time`]): it times out when no other
///   thread can make progress, or earlier, while a sender could still act (a decision the
///   search explores), at once in real time.
/// - While the execution tears down after a failure, a receive that would have to wait
///   fails as if every sender were gone, instead of blocking.
pub struct Receiver<T> {
    chan: Arc<Chan<T>>,
    /// Where the channel was created (for the switch point of the drop).
    loc: Loc,
    /// Like std's, the receiver may move between threads but not be shared by them.
    not_sync: PhantomData<Cell<()>>,
}

impl<T> Receiver<T> {
    fn new(chan: Arc<Chan<T>>, loc: Loc) -> Self {
        Receiver {
            chan,
            loc,
            not_sync: PhantomData,
        }
    }

    /// Takes the oldest value if one is queued, without blocking.
    #[track_caller]
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        self.chan.try_recv(Location::caller())
    }

    /// Takes the oldest value, blocking until one arrives; fails once the channel is empty
    /// and every sender is gone.
    #[track_caller]
    pub fn recv(&self) -> Result<T, RecvError> {
        self.chan
            .recv(chan::ops::RECV, None, Location::caller())
            .map_err(|_| RecvError)
    }

    /// Like [`recv`](Self::recv), but gives up after `timeout` of virtual time.
    /// Disconnection is reported before a timeout, as in std.
    #[track_caller]
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        self.chan
            .recv(chan::ops::RECV_TIMEOUT, Some(timeout), Location::caller())
    }

    /// An iterator that blocks for each value and ends on disconnection. Its receives are
    /// reported at the line that called `iter`.
    #[track_caller]
    pub fn iter(&self) -> Iter<'_, T> {
        Iter {
            rx: self,
            loc: Location::caller(),
        }
    }

    /// An iterator over the values queued now; it never blocks. Its receives are reported at
    /// the line that called `try_iter`.
    #[track_caller]
    pub fn try_iter(&self) -> TryIter<'_, T> {
        TryIter {
            rx: self,
            loc: Location::caller(),
        }
    }

    fn recv_at(&self, loc: Loc) -> Option<T> {
        self.chan.recv(chan::ops::RECV, None, loc).ok()
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        self.chan.drop_receiver(self.loc);
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver").finish_non_exhaustive()
    }
}

/// Borrowing iterator from [`Receiver::iter`]: blocks for each value, ends on disconnection.
#[derive(Debug)]
pub struct Iter<'a, T> {
    rx: &'a Receiver<T>,
    /// Where the iteration started: the receives are reported there.
    loc: Loc,
}

impl<T> Iterator for Iter<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.rx.recv_at(self.loc)
    }
}

/// Borrowing iterator from [`Receiver::try_iter`]: yields the queued values, never blocks.
#[derive(Debug)]
pub struct TryIter<'a, T> {
    rx: &'a Receiver<T>,
    /// Where the iteration started: the receives are reported there.
    loc: Loc,
}

impl<T> Iterator for TryIter<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.rx.chan.try_recv(self.loc).ok()
    }
}

/// Owning iterator of a [`Receiver`]: blocks for each value, ends on disconnection.
#[derive(Debug)]
pub struct IntoIter<T> {
    rx: Receiver<T>,
    /// Where the iteration started: the receives are reported there.
    loc: Loc,
}

impl<T> Iterator for IntoIter<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.rx.recv_at(self.loc)
    }
}

impl<'a, T> IntoIterator for &'a Receiver<T> {
    type Item = T;
    type IntoIter = Iter<'a, T>;

    #[track_caller]
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<T> IntoIterator for Receiver<T> {
    type Item = T;
    type IntoIter = IntoIter<T>;

    #[track_caller]
    fn into_iter(self) -> IntoIter<T> {
        IntoIter {
            rx: self,
            loc: Location::caller(),
        }
    }
}
