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
    /// Valid JSON, but not an interleave-test schedule (no or another `format` field).
    NotASchedule {
        /// The `format` field found, if any.
        found: Option<String>,
    },
    /// A schedule of a format version this crate does not read.
    UnsupportedVersion {
        /// The version in the file.
        found: String,
        /// The version this crate reads.
        supported: u64,
    },
    /// A field is missing or has the wrong type or value.
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
            ScheduleError::NotASchedule { found: None } => write!(
                f,
                "invalid schedule: no \"format\" field; this JSON is not an interleave-test \
                 schedule (expected \"format\": \"{}\")",
                super::FORMAT
            ),
            ScheduleError::NotASchedule { found: Some(found) } => write!(
                f,
                "invalid schedule: \"format\" is {found:?}, not {:?}; this JSON is not an \
                 interleave-test schedule",
                super::FORMAT
            ),
            ScheduleError::UnsupportedVersion { found, supported } => write!(
                f,
                "unsupported schedule version {found}: this interleave-test reads version \
                 {supported}; replay it with the interleave-test version named in its \
                 \"crate_version\" field"
            ),
            ScheduleError::Field { path, problem } => {
                write!(f, "invalid schedule: field `{path}` {problem}")
            }
            ScheduleError::WrongTest { expected, found } => write!(
                f,
                "wrong schedule: it was recorded for test `{found}`, not `{expected}`; replay it \
                 with the test it names"
            ),
            ScheduleError::Io { path, reason } => write!(f, "{}: {reason}", path.display()),
            ScheduleError::InFile { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for ScheduleError {}
