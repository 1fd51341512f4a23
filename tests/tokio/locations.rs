//! Reports place each Tokio operation at the program's call (`lock().await`,
//! `send(v).await`, `notified().await`, a guard's or a sender's drop at its lock or its
//! creation), not inside this crate: every decision of a schedule names a line of this
//! file. Their last decisions name the primitive (`tokio mpsc channel`), not the model
//! lock that keeps its state.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use interleave_test::tokio::sync::{
    Barrier, Mutex, Notify, OnceCell, RwLock, Semaphore, broadcast, mpsc, oneshot, watch,
};
use interleave_test::tokio::{self, task::JoinSet};
use interleave_test::{Builder, StrategyKind};

use crate::common::SUBSTRATES;

/// The state the tasks share.
struct Shared {
    mutex: Mutex<u32>,
    rwlock: RwLock<u32>,
    semaphore: Semaphore,
    notify: Notify,
    barrier: Barrier,
    cell: OnceCell<u32>,
}

/// One task's turn at every primitive; `i` tells the tasks apart.
async fn touch_everything(
    s: Arc<Shared>,
    i: u32,
    tx: mpsc::Sender<u32>,
    bx: broadcast::Sender<u32>,
) {
    *s.mutex.lock().await += i;
    *s.rwlock.write().await += i;
    drop(s.rwlock.read().await);
    drop(s.semaphore.acquire().await.unwrap());
    s.notify.notify_one();
    s.cell.get_or_init(|| async { i }).await;
    tx.send(i).await.unwrap();
    let _ = bx.send(i);
    s.barrier.wait().await;
}

async fn model() {
    let shared = Arc::new(Shared {
        mutex: Mutex::new(0),
        rwlock: RwLock::new(0),
        semaphore: Semaphore::new(1),
        notify: Notify::new(),
        barrier: Barrier::new(3),
        cell: OnceCell::new(),
    });
    let (tx, mut rx) = mpsc::channel(1);
    let (bx, mut brx) = broadcast::channel(4);
    let (wtx, mut wrx) = watch::channel(0);
    let (otx, orx) = oneshot::channel();
    let mut set = JoinSet::new();
    for i in 1..=2 {
        set.spawn(touch_everything(
            Arc::clone(&shared),
            i,
            tx.clone(),
            bx.clone(),
        ));
    }
    set.spawn(async move {
        wtx.send(1).unwrap();
        otx.send(7).unwrap();
    });
    drop((tx, bx));
    shared.notify.notified().await;
    assert_eq!(orx.await, Ok(7));
    let _ = wrx.changed().await;
    let (a, b) = (rx.recv().await, rx.recv().await);
    assert_eq!(a.zip(b).map(|(a, b)| a + b), Some(3));
    let _ = brx.recv().await;
    shared.barrier.wait().await;
    tokio::time::sleep(Duration::from_millis(1)).await;
    while set.join_next().await.is_some() {}
    panic!("the end of the model");
}

#[test]
fn every_decision_of_a_tokio_model_is_placed_in_the_program() {
    for substrate in SUBSTRATES {
        let mut lines = BTreeSet::new();
        let mut tokio_ops = 0;
        for seed in 1..=5 {
            let failure = Builder::new()
                .substrate(substrate)
                .strategy(StrategyKind::Random)
                .seed(seed)
                .iterations(1)
                .check_async(model)
                .expect_err("the model panics at its end");
            assert_eq!(failure.message(), "the end of the model", "seed {seed}");
            // Reports name the primitive; the schedule keeps the kind replay compares.
            for step in failure.recent() {
                assert!(!step.op().starts_with("mutex"), "seed {seed}: {step:?}");
            }
            tokio_ops += failure
                .recent()
                .iter()
                .filter(|s| s.op().starts_with("tokio "))
                .count();
            assert!(
                failure
                    .schedule()
                    .decisions()
                    .iter()
                    .all(|d| !d.op().starts_with("tokio"))
            );
            for d in failure.schedule().decisions() {
                let (file, line) = d
                    .location()
                    .rsplit_once(':')
                    .unwrap()
                    .0
                    .rsplit_once(':')
                    .unwrap();
                assert_eq!(file, file!(), "seed {seed}, {substrate:?}: {d:?}");
                lines.insert(line.parse::<u32>().unwrap());
            }
        }
        // The decisions reach most of the model: its lines, not a few inside a helper.
        assert!(lines.len() >= 15, "{substrate:?}: only lines {lines:?}");
        assert!(
            tokio_ops >= 20,
            "{substrate:?}: {tokio_ops} steps named after a primitive"
        );
    }
}
