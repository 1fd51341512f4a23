//! Tokio's cooperative scheduling, as `tokio::task::coop`. The model has no budget: a
//! task yields only where it awaits something pending (and the search already chooses
//! which task runs at every switch point), so every budget check here passes at once, as
//! Tokio's do until a task has spent its budget.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Opts `inner` out of Tokio's cooperative budget, as `tokio::task::unconstrained`. The
/// model has no budget (a task yields only where it awaits something pending), so this
/// polls `inner` as it is.
pub fn unconstrained<F: Future>(inner: F) -> Unconstrained<F> {
    Unconstrained { inner }
}

pin_project_lite::pin_project! {
    /// The future of [`unconstrained`].
    #[derive(Debug)]
    #[must_use = "futures do nothing unless polled"]
    pub struct Unconstrained<F> {
        #[pin]
        inner: F,
    }
}

impl<F: Future> Future for Unconstrained<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.project().inner.poll(cx)
    }
}

/// Spends a unit of Tokio's cooperative budget, as `tokio::task::consume_budget`. The model
/// has no budget (see [`unconstrained`]): it is ready at once, as Tokio's is until a task
/// spent its budget.
pub async fn consume_budget() {}

/// Whether the current task has budget left, as `has_budget_remaining`: always, here.
pub fn has_budget_remaining() -> bool {
    true
}

/// Spends a unit of budget if there is one, as `poll_proceed`: always ready here.
pub fn poll_proceed(_cx: &mut Context<'_>) -> Poll<RestoreOnPending> {
    Poll::Ready(RestoreOnPending(()))
}

/// What `poll_proceed` returns, as `tokio::task::coop::RestoreOnPending`: with no budget
/// there is nothing to restore.
#[derive(Debug)]
pub struct RestoreOnPending(());

impl RestoreOnPending {
    /// Marks that the task made progress (nothing to do without a budget).
    pub fn made_progress(&self) {}
}

/// `fut` made to spend budget at each poll, as `cooperative`: polled as it is here.
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
        self.project().fut.poll(cx)
    }
}
