//! The Tokio models of `benches/tokio.rs`, written once and expanded over each tool: `ours`
//! over `interleave_test` and its `tokio` module, `theirs` over `shuttle` and
//! `shuttle_tokio` (with its `shuttle` feature). Each model is a plain `fn()` that runs
//! its future under the tool's `block_on`, so that both tools' runners call it alike.

/// Expands the models into `mod $name`, over the tool crate `$krate` (for `sync::Arc` and
/// `future::block_on`) and its Tokio module `$tokio`.
macro_rules! tokio_models {
    ($name:ident, $krate:ident, $($tokio:ident)::+) => {
        pub(crate) mod $name {
            use std::time::Duration;

            use $($tokio)::+ as tokio;
            use $krate::future::block_on;
            use $krate::sync::Arc;
            use tokio::sync::{Mutex, Notify, mpsc, oneshot};
            use tokio::task::{self, JoinSet};
            use tokio::time;

            /// Three tasks of a `JoinSet` each send 2 values on a channel of capacity 1;
            /// main receives the 6, then joins the set.
            pub(crate) fn joinset_channel() {
                block_on(async {
                    let (tx, mut rx) = mpsc::channel::<u32>(1);
                    let mut set = JoinSet::new();
                    for t in 0..3u32 {
                        let tx = tx.clone();
                        set.spawn(async move {
                            for i in 0..2 {
                                tx.send(t * 2 + i).await.unwrap();
                            }
                        });
                    }
                    drop(tx);
                    let mut sum = 0;
                    for _ in 0..6 {
                        sum += rx.recv().await.unwrap();
                    }
                    while let Some(done) = set.join_next().await {
                        done.unwrap();
                    }
                    assert_eq!(sum, 15);
                });
            }

            /// Three spawned tasks each lock a Tokio mutex twice and increment it, yielding
            /// while they hold the guard; main joins them and checks the sum.
            pub(crate) fn mutex_tasks() {
                block_on(async {
                    let m = std::sync::Arc::new(Mutex::new(0u64));
                    let workers: Vec<_> = (0..3)
                        .map(|_| {
                            let m = m.clone();
                            tokio::spawn(async move {
                                for _ in 0..2 {
                                    let mut g = m.lock().await;
                                    task::yield_now().await;
                                    *g += 1;
                                }
                            })
                        })
                        .collect();
                    for w in workers {
                        w.await.unwrap();
                    }
                    assert_eq!(*m.lock().await, 6);
                });
            }

            /// Three requests: main notifies, the server task wakes from `notified()` and
            /// answers on that request's oneshot channel, which main awaits.
            pub(crate) fn notify_oneshot() {
                block_on(async {
                    let notify = Arc::new(Notify::new());
                    let (senders, receivers): (Vec<_>, Vec<_>) =
                        (0..3).map(|_| oneshot::channel::<u32>()).unzip();
                    let server = tokio::spawn({
                        let notify = Arc::clone(&notify);
                        async move {
                            for (i, tx) in (0u32..).zip(senders) {
                                notify.notified().await;
                                tx.send(i * 10).unwrap();
                            }
                        }
                    });
                    for (i, rx) in (0u32..).zip(receivers) {
                        notify.notify_one();
                        assert_eq!(rx.await.unwrap(), i * 10);
                    }
                    server.await.unwrap();
                });
            }

            /// Bug: a worker announces it is ready, then makes its `Notified`; main waits
            /// for the announcement and calls `notify_waiters`. Between the two, the
            /// notification is lost and both wait forever (a deadlock).
            pub(crate) fn lost_notification() {
                block_on(async {
                    let notify = Arc::new(Notify::new());
                    let ready = Arc::new(Notify::new());
                    let worker = tokio::spawn({
                        let (notify, ready) = (Arc::clone(&notify), Arc::clone(&ready));
                        async move {
                            ready.notify_one();
                            notify.notified().await; // BUG: made after the announcement
                        }
                    });
                    ready.notified().await;
                    notify.notify_waiters();
                    worker.await.unwrap();
                });
            }

            /// Bug: a task locks under a 5 ms timeout while main holds the lock for a 1 ms
            /// sleep; on the timeout path it takes the lock with `try_lock` and forgets the
            /// guard, so main's next `lock` waits forever (a deadlock).
            pub(crate) fn timeout_guard_leak() {
                block_on(async {
                    let lock = Arc::new(Mutex::new(0u32));
                    let holder = lock.lock().await;
                    let other = tokio::spawn({
                        let lock = Arc::clone(&lock);
                        async move {
                            match time::timeout(Duration::from_millis(5), lock.lock()).await {
                                Ok(mut guard) => *guard += 1,
                                Err(_) => {
                                    // BUG: the retry's guard is leaked on the timeout path.
                                    if let Ok(guard) = lock.try_lock() {
                                        std::mem::forget(guard);
                                    }
                                }
                            }
                        }
                    });
                    time::sleep(Duration::from_millis(1)).await;
                    drop(holder);
                    other.await.unwrap();
                    *lock.lock().await += 1;
                });
            }

            /// Bug: a loop `select!`s between a receive and a 1 ms tick, and the receive
            /// branch awaits again after taking a value: when the tick wins then, the
            /// value is dropped with the branch's future. The sender sends 2 values and
            /// drops its end; main asserts both arrived (a panic when one was lost).
            pub(crate) fn cancel_unsafe_select() {
                block_on(async {
                    let (tx, mut rx) = mpsc::channel::<u32>(2);
                    let sender = tokio::spawn(async move {
                        for v in 0..2 {
                            tx.send(v).await.unwrap();
                        }
                    });
                    let mut got = Vec::new();
                    loop {
                        // BUG: not cancel-safe: a value is held across the `yield_now`.
                        let next = async {
                            let v = rx.recv().await;
                            if v.is_some() {
                                task::yield_now().await;
                            }
                            v
                        };
                        tokio::select! {
                            v = next => match v {
                                Some(v) => got.push(v),
                                None => break,
                            },
                            () = time::sleep(Duration::from_millis(1)) => {}
                        }
                    }
                    sender.await.unwrap();
                    assert_eq!(got, [0, 1], "a value was lost when the tick won");
                });
            }
        }
    };
}
