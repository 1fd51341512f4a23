//! The loop around a failure, run as a user runs it: this test binary runs its own `child`
//! tests as child processes, with the environment a user would set. `model()` stores each
//! failure in a file of its own, named after the test, which `INTERLEAVE_REPLAY` replays in
//! that test only; an `#[interleave]` DFS search that did not finish fails unless
//! `INTERLEAVE_PARTIAL=1`; `INTERLEAVE_SUMMARY=1` and the corpus's notes show in a passing
//! test's output without `--nocapture`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use interleave_test::{interleave, thread};
use std::sync::Arc;

const MODE: &str = "REPLAY_LOOP_CHILD";

/// Two threads increment a counter by a load and a store, so one can be lost, which the
/// assertion allows if `lenient` (same operations, so a stored schedule still fits).
fn counter(lenient: bool) {
    let n = common::two_increments();
    assert!(n == 2 || lenient && n == 1, "an increment was lost");
}

/// Three threads take turns at a lock: a lost update only if `racy`.
fn three_way(racy: bool) {
    let m = Arc::new(interleave_test::sync::Mutex::new(0));
    let hs: Vec<_> = (0..3)
        .map(|_| {
            let m = Arc::clone(&m);
            thread::spawn(move || {
                if racy {
                    let v = *m.lock().unwrap();
                    *m.lock().unwrap() = v + 1;
                } else {
                    *m.lock().unwrap() += 1;
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*m.lock().unwrap(), 3, "an update was lost");
}

/// Not a test on its own: `model()` on what `REPLAY_LOOP_CHILD` names.
#[test]
fn child_model_a() {
    match std::env::var(MODE).as_deref() {
        Ok("racy") => drop(interleave_test::model(|| counter(false))),
        Ok("lenient") => drop(interleave_test::model(|| counter(true))),
        _ => {}
    }
}

/// Not a test on its own: `model()` on another racy model.
#[test]
fn child_model_b() {
    if std::env::var(MODE).is_ok() {
        interleave_test::model(|| three_way(true));
    }
}

/// Runs only in a child: a DFS search of a passing model, with its executions counted.
#[interleave(strategy = "dfs")]
fn child_interleave_dfs() {
    if std::env::var(MODE).is_ok() {
        three_way(false);
    }
}

/// Runs only in a child: the same search, with partial searches allowed by the attribute.
#[interleave(strategy = "dfs", partial = true)]
fn child_interleave_dfs_partial() {
    if std::env::var(MODE).is_ok() {
        three_way(false);
    }
}

/// Runs `child` of this binary (libtest's `--exact` name) with `env`, its output captured as
/// `cargo test` captures it (no `--nocapture`); its success, stdout, then stdout and stderr
/// (libtest prints a failed test's panic on stdout).
fn run(child: &str, env: &[(&str, &str)]) -> (bool, String, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([child, "--exact"])
        .env_remove("INTERLEAVE_REPLAY")
        .env_remove("INTERLEAVE_SUMMARY")
        .env_remove("INTERLEAVE_PARTIAL")
        .env_remove("INTERLEAVE_ITERATIONS")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    let both = format!("{stdout}{stderr}");
    (out.status.success(), stdout, both)
}

/// A fresh corpus directory under the temporary directory.
fn fresh_corpus(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("interleave-loop-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The file a failure message says the schedule is stored in.
fn stored_in(output: &str) -> PathBuf {
    let line = output
        .lines()
        .find_map(|l| l.strip_prefix("the schedule is stored in "))
        .unwrap_or_else(|| panic!("no stored schedule in:\n{output}"));
    PathBuf::from(line.split(" (commit it").next().unwrap())
}

/// The commands a failure prints to replay `file` in `test` of this test binary: `cargo
/// interleave`, which reads the build from the file, and `cargo test` with this build's
/// switches (`--cfg interleave` if it had it, `--release` if optimized) and this integration
/// test's target.
fn printed_commands(file: &Path, test: &str) -> [String; 2] {
    let (rustflags, release) = common::build_switches();
    let file = file.display();
    [
        format!("replay it: cargo interleave replay {file}\n"),
        format!(
            "or: INTERLEAVE_REPLAY={file} {rustflags}cargo test{release} --test replay_loop -- --exact {test}"
        ),
    ]
}

fn corpus_env(corpus: &Path) -> (&'static str, String) {
    ("INTERLEAVE_REGRESSIONS", corpus.display().to_string())
}

#[test]
fn two_failing_model_tests_leave_two_files_each_replayed_by_its_test_only() {
    let corpus = fresh_corpus("model");
    let (k, v) = corpus_env(&corpus);
    let (ok_a, _, err_a) = run("child_model_a", &[(MODE, "racy"), (k, &v)]);
    let (ok_b, _, err_b) = run("child_model_b", &[(MODE, "racy"), (k, &v)]);
    assert!(!ok_a && !ok_b, "both fail:\n{err_a}\n{err_b}");
    let (a, b) = (stored_in(&err_a), stored_in(&err_b));
    assert_ne!(a, b, "each failure has a file of its own");
    assert!(
        a.starts_with(corpus.join("replay_loop/child_model_a")),
        "{}",
        a.display()
    );
    assert!(
        b.starts_with(corpus.join("replay_loop/child_model_b")),
        "{}",
        b.display()
    );
    let text = std::fs::read_to_string(&a).unwrap();
    assert!(
        text.contains("\"test\": \"replay_loop::child_model_a\""),
        "{text}"
    );
    for command in printed_commands(&a, "child_model_a") {
        assert!(err_a.contains(&command), "{command}\nnot in\n{err_a}");
    }

    // The printed command, with the binary for `cargo test`: it replays the failure.
    let file = a.display().to_string();
    let replay = [
        ("INTERLEAVE_REPLAY", file.as_str()),
        (MODE, "racy"),
        (k, &v),
    ];
    let (ok, _, err) = run("child_model_a", &replay);
    assert!(!ok, "{err}");
    let replayed = format!("this failure was recorded in {file}, and still happens");
    assert!(
        err.contains("found a panic: an increment was lost"),
        "{err}"
    );
    assert!(err.contains(&replayed), "{err}");
    // The other test leaves the file alone and explores: its own failure, its own file.
    let (ok, _, err) = run("child_model_b", &replay);
    assert!(!ok && !err.contains(&file), "{err}");
    assert!(err.contains("an update was lost"), "{err}");
    let again = format!(
        "this failure was stored before, in {}, and still happens",
        b.display()
    );
    assert!(err.contains(&again), "{err}");
    std::fs::remove_dir_all(corpus).unwrap();
}

#[test]
fn a_model_test_replays_its_stored_failure_first_and_says_when_it_is_fixed() {
    let corpus = fresh_corpus("fixed");
    let (k, v) = corpus_env(&corpus);
    let (ok, _, err) = run("child_model_a", &[(MODE, "racy"), (k, &v)]);
    assert!(!ok, "{err}");
    let file = stored_in(&err);
    let (ok, _, err) = run("child_model_a", &[(MODE, "lenient"), (k, &v)]);
    assert!(ok, "{err}");
    let note = format!(
        "interleave-test: fixed: {}: its failure (panic in thread 'main': an increment was \
         lost) no longer happens (200 executions pass: the first follows the 6 of its 6 \
         decisions that fit, the others a random part of those, then all decide at random).",
        file.display()
    );
    assert!(err.contains(&note), "shown without --nocapture:\n{err}");
    let summary = "interleave-test: replay_loop::child_model_a: 1 stored schedule: 0 still \
                   fail, 1 fixed, 0 diverged";
    assert!(err.contains(summary), "shown without --nocapture:\n{err}");
    std::fs::remove_dir_all(corpus).unwrap();
}

#[test]
fn a_relative_replay_path_is_taken_from_the_shell_directory() {
    let corpus = fresh_corpus("relative");
    let (k, v) = corpus_env(&corpus);
    let (_, _, err) = run("child_model_a", &[(MODE, "racy"), (k, &v)]);
    let file = stored_in(&err);
    let (dir, name) = (file.parent().unwrap(), file.file_name().unwrap());
    let shell = dir.display().to_string();
    let name = name.to_str().unwrap();
    let env = [
        ("INTERLEAVE_REPLAY", name),
        ("PWD", &shell),
        (MODE, "racy"),
        (k, &v),
    ];
    let (ok, _, err) = run("child_model_a", &env);
    assert!(!ok, "{err}");
    let expected = format!(
        "this failure was recorded in {}, and still happens",
        file.display()
    );
    assert!(err.contains(&expected), "{err}");
    std::fs::remove_dir_all(corpus).unwrap();
}

#[test]
fn an_unfinished_dfs_search_fails_unless_partial_searches_are_allowed() {
    let corpus = fresh_corpus("partial");
    let (k, v) = corpus_env(&corpus);
    let capped = [(MODE, "1"), ("INTERLEAVE_ITERATIONS", "3"), (k, &v)];
    let (ok, _, err) = run("child_interleave_dfs", &capped);
    assert!(!ok, "{err}");
    assert!(
        err.contains("the dfs search of replay_loop::child_interleave_dfs did not finish"),
        "{err}"
    );
    assert!(err.contains("INTERLEAVE_PARTIAL=1"), "{err}");
    assert!(
        err.contains("`partial = true` in the #[interleave] attribute"),
        "{err}"
    );
    let partial = [capped[0], capped[1], (k, &v), ("INTERLEAVE_PARTIAL", "1")];
    let (ok, _, err) = run("child_interleave_dfs", &partial);
    assert!(ok, "{err}");
    // The attribute allows it, unless the environment says 0.
    let (ok, _, err) = run("child_interleave_dfs_partial", &capped);
    assert!(ok, "{err}");
    let refused = [capped[0], capped[1], (k, &v), ("INTERLEAVE_PARTIAL", "0")];
    let (ok, _, err) = run("child_interleave_dfs_partial", &refused);
    assert!(!ok, "{err}");
    assert!(err.contains("INTERLEAVE_PARTIAL=0 is set now"), "{err}");
    std::fs::remove_dir_all(corpus).unwrap();
}

#[test]
fn a_summary_shows_for_a_passing_test_without_nocapture() {
    let corpus = fresh_corpus("summary");
    let (k, v) = corpus_env(&corpus);
    let env = [(MODE, "1"), ("INTERLEAVE_SUMMARY", "1"), (k, &v)];
    let (ok, _, err) = run("child_interleave_dfs", &env);
    assert!(ok, "{err}");
    let summary = err
        .lines()
        .find(|l| l.starts_with("interleave-test: replay_loop::child_interleave_dfs: dfs: all "))
        .unwrap_or_else(|| panic!("no summary:\n{err}"));
    assert!(summary.contains("no failure"), "{summary}");
    let (ok, _, err) = run("child_interleave_dfs", &env[..1]);
    assert!(
        ok && !err.contains("interleave-test:"),
        "no summary unless asked:\n{err}"
    );
    std::fs::remove_dir_all(corpus).unwrap();
}
