//! Golden report texts, reviewed by eye: a deadlock where a thread joins another, a lost
//! wake-up that a `notify_one` pick causes, and a panic with two threads in play. Each is the
//! first failure of a seeded random run on coroutines, its report compared whole with
//! `tests/data/reports/<name>.txt`, but for the backtrace (its frames and paths depend on
//! the build). Their locations are lines of this file: the models stay at the top.
//!
//! After an intended change of the report, rewrite the files with
//! `INTERLEAVE_BLESS=1 cargo test --test report_golden` and read their diff.

use interleave_test::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use interleave_test::sync::{Arc, Condvar, Mutex};
use interleave_test::{Builder, StrategyKind, Substrate, thread};

fn named(name: &str, f: impl FnOnce() + Send + 'static) -> thread::JoinHandle<()> {
    thread::Builder::new()
        .name(name.to_owned())
        .spawn(f)
        .unwrap()
}

/// `main` joins `waiter`, which waits on a condvar nobody notifies after it started waiting.
fn join_deadlock() {
    let pair = Arc::new((Mutex::new(false), Condvar::new()));
    let theirs = Arc::clone(&pair);
    let waiter = named("waiter", move || {
        let (ready, cv) = &*theirs;
        let mut g = ready.lock().unwrap();
        if !*g {
            g = cv.wait(g).unwrap();
        }
        drop(g);
    });
    let (ready, cv) = &*pair;
    cv.notify_one();
    *ready.lock().unwrap() = true;
    waiter.join().unwrap();
}

/// Two waiters, one `notify_one`: the one not woken waits for ever. `main` notifies once
/// both wait (`arrived` counts them), so which one wakes is a decision.
fn one_notify_two_waiters() {
    struct State {
        arrived: u32,
        turns: u32,
    }
    let shared = Arc::new((
        Mutex::new(State {
            arrived: 0,
            turns: 0,
        }),
        Condvar::new(),
        Condvar::new(),
    ));
    let waiters: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|name| {
            let shared = Arc::clone(&shared);
            named(name, move || {
                let (state, turn, arrival) = &*shared;
                let mut g = state.lock().unwrap();
                g.arrived += 1;
                arrival.notify_all();
                while g.turns == 0 {
                    g = turn.wait(g).unwrap();
                }
                g.turns -= 1;
            })
        })
        .collect();
    let (state, turn, arrival) = &*shared;
    let mut g = state.lock().unwrap();
    while g.arrived < 2 {
        g = arrival.wait(g).unwrap();
    }
    g.turns += 1;
    turn.notify_one();
    drop(g);
    for w in waiters {
        w.join().unwrap();
    }
}

/// Two threads count in; `right` assumes `left` came first.
fn two_thread_panic() {
    let n = Arc::new(AtomicUsize::new(0));
    let (l, r) = (Arc::clone(&n), Arc::clone(&n));
    let left = named("left", move || {
        l.fetch_add(1, SeqCst);
    });
    let right = named("right", move || {
        assert_eq!(r.fetch_add(1, SeqCst), 1, "right came before left");
    });
    left.join().unwrap();
    let _ = right.join();
}

/// The report of the first failure of `model` under a seeded random run, without its
/// backtrace section.
fn report(model: fn()) -> String {
    let failure = Builder::new()
        .strategy(StrategyKind::Random)
        .substrate(Substrate::Coroutines)
        .seed(3)
        .iterations(2000)
        .parallelism(1)
        .check(model)
        .expect_err("the model fails");
    let text = failure.to_string();
    match (
        text.find("\n\nbacktrace of thread"),
        text.find("\n\nfound by"),
    ) {
        (Some(start), Some(end)) => format!("{}{}", &text[..start], &text[end..]),
        _ => text,
    }
}

/// Compares `text` with `tests/data/reports/<name>.txt` (or writes it, when blessing), and
/// checks that the numbers of its last decisions increase strictly.
fn golden(name: &str, text: &str) {
    let numbers = common::decision_numbers(text);
    assert!(!numbers.is_empty(), "{name}: {text}");
    assert!(
        numbers.windows(2).all(|w| w[0] < w[1]),
        "{name}: {numbers:?}\n{text}"
    );
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/reports")
        .join(format!("{name}.txt"));
    if std::env::var_os("INTERLEAVE_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}; create it with INTERLEAVE_BLESS=1",
            path.display()
        )
    });
    assert_eq!(
        text,
        expected,
        "the report differs from {}; if the change is intended, run with INTERLEAVE_BLESS=1",
        path.display()
    );
}

/// On coroutines only (the reports name the substrate): CI's second pass skips this module.
mod own_substrates {
    use super::*;

    #[test]
    fn a_deadlock_with_a_join() {
        golden("join_deadlock", &report(join_deadlock));
    }

    #[test]
    fn a_notify_one_that_wakes_one_of_two_waiters() {
        golden("notify_one", &report(one_notify_two_waiters));
    }

    #[test]
    fn a_panic_with_two_threads_in_play() {
        golden("two_thread_panic", &report(two_thread_panic));
    }
}

// At the end, so that adding it moved none of the models' lines.
mod common;
