//! [`Notify`], as `tokio::sync::Notify`.

use std::future::Future;
use std::ops::Deref;
use std::panic::Location;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::wake_list::{self, Deferred, WakeList};
use interleave_engine::primitive::{Loc, Operation, PerExecution, WaitId, WaitQueue};
use interleave_test::sync::Mutex;

/// Wakes one task or all of them, as `tokio::sync::Notify`:
/// - [`notify_one`](Self::notify_one) wakes the task that waits longest (first come,
///   first served, as Tokio documents) or, when none waits, stores one permit that the
///   next [`notified`](Self::notified) consumes at once (never more than one);
/// - [`notify_waiters`](Self::notify_waiters) wakes every [`Notified`] made before the
///   call, polled or not, and stores no permit: a task that calls `notified()` after it
///   misses it (the classic lost notification, which the search finds).
///
/// Every operation is a switch point. A `static` `Notify` (made by
/// [`const_new`](Self::const_new)), or one made outside the model closure, starts with no
/// permit and no waiter in every execution: each execution has a state of its own,
/// dropped when the execution ends.
#[derive(Debug)]
pub struct Notify {
    /// The state of each execution that uses it (one, for a `Notify` made in a model).
    states: PerExecution<Mutex<State>>,
}

impl Default for Notify {
    fn default() -> Self {
        Notify::new()
    }
}

/// A fresh state: no permit, no waiter.
const fn new_state() -> Mutex<State> {
    Mutex::named(
        State {
            permit: false,
            queue: WaitQueue::new("be notified by"),
            picked: Vec::new(),
            rounds: 0,
            later: WakeList::new(),
        },
        "tokio Notify",
        None,
    )
}

/// Which waiter a notification for one picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pick {
    /// The longest waiting (`notify_one`).
    Oldest,
    /// The most recently registered (`notify_last`).
    Newest,
}

#[derive(Debug)]
struct State {
    permit: bool,
    /// Registered waiters, longest waiting first.
    queue: WaitQueue,
    /// Waiters `notify_one` or `notify_last` picked, not yet told, and whether it was
    /// `notify_last` (a picked waiter dropped passes it on the same way).
    picked: Vec<(WaitId, Pick)>,
    /// How many `notify_waiters` calls there were.
    rounds: u64,
    /// Wakers to wake or drop once the lock is released.
    later: WakeList,
}

impl Deferred for State {
    fn deferred(&mut self) -> WakeList {
        self.later.take()
    }
}

impl Notify {
    /// A `Notify` with no permit.
    pub fn new() -> Notify {
        Notify::const_new()
    }

    /// A `Notify` with no permit, usable as a `static`: each execution starts with none.
    pub const fn const_new() -> Notify {
        Notify {
            states: PerExecution::new(new_state()),
        }
    }

    #[track_caller]
    fn with<R>(&self, what: &'static Operation, f: impl FnOnce(&mut State) -> R) -> R {
        self.with_at(Location::caller(), what, f)
    }

    /// Runs `f` on this execution's state, locked for the program's operation `what` at
    /// `loc`.
    fn with_at<R>(&self, loc: Loc, what: &'static Operation, f: impl FnOnce(&mut State) -> R) -> R {
        f(&mut wake_list::section(
            &self.states.lend(new_state),
            loc,
            what,
        ))
    }

    /// A future that completes when notified. It counts as waiting for
    /// [`notify_waiters`](Self::notify_waiters) from now, and for
    /// [`notify_one`](Self::notify_one) from its first poll (or
    /// [`enable`](Notified::enable)).
    #[track_caller]
    pub fn notified(&self) -> Notified<'_> {
        Notified(Waiter::new(self, Location::caller()))
    }

    /// [`notified`](Self::notified) as a future that owns a reference to the `Notify`
    /// (`'static`, so it can be stored or moved into a task), as `notified_owned`.
    #[track_caller]
    pub fn notified_owned(self: Arc<Self>) -> OwnedNotified {
        OwnedNotified(Waiter::new(self, Location::caller()))
    }

    /// Wakes the longest-waiting registered task, or stores a permit when none waits.
    #[track_caller]
    pub fn notify_one(&self) {
        self.with(
            const { &interleave_test::sync::section("tokio Notify notify_one") },
            |st| st.notify(Pick::Oldest),
        );
    }

    /// Wakes the most recently registered task, or stores a permit when none waits.
    #[track_caller]
    pub fn notify_last(&self) {
        self.with(
            const { &interleave_test::sync::section("tokio Notify notify_last") },
            |st| st.notify(Pick::Newest),
        );
    }

    /// Wakes every [`Notified`] made before this call; stores no permit.
    #[track_caller]
    pub fn notify_waiters(&self) {
        self.with(
            const { &interleave_test::sync::section("tokio Notify notify_waiters") },
            |st| {
                st.rounds += 1;
                st.queue.wake_all(&mut st.later);
            },
        );
    }
}

impl State {
    /// Wakes the waiter `how` picks, or stores the permit when none waits.
    fn notify(&mut self, how: Pick) {
        let next = match how {
            Pick::Oldest => self.queue.wake_front(&mut self.later).map(|(id, ())| id),
            Pick::Newest => {
                let newest = self.queue.back();
                newest.filter(|&id| self.queue.wake(id, &mut self.later).is_some())
            }
        };
        match next {
            Some(id) => self.picked.push((id, how)),
            None => self.permit = true,
        }
    }

    /// Whether waiter `id` (or a new waiter, `None`) is notified now, consuming what
    /// notified it.
    fn take(&mut self, ticket: Option<WaitId>, rounds: u64) -> bool {
        if self.rounds != rounds {
            if let Some(id) = ticket {
                self.leave(id);
                self.picked.retain(|(w, _)| *w != id);
            }
            return true;
        }
        match ticket {
            Some(id) => match self.picked.iter().position(|(w, _)| *w == id) {
                Some(i) => {
                    self.picked.swap_remove(i);
                    true
                }
                None => false,
            },
            None => std::mem::take(&mut self.permit),
        }
    }

    /// Takes waiter `id` out of the queue (its waker is dropped once the lock is released).
    fn leave(&mut self, id: WaitId) {
        self.queue.remove(id, &mut self.later);
    }
}

/// The future of [`Notify::notified`]. Dropping it after `notify_one` picked it, before
/// it completed, passes the notification on to the next waiter (or back as the permit);
/// after `notify_last` picked it, to the newest waiter, as Tokio does.
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Notified<'a>(Waiter<&'a Notify>);

/// The future of [`Notify::notified_owned`]: a [`Notified`] that owns a reference to its
/// `Notify`, as `tokio::sync::futures::OwnedNotified`.
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct OwnedNotified(Waiter<Arc<Notify>>);

impl Notified<'_> {
    /// Registers for `notify_one` without waiting, as `Notified::enable`: returns whether
    /// it is notified already.
    #[track_caller]
    pub fn enable(self: Pin<&mut Self>) -> bool {
        self.get_mut().0.enable()
    }
}

impl OwnedNotified {
    /// As [`Notified::enable`].
    #[track_caller]
    pub fn enable(self: Pin<&mut Self>) -> bool {
        self.get_mut().0.enable()
    }
}

impl Future for Notified<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.get_mut().0.poll(cx)
    }
}

impl Future for OwnedNotified {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.get_mut().0.poll(cx)
    }
}

/// A wait for a notification of the `Notify` that `N` refers to (borrowed or owned).
#[derive(Debug)]
struct Waiter<N: Deref<Target = Notify>> {
    notify: N,
    rounds: u64,
    ticket: Option<WaitId>,
    done: bool,
    /// Where the program called `notified` (its polls and drop are reported there).
    loc: Loc,
}

impl<N: Deref<Target = Notify>> Waiter<N> {
    /// A wait that counts for `notify_waiters` from now (the call at `loc`).
    fn new(notify: N, loc: Loc) -> Self {
        let rounds = notify.with_at(
            loc,
            const { &interleave_test::sync::section("tokio Notify notified") },
            |st| st.rounds,
        );
        Waiter {
            notify,
            rounds,
            ticket: None,
            done: false,
            loc,
        }
    }

    #[track_caller]
    fn enable(&mut self) -> bool {
        if self.done {
            return true;
        }
        let (notify, ticket, rounds) = (&*self.notify, &mut self.ticket, self.rounds);
        let done = notify.with(
            const { &interleave_test::sync::section("tokio Notify enable") },
            |st| {
                if st.take(*ticket, rounds) {
                    *ticket = None;
                    return true;
                }
                if ticket.is_none() {
                    *ticket = Some(st.queue.push((), None));
                }
                false
            },
        );
        self.done = done;
        done
    }

    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.done {
            return Poll::Ready(());
        }
        let (notify, ticket, rounds) = (&*self.notify, &mut self.ticket, self.rounds);
        let ready = notify.with_at(
            self.loc,
            const { &interleave_test::sync::section("tokio Notify notified") },
            |st| {
                if st.take(*ticket, rounds) {
                    *ticket = None;
                    return true;
                }
                match *ticket {
                    None => *ticket = Some(st.queue.push((), Some(cx.waker()))),
                    Some(id) => {
                        st.queue.set_waker(id, cx.waker(), &mut st.later);
                    }
                }
                false
            },
        );
        self.done = ready;
        match ready {
            true => Poll::Ready(()),
            false => Poll::Pending,
        }
    }
}

impl<N: Deref<Target = Notify>> Drop for Waiter<N> {
    fn drop(&mut self) {
        let Some(id) = self.ticket.take() else {
            return;
        };
        let what = const { &interleave_test::sync::section("tokio Notify notified dropped") };
        self.notify.with_at(self.loc, what, |st| {
            st.leave(id);
            if let Some(i) = st.picked.iter().position(|(w, _)| *w == id) {
                // Passed on as it was given (Tokio: `notify_last`'s to the newest waiter).
                let (_, how) = st.picked.swap_remove(i);
                st.notify(how);
            }
        });
    }
}
