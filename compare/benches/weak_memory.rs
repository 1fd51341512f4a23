//! Weak-memory litmus models under interleave-test's RC11 atomics and under loom, side by
//! side on identical models, in one process. Two measurements, each printed as a markdown
//! table:
//!
//! 1. **Executions to exhaust** seven passing models: loom's `Builder::check` (no bound),
//!    then our DFS with partial-order reduction (the default) and without it
//!    (`Reduction::Off`, capped at 500,000 executions), with the wall time of each and our
//!    executions and time as a ratio of loom's.
//! 2. **Executions to the first failure** of four buggy models, each a missing
//!    `Acquire`/`Release`: the same three searches, each stopped at its first failing
//!    execution (ours: `failure.iteration() + 1`), and whether it found the bug at all.
//!
//! | model | threads | what it does |
//! |---|---|---|
//! | `mp_rel_acq` | 1 + main | a writer stores a payload `Relaxed`, then a flag `Release`; main loads the flag `Acquire` and, if set, asserts the payload |
//! | `sb_relaxed` | 1 + main | store buffering: each thread stores 1 to its own variable and loads the other's, all `Relaxed`; no assertion |
//! | `lb_relaxed` | 1 + main | load buffering: each thread loads the other's variable, then stores 1 to its own, all `Relaxed`; no assertion |
//! | `wrc_rel_acq` | 2 + main | write-to-read causality: one thread stores `x` `Release`; a second, on seeing it (`Acquire`), stores `y` `Release`; main, on seeing `y` (`Acquire`), asserts `x` |
//! | `iriw_relaxed` | 3 + main | independent reads of independent writes: two writers store `x` and `y`, two readers (one spawned, the other main) load them in opposite orders, all `Relaxed`; no assertion |
//! | `fetch_add_relaxed` | 2 + main | two threads `fetch_add(1, Relaxed)`; main asserts 2 after joining both |
//! | `spinlock_acq_rel` | 2 + main | an `AtomicBool` spinlock (`compare_exchange` `Acquire`, `store` `Release`) around a load-then-store increment of a `Relaxed` counter; main asserts 2 |
//! | `mp_relaxed` (bug) | 1 + main | `mp_rel_acq` with the flag stored and loaded `Relaxed`: the payload can be stale |
//! | `sb_relaxed_assert` (bug) | 1 + main | `sb_relaxed` asserting that not both loads read 0, which `Relaxed` allows |
//! | `spinlock_relaxed` (bug) | 2 + main | `spinlock_acq_rel` with `Relaxed` lock and unlock: the second holder can read a stale counter and lose an increment |
//! | `dcl_relaxed_flag` (bug) | 1 + main | double-checked initialisation under a `Mutex` whose flag is stored `Relaxed` after the data: a fast-path reader can see the flag but not the data |
//!
//! The models are written once in the `weak_models!` macro and expanded for
//! `interleave_test` and for `loom`. loom does not report how many executions it ran, so its
//! model closure is wrapped in one that first increments a `std` atomic counter; it panics at
//! the first failure, so the count then includes the failing execution.
//!
//! Run it with `cargo bench --bench weak_memory` (under a minute after the build, most of it
//! in loom's search of `iriw_relaxed`, about 190,000 executions, and in our unreduced one).
//! `INTERLEAVE_BENCH_QUICK=1` caps the unreduced searches at 2,000 executions and leaves out
//! loom's search of `iriw_relaxed` (seconds). `iriw_relaxed` has main as its second reader:
//! with both readers spawned, loom's search runs for more than 15 minutes. Panic messages of
//! model threads are not printed: the panic hook is a no-op while loom runs, and ours
//! records them silently. The core count and the load average are printed at the end. The
//! models are in `benches/models/weak.rs`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

use interleave_test::{Builder, FailureKind, Reduction, StrategyKind};

#[path = "support/mod.rs"]
#[allow(dead_code, reason = "this bench uses some of the shared helpers")]
mod common;
use common::{as_u64, count_cell, print_table, quietly, timed};

#[macro_use]
#[path = "models/weak.rs"]
mod weak;

weak_models!(
    /// The models over interleave-test's RC11 atomics.
    ours,
    interleave_test
);
weak_models!(
    /// The same models over loom's atomics.
    in_loom,
    loom
);

/// A model as written for each tool.
struct Model {
    /// The name in the tables.
    name: &'static str,
    /// The model over `interleave_test`.
    ours: fn(),
    /// The model over `loom`.
    loom: fn(),
    /// Whether loom's search of it runs in quick mode.
    loom_in_quick: bool,
    /// For a buggy model, a piece of the panic message its failure must carry.
    bug: Option<&'static str>,
}

/// The passing models of measurement 1.
const PASSING: [Model; 7] = [
    Model {
        name: "mp_rel_acq",
        ours: ours::mp_rel_acq,
        loom: in_loom::mp_rel_acq,
        loom_in_quick: true,
        bug: None,
    },
    Model {
        name: "sb_relaxed",
        ours: ours::sb_relaxed,
        loom: in_loom::sb_relaxed,
        loom_in_quick: true,
        bug: None,
    },
    Model {
        name: "lb_relaxed",
        ours: ours::lb_relaxed,
        loom: in_loom::lb_relaxed,
        loom_in_quick: true,
        bug: None,
    },
    Model {
        name: "wrc_rel_acq",
        ours: ours::wrc_rel_acq,
        loom: in_loom::wrc_rel_acq,
        loom_in_quick: true,
        bug: None,
    },
    Model {
        name: "iriw_relaxed",
        ours: ours::iriw_relaxed,
        loom: in_loom::iriw_relaxed,
        loom_in_quick: false,
        bug: None,
    },
    Model {
        name: "fetch_add_relaxed",
        ours: ours::fetch_add_relaxed,
        loom: in_loom::fetch_add_relaxed,
        loom_in_quick: true,
        bug: None,
    },
    Model {
        name: "spinlock_acq_rel",
        ours: ours::spinlock_acq_rel,
        loom: in_loom::spinlock_acq_rel,
        loom_in_quick: true,
        bug: None,
    },
];

/// The buggy models of measurement 2.
const BUGGY: [Model; 4] = [
    Model {
        name: "mp_relaxed",
        ours: ours::mp_relaxed,
        loom: in_loom::mp_relaxed,
        loom_in_quick: true,
        bug: Some("stale payload"),
    },
    Model {
        name: "sb_relaxed_assert",
        ours: ours::sb_relaxed_assert,
        loom: in_loom::sb_relaxed_assert,
        loom_in_quick: true,
        bug: Some("both loads read 0"),
    },
    Model {
        name: "spinlock_relaxed",
        ours: ours::spinlock_relaxed,
        loom: in_loom::spinlock_relaxed,
        loom_in_quick: true,
        bug: Some("an increment was lost"),
    },
    Model {
        name: "dcl_relaxed_flag",
        ours: ours::dcl_relaxed_flag,
        loom: in_loom::dcl_relaxed_flag,
        loom_in_quick: true,
        bug: Some("initialised value not seen"),
    },
];

/// Counts of one run mode (full or quick).
#[derive(Clone, Copy, Debug)]
struct Plan {
    /// Whether `INTERLEAVE_BENCH_QUICK` asked for a smoke run.
    quick: bool,
    /// Executions after which our unreduced DFS stops if it has not finished.
    unreduced_cap: u64,
}

impl Plan {
    /// The plan `INTERLEAVE_BENCH_QUICK` asks for.
    fn from_env() -> Plan {
        let quick = common::quick_mode();
        Plan {
            quick,
            unreduced_cap: if quick { 2_000 } else { 500_000 },
        }
    }
}

/// How one search ended: executions run, and whether it found a failure (`Some` with the
/// failure's message) or, when it did not, whether it exhausted the model.
#[derive(Debug)]
struct Outcome {
    /// Executions run, the failing one included.
    executions: u64,
    /// The panic message of the first failure, if there was one.
    failure: Option<String>,
    /// Whether the search ran to its end without a failure (always true of loom's).
    exhausted: bool,
}

/// The text of a panic payload.
fn message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string payload".to_owned())
}

/// loom's exhaustive search (`Builder::check`, no bound), stopped by its first failure.
fn loom_search(model: fn()) -> Outcome {
    let count = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&count);
    let run = quietly(move || {
        loom::model::Builder::new().check(move || {
            counter.fetch_add(1, Relaxed);
            model();
        });
    });
    let executions = as_u64(count.load(Relaxed));
    match run {
        Ok(()) => Outcome {
            executions,
            failure: None,
            exhausted: true,
        },
        Err(payload) => Outcome {
            executions,
            failure: Some(message(&*payload)),
            exhausted: false,
        },
    }
}

/// Our DFS without a preemption bound, with `reduction`, stopped at `cap` executions or at
/// the first failure, which must be a panic.
fn ours_search(model: fn(), reduction: Reduction, cap: u64) -> Outcome {
    let result = Builder::new()
        .strategy(StrategyKind::Dfs {
            max_preemptions: None,
        })
        .reduction(reduction)
        .iterations(cap)
        .progress(false)
        .check(model);
    match result {
        Ok(report) => Outcome {
            executions: report.executions,
            failure: None,
            exhausted: report.exhausted,
        },
        Err(failure) => {
            assert_eq!(failure.kind(), FailureKind::Panic, "{failure}");
            Outcome {
                executions: failure.iteration() + 1,
                failure: Some(failure.message().to_owned()),
                exhausted: false,
            }
        }
    }
}

/// "ours / loom" of two quantities (3 decimals, or 2 significant digits below 0.01), or "–"
/// when loom did not run.
fn ratio_cell(ours: f64, loom: Option<f64>) -> String {
    match loom {
        Some(l) => {
            let r = ours / l.max(1e-9);
            if r > 0.0 && r < 0.01 {
                format!("{r:.1e}")
            } else {
                format!("{r:.3}")
            }
        }
        None => "–".to_owned(),
    }
}

/// The executions of an unreduced search, ">cap" when it stopped at the cap.
fn unreduced_cell(o: &Outcome, cap: u64) -> String {
    if o.failure.is_none() && !o.exhausted {
        format!(">{}", count_cell(cap))
    } else {
        count_cell(o.executions)
    }
}

/// The three searches of one model: loom's (if it runs), ours with DPOR, ours unreduced.
struct Searches {
    /// loom's search and its wall time (`None` when quick mode leaves it out).
    loom: Option<(Outcome, Duration)>,
    /// Our DFS with DPOR and its wall time.
    dpor: (Outcome, Duration),
    /// Our DFS without reduction, capped, and its wall time.
    unreduced: (Outcome, Duration),
}

/// Runs the three searches of `m`.
fn search_all(m: &Model, plan: Plan) -> Searches {
    let loom = (!plan.quick || m.loom_in_quick).then(|| timed(|| loom_search(m.loom)));
    let dpor = timed(|| ours_search(m.ours, Reduction::Dpor, u64::MAX));
    let unreduced = timed(|| ours_search(m.ours, Reduction::Off, plan.unreduced_cap));
    eprintln!(
        "  {}: loom {:?}, DPOR {:?}, unreduced {:?}",
        m.name,
        loom.as_ref().map(|l| l.0.executions),
        dpor.0.executions,
        unreduced.0.executions
    );
    Searches {
        loom,
        dpor,
        unreduced,
    }
}

/// The loom columns and ratio columns of a row: loom executions, loom time, ratios.
fn loom_and_ratio_cells(s: &Searches) -> (String, String, String, String) {
    let (dpor, dpor_t) = &s.dpor;
    match &s.loom {
        Some((l, lt)) => (
            count_cell(l.executions),
            format!("{lt:.2?}"),
            ratio_cell(dpor.executions as f64, Some(l.executions as f64)),
            ratio_cell(dpor_t.as_secs_f64(), Some(lt.as_secs_f64())),
        ),
        None => (
            "not run (quick)".to_owned(),
            "–".to_owned(),
            ratio_cell(0.0, None),
            ratio_cell(0.0, None),
        ),
    }
}

/// Measurement 1: each passing model exhausted by the three searches.
fn measure_passing(plan: Plan) -> Vec<String> {
    let mut rows = Vec::new();
    for m in &PASSING {
        let s = search_all(m, plan);
        if let Some((l, _)) = &s.loom {
            assert!(
                l.failure.is_none(),
                "loom: {} failed: {:?}",
                m.name,
                l.failure
            );
        }
        for (o, tool) in [(&s.dpor.0, "DPOR"), (&s.unreduced.0, "unreduced")] {
            assert!(
                o.failure.is_none(),
                "ours ({tool}): {} failed: {:?}",
                m.name,
                o.failure
            );
        }
        assert!(s.dpor.0.exhausted, "DPOR stopped before the end");
        let (loom_n, loom_t, n_ratio, t_ratio) = loom_and_ratio_cells(&s);
        rows.push(format!(
            "| {} | {loom_n} | {loom_t} | {} | {:.2?} | {n_ratio} | {t_ratio} | {} | {:.2?} |",
            m.name,
            count_cell(s.dpor.0.executions),
            s.dpor.1,
            unreduced_cell(&s.unreduced.0, plan.unreduced_cap),
            s.unreduced.1,
        ));
    }
    rows
}

/// "found at N" or "**not found** (N, exhausted)": the result of a search for a bug.
fn found_cell(o: &Outcome, cap: u64) -> String {
    match (&o.failure, o.exhausted) {
        (Some(_), _) => format!("found at {}", count_cell(o.executions)),
        (None, true) => format!("**not found** ({}, exhausted)", count_cell(o.executions)),
        (None, false) => format!("**not found** (>{})", count_cell(cap)),
    }
}

/// Measurement 2: each buggy model searched to its first failure by the three searches.
fn measure_buggy(plan: Plan) -> Vec<String> {
    let mut rows = Vec::new();
    for m in &BUGGY {
        let s = search_all(m, plan);
        let expected = m.bug.expect("a buggy model names its bug");
        let searches = [
            ("loom", s.loom.as_ref().map(|l| &l.0)),
            ("DPOR", Some(&s.dpor.0)),
        ];
        let searches = searches
            .into_iter()
            .chain([("unreduced", Some(&s.unreduced.0))]);
        for (tool, o) in searches {
            if let Some(msg) = o.and_then(|o| o.failure.as_ref()) {
                assert!(
                    msg.contains(expected),
                    "{tool}: {} failed with {msg:?}",
                    m.name
                );
            }
        }
        let loom_found = match &s.loom {
            Some((l, _)) => found_cell(l, u64::MAX),
            None => "not run (quick)".to_owned(),
        };
        let (_, loom_t, n_ratio, t_ratio) = loom_and_ratio_cells(&s);
        rows.push(format!(
            "| {} | {loom_found} | {loom_t} | {} | {:.2?} | {n_ratio} | {t_ratio} | {} | {:.2?} |",
            m.name,
            found_cell(&s.dpor.0, u64::MAX),
            s.dpor.1,
            found_cell(&s.unreduced.0, plan.unreduced_cap),
            s.unreduced.1,
        ));
    }
    rows
}

/// Runs both measurements and prints their tables, then the core count and load.
fn main() {
    let plan = Plan::from_env();
    eprintln!("quick mode: {}", plan.quick);
    // One-time costs (our watchdog thread and panic hook, first allocations of both tools)
    // would otherwise land in the first model's times.
    let empty: fn() = || {};
    let warm = ours_search(empty, Reduction::Dpor, u64::MAX);
    assert!(warm.failure.is_none() && loom_search(empty).failure.is_none());

    eprintln!("1. executions to exhaust ...");
    let rows = measure_passing(plan);
    print_table(
        "1. Passing models: executions to exhaust (DFS, no preemption bound)",
        &[
            "model",
            "loom executions",
            "loom time",
            "ours DPOR executions",
            "ours DPOR time",
            "executions / loom's",
            "time / loom's",
            "ours unreduced executions",
            "ours unreduced time",
        ],
        1,
        &rows,
    );
    println!();
    println!(
        "Note: `iriw_relaxed` uses main as its second reader (3 spawned threads). With both \
         readers spawned (4 + main) loom's search did not end within 15 minutes on 2 cores \
         (over 670,000 executions in its first minute), so both tools run the smaller shape."
    );
    if plan.quick {
        println!("Quick mode: loom's search of `iriw_relaxed` (about 12 s) is left out.");
    }

    eprintln!("2. executions to the first failure ...");
    let rows = measure_buggy(plan);
    print_table(
        "2. Buggy models: executions to the first failure (DFS, no preemption bound)",
        &[
            "model",
            "loom",
            "loom time",
            "ours DPOR",
            "ours DPOR time",
            "executions / loom's",
            "time / loom's",
            "ours unreduced",
            "ours unreduced time",
        ],
        1,
        &rows,
    );
    println!();
    println!(
        "Note: both tools try the oldest store a load may read first; where the first \
         failing execution differs, it is the order of threads or of stores that differs."
    );

    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let load = common::load_average();
    println!();
    println!(
        "cores: {cores}; 1-minute load average at the end: {load}; quick mode: {}; unreduced cap: {}",
        plan.quick,
        count_cell(plan.unreduced_cap)
    );
}
