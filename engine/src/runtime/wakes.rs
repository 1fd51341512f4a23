//! Waiting for a `Waker`: the engine's side of futures, which the facade's executors
//! (`future::block_on`, a spawned task's poll loop) are written on.
//!
//! A future is polled by a model thread: a spawned task has a thread of its own (it runs
//! the task's poll loop, so it is preempted at any switch point and a blocking call inside a
//! poll blocks only it, as on a worker of a multi-threaded runtime), and `block_on` polls on
//! the thread that calls it. The engine knows such a thread by its wake token, its
//! `Waker`, and, for a *task* (a thread whose end a handle awaits, [`mark_spawned`]),
//! whether it was asked to stop, whether its handle was dropped and what to tell when it
//! ends; what an executor knows of the futures it polls is the layer above's, kept beside
//! in a per-thread slot ([`Notes`]) that reports read. Between two polls the thread waits
//! for a wake ([`wait`]: a step, and a switch point unless it blocks at once), and a wake
//! ([`wake`]) is a token, as `unpark`'s, so a wake that arrives during a poll is not lost.
//! The wait may also end without a wake (a spurious poll, a decision like a spurious
//! wake-up), so a future that assumes one poll per wake is caught.
//!
//! Synchronization: a wake writes the woken thread's park key (`Key::Park`) and the poll
//! after it reads it back, so for the memory model the wake releases and the next poll
//! acquires, and for partial-order reduction a wake conflicts with that wait. Waking a
//! finished thread, or waking from outside the waker's execution, does nothing.
//!
//! What a thread knows as a poller lives in [`TaskState`], in a table of the execution
//! beside the threads' (most threads never poll a future). The scheduler asks it what a
//! task tells when it ends ([`take_on_finish`]) and whether detached tasks can be stopped
//! when nothing else can run ([`shut_down`]); deadlock reports, in what words a thread
//! waits for a wake ([`waiting_words`]) and what its slot lists ([`notes`]).

use std::sync::Arc;

use super::execution::{Blocked, ExecState, Status, Waits, Wake};
use super::wait_queue::{Awaits, Noted};
use super::{
    Access, Early, Key, Loc, ObjId, OpKind, Tid, events, sched, timers, with_ctx, with_state,
};
use crate::op::{Effect, Operation, PickKind, Role};
use crate::report::TaskInfo;

/// A task's (or `block_on`'s) wait for a wake between two polls of its future: consumes the
/// thread's wake token, as `park` does, and changes nothing else until it is woken.
const TASK_WAIT: OpKind = OpKind::new(
    &Operation::new("task wait")
        .access(Role::Write)
        .effect(Effect::Park)
        .observes_only(),
);

/// What the runtime knows of a thread that polls futures.
#[derive(Default)]
pub(crate) struct TaskState {
    /// It runs a spawned task (rather than `block_on`).
    pub(crate) spawned: bool,
    /// A wake came that no wait consumed yet.
    token: bool,
    /// `abort` was called: the task stops at its next wait between polls.
    aborted: bool,
    /// Its `JoinHandle` was dropped: at the end of the execution it is dropped, not waited
    /// for.
    pub(super) detached: bool,
    /// It waits in its own poll loop, between two polls of the task (not in a `block_on`
    /// called inside a poll): only there can a shutdown drop it.
    between_polls: bool,
    /// The wakers of this thread, shared by every poll (`Arc::strong_count` tells how
    /// many the program keeps).
    waker: Option<Arc<TaskWake>>,
    /// Told when the thread finishes, outside the state's lock (it wakes a `JoinHandle`'s
    /// waker).
    on_finish: Option<Arc<dyn Finish>>,
    /// What the layer above keeps of the thread's futures ([`Notes`]).
    notes: Option<Box<dyn Notes>>,
    /// Panics of its tasks (its own, 0, or local ones) kept for their handles
    /// (`held.rs`).
    pub(super) kept_panics: Vec<super::held::Kept>,
    /// What its future registered to wait for (`wait_queue.rs`) since its last wait between
    /// polls ended.
    awaits: Awaits,
}

/// What the layer that polls futures on a model thread keeps of them, beside the engine's
/// state of the thread and under the same lock ([`Access::notes`](super::Access::notes)):
/// one value per thread that polls, made on first use, dropped with the execution. The
/// engine reads it only for reports; every method has a default that adds nothing.
pub trait Notes: std::any::Any + Send {
    /// The operation the thread's future waits in, when the thread waits for a wake: a
    /// deadlock report adds "; it waits in `{op}`".
    fn waits_in(&self) -> Option<&'static str> {
        None
    }

    /// The futures the thread polls that have not finished, for a deadlock report's line
    /// of the thread.
    fn pending(&self) -> Vec<TaskInfo> {
        Vec::new()
    }

    /// The future whose poll a panic with `message`, which ends the thread, escaped from:
    /// the report names it. Taken: asked once per panic.
    fn escaped(&mut self, message: &str) -> Option<TaskInfo> {
        let _ = message;
        None
    }
}

/// What a spawned task's thread tells when it finishes.
pub trait Finish: Send + Sync {
    /// The thread finished (called on it, outside the state's lock).
    fn finished(&self);
}

impl std::fmt::Debug for TaskState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskState")
            .field("spawned", &self.spawned)
            .field("token", &self.token)
            .field("aborted", &self.aborted)
            .field("detached", &self.detached)
            .finish_non_exhaustive()
    }
}

/// The poller state of thread `tid`, made on first use.
pub(super) fn task_mut(st: &mut ExecState, tid: Tid) -> &mut TaskState {
    if st.tasks.len() <= tid {
        st.tasks.resize_with(tid + 1, || None);
    }
    st.tasks[tid].get_or_insert_with(TaskState::default)
}

/// The notes of thread `tid` as a `T`, made on first use; panics if the layer above keeps
/// another type there (one layer polls futures).
pub(super) fn notes_mut<T: Notes + Default>(st: &mut ExecState, tid: Tid) -> &mut T {
    let notes = task_mut(st, tid)
        .notes
        .get_or_insert_with(|| Box::new(T::default()));
    let notes: &mut dyn std::any::Any = &mut **notes;
    notes
        .downcast_mut()
        .expect("one type of notes per thread that polls futures")
}

/// The notes of thread `tid`, if it has any.
pub(super) fn notes(st: &ExecState, tid: Tid) -> Option<&dyn Notes> {
    task(st, tid).and_then(|t| t.notes.as_deref())
}

/// The future whose poll the panic with `message` escaped on thread `tid`, as its notes
/// say.
pub(super) fn escaped(st: &mut ExecState, tid: Tid, message: &str) -> Option<TaskInfo> {
    st.tasks
        .get_mut(tid)?
        .as_mut()?
        .notes
        .as_deref_mut()?
        .escaped(message)
}

/// The poller state of thread `tid`, if it has one.
pub(super) fn task(st: &ExecState, tid: Tid) -> Option<&TaskState> {
    st.tasks.get(tid).and_then(Option::as_ref)
}

/// Whether thread `tid` runs a spawned task.
pub(crate) fn is_task(st: &ExecState, tid: Tid) -> bool {
    task(st, tid).is_some_and(|t| t.spawned)
}

/// The waker of a thread that polls futures: waking it gives the thread a wake token.
#[derive(Debug)]
pub struct TaskWake {
    exec: u64,
    tid: Tid,
}

impl TaskWake {
    /// The execution of the thread it wakes.
    pub fn exec(&self) -> u64 {
        self.exec
    }

    /// The thread it wakes.
    pub fn tid(&self) -> Tid {
        self.tid
    }
}

impl std::task::Wake for TaskWake {
    fn wake(self: Arc<Self>) {
        wake(self.exec, self.tid);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        wake(self.exec, self.tid);
    }
}

/// Gives thread `tid` of execution `exec` a wake token, waking it if it waits between
/// polls. Not a switch point: what it changes only that thread's wait reads, and the wake
/// is declared to the current event. Does nothing outside that execution or once the
/// thread finished.
fn wake(exec: u64, tid: Tid) {
    super::with_exec(|ctx| {
        if ctx.exec.id != exec {
            return;
        }
        let mut st = ctx.exec.state.lock();
        // Declared whether or not the thread finished: what a wake accesses must not depend
        // on what it does not declare (the thread's end), or the reduction would take the
        // two orders of a wake and that end for one.
        events::imply(&mut st, Key::Park(tid));
        if st.threads[tid].finished() {
            return;
        }
        if ctx.tid != tid {
            // Waking itself (a yield) changes nothing another thread could see; waking
            // another thread releases it if it repeated a spin (see `spins.rs`).
            super::spins::changes(&mut st, ctx.tid, Key::Park(tid));
        }
        task_mut(&mut st, tid).token = true;
        if matches!(st.threads[tid].status, Status::Blocked(b) if b.what == Waits::Wake) {
            sched::wake(&mut st, tid, Wake::Notified);
        }
    });
}

/// The calling thread's own waker handle (its wakes give the thread a wake token).
#[track_caller]
pub fn thread_wake(api: &str) -> Arc<TaskWake> {
    with_ctx(api, |ctx| {
        let mut st = ctx.exec.state.lock();
        let (exec, tid) = (ctx.exec.id, ctx.tid);
        let task = task_mut(&mut st, tid);
        Arc::clone(
            task.waker
                .get_or_insert_with(|| Arc::new(TaskWake { exec, tid })),
        )
    })
}

/// Which of `ready` futures (two or more) the calling thread's `block_on` polls next: a
/// decision, recorded like the choice of a thread.
#[track_caller]
pub fn poll_which(api: &str, ready: usize) -> usize {
    super::atomics::with_memory(api, |st, me| sched::decide(st, me, PickKind::Poll, ready))
}

/// A task polled by thread `owner` (a `spawn_local` task) ended, or was asked to stop:
/// writes the owner's park key, so that a handle that reads it (from any thread) is
/// ordered after, and sees what the task did.
#[track_caller]
pub fn publish(api: &str, owner: Tid) {
    with_state(api, |a| events::imply(a.st, Key::Park(owner)));
}

/// Reads thread `owner`'s park key: see [`publish`]. Returns the step count (for
/// the executor's notes of a poll).
#[track_caller]
pub fn observe(api: &str, owner: Tid) -> u64 {
    with_state(api, |a| {
        events::declare(a.st, Key::Park(owner), crate::op::Role::Read);
        super::spins::observes(a.st, a.me, Key::Park(owner));
        a.st.step
    })
}

/// Whether a panic in a task fails the execution (`Builder::thread_panics_fail`).
#[track_caller]
pub fn panics_fail(api: &str) -> bool {
    with_state(api, |a| a.st.config.thread_panics_fail)
}

/// Before a poll of the calling thread's future: its waker, or `None` if the task was
/// aborted (it must not be polled again). Reads the thread's park key, so that an abort and
/// this check are ordered by the search. `begins` runs under the same lock unless the task
/// was aborted (what the executor notes of a poll's start).
#[track_caller]
pub fn before_poll(api: &str, begins: impl FnOnce(&mut Access<'_>)) -> Option<std::task::Waker> {
    with_ctx(api, |ctx| {
        let (exec, me) = (ctx.exec.id, ctx.tid);
        let mut st = ctx.exec.state.lock();
        events::declare(&mut st, Key::Park(me), crate::op::Role::Read);
        if task_mut(&mut st, me).aborted {
            return None;
        }
        begins(&mut Access { st: &mut st, me });
        let task = task_mut(&mut st, me);
        let wake = task
            .waker
            .get_or_insert_with(|| Arc::new(TaskWake { exec, tid: me }));
        Some(std::task::Waker::from(Arc::clone(wake)))
    })
}

/// Marks thread `tid` (just spawned) as running a spawned task, which tells `on_finish`
/// when it finishes. Returns the execution's id.
#[track_caller]
pub fn mark_spawned(api: &str, tid: Tid, on_finish: Arc<dyn Finish>) -> u64 {
    with_ctx(api, |ctx| {
        let mut st = ctx.exec.state.lock();
        let task = task_mut(&mut st, tid);
        task.spawned = true;
        task.on_finish = Some(on_finish);
        ctx.exec.id
    })
}

/// Asks the task of thread `tid` to stop at its next wait between polls, and wakes it.
/// The caller passed the abort's switch point.
#[track_caller]
pub fn abort(api: &str, tid: Tid) {
    with_state(api, |a| {
        let st = &mut *a.st;
        if st.threads[tid].finished() {
            return;
        }
        task_mut(st, tid).aborted = true;
    });
    super::with_exec(|ctx| wake(ctx.exec.id, tid));
}

/// The `JoinHandle` of the task of thread `tid` of execution `exec` was dropped (nothing
/// outside that execution).
pub fn detach(exec: u64, tid: Tid) {
    super::with_exec(|ctx| {
        if ctx.exec.id != exec {
            return;
        }
        let mut st = ctx.exec.state.lock();
        if tid < st.threads.len() {
            task_mut(&mut st, tid).detached = true;
        }
    });
}

/// What the calling thread tells when it finishes (its task's `on_finish`), taken out.
pub(crate) fn take_on_finish(st: &mut ExecState, tid: Tid) -> Option<Arc<dyn Finish>> {
    st.tasks
        .get_mut(tid)
        .and_then(Option::as_mut)
        .and_then(|task| task.on_finish.take())
}

/// The calling thread's future returned `Pending` at `loc` (its `block_on` or `spawn`):
/// waits for a wake, unless one came during the poll (then the wait is a switch point and
/// the thread goes on), or ends the wait without one (a spurious poll). A wait that finds
/// no wake blocks with no decision before it (see [`blocks_in_place`]). Returns when the
/// future is to be polled again.
/// `task_loop`: the wait is a spawned task's own, between two polls of the task (only
/// there can a shutdown stop it, [`shut_down`]). `place` says where the wait is, if not at
/// `loc` (a spawned task's wait is reported where its poll stopped, not at its spawn); it
/// runs under the lock the wait takes.
///
/// The thread's timers (`timers.rs`) make it a timed wait, with the deadline of the
/// earliest: it ends when the clock reaches it, or at once as a decision while others could
/// still act. A timer already due ends it at once. Afterwards the wakers of the due timers
/// are woken.
#[track_caller]
pub fn wait(loc: Loc, task_loop: bool, place: impl FnOnce(&mut Access<'_>) -> Option<Loc>) {
    let api = "a future's wait for a wake";
    // Where it waits, and, when no wake came, the whole wait up to blocking, under one lock.
    let first = super::atomics::with_memory(api, |st, me| {
        let loc = place(&mut Access { st, me }).unwrap_or(loc);
        if !blocks_in_place(st, me, loc) {
            return Ok(Err(loc));
        }
        look(st, me, task_loop).map(|look| Ok((loc, look)))
    });
    let (loc, (deadline, due)) = first.unwrap_or_else(|loc| {
        super::switch_point(TASK_WAIT, None, loc);
        (
            loc,
            super::atomics::with_memory(api, |st, me| look(st, me, task_loop)),
        )
    });
    let due = due.unwrap_or_else(|| {
        super::block(Blocked {
            what: Waits::Wake,
            obj: None,
            thread: None,
            deadline,
            loc,
        });
        with_state(api, |a| {
            let (st, me) = (&mut *a.st, a.me);
            events::imply(st, Key::Park(me));
            let task = task_mut(st, me);
            task.token = false;
            task.between_polls = false;
            task.awaits.wait_ended();
            timers::take_due(st, me)
        })
    });
    for waker in due {
        waker.wake();
    }
}

/// Whether thread `me`'s wait at `loc` is a step with no decision before it (counted here)
/// rather than a switch point: no wake came and none of its timers is due, so unless a
/// decision ends it early, it blocks.
///
/// Sound: the wait reads only what is the thread's own (its wake token, its timers, the
/// clock), so the one thing others could do before it that it would see is wake it (or move
/// the clock past its deadline). A wait that finds no wake and blocks is woken by that same
/// act afterwards (a wake sets the token and makes it runnable; `time_passes` wakes a thread
/// whose deadline it passes), and goes on exactly as if it had found the wake; the early
/// endings offered here are those a later look would offer. So every run with others acting
/// before the look has a run here with them acting after it, the same for every thread.
/// A wait that finds a wake stays a switch point: it does not block, and its switch point
/// is where others run when a future wakes itself in a loop (`yield_now`). The step still
/// counts towards `max_steps`, so a future that waits and times out for ever is a livelock.
fn blocks_in_place(st: &mut ExecState, me: Tid, loc: Loc) -> bool {
    let woken = task(st, me).is_some_and(|task| task.token);
    let due = timers::earliest(st, me).is_some_and(|d| d <= st.clock);
    if st.config.blocking_wait_switches {
        return false;
    }
    !woken && !due && sched::step_in_place(st, me, TASK_WAIT, loc)
}

/// The look of thread `me`'s wait at its token, timers and the decisions that may end it
/// early: its deadline, and the wakers of its due timers when it goes on without blocking.
fn look(
    st: &mut ExecState,
    me: Tid,
    task_loop: bool,
) -> Result<(Option<std::time::Duration>, Option<Vec<std::task::Waker>>), crate::strategy::Refusal>
{
    events::imply(st, Key::Park(me));
    super::spins::observes(st, me, Key::Park(me));
    let deadline = timers::earliest(st, me);
    let task = task_mut(st, me);
    let now = std::mem::take(&mut task.token) || deadline.is_some_and(|d| d <= st.clock);
    let early = timers::early_deadline(st, me);
    let ends = match now {
        true => Early::No,
        false => super::waits::early_in(st, me, early, true)?,
    };
    if ends == Early::TimedOut {
        super::waits::name_timer(st, me);
    }
    if now || ends != Early::No {
        let task = task_mut(st, me);
        task.between_polls = false;
        task.awaits.wait_ended();
        return Ok((deadline, Some(timers::take_due(st, me))));
    }
    task_mut(st, me).between_polls = task_loop;
    Ok((deadline, None))
}

/// Nothing can run: if every thread left is a detached task (its `JoinHandle` dropped), the
/// program's work is done and the tasks are shut down as a runtime's shutdown drops them:
/// those that wait between polls are woken to drop their future (inside the model, at
/// their next check: its destructors are explored), without a decision, after every event
/// so far (as a timeout fires). Returns whether it woke any. A detached task blocked in the
/// middle of a poll (on a lock, or in a `block_on` it called) is not dropped: the execution
/// is then a deadlock.
pub(crate) fn shut_down(st: &mut ExecState) -> bool {
    let live = |st: &ExecState, t: Tid| !st.threads[t].finished();
    let detached = |st: &ExecState, t: Tid| {
        st.tasks
            .get(t)
            .and_then(Option::as_ref)
            .is_some_and(|task| task.spawned && task.detached)
    };
    let between_polls = |st: &ExecState, t: Tid| {
        st.tasks
            .get(t)
            .and_then(Option::as_ref)
            .is_some_and(|task| task.between_polls)
    };
    let all = 0..st.threads.len();
    if !all.clone().all(|t| !live(st, t) || detached(st, t)) {
        return false;
    }
    let mut any = false;
    for t in all {
        let waits = matches!(st.threads[t].status, Status::Blocked(b) if b.what == Waits::Wake);
        if waits && between_polls(st, t) {
            task_mut(st, t).aborted = true;
            sched::wake(st, t, Wake::TimedOut);
            any = true;
        }
    }
    any
}

/// The deadlock report's words for thread `tid`, which waits for a wake.
pub(crate) fn waiting_words(st: &ExecState, tid: Tid) -> String {
    let alive = st
        .tasks
        .get(tid)
        .and_then(Option::as_ref)
        .and_then(|t| t.waker.as_ref())
        .map_or(0, |w| Arc::strong_count(w) - 1);
    let mut words = match alive {
        0 => "returned Pending and nothing woke it; no Waker of it is alive".to_owned(),
        _ => "returned Pending and nothing woke it".to_owned(),
    };
    words.push_str(&waits_in_words(st, tid));
    words
}

/// "; it waits in `{op}`", the operation thread `tid`'s notes say its future waits in, or
/// nothing.
pub(crate) fn waits_in_words(st: &ExecState, tid: Tid) -> String {
    notes(st, tid)
        .and_then(|n| n.waits_in())
        .map_or_else(String::new, |op| format!("; it waits in `{op}`"))
}

/// Thread `me`'s future registered in a wait queue to wait to do `words` to `obj` (the
/// object of its last operation), until its wait between polls ends; `before`: the same
/// waiter's registration counted earlier, which counts once.
pub(super) fn note_awaits(
    st: &mut ExecState,
    me: Tid,
    obj: Option<ObjId>,
    words: &'static str,
    before: Option<Noted>,
) -> Noted {
    task_mut(st, me).awaits.note(me, obj, words, before)
}

/// A waiter registered as `noted`, waiting to do `words` to `obj`, left its queue without
/// being woken: if it counts still, it counts no more.
pub(super) fn unnote_awaits(
    st: &mut ExecState,
    noted: Noted,
    obj: Option<ObjId>,
    words: &'static str,
) {
    if let Some(task) = st.tasks.get_mut(noted.tid()).and_then(Option::as_mut) {
        task.awaits.unnote(noted, obj, words);
    }
}

/// What thread `tid`'s future registered to wait for since its last wait between polls
/// ended (`wait_queue.rs`), for a deadlock report: the object and the words of each.
pub(super) fn awaits(st: &ExecState, tid: Tid) -> Vec<(Option<ObjId>, &'static str)> {
    st.tasks
        .get(tid)
        .and_then(Option::as_ref)
        .map_or_else(Vec::new, |t| t.awaits.list())
}
