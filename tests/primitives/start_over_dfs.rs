//! DFS executions start untracked too (see `tests/start_over.rs` for random and PCT). DFS
//! learns from every execution, so the first one that needs the memory model makes the
//! whole search start over, tracked, and only that search counts. The result must be the
//! tracked search's exactly: the same executions to exhaust, the same first failing
//! execution, with and without reduction.

use std::sync::atomic::Ordering::{Relaxed, SeqCst};

use interleave_test::sync::atomic::{AtomicUsize, fence};
use interleave_test::sync::{Arc, Mutex};
use interleave_test::{Builder, Failure, Reduction, Report, StrategyKind, thread};

/// Both searches: plain DFS and DFS with partial-order reduction, unbounded.
const REDUCTIONS: [Reduction; 2] = [Reduction::Off, Reduction::Dpor];

fn dfs(reduction: Reduction) -> Builder {
    Builder::new()
        .strategy(StrategyKind::Dfs {
            max_preemptions: None,
        })
        .reduction(reduction)
}

/// Makes every execution tracked from its first step: a `Relaxed` load before any other
/// thread exists (one runnable thread, so no decision, and no other thread to order with).
fn tracked_from_the_start() {
    AtomicUsize::new(0).load(Relaxed);
}

/// Two threads add to a counter under a mutex and with `fetch_add`; the one that sees 1
/// from its first `fetch_add` also reads a `Relaxed` atomic (only some executions reach it,
/// and not the first ones of the search). Fails if `fail` and that thread's second
/// `fetch_add` saw 3: only an execution that reached the relaxed read fails.
fn counters(track_first: bool, fail: bool) {
    if track_first {
        tracked_from_the_start();
    }
    let s = Arc::new((AtomicUsize::new(0), Mutex::new(0), AtomicUsize::new(0)));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let s = Arc::clone(&s);
            thread::spawn(move || {
                *s.1.lock().unwrap() += 1;
                let seen = s.0.fetch_add(1, SeqCst);
                if seen == 1 {
                    s.2.load(Relaxed);
                }
                let again = s.0.fetch_add(1, SeqCst);
                assert!(!(fail && seen == 1 && again == 3), "the last writer saw 3");
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
}

fn exhaust(reduction: Reduction, model: impl Fn() + Sync) -> Report {
    let report = dfs(reduction).check(model).unwrap();
    assert!(report.exhausted, "{reduction:?}: {report}");
    report
}

#[test]
fn a_relaxed_access_met_late_restarts_the_search_and_counts_only_the_tracked_one() {
    for reduction in REDUCTIONS {
        let late = exhaust(reduction, || counters(false, false));
        let tracked = exhaust(reduction, || counters(true, false));
        assert_eq!(late.executions, tracked.executions, "{reduction:?}");
        assert_eq!(
            late.distinct_schedules, tracked.distinct_schedules,
            "{reduction:?}"
        );
        assert_eq!(late.redundant, tracked.redundant, "{reduction:?}");
    }
}

#[test]
fn a_failure_after_a_restart_is_the_tracked_search_s_first_failure() {
    for reduction in REDUCTIONS {
        let late: Failure = dfs(reduction).check(|| counters(false, true)).unwrap_err();
        let tracked = dfs(reduction).check(|| counters(true, true)).unwrap_err();
        assert_eq!(late.iteration(), tracked.iteration(), "{reduction:?}");
        // Untracked executions ran before the one that needed tracking (and fails).
        assert!(late.iteration() > 0, "{reduction:?}: {late}");
        assert_eq!(late.message(), tracked.message(), "{reduction:?}");
        assert!(late.message().contains("the last writer saw 3"), "{late}");
        let replayed = dfs(reduction)
            .replay(|| counters(false, true), late.schedule())
            .unwrap_err();
        assert_eq!(
            replayed, late,
            "{reduction:?}: replay gives another failure"
        );
    }
}

/// Store buffering with `SeqCst` fences between `SeqCst` accesses: the fences start the
/// search over (reduction orders them against the accesses, which untracked executions do
/// not declare), and the search explores what the tracked one does.
fn fenced_store_buffering(track_first: bool) {
    if track_first {
        tracked_from_the_start();
    }
    let s = Arc::new((AtomicUsize::new(0), AtomicUsize::new(0)));
    let s2 = Arc::clone(&s);
    let t = thread::spawn(move || {
        s2.0.store(1, SeqCst);
        fence(SeqCst);
        s2.1.load(SeqCst)
    });
    s.1.store(1, SeqCst);
    fence(SeqCst);
    let mine = s.0.load(SeqCst);
    let theirs = t.join().unwrap();
    assert!(mine == 1 || theirs == 1, "both read 0 across SeqCst fences");
}

#[test]
fn a_fence_restarts_the_search_with_the_tracked_counts() {
    for reduction in REDUCTIONS {
        let late = exhaust(reduction, || fenced_store_buffering(false));
        let tracked = exhaust(reduction, || fenced_store_buffering(true));
        assert_eq!(late.executions, tracked.executions, "{reduction:?}");
    }
}

/// A model with only `SeqCst` atomics and mutexes never needs tracking: its counts are the
/// tracked search's, and a failure is found at the same execution.
#[test]
fn a_seqcst_search_runs_untracked_with_the_tracked_counts() {
    let sc_only = |track_first: bool| {
        move || {
            if track_first {
                tracked_from_the_start();
            }
            let s = Arc::new((AtomicUsize::new(0), Mutex::new(0)));
            let s2 = Arc::clone(&s);
            let t = thread::spawn(move || {
                let v = s2.0.load(SeqCst);
                s2.0.store(v + 1, SeqCst);
                *s2.1.lock().unwrap() += 1;
            });
            let v = s.0.load(SeqCst);
            s.0.store(v + 1, SeqCst);
            *s.1.lock().unwrap() += 1;
            t.join().unwrap();
        }
    };
    for reduction in REDUCTIONS {
        let untracked = exhaust(reduction, sc_only(false));
        let tracked = exhaust(reduction, sc_only(true));
        assert_eq!(untracked.executions, tracked.executions, "{reduction:?}");
        assert_eq!(
            untracked.distinct_schedules, tracked.distinct_schedules,
            "{reduction:?}"
        );
        assert_eq!(untracked.redundant, tracked.redundant, "{reduction:?}");
    }
}
