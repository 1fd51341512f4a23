//! `mpsc`'s batch receive, send with a timeout, weak senders, owned permits and
//! `reserve_many`, as Tokio documents them:
//! the exact set of outcomes over every execution of exhaustive DFS, the same on both
//! substrates.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Mutex as StdMutex;
use std::time::Duration;

use interleave_test::Reduction;
use interleave_test_tokio::sync::mpsc::{self, error::SendTimeoutError, error::TrySendError};
use interleave_test_tokio::{self as tokio, time};

use crate::common::{SUBSTRATES, dfs};

/// What `model` returns over every execution of exhaustive DFS with reduction, checked to
/// be the same on both substrates.
fn outcomes<T, Fut>(model: impl Fn() -> Fut + Sync) -> BTreeSet<T>
where
    T: Ord + std::fmt::Debug + Send,
    Fut: Future<Output = T>,
{
    let mut all: Option<BTreeSet<T>> = None;
    for substrate in SUBSTRATES {
        let seen = StdMutex::new(BTreeSet::new());
        let report = dfs(substrate, Reduction::Dpor, None)
            .check_async(|| async {
                let outcome = model().await;
                seen.lock().unwrap().insert(outcome);
            })
            .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
        assert!(report.exhausted, "{substrate:?}");
        let seen = seen.into_inner().unwrap();
        if let Some(first) = &all {
            assert_eq!(first, &seen, "{substrate:?}");
        }
        all = Some(seen);
    }
    all.unwrap()
}

// ---- recv_many ----

#[test]
fn recv_many_takes_what_is_there_up_to_its_limit_then_0_once_the_senders_are_gone() {
    let got = outcomes(|| async {
        let (tx, mut rx) = mpsc::channel::<u32>(4);
        let _sender = tokio::spawn(async move {
            for v in 0..3 {
                tx.send(v).await.unwrap();
            }
        });
        let (mut buf, mut sizes) = (Vec::new(), Vec::new());
        loop {
            let n = rx.recv_many(&mut buf, 2).await;
            sizes.push(n);
            if n == 0 {
                break;
            }
        }
        assert_eq!(buf, [0, 1, 2]);
        sizes
    });
    let expected = [vec![1, 1, 1, 0], vec![1, 2, 0], vec![2, 1, 0]];
    assert_eq!(got, BTreeSet::from(expected));
}

#[test]
fn recv_many_with_limit_0_returns_0_at_once_and_takes_nothing() {
    let got = outcomes(|| async {
        let (tx, mut rx) = mpsc::unbounded_channel::<u32>();
        tx.send(5).unwrap();
        let mut buf = Vec::new();
        let none = rx.recv_many(&mut buf, 0).await;
        let one = rx.recv_many(&mut buf, 9).await;
        (none, one, buf)
    });
    assert_eq!(got, BTreeSet::from([(0, 1, vec![5])]));
}

#[test]
fn recv_many_loses_nothing_when_another_select_branch_wins() {
    let got = outcomes(|| async {
        let (tx, mut rx) = mpsc::channel::<u32>(4);
        let _sender = tokio::spawn(async move {
            for v in 1..=2 {
                tx.send(v).await.unwrap();
            }
        });
        let mut buf = Vec::new();
        let mut ticks = 0;
        for _ in 0..2 {
            tokio::select! {
                _ = rx.recv_many(&mut buf, 8) => {}
                () = time::sleep(Duration::from_millis(1)) => ticks += 1,
            }
        }
        while rx.recv_many(&mut buf, 8).await > 0 {}
        assert_eq!(buf, [1, 2], "a value was lost with a dropped recv_many");
        ticks
    });
    // The tick wins in some executions (once: under DFS a thread ends at most one wait
    // early, and the sender can always act) and not in others: the drop was explored.
    assert_eq!(got, BTreeSet::from([0, 1]));
}

// ---- send_timeout ----

/// A full channel of capacity 1 whose receiver starts after 10 ms; `send_timeout` with
/// `timeout` ms: its result, and what the receiver got. Checks that the send timed out
/// only once its deadline passed, and that a slot came free only once the receiver ran.
async fn send_timeout_against_a_late_receiver(timeout: u64) -> (String, Vec<u32>) {
    let (tx, mut rx) = mpsc::channel::<u32>(1);
    tx.send(0).await.unwrap();
    let receiver = tokio::spawn(async move {
        time::sleep(Duration::from_millis(10)).await;
        let mut got = Vec::new();
        while let Some(v) = rx.recv().await {
            got.push(v);
        }
        got
    });
    let start = time::Instant::now();
    let sent = tx.send_timeout(1, Duration::from_millis(timeout)).await;
    let waited = start.elapsed();
    let sent = match sent {
        Ok(()) => {
            assert!(waited >= Duration::from_millis(10), "sent at {waited:?}");
            "sent".to_owned()
        }
        Err(e) => {
            assert!(
                waited >= Duration::from_millis(timeout),
                "timed out at {waited:?}"
            );
            format!("{e:?} {}", e.into_inner())
        }
    };
    drop(tx);
    (sent, receiver.await.unwrap())
}

#[test]
fn send_timeout_gives_the_value_back_exactly_when_no_slot_came_free_by_the_deadline() {
    // Either may come first, whatever the deadline: a woken task may be polled late (the
    // slot came free meanwhile: sent, at 10 ms or later), and the receiver may wake late
    // (after the deadline: timed out, the value back, never received).
    let either = BTreeSet::from([
        ("Timeout(..) 1".to_owned(), vec![0]),
        ("sent".to_owned(), vec![0, 1]),
    ]);
    for timeout in [5, 10, 20] {
        let got = outcomes(|| send_timeout_against_a_late_receiver(timeout));
        assert_eq!(got, either, "timeout {timeout} ms");
    }
}

#[test]
fn send_timeout_to_a_dropped_receiver_is_closed_with_the_value() {
    let got = outcomes(|| async {
        let (tx, rx) = mpsc::channel::<u32>(1);
        drop(rx);
        match tx.send_timeout(4, Duration::from_millis(5)).await {
            Err(SendTimeoutError::Closed(v)) => v,
            other => panic!("{other:?}"),
        }
    });
    assert_eq!(got, BTreeSet::from([4]));
}

// ---- weak senders ----

#[test]
fn a_weak_sender_counts_upgrades_while_a_sender_lives_and_keeps_nothing_open() {
    let got = outcomes(|| async {
        let (tx, mut rx) = mpsc::channel::<u32>(2);
        let weak = tx.downgrade();
        let counts = (tx.strong_count(), tx.weak_count());
        let again = weak.upgrade().expect("a sender lives");
        let (strong, weak_count) = (weak.strong_count(), weak.clone().weak_count());
        drop((tx, again));
        let gone = weak.upgrade().is_none();
        // The receiver sees the end though a weak sender lives.
        (counts, strong, weak_count, gone, rx.recv().await)
    });
    assert_eq!(got, BTreeSet::from([((1, 1), 2, 2, true, None)]));
}

#[test]
fn an_upgrade_racing_the_last_senders_drop_either_sends_or_finds_none() {
    let got = outcomes(|| async {
        let (tx, mut rx) = mpsc::unbounded_channel::<u32>();
        let weak = tx.downgrade();
        let task = tokio::spawn(async move {
            if let Some(tx) = weak.upgrade() {
                tx.send(7).unwrap();
            }
        });
        drop(tx);
        let got = rx.recv().await;
        task.await.unwrap();
        got
    });
    assert_eq!(got, BTreeSet::from([None, Some(7)]));
}

// ---- owned permits, reserve_many, the receiver's counts ----

#[test]
fn an_owned_permit_holds_a_slot_until_it_sends_or_is_released() {
    let got = outcomes(|| async {
        let (tx, mut rx) = mpsc::channel::<u32>(1);
        let permit = tx.clone().reserve_owned().await.unwrap();
        let full_while_held = matches!(tx.try_send(1), Err(TrySendError::Full(1)));
        let tx2 = permit.send(5);
        let first = rx.recv().await;
        let tx2 = tx2.try_reserve_owned().unwrap().release();
        let free_after_release = tx2.try_send(6).is_ok();
        (full_while_held, first, free_after_release, rx.recv().await)
    });
    assert_eq!(got, BTreeSet::from([(true, Some(5), true, Some(6))]));
}

#[test]
fn try_reserve_owned_gives_the_sender_back_when_full_or_closed() {
    let got = outcomes(|| async {
        let (tx, mut rx) = mpsc::channel::<u32>(1);
        tx.send(1).await.unwrap();
        let Err(TrySendError::Full(tx)) = tx.try_reserve_owned() else {
            panic!("a full channel gave an owned permit");
        };
        let first = rx.recv().await;
        drop(rx);
        let closed = matches!(tx.try_reserve_owned(), Err(TrySendError::Closed(_)));
        (first, closed)
    });
    assert_eq!(got, BTreeSet::from([(Some(1), true)]));
}

/// The last sender, held by an owned permit that is dropped unused: the slot goes back
/// and the receiver sees the end.
#[test]
fn dropping_an_owned_permit_of_the_last_sender_ends_the_channel() {
    let got = outcomes(|| async {
        let (tx, mut rx) = mpsc::channel::<u32>(1);
        let task = tokio::spawn(async move {
            let permit = tx.reserve_owned().await.unwrap();
            drop(permit);
        });
        let got = rx.recv().await;
        task.await.unwrap();
        got
    });
    assert_eq!(got, BTreeSet::from([None]));
}

/// A task and main's `join!` each `reserve_many(2)` on a channel of 2 slots while main
/// receives: each takes both slots at once, in the fair queue, so their values never
/// interleave (taken one by one, each could hold one slot and wait forever for the other).
#[test]
fn reserve_many_takes_all_its_slots_at_once_in_the_fair_queue() {
    let got = outcomes(|| async {
        let (tx, mut rx) = mpsc::channel::<u32>(2);
        let reserve_and_send = |tx: mpsc::Sender<u32>, first: u32| async move {
            for (permit, v) in tx.reserve_many(2).await.unwrap().zip(first..) {
                permit.send(v);
            }
        };
        drop(tokio::spawn(reserve_and_send(tx.clone(), 10)));
        let receive = async {
            let mut order = Vec::new();
            for _ in 0..4 {
                order.push(rx.recv().await.unwrap());
            }
            order
        };
        tokio::join!(reserve_and_send(tx, 20), receive).1
    });
    assert_eq!(
        got,
        BTreeSet::from([vec![10, 11, 20, 21], vec![20, 21, 10, 11]])
    );
}

#[test]
fn reserve_many_beyond_the_capacity_fails_and_unused_permits_go_back() {
    let got = outcomes(|| async {
        let (tx, rx) = mpsc::channel::<u32>(3);
        let too_many = tx.reserve_many(4).await.is_err();
        let try_too_many = matches!(tx.try_reserve_many(4), Err(TrySendError::Full(())));
        let none = tx.reserve_many(0).await.unwrap().len();
        let mut permits = tx.try_reserve_many(3).unwrap();
        permits.next().unwrap().send(1);
        let left = permits.len();
        drop(permits);
        let weak = tx.downgrade();
        let counts = (rx.sender_strong_count(), rx.sender_weak_count());
        drop(weak);
        (too_many, try_too_many, none, left, tx.capacity(), counts)
    });
    assert_eq!(got, BTreeSet::from([(true, true, 0, 2, 2, (1, 1))]));
}
