//! `tokio::sync`'s `watch`, `broadcast`, `OnceCell` and `Barrier`, their documented
//! behaviour on both substrates under exhaustive DFS: what `changed` returns once the
//! sender is gone, lag and closing of a broadcast channel, one initializer per cell, one
//! leader per barrier generation.

use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

use interleave_test::sync::Arc;
use interleave_test_tokio::sync::broadcast::error::{RecvError, TryRecvError};
use interleave_test_tokio::sync::{Barrier, OnceCell, SetError, broadcast, watch};
use interleave_test_tokio::{self as tokio, task};

use crate::support::{every_execution, every_execution_of, poll_once};

// ---- watch ----

#[test]
fn watch_changed_errs_after_the_sender_is_dropped_only_once_nothing_unseen_is_left() {
    every_execution(|| async {
        let (tx, mut rx) = watch::channel(0);
        let _sender = tokio::spawn(async move {
            tx.send(1).unwrap();
            tx.send(2).unwrap();
        });
        let mut last = *rx.borrow_and_update();
        while rx.changed().await.is_ok() {
            last = *rx.borrow_and_update();
        }
        assert_eq!(last, 2, "changed failed while the last value was unseen");
        assert!(rx.has_changed().is_err());
        assert!(rx.is_closed());
    });
}

#[test]
fn watch_has_changed_errs_once_closed_but_changed_still_returns_the_unseen_value() {
    every_execution(|| async {
        let (tx, mut rx) = watch::channel("a");
        tx.send("b").unwrap();
        drop(tx);
        assert!(
            rx.has_changed().is_err(),
            "has_changed fails once closed (Tokio)"
        );
        assert!(rx.borrow().has_changed());
        assert_eq!(rx.changed().await, Ok(()));
        assert_eq!(*rx.borrow(), "b");
        assert!(!rx.borrow().has_changed());
        assert!(rx.changed().await.is_err());
    });
}

#[test]
fn watch_borrow_and_update_then_changed_waits_for_a_new_send() {
    every_execution(|| async {
        let (tx, mut rx) = watch::channel(0);
        tx.send(1).unwrap();
        assert!(rx.borrow().has_changed(), "borrow does not mark seen");
        assert_eq!(rx.has_changed(), Ok(true));
        let seen = rx.borrow_and_update();
        assert!(seen.has_changed());
        assert_eq!(*seen, 1);
        drop(seen);
        assert_eq!(rx.has_changed(), Ok(false));
        {
            let mut changed = pin!(rx.changed());
            assert!(!poll_once(changed.as_mut()).await, "nothing new was sent");
            tx.send(2).unwrap();
            assert!(poll_once(changed.as_mut()).await);
        }
        assert_eq!(rx.has_changed(), Ok(false), "changed marks the value seen");
        rx.mark_changed();
        assert_eq!(rx.has_changed(), Ok(true));
        rx.mark_unchanged();
        assert_eq!(rx.has_changed(), Ok(false));
    });
}

#[test]
fn watch_two_receivers_see_the_latest_value() {
    every_execution(|| async {
        let (tx, mut mine) = watch::channel(0);
        let mut theirs = mine.clone();
        let reader = tokio::spawn(async move {
            while theirs.changed().await.is_ok() {}
            *theirs.borrow_and_update()
        });
        tx.send(1).unwrap();
        {
            // Two borrows at once: the value's lock is a read lock.
            let (a, b) = (tx.borrow(), tx.borrow());
            assert_eq!((*a, *b), (1, 1));
        }
        tx.send_modify(|v| *v += 1);
        drop(tx);
        while mine.changed().await.is_ok() {}
        assert_eq!(*mine.borrow_and_update(), 2);
        assert_eq!(reader.await.unwrap(), 2);
    });
}

#[test]
fn watch_send_without_receivers_gives_the_value_back_and_keeps_the_old_one() {
    every_execution(|| async {
        let (tx, rx) = watch::channel(0);
        let closed = tokio::spawn(async move { drop(rx) });
        tx.closed().await;
        assert!(tx.is_closed());
        assert_eq!(tx.send(5), Err(watch::error::SendError(5)));
        assert_eq!(*tx.borrow(), 0, "a failed send stored its value");
        assert_eq!(
            tx.send_replace(6),
            0,
            "send_replace stores without receivers"
        );
        let rx = tx.subscribe();
        assert!(
            !rx.has_changed().unwrap(),
            "a new receiver has seen the value"
        );
        assert!(!tx.send_if_modified(|v| *v == 7));
        assert!(
            !rx.has_changed().unwrap(),
            "an unmodified value was announced"
        );
        assert!(tx.send_if_modified(|v| std::mem::replace(v, 7) != 7));
        assert_eq!(*rx.borrow(), 7);
        assert!(rx.has_changed().unwrap());
        closed.await.unwrap();
    });
}

#[test]
fn watch_wait_for_returns_the_first_value_that_holds() {
    every_execution(|| async {
        let (tx, mut rx) = watch::channel(0);
        let _sender = tokio::spawn(async move {
            for v in 1..=3 {
                tx.send(v).unwrap();
            }
        });
        assert_eq!(*rx.wait_for(|v| *v >= 3).await.unwrap(), 3);
        assert!(rx.wait_for(|v| *v > 3).await.is_err(), "closed, never true");
    });
}

// ---- broadcast ----

#[test]
fn broadcast_lag_reports_the_overwritten_count_then_the_kept_values() {
    every_execution(|| async {
        let (tx, mut rx) = broadcast::channel(2);
        for v in 1..=3 {
            assert_eq!(tx.send(v), Ok(1));
        }
        assert_eq!(rx.len(), 3, "the overwritten value counts as unseen");
        assert_eq!(tx.len(), 2);
        assert_eq!(rx.recv().await, Err(RecvError::Lagged(1)));
        assert_eq!(rx.recv().await, Ok(2));
        assert_eq!(rx.recv().await, Ok(3));
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
        assert!(tx.is_empty(), "values every receiver saw are gone");
    });
}

#[test]
fn broadcast_capacity_is_rounded_up_to_a_power_of_two() {
    every_execution(|| async {
        let (tx, mut rx) = broadcast::channel(3);
        for v in 1..=4 {
            tx.send(v).unwrap();
        }
        assert_eq!(rx.try_recv(), Ok(1), "capacity 3 kept only 3 values");
        tx.send(5).unwrap();
        tx.send(6).unwrap();
        assert_eq!(rx.try_recv(), Err(TryRecvError::Lagged(1)));
        assert_eq!(rx.try_recv(), Ok(3));
    });
}

#[test]
fn broadcast_capacity_zero_panics_with_tokios_message() {
    let panic = std::panic::catch_unwind(|| broadcast::channel::<u8>(0)).unwrap_err();
    let message = panic.downcast_ref::<&str>().copied().unwrap_or_default();
    assert_eq!(message, "broadcast channel capacity cannot be zero");
}

#[test]
fn broadcast_receivers_see_closed_after_every_sender_is_dropped() {
    every_execution(|| async {
        let (tx, mut rx) = broadcast::channel(4);
        let other = tx.clone();
        let _sender = tokio::spawn(async move {
            other.send(1).unwrap();
        });
        tx.send(2).unwrap();
        drop(tx);
        let mut got = Vec::new();
        loop {
            match rx.recv().await {
                Ok(v) => got.push(v),
                Err(e) => {
                    assert_eq!(e, RecvError::Closed);
                    break;
                }
            }
        }
        got.sort();
        assert_eq!(got, [1, 2], "Closed came before every value was read");
        assert_eq!(rx.try_recv(), Err(TryRecvError::Closed));
    });
}

#[test]
fn broadcast_a_later_subscriber_does_not_see_earlier_values() {
    every_execution(|| async {
        let (tx, mut early) = broadcast::channel(4);
        tx.send(1).unwrap();
        let mut late = tx.subscribe();
        assert_eq!(tx.send(2), Ok(2), "two receivers got it");
        assert_eq!(late.recv().await, Ok(2));
        assert_eq!(tx.len(), 2, "kept until the early receiver sees them");
        assert_eq!(early.recv().await, Ok(1));
        assert_eq!(tx.len(), 1);
        let mut again = early.resubscribe();
        assert_eq!(early.recv().await, Ok(2));
        assert!(tx.is_empty());
        assert_eq!(again.try_recv(), Err(TryRecvError::Empty));
        drop((early, late, again));
        assert_eq!(tx.receiver_count(), 0);
        assert_eq!(tx.send(3), Err(broadcast::error::SendError(3)));
    });
}

#[test]
fn broadcast_a_dropped_receiver_releases_the_values_it_had_not_seen() {
    every_execution(|| async {
        let (tx, rx) = broadcast::channel(4);
        let mut other = tx.subscribe();
        tx.send(1).unwrap();
        assert_eq!(other.recv().await, Ok(1));
        assert_eq!(tx.len(), 1);
        let dropper = tokio::spawn(async move { drop(rx) });
        dropper.await.unwrap();
        assert!(tx.is_empty());
    });
}

// ---- OnceCell ----

#[test]
fn once_cell_racing_get_or_init_runs_exactly_one_initializer() {
    every_execution(|| async {
        let cell = Arc::new(OnceCell::new());
        let runs = std::sync::Arc::new(AtomicUsize::new(0));
        let init = |value: u32| {
            let runs = std::sync::Arc::clone(&runs);
            move || async move {
                runs.fetch_add(1, SeqCst);
                task::yield_now().await;
                value
            }
        };
        let other = tokio::spawn({
            let cell = Arc::clone(&cell);
            let init = init(1);
            async move { *cell.get_or_init(init).await }
        });
        let mine = *cell.get_or_init(init(2)).await;
        assert_eq!(other.await.unwrap(), mine);
        assert_eq!(runs.load(SeqCst), 1, "two initializers ran");
    });
}

#[test]
fn once_cell_a_cancelled_initializer_lets_the_next_waiter_run() {
    every_execution(|| async {
        let cell = Arc::new(OnceCell::<u32>::new());
        let (started, running) = tokio::sync::oneshot::channel();
        let stuck = tokio::spawn({
            let cell = Arc::clone(&cell);
            async move {
                cell.get_or_init(|| async move {
                    started.send(()).unwrap();
                    std::future::pending().await
                })
                .await;
            }
        });
        // The task holds the initializer's permit from here on, until it is cancelled.
        running.await.unwrap();
        stuck.abort();
        assert_eq!(*cell.get_or_init(|| async { 2 }).await, 2);
        assert!(stuck.await.unwrap_err().is_cancelled());
    });
}

#[test]
fn once_cell_a_dropped_initializer_hands_over_to_the_queued_one() {
    every_execution(|| async {
        let cell = OnceCell::new();
        let mut first = Box::pin(cell.get_or_init(std::future::pending::<u32>));
        assert!(!poll_once(first.as_mut()).await);
        assert!(!cell.initialized());
        assert_eq!(cell.set(9), Err(SetError::InitializingError(9)));
        let mut second = pin!(cell.get_or_init(|| async { 2 }));
        assert!(
            !poll_once(second.as_mut()).await,
            "two initializers at once"
        );
        drop(first);
        assert!(poll_once(second.as_mut()).await);
        assert_eq!(cell.get(), Some(&2));
    });
}

#[test]
fn once_cell_a_panicking_initializer_lets_the_next_waiter_run() {
    every_execution_of(
        |b| b.thread_panics_fail(false),
        || async {
            let cell = Arc::new(OnceCell::<u32>::new());
            let (started, running) = tokio::sync::oneshot::channel();
            let panicking = tokio::spawn({
                let cell = Arc::clone(&cell);
                async move {
                    cell.get_or_init(|| async move {
                        started.send(()).unwrap();
                        task::yield_now().await;
                        panic!("initializer failed")
                    })
                    .await;
                }
            });
            // The task holds the initializer's permit: this call waits behind it.
            running.await.unwrap();
            assert_eq!(*cell.get_or_init(|| async { 2 }).await, 2);
            assert!(panicking.await.unwrap_err().is_panic());
        },
    );
}

#[test]
fn once_cell_set_get_take_and_a_failing_initializer() {
    every_execution(|| async {
        let mut cell = OnceCell::new();
        let failed: Result<&u32, &str> = cell.get_or_try_init(|| async { Err("no") }).await;
        assert_eq!(failed, Err("no"));
        assert_eq!(cell.get(), None, "a failed initializer set the value");
        assert_eq!(cell.set(1), Ok(()));
        assert!(cell.initialized());
        assert_eq!(cell.set(2), Err(SetError::AlreadyInitializedError(2)));
        assert_eq!(*cell.get_or_init(|| async { 3 }).await, 1);
        *cell.get_mut().unwrap() = 4;
        assert_eq!(cell.take(), Some(4));
        assert!(!cell.initialized());
        assert_eq!(cell.set(5), Ok(()), "a taken cell can be set again");
        assert_eq!(cell.into_inner(), Some(5));
        assert_eq!(OnceCell::new_with(Some(6)).get(), Some(&6));
    });
}

// ---- Barrier ----

#[test]
fn barrier_has_one_leader_per_generation_and_releases_no_task_early() {
    const TASKS: usize = 2;
    const GENERATIONS: usize = 2;
    every_execution(|| async {
        let barrier = Arc::new(Barrier::new(TASKS));
        let arrived = std::sync::Arc::new(AtomicUsize::new(0));
        let leaders = std::sync::Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
        let run = || {
            let (barrier, arrived) = (Arc::clone(&barrier), arrived.clone());
            let leaders = leaders.clone();
            async move {
                for generation in 0..GENERATIONS {
                    arrived.fetch_add(1, SeqCst);
                    let result = barrier.wait().await;
                    let at_least = (generation + 1) * TASKS;
                    assert!(arrived.load(SeqCst) >= at_least, "released early");
                    if result.is_leader() {
                        leaders[generation].fetch_add(1, SeqCst);
                    }
                }
            }
        };
        let other = tokio::spawn(run());
        run().await;
        other.await.unwrap();
        let counts = leaders.each_ref().map(|l| l.load(SeqCst));
        assert_eq!(counts, [1; GENERATIONS], "leaders per generation");
    });
}

#[test]
fn barrier_of_zero_acts_as_barrier_of_one() {
    every_execution(|| async {
        let barrier = Barrier::new(0);
        assert!(barrier.wait().await.is_leader());
        assert!(barrier.wait().await.is_leader());
    });
}
