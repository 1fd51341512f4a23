//! Where the crate must unwind a thread that did not fail (thread 0 on the OS-thread
//! substrate, every thread once the process has left 64 behind, every thread of an
//! execution that ends as a pass at `max_steps`), a destructor that panics
//! during that unwinding makes Rust abort the process. Before it does, the panic hook
//! reports it as a failure of the model: which thread, whose destructor panicked where,
//! the execution's failure, how to fix it, and the schedule, stored in the regression
//! corpus of an `#[interleave]` test. Each case runs in a child process (this test binary
//! again), which must die of the abort while this one goes on.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use interleave_test::__private::{TestSpec, run_test};
use interleave_test::cell::UnsafeCell;
use interleave_test::sync::Arc;
use interleave_test::sync::atomic::{AtomicBool, Ordering::SeqCst};
use interleave_test::{Builder, FailureKind, Schedule, StrategyKind, Substrate, thread};

/// Selects the case the child process runs.
const CHILD: &str = "INTERLEAVE_ABORT_REPORT_CHILD";

/// Panics when dropped unless its thread finished its work (whether or not the thread
/// unwinds).
struct Unfinished(bool);

impl Drop for Unfinished {
    fn drop(&mut self) {
        assert!(self.0, "the thread's work was not finished"); // DESTRUCTOR_PANICS
    }
}

/// Thread 0 holds an [`Unfinished`] while it joins a thread that panics.
fn main_waits_for_a_failing_thread() {
    let mut unfinished = Unfinished(false);
    let failing = thread::Builder::new()
        .name("failing".into())
        .spawn(|| panic!("boom")) // THE_FAILURE
        .unwrap();
    let _ = failing.join();
    unfinished.0 = true;
}

/// A spawned thread waits for good while thread 0 panics: teardown leaves it behind (DFS
/// runs it first while thread 0 yields).
fn leaves_a_thread_behind() {
    let started = std::sync::Arc::new(AtomicBool::new(false));
    let flag = started.clone();
    let _parked = thread::spawn(move || {
        flag.store(true, SeqCst);
        thread::park();
    });
    wait_until_set(&started);
    panic!("leave one behind");
}

/// Spins until `flag` is set: DFS then holds thread 0 back until the spawned thread set it,
/// so that thread has started when thread 0 goes on.
fn wait_until_set(flag: &AtomicBool) {
    while !flag.load(SeqCst) {
        thread::yield_now();
    }
}

/// A spawned thread holds an [`Unfinished`] and waits for good while thread 0 panics (as
/// in [`leaves_a_thread_behind`]).
fn a_guarded_thread_waits_while_main_fails() {
    let started = std::sync::Arc::new(AtomicBool::new(false));
    let flag = started.clone();
    let _guarded = thread::Builder::new()
        .name("guarded".into())
        .spawn(move || {
            let _unfinished = Unfinished(false);
            flag.store(true, SeqCst);
            thread::park();
        })
        .unwrap();
    wait_until_set(&started);
    panic!("main gave up"); // MAIN_FAILS
}

/// Thread 0 panics while it holds an [`Unfinished`]: the real program aborts too.
fn main_panics_with_work_unfinished() {
    let _unfinished = Unfinished(false);
    thread::spawn(|| {}).join().unwrap();
    panic!("main gave up"); // MAIN_PANICS
}

/// A spawned thread holding an [`Unfinished`] writes a cell thread 0 wrote: the race is
/// found at its write (DFS runs thread 0 first), and the thread unwinds from there.
fn a_guarded_thread_races() {
    let cell = Arc::new(UnsafeCell::new(()));
    let c2 = Arc::clone(&cell);
    let racer = thread::Builder::new()
        .name("racer".into())
        .spawn(move || {
            let mut unfinished = Unfinished(false);
            c2.with_mut(|_| ()); // THE_RACE
            unfinished.0 = true;
        })
        .unwrap();
    cell.with_mut(|_| ());
    racer.join().unwrap();
}

/// Not a test on its own: the child process of the tests below. The substrate and the
/// strategy come from INTERLEAVE_SUBSTRATE and INTERLEAVE_STRATEGY.
/// A thread that serves for ever holds an [`Unfinished`]: the execution reaches
/// `max_steps`, where with `pass_at_max_steps` it ends as a pass and every thread unwinds.
fn a_guarded_thread_serves_for_ever() {
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&stop);
    let server = thread::Builder::new()
        .name("server".into())
        .spawn(move || {
            let _unfinished = Unfinished(false);
            while !seen.load(SeqCst) {
                thread::yield_now();
            }
        })
        .unwrap();
    stop.load(SeqCst);
    server.join().unwrap();
}

#[test]
fn child() {
    match std::env::var(CHILD).as_deref() {
        // Through the `#[interleave]` entry, with the corpus under INTERLEAVE_REGRESSIONS.
        Ok("thread 0") => run_test(&spec(), main_waits_for_a_failing_thread),
        Ok("past the cap") => {
            for _ in 0..64 {
                let failure = Builder::new().check(leaves_a_thread_behind).unwrap_err();
                assert_eq!(failure.message(), "leave one behind");
            }
            let _ = Builder::new().check(a_guarded_thread_waits_while_main_fails);
        }
        Ok("own panic") => drop(Builder::new().check(main_panics_with_work_unfinished)),
        Ok("failing thread") => drop(Builder::new().check(a_guarded_thread_races)),
        Ok("pass at max_steps") => drop(
            Builder::new()
                .max_steps(50)
                .pass_at_max_steps(true)
                .check(a_guarded_thread_serves_for_ever),
        ),
        _ => return,
    }
    unreachable!("the destructor's panic aborts the process");
}

fn spec() -> TestSpec {
    TestSpec {
        name: "abort_report::child",
        manifest_dir: env!("CARGO_MANIFEST_DIR"),
        iterations: Some(5),
        seed: Some(3),
        max_steps: None,
        strategy: Some(StrategyKind::Random),
        partial: None,
        clock: None,
        cfg_interleave: false,
        release: false,
    }
}

const SUBSTRATES: [&str; 2] = ["coroutines", "threads"];

/// Runs `case` in a child process on `substrate` under `strategy`, with `env` and no other
/// setting of the crate's from this process's environment; returns its output, with
/// stderr as text.
fn run_child(
    case: &str,
    (substrate, strategy): (&str, &str),
    env: &[(&str, &Path)],
) -> (Output, String) {
    let mut child = Command::new(std::env::current_exe().unwrap());
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("INTERLEAVE_") {
            child.env_remove(name);
        }
    }
    let out = child
        .args(["child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, case)
        .env("INTERLEAVE_SUBSTRATE", substrate)
        .env("INTERLEAVE_STRATEGY", strategy)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stderr)
}

/// Asserts that `stderr` contains each of `expected`.
#[track_caller]
fn assert_says(stderr: &str, expected: &[String], run: &str) {
    for text in expected {
        assert!(
            stderr.contains(text.as_str()),
            "{run}: {text:?} in\n{stderr}"
        );
    }
}

/// Asserts that the child died of the abort (SIGABRT on Unix).
#[track_caller]
fn assert_aborted(out: &Output, stderr: &str) {
    assert!(!out.status.success(), "{stderr}");
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(6), "SIGABRT\n{stderr}");
    }
}

/// `file:line` of `marker` in this file.
fn at(marker: &str) -> String {
    let line = common::line_of(include_str!("abort_report.rs"), marker);
    format!("tests/abort_report.rs:{line}:")
}

/// The schedule printed after `heading` in `stderr`: JSON up to its closing brace.
fn printed_schedule(stderr: &str, heading: &str) -> Schedule {
    let start = stderr
        .find(heading)
        .unwrap_or_else(|| panic!("no schedule after {heading:?}\n{stderr}"))
        + heading.len();
    let rest = &stderr[start..];
    let end = rest.find("\n}").expect("the JSON ends") + 2;
    Schedule::from_json(&rest[..end]).unwrap_or_else(|e| panic!("{e}\n{stderr}"))
}

/// A fresh directory under the temp dir.
fn fresh_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("interleave-abort-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_destructor_panicking_in_thread_0_torn_down_on_os_threads_is_reported_and_stored() {
    // Only on OS threads: on coroutines teardown leaves thread 0 as it is.
    let corpus = fresh_dir("corpus");
    let env = [("INTERLEAVE_REGRESSIONS", corpus.as_path())];
    let (out, stderr) = run_child("thread 0", ("threads", "random"), &env);
    assert_aborted(&out, &stderr);
    let expected = [
        format!(
            "interleave-test: in test abort_report::child: model thread 'main' (#0) panicked \
             in a destructor at {}",
            at("DESTRUCTOR_PANICS")
        ),
        "while interleave-test unwound it to tear down an execution that had failed: the \
         thread's work was not finished\nThat thread had not failed: teardown unwinds it \
         because its OS thread must finish before the exploration returns"
            .to_owned(),
        format!(
            "The execution's failure: panic in thread 'failing' (#1) at {}",
            at("THE_FAILURE")
        ),
        "To fix it: make that destructor return without panicking while \
         `interleave_test::thread::panicking()` is true"
            .to_owned(),
    ];
    assert_says(&stderr, &expected, "threads");
    let heading = "Builder::replay runs it again to the failure above:\n";
    let schedule = printed_schedule(&stderr, heading);
    assert_eq!(schedule.test(), Some("abort_report::child"));
    assert_eq!(schedule.strategy(), "random");
    assert_eq!(schedule.seed(), Some(3));
    // Stored once, in the test's directory of the corpus, as printed.
    let dir = corpus.join("abort_report").join("child");
    let stored: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(stored.len(), 1, "{dir:?}");
    let path = stored[0].as_ref().unwrap().path();
    let said = format!(
        "It is stored in the regression corpus as {}",
        path.display()
    );
    assert!(stderr.contains(&said), "{stderr}");
    assert_eq!(Schedule::load(&path).unwrap(), schedule);
    // On coroutines teardown leaves thread 0 as it is: the replay returns the failure.
    let failure = coroutines()
        .replay(main_waits_for_a_failing_thread, &schedule)
        .unwrap_err();
    assert_eq!(failure.kind(), FailureKind::Panic, "{failure}");
    assert_eq!(failure.message(), "boom");
    assert_eq!(failure.thread().unwrap().name(), Some("failing"));
    let _ = std::fs::remove_dir_all(&corpus);
}

/// Replays a schedule printed by a child here, on coroutines.
fn coroutines() -> Builder {
    Builder::new().substrate(Substrate::Coroutines)
}

#[test]
fn a_destructor_panicking_when_every_thread_is_unwound_past_the_cap_is_reported() {
    // Thread 0 waits for the spawned thread to start (under DFS it is held back at its
    // spin until then), so that thread is left behind when thread 0 panics.
    for substrate in SUBSTRATES {
        let (out, stderr) = run_child("past the cap", (substrate, "dfs"), &[]);
        assert_aborted(&out, &stderr);
        let expected = [
            format!(
                "interleave-test: model thread 'guarded' (#1) panicked in a destructor at {}",
                at("DESTRUCTOR_PANICS")
            ),
            "teardown unwinds it because the process has left 64 threads of failed \
             executions behind (the most it keeps), so teardown unwinds every thread"
                .to_owned(),
            format!(
                "The execution's failure: panic in thread 'main' (#0) at {}",
                at("MAIN_FAILS")
            ),
        ];
        assert_says(&stderr, &expected, substrate);
        assert!(!stderr.contains("regression corpus"), "{stderr}");
        let heading = "Builder::replay runs it again to the failure above:\n";
        let schedule = printed_schedule(&stderr, heading);
        assert_eq!(schedule.strategy(), "dfs");
        assert_eq!(schedule.test(), None);
        // This process left far fewer than 64 threads behind: the replay returns the
        // failure.
        let failure = coroutines()
            .replay(a_guarded_thread_waits_while_main_fails, &schedule)
            .unwrap_err();
        assert_eq!(failure.kind(), FailureKind::Panic, "{failure}");
        assert_eq!(failure.message(), "main gave up");
    }
}

#[test]
fn a_destructor_panicking_while_its_thread_unwinds_from_its_own_panic_is_reported() {
    for substrate in SUBSTRATES {
        for strategy in ["random", "pct", "dfs"] {
            let (out, stderr) = run_child("own panic", (substrate, strategy), &[]);
            assert_aborted(&out, &stderr);
            let expected = [
                format!(
                    "interleave-test: model thread 'main' (#0) panicked in a destructor at {}",
                    at("DESTRUCTOR_PANICS")
                ),
                "while it was unwinding from a panic: the thread's work was not finished\n"
                    .to_owned(),
                format!(
                    "The panic it was unwinding from at {}5: main gave up\n",
                    at("MAIN_PANICS")
                ),
                "Rust aborts the process after a panic in a destructor during unwinding, as \
                 it would abort the real program"
                    .to_owned(),
            ];
            let run = format!("{substrate}, {strategy}");
            assert_says(&stderr, &expected, &run);
            assert!(!stderr.contains("The execution's failure"), "{stderr}");
            // Whichever execution of the driver threads comes first aborts the process.
            let heading = " so far; Builder::replay runs it again:\n";
            let schedule = printed_schedule(&stderr, heading);
            assert_eq!(schedule.strategy(), strategy, "{run}");
            let named = format!(
                "The schedule of execution {}{heading}",
                schedule.iteration()
            );
            assert!(stderr.contains(&named), "{run}: {stderr}");
        }
    }
}

#[test]
fn a_destructor_panicking_in_the_thread_where_the_execution_failed_is_reported() {
    // DFS runs thread 0's write first, so the race is found at the guarded thread's write.
    for substrate in SUBSTRATES {
        let (out, stderr) = run_child("failing thread", (substrate, "dfs"), &[]);
        assert_aborted(&out, &stderr);
        let expected = [
            format!(
                "interleave-test: model thread 'racer' (#1) panicked in a destructor at {}",
                at("DESTRUCTOR_PANICS")
            ),
            "while interleave-test unwound it after the execution failed there: the thread's \
             work was not finished\n"
                .to_owned(),
            format!(
                "The execution's failure: data race in thread 'racer' (#1) at {}",
                at("THE_RACE")
            ),
        ];
        assert_says(&stderr, &expected, substrate);
        assert!(!stderr.contains("That thread had not failed"), "{stderr}");
        let heading = "Builder::replay runs it again to the failure above:\n";
        // Not replayed here: the racing thread is unwound on every substrate, so a replay
        // aborts this process too.
        assert_eq!(printed_schedule(&stderr, heading).strategy(), "dfs");
    }
}

#[test]
fn a_destructor_panicking_in_an_execution_ended_as_a_pass_is_reported() {
    for substrate in SUBSTRATES {
        let (out, stderr) = run_child("pass at max_steps", (substrate, "random"), &[]);
        assert_aborted(&out, &stderr);
        let expected = [
            format!(
                "interleave-test: model thread 'server' (#1) panicked in a destructor at {}",
                at("DESTRUCTOR_PANICS")
            ),
            "interleave-test unwound it to end an execution that passed".to_owned(),
            "teardown unwinds it because the execution reached max_steps, where it ends as a \
             pass (`Builder::pass_at_max_steps`)"
                .to_owned(),
            "or turn `pass_at_max_steps` off".to_owned(),
        ];
        assert_says(&stderr, &expected, substrate);
        assert!(!stderr.contains("The execution's failure"), "{stderr}");
        let heading = "Builder::replay runs it again (with `pass_at_max_steps(true)`):\n";
        let schedule = printed_schedule(&stderr, heading);
        assert_eq!(schedule.strategy(), "random");
    }
}
