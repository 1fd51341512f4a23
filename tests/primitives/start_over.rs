//! Random and PCT executions start without the memory model's clocks and store histories
//! (which change nothing while a model uses only `SeqCst` atomics and no plain cells), and
//! start over with them at the first operation that needs them. The result must be what a
//! tracked search gives: the same failing execution whatever the parallelism, a schedule
//! that replays (tracked) to an equal failure, and every execution counted once.

use std::sync::atomic::Ordering::{Relaxed, SeqCst};

use interleave_test::cell::UnsafeCell;
use interleave_test::sync::atomic::{AtomicBool, AtomicUsize};
use interleave_test::sync::{Arc, Mutex};
use interleave_test::{Builder, Failure, FailureKind, Schedule, StrategyKind, thread};

use crate::common;

const STRATEGIES: [StrategyKind; 2] = [StrategyKind::Random, StrategyKind::Pct { depth: 3 }];

/// The failure of `model` under `strategy` (seed 11) with one and with two executions at
/// once, checked to be the same, and to replay through JSON to itself.
fn found(strategy: StrategyKind, model: fn()) -> Failure {
    let builder = |parallelism| {
        Builder::new()
            .strategy(strategy)
            .seed(11)
            .iterations(3000)
            .parallelism(parallelism)
    };
    let one = builder(1)
        .check(model)
        .expect_err(&format!("{strategy:?} finds the bug (seed 11)"));
    let two = builder(2).check(model).unwrap_err();
    assert_eq!(one, two, "{strategy:?}: the parallelism changed the result");
    let schedule = Schedule::from_json(&one.schedule().to_json()).unwrap();
    let replayed = builder(1).replay(model, &schedule).unwrap_err();
    assert_eq!(replayed, one, "{strategy:?}: replay gives another failure");
    one
}

/// A lost update through `SeqCst` atomics, a mutex and `Arc`s: no execution needs the
/// memory model, and the failure replays, tracked, to itself.
#[test]
fn a_seqcst_lost_update_replays_tracked_to_the_same_failure() {
    for strategy in STRATEGIES {
        let failure = found(strategy, common::racy_counter);
        assert_eq!(failure.kind(), FailureKind::Panic, "{failure}");
        assert!(
            failure.message().contains("increment was lost"),
            "{failure}"
        );
    }
}

/// Many `SeqCst` operations, then a message passed with `Relaxed` (a bug only weak memory
/// shows): every execution starts over at its first relaxed access, and the stale read is
/// still found, the same one whatever the parallelism.
fn seqcst_then_relaxed_message() {
    // Plumbing (std's `Arc`, whose drops are not switch points): the test is about the
    // atomics, and its seed was chosen for the decisions they make.
    let s = std::sync::Arc::new((AtomicUsize::new(0), AtomicBool::new(false), Mutex::new(0)));
    let s2 = std::sync::Arc::clone(&s);
    let writer = thread::spawn(move || {
        for _ in 0..3 {
            s2.0.fetch_add(1, SeqCst);
            *s2.2.lock().unwrap() += 1;
        }
        s2.0.store(42, Relaxed);
        s2.1.store(true, Relaxed);
    });
    s.0.fetch_add(1, SeqCst);
    if s.1.load(Relaxed) {
        assert_eq!(
            s.0.load(Relaxed),
            42,
            "the flag was up but the payload was stale"
        );
    }
    writer.join().unwrap();
}

#[test]
fn a_relaxed_access_after_seqcst_ones_starts_over_and_finds_the_stale_read() {
    for strategy in STRATEGIES {
        let failure = found(strategy, seqcst_then_relaxed_message);
        assert!(failure.message().contains("payload was stale"), "{failure}");
        let stale = failure
            .schedule()
            .decisions()
            .iter()
            .any(|d| d.pick().is_some_and(|(kind, _)| kind == "read from"));
        assert!(stale, "a load read a chosen store\n{failure}");
    }
}

/// Every execution of a model that needs the memory model starts over once, and is
/// counted once.
#[test]
fn executions_that_start_over_are_counted_once() {
    for strategy in STRATEGIES {
        let report = Builder::new()
            .strategy(strategy)
            .seed(4)
            .iterations(120)
            .parallelism(2)
            .check(|| {
                let flag = Arc::new(AtomicBool::new(false));
                let f2 = Arc::clone(&flag);
                let t = thread::spawn(move || f2.store(true, SeqCst));
                let _ = flag.load(Relaxed);
                t.join().unwrap();
            })
            .unwrap_or_else(|f| panic!("{strategy:?}: {f}"));
        assert_eq!(report.executions, 120, "{strategy:?}: {report}");
    }
}

/// A data race on a plain cell and a leaked cycle of `Arc`s, both reported only with the
/// memory model's tracking, are found by executions that start over.
#[test]
fn races_and_leaks_are_found_after_starting_over() {
    fn race() {
        let cell = Arc::new(UnsafeCell::new(0u32));
        let c2 = Arc::clone(&cell);
        let t = thread::spawn(move || c2.with_mut(|_| ()));
        cell.with_mut(|_| ());
        t.join().unwrap();
    }
    fn leak() {
        struct Node(Mutex<Option<Arc<Node>>>);
        let a = Arc::new(Node(Mutex::new(None)));
        let b = Arc::new(Node(Mutex::new(Some(Arc::clone(&a)))));
        *a.0.lock().unwrap() = Some(b);
    }
    for strategy in STRATEGIES {
        let failure = found(strategy, race);
        assert_eq!(failure.kind(), FailureKind::DataRace, "{failure}");
        let failure = found(strategy, leak);
        assert_eq!(failure.kind(), FailureKind::Leak, "{failure}");
        assert_eq!(failure.iteration(), 0, "every execution leaks");
        assert!(
            failure.message().contains("1 strong reference left"),
            "the counts are the tracked ones\n{failure}"
        );
    }
}
