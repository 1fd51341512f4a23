//! Weak senders of a [`broadcast`](super) channel ([`WeakSender`]), the sender and
//! receiver counts, [`Sender::closed`] and [`Receiver::is_closed`].

use std::future::Future;
use std::panic::Location;
use std::sync::Arc;
use std::task::Poll;

use super::{Receiver, Sender, Shared, lock, lock_at};

use interleave_engine::primitive::Loc;

/// A sender that does not keep the channel open, as `broadcast::WeakSender`: made by
/// [`Sender::downgrade`], turned back into a sender by [`upgrade`](Self::upgrade) while
/// some sender exists.
pub struct WeakSender<T> {
    shared: Shared<T>,
    /// Where the program made it (its drop is reported there).
    loc: Loc,
}

impl<T> Sender<T> {
    /// A weak sender of the same channel.
    #[track_caller]
    pub fn downgrade(&self) -> WeakSender<T> {
        lock(
            &self.shared,
            const { &interleave_test::sync::section("tokio broadcast downgrade") },
        )
        .weak += 1;
        WeakSender {
            shared: Arc::clone(&self.shared),
            loc: Location::caller(),
        }
    }

    /// Completes once every receiver is dropped (at once if none exists), as
    /// `Sender::closed`. Cancel-safe.
    #[track_caller]
    pub fn closed(&self) -> impl Future<Output = ()> + '_ {
        let loc = Location::caller();
        std::future::poll_fn(move |cx| {
            let mut st = lock_at(
                &self.shared,
                loc,
                const { &interleave_test::sync::section("tokio broadcast closed") },
            );
            if st.receivers == 0 {
                return Poll::Ready(());
            }
            st.closing.add(cx.waker());
            Poll::Pending
        })
    }
}

impl<T> Receiver<T> {
    /// Whether every sender is dropped (values still kept can be received).
    #[track_caller]
    pub fn is_closed(&self) -> bool {
        lock(
            &self.shared,
            const { &interleave_test::sync::section("tokio broadcast is_closed") },
        )
        .senders
            == 0
    }
}

impl<T> WeakSender<T> {
    /// A sender again, unless every sender is dropped.
    #[track_caller]
    pub fn upgrade(&self) -> Option<Sender<T>> {
        let loc = Location::caller();
        let mut st = lock_at(
            &self.shared,
            loc,
            const { &interleave_test::sync::section("tokio broadcast upgrade") },
        );
        if st.senders == 0 {
            return None;
        }
        st.senders += 1;
        Some(Sender {
            shared: Arc::clone(&self.shared),
            loc,
        })
    }
}

impl<T> Clone for WeakSender<T> {
    #[track_caller]
    fn clone(&self) -> Self {
        lock(
            &self.shared,
            const { &interleave_test::sync::section("tokio broadcast WeakSender clone") },
        )
        .weak += 1;
        WeakSender {
            shared: Arc::clone(&self.shared),
            loc: Location::caller(),
        }
    }
}

impl<T> Drop for WeakSender<T> {
    fn drop(&mut self) {
        let what = const { &interleave_test::sync::section("tokio broadcast WeakSender drop") };
        lock_at(&self.shared, self.loc, what).weak -= 1;
    }
}

/// The two count methods of a handle: how many senders and weak senders the channel has
/// (one switch point each).
macro_rules! counts {
    ($($handle:ident: $strong:ident, $weak:ident;)*) => {$(
        impl<T> $handle<T> {
            /// How many senders the channel has.
            #[track_caller]
            pub fn $strong(&self) -> usize {
                let what = const { &interleave_test::sync::section(concat!("tokio broadcast ", stringify!($strong))) };
                lock(&self.shared, what).senders
            }

            /// How many weak senders the channel has.
            #[track_caller]
            pub fn $weak(&self) -> usize {
                let what = const { &interleave_test::sync::section(concat!("tokio broadcast ", stringify!($weak))) };
                lock(&self.shared, what).weak
            }
        }
    )*};
}

counts! {
    Sender: strong_count, weak_count;
    Receiver: sender_strong_count, sender_weak_count;
    WeakSender: strong_count, weak_count;
}

debug_without_bound!(WeakSender);
