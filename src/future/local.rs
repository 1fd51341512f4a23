//! The executor of `block_on`: the future it runs and the tasks [`spawn_local`] gives it,
//! all polled on the calling model thread, as a current-thread runtime polls them.
//!
//! They share their thread, so they interleave only where one returns `Pending`, and a
//! blocking call inside a poll stalls all of them. Which of the woken futures is polled
//! next is a decision (`PickKind::Poll`), since executors differ in that order; nothing
//! else is, so no interleaving one thread cannot produce is explored.
//!
//! Each future has a waker of its own ([`LocalWake`]): a wake puts the future in the ready
//! queue and gives the thread a wake token (the runtime's wake, with its release). Reading
//! the queue reads the thread's park key, which every wake writes, so a wake from another
//! thread and the executor's look at the queue are ordered by the search and synchronize.

use std::cell::RefCell;
use std::future::Future;
use std::panic::{AssertUnwindSafe, Location, catch_unwind, resume_unwind};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll, Wake, Waker};

use parking_lot::Mutex;

use super::task::{JoinHandle, Outcome, Shared};
use super::unbound::Prepared;
use crate::primitive::{Loc, Tid, thread_slot};
use crate::threads::wakes;
use crate::{primitive, threads};

const API: &str = "interleave_test::future::block_on";

/// The index of `block_on`'s own future in its executor.
const MAIN: usize = 0;

/// Makes `executor` the innermost of its model thread until the guard drops (the engine's
/// per-thread slot keeps a stack of them: `runtime/thread_slot.rs`).
fn enter(executor: &Rc<Executor>) -> Exit {
    let key = (executor.thread.exec(), executor.owner);
    thread_slot::push(key, Rc::clone(executor));
    Exit { key }
}

/// Takes the innermost executor of its model thread off its stack (see [`enter`]).
struct Exit {
    key: (u64, Tid),
}

impl Drop for Exit {
    fn drop(&mut self) {
        drop(thread_slot::pop::<Rc<Executor>>(self.key));
    }
}

/// The executor of the innermost `block_on` of the calling model thread.
pub(super) fn current() -> Option<Rc<Executor>> {
    thread_slot::top(threads::ids(API), Rc::clone)
}

/// The woken futures of one executor, in the order they were woken.
#[derive(Default)]
struct Ready {
    queue: Mutex<(Vec<usize>, Queued)>,
}

/// Which futures are in the queue: the first 64 by bit, the others by flag (no allocation
/// for an executor of few futures).
#[derive(Default)]
struct Queued {
    low: u64,
    high: Vec<bool>,
}

impl Queued {
    /// Marks future `index` queued or not; returns whether it was.
    fn set(&mut self, index: usize, queued: bool) -> bool {
        if index < 64 {
            let bit = 1u64 << index;
            let was = self.low & bit != 0;
            self.low = if queued {
                self.low | bit
            } else {
                self.low & !bit
            };
            return was;
        }
        let at = index - 64;
        if self.high.len() <= at {
            self.high.resize(at + 1, false);
        }
        std::mem::replace(&mut self.high[at], queued)
    }
}

impl Ready {
    fn push(&self, index: usize) {
        let mut guard = self.queue.lock();
        let (queue, queued) = &mut *guard;
        if !queued.set(index, true) {
            queue.push(index);
        }
    }

    fn len(&self) -> usize {
        self.queue.lock().0.len()
    }

    fn take(&self, at: usize) -> usize {
        let mut guard = self.queue.lock();
        let (queue, queued) = &mut *guard;
        let index = queue.remove(at);
        queued.set(index, false);
        index
    }
}

/// The waker of one future of an executor.
struct LocalWake {
    thread: Arc<wakes::TaskWake>,
    ready: Arc<Ready>,
    index: usize,
}

impl Wake for LocalWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.ready.push(self.index);
        Wake::wake_by_ref(&self.thread);
    }
}

/// A task of the executor: its future (which writes its value to the handle's outcome)
/// and what it shares with its handles.
struct Local {
    /// Its number among its thread's local tasks (its [`Id`](super::Id)'s).
    id: usize,
    future: Pin<Box<dyn Future<Output = ()>>>,
    /// Its key for reports (`notes.rs`).
    key: u32,
    shared: Arc<Shared>,
    /// Records a panic of the future as its outcome.
    panicked: Box<dyn FnOnce(Box<dyn std::any::Any + Send>)>,
}

/// One `block_on`'s executor.
pub(super) struct Executor {
    owner: Tid,
    thread: Arc<wakes::TaskWake>,
    ready: Arc<Ready>,
    /// By index; `MAIN`'s slot stays empty (`block_on` holds its future), and is made
    /// with the first local task.
    tasks: RefCell<Vec<Option<Local>>>,
    /// Each future's waker, by index, made at its first poll and cloned for the next
    /// (a clone costs no allocation). They hold the thread's [`wakes::TaskWake`] whether
    /// or not the program keeps a copy, so a deadlock report does not say "no Waker of it
    /// is alive" of a `block_on`'s thread, only of a spawned task's.
    wakers: RefCell<Vec<Option<Waker>>>,
    /// The index and id of the local task being polled, `MAIN` between their polls.
    polling: std::cell::Cell<(usize, usize)>,
    /// Polls since the executor last waited (see [`UNWAITED_POLLS`]).
    unwaited: std::cell::Cell<u32>,
    /// The key of `block_on`'s own future for reports (`notes.rs`).
    main_key: std::cell::Cell<u32>,
    /// The step count when the future being polled was picked, to tell whether its poll
    /// reached an operation.
    began: std::cell::Cell<u64>,
}

/// Polls in a row without a wait after which the executor yields, a switch point. Futures
/// that keep waking one another (`loop { yield_now().await }`) would otherwise never reach
/// one: the step limit could not see the livelock, and the watchdog would end the process.
/// The yield only adds schedules (other threads may run there), so no search is pruned,
/// and it depends only on the polls, so replay repeats it.
const UNWAITED_POLLS: u32 = 64;

impl Executor {
    /// The executor of a `block_on` called at `loc`.
    pub(super) fn new(loc: Loc) -> Self {
        let ready = Arc::new(Ready::default());
        ready.push(MAIN);
        let thread = wakes::thread_wake(API);
        Executor {
            owner: thread.tid(),
            thread,
            ready,
            tasks: RefCell::new(Vec::new()),
            wakers: RefCell::new(Vec::new()),
            polling: std::cell::Cell::new((MAIN, 0)),
            unwaited: std::cell::Cell::new(0),
            main_key: std::cell::Cell::new(super::notes::joined(API, None, loc, true)),
            began: std::cell::Cell::new(0),
        }
    }

    /// Future `index`'s waker.
    fn waker(&self, index: usize) -> Waker {
        let mut wakers = self.wakers.borrow_mut();
        if wakers.len() <= index {
            wakers.resize(index + 1, None);
        }
        wakers[index]
            .get_or_insert_with(|| {
                Waker::from(Arc::new(LocalWake {
                    thread: Arc::clone(&self.thread),
                    ready: Arc::clone(&self.ready),
                    index,
                }))
            })
            .clone()
    }

    /// The next future to poll: a woken one (which one is a decision when several are),
    /// else, after a wait for a wake, `MAIN` if the wait ended without one (a spurious
    /// poll).
    fn next(&self, loc: Loc) -> usize {
        loop {
            self.began.set(wakes::observe(API, self.owner));
            let n = self.ready.len();
            if n > 0 {
                if self.count_unwaited(loc) {
                    // It yielded: others may have woken more futures meanwhile, and the
                    // yield is no operation of the next future's poll.
                    continue;
                }
                let at = if n > 1 { wakes::poll_which(API, n) } else { 0 };
                return self.ready.take(at);
            }
            self.unwaited.set(0);
            wakes::wait(loc, false, |_| None);
            self.began.set(wakes::observe(API, self.owner));
            if self.ready.len() == 0 {
                return MAIN;
            }
        }
    }

    /// Counts a poll without a wait; yields (spinning) after [`UNWAITED_POLLS`] of them,
    /// and then returns `true`.
    fn count_unwaited(&self, loc: Loc) -> bool {
        let polls = self.unwaited.get() + 1;
        if polls < UNWAITED_POLLS {
            self.unwaited.set(polls);
            return false;
        }
        self.unwaited.set(0);
        threads::spinning(API, loc);
        primitive::switch_point(crate::thread::YIELD, None, loc);
        true
    }

    /// Polls local task `index`, unless it ended; drops it (inside the model) if it was
    /// aborted.
    fn poll_local(&self, index: usize) {
        let Some(mut task) = self.tasks.borrow_mut()[index].take() else {
            return; // a wake after its end
        };
        if task.shared.aborted.load(Ordering::Acquire) {
            return self.cancel(index, task);
        }
        let waker = self.waker(index);
        self.polling.set((index, task.id));
        let budget = super::budget::task_poll();
        let polled = catch_unwind(AssertUnwindSafe(|| {
            task.future.as_mut().poll(&mut Context::from_waker(&waker))
        }));
        drop(budget);
        self.polling.set((MAIN, 0));
        let began = self.began.get();
        match polled {
            Ok(Poll::Pending) => {
                super::notes::polled(API, task.key, began, true);
                self.tasks.borrow_mut()[index] = Some(task);
            }
            Ok(Poll::Ready(())) => {
                super::notes::polled(API, task.key, began, false);
                end(self.owner, &task.shared);
            }
            Err(payload) => {
                let Local {
                    id,
                    future,
                    key,
                    shared,
                    panicked,
                } = task;
                self.panicked((key, id), &shared, panicked, payload, Some(future));
            }
        }
    }

    /// Drops aborted task `task` (future `index`)'s future, as Tokio's cancellation: a
    /// panic of its destructors is the task's panic, which its handle yields instead of a
    /// cancellation. Its destructors run as the task (`task::id` is its id there), as in Tokio.
    fn cancel(&self, index: usize, task: Local) {
        let Local {
            id,
            future,
            key,
            shared,
            panicked,
        } = task;
        self.polling.set((index, id));
        let dropped = catch_unwind(AssertUnwindSafe(move || drop(future)));
        self.polling.set((MAIN, 0));
        match dropped {
            Ok(()) => {
                super::notes::left(API, key);
                end(self.owner, &shared);
            }
            Err(payload) => self.panicked((key, id), &shared, panicked, payload, None),
        }
    }

    /// Task `key` (local task `id`) panicked with `payload` (in a poll, then `future` is its
    /// future, or while its future was dropped): its handle's outcome (`record` writes it),
    /// kept as the execution's failure until the handle receives it when task panics fail
    /// it (`runtime/held.rs`); with its handle dropped, the execution's failure.
    fn panicked(
        &self,
        (key, id): (u32, usize),
        shared: &Shared,
        record: Box<dyn FnOnce(Box<dyn std::any::Any + Send>)>,
        payload: Box<dyn std::any::Any + Send>,
        future: Option<Pin<Box<dyn Future<Output = ()>>>>,
    ) {
        if threads::is_abort(&*payload) || threads::is_reentry(&*payload) {
            resume_unwind(payload);
        }
        if wakes::panics_fail(API) {
            if shared.detached.load(Ordering::Acquire) {
                super::notes::panicked(API, key, threads::message_of(&*payload));
                resume_unwind(payload);
            }
            super::notes::keep_panic(API, key, id, &*payload);
        }
        super::notes::left(API, key);
        drop(future);
        record(payload);
        end(self.owner, shared);
    }

    /// Adds `future` (named `name`, spawned at `loc`) as a task and wakes it, for its
    /// first poll.
    pub(super) fn spawn<F>(
        &self,
        future: F,
        name: Option<String>,
        loc: Loc,
    ) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        let task = Prepared::new(self.thread.exec(), self.owner);
        let handle = task.handle();
        self.add(future, name, loc, task);
        handle
    }

    /// Adds `future` as task `task` (whose handle exists) and wakes it.
    pub(super) fn add<F>(
        &self,
        future: F,
        name: Option<String>,
        loc: Loc,
        task: Prepared<F::Output>,
    ) where
        F: Future + 'static,
        F::Output: 'static,
    {
        let (done, failed) = (Arc::clone(&task.outcome), task.outcome);
        let local = Local {
            id: task.id,
            future: Box::pin(async move {
                let value = future.await;
                *done.lock() = Outcome::Done(Ok(value));
            }),
            key: super::notes::joined(API, name, loc, false),
            shared: task.shared,
            panicked: Box::new(move |payload| *failed.lock() = Outcome::Done(Err(payload))),
        };
        let index = {
            let mut tasks = self.tasks.borrow_mut();
            if tasks.is_empty() {
                tasks.push(None); // `MAIN`'s slot
            }
            tasks.push(Some(local));
            tasks.len() - 1
        };
        self.ready.push(index);
        let _ = task.waker.set(self.waker(index));
    }
}

/// A local task ended (its outcome written, unless it was cancelled): its handles see it
/// and its joiner is woken.
pub(super) fn end(owner: Tid, shared: &Shared) {
    wakes::publish(API, owner);
    shared.ended.store(true, Ordering::Release);
    shared.wake_joiner();
}

impl Drop for Executor {
    /// The tasks left when `block_on` returns are dropped, inside the model, as a
    /// runtime's shutdown drops them; their handles yield a cancelled `JoinError`.
    fn drop(&mut self) {
        let left: Vec<Local> = self.tasks.get_mut().drain(..).flatten().collect();
        for task in left {
            drop(task.future);
            if primitive::in_model() {
                super::notes::left(API, task.key);
                end(self.owner, &task.shared);
            }
        }
        if primitive::in_model() {
            super::notes::left(API, self.main_key.get());
        }
    }
}

/// Whether the calling thread runs a `block_on`.
pub fn in_block_on() -> bool {
    current().is_some()
}

/// The id of the local task the calling thread's innermost `block_on` polls, if any.
pub(super) fn current_task() -> Option<(Tid, usize)> {
    let executor = current()?;
    let (index, id) = executor.polling.get();
    (index != MAIN).then_some((executor.owner, id))
}

/// Runs `future` to completion on the calling model thread, with the tasks
/// [`spawn_local`] gives it; see [`block_on`](super::block_on).
pub(super) fn block_on<F: Future>(future: F, loc: Loc) -> F::Output {
    run(&Rc::new(Executor::new(loc)), future, loc)
}

/// Runs `future` to completion on `executor`, a kept one (`kept.rs`) that ran other
/// `block_on`s before: its tasks go on where they stopped.
pub(super) fn block_on_kept<F: Future>(executor: &Rc<Executor>, future: F, loc: Loc) -> F::Output {
    let old = executor
        .main_key
        .replace(super::notes::joined(API, None, loc, true));
    super::notes::left(API, old);
    executor.ready.push(MAIN);
    run(executor, future, loc)
}

/// Polls `future` and `executor`'s tasks on the calling model thread until `future` is done.
fn run<F: Future>(executor: &Rc<Executor>, future: F, loc: Loc) -> F::Output {
    let _exit = enter(executor);
    let mut future = std::pin::pin!(future);
    loop {
        match executor.next(loc) {
            MAIN => {
                let waker = executor.waker(MAIN);
                let budget = super::budget::task_poll();
                let polled = future.as_mut().poll(&mut Context::from_waker(&waker));
                drop(budget);
                let (key, began) = (executor.main_key.get(), executor.began.get());
                super::notes::polled(API, key, began, polled.is_pending());
                if let Poll::Ready(value) = polled {
                    return value;
                }
            }
            index => executor.poll_local(index),
        }
    }
}

/// Spawns `future` on the executor of the `block_on` that runs the calling code, as
/// `tokio::task::spawn_local`: it shares that model thread with the `block_on`'s future
/// and its other local tasks, so they interleave only at `.await` points, and a blocking
/// call inside one of their polls stalls all of them (a deadlock of that kind is found).
/// Spawning is a switch point. Tasks left when the `block_on` returns are dropped inside
/// the model; their handles yield a cancelled [`JoinError`](super::JoinError).
///
/// # Panics
/// Outside the future of a `block_on` of the calling model thread.
///
/// ```
/// use interleave_test::future;
///
/// interleave_test::check(|| {
///     future::block_on(async {
///         let task = future::spawn_local(async { 2 });
///         assert_eq!(task.await.unwrap(), 2);
///     });
/// });
/// ```
#[track_caller]
pub fn spawn_local<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    spawn_local_at(future, None, Location::caller())
}

/// [`spawn_local`] of a task named `name`, called at `loc`.
pub fn spawn_local_at<F>(future: F, name: Option<String>, loc: Loc) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    primitive::switch_point(super::task::SPAWN, None, loc);
    let executor = current().unwrap_or_else(|| {
        panic!(
            "interleave_test::future::spawn_local was called outside block_on: a local task \
             runs on the executor of a block_on of its model thread, so call it from the \
             future that block_on runs (or use future::spawn for a task of its own)"
        )
    });
    executor.spawn(future, name, loc)
}
