//! Exhaustive and preemption-bounded DFS: exact schedule counts, soundness under the bound,
//! exhaustion, and nondeterminism detection.

use interleave_test::sync::Arc;
use interleave_test::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use interleave_test::{Builder, FailureKind, StrategyKind, thread};

fn dfs(bound: Option<u32>) -> Builder {
    Builder::new()
        .iterations(1_000_000)
        .strategy(StrategyKind::Dfs {
            max_preemptions: bound,
        })
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
/// M3 = join (which blocks until the thread finishes), and the thread has three, T0 = its
/// start (it runs up to its first switch point), T1 = store c, T2 = store d. A decision is
/// made before each step while both threads can run, so the schedules are the interleavings
/// of MMM with TTT: C(6, 3) = 20. A preemption is a switch away from a thread that could
/// continue; switching after M3 (main blocked) or after T2 (thread finished) is free. Main
/// runs first. Counting the interleavings by preemptions:
///   0: MMMTTT                                                      -> 1
///   1: MMTTTM, MTTTMM, TTTMMM                                       -> 3
///   2: MMTMTT, MMTTMT, MTMMTT, MTTMMT, TMMMTT, TTMMMT               -> 6
///   3: MTMTTM, MTTMTM, TMMTTM, TMTTMM, TTMMTM, TTMTMM               -> 6
///   4: MTMTMT, TMMTMT, TMTMMT                                       -> 3
///   5: TMTMTM                                                       -> 1
/// so bound 0 runs 1 schedule, bound 1 runs 4, bound 2 runs 10, no bound runs 20.
#[test]
fn exact_counts_with_and_without_a_preemption_bound() {
    for (bound, expected) in [
        (Some(0), 1),
        (Some(1), 4),
        (Some(2), 10),
        (Some(5), 20),
        (None, 20),
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
    let report = dfs(None).iterations(20).check(two_stores_each).unwrap();
    assert!(
        report.exhausted,
        "the 20th execution was the last schedule: {report}"
    );
}
