//! Weak senders, as `tokio::sync::mpsc::WeakSender` and `WeakUnboundedSender`: they do not
//! keep the channel open (a receiver sees the end once every strong sender is gone), and
//! upgrade to a sender only while another one is left. Each operation on the counts is a
//! switch point, as a sender's clone and drop are.

use std::panic::Location;
use std::sync::Arc;

use super::{Receiver, Sender, SenderEnd, Shared, UnboundedSender};
use interleave_engine::primitive::{Loc, Operation};

/// A sender that does not keep the channel open, as `mpsc::WeakSender`: made by
/// [`Sender::downgrade`]; [`upgrade`](Self::upgrade) gives a [`Sender`] while another one is
/// left.
pub struct WeakSender<T> {
    end: WeakEnd<T>,
}

/// [`WeakSender`] for an unbounded channel, as `mpsc::WeakUnboundedSender`.
pub struct WeakUnboundedSender<T> {
    end: WeakEnd<T>,
}

/// What both kinds of weak sender are: an uncounted reference to the channel, made (and
/// dropped, in reports) where the program made it.
#[derive(Debug)]
struct WeakEnd<T> {
    shared: Arc<Shared<T>>,
    loc: Loc,
}

impl<T> WeakEnd<T> {
    /// A weak end of `shared`, made by `what` at `loc`.
    fn new(shared: &Arc<Shared<T>>, loc: Loc, what: &'static Operation) -> Self {
        shared.lock_at(loc, what).weak += 1;
        WeakEnd {
            shared: Arc::clone(shared),
            loc,
        }
    }

    /// A sender, if one is left.
    fn upgrade(&self, loc: Loc) -> Option<SenderEnd<T>> {
        let mut chan = self.shared.lock_at(
            loc,
            const { &interleave_test::sync::section("tokio mpsc WeakSender upgrade") },
        );
        if chan.senders == 0 {
            return None;
        }
        chan.senders += 1;
        drop(chan);
        Some(SenderEnd::first(&self.shared, loc))
    }

    fn counts(&self, loc: Loc, what: &'static Operation) -> (usize, usize) {
        let chan = self.shared.lock_at(loc, what);
        (chan.senders, chan.weak)
    }
}

impl<T> Clone for WeakEnd<T> {
    #[track_caller]
    fn clone(&self) -> Self {
        let what = const { &interleave_test::sync::section("tokio mpsc WeakSender clone") };
        WeakEnd::new(&self.shared, Location::caller(), what)
    }
}

impl<T> Drop for WeakEnd<T> {
    fn drop(&mut self) {
        let what = const { &interleave_test::sync::section("tokio mpsc WeakSender drop") };
        self.shared.lock_at(self.loc, what).weak -= 1;
    }
}

impl<T> SenderEnd<T> {
    /// A weak end of this sender's channel, made at `loc`.
    fn downgrade(&self, loc: Loc) -> WeakEnd<T> {
        WeakEnd::new(
            &self.shared,
            loc,
            const { &interleave_test::sync::section("tokio mpsc Sender downgrade") },
        )
    }

    /// The senders and weak senders of the channel.
    fn counts(&self, loc: Loc, what: &'static Operation) -> (usize, usize) {
        let chan = self.shared.lock_at(loc, what);
        (chan.senders, chan.weak)
    }
}

/// The names of the counts' reads, strong then weak.
const COUNTS: [Operation; 2] = [
    interleave_test::sync::section("tokio mpsc strong_count"),
    interleave_test::sync::section("tokio mpsc weak_count"),
];

macro_rules! weak_pair {
    ($strong:ident, $weak:ident) => {
        impl<T> $strong<T> {
            /// A sender that does not keep the channel open.
            #[track_caller]
            pub fn downgrade(&self) -> $weak<T> {
                $weak {
                    end: self.end.downgrade(Location::caller()),
                }
            }

            /// How many senders the channel has (this one included).
            #[track_caller]
            pub fn strong_count(&self) -> usize {
                self.end.counts(Location::caller(), &COUNTS[0]).0
            }

            /// How many weak senders the channel has.
            #[track_caller]
            pub fn weak_count(&self) -> usize {
                self.end.counts(Location::caller(), &COUNTS[1]).1
            }
        }

        impl<T> $weak<T> {
            /// A sender of the channel, or `None` once every sender is gone.
            #[track_caller]
            pub fn upgrade(&self) -> Option<$strong<T>> {
                let end = self.end.upgrade(Location::caller())?;
                Some($strong { end })
            }

            /// How many senders the channel has.
            #[track_caller]
            pub fn strong_count(&self) -> usize {
                self.end.counts(Location::caller(), &COUNTS[0]).0
            }

            /// How many weak senders the channel has (this one included).
            #[track_caller]
            pub fn weak_count(&self) -> usize {
                self.end.counts(Location::caller(), &COUNTS[1]).1
            }
        }

        impl<T> Clone for $weak<T> {
            #[track_caller]
            fn clone(&self) -> Self {
                $weak {
                    end: self.end.clone(),
                }
            }
        }
    };
}

weak_pair!(Sender, WeakSender);
weak_pair!(UnboundedSender, WeakUnboundedSender);

impl<T> Receiver<T> {
    /// How many senders the channel has, as `sender_strong_count`.
    #[track_caller]
    pub fn sender_strong_count(&self) -> usize {
        let what = const { &interleave_test::sync::section("tokio mpsc sender_strong_count") };
        self.shared.lock_at(Location::caller(), what).senders
    }

    /// How many weak senders the channel has, as `sender_weak_count`.
    #[track_caller]
    pub fn sender_weak_count(&self) -> usize {
        let what = const { &interleave_test::sync::section("tokio mpsc sender_weak_count") };
        self.shared.lock_at(Location::caller(), what).weak
    }

    /// Free slots now, as `Sender::capacity`.
    #[track_caller]
    pub fn capacity(&self) -> usize {
        let what = const { &interleave_test::sync::section("tokio mpsc capacity") };
        self.shared
            .lock_at(Location::caller(), what)
            .sem
            .available()
    }

    /// The channel's number of slots (fixed: no switch point).
    pub fn max_capacity(&self) -> usize {
        self.shared.bound.unwrap_or(usize::MAX)
    }
}

debug_without_bound!(WeakSender, WeakUnboundedSender);
