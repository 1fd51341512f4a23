//! The weak-memory models of `benches/weak_memory.rs`, written once for both tools.

/// Writes the models as `pub(crate) fn`s of module `$module`, over the crate `$tool`
/// (`interleave_test` or `loom`: both mirror std's paths).
macro_rules! weak_models {
    ($(#[$attr:meta])* $module:ident, $tool:ident) => {
        $(#[$attr])*
        pub(crate) mod $module {
            use $tool::sync::atomic::{
                AtomicBool, AtomicUsize, Ordering,
                Ordering::{Acquire, Relaxed, Release},
            };
            use $tool::sync::{Arc, Mutex};
            use $tool::{hint, thread};

            /// Two fresh `AtomicUsize`s at 0, shared.
            fn pair() -> Arc<(AtomicUsize, AtomicUsize)> {
                Arc::new((AtomicUsize::new(0), AtomicUsize::new(0)))
            }

            /// Message passing: a writer publishes a payload through a flag, stored with
            /// `flag_store` and loaded by main with `flag_load`; main asserts the payload
            /// when it sees the flag.
            fn message_passing(flag_store: Ordering, flag_load: Ordering) {
                let shared = Arc::new((AtomicUsize::new(0), AtomicBool::new(false)));
                let writer = {
                    let shared = Arc::clone(&shared);
                    thread::spawn(move || {
                        shared.0.store(42, Relaxed);
                        shared.1.store(true, flag_store);
                    })
                };
                if shared.1.load(flag_load) {
                    assert_eq!(shared.0.load(Relaxed), 42, "stale payload behind the flag");
                }
                writer.join().unwrap();
            }

            /// Message passing with a `Release` flag store and an `Acquire` flag load.
            pub(crate) fn mp_rel_acq() {
                message_passing(Release, Acquire);
            }

            /// Message passing with a `Relaxed` flag: the payload can be stale (a bug).
            pub(crate) fn mp_relaxed() {
                message_passing(Relaxed, Relaxed);
            }

            /// Store buffering: (what the spawned thread read of `y`, what main read of `x`).
            fn store_buffering() -> (usize, usize) {
                let xy = pair();
                let other = {
                    let xy = Arc::clone(&xy);
                    thread::spawn(move || {
                        xy.0.store(1, Relaxed);
                        xy.1.load(Relaxed)
                    })
                };
                xy.1.store(1, Relaxed);
                let b = xy.0.load(Relaxed);
                let a = other.join().unwrap();
                (a, b)
            }

            /// Store buffering, all `Relaxed`, with no assertion.
            pub(crate) fn sb_relaxed() {
                std::hint::black_box(store_buffering());
            }

            /// Store buffering asserting an outcome that `Relaxed` allows (a bug).
            pub(crate) fn sb_relaxed_assert() {
                let (a, b) = store_buffering();
                assert!(!(a == 0 && b == 0), "both loads read 0");
            }

            /// Load buffering, all `Relaxed`, with no assertion.
            pub(crate) fn lb_relaxed() {
                let xy = pair();
                let other = {
                    let xy = Arc::clone(&xy);
                    thread::spawn(move || {
                        let a = xy.1.load(Relaxed);
                        xy.0.store(1, Relaxed);
                        a
                    })
                };
                let b = xy.0.load(Relaxed);
                xy.1.store(1, Relaxed);
                let a = other.join().unwrap();
                std::hint::black_box((a, b));
            }

            /// Write-to-read causality with `Release` stores and `Acquire` loads: main, having
            /// seen `y`, must see the `x` that the thread storing `y` had seen.
            pub(crate) fn wrc_rel_acq() {
                let xy = pair();
                let first = {
                    let xy = Arc::clone(&xy);
                    thread::spawn(move || xy.0.store(1, Release))
                };
                let second = {
                    let xy = Arc::clone(&xy);
                    thread::spawn(move || {
                        if xy.0.load(Acquire) == 1 {
                            xy.1.store(1, Release);
                        }
                    })
                };
                if xy.1.load(Acquire) == 1 {
                    assert_eq!(xy.0.load(Relaxed), 1, "causality broken");
                }
                first.join().unwrap();
                second.join().unwrap();
            }

            /// Independent reads of independent writes, all `Relaxed`, with no assertion: two
            /// writers, a spawned reader that loads `x` then `y`, and main, which loads `y`
            /// then `x`. (With both readers spawned loom's search runs for many minutes.)
            pub(crate) fn iriw_relaxed() {
                let xy = pair();
                let writers: Vec<_> = (0..2)
                    .map(|writer| {
                        let xy = Arc::clone(&xy);
                        thread::spawn(move || {
                            let target = if writer == 0 { &xy.0 } else { &xy.1 };
                            target.store(1, Relaxed);
                        })
                    })
                    .collect();
                let reader = {
                    let xy = Arc::clone(&xy);
                    thread::spawn(move || (xy.0.load(Relaxed), xy.1.load(Relaxed)))
                };
                let mine = (xy.1.load(Relaxed), xy.0.load(Relaxed));
                for w in writers {
                    w.join().unwrap();
                }
                std::hint::black_box((reader.join().unwrap(), mine));
            }

            /// Two threads `fetch_add(1, Relaxed)`; main checks the sum after joining.
            pub(crate) fn fetch_add_relaxed() {
                let n = Arc::new(AtomicUsize::new(0));
                let threads: Vec<_> = (0..2)
                    .map(|_| {
                        let n = Arc::clone(&n);
                        thread::spawn(move || {
                            n.fetch_add(1, Relaxed);
                        })
                    })
                    .collect();
                for t in threads {
                    t.join().unwrap();
                }
                assert_eq!(n.load(Relaxed), 2, "an increment was lost");
            }

            /// Two threads each take an `AtomicBool` spinlock once (`compare_exchange` with
            /// `lock`, then `store(false, unlock)`) and, holding it, increment a `Relaxed`
            /// counter with a separate load and store; main checks the count.
            fn spinlock(lock: Ordering, unlock: Ordering) {
                let shared = Arc::new((AtomicBool::new(false), AtomicUsize::new(0)));
                let threads: Vec<_> = (0..2)
                    .map(|_| {
                        let shared = Arc::clone(&shared);
                        thread::spawn(move || {
                            let (held, count) = &*shared;
                            while held.compare_exchange(false, true, lock, Relaxed).is_err() {
                                hint::spin_loop();
                            }
                            let v = count.load(Relaxed);
                            count.store(v + 1, Relaxed);
                            held.store(false, unlock);
                        })
                    })
                    .collect();
                for t in threads {
                    t.join().unwrap();
                }
                assert_eq!(shared.1.load(Relaxed), 2, "an increment was lost");
            }

            /// The spinlock with `Acquire` lock and `Release` unlock.
            pub(crate) fn spinlock_acq_rel() {
                spinlock(Acquire, Release);
            }

            /// The spinlock with `Relaxed` lock and unlock (a bug).
            pub(crate) fn spinlock_relaxed() {
                spinlock(Relaxed, Relaxed);
            }

            /// Double-checked initialisation whose flag is stored `Relaxed` after the data
            /// (a bug): main and one thread each get the value, which must be 42.
            pub(crate) fn dcl_relaxed_flag() {
                let shared =
                    Arc::new((Mutex::new(()), AtomicBool::new(false), AtomicUsize::new(0)));
                let get = |shared: &(Mutex<()>, AtomicBool, AtomicUsize)| {
                    let (lock, ready, data) = shared;
                    if !ready.load(Acquire) {
                        let _guard = lock.lock().unwrap();
                        if !ready.load(Relaxed) {
                            data.store(42, Relaxed);
                            ready.store(true, Relaxed);
                        }
                    }
                    data.load(Relaxed)
                };
                let other = {
                    let shared = Arc::clone(&shared);
                    thread::spawn(move || get(&shared))
                };
                assert_eq!(get(&shared), 42, "initialised value not seen");
                assert_eq!(other.join().unwrap(), 42, "initialised value not seen");
            }
        }
    };
}
