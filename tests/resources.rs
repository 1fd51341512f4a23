//! Resources: executions leave no OS thread behind and keep memory flat, failing ones
//! included, and thousands of model threads work on both substrates. (Its own test binary,
//! and one test that runs the checks one after another, so that no other test's thread is
//! counted.)

mod common;

use common::SUBSTRATES;
use interleave_test::sync::{Arc, Barrier, Mutex};
use interleave_test::{Builder, FailureKind, Substrate, thread};
use interleave_test_tokio::sync::{Notify, Semaphore};

/// The tests of this file choose their substrates themselves: CI's second pass, on OS
/// threads, skips them (`--skip own_substrates::`), since it would only repeat the first.
mod own_substrates {
    use super::*;

    fn status(field: &str) -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").expect("Linux /proc");
        let line = status.lines().find(|l| l.starts_with(field)).expect(field);
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// The names of the process's threads, for messages.
    /// The process's thread count once it equals `expected`, or after 2 s: a thread that
    /// teardown unwound without joining it (past the budget of threads left behind) may still
    /// be counted by the kernel for a moment after it ended.
    fn threads_settled_at(expected: u64) -> u64 {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        loop {
            let now = status("Threads:");
            if now == expected || std::time::Instant::now() >= deadline {
                return now;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// The thread count once it stops changing (a thread just joined may still be listed for a
    /// moment while it exits), waiting at most two seconds.
    fn threads_steady() -> u64 {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        let mut last = status("Threads:");
        loop {
            std::thread::sleep(std::time::Duration::from_millis(20));
            let now = status("Threads:");
            if now == last || std::time::Instant::now() >= deadline {
                return now;
            }
            last = now;
        }
    }

    fn thread_names() -> String {
        let mut names: Vec<String> = std::fs::read_dir("/proc/self/task")
            .map(|d| {
                d.filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("comm")).ok())
                    .map(|n| n.trim().to_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names.join(", ")
    }

    /// A `static` Tokio `Semaphore` and `Notify`: each execution after the first has a
    /// state of its own, which must go with it (at about 200 bytes each, 90,000
    /// executions that kept them would add some 30 MiB).
    static PERMITS: Semaphore = Semaphore::const_new(1);
    static READY: Notify = Notify::const_new();

    fn three_threads() {
        PERMITS.try_acquire().unwrap().forget();
        READY.notify_one();
        let m = Arc::new(Mutex::new(0));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let m = Arc::clone(&m);
                thread::spawn(move || *m.lock().unwrap() += 1)
            })
            .collect();
        *m.lock().unwrap() += 1;
        for h in hs {
            h.join().unwrap();
        }
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn threads_and_memory_stay_bounded() {
        // The process's one watchdog thread starts with the first execution.
        Builder::new().iterations(1).check(|| {}).unwrap();
        one_hundred_thousand_executions_leave_no_thread_behind_and_memory_flat();
        one_hundred_thousand_failing_executions_do_not_grow_threads_or_memory();
        a_destructor_that_blocks_during_teardown_leaks_no_thread();
        two_thousand_threads_spawned_and_joined();
        two_thousand_threads_alive_at_once_at_a_barrier();
    }

    fn one_hundred_thousand_executions_leave_no_thread_behind_and_memory_flat() {
        for substrate in SUBSTRATES {
            let builder = Builder::new().substrate(substrate).parallelism(2);
            let threads_before = status("Threads:");
            builder
                .clone()
                .seed(1)
                .iterations(10_000)
                .check(three_threads)
                .unwrap();
            let rss_warm = status("VmRSS:");
            builder
                .clone()
                .seed(2)
                .iterations(90_000)
                .check(three_threads)
                .unwrap();
            let rss_after = status("VmRSS:");
            // Every OS thread of an execution (and every driver) is joined before `check`
            // returns.
            assert_eq!(
                threads_settled_at(threads_before),
                threads_before,
                "{substrate:?}: {}",
                thread_names()
            );
            // 90,000 more executions add less than 2 MiB of resident memory.
            eprintln!("90,000 executions, {substrate:?}: RSS {rss_warm} KiB -> {rss_after} KiB");
            assert!(
                rss_after < rss_warm + 2048,
                "{substrate:?}: RSS {rss_warm} KiB -> {rss_after} KiB"
            );
        }
    }

    /// Every thread waits for the other's lock: each execution deadlocks with all three threads
    /// blocked, so teardown has something to do in every one.
    fn deadlock() {
        let a = Arc::new(Mutex::new(()));
        let b = Arc::new(Mutex::new(()));
        let (a2, b2) = (Arc::clone(&a), Arc::clone(&b));
        let t = thread::spawn(move || {
            let _a = a2.lock().unwrap();
            thread::yield_now();
            let _b = b2.lock().unwrap();
        });
        let _b = b.lock().unwrap();
        thread::yield_now();
        let _a = a.lock().unwrap();
        drop(_a);
        t.join().unwrap();
    }

    /// Runs `n` failing explorations of [`deadlock`] (one failing execution each, from a
    /// schedule that deadlocks).
    fn fail_n_times(substrate: Substrate, n: u64) {
        let failure = Builder::new()
            .substrate(substrate)
            .seed(1)
            .iterations(1000)
            .check(deadlock)
            .expect_err("deadlocks");
        assert_eq!(failure.kind(), FailureKind::Deadlock);
        let builder = Builder::new().substrate(substrate);
        for _ in 0..n {
            let again = builder
                .replay(deadlock, failure.schedule())
                .expect_err("the schedule deadlocks");
            assert_eq!(again.kind(), FailureKind::Deadlock);
        }
    }

    fn one_hundred_thousand_failing_executions_do_not_grow_threads_or_memory() {
        for substrate in SUBSTRATES {
            // Teardown leaves a failed execution's blocked threads as they are, at most 64 in
            // the process (an OS thread each on the OS-thread substrate, a stack each under
            // coroutines); past that it unwinds them. The first executions fill that budget.
            let threads_before = status("Threads:");
            fail_n_times(substrate, 10_000);
            let threads_warm = threads_steady();
            let rss_warm = status("VmRSS:");
            fail_n_times(substrate, 90_000);
            let threads_after = threads_settled_at(threads_warm);
            let rss_after = status("VmRSS:");
            assert!(
                threads_warm <= threads_before + 64,
                "{substrate:?}: {threads_before} -> {threads_warm} threads"
            );
            assert_eq!(
                threads_after,
                threads_warm,
                "{substrate:?}: {}",
                thread_names()
            );
            eprintln!(
                "90,000 failing executions, {substrate:?}: RSS {rss_warm} KiB -> {rss_after} KiB"
            );
            assert!(
                rss_after < rss_warm + 2048,
                "{substrate:?}: RSS {rss_warm} KiB -> {rss_after} KiB"
            );
        }
    }

    /// The model closure's thread waits in `recv` while holding a value whose destructor waits
    /// for a helper thread's message; a third thread fails. When teardown unwinds the model
    /// closure's thread (on OS threads it must, and under coroutines once 64 threads were left
    /// behind), that destructor blocks again, and teardown runs the helper so that it can go on.
    fn destructor_blocks_during_teardown() {
        use interleave_test::sync::mpsc::{Receiver, channel};
        struct WaitOnDrop(Receiver<()>);
        impl Drop for WaitOnDrop {
            fn drop(&mut self) {
                let _ = self.0.recv();
            }
        }
        let (done_tx, done_rx) = channel::<()>();
        let (go_tx, go_rx) = channel::<()>();
        let helper = thread::spawn(move || {
            let _ = go_rx.recv();
            drop(done_tx);
        });
        let _wait = WaitOnDrop(done_rx);
        let failing = thread::spawn(|| panic!("boom"));
        let (_never_tx, never_rx) = channel::<()>();
        let _ = never_rx.recv(); // blocked here when the execution fails
        drop(go_tx);
        let _ = (helper.join(), failing.join());
    }

    fn a_destructor_that_blocks_during_teardown_leaks_no_thread() {
        for substrate in SUBSTRATES {
            let threads_before = status("Threads:");
            for _ in 0..1000 {
                let failure = Builder::new()
                    .substrate(substrate)
                    .iterations(1)
                    .check(destructor_blocks_during_teardown)
                    .expect_err("fails");
                assert_eq!(failure.message(), "boom");
            }
            assert_eq!(
                threads_settled_at(threads_before),
                threads_before,
                "{substrate:?}: {}",
                thread_names()
            );
        }
    }

    fn two_thousand_threads_spawned_and_joined() {
        for substrate in SUBSTRATES {
            let start = std::time::Instant::now();
            let report = Builder::new()
                .substrate(substrate)
                .seed(3)
                .iterations(2)
                .check(|| {
                    let n = Arc::new(Mutex::new(0));
                    for _ in 0..2000 {
                        let n = Arc::clone(&n);
                        thread::spawn(move || *n.lock().unwrap() += 1)
                            .join()
                            .unwrap();
                    }
                    assert_eq!(*n.lock().unwrap(), 2000);
                })
                .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
            // Spawned and joined one at a time, no decision: the run is its one schedule, twice.
            assert_eq!(report.executions, 2);
            eprintln!(
                "2000 spawned and joined, {substrate:?}: {:?} for 2 executions, RSS {} KiB (peak {} KiB)",
                start.elapsed(),
                status("VmRSS:"),
                status("VmHWM:")
            );
        }
    }

    fn two_thousand_threads_alive_at_once_at_a_barrier() {
        for substrate in SUBSTRATES {
            let start = std::time::Instant::now();
            let report = Builder::new()
                .substrate(substrate)
                .seed(4)
                .iterations(3)
                .check(|| {
                    let barrier = Arc::new(Barrier::new(2001));
                    let hs: Vec<_> = (0..2000)
                        .map(|_| {
                            let barrier = Arc::clone(&barrier);
                            thread::spawn(move || barrier.wait().is_leader())
                        })
                        .collect();
                    let mut leaders = u32::from(barrier.wait().is_leader());
                    for h in hs {
                        leaders += u32::from(h.join().unwrap());
                    }
                    assert_eq!(leaders, 1);
                })
                .unwrap_or_else(|f| panic!("{substrate:?}: {f}"));
            assert_eq!(report.executions, 3);
            eprintln!(
                "2000 alive at a barrier, {substrate:?}: {:?} for 3 executions, RSS {} KiB (peak {} KiB)",
                start.elapsed(),
                status("VmRSS:"),
                status("VmHWM:")
            );
        }
    }
}
