//! Instructions per execution, counted by callgrind: the measure of an engine change that
//! wall time on a shared machine cannot resolve (its spread is about ±10% here, callgrind's
//! well under 1%). Build the bench at the base and at the change, and compare.
//!
//! `cargo bench --bench instructions` runs each model under `valgrind --tool=callgrind` twice,
//! for `SHORT` and `LONG` executions (PCT, depth 3, seed 1, one driver), and prints the
//! difference of the two counts over the difference of the executions: the cost of one
//! execution, without the start-up. It says so and ends if valgrind is not installed.
//! `INTERLEAVE_BENCH_QUICK=1` runs fewer executions. Run directly with a model's name and a
//! count, it runs that model that many times (what valgrind runs).

use std::process::Command;

use interleave_test::sync::Arc;
use interleave_test::sync::atomic::{AtomicUsize, Ordering};
use interleave_test::{Builder, StrategyKind, future, thread};

#[allow(dead_code, reason = "this bench runs one of the shared models")]
#[macro_use]
mod models;

/// One thread adds to an atomic 20 times while the main thread reads it 20 times.
fn atomics_2x20() {
    let a = Arc::new(AtomicUsize::new(0));
    let b = Arc::clone(&a);
    let adder = thread::spawn(move || {
        for _ in 0..20 {
            b.fetch_add(1, Ordering::SeqCst);
        }
    });
    for _ in 0..20 {
        a.load(Ordering::SeqCst);
    }
    adder.join().unwrap();
}

/// A task sends 3 values on a bounded Tokio channel, each after adding it under a Tokio
/// mutex, which `block_on`'s future receives and adds under the same mutex.
fn tokio_channel_mutex() {
    future::block_on(async {
        let (tx, mut rx) = interleave_test_tokio::sync::mpsc::channel::<u32>(1);
        let total = std::sync::Arc::new(interleave_test_tokio::sync::Mutex::new(0u32));
        let mine = std::sync::Arc::clone(&total);
        let sender = future::spawn(async move {
            for v in 1..=3 {
                *mine.lock().await += v;
                tx.send(v).await.unwrap();
            }
        });
        while let Some(v) = rx.recv().await {
            *total.lock().await += v;
        }
        sender.await.unwrap();
    });
}

/// The models, by name.
const MODELS: [(&str, fn()); 3] = [
    ("mutex_3x2", models::ours::mutex_3x2),
    ("atomics_2x20", atomics_2x20),
    ("tokio_channel_mutex", tokio_channel_mutex),
];

/// Runs model `name` for `n` executions.
fn run(name: &str, n: u64) {
    let (_, model) = MODELS
        .iter()
        .find(|(m, _)| *m == name)
        .unwrap_or_else(|| panic!("no model named {name}"));
    let report = Builder::new()
        .strategy(StrategyKind::Pct { depth: 3 })
        .seed(1)
        .iterations(n)
        .parallelism(1)
        .check(model)
        .expect("the models pass");
    assert_eq!(report.executions, n, "{name}");
}

/// The instructions callgrind counts for `n` executions of model `name`.
fn instructions(name: &str, n: u64) -> u64 {
    let exe = std::env::current_exe().expect("the bench's path");
    let out = std::env::temp_dir().join(format!("interleave-callgrind-{name}-{n}.out"));
    let status = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(&exe)
        .args([name, &n.to_string()])
        .output()
        .expect("valgrind runs");
    assert!(status.status.success(), "{name} under valgrind: {status:?}");
    let text = std::fs::read_to_string(&out).expect("callgrind's output");
    let _ = std::fs::remove_file(&out);
    text.lines()
        .find_map(|l| {
            l.strip_prefix("summary: ")
                .or_else(|| l.strip_prefix("totals: "))
        })
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("a summary line")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [name, n] = args.as_slice()
        && let Ok(n) = n.parse()
    {
        return run(name, n);
    }
    if Command::new("valgrind").arg("--version").output().is_err() {
        println!("valgrind is not installed (Debian: apt install valgrind): nothing measured");
        return;
    }
    let quick = std::env::var("INTERLEAVE_BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0");
    let (short, long) = if quick { (100, 300) } else { (1000, 3000) };
    println!("### Instructions per execution (callgrind; PCT depth 3, seed 1, one driver)");
    println!("| model | instructions / execution |\n|---|---:|");
    for (name, _) in MODELS {
        let per = (instructions(name, long) - instructions(name, short)) / (long - short);
        println!("| {name} | {per} |");
    }
}
