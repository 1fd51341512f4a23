//! Stack sizes: `thread::Builder::stack_size` and `Builder::stack_size` are honoured on both
//! substrates, and a thread that runs past its stack is reported, not an anonymous crash.

use crate::common::SUBSTRATES;
use interleave_test::{Builder, FailureKind, Substrate, thread};

/// A model that overflows the 256 KiB stack of its thread "deep".
fn overflows_deep() {
    let t = thread::Builder::new()
        .name("deep".into())
        .stack_size(256 << 10)
        .spawn(|| recurse(u32::MAX))
        .unwrap();
    let _ = t.join();
}

/// Recursion that uses about `depth` KiB of stack.
fn recurse(depth: u32) -> u64 {
    let frame = std::hint::black_box([u64::from(depth); 128]);
    if depth == 0 {
        return 0;
    }
    std::hint::black_box(recurse(depth - 1)) + frame[7]
}

#[test]
fn a_deep_recursion_succeeds_with_a_larger_stack() {
    // About 8 MiB of frames: four times the default stack.
    for substrate in SUBSTRATES {
        Builder::new()
            .substrate(substrate)
            .seed(1)
            .iterations(3)
            .check(|| {
                let t = thread::Builder::new()
                    .stack_size(32 << 20)
                    .spawn(|| recurse(8 * 1024))
                    .unwrap();
                assert!(t.join().unwrap() > 0);
            })
            .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
        Builder::new()
            .substrate(substrate)
            .stack_size(32 << 20)
            .seed(1)
            .iterations(3)
            .check(|| assert!(recurse(8 * 1024) > 0))
            .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
    }
}

#[test]
fn an_overflow_under_coroutines_is_a_failure_naming_the_thread_and_the_knob() {
    let failure = Builder::new()
        .substrate(Substrate::Coroutines)
        .seed(1)
        .iterations(3)
        .check(overflows_deep)
        .expect_err("the recursion never ends");
    assert_eq!(failure.kind(), FailureKind::StackOverflow, "{failure}");
    assert_eq!(failure.thread().unwrap().name(), Some("deep"));
    let message = failure.message();
    assert!(message.contains("262144 bytes"), "{message}");
    assert!(message.contains("stack_size"), "{message}");
    assert!(message.contains("INTERLEAVE_STACK_SIZE"), "{message}");
    // The model closure's own thread is a coroutine too.
    let failure = Builder::new()
        .substrate(Substrate::Coroutines)
        .stack_size(128 << 10)
        .iterations(1)
        .check(|| {
            recurse(u32::MAX);
        })
        .expect_err("the recursion never ends");
    assert_eq!(failure.kind(), FailureKind::StackOverflow, "{failure}");
    assert_eq!(failure.thread().unwrap().id(), 0);
}

/// Set to run [`overflow_child`]'s model in a child process.
const CHILD: &str = "INTERLEAVE_TEST_OVERFLOW_CHILD";

/// Not a test on its own: the child process of
/// [`an_overflow_on_os_threads_names_the_model_thread_and_the_knob`], which overflows a model
/// thread's stack on the OS-thread substrate (the process then dies). With `after
/// coroutines`, a coroutine has run in the process first, so the coroutine crate's fault
/// handler, not std's, sees the overflow.
#[test]
fn overflow_child() {
    let Ok(mode) = std::env::var(CHILD) else {
        return;
    };
    if mode == "after coroutines" {
        Builder::new()
            .substrate(Substrate::Coroutines)
            .iterations(1)
            .check(|| drop(thread::spawn(|| {})))
            .unwrap();
    }
    let _ = Builder::new()
        .substrate(Substrate::Threads)
        .iterations(1)
        .check(overflows_deep);
    unreachable!("the overflow aborts the process");
}

#[test]
fn an_overflow_on_os_threads_names_the_model_thread_and_the_knob() {
    // This test binary again, running only the child test (named with its module path in
    // the binary, `tests/primitives/main.rs`).
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "stacks::overflow_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("model thread \"deep\" (#1); stack_size sets its stack"),
        "{stderr}"
    );
    assert!(stderr.contains("overflowed its stack"), "{stderr}");
}
