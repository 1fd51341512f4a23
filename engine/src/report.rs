//! What a failing execution returns: a [`Failure`], with the threads, steps and timers its
//! report shows (a passing run's `Report` is the facade's, `interleave_test::Report`).

use std::fmt;
use std::panic::Location;

/// A model thread: its id in the execution (0 runs the model closure, spawned threads count
/// up from 1 in spawn order), its name, and the label the program gave it (shown after
/// it in reports: `'worker' (#2) [shard 3]`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ThreadInfo {
    id: usize,
    name: Option<String>,
    task: bool,
    label: Option<String>,
    /// The task its executor was polling, where that matters (a panic's thread).
    local: Option<Box<TaskInfo>>,
}

impl ThreadInfo {
    pub(crate) fn new(id: usize, name: Option<String>) -> Self {
        ThreadInfo {
            id,
            name,
            task: false,
            label: None,
            local: None,
        }
    }

    /// The same thread, polling `task` (one of the tasks of its `block_on`).
    pub(crate) fn with_local_task(mut self, task: Option<TaskInfo>) -> Self {
        self.local = task.map(Box::new);
        self
    }

    /// For a failure's thread that was polling one of the tasks of a `block_on` (a task
    /// of `spawn_local` or of a current-thread Tokio runtime), that task: the thread is
    /// only where it ran.
    pub fn local_task(&self) -> Option<&TaskInfo> {
        self.local.as_deref()
    }

    /// The same thread, with the label the program gave it.
    pub(crate) fn with_label(mut self, label: Option<String>) -> Self {
        self.label = label;
        self
    }

    /// The label the program gave the thread with
    /// `current::set_label`, if any.
    pub fn label(&self) -> Option<&str> {
        self.label.as_deref()
    }

    /// The same thread, which runs a spawned task if `task`.
    pub(crate) fn with_task(mut self, task: bool) -> Self {
        self.task = task;
        self
    }

    /// Whether the thread runs a task spawned with `future::spawn`.
    pub fn is_task(&self) -> bool {
        self.task
    }

    /// "task" for a thread that runs a spawned task, else "thread": the word reports use.
    pub(crate) fn kind(&self) -> &'static str {
        if self.task { "task" } else { "thread" }
    }

    /// The thread's id in its execution.
    pub fn id(&self) -> usize {
        self.id
    }

    /// The thread's name (`"main"` for thread 0), if it has one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

impl fmt::Display for ThreadInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(name) => write!(f, "'{name}' (#{})", self.id)?,
            None => write!(f, "#{}", self.id)?,
        }
        match &self.label {
            Some(label) => write!(f, " [{label}]"),
            None => Ok(()),
        }
    }
}

/// A place in the user's source, as `#[track_caller]` saw it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SourceLocation {
    file: String,
    line: u32,
    column: u32,
}

impl SourceLocation {
    pub(crate) fn new(file: String, line: u32, column: u32) -> Self {
        SourceLocation { file, line, column }
    }

    /// The source file, as the compiler names it.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The line, from 1.
    pub fn line(&self) -> u32 {
        self.line
    }

    /// The column, from 1.
    pub fn column(&self) -> u32 {
        self.column
    }
}

impl From<&Location<'_>> for SourceLocation {
    fn from(loc: &Location<'_>) -> Self {
        SourceLocation::new(loc.file().to_owned(), loc.line(), loc.column())
    }
}

impl fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// A thread that holds what another thread waits for, and where it took it; or, for a
/// join, the thread joined and where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    thread: ThreadInfo,
    location: SourceLocation,
    joined: bool,
}

impl Holder {
    pub(crate) fn new(thread: ThreadInfo, location: SourceLocation) -> Self {
        Holder {
            thread,
            location,
            joined: false,
        }
    }

    /// The thread a join waits for, which is at `location`.
    pub(crate) fn joined(thread: ThreadInfo, location: SourceLocation) -> Self {
        Holder {
            thread,
            location,
            joined: true,
        }
    }

    /// Whether this is the thread a join waits for (it holds nothing: it has not finished).
    pub fn is_joined_thread(&self) -> bool {
        self.joined
    }

    /// The holding thread.
    pub fn thread(&self) -> &ThreadInfo {
        &self.thread
    }

    /// Where it took the object (for a joined thread: where it is now).
    pub fn location(&self) -> &SourceLocation {
        &self.location
    }
}

/// One thread's part in a deadlock or livelock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadReport {
    thread: ThreadInfo,
    state: String,
    location: Option<SourceLocation>,
    held_by: Vec<Holder>,
    tasks: Vec<TaskInfo>,
}

impl ThreadReport {
    pub(crate) fn new(
        thread: ThreadInfo,
        state: String,
        location: Option<SourceLocation>,
        held_by: Vec<Holder>,
    ) -> Self {
        ThreadReport {
            thread,
            state,
            location,
            held_by,
            tasks: Vec::new(),
        }
    }

    /// The same report, with the futures its `block_on` still holds.
    pub(crate) fn with_tasks(mut self, tasks: Vec<TaskInfo>) -> Self {
        self.tasks = tasks;
        self
    }

    /// For a thread that waits in a `block_on`: the futures it holds that have not
    /// finished (its own future first, then its tasks), each with where it waits.
    pub fn tasks(&self) -> &[TaskInfo] {
        &self.tasks
    }

    /// The thread.
    pub fn thread(&self) -> &ThreadInfo {
        &self.thread
    }

    /// What it was doing, e.g. `waits to lock Mutex #0 (first used at src/lib.rs:9:17)`.
    pub fn state(&self) -> &str {
        &self.state
    }

    /// Where it was (where it waits, for a blocked thread).
    pub fn location(&self) -> Option<&SourceLocation> {
        self.location.as_ref()
    }

    /// Threads holding what it waits for.
    pub fn held_by(&self) -> &[Holder] {
        &self.held_by
    }
}

impl fmt::Display for ThreadReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.thread.kind(), self.thread, self.state)?;
        if let Some(loc) = &self.location {
            write!(f, "\n      at {loc}")?;
        }
        for h in &self.held_by {
            if h.joined {
                write!(
                    f,
                    "\n      {} {} has not finished; it is at {}",
                    h.thread.kind(),
                    h.thread,
                    h.location
                )?;
            } else if h.thread == self.thread {
                write!(
                    f,
                    "\n      held by this same thread, taken at {}",
                    h.location
                )?;
            } else {
                write!(
                    f,
                    "\n      held by {} {}, taken at {}",
                    h.thread.kind(),
                    h.thread,
                    h.location
                )?;
            }
        }
        write_tasks(f, &self.tasks)
    }
}

/// How many of a thread's pending tasks a report lists (all are in
/// [`ThreadReport::tasks`]).
const TASKS_SHOWN: usize = 10;

/// The lines of a deadlock report for a thread's pending tasks: those that wait at an
/// operation first, at most [`TASKS_SHOWN`].
fn write_tasks(f: &mut fmt::Formatter<'_>, tasks: &[TaskInfo]) -> fmt::Result {
    let at_operation = tasks.iter().filter(|t| t.waits_at().is_some());
    let elsewhere = tasks.iter().filter(|t| t.waits_at().is_none());
    for task in at_operation.chain(elsewhere).take(TASKS_SHOWN) {
        match (task.waits_at(), task.waits_in()) {
            (Some(at), Some(op)) => write!(f, "\n      {task} waits in `{op}` at {at}")?,
            (Some(at), None) => write!(f, "\n      {task} waits at {at}")?,
            (None, _) => write!(
                f,
                "\n      {task} returned Pending from a poll with no operation of the model \
                 (it waits for a timer, say)"
            )?,
        }
    }
    if tasks.len() > TASKS_SHOWN {
        let more = tasks.len() - TASKS_SHOWN;
        write!(
            f,
            "\n      and {more} more pending (ThreadReport::tasks lists them all)"
        )?;
    }
    Ok(())
}

mod failure;
pub(crate) mod task;
pub(crate) mod timer;
pub(crate) use failure::RECENT_DECISIONS;
pub use failure::{Failure, RecentStep};

pub use task::TaskInfo;
pub use timer::TimerFiring;
pub(crate) use timer::secs;
