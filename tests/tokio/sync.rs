//! `tokio::sync`'s documented behaviour, on both substrates under DFS: `Notify`'s stored
//! permit, bounded `mpsc` capacity and closing, `oneshot`, `Semaphore` fairness and
//! closing, `Mutex` fairness.

use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;

use interleave_test::Builder;
use interleave_test::sync::Arc;
use interleave_test_tokio as tokio;
use interleave_test_tokio::sync::{self, Mutex, Notify, RwLock, Semaphore, mpsc, oneshot};

use crate::support::{every_execution, poll_once};

#[test]
fn notify_one_before_notified_stores_one_permit_and_only_one() {
    every_execution(|| async {
        let notify = Notify::new();
        notify.notify_one();
        notify.notify_one();
        notify.notified().await;
        let mut second = std::pin::pin!(notify.notified());
        assert!(!second.as_mut().enable(), "a second permit was stored");
    });
}

#[test]
fn notify_waiters_stores_no_permit_but_wakes_futures_made_before_it() {
    every_execution(|| async {
        let notify = Notify::new();
        let early = notify.notified();
        notify.notify_waiters();
        early.await; // made before the call: woken although never polled
        let mut late = std::pin::pin!(notify.notified());
        assert!(!late.as_mut().enable(), "notify_waiters stored a permit");
    });
}

#[test]
fn notify_one_wakes_the_longest_waiting_task() {
    every_execution(|| async {
        let notify = Notify::new();
        let mut first = std::pin::pin!(notify.notified());
        let mut second = std::pin::pin!(notify.notified());
        assert!(!first.as_mut().enable());
        assert!(!second.as_mut().enable());
        notify.notify_one();
        assert!(first.as_mut().enable());
        assert!(!second.as_mut().enable());
    });
}

#[test]
fn a_bounded_send_waits_for_capacity_and_fails_after_the_receiver_is_dropped() {
    every_execution(|| async {
        let (tx, mut rx) = mpsc::channel::<u32>(1);
        tx.send(1).await.unwrap();
        assert!(matches!(
            tx.try_send(2),
            Err(mpsc::error::TrySendError::Full(2))
        ));
        let sender = tokio::spawn({
            let tx = tx.clone();
            async move { tx.send(2).await }
        });
        assert_eq!(rx.recv().await, Some(1));
        assert_eq!(rx.recv().await, Some(2));
        sender.await.unwrap().unwrap();
        drop(rx);
        assert_eq!(tx.send(3).await, Err(mpsc::error::SendError(3)));
        assert!(tx.is_closed());
    });
}

#[test]
fn recv_returns_what_was_sent_before_close_then_none() {
    every_execution(|| async {
        let (tx, mut rx) = mpsc::channel::<u32>(4);
        tx.send(1).await.unwrap();
        let permit = tx.reserve().await.unwrap();
        rx.close();
        assert!(tx.try_send(9).is_err());
        permit.send(2); // reserved before the close: still delivered
        assert_eq!(rx.recv().await, Some(1));
        assert_eq!(rx.recv().await, Some(2));
        assert_eq!(rx.recv().await, None);
        assert_eq!(rx.try_recv(), Err(mpsc::error::TryRecvError::Disconnected));
    });
}

#[test]
fn an_unbounded_receiver_sees_none_after_every_sender_is_dropped() {
    every_execution(|| async {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let other = tx.clone();
        let _sender = tokio::spawn(async move { other.send(1).unwrap() });
        tx.send(0).unwrap();
        drop(tx);
        let mut got = Vec::new();
        while let Some(v) = rx.recv().await {
            got.push(v);
        }
        got.sort();
        assert_eq!(got, [0, 1]);
    });
}

#[test]
fn oneshot_delivers_once_and_reports_a_dropped_sender() {
    every_execution(|| async {
        let (tx, rx) = oneshot::channel();
        let _sender = tokio::spawn(async move { tx.send(5).unwrap() });
        assert_eq!(rx.await, Ok(5));
        let (tx, mut rx) = oneshot::channel::<u8>();
        assert_eq!(rx.try_recv(), Err(oneshot::error::TryRecvError::Empty));
        drop(tx);
        assert!(rx.await.is_err());
    });
}

#[test]
fn semaphore_close_wakes_waiters_with_an_error() {
    every_execution(|| async {
        let sem = Arc::new(Semaphore::new(0));
        let waiter = tokio::spawn({
            let sem = Arc::clone(&sem);
            async move { sem.acquire().await.map(|p| p.forget()) }
        });
        sem.close();
        assert!(waiter.await.unwrap().is_err());
        assert_eq!(sem.try_acquire().err(), Some(sync::TryAcquireError::Closed));
    });
}

#[test]
fn a_semaphore_serves_a_large_request_before_later_small_ones() {
    every_execution(|| async {
        let sem = Semaphore::new(1);
        let held = sem.try_acquire().unwrap();
        let mut big = std::pin::pin!(sem.acquire_many(2));
        assert!(!poll_once(big.as_mut()).await, "no permit is free");
        sem.add_permits(1);
        // The free permit went to the queued request: a later small one cannot take it.
        assert_eq!(
            sem.try_acquire().err(),
            Some(sync::TryAcquireError::NoPermits)
        );
        assert_eq!(sem.available_permits(), 0);
        drop(held);
        assert!(
            poll_once(big.as_mut()).await,
            "both permits were handed over"
        );
    });
}

#[test]
fn mutex_lock_futures_are_served_in_the_order_they_queued() {
    every_execution(|| async {
        let lock = Mutex::new(0);
        let guard = lock.lock().await;
        let mut late = std::pin::pin!(lock.lock());
        let mut early = std::pin::pin!(lock.lock());
        assert!(!poll_once(early.as_mut()).await);
        assert!(!poll_once(late.as_mut()).await);
        drop(guard);
        assert!(
            !poll_once(late.as_mut()).await,
            "a later request overtook an earlier one"
        );
        assert!(poll_once(early.as_mut()).await);
        assert!(lock.try_lock().is_err());
    });
}

#[test]
fn the_mutex_is_granted_in_request_order() {
    let orders = StdMutex::new(BTreeSet::new());
    Builder::new()
        .strategy(interleave_test::StrategyKind::Dfs {
            max_preemptions: None,
        })
        .check_async(|| async {
            let lock = Arc::new(Mutex::new(Vec::new()));
            let guard = lock.lock().await;
            let mut tasks = Vec::new();
            for n in 0..2 {
                let lock = Arc::clone(&lock);
                tasks.push(tokio::spawn(async move {
                    let mut order = lock.lock().await;
                    order.push(n);
                }));
            }
            drop(guard);
            for t in tasks {
                t.await.unwrap();
            }
            let order = lock.lock().await.clone();
            orders.lock().unwrap().insert(order);
        })
        .unwrap();
    // Both orders happen (which task asks first is up to the schedule), and the lock
    // follows the asking order (checked by the semaphore's queue, not asserted here).
    assert_eq!(
        orders.into_inner().unwrap(),
        BTreeSet::from([vec![0, 1], vec![1, 0]])
    );
}

#[test]
fn a_reader_that_comes_after_a_waiting_writer_waits_behind_it() {
    every_execution(|| async {
        let lock = RwLock::new(0);
        let first = lock.read().await;
        let mut writer = std::pin::pin!(lock.write());
        assert!(!poll_once(writer.as_mut()).await, "a reader holds the lock");
        assert!(
            lock.try_read().is_err(),
            "a reader overtook the waiting writer"
        );
        let mut reader = std::pin::pin!(lock.read());
        assert!(!poll_once(reader.as_mut()).await);
        drop(first);
        assert!(poll_once(writer.as_mut()).await);
    });
}

#[test]
fn a_downgraded_write_guard_admits_readers_but_no_writer() {
    every_execution(|| async {
        let lock = RwLock::new(1);
        let mut write = lock.write().await;
        *write = 2;
        let read = write.downgrade();
        assert_eq!(*lock.try_read().unwrap(), 2);
        assert!(lock.try_write().is_err());
        drop(read);
        assert!(lock.try_write().is_ok());
    });
}

#[test]
fn lock_guards_are_send_so_a_spawned_task_holds_one_across_an_await() {
    fn send<T: Send>(_: &T) {}
    every_execution(|| async {
        // std's `Arc`, as Tokio's `lock_owned` takes.
        let lock = std::sync::Arc::new(Mutex::new(0));
        let rw = std::sync::Arc::new(RwLock::new(0));
        let task = tokio::spawn({
            let (lock, rw) = (lock.clone(), rw.clone());
            async move {
                let mut guard = lock.lock().await;
                let mut write = rw.write().await;
                tokio::task::yield_now().await;
                *guard += 1;
                *write += 1;
                drop((guard, write));
                let owned = lock.clone().lock_owned().await;
                let read = rw.clone().read_owned().await;
                tokio::task::yield_now().await;
                *owned + *read
            }
        });
        send(&task);
        let _ = *lock.lock().await;
        assert_eq!(task.await.unwrap(), 2);
    });
}

#[test]
fn a_oneshot_receiver_is_empty_until_a_send_and_terminated_once_it_gave_its_outcome() {
    every_execution(|| async {
        let (tx, mut rx) = oneshot::channel::<u32>();
        assert!(rx.is_empty() && !rx.is_terminated());
        assert_eq!(rx.try_recv(), Err(oneshot::error::TryRecvError::Empty));
        assert!(
            !rx.is_terminated(),
            "an empty try_recv terminated the receiver"
        );
        tx.send(4).unwrap();
        assert!(!rx.is_empty(), "a sent value is not seen");
        assert_eq!(rx.try_recv(), Ok(4));
        assert!(rx.is_empty() && rx.is_terminated());

        let (tx, rx) = oneshot::channel::<u32>();
        let mut rx = std::pin::pin!(rx);
        let waiter = tokio::spawn(async move { tx.send(5).unwrap() });
        assert_eq!(rx.as_mut().await, Ok(5));
        assert!(rx.is_terminated());
        waiter.await.unwrap();

        let (tx, mut rx) = oneshot::channel::<u32>();
        drop(tx);
        assert!(rx.is_empty() && !rx.is_terminated());
        assert_eq!(rx.try_recv(), Err(oneshot::error::TryRecvError::Closed));
        assert!(
            rx.is_terminated(),
            "a closed try_recv did not terminate the receiver"
        );
    });
}

#[test]
fn semaphore_permits_split_and_merge_without_touching_the_semaphore() {
    every_execution(|| async {
        let sem = std::sync::Arc::new(Semaphore::new(4));
        let mut three = sem.acquire_many(3).await.unwrap();
        assert!(three.split(4).is_none());
        let one = three.split(1).unwrap();
        assert_eq!((three.num_permits(), one.num_permits()), (2, 1));
        assert_eq!(sem.available_permits(), 1);
        drop(one);
        assert_eq!(sem.available_permits(), 2);
        let other = sem.acquire().await.unwrap();
        three.merge(other);
        assert_eq!(three.num_permits(), 3);
        drop(three);
        assert_eq!(sem.available_permits(), 4);

        let mut owned = std::sync::Arc::clone(&sem)
            .acquire_many_owned(2)
            .await
            .unwrap();
        let half = owned.split(1).unwrap();
        assert_eq!(sem.available_permits(), 2);
        owned.merge(half);
        assert_eq!(owned.num_permits(), 2);
        drop(owned);
        assert_eq!(sem.available_permits(), 4);
    });
}

#[test]
fn merging_permits_of_two_semaphores_panics_with_tokios_message() {
    let failure = Builder::new()
        .iterations(1)
        .check_async(|| async {
            let (a, b) = (Semaphore::new(1), Semaphore::new(1));
            let mut pa = a.acquire().await.unwrap();
            pa.merge(b.acquire().await.unwrap());
        })
        .expect_err("merging permits of two semaphores panics");
    assert_eq!(
        failure.message(),
        "merging permits from different semaphore instances"
    );
}

/// A mapped guard holds the lock until it is dropped (a task waiting for it runs only
/// then) and gives access to the part it maps; `try_map` gives the guard back when there
/// is no such part.
#[test]
fn a_mapped_mutex_guard_holds_the_lock_until_dropped() {
    every_execution(|| async {
        let lock = std::sync::Arc::new(Mutex::new((1u32, vec![2u32])));
        let mut part = sync::MutexGuard::map(lock.lock().await, |(_, v)| v);
        let waiter = tokio::spawn({
            let lock = lock.clone();
            async move { lock.lock().await.1.clone() }
        });
        tokio::task::yield_now().await;
        assert!(lock.try_lock().is_err(), "a mapped guard released the lock");
        part.push(3);
        let guard = match sync::MappedMutexGuard::try_map(part, |v| v.get_mut(5)) {
            Ok(_) => panic!("mapped a part that is not there"),
            Err(part) => part,
        };
        let mut first = sync::MappedMutexGuard::map(guard, |v| &mut v[0]);
        *first = 20;
        drop(first);
        assert_eq!(waiter.await.unwrap(), [20, 3]);
        let whole = sync::MutexGuard::into_mapped(lock.lock().await);
        assert_eq!(whole.0, 1);
        drop(whole);
        let Err(back) = sync::MutexGuard::try_map(lock.lock().await, |_| None::<&mut u32>) else {
            panic!("mapped a part that is not there");
        };
        assert!(
            lock.try_lock().is_err(),
            "a guard given back by try_map was released"
        );
        drop(back);
        assert!(lock.try_lock().is_ok());
    });
}

/// Mapped `RwLock` guards hold their lock until dropped: a mapped read guard admits
/// readers but no writer, a mapped write guard neither; `downgrade_map` turns the write
/// lock into a read lock of a part; `try_map` gives the guard back when there is no part.
#[test]
fn mapped_rwlock_guards_hold_their_lock_until_dropped() {
    every_execution(|| async {
        let lock = RwLock::new((1u32, vec![2u32]));
        let first = sync::RwLockReadGuard::map(lock.read().await, |(a, _)| a);
        assert!(lock.try_read().is_ok() && lock.try_write().is_err());
        assert_eq!(*first, 1);
        drop(first);

        let mut list = sync::RwLockWriteGuard::map(lock.write().await, |(_, v)| v);
        assert!(
            lock.try_read().is_err(),
            "a mapped write guard admitted a reader"
        );
        list.push(3);
        let Err(list) = sync::RwLockMappedWriteGuard::try_map(list, |v| v.get_mut(9)) else {
            panic!("mapped a part that is not there");
        };
        assert!(lock.try_read().is_err());
        drop(list);

        let read = sync::RwLockWriteGuard::downgrade_map(lock.write().await, |(_, v)| v);
        assert_eq!(*read, [2, 3]);
        assert!(lock.try_read().is_ok() && lock.try_write().is_err());
        drop(read);
        let Err(back) = sync::RwLockReadGuard::try_map(lock.read().await, |_| None::<&u32>) else {
            panic!("mapped a part that is not there");
        };
        assert!(
            lock.try_write().is_err(),
            "a guard given back by try_map was released"
        );
        drop(back);
        let whole = sync::RwLockWriteGuard::into_mapped(lock.write().await);
        assert_eq!(whole.0, 1);
        drop(whole);
        assert!(lock.try_write().is_ok());
    });
}
