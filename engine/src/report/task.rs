//! [`TaskInfo`]: a task that shares its model thread with others, as reports name it.

use std::fmt;

use super::SourceLocation;

/// A future polled by the executor of a `block_on` on some model thread: the `block_on`'s
/// own future, or a task spawned with `spawn_local` or on a current-thread Tokio runtime.
/// Such tasks share their thread, so a report names the task as well as the thread.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TaskInfo {
    number: u32,
    name: Option<String>,
    spawned_at: SourceLocation,
    waits_at: Option<SourceLocation>,
    waits_in: Option<&'static str>,
}

impl TaskInfo {
    /// A task numbered `number` on its thread (0 for a `block_on`'s own future), named
    /// `name` if it was given one, spawned at `spawned_at`, which `waits` at a place in an
    /// operation (its last poll's last one) if its executor knows.
    pub fn new(
        number: u32,
        name: Option<String>,
        spawned_at: crate::op::Loc,
        waits: Option<(crate::op::Loc, &'static str)>,
    ) -> Self {
        let (waits_at, waits_in) =
            waits.map_or((None, None), |(at, op)| (Some(at.into()), Some(op)));
        TaskInfo {
            number,
            name,
            spawned_at: spawned_at.into(),
            waits_at,
            waits_in,
        }
    }

    /// Its number on its thread: 0 for a `block_on`'s own future, then 1, 2, ... for the
    /// tasks in the order they were spawned there.
    pub fn number(&self) -> u32 {
        self.number
    }

    /// Its name (a Tokio `task::Builder::name`), if it has one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Where it was spawned (for a `block_on`'s own future, where `block_on` was called).
    pub fn spawned_at(&self) -> &SourceLocation {
        &self.spawned_at
    }

    /// Where it waits: in its last poll that returned `Pending`, the `.await` of a task's
    /// `JoinHandle` if nothing followed it, else the last operation of the model; `None`
    /// if that poll reached neither (it awaited a timer, say), or if it was never polled.
    pub fn waits_at(&self) -> Option<&SourceLocation> {
        self.waits_at.as_ref()
    }

    /// The operation it waits in, where [`waits_at`](Self::waits_at) places it, as reports
    /// name operations: `tokio Mutex lock`, `JoinHandle await`.
    pub fn waits_in(&self) -> Option<&str> {
        self.waits_in
    }
}

impl fmt::Display for TaskInfo {
    /// `task 'flusher' (spawned at src/lib.rs:9:5)`, `task #2 (spawned at ...)`, or
    /// `the block_on future (at ...)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.name, self.number) {
            (Some(name), _) => write!(f, "task '{name}' (spawned at {})", self.spawned_at),
            (None, 0) => write!(f, "the block_on future (at {})", self.spawned_at),
            (None, n) => write!(f, "task #{n} (spawned at {})", self.spawned_at),
        }
    }
}
