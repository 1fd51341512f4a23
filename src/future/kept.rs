//! Executors kept from one `block_on` to the next: what a Tokio runtime built outside any
//! model runs on (`tokio::runtime`). Tokio keeps the tasks spawned on a runtime until the
//! runtime is dropped: a task spawned in one `block_on` (or on the runtime's handle outside
//! any) goes on in the next, and is dropped with the runtime.
//!
//! The executor is the one `block_on` uses (`local.rs`), kept by the OS thread that first
//! runs it: a [`KeptExecutor`] is only a key (a runtime is `Send` and `Sync`, an executor is
//! neither), and the executor lives in a thread-local of that OS thread. Outside a model
//! that OS thread is the only thread of its execution (the engine's ambient execution), so
//! all of the runtime's tasks are polled there; another OS thread that runs the runtime is refused
//! with a message (it would need a second thread in that execution).

use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::ThreadId;

use parking_lot::Mutex;

use super::JoinHandle;
use super::local::{self, Executor};
use crate::primitive::Loc;
use crate::{primitive, threads};

/// The executors kept on this OS thread, by key.
struct Shelf(Vec<(u64, Rc<Executor>)>);

impl Drop for Shelf {
    /// The OS thread ends with runtimes it ran still alive (a runtime kept in a `static`, or
    /// moved to another thread): their tasks are forgotten, not dropped. Dropping them now
    /// would run their destructors while the thread's other thread-locals (the crate's
    /// own among them) are being destroyed.
    fn drop(&mut self) {
        std::mem::forget(std::mem::take(&mut self.0));
    }
}

std::thread_local! {
    static SHELF: RefCell<Shelf> = const { RefCell::new(Shelf(Vec::new())) };
}

/// The next key.
static NEXT: AtomicU64 = AtomicU64::new(1);

/// An executor kept from one `block_on` to the next, for a runtime built outside any model
/// (a plain `#[test]`'s `Runtime::new()`): a task spawned in one `block_on`, or between
/// two, goes on in the next, and [`shut_down`](Self::shut_down) drops the tasks left, as a
/// runtime keeps its tasks until it is dropped. The executor is made on first use and kept
/// by the OS thread that first runs it (this is only a key to it, `Send` and `Sync` as a
/// runtime is); another OS thread that runs it is refused with a message.
#[derive(Debug)]
pub struct KeptExecutor {
    key: u64,
    /// The OS thread that ran it first, which keeps it.
    keeper: Mutex<Option<ThreadId>>,
}

impl Default for KeptExecutor {
    fn default() -> Self {
        KeptExecutor::new()
    }
}

impl KeptExecutor {
    /// A key to an executor not made yet.
    pub fn new() -> KeptExecutor {
        KeptExecutor {
            key: NEXT.fetch_add(1, Ordering::Relaxed),
            keeper: Mutex::new(None),
        }
    }

    /// The executor, made now on its first use at `loc`.
    ///
    /// # Panics
    /// On an OS thread other than the one that used it first.
    fn executor(&self, what: &str, loc: Loc) -> Rc<Executor> {
        let me = std::thread::current().id();
        let keeper = *self.keeper.lock().get_or_insert(me);
        if keeper != me {
            panic!(
                "{what}: this runtime was built outside a model and first run on another OS \
                 thread; outside a model a runtime's tasks all run on the OS thread that \
                 first ran it, as one thread of its own, and cannot move to a second one. \
                 {}",
                threads::GATE
            );
        }
        SHELF.with(|shelf| {
            let mut shelf = shelf.borrow_mut();
            if let Some((_, executor)) = shelf.0.iter().find(|(key, _)| *key == self.key) {
                return Rc::clone(executor);
            }
            let executor = Rc::new(Executor::new(loc));
            shelf.0.push((self.key, Rc::clone(&executor)));
            executor
        })
    }

    /// Runs `future` to completion on the calling thread, polling the kept tasks as well.
    pub fn block_on<F: Future>(&self, future: F, loc: Loc) -> F::Output {
        let executor = self.executor("Runtime::block_on", loc);
        threads::watched(|| local::block_on_kept(&executor, future, loc))
    }

    /// Spawns `future` (named `name`, at `loc`) as a task of the executor, polled by the
    /// `block_on` that runs now or by the next one.
    pub fn spawn<F>(&self, future: F, name: Option<String>, loc: Loc) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        primitive::switch_point(super::task::SPAWN, None, loc);
        self.executor("Handle::spawn", loc).spawn(future, name, loc)
    }

    /// Drops the tasks left, as a runtime's shutdown does (their handles then yield a
    /// cancelled `JoinError`); on an OS thread that does not keep them, they are left to
    /// that thread's end.
    pub fn shut_down(&self) {
        let taken = SHELF.try_with(|shelf| {
            let mut shelf = shelf.borrow_mut();
            let at = shelf.0.iter().position(|(key, _)| *key == self.key)?;
            Some(shelf.0.swap_remove(at).1)
        });
        // Dropped with the shelf released: a task's destructor may spawn or shut down.
        drop(taken);
    }
}
