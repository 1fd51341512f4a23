//! Where an atomic's value lives: during an execution the runtime's memory holds it, and
//! `get_mut`, `into_inner` and `Debug` see (and `get_mut` changes) that value, tracked by
//! the memory model or not; outside executions the atomic keeps the value it was made with.

use interleave_test::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use interleave_test::{Builder, thread};

use crate::common::each_dfs;

/// Two threads add to `x` with `order`, then the main thread reads and writes it through
/// `&mut` and goes on using it; every step checks the value.
fn exclusive_access(order: Ordering) {
    let mut x = AtomicUsize::new(1);
    thread::scope(|s| {
        s.spawn(|| x.fetch_add(2, order));
        x.fetch_add(4, order);
    });
    assert_eq!(*x.get_mut(), 7, "get_mut sees the execution's value");
    *x.get_mut() = 10;
    assert_eq!(
        x.load(order),
        10,
        "a load after get_mut reads what it wrote"
    );
    assert_eq!(format!("{x:?}"), "10");
    x.fetch_add(1, order);
    assert_eq!(format!("{x:?}"), "11", "Debug shows the execution's value");
    assert_eq!(
        x.into_inner(),
        11,
        "into_inner returns the execution's value"
    );
}

#[test]
fn exclusive_access_sees_and_sets_the_executions_value() {
    // `SeqCst` alone runs untracked (the newest value only); `Relaxed` makes the execution
    // start over tracked, with the memory model's store history.
    for order in [Ordering::SeqCst, Ordering::Relaxed] {
        each_dfs(|builder, name, bound| {
            let report = builder
                .check(move || exclusive_access(order))
                .unwrap_or_else(|f| panic!("{order:?}, {name}: {f}"));
            assert!(
                bound == Some(0) || report.executions >= 2,
                "{order:?}, {name}: both orders of the two adds, got {}",
                report.executions
            );
        });
    }
}

#[test]
fn a_bool_lent_to_get_mut_comes_back_changed() {
    let result = Builder::new().seed(7).iterations(20).check(|| {
        let mut flag = AtomicBool::new(false);
        thread::scope(|s| {
            s.spawn(|| flag.store(true, Ordering::Release));
        });
        assert!(*flag.get_mut());
        *flag.get_mut() = false;
        assert!(!flag.swap(true, Ordering::AcqRel));
        assert!(flag.into_inner());
    });
    if let Err(failure) = result {
        panic!("seed 7: {failure}");
    }
}

static COUNTER: AtomicUsize = AtomicUsize::new(5);

#[test]
fn a_static_starts_every_execution_afresh_and_keeps_its_value_outside() {
    let report = Builder::new()
        .seed(3)
        .iterations(10)
        .check(|| {
            assert_eq!(
                format!("{COUNTER:?}"),
                "5",
                "each execution starts from new()"
            );
            COUNTER.fetch_add(1, Ordering::SeqCst);
            assert_eq!(format!("{COUNTER:?}"), "6");
            assert_eq!(COUNTER.load(Ordering::Relaxed), 6);
        })
        .unwrap_or_else(|f| panic!("seed 3: {f}"));
    // No decision: the model's one schedule runs twice, the second from `new()` again.
    assert_eq!(report.executions, 2);
    // Executions held the value; the atomic itself was never written.
    assert_eq!(format!("{COUNTER:?}"), "5");
}
