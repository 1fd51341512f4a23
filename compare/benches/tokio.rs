//! interleave-test's Tokio module (`interleave_test_tokio`) against shuttle-tokio (the
//! `shuttle-tokio` crate with its `shuttle` feature) on identical Tokio-shaped models, in
//! one process: executions per second per core, executions to the first failure of three
//! bugs, and the start-up of a `check` of one execution.
//!
//! | model | what it does |
//! |---|---|
//! | `joinset_channel` | a `JoinSet` of 3 tasks, each sends 2 values on `mpsc::channel(1)`; main receives the 6 and joins the set |
//! | `mutex_tasks` | 3 spawned tasks each lock a Tokio `Mutex<u64>` twice and increment it, with a `yield_now().await` while holding it; main awaits them and checks 6 |
//! | `notify_oneshot` | 3 requests: main calls `notify_one`, a server task wakes from `notified()` and answers on that request's `oneshot`, which main awaits |
//! | `lost_notification` (bug) | a worker calls `ready.notify_one()`, then `notify.notified().await`; main awaits `ready.notified()`, then calls `notify.notify_waiters()`, then awaits the worker: a deadlock when `notify_waiters` runs between the worker's two steps |
//! | `timeout_guard_leak` (bug) | main holds a Tokio mutex over a 1 ms sleep while a task locks it under a 5 ms `timeout`; on the timeout path the task `try_lock`s and forgets the guard, so main's next `lock` deadlocks |
//! | `cancel_unsafe_select` (bug) | a loop `select!`s between a receive that awaits again after taking a value and a 1 ms `sleep`; the sender sends 2 values and drops its end; a value is lost when the tick wins after the receive took it (an assertion fails) |
//!
//! 1. **Executions per second per core** on the first three models, random and PCT (depth
//!    3), at parallelism 1, seed 1, measured as `benches/futures.rs` does: each tool's run
//!    is calibrated (1,000 executions, times 4 until a run takes at least 1 s), then three
//!    rounds each run ours once and shuttle-tokio's once, and each tool's median is
//!    printed with the ratio. Each round also runs ours without spurious polls
//!    (`spurious_wakeups(false)`; shuttle has none), the same search as shuttle's.
//! 2. **Executions to the first failure** of the three bugs: seeds 1 to 10, random and
//!    PCT, each search capped at 10,000 executions; the median over the 10 seeds (a seed
//!    that found nothing counts as more than the cap), how many found it, the range of
//!    those that did, and the wall time of the 10 searches. Ours counts
//!    `failure.iteration() + 1`; shuttle's model closure counts its own runs, so its count
//!    includes the failing one too.
//! 3. **Start-up**: the median of 200 `check`s of one execution of `joinset_channel`.
//!
//! Both tools run with their defaults otherwise: ours explores spurious polls (a wait
//! between polls may end without a wake) and shuttle does not. shuttle-tokio does not
//! model time: its `sleep` is a yield and then ready, and its `timeout` elapses only when
//! a test calls its `trigger_timeouts`, so `timeout_guard_leak` cannot fail under it, and
//! its `select!` tick is ready at its first poll. The models are in `benches/tokio/`.
//!
//! Run it with `cargo bench --bench tokio` (about four minutes after the build);
//! `INTERLEAVE_BENCH_QUICK=1` runs each throughput model 200 times, once, and the bug
//! searches with 2 seeds capped at 2,000 executions, to check that everything builds and
//! behaves. Panic messages of model threads are not printed: the panic hook is a no-op
//! while shuttle runs, and ours records them silently; shuttle still writes each failing
//! seed to stderr, the tables go to stdout.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use interleave_test::{Builder, FailureKind};

#[macro_use]
#[path = "tokio/models.rs"]
mod models;
#[path = "support/mod.rs"]
#[allow(dead_code, reason = "this bench uses a few of the shared helpers")]
mod support;
use support::randomized::{Kind, shuttle_runs};
use support::{count_cell, print_table, quick_mode};

tokio_models!(ours, interleave_test, interleave_test_tokio);
tokio_models!(theirs, shuttle, shuttle_tokio);

/// Ours: `executions` executions from `seed`, one at a time.
fn ours_builder(kind: Kind, seed: u64, executions: u64) -> Builder {
    Builder::new()
        .seed(seed)
        .strategy(kind.ours())
        .parallelism(1)
        .iterations(executions)
}

fn run_ours(kind: Kind, model: fn(), executions: u64) -> u64 {
    run_ours_with(ours_builder(kind, 1, executions), model)
}

/// Ours without spurious polls (shuttle has none), to compare the same search.
fn run_ours_no_spurious(kind: Kind, model: fn(), executions: u64) -> u64 {
    run_ours_with(
        ours_builder(kind, 1, executions).spurious_wakeups(false),
        model,
    )
}

fn run_ours_with(builder: Builder, model: fn()) -> u64 {
    match builder.check(model) {
        Ok(report) => report.executions,
        Err(failure) => panic!("interleave-test: a benchmark model failed:\n{failure}"),
    }
}

fn run_shuttle(kind: Kind, model: fn(), executions: u64) -> u64 {
    match shuttle_runs(kind, 1, model, executions) {
        Ok(done) => done as u64,
        Err(_) => panic!("shuttle-tokio: a benchmark model failed"),
    }
}

type Run = fn(Kind, fn(), u64) -> u64;

/// A timed run of `n` executions of `model` under `run`.
fn timed(run: Run, kind: Kind, model: fn(), n: u64) -> Duration {
    let start = Instant::now();
    assert_eq!(run(kind, model, n), n, "the runner stopped early");
    start.elapsed()
}

/// The number of executions that takes at least 1 s: 1,000, times 4 until it does.
fn calibrate(run: Run, kind: Kind, model: fn()) -> u64 {
    let mut n = 1_000;
    while timed(run, kind, model, n) < Duration::from_secs(1) {
        n *= 4;
    }
    n
}

/// Executions per second on one model of ours, ours without spurious polls and
/// shuttle-tokio's, in that order: after calibrating each, three rounds of one run of each,
/// so that a drift of the machine's load weighs on all alike; the median of each one's
/// three (one run of 200 in quick mode).
fn measure_row(kind: Kind, mine: fn(), theirs: fn(), quick: bool) -> [f64; 3] {
    let runs: [(Run, fn()); 3] = [
        (run_ours, mine),
        (run_ours_no_spurious, mine),
        (run_shuttle, theirs),
    ];
    let rate =
        |(run, model): (Run, fn()), n: u64| n as f64 / timed(run, kind, model, n).as_secs_f64();
    if quick {
        return runs.map(|r| rate(r, 200));
    }
    let sizes = runs.map(|(run, model)| calibrate(run, kind, model));
    let mut rates = [(); 3].map(|()| Vec::new());
    for _ in 0..3 {
        for (i, r) in runs.into_iter().enumerate() {
            rates[i].push(rate(r, sizes[i]));
        }
    }
    rates.map(|mut v| {
        v.sort_by(f64::total_cmp);
        v[1]
    })
}

/// The median time of one `check` of one execution of `model`.
fn start_up(run: Run, model: fn(), quick: bool) -> Duration {
    let mut times: Vec<Duration> = (0..if quick { 5 } else { 200 })
        .map(|_| {
            let start = Instant::now();
            run(Kind::Random, model, 1);
            start.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

/// A model's name and the model as written for each tool.
type Model = (&'static str, fn(), fn());

/// Measurement 1: one row per model and strategy.
fn measure_throughput(quick: bool) -> Vec<String> {
    let models: [Model; 3] = [
        (
            "joinset_channel",
            ours::joinset_channel,
            theirs::joinset_channel,
        ),
        ("mutex_tasks", ours::mutex_tasks, theirs::mutex_tasks),
        (
            "notify_oneshot",
            ours::notify_oneshot,
            theirs::notify_oneshot,
        ),
    ];
    let mut rows = Vec::new();
    for (name, mine, theirs) in models {
        for kind in [Kind::Random, Kind::Pct] {
            let [a, q, b] = measure_row(kind, mine, theirs, quick);
            rows.push(format!(
                "| {name} | {kind:?} | {a:.0} | {b:.0} | {:.2} | {q:.0} | {:.2} |",
                a / b,
                q / b
            ));
        }
    }
    rows
}

/// How many seeds, and the cap of each search, for measurement 2.
#[derive(Clone, Copy, Debug)]
struct BugPlan {
    seeds: u64,
    cap: u64,
}

/// Ours from `seed`: the executions to the first failure, which must be of `expected`'s
/// kind, or `None` when `cap` executions found none.
fn ours_first_failure(
    kind: Kind,
    model: fn(),
    expected: FailureKind,
    seed: u64,
    cap: u64,
) -> Option<u64> {
    match ours_builder(kind, seed, cap).check(model) {
        Ok(report) => {
            assert_eq!(
                report.executions, cap,
                "ours stopped early without a failure"
            );
            None
        }
        Err(failure) => {
            assert_eq!(failure.kind(), expected, "{failure}");
            Some(failure.iteration() + 1)
        }
    }
}

/// shuttle-tokio from `seed`: the executions to the first failure, whose panic message
/// must contain `expected`, or `None` when `cap` executions found none.
fn shuttle_first_failure(
    kind: Kind,
    model: fn(),
    expected: &str,
    seed: u64,
    cap: u64,
) -> Option<u64> {
    let count = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&count);
    let counted = move || {
        counter.fetch_add(1, Relaxed);
        model();
    };
    match shuttle_runs(kind, seed, counted, cap) {
        Ok(done) => {
            assert_eq!(done as u64, cap, "shuttle stopped early without a failure");
            None
        }
        Err(payload) => {
            let text = panic_text(&*payload);
            assert!(
                text.contains(expected),
                "shuttle-tokio failed otherwise: {text}"
            );
            Some(count.load(Relaxed))
        }
    }
}

/// The text of a panic payload.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string payload".to_owned())
}

/// One table row from the results of every seed: the median (more than the cap when the
/// middle seeds found nothing), how many found it, their range, and the wall time.
fn bug_row(label: &str, found: &[Option<u64>], plan: BugPlan, time: Duration) -> String {
    let mut sorted: Vec<u64> = found.iter().map(|f| f.unwrap_or(u64::MAX)).collect();
    sorted.sort_unstable();
    let (lo, hi) = (sorted[(sorted.len() - 1) / 2], sorted[sorted.len() / 2]);
    let median = if hi == u64::MAX {
        format!("> {}", count_cell(plan.cap))
    } else if lo == hi {
        count_cell(lo)
    } else if (lo + hi).is_multiple_of(2) {
        count_cell((lo + hi) / 2)
    } else {
        format!("{}.5", count_cell((lo + hi) / 2))
    };
    let hits: Vec<u64> = found.iter().flatten().copied().collect();
    let range = match (hits.iter().min(), hits.iter().max()) {
        (Some(a), Some(b)) => format!("{} to {}", count_cell(*a), count_cell(*b)),
        _ => format!("not found in {}", count_cell(plan.cap)),
    };
    format!(
        "| {label} | {median} | {} of {} | {range} | {:.2} s |",
        hits.len(),
        found.len(),
        time.as_secs_f64()
    )
}

/// A bug model: its name, ours and theirs, the failure ours must report and the text
/// shuttle's panic must contain. Each is searched under both tools, those shuttle-tokio
/// cannot express too, to show what it finds.
type Bug = (&'static str, fn(), fn(), FailureKind, &'static str);

/// Measurement 2: one row per model, tool and strategy.
fn measure_bugs(plan: BugPlan) -> Vec<String> {
    let bugs: [Bug; 3] = [
        (
            "lost_notification",
            ours::lost_notification,
            theirs::lost_notification,
            FailureKind::Deadlock,
            "deadlock",
        ),
        (
            "timeout_guard_leak",
            ours::timeout_guard_leak,
            theirs::timeout_guard_leak,
            FailureKind::Deadlock,
            "deadlock",
        ),
        (
            "cancel_unsafe_select",
            ours::cancel_unsafe_select,
            theirs::cancel_unsafe_select,
            FailureKind::Panic,
            "a value was lost",
        ),
    ];
    let mut rows = Vec::new();
    for (name, mine, theirs, kind_ours, text_theirs) in bugs {
        for kind in [Kind::Random, Kind::Pct] {
            let start = Instant::now();
            let found: Vec<_> = (1..=plan.seeds)
                .map(|seed| ours_first_failure(kind, mine, kind_ours, seed, plan.cap))
                .collect();
            let label = format!("{name} | interleave-test | {kind:?}");
            rows.push(bug_row(&label, &found, plan, start.elapsed()));
            let start = Instant::now();
            let found: Vec<_> = (1..=plan.seeds)
                .map(|seed| shuttle_first_failure(kind, theirs, text_theirs, seed, plan.cap))
                .collect();
            let label = format!("{name} | shuttle-tokio | {kind:?}");
            rows.push(bug_row(&label, &found, plan, start.elapsed()));
        }
    }
    rows
}

fn main() {
    let quick = quick_mode();
    eprintln!("quick mode: {quick}");
    eprintln!("1. executions per second ...");
    let rows = measure_throughput(quick);
    print_table(
        "1. Executions per second per core (parallelism 1, seed 1)",
        &[
            "model",
            "strategy",
            "interleave-test exec/s",
            "shuttle-tokio exec/s",
            "ratio (ours/shuttle-tokio)",
            "ours, no spurious polls",
            "ratio",
        ],
        2,
        &rows,
    );

    eprintln!("2. executions to the first failure ...");
    let plan = if quick {
        BugPlan {
            seeds: 2,
            cap: 2_000,
        }
    } else {
        BugPlan {
            seeds: 10,
            cap: 10_000,
        }
    };
    let rows = measure_bugs(plan);
    print_table(
        &format!(
            "2. Executions to the first failure (seeds 1 to {}, each capped at {})",
            plan.seeds,
            count_cell(plan.cap)
        ),
        &[
            "model",
            "tool",
            "strategy",
            "median",
            "found",
            "range of those found",
            "time, all seeds",
        ],
        3,
        &rows,
    );

    eprintln!("3. start-up ...");
    let a = start_up(run_ours, ours::joinset_channel, quick);
    let b = start_up(run_shuttle, theirs::joinset_channel, quick);
    println!();
    println!(
        "3. Start-up of a check of one execution (joinset_channel): interleave-test {a:?}, \
         shuttle-tokio {b:?}, ratio {:.2}",
        a.as_secs_f64() / b.as_secs_f64()
    );
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let load = support::load_average();
    println!();
    println!("cores: {cores}; 1-minute load average at the end: {load}; quick mode: {quick}");
}
