//! How far the progress line's estimates are from the truth on the crate's own models: every
//! search below runs to its end, and the range it would show after each execution (from the
//! thousandth) must hold the number of executions it really took. With `--nocapture` it
//! prints the table behind the factors of `strategy/estimate.rs`. It sits in the entry
//! layer, which may run models; an optimized build also
//! runs larger models (`cargo test --release --lib accuracy -- --nocapture`, about two
//! minutes).

use crate::config::Builder;
use crate::driver::TRACE;
use crate::settings::{Reduction, StrategyKind, Substrate};
use crate::strategy::Estimate;
use crate::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use crate::sync::mpsc::sync_channel;
use crate::sync::{Arc, Barrier, Condvar, Mutex, RwLock};
use crate::thread;

/// A model the estimates are checked on.
struct Model {
    name: &'static str,
    run: fn(),
}

fn join_all(handles: Vec<thread::JoinHandle<()>>) {
    for h in handles {
        h.join().unwrap();
    }
}

/// `T` threads each taking a lock `L` times.
fn mutex<const T: usize, const L: usize>() {
    let m = Arc::new(Mutex::new(0));
    let hs = (0..T)
        .map(|_| {
            let m = Arc::clone(&m);
            thread::spawn(move || {
                for _ in 0..L {
                    *m.lock().unwrap() += 1;
                }
            })
        })
        .collect();
    join_all(hs);
}

fn rwlock_2r1w() {
    let l = Arc::new(RwLock::new(0));
    let mut hs: Vec<_> = (0..2)
        .map(|_| {
            let l = Arc::clone(&l);
            thread::spawn(move || {
                let _ = *l.read().unwrap();
                let _ = *l.read().unwrap();
            })
        })
        .collect();
    let w = Arc::clone(&l);
    hs.push(thread::spawn(move || *w.write().unwrap() += 1));
    join_all(hs);
}

fn condvar_1p1c() {
    let pair = Arc::new((Mutex::new(0), Condvar::new()));
    let p = Arc::clone(&pair);
    let producer = thread::spawn(move || {
        for _ in 0..2 {
            *p.0.lock().unwrap() += 1;
            p.1.notify_one();
        }
    });
    let mut got = pair.0.lock().unwrap();
    while *got < 2 {
        got = pair.1.wait(got).unwrap();
    }
    drop(got);
    producer.join().unwrap();
}

fn mpsc_2x2() {
    let (tx, rx) = sync_channel(1);
    let hs = (0..2)
        .map(|i| {
            let tx = tx.clone();
            thread::spawn(move || {
                for j in 0..2 {
                    tx.send(i * 10 + j).unwrap();
                }
            })
        })
        .collect();
    drop(tx);
    while rx.recv().is_ok() {}
    join_all(hs);
}

/// `T` threads each making two dependent updates of one atomic.
fn atomics<const T: usize>() {
    let n = Arc::new(AtomicUsize::new(0));
    let hs = (0..T)
        .map(|_| {
            let n = Arc::clone(&n);
            thread::spawn(move || {
                n.fetch_add(1, SeqCst);
                n.fetch_add(n.load(SeqCst) % 2, SeqCst);
            })
        })
        .collect();
    join_all(hs);
}

/// `T` threads meeting at a barrier between two atomic accesses.
fn barrier<const T: usize>() {
    let b = Arc::new(Barrier::new(T));
    let n = Arc::new(AtomicUsize::new(0));
    let hs = (0..T)
        .map(|_| {
            let (b, n) = (Arc::clone(&b), Arc::clone(&n));
            thread::spawn(move || {
                n.fetch_add(1, SeqCst);
                b.wait();
                n.load(SeqCst);
            })
        })
        .collect();
    join_all(hs);
}

/// One long thread and two short ones: a lopsided tree.
fn lopsided() {
    let n = Arc::new(AtomicUsize::new(0));
    let long = Arc::clone(&n);
    let mut hs = vec![thread::spawn(move || {
        for _ in 0..6 {
            long.fetch_add(1, SeqCst);
        }
    })];
    for _ in 0..2 {
        let n = Arc::clone(&n);
        hs.push(thread::spawn(move || {
            n.store(0, SeqCst);
        }));
    }
    join_all(hs);
}

fn spin_flag() {
    let flag = Arc::new(AtomicBool::new(false));
    let n = Arc::new(AtomicUsize::new(0));
    let (f, m) = (Arc::clone(&flag), Arc::clone(&n));
    let setter = thread::spawn(move || {
        m.fetch_add(1, SeqCst);
        f.store(true, SeqCst);
    });
    let m = Arc::clone(&n);
    let other = thread::spawn(move || {
        m.fetch_add(1, SeqCst);
    });
    while !flag.load(SeqCst) {
        thread::yield_now();
    }
    join_all(vec![setter, other]);
}

const MODELS: &[Model] = &[
    Model {
        name: "mutex_3x2",
        run: mutex::<3, 2>,
    },
    Model {
        name: "rwlock_2r1w",
        run: rwlock_2r1w,
    },
    Model {
        name: "condvar_1p1c",
        run: condvar_1p1c,
    },
    Model {
        name: "mpsc_2x2",
        run: mpsc_2x2,
    },
    Model {
        name: "atomics_3x2",
        run: atomics::<3>,
    },
    Model {
        name: "barrier_3",
        run: barrier::<3>,
    },
    Model {
        name: "lopsided",
        run: lopsided,
    },
    Model {
        name: "spin_flag",
        run: spin_flag,
    },
];

/// Larger models, run in optimized builds only (`cargo test --release --lib accuracy`).
const LARGER: &[Model] = &[
    Model {
        name: "mutex_3x3",
        run: mutex::<3, 3>,
    },
    Model {
        name: "atomics_4x2",
        run: atomics::<4>,
    },
    Model {
        name: "barrier_4",
        run: barrier::<4>,
    },
];

/// The searches each model is run under.
const SEARCHES: &[(&str, Reduction, Option<u32>)] = &[
    ("dpor", Reduction::Dpor, None),
    ("dfs", Reduction::Off, None),
    ("dfs<=2", Reduction::Off, Some(2)),
    ("dpor<=2", Reduction::Dpor, Some(2)),
];

/// Shares of the search at which the table compares the estimates with the truth.
const AT: &[f64] = &[0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9];

/// The range must hold the true total from this execution on: the progress line first shows
/// after two seconds, thousands of executions into any search.
const CHECKED_FROM: usize = 1_000;

/// The estimates shown after each execution of a full search of `model`, and its total;
/// `None` if it takes more than `limit` executions.
fn trace(
    model: &Model,
    (reduction, bound): (Reduction, Option<u32>),
    limit: u64,
) -> Option<(Vec<Estimate>, u64)> {
    TRACE.with(|t| *t.borrow_mut() = Some(Vec::new()));
    let report = Builder::new()
        .strategy(StrategyKind::Dfs {
            max_preemptions: bound,
        })
        .reduction(reduction)
        .substrate(Substrate::Coroutines)
        .iterations(limit)
        .check(model.run)
        .unwrap_or_else(|f| panic!("{}: {f}", model.name));
    let trace = TRACE.with(|t| t.borrow_mut().take()).unwrap_or_default();
    report.exhausted.then_some((trace, report.executions))
}

/// A row of the table: Knuth's and the weighted estimate over the truth at each share of
/// `AT`, and how many of the checked ranges held the truth.
fn row(trace: &[Estimate], total: u64) -> (String, usize, usize) {
    let mut row = String::new();
    for &share in AT {
        let i = ((share * total as f64) as usize).clamp(1, trace.len()) - 1;
        let k = trace[i].knuth / total as f64;
        let w = trace[i].weighted() / total as f64;
        row.push_str(&format!(" | {k:>7.2} {w:>5.2}"));
    }
    let checked = trace.get(CHECKED_FROM - 1..).unwrap_or_default();
    let held = checked
        .iter()
        .filter(|e| {
            let (low, high) = e.range();
            (low..=high).contains(&(total as f64))
        })
        .count();
    let ratios = checked.iter().map(|e| total as f64 / e.weighted());
    let (lo, hi) = ratios.fold((f64::MAX, 0.0_f64), |(lo, hi), r| (lo.min(r), hi.max(r)));
    if !checked.is_empty() {
        row.push_str(&format!(" | true/weighted {lo:.2}..{hi:.2}"));
    }
    (row, held, checked.len())
}

/// Runs every model under every search, prints the table (with `--nocapture`), and returns
/// the searches whose range missed the truth.
fn measure(models: &[Model], limit: u64) -> Vec<String> {
    let mut missed = Vec::new();
    for model in models {
        for &(search, reduction, bound) in SEARCHES {
            let Some((trace, total)) = trace(model, (reduction, bound), limit) else {
                println!("{:<12} {search:<8} more than {limit}", model.name);
                continue;
            };
            let (row, held, checked) = row(&trace, total);
            println!(
                "{:<12} {search:<8} {total:>7}{row} | {held}/{checked}",
                model.name
            );
            if held < checked {
                missed.push(format!("{} {search}: {held} of {checked}", model.name));
            }
        }
    }
    missed
}

#[test]
fn the_range_shown_holds_the_true_total() {
    println!(
        "model        search     total | Knuth/true, weighted/true at 1% 5% 10% 25% 50% 75% 90% | range held"
    );
    let mut missed = measure(
        MODELS,
        if cfg!(debug_assertions) {
            5_000
        } else {
            100_000
        },
    );
    if !cfg!(debug_assertions) {
        missed.extend(measure(LARGER, 2_000_000));
    }
    assert!(missed.is_empty(), "the range missed the truth: {missed:#?}");
}
