//! The substrate changes speed, not results: for the same seed, both substrates run the same
//! schedules and find the same failures, and a schedule found on one replays on the other.

use crate::common::{abba, lost_wakeup, racy_counter};
use interleave_test::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use interleave_test::sync::{Arc, Mutex};
use interleave_test::{Builder, Report, StrategyKind, Substrate, thread};

const STRATEGIES: [StrategyKind; 3] = [
    StrategyKind::Random,
    StrategyKind::Pct { depth: 3 },
    StrategyKind::Dfs {
        max_preemptions: Some(2),
    },
];

fn builder(substrate: Substrate, strategy: StrategyKind) -> Builder {
    Builder::new()
        .substrate(substrate)
        .strategy(strategy)
        .seed(21)
        .iterations(2000)
}

#[test]
fn the_same_seed_finds_the_same_failure_on_both_substrates() {
    for (name, model) in [
        ("racy counter", racy_counter as fn()),
        ("abba", abba),
        ("lost wakeup", lost_wakeup),
    ] {
        for strategy in STRATEGIES {
            let on = |substrate| {
                builder(substrate, strategy)
                    .check(model)
                    .expect_err("the model is buggy")
            };
            let coroutines = on(Substrate::Coroutines);
            let threads = on(Substrate::Threads);
            assert_eq!(coroutines, threads, "{name} under {strategy:?}");
            assert_eq!(coroutines.substrate(), Substrate::Coroutines);
            assert_eq!(threads.substrate(), Substrate::Threads);
            assert!(threads.to_string().ends_with("on OS threads"), "{threads}");
            // Replayed on the other substrate, each gives the same failure again.
            let replayed = Builder::new()
                .substrate(Substrate::Threads)
                .replay(model, coroutines.schedule())
                .expect_err("replays the failure");
            assert_eq!(replayed, coroutines, "{name} under {strategy:?}, replayed");
        }
    }
}

/// Three threads take a lock twice each, with an atomic read between: passes.
fn three_lockers() {
    let m = Arc::new(Mutex::new(0));
    let seen = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..3)
        .map(|_| {
            let (m, seen) = (Arc::clone(&m), Arc::clone(&seen));
            thread::spawn(move || {
                for _ in 0..2 {
                    *m.lock().unwrap() += 1;
                    seen.fetch_add(1, SeqCst);
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*m.lock().unwrap(), 6);
}

/// What must not depend on the substrate in a report.
fn counts(r: &Report) -> (u64, u64, bool, u64, u64, u64, u64) {
    (
        r.executions,
        r.distinct_schedules,
        r.exhausted,
        r.max_steps,
        r.total_steps,
        r.preemptions,
        r.context_switches,
    )
}

#[test]
fn a_passing_model_runs_the_same_schedules_on_both_substrates() {
    for strategy in STRATEGIES {
        let on = |substrate| {
            builder(substrate, strategy)
                .iterations(300)
                .check(three_lockers)
                .unwrap()
        };
        let (coroutines, threads) = (on(Substrate::Coroutines), on(Substrate::Threads));
        assert_eq!(counts(&coroutines), counts(&threads), "{strategy:?}");
        assert_eq!(coroutines.substrate, Substrate::Coroutines);
        assert_eq!(threads.substrate, Substrate::Threads);
        assert!(
            coroutines.to_string().ends_with("on coroutines"),
            "{coroutines}"
        );
        assert!(threads.to_string().ends_with("on OS threads"), "{threads}");
    }
}
