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
use std::sync::Arc;

use super::super::Context;
use super::super::execution::Execution;
use super::{CURRENT, Stacks, Turn, record_os_thread, run_os_thread, take_next};
use crate::op::Tid;

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
            ctx.exec.host.guest.finish(&ctx);
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

/// Runs model thread `tid` of `exec` on the calling OS thread, which was just created for
/// it: waits for its turn, runs it (`run`, which calls [`Guest::run`](super::Guest::run)
/// or `run_main`), and leaves the finishing to [`ExitGuard`].
fn entry(exec: Arc<Execution>, tid: Tid, run: impl FnOnce(&Context)) {
    let ctx = Context { exec, tid };
    // First, so that std destroys it after every thread-local the model creates.
    EXIT.with(|guard| *guard.0.borrow_mut() = Some(ctx.clone()));
    super::pin(ctx.exec.state.lock().config.core);
    CURRENT.set(&ctx, || {
        ctx.exec.host.baton.wait(tid, true);
        run(&ctx);
    });
}

/// Starts an OS thread in `scope` for the registered scoped model thread `tid`, running `f`
/// (its body as the engine made it). Its result is what `f` returned, `None` if `f` never
/// ran or did not return.
pub(crate) fn spawn_scoped<'scope, T: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    exec: &Arc<Execution>,
    tid: Tid,
    f: impl FnOnce() -> Option<T> + Send + 'scope,
) -> std::thread::ScopedJoinHandle<'scope, Option<T>> {
    let stack = exec.state.lock().stack_of(tid);
    let runner = Arc::clone(exec);
    let handle = std::thread::Builder::new()
        .name(os_name(exec, tid))
        .stack_size(stack)
        .spawn_scoped(scope, move || {
            let mut out = None;
            entry(runner, tid, |ctx| {
                ctx.exec.host.guest.run(ctx, Box::new(|| out = f()));
            });
            out
        })
        .unwrap_or_else(|e| panic!("interleave-test could not create an OS thread: {e}"));
    record_os_thread(exec, tid, handle.thread().clone());
    handle
}

/// The name of the OS thread of model thread `tid`: a stack overflow message names it.
fn os_name(exec: &Execution, tid: Tid) -> String {
    let st = exec.state.lock();
    match &st.threads[tid].name {
        Some(name) => format!("model thread {name:?} (#{tid}); stack_size sets its stack"),
        None => format!("model thread #{tid}; stack_size sets its stack"),
    }
}

/// Starts a detached OS thread for the spawned model thread `tid`.
pub(super) fn spawn(exec: &Arc<Execution>, tid: Tid, stack: usize, body: super::Body) {
    let runner = Arc::clone(exec);
    let handle = std::thread::Builder::new()
        .name(os_name(exec, tid))
        .stack_size(stack)
        .spawn(move || entry(runner, tid, |ctx| ctx.exec.host.guest.run(ctx, body)))
        .unwrap_or_else(|e| panic!("interleave-test could not create an OS thread: {e}"));
    record_os_thread(exec, tid, handle.thread().clone());
    exec.host.joins.lock().push((tid, handle));
}

/// Runs the execution with every model thread on an OS thread of its own, until the
/// scheduler says it is over; then joins the OS threads that finished.
pub(super) fn drive(exec: &Arc<Execution>, model: &(dyn Fn() + Sync), _stacks: &mut Stacks<'_>) {
    let bytes = exec.state.lock().stack_of(0);
    std::thread::scope(|s| {
        let runner = Arc::clone(exec);
        let main = std::thread::Builder::new()
            .name(os_name(exec, 0))
            .stack_size(bytes)
            .spawn_scoped(s, move || {
                entry(runner, 0, |ctx| ctx.exec.host.guest.run_main(ctx, model));
            })
            .unwrap_or_else(|e| panic!("interleave-test could not create an OS thread: {e}"));
        record_os_thread(exec, 0, main.thread().clone());
        while let Turn::Run { thread, .. } = take_next(exec) {
            run_os_thread(exec, thread);
        }
        if !exec.state.lock().threads[0].finished() {
            stuck_for_good(exec);
        }
        // Explicitly, so that its OS thread is gone when the execution ends (the scope's own
        // wait does not wait for that).
        let _ = main.join();
    });
    join_finished(exec);
}

/// Joins the OS threads of the spawned model threads that finished; the others were left
/// behind by teardown and stay parked.
fn join_finished(exec: &Execution) {
    let joins = std::mem::take(&mut *exec.host.joins.lock());
    let mut left = 0;
    for (tid, handle) in joins {
        if exec.state.lock().threads[tid].finished() {
            // It only has to return from its last hand-off.
            let _ = handle.join();
        } else {
            left += 1;
        }
    }
    exec.host.guest.left_behind(left);
}

/// Thread 0 could not be finished: teardown found it blocked for good in a destructor, or
/// it kept catching teardown's unwinding. Its OS thread borrows the model, so the call that
/// runs the exploration cannot return; say so instead of hanging without a word.
fn stuck_for_good(exec: &Execution) -> ! {
    let st = exec.state.lock();
    let thread = &st.threads[0];
    let message = format!(
        "interleave-test: the model closure's thread (#0) cannot be stopped after the \
         execution failed: it is blocked for good at {} in a destructor, or it keeps catching \
         the unwinding that ends the execution. The OS-thread substrate cannot leave it \
         behind, because the exploration's call borrows from it; the process exits.\n\
         Use the coroutine substrate (the default), or make that destructor not wait.\n",
        thread.pending.loc
    );
    drop(st);
    use std::io::Write;
    let _ = std::io::stderr().write_all(message.as_bytes());
    std::process::exit(101)
}
