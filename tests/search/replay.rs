//! Replay through JSON text gives the identical failure, for every failure kind; a passing
//! schedule replays as a pass.

use interleave_test::sync::{Arc, Mutex};
use interleave_test::{Builder, Failure, FailureKind, Schedule, thread};

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
