//! `Barrier`, `Once`, `OnceLock` and `LazyLock`: one leader per generation, one run of the
//! initializer, waiting while it runs, poisoning, and deadlock reports.

use std::sync::atomic::{AtomicUsize, Ordering};

use interleave_test::sync::{Arc, Barrier, LazyLock, Mutex, Once, OnceLock};
use interleave_test::{Builder, FailureKind, thread};

/// Spawns `n` model threads running `f(i)` and joins them.
fn run_threads(n: usize, f: impl Fn(usize) + Send + Sync + 'static) {
    let f = Arc::new(f);
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let f = Arc::clone(&f);
            thread::spawn(move || f(i))
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

/// Three threads meet at a `Barrier(3)`: none leaves before all three arrived, and exactly
/// one of them is the leader, in every execution.
#[test]
fn barrier_has_one_leader_and_waits_for_all() {
    let good = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&good);
    let report = Builder::new()
        .seed(21)
        .iterations(10_000)
        .check(move || {
            let barrier = Arc::new(Barrier::new(3));
            let arrived = Arc::new(Mutex::new(0usize));
            let leaders = Arc::new(Mutex::new(0usize));
            let (a, l) = (Arc::clone(&arrived), Arc::clone(&leaders));
            run_threads(3, move |_| {
                *a.lock().unwrap() += 1;
                let result = barrier.wait();
                assert_eq!(
                    *a.lock().unwrap(),
                    3,
                    "a thread passed the barrier before all arrived"
                );
                if result.is_leader() {
                    *l.lock().unwrap() += 1;
                }
            });
            assert_eq!(*leaders.lock().unwrap(), 1);
            counted.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    assert_eq!(report.executions, 10_000);
    assert_eq!(good.load(Ordering::Relaxed), 10_000);
}

/// The same barrier serves two generations: a fast thread that reaches the second `wait`
/// while others still leave the first one must not be released early, and each generation
/// has exactly one leader.
#[test]
fn barrier_is_reusable_across_generations() {
    Builder::new()
        .seed(22)
        .iterations(2_000)
        .check(|| {
            let barrier = Arc::new(Barrier::new(3));
            // Arrivals and leaders per generation.
            let arrived = Arc::new(Mutex::new([0usize; 2]));
            let leaders = Arc::new(Mutex::new([0usize; 2]));
            let (a, l) = (Arc::clone(&arrived), Arc::clone(&leaders));
            run_threads(3, move |_| {
                for generation in 0..2 {
                    a.lock().unwrap()[generation] += 1;
                    let result = barrier.wait();
                    assert_eq!(
                        a.lock().unwrap()[generation],
                        3,
                        "released before generation {generation} filled"
                    );
                    if result.is_leader() {
                        l.lock().unwrap()[generation] += 1;
                    }
                }
            });
            assert_eq!(*leaders.lock().unwrap(), [1, 1]);
        })
        .unwrap();
}

/// As in std, a barrier for 0 or 1 threads never blocks and every caller leads.
#[test]
fn barrier_of_zero_or_one_never_blocks() {
    Builder::new()
        .seed(23)
        .iterations(10)
        .check(|| {
            for n in [0, 1] {
                let barrier = Barrier::new(n);
                assert!(barrier.wait().is_leader());
                assert!(barrier.wait().is_leader());
            }
        })
        .unwrap();
}

/// A `Barrier(3)` reached by only two threads never opens: a deadlock in which both threads
/// wait at the barrier.
#[test]
fn barrier_short_of_threads_is_a_deadlock() {
    let failure = Builder::new()
        .seed(24)
        .iterations(10)
        .check(|| {
            let barrier = Arc::new(Barrier::new(3));
            let other = Arc::clone(&barrier);
            let _t = thread::Builder::new()
                .name("worker".into())
                .spawn(move || other.wait())
                .unwrap();
            barrier.wait();
        })
        .unwrap_err();
    assert_eq!(failure.kind(), FailureKind::Deadlock);
    let names: Vec<_> = failure
        .threads()
        .iter()
        .map(|t| t.thread().name())
        .collect();
    assert_eq!(names, [Some("main"), Some("worker")]);
    for t in failure.threads() {
        assert!(
            t.state().starts_with("waits to pass Barrier #0"),
            "{}",
            t.state()
        );
    }
}

/// Three threads race to `call_once`: the closure runs exactly once in every execution, and
/// each caller sees its effect as soon as its own `call_once` returns (callers that arrive
/// while it runs wait for it).
#[test]
fn once_runs_exactly_once_and_waiters_see_the_effect() {
    let runs = std::sync::Arc::new(AtomicUsize::new(0));
    let total = std::sync::Arc::clone(&runs);
    Builder::new()
        .seed(25)
        .iterations(10_000)
        .check(move || {
            let once = Arc::new(Once::new());
            let effect = Arc::new(Mutex::new(0usize));
            let (e, total) = (Arc::clone(&effect), std::sync::Arc::clone(&total));
            run_threads(3, move |_| {
                once.call_once(|| {
                    // Two switch points inside: other callers reach `call_once` meanwhile.
                    let before = *e.lock().unwrap();
                    *e.lock().unwrap() = before + 1;
                    total.fetch_add(1, Ordering::Relaxed);
                });
                assert_eq!(
                    *e.lock().unwrap(),
                    1,
                    "call_once returned before the closure's effect"
                );
                assert!(once.is_completed());
            });
            assert_eq!(*effect.lock().unwrap(), 1);
        })
        .unwrap();
    assert_eq!(runs.load(Ordering::Relaxed), 10_000);
}

/// A closure that panics poisons the `Once`: a later `call_once` panics with std's message,
/// `call_once_force` runs and is told about the poison, and completing clears it.
#[test]
fn once_poisoned_by_a_panic() {
    Builder::new()
        .seed(26)
        .iterations(100)
        .thread_panics_fail(false)
        .check(|| {
            let once = Arc::new(Once::new());
            let o = Arc::clone(&once);
            let first = thread::spawn(move || o.call_once(|| panic!("first closure panics")));
            assert!(first.join().is_err());
            assert!(!once.is_completed());

            let o = Arc::clone(&once);
            let second = thread::spawn(move || {
                o.call_once(|| unreachable!("a poisoned Once runs no closure"))
            });
            let payload = second.join().unwrap_err();
            let message = payload.downcast_ref::<&str>().copied().unwrap_or_default();
            assert_eq!(message, "Once instance has previously been poisoned");

            let mut saw_poison = None;
            once.call_once_force(|state| saw_poison = Some(state.is_poisoned()));
            assert_eq!(saw_poison, Some(true));
            assert!(once.is_completed());
            once.call_once(|| unreachable!("a completed Once runs no closure"));
        })
        .unwrap();
}

/// `call_once` from inside its own closure waits for itself: a deadlock naming the thread
/// as the one running the closure.
#[test]
fn once_called_from_its_own_closure_is_a_deadlock() {
    let failure = Builder::new()
        .seed(27)
        .iterations(10)
        .check(|| {
            let once = Once::new();
            once.call_once(|| {
                // the inner call is 1 line below the outer one
                once.call_once(|| {});
            });
        })
        .unwrap_err();
    assert_eq!(failure.kind(), FailureKind::Deadlock);
    let [main] = failure.threads() else {
        panic!("one thread: {failure}")
    };
    assert!(
        main.state().starts_with("waits to run Once #0"),
        "{}",
        main.state()
    );
    let [holder] = main.held_by() else {
        panic!("one holder: {failure}")
    };
    assert_eq!(holder.thread().name(), Some("main"));
    let waits_at = main.location().unwrap().line();
    assert_eq!(
        holder.location().line() + 2,
        waits_at,
        "holder at the outer call, waiter at the inner one"
    );
    assert_eq!(failure.location().unwrap().line(), waits_at);
}

/// Racing `get_or_init` calls run one initializer; every caller gets its value; `set`
/// afterwards gives its value back.
#[test]
fn oncelock_get_or_init_initializes_once() {
    let inits = std::sync::Arc::new(AtomicUsize::new(0));
    let total = std::sync::Arc::clone(&inits);
    Builder::new()
        .seed(28)
        .iterations(5_000)
        .check(move || {
            let cell = Arc::new(OnceLock::new());
            let calls = Arc::new(Mutex::new(0usize));
            let (c, k, total) = (
                Arc::clone(&cell),
                Arc::clone(&calls),
                std::sync::Arc::clone(&total),
            );
            run_threads(3, move |i| {
                let value = c.get_or_init(|| {
                    *k.lock().unwrap() += 1;
                    total.fetch_add(1, Ordering::Relaxed);
                    100 + i
                });
                assert_eq!(c.get(), Some(value));
                assert!((100..103).contains(value));
            });
            assert_eq!(*calls.lock().unwrap(), 1);
            let value = *cell.get().unwrap();
            assert_eq!(cell.set(7), Err(7));
            assert_eq!(cell.wait(), &value);
        })
        .unwrap();
    assert_eq!(inits.load(Ordering::Relaxed), 5_000);
}

/// A panicking initializer leaves the cell empty (no poisoning, as in std); `take`,
/// `into_inner`, `From` and `Clone` behave as std's.
#[test]
fn oncelock_single_thread_api() {
    Builder::new()
        .seed(29)
        .iterations(20)
        .thread_panics_fail(false)
        .check(|| {
            let cell = Arc::new(OnceLock::<String>::new());
            let c = Arc::clone(&cell);
            assert!(
                thread::spawn(move || c.get_or_init(|| panic!("init fails")).len())
                    .join()
                    .is_err()
            );
            assert_eq!(cell.get(), None);
            assert_eq!(cell.get_or_init(|| "ok".into()), "ok");
            assert_eq!(format!("{cell:?}"), "OnceLock(\"ok\")");

            let mut cell = Arc::try_unwrap(cell).unwrap();
            assert_eq!(cell.take().as_deref(), Some("ok"));
            assert_eq!(format!("{cell:?}"), "OnceLock(<uninit>)");
            assert_eq!(cell.set("again".into()), Ok(()));
            let copy = cell.clone();
            assert_eq!(copy.into_inner().as_deref(), Some("again"));
            assert_eq!(OnceLock::from(3).get(), Some(&3));
        })
        .unwrap();
}

/// Two threads dereference a `LazyLock`: the initializer runs once and both see its value.
#[test]
fn lazylock_initializes_once() {
    let inits = std::sync::Arc::new(AtomicUsize::new(0));
    let total = std::sync::Arc::clone(&inits);
    Builder::new()
        .seed(30)
        .iterations(5_000)
        .check(move || {
            let calls = Arc::new(Mutex::new(0usize));
            let (k, total) = (Arc::clone(&calls), std::sync::Arc::clone(&total));
            let lazy = Arc::new(LazyLock::new(move || {
                *k.lock().unwrap() += 1;
                total.fetch_add(1, Ordering::Relaxed);
                41 + 1
            }));
            let l = Arc::clone(&lazy);
            run_threads(2, move |_| assert_eq!(**l, 42));
            assert_eq!(*calls.lock().unwrap(), 1);
            assert_eq!(*LazyLock::force(&lazy), 42);
        })
        .unwrap();
    assert_eq!(inits.load(Ordering::Relaxed), 5_000);
}
