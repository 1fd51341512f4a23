//! Outcome sets: the results collected over an exhaustive DFS run equal exactly the set that
//! sequential consistency allows, no more (a forbidden outcome) and no less (a missed
//! interleaving), with partial-order reduction and without, bounded or not.

use std::collections::BTreeSet;
use std::fmt::Debug;
use std::sync::Mutex as StdMutex;

use interleave_test::sync::Arc;
use interleave_test::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use interleave_test::{Builder, Reduction, StrategyKind, thread};

/// Runs `model` over every schedule (DFS, no bound) and returns the set of values it
/// reported. The same set must come out with reduction and without, and, for preemption
/// bounds 0 to 2, the bounded sets with and without reduction must be equal too.
fn outcomes<T: Ord + Send + Debug>(model: impl Fn(&StdMutex<BTreeSet<T>>) + Sync) -> BTreeSet<T> {
    let run = |bound: Option<u32>, reduction: Reduction| {
        let seen = StdMutex::new(BTreeSet::new());
        let report = Builder::new()
            .strategy(StrategyKind::Dfs {
                max_preemptions: bound,
            })
            .reduction(reduction)
            .check(|| model(&seen))
            .unwrap();
        assert!(report.exhausted, "{report}");
        seen.into_inner().unwrap()
    };
    for bound in [Some(0), Some(1), Some(2), None] {
        let reduced = run(bound, Reduction::Dpor);
        let unreduced = run(bound, Reduction::Off);
        assert_eq!(
            reduced, unreduced,
            "bound {bound:?}: reduction lost outcomes"
        );
        if bound.is_none() {
            return reduced;
        }
    }
    unreachable!("the last bound is none")
}

/// Store buffering: each thread stores to its own variable, then loads the other's. Under
/// sequential consistency one of the stores comes first in the single total order, so at
/// least one load sees 1: (0, 0) is forbidden, the other three are all reachable.
#[test]
fn store_buffering_gives_exactly_the_sequentially_consistent_outcomes() {
    let set = outcomes(|seen| {
        let (x, y) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (x2, y2) = (Arc::clone(&x), Arc::clone(&y));
        let a = thread::spawn(move || {
            x2.store(1, SeqCst);
            y2.load(SeqCst)
        });
        let b = thread::spawn(move || {
            y.store(1, SeqCst);
            x.load(SeqCst)
        });
        let r1 = a.join().unwrap();
        let r2 = b.join().unwrap();
        seen.lock().unwrap().insert((r1, r2));
    });
    assert_eq!(set, BTreeSet::from([(0, 1), (1, 0), (1, 1)]));
}

/// Two threads each load the counter and store the value plus one: both loads before both
/// stores loses an update (1); one increment entirely before the other gives 2.
#[test]
fn racy_counter_ends_at_exactly_one_or_two() {
    let set = outcomes(|seen| {
        let n = Arc::new(AtomicUsize::new(0));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let n = Arc::clone(&n);
                thread::spawn(move || {
                    let v = n.load(SeqCst);
                    n.store(v + 1, SeqCst);
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        seen.lock().unwrap().insert(n.load(SeqCst));
    });
    assert_eq!(set, BTreeSet::from([1, 2]));
}

/// Message passing: the writer stores the data, then the flag; the reader loads the flag,
/// then the data. Seeing the flag means the data store came earlier in the total order, so
/// (1, 0) is forbidden; the other three are all reachable.
#[test]
fn message_passing_never_shows_the_flag_without_the_data() {
    let set = outcomes(|seen| {
        let (data, flag) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (data2, flag2) = (Arc::clone(&data), Arc::clone(&flag));
        let writer = thread::spawn(move || {
            data2.store(1, SeqCst);
            flag2.store(1, SeqCst);
        });
        let reader = thread::spawn(move || {
            let f = flag.load(SeqCst);
            (f, data.load(SeqCst))
        });
        writer.join().unwrap();
        let observed = reader.join().unwrap();
        seen.lock().unwrap().insert(observed);
    });
    assert_eq!(set, BTreeSet::from([(0, 0), (0, 1), (1, 1)]));
}
