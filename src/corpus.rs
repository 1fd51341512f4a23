//! The regression corpus: each failing schedule of a test, stored as its own JSON file under
//! `<crate root>/interleave-regressions/<test path>/`, replayed first on every later run.
//!
//! A file's name is a stable hash of its decisions, so the same failure is stored once, and
//! files are written atomically (a unique temporary file, then a rename), so test processes
//! failing at the same time never leave a half-written file.
//!
//! A corpus is committed and shared, so its files are untrusted input. Each `*.json` file is
//! read with [`Schedule::load`] (a regular file of bounded size, see there); anything else
//! there (a FIFO, a device, a directory) is skipped unread. A symbolic link is followed only
//! if it leads to a file inside the corpus root (`interleave-regressions/`): a link out of it,
//! in a cloned repository, could make every test run read any file of the machine (a secret,
//! a device) and quote parts of it in a CI log.

use std::path::{Path, PathBuf};

use crate::schedule::{Schedule, ScheduleError};

/// The stored schedules of one test.
#[derive(Clone, Debug)]
pub(crate) struct Corpus {
    /// The corpus root, shared by all tests of the crate.
    root: PathBuf,
    /// This test's directory below `root`.
    dir: PathBuf,
}

/// One stored file and what it holds.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) path: PathBuf,
    pub(crate) content: Content,
}

/// What a stored file holds.
#[derive(Debug)]
pub(crate) enum Content {
    /// A schedule.
    Schedule(Schedule),
    /// A regular file in the corpus that is not a usable schedule.
    Unreadable(ScheduleError),
    /// Not read, and why (with the path): not a regular file, or a link out of the corpus.
    Skipped(String),
}

impl Corpus {
    /// The corpus of test `test` (a `::`-separated path) under `root`.
    pub(crate) fn new(root: &Path, test: &str) -> Self {
        let mut dir = root.to_path_buf();
        for segment in test.split("::").filter(|s| !s.is_empty()) {
            dir.push(sanitize(segment));
        }
        Corpus {
            root: root.to_path_buf(),
            dir,
        }
    }

    /// The stored files, in name order (none if the directory does not exist).
    pub(crate) fn entries(&self) -> Result<Vec<Entry>, ScheduleError> {
        let read = match std::fs::read_dir(&self.dir) {
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(ScheduleError::io(&self.dir, &e)),
        };
        let mut paths: Vec<PathBuf> = read
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        paths.sort();
        let root =
            std::fs::canonicalize(&self.root).map_err(|e| ScheduleError::io(&self.root, &e))?;
        Ok(paths
            .into_iter()
            .map(|path| Entry {
                content: read_entry(&path, &root),
                path,
            })
            .collect())
    }

    /// Stores `schedule` unless the same decisions are stored already. Returns its path and
    /// whether it was written now.
    pub(crate) fn store(&self, schedule: &Schedule) -> Result<(PathBuf, bool), ScheduleError> {
        let path = self.dir.join(format!("{}.json", schedule_id(schedule)));
        if path.exists() {
            return Ok((path, false));
        }
        schedule.save(&path)?;
        Ok((path, true))
    }
}

/// Reads the file at `path` if it is, links resolved, a file below `root` (canonical).
fn read_entry(path: &Path, root: &Path) -> Content {
    let real = match std::fs::canonicalize(path) {
        Ok(real) => real,
        Err(e) => {
            return Content::Skipped(format!(
                "{}: a symbolic link that cannot be followed ({e}); it was not read",
                path.display()
            ));
        }
    };
    if !real.starts_with(root) {
        return Content::Skipped(format!(
            "{}: a symbolic link to {}, outside the regression corpus {}; it was not read (a \
             link out of a corpus could make a test read any file of the machine): copy the \
             file into the corpus instead",
            path.display(),
            real.display(),
            root.display()
        ));
    }
    match Schedule::load(path) {
        Ok(schedule) => Content::Schedule(schedule),
        Err(e @ ScheduleError::NotAFile { .. }) => Content::Skipped(e.to_string()),
        Err(e) => Content::Unreadable(e),
    }
}

/// A stable name for a schedule: FNV-1a (64 bits) over its decisions' thread ids, in hex.
/// (std's hasher may change between Rust releases; file names must not.)
pub(crate) fn schedule_id(schedule: &Schedule) -> String {
    format!("{:016x}", schedule_hash(schedule))
}

/// The hash [`schedule_id`] shows; also the seed of the executions that judge a stored
/// schedule, so a judgement is the same on every run.
pub(crate) fn schedule_hash(schedule: &Schedule) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for d in schedule.decisions() {
        for byte in (d.thread() as u64).to_le_bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

/// A path segment safe on every file system.
fn sanitize(segment: &str) -> String {
    segment
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
