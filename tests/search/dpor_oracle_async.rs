//! The reduction on async models: futures as tasks, wakes, joins and aborts. As for the
//! thread models (`dpor_oracle.rs`), reduced DFS must run one execution per trace of the
//! plain search, counted by the trace oracle (`common/oracle.rs`) from the declared
//! accesses; since a missing declaration would fool the oracle and the reduction alike,
//! each model also records what it observed, and the reduced search must see exactly the
//! outcomes the plain one sees.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc as StdArc;
use std::task::{Context, Poll};

use interleave_test::future::{self, AtomicWaker};
use interleave_test::sync::Mutex;
use interleave_test::sync::atomic::{AtomicUsize, Ordering::SeqCst};

use crate::common::oracle::check_async;

#[test]
fn independent_tasks_that_never_wait_are_one_trace() {
    // Plain DFS runs every interleaving of the tasks' events: three tasks already make
    // hundreds of schedules, one trace.
    for n in [1, 2, 3] {
        check_async(
            &format!("{n} independent tasks"),
            move || {
                for _ in 0..n {
                    let own = StdArc::new(AtomicUsize::new(0));
                    // Used here first, so that its object id does not depend on which task
                    // runs first (the oracle names objects by id).
                    own.load(SeqCst);
                    drop(future::spawn(async move { own.fetch_add(1, SeqCst) }));
                }
            },
            0,
        );
    }
}

/// A one-slot-per-value async channel: a queue and the receiver's waker.
#[derive(Default)]
struct Channel {
    queue: Mutex<VecDeque<u32>>,
    waker: AtomicWaker,
}

impl Channel {
    fn send(&self, value: u32) {
        self.queue.lock().unwrap().push_back(value);
        self.waker.wake();
    }

    fn recv(&self) -> Recv<'_> {
        Recv { channel: self }
    }
}

struct Recv<'a> {
    channel: &'a Channel,
}

impl Future for Recv<'_> {
    type Output = u32;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u32> {
        self.channel.waker.register(cx.waker());
        match self.channel.queue.lock().unwrap().pop_front() {
            Some(value) => Poll::Ready(value),
            None => Poll::Pending,
        }
    }
}

#[test]
fn a_task_and_block_on_on_one_async_channel() {
    // The main thread is the receiver (a second task would make the plain search too long
    // for a test: it runs every interleaving of the channel's and the waker's locks).
    check_async(
        "channel",
        || {
            let channel = StdArc::new(Channel::default());
            // Both locks used here first: the oracle names objects by id, given at first use.
            drop(channel.queue.lock().unwrap());
            drop(channel.waker.take());
            let tx = StdArc::clone(&channel);
            let producer = future::spawn(async move { tx.send(1) });
            let value = future::block_on(channel.recv());
            drop(producer);
            value
        },
        0,
    );
}

#[test]
fn a_join_chain() {
    check_async(
        "join chain",
        || {
            let x = StdArc::new(AtomicUsize::new(0));
            let inner = StdArc::clone(&x);
            let outer = future::spawn(async move {
                let leaf = future::spawn(async move { inner.fetch_add(1, SeqCst) });
                leaf.await.unwrap() + 10
            });
            let seen = x.load(SeqCst);
            (future::block_on(outer).unwrap(), seen)
        },
        0,
    );
}

#[test]
fn an_abort_racing_completion() {
    check_async(
        "abort",
        || {
            let task = future::spawn(async { 5 });
            task.abort();
            future::block_on(task).map_err(|e| e.is_cancelled())
        },
        0,
    );
}

#[test]
fn local_tasks_polled_in_either_order() {
    check_async(
        "local tasks",
        || {
            let x = StdArc::new(AtomicUsize::new(0));
            future::block_on(async {
                let (a, b) = (StdArc::clone(&x), StdArc::clone(&x));
                let first = future::spawn_local(async move { a.fetch_add(1, SeqCst) });
                let second = future::spawn_local(async move { b.fetch_add(2, SeqCst) });
                (first.await.unwrap(), second.await.unwrap())
            })
        },
        0,
    );
}
