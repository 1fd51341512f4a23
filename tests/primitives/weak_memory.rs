//! Bugs that only the memory model exposes: a stale read through a relaxed flag, and data
//! races on `cell::UnsafeCell`, under every strategy; their schedules (with the new kinds of
//! decision) replay through JSON to equal failures.

use std::sync::atomic::Ordering::{self, Acquire, Relaxed, Release};

use crate::common;
use crate::common::line_of;
use interleave_test::cell::UnsafeCell;
use interleave_test::sync::atomic::{AtomicBool, AtomicUsize};
use interleave_test::sync::{Arc, Mutex};
use interleave_test::{
    Builder, Failure, FailureKind, Reduction, Report, Schedule, StrategyKind, thread,
};

/// Publishes 42 through `data`, then raises `flag` with `store`; the reader, if it sees the
/// flag with `load`, must see 42.
fn message_passing(store: Ordering, load: Ordering) {
    let s = Arc::new((AtomicUsize::new(0), AtomicBool::new(false)));
    let s2 = Arc::clone(&s);
    let writer = thread::spawn(move || {
        s2.0.store(42, Relaxed);
        s2.1.store(true, store);
    });
    if s.1.load(load) {
        assert_eq!(
            s.0.load(Relaxed),
            42,
            "the flag was up but the payload was stale"
        );
    }
    writer.join().unwrap();
}

fn relaxed_message_passing() {
    message_passing(Relaxed, Relaxed);
}

const STRATEGIES: [(StrategyKind, &str); 3] = [
    (StrategyKind::Random, "random"),
    (StrategyKind::Pct { depth: 3 }, "pct"),
    (
        StrategyKind::Dfs {
            max_preemptions: None,
        },
        "dfs",
    ),
];

fn builder(strategy: StrategyKind) -> Builder {
    Builder::new()
        .strategy(strategy)
        .seed(5)
        .iterations(2000)
        .parallelism(1)
}

/// The failure of `model` under `strategy`, checked to replay through JSON to itself.
fn found(strategy: StrategyKind, name: &str, model: fn()) -> Failure {
    let failure = builder(strategy)
        .check(model)
        .expect_err(&format!("{name} finds the bug (seed 5)"));
    let schedule = Schedule::from_json(&failure.schedule().to_json()).unwrap();
    assert_eq!(&schedule, failure.schedule(), "{name}");
    let replayed = builder(strategy).replay(model, &schedule).unwrap_err();
    assert_eq!(replayed, failure, "{name}: replay gives another failure");
    failure
}

#[test]
fn a_stale_read_through_a_relaxed_flag_is_found_by_every_strategy() {
    for (strategy, name) in STRATEGIES {
        let failure = found(strategy, name, relaxed_message_passing);
        assert_eq!(failure.kind(), FailureKind::Panic, "{name}: {failure}");
        assert!(failure.message().contains("payload was stale"), "{failure}");
        let reads = failure
            .schedule()
            .decisions()
            .iter()
            .filter(|d| d.pick() == Some(("read from", 1)))
            .count();
        assert_eq!(reads, 1, "{name}: one load read the older store\n{failure}");
    }
    // DFS tries a load's oldest store first. Its first execution runs main's flag load
    // before the writer (one store to read); its second reads the flag's old value; its
    // third sees the flag up and reads the stale payload.
    let dfs = builder(STRATEGIES[2].0)
        .check(relaxed_message_passing)
        .unwrap_err();
    assert_eq!(dfs.iteration(), 2, "{dfs}");
}

fn exhausted(model: fn(), reduction: Reduction) -> Report {
    let report = Builder::new()
        .strategy(StrategyKind::Dfs {
            max_preemptions: None,
        })
        .reduction(reduction)
        .check(model)
        .unwrap_or_else(|f| panic!("{f}"));
    assert!(report.exhausted, "{report}");
    report
}

#[test]
fn release_acquire_message_passing_passes_exhaustively() {
    fn model() {
        message_passing(Release, Acquire);
    }
    let reduced = exhausted(model, Reduction::Dpor);
    let unreduced = exhausted(model, Reduction::Off);
    // Unreduced: the writer's start, its two stores and the reader's load interleave
    // with the reader's flag load; reading the flag up forces the payload (one option),
    // reading it down leaves the payload load out.
    assert!(reduced.executions <= unreduced.executions);
    assert_eq!(reduced.executions, 3, "{reduced}");
}

/// Two threads write a shared `UnsafeCell` (the writes are only recorded: dereferencing the
/// pointer would take `unsafe` code, which this crate forbids), one of them under a mutex,
/// the other under it too only if `both_lock`.
fn cell_counter(both_lock: bool) {
    struct Shared {
        lock: Mutex<()>,
        n: UnsafeCell<u32>,
    }
    let s = Arc::new(Shared {
        lock: Mutex::new(()),
        n: UnsafeCell::new(0),
    });
    let s2 = Arc::clone(&s);
    let t = thread::spawn(move || {
        let _g = s2.lock.lock().unwrap();
        s2.n.with_mut(|_| ()); // WRITE_IN_THREAD
    });
    {
        let _g = both_lock.then(|| s.lock.lock().unwrap());
        s.n.with_mut(|_| ()); // WRITE_IN_MAIN
    }
    t.join().unwrap();
    s.n.with(|_| ()); // after the join: ordered after both writes
}

fn unlocked_counter() {
    cell_counter(false);
}

fn locked_counter() {
    cell_counter(true);
}

#[test]
fn an_unsynchronized_cell_is_a_data_race_reporting_both_accesses() {
    for (strategy, name) in STRATEGIES {
        let failure = found(strategy, name, unlocked_counter);
        assert_eq!(failure.kind(), FailureKind::DataRace, "{name}: {failure}");
        let lines: Vec<u32> = failure
            .threads()
            .iter()
            .map(|r| r.location().expect("each access has a location").line())
            .collect();
        let mut expected = vec![
            line_of(include_str!("weak_memory.rs"), "WRITE_IN_THREAD"),
            line_of(include_str!("weak_memory.rs"), "WRITE_IN_MAIN"),
        ];
        let mut sorted = lines.clone();
        sorted.sort_unstable();
        expected.sort_unstable();
        assert_eq!(sorted, expected, "{name}: {failure}");
        assert!(
            failure
                .threads()
                .iter()
                .all(|r| r.state().starts_with("wrote UnsafeCell")),
            "{failure}"
        );
        let later = failure.threads()[1].thread().id();
        assert_eq!(failure.thread().map(|t| t.id()), Some(later), "{failure}");
        assert!(
            failure.message().starts_with("data race on UnsafeCell"),
            "{failure}"
        );
    }
}

#[test]
fn a_locked_cell_passes_exhaustively() {
    let reduced = exhausted(locked_counter, Reduction::Dpor);
    exhausted(locked_counter, Reduction::Off);
    // Which thread takes the lock first: two classes.
    assert_eq!(reduced.executions, 2, "{reduced}");
}

/// `x = 2; y = 1 || if y == 1 { x = 1 }` with relaxed accesses, then the final x: reading
/// y = 1 orders nothing, so x = 1 may go before x = 2 in modification order (a "store at"
/// decision) and x ends as 2, which the model takes for a lost write.
fn relaxed_s_shape() {
    let s = Arc::new((AtomicUsize::new(0), AtomicUsize::new(0)));
    let s2 = Arc::clone(&s);
    let t = thread::spawn(move || {
        s2.0.store(2, Relaxed);
        s2.1.store(1, Relaxed);
    });
    let saw = s.1.load(Relaxed) == 1;
    if saw {
        s.0.store(1, Relaxed);
    }
    t.join().unwrap();
    if saw {
        assert_eq!(s.0.load(Relaxed), 1, "the later write was lost");
    }
}

#[test]
fn a_store_placed_before_an_older_one_is_found_and_replays() {
    for (strategy, name) in STRATEGIES {
        let failure = found(strategy, name, relaxed_s_shape);
        assert!(
            failure.message().contains("later write was lost"),
            "{failure}"
        );
        let placed = failure
            .schedule()
            .decisions()
            .iter()
            .any(|d| d.pick() == Some(("store at", 1)));
        assert!(placed, "{name}: {}", failure.schedule().to_json());
    }
}

/// Two threads each take an `AtomicBool` spinlock with `Relaxed` `compare_exchange` and
/// unlock, and increment a counter under it: the second holder may read a stale count.
fn relaxed_spinlock() {
    let s = Arc::new((AtomicBool::new(false), AtomicUsize::new(0)));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let s = Arc::clone(&s);
            thread::spawn(move || {
                while s.0.compare_exchange(false, true, Relaxed, Relaxed).is_err() {
                    interleave_test::hint::spin_loop();
                }
                let v = s.1.load(Relaxed);
                s.1.store(v + 1, Relaxed);
                s.0.store(false, Relaxed);
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(s.1.load(Relaxed), 2, "an increment was lost");
}

/// A relaxed spinlock's lost increment replays through JSON under every strategy. DFS finds
/// it in its first execution, with or without reduction: a compare-and-exchange tries the
/// newest store first (success), so the second holder takes the lock without spinning
/// (after a spin a thread sees the newest stores) and its load tries the stale count first.
#[test]
fn a_relaxed_spinlock_loses_an_increment_in_the_first_dfs_execution() {
    for (strategy, name) in STRATEGIES {
        let failure = found(strategy, name, relaxed_spinlock);
        assert!(
            failure.message().contains("increment was lost"),
            "{failure}"
        );
    }
    for reduction in [Reduction::Dpor, Reduction::Off] {
        let failure = builder(STRATEGIES[2].0)
            .reduction(reduction)
            .check(relaxed_spinlock)
            .unwrap_err();
        assert_eq!(failure.iteration(), 0, "{reduction:?}: {failure}");
        let exchange = failure
            .schedule()
            .decisions()
            .iter()
            .filter_map(|d| d.pick())
            .find(|(kind, _)| *kind == "exchange reads");
        assert_eq!(exchange, Some(("exchange reads", 0)), "{failure}");
    }
}

/// A report's last decisions take a line each, numbered as in the schedule, a thread's picks
/// (which store a load reads) on the line where it was chosen: the numbers increase strictly.
/// [`relaxed_message_passing`] whose writer reads once more after raising the flag, so
/// that the reader is chosen (a decision) while the writer can still run, and its picks join
/// that line.
fn relaxed_message_passing_then_a_read() {
    let s = Arc::new((AtomicUsize::new(0), AtomicBool::new(false)));
    let s2 = Arc::clone(&s);
    let writer = thread::spawn(move || {
        s2.0.store(42, Relaxed);
        s2.1.store(true, Relaxed);
        s2.0.load(Relaxed);
    });
    if s.1.load(Relaxed) {
        assert_eq!(
            s.0.load(Relaxed),
            42,
            "the flag was up but the payload was stale"
        );
    }
    writer.join().unwrap();
}

#[test]
fn a_report_numbers_its_decisions_with_their_picks_on_one_line() {
    let failure = found(
        StrategyKind::Random,
        "steps",
        relaxed_message_passing_then_a_read,
    );
    let text = failure.to_string();
    let numbers = common::decision_numbers(&text);
    assert!(!numbers.is_empty(), "{text}");
    assert!(
        numbers.windows(2).all(|w| w[0] < w[1]),
        "{numbers:?}\n{text}"
    );
    assert!(*numbers.last().unwrap() <= failure.schedule().decisions().len());
    let picks = failure
        .recent()
        .iter()
        .filter(|s| s.op().contains(" of "))
        .count();
    assert!(picks > 0, "a stale read is a pick: {text}");
    assert!(text.contains("atomic load, read from "), "{text}");
    assert!(
        numbers.len() < failure.recent().len(),
        "picks share lines: {text}"
    );
}
