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
//! Each model is written once, in `models!`, and expanded over each tool's `future`,
//! `sync` and `thread`. Both tools run with seed 1. Each run is calibrated as in
//! `throughput.rs`: 1,000 executions, times 4 until a run takes at least 1 s; that run and
//! two more are the samples, and the median is reported. Start-up: the median of 200
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
    let strategy = match kind {
        Kind::Random => StrategyKind::Random,
        Kind::Pct => StrategyKind::Pct { depth: PCT_DEPTH },
    };
    let builder = Builder::new()
        .seed(1)
        .strategy(strategy)
        .parallelism(1)
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

/// A model's name, and the model as written for each tool.
type Model = (&'static str, fn(), fn());

/// Executions per second: the median of three calibrated runs (one quick run in quick mode).
fn measure(run: Run, kind: Kind, model: fn(), quick: bool) -> f64 {
    let timed = |n: u64| {
        let start = Instant::now();
        assert_eq!(run(kind, model, n), n, "the runner stopped early");
        start.elapsed()
    };
    if quick {
        return 200.0 / timed(200).as_secs_f64();
    }
    let mut n = 1_000;
    let mut first = timed(n);
    while first < Duration::from_secs(1) {
        n *= 4;
        first = timed(n);
    }
    let mut rates = vec![n as f64 / first.as_secs_f64()];
    rates.extend((1..3).map(|_| n as f64 / timed(n).as_secs_f64()));
    rates.sort_by(f64::total_cmp);
    rates[1]
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
    let models: [Model; 3] = [
        ("spawn_join_8", ours::spawn_join_8, theirs::spawn_join_8),
        (
            "mutex_across_await",
            ours::mutex_across_await,
            theirs::mutex_across_await,
        ),
        ("channel_5", ours::channel_5, theirs::channel_5),
    ];
    println!(
        "| model | strategy | interleave-test exec/s | shuttle exec/s | ratio (ours/shuttle) |"
    );
    println!("|---|---|---:|---:|---:|");
    for (name, mine, theirs) in models {
        for kind in [Kind::Random, Kind::Pct] {
            let a = measure(run_ours, kind, mine, quick);
            let b = measure(run_shuttle, kind, theirs, quick);
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
