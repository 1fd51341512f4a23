//! `interleave_test::rand`: draws are decisions (one seed, one sequence; a failure replays
//! its draws through JSON), code written against `rand` 0.10 runs unchanged, and under the
//! `rand08` feature code written against 0.8 too; a draw under DFS is `Misuse`. The package's
//! tests build it with that feature (a dev-dependency on itself, see Cargo.toml).

#[path = "common/mod.rs"]
mod common;

use std::sync::Mutex as StdMutex;

use interleave_test::rand::{RngExt, rng};
use interleave_test::sync::Arc;
use interleave_test::sync::atomic::{AtomicU64, Ordering::SeqCst};
use interleave_test::{Builder, FailureKind, Reduction, Schedule, StrategyKind, thread};

use common::{SUBSTRATES, dfs};

/// Code written once against a `rand` 0.10 path, as code under test is: a range, a bool, a
/// shuffle, raw bits through `Rng`. Expanded for `rand` itself and for the model's: the
/// two sides of the `cfg` switch, one `use` line apart.
macro_rules! written_against_rand_010 {
    ($name:ident, $($rand:tt)*) => {
        mod $name {
            use $($rand)*::seq::SliceRandom;
            use $($rand)*::{Rng, RngExt, random, random_bool, random_range, rng};

            pub(crate) type Draws = (u32, bool, Vec<u8>, u64, (u16, u8, bool));

            pub(crate) fn draws() -> Draws {
                let mut r = rng();
                let n = r.random_range(0..10u32);
                let coin = r.random_bool(0.5);
                let mut order = vec![1u8, 2, 3, 4];
                order.shuffle(&mut r);
                let bits = Rng::next_u64(&mut r);
                let free = (random(), random_range(0..3u8), random_bool(0.5));
                (n, coin, order, bits, free)
            }
        }
    };
}

written_against_rand_010!(real_010, ::rand);
written_against_rand_010!(modelled_010, ::interleave_test::rand);

use modelled_010::draws as draws_with_rand_010;

/// The code against the real `rand` runs too (outside any model).
#[test]
fn the_same_code_runs_against_rand_itself() {
    let (n, _, mut order, _, (_, small, _)) = real_010::draws();
    assert!(n < 10 && small < 3);
    order.sort_unstable();
    assert_eq!(order, [1, 2, 3, 4]);
}

/// Two threads draw; the one bad draw is 7 from the spawned thread's range.
fn a_bad_draw() {
    let seen = Arc::new(AtomicU64::new(0));
    let s2 = Arc::clone(&seen);
    let t = thread::spawn(move || s2.store(u64::from(rng().random_range(0..10u32)), SeqCst));
    let _ = draws_with_rand_010();
    t.join().unwrap();
    assert_ne!(seen.load(SeqCst), 7, "the bad draw");
}

/// Random and PCT find the bad draw (1 in 10 per execution) within 200 executions, on both
/// substrates; the schedule records the draws as `random` picks and replays through JSON to
/// an equal failure.
#[test]
fn a_failure_replays_its_draws_through_json() {
    for substrate in SUBSTRATES {
        for strategy in [StrategyKind::Random, StrategyKind::Pct { depth: 3 }] {
            let builder = Builder::new()
                .strategy(strategy)
                .seed(11)
                .iterations(200)
                .substrate(substrate);
            let name = format!("{substrate:?} {strategy:?}, seed 11");
            let failure = builder.check(a_bad_draw).unwrap_err();
            assert!(
                failure.message().contains("the bad draw"),
                "{name}: {failure}"
            );
            let draws = failure
                .schedule()
                .decisions()
                .iter()
                .filter(|d| d.pick().is_some_and(|(kind, _)| kind == "random"))
                .count();
            assert!(draws >= 2, "{name}: {draws} draws");
            let text = failure.schedule().to_json();
            let schedule = Schedule::from_json(&text).unwrap();
            let again = builder.replay(a_bad_draw, &schedule).unwrap_err();
            assert_eq!(again, failure, "{name}");
        }
    }
}

/// The draws of 30 executions, one at a time, under `seed`.
fn draws_under(seed: u64) -> Vec<modelled_010::Draws> {
    let seen = StdMutex::new(Vec::new());
    Builder::new()
        .seed(seed)
        .iterations(30)
        .parallelism(1)
        .check(|| seen.lock().unwrap().push(draws_with_rand_010()))
        .unwrap();
    seen.into_inner().unwrap()
}

/// One seed draws the same values; another seed other ones; the values spread.
#[test]
fn one_seed_draws_the_same_values() {
    let first = draws_under(5);
    assert_eq!(first, draws_under(5));
    assert_ne!(first, draws_under(6));
    let ranges: std::collections::BTreeSet<u32> = first.iter().map(|d| d.0).collect();
    assert!(ranges.len() >= 8, "{ranges:?}");
    let orders: std::collections::BTreeSet<&Vec<u8>> = first.iter().map(|d| &d.2).collect();
    assert!(orders.len() > 5, "{orders:?}");
}

/// DFS cannot explore a draw's values: a `Misuse` that names `choose`, under both
/// reductions and substrates.
#[test]
fn a_draw_under_dfs_is_misuse_that_names_choose() {
    for substrate in SUBSTRATES {
        for reduction in [Reduction::Dpor, Reduction::Off] {
            let failure = dfs(substrate, reduction, None)
                .check(|| drop(draws_with_rand_010()))
                .unwrap_err();
            assert_eq!(failure.kind(), FailureKind::Misuse, "{failure}");
            assert!(
                failure.message().starts_with(
                    "interleave_test::rand: a depth-first search explores every value of a \
                     decision and cannot explore a random draw's: use interleave_test::choose"
                ),
                "{failure}"
            );
        }
    }
}

/// Code written once against a `rand` 0.8 path, through `thread_rng()` and 0.8's `Rng`,
/// as shuttle's users' code is; expanded for `rand` 0.8 itself and for the model's.
#[cfg(feature = "rand08")]
macro_rules! written_against_rand_08 {
    ($name:ident, $($rand:tt)*) => {
        mod $name {
            use rand08::Rng as _;
            use rand08::seq::SliceRandom as _;
            use $($rand)*::thread_rng;

            pub(crate) fn draws() -> (u32, [u8; 3], u64) {
                let mut r = thread_rng();
                let n: u32 = r.gen_range(0..10);
                let mut order = [1u8, 2, 3];
                order.shuffle(&mut r);
                (n, order, r.r#gen::<u64>())
            }
        }
    };
}

#[cfg(feature = "rand08")]
written_against_rand_08!(real_08, ::rand08);
#[cfg(feature = "rand08")]
written_against_rand_08!(modelled_08, ::interleave_test::rand);

/// Under the `rand08` feature: the 0.8 code draws decisions (one seed, one sequence) in a
/// model, and runs against `rand` 0.8 itself outside.
#[cfg(feature = "rand08")]
#[test]
fn code_written_against_rand_08_draws_decisions() {
    assert!(real_08::draws().0 < 10);
    let seen = StdMutex::new(Vec::new());
    let run = || {
        seen.lock().unwrap().clear();
        let builder = Builder::new().seed(2).iterations(20).parallelism(1);
        builder
            .check(|| seen.lock().unwrap().push(modelled_08::draws()))
            .unwrap();
        seen.lock().unwrap().clone()
    };
    let first = run();
    assert_eq!(first, run());
    let values: std::collections::BTreeSet<u32> = first.iter().map(|d| d.0).collect();
    assert!(values.len() >= 5, "{values:?}");
}

/// A destructor that draws while its thread unwinds from a panic is not refused under DFS:
/// the draw is 0 and decides nothing, the unwinding goes on (a later destructor runs), the
/// failure is the panic, and it replays, on both substrates.
#[test]
fn a_draw_in_a_destructor_run_by_a_panic_is_not_refused_under_dfs() {
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::Relaxed};

    // Records its draw: an assertion in a destructor that runs during a panic would abort
    // the process.
    struct Draws<'a>(&'a AtomicU32);
    impl Drop for Draws<'_> {
        fn drop(&mut self) {
            self.0.store(rng().random(), Relaxed);
        }
    }
    struct Marks<'a>(&'a AtomicBool);
    impl Drop for Marks<'_> {
        fn drop(&mut self) {
            self.0.store(true, Relaxed);
        }
    }
    for substrate in SUBSTRATES {
        let (dropped, drawn) = (AtomicBool::new(false), AtomicU32::new(7));
        let model = || {
            let _marks = Marks(&dropped);
            let _draws = Draws(&drawn);
            panic!("the first failure");
        };
        let builder = dfs(substrate, Reduction::Dpor, None);
        let failure = builder.check(model).unwrap_err();
        assert_eq!(
            failure.kind(),
            FailureKind::Panic,
            "{substrate:?}: {failure}"
        );
        assert!(failure.message().contains("the first failure"), "{failure}");
        assert!(
            dropped.load(Relaxed),
            "{substrate:?}: the later destructor ran"
        );
        assert_eq!(drawn.load(Relaxed), 0, "{substrate:?}");
        let again = builder.replay(model, failure.schedule()).unwrap_err();
        assert_eq!(again, failure, "{substrate:?}");
    }
}
