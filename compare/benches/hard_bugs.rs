//! Executions to the first failure on ports of SCTBench's hard-bug programs, interleave-test
//! against shuttle 0.9.10, and the wall time of a short hunt at one core and at the default
//! parallelism, in one process. Two tables:
//!
//! 1. **Executions to the first failure**, median over seeds 1..=20, each seed capped at
//!    10,000 executions (a seed that finds nothing counts as more than the cap; the median is
//!    printed as `> cap` when the middle seeds found nothing), of PCT with depth 3 (ours:
//!    `StrategyKind::Pct { depth: 3 }`; shuttle: `PctScheduler::new_from_seed(seed, 3, cap)`)
//!    and of random (ours: `StrategyKind::Random`; shuttle: `RandomScheduler`), ours at
//!    `parallelism(1)`. The ratio is ours over shuttle's (below 1: ours needs fewer). Then,
//!    for information, the executions our DFS (with its default reduction, DPOR, no bound)
//!    runs up to the first failure, and the least preemption bound under which our DFS finds
//!    the bug (bounds 0 to 3 are tried). Below the table: the geometric mean of the PCT
//!    ratios where both medians are within the cap, over the models the issue names and
//!    over all, and how many models ours needs more than twice shuttle's executions on.
//! 2. **A short hunt**: the median wall time (and the shortest and longest), over 50
//!    repetitions, of one `check` of 10 executions of a passing model (`mutex_3x2`: three
//!    threads x two locked increments), and of one `check` of a hard-bug model from a seed
//!    whose first failure comes at execution 10 to 30, at `parallelism(1)` and at
//!    `Builder::new()`'s default (one execution per core), random and PCT; shuttle's
//!    `Runner` with the same scheduler for the same executions, at its only parallelism,
//!    one. Executions per second (from the median) count the
//!    executions asked for (the passing model) or those up to and including the failing one
//!    (the hunt; executions started after it in parallel are the cost of parallelism).
//!
//! The models are in `benches/models/hard.rs` (the SCTBench ports; their docs say what the
//! bug is and why it is hard) and `benches/models/mod.rs` (`mutex_3x2`). shuttle does not
//! report how many executions it ran before a failure, so its model closure is wrapped in one
//! that first increments a `std` atomic counter.
//!
//! Run it with `cargo bench --bench hard_bugs` (a minute or two). `INTERLEAVE_BENCH_QUICK=1`
//! runs 3 seeds, a cap of 1,000 executions and 5 repetitions of each hunt (seconds);
//! `INTERLEAVE_BENCH_SEEDS=N` runs table 1 over seeds 1..=N instead (a median over 20 seeds
//! is noisy: ours on `reorder_3` is 22 over seeds 1..=20, 14 over 1..=200). shuttle writes
//! a line or two to stderr for every failing execution (`test panicked in task ...`,
//! `Test deadlocked ...`, a failing seed); that is its own output, not an error of the bench.
//! The core count and the load average are printed at the end.

use std::sync::atomic::Ordering::Relaxed;

use interleave_test::{Builder, FailureKind, StrategyKind};

#[path = "support/mod.rs"]
#[allow(dead_code, reason = "this bench uses some of the shared helpers")]
mod common;
use common::randomized::{Kind, PCT_DEPTH, counted, shuttle_runs};
use common::{as_u64, count_cell, print_table, quietly, timed};

#[path = "models/hard.rs"]
mod hard;
#[allow(dead_code, reason = "the short hunt runs only `mutex_3x2`")]
mod models;

use hard::{hard_ours as ours, hard_shuttle as theirs};

/// A hard-bug model, as written for each tool.
struct Bug {
    name: &'static str,
    ours: fn(),
    shuttle: fn(),
    /// The failure it must produce under interleave-test.
    kind: FailureKind,
    /// A piece of shuttle's panic message for that failure.
    text: &'static str,
    /// Whether the issue names it (the others are extra, cheap ports).
    named: bool,
}

/// Writes a [`Bug`] from the model's name, its failure kind, shuttle's text and `named`.
macro_rules! bug {
    ($name:ident, $kind:ident, $text:literal, $named:literal) => {
        Bug {
            name: stringify!($name),
            ours: ours::$name,
            shuttle: theirs::$name,
            kind: FailureKind::$kind,
            text: $text,
            named: $named,
        }
    };
}

const BUGS: [Bug; 15] = [
    bug!(reorder_3, Panic, "reorder:", true),
    bug!(reorder_5, Panic, "reorder:", true),
    bug!(twostage, Panic, "twostage:", true),
    bug!(twostage_3, Panic, "twostage:", true),
    bug!(wronglock, Panic, "wronglock:", true),
    bug!(wronglock_3, Panic, "wronglock:", true),
    bug!(queue, Panic, "queue:", true),
    bug!(deadlock01, Deadlock, "deadlock", true),
    bug!(carter01, Deadlock, "deadlock", true),
    bug!(account, Panic, "account:", false),
    bug!(stack, Panic, "stack:", false),
    bug!(token_ring, Panic, "token_ring:", false),
    bug!(lazy01, Panic, "lazy01:", false),
    bug!(reorder_10, Panic, "reorder:", false),
    bug!(twostage_10, Panic, "twostage:", false),
];

/// Counts of one run mode (full or quick).
#[derive(Clone, Copy, Debug)]
struct Plan {
    quick: bool,
    /// Seeds 1..=seeds of table 1.
    seeds: u64,
    /// Executions per seed (and per DFS search) before a bug counts as not found.
    cap: u64,
    /// Repetitions of each short hunt.
    reps: usize,
}

impl Plan {
    fn from_env() -> Plan {
        let quick = common::quick_mode();
        Plan {
            quick,
            seeds: std::env::var("INTERLEAVE_BENCH_SEEDS")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(if quick { 3 } else { 20 }),
            cap: if quick { 1_000 } else { 10_000 },
            reps: if quick { 5 } else { 50 },
        }
    }
}

/// Ours: `kind` from `seed`, at most `executions`, at `parallelism` (`None`: the default).
fn ours_builder(kind: Kind, seed: u64, executions: u64, parallelism: Option<usize>) -> Builder {
    let builder = Builder::new()
        .seed(seed)
        .strategy(kind.ours())
        .iterations(executions);
    match parallelism {
        Some(n) => builder.parallelism(n),
        None => builder,
    }
}

/// Ours on `bug` from `seed` at parallelism 1: the executions up to and including the
/// first failing one, `None` if `cap` executions passed.
fn ours_first(bug: &Bug, kind: Kind, seed: u64, cap: u64) -> Option<u64> {
    first_of(bug, ours_builder(kind, seed, cap, Some(1)), cap)
}

/// The executions up to the first failure of `builder`'s search on `bug`, which must be of
/// the bug's kind; `None` when the search ended without one.
fn first_of(bug: &Bug, builder: Builder, cap: u64) -> Option<u64> {
    match builder.check(bug.ours) {
        Ok(report) => {
            assert!(
                report.executions == cap || report.exhausted,
                "{}: ours stopped early without a failure",
                bug.name
            );
            None
        }
        Err(failure) => {
            assert_eq!(failure.kind(), bug.kind, "{}: {failure}", bug.name);
            Some(failure.iteration() + 1)
        }
    }
}

/// shuttle on `bug` from `seed`: the executions up to the first failure, whose panic
/// message must contain the bug's text; `None` if `cap` executions passed.
fn shuttle_first(bug: &Bug, kind: Kind, seed: u64, cap: u64) -> Option<u64> {
    let (count, model) = counted(bug.shuttle);
    match shuttle_runs(kind, seed, model, cap) {
        Ok(done) => {
            assert_eq!(as_u64(done), cap, "{}: shuttle stopped early", bug.name);
            None
        }
        Err(payload) => {
            let text = message(&*payload);
            assert!(text.contains(bug.text), "{}: shuttle: {text}", bug.name);
            Some(as_u64(count.load(Relaxed)))
        }
    }
}

/// The text of a panic payload.
fn message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string payload".to_owned())
}

// ---------------------------------------------------------------------------------------------
// 1. Executions to the first failure.

/// The median of the seeds' results, a miss counting as more than any count: `None` when
/// the upper middle value is a miss (at least half the seeds missed).
fn median(found: &[Option<u64>]) -> Option<f64> {
    let mut sorted: Vec<u64> = found.iter().map(|f| f.unwrap_or(u64::MAX)).collect();
    sorted.sort_unstable();
    let (lo, hi) = (sorted[(sorted.len() - 1) / 2], sorted[sorted.len() / 2]);
    (hi != u64::MAX).then(|| (lo as f64 + hi as f64) / 2.0)
}

/// "median (found/seeds)", the median as `> cap` when it is a miss.
fn median_cell(found: &[Option<u64>], cap: u64) -> String {
    let hits = found.iter().flatten().count();
    let m = match median(found) {
        Some(m) if m.fract() == 0.0 => count_cell(m as u64),
        Some(m) => format!("{m:.1}"),
        None => format!("> {}", count_cell(cap)),
    };
    format!("{m} ({hits}/{})", found.len())
}

/// Ours over shuttle's median, as a cell and, when both are within the cap, a number.
fn ratio(ours: Option<f64>, theirs: Option<f64>, cap: u64) -> (String, Option<f64>) {
    let cap = cap as f64;
    match (ours, theirs) {
        (Some(a), Some(b)) => (format!("{:.2}", a / b), Some(a / b)),
        (None, Some(b)) => (format!("> {:.2}", cap / b), None),
        (Some(a), None) => (format!("< {:.2}", a / cap), None),
        (None, None) => ("both > cap".to_owned(), None),
    }
}

/// Our DFS, default reduction, bounded by `bound`: the executions to the first failure,
/// `Err(exhausted)` when none failed.
fn dfs_first(bug: &Bug, bound: Option<u32>, cap: u64) -> Result<u64, bool> {
    let builder = Builder::new()
        .strategy(StrategyKind::Dfs {
            max_preemptions: bound,
        })
        .iterations(cap)
        .progress(false);
    match builder.check(bug.ours) {
        Ok(report) => Err(report.exhausted),
        Err(failure) => {
            assert_eq!(failure.kind(), bug.kind, "{}: {failure}", bug.name);
            Ok(failure.iteration() + 1)
        }
    }
}

/// The DFS cells: executions to the first failure without a bound, and the least bound
/// (0 to 3) under which it finds the bug, naming the smaller bounds whose search hit the cap.
fn dfs_cells(bug: &Bug, cap: u64) -> (String, String) {
    let unbounded = match dfs_first(bug, None, cap) {
        Ok(n) => count_cell(n),
        Err(true) => "**not found** (exhausted)".to_owned(),
        Err(false) => format!("> {}", count_cell(cap)),
    };
    let mut unfinished = Vec::new();
    let mut least = "> 3".to_owned();
    for bound in 0..=3 {
        match dfs_first(bug, Some(bound), cap) {
            Ok(_) => {
                least = bound.to_string();
                break;
            }
            Err(true) => {}
            Err(false) => unfinished.push(bound.to_string()),
        }
    }
    if !unfinished.is_empty() {
        least = format!("{least} (bound {} hit the cap)", unfinished.join(", "));
    }
    (unbounded, least)
}

/// Table 1's results: rows, and the PCT ratios (model named by the issue, ratio or `None`
/// where a median is beyond the cap, and whether ours is worse than twice shuttle's).
struct FirstFailures {
    rows: Vec<String>,
    pct: Vec<(bool, Option<f64>, bool)>,
}

/// The four searches of `bug` over the seeds: ours PCT, shuttle PCT, ours random, shuttle
/// random, each seed's result; printed to stderr as they come.
fn seed_results(bug: &Bug, plan: Plan) -> [Vec<Option<u64>>; 4] {
    let seeds = 1..=plan.seeds;
    let run = |label: &str, f: &dyn Fn(u64) -> Option<u64>| {
        let (found, t) = timed(|| seeds.clone().map(f).collect::<Vec<_>>());
        eprintln!("  {} {label}: {found:?} ({t:.2?})", bug.name);
        found
    };
    [
        run("ours PCT      ", &|s| {
            ours_first(bug, Kind::Pct, s, plan.cap)
        }),
        run("shuttle PCT   ", &|s| {
            shuttle_first(bug, Kind::Pct, s, plan.cap)
        }),
        run("ours random   ", &|s| {
            ours_first(bug, Kind::Random, s, plan.cap)
        }),
        run("shuttle random", &|s| {
            shuttle_first(bug, Kind::Random, s, plan.cap)
        }),
    ]
}

fn measure_first_failures(plan: Plan) -> FirstFailures {
    let mut out = FirstFailures {
        rows: Vec::new(),
        pct: Vec::new(),
    };
    for bug in &BUGS {
        let [op, tp, or, tr] = seed_results(bug, plan);
        let (pct_ratio, pct_value) = ratio(median(&op), median(&tp), plan.cap);
        let (random_ratio, _) = ratio(median(&or), median(&tr), plan.cap);
        let worse = match (median(&op), median(&tp)) {
            (Some(a), Some(b)) => a > 2.0 * b,
            (None, Some(_)) => true,
            _ => false,
        };
        out.pct.push((bug.named, pct_value, worse));
        let (dfs, least) = dfs_cells(bug, plan.cap);
        let name = if bug.named {
            bug.name.to_owned()
        } else {
            format!("{} (extra)", bug.name)
        };
        out.rows.push(format!(
            "| {name} | {} | {} | {pct_ratio} | {} | {} | {random_ratio} | {dfs} | {least} |",
            median_cell(&op, plan.cap),
            median_cell(&tp, plan.cap),
            median_cell(&or, plan.cap),
            median_cell(&tr, plan.cap),
        ));
    }
    out
}

/// The geometric mean of the ratios that are numbers, and how many there are.
fn geometric_mean(ratios: impl Iterator<Item = Option<f64>>) -> (f64, usize) {
    let logs: Vec<f64> = ratios.flatten().map(f64::ln).collect();
    let n = logs.len();
    ((logs.iter().sum::<f64>() / n.max(1) as f64).exp(), n)
}

fn print_first_failures(plan: Plan, results: &FirstFailures) {
    let title = format!(
        "1. Executions to the first failure: median over seeds 1..={} (found/seeds), each \
         capped at {} executions; PCT depth {PCT_DEPTH}; ours at parallelism 1",
        plan.seeds,
        count_cell(plan.cap)
    );
    let header = [
        "model",
        "ours PCT",
        "shuttle PCT",
        "ours / shuttle",
        "ours random",
        "shuttle random",
        "ours / shuttle",
        "ours DFS (DPOR), no bound",
        "least DFS preemption bound",
    ];
    print_table(&title, &header, 1, &results.rows);
    let named = results.pct.iter().filter(|p| p.0);
    let (g_named, n_named) = geometric_mean(named.clone().map(|p| p.1));
    let (g_all, n_all) = geometric_mean(results.pct.iter().map(|p| p.1));
    let worse_named = named.filter(|p| p.2).count();
    let worse_all = results.pct.iter().filter(|p| p.2).count();
    println!();
    println!(
        "Geometric mean of the PCT ratios (ours/shuttle, both medians within the cap): \
         {g_named:.3} over the {n_named} models the issue names, {g_all:.3} over all {n_all}."
    );
    println!(
        "Models where ours needs more than twice shuttle's PCT executions (or misses where \
         shuttle finds): {worse_named} of those the issue names, {worse_all} of all {}.",
        results.pct.len()
    );
}

// ---------------------------------------------------------------------------------------------
// 2. The short hunt.

#[path = "hard_bugs/hunt.rs"]
mod hunt;

fn main() {
    let plan = Plan::from_env();
    // shuttle installs its panic hook at its first execution; let that happen here, inside
    // `quietly`, which then removes it.
    quietly(|| shuttle::check_random(|| {}, 1)).expect("an empty shuttle model passes");
    eprintln!("quick mode: {}", plan.quick);

    eprintln!("1. executions to the first failure ...");
    let results = measure_first_failures(plan);
    print_first_failures(plan, &results);

    eprintln!("2. short hunts ...");
    let rows = hunt::measure(plan.reps);
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    print_table(
        &format!(
            "2. Short hunt: median wall time of one check over {} repetitions; default \
             parallelism = {cores}",
            plan.reps
        ),
        &[
            "model",
            "strategy",
            "tool",
            "seed",
            "executions",
            "wall time",
            "shortest to longest",
            "exec/s",
            "exec/s / ours at parallelism 1",
        ],
        3,
        &rows,
    );

    let load = common::load_average();
    println!();
    println!(
        "cores: {cores}; 1-minute load average at the end: {load}; quick mode: {}",
        plan.quick
    );
}
