//! The unbounded channel, as `tokio::sync::mpsc::unbounded_channel`: a send never waits.

use std::future::Future;
use std::panic::Location;
use std::sync::Arc;

use super::error::SendError;
use super::{Receiver, SenderEnd, new_shared};

/// An unbounded channel, as `tokio::sync::mpsc::unbounded_channel`.
#[track_caller]
pub fn unbounded_channel<T>() -> (UnboundedSender<T>, UnboundedReceiver<T>) {
    let shared = new_shared(None);
    let loc = Location::caller();
    let tx = UnboundedSender {
        end: SenderEnd::first(&shared, loc),
    };
    (tx, UnboundedReceiver(Receiver { shared, loc }))
}

/// The sending side of an unbounded channel, as `mpsc::UnboundedSender`.
pub struct UnboundedSender<T> {
    pub(super) end: SenderEnd<T>,
}

impl<T> Clone for UnboundedSender<T> {
    #[track_caller]
    fn clone(&self) -> Self {
        UnboundedSender {
            end: self.end.clone(),
        }
    }
}

impl<T> UnboundedSender<T> {
    /// Sends without waiting; the value comes back if the receiver is gone or closed.
    #[track_caller]
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        let mut chan = self
            .end
            .shared
            .lock(const { &interleave_test::sync::section("tokio mpsc send") });
        if chan.closed {
            return Err(SendError(value));
        }
        chan.push(value);
        Ok(())
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

    /// Whether `other` sends on the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.end.shared, &other.end.shared)
    }
}

/// The receiving side of an unbounded channel, as `mpsc::UnboundedReceiver`: the methods
/// of [`Receiver`].
pub struct UnboundedReceiver<T>(Receiver<T>);

impl<T> std::ops::Deref for UnboundedReceiver<T> {
    type Target = Receiver<T>;
    fn deref(&self) -> &Receiver<T> {
        &self.0
    }
}

impl<T> std::ops::DerefMut for UnboundedReceiver<T> {
    fn deref_mut(&mut self) -> &mut Receiver<T> {
        &mut self.0
    }
}

debug_without_bound!(UnboundedSender, UnboundedReceiver);
