//! The regression corpus of `#[interleave]` tests, driven through the entry the attribute
//! expands to: a failure is stored once, replayed first on the next run, reported as fixed
//! or diverged when the model changed, and a corrupted file is named.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use interleave_test::__private::{TestSpec, run_test};
use interleave_test::sync::{Arc, Mutex};
use interleave_test::{StrategyKind, thread};

/// A fresh crate root under the temp dir, leaked for the `'static` spec.
fn fresh_root(tag: &str) -> &'static str {
    let dir = std::env::temp_dir().join(format!("interleave-corpus-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Box::leak(dir.to_string_lossy().into_owned().into_boxed_str())
}

fn spec(root: &'static str) -> TestSpec {
    TestSpec {
        name: "corpus_tests::lost_update",
        manifest_dir: root,
        iterations: Some(1000),
        seed: Some(3),
        max_steps: None,
        strategy: Some(StrategyKind::Random),
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
    let root = fresh_root("store");
    let first = failure_text(|| run_test(&spec(root), lost_update(false))).expect("fails");
    let files = stored_files(root);
    assert_eq!(files.len(), 1, "{files:?}");
    let file = files[0].display().to_string();
    assert!(
        first.contains(&format!("the schedule is stored in {file}")),
        "{first}"
    );
    assert!(
        first.contains(&format!("cargo interleave replay {file}")),
        "{first}"
    );
    assert!(
        first.contains(&format!(
            "INTERLEAVE_REPLAY={file} cargo test -- --exact lost_update"
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
    let root = fresh_root("fixed");
    failure_text(|| run_test(&spec(root), lost_update(false))).expect("fails");
    let files = stored_files(root);
    assert_eq!(
        failure_text(|| run_test(&spec(root), lost_update(true))),
        None,
        "the fixed model passes"
    );
    assert_eq!(stored_files(root), files, "the stored schedule stays");
}

#[test]
fn a_schedule_that_no_longer_fits_does_not_fail_the_run() {
    let root = fresh_root("diverged");
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
    let root = fresh_root("corrupt");
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

#[test]
fn concurrent_failing_runs_store_complete_files_without_clobbering() {
    let root = fresh_root("concurrent");
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
