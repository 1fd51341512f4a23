//! Replay through JSON text gives the identical failure, for every failure kind; a passing
//! schedule replays as a pass. The same seed gives the same failure, and a passing run the
//! same report, whatever the parallelism.

use interleave_test::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use interleave_test::sync::{Arc, Mutex};
use interleave_test::{Builder, Failure, FailureKind, Schedule, StrategyKind, thread};

use crate::common::abba;

fn split_increment() {
    let m = Arc::new(Mutex::new(0));
    let hs: Vec<_> = (0..3)
        .map(|_| {
            let m = Arc::clone(&m);
            thread::spawn(move || {
                let v = *m.lock().unwrap();
                *m.lock().unwrap() = v + 1;
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*m.lock().unwrap(), 3);
}

fn spinner() {
    let flag = Arc::new(Mutex::new(false));
    let f2 = Arc::clone(&flag);
    let t = thread::spawn(move || while !*f2.lock().unwrap() {});
    thread::yield_now();
    t.join().unwrap();
}

fn round_trip(name: &str, model: fn(), expected: FailureKind) -> Failure {
    for seed in 0..5 {
        let builder = Builder::new()
            .name(name)
            .seed(seed)
            .iterations(1000)
            .max_steps(300);
        let failure = builder.check(model).expect_err("found");
        assert_eq!(failure.kind(), expected, "seed {seed}: {failure}");
        let text = failure.schedule().to_json();
        let schedule = Schedule::from_json(&text).unwrap();
        assert_eq!(&schedule, failure.schedule());
        let replayed = Builder::new()
            .max_steps(300)
            .replay(model, &schedule)
            .expect_err("replay fails");
        assert_eq!(replayed, failure, "seed {seed}");
        assert_eq!(replayed.to_string(), failure.to_string(), "seed {seed}");
    }
    Builder::new()
        .name(name)
        .seed(0)
        .iterations(1000)
        .max_steps(300)
        .check(model)
        .unwrap_err()
}

#[test]
fn panic_replays_identically() {
    let f = round_trip("split_increment", split_increment, FailureKind::Panic);
    assert_eq!(f.schedule().test(), Some("split_increment"));
}

#[test]
fn deadlock_replays_identically() {
    round_trip("abba", abba, FailureKind::Deadlock);
}

#[test]
fn livelock_replays_identically() {
    round_trip("spinner", spinner, FailureKind::Livelock);
}

#[test]
fn a_schedule_records_only_real_choices() {
    let f = Builder::new()
        .seed(1)
        .iterations(1000)
        .check(split_increment)
        .unwrap_err();
    for d in f.schedule().decisions() {
        assert!(d.options() >= 2, "{d:?}");
    }
    // A single-threaded model has no choices at all.
    let single = || {
        let m = Mutex::new(1);
        *m.lock().unwrap() += 1;
        assert_eq!(*m.lock().unwrap(), 3);
    };
    let f = Builder::new()
        .seed(1)
        .iterations(1)
        .check(single)
        .unwrap_err();
    assert!(f.schedule().decisions().is_empty());
    assert_eq!(Builder::new().replay(single, f.schedule()).unwrap_err(), f);
}

#[test]
fn same_seed_same_failure() {
    let a = Builder::new()
        .seed(77)
        .iterations(1000)
        .check(split_increment)
        .unwrap_err();
    let b = Builder::new()
        .seed(77)
        .iterations(1000)
        .check(split_increment)
        .unwrap_err();
    assert_eq!(a, b);
}

#[test]
fn the_failure_does_not_depend_on_parallelism() {
    let run = |p| {
        Builder::new()
            .seed(5)
            .iterations(1000)
            .parallelism(p)
            .check(split_increment)
            .unwrap_err()
    };
    let one = run(1);
    assert_eq!(run(2), one);
    assert_eq!(run(3), one);
    // Every execution below the failing one passed: rerunning just those passes.
    if one.iteration() > 0 {
        let below = Builder::new()
            .seed(5)
            .iterations(one.iteration())
            .parallelism(2);
        assert_eq!(
            below.check(split_increment).unwrap().executions,
            one.iteration()
        );
    }
}

/// Two threads increment a shared counter in one of `ways` ways chosen by the search:
/// the first way is a separate load and store, the others one `fetch_add`. Thread 0 first
/// adds 1 to a second counter `pad` times, thread 1 afterwards. An update is lost only on
/// the first way, when thread 1 runs between thread 0's load and store: the longer the
/// padding and the more ways, the rarer that is.
fn padded_race(pad: usize, ways: usize) {
    let x = Arc::new(AtomicUsize::new(0));
    let y = Arc::new(AtomicUsize::new(0));
    let racy = interleave_test::choose(ways) == 0;
    let workers: Vec<_> = (0..2)
        .map(|t| {
            let (x, y) = (Arc::clone(&x), Arc::clone(&y));
            thread::spawn(move || {
                let pad = || (0..pad).for_each(|_| _ = y.fetch_add(1, SeqCst));
                if t == 0 {
                    pad();
                }
                if racy {
                    let v = x.load(SeqCst);
                    x.store(v + 1, SeqCst);
                } else {
                    x.fetch_add(1, SeqCst);
                }
                if t == 1 {
                    pad();
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(x.load(SeqCst), 2, "an update was lost");
}

/// Three threads each add 1 `adds` times under one mutex.
fn locked_adds(adds: usize) {
    let m = Arc::new(Mutex::new(0));
    let workers: Vec<_> = (0..3)
        .map(|_| {
            let m = Arc::clone(&m);
            thread::spawn(move || (0..adds).for_each(|_| *m.lock().unwrap() += 1))
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(*m.lock().unwrap(), 3 * adds);
}

/// Random and PCT give the same failure, and a passing run the same report, at parallelism
/// 1, 2 and 3. The runs are long enough (hundreds to thousands of executions) for the first
/// driver to bring in the others after its first millisecond (tens of executions in a test
/// build), so most of their executions run with several drivers at once, some of them
/// while PCT's epochs turn. In
/// the second passing model the search chooses how many adds each thread makes (up to 40),
/// so the longest execution grows from one epoch to the next over the first hundreds of
/// executions: PCT's executions would differ if one learned from an epoch still running.
/// The failures are found from execution 342 to 1875 (with a single driver):
/// random, padding 14, one way, seeds 0 to 3: 1045, 761, 421, 1875;
/// PCT (depth 3), padding 50, eight ways, seeds 0 to 3: 342, 1026, 894, 824.
#[test]
fn results_do_not_depend_on_parallelism_under_random_and_pct() {
    let strategies = [
        (StrategyKind::Random, 14, 1, 0..4),
        (StrategyKind::Pct { depth: 3 }, 50, 8, 0..4),
    ];
    for (strategy, pad, ways, seeds) in strategies {
        let at = |p, seed| Builder::new().strategy(strategy).seed(seed).parallelism(p);
        for seed in seeds {
            let hunt = |p| {
                at(p, seed)
                    .iterations(5000)
                    .check(|| padded_race(pad, ways))
            };
            let one = hunt(1).unwrap_err();
            assert!(one.iteration() >= 342, "{strategy:?}, seed {seed}: {one}");
            for p in [2, 3] {
                assert_eq!(hunt(p).unwrap_err(), one, "{strategy:?}, seed {seed}, {p}");
            }
        }
        let passing = |p, model: &(dyn Fn() + Sync)| {
            let mut report = at(p, 9).iterations(3000).check(model).unwrap();
            report.elapsed = std::time::Duration::ZERO;
            report
        };
        let two_adds = || locked_adds(2);
        let chosen_adds = || locked_adds(interleave_test::choose(41));
        for model in [&two_adds as &(dyn Fn() + Sync), &chosen_adds] {
            let one = passing(1, model);
            assert_eq!(one.executions, 3000);
            for p in [2, 3] {
                assert_eq!(passing(p, model), one, "{strategy:?}, parallelism {p}");
            }
        }
    }
}
