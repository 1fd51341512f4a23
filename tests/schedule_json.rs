//! The schedule file format: JSON round trip (property test), the golden file, bad input,
//! divergence on replay, and atomic save.
//!
//! # The golden files
//! `tests/data/schedule_v7.json` is the failing schedule of [`lost_update`] under
//! [`GOLDEN_SEED`], byte for byte, except for the `crate_version` value, which the comparison
//! ignores (the file keeps the version that last wrote it, so a version bump needs no update).
//! Its `"at"` fields are lines of this file: the model stays at the top so that edits below
//! it do not move them.
//!
//! After an intended change of the format or of the model, rewrite the golden file with
//! `INTERLEAVE_BLESS=1 cargo test --test schedule_json` and review its diff.
//!
//! `schedule_v1.json` to `schedule_v6.json` are the same run as the development formats 1 to
//! 6 wrote it, and `schedule_v5_task_waits.json` a future's waits in format 5: kept, never
//! rewritten, to check that files of older formats are refused with what to do (there is
//! one live format until the first release, see `schedule::VERSION`).

use interleave_test::sync::{Arc, Mutex};
use interleave_test::{Builder, FailureKind, Schedule, ScheduleError, StrategyKind, thread};

/// The seed of the run that produced the golden schedule.
const GOLDEN_SEED: u64 = 7;
/// The test name recorded in the golden schedule.
const GOLDEN_NAME: &str = "golden";

/// Lost update: two threads each read a counter under the lock, then write it back under a
/// second lock; when both read before either writes, one increment is lost.
fn lost_update() {
    let n = Arc::new(Mutex::new(0u32));
    let n1 = Arc::clone(&n);
    let left = thread::Builder::new()
        .name("left".to_owned())
        .spawn(move || {
            let seen = *n1.lock().unwrap();
            *n1.lock().unwrap() = seen + 1;
        })
        .unwrap();
    let n2 = Arc::clone(&n);
    let right = thread::spawn(move || {
        let seen = *n2.lock().unwrap();
        *n2.lock().unwrap() = seen + 1;
    });
    left.join().unwrap();
    right.join().unwrap();
    assert_eq!(*n.lock().unwrap(), 2, "an update was lost");
}

/// The same shape with three workers: the golden schedule does not fit it.
fn lost_update_three_threads() {
    let n = Arc::new(Mutex::new(0u32));
    let workers: Vec<_> = (0..3)
        .map(|_| {
            let n = Arc::clone(&n);
            thread::spawn(move || {
                let seen = *n.lock().unwrap();
                *n.lock().unwrap() = seen + 1;
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(*n.lock().unwrap(), 3, "an update was lost");
}

/// A model with one thread: it never takes a decision.
fn single_thread() {
    let n = Mutex::new(0u32);
    *n.lock().unwrap() += 1;
    assert_eq!(*n.lock().unwrap(), 1);
}

#[path = "schedule_json/round_trip.rs"]
mod round_trip;

#[path = "schedule_json/untrusted.rs"]
mod untrusted;

#[path = "schedule_json/recorded.rs"]
mod recorded;

mod golden {
    use super::*;
    use std::path::PathBuf;

    pub(crate) fn path() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/schedule_v7.json")
    }

    /// The golden run: the first failing execution of [`lost_update`] under [`GOLDEN_SEED`].
    pub(crate) fn failure() -> interleave_test::Failure {
        builder()
            .seed(GOLDEN_SEED)
            .iterations(1000)
            .check(lost_update)
            .expect_err("the lost update should be found within 1000 executions")
    }

    /// A builder independent of the `INTERLEAVE_*` environment variables.
    pub(crate) fn builder() -> Builder {
        Builder::new()
            .name(GOLDEN_NAME)
            .strategy(StrategyKind::Random)
            .max_steps(10_000)
    }

    pub(crate) fn text() -> String {
        std::fs::read_to_string(path()).unwrap_or_else(|e| {
            panic!(
                "cannot read {}: {e}; create it with INTERLEAVE_BLESS=1",
                path().display()
            )
        })
    }

    pub(crate) fn schedule() -> Schedule {
        Schedule::from_json(&text()).unwrap_or_else(|e| panic!("golden file: {e}"))
    }

    /// `text` with the value of `crate_version` replaced by `*`.
    pub(crate) fn without_crate_version(text: &str) -> String {
        const KEY: &str = "\"crate_version\": \"";
        let start = text.find(KEY).expect("a schedule has a crate_version") + KEY.len();
        let len = text[start..]
            .find('"')
            .expect("the crate_version string ends");
        format!("{}*{}", &text[..start], &text[start + len..])
    }
}

#[test]
fn golden_file_is_the_failing_schedule() {
    let failure = golden::failure();
    assert_eq!(failure.kind(), FailureKind::Panic);
    let text = failure.schedule().to_json();
    if std::env::var_os("INTERLEAVE_BLESS").is_some_and(|v| v == "1") {
        failure.schedule().save(golden::path()).unwrap();
        return;
    }
    assert_eq!(
        golden::without_crate_version(&text),
        golden::without_crate_version(&golden::text()),
        "the schedule differs from {}; if the change is intended, run with INTERLEAVE_BLESS=1",
        golden::path().display()
    );
}

#[test]
fn golden_file_describes_the_run() {
    let s = golden::schedule();
    assert_eq!(s.test(), Some(GOLDEN_NAME));
    assert_eq!(s.strategy(), "random");
    assert_eq!(s.seed(), Some(GOLDEN_SEED));
    assert!(!s.decisions().is_empty());
    for d in s.decisions() {
        assert!(d.thread() <= 2, "only threads 0, 1 and 2 exist: {d:?}");
        assert!(d.options() >= 2 && d.options() <= 3, "{d:?}");
        assert!(d.location().starts_with("tests/schedule_json.rs:"), "{d:?}");
        let name = if d.thread() == 1 {
            Some("left")
        } else if d.thread() == 0 {
            Some("main")
        } else {
            None
        };
        assert_eq!(d.name(), name, "{d:?}");
    }
    let steps: Vec<u64> = s.decisions().iter().map(|d| d.step()).collect();
    assert!(
        steps.windows(2).all(|w| w[0] <= w[1]),
        "steps should not decrease: {steps:?}"
    );
}

#[test]
fn golden_file_replays_the_same_failure() {
    let schedule = Schedule::load(golden::path()).unwrap();
    let original = golden::failure();
    let replayed = golden::builder()
        .replay(lost_update, &schedule)
        .unwrap_err();
    assert_eq!(replayed.kind(), FailureKind::Panic);
    assert!(
        replayed.message().contains("an update was lost"),
        "{}",
        replayed.message()
    );
    assert_eq!(replayed, original);
}

/// A well-formed schedule document with five decisions, to break one field at a time.
fn valid_doc() -> serde_json::Value {
    let d = |thread: u64, step: u64| serde_json::json!({ "thread": thread, "step": step, "of": 2, "name": null, "op": "mutex lock", "at": "src/a.rs:1:1" });
    serde_json::json!({
        "format": "interleave-test-schedule",
        "version": 7,
        "crate_version": "0.1.0",
        "test": "t",
        "strategy": "random",
        "seed": 3,
        "iteration": 0,
        "decisions": [d(1, 2), d(2, 3), d(1, 4), d(0, 6), d(2, 7)],
    })
}

/// Parses `doc` after `edit`, expecting an error.
fn parse_err(edit: impl FnOnce(&mut serde_json::Value)) -> ScheduleError {
    let mut doc = valid_doc();
    edit(&mut doc);
    Schedule::from_json(&doc.to_string()).expect_err("the edited schedule should be rejected")
}

#[test]
fn valid_doc_parses() {
    let s = Schedule::from_json(&valid_doc().to_string()).unwrap();
    assert_eq!(s.decisions().len(), 5);
}

#[test]
fn empty_text_is_reported_as_empty() {
    for text in ["", "  \n\t\n"] {
        let e = Schedule::from_json(text).unwrap_err();
        assert_eq!(e, ScheduleError::Empty, "{text:?}");
        assert!(e.to_string().contains("empty"), "{e}");
    }
}

#[test]
fn truncated_file_names_where_it_ends() {
    let golden = golden::text();
    let mut cut = golden.len() / 2;
    // Inside a line: a cut just after a newline ends at column 0 of the next line, which
    // `lines()` below does not count.
    while !golden.is_char_boundary(cut) || golden[..cut].ends_with('\n') {
        cut -= 1;
    }
    let half = &golden[..cut];
    let e = Schedule::from_json(half).unwrap_err();
    let line = half.lines().count();
    let column = half.lines().last().unwrap().chars().count();
    assert_eq!(e, ScheduleError::Truncated { line, column }, "{e}");
    let shown = e.to_string();
    assert!(
        shown.contains(&format!("line {line}, column {column}")),
        "{shown}"
    );
    assert!(shown.contains("cut off"), "{shown}");
}

#[test]
fn garbage_is_a_syntax_error_with_position() {
    let e = Schedule::from_json("{\"format\": @@@ }").unwrap_err();
    assert_eq!(
        e,
        ScheduleError::Syntax {
            line: 1,
            column: 12,
            reason: "expected value".into()
        }
    );
    assert_eq!(
        e.to_string(),
        "invalid schedule: not valid JSON at line 1, column 12: expected value"
    );

    let e = Schedule::from_json(
        "{\n  \"format\": \"interleave-test-schedule\",\n  \"version\": 1 1\n}",
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            ScheduleError::Syntax {
                line: 3,
                column: 16,
                ..
            }
        ),
        "{e:?}"
    );

    let e = Schedule::from_json("{\"format\": ").unwrap_err();
    assert!(
        matches!(e, ScheduleError::Truncated { line: 1, .. }),
        "{e:?}"
    );
}

#[test]
fn json_that_is_not_an_object_is_not_a_schedule() {
    for text in ["[1, 2, 3]", "42", "\"interleave-test-schedule\"", "null"] {
        let e = Schedule::from_json(text).unwrap_err();
        assert_eq!(e, ScheduleError::NotASchedule { found: None }, "{text}");
        assert!(
            e.to_string().contains("not an interleave-test schedule"),
            "{e}"
        );
    }
}

#[test]
fn missing_format_is_not_a_schedule() {
    let e = parse_err(|d| {
        d.as_object_mut().unwrap().remove("format");
    });
    assert_eq!(e, ScheduleError::NotASchedule { found: None });
    assert!(e.to_string().contains("no \"format\" field"), "{e}");
}

#[test]
fn another_format_is_not_a_schedule() {
    let e = parse_err(|d| d["format"] = "loom-checkpoint".into());
    assert_eq!(
        e,
        ScheduleError::NotASchedule {
            found: Some("\"loom-checkpoint\"".into())
        }
    );
    let shown = e.to_string();
    assert!(
        shown.contains("\"loom-checkpoint\"") && shown.contains("\"interleave-test-schedule\""),
        "{shown}"
    );
}

#[test]
fn a_newer_version_is_unsupported() {
    let e = parse_err(|d| d["version"] = 8.into());
    assert_eq!(
        e,
        ScheduleError::UnsupportedVersion {
            found: "8".into(),
            supported: 7
        }
    );
    let shown = e.to_string();
    assert!(
        shown.contains("version 8") && shown.contains("reads only version 7"),
        "{shown}"
    );
}

/// The golden files of the development formats 1 to 6 (the same run as `schedule_v7.json`,
/// as those formats wrote it, and a format-5 schedule of a future's waits) are refused with
/// the format they are of and what to do; nothing of them is replayed.
#[test]
fn old_formats_are_refused_with_what_to_do() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let files = [1, 2, 3, 4, 5, 6]
        .map(|v| (v, format!("schedule_v{v}.json")))
        .into_iter()
        .chain([(5, "schedule_v5_task_waits.json".to_owned())]);
    for (version, file) in files {
        let path = data.join(&file);
        let e = Schedule::load(&path).unwrap_err();
        let inner = ScheduleError::OldFormat {
            found: version,
            supported: 7,
        };
        assert!(e.is_old_format(), "{file}: {e:?}");
        assert_eq!(
            e,
            ScheduleError::InFile {
                path: path.clone(),
                error: Box::new(inner.clone())
            },
            "{file}"
        );
        let shown = inner.to_string();
        assert!(
            shown.starts_with(&format!("old schedule format {version}: "))
                && shown.contains("reads only format 7")
                && shown.contains("run the test again"),
            "{shown}"
        );
    }
    // A format-7 file read as format 6 is refused the same way.
    let e = parse_err(|d| d["version"] = 6.into());
    assert_eq!(
        e,
        ScheduleError::OldFormat {
            found: 6,
            supported: 7
        }
    );
}

/// Regression: a version written as a string was reported as "unsupported schedule version
/// "1": this interleave-test reads version 1", which contradicts itself.
#[test]
fn version_as_a_string_is_a_field_error() {
    let e = parse_err(|d| d["version"] = "1".into());
    assert_eq!(
        e,
        ScheduleError::Field {
            path: "version".into(),
            problem: "should be a non-negative integer, found \"1\"".into()
        }
    );
    assert_eq!(
        e.to_string(),
        "invalid schedule: field `version` should be a non-negative integer, found \"1\""
    );
}

#[test]
fn missing_version_is_a_field_error() {
    let e = parse_err(|d| {
        d.as_object_mut().unwrap().remove("version");
    });
    assert_eq!(
        e,
        ScheduleError::Field {
            path: "version".into(),
            problem: "is missing".into()
        }
    );
}

#[test]
fn missing_decisions_is_a_field_error() {
    let e = parse_err(|d| {
        d.as_object_mut().unwrap().remove("decisions");
    });
    assert_eq!(
        e,
        ScheduleError::Field {
            path: "decisions".into(),
            problem: "is missing".into()
        }
    );
    assert_eq!(
        e.to_string(),
        "invalid schedule: field `decisions` is missing"
    );
}

#[test]
fn negative_thread_names_the_decision() {
    let e = parse_err(|d| d["decisions"][3]["thread"] = (-1).into());
    assert_eq!(
        e,
        ScheduleError::Field {
            path: "decisions[3].thread".into(),
            problem: "should be a non-negative integer, found -1".into()
        }
    );
    assert!(e.to_string().contains("`decisions[3].thread`"), "{e}");
}

#[test]
fn string_thread_names_the_decision() {
    let e = parse_err(|d| d["decisions"][3]["thread"] = "x".into());
    assert_eq!(
        e,
        ScheduleError::Field {
            path: "decisions[3].thread".into(),
            problem: "should be a non-negative integer, found \"x\"".into()
        }
    );
    assert!(e.to_string().contains("`decisions[3].thread`"), "{e}");
}

#[test]
fn a_decision_of_one_option_is_rejected() {
    let e = parse_err(|d| d["decisions"][1]["of"] = 1.into());
    let ScheduleError::Field { path, problem } = &e else {
        panic!("expected a field error: {e:?}")
    };
    assert_eq!(path, "decisions[1].of");
    assert!(
        problem.contains("at least 2") && problem.contains("found 1"),
        "{problem}"
    );
}

/// A directory of its own under the system temp dir, removed when dropped.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir = std::env::temp_dir().join(format!(
            "interleave-test-{tag}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn load_of_a_missing_file_names_the_path() {
    let dir = TempDir::new("missing");
    let path = dir.0.join("no-such-schedule.json");
    let e = Schedule::load(&path).unwrap_err();
    let ScheduleError::Io {
        path: found,
        reason,
    } = &e
    else {
        panic!("expected an io error: {e:?}")
    };
    assert_eq!(found, &path);
    assert!(!reason.is_empty());
    assert!(e.to_string().contains(&path.display().to_string()), "{e}");
}

#[test]
fn load_of_bad_content_names_the_path_and_the_problem() {
    let dir = TempDir::new("bad-content");
    let path = dir.0.join("bad.json");
    std::fs::write(
        &path,
        "{\"format\": \"interleave-test-schedule\", \"version\": 8}",
    )
    .unwrap();
    let e = Schedule::load(&path).unwrap_err();
    let expected_inner = ScheduleError::UnsupportedVersion {
        found: "8".into(),
        supported: 7,
    };
    assert_eq!(
        e,
        ScheduleError::InFile {
            path: path.clone(),
            error: Box::new(expected_inner.clone())
        }
    );
    assert_eq!(
        e.to_string(),
        format!("{}: {expected_inner}", path.display())
    );
}

#[test]
fn check_test_rejects_another_test() {
    let s = golden::schedule();
    assert_eq!(s.check_test(GOLDEN_NAME), Ok(()));
    let e = s.check_test("other").unwrap_err();
    assert_eq!(
        e,
        ScheduleError::WrongTest {
            expected: "other".into(),
            found: GOLDEN_NAME.into()
        }
    );
    let shown = e.to_string();
    assert!(
        shown.contains("`golden`") && shown.contains("`other`"),
        "{shown}"
    );
}

#[test]
fn replay_under_another_name_is_a_divergence_naming_both() {
    let schedule = golden::schedule();
    let f = Builder::new()
        .name("other")
        .replay(lost_update, &schedule)
        .unwrap_err();
    assert_eq!(f.kind(), FailureKind::Divergence);
    assert!(
        f.message().contains("`golden`") && f.message().contains("`other`"),
        "{}",
        f.message()
    );
}

/// The decision index in a divergence message: "replay diverged at decision N (step S)".
fn diverged_at(message: &str) -> usize {
    let rest = message
        .strip_prefix("replay diverged at decision ")
        .unwrap_or_else(|| panic!("not a divergence message: {message}"));
    rest.split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("no decision index: {message}"))
}

#[test]
fn golden_schedule_diverges_on_three_threads() {
    let schedule = golden::schedule();
    let f = golden::builder()
        .replay(lost_update_three_threads, &schedule)
        .unwrap_err();
    assert_eq!(f.kind(), FailureKind::Divergence, "{f}");
    assert!(
        diverged_at(f.message()) <= schedule.decisions().len(),
        "{}",
        f.message()
    );
}

#[test]
fn golden_schedule_diverges_on_a_model_without_decisions() {
    let schedule = golden::schedule();
    let f = golden::builder()
        .replay(single_thread, &schedule)
        .unwrap_err();
    assert_eq!(f.kind(), FailureKind::Divergence, "{f}");
    assert_eq!(diverged_at(f.message()), 0, "{}", f.message());
    let first = schedule.decisions()[0].thread();
    assert!(
        f.message().contains(&format!("expects thread #{first}")),
        "{}",
        f.message()
    );
}

#[test]
fn schedule_missing_its_last_decision_diverges() {
    let mut doc: serde_json::Value = serde_json::from_str(&golden::text()).unwrap();
    let decisions = doc["decisions"].as_array_mut().unwrap();
    decisions.pop();
    let kept = decisions.len();
    let short = Schedule::from_json(&doc.to_string()).unwrap();
    let f = golden::builder().replay(lost_update, &short).unwrap_err();
    assert_eq!(f.kind(), FailureKind::Divergence, "{f}");
    assert_eq!(diverged_at(f.message()), kept, "{}", f.message());
    assert!(f.message().contains("no more decisions"), "{}", f.message());
}

#[test]
fn save_is_atomic_and_leaves_one_file() {
    let dir = TempDir::new("save");
    let schedule = golden::schedule();
    let path = dir.0.join("nested").join("lost-update.json");
    schedule.save(&path).unwrap();
    schedule.save(&path).unwrap(); // overwriting leaves no temporary file either
    assert_eq!(dir.files(), ["nested"]);
    let nested = TempDir(dir.0.join("nested"));
    assert_eq!(nested.files(), ["lost-update.json"]);
    assert_eq!(Schedule::load(&path).unwrap(), schedule);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), schedule.to_json());
}

/// Regression: every save of one path in a process used the same temporary file, so
/// concurrent saves (parallel tests failing with the same name and seed) could rename each
/// other's half-written file or fail with "no such file".
#[test]
fn concurrent_saves_of_one_path_all_succeed() {
    let dir = TempDir::new("concurrent-save");
    let path = dir.0.join("same.json");
    let schedule = golden::schedule();
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..25 {
                    schedule.save(&path).unwrap();
                }
            });
        }
    });
    assert_eq!(dir.files(), ["same.json"]);
    assert_eq!(Schedule::load(&path).unwrap(), schedule);
}
