//! The driver threads of a run: one to start with, more once the run asks for them.
//!
//! A run starts on one driver. Starting another costs an OS thread (its creation, its
//! scheduling on a core that may be busy, its join at the end) and its first execution
//! (fresh coroutine stacks and buffers): tens of microseconds on an idle machine, much more
//! on a loaded one, as much as a whole hunt of tens of executions. So only the first driver
//! may bring in more, through the [`Widen`] it is given, once it judges that the run will
//! last long enough to pay for them (`independent.rs`).
//!
//! On the OS-thread substrate each driver is a thread of its own pinned to a core
//! (round-robin over the process's cores), with the core passed in: the threads of its
//! executions are pinned there too. Under coroutines nothing is pinned and the caller's
//! thread is the first driver, so that a run that never widens starts no thread at all.
//! The caller's thread is never pinned: it is the user's.

use std::panic::AssertUnwindSafe;
use std::thread::{Scope, ScopedJoinHandle};

use parking_lot::Mutex;

use crate::run::Core;
use crate::settings::Substrate;

/// Starts `n` more drivers, each running the run's helper work; called at most once, by the
/// first driver.
pub(super) type Widen<'a> = dyn Fn(usize) + Sync + 'a;

/// Runs `work` on one driver and waits for it.
pub(super) fn one_driver(substrate: Substrate, work: impl FnOnce(Option<Core>) + Send) {
    staged(substrate, |core, _| work(core), &|_| {});
}

/// Runs `first` on the first driver, with the [`Widen`] that starts drivers running
/// `helper`, and returns once every driver is done. A driver's panic is raised again here,
/// after every driver has been joined.
pub(super) fn staged<'env>(
    substrate: Substrate,
    first: impl FnOnce(Option<Core>, &Widen<'_>) + Send,
    helper: &'env (dyn Fn(Option<Core>) + Sync + 'env),
) {
    std::thread::scope(|s| {
        if !substrate.drives_on_own_threads() {
            return lead(s, substrate, first, helper);
        }
        let work = move || lead(s, substrate, first, helper);
        let driver = spawn(s, 0, work)
            .unwrap_or_else(|e| panic!("interleave-test could not create a driver thread: {e}"));
        if let Err(payload) = driver.join() {
            std::panic::resume_unwind(payload);
        }
    });
}

/// Runs `first` on the calling thread, the first driver, then joins the helpers it started.
fn lead<'scope, 'env>(
    s: &'scope Scope<'scope, 'env>,
    substrate: Substrate,
    first: impl FnOnce(Option<Core>, &Widen<'_>),
    helper: &'env (dyn Fn(Option<Core>) + Sync + 'env),
) {
    let core = pin(substrate);
    let helpers = Mutex::new(Vec::new());
    // A helper the OS refuses to start is left out: the run goes on with fewer drivers,
    // which changes nothing but its speed.
    let widen = |n: usize| {
        let mut helpers = helpers.lock();
        for _ in 0..n {
            let i = helpers.len() + 1;
            match spawn(s, i, move || helper(pin(substrate))) {
                Ok(handle) => helpers.push(handle),
                Err(_) => break,
            }
        }
    };
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| first(core, &widen)));
    // Every helper joined explicitly, so that the OS threads are gone when the run returns
    // (the scope's own wait does not wait for that); the first panic is the one raised.
    let joined: Vec<_> = helpers.into_inner().into_iter().map(|h| h.join()).collect();
    let failed = std::iter::once(outcome).chain(joined).find_map(Result::err);
    if let Some(payload) = failed {
        std::panic::resume_unwind(payload);
    }
}

/// The core of a new driver: one of its own on the OS-thread substrate, none under
/// coroutines.
fn pin(substrate: Substrate) -> Option<Core> {
    if substrate.drives_on_own_threads() {
        crate::run::pin_driver()
    } else {
        None
    }
}

/// Starts driver `i` running `work` in scope `s`.
fn spawn<'scope>(
    s: &'scope Scope<'scope, '_>,
    i: usize,
    work: impl FnOnce() + Send + 'scope,
) -> std::io::Result<ScopedJoinHandle<'scope, ()>> {
    std::thread::Builder::new()
        .name(format!("interleave-driver-{i}"))
        .spawn_scoped(s, work)
}
