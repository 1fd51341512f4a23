//! [`LocalSet`], as `tokio::task::LocalSet`: a set of `!Send` tasks that run on the
//! calling model thread, and only while the set is driven ([`LocalSet::run_until`], or
//! the set awaited).
//!
//! Its tasks are local tasks of the executor of the `block_on` that drives the set (so
//! reports name them, and which woken task is polled next is a decision), each wrapped in
//! a gate: polled while the set is not driven, a task parks until the set is driven again,
//! as Tokio's set does not poll its tasks then. A task spawned outside any `block_on`
//! (Tokio's usual pattern: spawn, then `local.block_on(&rt, ..)`) waits, unbound, until
//! the set is first driven, and then goes to that `block_on`'s executor. Dropping the set
//! aborts its tasks.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::panic::Location;
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::task::{Context, Poll, Waker};

use crate::runtime::Runtime;
use interleave_engine::primitive::{Loc, thread_slot};
use interleave_engine::{primitive, threads};
use interleave_test::future::{self, AbortHandle, JoinHandle};

/// A set of `!Send` tasks on one thread, as `tokio::task::LocalSet`.
///
/// ```
/// use std::{cell::Cell, rc::Rc};
/// use interleave_test_tokio::task::{self, LocalSet};
///
/// interleave_test::check_async(|| async {
///     let local = LocalSet::new();
///     let seen = Rc::new(Cell::new(0));
///     let value = local
///         .run_until(async {
///             let task_seen = Rc::clone(&seen);
///             task::spawn_local(async move { task_seen.set(7) }).await.unwrap();
///             seen.get()
///         })
///         .await;
///     assert_eq!(value, 7);
/// })
/// .unwrap();
/// ```
///
/// Tasks may be spawned on it before it runs, as in Tokio's own examples:
///
/// ```
/// use interleave_test_tokio::{runtime::Runtime, task::LocalSet};
///
/// interleave_test::check(|| {
///     let rt = Runtime::new().unwrap();
///     let local = LocalSet::new();
///     let task = local.spawn_local(async { 3 });
///     let value = local.block_on(&rt, async { task.await.unwrap() });
///     assert_eq!(value, 3);
/// })
/// .unwrap();
/// ```
///
/// Such a task is given to the executor of the first `block_on` that drives the set; its
/// handle's [`id`](JoinHandle::id) is known at once.
#[derive(Debug, Default)]
pub struct LocalSet {
    set: Rc<SetState>,
    /// Whether this set, awaited, drives itself.
    awaited: bool,
}

#[derive(Debug, Default)]
struct SetState {
    /// How many drivers run the set now (a `run_until`, the set awaited).
    driven: Cell<usize>,
    /// Tasks that were polled while the set was not driven.
    parked: RefCell<Vec<Waker>>,
    /// Tasks not finished.
    live: Cell<usize>,
    /// The waker of the awaited set, woken when the last task finishes.
    idle: RefCell<Option<Waker>>,
    /// The set's tasks not known to be finished: dropped and aborted when it is dropped.
    tasks: RefCell<Vec<(Rc<dyn TaskSlot>, AbortHandle)>>,
    /// Tasks spawned outside a `block_on`, given to the executor of the first `block_on`
    /// that drives the set.
    unbound: RefCell<Vec<future::Unbound>>,
}

/// A task's future, shared by its gate, which polls it, and its set, which drops it when
/// the set is dropped; empty once it finished or was dropped.
type Slot<F> = RefCell<Option<Pin<Box<F>>>>;

/// What a set does with a task's [`Slot`], whatever its future's type.
trait TaskSlot {
    /// Whether the future is still there.
    fn holds(&self) -> bool;
    /// Drops the future now; whether it was still there.
    fn drop_future(&self) -> bool;
}

impl std::fmt::Debug for dyn TaskSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.holds() { "running" } else { "finished" })
    }
}

impl<F: Future> TaskSlot for Slot<F> {
    fn holds(&self) -> bool {
        self.borrow().is_some()
    }

    fn drop_future(&self) -> bool {
        let future = self.borrow_mut().take();
        future.is_some()
    }
}

impl SetState {
    /// One more driver; the first wakes the tasks that parked and gives the executor
    /// that drives the set the tasks spawned outside a `block_on`.
    fn drive(&self) {
        self.driven.set(self.driven.get() + 1);
        if self.driven.get() == 1 {
            for waker in self.parked.take() {
                waker.wake();
            }
            for task in self.unbound.take() {
                task.bind();
            }
        }
    }

    fn undrive(&self) {
        self.driven.set(self.driven.get() - 1);
    }
}

/// Polls `f` with `set` the current set of the calling model thread: `task::spawn_local`
/// spawns on it. The entry is taken off by its thread, not as the last one: `f` may switch
/// to another model thread on the same OS thread (a coroutine), which pushes its own.
fn with_current<R>(set: &Rc<SetState>, f: impl FnOnce() -> R) -> R {
    let _entered = enter(set, "interleave_test_tokio::task::LocalSet");
    f()
}

/// Makes `set` the current set of the calling model thread until the guard is dropped (the
/// sets a thread polls are a stack in the engine's per-thread slot:
/// `runtime/thread_slot.rs`).
#[track_caller]
fn enter(set: &Rc<SetState>, api: &str) -> LocalEnterGuard {
    let key = threads::ids(api);
    thread_slot::push(key, Rc::downgrade(set));
    LocalEnterGuard {
        key,
        _not_send: std::marker::PhantomData,
    }
}

/// The guard of [`LocalSet::enter`], as `tokio::task::LocalEnterGuard`: the set is the
/// context of the calling thread until it is dropped. `!Send`, as Tokio's.
#[derive(Debug)]
pub struct LocalEnterGuard {
    key: (u64, interleave_engine::primitive::Tid),
    _not_send: std::marker::PhantomData<*const ()>,
}

impl Drop for LocalEnterGuard {
    fn drop(&mut self) {
        drop(thread_slot::pop::<Weak<SetState>>(self.key));
    }
}

/// Tokio's message for `spawn_local` outside a `LocalSet` or `LocalRuntime`.
pub(super) const SPAWN_LOCAL_OUTSIDE: &str =
    "`spawn_local` called from outside of a `task::LocalSet` or `runtime::LocalRuntime`";

/// The set the calling model thread is polling a future of, innermost first; else the set
/// of the `flavor = "local"` test body it runs, which that body drives throughout.
fn current_set() -> Option<Rc<SetState>> {
    let key = threads::try_ids()?;
    match thread_slot::top(key, Weak::upgrade) {
        Some(set) => set,
        None => crate::test_body::local_set(|set| Rc::clone(&set.set)),
    }
}

/// Whether the calling code runs in a set's context: a future of its `run_until`, one of
/// its tasks, or the set's drop (where Tokio's `block_in_place` panics).
pub(super) fn in_set() -> bool {
    current_set().is_some()
}

/// Panics with Tokio's message unless the calling code runs in a set's context.
#[track_caller]
pub(super) fn assert_in_set() {
    assert!(in_set(), "{SPAWN_LOCAL_OUTSIDE}");
}

/// Spawns `future`, called at `loc`, on the set the calling model thread is polling a
/// future of (`tokio::task::spawn_local` inside it).
///
/// # Panics
/// Outside a set (a `LocalRuntime`'s `block_on` drives one), with Tokio's message.
#[track_caller]
pub(super) fn spawn_local_here<F>(future: F, loc: Loc) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    match current_set() {
        Some(set) => spawn_on(&set, future, loc),
        None => panic!("{SPAWN_LOCAL_OUTSIDE}"),
    }
}

impl LocalSet {
    /// An empty set.
    pub fn new() -> LocalSet {
        LocalSet::default()
    }

    /// Enters the set's context, as `LocalSet::enter`: until the guard is dropped,
    /// `task::spawn_local` on the calling thread spawns on this set (its tasks run once
    /// the set is driven).
    #[track_caller]
    pub fn enter(&self) -> LocalEnterGuard {
        enter(&self.set, "interleave_test_tokio::task::LocalSet::enter")
    }

    /// Spawns `future` on the set: it runs while the set is driven. A switch point.
    #[track_caller]
    pub fn spawn_local<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        spawn_on(&self.set, future, Location::caller())
    }

    /// Drives the set from now until it is dropped: the set of a `flavor = "local"` test
    /// body, driven while the body runs, as its `block_on` would.
    pub(crate) fn drive_from_start(&self) {
        self.set.drive();
    }

    /// Runs `future` to its end, driving the set meanwhile: its tasks run while the future
    /// is polled, and stop where they are when it is done.
    pub fn run_until<F: Future>(&self, future: F) -> impl Future<Output = F::Output> {
        RunUntil {
            set: &self.set,
            future: Box::pin(future),
            driving: false,
        }
    }

    /// `rt.block_on(self.run_until(future))`.
    #[track_caller]
    pub fn block_on<F: Future>(&self, rt: &Runtime, future: F) -> F::Output {
        rt.block_on(self.run_until(future))
    }
}

impl Future for LocalSet {
    type Output = ();

    /// Drives the set until every task it has (spawned before or during) has finished.
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if !self.awaited {
            self.awaited = true;
            self.set.drive();
        }
        if self.set.live.get() == 0 {
            return Poll::Ready(());
        }
        *self.set.idle.borrow_mut() = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for LocalSet {
    /// Drops the futures of the tasks not finished, here, as Tokio's set does, and aborts
    /// them (each a switch point), so that their handles yield a cancelled `JoinError`.
    fn drop(&mut self) {
        if self.awaited {
            self.set.undrive();
        }
        // Tasks never given to an executor end here, cancelled (after the abort below).
        let unbound = self.set.unbound.take();
        if threads::thread_ends() {
            // Kept in a thread-local of an OS thread that ends: the futures are forgotten,
            // as the crate's own thread-locals their destructors would use are gone.
            std::mem::forget(self.set.tasks.take());
            std::mem::forget(unbound);
            return;
        }
        if primitive::in_model() {
            // In the set's context, as Tokio's: a task's drop sees it (`block_in_place`).
            let set = Rc::clone(&self.set);
            with_current(&set, || {
                for (slot, task) in set.tasks.take() {
                    if slot.drop_future() {
                        task.abort();
                    }
                }
            });
        }
        drop(unbound);
    }
}

/// Spawns `future` on `set`, called at `loc`: on the executor of the `block_on` that runs
/// the calling code, or, outside one, on the first that drives the set.
fn spawn_on<F>(set: &Rc<SetState>, future: F, loc: Loc) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    // Makes the calling OS thread's ambient execution first, outside a model.
    threads::ids("interleave_test_tokio::task::LocalSet::spawn_local");
    set.live.set(set.live.get() + 1);
    let slot: Rc<Slot<F>> = Rc::new(RefCell::new(Some(Box::pin(future))));
    let gated = Gated {
        set: Rc::clone(set),
        slot: Rc::clone(&slot),
    };
    let handle = if future::in_block_on() {
        future::spawn_local_at(gated, None, loc)
    } else {
        let (handle, unbound) = future::spawn_unbound(gated, loc);
        set.unbound.borrow_mut().push(unbound);
        handle
    };
    let mut tasks = set.tasks.borrow_mut();
    tasks.retain(|(slot, _)| slot.holds());
    tasks.push((slot, handle.abort_handle()));
    handle
}

/// A task of a set: polled only while the set is driven.
struct Gated<F: Future> {
    set: Rc<SetState>,
    slot: Rc<Slot<F>>,
}

impl<F: Future> Future for Gated<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        if self.set.driven.get() == 0 {
            self.set.parked.borrow_mut().push(cx.waker().clone());
            return Poll::Pending;
        }
        // Taken out while it is polled: the set cannot be dropped meanwhile (its
        // `run_until` borrows it, or it is the future awaited).
        let Some(mut future) = self.slot.borrow_mut().take() else {
            return Poll::Pending; // dropped with its set, and aborted
        };
        let polled = with_current(&self.set, || future.as_mut().poll(cx));
        if polled.is_pending() {
            *self.slot.borrow_mut() = Some(future);
        }
        polled
    }
}

impl<F: Future> Drop for Gated<F> {
    /// Finished, aborted, or dropped with its executor: no longer live. An aborted task's
    /// future is dropped here, as Tokio drops it, not kept until the set is dropped.
    fn drop(&mut self) {
        let future = self.slot.borrow_mut().take();
        drop(future);
        self.set.live.set(self.set.live.get() - 1);
        if self.set.live.get() == 0
            && let Some(idle) = self.set.idle.take()
        {
            idle.wake();
        }
    }
}

/// The future of [`LocalSet::run_until`].
struct RunUntil<'a, F: Future> {
    set: &'a Rc<SetState>,
    future: Pin<Box<F>>,
    driving: bool,
}

impl<F: Future> Future for RunUntil<'_, F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let me = &mut *self;
        if !me.driving {
            me.driving = true;
            me.set.drive();
        }
        let polled = with_current(me.set, || me.future.as_mut().poll(cx));
        if polled.is_ready() {
            me.driving = false;
            me.set.undrive();
        }
        polled
    }
}

impl<F: Future> Drop for RunUntil<'_, F> {
    fn drop(&mut self) {
        if self.driving {
            self.set.undrive();
        }
    }
}
