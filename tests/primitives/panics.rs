//! A panic in any model thread is a `FailureKind::Panic` naming the thread, the message and
//! the place, with the thread's backtrace; `join` sees it instead when asked to.

use std::sync::atomic::{AtomicU32, Ordering as StdOrdering};

use interleave_test::sync::{Arc, Mutex};
use interleave_test::{Builder, FailureKind, thread};

static ASSERT_LINE: AtomicU32 = AtomicU32::new(0);

/// Lost update through two separate critical sections of a Mutex.
fn split_increment() {
    let m = Arc::new(Mutex::new(0));
    let workers: Vec<_> = (0..2)
        .map(|i| {
            let m = Arc::clone(&m);
            thread::Builder::new()
                .name(format!("worker-{i}"))
                .spawn(move || {
                    let v = *m.lock().unwrap();
                    *m.lock().unwrap() = v + 1;
                })
                .unwrap()
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    ASSERT_LINE.store(line!() + 1, StdOrdering::Relaxed);
    assert_eq!(*m.lock().unwrap(), 2, "lost update");
}

#[test]
fn lost_update_is_a_panic_of_main_at_the_assert() {
    let seed = 42;
    let failure = Builder::new()
        .seed(seed)
        .iterations(1000)
        .check(split_increment)
        .expect_err("found");
    assert_eq!(failure.kind(), FailureKind::Panic, "seed {seed}: {failure}");
    assert_eq!(failure.thread().unwrap().name(), Some("main"));
    assert_eq!(failure.thread().unwrap().id(), 0);
    let loc = failure.location().unwrap();
    assert_eq!(
        (loc.file(), loc.line()),
        (file!(), ASSERT_LINE.load(StdOrdering::Relaxed))
    );
    assert!(
        failure.message().contains("lost update"),
        "{}",
        failure.message()
    );
    assert!(
        failure.message().contains("left: 1"),
        "{}",
        failure.message()
    );
    assert_eq!(failure.seed(), Some(seed));
    assert!(failure.iteration() < 1000);
    // The last decisions name the threads and places that led there.
    assert!(!failure.recent().is_empty() && failure.recent().len() <= 20);
    assert!(
        failure
            .recent()
            .iter()
            .any(|s| s.thread().name() == Some("worker-1"))
    );
    assert!(
        failure
            .recent()
            .iter()
            .all(|s| s.location().file() == file!())
    );
    let bt = failure.backtrace().expect("panics carry a backtrace");
    assert!(bt.contains("split_increment"), "{bt}");
    assert!(failure.to_string().contains(&format!("seed {seed}")));
}

#[test]
fn panic_in_a_spawned_thread_names_that_thread() {
    let line = AtomicU32::new(0);
    let failure = Builder::new()
        .seed(9)
        .iterations(10)
        .check(|| {
            let t = thread::Builder::new()
                .name("checker".into())
                .spawn(|| {
                    let v: Option<u8> = std::hint::black_box(None);
                    v.expect("no value here");
                })
                .unwrap();
            line.store(line!() - 3, StdOrdering::Relaxed);
            let _ = t.join();
        })
        .expect_err("always panics");
    assert_eq!(failure.kind(), FailureKind::Panic);
    assert_eq!(failure.thread().unwrap().name(), Some("checker"));
    assert_eq!(failure.thread().unwrap().id(), 1);
    assert_eq!(
        failure.location().unwrap().line(),
        line.load(StdOrdering::Relaxed)
    );
    assert_eq!(failure.message(), "no value here");
    assert_eq!(failure.iteration(), 0);
}

#[test]
fn join_returns_the_payload_when_thread_panics_do_not_fail() {
    let report = Builder::new()
        .seed(2)
        .iterations(200)
        .thread_panics_fail(false)
        .check(|| {
            let m = Arc::new(Mutex::new(0));
            let m2 = Arc::clone(&m);
            let t = thread::spawn(move || {
                let _g = m2.lock().unwrap();
                panic!("boom {}", 7);
            });
            let payload = t.join().expect_err("the thread panicked");
            let message = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied());
            assert_eq!(message, Some("boom 7"));
            // The panic poisoned the mutex, as in std.
            assert!(m.is_poisoned());
            assert!(m.lock().is_err());
        })
        .expect("join sees the panic; the model passes");
    // No decision (`join` waits for the only other thread): its one schedule, twice.
    assert_eq!(report.executions, 2);
}

/// A guard dropped while its thread unwinds from the failure must not panic again (that
/// would abort the whole test process).
#[test]
fn failure_while_other_threads_hold_guards_tears_down_cleanly() {
    for seed in 0..20 {
        let failure = Builder::new()
            .seed(seed)
            .iterations(100)
            .check(|| {
                let m = Arc::new(Mutex::new(0));
                let _holders: Vec<_> = (0..3)
                    .map(|_| {
                        let m = Arc::clone(&m);
                        thread::spawn(move || {
                            let mut g = m.lock().unwrap();
                            *g += 1;
                            thread::yield_now();
                        })
                    })
                    .collect();
                panic!("main gives up");
            })
            .expect_err("main always panics");
        assert_eq!(failure.kind(), FailureKind::Panic, "seed {seed}");
        assert_eq!(failure.message(), "main gives up", "seed {seed}");
    }
}
