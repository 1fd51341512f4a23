//! Finding the schedule files named on the command line, and the test each one names.
//!
//! Schedule files are untrusted (they come with bug reports and cloned repositories). A
//! directory is searched without following symbolic links to directories (so a link cycle
//! cannot make the search loop; a directory inside the searched one is searched directly
//! anyway), and a link to a file is followed only if the file is inside the directory given
//! on the command line. A file named on the command line is read even through a link: the
//! user named it. What is not a regular file is refused unread by `Schedule::load`.

use std::path::{Path, PathBuf};

use interleave_test::{Build, Schedule};

use crate::CliError;

/// The directory, below a crate root, where `#[interleave]` tests store failing schedules.
const CORPUS_DIR: &str = "interleave-regressions";

/// A file found on the command line or in a directory named there.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Found {
    /// The path as shown to the user (as given, or joined below a given directory).
    pub(crate) path: PathBuf,
    /// Why it is not read, if it is not: a symbolic link out of the searched directory.
    pub(crate) refused: Option<String>,
}

/// One schedule file to replay.
#[derive(Debug)]
pub(crate) struct ScheduleFile {
    /// The path as shown to the user (as given, or joined below a given directory).
    pub(crate) path: PathBuf,
    /// The full path of the test the schedule names (`<crate>::<module>::<fn>`), or why the
    /// file cannot be replayed.
    pub(crate) test: Result<String, String>,
    /// How the test binary that stored it was built, as the file records it (only the
    /// `interleave` cfg and the profile, both validated as `true` or `false`).
    pub(crate) build: Build,
}

/// The files named by `paths`: files as given (whatever their extension), directories
/// searched recursively for `*.json`, each directory's files sorted. A path that does not
/// exist is a usage error.
pub(crate) fn collect(paths: &[PathBuf]) -> Result<Vec<Found>, CliError> {
    let mut files = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path)
            .map_err(|e| CliError::usage(format!("cannot read `{}`: {e}", path.display())))?;
        if meta.is_dir() {
            let root = std::fs::canonicalize(path)
                .map_err(|e| CliError::Failed(format!("cannot resolve {}: {e}", path.display())))?;
            walk(path, &root, &mut files).map_err(CliError::Failed)?;
        } else {
            files.push(Found {
                path: path.clone(),
                refused: None,
            });
        }
    }
    let mut seen = std::collections::HashSet::new();
    files
        .retain(|f| seen.insert(std::fs::canonicalize(&f.path).unwrap_or_else(|_| f.path.clone())));
    Ok(files)
}

/// Adds the `*.json` files below `dir` to `out`, in sorted order; `root` is the canonical
/// path of the directory the search started from.
fn walk(dir: &Path, root: &Path, out: &mut Vec<Found>) -> Result<(), String> {
    let read = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut entries = read
        .map(|e| e.and_then(|e| Ok((e.path(), e.file_type()?))))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, file_type) in entries {
        let json = path.extension().is_some_and(|x| x == "json");
        if file_type.is_dir() {
            walk(&path, root, out)?;
        } else if file_type.is_symlink() {
            if let Some(found) = follow(path, root, json) {
                out.push(found);
            }
        } else if json {
            out.push(Found {
                path,
                refused: None,
            });
        }
    }
    Ok(())
}

/// What to do with the symbolic link at `path` met in a search of `root`: a link to a file
/// inside `root` is followed if its name ends in `.json` (`json`), one out of `root` is
/// refused. A link to a directory is not followed: one inside `root` is searched directly,
/// one out of it is named on stderr.
fn follow(path: PathBuf, root: &Path, json: bool) -> Option<Found> {
    let refuse = |reason: String| {
        json.then(|| Found {
            path: path.clone(),
            refused: Some(reason),
        })
    };
    let real = match std::fs::canonicalize(&path) {
        Ok(real) => real,
        Err(e) => return refuse(format!("a symbolic link that cannot be followed ({e})")),
    };
    let inside = real.starts_with(root);
    if real.is_dir() {
        if !inside {
            eprintln!(
                "cargo-interleave: skipped {}: a symbolic link to the directory {}, outside {}; \
                 not followed (name that directory to search it)",
                path.display(),
                real.display(),
                root.display()
            );
        }
        return None;
    }
    if !inside {
        return refuse(format!(
            "a symbolic link to {}, outside {}; it was not read (a link in a searched \
             directory is followed only inside it): name the file itself to replay it",
            real.display(),
            root.display()
        ));
    }
    json.then_some(Found {
        path,
        refused: None,
    })
}

/// Loads each file to learn its test, keeping those that pass the filters: `file` is a
/// substring of the path, `test` a substring of the test path. A file that cannot be loaded
/// is matched against the test path its place in a corpus directory implies (with `--test`,
/// it is dropped when it implies none).
pub(crate) fn load(files: Vec<Found>, test: Option<&str>, file: Option<&str>) -> Vec<ScheduleFile> {
    files
        .into_iter()
        .filter(|found| file.is_none_or(|f| found.path.to_string_lossy().contains(f)))
        .map(|Found { path, refused }| {
            let (test, build) = match refused {
                Some(reason) => (Err(reason), Build::default()),
                None => test_of(&path),
            };
            ScheduleFile { path, test, build }
        })
        .filter(|s| match (test, &s.test) {
            (None, _) => true,
            (Some(t), Ok(name)) => name.contains(t),
            (Some(t), Err(_)) => implied_test(&s.path).is_some_and(|name| name.contains(t)),
        })
        .collect()
}

/// The test path a schedule file names, checked to be a Rust path (never an option for
/// the test binary), or why it cannot be replayed; and the build it records.
fn test_of(path: &Path) -> (Result<String, String>, Build) {
    let schedule = match Schedule::load(path) {
        Ok(schedule) => schedule,
        Err(e) => {
            // The line names the file already.
            let e = e.to_string();
            let prefix = format!("{}: ", path.display());
            let e = e
                .strip_prefix(&prefix)
                .map_or_else(|| e.clone(), str::to_owned);
            return (Err(e), Build::default());
        }
    };
    let test = match schedule.test_path() {
        Ok(Some(test)) => Ok(test.to_owned()),
        Ok(None) => Err(
            "the schedule names no test; only schedules stored by #[interleave] tests \
                     can be replayed by cargo interleave"
                .to_owned(),
        ),
        Err(e) => Err(e.to_string()),
    };
    (test, schedule.build())
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
            r#"{{"format": "interleave-test-schedule", "version": 7, "crate_version": "0.1.0",
                "test": {test}, "strategy": "random", "seed": 1, "iteration": 0, "decisions": []}}"#
        )
    }

    fn paths_of(found: Vec<Found>) -> Vec<PathBuf> {
        found
            .into_iter()
            .map(|f| {
                assert_eq!(f.refused, None, "{}", f.path.display());
                f.path
            })
            .collect()
    }

    fn found(paths: &[PathBuf]) -> Vec<Found> {
        paths
            .iter()
            .map(|path| Found {
                path: path.clone(),
                refused: None,
            })
            .collect()
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
        let files = paths_of(collect(&[dir.clone(), single.clone(), dir.join("a.json")]).unwrap());
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
        let base = scratch("filters");
        let dir = base.join(CORPUS_DIR);
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
        assert_eq!(paths(load(found(&all), None, None)), all);
        assert_eq!(
            paths(load(found(&all), Some("racy"), None)),
            [racy.clone(), broken.clone()]
        );
        assert_eq!(
            paths(load(found(&all), Some("fixed"), None)),
            std::slice::from_ref(&fixed)
        );
        assert_eq!(paths(load(found(&all), None, Some("2.json"))), [fixed]);

        let loaded = load(found(&[racy, broken, anonymous]), None, None);
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
        std::fs::remove_dir_all(base).unwrap();
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

    /// Regression (issue 7): a test name from a file was passed to the test binary as is.
    #[test]
    fn a_test_name_that_is_not_a_rust_path_is_refused() {
        let base = scratch("injection");
        let dir = base.join(CORPUS_DIR);
        let file = dir.join("t/racy/1.json");
        write(&file, &schedule_json(Some("t::--logfile=/tmp/x.txt")));
        let loaded = load(found(std::slice::from_ref(&file)), None, None);
        let reason = loaded[0].test.as_ref().unwrap_err();
        assert!(
            reason.starts_with("invalid schedule: field `test` should be a Rust test path"),
            "{reason}"
        );
        std::fs::remove_dir_all(base).unwrap();
    }

    /// Links: followed to a file inside the searched directory, refused out of it; links
    /// to directories never followed, so a cycle ends.
    #[cfg(unix)]
    #[test]
    fn a_search_follows_links_only_to_files_inside_it() {
        use std::os::unix::fs::symlink;
        let base = scratch("links");
        let dir = base.join("searched");
        write(&dir.join("a/1.json"), "{}");
        write(&base.join("outside.json"), "{}");
        symlink(dir.join("a/1.json"), dir.join("b.json")).unwrap();
        symlink(base.join("outside.json"), dir.join("c.json")).unwrap();
        symlink(&dir, dir.join("a/cycle")).unwrap();
        symlink(&base, dir.join("up")).unwrap();
        symlink(dir.join("nowhere"), dir.join("dangling.json")).unwrap();
        let files = collect(std::slice::from_ref(&dir)).unwrap();
        let shown: Vec<(PathBuf, bool)> = files
            .iter()
            .map(|f| {
                (
                    f.path.strip_prefix(&dir).unwrap().to_owned(),
                    f.refused.is_some(),
                )
            })
            .collect();
        let expected = [
            ("a/1.json", false),
            ("c.json", true),
            ("dangling.json", true),
        ];
        let expected: Vec<(PathBuf, bool)> = expected
            .iter()
            .map(|(p, refused)| (PathBuf::from(p), *refused))
            .collect();
        assert_eq!(shown, expected, "b.json is a.json's duplicate: {files:?}");
        let out = files[1].refused.as_deref().unwrap();
        assert!(out.contains("outside") && out.contains("not read"), "{out}");

        // Named on the command line, a link is followed wherever it leads.
        let named = collect(&[dir.join("c.json")]).unwrap();
        assert_eq!(named[0].refused, None);
        std::fs::remove_dir_all(base).unwrap();
    }
}
