//! DFS with partial-order reduction (the default): hand-counted classes of schedules,
//! independent threads, spin-waits under the spin rule, limits and what a run says about
//! itself. Exact counts against traces counted independently are in `dpor_oracle.rs` (the
//! oracle: `common/oracle.rs`); soundness on generated programs in `dpor_soundness.rs`.

use std::process::Command;
use std::time::Duration;

use interleave_test::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use interleave_test::sync::{Mutex, RwLock};
use interleave_test::{Builder, FailureKind, Limit, Reduction, StrategyKind, thread};
// Plumbing: the modelled `Arc`'s drops are switch points of their own (`tests/arc_drops.rs`);
// the counts here are of the primitives the models share.
use std::sync::Arc;

/// DFS with its default reduction, on coroutines whatever the environment says: what is
/// checked here does not depend on the substrate, and the unreduced searches some tests
/// compare with take long on OS threads.
fn dpor(bound: Option<u32>) -> Builder {
    Builder::new()
        .strategy(StrategyKind::Dfs {
            max_preemptions: bound,
        })
        .substrate(interleave_test::Substrate::Coroutines)
}

/// Runs `body(i)` on `n` model threads and joins them.
pub(crate) fn spawn_all(n: usize, body: impl Fn(usize) + Send + Sync + 'static) {
    let body = Arc::new(body);
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let body = Arc::clone(&body);
            thread::spawn(move || body(i))
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn reduction_is_on_by_default_and_the_report_names_it() {
    let report = dpor(None).check(|| spawn_all(1, |_| {})).unwrap();
    assert_eq!(report.reduction, Some(Reduction::Dpor));
    let report = Builder::new().seed(1).check(|| {}).unwrap();
    assert_eq!(report.reduction, None, "random runs do not reduce");
}

#[test]
fn independent_threads_take_one_execution_whatever_their_number() {
    for n in 1..=8 {
        let report = dpor(None)
            .check(move || {
                spawn_all(n, |_| {
                    let own = AtomicUsize::new(0);
                    own.store(1, SeqCst);
                    own.fetch_add(own.load(SeqCst), SeqCst);
                    let m = Mutex::new(0);
                    *m.lock().unwrap() += 1;
                })
            })
            .unwrap();
        assert_eq!(report.executions, 1, "{n} threads: {report}");
        assert!(report.exhausted, "{report}");
    }
}

/// Two threads each load a counter and store it plus one. The loads commute, so a class is
/// fixed by the order of the conflicting pairs (L1, S2), (S1, L2), (S1, S2). Of the C(4, 2) =
/// 6 interleavings, L1 L2 S1 S2 and L2 L1 S1 S2 are one class, as are L1 L2 S2 S1 and
/// L2 L1 S2 S1: 4 classes.
#[test]
fn racy_counter_has_four_classes() {
    let report = dpor(None)
        .check(|| {
            let n = Arc::new(AtomicUsize::new(0));
            spawn_all(2, move |_| {
                let v = n.load(SeqCst);
                n.store(v + 1, SeqCst);
            });
        })
        .unwrap();
    assert_eq!((report.executions, report.redundant), (4, 0), "{report}");
}

/// Two readers and a writer: read sections commute with each other, so a class is where the
/// write goes: before both reads, after both, or between them in either order, 4 classes.
#[test]
fn rwlock_two_readers_and_a_writer_have_four_classes() {
    let report = dpor(None)
        .check(|| {
            let l = Arc::new(RwLock::new(0));
            spawn_all(3, move |i| match i {
                0 => *l.write().unwrap() += 1,
                _ => drop(*l.read().unwrap()),
            });
        })
        .unwrap();
    assert_eq!((report.executions, report.redundant), (4, 0), "{report}");
}

/// Three threads each take one mutex twice: 6! / (2! 2! 2!) = 90 orders of the critical
/// sections (unreduced, the same model has 188,604 schedules).
#[test]
fn three_threads_taking_a_mutex_twice_take_90_executions() {
    let report = dpor(None)
        .check(|| {
            let m = Arc::new(Mutex::new(0));
            spawn_all(3, move |_| {
                for _ in 0..2 {
                    *m.lock().unwrap() += 1;
                }
            });
        })
        .unwrap();
    assert_eq!((report.executions, report.redundant), (90, 0), "{report}");
    assert!(report.to_string().starts_with(
        "dfs: all 90 classes of schedules of the modelled operations explored (reduction: \
         DPOR, source sets and sleep sets; bound: none), no failure; 90 executions; steps per \
         execution"
    ));
}

/// A thread spins on a flag with `yield_now` (or `spin_loop`) until another sets it.
fn spin_wait(use_hint: bool) {
    let flag = Arc::new(AtomicBool::new(false));
    let f2 = Arc::clone(&flag);
    let waiter = thread::spawn(move || {
        while !f2.load(SeqCst) {
            match use_hint {
                true => interleave_test::hint::spin_loop(),
                false => thread::yield_now(),
            }
        }
    });
    flag.store(true, SeqCst);
    waiter.join().unwrap();
}

#[test]
fn a_correct_spin_wait_passes_exhaustively_with_and_without_reduction_or_bound() {
    for reduction in [Reduction::Dpor, Reduction::Off] {
        for bound in [None, Some(2)] {
            for hint in [false, true] {
                let report = dpor(bound)
                    .reduction(reduction)
                    .check(move || spin_wait(hint))
                    .unwrap();
                assert!(report.exhausted, "{reduction:?} {bound:?}: {report}");
            }
        }
    }
}

#[test]
fn a_real_livelock_is_still_reported() {
    // Each thread waits for the other to go first, for ever.
    let failure = dpor(None)
        .max_steps(2_000)
        .check(|| {
            let turn = Arc::new(AtomicUsize::new(0));
            let t2 = Arc::clone(&turn);
            let other = thread::spawn(move || {
                while t2.load(SeqCst) != 1 {
                    thread::yield_now();
                }
            });
            while turn.load(SeqCst) != 2 {
                thread::yield_now();
            }
            other.join().unwrap();
        })
        .unwrap_err();
    assert_eq!(failure.kind(), FailureKind::Livelock, "{failure}");
}

#[test]
fn max_time_stops_a_search_unexhausted_and_says_so() {
    let report = dpor(None)
        .reduction(Reduction::Off)
        .max_time(Duration::from_millis(200))
        .check(|| {
            let n = Arc::new(AtomicUsize::new(0));
            spawn_all(4, move |_| {
                for _ in 0..4 {
                    n.fetch_add(1, SeqCst);
                }
            });
        })
        .unwrap();
    assert!(!report.exhausted, "{report}");
    assert_eq!(
        report.stopped_by,
        Some(Limit::MaxTime(Duration::from_millis(200)))
    );
    let text = report.to_string();
    assert!(
        text.starts_with("dfs: NOT EXHAUSTED: stopped by max_time (200.00ms) after "),
        "{text}"
    );
    // Random runs stop too, and say why.
    let report = Builder::new()
        .seed(3)
        .iterations(u64::MAX)
        .max_time(Duration::from_millis(100))
        .check(|| spawn_all(2, |_| {}))
        .unwrap();
    assert_eq!(
        report.stopped_by,
        Some(Limit::MaxTime(Duration::from_millis(100)))
    );
    assert!(
        report
            .to_string()
            .contains("(stopped by max_time (100.00ms))")
    );
}

/// Set to a case name to run it in a child process (see [`child`]).
const CHILD: &str = "INTERLEAVE_TEST_DPOR_CHILD";

/// A model whose unreduced search takes minutes.
fn big_model() {
    let n = Arc::new(AtomicUsize::new(0));
    spawn_all(4, move |_| {
        for _ in 0..5 {
            n.fetch_add(1, SeqCst);
        }
    });
}

/// Not a test on its own: the child process of the tests below, which need the environment
/// or a long run.
#[test]
fn child() {
    match std::env::var(CHILD).as_deref() {
        Ok("model") => {
            let report = interleave_test::model(big_model);
            eprintln!("REPORT exhausted: {}", report.exhausted);
        }
        Ok("progress") => {
            let report = dpor(None)
                .reduction(Reduction::Off)
                .name("dpor::big_model")
                .max_time(Duration::from_millis(3_300))
                .check(big_model)
                .unwrap();
            eprintln!("REPORT {report}");
        }
        _ => {}
    }
}

/// Runs [`child`] with `case` in this test binary again (libtest names the test with its
/// module path in the binary, `tests/search/main.rs`).
fn run_child(case: &str, env: &[(&str, &str)]) -> (bool, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["dpor::child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, case)
        .env_remove("INTERLEAVE_PROGRESS")
        .env_remove("INTERLEAVE_PARTIAL")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn model_fails_when_it_could_not_finish() {
    let (ok, stderr) = run_child("model", &[("INTERLEAVE_ITERATIONS", "3")]);
    assert!(!ok, "{stderr}");
    assert!(
        stderr.contains("interleave_test::model could not finish the search, so nothing is proved"),
        "{stderr}"
    );
    assert!(
        stderr.contains("NOT EXHAUSTED: stopped by the iteration cap (3 executions)"),
        "{stderr}"
    );
}

/// `INTERLEAVE_PARTIAL=1` accepts a search a limit stopped in `model` as it does in an
/// `#[interleave]` test (it used to fail `model` all the same); `=0` still fails it, and
/// says so.
#[test]
fn model_passes_a_partial_search_with_interleave_partial() {
    let capped = [("INTERLEAVE_ITERATIONS", "3"), ("INTERLEAVE_PARTIAL", "1")];
    let (ok, stderr) = run_child("model", &capped);
    assert!(ok, "{stderr}");
    assert!(stderr.contains("REPORT exhausted: false"), "{stderr}");
    let refused = [("INTERLEAVE_ITERATIONS", "3"), ("INTERLEAVE_PARTIAL", "0")];
    let (ok, stderr) = run_child("model", &refused);
    assert!(!ok, "{stderr}");
    assert!(
        stderr.contains(
            "set INTERLEAVE_PARTIAL=1 (for every test, e.g. in a capped CI run); \
                         INTERLEAVE_PARTIAL=0 is set now."
        ),
        "{stderr}"
    );
}

#[test]
fn a_long_search_prints_its_progress_when_asked_unless_turned_off() {
    // Off a terminal (this child's stderr is a pipe), only when asked for.
    let (ok, stderr) = run_child("progress", &[]);
    assert!(ok, "{stderr}");
    assert!(!stderr.contains("interleave-test dfs"), "{stderr}");
    let (ok, stderr) = run_child("progress", &[("INTERLEAVE_PROGRESS", "1")]);
    assert!(ok, "{stderr}");
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("interleave-test dfs dpor::big_model: "))
        .collect();
    assert!(!lines.is_empty(), "{stderr}");
    let line = lines[0];
    assert!(
        line.contains(" executions, ") && line.contains("/s, depth "),
        "{line}"
    );
    assert!(
        line.contains(", total ") && line.contains(" to ") && line.contains(" left"),
        "{line}"
    );
    // At most one line a second: the run lasts 3.3 s and the first comes after 2 s.
    assert!(lines.len() <= 2, "{stderr}");
    let (ok, stderr) = run_child("progress", &[("INTERLEAVE_PROGRESS", "0")]);
    assert!(ok, "{stderr}");
    assert!(!stderr.contains("interleave-test dfs"), "{stderr}");
    assert!(stderr.contains("REPORT dfs: NOT EXHAUSTED"), "{stderr}");
}

/// A `try_send` on a rendezvous channel succeeds only if the receiver already waits in
/// `recv`: its result depends on how far the receiver got, not on the channel, and both
/// results must be explored with reduction, with and without a bound.
#[test]
fn try_send_sees_whether_the_receiver_already_waits() {
    use interleave_test::sync::mpsc::sync_channel;
    use std::collections::BTreeSet;
    let outcomes = |b: Builder| {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(BTreeSet::new()));
        let record = std::sync::Arc::clone(&seen);
        b.check(move || {
            let (tx, rx) = sync_channel::<i32>(0);
            let receiver = thread::spawn(move || rx.recv().ok());
            let sent = tx.try_send(1).is_ok();
            drop(tx);
            let got = receiver.join().unwrap();
            record.lock().unwrap().insert((sent, got));
        })
        .unwrap();
        seen.lock().unwrap().clone()
    };
    // Without a preemption, main goes on after the spawn and finds no receiver yet.
    let all = BTreeSet::from([(false, None), (true, Some(1))]);
    let first = BTreeSet::from([(false, None)]);
    for (bound, expected) in [(None, &all), (Some(0), &first), (Some(1), &all)] {
        assert_eq!(&outcomes(dpor(bound)), expected, "bound {bound:?}");
        let off = dpor(bound).reduction(Reduction::Off);
        assert_eq!(&outcomes(off), expected, "unreduced, bound {bound:?}");
    }
}

/// What a model of the outcome tests writes its observations to.
type Log = std::sync::Mutex<Vec<String>>;

/// A model that logs what it observes, with its name.
type Logging = (&'static str, fn(&Log));

/// The outcomes `model` records, under DFS with `reduction` and `bound`.
fn outcome_set(
    model: fn(&Log),
    reduction: Reduction,
    bound: Option<u32>,
) -> std::collections::BTreeSet<String> {
    let seen = std::sync::Mutex::new(std::collections::BTreeSet::new());
    let report = dpor(bound)
        .reduction(reduction)
        .check(|| {
            let log = std::sync::Mutex::new(Vec::new());
            model(&log);
            seen.lock()
                .unwrap()
                .insert(log.into_inner().unwrap().join(" "));
        })
        .unwrap();
    assert!(report.exhausted, "{report}");
    seen.into_inner().unwrap()
}

/// Channel operations touch parts of the channel (the order of sends, one slot per value,
/// the senders, the receiver), so reduction lets operations on different parts commute:
/// these models check that no outcome is lost by that, with and without a bound.
#[test]
fn channel_parts_lose_no_outcome() {
    use interleave_test::sync::mpsc::{Receiver, channel, sync_channel};
    fn drain(rx: &Receiver<u32>, log: &Log, n: usize) {
        for _ in 0..n {
            log.lock().unwrap().push(format!("{:?}", rx.try_recv()));
            log.lock().unwrap().push(format!("{:?}", rx.recv()));
        }
    }
    let models: [Logging; 4] = [
        ("two producers", |log| {
            let (tx, rx) = channel();
            let tx2 = tx.clone();
            let a = thread::spawn(move || (1..=2).for_each(|v| tx.send(v).unwrap()));
            let b = thread::spawn(move || tx2.send(9).unwrap());
            drain(&rx, log, 2);
            log.lock().unwrap().push(format!("{:?}", rx.recv()));
            a.join().unwrap();
            b.join().unwrap();
        }),
        ("capacity one", |log| {
            let (tx, rx) = sync_channel(1);
            let tx2 = tx.clone();
            let a = thread::spawn(move || (1..=2).for_each(|v| tx.send(v).unwrap()));
            let b = thread::spawn(move || tx2.try_send(9).is_ok());
            drain(&rx, log, 1);
            let sent = b.join().unwrap();
            log.lock().unwrap().push(format!("{sent}"));
            while let Ok(v) = rx.recv() {
                log.lock().unwrap().push(format!("{v}"));
            }
            a.join().unwrap();
        }),
        ("last sender leaves", |log| {
            let (tx, rx) = channel();
            let a = thread::spawn(move || tx.send(1).unwrap());
            for _ in 0..3 {
                log.lock().unwrap().push(format!("{:?}", rx.try_recv()));
            }
            log.lock().unwrap().push(format!("{:?}", rx.recv()));
            a.join().unwrap();
        }),
        ("receiver leaves", |log| {
            let (tx, rx) = channel();
            let tx2 = tx.clone();
            let a = thread::spawn(move || [tx.send(1).is_ok(), tx.send(2).is_ok()]);
            let b = thread::spawn(move || tx2.send(3).is_ok());
            log.lock().unwrap().push(format!("{:?}", rx.try_recv()));
            drop(rx);
            let sent = (a.join().unwrap(), b.join().unwrap());
            log.lock().unwrap().push(format!("{sent:?}"));
        }),
    ];
    for (name, model) in models {
        for bound in [None, Some(1), Some(2)] {
            let reduced = outcome_set(model, Reduction::Dpor, bound);
            let all = outcome_set(model, Reduction::Off, bound);
            assert_eq!(reduced, all, "{name}, bound {bound:?}");
        }
    }
}

/// A notification that finds no waiter commutes with another such one; one that wakes a
/// waiter does not. Lost wake-ups (notify before wait, with a timeout to end the wait) and
/// which waiter `notify_one` wakes must all be explored, with and without a bound.
#[test]
fn condvar_notifications_lose_no_outcome() {
    use interleave_test::sync::Condvar;
    let models: [Logging; 2] = [
        ("notify before or after the wait", |log| {
            let pair = Arc::new((Mutex::new(0), Condvar::new()));
            // The second notifier takes no lock: only the condvar orders it with the wait.
            let notifiers: Vec<_> = (1..=2)
                .map(|i| {
                    let pair = Arc::clone(&pair);
                    thread::spawn(move || {
                        if i == 1 {
                            *pair.0.lock().unwrap() += 1;
                        }
                        pair.1.notify_one();
                    })
                })
                .collect();
            let guard = pair.0.lock().unwrap();
            let (guard, timeout) = pair.1.wait_timeout(guard, Duration::from_secs(1)).unwrap();
            log.lock()
                .unwrap()
                .push(format!("{} {}", *guard, timeout.timed_out()));
            drop(guard);
            notifiers.into_iter().for_each(|n| n.join().unwrap());
        }),
        ("which waiter wakes", |log| {
            let pair = Arc::new((Mutex::new(false), Condvar::new()));
            let waiters: Vec<_> = (0..2)
                .map(|i| {
                    let pair = Arc::clone(&pair);
                    thread::spawn(move || {
                        let guard = pair.0.lock().unwrap();
                        let (guard, t) =
                            pair.1.wait_timeout(guard, Duration::from_secs(1)).unwrap();
                        (i, *guard, t.timed_out())
                    })
                })
                .collect();
            *pair.0.lock().unwrap() = true;
            pair.1.notify_one();
            pair.1.notify_one();
            for w in waiters {
                log.lock().unwrap().push(format!("{:?}", w.join().unwrap()));
            }
        }),
    ];
    for (name, model) in models {
        for bound in [None, Some(1), Some(2)] {
            let reduced = outcome_set(model, Reduction::Dpor, bound);
            let all = outcome_set(model, Reduction::Off, bound);
            assert_eq!(reduced, all, "{name}, bound {bound:?}");
            assert!(reduced.len() > 1, "{name}: {reduced:?}");
        }
    }
}
