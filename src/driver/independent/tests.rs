//! Runs whose drivers all start after the first execution ([`Widening::AT_ONCE`]) give the
//! same results as one driver: with several drivers from the start, failures are found by
//! several at once and PCT's epochs turn while drivers wait. (`tests/search/replay.rs`
//! checks the same with drivers that start as they do by default, after a millisecond.)

use std::time::Duration;

use crate::settings::StrategyKind;
use crate::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use crate::sync::{Arc, Mutex};
use crate::{Builder, choose, thread};

/// Random, and PCT of depth 3.
const STRATEGIES: [StrategyKind; 2] = [StrategyKind::Random, StrategyKind::Pct { depth: 3 }];

/// A builder whose runs start every driver after their first execution.
fn at_once(strategy: StrategyKind, seed: u64, parallelism: usize) -> Builder {
    let mut builder = Builder::new()
        .strategy(strategy)
        .seed(seed)
        .parallelism(parallelism);
    builder.widen_at_once = true;
    builder
}

/// Two threads each increment with a separate load and store: an update is lost in a good
/// share of executions, so several drivers find failures at once.
fn racy_counter() {
    let x = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let x = Arc::clone(&x);
            thread::spawn(move || {
                let v = x.load(SeqCst);
                x.store(v + 1, SeqCst);
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(x.load(SeqCst), 2, "an update was lost");
}

/// Three threads each add 1 under one mutex `n` times, where the search goes on to another
/// add with probability 1/2 each time: the longest execution so far (what PCT's epochs
/// learn) still grows after hundreds of executions, so an execution that learned from an
/// epoch that had not ended would differ.
fn geometric_adds() {
    let mut n = 0;
    while choose(2) == 0 {
        n += 1;
    }
    let m = Arc::new(Mutex::new(0));
    let workers: Vec<_> = (0..3)
        .map(|_| {
            let m = Arc::clone(&m);
            thread::spawn(move || (0..n).for_each(|_| *m.lock().unwrap() += 1))
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(*m.lock().unwrap(), 3 * n);
}

#[test]
fn failures_found_by_several_drivers_at_once_are_those_of_one() {
    for strategy in STRATEGIES {
        for seed in 0..20 {
            let hunt = |p| {
                at_once(strategy, seed, p)
                    .iterations(1000)
                    .check(racy_counter)
            };
            let one = hunt(1).unwrap_err();
            for p in [2, 3] {
                assert_eq!(hunt(p).unwrap_err(), one, "{strategy:?}, seed {seed}, {p}");
            }
        }
    }
}

#[test]
fn passing_runs_with_every_driver_from_the_start_report_the_same() {
    for strategy in STRATEGIES {
        for seed in 0..3 {
            let run = |p| {
                let builder = at_once(strategy, seed, p).iterations(600);
                let mut report = builder.check(geometric_adds).unwrap();
                report.elapsed = Duration::ZERO;
                report
            };
            let one = run(1);
            assert_eq!(one.executions, 600);
            for p in [2, 3] {
                assert_eq!(run(p), one, "{strategy:?}, seed {seed}, parallelism {p}");
            }
        }
    }
}
