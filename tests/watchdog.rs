//! A model thread that never reaches a switch point again (it blocks on a std lock another
//! model thread holds, or spins on a std atomic) ends the process with a report naming it,
//! where it last was and what to do, instead of hanging without a word. The process has to
//! end (nothing can take control back from that thread), so each case runs in a child
//! process: this test binary, started again with [`CHILD`] naming the case.

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};

use interleave_test::__private::{TestSpec, run_test};
use interleave_test::sync::Arc;
use interleave_test::{Builder, FailureKind, Schedule, StrategyKind, Substrate, thread};

/// Set to `<case> <substrate>` to run that case's model in a child process.
const CHILD: &str = "INTERLEAVE_TEST_WATCHDOG_CHILD";

/// Thread `holder` takes a std mutex, then reaches a switch point while holding it; thread
/// `blocked` then blocks on that std mutex, so `holder` never runs again.
fn std_lock_held_by_another_model_thread() {
    let m = Arc::new(std::sync::Mutex::new(()));
    let m2 = Arc::clone(&m);
    let holder = thread::Builder::new()
        .name("holder".into())
        .spawn(move || {
            let _g = m2.lock().unwrap();
            for _ in 0..100 {
                thread::yield_now();
            }
        })
        .unwrap();
    let blocked = thread::Builder::new()
        .name("blocked".into())
        .spawn(move || {
            thread::yield_now();
            drop(m.lock().unwrap());
        })
        .unwrap();
    holder.join().unwrap();
    blocked.join().unwrap();
}

/// Thread `spinner` waits for a std flag that only `setter` sets, spinning without a switch
/// point.
fn spin_on_a_std_atomic() {
    let flag = Arc::new(AtomicBool::new(false));
    let flag2 = Arc::clone(&flag);
    let spinner = thread::Builder::new()
        .name("spinner".into())
        .spawn(move || {
            thread::yield_now();
            while !flag2.load(Ordering::Acquire) {
                std::hint::spin_loop();
            }
        })
        .unwrap();
    thread::yield_now();
    flag.store(true, Ordering::Release);
    spinner.join().unwrap();
}

/// Thread `stuck` sleeps in user code for a while (no switch point: the watchdog sees the
/// state free, and who runs), then holds the lock of the execution's state for ever, as a
/// primitive that spins inside the runtime would. (After 10 s it ends the process with
/// code 3, so that a watchdog that misses it fails the test instead of hanging it.)
fn the_state_held_for_ever() {
    let stuck = thread::Builder::new()
        .name("stuck".into())
        .spawn(|| {
            thread::yield_now();
            std::thread::sleep(std::time::Duration::from_millis(400));
            interleave_test::__private::holding_state(|| {
                std::thread::sleep(std::time::Duration::from_secs(10));
                std::process::exit(3);
            })
        })
        .unwrap();
    stuck.join().unwrap();
}

/// Outside any model, a runtime's task waits on a std `Barrier` of two threads that only
/// one thread reaches: Tokio would run another task on another worker to reach it; here
/// every task shares the calling thread, which would hang for ever.
fn outside_a_barrier_of_two() {
    use interleave_test_tokio::{self as tokio_mod, runtime};
    let rt = runtime::Runtime::new().unwrap();
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
    rt.block_on(async move {
        let waits = tokio_mod::spawn(async move {
            barrier.wait();
        });
        waits.await.unwrap();
    });
    std::process::exit(3); // unreachable: a watchdog that missed it fails the test
}

/// Outside any model, a real sleep longer than the watchdog's limit is no hang.
fn outside_a_long_sleep() {
    use interleave_test_tokio::{runtime, time};
    let rt = runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async { time::sleep(std::time::Duration::from_millis(1500)).await });
    eprintln!("slept");
}

/// Not a test on its own: the child process of the tests below.
#[test]
fn child() {
    let Ok(what) = std::env::var(CHILD) else {
        return;
    };
    let (case, substrate) = what.split_once(' ').unwrap();
    let substrate = match substrate {
        "threads" => Substrate::Threads,
        _ => Substrate::Coroutines,
    };
    let model = match case {
        "lock" => std_lock_held_by_another_model_thread as fn(),
        "held" => the_state_held_for_ever,
        "test" => return as_a_test(),
        "outside" => return outside_a_barrier_of_two(),
        "outside_sleep" => return outside_a_long_sleep(),
        "replay" => {
            let file = std::env::var(FILE).unwrap();
            let schedule = Schedule::load(file).unwrap();
            let _ = Builder::new()
                .substrate(substrate)
                .replay(std_lock_held_by_another_model_thread, &schedule);
            unreachable!("the replay gets stuck where the run did");
        }
        _ => spin_on_a_std_atomic,
    };
    let _ = Builder::new()
        .substrate(substrate)
        .seed(1)
        .iterations(1000)
        .check(model);
    unreachable!("every schedule of the model gets stuck somewhere");
}

/// The model that gets stuck, run as the `#[interleave]` test `watchdog::stuck` would be
/// (on the substrate `INTERLEAVE_SUBSTRATE` names), its corpus under the directory [`ROOT`]
/// names.
fn as_a_test() {
    let root: &'static str = Box::leak(std::env::var(ROOT).unwrap().into_boxed_str());
    let spec = TestSpec {
        name: "watchdog::stuck",
        manifest_dir: root,
        iterations: Some(1000),
        seed: Some(1),
        max_steps: None,
        strategy: Some(StrategyKind::Random),
        partial: None,
        clock: None,
        cfg_interleave: false,
        release: false,
    };
    run_test(&spec, std_lock_held_by_another_model_thread);
    unreachable!("every schedule of the model gets stuck somewhere");
}

/// The corpus root of the `test` case, and the schedule file of the `replay` case.
const ROOT: &str = "INTERLEAVE_TEST_WATCHDOG_ROOT";
const FILE: &str = "INTERLEAVE_TEST_WATCHDOG_FILE";

/// Runs `case` in a child process with a 1 s watchdog; returns its exit code and stderr.
fn run_child(case: &str, substrate: &str) -> (Option<i32>, String) {
    run_child_with(case, substrate, &[])
}

fn run_child_with(case: &str, substrate: &str, env: &[(&str, &str)]) -> (Option<i32>, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, format!("{case} {substrate}"))
        .env("INTERLEAVE_WATCHDOG", "1")
        .env("INTERLEAVE_SUBSTRATE", substrate)
        .env_remove("INTERLEAVE_REGRESSIONS")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_thread_blocked_on_a_std_lock_held_by_another_model_thread_is_reported() {
    for substrate in ["coroutines", "threads"] {
        let (code, stderr) = run_child("lock", substrate);
        assert_eq!(code, Some(101), "{substrate}: {stderr}");
        assert!(
            stderr.contains("model thread 'blocked' (#2) has not reached a switch point for 1s"),
            "{substrate}: {stderr}"
        );
        assert!(
            stderr.contains("its last one was `thread yield` at tests/watchdog.rs:"),
            "{substrate}: {stderr}"
        );
        assert!(
            stderr.contains("INTERLEAVE_WATCHDOG"),
            "{substrate}: {stderr}"
        );
    }
}

#[test]
fn a_thread_spinning_on_a_std_atomic_is_reported() {
    for substrate in ["coroutines", "threads"] {
        let (code, stderr) = run_child("spin", substrate);
        assert_eq!(code, Some(101), "{substrate}: {stderr}");
        assert!(
            stderr.contains("model thread 'spinner' (#1) has not reached a switch point"),
            "{substrate}: {stderr}"
        );
        assert!(stderr.contains("hint::spin_loop"), "{substrate}: {stderr}");
    }
}

/// In a test, the watchdog's report names the test, stores the schedule in its corpus before
/// the process ends, and says how to keep the other tests' results; the stored file replays
/// to the same thread stuck at the same place.
#[test]
fn in_a_test_the_stuck_schedule_is_stored_and_replays() {
    for substrate in ["coroutines", "threads"] {
        let root = std::env::temp_dir().join(format!(
            "interleave-watchdog-{substrate}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        let shown = root.display().to_string();
        let (code, stderr) = run_child_with("test", substrate, &[(ROOT, &shown)]);
        assert_eq!(code, Some(101), "{substrate}: {stderr}");
        let stuck = "model thread 'blocked' (#2) of test watchdog::stuck has not reached a \
                     switch point for 1s";
        assert!(stderr.contains(stuck), "{substrate}: {stderr}");
        assert!(stderr.contains("cargo nextest"), "{substrate}: {stderr}");
        let file = stderr
            .lines()
            .find_map(|l| l.strip_prefix("It is stored in the regression corpus as "))
            .and_then(|l| l.split(": the next run").next())
            .unwrap_or_else(|| panic!("{substrate}: no stored schedule in\n{stderr}"))
            .to_owned();
        assert!(file.starts_with(&shown), "{substrate}: {file}");
        let schedule = Schedule::load(&file).unwrap();
        assert_eq!(schedule.test(), Some("watchdog::stuck"), "{substrate}");
        let (code, again) = run_child_with("replay", substrate, &[(FILE, &file)]);
        assert_eq!(code, Some(101), "{substrate}: {again}");
        assert!(again.contains(stuck), "{substrate}: {again}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}

/// A thread stuck inside the runtime with the lock of the execution's state held (a
/// primitive that spins there) is reported as a thread stuck in user code is: the watchdog
/// used to read a taken lock as "busy, not stuck" for ever, and the process hung without a
/// word.
#[test]
fn the_state_held_past_the_limit_is_reported() {
    for substrate in ["coroutines", "threads"] {
        let (code, stderr) = run_child("held", substrate);
        assert_eq!(code, Some(101), "{substrate}: {stderr}");
        assert!(
            stderr.contains("interleave-test: execution 0 has held the lock of its state for 1s"),
            "{substrate}: {stderr}"
        );
        assert!(
            stderr.contains(
                "The last thread seen running while it was free was model thread 'stuck' (#1), whose last switch point was `thread yield` at tests/watchdog.rs:"
            ),
            "{substrate}: {stderr}"
        );
        assert!(
            stderr.contains("INTERLEAVE_WATCHDOG"),
            "{substrate}: {stderr}"
        );
    }
}

/// A model thread that calls back into the runtime while the runtime holds its execution's
/// state (a waker's `Drop` run under the lock drops a timer, say) ends the execution with a
/// `Misuse` naming the thread and where it was; it used to spin for ever in the lock.
#[test]
fn a_callback_into_the_runtime_under_its_lock_is_a_misuse_not_a_spin() {
    for substrate in [Substrate::Coroutines, Substrate::Threads] {
        let failure = Builder::new()
            .substrate(substrate)
            .seed(1)
            .iterations(5)
            .check(|| {
                let caller = thread::Builder::new()
                    .name("caller".into())
                    .spawn(|| {
                        thread::yield_now();
                        interleave_test::__private::holding_state(thread::yield_now);
                    })
                    .unwrap();
                caller.join().unwrap();
            })
            .expect_err("the callback fails the execution");
        assert_eq!(
            failure.kind(),
            FailureKind::Misuse,
            "{substrate:?}: {failure}"
        );
        assert_eq!(failure.iteration(), 0, "{substrate:?}");
        let thread = failure.thread().expect("the thread");
        assert_eq!(thread.name(), Some("caller"), "{substrate:?}");
        assert!(
            failure.message().starts_with(
                "interleave-test re-entered its own state on model thread 'caller' (#1) \
                 (after `thread yield` at tests/watchdog.rs:"
            ),
            "{substrate:?}: {failure}"
        );
        assert!(
            failure
                .message()
                .contains("called back into it at engine/src/runtime/"),
            "{failure}"
        );
    }
}

/// A runtime built outside a model whose only thread blocks on what another OS thread would
/// end is reported by the watchdog, with what to gate, rather than hang; a real sleep that
/// outlasts the limit is not.
#[test]
fn outside_a_model_a_runtime_blocked_for_ever_is_reported_and_a_long_sleep_is_not() {
    let (code, stderr) = run_child("outside", "coroutines");
    assert_eq!(code, Some(101), "{stderr}");
    assert!(
        stderr.contains(
            "the OS thread 'child' runs a Tokio runtime built outside a model and has not \
             reached a switch point for 1s"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("#[cfg(not(interleave))]"), "{stderr}");
    let (code, stderr) = run_child("outside_sleep", "coroutines");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("slept"), "{stderr}");
}
