//! Tokio's cooperative scheduling, as `tokio::task::coop`: each poll of a task starts with
//! a budget of 128 units (`future/budget.rs`), and the operations Tokio charges spend one
//! each; an operation that finds none left returns `Pending` after waking its task, so the
//! task yields to the others. The budget is deterministic (it depends only on what the task
//! did in this poll): running out is no decision, only the yield that follows is a switch
//! point.
//!
//! Charged, as in Tokio (and nothing else): [`consume_budget`], [`poll_proceed`] and
//! [`cooperative`] futures; `time::Sleep` (so `Interval` and `Timeout`'s deadline; a
//! `Timeout` whose future spent the last unit still polls its deadline unconstrained, as
//! Tokio's); a `JoinHandle`'s poll (so `JoinSet::join_next` when a task's result is there;
//! `try_join_next` is unconstrained); an acquisition of the `sync` semaphore once it has its
//! permits (`Semaphore`, `Mutex`, `RwLock`, a bounded `mpsc` send or reserve, `OnceCell`'s
//! initialization): with none left it keeps them and yields, so a waiter keeps its turn;
//! `mpsc` receives (not `try_recv`), a `oneshot` receiver's poll and its sender's
//! `closed`, `broadcast` `recv`, and `watch` `changed`, `wait_for` and the sender's
//! `closed`. An operation that returns `Pending` gives its unit back (Tokio's
//! [`RestoreOnPending`]); one that finds none left does nothing else, not even its switch
//! point. Not charged, as in Tokio: `Notify`, the `try_` forms, unbounded sends, `mpsc`
//! senders' `closed`, `broadcast` sends.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use interleave_test::future::budget;

/// Opts `inner` out of the cooperative budget, as `tokio::task::unconstrained`: while it
/// is polled no operation spends a unit or is refused one.
pub fn unconstrained<F: Future>(inner: F) -> Unconstrained<F> {
    Unconstrained { inner }
}

pin_project_lite::pin_project! {
    /// The future of [`unconstrained`].
    #[derive(Debug)]
    #[must_use = "Unconstrained does nothing unless polled"]
    pub struct Unconstrained<F> {
        #[pin]
        inner: F,
    }
}

impl<F: Future> Future for Unconstrained<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let inner = self.project().inner;
        budget::unconstrained(|| inner.poll(cx))
    }
}

/// Spends a unit of the task's budget, as `tokio::task::consume_budget`: ready at once
/// while a unit is left; with none left, it wakes the task and yields once.
pub async fn consume_budget() {
    std::future::poll_fn(|cx| poll_proceed(cx).map(|restore| restore.made_progress())).await
}

/// Whether the current task has budget left, as `has_budget_remaining` (always outside a
/// model and while unconstrained).
pub fn has_budget_remaining() -> bool {
    budget::remaining()
}

/// Spends a unit of budget if there is one, as `poll_proceed`: `Ready` with a guard that
/// gives the unit back unless [`made_progress`](RestoreOnPending::made_progress) is
/// called; `Pending` with the task woken when none is left.
pub fn poll_proceed(cx: &mut Context<'_>) -> Poll<RestoreOnPending> {
    if budget::spend() {
        return Poll::Ready(RestoreOnPending {
            spent: std::cell::Cell::new(true),
            _not_send: PhantomData,
        });
    }
    cx.waker().wake_by_ref();
    Poll::Pending
}

/// What `poll_proceed` returns, as `tokio::task::coop::RestoreOnPending`: dropped before
/// [`made_progress`](Self::made_progress) is called, it gives the unit back.
#[derive(Debug)]
#[must_use]
pub struct RestoreOnPending {
    spent: std::cell::Cell<bool>,
    _not_send: PhantomData<*mut ()>,
}

impl RestoreOnPending {
    /// The operation made progress: the unit stays spent.
    pub fn made_progress(&self) {
        self.spent.set(false);
    }
}

impl Drop for RestoreOnPending {
    fn drop(&mut self) {
        if self.spent.get() {
            budget::refund();
        }
    }
}

/// `fut` made to spend a unit at each poll, as `cooperative`: with none left it yields
/// instead of polling `fut`.
pub fn cooperative<F: Future>(fut: F) -> Coop<F> {
    Coop { fut }
}

pin_project_lite::pin_project! {
    /// The future of [`cooperative`].
    #[derive(Debug)]
    #[must_use = "futures do nothing unless polled"]
    pub struct Coop<F> {
        #[pin]
        fut: F,
    }
}

impl<F: Future> Future for Coop<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let fut = self.project().fut;
        budget::charged(cx, |cx| fut.poll(cx))
    }
}

/// Runs `f` unconstrained: for `Timeout`, whose deadline is polled even when its future
/// spent the last unit.
pub(crate) fn without_budget<R>(f: impl FnOnce() -> R) -> R {
    budget::unconstrained(f)
}
