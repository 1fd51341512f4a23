//! The cooperative budget spent by the operations Tokio charges besides `consume_budget`
//! and sleeps: a `JoinHandle`'s poll (and `JoinSet::join_next`), a semaphore acquisition
//! (under `Mutex` and bounded `mpsc` too), channel receives, `oneshot`, `broadcast` and
//! `watch` waits, a `Barrier` waiter's later polls. One unit an operation that is ready;
//! with none left it yields (`Pending`, its task woken) and is ready at a later poll; one
//! that returns `Pending` gives its unit back.

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll};

use interleave_test_tokio::sync::{Barrier, Mutex, Semaphore, broadcast, mpsc, oneshot, watch};
use interleave_test_tokio::task::{self, JoinSet, coop};

use crate::support::{every_execution, poll_once};

/// How many times in a row `op` is ready within one poll of the task, at most `max`.
async fn ready_in_one_poll<T>(
    max: usize,
    mut op: impl FnMut(&mut Context<'_>) -> Poll<T>,
) -> usize {
    std::future::poll_fn(|cx| {
        let mut n = 0;
        while n < max && op(cx).is_ready() {
            n += 1;
        }
        Poll::Ready(n)
    })
    .await
}

/// Yields, so the task's next poll starts with its full budget, then spends all but
/// `keep` of its 128 units in that poll.
async fn keep_only(keep: usize) {
    task::yield_now().await;
    std::future::poll_fn(|cx| {
        for _ in keep..128 {
            assert!(pin!(coop::consume_budget()).poll(cx).is_ready());
        }
        Poll::Ready(())
    })
    .await;
    assert!(coop::has_budget_remaining() == (keep > 0));
}

/// Polls `fut` once after spending every unit of the task's budget: whether it was ready.
async fn ready_with_no_budget<F: Future + ?Sized>(fut: Pin<&mut F>) -> bool {
    let mut fut = Some(fut);
    std::future::poll_fn(|cx| {
        spend_all(cx);
        let fut = fut.take().expect("polled once");
        Poll::Ready(fut.poll(cx).is_ready())
    })
    .await
}

/// Spends every unit the task has left in this poll.
fn spend_all(cx: &mut Context<'_>) {
    while coop::has_budget_remaining() {
        assert!(pin!(coop::consume_budget()).poll(cx).is_ready());
    }
}

/// The units the task has left in this poll (spending them).
fn units_left(cx: &mut Context<'_>) -> usize {
    let mut n = 0;
    while pin!(coop::consume_budget()).poll(cx).is_ready() {
        n += 1;
    }
    n
}

#[test]
fn a_join_handle_spends_a_unit_and_waits_for_budget_even_when_its_task_ended() {
    every_execution(|| async {
        let mut handle = task::spawn(async { 7 });
        while !handle.is_finished() {
            task::yield_now().await;
        }
        assert!(!ready_with_no_budget(Pin::new(&mut handle)).await);
        keep_only(1).await;
        assert_eq!(handle.await.unwrap(), 7);
        assert!(
            !coop::has_budget_remaining(),
            "the ready poll spent the last unit"
        );
    });
}

#[test]
fn join_next_spends_a_unit_per_result_and_try_join_next_none() {
    every_execution(|| async {
        let mut set = JoinSet::new();
        let ends = [set.spawn(async { 1 }), set.spawn(async { 2 })];
        while !ends.iter().all(|end| end.is_finished()) {
            task::yield_now().await;
        }
        keep_only(1).await;
        let first = poll_once(pin!(set.join_next())).await;
        let second = poll_once(pin!(set.join_next())).await;
        assert_eq!((first, second), (true, false), "one unit, one result");
        assert!(
            set.try_join_next().is_some(),
            "try_join_next spends no budget"
        );
        assert!(set.join_next().await.is_none());
    });
}

#[test]
fn a_pending_join_handle_gives_its_unit_back() {
    every_execution(|| async {
        let (tx, rx) = oneshot::channel::<()>();
        let mut handle = task::spawn(async move { rx.await.is_ok() });
        task::yield_now().await;
        let left = std::future::poll_fn(|cx| {
            for _ in 0..300 {
                assert!(Pin::new(&mut handle).poll(cx).is_pending());
            }
            Poll::Ready(units_left(cx))
        })
        .await;
        assert_eq!(left, 128);
        tx.send(()).unwrap();
        assert!(handle.await.unwrap());
    });
}

#[test]
fn each_ready_acquisition_spends_a_unit() {
    every_execution(|| async {
        let sem = Semaphore::new(200);
        task::yield_now().await;
        let acquired = ready_in_one_poll(200, |cx| {
            pin!(sem.acquire())
                .poll(cx)
                .map(|permit| permit.unwrap().forget())
        })
        .await;
        assert_eq!(acquired, 128);
        assert_eq!(
            sem.available_permits(),
            72,
            "the refused one gave its permit back"
        );
    });
}

#[test]
fn an_acquisition_with_no_budget_keeps_its_permits_until_its_next_poll_or_its_drop() {
    every_execution(|| async {
        let sem = Semaphore::new(3);
        let mut two = Box::pin(sem.acquire_many(2));
        assert!(!ready_with_no_budget(two.as_mut()).await);
        assert_eq!(sem.available_permits(), 1, "it keeps the permits it took");
        assert!(sem.try_acquire_many(2).is_err());
        let permit = two.await.unwrap();
        assert_eq!((permit.num_permits(), sem.available_permits()), (2, 1));
        drop(permit);
        let mut three = Box::pin(sem.acquire_many(3));
        assert!(!ready_with_no_budget(three.as_mut()).await);
        assert_eq!(sem.available_permits(), 0);
        drop(three);
        assert_eq!(sem.available_permits(), 3, "dropped, it gives them back");
    });
}

#[test]
fn a_lock_waiter_with_no_budget_keeps_its_turn() {
    every_execution(|| async {
        let mutex = Mutex::new(0);
        let held = mutex.lock().await;
        let mut first = Box::pin(mutex.lock());
        assert!(!ready_with_no_budget(first.as_mut()).await);
        let mut second = Box::pin(mutex.lock());
        assert!(!poll_once(second.as_mut()).await);
        task::yield_now().await;
        drop(held);
        assert!(
            !poll_once(second.as_mut()).await,
            "the first waiter has the lock"
        );
        *first.await += 1;
        assert_eq!(*second.await, 1);
    });
}

#[test]
fn a_lock_taken_with_no_budget_is_free_again_when_its_future_is_dropped() {
    every_execution(|| async {
        let mutex = Arc::new(Mutex::new(()));
        let mut lock = Box::pin(Arc::clone(&mutex).lock_owned());
        assert!(!ready_with_no_budget(lock.as_mut()).await);
        assert!(mutex.try_lock().is_err(), "the refused lock holds it");
        drop(lock);
        assert!(mutex.try_lock().is_ok());
    });
}

#[test]
fn mpsc_receives_spend_a_unit_each_and_a_pending_one_gives_it_back() {
    every_execution(|| async {
        let (tx, mut rx) = mpsc::unbounded_channel();
        for n in 0..200 {
            tx.send(n).unwrap();
        }
        task::yield_now().await;
        assert_eq!(ready_in_one_poll(200, |cx| rx.poll_recv(cx)).await, 128);
        assert_eq!(rx.len(), 72, "the refused receive took nothing");
        task::yield_now().await;
        let received = ready_in_one_poll(200, |cx| pin!(rx.recv()).poll(cx)).await;
        assert_eq!(received, 72);
        let left = std::future::poll_fn(|cx| {
            for _ in 0..300 {
                assert!(rx.poll_recv(cx).is_pending());
                assert!(pin!(rx.recv_many(&mut Vec::new(), 4)).poll(cx).is_pending());
            }
            Poll::Ready(units_left(cx))
        })
        .await;
        assert_eq!(left, 128 - 72);
        assert!(rx.try_recv().is_err());
    });
}

#[test]
fn a_bounded_send_spends_a_unit_and_with_none_left_keeps_its_slot() {
    every_execution(|| async {
        let (tx, mut rx) = mpsc::channel(200);
        task::yield_now().await;
        let sent = ready_in_one_poll(200, |cx| pin!(tx.send(1)).poll(cx)).await;
        assert_eq!((sent, tx.capacity()), (128, 72));
        let mut send = Box::pin(tx.send(2));
        assert!(!ready_with_no_budget(send.as_mut()).await);
        assert_eq!(tx.capacity(), 71, "the refused send keeps its slot");
        send.await.unwrap();
        let mut got = Vec::new();
        assert_eq!(rx.recv_many(&mut got, 200).await, 129);
        assert_eq!(got.last(), Some(&2));
    });
}

#[test]
fn a_oneshot_receiver_and_closed_wait_for_budget() {
    every_execution(|| async {
        let (tx, mut rx) = oneshot::channel();
        tx.send(5).unwrap();
        assert!(!ready_with_no_budget(Pin::new(&mut rx)).await);
        assert_eq!(rx.await, Ok(5));
        let (mut tx, rx) = oneshot::channel::<u8>();
        drop(rx);
        assert!(!ready_with_no_budget(pin!(tx.closed())).await);
        tx.closed().await;
    });
}

#[test]
fn pending_oneshot_polls_give_their_units_back() {
    every_execution(|| async {
        let (mut tx, mut rx) = oneshot::channel::<u8>();
        task::yield_now().await;
        let left = std::future::poll_fn(|cx| {
            for _ in 0..300 {
                assert!(Pin::new(&mut rx).poll(cx).is_pending());
                assert!(tx.poll_closed(cx).is_pending());
            }
            Poll::Ready(units_left(cx))
        })
        .await;
        assert_eq!(left, 128);
    });
}

#[test]
fn a_broadcast_receive_waits_for_budget() {
    every_execution(|| async {
        let (tx, mut rx) = broadcast::channel(2);
        tx.send(3).unwrap();
        assert!(!ready_with_no_budget(pin!(rx.recv())).await);
        assert_eq!(rx.recv().await, Ok(3));
    });
}

#[test]
fn a_loop_of_ready_broadcast_receives_lets_another_branch_in() {
    every_execution(|| async {
        let (tx, mut rx) = broadcast::channel(1);
        let mut received = 0;
        interleave_test_tokio::select! {
            biased;
            _ = async {
                loop {
                    tx.send(()).unwrap();
                    rx.recv().await.unwrap();
                    received += 1;
                }
            } => {}
            _ = task::yield_now() => {}
        }
        // 128 a poll; the yield is ready at the second.
        assert_eq!(received, 256);
    });
}

#[test]
fn watch_changed_wait_for_and_closed_wait_for_budget() {
    every_execution(|| async {
        let (tx, mut rx) = watch::channel(0);
        tx.send(1).unwrap();
        assert!(!ready_with_no_budget(pin!(rx.changed())).await);
        assert!(rx.changed().await.is_ok());
        let calls = std::cell::Cell::new(0);
        let mut wait = Box::pin(rx.wait_for(|v| {
            calls.set(calls.get() + 1);
            *v == 1
        }));
        assert!(!ready_with_no_budget(wait.as_mut()).await);
        assert_eq!(calls.get(), 0, "it yields before calling the predicate");
        assert_eq!(*wait.await.unwrap(), 1);
        assert_eq!(calls.get(), 1);
        drop(rx);
        assert!(!ready_with_no_budget(pin!(tx.closed())).await);
        tx.closed().await;
    });
}

#[test]
fn pending_watch_waits_give_their_units_back() {
    every_execution(|| async {
        let (tx, mut rx) = watch::channel(0);
        task::yield_now().await;
        let left = std::future::poll_fn(|cx| {
            for _ in 0..300 {
                assert!(pin!(rx.changed()).poll(cx).is_pending());
                assert!(pin!(rx.wait_for(|v| *v == 1)).poll(cx).is_pending());
                assert!(pin!(tx.closed()).poll(cx).is_pending());
            }
            Poll::Ready(units_left(cx))
        })
        .await;
        assert_eq!(left, 128);
    });
}

#[test]
fn a_loop_of_failing_watch_changes_lets_another_branch_in() {
    every_execution(|| async {
        let (tx, mut rx) = watch::channel(());
        drop(tx);
        let mut failed = 0;
        interleave_test_tokio::select! {
            biased;
            _ = async {
                loop {
                    assert!(rx.changed().await.is_err());
                    failed += 1;
                }
            } => {}
            _ = task::yield_now() => {}
        }
        assert_eq!(failed, 256);
    });
}

#[test]
fn a_released_barrier_waiter_spends_a_unit_at_its_next_poll() {
    every_execution(|| async {
        let barrier = Barrier::new(2);
        let mut waiter = Box::pin(barrier.wait());
        task::yield_now().await;
        assert!(!poll_once(waiter.as_mut()).await);
        assert_eq!(
            std::future::poll_fn(|cx| Poll::Ready(units_left(cx))).await,
            128,
            "its first poll spent nothing"
        );
        task::yield_now().await;
        assert!(barrier.wait().await.is_leader());
        assert!(!ready_with_no_budget(waiter.as_mut()).await);
        assert!(!waiter.await.is_leader());
    });
}
