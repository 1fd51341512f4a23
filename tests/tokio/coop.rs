//! Tokio's cooperative budget: 128 units a task poll, spent by `consume_budget` and by a
//! sleep's poll; with none left the operation wakes its task and yields once, and the next
//! poll has the full budget again. `unconstrained` spends nothing. The budget is no
//! decision: the number of executions is that of the same model without it.

use std::future::Future;
use std::task::{Context, Poll};

use interleave_test_tokio::task::{self, coop};
use interleave_test_tokio::time::{self, Duration};

use crate::support::every_execution;

/// How many times in a row `consume_budget` is ready within one poll, polled by hand
/// with the task's waker (the model's `consume_budget` used to be ready for ever).
fn ready_in_a_row(cx: &mut Context<'_>) -> usize {
    let mut n = 0;
    loop {
        let mut spend = std::pin::pin!(coop::consume_budget());
        if spend.as_mut().poll(cx).is_pending() {
            return n;
        }
        n += 1;
        assert!(n <= 1000, "consume_budget never ran out");
    }
}

#[test]
fn a_task_poll_has_128_units_and_the_next_poll_has_them_again() {
    every_execution(|| async {
        let counts = std::future::poll_fn(|cx| Poll::Ready(ready_in_a_row(cx))).await;
        assert_eq!(counts, 128);
        assert!(!coop::has_budget_remaining());
        // Out of budget, a sleep already due yields first, then completes.
        let mut due = Box::pin(time::sleep(Duration::ZERO));
        let first = std::future::poll_fn(|cx| Poll::Ready(due.as_mut().poll(cx))).await;
        assert!(first.is_pending(), "an operation ran with no budget left");
        due.await;
        // `consume_budget` yielded and the task was polled again: full budget.
        task::yield_now().await;
        let again = std::future::poll_fn(|cx| Poll::Ready(ready_in_a_row(cx))).await;
        assert_eq!(again, 128);
    });
}

#[test]
fn unconstrained_spends_no_budget_and_awaited_consume_budget_yields_once() {
    every_execution(|| async {
        task::unconstrained(async {
            for _ in 0..1000 {
                coop::consume_budget().await;
            }
            assert!(coop::has_budget_remaining());
        })
        .await;
        // 300 awaited units end: each time the budget runs out the task yields once.
        for _ in 0..300 {
            coop::consume_budget().await;
        }
    });
}
