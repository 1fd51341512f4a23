//! A `select!` loop that loses half a frame when its heartbeat wins, found, explained and
//! replayed: the classic cancel-safety bug of Tokio code.
//!
//! Run with `cargo run --example select_lost_frame`.
//!
//! A connection task reads two-byte frames from a channel and, in the same `select!` loop,
//! sends a heartbeat on every tick of an interval. `read_frame` receives the first byte,
//! then awaits the second: the first byte lives only in that future. When the tick wins the
//! `select!` between the two receives, the losing branch's future is dropped, and the byte
//! with it; the next frame starts with what was meant to be a second byte. The fix keeps
//! the partial frame in a buffer outside the `select!` (the reader's state survives the
//! cancellation).
//!
//! Here `select!`'s start branch is a decision of the search, and the interval's ticks are
//! timers on the virtual clock that may fire while the reader could still go on, so the
//! order that loses the byte is one of the schedules explored, and its schedule replays.

use std::time::Duration;

use interleave_test_tokio::runtime::Builder as Runtime;
use interleave_test_tokio::sync::mpsc;
use interleave_test_tokio::time::interval;
use interleave_test_tokio::{self as tokio, select};

#[path = "support/mod.rs"]
mod support;

/// What the peer sends: two frames of two bytes.
const BYTES: [u8; 4] = [1, 2, 3, 4];

/// Cancel-unsafe: a byte received before the second `recv` is lost if this future is
/// dropped there.
async fn read_frame(rx: &mut mpsc::Receiver<u8>) -> Option<[u8; 2]> {
    let first = rx.recv().await?;
    let second = rx.recv().await?;
    Some([first, second])
}

/// Cancel-safe: the partial frame is kept in `partial`, outside the future.
async fn read_frame_buffered(
    rx: &mut mpsc::Receiver<u8>,
    partial: &mut Option<u8>,
) -> Option<[u8; 2]> {
    loop {
        let byte = rx.recv().await?;
        match partial.take() {
            None => *partial = Some(byte),
            Some(first) => return Some([first, byte]),
        }
    }
}

/// The connection: frames and heartbeats until the peer hangs up. Returns the frames.
async fn connection(mut rx: mpsc::Receiver<u8>, buffered: bool) -> Vec<[u8; 2]> {
    let mut heartbeat = interval(Duration::from_millis(1));
    let (mut frames, mut partial) = (Vec::new(), None);
    loop {
        select! {
            frame = async {
                match buffered {
                    true => read_frame_buffered(&mut rx, &mut partial).await,
                    false => read_frame(&mut rx).await,
                }
            } => match frame {
                Some(frame) => frames.push(frame),
                None => return frames,
            },
            _ = heartbeat.tick() => {} // a heartbeat goes out here
        }
    }
}

/// The model: a peer task sends the bytes while the connection reads them, on a
/// multi-thread runtime (the peer stands for the network: its bytes arrive whenever they
/// do, while the heartbeat's timer runs).
fn model(buffered: bool) {
    let runtime = Runtime::new_multi_thread().build().unwrap();
    runtime.block_on(async {
        let (tx, rx) = mpsc::channel(4);
        let peer = tokio::spawn(async move {
            for byte in BYTES {
                tx.send(byte).await.unwrap();
            }
        });
        let frames = connection(rx, buffered).await;
        peer.await.unwrap();
        assert_eq!(frames, [[1, 2], [3, 4]], "a frame was lost or torn");
    });
}

/// The buggy connection.
pub(crate) fn unbuffered() {
    model(false);
}

/// The fixed connection.
pub(crate) fn buffered() {
    model(true);
}

fn main() {
    support::find_replay_and_check_fix("select_lost_frame", unbuffered, buffered, "buffered");
}
