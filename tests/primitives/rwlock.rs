//! `RwLock`: shared readers, exclusive writers, `try_*`, poisoning, and self-deadlock
//! reports.

use std::sync::atomic::{AtomicUsize, Ordering};

use interleave_test::sync::{Arc, Mutex, RwLock, TryLockError};
use interleave_test::{Builder, FailureKind, thread};

/// Two readers are inside at once in some execution: each counts itself in, then looks at
/// the count (a switch point apart), so a schedule that runs the other reader in between
/// sees 2. The count can never exceed the number of readers.
#[test]
fn two_readers_share_the_lock() {
    let max_seen = std::sync::Arc::new(AtomicUsize::new(0));
    let seen = std::sync::Arc::clone(&max_seen);
    let report = Builder::new()
        .seed(11)
        .iterations(1_000)
        .check(move || {
            let lock = Arc::new(RwLock::new(()));
            let inside = Arc::new(Mutex::new(0usize));
            let readers: Vec<_> = (0..2)
                .map(|_| {
                    let (lock, inside, seen) = (
                        Arc::clone(&lock),
                        Arc::clone(&inside),
                        std::sync::Arc::clone(&seen),
                    );
                    thread::spawn(move || {
                        let _r = lock.read().unwrap();
                        *inside.lock().unwrap() += 1;
                        let now = *inside.lock().unwrap();
                        seen.fetch_max(now, Ordering::Relaxed);
                        *inside.lock().unwrap() -= 1;
                    })
                })
                .collect();
            for r in readers {
                r.join().unwrap();
            }
        })
        .unwrap();
    assert_eq!(report.executions, 1_000);
    assert_eq!(max_seen.load(Ordering::Relaxed), 2);
}

/// A writer is alone: while it is inside, no reader and no other writer is. Readers do
/// overlap each other (the check would be vacuous otherwise).
#[test]
fn writer_excludes_readers() {
    let max_readers = std::sync::Arc::new(AtomicUsize::new(0));
    let seen = std::sync::Arc::clone(&max_readers);
    let report = Builder::new()
        .seed(12)
        .iterations(2_000)
        .check(move || {
            let lock = Arc::new(RwLock::new(0u32));
            // (readers inside, writers inside)
            let inside = Arc::new(Mutex::new((0usize, 0usize)));
            let mut threads = Vec::new();
            for i in 0..3 {
                let (lock, inside, seen) = (
                    Arc::clone(&lock),
                    Arc::clone(&inside),
                    std::sync::Arc::clone(&seen),
                );
                threads.push(thread::spawn(move || {
                    if i == 0 {
                        let mut w = lock.write().unwrap();
                        inside.lock().unwrap().1 += 1;
                        *w += 1;
                        let (r, w_in) = *inside.lock().unwrap();
                        assert_eq!((r, w_in), (0, 1), "a writer was not alone");
                        inside.lock().unwrap().1 -= 1;
                    } else {
                        let r = lock.read().unwrap();
                        inside.lock().unwrap().0 += 1;
                        let (r_in, w_in) = *inside.lock().unwrap();
                        assert_eq!(w_in, 0, "a reader saw a writer inside");
                        assert!(*r <= 1);
                        seen.fetch_max(r_in, Ordering::Relaxed);
                        inside.lock().unwrap().0 -= 1;
                    }
                }));
            }
            for t in threads {
                t.join().unwrap();
            }
            assert_eq!(*lock.read().unwrap(), 1);
        })
        .unwrap();
    assert_eq!(report.executions, 2_000);
    assert_eq!(max_readers.load(Ordering::Relaxed), 2);
}

/// `try_write` fails with `WouldBlock` while a read guard is alive (even the caller's own),
/// `try_read` still succeeds, and `try_write` succeeds once the readers are gone.
#[test]
fn try_write_would_block_while_read_held() {
    Builder::new()
        .seed(13)
        .iterations(50)
        .check(|| {
            let lock = Arc::new(RwLock::new(5));
            let r = lock.read().unwrap();
            assert!(matches!(lock.try_write(), Err(TryLockError::WouldBlock)));
            let r2 = lock.try_read().unwrap();
            assert_eq!((*r, *r2), (5, 5));

            let other = Arc::clone(&lock);
            let t =
                thread::spawn(move || matches!(other.try_write(), Err(TryLockError::WouldBlock)));
            assert!(
                t.join().unwrap(),
                "another thread's try_write must fail while a reader holds the lock"
            );

            drop(r);
            assert!(matches!(lock.try_write(), Err(TryLockError::WouldBlock)));
            drop(r2);
            let mut w = lock.try_write().unwrap();
            *w = 6;
            assert!(matches!(lock.try_read(), Err(TryLockError::WouldBlock)));
            drop(w);
            assert_eq!(*lock.try_read().unwrap(), 6);
        })
        .unwrap();
}

/// A writer that panics poisons the lock: a later reader gets `Err` holding the data the
/// writer left. A reader that panics does not poison. `clear_poison` clears it.
#[test]
fn panicking_writer_poisons_for_later_readers() {
    Builder::new()
        .seed(14)
        .iterations(200)
        .thread_panics_fail(false)
        .check(|| {
            let lock = Arc::new(RwLock::new(0));
            let reader = {
                let lock = Arc::clone(&lock);
                thread::spawn(move || {
                    let _r = lock.read().unwrap();
                    panic!("reader panics");
                })
            };
            assert!(reader.join().is_err());
            assert!(!lock.is_poisoned(), "a panicking reader must not poison");

            let writer = {
                let lock = Arc::clone(&lock);
                thread::spawn(move || {
                    let mut w = lock.write().unwrap();
                    *w = 7;
                    panic!("writer panics");
                })
            };
            assert!(writer.join().is_err());
            assert!(lock.is_poisoned());
            let err = lock.read().unwrap_err();
            assert_eq!(**err.get_ref(), 7);
            drop(err);
            assert!(matches!(lock.try_write(), Err(TryLockError::Poisoned(_))));
            lock.clear_poison();
            assert_eq!(*lock.read().unwrap(), 7);
        })
        .unwrap();
}

/// Taking the write lock while holding a read lock in the same thread can never succeed:
/// it is a deadlock whose report names the thread, where it waits, and where it took the
/// read lock.
#[test]
fn read_then_write_in_one_thread_is_a_deadlock() {
    let read_line = std::sync::atomic::AtomicU32::new(0);
    let write_line = std::sync::atomic::AtomicU32::new(0);
    let failure = Builder::new()
        .seed(15)
        .iterations(10)
        .check(|| {
            let lock = RwLock::new(0);
            read_line.store(line!() + 1, Ordering::Relaxed);
            let _r = lock.read().unwrap();
            write_line.store(line!() + 1, Ordering::Relaxed);
            let _w = lock.write();
        })
        .unwrap_err();
    let (read_line, write_line) = (read_line.into_inner(), write_line.into_inner());
    assert_eq!(failure.kind(), FailureKind::Deadlock);
    assert_eq!(failure.thread().unwrap().name(), Some("main"));
    assert_eq!(failure.location().unwrap().line(), write_line);
    let [main] = failure.threads() else {
        panic!("one thread in the report: {failure}")
    };
    assert!(
        main.state().starts_with("waits to write-lock RwLock #0"),
        "{}",
        main.state()
    );
    assert_eq!(main.location().unwrap().line(), write_line);
    let [holder] = main.held_by() else {
        panic!("one holder in the report: {failure}")
    };
    assert_eq!(holder.thread().name(), Some("main"));
    assert_eq!(holder.location().line(), read_line);
    assert!(
        failure.to_string().contains("held by this same thread"),
        "{failure}"
    );
}

/// The converse: a read lock while holding the write lock, in a spawned thread, while the
/// main thread waits to join it.
#[test]
fn write_then_read_in_one_thread_is_a_deadlock() {
    let failure = Builder::new()
        .seed(16)
        .iterations(10)
        .check(|| {
            let lock = Arc::new(RwLock::new(0));
            let t = thread::Builder::new()
                .name("worker".into())
                .spawn({
                    let lock = Arc::clone(&lock);
                    move || {
                        let _w = lock.write().unwrap();
                        let _r = lock.read();
                    }
                })
                .unwrap();
            t.join().unwrap();
        })
        .unwrap_err();
    assert_eq!(failure.kind(), FailureKind::Deadlock);
    let worker = failure
        .threads()
        .iter()
        .find(|t| t.thread().name() == Some("worker"))
        .expect("worker reported");
    assert!(
        worker.state().starts_with("waits to read-lock RwLock"),
        "{}",
        worker.state()
    );
    let [holder] = worker.held_by() else {
        panic!("one holder: {failure}")
    };
    assert_eq!(holder.thread().name(), Some("worker"));
    assert_eq!(
        holder.location().line() + 1,
        worker.location().unwrap().line()
    );
    let main = failure
        .threads()
        .iter()
        .find(|t| t.thread().name() == Some("main"))
        .expect("main reported");
    assert!(
        main.state().starts_with("waits to join thread"),
        "{}",
        main.state()
    );
}
