//! What the executors of a model thread know of the futures they poll, kept in the
//! thread's [`Notes`] slot of the engine (under its lock) so that reports can read it: a
//! panic in a future is reported in that task, and a deadlock report lists each future
//! still pending with where it waits. Where a future waits ([`waits_at`]) also places a
//! spawned task's wait between polls (`task.rs`).
//!
//! The executor tells the engine when a future joins, after each of its polls, and when
//! it leaves: one more lock of the state per poll (measured on
//! `compare/benches/tokio.rs`'s models: within the noise, 2% at most).

use crate::primitive::{self, Access, Loc};
use crate::threads::{self, Notes, TaskInfo};

/// What a thread's executors hold, for reports; and where its spawned task's last poll
/// stopped.
#[derive(Debug, Default)]
pub(super) struct TaskNotes {
    /// By key: a record's key is its index plus one (keys are unique on the thread).
    records: Vec<Option<Record>>,
    /// Numbers of spawned tasks (a `block_on`'s own future is 0).
    spawned: u32,
    /// The last task whose panic escaped its poll, with the panic's message.
    escaped: Option<(TaskInfo, String)>,
    /// The last `.await` of a `JoinHandle` that returned `Pending`, with the step count
    /// then: where the future that awaited it waits, if no operation came after.
    awaited: Option<(Loc, u64)>,
    /// The step count when its spawned task's last poll began.
    poll_began: u64,
    /// The operation its spawned task's last poll that returned `Pending` waits in.
    waits_in: Option<&'static str>,
    /// How many local tasks (`spawn_local`) it spawned: their ids.
    locals_spawned: usize,
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
            self.spawned_at,
            self.waits_at,
        )
    }
}

impl TaskNotes {
    fn get(&mut self, key: u32) -> Option<&mut Record> {
        self.records.get_mut(key as usize - 1)?.as_mut()
    }

    fn remove(&mut self, key: u32) -> Option<Record> {
        self.records.get_mut(key as usize - 1)?.take()
    }
}

impl Notes for TaskNotes {
    fn waits_in(&self) -> Option<&'static str> {
        self.waits_in
    }

    fn pending(&self) -> Vec<TaskInfo> {
        self.records.iter().flatten().map(Record::info).collect()
    }

    fn escaped(&mut self, message: &str) -> Option<TaskInfo> {
        let escaped = self.escaped.take()?;
        (escaped.1 == message).then_some(escaped.0)
    }
}

/// A future joins the calling thread's executor: its own future (`main`, at the
/// `block_on`'s `loc`) or a task spawned at `loc`. Returns its key.
#[track_caller]
pub(super) fn joined(api: &str, name: Option<String>, loc: Loc, main: bool) -> u32 {
    primitive::with_state(api, |a| {
        let notes = a.notes::<TaskNotes>();
        let number = if main {
            0
        } else {
            notes.spawned += 1;
            notes.spawned
        };
        notes.records.push(Some(Record {
            number,
            name,
            spawned_at: loc,
            waits_at: None,
        }));
        u32::try_from(notes.records.len()).expect("fewer than 2^32 futures on a thread")
    })
}

/// Future `key` was polled, from step `began` on: if it returned `Pending`, it waits at the
/// last operation of the model or `.await` of a `JoinHandle` in that poll (`waits_at`);
/// if it finished, it leaves.
#[track_caller]
pub(super) fn polled(api: &str, key: u32, began: u64, pending: bool) {
    primitive::with_state(api, |a| {
        let last = waits_at(a, began);
        let notes = a.notes::<TaskNotes>();
        if !pending {
            notes.remove(key);
        } else if let Some(r) = notes.get(key) {
            r.waits_at = last;
        }
    });
}

/// Where the calling thread's future, polled from step `began` on, waits, and in what: at
/// the `.await` of a `JoinHandle` if no operation came after it in the poll, else at the
/// last operation of the poll; `None` if the poll reached neither.
fn waits_at(a: &mut Access<'_>, began: u64) -> Option<(Loc, &'static str)> {
    let step = a.step();
    let last = (step > began).then(|| a.last_op());
    match a.notes::<TaskNotes>().awaited.take() {
        Some((loc, at)) if at >= began && at == step => Some((loc, "JoinHandle await")),
        _ => last,
    }
}

/// A spawned task's poll begins (under the lock of `wakes::before_poll`).
pub(super) fn poll_begins(a: &mut Access<'_>) {
    let step = a.step();
    let notes = a.notes::<TaskNotes>();
    notes.poll_began = step;
    notes.waits_in = None;
}

/// Where a spawned task that returned `Pending` waits, as its wait between polls is
/// reported: the last operation of its poll, if the poll reached one (whose name the
/// deadlock report gives). Under the lock of `wakes::wait`.
pub(super) fn task_waits_at(a: &mut Access<'_>) -> Option<Loc> {
    let began = a.notes::<TaskNotes>().poll_began;
    let waits = waits_at(a, began);
    a.notes::<TaskNotes>().waits_in = waits.map(|(_, op)| op);
    waits.map(|(at, _)| at)
}

/// The calling thread's future awaits a `JoinHandle` at `loc`, a place in the program (the
/// caller leaves out its own polls: an executor's, a `JoinSet`'s).
pub(super) fn awaits(a: &mut Access<'_>, loc: Loc) {
    let step = a.step();
    a.notes::<TaskNotes>().awaited = Some((loc, step));
}

/// The number of the calling thread's next local task (`spawn_local`), from 1: with the
/// thread, its task id, unique in the execution whichever `block_on` runs it.
#[track_caller]
pub(super) fn next_local_id(api: &str) -> usize {
    primitive::with_state(api, |a| {
        let notes = a.notes::<TaskNotes>();
        notes.locals_spawned += 1;
        notes.locals_spawned
    })
}

/// Future `key` leaves its executor without finishing (dropped or aborted).
#[track_caller]
pub(super) fn left(api: &str, key: u32) {
    primitive::with_state(api, |a| {
        a.notes::<TaskNotes>().remove(key);
    });
}

/// The panic with `message` escaped a poll of future `key`, which leaves: if it ends the
/// thread, the report names the task.
#[track_caller]
pub(super) fn panicked(api: &str, key: u32, message: String) {
    primitive::with_state(api, |a| {
        let notes = a.notes::<TaskNotes>();
        if let Some(r) = notes.remove(key) {
            notes.escaped = Some((r.info(), message));
        }
    });
}

/// The panic `payload` escaped a poll of future `key`, local task `local` of the calling
/// thread, whose handle is held: it leaves, and its panic is kept for the handle as the
/// failure it would be, in that task (`threads::held`).
#[track_caller]
pub(super) fn keep_panic(api: &str, key: u32, local: usize, payload: &(dyn std::any::Any + Send)) {
    let task = primitive::with_state(api, |a| a.notes::<TaskNotes>().remove(key)).map(|r| r.info());
    threads::held::keep_panic(api, local, payload, task);
}
