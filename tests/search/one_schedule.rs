//! A random or PCT run of a model that makes no decision ends after two executions, as
//! exhausted: its one schedule ran, and the second execution met what the first left behind
//! outside the model. A model that decides anything, in either of them, runs its count.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

use interleave_test::{Builder, FailureKind, StrategyKind, choose, thread};

use crate::common::SUBSTRATES;

/// The strategies that run independent executions.
fn strategies() -> [StrategyKind; 2] {
    [StrategyKind::Random, StrategyKind::Pct { depth: 3 }]
}

/// One thread yielding alone, on every substrate, with one and two drivers: two executions,
/// exhausted, and the line says why.
#[test]
fn a_model_that_decides_nothing_runs_its_one_schedule_twice() {
    for substrate in SUBSTRATES {
        for strategy in strategies() {
            for parallelism in [1, 2] {
                let runs = AtomicUsize::new(0);
                let report = Builder::new()
                    .substrate(substrate)
                    .strategy(strategy)
                    .parallelism(parallelism)
                    .seed(7)
                    .iterations(500)
                    .check(|| {
                        runs.fetch_add(1, Relaxed);
                        for _ in 0..10 {
                            thread::yield_now();
                        }
                    })
                    .unwrap_or_else(|f| panic!("{substrate:?} {strategy:?}: {f}"));
                let at = format!("{substrate:?} {strategy:?} x{parallelism}: {report}");
                assert_eq!(report.executions, 2, "{at}");
                assert_eq!(runs.load(Relaxed), 2, "{at}");
                assert!(report.exhausted, "{at}");
                assert_eq!(report.stopped_by, None, "{at}");
                assert_eq!(report.distinct_schedules, 1, "{at}");
                assert!(
                    report.to_string().contains(
                        "2 executions passed; the model made no decision: its one schedule ran"
                    ),
                    "{at}"
                );
            }
        }
    }
}

/// A std `static` the first execution sets is found set by the second, which fails: the
/// run does not end after one execution.
#[test]
fn the_second_execution_meets_what_the_first_left_behind() {
    for strategy in strategies() {
        static SET: AtomicBool = AtomicBool::new(false);
        SET.store(false, Relaxed);
        let failure = Builder::new()
            .strategy(strategy)
            .seed(7)
            .iterations(500)
            .check(|| assert!(!SET.swap(true, Relaxed), "left behind"))
            .expect_err("the second execution fails");
        assert_eq!(
            failure.kind(),
            FailureKind::Panic,
            "{strategy:?}: {failure}"
        );
        assert_eq!(failure.iteration(), 1, "{strategy:?}: {failure}");
    }
}

/// A model that decides nothing in its first execution but decides in its second (a
/// `static` counter makes it spawn a thread from then on) runs every execution it was given;
/// so does one whose only decisions are of data, and one that decides only in its first.
#[test]
fn a_model_that_decides_in_either_first_execution_runs_its_count() {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let spawns_from_the_second = || {
        if RUNS.fetch_add(1, Relaxed) >= 1 {
            let other = thread::spawn(thread::yield_now);
            thread::yield_now();
            other.join().unwrap();
        }
    };
    let only_the_first = || {
        if RUNS.fetch_add(1, Relaxed) == 0 {
            choose(2);
        }
    };
    let chooses = || {
        choose(2);
    };
    let models: [(&str, &(dyn Fn() + Sync)); 3] = [
        ("spawns from the second", &spawns_from_the_second),
        ("decides only in the first", &only_the_first),
        ("chooses data", &chooses),
    ];
    for strategy in strategies() {
        for (name, model) in models {
            RUNS.store(0, Relaxed);
            let report = Builder::new()
                .strategy(strategy)
                .seed(7)
                .iterations(40)
                .check(model)
                .unwrap_or_else(|f| panic!("{strategy:?} {name}: {f}"));
            assert_eq!(report.executions, 40, "{strategy:?} {name}: {report}");
            assert!(!report.exhausted, "{strategy:?} {name}: {report}");
        }
    }
}

/// One execution asked for is one run, not exhausted (the second was not run); two asked
/// for and both without a decision is exhausted, as the run ended at its count anyway.
#[test]
fn a_count_of_one_or_two_is_kept() {
    for (iterations, exhausted) in [(1, false), (2, true)] {
        let report = Builder::new()
            .seed(7)
            .iterations(iterations)
            .check(thread::yield_now)
            .unwrap_or_else(|f| panic!("{iterations}: {f}"));
        assert_eq!(report.executions, iterations, "{report}");
        assert_eq!(report.exhausted, exhausted, "{report}");
    }
}
