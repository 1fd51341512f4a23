//! Correct models pass many executions: the explorer reports no false failures.

use interleave_test::sync::{Arc, Mutex};
use interleave_test::{Builder, thread};

#[test]
fn locked_counter_passes_10000_executions() {
    let report = Builder::new()
        .seed(21)
        .iterations(10_000)
        .check(|| {
            let m = Arc::new(Mutex::new(0));
            let hs: Vec<_> = (0..3)
                .map(|_| {
                    let m = Arc::clone(&m);
                    thread::spawn(move || {
                        for _ in 0..2 {
                            *m.lock().unwrap() += 1;
                        }
                    })
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
            assert_eq!(*m.lock().unwrap(), 6);
        })
        .unwrap();
    assert_eq!(report.executions, 10_000);
    // 3 spawns + 3 x 2 x (lock + unlock) + 3 joins + 1 final lock and unlock, at least.
    assert!(report.max_steps >= 20, "{report}");
}

#[test]
fn scoped_threads_pass_10000_executions() {
    let report = Builder::new()
        .seed(22)
        .iterations(10_000)
        .check(|| {
            let total = Mutex::new(0);
            let parts = [1, 2, 3];
            thread::scope(|s| {
                for p in &parts {
                    let total = &total;
                    s.spawn(move || *total.lock().unwrap() += p);
                }
            });
            assert_eq!(total.into_inner().unwrap(), 6);
        })
        .unwrap();
    assert_eq!(report.executions, 10_000);
}

/// A destructor that takes a lock runs during the teardown that follows a failure, while
/// another thread holds that lock; the process must neither abort nor hang.
#[test]
fn destructors_that_lock_during_teardown_do_not_abort_or_hang() {
    struct Unregister(Arc<Mutex<Vec<u32>>>, u32);
    impl Drop for Unregister {
        fn drop(&mut self) {
            // Poisoned by the failing worker: as with std, unwrapping here would panic
            // during unwinding and abort.
            let mut registry = self.0.lock().unwrap_or_else(|e| e.into_inner());
            registry.retain(|&x| x != self.1);
        }
    }
    for seed in 0..10 {
        let failure = Builder::new()
            .seed(seed)
            .iterations(200)
            .check(|| {
                let registry = Arc::new(Mutex::new(vec![1, 2]));
                let workers: Vec<_> = (1..=2)
                    .map(|id| {
                        let registry = Arc::clone(&registry);
                        thread::spawn(move || {
                            let _me = Unregister(Arc::clone(&registry), id);
                            let guard = registry.lock().unwrap();
                            thread::yield_now();
                            assert!(guard.len() < 2 || id == 1, "worker 2 saw a full registry");
                        })
                    })
                    .collect();
                for w in workers {
                    let _ = w.join();
                }
            })
            .expect_err("worker 2 fails in every execution");
        assert_eq!(
            failure.kind(),
            interleave_test::FailureKind::Panic,
            "seed {seed}"
        );
        assert_eq!(
            failure.message(),
            "worker 2 saw a full registry",
            "seed {seed}"
        );
    }
}
