//! Model threads on OS threads of their own, serialized by the baton and pinned to the
//! driver's core.
//!
//! Every model thread gets a fresh OS thread, so that std's own thread-locals are per model
//! thread and destroyed when it exits, as on real threads. The model thread is finished
//! (its joiners may go on) only after those destructors ran: [`ExitGuard`] is the first
//! thread-local each such OS thread creates, so std destroys it last, and its destructor is
//! what finishes the model thread. Until then [`exiting_context`] keeps the model reachable
//! for the destructors before it.
//!
//! Thread 0 runs on a scoped OS thread of the driver (it borrows the model); threads
//! spawned by the model run on detached OS threads that the driver joins once they
//! finished; only those teardown left behind outlive their exploration, parked for good.

use std::cell::RefCell;

use super::super::Context;
use super::{Body, CURRENT, Turn, record_os_thread, run_os_thread, take_next};

std::thread_local! {
    /// The model thread this OS thread runs, from its start until its thread-locals are
    /// destroyed.
    static EXIT: ExitGuard = const { ExitGuard(RefCell::new(None)) };
}

/// Finishes the model thread of its OS thread when std destroys it, after every other
/// thread-local of that thread (see the module's documentation).
#[derive(Debug)]
pub(crate) struct ExitGuard(RefCell<Option<Context>>);

impl Drop for ExitGuard {
    fn drop(&mut self) {
        if let Some(ctx) = self.0.borrow_mut().take() {
            // Current while it finishes: what the finish runs (a task's `JoinHandle` waker)
            // acts for this thread. `CURRENT` has no destructor, so it is still there.
            CURRENT.set(&ctx, || ctx.host().guest.finish(&ctx));
        }
    }
}

/// The model thread of the calling OS thread while std destroys its thread-locals (the
/// thread body is over, so [`CURRENT`] is no longer set).
pub(crate) fn exiting_context() -> Option<Context> {
    EXIT.try_with(|guard| guard.0.borrow().clone())
        .ok()
        .flatten()
}

/// Runs model thread `ctx.tid` on the calling OS thread, which was just created for it:
/// waits for its turn, runs it (`run`, which calls [`Guest::run`](super::Guest::run) or
/// `run_main`), and leaves the finishing to [`ExitGuard`].
fn entry(ctx: Context, run: impl FnOnce(&Context)) {
    // First, so that std destroys it after every thread-local the model creates.
    EXIT.with(|guard| *guard.0.borrow_mut() = Some(ctx.clone()));
    super::pin(ctx.host().core);
    CURRENT.set(&ctx, || {
        ctx.host().baton.wait(ctx.tid, true);
        run(&ctx);
    });
}

/// Starts an OS thread in `scope` for the registered scoped model thread `ctx.tid` (with
/// `stack` bytes of stack), running `f` (its body as the engine made it). Its
/// result is what `f` returned, `None` if `f` never ran or did not return.
pub(crate) fn spawn_scoped<'scope, T: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    ctx: Context,
    stack: usize,
    f: impl FnOnce() -> Option<T> + Send + 'scope,
) -> std::thread::ScopedJoinHandle<'scope, Option<T>> {
    let tid = ctx.tid;
    let runner = ctx.clone();
    let handle = std::thread::Builder::new()
        .name(os_name(&ctx))
        .stack_size(stack)
        .spawn_scoped(scope, move || {
            let mut out = None;
            entry(runner, |ctx| {
                ctx.host().guest.run(ctx, Box::new(|| out = f()));
            });
            out
        })
        .unwrap_or_else(|e| panic!("interleave-test could not create an OS thread: {e}"));
    record_os_thread(ctx.host(), tid, handle.thread().clone());
    handle
}

/// The name of the OS thread of model thread `ctx.tid`: a stack overflow message names it.
fn os_name(ctx: &Context) -> String {
    let tid = ctx.tid;
    match ctx.host().guest.name(ctx) {
        Some(name) => format!("model thread {name:?} (#{tid}); stack_size sets its stack"),
        None => format!("model thread #{tid}; stack_size sets its stack"),
    }
}

/// Starts a detached OS thread for the spawned model thread `ctx.tid`.
pub(crate) fn spawn(ctx: Context, stack: usize, body: Body) {
    let runner = ctx.clone();
    let handle = std::thread::Builder::new()
        .name(os_name(&ctx))
        .stack_size(stack)
        .spawn(move || entry(runner, |ctx| ctx.host().guest.run(ctx, body)))
        .unwrap_or_else(|e| panic!("interleave-test could not create an OS thread: {e}"));
    record_os_thread(ctx.host(), ctx.tid, handle.thread().clone());
    let host = Context::clone(&ctx);
    host.host().joins.lock().push((ctx, handle));
}

/// Runs the execution with every model thread on an OS thread of its own, thread `main`
/// (with `stack` bytes of stack) running `model`, until the scheduler says
/// it is over; then joins the OS threads that finished.
pub(super) fn drive(main: Context, stack: usize, model: &(dyn Fn() + Sync)) {
    let host = main.host();
    std::thread::scope(|s| {
        let runner = main.clone();
        let thread = std::thread::Builder::new()
            .name(os_name(&main))
            .stack_size(stack)
            .spawn_scoped(s, move || {
                entry(runner, |ctx| ctx.host().guest.run_main(ctx, model));
            })
            .unwrap_or_else(|e| panic!("interleave-test could not create an OS thread: {e}"));
        record_os_thread(host, 0, thread.thread().clone());
        while let Turn::Run { thread, .. } = take_next(host) {
            run_os_thread(host, thread);
        }
        if !host.guest.finished(&main) {
            stuck_for_good(&main);
        }
        // Explicitly, so that its OS thread is gone when the execution ends (the scope's own
        // wait does not wait for that).
        let _ = thread.join();
    });
    join_finished(&main);
}

/// Joins the OS threads of the spawned model threads that finished; the others were left
/// behind by teardown and stay parked.
fn join_finished(main: &Context) {
    let host = main.host();
    let joins = std::mem::take(&mut *host.joins.lock());
    let mut left = 0;
    for (ctx, handle) in joins {
        if host.guest.finished(&ctx) {
            // It only has to return from its last hand-off.
            let _ = handle.join();
        } else {
            left += 1;
        }
    }
    host.guest.left_behind(left);
}

/// Thread 0 could not be finished: teardown found it blocked for good in a destructor, or
/// it kept catching teardown's unwinding. Its OS thread borrows the model, so the call that
/// runs the exploration cannot return; say so instead of hanging without a word.
fn stuck_for_good(main: &Context) -> ! {
    let message = format!(
        "interleave-test: the model closure's thread (#0) cannot be stopped after the \
         execution failed: it is blocked for good at {} in a destructor, or it keeps catching \
         the unwinding that ends the execution. The OS-thread substrate cannot leave it \
         behind, because the exploration's call borrows from it; the process exits.\n\
         Use the coroutine substrate (the default), or make that destructor not wait.\n",
        main.host().guest.waits_at(main)
    );
    use std::io::Write;
    let _ = std::io::stderr().write_all(message.as_bytes());
    std::process::exit(101)
}
