//! `Report::distinct_schedules`: exact for DFS (every execution is a schedule of its own),
//! exact for random and PCT up to 4096 distinct schedules, and past that an estimate in
//! fixed memory, marked as such ("≈" in the report's line). Each model records the order in
//! which its operations took effect, so the test knows the true count.

use std::collections::HashSet;
use std::sync::Mutex as StdMutex;

use interleave_test::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use interleave_test::{Builder, Reduction, Report, StrategyKind, Substrate, thread};

use crate::common::SUBSTRATES;
// Plumbing: the modelled `Arc`'s drops are switch points of their own (`tests/arc_drops.rs`);
// the counts here are of the primitives the models share.
use std::sync::Arc;

/// Main and two spawned threads each add to a counter `ops` times. Every operation that
/// can be a decision's outcome (a thread's start, a spawn, an add, a join) is followed at
/// once, with no switch point in between, by an entry in the execution's log naming the
/// thread: an execution's log is then the order in which threads were chosen, and two
/// executions have the same log exactly when they have the same schedule. The log goes to
/// `logs` at the end.
fn three_adders(ops: usize, logs: &StdMutex<HashSet<Vec<u8>>>) {
    let log = std::sync::Arc::new(StdMutex::new(Vec::new()));
    let n = Arc::new(AtomicUsize::new(0));
    let spawn = |id: u8| {
        let (mine, n) = (log.clone(), Arc::clone(&n));
        let handle = thread::spawn(move || {
            mine.lock().unwrap().push(id); // its start
            for _ in 0..ops {
                n.fetch_add(1, SeqCst);
                mine.lock().unwrap().push(id);
            }
        });
        log.lock().unwrap().push(0); // main's spawn
        handle
    };
    let handles = [spawn(1), spawn(2)];
    for _ in 0..ops {
        n.fetch_add(1, SeqCst);
        log.lock().unwrap().push(0);
    }
    for h in handles {
        h.join().unwrap();
        log.lock().unwrap().push(0);
    }
    let log = log.lock().unwrap().clone();
    logs.lock().unwrap().insert(log);
}

/// Runs `iterations` random executions of [`three_adders`] (5 additions each) with `seed`; the report and the
/// true number of distinct schedules.
fn random_run(substrate: Substrate, seed: u64, iterations: u64) -> (Report, u64) {
    let logs = StdMutex::new(HashSet::new());
    let report = Builder::new()
        .substrate(substrate)
        .seed(seed)
        .iterations(iterations)
        .check(|| three_adders(5, &logs))
        .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
    let truth = logs.into_inner().unwrap().len() as u64;
    (report, truth)
}

#[test]
fn random_counts_are_exact_up_to_4096_distinct_schedules() {
    for substrate in SUBSTRATES {
        let (report, truth) = random_run(substrate, 5, 3000);
        // Most of the 3000 executions follow a schedule of their own.
        assert!(truth > 2000 && truth <= 3000, "{substrate:?}: {truth}");
        assert_eq!(report.distinct_schedules, truth, "{substrate:?}: {report}");
        assert!(report.distinct_schedules_exact, "{substrate:?}: {report}");
        let line = report.to_string();
        assert!(
            line.contains(&format!(", {truth} distinct schedules;")),
            "{line}"
        );
    }
}

/// Past 4096 the count is a HyperLogLog estimate (standard error 0.8%): within 3% of the
/// truth (about 4 standard errors; the seed fixes the figure), and said to be an estimate.
#[test]
fn random_counts_past_4096_are_estimates_within_three_percent() {
    for substrate in SUBSTRATES {
        let (report, truth) = random_run(substrate, 6, 12_000);
        assert!(truth > 8000, "{substrate:?}: {truth}");
        assert!(!report.distinct_schedules_exact, "{substrate:?}: {report}");
        let estimate = report.distinct_schedules;
        let error = estimate.abs_diff(truth) as f64 / truth as f64;
        assert!(
            error < 0.03,
            "{substrate:?}: estimated {estimate}, truly {truth} ({error:.4})"
        );
        let line = report.to_string();
        assert!(
            line.contains(&format!(", ≈{estimate} distinct schedules;")),
            "{line}"
        );
    }
}

/// The counts do not depend on how many executions run at once (each driver counts its
/// own and the counts are merged).
#[test]
fn estimates_do_not_depend_on_the_parallelism() {
    let run = |parallelism| {
        Builder::new()
            .seed(7)
            .iterations(9000)
            .parallelism(parallelism)
            .check(|| three_adders(5, &StdMutex::new(HashSet::new())))
            .unwrap()
    };
    let (one, two) = (run(1), run(2));
    assert!(!one.distinct_schedules_exact, "{one}");
    assert_eq!(
        (one.distinct_schedules, one.distinct_schedules_exact),
        (two.distinct_schedules, two.distinct_schedules_exact)
    );
}

/// A single thread retries `compare_exchange_weak` until it succeeds: every decision is a
/// pick (fail spuriously or not), none a choice of thread. Schedules that differ only in
/// their picks are distinct schedules.
#[test]
fn schedules_that_differ_only_in_picks_are_distinct() {
    for substrate in SUBSTRATES {
        let failures = StdMutex::new(HashSet::new());
        let report = Builder::new()
            .substrate(substrate)
            .seed(8)
            .iterations(300)
            .check(|| {
                let a = AtomicUsize::new(0);
                let mut failed = 0;
                while a.compare_exchange_weak(0, 1, SeqCst, SeqCst).is_err() {
                    failed += 1;
                }
                failures.lock().unwrap().insert(failed);
            })
            .unwrap();
        // One schedule per number of spurious failures before the success.
        let truth = failures.into_inner().unwrap().len() as u64;
        assert!(truth >= 4, "{substrate:?}: {truth}");
        assert_eq!(report.distinct_schedules, truth, "{substrate:?}: {report}");
        assert!(report.distinct_schedules_exact);
    }
}

/// Under DFS every execution follows a schedule no earlier one did, so the count is the
/// number of executions, exact whatever it is. Without reduction that is every schedule
/// once: as many as the logs tell apart.
#[test]
fn dfs_counts_every_execution() {
    for substrate in SUBSTRATES {
        let logs = StdMutex::new(HashSet::new());
        let report = Builder::new()
            .substrate(substrate)
            .strategy(StrategyKind::Dfs {
                max_preemptions: None,
            })
            .reduction(Reduction::Off)
            .check(|| three_adders(1, &logs))
            .unwrap();
        assert!(report.exhausted, "{report}");
        let truth = logs.into_inner().unwrap().len() as u64;
        assert!(truth > 10, "{substrate:?}: {truth}");
        assert_eq!(report.executions, truth, "{substrate:?}: {report}");
        assert_eq!(report.distinct_schedules, truth, "{substrate:?}: {report}");
        assert!(report.distinct_schedules_exact, "{report}");
    }
}
