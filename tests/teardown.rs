//! A failed execution ends with its `Failure` and the process alive, whatever the other
//! threads' destructors do, on both substrates. Each case here aborted the test process
//! ("thread caused non-unwinding panic") or hung before teardown left threads behind instead
//! of unwinding them, and unwound with a marker that poisons nothing.

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};

use common::{PanicsOnDrop, SUBSTRATES};
use interleave_test::sync::mpsc::{Receiver, channel};
use interleave_test::sync::{Arc, Mutex};
use interleave_test::thread::{self, JoinHandle};
use interleave_test::{Builder, Failure, FailureKind, Substrate};

/// Runs `model` (which always fails) on `substrate` and returns its failure.
fn failure_on(substrate: Substrate, model: impl Fn() + Sync) -> Failure {
    Builder::new()
        .substrate(substrate)
        .seed(5)
        .iterations(20)
        .check(model)
        .expect_err("the model always fails")
}

/// Asserts that `failure` is a panic of the thread named `name` (with "boom", unless
/// `message` says otherwise).
#[track_caller]
fn assert_panic_in(failure: &Failure, substrate: Substrate, name: &str, message: &str) {
    assert_eq!(
        failure.kind(),
        FailureKind::Panic,
        "{substrate:?}: {failure}"
    );
    assert_eq!(
        failure.thread().unwrap().name(),
        Some(name),
        "{substrate:?}"
    );
    assert!(
        failure.message().contains(message),
        "{substrate:?}: {failure}"
    );
}

/// Spawns a thread named `name` that panics with "boom".
fn failing(name: &str) -> JoinHandle<()> {
    thread::Builder::new()
        .name(name.into())
        .spawn(|| panic!("boom"))
        .unwrap()
}

/// Joins its thread when dropped, unwrapping the result as everyday code does.
struct JoinOnDrop(Option<JoinHandle<()>>);

impl Drop for JoinOnDrop {
    fn drop(&mut self) {
        self.0.take().unwrap().join().unwrap();
    }
}

/// A thread that waits for a message that never comes.
fn waiter(rx: Receiver<()>) -> JoinHandle<()> {
    thread::spawn(move || {
        let _ = rx.recv();
    })
}

#[test]
fn a_guard_that_joins_a_worker_blocked_on_a_channel_does_not_take_the_process_down() {
    for substrate in SUBSTRATES {
        let failure = failure_on(substrate, || {
            let holder = thread::spawn(|| {
                let (tx, rx) = channel::<()>();
                let _guard = JoinOnDrop(Some(waiter(rx)));
                let _keep = tx;
                thread::park(); // blocked for good when the execution fails
            });
            failing("failing").join().unwrap();
            holder.join().unwrap();
        });
        assert_panic_in(&failure, substrate, "failing", "boom");
    }
}

/// Locks its mutex when dropped and unwraps the result, as everyday code does.
struct LockOnDrop(Arc<Mutex<u32>>);

impl Drop for LockOnDrop {
    fn drop(&mut self) {
        *self.0.lock().unwrap() += 1;
    }
}

#[test]
fn a_drop_that_unwraps_a_lock_the_teardown_released_does_not_take_the_process_down() {
    // The model closure's thread waits while holding the lock, its guard is dropped before
    // the `LockOnDrop`. On the OS-thread substrate teardown must unwind that thread (the
    // exploration's call waits for it): releasing the guard must not poison the mutex, or
    // the `unwrap` in the later destructor would panic during unwinding.
    for substrate in SUBSTRATES {
        let failure = failure_on(substrate, || {
            let m = Arc::new(Mutex::new(0));
            let _d = LockOnDrop(Arc::clone(&m));
            let _g = m.lock().unwrap();
            let (tx, rx) = channel::<()>();
            let t = thread::Builder::new()
                .name("failing".into())
                .spawn(move || {
                    let _keep = tx;
                    panic!("boom")
                })
                .unwrap();
            let _ = rx.recv();
            t.join().unwrap();
        });
        assert_panic_in(&failure, substrate, "failing", "boom");
    }
}

/// Panics when dropped unless it was defused.
struct Bomb(bool);

impl Drop for Bomb {
    fn drop(&mut self) {
        if !self.0 {
            panic!("the work was not finished");
        }
    }
}

#[test]
fn a_drop_that_panics_when_its_thread_did_not_finish_is_never_run() {
    // The real program never unwinds the waiting thread, so its bomb never goes off; running
    // that destructor would panic during unwinding and abort the process.
    for substrate in SUBSTRATES {
        let failure = failure_on(substrate, || {
            let (tx, rx) = channel::<()>();
            let worker = thread::spawn(move || {
                let mut bomb = Bomb(false);
                rx.recv().unwrap();
                bomb.0 = true;
            });
            failing("failing").join().unwrap();
            tx.send(()).unwrap();
            worker.join().unwrap();
        });
        assert_panic_in(&failure, substrate, "failing", "boom");
    }
}

/// A panic payload whose own destructor panics ([`PanicsOnDrop`]).
#[test]
fn a_panic_payload_whose_drop_panics_is_a_failure_in_main_and_in_a_spawned_thread() {
    for substrate in SUBSTRATES {
        let failure = failure_on(substrate, || std::panic::panic_any(PanicsOnDrop));
        assert_panic_in(&failure, substrate, "main", "not a string");
        let failure = failure_on(substrate, || {
            let t = thread::Builder::new()
                .name("payload".into())
                .spawn(|| std::panic::panic_any(PanicsOnDrop))
                .unwrap();
            let _ = t.join();
        });
        assert_panic_in(&failure, substrate, "payload", "not a string");
    }
}

#[test]
fn a_thread_that_catches_everything_in_a_loop_does_not_keep_the_execution_alive() {
    for substrate in SUBSTRATES {
        let failure = failure_on(substrate, || {
            let m = Arc::new(Mutex::new(0));
            let m2 = Arc::clone(&m);
            let _stubborn = thread::spawn(move || {
                loop {
                    let _ = catch_unwind(AssertUnwindSafe(|| {
                        *m2.lock().unwrap() += 1;
                        thread::yield_now();
                    }));
                }
            });
            failing("failing").join().unwrap();
        });
        assert_panic_in(&failure, substrate, "failing", "boom");
    }
}

#[test]
fn a_scoped_thread_that_catches_the_teardown_in_a_loop_is_left_behind() {
    // Scoped threads are unwound by teardown (their parent's scope waits for them); one that
    // catches the unwinding every time is given up on after a few tries. Under coroutines
    // its parent is then left behind too. (On the OS-thread substrate the model closure's
    // thread cannot be left behind, and the process would exit with a message.)
    let failure = failure_on(Substrate::Coroutines, || {
        thread::scope(|s| {
            s.spawn(|| {
                loop {
                    let _ = catch_unwind(|| thread::yield_now());
                }
            });
            thread::Builder::new()
                .name("failing".into())
                .spawn_scoped(s, || panic!("boom"))
                .unwrap();
        });
    });
    assert_eq!(failure.kind(), FailureKind::Panic, "{failure}");
    assert_eq!(failure.thread().unwrap().name(), Some("failing"));
}

#[test]
fn a_destructor_of_the_failing_thread_may_wait_for_another_thread() {
    // The failing thread's destructors run as on a real thread, before the failure is
    // known: here one waits until another thread sends. The execution then fails with the
    // panic, not a deadlock.
    for substrate in SUBSTRATES {
        let failure = failure_on(substrate, || {
            let (tx, rx) = channel::<u32>();
            let (back_tx, back_rx) = channel::<()>();
            let helper = thread::spawn(move || {
                back_rx.recv().unwrap();
                tx.send(7).unwrap();
            });
            let t = thread::Builder::new()
                .name("failing".into())
                .spawn(move || {
                    struct WaitOnDrop(Receiver<u32>);
                    impl Drop for WaitOnDrop {
                        fn drop(&mut self) {
                            assert_eq!(self.0.recv().unwrap(), 7);
                        }
                    }
                    let _wait = WaitOnDrop(rx);
                    back_tx.send(()).unwrap();
                    panic!("boom")
                })
                .unwrap();
            let _ = t.join();
            helper.join().unwrap();
        });
        assert_panic_in(&failure, substrate, "failing", "boom");
    }
}
