//! The Tokio channels (`mpsc`, `broadcast`, `watch`, `oneshot`) and the program's
//! happens-before, with the reproducer of `channel_clocks.rs`: the sender writes a cell
//! after sending 1, then acts on the channel again and opens a relaxed gate; the receiver,
//! past the gate, receives 1 and reads the cell. Tokio documents only that a value's send
//! happens before its receive, so each is a data race.
//!
//! These tests pin what the model does today. Each Tokio channel keeps its state in a
//! modelled `Mutex` taken by a lock section, so a receive acquires everything the sender
//! did before its last section on the channel: the race is hidden where the sender's later
//! operation is a section (`mpsc` and `broadcast` sends, `watch::Sender::receiver_count`
//! before a `changed`), and found where the sender has no later section (`oneshot`, whose
//! `send` consumes its sender). Giving them per-value clocks, as `sync::mpsc` has, needs
//! lock sections that order nothing for the memory model, and is left for later.

use interleave_test::cell::UnsafeCell;
use interleave_test::current;
use interleave_test::sync::Arc;
use interleave_test::sync::atomic::{AtomicU32, Ordering::Relaxed};
use interleave_test::{Failure, FailureKind, Reduction, Substrate};
use interleave_test_tokio::sync::{broadcast, mpsc, oneshot, watch};
use interleave_test_tokio::task;

use crate::common::dfs;

/// The Tokio channels checked.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Unbounded,
    Bounded,
    Broadcast,
    Watch,
    Oneshot,
}

/// A shared cell and a relaxed flag (the gate).
#[derive(Clone)]
struct Shared {
    cell: Arc<UnsafeCell<u32>>,
    gate: Arc<AtomicU32>,
}

impl Shared {
    fn new() -> Self {
        Shared {
            cell: Arc::new(UnsafeCell::new(0)),
            gate: Arc::new(AtomicU32::new(0)),
        }
    }

    /// The sender's side once it sent 1: writes the cell, runs `again` (its next operation
    /// on the channel), opens the gate.
    fn after_send(&self, again: impl FnOnce()) {
        self.cell.with_mut(|_| ());
        again();
        self.gate.store(1, Relaxed);
    }

    fn open(&self) -> bool {
        self.gate.load(Relaxed) == 1
    }

    fn read(&self) {
        self.cell.with(|_| ());
    }
}

/// Spawns `body` as the task named "sender" and returns its handle.
fn sender<F>(body: F) -> task::JoinHandle<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    task::Builder::new().name("sender").spawn(body).unwrap()
}

/// The reproducer on a channel of `kind`: see the module.
async fn write_after_send(kind: Kind) {
    let s = Shared::new();
    let s2 = s.clone();
    match kind {
        Kind::Unbounded => {
            let (tx, mut rx) = mpsc::unbounded_channel();
            let t = sender(async move {
                tx.send(1).unwrap();
                s2.after_send(|| tx.send(2).unwrap());
            });
            if s.open() {
                assert_eq!(rx.recv().await, Some(1));
                s.read();
            }
            t.await.unwrap();
        }
        Kind::Bounded => {
            let (tx, mut rx) = mpsc::channel(2);
            let t = sender(async move {
                tx.send(1).await.unwrap();
                s2.after_send(|| tx.try_send(2).unwrap());
            });
            if s.open() {
                assert_eq!(rx.recv().await, Some(1));
                s.read();
            }
            t.await.unwrap();
        }
        Kind::Broadcast => {
            let (tx, mut rx) = broadcast::channel(4);
            let t = sender(async move {
                tx.send(1).unwrap();
                s2.after_send(|| assert_eq!(tx.send(2), Ok(1)));
            });
            if s.open() {
                assert_eq!(rx.recv().await, Ok(1));
                s.read();
            }
            t.await.unwrap();
        }
        Kind::Watch => {
            let (tx, mut rx) = watch::channel(0);
            let t = sender(async move {
                tx.send(1).unwrap();
                s2.after_send(|| assert_eq!(tx.receiver_count(), 1));
            });
            if s.open() {
                rx.changed().await.unwrap();
                assert_eq!(*rx.borrow_and_update(), 1);
                s.read();
            }
            t.await.unwrap();
        }
        Kind::Oneshot => {
            let (tx, rx) = oneshot::channel();
            let t = sender(async move {
                tx.send(1).unwrap();
                s2.after_send(|| ());
            });
            if s.open() {
                assert_eq!(rx.await, Ok(1));
                s.read();
            }
            t.await.unwrap();
        }
    }
}

/// Exhaustive DFS with reduction, on coroutines: the count of executions, or the failure.
fn explore(kind: Kind) -> Result<u64, Failure> {
    dfs(Substrate::Coroutines, Reduction::Dpor, None)
        .check_async(move || write_after_send(kind))
        .map(|report| report.executions)
}

#[test]
fn a_tokio_receive_acquires_every_section_of_the_sender_before_it_for_now() {
    for (kind, executions) in [
        (Kind::Unbounded, 8),
        (Kind::Bounded, 8),
        (Kind::Broadcast, 8),
        (Kind::Watch, 10),
    ] {
        let found = explore(kind).map_err(|f| f.to_string());
        assert_eq!(found, Ok(executions), "{kind:?}: the race is hidden");
    }
}

#[test]
fn a_oneshot_receive_does_not_order_the_senders_write_after_its_send() {
    let failure = explore(Kind::Oneshot).expect_err("a race");
    assert_eq!(failure.kind(), FailureKind::DataRace, "{failure}");
    let message = failure.message();
    assert!(
        message.starts_with("data race on UnsafeCell") && message.contains("'sender'"),
        "{message}"
    );
    assert_eq!(failure.thread().and_then(|t| t.name()), Some("main"));
}

/// The clock side on Tokio's unbounded `mpsc`: after receiving 1, the receiver knows the
/// sender's clock after its send of 1 in 12 of the 18 executions: those where a later
/// section of the sender (its send of 2, or its drop) came before the receive's.
#[test]
fn a_tokio_mpsc_receive_knows_the_sender_after_its_send_in_some_execution_for_now() {
    let knew = std::sync::atomic::AtomicU32::new(0);
    let report = dfs(Substrate::Coroutines, Reduction::Dpor, None)
        .check_async(|| async {
            let (tx, mut rx) = mpsc::unbounded_channel();
            let t = sender(async move {
                tx.send(1).unwrap();
                let after = current::clock();
                tx.send(2).unwrap();
                (current::id(), after)
            });
            assert_eq!(rx.recv().await, Some(1));
            let got = current::clock();
            let (id, after) = t.await.unwrap();
            if got.get(id) >= after.get(id) {
                knew.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        })
        .unwrap();
    assert_eq!((knew.into_inner(), report.executions), (12, 18));
}
