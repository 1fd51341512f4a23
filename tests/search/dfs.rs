//! Exhaustive and preemption-bounded DFS: exact schedule counts, soundness under the bound,
//! exhaustion, and nondeterminism detection.

use std::panic::{AssertUnwindSafe, catch_unwind};

use interleave_test::sync::Mutex;
use interleave_test::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use interleave_test::{Builder, FailureKind, Limit, Reduction, StrategyKind, thread};
// Plumbing: the modelled `Arc`'s drops are switch points of their own (`tests/arc_drops.rs`);
// the counts here are of the primitives the models share.
use std::sync::Arc;

/// DFS without reduction: every schedule (within the bound) runs.
fn dfs(bound: Option<u32>) -> Builder {
    Builder::new()
        .strategy(StrategyKind::Dfs {
            max_preemptions: bound,
        })
        .reduction(Reduction::Off)
}

/// Main spawns one thread; each of the two threads stores to two atomics of its own; main
/// then joins.
fn two_stores_each() {
    let (a, b) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (c, d) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let t = thread::spawn(move || {
        c.store(1, SeqCst);
        d.store(1, SeqCst);
    });
    a.store(1, SeqCst);
    b.store(1, SeqCst);
    t.join().unwrap();
}

/// The arithmetic. After the spawn, main has three visible steps, M1 = store a, M2 = store b,
/// J = join, and the thread has three, T0 = its start (it runs up to its first switch point),
/// T1 = store c, T2 = store d. The join can take effect only once the thread has finished, so
/// it is never a choice: it comes after T2. A decision is made before each step while both
/// threads can run, so the schedules are the interleavings of MM with TTT: C(5, 2) = 10. A
/// preemption is a switch away from a thread that could continue; switching after T2 (the
/// thread finished) or at J (main cannot go on before the thread ends) is free. Main runs
/// first. Counting the interleavings by preemptions (each ends with J):
///   0: MMTTT                                   -> 1
///   1: MTTTM, TTTMM                            -> 2
///   2: MTMTT, MTTMT, TMMTT, TTMMT              -> 4
///   3: TMTTM, TTMTM                            -> 2
///   4: TMTMT                                   -> 1
/// so bound 0 runs 1 schedule, bound 1 runs 3, bound 2 runs 7, no bound runs 10.
#[test]
fn exact_counts_with_and_without_a_preemption_bound() {
    for (bound, expected) in [
        (Some(0), 1),
        (Some(1), 3),
        (Some(2), 7),
        (Some(5), 10),
        (None, 10),
    ] {
        let report = dfs(bound).check(two_stores_each).unwrap();
        assert_eq!(report.executions, expected, "bound {bound:?}: {report}");
        assert_eq!(report.distinct_schedules, expected, "bound {bound:?}");
        assert!(report.exhausted, "bound {bound:?}");
        assert_eq!(report.bound, bound);
    }
}

#[test]
fn the_iteration_cap_stops_the_search_unexhausted() {
    let report = dfs(None).iterations(7).check(two_stores_each).unwrap();
    assert_eq!(report.executions, 7);
    assert!(!report.exhausted, "{report}");
    assert_eq!(report.stopped_by, Some(Limit::Iterations(7)));
    let report = dfs(None).iterations(10).check(two_stores_each).unwrap();
    assert_eq!(report.stopped_by, None);
    assert!(
        report.exhausted,
        "the 10th execution was the last schedule: {report}"
    );
}

/// Fails only when the thread's load of `a` falls strictly between main's two stores to `a`
/// AND main's load of `b` falls strictly between the thread's two stores to `b`.
///
/// main:   M1 a.store(1)   M2 rb = b.load()   M3 a.store(2)   J join
/// thread: T0 start        T1 b.store(1)      T2 ra = a.load() T3 b.store(2)
///
/// The assertion fails iff ra == 1 (M1 < T2 < M3) and rb == 1 (T1 < M2 < T3).
///
/// One preemption is not enough. The thread never blocks, so the only free switch away from
/// it is its end; main blocks only at J, so before J every switch away from main costs one.
/// If main reaches J before the thread has run, M1-M3 all precede T2 and ra == 2. Otherwise
/// the switch into the thread before J is the one preemption, and with no second one the
/// thread runs to its end: T1, T2, T3 without a break, so M2 is not between T1 and T3 and
/// rb != 1.
/// Two suffice: M1 |T0 T1 T2 |M2 M3 J, then T3 (main blocked at J: free), with the two
/// preemptions at the bars.
fn needs_two_preemptions() {
    let (a, b) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (a2, b2) = (Arc::clone(&a), Arc::clone(&b));
    let t = thread::spawn(move || {
        b2.store(1, SeqCst);
        let ra = a2.load(SeqCst);
        b2.store(2, SeqCst);
        ra
    });
    a.store(1, SeqCst);
    let rb = b.load(SeqCst);
    a.store(2, SeqCst);
    let ra = t.join().unwrap();
    assert!(!(ra == 1 && rb == 1), "each thread saw the other half-way");
}

#[test]
fn a_bug_needing_two_preemptions_is_found_with_bound_2_and_not_with_bound_1() {
    for reduction in [Reduction::Off, Reduction::Dpor] {
        let dfs = |bound| dfs(bound).reduction(reduction);
        for bound in [0, 1] {
            let report = dfs(Some(bound)).check(needs_two_preemptions).unwrap();
            assert!(report.exhausted, "{reduction:?}, bound {bound}: {report}");
            assert_eq!(report.bound, Some(bound));
        }
        let failure = dfs(Some(2)).check(needs_two_preemptions).unwrap_err();
        assert_eq!(failure.kind(), FailureKind::Panic, "{failure}");
        assert_eq!(failure.thread().unwrap().id(), 0, "{failure}");
        assert!(
            failure
                .message()
                .contains("each thread saw the other half-way"),
            "{}",
            failure.message()
        );
        assert_eq!(failure.schedule().strategy(), "dfs");
        assert_eq!(failure.seed(), None);
        // Unbounded search finds it too.
        let failure = dfs(None).check(needs_two_preemptions).unwrap_err();
        assert_eq!(
            failure.kind(),
            FailureKind::Panic,
            "{reduction:?}: {failure}"
        );
    }
}

/// Main and three spawned threads, each spawned thread taking the lock twice to increment.
fn four_threads_locked_increments() {
    let m = Arc::new(Mutex::new(0));
    let hs: Vec<_> = (0..3)
        .map(|_| {
            let m = Arc::clone(&m);
            thread::spawn(move || {
                for _ in 0..2 {
                    *m.lock().unwrap() += 1;
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*m.lock().unwrap(), 6);
}

#[test]
fn bound_2_on_four_threads_is_exhausted_with_a_stable_count() {
    let report = dfs(Some(2)).check(four_threads_locked_increments).unwrap();
    assert!(report.exhausted, "{report}");
    assert_eq!(report.bound, Some(2));
    let bound_2 = StrategyKind::Dfs {
        max_preemptions: Some(2),
    };
    assert_eq!(report.strategy, Some(bound_2));
    // Pinned, not derived: the count observed when a blocked operation stopped being a
    // choice (4,418 before, when a thread waiting for the lock could still be picked). A
    // change means the search visits a different set of schedules (or switch points
    // moved); check why.
    assert_eq!(report.executions, 2089, "{report}");
    assert_eq!(report.distinct_schedules, report.executions, "{report}");
    // 20 switch points per execution: 3 spawns, 3 x 2 x (lock + unlock), 3 joins, and the
    // final lock and unlock.
    assert_eq!(report.max_steps, 20, "{report}");
    assert_eq!(report.total_steps, 20 * report.executions, "{report}");
    // No execution exceeds the bound: at most 2 preemptions each.
    assert!(report.preemptions <= 2 * report.executions, "{report}");
}

#[test]
fn a_model_that_spawns_differently_on_odd_executions_is_nondeterminism() {
    // Kept outside the model, so it differs from one execution to the next.
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    for reduction in [Reduction::Off, Reduction::Dpor] {
        RUNS.store(0, std::sync::atomic::Ordering::Relaxed);
        let failure = dfs(None)
            .reduction(reduction)
            .check(|| {
                let odd = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 2 == 1;
                let x = Arc::new(AtomicUsize::new(0));
                let x2 = Arc::clone(&x);
                let first = thread::spawn(move || x2.store(1, SeqCst));
                let second = odd.then(|| thread::spawn(|| {}));
                x.store(2, SeqCst);
                first.join().unwrap();
                if let Some(second) = second {
                    second.join().unwrap();
                }
            })
            .unwrap_err();
        assert_eq!(
            failure.kind(),
            FailureKind::Nondeterminism,
            "{reduction:?}: {failure}"
        );
        // The second execution replays the first one's decisions; at decision 0 main is about
        // to spawn instead of to store.
        assert_eq!(failure.iteration(), 1, "{failure}");
        let msg = failure.message();
        assert!(msg.contains("at decision 0"), "{msg}");
        let before = msg.lines().find(|l| l.trim_start().starts_with("before:"));
        let now = msg.lines().find(|l| l.trim_start().starts_with("now:"));
        let (before, now) = (before.expect(msg), now.expect(msg));
        assert!(
            before.contains("#0 atomic store at tests/search/dfs.rs:"),
            "{msg}"
        );
        assert!(
            before.contains("#1 thread start at tests/search/dfs.rs:"),
            "{msg}"
        );
        assert!(
            now.contains("#0 thread spawn at tests/search/dfs.rs:"),
            "{msg}"
        );
        assert!(
            now.contains("#1 thread start at tests/search/dfs.rs:"),
            "{msg}"
        );
    }
}

fn fetch_add_twice() {
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = Arc::clone(&n);
    let t = thread::spawn(move || n2.fetch_add(1, SeqCst));
    n.fetch_add(1, SeqCst);
    t.join().unwrap();
    assert_eq!(n.load(SeqCst), 2);
}

fn racy_counter() {
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = Arc::clone(&n);
    let t = thread::spawn(move || {
        let v = n2.load(SeqCst);
        n2.store(v + 1, SeqCst);
    });
    let v = n.load(SeqCst);
    n.store(v + 1, SeqCst);
    t.join().unwrap();
    assert_eq!(n.load(SeqCst), 2, "an increment was lost");
}

#[test]
fn model_exhausts_a_correct_model_and_panics_on_a_racy_one() {
    let report = interleave_test::model(fetch_add_twice);
    assert!(report.exhausted, "{report}");
    let every_schedule = StrategyKind::Dfs {
        max_preemptions: None,
    };
    assert_eq!(report.strategy, Some(every_schedule));
    assert_eq!(report.seed, None);

    let test = "model_exhausts_a_correct_model_and_panics_on_a_racy_one";
    let msg = racy_model_message(test, || interleave_test::model(racy_counter));
    assert!(
        msg.contains(&format!(" --test search -- --exact dfs::{test}")),
        "{msg}"
    );
}

/// Runs `run`, a `model` of a racy counter in the test `test` of this module, and returns
/// its panic message, checked for what every such message says. In a test, `model` stores
/// a failure in the crate's corpus under the test's name (and replays it first next time):
/// this removes it, before and after. The name is the test binary's
/// (`tests/search/main.rs`), then the test's path in it.
fn racy_model_message(test: &str, run: impl FnOnce() -> interleave_test::Report) -> String {
    // One at a time: each removes the module's and the binary's directories when they are
    // empty, which, while another test of this file was between creating them and storing
    // its schedule in them, made that store fail (seen once under a full workspace run).
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("interleave-regressions/search/dfs")
        .join(test);
    let _ = std::fs::remove_dir_all(&corpus);
    let payload = catch_unwind(AssertUnwindSafe(run)).expect_err("the racy counter fails");
    let msg = payload
        .downcast_ref::<String>()
        .expect("a formatted message")
        .clone();
    assert!(msg.starts_with("interleave-test found a panic"), "{msg}");
    assert!(msg.contains("an increment was lost"), "{msg}");
    assert!(msg.contains("found by the dfs strategy"), "{msg}");
    let stored = format!("the schedule is stored in {}/", corpus.display());
    assert!(msg.contains(&stored), "{msg}");
    std::fs::remove_dir_all(&corpus).unwrap();
    // The directories of the module and of the binary, if nothing else is in them.
    for dir in corpus.ancestors().skip(1).take(2) {
        let _ = std::fs::remove_dir(dir);
    }
    msg
}

/// The racy counter as an async model: a spawned task and the `block_on` future each
/// load then store.
async fn racy_counter_async() {
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = Arc::clone(&n);
    let task = interleave_test::future::spawn(async move {
        let v = n2.load(SeqCst);
        n2.store(v + 1, SeqCst);
    });
    let v = n.load(SeqCst);
    n.store(v + 1, SeqCst);
    task.await.unwrap();
    assert_eq!(n.load(SeqCst), 2, "an increment was lost");
}

/// `model_async` searches as `model` does with the future under `block_on`: the same
/// classes for a correct model, and the same failure for a racy one.
#[test]
fn model_async_searches_as_model_over_block_on_does() {
    let correct = || async {
        let n = Arc::new(AtomicUsize::new(0));
        let n2 = Arc::clone(&n);
        let task = interleave_test::future::spawn(async move { n2.fetch_add(2, SeqCst) });
        n.fetch_add(1, SeqCst);
        assert!(task.await.unwrap() <= 1);
        assert_eq!(n.load(SeqCst), 3);
    };
    let report = interleave_test::model_async(correct);
    let sync = interleave_test::model(|| interleave_test::future::block_on(correct()));
    assert!(report.exhausted, "{report}");
    assert!(report.executions > 1, "{report}");
    assert_eq!(report.executions, sync.executions, "{report} / {sync}");

    let test = "model_async_searches_as_model_over_block_on_does";
    racy_model_message(test, || interleave_test::model_async(racy_counter_async));
}

#[test]
fn report_display_of_a_dfs_run_is_one_line_stating_what_was_proved() {
    let text = dfs(Some(1)).check(two_stores_each).unwrap().to_string();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.starts_with(
            "dfs: all 3 schedules of the modelled operations explored (reduction: none; bound: at \
             most 1 preemptions), no failure; 3 executions; steps per execution "
        ),
        "{text}"
    );
    let text = dfs(None)
        .reduction(Reduction::Dpor)
        .check(two_stores_each)
        .unwrap()
        .to_string();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.starts_with(
            "dfs: all 1 classes of schedules of the modelled operations explored (reduction: \
             DPOR, source sets and sleep sets; bound: none), no failure; 1 executions; "
        ),
        "{text}"
    );
    let text = dfs(Some(3))
        .iterations(2)
        .check(two_stores_each)
        .unwrap()
        .to_string();
    assert!(
        text.starts_with(
            "dfs: NOT EXHAUSTED: stopped by the iteration cap (2 executions) after 2 schedules \
             (reduction: none; bound: at most 3 preemptions); they passed, but this is not a \
             proof; "
        ),
        "{text}"
    );
}
