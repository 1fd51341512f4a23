//! Runtimes and tasks: a current-thread runtime's tasks share its thread (a blocking call
//! stalls them all), a multi-thread runtime's are preempted anywhere; `JoinSet`, task ids,
//! `spawn_blocking`, `Handle::current`, and the abort of a runtime's tasks at its drop.

use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;

use interleave_test::sync::Arc;
use interleave_test::sync::atomic::{AtomicUsize, Ordering};
use interleave_test::{FailureKind, Reduction};
use interleave_test_tokio::runtime::{self, Handle, RuntimeFlavor};
use interleave_test_tokio::sync::oneshot;
use interleave_test_tokio::task::{self, JoinSet};
use interleave_test_tokio::{self as tokio_mod};

use crate::common::{SUBSTRATES, dfs};

/// Two tasks: one blocks its thread on a (std-shaped, modelled) channel, the other sends
/// after a yield. On one thread the blocked receiver stalls the sender too.
fn blocking_recv_and_a_sender(flavor: RuntimeFlavor) {
    let mut builder = match flavor {
        RuntimeFlavor::CurrentThread => runtime::Builder::new_current_thread(),
        _ => runtime::Builder::new_multi_thread(),
    };
    let rt = builder.build().unwrap();
    rt.block_on(async {
        let (tx, rx) = interleave_test::sync::mpsc::channel();
        let receiver = tokio_mod::spawn(async move { rx.recv().unwrap() });
        let sender = tokio_mod::spawn(async move {
            task::yield_now().await;
            tx.send(1).unwrap();
        });
        sender.await.unwrap();
        assert_eq!(receiver.await.unwrap(), 1);
    });
}

#[test]
fn a_blocking_call_stalls_a_current_thread_runtime_but_not_a_multi_thread_one() {
    for substrate in SUBSTRATES {
        let builder = dfs(substrate, Reduction::Dpor, None);
        let stalled = builder
            .check(|| blocking_recv_and_a_sender(RuntimeFlavor::CurrentThread))
            .expect_err("current-thread tasks share one thread");
        assert_eq!(
            stalled.kind(),
            FailureKind::Deadlock,
            "{substrate:?}: {stalled}"
        );
        let report = builder
            .check(|| blocking_recv_and_a_sender(RuntimeFlavor::MultiThread))
            .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
        assert!(report.exhausted);
    }
}

#[test]
fn handle_current_names_the_runtime_on_its_thread_and_in_its_tasks() {
    interleave_test::check(|| {
        let rt = runtime::Builder::new_multi_thread().build().unwrap();
        rt.block_on(async {
            assert_eq!(
                Handle::current().runtime_flavor(),
                RuntimeFlavor::MultiThread
            );
            let inner = tokio_mod::spawn(async { Handle::current().runtime_flavor() });
            assert_eq!(inner.await.unwrap(), RuntimeFlavor::MultiThread);
            let blocking = task::spawn_blocking(|| Handle::try_current().is_ok());
            assert!(blocking.await.unwrap());
        });
        assert!(
            Handle::try_current().is_err(),
            "the context outlived block_on"
        );
    })
    .unwrap();
}

#[test]
fn task_ids_are_distinct_and_known_inside_the_task() {
    interleave_test::check(|| {
        let rt = runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            assert!(
                task::try_id().is_none(),
                "block_on's own future is not a task"
            );
            let a = tokio_mod::spawn(async { task::id() });
            let b = tokio_mod::spawn(async { task::id() });
            let (ida, idb) = (a.id(), b.id());
            assert_ne!(ida, idb);
            assert_eq!(a.await.unwrap(), ida);
            assert_eq!(b.await.unwrap(), idb);
        });
    })
    .unwrap();
}

#[test]
fn join_next_yields_results_in_the_order_the_tasks_finished() {
    for substrate in SUBSTRATES {
        let report = dfs(substrate, Reduction::Dpor, None)
            .check_async(|| async {
                let (tx, rx) = oneshot::channel::<()>();
                let mut set = JoinSet::new();
                let a = set.spawn(async move {
                    rx.await.unwrap();
                    "a"
                });
                let b = set.spawn(async { "b" });
                while !b.is_finished() {
                    task::yield_now().await;
                }
                tx.send(()).unwrap();
                while !a.is_finished() {
                    task::yield_now().await;
                }
                // Both ended, `b` first: it comes first although `a` was added first.
                assert_eq!(set.join_next().await.unwrap().unwrap(), "b");
                assert_eq!(set.join_next().await.unwrap().unwrap(), "a");
                assert!(set.join_next().await.is_none());
            })
            .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
        assert!(report.exhausted, "{substrate:?}");
    }
}

#[test]
fn join_next_sees_both_finishing_orders_of_free_tasks() {
    for substrate in SUBSTRATES {
        let orders = StdMutex::new(BTreeSet::new());
        dfs(substrate, Reduction::Dpor, None)
            .check_async(|| async {
                let mut set = JoinSet::new();
                for n in 0..2u32 {
                    set.spawn(async move { n });
                }
                let mut joined = Vec::new();
                while let Some(done) = set.join_next().await {
                    joined.push(done.unwrap());
                }
                orders.lock().unwrap().insert(joined);
            })
            .unwrap();
        let both = BTreeSet::from([vec![0, 1], vec![1, 0]]);
        assert_eq!(orders.into_inner().unwrap(), both, "{substrate:?}");
    }
}

#[test]
fn dropping_a_join_set_or_a_runtime_aborts_its_tasks() {
    interleave_test::check(|| {
        let ran = Arc::new(AtomicUsize::new(0));
        let rt = runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let mut set = JoinSet::new();
            let r = Arc::clone(&ran);
            set.spawn(async move {
                std::future::pending::<()>().await;
                r.fetch_add(1, Ordering::SeqCst);
            });
            let mut aborted = JoinSet::new();
            aborted.spawn(std::future::pending::<()>());
            aborted.abort_all();
            let err = aborted.join_next().await.unwrap().unwrap_err();
            assert!(err.is_cancelled());
            drop(set);
        });
        drop(rt);
        assert_eq!(ran.load(Ordering::SeqCst), 0);
    })
    .unwrap();
}

interleave_test_tokio::task_local! {
    static REQUEST: u32;
}

#[test]
fn a_task_local_value_follows_its_task_across_polls_and_threads() {
    // Two tasks each set their own value and read it back after every await, on each
    // runtime flavour; their polls interleave in every order. The runtime's thread sets
    // its own value around them, and a `sync_scope` nests inside it.
    for multi_thread in [false, true] {
        let model = move || {
            let runtime = match multi_thread {
                false => runtime::Builder::new_current_thread().build(),
                true => runtime::Builder::new_multi_thread().build(),
            };
            runtime.unwrap().block_on(REQUEST.scope(9, async move {
                let tasks: Vec<_> = (0..2)
                    .map(|n| {
                        tokio_mod::spawn(REQUEST.scope(n, async move {
                            for _ in 0..2 {
                                assert_eq!(REQUEST.get(), n, "another task's value");
                                task::yield_now().await;
                            }
                            REQUEST.get()
                        }))
                    })
                    .collect();
                let unset = tokio_mod::spawn(async { REQUEST.try_with(|v| *v).is_err() });
                for (n, t) in tasks.into_iter().enumerate() {
                    assert_eq!(t.await.unwrap(), n as u32);
                }
                assert!(
                    unset.await.unwrap(),
                    "a task outside every scope saw a value"
                );
                assert_eq!(REQUEST.sync_scope(3, || REQUEST.get()), 3);
                assert_eq!(REQUEST.get(), 9, "the outer value after the tasks");
            }));
            assert!(
                REQUEST.try_with(|_| ()).is_err(),
                "a value outside the scope"
            );
        };
        for substrate in SUBSTRATES {
            let name = format!("multi-thread {multi_thread}, {substrate:?}");
            let report = dfs(substrate, Reduction::Dpor, None)
                .check(model)
                .unwrap_or_else(|f| panic!("{name}: {f}"));
            assert!(
                report.exhausted && report.executions > 1,
                "{name}: {report}"
            );
        }
    }
}

#[test]
fn a_task_local_read_outside_its_scope_panics_with_tokios_message() {
    let failure = dfs(SUBSTRATES[0], Reduction::Dpor, None)
        .check(|| {
            REQUEST.get();
        })
        .unwrap_err();
    assert_eq!(failure.kind(), FailureKind::Panic, "{failure}");
    assert_eq!(
        failure.message(),
        "cannot access a task-local storage value without setting it first"
    );
}

#[test]
fn a_named_blocking_task_is_a_thread_of_its_own_that_reports_name() {
    // On a current-thread runtime a blocking task still gets its own model thread: its
    // panic is reported in that thread, under the builder's name.
    for substrate in SUBSTRATES {
        let failure = dfs(substrate, Reduction::Dpor, None)
            .thread_panics_fail(true)
            .check(|| {
                let runtime = runtime::Builder::new_current_thread().build().unwrap();
                runtime.block_on(async {
                    let blocking = task::Builder::new()
                        .name("blocker")
                        .spawn_blocking(|| panic!("blocking work failed"))
                        .unwrap();
                    let _ = blocking.await;
                });
            })
            .unwrap_err();
        assert_eq!(failure.kind(), FailureKind::Panic, "{failure}");
        assert_eq!(failure.message(), "blocking work failed");
        let thread = failure.thread().expect("a panic names its thread");
        assert_eq!(thread.name(), Some("blocker"), "{substrate:?}: {failure}");
    }
}

#[test]
fn blocking_inside_a_runtime_task_panics_as_in_tokio_but_not_in_spawn_blocking() {
    use interleave_test_tokio::sync::mpsc;
    let model = |in_blocking_pool: bool| {
        move || {
            let rt = runtime::Builder::new_multi_thread().build().unwrap();
            rt.block_on(async {
                let (tx, mut rx) = mpsc::channel::<u32>(1);
                let receiver = match in_blocking_pool {
                    true => task::spawn_blocking(move || rx.blocking_recv()),
                    false => tokio_mod::spawn(async move { rx.blocking_recv() }),
                };
                tx.send(4).await.unwrap();
                assert_eq!(receiver.await.unwrap(), Some(4));
            });
        }
    };
    for substrate in SUBSTRATES {
        let builder = dfs(substrate, Reduction::Dpor, None);
        let report = builder
            .check(model(true))
            .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
        assert!(report.exhausted, "{substrate:?}");
        let failure = builder
            .thread_panics_fail(true)
            .check(model(false))
            .expect_err("a runtime task must not block");
        assert_eq!(
            failure.kind(),
            FailureKind::Panic,
            "{substrate:?}: {failure}"
        );
        assert!(
            failure
                .message()
                .starts_with("Cannot block the current thread from within a runtime."),
            "{substrate:?}: {failure}"
        );
        assert_eq!(failure.thread().map(|t| t.id()), Some(1), "{failure}");
    }
}

/// The model has no cooperative budget: `unconstrained` polls its future as it is and
/// `consume_budget` is ready at once, so a task interleaves with the others exactly as
/// without them (the same outcomes under DFS).
#[test]
fn unconstrained_and_consume_budget_change_no_interleaving() {
    let outcomes = |wrapped: bool| {
        let seen = StdMutex::new(BTreeSet::new());
        let report = dfs(SUBSTRATES[0], Reduction::Dpor, None)
            .check_async(|| async {
                let (tx, rx) = oneshot::channel::<u32>();
                let task = tokio_mod::spawn(async move { tx.send(1).unwrap() });
                let got = if wrapped {
                    task::consume_budget().await;
                    task::unconstrained(async { rx.await.unwrap() * 10 }).await
                } else {
                    async { rx.await.unwrap() * 10 }.await
                };
                task.await.unwrap();
                seen.lock().unwrap().insert(got);
            })
            .unwrap();
        (report.executions, seen.into_inner().unwrap())
    };
    let (plain, wrapped) = (outcomes(false), outcomes(true));
    assert_eq!(wrapped.1, BTreeSet::from([10]));
    assert_eq!(wrapped, plain);
}

#[test]
fn metrics_tell_the_workers_given_and_a_fixed_default() {
    interleave_test::check(|| {
        let workers = |b: &mut runtime::Builder| b.build().unwrap().metrics().num_workers();
        assert_eq!(workers(&mut runtime::Builder::new_current_thread()), 1);
        assert_eq!(workers(&mut runtime::Builder::new_multi_thread()), 2);
        let three = runtime::Builder::new_multi_thread()
            .worker_threads(3)
            .build()
            .unwrap();
        assert_eq!(three.metrics().num_workers(), 3);
        assert_eq!(three.handle().metrics().num_workers(), 3);
    })
    .unwrap();
}

/// On a current-thread runtime tasks run only when the `block_on` future waits: the count
/// falls exactly as the tasks end. On a multi-thread one a task races the read; a blocking
/// task is never counted, as in Tokio.
#[test]
fn num_alive_tasks_counts_the_spawned_tasks_not_yet_finished() {
    for substrate in SUBSTRATES {
        let report = dfs(substrate, Reduction::Dpor, None)
            .check(|| {
                let rt = runtime::Builder::new_current_thread().build().unwrap();
                rt.block_on(async {
                    let metrics = Handle::current().metrics();
                    let (tx, rx) = oneshot::channel::<()>();
                    let first = tokio_mod::spawn(async {});
                    let second = tokio_mod::spawn(async move { rx.await.unwrap() });
                    assert_eq!(metrics.num_alive_tasks(), 2);
                    first.await.unwrap();
                    assert_eq!(metrics.num_alive_tasks(), 1);
                    tx.send(()).unwrap();
                    second.await.unwrap();
                    assert_eq!(metrics.num_alive_tasks(), 0);
                });
            })
            .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
        assert!(report.exhausted);
    }
    for substrate in SUBSTRATES {
        multi_thread_alive_tasks(substrate);
    }
}

/// A task racing the read on a multi-thread runtime: both counts are seen; a blocking task
/// is never counted.
fn multi_thread_alive_tasks(substrate: interleave_test::Substrate) {
    let seen = StdMutex::new(BTreeSet::new());
    let report = dfs(substrate, Reduction::Dpor, None)
        .check(|| {
            let rt = runtime::Runtime::new().unwrap();
            rt.block_on(async {
                let (tx, rx) = interleave_test::sync::mpsc::channel::<()>();
                let blocking = tokio_mod::task::spawn_blocking(move || rx.recv().unwrap());
                let task = tokio_mod::spawn(async {});
                let alive = rt.metrics().num_alive_tasks();
                seen.lock().unwrap().insert(alive);
                task.await.unwrap();
                assert_eq!(rt.metrics().num_alive_tasks(), 0);
                tx.send(()).unwrap();
                blocking.await.unwrap();
            });
        })
        .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
    assert!(report.exhausted, "{substrate:?}");
    assert_eq!(
        seen.into_inner().unwrap(),
        BTreeSet::from([0, 1]),
        "{substrate:?}"
    );
}
