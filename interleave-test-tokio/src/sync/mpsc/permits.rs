//! Reserving slots of a bounded channel beyond one borrowed [`Permit`]: an [`OwnedPermit`]
//! (`reserve_owned`, `try_reserve_owned`), which holds its sender, and a
//! [`PermitIterator`] of `n` permits (`reserve_many`, `try_reserve_many`), and
//! `try_reserve`. Each
//! reservation waits in the channel's fair queue of senders, as `send` does; a permit not
//! used gives its slot back when dropped.

use std::future::Future;
use std::iter::FusedIterator;
use std::panic::Location;
use std::sync::Arc;

use super::error::{SendError, TrySendError};
use super::{
    Permit, Receiver, Sender, Shared, UnboundedReceiver, UnboundedSender, WeakSender,
    WeakUnboundedSender,
};
use crate::sync::sem::{Acquire, AcquireNames, HasSem, Sem};
use interleave_engine::primitive::{Loc, Operation};

/// What reports call the waits for slots.
const RESERVE_OWNED: &AcquireNames = &[
    interleave_test::sync::section("tokio mpsc reserve_owned"),
    interleave_test::sync::section("tokio mpsc reserve_owned dropped"),
];
const RESERVE_MANY: &AcquireNames = &[
    interleave_test::sync::section("tokio mpsc reserve_many"),
    interleave_test::sync::section("tokio mpsc reserve_many dropped"),
];

impl<T> Sender<T> {
    /// A slot if one is free now.
    #[track_caller]
    pub fn try_reserve(&self) -> Result<Permit<'_, T>, TrySendError<()>> {
        let loc = Location::caller();
        match self
            .end
            .shared
            .lock_at(
                loc,
                const { &interleave_test::sync::section("tokio mpsc try_reserve") },
            )
            .sem
            .try_acquire(1)
        {
            Ok(()) => Ok(Permit {
                sender: Some(self),
                loc,
            }),
            Err(true) => Err(TrySendError::Closed(())),
            Err(false) => Err(TrySendError::Full(())),
        }
    }

    /// Waits for a free slot and holds it, as `reserve`, in a permit that owns this
    /// sender (for a permit kept beyond the sender's borrow). Cancel-safe.
    #[track_caller]
    pub fn reserve_owned(self) -> impl Future<Output = Result<OwnedPermit<T>, SendError<()>>> {
        let loc = Location::caller();
        async move {
            let shared = Arc::clone(&self.end.shared);
            Acquire::new(&*shared, 1, loc, RESERVE_OWNED)
                .await
                .map_err(|_| SendError(()))?;
            Ok(OwnedPermit {
                sender: Some(self),
                loc,
            })
        }
    }

    /// A slot if one is free now, in a permit that owns this sender; the sender comes
    /// back in the error otherwise.
    #[track_caller]
    pub fn try_reserve_owned(self) -> Result<OwnedPermit<T>, TrySendError<Self>> {
        let loc = Location::caller();
        let what = const { &interleave_test::sync::section("tokio mpsc try_reserve_owned") };
        let taken = self.end.shared.lock_at(loc, what).sem.try_acquire(1);
        match taken {
            Ok(()) => Ok(OwnedPermit {
                sender: Some(self),
                loc,
            }),
            Err(true) => Err(TrySendError::Closed(self)),
            Err(false) => Err(TrySendError::Full(self)),
        }
    }

    /// Waits until `n` slots are free and holds them all: an iterator of `n` permits.
    /// Fails at once if `n` is more than the channel has (Tokio's rule), or when the
    /// receiver is gone or closed. Cancel-safe.
    #[track_caller]
    pub fn reserve_many(
        &self,
        n: usize,
    ) -> impl Future<Output = Result<PermitIterator<'_, T>, SendError<()>>> + '_ {
        let loc = Location::caller();
        async move {
            if n > self.max_capacity() {
                return Err(SendError(()));
            }
            Acquire::new(&*self.end.shared, n, loc, RESERVE_MANY)
                .await
                .map_err(|_| SendError(()))?;
            Ok(PermitIterator {
                sender: self,
                left: n,
                loc,
            })
        }
    }

    /// `n` slots if they are free now (`Full` if `n` is more than the channel has).
    #[track_caller]
    pub fn try_reserve_many(&self, n: usize) -> Result<PermitIterator<'_, T>, TrySendError<()>> {
        let loc = Location::caller();
        if n > self.max_capacity() {
            return Err(TrySendError::Full(()));
        }
        let what = const { &interleave_test::sync::section("tokio mpsc try_reserve_many") };
        match self.end.shared.lock_at(loc, what).sem.try_acquire(n) {
            Ok(()) => Ok(PermitIterator {
                sender: self,
                left: n,
                loc,
            }),
            Err(true) => Err(TrySendError::Closed(())),
            Err(false) => Err(TrySendError::Full(())),
        }
    }
}

impl<T> HasSem for Shared<T> {
    /// A reservation that fails on the closed channel, or is dropped, gives back what it
    /// was given: if that leaves the closed channel idle, the receiver is woken to see the
    /// end (Tokio wakes it on such a failure or cancellation).
    fn with_sem<R>(&self, loc: Loc, what: &'static Operation, f: impl FnOnce(&mut Sem) -> R) -> R {
        let mut chan = self.lock_at(loc, what);
        let out = f(&mut chan.sem);
        if chan.closed {
            chan.wake_if_finished();
        }
        out
    }
}

/// A reserved slot of a bounded channel that owns its sender, as `mpsc::OwnedPermit`:
/// [`send`](Self::send) fills it and gives the sender back; dropped unused, it gives the
/// slot back, then drops the sender.
pub struct OwnedPermit<T> {
    sender: Option<Sender<T>>,
    /// Where the program reserved it (its drop is reported there).
    loc: Loc,
}

impl<T> OwnedPermit<T> {
    /// Sends `value` in the reserved slot (it always succeeds, as a [`Permit`]'s send) and
    /// returns the sender.
    #[track_caller]
    pub fn send(mut self, value: T) -> Sender<T> {
        let sender = self.sender.take().expect("a permit sends once");
        let what = const { &interleave_test::sync::section("tokio mpsc OwnedPermit send") };
        sender
            .end
            .shared
            .lock_at(Location::caller(), what)
            .push(value);
        sender
    }

    /// Gives the slot back unused and returns the sender.
    #[track_caller]
    pub fn release(mut self) -> Sender<T> {
        let sender = self.sender.take().expect("a permit is released once");
        let what = const { &interleave_test::sync::section("tokio mpsc OwnedPermit release") };
        sender.end.shared.give_back(1, Location::caller(), what);
        sender
    }

    /// Whether `other` holds a slot of the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        match (&self.sender, &other.sender) {
            (Some(a), Some(b)) => a.same_channel(b),
            _ => false,
        }
    }

    /// Whether `sender` sends on the channel of this permit's slot.
    pub fn same_channel_as_sender(&self, sender: &Sender<T>) -> bool {
        self.sender.as_ref().is_some_and(|s| s.same_channel(sender))
    }
}

impl<T> Drop for OwnedPermit<T> {
    fn drop(&mut self) {
        if let Some(sender) = self.sender.take() {
            let what = const { &interleave_test::sync::section("tokio mpsc OwnedPermit drop") };
            sender.end.shared.give_back(1, self.loc, what);
        }
    }
}

/// The permits of [`Sender::reserve_many`], as `mpsc::PermitIterator`: each yields a
/// [`Permit`]; the slots of those not taken go back when it is dropped.
pub struct PermitIterator<'a, T> {
    sender: &'a Sender<T>,
    left: usize,
    /// Where the program reserved them.
    loc: Loc,
}

impl<'a, T> Iterator for PermitIterator<'a, T> {
    type Item = Permit<'a, T>;

    fn next(&mut self) -> Option<Permit<'a, T>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(Permit {
            sender: Some(self.sender),
            loc: self.loc,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<T> ExactSizeIterator for PermitIterator<'_, T> {}

impl<T> FusedIterator for PermitIterator<'_, T> {}

impl<T> Drop for PermitIterator<'_, T> {
    fn drop(&mut self) {
        if self.left > 0 {
            let what = const { &interleave_test::sync::section("tokio mpsc PermitIterator drop") };
            self.sender.end.shared.give_back(self.left, self.loc, what);
        }
    }
}

debug_without_bound!(OwnedPermit, PermitIterator<'a>);

/// Unwind safety without a bound on `T`, as Tokio's handles have: a panic cannot leave a
/// channel's state half changed (each operation changes it in one step under its lock).
macro_rules! unwind_safe_without_bound {
    ($($name:ident $(<$lt:lifetime>)?),* $(,)?) => {$(
        impl<$($lt,)? T> std::panic::UnwindSafe for $name<$($lt,)? T> {}
        impl<$($lt,)? T> std::panic::RefUnwindSafe for $name<$($lt,)? T> {}
    )*};
}

unwind_safe_without_bound!(
    Sender,
    Permit<'a>,
    Receiver,
    OwnedPermit,
    PermitIterator<'a>,
    UnboundedSender,
    UnboundedReceiver,
    WeakSender,
    WeakUnboundedSender,
);
