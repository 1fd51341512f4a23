//! Futures as model tasks: spawn, block_on, JoinHandle, abort, wakers; the bugs async code
//! has (lost wake-ups, one poll per wake, a guard held across `.await`) found by every
//! strategy and replayed.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use interleave_test::future::{self, AtomicWaker};
use interleave_test::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use interleave_test::sync::{Arc, Mutex};
use interleave_test::{Builder, FailureKind, Reduction, StrategyKind, thread};

use crate::common::{SUBSTRATES, dfs, each_dfs, each_sampler};

/// A one-shot event: a flag and the waker of the task that waits for it.
#[derive(Default)]
struct Signal {
    set: AtomicBool,
    waker: AtomicWaker,
}

impl Signal {
    fn set(&self) {
        self.set.store(true, Ordering::Release);
        self.waker.wake();
    }

    /// Waits for the event; `racy`: checks the flag before registering the waker (the
    /// lost wake-up), else registers first.
    fn wait(&self, racy: bool) -> Wait<'_> {
        Wait { signal: self, racy }
    }
}

struct Wait<'a> {
    signal: &'a Signal,
    racy: bool,
}

impl Future for Wait<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let signal = self.signal;
        if self.racy {
            if signal.set.load(Ordering::Acquire) {
                return Poll::Ready(());
            }
            signal.waker.register(cx.waker());
            return Poll::Pending;
        }
        signal.waker.register(cx.waker());
        match signal.set.load(Ordering::Acquire) {
            true => Poll::Ready(()),
            false => Poll::Pending,
        }
    }
}

/// A thread sets the signal a spawned task waits for; the main thread joins the task.
fn signalled_task(racy: bool) {
    let signal = Arc::new(Signal::default());
    let waiter = Arc::clone(&signal);
    let task = future::spawn(async move {
        waiter.wait(racy).await;
        7
    });
    let setter = thread::spawn(move || signal.set());
    assert_eq!(future::block_on(task).unwrap(), 7);
    setter.join().unwrap();
}

#[test]
fn a_task_returns_its_value_to_block_on() {
    each_dfs(|builder, name, _| {
        let report = builder
            .check(|| {
                let task = future::spawn(async { 40 + 2 });
                assert_eq!(future::block_on(task).unwrap(), 42);
            })
            .unwrap_or_else(|f| panic!("{name}: {f}"));
        assert!(report.exhausted, "{name}: {report}");
    });
}

#[test]
fn registering_before_checking_never_loses_the_wake() {
    each_dfs(|builder, name, _| {
        let report = builder
            .spurious_wakeups(false)
            .check(|| signalled_task(false))
            .unwrap_or_else(|f| panic!("{name}: {f}"));
        assert!(report.exhausted, "{name}: {report}");
    });
}

#[test]
fn a_lost_wake_up_is_found_reported_and_replayed() {
    for substrate in SUBSTRATES {
        for reduction in [Reduction::Dpor, Reduction::Off] {
            let builder = dfs(substrate, reduction, None).spurious_wakeups(false);
            let failure = builder
                .check(|| signalled_task(true))
                .expect_err("the check-then-register window is found");
            assert_eq!(failure.kind(), FailureKind::Deadlock, "{failure}");
            let text = failure.to_string();
            assert!(
                text.contains("task #1 returned Pending and nothing woke it"),
                "{text}"
            );
            let again = builder
                .replay(|| signalled_task(true), failure.schedule())
                .expect_err("the schedule replays the deadlock");
            assert_eq!(again, failure, "{substrate:?}, {reduction:?}");
        }
    }
    each_sampler(5, |builder, name| {
        let failure = builder
            .spurious_wakeups(false)
            .check(|| signalled_task(true))
            .expect_err(&name);
        assert_eq!(failure.kind(), FailureKind::Deadlock, "{name}: {failure}");
    });
}

/// A future that counts its wakes and assumes every poll after the first follows one.
struct OnePollPerWake {
    wakes: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    polls: usize,
}

impl Future for OnePollPerWake {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.polls += 1;
        if self.polls == 1 {
            let waker = cx.waker().clone();
            let wakes = std::sync::Arc::clone(&self.wakes);
            // Woken once, from another thread.
            thread::spawn(move || {
                wakes.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                waker.wake();
            });
            return Poll::Pending;
        }
        assert_eq!(
            self.wakes.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "polled again before it was woken"
        );
        Poll::Ready(())
    }
}

fn one_poll_per_wake() {
    future::block_on(OnePollPerWake {
        wakes: Default::default(),
        polls: 0,
    });
}

#[test]
fn a_future_that_assumes_one_poll_per_wake_is_caught_by_spurious_polls() {
    for substrate in SUBSTRATES {
        let failure = dfs(substrate, Reduction::Dpor, None)
            .check(one_poll_per_wake)
            .expect_err("a spurious poll comes before the wake");
        assert!(
            failure
                .message()
                .contains("polled again before it was woken")
        );
        let report = dfs(substrate, Reduction::Dpor, None)
            .spurious_wakeups(false)
            .check(one_poll_per_wake)
            .unwrap_or_else(|f| panic!("{substrate:?}: without spurious polls: {f}"));
        assert!(report.exhausted);
    }
}

/// Two futures, each polled by `block_on` on a thread of its own (a `MutexGuard` is not
/// `Send`, so a spawned task cannot hold one across `.await`): one holds the mutex across
/// an `.await` on a signal that the other sets only once it has the mutex.
fn guard_across_await() {
    let lock = Arc::new(Mutex::new(0));
    let signal = Arc::new(Signal::default());
    let (lock2, signal2) = (Arc::clone(&lock), Arc::clone(&signal));
    let holder = thread::spawn(move || {
        future::block_on(async move {
            let mut guard = lock2.lock().unwrap();
            signal2.wait(false).await;
            *guard += 1;
        })
    });
    let setter = thread::spawn(move || {
        future::block_on(async move {
            *lock.lock().unwrap() += 1;
            signal.set();
        })
    });
    holder.join().unwrap();
    setter.join().unwrap();
}

#[test]
fn a_guard_held_across_await_deadlocks_two_tasks() {
    each_dfs(|builder, name, bound| {
        if bound == Some(0) {
            return;
        }
        let failure = builder
            .spurious_wakeups(false)
            .check(guard_across_await)
            .expect_err(&name);
        assert_eq!(failure.kind(), FailureKind::Deadlock, "{name}: {failure}");
        let text = failure.to_string();
        assert!(
            text.contains("thread #1 returned Pending and nothing woke it")
                && text.contains("thread #2 waits to lock"),
            "{name}: {text}"
        );
    });
}

/// A guard that can cross `.await` in a spawned task: it marks `flag` while it lives.
pub(crate) struct Held(Arc<AtomicBool>);

impl Held {
    pub(crate) fn take(flag: Arc<AtomicBool>) -> Self {
        flag.store(true, Ordering::SeqCst);
        Held(flag)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

#[test]
fn an_abort_cancels_and_drops_the_future_inside_the_model() {
    each_dfs(|builder, name, _| {
        builder
            .check(|| {
                let held = Arc::new(AtomicBool::new(false));
                let mine = Arc::clone(&held);
                let task = future::spawn(async move {
                    let _guard = Held::take(mine);
                    std::future::pending::<()>().await;
                });
                task.abort();
                let result = future::block_on(task);
                assert!(result.unwrap_err().is_cancelled());
                // The future was dropped with its guard, inside the model.
                assert!(!held.load(Ordering::SeqCst), "the guard was released");
            })
            .unwrap_or_else(|f| panic!("{name}: {f}"));
    });
}

#[test]
fn an_abort_races_completion() {
    for substrate in SUBSTRATES {
        let outcomes = std::sync::Mutex::new(std::collections::BTreeSet::new());
        let report = dfs(substrate, Reduction::Off, None)
            .check(|| {
                let task = future::spawn(async { 5 });
                task.abort_handle().abort();
                let result = future::block_on(task).map_err(|e| e.is_cancelled());
                outcomes.lock().unwrap().insert(result);
            })
            .unwrap();
        assert!(report.exhausted);
        let outcomes = outcomes.into_inner().unwrap();
        assert_eq!(
            outcomes.into_iter().collect::<Vec<_>>(),
            vec![Ok(5), Err(true)],
            "{substrate:?}: the task may finish first, or be cancelled"
        );
    }
}

/// A task's panic reaches its handle, whether task panics fail the execution (the default:
/// then only a panic nobody receives does) or not.
#[test]
fn a_panicking_task_reaches_its_join_handle() {
    for fail in [true, false] {
        let report = Builder::new()
            .seed(3)
            .iterations(50)
            .thread_panics_fail(fail)
            .check(|| {
                let task = future::spawn(async { panic!("boom") });
                let error: future::JoinError = future::block_on(task).unwrap_err();
                assert!(error.is_panic());
                assert_eq!(*error.into_panic().downcast::<&str>().unwrap(), "boom");
                // A local task's panic reaches its handle too, and the executor goes on.
                let after = future::block_on(async {
                    let task = future::spawn_local(async { panic!("local boom") });
                    let error = task.await.unwrap_err();
                    assert_eq!(
                        *error.into_panic().downcast::<&str>().unwrap(),
                        "local boom"
                    );
                    future::spawn_local(async { 3 }).await.unwrap()
                });
                assert_eq!(after, 3);
            });
        report.unwrap_or_else(|f| panic!("thread_panics_fail({fail}): {f}"));
    }
    let failure = Builder::new()
        .seed(3)
        .iterations(50)
        .check(|| {
            let task = future::spawn(async { panic!("boom") });
            let _ = future::block_on(task);
        })
        .expect_err("by default a task's panic nobody looks at fails the execution");
    assert_eq!(failure.kind(), FailureKind::Panic);
    assert!(failure.thread().unwrap().is_task(), "{failure}");
}

/// A task waits, by `yield_now` polling, for a flag another thread sets after writing data;
/// `order` is the flag's ordering.
fn flag_through_a_task(order: (Ordering, Ordering)) {
    let data = Arc::new(AtomicUsize::new(0));
    let flag = Arc::new(AtomicBool::new(false));
    let (d, f) = (Arc::clone(&data), Arc::clone(&flag));
    let writer = thread::spawn(move || {
        d.store(1, Ordering::Relaxed);
        f.store(true, order.0);
    });
    let reader = future::spawn(async move {
        while !flag.load(order.1) {
            future::yield_now().await;
        }
        assert_eq!(data.load(Ordering::Relaxed), 1, "stale data");
    });
    future::block_on(reader).unwrap();
    writer.join().unwrap();
}

#[test]
fn weak_memory_reaches_into_tasks() {
    for substrate in SUBSTRATES {
        let stale = dfs(substrate, Reduction::Dpor, None)
            .check(|| flag_through_a_task((Ordering::Relaxed, Ordering::Relaxed)))
            .expect_err("a relaxed flag does not publish the data");
        assert!(
            stale.message().contains("stale data"),
            "{substrate:?}: {stale}"
        );
        dfs(substrate, Reduction::Dpor, None)
            .check(|| flag_through_a_task((Ordering::Release, Ordering::Acquire)))
            .unwrap_or_else(|f| panic!("{substrate:?}: release/acquire: {f}"));
    }
}

/// Returns `Pending` once, with its waker registered in `waker`, then `Ready` (whether it
/// was woken or not: with spurious polls off, only a wake polls it again).
struct PendingOnce<'a> {
    waker: &'a AtomicWaker,
    registered: &'a AtomicBool,
    polled: bool,
}

impl Future for PendingOnce<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.polled {
            return Poll::Ready(());
        }
        self.polled = true;
        self.waker.register(cx.waker());
        self.registered.store(true, Ordering::Relaxed);
        Poll::Pending
    }
}

/// The main thread writes relaxed data once the task registered its waker, then wakes it;
/// the task reads the data in the poll after the wake. Only the wake orders the two.
fn data_before_a_wake() {
    let data = Arc::new(AtomicUsize::new(0));
    let waker = Arc::new(AtomicWaker::new());
    let registered = Arc::new(AtomicBool::new(false));
    let (d, w, r) = (
        Arc::clone(&data),
        Arc::clone(&waker),
        Arc::clone(&registered),
    );
    let task = future::spawn(async move {
        PendingOnce {
            waker: &w,
            registered: &r,
            polled: false,
        }
        .await;
        d.load(Ordering::Relaxed)
    });
    while !registered.load(Ordering::Relaxed) {
        thread::yield_now();
    }
    data.store(1, Ordering::Relaxed);
    waker.wake();
    assert_eq!(
        future::block_on(task).unwrap(),
        1,
        "the wake did not publish"
    );
}

#[test]
fn a_wake_publishes_what_was_written_before_it() {
    each_dfs(|builder, name, _| {
        builder
            .spurious_wakeups(false)
            .check(data_before_a_wake)
            .unwrap_or_else(|f| panic!("{name}: {f}"));
    });
}

#[test]
fn independent_tasks_that_never_wait_take_one_class() {
    for substrate in SUBSTRATES {
        for n in [1, 2, 5] {
            let report = dfs(substrate, Reduction::Dpor, None)
                .check(move || {
                    // std's `Arc`: the modelled one's drops would order the tasks' ends.
                    let counters: Vec<_> = (0..n)
                        .map(|_| std::sync::Arc::new(AtomicUsize::new(0)))
                        .collect();
                    for c in &counters {
                        let c = std::sync::Arc::clone(c);
                        // Detached: the execution still waits for it to finish.
                        drop(future::spawn(
                            async move { c.fetch_add(1, Ordering::Relaxed) },
                        ));
                    }
                })
                .unwrap();
            assert_eq!(
                report.executions - report.redundant,
                1,
                "{n} tasks: {report}"
            );
        }
    }
}

#[test]
fn threads_and_tasks_mix() {
    let report = Builder::new()
        .strategy(StrategyKind::Random)
        .seed(11)
        .iterations(300)
        .check(|| {
            let count = Arc::new(AtomicUsize::new(0));
            let c = Arc::clone(&count);
            let t = thread::spawn(move || {
                let c2 = Arc::clone(&c);
                let inner = future::spawn(async move { c2.fetch_add(1, Ordering::SeqCst) });
                future::block_on(inner).unwrap();
                c.fetch_add(1, Ordering::SeqCst);
            });
            let c = Arc::clone(&count);
            future::block_on(future::spawn(async move {
                c.fetch_add(1, Ordering::SeqCst);
            }))
            .unwrap();
            t.join().unwrap();
            assert_eq!(count.load(Ordering::SeqCst), 3);
        })
        .unwrap();
    assert_eq!(report.executions, 300);
}

/// Counts its drops in `DROPS`, across executions.
struct Counted;

static DROPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Drop for Counted {
    fn drop(&mut self) {
        DROPS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn detached_tasks_waiting_at_the_end_are_dropped_inside_the_model() {
    for substrate in SUBSTRATES {
        DROPS.store(0, std::sync::atomic::Ordering::SeqCst);
        let report = dfs(substrate, Reduction::Dpor, None)
            .check(|| {
                let held = Arc::new(AtomicBool::new(false));
                let mine = Arc::clone(&held);
                drop(future::spawn(async move {
                    let _guard = Held::take(mine);
                    let _counted = Counted;
                    std::future::pending::<()>().await;
                }));
            })
            .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
        assert_eq!(
            DROPS.load(std::sync::atomic::Ordering::SeqCst),
            report.executions,
            "{substrate:?}: the future is dropped once per execution: {report}"
        );
        // Kept attached (its handle never dropped), the same task is a lost wake-up.
        let failure = dfs(substrate, Reduction::Dpor, None)
            .check(|| std::mem::forget(future::spawn(std::future::pending::<()>())))
            .expect_err("an attached task that never finishes");
        assert_eq!(failure.kind(), FailureKind::Deadlock);
        assert!(
            failure
                .to_string()
                .contains("task #1 returned Pending and nothing woke it; no Waker of it is alive"),
            "{failure}"
        );
    }
}

/// A waker kept by the test, across executions and past them.
static KEPT: std::sync::Mutex<Option<std::task::Waker>> = std::sync::Mutex::new(None);

#[test]
fn wakes_that_change_nothing_are_harmless() {
    each_dfs(|builder, name, _| {
        builder
            .check(|| {
                let lock = Arc::new(Mutex::new(0));
                let waker = Arc::new(AtomicWaker::new());
                let (l, w) = (Arc::clone(&lock), Arc::clone(&waker));
                let guard = lock.lock().unwrap();
                let task = future::spawn(async move {
                    std::future::poll_fn(|cx| {
                        w.register(cx.waker());
                        Poll::Ready(())
                    })
                    .await;
                    // Blocks on the lock the main thread holds: a wake must not let it
                    // past.
                    *l.lock().unwrap()
                });
                waker.wake();
                drop(guard);
                *lock.lock().unwrap() = 1;
                let seen = future::block_on(task).unwrap();
                assert!(seen == 0 || seen == 1);
                // A finished task's waker, and a waker of an earlier execution: nothing.
                waker.wake();
                if let Some(old) = KEPT.lock().unwrap().take() {
                    old.wake();
                }
                *KEPT.lock().unwrap() = Some(future::block_on(std::future::poll_fn(|cx| {
                    Poll::Ready(cx.waker().clone())
                })));
            })
            .unwrap_or_else(|f| panic!("{name}: {f}"));
    });
    // And one outside any execution.
    KEPT.lock().unwrap().take().expect("kept").wake();
}

#[test]
fn aborts_twice_at_a_second_await_and_of_a_detached_task() {
    each_dfs(|builder, name, _| {
        builder
            .check(|| {
                let held = Arc::new(AtomicBool::new(false));
                let mine = Arc::clone(&held);
                let task = future::spawn(async move {
                    future::yield_now().await;
                    let _guard = Held::take(mine);
                    future::yield_now().await;
                    std::future::pending::<()>().await;
                });
                let handle = task.abort_handle();
                drop(task); // detached
                handle.abort();
                handle.abort();
                while !handle.is_finished() {
                    thread::yield_now();
                }
                assert!(!held.load(Ordering::SeqCst), "dropped wherever it stopped");
            })
            .unwrap_or_else(|f| panic!("{name}: {f}"));
    });
}

#[test]
fn a_detached_task_blocked_in_a_block_on_inside_its_poll_is_a_deadlock_not_dropped() {
    for substrate in SUBSTRATES {
        let failure = dfs(substrate, Reduction::Dpor, None)
            .check(|| {
                drop(future::spawn(async {
                    // A blocking call inside a poll: it waits in its own block_on.
                    future::block_on(std::future::pending::<()>());
                }));
            })
            .expect_err("never woken, and not between polls: not shut down");
        assert_eq!(
            failure.kind(),
            FailureKind::Deadlock,
            "{substrate:?}: {failure}"
        );
        assert!(
            failure
                .to_string()
                .contains("task #1 returned Pending and nothing woke it"),
            "{failure}"
        );
    }
}
