//! The failing models of the `strategies` bench, each written once in a macro and expanded
//! over the tools it runs on.

/// Writes the buggy models of the first-failure measurement as `pub(crate) fn`s of module
/// `$module`, over the crate `$tool`.
macro_rules! buggy_models {
    ($module:ident, $tool:ident) => {
        pub(crate) mod $module {
            use $tool::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
            use $tool::sync::{Arc, Condvar, Mutex};
            use $tool::thread;

            /// Two threads each increment with a separate load and store; asserts that no
            /// update was lost (fails when both load before either stores).
            pub(crate) fn racy_counter() {
                let x = Arc::new(AtomicUsize::new(0));
                let workers: Vec<_> = (0..2)
                    .map(|_| {
                        let x = Arc::clone(&x);
                        thread::spawn(move || {
                            let v = x.load(SeqCst);
                            x.store(v + 1, SeqCst);
                        })
                    })
                    .collect();
                for w in workers {
                    w.join().unwrap();
                }
                assert_eq!(x.load(SeqCst), 2, "an update was lost");
            }

            /// The main thread locks `a` then `b`, a spawned thread `b` then `a`: each can take
            /// its first lock and wait forever for the other's.
            pub(crate) fn abba_deadlock() {
                let a = Arc::new(Mutex::new(0u32));
                let b = Arc::new(Mutex::new(0u32));
                let (a2, b2) = (Arc::clone(&a), Arc::clone(&b));
                let t = thread::spawn(move || {
                    let mut gb = b2.lock().unwrap();
                    let mut ga = a2.lock().unwrap();
                    *ga += 1;
                    *gb += 1;
                });
                {
                    let mut ga = a.lock().unwrap();
                    let mut gb = b.lock().unwrap();
                    *ga += 1;
                    *gb += 1;
                }
                t.join().unwrap();
            }

            /// The notifier sets the flag and notifies without taking the lock, so it can do
            /// both between the waiter's check (an `if` under the lock) and its `wait`: the
            /// notification is lost and the waiter waits forever (a deadlock).
            pub(crate) fn lost_wakeup() {
                let ready = Arc::new(AtomicBool::new(false));
                let pair = Arc::new((Mutex::new(()), Condvar::new()));
                let (ready2, pair2) = (Arc::clone(&ready), Arc::clone(&pair));
                let notifier = thread::spawn(move || {
                    ready2.store(true, SeqCst);
                    pair2.1.notify_one();
                });
                let guard = pair.0.lock().unwrap();
                if !ready.load(SeqCst) {
                    let _guard = pair.1.wait(guard).unwrap();
                }
                notifier.join().unwrap();
            }
        }
    };
}

buggy_models!(buggy_ours, interleave_test);
buggy_models!(buggy_shuttle, shuttle);

/// Writes `two_preemptions` as a `pub(crate) fn` of module `$module`, over the crate `$tool`.
///
/// The main thread stores 1 then 2 into `x` (initially 0); a spawned thread loads `x` twice.
/// The assertion fails only if the first load reads 1 and the second reads 2. Only main
/// writes, in the order 0, 1, 2, and every access is `SeqCst` on one location, so that outcome
/// means exactly: `store(1) < load#1 < store(2) < load#2`. It needs two preemptions and no
/// fewer:
/// - between `store(1)` and `load#1` control passes from main to the thread while main's next
///   operation, `store(2)`, could run (nothing blocks in between): a preemption of main;
/// - between `load#1` and `store(2)` control passes back while the thread's next operation,
///   `load#2`, could run: a preemption of the thread.
///
/// Two suffice: main spawns and stores 1; preempted, the thread loads 1; preempted, main
/// stores 2 and blocks in `join` (a free switch); the thread loads 2 and finishes; main's
/// assertion fails. (loom and interleave-test both count a preemption as a switch away from a
/// thread that could continue.) So a search bounded to 1 preemption cannot find it, and a
/// sound search bounded to 2 must.
macro_rules! two_preemptions {
    ($module:ident, $tool:ident) => {
        pub(crate) mod $module {
            use $tool::sync::Arc;
            use $tool::sync::atomic::{AtomicUsize, Ordering::SeqCst};
            use $tool::thread;

            /// The model (see the macro).
            pub(crate) fn two_preemptions() {
                let x = Arc::new(AtomicUsize::new(0));
                let x2 = Arc::clone(&x);
                let reader = thread::spawn(move || {
                    let first = x2.load(SeqCst);
                    let second = x2.load(SeqCst);
                    (first, second)
                });
                x.store(1, SeqCst);
                x.store(2, SeqCst);
                let seen = reader.join().unwrap();
                assert_ne!(
                    seen,
                    (1, 2),
                    "the reader ran between both pairs of operations"
                );
            }
        }
    };
}

two_preemptions!(two_ours, interleave_test);
two_preemptions!(two_loom, loom);
