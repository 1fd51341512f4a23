//! A model thread that never reaches a switch point again (it blocks on a std lock another
//! model thread holds, or spins on a std atomic) ends the process with a report naming it,
//! where it last was and what to do, instead of hanging without a word. The process has to
//! end (nothing can take control back from that thread), so each case runs in a child
//! process: this test binary, started again with [`CHILD`] naming the case.

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};

use interleave_test::sync::Arc;
use interleave_test::{Builder, Substrate, thread};

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
        _ => spin_on_a_std_atomic,
    };
    let _ = Builder::new()
        .substrate(substrate)
        .seed(1)
        .iterations(1000)
        .check(model);
    unreachable!("every schedule of the model gets stuck somewhere");
}

/// Runs `case` in a child process with a 1 s watchdog; returns its exit code and stderr.
fn run_child(case: &str, substrate: &str) -> (Option<i32>, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, format!("{case} {substrate}"))
        .env("INTERLEAVE_WATCHDOG", "1")
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
