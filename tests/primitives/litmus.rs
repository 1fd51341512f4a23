//! Litmus tests of the memory model: the set of outcomes an exhaustive search produces must
//! equal exactly the set RC11 (Lahav et al., PLDI 2017) allows, no more (a forbidden
//! behaviour) and no less (a missed one). Each set is computed with and without
//! partial-order reduction, which must agree. Beside each test: the expected set and one
//! line of why.

use std::collections::BTreeSet;
use std::fmt::Debug;
use std::sync::Mutex as StdMutex;
use std::sync::atomic::Ordering::{self, Acquire, Relaxed, Release, SeqCst};

use interleave_test::sync::Arc;
use interleave_test::sync::atomic::{AtomicUsize, fence};
use interleave_test::{Builder, Reduction, StrategyKind, thread};

/// Unreduced searches longer than this are not run to compare (IRIW takes millions).
const UNREDUCED_CAP: u64 = 20_000;

/// The outcomes of `model` over an exhaustive DFS, which must be the same with reduction
/// and without (when the search without takes at most [`UNREDUCED_CAP`] executions).
fn outcomes<T: Ord + Send + Debug + Clone>(model: impl Fn() -> T + Sync) -> BTreeSet<T> {
    let run = |reduction: Reduction, cap: Option<u64>| {
        let seen = StdMutex::new(BTreeSet::new());
        // The memory model does not depend on the substrate: coroutines, always (the
        // unreduced searches take long on OS threads).
        let mut builder = Builder::new()
            .strategy(StrategyKind::Dfs {
                max_preemptions: None,
            })
            .substrate(interleave_test::Substrate::Coroutines)
            .reduction(reduction);
        builder.iterations = cap;
        let report = builder
            .check(|| {
                let v = model();
                seen.lock().unwrap().insert(v);
            })
            .unwrap();
        (report.exhausted, seen.into_inner().unwrap())
    };
    let (exhausted, reduced) = run(Reduction::Dpor, None);
    assert!(exhausted);
    let (exhausted, unreduced) = run(Reduction::Off, Some(UNREDUCED_CAP));
    if exhausted {
        assert_eq!(reduced, unreduced, "reduction lost outcomes");
    }
    reduced
}

fn set<T: Ord, const N: usize>(items: [T; N]) -> BTreeSet<T> {
    items.into_iter().collect()
}

type Shared = Arc<[AtomicUsize; 2]>;

fn shared() -> Shared {
    Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)])
}

/// Runs `a` and `b` on two threads over one pair of atomics; returns their results.
fn pair<A: Send + 'static, B: Send + 'static>(
    a: impl FnOnce(&[AtomicUsize; 2]) -> A + Send + 'static,
    b: impl FnOnce(&[AtomicUsize; 2]) -> B + Send + 'static,
) -> (A, B, Shared) {
    let s = shared();
    let (s1, s2) = (Arc::clone(&s), Arc::clone(&s));
    let ta = thread::spawn(move || a(&s1));
    let tb = thread::spawn(move || b(&s2));
    (ta.join().unwrap(), tb.join().unwrap(), s)
}

/// Store buffering: `x = 1; r1 = y || y = 1; r2 = x`.
fn sb(store: Ordering, load: Ordering, fenced: bool) -> BTreeSet<(usize, usize)> {
    outcomes(|| {
        let side = move |me: usize| {
            move |s: &[AtomicUsize; 2]| {
                s[me].store(1, store);
                if fenced {
                    fence(SeqCst);
                }
                s[1 - me].load(load)
            }
        };
        let (r1, r2, _) = pair(side(0), side(1));
        (r1, r2)
    })
}

#[test]
fn store_buffering() {
    // Relaxed and release/acquire: nothing orders a store before the other thread's load.
    let all = set([(0, 0), (0, 1), (1, 0), (1, 1)]);
    assert_eq!(sb(Relaxed, Relaxed, false), all);
    assert_eq!(sb(Release, Acquire, false), all);
    // SeqCst: one store is first in the total order, so the later load sees it.
    let sc = set([(0, 1), (1, 0), (1, 1)]);
    assert_eq!(sb(SeqCst, SeqCst, false), sc);
    // SeqCst fences between relaxed accesses: the later fence sees the earlier thread's store.
    assert_eq!(sb(Relaxed, Relaxed, true), sc);
}

/// Message passing: `data = 1; flag = 1 || r1 = flag; r2 = data`.
fn mp(store: Ordering, load: Ordering, fences: bool) -> BTreeSet<(usize, usize)> {
    outcomes(|| {
        let (_, r, _) = pair(
            move |s| {
                s[0].store(1, Relaxed);
                if fences {
                    fence(Release);
                }
                s[1].store(1, store);
            },
            move |s| {
                let flag = s[1].load(load);
                if fences {
                    fence(Acquire);
                }
                (flag, s[0].load(Relaxed))
            },
        );
        r
    })
}

#[test]
fn message_passing() {
    // Relaxed: seeing the flag says nothing about the data.
    assert_eq!(
        mp(Relaxed, Relaxed, false),
        set([(0, 0), (0, 1), (1, 0), (1, 1)])
    );
    // Release/acquire (or SeqCst, or fences): reading the flag's store synchronizes.
    let ordered = set([(0, 0), (0, 1), (1, 1)]);
    assert_eq!(mp(Release, Acquire, false), ordered);
    assert_eq!(mp(SeqCst, SeqCst, false), ordered);
    assert_eq!(mp(Relaxed, Relaxed, true), ordered);
}

/// Load buffering: `r1 = x; y = 1 || r2 = y; x = 1`.
fn lb(load: Ordering, store: Ordering) -> BTreeSet<(usize, usize)> {
    outcomes(|| {
        let (r1, r2, _) = pair(
            move |s| {
                let r = s[0].load(load);
                s[1].store(1, store);
                r
            },
            move |s| {
                let r = s[1].load(load);
                s[0].store(1, store);
                r
            },
        );
        (r1, r2)
    })
}

#[test]
fn load_buffering() {
    // RC11 forbids (1, 1) at every ordering: po ∪ rf must be acyclic (no out-of-thin-air).
    let allowed = set([(0, 0), (0, 1), (1, 0)]);
    assert_eq!(lb(Relaxed, Relaxed), allowed);
    assert_eq!(lb(Acquire, Release), allowed);
    assert_eq!(lb(SeqCst, SeqCst), allowed);
}

/// Independent reads of independent writes: `x = 1 || y = 1 || r1 = x; r2 = y || r3 = y;
/// r4 = x`.
fn iriw(load: Ordering, fenced: bool) -> BTreeSet<[usize; 4]> {
    outcomes(|| {
        let s = shared();
        let writer = |i: usize| {
            let s = Arc::clone(&s);
            thread::spawn(move || s[i].store(1, if load == SeqCst { SeqCst } else { Release }))
        };
        let reader = |first: usize| {
            let s = Arc::clone(&s);
            thread::spawn(move || {
                let a = s[first].load(load);
                if fenced {
                    fence(SeqCst);
                }
                (a, s[1 - first].load(load))
            })
        };
        let (w1, w2) = (writer(0), writer(1));
        let (r1, r2) = (reader(0), reader(1));
        w1.join().unwrap();
        w2.join().unwrap();
        let ((a, b), (c, d)) = (r1.join().unwrap(), r2.join().unwrap());
        [a, b, c, d]
    })
}

#[test]
fn independent_reads_of_independent_writes() {
    let weak = [1, 0, 1, 0];
    let mut every = BTreeSet::new();
    for bits in 0..16usize {
        every.insert([bits & 1, (bits >> 1) & 1, (bits >> 2) & 1, (bits >> 3) & 1]);
    }
    // Relaxed and release/acquire: the readers may see the writes in opposite orders.
    assert_eq!(iriw(Relaxed, false), every);
    assert_eq!(iriw(Acquire, false), every);
    // SeqCst, or SeqCst fences between the reads: one order of the writes for all.
    let mut sc = every.clone();
    sc.remove(&weak);
    assert_eq!(iriw(SeqCst, false), sc);
    assert_eq!(iriw(Relaxed, true), sc);
}

/// Write-to-read causality: `x = 1 || r1 = x; y = 1 || r2 = y; r3 = x`.
fn wrc(store: Ordering, load: Ordering) -> BTreeSet<(usize, usize, usize)> {
    outcomes(|| {
        let s = shared();
        let (s1, s2, s3) = (Arc::clone(&s), Arc::clone(&s), Arc::clone(&s));
        let a = thread::spawn(move || s1[0].store(1, store));
        let b = thread::spawn(move || {
            let r1 = s2[0].load(load);
            s2[1].store(1, store);
            r1
        });
        let c = thread::spawn(move || (s3[1].load(load), s3[0].load(load)));
        a.join().unwrap();
        let r1 = b.join().unwrap();
        let (r2, r3) = c.join().unwrap();
        (r1, r2, r3)
    })
}

#[test]
fn write_to_read_causality() {
    let mut every = BTreeSet::new();
    for bits in 0..8usize {
        every.insert((bits & 1, (bits >> 1) & 1, (bits >> 2) & 1));
    }
    // Relaxed: the middle thread's store publishes nothing.
    assert_eq!(wrc(Relaxed, Relaxed), every);
    // Release/acquire: x = 1 happens before r3 through the chain, so (1, 1, 0) is forbidden.
    let mut causal = every.clone();
    causal.remove(&(1, 1, 0));
    assert_eq!(wrc(Release, Acquire), causal);
    assert_eq!(wrc(SeqCst, SeqCst), causal);
}

/// `x = 1; y = 2 || y = 1; x = 2`, then the final values of x and y.
fn two_plus_two_w(order: Ordering) -> BTreeSet<(usize, usize)> {
    outcomes(|| {
        let (_, _, s) = pair(
            move |s| {
                s[0].store(1, order);
                s[1].store(2, order);
            },
            move |s| {
                s[1].store(1, order);
                s[0].store(2, order);
            },
        );
        (s[0].load(Relaxed), s[1].load(Relaxed))
    })
}

#[test]
fn two_plus_two_writes() {
    // Relaxed and release/acquire: without reads nothing orders the threads, and
    // modification order may disagree with both program orders: (1, 1) is allowed.
    let all = set([(1, 1), (1, 2), (2, 1), (2, 2)]);
    assert_eq!(two_plus_two_w(Relaxed), all);
    assert_eq!(two_plus_two_w(Release), all);
    // SeqCst: the four stores are in one order that modification order follows.
    assert_eq!(two_plus_two_w(SeqCst), set([(1, 2), (2, 1), (2, 2)]));
}

/// R: `x = 1; y = 1 || y = 2; r = x`, then the final value of y.
fn r(store: Ordering, load: Ordering) -> BTreeSet<(usize, usize)> {
    outcomes(|| {
        let (_, r, s) = pair(
            move |s| {
                s[0].store(1, store);
                s[1].store(1, store);
            },
            move |s| {
                s[1].store(2, store);
                s[0].load(load)
            },
        );
        (s[1].load(Relaxed), r)
    })
}

#[test]
fn r_test() {
    // Relaxed and release/acquire: y = 2 after y = 1 in modification order says nothing
    // about x (no read, no synchronization), so (2, 0) is allowed.
    let all = set([(1, 0), (1, 1), (2, 0), (2, 1)]);
    assert_eq!(r(Relaxed, Relaxed), all);
    assert_eq!(r(Release, Acquire), all);
    // SeqCst: y = 1 before y = 2 in the total order puts x = 1 before r = x.
    assert_eq!(r(SeqCst, SeqCst), set([(1, 0), (1, 1), (2, 1)]));
}

/// S: `x = 2; y = 1 || r = y; x = 1`, then the final value of x.
fn s_test_outcomes(store: Ordering, load: Ordering) -> BTreeSet<(usize, usize)> {
    outcomes(|| {
        let (_, r, s) = pair(
            move |s| {
                s[0].store(2, Relaxed);
                s[1].store(1, store);
            },
            move |s| {
                let r = s[1].load(load);
                s[0].store(1, Relaxed);
                r
            },
        );
        (r, s[0].load(Relaxed))
    })
}

#[test]
fn s_test() {
    // Relaxed: reading y = 1 orders nothing, so x = 1 may precede x = 2 in modification
    // order: (1, 2) is allowed.
    let all = set([(0, 1), (0, 2), (1, 1), (1, 2)]);
    assert_eq!(s_test_outcomes(Relaxed, Relaxed), all);
    // Release/acquire: x = 2 happens before x = 1, so coherence puts x = 1 last.
    let ordered = set([(0, 1), (0, 2), (1, 1)]);
    assert_eq!(s_test_outcomes(Release, Acquire), ordered);
    assert_eq!(s_test_outcomes(SeqCst, SeqCst), ordered);
}

#[test]
fn coherence_read_read() {
    // CoRR: `x = 1 || r1 = x; r2 = x`: once a thread read 1 it cannot read the older 0.
    let set_ = outcomes(|| {
        let (_, r, _) = pair(
            |s| s[0].store(1, Relaxed),
            |s| (s[0].load(Relaxed), s[0].load(Relaxed)),
        );
        r
    });
    assert_eq!(set_, set([(0, 0), (0, 1), (1, 1)]));
}

#[test]
fn coherence_read_write() {
    // CoRW: `r = x; x = 1 || x = 2`: a store goes after the one its thread read, so reading
    // 2 means x = 1 comes last: (2, 2) is forbidden.
    let set_ = outcomes(|| {
        let (r, _, s) = pair(
            |s| {
                let r = s[0].load(Relaxed);
                s[0].store(1, Relaxed);
                r
            },
            |s| s[0].store(2, Relaxed),
        );
        (r, s[0].load(Relaxed))
    });
    assert_eq!(set_, set([(0, 1), (0, 2), (2, 1)]));
}

#[test]
fn coherence_write_read() {
    // CoWR: `x = 1; r = x || x = 2`: a thread never reads a store older than its own, so r
    // is never 0, and reading 2 means x = 2 comes last.
    let set_ = outcomes(|| {
        let (r, _, s) = pair(
            |s| {
                s[0].store(1, Relaxed);
                s[0].load(Relaxed)
            },
            |s| s[0].store(2, Relaxed),
        );
        (r, s[0].load(Relaxed))
    });
    assert_eq!(set_, set([(1, 1), (1, 2), (2, 2)]));
}

#[test]
fn coherence_write_write() {
    // CoWW: `x = 1; x = 2 || x = 3`: a thread's two stores stay in program order, so 1 is
    // never last.
    let set_ = outcomes(|| {
        let (_, _, s) = pair(
            |s| {
                s[0].store(1, Relaxed);
                s[0].store(2, Relaxed);
            },
            |s| s[0].store(3, Relaxed),
        );
        s[0].load(Relaxed)
    });
    assert_eq!(set_, set([2, 3]));
}
