//! The four passing models shared by the side-by-side benches (`throughput`, `strategies`),
//! written once in the `models!` macro and expanded once per tool, so every tool runs the
//! same code.
//!
//! | model | what it does |
//! |---|---|
//! | `fetch_add_2x200` | two threads, each 200 `fetch_add(1, SeqCst)` on one `AtomicUsize`; asserts 400 |
//! | `racy_counter` | two threads, each `load` then `store(v + 1)`; asserts 1 or 2 |
//! | `mutex_3x2` | three threads, each `*m.lock().unwrap() += 1` twice; asserts 6 |
//! | `mpsc_2x3` | two producers send 3 values each; the main thread receives the 6 |

/// Writes the four models as `pub(crate) fn`s of module `$module`, over the crate `$tool`
/// (`interleave_test`, `shuttle` or `loom`: all three mirror std's paths). Attributes written
/// before `$module` go on the module. A bench that expands it for another tool declares this
/// module with `#[macro_use]`.
macro_rules! models {
    ($(#[$attr:meta])* $module:ident, $tool:ident) => {
        $(#[$attr])*
        pub(crate) mod $module {
            use $tool::sync::atomic::{AtomicUsize, Ordering::SeqCst};
            use $tool::sync::{Arc, Mutex, mpsc};
            use $tool::thread;

            /// Two threads each add 1 to a shared atomic 200 times.
            pub(crate) fn fetch_add_2x200() {
                let x = Arc::new(AtomicUsize::new(0));
                let workers: Vec<_> = (0..2)
                    .map(|_| {
                        let x = Arc::clone(&x);
                        thread::spawn(move || {
                            for _ in 0..200 {
                                x.fetch_add(1, SeqCst);
                            }
                        })
                    })
                    .collect();
                for w in workers {
                    w.join().unwrap();
                }
                assert_eq!(x.load(SeqCst), 400);
            }

            /// Two threads each increment with a separate load and store (an update may be lost).
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
                let end = x.load(SeqCst);
                assert!(end == 1 || end == 2, "counter ended at {end}");
            }

            /// Three threads each increment a mutex-protected counter twice.
            pub(crate) fn mutex_3x2() {
                let m = Arc::new(Mutex::new(0u64));
                let workers: Vec<_> = (0..3)
                    .map(|_| {
                        let m = Arc::clone(&m);
                        thread::spawn(move || {
                            for _ in 0..2 {
                                *m.lock().unwrap() += 1;
                            }
                        })
                    })
                    .collect();
                for w in workers {
                    w.join().unwrap();
                }
                assert_eq!(*m.lock().unwrap(), 6);
            }

            /// Two producers send 3 values each; the main thread receives all 6.
            pub(crate) fn mpsc_2x3() {
                let (tx, rx) = mpsc::channel::<u32>();
                let senders = [tx.clone(), tx];
                let producers: Vec<_> = senders
                    .into_iter()
                    .zip(0u32..)
                    .map(|(tx, p)| {
                        thread::spawn(move || {
                            for i in 0..3 {
                                tx.send(p * 10 + i).unwrap();
                            }
                        })
                    })
                    .collect();
                let mut got: Vec<u32> = (0..6).map(|_| rx.recv().unwrap()).collect();
                got.sort_unstable();
                assert_eq!(got, [0, 1, 2, 10, 11, 12]);
                for p in producers {
                    p.join().unwrap();
                }
            }
        }
    };
}

models!(ours, interleave_test);
models!(theirs, shuttle);
