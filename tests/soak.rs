//! Soak test: ten million executions in one `check` keep memory flat. It takes minutes, so
//! it runs only when the environment variable `INTERLEAVE_SOAK` is `1` (off in CI);
//! otherwise it says it is skipped and passes. `INTERLEAVE_SUBSTRATE` chooses the substrate
//! as for any exploration:
//!
//! ```text
//! INTERLEAVE_SOAK=1 cargo test --release --test soak -- --nocapture
//! INTERLEAVE_SOAK=1 INTERLEAVE_SUBSTRATE=threads cargo test --release --test soak -- --nocapture
//! ```

use interleave_test::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use interleave_test::sync::{Arc, Mutex};
use interleave_test::{Builder, thread};

/// Executions of the soak run.
const EXECUTIONS: u64 = 10_000_000;

/// The most the resident memory may grow over them, in KiB: what `tests/resources.rs`
/// allows over 90,000.
const BOUND_KIB: u64 = 2048;

fn status(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("Linux /proc");
    let line = status.lines().find(|l| l.starts_with(field)).expect(field);
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Three threads, a mutex, an atomic and `Arc`s: most executions follow a schedule of
/// their own, so the count of distinct schedules is an estimate after the first few
/// thousand.
fn model() {
    let state = Arc::new((Mutex::new(0), AtomicUsize::new(0)));
    let spawn = || {
        let theirs = Arc::clone(&state);
        thread::spawn(move || {
            for _ in 0..2 {
                *theirs.0.lock().unwrap() += 1;
                theirs.1.fetch_add(1, SeqCst);
            }
        })
    };
    let (a, b) = (spawn(), spawn());
    state.1.fetch_add(1, SeqCst);
    *state.0.lock().unwrap() += 1;
    a.join().unwrap();
    b.join().unwrap();
    assert_eq!(state.1.load(SeqCst), 5);
}

#[test]
#[cfg(target_os = "linux")]
fn ten_million_executions_keep_memory_flat() {
    if std::env::var("INTERLEAVE_SOAK").as_deref() != Ok("1") {
        eprintln!("soak test skipped: set INTERLEAVE_SOAK=1 to run it (it takes minutes)");
        return;
    }
    let builder = Builder::new().seed(1);
    builder.clone().iterations(100_000).check(model).unwrap();
    // Writing 5 resets the peak (VmHWM) to the current size, so that the peak read at the
    // end is that of the soak run alone.
    let peak_reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let before = status("VmRSS:");
    let start = std::time::Instant::now();
    let report = builder.seed(2).iterations(EXECUTIONS).check(model).unwrap();
    let (after, peak) = (status("VmRSS:"), status("VmHWM:"));
    eprintln!(
        "soak: {report}\nRSS {before} KiB before, {after} KiB after, peak {peak} KiB{}; {:.1?}",
        if peak_reset {
            ""
        } else {
            " (of the whole process)"
        },
        start.elapsed()
    );
    assert_eq!(report.executions, EXECUTIONS);
    assert!(!report.distinct_schedules_exact, "{report}");
    assert!(
        after < before + BOUND_KIB,
        "RSS {before} KiB -> {after} KiB over {EXECUTIONS} executions"
    );
    if peak_reset {
        assert!(
            peak < before + BOUND_KIB,
            "RSS {before} KiB, peak {peak} KiB during {EXECUTIONS} executions"
        );
    }
}
