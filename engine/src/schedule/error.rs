//! [`ScheduleError`]: why a schedule could not be read, written or used.

use std::fmt;
use std::path::{Path, PathBuf};

/// A schedule file or text that cannot be used, and where the problem is.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScheduleError {
    /// The text is not valid JSON.
    Syntax {
        /// Line of the error, from 1.
        line: usize,
        /// Column of the error, from 1.
        column: usize,
        /// What the JSON parser expected.
        reason: String,
    },
    /// The text is empty or only whitespace (a file that was never written).
    Empty,
    /// The text ends in the middle of the JSON document (a cut-off file).
    Truncated {
        /// Line where the text ends.
        line: usize,
        /// Column where the text ends.
        column: usize,
    },
    /// An object of the schedule (the document or one decision) names a key twice. JSON
    /// readers disagree on which one counts, so a schedule may hold each key once.
    DuplicateKey {
        /// The key, quoted (a long one shortened, see [`ScheduleError::Field`]).
        key: String,
        /// Line where the second one was found, from 1.
        line: usize,
        /// Column where the second one ends, from 1.
        column: usize,
    },
    /// An object of the schedule (the document or one decision) has more keys than a
    /// schedule's objects can have. Unknown keys are skipped, but only that many: finding a
    /// duplicate among millions of them would take several times the file's size in memory.
    TooManyKeys {
        /// Line of the first key too many, from 1.
        line: usize,
        /// Column where it ends, from 1.
        column: usize,
        /// The most keys an object may have.
        limit: usize,
    },
    /// Valid JSON, but not an interleave-test schedule (no or another `format` field).
    NotASchedule {
        /// The `format` field found, if any, as a JSON value: a string quoted, a number as a
        /// number (a long value shortened, see [`ScheduleError::Field`]).
        found: Option<String>,
    },
    /// A schedule of a format version newer than the one this crate reads.
    UnsupportedVersion {
        /// The version in the file.
        found: String,
        /// The one version this crate reads.
        supported: u64,
    },
    /// A schedule of a development format older than the one this crate reads: before the
    /// first release there is one live format, and older files are not replayed (their
    /// decisions were taken under other rules). Running the test again finds and stores
    /// its failure in the current format.
    OldFormat {
        /// The version in the file.
        found: u64,
        /// The one version this crate reads.
        supported: u64,
    },
    /// A field is missing or has the wrong type or value.
    ///
    /// A value from the file is quoted whole only if it is short: a string of more than
    /// 64 characters shows its first ones, then `… (N bytes)` with its whole length; an array
    /// or object is described (`an array of 3 values`), not quoted.
    Field {
        /// Path of the field, e.g. `decisions[3].thread`.
        path: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The schedule was recorded for another test.
    WrongTest {
        /// The test it is being replayed for.
        expected: String,
        /// The test named in the schedule.
        found: String,
    },
    /// The path names something other than a regular file (a FIFO, a device, a directory,
    /// a socket). It was not opened: reading a FIFO blocks until a writer comes, and a device
    /// such as `/dev/zero` never ends.
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is, e.g. `a FIFO (named pipe)`.
        kind: String,
    },
    /// The file is larger than [`Schedule::MAX_FILE_BYTES`](super::Schedule::MAX_FILE_BYTES).
    /// At most that much plus one byte was read.
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size in bytes as the file system reported it, or, for a file that grew while
        /// it was read, the number of bytes read (the limit plus one).
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// Reading or writing the file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// A problem in a named file.
    InFile {
        /// The file.
        path: PathBuf,
        /// The problem.
        error: Box<ScheduleError>,
    },
}

impl ScheduleError {
    /// Whether this is an [`OldFormat`](ScheduleError::OldFormat) error, in a file or not.
    pub fn is_old_format(&self) -> bool {
        match self {
            ScheduleError::OldFormat { .. } => true,
            ScheduleError::InFile { error, .. } => error.is_old_format(),
            _ => false,
        }
    }

    /// The file at `path` could not be read: `e`.
    pub(crate) fn io(path: &Path, e: &std::io::Error) -> Self {
        ScheduleError::Io {
            path: path.to_owned(),
            reason: e.to_string(),
        }
    }

    pub(crate) fn in_file(self, path: &Path) -> Self {
        ScheduleError::InFile {
            path: path.to_owned(),
            error: Box::new(self),
        }
    }

    pub(crate) fn field(path: impl Into<String>, problem: impl Into<String>) -> Self {
        ScheduleError::Field {
            path: path.into(),
            problem: problem.into(),
        }
    }
}

impl fmt::Display for ScheduleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScheduleError::Syntax {
                line,
                column,
                reason,
            } => write!(
                f,
                "invalid schedule: not valid JSON at line {line}, column {column}: {reason}"
            ),
            ScheduleError::Empty => write!(
                f,
                "invalid schedule: the text is empty; a schedule is a JSON object with \
                 \"format\": \"{}\" (was the file written completely?)",
                super::FORMAT
            ),
            ScheduleError::Truncated { line, column } => write!(
                f,
                "invalid schedule: the text ends at line {line}, column {column} in the middle of \
                 the document; the file was cut off: use the complete file"
            ),
            ScheduleError::DuplicateKey { key, line, column } => write!(
                f,
                "invalid schedule: key {key} is given twice in one object (again at line {line}, \
                 column {column}); keep only one"
            ),
            ScheduleError::TooManyKeys {
                line,
                column,
                limit,
            } => write!(
                f,
                "invalid schedule: an object has more than {limit} keys (at line {line}, column \
                 {column}); a schedule's objects have at most 8, so this is not a schedule"
            ),
            ScheduleError::NotASchedule { found: None } => write!(
                f,
                "invalid schedule: no \"format\" field; this JSON is not an interleave-test \
                 schedule (expected \"format\": \"{}\")",
                super::FORMAT
            ),
            ScheduleError::NotASchedule { found: Some(found) } => write!(
                f,
                "invalid schedule: \"format\" is {found}, not {:?}; this JSON is not an \
                 interleave-test schedule",
                super::FORMAT
            ),
            ScheduleError::UnsupportedVersion { found, supported } => write!(
                f,
                "unsupported schedule version {found}: this interleave-test reads only version \
                 {supported}, and the file is newer; replay it with the interleave-test version \
                 named in its \"crate_version\" field"
            ),
            ScheduleError::OldFormat { found, supported } => write!(
                f,
                "old schedule format {found}: this interleave-test reads only format \
                 {supported} (before the first release there is one live format, and \
                 schedules of earlier development versions are not replayed): run the test \
                 again to find its failure anew and store it in this format"
            ),
            ScheduleError::Field { path, problem } => {
                write!(f, "invalid schedule: field `{path}` {problem}")
            }
            ScheduleError::WrongTest { expected, found } => write!(
                f,
                "wrong schedule: it was recorded for test `{}`, not `{}`; replay it with the test \
                 it names",
                shorten(found),
                shorten(expected)
            ),
            ScheduleError::NotAFile { path, kind } => write!(
                f,
                "{}: not a regular file but {kind}; it was not read (a schedule is a regular \
                 file: a FIFO would block and a device may never end)",
                path.display()
            ),
            ScheduleError::TooLarge { path, size, limit } => write!(
                f,
                "{}: the file holds at least {size} bytes, more than the {limit} a schedule may \
                 have; it was not read (is it a schedule? one of 100 000 decisions takes about \
                 11 MB)",
                path.display()
            ),
            ScheduleError::Io { path, reason } => write!(f, "{}: {reason}", path.display()),
            ScheduleError::InFile { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

/// How many characters of a value from a schedule file an error message shows at most.
pub(crate) const SHOWN_CHARS: usize = 64;

/// `text` quoted for a message: see [`shorten`].
pub(crate) fn quote(text: &str) -> String {
    shown(text, true)
}

/// `text` for a message: escaped as Rust's `Debug` escapes a string (so a value cannot move
/// the cursor, colour a terminal or reorder the line), whole if short, otherwise its first
/// [`SHOWN_CHARS`] characters then `… (N bytes)` with its whole length.
pub fn shorten(text: &str) -> String {
    shown(text, false)
}

fn shown(text: &str, quoted: bool) -> String {
    let mut out = String::from(if quoted { "\"" } else { "" });
    let mut count = 0;
    for c in text.chars() {
        let escaped: String = match c {
            '\'' => c.to_string(),
            '"' if !quoted => c.to_string(),
            _ => c.escape_debug().collect(),
        };
        count += escaped.chars().count();
        if count > SHOWN_CHARS {
            out.push_str(&format!("… ({} bytes)", text.len()));
            return out;
        }
        out.push_str(&escaped);
    }
    if quoted {
        out.push('"');
    }
    out
}

impl std::error::Error for ScheduleError {}
