//! Finding the schedule files named on the command line, and the test each one names.

use std::path::{Path, PathBuf};

use interleave_test::{Schedule, ScheduleError};

use crate::CliError;

/// The directory, below a crate root, where `#[interleave]` tests store failing schedules.
const CORPUS_DIR: &str = "interleave-regressions";

/// One schedule file to replay.
#[derive(Debug)]
pub(crate) struct ScheduleFile {
    /// The path as shown to the user (as given, or joined below a given directory).
    pub(crate) path: PathBuf,
    /// The full path of the test the schedule names (`<crate>::<module>::<fn>`), or why the
    /// file cannot be replayed.
    pub(crate) test: Result<String, String>,
}

/// The files named by `paths`: files as given (whatever their extension), directories
/// searched recursively for `*.json`, each directory's files sorted. A path that does not
/// exist is a usage error.
pub(crate) fn collect(paths: &[PathBuf]) -> Result<Vec<PathBuf>, CliError> {
    let mut files = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path)
            .map_err(|e| CliError::usage(format!("cannot read `{}`: {e}", path.display())))?;
        if meta.is_dir() {
            walk(path, &mut files).map_err(CliError::Failed)?;
        } else {
            files.push(path.clone());
        }
    }
    let mut seen = std::collections::HashSet::new();
    files.retain(|f| seen.insert(std::fs::canonicalize(f).unwrap_or_else(|_| f.clone())));
    Ok(files)
}

/// Adds the `*.json` files below `dir` to `out`, in sorted order.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let read = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut entries: Vec<PathBuf> = read
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    entries.sort();
    for entry in entries {
        if entry.is_dir() {
            walk(&entry, out)?;
        } else if entry.extension().is_some_and(|x| x == "json") {
            out.push(entry);
        }
    }
    Ok(())
}

/// Loads each file to learn its test, keeping those that pass the filters: `file` is a
/// substring of the path, `test` a substring of the test path. A file that cannot be loaded
/// is matched against the test path its place in a corpus directory implies (with `--test`,
/// it is dropped when it implies none).
pub(crate) fn load(
    files: Vec<PathBuf>,
    test: Option<&str>,
    file: Option<&str>,
) -> Vec<ScheduleFile> {
    files
        .into_iter()
        .filter(|path| file.is_none_or(|f| path.to_string_lossy().contains(f)))
        .map(|path| ScheduleFile {
            test: test_of(&path),
            path,
        })
        .filter(|s| match (test, &s.test) {
            (None, _) => true,
            (Some(t), Ok(name)) => name.contains(t),
            (Some(t), Err(_)) => implied_test(&s.path).is_some_and(|name| name.contains(t)),
        })
        .collect()
}

/// The test path a schedule file names, or why it cannot be replayed.
fn test_of(path: &Path) -> Result<String, String> {
    let schedule = Schedule::load(path).map_err(|e| match e {
        // The line names the file already.
        ScheduleError::InFile { error, .. } => error.to_string(),
        ScheduleError::Io { reason, .. } => reason,
        other => other.to_string(),
    })?;
    match schedule.test() {
        Some(test) => Ok(test.to_owned()),
        None => Err(
            "the schedule names no test; only schedules stored by #[interleave] tests \
                     can be replayed by cargo interleave"
                .to_owned(),
        ),
    }
}

/// The test path implied by a file's place below an `interleave-regressions` directory:
/// `.../interleave-regressions/a/b/<id>.json` implies `a::b`.
fn implied_test(path: &Path) -> Option<String> {
    let parts: Vec<String> = path
        .parent()?
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let start = parts.iter().rposition(|p| p == CORPUS_DIR)? + 1;
    (start < parts.len()).then(|| parts[start..].join("::"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory under the system's temporary directory.
    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("cargo-interleave-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn schedule_json(test: Option<&str>) -> String {
        let test = test.map_or("null".to_owned(), |t| format!("{t:?}"));
        format!(
            r#"{{"format": "interleave-test-schedule", "version": 1, "crate_version": "0.1.0",
                "test": {test}, "strategy": "random", "seed": 1, "iteration": 0, "decisions": []}}"#
        )
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn directories_are_searched_recursively_for_json_in_order() {
        let dir = scratch("walk");
        for f in [
            "b/2.json",
            "b/1.json",
            "a.json",
            "notes.txt",
            "c/d/e/3.json",
        ] {
            write(&dir.join(f), "{}");
        }
        let single = dir.join("notes.txt");
        let files = collect(&[dir.clone(), single.clone(), dir.join("a.json")]).unwrap();
        let expected: Vec<PathBuf> = [
            "a.json",
            "b/1.json",
            "b/2.json",
            "c/d/e/3.json",
            "notes.txt",
        ]
        .iter()
        .map(|f| dir.join(f))
        .collect();
        assert_eq!(
            files, expected,
            "a file named twice is kept once; a named file of any extension is kept"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_path_that_does_not_exist_is_a_usage_error() {
        let missing = std::env::temp_dir().join("cargo-interleave-no-such-dir/x.json");
        match collect(&[missing]) {
            Err(CliError::Usage(m)) => assert!(m.contains("no-such-dir/x.json"), "{m}"),
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn filters_keep_files_by_test_path_and_file_path() {
        let dir = scratch("filters").join(CORPUS_DIR);
        let racy = dir.join("t/racy/1.json");
        let fixed = dir.join("t/fixed/2.json");
        let broken = dir.join("t/racy/3.json");
        let anonymous = dir.join("4.json");
        write(&racy, &schedule_json(Some("t::racy")));
        write(&fixed, &schedule_json(Some("t::fixed")));
        write(&broken, "{ cut off");
        write(&anonymous, &schedule_json(None));
        let all = vec![
            racy.clone(),
            fixed.clone(),
            broken.clone(),
            anonymous.clone(),
        ];
        let paths = |v: Vec<ScheduleFile>| v.into_iter().map(|s| s.path).collect::<Vec<_>>();
        assert_eq!(paths(load(all.clone(), None, None)), all);
        assert_eq!(
            paths(load(all.clone(), Some("racy"), None)),
            [racy.clone(), broken.clone()]
        );
        assert_eq!(
            paths(load(all.clone(), Some("fixed"), None)),
            std::slice::from_ref(&fixed)
        );
        assert_eq!(paths(load(all.clone(), None, Some("2.json"))), [fixed]);

        let loaded = load(vec![racy, broken, anonymous], None, None);
        assert_eq!(loaded[0].test, Ok("t::racy".to_owned()));
        let broken_reason = loaded[1].test.as_ref().unwrap_err();
        assert!(
            broken_reason.starts_with("invalid schedule: "),
            "{broken_reason}"
        );
        assert!(
            !broken_reason.contains("3.json"),
            "the line names the file already: {broken_reason}"
        );
        assert!(
            loaded[2]
                .test
                .as_ref()
                .unwrap_err()
                .contains("names no test")
        );
    }

    #[test]
    fn the_corpus_layout_implies_a_test_path() {
        let p = Path::new("x/interleave-regressions/my_tests/inner/racy/0123.json");
        assert_eq!(implied_test(p).as_deref(), Some("my_tests::inner::racy"));
        assert_eq!(
            implied_test(Path::new("interleave-regressions/0123.json")),
            None
        );
        assert_eq!(implied_test(Path::new("elsewhere/0123.json")), None);
    }
}
