//! The search strategies of interleave-test against loom's and shuttle's, on identical
//! models, in one process. Four measurements, each printed as a markdown table:
//!
//! 1. **Executions to exhaust** four passing models (`mutex_3x2`, `mpsc_2x3`, `rwlock_2r1w`,
//!    `condvar_2p1c`) without a preemption bound and with bounds 2 and 3: loom's `model` (no
//!    bound) or its `Builder` with `preemption_bound`, then our DFS with partial-order
//!    reduction (the default) and without it (`Reduction::Off`, for reference), with the
//!    wall time of each and our executions and time as a ratio of loom's; shuttle's
//!    `check_dfs` (no bound, no reduction) on the first two.
//! 2. **Executions to the first failure**, median over seeds 1..=20, of PCT with depth 3
//!    (ours: `failure.iteration() + 1`; shuttle: a `PctScheduler` seeded with the same seed)
//!    on three buggy models: a racy counter, an ABBA deadlock and a lost wakeup.
//! 3. **Executions per second** of PCT (depth 3, seed 1) on the four models of the
//!    `throughput` bench, ours against shuttle's.
//! 4. **A bug that needs exactly two preemptions** (`two_preemptions`): does a search
//!    bounded to 2 preemptions find it? loom's bounded search against our DFS, with bounds 1
//!    (which must miss it) and 3 and no bound for reference.
//!
//! The passing models are those of `benches/models/mod.rs` (shared with the `throughput`
//! bench) and `benches/models/search.rs`; the failing ones are in `benches/models/buggy.rs`.
//! loom and shuttle do not report how many executions they ran, so their model closure is
//! wrapped in one that first increments a `std` atomic counter.
//!
//! Run it with `cargo bench --bench strategies` (several minutes, most of them in loom's
//! unbounded searches, in our unreduced ones, which stop at 500,000 executions, and in
//! shuttle's, which stops at 10 million). `INTERLEAVE_BENCH_QUICK=1` runs small counts and
//! 3 seeds instead of 20 and leaves out the unbounded searches of loom and shuttle (seconds).
//! shuttle writes a line or two to stderr for every failing execution it finds in
//! measurement 2 (`test panicked in task ...`); that is its own output, not an error of the
//! bench. Panic messages of model threads are not printed: the panic hook is a no-op while
//! loom and shuttle run. The core count and the load average are printed at the end.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

use interleave_test::{Builder, FailureKind, Reduction, StrategyKind};

#[path = "support/mod.rs"]
#[allow(dead_code, reason = "this bench uses most of the shared helpers")]
mod common;
use common::{as_u64, print_table, quietly, timed};
use shuttle::scheduler::PctScheduler;

#[path = "models/buggy.rs"]
mod buggy;
#[macro_use]
mod models;
#[macro_use]
#[path = "models/search.rs"]
mod search;

use buggy::{buggy_ours, buggy_shuttle, two_loom, two_ours};

models!(
    /// Only the models measurement 1 exhausts are run under loom.
    #[allow(dead_code)]
    in_loom,
    loom
);
search_models!(search_ours, interleave_test);
search_models!(search_loom, loom);

/// A passing model of `benches/models/mod.rs`, as written for each tool.
struct Passing {
    name: &'static str,
    ours: fn(),
    shuttle: fn(),
}

const PASSING: [Passing; 4] = [
    Passing {
        name: "fetch_add_2x200",
        ours: models::ours::fetch_add_2x200,
        shuttle: models::theirs::fetch_add_2x200,
    },
    Passing {
        name: "racy_counter",
        ours: models::ours::racy_counter,
        shuttle: models::theirs::racy_counter,
    },
    Passing {
        name: "mutex_3x2",
        ours: models::ours::mutex_3x2,
        shuttle: models::theirs::mutex_3x2,
    },
    Passing {
        name: "mpsc_2x3",
        ours: models::ours::mpsc_2x3,
        shuttle: models::theirs::mpsc_2x3,
    },
];

/// A passing model that measurement 1 exhausts, as written for each tool (shuttle's only
/// where its unreduced search finishes).
struct Exhaust {
    name: &'static str,
    ours: fn(),
    loom: fn(),
    shuttle: Option<fn()>,
}

const EXHAUST: [Exhaust; 4] = [
    Exhaust {
        name: "mutex_3x2",
        ours: models::ours::mutex_3x2,
        loom: in_loom::mutex_3x2,
        shuttle: Some(models::theirs::mutex_3x2),
    },
    Exhaust {
        name: "mpsc_2x3",
        ours: models::ours::mpsc_2x3,
        loom: in_loom::mpsc_2x3,
        shuttle: Some(models::theirs::mpsc_2x3),
    },
    Exhaust {
        name: "rwlock_2r1w",
        ours: search_ours::rwlock_2r1w,
        loom: search_loom::rwlock_2r1w,
        shuttle: None,
    },
    Exhaust {
        name: "condvar_2p1c",
        ours: search_ours::condvar_2p1c,
        loom: search_loom::condvar_2p1c,
        shuttle: None,
    },
];

/// Counts of one run mode (full or quick).
#[derive(Clone, Copy, Debug)]
struct Plan {
    quick: bool,
    /// Executions after which our DFS stops if it has not finished. Its unbounded searches of
    /// both models run to millions of executions, at a few thousand to a few tens of
    /// thousands per second, so the full run stops them after a few minutes at most.
    ours_dfs_cap: u64,
    /// The same for shuttle's `check_dfs`, which is fast enough (about 150,000 executions per
    /// second) to finish both models: about 6.3 million and 0.2 million executions.
    shuttle_dfs_cap: u64,
    /// Seeds of measurement 2: 1..=seeds.
    seeds: u64,
    /// Executions per seed of measurement 2 before a bug counts as not found.
    pct_cap: u64,
}

impl Plan {
    fn from_env() -> Plan {
        let quick = common::quick_mode();
        Plan {
            quick,
            ours_dfs_cap: if quick { 2_000 } else { 500_000 },
            shuttle_dfs_cap: if quick { 2_000 } else { 10_000_000 },
            seeds: if quick { 3 } else { 20 },
            pct_cap: if quick { 10_000 } else { 100_000 },
        }
    }
}

/// `model`, preceded by an increment of `count`: how executions of loom and shuttle are
/// counted.
fn counted(model: fn(), count: &Arc<AtomicUsize>) -> impl Fn() + Send + Sync + 'static {
    let count = Arc::clone(count);
    move || {
        count.fetch_add(1, Relaxed);
        model();
    }
}

fn as_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// The bound as a table cell.
fn bound_cell<T: std::fmt::Display>(bound: Option<T>) -> String {
    bound.map_or_else(|| "none".to_owned(), |b| b.to_string())
}

// ---------------------------------------------------------------------------------------------
// 1. Executions to exhaust.

/// Our DFS: (executions, exhausted).
fn ours_dfs(model: fn(), bound: Option<u32>, reduction: Reduction, cap: u64) -> (u64, bool) {
    let strategy = StrategyKind::Dfs {
        max_preemptions: bound,
    };
    match Builder::new()
        .iterations(cap)
        .strategy(strategy)
        .reduction(reduction)
        .progress(false)
        .check(model)
    {
        Ok(report) => (report.executions, report.exhausted),
        Err(failure) => panic!("interleave-test: a passing model failed:\n{failure}"),
    }
}

/// loom's search (`loom::model` without a bound, its `Builder` with one): executions. loom
/// has no execution cap by default, so it always runs to the end.
fn loom_dfs(model: fn(), bound: Option<usize>) -> u64 {
    let count = Arc::new(AtomicUsize::new(0));
    let f = counted(model, &count);
    let run = quietly(move || match bound {
        None => loom::model(f),
        Some(b) => {
            let mut builder = loom::model::Builder::new();
            builder.preemption_bound = Some(b);
            builder.check(f);
        }
    });
    if let Err(payload) = run {
        panic!("loom: a passing model failed: {}", message(&*payload));
    }
    as_u64(count.load(Relaxed))
}

/// shuttle's `check_dfs`: (executions, exhausted, that is, stopped before the cap).
fn shuttle_dfs(model: fn(), cap: u64) -> (u64, bool) {
    let count = Arc::new(AtomicUsize::new(0));
    let f = counted(model, &count);
    if let Err(payload) = quietly(|| shuttle::check_dfs(f, Some(as_usize(cap)))) {
        panic!("shuttle: a passing model failed: {}", message(&*payload));
    }
    let executions = as_u64(count.load(Relaxed));
    (executions, executions < cap)
}

/// What one search of measurement 1 did: (executions, exhausted), and its wall time.
/// `exhausted` is `None` for loom, which has no cap.
type Searched = ((u64, Option<bool>), Duration);

/// One row of measurement 1; `loom` is loom's search of the same model and bound, to which
/// the row compares itself.
fn exhaust_row(
    model: &str,
    tool: &str,
    bound: String,
    ((n, exhausted), t): Searched,
    loom: Option<Searched>,
) -> String {
    let exhausted = match exhausted {
        Some(true) => "yes",
        Some(false) => "**no** (stopped at the cap)",
        None => "yes (no cap)",
    };
    let ratios = match loom {
        Some(((l, _), lt)) => format!(
            "{:.3} | {:.3}",
            n as f64 / l.max(1) as f64,
            t.as_secs_f64() / lt.as_secs_f64().max(1e-9)
        ),
        None => "| ".into(),
    };
    format!("| {model} | {tool} | {bound} | {n} | {exhausted} | {t:.2?} | {ratios} |")
}

fn measure_exhaustion(plan: Plan) -> Vec<String> {
    let mut rows = Vec::new();
    for m in &EXHAUST {
        for bound in [None, Some(2), Some(3)] {
            if plan.quick && bound.is_none() {
                continue;
            }
            let cell = bound_cell(bound);
            let loom = timed(|| (loom_dfs(m.loom, bound.map(as_usize_u32)), None));
            let tool = if bound.is_none() {
                "loom::model"
            } else {
                "loom Builder"
            };
            rows.push(exhaust_row(m.name, tool, cell.clone(), loom, None));
            for (reduction, tool) in [
                (Reduction::Dpor, "interleave-test DFS (DPOR)"),
                (Reduction::Off, "interleave-test DFS (no reduction)"),
            ] {
                let searched = timed(|| {
                    let (n, done) = ours_dfs(m.ours, bound, reduction, plan.ours_dfs_cap);
                    (n, Some(done))
                });
                rows.push(exhaust_row(
                    m.name,
                    tool,
                    cell.clone(),
                    searched,
                    Some(loom),
                ));
            }
        }
        if let (Some(shuttle), false) = (m.shuttle, plan.quick) {
            let searched = timed(|| {
                let (n, done) = shuttle_dfs(shuttle, plan.shuttle_dfs_cap);
                (n, Some(done))
            });
            rows.push(exhaust_row(
                m.name,
                "shuttle check_dfs",
                "none".into(),
                searched,
                None,
            ));
        }
        eprintln!("  exhausted {}", m.name);
    }
    rows
}

fn as_usize_u32(b: u32) -> usize {
    as_usize(u64::from(b))
}

// ---------------------------------------------------------------------------------------------
// 2. Executions to the first failure.

/// A buggy model of measurement 2, as written for each tool.
struct Buggy {
    name: &'static str,
    ours: fn(),
    shuttle: fn(),
    /// The failure it must produce under interleave-test.
    kind: FailureKind,
    /// A piece of shuttle's panic message for that failure.
    shuttle_message: &'static str,
}

const BUGGY: [Buggy; 3] = [
    Buggy {
        name: "racy_counter",
        ours: buggy_ours::racy_counter,
        shuttle: buggy_shuttle::racy_counter,
        kind: FailureKind::Panic,
        shuttle_message: "an update was lost",
    },
    Buggy {
        name: "abba_deadlock",
        ours: buggy_ours::abba_deadlock,
        shuttle: buggy_shuttle::abba_deadlock,
        kind: FailureKind::Deadlock,
        shuttle_message: "deadlock",
    },
    Buggy {
        name: "lost_wakeup",
        ours: buggy_ours::lost_wakeup,
        shuttle: buggy_shuttle::lost_wakeup,
        kind: FailureKind::Deadlock,
        shuttle_message: "deadlock",
    },
];

const PCT_DEPTH: u32 = 3;

/// Our PCT: the executions up to and including the first failing one, `None` if none failed.
fn ours_first_failure(bug: &Buggy, seed: u64, cap: u64) -> Option<u64> {
    let strategy = StrategyKind::Pct { depth: PCT_DEPTH };
    let builder = Builder::new().seed(seed).iterations(cap).strategy(strategy);
    let failure = builder.check(bug.ours).err()?;
    assert_eq!(failure.kind(), bug.kind, "{}: {failure}", bug.name);
    Some(failure.iteration() + 1)
}

/// shuttle's PCT, seeded with `seed`: the same count, from the execution counter.
fn shuttle_first_failure(bug: &Buggy, seed: u64, cap: u64) -> Option<u64> {
    let count = Arc::new(AtomicUsize::new(0));
    let f = counted(bug.shuttle, &count);
    let scheduler = PctScheduler::new_from_seed(seed, PCT_DEPTH as usize, as_usize(cap));
    let runner = shuttle::Runner::new(scheduler, quiet_shuttle_config());
    let payload = quietly(|| runner.run(f)).err()?;
    let msg = message(&*payload);
    assert!(
        msg.contains(bug.shuttle_message),
        "{}: shuttle failed with {msg:?}",
        bug.name
    );
    Some(as_u64(count.load(Relaxed)))
}

/// shuttle's default configuration, except that a failing schedule is not printed.
fn quiet_shuttle_config() -> shuttle::Config {
    let mut config = shuttle::Config::new();
    config.failure_persistence = shuttle::FailurePersistence::None;
    config
}

/// The text of a panic payload.
fn message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string payload".to_owned())
}

/// "median (found/seeds)": the median over the seeds, a miss counting as more than the cap.
fn median_cell(mut found: Vec<Option<u64>>, cap: u64) -> String {
    let hits = found.iter().flatten().count();
    found.sort_by_key(|n| n.unwrap_or(u64::MAX));
    let median = match found[(found.len() - 1) / 2] {
        Some(n) => n.to_string(),
        None => format!("> {cap}"),
    };
    format!("{median} ({hits}/{} found)", found.len())
}

fn measure_first_failure(plan: Plan) -> Vec<String> {
    let mut rows = Vec::new();
    for bug in &BUGGY {
        let seeds = 1..=plan.seeds;
        let ours: Vec<_> = seeds
            .clone()
            .map(|s| ours_first_failure(bug, s, plan.pct_cap))
            .collect();
        let theirs: Vec<_> = seeds
            .map(|s| shuttle_first_failure(bug, s, plan.pct_cap))
            .collect();
        eprintln!("  {}: interleave-test {ours:?}", bug.name);
        eprintln!("  {}: shuttle         {theirs:?}", bug.name);
        rows.push(format!(
            "| {} | {} | {} |",
            bug.name,
            median_cell(ours, plan.pct_cap),
            median_cell(theirs, plan.pct_cap)
        ));
    }
    rows
}

// ---------------------------------------------------------------------------------------------
// 3. Executions per second of PCT.

/// A runner: runs `model` for the given number of executions and returns how many ran.
type Run = fn(fn(), u64) -> u64;

fn ours_pct(model: fn(), executions: u64) -> u64 {
    let strategy = StrategyKind::Pct { depth: PCT_DEPTH };
    let builder = Builder::new()
        .seed(1)
        .iterations(executions)
        .strategy(strategy);
    match builder.check(model) {
        Ok(report) => report.executions,
        Err(failure) => panic!("interleave-test: a passing model failed:\n{failure}"),
    }
}

fn shuttle_pct(model: fn(), executions: u64) -> u64 {
    let scheduler = PctScheduler::new_from_seed(1, PCT_DEPTH as usize, as_usize(executions));
    let runner = shuttle::Runner::new(scheduler, shuttle::Config::new());
    match quietly(|| runner.run(model)) {
        Ok(n) => as_u64(n),
        Err(payload) => panic!("shuttle: a passing model failed: {}", message(&*payload)),
    }
}

/// Executions per second of one run of `executions` executions, and its wall time.
fn rate(run: Run, model: fn(), executions: u64) -> (f64, Duration) {
    let (done, t) = timed(|| run(model, executions));
    assert_eq!(done, executions, "the runner stopped early");
    (executions as f64 / t.as_secs_f64(), t)
}

const QUICK_EXECUTIONS: u64 = 200;
const MIN_RUN: Duration = Duration::from_secs(1);

/// As in the throughput bench: 1,000 executions, times 4 until a run takes at least 1 s; the
/// median rate of that run and two more of its length (quick: one run of 200).
fn median_rate(run: Run, model: fn(), quick: bool) -> f64 {
    if quick {
        return rate(run, model, QUICK_EXECUTIONS).0;
    }
    let mut executions = 1_000;
    let mut first = rate(run, model, executions);
    while first.1 < MIN_RUN {
        executions *= 4;
        first = rate(run, model, executions);
    }
    let mut rates = [
        first.0,
        rate(run, model, executions).0,
        rate(run, model, executions).0,
    ];
    rates.sort_by(f64::total_cmp);
    rates[1]
}

fn measure_pct_rate(plan: Plan) -> Vec<String> {
    let mut rows = Vec::new();
    for Passing {
        name,
        ours,
        shuttle,
        ..
    } in &PASSING
    {
        let a = median_rate(ours_pct, *ours, plan.quick);
        let b = median_rate(shuttle_pct, *shuttle, plan.quick);
        eprintln!("  {name}: {a:.0} vs {b:.0} exec/s");
        rows.push(format!("| {name} | {a:.0} | {b:.0} | {:.3} |", a / b));
    }
    rows
}

// ---------------------------------------------------------------------------------------------
// 4. The bug that needs two preemptions.

/// Our DFS on `two_preemptions`: (found, executions run).
fn ours_two(bound: Option<u32>) -> (bool, u64) {
    let strategy = StrategyKind::Dfs {
        max_preemptions: bound,
    };
    match Builder::new()
        .iterations(u64::MAX)
        .strategy(strategy)
        .check(two_ours::two_preemptions)
    {
        Ok(report) => {
            assert!(report.exhausted, "DFS stopped before the end of its search");
            (false, report.executions)
        }
        Err(failure) => {
            assert_eq!(failure.kind(), FailureKind::Panic, "{failure}");
            (true, failure.iteration() + 1)
        }
    }
}

/// loom on `two_preemptions`: (found, executions run). A failure is loom's panic.
fn loom_two(bound: Option<usize>) -> (bool, u64) {
    let count = Arc::new(AtomicUsize::new(0));
    let f = counted(two_loom::two_preemptions, &count);
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = bound;
    let found = match quietly(move || builder.check(f)) {
        Ok(()) => false,
        Err(payload) => {
            let msg = message(&*payload);
            assert!(
                msg.contains("the reader ran between"),
                "loom failed with {msg:?}"
            );
            true
        }
    };
    (found, as_u64(count.load(Relaxed)))
}

fn two_row(tool: &str, bound: String, (found, executions): (bool, u64)) -> String {
    let found = if found { "found" } else { "**not found**" };
    format!("| {tool} | {bound} | {found} | {executions} |")
}

fn measure_two_preemptions() -> Vec<String> {
    let mut rows = Vec::new();
    for bound in [Some(1), Some(2), Some(3), None] {
        let tool = "loom Builder";
        rows.push(two_row(
            tool,
            bound_cell(bound),
            loom_two(bound.map(|b: u32| b as usize)),
        ));
    }
    for bound in [Some(1), Some(2), Some(3), None] {
        rows.push(two_row(
            "interleave-test DFS",
            bound_cell(bound),
            ours_two(bound),
        ));
    }
    rows
}

fn main() {
    let plan = Plan::from_env();
    // shuttle installs its panic hook at its first execution; let that happen here, inside
    // `quietly`, which then removes it.
    quietly(|| shuttle::check_random(|| {}, 1)).expect("an empty shuttle model passes");
    eprintln!("quick mode: {}", plan.quick);

    eprintln!("1. executions to exhaust ...");
    let rows = measure_exhaustion(plan);
    print_table(
        "1. Executions to exhaust (DFS)",
        &[
            "model",
            "tool",
            "preemption bound",
            "executions",
            "exhausted",
            "wall time",
            "executions / loom's",
            "time / loom's",
        ],
        3,
        &rows,
    );

    eprintln!("2. executions to the first failure ...");
    let rows = measure_first_failure(plan);
    let title = format!(
        "2. Executions to the first failure, PCT depth {PCT_DEPTH}: median over seeds 1..={} \
         (cap {} executions per seed)",
        plan.seeds, plan.pct_cap
    );
    print_table(&title, &["model", "interleave-test", "shuttle"], 1, &rows);

    eprintln!("3. PCT executions per second ...");
    let rows = measure_pct_rate(plan);
    print_table(
        &format!("3. PCT (depth {PCT_DEPTH}, seed 1) executions per second"),
        &[
            "model",
            "interleave-test exec/s",
            "shuttle exec/s",
            "ratio (ours/shuttle)",
        ],
        1,
        &rows,
    );

    eprintln!("4. the bug that needs two preemptions ...");
    let rows = measure_two_preemptions();
    print_table(
        "4. A bug that needs exactly 2 preemptions (`two_preemptions`)",
        &["tool", "preemption bound", "result", "executions"],
        3,
        &rows,
    );

    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let load = common::load_average();
    println!();
    println!(
        "cores: {cores}; 1-minute load average at the end: {load}; quick mode: {}",
        plan.quick
    );
}
