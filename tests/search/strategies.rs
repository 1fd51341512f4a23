//! Every known-buggy model under every strategy gives the expected failure kind, with fixed
//! seeds; failures found by DFS and PCT replay through JSON to an equal failure.

use std::time::Duration;

use interleave_test::sync::mpsc::channel;
use interleave_test::sync::{Condvar, Mutex};
use interleave_test::{Builder, Failure, FailureKind, Reduction, Schedule, StrategyKind, thread};

use crate::common::{abba, lost_wakeup, racy_counter};
// Plumbing: the modelled `Arc`'s drops are switch points of their own (`tests/arc_drops.rs`);
// the counts here are of the primitives the models share.
use std::sync::Arc;

/// A thread locks a mutex it already holds, after another thread has run: every schedule
/// deadlocks.
fn self_deadlock() {
    let m = Arc::new(Mutex::new(0));
    let m2 = Arc::clone(&m);
    let t = thread::spawn(move || *m2.lock().unwrap() += 1);
    let _first = m.lock().unwrap();
    let _second = m.lock().unwrap();
    drop(t);
}

/// The producer sends only if the consumer has announced itself, and drops its sender either
/// way: when it looks first, `recv` sees the disconnection and the `unwrap` panics.
fn mpsc_disconnect_race() {
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
}

/// The consumer waits up to 50 ms for a value; the producer sleeps exactly 50 ms first. Both
/// deadlines fire together, and whoever runs first after that decides.
fn condvar_timeout_race() {
    let pair = Arc::new((Mutex::new(None::<u32>), Condvar::new()));
    let pair2 = Arc::clone(&pair);
    let producer = thread::spawn(move || {
        thread::sleep(Duration::from_millis(50));
        let (slot, cv) = &*pair2;
        *slot.lock().unwrap() = Some(7);
        cv.notify_one();
    });
    let (slot, cv) = &*pair;
    let (guard, timeout) = cv
        .wait_timeout_while(slot.lock().unwrap(), Duration::from_millis(50), |v| {
            v.is_none()
        })
        .unwrap();
    assert!(!timeout.timed_out(), "gave up waiting for the producer");
    drop(guard);
    producer.join().unwrap();
}

/// One known-buggy model: its name, the model, the kind of failure it must give, and the
/// execution in which each strategy finds it (random and PCT with seed [`SEED`], then DFS
/// with and without reduction).
/// The executions are pinned, not derived: observed when the test was written.
struct Case {
    name: &'static str,
    model: fn(),
    kind: FailureKind,
    found_at: [u64; 4],
}

const CASES: [Case; 6] = [
    Case {
        name: "racy counter",
        model: racy_counter,
        kind: FailureKind::Panic,
        found_at: [13, 2, 1, 4],
    },
    Case {
        name: "abba",
        model: abba,
        kind: FailureKind::Deadlock,
        found_at: [3, 2, 1, 5],
    },
    Case {
        name: "lost wakeup",
        model: lost_wakeup,
        kind: FailureKind::Deadlock,
        found_at: [8, 76, 4, 12],
    },
    Case {
        name: "self deadlock",
        model: self_deadlock,
        kind: FailureKind::Deadlock,
        found_at: [0, 0, 0, 0],
    },
    Case {
        name: "mpsc disconnect race",
        model: mpsc_disconnect_race,
        kind: FailureKind::Panic,
        found_at: [5, 1, 1, 4],
    },
    Case {
        name: "condvar timeout race",
        model: condvar_timeout_race,
        kind: FailureKind::Panic,
        found_at: [1, 0, 2, 7],
    },
];

const SEED: u64 = 1;

const DFS: StrategyKind = StrategyKind::Dfs {
    max_preemptions: None,
};

/// The strategies, in the order of [`Case::found_at`], with the name reports give them: DFS
/// with its default partial-order reduction, then without.
const STRATEGIES: [(StrategyKind, Reduction, &str); 4] = [
    (StrategyKind::Random, Reduction::Dpor, "random"),
    (StrategyKind::Pct { depth: 3 }, Reduction::Dpor, "pct"),
    (DFS, Reduction::Dpor, "dfs"),
    (DFS, Reduction::Off, "dfs"),
];

fn builder(strategy: StrategyKind, reduction: Reduction) -> Builder {
    Builder::new()
        .seed(SEED)
        .iterations(1000)
        .max_steps(1000)
        .strategy(strategy)
        .reduction(reduction)
}

fn find(case: &Case, (strategy, reduction, name): (StrategyKind, Reduction, &str)) -> Failure {
    let failure = match builder(strategy, reduction).check(case.model) {
        Ok(report) => panic!("{} under {name} passed: {report}", case.name),
        Err(failure) => failure,
    };
    assert_eq!(
        failure.kind(),
        case.kind,
        "{} under {name}: {failure}",
        case.name
    );
    failure
}

#[test]
fn every_buggy_model_fails_with_its_kind_under_every_strategy() {
    for case in &CASES {
        for (how, found_at) in STRATEGIES.into_iter().zip(case.found_at) {
            let failure = find(case, how);
            let name = how.2;
            let what = format!("{} under {name} ({:?})", case.name, how.1);
            assert_eq!(failure.iteration(), found_at, "{what}: {failure}");
            assert_eq!(failure.schedule().strategy(), name, "{what}");
            let seed = (name != "dfs").then_some(SEED);
            assert_eq!(failure.seed(), seed, "{what}");
        }
    }
}

#[test]
fn failures_replay_through_json_to_an_equal_failure() {
    for case in &CASES {
        for how @ (strategy, reduction, name) in STRATEGIES {
            let failure = find(case, how);
            let what = format!("{} under {name} ({reduction:?})", case.name);
            let text = failure.schedule().to_json();
            let schedule = Schedule::from_json(&text).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(&schedule, failure.schedule(), "{what}");
            let replayed = builder(strategy, reduction)
                .replay(case.model, &schedule)
                .expect_err(&what);
            assert_eq!(replayed, failure, "{what}");
            assert_eq!(replayed.to_string(), failure.to_string(), "{what}");
        }
    }
}

/// Partial-order reduction finds the same failures as plain DFS, bounded or not: whether a
/// buggy model fails, and with which kind, does not depend on the reduction.
#[test]
fn reduction_finds_the_same_failures_under_every_bound() {
    for case in &CASES {
        for bound in [Some(0), Some(1), Some(2), None] {
            let dfs = StrategyKind::Dfs {
                max_preemptions: bound,
            };
            let kind = |reduction| {
                Builder::new()
                    .max_steps(1000)
                    .strategy(dfs)
                    .reduction(reduction)
                    .check(case.model)
                    .map(|report| assert!(report.exhausted, "{report}"))
                    .map_err(|failure| failure.kind())
            };
            let reduced = kind(Reduction::Dpor);
            assert_eq!(
                reduced,
                kind(Reduction::Off),
                "{} with bound {bound:?}",
                case.name
            );
            if bound.is_none_or(|b| b >= 2) {
                assert_eq!(
                    reduced,
                    Err(case.kind),
                    "{} with bound {bound:?}",
                    case.name
                );
            }
        }
    }
}
