//! `static` primitives: atomics start from their initial value in every execution (also
//! with executions running at once), and a static whose data cannot be restored is misuse
//! with a message saying what to write instead.

use interleave_test::sync::atomic::{AtomicUsize, Ordering};
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
}
