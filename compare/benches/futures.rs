//! Executions per second on async models: interleave-test's `future` module against
//! shuttle's, random and PCT (depth 3), one execution at a time (per core), on identical
//! models; and the start-up of an async `check` of one execution.
//!
//! | model | what it does |
//! |---|---|
//! | `spawn_join_8` | spawns 8 tasks returning their index; `block_on` joins them in order |
//! | `mutex_across_await` | two threads each `block_on` a future that holds a mutex across a `yield_now().await`, twice |
//! | `channel_5` | a task sends 5 values on a `futures::channel::mpsc` channel of capacity 1; `block_on` receives them |
//!
//! Ours explores spurious polls (a wait between polls may end without a wake, a decision)
//! and shuttle does not: each `Pending` may then cost another poll. `channel_5`, whose
//! futures return `Pending` most often, runs a second time with `spurious_wakeups(false)`
//! to compare the same search.
//!
//! Each model is written once, in `models!`, and expanded over each tool's `future`,
//! `sync` and `thread`. Both tools run with seed 1. Each tool's run is calibrated as in
//! `throughput.rs` (1,000 executions, times 4 until a run takes at least 1 s); then three
//! rounds each run ours once and shuttle's once, alternating so that a change of the
//! machine's load weighs on both, and each tool's median is reported. Start-up: the median of 200
//! `check`s of one execution of `spawn_join_8`.
//!
//! Run it with `cargo bench --bench futures` (a few minutes); `INTERLEAVE_BENCH_QUICK=1`
//! runs each model 200 times, once, to check that everything builds and passes.

use std::time::{Duration, Instant};

use interleave_test::{Builder, StrategyKind};
use shuttle::scheduler::{PctScheduler, RandomScheduler};

macro_rules! models {
    ($name:ident, $krate:ident) => {
        mod $name {
            use futures::{SinkExt, StreamExt};
            use $krate::future;
            use $krate::sync::{Arc, Mutex};
            use $krate::thread;

            pub(crate) fn spawn_join_8() {
                let tasks: Vec<_> = (0..8u32).map(|i| future::spawn(async move { i })).collect();
                let total = future::block_on(async {
                    let mut total = 0;
                    for t in tasks {
                        total += t.await.unwrap();
                    }
                    total
                });
                assert_eq!(total, 28);
            }

            pub(crate) fn mutex_across_await() {
                let m = Arc::new(Mutex::new(0u32));
                let workers: Vec<_> = (0..2)
                    .map(|_| {
                        let m = Arc::clone(&m);
                        thread::spawn(move || {
                            future::block_on(async move {
                                for _ in 0..2 {
                                    let mut g = m.lock().unwrap();
                                    future::yield_now().await;
                                    *g += 1;
                                }
                            })
                        })
                    })
                    .collect();
                for w in workers {
                    w.join().unwrap();
                }
                assert_eq!(*m.lock().unwrap(), 4);
            }

            pub(crate) fn channel_5() {
                let (mut tx, mut rx) = futures::channel::mpsc::channel::<u32>(1);
                let producer = future::spawn(async move {
                    for v in 0..5 {
                        tx.send(v).await.unwrap();
                    }
                });
                let sum = future::block_on(async {
                    let mut sum = 0;
                    while let Some(v) = rx.next().await {
                        sum += v;
                    }
                    sum
                });
                assert_eq!(sum, 10);
                drop(producer);
            }
        }
    };
}

models!(ours, interleave_test);
models!(theirs, shuttle);

/// A strategy of both tools.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Random,
    Pct,
}

const PCT_DEPTH: u32 = 3;

fn run_ours(kind: Kind, model: fn(), executions: u64) -> u64 {
    run_ours_with(kind, model, executions, true)
}

/// Ours without spurious polls (shuttle has none), to compare the same search.
fn run_ours_no_spurious(kind: Kind, model: fn(), executions: u64) -> u64 {
    run_ours_with(kind, model, executions, false)
}

fn run_ours_with(kind: Kind, model: fn(), executions: u64, spurious: bool) -> u64 {
    let strategy = match kind {
        Kind::Random => StrategyKind::Random,
        Kind::Pct => StrategyKind::Pct { depth: PCT_DEPTH },
    };
    let builder = Builder::new()
        .seed(1)
        .strategy(strategy)
        .parallelism(1)
        .spurious_wakeups(spurious)
        .iterations(executions);
    match builder.check(model) {
        Ok(report) => report.executions,
        Err(failure) => panic!("interleave-test: a benchmark model failed:\n{failure}"),
    }
}

fn run_shuttle(kind: Kind, model: fn(), executions: u64) -> u64 {
    let n = executions as usize;
    let config = shuttle::Config::new();
    let done = match kind {
        Kind::Random => {
            shuttle::Runner::new(RandomScheduler::new_from_seed(1, n), config).run(model)
        }
        Kind::Pct => shuttle::Runner::new(
            PctScheduler::new_from_seed(1, PCT_DEPTH as usize, n),
            config,
        )
        .run(model),
    };
    done as u64
}

type Run = fn(Kind, fn(), u64) -> u64;

/// A model's name, how ours runs it, and the model as written for each tool.
type Model = (&'static str, Run, fn(), fn());

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

/// Executions per second of both tools on one model: after calibrating each, three rounds
/// of one run of ours then one of shuttle's, so that a drift of the machine's load weighs
/// on both alike; the median of each tool's three (one quick run each in quick mode).
fn measure_pair(
    kind: Kind,
    (run_mine, mine): (Run, fn()),
    theirs: fn(),
    quick: bool,
) -> (f64, f64) {
    let rate = |run: Run, model: fn(), n: u64| n as f64 / timed(run, kind, model, n).as_secs_f64();
    if quick {
        return (rate(run_mine, mine, 200), rate(run_shuttle, theirs, 200));
    }
    let (n_a, n_b) = (
        calibrate(run_mine, kind, mine),
        calibrate(run_shuttle, kind, theirs),
    );
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        a.push(rate(run_mine, mine, n_a));
        b.push(rate(run_shuttle, theirs, n_b));
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[1]
    };
    (median(a), median(b))
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

fn main() {
    let quick = std::env::var("INTERLEAVE_BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0");
    let models: [Model; 4] = [
        (
            "spawn_join_8",
            run_ours,
            ours::spawn_join_8,
            theirs::spawn_join_8,
        ),
        (
            "mutex_across_await",
            run_ours,
            ours::mutex_across_await,
            theirs::mutex_across_await,
        ),
        ("channel_5", run_ours, ours::channel_5, theirs::channel_5),
        (
            "channel_5, no spurious polls",
            run_ours_no_spurious,
            ours::channel_5,
            theirs::channel_5,
        ),
    ];
    println!(
        "| model | strategy | interleave-test exec/s | shuttle exec/s | ratio (ours/shuttle) |"
    );
    println!("|---|---|---:|---:|---:|");
    for (name, run_mine, mine, theirs) in models {
        for kind in [Kind::Random, Kind::Pct] {
            let (a, b) = measure_pair(kind, (run_mine, mine), theirs, quick);
            println!("| {name} | {kind:?} | {a:.0} | {b:.0} | {:.2} |", a / b);
        }
    }
    let a = start_up(run_ours, ours::spawn_join_8, quick);
    let b = start_up(run_shuttle, theirs::spawn_join_8, quick);
    println!();
    println!(
        "start-up of a check of one execution (spawn_join_8): interleave-test {a:?}, shuttle \
         {b:?}, ratio {:.2}",
        a.as_secs_f64() / b.as_secs_f64()
    );
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("cores: {cores}; quick mode: {quick}");
}
