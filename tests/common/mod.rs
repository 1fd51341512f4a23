//! Buggy models shared by several test files (each test binary uses some of them).
#![allow(dead_code, reason = "each test binary uses only some of the models")]

pub(crate) mod fixture;
pub(crate) mod oracle;

use interleave_test::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use interleave_test::sync::{Condvar, Mutex};
// Plumbing: the modelled `Arc`'s drops are switch points of their own (`tests/arc_drops.rs`);
// these models are about the primitives they share.
use interleave_test::thread;
use std::sync::Arc;

/// Two threads load the counter and store the value plus one: an update can be lost.
pub(crate) fn racy_counter() {
    assert_eq!(two_increments(), 2, "an increment was lost");
}

/// Two threads each load a counter and store the value plus one; the final count: 1 when
/// both loaded before either stored, else 2.
pub(crate) fn two_increments() -> usize {
    let n = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let n = Arc::clone(&n);
            thread::spawn(move || {
                let v = n.load(SeqCst);
                n.store(v + 1, SeqCst);
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    n.load(SeqCst)
}

/// Two threads take two locks in opposite orders.
pub(crate) fn abba() {
    let a = Arc::new(Mutex::new(()));
    let b = Arc::new(Mutex::new(()));
    let (a2, b2) = (Arc::clone(&a), Arc::clone(&b));
    let t = thread::spawn(move || {
        let _a = a2.lock().unwrap();
        let _b = b2.lock().unwrap();
    });
    {
        let _b = b.lock().unwrap();
        let _a = a.lock().unwrap();
    }
    t.join().unwrap();
}

/// The waiter checks the flag once and then waits: a notification between the check and
/// the wait is lost.
pub(crate) fn lost_wakeup() {
    let pair = Arc::new((Mutex::new(false), Condvar::new()));
    let pair2 = Arc::clone(&pair);
    let waiter = thread::spawn(move || {
        let (flag, cv) = &*pair2;
        let ready = *flag.lock().unwrap();
        if !ready {
            let guard = flag.lock().unwrap();
            let _guard = cv.wait(guard).unwrap();
        }
    });
    let (flag, cv) = &*pair;
    *flag.lock().unwrap() = true;
    cv.notify_one();
    waiter.join().unwrap();
}

/// Both substrates, for tests that must behave the same on each.
pub(crate) const SUBSTRATES: [interleave_test::Substrate; 2] = [
    interleave_test::Substrate::Coroutines,
    interleave_test::Substrate::Threads,
];

/// A value whose destructor panics (with "a destructor panicked").
pub(crate) struct PanicsOnDrop;

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        panic!("a destructor panicked");
    }
}

/// The line (from 1) of `text`, a test file's source, that holds `marker`, not counting the
/// lines that call this function with it.
pub(crate) fn line_of(text: &str, marker: &str) -> u32 {
    let index = text
        .lines()
        .position(|l| l.contains(marker) && !l.contains("line_of"))
        .unwrap_or_else(|| panic!("{marker} is not in the file"));
    index as u32 + 1
}

/// Preemption bounds every DFS case is checked under: 0 to 3, and none.
pub(crate) const BOUNDS: [Option<u32>; 5] = [Some(0), Some(1), Some(2), Some(3), None];

/// DFS with and without partial-order reduction.
pub(crate) const REDUCTIONS: [interleave_test::Reduction; 2] = [
    interleave_test::Reduction::Dpor,
    interleave_test::Reduction::Off,
];

/// DFS on `substrate` with `reduction` and preemption `bound`, one execution at a time.
pub(crate) fn dfs(
    substrate: interleave_test::Substrate,
    reduction: interleave_test::Reduction,
    bound: Option<u32>,
) -> interleave_test::Builder {
    interleave_test::Builder::new()
        .strategy(interleave_test::StrategyKind::Dfs {
            max_preemptions: bound,
        })
        .reduction(reduction)
        .substrate(substrate)
        .parallelism(1)
}

/// Calls `f` with every DFS configuration (both substrates, both reductions, every bound
/// of [`BOUNDS`]), its name for assertion messages, and its bound.
pub(crate) fn each_dfs(mut f: impl FnMut(interleave_test::Builder, String, Option<u32>)) {
    for substrate in SUBSTRATES {
        for reduction in REDUCTIONS {
            for bound in BOUNDS {
                let name = format!("{substrate:?}, {reduction:?}, bound {bound:?}");
                f(dfs(substrate, reduction, bound), name, bound);
            }
        }
    }
}

/// Calls `f` with random and PCT (depth 3) at `seed`, 2000 executions, on both substrates.
pub(crate) fn each_sampler(seed: u64, mut f: impl FnMut(interleave_test::Builder, String)) {
    use interleave_test::StrategyKind::{Pct, Random};
    for substrate in SUBSTRATES {
        for strategy in [Random, Pct { depth: 3 }] {
            let builder = interleave_test::Builder::new()
                .strategy(strategy)
                .seed(seed)
                .iterations(2000)
                .substrate(substrate);
            f(builder, format!("{substrate:?}, {strategy:?}, seed {seed}"));
        }
    }
}

/// Checks that random at `seed` finds `model`'s panic saying `message` on both substrates
/// within 2000 executions.
pub(crate) fn random_finds(model: fn(), seed: u64, message: &str) {
    for substrate in SUBSTRATES {
        let found = interleave_test::Builder::new()
            .strategy(interleave_test::StrategyKind::Random)
            .seed(seed)
            .iterations(2000)
            .substrate(substrate)
            .check(model);
        let failure = match found {
            Ok(report) => panic!("{substrate:?}: random, seed {seed}: not found: {report}"),
            Err(failure) => failure,
        };
        assert!(failure.message().contains(message), "{failure}");
    }
}

/// This build's switches as the printed replay commands repeat them: the `RUSTFLAGS` prefix
/// if it was built with `--cfg interleave`, and ` --release` if optimized (computed here
/// independently of the crate, which derives them the same way from its own `cfg!`).
pub(crate) fn build_switches() -> (&'static str, &'static str) {
    let rustflags = if cfg!(interleave) {
        "RUSTFLAGS=\"--cfg interleave\" "
    } else {
        ""
    };
    let release = if cfg!(debug_assertions) {
        ""
    } else {
        " --release"
    };
    (rustflags, release)
}

/// The numbers of the last decisions a failure report lists (numbered as in the schedule).
pub(crate) fn decision_numbers(report: &str) -> Vec<usize> {
    report
        .split_once("numbered as in the schedule")
        .map_or("", |(_, rest)| rest)
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect()
}

/// The message of the panic `f` raises (it must raise one with a string payload).
pub(crate) fn panic_message(f: impl FnOnce()) -> String {
    let payload =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).expect_err("should panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap()
}

/// Checks that the primitive written in `source` (a test file, up to its first test) names
/// no hidden item (`__private`, `__switch`, `doc(hidden)`) and, of the engine, only its
/// interface for primitives.
#[track_caller]
pub(crate) fn assert_written_with_public_items(source: &str) {
    let (code, _) = source.split_once("#[test]").expect("a test file");
    for hidden in ["__private", "__switch", "doc(hidden)"] {
        assert!(!code.contains(hidden), "the primitive names {hidden}");
    }
    for (i, _) in code.match_indices("interleave_engine::") {
        let path = &code[i + "interleave_engine::".len()..];
        assert!(
            path.starts_with("primitive"),
            "the primitive names {path:.40}"
        );
    }
}
