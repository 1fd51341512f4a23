//! The futures a thread's `block_on` executor polls (its own future, and the tasks of
//! `spawn_local` or of a current-thread Tokio runtime), as reports name them: a panic in
//! one is reported in that task, and a deadlock report lists each one still pending with
//! where it waits. Where a future waits ([`waits_at`]) also places a spawned task's wait
//! between polls (`tasks::wait`).
//!
//! The executor tells the runtime when a future joins, after each of its polls, and when
//! it leaves: one more lock of the state per poll (measured on
//! `compare/benches/tokio.rs`'s models: within the noise, 2% at most).

use super::execution::ExecState;
use super::tasks::task_mut;
use super::{Loc, Tid, with_state};
use crate::report::{SourceLocation, TaskInfo};

/// What a thread's executors hold, for reports.
#[derive(Debug, Default)]
pub(crate) struct LocalTasks {
    /// By key: a record's key is its index plus one (keys are unique on the thread).
    records: Vec<Option<Record>>,
    /// Numbers of spawned tasks (a `block_on`'s own future is 0).
    spawned: u32,
    /// The last task whose panic escaped its poll, with the panic's message.
    escaped: Option<(TaskInfo, String)>,
    /// The last `.await` of a `JoinHandle` that returned `Pending`, with the step count
    /// then: where the future that awaited it waits, if no operation came after.
    awaited: Option<(Loc, u64)>,
}

#[derive(Debug)]
struct Record {
    number: u32,
    name: Option<String>,
    spawned_at: Loc,
    /// The last operation of its last poll that returned `Pending`, and its name.
    waits_at: Option<(Loc, &'static str)>,
}

impl Record {
    fn info(&self) -> TaskInfo {
        TaskInfo::new(
            self.number,
            self.name.clone(),
            self.spawned_at.into(),
            self.waits_at.map(|(at, op)| (SourceLocation::from(at), op)),
        )
    }
}

impl LocalTasks {
    fn get(&mut self, key: u32) -> Option<&mut Record> {
        self.records.get_mut(key as usize - 1)?.as_mut()
    }

    fn remove(&mut self, key: u32) -> Option<Record> {
        self.records.get_mut(key as usize - 1)?.take()
    }
}

/// A future joins the calling thread's executor: its own future (`main`, at the
/// `block_on`'s `loc`) or a task spawned at `loc`. Returns its key.
#[track_caller]
pub fn joined(api: &str, name: Option<String>, loc: Loc, main: bool) -> u32 {
    with_state(api, |a| {
        let locals = &mut task_mut(a.st, a.me).locals;
        let number = if main {
            0
        } else {
            locals.spawned += 1;
            locals.spawned
        };
        locals.records.push(Some(Record {
            number,
            name,
            spawned_at: loc,
            waits_at: None,
        }));
        u32::try_from(locals.records.len()).expect("fewer than 2^32 futures on a thread")
    })
}

/// Future `key` was polled, from step `began` on: if it returned `Pending`, it waits at the
/// last operation of the model or `.await` of a `JoinHandle` in that poll (`waits_at`);
/// if it finished, it leaves.
#[track_caller]
pub fn polled(api: &str, key: u32, began: u64, pending: bool) {
    with_state(api, |a| {
        let (st, me) = (&mut *a.st, a.me);
        let last = waits_at(st, me, began);
        let locals = &mut task_mut(st, me).locals;
        if !pending {
            locals.remove(key);
        } else if let Some(r) = locals.get(key) {
            r.waits_at = last;
        }
    });
}

/// Where thread `me`'s future, polled from step `began` on, waits, and in what: at the
/// `.await` of a `JoinHandle` if no operation came after it in the poll, else at the last
/// operation of the poll; `None` if the poll reached neither.
pub(crate) fn waits_at(st: &mut ExecState, me: Tid, began: u64) -> Option<(Loc, &'static str)> {
    let step = st.step;
    let pending = &st.threads[me].pending;
    let last = (step > began).then(|| (pending.loc, pending.name()));
    match task_mut(st, me).locals.awaited.take() {
        Some((loc, at)) if at >= began && at == step => Some((loc, "JoinHandle await")),
        _ => last,
    }
}

/// The calling thread's future awaits a `JoinHandle` at `loc`, a place in the program (the
/// caller leaves out its own polls: an executor's, a `JoinSet`'s).
pub(crate) fn awaits(st: &mut ExecState, me: Tid, loc: Loc) {
    let step = st.step;
    task_mut(st, me).locals.awaited = Some((loc, step));
}

/// Future `key` leaves its executor without finishing (dropped or aborted).
#[track_caller]
pub fn left(api: &str, key: u32) {
    with_state(api, |a| {
        task_mut(a.st, a.me).locals.remove(key);
    });
}

/// The panic with `message` escaped a poll of future `key`, which leaves: if it ends the
/// thread, the report names the task.
#[track_caller]
pub fn panicked(api: &str, key: u32, message: String) {
    with_state(api, |a| {
        let locals = &mut task_mut(a.st, a.me).locals;
        if let Some(r) = locals.remove(key) {
            locals.escaped = Some((r.info(), message));
        }
    });
}

/// The panic `payload` escaped a poll of future `key`, local task `local` of the calling
/// thread, whose handle is held: it leaves, and its panic is kept for the handle as the
/// failure it would be, in that task (`task_panics.rs`). Nothing while the execution tears
/// down.
#[track_caller]
pub fn keep_panic(api: &str, key: u32, local: usize, payload: &(dyn std::any::Any + Send)) {
    let record = super::panic::take_last(payload);
    with_state(api, |a| {
        let (st, me) = (&mut *a.st, a.me);
        let task = task_mut(st, me).locals.remove(key).map(|r| r.info());
        if st.phase != super::execution::Phase::Running {
            return;
        }
        let draft = record.failure(st.thread_info(me).with_local_task(task));
        super::task_panics::keep(st, me, local, draft);
    });
}

/// The task whose panic with `message` escaped last on thread `tid`, if any.
pub(crate) fn escaped(st: &mut ExecState, tid: Tid, message: &str) -> Option<TaskInfo> {
    let escaped = task_mut(st, tid).locals.escaped.take()?;
    (escaped.1 == message).then_some(escaped.0)
}

/// The futures thread `tid`'s executors hold, in the order they joined.
pub(crate) fn pending(st: &ExecState, tid: Tid) -> Vec<TaskInfo> {
    super::tasks::task(st, tid)
        .map(|t| {
            t.locals
                .records
                .iter()
                .flatten()
                .map(Record::info)
                .collect()
        })
        .unwrap_or_default()
}
