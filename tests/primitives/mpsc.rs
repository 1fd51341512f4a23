//! `sync::mpsc`: delivery order, disconnection, rendezvous, virtual-time timeouts, and
//! channel deadlocks in reports.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use interleave_test::sync::mpsc::{
    RecvError, RecvTimeoutError, SendError, TryRecvError, TrySendError, channel, sync_channel,
};
use interleave_test::sync::{Arc, Mutex};
use interleave_test::time::Instant;
use interleave_test::{Builder, FailureKind, thread};

/// Two producers send three values each; the consumer gets all six, each producer's in the
/// order it sent them, and over the run sees every one of the C(6,3) = 20 ways to merge the
/// two sequences.
#[test]
fn pipeline_delivers_every_value_in_per_producer_order() {
    let orders = std::sync::Mutex::new(HashSet::new());
    let report = Builder::new()
        .seed(11)
        .iterations(10_000)
        .check(|| {
            let (tx, rx) = channel();
            let producers: Vec<_> = (0..2)
                .map(|p| {
                    let tx = tx.clone();
                    thread::spawn(move || {
                        for i in 0..3 {
                            tx.send((p, i)).unwrap();
                        }
                    })
                })
                .collect();
            drop(tx);
            let got: Vec<(i32, i32)> = rx.iter().collect();
            for p in 0..2 {
                let mine: Vec<i32> = got.iter().filter(|v| v.0 == p).map(|v| v.1).collect();
                assert_eq!(
                    mine,
                    [0, 1, 2],
                    "producer {p}'s values out of order in {got:?}"
                );
            }
            for h in producers {
                h.join().unwrap();
            }
            orders
                .lock()
                .unwrap()
                .insert(got.iter().map(|v| v.0).collect::<Vec<_>>());
        })
        .unwrap();
    assert_eq!(report.executions, 10_000);
    assert_eq!(orders.lock().unwrap().len(), 20);
}

static PRODUCER_WAIT_LINE: AtomicU32 = AtomicU32::new(0);
static CONSUMER_WAIT_LINE: AtomicU32 = AtomicU32::new(0);

/// The consumer iterates until every sender is gone, but the producer keeps a clone alive
/// while it waits for a signal the consumer only sends after the loop.
#[test]
fn consumer_waiting_on_a_sender_that_waits_on_it_is_a_deadlock() {
    let failure = Builder::new()
        .seed(5)
        .iterations(1_000)
        .check(|| {
            let (tx, rx) = channel::<i32>();
            let (go_tx, go_rx) = channel::<()>();
            let producer = thread::Builder::new()
                .name("producer".to_owned())
                .spawn(move || {
                    let keep = tx.clone();
                    tx.send(1).unwrap();
                    drop(tx);
                    PRODUCER_WAIT_LINE.store(line!() + 1, Ordering::Relaxed);
                    go_rx.recv().unwrap();
                    drop(keep);
                })
                .unwrap();
            CONSUMER_WAIT_LINE.store(line!() + 1, Ordering::Relaxed);
            let got: Vec<i32> = rx.iter().collect();
            go_tx.send(()).unwrap();
            producer.join().unwrap();
            assert_eq!(got, [1]);
        })
        .unwrap_err();
    assert_eq!(failure.kind(), FailureKind::Deadlock);
    let threads = failure.threads();
    let names: Vec<_> = threads.iter().map(|t| t.thread().name()).collect();
    assert_eq!(names, [Some("main"), Some("producer")]);
    for t in threads {
        assert!(
            t.state().starts_with("waits to receive on Channel #"),
            "{}",
            t.state()
        );
        assert!(t.location().unwrap().file().ends_with("mpsc.rs"), "{t}");
    }
    assert_eq!(
        threads[0].location().unwrap().line(),
        CONSUMER_WAIT_LINE.load(Ordering::Relaxed)
    );
    assert_eq!(
        threads[1].location().unwrap().line(),
        PRODUCER_WAIT_LINE.load(Ordering::Relaxed)
    );
    // The two threads wait on different channels.
    assert_ne!(threads[0].state(), threads[1].state());
}

/// Dropping the receiver races with the first send; once it is gone every send fails and
/// hands its value back.
#[test]
fn send_after_the_receiver_is_dropped_gives_the_value_back() {
    let outcomes = std::sync::Mutex::new(HashSet::new());
    Builder::new()
        .seed(1)
        .iterations(200)
        .check(|| {
            let (tx, rx) = channel::<String>();
            let dropper = thread::spawn(move || drop(rx));
            let early = tx.send("early".to_owned());
            if let Err(SendError(v)) = &early {
                assert_eq!(v, "early");
            }
            outcomes.lock().unwrap().insert(early.is_ok());
            dropper.join().unwrap();
            assert_eq!(
                tx.send("late".to_owned()),
                Err(SendError("late".to_owned()))
            );
        })
        .unwrap();
    assert_eq!(outcomes.into_inner().unwrap(), HashSet::from([true, false]));
}

#[test]
fn queued_values_are_delivered_before_the_disconnection() {
    Builder::new()
        .seed(2)
        .iterations(200)
        .check(|| {
            let (tx, rx) = channel();
            let producer = thread::spawn(move || {
                tx.send(1).unwrap();
                tx.send(2).unwrap();
            });
            // Blocks until a value arrives or, after both, the sender is dropped.
            assert_eq!(rx.recv(), Ok(1));
            assert_eq!(rx.recv(), Ok(2));
            assert_eq!(rx.recv(), Err(RecvError));
            assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
            producer.join().unwrap();
        })
        .unwrap();
}

/// As std does, dropping the receiver drops the values still queued.
#[test]
fn dropping_the_receiver_drops_queued_values() {
    Builder::new()
        .seed(15)
        .iterations(10)
        .check(|| {
            let value = Arc::new(5);
            let (tx, rx) = sync_channel(3);
            tx.send(Arc::clone(&value)).unwrap();
            assert_eq!(Arc::strong_count(&value), 2);
            drop(rx);
            assert_eq!(Arc::strong_count(&value), 1);
            let back = tx.send(Arc::clone(&value)).unwrap_err().0;
            assert!(Arc::ptr_eq(&back, &value));
        })
        .unwrap();
}

#[test]
fn try_recv_tells_empty_from_disconnected() {
    Builder::new()
        .seed(3)
        .iterations(10)
        .check(|| {
            let (tx, rx) = sync_channel(2);
            assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
            tx.send(4).unwrap();
            let tx2 = tx.clone();
            drop(tx);
            assert_eq!(rx.try_recv(), Ok(4));
            assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
            drop(tx2);
            assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
            assert_eq!(rx.try_iter().count(), 0);
        })
        .unwrap();
}

/// A sender blocked on a full channel is released with its value when the receiver goes.
#[test]
fn blocked_sender_fails_when_the_receiver_is_dropped() {
    Builder::new()
        .seed(4)
        .iterations(500)
        .check(|| {
            let (tx, rx) = sync_channel(1);
            tx.send(1).unwrap();
            let sender = thread::spawn(move || tx.send(2));
            drop(rx);
            assert_eq!(sender.join().unwrap(), Err(SendError(2)));
        })
        .unwrap();
}

/// The producer only sends if the consumer has announced itself, and drops its sender
/// either way: when it looks first, `recv` sees the disconnection and the `unwrap` panics.
#[test]
fn unwrapping_recv_on_a_sender_dropped_early_is_found() {
    let failure = Builder::new()
        .seed(6)
        .iterations(1_000)
        .check(|| {
            let ready = Arc::new(Mutex::new(false));
            let (tx, rx) = channel();
            let ready2 = Arc::clone(&ready);
            let producer = thread::spawn(move || {
                if *ready2.lock().unwrap() {
                    tx.send(9).unwrap();
                }
            });
            *ready.lock().unwrap() = true;
            assert_eq!(rx.recv().unwrap(), 9);
            producer.join().unwrap();
        })
        .unwrap_err();
    assert_eq!(failure.kind(), FailureKind::Panic);
    assert_eq!(failure.thread().unwrap().name(), Some("main"));
    assert!(
        failure.message().contains("RecvError"),
        "{}",
        failure.message()
    );
}

/// Whether the consumer can see the producer's `send` returned before it receives.
fn send_returns_before_recv(bound: usize) -> impl Fn() + Sync {
    move || {
        let (tx, rx) = sync_channel(bound);
        let sent = Arc::new(Mutex::new(false));
        let sent2 = Arc::clone(&sent);
        let producer = thread::spawn(move || {
            tx.send(1).unwrap();
            *sent2.lock().unwrap() = true;
        });
        thread::yield_now();
        assert!(
            !*sent.lock().unwrap(),
            "send returned before the value was received"
        );
        assert_eq!(rx.recv(), Ok(1));
        producer.join().unwrap();
        assert!(*sent.lock().unwrap());
    }
}

#[test]
fn rendezvous_send_waits_for_the_receiver() {
    let report = Builder::new()
        .seed(7)
        .iterations(1_000)
        .check(send_returns_before_recv(0));
    assert_eq!(report.unwrap().executions, 1_000);
    // With one slot of buffer the same check fails: the test can see the difference.
    let failure = Builder::new()
        .seed(7)
        .iterations(1_000)
        .check(send_returns_before_recv(1))
        .unwrap_err();
    assert_eq!(failure.kind(), FailureKind::Panic);
    assert!(
        failure.message().contains("send returned before"),
        "{}",
        failure.message()
    );
}

/// A receiver that only polls with `try_recv` never waits in `recv`, so `try_send` on a
/// rendezvous channel never succeeds and the poller never sees a value.
/// Two rendezvous senders: each `send` returns only after its own value was received, so
/// after the first `recv` at most the sender of that value has returned.
#[test]
fn rendezvous_sends_return_only_for_the_value_taken() {
    Builder::new()
        .seed(14)
        .iterations(1_000)
        .check(|| {
            let (tx, rx) = sync_channel(0);
            let returned = Arc::new(Mutex::new(Vec::new()));
            let senders: Vec<_> = (0..2)
                .map(|id| {
                    let tx = tx.clone();
                    let returned = Arc::clone(&returned);
                    thread::spawn(move || {
                        tx.send(id).unwrap();
                        returned.lock().unwrap().push(id);
                    })
                })
                .collect();
            drop(tx);
            let first = rx.recv().unwrap();
            let seen = returned.lock().unwrap().clone();
            assert!(
                seen.is_empty() || seen == [first],
                "{seen:?} returned after receiving {first}"
            );
            let second = rx.recv().unwrap();
            assert_eq!(first + second, 1);
            for s in senders {
                s.join().unwrap();
            }
            assert_eq!(rx.recv(), Err(RecvError));
            assert_eq!(returned.lock().unwrap().len(), 2);
        })
        .unwrap();
}

#[test]
fn rendezvous_try_send_fails_against_a_polling_receiver() {
    Builder::new()
        .seed(12)
        .iterations(300)
        .check(|| {
            let (tx, rx) = sync_channel(0);
            let poller = thread::spawn(move || {
                for _ in 0..3 {
                    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
                }
                rx // kept alive: a dropped receiver would make `try_send` fail as disconnected
            });
            for i in 0..3 {
                assert_eq!(tx.try_send(i), Err(TrySendError::Full(i)));
            }
            let _rx = poller.join().unwrap();
        })
        .unwrap();
}

#[test]
fn rendezvous_try_send_needs_a_waiting_receiver() {
    Builder::new()
        .seed(8)
        .iterations(300)
        .check(|| {
            let (tx, rx) = sync_channel(0);
            assert_eq!(tx.try_send(1), Err(TrySendError::Full(1)));
            let receiver = thread::spawn(move || rx.recv());
            let mut refused = 0;
            loop {
                match tx.try_send(2) {
                    Ok(()) => break,
                    Err(TrySendError::Full(2)) => refused += 1,
                    Err(e) => panic!("unexpected {e:?}"),
                }
                thread::yield_now();
            }
            assert_eq!(receiver.join().unwrap(), Ok(2));
            assert!(refused < 100_000);
            assert_eq!(tx.try_send(3), Err(TrySendError::Disconnected(3)));
        })
        .unwrap();
}

/// A `recv_timeout` returns no earlier than its timeout, and a timeout may fire while
/// another thread could still act (here: before the holder, sleeping 100 ms, drops its
/// sender). Every outcome is explored, each seen at a virtual time that fits it.
#[test]
fn recv_timeout_waits_at_least_its_timeout_and_may_time_out_early() {
    let seen = std::sync::Mutex::new(std::collections::BTreeSet::new());
    Builder::new()
        .strategy(interleave_test::StrategyKind::Dfs {
            max_preemptions: None,
        })
        .check(|| {
            let (tx, rx) = channel::<i32>();
            let holder = thread::spawn(move || {
                thread::sleep(Duration::from_millis(100));
                drop(tx);
            });
            let start = Instant::now();
            let mut outcomes = vec![];
            for timeout in [Duration::from_millis(30), Duration::from_secs(1)] {
                let before = start.elapsed();
                let got = rx.recv_timeout(timeout);
                let waited = start.elapsed() - before;
                match got {
                    Err(RecvTimeoutError::Timeout) => assert!(waited >= timeout, "{waited:?}"),
                    // The sender went at 100 ms.
                    Err(RecvTimeoutError::Disconnected) => {
                        assert!(start.elapsed() >= Duration::from_millis(100))
                    }
                    Ok(v) => panic!("nothing was sent, got {v}"),
                }
                outcomes.push(got.unwrap_err());
            }
            // Disconnection takes precedence over a zero timeout, once the holder is gone.
            holder.join().unwrap();
            assert_eq!(
                rx.recv_timeout(Duration::ZERO),
                Err(RecvTimeoutError::Disconnected)
            );
            seen.lock().unwrap().insert(format!("{outcomes:?}"));
        })
        .unwrap();
    let seen: Vec<String> = seen.into_inner().unwrap().into_iter().collect();
    // The holder ran before the first timeout fired, between the two, or after both.
    assert_eq!(
        seen,
        [
            "[Disconnected, Disconnected]",
            "[Timeout, Disconnected]",
            "[Timeout, Timeout]"
        ]
    );
}

/// A rendezvous value sent while `recv_timeout` waits is taken at once, without the clock
/// moving, unless the timeout fires first (then the value is taken by a later `recv`).
#[test]
fn recv_timeout_returns_a_value_sent_meanwhile() {
    let seen = std::sync::Mutex::new(std::collections::BTreeSet::new());
    Builder::new()
        .strategy(interleave_test::StrategyKind::Dfs {
            max_preemptions: None,
        })
        .check(|| {
            let (tx, rx) = sync_channel(0);
            let producer = thread::spawn(move || tx.send(3).unwrap());
            let start = Instant::now();
            let got = rx.recv_timeout(Duration::from_millis(5));
            match got {
                Ok(v) => {
                    assert_eq!(v, 3);
                    assert_eq!(start.elapsed(), Duration::ZERO);
                }
                Err(e) => {
                    assert_eq!(e, RecvTimeoutError::Timeout);
                    assert_eq!(start.elapsed(), Duration::from_millis(5));
                    assert_eq!(rx.recv(), Ok(3));
                }
            }
            producer.join().unwrap();
            seen.lock().unwrap().insert(got.is_ok());
        })
        .unwrap();
    assert_eq!(seen.into_inner().unwrap().len(), 2);
}

/// Sends from a destructor while the model unwinds after a failure.
struct SignalOnDrop(interleave_test::sync::mpsc::Sender<&'static str>);

impl Drop for SignalOnDrop {
    fn drop(&mut self) {
        let _ = self.0.send("dropped");
    }
}

/// A failure while other threads wait on channels ends the execution cleanly: the waiting
/// threads unwind (their channel ends and destructors run without the model) and the
/// failure is the original panic.
///
/// Regression: a thread the failure stopped before it started drops its closure, and the
/// channel ends in it, after it finished; that drop once ran the switch point of a live
/// execution, unwound out of the pooled worker and left the exploration waiting for ever.
#[test]
fn failure_while_threads_wait_on_channels_reports_the_panic() {
    let failure = Builder::new()
        .seed(13)
        .iterations(50)
        .check(|| {
            let (tx, rx) = channel::<&'static str>();
            let (full_tx, full_rx) = sync_channel::<i32>(0);
            let tx2 = tx.clone();
            thread::spawn(move || {
                let _signal = SignalOnDrop(tx2);
                let _ = full_tx.send(1); // nobody receives: blocks until the end
            });
            thread::spawn(move || {
                let _signal = SignalOnDrop(tx);
                let _ = rx.recv(); // blocks: main and the other thread keep senders
            });
            let _keep = full_rx;
            panic!("model failed on purpose");
        })
        .unwrap_err();
    assert_eq!(failure.kind(), FailureKind::Panic);
    assert_eq!(failure.message(), "model failed on purpose");
    assert_eq!(failure.thread().unwrap().name(), Some("main"));
}
