//! A task's panic waits for its `JoinHandle`.
//!
//! Tokio hands a task's panic to the task's handle: a program that awaits the handle and
//! finds `JoinError::is_panic()` (or a `JoinSet` that returns it) did nothing wrong. So,
//! with `thread_panics_fail` on, the panic of a task whose handle is still held does not fail
//! the execution at once: it is kept, already made into the failure it would be (message,
//! place, backtrace, the thread and task that panicked), and the handle returns the payload
//! in a `JoinError`, which carries the kept panic until the program reads it (`is_panic`,
//! `is_cancelled`, `into_panic`, `try_into_panic`: [`received`]). It fails the execution
//! when nobody can read it any more ([`dropped`]): the handle dropped before it returned
//! the panic, the error dropped unread (`let _ = handle.await`, an `unwrap`), or the
//! execution ending (every thread finished, or none can run) with it kept ([`first`]); a
//! task whose handle was dropped before it panicked fails it at once, as before. The report
//! is the panic's; only its schedule goes on to where the panic was found unread, which a
//! replay follows as well.
//!
//! A kept panic is keyed by the task's id: its thread and its number among that thread's
//! local tasks (0: the thread's own spawned task), as `future::Id` is.

use super::execution::{ExecState, FailureDraft};
use super::wakes::{task, task_mut};
use super::{Tid, host};

/// A panic kept for a handle: the step at which it happened, the task's local number, and
/// the failure it becomes unless received.
pub(crate) type Kept = (u64, usize, FailureDraft);

/// Whether a panic of thread `tid`'s spawned task can wait for its handle: task panics fail
/// the execution, the task's handle is held, and the execution runs (not torn down).
pub(super) fn handle_waits(st: &ExecState, tid: Tid) -> bool {
    st.config.thread_panics_fail
        && st.phase == super::execution::Phase::Running
        && task(st, tid).is_some_and(|t| t.spawned && !t.detached)
}

/// The panic `payload` escaped a poll of local task `local` of the calling thread (reports
/// name it `task`, the executor's record of it), whose handle is held: it is kept for the
/// handle as the failure it would be, in that task. Nothing while the execution tears down.
#[track_caller]
pub fn keep_panic(
    api: &str,
    local: usize,
    payload: &(dyn std::any::Any + Send),
    task: Option<crate::report::TaskInfo>,
) {
    let record = super::panic::take_last(payload);
    super::with_state(api, |a| {
        let (st, me) = (&mut *a.st, a.me);
        if st.phase != super::execution::Phase::Running {
            return;
        }
        let draft = record.failure(st.thread_info(me).with_local_task(task));
        keep(st, me, local, draft);
    });
}

/// Keeps `draft`, the failure of task `local` of thread `tid`, for its handle.
pub(super) fn keep(st: &mut ExecState, tid: Tid, local: usize, draft: FailureDraft) {
    let step = st.step;
    task_mut(st, tid).kept_panics.push((step, local, draft));
}

/// Takes the panic kept for task `local` of thread `tid` of execution `exec`, if the
/// calling code runs on a model thread of that execution and one is kept. Only model
/// threads: panics are kept only there, and a handle or an error dropped elsewhere (outside
/// any model, in a thread-local's destructor) must not make an ambient execution.
fn take(exec: u64, tid: Tid, local: usize) -> Option<FailureDraft> {
    host::with_current(|ctx| {
        if ctx.exec.id != exec {
            return None;
        }
        let mut st = ctx.exec.state.lock();
        if tid >= st.threads.len() {
            return None;
        }
        let kept = &mut task_mut(&mut st, tid).kept_panics;
        let at = kept.iter().position(|k| k.1 == local)?;
        Some(kept.swap_remove(at).2)
    })
    .flatten()
}

/// The program read the panic of task `local` of thread `tid` in execution `exec` (from
/// its `JoinError`): it was expected, and fails nothing.
pub fn received(exec: u64, tid: Tid, local: usize) {
    take(exec, tid, local);
}

/// Nobody can read the panic of task `local` of thread `tid` in execution `exec` any more
/// (its handle or its unread `JoinError` was dropped): a panic kept for it fails the
/// execution (the calling thread stops at its next switch point).
pub fn dropped(exec: u64, tid: Tid, local: usize) {
    if let Some(draft) = take(exec, tid, local) {
        host::with_current(|ctx| ctx.exec.state.lock().fail(|_| draft));
    }
}

/// The earliest panic still kept, taken out: the execution ends with it unreceived.
pub(super) fn first(st: &mut ExecState) -> Option<FailureDraft> {
    let (tid, at) = (0..st.threads.len())
        .filter_map(|t| task(st, t).map(|task| (t, &task.kept_panics)))
        .flat_map(|(t, kept)| kept.iter().enumerate().map(move |(i, k)| (k.0, t, i)))
        .min()
        .map(|(_, t, i)| (t, i))?;
    Some(task_mut(st, tid).kept_panics.swap_remove(at).2)
}
