//! Model threads: one execution's run, registering and starting threads, and what happens
//! when a thread's body returns or panics.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use super::execution::{ExecConfig, ExecState, Execution, FailureDraft, Spare, ThreadState};
use super::host::{self, Hosting};
use super::{Context, DecisionRecord, Loc, Op, Tid, locals, panic, sched, with_ctx};

use crate::hb::Hb;
use crate::strategy::Strategy;

use super::host::Stacks;

/// What a driver keeps from one execution to the next, to save allocations: thread 0's
/// coroutine stack, a buffer for decisions, and its heartbeat for the watchdog.
#[derive(Debug, Default)]
pub struct Reuse<'m> {
    stacks: Stacks<'m>,
    /// The buffers of the last execution, when nothing else held it at its end.
    spare: Spare,
    beat: Option<Arc<super::watchdog::Beat>>,
    hb: Option<Box<Hb>>,
    mem: Option<Box<crate::memory::Memory>>,
}

impl Reuse<'_> {
    /// Places of explicit yields the search so far took as a loop's (`hb/unseen.rs`).
    pub fn loop_yields(&self) -> u64 {
        self.hb.as_ref().map_or(0, |hb| hb.loop_yields())
    }

    /// Takes back the decisions of an outcome the driver is done with.
    pub fn recycle(&mut self, mut decisions: Vec<DecisionRecord>) {
        if decisions.capacity() > self.spare.decisions.capacity() {
            decisions.clear();
            self.spare.decisions = decisions;
        }
    }
}

/// What one execution left behind, for the driver.
#[allow(missing_debug_implementations)] // a record the driver takes apart at once
pub struct ExecOutcome {
    /// Its failure, if it failed.
    pub failure: Option<FailureDraft>,
    /// Its decisions between threads, in order.
    pub decisions: Vec<DecisionRecord>,
    /// Names of the execution's threads, by id (kept only when it failed, for its report, or
    /// when `ExecConfig::keep_names` asks).
    pub names: Vec<Option<String>>,
    /// Labels of the execution's threads, by id (kept as `names` are; empty if none).
    pub(crate) labels: Vec<Option<String>>,
    /// Switch points passed.
    pub steps: u64,
    /// Times a thread was switched away from while it could have continued.
    pub preemptions: u64,
    /// Times the running thread changed.
    pub switches: u64,
    /// Scheduling points at which a thread that repeated a spin was held back.
    pub spin_holds: u64,
    /// Waits that could have ended early but for the limit of early endings per thread.
    pub early_withheld: u64,
    /// The strategy, handed back for the next execution.
    pub strategy: Box<dyn Strategy>,
    /// The execution was untracked and met an operation that needs tracking; it ran on to
    /// its end untracked, and the driver discards it and runs it again, tracked (see
    /// `ExecConfig::untracked_start`). Its failure, if it had one, is dropped: `None`.
    pub start_over: bool,
    /// The execution reached `max_steps` and ended there as a pass
    /// (`ExecConfig::pass_at_max_steps`).
    pub cut: bool,
    /// The execution passed and found a loop's explicit yield: the DFS search starts over
    /// from its first execution, taking the yields there as a loop's from then on
    /// (`hb/unseen.rs`). The driver discards the execution.
    pub relearned: bool,
}

/// Runs `model` once as thread 0 on the substrate `config` names, until every thread has
/// finished or the execution failed and tore down. `origin` says where its schedule goes
/// if the process must abort (see `abort.rs`); `reuse` keeps what the driver reuses from
/// one execution to the next. The strategy comes back in the outcome.
pub fn run_execution<'m>(
    mut strategy: Box<dyn Strategy>,
    origin: Option<super::Origin>,
    config: ExecConfig,
    model: &'m (dyn Fn() + Sync),
    loc: Loc,
    reuse: &mut Reuse<'m>,
) -> ExecOutcome {
    let spare = std::mem::take(&mut reuse.spare);
    let wants_events = strategy.exhaustive().is_some_and(|s| s.wants_events());
    let hb = wants_events.then(|| reuse.hb.take().unwrap_or_default());
    let mem = reuse.mem.take().unwrap_or_default();
    let exec = Execution::new(strategy, config, origin, loc, spare, hb, mem);
    if let Some(limit) = config.watchdog {
        if reuse.beat.as_ref().is_none_or(|b| b.limit() != limit) {
            reuse.beat = Some(super::watchdog::Beat::new(limit));
        }
        reuse.beat.as_ref().expect("set above").running(&exec);
    }
    let stack = exec.state.lock().stack_of(0);
    let main = Context {
        exec: Arc::clone(&exec),
        tid: 0,
    };
    host::drive(main, stack, model, &mut reuse.stacks);
    let mut st = exec.state.lock();
    let mut strat = st.strategy.take().expect("the strategy is returned once");
    if let Some(hb) = st.hb.take() {
        st.relearned = hb.learned_loop() && st.failure.is_none();
        reuse.hb = Some(hb);
    }
    if st.failure.is_none() {
        if let Err(refusal) = strat.end_execution() {
            st.fail(|st| super::failure::refusal(st, &refusal));
        } else if st.cut {
            // Its threads did not finish: what they held is no leak.
        } else if let Some(leak) = super::failure::leak(&st) {
            if st.tracked() {
                st.fail(|_| leak);
            } else {
                // Quiet allocations' counts are not followed: run again tracked to
                // report them.
                st.start_over = true;
            }
        }
    }
    // The memory model's buffers are kept for the next execution, unless a thread left
    // behind still holds the execution (the watchdog's weak reference reads no memory).
    if Arc::strong_count(&exec) == 1 {
        reuse.mem = st.mem.0.take();
    }
    let outcome = outcome(&mut st, strat);
    // So are the tables of threads and tasks and the scheduler's buffers, emptied with the
    // state unlocked.
    if Arc::strong_count(&exec) == 1 {
        let mut spare = st.take_spare();
        drop(st);
        spare.clear();
        reuse.spare = spare;
    }
    outcome
}

impl ExecOutcome {
    /// Decisions between threads (not picks) the execution made: its length as PCT counts
    /// it.
    pub fn thread_choices(&self) -> u64 {
        self.decisions.iter().filter(|d| d.pick.is_none()).count() as u64
    }
}

fn outcome(st: &mut ExecState, strategy: Box<dyn Strategy>) -> ExecOutcome {
    let keep = st.failure.is_some() || st.config.keep_names;
    let names = if keep {
        st.threads
            .iter_mut()
            .map(|t| t.name.take().map(String::from))
            .collect()
    } else {
        Vec::new()
    };
    let labels = if keep {
        let labels = std::mem::take(&mut st.labels);
        labels.into_iter().map(|l| l.map(String::from)).collect()
    } else {
        Vec::new()
    };
    ExecOutcome {
        strategy,
        preemptions: st.preemptions,
        switches: st.switches,
        spin_holds: st.spin_holds,
        early_withheld: st.early_withheld,
        failure: st.failure.take().filter(|_| !st.start_over),
        start_over: st.start_over,
        relearned: st.relearned,
        cut: st.cut,
        decisions: std::mem::take(&mut st.decisions),
        names,
        labels,
        steps: st.step,
    }
}

/// How a new model thread is described by the code that spawns it.
#[derive(Debug)]
pub struct ThreadSpec {
    /// Its name, if the program gave one.
    pub name: Option<String>,
    /// Stack size in bytes (`None`: the execution's default).
    pub stack: Option<usize>,
    /// Where it was spawned.
    pub loc: Loc,
    /// Whether it runs in a `thread::scope` (it then runs on an OS thread of its own).
    pub scoped: bool,
}

/// Registers a new model thread, runnable at once; the caller has passed the spawn's switch
/// point. Returns the execution, the thread's id, its hosting and its stack size in bytes.
#[track_caller]
pub fn register_thread(spec: &ThreadSpec) -> (Arc<Execution>, Tid, Hosting, usize) {
    with_ctx("interleave_test::thread::spawn", |ctx| {
        let mut st = ctx.exec.state.lock();
        if st.config.ambient {
            super::ambient::refuse_thread(ctx, st, spec.loc);
        }
        let hosting = match spec.scoped {
            true => Hosting::OsThread,
            false => Hosting::default_for(st.config.substrate),
        };
        let stack = spec.stack.unwrap_or(0);
        let mut thread = ThreadState::new(spec.name.clone(), Op::start(spec.loc), hosting, stack);
        thread.scoped = spec.scoped;
        st.threads.push(thread);
        let tid = st.threads.len() - 1;
        if let Some(hb) = st.hb.as_deref_mut() {
            hb.spawned(tid);
        }
        if st.tracked() {
            st.mem.spawned(ctx.tid, tid);
        }
        (Arc::clone(&ctx.exec), tid, hosting, st.stack_of(tid))
    })
}

/// Registers and starts a (non-scoped) model thread running `body`; returns its id.
#[track_caller]
pub fn spawn(spec: &ThreadSpec, body: host::Body) -> Tid {
    let (exec, tid, hosting, stack) = register_thread(spec);
    host::spawn(Context { exec, tid }, hosting, stack, body);
    tid
}

/// The engine, as the substrates call it (see [`host::Guest`]).
pub(super) struct Engine;

/// The one [`Engine`].
pub(super) static ENGINE: Engine = Engine;

impl host::Guest for Engine {
    fn run(&self, ctx: &Context, body: Box<dyn FnOnce() + '_>) {
        thread_main(ctx, body);
    }

    fn run_main(&self, ctx: &Context, model: &(dyn Fn() + Sync)) {
        // The result of thread 0 is not for anyone to join.
        thread_main(ctx, || drop(run_thread_body(model)));
    }

    fn finish(&self, ctx: &Context) {
        sched::finish(ctx);
    }

    fn must_unwind(&self, ctx: &Context) -> bool {
        ctx.exec.state.lock().threads[ctx.tid].life.must_unwind()
    }

    fn finished(&self, ctx: &Context) -> bool {
        ctx.exec.state.lock().threads[ctx.tid].finished()
    }

    fn name(&self, ctx: &Context) -> Option<String> {
        ctx.exec.state.lock().threads[ctx.tid]
            .name
            .as_deref()
            .map(String::from)
    }

    fn waits_at(&self, ctx: &Context) -> String {
        ctx.exec.state.lock().threads[ctx.tid]
            .pending
            .loc
            .to_string()
    }

    fn escaped(&self, ctx: &Context, overflow: bool, payload: &(dyn Any + Send)) -> host::Turn {
        let tid = ctx.tid;
        let mut st = ctx.exec.state.lock();
        let bytes = st.stack_of(tid);
        st.fail(|st| match overflow {
            true => super::failure::stack_overflow(st, tid, bytes),
            false => super::failure::internal(st, tid, payload),
        });
        st.threads[tid].life.leave_behind();
        let to = super::teardown::next(&mut st);
        sched::turn(&mut st, to)
    }

    fn left_behind(&self, count: usize) {
        super::teardown::count_left_behind(count);
    }

    fn forget(&self, ctx: &Context) {
        locals::forget(ctx.exec.id, ctx.tid);
    }

    fn drop_payload(&self, payload: Box<dyn Any + Send>) {
        panic::drop_payload(payload);
    }
}

/// Starts an OS thread in `scope` for the registered scoped model thread `tid`, running `f`.
/// Its result is `None` when `f` did not return normally and the result is not for `join`
/// (see [`run_thread_body`]).
pub fn spawn_scoped<'scope, T: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    exec: &Arc<Execution>,
    tid: Tid,
    f: impl FnOnce() -> T + Send + 'scope,
) -> std::thread::ScopedJoinHandle<'scope, Option<std::thread::Result<T>>> {
    let stack = exec.state.lock().stack_of(tid);
    let ctx = Context {
        exec: Arc::clone(exec),
        tid,
    };
    host::spawn_scoped(scope, ctx, stack, move || run_thread_body(f))
}

/// Runs model thread `ctx.tid` once it first has control: its body, unless teardown reached
/// it first (then the body is dropped unrun), then the destruction of its thread-locals. The
/// host then finishes the thread.
fn thread_main(ctx: &Context, body: impl FnOnce()) {
    if sched::begin(ctx) {
        body();
    } else {
        drop_quietly(body);
    }
    sched::exiting(ctx);
    locals::destroy(ctx);
}

/// Drops `value`, swallowing any panic of its destructor (and of that panic's payload):
/// used for what teardown drops that the model never reached.
pub(crate) fn drop_quietly<T>(value: T) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| drop(value))) {
        panic::drop_payload(payload);
    }
}

/// Panics if the caller is a model thread: explorations cannot nest. Checked before any
/// driver thread is started, since those are not model threads.
#[track_caller]
pub fn assert_not_in_model() {
    assert!(
        !super::in_model_thread(),
        "interleave_test::Builder::check (or explore, replay) was called inside a model; \
         nested explorations are not supported: call it from the test itself"
    );
}

/// Called by a thread whose closure panicked inside `thread::scope`, before the scope joins
/// its threads: if the panic is the execution's failure (it would be once it left the
/// thread), it is recorded now and the execution tears down, so that the scope's threads are
/// unwound rather than waited for.
pub fn scope_panicked(payload: &(dyn Any + Send)) {
    if panic::is_abort(payload) {
        return;
    }
    with_ctx("interleave_test::thread::scope", |ctx| {
        let fails = ctx.tid == 0 || ctx.exec.state.lock().config.thread_panics_fail;
        if fails || reentered(payload).is_some() {
            record_failure_of(ctx, payload);
        }
    });
}

/// Runs `f` (the joins at the end of a `thread::scope`) so that teardown does not unwind the
/// calling thread out of it: the thread waits there for its scoped threads, which teardown
/// unwinds instead.
pub fn draining<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(Context);
    impl Drop for Reset {
        fn drop(&mut self) {
            self.0.exec.state.lock().threads[self.0.tid]
                .life
                .drain(false);
        }
    }
    let ctx = with_ctx("interleave_test::thread::scope", Context::clone);
    ctx.exec.state.lock().threads[ctx.tid].life.drain(true);
    let _reset = Reset(ctx);
    f()
}

/// Runs a thread's body. `None`: the body did not finish normally and its result is not for
/// `join` (the execution was torn down, or its panic is the execution's failure).
/// `Some(Err(payload))`: it panicked and `join` should return the payload, as std does.
pub fn run_thread_body<T>(f: impl FnOnce() -> T) -> Option<std::thread::Result<T>> {
    let result = catch_unwind(AssertUnwindSafe(f));
    let outcome = match result {
        Ok(value) => Some(Ok(value)),
        Err(payload) if panic::is_abort(&*payload) => {
            panic::drop_payload(payload);
            None
        }
        Err(payload) => thread_panicked(payload).map(Err),
    };
    with_ctx("a model thread's body", |ctx| {
        ctx.exec.state.lock().threads[ctx.tid].life.body_ended();
    });
    outcome
}

/// Decides what a panic escaping a thread body means; returns the payload when `join` is to
/// receive it, `None` when it became the execution's failure.
/// A spawned task's panic goes to its handle while one can receive it (`held.rs`).
fn thread_panicked(payload: Box<dyn Any + Send>) -> Option<Box<dyn Any + Send>> {
    with_ctx("a model thread's body", |ctx| {
        let ours = ctx.tid != 0 && reentered(&*payload).is_none();
        let (fails, handle_waits) = {
            let st = ctx.exec.state.lock();
            let waits = super::held::handle_waits(&st, ctx.tid);
            (st.config.thread_panics_fail, waits)
        };
        if ours && !fails {
            panic::take_last(&*payload);
            return Some(payload);
        }
        if ours && handle_waits {
            let draft = panic_failure(ctx, panic::take_last(&*payload));
            let mut st = ctx.exec.state.lock();
            super::held::keep(&mut st, ctx.tid, 0, draft);
            return Some(payload);
        }
        record_failure_of(ctx, &*payload);
        panic::drop_payload(payload);
        None
    })
}

/// Where the runtime took its own lock again, if `payload` is the panic that stopped it
/// (see `state_lock.rs`).
fn reentered(payload: &(dyn Any + Send)) -> Option<&'static std::panic::Location<'static>> {
    payload
        .downcast_ref::<super::state_lock::Reentered>()
        .map(|r| r.at)
}

/// Records the panic whose `payload` ended thread `ctx`'s body (or a destructor it ran) as
/// the execution's failure: a `Misuse` if it was the runtime taking its own lock again.
fn record_failure_of(ctx: &Context, payload: &(dyn Any + Send)) {
    let record = panic::take_last(payload);
    match reentered(payload) {
        Some(at) => {
            let mut st = ctx.exec.state.lock();
            st.fail(|st| super::failure::reentered(st, ctx.tid, at));
        }
        None => record_panic_failure(ctx, record),
    }
}

fn record_panic_failure(ctx: &Context, record: panic::PanicRecord) {
    let draft = panic_failure(ctx, record);
    ctx.exec.state.lock().fail(|_| draft);
}

/// The failure of thread `ctx`'s panic `record` (in the local task whose panic escaped to
/// the thread, if any).
fn panic_failure(ctx: &Context, record: panic::PanicRecord) -> FailureDraft {
    let mut st = ctx.exec.state.lock();
    let task = super::wakes::escaped(&mut st, ctx.tid, &record.message);
    record.failure(st.thread_info(ctx.tid).with_local_task(task))
}

/// Drops a value the exiting thread `ctx` owned (a thread-local): a panic of its destructor
/// is the thread's failure, as a panic of its body would be.
pub(crate) fn drop_in_thread<T>(ctx: &Context, value: T) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| drop(value))) {
        if !panic::is_abort(&*payload) {
            record_failure_of(ctx, &*payload);
        }
        panic::drop_payload(payload);
    }
}
