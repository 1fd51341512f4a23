//! The runtime an `async fn` test body runs in (`#[tokio::test]`, `#[interleave] async
//! fn`): the crate's attribute runs the body with `future::block_on` and names no runtime;
//! this module makes the runtime its arguments ask for the first time the body needs one
//! (`future::test_runtime`), and the body's end drops it, as `#[tokio::test]` drops its
//! runtime after its `block_on`.
//!
//! The body then runs as inside that runtime's `block_on`: it is the calling thread's
//! runtime context when the thread entered none of its own (`runtime::context`), and, for
//! `flavor = "local"`, its local set is the thread's set when it polls no other
//! (`local_set::current_set`), driven from the body's start to its end.

use super::local_runtime::{LocalOptions, LocalRuntime};
use super::runtime::{Builder, Handle, Runtime};
use super::task::LocalSet;
use interleave_test::future::{self, RuntimeArgs};

/// The runtime of a test body.
#[derive(Debug)]
enum BodyRuntime {
    /// Current-thread or multi-thread.
    Plain(Runtime),
    /// `flavor = "local"`.
    Local(LocalRuntime),
}

impl BodyRuntime {
    /// The runtime `args` asks for.
    fn new(args: &RuntimeArgs) -> BodyRuntime {
        let mut builder = match args.multi_thread() {
            true => Builder::new_multi_thread(),
            false => Builder::new_current_thread(),
        };
        if let Some(workers) = args.worker_threads() {
            builder.worker_threads(workers);
        }
        builder.enable_all().start_paused(args.start_paused());
        if args.local() {
            let runtime = builder.build_local(LocalOptions::default());
            let runtime = runtime.expect("the runtime of an async test");
            runtime.local_set().drive_from_start();
            return BodyRuntime::Local(runtime);
        }
        BodyRuntime::Plain(builder.build().expect("the runtime of an async test"))
    }

    fn handle(&self) -> &Handle {
        match self {
            BodyRuntime::Plain(runtime) => runtime.handle(),
            BodyRuntime::Local(runtime) => runtime.handle(),
        }
    }
}

/// The handle of the runtime of the test body the calling model thread runs, if any.
pub(super) fn handle() -> Option<Handle> {
    future::test_runtime(BodyRuntime::new, |runtime| runtime.handle().clone())
}

/// `read` of the local set of the `flavor = "local"` test body the calling model thread
/// runs; `None` if it runs none, or another flavour's.
pub(super) fn local_set<T>(read: impl FnOnce(&LocalSet) -> T) -> Option<T> {
    future::test_runtime(BodyRuntime::new, |runtime| match runtime {
        BodyRuntime::Local(runtime) => Some(read(runtime.local_set())),
        BodyRuntime::Plain(_) => None,
    })
    .flatten()
}
