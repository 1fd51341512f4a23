//! Executions per second of interleave-test's random strategy against shuttle's random
//! scheduler, on identical models, in one process.
//!
//! Each model is written once, in the `models!` macro of `benches/models/mod.rs`, and expanded
//! twice: once over `interleave_test::{thread, sync}` and once over `shuttle::{thread, sync}`.
//! Every model passes (no failing assert), so each run performs exactly the executions it
//! asked for.
//!
//! | model | what it does |
//! |---|---|
//! | `fetch_add_2x200` | two threads, each 200 `fetch_add(1, SeqCst)` on one `AtomicUsize`; asserts 400 |
//! | `racy_counter` | two threads, each `load` then `store(v + 1)`; asserts 1 or 2 |
//! | `mutex_3x2` | three threads, each `*m.lock().unwrap() += 1` twice; asserts 6 |
//! | `mpsc_2x3` | two producers send 3 values each; the main thread receives the 6 |
//!
//! Both tools are seeded with 1 (`Builder::new().seed(1)`, `RandomScheduler::new_from_seed(1, n)`).
//! For each model and tool the run length is calibrated: 1,000 executions, times 4 until one
//! run takes at least 1 s; that run and two more of the same length are the three samples, and
//! the median executions/second is reported. For `fetch_add_2x200` the nanoseconds per
//! `fetch_add` (elapsed / (executions * 400)) are printed too.
//!
//! Run it with `cargo bench --bench throughput` (a few minutes). For a smoke run that only
//! checks that everything builds and passes, set `INTERLEAVE_BENCH_QUICK=1`: every model then
//! runs a fixed 200 executions, once (a few seconds). Results depend on the machine and on
//! its load: the core count and the load average (where `/proc/loadavg` exists) are printed
//! with the table.

use std::time::{Duration, Instant};

mod models;

use models::{ours, theirs};

/// One model, as written for each tool.
struct Model {
    name: &'static str,
    ours: fn(),
    theirs: fn(),
    /// Operations per execution, when nanoseconds per operation are reported.
    ops: Option<u64>,
}

const MODELS: [Model; 4] = [
    Model {
        name: "fetch_add_2x200",
        ours: ours::fetch_add_2x200,
        theirs: theirs::fetch_add_2x200,
        ops: Some(400),
    },
    Model {
        name: "racy_counter",
        ours: ours::racy_counter,
        theirs: theirs::racy_counter,
        ops: None,
    },
    Model {
        name: "mutex_3x2",
        ours: ours::mutex_3x2,
        theirs: theirs::mutex_3x2,
        ops: None,
    },
    Model {
        name: "mpsc_2x3",
        ours: ours::mpsc_2x3,
        theirs: theirs::mpsc_2x3,
        ops: None,
    },
];

/// A runner: runs `model` for the given number of executions and returns how many ran.
type Run = fn(fn(), u64) -> u64;

fn run_ours(model: fn(), executions: u64) -> u64 {
    let builder = interleave_test::Builder::new()
        .seed(1)
        .iterations(executions);
    match builder.check(model) {
        Ok(report) => report.executions,
        Err(failure) => panic!("interleave-test: a benchmark model failed:\n{failure}"),
    }
}

fn run_shuttle(model: fn(), executions: u64) -> u64 {
    let scheduler = shuttle::scheduler::RandomScheduler::new_from_seed(1, executions as usize);
    shuttle::Runner::new(scheduler, shuttle::Config::new()).run(model) as u64
}

/// One timed run.
#[derive(Clone, Copy, Debug)]
struct Sample {
    executions: u64,
    elapsed: Duration,
}

impl Sample {
    fn per_second(&self) -> f64 {
        self.executions as f64 / self.elapsed.as_secs_f64()
    }
}

fn timed(run: Run, model: fn(), executions: u64) -> Sample {
    let start = Instant::now();
    let done = run(model, executions);
    let elapsed = start.elapsed();
    assert_eq!(done, executions, "the runner stopped early");
    Sample {
        executions,
        elapsed,
    }
}

const QUICK_EXECUTIONS: u64 = 200;
const MIN_RUN: Duration = Duration::from_secs(1);
const REPETITIONS: usize = 3;

/// The median sample of `model` under `run` (in quick mode, the only sample).
fn measure(tool: &str, model: &Model, run: Run, f: fn(), quick: bool) -> Sample {
    if quick {
        return timed(run, f, QUICK_EXECUTIONS);
    }
    let mut executions = 1_000;
    let mut first = timed(run, f, executions);
    while first.elapsed < MIN_RUN {
        executions *= 4;
        first = timed(run, f, executions);
    }
    let mut samples = vec![first];
    samples.extend((1..REPETITIONS).map(|_| timed(run, f, executions)));
    let rates: Vec<String> = samples
        .iter()
        .map(|s| format!("{:.0}", s.per_second()))
        .collect();
    eprintln!(
        "  {:<16} {:<15} {executions:>8} executions/run, exec/s: {}",
        model.name,
        tool,
        rates.join(", ")
    );
    samples.sort_by(|a, b| a.per_second().total_cmp(&b.per_second()));
    samples[samples.len() / 2]
}

fn main() {
    let quick = std::env::var("INTERLEAVE_BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0");
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    eprintln!(
        "measuring ({}) ...",
        if quick {
            "quick: 200 executions, 1 run"
        } else {
            "calibrated >= 1 s, median of 3"
        }
    );
    let mut rows = Vec::new();
    let mut per_op = Vec::new();
    for model in &MODELS {
        let ours = measure("interleave-test", model, run_ours, model.ours, quick);
        let theirs = measure("shuttle", model, run_shuttle, model.theirs, quick);
        rows.push(format!(
            "| {} | {:.0} | {:.0} | {:.3} |",
            model.name,
            ours.per_second(),
            theirs.per_second(),
            ours.per_second() / theirs.per_second()
        ));
        if let Some(ops) = model.ops {
            let ns = |s: Sample| s.elapsed.as_nanos() as f64 / (s.executions * ops) as f64;
            per_op.push(format!(
                "{}: {:.1} ns/op (interleave-test), {:.1} ns/op (shuttle)",
                model.name,
                ns(ours),
                ns(theirs)
            ));
        }
    }
    println!();
    println!("| model | interleave-test exec/s | shuttle exec/s | ratio (ours/shuttle) |");
    println!("|---|---:|---:|---:|");
    for row in &rows {
        println!("{row}");
    }
    println!();
    for line in &per_op {
        println!("{line}");
    }
    let load = std::fs::read_to_string("/proc/loadavg").ok();
    let load = load
        .as_deref()
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or("unknown");
    println!("cores: {cores}; 1-minute load average at the end: {load}; quick mode: {quick}");
}
