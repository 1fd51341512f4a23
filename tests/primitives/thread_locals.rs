//! The crate's `thread_local!`: one value per model thread, fresh in every execution,
//! destroyed when its thread exits and before a joiner sees it finished, on both
//! substrates; and std's own thread-locals on the OS-thread substrate, destroyed at
//! model-thread exit as on real threads.

use std::cell::{Cell, RefCell};

use crate::common::{PanicsOnDrop, SUBSTRATES};
use interleave_test::sync::mpsc::{Sender, channel};
use interleave_test::{Builder, FailureKind, Substrate, thread, thread_local};

thread_local! {
    static COUNT: Cell<u32> = const { Cell::new(0) };
    static NAMES: RefCell<Vec<String>> = RefCell::new(vec!["initial".to_owned()]);
    static DONE: RefCell<Option<Sender<&'static str>>> = const { RefCell::new(None) };
}

fn builder(substrate: Substrate) -> Builder {
    Builder::new().substrate(substrate).seed(11).iterations(50)
}

#[test]
fn every_model_thread_has_its_own_value_fresh_in_every_execution() {
    for substrate in SUBSTRATES {
        let report = builder(substrate)
            .check(|| {
                assert_eq!(COUNT.get(), 0, "a fresh value in every execution");
                COUNT.set(5);
                let hs: Vec<_> = (0..3u32)
                    .map(|i| {
                        thread::spawn(move || {
                            assert_eq!(COUNT.get(), 0, "a fresh value in every thread");
                            COUNT.set(i);
                            thread::yield_now();
                            COUNT.replace(i + 10)
                        })
                    })
                    .collect();
                let seen: Vec<u32> = hs.into_iter().map(|h| h.join().unwrap()).collect();
                assert_eq!(seen, [0, 1, 2]);
                assert_eq!(COUNT.take(), 5, "main's value is untouched");
                assert_eq!(COUNT.get(), 0);
            })
            .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
        assert_eq!(report.executions, 50, "{substrate:?}");
        assert_eq!(report.substrate, substrate);
    }
}

#[test]
fn refcell_keys_have_std_s_borrow_helpers_and_set_skips_the_initializer() {
    for substrate in SUBSTRATES {
        builder(substrate)
            .check(|| {
                assert_eq!(NAMES.with_borrow(|v| v.clone()), ["initial"]);
                NAMES.with_borrow_mut(|v| v.push("more".into()));
                assert_eq!(NAMES.with_borrow(Vec::len), 2);
                let t = thread::spawn(|| {
                    NAMES.set(vec!["set".into()]);
                    NAMES.with_borrow(|v| v.clone())
                });
                assert_eq!(
                    t.join().unwrap(),
                    ["set"],
                    "set does not run the initializer"
                );
                assert_eq!(NAMES.replace(vec![]), ["initial", "more"]);
                assert!(NAMES.take().is_empty());
            })
            .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
    }
}

/// Sends its name when dropped: a destructor that uses the model.
struct SayOnDrop(Sender<&'static str>, &'static str);

impl Drop for SayOnDrop {
    fn drop(&mut self) {
        let _ = self.0.send(self.1);
    }
}

thread_local! {
    static SAY: RefCell<Option<SayOnDrop>> = const { RefCell::new(None) };
}

#[test]
fn values_are_destroyed_at_thread_exit_before_the_joiner_sees_it_finished() {
    for substrate in SUBSTRATES {
        builder(substrate)
            .check(|| {
                let (tx, rx) = channel();
                let t = thread::spawn(move || {
                    SAY.set(Some(SayOnDrop(tx, "worker")));
                });
                t.join().unwrap();
                assert_eq!(
                    rx.try_recv(),
                    Ok("worker"),
                    "destroyed before join returned"
                );
            })
            .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
    }
}

#[test]
fn a_thread_local_sender_disconnects_its_channel_when_the_thread_exits() {
    // A correct model: the receiver ends when the only sender, kept in a thread-local of the
    // worker, is destroyed at the worker's exit. Reported as a deadlock when thread-locals
    // outlived their thread.
    for substrate in SUBSTRATES {
        builder(substrate)
            .check(|| {
                let (tx, rx) = channel();
                thread::spawn(move || {
                    DONE.set(Some(tx));
                    DONE.with_borrow(|tx| tx.as_ref().unwrap().send("hello").unwrap());
                });
                assert_eq!(rx.recv(), Ok("hello"));
                assert!(rx.recv().is_err(), "disconnected at the worker's exit");
            })
            .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
    }
}

std::thread_local! {
    static STD_DONE: RefCell<Option<Sender<u32>>> = const { RefCell::new(None) };
}

#[test]
fn std_thread_locals_are_destroyed_at_model_thread_exit_on_os_threads() {
    // On the OS-thread substrate each model thread has an OS thread of its own, whose std
    // thread-locals are destroyed when it exits, still inside the model.
    let report = builder(Substrate::Threads)
        .check(|| {
            let (tx, rx) = channel();
            thread::spawn(move || STD_DONE.set(Some(tx)));
            assert!(rx.recv().is_err(), "disconnected at the worker's exit");
        })
        .unwrap();
    // No decision (`recv` waits for the only other thread): its one schedule, twice.
    assert_eq!(report.executions, 2);
}

thread_local! {
    static PANICKY: RefCell<Option<PanicsOnDrop>> = const { RefCell::new(None) };
}

#[test]
fn a_destructor_that_panics_fails_the_execution_naming_the_thread() {
    for substrate in SUBSTRATES {
        let failure = builder(substrate)
            .check(|| {
                thread::Builder::new()
                    .name("exiting".into())
                    .spawn(|| PANICKY.set(Some(PanicsOnDrop)))
                    .unwrap()
                    .join()
                    .unwrap();
            })
            .expect_err("the destructor always panics");
        assert_eq!(
            failure.kind(),
            FailureKind::Panic,
            "{substrate:?}: {failure}"
        );
        assert_eq!(
            failure.thread().unwrap().name(),
            Some("exiting"),
            "{substrate:?}"
        );
        assert_eq!(failure.message(), "a destructor panicked");
    }
}

/// Outside a model a key is the OS thread's own, as std's is. (Before, it panicked.)
#[test]
fn outside_a_model_a_key_is_the_os_thread_s() {
    assert_eq!(COUNT.get(), 0);
    COUNT.set(3);
    assert_eq!(COUNT.get(), 3);
    let other = std::thread::spawn(|| COUNT.get()).join().unwrap();
    assert_eq!(other, 0, "another OS thread has its own value");
}
