//! What reports say of tasks: their names (`future::Builder::name`), the word "task", and
//! where a task that nothing woke returned `Pending`.

use interleave_test::future;
use interleave_test::{FailureKind, Reduction};

use crate::common::{SUBSTRATES, dfs};

/// A named task that never finishes, its handle kept: the deadlock report names it as a
/// task, in its header, its line and the schedule's decisions.
#[test]
fn a_named_task_that_nothing_wakes_is_named_in_the_deadlock_report() {
    for substrate in SUBSTRATES {
        let failure = dfs(substrate, Reduction::Dpor, None)
            .check(|| {
                let task = future::Builder::new()
                    .name("waiter")
                    .spawn(std::future::pending::<()>())
                    .unwrap();
                std::mem::forget(task);
            })
            .expect_err("a task that never finishes");
        assert_eq!(failure.kind(), FailureKind::Deadlock, "{failure}");
        let text = failure.to_string();
        assert!(text.contains("in task 'waiter' (#1) at "), "{text}");
        assert!(
            text.contains(
                "task 'waiter' (#1) returned Pending and nothing woke it; no Waker of it is alive"
            ),
            "{text}"
        );
        let thread = failure.thread().expect("the deadlock names a thread");
        assert_eq!((thread.name(), thread.id()), (Some("waiter"), 1));
        assert!(thread.is_task());
        let named = failure.schedule().decisions().iter();
        assert!(
            named
                .filter(|d| d.thread() == 1)
                .all(|d| d.name() == Some("waiter")),
            "{:?}",
            failure.schedule()
        );
    }
}

/// `Builder::spawn_local` spawns a local task as `spawn_local` does.
#[test]
fn a_builder_spawns_a_local_task() {
    let report = dfs(SUBSTRATES[0], Reduction::Dpor, None)
        .check(|| {
            let value = future::block_on(async {
                let task = future::Builder::new()
                    .name("local")
                    .spawn_local(async { 5 })
                    .unwrap();
                task.await.unwrap()
            });
            assert_eq!(value, 5);
        })
        .unwrap();
    assert!(report.exhausted, "{report}");
}
