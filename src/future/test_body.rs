//! The body of an `async fn` test under `#[interleave]`: run by [`block_on`](super::block_on)
//! on the model's main thread, with the runtime its attribute asks for ([`RuntimeArgs`]:
//! `flavor`, `worker_threads`, `start_paused`) made by the layer that knows runtimes (the
//! Tokio crate) the first time the body needs one ([`test_runtime`]), and dropped when the
//! body is done, as `#[tokio::test]` drops its runtime.
//!
//! This module names no runtime: the body is a future polled by this crate's executor, and
//! a runtime layered over it finds what the test asked for here. The runtime is made on
//! first use rather than before the body because this crate cannot make it; making one
//! touches nothing of the model (no operation, no decision), so when it is made changes no
//! schedule.

use std::any::Any;
use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;

use crate::primitive::{self, thread_slot};
use crate::threads;

/// What an `async fn` test under `#[interleave]` asks of the runtime that runs its body:
/// its `flavor`, `worker_threads` and `start_paused` arguments, as `#[tokio::test]` takes
/// them. A runtime layered over this crate reads them in [`test_runtime`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RuntimeArgs {
    multi_thread: bool,
    workers: Option<usize>,
    start_paused: bool,
    local: bool,
}

impl RuntimeArgs {
    /// The arguments as the attribute gives them; the attribute has already checked that
    /// they go together (`worker_threads` only with `multi_thread`, `start_paused` and
    /// `local` only without).
    pub(crate) fn new(
        multi_thread: bool,
        workers: Option<usize>,
        start_paused: bool,
        local: bool,
    ) -> RuntimeArgs {
        RuntimeArgs {
            multi_thread,
            workers,
            start_paused,
            local,
        }
    }

    /// `flavor = "multi_thread"`: each task spawned on the runtime is preempted anywhere.
    pub fn multi_thread(&self) -> bool {
        self.multi_thread
    }

    /// `worker_threads = n`, if given (with `multi_thread` only).
    pub fn worker_threads(&self) -> Option<usize> {
        self.workers
    }

    /// `start_paused = true`: the body starts on the paused clock (this crate pauses it
    /// before the body's first poll).
    pub fn start_paused(&self) -> bool {
        self.start_paused
    }

    /// `flavor = "local"`: a current-thread runtime whose body spawns `!Send` tasks
    /// without a local set.
    pub fn local(&self) -> bool {
        self.local
    }
}

/// The test body a model thread runs, on its stack in the thread's slot: the arguments,
/// and the runtime made for them once asked for.
struct Body {
    args: RuntimeArgs,
    runtime: RefCell<Option<Box<dyn Any>>>,
}

/// Takes the body off the thread's stack when it ends or unwinds, and drops its runtime
/// there, after the body's executor and its tasks.
struct Running {
    key: (u64, primitive::Tid),
}

impl Drop for Running {
    fn drop(&mut self) {
        let body = thread_slot::pop::<Rc<Body>>(self.key);
        let runtime = body.and_then(|body| body.runtime.take());
        drop(runtime);
    }
}

/// Runs `future`, an `async fn` test's body called at `loc`, to its end on the calling
/// model thread, with the runtime `args` asks for available to [`test_runtime`].
pub(crate) fn block_on_test<F: Future>(
    args: RuntimeArgs,
    future: F,
    loc: primitive::Loc,
) -> F::Output {
    let api = "#[interleave] async fn";
    let key = threads::ids(api);
    let body = Body {
        args,
        runtime: RefCell::new(None),
    };
    thread_slot::push(key, Rc::new(body));
    let _running = Running { key };
    if args.start_paused && !threads::timers::paused(api) {
        threads::timers::set_paused(api, true);
    }
    super::block_on_at(future, loc)
}

/// For a runtime layered over this crate: `read` of the runtime of the `async fn` test
/// body the calling model thread runs (its own poll or a poll of a task its executor
/// runs), made by `make` from the test's [`RuntimeArgs`] the first time it is asked for
/// and dropped when the body ends; `None` where no test body runs on the calling thread
/// (another thread, `check_async`, outside a model).
///
/// `make` and `read` must not ask for the runtime again. This is how the Tokio crate
/// makes the Tokio runtime a `#[tokio::test]` or `#[interleave] async fn` body runs in.
///
/// # Panics
/// If the runtime was made as another type than `R` (two layers asked for it).
pub fn test_runtime<R: 'static, T>(
    make: impl FnOnce(&RuntimeArgs) -> R,
    read: impl FnOnce(&R) -> T,
) -> Option<T> {
    let key = threads::try_ids()?;
    let body = thread_slot::top(key, |body: &Rc<Body>| Rc::clone(body))?;
    if body.runtime.borrow().is_none() {
        let made: Box<dyn Any> = Box::new(make(&body.args));
        *body.runtime.borrow_mut() = Some(made);
    }
    let runtime = body.runtime.borrow();
    let runtime = runtime.as_ref().expect("made above");
    let runtime = runtime
        .downcast_ref::<R>()
        .expect("a test body's runtime is asked for as one type");
    Some(read(runtime))
}
