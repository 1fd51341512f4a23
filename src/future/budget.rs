//! Tokio's cooperative budget, kept per model thread: each poll of a task (a spawned
//! task's, a local task's, a `block_on`'s own future) starts with [`PER_POLL`] units, and
//! the operations Tokio charges spend one each (`tokio::task::coop`). Deterministic: the
//! budget depends only on what the task did in this poll, so running out is no decision;
//! only the yield that follows (the task returns `Pending` and waits) is a switch point.
//! A runtime layered over this crate charges its operations with [`charged`] (the Tokio
//! module's `sync` and `JoinSet` do) and honours `unconstrained` with [`unconstrained`].

use std::cell::RefCell;
use std::task::{Context, Poll};

use crate::primitive::Tid;
use crate::threads;

/// Units a task has at the start of each poll, as Tokio's.
pub const PER_POLL: u8 = 128;

/// What a model thread has left in its current poll: `None` while unconstrained.
type Left = Option<u8>;

std::thread_local! {
    /// Each model thread's budget on this OS thread (model threads of one execution may
    /// share it as coroutines), keyed by execution and thread.
    static BUDGETS: RefCell<Vec<(u64, Tid, Left)>> = const { RefCell::new(Vec::new()) };
}

/// Calls `f` with the calling thread's budget: its model thread's or, outside a model, its
/// ambient execution's thread's (`None` only if `try_ids` has no answer; it always has).
fn with_left<R>(f: impl FnOnce(&mut Left) -> R) -> Option<R> {
    let (exec, tid) = threads::try_ids()?;
    BUDGETS.with(|b| {
        let mut b = b.borrow_mut();
        let at = match b.iter().position(|(e, t, _)| (*e, *t) == (exec, tid)) {
            Some(at) => at,
            None => {
                // Entries of other executions are stale.
                b.retain(|(e, _, _)| *e == exec);
                // Outside a task's poll there is no budget (Tokio's is unconstrained
                // there: a future polled by hand, a plain test).
                b.push((exec, tid, None));
                b.len() - 1
            }
        };
        Some(f(&mut b[at].2))
    })
}

/// A task poll begins: the full budget again, until the returned guard drops, when the
/// budget is back as it was (none, outside any task's poll, as Tokio's).
#[must_use = "the poll's budget ends when the guard drops"]
pub fn task_poll() -> impl Drop {
    let before = with_left(|left| left.replace(PER_POLL)).flatten();
    Restore(before)
}

/// Puts a budget back as it was when dropped.
struct Restore(Left);

impl Drop for Restore {
    fn drop(&mut self) {
        let before = self.0;
        with_left(|left| *left = before);
    }
}

/// Spends a unit: `false` (and nothing spent) when none is left.
pub fn spend() -> bool {
    with_left(|left| match left {
        Some(0) => false,
        Some(n) => {
            *n -= 1;
            true
        }
        None => true,
    })
    .unwrap_or(true)
}

/// Gives back a unit spent by an operation that then did not make progress.
pub fn refund() {
    with_left(|left| {
        if let Some(n) = left {
            *n = n.saturating_add(1).min(PER_POLL);
        }
    });
}

/// Polls `op` as an operation Tokio charges (`poll_proceed`, then `made_progress` once it
/// is ready): a unit is spent first, and with none left the task is woken and `Pending`
/// returned without calling `op`; the unit is given back if `op` returns `Pending`.
pub fn charged<T>(cx: &mut Context<'_>, op: impl FnOnce(&mut Context<'_>) -> Poll<T>) -> Poll<T> {
    if !spend() {
        cx.waker().wake_by_ref();
        return Poll::Pending;
    }
    let polled = op(cx);
    if polled.is_pending() {
        refund();
    }
    polled
}

/// Whether a unit is left (always while unconstrained).
pub fn remaining() -> bool {
    with_left(|left| *left != Some(0)).unwrap_or(true)
}

/// Runs `f` unconstrained (no unit spent, none refused), as `tokio::task::unconstrained`
/// polls its future; the budget is back as it was afterwards.
pub fn unconstrained<R>(f: impl FnOnce() -> R) -> R {
    let before = with_left(|left| left.take()).flatten();
    let _restore = Restore(before);
    f()
}
