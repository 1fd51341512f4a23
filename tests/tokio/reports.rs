//! Reports name the tasks of a current-thread runtime (which share the `block_on`'s
//! thread): a panic is reported in its task, by name or number and spawn site, and a
//! deadlock lists each pending future of the thread with where it waits.

use std::sync::Arc;

use interleave_test::{Builder, FailureKind, SourceLocation, TaskInfo};
use interleave_test_tokio::sync::Mutex;
use interleave_test_tokio::{self as tokio, runtime};

use crate::common::SUBSTRATES;

/// Runs `body` in a current-thread runtime.
fn current_thread(body: impl std::future::Future<Output = ()>) {
    let rt = runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(body);
}

/// The place of the line of this file that ends with the comment `// @marker`.
fn at(marker: &str) -> (String, u32) {
    let tag = format!("// @{marker}");
    let index = include_str!("reports.rs")
        .lines()
        .position(|l| l.trim_end().ends_with(&tag))
        .unwrap_or_else(|| panic!("no line marked {tag}"));
    (file!().to_owned(), index as u32 + 1)
}

/// A reported place, as [`at`] gives one.
fn place(loc: &SourceLocation) -> (String, u32) {
    (loc.file().to_owned(), loc.line())
}

/// A named task panics after a yield; an unnamed one spawned before it finishes normally.
fn panicking_task() {
    current_thread(async {
        let quiet = tokio::spawn(async { 1 });
        let flush = async {
            tokio::task::yield_now().await;
            panic!("flush failed"); // @panic
        };
        let builder = tokio::task::Builder::new().name("flusher");
        let named = builder.spawn(flush).unwrap(); // @flusher
        let _ = quiet.await;
        let _ = named.await;
    });
}

#[test]
fn a_panic_in_a_current_thread_task_is_reported_in_that_task() {
    for substrate in SUBSTRATES {
        let failure = Builder::new()
            .substrate(substrate)
            .seed(1)
            .check(panicking_task)
            .expect_err("the task panics");
        assert_eq!(failure.kind(), FailureKind::Panic);
        assert_eq!(failure.message(), "flush failed");
        assert_eq!(place(failure.location().unwrap()), at("panic"));
        let thread = failure.thread().unwrap();
        assert_eq!(thread.name(), Some("main"), "{substrate:?}");
        let task: &TaskInfo = thread.local_task().expect("the task is named");
        assert_eq!(task.name(), Some("flusher"));
        assert_eq!(task.number(), 2, "the second task spawned on the thread");
        assert_eq!(place(task.spawned_at()), at("flusher"));
        let text = failure.to_string();
        assert!(
            text.contains("in task 'flusher' (spawned at tests/tokio/reports.rs:"),
            "{text}"
        );
        assert!(
            text.contains(", polled by thread 'main' (#0), at "),
            "{text}"
        );
    }
}

/// A panic of the `block_on`'s own future names no task, even after a task's panic was
/// caught by its `JoinHandle`.
#[test]
fn a_panic_of_the_block_on_future_names_no_task() {
    for substrate in SUBSTRATES {
        let failure = Builder::new()
            .substrate(substrate)
            .thread_panics_fail(false)
            .check(|| {
                current_thread(async {
                    let task = tokio::spawn(async { panic!("the task's own") });
                    assert!(task.await.unwrap_err().is_panic());
                    panic!("the block_on future's");
                })
            })
            .expect_err("the block_on future panics");
        assert_eq!(failure.message(), "the block_on future's");
        assert_eq!(failure.thread().unwrap().local_task(), None);
    }
}

/// Two tasks take two locks in opposite orders, with a yield in between; the block_on
/// future awaits them.
fn abba_tasks() {
    current_thread(async {
        let a = Arc::new(Mutex::new(0));
        let b = Arc::new(Mutex::new(0));
        let (a2, b2) = (Arc::clone(&a), Arc::clone(&b));
        let reverse = async move {
            let _b = b2.lock().await;
            tokio::task::yield_now().await;
            let _a = a2.lock().await; // @reverse waits
        };
        let builder = tokio::task::Builder::new().name("reverse");
        let first = builder.spawn(reverse).unwrap(); // @reverse
        let forward = async move {
            let _a = a.lock().await;
            tokio::task::yield_now().await;
            let _b = b.lock().await; // @second waits
        };
        let second = tokio::spawn(forward); // @second
        let _ = first.await; // @join
        let _ = second.await;
    });
}

#[test]
fn a_deadlock_report_lists_the_pending_tasks_and_where_they_wait() {
    for substrate in SUBSTRATES {
        let failure = Builder::new()
            .substrate(substrate)
            .seed(2)
            .iterations(1000)
            .check(abba_tasks)
            .expect_err("the tasks deadlock");
        assert_eq!(failure.kind(), FailureKind::Deadlock);
        let [main] = failure.threads() else {
            panic!("one thread: {failure}");
        };
        let tasks = main.tasks();
        assert_eq!(tasks.len(), 3, "{failure}");
        assert_eq!((tasks[0].number(), tasks[0].name()), (0, None));
        assert_eq!(place(tasks[0].waits_at().unwrap()), at("join"), "{failure}");
        assert_eq!(tasks[1].name(), Some("reverse"));
        assert_eq!(place(tasks[1].spawned_at()), at("reverse"));
        assert_eq!(place(tasks[1].waits_at().unwrap()), at("reverse waits"));
        assert_eq!((tasks[2].number(), tasks[2].name()), (2, None));
        assert_eq!(place(tasks[2].spawned_at()), at("second"));
        assert_eq!(place(tasks[2].waits_at().unwrap()), at("second waits"));
        let text = failure.to_string();
        assert!(text.contains("task 'reverse' (spawned at "), "{text}");
        assert!(text.contains("task #2 (spawned at "), "{text}");
    }
}

/// A task of its own (a multi-thread runtime's, or `spawn` outside a runtime) waits where
/// the last operation of its poll was, not at its spawn.
#[test]
fn a_spawned_task_waits_at_the_last_operation_of_its_poll() {
    for substrate in SUBSTRATES {
        let failure = crate::common::dfs(substrate, interleave_test::Reduction::Dpor, None)
            .check_async(|| async {
                let notify = Arc::new(tokio::sync::Notify::new());
                let ready = Arc::new(tokio::sync::Notify::new());
                let (n, r) = (Arc::clone(&notify), Arc::clone(&ready));
                let worker = tokio::spawn(async move {
                    r.notify_one();
                    n.notified().await; // @worker waits
                });
                ready.notified().await;
                notify.notify_waiters();
                worker.await.unwrap();
            })
            .expect_err("the notification is lost");
        assert_eq!(failure.kind(), FailureKind::Deadlock);
        let worker = failure
            .threads()
            .iter()
            .find(|t| t.thread().id() == 1)
            .unwrap_or_else(|| panic!("the worker is in the report: {failure}"));
        assert!(worker.thread().is_task());
        assert_eq!(
            place(worker.location().unwrap()),
            at("worker waits"),
            "{failure}"
        );
    }
}

/// A hundred tasks that never finish (the executor yields among their first polls, which
/// is no operation of theirs), and a `block_on` future that locks a Tokio mutex twice.
#[test]
fn a_deadlock_report_lists_ten_pending_tasks_and_counts_the_rest() {
    for substrate in SUBSTRATES {
        let failure = Builder::new()
            .substrate(substrate)
            .seed(1)
            .check(|| {
                current_thread(async {
                    for _ in 0..100 {
                        drop(tokio::spawn(std::future::pending::<()>())); // detached
                    }
                    let lock = Mutex::new(());
                    let _held = lock.lock().await;
                    let _again = lock.lock().await; // @again
                })
            })
            .expect_err("the second lock waits for the first");
        assert_eq!(failure.kind(), FailureKind::Deadlock);
        let [main] = failure.threads() else {
            panic!("one thread: {failure}");
        };
        let tasks = main.tasks();
        assert_eq!(tasks.len(), 101, "{failure}");
        assert_eq!(place(tasks[0].waits_at().unwrap()), at("again"));
        assert!(
            tasks[1..].iter().all(|t| t.waits_at().is_none()),
            "{failure}"
        );
        assert_eq!(tasks[100].number(), 100);
        let text = failure.to_string();
        assert!(text.contains("and 91 more pending"), "{text}");
        assert_eq!(
            text.matches("returned Pending from a poll").count(),
            9,
            "{text}"
        );
    }
}

/// A `JoinSet` polls its handles inside this crate: the future that awaits `join_next`
/// is not reported as waiting there.
#[test]
fn a_join_set_s_own_polls_are_not_where_the_program_waits() {
    for substrate in SUBSTRATES {
        let failure = Builder::new()
            .substrate(substrate)
            .check(|| {
                current_thread(async {
                    let mut set = tokio::task::JoinSet::new();
                    set.spawn(std::future::pending::<()>());
                    set.join_next().await;
                })
            })
            .expect_err("the task never ends");
        let [main] = failure.threads() else {
            panic!("one thread: {failure}");
        };
        let waits = main.tasks()[0].waits_at();
        assert!(
            waits.is_none_or(|at| at.file() == file!()),
            "the block_on future waits at {waits:?}"
        );
    }
}

/// A `select!`'s start branch is a `choose` in the schedule, which replay compares, and
/// `select! start branch` in the report's last decisions (joined to the line of the
/// operation at which its thread was chosen, as every pick is).
#[test]
fn a_reports_last_decisions_name_selects_start_branch() {
    let failure = Builder::new()
        .strategy(interleave_test::StrategyKind::Dfs {
            max_preemptions: None,
        })
        .check_async(|| async {
            let mut got = Vec::new();
            for _ in 0..2 {
                tokio::select! {
                    v = async { 1 } => got.push(v),
                    v = async { 2 } => got.push(v),
                }
            }
            assert_eq!(got, [1, 1], "the second branch won");
        })
        .expect_err("DFS tries the second branch first");
    let named: Vec<_> = failure
        .recent()
        .iter()
        .filter(|s| s.op().contains("select! start branch"))
        .collect();
    assert!(!named.is_empty(), "{failure}");
    for step in named {
        let decision = failure
            .schedule()
            .decisions()
            .iter()
            .find(|d| d.step() == step.step() && d.pick().is_some())
            .expect("the step's pick is in the schedule");
        assert_eq!(decision.pick().unwrap().0, "choose");
    }
}

/// A deadlock report says what each future waits in: the block_on future in the `.await`
/// of a task's handle (`JoinHandle await`) or a Tokio operation (`tokio Mutex lock`), a
/// spawned task's thread in the operation its last poll ended in (`tokio Notify notified`).
#[test]
fn a_deadlock_report_names_the_operation_each_future_waits_in() {
    for substrate in SUBSTRATES {
        let failure = Builder::new()
            .substrate(substrate)
            .check_async(|| async {
                let notify = Arc::new(tokio::sync::Notify::new());
                let woken = Arc::clone(&notify);
                let worker = tokio::spawn(async move { woken.notified().await });
                worker.await.unwrap(); // @awaits-worker
            })
            .expect_err("nothing notifies the worker");
        assert_eq!(failure.kind(), FailureKind::Deadlock, "{failure}");
        let [main, worker] = failure.threads() else {
            panic!("two threads: {failure}");
        };
        let task = &main.tasks()[0];
        assert_eq!(task.waits_in(), Some("JoinHandle await"), "{failure}");
        assert_eq!(place(task.waits_at().unwrap()), at("awaits-worker"));
        assert!(
            worker
                .state()
                .ends_with("; it waits in `tokio Notify notified`"),
            "{failure}"
        );
        let text = failure.to_string();
        assert!(text.contains("waits in `JoinHandle await` at"), "{text}");

        let failure = Builder::new()
            .substrate(substrate)
            .check_async(|| async {
                let lock = Mutex::new(0);
                std::mem::forget(lock.lock().await);
                *lock.lock().await += 1; // @relock
            })
            .expect_err("the guard was leaked");
        let task = &failure.threads()[0].tasks()[0];
        assert_eq!(task.waits_in(), Some("tokio Mutex lock"), "{failure}");
        assert_eq!(place(task.waits_at().unwrap()), at("relock"));
    }
}
