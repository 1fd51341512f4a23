//! Scoped model threads, as [`std::thread::scope`]: threads that may borrow from the
//! caller's stack, all joined before `scope` returns.
//!
//! Scoped threads borrow from their parent's stack, which a coroutine cannot hold across the
//! scheduler, so each runs on a real scoped OS thread of its own, whatever the substrate.

use std::panic::{AssertUnwindSafe, Location, catch_unwind, resume_unwind};

use super::{Thread, join_thread};
use crate::primitive::{ObjId, ObjectState, Tid};
use crate::{primitive, threads};

/// The threads spawned in one scope, for the implicit join at its end.
#[derive(Debug, Default)]
struct ScopeState {
    threads: Vec<Tid>,
}

impl ObjectState for ScopeState {}

/// A scope to spawn scoped threads in; see [`scope`].
///
/// # Differences from std
/// `scope` passes it by value (it is `Copy`) rather than as `&Scope`; closures that take it
/// as `|s|` and call `s.spawn(..)` read the same.
#[derive(Clone, Copy, Debug)]
pub struct Scope<'scope, 'env> {
    std: &'scope std::thread::Scope<'scope, 'env>,
    obj: ObjId,
}

/// Owned permission to join a scoped thread, as [`std::thread::ScopedJoinHandle`].
#[derive(Debug)]
pub struct ScopedJoinHandle<'scope, T> {
    inner: std::thread::ScopedJoinHandle<'scope, Option<std::thread::Result<T>>>,
    thread: Thread,
}

/// Creates a scope for spawning scoped model threads, as [`std::thread::scope`]. Every
/// thread spawned in it is joined (in the model) before `scope` returns.
#[track_caller]
pub fn scope<'env, F, T>(f: F) -> T
where
    F: for<'scope> FnOnce(Scope<'scope, 'env>) -> T,
{
    let loc = Location::caller();
    primitive::switch_point(super::SCOPE, None, loc);
    let obj = primitive::with_state("interleave_test::thread::scope", |a| {
        a.new_object("scope", loc)
    });
    std::thread::scope(|s| {
        let scope = Scope { std: s, obj };
        // The scoped threads are joined in the model before std's scope waits for their OS
        // threads, also when the execution fails meanwhile: teardown then unwinds them
        // (`draining`), so std's wait never waits for a thread that waits for the baton.
        match catch_unwind(AssertUnwindSafe(|| f(scope))) {
            Ok(value) => {
                threads::draining(|| join_all(obj, loc));
                value
            }
            Err(payload) => {
                threads::scope_panicked(&*payload);
                threads::draining(|| join_all(obj, loc));
                resume_unwind(payload)
            }
        }
    })
}

fn join_all(obj: ObjId, loc: primitive::Loc) {
    let threads = primitive::with_state("interleave_test::thread::scope", |a| {
        std::mem::take(&mut a.obj::<ScopeState>(obj).threads)
    });
    for tid in threads {
        join_thread(tid, loc);
    }
}

impl<'scope, 'env> Scope<'scope, 'env> {
    /// Spawns a scoped model thread running `f`, as [`std::thread::Scope::spawn`].
    #[track_caller]
    pub fn spawn<F, T>(self, f: F) -> ScopedJoinHandle<'scope, T>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        self.spawn_named(None, None, f, Location::caller())
    }

    pub(super) fn spawn_named<F, T>(
        self,
        name: Option<String>,
        stack: Option<usize>,
        f: F,
        loc: primitive::Loc,
    ) -> ScopedJoinHandle<'scope, T>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        primitive::switch_point(super::SPAWN, None, loc);
        let spec = threads::ThreadSpec {
            name: name.clone(),
            stack,
            loc,
            scoped: true,
        };
        let (exec, tid, _, _) = threads::register_thread(&spec);
        let obj = self.obj;
        primitive::with_state("interleave_test::thread::Scope::spawn", |a| {
            a.obj::<ScopeState>(obj).threads.push(tid)
        });
        let inner = threads::spawn_scoped(self.std, &exec, tid, f);
        ScopedJoinHandle {
            inner,
            thread: Thread::new(tid, name.as_deref()),
        }
    }
}

impl<T> ScopedJoinHandle<'_, T> {
    /// Waits for the thread to finish and returns its result, as
    /// [`std::thread::ScopedJoinHandle::join`].
    #[track_caller]
    pub fn join(self) -> std::thread::Result<T> {
        join_thread(self.thread.tid, Location::caller());
        match self.inner.join() {
            Ok(Some(result)) => result,
            Ok(None) => Err(super::torn_down(&self.thread)),
            Err(payload) => resume_unwind(payload),
        }
    }

    /// Whether the thread has finished.
    #[track_caller]
    pub fn is_finished(&self) -> bool {
        primitive::switch_point(super::IS_FINISHED, None, Location::caller());
        primitive::with_state(
            "interleave_test::thread::ScopedJoinHandle::is_finished",
            |a| a.is_finished(self.thread.tid),
        )
    }

    /// The thread's handle.
    pub fn thread(&self) -> &Thread {
        &self.thread
    }
}
