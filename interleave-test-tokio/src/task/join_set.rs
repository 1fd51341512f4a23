//! [`JoinSet`]: a set of tasks, joined in the order they finish.

use std::future::{Future, poll_fn};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use parking_lot::Mutex;

use super::{AbortHandle, Id, JoinError, JoinHandle};
use interleave_engine::primitive;
use interleave_test::future::budget;
use interleave_test::sync::atomic::{AtomicU64, Ordering};

/// A set of tasks, as `tokio::task::JoinSet`: [`join_next`](Self::join_next) yields their
/// results in the order the tasks finished (their futures returned; the search explores
/// each order of tasks that finish concurrently). Dropping the set aborts every task in it.
///
/// ```
/// use interleave_test_tokio::task::JoinSet;
///
/// interleave_test::check_async(|| async {
///     let mut set = JoinSet::new();
///     for n in 0..3 {
///         set.spawn(async move { n * 10 });
///     }
///     let mut sum = 0;
///     while let Some(done) = set.join_next().await {
///         sum += done.unwrap();
///     }
///     assert_eq!(sum, 30);
/// })
/// .unwrap();
/// ```
pub struct JoinSet<T> {
    tasks: Vec<Entry<T>>,
    /// Results of ended tasks not yet returned, with their finishing number.
    ended: Vec<(u64, Id, Result<T, JoinError>)>,
    /// Numbers the tasks' futures take as they return (a modelled atomic, so the search
    /// orders the returns of different tasks and explores each order).
    returns: Arc<AtomicU64>,
    /// The waker of the set's last `join_next`, woken by every task's end.
    joiner: Arc<Mutex<Option<Waker>>>,
}

/// A task of the set: its handle, the waker its handle is polled with, and the number its
/// future took when it returned (0 while it has not; aborted and panicked tasks never do).
struct Entry<T> {
    task: JoinHandle<T>,
    waker: Waker,
    returned: Arc<std::sync::atomic::AtomicU64>,
}

/// The waker of a task's handle: its end wakes the set's `join_next`.
struct EndWake(Arc<Mutex<Option<Waker>>>);

impl Wake for EndWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let joiner = self.0.lock().clone();
        if let Some(waker) = joiner {
            waker.wake();
        }
    }
}

impl<T> std::fmt::Debug for JoinSet<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JoinSet")
            .field("len", &self.tasks.len())
            .finish_non_exhaustive()
    }
}

impl<T> Default for JoinSet<T> {
    fn default() -> Self {
        JoinSet::new()
    }
}

impl<T> JoinSet<T> {
    /// An empty set.
    pub fn new() -> Self {
        JoinSet {
            tasks: Vec::new(),
            ended: Vec::new(),
            returns: Arc::new(AtomicU64::new(0)),
            joiner: Arc::default(),
        }
    }

    /// How many tasks it holds (finished ones not yet joined included).
    pub fn len(&self) -> usize {
        self.tasks.len() + self.ended.len()
    }

    /// Whether it holds no task.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Asks every task in it to stop; they stay in it until joined.
    #[track_caller]
    pub fn abort_all(&mut self) {
        for entry in &self.tasks {
            entry.task.abort();
        }
    }

    /// Removes every task without aborting it (they run on, detached).
    pub fn detach_all(&mut self) {
        self.tasks.clear();
        self.ended.clear();
    }

    /// Polls for the next task to finish: `Ready(None)` when the set is empty. Spends a
    /// unit of the task's cooperative budget when a task's result is there, as Tokio's
    /// (which polls that task's handle): with none left it yields instead.
    pub fn poll_join_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<T, JoinError>>> {
        self.poll_next_entry(cx, true)
            .map(|done| done.map(|(_, result)| result))
    }

    /// The next task to finish, with its id: of the tasks that ended, the one whose
    /// future returned first (tasks that were aborted or panicked after those, in the
    /// order they were added). `charge`: a result spends a unit of budget (see
    /// [`poll_join_next`](Self::poll_join_next)); the handles are polled unconstrained.
    fn poll_next_entry(
        &mut self,
        cx: &mut Context<'_>,
        charge: bool,
    ) -> Poll<Option<(Id, Result<T, JoinError>)>> {
        if self.is_empty() {
            return Poll::Ready(None);
        }
        *self.joiner.lock() = Some(cx.waker().clone());
        budget::unconstrained(|| self.collect_ended());
        let first = (0..self.ended.len()).min_by_key(|&i| self.ended[i].0);
        let Some(i) = first else {
            return Poll::Pending;
        };
        let mut take = |_: &mut Context<'_>| {
            let (_, id, result) = self.ended.remove(i);
            Poll::Ready(Some((id, result)))
        };
        match charge {
            true => budget::charged(cx, take),
            false => take(cx),
        }
    }

    /// Moves the results of the tasks that ended to `ended`.
    fn collect_ended(&mut self) {
        let mut i = 0;
        while i < self.tasks.len() {
            let entry = &mut self.tasks[i];
            let polled = entry
                .task
                .poll_unawaited(&mut Context::from_waker(&entry.waker));
            let Poll::Ready(result) = polled else {
                i += 1;
                continue;
            };
            let entry = self.tasks.remove(i);
            let returned = match entry.returned.load(Ordering::Acquire) {
                0 => u64::MAX,
                n => n,
            };
            self.ended.push((returned, entry.task.id(), result));
        }
    }

    /// Waits for the next task to finish and returns its result, or `None` when the set
    /// is empty. Cancel-safe, as Tokio's.
    pub async fn join_next(&mut self) -> Option<Result<T, JoinError>> {
        poll_fn(|cx| self.poll_join_next(cx)).await
    }

    /// [`join_next`](Self::join_next) with the task's id.
    pub async fn join_next_with_id(&mut self) -> Option<Result<(Id, T), JoinError>> {
        poll_fn(|cx| self.poll_join_next_with_id(cx)).await
    }

    /// The result of a task that already finished, if any, without waiting (and, as
    /// Tokio's, without spending budget).
    pub fn try_join_next(&mut self) -> Option<Result<T, JoinError>> {
        self.try_join_next_with_id()
            .map(|done| done.map(|(_, value)| value))
    }

    /// [`try_join_next`](Self::try_join_next) with the task's id.
    pub fn try_join_next_with_id(&mut self) -> Option<Result<(Id, T), JoinError>> {
        match self.poll_next_entry(&mut Context::from_waker(Waker::noop()), false) {
            Poll::Ready(done) => done.map(|(id, result)| result.map(|value| (id, value))),
            Poll::Pending => None,
        }
    }

    /// [`poll_join_next`](Self::poll_join_next) with the task's id.
    pub fn poll_join_next_with_id(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<(Id, T), JoinError>>> {
        self.poll_next_entry(cx, true)
            .map(|done| done.map(|(id, result)| result.map(|value| (id, value))))
    }

    /// Aborts every task and waits until all have ended.
    pub async fn shutdown(&mut self) {
        self.abort_all();
        while self.join_next().await.is_some() {}
    }

    /// Waits for every task and returns their values in the order they finished.
    ///
    /// # Panics
    /// If a task panicked (its panic resumes here) or was aborted.
    pub async fn join_all(mut self) -> Vec<T> {
        let mut values = Vec::with_capacity(self.len());
        while let Some(result) = self.join_next().await {
            match result {
                Ok(value) => values.push(value),
                Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
                Err(err) => panic!("{err}"),
            }
        }
        values
    }
}

impl<T: Send + 'static> JoinSet<T> {
    /// Spawns `task` into the set (see [`tokio::spawn`](crate::spawn)) and returns a
    /// handle that can abort it.
    #[track_caller]
    pub fn spawn<F>(&mut self, task: F) -> AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
    {
        let (task, returned) = self.numbered(task);
        self.insert(super::spawn(task), returned)
    }

    /// Spawns `task` on the runtime of `handle`.
    #[track_caller]
    pub fn spawn_on<F>(&mut self, task: F, handle: &crate::runtime::Handle) -> AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
    {
        let (task, returned) = self.numbered(task);
        self.insert(handle.spawn(task), returned)
    }

    /// Runs `f` as a task of its own in the set, on the runtime of `handle`, as
    /// `JoinSet::spawn_blocking_on`.
    #[track_caller]
    pub fn spawn_blocking_on<F>(&mut self, f: F, handle: &crate::runtime::Handle) -> AbortHandle
    where
        F: FnOnce() -> T + Send + 'static,
    {
        let (task, returned) = self.numbered(async move { f() });
        self.insert(handle.spawn(task), returned)
    }

    /// Runs `f` as a task of its own in the set (see
    /// [`spawn_blocking`](super::spawn_blocking)).
    #[track_caller]
    pub fn spawn_blocking<F>(&mut self, f: F) -> AbortHandle
    where
        F: FnOnce() -> T + Send + 'static,
    {
        let (task, returned) = self.numbered(async move { f() });
        self.insert(super::spawn(task), returned)
    }
}

/// Spawns each future into a new set, as Tokio's (`futures.collect::<JoinSet<_>>()`).
impl<T, F> FromIterator<F> for JoinSet<T>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    #[track_caller]
    fn from_iter<I: IntoIterator<Item = F>>(futures: I) -> Self {
        let mut set = JoinSet::new();
        set.extend(futures);
        set
    }
}

/// Spawns each future into the set, as Tokio's.
impl<T, F> Extend<F> for JoinSet<T>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    #[track_caller]
    fn extend<I: IntoIterator<Item = F>>(&mut self, futures: I) {
        for task in futures {
            self.spawn(task);
        }
    }
}

impl<T: 'static> JoinSet<T> {
    /// Spawns a `!Send` `task` on the calling thread's `block_on` (see
    /// [`spawn_local`](super::spawn_local)).
    #[track_caller]
    pub fn spawn_local<F>(&mut self, task: F) -> AbortHandle
    where
        F: Future<Output = T> + 'static,
    {
        let (task, returned) = self.numbered(task);
        self.insert(super::spawn_local(task), returned)
    }

    /// Spawns a `!Send` `task` on `local_set` (it runs while the set is driven), as
    /// `JoinSet::spawn_local_on`.
    #[track_caller]
    pub fn spawn_local_on<F>(&mut self, task: F, local_set: &super::LocalSet) -> AbortHandle
    where
        F: Future<Output = T> + 'static,
    {
        let (task, returned) = self.numbered(task);
        self.insert(local_set.spawn_local(task), returned)
    }

    /// `task`, taking the set's next number when its future returns, and where it keeps
    /// that number.
    /// The number is taken at the place of the program's `spawn` (the caller).
    #[track_caller]
    fn numbered<F: Future<Output = T>>(
        &self,
        task: F,
    ) -> (
        impl Future<Output = T> + use<F, T>,
        Arc<std::sync::atomic::AtomicU64>,
    ) {
        let returned = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let (returns, mine) = (Arc::clone(&self.returns), Arc::clone(&returned));
        let loc = std::panic::Location::caller();
        let task = async move {
            let value = task.await;
            let add = interleave_test::sync::atomic::ops::FETCH_ADD;
            // SeqCst: an execution that uses only sequentially consistent atomics runs
            // without the memory model's bookkeeping (`tracked_for`).
            let old = returns.rmw_at(add, loc, Ordering::SeqCst, |n| n.wrapping_add(1));
            mine.store(old + 1, Ordering::Release);
            value
        };
        (task, returned)
    }

    /// Adds `task`; its handle is polled with a waker that wakes the set's `join_next`.
    fn insert(
        &mut self,
        mut task: JoinHandle<T>,
        returned: Arc<std::sync::atomic::AtomicU64>,
    ) -> AbortHandle {
        let abort = task.abort_handle();
        let waker = Waker::from(Arc::new(EndWake(Arc::clone(&self.joiner))));
        let polled = task.poll_unawaited(&mut Context::from_waker(&waker));
        match polled {
            Poll::Ready(result) => self.ended.push((u64::MAX, task.id(), result)),
            Poll::Pending => self.tasks.push(Entry {
                task,
                waker,
                returned,
            }),
        }
        abort
    }
}

impl<T> Drop for JoinSet<T> {
    /// Aborts every task still in the set, as Tokio's.
    fn drop(&mut self) {
        // During a panic the execution fails anyway; a misuse here would abort the process.
        if self.tasks.is_empty() || !primitive::in_model() || std::thread::panicking() {
            return;
        }
        for entry in &self.tasks {
            entry.task.abort();
        }
    }
}
