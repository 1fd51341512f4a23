//! Model threads: names, ids, spawn/join, scope, many threads, threads left unjoined.

use std::sync::atomic::{AtomicUsize as StdAtomicUsize, Ordering as StdOrdering};

use interleave_test::sync::{Arc, Mutex};
use interleave_test::{Builder, thread};

#[test]
fn sixteen_threads_each_increment_once() {
    let report = Builder::new()
        .seed(16)
        .iterations(300)
        .check(|| {
            let m = Arc::new(Mutex::new(0));
            let hs: Vec<_> = (0..16)
                .map(|_| {
                    let m = Arc::clone(&m);
                    thread::spawn(move || *m.lock().unwrap() += 1)
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
            assert_eq!(*m.lock().unwrap(), 16);
        })
        .unwrap();
    assert_eq!(report.executions, 300);
}

#[test]
fn names_and_ids_are_deterministic() {
    Builder::new()
        .seed(3)
        .iterations(100)
        .check(|| {
            let me = thread::current();
            assert_eq!((me.name(), me.id().as_u64()), (Some("main"), 0));
            let a = thread::Builder::new()
                .name("a".into())
                .spawn(|| thread::current().name().map(String::from))
                .unwrap();
            let b = thread::spawn(|| {
                (
                    thread::current().name().is_none(),
                    thread::current().id().as_u64(),
                )
            });
            assert_eq!(a.thread().id().as_u64(), 1);
            assert_eq!(a.thread().name(), Some("a"));
            assert_eq!(a.join().unwrap().as_deref(), Some("a"));
            assert_eq!(b.join().unwrap(), (true, 2));
        })
        .unwrap();
}

#[test]
fn is_finished_after_join_and_stack_size_is_honoured() {
    Builder::new()
        .seed(5)
        .iterations(50)
        .check(|| {
            let t = thread::Builder::new()
                .stack_size(8 << 20)
                .spawn(|| {
                    // 4 MiB on the stack would overflow std's default 2 MiB.
                    let big = [1u8; 4 << 20];
                    std::hint::black_box(&big)
                        .iter()
                        .map(|&b| b as usize)
                        .sum::<usize>()
                })
                .unwrap();
            while !t.is_finished() {
                thread::yield_now();
            }
            assert_eq!(t.join().unwrap(), 4 << 20);
        })
        .unwrap();
}

#[test]
fn unjoined_threads_still_run_to_completion() {
    static DONE: StdAtomicUsize = StdAtomicUsize::new(0);
    let report = Builder::new()
        .seed(7)
        .iterations(500)
        .check(|| {
            let m = Arc::new(Mutex::new(()));
            thread::spawn(move || {
                let _g = m.lock().unwrap();
                DONE.fetch_add(1, StdOrdering::SeqCst);
            });
        })
        .unwrap();
    // No decision (the spawned thread runs once main has ended): its one schedule, twice.
    assert_eq!(DONE.load(StdOrdering::SeqCst), 2);
    assert_eq!(report.executions, 2);
}

#[test]
fn scoped_threads_borrow_and_are_joined() {
    Builder::new()
        .seed(12)
        .iterations(1000)
        .check(|| {
            let counter = Mutex::new(0);
            let mut local = vec![1, 2, 3];
            thread::scope(|s| {
                s.spawn(|| *counter.lock().unwrap() += 1);
                let h = s.spawn(|| *counter.lock().unwrap() += 10);
                local.push(4);
                h.join().unwrap();
            });
            // The unjoined scoped thread has finished too.
            assert_eq!(counter.into_inner().unwrap(), 11);
            assert_eq!(local, [1, 2, 3, 4]);
        })
        .unwrap();
}

#[test]
fn a_panicking_scoped_thread_is_a_failure_naming_it() {
    let failure = Builder::new()
        .seed(1)
        .iterations(10)
        .check(|| {
            thread::scope(|s| {
                thread::Builder::new()
                    .name("scoped".into())
                    .spawn_scoped(s, || panic!("scoped boom"))
                    .unwrap();
                s.spawn(|| thread::yield_now());
            });
        })
        .expect_err("always panics");
    assert_eq!(failure.kind(), interleave_test::FailureKind::Panic);
    assert_eq!(failure.thread().unwrap().name(), Some("scoped"));
    assert_eq!(failure.message(), "scoped boom");
}
