//! `mpsc`'s batch receive, send with a timeout, and weak senders, as Tokio documents them:
//! the exact set of outcomes over every execution of exhaustive DFS, the same on both
//! substrates.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Mutex as StdMutex;
use std::time::Duration;

use interleave_test::Reduction;
use interleave_test::tokio::sync::mpsc::{self, error::SendTimeoutError};
use interleave_test::tokio::{self, time};

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
