//! The regression corpus: each failing schedule of a test, stored as its own JSON file under
//! `<crate root>/interleave-regressions/<test path>/`, replayed first on every later run.
//!
//! A file's name is a stable hash of its decisions, so the same failure is stored once, and
//! files are written atomically (a unique temporary file, then a rename), so test processes
//! failing at the same time never leave a half-written file.

use std::path::{Path, PathBuf};

use crate::schedule::{Schedule, ScheduleError};

/// The stored schedules of one test.
#[derive(Clone, Debug)]
pub(crate) struct Corpus {
    dir: PathBuf,
}

/// One stored file and what it holds.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) path: PathBuf,
    pub(crate) schedule: Result<Schedule, ScheduleError>,
}

impl Corpus {
    /// The corpus of test `test` (a `::`-separated path) under `root`.
    pub(crate) fn new(root: &Path, test: &str) -> Self {
        let mut dir = root.to_path_buf();
        for segment in test.split("::").filter(|s| !s.is_empty()) {
            dir.push(sanitize(segment));
        }
        Corpus { dir }
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
        Ok(paths
            .into_iter()
            .map(|path| Entry {
                schedule: Schedule::load(&path),
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

/// A stable name for a schedule: FNV-1a (64 bits) over its decisions' thread ids, in hex.
/// (std's hasher may change between Rust releases; file names must not.)
pub(crate) fn schedule_id(schedule: &Schedule) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for d in schedule.decisions() {
        for byte in (d.thread() as u64).to_le_bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
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
