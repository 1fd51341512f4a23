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
//!   "version": 7,
//!   "crate_version": "0.1.0",
//!   "test": "counter_race",
//!   "strategy": "random",
//!   "seed": 42,
//!   "iteration": 3,
//!   "max_steps": 100000,
//!   "thread_panics_fail": true,
//!   "spurious_wakeups": true,
//!   "fair_spins": false,
//!   "clock": "paused",
//!   "decisions": [
//!     { "thread": 1, "step": 4, "of": 2, "name": "incr", "op": "atomic load", "at": "examples/counter_race.rs:20:25" },
//!     { "thread": 1, "step": 4, "of": 2, "pick": "read from", "value": 1, "name": "incr", "op": "atomic load", "at": "examples/counter_race.rs:20:25" }
//!   ]
//! }
//! ```

mod error;
mod failure_kind;
mod file;
mod json;
mod signature;

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::op::PickKind;
use crate::settings::Clock;

pub use error::ScheduleError;
pub use error::shorten;
pub use failure_kind::FailureKind;
pub use signature::{Build, Signature, build};

/// `schedule`, recording that it was stored by a test binary built as `build`.
pub fn with_build(schedule: Schedule, build: Build) -> Schedule {
    schedule.built(build)
}

/// The settings `schedule` recorded.
pub fn settings_of(schedule: &Schedule) -> Settings {
    schedule.settings
}

/// The schedule file at `path` could not be read or written: `e`.
pub fn io_error(path: &Path, e: &std::io::Error) -> ScheduleError {
    ScheduleError::io(path, e)
}

/// The `format` field of every schedule file.
pub(crate) const FORMAT: &str = "interleave-test-schedule";
/// The schedule format version this crate writes, and the only one it reads.
///
/// Until the first release there is one live format: a change that makes executions take
/// other decisions (a switch point added or removed, a pick with other options) changes this
/// format in place, with its golden file (`tests/data/schedule_v7.json`), instead of adding
/// a version and a rule to replay the old one. Files of the development formats 1 to 6 are
/// refused ([`ScheduleError::OldFormat`]) with what to do: run the test again, which finds
/// and stores its failure anew. What format 7 records:
///
/// - a decision wherever two or more threads could run whose next operation can take effect
///   (a thread about to lock a held lock, receive on an empty channel or join a running
///   thread is blocked, not a choice), and every `pick` (`value`: the option taken) of
///   [`PickKind`]: which store a load reads and where a store goes (weak memory), early
///   timeouts, spurious wake-ups and failures, which waiter `notify_one` wakes, which woken
///   future a `block_on` polls, the value of a `choose` and 32 bits of the model's `rand`;
/// - under DFS, a thread that repeats a spin waits until something it observed changes
///   (`fair_spins`, recorded), and each thread ends at most one wait early per execution;
/// - a drop of a shared `Arc`, `try_unwrap`, `into_inner`, `Weak::upgrade` and the drop of a
///   `Weak` are switch points; the operations `task spawn`, `task wait` and `task abort` are
///   a future's, and a `task wait` that finds no wake blocks with no decision before it;
/// - the settings that change an execution (`max_steps`, `thread_panics_fail`,
///   `spurious_wakeups`, `fair_spins`, and `clock`, written only for `"paused"`: a file
///   without it, as every file before it was added, ran on the loaded clock), and the
///   failure's signature.
pub(crate) const VERSION: u64 = 7;

/// One recorded decision: the thread chosen where several could run, or another choice a
/// thread made (which store an atomic load reads, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub(crate) thread: usize,
    pub(crate) step: u64,
    pub(crate) options: usize,
    pub(crate) name: Option<String>,
    pub(crate) op: String,
    pub(crate) location: String,
    pub(crate) pick: Option<(PickKind, usize)>,
}

impl Decision {
    /// The id of the chosen thread (for a [`pick`](Self::pick), the thread that decided).
    /// Replay checks it, the pick, the number of [`options`](Self::options) and the
    /// operation's kind; names and locations are for people.
    pub fn thread(&self) -> usize {
        self.thread
    }

    /// For a decision other than the choice of a thread, what it decided and the option
    /// taken, counted from 0: for example `("read from", n)` (an atomic load reads the `n`th
    /// store before the newest one it may read, 0 being the newest), `("exchange reads", n)`
    /// (a compare-and-exchange reads the newest store, for 0, or the `n`th newest of the
    /// older ones that fail it) or `("store at", n)` (a store goes before the `n` newest
    /// stores it may go before, 0 being last). `None` for the choice of a thread.
    pub fn pick(&self) -> Option<(&'static str, usize)> {
        self.pick.map(|(kind, value)| (kind.name(), value))
    }

    /// The switch point, counted from 1, at which the decision was made.
    pub fn step(&self) -> u64 {
        self.step
    }

    /// How many threads could run there (for a [`pick`](Self::pick), how many options there
    /// were).
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
    /// The format version its decisions follow (see [`VERSION`]).
    pub(crate) version: u64,
    pub(crate) crate_version: String,
    pub(crate) test: Option<String>,
    pub(crate) strategy: String,
    pub(crate) seed: Option<u64>,
    pub(crate) iteration: u64,
    pub(crate) settings: Settings,
    /// What the execution's failure was, if it failed (not recorded before 0.1's corpus
    /// judged stored schedules by it).
    pub(crate) failure: Option<Signature>,
    /// How the test binary that stored it was built, where recorded.
    pub(crate) build: Build,
    pub(crate) decisions: Vec<Decision>,
}

/// The settings that change what an execution does, recorded so that replay uses them
/// (`None`: the file does not say, as a file written by hand may not; replay then uses its
/// own).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// The most steps an execution could take.
    pub max_steps: Option<u64>,
    /// Whether a model thread's panic failed the execution.
    pub thread_panics_fail: Option<bool>,
    /// Whether waits could wake spuriously.
    pub spurious_wakeups: Option<bool>,
    /// Whether DFS held back threads that repeated a spin.
    pub fair_spins: Option<bool>,
    /// How the virtual clock moved; a file that does not say ran on the loaded clock, the
    /// only one before the choice was recorded.
    pub clock: Clock,
}

impl Schedule {
    /// The largest schedule file [`load`](Self::load) reads: 32 MiB.
    ///
    /// A decision takes 100 to 120 bytes, so this holds some 280 000 decisions: almost three
    /// times what an execution at the default `max_steps` (100 000) can record, and 300 times
    /// the largest schedule this crate's own test suite produces (107 kB, 999 decisions).
    /// Reading a schedule of that size took 1.9 s and 50 MB of memory besides its text in a
    /// debug build.
    pub const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;

    /// The step limit of the run that recorded it (`max_steps`), if recorded.
    pub fn max_steps(&self) -> Option<u64> {
        self.settings.max_steps
    }

    /// Whether a panic in a spawned thread failed the run that recorded it, if recorded.
    pub fn thread_panics_fail(&self) -> Option<bool> {
        self.settings.thread_panics_fail
    }

    /// Whether waits could wake spuriously in the run that recorded it, if recorded.
    pub(crate) fn spurious_wakeups(&self) -> Option<bool> {
        self.settings.spurious_wakeups
    }

    /// Whether the run that recorded it held back threads that repeated a spin
    /// (`Builder::fair_spins`), if recorded.
    pub fn fair_spins(&self) -> Option<bool> {
        self.settings.fair_spins
    }

    /// How the virtual clock moved in the run that recorded it (`clock` in the file;
    /// [`Clock::Loaded`] when the file does not say). A replay uses this clock, whatever
    /// the replaying builder's `clock` is: the decisions were
    /// taken on it (an early timeout is a decision only on the loaded clock).
    pub fn clock(&self) -> Clock {
        self.settings.clock
    }

    /// What the recorded execution's failure was (its kind, the failing thread's name, what
    /// went wrong, without source locations), if it failed and the file records it.
    pub fn failure(&self) -> Option<&Signature> {
        self.failure.as_ref()
    }

    /// How the test binary that stored the schedule was built, as far as recorded.
    pub fn build(&self) -> Build {
        self.build
    }

    /// The schedule, recording that it was stored by a test binary built as `build`.
    pub(crate) fn built(mut self, build: Build) -> Self {
        self.build = build;
        self
    }

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

    /// The format version of its decisions: always 7, the one format this version of the
    /// crate writes and reads (see [`ScheduleError::OldFormat`]).
    pub fn format_version(&self) -> u64 {
        self.version
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
    ///
    /// The text is untrusted input: an object that names a key twice is an error (JSON
    /// readers disagree on which one counts), a leading UTF-8 byte order mark is skipped, and
    /// an error quotes at most a short prefix of a value from the text (see
    /// [`ScheduleError::Field`]). Unknown keys are skipped unread.
    pub fn from_json(text: &str) -> Result<Self, ScheduleError> {
        json::read(text)
    }

    /// Reads a schedule file, as untrusted input (see [`from_json`](Self::from_json)).
    ///
    /// Only a regular file is read: anything else (a FIFO, a device such as `/dev/zero`, a
    /// directory) is a [`ScheduleError::NotAFile`] at once, without being opened. A symbolic
    /// link is followed (the caller named the path; the regression corpus and
    /// `cargo interleave` refuse links that lead out of the directory they search). A file
    /// larger than [`MAX_FILE_BYTES`](Self::MAX_FILE_BYTES) is a
    /// [`ScheduleError::TooLarge`], and no more than that is ever read.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ScheduleError> {
        let path = path.as_ref();
        let text = file::text(file::read(path)?).map_err(|e| e.in_file(path))?;
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

    /// The test the schedule names, checked to be a Rust path as `#[interleave]` records it
    /// (`<crate>::<module>::<fn>`: identifiers, raw ones such as `r#try` included, joined by
    /// `::`). `Ok(None)` if it names no test.
    ///
    /// A schedule file is untrusted, so a tool that hands the name to a program (as
    /// `cargo interleave` hands it to the test binary as its filter) uses this rather than
    /// [`test`](Self::test): a name such as `--logfile=/tmp/x` would be read as an option.
    /// Such a name is a [`ScheduleError::Field`] error for field `test`.
    pub fn test_path(&self) -> Result<Option<&str>, ScheduleError> {
        let Some(test) = self.test.as_deref() else {
            return Ok(None);
        };
        if test.split("::").all(is_identifier) {
            return Ok(Some(test));
        }
        Err(ScheduleError::field(
            "test",
            format!(
                "should be a Rust test path such as `my_tests::queue::push` (identifiers \
                 joined by `::`), found {}; only schedules stored by #[interleave] tests name \
                 their test",
                error::quote(test)
            ),
        ))
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
}

/// Whether `s` is a Rust identifier, raw (`r#try`) or not. Letters and digits are Unicode
/// ones, as in Rust (`char::is_alphabetic` and `is_alphanumeric` stand in for the exact
/// `XID_Start` and `XID_Continue` classes); what matters is that no identifier starts with
/// `-` or holds a space, `=`, `/` or `:`.
fn is_identifier(s: &str) -> bool {
    let s = s.strip_prefix("r#").unwrap_or(s);
    let mut chars = s.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first == '_' || first.is_alphabetic())
        && s != "_"
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}
