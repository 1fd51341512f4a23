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
            Err(e) => return Err(crate::schedule::io_error(&self.dir, &e)),
        };
        let mut paths: Vec<PathBuf> = read
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        paths.sort();
        let root = std::fs::canonicalize(&self.root)
            .map_err(|e| crate::schedule::io_error(&self.root, &e))?;
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

/// A stable name for a schedule: FNV-1a (64 bits) over its decisions, in hex (see
/// [`schedule_hash`]). (std's hasher may change between Rust releases; file names must not.)
pub(crate) fn schedule_id(schedule: &Schedule) -> String {
    format!("{:016x}", schedule_hash(schedule))
}

/// The hash [`schedule_id`] shows; also the seed of the executions that judge a stored
/// schedule, so a judgement is the same on every run. It reads each decision's thread id
/// and, for a pick (which store a load reads, ...), its kind and option: two failures that
/// differ only in picks are two schedules. A schedule without picks hashes its thread ids
/// alone, so its name is the one it was always stored under.
pub(crate) fn schedule_hash(schedule: &Schedule) -> u64 {
    schedule.decisions().iter().fold(FNV_OFFSET, |hash, d| {
        let hash = fnv(hash, &(d.thread() as u64).to_le_bytes());
        match d.pick() {
            Some((kind, option)) => {
                let hash = fnv(fnv(hash, &[0xff]), kind.as_bytes());
                fnv(hash, &(option as u64).to_le_bytes())
            }
            None => hash,
        }
    })
}

/// FNV-1a's 64-bit offset basis.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a (64 bits): `hash` continued over `bytes`.
fn fnv(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
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

#[cfg(test)]
mod tests {
    use super::{Corpus, schedule_id};
    use crate::schedule::Schedule;

    /// A format-4 schedule whose decisions are `(thread, pick)`, a pick being a "read
    /// from" option.
    fn schedule(decisions: &[(usize, Option<usize>)]) -> Schedule {
        let lines: Vec<String> = decisions
            .iter()
            .enumerate()
            .map(|(i, (thread, pick))| {
                let pick = pick.map_or(String::new(), |v| {
                    format!(r#", "pick": "read from", "value": {v}"#)
                });
                format!(
                    r#"{{"thread": {thread}, "step": {}, "of": 2{pick}, "name": null,
                        "op": "atomic load", "at": "src/a.rs:1:1"}}"#,
                    i + 1
                )
            })
            .collect();
        let text = format!(
            r#"{{"format": "interleave-test-schedule", "version": 7, "crate_version": "0.1.0",
               "test": "t", "strategy": "random", "seed": 1, "iteration": 0,
               "decisions": [{}]}}"#,
            lines.join(", ")
        );
        Schedule::from_json(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    #[test]
    fn schedules_that_differ_only_in_picks_have_different_names() {
        let a = schedule(&[(1, None), (1, Some(0)), (2, None)]);
        let b = schedule(&[(1, None), (1, Some(1)), (2, None)]);
        assert_ne!(schedule_id(&a), schedule_id(&b));
        assert_eq!(schedule_id(&a), schedule_id(&a.clone()));
    }

    #[test]
    fn a_schedule_without_picks_keeps_its_thread_ids_name() {
        // FNV-1a over the little-endian u64 thread ids 1, 2, 1: the name such a schedule
        // has had since the corpus began, worked out here by hand.
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for t in [1u64, 2, 1] {
            for byte in t.to_le_bytes() {
                hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        assert_eq!(
            schedule_id(&schedule(&[(1, None), (2, None), (1, None)])),
            format!("{hash:016x}")
        );
    }

    #[test]
    fn both_of_two_pick_variants_are_stored_once_each() {
        let root = std::env::temp_dir().join(format!("corpus-picks-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let dir = root.join("t");
        std::fs::create_dir_all(&dir).unwrap();
        let corpus = Corpus {
            root: root.clone(),
            dir: dir.clone(),
        };
        let a = schedule(&[(1, None), (1, Some(0)), (2, None)]);
        let b = schedule(&[(1, None), (1, Some(1)), (2, None)]);
        assert!(corpus.store(&a).unwrap().1, "the first is written");
        assert!(
            corpus.store(&b).unwrap().1,
            "the second, differing in a pick, too"
        );
        assert!(
            !corpus.store(&a).unwrap().1,
            "the same decisions again are not"
        );
        let _ = std::fs::remove_dir_all(&root);
    }
}
