//! PCT: finds the known bugs with fixed seeds, finds a depth-3 ordering bug that uniform
//! random scheduling misses, does not stall on spin loops, and is reproducible by seed.

use interleave_test::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use interleave_test::{Builder, FailureKind, StrategyKind, thread};

use crate::common::{abba, lost_wakeup, racy_counter};
// Plumbing: the modelled `Arc`'s drops are switch points of their own (`tests/arc_drops.rs`);
// the counts here are of the primitives the models share.
use std::sync::Arc;

fn pct(seed: u64, depth: u32) -> Builder {
    Builder::new()
        .seed(seed)
        .iterations(1000)
        .strategy(StrategyKind::Pct { depth })
}

/// A buggy model: name, model, expected failure kind, and the execution in which PCT with
/// seed 3 and depth 3 finds it (pinned: observed, not derived).
type Case = (&'static str, fn(), FailureKind, u64);

#[test]
fn pct_finds_each_known_bug_with_a_fixed_seed() {
    let cases: [Case; 3] = [
        ("racy counter", racy_counter, FailureKind::Panic, 1),
        ("abba", abba, FailureKind::Deadlock, 1),
        ("lost wakeup", lost_wakeup, FailureKind::Deadlock, 8),
    ];
    for (name, model, kind, iteration) in cases {
        let failure = pct(3, 3).check(model).expect_err(name);
        assert_eq!(failure.kind(), kind, "{name}: {failure}");
        assert_eq!(failure.iteration(), iteration, "{name}: {failure}");
        assert_eq!(failure.seed(), Some(3), "{name}");
        assert_eq!(failure.schedule().strategy(), "pct", "{name}");
    }
}

/// Each of two workers counts to `K`; an observer samples both counters, counts to `K`
/// itself, and samples again. It fails if both workers sat mid-loop (neither at 0 nor at
/// `K`), untouched, for the observer's whole loop.
const K: usize = 20;

fn paused_pair() {
    let progress: Arc<[AtomicUsize; 3]> = Arc::new(Default::default());
    let workers: Vec<_> = (0..2)
        .map(|w| {
            let progress = Arc::clone(&progress);
            thread::spawn(move || {
                for i in 1..=K {
                    progress[w].store(i, SeqCst);
                }
            })
        })
        .collect();
    let p = Arc::clone(&progress);
    let observer = thread::spawn(move || {
        let before = (p[0].load(SeqCst), p[1].load(SeqCst));
        for i in 1..=K {
            p[2].store(i, SeqCst);
        }
        let after = (p[0].load(SeqCst), p[1].load(SeqCst));
        let mid = |v: usize| (1..K).contains(&v);
        assert!(
            !(before == after && mid(before.0) && mid(before.1)),
            "the observer ran its whole loop while both workers were paused mid-loop at {before:?}"
        );
    });
    for w in workers {
        w.join().unwrap();
    }
    observer.join().unwrap();
}

/// The bug has depth 3: worker X runs ahead of the observer and is preempted mid-loop (an
/// ordering constraint), then worker Y likewise (a second one), then the observer runs all
/// of its 24 steps before either worker moves again (the third).
///
/// Uniform random scheduling: during the observer's 24 operations both workers are runnable,
/// so each of the 23 decisions between its first and last sample picks the observer with
/// probability at most 1/3: at most 3^-23 (about 1e-11) per execution.
///
/// PCT's guarantee: per execution at least 1 / (n * k^(d-1)) with n = 4 threads (main, two
/// workers, the observer), k = 70 steps (main: 3 spawns + 3 joins; workers: 2 x 20 stores;
/// observer: 4 loads + 20 stores) and d = 3: 1 / (4 * 70^2) = 1 / 19,600, so about 19,600
/// executions for a 63% chance (1 - 1/e), 3 x 19,600 for 95%. That is a worst-case floor:
/// here any change point inside a worker's 20-step loop works, not only one exact step, and
/// the search does far better. Seeds 0..20 with depth 3 each found it within 50 executions
/// (mean about 13); depth 2, with only one change point, found it with none of them in
/// 1,000, nor did random.
#[test]
fn pct_depth_3_finds_an_ordering_bug_that_random_misses() {
    let random = Builder::new()
        .seed(1)
        .iterations(1000)
        .strategy(StrategyKind::Random)
        .check(paused_pair)
        .expect("random misses the depth-3 bug");
    assert_eq!(random.executions, 1000);
    assert_eq!(random.max_steps, 70, "k in the comment above: {random}");
    let depth2 = pct(1, 2)
        .check(paused_pair)
        .expect("one change point is not enough");
    assert_eq!(depth2.executions, 1000);
    let failure = pct(1, 3)
        .check(paused_pair)
        .expect_err("PCT depth 3 finds it");
    assert_eq!(failure.kind(), FailureKind::Panic, "{failure}");
    assert_eq!(
        failure.iteration(),
        17,
        "pinned: seed 1 finds it in its 18th execution"
    );
    assert_eq!(failure.thread().unwrap().id(), 3, "the observer: {failure}");
    assert!(
        failure
            .message()
            .contains("both workers were paused mid-loop"),
        "{}",
        failure.message()
    );
}

/// A thread that spins until another one sets a flag: each `spin` call is a switch point.
fn spin_until_set(spin: fn()) -> impl Fn() + Sync {
    move || {
        let flag = Arc::new(AtomicBool::new(false));
        let f2 = Arc::clone(&flag);
        let spinner = thread::spawn(move || {
            while !f2.load(SeqCst) {
                spin();
            }
        });
        let setter = thread::spawn(move || flag.store(true, SeqCst));
        spinner.join().unwrap();
        setter.join().unwrap();
    }
}

#[test]
fn spin_loops_do_not_stall_pct() {
    for (name, spin) in [
        ("hint::spin_loop", interleave_test::hint::spin_loop as fn()),
        ("yield_now", thread::yield_now),
    ] {
        let report = pct(3, 3)
            .iterations(200)
            .max_steps(1000)
            .check(spin_until_set(spin))
            .unwrap_or_else(|f| panic!("{name}: {f}"));
        assert_eq!(report.executions, 200, "{name}");
        assert!(report.max_steps < 100, "{name}: {report}");
    }
    // The contrast: a spin loop that does not say it spins stalls PCT whenever the spinner
    // outranks the setter.
    let failure = pct(3, 3)
        .iterations(200)
        .max_steps(1000)
        .check(spin_until_set(|| {}))
        .unwrap_err();
    assert_eq!(failure.kind(), FailureKind::Livelock, "{failure}");
}

#[test]
fn same_seed_same_failure() {
    for model in [racy_counter as fn(), abba, paused_pair] {
        let a = pct(9, 3).check(model).unwrap_err();
        let b = pct(9, 3).check(model).unwrap_err();
        assert_eq!(a, b);
        assert_eq!(a.to_string(), b.to_string());
    }
}

/// A task sends 1 on a `watch` channel, yields, and sends 2; the reader must see 1. The bug
/// needs the sender to run again, past its yield, before the reader it let run.
async fn watch_value_overwritten_before_read() {
    use interleave_test_tokio::sync::watch;
    let (tx, mut rx) = watch::channel(0);
    let reader = interleave_test_tokio::spawn(async move {
        rx.changed().await.unwrap();
        let seen = *rx.borrow();
        assert_eq!(
            seen, 1,
            "the first value was overwritten before it was read"
        );
    });
    let _ = tx.send(1);
    interleave_test_tokio::task::yield_now().await;
    let _ = tx.send(2);
    reader.await.unwrap();
}

/// A task sends twice on a `broadcast` channel of one slot, with a yield between; the
/// receiver lags if the sender runs again, past its yield, before the receiver reads.
async fn broadcast_receiver_lags() {
    use interleave_test_tokio::sync::broadcast;
    let (tx, mut rx) = broadcast::channel(1);
    let reader = interleave_test_tokio::spawn(async move {
        let got = rx.recv().await;
        assert!(got.is_ok(), "the receiver lagged: {got:?}");
    });
    let _ = tx.send(1);
    interleave_test_tokio::task::yield_now().await;
    let _ = tx.send(2);
    reader.await.unwrap();
}

/// How many of seeds 1 to 10 PCT (depth 3) finds `model`'s panic saying `message` with,
/// within 10,000 executions each.
fn seeds_that_find(model: fn(), message: &str) -> usize {
    (1..=10)
        .filter(|&seed| match pct(seed, 3).iterations(10_000).check(model) {
            Err(failure) => {
                assert_eq!(failure.kind(), FailureKind::Panic, "seed {seed}: {failure}");
                assert!(
                    failure.message().contains(message),
                    "seed {seed}: {failure}"
                );
                true
            }
            Ok(_) => false,
        })
        .count()
}

/// Regression: PCT lowered a thread that yielded below every other one, so a bug that needs
/// the yielding task to go on before the task it let run was never found, at any seed. A
/// yield now lowers a thread only when it repeats a spin (`strategy/pct.rs`).
#[test]
fn pct_finds_bugs_that_need_a_yielding_task_to_go_on() {
    let watch = || interleave_test::future::block_on(watch_value_overwritten_before_read());
    let found = seeds_that_find(watch, "overwritten before it was read");
    assert!(found >= 9, "watch: found with {found} of 10 seeds");
    let lag = || interleave_test::future::block_on(broadcast_receiver_lags());
    let found = seeds_that_find(lag, "the receiver lagged");
    assert!(found >= 9, "broadcast: found with {found} of 10 seeds");
}
