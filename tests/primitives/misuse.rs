//! Misuse gets a clear message: a thread spawned outside a model, primitives shared between
//! executions, nonsense builder arguments, nested explorations.

use crate::common::panic_message;
use interleave_test::sync::{Condvar, Mutex};
use interleave_test::{Builder, FailureKind, thread};

/// Outside a model primitives work as on one thread (`outside.rs`); what one thread cannot
/// do says so and what to gate. (Before, every use panicked there.)
#[test]
fn outside_a_model_only_what_needs_a_second_thread_is_refused() {
    let m = Mutex::new(1);
    drop(m.lock());
    Condvar::new().notify_one();
    let msg = panic_message(|| drop(thread::spawn(|| ())));
    assert!(msg.contains("was started outside a model"), "{msg}");
    assert!(msg.contains("#[cfg(not(interleave))]"), "{msg}");
    assert!(!m.is_poisoned());
}

#[test]
fn a_static_primitive_used_by_two_executions_is_misuse() {
    static SHARED: Mutex<u32> = Mutex::new(0);
    // One execution at a time, so that the first one is the one that keeps it.
    let lock_line = line!() + 5;
    let failure = Builder::new()
        .seed(1)
        .iterations(3)
        .parallelism(1)
        .check(|| *SHARED.lock().unwrap() += 1)
        .expect_err("the second execution reuses it");
    assert_eq!(failure.kind(), FailureKind::Misuse);
    assert_eq!(failure.iteration(), 1);
    assert!(
        failure
            .message()
            .contains("this Mutex was first used in another execution"),
        "{}",
        failure.message()
    );
    assert_eq!(failure.location().unwrap().line(), lock_line);
}

#[test]
fn nonsense_builder_arguments_are_rejected_with_the_reason() {
    let msg = panic_message(|| drop(Builder::new().iterations(0)));
    assert!(msg.contains("iterations is 0"), "{msg}");
    let msg = panic_message(|| drop(Builder::new().max_steps(0)));
    assert!(msg.contains("max_steps is 0"), "{msg}");
    let mut b = Builder::new();
    b.iterations = Some(0);
    let msg = panic_message(|| drop(b.check(|| ())));
    assert!(msg.contains("iterations is 0"), "{msg}");
}

#[test]
fn explorations_cannot_nest() {
    let failure = Builder::new()
        .seed(1)
        .iterations(1)
        .check(|| {
            let _ = Builder::new().iterations(1).check(|| ());
        })
        .expect_err("nested check panics inside the model");
    assert_eq!(failure.kind(), FailureKind::Panic);
    assert!(
        failure
            .message()
            .contains("nested explorations are not supported"),
        "{}",
        failure.message()
    );
}

#[test]
fn explore_panics_with_the_report_and_the_saved_schedule() {
    let msg = panic_message(|| {
        Builder::new()
            .name("explore_demo")
            .seed(4)
            .iterations(10)
            .explore(|| {
                let m = Mutex::new(0);
                assert_eq!(*m.lock().unwrap(), 1, "explore demo");
            });
    });
    assert!(
        msg.starts_with("interleave-test found a panic: assertion"),
        "{msg}"
    );
    let saved = msg
        .lines()
        .find_map(|l| l.strip_prefix("the schedule is saved in "))
        .expect(&msg);
    let schedule = interleave_test::Schedule::load(saved).unwrap();
    assert_eq!(schedule.test(), Some("explore_demo"));
    assert!(msg.contains("Builder::new().replay(model"), "{msg}");
    assert!(msg.trim_end().ends_with("INTERLEAVE_SEED=4"), "{msg}");
}

/// Runs `model` (which keeps a handle of a `what` in a `static` and uses the one the
/// execution before it kept) on both substrates: the second execution is a `Misuse` that
/// says the handle is of another execution and what to write instead. `clear` empties the
/// `static` after each run.
fn a_kept_handle_is_misuse(what: &str, model: impl Fn() + Sync, clear: impl Fn()) {
    for substrate in crate::common::SUBSTRATES {
        let failure = Builder::new()
            .seed(3)
            .parallelism(1)
            .iterations(5)
            .substrate(substrate)
            .check(&model)
            .unwrap_err();
        clear();
        assert_eq!(
            failure.kind(),
            FailureKind::Misuse,
            "{substrate:?}: {failure}"
        );
        assert_eq!(failure.iteration(), 1, "{substrate:?}: {failure}");
        let message = failure.message();
        let said = format!("this handle is of a {what} of another execution");
        assert!(message.contains(&said), "{substrate:?}: {message}");
        assert!(message.contains("inside the model closure"), "{message}");
    }
}

/// A task's handle kept (in a `static`) from one execution and used in the next is a
/// misuse that says so, for a join, an abort and `is_finished`: task #1 of another
/// execution is not this one's #1, whose state the handle would otherwise read.
#[test]
fn a_task_handle_used_in_another_execution_is_misuse_saying_what_to_do() {
    use interleave_test::future::{self, AbortHandle, JoinHandle};
    type Kept = std::sync::Mutex<Option<(JoinHandle<u32>, AbortHandle)>>;
    type Use = fn(JoinHandle<u32>, AbortHandle);
    static KEPT: Kept = std::sync::Mutex::new(None);
    let uses: [Use; 3] = [
        |join, _| drop(future::block_on(join)),
        |_, abort| abort.abort(),
        |_, abort| {
            abort.is_finished();
        },
    ];
    for use_old in uses {
        let model = || {
            let task = future::spawn(async { 1 });
            let abort = task.abort_handle();
            // Taken out of the lock first: the misuse unwinds out of `use_old`.
            let old = KEPT.lock().unwrap().replace((task, abort));
            if let Some((join, abort)) = old {
                use_old(join, abort);
            }
        };
        a_kept_handle_is_misuse("task", model, || drop(KEPT.lock().unwrap().take()));
    }
}

/// The same for a thread's handles: a join, `is_finished` and an `unpark` of a thread of
/// another execution.
#[test]
fn a_thread_handle_used_in_another_execution_is_misuse_saying_what_to_do() {
    static KEPT: std::sync::Mutex<Option<thread::JoinHandle<()>>> = std::sync::Mutex::new(None);
    let uses: [fn(thread::JoinHandle<()>); 3] = [
        |old| drop(old.join()),
        |old| {
            old.is_finished();
        },
        |old| old.thread().unpark(),
    ];
    for use_old in uses {
        let model = || {
            let old = KEPT.lock().unwrap().replace(thread::spawn(|| {}));
            if let Some(old) = old {
                use_old(old);
            }
        };
        a_kept_handle_is_misuse("thread", model, || drop(KEPT.lock().unwrap().take()));
    }
}
