//! The reduction on Tokio models: a `JoinSet`'s tasks over a bounded channel, on a
//! current-thread runtime and as tasks of their own. Reduced DFS must run one execution per
//! trace of the plain search, counted by the trace oracle (`common/oracle.rs`), and see
//! exactly the outcomes the plain one sees.

use interleave_test::future;

use crate::common::oracle::check_async;

#[test]
fn a_join_set_of_three_tasks_sending_over_a_bounded_channel() {
    use interleave_test_tokio::runtime::Builder as Runtime;
    use interleave_test_tokio::sync::mpsc;
    use interleave_test_tokio::task::JoinSet;
    // Three tasks of a `JoinSet` on a current-thread runtime (as `#[tokio::test]` runs
    // them) each send their number on a channel of one slot; the runtime's thread
    // receives the values and joins the set. Outcome: the order of the values and the
    // order the set returned the tasks in.
    check_async(
        "join set",
        || {
            let runtime = Runtime::new_current_thread().build().unwrap();
            runtime.block_on(async {
                let (tx, mut rx) = mpsc::channel::<usize>(1);
                let mut set = JoinSet::new();
                for n in 0..3 {
                    let tx = tx.clone();
                    set.spawn(async move {
                        tx.send(n).await.unwrap();
                        n
                    });
                }
                drop(tx);
                let mut values = Vec::new();
                while let Some(v) = rx.recv().await {
                    values.push(v);
                }
                let mut joined = Vec::new();
                while let Some(done) = set.join_next().await {
                    joined.push(done.unwrap());
                }
                (values, joined)
            })
        },
        0,
    );
}

#[test]
fn a_spawned_task_and_the_main_thread_on_a_bounded_channel() {
    use interleave_test_tokio::sync::mpsc;
    use interleave_test_tokio::task::JoinSet;
    // The multi-thread shape of the model above, with one task: the task is a thread of its
    // own, preempted at every operation of the channel (each a section of its model lock,
    // one switch point), so the reduction meets the channel's wakes and closing.
    check_async(
        "join set, one task",
        || {
            future::block_on(async {
                let (tx, mut rx) = mpsc::channel::<usize>(1);
                let mut set = JoinSet::new();
                let task_tx = tx.clone();
                set.spawn(async move {
                    task_tx.send(1).await.unwrap();
                    task_tx.capacity()
                });
                let mine = tx.try_send(2).is_ok();
                drop(tx);
                let mut values = Vec::new();
                while let Some(v) = rx.recv().await {
                    values.push(v);
                }
                let capacity = set.join_next().await.unwrap().unwrap();
                (values, mine, capacity)
            })
        },
        0,
    );
}

#[test]
fn two_tasks_taking_two_mutexes_joined_in_order() {
    use interleave_test::sync::Arc;
    use interleave_test_tokio::sync::Mutex;
    // Two tasks each lock `a`, then `b`; the model's thread joins them in order. Once the
    // first task ends, its wake lets the joining thread poll the second handle before the
    // second task ends, a race the reduction kept only when the joining thread could run
    // just before that end: it ran 25 of the 33 traces, missing every one in which the
    // second task locks `b` first and ends after the first join (`hb/race.rs`). Each mutex
    // is first used before the spawns (the oracle numbers objects by first use).
    // 49 executions: 16 repeat a trace (the tasks' `Arc` drops).
    let builder = crate::common::oracle::plain_dfs().spurious_wakeups(false);
    let model = || {
        future::block_on(async {
            let (a, b) = (Arc::new(Mutex::new(0)), Arc::new(Mutex::new(0)));
            *a.lock().await += 1;
            *b.lock().await += 1;
            let handles: Vec<_> = (0..2)
                .map(|_| {
                    let (a, b) = (Arc::clone(&a), Arc::clone(&b));
                    future::spawn(async move {
                        *a.lock().await += 1;
                        *b.lock().await += 1;
                    })
                })
                .collect();
            for handle in handles {
                handle.await.unwrap();
            }
        });
    };
    crate::common::oracle::assert_complete("two mutexes", &builder, model, 49);
}

/// Small models of each Tokio primitive, every object first used before the spawns:
/// reduced DFS runs every trace of the plain search (the executions it takes pinned; more
/// than the traces where the tasks' `Arc` drops wake sleeping threads), without spurious
/// polls, which multiply the plain search.
#[test]
fn reduced_dfs_runs_every_trace_of_small_models_of_each_primitive() {
    use interleave_test::sync::Arc;
    use interleave_test_tokio::sync::{Mutex, Notify, Semaphore, oneshot, watch};
    let builder = crate::common::oracle::plain_dfs().spurious_wakeups(false);
    let complete = |name, model: &(dyn Fn() + Sync), executions| {
        crate::common::oracle::assert_complete(name, &builder, model, executions);
    };
    complete(
        "semaphore of one, two tasks",
        &|| {
            future::block_on(async {
                let permits = Arc::new(Semaphore::new(1));
                drop(permits.acquire().await.unwrap());
                let tasks: Vec<_> = (0..2)
                    .map(|_| {
                        let permits = Arc::clone(&permits);
                        future::spawn(async move { drop(permits.acquire().await.unwrap()) })
                    })
                    .collect();
                for task in tasks {
                    task.await.unwrap();
                }
            });
        },
        13,
    );
    complete(
        "notify, one waiter task",
        &|| {
            future::block_on(async {
                let notify = Arc::new(Notify::new());
                notify.notify_one();
                notify.notified().await;
                let woken = Arc::clone(&notify);
                let waiter = future::spawn(async move { woken.notified().await });
                notify.notify_one();
                waiter.await.unwrap();
            });
        },
        3,
    );
    complete(
        "oneshot and mutex",
        &|| {
            future::block_on(async {
                let lock = Arc::new(Mutex::new(0));
                *lock.lock().await += 1;
                let (tx, rx) = oneshot::channel::<u8>();
                let task_lock = Arc::clone(&lock);
                let task = future::spawn(async move {
                    *task_lock.lock().await += 1;
                    tx.send(1).unwrap();
                });
                *lock.lock().await += 1;
                rx.await.unwrap();
                task.await.unwrap();
            });
        },
        16,
    );
    complete(
        "watch, two receiving tasks",
        &|| {
            future::block_on(async {
                let (tx, rx) = watch::channel(0_u8);
                let _ = *rx.borrow();
                let tasks: Vec<_> = (0..2)
                    .map(|_| {
                        let mut rx = rx.clone();
                        future::spawn(async move { rx.changed().await.unwrap() })
                    })
                    .collect();
                tx.send(1).unwrap();
                for task in tasks {
                    task.await.unwrap();
                }
            });
        },
        73,
    );
}
