//! Runs whose drivers all start after the first execution ([`Widening::AT_ONCE`]) give the
//! same results as one driver: with several drivers from the start, failures are found by
//! several at once and PCT's epochs turn while drivers wait. (`tests/search/replay.rs`
//! checks the same with drivers that start as they do by default, after a millisecond.)

use std::panic::Location;
use std::time::Duration;

use super::{Independent, run_independent};
use crate::settings::StrategyKind;
use crate::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use crate::sync::{Arc, Mutex};
use crate::threads;
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

/// A driver that unwinds (here: the strategy of execution 20 cannot be made) halts the run:
/// the others, waiting for PCT's epoch 15..31 to end, stop instead of waiting for ever, and
/// the panic reaches the caller.
#[test]
fn a_driver_that_unwinds_stops_the_others() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let builder = at_once(StrategyKind::Pct { depth: 3 }, 1, 3).iterations(1000);
        let make = |i, k| -> Box<dyn crate::strategy::Strategy> {
            assert_ne!(i, 20, "no strategy for execution 20");
            Box::new(crate::strategy::PctStrategy::new(i, 3, k))
        };
        let how = Independent {
            name: crate::settings::StrategyName::PCT,
            epochs: true,
            make: &make,
        };
        // A decision, so that the run does not end after two executions (one schedule).
        let model = || {
            crate::choose(2);
        };
        let run = || run_independent(&builder.plan(), &how, &model, Location::caller());
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run));
        let message = outcome
            .map(|_| String::new())
            .unwrap_or_else(|p| threads::text_of(&*p).unwrap_or_default());
        done.send(message).unwrap();
    });
    let message = finished
        .recv_timeout(Duration::from_secs(60))
        .expect("the run ended");
    assert!(
        message.contains("no strategy for execution 20"),
        "{message}"
    );
}
