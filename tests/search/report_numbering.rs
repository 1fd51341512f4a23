//! Every kind of failure report, from every strategy that can find it, numbers its last
//! decisions as the schedule does: strictly increasing, never past the schedule's length,
//! the last one the schedule's last decision (or a pick merged onto its line). The golden
//! texts (`report_golden.rs`) pin three reports word for word; this pins the numbering of
//! all the others.

use crate::common;

use std::sync::Arc;

use interleave_test::cell::UnsafeCell;
use interleave_test::sync::Mutex;
use interleave_test::sync::atomic::{AtomicUsize, Ordering};
use interleave_test::{Builder, Failure, FailureKind, Substrate, thread};

use crate::common::{abba, decision_numbers, each_dfs, each_sampler, racy_counter};

/// Checks the numbering of `failure`'s report, found by `how`; how many decisions it lists.
/// (A failure that every schedule reaches is stored with the decisions shortened away.)
fn numbered_as_the_schedule(failure: &Failure, kind: FailureKind, how: &str) -> usize {
    assert_eq!(failure.kind(), kind, "{how}: {failure}");
    let report = failure.to_string();
    let numbers = decision_numbers(&report);
    let total = failure.schedule().decisions().len();
    if total == 0 {
        assert!(numbers.is_empty(), "{how}: {report}");
        return 0;
    }
    assert!(!numbers.is_empty(), "{how}: no decisions listed: {report}");
    assert!(
        numbers.windows(2).all(|w| w[0] < w[1]),
        "{how}: numbers repeat or go back: {numbers:?}\n{report}"
    );
    assert!(numbers[0] >= 1, "{how}: {report}");
    assert!(*numbers.last().unwrap() <= total, "{how}: {report}");
    assert!(report.contains(&format!("(of {total})")), "{how}: {report}");
    // The last line is the last decision, or the decision its picks joined.
    let last = failure.schedule().decisions()[numbers.last().unwrap() - 1..].to_vec();
    let picks_after = last.iter().skip(1).all(|d| d.pick().is_some());
    assert!(
        picks_after,
        "{how}: decisions after the last line: {report}"
    );
    numbers.len()
}

/// Runs `model` under every DFS configuration that allows a preemption and both samplers,
/// expecting `kind`; some of the reports must list decisions.
fn everywhere(model: fn(), kind: FailureKind, setup: fn(Builder) -> Builder) {
    let mut listed = 0;
    each_dfs(|builder, how, bound| {
        if bound == Some(0) {
            return; // most of these bugs take a preemption
        }
        let failure = setup(builder).check(model).unwrap_err();
        listed += numbered_as_the_schedule(&failure, kind, &how);
    });
    each_sampler(5, |builder, how| {
        let failure = setup(builder).check(model).unwrap_err();
        listed += numbered_as_the_schedule(&failure, kind, &how);
    });
    assert!(listed > 0, "{kind:?}: no report listed a decision");
}

fn as_is(builder: Builder) -> Builder {
    builder
}

#[test]
fn panics_deadlocks_races_and_leaks() {
    everywhere(racy_counter, FailureKind::Panic, as_is);
    everywhere(abba, FailureKind::Deadlock, as_is);
    everywhere(unlocked_write, FailureKind::DataRace, as_is);
    everywhere(cycle, FailureKind::Leak, as_is);
    everywhere(relaxed_message, FailureKind::Panic, as_is);
}

#[test]
fn livelocks() {
    everywhere(spin_on_each_other, FailureKind::Livelock, |b| {
        b.max_steps(300)
    });
}

#[test]
fn misuse_overflow_divergence_and_nondeterminism() {
    static SHARED: Mutex<u32> = Mutex::new(0);
    let failure = Builder::new()
        .seed(1)
        .parallelism(1)
        .check(|| {
            let t = thread::spawn(|| {});
            *SHARED.lock().unwrap() += 1;
            t.join().unwrap();
        })
        .unwrap_err();
    let listed = numbered_as_the_schedule(&failure, FailureKind::Misuse, "misuse");
    assert_eq!(listed, 0, "misuse does not depend on the schedule");

    let failure = Builder::new()
        .substrate(Substrate::Coroutines)
        .seed(1)
        .check(overflow)
        .unwrap_err();
    assert!(numbered_as_the_schedule(&failure, FailureKind::StackOverflow, "overflow") > 0);

    let found = Builder::new().seed(1).check(racy_counter).unwrap_err();
    let failure = Builder::new()
        .replay(loads_twice, found.schedule())
        .unwrap_err();
    assert!(numbered_as_the_schedule(&failure, FailureKind::Divergence, "divergence") > 0);

    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let failure = common::dfs(Substrate::Coroutines, interleave_test::Reduction::Off, None)
        .check(|| {
            let odd = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 2 == 1;
            let x = Arc::new(AtomicUsize::new(0));
            let x2 = Arc::clone(&x);
            let first = thread::spawn(move || x2.store(1, Ordering::SeqCst));
            x.store(2, Ordering::SeqCst);
            if odd {
                thread::spawn(|| {}).join().unwrap();
            }
            x.store(3, Ordering::SeqCst);
            first.join().unwrap();
        })
        .unwrap_err();
    assert!(numbered_as_the_schedule(&failure, FailureKind::Nondeterminism, "nondeterminism") > 0);
}

/// A cell published with a `Relaxed` flag: reading it after seeing the flag is a race, in
/// the schedules where the flag is seen.
fn unlocked_write() {
    let shared = Arc::new((AtomicUsize::new(0), UnsafeCell::new(0_u32)));
    let other = Arc::clone(&shared);
    let t = thread::spawn(move || {
        other.1.with_mut(|_| ()); // the access is what is checked
        other.0.store(1, Ordering::Relaxed);
    });
    if shared.0.load(Ordering::Relaxed) == 1 {
        shared.1.with(|_| ());
    }
    t.join().unwrap();
}

/// Two nodes that point at each other through the modelled `Arc`, in the schedules where the
/// thread sees the flag.
fn cycle() {
    struct Node(Mutex<Option<interleave_test::sync::Arc<Node>>>);
    let a = interleave_test::sync::Arc::new(Node(Mutex::new(None)));
    let b = interleave_test::sync::Arc::new(Node(Mutex::new(Some(a.clone()))));
    let flag = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&flag);
    let t = thread::spawn(move || {
        if seen.load(Ordering::SeqCst) == 1 {
            *a.0.lock().unwrap() = Some(b);
        }
    });
    flag.store(1, Ordering::SeqCst);
    t.join().unwrap();
}

/// `two_increments` with one more load in each thread: the same first decisions, then other
/// operations.
fn loads_twice() {
    let n = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let n = Arc::clone(&n);
            thread::spawn(move || {
                let v = n.load(Ordering::SeqCst);
                let w = n.load(Ordering::SeqCst);
                n.store(v.max(w) + 1, Ordering::SeqCst);
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
}

/// A flag published with `Relaxed`: the reader may see it and not the data (picks of which
/// store a load reads join the decisions).
fn relaxed_message() {
    let s = Arc::new((AtomicUsize::new(0), AtomicUsize::new(0)));
    let s2 = Arc::clone(&s);
    let t = thread::spawn(move || {
        s2.0.store(42, Ordering::Relaxed);
        s2.1.store(1, Ordering::Relaxed);
    });
    if s.1.load(Ordering::Relaxed) == 1 {
        assert_eq!(s.0.load(Ordering::Relaxed), 42, "flag seen before the data");
    }
    t.join().unwrap();
}

/// Each thread waits for the other to move first.
fn spin_on_each_other() {
    let flags = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
    let spinners: Vec<_> = (0..2)
        .map(|i| {
            let flags = Arc::clone(&flags);
            thread::spawn(move || {
                while flags[1 - i].load(Ordering::SeqCst) == 0 {
                    thread::yield_now();
                }
                flags[i].store(1, Ordering::SeqCst);
            })
        })
        .collect();
    for s in spinners {
        s.join().unwrap();
    }
}

/// Overflows its stack in the schedules where the other thread has run first.
fn overflow() {
    fn recurse(depth: u32) -> u64 {
        let frame = std::hint::black_box([u64::from(depth); 128]);
        if depth == u32::MAX {
            return 0;
        }
        std::hint::black_box(recurse(depth + 1)) + frame[7]
    }
    let flag = Arc::new(AtomicUsize::new(0));
    let other = Arc::clone(&flag);
    let t = thread::spawn(move || other.store(1, Ordering::SeqCst));
    if flag.load(Ordering::SeqCst) == 1 {
        recurse(0);
    }
    t.join().unwrap();
}
