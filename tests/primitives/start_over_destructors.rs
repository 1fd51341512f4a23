//! Starting over is not a failure: an untracked execution that meets an operation needing
//! the memory model (a relaxed access, an `UnsafeCell` access, a fence) runs on to its end
//! and is discarded; no thread of it is unwound. Unwinding one ran its destructors, and a
//! destructor that checks an invariant the unfinished work had not reached yet (as loom's
//! test `arc::sync_in_drop` does) panicked during that unwinding, and the process aborted
//! ("... unwinding it after the execution failed"), though nothing had failed.
//!
//! Every case runs on both substrates, under random, PCT and DFS (with and without
//! reduction, bounds 0 to 3 and none), and is compared with the same search tracked from
//! its first execution: the counts and the failure must be equal.

use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::time::Duration;

use crate::common::SUBSTRATES;
use interleave_test::cell::UnsafeCell;
use interleave_test::sync::Arc;
use interleave_test::sync::atomic::{AtomicUsize, fence};
use interleave_test::{Builder, Failure, FailureKind, Reduction, Report, StrategyKind, thread};

/// The operation an untracked execution cannot run without the memory model.
#[derive(Clone, Copy, Debug)]
enum Need {
    Relaxed,
    Cell,
    Fence,
}

const NEEDS: [Need; 3] = [Need::Relaxed, Need::Cell, Need::Fence];

/// What every model shares: an atomic, a cell, and the count of finished work.
#[derive(Default)]
struct Shared {
    atomic: AtomicUsize,
    cell: UnsafeCell<()>,
    done: AtomicUsize,
}

impl Shared {
    /// Runs the operation `need` names (the cell access is a read: reads of one cell never
    /// race with each other).
    fn meet(&self, need: Need) {
        match need {
            Need::Relaxed => drop(self.atomic.load(Relaxed)),
            Need::Cell => self.cell.with(|_| ()),
            Need::Fence => fence(SeqCst),
        }
    }
}

/// Panics when dropped unless its thread finished its work: an invariant that holds at the
/// end of the thread, not halfway through it.
struct Unfinished(bool);

impl Drop for Unfinished {
    fn drop(&mut self) {
        assert!(self.0, "the thread's work was not finished");
    }
}

/// [`Unfinished`], silent while its thread unwinds. Models that really fail need it: once
/// the process has left 64 threads behind, teardown unwinds every thread of a failed
/// execution, and an [`Unfinished`] would then abort the process (with the report
/// `tests/abort_report.rs` checks).
struct Polite(bool);

impl Drop for Polite {
    fn drop(&mut self) {
        assert!(
            self.0 || thread::panicking(),
            "the thread's work was not finished"
        );
    }
}

/// Panics when the last reference to it is dropped unless both threads did their work (the
/// shape of loom's `arc::sync_in_drop`).
struct Checked(Shared);

impl Drop for Checked {
    fn drop(&mut self) {
        assert_eq!(self.0.done.load(SeqCst), 2, "the work was not finished");
    }
}

/// The first operation of a model: a `Relaxed` load of a fresh atomic when `track_first`
/// (the very first execution then starts over at its first step, before any decision, and
/// every execution after it is tracked), a `SeqCst` one otherwise, so that both variants
/// take the same steps and decisions.
fn prelude(track_first: bool) {
    let order = if track_first { Relaxed } else { SeqCst };
    AtomicUsize::new(0).load(order);
}

/// Two threads each hold an [`Unfinished`] and a reference to a [`Checked`], and meet
/// `need` halfway through their work. Passes in every execution.
fn guarded_work(need: Need, track_first: bool) {
    prelude(track_first);
    let shared = Arc::new(Checked(Shared::default()));
    let work = move |s: Arc<Checked>| {
        let mut unfinished = Unfinished(false);
        s.0.meet(need);
        s.0.done.fetch_add(1, SeqCst);
        unfinished.0 = true;
    };
    let s2 = Arc::clone(&shared);
    let worker = thread::spawn(move || work(s2));
    work(shared);
    worker.join().unwrap();
}

/// A model with a bug that only a tracked execution shows (or that the operation hides
/// from untracked ones), and a worker holding a [`Polite`] that meets `need`:
/// - `Relaxed`: a message passed with relaxed accesses, read stale;
/// - `Cell`: a data race on the cell;
/// - `Fence`: a lost update between `SeqCst` fences.
fn buggy(need: Need, track_first: bool) {
    prelude(track_first);
    let s = Arc::new(Shared::default());
    let s2 = Arc::clone(&s);
    let worker = thread::spawn(move || {
        let mut unfinished = Polite(false);
        match need {
            Need::Relaxed => {
                s2.done.store(42, Relaxed);
                s2.atomic.store(1, Relaxed);
            }
            Need::Cell => s2.cell.with_mut(|_| ()),
            Need::Fence => increment(&s2),
        }
        unfinished.0 = true;
    });
    match need {
        Need::Relaxed => {
            if s.atomic.load(Relaxed) == 1 {
                assert_eq!(s.done.load(Relaxed), 42, "the payload was stale");
            }
        }
        Need::Cell => s.cell.with(|_| ()),
        Need::Fence => increment(&s),
    }
    worker.join().unwrap();
    if let Need::Fence = need {
        assert_eq!(s.done.load(SeqCst), 2, "an increment was lost");
    }
}

/// A load then a store of the count, with a fence between them.
fn increment(s: &Shared) {
    let v = s.done.load(SeqCst);
    fence(SeqCst);
    s.done.store(v + 1, SeqCst);
}

/// The strategies and searches every case runs under: random, PCT, and DFS with and
/// without reduction, bounded by 0 to 3 preemptions and unbounded.
fn searches() -> Vec<Builder> {
    let mut all = vec![
        Builder::new()
            .strategy(StrategyKind::Random)
            .seed(7)
            .iterations(200),
        Builder::new()
            .strategy(StrategyKind::Pct { depth: 3 })
            .seed(7)
            .iterations(200),
    ];
    for reduction in [Reduction::Off, Reduction::Dpor] {
        for max_preemptions in [Some(0), Some(1), Some(2), Some(3), None] {
            all.push(
                Builder::new()
                    .strategy(StrategyKind::Dfs { max_preemptions })
                    .reduction(reduction),
            );
        }
    }
    all
}

/// What a run reports, apart from its time.
#[derive(Debug, PartialEq)]
struct Counts {
    executions: u64,
    distinct_schedules: u64,
    exhausted: bool,
    redundant: u64,
    max_steps: u64,
    total_steps: u64,
    preemptions: u64,
    context_switches: u64,
}

impl From<Report> for Counts {
    fn from(r: Report) -> Self {
        Counts {
            executions: r.executions,
            distinct_schedules: r.distinct_schedules,
            exhausted: r.exhausted,
            redundant: r.redundant,
            max_steps: r.max_steps,
            total_steps: r.total_steps,
            preemptions: r.preemptions,
            context_switches: r.context_switches,
        }
    }
}

/// Runs `model` under `builder` starting untracked, and again tracked from its first
/// execution, on both substrates; asserts the results are equal and returns them, with a
/// description of the run for messages.
fn both_ways(
    builder: &Builder,
    model: fn(Need, bool),
    need: Need,
) -> Vec<(String, Result<Counts, Failure>)> {
    SUBSTRATES
        .into_iter()
        .map(|substrate| {
            let b = builder.clone().substrate(substrate);
            let what = format!(
                "{need:?}, {:?}, {:?}, {substrate:?}",
                b.strategy, b.reduction
            );
            let late = b.check(|| model(need, false)).map(Counts::from);
            let tracked = b.check(|| model(need, true)).map(Counts::from);
            assert_eq!(late, tracked, "{what}: starting over changed the result");
            (what, late)
        })
        .collect()
}

#[test]
fn starting_over_runs_no_destructor_halfway_and_counts_as_the_tracked_search() {
    for need in NEEDS {
        for builder in searches() {
            for (what, result) in both_ways(&builder, guarded_work, need) {
                let counts = result.unwrap_or_else(|f| panic!("{what}: {f}"));
                let dfs = matches!(builder.strategy, StrategyKind::Dfs { .. });
                assert_eq!(counts.exhausted, dfs, "{what}: {counts:?}");
                if !dfs {
                    assert_eq!(counts.executions, 200, "{what}");
                }
            }
        }
    }
}

#[test]
fn a_bug_behind_the_operation_is_the_tracked_search_s_failure() {
    for need in NEEDS {
        let expected = match need {
            Need::Relaxed => (FailureKind::Panic, "the payload was stale"),
            Need::Cell => (FailureKind::DataRace, "data race"),
            Need::Fence => (FailureKind::Panic, "an increment was lost"),
        };
        for builder in searches() {
            let bound = match builder.strategy {
                StrategyKind::Dfs { max_preemptions } => max_preemptions,
                _ => None,
            };
            for (what, result) in both_ways(&builder, buggy, need) {
                match result {
                    Err(f) => {
                        assert_eq!(f.kind(), expected.0, "{what}: {f}");
                        assert!(f.message().contains(expected.1), "{what}: {f}");
                    }
                    // Only a search bounded to no preemption may miss it: every bug here
                    // needs the worker to run between two operations of the main thread.
                    Ok(counts) => assert_eq!(bound, Some(0), "{what}: passed, {counts:?}"),
                }
            }
        }
    }
}

/// Thread 0 sleeps while its worker stores 1, then loads the atomic with `Relaxed`: the
/// untracked execution starts over there, and, reading the newest store, then panics
/// (`livelock`: spins for ever instead). The tracked DFS tries the load's oldest store first
/// and passes.
fn fails_only_untracked(livelock: bool) {
    let a = Arc::new(AtomicUsize::new(0));
    let a2 = Arc::clone(&a);
    let _worker = thread::spawn(move || a2.store(1, SeqCst));
    thread::sleep(Duration::from_millis(1));
    if a.load(Relaxed) == 1 {
        assert!(livelock, "the newest store was read");
        loop {
            thread::yield_now();
        }
    }
}

#[test]
fn the_failure_of_a_discarded_execution_is_never_reported() {
    // One execution of each search: the discarded untracked one fails, the tracked one,
    // which reads the stale store, passes; only the tracked one is counted.
    for substrate in SUBSTRATES {
        for reduction in [Reduction::Off, Reduction::Dpor] {
            for livelock in [false, true] {
                let report = Builder::new()
                    .strategy(StrategyKind::Dfs {
                        max_preemptions: None,
                    })
                    .reduction(reduction)
                    .substrate(substrate)
                    .max_steps(300)
                    .iterations(1)
                    .check(|| fails_only_untracked(livelock))
                    .unwrap_or_else(|f| panic!("{substrate:?}, {reduction:?}: {f}"));
                assert_eq!(report.executions, 1, "{substrate:?}, {reduction:?}");
                assert!(!report.exhausted, "{substrate:?}, {reduction:?}");
            }
        }
    }
}

/// loom's `arc::sync_in_drop`, with a cell access instead of a raw write: the spawned
/// thread's cell access starts the execution over while it holds a reference whose last
/// drop checks that its work was done.
#[test]
fn loom_sync_in_drop_passes() {
    struct State {
        data: UnsafeCell<()>,
        written: AtomicUsize,
    }
    impl Drop for State {
        fn drop(&mut self) {
            self.data.with(|_| ());
            assert_eq!(self.written.load(SeqCst), 1, "the data was not written");
        }
    }
    for substrate in SUBSTRATES {
        for builder in searches() {
            let result = builder.clone().substrate(substrate).check(|| {
                let num = Arc::new(State {
                    data: UnsafeCell::new(()),
                    written: AtomicUsize::new(0),
                });
                let num2 = Arc::clone(&num);
                thread::spawn(move || {
                    num2.data.with_mut(|_| ());
                    num2.written.store(1, SeqCst);
                    drop(num2);
                });
                drop(num);
            });
            if let Err(f) = result {
                panic!("{substrate:?}, {:?}: {f}", builder.strategy);
            }
        }
    }
}
