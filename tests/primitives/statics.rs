//! `static` primitives: atomics start from their initial value in every execution (also
//! with executions running at once), and a static whose data cannot be restored is misuse
//! with a message saying what to write instead.

use std::ops::Deref;

use interleave_test::sync::atomic::{AtomicUsize, Ordering};
use interleave_test::sync::{Arc, LazyLock, Mutex};
use interleave_test::{Builder, FailureKind, thread};

/// A `static` atomic starts from its initial value in every execution, whichever runs
/// first and however many run at once.
#[test]
fn a_static_atomic_is_reset_for_every_execution() {
    static SHARED: AtomicUsize = AtomicUsize::new(7);
    for parallelism in [1, 2] {
        let report = Builder::new()
            .seed(25)
            .parallelism(parallelism)
            .iterations(200)
            .check(|| {
                let t = thread::spawn(|| SHARED.fetch_add(1, Ordering::SeqCst));
                let mine = SHARED.fetch_add(1, Ordering::SeqCst);
                let theirs = t.join().unwrap();
                let mut seen = [mine, theirs];
                seen.sort_unstable();
                assert_eq!(seen, [7, 8]);
                assert_eq!(SHARED.load(Ordering::SeqCst), 9);
            })
            .unwrap_or_else(|f| panic!("parallelism {parallelism}: {f}"));
        assert_eq!(report.executions, 200);
    }
}

/// Several `static` atomics, first used in a different order by each execution (so each
/// execution registers them in another order), each keep their own value.
#[test]
fn several_static_atomics_used_in_varying_orders_keep_their_own_values() {
    static A: AtomicUsize = AtomicUsize::new(10);
    static B: AtomicUsize = AtomicUsize::new(20);
    static C: AtomicUsize = AtomicUsize::new(30);
    static D: AtomicUsize = AtomicUsize::new(40);
    static ORDER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let all = [&A, &B, &C, &D];
    for parallelism in [1, 2] {
        let report = Builder::new()
            .seed(3)
            .parallelism(parallelism)
            .iterations(200)
            .check(|| {
                let turn = ORDER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let t = thread::spawn(move || all[(turn + 1) % 4].fetch_add(1, Ordering::SeqCst));
                for k in 0..4 {
                    // At its initial value, or one above if the other thread came first.
                    let seen = all[(turn + k) % 4].fetch_add(1, Ordering::SeqCst);
                    assert!(seen % 10 <= 1, "turn {turn}, k {k}: {seen}");
                }
                t.join().unwrap();
                let values: Vec<usize> = all.iter().map(|a| a.load(Ordering::SeqCst)).collect();
                let mut expected = [11, 21, 31, 41];
                expected[(turn + 1) % 4] += 1;
                assert_eq!(values, expected, "turn {turn}");
            })
            .unwrap_or_else(|f| panic!("parallelism {parallelism}: {f}"));
        assert_eq!(report.executions, 200);
    }
}

/// The lost update of a racy counter kept in a `static` is found as the local one is.
#[test]
fn a_static_racy_counter_loses_its_update() {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    fn model() {
        let t = thread::spawn(|| {
            let v = COUNTER.load(Ordering::SeqCst);
            COUNTER.store(v + 1, Ordering::SeqCst);
        });
        let v = COUNTER.load(Ordering::SeqCst);
        COUNTER.store(v + 1, Ordering::SeqCst);
        t.join().unwrap();
        assert_eq!(COUNTER.load(Ordering::SeqCst), 2, "an increment was lost");
    }
    for strategy in [
        interleave_test::StrategyKind::Random,
        interleave_test::StrategyKind::Dfs {
            max_preemptions: None,
        },
    ] {
        let failure = Builder::new()
            .seed(3)
            .strategy(strategy)
            .check(model)
            .unwrap_err();
        assert_eq!(failure.kind(), FailureKind::Panic, "{failure}");
        assert!(failure.message().contains("lost"), "{failure}");
    }
}

/// A `static` mutex holds data the explorer cannot restore: the second execution that uses
/// it is told what to write instead.
#[test]
fn a_static_mutex_in_two_executions_is_misuse_saying_what_to_do() {
    static SHARED: interleave_test::sync::Mutex<u32> = interleave_test::sync::Mutex::new(0);
    let failure = Builder::new()
        .seed(25)
        .parallelism(1)
        .iterations(10)
        .check(|| {
            *SHARED.lock().unwrap() += 1;
        })
        .unwrap_err();
    assert_eq!(failure.kind(), FailureKind::Misuse);
    assert_eq!(failure.iteration(), 1);
    let message = failure.message();
    assert!(
        message.contains("this Mutex was first used in another execution"),
        "{message}"
    );
    assert!(message.contains("share it with an Arc"), "{message}");
    assert!(
        message.contains("`static NAME: LazyLock<Mutex<T>> = LazyLock::new(|| Mutex::new(..))`"),
        "{message}"
    );
}

/// A channel made outside the model closure is one execution's: a second one that uses it
/// is told to make it inside, with no `LazyLock` advice (a channel is made by a function).
#[test]
fn a_channel_from_outside_in_two_executions_is_misuse_with_no_lazy_lock_advice() {
    let (tx, _rx) = interleave_test::sync::mpsc::channel::<u32>();
    let failure = Builder::new()
        .seed(25)
        .parallelism(1)
        .iterations(10)
        .check(|| {
            let _ = tx.send(1);
        })
        .unwrap_err();
    assert_eq!(failure.kind(), FailureKind::Misuse);
    assert_eq!(failure.iteration(), 1);
    let message = failure.message();
    assert!(
        message.contains("was first used in another execution")
            && message.contains("share it with an Arc.")
            && !message.contains("LazyLock<"),
        "{message}"
    );
}

/// A `static` `Once` runs its closure in every execution, once each, with executions one
/// after another and at once.
#[test]
fn a_static_once_runs_its_closure_in_every_execution() {
    use interleave_test::sync::Once;
    static ONCE: Once = Once::new();
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    for parallelism in [1, 2] {
        let report = Builder::new()
            .seed(8)
            .parallelism(parallelism)
            .iterations(100)
            .check(|| {
                let run = || {
                    ONCE.call_once(|| {
                        RUNS.fetch_add(1, Ordering::SeqCst);
                    })
                };
                let t = thread::spawn(run);
                assert!(!ONCE.is_completed() || RUNS.load(Ordering::SeqCst) == 1);
                run();
                t.join().unwrap();
                assert!(ONCE.is_completed());
                assert_eq!(RUNS.load(Ordering::SeqCst), 1);
            })
            .unwrap_or_else(|f| panic!("parallelism {parallelism}: {f}"));
        assert_eq!(report.executions, 100);
    }
}

/// A `static` `OnceLock` is empty at the start of every execution, and holds that
/// execution's value once set.
#[test]
fn a_static_once_lock_is_empty_in_every_execution() {
    use interleave_test::sync::OnceLock;
    static CELL: OnceLock<String> = OnceLock::new();
    // Counts runs of the initializer over every execution (the explorer resets only its own
    // primitives).
    static INIT_RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    for parallelism in [1, 2] {
        INIT_RUNS.store(0, std::sync::atomic::Ordering::SeqCst);
        let report = Builder::new()
            .seed(9)
            .parallelism(parallelism)
            .iterations(50)
            .check(|| {
                assert_eq!(CELL.get(), None);
                let t = thread::spawn(|| CELL.set("spawned".to_owned()).is_ok());
                let mine = CELL.get_or_init(|| {
                    INIT_RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    "main".to_owned()
                });
                let spawned_won = t.join().unwrap();
                assert_eq!(mine, if spawned_won { "spawned" } else { "main" });
                assert_eq!(CELL.get(), Some(mine));
            })
            .unwrap_or_else(|f| panic!("parallelism {parallelism}: {f}"));
        assert_eq!(report.executions, 50);
        // The main thread's initializer ran in every execution the spawned thread lost.
        let runs = INIT_RUNS.load(std::sync::atomic::Ordering::SeqCst);
        assert!(runs > 0 && runs < 50, "{runs} of 50");
    }
}

/// Two threads add one each to a counter behind `total`, reading and writing it under two
/// separate locks when `split` (a lost update), under one otherwise.
fn add_twice<L>(total: Arc<L>, split: bool)
where
    L: Deref<Target = Mutex<u32>> + Send + Sync + 'static,
{
    let add = move |total: &Mutex<u32>| {
        if split {
            let v = *total.lock().unwrap();
            *total.lock().unwrap() = v + 1;
        } else {
            *total.lock().unwrap() += 1;
        }
    };
    let theirs = Arc::clone(&total);
    let t = thread::spawn(move || add(&theirs));
    add(&total);
    t.join().unwrap();
    assert_eq!(*total.lock().unwrap(), 2, "an increment was lost");
}

static TOTAL: LazyLock<Mutex<u32>> = LazyLock::new(|| Mutex::new(0));

/// [`TOTAL`] seen through a handle like a local one's.
struct Static;

impl Deref for Static {
    type Target = Mutex<u32>;

    fn deref(&self) -> &Mutex<u32> {
        &TOTAL
    }
}

/// What to write for a `static` whose data the explorer cannot restore: a
/// `static LazyLock<Mutex<T>>` starts afresh in every execution, and DFS explores it exactly
/// as the same model with a `LazyLock` created in the model: as many executions, and the
/// same first failing one.
#[test]
fn a_static_lazy_mutex_is_explored_as_a_local_one() {
    let dfs = || {
        Builder::new().strategy(interleave_test::StrategyKind::Dfs {
            max_preemptions: None,
        })
    };
    for split in [false, true] {
        let local = dfs().check(move || {
            add_twice(Arc::new(LazyLock::new(|| Mutex::new(0))), split);
        });
        let shared = dfs().check(move || add_twice(Arc::new(Static), split));
        match (local, shared) {
            (Ok(local), Ok(shared)) => {
                assert!(!split);
                assert!(local.executions > 1);
                assert_eq!(local.executions, shared.executions);
            }
            (Err(local), Err(shared)) => {
                assert!(split);
                assert_eq!(shared.kind(), FailureKind::Panic, "{shared}");
                assert!(shared.message().contains("lost"), "{shared}");
                assert_eq!(local.iteration(), shared.iteration(), "{local}\n{shared}");
            }
            (local, shared) => panic!("split {split}: {local:?} but {shared:?}"),
        }
    }
}

/// A `LazyLock` created outside the model with a closure (not a `static`) cannot run its
/// initializer again in a second execution: that is misuse, saying what to write instead.
#[test]
fn a_captured_lazy_lock_with_a_closure_is_misuse_in_the_second_execution() {
    let base = 40;
    let lazy = std::sync::Arc::new(LazyLock::new(move || base + 2));
    let failure = Builder::new()
        .parallelism(1)
        .iterations(5)
        .check(move || assert_eq!(*LazyLock::force(&lazy), 42))
        .unwrap_err();
    assert_eq!(failure.kind(), FailureKind::Misuse, "{failure}");
    assert_eq!(failure.iteration(), 1);
    assert!(
        failure
            .message()
            .contains("Create it inside the model closure, or make it a `static`"),
        "{failure}"
    );
}
