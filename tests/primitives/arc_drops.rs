//! A drop of a modelled `Arc` that shares its allocation is a switch point: which thread's
//! drop is the last, and so runs the value's destructor, is a choice every strategy
//! explores (and DPOR: drops conflict with the last drop of the same allocation). So are
//! `Weak::upgrade` against the last drop, and `into_inner` of two threads (exactly one gets
//! the value). Both substrates, DFS with and without reduction, bounds 0 to 3 and none,
//! random and PCT.

use crate::common::{SUBSTRATES, each_dfs, each_sampler};
use interleave_test::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use interleave_test::sync::{Arc, Mutex};
use interleave_test::{Builder, FailureKind, Reduction, StrategyKind, thread};

/// The tests of this file choose their substrates themselves: CI's second pass, on OS
/// threads, skips them (`--skip own_substrates::`), since it would only repeat the first.
mod own_substrates {
    use super::*;

    /// Takes `lock` when dropped.
    struct LocksOnDrop(std::sync::Arc<Mutex<()>>);

    impl Drop for LocksOnDrop {
        fn drop(&mut self) {
            drop(self.0.lock().unwrap());
        }
    }

    /// The model: main holds the lock while it drops its reference; if the spawned
    /// thread's drop came first, main's is the last and its destructor waits for main's lock.
    fn drop_under_lock() {
        let lock = std::sync::Arc::new(Mutex::new(()));
        let shared = Arc::new(LocksOnDrop(lock.clone()));
        let guard = lock.lock().unwrap();
        let theirs = shared.clone();
        let t = thread::spawn(move || drop(theirs));
        drop(shared);
        drop(guard);
        t.join().unwrap();
    }

    #[test]
    fn the_last_drop_running_a_destructor_that_deadlocks_is_found_from_one_preemption() {
        each_dfs(
            |builder, name, bound| match builder.check(drop_under_lock) {
                Ok(report) => {
                    assert_eq!(bound, Some(0), "{name}: not found: {report}");
                    assert!(report.exhausted, "{name}");
                }
                Err(failure) => {
                    assert_ne!(bound, Some(0), "{name}: {failure}");
                    assert_eq!(failure.kind(), FailureKind::Deadlock, "{name}: {failure}");
                    let ops: Vec<&str> = failure
                        .schedule()
                        .decisions()
                        .iter()
                        .map(|d| d.op())
                        .collect();
                    assert!(ops.contains(&"arc drop"), "{name}: {ops:?}");
                }
            },
        );
        each_sampler(5, |builder, name| {
            let failure = builder.check(drop_under_lock).expect_err(&name);
            assert_eq!(failure.kind(), FailureKind::Deadlock, "{name}: {failure}");
        });
    }

    /// Counts the destructors that ran.
    struct Counted(std::sync::Arc<AtomicUsize>);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, SeqCst);
        }
    }

    /// Two threads each call `into_inner` on their reference: exactly one gets the value.
    #[test]
    fn of_two_into_inner_calls_exactly_one_gets_the_value() {
        each_dfs(|builder, name, _| {
            let report = builder
                .check(|| {
                    let dropped = std::sync::Arc::new(AtomicUsize::new(0));
                    let a = Arc::new(Counted(dropped.clone()));
                    let b = a.clone();
                    let t = thread::spawn(move || Arc::into_inner(b).is_some());
                    let mine = Arc::into_inner(a).is_some();
                    let theirs = t.join().unwrap();
                    assert!(mine ^ theirs, "into_inner: main {mine}, other {theirs}");
                    assert_eq!(dropped.load(SeqCst), 1);
                })
                .unwrap_or_else(|f| panic!("{name}: {f}"));
            assert!(report.exhausted, "{name}");
        });
    }

    /// An upgrade races with the last drop: it may fail.
    fn upgrade_races_the_last_drop() {
        let strong = Arc::new(5);
        let weak = Arc::downgrade(&strong);
        let t = thread::spawn(move || weak.upgrade().map(|v| *v));
        drop(strong);
        assert_eq!(
            t.join().unwrap(),
            Some(5),
            "the upgrade came after the last drop"
        );
    }

    #[test]
    fn an_upgrade_after_the_last_drop_is_found() {
        each_dfs(
            |builder, name, bound| match builder.check(upgrade_races_the_last_drop) {
                Ok(report) => assert_eq!(bound, Some(0), "{name}: not found: {report}"),
                Err(failure) => {
                    assert!(
                        failure.message().contains("after the last drop"),
                        "{name}: {failure}"
                    );
                }
            },
        );
    }

    /// Reads its cell when dropped.
    struct ReadsOnDrop(interleave_test::cell::UnsafeCell<usize>);

    impl Drop for ReadsOnDrop {
        fn drop(&mut self) {
            self.0.with(|_| ());
        }
    }

    /// The other thread writes the cell, then drops its reference; if main's drop is the last,
    /// its destructor reads what the other thread wrote. std's drop releases and the last one
    /// acquires, so that read is not a data race, whichever drop is last.
    #[test]
    fn the_last_drop_acquires_every_earlier_one() {
        each_dfs(|builder, name, _| {
            let report = builder
                .check(|| {
                    let a = Arc::new(ReadsOnDrop(interleave_test::cell::UnsafeCell::new(0)));
                    let b = a.clone();
                    let t = thread::spawn(move || {
                        b.0.with_mut(|_| ());
                        drop(b);
                    });
                    drop(a);
                    t.join().unwrap();
                })
                .unwrap_or_else(|f| panic!("{name}: {f}"));
            assert!(report.exhausted, "{name}: {report}");
        });
    }

    /// Main and one thread each store to an atomic; `arcs` says what else they do with `Arc`s:
    /// main drops its reference to an allocation of a value with a destructor (a `Vec`) the
    /// other thread also holds before its store (`"shared"`) or after the join (otherwise);
    /// main drops its reference to an allocation of a value without one (a `u8`) the other
    /// thread also holds before its store (`"shared plain"`); both drop an `Arc` never shared
    /// (`"unshared"`).
    fn stores_with(arcs: &'static str) -> impl Fn() + Sync {
        move || {
            let x = std::sync::Arc::new(AtomicUsize::new(0));
            let shared = Arc::new(vec![0u8]);
            let plain = Arc::new(0u8);
            let (x2, theirs, their_plain) = (x.clone(), shared.clone(), plain.clone());
            let t = thread::spawn(move || {
                if arcs == "unshared" {
                    drop(Arc::new(1));
                }
                x2.store(1, SeqCst);
                drop(theirs);
                drop(their_plain);
            });
            if arcs == "unshared" {
                drop(Arc::new(2));
            }
            let mut mine = Some(shared);
            if arcs == "shared" {
                mine = None; // drops it
            }
            let mut my_plain = Some(plain);
            if arcs == "shared plain" {
                my_plain = None; // drops it
            }
            x.store(2, SeqCst);
            t.join().unwrap();
            drop((mine, my_plain));
        }
    }

    #[test]
    fn a_drop_of_an_unshared_arc_or_of_a_value_without_a_destructor_is_not_a_switch_point() {
        for substrate in SUBSTRATES {
            let count = |arcs| {
                Builder::new()
                    .strategy(StrategyKind::Dfs {
                        max_preemptions: None,
                    })
                    .reduction(Reduction::Off)
                    .substrate(substrate)
                    .check(stores_with(arcs))
                    .unwrap()
                    .executions
            };
            // The other thread's drop of its clone of the `Vec` is a switch point in every
            // variant (main still holds its reference, or dropped it); main's drop is one more
            // only when the allocation is still shared. The drops of the `u8`'s allocation,
            // whose value has no destructor, never are (`sync/arc.rs`, `shared`).
            let (none, unshared, shared) = (count("none"), count("unshared"), count("shared"));
            assert_eq!(unshared, none, "{substrate:?}");
            assert!(shared > none, "{substrate:?}: {shared} <= {none}");
            assert_eq!(count("shared plain"), none, "{substrate:?}");
        }
    }
}
