//! A channel that keeps only its latest value, as `tokio::sync::watch`.
//!
//! The value sits in a modelled `RwLock` of `interleave_test::sync`: a [`Ref`] holds its read
//! lock, so two receivers borrow at once and a send waits until every `Ref` is gone (a
//! `Ref` kept across an `.await` while the same thread sends is reported as a deadlock;
//! Tokio documents the same risk). The version, the handle counts and the wakers sit in a
//! modelled `Mutex`, taken after the value's lock when both are needed. Every operation is
//! a switch point.
//!
//! As in Tokio, each poll of [`Receiver::changed`], [`Receiver::wait_for`] and
//! [`Sender::closed`] spends a unit of the task's cooperative budget (given back while it
//! waits); with none left it yields before looking at the channel.

use std::future::Future;
use std::ops::Deref;
use std::panic::Location;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::wake_list::{self, Deferred, Section, WakeList};
use crate::task::coop::cooperative;
use interleave_engine::primitive::{Loc, Operation, WaitQueue};
use interleave_test::sync::{Mutex, PoisonError, RwLock, RwLockReadGuard};

/// Errors of this module.
pub mod error {
    /// `send` found no receiver; the value comes back, as `watch::error::SendError`.
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

    /// Every sender was dropped, as `watch::error::RecvError`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct RecvError(pub(super) ());

    impl std::fmt::Display for RecvError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("channel closed")
        }
    }

    impl std::error::Error for RecvError {}
}

use error::{RecvError, SendError};

#[derive(Debug)]
struct State {
    /// Bumped by every change; a receiver has seen the value when its `seen` equals it.
    version: u64,
    senders: usize,
    receivers: usize,
    /// Tasks in `Receiver::changed`, woken by a change or the last sender's drop.
    changed: WaitQueue,
    /// Tasks in `Sender::closed`, woken by the last receiver's drop.
    closed: WaitQueue,
    /// Wakers to wake once the lock is released.
    later: WakeList,
}

impl Deferred for State {
    fn deferred(&mut self) -> WakeList {
        self.later.take()
    }
}

#[derive(Debug)]
struct Shared<T> {
    value: RwLock<T>,
    state: Mutex<State>,
}

impl<T> Shared<T> {
    #[track_caller]
    fn state(&self, what: &'static Operation) -> Section<'_, State> {
        self.state_at(Location::caller(), what)
    }

    /// Locks the state for the program's operation `what` at `loc`.
    fn state_at(&self, loc: Loc, what: &'static Operation) -> Section<'_, State> {
        wake_list::section(&self.state, loc, what)
    }

    #[track_caller]
    fn read(&self) -> RwLockReadGuard<'_, T> {
        self.read_at(Location::caller())
    }

    fn read_at(&self, loc: Loc) -> RwLockReadGuard<'_, T> {
        self.value
            .read_at(loc)
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// A channel holding `init`, with one sender and one receiver, as
/// `tokio::sync::watch::channel`. The receiver has seen `init`.
///
/// ```
/// use interleave_test_tokio::{self as tokio, sync::watch};
///
/// interleave_test::check_async(|| async {
///     let (tx, mut rx) = watch::channel("hello");
///     let _task = tokio::spawn(async move { tx.send("goodbye").unwrap() });
///     rx.changed().await.unwrap();
///     assert_eq!(*rx.borrow_and_update(), "goodbye");
///     assert!(rx.changed().await.is_err(), "the sender is gone, nothing new");
/// })
/// .unwrap();
/// ```
#[track_caller]
pub fn channel<T>(init: T) -> (Sender<T>, Receiver<T>) {
    let loc = Location::caller();
    let tx = Sender::with_receivers(init, 1, loc);
    let shared = Arc::clone(&tx.shared);
    let rx = Receiver {
        shared,
        seen: 0,
        loc,
    };
    (tx, rx)
}

/// A borrow of the channel's value, holding its read lock, as `watch::Ref`.
#[must_use = "a Ref holds the value's read lock until it is dropped"]
pub struct Ref<'a, T> {
    guard: RwLockReadGuard<'a, T>,
    has_changed: bool,
}

impl<T> Ref<'_, T> {
    /// Whether the value was unseen by the receiver when it was borrowed (always `false`
    /// for a borrow of the sender). Unlike [`Receiver::has_changed`] it never fails.
    pub fn has_changed(&self) -> bool {
        self.has_changed
    }
}

impl<T> Deref for Ref<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Ref<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.guard, f)
    }
}

/// The sending half, as `watch::Sender`: it sets the value and wakes the receivers.
/// Cloning it (a switch point) makes another sender; receivers see the channel closed
/// once every sender is dropped.
///
/// # Differences from Tokio
/// [`send`](Self::send) takes the value's write lock before it checks for receivers, so
/// it waits for outstanding [`Ref`]s even when it then fails (Tokio checks first).
#[derive(Debug)]
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
    /// Where the program made it (its drop is reported there).
    loc: Loc,
}

impl<T> Sender<T> {
    /// A sender of a channel holding `init`, with no receiver yet (see
    /// [`subscribe`](Self::subscribe)).
    #[track_caller]
    pub fn new(init: T) -> Sender<T> {
        Sender::with_receivers(init, 0, Location::caller())
    }

    fn with_receivers(init: T, receivers: usize, loc: Loc) -> Sender<T> {
        let state = State {
            version: 0,
            senders: 1,
            receivers,
            changed: WaitQueue::new("see a change of"),
            closed: WaitQueue::new("outlive the receivers of"),
            later: WakeList::new(),
        };
        let shared = Shared {
            value: RwLock::new(init),
            state: Mutex::named(state, "tokio watch channel", None),
        };
        Sender {
            shared: Arc::new(shared),
            loc,
        }
    }

    /// Replaces the value and wakes the receivers, or gives `value` back when no receiver
    /// exists (the channel keeps its old value then).
    #[track_caller]
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        let mut guard = self
            .shared
            .value
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let mut st = self
            .shared
            .state(const { &interleave_test::sync::section("tokio watch send") });
        if st.receivers == 0 {
            return Err(SendError(value));
        }
        let old = std::mem::replace(&mut *guard, value);
        st.changed_now();
        // The receivers are woken, and the old value dropped, with no lock held (Tokio).
        let later = st.unlock();
        drop(guard);
        later.run();
        drop(old);
        Ok(())
    }

    /// Changes the value in place with `modify` and wakes the receivers, even when none
    /// exists.
    #[track_caller]
    pub fn send_modify<F: FnOnce(&mut T)>(&self, modify: F) {
        self.send_if_modified(|value| {
            modify(value);
            true
        });
    }

    /// Calls `modify` on the value; when it returns `true` the value counts as changed and
    /// the receivers are woken, else they are not told. Returns what `modify` returned.
    #[track_caller]
    pub fn send_if_modified<F: FnOnce(&mut T) -> bool>(&self, modify: F) -> bool {
        let mut guard = self
            .shared
            .value
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let modified = modify(&mut guard);
        if modified {
            let mut st = self
                .shared
                .state(const { &interleave_test::sync::section("tokio watch send_if_modified") });
            st.changed_now();
            let later = st.unlock();
            drop(guard);
            later.run();
        }
        modified
    }

    /// Replaces the value (even with no receiver) and returns the old one.
    #[track_caller]
    pub fn send_replace(&self, value: T) -> T {
        let mut old = None;
        self.send_modify(|current| old = Some(std::mem::replace(current, value)));
        old.expect("send_modify calls its closure")
    }

    /// The current value; [`Ref::has_changed`] is `false`.
    #[track_caller]
    pub fn borrow(&self) -> Ref<'_, T> {
        Ref {
            guard: self.shared.read(),
            has_changed: false,
        }
    }

    /// A new receiver that has seen the current value. It reopens a closed channel.
    #[track_caller]
    pub fn subscribe(&self) -> Receiver<T> {
        let loc = Location::caller();
        let mut st = self.shared.state_at(
            loc,
            const { &interleave_test::sync::section("tokio watch subscribe") },
        );
        st.receivers += 1;
        Receiver {
            shared: Arc::clone(&self.shared),
            seen: st.version,
            loc,
        }
    }

    /// How many receivers exist.
    #[track_caller]
    pub fn receiver_count(&self) -> usize {
        self.shared
            .state(const { &interleave_test::sync::section("tokio watch receiver_count") })
            .receivers
    }

    /// How many senders exist, this one included.
    #[track_caller]
    pub fn sender_count(&self) -> usize {
        self.shared
            .state(const { &interleave_test::sync::section("tokio watch sender_count") })
            .senders
    }

    /// Whether no receiver exists.
    #[track_caller]
    pub fn is_closed(&self) -> bool {
        self.receiver_count() == 0
    }

    /// Waits until no receiver exists. Cancel-safe. (An `async fn` in Tokio, as are the
    /// receiver's waits; here functions that return the future, so that reports show where
    /// the program called them.)
    #[track_caller]
    pub fn closed(&self) -> impl Future<Output = ()> + '_ {
        let loc = Location::caller();
        cooperative(std::future::poll_fn(move |cx| {
            let mut st = self.shared.state_at(
                loc,
                const { &interleave_test::sync::section("tokio watch closed") },
            );
            if st.receivers == 0 {
                return Poll::Ready(());
            }
            st.closed.add(cx.waker());
            Poll::Pending
        }))
    }

    /// Whether both senders belong to one channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

impl State {
    fn changed_now(&mut self) {
        self.version += 1;
        self.changed.wake_all(&mut self.later);
    }
}

impl<T: Default> Default for Sender<T> {
    fn default() -> Self {
        Sender::new(T::default())
    }
}

impl<T> Clone for Sender<T> {
    #[track_caller]
    fn clone(&self) -> Self {
        self.shared
            .state(const { &interleave_test::sync::section("tokio watch Sender clone") })
            .senders += 1;
        Sender {
            shared: Arc::clone(&self.shared),
            loc: Location::caller(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let mut st = self.shared.state_at(
            self.loc,
            const { &interleave_test::sync::section("tokio watch Sender drop") },
        );
        st.senders -= 1;
        if st.senders == 0 {
            let st = &mut *st;
            st.changed.wake_all(&mut st.later);
        }
    }
}

/// The receiving half, as `watch::Receiver`: it reads the latest value and waits for
/// changes. Each receiver remembers the last version it has seen; a clone (a switch point)
/// starts with the same.
#[derive(Debug)]
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
    /// The version this receiver saw last.
    seen: u64,
    /// Where the program made it (its drop is reported there).
    loc: Loc,
}

impl<T> Receiver<T> {
    /// The current value, not marked as seen.
    #[track_caller]
    pub fn borrow(&self) -> Ref<'_, T> {
        let (guard, version) = read_versioned(
            &self.shared,
            Location::caller(),
            const { &interleave_test::sync::section("tokio watch borrow") },
        );
        Ref {
            guard,
            has_changed: version != self.seen,
        }
    }

    /// The current value, marked as seen.
    #[track_caller]
    pub fn borrow_and_update(&mut self) -> Ref<'_, T> {
        let (guard, version) = read_versioned(
            &self.shared,
            Location::caller(),
            const { &interleave_test::sync::section("tokio watch borrow_and_update") },
        );
        let has_changed = std::mem::replace(&mut self.seen, version) != version;
        Ref { guard, has_changed }
    }

    /// Whether a value this receiver has not seen is there, without marking it;
    /// `Err` once every sender is dropped (even if such a value is there, as Tokio).
    #[track_caller]
    pub fn has_changed(&self) -> Result<bool, RecvError> {
        let st = self
            .shared
            .state(const { &interleave_test::sync::section("tokio watch has_changed") });
        match st.senders {
            0 => Err(RecvError(())),
            _ => Ok(st.version != self.seen),
        }
    }

    /// Whether every sender is dropped.
    #[track_caller]
    pub fn is_closed(&self) -> bool {
        self.shared
            .state(const { &interleave_test::sync::section("tokio watch is_closed") })
            .senders
            == 0
    }

    /// Makes the current value count as unseen: `changed` returns at once.
    #[track_caller]
    pub fn mark_changed(&mut self) {
        self.seen = self
            .shared
            .state(const { &interleave_test::sync::section("tokio watch mark_changed") })
            .version
            .wrapping_sub(1);
    }

    /// Makes the current value count as seen.
    #[track_caller]
    pub fn mark_unchanged(&mut self) {
        self.seen = self
            .shared
            .state(const { &interleave_test::sync::section("tokio watch mark_unchanged") })
            .version;
    }

    /// Waits for a value this receiver has not seen and marks it as seen: at once if one
    /// is there. `Err` when every sender is dropped and the current value is seen.
    /// Cancel-safe: it marks nothing unless it returns `Ok`.
    #[track_caller]
    pub fn changed(&mut self) -> impl Future<Output = Result<(), RecvError>> + '_ {
        cooperative(changed(
            &self.shared,
            &mut self.seen,
            Location::caller(),
            const { &interleave_test::sync::section("tokio watch changed") },
        ))
    }

    /// Waits until `f` holds for the value, as `watch::Receiver::wait_for`: calls `f` on
    /// the current value first (seen or not), then on each new one; every value `f` was
    /// called on is marked as seen. `Err` when every sender is dropped and `f` was false
    /// for the last value.
    #[track_caller]
    pub fn wait_for(
        &mut self,
        mut f: impl FnMut(&T) -> bool,
    ) -> impl Future<Output = Result<Ref<'_, T>, RecvError>> {
        let loc = Location::caller();
        cooperative(async move {
            let Receiver { shared, seen, .. } = self;
            let shared: &Shared<T> = shared;
            loop {
                let (guard, version) = read_versioned(
                    shared,
                    loc,
                    const { &interleave_test::sync::section("tokio watch wait_for") },
                );
                let has_changed = std::mem::replace(seen, version) != version;
                if f(&guard) {
                    return Ok(Ref { guard, has_changed });
                }
                drop(guard);
                changed(
                    shared,
                    seen,
                    loc,
                    const { &interleave_test::sync::section("tokio watch wait_for") },
                )
                .await?;
            }
        })
    }

    /// Whether both receivers belong to one channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

/// The value's read lock and the version it holds, for the program's operation `what` at
/// `loc`.
fn read_versioned<'a, T>(
    shared: &'a Shared<T>,
    loc: Loc,
    what: &'static Operation,
) -> (RwLockReadGuard<'a, T>, u64) {
    let guard = shared.read_at(loc);
    let version = shared.state_at(loc, what).version;
    (guard, version)
}

/// Waits for a version other than `seen`, then sets `seen` to it (a wait `what` the
/// program began at `loc`).
fn changed<'a, T>(
    shared: &'a Shared<T>,
    seen: &'a mut u64,
    loc: Loc,
    what: &'static Operation,
) -> impl Future<Output = Result<(), RecvError>> + 'a {
    std::future::poll_fn(move |cx: &mut Context<'_>| {
        let mut st = shared.state_at(loc, what);
        if st.version != *seen {
            *seen = st.version;
            return Poll::Ready(Ok(()));
        }
        if st.senders == 0 {
            return Poll::Ready(Err(RecvError(())));
        }
        st.changed.add(cx.waker());
        Poll::Pending
    })
}

impl<T> Clone for Receiver<T> {
    #[track_caller]
    fn clone(&self) -> Self {
        self.shared
            .state(const { &interleave_test::sync::section("tokio watch Receiver clone") })
            .receivers += 1;
        Receiver {
            shared: Arc::clone(&self.shared),
            seen: self.seen,
            loc: Location::caller(),
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let mut st = self.shared.state_at(
            self.loc,
            const { &interleave_test::sync::section("tokio watch Receiver drop") },
        );
        st.receivers -= 1;
        if st.receivers == 0 {
            let st = &mut *st;
            st.closed.wake_all(&mut st.later);
        }
    }
}
