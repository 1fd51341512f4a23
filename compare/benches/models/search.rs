//! Two more passing models for the exhaustive-search measurement of the `strategies` bench,
//! written once in the `search_models!` macro and expanded once per tool, like `models!`.
//!
//! | model | what it does |
//! |---|---|
//! | `rwlock_2r1w` | two readers each read an `RwLock<u32>` twice, a writer adds 1 twice; asserts each read is at most 2 and the end is 2 |
//! | `condvar_2p1c` | two producers each push 2 values under a mutex and `notify_one`; the main thread waits on the condvar until it has taken all 4 |

/// Writes the models as `pub(crate) fn`s of module `$module`, over the crate `$tool`
/// (`interleave_test`, `shuttle` or `loom`: all three mirror std's paths).
macro_rules! search_models {
    ($module:ident, $tool:ident) => {
        pub(crate) mod $module {
            use $tool::sync::{Arc, Condvar, Mutex, RwLock};
            use $tool::thread;

            /// Two readers read twice each while a writer increments twice.
            pub(crate) fn rwlock_2r1w() {
                let lock = Arc::new(RwLock::new(0u32));
                let mut threads = Vec::new();
                for _ in 0..2 {
                    let lock = Arc::clone(&lock);
                    threads.push(thread::spawn(move || {
                        for _ in 0..2 {
                            assert!(*lock.read().unwrap() <= 2);
                        }
                    }));
                }
                let writer = Arc::clone(&lock);
                threads.push(thread::spawn(move || {
                    for _ in 0..2 {
                        *writer.write().unwrap() += 1;
                    }
                }));
                for t in threads {
                    t.join().unwrap();
                }
                assert_eq!(*lock.read().unwrap(), 2);
            }

            /// Two producers push 2 values each and notify; the consumer waits for them.
            pub(crate) fn condvar_2p1c() {
                let pair = Arc::new((Mutex::new(Vec::<u32>::new()), Condvar::new()));
                let producers: Vec<_> = (0..2u32)
                    .map(|p| {
                        let pair = Arc::clone(&pair);
                        thread::spawn(move || {
                            for i in 0..2 {
                                let (queue, ready) = &*pair;
                                queue.lock().unwrap().push(p * 10 + i);
                                ready.notify_one();
                            }
                        })
                    })
                    .collect();
                let (queue, ready) = &*pair;
                let mut taken = 0;
                while taken < 4 {
                    let mut q = queue.lock().unwrap();
                    while q.is_empty() {
                        q = ready.wait(q).unwrap();
                    }
                    taken += q.len();
                    q.clear();
                }
                for p in producers {
                    p.join().unwrap();
                }
            }
        }
    };
}
