//! A task's `JoinError` as Tokio's: its `Debug` and `Display` text and its `io::Error`
//! words, and what an abort yields when the task's future panics while it is dropped
//! (Tokio catches that panic and hands it to the `JoinHandle`).

use std::time::Duration;

use interleave_test::FailureKind;
use interleave_test_tokio::sync::oneshot;
use interleave_test_tokio::{self as tokio, runtime, task, time};

use crate::common::{PanicsOnDrop, SUBSTRATES};
use crate::support::every_execution_of;

/// Task panics reach their handles, as in Tokio.
fn handles_get_panics(b: interleave_test::Builder) -> interleave_test::Builder {
    b.thread_panics_fail(false)
}

#[test]
fn join_error_debug_and_display_are_tokios() {
    // Tokio: `JoinError::Panic(Id(7), "boom", ...)`, `JoinError::Panic(Id(7), ...)` for a
    // payload that is not a string, `JoinError::Cancelled(Id(7))`; `Display` gives the id
    // as a bare number, and the `io::Error` made from it says only what happened.
    every_execution_of(handles_get_panics, || async {
        let boom = tokio::spawn(async {
            let value = 12;
            panic!("boom {value}")
        });
        let id = boom.id();
        let error = boom.await.unwrap_err();
        assert_eq!(format!("{id:?}"), format!("Id({id})"));
        assert!(
            id.to_string()
                .chars()
                .all(|c| c.is_ascii_digit() || c == '.')
        );
        assert_eq!(
            format!("{error:?}"),
            format!("JoinError::Panic(Id({id}), \"boom 12\", ...)")
        );
        assert_eq!(
            error.to_string(),
            format!("task {id} panicked with message \"boom 12\"")
        );
        let io: std::io::Error = error.into();
        assert_eq!(io.to_string(), "task panicked");

        let other = tokio::spawn(async { std::panic::panic_any(7u8) });
        let id = other.id();
        let error = other.await.unwrap_err();
        assert_eq!(
            format!("{error:?}"),
            format!("JoinError::Panic(Id({id}), ...)")
        );
        assert_eq!(error.to_string(), format!("task {id} panicked"));

        let stuck = tokio::spawn(std::future::pending::<()>());
        let id = stuck.id();
        stuck.abort();
        let error = stuck.await.unwrap_err();
        assert_eq!(
            format!("{error:?}"),
            format!("JoinError::Cancelled(Id({id}))")
        );
        assert_eq!(error.to_string(), format!("task {id} was cancelled"));
        let io: std::io::Error = error.into();
        assert_eq!(io.to_string(), "task was cancelled");
    });
}

/// Spawns a task that holds a `PanicsOnDrop` across a long sleep on `rt`, aborts it once it
/// holds it, and returns what its handle yields.
fn abort_a_task_that_panics_when_dropped(rt: &runtime::Runtime) -> task::JoinError {
    rt.block_on(async {
        let (armed, is_armed) = oneshot::channel();
        let handle = tokio::spawn(async {
            let _bomb = PanicsOnDrop;
            armed.send(()).unwrap();
            time::sleep(Duration::from_secs(100)).await;
        });
        is_armed.await.unwrap();
        handle.abort();
        handle.await.unwrap_err()
    })
}

#[test]
fn an_aborted_task_whose_drop_panics_yields_that_panic_to_its_handle() {
    // As Tokio: dropping the aborted future is caught, and the handle yields a panic with
    // the destructor's payload instead of a cancellation; the panic does not escape into
    // `block_on`. On both shapes: a current-thread runtime's task is a local task of its
    // `block_on`, a multi-thread runtime's has a model thread of its own.
    for substrate in SUBSTRATES {
        for multi in [false, true] {
            let report = crate::common::dfs(substrate, interleave_test::Reduction::Dpor, None)
                .thread_panics_fail(false)
                .check(|| {
                    let rt = match multi {
                        true => runtime::Runtime::new().unwrap(),
                        false => runtime::Builder::new_current_thread()
                            .enable_time()
                            .build()
                            .unwrap(),
                    };
                    let error = abort_a_task_that_panics_when_dropped(&rt);
                    assert!(error.is_panic(), "{error:?}");
                    let payload = error.into_panic();
                    assert_eq!(
                        payload.downcast_ref::<&str>(),
                        Some(&"a destructor panicked")
                    );
                })
                .unwrap_or_else(|f| panic!("{substrate:?}, multi {multi}: {f}"));
            assert!(report.exhausted);
        }
    }
}

#[test]
fn an_aborted_local_task_whose_drop_panics_fails_the_execution_by_default() {
    // With task panics failing the execution (the default), the destructor's panic is one:
    // reported as a panic with its message, in the task that was dropped.
    for substrate in SUBSTRATES {
        let failure = crate::common::dfs(substrate, interleave_test::Reduction::Dpor, None)
            .check(|| {
                let rt = runtime::Builder::new_current_thread().build().unwrap();
                abort_a_task_that_panics_when_dropped(&rt);
            })
            .unwrap_err();
        assert_eq!(failure.kind(), FailureKind::Panic, "{failure}");
        assert_eq!(failure.message(), "a destructor panicked", "{failure}");
        let thread = failure.thread().expect("a panic names its thread");
        assert_eq!(thread.name(), Some("main"), "{substrate:?}: {failure}");
        assert!(thread.local_task().is_some(), "{substrate:?}: {failure}");
    }
}

#[test]
fn outside_a_model_an_aborted_task_whose_drop_panics_yields_that_panic() {
    // A plain test: the runtime runs in the thread's one-thread execution, where a task's
    // panic reaches its handle (no search to fail), as in Tokio.
    let rt = runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let error = abort_a_task_that_panics_when_dropped(&rt);
    assert!(error.is_panic(), "{error:?}");
    // Aborted and dropped at once: the destructor's panic stays in the task.
    rt.block_on(async {
        let handle = tokio::spawn(async {
            let _bomb = PanicsOnDrop;
            time::sleep(Duration::from_secs(100)).await;
        });
        time::sleep(Duration::from_millis(10)).await;
        handle.abort();
        drop(handle);
        time::sleep(Duration::from_millis(10)).await;
    });
}
