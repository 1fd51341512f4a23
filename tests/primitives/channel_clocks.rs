//! `sync::mpsc` and the program's happens-before: a receive knows the send of the value it
//! took and nothing its sender did after that send, on unbounded, bounded and rendezvous
//! channels and with two senders; a cell written after a send and read after receiving
//! that send's value is a data race. The orders a channel does give are checked too: the
//! receive that made room before the send that used it, a rendezvous receive before its
//! send returns, the senders' drops before a receive's `Err`, the receiver's drop before a
//! send's `Err`.
//!
//! Several race models open a gate only once the sender is past its *later* send (a
//! relaxed flag, which orders nothing): a channel whose receive took the clock of every
//! send so far hides the race exactly there, while without the gate another schedule, the
//! read before the write, would still show it.

use interleave_test::cell::UnsafeCell;
use interleave_test::current::{self, VectorClock};
use interleave_test::sync::Arc;
use interleave_test::sync::atomic::{AtomicU32, Ordering::Relaxed};
use interleave_test::sync::mpsc::{Receiver, RecvError, Sender, SyncSender, channel, sync_channel};
use interleave_test::thread::{self, ThreadId};
use interleave_test::{Failure, FailureKind, Reduction, Substrate};

use crate::common::dfs;

/// The channels checked.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Unbounded,
    Bounded(usize),
    Rendezvous,
}

use Kind::{Bounded, Rendezvous, Unbounded};

/// Both ends' sending halves, behind one interface.
trait Tx: Send + 'static {
    /// Sends `v`; false if the receiver is gone.
    fn put(&self, v: u32) -> bool;
    /// Another sender of the same channel.
    fn again(&self) -> Box<dyn Tx>;
}

impl Tx for Sender<u32> {
    fn put(&self, v: u32) -> bool {
        self.send(v).is_ok()
    }
    fn again(&self) -> Box<dyn Tx> {
        Box::new(self.clone())
    }
}

impl Tx for SyncSender<u32> {
    fn put(&self, v: u32) -> bool {
        self.send(v).is_ok()
    }
    fn again(&self) -> Box<dyn Tx> {
        Box::new(self.clone())
    }
}

/// A new channel of `kind`.
fn pair(kind: Kind) -> (Box<dyn Tx>, Receiver<u32>) {
    match kind {
        Unbounded => {
            let (tx, rx) = channel();
            (Box::new(tx), rx)
        }
        Bounded(n) => {
            let (tx, rx) = sync_channel(n);
            (Box::new(tx), rx)
        }
        Rendezvous => {
            let (tx, rx) = sync_channel(0);
            (Box::new(tx), rx)
        }
    }
}

/// Runs `model` to the end under exhaustive DFS with and without reduction; returns the
/// counts of executions (reduced, then not), or the first failure found with reduction.
fn explore(model: impl Fn() + Send + Sync + 'static) -> Result<[u64; 2], Failure> {
    let model = std::sync::Arc::new(model);
    let mut counts = [0; 2];
    for (i, reduction) in [Reduction::Dpor, Reduction::Off].into_iter().enumerate() {
        let m = std::sync::Arc::clone(&model);
        counts[i] = dfs(Substrate::Coroutines, reduction, None)
            .check(move || m())?
            .executions;
    }
    Ok(counts)
}

/// Asserts that `model` has a data race between a write by the thread named `writer` and a
/// read by `reader`, found at the read.
#[track_caller]
fn assert_race(model: impl Fn() + Send + Sync + 'static, writer: &str, reader: &str) {
    let failure = match explore(model) {
        Err(f) => f,
        Ok(counts) => panic!("no data race in {counts:?} executions"),
    };
    assert_eq!(failure.kind(), FailureKind::DataRace, "{failure}");
    let message = failure.message();
    assert!(message.starts_with("data race on UnsafeCell"), "{message}");
    assert!(
        message.contains(&format!("'{writer}'")) && message.contains("wrote it at"),
        "{message}"
    );
    assert!(
        message.contains("nothing orders the two accesses"),
        "{message}"
    );
    let found_by = failure.thread().and_then(|t| t.name());
    assert_eq!(found_by, Some(reader), "{failure}");
    let states: Vec<&str> = failure.threads().iter().map(|r| r.state()).collect();
    assert!(
        states.len() == 2
            && states[0].starts_with("wrote UnsafeCell")
            && states[1].starts_with("read UnsafeCell"),
        "{failure}"
    );
}

/// What a sender saw of its own clock: its id, and its clocks before its first send,
/// after it, and after its second.
struct Around {
    id: ThreadId,
    before: VectorClock,
    after: VectorClock,
    after_second: VectorClock,
}

/// One sender sends 1 and 2; main takes its clock before receiving (`waiting`) and after
/// receiving 1 (`got`). The receive knows the send of 1 but not the sender's next clock;
/// the sender learns of the receiver only where the channel waits for it: a rendezvous
/// returns after the receive, a full channel of capacity 1 lets the second send in after
/// the first receive.
fn one_sender_clocks(kind: Kind) {
    let (tx, rx) = pair(kind);
    let t = thread::spawn(move || {
        let before = current::clock();
        assert!(tx.put(1));
        let after = current::clock();
        assert!(tx.put(2));
        let after_second = current::clock();
        let id = current::id();
        Around {
            id,
            before,
            after,
            after_second,
        }
    });
    let waiting = current::clock();
    assert_eq!(rx.recv(), Ok(1));
    let got = current::clock();
    assert_eq!(rx.recv(), Ok(2));
    let s = t.join().unwrap();
    let (id, main) = (s.id, current::id());
    assert!(s.before.get(id) < got.get(id), "the receive knows the send");
    assert!(
        got.get(id) < s.after.get(id),
        "{kind:?}: the receive of 1 knows the sender after its send: {got:?} {:?}",
        s.after
    );
    let spawned = s.before.get(main);
    let (after, second) = (s.after.get(main), s.after_second.get(main));
    let (waiting, got) = (waiting.get(main), got.get(main));
    match kind {
        Unbounded | Bounded(2) => assert_eq!((after, second), (spawned, spawned)),
        Bounded(_) => {
            assert_eq!(after, spawned, "the first send needed no room");
            assert!(waiting < second && second < got, "room: {second}");
        }
        Rendezvous => {
            assert!(waiting < after && after < got, "hand-over: {after}");
            assert!(got < second, "the second hand-over");
        }
    }
}

#[test]
fn a_receive_knows_its_send_and_nothing_the_sender_did_after_it() {
    // The counts (reduced, then not) are pinned to notice a change in the search. They
    // are small because a receive that cannot take effect yet (and a send that finds no
    // room) is no choice: on a rendezvous every step waits for the other thread, so one
    // schedule remains.
    for (kind, counts) in [
        (Unbounded, [2, 5]),
        (Bounded(1), [1, 2]),
        (Bounded(2), [2, 5]),
        (Rendezvous, [1, 1]),
    ] {
        let found = explore(move || one_sender_clocks(kind));
        assert_eq!(found.map_err(|f| f.to_string()), Ok(counts), "{kind:?}");
    }
}

/// Two senders (a clone), each sending its id's value once; the first value received
/// knows its sender's send and nothing of the other sender, the second knows both sends,
/// neither knows what a sender did after its send.
fn two_sender_clocks(kind: Kind) {
    let (tx, rx) = pair(kind);
    let senders: Vec<_> = [tx.again(), tx]
        .into_iter()
        .enumerate()
        .map(|(i, tx)| {
            thread::spawn(move || {
                let before = current::clock();
                assert!(tx.put(i as u32 + 1));
                let after = current::clock();
                (before, after)
            })
        })
        .collect();
    let first = rx.recv().unwrap();
    let got_first = current::clock();
    let second = rx.recv().unwrap();
    let got_second = current::clock();
    assert_eq!(first + second, 3);
    let ids: Vec<ThreadId> = senders.iter().map(|h| h.thread().id()).collect();
    let clocks: Vec<_> = senders.into_iter().map(|h| h.join().unwrap()).collect();
    let (x, y) = (first as usize - 1, second as usize - 1);
    assert!(clocks[x].0.get(ids[x]) < got_first.get(ids[x]));
    assert!(got_first.get(ids[x]) < clocks[x].1.get(ids[x]));
    assert_eq!(
        got_first.get(ids[y]),
        0,
        "the first receive knows the other sender"
    );
    for s in [x, y] {
        assert!(clocks[s].0.get(ids[s]) < got_second.get(ids[s]));
        assert!(
            got_second.get(ids[s]) < clocks[s].1.get(ids[s]),
            "{kind:?}: a receive knows sender {s} after its send"
        );
    }
}

#[test]
fn two_senders_each_receive_knows_only_the_sends_it_follows() {
    for (kind, counts) in [
        (Unbounded, [6, 419]),
        (Bounded(1), [5, 214]),
        (Rendezvous, [19, 330]),
    ] {
        let found = explore(move || two_sender_clocks(kind));
        assert_eq!(found.map_err(|f| f.to_string()), Ok(counts), "{kind:?}");
    }
}

/// A shared cell and a relaxed flag (the gate).
type Shared = (Arc<UnsafeCell<u32>>, Arc<AtomicU32>);

/// A cell, a relaxed flag (the gate) and a channel of `kind`.
fn parts(kind: Kind) -> (Shared, Box<dyn Tx>, Receiver<u32>) {
    let (tx, rx) = pair(kind);
    let shared = (Arc::new(UnsafeCell::new(0)), Arc::new(AtomicU32::new(0)));
    (shared, tx, rx)
}

/// The sender writes the cell between sending 1 and 2, then opens the gate; the receiver,
/// once it sees the gate open, receives 1 and reads the cell. Only the write-then-`send(2)`
/// happens before the gate, and the receiver never takes 2 before its read: a race.
fn write_after_send_behind_a_gate(kind: Kind) {
    let ((cell, gate), tx, rx) = parts(kind);
    let (c2, g2) = (Arc::clone(&cell), Arc::clone(&gate));
    let t = thread::Builder::new()
        .name("sender".into())
        .spawn(move || {
            tx.put(1);
            c2.with_mut(|_| ());
            tx.put(2);
            g2.store(1, Relaxed);
        })
        .unwrap();
    if gate.load(Relaxed) == 1 {
        assert_eq!(rx.recv(), Ok(1));
        cell.with(|_| ());
    }
    drop(rx);
    t.join().unwrap();
}

#[test]
fn a_write_after_the_received_send_is_a_race_even_after_the_next_send() {
    for kind in [Unbounded, Bounded(2)] {
        assert_race(
            move || write_after_send_behind_a_gate(kind),
            "sender",
            "main",
        );
    }
}

/// Without the gate: send 1, write, send 2; receive 1, read. A race on every channel.
fn write_after_send(kind: Kind) {
    let ((cell, _), tx, rx) = parts(kind);
    let c2 = Arc::clone(&cell);
    let t = thread::Builder::new()
        .name("sender".into())
        .spawn(move || {
            tx.put(1);
            c2.with_mut(|_| ());
            tx.put(2);
        })
        .unwrap();
    assert_eq!(rx.recv(), Ok(1));
    cell.with(|_| ());
    assert_eq!(rx.recv(), Ok(2));
    t.join().unwrap();
}

#[test]
fn a_write_after_a_send_read_after_its_receive_is_a_race_on_every_channel() {
    for kind in [Unbounded, Bounded(1), Bounded(2), Rendezvous] {
        let failure = explore(move || write_after_send(kind)).expect_err("a race");
        assert_eq!(failure.kind(), FailureKind::DataRace, "{kind:?}: {failure}");
        assert!(failure.message().contains("'sender'"), "{failure}");
    }
}

/// Two senders: "b" writes the cell, sends 2, opens the gate; "a" sends 1. The receiver,
/// past the gate, reads the cell only if it received 1 ("a" sent first): it never took
/// "b"'s value, so nothing orders the write before the read.
fn other_senders_write_behind_a_gate(kind: Kind) {
    let ((cell, gate), tx, rx) = parts(kind);
    let (c2, g2, tx2) = (Arc::clone(&cell), Arc::clone(&gate), tx.again());
    let a = thread::Builder::new().name("a".into());
    let a = a
        .spawn(move || {
            tx.put(1);
        })
        .unwrap();
    let b = thread::Builder::new().name("b".into());
    let b = b
        .spawn(move || {
            c2.with_mut(|_| ());
            tx2.put(2);
            g2.store(1, Relaxed);
        })
        .unwrap();
    if gate.load(Relaxed) == 1 && rx.recv() == Ok(1) {
        cell.with(|_| ());
    }
    drop(rx);
    a.join().unwrap();
    b.join().unwrap();
}

#[test]
fn a_receive_does_not_order_another_senders_earlier_write() {
    for kind in [Unbounded, Bounded(2)] {
        assert_race(move || other_senders_write_behind_a_gate(kind), "b", "main");
    }
}

/// Sender "a" writes the cell, sends 1 and opens the gate; sender "b", past the gate,
/// sends 2 and reads the cell; main drains the channel. One send does not order another:
/// a race, unless "b"'s send had to wait for main to take 1 (room on a channel of
/// capacity 1, the hand-over on a rendezvous), which orders "a"'s send before it.
fn sender_after_another_sender(kind: Kind) {
    let ((cell, gate), tx, rx) = parts(kind);
    let (c2, g2, tx2) = (Arc::clone(&cell), Arc::clone(&gate), tx.again());
    let a = thread::Builder::new().name("a".into());
    let a = a
        .spawn(move || {
            c2.with_mut(|_| ());
            tx.put(1);
            g2.store(1, Relaxed);
        })
        .unwrap();
    let b = thread::Builder::new().name("b".into());
    let b = b
        .spawn(move || {
            if gate.load(Relaxed) == 1 {
                tx2.put(2);
                cell.with(|_| ());
            }
        })
        .unwrap();
    for _ in rx.iter() {}
    a.join().unwrap();
    b.join().unwrap();
}

#[test]
fn one_sender_learns_nothing_of_anothers_send() {
    for kind in [Unbounded, Bounded(2)] {
        assert_race(move || sender_after_another_sender(kind), "a", "b");
    }
    for (kind, counts) in [(Bounded(1), [16, 801]), (Rendezvous, [14, 268])] {
        let found = explore(move || sender_after_another_sender(kind));
        assert_eq!(found.map_err(|f| f.to_string()), Ok(counts), "{kind:?}");
    }
}

/// Rendezvous: the receiver writes the cell after its receive and opens the gate; the
/// sender, back from its send, reads the cell if the gate is open: a race, since the
/// hand-over orders the receive before the send's return, not what the receiver does next.
fn rendezvous_write_after_receive() {
    let ((cell, gate), tx, rx) = parts(Rendezvous);
    let (c2, g2) = (Arc::clone(&cell), Arc::clone(&gate));
    let t = thread::Builder::new()
        .name("receiver".into())
        .spawn(move || {
            assert_eq!(rx.recv(), Ok(1));
            c2.with_mut(|_| ());
            g2.store(1, Relaxed);
        })
        .unwrap();
    assert!(tx.put(1));
    if gate.load(Relaxed) == 1 {
        cell.with(|_| ());
    }
    t.join().unwrap();
}

#[test]
fn a_rendezvous_orders_the_receive_before_the_send_returns_and_nothing_after() {
    assert_race(rendezvous_write_after_receive, "receiver", "main");
}

/// The orders a channel gives, each a write in one thread and a read in another that the
/// channel must order (no race anywhere):
/// - `Before`: a write before a send, read after receiving it;
/// - `Room`: on a channel of capacity 1, the receiver writes before its first receive, and
///   the sender reads after its second send, which needed the room that receive made;
/// - `Handover`: on a rendezvous, the receiver writes before receiving, the sender reads
///   after its send returned;
/// - `Disconnect`: two senders write and drop their ends; the receive that fails reads;
/// - `Gone`: the receiver writes and drops its end; the send that fails reads.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Given {
    Before,
    Room,
    Handover,
    Disconnect,
    Gone,
}

fn given(order: Given, kind: Kind) {
    let ((cell, _), tx, rx) = parts(kind);
    let c2 = Arc::clone(&cell);
    let (write, read) = (
        |c: &UnsafeCell<u32>| c.with_mut(|_| ()),
        |c: &UnsafeCell<u32>| c.with(|_| ()),
    );
    match order {
        Given::Before => {
            let t = thread::spawn(move || {
                write(&c2);
                tx.put(1);
            });
            assert_eq!(rx.recv(), Ok(1));
            read(&cell);
            t.join().unwrap();
        }
        Given::Room | Given::Handover => {
            let t = thread::spawn(move || {
                write(&c2);
                let _ = rx.recv();
                let _ = rx.recv();
            });
            assert!(tx.put(1));
            if order == Given::Room {
                assert!(tx.put(2));
            }
            read(&cell);
            drop(tx);
            t.join().unwrap();
        }
        Given::Disconnect => {
            let other = Arc::new(UnsafeCell::new(0));
            let (c3, tx2) = (Arc::clone(&other), tx.again());
            let ts = [(c2, tx), (c3, tx2)].map(|(c, tx)| {
                thread::spawn(move || {
                    write(&c);
                    drop(tx);
                })
            });
            // Each drop is acquired by the failing receive, not only the last one.
            assert_eq!(rx.recv(), Err(RecvError));
            read(&cell);
            read(&other);
            for t in ts {
                t.join().unwrap();
            }
        }
        Given::Gone => {
            let t = thread::spawn(move || {
                write(&c2);
                drop(rx);
            });
            if !tx.put(1) {
                read(&cell);
            }
            t.join().unwrap();
        }
    }
}

#[test]
fn sends_drops_room_and_hand_overs_order_what_they_must() {
    for (order, kind, counts) in [
        (Given::Before, Unbounded, [1, 2]),
        (Given::Before, Bounded(1), [1, 2]),
        (Given::Before, Rendezvous, [1, 1]),
        (Given::Room, Bounded(1), [2, 6]),
        (Given::Handover, Rendezvous, [2, 2]),
        (Given::Disconnect, Unbounded, [2, 10]),
        (Given::Disconnect, Rendezvous, [2, 10]),
        (Given::Gone, Unbounded, [2, 3]),
        (Given::Gone, Bounded(1), [2, 3]),
        (Given::Gone, Rendezvous, [2, 3]),
    ] {
        let found = explore(move || given(order, kind));
        assert_eq!(
            found.map_err(|f| f.to_string()),
            Ok(counts),
            "{order:?}, {kind:?}"
        );
    }
}
