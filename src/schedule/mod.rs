//! The schedule: the decisions of one execution, as a versioned, self-describing JSON file
//! that replays decision for decision.
//!
//! Only real choices are recorded (switch points where a single thread could run are not),
//! so a schedule stays short. Each decision also names the chosen thread, its operation and
//! its location for human readers; replay reads only the thread id and checks at each
//! decision that the thread can run, reporting a divergence otherwise.
//!
//! ```json
//! {
//!   "format": "interleave-test-schedule",
//!   "version": 1,
//!   "crate_version": "0.1.0",
//!   "test": "counter_race",
//!   "strategy": "random",
//!   "seed": 42,
//!   "iteration": 3,
//!   "decisions": [
//!     { "thread": 1, "step": 4, "of": 2, "name": "incr", "op": "atomic load", "at": "examples/counter_race.rs:20:25" }
//!   ]
//! }
//! ```

mod error;
mod json;

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

pub use error::ScheduleError;

/// The `format` field of every schedule file.
pub(crate) const FORMAT: &str = "interleave-test-schedule";
/// The schedule format version this crate writes and reads.
pub(crate) const VERSION: u64 = 1;

/// One recorded decision: the thread chosen where several could run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub(crate) thread: usize,
    pub(crate) step: u64,
    pub(crate) options: usize,
    pub(crate) name: Option<String>,
    pub(crate) op: String,
    pub(crate) location: String,
}

impl Decision {
    /// The id of the chosen thread: all that replay reads.
    pub fn thread(&self) -> usize {
        self.thread
    }

    /// The switch point, counted from 1, at which the decision was made.
    pub fn step(&self) -> u64 {
        self.step
    }

    /// How many threads could run there.
    pub fn options(&self) -> usize {
        self.options
    }

    /// The chosen thread's name, if it had one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The operation the chosen thread performed next, e.g. `mutex lock`.
    pub fn op(&self) -> &str {
        &self.op
    }

    /// Where that operation is in the user's code (`file:line:column`).
    pub fn location(&self) -> &str {
        &self.location
    }
}

/// The decisions of one execution and what is needed to read them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    pub(crate) crate_version: String,
    pub(crate) test: Option<String>,
    pub(crate) strategy: String,
    pub(crate) seed: Option<u64>,
    pub(crate) iteration: u64,
    pub(crate) decisions: Vec<Decision>,
}

impl Schedule {
    /// The decisions, in order.
    pub fn decisions(&self) -> &[Decision] {
        &self.decisions
    }

    /// The name of the test or model that produced the schedule, when it was known.
    pub fn test(&self) -> Option<&str> {
        self.test.as_deref()
    }

    /// The strategy that produced it ("random", ...).
    pub fn strategy(&self) -> &str {
        &self.strategy
    }

    /// The strategy's seed, if it uses one.
    pub fn seed(&self) -> Option<u64> {
        self.seed
    }

    /// The execution of its run that produced it, from 0.
    pub fn iteration(&self) -> u64 {
        self.iteration
    }

    /// The version of interleave-test that wrote it.
    pub fn crate_version(&self) -> &str {
        &self.crate_version
    }

    /// The schedule as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        json::write(self)
    }

    /// Reads a schedule from JSON text; says what is wrong and where if it cannot.
    pub fn from_json(text: &str) -> Result<Self, ScheduleError> {
        json::read(text)
    }

    /// Reads a schedule file.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ScheduleError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| ScheduleError::io(path, &e))?;
        Self::from_json(&text).map_err(|e| e.in_file(path))
    }

    /// Writes the schedule to `path` atomically (a temporary file in the same directory, then
    /// a rename), creating missing directories.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), ScheduleError> {
        let path = path.as_ref();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| ScheduleError::io(dir, &e))?;
        }
        // Unique per save, so concurrent saves of one path never share a temporary file.
        static SAVES: AtomicU64 = AtomicU64::new(0);
        let n = SAVES.fetch_add(1, Ordering::Relaxed);
        let tmp = path.with_extension(format!("json.tmp{}-{n}", std::process::id()));
        let written = std::fs::write(&tmp, self.to_json())
            .map_err(|e| ScheduleError::io(&tmp, &e))
            .and_then(|()| std::fs::rename(&tmp, path).map_err(|e| ScheduleError::io(path, &e)));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp); // leave no temporary file behind
        }
        written
    }

    /// Checks that the schedule was recorded for the test `name` (schedules that name no test
    /// fit any).
    pub fn check_test(&self, name: &str) -> Result<(), ScheduleError> {
        match &self.test {
            Some(found) if found != name => Err(ScheduleError::WrongTest {
                expected: name.to_owned(),
                found: found.clone(),
            }),
            _ => Ok(()),
        }
    }

    /// What replay checks at every decision.
    pub(crate) fn expected(&self) -> Vec<crate::strategy::Expected> {
        self.decisions
            .iter()
            .map(|d| crate::strategy::Expected {
                thread: d.thread,
                options: d.options,
                op: d.op.clone(),
            })
            .collect()
    }
}
