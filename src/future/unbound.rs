//! Local tasks made before an executor has them: a `LocalSet`'s task spawned outside any
//! `block_on` waits as an [`Unbound`] until the set is first driven, and its handle works
//! meanwhile (its id is known; an abort is seen at its first poll).

use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::task::Waker;

use parking_lot::Mutex;

use super::local::{Executor, current, end};
use super::task::{JoinHandle, Outcome, Shared, Source};
use crate::primitive::{Loc, Tid};
use crate::{primitive, threads};

const API: &str = "interleave_test_tokio::task::LocalSet::spawn_local";

/// A local task and its handle's parts, before an executor has it.
pub(super) struct Prepared<T> {
    exec: u64,
    owner: Tid,
    pub(super) id: usize,
    pub(super) shared: Arc<Shared>,
    pub(super) outcome: Arc<Mutex<Outcome<T>>>,
    pub(super) waker: Arc<OnceLock<Waker>>,
}

impl<T> Prepared<T> {
    /// The next local task of thread `owner` of execution `exec` (the calling thread).
    pub(super) fn new(exec: u64, owner: Tid) -> Self {
        Prepared {
            exec,
            owner,
            id: super::notes::next_local_id(API),
            shared: Arc::new(Shared::default()),
            outcome: Arc::new(Mutex::new(Outcome::Running)),
            waker: Arc::new(OnceLock::new()),
        }
    }

    pub(super) fn handle(&self) -> JoinHandle<T> {
        let source = Source::Local {
            exec: self.exec,
            owner: self.owner,
            local: self.id,
            waker: Arc::clone(&self.waker),
        };
        JoinHandle::new(source, Arc::clone(&self.shared), Arc::clone(&self.outcome))
    }
}

/// A local task spawned before a `block_on` runs it (a `LocalSet`'s task spawned outside
/// one): [`bind`](Unbound::bind) gives it to the executor of the `block_on` that runs the
/// calling code; dropped unbound, its future is dropped and its handle yields a cancelled
/// `JoinError`.
pub struct Unbound {
    task: Option<Bind>,
}

/// What an [`Unbound`] does once: given an executor, adds its task there; given none,
/// drops its future and cancels its handle.
type Bind = Box<dyn FnOnce(Option<&Executor>)>;

impl std::fmt::Debug for Unbound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Unbound")
    }
}

/// Spawns `future`, called at `loc`, as a local task of the calling thread that no
/// executor runs yet (see [`Unbound`]). A switch point, as `spawn_local`.
pub fn spawn_unbound<F>(future: F, loc: Loc) -> (JoinHandle<F::Output>, Unbound)
where
    F: Future + 'static,
    F::Output: 'static,
{
    primitive::switch_point(super::task::SPAWN, None, loc);
    let (exec, owner) = threads::ids(API);
    let task = Prepared::new(exec, owner);
    let handle = task.handle();
    let bind = move |executor: Option<&Executor>| match executor {
        Some(executor) => executor.add(future, None, loc, task),
        None => {
            drop(future);
            if primitive::in_model() {
                end(task.owner, &task.shared);
            }
        }
    };
    let unbound = Unbound {
        task: Some(Box::new(bind)),
    };
    (handle, unbound)
}

impl Unbound {
    /// Gives the task to the executor of the `block_on` that runs the calling code, which
    /// polls it next.
    ///
    /// # Panics
    /// Outside code a `block_on` of the thread that spawned it runs.
    pub fn bind(mut self) {
        let executor = current().expect(
            "a LocalSet with tasks spawned before it ran was driven outside a block_on: \
             drive it (run_until, or the set awaited) from the future of a block_on",
        );
        let task = self.task.take().expect("an unbound task is bound once");
        task(Some(&executor));
    }
}

impl Drop for Unbound {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task(None);
        }
    }
}
