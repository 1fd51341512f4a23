//! The regression corpus of `#[interleave]` tests, driven through the entry the attribute
//! expands to: a failure is stored once, replayed first on the next run, reported as fixed
//! or diverged when the model changed, and a corrupted file is named.

use crate::common;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use interleave_test::__private::{TestSpec, run_test};
use interleave_test::sync::{Arc, Mutex};
use interleave_test::{Clock, StrategyKind, thread};

/// A fresh crate root under the temp dir, leaked for the `'static` spec, and the guard that
/// removes it when the test ends, passed or failed.
fn fresh_root(tag: &str) -> (&'static str, Cleanup) {
    let dir = std::env::temp_dir().join(format!("interleave-corpus-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let root = Box::leak(dir.to_string_lossy().into_owned().into_boxed_str());
    (root, Cleanup(dir))
}

/// Removes its directory when dropped.
struct Cleanup(PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn spec(root: &'static str) -> TestSpec {
    TestSpec {
        name: "corpus_tests::lost_update",
        manifest_dir: root,
        iterations: Some(1000),
        seed: Some(3),
        max_steps: None,
        strategy: Some(StrategyKind::Random),
        partial: None,
        clock: None,
        cfg_interleave: false,
        release: false,
    }
}

fn lost_update(fixed: bool) -> impl Fn() + Sync {
    move || {
        let m = Arc::new(Mutex::new(0));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let m = Arc::clone(&m);
                thread::spawn(move || {
                    if fixed {
                        *m.lock().unwrap() += 1;
                    } else {
                        let v = *m.lock().unwrap();
                        *m.lock().unwrap() = v + 1;
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(*m.lock().unwrap(), 2, "lost update");
    }
}

fn failure_text(f: impl FnOnce()) -> Option<String> {
    catch_unwind(AssertUnwindSafe(f))
        .err()
        .map(|p| p.downcast_ref::<String>().cloned().unwrap())
}

fn stored_files(root: &str) -> Vec<PathBuf> {
    let dir = Path::new(root).join("interleave-regressions/corpus_tests/lost_update");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map(|r| r.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn a_failure_is_stored_once_and_replayed_first_with_the_same_report() {
    let (root, _cleanup) = fresh_root("store");
    let first = failure_text(|| run_test(&spec(root), lost_update(false))).expect("fails");
    let files = stored_files(root);
    assert_eq!(files.len(), 1, "{files:?}");
    let file = files[0].display().to_string();
    assert!(
        first.contains(&format!("the schedule is stored in {file}")),
        "{first}"
    );
    // This build's switches, which the command repeats; no `--test`: the spec's crate,
    // `corpus_tests`, is no test target of this package.
    let (rustflags, release) = common::build_switches();
    assert!(
        first.contains(&format!(
            "replay it: {rustflags}cargo interleave replay{release} {file}\n"
        )),
        "{first}"
    );
    assert!(
        first.contains(&format!(
            "INTERLEAVE_REPLAY={file} {rustflags}cargo test{release} -- --exact lost_update"
        )),
        "{first}"
    );
    // The next run fails at once from the stored schedule, with the same report.
    let again = failure_text(|| run_test(&spec(root), lost_update(false))).expect("still fails");
    let report = |text: &str| text.split("\n\n").take(3).collect::<Vec<_>>().join("\n\n");
    assert_eq!(report(&again), report(&first));
    assert!(
        again.contains(&format!(
            "this failure was stored before, in {file}, and still happens"
        )),
        "{again}"
    );
    assert_eq!(stored_files(root), files, "nothing is written twice");
}

#[test]
fn a_fixed_model_keeps_its_stored_schedule_and_passes() {
    let (root, _cleanup) = fresh_root("fixed");
    failure_text(|| run_test(&spec(root), lost_update(false))).expect("fails");
    let files = stored_files(root);
    assert_eq!(
        failure_text(|| run_test(&spec(root), lost_update(true))),
        None,
        "the fixed model passes"
    );
    assert_eq!(stored_files(root), files, "the stored schedule stays");
}

/// Two milliseconds of work under a timeout of a second: fails on the loaded clock only.
fn generous_timeout() {
    use interleave_test::sync::mpsc;
    let (tx, rx) = mpsc::channel();
    let worker = thread::spawn(move || {
        thread::sleep(std::time::Duration::from_millis(2));
        tx.send(()).unwrap();
    });
    let got = rx.recv_timeout(std::time::Duration::from_secs(1));
    assert_eq!(got, Ok(()), "timed out");
    worker.join().unwrap();
}

/// A test that failed by an early timeout and was then given the paused clock passes: a
/// stored schedule is judged on the test's clock, not on the one it recorded (a strict
/// replay uses the file's).
#[test]
fn a_test_moved_to_the_paused_clock_passes_its_stored_early_timeout() {
    let (root, _cleanup) = fresh_root("clock");
    let loaded = spec(root);
    failure_text(|| run_test(&loaded, generous_timeout)).expect("fails on the loaded clock");
    assert_eq!(stored_files(root).len(), 1);
    let paused = TestSpec {
        clock: Some(Clock::Paused),
        ..spec(root)
    };
    assert_eq!(failure_text(|| run_test(&paused, generous_timeout)), None);
    assert_eq!(stored_files(root).len(), 1, "the stored schedule stays");
}

#[test]
fn a_schedule_that_no_longer_fits_does_not_fail_the_run() {
    let (root, _cleanup) = fresh_root("diverged");
    failure_text(|| run_test(&spec(root), lost_update(false))).expect("fails");
    // One thread only: the stored decisions cannot be followed.
    let single = || {
        let m = Mutex::new(0);
        *m.lock().unwrap() += 1;
    };
    assert_eq!(failure_text(|| run_test(&spec(root), single)), None);
    assert_eq!(stored_files(root).len(), 1);
}

#[test]
fn a_corrupted_file_is_named_in_the_failure() {
    let (root, _cleanup) = fresh_root("corrupt");
    failure_text(|| run_test(&spec(root), lost_update(false))).expect("fails");
    let file = stored_files(root).remove(0);
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, &text[..text.len() / 2]).unwrap();
    let msg = failure_text(|| run_test(&spec(root), lost_update(true)))
        .expect("a corrupted file fails the test");
    assert!(
        msg.contains(&format!(
            "the stored schedule {} cannot be read",
            file.display()
        )),
        "{msg}"
    );
    assert!(msg.contains("cut off"), "{msg}");
}

/// A stored schedule of an older development format fails the test with what to do: it is
/// not replayed (its decisions were taken under other rules), and nothing is deleted.
#[test]
fn a_file_of_an_old_format_fails_the_test_with_what_to_do() {
    let (root, _cleanup) = fresh_root("old-format");
    failure_text(|| run_test(&spec(root), lost_update(false))).expect("fails");
    let file = stored_files(root).remove(0);
    let text = std::fs::read_to_string(&file).unwrap();
    let old = text.replacen("\"version\": 7,", "\"version\": 5,", 1);
    assert_ne!(old, text);
    std::fs::write(&file, &old).unwrap();
    let msg = failure_text(|| run_test(&spec(root), lost_update(true)))
        .expect("a file of an old format fails the test");
    assert!(
        msg.contains(&format!(
            "the stored schedule {} cannot be read: old schedule format 5: this \
             interleave-test reads only format 7",
            file.display()
        )),
        "{msg}"
    );
    assert!(msg.contains("delete it and run the test again"), "{msg}");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        old,
        "the file stays"
    );
}

#[test]
fn concurrent_failing_runs_store_complete_files_without_clobbering() {
    let (root, _cleanup) = fresh_root("concurrent");
    std::thread::scope(|s| {
        for seed in 0..6u64 {
            s.spawn(move || {
                let spec = TestSpec {
                    seed: Some(seed % 3),
                    ..spec(root)
                };
                failure_text(|| run_test(&spec, lost_update(false))).expect("fails");
            });
        }
    });
    let files = stored_files(root);
    assert!((1..=3).contains(&files.len()), "{files:?}");
    for f in &files {
        interleave_test::Schedule::load(f).unwrap_or_else(|e| panic!("{e}"));
    }
    let leftovers: Vec<_> = std::fs::read_dir(files[0].parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_none_or(|x| x != "json"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

/// Runs `f` on another thread and returns its failure text, failing the test if it takes
/// more than 60 s: a test must never hang on a file in its corpus.
fn failure_text_at_once(f: impl FnOnce() + Send + 'static) -> Option<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(failure_text(f)));
    rx.recv_timeout(std::time::Duration::from_secs(60))
        .expect("the test ended")
}

/// The directory of the test's stored files, created.
fn corpus_dir(root: &str) -> PathBuf {
    let dir = Path::new(root).join("interleave-regressions/corpus_tests/lost_update");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Regression (issue 7): a FIFO named `*.json` in the corpus hung the test, and a device
/// was read for ever. Anything but a regular file is skipped unread and does not fail the run.
#[cfg(unix)]
#[test]
fn special_files_in_the_corpus_are_skipped_unread() {
    let (root, _cleanup) = fresh_root("special");
    let dir = corpus_dir(root);
    let fifo = dir.join("fifo.json");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.expect("mkfifo runs").success());
    std::fs::create_dir(dir.join("dir.json")).unwrap();
    if Path::new("/dev/zero").exists() {
        // A link to a device is inside no corpus: skipped before its type is even checked.
        std::os::unix::fs::symlink("/dev/zero", dir.join("zero.json")).unwrap();
    }
    let text = failure_text_at_once(move || run_test(&spec(root), lost_update(true)));
    assert_eq!(text, None, "the skipped files do not fail the run");
}

/// Links into the corpus are followed; a link out of it is not, even to a file that would
/// fail the test if it were read.
#[cfg(unix)]
#[test]
fn a_link_is_followed_only_inside_the_corpus() {
    let (root, _cleanup) = fresh_root("links");
    failure_text(|| run_test(&spec(root), lost_update(false))).expect("fails");
    let stored = stored_files(root).remove(0);
    let shared = Path::new(root).join("interleave-regressions/shared.json");
    std::fs::rename(&stored, &shared).unwrap();
    std::os::unix::fs::symlink(&shared, &stored).unwrap();
    let again = failure_text_at_once(move || run_test(&spec(root), lost_update(false)))
        .expect("the linked schedule is replayed and still fails");
    assert!(again.contains("this failure was stored before"), "{again}");

    let (root, _cleanup) = fresh_root("link-out");
    let outside = Path::new(root).join("outside.json");
    std::fs::write(&outside, "not a schedule").unwrap();
    std::os::unix::fs::symlink(&outside, corpus_dir(root).join("out.json")).unwrap();
    let text = failure_text_at_once(move || run_test(&spec(root), lost_update(true)));
    assert_eq!(text, None, "the link out of the corpus is not read");
}

/// A file over `Schedule::MAX_FILE_BYTES` fails the test at once, with the limit, unread
/// (it is sparse: it takes no disk space).
#[test]
fn an_oversized_file_in_the_corpus_fails_the_test_at_once() {
    let (root, _cleanup) = fresh_root("oversized");
    let big = corpus_dir(root).join("big.json");
    let file = std::fs::File::create(&big).unwrap();
    file.set_len(interleave_test::Schedule::MAX_FILE_BYTES + 1)
        .unwrap();
    let msg = failure_text_at_once(move || run_test(&spec(root), lost_update(true)))
        .expect("an oversized file fails the test");
    assert!(msg.contains("cannot be read"), "{msg}");
    assert!(
        msg.contains(&format!(
            "more than the {} a schedule may have",
            interleave_test::Schedule::MAX_FILE_BYTES
        )),
        "{msg}"
    );
}

/// Regression (issue 7): a 10 MB wrong-typed field in the corpus printed a 10 MB line.
#[test]
fn a_10_mb_bad_field_in_the_corpus_gives_a_short_message() {
    let (root, _cleanup) = fresh_root("long-field");
    failure_text(|| run_test(&spec(root), lost_update(false))).expect("fails");
    let file = stored_files(root).remove(0);
    let text = std::fs::read_to_string(&file).unwrap();
    let huge = format!("\"iteration\": \"{}\"", "x".repeat(10 << 20));
    let edited = text.replacen("\"iteration\": ", &format!("{huge}, \"ignored\": "), 1);
    assert_ne!(edited, text);
    std::fs::write(&file, edited).unwrap();
    let msg = failure_text_at_once(move || run_test(&spec(root), lost_update(true)))
        .expect("the file fails the test");
    let first_line = msg.lines().next().unwrap();
    let error = first_line.split_once(" cannot be read: ").unwrap().1;
    assert!(error.len() < 200, "{} bytes: {error}", error.len());
    assert!(
        first_line.len() < 300 + file.display().to_string().len(),
        "{msg}"
    );
    assert!(
        msg.contains("field `iteration` should be a non-negative integer"),
        "{msg}"
    );
    assert!(msg.contains("… (10485760 bytes)"), "{msg}");
}
