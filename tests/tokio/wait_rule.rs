//! A future's wait that finds no wake blocks with no decision before it
//! (`interleave_engine::threads::wakes::wait`). Checked here against the unpruned rule, a switch
//! point before every wait: plain DFS (no reduction) under either rule must see exactly the
//! same outcomes, with and without spurious polls, on models whose waits race wakes,
//! timers, timeouts, aborts, a self-waking loop and a bounded channel; and the newer rule
//! must run fewer executions where waits block.

use std::collections::BTreeSet;
use std::sync::Arc as StdArc;
use std::time::Duration;

use interleave_test::future;
use interleave_test::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use interleave_test::{Builder, Reduction, StrategyKind, Substrate};
use interleave_test_tokio::sync::{Notify, mpsc, oneshot};
use interleave_test_tokio::{task, time};

/// The outcomes `model` gives under plain DFS on `substrate`, each execution recording
/// one, and the number of executions; `legacy`: every wait between polls is a switch
/// point (the unpruned rule).
fn outcomes<T: Ord + Send>(
    substrate: Substrate,
    legacy: bool,
    spurious: bool,
    model: impl Fn() -> T + Sync,
) -> (BTreeSet<T>, u64) {
    let seen = std::sync::Mutex::new(BTreeSet::new());
    let builder = Builder::new()
        .strategy(StrategyKind::Dfs {
            max_preemptions: None,
        })
        .reduction(Reduction::Off)
        .substrate(substrate)
        .spurious_wakeups(spurious)
        .switch_before_waits(legacy)
        .parallelism(1);
    let report = builder
        .check(|| {
            let outcome = model();
            seen.lock().unwrap().insert(outcome);
        })
        .unwrap();
    assert!(report.exhausted, "{report}");
    (seen.into_inner().unwrap(), report.executions)
}

/// Checks that both rules give `model` the same outcomes, with and without spurious polls,
/// on both substrates; returns the executions of each rule without spurious polls (newer,
/// older), which do not depend on the substrate. Spurious polls are checked on coroutines
/// only: the substrate hosts the threads and makes no decision, which the pair without them
/// shows on both, and the unpruned search with spurious polls on OS threads is the one slow
/// run here (371,368 executions of the channel model, 24 s of the 29 s this file took).
#[track_caller]
fn same_outcomes<T: Ord + Send + std::fmt::Debug>(
    name: &str,
    model: impl Fn() -> T + Sync,
) -> (u64, u64) {
    let mut runs = (0, 0);
    for substrate in [Substrate::Coroutines, Substrate::Threads] {
        for spurious in [false, true] {
            if spurious && substrate == Substrate::Threads {
                continue;
            }
            let at = format!("{name}, {substrate:?}, spurious polls {spurious}");
            let (old, old_runs) = outcomes(substrate, true, spurious, &model);
            let (new, new_runs) = outcomes(substrate, false, spurious, &model);
            assert_eq!(new, old, "{at}: outcomes");
            assert!(
                new_runs <= old_runs,
                "{at}: {new_runs} executions, {old_runs} before"
            );
            if !spurious {
                runs = (new_runs, old_runs);
            }
        }
    }
    runs
}

#[test]
fn a_bounded_channel_between_a_task_and_block_on() {
    let (new, old) = same_outcomes("channel", || {
        future::block_on(async {
            let (tx, mut rx) = mpsc::channel::<u32>(1);
            let sender = future::spawn(async move {
                for v in 1..=2 {
                    tx.send(v).await.unwrap();
                }
                tx.capacity()
            });
            let first = rx.try_recv().ok();
            let mut rest = Vec::new();
            while let Some(v) = rx.recv().await {
                rest.push(v);
            }
            (first, rest, sender.await.unwrap())
        })
    });
    // The receiver and the sender each wait for the other: the rule is in force.
    assert!(new < old, "{new} executions, {old} before");
}

#[test]
fn a_timeout_racing_a_delayed_send() {
    for (delay, limit) in [(2, 3), (3, 3), (5, 3)] {
        same_outcomes(
            &format!("timeout {limit} ms, send after {delay} ms"),
            || {
                future::block_on(async {
                    let (tx, rx) = oneshot::channel::<u32>();
                    let sender = future::spawn(async move {
                        time::sleep(Duration::from_millis(delay)).await;
                        tx.send(7).is_ok()
                    });
                    let got = time::timeout(Duration::from_millis(limit), rx).await;
                    let got = got.map(Result::ok).map_err(|_| "elapsed");
                    (got, sender.await.unwrap())
                })
            },
        );
    }
}

#[test]
fn a_notification_before_or_after_the_wait() {
    same_outcomes("notify", || {
        future::block_on(async {
            let notify = StdArc::new(Notify::new());
            let seen = StdArc::new(AtomicUsize::new(0));
            let (n, s) = (StdArc::clone(&notify), StdArc::clone(&seen));
            let waiter = future::spawn(async move {
                n.notified().await;
                s.fetch_add(1, SeqCst)
            });
            let before = seen.load(SeqCst);
            notify.notify_one();
            (before, waiter.await.unwrap())
        })
    });
}

#[test]
fn an_abort_racing_a_wait() {
    same_outcomes("abort", || {
        future::block_on(async {
            let (tx, rx) = oneshot::channel::<u32>();
            let task = future::spawn(async move { rx.await.ok() });
            task.abort();
            let sent = tx.send(1).is_ok();
            (sent, task.await.map_err(|e| e.is_cancelled()))
        })
    });
}

#[test]
fn a_self_waking_loop_and_a_flag() {
    same_outcomes("yield loop", || {
        future::block_on(async {
            let flag = StdArc::new(AtomicBool::new(false));
            let f = StdArc::clone(&flag);
            let spinner = future::spawn(async move {
                let mut yields = 0u32;
                while !f.load(SeqCst) && yields < 3 {
                    task::yield_now().await;
                    yields += 1;
                }
                yields
            });
            flag.store(true, SeqCst);
            spinner.await.unwrap()
        })
    });
}

/// Ready once its flag is set, counting its polls (a spurious poll shows in the count).
struct Counted {
    flag: StdArc<AtomicBool>,
    waker: StdArc<future::AtomicWaker>,
    polls: u32,
}

impl std::future::Future for Counted {
    type Output = u32;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<u32> {
        self.polls += 1;
        self.waker.register(cx.waker());
        match self.flag.load(SeqCst) {
            true => std::task::Poll::Ready(self.polls),
            false => std::task::Poll::Pending,
        }
    }
}

#[test]
fn the_polls_of_a_future_woken_once() {
    same_outcomes("poll count", || {
        let flag = StdArc::new(AtomicBool::new(false));
        let waker = StdArc::new(future::AtomicWaker::new());
        let counted = Counted {
            flag: StdArc::clone(&flag),
            waker: StdArc::clone(&waker),
            polls: 0,
        };
        let task = future::spawn(counted);
        flag.store(true, SeqCst);
        waker.wake();
        future::block_on(task).unwrap()
    });
}
