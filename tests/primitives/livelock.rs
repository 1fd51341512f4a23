//! An execution that never ends is reported as a livelock naming the threads that kept
//! running and where.

use std::sync::atomic::{AtomicU32, Ordering as StdOrdering};

use interleave_test::sync::{Arc, Mutex};
use interleave_test::{Builder, FailureKind, thread};

static SPIN_LINE: AtomicU32 = AtomicU32::new(0);

/// Two threads wait for each other's flag while politely yielding; neither ever sets its own.
fn polite_spinners() {
    let flags = Arc::new(Mutex::new([false, false]));
    let spinners: Vec<_> = (0..2)
        .map(|i| {
            let flags = Arc::clone(&flags);
            thread::Builder::new()
                .name(format!("spinner-{i}"))
                .spawn(move || {
                    SPIN_LINE.store(line!() + 1, StdOrdering::Relaxed);
                    while !flags.lock().unwrap()[1 - i] {
                        thread::yield_now();
                    }
                })
                .unwrap()
        })
        .collect();
    for s in spinners {
        s.join().unwrap();
    }
}

#[test]
fn spinning_forever_is_a_livelock_naming_the_spinners() {
    let failure = Builder::new()
        .seed(3)
        .iterations(5)
        .max_steps(500)
        .check(polite_spinners)
        .expect_err("livelock");
    assert_eq!(failure.kind(), FailureKind::Livelock, "{failure}");
    assert!(
        failure.message().contains("max_steps (500)"),
        "{}",
        failure.message()
    );
    let names: Vec<_> = failure
        .threads()
        .iter()
        .filter_map(|t| t.thread().name())
        .collect();
    assert_eq!(
        names,
        ["spinner-0", "spinner-1"],
        "main is blocked in join, not spinning"
    );
    let spin_line = SPIN_LINE.load(StdOrdering::Relaxed);
    for t in failure.threads() {
        let line = t.location().unwrap().line();
        assert!((spin_line..spin_line + 3).contains(&line), "{t}");
    }
    assert_eq!(failure.iteration(), 0, "every execution livelocks");
}

/// A thread that yields 100 times alone (no other thread could run at any of its switch
/// points) makes no decision between threads: its steps count a tenth each, so it fits in
/// `max_steps` 10, not in 9 (a thread looping alone for ever is still reported, at ten
/// times the bound). Two threads that yield 50 times each, choices at almost every step,
/// count nearly in full: about 100 steps, more than 90.
#[test]
fn the_step_limit_counts_lone_steps_a_tenth() {
    let alone = || {
        for _ in 0..100 {
            thread::yield_now();
        }
    };
    let two = || {
        let other = thread::spawn(|| {
            for _ in 0..50 {
                thread::yield_now();
            }
        });
        for _ in 0..50 {
            thread::yield_now();
        }
        other.join().unwrap();
    };
    let run = |model: &(dyn Fn() + Sync), max_steps| {
        Builder::new()
            .seed(1)
            .iterations(1)
            .max_steps(max_steps)
            .check(model)
    };
    assert!(run(&alone, 10).is_ok());
    assert_eq!(
        run(&alone, 9).expect_err("over the limit").kind(),
        FailureKind::Livelock
    );
    assert!(run(&two, 110).is_ok());
    assert_eq!(
        run(&two, 90).expect_err("over the limit").kind(),
        FailureKind::Livelock
    );
}
