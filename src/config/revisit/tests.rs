//! Verdicts on a stored failure after the code changed: a writer publishes a flag before the
//! data it guards, and a reader that sees the flag asserts on the data. Three fixes (the
//! stores in the right order, a lock, a loop that waits for the data) are fixed; unrelated
//! edits keep it failing; a rewrite has diverged; a new bug is another failure.

use super::Verdict;
use crate::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use crate::sync::{Arc, Mutex};
use crate::thread;
use crate::{Builder, Schedule, StrategyKind, Substrate};

fn named(name: &str, f: impl FnOnce() + Send + 'static) -> thread::JoinHandle<()> {
    thread::Builder::new()
        .name(name.to_owned())
        .spawn(f)
        .expect("spawned")
}

/// A writer and a reader, named so, each given the data and the flag.
fn pair(
    write: impl FnOnce(&AtomicUsize, &AtomicBool) + Send + 'static,
    read: impl FnOnce(&AtomicUsize, &AtomicBool) + Send + 'static,
) {
    let (data, ready) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicBool::new(false)),
    );
    let (d, r) = (data.clone(), ready.clone());
    let w = named("writer", move || write(&d, &r));
    let r = named("reader", move || read(&data, &ready));
    w.join().unwrap();
    r.join().unwrap();
}

/// The reader of the bug: if the flag is up, the data must be there.
fn check(data: &AtomicUsize, ready: &AtomicBool) {
    if ready.load(SeqCst) {
        assert_eq!(data.load(SeqCst), 42, "read before it was written");
    }
}

/// The writer of the bug: the flag goes up before the data is written.
fn flag_then_data(data: &AtomicUsize, ready: &AtomicBool) {
    ready.store(true, SeqCst);
    data.store(42, SeqCst);
}

/// The bug: the flag is set before the data is written.
fn flag_first() {
    pair(flag_then_data, check);
}

/// The same bug after unrelated edits: lines moved, an unrelated lock taken first, another
/// object created before the others.
fn flag_first_edited() {
    let unrelated = Arc::new(Mutex::new(0u32));
    *unrelated.lock().unwrap() += 1;

    // (the edit moved every line below)
    pair(
        |d, r| {
            r.store(true, SeqCst);

            d.store(42, SeqCst);
        },
        |d, r| {
            let _moved = ();
            check(d, r);
        },
    );
}

/// Fix 1, the statements in the right order (the lines moved).
fn data_first() {
    pair(
        |d, r| {
            d.store(42, SeqCst);
            r.store(true, SeqCst);
        },
        check,
    );
}

/// Fix 2, a lock around both.
fn locked() {
    let state = Arc::new(Mutex::new((false, 0usize)));
    let s = state.clone();
    let w = named("writer", move || {
        let mut g = s.lock().unwrap();
        g.0 = true;
        g.1 = 42;
    });
    let r = named("reader", move || {
        let g = state.lock().unwrap();
        if g.0 {
            assert_eq!(g.1, 42, "read before it was written");
        }
    });
    w.join().unwrap();
    r.join().unwrap();
}

/// Fix 3, the reader waits in a loop for the data the flag announces.
fn waits() {
    pair(flag_then_data, |d, r| {
        if r.load(SeqCst) {
            while d.load(SeqCst) != 42 {
                thread::yield_now();
            }
            assert_eq!(d.load(SeqCst), 42, "read before it was written");
        }
    });
}

/// Another bug in the same threads: the reader's message changed, and it fails whenever the
/// flag is seen.
fn another_bug() {
    pair(
        |d, r| {
            d.store(42, SeqCst);
            r.store(true, SeqCst);
        },
        |d, r| {
            if r.load(SeqCst) {
                assert_eq!(d.load(SeqCst), 41, "off by one");
            }
        },
    );
}

/// The test rewritten beyond recognition: other threads, another primitive.
fn rewritten() {
    let (tx, rx) = crate::sync::mpsc::channel();
    let p = named("producer", move || tx.send(1).unwrap());
    let c = named("consumer", move || assert_eq!(rx.recv().unwrap(), 1));
    p.join().unwrap();
    c.join().unwrap();
}

/// The schedule of the first failure random search finds in [`flag_first`].
fn stored() -> Schedule {
    let failure = Builder::new()
        .strategy(StrategyKind::Random)
        .seed(11)
        .check(flag_first)
        .expect_err("the bug is found");
    let signature = failure.schedule().failure().expect("recorded").clone();
    assert_eq!(signature.kind(), crate::FailureKind::Panic);
    assert_eq!(signature.thread(), Some("reader"));
    assert!(
        signature.what().contains("read before it was written"),
        "{signature}"
    );
    failure.schedule().clone()
}

/// The verdict on `schedule`, the same on both substrates (checked), or a panic.
fn verdict(model: fn(), schedule: &Schedule) -> Verdict {
    let on = |s| Builder::new().substrate(s).revisit(&model, schedule);
    let (coroutines, threads) = (on(Substrate::Coroutines), on(Substrate::Threads));
    // `Failure`'s equality leaves out the substrate and the backtrace.
    let same = match (&coroutines, &threads) {
        (Verdict::StillFails(a), Verdict::StillFails(b))
        | (Verdict::FailsOtherwise(a), Verdict::FailsOtherwise(b)) => a == b,
        (Verdict::Fixed(a), Verdict::Fixed(b)) => a == b,
        (Verdict::Diverged(a), Verdict::Diverged(b)) => a == b,
        _ => false,
    };
    assert!(
        same,
        "the substrates disagree:\n{coroutines:?}\n{threads:?}"
    );
    coroutines
}

#[test]
fn unrelated_edits_still_fail() {
    let schedule = stored();
    for (name, model) in [
        ("unchanged", flag_first as fn()),
        ("edited", flag_first_edited),
    ] {
        match verdict(model, &schedule) {
            Verdict::StillFails(f) => {
                assert_eq!(f.thread().and_then(|t| t.name()), Some("reader"), "{name}");
            }
            v => panic!("{name}: {v:?}"),
        }
    }
}

#[test]
fn three_fixes_are_fixed() {
    let schedule = stored();
    for (name, model) in [
        ("order", data_first as fn()),
        ("lock", locked),
        ("loop", waits),
    ] {
        match verdict(model, &schedule) {
            Verdict::Fixed(explored) => {
                assert!(explored.executions >= 1, "{name}: {explored:?}");
                assert!(explored.fitted >= 1, "{name}: {explored:?}");
            }
            v => panic!("{name}: {v:?}"),
        }
    }
}

#[test]
fn a_fix_that_changes_no_decision_replays_whole_then_explores_around() {
    // The reader's check made lenient: the same decisions, the same operations.
    let schedule = stored();
    let lenient = || {
        pair(flag_then_data, |d, r| {
            if r.load(SeqCst) {
                let v = d.load(SeqCst);
                assert!(v == 0 || v == 42, "read before it was written");
            }
        });
    };
    match Builder::new().revisit(&lenient, &schedule) {
        Verdict::Fixed(explored) => {
            let whole = schedule.decisions().len();
            assert_eq!((explored.fitted, explored.of), (whole, whole));
            assert_eq!(explored.executions, super::COMPLETIONS);
        }
        v => panic!("{v:?}"),
    }
}

#[test]
fn another_failure_is_reported_as_such() {
    match verdict(another_bug, &stored()) {
        Verdict::FailsOtherwise(f) => assert!(f.message().contains("off by one"), "{f}"),
        v => panic!("{v:?}"),
    }
}

#[test]
fn a_rewritten_test_has_diverged() {
    match verdict(rewritten, &stored()) {
        Verdict::Diverged(why) => {
            assert!(why.starts_with("it stops fitting at decision "), "{why}");
            assert!(why.contains("is named 'producer' now"), "{why}");
        }
        v => panic!("{v:?}"),
    }
}

/// A thread that yields for ever: every execution reaches `max_steps`.
fn spins_for_ever() {
    let t = named("spinner", || {
        loop {
            thread::yield_now();
        }
    });
    t.join().unwrap();
}

#[test]
fn a_file_cannot_raise_max_steps_past_the_tests() {
    let builder = Builder::new().max_steps(1000).seed(1);
    let failure = builder.check(spins_for_ever).expect_err("a livelock");
    // A hostile corpus file: the random completions would run 10^18 steps each.
    let json = failure.schedule().to_json();
    let hostile = json.replacen(
        "\"max_steps\": 1000,",
        "\"max_steps\": 1000000000000000000,",
        1,
    );
    assert_ne!(hostile, json, "the file records max_steps: {json}");
    let schedule = Schedule::from_json(&hostile).unwrap();
    match builder.revisit(&(spins_for_ever as fn()), &schedule) {
        Verdict::StillFails(f) => {
            assert!(f.message().contains("max_steps (1000)"), "{f}");
        }
        v => panic!("{v:?}"),
    }
}
