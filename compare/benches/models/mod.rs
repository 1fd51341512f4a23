//! The passing models shared by the side-by-side benches (`throughput`, `strategies`,
//! `substrates`), written once in the `models!` macro and expanded once per tool, so every
//! tool runs the same code. `throughput` and `strategies` run the first four; the two long
//! ones, a few hundred operations per execution, only `substrates` runs.
//!
//! | model | what it does |
//! |---|---|
//! | `fetch_add_2x200` | two threads, each 200 `fetch_add(1, SeqCst)` on one `AtomicUsize`; asserts 400 |
//! | `racy_counter` | two threads, each `load` then `store(v + 1)`; asserts 1 or 2 |
//! | `mutex_3x2` | three threads, each `*m.lock().unwrap() += 1` twice; asserts 6 |
//! | `mpsc_2x3` | two producers send 3 values each; the main thread receives the 6 |
//! | `atomics_long` | three threads, each 17 rounds of `fetch_add`, a `compare_exchange` retry loop, `store` and `load`s on three atomics (about 300 operations); asserts the final count, sum and last store |
//! | `pipeline_2stage` | a producer sends 20 values into one channel, a middle thread receives each, maps `v` to `2v + 1` and sends it into a second one; the main thread receives the 20 in order and asserts their sum, 400 |

/// Writes the six models as `pub(crate) fn`s of module `$module`, over the crate `$tool`
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

            /// The rounds of each thread of [`atomics_long`]. 17 keep an execution within
            /// loom's default limit of 1,000 branches: loom branches twice on a load or a
            /// read-modify-write (a thread switch, then the store to read) and once on a
            /// store, so a round is 11 branches and an execution about 570, plus retries.
            const ROUNDS: usize = 17;

            /// The three atomics that [`atomics_long`]'s threads share.
            struct Shared {
                /// One `fetch_add(1)` per round of every thread.
                count: AtomicUsize,
                /// Round `i` of every thread adds `i + 1` with a `compare_exchange` loop.
                total: AtomicUsize,
                /// The last round stored, as `thread * ROUNDS + round`.
                last: AtomicUsize,
            }

            /// Three threads, each [`ROUNDS`] rounds of six or more operations on three shared
            /// atomics: about 300 operations per execution, all `SeqCst`.
            #[allow(dead_code, reason = "only the `substrates` bench runs the long models")]
            pub(crate) fn atomics_long() {
                let shared = Arc::new(Shared {
                    count: AtomicUsize::new(0),
                    total: AtomicUsize::new(0),
                    last: AtomicUsize::new(0),
                });
                let workers: Vec<_> = (0..3)
                    .map(|t| {
                        let shared = Arc::clone(&shared);
                        thread::spawn(move || {
                            for i in 0..ROUNDS {
                                atomics_round(&shared, t, i);
                            }
                        })
                    })
                    .collect();
                for w in workers {
                    w.join().unwrap();
                }
                assert_eq!(shared.count.load(SeqCst), 3 * ROUNDS);
                assert_eq!(shared.total.load(SeqCst), 3 * ROUNDS * (ROUNDS + 1) / 2);
                // The final store is the last round of one of the threads.
                assert_eq!(shared.last.load(SeqCst) % ROUNDS, ROUNDS - 1);
            }

            /// Round `i` of thread `t` of [`atomics_long`]: a `fetch_add`, a load and a
            /// `compare_exchange` loop (retried while another thread got in between), a store
            /// and two checked loads.
            fn atomics_round(shared: &Shared, t: usize, i: usize) {
                shared.count.fetch_add(1, SeqCst);
                let total = &shared.total;
                let mut seen = total.load(SeqCst);
                while let Err(now) = total.compare_exchange(seen, seen + i + 1, SeqCst, SeqCst) {
                    seen = now;
                }
                shared.last.store(t * ROUNDS + i, SeqCst);
                // This thread's own increments are visible to it.
                assert!(shared.count.load(SeqCst) > i, "count lost an increment");
                assert!(shared.last.load(SeqCst) < 3 * ROUNDS, "last holds no round");
            }

            /// A two-stage pipeline: a producer sends 20 values into one channel, a middle
            /// thread receives each and sends `2v + 1` into a second one, and the main thread
            /// receives the 20.
            #[allow(dead_code, reason = "only the `substrates` bench runs the long models")]
            pub(crate) fn pipeline_2stage() {
                const N: u32 = 20;
                let (to_middle, from_producer) = mpsc::channel::<u32>();
                let (to_main, from_middle) = mpsc::channel::<u32>();
                let producer = thread::spawn(move || {
                    for v in 0..N {
                        to_middle.send(v).unwrap();
                    }
                });
                let middle = thread::spawn(move || {
                    for _ in 0..N {
                        let v = from_producer.recv().unwrap();
                        to_main.send(2 * v + 1).unwrap();
                    }
                });
                let got: Vec<u32> = (0..N).map(|_| from_middle.recv().unwrap()).collect();
                // One path through two FIFO channels keeps the order; the first N odd
                // numbers sum to N².
                assert!(got.iter().copied().eq((0..N).map(|v| 2 * v + 1)), "{got:?}");
                assert_eq!(got.iter().sum::<u32>(), N * N);
                producer.join().unwrap();
                middle.join().unwrap();
            }
        }
    };
}

models!(ours, interleave_test);
models!(theirs, shuttle);
