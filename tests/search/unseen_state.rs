//! State the model does not see (`std` atomics and locks) shared through explicit yields
//! (`hb/unseen.rs`): DFS with reduction must find what DFS without it finds when one side
//! of each shared access is next to a yield, as a program written for shuttle puts it.
//! Each model here is one such shape, written for this crate; each runs under DFS with and
//! without reduction, every bound of `BOUNDS` and both substrates, and the reduced search
//! must give exactly the unreduced one's failure or outcomes. Each was seen to pass
//! (wrongly) under reduction before yields were visible to it.

use std::collections::BTreeSet;
use std::sync::Arc as Plain;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};

use crate::common::{BOUNDS, SUBSTRATES, dfs};
use interleave_test::sync::{Mutex, RwLock};
use interleave_test::{FailureKind, Reduction, future, thread};

/// The tests of this file choose their substrates themselves: CI's second pass, on OS
/// threads, skips them (`--skip own_substrates::`), since it would only repeat the first.
mod own_substrates {
    use super::*;

    /// A task sets a `std` flag, yields, and clears it; another task, which never yields,
    /// reads it once. Only a schedule that runs the reader between the writer's two halves
    /// sees it set. `THREAD`: the writer yields by `thread::yield_now` inside its task, as a
    /// program written for shuttle may, instead of awaiting `future::yield_now`.
    fn flag_set_around_a_yield<const THREAD: bool>() {
        let flag = Plain::new(AtomicBool::new(false));
        let writer = {
            let flag = flag.clone();
            future::spawn(async move {
                flag.store(true, SeqCst);
                if THREAD {
                    thread::yield_now();
                } else {
                    future::yield_now().await;
                }
                flag.store(false, SeqCst);
            })
        };
        let reader = future::spawn(async move {
            assert!(!flag.load(SeqCst), "the reader saw the flag set");
        });
        future::block_on(async {
            writer.await.unwrap();
            reader.await.unwrap();
        });
    }

    /// Runs `model` under DFS on each substrate and bound, with and without reduction: both
    /// must find the panic saying `message` or both pass, and with no bound (or a bound of
    /// at least `least`) both must find it.
    fn reduced_finds_what_unreduced_finds(model: &(dyn Fn() + Sync), message: &str, least: u32) {
        for substrate in SUBSTRATES {
            for bound in BOUNDS {
                let name = format!("{substrate:?}, bound {bound:?}");
                let found = |reduction| match dfs(substrate, reduction, bound).check(model) {
                    Err(failure) => {
                        assert_eq!(failure.kind(), FailureKind::Panic, "{name}: {failure}");
                        assert!(failure.message().contains(message), "{name}: {failure}");
                        true
                    }
                    Ok(report) => {
                        assert!(report.exhausted, "{name}: {report}");
                        false
                    }
                };
                let unreduced = found(Reduction::Off);
                assert_eq!(
                    found(Reduction::Dpor),
                    unreduced,
                    "{name}: {reduction:?}",
                    reduction = Reduction::Dpor
                );
                assert!(
                    unreduced || bound.is_some_and(|b| b < least),
                    "{name}: not found"
                );
            }
        }
    }

    #[test]
    fn a_task_reads_a_std_flag_between_the_halves_of_another_tasks_yield() {
        let found = |model: fn()| reduced_finds_what_unreduced_finds(&model, "saw the flag set", 1);
        found(flag_set_around_a_yield::<false>);
        found(flag_set_around_a_yield::<true>);
    }

    /// A thread parks and, if it wakes spuriously before its `std` flag is set, fails; the
    /// thread that sets the flag and unparks it yields once first.
    fn flag_set_after_a_yield_then_unpark() {
        let flag = Plain::new(AtomicBool::new(false));
        let parked = {
            let flag = flag.clone();
            thread::spawn(move || {
                thread::park();
                assert!(flag.load(SeqCst), "woke before the flag was set");
            })
        };
        thread::yield_now();
        flag.store(true, SeqCst);
        parked.thread().unpark();
        parked.join().unwrap();
    }

    #[test]
    fn a_spurious_wake_up_reads_a_std_flag_set_after_a_yield() {
        reduced_finds_what_unreduced_finds(&flag_set_after_a_yield_then_unpark, "woke before", 1);
    }

    /// A thread doubles a value behind a `std` mutex just after a yield, holding a modelled
    /// lock; another adds to it: 1, then 2 or 6 depending on whether its `try_lock` of the
    /// same lock succeeds (under a write lock), then 3. The doubling can come before, after
    /// or between the additions it is not excluded from: 6, 7, 9, 12 (the `try_lock`
    /// succeeded), or 11, 17 (it failed, so the doubling came after +1 and before +3).
    fn doubling_after_a_yield(seen: &std::sync::Mutex<BTreeSet<usize>>) -> impl Fn() + Sync {
        move || {
            let lock = Plain::new(Mutex::new(()));
            let rw = Plain::new(RwLock::new(()));
            let value = Plain::new(std::sync::Mutex::new(0usize));
            let add = |by: usize, v: &std::sync::Mutex<usize>| *v.lock().unwrap() += by;
            let adder = {
                let (lock, value) = (lock.clone(), value.clone());
                thread::spawn(move || {
                    drop((lock.lock().unwrap(), add(1, &value)));
                    let _w = rw.write().unwrap();
                    let by = if lock.try_lock().is_ok() { 2 } else { 6 };
                    add(by, &value);
                    drop(_w);
                    drop((lock.lock().unwrap(), add(3, &value)));
                })
            };
            let doubler = {
                let (lock, value) = (lock.clone(), value.clone());
                thread::spawn(move || {
                    let _g = lock.lock().unwrap();
                    thread::yield_now();
                    *value.lock().unwrap() *= 2;
                })
            };
            adder.join().unwrap();
            doubler.join().unwrap();
            seen.lock().unwrap().insert(*value.lock().unwrap());
        }
    }

    #[test]
    fn a_std_value_changed_after_a_yield_reaches_every_outcome() {
        for substrate in SUBSTRATES {
            for bound in BOUNDS {
                let outcomes = |reduction| {
                    let seen = std::sync::Mutex::new(BTreeSet::new());
                    let report = dfs(substrate, reduction, bound)
                        .check(doubling_after_a_yield(&seen))
                        .unwrap();
                    assert!(report.exhausted, "{report}");
                    seen.into_inner().unwrap()
                };
                let name = format!("{substrate:?}, bound {bound:?}");
                let unreduced = outcomes(Reduction::Off);
                assert_eq!(outcomes(Reduction::Dpor), unreduced, "{name}");
                if bound.is_none() {
                    assert_eq!(unreduced, BTreeSet::from([6, 7, 9, 11, 12, 17]), "{name}");
                }
            }
        }
    }

    /// A switch point that conflicts with nothing: a load of a modelled atomic no one stores.
    fn gate() {
        interleave_test::sync::atomic::AtomicBool::new(false).load(SeqCst);
    }

    /// A sleep lets other threads act as a yield does: a thread sets a `std` flag, sleeps,
    /// and clears it; main reads it once.
    fn flag_set_around_a_sleep() {
        let flag = Plain::new(AtomicBool::new(false));
        let sleeper = {
            let flag = flag.clone();
            thread::spawn(move || {
                flag.store(true, SeqCst);
                thread::sleep(std::time::Duration::from_millis(1));
                flag.store(false, SeqCst);
            })
        };
        // A switch point of main's before its `std` load, which is in no yield's events.
        gate();
        assert!(!flag.load(SeqCst), "main saw the flag set");
        sleeper.join().unwrap();
    }

    #[test]
    fn a_sleep_exposes_std_state_as_a_yield_does() {
        reduced_finds_what_unreduced_finds(&flag_set_around_a_sleep, "saw the flag set", 2);
    }

    /// Two threads wait for a modelled flag, yielding in a loop; a third sets it.
    fn spinners() {
        let flag = Plain::new(interleave_test::sync::atomic::AtomicBool::new(false));
        let spin = |flag: Plain<interleave_test::sync::atomic::AtomicBool>| {
            thread::spawn(move || {
                while !flag.load(SeqCst) {
                    thread::yield_now();
                }
            })
        };
        let handles = [spin(flag.clone()), spin(flag.clone())];
        flag.store(true, SeqCst);
        for h in handles {
            h.join().unwrap();
        }
    }

    /// A yield a thread reaches again in one execution is a loop's: its events order nothing
    /// (else a spin loop's every round would be ordered against every other event), and the
    /// report of a reduced search names it. The count is the one without the rule for yields
    /// at all (`spin_fairness.rs`'s spinners, whose yields are all a loop's).
    #[test]
    fn a_yield_in_a_loop_is_named_in_the_statement() {
        for substrate in SUBSTRATES {
            let report = dfs(substrate, Reduction::Dpor, None)
                .check(spinners)
                .unwrap();
            assert!(report.exhausted, "{report}");
            assert_eq!(report.loop_yields, 1, "{report}");
            assert!(
                report
                    .to_string()
                    .contains("; yields in loops (1 place) order no state outside the model"),
                "{report}"
            );
            let plain = dfs(substrate, Reduction::Off, None)
                .check(spinners)
                .unwrap();
            assert_eq!(
                plain.loop_yields, 0,
                "no reduction, nothing skipped: {plain}"
            );
        }
    }

    /// A helper that yields, called twice by straight-line code, is two places, not a loop:
    /// each of its yields exposes what the thread changed around it.
    fn helper_twice() {
        assert_ne!(helper_twice_seen(), 2, "main saw both bumps");
    }

    /// [`helper_twice`]'s program: what main's load saw.
    fn helper_twice_seen() -> usize {
        let count = Plain::new(AtomicUsize::new(0));
        let bump = |count: &AtomicUsize| {
            count.fetch_add(1, SeqCst);
            thread::yield_now();
        };
        let bumper = {
            let count = count.clone();
            thread::spawn(move || {
                bump(&count);
                bump(&count);
                count.fetch_sub(2, SeqCst);
            })
        };
        gate();
        let seen = count.load(SeqCst);
        bumper.join().unwrap();
        seen
    }

    #[test]
    fn a_helper_that_yields_called_twice_is_not_a_loop() {
        reduced_finds_what_unreduced_finds(&helper_twice, "saw both bumps", 2);
        let report = dfs(SUBSTRATES[0], Reduction::Dpor, None)
            .check(|| {
                helper_twice_seen();
            })
            .unwrap();
        assert_eq!(report.loop_yields, 0, "{report}");
    }
}
