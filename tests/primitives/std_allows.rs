//! What std allows and tests must see: spurious wake-ups, spurious failures of
//! `compare_exchange_weak`, `notify_one` waking any waiter, and timeouts firing while
//! another thread could still act. Each is a decision, found under every strategy where it
//! is the bug, recorded in the schedule and replayed to an equal failure.

use std::sync::atomic::Ordering::{AcqRel, Acquire};
use std::time::Duration;

use interleave_test::sync::atomic::AtomicBool;
use interleave_test::sync::mpsc::channel;
use interleave_test::sync::{Condvar, Mutex};
use interleave_test::{Builder, Failure, FailureKind, Schedule, StrategyKind, thread};
// Plumbing: the modelled `Arc`'s drops are switch points of their own (`tests/arc_drops.rs`);
// the counts here are of the primitives the models share.
use std::sync::Arc;

const DFS: StrategyKind = StrategyKind::Dfs {
    max_preemptions: None,
};

const STRATEGIES: [(StrategyKind, &str); 3] = [
    (StrategyKind::Random, "random"),
    (StrategyKind::Pct { depth: 3 }, "pct"),
    (DFS, "dfs"),
];

fn builder(strategy: StrategyKind) -> Builder {
    Builder::new()
        .strategy(strategy)
        .seed(11)
        .iterations(2000)
        .parallelism(1)
}

/// The failure of `model` under `strategy`, checked to replay through JSON to itself, and
/// to hold a decision `pick` taken with `value`.
fn found(strategy: StrategyKind, name: &str, model: fn(), pick: (&str, usize)) -> Failure {
    let failure = builder(strategy)
        .check(model)
        .expect_err(&format!("{name} finds the bug (seed 11)"));
    let schedule = Schedule::from_json(&failure.schedule().to_json()).unwrap();
    assert_eq!(&schedule, failure.schedule(), "{name}");
    let replayed = builder(strategy).replay(model, &schedule).unwrap_err();
    assert_eq!(replayed, failure, "{name}: replay gives another failure");
    assert!(
        failure
            .schedule()
            .decisions()
            .iter()
            .any(|d| d.pick() == Some(pick)),
        "{name}: no decision {pick:?}\n{}",
        failure.schedule().to_json()
    );
    failure
}

/// Waits for a flag with `if` where `while` belongs: a spurious wake-up returns with the
/// flag still down.
fn if_instead_of_while() {
    let pair = Arc::new((Mutex::new(false), Condvar::new()));
    let p2 = Arc::clone(&pair);
    let t = thread::spawn(move || {
        *p2.0.lock().unwrap() = true;
        p2.1.notify_one();
    });
    let mut ready = pair.0.lock().unwrap();
    if !*ready {
        ready = pair.1.wait(ready).unwrap();
    }
    assert!(*ready, "woke up with the flag still down");
    drop(ready);
    t.join().unwrap();
}

#[test]
fn if_instead_of_while_around_wait_is_found_through_a_spurious_wake_up() {
    for (strategy, name) in STRATEGIES {
        let failure = found(strategy, name, if_instead_of_while, ("wake spuriously", 1));
        assert_eq!(failure.kind(), FailureKind::Panic, "{name}: {failure}");
        assert!(failure.message().contains("flag still down"), "{failure}");
    }
    // Without spurious wake-ups the model is correct.
    let report = builder(DFS)
        .spurious_wakeups(false)
        .check(if_instead_of_while)
        .unwrap();
    assert!(report.exhausted, "{report}");
}

/// A ticket lock on a condvar that relies on `notify_one` waking the longest waiter: each
/// waiter takes its ticket just before it waits, and whoever is served passes the turn on.
/// Waking the later waiter first loses the notification: it waits again and nobody wakes
/// the one whose turn it is.
fn ticket_lock_relying_on_fifo() {
    struct Tickets {
        next: u32,
        serving: Option<u32>,
    }
    let s = Arc::new((
        Mutex::new(Tickets {
            next: 0,
            serving: None,
        }),
        Condvar::new(),
        Condvar::new(),
    ));
    let waiter = || {
        let s = Arc::clone(&s);
        thread::spawn(move || {
            let mut g = s.0.lock().unwrap();
            let mine = g.next;
            g.next += 1;
            s.2.notify_all();
            while g.serving != Some(mine) {
                g = s.1.wait(g).unwrap();
            }
            g.serving = Some(mine + 1);
            s.1.notify_one();
        })
    };
    let (a, b) = (waiter(), waiter());
    let mut g = s.0.lock().unwrap();
    while g.next < 2 {
        g = s.2.wait(g).unwrap();
    }
    g.serving = Some(0);
    s.1.notify_one();
    drop(g);
    a.join().unwrap();
    b.join().unwrap();
}

#[test]
fn a_notify_one_that_wakes_a_later_waiter_is_explored() {
    for (strategy, name) in STRATEGIES {
        let failure = found(
            strategy,
            name,
            ticket_lock_relying_on_fifo,
            ("notify waiter", 1),
        );
        assert_eq!(failure.kind(), FailureKind::Deadlock, "{name}: {failure}");
        // The report names the waiter the pick woke: one of the two spawned threads.
        let woke = failure
            .recent()
            .iter()
            .find_map(|s| {
                s.op()
                    .split_once("notify waiter 1 of 2 (wakes ")
                    .map(|(_, t)| t)
            })
            .unwrap_or_else(|| panic!("{name}: no woken waiter named in\n{failure}"));
        assert!(["#1)", "#2)"].contains(&woke), "{name}: {woke}");
    }
}

/// The consumer takes a timeout as proof that the producer died, though the producer only
/// had to be scheduled.
fn timeout_taken_for_death() {
    let (tx, rx) = channel();
    let consumer = thread::spawn(move || {
        rx.recv_timeout(Duration::from_secs(1))
            .expect("the producer died")
    });
    tx.send(7).unwrap();
    assert_eq!(consumer.join().unwrap(), 7);
}

#[test]
fn a_timeout_that_fires_while_the_sender_could_still_run_is_explored() {
    for (strategy, name) in STRATEGIES {
        let failure = found(strategy, name, timeout_taken_for_death, ("time out now", 1));
        assert_eq!(failure.kind(), FailureKind::Panic, "{name}: {failure}");
        assert!(failure.message().contains("the producer died"), "{failure}");
    }
}

/// Treats a failed `compare_exchange_weak` as proof of contention, in one thread.
fn weak_exchange_as_proof() {
    let flag = AtomicBool::new(false);
    let won = flag
        .compare_exchange_weak(false, true, AcqRel, Acquire)
        .is_ok();
    assert!(won, "no other thread, yet the exchange failed");
}

#[test]
fn compare_exchange_weak_may_fail_spuriously() {
    for (strategy, name) in STRATEGIES {
        let failure = found(
            strategy,
            name,
            weak_exchange_as_proof,
            ("fail spuriously", 1),
        );
        assert_eq!(failure.kind(), FailureKind::Panic, "{name}: {failure}");
    }
    let report = builder(DFS)
        .spurious_wakeups(false)
        .check(weak_exchange_as_proof)
        .unwrap();
    assert_eq!(report.executions, 1, "{report}");
}

/// A spin loop on `compare_exchange_weak` and a wait in a `while` loop end under DFS: each
/// thread has at most one early ending per execution.
#[test]
fn loops_around_early_endings_still_exhaust() {
    fn model() {
        let flag = Arc::new(AtomicBool::new(false));
        let f2 = Arc::clone(&flag);
        let t = thread::spawn(move || {
            while f2
                .compare_exchange_weak(false, true, AcqRel, Acquire)
                .is_err()
            {
                thread::yield_now();
            }
        });
        while flag
            .compare_exchange_weak(true, false, AcqRel, Acquire)
            .is_err()
        {
            thread::yield_now();
        }
        t.join().unwrap();
    }
    let report = builder(DFS).iterations(100_000).check(model).unwrap();
    assert!(report.exhausted, "{report}");
}
