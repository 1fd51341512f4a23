//! Model threads: running thread 0 on the caller, spawning the others on pooled workers,
//! and what happens when a thread's body returns or panics.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::execution::{ExecConfig, ExecState, Execution, FailureDraft, ThreadState};
use super::pool::{self, Job};
use super::switch::Turn;
use super::{CURRENT, Context, DecisionRecord, Loc, Op, Tid, panic, sched, with_ctx};

use crate::report::FailureKind;
use crate::strategy::Strategy;

/// What one execution left behind, for the driver.
pub(crate) struct ExecOutcome {
    pub(crate) failure: Option<FailureDraft>,
    pub(crate) decisions: Vec<DecisionRecord>,
    /// Names of the execution's threads, by id.
    pub(crate) names: Vec<Option<String>>,
    /// Switch points passed.
    pub(crate) steps: u64,
    /// Times a thread was switched away from while it could have continued.
    pub(crate) preemptions: u64,
    /// Times the running thread changed.
    pub(crate) switches: u64,
    /// The strategy, handed back for the next execution.
    pub(crate) strategy: Box<dyn Strategy>,
}

/// Runs `model` once as thread 0 on the calling thread, waits until every thread of the
/// execution has exited. The strategy comes back in the outcome.
pub(crate) fn run_execution(
    strategy: Box<dyn Strategy>,
    config: ExecConfig,
    model: &dyn Fn(),
    loc: Loc,
) -> ExecOutcome {
    assert_not_in_model();
    panic::install_hook();
    let exec = Execution::new(strategy, config, loc);
    let ctx = Context {
        exec: Arc::clone(&exec),
        tid: 0,
    };
    CURRENT.set(&ctx, || {
        run_thread_body(model);
        sched::finish(&ctx);
    });
    exited(&exec);
    wait_all_exited(&exec);
    let mut st = exec.state.lock();
    let mut strat = st.strategy.take().expect("the strategy is returned once");
    if st.failure.is_none() {
        if let Err(refusal) = strat.end_execution() {
            st.fail(|st| super::failure::refusal(st, &refusal));
        }
    }
    outcome(&mut st, strat)
}

/// Waits until every OS thread has left the execution. The last ones are usually finishing
/// on this very core (they passed the baton and are returning to the pool), so yielding to
/// them a few times is cheaper than sleeping on the condition variable.
fn wait_all_exited(exec: &Execution) {
    let all_gone = || (exec.live_os.load(Ordering::Acquire) == 0).then_some(());
    for _ in 0..8 {
        if all_gone().is_some() {
            return;
        }
        std::thread::yield_now();
    }
    if super::switch::spin_until(all_gone).is_none() {
        let mut st = exec.state.lock();
        while all_gone().is_none() {
            exec.all_exited.wait(&mut st);
        }
    }
}

fn outcome(st: &mut ExecState, strategy: Box<dyn Strategy>) -> ExecOutcome {
    ExecOutcome {
        strategy,
        preemptions: st.preemptions,
        switches: st.switches,
        failure: st.failure.take(),
        decisions: std::mem::take(&mut st.decisions),
        names: st.threads.iter().map(|t| t.name.clone()).collect(),
        steps: st.step,
    }
}

/// A model thread that is registered (runnable, with an id) but whose OS thread has not
/// started yet.
pub(crate) struct NewThread {
    exec: Arc<Execution>,
    tid: Tid,
}

/// Registers a new model thread. The caller has passed the spawn's switch point; the thread
/// is runnable at once. Start it with [`spawn_pooled`] or [`ThreadRunner::run`] on an OS thread
/// of the caller's, then give its handle to [`NewThread::started`].
#[track_caller]
pub(crate) fn register_thread(name: Option<String>, loc: Loc) -> NewThread {
    with_ctx("interleave_test::thread::spawn", |ctx| {
        let mut st = ctx.exec.state.lock();
        st.threads.push(ThreadState::new(name, Op::start(loc)));
        ctx.exec.live_os.fetch_add(1, Ordering::Relaxed);
        NewThread {
            exec: Arc::clone(&ctx.exec),
            tid: st.threads.len() - 1,
        }
    })
}

impl NewThread {
    /// The new thread's id.
    pub(crate) fn tid(&self) -> Tid {
        self.tid
    }

    /// Records the OS thread that runs the model thread; must be called before the spawning
    /// thread's next operation.
    pub(crate) fn started(&self, os: std::thread::Thread) {
        self.exec.state.lock().threads[self.tid].os = Some(os);
    }

    /// The part that runs on the new OS thread; `self` stays with the spawner for
    /// [`NewThread::started`].
    pub(crate) fn os_handle(&self) -> ThreadRunner {
        ThreadRunner {
            exec: Arc::clone(&self.exec),
            tid: self.tid,
        }
    }

    /// A handle that reports this thread's OS thread gone, for [`ThreadRunner::run`] callers.
    pub(crate) fn exit_token(&self) -> ExitToken {
        ExitToken(Arc::clone(&self.exec))
    }
}

/// Runs a registered model thread on the OS thread it was sent to.
pub(crate) struct ThreadRunner {
    exec: Arc<Execution>,
    tid: Tid,
}

impl ThreadRunner {
    /// Runs on the new OS thread: waits for the thread's turn, runs `body`, and finishes the
    /// model thread. Call [`ExitToken::exited`] once the OS thread is done with the model.
    pub(crate) fn run(self, body: impl FnOnce()) {
        super::affinity::pin(self.exec.state.lock().config.core);
        let ctx = Context {
            exec: self.exec,
            tid: self.tid,
        };
        CURRENT.set(&ctx, || {
            if ctx.exec.baton.wait(ctx.tid, true) == Turn::Mine {
                body();
                sched::finish(&ctx);
            } else {
                // Torn down before it started: finish first, so that the values the body
                // captured are dropped detached (a drop may reach a switch point).
                sched::finish(&ctx);
                drop(body);
            }
        });
    }
}

/// Reports that an OS thread has left its execution.
pub(crate) struct ExitToken(Arc<Execution>);

impl ExitToken {
    pub(crate) fn exited(self) {
        exited(&self.0);
    }
}

/// Panics if the caller is a model thread: explorations cannot nest. Checked before any
/// driver thread is started, since those are not model threads.
#[track_caller]
pub(crate) fn assert_not_in_model() {
    assert!(
        !super::in_model(),
        "interleave_test::Builder::check (or explore, replay) was called inside a model; \
         nested explorations are not supported: call it from the test itself"
    );
}

/// Registers and starts a model thread on a pooled worker; returns its id.
#[track_caller]
pub(crate) fn spawn_pooled(
    name: Option<String>,
    stack: Option<usize>,
    loc: Loc,
    body: Box<dyn FnOnce() + Send>,
) -> Tid {
    let new = register_thread(name, loc);
    let tid = new.tid();
    let exit = new.exit_token();
    let runner = new.os_handle();
    let core = runner.exec.state.lock().config.core;
    let job = Job {
        core,
        run: Box::new(move || runner.run(body)),
        exited: Box::new(move || exit.exited()),
    };
    new.started(pool::start(stack.unwrap_or(pool::DEFAULT_STACK), job));
    tid
}

/// Called by a thread whose closure panicked inside `thread::scope` before the scope joins
/// its threads. Returns `true` when the scope should join them in the model (the panic is
/// not the execution's failure); otherwise the failure is recorded and the execution ended
/// now, so that the scope's threads unwind instead of waiting forever.
pub(crate) fn scope_panicked(payload: &(dyn Any + Send)) -> bool {
    if panic::is_abort(payload) {
        return false;
    }
    CURRENT.with(|ctx| {
        let fails = ctx.tid == 0 || ctx.exec.state.lock().config.thread_panics_fail;
        if fails {
            record_panic_failure(ctx);
        }
        !fails
    })
}

/// Runs a thread's body. `None`: the body did not finish normally and its result is not for
/// `join` (the execution was torn down, or its panic is the execution's failure).
/// `Some(Err(payload))`: it panicked and `join` should return the payload, as std does.
pub(crate) fn run_thread_body<T>(f: impl FnOnce() -> T) -> Option<std::thread::Result<T>> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(value) => Some(Ok(value)),
        Err(payload) if panic::is_abort(&*payload) => None,
        Err(payload) => thread_panicked(payload).map(Err),
    }
}

/// Decides what a panic escaping a thread body means; returns the payload when `join` is to
/// receive it, `None` when it became the execution's failure.
fn thread_panicked(payload: Box<dyn Any + Send>) -> Option<Box<dyn Any + Send>> {
    let record = panic::take_last();
    CURRENT.with(|ctx| {
        let st = ctx.exec.state.lock();
        if ctx.tid != 0 && !st.config.thread_panics_fail {
            return Some(payload);
        }
        drop(st);
        record_panic_failure_with(ctx, record);
        None
    })
}

fn record_panic_failure(ctx: &Context) {
    record_panic_failure_with(ctx, panic::take_last());
}

fn record_panic_failure_with(ctx: &Context, record: Option<panic::PanicRecord>) {
    let mut st = ctx.exec.state.lock();
    let record = record.unwrap_or_else(|| panic::PanicRecord {
        message: "the thread panicked (no message was recorded)".into(),
        location: None,
        backtrace: backtrace::Backtrace::new_unresolved(),
    });
    st.fail(|st| FailureDraft {
        kind: FailureKind::Panic,
        message: record.message,
        thread: Some(st.thread_info(ctx.tid)),
        location: record.location,
        backtrace: Some(record.backtrace),
        threads: vec![],
    });
    sched::abort_all(ctx, &st);
}

/// Called once per OS thread that leaves the execution.
pub(super) fn exited(exec: &Execution) {
    if exec.live_os.fetch_sub(1, Ordering::AcqRel) == 1 {
        let _st = exec.state.lock();
        exec.all_exited.notify_all();
    }
}
